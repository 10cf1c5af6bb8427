#ifndef PERFGATE_RESULTS_REPEATS_H
#define PERFGATE_RESULTS_REPEATS_H

#include <jansson.h>
#include <stddef.h>

/*
 * Repeats of a test point (`repeat: N`) make one result, not N files
 * (docs/results.md): the top-level values are the median over the runs,
 * and perfgate.repeats keeps each run's metrics so the gate can decide on
 * the samples.
 */

/*
 * The merged result of runs[0..n): keys in the order of the last run; a
 * number is the median of that key over the runs that have it as a number
 * (an integer stays an integer when the median is one); an object of
 * numbers (latency's "percentiles") is merged key by key; a boolean is
 * true when any run's is (client_bound); anything else (strings, arrays,
 * null) is the last run's. n must be >= 1.
 * Returns a new reference.
 */
json_t *pg_repeats_median(json_t *const *runs, size_t n);

/*
 * One run's metrics for perfgate.repeats: its numbers and objects of
 * numbers, in order; per-request arrays and strings are left out (they
 * would multiply the file's size by N and are not samples of the metric),
 * and so is the run's "perfgate" object (the certified estimates, whose
 * medians the merged result keeps).
 * Returns a new reference.
 */
json_t *pg_repeats_metrics(const json_t *run);

/* Median of v[0..n) (sorts v); NAN when n is 0. Linear between the two
 * middle values for even n, as numpy.median. */
double pg_median(double *v, size_t n);

#endif
