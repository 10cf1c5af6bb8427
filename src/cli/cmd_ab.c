/*
 * perfgate ab: run the suite's two sides, base and head, interleaved on
 * this machine, and decide on their paired differences (docs/ab.md).
 *
 * The blocks are runner/ab_io.c's, the decision gate/ab.c's, the files
 * gate/ab_render.c's; this file only wires options to them and prints.
 */
#include "cli/cmd.h"
#include "loadgen/dataset_files_io.h"
#include "cli/common.h"
#include "cli/opt.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/exitcode.h"
#include "gate/attention.h"
#include "gate/compare.h"
#include "gpu/detect_io.h"
#include "report/report_io.h"
#include "runner/ab_io.h"
#include "suite/config_io.h"
#include "suite/plan.h"
#include "suite/suite.h"
#include "sys/fsutil.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *results_dir;
static const char *step_key;
static const char *filter;
static const char *gpu;
static long max_blocks;
static double time_budget;
static bool quiet;
static bool no_telemetry;

/* clang-format off */
static const struct pg_opt opts[] = {
	{ PG_OPT_STRING, "output", 'o', &results_dir, "DIR",
	  "write base/, head/, blocks/, comparison.md and verdict.json to DIR (default: results)" },
	{ PG_OPT_STRING, "step", 0, &step_key, "KEY",
	  "with a Buildkite pipeline: the perfgate step to run (its key, or its label)" },
	{ PG_OPT_STRING, "filter", 0, &filter, "REGEX",
	  "run only test points whose names match REGEX (POSIX extended)" },
	{ PG_OPT_STRING, "gpu", 0, &gpu, "NAME",
	  "the GPU the results belong to (default: $PERFGATE_GPU, the suite's, else detected)" },
	{ PG_OPT_LONG, "max-blocks", 0, &max_blocks, "N",
	  "at most N blocks, an even number (default: the ab section's max_blocks, 16)" },
	{ PG_OPT_DOUBLE, "time-budget", 0, &time_budget, "SECONDS",
	  "start no pair of blocks that would end after SECONDS (default: the ab section's)" },
	{ PG_OPT_FLAG, "no-telemetry", 0, &no_telemetry, NULL,
	  "do not scrape the server's /metrics or sample the GPUs while points run" },
	{ PG_OPT_FLAG, "quiet", 'q', &quiet, NULL, "do not print the comparison" },
	{ PG_OPT_END },
};
/* clang-format on */

static const struct pg_cmd_help help = {
	"ab",
	"[options] INPUT...",
	"run base and head interleaved on this machine and decide on paired blocks",
	"INPUT is a suite (or a Buildkite pipeline step) with an 'ab' section naming\n"
	"the two sides, base and head: what each changes in every test's server\n"
	"(command, flags, env) or external command. {side} is base or head.\n"
	"\n"
	"Blocks run in the order base head head base base head ..., each the whole\n"
	"plan with one server at a time. After each pair, every gated metric of\n"
	"every point is judged on its paired head/base ratios; sampling stops when\n"
	"every interval is clear of its tolerance, at a regression, at max_blocks or\n"
	"when the next pair would not fit the time budget. Undecided: inconclusive\n"
	"(a warning). Exit codes as perfgate gate: 0 pass, 1 regression, 2\n"
	"configuration, 3 failed blocks; SIGINT/SIGTERM stop the servers and exit\n"
	"128+signal.",
	opts,
};

static void print_gpu(const struct pg_gpu_info *g)
{
	if (g->count > 0)
		fprintf(stderr, "perfgate: GPU %s (%s, from %s)\n", g->label, g->name, g->source);
	else
		fprintf(stderr, "perfgate: no GPU: %s\n", g->note[0] ? g->note : "none detected");
}

/* benchmark_results.md of each side, as `perfgate run` writes it. */
static void report_side(const char *dir)
{
	struct pg_report_files files = PG_REPORT_FILES_INIT;
	struct pg_error err = PG_ERROR_INIT;

	if (pg_report_write_dir(&files, dir, dir, &err))
		fprintf(stderr, "perfgate: warning: no report for %s: %s\n", dir, err.msg);
	pg_report_files_release(&files);
}

