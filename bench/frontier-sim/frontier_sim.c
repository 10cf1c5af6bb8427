/*
 * frontier-sim: does one decision per ladder catch a small change that no
 * point of the ladder shows on its own, without failing clean builds?
 *
 * It runs perfgate's own comparison -- pg_compare, with the frontier rule
 * gating (gate/compare_frontier.h) -- on synthetic concurrency ladders
 * and prints, per noise scenario, how often it fails a candidate 3% slower
 * at every point (detection) and an unchanged one (A/A false fails), with
 * 95% Wilson intervals, next to how often a single point's own throughput
 * rule catches the same 3% (the per-point gate, which the frontier
 * replaces on ladders).
 *
 *   build/bench/frontier-sim               every scenario, 4,000 trials each
 *   build/bench/frontier-sim --trials N
 *   build/bench/frontier-sim --check       exit 1 unless the default
 *                                          scenario meets the targets
 *
 * The ladder is the mock engine's timing model (mockserver/engine_model.h,
 * its defaults: TTFT 20 ms + 20 us per prompt token, ITL 10 ms growing 1%
 * per other running sequence) at concurrency 1, 2, 4 ... 128 with 512
 * prompt and 128 output tokens: TPOT = ITL (1 + 0.01 (c - 1)), output
 * throughput = c x 128 / (TTFT + 127 TPOT).
 *
 * Noise (log-normal): each run (job) has a speed offset, sd `job`, shared by
 * its points; each point of each run its own speed factor, sd `point`
 * (moving throughput and TPOT together, as a slower engine does), and its
 * two metrics an independent measurement error, sd `meas`. The baseline is
 * `base_runs` recorded runs (baseline update --from each: per point, the
 * median of the runs and their spread); the candidate is one run, 3%
 * slower at every point (speed x 0.97) or unchanged. Seeded: the figures
 * are the same on every run.
 */
#include "base/alloc.h"
#include "base/rng.h"
#include "gate/compare.h"
#include "gate/compare_stats.h"
#include "mockserver/engine_model.h"
#include "results/metrics.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_POINTS 8
static const long conc[N_POINTS] = { 1, 2, 4, 8, 16, 32, 64, 128 };
#define ISL 512
#define OSL 128

struct scenario {
	const char *name;
	double point; /* per point per run, speed sd */
	double job;   /* per run, speed sd */
	double meas;  /* per metric, measurement sd */
	int base_runs;
};

/* clang-format off */
static const struct scenario scenarios[] = {
	{ "points 1.5% apart, no run offset (the target)", 0.015, 0.0,   0.005, 5 },
	{ "points 1%, no run offset",                      0.01,  0.0,   0.005, 5 },
	{ "points 2%, no run offset",                      0.02,  0.0,   0.005, 5 },
	{ "points 2%, no run offset, 20 baseline runs",    0.02,  0.0,   0.005, 20 },
	{ "points 1.5%, run offset 0.5%",                  0.015, 0.005, 0.005, 5 },
	{ "points 1.5%, run offset 1%",                    0.015, 0.01,  0.005, 5 },
};
/* clang-format on */

struct ladder_model {
	double tput[N_POINTS]; /* output tok/s */
	double tpot[N_POINTS]; /* ms */
};

static void engine_ladder(struct ladder_model *m)
{
	struct pg_engine_params p;

	pg_engine_params_default(&p);
	for (int i = 0; i < N_POINTS; i++) {
		double ttft = (double)(p.ttft_ns + p.prefill_ns_per_token * ISL) / 1e6;
		double tpot = (double)p.itl_ns / 1e6 * (1 + p.itl_growth * (double)(conc[i] - 1));
		m->tpot[i] = tpot;
		m->tput[i] = (double)conc[i] * OSL / ((ttft + (OSL - 1) * tpot) / 1000);
	}
}

/* One run's values of the ladder: speed scales throughput up and TPOT down. */
static void one_run(const struct ladder_model *m, const struct scenario *s, double slow,
		    struct pg_rng *r, double *tput, double *tpot)
{
	double job = s->job * pg_rng_normal(r);

	for (int i = 0; i < N_POINTS; i++) {
		double speed = slow * exp(job + s->point * pg_rng_normal(r));
		tput[i] = m->tput[i] * speed * exp(s->meas * pg_rng_normal(r));
		tpot[i] = m->tpot[i] / speed * exp(s->meas * pg_rng_normal(r));
	}
}

static json_t *result(long c, double tput, double tpot)
{
	return json_pack("{s:s, s:I, s:f, s:f, s:{s:s, s:s, s:s, s:{s:i, s:I, s:s}}}",
			 "request_rate", "inf", "max_concurrency", (json_int_t)c,
			 "output_throughput", tput, "median_tpot_ms", tpot, "perfgate", "suite",
			 "serving", "status", "ok", "test", "serving_ladder", "params", "tp", 1,
			 "max_concurrency", (json_int_t)c, "qps", "inf");
}

struct tally {
	long frontier_fail, point_fail, any_point_fail, trials;
};

static void wilson(long k, long n, double *lo, double *hi)
{
	pg_cmpstat_wilson((size_t)k, (size_t)n, 1.959964, lo, hi);
}

