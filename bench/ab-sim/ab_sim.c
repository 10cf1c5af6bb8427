/*
 * ab-sim: how often does A/B mode fail a step that changed nothing, how
 * often does it catch a regression of one point, and how many blocks does
 * it spend deciding?
 *
 * It runs A/B mode's own decision code (gate/ab.c: pg_ab_block_side for
 * the order, pg_ab_decide after every pair, its stopping rule) on
 * synthetic steps shaped like vLLM's H100 serving suite: 18 points, the
 * serving metrics that gate by default (output throughput, median TTFT,
 * median TPOT).
 *
 *   build/bench/ab-sim                 the table (docs/ab.md)
 *   build/bench/ab-sim --check         exit 1 unless the targets are met
 *   build/bench/ab-sim --steps 4000 --seed 7 --tolerance 1.5% --max-pairs 12
 *
 * Noise (log-normal, in the metric's worse direction), at the level of the
 * block -- one server session:
 *
 *   session offset  sd 1.5% (throughput; the medians 1.3x), one draw per
 *                   block shared by every point and metric of it
 *   slow sessions   10% of blocks are 5% worse in every metric
 *   within session  each point's value varies around the session's level,
 *                   sd 0.5% (class-scaled), as gate-sim's repeats do
 *
 * A regression makes one point's output throughput worse by delta on the
 * head side. Rates are per step, with Wilson 95% intervals.
 */
#include "base/alloc.h"
#include "base/rng.h"
#include "gate/ab.h"
#include "gate/compare_stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_POINTS  18
#define N_METRICS 3
#define MAX_PAIRS 64

static const char *const metric_ids[N_METRICS] = { "output_throughput", "median_ttft_ms",
						   "median_tpot_ms" };
static const bool higher_better[N_METRICS] = { true, false, false };
static const double scale[N_METRICS] = { 1.0, 1.3, 1.3 };
static const double level[N_METRICS] = { 2400, 120, 25 };

struct sim {
	double session_sd, slow_share, slow_by, within_sd;
	double tolerance, latency_tolerance, whole_tolerance;
	struct pg_ab_opts opts;
};

struct outcome {
	bool failed;
	size_t pairs;     /* used */
	size_t fail_pair; /* the pair count at which it failed, 0: never */
	bool inconclusive;
};

/* One block's values of every metric and point: the session's offset and
 * each point's own draw, in the worse direction; delta worsens point 0's
 * throughput (head only). */
static void block(struct pg_rng *r, const struct sim *s, double delta, bool everywhere, double *out)
{
	double off = s->session_sd * pg_rng_normal(r);

	if (pg_rng_uniform(r) < s->slow_share)
		off += log1p(s->slow_by);
	for (size_t j = 0; j < N_METRICS; j++)
		for (size_t p = 0; p < N_POINTS; p++) {
			double w = off * scale[j] + s->within_sd * scale[j] * pg_rng_normal(r);
			double lvl = level[j] * (1 + 0.05 * (double)p);
			if (everywhere || (p == 0 && j == 0))
				w += log1p(delta);
			out[j * N_POINTS + p] = lvl * exp(higher_better[j] ? -w : w);
		}
}

static void one_step(struct pg_rng *r, const struct sim *s, double delta, bool everywhere,
		     struct outcome *oc)
{
	size_t K = s->opts.max_pairs;
	double *base = pg_xcalloc(N_METRICS * N_POINTS * K, sizeof(double));
	double *head = pg_xcalloc(N_METRICS * N_POINTS * K, sizeof(double));
	double tol[N_METRICS], wtol[N_METRICS], vals[N_METRICS * N_POINTS];

	for (size_t j = 0; j < N_METRICS; j++) {
		tol[j] = j ? s->latency_tolerance : s->tolerance;
		wtol[j] = isnan(s->whole_tolerance) ? tol[j] : s->whole_tolerance;
	}
	memset(oc, 0, sizeof(*oc));
	for (size_t k = 0; k < K; k++) {
		struct pg_ab_decision d;
		struct pg_ab_input in;
		double *b, *h;
		bool stop;

		/* blocks 2k and 2k+1 in the balanced order */
		for (size_t i = 2 * k; i < 2 * k + 2; i++) {
			bool is_head = pg_ab_block_side(i) == PG_AB_HEAD;
			block(r, s, is_head ? delta : 0, everywhere, vals);
			for (size_t c = 0; c < N_METRICS * N_POINTS; c++)
				(is_head ? head : base)[c * K + k] = vals[c];
		}
		/* the decision sees pairs 0..k, laid out [cell][pair] */
		b = pg_xmalloc(N_METRICS * N_POINTS * (k + 1) * sizeof(double));
		h = pg_xmalloc(N_METRICS * N_POINTS * (k + 1) * sizeof(double));
		for (size_t c = 0; c < N_METRICS * N_POINTS; c++)
			for (size_t q = 0; q <= k; q++) {
				b[c * (k + 1) + q] = base[c * K + q];
				h[c * (k + 1) + q] = head[c * K + q];
			}
		in = (struct pg_ab_input){ N_METRICS, N_POINTS,      k + 1, b,
					   h,         higher_better, tol,   wtol };
		pg_ab_decide(&d, &in, &s->opts, k + 1 == K);
		oc->pairs = k + 1;
		oc->inconclusive = d.counts[PG_AB_INCONCLUSIVE] > 0;
		if (d.counts[PG_AB_REGRESSED]) {
			oc->failed = true;
			oc->fail_pair = k + 1;
		}
		stop = d.stop; /* read before the release clears d */
		pg_ab_decision_release(&d);
		free(b);
		free(h);
		if (oc->failed || stop)
			break;
	}
	free(base);
	free(head);
}

