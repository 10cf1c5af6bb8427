/*
 * perfgate baseline: the baselines the gate compares with.
 *
 *   update   thresholds/<GPU>.yml values from results directories or reports
 *   record   append a run to the history in git
 *   show     print the baseline a comparison would use
 *   history  print the recorded runs of each test as a trend per metric
 *   changes  report steps and slow creep on main (nightly)
 *   check    find what is wrong in the history in git
 *   repair   drop what check found that can be dropped
 */
#include "cli/cmd.h"
#include "cli/common.h"
#include "cli/opt.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "base/jsonw.h"
#include "gate/compare.h"
#include "base/error.h"
#include "gpu/gpu.h"
#include "baseline/history.h"
#include "base/strutil.h"
#include "gate/gate_io.h"
#include "baseline/history_io.h"
#include "import/import_io.h"
#include "results/results_io.h"
#include "sys/fsutil.h"
#include "sys/gitinfo.h"
#include "baseline/thresholds_io.h"
#include "base/jsonw.h"

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static const char baseline_usage[] =
	"usage: perfgate baseline <update|record|show|history|changes|check|repair> [options]\n"
	"\n"
	"The baselines the gate compares with.\n"
	"\n"
	"  update   write thresholds/<GPU>.yml baselines from results directories or reports\n"
	"  record   append a run to the history in git (one commit per run)\n"
	"  show     print the baseline a comparison would use\n"
	"  history  print the recorded runs of each test point as a trend per metric\n"
	"  changes  report steps and slow creep on main (for a nightly build)\n"
	"  check    list what is wrong in the history: unreadable lines, duplicates, a stale lock\n"
	"  repair   drop the unreadable lines and duplicates (one commit), remove a stale lock\n"
	"\n"
	"Run 'perfgate baseline <subcommand> --help' for its options.\n";

/* ------------------------------------------------------------------ */

/* A source of results: a directory, or one file `perfgate import` reads
 * (a report, vllm bench JSON, llm-d records, printed result blocks). */
static int load_source(struct pg_result_set *out, const char *path, struct pg_error *err)
{
	struct stat st;
	int rc;

	if (strcmp(path, "-") && stat(path, &st))
		return pg_error_set(err, PG_ECONFIG, "%s: no such file or directory", path);
	if (strcmp(path, "-") && S_ISDIR(st.st_mode))
		rc = pg_results_load_dir(out, path, err);
	else
		rc = pg_cmd_import_file(out, path, NULL, err);
	if (rc == 0 && !out->n)
		rc = pg_error_set(err, PG_ECONFIG, "%s: no benchmark results in it",
				  pg_file_arg_name(path));
	return rc;
}

/* Keep only the results of GPU key `gpu` (results that do not say stay). */
static void keep_gpu(struct pg_result_set *set, const char *gpu)
{
	size_t k = 0;

	for (size_t i = 0; i < set->n; i++) {
		const char *raw = pg_result_gpu(&set->items[i]);
		char key[128];
		if (raw && strcmp(pg_gpu_key(key, sizeof(key), raw), gpu)) {
			pg_result_release(&set->items[i]);
			continue;
		}
		set->items[k++] = set->items[i];
	}
	set->n = k;
}

/* The build a result set came from (perfgate.build.url), or NULL. */
static const char *build_of(const struct pg_result_set *set)
{
	for (size_t i = 0; i < set->n; i++) {
		const char *url = pg_json_path_str(set->items[i].json, "perfgate.build.url");
		if (url && *url)
			return url;
	}
	return NULL;
}

/*
 * How the thresholds file at path names a source given as `given`: a
 * thresholds file is reviewed and committed, so never a path of someone's
 * disk. A path below the current directory as typed ("results"); else
 * the path in the repository the thresholds file is in; else the build
 * the results came from; else the file's or directory's own name.
 */
static char *source_label(const char *given, const char *path, const struct pg_result_set *set)
{
	char *dir = pg_xstrdup(path), *repo, *rel = NULL, *copy, *name;
	const char *p = given;
	struct stat st;

	while (pg_str_has_prefix(p, "./"))
		p += 2;
	if (!strcmp(given, "-") ||
	    (p[0] != '/' && strcmp(p, "..") && !pg_str_has_prefix(p, "../"))) {
		free(dir);
		return pg_xstrdup(*p ? p : given);
	}
	/* the thresholds file's directory, or the current one while the file
	 * and its directory are still to be made */
	repo = pg_git_workdir(stat(dirname(dir), &st) == 0 ? dir : ".");
	if (repo)
		rel = pg_path_relative(repo, given);
	free(repo);
	free(dir);
	if (rel && strcmp(rel, "..") && !pg_str_has_prefix(rel, "../"))
		return rel;
	free(rel);
	if (build_of(set))
		return pg_xstrdup(build_of(set));
	copy = pg_xstrdup(given);
	name = pg_xstrdup(basename(copy));
	free(copy);
	return name;
}

