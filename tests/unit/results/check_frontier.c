/* The throughput-interactivity frontier (results/frontier.h), its
 * comparison, and the ladders and decision of gate/compare_frontier.h. */
#include "testutil.h"

#include "base/jsonw.h"
#include "gate/compare.h"
#include "gate/compare_frontier.h"
#include "results/frontier.h"
#include "results/tails.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The mock engine's shape: TPOT 8 ms x (1 + 0.01 (c - 1)) / speed, 128
 * output tokens after a 20 ms x (1 + 0.02 c) / speed TTFT. */
static struct pg_frontier_point model(double c, double speed)
{
	double tpot = 8.0 * (1 + 0.01 * (c - 1)) / speed;
	double ttft = 20.0 * (1 + 0.02 * c) / speed;
	double e2el = ttft + 127 * tpot;
	return (struct pg_frontier_point){ NULL, c, c / (e2el / 1000) * 128, 1000 / tpot, false };
}

START_TEST(student_t_quantiles)
{
	/* scipy.stats.t.ppf */
	ck_assert_double_eq_tol(pg_tails_t_quantile(0.99, 7), 2.997951566868529, 1e-9);
	ck_assert_double_eq_tol(pg_tails_t_quantile(0.975, 1), 12.706204736174698, 1e-8);
	ck_assert_double_eq_tol(pg_tails_t_quantile(0.995, 30), 2.749995653567488, 1e-9);
	ck_assert_double_eq_tol(pg_tails_t_quantile(0.01, 7), -2.997951566868529, 1e-9);
	ck_assert_double_eq(pg_tails_t_quantile(0.5, 3), 0);
	ck_assert(isnan(pg_tails_t_quantile(1, 3)));
	ck_assert(isnan(pg_tails_t_quantile(0.9, 0)));
}
END_TEST

/* Dominated points leave the frontier; the curve runs by interactivity. */
START_TEST(pareto_frontier)
{
	struct pg_frontier_point p[] = {
		{ "a", 1, 100, 120, false }, { "b", 2, 190, 118, false },
		{ "c", 4, 150, 110, false },                              /* dominated by b */
		{ "d", 8, 700, 100, false }, { "e", 16, 690, 90, false }, /* dominated by d */
		{ "f", 32, 0, 50, false },                                /* no throughput */
	};
	struct pg_frontier_point curve[N(p)];
	size_t n;

	pg_frontier_mark(p, N(p));
	ck_assert(p[0].on_frontier && p[1].on_frontier && p[3].on_frontier);
	ck_assert(!p[2].on_frontier && !p[4].on_frontier && !p[5].on_frontier);
	n = pg_frontier_curve(curve, p, N(p));
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(curve[0].name, "d");
	ck_assert_str_eq(curve[2].name, "a");
	/* log-log interpolation: halfway in log interactivity between d and b */
	ck_assert_double_eq_tol(pg_frontier_tput_at(curve, n, sqrt(100.0 * 118)), sqrt(700.0 * 190),
				1e-9);
	ck_assert_double_eq_tol(pg_frontier_tput_at(curve, n, 100), 700, 1e-9);
	ck_assert(isnan(pg_frontier_tput_at(curve, n, 99)));
	ck_assert(isnan(pg_frontier_tput_at(curve, n, 121)));
	ck_assert_double_eq_tol(pg_frontier_slope_at(curve, n, 110),
				log(190.0 / 700) / log(118.0 / 100), 1e-12);
}
END_TEST

/* A uniformly slower engine reads its slowdown at every point; a point
 * that slid along the curve reads nothing. */
