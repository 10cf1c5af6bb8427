/*
 * perfgate buildkite: the plugin's entry point, run by hooks/command. It
 * reads the step's plugin configuration from the agent's environment,
 * validates it, and runs the step (src/buildkite/step_io.c).
 */
#include "cli/cmd.h"
#include "cli/common.h"
#include "cli/opt.h"
#include "buildkite/job_env.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/jsonw.h"
#include "buildkite/plugin_config.h"
#include "buildkite/step_io.h"
#include "suite/plan.h"
#include "suite/suite.h"
#include "gpu/gpu.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool print_schema, check, will_run;

/* clang-format off */
static const struct pg_opt opts[] = {
	{ PG_OPT_FLAG, "check", 0, &check, NULL,
	  "validate the step's plugin options and what it needs before the GPU time, and exit "
	  "(0 valid, 2 with the error)" },
	{ PG_OPT_FLAG, "will-run", 0, &will_run, NULL,
	  "validate the options and suites, then exit 0 if the step runs in this build, 1 if only-on-labels skips it" },
	{ PG_OPT_FLAG, "print-schema", 0, &print_schema, NULL,
	  "print the JSON Schema of the plugin options (plugin.yml's configuration) and exit" },
	{ PG_OPT_END }
};
/* clang-format on */

static const struct pg_cmd_help help = {
	"buildkite",
	"[options]",
	"the plugin's entry point: run, report, compare, annotate, upload",
	"Run by the plugin's command hook. Reads the step's plugin configuration\n"
	"from BUILDKITE_PLUGIN_CONFIGURATION (or perfgate's entry in\n"
	"BUILDKITE_PLUGINS), validates it, and runs the step as its `mode` says:\n"
	"run -> report -> compare -> annotate -> upload. Outside Buildkite the\n"
	"annotation is written to <results-dir>/annotation.md.\n"
	"\n"
	"--check validates the options, loads the suites the step would run and\n"
	"checks what it needs before the GPU time (its dataset files; a named GPU's\n"
	"thresholds file where it gates), e.g. before committing a pipeline (paths\n"
	"relative to the current directory):\n"
	"  BUILDKITE_PLUGIN_CONFIGURATION='{\"suites\": \"perf.yml\", \"repeat\": 3}' \\\n"
	"    perfgate buildkite --check\n"
	"\n"
	"--will-run is what the plugin's hook asks before it runs a step's own\n"
	"command (mode report): the options are valid and no only-on-labels skips\n"
	"the step in this build (exit 0), or it does (exit 1, the reason on stderr).\n"
	"\n"
	"Exit codes: 0 pass (or skipped by only-on-labels), 1 confirmed regression,\n"
	"2 configuration error, 3 infrastructure failure.",
	opts,
};

/*
 * --check: what the step needs before the GPU time (buildkite/step_io.h
 * pg_bk_check): the datasets of the points it runs itself (not a report
 * step's: its command reads them; nor a pipeline step's: its steps do, on
 * their agents), and a named GPU's thresholds file (gpu: auto is checked
 * on the agent, once detected).
 */
static int check_before_gpu(const struct pg_plugin_config *pc, const struct pg_plan *plan,
			    const char *step, struct pg_error *err)
{
	struct pg_strv warnings = PG_STRV_INIT;
	char key[PG_GPU_KEY_MAX + 1];
	bool runs = plan->n && pc->mode != PG_MODE_REPORT && pc->mode != PG_MODE_PIPELINE;
	int rc = pg_bk_check(
		&(struct pg_bk_check){ .c = pc,
				       .step = step,
				       .plan = runs ? plan : NULL,
				       .gpu_key = strcmp(pc->gpu, "auto")
							  ? pg_gpu_key(key, sizeof(key), pc->gpu)
							  : NULL },
		&warnings, err);

	for (size_t i = 0; i < warnings.n; i++)
		fprintf(stderr, "perfgate buildkite: step '%s': warning: %s\n", step,
			warnings.v[i]);
	pg_strv_release(&warnings);
	return rc;
}

int cmd_buildkite(int argc, char **argv)
{
	struct pg_strv pos = PG_STRV_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_bkenv env;
	struct pg_bk_opts o = { 0 };
	json_t *config = NULL;
	char *source = NULL;
	int rc;

	print_schema = check = will_run = false;
	pg_bkenv_load(&env, pg_cmd_getenv, NULL);
	if (pg_cmd_parse(
		    &help, argc, argv, &pos, 0, 0,
		    "no arguments: the configuration comes from BUILDKITE_PLUGIN_CONFIGURATION",
		    &rc))
		goto done;
	if (print_schema) {
		struct pg_buf out = PG_BUF_INIT;
		json_t *schema = pg_plugin_config_schema();
		pg_json_write(&out, schema, 2);
		pg_buf_putc(&out, '\n');
		rc = pg_cmd_print(&out);
		pg_buf_release(&out);
		json_decref(schema);
		goto done;
	}
	config = pg_bk_config_from_env(&env, &source, &err);
	if (!config) {
		rc = err.code;
		goto fail;
	}
	if (check || will_run) {
		struct pg_plugin_config pc;
		struct pg_suite suite = PG_SUITE_INIT;
		struct pg_plan plan = PG_PLAN_INIT;
		struct pg_buf why = PG_BUF_INIT;
		const char *step = env.step_label ? env.step_label : pg_bkenv_step_name(&env);
		bool skipped = false;
		rc = pg_plugin_config_parse(&pc, config, step, &err);
		/* the suites too, as the step will load them: a missing or broken
		 * suite file, or a filter that selects nothing, is not valid */
		if (rc == 0 && (pc.suites.paths.n || pc.suites.inline_suite))
			rc = pg_bk_plan(&suite, &plan, &pc, step, &err);
		if (rc == 0 && check)
			rc = check_before_gpu(&pc, &plan, step, &err);
		if (rc == 0 && will_run)
			skipped = pg_bk_skipped_for_labels(&env, &pc, &why);
		pg_plan_release(&plan);
		pg_suite_release(&suite);
		pg_plugin_config_release(&pc);
		if (rc) {
			pg_buf_release(&why);
			goto fail;
		}
		if (skipped)
			fprintf(stderr, "perfgate buildkite: step '%s': %s\n", step, why.ptr);
		else if (check)
			fprintf(stderr,
				"perfgate buildkite: step '%s': the configuration is valid\n",
				step);
		pg_buf_release(&why);
		rc = skipped ? 1 : 0;
		goto done;
	}
	if (!source && env.plugins) {
		/* how the step refers to the plugin, for generated pipelines */
		struct pg_error ignored = PG_ERROR_INIT;
		json_decref(pg_bk_plugins_find(env.plugins, &source, &ignored));
	}
	o.log = stderr;
	o.out = stdout;
	o.plugin_source = source;
	rc = pg_buildkite_main(&env, config, &o, &err);
	if (err.code)
		pg_cmd_fail("buildkite", &err);
	goto done;
fail:
	rc = pg_cmd_fail("buildkite", &err);
done:
	json_decref(config);
	free(source);
	pg_bkenv_release(&env);
	pg_strv_release(&pos);
	return rc;
}
