#ifndef PERFGATE_RUNNER_RUNFMT_H
#define PERFGATE_RUNNER_RUNFMT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "suite/suite.h"

struct pg_buf;

/*
 * What `perfgate run` prints on stderr, as pure functions of the data
 * (wrk: measurement apart from presentation). The runner decides when to
 * print; these decide what it looks like, and golden files pin it.
 */

/* "serving_x qps 4", "serving_x qps inf concurrency 16", "latency_x". */
void pg_runfmt_point_label(struct pg_buf *out, const struct pg_point *pt);

/* A Buildkite log group per point: "--- serving_x qps 4 (3/12)\n"
 * (index is 0-based, printed 1-based). */
void pg_runfmt_point_group(struct pg_buf *out, const struct pg_point *pt, size_t index, size_t n);

/* Progress of the point being measured, as the load generator reports it. */
struct pg_run_progress {
	long done;  /* requests (or latency iterations) finished, failed included */
	long total; /* planned; 0 when unknown */
	long failed;
	double elapsed;       /* seconds since the point started */
	double output_tokens; /* generated so far */
	const char *unit;     /* "requests" (default when NULL) or "iterations" */
};

/* One line for logs: "  120/200 requests  45.1 req/s  5773 tok/s  0 errors  2.7s\n". */
void pg_runfmt_progress_line(struct pg_buf *out, const struct pg_run_progress *p);

/* The live single-line bar for a terminal, starting with '\r' and ending
 * with "erase to end of line" (no newline): "\r[=====>    ] 120/200 ...". */
void pg_runfmt_progress_bar(struct pg_buf *out, const struct pg_run_progress *p, int bar_width);

/*
 * text as a log outside Buildkite shows it: the group markers are
 * Buildkite's log syntax (docs/design/buildkite-agent.md), noise on a
 * terminal or in a file. A line's leading "--- ", "+++ " or "~~~ " is
 * removed (the group's title stays, as a heading) and "^^^ +++" lines are
 * dropped. Appends to out; text starts at a line start.
 */
void pg_runfmt_plain(struct pg_buf *out, const char *text);

/* "0.4s", "48.2s", "3m12s", "1h02m". */
void pg_runfmt_duration(struct pg_buf *out, double seconds);

/* UTC ISO-8601 with seconds: "2026-11-22T13:00:00Z". */
#define PG_ISO8601_SIZE 32
char *pg_runfmt_iso8601(char out[PG_ISO8601_SIZE], int64_t epoch_seconds);

/* The few numbers a reader wants at a glance, per suite:
 * serving "3.98 req/s, 1021 tok/s, TTFT p50 41.2 ms, ITL p50 10.1 ms",
 * latency "avg 1.52 s, p99 1.61 s", throughput "12.3 req/s, 4567 tok/s".
 * Keys that are missing are left out; ", client-bound" and ", host-late"
 * are added when the result says so (results/clientcheck.h explains them). */
void pg_runfmt_key_metrics(struct pg_buf *out, enum pg_suite_kind kind, const json_t *result);

/* One row of the end-of-run summary. */
struct pg_run_row {
	const char *point;  /* result file stem */
	const char *status; /* ok, error, skipped, cancelled */
	const char *detail; /* key metrics, or the reason for a non-ok status */
	double seconds;     /* wall time of the point (server startup included for the first) */
	const char *note;   /* what a flag in the detail means (pg_clientcheck_note), or NULL */
};

/*
 * The end-of-run summary, an expanded Buildkite group:
 *   "+++ perfgate run: 11 ok, 1 error (3m12s)\n" then an aligned table of
 * point, status, detail (first line, at most 90 characters) and time,
 * then "  <point>: <note>" for each row with a note.
 */
void pg_runfmt_summary(struct pg_buf *out, const struct pg_run_row *rows, size_t n,
		       double total_seconds);

#endif
