/*
 * gate-sim: how often does the gate fail a change that did nothing (false
 * alarms), and how often does it catch a real regression (power)?
 *
 * It runs perfgate's own decision code -- pg_compare, with the policy's
 * rules, escalation and confirmation pooling -- on synthetic noisy runs of
 * one serving test point, many thousand times per cell, and prints the
 * failure rate with a 95% Wilson interval.
 *
 * Noise model (multiplicative, log-normal): every job (CI step on a GPU) has
 * its own offset, sd `session`; every repeat inside a job varies around it
 * with sd `within`. A regression of delta makes the candidate worse by the
 * factor (1 + delta) in the metric's worse direction. Metrics are simulated
 * independently, which is the worst case for the chance of any false alarm
 * in a test (real metrics move together).
 *
 * Baselines, as production builds them:
 *   git         median of the last K recorded main runs (each the median of
 *               its repeats), noise from their spread (perfgate compare
 *               --baseline git)
 *   thresholds  one recorded run with its repeats (perfgate baseline update
 *               --from <one results dir>)
 * The candidate runs `repeats` repeats; with confirmation, a test whose
 * first run is flagged runs again and is decided on both runs pooled.
 */
#include "core/alloc.h"
#include "core/compare.h"
#include "core/compare_stats.h"
#include "core/error.h"
#include "core/metrics.h"
#include "io/thresholds.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sim_metric {
	const char *id;
	double value;    /* baseline level, display units */
	double within;   /* run-to-run (repeat) relative sd */
	double session;  /* per-job relative sd */
	const struct pg_metric *m;
};

/* The default gating set of a serving point, plus the p99s that escalate. */
static struct sim_metric metrics[] = {
	{ "output_throughput", 2400, 0.02, 0.01, NULL },
	{ "median_ttft_ms", 100, 0.03, 0.015, NULL },
	{ "median_tpot_ms", 30, 0.025, 0.01, NULL },
	{ "p99_ttft_ms", 250, 0.06, 0.02, NULL },
	{ "p99_tpot_ms", 40, 0.06, 0.02, NULL },
	{ "p99_itl_ms", 45, 0.06, 0.02, NULL },
};
#define N_METRICS (sizeof(metrics) / sizeof(metrics[0]))

/* xoshiro256** with a splitmix64 seed: fast, reproducible, good enough. */
static uint64_t rng_s[4];

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(void)
{
	uint64_t r = rotl(rng_s[1] * 5, 7) * 9, t = rng_s[1] << 17;
	rng_s[2] ^= rng_s[0];
	rng_s[3] ^= rng_s[1];
	rng_s[1] ^= rng_s[2];
	rng_s[0] ^= rng_s[3];
	rng_s[2] ^= t;
	rng_s[3] = rotl(rng_s[3], 45);
	return r;
}

static void rng_seed(uint64_t seed)
{
	for (int i = 0; i < 4; i++) {
		uint64_t z = (seed += 0x9e3779b97f4a7c15ULL);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		rng_s[i] = z ^ (z >> 31);
	}
}

