#include "results/metrics.h"
#include "base/jsonw.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LAT  PG_SUITE_LATENCY
#define THR  PG_SUITE_THROUGHPUT
#define SRV  PG_SUITE_SERVING
#define BOOT PG_SUITE_STARTUP
#define UP   PG_HIGHER_IS_BETTER
#define DOWN PG_LOWER_IS_BETTER

/*
 * Default tolerances and floors follow docs/design/gate-policy.md §2;
 * bench/gate-sim checks them (docs/gate.md, "How well it works": with a 20-run
 * git baseline and a confirmation re-run, throughput's 2.5% keeps false
 * alarms under 1% and catches a 5% regression with over 95% power).
 * thresholds/<GPU>.yml overrides them per GPU, test and metric.
 *
 * frontier is never in a result: it names the one decision per
 * concurrency or rate ladder (gate/compare_frontier.h), so that thresholds
 * files can set its rule. slo_attainment* are shares of requests (stored 0..1, shown in %) that
 * met the test's goodput SLOs; a thresholds file bounds them with
 * `min: 99%` (gate/compare_slo.h). certified_* are MLPerf's early-stopping estimates of the same tails
 * (results/tails.h, perfgate.certified in the result): an upper bound on
 * the true p99, absent below the 662 samples it needs.
 */
