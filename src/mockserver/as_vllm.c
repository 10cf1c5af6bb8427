#include "mockserver/as_vllm.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/stats.h"
#include "loadgen/dataset.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the command line ------------------------------------------------- */

const char *pg_vllm_cmd_name(enum pg_vllm_cmd cmd)
{
	switch (cmd) {
	case PG_VLLM_SERVE:
		return "vllm serve";
	case PG_VLLM_BENCH_LATENCY:
		return "vllm bench latency";
	case PG_VLLM_BENCH_THROUGHPUT:
		return "vllm bench throughput";
	}
	return "vllm";
}

/* A flag's name as vLLM's parser reads it: dashes for underscores. */
static void flag_name(char *out, size_t size, const char *arg, size_t len)
{
	size_t i;

	for (i = 0; i < len && i + 1 < size; i++)
		out[i] = arg[i] == '_' ? '-' : arg[i];
	out[i] = '\0';
}

/* A value, not the next flag ("-1" is a value). */
static bool is_value(const char *s)
{
	return s && (s[0] != '-' || (s[1] >= '0' && s[1] <= '9'));
}

enum field_kind { F_STRING, F_LONG, F_DOUBLE };

struct field {
	const char *flag; /* with dashes */
	enum field_kind kind;
	size_t offset;
	unsigned cmds; /* 1 << enum pg_vllm_cmd: where the mock plays it */
};

#define SERVE   (1u << PG_VLLM_SERVE)
#define LATENCY (1u << PG_VLLM_BENCH_LATENCY)
#define THRU    (1u << PG_VLLM_BENCH_THROUGHPUT)
#define F(name, kind, member, cmds)                                                                \
	{                                                                                          \
		name, kind, offsetof(struct pg_vllm_call, member), cmds                            \
	}

/* clang-format off */
static const struct field fields[] = {
	F("--model", F_STRING, model, SERVE | LATENCY | THRU),
	F("--served-model-name", F_STRING, served_model, SERVE),
	F("--host", F_STRING, host, SERVE),
	F("--port", F_LONG, port, SERVE),
	F("--max-model-len", F_LONG, max_model_len, SERVE),
	F("--seed", F_LONG, seed, SERVE | LATENCY | THRU),
	F("--input-len", F_LONG, input_len, LATENCY | THRU),
	F("--random-input-len", F_LONG, input_len, THRU),
	F("--output-len", F_LONG, output_len, LATENCY | THRU),
	F("--random-output-len", F_LONG, output_len, THRU),
	F("--random-range-ratio", F_DOUBLE, range_ratio, THRU),
	F("--batch-size", F_LONG, batch_size, LATENCY),
	F("--num-iters-warmup", F_LONG, warmup_iters, LATENCY),
	F("--num-iters", F_LONG, iters, LATENCY),
	F("--num-prompts", F_LONG, num_prompts, THRU),
	F("--dataset-path", F_STRING, dataset_path, THRU),
	F("--dataset", F_STRING, dataset_path, THRU),
	F("--dataset-name", F_STRING, dataset_name, THRU),
	F("--output-json", F_STRING, output_json, LATENCY | THRU),
};
/* clang-format on */

static int set_field(struct pg_vllm_call *c, const struct field *f, const char *value,
		     struct pg_error *err)
{
	char *at = (char *)c + f->offset;

	if (!value)
		return pg_error_set(err, PG_ECONFIG, "%s %s: %s needs a value",
				    pg_vllm_cmd_name(c->cmd), f->flag, f->flag);
	if (f->kind == F_STRING) {
		*(const char **)(void *)at = value;
		return 0;
	}
	if (f->kind == F_LONG) {
		long v;
		if (pg_parse_long(value, &v) || v < 0)
			return pg_error_set(err, PG_ECONFIG,
					    "%s %s: expected a whole number, got '%s'",
					    pg_vllm_cmd_name(c->cmd), f->flag, value);
		*(long *)(void *)at = v;
		return 0;
	}
	if (pg_parse_double(value, (double *)(void *)at))
		return pg_error_set(err, PG_ECONFIG, "%s %s: expected a number, got '%s'",
				    pg_vllm_cmd_name(c->cmd), f->flag, value);
	return 0;
}

static int parse_subcommand(struct pg_vllm_call *c, size_t argc, char *const *argv, size_t *next,
			    struct pg_error *err)
{
	static const char plays[] =
		"the mock plays vllm serve, vllm bench latency and vllm bench throughput";

