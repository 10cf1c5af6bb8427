#include "gate/compare.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "gate/compare_stats.h"
#include "base/exitcode.h"
#include "base/jsonw.h"
#include "results/cold.h"

#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* clang-format off */
static const char *const verdict_names[PG_VERDICT_COUNT] = {
	[PG_VERDICT_REGRESSED] = "regressed",
	[PG_VERDICT_NOT_REPRODUCED] = "not-reproduced",
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

const char *pg_cmp_method_name(enum pg_cmp_method m)
{
	switch (m) {
	case PG_METHOD_STEP:
		return "step";
	case PG_METHOD_HISTORY:
		return "history";
	case PG_METHOD_CROSSWISE:
		return "crosswise";
	case PG_METHOD_TOLERANCE:
		return "tolerance";
	default:
		return "";
	}
}

const char *pg_basis_kind_name(enum pg_basis_kind k)
{
	switch (k) {
	case PG_BASIS_HISTORY:
		return "history";
	case PG_BASIS_THRESHOLDS:
		return "thresholds";
	default:
		return "";
	}
}

/* ------------------------------------------------------------------ */
/* Policy                                                              */

void pg_policy_init(struct pg_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->step_false_alarm = PG_DEFAULT_STEP_FALSE_ALARM;
	p->rerun_anchors = PG_DEFAULT_RERUN_ANCHORS;
	p->noise_sigmas = PG_DEFAULT_NOISE_SIGMAS;
	p->escalate = PG_DEFAULT_ESCALATE;
	p->min_history = PG_DEFAULT_MIN_HISTORY;
	p->history_window = PG_DEFAULT_HISTORY_WINDOW;
	p->persist = PG_DEFAULT_PERSIST;
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
	if (p->set & PG_RULE_TOLERANCE) {
		r->tolerance = p->rule.tolerance;
		r->tolerance_set = true;
	}
	if (p->set & PG_RULE_FLOOR)
		r->floor = p->rule.floor;
	if (p->set & PG_RULE_ESCALATE)
		r->escalate = p->rule.escalate;
	if (p->set & PG_RULE_NOISE_SIGMAS)
		r->noise_sigmas = p->rule.noise_sigmas;
	if (p->set & PG_RULE_CERTIFY)
		r->certify = p->rule.certify;
	if (p->set & PG_RULE_LIMIT)
		r->limit = p->rule.limit;
}

static bool entry_metric_matches(const struct pg_policy_entry *e, const struct pg_metric *m)
{
	return !strcmp(e->metric, "*") || !strcmp(e->metric, m->id);
}

void pg_policy_rule(const struct pg_policy *p, const char *point, const char *test,
		    const struct pg_metric *m, struct pg_rule *out)
{
	memset(out, 0, sizeof(*out));
	out->gate = m->gated;
	out->tolerance = m->tolerance;
	out->floor = m->floor;
	out->escalate = m->cls == PG_CLASS_TAIL ? p->escalate : 0;
	out->noise_sigmas = p->noise_sigmas;
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
	for (size_t i = 0; i < p->n_metrics; i++) {
		free(p->metrics[i].samples);
		free(p->metrics[i].jobs);
		free(p->metrics[i].span);
		free(p->metrics[i].span_jobs);
		free(p->metrics[i].span_seg);
	}
	free(p->metrics);
}

void pg_baseline_release(struct pg_baseline *b)
{
	for (size_t i = 0; i < b->n; i++)
		base_point_release(&b->points[i]);
	free(b->points);
	for (size_t i = 0; i < b->n_jobs; i++) {
		free(b->jobs[i].commit);
		free(b->jobs[i].date);
	}
	free(b->jobs);
	for (size_t i = 0; i < b->n_changes; i++)
		free(b->changes[i].point);
	free(b->changes);
	free(b->gpu);
	free(b->kind);
	free(b->source);
	memset(b, 0, sizeof(*b));
}

long pg_baseline_add_job(struct pg_baseline *b, const char *commit, const char *date)
{
	struct pg_base_job j = { pg_xstrdup(commit), pg_xstrdup(date) };

	PG_ARRAY_PUSH(b->jobs, b->n_jobs, b->cap_jobs, j);
	return (long)b->n_jobs - 1;
}

void pg_baseline_add_change(struct pg_baseline *b, const char *point, const struct pg_metric *m,
			    long job, double shift)
{
	struct pg_base_change c = { pg_xstrdup(point), m, job, shift };

	PG_ARRAY_PUSH(b->changes, b->n_changes, b->cap_changes, c);
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
	bm->level_from = -1;
	bm->known_job = -1;
	bm->newest_job = -1;
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

struct pg_base_metric *pg_base_point_add_jobs(struct pg_base_point *p, const struct pg_metric *m,
					      const double *run_medians, const long *jobs, size_t k)
{
	struct pg_base_metric *bm = pg_base_point_add_runs(p, m, run_medians, k);

	if (k) {
		bm->jobs = pg_xmalloc(k * sizeof(long));
		memcpy(bm->jobs, jobs, k * sizeof(long));
	}
	return bm;
}

void pg_base_metric_set_span(struct pg_base_metric *bm, const double *v, const long *jobs,
			     const int *seg, size_t n)
{
	free(bm->span);
	free(bm->span_jobs);
	free(bm->span_seg);
	bm->span = pg_xmalloc((n ? n : 1) * sizeof(double));
	bm->span_jobs = pg_xmalloc((n ? n : 1) * sizeof(long));
	bm->span_seg = pg_xmalloc((n ? n : 1) * sizeof(int));
	memcpy(bm->span, v, n * sizeof(double));
	memcpy(bm->span_jobs, jobs, n * sizeof(long));
	memcpy(bm->span_seg, seg, n * sizeof(int));
	bm->n_span = n;
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
/* Result objects                                                      */

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
	long cold = pg_cold_left_out(result);
	json_t *r;

	*out = NULL;
	if (json_is_array(repeats)) {
		json_array_foreach(repeats, i, r)
		{
			/* a cold first run is not a sample of the point
			 * (results/cold.h): not for the gate, nor the
			 * baselines and history made from these */
			if ((long)i == cold)
				continue;
			if (pg_metric_value(m, r, &x) == 0)
				PG_ARRAY_PUSH(v, n, cap, x);
		}
	}
	if (n == 0 && pg_metric_value(m, result, &x) == 0)
		PG_ARRAY_PUSH(v, n, cap, x);
	*out = v;
	return n;
}

json_t *pg_comparison_regressed(const struct pg_comparison *c)
{
	json_t *out = json_object();

	for (size_t i = 0; i < c->n; i++) {
		const struct pg_cmp_row *r = &c->rows[i];
		struct pg_buf ids = PG_BUF_INIT;
		json_t *had;
		if (!r->metric || r->verdict != PG_VERDICT_REGRESSED ||
		    !(r->rule.gate || r->rule.escalate > 0) ||
		    !(r->outcome == PG_OUTCOME_FAIL || r->known))
			continue;
		had = json_object_get(out, r->point);
		if (json_is_string(had))
			pg_buf_printf(&ids, "%s,", json_string_value(had));
		pg_buf_puts(&ids, r->metric->id);
		json_object_set_new(out, r->point, json_string(ids.ptr));
		pg_buf_release(&ids);
	}
	return out;
}
