/*
 * gate-sim: how often does the gate fail a whole CI step that changed
 * nothing (false alarms), how often does it catch a real regression
 * (power), and what does confirming cost (re-runs)?
 *
 * It runs perfgate's own decision code -- the git history baseline as
 * `compare --baseline git` builds it, pg_compare with the policy's rules,
 * and the confirmation re-run of the points it lists -- on synthetic steps
 * shaped like vLLM's H100 serving suite: 18 serving points, each with the
 * default gated metrics (output throughput, median TTFT and TPOT gate; the
 * p99s of TTFT, TPOT, ITL and E2E latency fail when worse than `escalate`).
 *
 *   build/bench/gate-sim                  every scenario
 *   build/bench/gate-sim --check          exit 1 unless the defaults meet
 *                                         the targets (a ctest runs this)
 *   build/bench/gate-sim --scenario published --thresholds thresholds/H100.yml
 *   build/bench/gate-sim --profile dedicated --why
 *                                         every failing row of a failing step
 *                                         and its history, on stderr
 *   build/bench/gate-sim --profile all    the noise of real series (below),
 *                                         each with its targets, PASS/FAIL
 *                                         (--check: exit 1 unless every
 *                                         target's interval clears it)
 *
 * Noise (log-normal, in the metric's worse direction), as it lives on
 * shared GPU machines -- at the level of the job (one agent, one session):
 *
 *   job offset      sd 1.5% (throughput; medians 1.3x, p99s 3x), one draw
 *                   per job shared by every point and metric of that job;
 *                   optionally a share of it drawn per point instead
 *   slow nodes      10% of jobs are 5% worse in every metric
 *   within the job  each repeat varies around the job's level, sd 0.5%
 *                   (class-scaled like the offset)
 *   drift           the level of main walks 0.3% per job (a random walk)
 *   creep, steps    scenarios: 0.1% worse per merge; a step in the history
 *   heavy tails     scenario: Student t(3) draws instead of normal ones
 *
 * Profiles (--profile; bench/noise_profiles.h, measured by
 * noise_estimates.py): `model` is the noise above with 60% of the job
 * offset drawn per point (the issue's model); `dedicated` one nightly
 * 8-GPU node -- per metric job parts of 0.2-0.3% (p99s 1-3%) and repeats
 * within 0.05-0.25%, heavy tails (8% of a point's jobs 3-8 sd out), main's
 * level stepping 2-50% every 10-20 jobs, a cold first repeat per point and
 * job (TTFT +7-70%, throughput up to -11%) and one-night p99 spikes
 * (+10-170%, 1% per point and metric); `fleet` a shared fleet -- job parts
 * of 1% (median TTFT 3%, p99 TTFT 6%), 60% per point, 10% slow jobs,
 * drift. Each runs clean PRs, one point 5% and 2% worse, and one point 5%
 * worse two runs after a 5% step of it on main (the step's two jobs in
 * the history: every completed main run is recorded).
 *
 * A history of 20 recorded main jobs is drawn once per baseline and fixed
 * for many PRs, as in CI (a lucky history fails PR after PR); each PR is a
 * new job at the newest level of main. Regressions make one point (or every
 * point) worse by delta in every metric. Rates are per step, with 95%
 * intervals that count the baselines, not the PRs, as the independent
 * units (PRs sharing a baseline are correlated).
 */
#include "noise_profiles.h"
#include "base/alloc.h"
#include "base/error.h"
#include "base/rng.h"
#include "baseline/history.h"
#include "baseline/thresholds_io.h"
#include "results/cold.h"
#include "gate/compare.h"
#include "gate/compare_stats.h"
#include "results/metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_POINTS    18
#define MAX_REPEATS 16
#define MAX_HISTORY 64

/* The serving metrics that can fail a step by default, their levels at
 * point 0 and their noise class. */
struct sim_metric {
	const char *id;
	double value;
	double scale; /* noise multiplier of the class */
	bool spiky;   /* one-night spikes in the profiles that have them */
	const struct pg_metric *m;
};

/* clang-format off */
static struct sim_metric metrics[] = {
	{ "output_throughput", 2400, 1.0, false, NULL },
	{ "median_ttft_ms", 120, 1.3, false, NULL },
	{ "median_tpot_ms", 25, 1.3, false, NULL },
	{ "p99_ttft_ms", 400, 3.0, true, NULL },
	{ "p99_tpot_ms", 40, 3.0, false, NULL },
	{ "p99_itl_ms", 60, 3.0, true, NULL },
	{ "p99_e2el_ms", 5000, 3.0, false, NULL },
};
/* clang-format on */
#define N_METRICS (sizeof(metrics) / sizeof(metrics[0]))
_Static_assert(N_METRICS == NP_METRICS, "the profiles' metrics are metrics[]");

struct noise {
	double job_sd;      /* job offset, throughput class */
	double point_share; /* share of the job offset's variance drawn per point */
	double within;      /* repeat-to-repeat, throughput class */
	double slow_prob;   /* share of jobs on a slow node */
	double slow;        /* how much worse they are */
	double drift;       /* random walk of main's level per job */
	double creep;       /* systematic worsening per main job */
	bool heavy;         /* t(3) instead of normal draws */
	int step_at;        /* a step in the history this many jobs ago (0: none) */
	double step;        /* its size */
	bool step_one;      /* at one point only (else every point) */

