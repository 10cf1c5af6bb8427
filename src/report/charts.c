#include "report/charts.h"

#include "base/alloc.h"
#include "base/filename.h"
#include "base/strutil.h"
#include "base/buf.h"
#include "base/jsonw.h"
#include "suite/suite.h"
#include "report/svg.h"
#include "results/frontier.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The serving sweep panels: what vLLM users read first. */
static const char *const sweep_metrics[] = {
	"output_throughput", "median_ttft_ms", "p99_ttft_ms", "median_tpot_ms", "p99_tpot_ms",
};
static const char *const latency_metrics[] = { "median_latency_ms", "p99_latency_ms" };
static const char *const throughput_metrics[] = { "requests_per_second",
						  "output_tokens_per_second" };

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

char *pg_chart_stem(const char *s)
{
	char *out = pg_xstrdup(s && *s ? s : "chart");

	for (char *p = out; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '.' && *p != '-' && *p != '_')
			*p = '_';
	if (out[0] == '.')
		out[0] = '_';
	/* "File name too long" past 255 bytes */
	pg_file_name_cap(out, PG_CHART_STEM_MAX, s);
	return out;
}

/* A serving point: its test, and where it sits on the sweep. */
struct spoint {
	size_t idx; /* into the input arrays */
	char *test;
	double qps;  /* INFINITY for "inf" */
	double conc; /* INFINITY for unbounded */
};

static double json_num_or_inf(const json_t *v, double missing)
{
	if (json_is_number(v))
		return json_number_value(v);
	if (json_is_string(v) && !strcmp(json_string_value(v), "inf"))
		return INFINITY;
	if (json_is_null(v))
		return INFINITY;
	return missing;
}

static char *point_test(const json_t *r, const char *name)
{
	json_t *pg = json_object_get(r, "perfgate");
	json_t *t = pg ? json_object_get(pg, "test") : NULL;
	const char *cut;

	if (json_is_string(t))
		return pg_xstrdup(json_string_value(t));
	cut = strstr(name, "_qps_");
	if (!cut)
		cut = strstr(name, "_concurrency_");
	return cut ? pg_xstrndup(name, (size_t)(cut - name)) : pg_xstrdup(name);
}

static void spoint_read(struct spoint *sp, const json_t *r, const char *name, size_t idx)
{
	json_t *pg = json_object_get(r, "perfgate");
	json_t *params = pg ? json_object_get(pg, "params") : NULL;
	json_t *qps = params ? json_object_get(params, "qps") : NULL;
	json_t *conc = params ? json_object_get(params, "max_concurrency") : NULL;

	sp->idx = idx;
	sp->test = point_test(r, name);
	sp->qps = json_num_or_inf(qps ? qps : json_object_get(r, "request_rate"), NAN);
	sp->conc = json_num_or_inf(conc ? conc : json_object_get(r, "max_concurrency"), NAN);
}

static int cmp_double(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) - isnan(b);
	return a < b ? -1 : a > b;
}

static char *axis_label(double v, const char *unbounded)
{
	char num[PG_FMT_DOUBLE_SIZE];

	if (isinf(v))
		return pg_xstrdup(unbounded);
	if (isnan(v))
		return pg_xstrdup("?");
	return pg_xstrdup(pg_fmt_g(num, v));
}

static void chart_add(struct pg_chart_set *out, const char *stem, const char *title,
		      const struct pg_figure *fig, const struct pg_strv *points)
{
	struct pg_chart_file f = { 0 };
	struct pg_buf svg = PG_BUF_INIT;

	pg_svg_figure(&svg, fig);
	f.stem = pg_chart_stem(stem);
	f.name = pg_xstrdup(stem);
	f.title = pg_xstrdup(title);
	f.svg_len = svg.len;
	f.svg = pg_buf_detach(&svg);
	for (size_t i = 0; i < points->n; i++)
		pg_strv_push(&f.points, points->v[i]);
	PG_ARRAY_PUSH(out->items, out->n, out->cap, f);
}

/* Values of one metric for the given inputs; baseline stays NULL when the
 * input has no baseline source or no point has a baseline value. */
