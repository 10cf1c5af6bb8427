#include "baseline/history.h"

#include "results/identity.h"

#include "base/alloc.h"
#include "base/tasks.h"
#include "base/buf.h"
#include "base/escape.h"
#include "gate/compare_stats.h"
#include "base/error.h"
#include "gpu/gpu.h"
#include "results/metrics.h"
#include "baseline/history_check.h"
#include "baseline/thresholds.h"
#include "base/jsonw.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static json_t *str_or_null(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

json_t *pg_history_line(const struct pg_cmp_point *p, const struct pg_history_meta *meta)
{
	json_t *o = json_object(), *metrics = json_object(), *v;
	size_t nm, repeats = 0;
	const struct pg_metric *all = pg_metrics_all(&nm);
	char label[128];

	for (size_t i = 0; i < nm; i++) {
		double *xs;
		size_t n;
		json_t *arr;
		if (all[i].suite != p->suite || all[i].direction == PG_NO_DIRECTION)
			continue;
		n = pg_result_samples(p->result, &all[i], &xs);
		if (!n)
			continue;
		arr = json_array();
		for (size_t k = 0; k < n; k++)
			json_array_append_new(arr, json_real(xs[k]));
		json_object_set_new(metrics, all[i].id, arr);
		repeats = n > repeats ? n : repeats;
		free(xs);
	}
	if (!json_object_size(metrics)) {
		json_decref(o);
		json_decref(metrics);
		return NULL;
	}
	json_object_set_new(o, "format", json_integer(PG_HISTORY_FORMAT));
	json_object_set_new(o, "commit", str_or_null(meta->commit));
	json_object_set_new(o, "date", str_or_null(meta->date));
	json_object_set_new(o, "build_url", str_or_null(meta->build_url));
	json_object_set_new(o, "branch", str_or_null(meta->branch));
	json_object_set_new(o, "gpu",
			    p->gpu ? json_string(pg_gpu_label(label, sizeof(label), p->gpu))
				   : json_null());
	json_object_set_new(o, "suite", json_string(pg_suite_kind_name(p->suite)));
	json_object_set_new(o, "point", json_string(p->name));
	json_object_set_new(o, "test", str_or_null(pg_json_path_str(p->result, "perfgate.test")));
	v = pg_json_path(p->result, "perfgate.params.qps");
	if (!v || json_is_null(v))
		v = json_object_get(p->result, "request_rate");
	json_object_set_new(o, "qps",
			    p->suite == PG_SUITE_SERVING && (json_is_number(v) || json_is_string(v))
				    ? json_copy(v)
				    : json_null());
	v = pg_json_path(p->result, "perfgate.params.max_concurrency");
	if (!v)
		v = json_object_get(p->result, "max_concurrency");
	json_object_set_new(o, "max_concurrency", json_is_integer(v) ? json_copy(v) : json_null());
	json_object_set_new(o, "repeats", json_integer((json_int_t)repeats));
	/* main's gate judged the run: what it found regressed here (a later
	 * run at that level is main's known change, docs/gate.md) */
	if (meta->regressed) {
		/* the comparison names a point by its identity */
		json_t *ids = json_object_get(meta->regressed, p->name);
		if (!ids) {
			char *id = pg_identity_of(p->name, p->suite, p->result);
			ids = json_object_get(meta->regressed, id);
			free(id);
		}
		json_object_set_new(o, "regressed",
				    json_string(json_is_string(ids) ? json_string_value(ids) : ""));
	}
	/* which run recorded it: the shards of one build are different jobs */
	{
		const char *host = pg_json_path_str(p->result, "perfgate.host");
		const char *run = pg_json_path_str(p->result, "perfgate.run_started_at");
		if (run) {
			struct pg_buf id = PG_BUF_INIT;
			pg_buf_printf(&id, "%s@%s", host ? host : "", run);
			json_object_set_new(o, "run", json_string(id.ptr));
			pg_buf_release(&id);
		}
	}
	json_object_set_new(o, "metrics", metrics);
	return o;
}

static void rec_release(struct pg_history_rec *r)
{
	if (r->slot)
		return; /* compact: everything borrowed */
	free(r->commit);
	free(r->date);
	free(r->build_url);
	free(r->gpu);
	free(r->test);
	free(r->run);
	free(r->regressed);
	json_decref(r->metrics);
	free(r->medians);
}

void pg_history_release(struct pg_history *h)
{
	for (size_t i = 0; i < h->n; i++)
		rec_release(&h->recs[i]);
	free(h->recs);
	free(h->point);
	free(h->values);
	memset(h, 0, sizeof(*h));
}

struct run_lines {
	struct pg_history *h;
	const char *source;
};

/* One record of a run's history file (pg_history_parse_lines' take). */
static int take_run(void *ctx, const json_t *o, int line, struct pg_error *err)
{
	struct run_lines *c = ctx;
	struct pg_history_rec r;
	json_t *v;
	int suite = json_is_string(json_object_get(o, "suite"))
			    ? pg_suite_kind_parse(json_string_value(json_object_get(o, "suite")))
			    : -1;

	if (!json_is_object(o) || suite < 0 || !json_is_object(json_object_get(o, "metrics")))
		return pg_error_set(err, PG_EINFRA, "%s:%d: not a perfgate history record",
				    c->source, line);
	memset(&r, 0, sizeof(r));
	r.commit = pg_xstrdup(pg_json_path_str(o, "commit"));
	r.date = pg_xstrdup(pg_json_path_str(o, "date"));
	r.build_url = pg_xstrdup(pg_json_path_str(o, "build_url"));
	r.gpu = pg_xstrdup(pg_json_path_str(o, "gpu"));
	r.test = pg_xstrdup(pg_json_path_str(o, "test"));
	r.run = pg_xstrdup(pg_json_path_str(o, "run"));
	/* "" (judged, nothing regressed) reads as NULL, as the compact
	 * reader interns it: only the names matter */
	v = json_object_get(o, "regressed");
	r.regressed = json_is_string(v) && json_string_length(v) ? pg_xstrdup(json_string_value(v))
								 : NULL;
	r.suite = (enum pg_suite_kind)suite;
	r.qps = NAN;
	v = json_object_get(o, "qps");
	if (json_is_number(v))
		r.qps = json_number_value(v);
	else if (json_is_string(v))
		pg_parse_double(json_string_value(v), &r.qps);
	v = json_object_get(o, "max_concurrency");
	r.max_concurrency = json_is_integer(v) ? (long)json_integer_value(v) : 0;
	v = json_object_get(o, "repeats");
	r.repeats = json_is_integer(v) ? (long)json_integer_value(v) : 1;
	r.metrics = json_incref(json_object_get(o, "metrics"));
	PG_ARRAY_PUSH(c->h->recs, c->h->n, c->h->cap, r);
	return 0;
}

int pg_history_parse(struct pg_history *h, const char *point, const char *text, size_t len,
		     const char *source, struct pg_error *err)
{
	struct run_lines c = { h, source };

	if (!h->point)
		h->point = pg_xstrdup(point);
	return pg_history_parse_lines(text, len, source, pg_history_classify, "", take_run, &c,
				      err);
}

