/* The trends site's pages (trends/trends.h), from histories parsed here:
 * the gate's window and band on a chart, a step, escaping of names from
 * users, unique file names, the overview's order, and slimmed records. */
#include "testutil.h"

#include "base/buf.h"
#include "base/error.h"
#include "base/filename.h"
#include "baseline/history.h"
#include "baseline/history_ab.h"
#include "gate/compare.h"
#include "report/charts.h"
#include "trends/trends.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define JOBS 12

/* 12 jobs of a point; from job `step` on (never: JOBS) its output
 * throughput is 10% lower. */
static void history_of(struct pg_history *h, const char *point, int step)
{
	struct pg_buf text = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;

	for (int j = 0; j < JOBS; j++) {
		double wiggle = 1 + 0.002 * ((j * 7) % 5 - 2);
		double tput = (j >= step ? 900 : 1000) * wiggle;
		pg_buf_printf(
			&text,
			"{\"format\": 1, \"commit\": \"%02d23456789abcdef0123456789abcdef0123456\", "
			"\"date\": \"2026-11-%02dT12:00:00Z\", \"build_url\": \"https://ci.example/b/%d\", "
			"\"gpu\": \"1xH100\", \"suite\": \"serving\", \"point\": \"p\", \"test\": \"t\", "
			"\"repeats\": 3, \"metrics\": {\"output_throughput\": [%g, %g, %g], "
			"\"median_ttft_ms\": [%g, %g, %g], \"median_tpot_ms\": [8, 8, 8], "
			"\"mean_tpot_ms\": [8, 8, 8]}}\n",
			j, j + 1, j, tput, tput * 1.001, tput * 0.999, 20 * wiggle, 20 * wiggle,
			20 * wiggle);
	}
	ck_assert_int_eq(pg_history_parse(h, point, text.ptr, text.len, "test", &err), 0);
	pg_buf_release(&text);
}

struct site {
	struct pg_history hs[3];
	struct pg_history_analysis an;
	struct pg_policy policy;
	struct pg_baseline base;
	struct pg_trends_gpu t;
};

/* Points "a b" (a step at job 6), "a_b" and a name that is markup, in
 * name order as pg_history_read gives them. */
static void site_init(struct site *s)
{
	memset(s, 0, sizeof(*s));
	history_of(&s->hs[0], "a b", 6);
	history_of(&s->hs[1], "a_b", JOBS);
	history_of(&s->hs[2], "x<img src=x onerror=alert(1)>", JOBS);
	pg_policy_init(&s->policy);
	pg_history_analyse(&s->an, s->hs, 3, NULL, &s->policy, 0, true);
	s->base.gpu = strdup("H100");
	s->base.kind = strdup("git");
	pg_history_baseline_build(&s->base, s->hs, 3, NULL, &s->policy);
	pg_baseline_sort(&s->base);
	s->t = (struct pg_trends_gpu){ .gpu = "H100",
				       .source = "refs/perfgate/history",
				       .hs = s->hs,
				       .n = 3,
				       .a = &s->an,
				       .base = &s->base,
				       .policy = &s->policy };
	pg_trends_gpu_prepare(&s->t);
}

static void site_release(struct site *s)
{
	pg_trends_gpu_release(&s->t);
	pg_baseline_release(&s->base);
	pg_history_analysis_release(&s->an);
	pg_policy_release(&s->policy);
	for (int i = 0; i < 3; i++)
		pg_history_release(&s->hs[i]);
}

