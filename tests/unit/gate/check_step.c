/* The step decision on hand-made histories: each rule of docs/gate.md
 * pinned -- the job as the unit, the step's budget, confirmation as
 * replication, change points and windows, missing vs not in this suite --
 * and the statistics behind them. */
#include "testutil.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/jsonw.h"
#include "baseline/history.h"
#include "gate/attention.h"
#include "gate/compare.h"
#include "gate/compare_stats.h"
#include "results/metrics.h"
#include "trends/trends.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------ */
/* Statistics                                                          */

START_TEST(student_t_tails)
{
	/* closed forms for 1 and 2 degrees of freedom; numerical integration
	 * of the density for the others */
	ck_assert_double_eq_tol(pg_cmpstat_t_sf(3.3, 1), 0.5 - atan(3.3) / M_PI, 1e-12);
	ck_assert_double_eq_tol(pg_cmpstat_t_sf(1.5, 2), 0.5 - 1.5 / (2 * sqrt(2 + 1.5 * 1.5)),
				1e-12);
	ck_assert_double_eq_tol(pg_cmpstat_t_sf(2.0, 10), 0.036694017392, 1e-10);
	ck_assert_double_eq_tol(pg_cmpstat_t_sf(3.5, 4.5), 0.010270845003, 1e-10);
	ck_assert_double_eq_tol(pg_cmpstat_t_sf(-2.0, 10), 1 - 0.036694017392, 1e-10);
	ck_assert_double_eq_tol(pg_cmpstat_t_sf(3, INFINITY), pg_cmpstat_normal_sf(3), 1e-15);
	ck_assert_double_eq_tol(pg_cmpstat_normal_sf(3), 0.0013498980316301, 1e-14);
	ck_assert_double_eq(pg_cmpstat_t_sf(0, 7), 0.5);
	ck_assert(isnan(pg_cmpstat_t_sf(1, 0)));
	ck_assert(isnan(pg_cmpstat_t_sf(NAN, 3)));
}
END_TEST

START_TEST(holm_step_down)
{
	/* sorted 0.01, 0.02, 0.03, 0.2 of four: x4, x3 (kept monotone), x2, x1 */
	const double p[] = { 0.03, 0.01, NAN, 0.2, 0.02 };
	double adj[N(p)];

	pg_cmpstat_holm(p, N(p), adj);
	ck_assert_double_eq_tol(adj[1], 0.04, 1e-15);
	ck_assert_double_eq_tol(adj[4], 0.06, 1e-15);
	ck_assert_double_eq_tol(adj[0], 0.06, 1e-15);
	ck_assert_double_eq_tol(adj[3], 0.2, 1e-15);
	ck_assert(isnan(adj[2])); /* not tested: not in the family */
}
END_TEST

/* The standard normal's p-quantile, by bisection. */
static double normal_quantile(double p)
{
	double lo = -10, hi = 10;
	for (int i = 0; i < 200; i++) {
		double mid = (lo + hi) / 2;
		if (0.5 * erfc(-mid / sqrt(2)) < p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

START_TEST(robust_sd_and_median)
{
	double clean[40], dirty[40], copy[5] = { 5, NAN, 1, 3, 2 };

	/* evenly spaced normal quantiles: sd 1 */
	for (int i = 0; i < 40; i++)
		clean[i] = dirty[i] = normal_quantile((i + 0.5) / 40);
	ck_assert_double_eq_tol(pg_cmpstat_robust_sd(clean, 40, 0), 1, 0.06);
	/* four wild values (a slow node, ten times) barely move it */
	for (int i = 0; i < 4; i++)
		dirty[i] = 10;
	ck_assert_double_lt(pg_cmpstat_robust_sd(dirty, 40, 0), 1.25);
	ck_assert(isnan(pg_cmpstat_robust_sd(clean, 1, 0)));
	ck_assert_double_eq(pg_cmpstat_median_inplace(copy, 5), 2.5);
}
END_TEST

START_TEST(median_polish_splits_jobs_from_points)
{
	/* 4 jobs x 3 points: y = job + point exactly, one value missing */
	const double job[] = { 0.02, -0.01, 0, 0.05 }, pt[] = { 1, 2, 3 };
	double y[12], row[4], col[3];

	for (int r = 0; r < 4; r++)
		for (int c = 0; c < 3; c++)
			y[r * 3 + c] = job[r] + pt[c];
	y[5] = NAN;
	pg_cmpstat_median_polish(y, 4, 3, row, col);
	/* the rows' median is 0: offsets relative to the typical job */
	for (int r = 0; r < 4; r++)
		ck_assert_double_eq_tol(row[r] - (job[r] - 0.01), 0, 1e-12);
	for (int c = 0; c < 3; c++)
		ck_assert_double_eq_tol(col[c], pt[c] + 0.01, 1e-12);
}
END_TEST

START_TEST(change_points_and_trends)
{
	double x[30], slow[30], exact[30];
	size_t cps[8], n;
	struct pg_trend t;

	for (int i = 0; i < 30; i++) {
		double wiggle = 0.003 * sin(1.7 * i);
		x[i] = (i >= 18 ? 0.05 : 0) + wiggle;
		slow[i] = wiggle + (i % 10 == 3 ? 0.05 : 0); /* a slow job now and then */
	}
	n = pg_cmpstat_change_points(x, 30, NULL, cps, 8);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(cps[0], 18);
	/* slow jobs are wild values, not steps */
	ck_assert_uint_eq(pg_cmpstat_change_points(slow, 30, NULL, cps, 8), 0);
	/* a step too small to matter is not one */
	ck_assert_uint_eq(
		pg_cmpstat_change_points(x, 30, &(struct pg_cp_opts){ 3, 0.001, 0.08 }, cps, 8), 0);
	/* a step of exactly min_shift is one (0.25 and 0.125 are exact) */
	for (int i = 0; i < 30; i++)
		exact[i] = i >= 20 ? 0.25 : 0.125;
	ck_assert_uint_eq(pg_cmpstat_change_points(exact, 30,
						   &(struct pg_cp_opts){ 3, 0.001, 0.125 }, cps, 8),
			  1);
	ck_assert_uint_eq(cps[0], 20);
	ck_assert_uint_eq(pg_cmpstat_change_points(
				  exact, 30, &(struct pg_cp_opts){ 3, 0.001, 0.1251 }, cps, 8),
			  0);
	/* a step three jobs from the end is seen */
	for (int i = 0; i < 30; i++)
		x[i] = (i >= 27 ? 0.05 : 0) + 0.003 * sin(1.7 * i);
	ck_assert_uint_eq(pg_cmpstat_change_points(x, 30, NULL, cps, 8), 1);
	ck_assert_uint_eq(cps[0], 27);

	/* flat for 12 jobs, then 0.2% worse per job */
	for (int i = 0; i < 30; i++)
		x[i] = (i > 12 ? 0.002 * (i - 12) : 0) + 0.0005 * sin(2.3 * i);
	pg_cmpstat_trend(&t, x, 30);
	ck_assert_double_lt(t.p_value, 0.001);
	ck_assert_double_gt(t.slope, 0.001);
	ck_assert_uint_ge(t.start, 10);
	ck_assert_uint_le(t.start, 14);
	pg_cmpstat_trend(&t, slow, 30);
	ck_assert_double_gt(t.p_value, 0.01);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Hand-made histories                                                 */

#define P 8
#define K 16

static const char *const names[P] = {
	"serving_a_qps_1", "serving_a_qps_4", "serving_b_qps_1", "serving_b_qps_4",
	"serving_c_qps_1", "serving_c_qps_4", "serving_d_qps_1", "serving_d_qps_4",
};

/* the gated metrics of a serving point, and their levels */
static const struct {
	const char *id;
	double level;
} mets[] = {
	{ "output_throughput", 2000 }, { "median_ttft_ms", 100 }, { "median_tpot_ms", 20 },
	{ "p99_ttft_ms", 300 },        { "p99_tpot_ms", 40 },
};

/* Job offsets of the history (worse > 0): normal jobs within ~1.5% and
 * two on a slow node. */
static const double job_offsets[K] = { 0.004, -0.012, 0.009, 0.05, -0.003, 0.014, -0.007, 0.0,
				       0.011, -0.015, 0.006, 0.05, -0.01,  0.002, 0.008,  -0.004 };

/* A small deterministic leftover per job and point (~0.3%). */
static double leftover(int job, int point)
{
	return 0.003 * sin(7.1 * job + 3.7 * point + 0.5);
}

/* What a job measures: each point's value of each metric, given its
 * offset (worse > 0) and extra worsening per point. */
static double measure(int m, int point, double offset)
{
	const struct pg_metric *pm = pg_metric_by_id(PG_SUITE_SERVING, mets[m].id);
	double level = mets[m].level * (1 + 0.1 * point);
	return level * exp(pm->direction == PG_HIGHER_IS_BETTER ? -offset : offset);
}

static void add_record(struct pg_history *h, int job, int point, const double *extra_per_point,
		       double step)
{
	struct pg_history_rec r;
	char commit[41], date[32];

	memset(&r, 0, sizeof(r));
	snprintf(commit, sizeof(commit), "%05x%035x", (unsigned)(0xa0000 + job) & 0xfffffu, 0u);
	snprintf(date, sizeof(date), "2026-11-%02dT12:00:00Z", 1 + job);
	r.commit = strdup(commit);
	r.date = strdup(date);
	r.suite = PG_SUITE_SERVING;
	r.qps = NAN;
	r.repeats = 5;
	r.metrics = json_object();
	for (size_t m = 0; m < N(mets); m++) {
		json_t *arr = json_array();
		double off = job_offsets[job] + leftover(job, point) +
			     (extra_per_point ? extra_per_point[point] : 0) + step;
		for (int i = 0; i < 5; i++)
			json_array_append_new(arr, json_real(measure((int)m, point, off) *
							     (1 + 0.001 * (i - 2))));
		json_object_set_new(r.metrics, mets[m].id, arr);
	}
	PG_ARRAY_PUSH(h->recs, h->n, h->cap, r);
}

/* The git baseline of histories hs[0..n) as `compare --baseline git`
 * builds it. */
static void baseline_of(struct pg_baseline *base, struct pg_history *hs, size_t n,
			const struct pg_policy *policy)
{
	memset(base, 0, sizeof(*base));
	base->gpu = strdup("H100");
	base->kind = strdup("git");
	pg_history_baseline_build(base, hs, n, NULL, policy);
	pg_baseline_sort(base);
}

/* The history: K jobs of every point; from job `step_at` on, point
 * `step_point` (-1: every point) is `step` worse. */
static void history(struct pg_baseline *base, const struct pg_policy *policy, int n_points,
		    int step_at, int step_point, double step)
{
	struct pg_history hs[P];

	memset(hs, 0, sizeof(hs));
	for (int p = 0; p < n_points; p++) {
		hs[p].point = strdup(names[p]);
		for (int j = 0; j < K; j++)
			add_record(&hs[p], j, p, NULL,
				   step_at >= 0 && j >= step_at &&
						   (step_point < 0 || step_point == p)
					   ? step
					   : 0);
	}
	baseline_of(base, hs, (size_t)n_points, policy);
	for (int p = 0; p < n_points; p++)
		pg_history_release(&hs[p]);
}

/* A run: one job at `offset`, point i worse by extra[i]; results owned by
 * the caller (free_run). */
struct run {
	struct pg_cmp_point pts[P];
	json_t *res[P];
	size_t n;
};

static void make_run(struct run *r, int n_points, double offset, const double *extra,
		     const bool *only, int seed)
{
	memset(r, 0, sizeof(*r));
	for (int p = 0; p < n_points; p++) {
		json_t *res, *pg, *reps;
		if (only && !only[p])
			continue;
		res = json_object();
		pg = json_object();
		reps = json_array();
		for (int i = 0; i < 5; i++) {
			json_t *one = json_object();
			for (size_t m = 0; m < N(mets); m++) {
				double off = offset + leftover(100 + seed, p) +
					     (extra ? extra[p] : 0);
				json_object_set_new(
					one, mets[m].id,
					json_real(measure((int)m, p, off) * (1 + 0.001 * (i - 2))));
			}
			json_array_append_new(reps, one);
		}
		json_object_set_new(pg, "suite", json_string("serving"));
		json_object_set_new(pg, "repeats", reps);
		json_object_set_new(res, "perfgate", pg);
		r->res[r->n] = res;
		r->pts[r->n] = (struct pg_cmp_point){ names[p], PG_SUITE_SERVING, "ok", res, NULL };
		r->n++;
	}
}

static void free_run(struct run *r)
{
	for (size_t i = 0; i < r->n; i++)
		json_decref(r->res[i]);
}

static const struct pg_cmp_row *row_of(const struct pg_comparison *c, const char *point,
				       const char *metric)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->rows[i].point, point) && c->rows[i].metric &&
		    !strcmp(c->rows[i].metric->id, metric))
			return &c->rows[i];
	ck_abort_msg("no row %s %s", point, metric);
	return NULL;
}

static const struct pg_cmp_common *common_of(const struct pg_comparison *c, const char *metric)
{
	for (size_t i = 0; i < c->n_commons; i++)
		if (!strcmp(c->commons[i].metric->id, metric))
			return &c->commons[i];
	ck_abort_msg("no whole-run change for %s", metric);
	return NULL;
}

static bool in_strv(const struct pg_strv *v, const char *s)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->v[i], s))
			return true;
	return false;
}

