#include "baseline/history_ab.h"

#include "base/alloc.h"
#include "base/error.h"
#include "base/jsonw.h"
#include "base/strutil.h"
#include "gate/compare.h"
#include "gpu/gpu.h"
#include "results/metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *str_or_null(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

static json_t *metric_json(const struct pg_ab_summary *s, size_t j, size_t p)
{
	const struct pg_ab_est *e = &s->d.points[j * s->points.n + p];
	const struct pg_ab_est *w = &s->d.whole[j];
	json_t *o = json_object();

	json_object_set_new(o, "change", num_or_null(e->change));
	json_object_set_new(o, "effect", num_or_null(e->effect));
	json_object_set_new(o, "lo", num_or_null(e->lo));
	json_object_set_new(o, "hi", num_or_null(e->hi));
	json_object_set_new(o, "tolerance", num_or_null(s->tolerance[j]));
	json_object_set_new(o, "pairs", json_integer((json_int_t)e->n));
	json_object_set_new(o, "verdict", json_string(pg_ab_verdict_name(e->verdict)));
	if (w->applies) {
		json_t *r = json_object();
		json_object_set_new(r, "change", num_or_null(w->effect));
		json_object_set_new(r, "lo", num_or_null(w->lo));
		json_object_set_new(r, "hi", num_or_null(w->hi));
		json_object_set_new(r, "tolerance", num_or_null(s->whole_tolerance[j]));
		json_object_set_new(r, "verdict", json_string(pg_ab_verdict_name(w->verdict)));
		json_object_set_new(o, "whole_run", r);
	}
	return o;
}

json_t *pg_history_ab_line(const struct pg_ab_summary *s, size_t p, const struct pg_cmp_point *head,
			   const struct pg_history_ab_meta *meta)
{
	json_t *o, *metrics = json_object(), *v;
	enum pg_suite_kind suite = PG_SUITE_SERVING;
	char label[128];

	for (size_t j = 0; j < s->n_metrics; j++) {
		const struct pg_ab_est *e = &s->d.points[j * s->points.n + p];
		if (!e->applies || e->verdict == PG_AB_MISSING || !isfinite(e->change))
			continue;
		suite = s->metrics[j]->suite;
		json_object_set_new(metrics, s->metrics[j]->id, metric_json(s, j, p));
	}
	if (!json_object_size(metrics)) {
		json_decref(metrics);
		return NULL;
	}
	o = json_object();
	json_object_set_new(o, "format", json_integer(PG_HISTORY_FORMAT));
	json_object_set_new(o, "kind", json_string("ab"));
	json_object_set_new(o, "commit", str_or_null(meta->commit));
	json_object_set_new(o, "base_commit", str_or_null(meta->base_commit));
	json_object_set_new(o, "pr", str_or_null(meta->pr));
	json_object_set_new(o, "date", str_or_null(meta->date));
	json_object_set_new(o, "build_url", str_or_null(meta->build_url));
	json_object_set_new(o, "branch", str_or_null(meta->branch));
	json_object_set_new(o, "gpu",
			    s->gpu && strcmp(s->gpu, "none")
				    ? json_string(pg_gpu_label(label, sizeof(label), s->gpu))
				    : json_null());
	json_object_set_new(o, "suite", json_string(pg_suite_kind_name(suite)));
	json_object_set_new(o, "point", json_string(s->points.v[p]));
	json_object_set_new(
		o, "test",
		str_or_null(head ? pg_json_path_str(head->result, "perfgate.test") : NULL));
	v = head ? pg_json_path(head->result, "perfgate.params.qps") : NULL;
	json_object_set_new(o, "qps",
			    json_is_number(v) || json_is_string(v) ? json_copy(v) : json_null());
	v = head ? pg_json_path(head->result, "perfgate.params.max_concurrency") : NULL;
	json_object_set_new(o, "max_concurrency", json_is_integer(v) ? json_copy(v) : json_null());
	json_object_set_new(o, "outcome", json_string(pg_outcome_name(pg_ab_outcome(s))));
	json_object_set_new(o, "blocks", json_integer((json_int_t)s->blocks));
	json_object_set_new(o, "metrics", metrics);
	return o;
}

/* ------------------------------------------------------------------ */
/* Reading                                                             */

static int verdict_parse(const char *name)
{
	for (int v = 0; v < PG_AB_VERDICT_COUNT; v++)
		if (!strcmp(name, pg_ab_verdict_name((enum pg_ab_verdict)v)))
			return v;
	return -1;
}

/* The keys of one metric (or of its whole_run) that must be numbers
 * (null: not measured), and its verdict. */
