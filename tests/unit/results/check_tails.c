/* Certified percentiles (results/tails.h): the regularised incomplete beta
 * function, MLPerf's early-stopping rule, its minimum-n table and the
 * order statistic it reports. tests/py/test_tails_reference.py checks the
 * same functions against scipy and exact binomial sums on 10,000 random
 * cases. */
#include "testutil.h"

#include "base/rng.h"
#include "base/stats.h"
#include "results/tails.h"

#include <math.h>
#include <stdlib.h>

#define C PG_TAILS_CONFIDENCE

/* Closed forms: I_x(1, 1) = x, I_x(a, 1) = x^a, I_x(1, b) = 1 - (1-x)^b,
 * I_x(2, 2) = 3x^2 - 2x^3, and the symmetry I_x(a, b) = 1 - I_{1-x}(b, a). */
START_TEST(betai_closed_forms)
{
	static const double xs[] = { 0.001, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999 };

	for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++) {
		double x = xs[i];
		ck_assert_double_eq_tol(pg_tails_betai(1, 1, x), x, 1e-15);
		ck_assert_double_eq_tol(pg_tails_betai(7, 1, x), pow(x, 7), 1e-14);
		ck_assert_double_eq_tol(pg_tails_betai(1, 5, x), 1 - pow(1 - x, 5), 1e-14);
		ck_assert_double_eq_tol(pg_tails_betai(2, 2, x), 3 * x * x - 2 * x * x * x, 1e-14);
		ck_assert_double_eq_tol(pg_tails_betai(3.5, 120.25, x),
					1 - pg_tails_betai(120.25, 3.5, 1 - x), 1e-13);
	}
	ck_assert_double_eq(pg_tails_betai(3, 4, 0), 0);
	ck_assert_double_eq(pg_tails_betai(3, 4, 1), 1);
	ck_assert(isnan(pg_tails_betai(0, 1, 0.5)));
	ck_assert(isnan(pg_tails_betai(1, -1, 0.5)));
	ck_assert(isnan(pg_tails_betai(1, 1, 1.5)));
	ck_assert(isnan(pg_tails_betai(1, 1, NAN)));
	ck_assert(isnan(pg_tails_betai(INFINITY, 1, 0.5)));
}
END_TEST

/* The minimum-n table of docs/results.md (and research note
 * tails-workloads-formats.md, re-derived there with exact binomial sums):
 * h_min(0) is the server rule with nothing over the bound, h_min(1) + 1
 * the fewest samples that certify a percentile. */
START_TEST(minimum_n_table)
{
	/* clang-format off */
	static const struct {
		double p;
		long h0, min_n;
	} rows[] = {
		{ 0.50,     7,    11 },
		{ 0.75,    17,    24 },
		{ 0.90,    44,    64 },
		{ 0.95,    90,   130 },
		{ 0.99,   459,   662 },
		{ 0.999, 4603,  6636 },
	};
	/* clang-format on */

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		ck_assert_int_eq(pg_tails_h_min(0, rows[i].p, C), rows[i].h0);
		ck_assert_int_eq(pg_tails_min_n(rows[i].p, C), rows[i].min_n);
		/* exactly at the floor the maximum is the estimate; one short, none */
		ck_assert_int_eq(pg_tails_rank(rows[i].min_n, rows[i].p, C), 1);
		ck_assert_int_eq(pg_tails_rank(rows[i].min_n - 1, rows[i].p, C), 0);
	}
	ck_assert_int_eq(pg_tails_h_min(-1, 0.99, C), -1);
	ck_assert_int_eq(pg_tails_h_min(0, 1, C), -1);
	ck_assert_int_eq(pg_tails_h_min(0, 0.99, 0), -1);
}
END_TEST

/* Which order statistic is reported at n (t-th largest): the table of the
 * research note, whose p99 row at 10,000 is MLCommons' worked example
 * ("the 77th-highest sample"). 0 = no estimate. */