	/* The profiles measured on real series (--profile; README.md): per
	 * metric, in metrics[] order, instead of job_sd, within (class-scaled)
	 * and point_share, when set. */
	const double *job_m, *within_m, *share_m;
	double outlier_prob;             /* per job and point: a night beyond 3 sd, ... */
	double outlier_lo, outlier_hi;   /* ... by U(lo, hi) night sds, either sign, every metric */
	const double *cold_lo, *cold_hi; /* per metric: each point's first repeat of a job
					  * worse by U(lo, hi) (one draw per point) */
	double spike_prob;           /* per job, point and spiky metric: a one-night spike ... */
	double spike_lo, spike_hi;   /* ... worse by a log-uniform share in [lo, hi] */
	int steps_lo, steps_hi;      /* main's level steps every U{lo..hi} jobs (0: never): */
	double steps_min, steps_max; /* half the points, each metric of them with probability
					* 1/2, by a log-uniform size in [min, max], either sign */
};

enum base_kind { BASE_GIT, BASE_PUBLISHED };

struct scenario {
	const char *name;
	const char *title;
	enum base_kind base;
	bool confirm;
	struct noise noise;
};

#define ISSUE_NOISE                                                                                \
	.job_sd = 0.015, .within = 0.005, .slow_prob = 0.10, .slow = 0.05, .drift = 0.003

/* clang-format off */
static const struct scenario scenarios[] = {
	{ "default", "git history (20 jobs), confirmation: the issue's noise", BASE_GIT, true,
	  { ISSUE_NOISE } },
	{ "first-run", "git history, first run only (no confirmation)", BASE_GIT, false,
	  { ISSUE_NOISE } },
	{ "point-30", "git history, confirmation, 30% of the job offset point-specific", BASE_GIT, true,
	  { ISSUE_NOISE, .point_share = 0.3 } },
	{ "point-60", "git history, confirmation, 60% of the job offset point-specific", BASE_GIT, true,
	  { ISSUE_NOISE, .point_share = 0.6 } },
	{ "heavy", "git history, confirmation, heavy tails (t3 draws)", BASE_GIT, true,
	  { ISSUE_NOISE, .heavy = true } },
	{ "creep", "git history, confirmation, main creeping 0.1% worse per job", BASE_GIT, true,
	  { ISSUE_NOISE, .creep = 0.001 } },
	{ "step-all", "git history, confirmation, main 4% worse everywhere 6 jobs ago", BASE_GIT, true,
	  { ISSUE_NOISE, .step_at = 6, .step = 0.04 } },
	{ "step-one", "git history, confirmation, one point 6% worse on main 6 jobs ago", BASE_GIT, true,
	  { ISSUE_NOISE, .step_at = 6, .step = 0.06, .step_one = true } },
	{ "published", "thresholds baseline: one published job, no repeats; confirmation", BASE_PUBLISHED,
	  true, { ISSUE_NOISE } },
};
/* clang-format on */
#define N_SCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

/* What a PR changes: nothing, one point, or every point, by delta. */
struct change {
	const char *label;
	double delta;
	bool all;
	bool at_step; /* the point that stepped on main (noise.step_one) */
};

/* clang-format off */
static const struct change changes[] = {
	{ "clean", 0, false, false },
	{ "one point 5% worse", 0.05, false, false },
	{ "one point 10% worse", 0.10, false, false },
	{ "every point 5% worse", 0.05, true, false },
	{ "every point 10% worse", 0.10, true, false },
};
/* clang-format on */
#define N_CHANGES (sizeof(changes) / sizeof(changes[0]))

static struct pg_rng rng;

/* --noise KEY=VALUE overrides, applied to every scenario's noise. */
static const char *noise_sets[16];
static int n_noise_sets;

static int apply_noise(struct noise *nz, const char *spec)
{
	const char *eq = strchr(spec, '=');
	char key[32];
	double v;

	if (!eq || eq - spec >= (long)sizeof(key))
		return -1;
	snprintf(key, sizeof(key), "%.*s", (int)(eq - spec), spec);
	v = strtod(eq + 1, NULL);
	if (!strcmp(key, "job_sd"))
		nz->job_sd = v;
	else if (!strcmp(key, "point_share"))
		nz->point_share = v;
	else if (!strcmp(key, "within"))
		nz->within = v;
	else if (!strcmp(key, "slow_prob"))
		nz->slow_prob = v;
	else if (!strcmp(key, "slow"))
		nz->slow = v;
	else if (!strcmp(key, "drift"))
		nz->drift = v;
	else if (!strcmp(key, "creep"))
		nz->creep = v;
	else if (!strcmp(key, "heavy"))
		nz->heavy = v != 0;
	else
		return -1;
	return 0;
}
static int repeats = 5, history = 20;
static const char *point_names[N_POINTS];

static double draw(const struct noise *nz)
{
	if (nz->heavy) {
		/* Student t(3), scaled to unit variance */
		double z = pg_rng_normal(&rng), c = 0;
		for (int i = 0; i < 3; i++) {
			double w = pg_rng_normal(&rng);
			c += w * w;
		}
		return z / sqrt(c / 3) / sqrt(3);
	}
	return pg_rng_normal(&rng);
}

static double per_metric(const double *v, double scaled, size_t m)
{
	return v ? v[m] : scaled * metrics[m].scale;
}

/* A log-uniform draw in [lo, hi]. */
static double log_uniform(double lo, double hi)
{
	return exp(log(lo) + pg_rng_uniform(&rng) * (log(hi) - log(lo)));
}

/* A relative change c in the metric's worse direction, on the log scale
 * the levels are kept in (worse positive). */
static double worse_by(size_t m, double c)
{
	return metrics[m].m->direction == PG_HIGHER_IS_BETTER ? -log1p(-c) : log1p(c);
}

/* The main branch as it moves: its level per point and metric (log, worse
 * direction positive). */
struct main_state {
	double level[N_POINTS][N_METRICS];
	int step_point; /* the point of a one-point step (noise.step_one) */
};

