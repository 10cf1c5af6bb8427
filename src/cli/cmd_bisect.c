/*
 * perfgate bisect: find the commit that carries a performance change, each
 * probe an A/B of a commit's engine against the good end (docs/bisect.md).
 *
 * The search is bisect/bisect_search.c's, the probes and files
 * bisect/bisect_io.c's (A/B runs through runner/ab_io.c); this file wires
 * options to them and prints.
 */
#include "cli/cmd.h"
#include "cli/common.h"
#include "cli/opt.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/exitcode.h"
#include "bisect/bisect_io.h"
#include "gpu/detect_io.h"
#include "results/metrics.h"
#include "suite/config_io.h"
#include "suite/plan.h"
#include "suite/suite.h"
#include "sys/fsutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool local;
static bool pipeline;
static const char *good;
static const char *bad;
static const char *repo;
static const char *suite_path;
static const char *test_name;
static struct pg_strv metrics;
static const char *tolerance_arg;
static const char *server_command;
static const char *build_command;
static double build_timeout;
static const char *output;
static const char *gpu;
static long min_blocks;
static long max_blocks;
static long max_attempts;
static long max_steps;
static bool no_telemetry;
static bool quiet;
static const char *queue;
static long max_probes = -1;
static const char *from_change;
static const char *history_repo;
static const char *history_ref;
static const char *thresholds;

/* clang-format off */
static const struct pg_opt opts[] = {
	{ PG_OPT_FLAG, "local", 0, &local, NULL,
	  "run every probe here, one after the other (a GPU box, tests)" },
	{ PG_OPT_FLAG, "pipeline", 0, &pipeline, NULL,
	  "print the Buildkite step of the next probe (it runs it and uploads the one after), "
	  "or of the answer: for buildkite-agent pipeline upload" },
	{ PG_OPT_STRING, "queue", 0, &queue, "QUEUE",
	  "with --pipeline: the probes' agent queue (default: the GPU's name)" },
	{ PG_OPT_LONG, "max-probes", 0, &max_probes, "N",
	  "run at most N probes, then stop (the state saved; the same command resumes)" },
	{ PG_OPT_STRING, "good", 0, &good, "REV", "a commit without the change" },
	{ PG_OPT_STRING, "bad", 0, &bad, "REV", "a later commit with it, on the good one's first-parent line" },
	{ PG_OPT_STRING, "from-change", 0, &from_change, "GPU/POINT/METRIC",
	  "instead of --good/--bad: the newest step of METRIC at POINT ('all': every point) that "
	  "perfgate baseline changes finds; its metric, and half its size as the tolerance" },
	{ PG_OPT_STRING, "history-repo", 0, &history_repo, "PATH|URL",
	  "with --from-change: the history repository (default: --repo)" },
	{ PG_OPT_STRING, "ref", 0, &history_ref, "REF",
	  "with --from-change: the history ref (default: refs/perfgate/history)" },
	{ PG_OPT_STRING, "thresholds", 't', &thresholds, "PATH",
	  "with --from-change: the policy's thresholds file or directory (default: thresholds)" },
	{ PG_OPT_STRING, "repo", 0, &repo, "PATH", "the repository of the commits (default: the current one)" },
	{ PG_OPT_STRING, "suite", 0, &suite_path, "FILE", "the suite holding the test (a suite file or pipeline)" },
	{ PG_OPT_STRING, "test", 0, &test_name, "NAME", "the test to probe: its points, its client, its dataset" },
	{ PG_OPT_STRINGS, "metric", 'm', &metrics, "ID",
	  "a metric that moved (repeatable; default: the test's gated metrics)" },
	{ PG_OPT_STRING, "tolerance", 0, &tolerance_arg, "PCT",
	  "a change smaller than this is no change (default: A/B's, 1% throughput, 2% latency); "
	  "half the step's size is a good choice" },
	{ PG_OPT_STRING, "server-command", 0, &server_command, "TEMPLATE",
	  "a shell line starting a commit's engine: {commit} its id, {port}, {model} as in suites" },
	{ PG_OPT_STRING, "build", 0, &build_command, "TEMPLATE",
	  "a shell line building or installing a commit's engine ({commit}); a failure skips the commit" },
	{ PG_OPT_DOUBLE, "build-timeout", 0, &build_timeout, "SECONDS", "a build's limit (default: 3600)" },
	{ PG_OPT_STRING, "output", 'o', &output, "DIR",
	  "where bisect.md, bisect.json, the state file and every probe go (default: bisect)" },
	{ PG_OPT_STRING, "gpu", 0, &gpu, "NAME",
	  "the GPU the results belong to (default: $PERFGATE_GPU, the suite's, else detected)" },
	{ PG_OPT_LONG, "min-blocks", 0, &min_blocks, "N", "no probe decided before N blocks (default: 4)" },
	{ PG_OPT_LONG, "max-blocks", 0, &max_blocks, "N",
	  "a probe's budget of blocks, even (default: 16; attempt k of an inconclusive probe: k x N)" },
	{ PG_OPT_LONG, "max-attempts", 0, &max_attempts, "N",
	  "probes of a commit while inconclusive, then it is undecided (default: 3)" },
	{ PG_OPT_LONG, "max-steps", 0, &max_steps, "N", "steps to look for in the range (default: 2)" },
	{ PG_OPT_FLAG, "no-telemetry", 0, &no_telemetry, NULL,
	  "do not scrape the server's /metrics or sample the GPUs while points run" },
	{ PG_OPT_FLAG, "quiet", 'q', &quiet, NULL, "do not print bisect.md" },
	{ PG_OPT_END },
};
/* clang-format on */

