/* pg_compare: a whole run against a baseline, row by row. */
#include "gate/compare.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "gate/compare_stats.h"
#include "gate/compare_frontier.h"
#include "gate/compare_slo.h"
#include "gate/compare_tails.h"
#include "gate/compare_step.h"
#include "base/jsonw.h"
#include "results/cold.h"
#include "results/identity.h"

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
	row->effect = row->run_change = row->noise = row->p_adjusted = NAN;
	row->ci_low = row->ci_high = row->catchable = NAN;
	for (int k = 0; k < 2; k++) {
		struct pg_cmp_side *sd = k ? &row->rerun : &row->first;
		sd->current = sd->change = sd->effect = sd->p_value = sd->p_adjusted = NAN;
		sd->ci_low = sd->ci_high = NAN;
	}
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

/* The repeat-to-repeat spread of a run's samples, in log units (their
 * relative sd), NAN under 3 samples or with values <= 0. */
static double within_sd(const double *x, size_t n)
{
	double *l, sd;

	if (n < 3)
		return NAN;
	l = pg_xmalloc(n * sizeof(double));
	for (size_t i = 0; i < n; i++)
		l[i] = x[i] > 0 ? log(x[i]) : NAN;
	sd = pg_cmpstat_robust_sd(l, n, pg_cmpstat_median(l, n));
	free(l);
	return sd;
}

/* The pairs a comparison decides, collected row by row. */
struct collect {
	struct pg_step_pair *pairs;
	size_t n, cap;
	const struct pg_cmp_point **jobs; /* one run point per job seen */
	size_t n_jobs, cap_jobs;
};

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* The job (group) of a run point: points with the same host and run start. */
static size_t job_of(struct collect *col, const struct pg_cmp_point *rp)
{
	for (size_t i = 0; i < col->n_jobs; i++)
		if (same_str(col->jobs[i]->host, rp->host) &&
		    same_str(col->jobs[i]->run_started, rp->run_started))
			return i;
	PG_ARRAY_PUSH(col->jobs, col->n_jobs, col->cap_jobs, rp);
	return col->n_jobs - 1;
}

/* s kept by the comparison (NULL stays NULL); rows of one point, and the
 * windows of one history, ask for the same strings in a row, so the last
 * few are reused. */
static const char *intern(struct pg_comparison *c, const char *s)
{
	if (!s)
		return NULL;
	for (size_t k = c->texts.n, seen = 0; k > 0 && seen < 8; k--, seen++)
		if (!strcmp(c->texts.v[k - 1], s))
			return c->texts.v[k - 1];
	pg_strv_push(&c->texts, s);
	return c->texts.v[c->texts.n - 1];
}

/* The jobs of base a metric's samples come from, from job `from` on: how
 * many samples, and the first and last job (-1 when none: a thresholds
 * file's value has no jobs). */
static size_t job_span(const struct pg_baseline *base, const struct pg_base_metric *bm, long from,
		       long *first, long *last)
{
	size_t runs = 0;

	*first = *last = -1;
	for (size_t k = 0; bm->jobs && k < bm->n_samples; k++) {
		long j = bm->jobs[k];
		if (j < 0 || (size_t)j >= base->n_jobs || j < from)
			continue;
		*first = *first < 0 || j < *first ? j : *first;
		*last = j > *last ? j : *last;
		runs++;
	}
	return runs;
}

/* The same as basis()'s words, for programs (pg_cmp_row.base_of). */
static void basis_of(struct pg_comparison *c, struct pg_cmp_basis *out,
		     const struct pg_baseline *base, const struct pg_base_point *bp,
		     const struct pg_base_metric *bm, long from)
{
	long first, last;
	size_t runs = job_span(base, bm, from, &first, &last);

	memset(out, 0, sizeof(*out));
	if (first >= 0) {
		out->kind = PG_BASIS_HISTORY;
		out->runs = from > 0 ? runs : bm->n_samples;
		out->first_commit = intern(c, base->jobs[first].commit);
		out->last_commit = intern(c, base->jobs[last].commit);
		out->first_date = intern(c, base->jobs[first].date);
		out->last_date = intern(c, base->jobs[last].date);
		return; /* the source is the comparison's (baseline.source) */
	}
	out->kind = PG_BASIS_THRESHOLDS;
	out->runs = bm->runs > 1 ? (size_t)bm->runs : 1;
	out->repeats = bm->runs > 1 ? 0 : bm->n_samples;
	out->first_commit = out->last_commit = intern(c, bp->commit);
	out->first_date = out->last_date = intern(c, bp->date);
	out->source = intern(c, bp->source);
	out->line = bm->line;
}