static void main_advance(struct main_state *s, const struct noise *nz)
{
	double walk = nz->drift * pg_rng_normal(&rng) + nz->creep;
	for (int p = 0; p < N_POINTS; p++)
		for (size_t m = 0; m < N_METRICS; m++)
			s->level[p][m] += walk;
}

/* A level step of main (noise.steps_*): half the points move, each of
 * their metrics with probability 1/2, by its own size and sign. */
static void main_step(struct main_state *s, const struct noise *nz)
{
	for (int p = 0; p < N_POINTS; p++) {
		if (pg_rng_uniform(&rng) < 0.5)
			continue;
		for (size_t m = 0; m < N_METRICS; m++) {
			double size;
			if (pg_rng_uniform(&rng) < 0.5)
				continue;
			size = log1p(log_uniform(nz->steps_min, nz->steps_max));
			s->level[p][m] += pg_rng_uniform(&rng) < 0.5 ? size : -size;
		}
	}
}

/* One job's repeats of every point and metric, in display units. only:
 * the points the job runs (NULL: all). */
struct job {
	double v[N_POINTS][N_METRICS][MAX_REPEATS];
	bool ran[N_POINTS];
};

static void run_job(struct job *j, const struct main_state *s, const struct noise *nz,
		    const double *extra, int n_rep, const bool *only)
{
	double common = draw(nz);
	double slow = pg_rng_uniform(&rng) < nz->slow_prob ? log1p(nz->slow) : 0;

	for (int p = 0; p < N_POINTS; p++) {
		double own = draw(nz), outlier = 0, cold = 0;
		if (nz->outlier_prob > 0 && pg_rng_uniform(&rng) < nz->outlier_prob) {
			outlier = nz->outlier_lo +
				  pg_rng_uniform(&rng) * (nz->outlier_hi - nz->outlier_lo);
			if (pg_rng_uniform(&rng) < 0.5)
				outlier = -outlier;
		}
		if (nz->cold_hi)
			cold = pg_rng_uniform(&rng);
		j->ran[p] = !only || only[p];
		if (!j->ran[p])
			continue;
		for (size_t m = 0; m < N_METRICS; m++) {
			double job_sd = per_metric(nz->job_m, nz->job_sd, m);
			double within = per_metric(nz->within_m, nz->within, m);
			double share = nz->share_m ? nz->share_m[m] : nz->point_share;
			double night = sqrt(job_sd * job_sd + within * within), spike = 0, x;
			double sign = metrics[m].m->direction == PG_HIGHER_IS_BETTER ? -1 : 1;
			double base = metrics[m].value * (1 + 0.15 * p);

			if (nz->spike_prob > 0 && metrics[m].spiky &&
			    pg_rng_uniform(&rng) < nz->spike_prob)
				spike = log1p(log_uniform(nz->spike_lo, nz->spike_hi));
			x = s->level[p][m] + slow +
			    job_sd * (sqrt(1 - share) * common + sqrt(share) * own) +
			    outlier * night + spike + (extra ? extra[p] : 0);
			for (int r = 0; r < n_rep; r++) {
				double y = x + within * draw(nz);
				if (r == 0 && nz->cold_hi)
					y += worse_by(m, nz->cold_lo[m] + cold * (nz->cold_hi[m] -
										  nz->cold_lo[m]));
				j->v[p][m][r] = base * exp(sign * y);
			}
		}
	}
}

static json_t *point_result(const struct job *j, int p, int n_rep)
{
	json_t *result = json_object(), *pg = json_object(), *reps = json_array();

	for (int r = 0; r < n_rep; r++) {
		json_t *one = json_object();
		for (size_t m = 0; m < N_METRICS; m++)
			json_object_set_new(one, metrics[m].m->key, json_real(j->v[p][m][r]));
		json_array_append_new(reps, one);
	}
	json_object_set_new(pg, "suite", json_string("serving"));
	json_object_set_new(pg, "test", json_string(point_names[p]));
	json_object_set_new(pg, "repeats", reps);
	json_object_set_new(result, "perfgate", pg);
	/* as perfgate run writes it: a cold first repeat flagged, left out of
	 * the samples the gate and the history read (results/cold.h) */
	pg_cold_apply(result, NULL);
	return result;
}

/* The run points of a job (results owned by the caller's array). */
static size_t job_points(struct pg_cmp_point *out, json_t **results, const struct job *j, int n_rep)
{
	size_t n = 0;
	for (int p = 0; p < N_POINTS; p++) {
		if (!j->ran[p])
			continue;
		results[n] = point_result(j, p, n_rep);
		out[n] = (struct pg_cmp_point){ point_names[p], PG_SUITE_SERVING,
						"ok",           results[n],
						NULL,           false };
		n++;
	}
	return n;
}

static void free_results(json_t **results, size_t n)
{
	for (size_t i = 0; i < n; i++)
		json_decref(results[i]);
}

/* A history record as `baseline record` writes it. */
static void add_record(struct pg_history *h, const struct job *j, int p, int k)
{
	struct pg_history_rec r;
	char commit[41], date[32];

	memset(&r, 0, sizeof(r));
	snprintf(commit, sizeof(commit), "%040d", k + 1);
	snprintf(date, sizeof(date), "2026-%02d-%02dT12:00:00Z", 1 + k / 28, 1 + k % 28);
	r.commit = pg_xstrdup(commit);
	r.date = pg_xstrdup(date);
	r.suite = PG_SUITE_SERVING;
	r.test = pg_xstrdup(point_names[p]);
	r.qps = NAN;
	r.repeats = repeats;
	r.metrics = json_object();
	for (size_t m = 0; m < N_METRICS; m++) {
		json_t *arr = json_array();
		for (int i = 0; i < repeats; i++)
			json_array_append_new(arr, json_real(j->v[p][m][i]));
		json_object_set_new(r.metrics, metrics[m].id, arr);
	}
	PG_ARRAY_PUSH(h->recs, h->n, h->cap, r);
}

