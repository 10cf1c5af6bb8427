/* perfgate gate: compare, then exit 1 on a confirmed regression, 3 when
 * results needed for the decision are missing or failed. */
#include "cli/cmd.h"
#include "cli/compare_cmd.h"

int cmd_gate(int argc, char **argv)
{
	return pg_compare_main(argc, argv, true);
}
