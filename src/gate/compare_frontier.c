#include "gate/compare_frontier.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/jsonw.h"
#include "base/strutil.h"
#include "gate/compare.h"
#include "results/repeats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the decision --------------------------------------------------------- */

static double median_of(const json_t *result, const struct pg_metric *m)
{
	double *v, med;
	size_t n = pg_result_samples(result, m, &v);

	med = n ? pg_median(v, n) : NAN;
	free(v);
	return med;
}

static void fmt_pct(char *out, size_t size, double rel)
{
	char g[PG_FMT_DOUBLE_SIZE];

	pg_fmt_g(g, round(rel * 1000) / 10);
	snprintf(out, size, "%s%s%%", rel > 0 ? "+" : "", g);
}

/* Is metric one the frontier decides for a ladder's points? */
static bool frontier_metric(const struct pg_metric *m)
{
	static const char *const ids[] = { "output_throughput",  "total_token_throughput",
					   "request_throughput", "median_tpot_ms",
					   "mean_tpot_ms",       "median_itl_ms",
					   "mean_itl_ms" };

	for (size_t i = 0; m && i < sizeof(ids) / sizeof(ids[0]); i++)
		if (!strcmp(m->id, ids[i]))
			return true;
	return false;
}

static void demote(struct pg_comparison *c, const struct pg_cmp_point *run,
		   const struct pg_ladder *l)
{
	for (size_t r = 0; r < c->n; r++) {
		struct pg_cmp_row *row = &c->rows[r];
		bool member = false;

		if (!frontier_metric(row->metric))
			continue;
		for (size_t k = 0; k < l->n && !member; k++)
			member = !strcmp(run[l->idx[k]].name, row->point);
		if (!member)
			continue;
		row->rule.gate = false;
		if (row->outcome == PG_OUTCOME_FAIL) {
			struct pg_buf note = PG_BUF_INIT;
			row->outcome = PG_OUTCOME_WARN;
			pg_buf_printf(&note, "the ladder's frontier decides%s%s",
				      row->note ? "; " : "", row->note ? row->note : "");
			free(row->note);
			row->note = pg_buf_detach(&note);
		}
	}
}

/* A baseline metric's run-to-run relative sd: the sd of the logs of its
 * run medians when it has 3 or more runs, else its recorded noise (NAN
 * when none). */
static double run_sd(const struct pg_base_metric *bm)
{
	double mean = 0, var = 0;
	size_t n = bm->n_samples;

	if (bm->runs < 3 || (long)n != bm->runs)
		return bm->noise;
	for (size_t i = 0; i < n; i++)
		if (!(bm->samples[i] > 0))
			return bm->noise;
	for (size_t i = 0; i < n; i++)
		mean += log(bm->samples[i]) / (double)n;
	for (size_t i = 0; i < n; i++)
		var += (log(bm->samples[i]) - mean) * (log(bm->samples[i]) - mean) /
		       (double)(n - 1);
	return sqrt(var);
}

/*
 * What the baseline's runs say about their noise: the runs behind every
 * point (the fewest), and the variance of the offset a run shares across
 * the points -- the spread of each run's mean log throughput relative to
 * the points' medians, less what the points' own noise puts there. Runs
 * line up across points only when every point has the same number of run
 * samples (baseline update --from each run, or a git history of the same
 * runs); otherwise the shared part stays unknown (0).
 */