/* The window of runs of main behind a regressed row, oldest first, for
 * its chart. */
static struct pg_cmp_trail *trail_of(struct pg_comparison *c, const struct pg_baseline *base,
				     const struct pg_base_metric *bm, long from)
{
	struct pg_cmp_trail *t;
	size_t n = bm->n_samples, *order;

	if (!n || !bm->samples)
		return NULL;
	t = pg_xcalloc(1, sizeof(*t));
	t->y = pg_xmalloc(n * sizeof(double));
	t->commit = pg_xcalloc(n, sizeof(*t->commit));
	t->date = pg_xcalloc(n, sizeof(*t->date));
	order = pg_xmalloc(n * sizeof(size_t));
	/* job order (an insertion sort: a window is a few dozen runs) */
	for (size_t k = 0; k < n; k++) {
		size_t p = k;
		for (; p > 0 && bm->jobs && bm->jobs[order[p - 1]] > bm->jobs[k]; p--)
			order[p] = order[p - 1];
		order[p] = k;
	}
	for (size_t k = 0; k < n; k++) {
		long j = bm->jobs ? bm->jobs[order[k]] : -1;
		t->y[k] = bm->samples[order[k]];
		if (j >= 0 && j < from)
			t->from = k + 1;
		if (j >= 0 && (size_t)j < base->n_jobs) {
			t->commit[k] = intern(c, base->jobs[j].commit);
			t->date[k] = intern(c, base->jobs[j].date);
		}
	}
	t->n = n;
	free(order);
	return t;
}

/* What a row judged against a thresholds file charts: the baseline's
 * samples, and for a point judged against the run's other points their
 * changes (the rows of its metric judged so in the same job: one job's
 * rows share its common change exactly). */
static struct pg_cmp_spread *spread_of(const struct pg_comparison *c, const struct pg_cmp_row *r,
				       const struct pg_base_metric *bm)
{
	struct pg_cmp_spread *s = pg_xcalloc(1, sizeof(*s));
	size_t cap = 0;

	if (bm->samples && bm->n_samples) {
		s->samples = pg_xmalloc(bm->n_samples * sizeof(double));
		memcpy(s->samples, bm->samples, bm->n_samples * sizeof(double));
		s->n_samples = bm->n_samples;
		s->per_run = bm->runs > 1;
	}
	if (r->method != PG_METHOD_CROSSWISE)
		return s;
	for (size_t i = 0; i < c->n; i++) {
		const struct pg_cmp_row *o = &c->rows[i];
		if (o == r || o->metric != r->metric || o->method != PG_METHOD_CROSSWISE ||
		    o->run_change != r->run_change || !isfinite(o->first.change))
			continue;
		PG_ARRAY_PUSH(s->peers, s->n_peers, cap, o->first.change);
	}
	return s;
}

static void spread_free(struct pg_cmp_spread *s)
{
	if (!s)
		return;
	free(s->samples);
	free(s->peers);
	free(s);
}

static void files_free(struct pg_cmp_files *f)
{
	if (!f)
		return;
	free(f->result);
	free(f->log);
	free(f->rerun_result);
	free(f->rerun_log);
	free(f);
}

static void trail_free(struct pg_cmp_trail *t)
{
	if (!t)
		return;
	free(t->y);
	free(t->commit);
	free(t->date);
	free(t);
}

