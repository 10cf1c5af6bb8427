#ifndef PERFGATE_GATE_COMPARE_SLO_H
#define PERFGATE_GATE_COMPARE_SLO_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct pg_cmp_row;
struct pg_base_metric;

/*
 * SLOs: rules with a limit (`min: 99%` on slo_attainment, `max: 2000 ms`
 * on certified_p99_ttft_ms) judge a metric against a fixed bound instead
 * of a baseline (docs/tails.md, "SLOs in the gate"). A bound on a share of
 * requests or on a tail percentile is decided the way MLPerf decides a
 * latency bound (results/tails.h):
 *
 *  - slo_attainment*: with n requests sent and t of them missing, the SLO
 *    is met when MLPerf's server rule certifies the target share
 *    (n >= h_min(t) + t), missed when the misses are too many for a
 *    system at the target (the mirrored binomial test), and not
 *    decidable in between;
 *  - p90/p99 metrics: not decidable below the samples the percentile
 *    needs; above, met when the certified estimate (an upper bound) is
 *    within the bound, missed when the plain percentile is not;
 *  - anything else, or with `certify: false`: the value decides.
 *
 * Met is "unchanged", missed "regressed" (failing when the rule gates),
 * not decidable a warning: "noisy" when the value misses the bound,
 * "insufficient-data" when it meets it uncertified; the note says which and
 * why: "SLO met: 99.6% ≥ 99% (certain at 99% confidence, n = 1000)",
 * "SLO not decided: 99.5% ≥ 99% at n = 200: with 1 miss, certifying it
 * takes ≥ 662 requests".
 */

/*
 * When row's rule has a limit: decide the row against it (cur: the run's
 * samples of the metric, n_cur of them; result: the run's result object;
 * bm: the baseline's value for display, or NULL) and return true. With no
 * limit, or no current value, leave the row alone and return false.
 */
bool pg_cmp_slo_decide(struct pg_cmp_row *row, const json_t *result,
		       const struct pg_base_metric *bm, const double *cur, size_t n_cur);

#endif
