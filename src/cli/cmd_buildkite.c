/*
 * perfgate buildkite: the plugin's entry point, run by hooks/command. It
 * reads the step's plugin configuration from the agent's environment,
 * validates it, and runs the step (src/buildkite/step_io.c).
 */
#include "cli/cmd.h"
#include "cli/common.h"
#include "cli/opt.h"
#include "buildkite/job_env.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/jsonw.h"
#include "buildkite/plugin_config.h"
#include "buildkite/step_io.h"
#include "base/template.h"
#include "suite/config_io.h"
#include "sys/fsutil.h"
#include "suite/plan.h"
#include "suite/suite.h"
#include "gpu/gpu.h"

#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool print_schema, check, will_run;
static const char *pipeline, *step_key, *vllm, *filter;
static struct pg_strv matrix;

/* clang-format off */
static const struct pg_opt opts[] = {
	{ PG_OPT_FLAG, "check", 0, &check, NULL,
	  "validate the step's plugin options and what it needs before the GPU time, and exit "
	  "(0 valid, 2 with the error)" },
	{ PG_OPT_FLAG, "will-run", 0, &will_run, NULL,
	  "validate the options and suites, then exit 0 if the step runs in this build, 1 if only-on-labels skips it" },
	{ PG_OPT_FLAG, "print-schema", 0, &print_schema, NULL,
	  "print the JSON Schema of the plugin options (plugin.yml's configuration) and exit" },
	{ PG_OPT_STRING, "pipeline", 0, &pipeline, "FILE",
	  "run (or --check) the perfgate step of this pipeline YAML here, as its job would, "
	  "the annotation written to <results-dir>/annotation.md instead of posted" },
	{ PG_OPT_STRING, "step", 0, &step_key, "KEY",
	  "with --pipeline: the step (its key, or its label) when there are several" },
	{ PG_OPT_STRINGS, "matrix", 0, &matrix, "NAME=VALUE",
	  "with --pipeline and a matrix step: the job, {{matrix.NAME}} = VALUE; repeatable" },
	{ PG_OPT_STRING, "filter", 0, &filter, "REGEX",
	  "with --pipeline: run only the points matching REGEX instead of the step's filter "
	  "(a shorter preview; the job runs the step's)" },
	{ PG_OPT_STRING, "vllm", 0, &vllm, "CMD",
	  "with --pipeline: run CMD where the step's commands say vllm, as perfgate run "
	  "--vllm (default: $PERFGATE_VLLM)" },
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
	"--pipeline FILE [--step KEY] runs a pipeline's perfgate step here as its\n"
	"job would run it (no hand-written BUILDKITE_PLUGIN_CONFIGURATION): the\n"
	"step's options with the pipeline's variables filled in, the build it is\n"
	"taken for from BUILDKITE_BRANCH, BUILDKITE_PULL_REQUEST (and its\n"
	"_BASE_BRANCH, _LABELS) as set in your shell; nothing is posted or\n"
	"uploaded, the annotation is <results-dir>/annotation.md. With --check, only\n"
	"the step is validated.\n"
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
 * A pipeline's step run here: the environment is the shell's (the build it
 * is taken for: BUILDKITE_BRANCH, BUILDKITE_PULL_REQUEST...), except what
 * would make it post or upload, and the step's own key and label.
 */
struct local_job {
	const char *name; /* the step's key, or its label */
};

static const char *local_getenv(void *ctx, const char *name)
{
	static const char *const agent_only[] = { "BUILDKITE", "BUILDKITE_PLUGIN_CONFIGURATION",
						  "BUILDKITE_PLUGINS", "BUILDKITE_JOB_ID",
						  "BUILDKITE_BUILD_URL" };
	const struct local_job *job = ctx;

	for (size_t i = 0; i < sizeof(agent_only) / sizeof(agent_only[0]); i++)
		if (!strcmp(name, agent_only[i]))
			return NULL;
	if (!strcmp(name, "BUILDKITE_STEP_KEY") || !strcmp(name, "BUILDKITE_LABEL"))
		return job->name;
	return pg_cmd_getenv(NULL, name);
}

/* Suite paths as `perfgate run pipeline.yml` finds them: in the current
 * directory (the checkout, as in the job), else beside the pipeline. */
static void resolve_suite_paths(json_t *config, const char *pipeline_file)
{
	json_t *suites = json_object_get(config, "suites");
	char *copy = pg_xstrdup(pipeline_file);
	const char *dir = dirname(copy);
	size_t n = json_is_array(suites) ? json_array_size(suites) : json_is_string(suites);

	for (size_t i = 0; i < n; i++) {
		json_t *v = json_is_array(suites) ? json_array_get(suites, i) : suites;
		const char *rel = json_string_value(v);
		struct stat st;
		char *alt;

		if (!rel || rel[0] == '/' || stat(rel, &st) == 0)
			continue;
		alt = pg_path_join(dir, rel);
		if (stat(alt, &st) == 0)
			json_string_set(v, alt);
		free(alt);
	}
	free(copy);
}

/* What build the step is taken for, from the shell's BUILDKITE_* values. */
static void describe_build(struct pg_buf *out, const struct pg_bkenv *env)
{
	if (pg_bkenv_is_pr(env)) {
		pg_buf_printf(out, "pull request #%s into %s", env->pull_request,
			      env->base_branch ? env->base_branch : env->default_branch);
		if (env->labels.n) {
			pg_buf_puts(out, " (labels:");
			for (size_t i = 0; i < env->labels.n; i++)
				pg_buf_printf(out, "%s %s", i ? "," : "", env->labels.v[i]);
			pg_buf_putc(out, ')');
		}
	} else if (env->branch) {
		pg_buf_printf(out, "a build of %s%s", env->branch,
			      pg_bkenv_on_default_branch(env) ? ", the default branch" : "");
	} else {
		pg_buf_puts(out, "a build of no branch (BUILDKITE_BRANCH unset: no history is "
				 "recorded)");
	}
}

/* --pipeline: the step of a pipeline file, checked or run here. */
static int run_pipeline_step(void)
{
	struct pg_config_select select = { step_key, &matrix };
	struct pg_suite suite = PG_SUITE_INIT;
	struct pg_config_step step;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_bk_opts o = { 0 };
	struct pg_buf build = PG_BUF_INIT;
	struct local_job job;
	struct pg_bkenv env;
	const char *paths[] = { pipeline };
	int rc;

	memset(&env, 0, sizeof(env));
	if (vllm && pg_program_check(vllm, &err)) {
		pg_error_prefix(&err, "option '--vllm'");
		return pg_cmd_fail("buildkite", &err);
	}
	if (pg_config_load_step(&suite, &step, paths, 1, &select, &err)) {
		rc = pg_cmd_fail("buildkite", &err);
		goto done;
	}
	if (!step.from_pipeline) {
		pg_error_set(&err, PG_ECONFIG, "%s: not a Buildkite pipeline with a perfgate step",
			     pipeline);
		rc = pg_cmd_fail("buildkite", &err);
		goto done;
	}
	for (size_t i = 0; i < suite.warnings.n; i++)
		fprintf(stderr, "perfgate buildkite: warning: %s\n", suite.warnings.v[i]);
	if (check) {
		fprintf(stderr, "perfgate buildkite: step '%s' of %s: the configuration is valid\n",
			step.name, pipeline);
		rc = PG_EXIT_OK;
		goto done;
	}
	if (!step.config)
		step.config = json_object();
	resolve_suite_paths(step.config, pipeline);
	if (filter) /* as perfgate run's --filter, it wins over the step's */
		json_object_set_new(step.config, "filter", json_string(filter));
	if (vllm)
		setenv("PERFGATE_VLLM", vllm, 1);
	job.name = step.name;
	pg_bkenv_load(&env, local_getenv, &job);
	describe_build(&build, &env);
	fprintf(stderr,
		"perfgate buildkite: step '%s' of %s, run here as %s; nothing is posted or "
		"uploaded: the annotation goes to %s/annotation.md\n",
		step.name, pipeline, build.ptr,
		step.plugin.results_dir ? step.plugin.results_dir : "results");
	o.log = stderr;
	o.out = stdout;
	rc = pg_buildkite_main(&env, step.config, &o, &err);
	if (err.code)
		pg_cmd_fail("buildkite", &err);
done:
	pg_buf_release(&build);
	pg_bkenv_release(&env);
	pg_config_step_release(&step);
	pg_suite_release(&suite);
	return rc;
}

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
	if (pg_cmd_parse(&help, argc, argv, &pos, 0, 0,
			 "no arguments: the configuration comes from "
			 "BUILDKITE_PLUGIN_CONFIGURATION, or --pipeline FILE",
			 &rc))
		goto done;
	if ((step_key || matrix.n || vllm) && !pipeline) {
		pg_error_set(&err, PG_ECONFIG, "%s goes with --pipeline FILE",
			     step_key   ? "--step"
			     : matrix.n ? "--matrix"
					: "--vllm");
		goto fail;
	}
	if (pipeline && (will_run || print_schema)) {
		pg_error_set(&err, PG_ECONFIG, "--pipeline goes with --check or alone, not with %s",
			     will_run ? "--will-run" : "--print-schema");
		goto fail;
	}
	if (pipeline) {
		rc = run_pipeline_step();
		goto done;
	}
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
	pg_strv_release(&matrix);
	return rc;
}
