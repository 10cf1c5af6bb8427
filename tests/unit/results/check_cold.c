/* A cold first repeat (results/cold.h): the rule, in both directions and
 * for every repeat count; the point's median without it; and the data
 * layer the gate, the baselines and the history read, with the gate's note. */
#include "testutil.h"

#include "base/buf.h"
#include "base/jsonw.h"
#include "baseline/history.h"
#include "gate/compare.h"
#include "results/cold.h"
#include "results/metrics.h"
#include "results/repeats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Serving runs: TTFT (ms), TPOT (ms) and output throughput (tok/s) each. */
struct run3 {
	double ttft, tpot, tput;
};

static json_t *serving_run(const struct run3 *r)
{
	return json_pack("{s:f, s:f, s:f, s:f}", "median_ttft_ms", r->ttft, "median_tpot_ms",
			 r->tpot, "output_throughput", r->tput, "mean_ttft_ms", r->ttft * 1.2);
}

static void check_runs(struct pg_cold *c, enum pg_suite_kind kind, json_t **runs, size_t n)
{
	pg_cold_check(c, kind, (const json_t *const *)runs, n);
	for (size_t i = 0; i < n; i++)
		json_decref(runs[i]);
}

/* clang-format off */
static const struct {
	const char *what;
	struct run3 runs[5];
	size_t n;
	bool cold;
	const char *metric; /* the witness named, when cold */
	double change;      /* against the others' median in log terms: the
			     * geometric mean of the middle two for an even count */
} cases[] = {
	/* MI355X: repeat 1 +53% TTFT, the warm ones 1.8% apart */
	{ "cold TTFT", { { 153, 10.1, 998 }, { 100, 10, 1000 }, { 101.8, 10, 1001 } }, 3,
	  true, "median_ttft_ms", 1.53 / 1.00895986 - 1 },
	{ "warm first repeat, 3% slower: kept", { { 103, 10, 1000 }, { 100, 10, 1000 },
	  { 100.5, 10, 1000 } }, 3, false, NULL, 0 },
	{ "first repeat faster: never cold", { { 60, 8, 1100 }, { 100, 10, 1000 },
	  { 101, 10, 1000 } }, 3, false, NULL, 0 },
	/* +30%, but the others are 15% apart: 3 x 15% is the bar */
	{ "noisy others: kept", { { 130, 10, 1000 }, { 93, 10, 1000 }, { 108, 10, 1000 } }, 3,
	  false, NULL, 0 },
	/* a throughput 8% lower, latencies unmoved: higher is better */
	{ "cold throughput", { { 100, 10, 920 }, { 100, 10, 1000 }, { 100, 10, 1001 } }, 3,
	  true, "output_throughput", 0.92 / 1.00049988 - 1 },
	{ "throughput 4% lower: kept (5% floor)", { { 100, 10, 960 }, { 100, 10, 1000 },
	  { 100, 10, 1000 } }, 3, false, NULL, 0 },
	/* two repeats: no spread of the others, the floor 1.5 x higher */
	{ "N=2, +20%", { { 120, 10, 1000 }, { 100, 10, 1000 } }, 2, true, "median_ttft_ms", 0.2 },
	{ "N=2, +12%: kept", { { 112, 10, 1000 }, { 100, 10, 1000 } }, 2, false, NULL, 0 },
	/* five repeats: the median of the other four, their range */
	{ "N=5", { { 140, 10, 1000 }, { 100, 10, 1000 }, { 101, 10, 1000 }, { 99, 10, 1000 },
	  { 100.5, 10, 1000 } }, 5, true, "median_ttft_ms", 1.40 / 1.00249688 - 1 },
	{ "one run: not checked", { { 500, 10, 1000 } }, 1, false, NULL, 0 },
};
/* clang-format on */