START_TEST(point_page_draws_the_gates_window_band_and_step)
{
	struct site s;
	struct pg_buf page = PG_BUF_INIT;

	site_init(&s);
	pg_trends_point(&page, &s.t, 0);
	/* the window starts at the step: the six runs since it */
	ck_assert_ptr_nonnull(strstr(page.ptr, "baseline window: 6 runs"));
	ck_assert_ptr_nonnull(strstr(page.ptr, "fails beyond −2.5%"));
	ck_assert_ptr_nonnull(strstr(page.ptr, "<title>step 10.0% worse, between 0523456789ab and "
					       "0623456789ab (2026-11-07)</title>"));
	ck_assert_ptr_nonnull(strstr(page.ptr, "since the change at 0623456789ab"));
	/* gated metrics charted, a warn-only one that cannot fail is not */
	ck_assert_ptr_nonnull(strstr(page.ptr, "<h3>Median TTFT (ms)"));
	ck_assert_ptr_null(strstr(page.ptr, "<h3>Mean TPOT"));
	ck_assert_ptr_nonnull(strstr(page.ptr, "<a href=\"https://ci.example/b/11\">build</a>"));
	/* every run's tooltip from one script's data: no per-run markers */
	ck_assert_ptr_null(strstr(page.ptr, "<circle"));
	ck_assert_ptr_nonnull(strstr(page.ptr, "<script>var D=[{n:[1,2,"));
	ck_assert_ptr_nonnull(strstr(page.ptr, "b:\"https://ci.example/b/\",u:[\""));
	ck_assert_ptr_nonnull(strstr(page.ptr, "0523456789ab 0623456789ab"));
	ck_assert_ptr_nonnull(strstr(page.ptr, " data-m=\"0\" data-f=\""));
	ck_assert_ptr_null(strstr(strstr(page.ptr, "<script") + 1, "<script"));
	pg_buf_release(&page);
	site_release(&s);
}
END_TEST

/* The history's strings in the script's data cannot end it, or the
 * element: a commit and a build that say "</script>" are escaped. */
START_TEST(point_page_script_data_is_escaped)
{
	struct site s;
	struct pg_buf page = PG_BUF_INIT;
	char *commit, *build;
	const char *script;

	site_init(&s);
	commit = s.hs[0].recs[0].commit;
	build = s.hs[0].recs[0].build_url;
	s.hs[0].recs[0].commit = "<\" x\xe2\x80\xa8";
	/* a space in a URL stays a space (the tooltip's link is the table's) */
	s.hs[0].recs[0].build_url = "https://ci.example/</script><b> \xe2\x80\xa9";
	pg_trends_point(&page, &s.t, 0);
	script = strstr(page.ptr, "<script>");
	ck_assert_ptr_nonnull(script);
	ck_assert_ptr_nonnull(strstr(script, "\\u003c\\u0022\\u00a0x\\u2028"));
	ck_assert_ptr_nonnull(strstr(script, "\\u003c/script\\u003e\\u003cb\\u003e\\u0020\\u2029"));
	ck_assert_ptr_null(strstr(script, "\xe2\x80"));
	/* the element's first end is its own, at the page's end */
	ck_assert_ptr_eq(strstr(script, "</script>"), strstr(script, "</script>\n</body>"));
	s.hs[0].recs[0].commit = commit;
	s.hs[0].recs[0].build_url = build;
	pg_buf_release(&page);
	site_release(&s);
}
END_TEST

START_TEST(names_are_escaped_and_files_unique)
{
	struct site s;
	struct pg_buf page = PG_BUF_INIT;

	site_init(&s);
	/* "a b" and "a_b" would share a file name */
	ck_assert_str_eq(s.t.files[0], "p/a_b-04833892.html");
	ck_assert_str_eq(s.t.files[1], "p/a_b-04f4ad51.html");
	ck_assert_str_eq(s.t.files[2], "p/x_img_src_x_onerror_alert_1__.html");
	pg_trends_points(&page, &s.t);
	ck_assert_ptr_null(strstr(page.ptr, "<img"));
	ck_assert_ptr_nonnull(strstr(page.ptr, ">x&lt;img src=x onerror=alert(1)&gt;</a>"));
	pg_buf_reset(&page);
	pg_trends_point(&page, &s.t, 2);
	ck_assert_ptr_null(strstr(page.ptr, "<img"));
	pg_buf_release(&page);
	site_release(&s);
}
END_TEST

START_TEST(overview_puts_what_needs_a_look_first)
{
	struct site s;
	struct pg_buf page = PG_BUF_INIT;
	const char *a, *b;

	site_init(&s);
	/* "a b" has a step within its window */
	ck_assert_uint_eq(s.t.n_flagged, 1);
	ck_assert_uint_eq(s.t.order[0], 0);
	pg_trends_overview(&page, &s.t);
	a = strstr(page.ptr, "href=\"p/a_b-04833892.html\"");
	b = strstr(page.ptr, "href=\"p/a_b-04f4ad51.html\"");
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert(a < b);
	ck_assert_ptr_nonnull(strstr(page.ptr, "<h2>Change points (1)</h2>"));
	ck_assert_ptr_null(strstr(page.ptr, "<img"));
	pg_buf_release(&page);
	site_release(&s);
}
END_TEST

