/* The gate's pure core: statistics, one decision, policy rules, whole
 * comparisons and their rendering. */
#include "testutil.h"

#include "base/buf.h"
#include "base/error.h"
#include "gate/attention.h"
#include "gate/compare.h"
#include "gate/compare_stats.h"
#include "gate/gate_io.h"
#include "base/jsonw.h"
#include "results/metrics.h"
#include "results/results_io.h"
#include "trends/trends.h"
#include "sys/fsutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------ */
/* Statistics                                                          */

START_TEST(median_mad_and_spread)
{
	const double odd[] = { 3, 1, 2 }, even[] = { 4, 1, 3, 2 }, one[] = { 7 };
	const double outlier[] = { 10, 10.1, 9.9, 10.05, 30 };

	ck_assert(isnan(pg_cmpstat_median(NULL, 0)));
	ck_assert_double_eq(pg_cmpstat_median(one, 1), 7);
	ck_assert_double_eq(pg_cmpstat_median(odd, 3), 2);
	ck_assert_double_eq(pg_cmpstat_median(even, 4), 2.5);
	ck_assert_double_eq(odd[0], 3); /* the input is not sorted in place */
	ck_assert_double_eq(pg_cmpstat_mad(even, 4), 1);
	/* one wild repeat moves neither the median nor the robust spread much */
	ck_assert_double_eq_tol(pg_cmpstat_median(outlier, 5), 10.05, 1e-12);
	ck_assert_double_lt(pg_cmpstat_robust_cv(outlier, 5), 0.015);
	ck_assert(isnan(pg_cmpstat_robust_cv(one, 1)));
}
END_TEST

/* Expected values: exhaustive enumeration of rank assignments (small
 * samples) and scipy.stats.mannwhitneyu(alternative='greater') for the
 * normal approximation. */
/* clang-format off */
static const struct {
	double x[6];
	size_t nx;
	double y[6];
	size_t ny;
	double u, p;
} mwu_cases[] = {
	{ { 5, 6, 7, 8, 9 }, 5, { 1, 2, 3, 4, 5.5 }, 5, 24, 2.0 / 252 },
	{ { 9, 8, 7, 6, 10 }, 5, { 1, 2, 3, 4, 5 }, 5, 25, 1.0 / 252 },
	{ { 1.1, 2.2, 3.3 }, 3, { 1.0, 2.0, 3.0 }, 3, 6, 0.35 },
	{ { 3, 4 }, 2, { 1, 2, 5, 6, 7 }, 5, 4, 5.0 / 7 },
	{ { 1, 2, 3, 4, 5 }, 5, { 6, 7, 8, 9, 10 }, 5, 0, 1 },
};
/* clang-format on */

START_TEST(mann_whitney_exact)
{
	for (size_t i = 0; i < N(mwu_cases); i++) {
		double u, p = pg_cmpstat_mwu_greater(mwu_cases[i].x, mwu_cases[i].nx,
						     mwu_cases[i].y, mwu_cases[i].ny, &u);
		ck_assert_double_eq(u, mwu_cases[i].u);
		ck_assert_msg(fabs(p - mwu_cases[i].p) < 1e-12, "case %zu: p %.17g, want %.17g", i,
			      p, mwu_cases[i].p);
	}
	ck_assert_double_eq_tol(pg_cmpstat_mwu_min_p(5, 5), 1.0 / 252, 1e-15);
	ck_assert_double_eq_tol(pg_cmpstat_mwu_min_p(3, 3), 0.05, 1e-15);
	ck_assert(isnan(pg_cmpstat_mwu_greater(NULL, 0, mwu_cases[0].y, 5, NULL)));
}
END_TEST

START_TEST(mann_whitney_ties_and_large_samples)
{
	double x[60], y[60], u;
	/* ties inside the exact range: U counts them half, p stays conservative */
	const double tx[] = { 10, 11, 12, 13, 14, 15 }, ty[] = { 1, 2, 3, 12.5, 16 };
	const double hx[] = { 2, 2, 3 }, hy[] = { 1, 2, 2 };

	ck_assert_double_eq_tol(pg_cmpstat_mwu_greater(tx, 6, ty, 5, &u), 0.16450216450216451,
				1e-12);
	ck_assert_double_eq(u, 21);
	pg_cmpstat_mwu_greater(hx, 3, hy, 3, &u);
	ck_assert_double_eq(u, 7); /* 2 > 1 twice, 2 = 2 four halves, 3 beats all */

	/* 60 x 60 = 3600 pairs: the normal approximation, as scipy computes it */
	for (int i = 0; i < 60; i++) {
		x[i] = i + 0.5 * (i % 3);
		y[i] = i - 3;
	}
	ck_assert_double_eq_tol(pg_cmpstat_mwu_greater(x, 60, y, 60, &u), 0.1432998531445681, 1e-9);
	ck_assert_double_eq(u, 2003.5);
	{
		static const double a[] = { 1, 1, 2, 2, 3, 3 }, b[] = { 1, 2, 2, 3, 3, 3 };
		for (int i = 0; i < 60; i++) {
			x[i] = a[i % 6];
			y[i] = b[i % 6];
		}
		ck_assert_double_eq_tol(pg_cmpstat_mwu_greater(y, 60, x, 60, &u),
					0.012495914194372364, 1e-9);
		ck_assert_double_eq(u, 2200);
	}
}
END_TEST

START_TEST(wilson_interval)
{
	double lo, hi;

	pg_cmpstat_wilson(50, 100, 1.959964, &lo, &hi);
	ck_assert_double_eq_tol(lo, 0.40383, 1e-4);
	ck_assert_double_eq_tol(hi, 0.59617, 1e-4);
	pg_cmpstat_wilson(0, 20000, 1.959964, &lo, &hi);
	ck_assert_double_eq(lo, 0);
	ck_assert_double_lt(hi, 0.0002);
	pg_cmpstat_wilson(0, 0, 1.959964, &lo, &hi);
	ck_assert_double_eq(lo, 0);
	ck_assert_double_eq(hi, 1);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Policy                                                              */

START_TEST(policy_layers)
{
	struct pg_policy p;
	struct pg_rule r;
	const struct pg_metric *tput = pg_metric_by_id(PG_SUITE_SERVING, "output_throughput");
	const struct pg_metric *p99 = pg_metric_by_id(PG_SUITE_SERVING, "p99_ttft_ms");
	const struct pg_metric *ttft = pg_metric_by_id(PG_SUITE_SERVING, "median_ttft_ms");
	struct pg_rule_patch tol5 = { PG_RULE_TOLERANCE, { .tolerance = 0.05 } };
	struct pg_rule_patch tol9 = { PG_RULE_TOLERANCE, { .tolerance = 0.09 } };
	struct pg_rule_patch nogate = { PG_RULE_GATE, { .gate = false } };

	pg_policy_init(&p);
	pg_policy_rule(&p, "serving_x_qps_1", NULL, tput, &r);
	ck_assert(r.gate);
	ck_assert_double_eq(r.tolerance, tput->tolerance);
	ck_assert_double_eq(r.escalate, 0);
	pg_policy_rule(&p, "serving_x_qps_1", NULL, p99, &r);
	ck_assert(!r.gate);
	ck_assert_double_eq(r.escalate, PG_DEFAULT_ESCALATE);
	ck_assert_double_eq(p.step_false_alarm, PG_DEFAULT_STEP_FALSE_ALARM);

	/* tests: entries come after metrics: entries whatever the order given */
	pg_policy_add(&p, "serving_*_qps_inf", "median_ttft_ms", &tol9, 3);
	pg_policy_add(&p, NULL, "median_ttft_ms", &tol5, 1);
	pg_policy_add(&p, "serving_y", "*", &nogate, 5);
	pg_policy_rule(&p, "serving_x_qps_1", NULL, ttft, &r);
	ck_assert_double_eq(r.tolerance, 0.05);
	ck_assert(r.gate);
	pg_policy_rule(&p, "serving_x_qps_inf", NULL, ttft, &r);
	ck_assert_double_eq(r.tolerance, 0.09);
	/* a test name matches every point of the test */
	pg_policy_rule(&p, "serving_y_qps_4", "serving_y", tput, &r);
	ck_assert(!r.gate);
	pg_policy_rule(&p, "serving_y_qps_4", NULL, tput, &r);
	ck_assert(r.gate);
	pg_policy_release(&p);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Whole comparisons                                                   */

/* A serving result with repeats: value[i] for output_throughput and
 * median_ttft_ms times the spread pattern. */
static json_t *serving_result(double tput, double ttft, const char *status, const char *error)
{
	static const double pattern[] = { 1.0, 1.004, 0.997, 1.002, 0.998 };
	json_t *r = json_object(), *pg = json_object(), *reps = json_array();

	for (size_t i = 0; i < N(pattern); i++) {
		json_t *one = json_object();
		json_object_set_new(one, "output_throughput", json_real(tput * pattern[i]));
		json_object_set_new(one, "median_ttft_ms", json_real(ttft * pattern[i]));
		json_array_append_new(reps, one);
	}
	json_object_set_new(pg, "suite", json_string("serving"));
	json_object_set_new(pg, "test", json_string("serving_t"));
	json_object_set_new(pg, "status", json_string(status));
	json_object_set_new(pg, "error", error ? json_string(error) : json_null());
	json_object_set_new(pg, "repeats", reps);
	json_object_set_new(r, "request_rate", json_string("inf"));
	json_object_set_new(r, "perfgate", pg);
	return r;
}

static void base_point(struct pg_baseline *b, const char *name, double tput, double ttft)
{
	static const double pattern[] = { 1.0, 1.003, 0.998, 1.001, 0.999 };
	double xs[5];
	struct pg_base_point *p = pg_baseline_add(b, name, PG_SUITE_SERVING);

	for (size_t i = 0; i < 5; i++)
		xs[i] = tput * pattern[i];
	pg_base_point_add_metric(p, pg_metric_by_id(PG_SUITE_SERVING, "output_throughput"), NAN, xs,
				 5);
	for (size_t i = 0; i < 5; i++)
		xs[i] = ttft * pattern[i];
	pg_base_point_add_metric(p, pg_metric_by_id(PG_SUITE_SERVING, "median_ttft_ms"), NAN, xs,
				 5);
}

static const struct pg_cmp_row *find_row(const struct pg_comparison *c, const char *point,
					 const char *metric)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->rows[i].point, point) &&
		    (metric ? c->rows[i].metric && !strcmp(c->rows[i].metric->id, metric)
			    : !c->rows[i].metric))
			return &c->rows[i];
	ck_abort_msg("no row %s %s", point, metric ? metric : "(point)");
	return NULL;
}