static void fill_values(const struct pg_chart_input *in, const struct pg_metric *m,
			const size_t *idx, size_t n, double *cur, double **base)
{
	bool any = false;

	*base = in->baseline ? pg_xcalloc(n, sizeof(double)) : NULL;
	for (size_t i = 0; i < n; i++) {
		if (pg_metric_value(m, in->results[idx[i]], &cur[i]) < 0)
			cur[i] = NAN;
		if (*base) {
			if (in->baseline(in->baseline_ctx, in->names[idx[i]], m, &(*base)[i]) < 0)
				(*base)[i] = NAN;
			else
				any = true;
		}
	}
	if (*base && !any) {
		free(*base);
		*base = NULL;
	}
}

/* The changes the bars are labelled with (pg_chart_input.change), or NULL. */
static double *fill_changes(const struct pg_chart_input *in, const struct pg_metric *m,
			    const size_t *idx, size_t n)
{
	double *change;

	if (!in->change)
		return NULL;
	change = pg_xcalloc(n + 1, sizeof(double));
	for (size_t i = 0; i < n; i++)
		if (in->change(in->change_ctx, in->names[idx[i]], m, &change[i]) < 0)
			change[i] = NAN;
	return change;
}

static const char *hint_for(const struct pg_metric *m)
{
	return m->direction == PG_HIGHER_IS_BETTER ? "higher is better" : "lower is better";
}

/*
 * One figure of `ids` panels over the points idx[0..n), either a sweep
 * (labels are x ticks) or bars (labels are point names).
 */
static bool any_value(const double *cur, const double *base, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (isfinite(cur[i]) || (base && isfinite(base[i])))
			return true;
	return false;
}

/* The metrics of a figure: those that regressed (of this suite) first, then
 * the key ones, each once, at most PG_CHARTS_MAX_PANELS. Returns the count;
 * *n_extra of them came from in->metrics. */
static size_t figure_metrics(const struct pg_metric **out, const struct pg_chart_input *in,
			     enum pg_suite_kind kind, const char *const *ids, size_t n_ids,
			     size_t *n_extra)
{
	size_t n = 0;

	for (int pass = 0; pass < 2; pass++) {
		const char *const *list = pass ? ids : in->metrics;
		size_t len = pass ? n_ids : (in->metrics ? in->n_metrics : 0);
		for (size_t k = 0; k < len && n < PG_CHARTS_MAX_PANELS; k++) {
			const struct pg_metric *m = pg_metric_by_id(kind, list[k]);
			bool dup = false;
			if (!m || m->direction == PG_NO_DIRECTION)
				continue;
			for (size_t j = 0; j < n && !dup; j++)
				dup = out[j] == m;
			if (!dup)
				out[n++] = m;
		}
		if (!pass)
			*n_extra = n;
	}
	return n;
}

/*
 * One figure of panels over the points idx[0..n), either a sweep (labels
 * are x ticks) or bars (labels are point names): the metrics that
 * regressed, then the key metrics `ids`, those without any value left out
 * unless nothing has one.
 */
static void figure_for(struct pg_chart_set *out, const struct pg_chart_input *in,
		       enum pg_suite_kind kind, const char *const *ids, size_t n_ids,
		       enum pg_panel_kind pk, const size_t *idx, char **labels, size_t n,
		       const char *x_title, const char *stem, const char *title)
{
	const struct pg_metric *ms[PG_CHARTS_MAX_PANELS];
	size_t n_extra = 0, n_ms = figure_metrics(ms, in, kind, ids, n_ids, &n_extra);
	struct pg_panel *panels = pg_xcalloc(n_ms + 1, sizeof(*panels));
	double **cur = pg_xcalloc(n_ms + 1, sizeof(*cur));
	double **base = pg_xcalloc(n_ms + 1, sizeof(*base));
	double **change = pg_xcalloc(n_ms + 1, sizeof(*change));
	bool *has = pg_xcalloc(n_ms + 1, sizeof(*has));
	bool some = false;
	struct pg_strv points = PG_STRV_INIT;
	size_t np = 0;
	struct pg_figure fig = { 0 };

	for (size_t k = 0; k < n_ms; k++) {
		cur[k] = pg_xcalloc(n, sizeof(double));
		fill_values(in, ms[k], idx, n, cur[k], &base[k]);
		change[k] = fill_changes(in, ms[k], idx, n);
		has[k] = any_value(cur[k], base[k], n);
		some |= has[k];
	}
	for (size_t k = 0; k < n_ms; k++) {
		const struct pg_metric *m = ms[k];
		/* an empty panel of a key metric says nothing: left out when
		 * others have data (a metric that regressed always stays) */
		if (some && !has[k] && k >= n_extra)
			continue;
		panels[np++] = (struct pg_panel){
			.kind = pk,
			.title = m->label,
			.unit = m->unit,
			.hint = hint_for(m),
			.better = m->direction == PG_HIGHER_IS_BETTER  ? 1
				  : m->direction == PG_LOWER_IS_BETTER ? -1
								       : 0,
			.x_title = x_title,
			.labels = (const char *const *)labels,
			.n = n,
			.current = cur[k],
			.baseline = base[k],
			.change = change[k],
		};
	}
	for (size_t i = 0; i < n; i++)
		pg_strv_push(&points, in->names[idx[i]]);
	fig.title = title;
	fig.subtitle = in->subtitle;
	fig.current_name = "This run";
	fig.baseline_name = in->baseline_name ? in->baseline_name : "Baseline";
	fig.panels = panels;
	fig.n_panels = np;
	fig.columns = 2;
	chart_add(out, stem, title, &fig, &points);

	for (size_t k = 0; k < n_ms; k++) {
		free(cur[k]);
		free(base[k]);
		free(change[k]);
	}
	free(cur);
	free(base);
	free(change);
	free(has);
	free(panels);
	pg_strv_release(&points);
}

