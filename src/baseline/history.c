#include "baseline/history.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "gate/compare_stats.h"
#include "base/error.h"
#include "gpu/gpu.h"
#include "baseline/history_check.h"
#include "baseline/thresholds.h"
#include "base/jsonw.h"

#include <math.h>
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
	json_object_set_new(o, "metrics", metrics);
	return o;
}

static void rec_release(struct pg_history_rec *r)
{
	free(r->commit);
	free(r->date);
	free(r->build_url);
	free(r->gpu);
	free(r->test);
	json_decref(r->metrics);
}

void pg_history_release(struct pg_history *h)
{
	for (size_t i = 0; i < h->n; i++)
		rec_release(&h->recs[i]);
	free(h->recs);
	free(h->point);
	memset(h, 0, sizeof(*h));
}

int pg_history_parse(struct pg_history *h, const char *point, const char *text, size_t len,
		     const char *source, struct pg_error *err)
{
	size_t off = 0;
	int line = 0;

	if (!h->point)
		h->point = pg_xstrdup(point);
	while (off < len) {
		const char *start = text + off, *nl = memchr(start, '\n', len - off);
		size_t l = nl ? (size_t)(nl - start) : len - off;
		json_error_t jerr;
		json_t *o, *v;
		struct pg_history_rec r;
		enum pg_hline_kind kind;
		char why[256];
		int suite;

		off += l + (nl ? 1 : 0);
		line++;
		while (l && (start[l - 1] == '\r' || start[l - 1] == ' '))
			l--;
		if (!l)
			continue;
		o = json_loadb(start, l, 0, &jerr);
		if (!o)
			return pg_error_set(err, PG_EINFRA, "%s:%d: unreadable history line: %s",
					    source, line, jerr.text);
		/* a line this perfgate cannot use is an error naming it, never a
		 * point silently missing from the baseline */
		if ((kind = pg_history_classify(o, why, sizeof(why))) != PG_HLINE_OK) {
			json_decref(o);
			return pg_error_set(
				err, PG_EINFRA, "%s:%d: %s history line: %s", source, line,
				kind == PG_HLINE_NEWER ? "a newer-format" : "unreadable", why);
		}
		suite = json_is_string(json_object_get(o, "suite"))
				? pg_suite_kind_parse(
					  json_string_value(json_object_get(o, "suite")))
				: -1;
		if (!json_is_object(o) || suite < 0 ||
		    !json_is_object(json_object_get(o, "metrics"))) {
			json_decref(o);
			return pg_error_set(err, PG_EINFRA, "%s:%d: not a perfgate history record",
					    source, line);
		}
		memset(&r, 0, sizeof(r));
		r.commit = pg_xstrdup(pg_json_path_str(o, "commit"));
		r.date = pg_xstrdup(pg_json_path_str(o, "date"));
		r.build_url = pg_xstrdup(pg_json_path_str(o, "build_url"));
		r.gpu = pg_xstrdup(pg_json_path_str(o, "gpu"));
		r.test = pg_xstrdup(pg_json_path_str(o, "test"));
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
		json_decref(o);
		PG_ARRAY_PUSH(h->recs, h->n, h->cap, r);
	}
	return 0;
}

