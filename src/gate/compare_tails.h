#ifndef PERFGATE_GATE_COMPARE_TAILS_H
#define PERFGATE_GATE_COMPARE_TAILS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "results/metrics.h"

struct pg_cmp_row;

/*
 * Tail rules the run's sample cannot decide (docs/gate.md, "Tails and
 * SLOs"). A p99 of 200 requests is the third-largest request at best;
 * MLPerf's early-stopping rule (results/tails.h) says a p99 needs at
 * least 662 samples before one order statistic bounds it at 99%
 * confidence. Judging it on fewer is judging noise, so such a row is
 * reported as not decidable instead.
 */

/* The percentile (99 for p99_ttft_ms and certified_p99_ttft_ms) and the
 * samples' family ("ttft", "tpot", "itl", "e2el", "latency") of a tail
 * metric; false for any other metric. */
bool pg_cmp_tail_metric(const struct pg_metric *m, double *percentile, char family[16]);

/*
 * How many samples a result's family of latencies had: its
 * perfgate.certified.<family>.n, else what vLLM's keys imply (completed
 * requests for ttft, tpot and e2el; total_output_tokens - completed
 * gaps for itl; the latencies array for latency). -1 when unknown.
 */
long pg_cmp_tail_samples(const json_t *result, const char *family);

/*
 * When row's metric is a tail metric whose rule asks for certification
 * (pg_rule.certify) and the run's sample is smaller than its percentile
 * needs: the row becomes insufficient-data with the note "not decidable
 * at n = 200 (p99 needs ≥ 662)" and its current value the median of cur
 * (may be empty): a pass, or, when that is worse than the tolerance (and
 * the floor), noisy -- a warning, shown with the regressions; returns
 * true. Else leaves the row alone and returns false. The row's metric,
 * rule and baseline are set.
 */
bool pg_cmp_tail_undecidable(struct pg_cmp_row *row, const json_t *result, const double *cur,
			     size_t n_cur);

#endif