	if (argc < 1)
		return pg_error_set(err, PG_ECONFIG,
				    "--as-vllm: vLLM's command line follows it (serve MODEL ..., "
				    "bench latency ..., bench throughput ...)");
	if (!strcmp(argv[0], "serve")) {
		c->cmd = PG_VLLM_SERVE;
		*next = 1;
		if (argc > 1 && is_value(argv[1])) {
			c->model = argv[1];
			*next = 2;
		}
		return 0;
	}
	if (!strcmp(argv[0], "bench") && argc > 1 && !strcmp(argv[1], "latency")) {
		c->cmd = PG_VLLM_BENCH_LATENCY;
		*next = 2;
		return 0;
	}
	if (!strcmp(argv[0], "bench") && argc > 1 && !strcmp(argv[1], "throughput")) {
		c->cmd = PG_VLLM_BENCH_THROUGHPUT;
		*next = 2;
		return 0;
	}
	if (!strcmp(argv[0], "bench") && argc > 1 && !strcmp(argv[1], "serve"))
		return pg_error_set(err, PG_ECONFIG,
				    "--as-vllm: vllm bench serve is vLLM's own client, not an "
				    "engine: run it against the mock (--as-vllm serve) instead; %s",
				    plays);
	return pg_error_set(err, PG_ECONFIG, "--as-vllm: 'vllm %s%s%s' is not simulated: %s",
			    argv[0], argc > 1 && !strcmp(argv[0], "bench") ? " " : "",
			    argc > 1 && !strcmp(argv[0], "bench") ? argv[1] : "", plays);
}

int pg_vllm_call_parse(struct pg_vllm_call *out, size_t argc, char *const *argv,
		       struct pg_error *err)
{
	size_t i = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	out->port = out->max_model_len = out->seed = -1;
	out->input_len = out->output_len = -1;
	out->batch_size = 8;    /* vllm bench latency's defaults */
	out->warmup_iters = 10; /* (a test file sets its own) */
	out->iters = 30;
	out->num_prompts = 1000; /* vllm bench throughput's */
	if ((rc = parse_subcommand(out, argc, argv, &i, err)))
		return rc;
	while (i < argc) {
		const char *arg = argv[i], *eq, *value = NULL;
		const struct field *f = NULL;
		char name[128];
		bool inline_value;

		if (arg[0] != '-')
			return pg_error_set(err, PG_ECONFIG, "%s: unexpected argument '%s'",
					    pg_vllm_cmd_name(out->cmd), arg);
		eq = strchr(arg, '=');
		inline_value = eq != NULL;
		flag_name(name, sizeof(name), arg, eq ? (size_t)(eq - arg) : strlen(arg));
		if (inline_value)
			value = eq + 1;
		else if (i + 1 < argc && is_value(argv[i + 1]))
			value = argv[i + 1];
		for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++)
			if (!strcmp(fields[k].flag, name) && (fields[k].cmds & (1u << out->cmd)))
				f = &fields[k];
		if (f) {
			if ((rc = set_field(out, f, value, err))) {
				pg_vllm_call_release(out);
				return rc;
			}
		} else {
			struct pg_buf b = PG_BUF_INIT;
			pg_buf_puts(&b, arg);
			if (value && !inline_value)
				pg_buf_printf(&b, " %s", value);
			pg_strv_push_owned(&out->ignored, pg_buf_detach(&b));
		}
		i += 1 + (value && !inline_value);
	}
	if (out->cmd == PG_VLLM_SERVE && !out->model) {
		pg_vllm_call_release(out);
		return pg_error_set(err, PG_ECONFIG, "vllm serve: no model (vllm serve MODEL ...)");
	}
	if (out->cmd != PG_VLLM_SERVE && !out->output_json) {
		pg_vllm_call_release(out);
		return pg_error_set(err, PG_ECONFIG,
				    "%s: no --output-json: the mock writes its result there",
				    pg_vllm_cmd_name(out->cmd));
	}
	if (out->cmd == PG_VLLM_BENCH_LATENCY && (out->batch_size < 1 || out->iters < 1)) {
		pg_vllm_call_release(out);
		return pg_error_set(err, PG_ECONFIG,
				    "vllm bench latency: --batch-size and --num-iters must be at "
				    "least 1");
	}
	return 0;
}

void pg_vllm_call_release(struct pg_vllm_call *c)
{
	pg_strv_release(&c->ignored);
}

/* ---- the simulations -------------------------------------------------- */

/*
 * Submit n requests at start on a fresh virtual clock's engine and run it
 * until each has sent its last message: the time of the last one. A
 * request the model fails at submission (--fault-500) never runs.
 */
static int64_t run_batch(struct pg_engine *e, int64_t start, const struct pg_engine_request *reqs,
			 size_t n)
{
	size_t running = 0;
	int64_t end = start;

	for (size_t i = 0; i < n; i++) {
		struct pg_engine_plan plan;
		if (pg_engine_submit(e, start, &reqs[i], NULL, &plan))
			running++;
	}
	while (running) {
		int64_t now = pg_engine_next_deadline(e);
		struct pg_engine_event ev;
		if (now == INT64_MAX)
			break;
		while (pg_engine_poll(e, now, &ev))
			if (ev.last) {
				running--;
				if (ev.deadline_ns > end)
					end = ev.deadline_ns;
			}
	}
	return end;
}