static const struct pg_cmd_help help = {
	"bisect",
	"--local|--pipeline (--good REV --bad REV | --from-change GPU/POINT/METRIC) --suite FILE --test NAME\n       --server-command TEMPLATE [options]",
	"find the commit that carries a performance change, an A/B run per probe",
	"Searches the first-parent commits after --good up to --bad for the first one\n"
	"that carries the change. Each probe is an A/B run (perfgate ab: interleaved\n"
	"blocks, sampled until decisive) of a commit's engine against the good end, on\n"
	"the test's points, judged on the metrics given. A commit that cannot be built\n"
	"or started is skipped and named; a failure of the good side is retried once\n"
	"and never counted; an inconclusive probe is run again with a larger budget,\n"
	"then left undecided, never guessed. After a step is found, the bad end is\n"
	"probed against it: a further step is searched for the same way.\n"
	"\n"
	"Writes DIR/bisect.md and bisect.json (the culprit, or the smallest range when\n"
	"commits were skipped; its change with its 95% interval; every probe; the\n"
	"commands to reproduce) and DIR/bisect-state.json: the same command again\n"
	"resumes, running no recorded probe twice. Exit codes: 0 a step found, 1 no\n"
	"change in the range, 2 configuration, 3 infrastructure (the good end cannot\n"
	"be built or keeps failing), 128+N a signal.",
	opts,
};

/* Keep only the test named `name` in the suite. */
static int keep_test(struct pg_suite *suite, const char *name, struct pg_error *err)
{
	size_t keep = suite->n_tests;
	const char *names[64];
	size_t n = 0;

	for (size_t i = 0; i < suite->n_tests; i++) {
		if (!strcmp(suite->tests[i].name, name))
			keep = i;
		if (n < 64)
			names[n++] = suite->tests[i].name;
	}
	if (keep == suite->n_tests) {
		const char *near = pg_nearest(name, names, n);
		return pg_error_set(err, PG_ECONFIG, "%s: --test: no test '%s'%s%s%s", suite_path,
				    name, near ? " (did you mean '" : "", near ? near : "",
				    near ? "'?)" : "");
	}
	for (size_t i = 0; i < suite->n_tests; i++)
		if (i != keep)
			pg_test_release(&suite->tests[i]);
	if (keep)
		suite->tests[0] = suite->tests[keep];
	suite->n_tests = 1;
	return 0;
}