double pg_history_rec_value(const struct pg_history_rec *r, const struct pg_metric *m)
{
	size_t nm;
	const struct pg_metric *all = pg_metrics_all(&nm);

	if (r->slot)
		return m >= all && m < all + nm && r->slot[m - all] != PG_HISTORY_NO_SLOT
			       ? r->medians[r->slot[m - all]]
			       : NAN;
	if (r->medians)
		return m >= all && m < all + nm ? r->medians[m - all] : NAN;
	return pg_history_rec_median(r, m->id);
}

double pg_history_rec_median(const struct pg_history_rec *r, const char *id)
{
	json_t *arr, *x;
	double *xs, med;
	size_t n = 0, i;

	if (r->medians) {
		const struct pg_metric *m = pg_metric_by_id(r->suite, id);
		return m ? pg_history_rec_value(r, m) : NAN;
	}
	arr = json_object_get(r->metrics, id);
	if (!json_is_array(arr) || !json_array_size(arr))
		return NAN;
	xs = pg_xmalloc(json_array_size(arr) * sizeof(double));
	json_array_foreach(arr, i, x)
	{
		if (json_is_number(x))
			xs[n++] = json_number_value(x);
	}
	med = pg_cmpstat_median(xs, n);
	free(xs);
	return med;
}

void pg_history_keep(bool *keep, const struct pg_history *h, const struct pg_policy *policy)
{
	size_t nm;
	const struct pg_metric *all = pg_metrics_all(&nm);
	const char *test = h->n ? h->recs[h->n - 1].test : NULL;

	for (size_t m = 0; m < nm; m++) {
		struct pg_rule r = { 0 };
		keep[m] = false;
		if (all[m].direction == PG_NO_DIRECTION)
			continue;
		if (policy)
			pg_policy_rule(policy, h->point, test, &all[m], &r);
		keep[m] = !policy || r.gate || r.escalate > 0;
	}
}

void pg_history_slim(struct pg_history *h, const struct pg_policy *policy)
{
	size_t nm;
	const struct pg_metric *all = pg_metrics_all(&nm);
	bool *keep = pg_xcalloc(nm, sizeof(bool));

	pg_history_keep(keep, h, policy);
	for (size_t k = 0; k < h->n; k++) {
		struct pg_history_rec *r = &h->recs[k];
		double *v;
		if (r->medians)
			continue;
		v = pg_xmalloc(nm * sizeof(double));
		for (size_t m = 0; m < nm; m++)
			v[m] = keep[m] && all[m].suite == r->suite
				       ? pg_history_rec_median(r, all[m].id)
				       : NAN;
		json_decref(r->metrics);
		r->metrics = NULL;
		r->medians = v;
	}
	free(keep);
}

/* ------------------------------------------------------------------ */
/* Jobs and change points                                              */

static int str_cmp0(const char *a, const char *b)
{
	if (a == b)
		return 0; /* the same string: a compact history's are interned */
	return strcmp(a ? a : "", b ? b : "");
}

static int cmp_rec_key(const struct pg_history_rec *x, const struct pg_history_rec *y)
{
	int c = str_cmp0(x->date, y->date);
	if (!c)
		c = str_cmp0(x->commit, y->commit);
	if (!c)
		c = str_cmp0(x->build_url, y->build_url);
	if (!c)
		c = str_cmp0(x->run, y->run);
	return c;
}

/* FNV-1a of s ("" for NULL, as str_cmp0 reads it) and its end, after h. */
static uint64_t str_hash(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001b3);
	return (h ^ 0xff) * UINT64_C(0x100000001b3);
}

static uint64_t rec_key_hash(const struct pg_history_rec *r)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	h = str_hash(h, r->date);
	h = str_hash(h, r->commit);
	h = str_hash(h, r->build_url);
	return str_hash(h, r->run);
}

/*
 * The records of one job carry the same date, commit, build and run (the
 * key, cmp_rec_key): a job is the first record of its key (in point, then
 * file order) and the earliest position of its records in their files.
 */
struct job_group {
	const struct pg_history_rec *rec;
	size_t first;
	uint64_t hash;
};

struct job_groups {
	struct job_group *v;
	size_t n, cap;
	size_t *table; /* open addressing, a power of two: group + 1, 0 empty */
	size_t size;
	size_t *at; /* at[k]: the group of the last record k seen, + 1 */
	size_t n_at;
};

static size_t *group_slot(struct job_groups *g, uint64_t hash, const struct pg_history_rec *r)
{
	size_t i = (size_t)hash & (g->size - 1);

	for (; g->table[i]; i = (i + 1) & (g->size - 1)) {
		const struct job_group *x = &g->v[g->table[i] - 1];
		if (x->hash == hash && !cmp_rec_key(x->rec, r))
			break;
	}
	return &g->table[i];
}

/* The group of record r (index k in its file), new or not. Records of one
 * job mostly sit at the same index in every file: the group of the last
 * record k is tried before the table (with interned strings, pointer
 * compares). */
static size_t job_group_of(struct job_groups *g, const struct pg_history_rec *r, size_t k)
{
	size_t *slot, id;
	uint64_t hash;

	if (k < g->n_at && g->at[k] && !cmp_rec_key(g->v[g->at[k] - 1].rec, r))
		return g->at[k] - 1;
	if ((g->n + 1) * 2 > g->size) {
		size_t old = g->size;
		size_t *t = g->table;
		g->size = old ? old * 2 : 64;
		g->table = pg_xcalloc(g->size, sizeof(size_t));
		for (size_t i = 0; i < old; i++)
			if (t[i])
				*group_slot(g, g->v[t[i] - 1].hash, g->v[t[i] - 1].rec) = t[i];
		free(t);
	}
	hash = rec_key_hash(r);
	slot = group_slot(g, hash, r);
	if (!*slot) {
		struct job_group x = { r, k, hash };
		PG_ARRAY_PUSH(g->v, g->n, g->cap, x);
		*slot = g->n;
	}
	id = *slot - 1;
	if (k >= g->n_at) {
		size_t n_at = (k + 1) * 2;
		g->at = pg_xrealloc(g->at, n_at * sizeof(size_t));
		memset(g->at + g->n_at, 0, (n_at - g->n_at) * sizeof(size_t));
		g->n_at = n_at;
	}
	g->at[k] = id + 1;
	return id;
}

static int cmp_group_key(const void *a, const void *b, void *ctx)
{
	const struct job_group *v = ctx;
	const size_t *x = a, *y = b;

	return cmp_rec_key(v[*x].rec, v[*y].rec);
}

/* A job, to be put in time order: its date, then its lines' earliest
 * position in the files. */
struct job_order {
	const struct pg_history_rec *rec;
	size_t first;
	size_t id;
};

