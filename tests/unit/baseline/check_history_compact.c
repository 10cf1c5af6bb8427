/* Compact histories (baseline/history.h, pg_history_parse_compact): the
 * records perfgate trends reads are those of pg_history_parse and
 * pg_history_slim, value for value, on lines written by the library's own
 * writer and on lines its scanner must hand back (escapes, keys given
 * twice, numbers it would round differently, errors). */
#include "testutil.h"

#include "base/buf.h"
#include "base/error.h"
#include "base/jsonw.h"
#include "baseline/history.h"
#include "gate/compare.h"
#include "results/metrics.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Both ways, the compact one with pool (a new one when NULL); the same
 * outcome (want_rc, or any when -1), the same error, the same records,
 * and a column only for a metric a record has a value of. */
static void check_same_in(const char *text, const struct pg_policy *policy, int want_rc,
			  struct pg_history_pool *in)
{
	struct pg_history_pool *pool = in ? in : pg_history_pool_new();
	struct pg_history slow = { 0 }, fast = { 0 };
	struct pg_error e1 = PG_ERROR_INIT, e2 = PG_ERROR_INIT;
	int r1 = pg_history_parse(&slow, "p", text, strlen(text), "H100/p.jsonl", &e1);
	int r2 = pg_history_parse_compact(&fast, "p", text, strlen(text), "H100/p.jsonl", policy,
					  pool, &e2);
	char why[256];
	size_t nm;
	const struct pg_metric *all = pg_metrics_all(&nm);

	if (want_rc != -1)
		ck_assert_int_eq(r1, want_rc);
	ck_assert_int_eq(r2, r1);
	if (r1) {
		ck_assert_str_eq(e2.msg, e1.msg);
	} else {
		pg_history_slim(&slow, policy);
		ck_assert_msg(pg_history_same(&slow, &fast, why, sizeof(why)), "%s in %.300s", why,
			      text);
		for (size_t k = 0; k < fast.n; k++)
			ck_assert_ptr_nonnull(fast.recs[k].slot);
		for (size_t m = 0; fast.n && m < nm; m++) {
			bool any = false;
			if (fast.recs[0].slot[m] == PG_HISTORY_NO_SLOT)
				continue;
			for (size_t k = 0; k < fast.n; k++)
				any |= !isnan(pg_history_rec_value(&fast.recs[k], &all[m]));
			ck_assert_msg(any, "a column for %s, never given", all[m].id);
		}
	}
	pg_history_release(&slow);
	pg_history_release(&fast);
	if (!in)
		pg_history_pool_free(pool);
}

static void check_same(const char *text, const struct pg_policy *policy, int want_rc)
{
	check_same_in(text, policy, want_rc, NULL);
}

/* A run's line for a point, as `perfgate baseline record` writes it. */
static void add_line(struct pg_buf *out, int run, int point, double scale)
{
	json_t *result = json_pack(
		"{s:f, s:f, s:f, s:f, s:i, s:{s:s, s:s, s:s, s:s, s:{s:f, s:i}}}",
		"output_throughput", 2418.1 * scale + run * 0.37, "mean_ttft_ms",
		16.2 / scale + run * 0.013, "p99_itl_ms", 9.1 * scale, "request_throughput",
		3.8 * scale, "completed", 100, "perfgate", "suite", "serving", "status", "ok",
		"test", point % 2 ? "serving_a" : "serving_\"b\"", "host", "agent-1",
		"run_started_at", "2026-11-22T13:00:00Z", "params", "qps", 0.5 * (point + 1),
		"max_concurrency", 16);
	struct pg_cmp_point p = { "serving_x", PG_SUITE_SERVING, "ok", result, "8xH100", false };
	char commit[41], date[32], url[64];
	json_t *line;

	snprintf(commit, sizeof(commit), "%040d", run);
	snprintf(date, sizeof(date), "2026-11-%02dT13:00:00Z", 1 + run % 28);
	snprintf(url, sizeof(url), "https://buildkite.com/o/p/builds/%d", 1000 + run);
	line = pg_history_line(&p, &(struct pg_history_meta){ commit, date, url, "main" });
	ck_assert_ptr_nonnull(line);
	pg_json_write(out, line, -1);
	pg_buf_putc(out, '\n');
	json_decref(line);
	json_decref(result);
}

