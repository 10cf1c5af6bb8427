#ifndef PERFGATE_BASELINE_HISTORY_H
#define PERFGATE_BASELINE_HISTORY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "gate/compare.h"

struct pg_buf;
struct pg_error;

/*
 * The run history kept in git (baseline/history_io.c stores it): one JSON-lines file
 * per GPU and test point, <gpu>/<point>.jsonl, one line per recorded run:
 *
 *   {"format": 1, "commit": "9f1c...", "date": "2026-11-22T13:00:00Z",
 *    "build_url": "https://buildkite.com/...", "branch": "main",
 *    "gpu": "8xH100", "suite": "serving", "point": "serving_x_qps_4",
 *    "test": "serving_x", "qps": 4, "max_concurrency": null, "repeats": 5,
 *    "metrics": {"output_throughput": [2418.1, 2411.0, ...], ...}}
 *
 * Lines are appended (a build's earlier line of the point is replaced),
 * so concurrent writers only ever conflict on the ref, never on content.
 * Which lines are usable: baseline/history_check.h.
 */

struct pg_history_meta {
	const char *commit;    /* source commit the run measured */
	const char *date;      /* ISO 8601 UTC */
	const char *build_url; /* or NULL */
	const char *branch;    /* or NULL */
};

/* The history line for one point of a run (new reference); NULL when the
 * point has no comparable metric. */
json_t *pg_history_line(const struct pg_cmp_point *p, const struct pg_history_meta *meta);

/* One parsed line. */
struct pg_history_rec {
	char *commit;
	char *date;
	char *build_url;
	char *gpu;
	enum pg_suite_kind suite;
	char *test;
	double qps;
	long max_concurrency;
	long repeats;
	json_t *metrics; /* {"id": [values...]} (owned) */
};

struct pg_history {
	char *point;
	struct pg_history_rec *recs; /* file order: oldest first */
	size_t n;
	size_t cap;
};

/*
 * Parse a <point>.jsonl file. Blank lines are skipped; a line that is not a
 * record, or one in a newer format (pg_history_classify), is an error
 * naming source:line. On error h holds what parsed.
 */
int pg_history_parse(struct pg_history *h, const char *point, const char *text, size_t len,
		     const char *source, struct pg_error *err);
void pg_history_release(struct pg_history *h);

/*
 * Add the baseline point for h to base from the records for which
 * use[i] is true (NULL: all): the last `window` of them. Each record counts
 * once (its median per metric); the value is the median of those, the
 * noise their spread. Fewer than min_history usable records mark the point
 * insufficient (its values are still filled from what there is). Nothing is
 * added when no record is usable.
 */
void pg_history_baseline_point(struct pg_baseline *base, const struct pg_history *h,
			       const bool *use, long window, long min_history);

/*
 * The history as readable text: per metric, the oldest and newest of the
 * last `last` records, the change, a sparkline, the median and the spread.
 * metric (may be NULL) limits it to one metric id.
 */
void pg_history_trend(struct pg_buf *out, const struct pg_history *h, const char *metric,
		      long last);

/* The baseline as readable text (perfgate baseline show). */
void pg_baseline_describe(struct pg_buf *out, const struct pg_baseline *b,
			  const struct pg_policy *p);

#endif