/* A record's median for metric id, or NAN. */
static double rec_median(const struct pg_history_rec *r, const char *id)
{
	json_t *arr = json_object_get(r->metrics, id), *x;
	double *xs, med;
	size_t n = 0, i;

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

void pg_history_baseline_point(struct pg_baseline *base, const struct pg_history *h,
			       const bool *use, long window, long min_history)
{
	size_t *idx = pg_xmalloc((h->n + 1) * sizeof(size_t)), n = 0, first;
	const struct pg_history_rec *last;
	struct pg_base_point *bp;
	size_t nm;
	const struct pg_metric *all = pg_metrics_all(&nm);
	struct pg_buf src = PG_BUF_INIT;

	for (size_t i = 0; i < h->n; i++)
		if (!use || use[i])
			idx[n++] = i;
	if (!n)
		goto done;
	first = n > (size_t)window ? n - (size_t)window : 0;
	last = &h->recs[idx[n - 1]];
	bp = pg_baseline_add(base, h->point, last->suite);
	bp->test = pg_xstrdup(last->test);
	bp->qps = last->qps;
	bp->max_concurrency = last->max_concurrency;
	bp->gpu = pg_xstrdup(last->gpu);
	bp->commit = pg_xstrdup(last->commit);
	if (last->date && strlen(last->date) >= 10)
		bp->date = pg_xstrndup(last->date, 10);
	bp->runs = (long)(n - first);
	bp->repeats = 1;
	pg_buf_printf(&src, "git history: %zu run%s", n - first, n - first == 1 ? "" : "s");
	if (h->recs[idx[first]].date && last->date)
		pg_buf_printf(&src, ", %.10s to %.10s", h->recs[idx[first]].date, last->date);
	bp->source = pg_buf_detach(&src);
	if ((long)(n - first) < min_history) {
		struct pg_buf why = PG_BUF_INIT;
		pg_buf_printf(&why, "%zu run%s in the history, %ld needed", n - first,
			      n - first == 1 ? "" : "s", min_history);
		bp->insufficient = pg_buf_detach(&why);
	}
	for (size_t m = 0; m < nm; m++) {
		double *medians;
		size_t k = 0;
		if (all[m].suite != bp->suite || all[m].direction == PG_NO_DIRECTION)
			continue;
		medians = pg_xmalloc((n - first) * sizeof(double));
		for (size_t i = first; i < n; i++) {
			const struct pg_history_rec *r = &h->recs[idx[i]];
			double med = rec_median(r, all[m].id);
			if (!isnan(med))
				medians[k++] = med;
			if (r->repeats > bp->repeats)
				bp->repeats = r->repeats;
		}
		if (k)
			pg_base_point_add_runs(bp, &all[m], medians, k);
		free(medians);
	}
done:
	free(idx);
}

static void sparkline(struct pg_buf *out, const double *v, size_t n)
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

void pg_history_trend(struct pg_buf *out, const struct pg_history *h, const char *metric, long last)
{
	size_t first = last > 0 && h->n > (size_t)last ? h->n - (size_t)last : 0, n = h->n - first;
	size_t nm, width = 0;
	const struct pg_metric *all = pg_metrics_all(&nm);
	const struct pg_history_rec *r0, *r1;
	char name[96], a[PG_FMT_DOUBLE_SIZE], b[PG_FMT_DOUBLE_SIZE], c[PG_FMT_DOUBLE_SIZE];

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
		size_t k = 0;
		if (all[m].suite != r1->suite || all[m].direction == PG_NO_DIRECTION)
			continue;
		if (metric && strcmp(metric, all[m].id))
			continue;
		v = pg_xmalloc(n * sizeof(double));
		present = pg_xmalloc(n * sizeof(double));
		for (size_t i = 0; i < n; i++) {
			v[i] = rec_median(&h->recs[first + i], all[m].id);
			if (!isnan(v[i])) {
				present[k++] = v[i];
				if (isnan(first_v))
					first_v = v[i];
				last_v = v[i];
			}
		}
		if (k) {
			double med = pg_cmpstat_median(present, k),
			       cv = pg_cmpstat_robust_cv(present, k);
			metric_name(name, sizeof(name), &all[m]);
			pg_buf_printf(out, "  %-*s  %10s -> %-10s %+6.1f%%  ", (int)width, name,
				      pg_fmt_g(a, first_v), pg_fmt_g(b, last_v),
				      first_v != 0 ? (last_v / first_v - 1) * 100 : 0.0);
			sparkline(out, v, n);
			pg_buf_printf(out, "  median %s", pg_fmt_g(c, med));
			if (!isnan(cv))
				pg_buf_printf(out, ", spread %.1f%%", cv * 100);
			pg_buf_puts(out, "\n");
		}
		free(v);
		free(present);
	}
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
