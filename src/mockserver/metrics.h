#ifndef PERFGATE_MOCKSERVER_METRICS_H
#define PERFGATE_MOCKSERVER_METRICS_H

#include "mockserver/engine_model.h"

struct pg_buf;

/*
 * GET /metrics of the mock server: the engine model's state under vLLM's
 * own metric names and types (V1 engine, one engine, labels engine="0" and
 * model_name), in the Prometheus text format, so perfgate's telemetry can
 * be tested end to end without a GPU:
 *
 *   vllm:num_requests_running, vllm:num_requests_waiting (gauges)
 *   vllm:kv_cache_usage_perc (gauge, 0..1)
 *   vllm:num_preemptions_total, vllm:prefix_cache_queries_total,
 *   vllm:prefix_cache_hits_total, vllm:prompt_tokens_total,
 *   vllm:generation_tokens_total (counters, as prometheus_client writes
 *   them: family "x", sample "x_total")
 */
void pg_mock_metrics_text(struct pg_buf *out, const char *model, const struct pg_engine_counts *c);

#endif