START_TEST(slim_records_keep_their_medians)
{
	struct pg_history h = { 0 };
	struct pg_policy policy;
	double before;

	history_of(&h, "p", JOBS);
	pg_policy_init(&policy);
	before = pg_history_rec_median(&h.recs[3], "output_throughput");
	pg_history_slim(&h, &policy);
	ck_assert_ptr_null(h.recs[3].metrics);
	ck_assert_ptr_nonnull(h.recs[3].medians);
	ck_assert_double_eq(pg_history_rec_median(&h.recs[3], "output_throughput"), before);
	ck_assert_double_eq(pg_history_rec_value(&h.recs[3], pg_metric_by_id(PG_SUITE_SERVING,
									     "output_throughput")),
			    before);
	/* mean TPOT only warns and never escalates: not kept */
	ck_assert(isnan(pg_history_rec_median(&h.recs[3], "mean_tpot_ms")));
	ck_assert(isnan(pg_history_rec_median(&h.recs[3], "no_such_metric")));
	pg_history_release(&h);
	history_of(&h, "p", JOBS);
	pg_history_slim(&h, NULL);
	ck_assert_double_eq(pg_history_rec_median(&h.recs[3], "mean_tpot_ms"), 8);
	pg_history_release(&h);
	pg_policy_release(&policy);
}
END_TEST

START_TEST(history_fields_are_escaped)
{
	struct site s;
	struct pg_buf page = PG_BUF_INIT, text = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;

	site_init(&s);
	/* a last run whose commit, date and build are markup */
	pg_buf_puts(&text, "{\"format\": 1, \"commit\": \"<b>x</b>\", \"date\": \"<i>2026-12\", "
			   "\"build_url\": \"javascript:alert(1)\", \"suite\": \"serving\", "
			   "\"point\": \"p\", \"metrics\": {\"output_throughput\": [1]}}\n");
	ck_assert_int_eq(pg_history_parse(&s.hs[1], "a_b", text.ptr, text.len, "test", &err), 0);
	pg_trends_gpu_release(&s.t);
	pg_history_analysis_release(&s.an);
	pg_baseline_release(&s.base);
	memset(&s.base, 0, sizeof(s.base));
	pg_history_analyse(&s.an, s.hs, 3, NULL, &s.policy, 0, true);
	pg_history_baseline_build(&s.base, s.hs, 3, NULL, &s.policy);
	pg_baseline_sort(&s.base);
	pg_trends_gpu_prepare(&s.t);
	pg_trends_point(&page, &s.t, 1);
	ck_assert_ptr_null(strstr(page.ptr, "<b>"));
	ck_assert_ptr_null(strstr(page.ptr, "<i>"));
	ck_assert_ptr_null(strstr(page.ptr, "javascript:"));
	ck_assert_ptr_nonnull(strstr(page.ptr, "&lt;b&gt;x&lt;/b"));
	pg_buf_reset(&page);
	pg_trends_overview(&page, &s.t);
	ck_assert_ptr_null(strstr(page.ptr, "<i>"));
	pg_buf_release(&page);
	pg_buf_release(&text);
	site_release(&s);
}
END_TEST

/* A series whose values a chart must still frame: all the same but one
 * ulp (the tick step used to round to nothing next to them and the tick
 * loop never ended), or beyond what a double can pad. */
static void chart_of_values(const char *first, const char *rest)
{
	struct site s;
	struct pg_buf text = PG_BUF_INIT, page = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;

	site_init(&s);
	pg_trends_gpu_release(&s.t);
	pg_history_release(&s.hs[1]);
	for (int j = 0; j < JOBS; j++)
		pg_buf_printf(
			&text,
			"{\"format\": 1, \"commit\": \"%02d23456789abcdef0123456789abcdef0123456\", "
			"\"gpu\": \"1xH100\", \"suite\": \"serving\", \"point\": \"p\", "
			"\"test\": \"t\", \"repeats\": 1, \"metrics\": {\"output_throughput\": "
			"[%s], \"median_ttft_ms\": [20], \"median_tpot_ms\": [8]}}\n",
			j, j ? rest : first);
	ck_assert_int_eq(pg_history_parse(&s.hs[1], "a_b", text.ptr, text.len, "test", &err), 0);
	pg_trends_gpu_prepare(&s.t);
	pg_trends_point(&page, &s.t, 1);
	pg_trends_overview(&page, &s.t);
	ck_assert_ptr_null(strstr(page.ptr, "nan"));
	ck_assert_ptr_null(strstr(page.ptr, "inf"));
	ck_assert_uint_lt(page.len, 1 << 20);
	pg_buf_release(&page);
	pg_buf_release(&text);
	site_release(&s);
}

