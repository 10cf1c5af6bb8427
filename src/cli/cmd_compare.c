/* perfgate compare: results vs the GPU's baseline, a verdict per test and metric. */
#include "cli/cmd.h"
#include "cli/common.h"
#include "cli/compare_cmd.h"
#include "cli/opt.h"
#include "base/buf.h"
#include "gate/attention.h"
#include "gate/compare.h"
#include "base/error.h"
#include "gate/gate_io.h"
#include "results/results_io.h"
#include "sys/fsutil.h"
#include "telemetry/health_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char compare_description[] =
	"Compares every test point and metric in DIR with the GPU's baseline, deciding on\n"
	"the whole step at once (docs/gate.md): regressed, not-reproduced, improved,\n"
	"unchanged, noisy, missing (planned, not produced), new (run, not in the\n"
	"baseline), insufficient-data, or error. Baseline points outside the run's plan\n"
	"(its perfgate_run.json) are not in this suite and never fail. Writes\n"
	"comparison.md and verdict.json (to -o, default DIR) and prints the markdown.\n"
	"\n"
	"With --confirm-dir, a re-run of the points listed under \"rerun\" in a first\n"
	"verdict.json: each flagged regression must reproduce on the re-run alone, or\n"
	"it is not-reproduced (a warning).\n"
	"\n"
	"A job whose telemetry shows it was sick (GPU throttling, clocks held down, GPU\n"
	"errors, another process on the GPU: the thresholds file's health: policy) does\n"
	"not fail: its verdict is \"suspect\" and gate exits 3, asking for a re-run.";

static const char gate_description[] =
	"compare, with the exit code as the verdict: 0 pass (warnings and\n"
	"not-reproduced included), 1 a regression of a gating metric, 3 when results\n"
	"needed for the decision are missing or failed. Without --confirm-dir the first\n"
	"run decides alone within the step's false-alarm budget (exit 1, \"not confirmed\n"
	"by a re-run\"; verdict.json lists the points to re-run); with it, only a\n"
	"regression the re-run reproduces exits 1.";