/* "perfgate baseline update ..." as typed, for the file's header. */
static char *command_line(int argc, char **argv)
{
	struct pg_buf b = PG_BUF_INIT;
	pg_buf_puts(&b, "perfgate baseline");
	for (int i = 0; i < argc; i++) {
		pg_buf_putc(&b, ' ');
		pg_shell_quote(&b, argv[i]);
	}
	return pg_buf_detach(&b);
}

/* A GPU named by --gpu or $PERFGATE_GPU; empty counts as not given, as in
 * pg_gate_gpu_key, so that the GPU then comes from the results. */
static bool gpu_given(const char *flag)
{
	const char *env = getenv("PERFGATE_GPU");

	return (flag && *flag) || (env && *env);
}

static int baseline_update(int argc, char **argv)
{
	const char *gpu_flag = NULL;
	struct pg_strv from = PG_STRV_INIT;
	bool replace = false;
	/* clang-format off */
	const struct pg_opt opts[] = {
		{ PG_OPT_STRINGS, "from", 'f', &from, "SRC",
		  "a results directory, or a report or file 'perfgate import' reads (- for "
		  "stdin); repeat for several runs (each counts once)" },
		{ PG_OPT_STRING, "gpu", 0, &gpu_flag, "GPU",
		  "use the results of this GPU (needed when a source holds several)" },
		{ PG_OPT_FLAG, "replace", 0, &replace, NULL,
		  "drop baseline points the sources do not have (default: keep them)" },
		{ PG_OPT_END },
	};
	/* clang-format on */
	const struct pg_cmd_help help = {
		"baseline update", "[options] PATH --from SRC...",
		"write the baselines of thresholds/<GPU>.yml from results or reports",
		"PATH is the thresholds file, or the directory holding <GPU>.yml. Only the\n"
		"baselines section is rewritten: the policy and comments stay as written. A new\n"
		"file gets the default policy, and a header with this command so the values\n"
		"can be reproduced.",
		opts
	};
	struct pg_strv pos = PG_STRV_INIT, skipped = PG_STRV_INIT, labels = PG_STRV_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_result_set *sets = NULL;
	struct pg_cmp_point **points = NULL;
	struct pg_cmp_run *runs = NULL;
	struct pg_baseline fresh = PG_BASELINE_INIT;
	char gpu[128] = "", *path = NULL, *regenerate = NULL;
	int rc, exit_code = PG_EXIT_OK;

	if (pg_cmd_parse(&help, argc, argv, &pos, 1, 1, "a thresholds PATH and at least one --from",
			 &exit_code))
		goto done;
	if (!from.n) {
		rc = pg_error_set(&err, PG_ECONFIG,
				  "expected a thresholds PATH and at least one --from");
		goto fail;
	}
	sets = pg_xcalloc(from.n, sizeof(*sets));
	points = pg_xcalloc(from.n, sizeof(*points));
	runs = pg_xcalloc(from.n, sizeof(*runs));
	for (size_t i = 0; i < from.n; i++)
		if ((rc = load_source(&sets[i], from.v[i], &err)))
			goto fail;
	if (gpu_given(gpu_flag)) {
		if ((rc = pg_gate_gpu_key(gpu, sizeof(gpu), gpu_flag, NULL, &err)))
			goto fail;
	} else {
		for (size_t i = 0; i < from.n; i++) {
			char key[128];
			if ((rc = pg_gate_gpu_key(key, sizeof(key), NULL, &sets[i], &err))) {
				pg_error_prefix(&err, "%s", from.v[i]);
				goto fail;
			}
			if (gpu[0] && strcmp(gpu, key)) {
				rc = pg_error_set(
					&err, PG_ECONFIG,
					"the sources come from several GPUs (%s, %s): pass --gpu",
					gpu, key);
				goto fail;
			}
			snprintf(gpu, sizeof(gpu), "%s", key);
		}
	}
	for (size_t i = 0; i < from.n; i++) {
		keep_gpu(&sets[i], gpu);
		if (!sets[i].n) {
			rc = pg_error_set(&err, PG_ECONFIG, "%s: no results for %s", from.v[i],
					  gpu);
			goto fail;
		}
	}
	path = pg_thresholds_path(pos.v[0], gpu);
	for (size_t i = 0; i < from.n; i++) {
		pg_strv_push_owned(&labels, source_label(from.v[i], path, &sets[i]));
		points[i] = pg_gate_points(&sets[i]);
		runs[i] = (struct pg_cmp_run){ labels.v[i], points[i], sets[i].n };
	}
	fresh.gpu = pg_xstrdup(gpu);
	pg_baseline_from_runs(&fresh, runs, from.n, &skipped);
	for (size_t i = 0; i < skipped.n; i++)
		fprintf(stderr, "perfgate baseline update: left out %s\n", skipped.v[i]);
	regenerate = command_line(argc, argv);
	rc = pg_thresholds_update(path, &fresh,
				  &(struct pg_thresholds_update_opts){ .gpu = gpu,
								       .regenerate = regenerate,
								       .replace = replace },
				  &err);
	if (rc)
		goto fail;
	fprintf(stderr, "perfgate baseline update: %s: %zu test point%s for %s\n", path, fresh.n,
		fresh.n == 1 ? "" : "s", gpu);
	goto done;
fail:
	exit_code = pg_cmd_fail("baseline update", &err);
done:
	for (size_t i = 0; sets && i < from.n; i++) {
		pg_result_set_release(&sets[i]);
		free(points[i]);
	}
	free(sets);
	free(points);
	free(runs);
	free(path);
	free(regenerate);
	pg_baseline_release(&fresh);
	pg_strv_release(&pos);
	pg_strv_release(&from);
	pg_strv_release(&skipped);
	pg_strv_release(&labels);
	return exit_code;
}