struct row {
	const char *name;
	double delta;
	bool everywhere; /* every metric of every point, not one point's throughput */
	size_t within;   /* caught within this many pairs counts; 0: any */
	size_t steps, failed, caught, blocks, inconclusive;
};

static void run_row(struct pg_rng *r, const struct sim *s, struct row *row)
{
	for (size_t i = 0; i < row->steps; i++) {
		struct outcome oc;
		one_step(r, s, row->delta, row->everywhere, &oc);
		row->failed += oc.failed;
		row->caught += oc.failed && (!row->within || oc.fail_pair <= row->within);
		row->blocks += 2 * oc.pairs;
		row->inconclusive += !oc.failed && oc.inconclusive;
	}
}

static int parse_pct(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s)
		return -1;
	*out = *end == '%' ? v / 100 : v;
	return 0;
}

int main(int argc, char **argv)
{
	struct sim s = { 0.015, 0.10, 0.05, 0.005, 0.01, 0.02, NAN, { 0 } };
	struct pg_rng r;
	unsigned long seed = 1;
	size_t steps = 2000;
	bool check = false;
	int rc = 0;

	pg_ab_opts_init(&s.opts);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--check"))
			check = true;
		else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
			steps = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--tolerance") && i + 1 < argc) {
			if (parse_pct(argv[++i], &s.tolerance))
				goto usage;
		} else if (!strcmp(argv[i], "--whole-run-tolerance") && i + 1 < argc) {
			if (parse_pct(argv[++i], &s.whole_tolerance))
				goto usage;
		} else if (!strcmp(argv[i], "--latency-tolerance") && i + 1 < argc) {
			if (parse_pct(argv[++i], &s.latency_tolerance))
				goto usage;
		} else if (!strcmp(argv[i], "--within-sd") && i + 1 < argc) {
			if (parse_pct(argv[++i], &s.within_sd))
				goto usage;
		} else if (!strcmp(argv[i], "--max-pairs") && i + 1 < argc) {
			s.opts.max_pairs = strtoul(argv[++i], NULL, 10);
		} else {
			goto usage;
		}
	}
	if (s.opts.max_pairs < 2 || s.opts.max_pairs > MAX_PAIRS)
		goto usage;
	pg_rng_seed(&r, seed);
	{
		struct row rows[] = {
			{ "A/A (nothing changed)", 0, false, 0, steps, 0, 0, 0, 0 },
			{ "one point's throughput 2% worse", 0.02, false, 8, steps, 0, 0, 0, 0 },
			{ "one point's throughput 5% worse", 0.05, false, 4, steps, 0, 0, 0, 0 },
			{ "every point 5% worse in every metric", 0.05, true, 0, steps, 0, 0, 0,
			  0 },
			{ "every point 10% worse in every metric", 0.10, true, 0, steps, 0, 0, 0,
			  0 },
		};
		/* --check: the rows with targets */
		size_t n = check ? 3 : sizeof(rows) / sizeof(rows[0]);

		printf("ab-sim: %d points x %d gated metrics (%s, %s, %s), tolerance %g%% "
		       "(latency %g%%), whole run ",
		       N_POINTS, N_METRICS, metric_ids[0], metric_ids[1], metric_ids[2],
		       100 * s.tolerance, 100 * s.latency_tolerance);
		if (isnan(s.whole_tolerance))
			printf("the same");
		else
			printf("%g%%", 100 * s.whole_tolerance);
		printf(", step budget %g%%, %zu to %zu block pairs; session sd %g%%, %g%% of "
		       "sessions %g%% slow, within-session sd %g%%; %zu steps per row, seed %lu\n\n",
		       100 * s.opts.false_alarm, s.opts.min_pairs, s.opts.max_pairs,
		       100 * s.session_sd, 100 * s.slow_share, 100 * s.slow_by, 100 * s.within_sd,
		       steps, seed);
		printf("| step | steps failed | caught within | inconclusive | mean blocks per verdict |\n");
		printf("|---|--:|--:|--:|--:|\n");
		for (size_t i = 0; i < n; i++) {
			double lo, hi, clo, chi;
			run_row(&r, &s, &rows[i]);
			pg_cmpstat_wilson(rows[i].failed, rows[i].steps, 1.959964, &lo, &hi);
			pg_cmpstat_wilson(rows[i].caught, rows[i].steps, 1.959964, &clo, &chi);
			printf("| %s | %.1f%% (%.1f-%.1f) | ", rows[i].name,
			       100.0 * (double)rows[i].failed / (double)rows[i].steps, 100 * lo,
			       100 * hi);
			if (rows[i].within)
				printf("%.1f%% (%.1f-%.1f) within %zu pairs | ",
				       100.0 * (double)rows[i].caught / (double)rows[i].steps,
				       100 * clo, 100 * chi, rows[i].within);
			else
				printf("- | ");
			printf("%.1f%% | %.1f |\n",
			       100.0 * (double)rows[i].inconclusive / (double)rows[i].steps,
			       (double)rows[i].blocks / (double)rows[i].steps);
			if (check) {
				/* the interval's bound, not only the estimate, must clear
				 * the target */
				if (i == 0 && hi > 0.01)
					rc = 1;
				if ((i == 1 || i == 2) && clo < 0.90)
					rc = 1;
			}
		}
		if (check)
			printf("\ntargets (A/A <= 1%%, 2%% within 8 pairs >= 90%%, 5%% within 4 >= "
			       "90%%; interval bounds): %s\n",
			       rc ? "MISSED" : "met");
	}
	return rc;
usage:
	fprintf(stderr,
		"usage: ab-sim [--steps N] [--seed N] [--tolerance PCT] "
		"[--latency-tolerance PCT] [--whole-run-tolerance PCT] [--within-sd PCT] [--max-pairs N] [--check]\n");
	return 2;
}