START_TEST(nearly_constant_and_huge_series_are_framed)
{
	chart_of_values("1000.0000000000001", "1000");
	chart_of_values("1000", "1000");
	chart_of_values("1.7e308", "1e308");
	chart_of_values("-1.7e308", "1.7e308");
}
END_TEST

/* Two A/B steps at point "a b": PR 17 regressed its throughput (its
 * fields plain), and one whose fields are markup; mean TPOT, which the
 * page does not chart, only in A/B. */
static void ab_of(struct pg_history_ab *h)
{
	static const char text[] =
		"{\"format\": 1, \"kind\": \"ab\", \"commit\": \"aa23456789abcdef0123456789abcdef01234567\", "
		"\"base_commit\": \"bb23456789abcdef0123456789abcdef01234567\", \"pr\": \"17\", "
		"\"date\": \"2026-11-20T12:00:00Z\", \"build_url\": \"https://ci.example/pr/17\", "
		"\"branch\": \"fix\", \"gpu\": \"1xH100\", \"suite\": \"serving\", \"point\": \"a b\", "
		"\"test\": \"t\", \"outcome\": \"fail\", \"blocks\": 6, \"metrics\": {"
		"\"output_throughput\": {\"change\": -0.052, \"effect\": -0.05, \"lo\": -0.061, "
		"\"hi\": -0.04, \"tolerance\": 0.01, \"pairs\": 3, \"verdict\": \"regressed\", "
		"\"whole_run\": {\"change\": -0.002, \"lo\": -0.01, \"hi\": 0.006, \"tolerance\": 0.01, "
		"\"verdict\": \"unchanged\"}}, "
		"\"mean_tpot_ms\": {\"change\": 0.01, \"effect\": 0.0, \"lo\": -0.01, \"hi\": 0.01, "
		"\"tolerance\": 0.02, \"pairs\": 3, \"verdict\": \"unchanged\"}}}\n"
		"{\"format\": 1, \"kind\": \"ab\", \"commit\": \"<b>c</b>\", \"pr\": \"<script>x\", "
		"\"date\": \"<i>2026-11-21\", \"build_url\": \"javascript:alert(1)\", "
		"\"suite\": \"serving\", \"outcome\": \"<u>pass\", \"metrics\": {"
		"\"output_throughput\": {\"change\": 0.001, \"pairs\": 4, \"verdict\": \"unchanged\"}, "
		"\"median_tpot_ms\": {\"change\": 0.4, \"effect\": 0.0, \"pairs\": 4, "
		"\"verdict\": \"unchanged\", \"whole_run\": {\"change\": 0.4, \"lo\": 0.39, "
		"\"hi\": 0.41, \"tolerance\": 0.02, \"verdict\": \"regressed\"}}}}\n";
	struct pg_error err = PG_ERROR_INIT;

	memset(h, 0, sizeof(*h));
	ck_assert_msg(pg_history_ab_parse(h, "a b", text, strlen(text), "test", &err) == 0, "%s",
		      err.msg);
}

/* The A/B parts of a page: from each marker to the end of its table. */
static void ab_parts(struct pg_buf *out, const char *page, const char *marker)
{
	for (const char *p = strstr(page, marker); p; p = strstr(p, marker)) {
		const char *end = strstr(p, "</table>\n");
		ck_assert_ptr_nonnull(end);
		end += strlen("</table>\n");
		pg_buf_add(out, p, (size_t)(end - p));
		p = end;
	}
}

