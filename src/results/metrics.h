#ifndef PERFGATE_RESULTS_METRICS_H
#define PERFGATE_RESULTS_METRICS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "suite/suite.h"

/*
 * The one metric registry. Report tables, comparison, baselines, charts and
 * annotations all walk this table; nothing else decides a metric's
 * direction, unit, header or default tolerance.
 *
 * Values are read from a result object (a result file, or one entry of its
 * perfgate.repeats array) by `key`, where a dot walks into nested objects
 * ("percentiles.50"). Display value = stored value * scale (vLLM's latency
 * JSON is in seconds, its tables in milliseconds).
 */

enum pg_direction {
	PG_LOWER_IS_BETTER = -1,
	PG_NO_DIRECTION = 0, /* counts: reported, never compared */
	PG_HIGHER_IS_BETTER = 1,
};

enum pg_metric_class {
	PG_CLASS_COUNT,      /* number of requests */
	PG_CLASS_THROUGHPUT, /* req/s, tok/s */
	PG_CLASS_LATENCY,    /* mean and median latencies */
	PG_CLASS_TAIL,       /* p90, p99 latencies */
};

struct pg_metric {
	const char *id; /* stable name in thresholds files and verdicts */
	enum pg_suite_kind suite;
	const char *key;    /* JSON key in the result file */
	double scale;       /* stored * scale = display units */
	const char *header; /* report table column; NULL if not a column */
	const char *label;  /* human name for comparisons and charts */
	const char *unit;   /* display unit: "ms", "req/s", "tok/s", "" */
	enum pg_direction direction;
	enum pg_metric_class cls;
	bool gated;       /* gates by default (primary metric); else warns */
	double tolerance; /* default relative tolerance in the worse direction */
	double floor;     /* changes smaller than this (display units) are unchanged */
};

/* All metrics, in report column order within each suite. */
const struct pg_metric *pg_metrics_all(size_t *n);
/* NULL if unknown. */
const struct pg_metric *pg_metric_by_id(enum pg_suite_kind suite, const char *id);
/* Ids of all metrics of a suite, for "did you mean" in thresholds files. */
size_t pg_metric_ids(enum pg_suite_kind suite, const char **out, size_t max);

/*
 * Read a metric's display value from a result object. Returns 0 and sets
 * *out, or -1 when the key is absent, null, or not a number.
 */
int pg_metric_value(const struct pg_metric *m, const json_t *result, double *out);

/*
 * Which suite a result object belongs to: its perfgate.suite, else the
 * shape of its keys (avg_latency/latencies -> latency; requests_per_second
 * /elapsed_time -> throughput; request_throughput/completed/mean_ttft_ms ->
 * serving). -1 when it is not a benchmark result.
 */
int pg_result_kind(const json_t *result);

#endif