static enum pg_hline_kind estimate_ok(const json_t *o, const char *path, bool whole, char *why,
				      size_t size)
{
	static const char *const numbers[] = { "change", "effect", "lo", "hi", "tolerance" };
	json_t *v;

	if (!json_is_object(o)) {
		snprintf(why, size, "%s is %s, not an object", path, pg_history_json_kind(o));
		return PG_HLINE_UNREADABLE;
	}
	for (size_t k = 0; k < sizeof(numbers) / sizeof(numbers[0]); k++) {
		v = json_object_get(o, numbers[k]);
		if (v && !json_is_number(v) && !json_is_null(v)) {
			snprintf(why, size, "%s.%s is %s, not a number", path, numbers[k],
				 pg_history_json_kind(v));
			return PG_HLINE_UNREADABLE;
		}
	}
	if (!json_is_number(json_object_get(o, "change"))) {
		snprintf(why, size, "%s.change is missing", path);
		return PG_HLINE_UNREADABLE;
	}
	v = json_object_get(o, "pairs");
	if (!whole && !(json_is_integer(v) && json_integer_value(v) >= 0)) {
		snprintf(why, size, "%s.pairs is %s, not a count", path,
			 v ? pg_history_json_kind(v) : "missing");
		return PG_HLINE_UNREADABLE;
	}
	v = json_object_get(o, "verdict");
	if (!json_is_string(v)) {
		snprintf(why, size, "%s.verdict is %s, not a verdict", path,
			 v ? pg_history_json_kind(v) : "missing");
		return PG_HLINE_UNREADABLE;
	}
	if (verdict_parse(json_string_value(v)) < 0) {
		snprintf(why, size,
			 "%s.verdict '%.40s' is unknown to this perfgate (a newer format?)", path,
			 json_string_value(v));
		return PG_HLINE_NEWER;
	}
	return PG_HLINE_OK;
}

enum pg_hline_kind pg_history_ab_classify(const json_t *o, char *why, size_t size)
{
	static const char *const strings[] = { "commit",    "base_commit", "pr",  "date",
					       "build_url", "branch",      "gpu", "test" };
	json_t *format, *kind, *suite, *metrics, *v;
	const char *key;

	if (!json_is_object(o)) {
		snprintf(why, size, "not a perfgate A/B record (%s)",
			 o ? "not a JSON object" : "not JSON");
		return PG_HLINE_UNREADABLE;
	}
	format = json_object_get(o, "format");
	if (!(json_is_integer(format) && json_integer_value(format) >= 1)) {
		snprintf(why, size, "format is %s, not a version number",
			 format ? pg_history_json_kind(format) : "missing");
		return PG_HLINE_UNREADABLE;
	}
	if (json_integer_value(format) > PG_HISTORY_FORMAT) {
		snprintf(why, size,
			 "format %lld, written by a newer perfgate (this one reads format %d)",
			 (long long)json_integer_value(format), PG_HISTORY_FORMAT);
		return PG_HLINE_NEWER;
	}
	kind = json_object_get(o, "kind");
	if (!json_is_string(kind) || strcmp(json_string_value(kind), "ab")) {
		if (json_is_string(kind))
			snprintf(why, size, "kind is \"%.40s\", not \"ab\"",
				 json_string_value(kind));
		else
			snprintf(why, size, "kind is %s, not \"ab\"",
				 kind ? pg_history_json_kind(kind) : "missing");
		return PG_HLINE_UNREADABLE;
	}
	for (size_t k = 0; k < sizeof(strings) / sizeof(strings[0]); k++) {
		v = json_object_get(o, strings[k]);
		if (v && !json_is_string(v) && !json_is_null(v)) {
			snprintf(why, size, "%s is %s, not a string", strings[k],
				 pg_history_json_kind(v));
			return PG_HLINE_UNREADABLE;
		}
	}
	if (!json_is_string(json_object_get(o, "commit"))) {
		snprintf(why, size, "commit is missing");
		return PG_HLINE_UNREADABLE;
	}
	suite = json_object_get(o, "suite");
	if (!json_is_string(suite)) {
		snprintf(why, size, "suite is %s, not a suite kind",
			 suite ? pg_history_json_kind(suite) : "missing");
		return PG_HLINE_UNREADABLE;
	}
	if (pg_suite_kind_parse(json_string_value(suite)) < 0) {
		snprintf(why, size, "suite '%.40s' is unknown to this perfgate (a newer format?)",
			 json_string_value(suite));
		return PG_HLINE_NEWER;
	}
	metrics = json_object_get(o, "metrics");
	if (!json_is_object(metrics)) {
		snprintf(why, size, "metrics is %s, not an object",
			 metrics ? pg_history_json_kind(metrics) : "missing");
		return PG_HLINE_UNREADABLE;
	}
	json_object_foreach(metrics, key, v)
	{
		char path[160];
		enum pg_hline_kind k;
		json_t *w;

		snprintf(path, sizeof(path), "metrics.%.100s", key);
		if ((k = estimate_ok(v, path, false, why, size)) != PG_HLINE_OK)
			return k;
		w = json_object_get(v, "whole_run");
		snprintf(path, sizeof(path), "metrics.%.100s.whole_run", key);
		if (w && !json_is_null(w) &&
		    (k = estimate_ok(w, path, true, why, size)) != PG_HLINE_OK)
			return k;
	}
	return PG_HLINE_OK;
}