/* ------------------------------------------------------------------ */

static const char *first_result_str(const struct pg_result_set *set, const char *path)
{
	for (size_t i = 0; i < set->n; i++) {
		json_t *v = pg_json_path(set->items[i].json, path);
		if (json_is_string(v) && json_string_length(v))
			return json_string_value(v);
	}
	return NULL;
}

static const char *env_or(const char *flag, const char *env)
{
	const char *v = getenv(env);
	return flag ? flag : v && *v ? v : NULL;
}

static int baseline_record(int argc, char **argv)
{
	const char *repo = NULL, *ref = NULL, *gpu_flag = NULL, *commit = NULL, *build_url = NULL,
		   *branch = NULL;
	double timeout = 0;
	/* clang-format off */
	const struct pg_opt opts[] = {
		{ PG_OPT_STRING, "repo", 0, &repo, "PATH|URL",
		  "the history repository: a path, or a URL to fetch from and push to "
		  "(default: the current repository); a local clone also resolves --commit" },
		{ PG_OPT_STRING, "ref", 0, &ref, "REF", "the history ref (default: refs/perfgate/history)" },
		{ PG_OPT_STRING, "gpu", 0, &gpu_flag, "GPU", "the GPU (default: what the results record)" },
		{ PG_OPT_STRING, "commit", 0, &commit, "SHA",
		  "the commit measured (default: $BUILDKITE_COMMIT, the results' commit, HEAD)" },
		{ PG_OPT_STRING, "build-url", 0, &build_url, "URL",
		  "the build the run came from (default: $BUILDKITE_BUILD_URL)" },
		{ PG_OPT_STRING, "branch", 0, &branch, "NAME",
		  "the branch measured (default: $BUILDKITE_BRANCH, else the results' branch)" },
		{ PG_OPT_DOUBLE, "timeout", 0, &timeout, "SECONDS",
		  "keep trying this long while other writers win (default: "
		  "$PERFGATE_HISTORY_TIMEOUT, else 300)" },
		{ PG_OPT_END },
	};
	/* clang-format on */
	const struct pg_cmd_help help = {
		"baseline record", "[options] DIR", "append the run in DIR to the history in git",
		"One commit per run on the ref, one line per test point in <gpu>/<point>.jsonl.\n"
		"A point recorded again by the same build (a retried job) replaces its line.\n"
		"Only points that ran to the end are recorded: status ok, no failed request or\n"
		"iteration. With a URL the history is fetched, extended and pushed without force;\n"
		"when another writer pushed first, it fetches again and re-applies, with jittered\n"
		"backoff, until --timeout; every update is read back before it counts. A lock\n"
		"left by a killed writer is removed. Record every completed run of main, the\n"
		"ones that regressed too: the history follows main, and a verdict.json that\n"
		"'perfgate gate' wrote in DIR is recorded with the run (what regressed), so\n"
		"a later run at that level is main's known change (docs/gate.md).",
		opts
	};
	struct pg_strv pos = PG_STRV_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_result_set set = PG_RESULT_SET_INIT;
	struct pg_cmp_point *points = NULL;
	char gpu[128], now[32];
	struct pg_history_recorded done_rec = { 0 };
	json_t *regressed = NULL;
	int rc, exit_code = PG_EXIT_OK;
	const char *date;

	if (pg_cmd_parse(&help, argc, argv, &pos, 1, 1, "one results directory", &exit_code))
		goto done;
	if (timeout < 0) {
		rc = pg_error_set(&err, PG_ECONFIG, "option '--timeout': must not be negative");
		goto fail;
	}
	if ((rc = pg_cmd_load_results(&set, pos.v[0], &err)) ||
	    (rc = pg_gate_gpu_key(gpu, sizeof(gpu), gpu_flag, &set, &err)))
		goto fail;
	keep_gpu(&set, gpu);
	/* what main's gate found regressed in this run, when it was judged
	 * here (its verdict.json): the record carries it */
	if ((rc = pg_gate_read_regressed(&regressed, pos.v[0], &err)))
		goto fail;
	points = pg_gate_points(&set);
	date = first_result_str(&set, "perfgate.started_at");
	if (!date) {
		time_t t = time(NULL);
		struct tm tm;
		gmtime_r(&t, &tm);
		strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", &tm);
		date = now;
	}
	rc = pg_history_record(
		&(struct pg_cmp_run){ pos.v[0], points, set.n },
		&(struct pg_history_record_opts){
			.repo = repo,
			.ref = ref,
			.gpu = gpu,
			.timeout = timeout,
			.meta = { .commit = env_or(commit, "BUILDKITE_COMMIT")
						    ? env_or(commit, "BUILDKITE_COMMIT")
						    : first_result_str(&set, "perfgate.git.commit"),
				  .date = date,
				  .build_url = env_or(build_url, "BUILDKITE_BUILD_URL"),
				  .branch = env_or(branch, "BUILDKITE_BRANCH")
						    ? env_or(branch, "BUILDKITE_BRANCH")
						    : first_result_str(&set, "perfgate.git.branch"),
				  .regressed = regressed } },
		&done_rec, &err);
	for (size_t i = 0; i < done_rec.left_out.n; i++)
		fprintf(stderr, "perfgate baseline record: left out %s\n", done_rec.left_out.v[i]);
	for (size_t i = 0; i < done_rec.notes.n; i++)
		fprintf(stderr, "perfgate baseline record: %s\n", done_rec.notes.v[i]);
	if (rc)
		goto fail;
	printf("recorded %zu test point%s of %.12s for %s in %s", done_rec.lines,
	       done_rec.lines == 1 ? "" : "s", done_rec.measured, gpu,
	       ref ? ref : PG_HISTORY_DEFAULT_REF);
	if (done_rec.replaced)
		printf(", replacing %zu earlier record%s of this build", done_rec.replaced,
		       done_rec.replaced == 1 ? "" : "s");
	printf(" (history commit %.12s, %d attempt%s)\n", done_rec.commit, done_rec.attempts,
	       done_rec.attempts == 1 ? "" : "s");
	goto done;
fail:
	exit_code = pg_cmd_fail("baseline record", &err);
done:
	json_decref(regressed);
	pg_history_recorded_release(&done_rec);
	free(points);
	pg_result_set_release(&set);
	pg_strv_release(&pos);
	return exit_code;
}