START_TEST(shift_at_equal_users)
{
	static const double cs[] = { 1, 2, 4, 8, 16, 32, 64, 128 };
	struct pg_frontier_point base[8], slow[8], curve[8];
	size_t n;

	for (size_t i = 0; i < 8; i++) {
		base[i] = model(cs[i], 1);
		slow[i] = model(cs[i], 0.97);
	}
	pg_frontier_mark(base, 8);
	n = pg_frontier_curve(curve, base, 8);
	ck_assert_uint_eq(n, 8);
	for (size_t i = 0; i < 8; i++)
		ck_assert_double_eq_tol(pg_frontier_shift(curve, n, slow[i].tput, slow[i].intvty),
					log(0.97), 1e-12);
	/* a point on the curve between two of its points: no shift */
	{
		double x = sqrt(curve[3].intvty * curve[4].intvty);
		double t = pg_frontier_tput_at(curve, n, x);
		ck_assert_double_eq_tol(pg_frontier_shift(curve, n, t, x), 0, 1e-12);
		/* 5% more throughput at the same interactivity: less than 5% of
		 * shift, the rest is the curve's slope */
		double s = pg_frontier_shift(curve, n, t * 1.05, x);
		ck_assert(s > 0 && s < log(1.05));
	}
	/* beyond the baseline's users range: no match */
	ck_assert(isnan(pg_frontier_shift(curve, n, curve[0].tput * 4, curve[0].intvty)));
	/* the knee of this engine: where TPOT growth starts to eat the gain */
	ck_assert_int_ge(pg_frontier_knee(curve, n), 1);
	ck_assert_int_le(pg_frontier_knee(curve, n), 6);
}
END_TEST

/* The comparison: the mean shift, a t interval over the points, the
 * levels at matched interactivity, exact for a uniform change. */
START_TEST(compare_two_frontiers)
{
	static const double cs[] = { 1, 2, 4, 8, 16, 32, 64, 128 };
	static const double wobble[] = { 0.01, -0.01, 0.005, -0.005, 0, 0.01, -0.01, 0 };
	struct pg_frontier_point base[8], cur[8];
	struct pg_frontier_cmp c;
	double m = 0, ss = 0, t;

	for (size_t i = 0; i < 8; i++) {
		base[i] = model(cs[i], 1);
		cur[i] = model(cs[i], 0.97 * exp(wobble[i]));
	}
	ck_assert_int_eq(pg_frontier_compare(&c, base, 8, cur, 8, 0.98, NULL), 0);
	ck_assert_uint_eq(c.matched, 8);
	for (size_t i = 0; i < 8; i++)
		m += (log(0.97) + wobble[i]) / 8;
	for (size_t i = 0; i < 8; i++)
		ss += (log(0.97) + wobble[i] - m) * (log(0.97) + wobble[i] - m);
	t = pg_tails_t_quantile(0.99, 7) * sqrt(ss / 7) / sqrt(8);
	ck_assert_double_eq_tol(c.shift, expm1(m), 1e-9);
	ck_assert_double_eq_tol(c.lo, expm1(m - t), 1e-9);
	ck_assert_double_eq_tol(c.hi, expm1(m + t), 1e-9);
	ck_assert(c.hi < 0);
	/* the two most interactive baseline points are beyond the slower
	 * candidate's reach: no throughput to compare there */
	ck_assert_uint_eq(c.n_levels, 6);
	for (size_t j = 0; j < c.n_levels; j++) {
		const struct pg_frontier_level *l = &c.levels[j];
		ck_assert(l->change < 0);
		ck_assert(l->lo <= l->change && l->change <= l->hi);
	}
	/* where the curve is flat, matched interactivity sees about the
	 * shift; where it is steep, much more (and a wider interval) */
	ck_assert(fabs(c.levels[0].change) < fabs(c.levels[c.n_levels - 1].change));
	ck_assert(c.levels[0].hi - c.levels[0].lo <
		  c.levels[c.n_levels - 1].hi - c.levels[c.n_levels - 1].lo);
	pg_frontier_cmp_release(&c);

	/* two points are not a frontier to judge */
	ck_assert_int_eq(pg_frontier_compare(&c, base, 8, cur, 2, 0.98, NULL), -1);
	ck_assert(isnan(c.shift));
	pg_frontier_cmp_release(&c);
}
END_TEST

/* ---- ladders and the decision ---- */

static json_t *ladder_result(const char *test, const char *qps, long c, double speed, long tp)
{
	struct pg_frontier_point p = model((double)c, speed);
	json_t *r = json_object();

	json_object_set_new(r, "output_throughput", json_real(p.tput * (double)tp));
	json_object_set_new(r, "median_tpot_ms", json_real(1000 / p.intvty));
	json_object_set_new(r, "request_rate", json_string(qps));
	json_object_set_new(r, "max_concurrency", c ? json_integer(c) : json_null());
	json_object_set_new(r, "perfgate",
			    json_pack("{s:s, s:s, s:s, s:{s:i}}", "suite", "serving", "status",
				      "ok", "test", test, "params", "tp", (json_int_t)tp));
	return r;
}