/*
 * Main's own gate on job k against the records before it, as a nightly
 * judges itself; what it found regressed goes into job k's records (every
 * completed run of main is recorded with its verdict: docs/gate.md).
 */
static void judge_main_job(struct pg_history *hs, const struct job *j, int k,
			   const struct pg_policy *policy)
{
	struct pg_baseline b = PG_BASELINE_INIT;
	struct pg_comparison c;
	struct pg_cmp_point pts[N_POINTS];
	json_t *results[N_POINTS], *reg;
	size_t n;

	if (k < 2)
		return;
	b.gpu = pg_xstrdup("H100");
	b.kind = pg_xstrdup("git");
	for (int p = 0; p < N_POINTS; p++)
		hs[p].n--; /* the records before job k */
	pg_history_baseline_build(&b, hs, N_POINTS, NULL, policy);
	for (int p = 0; p < N_POINTS; p++)
		hs[p].n++;
	pg_baseline_sort(&b);
	n = job_points(pts, results, j, repeats);
	pg_compare(&c, policy, &b, pts, n, NULL, 0, NULL);
	reg = pg_comparison_regressed(&c);
	for (int p = 0; p < N_POINTS; p++) {
		json_t *ids = json_object_get(reg, point_names[p]);
		struct pg_history_rec *r = &hs[p].recs[hs[p].n - 1];
		if (json_is_string(ids) && json_string_length(ids))
			r->regressed = pg_xstrdup(json_string_value(ids));
	}
	json_decref(reg);
	free_results(results, n);
	pg_comparison_release(&c);
	pg_baseline_release(&b);
}

/* --why: each failing step's failing rows on stderr, with the history
 * behind each (its jobs' values / segments): what makes a profile fail */
static bool why;

/* Draw a history (or a published job) and the state of main after it. */
static void make_baseline(struct pg_baseline *base, struct main_state *s, const struct scenario *sc,
			  const struct pg_policy *policy)
{
	static struct job j;
	struct pg_history hs[N_POINTS];
	int step_point = (int)pg_rng_range(&rng, 0, N_POINTS - 1), next_step;

	memset(s, 0, sizeof(*s));
	memset(hs, 0, sizeof(hs));
	memset(base, 0, sizeof(*base));
	base->gpu = pg_xstrdup("H100");
	if (sc->base == BASE_PUBLISHED) {
		base->kind = pg_xstrdup("thresholds");
		run_job(&j, s, &sc->noise, NULL, 1, NULL);
		for (int p = 0; p < N_POINTS; p++) {
			struct pg_base_point *bp = pg_baseline_add(base, point_names[p],
								   PG_SUITE_SERVING);
			for (size_t m = 0; m < N_METRICS; m++)
				pg_base_point_add_metric(bp, metrics[m].m, j.v[p][m][0], NULL, 0);
		}
		pg_baseline_sort(base);
		return;
	}
	base->kind = pg_xstrdup("git");
	s->step_point = step_point;
	next_step = sc->noise.steps_hi ? (int)pg_rng_range(&rng, 0, sc->noise.steps_hi - 1) : -1;
	for (int k = 0; k < history; k++) {
		main_advance(s, &sc->noise);
		if (k == next_step) {
			if (why)
				fprintf(stderr, "main's level steps at job %d of %d\n", k, history);
			main_step(s, &sc->noise);
			next_step += (int)pg_rng_range(&rng, sc->noise.steps_lo,
						       sc->noise.steps_hi);
		}
		if (sc->noise.step_at && k == history - sc->noise.step_at)
			for (int p = 0; p < N_POINTS; p++)
				for (size_t m = 0; m < N_METRICS; m++)
					if (!sc->noise.step_one || p == step_point)
						s->level[p][m] += log1p(sc->noise.step);
		run_job(&j, s, &sc->noise, NULL, repeats, NULL);
		for (int p = 0; p < N_POINTS; p++) {
			if (!hs[p].point)
				hs[p].point = pg_xstrdup(point_names[p]);
			add_record(&hs[p], &j, p, k);
		}
		if (sc->noise.steps_hi)
			judge_main_job(hs, &j, k, policy);
	}
	pg_history_baseline_build(base, hs, N_POINTS, NULL, policy);
	for (int p = 0; p < N_POINTS; p++)
		pg_history_release(&hs[p]);
	pg_baseline_sort(base);
}

/* Per change: steps failed, steps re-run, points re-run, over B x M PRs;
 * per baseline: its own failure count, for the clustered interval. */
struct cell {
	size_t fails, reruns, points_rerun, trials;
	double *per_base; /* failure share per baseline */
	double *per_base_rerun;
};

static bool step_fails(const struct pg_comparison *c)
{
	return c->outcome == PG_OUTCOME_FAIL;
}

/* --calibrate: how often the first run's p-values fall under nominal
 * levels on clean PRs (point pairs per metric class, whole-run changes):
 * a calibrated test has the level's share. */
static bool calibrate;
static const double cal_levels[] = { 0.05, 0.01, 0.001, 0.0001 };
static size_t cal_hits[4][5], cal_n[4];
/* ... and how often the evidence's 95% interval (pg_cmp_side.ci_low,
 * ci_high) holds the true change: 0 on clean PRs, the changed point's
 * change on PRs that change one point */
static size_t cov_hits[4], cov_n[4], cov_one_hits[4], cov_one_n[4];

static int metric_kind(const struct pg_metric *m)
{
	return !m ? -1 : m->cls == PG_CLASS_THROUGHPUT ? 0 : m->cls == PG_CLASS_TAIL ? 2 : 1;
}

static bool covers(const struct pg_cmp_side *sd, double truth)
{
	return sd->ci_low <= truth && truth <= sd->ci_high;
}