START_TEST(rank_table)
{
	static const long ns[] = { 100, 200, 300, 500, 1000, 2000, 5000, 10000 };
	static const double ps[] = { 0.50, 0.90, 0.95, 0.99 };
	/* clang-format off */
	static const long want[][4] = {
		/*  p50  p90  p95 p99 */
		{   37,   3,   0,  0 }, /*    100 */
		{   83,  10,   3,  0 }, /*    200 */
		{  129,  18,   6,  0 }, /*    300 */
		{  223,  34,  13,  0 }, /*    500 */
		{  462,  78,  34,  2 }, /*  1,000 */
		{  947, 168,  77,  9 }, /*  2,000 */
		{ 2417, 450, 214, 33 }, /*  5,000 */
		{ 4883, 930, 449, 77 }, /* 10,000 */
	};
	/* clang-format on */

	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
		for (size_t j = 0; j < 4; j++)
			ck_assert_msg(pg_tails_rank(ns[i], ps[j], C) == want[i][j],
				      "n=%ld p=%g: rank %ld, want %ld", ns[i], ps[j],
				      pg_tails_rank(ns[i], ps[j], C), want[i][j]);
}
END_TEST

/* The rank is LoadGen's scan: t - 1 is the last i with n >= h_min(i) + i. */
START_TEST(rank_agrees_with_h_min)
{
	static const double ps[] = { 0.5, 0.9, 0.95, 0.99 };

	for (size_t j = 0; j < 4; j++) {
		for (long n = 1; n <= 1500; n += 7) {
			long t = pg_tails_rank(n, ps[j], C);
			if (t == 0) {
				ck_assert_int_lt(n, pg_tails_h_min(1, ps[j], C) + 1);
				continue;
			}
			ck_assert_int_ge(n, pg_tails_h_min(t, ps[j], C) + t);
			ck_assert_int_lt(n, pg_tails_h_min(t + 1, ps[j], C) + t + 1);
		}
	}
}
END_TEST

/* Hand-checked with exact binomial sums (Python's fractions):
 * X ~ Binomial(200, 0.01) has P(X >= 6) = 0.01602 and P(X >= 7) = 0.00430,
 * so 7 misses in 200 show a p99 target missed, 6 do not; 459 samples
 * with none over the bound certify it, 458 do not. */
START_TEST(server_rule_and_its_mirror)
{
	ck_assert(pg_tails_passes(459, 0, 0.99, C));
	ck_assert(!pg_tails_passes(458, 0, 0.99, C));
	ck_assert(pg_tails_passes(662, 1, 0.99, C));
	ck_assert(!pg_tails_passes(661, 1, 0.99, C));
	ck_assert(!pg_tails_passes(10, 10, 0.99, C));
	ck_assert(!pg_tails_fails(200, 6, 0.99, C));
	ck_assert(pg_tails_fails(200, 7, 0.99, C));
	ck_assert(!pg_tails_fails(200, 0, 0.99, C));
	ck_assert(!pg_tails_fails(200, 201, 0.99, C));
}
END_TEST

/* The estimate is sorted[n - t]: an upper bound never below numpy's
 * percentile of the same sample. */
START_TEST(estimate_is_an_order_statistic_above_the_percentile)
{
	double v[12000];
	struct pg_rng r;

	for (size_t i = 0; i < 1000; i++)
		v[i] = (double)(i + 1);
	/* rank 2 at n = 1000: the second largest */
	ck_assert_double_eq(pg_tails_estimate(v, 1000, 0.99, C), 999);
	ck_assert_double_eq(pg_tails_estimate(v, 662, 0.99, C), 662);
	ck_assert(isnan(pg_tails_estimate(v, 661, 0.99, C)));
	ck_assert_double_eq(pg_tails_estimate(v, 100, 0.90, C), 98);
	ck_assert(isnan(pg_tails_estimate(v, 0, 0.5, C)));

	pg_rng_seed(&r, 21);
	for (int trial = 0; trial < 40; trial++) {
		size_t n = (size_t)pg_rng_range(&r, 11, 12000);
		double p = trial % 2 ? 0.99 : 0.5 + 0.49 * pg_rng_uniform(&r);
		for (size_t i = 0; i < n; i++)
			v[i] = exp(3 * pg_rng_uniform(&r));
		pg_stats_sort(v, n);
		double est = pg_tails_estimate(v, n, p, C);
		if (!isnan(est))
			ck_assert(est >= pg_stats_percentile_sorted(v, n, p * 100));
	}
}
END_TEST

static Suite *tails_suite(void)
{
	Suite *s = suite_create("tails");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, betai_closed_forms);
	tcase_add_test(tc, minimum_n_table);
	tcase_add_test(tc, rank_table);
	tcase_add_test(tc, rank_agrees_with_h_min);
	tcase_add_test(tc, server_rule_and_its_mirror);
	tcase_add_test(tc, estimate_is_an_order_statistic_above_the_percentile);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(tails_suite());
}
