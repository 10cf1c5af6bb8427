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
 *   build/bench/ab-sim --profile all   the noise of real series as it applies
 *                                      to an A/B on one machine
 *                                      (bench/noise_profiles.h, README.md):
 *                                      A/A, one point 2% worse, targets PASS/FAIL,
 *                                      a summary table, what kept steps open
 *
 * The profiles: gate-sim's job part (per metric, part of it per point) is
 * drawn once per step and shared by every block of both sides; blocks
 * differ by the within-job part, heavy tails (dedicated: 8% of a block's
 * points 3-8 night sds out) and slow blocks (model and fleet: 10% of
 * blocks 5% slow; dedicated: 5% of blocks 2% slow, assumed).
 *
 * The default rows (the model, harsher), log-normal in the
 * metric's worse direction, at the level of the block -- one server
 * session:
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
#include "noise_profiles.h"
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
	/* The profiles measured on real series (--profile; gate-sim's, as they
	 * apply to an A/B of two builds on one machine): per metric, the job
	 * part (job_m, of it share_m per point) is drawn once per step and
	 * shared by every block of both sides, as one CI job's machine, driver
	 * and day are; what differs from block to block is the within-job
	 * part (within_m), the heavy tails (per block and point, a value
	 * U(lo, hi) night sds out, either sign) and the slow blocks
	 * (slow_share of blocks slow_by worse in every point and metric: a
	 * client-bound or throttled session). */
	const double *job_m, *within_m, *share_m;
	double outlier_prob, outlier_lo, outlier_hi;
	double job_offset[N_METRICS][N_POINTS]; /* this step's draw of the job part */
};

struct outcome {
	bool failed;
	size_t pairs;     /* used */
	size_t fail_pair; /* the pair count at which it failed, 0: never */
	bool inconclusive;
	/* what kept an inconclusive step open: a whole-run row, a point's
	 * throughput row, a point's latency row */
	bool open_whole, open_throughput, open_latency;
};

/* A profile's job part for one step: the same offset for every block of
 * both sides (it cancels in the paired ratios, as it does on one machine). */
static void draw_job(struct pg_rng *r, struct sim *s)
{
	double z = pg_rng_normal(r);

	for (size_t p = 0; p < N_POINTS; p++) {
		double own = pg_rng_normal(r);
		for (size_t j = 0; j < N_METRICS; j++)
			s->job_offset[j][p] = s->job_m[j] * (sqrt(1 - s->share_m[j]) * z +
							     sqrt(s->share_m[j]) * own);
	}
}

/* One block's values of every metric and point, in the worse direction.
 * The model: a session offset common to the block's points and each
 * point's within-session draw. A profile: the step's job part, each
 * point's within-job draw, outliers and slow blocks. delta worsens point
 * 0's throughput, every metric of point 0 (whole_point) or of every point
 * (everywhere); the head side's only. */
static void block(struct pg_rng *r, const struct sim *s, double delta, bool everywhere,
		  bool whole_point, double *out)
{
	double z = pg_rng_normal(r), outlier[N_POINTS] = { 0 };
	double slow = pg_rng_uniform(r) < s->slow_share ? log1p(s->slow_by) : 0;
	double off = s->session_sd * z + slow;

	for (size_t p = 0; s->job_m && s->outlier_prob > 0 && p < N_POINTS; p++)
		if (pg_rng_uniform(r) < s->outlier_prob)
			outlier[p] = (pg_rng_uniform(r) < 0.5 ? -1 : 1) *
				     (s->outlier_lo +
				      pg_rng_uniform(r) * (s->outlier_hi - s->outlier_lo));
	for (size_t j = 0; j < N_METRICS; j++)
		for (size_t p = 0; p < N_POINTS; p++) {
			double w, lvl = level[j] * (1 + 0.05 * (double)p);
			if (s->job_m) {
				double in = s->within_m[j], night = hypot(s->job_m[j], in);
				w = s->job_offset[j][p] + slow + outlier[p] * night +
				    in * pg_rng_normal(r);
			} else {
				w = off * scale[j] + s->within_sd * scale[j] * pg_rng_normal(r);
			}
			if (everywhere || (p == 0 && (j == 0 || whole_point)))
				w += log1p(delta);
			out[j * N_POINTS + p] = lvl * exp(higher_better[j] ? -w : w);
		}
}

