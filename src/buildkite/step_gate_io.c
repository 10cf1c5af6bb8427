/* perfgate buildkite: the comparison with the baseline, and recording the
 * run in the git history. The decisions are the gate's (gate/compare.h);
 * this file only chooses the baseline for the build and reshapes the
 * outcome for the annotation. */
#include "buildkite/step_io.h"

#include "base/alloc.h"
#include "buildkite/job_env.h"
#include "base/buf.h"
#include "gate/ab.h"
#include "gate/attention.h"
#include "gate/compare.h"
#include "base/error.h"
#include "gate/gate_io.h"
#include "baseline/history_io.h"
#include "base/exitcode.h"
#include "telemetry/health_io.h"
#include "baseline/thresholds_io.h"
#include "sys/gitinfo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct impl {
	struct pg_policy policy;
	struct pg_baseline base;
	struct pg_comparison cmp;
};

const char *pg_bk_base_branch(const struct pg_plugin_config *c, const struct pg_bkenv *env)
{
	if (pg_bkenv_is_pr(env) && env->base_branch)
		return env->base_branch;
	if (c->base_branch)
		return c->base_branch;
	return env->default_branch;
}

void pg_bk_pr_pin(struct pg_bk_pr *pr, const struct pg_plugin_config *c, const struct pg_bkenv *env)
{
	struct pg_error err = PG_ERROR_INIT;

	memset(pr, 0, sizeof(*pr));
	if (!pg_bkenv_is_pr(env))
		return;
	pr->is_pr = true;
	pr->branch = pg_bk_base_branch(c, env);
	if (pg_git_merge_base(pr->rev, ".", pr->branch, &err))
		pr->error = pg_xstrdup(err.msg);
	/* a location outside the checkout is read now, before the pull
	 * request's commands could write it; inside, the merge-base's tree is
	 * read, whenever */
	pg_thresholds_pin(&pr->pin, c->thresholds);
}

void pg_bk_pr_release(struct pg_bk_pr *pr)
{
	free(pr->error);
	pg_thresholds_pin_release(&pr->pin);
	memset(pr, 0, sizeof(*pr));
}

int pg_bk_pr_check(const struct pg_bk_pr *pr, const struct pg_plugin_config *c,
		   struct pg_error *err)
{
	if (!pr->is_pr || c->baseline != PG_BASELINE_GIT || c->history_repo)
		return 0;
	return pg_error_set(
		err, PG_ECONFIG,
		"pull request: baseline: git without history-repo would judge it against %s in this "
		"agent's checkout, which any earlier job here could have written (pull requests "
		"included): set history-repo to a repository only default-branch builds can push to "
		"(docs/trust.md)",
		PG_HISTORY_DEFAULT_REF);
}

/* A thresholds location outside the checkout that this job could write:
 * say where the policy came from, as a warning. */
static void note_outside_policy(struct pg_bk_compare *out, const struct pg_thresholds_pin *pin,
				const char *path)
{
	struct pg_buf note = PG_BUF_INIT;

	if (!pin->outside || !pin->writable)
		return;
	pg_buf_printf(&note,
		      "%s is outside the checkout (%s) and this job can write there: neither the "
		      "base branch nor the agent alone decides what it holds; the gate used the "
		      "copy read before the pull request's commands ran",
		      path, pin->where);
	out->policy_note = pg_buf_detach(&note);
}

/*
 * A pull request that changes its own thresholds file: say so, as a
 * warning, with the change, whichever copy the gate used.
 */
