#ifndef PERFGATE_LOADGEN_ARRIVALS_H
#define PERFGATE_LOADGEN_ARRIVALS_H

#include <stddef.h>
#include <stdint.h>

struct pg_error;

/*
 * The arrival schedule of a serving point, computed up front as vLLM's
 * get_request does (docs/design/vllm-benchmarks.md §4): one inter-arrival gap per
 * request -- 0 when rate is infinite, 1/rate when burstiness is infinite,
 * else Gamma(shape = burstiness, scale = 1/(rate * burstiness)), so 1.0 is
 * a Poisson process, drawn from numpy's stream after np.random.seed(seed)
 * (base/pyrand.h): the same seed, the same schedule as vllm bench serve
 * -- made cumulative, then rescaled so that the last
 * request is due at exactly n/rate. out[i] is request i's send time in
 * seconds after the start of dispatch; requests are sent on this absolute
 * schedule, never relative to each other.
 *
 * PG_ECONFIG for rate <= 0, burstiness <= 0 or NaN.
 */
int pg_arrivals(double *out, size_t n, double rate, double burstiness, uint64_t seed,
		struct pg_error *err);

/* vLLM's --ramp-up-strategy: the request rate rises over the requests. */
enum pg_ramp_strategy { PG_RAMP_NONE, PG_RAMP_LINEAR, PG_RAMP_EXPONENTIAL };

struct pg_ramp_up {
	enum pg_ramp_strategy strategy;
	long start_rps; /* >= 1, as vLLM's integers */
	long end_rps;
};

/* "linear", "exponential", or NULL for PG_RAMP_NONE. */
const char *pg_ramp_strategy_name(enum pg_ramp_strategy s);
/* The strategy a name gives; PG_RAMP_NONE for any other text. */
enum pg_ramp_strategy pg_ramp_strategy_parse(const char *name);

/* The rate request i of n is sent at: with progress p = i / max(n-1, 1),
 * linear start + (end-start)p, exponential start (end/start)^p. */
double pg_ramp_rate(const struct pg_ramp_up *ramp, size_t i, size_t n);

/*
 * The same schedule with the rate of each gap from the ramp instead of one
 * rate, and, as vLLM does, no rescaling (the ramp fixes the span).
 * PG_ECONFIG for a ramp without strategy, rates < 1 or bad burstiness.
 */
int pg_arrivals_ramp(double *out, size_t n, const struct pg_ramp_up *ramp, double burstiness,
		     uint64_t seed, struct pg_error *err);

#endif