static int cmp_job_order(const void *a, const void *b)
{
	const struct job_order *x = a, *y = b;
	int c = str_cmp0(x->rec->date, y->rec->date);
	if (c)
		return c;
	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

static void add_change(struct pg_history_analysis *a, size_t point, const struct pg_metric *m,
		       bool creep, size_t job, double shift, double per_job, double p)
{
	struct pg_history_change c = { point, m, creep, job, shift, per_job, p };
	PG_ARRAY_PUSH(a->changes, a->n_changes, a->cap_changes, c);
}

/* A level that moved fewer runs ago than binary segmentation can see:
 * its last runs must be this many predicted sds beyond the level before,
 * so that heavy tails (3-15% of nights beyond 3 robust sds on a dedicated
 * node) seldom fake one. */
#define TAIL_SIGMAS 5.0

/* Half the metric's tolerance for that point, in log units: smaller steps
 * are not worth a window cut or a report. */
static double min_shift(const struct pg_policy *policy, const struct pg_history *h,
			const struct pg_metric *m)
{
	struct pg_rule r;
	const char *test = h && h->n ? h->recs[h->n - 1].test : NULL;

	pg_policy_rule(policy, h ? h->point : NULL, test, m, &r);
	return 0.5 * log1p(r.tolerance);
}

/* An oriented log change (worse > 0) as the relative change measured,
 * signed worse > 0: a throughput 9.2% lower is 0.092. */
static double worse_rel(const struct pg_metric *m, double x)
{
	return m->direction == PG_HIGHER_IS_BETTER ? -expm1(-x) : expm1(x);
}

/*
 * Steps (and creep) of one series: values v at jobs pos (compacted, no
 * gaps), attributed to point (PG_HISTORY_ALL: the common level).
 */
static void series_changes(struct pg_history_analysis *a, size_t point, const struct pg_metric *m,
			   const double *v, const size_t *pos, size_t k, double shift_min,
			   bool creep, long persist)
{
	size_t cps[64], n_cp, start = 0;
	struct pg_cp_opts o = { 3, 0.001, shift_min };
	double *buf, tail_shift;

	if (k < 6) {
		if (persist < (long)o.min_seg && k >= 3 + (size_t)persist &&
		    pg_cmpstat_tail_step(v, k, 0, (size_t)persist, TAIL_SIGMAS, shift_min,
					 &tail_shift))
			add_change(a, point, m, false, pos[k - (size_t)persist],
				   worse_rel(m, tail_shift), 0, NAN);
		return;
	}
	n_cp = pg_cmpstat_change_points(v, k, &o, cps, sizeof(cps) / sizeof(cps[0]) - 1);
	/* where each level starts, to the run: a search that keeps min_seg
	 * runs on each side places a step two runs from the end a run early */
	pg_cmpstat_refine_change_points(v, k, cps, n_cp, persist >= 1 ? (size_t)persist : 1);
	/* A level that changed fewer runs ago than a segment needs: the last
	 * `persist` runs all far beyond the level before them (a change on
	 * main that persisted), so the level follows it now rather than
	 * judging against the old one until min_seg runs have passed. */
	if (persist < (long)o.min_seg &&
	    pg_cmpstat_tail_step(v, k, n_cp ? cps[n_cp - 1] : 0, (size_t)persist, TAIL_SIGMAS,
				 shift_min, &tail_shift))
		cps[n_cp++] = k - (size_t)persist;
	buf = pg_xmalloc(k * sizeof(double));
	for (size_t c = 0; c < n_cp; c++) {
		size_t lo = c ? cps[c - 1] : 0, hi = c + 1 < n_cp ? cps[c + 1] : k;
		double before, after;
		memcpy(buf, v + lo, (cps[c] - lo) * sizeof(double));
		before = pg_cmpstat_median_inplace(buf, cps[c] - lo);
		memcpy(buf, v + cps[c], (hi - cps[c]) * sizeof(double));
		after = pg_cmpstat_median_inplace(buf, hi - cps[c]);
		add_change(a, point, m, false, pos[cps[c]], worse_rel(m, after - before), 0, NAN);
	}
	free(buf);
	if (n_cp)
		start = cps[n_cp - 1];
	if (creep && k - start >= 8) {
		struct pg_trend t;
		pg_cmpstat_trend_below(&t, v + start, k - start, 0.001);
		if (t.p_value < 0.001 && fabs(t.slope) * (double)(k - start - t.start) >= shift_min)
			add_change(a, point, m, true, pos[start + t.start],
				   worse_rel(m, t.slope * (double)(k - start - t.start)),
				   worse_rel(m, t.slope), t.p_value);
	}
}

/* pg_history_rec_value of registry metric m, all[mi] (no lookup of the
 * registry: asked of every record of the window for every metric). */
static double rec_value_at(const struct pg_history_rec *r, const struct pg_metric *m, size_t mi)
{
	if (r->slot)
		return r->slot[mi] != PG_HISTORY_NO_SLOT ? r->medians[r->slot[mi]] : NAN;
	if (r->medians)
		return r->medians[mi];
	return pg_history_rec_median(r, m->id);
}

/* The job median of metric m (all[mi]) in a record, oriented (worse
 * larger), NAN. */
static double rec_level(const struct pg_history_rec *r, const struct pg_metric *m, size_t mi)
{
	double med = rec_value_at(r, m, mi);
	if (!(med > 0))
		return NAN;
	return m->direction == PG_HIGHER_IS_BETTER ? -log(med) : log(med);
}

/* The records each metric looks at: point i's of the analysed jobs
 * (from on), in file order, win[off[i]..off[i + 1]). */
_Static_assert(PG_SUITE_COUNT <= 32, "a window's suites are bits of an unsigned");

struct window {
	size_t *off, *win;
	unsigned *suites; /* per point: 1 << the suites of its records there */
	unsigned any;     /* the union */
};

static void window_init(struct window *w, const struct pg_history_analysis *a,
			const struct pg_history *hs, size_t n, size_t from)
{
	size_t k = 0;

	w->off = pg_xmalloc((n + 1) * sizeof(size_t));
	w->suites = pg_xcalloc(n ? n : 1, sizeof(unsigned));
	w->any = 0;
	for (size_t i = 0; i < n; i++) {
		w->off[i] = k;
		for (size_t r = 0; r < hs[i].n; r++)
			k += a->rec_job[i][r] >= (long)from;
	}
	w->off[n] = k;
	w->win = pg_xmalloc((k ? k : 1) * sizeof(size_t));
	k = 0;
	for (size_t i = 0; i < n; i++) {
		for (size_t r = 0; r < hs[i].n; r++)
			if (a->rec_job[i][r] >= (long)from) {
				w->win[k++] = r;
				w->suites[i] |= 1u << hs[i].recs[r].suite;
			}
		w->any |= w->suites[i];
	}
}

static void window_release(struct window *w)
{
	free(w->off);
	free(w->win);
	free(w->suites);
}

static void metric_changes(struct pg_history_analysis *a, const struct pg_history *hs, size_t n,
			   const struct pg_policy *policy, const struct pg_metric *m, size_t mi,
			   size_t from, bool creep, const struct window *w)
{
	size_t R = a->n_jobs - from, P = 0, *cols = pg_xmalloc((n ? n : 1) * sizeof(size_t));
	double *y, *row, *col, *v;
	size_t *pos, *count;

	/* a metric of a suite the window's records do not have: every
	 * record would be looked at for nothing (a history of serving points
	 * and the latency suite's metrics) */
	for (size_t i = 0; i < n && (w->any >> m->suite & 1); i++) {
		bool has = false;
		for (size_t x = w->off[i];
		     x < w->off[i + 1] && !has && (w->suites[i] >> m->suite & 1); x++) {
			const struct pg_history_rec *r = &hs[i].recs[w->win[x]];
			has = r->suite == m->suite &&
			      (r->medians ? !isnan(rec_value_at(r, m, mi))
					  : json_object_get(r->metrics, m->id) != NULL);
		}
		if (has)
			cols[P++] = i;
	}
	if (!P || !R) {
		free(cols);
		return;
	}
	/* by columns (a point's jobs side by side): filled, polished and read
	 * a column at a time */
	y = pg_xmalloc(R * P * sizeof(double));
	for (size_t i = 0; i < R * P; i++)
		y[i] = NAN;
	for (size_t c = 0; c < P; c++) {
		const struct pg_history *h = &hs[cols[c]];
		for (size_t x = w->off[cols[c]]; x < w->off[cols[c] + 1]; x++) {
			size_t k = w->win[x];
			long j = a->rec_job[cols[c]][k];
			y[c * R + ((size_t)j - from)] = rec_level(&h->recs[k], m, mi);
		}
	}
	row = pg_xcalloc(R, sizeof(double));
	col = pg_xmalloc(P * sizeof(double));
	count = pg_xcalloc(R, sizeof(size_t));
	for (size_t c = 0; c < P; c++)
		for (size_t r = 0; r < R; r++)
			count[r] += !isnan(y[c * R + r]);
	if (P >= 3)
		pg_cmpstat_median_polish_cols(y, R, P, row, col);
	v = pg_xmalloc(R * sizeof(double));
	pos = pg_xmalloc(R * sizeof(size_t));
	if (P >= 3) {
		/* the jobs' common level: a job needs 3 points for an offset */
		size_t k = 0;
		for (size_t r = 0; r < R; r++)
			if (count[r] >= 3 && !isnan(row[r])) {
				v[k] = row[r];
				pos[k++] = from + r;
			}
		series_changes(a, PG_HISTORY_ALL, m, v, pos, k, min_shift(policy, NULL, m), creep,
			       policy->persist);
	}
	for (size_t c = 0; c < P; c++) {
		size_t k = 0;
		for (size_t r = 0; r < R; r++) {
			double x = y[c * R + r];
			if (isnan(x))
				continue;
			if (P >= 3) {
				if (count[r] < 3 || isnan(row[r]))
					continue;
				x -= row[r];
			}
			v[k] = x;
			pos[k++] = from + r;
		}
		series_changes(a, cols[c], m, v, pos, k, min_shift(policy, &hs[cols[c]], m), creep,
			       policy->persist);
	}
	free(cols);
	free(y);
	free(row);
	free(col);
	free(count);
	free(v);
	free(pos);
}

static int cmp_change(const void *x, const void *y)
{
	const struct pg_history_change *a = x, *b = y;
	size_t pa = a->point == PG_HISTORY_ALL ? 0 : a->point + 1;
	size_t pb = b->point == PG_HISTORY_ALL ? 0 : b->point + 1;

	if (pa != pb)
		return pa < pb ? -1 : 1;
	if (a->metric != b->metric)
		return a->metric < b->metric ? -1 : 1; /* the registry's order */
	if (a->job != b->job)
		return a->job < b->job ? -1 : 1;
	return (int)a->creep - (int)b->creep;
}

struct metric_task {
	const struct pg_history_analysis *a;
	const struct pg_history *hs;
	size_t n;
	const struct pg_policy *policy;
	const struct pg_metric *all;
	size_t from;
	bool creep;
	struct pg_history_analysis *out; /* per metric: its changes */
	const struct window *w;
};

static void metric_task(void *ctx, size_t m, unsigned worker)
{
	struct metric_task *t = ctx;
	struct pg_history_analysis *own = &t->out[m];

	(void)worker;
	if (t->all[m].direction == PG_NO_DIRECTION)
		return;
	*own = *t->a;
	own->changes = NULL;
	own->n_changes = own->cap_changes = 0;
	metric_changes(own, t->hs, t->n, t->policy, &t->all[m], m, t->from, t->creep, t->w);
}

void pg_history_analyse(struct pg_history_analysis *a, const struct pg_history *hs, size_t n,
			const bool *const *use, const struct pg_policy *policy, size_t last,
			bool creep)
{
	pg_history_analyse_tasks(a, hs, n, use, policy, last, creep, NULL);
}

void pg_history_analyse_tasks(struct pg_history_analysis *a, const struct pg_history *hs, size_t n,
			      const bool *const *use, const struct pg_policy *policy, size_t last,
			      bool creep, const struct pg_tasks *tasks)
{
	struct job_groups g = { 0 };
	struct job_order *order;
	size_t nm, *sorted, *rank;
	long *renumber;
	const struct pg_metric *all = pg_metrics_all(&nm);

	memset(a, 0, sizeof(*a));
	a->n_points = n;
	a->rec_job = pg_xcalloc(n ? n : 1, sizeof(long *));
	/* one job per distinct key (hashed: the keys are ~200 among millions
	 * of records) ... */
	for (size_t i = 0; i < n; i++) {
		a->rec_job[i] = pg_xmalloc((hs[i].n ? hs[i].n : 1) * sizeof(long));
		for (size_t k = 0; k < hs[i].n; k++) {
			size_t id;
			a->rec_job[i][k] = -1;
			if (use && use[i] && !use[i][k])
				continue;
			id = job_group_of(&g, &hs[i].recs[k], k);
			if (k < g.v[id].first)
				g.v[id].first = k;
			a->rec_job[i][k] = (long)id;
		}
	}
	/* ... numbered in the order of their keys, then in date order, then
	 * in the order they were recorded (lines are appended: an earlier
	 * job's lines come first in every file) */
	a->n_jobs = g.n;
	sorted = pg_xmalloc((g.n ? g.n : 1) * sizeof(size_t));
	rank = pg_xmalloc((g.n ? g.n : 1) * sizeof(size_t));
	for (size_t j = 0; j < g.n; j++)
		sorted[j] = j;
	if (g.n > 1)
		qsort_r(sorted, g.n, sizeof(size_t), cmp_group_key, g.v);
	order = pg_xmalloc((g.n ? g.n : 1) * sizeof(*order));
	for (size_t j = 0; j < g.n; j++) {
		rank[sorted[j]] = j;
		order[j] = (struct job_order){ g.v[sorted[j]].rec, g.v[sorted[j]].first, j };
	}
	if (g.n > 1)
		qsort(order, g.n, sizeof(*order), cmp_job_order);
	renumber = pg_xmalloc((g.n ? g.n : 1) * sizeof(long));
	a->jobs = pg_xmalloc((g.n ? g.n : 1) * sizeof(*a->jobs));
	for (size_t j = 0; j < g.n; j++) {
		renumber[order[j].id] = (long)j;
		a->jobs[j] = (struct pg_history_job){ order[j].rec->commit, order[j].rec->date,
						      order[j].rec->build_url };
	}
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < hs[i].n; k++)
			if (a->rec_job[i][k] >= 0)
				a->rec_job[i][k] = renumber[rank[a->rec_job[i][k]]];
	free(renumber);
	free(order);
	free(sorted);
	free(rank);
	free(g.v);
	free(g.table);
	free(g.at);

	{
		/* a metric's changes into slot m (each its own copy of a to add
		 * to), joined in the registry's order: the same list whatever
		 * ran them */
		struct window w;
		struct metric_task mt = { a,     hs,
					  n,     policy,
					  all,   last && a->n_jobs > last ? a->n_jobs - last : 0,
					  creep, pg_xcalloc(nm ? nm : 1, sizeof(*mt.out)),
					  &w };
		window_init(&w, a, hs, n, mt.from);
		pg_tasks_run(tasks, nm, metric_task, &mt);
		window_release(&w);
		for (size_t m = 0; m < nm; m++) {
			for (size_t c = 0; c < mt.out[m].n_changes; c++)
				PG_ARRAY_PUSH(a->changes, a->n_changes, a->cap_changes,
					      mt.out[m].changes[c]);
			free(mt.out[m].changes);
		}
		free(mt.out);
	}
	if (a->n_changes > 1)
		qsort(a->changes, a->n_changes, sizeof(*a->changes), cmp_change);
}