static void note_policy_change(struct pg_bk_compare *out, const struct pg_thresholds_origin *o,
			       const struct pg_bk_pr *pr, bool used_base)
{
	struct pg_buf note = PG_BUF_INIT, title = PG_BUF_INIT;
	const char *file = o->relpath;

	if (!o->differs)
		return;
	if (!o->in_checkout)
		pg_buf_printf(&note, "this pull request deletes %s", file);
	else if (!o->in_rev)
		pg_buf_printf(&note, "this pull request adds %s", file);
	else
		pg_buf_printf(&note, "this pull request changes %s (+%zu -%zu lines)", file,
			      o->added, o->removed);
	if (used_base && o->in_rev)
		pg_buf_printf(
			&note,
			": the gate used the base branch's copy (%s at %.12s, the merge-base); "
			"the change applies once it is merged",
			pr->branch, o->rev);
	else if (used_base)
		pg_buf_puts(&note, ": it applies once it is merged");
	else
		pg_buf_puts(&note, " and the gate used its copy (pr-thresholds: pull-request): the "
				   "pull request sets its own bar");
	out->policy_note = pg_buf_detach(&note);
	if (o->diff) {
		pg_buf_printf(&title, "%s: this pull request against %s at %.12s", file, pr->branch,
			      o->rev);
		out->policy_diff = pg_xstrdup(o->diff);
		out->policy_diff_title = pg_buf_detach(&title);
	}
	pg_buf_release(&title);
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
		pg_buf_puts(&metric, "all metrics"); /* as comparison.md says */
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
	ar->tolerance_pct = isnan(pg_attention_threshold(r)) ? NAN
							     : 100.0 * pg_attention_threshold(r);
	ar->tone = pg_attention_tone(r);
	ar->verdict = keep(out, pg_buf_detach(&verdict));
}

/* The charts pg_comparison_write drew for the evidence, for the annotation. */
static void evidence_charts(struct pg_bk_compare *out, const struct pg_comparison *cmp)
{
	size_t n, total;
	const struct pg_cmp_row **rows = pg_comparison_evidence_rows(cmp, &n, &total);

	for (size_t i = 0; i < n; i++) {
		struct pg_buf title = PG_BUF_INIT;
		if (!rows[i]->chart)
			continue;
		pg_buf_printf(&title, "%s: %s · %s", rows[i]->trail ? "Trend" : "Change",
			      rows[i]->point, rows[i]->metric->label);
		pg_strv_push(&out->evidence, rows[i]->chart);
		pg_strv_push_owned(&out->evidence_titles, pg_buf_detach(&title));
	}
	free(rows);
}

/* The evidence's lines and files, for the annotation. */
static void evidence_lines(struct pg_bk_compare *out, const struct pg_comparison *cmp)
{
	size_t n, total;
	const struct pg_cmp_row **rows = pg_comparison_evidence_rows(cmp, &n, &total);

	out->ev = pg_xcalloc(n + 1, sizeof(*out->ev));
	out->n_ev = n;
	out->ev_total = total;
	for (size_t i = 0; i < n; i++) {
		const struct pg_cmp_files *f = rows[i]->files;
		struct pg_buf text = PG_BUF_INIT;
		pg_comparison_evidence_line(&text, rows[i]);
		out->ev[i].line = keep(out, pg_buf_detach(&text));
		pg_comparison_evidence_text(&text, rows[i]);
		out->ev[i].text = keep(out, pg_buf_detach(&text));
		out->ev[i].point = keep(out, pg_xstrdup(rows[i]->point));
		if (f) {
			const char *paths[PG_EVIDENCE_FILES] = { f->result, f->log, f->rerun_result,
								 f->rerun_log };
			for (size_t k = 0; k < PG_EVIDENCE_FILES; k++)
				out->ev[i].files[k] = paths[k] ? keep(out, pg_xstrdup(paths[k]))
							       : NULL;
		}
	}
	free(rows);
}

/* A metric for the charts, once. */
static void chart_metric(struct pg_bk_compare *out, const struct pg_cmp_row *r)
{
	if (!r->metric)
		return;
	for (size_t i = 0; i < out->metrics.n; i++)
		if (!strcmp(out->metrics.v[i], r->metric->id))
			return;
	pg_strv_push(&out->metrics, r->metric->id);
}

