#ifndef PERFGATE_MOCKSERVER_AS_VLLM_H
#define PERFGATE_MOCKSERVER_AS_VLLM_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strutil.h"
#include "mockserver/engine_model.h"

struct pg_buf;
struct pg_error;
struct pg_prompts;

/*
 * `perfgate mock-server --as-vllm ...`: the mock in vLLM's place, so that
 * vLLM's own test files (and any suite that runs `vllm`) work on a
 * machine without a GPU or vLLM. What follows --as-vllm is vLLM's command
 * line, as vLLM's driver writes it:
 *
 *   serve MODEL [flags]        the mock server, serving MODEL (or
 *                              --served-model-name) on --host/--port,
 *                              with --max-model-len and --seed;
 *   bench latency [flags]      vllm bench latency's result file
 *                              (--output-json): each of --num-iters
 *                              batches of --batch-size prompts of
 *                              --input-len tokens and --output-len out,
 *                              after --num-iters-warmup unmeasured ones,
 *                              timed on the engine model's virtual clock;
 *   bench throughput [flags]   vllm bench throughput's (--output-json):
 *                              --num-prompts prompts, ShareGPT's from
 *                              --dataset-path (or --dataset) or random
 *                              --input-len/--output-len, all submitted at
 *                              once to the engine model, timed to the
 *                              last token.
 *
 * Flags are vLLM's spelling (dashes or underscores, "--k v" or "--k=v");
 * those the mock does not simulate (--tensor-parallel-size, --dtype,
 * --load-format...) are taken with their value and listed in `ignored`,
 * so the server's log says what was not played. Pure: the simulations
 * run on a virtual clock and return JSON; as_vllm_io.c reads datasets,
 * writes results and runs the server.
 */
enum pg_vllm_cmd {
	PG_VLLM_SERVE,
	PG_VLLM_BENCH_LATENCY,
	PG_VLLM_BENCH_THROUGHPUT,
};

struct pg_vllm_call {
	enum pg_vllm_cmd cmd;
	const char *model;        /* borrowed from argv; NULL: not given */
	const char *served_model; /* --served-model-name (its first name) */
	const char *host;
	long port;          /* -1: not given */
	long max_model_len; /* -1: not given */
	long seed;          /* -1: not given */
	/* bench */
	long input_len, output_len; /* -1: not given */
	long batch_size, warmup_iters, iters, num_prompts;
	double range_ratio;
	const char *dataset_path; /* --dataset-path or --dataset */
	const char *dataset_name; /* --dataset-name */
	const char *output_json;
	struct pg_strv ignored; /* "--dtype bfloat16", one entry per flag */
};

/*
 * Parse vLLM's command line (argv[0] is "serve" or "bench"). PG_ECONFIG
 * names what is wrong: a subcommand the mock does not play ("vllm bench
 * serve is vLLM's own client..."), a bad number, a missing model or
 * --output-json. Release with pg_vllm_call_release.
 */
int pg_vllm_call_parse(struct pg_vllm_call *out, size_t argc, char *const *argv,
		       struct pg_error *err);
void pg_vllm_call_release(struct pg_vllm_call *c);

/* "vllm bench latency" etc., for messages. */
const char *pg_vllm_cmd_name(enum pg_vllm_cmd cmd);

/*
 * vllm bench latency on the engine model: *out gets {"avg_latency",
 * "std_latency", "latencies", "percentiles": {"10".."99"}}, seconds,
 * numpy's statistics, as vLLM writes them.
 */
int pg_vllm_sim_latency(json_t **out, const struct pg_engine_params *engine,
			const struct pg_vllm_call *c, struct pg_error *err);

/*
 * vllm bench throughput on the engine model, for the prompts given (their
 * prompt_len and output_len): *out gets {"elapsed_time", "num_requests",
 * "total_num_tokens", "requests_per_second", "tokens_per_second"}, and
 * *output_tokens the tokens generated (vLLM prints their rate too).
 */
int pg_vllm_sim_throughput(json_t **out, long *output_tokens, const struct pg_engine_params *engine,
			   const struct pg_prompts *prompts, struct pg_error *err);

/* What vLLM prints after the run: "Avg latency: 1.38 seconds" and the
 * percentiles; "Throughput: 21.05 requests/s, 9263.20 total tokens/s,
 * 2737.90 output tokens/s". */
void pg_vllm_sim_summary(struct pg_buf *out, enum pg_vllm_cmd cmd, const json_t *result,
			 long output_tokens);

#endif