/* ------------------------------------------------------------------ */
/* The job is the unit of evidence                                     */

START_TEST(a_slow_job_is_not_a_regression)
{
	struct pg_policy policy;
	struct pg_baseline base;
	struct pg_comparison c;
	struct run run;

	pg_policy_init(&policy);
	history(&base, &policy, P, -1, 0, 0);
	ck_assert_uint_eq(base.n_jobs, K);
	ck_assert_ptr_nonnull(base.points[0].metrics[0].jobs);

	/* every point 5% worse, five repeats each agreeing to 0.1%: a slow
	 * node. Pooled repeats against the history's job medians would call
	 * it significant many times over; per job it is one draw, as large
	 * as the history's own slow jobs. */
	make_run(&run, P, 0.05, NULL, NULL, 1);
	pg_compare(&c, &policy, &base, run.pts, run.n, NULL, 0, NULL);
	ck_assert_int_eq(c.counts[PG_VERDICT_REGRESSED], 0);
	ck_assert_int_ne(c.outcome, PG_OUTCOME_FAIL);
	ck_assert_int_eq(row_of(&c, names[2], "output_throughput")->method, PG_METHOD_STEP);
	ck_assert_double_eq_tol(row_of(&c, names[2], "output_throughput")->run_change,
				expm1(-0.05) - expm1(-0.0), 0.01);
	/* judged beyond the run's common change: each point is unchanged */
	ck_assert_double_lt(fabs(row_of(&c, names[2], "output_throughput")->effect), 0.01);
	/* the whole run's change is worth a re-run (noisy: not significant
	 * alone), not a failure */
	ck_assert_int_eq(common_of(&c, "output_throughput")->verdict, PG_VERDICT_NOISY);
	ck_assert_int_eq(common_of(&c, "output_throughput")->outcome, PG_OUTCOME_WARN);
	ck_assert_uint_gt(c.rerun.n, 0);
	pg_comparison_release(&c);
	free_run(&run);
	pg_baseline_release(&base);
	pg_policy_release(&policy);
}
END_TEST

