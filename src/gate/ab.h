#ifndef PERFGATE_GATE_AB_H
#define PERFGATE_GATE_AB_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/strutil.h"

/*
 * A/B mode's decision (docs/ab.md): base and head run on the same machine
 * in interleaved blocks, A B B A A B B A ..., each block one server session
 * running the suite's points; blocks 2k and 2k+1 are pair k. After each
 * pair, every gated (metric, point) is judged on its paired head/base
 * ratios, and sampling stops when every judgement is clear of its
 * tolerance or the budget of blocks is spent.
 *
 * The structure is the gate's (gate/compare_step.c): a session's offset is
 * shared by every point it runs, so per metric and pair the change common
 * to the points (their median) is told apart from each point's change
 * beyond it. A point is judged on that effect, whose noise is the
 * within-session noise only (its spread over pairs, shrunk towards the
 * metric's pooled spread over points); the common change is a hypothesis
 * of its own per metric, judged on its spread over pairs (session noise).
 * With fewer than 3 points measuring a metric, each point is judged on its
 * whole change. Cells with no value at all (a metric of another suite
 * kind) do not apply and are not counted.
 *
 * Every hypothesis is a one-sided t test of "head is worse" on the log
 * ratio; they share the step's false-alarm budget by Holm's step-down
 * procedure (pg_cmpstat_holm), and the budget is split evenly over the
 * looks the sampling may take (max_pairs - min_pairs + 1: Bonferroni over
 * the looks, valid however the looks correlate). A hypothesis:
 *
 *   regressed  significant for the step (its Holm-adjusted p-value within
 *              the look's share) and its interval wholly worse than the
 *              tolerance;
 *   unchanged  its one-sided 95% bound on the worse side (the 90%
 *              interval's worse end: two one-sided tests, TOST) within the
 *              tolerance (improved: even that bound better than the
 *              tolerance); a row unchanged at an earlier look stays so,
 *              with that look's estimate, unless it is regressed now;
 *   pending    neither yet; at the end of the budget: inconclusive.
 *
 * A whole-run row still pending on every pair may settle (unchanged or
 * improved) without the pairs whose common change is far from the others'
 * (a session slow or fast as a whole: beyond 5 robust sds and the
 * tolerance, from 4 pairs, at most a third of them); a change of the head
 * shifts every pair alike and sets none aside, and a regression is judged
 * on every pair.
 *
 * Pure: no I/O. The intervals shown are two-sided at `confidence` (95%).
 */

enum pg_ab_side { PG_AB_BASE = 0, PG_AB_HEAD = 1 };

/* "base", "head". */
const char *pg_ab_side_name(enum pg_ab_side s);

/* The side of block i (0-based) in the balanced order A B B A A B B A ...:
 * a linear drift over any 4 blocks hits both sides equally. */
enum pg_ab_side pg_ab_block_side(size_t i);

enum pg_ab_verdict {
	PG_AB_PENDING,      /* not decided yet */
	PG_AB_REGRESSED,    /* head worse than the tolerance, significant for the step */
	PG_AB_INCONCLUSIVE, /* the budget ran out undecided: a warning */
	PG_AB_MISSING,      /* fewer than 2 pairs measured it */
	PG_AB_IMPROVED,     /* head better than the tolerance, clearly */
	PG_AB_UNCHANGED,    /* clearly within the tolerance */
	PG_AB_VERDICT_COUNT
};

/* "pending", "regressed", "inconclusive", "missing", "improved", "unchanged". */
const char *pg_ab_verdict_name(enum pg_ab_verdict v);

struct pg_ab_opts {
	double false_alarm; /* the step's budget; default 5% */
	double confidence;  /* of the intervals shown; default 0.95 */
	double equivalence; /* the one-sided level of the worse bound that must lie
			     * within the tolerance for unchanged (TOST); 0.95 */
	size_t min_pairs;   /* no verdict before this many pairs; default 2 */
	size_t max_pairs;   /* the budget of pairs; default 8 */
};

