/* A/B results in the history (baseline/history_ab.h): a line round-trips,
 * a bad line is named by file, line and key, a retried job replaces its
 * line; and in a real repository the A/B lines sit in <gpu>/ab/, where no
 * reader of the runs of main sees them: the records, the baseline and the
 * GPUs are the same with them as without, writers racing lose nothing. */
#include "testutil.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/jsonw.h"
#include "baseline/history.h"
#include "baseline/history_ab.h"
#include "baseline/history_check.h"
#include "baseline/history_io.h"
#include "gate/compare.h"
#include "results/metrics.h"

#include <git2.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define P 2 /* points */
#define M 2 /* metrics: output throughput, median TPOT */

static const char commit[] = "0123456789abcdef0123456789abcdef01234567";
static const char base_commit[] = "fedcba9876543210fedcba9876543210fedcba98";

/* An A/B run of two points: "serving_x_qps_4" regressed in throughput
 * (-5%), "a<b>" unchanged; the whole run's TPOT regressed. */
static void summary_init(struct pg_ab_summary *s)
{
	memset(s, 0, sizeof(*s));
	s->gpu = pg_xstrdup("H100");
	pg_strv_push(&s->points, "serving_x_qps_4");
	pg_strv_push(&s->points, "a<b>");
	s->n_metrics = M;
	s->metrics = pg_xcalloc(M, sizeof(*s->metrics));
	s->metrics[0] = pg_metric_by_id(PG_SUITE_SERVING, "output_throughput");
	s->metrics[1] = pg_metric_by_id(PG_SUITE_SERVING, "median_tpot_ms");
	s->tolerance = pg_xcalloc(M, sizeof(double));
	s->whole_tolerance = pg_xcalloc(M, sizeof(double));
	s->base = pg_xcalloc(M * P, sizeof(double));
	s->head = pg_xcalloc(M * P, sizeof(double));
	s->d.n_metrics = M;
	s->d.n_points = P;
	s->d.n_pairs = 3;
	s->d.points = pg_xcalloc(M * P, sizeof(*s->d.points));
	s->d.whole = pg_xcalloc(M, sizeof(*s->d.whole));
	for (size_t j = 0; j < M; j++) {
		s->tolerance[j] = j ? 0.02 : 0.01;
		s->whole_tolerance[j] = 0.03;
		s->d.whole[j] = (struct pg_ab_est){ .change = j ? 0.04 : 0.001,
						    .effect = j ? 0.04 : 0.001,
						    .lo = j ? 0.035 : -0.01,
						    .hi = j ? 0.045 : 0.012,
						    .n = 3,
						    .applies = true,
						    .verdict = j ? PG_AB_REGRESSED
								 : PG_AB_UNCHANGED };
		for (size_t p = 0; p < P; p++) {
			bool reg = j == 0 && p == 0;
			s->d.points[j * P + p] = (struct pg_ab_est){
				.change = reg ? -0.05 : 0.002,
				.effect = reg ? -0.051 : 0.001,
				.lo = reg ? -0.06 : -0.004,
				.hi = reg ? -0.042 : 0.006,
				.n = 3,
				.applies = true,
				.verdict = reg ? PG_AB_REGRESSED : PG_AB_UNCHANGED,
			};
		}
	}
	s->d.counts[PG_AB_REGRESSED] = 2;
	s->blocks = 6;
	s->max_blocks = 6;
}

static const struct pg_history_ab_meta meta = {
	commit, base_commit, "17", "2026-11-22T13:00:00Z", "https://bk/b/7", "fix"
};

