/* SVG charts: nice axes, tick labels, escaping, and golden figures for a
 * serving sweep, single-point serving tests, latency and throughput. */
#include "testutil.h"

#include "base/buf.h"
#include "report/charts.h"
#include "results/metrics.h"
#include "report/svg.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

START_TEST(nice_axis_steps)
{
	/* clang-format off */
	static const struct {
		double max;
		int ticks;
		double want_max, want_step;
	} cases[] = {
		{ 100, 5, 100, 20 },   { 97, 5, 100, 20 },    { 101, 5, 125, 25 },
		{ 0.93, 5, 1, 0.2 },   { 2418.1, 5, 2500, 500 }, { 7, 5, 8, 2 },
		{ 0, 5, 1, 0.2 },      { 1e-3, 4, 0.001, 0.00025 }, { 123456, 5, 125000, 25000 },
	};
	/* clang-format on */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double step, max = pg_nice_axis(cases[i].max, cases[i].ticks, &step);
		ck_assert_msg(fabs(max - cases[i].want_max) < 1e-9 &&
				      fabs(step - cases[i].want_step) < 1e-12,
			      "max %g: got %g step %g", cases[i].max, max, step);
	}
}
END_TEST

START_TEST(tick_labels)
{
	char out[32];

	pg_tick_label(out, sizeof(out), 0, 500);
	ck_assert_str_eq(out, "0");
	pg_tick_label(out, sizeof(out), 2500, 500);
	ck_assert_str_eq(out, "2500");
	pg_tick_label(out, sizeof(out), 7500, 2500);
	ck_assert_str_eq(out, "7.5k");
	pg_tick_label(out, sizeof(out), 2000, 1000);
	ck_assert_str_eq(out, "2k");
	pg_tick_label(out, sizeof(out), 0.75, 0.25);
	ck_assert_str_eq(out, "0.75");
	pg_tick_label(out, sizeof(out), 40, 20);
	ck_assert_str_eq(out, "40");
	pg_tick_label(out, sizeof(out), 1.5e6, 5e5);
	ck_assert_str_eq(out, "1.5M");
}
END_TEST

/* The fixtures: a QPS sweep of one serving test, a single-point serving
 * test, three latency tests and two throughput tests. */
static const char *fixture_json =
	"["
	"{\"n\":\"serving_llama8B_tp1_sharegpt_qps_1\",\"r\":{\"request_rate\":1,\"max_concurrency\":null,\"completed\":200,\"request_throughput\":0.98,\"output_throughput\":201.3,\"median_ttft_ms\":22.1,\"p99_ttft_ms\":41.0,\"median_tpot_ms\":7.9,\"p99_tpot_ms\":9.4,\"perfgate\":{\"suite\":\"serving\",\"test\":\"serving_llama8B_tp1_sharegpt\"}}},"
	"{\"n\":\"serving_llama8B_tp1_sharegpt_qps_4\",\"r\":{\"request_rate\":4,\"max_concurrency\":null,\"completed\":200,\"request_throughput\":3.9,\"output_throughput\":812.4,\"median_ttft_ms\":25.3,\"p99_ttft_ms\":52.8,\"median_tpot_ms\":9.1,\"p99_tpot_ms\":12.7,\"perfgate\":{\"suite\":\"serving\",\"test\":\"serving_llama8B_tp1_sharegpt\"}}},"
	"{\"n\":\"serving_llama8B_tp1_sharegpt_qps_16\",\"r\":{\"request_rate\":16,\"max_concurrency\":null,\"completed\":200,\"request_throughput\":14.2,\"output_throughput\":2418.1,\"median_ttft_ms\":38.9,\"p99_ttft_ms\":120.4,\"median_tpot_ms\":14.8,\"p99_tpot_ms\":25.1,\"perfgate\":{\"suite\":\"serving\",\"test\":\"serving_llama8B_tp1_sharegpt\"}}},"
	"{\"n\":\"serving_llama8B_tp1_sharegpt_qps_inf\",\"r\":{\"request_rate\":\"inf\",\"max_concurrency\":null,\"completed\":200,\"request_throughput\":19.8,\"output_throughput\":3390.5,\"median_ttft_ms\":1804.2,\"p99_ttft_ms\":3540.7,\"median_tpot_ms\":27.5,\"p99_tpot_ms\":61.3,\"perfgate\":{\"suite\":\"serving\",\"test\":\"serving_llama8B_tp1_sharegpt\"}}},"
	"{\"n\":\"serving_<b>weird</b>|name_qps_2\",\"r\":{\"request_rate\":2,\"completed\":100,\"request_throughput\":1.9,\"output_throughput\":390.2,\"median_ttft_ms\":31.0,\"p99_ttft_ms\":66.0,\"median_tpot_ms\":8.2,\"p99_tpot_ms\":11.9}},"
	"{\"n\":\"latency_llama8B_tp1\",\"r\":{\"avg_latency\":0.9247,\"percentiles\":{\"50\":0.9188,\"99\":1.0123},\"perfgate\":{\"suite\":\"latency\"}}},"
	"{\"n\":\"latency_llama70B_tp4\",\"r\":{\"avg_latency\":2.5417,\"percentiles\":{\"50\":2.5301,\"99\":2.7012},\"perfgate\":{\"suite\":\"latency\"}}},"
	"{\"n\":\"latency_mixtral8x7B_tp2_with_a_rather_long_name\",\"r\":{\"avg_latency\":1.7,\"percentiles\":{\"50\":1.69,\"99\":1.93},\"perfgate\":{\"suite\":\"latency\"}}},"
	"{\"n\":\"throughput_llama8B_tp1\",\"r\":{\"requests_per_second\":22.84,\"tokens_per_second\":9736.2,\"output_tokens_per_second\":4521.9,\"elapsed_time\":43.8,\"perfgate\":{\"suite\":\"throughput\"}}},"
	"{\"n\":\"throughput_llama70B_tp4\",\"r\":{\"requests_per_second\":9.27,\"tokens_per_second\":3950.1,\"output_tokens_per_second\":1835.5,\"elapsed_time\":107.9,\"perfgate\":{\"suite\":\"throughput\"}}}"
	"]";

