#ifndef PERFGATE_REPORT_CHARTS_H
#define PERFGATE_REPORT_CHARTS_H

#include <jansson.h>
#include <stddef.h>

#include "results/metrics.h"
#include "base/strutil.h"

/*
 * The charts of a results set, as SVG documents (report/svg.h draws them):
 *  - one figure per serving test with two or more points: the metrics that
 *    regressed or need attention (pg_chart_input.metrics) first, then the
 *    key ones (output throughput, median and p99 TTFT, median and p99 TPOT)
 *    against QPS (or max concurrency when only that varies), this run
 *    against the baseline;
 *  - "serving" bars for single-point serving tests, "latency" bars (median
 *    and p99 latency) and "throughput" bars (request and token throughput),
 *    one row per test, the baseline bar above this run's, the metrics that
 *    regressed first here too.
 * A key metric no point has a value for is left out; a figure with no value
 * at all keeps its panels, each saying "no data".
 * Pure: results arrive as JSON objects, baselines through a callback.
 */

/* The baseline value of a metric of a point, in display units; return 0 and
 * set *out, or -1 when there is none. */
typedef int (*pg_chart_baseline_fn)(void *ctx, const char *point, const struct pg_metric *m,
				    double *out);

struct pg_chart_input {
	const json_t *const *results; /* n result objects (borrowed) */
	const char *const *names;     /* their point names */
	size_t n;
	pg_chart_baseline_fn baseline; /* NULL: no baseline */
	void *baseline_ctx;
	/* the change a bar is labelled with, relative (0.034: +3.4%), when the
	 * comparison decided on another figure than the ratio of the two
	 * values drawn (A/B's paired change); NULL, or -1 for a point: that
	 * ratio */
	pg_chart_baseline_fn change;
	void *change_ctx;
	const char *subtitle;       /* "H100 · commit 1a2b3c4"; or NULL */
	const char *baseline_name;  /* legend; default "Baseline" */
	const char *const *flagged; /* points that regressed or warn: their charts
	                                * and bars come first; may be NULL */
	size_t n_flagged;
	const char *const *metrics; /* metric ids (results/metrics.h) that regressed
	                             * or need attention, most important first: their
	                             * panels lead each figure of their suite; may be NULL */
	size_t n_metrics;
};

/* Limits that keep a results set of 10,000 points from making 10,000 SVG
 * artifacts or one 30 MB figure: sweeps beyond the first (flagged first)
 * are left out, bar figures show their first rows (flagged first). */
#define PG_CHARTS_MAX_SWEEPS   24
#define PG_CHARTS_MAX_BAR_ROWS 30
/* Panels per figure: the key metrics and a few that regressed. */
#define PG_CHARTS_MAX_PANELS 8

struct pg_chart_file {
	char *stem;  /* file name without ".svg": [A-Za-z0-9._-] only, at most
	              * PG_CHART_STEM_MAX + 20 bytes, unique in the set even
	              * without regard to case (base/filename.h) */
	char *name;  /* what the stem was made from: a test's name, "latency"... */
	char *title; /* "serving_llama8B_tp1_sharegpt: QPS sweep" */
	char *svg;   /* the document */
	size_t svg_len;
	struct pg_strv points; /* point names the figure shows */
};

struct pg_chart_set {
	struct pg_chart_file *items;
	size_t n;
	size_t cap;
	size_t sweeps_left_out; /* serving sweeps over PG_CHARTS_MAX_SWEEPS */
};

#define PG_CHART_SET_INIT                                                                          \
	{                                                                                          \
		NULL, 0, 0, 0                                                                      \
	}

/* Build every chart (appended to out, serving sweeps first, in test order). */
void pg_charts_build(struct pg_chart_set *out, const struct pg_chart_input *in);
void pg_chart_set_release(struct pg_chart_set *set);

/* Longest stem: "charts/<stem>.svg" stays well under the 255-byte limit
 * of a file name whatever the name it comes from. */
#define PG_CHART_STEM_MAX 200

/* Copy s into a file-name-safe stem (other bytes become '_'); one longer
 * than PG_CHART_STEM_MAX keeps its start and ends in "-" and 16 hex digits
 * of a hash of all of s (stable, distinct for names that share a start).
 * Caller frees. */
char *pg_chart_stem(const char *s);

#endif