START_TEST(written_lines_read_the_same)
{
	struct pg_policy policy;
	struct pg_buf text = PG_BUF_INIT;

	pg_policy_init(&policy);
	for (int point = 0; point < 3; point++) {
		pg_buf_reset(&text);
		for (int run = 0; run < 40; run++)
			add_line(&text, run, point, 1 + 0.1 * point);
		check_same(text.ptr, NULL, 0);
		check_same(text.ptr, &policy, 0);
	}
	pg_policy_release(&policy);
	pg_buf_release(&text);
}
END_TEST

START_TEST(the_pool_shares_strings)
{
	struct pg_history_pool *pool = pg_history_pool_new();
	struct pg_history a = { 0 }, b = { 0 };
	struct pg_buf t1 = PG_BUF_INIT, t2 = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;

	add_line(&t1, 3, 0, 1);
	add_line(&t2, 3, 1, 2);
	ck_assert_int_eq(pg_history_parse_compact(&a, "a", t1.ptr, t1.len, "a", NULL, pool, &err),
			 0);
	ck_assert_int_eq(pg_history_parse_compact(&b, "b", t2.ptr, t2.len, "b", NULL, pool, &err),
			 0);
	ck_assert_uint_eq(a.n, 1);
	ck_assert_uint_eq(b.n, 1);
	ck_assert_ptr_eq(a.recs[0].commit, b.recs[0].commit);
	ck_assert_ptr_eq(a.recs[0].build_url, b.recs[0].build_url);
	ck_assert_ptr_eq(a.recs[0].slot, b.recs[0].slot);
	ck_assert(pg_history_rec_value(&a.recs[0], pg_metric_by_id(PG_SUITE_SERVING,
								   "output_throughput")) > 2000);
	pg_history_release(&a);
	pg_history_release(&b);
	/* an empty file (an empty buffer has no text at all) */
	ck_assert_int_eq(pg_history_parse_compact(&a, "a", NULL, 0, "a", NULL, pool, &err), 0);
	ck_assert_uint_eq(a.n, 0);
	pg_history_release(&a);
	pg_history_pool_free(pool);
	pg_buf_release(&t1);
	pg_buf_release(&t2);
}
END_TEST

#define HEAD "{\"commit\": \"c1\", \"date\": \"2026-11-22T13:00:00Z\", \"suite\": \"serving\", "

/* Lines the scanner hands to pg_history_parse, and lines it reads: either
 * way the same records or the same error. */
static const char *const lines[] = {
	/* read by the scanner */
	HEAD "\"metrics\": {\"output_throughput\": [1, 2.5, null, 3e2, -0, 0.1]}}\n",
	HEAD "\"metrics\": {\"mean_ttft_ms\": [null], \"p99_tpot_ms\": [1]}}\n",
	HEAD "\"qps\": 4, \"max_concurrency\": null, \"repeats\": 3, \"metrics\": {}}\n",
	HEAD "\"qps\": 1.5e-3, \"test\": \"\", \"run\": null, \"extra\": true, \"metrics\": "
	     "{\"mean_ttft_ms\": [], \"unknown\": [1], \"output_throughput\": [null]}}\r\n\n",
	"  {\"suite\":\"serving\",\"metrics\":{\"mean_ttft_ms\":[12.25,12.5]}}  \r\n"
	"{\"suite\": \"serving\", \"metrics\": {\"mean_ttft_ms\": [123456789012345678]}}",
	HEAD "\"metrics\": {\"output_throughput\": [1.00000000000000011102230246251565]}}\n",
	/* handed back */
	HEAD "\"test\": \"a\\\"b\", \"metrics\": {\"mean_ttft_ms\": [1]}}\n",
	HEAD "\"test\": \"caf\xc3\xa9\", \"metrics\": {\"mean_ttft_ms\": [1]}}\n",
	HEAD "\"qps\": \"4\", \"metrics\": {\"mean_ttft_ms\": [1]}}\n",
	HEAD "\"metrics\": {\"mean_ttft_ms\": [1], \"mean_ttft_ms\": [2]}}\n",
	HEAD "\"commit\": \"c2\", \"metrics\": {\"mean_ttft_ms\": [1]}}\n",
	HEAD "\"metrics\": {\"mean_ttft_ms\": [1234567890123456789]}}\n",
	HEAD "\"metrics\": {\"mean_ttft_ms\": [1e-400, 2]}}\n",
	HEAD "\"max_concurrency\": 1.5, \"metrics\": {}}\n",
	HEAD "\"branch\": {\"a\": 1}, \"metrics\": {}}\n",
	HEAD "\"metrics\": {\"mean_ttft_ms\": [1]}}\n" HEAD "\"metrics\": {}}\n",
};

