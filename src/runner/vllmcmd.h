#ifndef PERFGATE_RUNNER_VLLMCMD_H
#define PERFGATE_RUNNER_VLLMCMD_H

#include "suite/suite.h"

struct pg_buf;

/*
 * The `vllm bench` command line equivalent to a native perfgate point, for
 * the .commands sidecar (vLLM's tooling reads tensor parallelism from it)
 * and for anyone who wants to reproduce the measurement with vLLM's own
 * client:
 *   serving    vllm bench serve --backend vllm --base-url URL --endpoint ...
 *              --model M --dataset-name random --random-input-len ...
 *              --num-prompts N --request-rate Q [--max-concurrency C]
 *              --seed S ... --save-result --result-dir DIR
 *              --result-filename POINT.json
 *   latency    vllm bench latency --model M --tensor-parallel-size N
 *              --input-len --output-len --batch-size --num-iters-warmup
 *              --num-iters --output-json DIR/POINT.json
 *   throughput vllm bench throughput --model M --tensor-parallel-size N
 *              --num-prompts ... --output-json DIR/POINT.json
 * A multi_turn serving point gets production-stack's multi-round QA
 * command instead (python3 multi-round-qa.py --num-users --num-rounds
 * --qps --shared-system-prompt --user-history-prompt --answer-len
 * --model --base-url --request-with-user-id): vLLM's has no sessions.
 * Latency and throughput are the closest offline equivalents: perfgate
 * measures them through the server's API, vLLM's tools in-process.
 * base_url may be NULL (latency, throughput); results_dir may be NULL.
 */
void pg_vllm_equivalent_command(struct pg_buf *out, const struct pg_point *pt, const char *base_url,
				const char *results_dir);

/* "latency_command", "throughput_command" or "client_command": the
 * .commands key the command goes under. */
const char *pg_vllm_command_key(enum pg_suite_kind kind);

#endif