static int check_metrics(const struct pg_test *t, struct pg_error *err)
{
	for (size_t i = 0; i < metrics.n; i++) {
		const struct pg_metric *m = pg_metric_by_id(t->kind, metrics.v[i]);
		if (!m || m->direction == PG_NO_DIRECTION) {
			const char *ids[128];
			size_t n = pg_metric_ids(t->kind, ids, 128);
			const char *near = pg_nearest(metrics.v[i], ids, n);
			return pg_error_set(err, PG_ECONFIG,
					    "--metric: '%s' is no metric with a direction of test "
					    "'%s'%s%s%s",
					    metrics.v[i], t->name, near ? " (did you mean '" : "",
					    near ? near : "", near ? "'?)" : "");
		}
	}
	return 0;
}

static int check_options(double *tolerance, struct pg_error *err)
{
	if (local == pipeline)
		return pg_error_set(err, PG_ECONFIG,
				    "say where the probes run: --local (here) or --pipeline (a "
				    "Buildkite step each)");
	if (from_change && (good || bad))
		return pg_error_set(err, PG_ECONFIG,
				    "--from-change names the range: no --good or --bad with it");
	if ((!from_change && (!good || !bad)) || !suite_path || !test_name || !server_command)
		return pg_error_set(err, PG_ECONFIG, "missing %s (see perfgate bisect --help)",
				    !from_change && !good  ? "--good REV (or --from-change)"
				    : !from_change && !bad ? "--bad REV"
				    : !suite_path          ? "--suite FILE"
				    : !test_name           ? "--test NAME"
							   : "--server-command TEMPLATE");
	if (!strstr(server_command, "{commit}"))
		return pg_error_set(err, PG_ECONFIG,
				    "--server-command: no {commit} in it: every probe would start "
				    "the same engine");
	if (build_command && !strstr(build_command, "{commit}"))
		return pg_error_set(err, PG_ECONFIG, "--build: no {commit} in it");
	*tolerance = 0;
	if (tolerance_arg &&
	    (pg_parse_percent(tolerance_arg, tolerance) || !(*tolerance > 0) || *tolerance >= 1))
		return pg_error_set(err, PG_ECONFIG,
				    "--tolerance '%s': expected a percentage in (0%%, 100%%)",
				    tolerance_arg);
	if (min_blocks && (min_blocks < 2 || min_blocks % 2))
		return pg_error_set(err, PG_ECONFIG,
				    "--min-blocks %ld: expected an even number >= 2", min_blocks);
	if (max_blocks && (max_blocks < 2 || max_blocks % 2))
		return pg_error_set(err, PG_ECONFIG,
				    "--max-blocks %ld: expected an even number >= 2", max_blocks);
	if (max_attempts < 0 || max_steps < 0)
		return pg_error_set(err, PG_ECONFIG, "--max-%s: must be at least 1",
				    max_attempts < 0 ? "attempts" : "steps");
	return 0;
}

