/* The run history: the rules for its lines (baseline/history_check.h), which
 * points may become baselines, and the store in git (baseline/history_io.h)
 * on real repositories: compare-and-swap, file:// URLs, writers racing
 * from several processes, a stale lock, one record per build. */
#include "testutil.h"

#include "base/buf.h"
#include "base/error.h"
#include "baseline/history.h"
#include "baseline/history_check.h"
#include "baseline/history_io.h"
#include "gate/compare.h"
#include "results/result.h"

#include <fcntl.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A history line as perfgate writes it, for build `build` (NULL: none). */
static char *line_for(const char *build, double value)
{
	struct pg_buf b = PG_BUF_INIT;
	pg_buf_printf(&b,
		      "{\"format\": 1, \"commit\": \"0123456789abcdef0123456789abcdef01234567\", "
		      "\"date\": \"2026-11-22T13:00:00Z\", \"build_url\": %s%s%s, \"suite\": "
		      "\"serving\", \"point\": \"p\", \"metrics\": {\"output_throughput\": [%g]}}",
		      build ? "\"" : "", build ? build : "null", build ? "\"" : "", value);
	return pg_buf_detach(&b);
}

/* ---- lines ---- */

START_TEST(classify_lines)
{
	static const struct {
		const char *json;
		enum pg_hline_kind kind;
		const char *why;
	} cases[] = {
		{ "{\"suite\": \"serving\", \"metrics\": {\"output_throughput\": [1, 2.5]}}",
		  PG_HLINE_OK, NULL },
		{ "{\"suite\": \"latency\", \"metrics\": {\"x\": [null, 3]}, \"format\": 1}",
		  PG_HLINE_OK, NULL },
		{ "[1, 2]", PG_HLINE_UNREADABLE, "not a JSON object" },
		{ "{\"suite\": \"serving\"}", PG_HLINE_UNREADABLE, "no \"metrics\"" },
		{ "{\"metrics\": {}}", PG_HLINE_UNREADABLE, "no \"suite\"" },
		{ "{\"format\": \"two\", \"suite\": \"serving\", \"metrics\": {}}",
		  PG_HLINE_UNREADABLE, "not a version number" },
		{ "{\"format\": 2, \"suite\": \"serving\", \"metrics\": {}}", PG_HLINE_NEWER,
		  "history format 2, written by a newer perfgate" },
		{ "{\"suite\": \"serving\", \"metrics\": {\"output_throughput\": {\"values\": [1]}}}",
		  PG_HLINE_NEWER, "metrics.output_throughput is an object, not a list of numbers" },
		{ "{\"suite\": \"serving\", \"metrics\": {\"ttft\": [\"1\"]}}", PG_HLINE_NEWER,
		  "a list with something other than numbers" },
		{ "{\"suite\": \"embedding\", \"metrics\": {}}", PG_HLINE_NEWER,
		  "suite 'embedding' is unknown" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *o = json_loads(cases[i].json, 0, NULL);
		char why[256] = "";

		ck_assert_ptr_nonnull(o);
		ck_assert_int_eq(pg_history_classify(o, why, sizeof(why)), cases[i].kind);
		if (cases[i].why)
			ck_assert_msg(strstr(why, cases[i].why), "%s: %s", cases[i].json, why);
		json_decref(o);
	}
	{
		char why[64];
		ck_assert_int_eq(pg_history_classify(NULL, why, sizeof(why)), PG_HLINE_UNREADABLE);
	}
}
END_TEST

START_TEST(same_run_is_the_same_build)
{
	char *a = line_for("https://bk/b/1", 10), *b = line_for("https://bk/b/1", 12),
	     *c = line_for("https://bk/b/2", 10), *d = line_for(NULL, 10), *e = line_for(NULL, 10),
	     *f = line_for(NULL, 11);
	json_t *ja = json_loads(a, 0, NULL), *jb = json_loads(b, 0, NULL),
	       *jc = json_loads(c, 0, NULL), *jd = json_loads(d, 0, NULL),
	       *je = json_loads(e, 0, NULL), *jf = json_loads(f, 0, NULL);

	ck_assert(pg_history_same_run(ja, jb));  /* a retried job, other numbers */
	ck_assert(!pg_history_same_run(ja, jc)); /* another build */
	ck_assert(!pg_history_same_run(ja, jd)); /* one without a build */
	ck_assert(pg_history_same_run(jd, je));  /* the same results recorded twice */
	ck_assert(!pg_history_same_run(jd, jf)); /* another run of the same commit */
	json_decref(ja);
	json_decref(jb);
	json_decref(jc);
	json_decref(jd);
	json_decref(je);
	json_decref(jf);
	free(a);
	free(b);
	free(c);
	free(d);
	free(e);
	free(f);
}
END_TEST

START_TEST(scan_finds_and_repairs)
{
	char *l1 = line_for("b1", 1), *l2 = line_for("b2", 2), *l3 = line_for("b1", 3);
	struct pg_buf text = PG_BUF_INIT, fixed = PG_BUF_INIT, want = PG_BUF_INIT;
	struct pg_history_scan sc;
	const char *newer = "{\"format\": 7, \"suite\": \"serving\", \"metrics\": {}}";

	/* 1: b1 (replaced by line 6), 2: b2, 3: blank, 4: truncated, 5: newer, 6: b1 again */
	pg_buf_printf(&text, "%s\n%s\n\n{\"commit\": \"01\n%s\n%s", l1, l2, newer, l3);
	pg_history_scan(&sc, text.ptr, text.len, &fixed);
	ck_assert_uint_eq(sc.n_bad, 3);
	ck_assert_int_eq(sc.bad[0].line, 1);
	ck_assert_int_eq(sc.bad[0].kind, PG_HLINE_DUPLICATE);
	ck_assert_str_eq(sc.bad[0].why, "build b1 is recorded again on line 6");
	ck_assert_str_eq(sc.bad[0].text, l1);
	ck_assert_int_eq(sc.bad[1].line, 4);
	ck_assert_int_eq(sc.bad[1].kind, PG_HLINE_UNREADABLE);
	ck_assert_msg(!strncmp(sc.bad[1].why, "not JSON: ", 10), "%s", sc.bad[1].why);
	ck_assert_int_eq(sc.bad[2].line, 5);
	ck_assert_int_eq(sc.bad[2].kind, PG_HLINE_NEWER);
	ck_assert_uint_eq(sc.records, 3);
	ck_assert_uint_eq(sc.dropped, 2);
	ck_assert_uint_eq(sc.kept_newer, 1);
	/* the repair keeps b2, the newer line and b1's last record, in order */
	pg_buf_printf(&want, "%s\n%s\n%s\n", l2, newer, l3);
	ck_assert_str_eq(fixed.ptr, want.ptr);
	pg_history_scan_release(&sc);

	/* a clean file has nothing to say */
	pg_buf_reset(&fixed);
	pg_history_scan(&sc, want.ptr, want.len, &fixed);
	ck_assert_uint_eq(sc.n_bad, 1); /* the newer line, which a repair keeps */
	ck_assert_uint_eq(sc.dropped, 0);
	ck_assert_str_eq(fixed.ptr, want.ptr);
	pg_history_scan_release(&sc);
	pg_buf_release(&text);
	pg_buf_release(&fixed);
	pg_buf_release(&want);
	free(l1);
	free(l2);
	free(l3);
}
END_TEST

START_TEST(append_replaces_the_same_build)
{
	char *l1 = line_for("b1", 1), *l2 = line_for("b2", 2), *again = line_for("b1", 5);
	struct pg_buf text = PG_BUF_INIT, out = PG_BUF_INIT, want = PG_BUF_INIT;
	char why[256];
	int bad;

	pg_buf_printf(&text, "%s\n%s", l1, l2); /* no newline at the end: fine */
	ck_assert_int_eq(pg_history_append(&out, text.ptr, text.len, again, &bad, why, sizeof(why)),
			 1);
	pg_buf_printf(&want, "%s\n%s\n", l2, again);
	ck_assert_str_eq(out.ptr, want.ptr);

	/* another build adds */
	pg_buf_reset(&out);
	ck_assert_int_eq(pg_history_append(&out, want.ptr, want.len, l1, &bad, why, sizeof(why)),
			 1);
	pg_buf_reset(&out);
	{
		char *l3 = line_for("b3", 3);
		ck_assert_int_eq(
			pg_history_append(&out, want.ptr, want.len, l3, &bad, why, sizeof(why)), 0);
		free(l3);
	}

	/* nothing is appended after a broken line */
	pg_buf_reset(&text);
	pg_buf_printf(&text, "%s\nnot json\n", l1);
	pg_buf_reset(&out);
	ck_assert_int_eq(pg_history_append(&out, text.ptr, text.len, l2, &bad, why, sizeof(why)),
			 -1);
	ck_assert_int_eq(bad, 2);
	ck_assert_msg(strstr(why, "not JSON"), "%s", why);
	pg_buf_release(&text);
	pg_buf_release(&out);
	pg_buf_release(&want);
	free(l1);
	free(l2);
	free(again);
}
END_TEST

START_TEST(parse_names_the_line)
{
	struct pg_history h = { 0 };
	struct pg_error err = PG_ERROR_INIT;
	char *l1 = line_for("b1", 1);
	struct pg_buf text = PG_BUF_INIT;

	pg_buf_printf(&text, "%s\n{\"suite\": \"serving\", \"metrics\": {\"x\": {\"p50\": 1}}}\n",
		      l1);
	ck_assert_int_eq(pg_history_parse(&h, "p", text.ptr, text.len, "H100/p.jsonl", &err),
			 PG_EINFRA);
	ck_assert_msg(
		!strcmp(err.msg,
			"H100/p.jsonl:2: a newer-format history line: metrics.x is an object, "
			"not a list of numbers (written by a newer perfgate?)"),
		"%s", err.msg);
	pg_history_release(&h);
	pg_buf_reset(&text);
	pg_buf_printf(&text, "%s\n{\"commit\": \"0123", l1);
	ck_assert_int_eq(pg_history_parse(&h, "p", text.ptr, text.len, "H100/p.jsonl", &err),
			 PG_EINFRA);
	ck_assert_msg(!strncmp(err.msg, "H100/p.jsonl:2: unreadable history line: ", 41), "%s",
		      err.msg);
	pg_history_release(&h);
	pg_buf_release(&text);
	free(l1);
}
END_TEST

/* ---- which points may become baselines ---- */

START_TEST(incomplete_results)
{
	static const struct {
		const char *json;
		const char *why; /* NULL: complete */
	} cases[] = {
		{ "{\"num_prompts\": 64, \"completed\": 64, \"failed\": 0}", NULL },
		{ "{\"num_prompts\": 64, \"completed\": 32, \"failed\": 32}",
		  "32 of 64 requests failed" },
		{ "{\"num_prompts\": 64, \"completed\": 60, \"failed\": 0}",
		  "only 60 of 64 requests completed" },
		{ "{\"num_requests\": 100, \"failed\": 3}", "3 requests failed" },
		{ "{\"num_requests\": 100, \"failed\": 1}", "1 request failed" },
		/* throughput: the command decides its request count */
		{ "{\"num_requests\": 100, \"perfgate\": {\"params\": {\"num_prompts\": 1000}}}",
		  NULL },
		{ "{\"latencies\": [1, 2], \"failed_iterations\": 2}", "2 iterations failed" },
		{ "{\"num_prompts\": 10, \"completed\": 10, \"failed\": 0, \"perfgate\": {\"repeats\": "
		  "[{\"completed\": 10, \"failed\": 0}, {\"completed\": 7, \"failed\": 3}]}}",
		  "run 2 of 2: 3 of 10 requests failed" },
		{ "{\"perfgate\": {\"incomplete\": \"said so\"}}", "said so" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *o = json_loads(cases[i].json, 0, NULL);
		struct pg_buf why = PG_BUF_INIT;
		bool inc = pg_result_json_incomplete(o, &why);

		ck_assert_msg(inc == (cases[i].why != NULL), "%s", cases[i].json);
		if (cases[i].why)
			ck_assert_str_eq(why.ptr, cases[i].why);
		json_decref(o);
		pg_buf_release(&why);
	}
	ck_assert(!pg_result_json_incomplete(NULL, NULL));
}
END_TEST

START_TEST(recordable_points)
{
	json_t *ok = json_loads("{\"num_prompts\": 8, \"completed\": 8, \"failed\": 0}", 0, NULL);
	json_t *bad = json_loads("{\"num_prompts\": 8, \"completed\": 4, \"failed\": 4}", 0, NULL);
	struct pg_cmp_point p = { "p", PG_SUITE_SERVING, "ok", ok, NULL, false };
	struct pg_buf why = PG_BUF_INIT;

	ck_assert(pg_history_point_recordable(&p, &why));
	ck_assert_uint_eq(why.len, 0);
	p.result = bad;
	ck_assert(!pg_history_point_recordable(&p, &why));
	ck_assert_str_eq(why.ptr, "incomplete: 4 of 8 requests failed");
	pg_buf_reset(&why);
	p.result = ok;
	p.status = "error";
	ck_assert(!pg_history_point_recordable(&p, &why));
	ck_assert_str_eq(why.ptr, "status error");
	pg_buf_reset(&why);
	p.status = "ok";
	p.probe = true;
	ck_assert(!pg_history_point_recordable(&p, &why));
	ck_assert_str_eq(why.ptr, "an SLA-search probe");
	json_decref(ok);
	json_decref(bad);
	pg_buf_release(&why);
}
END_TEST

/* ---- the store ---- */

static json_t *serving_result(double throughput, int failed)
{
	json_t *o = json_pack("{s:i, s:i, s:i, s:f, s:f, s:{s:s, s:s, s:{s:i}}}", "num_prompts", 64,
			      "completed", 64 - failed, "failed", failed, "output_throughput",
			      throughput, "median_ttft_ms", 30.0, "perfgate", "suite", "serving",
			      "test", "serving_x", "params", "qps", 4);
	ck_assert_ptr_nonnull(o);
	return o;
}

static const char commit[] = "0123456789abcdef0123456789abcdef01234567";

/* Record one point (throughput t, `failed` requests) for build. */
static int record(const char *repo, const char *build, double t, int failed,
		  struct pg_history_recorded *out, struct pg_error *err)
{
	json_t *res = serving_result(t, failed);
	struct pg_cmp_point p = { "serving_x_qps_4", PG_SUITE_SERVING, "ok", res, "H100", false };
	int rc = pg_history_record(
		&(struct pg_cmp_run){ "test", &p, 1 },
		&(struct pg_history_record_opts){ .repo = repo,
						  .gpu = "H100",
						  .timeout = 30,
						  .meta = { .commit = commit,
							    .date = "2026-11-22T13:00:00Z",
							    .build_url = build } },
		out, err);
	json_decref(res);
	return rc;
}

static char *bare_repo(const char *name)
{
	char *path = tu_tmpdir_path(name);
	git_repository *r = NULL;
	ck_assert_int_eq(git_repository_init(&r, path, 1), 0);
	git_repository_free(r);
	return path;
}

/* The lines of the point's file in the history at repo. */
static size_t history_lines(const char *repo, struct pg_history *h)
{
	struct pg_history *hs = NULL;
	size_t n = 0, lines;
	struct pg_error err = PG_ERROR_INIT;

	ck_assert_msg(pg_history_read(&hs, &n, "H100", "serving_x_qps_4",
				      &(struct pg_history_opts){ .repo = repo }, &err) == 0,
		      "%s", err.msg);
	ck_assert_uint_eq(n, 1);
	lines = hs[0].n;
	if (h)
		*h = hs[0];
	else
		pg_history_release(&hs[0]);
	free(hs);
	return lines;
}

START_TEST(record_replaces_a_retried_build)
{
	char *repo = bare_repo("h.git");
	struct pg_history_recorded rec;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_history h;

	ck_assert_msg(record(repo, "https://bk/b/1", 100, 0, &rec, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(rec.lines, 1);
	ck_assert_uint_eq(rec.replaced, 0);
	ck_assert_int_eq(rec.attempts, 1);
	ck_assert_uint_eq(strlen(rec.commit), 40);
	ck_assert_str_eq(rec.measured, commit);
	pg_history_recorded_release(&rec);
	/* the same build again (a retried job): replaced, not added */
	ck_assert_int_eq(record(repo, "https://bk/b/1", 101, 0, &rec, &err), 0);
	ck_assert_uint_eq(rec.replaced, 1);
	pg_history_recorded_release(&rec);
	ck_assert_int_eq(record(repo, "https://bk/b/2", 102, 0, &rec, &err), 0);
	pg_history_recorded_release(&rec);
	ck_assert_uint_eq(history_lines(repo, &h), 2);
	ck_assert_str_eq(h.recs[0].build_url, "https://bk/b/1");
	ck_assert_double_eq(json_real_value(json_array_get(
				    json_object_get(h.recs[0].metrics, "output_throughput"), 0)),
			    101);
	pg_history_release(&h);
	free(repo);
}
END_TEST

START_TEST(incomplete_points_are_not_recorded)
{
	char *repo = bare_repo("h.git");
	struct pg_history_recorded rec;
	struct pg_error err = PG_ERROR_INIT;

	ck_assert_int_eq(record(repo, "https://bk/b/1", 100, 32, &rec, &err), PG_ECONFIG);
	ck_assert_msg(strstr(err.msg, "nothing to record"), "%s", err.msg);
	ck_assert_uint_eq(rec.left_out.n, 1);
	ck_assert_str_eq(rec.left_out.v[0],
			 "serving_x_qps_4: incomplete: 32 of 64 requests failed");
	pg_history_recorded_release(&rec);
	free(repo);
}
END_TEST

START_TEST(file_urls_are_paths)
{
	char *repo = bare_repo("with space.git");
	struct pg_buf url = PG_BUF_INIT;
	struct pg_history_recorded rec;
	struct pg_error err = PG_ERROR_INIT;
	char *p;

	/* percent-encoded, as URLs are */
	pg_buf_puts(&url, "file://");
	for (p = repo; *p; p++)
		pg_buf_puts(&url, *p == ' ' ? "%20" : (char[]){ *p, 0 });
	ck_assert_msg(record(url.ptr, "https://bk/b/1", 100, 0, &rec, &err) == 0, "%s", err.msg);
	pg_history_recorded_release(&rec);
	/* no temporary clone, no push: the ref is in the repository itself */
	ck_assert_uint_eq(history_lines(repo, NULL), 1);
	pg_buf_release(&url);
	free(repo);
}
END_TEST

/* Writers in separate processes, released together after reading the tip
 * (the test barrier), through a file:// URL: the transport that would
 * force its update. Every record must be there, once. */
START_TEST(racing_writers_lose_nothing)
{
	enum { WRITERS = 6 };
	char *repo = bare_repo("h.git"), *barrier = tu_tmpdir_path("barrier");
	struct pg_buf url = PG_BUF_INIT, spec = PG_BUF_INIT;
	pid_t pids[WRITERS];
	struct pg_history h;
	int max_attempts = 0;

	ck_assert_int_eq(mkdir(barrier, 0755), 0);
	pg_buf_printf(&url, "file://%s", repo);
	pg_buf_printf(&spec, "%s:%d", barrier, WRITERS);
	setenv("PERFGATE_HISTORY_TEST_BARRIER", spec.ptr, 1);
	for (int i = 0; i < WRITERS; i++) {
		pids[i] = fork();
		ck_assert_int_ge(pids[i], 0);
		if (pids[i] == 0) {
			struct pg_history_recorded rec;
			struct pg_error err = PG_ERROR_INIT;
			char build[64];
			int rc;

			snprintf(build, sizeof(build), "https://bk/b/%d", i);
			rc = record(url.ptr, build, 100 + i, 0, &rec, &err);
			if (rc)
				fprintf(stderr, "writer %d: %s\n", i, err.msg);
			_exit(rc ? 100 : rec.attempts);
		}
	}
	unsetenv("PERFGATE_HISTORY_TEST_BARRIER");
	for (int i = 0; i < WRITERS; i++) {
		int status;
		ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
		ck_assert(WIFEXITED(status));
		ck_assert_int_lt(WEXITSTATUS(status), 100);
		if (WEXITSTATUS(status) > max_attempts)
			max_attempts = WEXITSTATUS(status);
	}
	/* they collided: someone had to try again */
	ck_assert_int_gt(max_attempts, 1);
	ck_assert_uint_eq(history_lines(repo, &h), WRITERS);
	for (size_t i = 0; i < h.n; i++)
		for (size_t k = i + 1; k < h.n; k++)
			ck_assert_str_ne(h.recs[i].build_url, h.recs[k].build_url);
	pg_history_release(&h);
	pg_buf_release(&url);
	pg_buf_release(&spec);
	free(barrier);
	free(repo);
}
END_TEST

static void age_file(const char *path, int seconds)
{
	struct timespec ts[2];
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= seconds;
	ts[1] = ts[0];
	ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
}

/* The age a stale-lock message gives ("..., 30 s old: ..."), or -1: a
 * slow machine (valgrind) may take a second or more between aging the
 * lock and reading it. */
static long said_age(const char *msg)
{
	const char *end = strstr(msg, " s old"), *start = end;

	if (!end)
		return -1;
	while (start > msg && start[-1] >= '0' && start[-1] <= '9')
		start--;
	return start < end ? strtol(start, NULL, 10) : -1;
}

START_TEST(a_stale_lock_is_removed)
{
	char *repo = bare_repo("h.git"), *lock = tu_tmpdir_path("h.git/refs/perfgate/history.lock");
	struct pg_history_recorded rec;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_history_report rep;

	ck_assert_int_eq(record(repo, "https://bk/b/1", 100, 0, &rec, &err), 0);
	pg_history_recorded_release(&rec);
	/* a writer killed between creating the lock and renaming it */
	tu_write_file(lock, "");
	age_file(lock, 30);
	ck_assert_int_eq(
		pg_history_check(&rep, NULL, &(struct pg_history_opts){ .repo = repo }, &err), 0);
	ck_assert_uint_eq(rep.n, 1);
	ck_assert_str_eq(rep.v[0].kind, "stale lock");
	ck_assert_str_eq(rep.v[0].file, "refs/perfgate/history.lock");
	ck_assert_msg(said_age(rep.v[0].why) >= 30 && said_age(rep.v[0].why) < 90, "%s",
		      rep.v[0].why);
	pg_history_report_release(&rep);

	ck_assert_msg(record(repo, "https://bk/b/2", 101, 0, &rec, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(rec.notes.n, 1);
	ck_assert_msg(
		strstr(rec.notes.v[0], "removed a stale lock, refs/perfgate/history.lock in ") &&
			said_age(rec.notes.v[0]) >= 30 && said_age(rec.notes.v[0]) < 90,
		"%s", rec.notes.v[0]);
	ck_assert_int_ge(rec.attempts, 2);
	pg_history_recorded_release(&rec);
	ck_assert_int_ne(access(lock, F_OK), 0);
	ck_assert_uint_eq(history_lines(repo, NULL), 2);
	free(lock);
	free(repo);
}
END_TEST

/* A lock that a live perfgate writer may hold (it holds the guard) is
 * never taken away, however old: the record gives up at its deadline,
 * naming the lock and its age. */
START_TEST(a_held_lock_is_left_alone)
{
	char *repo = bare_repo("h.git"), *lock = tu_tmpdir_path("h.git/refs/perfgate/history.lock"),
	     *guard = tu_tmpdir_path("h.git/perfgate-history.flock");
	struct pg_history_recorded rec;
	struct pg_error err = PG_ERROR_INIT;
	int fd;
	json_t *res = serving_result(100, 0);
	struct pg_cmp_point p = { "serving_x_qps_4", PG_SUITE_SERVING, "ok", res, "H100", false };

	ck_assert_int_eq(record(repo, "https://bk/b/1", 100, 0, &rec, &err), 0);
	pg_history_recorded_release(&rec);
	tu_write_file(lock, "");
	age_file(lock, 30);
	fd = open(guard, O_RDWR | O_CREAT, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(flock(fd, LOCK_SH), 0);
	ck_assert_int_eq(pg_history_record(&(struct pg_cmp_run){ "test", &p, 1 },
					   &(struct pg_history_record_opts){
						   .repo = repo,
						   .gpu = "H100",
						   .timeout = 1.0,
						   .meta = { .commit = commit,
							     .build_url = "https://bk/b/2" } },
					   &rec, &err),
			 PG_EINFRA);
	ck_assert_msg(strstr(err.msg, "still locked after") &&
			      strstr(err.msg, "refs/perfgate/history.lock is 3") &&
			      strstr(err.msg, "another program holds it"),
		      "%s", err.msg);
	pg_history_recorded_release(&rec);
	ck_assert_int_eq(access(lock, F_OK), 0);
	close(fd);
	json_decref(res);
	free(guard);
	free(lock);
	free(repo);
}
END_TEST

START_TEST(repair_drops_duplicates_of_old_records)
{
	char *repo = bare_repo("h.git");
	struct pg_history_recorded rec;
	struct pg_history_report rep;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_history_opts o = { .repo = repo };

	ck_assert_int_eq(record(repo, "https://bk/b/1", 100, 0, &rec, &err), 0);
	pg_history_recorded_release(&rec);
	ck_assert_int_eq(pg_history_check(&rep, NULL, &o, &err), 0);
	ck_assert_uint_eq(rep.n, 0);
	ck_assert_uint_eq(rep.gpus, 1);
	ck_assert_uint_eq(rep.files, 1);
	ck_assert_uint_eq(rep.records, 1);
	pg_history_report_release(&rep);
	/* a clean history: nothing to commit */
	ck_assert_int_eq(pg_history_repair(&rep, &rec, NULL, &o, 10, &err), 0);
	ck_assert_str_eq(rec.commit, "");
	ck_assert_uint_eq(rep.n, 0);
	pg_history_report_release(&rep);
	pg_history_recorded_release(&rec);
	/* another GPU only: none of this GPU's files */
	ck_assert_int_eq(pg_history_check(&rep, "A100", &o, &err), 0);
	ck_assert_uint_eq(rep.files, 0);
	pg_history_report_release(&rep);
	free(repo);
}
END_TEST

static Suite *history_suite(void)
{
	Suite *s = suite_create("history");
	TCase *lines = tcase_create("lines"), *store = tcase_create("store");

	tcase_add_test(lines, classify_lines);
	tcase_add_test(lines, same_run_is_the_same_build);
	tcase_add_test(lines, scan_finds_and_repairs);
	tcase_add_test(lines, append_replaces_the_same_build);
	tcase_add_test(lines, parse_names_the_line);
	tcase_add_test(lines, incomplete_results);
	tcase_add_test(lines, recordable_points);
	suite_add_tcase(s, lines);

	tcase_add_checked_fixture(store, tu_tmpdir_setup, tu_tmpdir_teardown);
	tcase_set_timeout(store, 120);
	tcase_add_test(store, record_replaces_a_retried_build);
	tcase_add_test(store, incomplete_points_are_not_recorded);
	tcase_add_test(store, file_urls_are_paths);
	tcase_add_test(store, racing_writers_lose_nothing);
	tcase_add_test(store, a_stale_lock_is_removed);
	tcase_add_test(store, a_held_lock_is_left_alone);
	tcase_add_test(store, repair_drops_duplicates_of_old_records);
	suite_add_tcase(s, store);
	return s;
}

int main(void)
{
	int rc;

	git_libgit2_init();
	/* the repositories made here are the tests' own: no user config */
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	rc = tu_run_suite(history_suite());
	git_libgit2_shutdown();
	return rc;
}