/* Lines both refuse, with the same message. */
static const char *const bad[] = {
	HEAD "\"metrics\": {\"mean_ttft_ms\": [1e400]}}\n",
	HEAD "\"metrics\": {\"mean_ttft_ms\": [01]}}\n",
	HEAD "\"metrics\": {\"mean_ttft_ms\": [99999999999999999999]}}\n",
	HEAD "\"metrics\": {\"mean_ttft_ms\": {\"a\": 1}}}\n",
	HEAD "\"format\": 2, \"metrics\": {}}\n",
	HEAD "\"format\": 1.0, \"metrics\": {}}\n",
	HEAD "\"metrics\": {}}\n{\"suite\": \"serving\"}\n",
	"{\"suite\": \"tpu\", \"metrics\": {}}\n",
	HEAD "\"metrics\": {}} x\n",
	/* a string as the line before gave it, then more bytes of it */
	HEAD "\"gpu\": \"1xH100\", \"metrics\": {}}\n" HEAD
	     "\"gpu\": \"1xH100X, \"metrics\": {}}\n",
	/* no comma between members */
	HEAD "\"metrics\": {\"mean_ttft_ms\": [1] \"p99_tpot_ms\": [1]}}\n",
	HEAD "\"gpu\": \"x\" \"metrics\": {}}\n",
	/* a number of digits and a colon, a slash */
	HEAD "\"metrics\": {\"mean_ttft_ms\": [12:5], \"p99_tpot_ms\": [1]}}\n",
	HEAD "\"metrics\": {\"mean_ttft_ms\": [12/5], \"p99_tpot_ms\": [1]}}\n",
	HEAD "\"metrics\": {\"mean_ttft_ms\": [01.5], \"p99_tpot_ms\": [1]}}\n",
	"\t\n",
	"[1]\n",
};

START_TEST(edge_lines_read_the_same)
{
	struct pg_policy policy;

	pg_policy_init(&policy);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		check_same(lines[i], NULL, 0);
		check_same(lines[i], &policy, 0);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		check_same(bad[i], &policy, PG_EINFRA);
	pg_policy_release(&policy);
}
END_TEST

/* Reals as jansson reads them (strtod), through the scanner's own
 * conversion where it is exact and strtod elsewhere: a sweep of digit
 * counts and exponents, each as one record's value. */
START_TEST(reals_read_as_jansson_reads_them)
{
	struct pg_buf text = PG_BUF_INIT;
	uint64_t state = 3;

	for (int i = 0; i < 20000; i++) {
		unsigned long long m;
		int digits, point, ex;
		char num[64];
		state = state * 6364136223846793005ull + 1442695040888963407ull;
		digits = 1 + (int)(state >> 59) % 19;
		m = (state >> 3) % 10000000000000000000ull;
		for (int d = 19; d > digits; d--)
			m /= 10;
		point = (int)((state >> 40) % (unsigned)(digits + 1));
		ex = (int)((state >> 20) % 61) - 30;
		snprintf(num, sizeof(num), "%s%llu", i % 5 ? "" : "-", m);
		{
			size_t l = strlen(num), sign = i % 5 ? 0 : 1;
			/* a point inside the digits, never first */
			if (point && (size_t)point < l - sign) {
				size_t at = l - (size_t)point;
				memmove(num + at + 1, num + at, l - at + 1);
				num[at] = '.';
			}
		}
		if (i % 3)
			snprintf(num + strlen(num), sizeof(num) - strlen(num), "e%d", ex);
		pg_buf_printf(&text,
			      "{\"suite\": \"serving\", \"qps\": %s, \"metrics\": "
			      "{\"mean_ttft_ms\": [%s]}}\n",
			      num, num);
		if (text.len > 50000) {
			check_same(text.ptr, NULL, 0);
			pg_buf_reset(&text);
		}
	}
	check_same(text.ptr, NULL, 0);
	pg_buf_release(&text);
}
END_TEST

/* pg_history_number against strtod, bit for bit: its fast path (digits
 * up to 2^53, powers of ten up to 22) and what it hands to strtod. */
static void check_number(const char *num)
{
	double want, got;
	char *end;

	/* an integer as jansson reads it, a long long ("-0" is 0) */
	if (!strpbrk(num, ".eE"))
		want = (double)strtoll(num, &end, 10);
	else
		want = strtod(num, &end);
	ck_assert_msg(*end == '\0', "%s", num);
	ck_assert_msg(pg_history_number(num, strlen(num), &got), "%s not read", num);
	ck_assert_msg(!memcmp(&got, &want, sizeof(got)), "%s: %.17g, strtod %.17g", num, got, want);
}