/* A baseline 5% better than this run everywhere, except for missing
 * values on the qps_16 point (a new point has no baseline). */
static int fake_baseline(void *ctx, const char *point, const struct pg_metric *m, double *out)
{
	json_t *all = ctx;
	size_t i;
	json_t *e;

	if (strstr(point, "_qps_16"))
		return -1;
	json_array_foreach(all, i, e)
	{
		if (strcmp(json_string_value(json_object_get(e, "n")), point))
			continue;
		if (pg_metric_value(m, json_object_get(e, "r"), out) < 0)
			return -1;
		*out = m->direction == PG_HIGHER_IS_BETTER ? *out * 1.05 : *out * 0.95;
		return 0;
	}
	return -1;
}

static size_t count_of(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* +3.4% for the latency tests' median, none for the rest. */
static int fixed_change(void *ctx, const char *point, const struct pg_metric *m, double *out)
{
	(void)ctx;
	if (strncmp(point, "latency_", 8) || strcmp(m->id, "median_latency_ms"))
		return -1;
	*out = 0.034;
	return 0;
}

START_TEST(golden_figures)
{
	json_error_t jerr;
	json_t *all = json_loads(fixture_json, 0, &jerr);
	const json_t *results[16];
	const char *names[16];
	struct pg_chart_set set = PG_CHART_SET_INIT;
	struct pg_chart_input in = { 0 };
	size_t i;
	json_t *e;

	ck_assert_msg(all != NULL, "%s", jerr.text);
	json_array_foreach(all, i, e)
	{
		results[i] = json_object_get(e, "r");
		names[i] = json_string_value(json_object_get(e, "n"));
	}
	in.results = results;
	in.names = names;
	in.n = json_array_size(all);
	in.baseline = fake_baseline;
	in.baseline_ctx = all;
	in.subtitle = "H100 · commit 1a2b3c4 · baseline main @ 9f8e7d6";
	in.baseline_name = "Baseline (main @ 9f8e7d6)";
	pg_charts_build(&set, &in);

	ck_assert_uint_eq(set.n, 5);
	ck_assert_str_eq(set.items[0].stem, "serving_llama8B_tp1_sharegpt");
	ck_assert_uint_eq(set.items[0].points.n, 4);
	/* inf sorts last on the sweep */
	ck_assert_str_eq(set.items[0].points.v[3], "serving_llama8B_tp1_sharegpt_qps_inf");
	/* the four rates are a ladder: its frontier */
	ck_assert_str_eq(set.items[1].stem, "serving_llama8B_tp1_sharegpt_frontier");
	ck_assert_str_eq(set.items[2].stem, "serving");
	ck_assert_str_eq(set.items[3].stem, "latency");
	ck_assert_str_eq(set.items[4].stem, "throughput");
	for (i = 0; i < set.n; i++) {
		char rel[128];
		/* the odd test name is escaped, never markup */
		ck_assert_ptr_null(strstr(set.items[i].svg, "<b>"));
		snprintf(rel, sizeof(rel), "golden/charts/%s.svg", set.items[i].stem);
		tu_assert_golden(rel, set.items[i].svg);
	}
	ck_assert_ptr_nonnull(
		strstr(set.items[2].svg, "serving_&lt;b&gt;weird&lt;/b&gt;|name_qps_2"));

	/* a bar says the change the comparison decided on when it has one
	 * (A/B's paired change), else the ratio of the two bars */
	ck_assert_uint_eq(count_of(set.items[3].svg, "(+5.3%)"), 6);
	pg_chart_set_release(&set);
	in.change = fixed_change;
	pg_charts_build(&set, &in);
	/* the 3 tests' median latency bars; their p99 bars keep the ratio */
	ck_assert_uint_eq(count_of(set.items[3].svg, "(+3.4%)"), 3);
	ck_assert_uint_eq(count_of(set.items[3].svg, "(+5.3%)"), 3);
	ck_assert_ptr_nonnull(strstr(set.items[4].svg, "(-4.8%)"));
	in.change = NULL;
	pg_chart_set_release(&set);

	/* without a baseline: no dashed series, no baseline legend */
	in.baseline = NULL;
	pg_charts_build(&set, &in);
	ck_assert_ptr_null(strstr(set.items[0].svg, "stroke-dasharray"));
	ck_assert_ptr_null(strstr(set.items[0].svg, "Baseline"));
	pg_chart_set_release(&set);
	json_decref(all);
}
END_TEST

/* A concurrency ladder 3% slower than its baseline, on 2 GPUs: the
 * frontier figure shows both curves and says how far apart they are. */
static json_t *ladder_point(double c, double speed)
{
	double tpot = 8.0 * (1 + 0.01 * (c - 1)) / speed, ttft = 20.0 * (1 + 0.02 * c) / speed;
	double rps = c / ((ttft + 127 * tpot) / 1000);

	return json_pack("{s:s, s:f, s:f, s:f, s:{s:s, s:s, s:s, s:{s:i, s:f, s:s}}}",
			 "request_rate", "inf", "max_concurrency", c, "output_throughput",
			 rps * 128 * 2, "median_tpot_ms", tpot, "perfgate", "suite", "serving",
			 "status", "ok", "test", "serving_ladder", "params", "tp", 2,
			 "max_concurrency", c, "qps", "inf");
}

static int ladder_baseline(void *ctx, const char *point, const struct pg_metric *m, double *out)
{
	const char *c = strrchr(point, '_');
	json_t *r;
	int rc;

	(void)ctx;
	r = ladder_point(strtod(c + 1, NULL), 1.0);
	rc = pg_metric_value(m, r, out);
	json_decref(r);
	return rc;
}

START_TEST(frontier_figure_of_a_ladder)
{
	static const int cs[] = { 1, 2, 4, 8, 16, 32, 64, 128 };
	static const double wobble[] = { 0.004, -0.004, 0.002, -0.002, 0, 0.004, -0.004, 0 };
	json_t *res[8];
	const json_t *results[8];
	const char *names[8];
	char buf[8][64];
	struct pg_chart_set set = PG_CHART_SET_INIT;
	struct pg_chart_input in = { 0 };
	const struct pg_chart_file *fr = NULL;

	for (size_t i = 0; i < 8; i++) {
		snprintf(buf[i], sizeof(buf[i]), "serving_ladder_qps_inf_concurrency_%d", cs[i]);
		res[i] = ladder_point(cs[i], 0.97 * exp(wobble[i]));
		results[i] = res[i];
		names[i] = buf[i];
	}
	in.results = results;
	in.names = names;
	in.n = 8;
	in.baseline = ladder_baseline;
	in.subtitle = "H100 · commit 1a2b3c4 · baseline main @ 9f8e7d6";
	in.baseline_name = "Baseline (main @ 9f8e7d6)";
	pg_charts_build(&set, &in);
	for (size_t i = 0; i < set.n; i++)
		if (!strcmp(set.items[i].stem, "serving_ladder_frontier"))
			fr = &set.items[i];
	ck_assert_ptr_nonnull(fr);
	ck_assert_uint_eq(fr->points.n, 8);
	ck_assert_ptr_nonnull(strstr(fr->svg, "Change at equal users/GPU: -3%"));
	ck_assert_ptr_nonnull(strstr(fr->svg, ">c=128<"));
	tu_assert_golden("golden/charts/serving_ladder_frontier.svg", fr->svg);
	pg_chart_set_release(&set);
	for (size_t i = 0; i < 8; i++)
		json_decref(res[i]);
}
END_TEST

/* The metrics that regressed lead the figure, even when the key five do
 * not include them; a key metric without any value is left out; a figure
 * with no value at all says "no data" instead of drawing empty 0-1 axes. */
START_TEST(regressed_metrics_first_and_no_empty_panels)
{
	static const char sweep[] =
		"[{\"request_rate\":1,\"request_throughput\":0.98,\"output_throughput\":201.3,\"median_itl_ms\":7.1},"
		"{\"request_rate\":4,\"request_throughput\":3.9,\"output_throughput\":812.4,\"median_itl_ms\":8.3}]";
	json_error_t jerr;
	json_t *all = json_loads(sweep, 0, &jerr), *bare = json_object();
	const json_t *results[2] = { json_array_get(all, 0), json_array_get(all, 1) };
	const json_t *empty[2] = { bare, bare };
	const char *names[2] = { "serving_x_qps_1", "serving_x_qps_4" };
	const char *const regressed[] = { "median_itl_ms", "request_throughput", "no_such_metric" };
	struct pg_chart_set set = PG_CHART_SET_INIT;
	struct pg_chart_input in = { 0 };
	const char *itl, *req, *out;

	ck_assert_ptr_nonnull(all);
	json_object_set_new(bare, "request_rate", json_integer(1));
	json_object_set_new(bare, "request_throughput", json_null()); /* a serving result */
	in.results = results;
	in.names = names;
	in.n = 2;
	in.metrics = regressed;
	in.n_metrics = 3;
	pg_charts_build(&set, &in);
	ck_assert_uint_eq(set.n, 1);
	itl = strstr(set.items[0].svg, ">Median ITL");
	req = strstr(set.items[0].svg, ">Request throughput");
	out = strstr(set.items[0].svg, ">Output token throughput");
	ck_assert_ptr_nonnull(itl);
	ck_assert_ptr_nonnull(req);
	ck_assert_ptr_nonnull(out);
	ck_assert(itl < req && req < out); /* in the order given, then the key ones */
	/* TTFT and TPOT have no value here: no panel for them */
	ck_assert_ptr_null(strstr(set.items[0].svg, "TTFT"));
	ck_assert_ptr_null(strstr(set.items[0].svg, "no data"));
	pg_chart_set_release(&set);

	/* nothing at all to draw: every panel says so */
	in.results = empty;
	in.metrics = NULL;
	in.n_metrics = 0;
	pg_charts_build(&set, &in);
	ck_assert_uint_eq(set.n, 1);
	ck_assert_ptr_nonnull(strstr(set.items[0].svg, ">no data<"));
	ck_assert_ptr_nonnull(strstr(set.items[0].svg, ">Median TTFT"));
	pg_chart_set_release(&set);
	json_decref(bare);
	json_decref(all);
}
END_TEST

START_TEST(stems_are_file_safe)
{
	char *s = pg_chart_stem("../a b/c:d");
	char long_a[400], long_b[400];
	char *a, *a2, *b;

	ck_assert_str_eq(s, "_._a_b_c_d");
	free(s);
	/* a name past the file system's limit: capped, with a stable hash of
	 * the whole name, so two long names that share a start do not clash */
	memset(long_a, 'x', sizeof(long_a) - 1);
	long_a[sizeof(long_a) - 1] = '\0';
	memcpy(long_b, long_a, sizeof(long_b));
	long_b[300] = 'y';
	a = pg_chart_stem(long_a);
	a2 = pg_chart_stem(long_a);
	b = pg_chart_stem(long_b);
	ck_assert_uint_eq(strlen(a), PG_CHART_STEM_MAX);
	ck_assert_uint_eq(strlen(b), PG_CHART_STEM_MAX);
	ck_assert_str_eq(a, a2);
	ck_assert_str_ne(a, b);
	ck_assert(!strncmp(a, long_a, PG_CHART_STEM_MAX - 17));
	ck_assert_int_eq(a[PG_CHART_STEM_MAX - 17], '-');
	free(a);
	free(a2);
	free(b);
	s = pg_chart_stem(long_a + 400 - 1 - PG_CHART_STEM_MAX);
	ck_assert_uint_eq(strlen(s), PG_CHART_STEM_MAX);
	ck_assert(!strchr(s, '-'));
	free(s);
}
END_TEST

/* Large results sets: at most PG_CHARTS_MAX_SWEEPS sweep figures and
 * PG_CHARTS_MAX_BAR_ROWS bars per figure, flagged points first. */
START_TEST(large_sets_are_capped_flagged_first)
{
	enum { SWEEPS = 30, LATENCY = 100 };
	json_t *arr = json_array();
	const json_t *results[SWEEPS * 2 + LATENCY];
	char names[SWEEPS * 2 + LATENCY][64];
	const char *name_ptrs[SWEEPS * 2 + LATENCY];
	const char *flagged[] = { "latency_077", "sweep_029_qps_inf" };
	struct pg_chart_set set = PG_CHART_SET_INIT;
	struct pg_chart_input in = { 0 };
	size_t n = 0, sweeps = 0;

	for (int t = 0; t < SWEEPS; t++)
		for (int q = 0; q < 2; q++) {
			json_t *r = json_pack("{s:s?,s:f,s:{s:s,s:s}}", "request_rate",
					      q ? "inf" : NULL, "output_throughput", 100.0 + t,
					      "perfgate", "suite", "serving", "test", "x");
			char test[32];
			snprintf(test, sizeof(test), "sweep_%03d", t);
			json_object_set_new(json_object_get(r, "perfgate"), "test",
					    json_string(test));
			if (!q)
				json_object_set_new(r, "request_rate", json_integer(1));
			snprintf(names[n], sizeof(names[n]), "%s_qps_%s", test, q ? "inf" : "1");
			json_array_append_new(arr, r);
			results[n] = r;
			name_ptrs[n] = names[n];
			n++;
		}
	for (int t = 0; t < LATENCY; t++) {
		json_t *r = json_pack("{s:f,s:{s:f,s:f},s:{s:s}}", "avg_latency", 1.0,
				      "percentiles", "50", 1.0, "99", 1.1, "perfgate", "suite",
				      "latency");
		snprintf(names[n], sizeof(names[n]), "latency_%03d", t);
		json_array_append_new(arr, r);
		results[n] = r;
		name_ptrs[n] = names[n];
		n++;
	}
	in.results = results;
	in.names = name_ptrs;
	in.n = n;
	in.flagged = flagged;
	in.n_flagged = 2;
	pg_charts_build(&set, &in);
	for (size_t i = 0; i < set.n; i++)
		sweeps += strstr(set.items[i].title, "sweep") != NULL;
	ck_assert_uint_eq(sweeps, PG_CHARTS_MAX_SWEEPS);
	ck_assert_uint_eq(set.sweeps_left_out, SWEEPS - PG_CHARTS_MAX_SWEEPS);
	/* the flagged sweep comes first although its test sorts last */
	ck_assert_str_eq(set.items[0].stem, "sweep_029");
	ck_assert_str_eq(set.items[set.n - 1].stem, "latency");
	ck_assert_str_eq(set.items[set.n - 1].title,
			 "Latency tests (30 of 100, regressions first; all in the report)");
	ck_assert_uint_eq(set.items[set.n - 1].points.n, PG_CHARTS_MAX_BAR_ROWS);
	ck_assert_str_eq(set.items[set.n - 1].points.v[0], "latency_077");
	ck_assert_str_eq(set.items[set.n - 1].points.v[1], "latency_000");
	pg_chart_set_release(&set);
	json_decref(arr);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("charts");
	TCase *tc = tcase_create("charts");

	tcase_add_test(tc, nice_axis_steps);
	tcase_add_test(tc, tick_labels);
	tcase_add_test(tc, golden_figures);
	tcase_add_test(tc, frontier_figure_of_a_ladder);
	tcase_add_test(tc, regressed_metrics_first_and_no_empty_panels);
	tcase_add_test(tc, stems_are_file_safe);
	tcase_add_test(tc, large_sets_are_capped_flagged_first);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
