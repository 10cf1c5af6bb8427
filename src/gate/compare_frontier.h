#ifndef PERFGATE_GATE_COMPARE_FRONTIER_H
#define PERFGATE_GATE_COMPARE_FRONTIER_H

#include <stdbool.h>
#include <stddef.h>

#include "results/frontier.h"

struct pg_comparison;
struct pg_policy;
struct pg_baseline;
struct pg_cmp_point;

/*
 * One decision per ladder (docs/tails.md, "The frontier"): the points of a
 * serving test that differ only by max_concurrency (at one rate) or only
 * by rate (at one concurrency), three or more, are compared as a curve --
 * output throughput per GPU against tok/s/user -- instead of point by
 * point, so the ladder spends one decision, not one per point.
 */

/* The default confidence of a frontier decision's interval: one-sided
 * 99% on each side. */
#define PG_FRONTIER_CONFIDENCE 0.98

/*
 * Append one row per ladder that both the run and the baseline have (at
 * least 3 points each) to c, under the rule of the registry's "frontier"
 * metric for the ladder's test (default: warn-only, tolerance 1.5%):
 * regressed when the frontier's shift is worse than the tolerance and its
 * interval excludes 0, noisy when only the first holds, improved or
 * unchanged otherwise. When the rule gates, the ladder's points' own
 * throughput, TPOT and ITL rows stop failing (their outcome becomes a
 * warning): the ladder is decided once. Call before the comparison's
 * outcome is summed up.
 */
void pg_cmp_frontiers(struct pg_comparison *c, const struct pg_policy *policy,
		      const struct pg_baseline *base, const struct pg_cmp_point *run, size_t n_run);

#endif