START_TEST(ladders_of_a_run)
{
	static const long cs[] = { 1, 2, 4, 8 };
	static const char *const rates[] = { "1", "4", "16", "inf" };
	json_t *res[16];
	char names[16][64];
	const char *np[16];
	struct pg_ladders l;
	size_t n = 0;

	/* a concurrency ladder at qps inf, a rate ladder unbounded, and two
	 * points of a third test (no ladder) */
	for (size_t i = 0; i < 4; i++) {
		snprintf(names[n], sizeof(names[n]), "serving_a_qps_inf_concurrency_%ld", cs[i]);
		res[n] = ladder_result("serving_a", "inf", cs[i], 1, 2);
		n++;
	}
	for (size_t i = 0; i < 4; i++) {
		snprintf(names[n], sizeof(names[n]), "serving_b_qps_%s", rates[i]);
		res[n] = ladder_result("serving_b", rates[i], 0, 1, 1);
		n++;
	}
	for (size_t i = 0; i < 2; i++) {
		snprintf(names[n], sizeof(names[n]), "serving_c_qps_inf_concurrency_%ld", cs[i]);
		res[n] = ladder_result("serving_c", "inf", cs[i], 1, 1);
		n++;
	}
	for (size_t i = 0; i < n; i++)
		np[i] = names[i];
	pg_ladders_find(&l, np, (const json_t *const *)res, n);
	ck_assert_uint_eq(l.n, 2);
	ck_assert_str_eq(l.v[0].label, "serving_a ladder (qps inf, concurrency 1-8)");
	ck_assert(!l.v[0].by_rate);
	ck_assert_uint_eq(l.v[0].n, 4);
	ck_assert_str_eq(l.v[1].label, "serving_b ladder (qps 1-inf)");
	ck_assert(l.v[1].by_rate);
	pg_ladders_release(&l);
	for (size_t i = 0; i < n; i++)
		json_decref(res[i]);
}
END_TEST

static const struct pg_cmp_row *row_for(const struct pg_comparison *c, const char *point,
					const char *metric)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->rows[i].point, point) && c->rows[i].metric &&
		    !strcmp(c->rows[i].metric->id, metric))
			return &c->rows[i];
	ck_abort_msg("no row %s %s", point, metric);
	return NULL;
}

/* A ladder 3% slower everywhere is one regression; with the frontier
 * gating, the points' own throughput rows stop failing. */
START_TEST(one_decision_per_ladder)
{
	static const long cs[] = { 1, 2, 4, 8, 16, 32, 64, 128 };
	static const double wobble[] = { 0.004, -0.004, 0.002, -0.002, 0, 0.004, -0.004, 0 };
	json_t *res[8];
	char names[8][64];
	struct pg_cmp_point run[8];
	struct pg_baseline base = PG_BASELINE_INIT;
	struct pg_policy policy;
	struct pg_comparison c;
	const struct pg_cmp_row *row;
	const char *label = "serving_a ladder (qps inf, concurrency 1-128)";

	pg_policy_init(&policy);
	base.gpu = strdup("H100");
	base.kind = strdup("thresholds");
	for (size_t i = 0; i < 8; i++) {
		struct pg_frontier_point b = model((double)cs[i], 1);
		struct pg_base_point *bp;
		snprintf(names[i], sizeof(names[i]), "serving_a_qps_inf_concurrency_%ld", cs[i]);
		res[i] = ladder_result("serving_a", "inf", cs[i], 0.97 * exp(wobble[i]), 2);
		run[i] = (struct pg_cmp_point){ names[i], PG_SUITE_SERVING, "ok", res[i], NULL,
						false };
		bp = pg_baseline_add(&base, names[i], PG_SUITE_SERVING);
		pg_base_point_add_metric(bp, pg_metric_by_id(PG_SUITE_SERVING, "output_throughput"),
					 b.tput * 2, NULL, 0);
		pg_base_point_add_metric(bp, pg_metric_by_id(PG_SUITE_SERVING, "median_tpot_ms"),
					 1000 / b.intvty, NULL, 0);
	}
	pg_baseline_sort(&base);

	pg_compare(&c, &policy, &base, run, 8, NULL, 0, NULL);
	row = row_for(&c, label, "frontier");
	ck_assert_int_eq(row->verdict, PG_VERDICT_REGRESSED);
	ck_assert_int_eq(row->outcome, PG_OUTCOME_WARN); /* warn-only by default */
	ck_assert_double_eq_tol(row->change, -0.03, 0.002);
	ck_assert_uint_eq(row->n_current, 8);
	ck_assert(strstr(row->note, "8 points at equal users/GPU: -3%") == row->note);
	/* point by point, the same 3% everywhere is the run's common change:
	 * against a thresholds file it must be twice the tolerance to fail
	 * (a slow node looks the same), so it only warns -- the frontier is
	 * what sees a ladder's shift */
	ck_assert_int_ne(c.outcome, PG_OUTCOME_FAIL);
	pg_comparison_release(&c);

	pg_policy_add(&policy, NULL, "frontier",
		      &(struct pg_rule_patch){ PG_RULE_GATE, { .gate = true } }, 0);
	pg_compare(&c, &policy, &base, run, 8, NULL, 0, NULL);
	row = row_for(&c, label, "frontier");
	ck_assert_int_eq(row->outcome, PG_OUTCOME_FAIL);
	/* the ladder's one decision: its points' throughput rows never fail */
	row = row_for(&c, "serving_a_qps_inf_concurrency_8", "output_throughput");
	ck_assert_int_ne(row->outcome, PG_OUTCOME_FAIL);
	ck_assert_uint_eq(c.failing, 1);
	ck_assert_int_eq(c.outcome, PG_OUTCOME_FAIL);
	pg_comparison_release(&c);

	for (size_t i = 0; i < 8; i++)
		json_decref(res[i]);
	pg_baseline_release(&base);
	pg_policy_release(&policy);
}
END_TEST

