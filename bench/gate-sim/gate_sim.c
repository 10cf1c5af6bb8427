/*
 * gate-sim: how often does the gate fail a change that did nothing (false
 * alarms), and how often does it catch a real regression (power)?
 *
 * It runs perfgate's own decision code -- pg_compare with the policy's
 * rules, floors, escalation, the Mann-Whitney guard and confirmation
 * pooling -- on synthetic noisy runs of one serving test point, thousands of
 * times per cell, and prints each failure rate with its 95% Wilson interval
 * as markdown tables.
 *
 *   build/bench/gate-sim                       every scenario, 20,000 trials
 *   build/bench/gate-sim --check               exit 1 unless the defaults
 *                                              meet the targets (docs/gate.md)
 *   build/bench/gate-sim --thresholds thresholds/H100.yml --scenario published
 *
 * Noise model (multiplicative, log-normal): every job (a CI step on a GPU)
 * has its own offset, sd `session`; every repeat in a job varies around it
 * with sd `within`. A regression of delta makes the candidate worse by the
 * factor (1 + delta) in the metric's worse direction, in every metric at
 * once; each metric's rate is its own, "any metric" is the test's.
 *
 * Baselines, as production builds them:
 *   git        the last K recorded main runs, each the median of its
 *              repeats; noise from their spread (compare --baseline git)
 *   recorded   one run with its repeats (baseline update --from <results>)
 *   published  one figure per metric, no repeats (baseline update --from
 *              <report>: the committed thresholds files)
 * The candidate runs `repeats` repeats; with confirmation, a test the first
 * run flags runs again and is decided on both runs pooled.
 */
#include "base/alloc.h"
#include "gate/compare.h"
#include "gate/compare_stats.h"
#include "base/error.h"
#include "results/metrics.h"
#include "base/rng.h"
#include "baseline/thresholds_io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sim_metric {
	const char *id;
	double value;   /* baseline level, display units */
	double within;  /* repeat-to-repeat relative sd */
	double session; /* job-to-job relative sd */
	const struct pg_metric *m;
};

/* A serving point's gating metrics, median ITL (it gates where reports
 * lack TPOT) and the p99s that escalate. Noise: the figures for
 * throughput (2% + 1%) and p99 (6% + 2%); docs/design/gate-policy.md §2
 * for the medians. */
/* clang-format off */
static struct sim_metric metrics[] = {
	{ "output_throughput", 2400, 0.02, 0.01, NULL },
	{ "median_ttft_ms", 100, 0.03, 0.015, NULL },
	{ "median_tpot_ms", 30, 0.025, 0.01, NULL },
	{ "median_itl_ms", 30, 0.025, 0.01, NULL },
	{ "p99_ttft_ms", 250, 0.06, 0.02, NULL },
	{ "p99_tpot_ms", 40, 0.06, 0.02, NULL },
	{ "p99_itl_ms", 45, 0.06, 0.02, NULL },
};
/* clang-format on */
#define N_METRICS   (sizeof(metrics) / sizeof(metrics[0]))
#define MAX_REPEATS 32

static const double deltas[] = { 0, 0.02, 0.05, 0.10, 0.15 };
#define N_DELTAS (sizeof(deltas) / sizeof(deltas[0]))

enum baseline_kind { BASE_GIT, BASE_RECORDED, BASE_PUBLISHED };

struct scenario {
	const char *name;
	const char *title;
	enum baseline_kind base;
	bool confirm;
	double noise_scale; /* multiplies every sd */
	double correlation; /* share of the noise all metrics have in common */
};

/* clang-format off */
static const struct scenario scenarios[] = {
	{ "git", "git baseline (last K main runs), confirmation re-run: the default", BASE_GIT, true, 1, 0 },
	{ "git-single", "git baseline, first run only (no confirmation)", BASE_GIT, false, 1, 0 },
	{ "git-correlated", "git baseline, confirmation, metrics moving together (correlation 0.8)",
	  BASE_GIT, true, 1, 0.8 },
	{ "git-noisy", "git baseline, confirmation, a GPU twice as noisy as assumed", BASE_GIT, true, 2, 0 },
	{ "recorded", "thresholds baseline from one recorded run (5 repeats), confirmation", BASE_RECORDED,
	  true, 1, 0 },
	{ "published", "thresholds baseline from one published figure (no repeats), confirmation",
	  BASE_PUBLISHED, true, 1, 0 },
};
/* clang-format on */

