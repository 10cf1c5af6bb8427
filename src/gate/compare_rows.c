/* pg_compare: a whole run against a baseline, row by row. */
#include "gate/compare.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "gate/compare_stats.h"
#include "gate/compare_frontier.h"
#include "gate/compare_slo.h"
#include "gate/compare_tails.h"
#include "base/jsonw.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool status_is(const struct pg_cmp_point *rp, const char *s)
{
	return rp->status && !strcmp(rp->status, s);
}

/* An SLA search probe is reported but never compared, neither "new" nor
 * "missing". */
static bool is_probe(const struct pg_cmp_point *rp)
{
	return rp && rp->probe;
}

static bool status_failed(const struct pg_cmp_point *rp)
{
	return status_is(rp, "error") || status_is(rp, "cancelled");
}

static struct pg_cmp_row *add_row(struct pg_comparison *c, const char *point,
				  const struct pg_base_point *bp, const struct pg_cmp_point *rp,
				  enum pg_suite_kind suite)
{
	struct pg_cmp_row *row;

	pg_grow((void **)&c->rows, &c->cap, c->n + 1, sizeof(*c->rows));
	row = &c->rows[c->n++];
	memset(row, 0, sizeof(*row));
	row->point = pg_xstrdup(point);
	row->suite = suite;
	row->baseline = row->current = row->change = row->tolerance = row->p_value = NAN;
	row->qps = NAN;
	row->max_concurrency = -1;
	if (rp && rp->result) {
		row->test = pg_xstrdup(pg_json_path_str(rp->result, "perfgate.test"));
		if (suite == PG_SUITE_SERVING) {
			row->qps = pg_result_qps(rp->result);
			row->max_concurrency = pg_result_max_concurrency(rp->result);
		}
	}
	if (bp) {
		if (!row->test)
			row->test = pg_xstrdup(bp->test);
		if (isnan(row->qps))
			row->qps = bp->qps;
		if (row->max_concurrency < 0)
			row->max_concurrency = bp->max_concurrency;
	}
	return row;
}

