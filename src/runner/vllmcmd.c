#include "runner/vllmcmd.h"

#include "base/buf.h"
#include "base/strutil.h"

#include <math.h>
#include <string.h>

static void flag(struct pg_buf *out, const char *name, const char *value)
{
	pg_buf_printf(out, " --%s", name);
	if (value) {
		pg_buf_putc(out, ' ');
		pg_shell_quote(out, value);
	}
}

static void flag_long(struct pg_buf *out, const char *name, long v)
{
	pg_buf_printf(out, " --%s %ld", name, v);
}

static void flag_double(struct pg_buf *out, const char *name, double v)
{
	char num[PG_FMT_DOUBLE_SIZE];
	pg_buf_printf(out, " --%s %s", name, pg_fmt_g(num, v));
}

static void output_path(struct pg_buf *out, const char *results_dir, const struct pg_point *pt)
{
	struct pg_buf path = PG_BUF_INIT;

	pg_buf_printf(&path, "%s/%s.json", results_dir ? results_dir : "results", pt->name);
	flag(out, "output-json", path.ptr);
	pg_buf_release(&path);
}

static void dataset_flags(struct pg_buf *out, const struct pg_test *t, bool serving)
{
	const struct pg_dataset_spec *d = &t->dataset;

	switch (d->kind) {
	case PG_DATASET_RANDOM:
		flag(out, "dataset-name", "random");
		flag_long(out, serving ? "random-input-len" : "input-len", d->input_len);
		flag_long(out, serving ? "random-output-len" : "output-len", d->output_len);
		if (serving && d->range_ratio > 0)
			flag_double(out, "random-range-ratio", d->range_ratio);
		if (serving && d->prefix_len > 0)
			flag_long(out, "random-prefix-len", d->prefix_len);
		break;
	case PG_DATASET_SHAREGPT:
		flag(out, "dataset-name", "sharegpt");
		flag(out, "dataset-path", d->path);
		if (d->output_len > 0)
			flag_long(out, serving ? "sharegpt-output-len" : "output-len",
				  d->output_len);
		break;
	case PG_DATASET_JSONL:
		flag(out, "dataset-name", "custom");
		flag(out, "dataset-path", d->path);
		break;
	case PG_DATASET_MULTI_TURN: /* production_stack() writes these */
		break;
	case PG_DATASET_SONNET:
		flag(out, "dataset-name", "sonnet");
		flag(out, "dataset-path", d->path);
		flag_long(out, "sonnet-input-len", d->input_len);
		flag_long(out, "sonnet-output-len", d->output_len);
		flag_long(out, "sonnet-prefix-len", d->prefix_len);
		break;
	}
}

static void serving(struct pg_buf *out, const struct pg_point *pt, const char *base_url,
		    const char *results_dir)
{
	const struct pg_test *t = pt->test;
	const struct pg_client_spec *c = &t->client;
	bool chat = c->endpoint && strstr(c->endpoint, "chat");
	struct pg_buf tmp = PG_BUF_INIT;

	pg_buf_puts(out, "vllm bench serve");
	/* what the native client is (and vllm bench serve's default): the
	 * result says the same in "backend" */
	flag(out, "backend", chat ? "openai-chat" : "openai");
	if (base_url)
		flag(out, "base-url", base_url);
	flag(out, "endpoint", c->endpoint ? c->endpoint : "/v1/completions");
	flag(out, "model", t->model);
	if (c->served_model && !pg_str_eq(c->served_model, t->model))
		flag(out, "served-model-name", c->served_model);
	dataset_flags(out, t, true);
	flag_long(out, "num-prompts", pg_point_num_prompts(pt));
	flag_double(out, "request-rate", pt->qps);
	if (t->burstiness != 1.0)
		flag_double(out, "burstiness", t->burstiness);
	if (t->ramp_up.strategy != PG_RAMP_NONE) {
		flag(out, "ramp-up-strategy", pg_ramp_strategy_name(t->ramp_up.strategy));
		flag_long(out, "ramp-up-start-rps", t->ramp_up.start_rps);
		flag_long(out, "ramp-up-end-rps", t->ramp_up.end_rps);
	}
	if (pt->max_concurrency > 0)
		flag_long(out, "max-concurrency", pt->max_concurrency);
	pg_buf_printf(&tmp, "tensor_parallel_size=%ld", t->tp);
	flag(out, "metadata", tmp.ptr);
	for (size_t i = 0; i < t->metadata.n; i++) {
		pg_buf_reset(&tmp);
		pg_buf_printf(&tmp, "%s=%s", t->metadata.items[i].key, t->metadata.items[i].value);
		pg_buf_putc(out, ' ');
		pg_shell_quote(out, tmp.ptr);
	}
	pg_buf_reset(&tmp);
	if (c->num_warmups > 0)
		flag_long(out, "num-warmups", c->num_warmups);
	flag_long(out, "seed", (long)c->seed);
	if (c->ignore_eos)
		flag(out, "ignore-eos", NULL);
	if (!isnan(c->temperature))
		flag_double(out, "temperature", c->temperature);
	for (size_t i = 0; i < c->percentile_metrics.n; i++)
		pg_buf_printf(&tmp, "%s%s", i ? "," : "", c->percentile_metrics.v[i]);
	if (tmp.len)
		flag(out, "percentile-metrics", tmp.ptr);
	pg_buf_reset(&tmp);
	for (size_t i = 0; i < c->n_percentiles; i++) {
		char num[PG_FMT_DOUBLE_SIZE];
		pg_buf_printf(&tmp, "%s%s", i ? "," : "", pg_fmt_g(num, c->percentiles[i]));
	}
	if (tmp.len)
		flag(out, "metric-percentiles", tmp.ptr);
	flag(out, "save-result", NULL);
	flag(out, "result-dir", results_dir ? results_dir : "results");
	pg_buf_reset(&tmp);
	pg_buf_printf(&tmp, "%s.json", pt->name);
	flag(out, "result-filename", tmp.ptr);
	pg_buf_release(&tmp);
}

