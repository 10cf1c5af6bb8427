#ifndef PERFGATE_GATE_COMPARE_STATS_H
#define PERFGATE_GATE_COMPARE_STATS_H

#include <stdbool.h>
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

/* ------------------------------------------------------------------ */
/* The step decision (gate/compare_step.c) and the history's change points */

/* The median of x[0..n), NAN values left out; x is reordered (no copy,
 * no allocation). NAN when nothing is left. */
double pg_cmpstat_median_inplace(double *x, size_t n);

/* Upper tail of the standard normal: P(Z > z). */
double pg_cmpstat_normal_sf(double z);

/* Upper tail of Student's t with df degrees of freedom (df > 0, not
 * necessarily whole): P(T > t). df = INFINITY is the normal's. */
double pg_cmpstat_t_sf(double t, double df);

/* The upper p-quantile of Student's t with df degrees of freedom: the t
 * with P(T > t) = p (0 < p < 1; df > 0, not necessarily whole). NAN
 * otherwise. */
double pg_cmpstat_t_quantile(double p, double df);

/*
 * The two-sided interval at level (0.95) that inverts the gate's t test
 * of an effect e with standard deviation sd on df degrees of freedom:
 * e -+ t_{df, (1 - level) / 2} sd. A one-sided p-value under (1 - level)
 * / 2 is the interval lying wholly on that side of 0. False (and NANs)
 * when there is no sd or df to build it from.
 */
bool pg_cmpstat_t_interval(double e, double sd, double df, double level, double *lo, double *hi);

/*
 * A robust standard deviation of x[0..n) around centre: the deviations are
 * cut at 2.5 x (1.4826 MAD) and their root mean square rescaled to be a
 * normal's sd (about 90% of the sd's efficiency on clean data, where the
 * MAD alone has 37%; a few wild values move it little). NAN values are
 * left out; NAN with fewer than 2 values.
 */
double pg_cmpstat_robust_sd(const double *x, size_t n, double centre);

/*
 * Holm's step-down adjustment: adj[i] = the smallest family-wise level at
 * which hypothesis i is rejected, for the p-values p[0..n) (NAN: not
 * tested, left out of the family and NAN in adj). A hypothesis is rejected
 * at family-wise level a when adj[i] <= a. Valid under any dependence.
 */
void pg_cmpstat_holm(const double *p, size_t n, double *adj);

/*
 * Tukey's median polish of a rows x cols table (row-major, NAN: missing):
 * y[r][c] ~ row[r] + col[c], by alternating medians, with the rows'
 * effects centred on 0 (their median). Rows or columns with no value get
 * NAN. For the history, a row is a job and a column a test point: row is
 * the job's common offset, col the point's level without it.
 */
void pg_cmpstat_median_polish(const double *y, size_t rows, size_t cols, double *row, double *col);
/* The same of the table by columns: yt[c * rows + r] is y[r][c]. */
void pg_cmpstat_median_polish_cols(const double *yt, size_t rows, size_t cols, double *row,
				   double *col);

/*
 * Change points of a series by binary segmentation: the split of a segment
 * where the medians of the two sides differ most relative to the spread
 * inside them (a robust two-sample t statistic), kept when its p-value,
 * Bonferroni-corrected over the candidate splits, is below p_max and the
 * medians differ by at least min_shift; then each side again. Both sides
 * keep at least min_seg values (>= 2). The robustness matters: a slow job
 * is one wild value, not a step. out[] gets the indices where a new level
 * starts, ascending; returns how many (at most max).
 */
struct pg_cp_opts {
	size_t min_seg;   /* default 3 */
	double p_max;     /* default 0.001 */
	double min_shift; /* in the series' units; 0: any */
};
size_t pg_cmpstat_change_points(const double *x, size_t n, const struct pg_cp_opts *o, size_t *out,
				size_t max);

/*
 * P(the largest of m standard normals with common correlation rho >= z):
 * the tail of a max statistic, for a point's metrics that move together.
 * rho is clipped to [0, 1); one metric or rho near 1 is the normal's tail.
 */
double pg_cmpstat_max_equicorr_sf(double z, size_t m, double rho);

/*
 * The tails of residuals measured in robust sds (pg_cmpstat_robust_sd):
 * the share beyond 3 of them, as a Student t distribution with *nu degrees
 * of freedom would have it, and *scale, that t's own robust sd (so that a
 * residual z robust sds out is z * scale on the t's scale). share is
 * smoothed towards the normal's 0.27% by `prior` pseudo-residuals first;
 * a normal share or less gives nu INFINITY, scale 1.
 */
void pg_cmpstat_tail_shape(size_t beyond, size_t n, double prior, double *nu, double *scale);

/*
 * Each change point cps[0..n) (ascending) moved to where its segment and
 * the one before it are split best (the least sum of absolute deviations
 * from their medians), keeping at least 2 values before it and at least
 * `last_min` after the last one (2 after the others).
 */
void pg_cmpstat_refine_change_points(const double *x, size_t len, size_t *cps, size_t n,
				     size_t last_min);

/*
 * A step in the last `tail` values of x[from..n) that binary segmentation
 * cannot see yet (its segments need min_seg values): each of them beyond
 * the level before them (the median of x[from..n - tail), at least 3
 * values) by more than `sigmas` predicted sds and by min_shift, all on the
 * same side. The noise is the series' own: the robust sd of its successive
 * differences over sqrt 2, which a step moves by one difference only.
 * True and *shift (the tail's median minus the level) when there is one.
 */
bool pg_cmpstat_tail_step(const double *x, size_t n, size_t from, size_t tail, double sigmas,
			  double min_shift, double *shift);

/*
 * A monotone trend: Theil-Sen slope (per step) and the two-sided
 * Mann-Kendall p-value of x[0..n) (NAN values left out), and where a slope
 * began: the hinge of the best fit of "flat, then a straight line" (least
 * squares over every candidate start). NAN slope and p for n < 4.
 */
struct pg_trend {
	double slope;   /* per step */
	double p_value; /* two-sided */
	size_t start;   /* index where the slope begins */
};
void pg_cmpstat_trend(struct pg_trend *out, const double *x, size_t n);
/* The same when its p-value is below p_max; otherwise only the p-value
 * (the slope NAN, the start 0): the slope and its start cost most, and a
 * search for creep needs them only for a trend it keeps. */
void pg_cmpstat_trend_below(struct pg_trend *out, const double *x, size_t n, double p_max);

#endif