/* ------------------------------------------------------------------ */

/* The GPU for show/history: --gpu, $PERFGATE_GPU, else a thresholds file's gpu:. */
static int resolve_gpu(char *gpu, size_t size, const char *flag, const char *thresholds,
		       struct pg_error *err)
{
	struct pg_policy p;
	struct pg_baseline b;
	struct stat st;
	int rc;

	if (gpu_given(flag))
		return pg_gate_gpu_key(gpu, size, flag, NULL, err);
	if (thresholds && stat(thresholds, &st) == 0 && S_ISREG(st.st_mode)) {
		rc = pg_thresholds_load(thresholds, &p, &b, err);
		if (rc == 0 && b.gpu)
			pg_gpu_key(gpu, size, b.gpu);
		pg_policy_release(&p);
		pg_baseline_release(&b);
		if (rc || gpu[0])
			return rc;
	}
	return pg_error_set(err, PG_ECONFIG, "which GPU? pass --gpu (or set PERFGATE_GPU)");
}

static int baseline_show(int argc, char **argv)
{
	const char *gpu_flag = NULL;
	struct pg_gate_source src = { 0 };
	/* clang-format off */
	const struct pg_opt opts[] = {
		PG_CMD_BASELINE_OPTS(src),
		{ PG_OPT_STRING, "gpu", 0, &gpu_flag, "GPU",
		  "the GPU (default: $PERFGATE_GPU, else the thresholds file's gpu:)" },
		{ PG_OPT_END },
	};
	/* clang-format on */
	const struct pg_cmd_help help = {
		"baseline show", "[options]",
		"print the baseline a comparison would use, with each metric's rule", NULL, opts
	};
	struct pg_strv pos = PG_STRV_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_policy policy = { 0 };
	struct pg_baseline base = PG_BASELINE_INIT;
	struct pg_buf out = PG_BUF_INIT;
	char gpu[128] = "";
	int rc, exit_code = PG_EXIT_OK;

	if (pg_cmd_parse(&help, argc, argv, &pos, 0, 0, "no arguments", &exit_code))
		goto done;
	if ((rc = resolve_gpu(gpu, sizeof(gpu), gpu_flag, src.thresholds, &err)))
		goto fail;
	src.gpu = gpu;
	rc = pg_gate_load(&policy, &base, &src, &err);
	if (rc == PG_ENOTFOUND)
		err.code = PG_ECONFIG; /* no thresholds file: a setup mistake */
	if (rc)
		goto fail;
	pg_baseline_describe(&out, &base, &policy);
	fwrite(out.ptr, 1, out.len, stdout);
	goto done;
fail:
	exit_code = pg_cmd_fail("baseline show", &err);
done:
	pg_buf_release(&out);
	pg_baseline_release(&base);
	pg_policy_release(&policy);
	pg_strv_release(&pos);
	return exit_code;
}

