#ifndef PERFGATE_GATE_ATTENTION_H
#define PERFGATE_GATE_ATTENTION_H

#include <stdbool.h>
#include <stddef.h>

#include "gate/compare.h"

struct pg_buf;

/*
 * What a comparison means to the person reading it, decided once for every
 * place that shows it: `perfgate compare`/`gate` (comparison.md, the exit
 * code) and the Buildkite step (its log, annotation and exit code). Pure.
 *
 *   attention  the rows above the fold: what failed, what is missing or
 *              broken, and gating metrics the gate could not decide (noisy,
 *              awaiting confirmation), and a tail past its escalation
 *              threshold that too few samples could not decide. A warn-only
 *              metric that regressed without escalating (mean TPOT beside a
 *              gating mean ITL) is in the full table only.
 *   counts     one unit, the test point: "3 of 14 tests regressed", with
 *              the regressed metrics as detail "(9 metrics)".
 *   tone       a row's colour comes from its verdict and outcome, never from
 *              the direction of the change alone.
 *   exit code  0 pass or warn, 1 a regression (when the command gates),
 *              3 results missing or failed, or a sick job's regression.
 */

/* The row belongs in the "needs attention" table. */
bool pg_attention_row(const struct pg_cmp_row *r);

/* The attention rows of c, worst first (fail, error, warn), then the
 * biggest change, then the comparison's own order. *n is set; the array
 * (never NULL) is the caller's to free. */
const struct pg_cmp_row **pg_attention_rows(const struct pg_comparison *c, size_t *n);

/* The threshold that decided the row, as a relative change: the
 * escalation threshold for a warn-only metric that failed through it,
 * else the effective tolerance (NAN when none applies). */
double pg_attention_threshold(const struct pg_cmp_row *r);

/* Whether crossing that threshold fails the step: a gating metric, or a
 * warn-only one whose escalation threshold it is (the evidence's words and
 * its chart say the same). */
bool pg_attention_fails(const struct pg_cmp_row *r);

enum pg_tone {
	PG_TONE_NONE, /* unchanged, new, insufficient data: no colour */
	PG_TONE_BAD,  /* fails the gate, or results missing/failed */
	PG_TONE_WARN, /* worse or undecided, but only warns */
	PG_TONE_GOOD, /* improved */
};

/* The colour of a row: from its verdict and outcome. */
enum pg_tone pg_attention_tone(const struct pg_cmp_row *r);

/* The comparison counted per test point (a point counts once, under its
 * worst row). */
struct pg_gate_counts {
	size_t tests;             /* points compared (the run's and the baseline's) */
	size_t regressed;         /* points with a failing row */
	size_t regressed_metrics; /* failing rows, the detail of "regressed" */
	size_t whole_run_metrics; /* metrics that regressed over the whole run only
				   * (no single point failing: compare_step.c) */
	size_t errors;            /* points missing or failed (exit 3), none failing */
	size_t warnings;          /* points with warnings only */
	size_t not_reproduced;    /* of those, points whose flagged regression the
				   * re-run did not reproduce */
	size_t improved;          /* points that improved, with nothing worse */
	bool suspect;             /* the regressions are a sick job's (exit 3) */
};

void pg_gate_count(struct pg_gate_counts *out, const struct pg_comparison *c);

/*
 * The counts as one phrase, the same in the CLI headline, the step's log
 * and the annotation:
 *
 *   "3 of 14 tests regressed (9 metrics), 1 with warnings, 2 improved"
 *   "3 of 14 tests regressed (9 metrics) — from a sick job: re-run it"
 *   "the whole run regressed in 1 metric (14 tests)"
 *   "results missing or failed for 1 of 14 tests"
 *   "no regressions in 14 tests, 2 with warnings"
 *   "no regressions in 4 tests, 1 with warnings (1 not reproduced by the re-run)"
 */
void pg_gate_counts_phrase(struct pg_buf *out, const struct pg_gate_counts *k);

/*
 * The exit code of a decision (base/exitcode.h): 1 for a regression when
 * the command gates (gate, a gate or merge step; compare and report steps
 * do not), 3 for results missing or failed and for a sick job's
 * regression, else 0.
 */
int pg_gate_exit_code(enum pg_outcome outcome, bool gating);

#endif
