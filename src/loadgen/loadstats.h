#ifndef PERFGATE_LOADGEN_LOADSTATS_H
#define PERFGATE_LOADGEN_LOADSTATS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "loadgen/reqtrace.h"
#include "suite/suite.h"

struct pg_error;
struct pg_strv;

/*
 * The result keys of docs/results.md, computed from request traces with
 * vLLM's definitions (docs/design/vllm-benchmarks.md §1, §2, §5). Pure: the load
 * generator passes the traces and the figures it measured about itself.
 */

enum pg_loadstats_metric {
	PG_LOADSTATS_TTFT = 1 << 0,
	PG_LOADSTATS_TPOT = 1 << 1,
	PG_LOADSTATS_ITL = 1 << 2,
	PG_LOADSTATS_E2EL = 1 << 3,
	/* vLLM's opt-in pair against coordinated omission (#54101), only with
	 * a concurrency limit: how long a due request waited for a slot, and
	 * e2el plus that wait (the latter only at a finite rate) */
	PG_LOADSTATS_CLIENT_QUEUE = 1 << 4,
	PG_LOADSTATS_E2EL_QUEUE = 1 << 5,
};

/* The names above in vLLM's spelling, in mask order, and how many. */
#define PG_LOADSTATS_METRIC_COUNT 6
extern const char *const pg_loadstats_metric_names[PG_LOADSTATS_METRIC_COUNT];

/* Whether name is one of pg_loadstats_metric_names. */
bool pg_loadstats_metric_known(const char *name);

/* "ttft", ..., "e2el_including_client_queue" names -> mask; PG_ECONFIG
 * naming an unknown one. */
int pg_loadstats_metrics_parse(unsigned *mask, const struct pg_strv *names, struct pg_error *err);

/* vLLM's percentile word: "99" for 99.0, "99.9" for 99.9 (Python str()). */
void pg_percentile_word(char out[32], double p);

/* What the client measured about itself, reported next to the metrics and
 * judged by results/clientcheck.h (client_bound, host_late). */
struct pg_client_health {
	double busy_fraction;     /* event-loop time not spent waiting / duration; <0 unknown */
	long new_connections;     /* connections opened during the measured run; <0 unknown */
	bool burst;               /* every request was due at once (rate inf): there
	                             is no schedule to keep, the lag only says how
	                             long sending the burst took */
	double duration_s;        /* the busy fraction only judges runs of at least
	                             PG_CLIENT_BUSY_MIN_S (a 1 ms run is all work) */
	double read_delay_p99_ms; /* p99 of how long socket events waited for the
	                             event loop (loadgen/httpload_io.h); <0 unknown */
};

struct pg_serve_stats_opts {
	const double *percentiles; /* default {99} when n_percentiles == 0 */
	size_t n_percentiles;
	unsigned metrics;          /* PG_LOADSTATS_* to summarise; 0 = ttft|tpot|itl */
	struct pg_goodput goodput; /* ms; NAN = not part of the SLO */
	double duration_s;         /* dispatch-loop start to the end of all requests */
	bool detailed;             /* per-request arrays */
	bool bounded;              /* a max_concurrency was set: queue metrics apply */
	bool finite_rate;          /* requests had due times: e2el incl. queue applies */
	/* where input lengths come from when the server reports no
	 * usage.prompt_tokens: "token_ids", "tokenize_endpoint" or "estimate" */
	const char *dataset_input_source;
	struct pg_client_health health;
};

/*
 * Append the serving keys to obj in vLLM's order -- duration, completed,
 * failed, total_input_tokens, total_output_tokens, request_throughput,
 * request_goodput, output_throughput, total_token_throughput,
 * max_output_tokens_per_s, max_concurrent_requests, the mean/median/std/
 * p<P> of each selected metric in ms, the detailed arrays -- then
 * perfgate's (schedule lag, client_bound, token ITL, failures, token
 * sources; with goodput SLOs, slo_attainment -- the share of the requests
 * sent (completed or failed) that met every SLO -- slo_attainment_<x> for
 * each SLO x of ttft, tpot, itl, e2el, and token_goodput, the output
 * tokens of the requests that met every SLO per second), and last a
 * "perfgate" object holding "certified": the
 * certified estimates (results/tails.h) of p50 and each requested
 * percentile of at least 50 of each selected metric of ttft, tpot, itl
 * and e2el, {"method", "confidence", "<metric>": {"n", "p50", "p<P>"}} in
 * ms, null below the samples a percentile needs (the runner moves it into
 * the result's perfgate object). t[] is in dispatch order.
 */
void pg_serve_metrics(json_t *obj, const struct pg_reqtrace *t, size_t n,
		      const struct pg_serve_stats_opts *o);

/*
 * The keys every native suite adds about the client and failures:
 * schedule_lag_p50_ms/p99_ms/max_ms, requests_sent_late; with a schedule
 * to keep (not a burst), schedule_lag_bound_ms, requests_late_by_client
 * and requests_late_by_host (each late request by what mostly made it
 * late: the loop working, or the loop asleep past its due time, the
 * trace's host_lag_ns); client_bound, host_late (results/clientcheck.h),
 * client_busy_fraction, client_read_delay_p99_ms,
 * timestamp_error_bound_ms, new_connections, failed_by_category,
 * error_samples.
 */
void pg_client_keys(json_t *obj, const struct pg_reqtrace *t, size_t n,
		    const struct pg_client_health *h);

/* vllm bench latency: avg_latency, std_latency, latencies, percentiles
 * {"10","25","50","75","90","99"}, seconds; and perfgate.certified as
 * above for "latency" (p50, p75, p90, p99 in ms). */
void pg_latency_metrics(json_t *obj, const double *latencies, size_t n);

/*
 * vllm bench throughput: elapsed_time, num_requests (successful),
 * total_num_tokens (prompt + output), requests_per_second,
 * tokens_per_second (total tokens), plus output_tokens_per_second,
 * total_output_tokens and failed.
 */
void pg_throughput_metrics(json_t *obj, const struct pg_reqtrace *t, size_t n, double elapsed_s);

/* vLLM's TTFT of a request that succeeded: its first content message
 * after it was sent, in seconds. */
double pg_loadstats_ttft_s(const struct pg_reqtrace *t);

/* Seconds between two trace times (ns). */
static inline double pg_ns_to_s(long long ns)
{
	return (double)ns / 1e9;
}

#endif