/* What a baseline value rests on, in a few words (pg_cmp_row.basis). */
static char *basis(const struct pg_baseline *base, const struct pg_base_point *bp,
		   const struct pg_base_metric *bm, long from)
{
	struct pg_buf b = PG_BUF_INIT;
	long first, last;
	size_t n = bm->n_samples, runs = job_span(base, bm, from, &first, &last);

	if (from > 0)
		n = runs; /* since the run's common change point */
	if (first >= 0) {
		/* a git history: the jobs of the window */
		const struct pg_base_job *a = &base->jobs[first], *z = &base->jobs[last];
		pg_buf_printf(&b, "median of %zu run%s of main", n, n == 1 ? "" : "s");
		if (from > 0)
			pg_buf_puts(&b, " since its last whole-run change");
		else if (bm->level_from > 0)
			pg_buf_puts(&b, " since its level changed");
		if (a->commit && z->commit && first != last)
			pg_buf_printf(&b, ", %.12s..%.12s", a->commit, z->commit);
		else if (z->commit)
			pg_buf_printf(&b, ", %.12s", z->commit);
		if (a->date && z->date && strncmp(a->date, z->date, 10))
			pg_buf_printf(&b, " (%.10s to %.10s)", a->date, z->date);
		else if (z->date)
			pg_buf_printf(&b, " (%.10s)", z->date);
		return pg_buf_detach(&b);
	}
	if (bm->runs > 1)
		pg_buf_printf(&b, "median of %ld runs", bm->runs);
	else if (n > 1)
		pg_buf_printf(&b, "median of %zu repeats", n);
	else
		pg_buf_puts(&b, "one value");
	if (bp->source)
		pg_buf_printf(&b, " from %s", bp->source);
	if (bp->date || bp->commit) {
		pg_buf_puts(&b, " (");
		if (bp->date)
			pg_buf_printf(&b, "%.10s", bp->date);
		if (bp->commit)
			pg_buf_printf(&b, "%scommit %.12s", bp->date ? ", " : "", bp->commit);
		pg_buf_puts(&b, ")");
	}
	return pg_buf_detach(&b);
}

/*
 * Under a fixed request rate a serving point's throughputs are the offered
 * rate (within 0.04% on real GPU series): they carry no signal, so they
 * are shown and never gated; latencies, attainment and goodput decide.
 * At an unbounded rate (inf) the throughput is the capacity, and gates.
 */
static bool pinned_by_rate(const struct pg_cmp_row *row, const struct pg_metric *m)
{
	static const char *const pinned[] = { "request_throughput", "output_throughput",
					      "total_token_throughput", "input_seq_throughput" };

	if (row->suite != PG_SUITE_SERVING || !isfinite(row->qps) || !(row->qps > 0))
		return false;
	for (size_t i = 0; i < sizeof(pinned) / sizeof(pinned[0]); i++)
		if (!strcmp(m->id, pinned[i]))
			return true;
	return false;
}