static int check_metric(const char *metric, struct pg_error *err)
{
	size_t nm;
	const struct pg_metric *all = pg_metrics_all(&nm);
	const char *ids[128];

	if (!metric)
		return 0;
	for (size_t i = 0; i < nm && i < 128; i++) {
		ids[i] = all[i].id;
		if (!strcmp(all[i].id, metric))
			return 0;
	}
	{
		const char *near = pg_nearest(metric, ids, nm < 128 ? nm : 128);
		return pg_error_set(err, PG_ECONFIG, "option '--metric': unknown metric '%s'%s%s%s",
				    metric, near ? " (did you mean '" : "", near ? near : "",
				    near ? "'?)" : "");
	}
}

/* What history and changes share: the GPU's histories and its policy, the
 * analysis of them and the text printed. */
struct history_args {
	const char *gpu_flag, *repo, *ref, *point, *metric, *thresholds;
	char gpu[128];
	struct pg_history *hs;
	size_t n;
	struct pg_policy policy;
	struct pg_history_analysis an;
	struct pg_buf out;
};

static int history_load(struct history_args *h, struct pg_error *err)
{
	int rc;

	pg_policy_init(&h->policy);
	if ((rc = check_metric(h->metric, err)) ||
	    (rc = resolve_gpu(h->gpu, sizeof(h->gpu), h->gpu_flag, NULL, err)) ||
	    (rc = pg_thresholds_load_policy(&h->policy, h->thresholds, h->gpu, err)))
		return rc;
	if ((rc = pg_history_read(&h->hs, &h->n, h->gpu, h->point,
				  &(struct pg_history_opts){ .repo = h->repo, .ref = h->ref },
				  err)))
		return rc;
	if (!h->n)
		return pg_error_set(err, PG_ENOTFOUND, "no recorded runs for %s%s%s in %s", h->gpu,
				    h->point ? " " : "", h->point ? h->point : "",
				    h->ref ? h->ref : PG_HISTORY_DEFAULT_REF);
	return 0;
}

static void history_release(struct history_args *h)
{
	for (size_t i = 0; i < h->n; i++)
		pg_history_release(&h->hs[i]);
	free(h->hs);
	pg_policy_release(&h->policy);
	pg_history_analysis_release(&h->an);
	pg_buf_release(&h->out);
}

#define HISTORY_OPTS(h)                                                                             \
	{ PG_OPT_STRING, "gpu", 0, &(h).gpu_flag, "GPU", "the GPU (default: $PERFGATE_GPU)" },      \
		{ PG_OPT_STRING, "repo",     0,                                                     \
		  &(h).repo,     "PATH|URL", "the history repository (default: the current one)" }, \
		{ PG_OPT_STRING, "ref", 0,                                                          \
		  &(h).ref,      "REF", "the history ref (default: refs/perfgate/history)" },       \
		{ PG_OPT_STRING,                                                                    \
		  "thresholds",                                                                     \
		  't',                                                                              \
		  &(h).thresholds,                                                                  \
		  "PATH",                                                                           \
		  "the policy's thresholds file or directory (default: thresholds; else the "       \
		  "defaults)" },                                                                    \
		{ PG_OPT_STRING, "point", 0, &(h).point, "NAME", "only this test point" },          \
	{                                                                                           \
		PG_OPT_STRING, "metric", 'm', &(h).metric, "ID",                                    \
			"only this metric (e.g. output_throughput)"                                 \
	}