/* The changed point's rows of a PR that changed one point by delta (worse). */
static void coverage_count(const struct pg_comparison *c, const char *point, double delta)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct pg_cmp_row *r = &c->rows[i];
		int k = metric_kind(r->metric);
		double truth;
		if (k < 0 || strcmp(r->point, point) || !isfinite(r->first.ci_low))
			continue;
		truth = r->metric->direction == PG_HIGHER_IS_BETTER ? 1 / (1 + delta) - 1 : delta;
		cov_one_n[k]++;
		cov_one_hits[k] += covers(&r->first, truth);
	}
}

static void calibrate_count(const struct pg_comparison *c)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct pg_cmp_row *r = &c->rows[i];
		int k = metric_kind(r->metric);
		if (k < 0 || isnan(r->first.p_value))
			continue;
		cal_n[k]++;
		for (int l = 0; l < 4; l++)
			cal_hits[k][l] += r->first.p_value < cal_levels[l];
		if (isfinite(r->first.ci_low)) {
			cov_n[k]++;
			cov_hits[k] += covers(&r->first, 0);
		}
	}
	for (size_t i = 0; i < c->n_commons; i++) {
		if (isnan(c->commons[i].first.p_value))
			continue;
		cal_n[3]++;
		for (int l = 0; l < 4; l++)
			cal_hits[3][l] += c->commons[i].first.p_value < cal_levels[l];
		if (isfinite(c->commons[i].first.ci_low)) {
			cov_n[3]++;
			cov_hits[3] += covers(&c->commons[i].first, 0);
		}
	}
}

static void calibrate_print(void)
{
	static const char *const what[] = { "throughput pairs", "median pairs", "p99 pairs",
					    "whole-run changes" };
	printf("\n| first run, clean PRs | n | p < 5%% | p < 1%% | p < 0.1%% | p < 0.01%% |\n"
	       "|---|--:|--:|--:|--:|--:|\n");
	for (int k = 0; k < 4; k++) {
		printf("| %s | %zu |", what[k], cal_n[k]);
		for (int l = 0; l < 4; l++)
			printf(" %.3f%% |",
			       cal_n[k] ? 100.0 * (double)cal_hits[k][l] / (double)cal_n[k] : 0);
		printf("\n");
	}
	printf("\n| first run: the 95%% interval holds the true change | clean PRs | n | "
	       "the changed point of PRs that change one | n |\n|---|--:|--:|--:|--:|\n");
	for (int k = 0; k < 4; k++)
		printf("| %s | %.1f%% | %zu | %.1f%% | %zu |\n", what[k],
		       cov_n[k] ? 100.0 * (double)cov_hits[k] / (double)cov_n[k] : 0, cov_n[k],
		       cov_one_n[k] ? 100.0 * (double)cov_one_hits[k] / (double)cov_one_n[k] : 0,
		       cov_one_n[k]);
	memset(cal_hits, 0, sizeof(cal_hits));
	memset(cal_n, 0, sizeof(cal_n));
	memset(cov_hits, 0, sizeof(cov_hits));
	memset(cov_n, 0, sizeof(cov_n));
	memset(cov_one_hits, 0, sizeof(cov_one_hits));
	memset(cov_one_n, 0, sizeof(cov_one_n));
}

static void why_failed(const struct pg_comparison *c, const struct pg_baseline *base, double delta)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct pg_cmp_row *r = &c->rows[i];
		if (r->outcome != PG_OUTCOME_FAIL)
			continue;
		fprintf(stderr,
			"PR %+.1f%%: %s %s: %s, change %+.2f%% (re-run %+.2f%%), tolerance %.2f%%, "
			"sd %.2f%%, p %.3g, %zu runs%s\n",
			100 * delta, r->point, r->metric ? r->metric->id : "(point)",
			pg_verdict_name(r->verdict), 100 * r->change, 100 * r->rerun.effect,
			100 * r->tolerance, 100 * r->noise, r->p_value, r->n_baseline,
			r->known ? ", main's known change" : "");
		for (size_t b = 0; b < base->n; b++)
			for (size_t k = 0; k < base->points[b].n_metrics; k++) {
				const struct pg_base_metric *bm = &base->points[b].metrics[k];
				if (strcmp(base->points[b].name, r->point) ||
				    bm->metric != r->metric)
					continue;
				fprintf(stderr, "  history:");
				for (size_t x = 0; x < bm->n_span; x++)
					fprintf(stderr, " %.4g/%d", bm->span[x], bm->span_seg[x]);
				fprintf(stderr, "; this run %.4g\n", r->current);
			}
	}
	for (size_t i = 0; i < c->n_commons; i++)
		if (c->commons[i].outcome == PG_OUTCOME_FAIL)
			fprintf(stderr, "PR %+.1f%%: the whole run, %s: %+.2f%% (spread %.2f%%)\n",
				100 * delta, c->commons[i].metric->id,
				100 * c->commons[i].first.effect, 100 * c->commons[i].spread);
}

/* every PR is a pull request's run: main's newest level is main's doing */
static const struct pg_compare_opts pr_opts = { .pull_request = true };

