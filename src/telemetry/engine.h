#ifndef PERFGATE_TELEMETRY_ENGINE_H
#define PERFGATE_TELEMETRY_ENGINE_H

#include <stdbool.h>

struct pg_prom;

/*
 * The engine's state, read from its Prometheus /metrics: the same signals
 * whatever the engine calls them. Every series of a metric is summed
 * (data-parallel engines, several model names, tensor-parallel ranks), and
 * KV-cache usage takes the fullest engine (one full engine preempts even
 * when the others are idle).
 *
 *   signal             vLLM                                   SGLang                              TGI
 *   running            vllm:num_requests_running              sglang:num_running_reqs             tgi_batch_current_size
 *   waiting            vllm:num_requests_waiting              sglang:num_queue_reqs               tgi_queue_size
 *   kv_cache_usage     vllm:kv_cache_usage_perc               sglang:token_usage                  -
 *                      (vllm:gpu_cache_usage_perc before 0.10)
 *   preemptions        vllm:num_preemptions_total             sglang:num_retracted_requests_total -
 *   prefix_queries     vllm:prefix_cache_queries_total        -                                   -
 *   prefix_hits        vllm:prefix_cache_hits_total           sglang:cached_tokens_total          -
 *   prefix_hit_rate    vllm:gpu_prefix_cache_hit_rate (V0)    sglang:cache_hit_rate               -
 *   prompt_tokens      vllm:prompt_tokens_total               sglang:prompt_tokens_total          tgi_request_input_length_sum
 *   generation_tokens  vllm:generation_tokens_total           sglang:generation_tokens_total      tgi_request_generated_tokens_sum
 *   spec_draft_tokens  vllm:spec_decode_num_draft_tokens_total
 *   spec_accepted      vllm:spec_decode_num_accepted_tokens_total
 *   spec_accept_rate   vllm:spec_decode_draft_acceptance_rate (V0)  sglang:spec_accept_rate
 *
 * Counters are cumulative since the engine started; summaries take their
 * deltas over a window (telemetry/summary.h), resets included.
 */
enum pg_esig {
	PG_ESIG_RUNNING,
	PG_ESIG_WAITING,
	PG_ESIG_KV_USAGE,
	PG_ESIG_PREEMPTIONS,
	PG_ESIG_PREFIX_QUERIES,
	PG_ESIG_PREFIX_HITS,
	PG_ESIG_PREFIX_HIT_RATE,
	PG_ESIG_PROMPT_TOKENS,
	PG_ESIG_GENERATION_TOKENS,
	PG_ESIG_SPEC_DRAFT,
	PG_ESIG_SPEC_ACCEPTED,
	PG_ESIG_SPEC_ACCEPT_RATE,
	PG_ESIG_COUNT
};

/* The signal's JSON key: "running", "waiting", "kv_cache_usage",
 * "preemptions", "prefix_cache_queries", "prefix_cache_hits",
 * "prefix_cache_hit_rate", "prompt_tokens", "generation_tokens",
 * "spec_decode_draft_tokens", "spec_decode_accepted_tokens",
 * "spec_decode_acceptance_rate". */
const char *pg_esig_name(enum pg_esig s);

/* Counters (cumulative) as opposed to gauges. */
bool pg_esig_is_counter(enum pg_esig s);

struct pg_engine_state {
	double v[PG_ESIG_COUNT]; /* NAN: the engine does not serve it */
};

/*
 * Read the signals out of a parsed scrape. Returns the engine the names
 * belong to ("vllm", "sglang", "tgi"), or NULL when none of the names is
 * there (every value NAN).
 */
const char *pg_engine_state_read(struct pg_engine_state *out, const struct pg_prom *p);

#endif