int pg_vllm_sim_latency(json_t **out, const struct pg_engine_params *engine,
			const struct pg_vllm_call *c, struct pg_error *err)
{
	static const int pcts[] = { 10, 25, 50, 75, 90, 99 };
	size_t batch = (size_t)c->batch_size, iters = (size_t)c->iters;
	struct pg_engine_request *reqs = pg_xcalloc(batch, sizeof(*reqs));
	double *lat = pg_xcalloc(iters, sizeof(*lat)), *sorted = pg_xcalloc(iters, sizeof(*sorted));
	struct pg_engine *e = pg_engine_new(engine);
	json_t *latencies = json_array(), *percentiles = json_object();
	struct pg_summary sum;
	int64_t t = 0;

	(void)err;
	for (size_t i = 0; i < batch; i++) {
		/* vllm bench latency: random token ids, ignore_eos, max_tokens
		 * the output length (its defaults 32 in, 128 out) */
		reqs[i].prompt_tokens = c->input_len > 0 ? c->input_len : 32;
		reqs[i].max_tokens = c->output_len > 0 ? c->output_len : 128;
		reqs[i].ignore_eos = true;
	}
	for (long w = 0; w < c->warmup_iters; w++)
		t = run_batch(e, t, reqs, batch);
	for (size_t i = 0; i < iters; i++) {
		int64_t end = run_batch(e, t, reqs, batch);
		lat[i] = (double)(end - t) / 1e9;
		t = end;
		json_array_append_new(latencies, json_real(lat[i]));
	}
	pg_stats_summary(&sum, lat, iters, sorted);
	for (size_t k = 0; k < sizeof(pcts) / sizeof(pcts[0]); k++) {
		char key[8];
		snprintf(key, sizeof(key), "%d", pcts[k]);
		json_object_set_new(percentiles, key,
				    json_real(pg_stats_percentile_sorted(sorted, iters, pcts[k])));
	}
	*out = json_pack("{s:f, s:f, s:o, s:o}", "avg_latency", sum.mean, "std_latency", sum.std,
			 "latencies", latencies, "percentiles", percentiles);
	pg_engine_free(e);
	free(reqs);
	free(lat);
	free(sorted);
	return 0;
}

int pg_vllm_sim_throughput(json_t **out, long *output_tokens, const struct pg_engine_params *engine,
			   const struct pg_prompts *prompts, struct pg_error *err)
{
	struct pg_engine_request *reqs;
	struct pg_engine *e;
	long tokens = 0, generated = 0;
	double elapsed;

	if (!prompts->n)
		return pg_error_set(err, PG_ECONFIG, "vllm bench throughput: no prompts");
	reqs = pg_xcalloc(prompts->n, sizeof(*reqs));
	for (size_t i = 0; i < prompts->n; i++) {
		reqs[i].prompt_tokens = prompts->v[i].prompt_len;
		reqs[i].max_tokens = prompts->v[i].output_len > 0 ? prompts->v[i].output_len : 1;
		reqs[i].ignore_eos = true; /* as vLLM's throughput benchmark asks */
		tokens += prompts->v[i].prompt_len + reqs[i].max_tokens;
		generated += reqs[i].max_tokens;
	}
	e = pg_engine_new(engine);
	elapsed = (double)run_batch(e, 0, reqs, prompts->n) / 1e9;
	pg_engine_free(e);
	free(reqs);
	if (!(elapsed > 0))
		elapsed = 1e-9;
	*output_tokens = generated;
	*out = json_pack("{s:f, s:I, s:I, s:f, s:f}", "elapsed_time", elapsed, "num_requests",
			 (json_int_t)prompts->n, "total_num_tokens", (json_int_t)tokens,
			 "requests_per_second", (double)prompts->n / elapsed, "tokens_per_second",
			 (double)tokens / elapsed);
	return 0;
}

void pg_vllm_sim_summary(struct pg_buf *out, enum pg_vllm_cmd cmd, const json_t *result,
			 long output_tokens)
{
	if (cmd == PG_VLLM_BENCH_LATENCY) {
		const json_t *p = json_object_get(result, "percentiles");
		const char *key;
		json_t *v;

		pg_buf_printf(out, "Avg latency: %.10g seconds\n",
			      json_number_value(json_object_get(result, "avg_latency")));
		json_object_foreach((json_t *)p, key, v) pg_buf_printf(
			out, "%s%% percentile latency: %.10g seconds\n", key, json_number_value(v));
	} else if (cmd == PG_VLLM_BENCH_THROUGHPUT) {
		double elapsed = json_number_value(json_object_get(result, "elapsed_time"));
		pg_buf_printf(out,
			      "Throughput: %.2f requests/s, %.2f total tokens/s, %.2f output "
			      "tokens/s\n",
			      json_number_value(json_object_get(result, "requests_per_second")),
			      json_number_value(json_object_get(result, "tokens_per_second")),
			      (double)output_tokens / elapsed);
	}
}
