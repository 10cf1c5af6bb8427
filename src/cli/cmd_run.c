/*
 * perfgate run: load the suites (suite file, Buildkite pipeline step, or
 * vLLM *-tests.json files), choose the points, and run them -- or, with
 * --dry-run, print what would run.
 *
 * Loading and selection live in src/suite/config*_io.c and src/suite/plan*.c,
 * the run itself in src/runner/runner_io.c, GPU identity in src/gpu/detect_io.c;
 * this file only wires options to them.
 */
#include "cli/cmd.h"
#include "cli/common.h"
#include "cli/opt.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/template.h"
#include "suite/plan.h"
#include "suite/suite.h"
#include "suite/config_io.h"
#include "baseline/thresholds_io.h"
#include "gpu/detect_io.h"
#include "loadgen/dataset_files_io.h"
#include "gpu/gpu.h"
#include "report/report_io.h"
#include "runner/runner_io.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *results_dir;
static const char *step_key;
static struct pg_strv matrix;
static const char *filter;
static const char *only;
static long repeat = LONG_MIN; /* LONG_MIN: not given */
static const char *gpu;
static bool dry_run;
static bool save_detailed;
static bool fail_fast;
static double gpu_idle_mib;
static double gpu_idle_timeout; /* 0: the suite's (300 by default) */
static bool no_telemetry;
static double telemetry_interval;
static const char *vllm;
static bool fetch_datasets;

/* clang-format off */
static const struct pg_opt opts[] = {
	{ PG_OPT_STRING, "output", 'o', &results_dir, "DIR",
	  "write result files to DIR (default: results, or the step's results-dir)", "results-dir" },
	{ PG_OPT_STRING, "step", 0, &step_key, "KEY",
	  "with a Buildkite pipeline: the perfgate step to run (its key, or its label)" },
	{ PG_OPT_STRINGS, "matrix", 0, &matrix, "NAME=VALUE",
	  "with a matrix step: the job to run, {{matrix.NAME}} = VALUE ({{matrix}}: just VALUE); "
	  "repeatable" },
	{ PG_OPT_STRING, "filter", 0, &filter, "REGEX",
	  "run only test points whose names match REGEX (POSIX extended)" },
	{ PG_OPT_STRING, "only", 0, &only, "KIND", "run only latency, throughput, serving or startup tests" },
	{ PG_OPT_LONG, "repeat", 0, &repeat, "N", "run every point N times (median of runs)" },
	{ PG_OPT_STRING, "gpu", 0, &gpu, "NAME", "the GPU the results belong to (default: the step's gpu, $PERFGATE_GPU, the suite's, else detected)" },
	{ PG_OPT_FLAG, "dry-run", 'n', &dry_run, NULL,
	  "print every test point with its exact commands and settings; start nothing" },
	{ PG_OPT_FLAG, "save-detailed", 0, &save_detailed, NULL,
	  "keep per-request arrays in serving results (as vllm bench serve --save-detailed)" },
	{ PG_OPT_FLAG, "fail-fast", 0, &fail_fast, NULL,
	  "stop after the first point that fails (default: record it and run the rest)" },
	{ PG_OPT_DOUBLE, "gpu-idle-mib", 0, &gpu_idle_mib, "MIB",
	  "before each test wait until every GPU uses less than MIB of memory "
	  "(default: the suite's server.gpu_idle_mib, else off)" },
	{ PG_OPT_DOUBLE, "gpu-idle-timeout", 0, &gpu_idle_timeout, "SECONDS",
	  "how long that wait may take before the test is recorded as an error "
	  "(default: server.gpu_idle_timeout, 300)" },
	{ PG_OPT_FLAG, "no-telemetry", 0, &no_telemetry, NULL,
	  "do not scrape the server's /metrics or sample the GPUs while points run "
	  "(also PERFGATE_TELEMETRY=0)" },
	{ PG_OPT_DOUBLE, "telemetry-interval", 0, &telemetry_interval, "SECONDS",
	  "seconds between telemetry samples (default: 1)" },
	{ PG_OPT_FLAG, "fetch-datasets", 0, &fetch_datasets, NULL,
	  "fetch a missing dataset file before running, as vLLM's driver does (ShareGPT "
	  "from Hugging Face, $HF_ENDPOINT for a mirror, or the dataset's url), kept only "
	  "when its sha256 matches" },
	{ PG_OPT_STRING, "vllm", 0, &vllm, "CMD",
	  "run CMD wherever a command runs vllm, e.g. 'perfgate mock-server --as-vllm' "
	  "(vLLM's files without a GPU) or /opt/venv/bin/vllm (default: $PERFGATE_VLLM)" },
	{ PG_OPT_END },
};
/* clang-format on */

