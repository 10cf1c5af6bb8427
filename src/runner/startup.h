#ifndef PERFGATE_RUNNER_STARTUP_H
#define PERFGATE_RUNNER_STARTUP_H

#include <jansson.h>
#include <stddef.h>

/*
 * A startup test's result in the keys of `vllm bench startup --output-json`
 * (vllm/benchmarks/startup.py): per phase ("cold", "warm") and measure
 * ("startup": spawn to ready; perfgate's own "first_token": spawn to the
 * answer of one max_tokens 1 request),
 *
 *   avg_<phase>_<measure>_time        the mean, seconds
 *   <phase>_<measure>_times           every start, in order
 *   <phase>_<measure>_percentiles     {"10", "25", "50", "75", "90", "99"}:
 *                                     numpy's linear percentiles
 *
 * A phase with no starts has none of its keys. Pure.
 */

/* The percentiles vLLM's startup benchmark reports (PERCENTAGES). */
extern const int pg_startup_percentages[6];

struct pg_startup_times {
	const double *v; /* seconds, in start order */
	size_t n;
};

/* Add one phase's keys for one measure to result. */
void pg_startup_put(json_t *result, const char *phase, const char *measure,
		    const struct pg_startup_times *times);

#endif