/* ------------------------------------------------------------------ */
/* A pair judged by its tolerance alone (one point, no job history)    */

struct tol_case {
	const char *what;
	const char *metric;
	double base;  /* the published value */
	double noise; /* its recorded run-to-run noise, NAN */
	double cur[5];
	enum pg_verdict verdict;
	enum pg_outcome outcome;
};

/* clang-format off */
static const struct tol_case tol_cases[] = {
	{ "within tolerance", "median_ttft_ms", 100, NAN, { 102, 101, 103, 102, 102 },
	  PG_VERDICT_UNCHANGED, PG_OUTCOME_PASS },
	{ "10% slower", "median_ttft_ms", 100, NAN, { 110, 111, 109, 110, 110 },
	  PG_VERDICT_REGRESSED, PG_OUTCOME_FAIL },
	{ "5% slower but under the 1 ms floor", "median_ttft_ms", 10, NAN, { 10.5, 10.5, 10.5, 10.5, 10.5 },
	  PG_VERDICT_UNCHANGED, PG_OUTCOME_PASS },
	{ "throughput 10% lower", "output_throughput", 1000, NAN, { 900, 900, 900, 900, 900 },
	  PG_VERDICT_REGRESSED, PG_OUTCOME_FAIL },
	{ "throughput 10% higher", "output_throughput", 1000, NAN, { 1100, 1100, 1100, 1100, 1100 },
	  PG_VERDICT_IMPROVED, PG_OUTCOME_PASS },
	/* an improvement passes the tolerance as the row shows it: -6.7% is
	 * within 7% (its log, 0.069, is past log 1.07) */
	{ "tail 6.7% lower: within its 7%", "p99_ttft_ms", 100, NAN, { 93.3, 93.3, 93.3, 93.3, 93.3 },
	  PG_VERDICT_UNCHANGED, PG_OUTCOME_PASS },
	{ "tail 7.1% lower: improved", "p99_ttft_ms", 100, NAN, { 92.9, 92.9, 92.9, 92.9, 92.9 },
	  PG_VERDICT_IMPROVED, PG_OUTCOME_PASS },
	{ "TTFT 3.9% lower: within its 4%", "median_ttft_ms", 100, NAN, { 96.1, 96.1, 96.1, 96.1, 96.1 },
	  PG_VERDICT_UNCHANGED, PG_OUTCOME_PASS },
	{ "throughput 2.6% higher: improved", "output_throughput", 1000, NAN, { 1026, 1026, 1026, 1026, 1026 },
	  PG_VERDICT_IMPROVED, PG_OUTCOME_PASS },
	{ "recorded noise widens the tolerance", "median_ttft_ms", 100, 0.05, { 106, 106, 106, 106, 106 },
	  PG_VERDICT_UNCHANGED, PG_OUTCOME_PASS },
	/* a tail beyond escalation on one run alone is a spike: it fails
	 * when a re-run confirms it (or main's newest run repeats it) */
	{ "tail 10% worse: beyond escalation, once", "p99_ttft_ms", 100, NAN, { 110, 110, 110, 110, 110 },
	  PG_VERDICT_REGRESSED, PG_OUTCOME_WARN },
	{ "tail 7.5% worse: warns only", "p99_ttft_ms", 100, NAN, { 107.5, 107.5, 107.5, 107.5, 107.5 },
	  PG_VERDICT_REGRESSED, PG_OUTCOME_WARN },
	{ "zero baseline", "median_ttft_ms", 0, NAN, { 5, 5, 5, 5, 5 },
	  PG_VERDICT_REGRESSED, PG_OUTCOME_FAIL },
	/* the median absorbs one wild repeat of five */
	{ "one repeat 40% slower", "median_ttft_ms", 100, NAN, { 101, 100, 140, 101, 100 },
	  PG_VERDICT_UNCHANGED, PG_OUTCOME_PASS },
	{ "one repeat at 30% of the throughput", "output_throughput", 1000, NAN, { 1000, 300, 1010, 990, 1000 },
	  PG_VERDICT_UNCHANGED, PG_OUTCOME_PASS },
};
/* clang-format on */

START_TEST(tolerance_table)
{
	const struct tol_case *tc = &tol_cases[_i];
	const struct pg_metric *m = pg_metric_by_id(PG_SUITE_SERVING, tc->metric);
	struct pg_policy policy;
	struct pg_baseline base = PG_BASELINE_INIT;
	struct pg_comparison c;
	json_t *r = json_object(), *pg = json_object(), *reps = json_array();
	struct pg_cmp_point run[] = { { "p", PG_SUITE_SERVING, "ok", r, NULL } };
	struct pg_base_metric *bm;
	const struct pg_cmp_row *row;

	for (size_t i = 0; i < 5; i++) {
		json_t *one = json_object();
		json_object_set_new(one, m->key, json_real(tc->cur[i]));
		json_array_append_new(reps, one);
	}
	json_object_set_new(pg, "suite", json_string("serving"));
	json_object_set_new(pg, "repeats", reps);
	json_object_set_new(r, "perfgate", pg);
	pg_policy_init(&policy);
	base.kind = strdup("thresholds");
	bm = pg_base_point_add_metric(pg_baseline_add(&base, "p", PG_SUITE_SERVING), m, tc->base,
				      NULL, 0);
	bm->noise = tc->noise;
	pg_compare(&c, &policy, &base, run, 1, NULL, 0, NULL);
	row = find_row(&c, "p", tc->metric);
	ck_assert_msg(row->verdict == tc->verdict, "%s: verdict %s, want %s", tc->what,
		      pg_verdict_name(row->verdict), pg_verdict_name(tc->verdict));
	ck_assert_msg(row->outcome == tc->outcome, "%s: outcome %s", tc->what,
		      pg_outcome_name(row->outcome));
	ck_assert_int_eq(row->method, PG_METHOD_TOLERANCE);
	/* the file states no noise: the run's own repeats measure it, so a
	 * change beyond the tolerance they cannot explain fails */
	ck_assert_msg(!isnan(row->p_value), "%s: no p-value", tc->what);
	ck_assert_double_eq(row->current, pg_cmpstat_median(tc->cur, 5));
	if (!isnan(tc->noise))
		ck_assert_double_eq_tol(row->tolerance, expm1(1.6 * tc->noise), 1e-12);
	pg_comparison_release(&c);
	pg_baseline_release(&base);
	pg_policy_release(&policy);
	json_decref(r);
}
END_TEST