static void set_note(struct pg_cmp_row *row, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_note(struct pg_cmp_row *row, const char *fmt, ...)
{
	struct pg_buf b = PG_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	pg_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	free(row->note);
	row->note = pg_buf_detach(&b);
}

static void fmt_pct(char *out, size_t size, double rel)
{
	char g[PG_FMT_DOUBLE_SIZE];
	pg_fmt_g(g, round(rel * 1000) / 10);
	snprintf(out, size, "%s%%", g);
}

/* Points are compared in name order, all rows of one point together: a
 * point already listed is the last one. */
static void add_rerun(struct pg_comparison *c, const char *point)
{
	if (c->rerun.n && !strcmp(c->rerun.v[c->rerun.n - 1], point))
		return;
	pg_strv_push(&c->rerun, point);
}

/* The outcome of a decided row (regressed/noisy/improved/unchanged). */
static enum pg_outcome decided_outcome(const struct pg_decision *d, const struct pg_rule *rule,
				       const struct pg_compare_opts *opts, bool final)
{
	if (d->fails)
		return PG_OUTCOME_FAIL;
	if (d->verdict == PG_VERDICT_NOISY && opts->strict && final && d->flagged)
		return PG_OUTCOME_FAIL;
	if (d->verdict == PG_VERDICT_REGRESSED || d->verdict == PG_VERDICT_NOISY)
		return PG_OUTCOME_WARN;
	(void)rule;
	return PG_OUTCOME_PASS;
}

static void explain(struct pg_cmp_row *row, const struct pg_decision *d, const struct pg_rule *rule)
{
	char a[48], b[48];

	switch (d->verdict) {
	case PG_VERDICT_REGRESSED:
		if (d->fails && !rule->gate) {
			fmt_pct(a, sizeof(a), rule->escalate);
			set_note(row, "worse than the %s escalation threshold", a);
		} else if (!rule->gate) {
			set_note(row, "warn-only metric");
		}
		break;
	case PG_VERDICT_NOISY: {
		char p[PG_FMT_DOUBLE_SIZE];
		pg_fmt_g(p, round(d->p_value * 1000) / 1000);
		set_note(row, "change not significant (p = %s)", p);
		break;
	}
	case PG_VERDICT_UNCHANGED:
		if (d->below_floor && isfinite(d->change) && fabs(d->change) > d->tolerance) {
			char f[PG_FMT_DOUBLE_SIZE];
			pg_fmt_g(f, rule->floor);
			set_note(row, "change under the %s%s%s floor", f,
				 row->metric->unit[0] ? " " : "", row->metric->unit);
		}
		break;
	default:
		break;
	}
	if (d->tolerance > rule->tolerance && !row->note) {
		fmt_pct(a, sizeof(a), rule->tolerance);
		fmt_pct(b, sizeof(b), d->tolerance);
		set_note(row, "tolerance widened from %s to %s by measured noise", a, b);
	}
}

static void fill_decided(struct pg_cmp_row *row, const struct pg_decision *d, size_t n_base,
			 size_t n_cur)
{
	row->baseline = d->baseline;
	row->current = d->current;
	row->change = d->change;
	row->tolerance = d->tolerance;
	row->p_value = d->p_value;
	row->verdict = d->verdict;
	row->n_baseline = n_base;
	row->n_current = n_cur;
}

static void compare_metric(struct pg_comparison *c, const struct pg_policy *policy,
			   const struct pg_base_point *bp, const struct pg_cmp_point *rp,
			   const struct pg_cmp_point *cp, const struct pg_metric *m,
			   const struct pg_compare_opts *opts)
{
	const struct pg_base_metric *bm = bp ? pg_base_point_metric(bp, m) : NULL;
	double *cur = NULL, *conf = NULL;
	size_t n_cur = pg_result_samples(rp->result, m, &cur);
	struct pg_cmp_row *row;
	struct pg_decision d;

	if (!bm && n_cur == 0)
		goto done;
	row = add_row(c, rp->name, bp, rp, rp->suite);
	row->metric = m;
	pg_policy_rule(policy, row->point, row->test, m, &row->rule);
	if (pg_cmp_slo_decide(row, rp->result, bm, cur, n_cur))
		goto done;
	if (!bm && c->baseline_kind && !strcmp(c->baseline_kind, "git")) {
		/* a history baseline that has never seen this point */
		row->verdict = PG_VERDICT_INSUFFICIENT;
		row->current = pg_cmpstat_median(cur, n_cur);
		row->n_current = n_cur;
		row->outcome = PG_OUTCOME_WARN;
		set_note(row, "no runs in the history");
		goto done;
	}
	if (!bm) {
		row->verdict = PG_VERDICT_NEW;
		row->current = pg_cmpstat_median(cur, n_cur);
		row->n_current = n_cur;
		row->outcome = PG_OUTCOME_PASS;
		goto done;
	}
	row->baseline = bm->value;
	row->n_baseline = bm->n_samples ? bm->n_samples : (size_t)bm->runs;
	if (!bp->insufficient && pg_cmp_tail_undecidable(row, rp->result, cur, n_cur))
		goto done;
	if (n_cur == 0) {
		row->verdict = PG_VERDICT_MISSING;
		row->outcome = row->rule.gate && !opts->allow_missing ? PG_OUTCOME_INFRA
								      : PG_OUTCOME_WARN;
		set_note(row, "the run did not report this metric");
		goto done;
	}
	if (bp->insufficient) {
		row->verdict = PG_VERDICT_INSUFFICIENT;
		row->current = pg_cmpstat_median(cur, n_cur);
		row->n_current = n_cur;
		row->outcome = PG_OUTCOME_WARN;
		set_note(row, "%s", bp->insufficient);
		goto done;
	}

	pg_decide(&d, &row->rule, m->direction, bm, cur, n_cur);
	fill_decided(row, &d, row->n_baseline, n_cur);
	if (d.flagged && cp && status_failed(cp)) {
		row->outcome = PG_OUTCOME_INFRA;
		explain(row, &d, &row->rule);
		set_note(row, "the confirmation re-run failed");
		goto done;
	}
	if (d.flagged && cp) {
		size_t n_conf = pg_result_samples(cp->result, m, &conf);
		struct pg_decision first = d;
		char pct[48];

		if (n_conf) {
			cur = pg_xrealloc(cur, (n_cur + n_conf) * sizeof(double));
			memcpy(cur + n_cur, conf, n_conf * sizeof(double));
			n_cur += n_conf;
			pg_decide(&d, &row->rule, m->direction, bm, cur, n_cur);
			fill_decided(row, &d, row->n_baseline, n_cur);
			row->confirmed = true;
			row->outcome = decided_outcome(&d, &row->rule, opts, true);
			explain(row, &d, &row->rule);
			fmt_pct(pct, sizeof(pct), first.change);
			if (d.fails && !row->rule.gate) {
				fmt_pct(pct, sizeof(pct), row->rule.escalate);
				set_note(
					row,
					"worse than the %s escalation threshold, confirmed by the re-run (%zu samples pooled)",
					pct, n_cur);
			} else if (d.fails || (d.flagged && d.verdict == PG_VERDICT_REGRESSED))
				set_note(row, "confirmed by the re-run (%zu samples pooled)",
					 n_cur);
			else
				set_note(row, "first run %s%s; the re-run did not confirm it",
					 first.change > 0 ? "+" : "", pct);
			goto done;
		}
		row->outcome = PG_OUTCOME_INFRA;
		set_note(row, "the confirmation re-run did not report this metric");
		goto done;
	}
	row->outcome = decided_outcome(&d, &row->rule, opts, c->with_confirmation);
	explain(row, &d, &row->rule);
	if (d.flagged && !c->with_confirmation) {
		row->needs_confirmation = true;
		add_rerun(c, row->point);
		if (d.verdict == PG_VERDICT_UNCHANGED)
			set_note(row, "within tolerance but close to it: re-run to confirm");
		else if (!row->note)
			set_note(row, "re-run to confirm");
	} else if (d.flagged && c->with_confirmation && !cp) {
		set_note(row, "not re-run for confirmation");
	}
done:
	free(cur);
	free(conf);
}

static void point_row(struct pg_comparison *c, const struct pg_policy *policy, const char *name,
		      const struct pg_base_point *bp, const struct pg_cmp_point *rp,
		      enum pg_suite_kind suite, enum pg_verdict v, enum pg_outcome o,
		      const char *note)
{
	struct pg_cmp_row *row = add_row(c, name, bp, rp, suite);
	row->verdict = v;
	row->outcome = o;
	if (note)
		set_note(row, "%s", note);
	(void)policy;
}

/* Does any metric of the baseline point gate under the policy? */
static bool point_gates(const struct pg_policy *policy, const struct pg_base_point *bp)
{
	for (size_t i = 0; i < bp->n_metrics; i++) {
		struct pg_rule r;
		pg_policy_rule(policy, bp->name, bp->test, bp->metrics[i].metric, &r);
		if (r.gate || r.escalate > 0)
			return true;
	}
	return false;
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void pg_compare(struct pg_comparison *out, const struct pg_policy *policy,
		const struct pg_baseline *base, const struct pg_cmp_point *run, size_t n_run,
		const struct pg_cmp_point *confirm, size_t n_confirm,
		const struct pg_compare_opts *opts)
{
	static const struct pg_compare_opts no_opts = { false, false, NULL };
	struct pg_cmp_index run_ix, confirm_ix;
	const char **names;
	size_t n_names = 0;

	if (!opts)
		opts = &no_opts;
	memset(out, 0, sizeof(*out));
	out->gpu = pg_xstrdup(base->gpu);
	out->baseline_kind = pg_xstrdup(base->kind);
	out->baseline_source = pg_xstrdup(base->source);
	out->with_confirmation = n_confirm > 0;

	/* every point name once, sorted */
	pg_cmp_index_init(&run_ix, run, n_run);
	pg_cmp_index_init(&confirm_ix, confirm, n_confirm);
	names = pg_xmalloc((base->n + n_run + 1) * sizeof(*names));
	for (size_t i = 0; i < base->n; i++)
		names[n_names++] = base->points[i].name;
	for (size_t i = 0; i < run_ix.n; i++)
		if (!is_probe(run_ix.v[i]) && !pg_baseline_find(base, run_ix.v[i]->name))
			names[n_names++] = run_ix.v[i]->name;
	qsort(names, n_names, sizeof(*names), cmp_cstr);

	for (size_t k = 0; k < n_names; k++) {
		const char *name = names[k];
		const struct pg_base_point *bp = pg_baseline_find(base, name);
		const struct pg_cmp_point *rp = pg_cmp_index_find(&run_ix, name);
		const struct pg_cmp_point *cp = pg_cmp_index_find(&confirm_ix, name);

		if (is_probe(rp))
			rp = NULL;
		if (is_probe(cp))
			cp = NULL;
		if (!bp && !rp)
			continue;
		enum pg_suite_kind suite = bp ? bp->suite : rp->suite;
		size_t nm;
		const struct pg_metric *all;

		if (k > 0 && !strcmp(names[k - 1], name))
			continue;
		if (!rp) {
			point_row(out, policy, name, bp, NULL, suite, PG_VERDICT_MISSING,
				  point_gates(policy, bp) && !opts->allow_missing ? PG_OUTCOME_INFRA
										  : PG_OUTCOME_WARN,
				  "in the baseline, not in this run");
			continue;
		}
		if (status_failed(rp)) {
			const char *why = pg_json_path_str(rp->result, "perfgate.error");
			struct pg_buf note = PG_BUF_INIT;
			pg_buf_printf(&note, "%s%s%s",
				      status_is(rp, "cancelled") ? "cancelled" : "failed",
				      why ? ": " : "", why ? why : "");
			point_row(out, policy, name, bp, rp, suite, PG_VERDICT_ERROR,
				  PG_OUTCOME_INFRA, note.ptr);
			pg_buf_release(&note);
			continue;
		}
		if (status_is(rp, "skipped")) {
			const char *why = pg_json_path_str(rp->result, "perfgate.error");
			struct pg_buf note = PG_BUF_INIT;
			pg_buf_printf(&note, "skipped%s%s", why ? ": " : "", why ? why : "");
			point_row(out, policy, name, bp, rp, suite, PG_VERDICT_MISSING,
				  PG_OUTCOME_WARN, note.ptr);
			pg_buf_release(&note);
			continue;
		}
		if (bp && bp->suite != rp->suite) {
			struct pg_buf note = PG_BUF_INIT;
			pg_buf_printf(&note, "the baseline is a %s test, the run a %s test",
				      pg_suite_kind_name(bp->suite), pg_suite_kind_name(rp->suite));
			point_row(out, policy, name, bp, rp, rp->suite, PG_VERDICT_ERROR,
				  PG_OUTCOME_INFRA, note.ptr);
			pg_buf_release(&note);
			continue;
		}
		all = pg_metrics_all(&nm);
		for (size_t i = 0; i < nm; i++)
			if (all[i].suite == suite && all[i].direction != PG_NO_DIRECTION)
				compare_metric(out, policy, bp, rp, cp, &all[i], opts);
	}
	free(names);
	pg_cmp_index_release(&run_ix);
	pg_cmp_index_release(&confirm_ix);
	pg_cmp_frontiers(out, policy, base, run, n_run);

	out->outcome = PG_OUTCOME_PASS;
	for (size_t i = 0; i < out->n; i++) {
		const struct pg_cmp_row *r = &out->rows[i];
		out->counts[r->verdict]++;
		if (r->outcome == PG_OUTCOME_FAIL)
			out->failing++;
		if (r->metric && (r->rule.gate || r->rule.escalate > 0))
			out->gated++;
		if (r->outcome > out->outcome)
			out->outcome = r->outcome;
	}
	/* a sick job's regression is the machine's: re-run, do not fail */
	if (opts->suspect && out->outcome == PG_OUTCOME_FAIL) {
		out->suspect = pg_xstrdup(opts->suspect);
		out->outcome = PG_OUTCOME_INFRA;
		for (size_t i = 0; i < out->n; i++) {
			const char *p = out->rows[i].point;
			bool listed = false;
			if (out->rows[i].outcome != PG_OUTCOME_FAIL)
				continue;
			for (size_t k = 0; k < out->rerun.n && !listed; k++)
				listed = !strcmp(out->rerun.v[k], p);
			if (!listed)
				pg_strv_push(&out->rerun, p);
		}
	}
}

void pg_comparison_release(struct pg_comparison *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->rows[i].point);
		free(c->rows[i].test);
		free(c->rows[i].note);
	}
	free(c->rows);
	free(c->gpu);
	free(c->baseline_kind);
	free(c->baseline_source);
	free(c->suspect);
	pg_strv_release(&c->rerun);
	memset(c, 0, sizeof(*c));
}