static const struct pg_cmd_help help = {
	"run",
	"[options] INPUT...",
	"run benchmark suites against an inference server and write results",
	"INPUT is a perfgate suite file, a Buildkite pipeline (the step that uses the\n"
	"perfgate plugin; --step chooses among several) or vLLM's latency-tests.json,\n"
	"throughput-tests.json and serving-tests.json (several make one suite); - reads\n"
	"it from stdin.\n"
	"Command-line options win over the pipeline step's options. The step's\n"
	"$VARIABLES are substituted as Buildkite does at upload (the pipeline's\n"
	"env: first, then the environment), its {{matrix}} values from --matrix.\n"
	"\n"
	"Each test's server is started once (its own process group, log in\n"
	"DIR/<test>.server.log), every point is measured and written to\n"
	"DIR/<point>.json, and the server is stopped. A failing point is recorded\n"
	"as an error and the rest still run (exit 3). SIGINT or SIGTERM stops\n"
	"within seconds, keeps the finished results and exits 128+signal.\n"
	"GPU: --gpu, then $PERFGATE_GPU, then the suite's gpu:, then nvidia-smi.",
	opts,
};

static void print_warnings(const struct pg_suite *suite)
{
	for (size_t i = 0; i < suite->warnings.n; i++)
		fprintf(stderr, "perfgate run: warning: %s\n", suite->warnings.v[i]);
}

static int parse_only(const char *s, int *out, struct pg_error *err)
{
	*out = -1;
	if (!s)
		return 0;
	*out = pg_suite_kind_parse(s);
	if (*out < 0)
		return pg_error_set(
			err, PG_ECONFIG,
			"option '--only': expected latency, throughput, serving or startup, got '%s'",
			s);
	return 0;
}

static void print_gpu(const struct pg_gpu_info *g)
{
	if (g->count > 0)
		fprintf(stderr, "perfgate: GPU %s (%s, from %s)\n", g->label, g->name, g->source);
	else
		fprintf(stderr,
			"perfgate: no GPU: %s; results record gpu \"none\" "
			"(--gpu or PERFGATE_GPU names one)\n",
			g->note[0] ? g->note : "none detected");
}

/*
 * The report, once the run is over whatever its outcome: what finished is
 * reported after a failure or a cancel too, with the failed points as
 * marked rows. A report that cannot be written is a warning: the results
 * are there, and `perfgate report` can render them again.
 */
static void report(const char *dir)
{
	struct pg_report_files files = PG_REPORT_FILES_INIT;
	struct pg_error err = PG_ERROR_INIT;

	if (pg_report_write_dir(&files, dir, dir, &err))
		fprintf(stderr, "perfgate: warning: no report: %s; results in %s/\n", err.msg, dir);
	else
		fprintf(stderr, "perfgate: results in %s/, report in %s\n", dir, files.md_path);
	pg_report_files_release(&files);
}

/*
 * A GPU named by hand (--gpu, PERFGATE_GPU, the step's or the suite's gpu)
 * that perfgate does not know and no thresholds file names: one line,
 * since every result will carry it -- a typo (H10) would label them all
 * and look for a thresholds file that no one wrote.
 */