START_TEST(compare_every_verdict)
{
	struct pg_policy policy;
	struct pg_baseline base = PG_BASELINE_INIT;
	struct pg_comparison c;
	json_t *same = serving_result(1000, 50, "ok", NULL),
	       *slow = serving_result(900, 56, "ok", NULL);
	json_t *fresh = serving_result(500, 20, "ok", NULL);
	json_t *failed = serving_result(0, 0, "error", "server never became ready");
	json_t *skipped = serving_result(0, 0, "skipped", "tp 8 needs 8 GPUs");
	/* clang-format off */
	struct pg_cmp_point run[] = {
		{ "a_same", PG_SUITE_SERVING, "ok", same, NULL },
		{ "b_slow", PG_SUITE_SERVING, "ok", slow, NULL },
		{ "d_new", PG_SUITE_SERVING, "ok", fresh, NULL },
		{ "e_failed", PG_SUITE_SERVING, "error", failed, NULL },
		{ "f_skipped", PG_SUITE_SERVING, "skipped", skipped, NULL },
	};
	/* clang-format on */

	pg_policy_init(&policy);
	base.gpu = strdup("H100");
	base.kind = strdup("thresholds");
	base_point(&base, "a_same", 1000, 50);
	base_point(&base, "b_slow", 1000, 50);
	base_point(&base, "c_missing", 1000, 50);
	base_point(&base, "e_failed", 1000, 50);
	base_point(&base, "f_skipped", 1000, 50);
	pg_baseline_sort(&base);

	pg_compare(&c, &policy, &base, run, N(run), NULL, 0, NULL);
	ck_assert_int_eq(find_row(&c, "a_same", "output_throughput")->verdict,
			 PG_VERDICT_UNCHANGED);
	ck_assert_int_eq(find_row(&c, "b_slow", "output_throughput")->verdict,
			 PG_VERDICT_REGRESSED);
	ck_assert_int_eq(find_row(&c, "b_slow", "output_throughput")->outcome, PG_OUTCOME_FAIL);
	ck_assert(find_row(&c, "b_slow", "median_ttft_ms")->needs_confirmation);
	ck_assert_double_eq_tol(find_row(&c, "b_slow", "median_ttft_ms")->change, 0.12, 1e-9);
	ck_assert_int_eq(find_row(&c, "c_missing", NULL)->verdict, PG_VERDICT_MISSING);
	ck_assert_int_eq(find_row(&c, "c_missing", NULL)->outcome, PG_OUTCOME_INFRA);
	ck_assert_int_eq(find_row(&c, "d_new", "output_throughput")->verdict, PG_VERDICT_NEW);
	ck_assert_int_eq(find_row(&c, "e_failed", NULL)->verdict, PG_VERDICT_ERROR);
	ck_assert_str_eq(find_row(&c, "e_failed", NULL)->note, "failed: server never became ready");
	ck_assert_int_eq(find_row(&c, "f_skipped", NULL)->verdict, PG_VERDICT_MISSING);
	ck_assert_int_eq(find_row(&c, "f_skipped", NULL)->outcome, PG_OUTCOME_WARN);
	ck_assert(isinf(find_row(&c, "a_same", "median_ttft_ms")->qps));
	/* a regression outranks missing results: exit 1, not 3 */
	ck_assert_int_eq(c.outcome, PG_OUTCOME_FAIL);
	ck_assert_int_eq(pg_outcome_exit_code(c.outcome), 1);
	/* judged by the tolerance alone: no anchors, the flagged point only */
	ck_assert_uint_eq(c.rerun.n, 1);
	ck_assert_str_eq(c.rerun.v[0], "b_slow");
	ck_assert_uint_eq(c.counts[PG_VERDICT_REGRESSED], 2);
	ck_assert_uint_eq(c.counts[PG_VERDICT_NEW], 2);
	pg_comparison_release(&c);

	/* without the regression, the missing point decides: exit 3 ... */
	run[1].result = same;
	pg_compare(&c, &policy, &base, run, N(run), NULL, 0, NULL);
	ck_assert_int_eq(c.outcome, PG_OUTCOME_INFRA);
	ck_assert_int_eq(pg_outcome_exit_code(c.outcome), 3);
	pg_comparison_release(&c);
	/* ... unless missing points are allowed; the error still counts */
	pg_compare(&c, &policy, &base, run, N(run), NULL, 0,
		   &(struct pg_compare_opts){ .allow_missing = true });
	ck_assert_int_eq(find_row(&c, "c_missing", NULL)->outcome, PG_OUTCOME_WARN);
	ck_assert_int_eq(c.outcome, PG_OUTCOME_INFRA);
	pg_comparison_release(&c);
	pg_compare(&c, &policy, &base, run, 3, NULL, 0,
		   &(struct pg_compare_opts){ .allow_missing = true });
	ck_assert_int_eq(c.outcome, PG_OUTCOME_WARN);
	pg_comparison_release(&c);

	json_decref(same);
	json_decref(slow);
	json_decref(fresh);
	json_decref(failed);
	json_decref(skipped);
	pg_baseline_release(&base);
	pg_policy_release(&policy);
}
END_TEST

START_TEST(confirmation_replicates)
{
	struct pg_policy policy;
	struct pg_baseline base = PG_BASELINE_INIT;
	struct pg_comparison c;
	json_t *slow = serving_result(960, 50, "ok", NULL),
	       *again_slow = serving_result(955, 50, "ok", NULL);
	json_t *again_fine = serving_result(1001, 50, "ok", NULL);
	json_t *again_failed = serving_result(0, 0, "error", "out of memory");
	struct pg_cmp_point run[] = { { "p", PG_SUITE_SERVING, "ok", slow, NULL } };
	struct pg_cmp_point again[] = { { "p", PG_SUITE_SERVING, "ok", again_slow, NULL } };
	const struct pg_cmp_row *r;

	pg_policy_init(&policy);
	base.kind = strdup("thresholds");
	base_point(&base, "p", 1000, 50);

	pg_compare(&c, &policy, &base, run, 1, NULL, 0, NULL);
	r = find_row(&c, "p", "output_throughput");
	ck_assert_int_eq(r->verdict, PG_VERDICT_REGRESSED);
	ck_assert(r->needs_confirmation && !r->confirmed);
	pg_comparison_release(&c);

	pg_compare(&c, &policy, &base, run, 1, again, 1, NULL);
	r = find_row(&c, "p", "output_throughput");
	ck_assert_int_eq(r->verdict, PG_VERDICT_REGRESSED);
	ck_assert(r->confirmed);
	/* each run stands on its own: nothing pooled */
	ck_assert_uint_eq(r->n_current, 5);
	ck_assert_uint_eq(r->rerun.n, 5);
	ck_assert_double_eq_tol(r->rerun.change, -0.045, 1e-9);
	ck_assert_int_eq(c.outcome, PG_OUTCOME_FAIL);
	ck_assert_uint_eq(c.rerun.n, 0);
	pg_comparison_release(&c);

	/* a re-run within the tolerance vetoes it */
	again[0].result = again_fine;
	pg_compare(&c, &policy, &base, run, 1, again, 1, NULL);
	r = find_row(&c, "p", "output_throughput");
	ck_assert_int_eq(r->verdict, PG_VERDICT_NOT_REPRODUCED);
	ck_assert(!r->confirmed);
	ck_assert_str_eq(r->note, "first run 4% worse; the re-run 0.1% better: not reproduced");
	ck_assert_int_eq(c.outcome, PG_OUTCOME_WARN);
	ck_assert_int_eq(pg_gate_exit_code(c.outcome, true), 0);
	pg_comparison_release(&c);

	again[0].result = again_failed;
	again[0].status = "error";
	pg_compare(&c, &policy, &base, run, 1, again, 1, NULL);
	ck_assert_int_eq(find_row(&c, "p", "output_throughput")->outcome, PG_OUTCOME_INFRA);
	ck_assert_int_eq(c.outcome, PG_OUTCOME_INFRA);
	pg_comparison_release(&c);

	json_decref(slow);
	json_decref(again_slow);
	json_decref(again_fine);
	json_decref(again_failed);
	pg_baseline_release(&base);
	pg_policy_release(&policy);
}
END_TEST