static int cmp_sweep_qps(const void *a, const void *b)
{
	const struct spoint *x = a, *y = b;
	int c = cmp_double(x->qps, y->qps);
	return c ? c : cmp_double(x->conc, y->conc);
}

static int cmp_sweep_conc(const void *a, const void *b)
{
	const struct spoint *x = a, *y = b;
	int c = cmp_double(x->conc, y->conc);
	return c ? c : cmp_double(x->qps, y->qps);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Flagged points, sorted for bsearch. */
struct flags {
	const char **names;
	size_t n;
};

static void flags_init(struct flags *f, const struct pg_chart_input *in)
{
	f->n = in->flagged ? in->n_flagged : 0;
	f->names = pg_xcalloc(f->n + 1, sizeof(*f->names));
	for (size_t i = 0; i < f->n; i++)
		f->names[i] = in->flagged[i];
	if (f->n)
		qsort(f->names, f->n, sizeof(*f->names), cmp_str);
}

static bool flagged(const struct flags *f, const char *name)
{
	return f->n && bsearch(&name, f->names, f->n, sizeof(*f->names), cmp_str);
}

/* The rows a bar figure shows: all of them up to the limit, else the
 * flagged ones first, then the others, in their order. Returns the count
 * and whether some were left out. */
static size_t pick_rows(size_t *idx, size_t n, const struct pg_chart_input *in,
			const struct flags *f)
{
	size_t *kept, k = 0;

	if (n <= PG_CHARTS_MAX_BAR_ROWS)
		return n;
	kept = pg_xcalloc(PG_CHARTS_MAX_BAR_ROWS, sizeof(*kept));
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n && k < PG_CHARTS_MAX_BAR_ROWS; i++)
			if (flagged(f, in->names[idx[i]]) == (pass == 0))
				kept[k++] = idx[i];
	memcpy(idx, kept, k * sizeof(*idx));
	free(kept);
	return k;
}