int pg_bk_compare(struct pg_bk_compare *out, const struct pg_result_set *run,
		  const struct pg_result_set *confirm, const struct pg_strv *plan,
		  const struct pg_plugin_config *c, const struct pg_bkenv *env,
		  const struct pg_bk_pr *pr, const char *gpu_key, const char *results_dir,
		  struct pg_error *err)
{
	struct impl *im = pg_xcalloc(1, sizeof(*im));
	struct pg_cmp_point *points = NULL, *confirm_points = NULL;
	struct pg_gate_source src = { 0 };
	struct pg_annotation_row *all = NULL;
	const struct pg_cmp_row **attention = NULL;
	struct pg_error lerr = PG_ERROR_INIT, warning = PG_ERROR_INIT;
	struct pg_buf sick = PG_BUF_INIT;
	struct pg_thresholds_origin origin = { 0 };
	bool use_base = pr && pr->is_pr && c->pr_thresholds == PG_PR_THRESHOLDS_BASE;
	char *path = pg_thresholds_path(c->thresholds, gpu_key);
	int rc;

	memset(out, 0, sizeof(*out));
	out->impl = im;
	out->history_runs = -1;
	pg_policy_init(&im->policy);

	src.thresholds = c->thresholds;
	src.gpu = gpu_key;
	src.baseline = c->baseline == PG_BASELINE_GIT ? "git" : "thresholds";
	src.repo = c->history_repo;
	src.base_branch = pg_bk_base_branch(c, env);
	/* the history's commits are the checkout's, whatever history-repo is */
	src.source_repo = ".";
	if (use_base && pr->error) {
		/* without the base, the pull request's own copy is all there is:
		 * never use it silently, unless the file is not the PR's at all */
		struct pg_buf ignored = PG_BUF_INIT;
		struct pg_error e = PG_ERROR_INIT;
		bool outside = false;

		pg_git_read_at(&ignored, &outside, NULL, "HEAD", path, &e);
		pg_buf_release(&ignored);
		if (!outside) {
			rc = pg_error_set(
				err, PG_EINFRA,
				"pull request: cannot read %s from the base branch: %s (fetch it, or set "
				"pr-thresholds: pull-request to gate with the pull request's own copy)",
				path, pr->error);
			goto done;
		}
		use_base = false;
	}
	if (use_base) {
		src.thresholds_rev = pr->rev;
		src.origin = &origin;
	}
	if (pr && pr->is_pr)
		src.pinned = &pr->pin;
	rc = pg_gate_load(&im->policy, &im->base, &src, &lerr);
	if (!use_base && pr && pr->is_pr && pr->rev[0])
		pg_thresholds_compare_at(&origin, path, pr->rev);
	if (pr && pr->is_pr && origin.in_repo)
		note_policy_change(out, &origin, pr, use_base);
	else if (pr && pr->is_pr)
		note_outside_policy(out, &pr->pin, path);
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
	if (c->baseline == PG_BASELINE_GIT) {
		out->history_runs = (long)im->base.n_jobs;
		out->history_needed = im->policy.min_history;
	}

	/* the job health verdict the gate consults: the confirmation run's
	 * when there is one */
	if ((rc = pg_health_check(&sick, c->thresholds, gpu_key, confirm ? confirm : run, err)))
		goto done;
	points = pg_gate_points(run);
	if (confirm)
		confirm_points = pg_gate_points(confirm);
	pg_compare(&im->cmp, &im->policy, &im->base, points, run->n, confirm_points,
		   confirm ? confirm->n : 0,
		   &(struct pg_compare_opts){ .plan = plan,
					      .suspect = sick.len ? sick.ptr : NULL,
					      .pull_request = pr && pr->is_pr });
	out->suspect = im->cmp.suspect ? pg_xstrdup(im->cmp.suspect) : NULL;
	out->compared = true;
	out->confirmed = im->cmp.with_confirmation;
	out->status = status_of(im->cmp.outcome);
	out->outcome = (int)im->cmp.outcome;
	if (out->policy_note && out->status < PG_ANNOTATION_WARNING)
		out->status = PG_ANNOTATION_WARNING;
	for (size_t i = 0; i < im->cmp.rerun.n; i++)
		pg_strv_push(&out->rerun, im->cmp.rerun.v[i]);
	out->outcome = im->cmp.outcome;
	pg_gate_count(&out->counts, &im->cmp);