static void compare_metric(struct pg_comparison *c, struct collect *col,
			   const struct pg_policy *policy, const struct pg_baseline *base,
			   const struct pg_base_point *bp, const struct pg_cmp_point *rp,
			   const struct pg_cmp_point *cp, const struct pg_metric *m,
			   const struct pg_compare_opts *opts)
{
	const struct pg_base_metric *bm = bp ? pg_base_point_metric(bp, m) : NULL;
	double *cur = NULL, *conf = NULL;
	size_t n_cur = pg_result_samples(rp->result, m, &cur), n_conf = 0;
	struct pg_cmp_row *row;
	struct pg_step_pair pair;

	if (!bm && n_cur == 0)
		goto done;
	row = add_row(c, rp->name, bp, rp, rp->suite);
	row->metric = m;
	pg_policy_rule(policy, row->point, row->test, m, &row->rule);
	if (pinned_by_rate(row, m)) {
		row->rule.gate = false;
		row->rule.escalate = 0;
	}
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
	row->basis = basis(base, bp, bm, 0);
	basis_of(c, &row->base_of, base, bp, bm, 0);
	if (!bp->insufficient && pg_cmp_tail_undecidable(row, rp->result, cur, n_cur))
		goto done;
	if (n_cur == 0) {
		row->verdict = PG_VERDICT_MISSING;
		row->outcome = row->rule.gate && !opts->allow_missing ? PG_OUTCOME_INFRA
								      : PG_OUTCOME_WARN;
		set_note(row, "the run did not report this metric");
		goto done;
	}
	row->current = pg_cmpstat_median(cur, n_cur);
	row->n_current = n_cur;
	row->change = row->baseline != 0 ? row->current / row->baseline - 1 : NAN;
	if (bp->insufficient) {
		row->verdict = PG_VERDICT_INSUFFICIENT;
		row->outcome = PG_OUTCOME_WARN;
		set_note(row, "%s", bp->insufficient);
		goto done;
	}
	memset(&pair, 0, sizeof(pair));
	pair.row = c->n - 1;
	pair.group = job_of(col, rp);
	pair.bp = bp;
	pair.bm = bm;
	pair.v1 = row->current;
	pair.pinned = pinned_by_rate(row, m);
	pair.n1 = n_cur;
	pair.w1 = within_sd(cur, n_cur);
	pair.v2 = pair.w2 = NAN;
	if (cp && status_failed(cp)) {
		pair.rerun_failed = true;
	} else if (cp) {
		n_conf = pg_result_samples(cp->result, m, &conf);
		if (n_conf) {
			pair.v2 = pg_cmpstat_median(conf, n_conf);
			pair.n2 = n_conf;
			pair.w2 = within_sd(conf, n_conf);
		} else {
			pair.rerun_lacks = true;
		}
	}
	PG_ARRAY_PUSH(col->pairs, col->n, col->cap, pair);
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

/* Is name in the sorted array? */
static bool in_sorted(const char *const *v, size_t n, const char *name)
{
	return n && bsearch(&name, v, n, sizeof(*v), cmp_cstr) != NULL;
}

static bool in_baseline(void *base, const char *name)
{
	return pg_baseline_find(base, name) != NULL;
}

/*
 * The points of a run under the names the comparison knows them by: each
 * point's identity (results/identity.h), or the older name of the same
 * workload that the baseline was recorded under. Probes keep their names.
 * The copies borrow everything but the names, which go to *names.
 */
static struct pg_cmp_point *identified(const struct pg_baseline *base,
				       const struct pg_cmp_point *pts, size_t n,
				       struct pg_strv *names)
{
	struct pg_cmp_point *out = pg_xcalloc(n ? n : 1, sizeof(*out));
	char **ids = pg_xcalloc(n ? n : 1, sizeof(*ids));
	const char **given = pg_xcalloc(n ? n : 1, sizeof(*given));

	for (size_t i = 0; i < n; i++) {
		out[i] = pts[i];
		given[i] = pts[i].name ? pts[i].name : "";
		if (!pts[i].name || pts[i].probe)
			ids[i] = pg_xstrdup(given[i]);
		else if (!(ids[i] = pg_identity_find(pts[i].name, pts[i].suite, pts[i].result,
						     in_baseline, (void *)base)))
			ids[i] = pg_identity_of(pts[i].name, pts[i].suite, pts[i].result);
	}
	pg_identity_unique(ids, given, n);
	for (size_t i = 0; i < n; i++) {
		pg_strv_push_owned(names, ids[i]);
		if (pts[i].name)
			out[i].name = ids[i];
	}
	free(ids);
	free(given);
	return out;
}

static void evidence_trails(struct pg_comparison *out, const struct pg_baseline *base);

/* The points of pts whose cold first run their samples leave out. */
static void cold_notes(struct pg_comparison *c, const struct pg_cmp_point *pts, size_t n,
		       const char *suffix)
{
	for (size_t i = 0; i < n; i++) {
		const char *note = pg_cold_result_note(pts[i].result);
		struct pg_buf name = PG_BUF_INIT;
		if (!note || pts[i].probe || !pts[i].name)
			continue;
		pg_buf_printf(&name, "%s%s", pts[i].name, suffix);
		pg_strv_push_owned(&c->cold_points, pg_buf_detach(&name));
		pg_strv_push(&c->cold_notes, note);
	}
}

void pg_compare(struct pg_comparison *out, const struct pg_policy *policy,
		const struct pg_baseline *base, const struct pg_cmp_point *run, size_t n_run,
		const struct pg_cmp_point *confirm, size_t n_confirm,
		const struct pg_compare_opts *opts)
{
	static const struct pg_compare_opts no_opts = { false, false, NULL };
	struct pg_cmp_index run_ix, confirm_ix;
	struct collect col = { 0 };
	struct pg_strv ids = PG_STRV_INIT, superseded = PG_STRV_INIT;
	struct pg_cmp_point *run_id, *confirm_id;
	const char **names, **plan = NULL;
	size_t n_names = 0, n_plan = 0;

	if (!opts)
		opts = &no_opts;
	memset(out, 0, sizeof(*out));
	out->gpu = pg_xstrdup(base->gpu);
	out->baseline_kind = pg_xstrdup(base->kind);
	out->baseline_source = pg_xstrdup(base->source);
	out->with_confirmation = n_confirm > 0;

	/* the plan, sorted for lookups; baseline points outside it are not in
	 * this suite: they are neither compared nor missing */
	if (opts->plan) {
		plan = pg_xmalloc((opts->plan->n + 1) * sizeof(*plan));
		for (size_t i = 0; i < opts->plan->n; i++)
			plan[n_plan++] = opts->plan->v[i];
		qsort(plan, n_plan, sizeof(*plan), cmp_cstr);
	}

	cold_notes(out, run, n_run, "");
	cold_notes(out, confirm, n_confirm, " (re-run)");
	/* every point name once, sorted */
	run_id = identified(base, run, n_run, &ids);
	confirm_id = identified(base, confirm, n_confirm, &ids);
	pg_cmp_index_init(&run_ix, run_id, n_run);
	pg_cmp_index_init(&confirm_ix, confirm_id, n_confirm);
	/* the other names of the run's points: baseline points under them
	 * are older records of a workload the run has, never "missing" */
	for (size_t i = 0; i < n_run; i++)
		if (run[i].name && !run[i].probe)
			pg_identity_names(&superseded, run[i].name, run[i].suite, run[i].result);
	if (superseded.n > 1)
		qsort(superseded.v, superseded.n, sizeof(*superseded.v), cmp_cstr);
	names = pg_xmalloc((base->n + n_run + n_plan + 1) * sizeof(*names));
	for (size_t i = 0; i < base->n; i++) {
		const char *name = base->points[i].name;
		if (plan && !in_sorted(plan, n_plan, name) && !pg_cmp_index_find(&run_ix, name)) {
			pg_strv_push(&out->not_in_suite, name);
			continue;
		}
		if (base->points[i].aged && !pg_cmp_index_find(&run_ix, name) &&
		    !(plan && in_sorted(plan, n_plan, name))) {
			pg_strv_push(&out->aged_out, name);
			continue;
		}
		names[n_names++] = name;
	}
	for (size_t i = 0; i < run_ix.n; i++)
		if (!is_probe(run_ix.v[i]) && !pg_baseline_find(base, run_ix.v[i]->name))
			names[n_names++] = run_ix.v[i]->name;
	for (size_t i = 0; i < n_plan; i++)
		if (!pg_baseline_find(base, plan[i]) && !pg_cmp_index_find(&run_ix, plan[i]))
			names[n_names++] = plan[i];
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
		if (k > 0 && !strcmp(names[k - 1], name))
			continue;
		if (!rp && superseded.n &&
		    bsearch(&name, superseded.v, superseded.n, sizeof(*superseded.v), cmp_cstr))
			continue;
		if (!bp && !rp) {
			/* planned, never produced, never recorded */
			point_row(out, policy, name, NULL, NULL, PG_SUITE_SERVING,
				  PG_VERDICT_MISSING,
				  opts->allow_missing ? PG_OUTCOME_WARN : PG_OUTCOME_INFRA,
				  "planned, not in the run");
			out->rows[out->n - 1].suite = PG_SUITE_COUNT;
			continue;
		}
		enum pg_suite_kind suite = bp ? bp->suite : rp->suite;
		size_t nm;
		const struct pg_metric *all;

		if (!rp) {
			point_row(out, policy, name, bp, NULL, suite, PG_VERDICT_MISSING,
				  point_gates(policy, bp) && !opts->allow_missing ? PG_OUTCOME_INFRA
										  : PG_OUTCOME_WARN,
				  plan ? "planned, not in the run"
				       : "in the baseline, not in this run");
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
				compare_metric(out, &col, policy, base, bp, rp, cp, &all[i], opts);
	}
	free(names);
	free(plan);

	out->jobs = col.n_jobs;
	pg_step_decide(out, col.pairs, col.n, policy, base, opts);
	free(col.pairs);
	free(col.jobs);
	/* the pairs point into the identified copies: released after the
	 * decision */
	pg_cmp_index_release(&run_ix);
	pg_cmp_index_release(&confirm_ix);
	pg_cmp_frontiers(out, policy, base, run, n_run);
	free(run_id);
	free(confirm_id);
	pg_strv_release(&ids);
	pg_strv_release(&superseded);

	/* a baseline the test took from the last whole-run change point on
	 * says so (compare_step.c) */
	for (size_t i = 0; i < out->n; i++) {
		struct pg_cmp_row *r = &out->rows[i];
		const struct pg_base_point *bp;
		const struct pg_base_metric *bm;
		if (!r->metric || r->base_from <= 0 || r->base_of.kind != PG_BASIS_HISTORY)
			continue;
		bp = pg_baseline_find(base, r->point);
		bm = bp ? pg_base_point_metric(bp, r->metric) : NULL;
		if (!bm)
			continue;
		free(r->basis);
		r->basis = basis(base, bp, bm, r->base_from);
		basis_of(out, &r->base_of, base, bp, bm, r->base_from);
		r->n_baseline = r->base_of.runs;
	}

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
	for (size_t i = 0; i < out->n_commons; i++)
		if (out->commons[i].outcome > out->outcome)
			out->outcome = out->commons[i].outcome;
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
	evidence_trails(out, base);
}

/* The windows behind the evidence's regressions (the first
 * PG_EVIDENCE_MAX: the charted ones) and their charts' names. */
static void evidence_trails(struct pg_comparison *out, const struct pg_baseline *base)
{
	size_t n, total;
	const struct pg_cmp_row **rows = pg_comparison_evidence_rows(out, &n, &total);
	char **names = pg_xcalloc(n ? n : 1, sizeof(char *));

	for (size_t i = 0; i < n; i++) {
		struct pg_cmp_row *r = &out->rows[rows[i] - out->rows];
		const struct pg_base_point *bp;
		const struct pg_base_metric *bm;
		bp = pg_baseline_find(base, r->point);
		bm = bp ? pg_base_point_metric(bp, r->metric) : NULL;
		if (!bm)
			continue;
		if (r->base_of.kind == PG_BASIS_HISTORY)
			r->trail = trail_of(out, base, bm, r->base_from);
		else if (r->base_of.kind == PG_BASIS_THRESHOLDS &&
			 (r->method == PG_METHOD_TOLERANCE || r->method == PG_METHOD_CROSSWISE) &&
			 isfinite(r->baseline) && r->baseline > 0 && isfinite(r->change))
			r->spread = spread_of(out, r, bm);
	}
	pg_evidence_chart_names(rows, n, names);
	for (size_t i = 0; i < n; i++)
		out->rows[rows[i] - out->rows].chart = names[i];
	free(names);
	free(rows);
}

void pg_comparison_release(struct pg_comparison *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->rows[i].point);
		free(c->rows[i].test);
		free(c->rows[i].note);
		free(c->rows[i].basis);
		trail_free(c->rows[i].trail);
		spread_free(c->rows[i].spread);
		files_free(c->rows[i].files);
		free(c->rows[i].chart);
	}
	free(c->rows);
	for (size_t i = 0; i < c->n_commons; i++)
		free(c->commons[i].note);
	free(c->commons);
	pg_strv_release(&c->cold_points);
	pg_strv_release(&c->cold_notes);
	pg_strv_release(&c->not_in_suite);
	pg_strv_release(&c->aged_out);
	free(c->gpu);
	free(c->baseline_kind);
	free(c->baseline_source);
	free(c->suspect);
	pg_strv_release(&c->rerun);
	pg_strv_release(&c->texts);
	memset(c, 0, sizeof(*c));
}
