#ifndef PERFGATE_GATE_COMPARE_STEP_H
#define PERFGATE_GATE_COMPARE_STEP_H

/*
 * The step decision, shared by compare_rows.c (which collects the pairs)
 * and compare_step.c (which decides them). Internal to gate/.
 */

#include <stdbool.h>
#include <stddef.h>

#include "gate/compare.h"

/* One (point, metric) pair with a baseline and a first-run value. */
struct pg_step_pair {
	size_t row;   /* its row in the comparison */
	size_t group; /* the job that ran it (shards of a merged build differ) */
	const struct pg_base_point *bp;
	const struct pg_base_metric *bm;
	double v1, v2;     /* the runs' medians (display units); v2 NAN: no re-run value */
	size_t n1, n2;     /* samples behind them */
	double w1, w2;     /* the runs' repeat-to-repeat sd (log), NAN under 3 */
	bool pinned;       /* a throughput the offered request rate sets: shown, never gated */
	bool rerun_failed; /* the re-run of the point failed (error, cancelled) */
	bool rerun_lacks;  /* the re-run has the point but not the metric */
};

/*
 * Decide the pairs (their rows get verdict, outcome, effect, sides and
 * notes), add the whole-run changes to c->commons, and list the points a
 * confirmation re-run should repeat in c->rerun. c->with_confirmation says
 * whether the pairs' v2 are a re-run.
 */
void pg_step_decide(struct pg_comparison *c, const struct pg_step_pair *pairs, size_t n,
		    const struct pg_policy *policy, const struct pg_baseline *base,
		    const struct pg_compare_opts *opts);

#endif