static void bar_title(struct pg_buf *title, const char *what, size_t shown, size_t n)
{
	pg_buf_puts(title, what);
	if (shown < n)
		pg_buf_printf(title, " (%zu of %zu, regressions first; all in the report)", shown,
			      n);
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

static int cmp_by_test(const void *a, const void *b)
{
	const struct spoint *x = a, *y = b;
	int c = strcmp(x->test, y->test);
	return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

static void sweep_figure(struct pg_chart_set *out, const struct pg_chart_input *in,
			 struct spoint *group, size_t g)
{
	bool qps_varies = false, conc_varies = false, by_conc;
	size_t *idx = pg_xcalloc(g, sizeof(*idx));
	char **labels = pg_xcalloc(g, sizeof(char *));
	struct pg_buf title = PG_BUF_INIT, stem = PG_BUF_INIT;

	for (size_t j = 1; j < g; j++) {
		qps_varies |= cmp_double(group[j].qps, group[0].qps) != 0;
		conc_varies |= cmp_double(group[j].conc, group[0].conc) != 0;
	}
	by_conc = conc_varies && !qps_varies;
	qsort(group, g, sizeof(*group), by_conc ? cmp_sweep_conc : cmp_sweep_qps);
	for (size_t j = 0; j < g; j++) {
		idx[j] = group[j].idx;
		labels[j] = by_conc ? axis_label(group[j].conc, "unbounded")
				    : axis_label(group[j].qps, "inf");
		/* both vary: say which concurrency each QPS point had */
		if (qps_varies && conc_varies && !isinf(group[j].conc)) {
			struct pg_buf l = PG_BUF_INIT;
			char num[PG_FMT_DOUBLE_SIZE];
			pg_buf_printf(&l, "%s@c%s", labels[j], pg_fmt_g(num, group[j].conc));
			free(labels[j]);
			labels[j] = pg_buf_detach(&l);
		}
	}
	pg_buf_printf(&title, "%s: %s sweep", group[0].test, by_conc ? "concurrency" : "QPS");
	/* the test's own name ("serving_llama8B_..."), unless it would clash
	 * with a shared figure's stem */
	pg_buf_printf(&stem, "%s%s",
		      strcmp(group[0].test, "serving") && strcmp(group[0].test, "latency") &&
				      strcmp(group[0].test, "throughput")
			      ? ""
			      : "sweep_",
		      group[0].test);
	figure_for(out, in, PG_SUITE_SERVING, sweep_metrics, N_OF(sweep_metrics), PG_PANEL_LINES,
		   idx, labels, g,
		   by_conc ? "Max concurrency (requests in flight)"
			   : "Request rate (QPS, req/s; inf = all at once)",
		   stem.ptr, title.ptr);
	for (size_t j = 0; j < g; j++)
		free(labels[j]);
	free(labels);
	free(idx);
	pg_buf_release(&title);
	pg_buf_release(&stem);
}

static void frontier_charts(struct pg_chart_set *out, const struct pg_chart_input *in);

/* Serving tests: sweeps get a figure each (flagged ones first, at most
 * PG_CHARTS_MAX_SWEEPS); single points share one bar figure. */
static void serving_charts(struct pg_chart_set *out, const struct pg_chart_input *in,
			   const struct flags *f)
{
	struct spoint *sp = pg_xcalloc(in->n + 1, sizeof(*sp));
	size_t *single = pg_xcalloc(in->n + 1, sizeof(*single));
	size_t *start = pg_xcalloc(in->n + 1, sizeof(*start)),
	       *len = pg_xcalloc(in->n + 1, sizeof(*len));
	bool *hot = pg_xcalloc(in->n + 1, sizeof(*hot));
	size_t n = 0, n_single = 0, n_groups = 0, emitted = 0, shown;
	char **labels;
	struct pg_buf title = PG_BUF_INIT;

	for (size_t i = 0; i < in->n; i++)
		if (pg_result_kind(in->results[i]) == PG_SUITE_SERVING)
			spoint_read(&sp[n++], in->results[i], in->names[i], i);
	/* group by test in one sort; figures follow the tests' names */
	qsort(sp, n, sizeof(*sp), cmp_by_test);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && !strcmp(sp[j].test, sp[i].test))
			j++;
		if (j - i < 2) {
			single[n_single++] = sp[i].idx;
		} else {
			start[n_groups] = i;
			len[n_groups] = j - i;
			for (size_t k = i; k < j; k++)
				hot[n_groups] |= flagged(f, in->names[sp[k].idx]);
			n_groups++;
		}
		i = j;
	}
	for (int pass = 0; pass < 2; pass++)
		for (size_t g = 0; g < n_groups; g++) {
			if (hot[g] != (pass == 0))
				continue;
			if (emitted == PG_CHARTS_MAX_SWEEPS) {
				out->sweeps_left_out++;
				continue;
			}
			sweep_figure(out, in, sp + start[g], len[g]);
			emitted++;
		}
	/* the ladders' frontiers after the sweeps they come from */
	frontier_charts(out, in);

	/* single points keep the results' order */
	qsort(single, n_single, sizeof(*single), cmp_size);
	shown = pick_rows(single, n_single, in, f);
	labels = pg_xcalloc(shown + 1, sizeof(char *));
	for (size_t i = 0; i < shown; i++)
		labels[i] = (char *)in->names[single[i]];
	bar_title(&title, "Serving tests", shown, n_single);
	if (shown)
		figure_for(out, in, PG_SUITE_SERVING, sweep_metrics, N_OF(sweep_metrics),
			   PG_PANEL_HBARS, single, labels, shown, NULL, "serving", title.ptr);
	for (size_t i = 0; i < n; i++)
		free(sp[i].test);
	pg_buf_release(&title);
	free(labels);
	free(single);
	free(start);
	free(len);
	free(hot);
	free(sp);
}