int pg_compare_main(int argc, char **argv, bool gate)
{
	const char *gpu_flag = NULL, *confirm_dir = NULL, *outdir = NULL;
	struct pg_gate_source src = { 0 };
	bool allow_missing = false, strict = false, quiet = false, pull_request = false;
	/* clang-format off */
	const struct pg_opt opts[] = {
		PG_CMD_BASELINE_OPTS(src),
		{ PG_OPT_STRING, "gpu", 0, &gpu_flag, "GPU",
		  "the GPU to compare for (default: $PERFGATE_GPU, else what the results record)" },
		{ PG_OPT_STRING, "confirm-dir", 'c', &confirm_dir, "DIR",
		  "a re-run of the points listed under rerun: a flagged regression must "
		  "reproduce on it alone" },
		{ PG_OPT_STRING, "output", 'o', &outdir, "DIR",
		  "where comparison.md and verdict.json go (default: the results directory)" },
		{ PG_OPT_FLAG, "allow-missing", 0, &allow_missing,
		  NULL, "planned points the run lacks only warn (default: exit 3 in gate)" },
		{ PG_OPT_FLAG, "strict", 0, &strict, NULL,
		  "a gating metric beyond its threshold but within the noise (noisy) is "
		  "flagged too" },
		{ PG_OPT_FLAG, "pull-request", 0, &pull_request, NULL,
		  "the run is a pull request's: a change main's newest run already shows "
		  "is main's, a warning (the plugin sets it on pull-request builds)" },
		{ PG_OPT_FLAG, "quiet", 'q', &quiet, NULL, "do not print the markdown" },
		{ PG_OPT_END },
	};
	/* clang-format on */
	const struct pg_cmd_help help = {
		gate ? "gate" : "compare", "[options] DIR",
		gate ? "compare results with the GPU's baseline and exit 1 on a regression"
		     : "compare results with the GPU's baseline: a verdict per test and metric",
		gate ? gate_description : compare_description, opts
	};
	struct pg_strv pos = PG_STRV_INIT;
	struct pg_error err = PG_ERROR_INIT, warning = PG_ERROR_INIT;
	struct pg_result_set run = PG_RESULT_SET_INIT, again = PG_RESULT_SET_INIT;
	struct pg_policy policy = { 0 };
	struct pg_baseline base = PG_BASELINE_INIT;
	struct pg_comparison cmp = PG_COMPARISON_INIT;
	struct pg_cmp_point *points = NULL, *confirm_points = NULL;
	struct pg_strv plan = PG_STRV_INIT;
	bool have_plan = false;
	struct pg_buf md = PG_BUF_INIT, sick = PG_BUF_INIT;
	char gpu[128];
	int rc, exit_code = PG_EXIT_OK;

	if (pg_cmd_parse(&help, argc, argv, &pos, 1, 1, "one results directory", &exit_code))
		goto done;
	if ((rc = pg_cmd_load_results(&run, pos.v[0], &err)) ||
	    (rc = pg_gate_read_plan(&plan, &have_plan, pos.v[0], &err)))
		goto fail;
	if (confirm_dir && (rc = pg_cmd_load_results(&again, confirm_dir, &err)))
		goto fail;
	if ((rc = pg_gate_gpu_key(gpu, sizeof(gpu), gpu_flag, &run, &err)))
		goto fail;
	src.gpu = gpu;
	rc = pg_gate_load(&policy, &base, &src, &err);
	if (rc == PG_ENOTFOUND)
		err.code = PG_ECONFIG; /* no thresholds file: set one up, a retry cannot help */
	if (rc)
		goto fail;

	/* the job's health: the run's, or the confirmation run's when there
	 * is one (it decides the flagged points) */
	if ((rc = pg_health_check(&sick, src.thresholds, gpu, confirm_dir ? &again : &run, &err)))
		goto fail;
	points = pg_gate_points(&run);
	confirm_points = pg_gate_points(&again);
	pg_compare(&cmp, &policy, &base, points, run.n, confirm_points, again.n,
		   &(struct pg_compare_opts){ .allow_missing = allow_missing,
					      .strict = strict,
					      .pull_request = pull_request,
					      .plan = have_plan ? &plan : NULL,
					      .suspect = sick.len ? sick.ptr : NULL });
	/* the evidence links its files from where comparison.md goes */
	if (pg_mkdir_p(outdir ? outdir : pos.v[0], &warning) == 0)
		pg_gate_link_files(&cmp, &run, confirm_dir ? &again : NULL,
				   outdir ? outdir : pos.v[0]);
	pg_error_clear(&warning);
	if ((rc = pg_comparison_write(&cmp, outdir ? outdir : pos.v[0], &md, &warning, &err)))
		goto fail;
	if (warning.code)
		fprintf(stderr, "perfgate: warning: %s\n", warning.msg);
	if (!quiet) {
		exit_code = pg_cmd_print(&md);
	}
	/* the verdict outranks a stdout that failed: the files are written */
	if (gate && pg_gate_exit_code(cmp.outcome, true) != PG_EXIT_OK)
		exit_code = pg_gate_exit_code(cmp.outcome, true);
	goto done;
fail:
	exit_code = pg_cmd_fail(help.name, &err);
done:
	free(points);
	free(confirm_points);
	pg_strv_release(&plan);
	pg_buf_release(&md);
	pg_buf_release(&sick);
	pg_comparison_release(&cmp);
	pg_baseline_release(&base);
	pg_policy_release(&policy);
	pg_result_set_release(&run);
	pg_result_set_release(&again);
	pg_strv_release(&pos);
	return exit_code;
}

int cmd_compare(int argc, char **argv)
{
	return pg_compare_main(argc, argv, false);
}