START_TEST(a_line_round_trips)
{
	struct pg_ab_summary s;
	struct pg_buf text = PG_BUF_INIT;
	struct pg_history_ab h = { 0 };
	struct pg_error err = PG_ERROR_INIT;
	const struct pg_history_ab_rec *r;
	json_t *line;
	char why[256];

	summary_init(&s);
	line = pg_history_ab_line(&s, 0, NULL, &meta);
	ck_assert_ptr_nonnull(line);
	ck_assert_int_eq(pg_history_ab_classify(line, why, sizeof(why)), PG_HLINE_OK);
	/* a run's reader would refuse it: it is not a run of main */
	ck_assert_int_ne(pg_history_classify(line, why, sizeof(why)), PG_HLINE_OK);
	pg_json_write(&text, line, -1);
	pg_buf_putc(&text, '\n');
	json_decref(line);
	ck_assert_msg(pg_history_ab_parse(&h, "serving_x_qps_4", text.ptr, text.len, "t.jsonl",
					  &err) == 0,
		      "%s", err.msg);
	ck_assert_uint_eq(h.n, 1);
	r = &h.recs[0];
	ck_assert_str_eq(r->commit, commit);
	ck_assert_str_eq(r->base_commit, base_commit);
	ck_assert_str_eq(r->pr, "17");
	ck_assert_str_eq(r->date, "2026-11-22T13:00:00Z");
	ck_assert_str_eq(r->build_url, "https://bk/b/7");
	ck_assert_str_eq(r->branch, "fix");
	ck_assert_str_eq(r->outcome, "fail");
	ck_assert_int_eq(r->suite, PG_SUITE_SERVING);
	ck_assert_int_eq(r->blocks, 6);
	ck_assert_uint_eq(r->n_m, 2);
	ck_assert_str_eq(r->m[0].id, "output_throughput");
	ck_assert_ptr_eq(r->m[0].m, s.metrics[0]);
	ck_assert_double_eq(r->m[0].change, -0.05);
	ck_assert_double_eq(r->m[0].effect, -0.051);
	ck_assert_double_eq(r->m[0].lo, -0.06);
	ck_assert_double_eq(r->m[0].hi, -0.042);
	ck_assert_double_eq(r->m[0].tolerance, 0.01);
	ck_assert_int_eq(r->m[0].pairs, 3);
	ck_assert_int_eq(r->m[0].verdict, PG_AB_REGRESSED);
	ck_assert(r->m[1].has_whole);
	ck_assert_double_eq(r->m[1].whole_change, 0.04);
	ck_assert_double_eq(r->m[1].whole_tolerance, 0.03);
	ck_assert_int_eq(r->m[1].whole_verdict, PG_AB_REGRESSED);
	pg_history_ab_release(&h);
	/* a point no metric was decided at has no line */
	for (size_t j = 0; j < M; j++)
		s.d.points[j * P + 1].verdict = PG_AB_MISSING;
	ck_assert_ptr_null(pg_history_ab_line(&s, 1, NULL, &meta));
	pg_ab_summary_release(&s);
	pg_buf_release(&text);
}
END_TEST

START_TEST(a_bad_line_names_file_line_and_key)
{
	static const struct {
		const char *line, *msg;
	} cases[] = {
		{ "{\"format\": 1, \"kind\": \"ab\", \"commit\": \"c\", \"suite\": \"serving\", "
		  "\"metrics\": {\"output_throughput\": {\"change\": \"-5%\", \"pairs\": 3, "
		  "\"verdict\": \"regressed\"}}}",
		  "h.jsonl:2: unreadable A/B history line: metrics.output_throughput.change is a "
		  "string, not a number" },
		{ "{\"format\": 1, \"kind\": \"ab\", \"commit\": \"c\", \"suite\": \"serving\", "
		  "\"metrics\": {\"x\": {\"change\": 1, \"pairs\": 3, \"verdict\": \"regressed\", "
		  "\"whole_run\": {\"change\": 1, \"verdict\": 7}}}}",
		  "h.jsonl:2: unreadable A/B history line: metrics.x.whole_run.verdict is a number, "
		  "not a verdict" },
		{ "{\"format\": 1, \"kind\": \"ab\", \"commit\": \"c\", \"suite\": \"serving\", "
		  "\"metrics\": {\"x\": {\"change\": 1, \"pairs\": 3, \"verdict\": \"meh\"}}}",
		  "h.jsonl:2: a newer-format A/B history line: metrics.x.verdict 'meh' is unknown "
		  "to this perfgate (a newer format?)" },
		{ "{\"format\": 2, \"kind\": \"ab\"}",
		  "h.jsonl:2: a newer-format A/B history line: format 2, written by a newer "
		  "perfgate (this one reads format 1)" },
		{ "{\"format\": 1, \"commit\": \"c\", \"suite\": \"serving\", \"metrics\": {}}",
		  "h.jsonl:2: unreadable A/B history line: kind is missing, not \"ab\"" },
		{ "{\"format\": 1, \"kind\": \"ab\", \"commit\": 5}",
		  "h.jsonl:2: unreadable A/B history line: commit is a number, not a string" },
		{ "{\"format\": 1, \"kind\": \"ab\"",
		  "h.jsonl:2: unreadable A/B history line: '}' expected near end of file" },
	};
	struct pg_ab_summary s;
	json_t *good;

	summary_init(&s);
	good = pg_history_ab_line(&s, 0, NULL, &meta);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pg_buf text = PG_BUF_INIT;
		struct pg_history_ab h = { 0 };
		struct pg_error err = PG_ERROR_INIT;

		pg_json_write(&text, good, -1);
		pg_buf_printf(&text, "\n%s\n", cases[i].line);
		ck_assert_int_eq(pg_history_ab_parse(&h, "p", text.ptr, text.len, "h.jsonl", &err),
				 PG_EINFRA);
		ck_assert_str_eq(err.msg, cases[i].msg);
		pg_history_ab_release(&h);
		pg_buf_release(&text);
	}
	json_decref(good);
	pg_ab_summary_release(&s);
}
END_TEST

