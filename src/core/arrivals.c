#include "core/arrivals.h"

#include "core/error.h"
#include "core/rng.h"

#include <math.h>

int pg_arrivals(double *out, size_t n, double rate, double burstiness, uint64_t seed,
		struct pg_error *err)
{
	struct pg_rng rng;

	if (!(rate > 0))
		return pg_error_set(err, PG_ECONFIG, "request rate must be > 0 or inf, got %g", rate);
	if (!(burstiness > 0))
		return pg_error_set(err, PG_ECONFIG, "burstiness must be > 0 or inf, got %g", burstiness);
	if (n == 0)
		return 0;

	pg_rng_seed(&rng, seed);
	for (size_t i = 0; i < n; i++) {
		double gap;

		if (isinf(rate))
			gap = 0;
		else if (isinf(burstiness))
			gap = 1.0 / rate;
		else
			gap = pg_rng_gamma(&rng, burstiness, 1.0 / (rate * burstiness));
		out[i] = i ? out[i - 1] + gap : gap;
	}
	/* vLLM (PR #21108) rescales so every seed spans exactly n/rate. */
	if (out[n - 1] != 0) {
		double factor = ((double)n / rate) / out[n - 1];

		for (size_t i = 0; i < n; i++)
			out[i] *= factor;
	}
	return 0;
}
