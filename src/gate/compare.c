#include "gate/compare.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "gate/compare_stats.h"
#include "base/exitcode.h"
#include "base/jsonw.h"

#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* clang-format off */
static const char *const verdict_names[PG_VERDICT_COUNT] = {
	[PG_VERDICT_REGRESSED] = "regressed",
	[PG_VERDICT_NOISY] = "noisy",
	[PG_VERDICT_ERROR] = "error",
	[PG_VERDICT_MISSING] = "missing",
	[PG_VERDICT_INSUFFICIENT] = "insufficient-data",
	[PG_VERDICT_IMPROVED] = "improved",
	[PG_VERDICT_NEW] = "new",
	[PG_VERDICT_UNCHANGED] = "unchanged",
};
/* clang-format on */

const char *pg_verdict_name(enum pg_verdict v)
{
	return (unsigned)v < PG_VERDICT_COUNT ? verdict_names[v] : "?";
}

const char *pg_outcome_name(enum pg_outcome o)
{
	switch (o) {
	case PG_OUTCOME_PASS:
		return "pass";
	case PG_OUTCOME_WARN:
		return "warn";
	case PG_OUTCOME_INFRA:
		return "error";
	case PG_OUTCOME_FAIL:
		return "fail";
	}
	return "?";
}

int pg_outcome_exit_code(enum pg_outcome o)
{
	switch (o) {
	case PG_OUTCOME_FAIL:
		return PG_EXIT_REGRESSION;
	case PG_OUTCOME_INFRA:
		return PG_EXIT_INFRA;
	default:
		return PG_EXIT_OK;
	}
}

/* ------------------------------------------------------------------ */
/* Policy                                                              */

void pg_policy_init(struct pg_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->alpha = PG_DEFAULT_ALPHA;
	p->min_samples = PG_DEFAULT_MIN_SAMPLES;
	p->noise_sigmas = PG_DEFAULT_NOISE_SIGMAS;
	p->escalate = PG_DEFAULT_ESCALATE;
	p->recheck = NAN; /* per metric class, see class_recheck() */
	p->min_history = PG_DEFAULT_MIN_HISTORY;
	p->history_window = PG_DEFAULT_HISTORY_WINDOW;
}

void pg_policy_release(struct pg_policy *p)
{
	for (size_t i = 0; i < p->n_entries; i++) {
		free(p->entries[i].pattern);
		free(p->entries[i].metric);
	}
	free(p->entries);
	memset(p, 0, sizeof(*p));
}

void pg_policy_add(struct pg_policy *p, const char *pattern, const char *metric,
		   const struct pg_rule_patch *patch, int line)
{
	struct pg_policy_entry e = { pg_xstrdup(pattern), pg_xstrdup(metric), *patch, line };
	PG_ARRAY_PUSH(p->entries, p->n_entries, p->cap_entries, e);
}

static void apply_patch(struct pg_rule *r, const struct pg_rule_patch *p)
{
	if (p->set & PG_RULE_GATE)
		r->gate = p->rule.gate;
	if (p->set & PG_RULE_TOLERANCE)
		r->tolerance = p->rule.tolerance;
	if (p->set & PG_RULE_FLOOR)
		r->floor = p->rule.floor;
	if (p->set & PG_RULE_ESCALATE)
		r->escalate = p->rule.escalate;
	if (p->set & PG_RULE_ALPHA)
		r->alpha = p->rule.alpha;
	if (p->set & PG_RULE_MIN_SAMPLES)
		r->min_samples = p->rule.min_samples;
	if (p->set & PG_RULE_NOISE_SIGMAS)
		r->noise_sigmas = p->rule.noise_sigmas;
	if (p->set & PG_RULE_RECHECK)
		r->recheck = p->rule.recheck;
	if (p->set & PG_RULE_CERTIFY)
		r->certify = p->rule.certify;
	if (p->set & PG_RULE_LIMIT)
		r->limit = p->rule.limit;
}