static void pr(const struct scenario *sc, const struct pg_policy *policy,
	       const struct pg_baseline *base, const struct main_state *main_now,
	       const struct change *ch, struct cell *cell, size_t *fails, size_t *reruns)
{
	static struct job first, again;
	struct main_state s = *main_now;
	double extra[N_POINTS] = { 0 };
	struct pg_cmp_point pts[N_POINTS], rpts[N_POINTS];
	json_t *res[N_POINTS], *rres[N_POINTS];
	size_t n, rn = 0;
	struct pg_comparison cmp;
	bool rerun[N_POINTS] = { false };
	int at = (int)pg_rng_range(&rng, 0, N_POINTS - 1);

	if (ch->at_step)
		at = s.step_point;
	/* the PR branches off the newest main: one more step of main's walk */
	main_advance(&s, &sc->noise);
	for (int p = 0; p < N_POINTS; p++)
		if (ch->all || p == at)
			extra[p] = log1p(ch->delta);
	run_job(&first, &s, &sc->noise, extra, repeats, NULL);
	n = job_points(pts, res, &first, repeats);
	pg_compare(&cmp, policy, base, pts, n, NULL, 0, &pr_opts);
	if (calibrate && ch->delta == 0)
		calibrate_count(&cmp);
	else if (calibrate && !ch->all)
		coverage_count(&cmp, point_names[at], ch->delta);
	if (sc->confirm && cmp.rerun.n) {
		for (size_t i = 0; i < cmp.rerun.n; i++)
			for (int p = 0; p < N_POINTS; p++)
				if (!strcmp(cmp.rerun.v[i], point_names[p]))
					rerun[p] = true;
		pg_comparison_release(&cmp);
		run_job(&again, &s, &sc->noise, extra, repeats, rerun);
		rn = job_points(rpts, rres, &again, repeats);
		cell->reruns++;
		(*reruns)++;
		cell->points_rerun += rn;
		pg_compare(&cmp, policy, base, pts, n, rpts, rn, &pr_opts);
	}
	if (step_fails(&cmp) && why)
		why_failed(&cmp, base, ch->delta);
	if (step_fails(&cmp)) {
		cell->fails++;
		(*fails)++;
	}
	cell->trials++;
	pg_comparison_release(&cmp);
	free_results(res, n);
	free_results(rres, rn);
}

/* A rate over clustered trials: the mean of the baselines' rates, with a
 * Wilson interval on the effective number of independent trials (PRs that
 * share a baseline are correlated: the design effect of the clustering
 * puts n_eff between the number of baselines and the number of PRs). */
struct rate {
	double mean, lo, hi;
};

static struct rate clustered_rate(const double *per_base, size_t n_base, size_t per)
{
	struct rate r = { 0, 0, 1 };
	double var = 0, n_eff, most = (double)(n_base * per);

	for (size_t i = 0; i < n_base; i++)
		r.mean += per_base[i];
	r.mean /= (double)n_base;
	for (size_t i = 0; i < n_base; i++)
		var += (per_base[i] - r.mean) * (per_base[i] - r.mean);
	var /= n_base > 1 ? (double)(n_base - 1) : 1;
	n_eff = var > 0 ? r.mean * (1 - r.mean) / (var / (double)n_base) : most;
	n_eff = fmax((double)n_base, fmin(n_eff, most));
	pg_cmpstat_wilson((size_t)llround(r.mean * n_eff), (size_t)llround(n_eff), 1.959964, &r.lo,
			  &r.hi);
	return r;
}

static void print_rate(const double *per_base, size_t n_base, size_t per)
{
	struct rate r = clustered_rate(per_base, n_base, per);
	printf(" %.1f%% (%.1f–%.1f) |", 100 * r.mean, 100 * r.lo, 100 * r.hi);
}

static int cmp_desc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x < y) - (x > y);
}

/* Every PR of every baseline of a scenario, for the changes chs[0..n):
 * cells[c] gets change c's counts (release with free_cells). */
static void simulate(const struct scenario *sc, const struct pg_policy *policy, long bases,
		     long prs, const struct change *chs, size_t n, struct cell *cells)
{
	memset(cells, 0, n * sizeof(*cells));
	for (size_t c = 0; c < n; c++) {
		cells[c].per_base = pg_xcalloc((size_t)bases, sizeof(double));
		cells[c].per_base_rerun = pg_xcalloc((size_t)bases, sizeof(double));
	}
	for (long b = 0; b < bases; b++) {
		struct pg_baseline base;
		struct main_state s;
		make_baseline(&base, &s, sc, policy);
		for (size_t c = 0; c < n; c++) {
			size_t fails = 0, reruns = 0;
			for (long t = 0; t < prs; t++)
				pr(sc, policy, &base, &s, &chs[c], &cells[c], &fails, &reruns);
			cells[c].per_base[b] = (double)fails / (double)prs;
			cells[c].per_base_rerun[b] = (double)reruns / (double)prs;
		}
		pg_baseline_release(&base);
	}
}

static void free_cells(struct cell *cells, size_t n)
{
	for (size_t c = 0; c < n; c++) {
		free(cells[c].per_base);
		free(cells[c].per_base_rerun);
	}
}

static void print_header(const char *title)
{
	printf("\n#### %s\n\n", title);
	printf("| PR | steps failed | steps re-run | points re-run | worst 10%% of baselines |\n");
	printf("|---|--:|--:|--:|--:|\n");
}

static void print_row(const struct change *ch, const struct cell *cell, long bases, long prs)
{
	double *sorted = pg_xmalloc((size_t)bases * sizeof(double)), tail = 0;
	size_t k = (size_t)bases / 10 ? (size_t)bases / 10 : 1;

	memcpy(sorted, cell->per_base, (size_t)bases * sizeof(double));
	qsort(sorted, (size_t)bases, sizeof(double), cmp_desc);
	for (size_t i = 0; i < k; i++)
		tail += sorted[i];
	free(sorted);
	printf("| %s |", ch->label);
	print_rate(cell->per_base, (size_t)bases, (size_t)prs);
	print_rate(cell->per_base_rerun, (size_t)bases, (size_t)prs);
	printf(" %.1f%% |", 100.0 * (double)cell->points_rerun / ((double)cell->trials * N_POINTS));
	printf(" %.1f%% |\n", 100 * tail / (double)k);
}