/* vllm bench serve has no sessions: production-stack's multi-round QA
 * benchmark (benchmarks/multi-round-qa) is the nearest equivalent of a
 * multi_turn point run with a rate. */
static void production_stack(struct pg_buf *out, const struct pg_point *pt, const char *base_url)
{
	const struct pg_test *t = pt->test;
	const struct pg_sessions_spec *ss = &t->dataset.sessions;
	struct pg_buf url = PG_BUF_INIT;

	pg_buf_puts(out, "python3 multi-round-qa.py");
	flag_long(out, "num-users", ss->users);
	flag_long(out, "num-rounds", ss->rounds);
	flag_double(out, "qps", pt->qps);
	flag_long(out, "shared-system-prompt", ss->system_prompt_len);
	flag_long(out, "user-history-prompt", ss->user_context_len);
	flag_long(out, "answer-len", t->dataset.output_len);
	flag(out, "model", t->client.served_model ? t->client.served_model : t->model);
	if (base_url) {
		pg_buf_printf(&url, "%s/v1", base_url);
		flag(out, "base-url", url.ptr);
	}
	flag(out, "request-with-user-id", NULL);
	pg_buf_release(&url);
}

void pg_vllm_equivalent_command(struct pg_buf *out, const struct pg_point *pt, const char *base_url,
				const char *results_dir)
{
	const struct pg_test *t = pt->test;

	switch (t->kind) {
	case PG_SUITE_SERVING:
		if (t->dataset.kind == PG_DATASET_MULTI_TURN) {
			production_stack(out, pt, base_url);
			return;
		}
		serving(out, pt, base_url, results_dir);
		return;
	case PG_SUITE_LATENCY:
		pg_buf_puts(out, "vllm bench latency");
		flag(out, "model", t->model);
		flag_long(out, "tensor-parallel-size", t->tp);
		flag_long(out, "input-len", t->dataset.input_len);
		flag_long(out, "output-len", t->dataset.output_len);
		flag_long(out, "batch-size", t->batch_size);
		flag_long(out, "num-iters-warmup", t->warmup_iterations);
		flag_long(out, "num-iters", t->iterations);
		output_path(out, results_dir, pt);
		return;
	case PG_SUITE_THROUGHPUT:
		pg_buf_puts(out, "vllm bench throughput");
		flag(out, "model", t->model);
		flag_long(out, "tensor-parallel-size", t->tp);
		dataset_flags(out, t, false);
		flag_long(out, "num-prompts", t->num_prompts);
		output_path(out, results_dir, pt);
		return;
	case PG_SUITE_STARTUP:
		/* vLLM's in-process counterpart: it times LLM() rather than
		 * the server command to ready */
		pg_buf_puts(out, "vllm bench startup");
		flag(out, "model", t->model);
		flag_long(out, "tensor-parallel-size", t->tp);
		flag_long(out, "num-iters-cold", t->cold_starts);
		flag_long(out, "num-iters-warmup", t->warmup_starts);
		flag_long(out, "num-iters-warm", t->warm_starts);
		output_path(out, results_dir, pt);
		return;
	default:
		return;
	}
}

const char *pg_vllm_command_key(enum pg_suite_kind kind)
{
	switch (kind) {
	case PG_SUITE_LATENCY:
		return "latency_command";
	case PG_SUITE_THROUGHPUT:
		return "throughput_command";
	case PG_SUITE_STARTUP:
		return "startup_command";
	default:
		return "client_command";
	}
}
