/* perfgate import: placeholder until its issue lands; see docs/status. */
#include "cmd/cmd.h"
#include "cmd/opt.h"
#include "core/error.h"

static const struct pg_opt opts[] = { { PG_OPT_END } };
static const struct pg_cmd_help help = { "import", "[options]", "not implemented yet", NULL, opts };

int cmd_import(int argc, char **argv)
{
	struct pg_strv pos = PG_STRV_INIT;
	struct pg_error err = PG_ERROR_INIT;
	int rc = pg_opt_parse(&help, argc, argv, &pos, &err);

	pg_strv_release(&pos);
	if (rc == PG_OPT_HELP)
		return PG_EXIT_OK;
	if (rc)
		return pg_cmd_fail("import", &err);
	pg_error_set(&err, PG_ERR, "not implemented yet");
	return pg_cmd_fail("import", &err);
}