static int baseline_history(int argc, char **argv)
{
	struct history_args h = { .out = PG_BUF_INIT };
	long last = 20;
	/* clang-format off */
	const struct pg_opt opts[] = {
		HISTORY_OPTS(h),
		{ PG_OPT_LONG, "last", 0, &last, "N", "the last N runs of each point (default: 20)" },
		{ PG_OPT_END },
	};
	/* -p and -n meant --point and --last here before they meant --port
	 * and --dry-run in every command */
	static const struct pg_opt_moved moved[] = { { 'p', "--point NAME" },
						     { 'n', "--last N" },
						     { 0, NULL } };
	/* clang-format on */
	const struct pg_cmd_help help = {
		"baseline history",
		"[options]",
		"print each test point's recorded runs as a trend per metric",
		"Per metric: the oldest and newest value of the last N runs, the change, a\n"
		"sparkline ('|' where a change point starts a new level), the median and the\n"
		"run-to-run spread (1.4826 MAD / median), then each change point (a step, or a\n"
		"slow creep) with the commits between which it began. Change points are found\n"
		"on every point at once: a job's common offset is taken out first.",
		opts,
		moved
	};
	struct pg_strv pos = PG_STRV_INIT;
	struct pg_error err = PG_ERROR_INIT;
	int rc, exit_code = PG_EXIT_OK;

	if (pg_cmd_parse(&help, argc, argv, &pos, 0, 0, "no arguments", &exit_code))
		goto done;
	if (last < 1) {
		rc = pg_error_set(&err, PG_ECONFIG, "option '--last': must be at least 1");
		goto fail;
	}
	if ((rc = history_load(&h, &err)))
		goto fail;
	/* change points over every point: a job's offset is common to them */
	pg_history_analyse(&h.an, h.hs, h.n, NULL, &h.policy, 0, true);
	for (size_t i = 0; i < h.n; i++) {
		if (i)
			pg_buf_putc(&h.out, '\n');
		pg_history_trend(&h.out, h.hs, i, &h.an, h.metric, last);
	}
	fwrite(h.out.ptr, 1, h.out.len, stdout);
	goto done;
fail:
	exit_code = pg_cmd_fail("baseline history", &err);
done:
	history_release(&h);
	pg_strv_release(&pos);
	return exit_code;
}

static int baseline_changes(int argc, char **argv)
{
	struct history_args h = { .out = PG_BUF_INIT };
	long last = 0, fail_within = 0;
	const char *json_out = NULL;
	/* clang-format off */
	const struct pg_opt opts[] = {
		HISTORY_OPTS(h),
		{ PG_OPT_LONG, "last", 0, &last, "N", "only the last N jobs (default: all)" },
		{ PG_OPT_LONG, "fail-within", 0, &fail_within, "N",
		  "exit 1 when a step or creep that makes a gating metric worse began in the last "
		  "N jobs (default: 0, never)" },
		{ PG_OPT_STRING, "json", 0, &json_out, "FILE", "also write the changes as JSON" },
		{ PG_OPT_END },
	};
	/* clang-format on */
	const struct pg_cmd_help help = {
		"baseline changes", "[options]",
		"report steps and slow creep on main, for a nightly build",
		"Finds where the recorded main history changed level: steps (binary segmentation\n"
		"on a robust two-sample test, p < 0.001, 3 jobs or more on each side) and slow\n"
		"creep (Mann-Kendall trend, p < 0.001) of at least half a metric's tolerance, for\n"
		"every point and for every point at once (a job's common offset, which a PR\n"
		"gate absorbs). Prints a markdown table, worse changes of gating metrics first,\n"
		"each with the commits between which it began. With --fail-within N, exit 1\n"
		"when such a worse change began in the last N jobs.",
		opts
	};
	struct pg_strv pos = PG_STRV_INIT;
	struct pg_error err = PG_ERROR_INIT;
	size_t bad;
	int rc, exit_code = PG_EXIT_OK;

	if (pg_cmd_parse(&help, argc, argv, &pos, 0, 0, "no arguments", &exit_code))
		goto done;
	if (last < 0 || fail_within < 0) {
		rc = pg_error_set(&err, PG_ECONFIG, "option '--%s': must not be negative",
				  last < 0 ? "last" : "fail-within");
		goto fail;
	}
	if ((rc = history_load(&h, &err)))
		goto fail;
	pg_history_analyse(&h.an, h.hs, h.n, NULL, &h.policy, (size_t)last, true);
	bad = pg_history_changes_markdown(&h.out, h.hs, h.n, &h.an, &h.policy, h.gpu, h.metric,
					  (size_t)fail_within);
	if (json_out) {
		json_t *j = pg_history_changes_json(h.hs, h.n, &h.an, &h.policy, h.gpu, h.metric);
		struct pg_buf text = PG_BUF_INIT;
		pg_json_write(&text, j, 2);
		pg_buf_putc(&text, '\n');
		json_decref(j);
		rc = pg_file_write_atomic(json_out, text.ptr, text.len, &err);
		pg_buf_release(&text);
		if (rc)
			goto fail;
	}
	exit_code = pg_cmd_print(&h.out);
	if (fail_within > 0 && bad)
		exit_code = PG_EXIT_REGRESSION;
	goto done;
fail:
	exit_code = pg_cmd_fail("baseline changes", &err);
done:
	history_release(&h);
	pg_strv_release(&pos);
	return exit_code;
}

