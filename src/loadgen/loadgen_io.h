#ifndef PERFGATE_LOADGEN_LOADGEN_IO_H
#define PERFGATE_LOADGEN_LOADGEN_IO_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "suite/suite.h"

struct pg_error;

/*
 * The native suites: one call runs one point (one repeat) of a latency,
 * throughput or serving test against a running OpenAI-compatible server
 * and returns its result keys (docs/results.md) -- everything except the
 * "perfgate" provenance object, which the runner adds before writing the
 * file.
 *
 *  latency:    warmup_iterations, then iterations, of one batch of
 *              batch_size concurrent requests with exact input_len /
 *              output_len (token-id prompts, ignore_eos): avg_latency,
 *              std_latency, latencies, percentiles, seconds.
 *  throughput: num_prompts requests at once (at most
 *              throughput_max_concurrency in flight): elapsed_time,
 *              num_requests, total_num_tokens, requests_per_second,
 *              tokens_per_second, output_tokens_per_second.
 *  serving:    num_prompts requests on the arrival schedule of the
 *              point's qps and the test's burstiness, at most the point's
 *              max_concurrency in flight: vLLM's serve keys.
 * All three add perfgate's client keys (schedule lag, client_bound, host_late,
 * failed_by_category, error_samples).
 *
 * Failed requests are results, not errors: a run where every request
 * failed returns 0 with "completed": 0 (or "num_requests": 0) and the
 * categories; the runner decides what that means. Errors are for what
 * prevents running at all (PG_ECONFIG: a bad dataset file or setting;
 * PG_EINFRA: the server cannot be reached for /tokenize or /v1/models)
 * and PG_ECANCEL when *stop was set (in-flight streams are ended).
 */
struct pg_progress {
	size_t done;  /* measured requests finished */
	size_t total; /* measured requests of the point */
	size_t failed;
	double elapsed_s; /* since the measured phase began */
	uint64_t tokens;  /* content messages received (one per token
	                        unless the server batches tokens) */
};

/* The point's warm-up as it went (pg_loadgen_warm_up). */
struct pg_warmup_report {
	size_t requests; /* sent */
	size_t failed;
	double seconds;  /* from the first send to the last answer */
	char error[256]; /* the first failure's message; "" when none failed */
};

struct pg_loadgen_opts {
	const char *base_url;              /* "http://127.0.0.1:41237", no trailing slash */
	const char *api_key;               /* resolved value or NULL; never logged */
	const volatile sig_atomic_t *stop; /* set by a signal handler */
	void (*progress)(void *ctx, const struct pg_progress *p);
	void *progress_ctx;
	double progress_interval_s; /* default 1 s */
	bool save_detailed;         /* serving: per-request arrays */
};

int pg_loadgen_run(const struct pg_point *pt, const struct pg_loadgen_opts *o, json_t **out,
		   struct pg_error *err);

/*
 * The point's warm-up (docs/suite.md `warmup`), before its first run:
 * `requests` unmeasured requests of prompts of their own (the test's
 * dataset drawn with another seed, so none of the measured prompts is
 * cached by them), each asking for at most 32 tokens, all due at once
 * under the point's concurrency cap (max_concurrency; a latency test's
 * batch_size). *rep says what
 * happened. Every one failing is PG_EINFRA ("warm-up: all 10 requests
 * failed (...)"); errors otherwise as pg_loadgen_run's. Multi-turn
 * sessions take none (PG_ECONFIG).
 */
int pg_loadgen_warm_up(const struct pg_point *pt, const struct pg_loadgen_opts *o, size_t requests,
		       struct pg_warmup_report *rep, struct pg_error *err);

#endif
