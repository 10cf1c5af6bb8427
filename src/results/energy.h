#ifndef PERFGATE_RESULTS_ENERGY_H
#define PERFGATE_RESULTS_ENERGY_H

#include <jansson.h>

/*
 * Energy per output token, under the names vLLM's bench serve gives it
 * (vllm/benchmarks/lib/energy.py): gpu_energy_j, gpu_energy_duration_s,
 * gpu_avg_power_w, gpu_energy_per_output_token_j and energy_gpu_ids, set on
 * a result perfgate measured from its telemetry's gpu.energy (the sum over
 * the point's GPUs of their energy counters' rise over the point's window,
 * telemetry/series.h). The tokens are those of every run in that window:
 * the sum of perfgate.repeats' total_output_tokens when the point ran
 * several times, else the result's. Nothing is set when the telemetry has
 * no energy (no counter, or one that reset) or when the result carries its
 * client's own (a vllm bench serve that measured it). Pure.
 */
void pg_result_energy(json_t *result);

#endif
