#ifndef PERFGATE_RESULTS_PARAMS_H
#define PERFGATE_RESULTS_PARAMS_H

#include <jansson.h>

/*
 * The workload settings of one result: what the report's section bullets
 * ("Input length: 32 tokens", "Average QPS: 1, 4 and inf", "Models: ...")
 * describe. Taken, field by field, from the first source that has it:
 *
 *   1. perfgate.params (results perfgate wrote or imported);
 *   2. vLLM's own keys: model_id, num_prompts, request_rate,
 *      max_concurrency, burstiness, and llm-d's --metadata strings
 *      (model, input_len, output_len, tensor_parallel_size);
 *   3. the command lines of the .commands sidecar (latency_command,
 *      throughput_command, server_command, client_command), including
 *      vllm bench latency's documented defaults (input 32, output 128,
 *      batch 8) when the command is vllm's latency benchmark.
 *
 * Unknown stays unknown: nothing is guessed from test names.
 */
struct pg_params {
	char *model;   /* NULL = unknown */
	char *dataset; /* "sharegpt", "random", ...; NULL = unknown */
	char *endpoint;
	char *engine; /* "vllm", "sglang" from the server/bench command; NULL */
	char *dtype;  /* the server's --dtype; NULL = unknown (not in perfgate.params) */
	long tp;      /* -1 = unknown, for every long below */
	long pp;      /* the server's --pipeline-parallel-size (not in perfgate.params) */
	long input_len;
	long output_len;
	long num_prompts;
	long batch_size;
	long max_concurrency; /* 0 = unbounded; -1 = unknown */
	double qps;           /* INFINITY for inf; NAN = unknown */
	double burstiness;    /* NAN = unknown */
	char *deployment;     /* "prefill=2x1,decode=2x1" (docs/deployments.md); NULL =
				 one server, or unknown */
	char *ramp_up;        /* "linear from 1 to 20 req/s" from vLLM's ramp_up_*
				 * keys; NULL = a fixed rate */
};

/* Fill p from a result object and its sidecar (may be NULL). Owned strings;
 * release with pg_params_release. */
void pg_params_from_result(struct pg_params *p, const json_t *result, const json_t *commands);
void pg_params_release(struct pg_params *p);

/*
 * p as a perfgate.params object (docs/results.md): model, tp, dataset,
 * input_len, output_len, num_prompts, qps, max_concurrency, batch_size,
 * endpoint, and deployment when known; unknown values are null, qps inf is the string "inf" (as vLLM
 * writes request_rate). New reference.
 */
json_t *pg_params_to_json(const struct pg_params *p);

#endif