START_TEST(numbers_read_as_strtod_reads_them)
{
	static const char *const fixed[] = {
		"0",
		"-0",
		"-0.0",
		"0.1",
		"2418.1234",
		"9007199254740992",
		"9007199254740993.0",
		"9007199254740993e-5",
		"4.9406564584124654e-324",
		"2.2250738585072014e-308",
		"1.7976931348623157e308",
		"1e22",
		"1e23",
		"123456789012345678",
		"0.000000000000000000001",
		"8.98846567431158e307",
		"1.00000000000000011102230246251565",
		"3.0E+10",
		"7e-22",
	};
	uint64_t state = 7;
	char num[64];

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		check_number(fixed[i]);
	for (int i = 0; i < 60000; i++) {
		uint64_t bits;
		double d;
		state = state * 6364136223846793005ull + 1442695040888963407ull;
		bits = state ^ (state >> 29);
		/* any finite double, and values of the size perfgate records */
		if (i % 2) {
			memcpy(&d, &bits, sizeof(d));
			if (!isfinite(d))
				continue;
		} else {
			d = (double)(bits >> 11) / (double)(1ull << 53) *
			    pow(10, (double)((int)(state >> 58) - 20));
		}
		switch (i % 6) {
		case 0:
			snprintf(num, sizeof(num), "%.17g", d);
			break;
		case 1:
			snprintf(num, sizeof(num), "%.4f", fmod(d, 1e9));
			break;
		case 2:
			snprintf(num, sizeof(num), "%.15g", d);
			break;
		case 3:
			snprintf(num, sizeof(num), "%.16e", d);
			break;
		case 4:
			snprintf(num, sizeof(num), "%lld",
				 (long long)(bits >> (10 + (state >> 60))) * (i % 4 ? 1 : -1));
			break;
		default:
			snprintf(num, sizeof(num), "%llu.%llue%d",
				 (unsigned long long)(bits >> (40 + (state >> 61))),
				 (unsigned long long)(state >> 50), (int)(state >> 59) - 16);
			break;
		}
		check_number(num);
	}
}
END_TEST

/* Strings of every length with a quote, a backslash, a control byte or a
 * byte above 0x7f at every place: the scanner's words of eight bytes
 * stop where its bytes would, and hand back what they must. */
START_TEST(strings_read_the_same_at_every_offset)
{
	static const char special[] = { '"', '\\', '\x1f', '\x7f', '\x80', '\t', ' ', '~' };
	struct pg_buf text = PG_BUF_INIT;

	for (size_t len = 0; len < 20; len++)
		for (size_t at = 0; at <= len; at++)
			for (size_t c = 0; c < sizeof(special); c++) {
				char str[32];
				memset(str, 'a' + (char)(len % 26), len);
				str[len] = '\0';
				if (at < len)
					str[at] = special[c];
				pg_buf_reset(&text);
				pg_buf_printf(&text,
					      "{\"suite\": \"serving\", \"test\": \"%s\", "
					      "\"%s\": 1, \"metrics\": {\"mean_ttft_ms\": [1]}}\n",
					      str, str);
				check_same(text.ptr, NULL, -1);
			}
	pg_buf_release(&text);
}
END_TEST

/* The lines of one file, record by record: mostly a line like the one
 * before (the scanner reads keys and strings as the line before gave
 * them), now and then one that differs in a place that line's bytes
 * would still match a prefix of. */
static const char *const ids[] = {
	"request_throughput",
	"output_throughput",
	"total_token_throughput",
	"mean_ttft_ms",
	"median_ttft_ms",
	"p99_ttft_ms",
	"mean_tpot_ms",
	"median_tpot_ms",
	"p99_tpot_ms",
	"mean_itl_ms",
	"median_itl_ms",
	"p99_itl_ms",
	"mean_e2el_ms",
	"median_e2el_ms",
	"p99_e2el_ms",
	"failed",
};

