#ifndef PERFGATE_BASELINE_HISTORY_AB_H
#define PERFGATE_BASELINE_HISTORY_AB_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "baseline/history_check.h"
#include "gate/ab.h"
#include "suite/suite.h"

struct pg_cmp_point;
struct pg_error;
struct pg_metric;

/*
 * A/B results in the history (docs/ab.md, docs/trends.md): what an A/B
 * step found, kept beside the runs of main but apart from them, in
 * <gpu>/ab/<point>.jsonl of the same ref, one line per A/B step:
 *
 *   {"format": 1, "kind": "ab", "commit": "<head>", "base_commit": "<base>",
 *    "pr": "17", "date": "2026-11-22T13:00:00Z", "build_url": "https://...",
 *    "branch": "fix", "gpu": "H100", "suite": "serving", "point": "...",
 *    "test": "serving_x", "outcome": "fail", "blocks": 6,
 *    "metrics": {"median_tpot_ms": {"change": 0.031, "effect": 0.002,
 *        "lo": -0.004, "hi": 0.008, "tolerance": 0.02, "pairs": 3,
 *        "verdict": "unchanged",
 *        "whole_run": {"change": 0.031, "lo": 0.02, "hi": 0.04,
 *                      "tolerance": 0.02, "verdict": "regressed"}}}}
 *
 * change is the point's head/base change, effect its change beyond the
 * run's common change (what was judged), [lo, hi] the 95% interval of the
 * effect; whole_run is the metric's change common to every point, when
 * the step judged one. The baseline, the noise and the change points are
 * read from the files directly in <gpu>/ only (a subdirectory is not a
 * point), so these lines never shape a baseline or a gate's answer. Pure.
 */

#define PG_HISTORY_AB_DIR "ab"

/* Who made the step: the head and base commits, the pull request. */
struct pg_history_ab_meta {
	const char *commit;      /* the head's source commit */
	const char *base_commit; /* or NULL */
	const char *pr;          /* the pull request's number, or NULL */
	const char *date;        /* ISO 8601 UTC */
	const char *build_url;   /* or NULL */
	const char *branch;      /* or NULL */
};

/*
 * The line of point p of an A/B run (p indexes s->points): every metric
 * judged at it (not a missing one). head (may be NULL) is the head's result
 * of the point, for its test, QPS and concurrency. NULL when no metric of
 * the point has a verdict. New reference.
 */
json_t *pg_history_ab_line(const struct pg_ab_summary *s, size_t p, const struct pg_cmp_point *head,
			   const struct pg_history_ab_meta *meta);

/*
 * Classify one parsed A/B line (o NULL: not JSON), as pg_history_classify
 * does a run's: why names the key ("metrics.output_throughput.change is a
 * string, not a number"). A verdict or suite this perfgate does not know,
 * or a newer format, is PG_HLINE_NEWER.
 */
enum pg_hline_kind pg_history_ab_classify(const json_t *o, char *why, size_t size);

/* One metric of an A/B line. */
struct pg_history_ab_metric {
	char *id;
	const struct pg_metric *m; /* the registry's, or NULL (a metric of a newer perfgate) */
	double change, effect, lo, hi, tolerance; /* NAN where absent */
	long pairs;
	enum pg_ab_verdict verdict;
	bool has_whole;
	double whole_change, whole_lo, whole_hi, whole_tolerance;
	enum pg_ab_verdict whole_verdict;
};

/* One A/B line. */
struct pg_history_ab_rec {
	char *commit, *base_commit, *pr, *date, *build_url, *branch, *gpu, *test, *outcome;
	enum pg_suite_kind suite;
	long blocks;
	struct pg_history_ab_metric *m;
	size_t n_m;
};

/* A point's A/B lines, oldest first. */
struct pg_history_ab {
	char *point;
	struct pg_history_ab_rec *recs;
	size_t n, cap;
};

/*
 * Parse a <gpu>/ab/<point>.jsonl file. Blank lines are skipped; a line
 * that is not an A/B record, or one in a newer format, is PG_EINFRA naming
 * source:line and the key. On error h holds what parsed.
 */
int pg_history_ab_parse(struct pg_history_ab *h, const char *point, const char *text, size_t len,
			const char *source, struct pg_error *err);
void pg_history_ab_release(struct pg_history_ab *h);

/* The history of point among hs[0..n) (sorted by point), or NULL. */
const struct pg_history_ab *pg_history_ab_find(const struct pg_history_ab *hs, size_t n,
					       const char *point);

#endif
