/* perfgate buildkite: the comparison with the baseline, and recording the
 * run in the git history. The decisions are the gate's (gate/compare.h);
 * this file only chooses the baseline for the build and reshapes the
 * outcome for the annotation. */
#include "buildkite/step_io.h"

#include "base/alloc.h"
#include "buildkite/job_env.h"
#include "base/buf.h"
#include "gate/compare.h"
#include "base/error.h"
#include "gate/gate_io.h"
#include "baseline/history_io.h"
#include "base/exitcode.h"
#include "telemetry/health_io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct impl {
	struct pg_policy policy;
	struct pg_baseline base;
	struct pg_comparison cmp;
};

/* The branch whose history is the baseline: the PR's base branch, else the
 * configured one, else the pipeline's default branch. */
static const char *base_branch(const struct pg_plugin_config *c, const struct pg_bkenv *env)
{
	if (pg_bkenv_is_pr(env) && env->base_branch)
		return env->base_branch;
	if (c->base_branch)
		return c->base_branch;
	return env->default_branch;
}

static enum pg_annotation_status status_of(enum pg_outcome o)
{
	switch (o) {
	case PG_OUTCOME_FAIL:
		return PG_ANNOTATION_REGRESSION;
	case PG_OUTCOME_INFRA:
		return PG_ANNOTATION_ERROR;
	case PG_OUTCOME_WARN:
		return PG_ANNOTATION_WARNING;
	default:
		return PG_ANNOTATION_PASS;
	}
}

static const char *keep(struct pg_bk_compare *out, char *s)
{
	pg_strv_push_owned(&out->strings, s);
	return s;
}

static void to_row(struct pg_bk_compare *out, struct pg_annotation_row *ar,
		   const struct pg_cmp_row *r)
{
	struct pg_buf metric = PG_BUF_INIT, verdict = PG_BUF_INIT;
	const struct pg_metric *m = r->metric;

	if (m) {
		pg_buf_puts(&metric, m->label);
		if (m->unit && *m->unit)
			pg_buf_printf(&metric, " (%s)", m->unit);
	} else {
		pg_buf_puts(&metric, "(whole point)");
	}
	/* the gate's note says why (warn-only, confirmed by the re-run...);
	 * without one, say what the outcome means */
	pg_buf_puts(&verdict, pg_verdict_name(r->verdict));
	if (r->note)
		pg_buf_printf(&verdict, ": %s", r->note);
	else if (r->verdict == PG_VERDICT_REGRESSED && r->outcome != PG_OUTCOME_FAIL)
		pg_buf_puts(&verdict, ", warns only");

	ar->test = r->point;
	ar->metric = keep(out, pg_buf_detach(&metric));
	ar->baseline = r->baseline;
	ar->current = r->current;
	ar->delta_pct = isnan(r->change) ? NAN : 100.0 * r->change;
	ar->tolerance_pct = isnan(r->tolerance) ? NAN : 100.0 * r->tolerance;
	ar->worse = 0;
	if (m && !isnan(r->change) && r->change != 0 && m->direction != PG_NO_DIRECTION)
		ar->worse = (r->change > 0) == (m->direction == PG_LOWER_IS_BETTER) ? 1 : -1;
	ar->verdict = keep(out, pg_buf_detach(&verdict));
}

static bool needs_attention(const struct pg_cmp_row *r)
{
	return r->outcome == PG_OUTCOME_FAIL || r->outcome == PG_OUTCOME_INFRA ||
	       r->outcome == PG_OUTCOME_WARN;
}

/* Worst first, then the comparison's own order (points, then metrics). */
static int attention_rank(const struct pg_cmp_row *r)
{
	switch (r->outcome) {
	case PG_OUTCOME_FAIL:
		return 0;
	case PG_OUTCOME_INFRA:
		return 1;
	case PG_OUTCOME_WARN:
		return 2;
	default:
		return 3;
	}
}

/* Per point: its worst outcome, and whether anything improved. */
static void count_points(struct pg_bk_compare *out, const struct pg_comparison *cmp)
{
	for (size_t i = 0; i < cmp->n;) {
		const char *point = cmp->rows[i].point;
		enum pg_outcome worst = PG_OUTCOME_PASS;
		bool improved = false;

		for (; i < cmp->n && !strcmp(cmp->rows[i].point, point); i++) {
			if (cmp->rows[i].outcome > worst)
				worst = cmp->rows[i].outcome;
			improved |= cmp->rows[i].verdict == PG_VERDICT_IMPROVED;
		}
		if (worst == PG_OUTCOME_FAIL)
			out->n_regressions++;
		else if (worst == PG_OUTCOME_INFRA)
			out->n_errors++;
		else if (worst == PG_OUTCOME_WARN)
			out->n_warnings++;
		else if (improved)
			out->n_improvements++;
	}
}