START_TEST(one_point_stands_out_of_its_job)
{
	struct pg_policy policy;
	struct pg_baseline base;
	struct pg_comparison c;
	struct run run;
	double extra[P] = { 0 };
	const struct pg_cmp_row *r;

	pg_policy_init(&policy);
	history(&base, &policy, P, -1, 0, 0);
	/* a fast job (-1.5%) hides a 4% regression at one point in the raw
	 * change (+2.5%, at the tolerance); beyond the job it is 4% */
	extra[3] = 0.04;
	make_run(&run, P, -0.015, extra, NULL, 2);
	pg_compare(&c, &policy, &base, run.pts, run.n, NULL, 0, NULL);
	r = row_of(&c, names[3], "output_throughput");
	ck_assert_int_eq(r->verdict, PG_VERDICT_REGRESSED);
	ck_assert_int_eq(r->outcome, PG_OUTCOME_FAIL);
	ck_assert(r->needs_confirmation);
	ck_assert_double_lt(r->p_adjusted, 0.04);
	ck_assert_double_eq_tol(r->effect, expm1(-0.04), 0.006);
	ck_assert_int_eq(row_of(&c, names[2], "output_throughput")->verdict, PG_VERDICT_UNCHANGED);
	ck_assert_int_eq(c.outcome, PG_OUTCOME_FAIL);
	/* without a re-run the first run decides within the budget: exit 1 */
	ck_assert_int_eq(pg_gate_exit_code(c.outcome, true), 1);
	ck_assert_int_eq(pg_gate_exit_code(c.outcome, false), 0);
	/* the re-run: the flagged point and rerun_anchors (6) others */
	ck_assert_uint_eq(c.rerun.n, 7);
	ck_assert(in_strv(&c.rerun, names[3]));
	pg_comparison_release(&c);
	free_run(&run);
	pg_baseline_release(&base);
	pg_policy_release(&policy);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The step's budget                                                   */

START_TEST(the_budget_covers_the_whole_step)
{
	struct pg_policy policy;
	struct pg_baseline base;
	struct pg_comparison c;
	struct run run;
	double extra[P] = { 0 };
	json_t *j;

	pg_policy_init(&policy);
	history(&base, &policy, P, -1, 0, 0);
	extra[5] = 0.03;
	make_run(&run, P, 0.0, extra, NULL, 3);
	pg_compare(&c, &policy, &base, run.pts, run.n, NULL, 0, NULL);
	/* 8 points (each one hypothesis: its 5 metrics that can fail, 3 gate
	 * and 2 escalate, move together) + 5 whole-run changes, a fifth of
	 * the budget for those */
	ck_assert_uint_eq(c.hypotheses, P + 5);
	ck_assert_double_eq_tol(c.budget_whole_run, 0.01, 1e-15);
	ck_assert_double_eq_tol(c.budget_points, 0.04, 1e-15);
	ck_assert_int_eq(row_of(&c, names[5], "output_throughput")->outcome, PG_OUTCOME_FAIL);
	j = pg_comparison_json(&c);
	ck_assert_double_eq(json_real_value(pg_json_path(j, "decision.step_false_alarm")), 0.05);
	ck_assert_int_eq(json_integer_value(pg_json_path(j, "decision.hypotheses")), P + 5);
	ck_assert_str_eq(json_string_value(pg_json_path(j, "decision.correction")), "holm");
	json_decref(j);
	pg_comparison_release(&c);

	/* the same 3% with a budget far smaller is not enough (the
	 * leftovers here are 0.3%: 3% is ten of them, p ~ 1e-23) */
	policy.step_false_alarm = 1e-40;
	pg_compare(&c, &policy, &base, run.pts, run.n, NULL, 0, NULL);
	ck_assert_int_eq(row_of(&c, names[5], "output_throughput")->verdict, PG_VERDICT_NOISY);
	ck_assert_int_ne(c.outcome, PG_OUTCOME_FAIL);
	pg_comparison_release(&c);
	free_run(&run);
	pg_baseline_release(&base);
	pg_policy_release(&policy);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Confirmation is replication                                         */

START_TEST(the_rerun_must_reproduce)
{
	struct pg_policy policy;
	struct pg_baseline base;
	struct pg_comparison c;
	struct run first, again;
	double extra[P] = { 0 }, none[P] = { 0 };
	bool only[P] = { false };
	const struct pg_cmp_row *r;
	struct pg_buf md = PG_BUF_INIT, svg = PG_BUF_INIT;

	pg_policy_init(&policy);
	policy.rerun_anchors = 3;
	history(&base, &policy, P, -1, 0, 0);
	extra[6] = 0.06;
	make_run(&first, P, 0.01, extra, NULL, 4);
	pg_compare(&c, &policy, &base, first.pts, first.n, NULL, 0, NULL);
	ck_assert_uint_eq(c.rerun.n, 4);
	for (size_t i = 0; i < c.rerun.n; i++)
		for (int p = 0; p < P; p++)
			only[p] |= !strcmp(c.rerun.v[i], names[p]);
	ck_assert(only[6]);
	pg_comparison_release(&c);

	/* the re-run (another job, 2% slow) shows it again: confirmed */
	make_run(&again, P, 0.02, extra, only, 5);
	pg_compare(&c, &policy, &base, first.pts, first.n, again.pts, again.n, NULL);
	r = row_of(&c, names[6], "output_throughput");
	ck_assert_int_eq(r->verdict, PG_VERDICT_REGRESSED);
	ck_assert(r->confirmed);
	ck_assert_uint_eq(r->rerun.n, 5);
	ck_assert_double_eq_tol(r->rerun.effect, expm1(-0.06), 0.006);
	ck_assert_int_eq(c.outcome, PG_OUTCOME_FAIL);
	ck_assert_uint_eq(c.rerun.n, 0);
	/* first run, re-run and decision side by side */
	pg_comparison_markdown(&md, &c);
	ck_assert_ptr_nonnull(strstr(md.ptr, "| Test | Metric | Baseline | First run | Re-run |"));
	ck_assert_ptr_nonnull(strstr(md.ptr, "confirmed by a re-run"));
	/* the evidence: each run's interval of the change beyond its run's
	 * common change, around its estimate, both holding the true 6% */
	ck_assert_ptr_nonnull(strstr(md.ptr, "after taking out the change every point of this "
					     "run shares (-"));
	ck_assert_ptr_nonnull(strstr(md.ptr, "95% interval of this point's own change: -"));
	ck_assert_ptr_nonnull(strstr(md.ptr, "; on the re-run -"));
	/* each interval is the run's t test inverted: centred on its effect
	 * on the log scale, and clear of no change exactly when the test's
	 * one-sided p is under 2.5% */
	ck_assert_double_eq_tol((log1p(r->first.ci_low) + log1p(r->first.ci_high)) / 2,
				log1p(r->first.effect), 1e-9);
	ck_assert_double_eq_tol((log1p(r->rerun.ci_low) + log1p(r->rerun.ci_high)) / 2,
				log1p(r->rerun.effect), 1e-9);
	ck_assert_int_eq(r->first.ci_high < 0, r->first.p_value < 0.025);
	ck_assert_int_eq(r->rerun.ci_high < 0, r->rerun.p_value < 0.025);
	ck_assert(r->first.ci_high < 0 && r->rerun.ci_high < 0);
	ck_assert(r->first.ci_low < expm1(-0.06) && expm1(-0.06) < r->first.ci_high);
	ck_assert(r->rerun.ci_low < expm1(-0.06) && expm1(-0.06) < r->rerun.ci_high);
	ck_assert_double_eq(r->ci_low, r->first.ci_low);
	/* a regression against a git history carries its window, for its
	 * trend chart */
	ck_assert_ptr_nonnull(r->trail);
	ck_assert_uint_eq(r->trail->n, r->n_baseline);
	/* its chart: judged beyond the run's common change, the failing
	 * limit moves with the run as the interval's bar does -- the run's
	 * diamond beyond it, not inside the band */
	ck_assert_int_eq(r->method, PG_METHOD_STEP);
	ck_assert(isfinite(r->run_change) && r->run_change < -0.005);
	ck_assert(pg_trends_evidence_svg(&svg, r, NULL));
	ck_assert_ptr_nonnull(strstr(svg.ptr, "the limit moves with the run&#39;s common change"));
	tu_assert_golden("golden/gate/evidence-chart-step.svg", svg.ptr);
	pg_buf_release(&svg);
	pg_buf_release(&md);
	pg_comparison_release(&c);
	free_run(&again);

	/* a clean re-run vetoes it: not-reproduced, a warning, exit 0 --
	 * one bad job cannot outvote a good one */
	make_run(&again, P, 0.0, none, only, 6);
	pg_compare(&c, &policy, &base, first.pts, first.n, again.pts, again.n, NULL);
	r = row_of(&c, names[6], "output_throughput");
	ck_assert_int_eq(r->verdict, PG_VERDICT_NOT_REPRODUCED);
	ck_assert_int_eq(r->outcome, PG_OUTCOME_WARN);
	ck_assert(!r->confirmed);
	ck_assert(strstr(r->note, "not reproduced"));
	ck_assert_int_eq(c.outcome, PG_OUTCOME_WARN);
	ck_assert_int_eq(pg_gate_exit_code(c.outcome, true), 0);
	pg_comparison_release(&c);
	free_run(&again);

	/* a re-run that failed: exit 3 */
	make_run(&again, P, 0.0, none, only, 7);
	for (size_t i = 0; i < again.n; i++)
		if (!strcmp(again.pts[i].name, names[6]))
			again.pts[i].status = "error";
	pg_compare(&c, &policy, &base, first.pts, first.n, again.pts, again.n, NULL);
	ck_assert_int_eq(c.outcome, PG_OUTCOME_INFRA);
	pg_comparison_release(&c);
	free_run(&again);

	free_run(&first);
	pg_baseline_release(&base);
	pg_policy_release(&policy);
}
END_TEST

START_TEST(a_whole_run_change_must_reproduce)
{
	struct pg_policy policy;
	struct pg_baseline base;
	struct pg_comparison c;
	struct run first, again;
	bool only[P] = { false };

	pg_policy_init(&policy);
	history(&base, &policy, P, -1, 0, 0);
	make_run(&first, P, 0.09, NULL, NULL, 8);
	pg_compare(&c, &policy, &base, first.pts, first.n, NULL, 0, NULL);
	ck_assert_int_eq(common_of(&c, "output_throughput")->verdict, PG_VERDICT_REGRESSED);
	for (size_t i = 0; i < c.rerun.n; i++)
		for (int p = 0; p < P; p++)
			only[p] |= !strcmp(c.rerun.v[i], names[p]);
	ck_assert_uint_eq(c.rerun.n, 6); /* anchors: nothing single was flagged */
	pg_comparison_release(&c);

	/* the re-run is 9% worse too: the whole run regressed */
	make_run(&again, P, 0.085, NULL, only, 9);
	pg_compare(&c, &policy, &base, first.pts, first.n, again.pts, again.n, NULL);
	ck_assert_int_eq(common_of(&c, "output_throughput")->verdict, PG_VERDICT_REGRESSED);
	ck_assert_int_eq(common_of(&c, "output_throughput")->outcome, PG_OUTCOME_FAIL);
	ck_assert_int_eq(row_of(&c, names[0], "output_throughput")->verdict, PG_VERDICT_REGRESSED);
	ck_assert(strstr(row_of(&c, names[0], "output_throughput")->note, "the whole run"));
	ck_assert_int_eq(c.outcome, PG_OUTCOME_FAIL);
	pg_comparison_release(&c);
	free_run(&again);

	/* the re-run is a normal job: it was a slow node */
	make_run(&again, P, 0.004, NULL, only, 10);
	pg_compare(&c, &policy, &base, first.pts, first.n, again.pts, again.n, NULL);
	ck_assert_int_eq(common_of(&c, "output_throughput")->verdict, PG_VERDICT_NOT_REPRODUCED);
	ck_assert_int_ne(c.outcome, PG_OUTCOME_FAIL);
	pg_comparison_release(&c);
	free_run(&again);
	free_run(&first);
	pg_baseline_release(&base);
	pg_policy_release(&policy);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Change points                                                       */

START_TEST(the_window_starts_after_a_step)
{
	struct pg_policy policy;
	struct pg_baseline base;
	struct pg_comparison c;
	struct run run;
	double extra[P] = { 0 };
	const struct pg_base_point *bp;

	pg_policy_init(&policy);
	/* main made point 2 8% worse from job 8 on */
	history(&base, &policy, P, 8, 2, 0.08);
	ck_assert_uint_ge(base.n_changes, 1);
	bp = pg_baseline_find(&base, names[2]);
	ck_assert_int_eq(bp->runs, K - 8);
	/* the level is the latest segment's, the spread every segment's */
	ck_assert_int_eq(
		pg_base_point_metric(bp, pg_metric_by_id(PG_SUITE_SERVING, "output_throughput"))
			->level_from,
		8);
	ck_assert_uint_eq(
		pg_base_point_metric(bp, pg_metric_by_id(PG_SUITE_SERVING, "output_throughput"))
			->n_span,
		K);
	ck_assert_int_eq(pg_baseline_find(&base, names[1])->runs, K);
	/* a PR at main's new level is not blamed for main's step */
	extra[2] = 0.08;
	make_run(&run, P, 0.0, extra, NULL, 11);
	pg_compare(&c, &policy, &base, run.pts, run.n, NULL, 0, NULL);
	ck_assert_int_eq(row_of(&c, names[2], "output_throughput")->verdict, PG_VERDICT_UNCHANGED);
	ck_assert_int_ne(c.outcome, PG_OUTCOME_FAIL);
	pg_comparison_release(&c);
	free_run(&run);
	pg_baseline_release(&base);

	/* a step two jobs ago (main persisted at its new level): the level
	 * follows it at once, judged with the spread of every segment; no
	 * point goes blind after a step */
	history(&base, &policy, P, K - 2, 4, 0.08);
	bp = pg_baseline_find(&base, names[4]);
	ck_assert_ptr_null(bp->insufficient);
	ck_assert_int_eq(bp->runs, 2);
	memset(extra, 0, sizeof(extra));
	extra[4] = 0.08; /* at main's new level: not this PR's doing */
	make_run(&run, P, 0.0, extra, NULL, 13);
	pg_compare(&c, &policy, &base, run.pts, run.n, NULL, 0, NULL);
	ck_assert_int_eq(row_of(&c, names[4], "output_throughput")->verdict, PG_VERDICT_UNCHANGED);
	ck_assert_ptr_nonnull(strstr(row_of(&c, names[4], "output_throughput")->basis,
				     "median of 2 runs of main since its level changed"));
	pg_comparison_release(&c);
	free_run(&run);
	extra[4] = 0.08 + 0.05; /* 5% worse than main's new level */
	make_run(&run, P, 0.0, extra, NULL, 14);
	pg_compare(&c, &policy, &base, run.pts, run.n, NULL, 0, NULL);
	ck_assert_int_eq(row_of(&c, names[4], "output_throughput")->verdict, PG_VERDICT_REGRESSED);
	ck_assert_int_eq(c.outcome, PG_OUTCOME_FAIL);
	pg_comparison_release(&c);
	free_run(&run);
	pg_baseline_release(&base);
	/* one run at a new level is no level yet: judged against the old
	 * one (a spike, or main's change reported on the run where it
	 * appeared) */
	history(&base, &policy, P, K - 1, 4, 0.08);
	bp = pg_baseline_find(&base, names[4]);
	ck_assert_int_eq(bp->runs, K);
	pg_baseline_release(&base);
	pg_policy_release(&policy);
}
END_TEST

/* A point judged alone (the only one of its run: method "history") after
 * a whole-run step is tested against the jobs since it: its basis, its
 * words and its chart's window say so, not the whole window. */
START_TEST(a_point_alone_after_a_whole_run_step_rests_on_the_jobs_since)
{
	struct pg_policy policy;
	struct pg_baseline base;
	struct pg_comparison c;
	struct run run;
	double extra[P] = { 0 };
	bool only[P] = { false };
	const struct pg_cmp_row *r;
	const struct pg_base_point *bp;
	struct pg_buf svg = PG_BUF_INIT, want = PG_BUF_INIT;
	const char *since_commit;
	json_t *js, *basis;

	pg_policy_init(&policy);
	history(&base, &policy, P, 6, -1, 0.06);
	bp = pg_baseline_find(&base, names[0]);
	ck_assert_int_eq(bp->runs, K); /* the point's window is all K jobs */
	only[0] = true;
	extra[0] = 0.15;
	make_run(&run, P, 0.06, extra, only, 12);
	pg_compare(&c, &policy, &base, run.pts, run.n, NULL, 0, NULL);
	r = row_of(&c, names[0], "output_throughput");
	ck_assert_int_eq(r->method, PG_METHOD_HISTORY);
	ck_assert_int_eq(r->verdict, PG_VERDICT_REGRESSED);
	ck_assert_int_eq(r->base_from, 6);
	/* the baseline is the median of the jobs since the step (at the new
	 * level), and the basis counts those */
	ck_assert_double_eq_tol(r->baseline / measure(0, 0, 0.06), 1, 0.02);
	ck_assert_uint_eq(r->base_of.runs, K - 6);
	ck_assert_uint_eq(r->n_baseline, K - 6);
	ck_assert_str_eq(r->base_of.first_commit, base.jobs[6].commit);
	ck_assert_str_eq(r->base_of.first_date, base.jobs[6].date);
	ck_assert_str_eq(r->base_of.last_commit, base.jobs[K - 1].commit);
	since_commit = base.jobs[6].commit;
	pg_buf_printf(&want, "median of %d runs of main since its last whole-run change, %.12s..",
		      K - 6, since_commit);
	ck_assert_msg(!strncmp(r->basis, want.ptr, want.len), "%s", r->basis);
	js = pg_comparison_json(&c);
	for (size_t i = 0; i < json_array_size(json_object_get(js, "rows")); i++) {
		json_t *row = json_array_get(json_object_get(js, "rows"), i);
		if (strcmp(json_string_value(json_object_get(row, "point")), names[0]) ||
		    strcmp(json_string_value(json_object_get(row, "metric")), "output_throughput"))
			continue;
		basis = json_object_get(row, "basis");
		ck_assert_int_eq(json_integer_value(json_object_get(basis, "runs")), K - 6);
		ck_assert_str_eq(
			json_string_value(json_array_get(json_object_get(basis, "commits"), 0)),
			since_commit);
	}
	json_decref(js);
	/* the chart draws every run, its window shaded from the step */
	ck_assert_ptr_nonnull(r->trail);
	ck_assert_uint_eq(r->trail->n, K);
	ck_assert_uint_eq(r->trail->from, 6);
	ck_assert(pg_trends_evidence_svg(&svg, r, NULL));
	pg_buf_reset(&want);
	pg_buf_printf(&want, "baseline window: %d runs", K - 6);
	ck_assert_msg(strstr(svg.ptr, want.ptr), "%s", svg.ptr);
	tu_assert_golden("golden/gate/evidence-chart-since-change.svg", svg.ptr);
	pg_buf_release(&svg);
	pg_buf_release(&want);
	pg_comparison_release(&c);
	free_run(&run);
	pg_baseline_release(&base);
	pg_policy_release(&policy);
}
END_TEST

START_TEST(a_whole_run_step_moves_the_level)
{
	struct pg_policy policy;
	struct pg_baseline base;
	struct pg_comparison c;
	struct run run;
	bool common = false;

	pg_policy_init(&policy);
	/* every point 6% worse from job 6 on (a driver upgrade) */
	history(&base, &policy, P, 6, -1, 0.06);
	for (size_t i = 0; i < base.n_changes; i++)
		common |= !base.changes[i].point && base.changes[i].job == 6 &&
			  base.changes[i].shift > 0.05;
	ck_assert(common);
	/* single points keep their whole window: the decision takes each
	 * job's offset out */
	ck_assert_int_eq(pg_baseline_find(&base, names[0])->runs, K);
	/* a PR at the new level: the whole run is judged against the jobs
	 * since the step */
	make_run(&run, P, 0.06, NULL, NULL, 12);
	pg_compare(&c, &policy, &base, run.pts, run.n, NULL, 0, NULL);
	ck_assert_int_eq(common_of(&c, "output_throughput")->verdict, PG_VERDICT_UNCHANGED);
	ck_assert_int_eq(c.outcome, PG_OUTCOME_PASS);
	pg_comparison_release(&c);
	free_run(&run);
	pg_baseline_release(&base);
	pg_policy_release(&policy);
}
END_TEST

START_TEST(history_marks_and_reports_changes)
{
	struct pg_policy policy;
	struct pg_history hs[P];
	struct pg_history_analysis a;
	struct pg_buf out = PG_BUF_INIT;
	size_t bad;

	pg_policy_init(&policy);
	memset(hs, 0, sizeof(hs));
	for (int p = 0; p < P; p++) {
		hs[p].point = strdup(names[p]);
		for (int j = 0; j < K; j++)
			add_record(&hs[p], j, p, NULL, p == 1 && j >= 10 ? 0.07 : 0);
	}
	pg_history_analyse(&a, hs, P, NULL, &policy, 0, true);
	pg_history_trend(&out, hs, 1, &a, "output_throughput", 0);
	/* the sparkline marks where the level changed, then the commits */
	ck_assert_ptr_nonnull(strstr(out.ptr, "|"));
	ck_assert_ptr_nonnull(strstr(out.ptr, "step: 6.9% worse"));
	ck_assert_ptr_nonnull(strstr(out.ptr, "between a0009"));
	pg_buf_reset(&out);
	bad = pg_history_changes_markdown(&out, hs, P, &a, &policy, "H100", NULL, 0);
	ck_assert_uint_ge(bad, 1);
	ck_assert_ptr_nonnull(strstr(out.ptr, "| serving_a_qps_4 | Output token throughput"));
	ck_assert_ptr_nonnull(strstr(out.ptr, "| 2026-11-11 |"));
	/* only changes that began lately count for a nightly's exit code */
	ck_assert_uint_eq(pg_history_changes_markdown(&out, hs, P, &a, &policy, "H100", NULL, 3),
			  0);
	pg_buf_release(&out);
	pg_history_analysis_release(&a);
	for (int p = 0; p < P; p++)
		pg_history_release(&hs[p]);
	pg_policy_release(&policy);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Missing means planned and not produced                              */

START_TEST(missing_is_planned_and_not_produced)
{
	struct pg_policy policy;
	struct pg_baseline base;
	struct pg_comparison c;
	struct run run;
	struct pg_strv plan = PG_STRV_INIT;
	bool only[P] = { true, true, true, true, true, false, false, false };

	pg_policy_init(&policy);
	history(&base, &policy, P, -1, 0, 0);
	/* the step plans five points and runs four of them */
	for (int p = 0; p < 5; p++)
		pg_strv_push(&plan, names[p]);
	only[4] = false;
	make_run(&run, P, 0.0, NULL, only, 13);
	pg_compare(&c, &policy, &base, run.pts, run.n, NULL, 0,
		   &(struct pg_compare_opts){ .plan = &plan });
	/* baseline points outside the plan: not in this suite, no rows */
	ck_assert_uint_eq(c.not_in_suite.n, 3);
	ck_assert(in_strv(&c.not_in_suite, names[7]));
	for (size_t i = 0; i < c.n; i++)
		ck_assert_str_ne(c.rows[i].point, names[7]);
	/* the planned point without a result is missing: exit 3 */
	ck_assert_int_eq(c.outcome, PG_OUTCOME_INFRA);
	ck_assert_uint_eq(c.counts[PG_VERDICT_MISSING], 1);
	pg_comparison_release(&c);

	/* without a plan every baseline point is expected */
	pg_compare(&c, &policy, &base, run.pts, run.n, NULL, 0, NULL);
	ck_assert_uint_eq(c.counts[PG_VERDICT_MISSING], 4);
	pg_comparison_release(&c);
	free_run(&run);

	/* the plan run in full: nothing missing, a pass */
	only[4] = true;
	make_run(&run, P, 0.0, NULL, only, 14);
	pg_compare(&c, &policy, &base, run.pts, run.n, NULL, 0,
		   &(struct pg_compare_opts){ .plan = &plan });
	ck_assert_int_eq(c.counts[PG_VERDICT_MISSING], 0);
	ck_assert_int_le(c.outcome, PG_OUTCOME_WARN);
	pg_comparison_release(&c);
	free_run(&run);
	pg_strv_release(&plan);
	pg_baseline_release(&base);
	pg_policy_release(&policy);
}
END_TEST

START_TEST(points_not_seen_lately_age_out)
{
	struct pg_policy policy;
	struct pg_history hs[P];
	struct pg_baseline base;
	struct pg_comparison c;
	struct run run;
	bool only[P] = { true, true, true, true, true, true, true, false };

	pg_policy_init(&policy);
	policy.history_window = 6;
	memset(hs, 0, sizeof(hs));
	/* point 7 was recorded in the first 5 jobs only, then dropped */
	for (int p = 0; p < P; p++) {
		hs[p].point = strdup(names[p]);
		for (int j = 0; j < K; j++)
			if (p != 7 || j < 5)
				add_record(&hs[p], j, p, NULL, 0);
	}
	memset(&base, 0, sizeof(base));
	base.kind = strdup("git");
	pg_history_baseline_build(&base, hs, P, NULL, &policy);
	pg_baseline_sort(&base);
	ck_assert(pg_baseline_find(&base, names[7])->aged);
	ck_assert(!pg_baseline_find(&base, names[6])->aged);
	make_run(&run, P, 0.0, NULL, only, 15);
	pg_compare(&c, &policy, &base, run.pts, run.n, NULL, 0, NULL);
	ck_assert_uint_eq(c.counts[PG_VERDICT_MISSING], 0);
	ck_assert(in_strv(&c.aged_out, names[7]));
	ck_assert_int_le(c.outcome, PG_OUTCOME_WARN);
	pg_comparison_release(&c);
	free_run(&run);
	pg_baseline_release(&base);
	for (int p = 0; p < P; p++)
		pg_history_release(&hs[p]);
	pg_policy_release(&policy);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Small steps and thresholds baselines                                */

START_TEST(methods_by_what_there_is)
{
	struct pg_policy policy;
	struct pg_baseline base;
	struct pg_comparison c;
	struct run run;
	double extra[P] = { 0 };

	pg_policy_init(&policy);
	/* two points: no offset to take out, each alone against the
	 * history's job-to-job spread */
	history(&base, &policy, 2, -1, 0, 0);
	extra[1] = 0.12;
	make_run(&run, 2, 0.0, extra, NULL, 16);
	pg_compare(&c, &policy, &base, run.pts, run.n, NULL, 0, NULL);
	ck_assert_int_eq(row_of(&c, names[1], "output_throughput")->method, PG_METHOD_HISTORY);
	ck_assert_int_eq(row_of(&c, names[1], "output_throughput")->outcome, PG_OUTCOME_FAIL);
	ck_assert_int_eq(row_of(&c, names[0], "output_throughput")->verdict, PG_VERDICT_UNCHANGED);
	ck_assert_uint_eq(c.n_commons, 0);
	pg_comparison_release(&c);
	free_run(&run);
	pg_baseline_release(&base);

	/* a thresholds file of one published job: the run's own points give
	 * the noise (crosswise); the same job 2% slow everywhere passes */
	memset(&base, 0, sizeof(base));
	base.kind = strdup("thresholds");
	for (int p = 0; p < P; p++) {
		struct pg_base_point *bp = pg_baseline_add(&base, names[p], PG_SUITE_SERVING);
		for (size_t m = 0; m < N(mets); m++)
			pg_base_point_add_metric(bp, pg_metric_by_id(PG_SUITE_SERVING, mets[m].id),
						 measure((int)m, p, leftover(3, p)), NULL, 0);
	}
	pg_baseline_sort(&base);
	memset(extra, 0, sizeof(extra));
	make_run(&run, P, 0.02, NULL, NULL, 17);
	pg_compare(&c, &policy, &base, run.pts, run.n, NULL, 0, NULL);
	ck_assert_int_eq(row_of(&c, names[1], "output_throughput")->method, PG_METHOD_CROSSWISE);
	ck_assert_int_eq(c.outcome, PG_OUTCOME_PASS);
	/* no job-to-job spread to test a whole-run change: twice the
	 * tolerance (2 x 2.5%) */
	ck_assert_int_eq(common_of(&c, "output_throughput")->method, PG_METHOD_TOLERANCE);
	ck_assert_double_eq_tol(common_of(&c, "output_throughput")->tolerance, 0.05, 1e-12);
	pg_comparison_release(&c);
	free_run(&run);
	extra[5] = 0.06;
	make_run(&run, P, 0.02, extra, NULL, 18);
	pg_compare(&c, &policy, &base, run.pts, run.n, NULL, 0, NULL);
	ck_assert_int_eq(row_of(&c, names[5], "output_throughput")->outcome, PG_OUTCOME_FAIL);
	pg_comparison_release(&c);
	free_run(&run);

	/* one point: the tolerance alone */
	make_run(&run, 1, 0.03, NULL, NULL, 19);
	pg_compare(&c, &policy, &base, run.pts, run.n, NULL, 0, NULL);
	ck_assert_int_eq(row_of(&c, names[0], "output_throughput")->method, PG_METHOD_TOLERANCE);
	ck_assert_int_eq(row_of(&c, names[0], "output_throughput")->outcome, PG_OUTCOME_FAIL);
	pg_comparison_release(&c);
	free_run(&run);
	pg_baseline_release(&base);
	pg_policy_release(&policy);
}
END_TEST

/* One point's history of `jobs` jobs; flat: every job measures the same
 * (a job-to-job spread of exactly 0). */
static void lone_history(struct pg_baseline *base, const struct pg_policy *policy, int jobs,
			 bool flat)
{
	struct pg_history h;

	memset(&h, 0, sizeof(h));
	memset(base, 0, sizeof(*base));
	h.point = strdup(names[0]);
	for (int j = 0; j < jobs; j++)
		add_record(&h, j, 0, NULL, flat ? -(job_offsets[j] + leftover(j, 0)) : 0);
	base->gpu = strdup("H100");
	base->kind = strdup("git");
	pg_history_baseline_build(base, &h, 1, NULL, policy);
	pg_baseline_sort(base);
	pg_history_release(&h);
}

/* The lone point's re-run, `extra` worse: its verdict and the step's
 * outcome (confirmed exactly when regressed). */
static void lone_rerun(const struct pg_policy *policy, const struct pg_baseline *base,
		       const struct run *first, double extra, int seed, enum pg_verdict want,
		       enum pg_outcome outcome)
{
	struct pg_comparison c;
	struct run again;
	double e[P] = { extra };
	const struct pg_cmp_row *r;

	make_run(&again, 1, 0.0, e, NULL, seed);
	pg_compare(&c, policy, base, first->pts, first->n, again.pts, again.n, NULL);
	r = row_of(&c, names[0], "output_throughput");
	ck_assert_int_eq(r->verdict, want);
	ck_assert(r->confirmed == (want == PG_VERDICT_REGRESSED));
	ck_assert_int_eq(c.outcome, outcome);
	pg_comparison_release(&c);
	free_run(&again);
}

/* A lone point whose history's spread is 0 (flat: nothing varies, so any
 * change beyond the tolerance is certain) or unknown (2 jobs: no spread,
 * insufficient data, never a regression). The re-run's test stays
 * defined; it once wrote through a NULL "better" side there (41d0673)
 * and crashed the default build's confirm path. */
START_TEST(an_untestable_rerun_falls_back_on_the_tolerance)
{
	/* 2 jobs: too few for a spread (3), enough for a baseline when the
	 * policy asks for only 2 */
	static const struct {
		int jobs;
		bool flat;
	} cases[] = { { K, true }, { 2, false } };
	struct pg_policy policy;

	pg_policy_init(&policy);
	policy.min_history = 2;
	for (size_t k = 0; k < N(cases); k++) {
		struct pg_baseline base;
		struct pg_comparison c;
		struct run first;
		double worse[P] = { 0.10 };
		const struct pg_cmp_row *r;

		lone_history(&base, &policy, cases[k].jobs, cases[k].flat);
		make_run(&first, 1, 0.0, worse, NULL, 20);
		pg_compare(&c, &policy, &base, first.pts, first.n, NULL, 0, NULL);
		r = row_of(&c, names[0], "output_throughput");
		if (!cases[k].flat) {
			/* no spread to test against: insufficient data, never a
			 * regression, nothing to re-run */
			ck_assert_int_eq(r->verdict, PG_VERDICT_INSUFFICIENT);
			ck_assert_ptr_nonnull(strstr(r->note, "no run-to-run spread measured yet"));
			ck_assert_int_ne(c.outcome, PG_OUTCOME_FAIL);
			ck_assert_uint_eq(c.rerun.n, 0);
			pg_comparison_release(&c);
			free_run(&first);
			pg_baseline_release(&base);
			continue;
		}
		ck_assert_msg(r->method == PG_METHOD_HISTORY, "case %zu: method %d", k, r->method);
		ck_assert_msg(r->verdict == PG_VERDICT_REGRESSED, "case %zu: verdict %d", k,
			      r->verdict);
		ck_assert(in_strv(&c.rerun, names[0]));
		pg_comparison_release(&c);
		/* beyond the tolerance again: confirmed; a clean re-run: not
		 * reproduced, a warning */
		lone_rerun(&policy, &base, &first, 0.10, 21, PG_VERDICT_REGRESSED, PG_OUTCOME_FAIL);
		lone_rerun(&policy, &base, &first, 0.0, 22, PG_VERDICT_NOT_REPRODUCED,
			   PG_OUTCOME_WARN);
		free_run(&first);
		pg_baseline_release(&base);
	}
	pg_policy_release(&policy);
}
END_TEST

/* The change-point search as it was written first (a selection per side
 * per split): the sweeps that replaced it must give the same answers. */
struct ref_cp {
	const double *x;
	size_t min_seg, *out, max, n_out;
	double p_max, min_shift;
};

static void ref_segment(struct ref_cp *cx, size_t lo, size_t hi)
{
	size_t n = hi - lo, m = cx->min_seg, best = 0;
	double best_t = -1, shift = 0, p;
	double *buf = malloc((n ? n : 1) * sizeof(double));

	if (hi - lo < 2 * m || cx->n_out >= cx->max) {
		free(buf);
		return;
	}
	for (size_t tau = lo + m; tau + m <= hi; tau++) {
		double m1, m2, sd, t, n1 = (double)(tau - lo), n2 = (double)(hi - tau);
		memcpy(buf, cx->x + lo, (tau - lo) * sizeof(double));
		m1 = pg_cmpstat_median_inplace(buf, tau - lo);
		memcpy(buf, cx->x + tau, (hi - tau) * sizeof(double));
		m2 = pg_cmpstat_median_inplace(buf, hi - tau);
		for (size_t i = lo; i < hi; i++)
			buf[i - lo] = cx->x[i] - (i < tau ? m1 : m2);
		sd = pg_cmpstat_robust_sd(buf, n, 0);
		if (!(sd > 0))
			sd = 1e-300;
		t = fabs(m2 - m1) / (sd * sqrt(M_PI / 2 * (1 / n1 + 1 / n2)));
		if (t > best_t) {
			best_t = t;
			best = tau;
			shift = m2 - m1;
		}
	}
	free(buf);
	p = 2 * pg_cmpstat_t_sf(best_t, 0.9 * (double)(n - 2)) * (double)(n - 2 * m + 1);
	if (!(p < cx->p_max) || fabs(shift) < cx->min_shift)
		return;
	cx->out[cx->n_out++] = best;
	ref_segment(cx, lo, best);
	ref_segment(cx, best, hi);
}

static int cmp_sz(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

START_TEST(change_points_as_first_written)
{
	uint64_t state = 12345;
	double x[80];
	size_t got[16], want[16], found = 0;

	/* shifts to reach: none, below every step, between the steps (0.08,
	 * 0.1, 0.2: some segments have none that reaches it, and the search
	 * stops early), and above them all */
	static const double min_shift[] = { 0, 0.01, 0.0799, 0.08, 0.09, 0.15, 0.3 };

	for (int trial = 0; trial < 6000; trial++) {
		size_t n = 6 + (size_t)(trial % 75), ng;
		struct pg_cp_opts o = { 2 + (size_t)(trial % 3), trial % 5 ? 0.001 : 0.05,
					trial % 4 ? 0
						  : min_shift[(trial / 4 * 3 + trial / 28) % 7] };
		struct ref_cp cx = { x, o.min_seg, want, 16, 0, o.p_max, o.min_shift };
		for (size_t i = 0; i < n; i++) {
			double u;
			state = state * 6364136223846793005ull + 1442695040888963407ull;
			u = (double)(state >> 11) / 9007199254740992.0;
			/* levels that step, noise, ties (rounded), now and then a NAN */
			x[i] = (i > n / 3 ? 0.1 * (double)(trial % 3) : 0) +
			       (i > 2 * n / 3 && trial % 2 ? -0.08 : 0) + 0.02 * (u - 0.5);
			if (trial % 7 == 0)
				x[i] = round(x[i] * 100) / 100;
			if (trial % 11 == 0 && (state >> 60) == 0)
				x[i] = NAN;
		}
		ng = pg_cmpstat_change_points(x, n, &o, got, 16);
		ref_segment(&cx, 0, n);
		qsort(want, cx.n_out, sizeof(size_t), cmp_sz);
		ck_assert_uint_eq(ng, cx.n_out);
		for (size_t i = 0; i < ng; i++)
			ck_assert_uint_eq(got[i], want[i]);
		found += ng;
	}
	/* the series have steps to find */
	ck_assert_uint_gt(found, 2000);
}
END_TEST

START_TEST(trend_below_is_trend)
{
	uint64_t state = 99;
	double x[70];
	size_t kept = 0;

	for (int trial = 0; trial < 2000; trial++) {
		size_t n = 2 + (size_t)(trial % 67);
		struct pg_trend a, b;
		for (size_t i = 0; i < n; i++) {
			state = state * 6364136223846793005ull + 1442695040888963407ull;
			x[i] = 0.0005 * (double)(trial % 9) * (double)i +
			       0.01 * ((double)(state >> 11) / 9007199254740992.0 - 0.5);
			if (trial % 13 == 0 && (state >> 61) == 0)
				x[i] = NAN;
		}
		pg_cmpstat_trend(&a, x, n);
		pg_cmpstat_trend_below(&b, x, n, 0.001);
		ck_assert(a.p_value == b.p_value || (isnan(a.p_value) && isnan(b.p_value)));
		if (b.p_value < 0.001) {
			ck_assert(a.slope == b.slope);
			ck_assert_uint_eq(a.start, b.start);
			kept++;
		} else {
			ck_assert(isnan(b.slope));
		}
	}
	/* both kinds of series were there */
	ck_assert_uint_gt(kept, 200);
	ck_assert_uint_lt(kept, 1800);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The selections and the job grouping, against them as first written */

/* The selection the medians used first (Lomuto's partition, a branch per
 * comparison), after leaving the NANs out in order: which of -0 and +0
 * it returns is the reference too. */
static double ref_median(double *x, size_t n)
{
	size_t k = 0, lo = 0, hi, want;

	for (size_t i = 0; i < n; i++)
		if (!isnan(x[i]))
			x[k++] = x[i];
	if (!k)
		return NAN;
	want = k / 2;
	hi = k - 1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2, store = lo;
		double pivot, t;
#define REF_SWAP(a, b) (t = (a), (a) = (b), (b) = t)
		if (x[mid] < x[lo])
			REF_SWAP(x[mid], x[lo]);
		if (x[hi] < x[lo])
			REF_SWAP(x[hi], x[lo]);
		if (x[mid] < x[hi])
			REF_SWAP(x[mid], x[hi]);
		pivot = x[hi];
		for (size_t i = lo; i < hi; i++)
			if (x[i] < pivot) {
				REF_SWAP(x[i], x[store]);
				store++;
			}
		REF_SWAP(x[store], x[hi]);
#undef REF_SWAP
		if (store == want)
			break;
		if (want < store)
			hi = store - 1;
		else
			lo = store + 1;
	}
	if (k % 2)
		return x[want];
	{
		double low = x[0];
		for (size_t i = 1; i < want; i++)
			if (x[i] > low)
				low = x[i];
		return (low + x[want]) / 2;
	}
}

static bool same_bits(double a, double b)
{
	return (isnan(a) && isnan(b)) || !memcmp(&a, &b, sizeof(a));
}

/* Random values with NANs, ties, infinities and zeros of both signs, as
 * a trial asks (u: the state of a generator). */
static double odd_value(uint64_t *u, int trial)
{
	uint64_t r;
	*u = *u * 6364136223846793005ull + 1442695040888963407ull;
	r = *u >> 11;
	switch (trial % 6 == 5 ? r % 16 : 15) {
	case 0:
		return NAN;
	case 1:
		return 0.0;
	case 2:
		return trial % 12 == 5 ? -0.0 : 0.0;
	case 3:
		return r % 5 ? 1.0 : INFINITY;
	default:
		break;
	}
	if (trial % 3 == 0)
		return (double)(r % 7) - 3; /* ties, everywhere */
	return (double)r / 9007199254740992.0 - 0.5;
}

START_TEST(medians_as_first_selected)
{
	uint64_t u = 7;
	size_t n_max = 20000;
	double *x = malloc(n_max * sizeof(double)), *y = malloc(n_max * sizeof(double));
	size_t zeros = 0;

	for (int trial = 0; trial < 4000; trial++) {
		size_t n = trial == 3999 ? n_max : (size_t)trial % 301;
		double got, want;
		for (size_t i = 0; i < n; i++)
			x[i] = y[i] = odd_value(&u, trial);
		got = pg_cmpstat_median_inplace(x, n);
		want = ref_median(y, n);
		ck_assert_msg(same_bits(got, want), "trial %d, n %zu: %.17g, not %.17g", trial, n,
			      got, want);
		zeros += want == 0;
	}
	/* the zeros' signs were put to the test */
	ck_assert_uint_gt(zeros, 50);
	free(x);
	free(y);
}
END_TEST

/* The median polish as first written, on ref_median. */
static void ref_polish(const double *y, size_t rows, size_t cols, double *row, double *col)
{
	double *buf = malloc((rows > cols ? rows : cols) * sizeof(double));

	for (size_t r = 0; r < rows; r++)
		row[r] = 0;
	for (int it = 0; it < 20; it++) {
		double change = 0, centre;
		for (size_t c = 0; c < cols; c++) {
			double old = col[c];
			for (size_t r = 0; r < rows; r++)
				buf[r] = isnan(row[r]) ? NAN : y[r * cols + c] - row[r];
			col[c] = ref_median(buf, rows);
			if (it && !isnan(col[c]))
				change = fmax(change, fabs(col[c] - old));
		}
		for (size_t r = 0; r < rows; r++) {
			for (size_t c = 0; c < cols; c++)
				buf[c] = y[r * cols + c] - col[c];
			row[r] = ref_median(buf, cols);
		}
		memcpy(buf, row, rows * sizeof(double));
		centre = ref_median(buf, rows);
		if (isnan(centre))
			break;
		for (size_t r = 0; r < rows; r++)
			row[r] -= centre;
		for (size_t c = 0; c < cols; c++)
			col[c] += centre;
		if (it && change < 1e-12)
			break;
	}
	free(buf);
}

START_TEST(median_polish_as_first_written)
{
	uint64_t u = 11;
	double y[40 * 50], yt[40 * 50], row[40], col[50], rrow[40], rcol[50];

	for (int trial = 0; trial < 300; trial++) {
		size_t rows = 1 + (size_t)trial % 40, cols = 1 + (size_t)(trial * 7) % 50;
		for (size_t r = 0; r < rows; r++)
			for (size_t c = 0; c < cols; c++)
				y[r * cols + c] = 0.01 * (double)r + 0.1 * (double)c +
						  (trial % 4 ? 0.001 : 1) * odd_value(&u, trial);
		pg_cmpstat_median_polish(y, rows, cols, row, col);
		ref_polish(y, rows, cols, rrow, rcol);
		for (size_t r = 0; r < rows; r++)
			ck_assert_msg(same_bits(row[r], rrow[r]), "trial %d: row %zu", trial, r);
		for (size_t c = 0; c < cols; c++)
			ck_assert_msg(same_bits(col[c], rcol[c]), "trial %d: col %zu", trial, c);
		/* the table by columns: the same */
		for (size_t r = 0; r < rows; r++)
			for (size_t c = 0; c < cols; c++)
				yt[c * rows + r] = y[r * cols + c];
		pg_cmpstat_median_polish_cols(yt, rows, cols, row, col);
		for (size_t r = 0; r < rows; r++)
			ck_assert_msg(same_bits(row[r], rrow[r]), "trial %d: row %zu", trial, r);
		for (size_t c = 0; c < cols; c++)
			ck_assert_msg(same_bits(col[c], rcol[c]), "trial %d: col %zu", trial, c);
	}
}
END_TEST

/* The jobs as first grouped: every used record's key sorted (by date,
 * commit, build, run, then point and position), one job per distinct key,
 * the jobs by date, then by their lines' earliest position, then key. */
struct ref_key {
	const struct pg_history_rec *rec;
	size_t point, index, first, id;
};

static int ref_str_cmp(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int ref_rec_cmp(const struct pg_history_rec *x, const struct pg_history_rec *y)
{
	int c = ref_str_cmp(x->date, y->date);
	if (!c)
		c = ref_str_cmp(x->commit, y->commit);
	if (!c)
		c = ref_str_cmp(x->build_url, y->build_url);
	if (!c)
		c = ref_str_cmp(x->run, y->run);
	return c;
}

static int ref_key_cmp(const void *a, const void *b)
{
	const struct ref_key *x = a, *y = b;
	int c = ref_rec_cmp(x->rec, y->rec);
	if (c)
		return c;
	if (x->point != y->point)
		return x->point < y->point ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

static int ref_order_cmp(const void *a, const void *b)
{
	const struct ref_key *x = a, *y = b;
	int c = ref_str_cmp(x->rec->date, y->rec->date);
	if (c)
		return c;
	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

/* A copy of s, NULL or "" now and then when it is empty (the same key). */
static char *key_str(const char *s, uint64_t *u)
{
	*u = *u * 6364136223846793005ull + 1442695040888963407ull;
	if (!*s && (*u >> 62) & 1)
		return NULL;
	return strdup(s);
}

START_TEST(jobs_as_first_grouped)
{
	static const char *const dates[] = { "2026-01-02", "2026-01-01", "2026-01-02", "" };
	static const char *const commits[] = { "aaa", "bbb", "", "ccc" };
	static const char *const runs[] = { "h@1", "", "h@2" };
	uint64_t u = 3;
	size_t jobs_seen = 0;

	for (int trial = 0; trial < 60; trial++) {
		size_t n = 1 + (size_t)trial % 7, n_keys = 0, n_jobs = 0;
		struct pg_history hs[7];
		bool *use_rows[7];
		const bool *use[7];
		struct ref_key *keys = malloc(7 * 40 * sizeof(*keys)), *order;
		long *job_of = malloc(7 * 40 * sizeof(long));
		struct pg_history_analysis a;

		memset(hs, 0, sizeof(hs));
		for (size_t i = 0; i < n; i++) {
			size_t nr = (size_t)(trial * 3 + (int)i) % 40;
			hs[i].point = strdup("p");
			hs[i].recs = calloc(nr ? nr : 1, sizeof(struct pg_history_rec));
			hs[i].n = hs[i].cap = nr;
			use_rows[i] = malloc((nr ? nr : 1) * sizeof(bool));
			use[i] = trial % 3 ? use_rows[i] : NULL;
			for (size_t k = 0; k < nr; k++) {
				struct pg_history_rec *r = &hs[i].recs[k];
				uint64_t v;
				u = u * 6364136223846793005ull + 1442695040888963407ull;
				v = u >> 20;
				/* strings of their own (not interned): equal keys by content */
				r->date = key_str(dates[v % 4], &u);
				r->commit = key_str(commits[(v >> 2) % 4], &u);
				r->build_url = key_str((v >> 4) % 2 ? "https://b/1" : "", &u);
				r->run = key_str(runs[(v >> 5) % 3], &u);
				r->metrics = json_object();
				use_rows[i][k] = (v >> 8) % 5 != 0;
				if (!use[i] || use_rows[i][k])
					keys[n_keys++] = (struct ref_key){ r, i, k, k, 0 };
			}
		}
		/* the reference */
		qsort(keys, n_keys, sizeof(*keys), ref_key_cmp);
		order = malloc((n_keys ? n_keys : 1) * sizeof(*order));
		for (size_t x = 0; x < n_keys; x++) {
			if (!x || ref_rec_cmp(keys[x - 1].rec, keys[x].rec)) {
				order[n_jobs] = keys[x];
				order[n_jobs].id = n_jobs;
				n_jobs++;
			} else if (keys[x].index < order[n_jobs - 1].first) {
				order[n_jobs - 1].first = keys[x].index;
			}
			keys[x].id = n_jobs - 1;
		}
		qsort(order, n_jobs, sizeof(*order), ref_order_cmp);
		for (size_t x = 0; x < n_keys; x++)
			for (size_t j = 0; j < n_jobs; j++)
				if (order[j].id == keys[x].id)
					job_of[keys[x].point * 40 + keys[x].index] = (long)j;

		pg_history_analyse(&a, hs, n, trial % 3 ? use : NULL, NULL, 0, false);
		ck_assert_uint_eq(a.n_jobs, n_jobs);
		for (size_t j = 0; j < n_jobs; j++) {
			/* the job's strings are its first record's (by point, then position) */
			ck_assert_ptr_eq(a.jobs[j].date, order[j].rec->date);
			ck_assert_ptr_eq(a.jobs[j].commit, order[j].rec->commit);
			ck_assert_ptr_eq(a.jobs[j].build_url, order[j].rec->build_url);
		}
		for (size_t i = 0; i < n; i++)
			for (size_t k = 0; k < hs[i].n; k++)
				ck_assert_int_eq(a.rec_job[i][k], !use[i] || use_rows[i][k]
									  ? job_of[i * 40 + k]
									  : -1);
		jobs_seen += n_jobs;
		pg_history_analysis_release(&a);
		for (size_t i = 0; i < n; i++) {
			pg_history_release(&hs[i]);
			free(use_rows[i]);
		}
		free(keys);
		free(order);
		free(job_of);
	}
	/* keys of several jobs, met in several points */
	ck_assert_uint_gt(jobs_seen, 300);
}
END_TEST

/* Main regressed in its newest run and its gate said so (the record's
 * "regressed"): a PR at that level is main's known change, a warning;
 * a PR worse than the old level by something else still fails. */
START_TEST(main_s_known_change_warns_once_reported)
{
	struct pg_policy policy;
	struct pg_baseline base;
	struct pg_comparison c;
	struct pg_history hs[P];
	struct run run;
	double extra[P] = { 0 };
	const struct pg_cmp_row *r;

	pg_policy_init(&policy);
	memset(hs, 0, sizeof(hs));
	for (int p = 0; p < P; p++) {
		hs[p].point = strdup(names[p]);
		for (int j = 0; j < K; j++)
			add_record(&hs[p], j, p, NULL, j == K - 1 && p == 3 ? 0.08 : 0);
	}
	hs[3].recs[K - 1].regressed = strdup("output_throughput,median_ttft_ms,median_tpot_ms");
	baseline_of(&base, hs, P, &policy);

	extra[3] = 0.08;
	make_run(&run, P, 0.0, extra, NULL, 21);
	pg_compare(&c, &policy, &base, run.pts, run.n, NULL, 0, NULL);
	r = row_of(&c, names[3], "output_throughput");
	ck_assert_int_eq(r->verdict, PG_VERDICT_REGRESSED);
	ck_assert_int_eq(r->outcome, PG_OUTCOME_WARN);
	ck_assert(r->known);
	ck_assert_msg(strstr(r->note, "main's known change"), "%s", r->note);
	ck_assert_int_ne(c.outcome, PG_OUTCOME_FAIL);
	pg_comparison_release(&c);
	free_run(&run);

	/* the same history without the mark: the run where main's change
	 * appeared is no proof of it, and main's next run at 8% fails */
	free(hs[3].recs[K - 1].regressed);
	hs[3].recs[K - 1].regressed = NULL;
	pg_baseline_release(&base);
	baseline_of(&base, hs, P, &policy);
	make_run(&run, P, 0.0, extra, NULL, 21);
	pg_compare(&c, &policy, &base, run.pts, run.n, NULL, 0, NULL);
	ck_assert_int_eq(row_of(&c, names[3], "output_throughput")->outcome, PG_OUTCOME_FAIL);
	pg_comparison_release(&c);

	/* ... but a pull request branched off that newest run carries its
	 * level: main's change, a warning, whatever main's gate said */
	pg_compare(&c, &policy, &base, run.pts, run.n, NULL, 0,
		   &(struct pg_compare_opts){ .pull_request = true });
	r = row_of(&c, names[3], "output_throughput");
	ck_assert_int_eq(r->outcome, PG_OUTCOME_WARN);
	ck_assert(r->known);
	ck_assert_msg(strstr(r->note, "main's change, not this pull request's"), "%s", r->note);
	ck_assert_int_ne(c.outcome, PG_OUTCOME_FAIL);
	pg_comparison_release(&c);
	free_run(&run);

	/* a pull request that adds a change of its own on top fails */
	extra[3] = 0.16;
	make_run(&run, P, 0.0, extra, NULL, 21);
	pg_compare(&c, &policy, &base, run.pts, run.n, NULL, 0,
		   &(struct pg_compare_opts){ .pull_request = true });
	ck_assert_int_eq(row_of(&c, names[3], "output_throughput")->outcome, PG_OUTCOME_FAIL);
	pg_comparison_release(&c);
	free_run(&run);
	pg_baseline_release(&base);
	for (int p = 0; p < P; p++)
		pg_history_release(&hs[p]);
	pg_policy_release(&policy);
}
END_TEST

/* A history quieter than the default tolerance assumes narrows it: the
 * points' own leftovers are ~0.3% here (the jobs' 1.5% is common to the
 * run and taken out), so a point 2% worse fails where the default 2.5%
 * would pass it; a tolerance the policy names is kept. */
START_TEST(a_quiet_history_narrows_the_default_tolerance)
{
	struct pg_policy policy;
	struct pg_baseline base;
	struct pg_comparison c;
	struct pg_rule_patch patch = { .set = PG_RULE_TOLERANCE, .rule = { .tolerance = 0.025 } };
	struct run run;
	double extra[P] = { 0 };
	const struct pg_cmp_row *r;
	struct pg_buf ev = PG_BUF_INIT;

	pg_policy_init(&policy);
	history(&base, &policy, P, -1, -1, 0);
	extra[2] = 0.02;
	make_run(&run, P, 0.004, extra, NULL, 25);
	pg_compare(&c, &policy, &base, run.pts, run.n, NULL, 0, NULL);
	r = row_of(&c, names[2], "output_throughput");
	ck_assert_double_lt(r->tolerance, 0.02);
	ck_assert_double_ge(r->tolerance, PG_MIN_TOLERANCE);
	ck_assert_int_eq(r->verdict, PG_VERDICT_REGRESSED);
	ck_assert_int_eq(c.outcome, PG_OUTCOME_FAIL);
	pg_comparison_evidence_text(&ev, r);
	ck_assert_msg(strstr(ev.ptr, "(the default 2.5%, narrowed to 4 × the noise"), "%s", ev.ptr);
	/* the clean points are not called regressed at the narrower bar */
	for (int p = 0; p < P; p++)
		if (p != 2)
			ck_assert_int_ne(row_of(&c, names[p], "output_throughput")->verdict,
					 PG_VERDICT_REGRESSED);
	pg_comparison_release(&c);

	/* the policy says 2.5%: kept, and 2% is within it */
	pg_policy_add(&policy, NULL, "output_throughput", &patch, 1);
	pg_compare(&c, &policy, &base, run.pts, run.n, NULL, 0, NULL);
	r = row_of(&c, names[2], "output_throughput");
	ck_assert_double_eq_tol(r->tolerance, 0.025, 1e-12);
	ck_assert_int_ne(r->verdict, PG_VERDICT_REGRESSED);
	pg_comparison_release(&c);
	pg_buf_release(&ev);
	free_run(&run);
	pg_baseline_release(&base);
	pg_policy_release(&policy);
}
END_TEST

/* A metric that first appears part-way through the history (main began
 * measuring it) is judged once it has min_history runs of its own, not
 * on its point's runs: before, insufficient-data and never a regression. */
START_TEST(a_new_metric_waits_for_runs_of_its_own)
{
	struct pg_policy policy;
	struct pg_baseline base;
	struct pg_comparison c;
	struct pg_history hs[P];
	struct run run;
	double extra[P] = { 0 };
	const struct pg_cmp_row *r;

	pg_policy_init(&policy);
	memset(hs, 0, sizeof(hs));
	for (int p = 0; p < P; p++) {
		hs[p].point = strdup(names[p]);
		for (int j = 0; j < K; j++) {
			add_record(&hs[p], j, p, NULL, 0);
			/* TPOT only in the newest job */
			if (j < K - 1)
				json_object_del(hs[p].recs[j].metrics, "median_tpot_ms");
		}
	}
	baseline_of(&base, hs, P, &policy);

	/* TPOT 20% worse at point 5: no spread to judge it by */
	extra[5] = 0.2;
	make_run(&run, P, 0.0, extra, NULL, 23);
	pg_compare(&c, &policy, &base, run.pts, run.n, NULL, 0, NULL);
	r = row_of(&c, names[5], "median_tpot_ms");
	ck_assert_int_eq(r->verdict, PG_VERDICT_INSUFFICIENT);
	ck_assert_int_ne(r->outcome, PG_OUTCOME_FAIL);
	ck_assert_msg(strstr(r->note, "1 run of this metric in the history, 5 needed"), "%s",
		      r->note);
	/* its throughput, with a history, is judged as ever */
	ck_assert_int_eq(row_of(&c, names[5], "output_throughput")->verdict, PG_VERDICT_REGRESSED);
	pg_comparison_release(&c);
	free_run(&run);
	pg_baseline_release(&base);
	for (int p = 0; p < P; p++)
		pg_history_release(&hs[p]);
	pg_policy_release(&policy);
}
END_TEST

static Suite *step_suite(void)
{
	Suite *s = suite_create("step");
	TCase *tc = tcase_create("stats");

	tcase_add_test(tc, student_t_tails);
	tcase_add_test(tc, holm_step_down);
	tcase_add_test(tc, robust_sd_and_median);
	tcase_add_test(tc, change_points_as_first_written);
	tcase_add_test(tc, trend_below_is_trend);
	tcase_add_test(tc, median_polish_splits_jobs_from_points);
	tcase_add_test(tc, medians_as_first_selected);
	tcase_add_test(tc, median_polish_as_first_written);
	tcase_add_test(tc, jobs_as_first_grouped);
	tcase_add_test(tc, change_points_and_trends);
	suite_add_tcase(s, tc);
	tc = tcase_create("rules");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, a_slow_job_is_not_a_regression);
	tcase_add_test(tc, one_point_stands_out_of_its_job);
	tcase_add_test(tc, the_budget_covers_the_whole_step);
	tcase_add_test(tc, the_rerun_must_reproduce);
	tcase_add_test(tc, a_whole_run_change_must_reproduce);
	tcase_add_test(tc, the_window_starts_after_a_step);
	tcase_add_test(tc, main_s_known_change_warns_once_reported);
	tcase_add_test(tc, a_quiet_history_narrows_the_default_tolerance);
	tcase_add_test(tc, a_new_metric_waits_for_runs_of_its_own);
	tcase_add_test(tc, a_whole_run_step_moves_the_level);
	tcase_add_test(tc, a_point_alone_after_a_whole_run_step_rests_on_the_jobs_since);
	tcase_add_test(tc, history_marks_and_reports_changes);
	tcase_add_test(tc, missing_is_planned_and_not_produced);
	tcase_add_test(tc, points_not_seen_lately_age_out);
	tcase_add_test(tc, methods_by_what_there_is);
	tcase_add_test(tc, an_untestable_rerun_falls_back_on_the_tolerance);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(step_suite());
}