static struct pg_rng rng;

/* Normal draws for one job: [0] the job's offset, [1..] its repeats. A
 * share `correlation` of each is common to every metric: a slow job or
 * repeat is slow everywhere (throughput down, latencies up). */
struct job_noise {
	double z[MAX_REPEATS + 1];
};

static void draw_common(struct job_noise *common, int repeats)
{
	for (int r = 0; r <= repeats; r++)
		common->z[r] = pg_rng_normal(&rng);
}

static void job(const struct sim_metric *sm, const struct scenario *sc,
		const struct job_noise *common, double delta, int repeats, double *out)
{
	double a = sqrt(sc->correlation), b = sqrt(1 - sc->correlation);
	double sign = sm->m->direction == PG_HIGHER_IS_BETTER ? -1 : 1;
	double worse = sm->m->direction == PG_HIGHER_IS_BETTER ? 1 / (1 + delta) : 1 + delta;
	double zs = a * sign * common->z[0] + b * pg_rng_normal(&rng);
	double level = sm->value * worse * exp(sc->noise_scale * sm->session * zs);

	for (int r = 0; r < repeats; r++) {
		double zw = a * sign * common->z[r + 1] + b * pg_rng_normal(&rng);
		out[r] = level * exp(sc->noise_scale * sm->within * zw);
	}
}

static json_t *run_result(const struct scenario *sc, double delta, int repeats)
{
	json_t *result = json_object(), *pg = json_object(), *reps = json_array();
	double values[N_METRICS][MAX_REPEATS];
	struct job_noise common;

	draw_common(&common, repeats);
	for (size_t i = 0; i < N_METRICS; i++)
		job(&metrics[i], sc, &common, delta, repeats, values[i]);
	for (int r = 0; r < repeats; r++) {
		json_t *one = json_object();
		for (size_t i = 0; i < N_METRICS; i++)
			json_object_set_new(one, metrics[i].m->key, json_real(values[i][r]));
		json_array_append_new(reps, one);
	}
	json_object_set_new(pg, "suite", json_string("serving"));
	json_object_set_new(pg, "repeats", reps);
	json_object_set_new(result, "perfgate", pg);
	return result;
}

static void baseline(struct pg_baseline *base, const struct scenario *sc, int repeats, int history)
{
	struct pg_base_point *bp = pg_baseline_add(base, "sim_qps_inf", PG_SUITE_SERVING);
	double values[N_METRICS][MAX_REPEATS], medians[N_METRICS][256];
	int runs = sc->base == BASE_GIT ? history : 1;
	int n = sc->base == BASE_PUBLISHED ? 1 : repeats;

	for (int k = 0; k < runs; k++) {
		struct job_noise common;
		draw_common(&common, n);
		for (size_t i = 0; i < N_METRICS; i++) {
			job(&metrics[i], sc, &common, 0, n, values[i]);
			medians[i][k] = pg_cmpstat_median(values[i], (size_t)n);
		}
	}
	for (size_t i = 0; i < N_METRICS; i++) {
		if (sc->base == BASE_GIT)
			pg_base_point_add_runs(bp, metrics[i].m, medians[i], (size_t)runs);
		else
			pg_base_point_add_metric(bp, metrics[i].m, NAN, values[i], (size_t)n);
	}
}

struct cell {
	size_t fails[N_METRICS];
	size_t any;
	size_t reruns;
};

