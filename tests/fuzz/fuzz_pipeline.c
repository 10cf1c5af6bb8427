/*
 * The Buildkite pipeline input of the suite loader
 * (suite/config_pipeline_io.c): find the perfgate step, read its plugin
 * options, substitute variables and matrix values, load its suites. Read
 * from a file as `perfgate run pipeline.yml` does (pipelines only load
 * from files: a `suites:` path is relative to the pipeline's directory).
 * That directory holds suite.yml, a small valid suite, so `suites:
 * suite.yml` loads it; the bytes after "\n\x1e" are --matrix values, one
 * per line.
 *
 * Inputs naming a device or /proc file are skipped: `suites: /dev/zero`
 * reads forever, as `cat` would, and the fuzzer is not here to find that.
 */
#include "fuzz.h"

#include "base/buf.h"
#include "base/error.h"
#include "base/strutil.h"
#include "suite/config_io.h"
#include "suite/plan.h"

static const char suite_yml[] = "serving:\n"
				"  - name: serving_fuzz\n"
				"    model: m\n"
				"    server: {command: 'srv --port {port}'}\n"
				"    qps: [1, inf]\n";

static bool mentions(const uint8_t *data, size_t size, const char *what)
{
	return memmem(data, size, what, strlen(what)) != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	struct pg_suite suite = PG_SUITE_INIT;
	struct pg_config_step step;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_strv matrix = PG_STRV_INIT;
	struct pg_config_select sel = { NULL, &matrix };
	const uint8_t *second;
	size_t first, second_size;
	const char *path;
	int rc;

	if (mentions(data, size, "/dev") || mentions(data, size, "/proc") ||
	    mentions(data, size, "/sys"))
		return -1;
	if (!ready) {
		fz_write("suite.yml", suite_yml, sizeof(suite_yml) - 1);
		ready = true;
	}
	fz_split2(data, size, &first, &second, &second_size);
	if (second) {
		char *values = fz_strdup(second, second_size), *save = NULL;
		for (char *v = strtok_r(values, "\n", &save); v; v = strtok_r(NULL, "\n", &save))
			pg_strv_push(&matrix, v);
		free(values);
	}
	path = fz_write("pipeline.yml", data, first);
	rc = pg_config_load_step(&suite, &step, &path, 1, &sel, &err);
	if (rc == 0) {
		struct pg_plan plan = PG_PLAN_INIT;
		struct pg_buf out = PG_BUF_INIT;
		struct pg_dryrun_opts o = { NULL, step.plugin.gpu, 0 };

		FZ_CHECK(suite.n_tests > 0);
		pg_plan_build(&plan, &suite);
		pg_dryrun_render(&out, &suite, &plan, &o);
		pg_plan_release(&plan);
		pg_buf_release(&out);
	} else {
		FZ_CHECK(suite.n_tests == 0);
		FZ_CHECK(err.msg[0] != '\0');
	}
	pg_config_step_release(&step);
	pg_suite_release(&suite);
	pg_strv_release(&matrix);
	return 0;
}