static bool entry_metric_matches(const struct pg_policy_entry *e, const struct pg_metric *m)
{
	return !strcmp(e->metric, "*") || !strcmp(e->metric, m->id);
}

/*
 * Default re-run trigger, as a fraction of the failing threshold, per metric
 * class (bench/gate-sim tuned these). Throughput must catch a 5% regression
 * with 95% power, so it re-runs early; the other classes have no power
 * target that tight and re-run later, which keeps re-runs (GPU time) down.
 */
static double class_recheck(enum pg_metric_class cls)
{
	switch (cls) {
	case PG_CLASS_THROUGHPUT:
		return PG_DEFAULT_RECHECK_THROUGHPUT;
	case PG_CLASS_TAIL:
		return PG_DEFAULT_RECHECK_TAIL;
	default:
		return PG_DEFAULT_RECHECK_LATENCY;
	}
}

void pg_policy_rule(const struct pg_policy *p, const char *point, const char *test,
		    const struct pg_metric *m, struct pg_rule *out)
{
	memset(out, 0, sizeof(*out));
	out->gate = m->gated;
	out->tolerance = m->tolerance;
	out->floor = m->floor;
	out->escalate = m->cls == PG_CLASS_TAIL ? p->escalate : 0;
	out->alpha = p->alpha;
	out->min_samples = p->min_samples;
	out->noise_sigmas = p->noise_sigmas;
	out->recheck = isnan(p->recheck) ? class_recheck(m->cls) : p->recheck;
	out->certify = true;
	out->limit = NAN;

	for (size_t i = 0; i < p->n_entries; i++) {
		const struct pg_policy_entry *e = &p->entries[i];
		if (!e->pattern && entry_metric_matches(e, m))
			apply_patch(out, &e->patch);
	}
	for (size_t i = 0; i < p->n_entries; i++) {
		const struct pg_policy_entry *e = &p->entries[i];
		if (!e->pattern || !entry_metric_matches(e, m))
			continue;
		if ((point && !fnmatch(e->pattern, point, 0)) ||
		    (test && !fnmatch(e->pattern, test, 0)))
			apply_patch(out, &e->patch);
	}
}

/* ------------------------------------------------------------------ */
/* Baselines                                                           */

static void base_point_release(struct pg_base_point *p)
{
	free(p->name);
	free(p->test);
	free(p->gpu);
	free(p->source);
	free(p->date);
	free(p->commit);
	free(p->insufficient);
	for (size_t i = 0; i < p->n_metrics; i++)
		free(p->metrics[i].samples);
	free(p->metrics);
}

void pg_baseline_release(struct pg_baseline *b)
{
	for (size_t i = 0; i < b->n; i++)
		base_point_release(&b->points[i]);
	free(b->points);
	free(b->gpu);
	free(b->kind);
	free(b->source);
	memset(b, 0, sizeof(*b));
}

struct pg_base_point *pg_baseline_find(const struct pg_baseline *b, const char *name)
{
	size_t lo = 0, hi = b->n;