START_TEST(history_baselines_and_strict_mode)
{
	struct pg_policy policy;
	struct pg_baseline base = PG_BASELINE_INIT;
	struct pg_comparison c;
	json_t *fresh = serving_result(1000, 50, "ok", NULL);
	json_t *odd = json_object(), *pg = json_object(), *reps = json_array();
	struct pg_cmp_point run[] = { { "known", PG_SUITE_SERVING, "ok", fresh, NULL },
				      { "unknown", PG_SUITE_SERVING, "ok", fresh, NULL } };
	struct pg_base_point *p;
	static const double noisy[] = { 1000, 1100, 900, 1050, 950 };
	static const double overlapping[] = { 1080, 880, 930, 870, 1000 };

	pg_policy_init(&policy);
	base.kind = strdup("git");
	p = pg_baseline_add(&base, "known", PG_SUITE_SERVING);
	p->insufficient = strdup("3 runs in the history, 5 needed");
	pg_base_point_add_metric(p, pg_metric_by_id(PG_SUITE_SERVING, "output_throughput"), 1000,
				 NULL, 0);
	pg_compare(&c, &policy, &base, run, 2, NULL, 0, NULL);
	ck_assert_int_eq(find_row(&c, "known", "output_throughput")->verdict,
			 PG_VERDICT_INSUFFICIENT);
	ck_assert_str_eq(find_row(&c, "known", "output_throughput")->note,
			 "3 runs in the history, 5 needed");
	ck_assert_int_eq(find_row(&c, "unknown", "output_throughput")->verdict,
			 PG_VERDICT_INSUFFICIENT);
	ck_assert_int_eq(c.outcome, PG_OUTCOME_WARN);
	ck_assert_int_eq(pg_outcome_exit_code(c.outcome), 0);
	pg_comparison_release(&c);
	pg_baseline_release(&base);

	/* a gating metric beyond its tolerance but within the history's
	 * job-to-job spread is noisy: a warning, or flagged when strict */
	{
		static const long jobs[] = { 0, 1, 2, 3, 4 };
		base.kind = strdup("git");
		p = pg_baseline_add(&base, "known", PG_SUITE_SERVING);
		pg_base_point_add_jobs(p, pg_metric_by_id(PG_SUITE_SERVING, "output_throughput"),
				       noisy, jobs, 5);
	}
	for (size_t i = 0; i < 5; i++) {
		json_t *one = json_object();
		json_object_set_new(one, "output_throughput", json_real(overlapping[i]));
		json_array_append_new(reps, one);
	}
	json_object_set_new(pg, "suite", json_string("serving"));
	json_object_set_new(pg, "repeats", reps);
	json_object_set_new(odd, "perfgate", pg);
	run[0].result = odd;
	pg_compare(&c, &policy, &base, run, 1, NULL, 0, NULL);
	ck_assert_int_eq(find_row(&c, "known", "output_throughput")->method, PG_METHOD_HISTORY);
	ck_assert_int_eq(find_row(&c, "known", "output_throughput")->verdict, PG_VERDICT_NOISY);
	ck_assert_int_eq(c.outcome, PG_OUTCOME_WARN);
	pg_comparison_release(&c);
	pg_compare(&c, &policy, &base, run, 1, NULL, 0,
		   &(struct pg_compare_opts){ .strict = true });
	ck_assert_int_eq(c.outcome, PG_OUTCOME_FAIL);
	pg_comparison_release(&c);
	/* strict and confirmed: the re-run must be beyond the tolerance too */
	pg_compare(&c, &policy, &base, run, 1, run, 1, &(struct pg_compare_opts){ .strict = true });
	ck_assert_int_eq(c.outcome, PG_OUTCOME_FAIL);
	pg_comparison_release(&c);

	json_decref(fresh);
	json_decref(odd);
	pg_baseline_release(&base);
	pg_policy_release(&policy);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Rendering                                                           */

/* The verdict JSON written in pieces is the whole document, byte for
 * byte; returns the number of pieces. */
static size_t json_in_pieces(const struct pg_comparison *c)
{
	struct pg_buf whole = PG_BUF_INIT, pieces = PG_BUF_INIT;
	struct pg_comparison_json_writer w = { .c = c };
	json_t *j = pg_comparison_json(c);
	size_t n = 0;

	pg_json_write(&whole, j, 2);
	pg_buf_putc(&whole, '\n');
	json_decref(j);
	for (int more = 1; more; n++)
		more = pg_comparison_json_next(&w, &pieces);
	ck_assert_str_eq(pieces.ptr, whole.ptr);
	pg_buf_release(&whole);
	pg_buf_release(&pieces);
	return n;
}

START_TEST(render_markdown_and_json)
{
	struct pg_policy policy;
	struct pg_baseline base = PG_BASELINE_INIT;
	struct pg_comparison c;
	json_t *slow = serving_result(900, 56, "ok", NULL),
	       *same = serving_result(1000, 50, "ok", NULL);
	json_t *failed = serving_result(0, 0, "error", "exit 1 | see <log>");
	/* clang-format off */
	struct pg_cmp_point run[] = {
		{ "serving_a|b_qps_inf", PG_SUITE_SERVING, "ok", slow, NULL },
		{ "serving_c_qps_inf", PG_SUITE_SERVING, "ok", same, NULL },
		{ "serving_d_qps_inf", PG_SUITE_SERVING, "error", failed, NULL },
	};
	/* clang-format on */
	struct pg_buf md = PG_BUF_INIT, js = PG_BUF_INIT;
	json_t *j;

	pg_policy_init(&policy);
	base.gpu = strdup("H100");
	base.kind = strdup("thresholds");
	base.source = strdup("thresholds/H100.yml");
	base_point(&base, "serving_a|b_qps_inf", 1000, 50);
	base_point(&base, "serving_c_qps_inf", 1000, 50);
	base_point(&base, "serving_d_qps_inf", 1000, 50);
	pg_compare(&c, &policy, &base, run, N(run), NULL, 0, NULL);
	pg_comparison_markdown(&md, &c);
	tu_assert_golden("golden/gate/render.md", md.ptr);
	j = pg_comparison_json(&c);
	pg_json_write(&js, j, 2);
	pg_buf_putc(&js, '\n');
	tu_assert_golden("golden/gate/render.json", js.ptr);
	json_decref(j);
	json_in_pieces(&c); /* what verdict.json gets */
	pg_buf_release(&md);
	pg_buf_release(&js);
	pg_comparison_release(&c);

	/* all clear: a PASS headline and nothing above the fold */
	run[0].result = same;
	pg_compare(&c, &policy, &base, run, 2, NULL, 0,
		   &(struct pg_compare_opts){ .allow_missing = true });
	pg_comparison_headline(&md, &c);
	ck_assert_str_eq(
		md.ptr,
		"**perfgate: PASS with warnings** — H100: no regressions in 3 tests, 1 with warnings");
	pg_buf_reset(&md);
	pg_comparison_attention_table(&md, &c);
	ck_assert(strstr(md.ptr, "serving_d_qps_inf"));
	pg_buf_release(&md);
	pg_comparison_release(&c);

	json_decref(slow);
	json_decref(same);
	json_decref(failed);
	pg_baseline_release(&base);
	pg_policy_release(&policy);
}
END_TEST

/* The evidence under the attention table says what the baseline rests on
 * and why the threshold is what it is: here five runs whose spread widens
 * the tolerance. */
START_TEST(evidence_names_the_baseline_and_the_widened_tolerance)
{
	static const double medians[] = { 1000, 1040, 970, 1010, 960 };
	struct pg_policy policy;
	struct pg_baseline base = PG_BASELINE_INIT;
	struct pg_comparison c;
	json_t *slow = serving_result(850, 50, "ok", NULL);
	struct pg_cmp_point run[] = { { "serving_a_qps_inf", PG_SUITE_SERVING, "ok", slow, NULL } };
	struct pg_base_point *p;
	const struct pg_cmp_row *r;
	struct pg_buf md = PG_BUF_INIT;

	pg_policy_init(&policy);
	base.gpu = strdup("H100");
	base.kind = strdup("thresholds");
	base.source = strdup("thresholds/H100.yml");
	p = pg_baseline_add(&base, "serving_a_qps_inf", PG_SUITE_SERVING);
	p->source = strdup("runs/nightly-*");
	p->date = strdup("2026-11-20");
	pg_base_point_add_runs(p, pg_metric_by_id(PG_SUITE_SERVING, "output_throughput"), medians,
			       N(medians));
	pg_compare(&c, &policy, &base, run, N(run), NULL, 0, NULL);
	r = find_row(&c, "serving_a_qps_inf", "output_throughput");
	ck_assert_int_eq(r->verdict, PG_VERDICT_REGRESSED);
	ck_assert(r->tolerance > 0.025);
	ck_assert_str_eq(r->basis, "median of 5 runs from runs/nightly-* (2026-11-20)");
	pg_comparison_markdown(&md, &c);
	ck_assert_msg(strstr(md.ptr, "- `serving_a_qps_inf` · Output token throughput (tok/s): 850 "
				     "against 1000 (-15.0%), the median of 5 runs from "
				     "runs/nightly-\\* (2026-11-20). Fails beyond -"),
		      "%s", md.ptr);
	ck_assert_msg(strstr(md.ptr, " (the policy's 2.5%, widened to 1.6 × the 4.4% the "
				     "baseline's runs vary by)."),
		      "%s", md.ptr);
	/* five runs behind the value: the noise they record is what the
	 * change is tested against, with its interval */
	ck_assert_msg(strstr(md.ptr, ". Tested against the run-to-run noise the baseline records: "
				     "noise alone gives so large a change with p = 0.018 (0.018 "
				     "allowing for the step's other tests). 95% interval of the "
				     "change: -26.5% to -1.8%. ["),
		      "%s", md.ptr);
	pg_buf_release(&md);
	pg_comparison_release(&c);
	json_decref(slow);
	pg_baseline_release(&base);
	pg_policy_release(&policy);
}
END_TEST

/* Student's t quantiles against scipy.stats.t.isf(p, df), and the interval
 * that inverts the gate's test. */
START_TEST(t_quantiles_and_intervals)
{
	/* clang-format off */
	static const struct { double p, df, q; } cases[] = {
		{ 0.025, 4, 2.7764451051977996 },  { 0.025, 1, 12.706204736432102 },
		{ 0.025, 10, 2.2281388519649385 }, { 0.025, 2.7, 3.392148383176445 },
		{ 0.05, 3.6, 2.2017602070588485 }, { 0.001, 30, 3.3851848668182165 },
	};
	/* clang-format on */
	double lo, hi;

	for (size_t i = 0; i < N(cases); i++) {
		double q = pg_cmpstat_t_quantile(cases[i].p, cases[i].df);
		ck_assert_msg(fabs(q - cases[i].q) < 1e-9 * cases[i].q,
			      "t(%g, %g) = %.17g, want %.17g", cases[i].p, cases[i].df, q,
			      cases[i].q);
		ck_assert_double_eq_tol(pg_cmpstat_t_quantile(1 - cases[i].p, cases[i].df), -q,
					1e-9 * q);
	}
	ck_assert_double_eq(pg_cmpstat_t_quantile(0.5, 3), 0);
	ck_assert(isnan(pg_cmpstat_t_quantile(0, 3)));
	ck_assert(isnan(pg_cmpstat_t_quantile(0.025, NAN)));
	/* 0.05 +- t(0.025, 4) x 0.01 */
	ck_assert(pg_cmpstat_t_interval(0.05, 0.01, 4, 0.95, &lo, &hi));
	ck_assert_double_eq_tol(lo, 0.05 - 0.027764451051977996, 1e-12);
	ck_assert_double_eq_tol(hi, 0.05 + 0.027764451051977996, 1e-12);
	/* nothing measured the noise: no interval */
	ck_assert(!pg_cmpstat_t_interval(0.05, NAN, 4, 0.95, &lo, &hi));
	ck_assert(isnan(lo) && isnan(hi));
	ck_assert(!pg_cmpstat_t_interval(0.05, 0.01, NAN, 0.95, &lo, &hi));
	/* a quantile beyond the bracket's cap (scipy: t.isf(0.025, 0.01) is
	 * past 1e18) is no number, and gives no interval */
	ck_assert(isnan(pg_cmpstat_t_quantile(0.025, 0.01)));
	ck_assert(!pg_cmpstat_t_interval(0.05, 0.01, 0.01, 0.95, &lo, &hi));
}
END_TEST

/* A regression against five runs of main: its interval computed by hand
 * (python3 with scipy, from the gate's history test: the runs' log values,
 * their leftovers from their median scaled by 1 / sqrt(1 - 0.43 / 5) for
 * what the median took out, their robust sd times sqrt(1 + pi / 2 / 5),
 * Student's t on 0.9 x 4 degrees of freedom), its basis and its chart. */
START_TEST(evidence_interval_basis_and_chart_against_the_history)
{
	static const double medians[] = { 1000, 1020, 990, 1010, 980 };
	static const long jobs[] = { 0, 1, 2, 3, 4 };
	static const char *const commits[] = {
		"1111111111111111111111111111111111111111",
		"2222222222222222222222222222222222222222",
		"3333333333333333333333333333333333333333",
		"4444444444444444444444444444444444444444",
		"5555555555555555555555555555555555555555",
	};
	struct pg_policy policy;
	struct pg_baseline base = PG_BASELINE_INIT;
	struct pg_comparison c;
	json_t *cur = json_object(), *pg = json_object();
	struct pg_cmp_point run[] = { { "serving_a_qps_inf", PG_SUITE_SERVING, "ok", cur, NULL } };
	struct pg_base_point *p;
	const struct pg_cmp_row *r;
	struct pg_buf md = PG_BUF_INIT, svg = PG_BUF_INIT;
	json_t *js, *basis;
	char day[32];

	json_object_set_new(pg, "suite", json_string("serving"));
	json_object_set_new(pg, "status", json_string("ok"));
	json_object_set_new(cur, "perfgate", pg);
	json_object_set_new(cur, "request_rate", json_string("inf"));
	json_object_set_new(cur, "output_throughput", json_real(900));
	pg_policy_init(&policy);
	base.gpu = strdup("H100");
	base.kind = strdup("git");
	base.source = strdup("git refs/perfgate/history");
	for (size_t i = 0; i < N(commits); i++) {
		snprintf(day, sizeof(day), "2026-11-0%zuT12:00:00Z", i + 1);
		pg_baseline_add_job(&base, commits[i], day);
	}
	p = pg_baseline_add(&base, "serving_a_qps_inf", PG_SUITE_SERVING);
	pg_base_point_add_jobs(p, pg_metric_by_id(PG_SUITE_SERVING, "output_throughput"), medians,
			       jobs, N(medians));
	pg_compare(&c, &policy, &base, run, N(run), NULL, 0, NULL);
	r = find_row(&c, "serving_a_qps_inf", "output_throughput");
	ck_assert_int_eq(r->method, PG_METHOD_HISTORY);
	ck_assert_int_eq(r->verdict, PG_VERDICT_REGRESSED);
	ck_assert_double_eq_tol(r->p_value, 0.002498686837802245, 1e-9);
	ck_assert_double_eq_tol(r->ci_low, -0.14371212533717276, 1e-9);
	ck_assert_double_eq_tol(r->ci_high, -0.05405644063458557, 1e-9);
	ck_assert_double_eq(r->first.ci_low, r->ci_low);
	ck_assert(isnan(r->rerun.ci_low));

	/* what it rests on, as the words say */
	ck_assert_int_eq(r->base_of.kind, PG_BASIS_HISTORY);
	ck_assert_uint_eq(r->base_of.runs, 5);
	ck_assert_str_eq(r->base_of.first_commit, commits[0]);
	ck_assert_str_eq(r->base_of.last_commit, commits[4]);
	ck_assert_str_eq(r->base_of.last_date, "2026-11-05T12:00:00Z");
	ck_assert_str_eq(r->basis, "median of 5 runs of main, 111111111111..555555555555 "
				   "(2026-11-01 to 2026-11-05)");
	js = pg_comparison_json(&c);
	basis = json_object_get(json_array_get(json_object_get(js, "rows"), 0), "basis");
	ck_assert_str_eq(json_string_value(json_object_get(basis, "kind")), "history");
	ck_assert_int_eq(json_integer_value(json_object_get(basis, "runs")), 5);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(basis, "commits"), 1)),
			 commits[4]);
	ck_assert(json_is_null(json_object_get(basis, "source")));
	json_decref(js);

	/* the evidence: the interval, and the chart it links */
	pg_comparison_markdown(&md, &c);
	ck_assert_msg(
		strstr(md.ptr,
		       ". Tested against how much main's runs vary from one to the next: noise "
		       "alone gives so large a change with p = 0.0025 (0.0025 allowing for "
		       "the step's other tests). 95% interval of the change: -14.4% to -5.4%. "
		       "[Trend of the baseline's runs](evidence/"
		       "serving_a_qps_inf-output_throughput.svg)\n"),
		"%s", md.ptr);
	ck_assert_uint_eq(r->trail->n, 5);
	ck_assert_str_eq(r->trail->commit[4], commits[4]);
	ck_assert(pg_trends_evidence_svg(&svg, r, NULL));
	tu_assert_golden("golden/gate/evidence-chart.svg", svg.ptr);

	pg_buf_release(&md);
	pg_buf_release(&svg);
	pg_comparison_release(&c);
	json_decref(cur);
	pg_baseline_release(&base);
	pg_policy_release(&policy);
}
END_TEST