int cmd_bisect(int argc, char **argv)
{
	struct pg_strv pos = PG_STRV_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_suite suite = PG_SUITE_INIT;
	struct pg_config_step step;
	struct pg_plan plan = PG_PLAN_INIT;
	struct pg_selection sel = PG_SELECTION_INIT;
	struct pg_gpu_info g;
	struct pg_bisect_run_opts o;
	struct pg_bisect_outcome_summary sum;
	struct pg_bisect_change change;
	struct pg_buf yaml = PG_BUF_INIT;
	double tolerance;
	int rc;

	memset(&step, 0, sizeof(step));
	memset(&change, 0, sizeof(change));
	pg_gpu_info_init(&g);
	if (pg_cmd_parse(&help, argc, argv, &pos, 0, 0, "no arguments", &rc))
		goto done;
	if (check_options(&tolerance, &err))
		goto fail;
	if (from_change) {
		char pct[PG_FMT_DOUBLE_SIZE];
		if (pg_bisect_from_change(&change, from_change,
					  history_repo ? history_repo
					  : repo       ? repo
						       : ".",
					  history_ref, thresholds, &err))
			goto fail;
		good = change.good;
		bad = change.bad;
		if (!metrics.n)
			pg_strv_push(&metrics, change.metric);
		if (!tolerance_arg)
			tolerance = fabs(change.shift) / 2;
		fprintf(stderr,
			"perfgate bisect: %s at %s on %s: a step of %s (worse), between %.12s (%s) and "
			"%.12s (%s)\n",
			change.metric, change.point ? change.point : "every point", change.gpu,
			pg_fmt_pct(pct, change.shift), change.good,
			change.first_date ? change.first_date : "?", change.bad,
			change.last_date ? change.last_date : "?");
	}
	if (pg_config_load_step(&suite, &step, (const char *const *)&suite_path, 1, NULL, &err))
		goto fail;
	for (size_t i = 0; i < suite.warnings.n; i++)
		fprintf(stderr, "perfgate bisect: warning: %s\n", suite.warnings.v[i]);
	if (keep_test(&suite, test_name, &err) || check_metrics(&suite.tests[0], &err))
		goto fail;
	if (suite.tests[0].server.n_roles || suite.tests[0].server.remote) {
		pg_error_set(&err, PG_ECONFIG,
			     "%s: test '%s' %s: a bisect starts one server per commit", suite_path,
			     test_name,
			     suite.tests[0].server.remote ? "uses a remote server"
							  : "runs a deployment");
		goto fail;
	}
	if (pg_plan_select(&plan, &suite, &sel, &err))
		goto fail;
	if (from_change && !gpu)
		gpu = change.gpu; /* the history's GPU: the bisect runs where it moved */
	if (pg_gpu_resolve(&g, gpu, suite.gpu, &err))
		goto fail;

	memset(&o, 0, sizeof(o));
	o.repo = repo;
	o.good = good;
	o.bad = bad;
	o.output = output ? output : "bisect";
	o.suite_path = suite_path;
	o.test = test_name;
	o.server_command = server_command;
	o.build = build_command;
	o.metrics = &metrics;
	o.tolerance = tolerance;
	o.min_blocks = min_blocks ? min_blocks : 4;
	o.max_blocks = max_blocks ? max_blocks : 16;
	o.build_timeout = build_timeout;
	pg_bisect_opts_init(&o.search);
	if (max_attempts)
		o.search.max_attempts = (size_t)max_attempts;
	if (max_steps)
		o.search.max_steps = (size_t)max_steps;
	o.gpu = &g;
	o.log = stderr;
	o.no_telemetry = no_telemetry;
	o.max_probes = pipeline ? 0 : max_probes;
	if (pipeline) {
		o.pipeline = &yaml;
		o.queue = queue ? queue : g.label[0] ? g.label : NULL;
		o.from_step = pg_cmd_getenv(NULL, "BUILDKITE_STEP_KEY");
		if (!o.queue) {
			pg_error_set(&err, PG_ECONFIG,
				     "--pipeline: which agent queue runs the probes? give --queue "
				     "(or --gpu)");
			goto fail;
		}
	}
	if (pg_bisect_run(&sum, &suite, &plan, &o, &err))
		goto fail;
	if (pipeline) {
		fwrite(yaml.ptr, 1, yaml.len, stdout);
		fflush(stdout);
	} else if (!quiet) {
		struct pg_buf md = PG_BUF_INIT;
		char *path = pg_path_join(o.output, "bisect.md");
		if (pg_file_read(path, &md, &err) == 0) {
			fwrite(md.ptr, 1, md.len, stdout);
			fflush(stdout);
		}
		free(path);
		pg_buf_release(&md);
	}
	fprintf(stderr, "perfgate bisect: %zu probes run, %zu replayed; report in %s/bisect.md\n",
		sum.probes_run, sum.replayed, o.output);
	if (pipeline || !sum.finished) {
		/* what comes next is the pipeline's, or the same command's again */
		rc = sum.cancel_signal ? 128 + sum.cancel_signal : PG_EXIT_OK;
		goto done;
	}
	rc = sum.cancel_signal                    ? 128 + sum.cancel_signal
	     : sum.steps                          ? PG_EXIT_OK
	     : sum.end == PG_BISECT_END_NO_CHANGE ? PG_EXIT_REGRESSION
						  : PG_EXIT_INFRA;
	goto done;
fail:
	rc = pg_cmd_fail("bisect", &err);
done:
	pg_buf_release(&yaml);
	pg_bisect_change_release(&change);
	pg_gpu_info_release(&g);
	pg_plan_release(&plan);
	pg_suite_release(&suite);
	pg_config_step_release(&step);
	pg_strv_release(&pos);
	pg_strv_release(&metrics);
	return rc;
}