/* The scenario with --noise applied. */
static struct scenario with_noise_sets(const struct scenario *scenario)
{
	struct scenario copy = *scenario;
	for (int i = 0; i < n_noise_sets; i++)
		apply_noise(&copy.noise, noise_sets[i]);
	return copy;
}

/* Runs a scenario; returns how many targets it misses (only the default
 * scenario has targets; margin: the interval, not only the estimate, must
 * clear them). */
static int run_scenario(const struct scenario *scenario, const struct pg_policy *policy, long bases,
			long prs, bool targets)
{
	struct scenario sc = with_noise_sets(scenario);
	struct cell cells[N_CHANGES];
	int missed = 0;
	/* --check needs only the rows with targets */
	size_t n_changes = targets ? 3 : N_CHANGES;

	simulate(&sc, policy, bases, prs, changes, n_changes, cells);
	print_header(sc.title);
	for (size_t c = 0; c < n_changes; c++)
		print_row(&changes[c], &cells[c], bases, prs);
	if (targets) {
		/* <= 5% of clean steps fail; one point 5% worse caught >= 90%,
		 * 10% worse >= 99% */
		if (clustered_rate(cells[0].per_base, (size_t)bases, (size_t)prs).hi > 0.05)
			missed++;
		if (clustered_rate(cells[1].per_base, (size_t)bases, (size_t)prs).lo < 0.90)
			missed++;
		if (clustered_rate(cells[2].per_base, (size_t)bases, (size_t)prs).mean < 0.99)
			missed++;
	}
	free_cells(cells, n_changes);
	if (calibrate)
		calibrate_print();
	fflush(stdout);
	return missed;
}

/* ------------------------------------------------------------------ */
/* Noise profiles from real series (--profile)                          */

struct profile {
	const char *name;
	const char *title;
	struct noise noise;
	double catch5; /* target: one point 5% worse caught at least this often */
	double catch2; /* one point 2% worse (0: no target) */
};

/* clang-format off */
static const struct profile profiles[] = {
	{ "model", "today's model: job offset 1.5% (60% of it per point), within 0.5%, "
	  "10% of jobs 5% slow, drift 0.3% per job",
	  { ISSUE_NOISE, .point_share = 0.6 }, 0.90, 0 },
	{ "dedicated", "dedicated node: job 0.2-0.3% (p99s 1-3%), within 0.05-0.25%, 8% of "
	  "points' nights 3-8 sd out, main's level steps 2-50% every 10-20 jobs, cold first "
	  "repeats (TTFT +7-70%, throughput up to -11%), 1% one-night p99 spikes (+10-170%)",
	  { .job_m = np_dedicated_job, .within_m = np_dedicated_within,
	    .share_m = np_dedicated_share, .outlier_prob = NP_DEDICATED_OUTLIER_PROB,
	    .outlier_lo = NP_DEDICATED_OUTLIER_LO, .outlier_hi = NP_DEDICATED_OUTLIER_HI,
	    .cold_lo = np_dedicated_cold_lo, .cold_hi = np_dedicated_cold_hi,
	    .spike_prob = 0.01, .spike_lo = 0.10, .spike_hi = 1.70,
	    .steps_lo = 10, .steps_hi = 20, .steps_min = 0.02, .steps_max = 0.50 }, 0.95, 0.80 },
	{ "fleet", "shared fleet: job 1% (median TTFT 3%, TPOT 1%, p99 TTFT 6%, other p99s "
	  "2-3%; 60% of it per point), within 0.5%, 10% of jobs 5% slow, drift 0.3% per job",
	  { .job_m = np_fleet_job, .point_share = NP_FLEET_SHARE, .within = 0.005, .slow_prob = 0.10,
	    .slow = 0.05, .drift = 0.003 }, 0.90, 0 },
};
/* clang-format on */
#define N_PROFILES (sizeof(profiles) / sizeof(profiles[0]))

/* clang-format off */
static const struct change profile_changes[] = {
	{ "clean", 0, false, false },
	{ "one point 5% worse", 0.05, false, false },
	{ "one point 2% worse", 0.02, false, false },
	{ "one point 5% worse, two runs after a 5% step of it on main", 0.05, false, true },
};
/* clang-format on */
#define N_PROFILE_CHANGES (sizeof(profile_changes) / sizeof(profile_changes[0]))

/* One target's line: PASS or FAIL on the estimate, and whether the 95%
 * interval clears it too; returns 1 when the interval does not. */
static int target(const char *what, const struct cell *cell, long bases, long prs, double goal,
		  bool at_most)
{
	struct rate r = clustered_rate(cell->per_base, (size_t)bases, (size_t)prs);
	bool met = at_most ? r.mean <= goal : r.mean >= goal;
	bool clears = at_most ? r.hi <= goal : r.lo >= goal;

	printf("- %s %s %.0f%%: %.1f%% (%.1f–%.1f): **%s**%s\n", what,
	       at_most ? "at most" : "at least", 100 * goal, 100 * r.mean, 100 * r.lo, 100 * r.hi,
	       met ? "PASS" : "FAIL",
	       met ? clears ? " (the interval clears it)" : " (the interval does not clear it)"
		   : "");
	return !clears;
}

/* A profile: its three PRs on its noise, and the second regression on a
 * history whose last 2 jobs hold a 5% step of the PR's point (the history
 * follows main: every completed main run is recorded). Returns the targets
 * whose interval does not clear them. */