/* n points regressed (900 tok/s) against five runs of main each, medians
 * given; the results in *cur (the caller's). */
static void regress_on_history(struct pg_comparison *c, struct pg_baseline *base,
			       struct pg_policy *policy, const char *const *points, size_t n,
			       const double *medians, json_t **cur)
{
	static const long jobs[] = { 0, 1, 2, 3, 4 };
	struct pg_cmp_point *run = calloc(n, sizeof(*run));
	char day[32], commit[41];

	*cur = serving_result(900, 50, "ok", NULL);
	pg_policy_init(policy);
	memset(base, 0, sizeof(*base));
	base->gpu = strdup("H100");
	base->kind = strdup("git");
	base->source = strdup("git refs/perfgate/history");
	for (size_t i = 0; i < N(jobs); i++) {
		snprintf(day, sizeof(day), "2026-11-0%zuT12:00:00Z", i + 1);
		snprintf(commit, sizeof(commit), "%040zu", i + 1);
		pg_baseline_add_job(base, commit, day);
	}
	for (size_t i = 0; i < n; i++) {
		struct pg_base_point *p = pg_baseline_add(base, points[i], PG_SUITE_SERVING);
		pg_base_point_add_jobs(p, pg_metric_by_id(PG_SUITE_SERVING, "output_throughput"),
				       medians, jobs, N(jobs));
		run[i] = (struct pg_cmp_point){ points[i], PG_SUITE_SERVING, "ok", *cur, NULL };
	}
	pg_compare(c, policy, base, run, n, NULL, 0, NULL);
	free(run);
}

static void release_history(struct pg_comparison *c, struct pg_baseline *base,
			    struct pg_policy *policy, json_t *cur)
{
	pg_comparison_release(c);
	pg_baseline_release(base);
	pg_policy_release(policy);
	json_decref(cur);
}

/* Chart names are built once, in one pass: names that a file name cannot
 * tell apart get a suffix, a suffix never takes another row's name, and
 * twenty rows of one name build forty names, not 2^20. */
