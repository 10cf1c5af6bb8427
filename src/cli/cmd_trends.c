/*
 * perfgate trends: the history in git as a static site, one overview page
 * per GPU and a page per test point (trends/trends_io.h), with the gate's
 * baseline window and tolerance band on every chart and, with --current,
 * a run's values (a PR's) against them.
 */
#include "cli/cmd.h"
#include "cli/common.h"
#include "cli/opt.h"
#include "base/error.h"
#include "base/exitcode.h"
#include "gate/gate_io.h"
#include "gpu/gpu.h"
#include "results/results_io.h"
#include "trends/trends_io.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int cmd_trends(int argc, char **argv)
{
	const char *repo = NULL, *ab_repo = NULL, *ref = NULL, *gpu_flag = NULL, *thresholds = NULL,
		   *current = NULL, *label = NULL;
	/* LONG_MIN: not given (any number given is checked, -1 too) */
	long last = LONG_MIN, jobs = LONG_MIN;
	/* clang-format off */
	const struct pg_opt opts[] = {
		{ PG_OPT_STRING, "repo", 0, &repo, "PATH|URL",
		  "the history repository (default: the current one)" },
		{ PG_OPT_STRING, "ab-repo", 0, &ab_repo, "PATH|URL",
		  "where the A/B results are recorded, under the same ref (default: --repo)" },
		{ PG_OPT_STRING, "ref", 0, &ref, "REF", "the history ref (default: refs/perfgate/history)" },
		{ PG_OPT_STRING, "gpu", 0, &gpu_flag, "GPU", "only this GPU (default: every GPU in the history)" },
		{ PG_OPT_STRING, "thresholds", 't', &thresholds, "PATH",
		  "the policy's thresholds file or directory (default: thresholds; else the defaults)" },
		{ PG_OPT_STRING, "current", 0, &current, "RESULTS",
		  "a run to draw against the history (a results directory or a file 'perfgate "
		  "import' reads), compared as the gate would" },
		{ PG_OPT_STRING, "label", 0, &label, "TEXT",
		  "the name of the --current run on the charts (default: this PR)" },
		{ PG_OPT_LONG, "last", 0, &last, "N",
		  "look for change points in the last N runs of each GPU (default: three baseline "
		  "windows, the span the gate looks at; 0: every run)" },
		{ PG_OPT_LONG, "jobs", 0, &jobs, "N",
		  "threads to read, analyse and draw with (default: the CPUs it may run on, at most "
		  "16); the site is "
		  "the same whatever the number" },
		{ PG_OPT_END },
	};
	/* clang-format on */
	const struct pg_cmd_help help = {
		"trends", "[options] OUT_DIR",
		"render the history in git as a static site (HTML with inline SVG)",
		"OUT_DIR/index.html lists the GPUs; OUT_DIR/<gpu>/index.html shows each test\n"
		"point's gated metrics over its last runs, the points that need a look first,\n"
		"and the change points; OUT_DIR/<gpu>/p/<point>.html charts every recorded run\n"
		"of main with the baseline window and tolerance band the gate would use now,\n"
		"the change points and, with --current, the run's value and verdict. Nothing\n"
		"is fetched (a point page's one inline script shows a run on hover): open it\n"
		"from disk or publish it as a build artifact.",
		opts
	};
	struct pg_strv pos = PG_STRV_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_result_set set = PG_RESULT_SET_INIT;
	struct pg_cmp_point *points = NULL;
	struct pg_trends_written w;
	char gpu[128] = "", cur_gpu[128] = "";
	int rc, exit_code = PG_EXIT_OK;

	if (pg_cmd_parse(&help, argc, argv, &pos, 1, 1, "an output directory", &exit_code))
		goto done;
	if (last != LONG_MIN && last < 0) {
		rc = pg_error_set(&err, PG_ECONFIG, "option '--last': must not be negative");
		goto fail;
	}
	if (jobs != LONG_MIN && (jobs < 1 || jobs > 256)) {
		rc = pg_error_set(&err, PG_ECONFIG, "option '--jobs': must be between 1 and 256");
		goto fail;
	}
	if (gpu_flag && *gpu_flag)
		pg_gpu_key(gpu, sizeof(gpu), gpu_flag);
	if (current) {
		struct stat st;
		if (stat(current, &st) == 0 && S_ISDIR(st.st_mode))
			rc = pg_cmd_load_results(&set, current, &err);
		else
			rc = pg_cmd_import_file(&set, current, NULL, &err);
		if (rc)
			goto fail;
		if ((rc = pg_gate_gpu_key(cur_gpu, sizeof(cur_gpu), gpu[0] ? gpu : NULL, &set,
					  &err)))
			goto fail;
		points = pg_gate_points(&set);
	}
	rc = pg_trends_write(
		&(struct pg_trends_opts){ .out_dir = pos.v[0],
					  .repo = repo,
					  .ab_repo = ab_repo,
					  .ref = ref,
					  .gpu = gpu[0] ? gpu : NULL,
					  .thresholds = thresholds,
					  .current = points,
					  .n_current = set.n,
					  .current_gpu = cur_gpu[0] ? cur_gpu : NULL,
					  .current_name = label,
					  .last = last == LONG_MIN ? -1 : last,
					  .jobs = jobs == LONG_MIN ? 0 : (unsigned)jobs,
					  .progress = stderr },
		&w, &err);
	if (rc)
		goto fail;
	printf("wrote %s/index.html: %zu GPU%s, %zu test point%s, %zu page%s (%.1f MB; largest "
	       "overview %.2f MB)",
	       pos.v[0], w.gpus, w.gpus == 1 ? "" : "s", w.points, w.points == 1 ? "" : "s",
	       w.pages, w.pages == 1 ? "" : "s", (double)w.bytes / 1e6,
	       (double)w.overview_max / 1e6);
	if (current)
		printf("; %s drawn at %zu gated metric%s", label ? label : "this PR",
		       w.current_drawn, w.current_drawn == 1 ? "" : "s");
	printf("\n");
	goto done;
fail:
	exit_code = pg_cmd_fail("trends", &err);
done:
	free(points);
	pg_result_set_release(&set);
	pg_strv_release(&pos);
	return exit_code;
}