/* "-3.1%" */
static void pct_text(struct pg_buf *o, double rel)
{
	char g[PG_FMT_DOUBLE_SIZE];

	pg_buf_printf(o, "%s%s%%", rel > 0 ? "+" : "", pg_fmt_g(g, round(rel * 1000) / 10));
}

static void knob_text(struct pg_buf *o, double knob, bool by_rate)
{
	char g[PG_FMT_DOUBLE_SIZE];

	if (by_rate)
		pg_buf_printf(o, "%s qps", isinf(knob) ? "inf" : pg_fmt_g(g, knob));
	else
		pg_buf_printf(o, "c=%s", pg_fmt_g(g, knob));
}

/* The level of the comparison nearest to interactivity x. */
static const struct pg_frontier_level *level_near(const struct pg_frontier_cmp *c, double x)
{
	const struct pg_frontier_level *best = NULL;

	for (size_t i = 0; i < c->n_levels; i++)
		if (!best || fabs(log(c->levels[i].intvty / x)) < fabs(log(best->intvty / x)))
			best = &c->levels[i];
	return best;
}

/* One ladder's frontier: this run's points (and the baseline's) at output
 * throughput per GPU against tok/s/user, the Pareto frontiers joined, and
 * the comparison in words under the plot (results/frontier.h). */