/* The dashboard row: per-GPU throughputs, seconds, interactivity. */
START_TEST(inferencex_row)
{
	json_t *r = json_pack("{s:s, s:f, s:f, s:f, s:f, s:f, s:i, s:s}", "date", "20261122-130000",
			      "total_token_throughput", 8000.0, "output_throughput", 2000.0,
			      "median_tpot_ms", 20.0, "p99_tpot_ms", 40.0, "mean_ttft_ms", 150.0,
			      "completed", 100, "model_id", "meta-llama/Llama-3.1-8B-Instruct");
	json_t *row;

	json_object_set_new(r, "perfgate",
			    json_pack("{s:s, s:s, s:{s:i, s:i, s:i, s:i}}", "suite", "serving",
				      "server_command", "vllm serve x", "params", "tp", 4,
				      "max_concurrency", 64, "input_len", 1024, "output_len", 128));
	row = pg_frontier_inferencex_row(r, "h100");
	ck_assert_str_eq(json_string_value(json_object_get(row, "date")), "2026-11-22 13:00:00");
	ck_assert_str_eq(json_string_value(json_object_get(row, "device")), "h100");
	ck_assert_int_eq(json_integer_value(json_object_get(row, "conc")), 64);
	ck_assert_str_eq(json_string_value(json_object_get(row, "framework")), "vllm");
	ck_assert_int_eq(json_integer_value(json_object_get(row, "isl")), 1024);
	ck_assert_int_eq(json_integer_value(json_object_get(row, "tp")), 4);
	ck_assert_double_eq(json_real_value(json_object_get(row, "tput_per_gpu")), 2000);
	ck_assert_double_eq(json_real_value(json_object_get(row, "output_tput_per_gpu")), 500);
	ck_assert_double_eq(json_real_value(json_object_get(row, "input_tput_per_gpu")), 1500);
	ck_assert_double_eq(json_real_value(json_object_get(row, "mean_ttft")), 0.15);
	ck_assert_double_eq(json_real_value(json_object_get(row, "median_tpot")), 0.02);
	ck_assert_double_eq(json_real_value(json_object_get(row, "median_intvty")), 50);
	ck_assert_double_eq(json_real_value(json_object_get(row, "p99_intvty")), 25);
	ck_assert_ptr_null(json_object_get(row, "completed"));
	json_decref(row);
	json_decref(r);
}
END_TEST

static Suite *frontier_suite(void)
{
	Suite *s = suite_create("frontier");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, student_t_quantiles);
	tcase_add_test(tc, pareto_frontier);
	tcase_add_test(tc, shift_at_equal_users);
	tcase_add_test(tc, compare_two_frontiers);
	tcase_add_test(tc, ladders_of_a_run);
	tcase_add_test(tc, one_decision_per_ladder);
	tcase_add_test(tc, inferencex_row);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(frontier_suite());
}
