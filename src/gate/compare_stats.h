#ifndef PERFGATE_GATE_COMPARE_STATS_H
#define PERFGATE_GATE_COMPARE_STATS_H

#include <stddef.h>

/*
 * The statistics behind the gate's verdicts. Pure functions of their
 * arguments; inputs are never modified (they sort copies).
 */

/* Median (mean of the two middle values for even n); NAN for n == 0. */
double pg_cmpstat_median(const double *x, size_t n);

/* Median absolute deviation from the median, unscaled (multiply by 1.4826
 * for a normal sd estimate); NAN for n == 0. */
double pg_cmpstat_mad(const double *x, size_t n);

/*
 * Robust relative spread: 1.4826 * MAD / |median|, an estimate of the
 * coefficient of variation that one outlier cannot inflate. NAN when n < 2
 * or the median is 0.
 */
double pg_cmpstat_robust_cv(const double *x, size_t n);

/*
 * One-sided Mann-Whitney U test of "x is stochastically greater than y".
 * U counts the pairs (x_i, y_j) with x_i > y_j, ties counting one half.
 * Returns P(U >= U_observed) under the null hypothesis that both samples
 * come from one continuous distribution: the exact distribution of U when
 * nx * ny <= 2500 (so 5 vs 5, 10 vs 10 and 50 vs 50 are exact), else the
 * normal approximation with continuity and tie corrections. NAN when
 * either sample is empty. *u_out (if not NULL) receives U.
 */
double pg_cmpstat_mwu_greater(const double *x, size_t nx, const double *y, size_t ny,
			      double *u_out);

/*
 * The smallest p-value the one-sided test can reach with these sample
 * sizes, 1 / C(nx + ny, nx): with 5 vs 5 it is 1/252 ~ 0.004, with 3 vs 3
 * 0.05 (so the test cannot reject at alpha 0.05).
 */
double pg_cmpstat_mwu_min_p(size_t nx, size_t ny);

/* Wilson score interval for k successes in n trials at normal quantile z
 * (1.959964 for 95%). */
void pg_cmpstat_wilson(size_t k, size_t n, double z, double *lo, double *hi);

#endif
