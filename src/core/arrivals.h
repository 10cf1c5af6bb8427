#ifndef PERFGATE_CORE_ARRIVALS_H
#define PERFGATE_CORE_ARRIVALS_H

#include <stddef.h>
#include <stdint.h>

struct pg_error;

/*
 * The arrival schedule of a serving point, computed up front as vLLM's
 * get_request does (research/loadgen.md 1.6): one inter-arrival gap per
 * request -- 0 when rate is infinite, 1/rate when burstiness is infinite,
 * else Gamma(shape = burstiness, scale = 1/(rate * burstiness)), so 1.0 is
 * a Poisson process -- made cumulative, then rescaled so that the last
 * request is due at exactly n/rate. out[i] is request i's send time in
 * seconds after the start of dispatch; requests are sent on this absolute
 * schedule, never relative to each other.
 *
 * PG_ECONFIG for rate <= 0, burstiness <= 0 or NaN.
 */
int pg_arrivals(double *out, size_t n, double rate, double burstiness, uint64_t seed,
		struct pg_error *err);

#endif