void pg_history_analysis_release(struct pg_history_analysis *a)
{
	for (size_t i = 0; i < a->n_points; i++)
		free(a->rec_job[i]);
	free(a->rec_job);
	free(a->jobs);
	free(a->changes);
	memset(a, 0, sizeof(*a));
}

/* Can a regression of m at this point fail a gate under policy? */
static bool can_fail(const struct pg_policy *policy, const struct pg_history *h,
		     const struct pg_metric *m)
{
	struct pg_rule r;
	pg_policy_rule(policy, h ? h->point : NULL, h && h->n ? h->recs[h->n - 1].test : NULL, m,
		       &r);
	return r.gate || r.escalate > 0;
}

size_t pg_history_baseline_span(const struct pg_policy *policy)
{
	/* change points over three windows: enough jobs before a recent step
	 * to see it as one */
	return 3 * (policy->history_window > 0 ? (size_t)policy->history_window : 1);
}

void pg_history_baseline_build(struct pg_baseline *base, const struct pg_history *hs, size_t n,
			       const bool *const *use, const struct pg_policy *policy)
{
	struct pg_history_analysis a;

	pg_history_analyse(&a, hs, n, use, policy, pg_history_baseline_span(policy), false);
	pg_history_baseline_build_from(base, hs, n, policy, &a);
	pg_history_analysis_release(&a);
}