START_TEST(the_rule)
{
	for (size_t i = 0; i < N(cases); i++) {
		json_t *runs[5];
		struct pg_cold c;

		for (size_t k = 0; k < cases[i].n; k++)
			runs[k] = serving_run(&cases[i].runs[k]);
		check_runs(&c, PG_SUITE_SERVING, runs, cases[i].n);
		ck_assert_msg(c.cold == cases[i].cold, "%s: cold %d", cases[i].what, c.cold);
		ck_assert_msg(c.n == (cases[i].n > 1 ? cases[i].n : 0), "%s: n %zu", cases[i].what,
			      c.n);
		if (!cases[i].cold)
			continue;
		ck_assert_str_eq(c.metric->id, cases[i].metric);
		ck_assert_msg(fabs(c.change - cases[i].change) < 1e-6, "%s: change %g",
			      cases[i].what, c.change);
	}
}
END_TEST

START_TEST(the_thresholds)
{
	struct run3 r[3] = { { 153, 10, 1000 }, { 100, 10, 1000 }, { 101.8, 10, 1000 } };
	json_t *runs[3];
	struct pg_cold c;

	/* the others 1.8% apart: 3 x their log range is under the 10% floor */
	for (size_t k = 0; k < 3; k++)
		runs[k] = serving_run(&r[k]);
	check_runs(&c, PG_SUITE_SERVING, runs, 3);
	ck_assert_double_eq_tol(c.threshold, expm1(PG_COLD_FLOOR_LATENCY), 1e-12);
	/* 8% apart: the spread term decides */
	r[2].ttft = 108;
	for (size_t k = 0; k < 3; k++)
		runs[k] = serving_run(&r[k]);
	check_runs(&c, PG_SUITE_SERVING, runs, 3);
	ck_assert_double_eq_tol(c.threshold, expm1(3 * log(1.08)), 1e-12);
	ck_assert(c.cold); /* +47% beyond 26% */
	/* a throughput's bar is a drop: 1 - e^-0.05 */
	r[0] = (struct run3){ 100, 10, 900 };
	r[2] = (struct run3){ 100, 10, 1000 };
	for (size_t k = 0; k < 3; k++)
		runs[k] = serving_run(&r[k]);
	check_runs(&c, PG_SUITE_SERVING, runs, 3);
	ck_assert_str_eq(c.metric->id, "output_throughput");
	ck_assert_double_eq_tol(c.threshold, -expm1(-PG_COLD_FLOOR_THROUGHPUT), 1e-12);
}
END_TEST

/* Each suite has its witnesses; startup tests are cold on purpose; a
 * witness some run lacks is not one. */
START_TEST(suites_and_witnesses)
{
	json_t *runs[3];
	struct pg_cold c;
	static const double lat[] = { 0.5, 0.3, 0.301 };

	for (size_t k = 0; k < 3; k++)
		runs[k] = json_pack("{s:f, s:{s:f}}", "avg_latency", lat[k], "percentiles", "50",
				    lat[k]);
	check_runs(&c, PG_SUITE_LATENCY, runs, 3);
	ck_assert(c.cold);
	ck_assert_str_eq(c.metric->id, "median_latency_ms");

	for (size_t k = 0; k < 3; k++)
		runs[k] = json_pack("{s:f}", "requests_per_second", k ? 50.0 : 40.0);
	check_runs(&c, PG_SUITE_THROUGHPUT, runs, 3);
	ck_assert(c.cold);
	ck_assert_str_eq(c.metric->id, "requests_per_second");

	for (size_t k = 0; k < 3; k++)
		runs[k] = json_pack("{s:f}", "avg_cold_startup_time", k ? 1.0 : 9.0);
	check_runs(&c, PG_SUITE_STARTUP, runs, 3);
	ck_assert(!c.cold);
	ck_assert_uint_eq(c.n, 0);

	/* mean TTFT is no witness, and TTFT missing in run 2 leaves TPOT */
	runs[0] = json_pack("{s:f, s:f, s:f}", "median_ttft_ms", 300.0, "mean_ttft_ms", 300.0,
			    "median_tpot_ms", 10.0);
	runs[1] = json_pack("{s:f, s:f}", "mean_ttft_ms", 100.0, "median_tpot_ms", 10.0);
	runs[2] = json_pack("{s:f, s:f, s:f}", "median_ttft_ms", 100.0, "mean_ttft_ms", 100.0,
			    "median_tpot_ms", 10.01);
	check_runs(&c, PG_SUITE_SERVING, runs, 3);
	ck_assert(!c.cold);
	ck_assert_str_eq(c.metric->id, "median_tpot_ms");
}
END_TEST