/* The defaults above. */
void pg_ab_opts_init(struct pg_ab_opts *o);

/*
 * The measurements: per metric j, point p and pair k, the block value of
 * each side at [(j * n_points + p) * n_pairs + k] (NAN: not measured).
 * higher_better[j] and tolerance[j] (relative, > 0) per metric.
 */
struct pg_ab_input {
	size_t n_metrics, n_points, n_pairs;
	const double *base;
	const double *head;
	const bool *higher_better;
	const double *tolerance;
	/* per metric, the whole-run hypothesis's tolerance (NULL: tolerance):
	 * a change common to every point is measured against session noise,
	 * which a few pairs cannot narrow to a point's tolerance */
	const double *whole_tolerance;
	/* [p * n_pairs + k]: a block of pair k was client-bound at point p
	 * (its numbers describe the client, not the server), so the pair is
	 * left out of every estimate of the point and of the run's common
	 * change; NULL: none */
	const bool *client_bound;
};

/* One hypothesis. Changes are head / base - 1, signed as measured. */
struct pg_ab_est {
	double change;               /* geometric mean over the pairs of head/base, - 1:
			     * the figure the tables and the charts show */
	double change_lo, change_hi; /* its 95% interval (the pairs' own
				      * spread), as measured; NAN */
	double effect;               /* what is judged: a point's change beyond the run's
			    * common change (its whole change with < 3 points);
			    * a whole-run row's common change */
	double lo, hi;               /* the interval of effect, as measured; NAN */
	double sd;                   /* per pair, of the judged log ratio; NAN */
	double df;                   /* of the test; NAN */
	double p_value;              /* one-sided, head worse; NAN: not tested */
	double p_adjusted;           /* Holm over the step's hypotheses; NAN */
	size_t n;                    /* pairs behind it */
	size_t left_out;             /* pairs left out: a block client-bound */
	double worse_bound;          /* the one-sided bound at opts.equivalence on the
			     * worse side, worse-positive log scale; NAN */
	size_t set_aside;            /* a whole-run row's pairs left out: a session off
			     * as a whole (every point slow), beyond the tolerance */
	bool applies;                /* measured at all (a latency metric of a serving point
			    * does not apply); counted only then */
	enum pg_ab_verdict verdict;
};

struct pg_ab_decision {
	size_t n_metrics, n_points, n_pairs;
	struct pg_ab_est *points; /* [j * n_points + p] */
	struct pg_ab_est *whole;  /* [j]; applies only with 3 points or more */
	double alpha_look;        /* the budget's share of this look */
	size_t looks;             /* the looks the budget is split over */
	size_t hypotheses;        /* with a p-value */
	size_t counts[PG_AB_VERDICT_COUNT];
	bool stop;  /* sample no more: all decided, or a regression */
	bool final; /* the budget is spent: pending became inconclusive */
};

/*
 * Judge the pairs measured so far. final: the budget is spent (the last
 * look): pending hypotheses become inconclusive. out is initialised here;
 * release it with pg_ab_decision_release.
 */
void pg_ab_decide(struct pg_ab_decision *out, const struct pg_ab_input *in,
		  const struct pg_ab_opts *o, bool final);
void pg_ab_decision_release(struct pg_ab_decision *d);

/*
 * What would close an open (pending or inconclusive) row, if its estimate
 * and spread stayed as they are: the pairs in all it would need to be
 * unchanged (its worse bound at o->equivalence inside the tolerance),
 * improved, or, with its estimate beyond the tolerance, to have its
 * interval wholly beyond it (a regression, when also significant for the
 * step). 0: no number of pairs up to PG_AB_CLOSE_MAX would (its estimate
 * sits at the tolerance), or it has no spread.
 */
#define PG_AB_CLOSE_MAX 999
size_t pg_ab_pairs_to_close(const struct pg_ab_est *e, double tolerance, const struct pg_ab_opts *o,
			    bool higher_better);