static void run_cell(const struct scenario *s, const struct ladder_model *m, double slow,
		     long trials, uint64_t seed, struct tally *t)
{
	static char names[N_POINTS][64];
	const struct pg_metric *mt = pg_metric_by_id(PG_SUITE_SERVING, "output_throughput");
	const struct pg_metric *mq = pg_metric_by_id(PG_SUITE_SERVING, "median_tpot_ms");
	struct pg_policy policy;
	struct pg_rng r;

	memset(t, 0, sizeof(*t));
	pg_rng_seed(&r, seed);
	pg_policy_init(&policy);
	pg_policy_add(&policy, NULL, "frontier",
		      &(struct pg_rule_patch){ PG_RULE_GATE, { .gate = true } }, 0);
	for (int i = 0; i < N_POINTS; i++)
		snprintf(names[i], sizeof(names[i]), "serving_ladder_qps_inf_concurrency_%ld",
			 conc[i]);

	for (long k = 0; k < trials; k++) {
		struct pg_baseline base = PG_BASELINE_INIT;
		struct pg_cmp_point run[N_POINTS];
		json_t *res[N_POINTS];
		double bt[20][N_POINTS], bq[20][N_POINTS], ct[N_POINTS], cq[N_POINTS];
		struct pg_comparison c, single;
		bool any = false;

		base.gpu = "H100";
		base.kind = "thresholds";
		for (int j = 0; j < s->base_runs; j++)
			one_run(m, s, 1.0, &r, bt[j], bq[j]);
		for (int i = 0; i < N_POINTS; i++) {
			double vt[20], vq[20];
			struct pg_base_point *bp = pg_baseline_add(&base, names[i],
								   PG_SUITE_SERVING);
			for (int j = 0; j < s->base_runs; j++) {
				vt[j] = bt[j][i];
				vq[j] = bq[j][i];
			}
			pg_base_point_add_runs(bp, mt, vt, (size_t)s->base_runs);
			pg_base_point_add_runs(bp, mq, vq, (size_t)s->base_runs);
		}
		pg_baseline_sort(&base);
		one_run(m, s, slow, &r, ct, cq);
		for (int i = 0; i < N_POINTS; i++) {
			res[i] = result(conc[i], ct[i], cq[i]);
			run[i] = (struct pg_cmp_point){ names[i], PG_SUITE_SERVING,
							"ok",     res[i],
							NULL,     false };
		}
		pg_compare(&c, &policy, &base, run, N_POINTS, NULL, 0, NULL);
		for (size_t i = 0; i < c.n; i++)
			if (c.rows[i].metric && !strcmp(c.rows[i].metric->id, "frontier") &&
			    c.rows[i].outcome == PG_OUTCOME_FAIL)
				t->frontier_fail++;
		/* the per-point gate: the default policy, each point on its own */
		{
			struct pg_policy plain;
			pg_policy_init(&plain);
			pg_compare(&single, &plain, &base, run, N_POINTS, NULL, 0, NULL);
			for (size_t i = 0; i < single.n; i++) {
				const struct pg_cmp_row *row = &single.rows[i];
				if (row->metric == mt && row->verdict == PG_VERDICT_REGRESSED) {
					t->point_fail++;
					any = true;
				}
			}
			pg_comparison_release(&single);
			pg_policy_release(&plain);
		}
		t->any_point_fail += any;
		t->trials++;
		pg_comparison_release(&c);
		for (int i = 0; i < N_POINTS; i++)
			json_decref(res[i]);
		base.gpu = base.kind = NULL;
		pg_baseline_release(&base);
	}
	pg_policy_release(&policy);
}

static void pct(char *out, size_t size, long k, long n)
{
	double lo, hi;

	wilson(k, n, &lo, &hi);
	snprintf(out, size, "%.1f%% (%.1f-%.1f)", 100.0 * (double)k / (double)n, 100 * lo,
		 100 * hi);
}

int main(int argc, char **argv)
{
	long trials = 4000;
	bool check = false;
	struct ladder_model m;
	int failed = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--trials") && i + 1 < argc)
			trials = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--check"))
			check = true;
		else {
			fprintf(stderr, "usage: frontier-sim [--trials N] [--check]\n");
			return 2;
		}
	}
	if (trials < 1)
		trials = 1;
	engine_ladder(&m);
	printf("frontier-sim: an 8-point concurrency ladder of the mock engine, %ld trials per "
	       "cell\n\n",
	       trials);
	printf("| scenario | frontier: detects a 3%% drop | frontier: A/A false fails | one "
	       "point's throughput rule at 3%% | any point's, A/A |\n");
	printf("|---|--:|--:|--:|--:|\n");
	for (size_t k = 0; k < sizeof(scenarios) / sizeof(scenarios[0]); k++) {
		const struct scenario *s = &scenarios[k];
		struct tally drop, aa;
		char a[64], b[64], c[64], d[64];

		if (check && k > 0)
			break;
		run_cell(s, &m, 0.97, trials, 1000 + k, &drop);
		run_cell(s, &m, 1.0, trials, 2000 + k, &aa);
		pct(a, sizeof(a), drop.frontier_fail, drop.trials);
		pct(b, sizeof(b), aa.frontier_fail, aa.trials);
		pct(c, sizeof(c), drop.point_fail, drop.trials * N_POINTS);
		pct(d, sizeof(d), aa.any_point_fail, aa.trials);
		printf("| %s | %s | %s | %s | %s |\n", s->name, a, b, c, d);
		if (k == 0 && check &&
		    ((double)drop.frontier_fail < 0.90 * (double)drop.trials ||
		     (double)aa.frontier_fail > 0.01 * (double)aa.trials))
			failed = 1;
	}
	if (check)
		printf("\n%s: detection >= 90%% at 3%%, A/A false fails <= 1%%\n",
		       failed ? "FAIL" : "ok");
	return failed;
}
