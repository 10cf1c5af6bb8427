#ifndef PERFGATE_RESULTS_TAILS_H
#define PERFGATE_RESULTS_TAILS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Certified percentiles: MLPerf LoadGen's early-stopping rule
 * (mlcommons/inference_policies, inference_rules.adoc, appendix "Early
 * Stopping Criterion"; loadgen/early_stopping.cc and results.cc), with
 * LoadGen's constants, confidence c = 0.99 and tolerance d = 0.
 *
 * With p the percentile as a fraction (0.99), a sample of n values of
 * which t lie above a bound shows, at confidence c, that at least a
 * fraction p of the population lies under it when
 *
 *     I_p(n - t, t + 1) <= 1 - c
 *
 * (I the regularised incomplete beta function: the probability that a
 * system exactly at p -- a "minimally failing" one -- shows t or fewer of
 * n over the bound). h_min(t) is the smallest h with I_p(h, t + 1) <=
 * 1 - c, so the condition is n >= h_min(t) + t. The certified estimate of
 * the p-quantile of n samples is the t-th largest sample for the largest
 * such t: an upper confidence bound on the true quantile, never below the
 * plain percentile, approaching it as n grows. Below h_min(1) + 1 samples
 * (64 for p90, 130 for p95, 662 for p99, 6,636 for p99.9) there is none.
 *
 * The rule assumes independent samples; requests of one serving run are
 * not quite (batching), so the bound is about the run's sample, not the
 * run-to-run spread. Pure; nothing here allocates.
 */

#define PG_TAILS_CONFIDENCE 0.99

/* The regularised incomplete beta function I_x(a, b) for a, b > 0 and x
 * in [0, 1] (Numerical Recipes' continued fraction, evaluated by the
 * modified Lentz method); NAN for arguments outside those ranges or when
 * the fraction does not converge. */
double pg_tails_betai(double a, double b, double x);

/* MLPerf's server rule: n samples with t over the bound certify, at
 * confidence c, that a fraction p of the population is under it:
 * I_p(n - t, t + 1) <= 1 - c. False when t >= n. */
bool pg_tails_passes(long n, long t, double p, double c);

/* The mirror image (not in MLPerf): t or more of n over the bound are
 * unlikely (probability <= 1 - c) for a system that meets p:
 * I_{1-p}(t, n - t + 1) <= 1 - c. False when t == 0. */
bool pg_tails_fails(long n, long t, double p, double c);

/* h_min(t): the smallest h >= 1 with I_p(h, t + 1) <= 1 - c; -1 for
 * arguments out of range (t < 0, p or c outside (0, 1)). */
long pg_tails_h_min(long t, double p, double c);

/* The fewest samples with a certified p-quantile: h_min(1) + 1. */
long pg_tails_min_n(double p, double c);

/* Which order statistic certifies the p-quantile of n samples: the
 * largest t >= 1 with n >= h_min(t) + t, counted from the top (1 = the
 * maximum); 0 when n < pg_tails_min_n(p, c). */
long pg_tails_rank(long n, double p, double c);

/* The certified p-quantile of sorted[0..n) (ascending): sorted[n - t]
 * for t = pg_tails_rank(n, p, c); NAN when there is none. */
double pg_tails_estimate(const double *sorted, size_t n, double p, double c);

/* The p-quantile of Student's t distribution with df degrees of freedom
 * (its CDF is 1 - I_{df/(df+t^2)}(df/2, 1/2) / 2 for t > 0), for the
 * intervals of results/frontier.h; NAN for p outside (0, 1) or df <= 0. */
double pg_tails_t_quantile(double p, double df);

#endif