static int run_profile(const struct profile *prof, const struct pg_policy *policy, long bases,
		       long prs)
{
	struct scenario sc = with_noise_sets(
		&(struct scenario){ prof->name, prof->title, BASE_GIT, true, prof->noise });
	struct scenario stepped = sc;
	struct cell cells[N_PROFILE_CHANGES];
	int missed = 0;

	stepped.noise.step_at = 2;
	stepped.noise.step = 0.05;
	stepped.noise.step_one = true;
	simulate(&sc, policy, bases, prs, profile_changes, N_PROFILE_CHANGES - 1, cells);
	simulate(&stepped, policy, bases, prs, &profile_changes[N_PROFILE_CHANGES - 1], 1,
		 &cells[N_PROFILE_CHANGES - 1]);
	print_header(sc.title);
	for (size_t c = 0; c < N_PROFILE_CHANGES; c++)
		print_row(&profile_changes[c], &cells[c], bases, prs);
	printf("\nTargets (`%s`):\n\n", prof->name);
	missed += target("clean steps fail", &cells[0], bases, prs, 0.05, true);
	missed += target("one point 5% worse caught", &cells[1], bases, prs, prof->catch5, false);
	if (prof->catch2 > 0)
		missed += target("one point 2% worse caught", &cells[2], bases, prs, prof->catch2,
				 false);
	missed += target("the second regression (5%, two runs after a step) caught", &cells[3],
			 bases, prs, 0.90, false);
	free_cells(cells, N_PROFILE_CHANGES);
	if (calibrate)
		calibrate_print();
	fflush(stdout);
	return missed;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: gate-sim [--baselines B] [--prs M] [--seed S] [--repeats N] [--history K]\n"
		"                [--scenario NAME | --profile NAME|all] [--thresholds FILE]\n"
		"                [--noise KEY=VALUE]... [--check] [--calibrate] [--why]\n"
		"noise keys: job_sd point_share within slow_prob slow drift creep heavy\n"
		"scenarios:");
	for (size_t i = 0; i < N_SCENARIOS; i++)
		fprintf(stderr, " %s", scenarios[i].name);
	fprintf(stderr, "\nprofiles:");
	for (size_t i = 0; i < N_PROFILES; i++)
		fprintf(stderr, " %s", profiles[i].name);
	fprintf(stderr, " all\n");
	exit(2);
}

int main(int argc, char **argv)
{
	long bases = 200, prs = 25;
	unsigned long long seed = 1;
	const char *thresholds = NULL, *only = NULL, *profile = NULL;
	int missed = 0;
	bool check = false;
	struct pg_policy policy;
	static char names[N_POINTS][64];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--baselines") && i + 1 < argc)
			bases = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--prs") && i + 1 < argc)
			prs = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--repeats") && i + 1 < argc)
			repeats = (int)strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--history") && i + 1 < argc)
			history = (int)strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--scenario") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "--thresholds") && i + 1 < argc)
			thresholds = argv[++i];
		else if (!strcmp(argv[i], "--profile") && i + 1 < argc)
			profile = argv[++i];
		else if (!strcmp(argv[i], "--check"))
			check = true;
		else if (!strcmp(argv[i], "--calibrate"))
			calibrate = true;
		else if (!strcmp(argv[i], "--why"))
			why = true;
		else if (!strcmp(argv[i], "--noise") && i + 1 < argc && n_noise_sets < 16) {
			struct noise probe = { 0 };
			noise_sets[n_noise_sets++] = argv[++i];
			if (apply_noise(&probe, argv[i]))
				usage();
		} else
			usage();
	}
	if (bases < 2 || prs < 1 || repeats < 1 || repeats > MAX_REPEATS || history < 1 ||
	    history > MAX_HISTORY || (profile && only))
		usage();
	if (profile && strcmp(profile, "all")) {
		size_t i = 0;
		while (i < N_PROFILES && strcmp(profile, profiles[i].name))
			i++;
		if (i == N_PROFILES)
			usage();
	}
	if (thresholds) {
		struct pg_error err = PG_ERROR_INIT;
		struct pg_baseline ignored = PG_BASELINE_INIT;
		int rc = pg_thresholds_load(thresholds, &policy, &ignored, &err);
		pg_baseline_release(&ignored);
		if (rc) {
			fprintf(stderr, "gate-sim: %s\n", err.msg);
			pg_policy_release(&policy);
			return 2;
		}
	} else {
		pg_policy_init(&policy);
	}
	for (size_t i = 0; i < N_METRICS; i++)
		metrics[i].m = pg_metric_by_id(PG_SUITE_SERVING, metrics[i].id);
	for (int p = 0; p < N_POINTS; p++) {
		snprintf(names[p], sizeof(names[p]), "serving_sim%02d_qps_inf", p);
		point_names[p] = names[p];
	}
	pg_rng_seed(&rng, seed);

	printf("gate-sim: %ld baselines x %ld PRs per cell (seed %llu); %d points x %zu metrics, "
	       "%d repeats;\nhistory of %d jobs; policy: %s.\n",
	       bases, prs, seed, N_POINTS, N_METRICS, repeats, history,
	       thresholds ? thresholds : "the defaults");
	for (size_t i = 0; profile && i < N_PROFILES; i++)
		if (!strcmp(profile, "all") || !strcmp(profile, profiles[i].name)) {
			/* each profile from the seed: the same figures alone or in all */
			pg_rng_seed(&rng, seed);
			missed += run_profile(&profiles[i], &policy, bases, prs);
		}
	for (size_t s = 0; !profile && s < N_SCENARIOS; s++) {
		bool is_default = s == 0;
		if (only ? strcmp(only, scenarios[s].name) : check && !is_default)
			continue;
		missed += run_scenario(&scenarios[s], &policy, bases, prs, check && is_default);
	}
	pg_policy_release(&policy);
	if (check && missed) {
		printf("\ngate-sim: the policy misses %d target%s\n", missed,
		       missed == 1 ? "" : "s");
		return 1;
	}
	if (check)
		printf("\ngate-sim: every target met\n");
	return 0;
}