/* ------------------------------------------------------------------ */

/* A line as the listing shows it: at most 160 bytes. */
static void print_excerpt(FILE *f, const char *text)
{
	size_t n = strlen(text);
	fprintf(f, "    %.*s%s\n", n > 160 ? 157 : (int)n, text, n > 160 ? "..." : "");
}

static void print_problems(const struct pg_history_report *rep, bool repair)
{
	for (size_t i = 0; i < rep->n; i++) {
		const struct pg_history_problem *p = &rep->v[i];
		const char *action = !p->repaired ? (repair ? "kept" : "")
				     : repair     ? (p->line ? "dropped" : "removed")
				     : p->line    ? "repair drops it"
						  : "repair removes it";

		if (p->line)
			printf("%s:%d: %s: %s", p->file, p->line, p->kind, p->why);
		else
			printf("%s: %s: %s", p->file, p->kind, p->why);
		if (!repair && !p->repaired && !strcmp(p->kind, "newer format"))
			printf(" (upgrade perfgate; repair keeps it)");
		else if (*action)
			printf(" (%s)", action);
		putchar('\n');
		if (p->text)
			print_excerpt(stdout, p->text);
	}
}

/* Problems left that keep this perfgate from reading the history. */
static size_t blocking(const struct pg_history_report *rep, bool repaired)
{
	size_t n = 0;
	for (size_t i = 0; i < rep->n; i++)
		if (!repaired || !rep->v[i].repaired)
			n += strcmp(rep->v[i].kind, "lock") != 0;
	return n;
}