int cmd_ab(int argc, char **argv)
{
	struct pg_strv inputs = PG_STRV_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_suite suite = PG_SUITE_INIT;
	struct pg_config_step step;
	struct pg_config_select select = { NULL, NULL };
	struct pg_plan plan = PG_PLAN_INIT;
	struct pg_selection sel = PG_SELECTION_INIT;
	struct pg_gpu_info g;
	struct pg_ab_summary sum;
	struct pg_ab_run_opts o;
	int rc;

	memset(&step, 0, sizeof(step));
	memset(&sum, 0, sizeof(sum));
	pg_gpu_info_init(&g);
	if (pg_cmd_parse(&help, argc, argv, &inputs, 1, SIZE_MAX, "inputs", &rc))
		goto done;
	if (max_blocks && (max_blocks < 2 || max_blocks % 2)) {
		pg_error_set(&err, PG_ECONFIG,
			     "option '--max-blocks': expected an even number >= 2, got %ld",
			     max_blocks);
		goto fail;
	}
	if (time_budget < 0) {
		pg_error_set(&err, PG_ECONFIG, "option '--time-budget': expected seconds > 0");
		goto fail;
	}
	select.step_key = step_key;
	if (pg_config_load_step(&suite, &step, (const char *const *)inputs.v, inputs.n, &select,
				&err))
		goto fail;
	for (size_t i = 0; i < suite.warnings.n; i++)
		fprintf(stderr, "perfgate ab: warning: %s\n", suite.warnings.v[i]);
	if (pg_ab_check(&suite, &err))
		goto fail;
	sel.filter = filter ? filter : step.plugin.filter;
	sel.only = step.plugin.only;
	sel.repeat = step.plugin.repeat;
	if (pg_plan_select(&plan, &suite, &sel, &err))
		goto fail;
	{
		/* a missing dataset file stops it before either side starts */
		struct pg_dataset_check_opts d = { .log = stderr };
		if (pg_dataset_files_check(&plan, &d, &err))
			goto fail;
	}
	if (!results_dir)
		results_dir = step.from_pipeline && step.plugin.results_dir
				      ? step.plugin.results_dir
				      : "results";
	if (!gpu && step.plugin.gpu && strcmp(step.plugin.gpu, "auto"))
		gpu = step.plugin.gpu;
	if (pg_gpu_resolve(&g, gpu, suite.gpu, &err))
		goto fail;
	print_gpu(&g);

	memset(&o, 0, sizeof(o));
	o.results_dir = results_dir;
	o.gpu = &g;
	o.log = stderr;
	o.no_telemetry = no_telemetry;
	o.max_blocks = max_blocks;
	o.time_budget = time_budget;
	if (pg_ab_run(&sum, &suite, &plan, &o, &err))
		goto fail;
	if (pg_ab_write(&sum, &suite, results_dir, &err))
		goto fail;
	{
		char *b = pg_path_join(results_dir, "base"), *h = pg_path_join(results_dir, "head");
		report_side(b);
		report_side(h);
		free(b);
		free(h);
	}
	if (!quiet) {
		/* what was written, secrets hidden */
		struct pg_buf md = PG_BUF_INIT;
		char *path = pg_path_join(results_dir, "comparison.md");
		if (pg_file_read(path, &md, &err) == 0) {
			fwrite(md.ptr, 1, md.len, stdout);
			fflush(stdout);
		}
		free(path);
		pg_buf_release(&md);
	}
	fprintf(stderr,
		"perfgate: results in %s/base and %s/head, comparison in %s/comparison.md\n",
		results_dir, results_dir, results_dir);
	rc = sum.cancel_signal ? 128 + sum.cancel_signal
			       : pg_gate_exit_code((enum pg_outcome)pg_ab_outcome(&sum), true);
	goto done;
fail:
	rc = pg_cmd_fail("ab", &err);
done:
	pg_ab_summary_release(&sum);
	pg_gpu_info_release(&g);
	pg_plan_release(&plan);
	pg_suite_release(&suite);
	pg_config_step_release(&step);
	pg_strv_release(&inputs);
	return rc;
}
