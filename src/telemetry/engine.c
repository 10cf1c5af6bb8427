#include "telemetry/engine.h"

#include "telemetry/prom.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

static const char *const names[PG_ESIG_COUNT] = {
	"running",
	"waiting",
	"kv_cache_usage",
	"preemptions",
	"prefix_cache_queries",
	"prefix_cache_hits",
	"prefix_cache_hit_rate",
	"prompt_tokens",
	"generation_tokens",
	"spec_decode_draft_tokens",
	"spec_decode_accepted_tokens",
	"spec_decode_acceptance_rate",
};

const char *pg_esig_name(enum pg_esig s)
{
	return s < PG_ESIG_COUNT ? names[s] : "unknown";
}

bool pg_esig_is_counter(enum pg_esig s)
{
	switch (s) {
	case PG_ESIG_PREEMPTIONS:
	case PG_ESIG_PREFIX_QUERIES:
	case PG_ESIG_PREFIX_HITS:
	case PG_ESIG_PROMPT_TOKENS:
	case PG_ESIG_GENERATION_TOKENS:
	case PG_ESIG_SPEC_DRAFT:
	case PG_ESIG_SPEC_ACCEPTED:
		return true;
	default:
		return false;
	}
}

enum engine { VLLM, SGLANG, TGI, N_ENGINES };

static const char *const engine_names[N_ENGINES] = { "vllm", "sglang", "tgi" };

/* Each signal's metric per engine, newest name first; NULL: not served. */
struct source {
	enum pg_esig sig;
	enum engine engine;
	const char *metric;
	bool max; /* the largest series, not the sum */
};

static const struct source sources[] = {
	{ PG_ESIG_RUNNING, VLLM, "vllm:num_requests_running", false },
	{ PG_ESIG_WAITING, VLLM, "vllm:num_requests_waiting", false },
	{ PG_ESIG_KV_USAGE, VLLM, "vllm:kv_cache_usage_perc", true },
	{ PG_ESIG_KV_USAGE, VLLM, "vllm:gpu_cache_usage_perc", true },
	{ PG_ESIG_PREEMPTIONS, VLLM, "vllm:num_preemptions_total", false },
	{ PG_ESIG_PREFIX_QUERIES, VLLM, "vllm:prefix_cache_queries_total", false },
	{ PG_ESIG_PREFIX_HITS, VLLM, "vllm:prefix_cache_hits_total", false },
	{ PG_ESIG_PREFIX_HIT_RATE, VLLM, "vllm:gpu_prefix_cache_hit_rate", true },
	{ PG_ESIG_PROMPT_TOKENS, VLLM, "vllm:prompt_tokens_total", false },
	{ PG_ESIG_GENERATION_TOKENS, VLLM, "vllm:generation_tokens_total", false },
	{ PG_ESIG_SPEC_DRAFT, VLLM, "vllm:spec_decode_num_draft_tokens_total", false },
	{ PG_ESIG_SPEC_ACCEPTED, VLLM, "vllm:spec_decode_num_accepted_tokens_total", false },
	{ PG_ESIG_SPEC_ACCEPT_RATE, VLLM, "vllm:spec_decode_draft_acceptance_rate", true },

	{ PG_ESIG_RUNNING, SGLANG, "sglang:num_running_reqs", false },
	{ PG_ESIG_WAITING, SGLANG, "sglang:num_queue_reqs", false },
	{ PG_ESIG_KV_USAGE, SGLANG, "sglang:token_usage", true },
	{ PG_ESIG_PREEMPTIONS, SGLANG, "sglang:num_retracted_requests_total", false },
	{ PG_ESIG_PREFIX_HITS, SGLANG, "sglang:cached_tokens_total", false },
	{ PG_ESIG_PREFIX_HIT_RATE, SGLANG, "sglang:cache_hit_rate", true },
	{ PG_ESIG_PROMPT_TOKENS, SGLANG, "sglang:prompt_tokens_total", false },
	{ PG_ESIG_GENERATION_TOKENS, SGLANG, "sglang:generation_tokens_total", false },
	{ PG_ESIG_SPEC_ACCEPT_RATE, SGLANG, "sglang:spec_accept_rate", true },

	{ PG_ESIG_RUNNING, TGI, "tgi_batch_current_size", false },
	{ PG_ESIG_WAITING, TGI, "tgi_queue_size", false },
	{ PG_ESIG_PROMPT_TOKENS, TGI, "tgi_request_input_length_sum", false },
	{ PG_ESIG_GENERATION_TOKENS, TGI, "tgi_request_generated_tokens_sum", false },
};

static bool present(const struct pg_prom *p, const char *metric)
{
	size_t n = 0;

	pg_prom_sum(p, metric, &n);
	return n > 0;
}

const char *pg_engine_state_read(struct pg_engine_state *out, const struct pg_prom *p)
{
	size_t found[N_ENGINES] = { 0 };
	const char *engine = NULL;
	size_t best = 0;

	for (int i = 0; i < PG_ESIG_COUNT; i++)
		out->v[i] = NAN;
	/* the engine is the one most of whose names are there: an engine
	 * that re-exports another's metrics stays itself */
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
		if (present(p, sources[i].metric))
			found[sources[i].engine]++;
	for (int e = 0; e < N_ENGINES; e++) {
		if (found[e] > best) {
			best = found[e];
			engine = engine_names[e];
		}
	}
	if (!engine)
		return NULL;
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++) {
		const struct source *s = &sources[i];
		double v;
		if (strcmp(engine_names[s->engine], engine) || !isnan(out->v[s->sig]))
			continue;
		v = s->max ? pg_prom_max(p, s->metric) : pg_prom_sum(p, s->metric, NULL);
		out->v[s->sig] = v;
	}
	return engine;
}