static void add_bench_line(struct pg_buf *out, int run, int vary, uint64_t *state)
{
	static const char *const tests[] = { "serving_a", "serving_ab", "serving_b", "serving_" };

	pg_buf_printf(out, "{\"format\": 1, \"commit\": \"%040d\", ", run / 3);
	pg_buf_printf(out,
		      vary == 0 ? "\"date\" : \"2026-01-%02dT00:00:00Z\", "
				: "\"date\": \"2026-01-%02dT00:00:00Z\", ",
		      1 + run % 28);
	pg_buf_printf(out, "\"build_url\": \"https://buildkite.com/org/perf/builds/%d\", ",
		      1000 + run / 2);
	pg_buf_printf(out, "\"branch\": \"main\", \"gpu\": \"%s\", ",
		      vary == 1   ? "1xH10"
		      : vary == 2 ? "1xH1000"
				  : "1xH100");
	pg_buf_printf(out, "\"suite\": \"%s\", \"point\": \"p\", \"test\": \"%s\", ",
		      vary == 3 ? "throughput" : "serving",
		      tests[vary >= 4 && vary < 8 ? vary - 4 : 0]);
	if (vary == 8)
		pg_buf_printf(out, "\"qps\": 1, \"max_concurrency\": null, ");
	else
		pg_buf_printf(out, "\"max_concurrency\": %d, \"qps\": %d.5, ", run % 3, run);
	pg_buf_printf(out, "\"repeats\": 1, \"run\": %s, \"metrics\": {",
		      vary == 9    ? "null"
		      : vary == 10 ? "\"\""
				   : "\"agent-0@2026-01-01T00:00:00Z\"");
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		/* another metric's id in this place (one as long, differing in
		 * its middle), one as long that differs in its last byte, one of
		 * its first bytes, one of another suite (on
		 * a throughput line, one of that suite), white space elsewhere, no
		 * value, two values (and "failed", an id of both suites) */
		size_t id = vary == 11 && i < 2                ? 1 - i
			    : vary == 17 && (i == 3 || i == 6) ? 9 - i
							       : i;
		double x;
		*state = *state * 6364136223846793005ull + 1442695040888963407ull;
		x = (double)(*state >> 40) / (double)(1u << 14) / pow(10, (double)(*state >> 62));
		pg_buf_printf(out, "%s\"%s\"%s", i ? ", " : "",
			      vary == 12 && i == 3   ? "mean_ttft_mx"
			      : vary == 16 && i == 4 ? "median_ttft_m"
			      : vary == 13 && i == 3 ? "mean_latency_ms"
			      : vary == 3 && i == 0  ? "requests_per_second"
						     : ids[id],
			      vary == 14 && i == 5 ? ":[" : ": [");
		if (vary == 15 && i == 7)
			pg_buf_printf(out, "]");
		else if (vary == 15 && i == 8)
			pg_buf_printf(out, "%.4f, %.4f]", x, -x);
		else
			pg_buf_printf(out, "%.*f]", (int)(*state >> 61), x);
	}
	pg_buf_printf(out, "}}\n");
}

/* Every record equal to the one pg_history_parse reads, and the same
 * strings one copy in the pool: files of lines alike but every seventh,
 * which differs in one way (a file for each: a line the scanner hands
 * back hands back the whole file). */
START_TEST(a_file_reads_the_same_line_by_line)
{
	struct pg_history_pool *pool = pg_history_pool_new();
	struct pg_history fast = { 0 };
	struct pg_error err = PG_ERROR_INIT;
	struct pg_policy policy;
	struct pg_buf text = PG_BUF_INIT;
	uint64_t state = 11;

	pg_policy_init(&policy);
	for (int vary = 0; vary < 18; vary++) {
		pg_buf_reset(&text);
		for (int run = 0; run < 60; run++)
			add_bench_line(&text, run, run % 7 == 3 ? vary : -1, &state);
		check_same(text.ptr, NULL, 0);
		check_same(text.ptr, &policy, 0);
	}
	pg_buf_reset(&text);
	for (int run = 0; run < 600; run++)
		add_bench_line(&text, run, -1, &state);
	ck_assert_int_eq(
		pg_history_parse_compact(&fast, "p", text.ptr, text.len, "p", NULL, pool, &err), 0);
	ck_assert_uint_eq(fast.n, 600);
	for (size_t k = 1; k < fast.n; k++) {
		const struct pg_history_rec *a = &fast.recs[k - 1], *b = &fast.recs[k];
		ck_assert(!strcmp(a->commit, b->commit) == (a->commit == b->commit));
		ck_assert(!strcmp(a->build_url, b->build_url) == (a->build_url == b->build_url));
		ck_assert(!strcmp(a->gpu, b->gpu) == (a->gpu == b->gpu));
		ck_assert(!strcmp(a->test, b->test) == (a->test == b->test));
		ck_assert_ptr_eq(b->date, fast.recs[k % 28].date);
	}
	pg_history_release(&fast);
	pg_history_pool_free(pool);
	pg_policy_release(&policy);
	pg_buf_release(&text);
}
END_TEST

