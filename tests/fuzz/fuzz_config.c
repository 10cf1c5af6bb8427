/*
 * The suite loader (suite/config*_io.c) on text: a perfgate suite file
 * (YAML) or vLLM's *-tests.json, as pg_config_load_text reads them, then
 * what `perfgate run --dry-run` does with the suite: expand the plan, select
 * points (the bytes after "\n\x1e" are a --filter regular expression), list
 * them.
 */
#include "fuzz.h"

#include "base/buf.h"
#include "base/error.h"
#include "suite/config_io.h"
#include "suite/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pg_suite suite = PG_SUITE_INIT;
	struct pg_error err = PG_ERROR_INIT;
	const uint8_t *second;
	size_t first, second_size;
	char *text, *filter = NULL;
	int rc;

	fz_split2(data, size, &first, &second, &second_size);
	text = fz_dup(data, first);
	rc = pg_config_load_text(&suite, text, first, "suite.yml", &err);
	if (rc == 0) {
		struct pg_plan plan = PG_PLAN_INIT, sel = PG_PLAN_INIT;
		struct pg_selection s = PG_SELECTION_INIT;
		struct pg_dryrun_opts o = { NULL, NULL, 0 };
		struct pg_buf out = PG_BUF_INIT;

		FZ_CHECK(suite.n_tests > 0);
		pg_plan_build(&plan, &suite);
		o.total_points = plan.n;
		if (second && second_size <= 64) {
			filter = fz_strdup(second, second_size);
			s.filter = filter;
		}
		if (pg_plan_select(&sel, &suite, &s, &err) == 0)
			pg_dryrun_render(&out, &suite, &sel, &o);
		pg_plan_release(&sel);
		pg_plan_release(&plan);
		pg_buf_release(&out);
	} else {
		FZ_CHECK(suite.n_tests == 0);
		FZ_CHECK(err.msg[0] != '\0');
	}
	pg_suite_release(&suite);
	free(filter);
	free(text);
	return 0;
}