START_TEST(evidence_chart_names_are_unique_in_one_pass)
{
	struct pg_metric m = { .id = "m" }, m2 = { .id = "2" }, m3 = { .id = "3" };
	struct pg_cmp_trail t = { 0 };
	struct pg_cmp_row rows[PG_EVIDENCE_MAX];
	const struct pg_cmp_row *v[PG_EVIDENCE_MAX];
	char *names[PG_EVIDENCE_MAX];

	memset(rows, 0, sizeof(rows));
	for (size_t i = 0; i < N(rows); i++) {
		rows[i].point = "p";
		rows[i].metric = &m;
		rows[i].trail = &t;
		v[i] = &rows[i];
	}
	/* "p-m" twice, then a row whose own name is the second's suffixed
	 * one: the suffix steps aside */
	rows[2].point = "p-m";
	rows[2].metric = &m2;
	ck_assert_uint_eq(pg_evidence_chart_names(v, 3, names), 5);
	ck_assert_str_eq(names[0], "evidence/p-m.svg");
	ck_assert_str_eq(names[1], "evidence/p-m-2-2.svg");
	ck_assert_str_eq(names[2], "evidence/p-m-2.svg");
	for (size_t i = 0; i < 3; i++)
		free(names[i]);

	/* an earlier row owns what a later one's suffix would be */
	rows[0].point = "p-m";
	rows[0].metric = &m3;
	rows[2].point = "p";
	rows[2].metric = &m;
	ck_assert_uint_eq(pg_evidence_chart_names(v, 4, names), 7);
	ck_assert_str_eq(names[0], "evidence/p-m-3.svg");
	ck_assert_str_eq(names[1], "evidence/p-m.svg");
	ck_assert_str_eq(names[2], "evidence/p-m-3-2.svg");
	ck_assert_str_eq(names[3], "evidence/p-m-4.svg");
	for (size_t i = 0; i < 4; i++)
		free(names[i]);

	/* a row without a window has no chart */
	rows[0].trail = NULL;
	ck_assert_uint_eq(pg_evidence_chart_names(v, 1, names), 0);
	ck_assert_ptr_null(names[0]);

	/* twenty rows of one name: one name each and a suffix each after
	 * the first, all different */
	for (size_t i = 0; i < N(rows); i++) {
		rows[i].point = "p";
		rows[i].metric = &m;
		rows[i].trail = &t;
	}
	ck_assert_uint_eq(pg_evidence_chart_names(v, N(rows), names), 2 * N(rows) - 1);
	for (size_t i = 0; i < N(rows); i++)
		for (size_t j = 0; j < i; j++)
			ck_assert_str_ne(names[i], names[j]);
	for (size_t i = 0; i < N(rows); i++)
		free(names[i]);
}
END_TEST

/* Only the charted rows (the first PG_EVIDENCE_MAX of the evidence) carry
 * a window; every one of those a chart name. */
START_TEST(evidence_trails_only_for_the_charted_rows)
{
	static const double medians[] = { 1000, 1020, 990, 1010, 980 };
	enum { M = PG_EVIDENCE_MAX + 3 };
	char names[M][32];
	const char *points[M];
	struct pg_policy policy;
	struct pg_baseline base;
	struct pg_comparison c;
	size_t n, total, with_trail = 0;
	const struct pg_cmp_row **rows;
	json_t *cur;

	for (size_t i = 0; i < M; i++) {
		snprintf(names[i], sizeof(names[i]), "serving_p%02zu_qps_inf", i);
		points[i] = names[i];
	}
	regress_on_history(&c, &base, &policy, points, M, medians, &cur);
	rows = pg_comparison_evidence_rows(&c, &n, &total);
	ck_assert_uint_eq(n, PG_EVIDENCE_MAX);
	ck_assert_uint_eq(total, M);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(rows[i]->trail && rows[i]->chart, "%s", rows[i]->point);
	for (size_t i = 0; i < c.n; i++)
		with_trail += c.rows[i].trail != NULL;
	ck_assert_uint_eq(with_trail, PG_EVIDENCE_MAX);
	free(rows);
	release_history(&c, &base, &policy, cur);
}
END_TEST

/* The missing interval says why: a history whose values are identical has
 * no spread, which is not "too few runs". */
START_TEST(evidence_says_why_there_is_no_interval)
{
	static const double same[] = { 1000, 1000, 1000, 1000, 1000 };
	const char *points[] = { "serving_a_qps_inf" };
	struct pg_policy policy;
	struct pg_baseline base;
	struct pg_comparison c;
	struct pg_buf md = PG_BUF_INIT;
	const struct pg_cmp_row *r;
	json_t *cur;

	regress_on_history(&c, &base, &policy, points, 1, same, &cur);
	r = find_row(&c, points[0], "output_throughput");
	ck_assert_int_eq(r->verdict, PG_VERDICT_REGRESSED);
	ck_assert(isnan(r->ci_low));
	pg_comparison_markdown(&md, &c);
	ck_assert_msg(strstr(md.ptr, " No interval: the history's values are identical, no "
				     "run-to-run noise to measure."),
		      "%s", md.ptr);
	ck_assert_ptr_null(strstr(md.ptr, "too few runs"));
	pg_buf_release(&md);
	release_history(&c, &base, &policy, cur);
}
END_TEST

static bool exists(const char *dir, const char *name)
{
	char *p = pg_path_join(dir, name);
	struct stat st;
	bool yes = lstat(p, &st) == 0;
	free(p);
	return yes;
}

/* The evidence's charts replace an earlier comparison's, and nothing
 * else: a file of the user's in evidence/ stays, and an evidence/ that is
 * a symbolic link is neither cleared nor written through (a warning; the
 * verdict is written). */
/* A regression judged against a thresholds file has no runs of main to
 * draw: its chart is of changes from the baseline, with what it was
 * judged against -- the run's other points (crosswise) or the baseline's
 * repeats (tolerance) -- and the first run and its re-run side by side. */
START_TEST(evidence_charts_against_a_thresholds_file)
{
	static const double offs[8] = { -0.01, 0.004, -0.003, 0.006, -0.006, -0.12, 0.002, 0.0 };
	char names[8][32];
	struct pg_policy policy;
	struct pg_baseline base = PG_BASELINE_INIT;
	struct pg_comparison c;
	struct pg_cmp_point run[8], again[8];
	json_t *cur[8], *re[8];
	const struct pg_cmp_row *r;
	struct pg_buf md = PG_BUF_INIT, svg = PG_BUF_INIT;

	pg_policy_init(&policy);
	base.gpu = strdup("H100");
	base.kind = strdup("thresholds");
	base.source = strdup("thresholds/H100.yml");
	for (int i = 0; i < 8; i++) {
		snprintf(names[i], sizeof(names[i]), "serving_p%d_qps_inf", i);
		base_point(&base, names[i], 1000 + 100 * i, 50);
		cur[i] = serving_result((1000 + 100 * i) * (1 + offs[i]), 50, "ok", NULL);
		re[i] = serving_result((1000 + 100 * i) * (1 + offs[i] * 0.9 + 0.004), 50, "ok",
				       NULL);
		run[i] = (struct pg_cmp_point){ names[i], PG_SUITE_SERVING, "ok", cur[i], NULL };
		again[i] = (struct pg_cmp_point){ names[i], PG_SUITE_SERVING, "ok", re[i], NULL };
	}
	pg_compare(&c, &policy, &base, run, 8, again, 8, NULL);
	r = find_row(&c, names[5], "output_throughput");
	ck_assert_int_eq(r->method, PG_METHOD_CROSSWISE);
	ck_assert_int_eq(r->verdict, PG_VERDICT_REGRESSED);
	ck_assert(r->rerun.n > 0);
	ck_assert_ptr_null(r->trail);
	ck_assert_ptr_nonnull(r->spread);
	/* the run's seven other points, the same job's */
	ck_assert_uint_eq(r->spread->n_peers, 7);
	ck_assert_str_eq(r->chart, "evidence/serving_p5_qps_inf-output_throughput.svg");
	pg_comparison_markdown(&md, &c);
	ck_assert_msg(strstr(md.ptr, "[The change against the run's other points](evidence/"
				     "serving_p5_qps_inf-output_throughput.svg)"),
		      "%s", md.ptr);
	ck_assert(pg_trends_evidence_svg(&svg, r, NULL));
	ck_assert_ptr_nonnull(strstr(svg.ptr, "the run&#39;s 7 other points"));
	ck_assert_ptr_nonnull(strstr(svg.ptr, ">first run</text>"));
	ck_assert_ptr_nonnull(strstr(svg.ptr, ">re-run −"));
	tu_assert_golden("golden/gate/evidence-chart-crosswise.svg", svg.ptr);
	pg_buf_release(&svg);
	pg_buf_release(&md);
	pg_comparison_release(&c);

	/* one point: the tolerance alone, against the baseline's repeats */
	pg_compare(&c, &policy, &base, &run[5], 1, &again[5], 1, NULL);
	r = find_row(&c, names[5], "output_throughput");
	ck_assert_int_eq(r->method, PG_METHOD_TOLERANCE);
	ck_assert_int_eq(r->verdict, PG_VERDICT_REGRESSED);
	ck_assert_ptr_nonnull(r->spread);
	ck_assert_uint_eq(r->spread->n_samples, 5);
	ck_assert(pg_trends_evidence_svg(&svg, r, NULL));
	ck_assert_ptr_nonnull(strstr(svg.ptr, "the baseline&#39;s 5 repeats"));
	tu_assert_golden("golden/gate/evidence-chart-tolerance.svg", svg.ptr);
	pg_buf_release(&svg);
	pg_comparison_release(&c);
	for (int i = 0; i < 8; i++) {
		json_decref(cur[i]);
		json_decref(re[i]);
	}
	pg_baseline_release(&base);
	pg_policy_release(&policy);
}
END_TEST