/* Did main's gate find metric id regressed in record r? */
static bool last_regressed(const struct pg_history_rec *r, const char *id)
{
	size_t n = strlen(id);

	for (const char *p = r->regressed; p && *p;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (len == n && !memcmp(p, id, n))
			return true;
		p += len + (comma != NULL);
	}
	return false;
}

/* The change points of point i's metric m (steps, not creep), ascending
 * jobs, into cuts; how many. */
static size_t metric_cuts(const struct pg_history_analysis *a, size_t i, const struct pg_metric *m,
			  long *cuts, size_t max)
{
	size_t k = 0;

	for (size_t c = 0; c < a->n_changes && k < max; c++) {
		const struct pg_history_change *ch = &a->changes[c];
		if (ch->point == i && ch->metric == m && !ch->creep)
			cuts[k++] = (long)ch->job;
	}
	/* a->changes is sorted by point, metric, job */
	return k;
}

/*
 * One metric of one point: its span (every job of the analysed jobs, with
 * its segment), its level's window (the latest segment's last `window`
 * jobs) as the samples. Returns the metric, or NULL when no job has it.
 */
static struct pg_base_metric *build_metric(struct pg_base_point *bp, const struct pg_history *h,
					   const size_t *idx, size_t k, const long *rec_job,
					   const struct pg_history_analysis *a, size_t i,
					   const struct pg_metric *m, long first_job,
					   long span_from, size_t window)
{
	double *v = pg_xmalloc(k * sizeof(double));
	long *jobs = pg_xmalloc(k * sizeof(long)), cuts[64];
	int *seg = pg_xmalloc(k * sizeof(int));
	size_t got = 0, n_cuts = metric_cuts(a, i, m, cuts, sizeof(cuts) / sizeof(cuts[0]));
	size_t c = 0, lo;
	long from = -1;
	struct pg_base_metric *bm = NULL;

	for (size_t x = 0; x < k; x++) {
		const struct pg_history_rec *r = &h->recs[idx[x]];
		long j = rec_job[idx[x]];
		double med;
		if (j < span_from)
			continue;
		med = pg_history_rec_value(r, m);
		if (isnan(med))
			continue;
		while (c < n_cuts && cuts[c] <= j)
			c++;
		v[got] = med;
		jobs[got] = first_job + j;
		seg[got++] = (int)c;
	}
	if (!got)
		goto done;
	/* the latest segment, its last `window` jobs */
	lo = got;
	while (lo > 0 && seg[lo - 1] == seg[got - 1])
		lo--;
	if (seg[got - 1] > 0)
		from = first_job + cuts[seg[got - 1] - 1];
	if (got - lo > window)
		lo = got - window;
	bm = pg_base_point_add_jobs(bp, m, v + lo, jobs + lo, got - lo);
	pg_base_metric_set_span(bm, v, jobs, seg, got);
	bm->level_from = from;
done:
	free(v);
	free(jobs);
	free(seg);
	return bm;
}
/* ", since the change at 1a2b3c4d5e6f" when every metric of the point
 * changed level there; ", Median TTFT (ms) since the change at ..." for
 * the ones that did when they differ: the others' baseline is their whole
 * window. */
static void level_changes(struct pg_buf *src, const struct pg_base_point *bp,
			  const struct pg_history_analysis *a, long first_job)
{
	size_t changed = 0, shown = 0;
	bool same = true;
	long from = -1;

	for (size_t m = 0; m < bp->n_metrics; m++) {
		long f = bp->metrics[m].level_from;
		if (f < first_job || !a->jobs[f - first_job].commit)
			continue;
		same &= !changed || f == from;
		from = f;
		changed++;
	}
	if (!changed)
		return;
	if (same && changed == bp->n_metrics) {
		pg_buf_printf(src, ", since the change at %.12s", a->jobs[from - first_job].commit);
		return;
	}
	for (size_t m = 0; m < bp->n_metrics && shown < 3; m++) {
		long f = bp->metrics[m].level_from;
		if (f < first_job || !a->jobs[f - first_job].commit)
			continue;
		pg_buf_printf(src, ", %s since the change at %.12s", bp->metrics[m].metric->label,
			      a->jobs[f - first_job].commit);
		shown++;
	}
	if (changed > shown)
		pg_buf_printf(src, ", %zu more metrics since changes of their own",
			      changed - shown);
}