START_TEST(a_retried_job_replaces_its_line)
{
	struct pg_ab_summary s;
	struct pg_buf l1 = PG_BUF_INIT, l2 = PG_BUF_INIT, out = PG_BUF_INIT;
	struct pg_history_ab_meta other = meta;
	struct pg_history_scan sc;
	json_t *j;
	char why[256];
	int bad;

	summary_init(&s);
	j = pg_history_ab_line(&s, 0, NULL, &meta);
	pg_json_write(&l1, j, -1);
	json_decref(j);
	other.build_url = "https://bk/b/8";
	j = pg_history_ab_line(&s, 0, NULL, &other);
	pg_json_write(&l2, j, -1);
	json_decref(j);
	ck_assert_int_eq(pg_history_append_ab(&out, "", 0, l1.ptr, &bad, why, sizeof(why)), 0);
	{
		char *once = pg_xstrdup(out.ptr);
		pg_buf_reset(&out);
		ck_assert_int_eq(pg_history_append_ab(&out, once, strlen(once), l2.ptr, &bad, why,
						      sizeof(why)),
				 0);
		free(once);
	}
	{
		char *twice = pg_xstrdup(out.ptr);
		pg_buf_reset(&out);
		/* build 7 again: its line replaced */
		ck_assert_int_eq(pg_history_append_ab(&out, twice, strlen(twice), l1.ptr, &bad, why,
						      sizeof(why)),
				 1);
		free(twice);
	}
	pg_history_scan_ab(&sc, out.ptr, out.len, NULL);
	ck_assert_uint_eq(sc.records, 2);
	ck_assert_uint_eq(sc.n_bad, 0);
	pg_history_scan_release(&sc);
	/* a run's line in an A/B file is unreadable there: no line after it */
	{
		const char *run = "{\"format\": 1, \"suite\": \"serving\", \"metrics\": {}}\n";
		ck_assert_int_eq(pg_history_append_ab(&out, run, strlen(run), l1.ptr, &bad, why,
						      sizeof(why)),
				 -1);
	}
	ck_assert_int_eq(bad, 1);
	ck_assert_str_eq(why, "kind is missing, not \"ab\"");
	pg_buf_release(&l1);
	pg_buf_release(&l2);
	pg_buf_release(&out);
	pg_ab_summary_release(&s);
}
END_TEST

/* ---- the store ---- */

static char *bare_repo(const char *name)
{
	char *path = tu_tmpdir_path(name);
	git_repository *r = NULL;
	ck_assert_int_eq(git_repository_init(&r, path, 1), 0);
	git_repository_free(r);
	return path;
}

static json_t *serving_result(double throughput)
{
	json_t *o = json_pack("{s:i, s:i, s:i, s:f, s:f, s:f, s:{s:s, s:s, s:{s:i}}}",
			      "num_prompts", 64, "completed", 64, "failed", 0, "output_throughput",
			      throughput, "median_ttft_ms", 30.0, "median_tpot_ms", 8.0, "perfgate",
			      "suite", "serving", "test", "serving_x", "params", "qps", 4);
	ck_assert_ptr_nonnull(o);
	return o;
}

/* A run of main (build b) of the one point. */
static int record_main(const char *repo, int b, struct pg_error *err)
{
	json_t *res = serving_result(1000 + b % 3);
	struct pg_cmp_point p = { "serving_x_qps_4", PG_SUITE_SERVING, "ok", res, "H100", false };
	struct pg_history_recorded rec;
	char build[64], date[32];
	int rc;

	snprintf(build, sizeof(build), "https://bk/main/%d", b);
	snprintf(date, sizeof(date), "2026-11-%02dT12:00:00Z", b + 1);
	rc = pg_history_record(
		&(struct pg_cmp_run){ "test", &p, 1 },
		&(struct pg_history_record_opts){
			.repo = repo,
			.gpu = "H100",
			.timeout = 60,
			.meta = { .commit = commit, .date = date, .build_url = build } },
		&rec, err);
	pg_history_recorded_release(&rec);
	json_decref(res);
	return rc;
}