static void trial(const struct scenario *sc, const struct pg_policy *policy, int repeats,
		  int history, double delta, struct cell *cell)
{
	struct pg_baseline base = PG_BASELINE_INIT;
	struct pg_comparison cmp;
	struct pg_cmp_point run = { "sim_qps_inf", PG_SUITE_SERVING, "ok", NULL, NULL };
	struct pg_cmp_point again = run;
	json_t *first, *second = NULL;
	bool any = false;

	base.kind = pg_xstrdup(sc->base == BASE_GIT ? "git" : "thresholds");
	baseline(&base, sc, repeats, history);
	first = run_result(sc, delta, repeats);
	run.result = first;
	pg_compare(&cmp, policy, &base, &run, 1, NULL, 0, NULL);
	if (sc->confirm && cmp.rerun.n) {
		pg_comparison_release(&cmp);
		cell->reruns++;
		second = run_result(sc, delta, repeats);
		again.result = second;
		pg_compare(&cmp, policy, &base, &run, 1, &again, 1, NULL);
	}
	for (size_t r = 0; r < cmp.n; r++) {
		if (cmp.rows[r].outcome != PG_OUTCOME_FAIL)
			continue;
		for (size_t i = 0; i < N_METRICS; i++)
			if (cmp.rows[r].metric == metrics[i].m)
				cell->fails[i]++;
		any = true;
	}
	cell->any += any;
	pg_comparison_release(&cmp);
	json_decref(first);
	json_decref(second);
	pg_baseline_release(&base);
}

static double rate(size_t k, long n)
{
	return (double)k / (double)n;
}

static void print_rate(size_t k, long trials)
{
	double lo, hi;
	pg_cmpstat_wilson(k, (size_t)trials, 1.959964, &lo, &hi);
	printf(" %.1f%% (%.1f–%.1f) |", 100 * rate(k, trials), 100 * lo, 100 * hi);
}

static void rule_text(char *out, size_t size, const struct pg_rule *r)
{
	if (r->gate)
		snprintf(out, size, "gate %g%%", 100 * r->tolerance);
	else if (r->escalate > 0)
		snprintf(out, size, "fails > %g%%", 100 * fmax(r->escalate, r->tolerance));
	else
		snprintf(out, size, "warn only");
}

/* Runs a scenario; returns how many of the targets it misses (only the
 * default scenario has targets). */
static int run_scenario(const struct scenario *sc, const struct pg_policy *policy, long trials,
			int repeats, int history, bool targets)
{
	struct cell cells[N_DELTAS];
	int missed = 0;

	memset(cells, 0, sizeof(cells));
	for (size_t d = 0; d < N_DELTAS; d++)
		for (long t = 0; t < trials; t++)
			trial(sc, policy, repeats, history, deltas[d], &cells[d]);

	printf("\n#### %s\n\n", sc->title);
	printf("| metric | rule | false alarms |");
	for (size_t d = 1; d < N_DELTAS; d++)
		printf(" power at %g%% |", 100 * deltas[d]);
	printf("\n|---|---|");
	for (size_t d = 0; d < N_DELTAS; d++)
		printf("--:|");
	printf("\n");
	for (size_t i = 0; i < N_METRICS; i++) {
		struct pg_rule r;
		char text[64];
		pg_policy_rule(policy, "sim_qps_inf", NULL, metrics[i].m, &r);
		rule_text(text, sizeof(text), &r);
		printf("| %s | %s |", metrics[i].id, text);
		for (size_t d = 0; d < N_DELTAS; d++)
			print_rate(cells[d].fails[i], trials);
		printf("\n");
		if (!targets || (!r.gate && !(r.escalate > 0)))
			continue;
		/* per gating metric: <= 1% false alarms; throughput: >= 95% at 5%;
		 * p99: >= 95% at 15% */
		if (rate(cells[0].fails[i], trials) > 0.01)
			missed++;
		if (metrics[i].m->cls == PG_CLASS_THROUGHPUT &&
		    rate(cells[2].fails[i], trials) < 0.95)
			missed++;
		if (metrics[i].m->cls == PG_CLASS_TAIL && rate(cells[4].fails[i], trials) < 0.95)
			missed++;
	}
	printf("| **any metric of the test** | |");
	for (size_t d = 0; d < N_DELTAS; d++)
		print_rate(cells[d].any, trials);
	printf("\n| re-runs (share of tests) | |");
	for (size_t d = 0; d < N_DELTAS; d++)
		print_rate(cells[d].reruns, trials);
	printf("\n");
	if (targets && rate(cells[0].any, trials) > 0.05)
		missed++;
	fflush(stdout);
	return missed;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: gate-sim [--trials N] [--seed S] [--repeats N] [--history K] [--scenario NAME]\n"
		"                [--thresholds FILE] [--set [METRIC.]FIELD=VALUE]... [--check]\n"
		"scenarios: git, git-single, git-correlated, git-noisy, recorded, published\n"
		"FIELD: tolerance, escalate, recheck, noise_sigmas, alpha, gate (0/1)\n");
	exit(2);
}