void pg_history_baseline_build_from(struct pg_baseline *base, const struct pg_history *hs, size_t n,
				    const struct pg_policy *policy,
				    const struct pg_history_analysis *an)
{
	const struct pg_history_analysis a = *an;
	size_t nm, window = policy->history_window > 0 ? (size_t)policy->history_window : 1;
	size_t span = pg_history_baseline_span(policy);
	const struct pg_metric *all = pg_metrics_all(&nm);
	long first_job, span_from = a.n_jobs > span ? (long)(a.n_jobs - span) : 0;

	first_job = (long)base->n_jobs;
	for (size_t j = 0; j < a.n_jobs; j++)
		pg_baseline_add_job(base, a.jobs[j].commit, a.jobs[j].date);
	for (size_t c = 0; c < a.n_changes; c++) {
		const struct pg_history_change *ch = &a.changes[c];
		if (ch->creep)
			continue; /* steps only: an analysis with creep serves too */
		pg_baseline_add_change(base,
				       ch->point == PG_HISTORY_ALL ? NULL : hs[ch->point].point,
				       ch->metric, first_job + (long)ch->job, ch->shift);
	}

	for (size_t i = 0; i < n; i++) {
		const struct pg_history *h = &hs[i];
		size_t *idx = pg_xmalloc((h->n ? h->n : 1) * sizeof(size_t)), k = 0;
		long newest = -1, oldest = -1;
		const struct pg_history_rec *last;
		struct pg_base_point *bp;
		struct pg_buf src = PG_BUF_INIT;

		for (size_t r = 0; r < h->n; r++)
			if (a.rec_job[i][r] >= span_from)
				idx[k++] = r;
		if (!k) {
			free(idx);
			continue;
		}
		/* records in job order (a file is appended in time order, but
		 * its lines of one job can come from several writers) */
		for (size_t x = 1; x < k; x++)
			for (size_t y = x; y > 0 && a.rec_job[i][idx[y - 1]] > a.rec_job[i][idx[y]];
			     y--) {
				size_t t = idx[y];
				idx[y] = idx[y - 1];
				idx[y - 1] = t;
			}
		newest = a.rec_job[i][idx[k - 1]];
		oldest = a.rec_job[i][idx[0]];
		last = &h->recs[idx[k - 1]];
		bp = pg_baseline_add(base, h->point, last->suite);
		bp->aged = (size_t)newest + window < a.n_jobs;
		bp->test = pg_xstrdup(last->test);
		bp->qps = last->qps;
		bp->max_concurrency = last->max_concurrency;
		bp->gpu = pg_xstrdup(last->gpu);
		bp->commit = pg_xstrdup(last->commit);
		if (last->date && strlen(last->date) >= 10)
			bp->date = pg_xstrndup(last->date, 10);
		bp->repeats = 1;
		for (size_t x = 0; x < k; x++)
			if (h->recs[idx[x]].repeats > bp->repeats)
				bp->repeats = h->recs[idx[x]].repeats;
		for (size_t m = 0; m < nm; m++) {
			struct pg_base_metric *bm;
			if (all[m].suite != bp->suite || all[m].direction == PG_NO_DIRECTION)
				continue;
			bm = build_metric(bp, h, idx, k, a.rec_job[i], &a, i, &all[m], first_job,
					  span_from, window);
			if (!bm)
				continue;
			if (bm->runs > bp->runs)
				bp->runs = bm->runs;
			bm->newest_job = first_job + newest;
			if (last_regressed(last, all[m].id))
				bm->known_job = first_job + newest;
		}
		pg_buf_printf(&src, "git history: %zu run%s", k, k == 1 ? "" : "s");
		if (h->recs[idx[0]].date && last->date)
			pg_buf_printf(&src, ", %.10s to %.10s", h->recs[idx[0]].date, last->date);
		level_changes(&src, bp, &a, first_job);
		(void)oldest;
		bp->source = pg_buf_detach(&src);
		free(idx);
	}
}
/* The last job before job j that recorded point i (PG_HISTORY_ALL: any
 * point), or -1: a change began after it, at j. */
static long job_before(const struct pg_history_analysis *a, const struct pg_history *hs, size_t i,
		       size_t j)
{
	long best = -1;

	if (i == PG_HISTORY_ALL)
		return (long)j - 1;
	for (size_t k = 0; k < hs[i].n; k++)
		if (a->rec_job[i][k] < (long)j && a->rec_job[i][k] > best)
			best = a->rec_job[i][k];
	return best;
}

/* "between 1a2b3c4d5e6f and 9f8e7d6c5b4a (2026-11-05)": the commits of
 * the last job at the old level and the first at the new one. */
static void commit_range(struct pg_buf *out, const struct pg_history_analysis *a,
			 const struct pg_history *hs, size_t i, size_t j)
{
	long before = job_before(a, hs, i, j);
	const struct pg_history_job *to = &a->jobs[j];

	if (before >= 0 && a->jobs[before].commit)
		pg_buf_printf(out, "between %.12s and %.12s", a->jobs[before].commit,
			      to->commit ? to->commit : "?");
	else
		pg_buf_printf(out, "at %.12s", to->commit ? to->commit : "?");
	if (to->date)
		pg_buf_printf(out, " (%.10s)", to->date);
}

static void change_text(struct pg_buf *out, const struct pg_history_change *c)
{
	double pct = round(fabs(c->shift) * 1000) / 10;

	if (c->creep)
		pg_buf_printf(out, "creep: %.2g%% %s per job, %g%% since it began",
			      fabs(c->per_job) * 100, c->per_job > 0 ? "worse" : "better", pct);
	else
		pg_buf_printf(out, "step: %g%% %s", pct, c->shift > 0 ? "worse" : "better");
}