/* An A/B step (build b) of both points; the head's result of the first. */
static int record_ab(const char *repo, int b, struct pg_history_recorded *rec, struct pg_error *err)
{
	struct pg_ab_summary s;
	json_t *res = serving_result(950);
	struct pg_cmp_point p = { "serving_x_qps_4", PG_SUITE_SERVING, "ok", res, "H100", false };
	char build[64];
	int rc;

	summary_init(&s);
	snprintf(build, sizeof(build), "https://bk/pr/%d", b);
	rc = pg_history_record_ab(
		&s, &(struct pg_cmp_run){ "head", &p, 1 },
		&(struct pg_history_record_opts){ .repo = repo,
						  .gpu = "H100",
						  .timeout = 60,
						  .meta = { .commit = commit,
							    .date = "2026-11-30T12:00:00Z",
							    .build_url = build,
							    .branch = "fix" } },
		base_commit, "17", rec, err);
	json_decref(res);
	pg_ab_summary_release(&s);
	return rc;
}

/* What the gate and trends read of the runs of main: the records, and the
 * baseline built from them, described. */
static void main_view(const char *repo, struct pg_history **hs, size_t *n, struct pg_buf *desc)
{
	struct pg_error err = PG_ERROR_INIT;
	struct pg_policy policy;
	struct pg_baseline base = PG_BASELINE_INIT;
	struct pg_strv gpus = PG_STRV_INIT;

	ck_assert_msg(pg_history_read(hs, n, "H100", NULL,
				      &(struct pg_history_opts){ .repo = repo }, &err) == 0,
		      "%s", err.msg);
	ck_assert_int_eq(pg_history_gpus(&gpus, &(struct pg_history_opts){ .repo = repo }, &err),
			 0);
	ck_assert_uint_eq(gpus.n, 1);
	ck_assert_str_eq(gpus.v[0], "H100");
	pg_policy_init(&policy);
	base.gpu = pg_xstrdup("H100");
	base.kind = pg_xstrdup("git");
	pg_history_baseline_build(&base, *hs, *n, NULL, &policy);
	pg_baseline_describe(desc, &base, &policy);
	pg_baseline_release(&base);
	pg_policy_release(&policy);
	pg_strv_release(&gpus);
}