/* clang-format off */
static const struct pg_metric metrics[] = {
	/* id, suite, key, scale, header, label, unit, direction, class, gated, tolerance, floor */
	{ "mean_latency_ms", LAT, "avg_latency", 1000, "Mean latency (ms)", "Mean latency", "ms", DOWN, PG_CLASS_LATENCY, false, 0.03, 5 },
	{ "median_latency_ms", LAT, "percentiles.50", 1000, "Median latency (ms)", "Median latency", "ms", DOWN, PG_CLASS_LATENCY, true, 0.03, 5 },
	{ "p90_latency_ms", LAT, "percentiles.90", 1000, NULL, "P90 latency", "ms", DOWN, PG_CLASS_TAIL, false, 0.05, 10 },
	{ "p99_latency_ms", LAT, "percentiles.99", 1000, "P99 latency (ms)", "P99 latency", "ms", DOWN, PG_CLASS_TAIL, false, 0.07, 10 },
	{ "certified_p99_latency_ms", LAT, "perfgate.certified.latency.p99", 1, "Cert. P99 latency (ms)", "Certified P99 latency", "ms", DOWN, PG_CLASS_TAIL, false, 0.07, 10 },

	{ "failed", THR, "failed", 1, "Failed", "Failed requests", "", PG_NO_DIRECTION, PG_CLASS_COUNT, false, 0, 0 },
	{ "requests_per_second", THR, "requests_per_second", 1, "Tput (req/s)", "Request throughput", "req/s", UP, PG_CLASS_THROUGHPUT, true, 0.025, 0 },
	{ "tokens_per_second", THR, "tokens_per_second", 1, NULL, "Total token throughput", "tok/s", UP, PG_CLASS_THROUGHPUT, false, 0.025, 0 },
	{ "output_tokens_per_second", THR, "output_tokens_per_second", 1, NULL, "Output token throughput", "tok/s", UP, PG_CLASS_THROUGHPUT, false, 0.025, 0 },

	{ "completed", SRV, "completed", 1, "# of req.", "Completed requests", "", PG_NO_DIRECTION, PG_CLASS_COUNT, false, 0, 0 },
	/* a report column only when some point failed (report/report.c) */
	{ "failed", SRV, "failed", 1, "Failed", "Failed requests", "", PG_NO_DIRECTION, PG_CLASS_COUNT, false, 0, 0 },
	{ "request_throughput", SRV, "request_throughput", 1, "Tput (req/s)", "Request throughput", "req/s", UP, PG_CLASS_THROUGHPUT, false, 0.025, 0 },
	{ "output_throughput", SRV, "output_throughput", 1, "Output Tput (tok/s)", "Output token throughput", "tok/s", UP, PG_CLASS_THROUGHPUT, true, 0.025, 0 },
	{ "total_token_throughput", SRV, "total_token_throughput", 1, "Total Tput (tok/s)", "Total token throughput", "tok/s", UP, PG_CLASS_THROUGHPUT, false, 0.025, 0 },
	{ "mean_ttft_ms", SRV, "mean_ttft_ms", 1, "Mean TTFT (ms)", "Mean TTFT", "ms", DOWN, PG_CLASS_LATENCY, false, 0.04, 1 },
	{ "median_ttft_ms", SRV, "median_ttft_ms", 1, "Median TTFT (ms)", "Median TTFT", "ms", DOWN, PG_CLASS_LATENCY, true, 0.04, 1 },
	{ "p99_ttft_ms", SRV, "p99_ttft_ms", 1, "P99 TTFT (ms)", "P99 TTFT", "ms", DOWN, PG_CLASS_TAIL, false, 0.07, 2 },
	{ "certified_p99_ttft_ms", SRV, "perfgate.certified.ttft.p99", 1, "Cert. P99 TTFT (ms)", "Certified P99 TTFT", "ms", DOWN, PG_CLASS_TAIL, false, 0.07, 2 },
	{ "mean_tpot_ms", SRV, "mean_tpot_ms", 1, "Mean TPOT (ms)", "Mean TPOT", "ms", DOWN, PG_CLASS_LATENCY, false, 0.03, 0.1 },
	{ "median_tpot_ms", SRV, "median_tpot_ms", 1, "Median TPOT (ms)", "Median TPOT", "ms", DOWN, PG_CLASS_LATENCY, true, 0.03, 0.1 },
	{ "p99_tpot_ms", SRV, "p99_tpot_ms", 1, "P99 TPOT (ms)", "P99 TPOT", "ms", DOWN, PG_CLASS_TAIL, false, 0.07, 0.5 },
	{ "certified_p99_tpot_ms", SRV, "perfgate.certified.tpot.p99", 1, "Cert. P99 TPOT (ms)", "Certified P99 TPOT", "ms", DOWN, PG_CLASS_TAIL, false, 0.07, 0.5 },
	{ "mean_itl_ms", SRV, "mean_itl_ms", 1, "Mean ITL (ms)", "Mean ITL", "ms", DOWN, PG_CLASS_LATENCY, false, 0.03, 0.1 },
	{ "median_itl_ms", SRV, "median_itl_ms", 1, "Median ITL (ms)", "Median ITL", "ms", DOWN, PG_CLASS_LATENCY, false, 0.03, 0.1 },
	{ "p99_itl_ms", SRV, "p99_itl_ms", 1, "P99 ITL (ms)", "P99 ITL", "ms", DOWN, PG_CLASS_TAIL, false, 0.07, 0.5 },
	{ "certified_p99_itl_ms", SRV, "perfgate.certified.itl.p99", 1, "Cert. P99 ITL (ms)", "Certified P99 ITL", "ms", DOWN, PG_CLASS_TAIL, false, 0.07, 0.5 },
	{ "mean_e2el_ms", SRV, "mean_e2el_ms", 1, NULL, "Mean E2E latency", "ms", DOWN, PG_CLASS_LATENCY, false, 0.03, 5 },
	{ "median_e2el_ms", SRV, "median_e2el_ms", 1, NULL, "Median E2E latency", "ms", DOWN, PG_CLASS_LATENCY, false, 0.03, 5 },
	{ "p99_e2el_ms", SRV, "p99_e2el_ms", 1, NULL, "P99 E2E latency", "ms", DOWN, PG_CLASS_TAIL, false, 0.07, 10 },
	{ "certified_p99_e2el_ms", SRV, "perfgate.certified.e2el.p99", 1, NULL, "Certified P99 E2E latency", "ms", DOWN, PG_CLASS_TAIL, false, 0.07, 10 },
	{ "request_goodput", SRV, "request_goodput", 1, NULL, "Request goodput", "req/s", UP, PG_CLASS_THROUGHPUT, false, 0.025, 0 },
	{ "slo_attainment", SRV, "slo_attainment", 100, "SLO attainment (%)", "SLO attainment", "%", UP, PG_CLASS_THROUGHPUT, false, 0.02, 0.5 },
	{ "slo_attainment_ttft", SRV, "slo_attainment_ttft", 100, NULL, "SLO attainment, TTFT", "%", UP, PG_CLASS_THROUGHPUT, false, 0.02, 0.5 },
	{ "slo_attainment_tpot", SRV, "slo_attainment_tpot", 100, NULL, "SLO attainment, TPOT", "%", UP, PG_CLASS_THROUGHPUT, false, 0.02, 0.5 },
	{ "slo_attainment_itl", SRV, "slo_attainment_itl", 100, NULL, "SLO attainment, ITL", "%", UP, PG_CLASS_THROUGHPUT, false, 0.02, 0.5 },
	{ "slo_attainment_e2el", SRV, "slo_attainment_e2el", 100, NULL, "SLO attainment, E2E latency", "%", UP, PG_CLASS_THROUGHPUT, false, 0.02, 0.5 },
	{ "frontier", SRV, "perfgate.frontier", 1, NULL, "Frontier: tput per GPU", "", UP, PG_CLASS_THROUGHPUT, false, 0.01, 0 },
	{ "token_goodput", SRV, "token_goodput", 1, "Token goodput (tok/s)", "Token goodput", "tok/s", UP, PG_CLASS_THROUGHPUT, false, 0.025, 0 },
	/* multi-turn sessions (docs/sessions.md): shown in the report's
	 * sessions table, not as columns; a thresholds file can gate on them
	 * (prefix caching that stops working shows first here) */
	{ "median_ttft_first_ms", SRV, "median_ttft_ms_first_turn", 1, NULL, "Median TTFT, first turn", "ms", DOWN, PG_CLASS_LATENCY, false, 0.04, 1 },
	{ "median_ttft_later_ms", SRV, "median_ttft_ms_later_turns", 1, NULL, "Median TTFT, later turns", "ms", DOWN, PG_CLASS_LATENCY, false, 0.04, 1 },
	{ "prefix_cache_hit_rate", SRV, "prefix_cache_hit_rate", 100, NULL, "Prefix-cache hit rate", "%", UP, PG_CLASS_THROUGHPUT, false, 0.02, 0.5 },
	/* serving keys of the newest vllm bench serve (docs/import.md): the
	 * wait for a free slot under --max-concurrency and E2EL with it,
	 * pooling models' sequences, speculative decoding's acceptance */
	{ "mean_client_queue_ms", SRV, "mean_client_queue_time_ms", 1, NULL, "Mean client queue time", "ms", DOWN, PG_CLASS_LATENCY, false, 0.05, 1 },
	{ "p99_client_queue_ms", SRV, "p99_client_queue_time_ms", 1, NULL, "P99 client queue time", "ms", DOWN, PG_CLASS_TAIL, false, 0.07, 2 },
	{ "mean_e2el_queued_ms", SRV, "mean_e2el_including_client_queue_ms", 1, NULL, "Mean E2EL incl. queue", "ms", DOWN, PG_CLASS_LATENCY, false, 0.03, 5 },
	{ "p99_e2el_queued_ms", SRV, "p99_e2el_including_client_queue_ms", 1, NULL, "P99 E2EL incl. queue", "ms", DOWN, PG_CLASS_TAIL, false, 0.07, 10 },
	{ "input_seq_throughput", SRV, "input_sequence_throughput", 1, NULL, "Input sequence tput", "seq/s", UP, PG_CLASS_THROUGHPUT, false, 0.025, 0 },
	{ "total_input_sequences", SRV, "total_input_sequences", 1, NULL, "Input sequences", "", PG_NO_DIRECTION, PG_CLASS_COUNT, false, 0, 0 },
	{ "spec_acceptance_rate", SRV, "spec_decode_acceptance_rate", 1, NULL, "Spec-decode acceptance rate", "%", UP, PG_CLASS_THROUGHPUT, false, 0.02, 0.5 },
	{ "spec_acceptance_length", SRV, "spec_decode_acceptance_length", 1, NULL, "Spec-decode acceptance length", "", UP, PG_CLASS_THROUGHPUT, false, 0.02, 0 },
	/* vLLM's steady_state block: the same keys over the window where the
	 * requests in flight stay at the concurrency cap (no ramp-up, no
	 * drain). A second view of the point, read only under steady_state.,
	 * never in place of the whole run's. Ids of at most 24 characters
	 * and labels of at most 31 with their unit, the widths thresholds
	 * files and the history's trends align to */
	{ "steady_req_throughput", SRV, "steady_state.request_throughput", 1, NULL, "Steady request tput", "req/s", UP, PG_CLASS_THROUGHPUT, false, 0.025, 0 },
	{ "steady_output_throughput", SRV, "steady_state.output_throughput", 1, NULL, "Steady output tput", "tok/s", UP, PG_CLASS_THROUGHPUT, false, 0.025, 0 },
	{ "steady_total_throughput", SRV, "steady_state.total_token_throughput", 1, NULL, "Steady total tput", "tok/s", UP, PG_CLASS_THROUGHPUT, false, 0.025, 0 },
	{ "steady_median_ttft_ms", SRV, "steady_state.median_ttft_ms", 1, NULL, "Steady median TTFT", "ms", DOWN, PG_CLASS_LATENCY, false, 0.04, 1 },
	{ "steady_p99_ttft_ms", SRV, "steady_state.p99_ttft_ms", 1, NULL, "Steady P99 TTFT", "ms", DOWN, PG_CLASS_TAIL, false, 0.07, 2 },
	{ "steady_median_tpot_ms", SRV, "steady_state.median_tpot_ms", 1, NULL, "Steady median TPOT", "ms", DOWN, PG_CLASS_LATENCY, false, 0.03, 0.1 },
	{ "steady_p99_tpot_ms", SRV, "steady_state.p99_tpot_ms", 1, NULL, "Steady P99 TPOT", "ms", DOWN, PG_CLASS_TAIL, false, 0.07, 0.5 },
	{ "steady_median_itl_ms", SRV, "steady_state.median_itl_ms", 1, NULL, "Steady median ITL", "ms", DOWN, PG_CLASS_LATENCY, false, 0.03, 0.1 },
	{ "steady_median_e2el_ms", SRV, "steady_state.median_e2el_ms", 1, NULL, "Steady median E2E latency", "ms", DOWN, PG_CLASS_LATENCY, false, 0.03, 5 },
	/* energy (vLLM's bench serve keys; results/energy.h): the GPUs'
	 * energy counters over the point, per output token the column (its
	 * id shorter than its key, as the client queue ids are) */
	{ "energy_per_out_token_j", SRV, "gpu_energy_per_output_token_j", 1, "Energy/out tok (J)", "GPU energy per output token", "J", DOWN, PG_CLASS_LATENCY, false, 0.05, 0.001 },
	{ "gpu_energy_j", SRV, "gpu_energy_j", 1, NULL, "GPU energy", "J", DOWN, PG_CLASS_LATENCY, false, 0.05, 1 },
	{ "gpu_avg_power_w", SRV, "gpu_avg_power_w", 1, NULL, "GPU mean power", "W", DOWN, PG_CLASS_LATENCY, false, 0.05, 1 },

	/* startup (vllm bench startup's keys, seconds; runner/startup_io.h):
	 * spawn to ready, and spawn to the answer of one request */
	{ "avg_cold_startup_time", BOOT, "avg_cold_startup_time", 1, "Cold start (s)", "Mean cold start", "s", DOWN, PG_CLASS_LATENCY, true, 0.05, 0.05 },
	{ "median_cold_startup_time", BOOT, "cold_startup_percentiles.50", 1, NULL, "Median cold start", "s", DOWN, PG_CLASS_LATENCY, false, 0.05, 0.05 },
	{ "p90_cold_startup_time", BOOT, "cold_startup_percentiles.90", 1, "P90 cold start (s)", "P90 cold start", "s", DOWN, PG_CLASS_TAIL, false, 0.10, 0.1 },
	{ "avg_warm_startup_time", BOOT, "avg_warm_startup_time", 1, "Warm start (s)", "Mean warm start", "s", DOWN, PG_CLASS_LATENCY, true, 0.05, 0.05 },
	{ "median_warm_startup_time", BOOT, "warm_startup_percentiles.50", 1, NULL, "Median warm start", "s", DOWN, PG_CLASS_LATENCY, false, 0.05, 0.05 },
	{ "p90_warm_startup_time", BOOT, "warm_startup_percentiles.90", 1, "P90 warm start (s)", "P90 warm start", "s", DOWN, PG_CLASS_TAIL, false, 0.10, 0.1 },
	{ "avg_cold_first_token", BOOT, "avg_cold_first_token_time", 1, "Cold to 1st token (s)", "Mean cold to first token", "s", DOWN, PG_CLASS_LATENCY, false, 0.05, 0.05 },
	{ "avg_warm_first_token", BOOT, "avg_warm_first_token_time", 1, "Warm to 1st token (s)", "Mean warm to first token", "s", DOWN, PG_CLASS_LATENCY, false, 0.05, 0.05 },
	{ "avg_cold_compile_time", BOOT, "avg_cold_compilation_time", 1, NULL, "Mean cold compilation", "s", DOWN, PG_CLASS_LATENCY, false, 0.05, 0.05 },
	{ "avg_warm_compile_time", BOOT, "avg_warm_compilation_time", 1, NULL, "Mean warm compilation", "s", DOWN, PG_CLASS_LATENCY, false, 0.05, 0.05 },
};
/* clang-format on */