static void baseline_noise(struct pg_frontier_noise *out, const struct pg_base_metric *const *bt,
			   size_t n)
{
	size_t runs = n ? bt[0]->n_samples : 0;
	double *offset, *sorted, mean = 0, var = 0, own = 0;

	out->runs = 0;
	out->job_var = 0;
	if (n < 3)
		return;
	out->runs = bt[0]->runs;
	for (size_t p = 0; p < n; p++) {
		if (bt[p]->runs < out->runs)
			out->runs = bt[p]->runs;
		if (bt[p]->n_samples != runs || (long)runs != bt[p]->runs || !(run_sd(bt[p]) > 0))
			runs = 0;
	}
	if (runs < 3)
		return;
	offset = pg_xcalloc(runs, sizeof(double));
	sorted = pg_xmalloc(runs * sizeof(double));
	for (size_t p = 0; p < n; p++) {
		double med;
		memcpy(sorted, bt[p]->samples, runs * sizeof(double));
		med = pg_median(sorted, runs);
		for (size_t j = 0; j < runs; j++)
			offset[j] += log(bt[p]->samples[j] / med) / (double)n;
		own += run_sd(bt[p]) * run_sd(bt[p]) / (double)n;
	}
	for (size_t j = 0; j < runs; j++)
		mean += offset[j] / (double)runs;
	for (size_t j = 0; j < runs; j++)
		var += (offset[j] - mean) * (offset[j] - mean) / (double)(runs - 1);
	out->job_var = fmax(0, var - own / (double)n);
	free(offset);
	free(sorted);
}

static void decide_ladder(struct pg_comparison *c, const struct pg_policy *policy,
			  const struct pg_baseline *base, const struct pg_cmp_point *run,
			  const struct pg_ladder *l, const struct pg_metric *fm)
{
	const struct pg_metric *tput = pg_metric_by_id(PG_SUITE_SERVING, "output_throughput");
	const struct pg_metric *tpot = pg_metric_by_id(PG_SUITE_SERVING, "median_tpot_ms");
	struct pg_frontier_point *cur = pg_xcalloc(l->n, sizeof(*cur));
	struct pg_frontier_point *bas = pg_xcalloc(l->n, sizeof(*bas));
	const struct pg_base_metric **bts = pg_xcalloc(l->n, sizeof(*bts));
	struct pg_frontier_noise noise = { 0, 0 };
	size_t nc = 0, nb = 0;
	struct pg_frontier_cmp cmp;
	struct pg_cmp_row *row;
	struct pg_buf note = PG_BUF_INIT;
	char a[48], b[48], s[48];
	double tol;
	int rc;

	for (size_t k = 0; k < l->n; k++) {
		const struct pg_cmp_point *p = &run[l->idx[k]];
		const struct pg_base_point *bp = pg_baseline_find(base, p->name);
		const struct pg_base_metric *bt, *bq;
		double t = median_of(p->result, tput), q = median_of(p->result, tpot);
		double gpus = (double)pg_frontier_gpus(p->result);
		double knob = l->by_rate ? pg_result_qps(p->result)
					 : (double)pg_result_max_concurrency(p->result);

		if (isfinite(t) && q > 0)
			cur[nc++] = (struct pg_frontier_point){ p->name, knob, t / gpus, 1000 / q,
								false };
		bt = bp ? pg_base_point_metric(bp, tput) : NULL;
		bq = bp ? pg_base_point_metric(bp, tpot) : NULL;
		if (bt && bq && isfinite(bt->value) && bq->value > 0) {
			bts[nb] = bt;
			bas[nb++] = (struct pg_frontier_point){ .name = p->name,
								.knob = knob,
								.tput = bt->value / gpus,
								.intvty = 1000 / bq->value,
								.noise_tput = run_sd(bt),
								.noise_intvty = run_sd(bq) };
		}
	}
	baseline_noise(&noise, bts, nb);
	if (nc < 3 || nb < 3)
		goto done;

	rc = pg_frontier_compare(&cmp, bas, nb, cur, nc, PG_FRONTIER_CONFIDENCE, &noise);
	pg_grow((void **)&c->rows, &c->cap, c->n + 1, sizeof(*c->rows));
	row = &c->rows[c->n++];
	memset(row, 0, sizeof(*row));
	row->point = pg_xstrdup(l->label);
	row->test = pg_xstrdup(l->test);
	row->suite = PG_SUITE_SERVING;
	row->qps = l->by_rate ? NAN : l->qps;
	row->max_concurrency = l->by_rate ? l->concurrency : -1;
	row->metric = fm;
	pg_policy_rule(policy, l->label, l->test, fm, &row->rule);
	tol = row->rule.tolerance;
	row->baseline = row->current = row->p_value = NAN;
	row->ci_low = row->ci_high = NAN;
	row->first.ci_low = row->first.ci_high = row->rerun.ci_low = row->rerun.ci_high = NAN;
	row->change = cmp.shift;
	row->tolerance = tol;
	row->n_baseline = nb;
	row->n_current = cmp.matched;

	if (rc) {
		row->verdict = PG_VERDICT_INSUFFICIENT;
		row->outcome = PG_OUTCOME_PASS;
		pg_buf_printf(
			&note,
			"%zu of this run's frontier points fall in the baseline's users-per-GPU "
			"range; 3 are needed",
			cmp.matched);
	} else {
		if (cmp.shift < -tol)
			row->verdict = cmp.hi < 0 ? PG_VERDICT_REGRESSED : PG_VERDICT_NOISY;
		else if (cmp.shift > tol && cmp.lo > 0)
			row->verdict = PG_VERDICT_IMPROVED;
		else
			row->verdict = PG_VERDICT_UNCHANGED;
		row->outcome = row->verdict == PG_VERDICT_REGRESSED
				       ? (row->rule.gate ? PG_OUTCOME_FAIL : PG_OUTCOME_WARN)
			       : row->verdict == PG_VERDICT_NOISY ? PG_OUTCOME_WARN
								  : PG_OUTCOME_PASS;
		fmt_pct(s, sizeof(s), cmp.shift);
		fmt_pct(a, sizeof(a), cmp.lo);
		fmt_pct(b, sizeof(b), cmp.hi);
		pg_buf_printf(&note, "%zu points at equal users/GPU: %s (%g%% interval %s to %s)",
			      cmp.matched, s, PG_FRONTIER_CONFIDENCE * 100, a, b);
	}
	if (cmp.knee_base >= 0 && cmp.knee_cur >= 0) {
		pg_frontier_knob_text(a, sizeof(a), cmp.cur_curve[cmp.knee_cur].knob);
		pg_frontier_knob_text(b, sizeof(b), cmp.base_curve[cmp.knee_base].knob);
		pg_buf_printf(&note, "; knee at %s %s (baseline %s)",
			      l->by_rate ? "qps" : "concurrency", a, b);
	}
	row->note = pg_buf_detach(&note);
	if (row->rule.gate)
		demote(c, run, l);
	pg_frontier_cmp_release(&cmp);
done:
	free(cur);
	free(bas);
	free(bts);
}