START_TEST(ab_lines_never_reach_the_baseline)
{
	char *repo = bare_repo("h.git");
	struct pg_error err = PG_ERROR_INIT;
	struct pg_history_recorded rec;
	struct pg_history *before = NULL, *after = NULL;
	struct pg_history_ab *ab = NULL;
	struct pg_history_report rep;
	struct pg_buf d1 = PG_BUF_INIT, d2 = PG_BUF_INIT;
	size_t n1, n2, n_ab;
	char why[256];

	for (int b = 0; b < 6; b++)
		ck_assert_msg(record_main(repo, b, &err) == 0, "%s", err.msg);
	main_view(repo, &before, &n1, &d1);
	ck_assert_msg(record_ab(repo, 1, &rec, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(rec.lines, 2);
	ck_assert_str_eq(rec.measured, commit);
	pg_history_recorded_release(&rec);
	/* a retried A/B job replaces its lines */
	ck_assert_int_eq(record_ab(repo, 1, &rec, &err), 0);
	ck_assert_uint_eq(rec.replaced, 2);
	pg_history_recorded_release(&rec);
	main_view(repo, &after, &n2, &d2);
	ck_assert_uint_eq(n1, 1);
	ck_assert_uint_eq(n2, 1);
	ck_assert_msg(pg_history_same(&before[0], &after[0], why, sizeof(why)), "%s", why);
	ck_assert_str_eq(d1.ptr, d2.ptr);
	/* and they are there, beside it */
	ck_assert_msg(pg_history_read_ab(&ab, &n_ab, "H100",
					 &(struct pg_history_opts){ .repo = repo }, &err) == 0,
		      "%s", err.msg);
	ck_assert_uint_eq(n_ab, 2);
	ck_assert_str_eq(ab[0].point, "a<b>");
	ck_assert_str_eq(ab[1].point, "serving_x_qps_4");
	ck_assert_uint_eq(ab[1].n, 1);
	ck_assert_str_eq(ab[1].recs[0].pr, "17");
	ck_assert_str_eq(ab[1].recs[0].test, "serving_x");
	/* check reads them as A/B lines: nothing wrong */
	ck_assert_int_eq(
		pg_history_check(&rep, NULL, &(struct pg_history_opts){ .repo = repo }, &err), 0);
	ck_assert_uint_eq(rep.n, 0);
	ck_assert_uint_eq(rep.files, 3);
	ck_assert_uint_eq(rep.records, 8);
	pg_history_report_release(&rep);
	for (size_t i = 0; i < n_ab; i++)
		pg_history_ab_release(&ab[i]);
	free(ab);
	pg_history_release(&before[0]);
	pg_history_release(&after[0]);
	free(before);
	free(after);
	pg_buf_release(&d1);
	pg_buf_release(&d2);
	free(repo);
}
END_TEST

/* A/B steps and runs of main recording at once, released together after
 * reading the tip: every line lands, once. */
START_TEST(ab_and_main_writers_race_and_lose_nothing)
{
	enum { WRITERS = 6 };
	char *repo = bare_repo("h.git"), *barrier = tu_tmpdir_path("barrier");
	struct pg_buf url = PG_BUF_INIT, spec = PG_BUF_INIT;
	struct pg_history *hs = NULL;
	struct pg_history_ab *ab = NULL;
	struct pg_error err = PG_ERROR_INIT;
	size_t n = 0, n_ab = 0;
	pid_t pids[WRITERS];

	ck_assert_int_eq(mkdir(barrier, 0755), 0);
	pg_buf_printf(&url, "file://%s", repo);
	pg_buf_printf(&spec, "%s:%d", barrier, WRITERS);
	setenv("PERFGATE_HISTORY_TEST_BARRIER", spec.ptr, 1);
	for (int i = 0; i < WRITERS; i++) {
		pids[i] = fork();
		ck_assert_int_ge(pids[i], 0);
		if (pids[i] == 0) {
			struct pg_history_recorded rec = { 0 };
			int rc = i % 2 ? record_ab(url.ptr, i, &rec, &err)
				       : record_main(url.ptr, i, &err);
			if (rc)
				fprintf(stderr, "writer %d: %s\n", i, err.msg);
			pg_history_recorded_release(&rec);
			pg_buf_release(&url);
			pg_buf_release(&spec);
			free(barrier);
			free(repo);
			_exit(rc ? 1 : 0);
		}
	}
	unsetenv("PERFGATE_HISTORY_TEST_BARRIER");
	for (int i = 0; i < WRITERS; i++) {
		int status;
		ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
		ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	ck_assert_int_eq(pg_history_read(&hs, &n, "H100", NULL,
					 &(struct pg_history_opts){ .repo = repo }, &err),
			 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(hs[0].n, WRITERS / 2);
	ck_assert_int_eq(pg_history_read_ab(&ab, &n_ab, "H100",
					    &(struct pg_history_opts){ .repo = repo }, &err),
			 0);
	ck_assert_uint_eq(n_ab, 2);
	ck_assert_uint_eq(ab[0].n, WRITERS / 2);
	ck_assert_uint_eq(ab[1].n, WRITERS / 2);
	pg_history_release(&hs[0]);
	free(hs);
	for (size_t i = 0; i < n_ab; i++)
		pg_history_ab_release(&ab[i]);
	free(ab);
	pg_buf_release(&url);
	pg_buf_release(&spec);
	free(barrier);
	free(repo);
}
END_TEST

static Suite *history_ab_suite(void)
{
	Suite *s = suite_create("history_ab");
	TCase *lines = tcase_create("lines"), *store = tcase_create("store");

	tcase_add_test(lines, a_line_round_trips);
	tcase_add_test(lines, a_bad_line_names_file_line_and_key);
	tcase_add_test(lines, a_retried_job_replaces_its_line);
	suite_add_tcase(s, lines);
	tcase_add_checked_fixture(store, tu_tmpdir_setup, tu_tmpdir_teardown);
	tcase_set_timeout(store, 120);
	tcase_add_test(store, ab_lines_never_reach_the_baseline);
	tcase_add_test(store, ab_and_main_writers_race_and_lose_nothing);
	suite_add_tcase(s, store);
	return s;
}

int main(void)
{
	int rc;

	git_libgit2_init();
	/* the repositories made here are the tests' own: no user config */
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	rc = tu_run_suite(history_ab_suite());
	git_libgit2_shutdown();
	return rc;
}