static void one_step(struct pg_rng *r, struct sim *s, double delta, bool everywhere,
		     bool whole_point, struct outcome *oc)
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
	if (s->job_m)
		draw_job(r, s);
	for (size_t k = 0; k < K; k++) {
		struct pg_ab_decision d;
		struct pg_ab_input in;
		double *b, *h;
		bool stop;

		/* blocks 2k and 2k+1 in the balanced order */
		for (size_t i = 2 * k; i < 2 * k + 2; i++) {
			bool is_head = pg_ab_block_side(i) == PG_AB_HEAD;
			block(r, s, is_head ? delta : 0, everywhere, whole_point, vals);
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
		for (size_t j = 0; j < N_METRICS; j++) {
			oc->open_whole |= d.whole[j].verdict == PG_AB_INCONCLUSIVE;
			for (size_t p = 0; p < N_POINTS; p++)
				if (d.points[j * N_POINTS + p].verdict == PG_AB_INCONCLUSIVE)
					*(j ? &oc->open_latency : &oc->open_throughput) = true;
		}
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
	bool everywhere;  /* every metric of every point, not one point's throughput */
	bool whole_point; /* every metric of the one point */
	size_t within;    /* caught within this many pairs counts; 0: any */
	size_t steps, failed, caught, blocks, inconclusive;
	size_t by_pairs[MAX_PAIRS + 1]; /* steps ended after this many pairs */
	size_t open_whole, open_throughput, open_latency;
};

static void run_row(struct pg_rng *r, struct sim *s, struct row *row)
{
	for (size_t i = 0; i < row->steps; i++) {
		struct outcome oc;
		one_step(r, s, row->delta, row->everywhere, row->whole_point, &oc);
		row->failed += oc.failed;
		row->caught += oc.failed && (!row->within || oc.fail_pair <= row->within);
		row->blocks += 2 * oc.pairs;
		row->inconclusive += !oc.failed && oc.inconclusive;
		row->by_pairs[oc.pairs]++;
		row->open_whole += oc.open_whole;
		row->open_throughput += oc.open_throughput;
		row->open_latency += oc.open_latency;
	}
}

/* The median number of pairs a row's steps ran. */
static size_t median_pairs(const struct row *row)
{
	size_t seen = 0;

	for (size_t k = 0; k <= MAX_PAIRS; k++) {
		seen += row->by_pairs[k];
		if (2 * seen >= row->steps)
			return k;
	}
	return MAX_PAIRS;
}

/* ------------------------------------------------------------------ */
/* Noise profiles from real series (--profile; bench/noise_profiles.h)  */

/* the first three of the profiles' metrics: ab-sim's gated ones */
_Static_assert(NP_THROUGHPUT == 0 && NP_MEDIAN_TTFT == 1 && NP_MEDIAN_TPOT == 2,
	       "ab-sim's metrics lead the profiles'");
static const double fleet_within[N_METRICS] = { 0.005, 0.005 * 1.3, 0.005 * 1.3 };
static const double fleet_share[N_METRICS] = { NP_FLEET_SHARE, NP_FLEET_SHARE, NP_FLEET_SHARE };
/* the model's parts (gate-sim's default noise), per metric */
static const double model_job[N_METRICS] = { 0.015, 0.015 * 1.3, 0.015 * 1.3 };
static const double model_within[N_METRICS] = { 0.005, 0.005 * 1.3, 0.005 * 1.3 };
static const double model_share[N_METRICS] = { 0.6, 0.6, 0.6 };

struct profile {
	const char *name, *title;
	const double *job, *within, *share;
	double slow_share, slow_by, outlier_prob;
};

/* The job part is the step's, shared by both sides; blocks differ by the
 * within-job part, outliers and slow blocks. A dedicated node's slow
 * blocks (5% of them 2% slow: a client-bound or throttled session) are
 * assumed, not measured: its nights show no slow nodes. */
/* clang-format off */
static const struct profile profiles[] = {
	{ "model", "today's model: job 1.5% (medians 1.3x; 60% per point) shared by both sides, "
	  "within 0.5% (medians 1.3x), 10% of blocks 5% slow",
	  model_job, model_within, model_share, 0.10, 0.05, 0 },
	{ "dedicated", "dedicated node: job 0.2-0.3% shared by both sides, within 0.05% "
	  "(median TTFT 0.25%), 8% of a block's points 3-8 night sds out, 5% of blocks 2% slow",
	  np_dedicated_job, np_dedicated_within, np_dedicated_share, 0.05, 0.02,
	  NP_DEDICATED_OUTLIER_PROB },
	{ "fleet", "shared fleet: job 1% (median TTFT 3%, TPOT 1%; 60% per point) shared by both "
	  "sides, within 0.5% (medians 0.65%), 10% of blocks 5% slow",
	  np_fleet_job, fleet_within, fleet_share, 0.10, 0.05, 0 },
};
/* clang-format on */
#define N_PROFILES (sizeof(profiles) / sizeof(profiles[0]))

/* A share with its Wilson interval, and whether it meets a target (on the
 * estimate) and clears it (the interval too). */
static void share_line(const char *what, size_t k, size_t n, double goal, bool at_most, int *missed)
{
	double lo, hi, rate = (double)k / (double)n;
	bool met = at_most ? rate <= goal : rate >= goal, clears;

	pg_cmpstat_wilson(k, n, 1.959964, &lo, &hi);
	clears = at_most ? hi <= goal : lo >= goal;
	printf("- %s %s %.0f%%: %.1f%% (%.1f–%.1f): **%s**%s\n", what,
	       at_most ? "at most" : "at least", 100 * goal, 100 * rate, 100 * lo, 100 * hi,
	       met ? "PASS" : "FAIL",
	       met ? clears ? " (the interval clears it)" : " (the interval does not clear it)"
		   : "");
	*missed += !clears;
}

/* A profile's A/A steps and one point 2% worse in every metric; returns
 * the targets whose interval does not clear them. */
static int run_profile(const struct profile *prof, struct sim s, size_t steps, unsigned long seed,
		       struct row *aa, struct row *worse)
{
	struct pg_rng r;
	struct row *rows[] = { aa, worse };
	int missed = 0;

	*aa = (struct row){ .name = "A/A (nothing changed)", .steps = steps };
	*worse = (struct row){ .name = "one point 2% worse in every metric",
			       .delta = 0.02,
			       .whole_point = true,
			       .within = 8,
			       .steps = steps };
	s.job_m = prof->job;
	s.within_m = prof->within;
	s.share_m = prof->share;
	s.session_sd = 0; /* the job part instead */
	s.slow_share = prof->slow_share;
	s.slow_by = prof->slow_by;
	s.outlier_prob = prof->outlier_prob;
	s.outlier_lo = NP_DEDICATED_OUTLIER_LO;
	s.outlier_hi = NP_DEDICATED_OUTLIER_HI;
	pg_rng_seed(&r, seed);
	printf("\n#### %s\n\n", prof->title);
	printf("| step | steps failed | decided within %zu blocks | caught within 8 pairs | "
	       "inconclusive | mean blocks per verdict |\n|---|--:|--:|--:|--:|--:|\n",
	       2 * s.opts.max_pairs);
	for (size_t i = 0; i < 2; i++) {
		double lo, hi;
		run_row(&r, &s, rows[i]);
		pg_cmpstat_wilson(rows[i]->failed, steps, 1.959964, &lo, &hi);
		printf("| %s | %.1f%% (%.1f-%.1f) | %.1f%% | ", rows[i]->name,
		       100.0 * (double)rows[i]->failed / (double)steps, 100 * lo, 100 * hi,
		       100.0 * (double)(steps - rows[i]->inconclusive) / (double)steps);
		if (rows[i]->within)
			printf("%.1f%% | ", 100.0 * (double)rows[i]->caught / (double)steps);
		else
			printf("- | ");
		printf("%.1f%% | %.1f |\n", 100.0 * (double)rows[i]->inconclusive / (double)steps,
		       (double)rows[i]->blocks / (double)steps);
	}
	printf("\nA/A: median %zu pairs; kept open at the end of the budget by a whole-run row in "
	       "%.1f%% of steps, a point's throughput in %.1f%%, a point's latency in %.1f%%.\n",
	       median_pairs(aa), 100.0 * (double)aa->open_whole / (double)steps,
	       100.0 * (double)aa->open_throughput / (double)steps,
	       100.0 * (double)aa->open_latency / (double)steps);
	printf("\nTargets (`%s`):\n\n", prof->name);
	share_line("A/A steps failed", aa->failed, steps, 0.01, true, &missed);
	share_line("A/A steps decided (not inconclusive) within the budget",
		   steps - aa->inconclusive, steps, 0.80, false, &missed);
	share_line("one point 2% worse caught within 8 pairs", worse->caught, steps, 0.90, false,
		   &missed);
	fflush(stdout);
	return missed;
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
	const char *profile = NULL;
	int rc = 0;

	pg_ab_opts_init(&s.opts);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--check"))
			check = true;
		else if (!strcmp(argv[i], "--profile") && i + 1 < argc)
			profile = argv[++i];
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
	if (s.opts.max_pairs < 2 || s.opts.max_pairs > MAX_PAIRS || steps < 1)
		goto usage;
	if (profile) {
		struct row aa[N_PROFILES], worse[N_PROFILES];
		bool ran[N_PROFILES] = { false };
		int missed = 0;
		bool any = false;
		printf("ab-sim: %d points x %d gated metrics, tolerance %g%% (latency %g%%), step "
		       "budget %g%%, %zu to %zu block pairs; %zu steps per row, seed %lu\n",
		       N_POINTS, N_METRICS, 100 * s.tolerance, 100 * s.latency_tolerance,
		       100 * s.opts.false_alarm, s.opts.min_pairs, s.opts.max_pairs, steps, seed);
		for (size_t i = 0; i < N_PROFILES; i++)
			if (!strcmp(profile, "all") || !strcmp(profile, profiles[i].name)) {
				missed += run_profile(&profiles[i], s, steps, seed, &aa[i],
						      &worse[i]);
				ran[i] = any = true;
			}
		if (!any)
			goto usage;
		printf("\n| profile | A/A steps failed (<= 1%%) | A/A decided within %zu blocks "
		       "(>= 80%%) | A/A median pairs | one point 2%% worse caught within 8 pairs "
		       "(>= 90%%) |\n|---|--:|--:|--:|--:|\n",
		       2 * s.opts.max_pairs);
		for (size_t i = 0; i < N_PROFILES; i++)
			if (ran[i])
				printf("| %s | %.1f%% | %.1f%% | %zu | %.1f%% |\n",
				       profiles[i].name,
				       100 * ((double)aa[i].failed / (double)steps),
				       100 * ((double)(steps - aa[i].inconclusive) / (double)steps),
				       median_pairs(&aa[i]),
				       100 * ((double)worse[i].caught / (double)steps));
		if (check)
			printf("\ntargets (interval bounds): %s\n", missed ? "MISSED" : "met");
		return check && missed;
	}
	pg_rng_seed(&r, seed);
	{
		struct row rows[] = {
			{ "A/A (nothing changed)", 0, false, false, 0, steps, 0, 0, 0, 0 },
			{ "one point's throughput 2% worse", 0.02, false, false, 8, steps, 0, 0, 0,
			  0 },
			{ "one point's throughput 5% worse", 0.05, false, false, 4, steps, 0, 0, 0,
			  0 },
			{ "every point 5% worse in every metric", 0.05, true, false, 0, steps, 0, 0,
			  0, 0 },
			{ "every point 10% worse in every metric", 0.10, true, false, 0, steps, 0,
			  0, 0, 0 },
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
		"[--latency-tolerance PCT] [--whole-run-tolerance PCT] [--within-sd PCT] [--max-pairs N]\n"
		"              [--profile model|dedicated|fleet|all] [--check]\n");
	return 2;
}