void pg_cmp_frontiers(struct pg_comparison *c, const struct pg_policy *policy,
		      const struct pg_baseline *base, const struct pg_cmp_point *run, size_t n_run)
{
	const struct pg_metric *fm = pg_metric_by_id(PG_SUITE_SERVING, "frontier");
	const char **names = pg_xmalloc((n_run ? n_run : 1) * sizeof(*names));
	const json_t **results = pg_xmalloc((n_run ? n_run : 1) * sizeof(*results));
	size_t *at = pg_xmalloc((n_run ? n_run : 1) * sizeof(*at)), n = 0;
	struct pg_ladders ladders;

	for (size_t i = 0; fm && i < n_run; i++) {
		const struct pg_cmp_point *p = &run[i];
		if (p->suite != PG_SUITE_SERVING || p->probe || !p->result || !p->name ||
		    (p->status && strcmp(p->status, "ok")))
			continue;
		names[n] = p->name;
		results[n] = p->result;
		at[n++] = i;
	}
	pg_ladders_find(&ladders, names, results, n);
	for (size_t i = 0; i < ladders.n; i++) {
		/* the ladder's indexes, into the run's points */
		for (size_t k = 0; k < ladders.v[i].n; k++)
			ladders.v[i].idx[k] = at[ladders.v[i].idx[k]];
		decide_ladder(c, policy, base, run, &ladders.v[i], fm);
	}
	pg_ladders_release(&ladders);
	free(names);
	free(results);
	free(at);
}