START_TEST(ab_results_on_the_point_page_and_the_overview)
{
	struct site s;
	struct pg_history_ab ab;
	struct pg_buf page = PG_BUF_INIT, part = PG_BUF_INIT;

	site_init(&s);
	ab_of(&ab);
	s.t.ab = &ab;
	s.t.n_ab = 1;
	pg_trends_point(&page, &s.t, 0);
	ab_parts(&part, page.ptr, "<table class=\"ab\">");
	/* a metric the page does not chart, under its own heading */
	ck_assert_ptr_nonnull(strstr(
		page.ptr,
		"<h3>Mean TPOT <span class=\"muted\">A/B only</span></h3>\n<table class=\"ab\">"));
	tu_assert_golden("golden/trends/ab-point.html", part.ptr);
	/* under the throughput chart, before the next metric's */
	ck_assert_ptr_nonnull(strstr(
		page.ptr,
		"</svg>\n<table class=\"ab\"><caption class=\"muted\">A/B results at this point (2, newest first)"));
	/* one script: the page's own (the A/B lines' markup is escaped) */
	ck_assert_ptr_null(strstr(strstr(page.ptr, "<script>var D=") + 1, "<script"));
	ck_assert_ptr_null(strstr(page.ptr, "<b>c"));
	ck_assert_ptr_null(strstr(page.ptr, "href=\"javascript"));
	pg_buf_reset(&page);
	pg_buf_reset(&part);
	pg_trends_overview(&page, &s.t);
	ab_parts(&part, page.ptr, "<h2>A/B results");
	tu_assert_golden("golden/trends/ab-overview.html", part.ptr);
	ck_assert_ptr_null(strstr(page.ptr, "<script"));
	ck_assert_ptr_null(strstr(page.ptr, "<u>"));
	/* other points' pages have none */
	pg_buf_reset(&page);
	pg_trends_point(&page, &s.t, 1);
	ck_assert_ptr_null(strstr(page.ptr, "A/B"));
	pg_buf_release(&page);
	pg_buf_release(&part);
	pg_history_ab_release(&ab);
	site_release(&s);
}
END_TEST

/* "a b" and "a_b" share a file name; the second's suffix (its name's
 * hash) is a third point's own name; "Q" and "q" are one file where case
 * does not count. */
START_TEST(page_names_are_unique_in_every_sense)
{
	static const char *const names[] = { "Q", "a b", "a_b", "a_b-04f4ad51", "q" };
	enum { N = sizeof(names) / sizeof(names[0]) };
	struct pg_history hs[N] = { 0 };
	struct pg_history_analysis an = { 0 };
	struct pg_policy policy;
	struct pg_baseline base = PG_BASELINE_INIT;
	struct pg_trends_gpu t;

	for (size_t i = 0; i < N; i++)
		history_of(&hs[i], names[i], JOBS);
	pg_policy_init(&policy);
	pg_history_analyse(&an, hs, N, NULL, &policy, 0, false);
	pg_history_baseline_build(&base, hs, N, NULL, &policy);
	pg_baseline_sort(&base);
	t = (struct pg_trends_gpu){
		.gpu = "H100", .hs = hs, .n = N, .a = &an, .base = &base, .policy = &policy
	};
	pg_trends_gpu_prepare(&t);
	for (size_t i = 0; i < N; i++)
		for (size_t k = i + 1; k < N; k++)
			ck_assert_msg(strcasecmp(t.files[i], t.files[k]) != 0, "%s and %s",
				      t.files[i], t.files[k]);
	ck_assert_str_eq(t.files[0], "p/Q-86023e1c.html");
	ck_assert_str_eq(t.files[1], "p/a_b-04833892.html");
	ck_assert_str_eq(t.files[2], "p/a_b-04f4ad51-2.html");
	ck_assert_str_eq(t.files[3], "p/a_b-04f4ad51.html");
	ck_assert_str_eq(t.files[4], "p/q-860207bc.html");
	pg_trends_gpu_release(&t);
	pg_baseline_release(&base);
	pg_history_analysis_release(&an);
	pg_policy_release(&policy);
	for (size_t i = 0; i < N; i++)
		pg_history_release(&hs[i]);
}
END_TEST

/* A GPU's directory beside the site's index.html: its key when that is
 * a file name no other key or the site's own files can have, else with a
 * hash of the key; the same whatever other GPUs there are. */