static void frontier_figure(struct pg_chart_set *out, const struct pg_chart_input *in,
			    const struct pg_ladder *l, const size_t *at)
{
	const struct pg_metric *tput = pg_metric_by_id(PG_SUITE_SERVING, "output_throughput");
	const struct pg_metric *tpot = pg_metric_by_id(PG_SUITE_SERVING, "median_tpot_ms");
	size_t n = l->n, nb = 0;
	struct pg_frontier_point *cur = pg_xcalloc(n, sizeof(*cur));
	struct pg_frontier_point *bas = pg_xcalloc(n, sizeof(*bas));
	double *x = pg_xcalloc(n, sizeof(double)), *y = pg_xcalloc(n, sizeof(double));
	double *bx = pg_xcalloc(n, sizeof(double)), *by = pg_xcalloc(n, sizeof(double));
	bool *on = pg_xcalloc(n, sizeof(bool)), *bon = pg_xcalloc(n, sizeof(bool));
	char **labels = pg_xcalloc(n, sizeof(char *));
	struct pg_buf notes[4], title = PG_BUF_INIT, stem = PG_BUF_INIT;
	const char *note_ptrs[4];
	size_t n_notes = 0;
	struct pg_strv points = PG_STRV_INIT;
	struct pg_frontier_cmp cmp;
	struct pg_panel panel;
	struct pg_figure fig = { 0 };

	for (size_t k = 0; k < 4; k++)
		pg_buf_init(&notes[k]);
	for (size_t k = 0; k < n; k++) {
		size_t i = at[l->idx[k]];
		const json_t *r = in->results[i];
		double gpus = (double)pg_frontier_gpus(r), bt, bq;
		struct pg_buf lab = PG_BUF_INIT;

		if (!pg_frontier_point_from(&cur[k], in->names[i], r, l->by_rate))
			cur[k].tput = cur[k].intvty = NAN;
		x[k] = cur[k].intvty;
		y[k] = cur[k].tput;
		knob_text(&lab, cur[k].knob, l->by_rate);
		labels[k] = pg_buf_detach(&lab);
		pg_strv_push(&points, in->names[i]);
		bx[k] = by[k] = NAN;
		if (in->baseline && in->baseline(in->baseline_ctx, in->names[i], tput, &bt) == 0 &&
		    in->baseline(in->baseline_ctx, in->names[i], tpot, &bq) == 0 && bq > 0) {
			bx[k] = 1000 / bq;
			by[k] = bt / gpus;
			bas[nb++] = (struct pg_frontier_point){ in->names[i], cur[k].knob, by[k],
								bx[k], false };
		}
	}
	pg_frontier_mark(cur, n);
	for (size_t k = 0; k < n; k++)
		on[k] = cur[k].on_frontier;
	if (nb >= 3) {
		struct pg_frontier_point *marked = pg_xcalloc(n, sizeof(*marked));
		for (size_t k = 0; k < n; k++)
			marked[k] = (struct pg_frontier_point){ NULL, 0, by[k], bx[k], false };
		pg_frontier_mark(marked, n);
		for (size_t k = 0; k < n; k++)
			bon[k] = marked[k].on_frontier;
		free(marked);
		if (pg_frontier_compare(&cmp, bas, nb, cur, n, 0.98, NULL) == 0) {
			const struct pg_frontier_level *lv[3] = { NULL, NULL, NULL };
			pg_buf_puts(&notes[n_notes], "Change at equal users/GPU: ");
			pct_text(&notes[n_notes], cmp.shift);
			pg_buf_puts(&notes[n_notes], " (98% from the points' spread: ");
			pct_text(&notes[n_notes], cmp.lo);
			pg_buf_puts(&notes[n_notes], " to ");
			pct_text(&notes[n_notes], cmp.hi);
			pg_buf_printf(&notes[n_notes++], "), %zu points", cmp.matched);
			/* at matched interactivity: the baseline's knee and the
			 * ends of the common range */
			if (cmp.n_levels) {
				lv[0] = &cmp.levels[cmp.n_levels - 1];
				if (cmp.knee_base >= 0)
					lv[1] = level_near(&cmp,
							   cmp.base_curve[cmp.knee_base].intvty);
				lv[2] = &cmp.levels[0];
			}
			for (size_t k = 0; k < 3 && n_notes < 4; k++) {
				char g[PG_FMT_DOUBLE_SIZE];
				if (!lv[k] || (k && lv[k] == lv[k - 1]) ||
				    (k == 2 && lv[2] == lv[0]))
					continue;
				pg_buf_printf(&notes[n_notes], "At %s tok/s/user (",
					      pg_fmt_g(g, round(lv[k]->intvty * 10) / 10));
				knob_text(&notes[n_notes], lv[k]->base_knob, l->by_rate);
				pg_buf_puts(&notes[n_notes], "): ");
				pct_text(&notes[n_notes], lv[k]->change);
				if (isfinite(lv[k]->lo)) {
					pg_buf_puts(&notes[n_notes], " (");
					pct_text(&notes[n_notes], lv[k]->lo);
					pg_buf_puts(&notes[n_notes], " to ");
					pct_text(&notes[n_notes], lv[k]->hi);
					pg_buf_puts(&notes[n_notes], ")");
				}
				n_notes++;
			}
		}
		pg_frontier_cmp_release(&cmp);
	}
	if (n_notes == 0) {
		size_t k_on = 0;
		for (size_t k = 0; k < n; k++)
			k_on += on[k];
		pg_buf_printf(&notes[n_notes++], "%zu of %zu points on the frontier", k_on, n);
	}
	for (size_t k = 0; k < n_notes; k++)
		note_ptrs[k] = notes[k].ptr;

	panel = (struct pg_panel){
		.kind = PG_PANEL_XY,
		.title = "Output throughput per GPU",
		.unit = "tok/s",
		.hint = "up and right is better",
		.better = 1,
		.x_title = "Interactivity (tok/s/user = 1000 / median TPOT)",
		.labels = (const char *const *)labels,
		.n = n,
		.current = y,
		.baseline = nb ? by : NULL,
		.x = x,
		.baseline_x = nb ? bx : NULL,
		.frontier = on,
		.baseline_frontier = nb ? bon : NULL,
		.notes = note_ptrs,
		.n_notes = n_notes,
	};
	pg_buf_printf(&title, "%s: throughput-interactivity frontier", l->test);
	pg_buf_printf(&stem, "%s_frontier", l->test);
	fig.title = title.ptr;
	fig.subtitle = in->subtitle;
	fig.current_name = "This run";
	fig.baseline_name = in->baseline_name ? in->baseline_name : "Baseline";
	fig.panels = &panel;
	fig.n_panels = 1;
	fig.columns = 1;
	chart_add(out, stem.ptr, title.ptr, &fig, &points);

	for (size_t k = 0; k < n; k++)
		free(labels[k]);
	for (size_t k = 0; k < 4; k++)
		pg_buf_release(&notes[k]);
	free(labels);
	free(cur);
	free(bas);
	free(x);
	free(y);
	free(bx);
	free(by);
	free(on);
	free(bon);
	pg_strv_release(&points);
	pg_buf_release(&title);
	pg_buf_release(&stem);
}

