#ifndef PERFGATE_RESULTS_COLD_H
#define PERFGATE_RESULTS_COLD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "suite/suite.h"

struct pg_buf;
struct pg_metric;

/*
 * A cold first repeat (docs/results.md, perfgate.cold_repeat). The first
 * run of a point after a server start can be slower than the runs after
 * it however long the warm-up was: a kernel compiled or autotuned on first
 * use, a cache not yet filled. Measured on a real nightly series (SGLang
 * on MI355X, bench/cold-repeats), repeat 1 of 3 had its median TTFT
 * 15-94% above the other two (median +54%), while the two warm repeats
 * differed by 1.9% (median; p90 6%, worst 37%).
 *
 * The rule: for each of a suite's witnesses -- the metrics a cold engine
 * moves and noise moves little: the medians of TTFT, TPOT, ITL and E2E
 * latency and the output throughput (serving), the median latency
 * (latency), the request throughput (throughput); never a tail or a
 * mean, which one slow request moves -- the gap of repeat 1 from the
 * median of the others, in the worse direction and in log terms, must
 * exceed both PG_COLD_SPREAD_FACTOR times the others' own range and the
 * class's floor (PG_COLD_FLOOR_LATENCY, PG_COLD_FLOOR_THROUGHPUT). One
 * witness is enough. With 2 repeats there is no spread of the others:
 * the floor alone, PG_COLD_TWO_REPEATS times higher. Startup tests (whose
 * starts are cold on purpose) and A/B blocks (each after its own start,
 * paired with the other side's) are never checked. Pure.
 */

/* Repeat 1 must be this many times the others' range beyond their median. */
#define PG_COLD_SPREAD_FACTOR 3.0
/* ... and at least this much worse (log gap): median latencies, throughput. */
#define PG_COLD_FLOOR_LATENCY    0.10
#define PG_COLD_FLOOR_THROUGHPUT 0.05
/* With only one other repeat the floor is this many times higher. */
#define PG_COLD_TWO_REPEATS 1.5

struct pg_cold {
	size_t n;  /* repeats looked at; 0: not checked (fewer than 2, no witness) */
	bool cold; /* repeat 1 is cold: left out of the median and the samples */
	/* the witness that showed it (cold), else the one closest to it; NULL
	 * when no witness was in every repeat */
	const struct pg_metric *metric;
	double change;    /* repeat 1 / the others' median - 1, as measured (the
			   * median of the logs: for an even count of others,
			   * the geometric mean of the middle two) */
	double threshold; /* the relative gap it had to exceed, worse direction */
};

/*
 * Check repeat 1 of runs[0..n) (result objects or perfgate.repeats
 * entries of a point of that suite, in run order) against the others.
 */
void pg_cold_check(struct pg_cold *out, enum pg_suite_kind kind, const json_t *const *runs,
		   size_t n);

/* "repeat 1 of 3 cold: median TTFT +38% vs the others, left out" (a
 * checked, cold c), appended to out. */
void pg_cold_note(struct pg_buf *out, const struct pg_cold *c);

/* perfgate.cold_repeat of a cold c: {"repeat": 1, "of": n, "metric": id,
 * "change", "threshold", "note"}. New reference. */
json_t *pg_cold_json(const struct pg_cold *c);

/* The 0-based index into perfgate.repeats of the run a result leaves out
 * (its perfgate.cold_repeat), or -1. */
long pg_cold_left_out(const json_t *result);

/* A result's perfgate.cold_repeat note, or NULL. Borrowed. */
const char *pg_cold_result_note(const json_t *result);

/*
 * The same check on a result that has perfgate.repeats and was never
 * checked (imported: a sweep's runs, an aggregate's files, an older
 * perfgate's result): when repeat 1 is cold, perfgate.cold_repeat is set
 * and each top-level value the repeats hold becomes the median of the
 * others. Results with perfgate.cold_repeat already, A/B sides
 * (perfgate.ab) and startup points are left alone. out (may be NULL) gets
 * the check. Returns whether repeat 1 was found cold.
 */
bool pg_cold_apply(json_t *result, struct pg_cold *out);

#endif