/* The smallest tolerance under which the row would be unchanged now: its
 * worse bound at o->equivalence, as a relative change (> 0); NAN when the
 * bound is on the better side or there is no spread. */
double pg_ab_passing_tolerance(const struct pg_ab_est *e, const struct pg_ab_opts *o,
			       bool higher_better);

/* ------------------------------------------------------------------ */
/* What an A/B run found, for comparison.md, verdict.json and the      */
/* annotation (gate/ab_render.c). Filled by runner/ab_io.c.           */

struct pg_buf;
struct pg_metric;

struct pg_ab_summary {
	char *gpu;                        /* "H100" (label), or "none" */
	struct pg_strv points;            /* the plan's points, in order */
	const struct pg_metric **metrics; /* the gated metrics judged (registry's) */
	size_t n_metrics;
	double *tolerance;       /* per metric */
	double *whole_tolerance; /* per metric */
	double *base, *head;     /* [j * n_points + p]: the median over the side's blocks */
	struct pg_ab_decision d;
	size_t blocks;     /* run */
	size_t max_blocks; /* the budget */
	char *stop;        /* why sampling stopped, a phrase: "every interval is clear" */
	double seconds;
	char *side_desc[2];      /* what each side changed, or NULL: "server flags --x" */
	struct pg_strv errors;   /* "block 3 (head): serving_x: error: ..." */
	size_t failed_blocks[2]; /* per side (enum pg_ab_side): blocks with an error */
	/* the blocks left out of the estimates, each with its pair: "serving_x
	 * in block 3 (head)" */
	struct pg_strv client_bound;
	int cancel_signal; /* the run was cancelled by this signal, or 0 */
};

void pg_ab_summary_release(struct pg_ab_summary *s);

/*
 * The step's outcome, as the gate's (gate/compare.h enum pg_outcome, exit
 * code by pg_gate_exit_code): FAIL with a regression (it outranks failed
 * blocks), INFRA when a block failed or the run was cancelled, WARN when
 * something is inconclusive or missing, else PASS.
 */
int pg_ab_outcome(const struct pg_ab_summary *s);

/* "**perfgate A/B: FAIL** — 1 regression on H100, head vs base, 6 block
 * pairs" (markdown; no newline). */
void pg_ab_headline(struct pg_buf *out, const struct pg_ab_summary *s);

/* comparison.md: the headline, how it was decided, the whole run per
 * metric ("Output token throughput -3.1% [-4.0%, -2.2%]"), the points
 * needing attention, and every point in a <details> section. Every name
 * is escaped, as the gate's. */
void pg_ab_markdown(struct pg_buf *out, const struct pg_ab_summary *s);

/* Only the points' table (every row), for the annotation's comparison. */
void pg_ab_points_table(struct pg_buf *out, const struct pg_ab_summary *s, bool attention_only);

/* verdict.json: {"mode": "ab", "gpu", "verdict", "exit_code", "headline",
 * "blocks", "pairs", "max_blocks", "stopped", "seconds", "decision":
 * {false_alarm, hypotheses, looks, alpha_look, correction, confidence},
 * "sides": {base, head}, "whole_run": [{metric, label, unit, direction,
 * change, lo, hi, tolerance, set_aside, p_value, p_adjusted, pairs,
 * verdict}],
 * "rows": [{point, metric, label, unit, direction, base, head, change,
 * change_lo, change_hi, effect, lo, hi, tolerance, sd, df, p_value,
 * p_adjusted, pairs, pairs_left_out, verdict, basis}], "errors": [...],
 * "client_bound_left_out": ["serving_x in block 3 (head)"]}, where basis is the gate's shape
 * (gate/compare.h pg_cmp_basis) with kind "ab", runs the block pairs and
 * source the base side. pandas: pd.DataFrame(v["rows"]). New reference. */
json_t *pg_ab_json(const struct pg_ab_summary *s);

/* Upper quantile of Student's t: the t with P(T > t) = q (0 < q < 1). */
double pg_ab_t_quantile(double q, double df);

#endif