START_TEST(gpu_directories_never_collide)
{
	static const struct {
		const char *gpu, *dir;
	} plain[] = { { "H100", "H100" },
		      { "MI300X", "MI300X" },
		      { "NVIDIA_RTX_A6000", "NVIDIA_RTX_A6000" } };
	static const char *const hashed[] = { "index.html", "INDEX.HTML", "Index.Html", "h100",
					      "a b",        "a_b",        "none" };
	char *dirs[sizeof(hashed) / sizeof(hashed[0])];
	size_t n = sizeof(hashed) / sizeof(hashed[0]);

	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		char *d = pg_trends_gpu_dir(plain[i].gpu);
		ck_assert_str_eq(d, plain[i].dir);
		free(d);
	}
	for (size_t i = 0; i < n; i++) {
		dirs[i] = pg_trends_gpu_dir(hashed[i]);
		ck_assert_msg(strlen(dirs[i]) > 9 && dirs[i][strlen(dirs[i]) - 9] == '-', "%s",
			      dirs[i]);
		ck_assert(strcasecmp(dirs[i], "index.html") && strcasecmp(dirs[i], "H100"));
		for (size_t k = 0; k < i; k++)
			ck_assert_msg(strcasecmp(dirs[i], dirs[k]), "%s and %s", hashed[i],
				      hashed[k]);
	}
	/* stable: the same key, the same directory */
	{
		char *again = pg_trends_gpu_dir("index.html");
		ck_assert_str_eq(again, dirs[0]);
		free(again);
	}
	for (size_t i = 0; i < n; i++)
		free(dirs[i]);
}
END_TEST

/* A long name is cut where a UTF-8 character starts, never inside one. */
START_TEST(long_names_are_cut_between_characters)
{
	char s[64];

	/* "é" is two bytes: the 13th byte is its second */
	snprintf(s, sizeof(s), "abcdefghijkl\xc3\xa9mnopqrstuvwxyz0123456789");
	pg_file_name_cap(s, 30, s);
	ck_assert_uint_eq(strlen(s), 12 + 17);
	ck_assert(!strncmp(s, "abcdefghijkl-", 13));
}
END_TEST

/* A page keeps its name when a point is added before it: links to it, in
 * annotations and bookmarks, still work on the next night's site. */
START_TEST(page_names_do_not_move_when_points_are_added)
{
	static const char *const before[] = { "a b", "a_b", "z" };
	static const char *const after[] = { "0", "a b", "a_b", "z" };
	char *f1[3], *f2[4];

	for (size_t i = 0; i < 3; i++)
		f1[i] = pg_chart_stem(before[i]);
	for (size_t i = 0; i < 4; i++)
		f2[i] = pg_chart_stem(after[i]);
	pg_file_names_unique(f1, before, 3, ".html");
	pg_file_names_unique(f2, after, 4, ".html");
	ck_assert_str_eq(f1[0], "a_b-04833892.html");
	ck_assert_str_eq(f1[1], "a_b-04f4ad51.html");
	ck_assert_str_eq(f1[1], f2[2]);
	ck_assert_str_eq(f1[0], f2[1]);
	for (size_t i = 0; i < 3; i++)
		free(f1[i]);
	for (size_t i = 0; i < 4; i++)
		free(f2[i]);
}
END_TEST

static Suite *trends_suite(void)
{
	Suite *s = suite_create("trends");
	TCase *tc = tcase_create("pages");

	tcase_add_test(tc, point_page_draws_the_gates_window_band_and_step);
	tcase_add_test(tc, point_page_script_data_is_escaped);
	tcase_add_test(tc, names_are_escaped_and_files_unique);
	tcase_add_test(tc, overview_puts_what_needs_a_look_first);
	tcase_add_test(tc, slim_records_keep_their_medians);
	tcase_add_test(tc, history_fields_are_escaped);
	tcase_add_test(tc, nearly_constant_and_huge_series_are_framed);
	tcase_add_test(tc, ab_results_on_the_point_page_and_the_overview);
	tcase_add_test(tc, page_names_are_unique_in_every_sense);
	tcase_add_test(tc, page_names_do_not_move_when_points_are_added);
	tcase_add_test(tc, gpu_directories_never_collide);
	tcase_add_test(tc, long_names_are_cut_between_characters);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(trends_suite());
}
