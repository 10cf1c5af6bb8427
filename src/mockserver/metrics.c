#include "mockserver/metrics.h"

#include "base/buf.h"

#include <stdint.h>

static void labels(struct pg_buf *out, const char *model)
{
	pg_buf_puts(out, "{engine=\"0\",model_name=\"");
	/* the format's three escapes */
	for (const char *p = model; *p; p++) {
		if (*p == '\\')
			pg_buf_puts(out, "\\\\");
		else if (*p == '"')
			pg_buf_puts(out, "\\\"");
		else if (*p == '\n')
			pg_buf_puts(out, "\\n");
		else
			pg_buf_putc(out, *p);
	}
	pg_buf_puts(out, "\"}");
}

static void gauge(struct pg_buf *out, const char *name, const char *help, const char *model,
		  double v)
{
	pg_buf_printf(out, "# HELP %s %s\n# TYPE %s gauge\n%s", name, help, name, name);
	labels(out, model);
	pg_buf_printf(out, " %.17g\n", v);
}

static void counter(struct pg_buf *out, const char *name, const char *help, const char *model,
		    uint64_t v)
{
	pg_buf_printf(out, "# HELP %s %s\n# TYPE %s counter\n%s_total", name, help, name, name);
	labels(out, model);
	pg_buf_printf(out, " %llu.0\n", (unsigned long long)v);
}

void pg_mock_metrics_text(struct pg_buf *out, const char *model, const struct pg_engine_counts *c)
{
	double kv = c->kv_capacity > 0 ? (double)c->kv_tokens / (double)c->kv_capacity : 0;

	gauge(out, "vllm:num_requests_running", "Number of requests in model execution batches.",
	      model, c->running);
	gauge(out, "vllm:num_requests_waiting", "Number of requests waiting to be processed.",
	      model, c->queued);
	gauge(out, "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", model,
	      kv > 1 ? 1 : kv);
	counter(out, "vllm:num_preemptions", "Cumulative number of preemption from the engine.",
		model, c->preemptions);
	counter(out, "vllm:prefix_cache_queries",
		"Prefix cache queries, in terms of number of queried tokens.", model,
		c->prefix_queries);
	counter(out, "vllm:prefix_cache_hits",
		"Prefix cache hits, in terms of number of cached tokens.", model, c->prefix_hits);
	counter(out, "vllm:prompt_tokens", "Number of prefill tokens processed.", model,
		c->prompt_tokens);
	counter(out, "vllm:generation_tokens", "Number of generation tokens processed.", model,
		c->generation_tokens);
}
