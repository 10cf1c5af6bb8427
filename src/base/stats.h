#ifndef PERFGATE_BASE_STATS_H
#define PERFGATE_BASE_STATS_H

#include <stddef.h>

/*
 * Summary statistics with numpy's exact semantics, because vLLM computes
 * its serving metrics with numpy and perfgate promises the same numbers:
 *
 *  - pg_stats_sum: numpy's pairwise summation (8-way unrolled blocks of up
 *    to 128), so sums and means agree with np.sum/np.mean to the last bit;
 *  - mean = sum / n; median = middle value, or the mean of the two middle
 *    values; std = population standard deviation (ddof = 0) computed as
 *    numpy does (sqrt(mean((x - mean)^2)));
 *  - percentile p in [0, 100]: numpy's default "linear" method, virtual
 *    index (n - 1) * (p / 100), interpolated with numpy's _lerp.
 *
 * An empty array gives 0 for every statistic (vLLM replaces an empty list
 * by the scalar 0).
 */
/* ln|Gamma(x)|, safe to call from several threads (lgamma writes the
 * global signgam; the trends analyse metrics on threads). */
double pg_stats_log_gamma(double x);
double pg_stats_sum(const double *x, size_t n);
double pg_stats_mean(const double *x, size_t n);
double pg_stats_std(const double *x, size_t n);

/* sorted: ascending (pg_stats_sort). */
double pg_stats_median_sorted(const double *sorted, size_t n);
double pg_stats_percentile_sorted(const double *sorted, size_t n, double p);

void pg_stats_sort(double *x, size_t n);

struct pg_summary {
	double mean, median, std;
};

/* Mean, median and std of x (not modified; a sorted copy goes to
 * sorted_out when not NULL, which must hold n values). */
void pg_stats_summary(struct pg_summary *out, const double *x, size_t n, double *sorted_out);

#endif