/* The evidence links each regression's result and server log, relative to
 * where comparison.md goes; a link in the results directory is not
 * linked (the plugin does not upload it). */
START_TEST(evidence_links_the_result_and_the_server_log)
{
	char *tmp = tu_mkdtemp(), *runs = pg_path_join(tmp, "runs"),
	     *out = pg_path_join(tmp, "out"), *p;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_result_set set = PG_RESULT_SET_INIT;
	struct pg_policy policy;
	struct pg_baseline base = PG_BASELINE_INIT;
	struct pg_comparison c;
	struct pg_cmp_point *pts;
	struct pg_buf md = PG_BUF_INIT;
	json_t *slow = serving_result(900, 50, "ok", NULL);
	const struct pg_cmp_row *r;

	ck_assert_int_eq(pg_mkdir_p(runs, &err), 0);
	ck_assert_int_eq(pg_mkdir_p(out, &err), 0);
	ck_assert_int_eq(pg_result_write(runs, "serving_a b_qps_inf", slow, NULL, &err), 0);
	p = pg_path_join(runs, "serving_t.server.log");
	tu_write_file(p, "$ vllm serve\n");
	free(p);
	ck_assert_int_eq(pg_results_load_dir(&set, runs, &err), 0);
	pg_policy_init(&policy);
	base.gpu = strdup("H100");
	base.kind = strdup("thresholds");
	base.source = strdup("thresholds/H100.yml");
	base_point(&base, "serving_a b_qps_inf", 1000, 50);
	pts = pg_gate_points(&set);
	pg_compare(&c, &policy, &base, pts, set.n, NULL, 0, NULL);
	pg_gate_link_files(&c, &set, NULL, out);
	r = find_row(&c, "serving_a b_qps_inf", "output_throughput");
	ck_assert_ptr_nonnull(r->files);
	ck_assert_str_eq(r->files->result, "../runs/serving_a b_qps_inf.json");
	ck_assert_str_eq(r->files->log, "../runs/serving_t.server.log");
	ck_assert_ptr_null(r->files->rerun_result);
	pg_comparison_markdown(&md, &c);
	ck_assert_msg(strstr(md.ptr, " Files: [result](../runs/serving_a%20b_qps_inf.json) · "
				     "[server log](../runs/serving_t.server.log).\n"),
		      "%s", md.ptr);
	pg_comparison_release(&c);

	/* the log a symbolic link: not linked */
	p = pg_path_join(runs, "serving_t.server.log");
	unlink(p);
	ck_assert_int_eq(symlink("/etc/hostname", p), 0);
	free(p);
	pg_compare(&c, &policy, &base, pts, set.n, NULL, 0, NULL);
	pg_gate_link_files(&c, &set, NULL, out);
	r = find_row(&c, "serving_a b_qps_inf", "output_throughput");
	ck_assert_ptr_nonnull(r->files->result);
	ck_assert_ptr_null(r->files->log);
	pg_comparison_release(&c);

	free(pts);
	pg_buf_release(&md);
	pg_result_set_release(&set);
	pg_baseline_release(&base);
	pg_policy_release(&policy);
	json_decref(slow);
	tu_rm_rf(tmp);
	free(tmp);
	free(runs);
	free(out);
}
END_TEST

START_TEST(evidence_charts_clear_only_their_own)
{
	static const double medians[] = { 1000, 1020, 990, 1010, 980 };
	const char *points[] = { "serving_a_qps_inf" };
	const char *chart = "serving_a_qps_inf-output_throughput.svg";
	struct pg_policy policy;
	struct pg_baseline base;
	struct pg_comparison c;
	struct pg_error err = PG_ERROR_INIT, warning = PG_ERROR_INIT;
	char *tmp = tu_mkdtemp(), *dir = pg_path_join(tmp, "out"),
	     *evid = pg_path_join(dir, "evidence"), *victim = pg_path_join(tmp, "victim"),
	     *link_dir = pg_path_join(tmp, "linked"), *link = pg_path_join(link_dir, "evidence"),
	     *p, *text;
	json_t *cur;

	regress_on_history(&c, &base, &policy, points, 1, medians, &cur);
	ck_assert_str_eq(find_row(&c, points[0], "output_throughput")->chart,
			 "evidence/serving_a_qps_inf-output_throughput.svg");
	/* an earlier comparison's chart, and the user's own files */
	ck_assert_int_eq(pg_mkdir_p(evid, &err), 0);
	p = pg_path_join(evid, "serving_b_qps_inf-output_throughput.svg");
	tu_write_file(p, "<svg/>");
	free(p);
	p = pg_path_join(evid, ".perfgate-charts");
	tu_write_file(p, "serving_b_qps_inf-output_throughput.svg\n../../victim/important.svg\n"
			 ".perfgate-charts\n");
	free(p);
	p = pg_path_join(evid, "important.svg");
	tu_write_file(p, "mine");
	free(p);
	ck_assert_int_eq(pg_mkdir_p(victim, &err), 0);
	p = pg_path_join(victim, "important.svg");
	tu_write_file(p, "mine");
	free(p);

	ck_assert_int_eq(pg_comparison_write(&c, dir, NULL, &warning, &err), 0);
	ck_assert_int_eq(warning.code, 0);
	ck_assert(!exists(evid, "serving_b_qps_inf-output_throughput.svg"));
	ck_assert(exists(evid, "important.svg"));
	ck_assert(exists(victim, "important.svg"));
	ck_assert(exists(evid, chart));
	p = pg_path_join(evid, ".perfgate-charts");
	text = tu_read_file(p, NULL);
	ck_assert_str_eq(text, "serving_a_qps_inf-output_throughput.svg\n");
	free(text);
	free(p);
	/* written again: the same chart, the user's file still there */
	ck_assert_int_eq(pg_comparison_write(&c, dir, NULL, &warning, &err), 0);
	ck_assert(exists(evid, chart) && exists(evid, "important.svg"));

	/* evidence/ a link to elsewhere: nothing there removed or written */
	ck_assert_int_eq(pg_mkdir_p(link_dir, &err), 0);
	ck_assert_int_eq(symlink(victim, link), 0);
	p = pg_path_join(victim, ".perfgate-charts");
	tu_write_file(p, "important.svg\n");
	free(p);
	ck_assert_int_eq(pg_comparison_write(&c, link_dir, NULL, &warning, &err), 0);
	ck_assert_int_ne(warning.code, 0);
	ck_assert_ptr_nonnull(strstr(warning.msg, link));
	ck_assert_ptr_nonnull(strstr(warning.msg, "symbolic link"));
	ck_assert_ptr_null(strchr(warning.msg, '\n'));
	ck_assert(exists(victim, "important.svg"));
	ck_assert(exists(victim, ".perfgate-charts"));
	ck_assert(!exists(victim, chart));
	ck_assert(exists(link_dir, "verdict.json") && exists(link_dir, "comparison.md"));

	release_history(&c, &base, &policy, cur);
	tu_rm_rf(tmp);
	free(tmp);
	free(dir);
	free(evid);
	free(victim);
	free(link_dir);
	free(link);
}
END_TEST

