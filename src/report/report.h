#ifndef PERFGATE_REPORT_REPORT_H
#define PERFGATE_REPORT_REPORT_H

#include <stddef.h>

struct pg_buf;
struct pg_result_set;

/*
 * The benchmark report, in the layout of vLLM's performance CI
 * (benchmark_results.md): "## Latency tests", "## Throughput tests",
 * "## Serving tests", each with bullets describing the suites actually run
 * (from each result's workload parameters, results/params.h) and a pipe table
 * as Python's tabulate prints it, then the "json version of the
 * benchmarking tables" section, which pandas loads with
 * pd.DataFrame.from_dict(obj["serving"]).
 *
 * Tables: columns Test name, GPU, then the metric registry's columns of the
 * suite (results/metrics.h) that at least one row has a value for. Rows sorted
 * by test name (bytewise). Numbers print like Python's "%g", integers as
 * integers; a missing value is an empty cell (null in JSON).
 *
 * Points that did not complete (perfgate.status error / skipped /
 * cancelled) stay in the table: their Test name cell reads
 * "name — **error**: reason", their numbers are empty, and the section gets
 * a "Not completed" bullet. In JSON the Test name stays the plain name and
 * the suite gains "Status" ("ok", "error", ...) and "Error" (reason or
 * null) columns, so numeric columns stay numeric for pandas.
 *
 * Building the report is O(n log n) in the number of results; rendering is
 * linear.
 */

/* What pg_report_markdown renders. Headings appear with descriptions or
 * tables. */
enum pg_report_part {
	PG_REPORT_DESCRIPTIONS = 1u << 0, /* section headings and bullets */
	PG_REPORT_TABLES = 1u << 1,       /* the three markdown tables */
	PG_REPORT_JSON = 1u << 2,         /* "## json version of the benchmarking tables" */
	PG_REPORT_ALL = 7u,
};

struct pg_report;

/* Build the report model from a result set. The report borrows from rs,
 * which must outlive it. Never fails. */
struct pg_report *pg_report_new(const struct pg_result_set *rs);
void pg_report_free(struct pg_report *r);

/* Rows in the latency, throughput and serving tables, and how many of them
 * did not complete. */
size_t pg_report_rows(const struct pg_report *r, size_t *not_ok);

/* Append the markdown (the parts selected by flags) to out. */
void pg_report_markdown(struct pg_buf *out, const struct pg_report *r, unsigned flags);

/*
 * Append benchmark_results_inferencex.json: a JSON array of one row per
 * completed serving result, in the InferenceX / perf.vllm.ai shape
 * (results/frontier.h pg_frontier_inferencex_row; device: the GPU key in
 * lower case), by test name, and a newline. Returns the number of rows; 0
 * appends nothing.
 */
size_t pg_report_inferencex(struct pg_buf *out, const struct pg_report *r);

/* Append the tables as one JSON object, {"latency": {header: {"0": v, ...}},
 * "throughput": ..., "serving": ...}, on one line without a newline: the
 * string inside the report's ```json fence. */
void pg_report_json_tables(struct pg_buf *out, const struct pg_report *r);

/* Append benchmark_results.json: an array of one object per row (latency,
 * then throughput, then serving rows), keys the display headers, followed
 * by a newline. */
void pg_report_records(struct pg_buf *out, const struct pg_report *r);

/* Convenience: build, render the parts in flags, free. */
void pg_report_render(struct pg_buf *out, const struct pg_result_set *rs, unsigned flags);

#endif