	/* every row for the comparison section; the attention rows as the
	 * gate's comparison.md lists them */
	all = pg_xcalloc(im->cmp.n + 1, sizeof(*all));
	for (size_t i = 0; i < im->cmp.n; i++)
		to_row(out, &all[i], &im->cmp.rows[i]);
	attention = pg_attention_rows(&im->cmp, &out->n_rows);
	out->rows = pg_xcalloc(out->n_rows + 1, sizeof(*out->rows));
	for (size_t i = 0; i < out->n_rows; i++) {
		out->rows[i] = all[attention[i] - im->cmp.rows];
		chart_metric(out, attention[i]);
	}
	for (size_t i = 0; i < im->cmp.n; i++)
		if (im->cmp.rows[i].verdict == PG_VERDICT_REGRESSED)
			chart_metric(out, &im->cmp.rows[i]);
	pg_annotation_table(&out->table, all, im->cmp.n);
	out->n_all_rows = im->cmp.n;

	pg_gate_link_files(&im->cmp, run, confirm, results_dir);
	rc = pg_comparison_write(&im->cmp, results_dir, NULL, &warning, err);
	if (!rc)
		evidence_lines(out, &im->cmp);
	if (!rc && warning.code)
		out->warning = pg_xstrdup(warning.msg);
	else if (!rc)
		evidence_charts(out, &im->cmp);
done:
	pg_buf_release(&sick);
	pg_thresholds_origin_release(&origin);
	free(path);
	free(all);
	free((void *)attention);
	free(points);
	free(confirm_points);
	return rc;
}

const struct pg_policy *pg_bk_compare_policy(const struct pg_bk_compare *c)
{
	const struct impl *im = c->impl;
	return im ? &im->policy : NULL;
}

const struct pg_comparison *pg_bk_compare_comparison(const struct pg_bk_compare *c)
{
	const struct impl *im = c->impl;
	return im && c->compared ? &im->cmp : NULL;
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
	free(out->policy_note);
	free(out->warning);
	free(out->policy_diff);
	free(out->policy_diff_title);
	free(out->rows);
	pg_strv_release(&out->rerun);
	pg_strv_release(&out->metrics);
	pg_strv_release(&out->strings);
	pg_strv_release(&out->evidence);
	pg_strv_release(&out->evidence_titles);
	free(out->ev);
	pg_buf_release(&out->table);
	memset(out, 0, sizeof(*out));
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

int pg_bk_record_history(const struct pg_result_set *run, const struct pg_ab_summary *ab,
			 const struct pg_plugin_config *c, const struct pg_bkenv *env,
			 const char *gpu_key, const struct pg_bk_compare *judged,
			 struct pg_history_recorded *out, struct pg_error *err)
{
	const struct impl *im = judged ? judged->impl : NULL;
	json_t *regressed = im ? pg_comparison_regressed(&im->cmp) : NULL;
	struct pg_cmp_point *points = pg_gate_points(run);
	/* A/B results may have a repository of their own: pull requests
	 * record them, and need not push to main's history to do it */
	const char *repo = ab && c->ab_history_repo ? c->ab_history_repo : c->history_repo;
	struct pg_history_record_opts o = { .repo = repo,
					    .source_repo = ".",
					    .gpu = gpu_key,
					    .meta = { .commit = env->commit,
						      .build_url = env->build_url,
						      .branch = env->branch,
						      .regressed = regressed } };
	struct pg_cmp_run head = { "this build", points, run->n };
	char now[32], base[41] = "";
	time_t t = time(NULL);
	struct tm tm;
	int rc;

	gmtime_r(&t, &tm);
	strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", &tm);
	o.meta.date = now;
	if (ab) {
		/* the base a pull request is measured against: known when the
		 * checkout has its base branch, left out otherwise */
		struct pg_error ignored = PG_ERROR_INIT;
		if (env->base_branch && pg_git_merge_base(base, ".", env->base_branch, &ignored))
			base[0] = '\0';
		rc = pg_history_record_ab(ab, &head, &o, base[0] ? base : NULL, env->pull_request,
					  out, err);
	} else {
		rc = pg_history_record(&head, &o, out, err);
	}
	json_decref(regressed);
	free(points);
	return rc;
}
