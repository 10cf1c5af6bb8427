#include "loadgen/arrivals.h"

#include "base/error.h"
#include "base/pyrand.h"

#include <math.h>
#include <string.h>

/* One gap per request at rate_of(i), made cumulative. The gaps come from
 * numpy's legacy stream after np.random.seed(seed), as vLLM draws them, so
 * the same seed gives vllm bench serve's schedule to the last bit. */
static void schedule(double *out, size_t n, double rate, const struct pg_ramp_up *ramp,
		     double burstiness, uint64_t seed)
{
	struct pg_mt mt;

	pg_mt_seed_numpy(&mt, seed);
	for (size_t i = 0; i < n; i++) {
		double r = ramp ? pg_ramp_rate(ramp, i, n) : rate, gap;

		if (isinf(r))
			gap = 0;
		else if (isinf(burstiness))
			gap = 1.0 / r;
		else
			gap = pg_np_gamma(&mt, burstiness, 1.0 / (r * burstiness));
		out[i] = i ? out[i - 1] + gap : gap;
	}
}

int pg_arrivals(double *out, size_t n, double rate, double burstiness, uint64_t seed,
		struct pg_error *err)
{
	if (!(rate > 0))
		return pg_error_set(err, PG_ECONFIG, "request rate must be > 0 or inf, got %g",
				    rate);
	if (!(burstiness > 0))
		return pg_error_set(err, PG_ECONFIG, "burstiness must be > 0 or inf, got %g",
				    burstiness);
	if (n == 0)
		return 0;
	schedule(out, n, rate, NULL, burstiness, seed);
	/* vLLM (PR #21108) rescales so every seed spans exactly n/rate. */
	if (out[n - 1] != 0) {
		double factor = ((double)n / rate) / out[n - 1];
		for (size_t i = 0; i < n; i++)
			out[i] *= factor;
	}
	return 0;
}

const char *pg_ramp_strategy_name(enum pg_ramp_strategy s)
{
	switch (s) {
	case PG_RAMP_LINEAR:
		return "linear";
	case PG_RAMP_EXPONENTIAL:
		return "exponential";
	default:
		return NULL;
	}
}

enum pg_ramp_strategy pg_ramp_strategy_parse(const char *name)
{
	if (name && !strcmp(name, "linear"))
		return PG_RAMP_LINEAR;
	if (name && !strcmp(name, "exponential"))
		return PG_RAMP_EXPONENTIAL;
	return PG_RAMP_NONE;
}

double pg_ramp_rate(const struct pg_ramp_up *ramp, size_t i, size_t n)
{
	double progress = (double)i / (double)(n > 1 ? n - 1 : 1);
	double start = (double)ramp->start_rps, end = (double)ramp->end_rps;

	if (ramp->strategy == PG_RAMP_EXPONENTIAL)
		return start * pow(end / start, progress);
	return start + (end - start) * progress;
}

int pg_arrivals_ramp(double *out, size_t n, const struct pg_ramp_up *ramp, double burstiness,
		     uint64_t seed, struct pg_error *err)
{
	if (ramp->strategy == PG_RAMP_NONE)
		return pg_error_set(err, PG_ECONFIG,
				    "ramp-up: no strategy (linear or exponential)");
	if (ramp->start_rps < 1 || ramp->end_rps < 1)
		return pg_error_set(
			err, PG_ECONFIG,
			"ramp-up: start and end rates must be >= 1 req/s, got %ld and %ld",
			ramp->start_rps, ramp->end_rps);
	if (!(burstiness > 0))
		return pg_error_set(err, PG_ECONFIG, "burstiness must be > 0 or inf, got %g",
				    burstiness);
	if (n)
		schedule(out, n, INFINITY, ramp, burstiness, seed);
	return 0;
}
