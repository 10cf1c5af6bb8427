#ifndef PERFGATE_RESULTS_CLIENTCHECK_H
#define PERFGATE_RESULTS_CLIENTCHECK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "suite/suite.h"

struct pg_buf;

/*
 * Whether a point's numbers describe the server, and when they do not,
 * what was late and why (docs/loadgen.md, "What perfgate adds"). Two
 * causes, two words, two result keys, each a verdict only beyond a stated
 * bound:
 *
 *  - client-bound (`client_bound`): the client itself was the limit. Its
 *    event loop was busy over PG_CLIENT_BUSY of a run of at least
 *    PG_CLIENT_BUSY_MIN_S; or response bytes waited for it to be read
 *    longer than its timings tolerate at the p99 (TTFT and ITL may be
 *    that late: PG_CLIENT_READ_DELAY_MS; a latency or throughput run,
 *    which times something longer, PG_CLIENT_READ_DELAY_SHARE of it when
 *    that is more); or it sent requests late while it worked (reading
 *    other streams, starting requests), as counted below.
 *  - host-late (`host_late`): the client sat idle in its wait and the
 *    host woke it late for due requests (a timer wake-up delayed by
 *    another process on its core, the mock engine on a 2-core machine).
 *    The arrivals left the schedule; the client did not fall behind, and
 *    TTFT counts from the actual send.
 *
 * A send counts as late past the lag bound: the larger of
 * PG_LAG_BOUND_MIN_MS and PG_LAG_BOUND_GAP_SHARE of the mean gap between
 * the requests' due times (7.8 ms at 32 requests/s, 31 ms at 8). What
 * bends a load is a stall that holds two due requests and lets them go
 * together; one shorter than a quarter of the mean gap holds two in under
 * 3 % of cases (Poisson arrivals: 1 - e^-m (1 + m), m = 0.25), so the
 * requests still reach the server one by one, a little later. A late send is the host's when the loop slept past
 * the due time for most of its lag, else the client's. Either cause is a
 * verdict when more than 1 % of the requests sent, and at least two, were
 * late by it: one late request among a few dozen is a hiccup, and with a
 * few dozen requests p99 is the maximum. A burst (every request due at
 * once) has no schedule to keep: its lag only says how long sending took.
 *
 * The read delay p99 also bounds the error of every timestamp of a
 * response (`timestamp_error_bound_ms`): TTFT and E2EL are at most that
 * long, an ITL gap off by at most that either way. Pure.
 */
#define PG_CLIENT_BUSY             0.95
#define PG_CLIENT_BUSY_MIN_S       1.0
#define PG_CLIENT_READ_DELAY_MS    1.0
#define PG_CLIENT_READ_DELAY_SHARE 0.01
#define PG_LAG_BOUND_MIN_MS        1.0
#define PG_LAG_BOUND_GAP_SHARE     0.25

/* What the verdicts are judged on. */
struct pg_clientcheck_figures {
	size_t sent;                /* requests sent */
	size_t late_client;         /* sent past the lag bound, mostly while the loop worked */
	size_t late_host;           /* ... mostly while it slept past the due time */
	double busy_fraction;       /* event-loop time not spent waiting / duration; <0 unknown */
	double duration_s;          /* the run the busy fraction covers */
	double read_delay_p99_ms;   /* <0 unknown */
	double read_delay_bound_ms; /* pg_clientcheck_read_delay_bound_ms */
};

struct pg_clientcheck_verdict {
	bool busy;         /* the event loop had no headroom */
	bool reads_late;   /* timestamps may be later than the timings tolerate */
	bool sends_late;   /* too many sends late by the loop's own work */
	bool client_bound; /* any of the three */
	bool host_late;    /* too many sends late because the host woke the idle loop late */
};

/* The lag bound for requests whose due times are mean_gap_ms apart on
 * average (ms). */
double pg_clientcheck_lag_bound_ms(double mean_gap_ms);

/* How late a result's response timestamps may be before its timings are
 * affected (ms): PG_CLIENT_READ_DELAY_MS for TTFT and ITL; for a latency
 * run (avg_latency) or a throughput run (elapsed_time), PG_CLIENT_READ_
 * DELAY_SHARE of the time it reports, when that is more -- a 1.6 ms late
 * end of a 286 ms iteration is 0.6 % of it. */
double pg_clientcheck_read_delay_bound_ms(const json_t *result);

/* More than 1 % of sent, and at least two. */
bool pg_clientcheck_too_many(size_t late, size_t sent);

struct pg_clientcheck_verdict pg_clientcheck_judge(const struct pg_clientcheck_figures *f);

enum pg_clientcheck_flag {
	PG_CLIENTCHECK_CLIENT_BOUND, /* "client_bound", said "client-bound" */
	PG_CLIENTCHECK_HOST_LATE,    /* "host_late", said "host-late" */
};

/* Whether a result raised the flag. */
bool pg_clientcheck_flagged(const json_t *result, enum pg_clientcheck_flag flag);

/*
 * What a result's flag means, from its keys (docs/results.md), without the
 * flag's word, e.g. for host-late
 *   "4 of 64 requests sent over 7.83 ms late (lag p99 9.5 ms) while the
 *    client sat idle: the host woke the client late, so the load left its
 *    schedule; TTFT and ITL count from the send, within 0.15 ms (read
 *    delay p99)"
 * and for client-bound
 *   "its event loop was busy 97% of the run; TTFT and ITL within 6.1 ms
 *    (read delay p99)".
 * kind picks what the timestamp bound is said of (TTFT and ITL, latency,
 * elapsed time). A flag whose figures do not show it (a result of
 * repeats: flags of any run, figures the median; an older file without
 * the keys) is explained by what is there.
 */
void pg_clientcheck_explain(struct pg_buf *out, enum pg_suite_kind kind, const json_t *result,
			    enum pg_clientcheck_flag flag);

/* What a suite's response timestamps time, as the bound is said of them:
 * "TTFT and ITL", "latency", "elapsed time"; NULL (startup) for none. */
const char *pg_clientcheck_timed(enum pg_suite_kind kind);

/* The result's timestamp_error_bound_ms (or, in a file from before it,
 * client_read_delay_p99_ms: the same figure); NAN when it has neither. */
double pg_clientcheck_timestamp_bound_ms(const json_t *result);

/* The one line for a log: "client-bound: <explain>; host-late: <explain>"
 * for the flags the result raised; nothing when it raised none. */
void pg_clientcheck_note(struct pg_buf *out, enum pg_suite_kind kind, const json_t *result);

#endif