/* Files read with one pool, as a GPU's are: the k-th line of one has
 * the strings of the k-th line of the file before, or others, or those
 * and more bytes. */
START_TEST(files_read_the_same_one_after_another)
{
	struct pg_history_pool *pool = pg_history_pool_new();
	struct pg_buf text = PG_BUF_INIT;
	uint64_t state = 13;

	for (int file = 0; file < 6; file++) {
		pg_buf_reset(&text);
		for (int run = 0; run < 30; run++)
			add_bench_line(&text, run + (file == 2 && run > 10),
				       run % 5 == 1 ? file : -1, &state);
		check_same_in(text.ptr, NULL, 0, pool);
	}
	/* a value the same line of the file before had, then more of it */
	check_same_in(HEAD "\"gpu\": \"1xH100\", \"metrics\": {}}\n" HEAD
			   "\"gpu\": \"1xH100\", \"metrics\": {}}\n",
		      NULL, 0, pool);
	check_same_in(HEAD "\"gpu\": \"A100\", \"metrics\": {}}\n" HEAD
			   "\"gpu\": \"1xH100X, \"metrics\": {}}\n",
		      NULL, PG_EINFRA, pool);
	pg_history_pool_free(pool);
	pg_buf_release(&text);
}
END_TEST

/* Numbers of the size perfgate writes, read a word at a time: every
 * count of digits either side of the point, leading and trailing zeros,
 * a sign, what ends them. As jansson reads them, in a line, and as
 * strtod does. */
START_TEST(short_numbers_read_as_strtod_reads_them)
{
	static const char *const ends[] = { "]", "e1]", "E-2]", ".]", "0]", " ]", ":1]", "/1]" };
	struct pg_buf text = PG_BUF_INIT;
	uint64_t state = 5;

	for (int i = 0; i < 40000; i++) {
		char num[48];
		size_t l = 0;
		int ints, fracs;
		state = state * 6364136223846793005ull + 1442695040888963407ull;
		ints = 1 + (int)(state >> 61);   /* 1-8 */
		fracs = (int)(state >> 57 & 15); /* 0-15, past the word */
		if (i % 3 == 0)
			num[l++] = '-';
		for (int d = 0; d < ints; d++)
			num[l++] = (char)('0' +
					  (d == 0 && i % 4 == 0 ? 0 : (state >> (3 * d)) % 10));
		if (fracs) {
			num[l++] = '.';
			for (int d = 0; d < fracs; d++)
				num[l++] = (char)('0' + (state >> (2 * d + 5)) % (i % 5 ? 10 : 2));
		}
		num[l] = '\0';
		if (strspn(num, "-0123456789.") == l && (num[i % 3 == 0] != '0' || ints == 1))
			check_number(num);
		/* (not last: eight bytes to read after the number) */
		pg_buf_printf(&text,
			      "{\"suite\": \"serving\", \"metrics\": {\"mean_ttft_ms\": [%s%s, "
			      "\"p99_tpot_ms\": [1]}}\n",
			      num, ends[i % 6 ? 0 : (size_t)(state >> 20) % 8]);
		if (text.len > 50000) {
			check_same(text.ptr, NULL, -1);
			pg_buf_reset(&text);
		}
	}
	check_same(text.ptr, NULL, -1);
	pg_buf_release(&text);
}
END_TEST

static Suite *compact_suite(void)
{
	Suite *s = suite_create("history_compact");
	TCase *tc = tcase_create("read");

	tcase_add_test(tc, written_lines_read_the_same);
	tcase_add_test(tc, the_pool_shares_strings);
	tcase_add_test(tc, edge_lines_read_the_same);
	tcase_add_test(tc, reals_read_as_jansson_reads_them);
	tcase_add_test(tc, numbers_read_as_strtod_reads_them);
	tcase_add_test(tc, strings_read_the_same_at_every_offset);
	tcase_add_test(tc, a_file_reads_the_same_line_by_line);
	tcase_add_test(tc, files_read_the_same_one_after_another);
	tcase_add_test(tc, short_numbers_read_as_strtod_reads_them);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(compact_suite());
}