/* --set recheck=0.5, --set output_throughput.tolerance=0.03: what-if policies. */
static int apply_set(struct pg_policy *p, const char *spec)
{
	char metric[64] = "*", field[64];
	const char *eq = strchr(spec, '='), *dot = strchr(spec, '.');
	struct pg_rule_patch patch = { 0 };
	double v;

	if (!eq)
		return -1;
	if (dot && dot < eq) {
		snprintf(metric, sizeof(metric), "%.*s", (int)(dot - spec), spec);
		spec = dot + 1;
	}
	snprintf(field, sizeof(field), "%.*s", (int)(eq - spec), spec);
	v = strtod(eq + 1, NULL);
	if (!strcmp(field, "tolerance"))
		patch.set = PG_RULE_TOLERANCE, patch.rule.tolerance = v;
	else if (!strcmp(field, "escalate"))
		patch.set = PG_RULE_ESCALATE, patch.rule.escalate = v;
	else if (!strcmp(field, "recheck"))
		patch.set = PG_RULE_RECHECK, patch.rule.recheck = v;
	else if (!strcmp(field, "noise_sigmas"))
		patch.set = PG_RULE_NOISE_SIGMAS, patch.rule.noise_sigmas = v;
	else if (!strcmp(field, "alpha"))
		patch.set = PG_RULE_ALPHA, patch.rule.alpha = v;
	else if (!strcmp(field, "gate"))
		patch.set = PG_RULE_GATE, patch.rule.gate = v != 0;
	else
		return -1;
	if (!strcmp(field, "escalate") && !strcmp(metric, "*")) {
		p->escalate = v; /* the tail metrics' default */
		return 0;
	}
	pg_policy_add(p, NULL, metric, &patch, 0);
	return 0;
}

int main(int argc, char **argv)
{
	long trials = 20000, repeats = 5, history = -1;
	unsigned long long seed = 1;
	const char *thresholds = NULL, *only = NULL, *sets[32];
	int n_sets = 0, missed = 0;
	bool check = false;
	struct pg_policy policy;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--trials") && i + 1 < argc)
			trials = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--repeats") && i + 1 < argc)
			repeats = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--history") && i + 1 < argc)
			history = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--scenario") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "--thresholds") && i + 1 < argc)
			thresholds = argv[++i];
		else if (!strcmp(argv[i], "--set") && i + 1 < argc && n_sets < 32)
			sets[n_sets++] = argv[++i];
		else if (!strcmp(argv[i], "--check"))
			check = true;
		else
			usage();
	}
	if (trials < 1 || repeats < 1 || repeats > MAX_REPEATS)
		usage();

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
	for (int i = 0; i < n_sets; i++)
		if (apply_set(&policy, sets[i]))
			usage();
	if (history < 0)
		history = policy.history_window;
	if (history < 1 || history > 256)
		usage();
	for (size_t i = 0; i < N_METRICS; i++)
		metrics[i].m = pg_metric_by_id(PG_SUITE_SERVING, metrics[i].id);
	pg_rng_seed(&rng, seed);

	printf("gate-sim: %ld trials per cell (seed %llu); %ld repeats per run; git baselines of the last %ld "
	       "runs; policy: %s%s.\n"
	       "Noise, repeat-to-repeat sd + job-to-job sd: throughput 2%% + 1%%, median TTFT 3%% + 1.5%%,\n"
	       "median TPOT and ITL 2.5%% + 1%%, p99 6%% + 2%%. Rates with 95%% Wilson intervals.\n",
	       trials, seed, repeats, history, thresholds ? thresholds : "the defaults",
	       n_sets ? " with --set changes" : "");
	for (size_t s = 0; s < sizeof(scenarios) / sizeof(scenarios[0]); s++) {
		bool is_default = s == 0;
		if (only ? strcmp(only, scenarios[s].name) : check && !is_default)
			continue;
		missed += run_scenario(&scenarios[s], &policy, trials, (int)repeats, (int)history,
				       check && is_default);
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