static void warn_unknown_gpu(const struct pg_gpu_info *g, const char *thresholds)
{
	static const char *const sources[][2] = {
		{ "flag", "--gpu" },
		{ "env", "PERFGATE_GPU" },
		{ "suite", "the suite's gpu" },
	};
	struct pg_buf why = PG_BUF_INIT;
	const char *from = g->source;

	if (!strcmp(g->source, "nvidia-smi") || !strcmp(g->key, "none") ||
	    !pg_thresholds_gpu_unknown(&why, thresholds, g->key))
		goto done;
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
		if (!strcmp(g->source, sources[i][0]))
			from = sources[i][1];
	fprintf(stderr, "perfgate run: warning: GPU '%s' (from %s): %s; its results will say %s\n",
		g->name ? g->name : g->key, from, why.ptr, g->label);
done:
	pg_buf_release(&why);
}

static int run(const struct pg_suite *suite, const struct pg_plan *plan, const char *thresholds)
{
	struct pg_gpu_info g;
	struct pg_run_report rep = PG_RUN_REPORT_INIT;
	struct pg_run_opts o;
	struct pg_error err = PG_ERROR_INIT;
	const char *bk = getenv("BUILDKITE"), *term = getenv("TERM");
	int rc;

	pg_gpu_info_init(&g);
	/* every dataset file there (or fetched) before anything starts */
	{
		struct pg_dataset_check_opts d = { .fetch = fetch_datasets,
						   .log = stderr,
						   .stop = &pg_run_cancelled };
		pg_run_signals_install();
		rc = pg_dataset_files_check(plan, &d, &err);
		pg_run_signals_restore();
		if (rc) {
			/* a fetch stopped by a signal ends as a cancelled run does */
			rc = pg_cmd_fail("run", &err);
			if (pg_run_cancelled)
				rc = 128 + pg_run_cancelled;
			goto done;
		}
	}
	if ((rc = pg_gpu_resolve(&g, gpu, suite->gpu, &err))) {
		rc = pg_cmd_fail("run", &err);
		goto done;
	}
	print_gpu(&g);
	warn_unknown_gpu(&g, thresholds);

	memset(&o, 0, sizeof(o));
	o.results_dir = results_dir;
	o.gpu = &g;
	o.fail_fast = fail_fast;
	o.save_detailed = save_detailed;
	o.gpu_idle_mib = gpu_idle_mib;
	o.gpu_idle_timeout = gpu_idle_timeout;
	o.no_telemetry = no_telemetry;
	o.telemetry_interval = telemetry_interval;
	o.vllm = vllm;
	o.log = stderr;
	/* Buildkite runs jobs in a pseudo-terminal, but its log wants lines */
	o.tty = isatty(STDERR_FILENO) && !(bk && !strcmp(bk, "true")) &&
		!(term && !strcmp(term, "dumb"));

	pg_run_signals_install();
	rc = pg_run(&rep, suite, plan, &o, &err);
	pg_run_signals_restore();
	if (rc) {
		rc = pg_cmd_fail("run", &err);
		goto done;
	}
	report(results_dir);
	rc = pg_run_exit_code(&rep);
done:
	pg_run_report_release(&rep);
	pg_gpu_info_release(&g);
	return rc;
}