static double uniform(void)
{
	return ((double)(rng_next() >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(void)
{
	/* Box-Muller; the second value is dropped for simplicity */
	return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

/* One job's repeats of metric sm, worse by delta. */
static void job(const struct sim_metric *sm, double delta, int repeats, double *out)
{
	double level = sm->value * exp(sm->session * gauss());
	double worse = sm->m->direction == PG_HIGHER_IS_BETTER ? 1 / (1 + delta) : 1 + delta;

	for (int r = 0; r < repeats; r++)
		out[r] = level * worse * exp(sm->within * gauss());
}

static json_t *run_result(double values[N_METRICS][64], int repeats)
{
	json_t *result = json_object(), *pg = json_object(), *reps = json_array();

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

enum mode { MODE_GIT, MODE_THRESHOLDS };

struct cell {
	size_t fails[N_METRICS];
	size_t any;
	size_t reruns;
};

struct setup {
	enum mode mode;
	bool confirm;
	int repeats;
	int history;      /* K */
	const struct pg_policy *policy;
};

static void trial(const struct setup *s, double delta, struct cell *cell)
{
	static double values[N_METRICS][64];
	struct pg_baseline base = PG_BASELINE_INIT;
	struct pg_base_point *bp;
	struct pg_comparison cmp;
	struct pg_run_point run, again;
	json_t *first_json, *second_json = NULL;

	base.gpu = pg_xstrdup("SIM");
	bp = pg_baseline_add(&base, "sim_qps_inf", PG_SUITE_SERVING);
	for (size_t i = 0; i < N_METRICS; i++) {
		if (s->mode == MODE_GIT) {
			double medians[64];
			for (int k = 0; k < s->history; k++) {
				job(&metrics[i], 0, s->repeats, values[i]);
				medians[k] = pg_stat_median(values[i], (size_t)s->repeats);
			}
			pg_base_point_add_runs(bp, metrics[i].m, medians, (size_t)s->history);
		} else {
			job(&metrics[i], 0, s->repeats, values[i]);
			pg_base_point_add_metric(bp, metrics[i].m, NAN, values[i], (size_t)s->repeats);
		}
	}

	for (size_t i = 0; i < N_METRICS; i++)
		job(&metrics[i], delta, s->repeats, values[i]);
	first_json = run_result(values, s->repeats);
	run = (struct pg_run_point){ "sim_qps_inf", PG_SUITE_SERVING, "ok", first_json };
	pg_compare(&cmp, s->policy, &base, &run, 1, NULL, 0, NULL);

	if (s->confirm && cmp.rerun.n) {
		pg_comparison_release(&cmp);
		cell->reruns++;
		for (size_t i = 0; i < N_METRICS; i++)
			job(&metrics[i], delta, s->repeats, values[i]);
		second_json = run_result(values, s->repeats);
		again = (struct pg_run_point){ "sim_qps_inf", PG_SUITE_SERVING, "ok", second_json };
		pg_compare(&cmp, s->policy, &base, &run, 1, &again, 1, NULL);
	}

	bool any = false;
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
	json_decref(first_json);
	json_decref(second_json);
	pg_baseline_release(&base);
}

static void print_rate(size_t k, size_t n)
{
	double lo, hi;
	pg_stat_wilson(k, n, 1.959964, &lo, &hi);
	printf(" %5.1f%% [%4.1f, %4.1f]", 100.0 * (double)k / (double)n, 100 * lo, 100 * hi);
}

static void run_setup(const struct setup *s, const char *title, long trials, const double *deltas,
		      size_t n_deltas)
{
	struct cell *cells = pg_xcalloc(n_deltas, sizeof(*cells));

	for (size_t d = 0; d < n_deltas; d++)
		for (long t = 0; t < trials; t++)
			trial(s, deltas[d], &cells[d]);

	printf("\n%s\n", title);
	printf("%-20s %-8s", "metric", "rule");
	for (size_t d = 0; d < n_deltas; d++) {
		char h[32];
		snprintf(h, sizeof(h), "%s %g%%", d == 0 ? "FPR" : "power @", 100 * deltas[d]);
		printf("  %-20s", h);
	}
	printf("\n");
	for (size_t i = 0; i < N_METRICS; i++) {
		struct pg_rule rule;
		char r[32];
		pg_policy_rule(s->policy, "sim_qps_inf", NULL, metrics[i].m, &rule);
		if (rule.gate)
			snprintf(r, sizeof(r), "gate %g%%", 100 * rule.tolerance);
		else
			snprintf(r, sizeof(r), ">%g%%", 100 * rule.escalate);
		printf("%-20s %-8s", metrics[i].id, r);
		for (size_t d = 0; d < n_deltas; d++)
			print_rate(cells[d].fails[i], (size_t)trials);
		printf("\n");
	}
	printf("%-20s %-8s", "any metric (test)", "");
	for (size_t d = 0; d < n_deltas; d++)
		print_rate(cells[d].any, (size_t)trials);
	printf("\n%-20s %-8s", "re-runs needed", "");
	for (size_t d = 0; d < n_deltas; d++)
		print_rate(cells[d].reruns, (size_t)trials);
	printf("\n");
	free(cells);
}

static void usage(void)
{
	fprintf(stderr, "usage: gate-sim [--trials N] [--seed S] [--repeats N] [--history K]\n"
			"                [--thresholds FILE] [--set [METRIC.]FIELD=VALUE]...\n"
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
		/* escalation applies to the tail metrics only */
		static const char *tails[] = { "p99_ttft_ms", "p99_tpot_ms", "p99_itl_ms" };
		for (size_t i = 0; i < 3; i++)
			pg_policy_add(p, NULL, tails[i], &patch, 0);
		return 0;
	}
	pg_policy_add(p, NULL, metric, &patch, 0);
	return 0;
}

int main(int argc, char **argv)
{
	long trials = 20000, repeats = 5, history = -1;
	unsigned long long seed = 1;
	const char *thresholds = NULL;
	const char *sets[32];
	double noise_scale = 1;
	int n_sets = 0;
	struct pg_policy policy;
	static const double deltas[] = { 0, 0.02, 0.05, 0.10, 0.15 };
	char title[256];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--trials") && i + 1 < argc)
			trials = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--repeats") && i + 1 < argc)
			repeats = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--history") && i + 1 < argc)
			history = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--noise-scale") && i + 1 < argc)
			noise_scale = strtod(argv[++i], NULL);
		else if (!strcmp(argv[i], "--thresholds") && i + 1 < argc)
			thresholds = argv[++i];
		else if (!strcmp(argv[i], "--set") && i + 1 < argc)
			n_sets < 32 ? (void)(sets[n_sets++] = argv[++i]) : usage();
		else
			usage();
	}
	if (trials < 1 || repeats < 1 || repeats > 32)
		usage();

	pg_policy_init(&policy);
	if (thresholds) {
		struct pg_error err = PG_ERROR_INIT;
		struct pg_baseline ignored = PG_BASELINE_INIT;
		pg_policy_release(&policy);
		if (pg_thresholds_load(thresholds, &policy, &ignored, &err)) {
			fprintf(stderr, "gate-sim: %s\n", err.msg);
			return 2;
		}
		pg_baseline_release(&ignored);
	}
	for (int i = 0; i < n_sets; i++)
		if (apply_set(&policy, sets[i]))
			usage();
	if (history < 0)
		history = policy.history_window;
	for (size_t i = 0; i < N_METRICS; i++) {
		metrics[i].m = pg_metric_by_id(PG_SUITE_SERVING, metrics[i].id);
		metrics[i].within *= noise_scale;
		metrics[i].session *= noise_scale;
	}

	printf("gate-sim: %ld trials per cell, seed %llu, %ld repeats per run, policy %s\n", trials, seed,
	       repeats, thresholds ? thresholds : "defaults (metric registry)");
	printf("noise (within-run sd / per-job sd): throughput 2%%/1%%, median TTFT 3%%/1.5%%,\n"
	       "median TPOT 2.5%%/1%%, p99 6%%/2%%; failure rate [95%% Wilson interval]\n");

	rng_seed(seed);
	snprintf(title, sizeof(title),
		 "git baseline (median of the last %ld main runs), with confirmation re-run", history);
	run_setup(&(struct setup){ MODE_GIT, true, (int)repeats, (int)history, &policy }, title, trials,
		  deltas, 5);
	snprintf(title, sizeof(title), "git baseline (last %ld main runs), single run, no confirmation",
		 history);
	run_setup(&(struct setup){ MODE_GIT, false, (int)repeats, (int)history, &policy }, title, trials,
		  deltas, 5);
	run_setup(&(struct setup){ MODE_THRESHOLDS, true, (int)repeats, 1, &policy },
		  "thresholds baseline from one recorded run, with confirmation re-run", trials, deltas, 5);
	pg_policy_release(&policy);
	return 0;
}