static void sparkline(struct pg_buf *out, const double *v, const bool *mark, size_t n)
{
	static const char *const bars[] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
	double lo = INFINITY, hi = -INFINITY;

	for (size_t i = 0; i < n; i++) {
		if (isnan(v[i]))
			continue;
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	for (size_t i = 0; i < n; i++) {
		if (mark && mark[i])
			pg_buf_puts(out, "|");
		if (isnan(v[i]))
			pg_buf_puts(out, " ");
		else if (hi <= lo)
			pg_buf_puts(out, bars[3]);
		else
			pg_buf_puts(out, bars[(int)lround((v[i] - lo) / (hi - lo) * 7)]);
	}
}

static void metric_name(char *out, size_t size, const struct pg_metric *m)
{
	if (m->unit[0])
		snprintf(out, size, "%s (%s)", m->label, m->unit);
	else
		snprintf(out, size, "%s", m->label);
}

void pg_history_trend(struct pg_buf *out, const struct pg_history *hs, size_t i,
		      const struct pg_history_analysis *a, const char *metric, long last)
{
	const struct pg_history *h = &hs[i];
	size_t first = last > 0 && h->n > (size_t)last ? h->n - (size_t)last : 0, n = h->n - first;
	size_t nm, width = 0;
	const struct pg_metric *all = pg_metrics_all(&nm);
	const struct pg_history_rec *r0, *r1;
	char name[96], x[PG_FMT_DOUBLE_SIZE], y[PG_FMT_DOUBLE_SIZE], z[PG_FMT_DOUBLE_SIZE];

	if (!n)
		return;
	r0 = &h->recs[first];
	r1 = &h->recs[h->n - 1];
	pg_buf_printf(out, "%s (%s%s%s): %zu run%s", h->point, pg_suite_kind_name(r1->suite),
		      r1->gpu ? ", " : "", r1->gpu ? r1->gpu : "", n, n == 1 ? "" : "s");
	if (r0->date && r1->date)
		pg_buf_printf(out, ", %.10s to %.10s", r0->date, r1->date);
	if (r1->commit)
		pg_buf_printf(out, ", last %.12s", r1->commit);
	pg_buf_puts(out, "\n");
	for (size_t m = 0; m < nm; m++) {
		if (all[m].suite != r1->suite || all[m].direction == PG_NO_DIRECTION)
			continue;
		metric_name(name, sizeof(name), &all[m]);
		width = strlen(name) > width ? strlen(name) : width;
	}
	for (size_t m = 0; m < nm; m++) {
		double *v, first_v = NAN, last_v = NAN, *present;
		bool *mark;
		size_t k = 0;
		if (all[m].suite != r1->suite || all[m].direction == PG_NO_DIRECTION)
			continue;
		if (metric && strcmp(metric, all[m].id))
			continue;
		v = pg_xmalloc(n * sizeof(double));
		present = pg_xmalloc(n * sizeof(double));
		mark = pg_xcalloc(n, sizeof(bool));
		for (size_t r = 0; r < n; r++) {
			v[r] = pg_history_rec_value(&h->recs[first + r], &all[m]);
			if (!isnan(v[r])) {
				present[k++] = v[r];
				if (isnan(first_v))
					first_v = v[r];
				last_v = v[r];
			}
		}
		/* a bar where a step of this point (or of every point) begins */
		for (size_t c = 0; a && c < a->n_changes; c++) {
			const struct pg_history_change *ch = &a->changes[c];
			if (ch->metric != &all[m] || ch->creep ||
			    (ch->point != i && ch->point != PG_HISTORY_ALL))
				continue;
			for (size_t r = 1; r < n; r++)
				if (a->rec_job[i][first + r] == (long)ch->job)
					mark[r] = true;
		}
		if (k) {
			double med = pg_cmpstat_median(present, k),
			       cv = pg_cmpstat_robust_cv(present, k);
			metric_name(name, sizeof(name), &all[m]);
			pg_buf_printf(out, "  %-*s  %10s -> %-10s %+6.1f%%  ", (int)width, name,
				      pg_fmt_g(x, first_v), pg_fmt_g(y, last_v),
				      first_v != 0 ? (last_v / first_v - 1) * 100 : 0.0);
			sparkline(out, v, mark, n);
			pg_buf_printf(out, "  median %s", pg_fmt_g(z, med));
			if (!isnan(cv))
				pg_buf_printf(out, ", spread %.1f%%", cv * 100);
			pg_buf_puts(out, "\n");
			for (size_t c = 0; a && c < a->n_changes; c++) {
				const struct pg_history_change *ch = &a->changes[c];
				if (ch->metric != &all[m] ||
				    (ch->point != i && ch->point != PG_HISTORY_ALL))
					continue;
				pg_buf_printf(out, "  %*s  %s", (int)width, "",
					      ch->point == PG_HISTORY_ALL ? "every point, " : "");
				change_text(out, ch);
				pg_buf_puts(out, ", ");
				commit_range(out, a, hs, ch->point, ch->job);
				pg_buf_puts(out, "\n");
			}
		}
		free(v);
		free(present);
		free(mark);
	}
}

/* ------------------------------------------------------------------ */
/* The nightly report                                                  */

static bool change_worse_gating(const struct pg_history *hs, const struct pg_policy *policy,
				const struct pg_history_change *c)
{
	return c->shift > 0 &&
	       can_fail(policy, c->point == PG_HISTORY_ALL ? NULL : &hs[c->point], c->metric);
}

static int cmp_report(const void *x, const void *y, void *ctx);

struct report_ctx {
	const struct pg_history *hs;
	const struct pg_policy *policy;
	const struct pg_history_change *v;
};

/* The changes to report, worse gating ones first, then by size. */
static size_t report_order(size_t **out, const struct pg_history *hs,
			   const struct pg_history_analysis *a, const struct pg_policy *policy,
			   const char *metric)
{
	size_t *idx = pg_xmalloc((a->n_changes + 1) * sizeof(size_t)), k = 0;
	struct report_ctx cx = { hs, policy, a->changes };

	for (size_t c = 0; c < a->n_changes; c++)
		if (!metric || !strcmp(metric, a->changes[c].metric->id))
			idx[k++] = c;
	qsort_r(idx, k, sizeof(size_t), cmp_report, &cx);
	*out = idx;
	return k;
}

static int cmp_report(const void *x, const void *y, void *ctx)
{
	const struct report_ctx *cx = ctx;
	const struct pg_history_change *a = &cx->v[*(const size_t *)x];
	const struct pg_history_change *b = &cx->v[*(const size_t *)y];
	bool wa = change_worse_gating(cx->hs, cx->policy, a);
	bool wb = change_worse_gating(cx->hs, cx->policy, b);

	if (wa != wb)
		return wa ? -1 : 1;
	if (fabs(a->shift) != fabs(b->shift))
		return fabs(a->shift) > fabs(b->shift) ? -1 : 1;
	return (*(const size_t *)x > *(const size_t *)y) -
	       (*(const size_t *)x < *(const size_t *)y);
}

size_t pg_history_changes_markdown(struct pg_buf *out, const struct pg_history *hs, size_t n,
				   const struct pg_history_analysis *a,
				   const struct pg_policy *policy, const char *gpu,
				   const char *metric, size_t recent)
{
	size_t *idx, k = report_order(&idx, hs, a, policy, metric), bad = 0, n_worse = 0;

	(void)n;
	for (size_t i = 0; i < k; i++) {
		const struct pg_history_change *c = &a->changes[idx[i]];
		if (!change_worse_gating(hs, policy, c))
			continue;
		n_worse++;
		if (!recent || c->job + recent >= a->n_jobs)
			bad++;
	}
	pg_buf_printf(out, "**perfgate: changes on main for ");
	pg_escape_md_text(out, gpu ? gpu : "this GPU");
	pg_buf_printf(out, "** — %zu job%s", a->n_jobs, a->n_jobs == 1 ? "" : "s");
	if (a->n_jobs && a->jobs[0].date && a->jobs[a->n_jobs - 1].date)
		pg_buf_printf(out, ", %.10s to %.10s", a->jobs[0].date,
			      a->jobs[a->n_jobs - 1].date);
	pg_buf_printf(out, ": %zu step%s or creep, %zu worse in a gating metric\n\n", k,
		      k == 1 ? "" : "s", n_worse);
	if (!k) {
		pg_buf_puts(out, "No step and no creep of half a tolerance or more.\n");
		free(idx);
		return 0;
	}
	pg_buf_puts(out, "| Test | Metric | Change | Began | Commits |\n|---|---|---|---|---|\n");
	for (size_t i = 0; i < k; i++) {
		const struct pg_history_change *c = &a->changes[idx[i]];
		const struct pg_history_job *j = &a->jobs[c->job];
		long before = job_before(a, hs, c->point, c->job);
		char name[96];

		pg_buf_puts(out, "| ");
		if (c->point == PG_HISTORY_ALL)
			pg_buf_puts(out, "every point");
		else
			pg_escape_md_cell(out, hs[c->point].point);
		metric_name(name, sizeof(name), c->metric);
		pg_buf_puts(out, " | ");
		pg_escape_md_cell(out, name);
		pg_buf_puts(out, " | ");
		if (change_worse_gating(hs, policy, c))
			pg_buf_puts(out, "**");
		change_text(out, c);
		if (change_worse_gating(hs, policy, c))
			pg_buf_puts(out, "**");
		pg_buf_printf(out, " | %.10s | ", j->date ? j->date : "?");
		if (before >= 0 && a->jobs[before].commit)
			pg_buf_printf(out, "`%.12s..%.12s`", a->jobs[before].commit,
				      j->commit ? j->commit : "?");
		else
			pg_buf_printf(out, "`%.12s`", j->commit ? j->commit : "?");
		pg_buf_puts(out, " |\n");
	}
	free(idx);
	return bad;
}

json_t *pg_history_changes_json(const struct pg_history *hs, size_t n,
				const struct pg_history_analysis *a, const struct pg_policy *policy,
				const char *gpu, const char *metric)
{
	json_t *o = json_object(), *arr = json_array();
	size_t *idx, k = report_order(&idx, hs, a, policy, metric);

	(void)n;
	json_object_set_new(o, "gpu", str_or_null(gpu));
	json_object_set_new(o, "jobs", json_integer((json_int_t)a->n_jobs));
	for (size_t i = 0; i < k; i++) {
		const struct pg_history_change *c = &a->changes[idx[i]];
		const struct pg_history_job *j = &a->jobs[c->job];
		long before = job_before(a, hs, c->point, c->job);
		json_t *r = json_object();

		json_object_set_new(r, "point",
				    c->point == PG_HISTORY_ALL ? json_null()
							       : json_string(hs[c->point].point));
		json_object_set_new(r, "metric", json_string(c->metric->id));
		json_object_set_new(r, "kind", json_string(c->creep ? "creep" : "step"));
		json_object_set_new(r, "shift", json_real(c->shift));
		json_object_set_new(r, "per_job", c->creep ? json_real(c->per_job) : json_null());
		json_object_set_new(r, "p_value",
				    isfinite(c->p_value) ? json_real(c->p_value) : json_null());
		json_object_set_new(r, "worse", json_boolean(c->shift > 0));
		json_object_set_new(
			r, "gates",
			json_boolean(can_fail(policy,
					      c->point == PG_HISTORY_ALL ? NULL : &hs[c->point],
					      c->metric)));
		json_object_set_new(r, "first_commit",
				    before >= 0 ? str_or_null(a->jobs[before].commit)
						: json_null());
		json_object_set_new(r, "last_commit", str_or_null(j->commit));
		json_object_set_new(r, "first_date",
				    before >= 0 ? str_or_null(a->jobs[before].date) : json_null());
		json_object_set_new(r, "last_date", str_or_null(j->date));
		json_array_append_new(arr, r);
	}
	json_object_set_new(o, "changes", arr);
	free(idx);
	return o;
}

void pg_baseline_describe(struct pg_buf *out, const struct pg_baseline *b,
			  const struct pg_policy *p)
{
	pg_buf_printf(out, "Baseline for %s: %s (%s), %zu test point%s\n", b->gpu ? b->gpu : "?",
		      b->source ? b->source : "?", b->kind ? b->kind : "?", b->n,
		      b->n == 1 ? "" : "s");
	for (size_t i = 0; i < b->n; i++) {
		const struct pg_base_point *pt = &b->points[i];
		size_t width = 0;
		char name[96], v[PG_FMT_DOUBLE_SIZE], f[PG_FMT_DOUBLE_SIZE];

		pg_buf_printf(out, "\n%s\n  %s", pt->name, pg_suite_kind_name(pt->suite));
		if (!isnan(pt->qps)) {
			if (isinf(pt->qps))
				pg_buf_puts(out, ", qps inf");
			else
				pg_buf_printf(out, ", qps %s", pg_fmt_g(v, pt->qps));
		}
		if (pt->max_concurrency > 0)
			pg_buf_printf(out, ", concurrency %ld", pt->max_concurrency);
		if (pt->gpu)
			pg_buf_printf(out, ", %s", pt->gpu);
		pg_buf_printf(out, ", %ld run%s", pt->runs, pt->runs == 1 ? "" : "s");
		if (pt->repeats > 1)
			pg_buf_printf(out, " x %ld repeats", pt->repeats);
		if (pt->date)
			pg_buf_printf(out, ", %s", pt->date);
		if (pt->source)
			pg_buf_printf(out, "\n  from %s", pt->source);
		pg_buf_puts(out, "\n");
		if (pt->insufficient)
			pg_buf_printf(out, "  insufficient data: %s\n", pt->insufficient);
		for (size_t k = 0; k < pt->n_metrics; k++) {
			metric_name(name, sizeof(name), pt->metrics[k].metric);
			width = strlen(name) > width ? strlen(name) : width;
		}
		for (size_t k = 0; k < pt->n_metrics; k++) {
			const struct pg_base_metric *bm = &pt->metrics[k];
			struct pg_rule r;
			struct pg_buf rule = PG_BUF_INIT;

			pg_policy_rule(p, pt->name, pt->test, bm->metric, &r);
			pg_buf_puts(&rule, r.gate ? "gate " : "warn ");
			pg_thresholds_percent(&rule, r.tolerance);
			if (!r.gate && r.escalate > 0) {
				pg_buf_puts(&rule, ", fail beyond ");
				pg_thresholds_percent(&rule, r.escalate);
			}
			if (r.floor > 0)
				pg_buf_printf(&rule, ", floor %s%s%s", pg_fmt_g(f, r.floor),
					      bm->metric->unit[0] ? " " : "", bm->metric->unit);
			if (isfinite(bm->noise))
				pg_buf_printf(&rule, ", noise %.1f%%", bm->noise * 100);
			metric_name(name, sizeof(name), bm->metric);
			pg_buf_printf(out, "  %-*s  %12s  %s\n", (int)width, name,
				      pg_fmt_g(v, bm->value), rule.ptr);
			pg_buf_release(&rule);
		}
	}
}