static int baseline_check_or_repair(int argc, char **argv, bool repair)
{
	const char *gpu = NULL, *repo = NULL, *ref = NULL;
	double timeout = 0;
	/* clang-format off */
	const struct pg_opt check_opts[] = {
		{ PG_OPT_STRING, "gpu", 0, &gpu, "GPU", "only this GPU's files (default: all)" },
		{ PG_OPT_STRING, "repo", 0, &repo, "PATH|URL",
		  "the history repository (default: the current one)" },
		{ PG_OPT_STRING, "ref", 0, &ref, "REF", "the history ref (default: refs/perfgate/history)" },
		{ PG_OPT_END },
	};
	const struct pg_opt repair_opts[] = {
		{ PG_OPT_STRING, "gpu", 0, &gpu, "GPU", "only this GPU's files (default: all)" },
		{ PG_OPT_STRING, "repo", 0, &repo, "PATH|URL",
		  "the history repository (default: the current one)" },
		{ PG_OPT_STRING, "ref", 0, &ref, "REF", "the history ref (default: refs/perfgate/history)" },
		{ PG_OPT_DOUBLE, "timeout", 0, &timeout, "SECONDS",
		  "keep trying this long while writers win (default: $PERFGATE_HISTORY_TIMEOUT, else 300)" },
		{ PG_OPT_END },
	};
	/* clang-format on */
	const struct pg_cmd_help check_help = {
		"baseline check", "[options]", "list what is wrong in the history in git",
		"Every <gpu>/<point>.jsonl line by line: unreadable lines (they stop the gate\n"
		"and every record of that point), lines in a newer format (upgrade perfgate),\n"
		"duplicates (a build recorded twice: the last counts), and for a local\n"
		"repository a stale ref lock. Exit 0 when there is nothing, 3 otherwise.",
		check_opts
	};
	const struct pg_cmd_help repair_help = {
		"baseline repair", "[options]",
		"drop what 'baseline check' finds that can be dropped, in one commit",
		"Drops unreadable lines and duplicates (keeping each build's last record),\n"
		"keeps newer-format lines, removes a stale lock, and prints every line it drops;\n"
		"the commit before the repair keeps them (git show <commit>:<file>). Written\n"
		"like a record: compare-and-swap or push, retried while other writers win.\n"
		"Exit 0 when this perfgate reads the whole history afterwards, 3 otherwise.",
		repair_opts
	};
	const char *name = repair ? "baseline repair" : "baseline check";
	struct pg_strv pos = PG_STRV_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_history_report rep = { 0 };
	struct pg_history_recorded rec = { 0 };
	struct pg_history_opts o = { 0 };
	char key[128];
	const char *refname;
	int rc, exit_code = PG_EXIT_OK;

	if (pg_cmd_parse(repair ? &repair_help : &check_help, argc, argv, &pos, 0, 0,
			 "no arguments", &exit_code))
		goto done;
	if (gpu)
		gpu = pg_gpu_key(key, sizeof(key), gpu);
	o.repo = repo;
	o.ref = ref;
	refname = ref ? ref : PG_HISTORY_DEFAULT_REF;
	rc = repair ? pg_history_repair(&rep, &rec, gpu, &o, timeout, &err)
		    : pg_history_check(&rep, gpu, &o, &err);
	for (size_t i = 0; i < rec.notes.n; i++)
		fprintf(stderr, "perfgate %s: %s\n", name, rec.notes.v[i]);
	if (rc)
		goto fail;
	if (!rep.tip[0] && !rep.n) {
		rc = pg_error_set(&err, PG_ENOTFOUND, "%s: no history (%s does not exist)",
				  repo ? repo : "the current repository", refname);
		goto fail;
	}
	if (rep.tip[0])
		printf("%s at %.12s: %zu GPU%s, %zu file%s, %zu record%s\n", refname, rep.tip,
		       rep.gpus, rep.gpus == 1 ? "" : "s", rep.files, rep.files == 1 ? "" : "s",
		       rep.records, rep.records == 1 ? "" : "s");
	print_problems(&rep, repair);
	if (repair && rec.commit[0])
		printf("repaired %s: dropped %zu line%s (history commit %.12s, %d attempt%s; "
		       "the lines are in %.12s)\n",
		       refname, rec.lines, rec.lines == 1 ? "" : "s", rec.commit, rec.attempts,
		       rec.attempts == 1 ? "" : "s", rep.tip);
	else if (repair)
		printf("nothing to drop\n");
	if (blocking(&rep, repair)) {
		size_t n = blocking(&rep, repair), fixable = repair ? 0 : rep.n_fixable;
		struct pg_buf why = PG_BUF_INIT;

		pg_buf_printf(&why, "%zu problem%s %s", n, n == 1 ? "" : "s",
			      repair ? "left" : "found");
		if (fixable)
			pg_buf_printf(&why, ", %zu that 'perfgate baseline repair' fixes", fixable);
		if (n > fixable)
			pg_buf_printf(
				&why, "%s%zu line%s in a newer format: upgrade perfgate to read %s",
				fixable ? ", " : ": ", n - fixable, n - fixable == 1 ? "" : "s",
				n - fixable == 1 ? "it" : "them");
		rc = pg_error_set(&err, PG_EINFRA, "%s", why.ptr);
		pg_buf_release(&why);
		goto fail;
	}
	if (!repair)
		printf("no problems\n");
	goto done;
fail:
	exit_code = pg_cmd_fail(name, &err);
done:
	pg_history_report_release(&rep);
	pg_history_recorded_release(&rec);
	pg_strv_release(&pos);
	return exit_code;
}

static int baseline_check(int argc, char **argv)
{
	return baseline_check_or_repair(argc, argv, false);
}

static int baseline_repair(int argc, char **argv)
{
	return baseline_check_or_repair(argc, argv, true);
}

int cmd_baseline(int argc, char **argv)
{
	/* clang-format off */
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} subs[] = {
		{ "update", baseline_update },
		{ "record", baseline_record },
		{ "show", baseline_show },
		{ "history", baseline_history },
		{ "changes", baseline_changes },
		{ "check", baseline_check },
		{ "repair", baseline_repair },
	};
	/* clang-format on */
	const size_t n_subs = sizeof(subs) / sizeof(subs[0]);
	const char *names[sizeof(subs) / sizeof(subs[0])];

	if (argc < 2) {
		fputs(baseline_usage, stderr);
		return PG_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		fputs(baseline_usage, stdout);
		return PG_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("perfgate %s\n", PERFGATE_VERSION);
		return PG_EXIT_OK;
	}
	for (size_t i = 0; i < n_subs; i++) {
		names[i] = subs[i].name;
		if (!strcmp(argv[1], subs[i].name))
			return subs[i].fn(argc - 1, argv + 1);
	}
	{
		const char *near = pg_nearest(argv[1], names, n_subs);
		fprintf(stderr,
			"perfgate baseline: unknown subcommand '%s'%s%s%s; see 'perfgate "
			"baseline --help'\n",
			argv[1], near ? " (did you mean '" : "", near ? near : "",
			near ? "'?)" : "");
	}
	return PG_EXIT_USAGE;
}
