#include "mockserver/as_vllm_io.h"

#include "base/buf.h"
#include "base/error.h"
#include "base/jsonw.h"
#include "loadgen/dataset.h"
#include "mockserver/engine_vocab.h"
#include "mockserver/server_io.h"
#include "sys/fsutil.h"

#include <string.h>

/* The mock's tokenizer: one token per word (engine_vocab.h). */
static int count_words(void *ctx, const char *text, long *count, struct pg_error *err)
{
	(void)ctx;
	(void)err;
	*count = (long)pg_vocab_tokenize(text, strlen(text), PG_VOCAB_MAX, NULL, NULL);
	return 0;
}

/* vllm bench throughput's prompts: ShareGPT's from the file, else random. */
static int throughput_prompts(struct pg_prompts *out, const struct pg_vllm_call *c,
			      struct pg_error *err)
{
	uint64_t seed = c->seed >= 0 ? (uint64_t)c->seed : 0;
	size_t n = (size_t)(c->num_prompts > 0 ? c->num_prompts : 1);
	struct pg_buf text = PG_BUF_INIT;
	int rc;

	if (c->dataset_name && strcmp(c->dataset_name, "sharegpt") &&
	    strcmp(c->dataset_name, "random"))
		return pg_error_set(err, PG_ECONFIG,
				    "vllm bench throughput --dataset-name %s: the mock samples "
				    "sharegpt and random prompts",
				    c->dataset_name);
	if (!c->dataset_path || (c->dataset_name && !strcmp(c->dataset_name, "random"))) {
		struct pg_dataset_spec d;
		memset(&d, 0, sizeof(d));
		d.kind = PG_DATASET_RANDOM;
		d.input_len = c->input_len > 0 ? c->input_len : 1024;
		d.output_len = c->output_len > 0 ? c->output_len : 128;
		d.range_ratio = c->range_ratio;
		return pg_dataset_random(out, n, &d, false, seed, err);
	}
	if ((rc = pg_file_read(c->dataset_path, &text, err))) {
		if (rc == PG_ENOTFOUND)
			rc = pg_error_set(err, PG_ECONFIG,
					  "vllm bench throughput --dataset %s: no such file",
					  c->dataset_path);
		pg_buf_release(&text);
		return rc;
	}
	rc = pg_dataset_sharegpt(out, text.ptr, text.len, c->dataset_path, n,
				 c->output_len > 0 ? c->output_len : 0, seed, count_words, NULL,
				 err);
	pg_buf_release(&text);
	return rc;
}

static int bench(const struct pg_mock_server_config *cfg, const struct pg_vllm_call *c, FILE *out,
		 struct pg_error *err)
{
	struct pg_prompts prompts = { 0 };
	struct pg_buf text = PG_BUF_INIT;
	json_t *result = NULL;
	long output_tokens = 0;
	int rc;

	if (c->cmd == PG_VLLM_BENCH_LATENCY)
		rc = pg_vllm_sim_latency(&result, &cfg->engine, c, err);
	else if (!(rc = throughput_prompts(&prompts, c, err)))
		rc = pg_vllm_sim_throughput(&result, &output_tokens, &cfg->engine, &prompts, err);
	if (rc)
		goto done;
	pg_json_write(&text, result, 4);
	pg_buf_putc(&text, '\n');
	if ((rc = pg_file_write_atomic(c->output_json, text.ptr, text.len, err)))
		goto done;
	pg_buf_reset(&text);
	pg_vllm_sim_summary(&text, c->cmd, result, output_tokens);
	fputs(text.ptr, out);
	fflush(out);
done:
	json_decref(result);
	pg_prompts_release(&prompts);
	pg_buf_release(&text);
	return rc;
}

int pg_mock_as_vllm(struct pg_mock_server_config *cfg, const struct pg_vllm_call *call, FILE *out,
		    FILE *log, struct pg_error *err)
{
	if (log) {
		fprintf(log, "perfgate mock-server: as %s%s%s, simulated",
			pg_vllm_cmd_name(call->cmd), call->model ? " " : "",
			call->model ? call->model : "");
		if (call->ignored.n) {
			fputs("; not simulated:", log);
			for (size_t i = 0; i < call->ignored.n; i++)
				fprintf(log, " %s", call->ignored.v[i]);
		}
		fputc('\n', log);
	}
	if (call->cmd != PG_VLLM_SERVE)
		return bench(cfg, call, out, err);
	cfg->model = call->served_model ? call->served_model : call->model;
	if (call->host)
		cfg->host = call->host;
	if (call->port >= 0)
		cfg->port = call->port;
	if (call->max_model_len > 0)
		cfg->max_model_len = call->max_model_len;
	if (call->seed >= 0)
		cfg->engine.seed = (uint64_t)call->seed;
	return pg_mock_server_run(cfg, err);
}