/* A serving result of runs (TTFT, throughput each), as perfgate run or an
 * import writes it: the top level is the median of every run. */
static json_t *result_of(const double (*runs)[2], size_t n)
{
	json_t *reps = json_array();
	double ttft[8], tput[8];

	for (size_t i = 0; i < n; i++) {
		json_array_append_new(reps, json_pack("{s:f, s:f}", "median_ttft_ms", runs[i][0],
						      "output_throughput", runs[i][1]));
		ttft[i] = runs[i][0];
		tput[i] = runs[i][1];
	}
	return json_pack("{s:f, s:f, s:s, s:{s:s, s:s, s:s, s:o}}", "median_ttft_ms",
			 pg_median(ttft, n), "output_throughput", pg_median(tput, n),
			 "request_rate", "inf", "perfgate", "suite", "serving", "test", "serving_t",
			 "status", "ok", "repeats", reps);
}

START_TEST(apply_to_an_imported_result)
{
	static const double cold[3][2] = { { 150, 900 }, { 100, 1000 }, { 102, 1002 } };
	static const double warm[3][2] = { { 101, 1000 }, { 100, 1000 }, { 102, 1002 } };
	json_t *r = result_of(cold, 3), *w = result_of(warm, 3);
	struct pg_cold c;
	struct pg_buf note = PG_BUF_INIT;

	ck_assert(pg_cold_apply(r, &c));
	/* the top level is the others' median now */
	ck_assert_double_eq(json_number_value(json_object_get(r, "median_ttft_ms")), 101);
	ck_assert_double_eq(json_number_value(json_object_get(r, "output_throughput")), 1001);
	ck_assert_int_eq(pg_cold_left_out(r), 0);
	pg_cold_note(&note, &c);
	ck_assert_str_eq(note.ptr,
			 "repeat 1 of 3 cold: median TTFT +48.5% vs the others, left out");
	ck_assert_str_eq(pg_cold_result_note(r), note.ptr);
	ck_assert_str_eq(json_string_value(pg_json_path(r, "perfgate.cold_repeat.metric")),
			 "median_ttft_ms");
	ck_assert_int_eq(json_integer_value(pg_json_path(r, "perfgate.cold_repeat.of")), 3);
	/* once: checked results are left alone */
	ck_assert(!pg_cold_apply(r, NULL));
	ck_assert_int_eq(pg_cold_left_out(r), 0);

	ck_assert(!pg_cold_apply(w, &c));
	ck_assert_uint_eq(c.n, 3);
	ck_assert_int_eq(pg_cold_left_out(w), -1);
	ck_assert_ptr_null(pg_cold_result_note(w));
	ck_assert_double_eq(json_number_value(json_object_get(w, "median_ttft_ms")), 101);

	/* an A/B side's blocks each follow a start of their own: not checked */
	json_decref(w);
	w = result_of(cold, 3);
	json_object_set_new(json_object_get(w, "perfgate"), "ab", json_object());
	ck_assert(!pg_cold_apply(w, NULL));
	pg_buf_release(&note);
	json_decref(r);
	json_decref(w);
}
END_TEST

/* The gate, `baseline update` and `baseline record` read a point's samples
 * through one function: the cold run is in none of them. */