int cmd_run(int argc, char **argv)
{
	struct pg_strv inputs = PG_STRV_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_suite suite = PG_SUITE_INIT;
	struct pg_config_step step;
	struct pg_config_select select = { NULL, &matrix };
	struct pg_plan plan = PG_PLAN_INIT;
	struct pg_selection sel = PG_SELECTION_INIT;
	const struct pg_plugin_config *pc = &step.plugin;
	struct pg_buf out = PG_BUF_INIT;
	const char *shown_vllm;
	size_t total;
	int rc;

	memset(&step, 0, sizeof(step));
	if (pg_cmd_parse(&help, argc, argv, &inputs, 0, SIZE_MAX, "inputs", &rc))
		goto done;
	if (repeat != LONG_MIN && repeat < 1) {
		pg_error_set(&err, PG_ECONFIG, "option '--repeat': expected N >= 1, got %ld",
			     repeat);
		goto fail;
	}
	if (telemetry_interval < 0 || telemetry_interval > 3600) {
		pg_error_set(&err, PG_ECONFIG,
			     "option '--telemetry-interval': expected seconds in (0, 3600], got %g",
			     telemetry_interval);
		goto fail;
	}
	if (parse_only(only, &sel.only, &err))
		goto fail;
	/* the runner reads $PERFGATE_VLLM itself (the plugin's steps too);
	 * checked here so that a dry run shows what a run would do */
	shown_vllm = vllm ? vllm : getenv("PERFGATE_VLLM");
	if (shown_vllm && !*shown_vllm)
		shown_vllm = NULL;
	if (shown_vllm && pg_program_check(shown_vllm, &err)) {
		pg_error_prefix(&err, vllm ? "option '--vllm'" : "PERFGATE_VLLM");
		goto fail;
	}
	for (size_t i = 0, stdin_inputs = 0; i < inputs.n; i++)
		if (!strcmp(inputs.v[i], "-") && ++stdin_inputs > 1) {
			pg_error_set(&err, PG_ECONFIG, "- (stdin) can be given once");
			goto fail;
		}
	select.step_key = step_key;
	if (pg_config_load_step(&suite, &step, (const char *const *)inputs.v, inputs.n, &select,
				&err))
		goto fail;
	print_warnings(&suite);

	/* the command line wins over the pipeline step's options */
	sel.filter = filter ? filter : pc->filter;
	if (sel.only < 0)
		sel.only = pc->only;
	sel.repeat = repeat > 0 ? repeat : pc->repeat;
	sel.shard = pc->shard;
	if (!results_dir)
		results_dir = step.from_pipeline && pc->results_dir ? pc->results_dir : "results";
	/* the step's gpu option counts as the flag; $PERFGATE_GPU and the
	 * suite's gpu: come after it (pg_gpu_resolve) */
	if (!gpu && pc->gpu && strcmp(pc->gpu, "auto"))
		gpu = pc->gpu;

	pg_plan_build(&plan, &suite);
	total = plan.n;
	pg_plan_release(&plan);
	if (pg_plan_select(&plan, &suite, &sel, &err))
		goto fail;

	if (dry_run) {
		const char *env_gpu = getenv("PERFGATE_GPU");
		const char *shown = gpu ? gpu : env_gpu && *env_gpu ? env_gpu : suite.gpu;
		struct pg_dryrun_opts o = { results_dir, shown, total, shown_vllm };

		if (shown && shown != suite.gpu && !pg_gpu_name_ok(shown)) {
			pg_error_set(&err, PG_ECONFIG, "%s '%s': " PG_GPU_NAME_HINT,
				     gpu ? "--gpu" : "PERFGATE_GPU", shown);
			goto fail;
		}
		struct pg_dataset_check_opts d = { .log = stderr };
		struct pg_error derr = PG_ERROR_INIT;

		/* the run would stop on it: said, but a dry run starts nothing */
		if (pg_dataset_files_check(&plan, &d, &derr))
			fprintf(stderr, "perfgate run: warning: %s\n", derr.msg);
		pg_dryrun_render(&out, &suite, &plan, &o);
		rc = pg_cmd_print(&out);
		goto done;
	}
	rc = run(&suite, &plan,
		 step.from_pipeline && pc->thresholds ? pc->thresholds : "thresholds");
	goto done;
fail:
	rc = pg_cmd_fail("run", &err);
done:
	pg_buf_release(&out);
	pg_plan_release(&plan);
	pg_suite_release(&suite);
	pg_config_step_release(&step);
	pg_strv_release(&inputs);
	pg_strv_release(&matrix);
	return rc;
}