static char *dup_str(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_string(v) && json_string_length(v) ? pg_xstrdup(json_string_value(v)) : NULL;
}

static double num_of(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static enum pg_ab_verdict verdict_of(const json_t *o)
{
	return (enum pg_ab_verdict)verdict_parse(json_string_value(json_object_get(o, "verdict")));
}

/* A line pg_history_ab_classify passed. */
static void rec_fill(struct pg_history_ab_rec *r, const json_t *o)
{
	json_t *metrics = json_object_get(o, "metrics"), *v;
	const char *key;
	size_t cap = 0;

	memset(r, 0, sizeof(*r));
	r->commit = dup_str(o, "commit");
	r->base_commit = dup_str(o, "base_commit");
	r->pr = dup_str(o, "pr");
	r->date = dup_str(o, "date");
	r->build_url = dup_str(o, "build_url");
	r->branch = dup_str(o, "branch");
	r->gpu = dup_str(o, "gpu");
	r->test = dup_str(o, "test");
	r->outcome = dup_str(o, "outcome");
	r->suite = (enum pg_suite_kind)pg_suite_kind_parse(
		json_string_value(json_object_get(o, "suite")));
	v = json_object_get(o, "blocks");
	r->blocks = json_is_integer(v) ? (long)json_integer_value(v) : 0;
	json_object_foreach(metrics, key, v)
	{
		struct pg_history_ab_metric m;
		json_t *w = json_object_get(v, "whole_run");

		memset(&m, 0, sizeof(m));
		m.id = pg_xstrdup(key);
		m.m = pg_metric_by_id(r->suite, key);
		m.change = num_of(v, "change");
		m.effect = num_of(v, "effect");
		m.lo = num_of(v, "lo");
		m.hi = num_of(v, "hi");
		m.tolerance = num_of(v, "tolerance");
		m.pairs = (long)json_integer_value(json_object_get(v, "pairs"));
		m.verdict = verdict_of(v);
		m.has_whole = json_is_object(w);
		if (m.has_whole) {
			m.whole_change = num_of(w, "change");
			m.whole_lo = num_of(w, "lo");
			m.whole_hi = num_of(w, "hi");
			m.whole_tolerance = num_of(w, "tolerance");
			m.whole_verdict = verdict_of(w);
		}
		PG_ARRAY_PUSH(r->m, r->n_m, cap, m);
	}
}

/* One record of an A/B history file (pg_history_parse_lines' take). */
static int take_ab(void *ctx, const json_t *o, int line, struct pg_error *err)
{
	struct pg_history_ab *h = ctx;
	struct pg_history_ab_rec r;

	(void)line;
	(void)err;
	rec_fill(&r, o);
	PG_ARRAY_PUSH(h->recs, h->n, h->cap, r);
	return 0;
}

int pg_history_ab_parse(struct pg_history_ab *h, const char *point, const char *text, size_t len,
			const char *source, struct pg_error *err)
{
	if (!h->point)
		h->point = pg_xstrdup(point);
	return pg_history_parse_lines(text, len, source, pg_history_ab_classify, "A/B ", take_ab, h,
				      err);
}

void pg_history_ab_release(struct pg_history_ab *h)
{
	for (size_t i = 0; i < h->n; i++) {
		struct pg_history_ab_rec *r = &h->recs[i];
		free(r->commit);
		free(r->base_commit);
		free(r->pr);
		free(r->date);
		free(r->build_url);
		free(r->branch);
		free(r->gpu);
		free(r->test);
		free(r->outcome);
		for (size_t k = 0; k < r->n_m; k++)
			free(r->m[k].id);
		free(r->m);
	}
	free(h->recs);
	free(h->point);
	memset(h, 0, sizeof(*h));
}

const struct pg_history_ab *pg_history_ab_find(const struct pg_history_ab *hs, size_t n,
					       const char *point)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(hs[mid].point, point);
		if (!c)
			return &hs[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}