	if (!b->sorted) {
		for (size_t i = 0; i < b->n; i++)
			if (!strcmp(b->points[i].name, name))
				return &b->points[i];
		return NULL;
	}
	/* the first point not before name */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(b->points[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < b->n && !strcmp(b->points[lo].name, name) ? &b->points[lo] : NULL;
}

struct pg_base_point *pg_baseline_add(struct pg_baseline *b, const char *name,
				      enum pg_suite_kind suite)
{
	struct pg_base_point *p;

	pg_grow((void **)&b->points, &b->cap, b->n + 1, sizeof(*b->points));
	p = &b->points[b->n++];
	b->sorted = false;
	memset(p, 0, sizeof(*p));
	p->name = pg_xstrdup(name);
	p->suite = suite;
	p->qps = NAN;
	p->max_concurrency = -1;
	p->runs = 1;
	p->repeats = 1;
	return p;
}

struct pg_base_metric *pg_base_point_add_metric(struct pg_base_point *p, const struct pg_metric *m,
						double value, const double *samples,
						size_t n_samples)
{
	struct pg_base_metric *bm;

	pg_grow((void **)&p->metrics, &p->cap_metrics, p->n_metrics + 1, sizeof(*p->metrics));
	bm = &p->metrics[p->n_metrics++];
	memset(bm, 0, sizeof(*bm));
	bm->metric = m;
	bm->noise = NAN;
	bm->runs = 1;
	if (n_samples) {
		bm->samples = pg_xmalloc(n_samples * sizeof(double));
		memcpy(bm->samples, samples, n_samples * sizeof(double));
		bm->n_samples = n_samples;
	}
	bm->value = isnan(value) ? pg_cmpstat_median(samples, n_samples) : value;
	return bm;
}

struct pg_base_metric *pg_base_point_add_runs(struct pg_base_point *p, const struct pg_metric *m,
					      const double *run_medians, size_t k)
{
	struct pg_base_metric *bm = pg_base_point_add_metric(p, m, NAN, run_medians, k);

	bm->runs = (long)k;
	if (k >= 3)
		bm->noise = pg_cmpstat_robust_cv(run_medians, k);
	return bm;
}

const struct pg_base_metric *pg_base_point_metric(const struct pg_base_point *p,
						  const struct pg_metric *m)
{
	for (size_t i = 0; i < p->n_metrics; i++)
		if (p->metrics[i].metric == m)
			return &p->metrics[i];
	return NULL;
}

static int cmp_point_name(const void *a, const void *b)
{
	return strcmp(((const struct pg_base_point *)a)->name,
		      ((const struct pg_base_point *)b)->name);
}

void pg_baseline_sort(struct pg_baseline *b)
{
	if (b->n > 1)
		qsort(b->points, b->n, sizeof(*b->points), cmp_point_name);
	b->sorted = true;
}

/* ------------------------------------------------------------------ */
/* Run indexes                                                         */

static int cmp_run_ptr(const void *a, const void *b)
{
	const struct pg_cmp_point *x = *(const struct pg_cmp_point *const *)a;
	const struct pg_cmp_point *y = *(const struct pg_cmp_point *const *)b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x > y) - (x < y);
}

void pg_cmp_index_init(struct pg_cmp_index *ix, const struct pg_cmp_point *pts, size_t n)
{
	ix->v = pg_xmalloc((n ? n : 1) * sizeof(*ix->v));
	ix->n = 0;
	for (size_t i = 0; i < n; i++)
		if (pts[i].name)
			ix->v[ix->n++] = &pts[i];
	if (ix->n > 1)
		qsort(ix->v, ix->n, sizeof(*ix->v), cmp_run_ptr);
}

const struct pg_cmp_point *pg_cmp_index_find(const struct pg_cmp_index *ix, const char *name)
{
	size_t lo = 0, hi = ix->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(ix->v[mid]->name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ix->n && !strcmp(ix->v[lo]->name, name) ? ix->v[lo] : NULL;
}

void pg_cmp_index_release(struct pg_cmp_index *ix)
{
	free(ix->v);
	ix->v = NULL;
	ix->n = 0;
}

/* ------------------------------------------------------------------ */
/* One decision                                                        */

void pg_decide(struct pg_decision *out, const struct pg_rule *rule, enum pg_direction dir,
	       const struct pg_base_metric *base, const double *cur, size_t n_cur)
{
	double b, c, d, limit, tol, fail_at;
	bool worse, tested;

	memset(out, 0, sizeof(*out));
	out->verdict = PG_VERDICT_UNCHANGED;
	out->p_value = NAN;
	b = isnan(base->value) ? pg_cmpstat_median(base->samples, base->n_samples) : base->value;
	c = pg_cmpstat_median(cur, n_cur);
	out->baseline = b;
	out->current = c;
	out->change = b != 0 ? c / b - 1 : NAN;

	tol = rule->tolerance;
	if (isfinite(base->noise) && rule->noise_sigmas > 0) {
		/* noise is a relative sd: widen in log space, like the effect */
		double widened = expm1(rule->noise_sigmas * base->noise);
		if (widened > tol)
			tol = widened;
	}
	out->tolerance = tol;

	if (!isfinite(b) || !isfinite(c) || dir == PG_NO_DIRECTION)
		return;
	if (fabs(c - b) <= rule->floor) {
		out->below_floor = true;
		return;
	}
	if (b > 0 && c > 0)
		d = log(c / b);
	else
		d = c > b ? INFINITY : -INFINITY;
	if (dir == PG_HIGHER_IS_BETTER)
		d = -d;
	limit = log1p(tol);

	/* The threshold beyond which this metric fails, and the lower one at
	 * which a first run is worth re-running: confirmation pools a second
	 * run, and deciding on the pool is what keeps false alarms rare, so
	 * catching a real regression needs the re-run to start early. */
	fail_at = rule->gate           ? limit
		  : rule->escalate > 0 ? log1p(fmax(rule->escalate, tol))
				       : INFINITY;
	out->flagged = isfinite(fail_at) && d > fail_at * rule->recheck;
	if (fabs(d) <= limit)
		return;

	worse = d > 0;
	out->verdict = worse ? PG_VERDICT_REGRESSED : PG_VERDICT_IMPROVED;
	tested = base->n_samples >= (size_t)rule->min_samples &&
		 n_cur >= (size_t)rule->min_samples && rule->min_samples > 0;
	if (tested) {
		/* "worse" means larger for lower-is-better metrics */
		bool cur_larger = (dir == PG_LOWER_IS_BETTER) == worse;
		out->p_value = cur_larger ? pg_cmpstat_mwu_greater(cur, n_cur, base->samples,
								   base->n_samples, NULL)
					  : pg_cmpstat_mwu_greater(base->samples, base->n_samples,
								   cur, n_cur, NULL);
		if (!(out->p_value < rule->alpha))
			out->verdict = PG_VERDICT_NOISY;
	}
	out->escalated = worse && rule->escalate > 0 && d > log1p(fmax(rule->escalate, tol));
	out->fails = out->verdict == PG_VERDICT_REGRESSED && (rule->gate || out->escalated);
}

double pg_result_qps(const json_t *result)
{
	json_t *v = pg_json_path(result, "perfgate.params.qps");
	double d;

	if (!v || json_is_null(v))
		v = json_object_get(result, "request_rate");
	if (json_is_number(v))
		return json_number_value(v);
	if (json_is_string(v) && pg_parse_double(json_string_value(v), &d) == 0)
		return d;
	return NAN;
}

long pg_result_max_concurrency(const json_t *result)
{
	json_t *params = pg_json_path(result, "perfgate.params");
	json_t *v = json_is_object(params) ? json_object_get(params, "max_concurrency") : NULL;

	if (!v)
		v = json_object_get(result, "max_concurrency");
	if (json_is_integer(v))
		return (long)json_integer_value(v);
	return json_is_null(v) ? 0 : -1;
}

size_t pg_result_samples(const json_t *result, const struct pg_metric *m, double **out)
{
	json_t *repeats = pg_json_path(result, "perfgate.repeats");
	double *v = NULL, x;
	size_t n = 0, cap = 0, i;
	json_t *r;

	*out = NULL;
	if (json_is_array(repeats)) {
		json_array_foreach(repeats, i, r)
		{
			if (pg_metric_value(m, r, &x) == 0)
				PG_ARRAY_PUSH(v, n, cap, x);
		}
	}
	if (n == 0 && pg_metric_value(m, result, &x) == 0)
		PG_ARRAY_PUSH(v, n, cap, x);
	*out = v;
	return n;
}
