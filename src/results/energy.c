#include "results/energy.h"

#include "base/jsonw.h"

#include <math.h>

/* Output tokens of the runs in the telemetry's window; NAN unknown. */
static double window_output_tokens(const json_t *result)
{
	const json_t *repeats = pg_json_path(result, "perfgate.repeats");
	const json_t *run, *v;
	double sum = 0;
	size_t i;

	if (json_array_size(repeats) > 1) {
		json_array_foreach(repeats, i, run)
		{
			v = json_object_get(run, "total_output_tokens");
			if (!json_is_number(v))
				return NAN;
			sum += json_number_value(v);
		}
		return sum;
	}
	v = json_object_get(result, "total_output_tokens");
	return json_is_number(v) ? json_number_value(v) : NAN;
}

void pg_result_energy(json_t *result)
{
	const json_t *e = pg_json_path(result, "perfgate.telemetry.gpu.energy");
	const json_t *joules = json_object_get(e, "energy_j");
	const json_t *seconds = json_object_get(e, "seconds");
	double j, s, tokens;

	if (!json_is_number(joules) || !json_is_number(seconds) ||
	    json_object_get(result, "gpu_energy_j"))
		return;
	j = json_number_value(joules);
	s = json_number_value(seconds);
	if (!(s > 0))
		return;
	tokens = window_output_tokens(result);
	json_object_set_new(result, "energy_gpu_ids", json_deep_copy(json_object_get(e, "gpus")));
	json_object_set_new(result, "gpu_energy_j", json_real(j));
	json_object_set_new(result, "gpu_energy_duration_s", json_real(s));
	json_object_set_new(result, "gpu_avg_power_w", json_real(j / s));
	/* vLLM's None for a run without output */
	json_object_set_new(result, "gpu_energy_per_output_token_j",
			    tokens > 0 ? json_real(j / tokens) : json_null());
}