/* A frontier figure per concurrency or rate ladder of completed points. */
static void frontier_charts(struct pg_chart_set *out, const struct pg_chart_input *in)
{
	const char **names = pg_xcalloc(in->n + 1, sizeof(*names));
	const json_t **results = pg_xcalloc(in->n + 1, sizeof(*results));
	size_t *at = pg_xcalloc(in->n + 1, sizeof(*at)), n = 0;
	struct pg_ladders ladders;

	for (size_t i = 0; i < in->n; i++) {
		const char *status = pg_json_path_str(in->results[i], "perfgate.status");
		if (pg_result_kind(in->results[i]) != PG_SUITE_SERVING ||
		    (status && strcmp(status, "ok")) ||
		    json_is_true(pg_json_path(in->results[i], "perfgate.adaptive_search")))
			continue;
		names[n] = in->names[i];
		results[n] = in->results[i];
		at[n++] = i;
	}
	pg_ladders_find(&ladders, names, results, n);
	for (size_t i = 0; i < ladders.n && i < PG_CHARTS_MAX_SWEEPS; i++)
		frontier_figure(out, in, &ladders.v[i], at);
	pg_ladders_release(&ladders);
	free(names);
	free(results);
	free(at);
}

static void bar_charts(struct pg_chart_set *out, const struct pg_chart_input *in,
		       const struct flags *f, enum pg_suite_kind kind, const char *const *ids,
		       size_t n_ids, const char *stem, const char *what)
{
	size_t *idx = pg_xcalloc(in->n + 1, sizeof(*idx));
	char **labels;
	size_t n = 0, shown;
	struct pg_buf title = PG_BUF_INIT;

	for (size_t i = 0; i < in->n; i++)
		if (pg_result_kind(in->results[i]) == (int)kind)
			idx[n++] = i;
	shown = pick_rows(idx, n, in, f);
	labels = pg_xcalloc(shown + 1, sizeof(char *));
	for (size_t i = 0; i < shown; i++)
		labels[i] = (char *)in->names[idx[i]];
	bar_title(&title, what, shown, n);
	if (shown)
		figure_for(out, in, kind, ids, n_ids, PG_PANEL_HBARS, idx, labels, shown, NULL,
			   stem, title.ptr);
	pg_buf_release(&title);
	free(idx);
	free(labels);
}

void pg_charts_build(struct pg_chart_set *out, const struct pg_chart_input *in)
{
	struct flags f;

	flags_init(&f, in);
	serving_charts(out, in, &f);
	bar_charts(out, in, &f, PG_SUITE_LATENCY, latency_metrics, N_OF(latency_metrics), "latency",
		   "Latency tests");
	bar_charts(out, in, &f, PG_SUITE_THROUGHPUT, throughput_metrics, N_OF(throughput_metrics),
		   "throughput", "Throughput tests");
	free(f.names);
	/* two tests whose names differ in bytes a file name cannot hold, or
	 * in case, or a test called like a shared figure's stem: each chart
	 * a file of its own */
	{
		char **stems = pg_xcalloc(out->n + 1, sizeof(char *));
		const char **names = pg_xcalloc(out->n + 1, sizeof(char *));
		for (size_t i = 0; i < out->n; i++) {
			stems[i] = out->items[i].stem;
			names[i] = out->items[i].name;
		}
		pg_file_names_unique(stems, names, out->n, "");
		for (size_t i = 0; i < out->n; i++)
			out->items[i].stem = stems[i];
		free(stems);
		free(names);
	}
}
void pg_chart_set_release(struct pg_chart_set *set)
{
	for (size_t i = 0; i < set->n; i++) {
		free(set->items[i].stem);
		free(set->items[i].name);
		free(set->items[i].title);
		free(set->items[i].svg);
		pg_strv_release(&set->items[i].points);
	}
	free(set->items);
	set->items = NULL;
	set->n = set->cap = 0;
	set->sweeps_left_out = 0;
}