const struct pg_metric *pg_metrics_all(size_t *n)
{
	*n = sizeof(metrics) / sizeof(metrics[0]);
	return metrics;
}

const struct pg_metric *pg_metric_by_id(enum pg_suite_kind suite, const char *id)
{
	for (size_t i = 0; i < sizeof(metrics) / sizeof(metrics[0]); i++)
		if (metrics[i].suite == suite && !strcmp(metrics[i].id, id))
			return &metrics[i];
	return NULL;
}

size_t pg_metric_ids(enum pg_suite_kind suite, const char **out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < sizeof(metrics) / sizeof(metrics[0]) && n < max; i++)
		if (metrics[i].suite == suite)
			out[n++] = metrics[i].id;
	return n;
}

int pg_metric_value(const struct pg_metric *m, const json_t *result, double *out)
{
	json_t *v = pg_json_path(result, m->key);
	double d;

	/* the old "request_goodput:" spelling is normalised by the importer */
	if (!v || !json_is_number(v))
		return -1;
	d = json_number_value(v);
	if (!isfinite(d))
		return -1;
	*out = d * m->scale;
	return 0;
}

int pg_result_kind(const json_t *result)
{
	json_t *pg = json_object_get(result, "perfgate");
	json_t *suite = pg ? json_object_get(pg, "suite") : NULL;

	if (!json_is_object(result))
		return -1;
	if (json_is_string(suite))
		return pg_suite_kind_parse(json_string_value(suite));
	if (json_object_get(result, "avg_cold_startup_time") ||
	    json_object_get(result, "avg_warm_startup_time"))
		return PG_SUITE_STARTUP;
	if (json_object_get(result, "avg_latency") ||
	    (json_object_get(result, "latencies") && json_object_get(result, "percentiles")))
		return PG_SUITE_LATENCY;
	if (json_object_get(result, "requests_per_second") ||
	    json_object_get(result, "elapsed_time"))
		return PG_SUITE_THROUGHPUT;
	if (json_object_get(result, "request_throughput") ||
	    json_object_get(result, "mean_ttft_ms") || json_object_get(result, "completed"))
		return PG_SUITE_SERVING;
	return -1;
}