int pg_bk_compare(struct pg_bk_compare *out, const struct pg_result_set *run,
		  const struct pg_result_set *confirm, const struct pg_strv *plan,
		  const struct pg_plugin_config *c, const struct pg_bkenv *env, const char *gpu_key,
		  const char *results_dir, struct pg_error *err)
{
	struct impl *im = pg_xcalloc(1, sizeof(*im));
	struct pg_cmp_point *points = NULL, *confirm_points = NULL;
	struct pg_gate_source src = { 0 };
	struct pg_annotation_row *all = NULL;
	struct pg_error lerr = PG_ERROR_INIT;
	struct pg_buf sick = PG_BUF_INIT;
	int rc;

	memset(out, 0, sizeof(*out));
	out->impl = im;
	pg_policy_init(&im->policy);

	src.thresholds = c->thresholds;
	src.gpu = gpu_key;
	src.baseline = c->baseline == PG_BASELINE_GIT ? "git" : "thresholds";
	src.repo = c->history_repo;
	src.base_branch = base_branch(c, env);
	rc = pg_gate_load(&im->policy, &im->base, &src, &lerr);
	if (rc == PG_ENOTFOUND) {
		/* a first run has nothing to compare with: say so, do not fail */
		out->note = pg_xstrdup(lerr.msg);
		out->status = PG_ANNOTATION_WARNING;
		rc = 0;
		goto done;
	}
	if (rc) {
		*err = lerr;
		goto done;
	}
	out->baseline_desc = pg_xstrdup(im->base.source ? im->base.source : gpu_key);

	/* the job health verdict the gate consults: the confirmation run's
	 * when there is one */
	if ((rc = pg_health_check(&sick, c->thresholds, gpu_key, confirm ? confirm : run, err)))
		goto done;
	points = pg_gate_points(run);
	if (confirm)
		confirm_points = pg_gate_points(confirm);
	pg_compare(
		&im->cmp, &im->policy, &im->base, points, run->n, confirm_points,
		confirm ? confirm->n : 0,
		&(struct pg_compare_opts){ .plan = plan, .suspect = sick.len ? sick.ptr : NULL });
	out->suspect = im->cmp.suspect ? pg_xstrdup(im->cmp.suspect) : NULL;
	out->compared = true;
	out->confirmed = im->cmp.with_confirmation;
	out->status = status_of(im->cmp.outcome);
	out->outcome = (int)im->cmp.outcome;
	for (size_t i = 0; i < im->cmp.rerun.n; i++)
		pg_strv_push(&out->rerun, im->cmp.rerun.v[i]);
	count_points(out, &im->cmp);

	/* every row for the comparison section; attention rows, worst first */
	all = pg_xcalloc(im->cmp.n + 1, sizeof(*all));
	out->rows = pg_xcalloc(im->cmp.n + 1, sizeof(*out->rows));
	for (size_t i = 0; i < im->cmp.n; i++)
		to_row(out, &all[i], &im->cmp.rows[i]);
	for (int rank = 0; rank < 3; rank++)
		for (size_t i = 0; i < im->cmp.n; i++)
			if (needs_attention(&im->cmp.rows[i]) &&
			    attention_rank(&im->cmp.rows[i]) == rank)
				out->rows[out->n_rows++] = all[i];
	pg_annotation_table(&out->table, all, im->cmp.n);
	out->n_all_rows = im->cmp.n;

	rc = pg_comparison_write(&im->cmp, results_dir, NULL, err);
done:
	pg_buf_release(&sick);
	free(all);
	free(points);
	free(confirm_points);
	return rc;
}

void pg_bk_compare_release(struct pg_bk_compare *out)
{
	struct impl *im = out->impl;

	if (im) {
		pg_comparison_release(&im->cmp);
		pg_baseline_release(&im->base);
		pg_policy_release(&im->policy);
		free(im);
	}
	free(out->baseline_desc);
	free(out->suspect);
	free(out->note);
	free(out->rows);
	pg_strv_release(&out->rerun);
	pg_strv_release(&out->strings);
	pg_buf_release(&out->table);
	memset(out, 0, sizeof(*out));
}

int pg_bk_verdict_exit(const struct pg_bk_compare *c, bool enforce)
{
	return c->compared ? pg_gate_exit_code((enum pg_outcome)c->outcome, enforce) : PG_EXIT_OK;
}

int pg_bk_read_plan(struct pg_strv *out, bool *found, const char *dir, struct pg_error *err)
{
	return pg_gate_read_plan(out, found, dir, err);
}

int pg_bk_baseline_value(void *cmp, const char *point, const struct pg_metric *m, double *out)
{
	const struct pg_bk_compare *bc = cmp;
	const struct impl *im = bc->impl;
	const struct pg_base_point *p;
	const struct pg_base_metric *bm;

	if (!im || !bc->compared || !(p = pg_baseline_find(&im->base, point)) ||
	    !(bm = pg_base_point_metric(p, m)) || isnan(bm->value))
		return -1;
	*out = bm->value;
	return 0;
}

int pg_bk_record_history(const struct pg_result_set *run, const struct pg_plugin_config *c,
			 const struct pg_bkenv *env, const char *gpu_key, size_t *lines,
			 struct pg_error *err)
{
	struct pg_cmp_point *points = pg_gate_points(run);
	char now[32];
	time_t t = time(NULL);
	struct tm tm;
	struct pg_history_recorded recorded;
	int rc;

	gmtime_r(&t, &tm);
	strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", &tm);
	rc = pg_history_record(
		&(struct pg_cmp_run){ "this build", points, run->n },
		&(struct pg_history_record_opts){ .repo = c->history_repo,
						  .gpu = gpu_key,
						  .meta = { .commit = env->commit,
							    .date = now,
							    .build_url = env->build_url,
							    .branch = env->branch } },
		&recorded, err);
	free(points);
	if (rc == 0)
		*lines = recorded.lines;
	return rc;
}