static size_t count_of(const char *s, const char *what)
{
	size_t n = 0;
	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

/* comparison.md is rendered as markdown (an artifact, a PR comment, stdout
 * pasted into an annotation): names, notes, the GPU and the baseline
 * source cannot break its tables or inject HTML. */
START_TEST(hostile_names_cannot_break_the_comparison)
{
	static const char *const tags[] = { "<details>", "</details>", "<summary>", "</summary>",
					    NULL };
	struct pg_policy policy;
	struct pg_baseline base = PG_BASELINE_INIT;
	struct pg_comparison c;
	json_t *slow = serving_result(500, 80, "ok", NULL),
	       *same = serving_result(1000, 50, "ok", NULL);
	json_t *failed = serving_result(0, 0, "error", "exit 1 | <b>see</b> `log`\n## [x](y)");
	/* clang-format off */
	struct pg_cmp_point run[] = {
		{ "serving_<script>|x`y`_qps_1", PG_SUITE_SERVING, "ok", slow, NULL },
		{ "serving_[a](b)\n|c_qps_1", PG_SUITE_SERVING, "ok", same, NULL },
		{ "serving_&amp;_qps_1", PG_SUITE_SERVING, "error", failed, NULL },
	};
	/* clang-format on */
	struct pg_buf md = PG_BUF_INIT;

	pg_policy_init(&policy);
	base.gpu = strdup("<i>H100</i>|`x`");
	base.kind = strdup("thresholds");
	base.source = strdup("thresholds/<H100>.yml | `x`");
	base_point(&base, run[0].name, 1000, 50);
	base_point(&base, run[2].name, 1000, 50);
	pg_compare(&c, &policy, &base, run, N(run), NULL, 0, NULL);
	ck_assert_int_eq(c.outcome, PG_OUTCOME_FAIL);
	ck_assert_uint_eq(c.rerun.n, 1);
	pg_comparison_markdown(&md, &c);
	tu_assert_markdown_safe(md.ptr, tags);
	ck_assert_ptr_nonnull(strstr(md.ptr, "— &lt;i&gt;H100&lt;/i&gt;\\|\\`x\\`: "));
	ck_assert_ptr_nonnull(strstr(md.ptr, "Re-run to confirm: `serving_<script>|x'y'_qps_1`"));
	ck_assert_ptr_nonnull(strstr(md.ptr, "| serving\\_&lt;script&gt;\\|x\\`y\\`\\_qps_1 |"));
	ck_assert_ptr_nonnull(strstr(
		md.ptr, "failed: exit 1 \\| &lt;b&gt;see&lt;/b&gt; \\`log\\` ## \\[x\\](y) |"));
	pg_buf_release(&md);
	pg_comparison_release(&c);

	/* the evidence against a history: its chart's link and the chart */
	{
		static const double medians[] = { 1000, 1020, 990, 1010, 980 };
		const char *points[] = { run[0].name, "serving_../\"'><svg onload=1>)](x)_qps_1" };
		struct pg_comparison h;
		struct pg_baseline hb;
		struct pg_policy hp;
		struct pg_buf svg = PG_BUF_INIT;
		json_t *cur;

		regress_on_history(&h, &hb, &hp, points, N(points), medians, &cur);
		pg_comparison_markdown(&md, &h);
		tu_assert_markdown_safe(md.ptr, tags);
		ck_assert_msg(strstr(md.ptr, "[Trend of the baseline's runs](evidence/"
					     "serving__script__x_y__qps_1-output_throughput.svg)"),
			      "%s", md.ptr);
		ck_assert_msg(strstr(md.ptr, "[Trend of the baseline's runs](evidence/"
					     "serving_.._____svg_onload_1____x__qps_1-"
					     "output_throughput.svg)"),
			      "%s", md.ptr);
		for (size_t i = 0; i < N(points); i++) {
			const struct pg_cmp_row *r = find_row(&h, points[i], "output_throughput");
			ck_assert_uint_eq(strspn(r->chart,
						 "abcdefghijklmnopqrstuvwxyz"
						 "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/"),
					  strlen(r->chart));
			ck_assert_ptr_null(strstr(r->chart, "/../"));
			pg_buf_reset(&svg);
			ck_assert(pg_trends_evidence_svg(&svg, r, NULL));
			/* the elements of any chart, the names only as text */
			ck_assert_ptr_null(strstr(svg.ptr, "<script"));
			ck_assert_ptr_null(strstr(svg.ptr, "<svg onload"));
			ck_assert_uint_eq(count_of(svg.ptr, "<svg"),
					  2); /* the file's, the chart's */
			ck_assert_ptr_nonnull(
				strstr(svg.ptr, i ? "&lt;svg onload=1&gt;" : "&lt;script&gt;"));
		}
		pg_buf_release(&svg);
		release_history(&h, &hb, &hp, cur);
	}
	pg_buf_release(&md);
	pg_comparison_release(&c);

	json_decref(slow);
	json_decref(same);
	json_decref(failed);
	pg_baseline_release(&base);
	pg_policy_release(&policy);
}
END_TEST

/* Runs and baselines of thousands of points are looked up by bisection:
 * in any input order, with the first of two points of one name winning,
 * and with the verdict JSON written in many pieces that add up to the
 * whole document. */
START_TEST(large_comparisons)
{
	enum { POINTS = 300 };
	struct pg_policy policy;
	struct pg_baseline base = PG_BASELINE_INIT;
	struct pg_comparison c;
	struct pg_cmp_point run[POINTS + 1];
	struct pg_cmp_index ix;
	json_t *same = serving_result(1000, 50, "ok", NULL),
	       *slow = serving_result(500, 50, "ok", NULL);
	char names[POINTS][32];
	size_t k = 0;

	pg_policy_init(&policy);
	for (int i = POINTS; i-- > 0;) {
		snprintf(names[i], sizeof(names[i]), "serving_p%03d_qps_inf", i);
		if (i != 7) /* one point the baseline lacks */
			base_point(&base, names[i], 1000, 50);
		run[POINTS - 1 - i] = (struct pg_cmp_point){ names[i], PG_SUITE_SERVING, "ok", same,
							     NULL };
	}
	/* a second point of one name: the first one wins, not this */
	run[POINTS] = (struct pg_cmp_point){ names[42], PG_SUITE_SERVING, "ok", slow, NULL };

	ck_assert(!base.sorted);
	ck_assert_ptr_eq(pg_baseline_find(&base, names[3]), &base.points[POINTS - 1 - 1 - 3]);
	pg_baseline_sort(&base);
	ck_assert(base.sorted);
	ck_assert_str_eq(pg_baseline_find(&base, names[3])->name, names[3]);
	ck_assert_str_eq(pg_baseline_find(&base, names[0])->name, names[0]);
	ck_assert_str_eq(pg_baseline_find(&base, names[POINTS - 1])->name, names[POINTS - 1]);
	ck_assert_ptr_null(pg_baseline_find(&base, names[7]));
	ck_assert_ptr_null(pg_baseline_find(&base, "serving_p"));
	ck_assert_ptr_null(pg_baseline_find(&base, "zzz"));

	pg_cmp_index_init(&ix, run, N(run));
	ck_assert_ptr_eq(pg_cmp_index_find(&ix, names[42]), &run[POINTS - 1 - 42]);
	ck_assert_ptr_eq(pg_cmp_index_find(&ix, names[0]), &run[POINTS - 1]);
	ck_assert_ptr_null(pg_cmp_index_find(&ix, "serving_p"));
	pg_cmp_index_release(&ix);

	pg_compare(&c, &policy, &base, run, N(run), NULL, 0, NULL);
	ck_assert_int_eq(c.counts[PG_VERDICT_NEW], 2); /* names[7]'s two metrics */
	ck_assert_int_eq(c.counts[PG_VERDICT_REGRESSED], 0);
	ck_assert_int_eq(c.n, 2 * POINTS);
	for (size_t i = 0; i < c.n; i += 2)
		ck_assert_str_eq(c.rows[i].point, names[k++]); /* name order */

	ck_assert_uint_gt(json_in_pieces(&c), 2);
	pg_comparison_release(&c);

	/* an empty comparison is a whole document too */
	pg_baseline_release(&base);
	pg_compare(&c, &policy, &base, NULL, 0, NULL, 0, NULL);
	ck_assert_uint_eq(json_in_pieces(&c), 1);
	pg_comparison_release(&c);

	json_decref(same);
	json_decref(slow);
	pg_policy_release(&policy);
}
END_TEST

static Suite *gate_suite(void)
{
	Suite *s = suite_create("gate");
	TCase *tc = tcase_create("stats");

	tcase_add_test(tc, median_mad_and_spread);
	tcase_add_test(tc, mann_whitney_exact);
	tcase_add_test(tc, mann_whitney_ties_and_large_samples);
	tcase_add_test(tc, wilson_interval);
	tcase_add_test(tc, t_quantiles_and_intervals);
	suite_add_tcase(s, tc);
	tc = tcase_create("policy");
	tcase_add_test(tc, policy_layers);
	suite_add_tcase(s, tc);
	tc = tcase_create("compare");
	tcase_add_loop_test(tc, tolerance_table, 0, (int)N(tol_cases));
	tcase_add_test(tc, compare_every_verdict);
	tcase_add_test(tc, confirmation_replicates);
	tcase_add_test(tc, history_baselines_and_strict_mode);
	tcase_add_test(tc, render_markdown_and_json);
	tcase_add_test(tc, evidence_names_the_baseline_and_the_widened_tolerance);
	tcase_add_test(tc, evidence_interval_basis_and_chart_against_the_history);
	tcase_add_test(tc, large_comparisons);
	tcase_add_test(tc, hostile_names_cannot_break_the_comparison);
	tcase_add_test(tc, evidence_chart_names_are_unique_in_one_pass);
	tcase_add_test(tc, evidence_trails_only_for_the_charted_rows);
	tcase_add_test(tc, evidence_says_why_there_is_no_interval);
	tcase_add_test(tc, evidence_charts_clear_only_their_own);
	tcase_add_test(tc, evidence_charts_against_a_thresholds_file);
	tcase_add_test(tc, evidence_links_the_result_and_the_server_log);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(gate_suite());
}