START_TEST(samples_history_and_baselines_leave_it_out)
{
	static const double cold[3][2] = { { 150, 900 }, { 100, 1000 }, { 102, 1002 } };
	json_t *r = result_of(cold, 3);
	const struct pg_metric *ttft = pg_metric_by_id(PG_SUITE_SERVING, "median_ttft_ms");
	struct pg_cmp_point p = { "serving_t_qps_inf", PG_SUITE_SERVING, "ok", r, NULL };
	struct pg_cmp_run run = { "results", &p, 1 };
	struct pg_baseline base = PG_BASELINE_INIT;
	const struct pg_base_metric *bm;
	double *xs;
	json_t *line;

	/* before the check, every run is a sample */
	ck_assert_uint_eq(pg_result_samples(r, ttft, &xs), 3);
	free(xs);
	pg_cold_apply(r, NULL);
	ck_assert_uint_eq(pg_result_samples(r, ttft, &xs), 2);
	ck_assert_double_eq(xs[0], 100);
	ck_assert_double_eq(xs[1], 102);
	free(xs);

	line = pg_history_line(
		&p, &(struct pg_history_meta){ "abc", "2026-01-01T00:00:00Z", NULL, "main" });
	ck_assert_int_eq(json_integer_value(json_object_get(line, "repeats")), 2);
	ck_assert_uint_eq(json_array_size(pg_json_path(line, "metrics.median_ttft_ms")), 2);
	json_decref(line);

	pg_baseline_from_runs(&base, &run, 1, NULL);
	bm = pg_base_point_metric(pg_baseline_find(&base, "serving_t_qps_inf"), ttft);
	ck_assert_uint_eq(bm->n_samples, 2);
	ck_assert_double_eq(bm->value, 101);
	pg_baseline_release(&base);
	json_decref(r);
}
END_TEST

/* The comparison names every point whose cold run it left out, in the
 * markdown and in verdict.json. */
START_TEST(the_gate_says_so)
{
	static const double cold[3][2] = { { 150, 900 }, { 100, 1000 }, { 102, 1002 } };
	json_t *r = result_of(cold, 3), *j;
	struct pg_cmp_point run[] = { { "serving_t_qps_inf", PG_SUITE_SERVING, "ok", r, NULL } };
	struct pg_policy policy;
	struct pg_baseline base = PG_BASELINE_INIT;
	struct pg_comparison c;
	struct pg_buf md = PG_BUF_INIT;
	const double xs[] = { 100, 101, 99 }, ys[] = { 1000, 1001, 999 };
	struct pg_base_point *bp;

	pg_cold_apply(r, NULL);
	pg_policy_init(&policy);
	base.kind = strdup("thresholds");
	bp = pg_baseline_add(&base, "serving_t_qps_inf", PG_SUITE_SERVING);
	pg_base_point_add_metric(bp, pg_metric_by_id(PG_SUITE_SERVING, "median_ttft_ms"), NAN, xs,
				 3);
	pg_base_point_add_metric(bp, pg_metric_by_id(PG_SUITE_SERVING, "output_throughput"), NAN,
				 ys, 3);
	pg_compare(&c, &policy, &base, run, 1, run, 1, NULL);
	ck_assert_uint_eq(c.cold_points.n, 2);
	ck_assert_str_eq(c.cold_points.v[0], "serving_t_qps_inf");
	ck_assert_str_eq(c.cold_points.v[1], "serving_t_qps_inf (re-run)");
	/* judged on the warm runs: unchanged, not a 48% regression */
	ck_assert_int_eq(c.outcome, PG_OUTCOME_PASS);
	pg_comparison_markdown(&md, &c);
	ck_assert_ptr_nonnull(strstr(md.ptr, "Cold first runs: `serving_t_qps_inf` (repeat 1 of 3 "
					     "cold: median TTFT +48.5% vs the others, left out)"));
	j = pg_comparison_json(&c);
	ck_assert_str_eq(json_string_value(pg_json_path(
				 json_array_get(json_object_get(j, "cold_repeats"), 0), "note")),
			 "repeat 1 of 3 cold: median TTFT +48.5% vs the others, left out");
	json_decref(j);
	pg_buf_release(&md);
	pg_comparison_release(&c);
	pg_baseline_release(&base);
	pg_policy_release(&policy);
	json_decref(r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cold");
	TCase *tc = tcase_create("cold");

	tcase_add_test(tc, the_rule);
	tcase_add_test(tc, the_thresholds);
	tcase_add_test(tc, suites_and_witnesses);
	tcase_add_test(tc, apply_to_an_imported_result);
	tcase_add_test(tc, samples_history_and_baselines_leave_it_out);
	tcase_add_test(tc, the_gate_says_so);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
