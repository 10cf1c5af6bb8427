#include "trends/trends.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/escape.h"
#include "base/filename.h"
#include "base/strutil.h"
#include "report/charts.h"
#include "report/svg.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The colours of report/svg.c, so the site and the report charts agree. */
#define COLOR_RUN    "#2563eb"
#define COLOR_AXIS   "#374151"
#define COLOR_GRID   "#e5e7eb"
#define COLOR_MUTED  "#6b7280"
#define COLOR_WORSE  "#dc2626"
#define COLOR_BETTER "#16a34a"
#define COLOR_WINDOW "#dbeafe"
#define COLOR_BAND   "#fde2e2"
#define COLOR_WARN   "#fef3c7"
#define COLOR_CHANGE "#d97706"
#define FONT         "DejaVu Sans, Helvetica, Arial, sans-serif"

/* Runs a sparkline draws: the last ones, enough to see a level and a step. */
#define SPARK_RUNS 60

static const char style[] =
	"body{font-family:" FONT ";font-size:14px;color:#111827;margin:24px;max-width:1180px}"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}"
	"h3{font-size:15px;margin:22px 0 4px}"
	"nav{font-size:13px;margin-bottom:12px}a{color:#1d4ed8}"
	".muted{color:" COLOR_MUTED "}.bad{color:" COLOR_WORSE ";font-weight:bold}"
	".good{color:" COLOR_BETTER "}.warn{color:" COLOR_CHANGE ";font-weight:bold}"
	"table{border-collapse:collapse;margin:8px 0}"
	"th,td{border-bottom:1px solid " COLOR_GRID ";padding:4px 10px 4px 0;text-align:left;"
	"vertical-align:middle}"
	"th{font-size:12px;color:" COLOR_AXIS "}td.num{text-align:right;font-variant-numeric:"
	"tabular-nums;white-space:nowrap}"
	"td.spark{white-space:nowrap}td.spark svg{vertical-align:middle}"
	".legend span{margin-right:18px;white-space:nowrap}"
	".sw{display:inline-block;width:14px;height:10px;margin-right:5px;vertical-align:middle}"
	"code{font-size:12px}"
	".runs td{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
	".runs td:nth-child(2),.runs td:nth-child(3),.runs td:nth-child(4){text-align:left}"
	".runs td:nth-child(3){font-family:monospace;font-size:12px}"
	".tip{position:absolute;display:none;background:#fff;border:1px solid #9ca3af;"
	"border-radius:4px;padding:4px 8px;font-size:12px;white-space:nowrap;"
	"box-shadow:0 2px 6px #0002;pointer-events:none}.tip.pin{pointer-events:auto}"
	".tip span{font-family:monospace}.tip i{color:" COLOR_MUTED "}"
	"circle.hl{fill:" COLOR_RUN ";stroke:#fff;stroke-width:1.5;pointer-events:none}"
	"svg[data-m]{cursor:crosshair}"
	"section{border-top:2px solid " COLOR_GRID ";margin-top:36px}\n";

/* ------------------------------------------------------------------ */
/* Page frame                                                          */

/* What pg_escape_html writes as it is, alone: printable ASCII but HTML's
 * five. */
static bool html_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '&' && c != '<' && c != '>' && c != '"' && c != '\'';
}

/* pg_escape_html(o, s), a string with nothing to escape (a number, a
 * commit, a date: most of what the pages write) appended at once. */
static void esc_html(struct pg_buf *o, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	while (html_plain(*p))
		p++;
	if (*p)
		pg_escape_html(o, s);
	else if (s)
		pg_buf_add(o, s, (size_t)(p - (const unsigned char *)s));
}

/* v as "%.1f" writes it, without a ".0": a coordinate. */
static void put_num(struct pg_buf *o, double v)
{
	pg_buf_fixed1(o, v);
	if (o->len > 2 && o->ptr[o->len - 1] == '0' && o->ptr[o->len - 2] == '.')
		pg_buf_truncate(o, o->len - 2);
}

/* sep, then "x,y" (put_num's): a polyline's point. */
static void put_xy(struct pg_buf *o, const char *sep, double x, double y)
{
	pg_buf_puts(o, sep);
	put_num(o, x);
	pg_buf_putc(o, ',');
	put_num(o, y);
}

/* home: the path up to the site's root (NULL: a page alone, no link out);
 * gpu and gpu_href: the GPU's overview, or NULL on the overview and the
 * front page. */
static void page_open(struct pg_buf *o, const char *title, const char *home, const char *gpu,
		      const char *gpu_href)
{
	pg_buf_puts(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		       "<title>");
	esc_html(o, title);
	pg_buf_puts(o, "</title>\n<style>");
	pg_buf_puts(o, style);
	pg_buf_puts(o, "</style></head>\n<body>\n<nav>");
	if (home) {
		pg_buf_puts(o, "<a href=\"");
		pg_buf_puts(o, home);
		pg_buf_puts(o, "index.html\">perfgate trends</a>");
	} else {
		pg_buf_puts(o, "perfgate trends");
	}
	if (gpu) {
		pg_buf_puts(o, " › <a href=\"");
		pg_buf_puts(o, gpu_href);
		pg_buf_puts(o, "\">");
		esc_html(o, gpu);
		pg_buf_puts(o, "</a>");
	}
	pg_buf_puts(o, "</nav>\n");
}

static void page_close(struct pg_buf *o)
{
	pg_buf_puts(o, "</body></html>\n");
}

/* The first n bytes of s (a commit, a date: from the history's lines,
 * which anyone who can push to it writes), escaped. */
static void esc_prefix(struct pg_buf *o, const char *s, size_t n)
{
	struct pg_buf b = PG_BUF_INIT;
	size_t k = 0;

	while (k < n && html_plain((unsigned char)s[k]))
		k++;
	if (k == n || !s[k]) {
		pg_buf_add(o, s, k);
		return;
	}
	pg_buf_add(&b, s, strnlen(s, n));
	pg_escape_html(o, b.ptr);
	pg_buf_release(&b);
}

/* A link to an outside build, only for http(s) URLs (never javascript:). */
static void build_link(struct pg_buf *o, const char *url, const char *text)
{
	if (url && (!strncmp(url, "https://", 8) || !strncmp(url, "http://", 7))) {
		pg_buf_puts(o, "<a href=\"");
		esc_html(o, url);
		pg_buf_puts(o, "\">");
		esc_html(o, text);
		pg_buf_puts(o, "</a>");
	} else {
		esc_html(o, text);
	}
}

static const char *point_test(const struct pg_history *h)
{
	return h->n ? h->recs[h->n - 1].test : NULL;
}

static enum pg_suite_kind point_suite(const struct pg_history *h)
{
	return h->n ? h->recs[h->n - 1].suite : PG_SUITE_SERVING;
}

static void metric_title(struct pg_buf *o, const struct pg_metric *m)
{
	esc_html(o, m->label);
	if (m->unit[0]) {
		pg_buf_puts(o, " (");
		esc_html(o, m->unit);
		pg_buf_puts(o, ")");
	}
}

/* ------------------------------------------------------------------ */
/* Series and the gate's view of them                                  */

struct series {
	double *x; /* job index */
	double *y; /* the run's median, display units */
	size_t *rec;
	size_t n;
};

static void series_release(struct series *s)
{
	free(s->x);
	free(s->y);
	free(s->rec);
	memset(s, 0, sizeof(*s));
}

/* Point i's runs of m in job order (jobs the analysis did not use and
 * runs without the metric left out). */
static void series_get(struct series *s, const struct pg_trends_gpu *t, size_t i,
		       const struct pg_metric *m)
{
	const struct pg_history *h = &t->hs[i];
	size_t n = 0;

	s->x = pg_xmalloc((h->n ? h->n : 1) * sizeof(double));
	s->y = pg_xmalloc((h->n ? h->n : 1) * sizeof(double));
	s->rec = pg_xmalloc((h->n ? h->n : 1) * sizeof(size_t));
	for (size_t k = 0; k < h->n; k++) {
		long j = t->a->rec_job[i][k];
		double v;
		size_t p;
		if (j < 0 || h->recs[k].suite != m->suite)
			continue;
		v = pg_history_rec_value(&h->recs[k], m);
		if (!isfinite(v))
			continue;
		/* files are appended in time order: an insertion from the end */
		for (p = n; p > 0 && s->x[p - 1] > (double)j; p--) {
			s->x[p] = s->x[p - 1];
			s->y[p] = s->y[p - 1];
			s->rec[p] = s->rec[p - 1];
		}
		s->x[p] = (double)j;
		s->y[p] = v;
		s->rec[p] = k;
		n++;
	}
	s->n = n;
}

/* What the gate would judge a run of point i, metric m by. */
struct view {
	struct pg_rule rule;
	const struct pg_base_point *bp;
	const struct pg_base_metric *bm;
	const struct pg_cmp_row *row; /* the PR's, or NULL */
	double base;                  /* the baseline value; NAN */
	double tol;                   /* effective tolerance */
	double limit;                 /* the value beyond which it fails (or warns); NAN */
	long w0, w1;                  /* the window's first and last job; -1: none */
};

static int cmp_row_key(const void *a, const void *b)
{
	const struct pg_cmp_row *x = *(const struct pg_cmp_row *const *)a;
	const struct pg_cmp_row *y = *(const struct pg_cmp_row *const *)b;
	int c = strcmp(x->point, y->point);

	if (c)
		return c;
	if (x->metric != y->metric)
		return x->metric < y->metric ? -1 : 1;
	return 0;
}

/* The PR's row of point, metric m (a binary search of the rows by point
 * and metric, pg_trends_gpu_prepare's). */
static const struct pg_cmp_row *find_row(const struct pg_trends_gpu *t, const char *point,
					 const struct pg_metric *m)
{
	size_t lo = 0, hi = t->n_rows;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct pg_cmp_row *r = t->rows[mid];
		int d = strcmp(r->point, point);
		if (!d && r->metric != m)
			d = !r->metric ? -1 : r->metric < m ? -1 : 1;
		if (!d)
			return r;
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void view_get(struct view *v, const struct pg_trends_gpu *t, size_t i,
		     const struct pg_metric *m)
{
	const struct pg_history *h = &t->hs[i];

	memset(v, 0, sizeof(*v));
	pg_policy_rule(t->policy, h->point, point_test(h), m, &v->rule);
	v->base = v->limit = NAN;
	v->w0 = v->w1 = -1;
	v->tol = v->rule.tolerance;
	v->bp = pg_baseline_find(t->base, h->point);
	v->bm = v->bp ? pg_base_point_metric(v->bp, m) : NULL;
	v->row = find_row(t, h->point, m);
	if (v->row && isfinite(v->row->tolerance))
		v->tol = v->row->tolerance;
	if (v->bm) {
		v->base = v->bm->value;
		for (size_t k = 0; v->bm->jobs && k < v->bm->n_samples; k++) {
			if (v->w0 < 0 || v->bm->jobs[k] < v->w0)
				v->w0 = v->bm->jobs[k];
			if (v->bm->jobs[k] > v->w1)
				v->w1 = v->bm->jobs[k];
		}
	}
	/* the gate's rule in log units (gate/compare_step.c): worse by more
	 * than log1p(tolerance) */
	if (isfinite(v->base) && v->base > 0)
		v->limit = m->direction == PG_HIGHER_IS_BETTER ? v->base / (1 + v->tol)
							       : v->base * (1 + v->tol);
}

static bool beyond(const struct pg_metric *m, double value, double limit)
{
	if (!isfinite(value) || !isfinite(limit))
		return false;
	return m->direction == PG_HIGHER_IS_BETTER ? value < limit : value > limit;
}

static bool can_fail(const struct pg_rule *r)
{
	return r->gate || r->escalate > 0;
}

/* Metrics of a point worth a chart: with a direction, in its suite. */
static bool charted(const struct pg_metric *m, enum pg_suite_kind suite)
{
	return m->suite == suite && m->direction != PG_NO_DIRECTION;
}

/* ------------------------------------------------------------------ */
/* Plots                                                               */

struct frame {
	double x0, x1, y0, y1;     /* data */
	double px0, px1, py0, py1; /* pixels: left, right, bottom, top */
	double step;               /* y tick step */
};

static double fx(const struct frame *f, double x)
{
	return f->px0 + (x - f->x0) / (f->x1 - f->x0) * (f->px1 - f->px0);
}

static double fy(const struct frame *f, double y)
{
	double py, top = fmin(f->py0, f->py1), bottom = fmax(f->py0, f->py1);

	if (!(f->y1 > f->y0) || !isfinite(y))
		return (f->py0 + f->py1) / 2;
	py = f->py0 - (y - f->y0) / (f->y1 - f->y0) * (f->py0 - f->py1);
	/* a value far off the frame is drawn just beyond its edge */
	return isnan(py) ? (top + bottom) / 2 : fmin(fmax(py, top - 20), bottom + 20);
}

static void range_add(double *lo, double *hi, double v)
{
	if (!isfinite(v))
		return;
	*lo = v < *lo ? v : *lo;
	*hi = v > *hi ? v : *hi;
}

/* y range over the values shown, widened to nice ticks. */
static void frame_y(struct frame *f, double lo, double hi, int ticks)
{
	double pad, mag;

	/* values a chart cannot place (none, or beyond what a double can pad)
	 * get a unit frame, and such a value lands off the chart */
	if (!isfinite(lo) || !isfinite(hi) || fabs(lo) > 1e300 || fabs(hi) > 1e300) {
		lo = 0;
		hi = 1;
	}
	/* a span of a few ulps is a constant series: padded by its magnitude,
	 * or the ticks' step rounds to nothing next to the values */
	mag = fmax(fabs(lo), fabs(hi));
	if (hi - lo <= 1e-9 * mag || hi <= lo) {
		pad = mag > 0 ? mag * 0.05 : 1;
		lo -= pad;
		hi += pad;
	}
	pad = (hi - lo) * 0.08;
	lo -= pad;
	hi += pad;
	pg_nice_axis(hi - lo, ticks, &f->step);
	f->y0 = floor(lo / f->step) * f->step;
	f->y1 = ceil(hi / f->step) * f->step;
	if (f->y1 <= f->y0)
		f->y1 = f->y0 + f->step;
}

static void svg_text(struct pg_buf *o, double x, double y, const char *anchor, const char *attrs,
		     const char *s)
{
	/* a coordinate NAN is left out: its group's */
	pg_buf_puts(o, "<text");
	if (!isnan(x)) {
		pg_buf_puts(o, " x=\"");
		put_num(o, x);
		pg_buf_putc(o, '"');
	}
	if (!isnan(y)) {
		pg_buf_puts(o, " y=\"");
		put_num(o, y);
		pg_buf_putc(o, '"');
	}
	if (anchor) { /* NULL: start, SVG's default */
		pg_buf_puts(o, " text-anchor=\"");
		pg_buf_puts(o, anchor);
		pg_buf_putc(o, '"');
	}
	if (attrs) {
		pg_buf_putc(o, ' ');
		pg_buf_puts(o, attrs);
	}
	pg_buf_putc(o, '>');
	esc_html(o, s);
	pg_buf_puts(o, "</text>\n");
}

static void pct(char *out, size_t size, double rel)
{
	char p[PG_FMT_DOUBLE_SIZE];
	snprintf(out, size, "%s", pg_fmt_pct(p, rel));
}

/* The job before j at which point i was recorded (PG_HISTORY_ALL: any). */
static long job_before(const struct pg_trends_gpu *t, size_t i, size_t j)
{
	long best = -1;

	if (i == PG_HISTORY_ALL)
		return (long)j - 1;
	for (size_t k = 0; k < t->hs[i].n; k++)
		if (t->a->rec_job[i][k] < (long)j && t->a->rec_job[i][k] > best)
			best = t->a->rec_job[i][k];
	return best;
}

static void change_text(struct pg_buf *o, const struct pg_trends_gpu *t,
			const struct pg_history_change *c)
{
	long before = job_before(t, c->point, c->job);
	const struct pg_history_job *to = &t->a->jobs[c->job];

	if (c->creep)
		pg_buf_printf(o, "creep %.2g%% %s per run, %.1f%% since it began",
			      fabs(c->per_job) * 100, c->per_job > 0 ? "worse" : "better",
			      fabs(c->shift) * 100);
	else
		pg_buf_printf(o, "step %.1f%% %s", fabs(c->shift) * 100,
			      c->shift > 0 ? "worse" : "better");
	if (c->point == PG_HISTORY_ALL)
		pg_buf_puts(o, " at every point");
	if (before >= 0 && t->a->jobs[before].commit)
		pg_buf_printf(o, ", between %.12s and %.12s", t->a->jobs[before].commit,
			      to->commit ? to->commit : "?");
	else
		pg_buf_printf(o, ", at %.12s", to->commit ? to->commit : "?");
	if (to->date)
		pg_buf_printf(o, " (%.10s)", to->date);
}

/* A run's colour from its row's tone: the annotation's (red fails, amber
 * warns, green improved), from gate/attention.c, so the two never differ. */
static const char *tone_color(enum pg_tone tone)
{
	switch (tone) {
	case PG_TONE_BAD:
		return COLOR_WORSE;
	case PG_TONE_WARN:
		return COLOR_CHANGE;
	case PG_TONE_GOOD:
		return COLOR_BETTER;
	case PG_TONE_NONE:
		break;
	}
	return "#111827";
}

/* The same as a class of the pages' style, or "". */
static const char *tone_class(enum pg_tone tone)
{
	return tone == PG_TONE_BAD    ? " bad"
	       : tone == PG_TONE_WARN ? " warn"
	       : tone == PG_TONE_GOOD ? " good"
				      : "";
}

/* A diamond at (x, y): the PR's value. */
static void diamond(struct pg_buf *o, double x, double y, double r, const char *fill)
{
	pg_buf_printf(o,
		      "<path data-series=\"pr\" d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f %.1fZ\" "
		      "fill=\"%s\" stroke=\"#fff\" stroke-width=\"1\">",
		      x, y - r, x + r, y, x, y + r, x - r, y, fill);
}

/* A run's value, its interval and its name. */
struct pr_value {
	double v, change;
	bool interval;
	double lo, hi;
	const char *name;
	bool square; /* a re-run's: a square, its name under it */
};

/* A run's value at x: a diamond (a re-run's a square) with its interval
 * as a whisker and its name above it (below when at the top, or a
 * re-run's, which sits next to the first run's label). */
static void pr_mark(struct pg_buf *o, const struct frame *f, double x, enum pg_verdict verdict,
		    enum pg_tone tone, const struct pr_value *p)
{
	char a[PG_FMT_DOUBLE_SIZE];
	double y = fy(f, p->v), top = y, bottom = y;
	const char *col = tone_color(tone);
	bool whisker = p->interval && isfinite(p->lo) && isfinite(p->hi);

	if (whisker) {
		double y0 = fy(f, p->lo), y1 = fy(f, p->hi);
		pg_buf_printf(o,
			      "<path d=\"M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f\" "
			      "stroke=\"%s\" stroke-width=\"1.5\" fill=\"none\"/>\n",
			      x, y0, y1, x - 5, y0, x + 5, x - 5, y1, x + 5, col);
	}
	if (p->square)
		pg_buf_printf(o,
			      "<rect data-series=\"rerun\" x=\"%.1f\" y=\"%.1f\" width=\"11\" "
			      "height=\"11\" fill=\"%s\" stroke=\"#fff\" stroke-width=\"1\">",
			      x - 5.5, y - 5.5, col);
	else
		diamond(o, x, y, 7, col);
	pg_buf_puts(o, "<title>");
	esc_html(o, p->name);
	pg_buf_printf(o, ": %s", pg_fmt_g(a, p->v));
	if (isfinite(p->change))
		pg_buf_printf(o, " (%s)", pg_fmt_pct(a, p->change));
	pg_buf_printf(o, ", %s</title>%s\n", pg_verdict_name(verdict),
		      p->square ? "</rect>" : "</path>");
	/* its name above it (below when at the top): the value is in the
	 * heading, and a label beside it would cover the runs */
	/* beyond the whisker's ends, when there is one */
	if (whisker) {
		top = fmin(fmin(fy(f, p->lo), fy(f, p->hi)), y - 7) + 4;
		bottom = fmax(fmax(fy(f, p->lo), fy(f, p->hi)), y + 7) - 7;
	}
	pg_buf_printf(o,
		      "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"%s\" "
		      "font-weight=\"bold\" class=\"legend\" data-series=\"%s\">",
		      x, p->square || top - f->py1 < 24 ? bottom + 20 : top - 11, col,
		      p->square ? "rerun" : "pr");
	esc_html(o, p->name);
	pg_buf_puts(o, "</text>\n");
}

/*
 * pg_buf_printf for the chart's elements without printf's cost (a site
 * draws 80,000 charts): fmt's only conversions are "%.1f" (a double, as
 * pg_buf_fixed1 writes it) and "%s".
 */
static void svg_put(struct pg_buf *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	for (const char *p = fmt; *p;) {
		const char *q = strchr(p, '%');
		pg_buf_add(o, p, q ? (size_t)(q - p) : strlen(p));
		if (!q)
			break;
		if (!strncmp(q, "%.1f", 4)) {
			pg_buf_fixed1(o, va_arg(ap, double));
			p = q + 4;
		} else { /* "%s" */
			pg_buf_puts(o, va_arg(ap, const char *));
			p = q + 2;
		}
	}
	va_end(ap);
}

/* lround(v) (half away from zero) without the call: |v| < 1e15 here, so
 * the truncation and v less it are exact. */
static long round_away(double v)
{
	long t;
	double d;

	if (!(fabs(v) < 1e15))
		return lround(v);
	t = (long)v;
	d = v - (double)t;
	return d >= 0.5 ? t + 1 : d <= -0.5 ? t - 1 : t;
}

/* pg_fmt_long(p, v), a path's usual step (one digit) inline. */
static size_t put_step(char *p, long v)
{
	if (v >= 0 && v < 10) {
		p[0] = (char)('0' + v);
		return 1;
	}
	if (v < 0 && v > -10) {
		p[0] = '-';
		p[1] = (char)('0' - v);
		return 2;
	}
	return pg_fmt_long(p, v);
}

/*
 * The runs as one path: x in runs from the first (a transform scales them
 * to pixels, the stroke unscaled), y in whole pixels, each point relative
 * to the one before ("l1-6"): under half the bytes of a polyline of pixel
 * pairs to a tenth, and as exact to the eye at a run every few pixels.
 * The points written in place, fy's arithmetic inline (the same
 * operations in the same order: the same pixels).
 */
static void runs_path(struct pg_buf *o, const struct frame *f, const double *x, const double *y,
		      size_t n)
{
	double sx = (f->px1 - f->px0) / (f->x1 - f->x0);
	long px = 0, py = round_away(fy(f, y[0]));
	char g[PG_FMT_DOUBLE_SIZE];
	bool placed = f->y1 > f->y0;
	double dy = f->y1 - f->y0, dpy = f->py0 - f->py1;
	double top = fmin(f->py0, f->py1), bottom = fmax(f->py0, f->py1);
	double above = top - 20, below = bottom + 20;

	pg_buf_puts(o, "<path data-series=\"runs\" fill=\"none\" stroke=\"" COLOR_RUN
		       "\" stroke-width=\"1.5\" vector-effect=\"non-scaling-stroke\" "
		       "transform=\"matrix(");
	pg_buf_puts(o, pg_fmt_g(g, sx)); /* "%.6g" */
	pg_buf_puts(o, " 0 0 1 ");
	put_num(o, fx(f, x[0]));
	pg_buf_puts(o, " 0)\" d=\"M0 ");
	pg_buf_long(o, py);
	pg_buf_putc(o, 'l');
	for (size_t k = 1; k < n; k++) {
		/* a point: two numbers of at most 20 bytes, two separators */
		char *p = pg_buf_space(o, 42), *p0 = p;
		double v = y[k], fv;
		long kx = round_away(x[k] - x[0]), ky;
		if (placed && isfinite(v)) {
			fv = f->py0 - (v - f->y0) / dy * dpy;
			fv = isnan(fv)    ? (top + bottom) / 2
			     : fv < above ? above
			     : fv > below ? below
					  : fv;
		} else {
			fv = (f->py0 + f->py1) / 2;
		}
		ky = round_away(fv);
		if (k > 1)
			*p++ = ' ';
		p += put_step(p, kx - px);
		if (ky - py >= 0)
			*p++ = ' ';
		p += put_step(p, ky - py);
		pg_buf_wrote(o, (size_t)(p - p0));
		px = kx;
		py = ky;
	}
	if (n == 1)
		pg_buf_puts(o, "0 0");
	pg_buf_puts(o, "\"/>\n");
}

/* A point page's chart, in pixels (W, H) */
#define CHART_W 760
#define CHART_H 250
#define STR_(x) #x
#define STR(x)  STR_(x)

void pg_trends_chart(struct pg_buf *o, const struct pg_trends_chart *c)
{
	const double W = CHART_W, H = CHART_H;
	const struct pg_metric *m = c->m;
	struct frame f = { 0 };
	double lo = INFINITY, hi = -INFINITY, pr = c->pr;
	char a[PG_FMT_DOUBLE_SIZE], label[160];
	bool has_pr = isfinite(pr), has_rerun = has_pr && c->rerun_name && isfinite(c->rerun);

	f.px0 = 70;
	f.px1 = W - 150;
	f.py0 = H - 44;
	f.py1 = 30;
	f.x0 = c->n ? c->x[0] : 0;
	f.x1 = c->n ? c->x[c->n - 1] : 1;
	if (c->w0 >= 0 && c->w0 < f.x0)
		f.x0 = (double)c->w0;
	if (has_pr)
		f.x1 += has_rerun ? 2 : 1;
	f.x0 -= 0.5;
	f.x1 += 0.5;
	for (size_t k = 0; k < c->n; k++)
		range_add(&lo, &hi, c->y[k]);
	range_add(&lo, &hi, c->base);
	range_add(&lo, &hi, c->limit);
	range_add(&lo, &hi, pr);
	if (has_pr && c->pr_interval) {
		range_add(&lo, &hi, c->pr_lo);
		range_add(&lo, &hi, c->pr_hi);
	}
	if (has_rerun) {
		range_add(&lo, &hi, c->rerun);
		if (c->rerun_interval) {
			range_add(&lo, &hi, c->rerun_lo);
			range_add(&lo, &hi, c->rerun_hi);
		}
	}
	frame_y(&f, lo, hi, 5);

	/* W and H as "%.0f" writes them, and the rest, without printf */
	pg_buf_puts(o, c->scripted ? "<svg" : "<svg xmlns=\"http://www.w3.org/2000/svg\"");
	pg_buf_puts(o, " width=\"" STR(CHART_W) "\" height=\"" STR(CHART_H) "\" viewBox=\"0 0 " STR(
			       CHART_W) " " STR(CHART_H) "\"");
	pg_buf_puts(o, c->scripted ? " font-size=\"11\" role=\"img\" aria-label=\""
				   : " font-family=\"" FONT
				     "\" font-size=\"11\" role=\"img\" aria-label=\"");
	esc_html(o, m->label);
	pg_buf_puts(o, " over main's runs\"");
	if (c->scripted) {
		/* the frame, for the page's script to find the run under the
		 * pointer and mark it */
		const double px[] = { f.px0, f.px1, f.x0, f.x1, f.py0, f.py1 };
		pg_buf_puts(o, " data-m=\"");
		pg_buf_long(o, (long)c->column);
		pg_buf_puts(o, "\" data-f=\"");
		for (size_t k = 0; k < 6; k++) { /* pixels, and runs at halves */
			put_num(o, px[k]);
			pg_buf_putc(o, ' ');
		}
		pg_buf_puts(o, pg_fmt_g17(a, f.y0));
		pg_buf_putc(o, ' ');
		pg_buf_puts(o, pg_fmt_g17(a, f.y1));
		pg_buf_putc(o, '"');
	}
	pg_buf_puts(o, ">\n");
	if (!c->scripted) /* a file of its own: the page is white */
		pg_buf_printf(
			o, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#fff\"/>\n",
			W, H);
	/* the baseline window and the tolerance band, under everything */
	if (c->w0 >= 0) {
		double x0 = fx(&f, (double)c->w0 - 0.5), x1 = fx(&f, (double)c->w1 + 0.5);
		svg_put(o,
			"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			"fill=\"" COLOR_WINDOW "\"/>\n",
			x0, f.py1, x1 - x0, f.py0 - f.py1);
		snprintf(label, sizeof(label), "baseline window: %zu run%s", c->window_runs,
			 c->window_runs == 1 ? "" : "s");
		svg_text(o, x0 + 4, f.py1 + 12, NULL, "fill=\"#1e40af\"", label);
	}
	if (isfinite(c->limit) && c->w0 >= 0) {
		double x0 = fx(&f, (double)c->w0 - 0.5), yb = fy(&f, c->base),
		       yl = fy(&f, c->limit);
		svg_put(o,
			"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			"fill=\"%s\" fill-opacity=\"0.75\"/>\n",
			x0, yb < yl ? yb : yl, f.px1 - x0, fabs(yl - yb),
			c->gate ? COLOR_BAND : COLOR_WARN);
	}
	/* grid and y ticks: the grid as one path, the labels' colour and
	 * anchor once, on their group */
	pg_buf_puts(o, "<path stroke=\"" COLOR_GRID "\" d=\"");
	for (size_t k_ = 0, n_ = pg_axis_ticks(f.y0, f.y1, f.step); k_ < n_; k_++) {
		put_xy(o, "M", f.px0, fy(&f, f.y0 + (double)k_ * f.step));
		pg_buf_puts(o, "H");
		put_num(o, f.px1);
	}
	pg_buf_puts(o,
		    "\"/>\n<g text-anchor=\"end\" fill=\"" COLOR_AXIS "\" transform=\"translate(");
	put_num(o, f.px0 - 6);
	pg_buf_puts(o, " 4)\">\n");
	for (size_t k_ = 0, n_ = pg_axis_ticks(f.y0, f.y1, f.step); k_ < n_; k_++) {
		double y = f.y0 + (double)k_ * f.step;
		char tl[32];
		pg_tick_label(tl, sizeof(tl), y, f.step);
		svg_text(o, NAN, fy(&f, y), NULL, "class=\"tick-y\"", tl);
	}
	pg_buf_puts(o, "</g>\n");
	snprintf(label, sizeof(label), "%s%s", m->unit[0] ? m->unit : "value",
		 m->direction == PG_HIGHER_IS_BETTER ? " (higher is better)"
						     : " (lower is better)");
	svg_text(o, f.px0 - 60, f.py1 - 12, NULL, "class=\"unit\" fill=\"" COLOR_AXIS "\"", label);
	svg_put(o,
		"<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
		"stroke=\"" COLOR_AXIS "\"/>\n",
		f.px0, f.px1, f.py0, f.py0);
	/* x ticks: run numbers over the GPU's jobs, and their dates */
	{
		double span = f.x1 - f.x0;
		long every = (long)ceil(span / 7);
		if (every < 1)
			every = 1;
		pg_buf_puts(o, "<g text-anchor=\"middle\" fill=\"" COLOR_AXIS
			       "\" transform=\"translate(0 ");
		put_num(o, f.py0 + 14);
		pg_buf_puts(o, ")\">\n");
		for (long j = (long)ceil(f.x0); j <= (long)floor(f.x1); j++) {
			if ((size_t)j >= c->n_jobs || j % every)
				continue;
			label[0] = '#';
			label[1 + pg_fmt_long(label + 1, j + 1)] = 0;
			svg_text(o, fx(&f, (double)j), NAN, NULL, "class=\"tick-x\"", label);
		}
		pg_buf_puts(o, "</g>\n<g text-anchor=\"middle\" fill=\"" COLOR_MUTED
			       "\" font-size=\"10\" transform=\"translate(0 ");
		put_num(o, f.py0 + 27);
		pg_buf_puts(o, ")\">\n");
		for (long j = (long)ceil(f.x0); j <= (long)floor(f.x1); j++) {
			const char *date;
			if ((size_t)j >= c->n_jobs || j % every)
				continue;
			date = c->job_date ? c->job_date(c->ctx, (size_t)j) : NULL;
			if (date) {
				size_t n = strnlen(date, 10);
				memcpy(label, date, n);
				label[n] = 0;
				svg_text(o, fx(&f, (double)j), NAN, NULL, NULL, label);
			}
		}
		pg_buf_puts(o, "</g>\n");
		/* the x axis's title names the runs: their legend */
		svg_text(o, (f.px0 + f.px1) / 2, H - 4, "middle",
			 "class=\"legend\" data-series=\"runs\" fill=\"" COLOR_MUTED "\"",
			 c->x_caption);
	}
	/* baseline and limit lines, labelled at the right */
	if (isfinite(c->base) && c->w0 >= 0) {
		double x0 = fx(&f, (double)c->w0 - 0.5);
		svg_put(o,
			"<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
			"stroke=\"" COLOR_AXIS "\" stroke-dasharray=\"5 3\"/>\n",
			x0, f.px1, fy(&f, c->base), fy(&f, c->base));
		snprintf(label, sizeof(label), "baseline %s", pg_fmt_g(a, c->base));
		svg_text(o, f.px1 + 6, fy(&f, c->base) + 4, NULL, "fill=\"" COLOR_AXIS "\"", label);
	}
	if (isfinite(c->limit) && c->w0 >= 0) {
		double x0 = fx(&f, (double)c->w0 - 0.5);
		double dy = fabs(fy(&f, c->limit) - fy(&f, c->base)) < 13
				    ? (c->limit > c->base ? -9 : 9)
				    : 0;
		svg_put(o,
			"<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
			"stroke=\"%s\" stroke-dasharray=\"2 2\"/>\n",
			x0, f.px1, fy(&f, c->limit), fy(&f, c->limit),
			c->gate ? COLOR_WORSE : COLOR_CHANGE);
		snprintf(label, sizeof(label), "%s beyond %s%.3g%%", c->gate ? "fails" : "warns",
			 m->direction == PG_HIGHER_IS_BETTER ? "−" : "+", c->tol * 100);
		svg_put(o, "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\">", f.px1 + 6,
			fy(&f, c->limit) + 4 + dy, c->gate ? COLOR_WORSE : COLOR_CHANGE);
		esc_html(o, label);
		pg_buf_puts(o, "</text>\n");
	}
	/* change points */
	for (size_t k = 0; k < c->n_marks; k++) {
		const struct pg_trends_mark *ch = &c->marks[k];
		double x = fx(&f, (double)ch->job - 0.5);
		if (x < f.px0 || x > f.px1)
			continue;
		svg_put(o,
			"<g><line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
			"stroke=\"" COLOR_CHANGE "\" stroke-width=\"2\"%s/>",
			x, x, f.py0, f.py1, ch->creep ? " stroke-dasharray=\"3 3\"" : "");
		snprintf(label, sizeof(label), "%s %s%.1f%%", ch->creep ? "creep" : "step",
			 (ch->shift > 0) == (m->direction == PG_HIGHER_IS_BETTER) ? "−" : "+",
			 fabs(ch->shift) * 100);
		svg_put(o, "<text x=\"%.1f\" y=\"%.1f\" fill=\"" COLOR_CHANGE "\">", x + 3,
			f.py0 - 6);
		esc_html(o, label);
		pg_buf_puts(o, "</text><title>");
		esc_html(o, ch->tip);
		pg_buf_puts(o, "</title></g>\n");
	}
	/* the runs: a line through all, a marker with its commit on the last
	 * (or the page's script's tooltips) */
	if (c->n)
		runs_path(o, &f, c->x, c->y, c->n);
	for (size_t k = c->scripted ? c->n : c->tips_from; k < c->n; k++) {
		const char *commit = c->commit ? c->commit[k] : NULL;
		const char *date = c->date ? c->date[k] : NULL;
		pg_buf_puts(o, "<circle cx=\"");
		pg_buf_fixed1(o, fx(&f, c->x[k]));
		pg_buf_puts(o, "\" cy=\"");
		pg_buf_fixed1(o, fy(&f, c->y[k]));
		pg_buf_printf(o, "\" r=\"2.5\" fill=\"" COLOR_RUN "\"><title>run #%ld: %s",
			      (long)c->x[k] + 1, pg_fmt_g(a, c->y[k]));
		if (commit) {
			pg_buf_puts(o, " · ");
			esc_prefix(o, commit, 12);
		}
		if (date) {
			pg_buf_puts(o, " · ");
			esc_prefix(o, date, 10);
		}
		pg_buf_puts(o, "</title></circle>\n");
	}
	/* the PR, and its re-run after it */
	if (has_pr)
		pr_mark(o, &f, fx(&f, f.x1 - (has_rerun ? 1.5 : 0.5)), c->pr_verdict, c->pr_tone,
			&(struct pr_value){ pr, c->pr_change, c->pr_interval, c->pr_lo, c->pr_hi,
					    c->pr_name, false });
	if (has_rerun)
		pr_mark(o, &f, fx(&f, f.x1 - 0.5), c->pr_verdict, c->pr_tone,
			&(struct pr_value){ c->rerun, c->rerun_change, c->rerun_interval,
					    c->rerun_lo, c->rerun_hi, c->rerun_name, true });
	if (!c->n)
		svg_text(o, (f.px0 + f.px1) / 2, (f.py0 + f.py1) / 2, "middle",
			 "fill=\"" COLOR_MUTED "\"", "no recorded runs");
	pg_buf_puts(o, "</svg>\n");
}

static const char *history_job_date(const void *ctx, size_t j)
{
	const struct pg_trends_gpu *t = ctx;
	return t->a->jobs[j].date;
}

/* The chart of point i, metric m on its page: the history's runs, its
 * change points and the gate's view of them, drawn by pg_trends_chart. */
static void chart(struct pg_buf *o, const struct pg_trends_gpu *t, size_t i,
		  const struct pg_metric *m, size_t column, const struct series *s,
		  const struct view *v)
{
	struct pg_trends_chart c = { 0 };
	struct pg_trends_mark *marks = pg_xcalloc(t->a->n_changes + 1, sizeof(*marks));
	struct pg_strv tips = PG_STRV_INIT;
	struct pg_buf tip = PG_BUF_INIT;

	c.m = m;
	c.x = s->x;
	c.y = s->y;
	c.n = s->n;
	/* every run's tooltip from the page's script */
	c.scripted = true;
	c.column = column;
	c.job_date = history_job_date;
	c.ctx = t;
	c.n_jobs = t->a->n_jobs;
	c.x_caption = "recorded runs of main on this GPU, oldest to newest";
	c.gate = v->rule.gate;
	c.base = v->base;
	c.limit = v->limit;
	c.tol = v->tol;
	c.w0 = v->w0;
	c.w1 = v->w1;
	c.window_runs = v->bm ? v->bm->n_samples : 0;
	for (size_t k = 0; k < t->a->n_changes; k++) {
		const struct pg_history_change *ch = &t->a->changes[k];
		if (ch->metric != m || (ch->point != i && ch->point != PG_HISTORY_ALL))
			continue;
		pg_buf_reset(&tip);
		change_text(&tip, t, ch);
		pg_strv_push(&tips, tip.ptr);
		marks[c.n_marks++] = (struct pg_trends_mark){ .job = ch->job,
							      .shift = ch->shift,
							      .creep = ch->creep };
	}
	for (size_t k = 0; k < c.n_marks; k++)
		marks[k].tip = tips.v[k];
	c.marks = marks;
	c.pr = v->row ? v->row->current : NAN;
	if (v->row) {
		c.pr_change = v->row->change;
		c.pr_verdict = v->row->verdict;
		c.pr_tone = pg_attention_tone(v->row);
	}
	c.pr_name = t->current_name;
	pg_trends_chart(o, &c);
	pg_buf_release(&tip);
	pg_strv_release(&tips);
	free(marks);
}

/* A sparkline of the last SPARK_RUNS runs, the window and band, the PR. */
static void sparkline(struct pg_buf *o, const struct pg_trends_gpu *t, size_t i,
		      const struct pg_metric *m, const struct series *s, const struct view *v)
{
	const double W = 170, H = 34;
	size_t from = s->n > SPARK_RUNS ? s->n - SPARK_RUNS : 0;
	struct frame f = { 0 };
	double lo = INFINITY, hi = -INFINITY, pr = v->row ? v->row->current : NAN;
	bool has_pr = isfinite(pr);

	if (!s->n)
		return;
	f.px0 = 2;
	f.px1 = W - 8;
	f.py0 = H - 3;
	f.py1 = 3;
	f.x0 = s->x[from] - 0.5;
	f.x1 = s->x[s->n - 1] + (has_pr ? 1.5 : 0.5);
	for (size_t k = from; k < s->n; k++)
		range_add(&lo, &hi, s->y[k]);
	range_add(&lo, &hi, v->limit);
	range_add(&lo, &hi, pr);
	frame_y(&f, lo, hi, 2);
	pg_buf_printf(
		o,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		"viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"trend\" class=\"spark\">",
		W, H, W, H);
	if (v->w0 >= 0) {
		double x0 = fx(&f, fmax((double)v->w0, s->x[from]) - 0.5),
		       x1 = fx(&f, (double)v->w1 + 0.5);
		if (x1 > x0)
			pg_buf_printf(o,
				      "<rect x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"%.0f\" "
				      "fill=\"" COLOR_WINDOW "\"/>",
				      x0, x1 - x0, H);
		if (isfinite(v->limit)) {
			double yb = fy(&f, v->base), yl = fy(&f, v->limit);
			pg_buf_printf(o,
				      "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				      "fill=\"%s\"/>",
				      x0, yb < yl ? yb : yl, f.px1 - x0, fmax(fabs(yl - yb), 1),
				      v->rule.gate ? COLOR_BAND : COLOR_WARN);
			pg_buf_printf(o,
				      "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
				      "stroke=\"%s\" stroke-dasharray=\"2 2\"/>",
				      x0, f.px1, yl, yl, v->rule.gate ? COLOR_WORSE : COLOR_CHANGE);
		}
	}
	for (size_t c = 0; c < t->a->n_changes; c++) {
		const struct pg_history_change *ch = &t->a->changes[c];
		double x;
		if (ch->metric != m || ch->creep || ch->point != i || (double)ch->job < s->x[from])
			continue;
		x = fx(&f, (double)ch->job - 0.5);
		pg_buf_printf(o,
			      "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"0\" y2=\"%.0f\" "
			      "stroke=\"" COLOR_CHANGE "\" stroke-width=\"1.5\"/>",
			      x, x, H);
	}
	pg_buf_puts(o, "<polyline fill=\"none\" stroke=\"" COLOR_RUN
		       "\" stroke-width=\"1.2\" points=\"");
	for (size_t k = from; k < s->n; k++)
		put_xy(o, k > from ? " " : "", fx(&f, s->x[k]), fy(&f, s->y[k]));
	pg_buf_puts(o, "\"/>");
	if (has_pr) {
		diamond(o, fx(&f, f.x1 - 0.5), fy(&f, pr), 4.5,
			tone_color(pg_attention_tone(v->row)));
		pg_buf_puts(o, "</path>");
	} else {
		pg_buf_printf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2\" fill=\"" COLOR_RUN "\"/>",
			      fx(&f, s->x[s->n - 1]), fy(&f, s->y[s->n - 1]));
	}
	pg_buf_puts(o, "</svg>");
}

/* ------------------------------------------------------------------ */
/* The order of interest                                               */

/* 3: the PR regressed it; 2: its last run is beyond the tolerance of a
 * gated metric; 1: a change point within its window; 0: nothing. */
static int interest(const struct pg_trends_gpu *t, size_t i)
{
	size_t nm;
	const struct pg_metric *all = pg_metrics_all(&nm);
	enum pg_suite_kind suite = point_suite(&t->hs[i]);
	int score = 0;
	long recent = (long)t->a->n_jobs - (t->policy->history_window > 0
						    ? (long)t->policy->history_window
						    : PG_DEFAULT_HISTORY_WINDOW);

	for (size_t m = 0; m < nm; m++) {
		struct view v;
		if (!charted(&all[m], suite))
			continue;
		view_get(&v, t, i, &all[m]);
		if (v.row &&
		    (v.row->outcome == PG_OUTCOME_FAIL || v.row->verdict == PG_VERDICT_REGRESSED))
			return 3;
		if (v.rule.gate && isfinite(v.limit) && score < 2) {
			const struct pg_history *h = &t->hs[i];
			for (size_t k = h->n; k-- > 0;) {
				double x;
				if (t->a->rec_job[i][k] < 0)
					continue;
				x = pg_history_rec_value(&h->recs[k], &all[m]);
				if (isfinite(x)) {
					if (beyond(&all[m], x, v.limit))
						score = 2;
					break;
				}
			}
		}
	}
	for (size_t c = 0; score < 1 && c < t->a->n_changes; c++)
		if (t->a->changes[c].point == i && (long)t->a->changes[c].job >= recent)
			score = 1;
	return score;
}

struct scored {
	size_t i;
	int score;
};

static int cmp_scored(const void *a, const void *b)
{
	const struct scored *x = a, *y = b;
	if (x->score != y->score)
		return y->score - x->score;
	return (x->i > y->i) - (x->i < y->i);
}

char *pg_trends_gpu_dir(const char *gpu)
{
	char *dir = pg_chart_stem(gpu);
	bool lower = false;

	for (const char *p = dir; *p && !lower; p++)
		lower = *p >= 'a' && *p <= 'z';
	if (lower || strcmp(dir, gpu) || !strcasecmp(dir, "index.html")) {
		struct pg_buf b = PG_BUF_INIT;
		pg_buf_printf(&b, "%s-%08llx", dir,
			      (unsigned long long)(pg_str_hash(gpu) & 0xffffffffu));
		free(dir);
		dir = pg_buf_detach(&b);
	}
	return dir;
}

void pg_trends_gpu_prepare(struct pg_trends_gpu *t)
{
	struct scored *sc = pg_xmalloc((t->n ? t->n : 1) * sizeof(*sc));

	if (!t->current_name)
		t->current_name = "this PR";
	/* the comparison's rows with a metric, by (point, metric): the gate's
	 * are in point order, but a merged run's need not be */
	t->rows = pg_xmalloc((t->cmp && t->cmp->n ? t->cmp->n : 1) * sizeof(*t->rows));
	t->n_rows = 0;
	for (size_t r = 0; t->cmp && r < t->cmp->n; r++)
		if (t->cmp->rows[r].metric)
			t->rows[t->n_rows++] = &t->cmp->rows[r];
	qsort(t->rows, t->n_rows, sizeof(*t->rows), cmp_row_key);
	t->files = pg_xcalloc(t->n ? t->n : 1, sizeof(char *));
	for (size_t i = 0; i < t->n; i++) {
		char *stem = pg_chart_stem(t->hs[i].point);
		struct pg_buf b = PG_BUF_INIT;
		pg_buf_printf(&b, "p/%s.html", stem);
		t->files[i] = pg_buf_detach(&b);
		free(stem);
	}
	/* names that differ only in bytes a file name cannot hold, or in case */
	{
		const char **names = pg_xmalloc((t->n ? t->n : 1) * sizeof(*names));
		for (size_t i = 0; i < t->n; i++)
			names[i] = t->hs[i].point;
		pg_file_names_unique(t->files, names, t->n, ".html");
		free(names);
	}
	t->n_flagged = 0;
	for (size_t i = 0; i < t->n; i++) {
		sc[i] = (struct scored){ i, interest(t, i) };
		t->n_flagged += sc[i].score > 0;
	}
	qsort(sc, t->n, sizeof(*sc), cmp_scored);
	t->order = pg_xmalloc((t->n ? t->n : 1) * sizeof(size_t));
	for (size_t i = 0; i < t->n; i++)
		t->order[i] = sc[i].i;
	free(sc);
}

void pg_trends_gpu_release(struct pg_trends_gpu *t)
{
	for (size_t i = 0; t->files && i < t->n; i++)
		free(t->files[i]);
	free(t->files);
	free(t->order);
	free(t->rows);
	t->files = NULL;
	t->order = NULL;
	t->rows = NULL;
	t->n_rows = 0;
}

/* ------------------------------------------------------------------ */
/* Pages                                                               */

static void legend(struct pg_buf *o, bool pr, const char *current_name)
{
	pg_buf_puts(o, "<p class=\"legend muted\">"
		       "<span><span class=\"sw\" style=\"background:" COLOR_RUN
		       ";height:3px\"></span>runs of main (each a job's median)</span>"
		       "<span><span class=\"sw\" style=\"background:" COLOR_WINDOW
		       "\"></span>the gate's baseline window</span>"
		       "<span><span class=\"sw\" style=\"background:" COLOR_BAND
		       "\"></span>tolerance: beyond it a gated metric fails</span>"
		       "<span><span class=\"sw\" style=\"background:" COLOR_WARN
		       "\"></span>tolerance of a warn-only metric</span>"
		       "<span><span class=\"sw\" style=\"background:" COLOR_CHANGE
		       ";width:3px\"></span>change point</span>");
	if (pr) {
		pg_buf_puts(o, "<span>◆ ");
		esc_html(o, current_name);
		pg_buf_puts(o, " (coloured as in the annotation: red fails, amber warns, green "
			       "improved)</span>");
	}
	pg_buf_puts(o, "</p>\n");
}

static void summary_line(struct pg_buf *o, const struct pg_trends_gpu *t)
{
	pg_buf_printf(o, "<p>%zu test point%s, %zu recorded run%s", t->n, t->n == 1 ? "" : "s",
		      t->a->n_jobs, t->a->n_jobs == 1 ? "" : "s");
	if (t->a->n_jobs && t->a->jobs[0].date && t->a->jobs[t->a->n_jobs - 1].date) {
		pg_buf_puts(o, " from ");
		esc_prefix(o, t->a->jobs[0].date, 10);
		pg_buf_puts(o, " to ");
		esc_prefix(o, t->a->jobs[t->a->n_jobs - 1].date, 10);
	}
	if (t->a->n_jobs && t->a->jobs[t->a->n_jobs - 1].commit) {
		pg_buf_puts(o, ", last at <code>");
		esc_html(o, t->a->jobs[t->a->n_jobs - 1].commit);
		pg_buf_puts(o, "</code>");
	}
	pg_buf_puts(o, ".");
	if (t->source) {
		pg_buf_puts(o, " <span class=\"muted\">From ");
		esc_html(o, t->source);
		pg_buf_puts(o, ".</span>");
	}
	pg_buf_puts(o, "</p>\n");
}

static void point_link(struct pg_buf *o, const struct pg_trends_gpu *t, size_t i)
{
	if (!t->files[i]) { /* not on the one page */
		esc_html(o, t->hs[i].point);
		return;
	}
	pg_buf_puts(o, "<a href=\"");
	esc_html(o, t->files[i]);
	pg_buf_puts(o, "\">");
	esc_html(o, t->hs[i].point);
	pg_buf_puts(o, "</a>");
}

/* "1234 (+5.1%)" of the last run (or the PR) against the baseline. The
 * PR's in its row's colour, the annotation's; main's last run beyond a
 * gated metric's tolerance in amber: a look, not a verdict (the gate
 * judges a run against its noise, which this cell does not know). */
static void value_cell(struct pg_buf *o, const struct pg_metric *m, const struct series *s,
		       const struct view *v)
{
	char a[PG_FMT_DOUBLE_SIZE], c[32];
	bool pr = v->row && isfinite(v->row->current);
	double x = pr ? v->row->current : s->n ? s->y[s->n - 1] : NAN;
	enum pg_tone tone = pr                                       ? pg_attention_tone(v->row)
			    : v->rule.gate && beyond(m, x, v->limit) ? PG_TONE_WARN
								     : PG_TONE_NONE;

	pg_buf_printf(o, "<td class=\"num%s\">", tone_class(tone));
	if (isfinite(x)) {
		pg_buf_puts(o, pg_fmt_g(a, x));
		if (isfinite(v->base) && v->base != 0) {
			pct(c, sizeof(c), x / v->base - 1);
			pg_buf_printf(o, "<br><span class=\"muted\">%s</span>", c);
		}
	}
	pg_buf_puts(o, "</td>");
}

static void changes_table(struct pg_buf *o, const struct pg_trends_gpu *t)
{
	size_t *idx = pg_xmalloc((t->a->n_changes ? t->a->n_changes : 1) * sizeof(size_t)), k = 0;
	struct pg_buf tx = PG_BUF_INIT;

	/* worse changes of metrics that can fail first, the latest first */
	for (int pass = 0; pass < 2; pass++)
		for (size_t c = t->a->n_changes; c-- > 0;) {
			const struct pg_history_change *ch = &t->a->changes[c];
			struct pg_rule r;
			bool first;
			pg_policy_rule(t->policy,
				       ch->point == PG_HISTORY_ALL ? NULL : t->hs[ch->point].point,
				       ch->point == PG_HISTORY_ALL ? NULL
								   : point_test(&t->hs[ch->point]),
				       ch->metric, &r);
			first = ch->shift > 0 && can_fail(&r);
			if (first == (pass == 0))
				idx[k++] = c;
		}
	pg_buf_printf(o, "<h2>Change points (%zu)</h2>\n", t->a->n_changes);
	if (!t->a->n_changes) {
		pg_buf_puts(o, "<p class=\"muted\">None: no step or slow creep of at least half a "
			       "metric's tolerance (p &lt; 0.001, 3 runs or more on each "
			       "side).</p>\n");
		goto done;
	}
	pg_buf_puts(o, "<table><tr><th>point</th><th>metric</th><th>change</th></tr>\n");
	for (size_t r = 0; r < k && r < PG_TRENDS_OVERVIEW_CHANGES; r++) {
		const struct pg_history_change *ch = &t->a->changes[idx[r]];
		pg_buf_puts(o, "<tr><td>");
		if (ch->point == PG_HISTORY_ALL)
			pg_buf_puts(o, "<em>every point</em>");
		else
			point_link(o, t, ch->point);
		pg_buf_puts(o, "</td><td>");
		metric_title(o, ch->metric);
		pg_buf_printf(o, "</td><td%s>", ch->shift > 0 ? " class=\"bad\"" : "");
		pg_buf_reset(&tx);
		change_text(&tx, t, ch);
		esc_html(o, tx.ptr);
		pg_buf_puts(o, "</td></tr>\n");
	}
	pg_buf_puts(o, "</table>\n");
	if (k > PG_TRENDS_OVERVIEW_CHANGES)
		pg_buf_printf(o, "<p class=\"muted\">%zu more: see each point's page.</p>\n",
			      k - PG_TRENDS_OVERVIEW_CHANGES);
done:
	pg_buf_release(&tx);
	free(idx);
}

/* "With this PR: perfgate: FAIL — H100: ...": the gate's headline, the
 * annotation's words, in the colour of the annotation's style; and the
 * baseline it compared with when that is not this history. */
static void current_line(struct pg_buf *o, const struct pg_trends_gpu *t)
{
	const struct pg_comparison *c = t->cmp;
	struct pg_buf h = PG_BUF_INIT;
	size_t k = 0;
	enum pg_tone tone = c->suspect || c->outcome == PG_OUTCOME_WARN ? PG_TONE_WARN
			    : c->outcome == PG_OUTCOME_PASS             ? PG_TONE_GOOD
									: PG_TONE_BAD;

	pg_buf_puts(o, "<p>With <b>");
	esc_html(o, t->current_name);
	pg_buf_printf(o, "</b>: <span class=\"%s\">", tone_class(tone) + 1);
	pg_comparison_headline(&h, c);
	/* markdown's bold marks, which HTML would show as they are */
	for (size_t i = 0; i < h.len; i++)
		if (h.ptr[i] != '*')
			h.ptr[k++] = h.ptr[i];
	pg_buf_truncate(&h, k);
	esc_html(o, h.ptr);
	pg_buf_puts(o, "</span>");
	if (c->baseline_kind && strcmp(c->baseline_kind, "git") && c->baseline_source) {
		pg_buf_puts(o, " <span class=\"muted\">(the gate compared it with ");
		esc_html(o, c->baseline_source);
		pg_buf_puts(o, "; the charts' baseline is main's runs)</span>");
	}
	pg_buf_puts(o, "</p>\n");
	pg_buf_release(&h);
}

/* The overview without its page's head and end (the one page's top). */
static void overview_body(struct pg_buf *o, const struct pg_trends_gpu *t, size_t on_page)
{
	static const enum pg_suite_kind suites[] = { PG_SUITE_SERVING, PG_SUITE_LATENCY,
						     PG_SUITE_THROUGHPUT };
	size_t nm, shown = 0;
	const struct pg_metric *all = pg_metrics_all(&nm);

	pg_buf_puts(o, "<h1 id=\"top\">");
	esc_html(o, t->gpu);
	pg_buf_puts(o, "</h1>\n");
	summary_line(o, t);
	if (t->cmp)
		current_line(o, t);
	legend(o, t->cmp != NULL, t->current_name);
	pg_buf_printf(
		o,
		"<h2>Test points</h2>\n<p class=\"muted\">The gated metrics of each point over "
		"its last %d runs; points that need a look first (%zu), then by name. "
		"Under each value its change from the baseline. ",
		SPARK_RUNS, t->n_flagged);
	if (t->n > PG_TRENDS_OVERVIEW_ROWS)
		pg_buf_printf(o, "The first %d of %zu points%s", PG_TRENDS_OVERVIEW_ROWS, t->n,
			      t->one_page ? ". " : "; ");
	if (!t->one_page)
		pg_buf_puts(o, "<a href=\"points.html\">every point</a>.</p>\n");
	else if (on_page < t->n)
		pg_buf_printf(o,
			      "The charts of the first %zu follow on this page; the site "
			      "<code>perfgate trends</code> writes has a page for every "
			      "point.</p>\n",
			      on_page);
	else
		pg_buf_puts(o, "Each point's charts follow on this page.</p>\n");
	for (size_t si = 0; si < sizeof(suites) / sizeof(suites[0]); si++) {
		bool any = false;
		for (size_t r = 0; r < t->n && !any; r++)
			any = point_suite(&t->hs[t->order[r]]) == suites[si];
		if (!any || shown >= PG_TRENDS_OVERVIEW_ROWS)
			continue;
		pg_buf_printf(o, "<h3>%s</h3>\n<table><tr><th>point</th><th>runs</th>",
			      pg_suite_kind_name(suites[si]));
		for (size_t m = 0; m < nm; m++)
			if (charted(&all[m], suites[si]) && all[m].gated) {
				pg_buf_puts(o, "<th colspan=\"2\">");
				metric_title(o, &all[m]);
				pg_buf_puts(o, "</th>");
			}
		pg_buf_puts(o, "</tr>\n");
		for (size_t r = 0; r < t->n && shown < PG_TRENDS_OVERVIEW_ROWS; r++) {
			size_t i = t->order[r];
			const struct pg_base_point *bp;
			if (point_suite(&t->hs[i]) != suites[si])
				continue;
			shown++;
			bp = pg_baseline_find(t->base, t->hs[i].point);
			pg_buf_puts(o, "<tr><td>");
			point_link(o, t, i);
			pg_buf_printf(o, "</td><td class=\"num\">%zu", t->hs[i].n);
			if (bp && bp->insufficient)
				pg_buf_puts(o, "<br><span class=\"muted\">too few</span>");
			pg_buf_puts(o, "</td>");
			for (size_t m = 0; m < nm; m++) {
				struct series s = { 0 };
				struct view v;
				if (!charted(&all[m], suites[si]) || !all[m].gated)
					continue;
				series_get(&s, t, i, &all[m]);
				view_get(&v, t, i, &all[m]);
				pg_buf_puts(o, "<td class=\"spark\">");
				sparkline(o, t, i, &all[m], &s, &v);
				pg_buf_puts(o, "</td>");
				value_cell(o, &all[m], &s, &v);
				series_release(&s);
			}
			pg_buf_puts(o, "</tr>\n");
		}
		pg_buf_puts(o, "</table>\n");
	}
	pg_trends_ab_overview(o, t);
	changes_table(o, t);
}

void pg_trends_overview(struct pg_buf *o, const struct pg_trends_gpu *t)
{
	struct pg_buf title = PG_BUF_INIT;

	pg_buf_printf(&title, "%s: perfgate trends", t->gpu);
	page_open(o, title.ptr, "../", NULL, NULL);
	overview_body(o, t, 0);
	page_close(o);
	pg_buf_release(&title);
}

void pg_trends_points(struct pg_buf *o, const struct pg_trends_gpu *t)
{
	struct pg_buf title = PG_BUF_INIT;

	pg_buf_printf(&title, "%s: every test point", t->gpu);
	page_open(o, title.ptr, "../", t->gpu, "index.html");
	pg_buf_puts(o, "<h1>");
	esc_html(o, title.ptr);
	pg_buf_puts(o, "</h1>\n");
	summary_line(o, t);
	pg_buf_puts(o, "<table><tr><th>point</th><th>suite</th><th>runs</th><th>last "
		       "run</th><th>baseline</th></tr>\n");
	for (size_t i = 0; i < t->n; i++) {
		const struct pg_history *h = &t->hs[i];
		const struct pg_base_point *bp = pg_baseline_find(t->base, h->point);
		pg_buf_puts(o, "<tr><td>");
		point_link(o, t, i);
		pg_buf_printf(o, "</td><td>%s</td><td class=\"num\">%zu</td><td>",
			      pg_suite_kind_name(point_suite(h)), h->n);
		if (h->n && h->recs[h->n - 1].date)
			esc_prefix(o, h->recs[h->n - 1].date, 10);
		pg_buf_puts(o, "</td><td>");
		if (bp)
			esc_html(o, bp->insufficient ? bp->insufficient : bp->source);
		pg_buf_puts(o, "</td></tr>\n");
	}
	pg_buf_puts(o, "</table>\n");
	page_close(o);
	pg_buf_release(&title);
}

/* The last runs of point i: date, commit, build, each charted metric. */
static void runs_table(struct pg_buf *o, const struct pg_trends_gpu *t, size_t i,
		       const struct pg_metric *const *ms, size_t n_ms,
		       const char (*g)[PG_FMT_DOUBLE_SIZE])
{
	const struct pg_history *h = &t->hs[i];
	size_t first = h->n > PG_TRENDS_RECENT_RUNS ? h->n - PG_TRENDS_RECENT_RUNS : 0;
	char a[PG_FMT_DOUBLE_SIZE];

	pg_buf_printf(
		o,
		"<h2>The last %zu runs</h2>\n<table class=\"runs\"><tr><th>run</th><th>date</th>"
		"<th>commit</th><th>build</th>",
		h->n - first);
	for (size_t m = 0; m < n_ms; m++) {
		pg_buf_puts(o, "<th>");
		metric_title(o, ms[m]);
		pg_buf_puts(o, "</th>");
	}
	pg_buf_puts(o, "</tr>\n");
	/* a row's cells' end tags are implied (HTML), their alignment and
	 * fonts are the table's (.runs): a row in half the bytes */
	for (size_t k = h->n; k-- > first;) {
		const struct pg_history_rec *r = &h->recs[k];
		long j = t->a->rec_job[i][k];
		if (j >= 0) {
			pg_buf_puts(o, "<tr><td>#");
			pg_buf_long(o, j + 1);
			pg_buf_puts(o, "<td>");
		} else {
			pg_buf_puts(o, "<tr><td class=\"muted\">not used<td>");
		}
		if (r->date)
			esc_prefix(o, r->date, 10);
		pg_buf_puts(o, "<td>");
		if (r->commit)
			esc_prefix(o, r->commit, 12);
		pg_buf_puts(o, "<td>");
		if (r->build_url)
			build_link(o, r->build_url, "build");
		for (size_t m = 0; m < n_ms; m++) {
			/* the script's string, or (a run the analysis left out) the value's */
			const char *gk = g[m * h->n + k];
			double x = gk[0] || r->suite != ms[m]->suite
					   ? NAN
					   : pg_history_rec_value(r, ms[m]);
			pg_buf_puts(o, "<td>");
			if (gk[0])
				pg_buf_puts(o, gk);
			else if (isfinite(x))
				pg_buf_puts(o, pg_fmt_g(a, x));
		}
		pg_buf_putc(o, '\n');
	}
	pg_buf_puts(o, "</table>\n");
}

/* A point's charts and runs without its page's head and end: a page of
 * its own (section < 0) or the one page's section-th. */
static void point_body(struct pg_buf *o, const struct pg_trends_gpu *t, size_t i, long section)
{
	const struct pg_history *h = &t->hs[i];
	enum pg_suite_kind suite = point_suite(h);
	size_t nm, n_ms = 0;
	const struct pg_metric *all = pg_metrics_all(&nm);
	const struct pg_metric **ms = pg_xmalloc(nm * sizeof(*ms));
	struct pg_rule *rules = pg_xmalloc((nm + 1) * sizeof(*rules));
	char(*g)[PG_FMT_DOUBLE_SIZE];
	const struct pg_base_point *bp = pg_baseline_find(t->base, h->point);
	char a[PG_FMT_DOUBLE_SIZE], b[PG_FMT_DOUBLE_SIZE];

	/* the metrics that can fail, gated ones first (each one's rule looked
	 * up once) */
	for (size_t m = 0; m < nm; m++)
		if (charted(&all[m], suite))
			pg_policy_rule(t->policy, h->point, point_test(h), &all[m], &rules[m]);
	for (int pass = 0; pass < 2; pass++)
		for (size_t m = 0; m < nm; m++) {
			const struct pg_rule *r = &rules[m];
			if (!charted(&all[m], suite))
				continue;
			if (pass == 0 ? r->gate : !r->gate && can_fail(r)) {
				/* only what the point measured (or the PR did) */
				const struct pg_cmp_row *row = find_row(t, h->point, &all[m]);
				bool has = row && isfinite(row->current);
				for (size_t k = h->n; !has && k-- > 0;)
					has = h->recs[k].suite == all[m].suite &&
					      !isnan(pg_history_rec_value(&h->recs[k], &all[m]));
				if (has)
					ms[n_ms++] = &all[m];
			}
		}
	pg_buf_puts(o, "<h1>");
	esc_html(o, h->point);
	pg_buf_puts(o, "</h1>\n<p>");
	esc_html(o, t->gpu);
	pg_buf_printf(o, ", %s", pg_suite_kind_name(suite));
	if (h->n && h->recs[h->n - 1].test) {
		pg_buf_puts(o, ", test <code>");
		esc_html(o, h->recs[h->n - 1].test);
		pg_buf_puts(o, "</code>");
	}
	if (h->n && isfinite(h->recs[h->n - 1].qps))
		pg_buf_printf(o, ", QPS %s", pg_fmt_g(a, h->recs[h->n - 1].qps));
	if (h->n && h->recs[h->n - 1].max_concurrency > 0)
		pg_buf_printf(o, ", max concurrency %ld", h->recs[h->n - 1].max_concurrency);
	pg_buf_printf(o, "; %zu recorded run%s.", h->n, h->n == 1 ? "" : "s");
	if (section >= 0)
		pg_buf_puts(o, " <a href=\"#top\">↑ the overview</a>");
	pg_buf_puts(o, "</p>\n");
	if (bp) {
		pg_buf_puts(o, "<p>The gate's baseline now: ");
		esc_html(o, bp->source);
		pg_buf_puts(o, bp->insufficient ? "; <b>" : ".");
		if (bp->insufficient) {
			esc_html(o, bp->insufficient);
			pg_buf_puts(o, "</b>: the gate cannot judge it yet.");
		}
		pg_buf_puts(o, "</p>\n");
	}
	legend(o, t->cmp != NULL, t->current_name);
	g = pg_xmalloc((n_ms * h->n + 1) * sizeof(*g));
	for (size_t m = 0; m < n_ms; m++) {
		struct series s = { 0 };
		struct view v;
		char(*gm)[PG_FMT_DOUBLE_SIZE] = g + m * h->n;
		series_get(&s, t, i, ms[m]);
		/* the script's data: the values per record, formatted once */
		for (size_t k = 0; k < h->n; k++)
			gm[k][0] = 0;
		for (size_t k = 0; k < s.n; k++)
			pg_fmt_g(gm[s.rec[k]], s.y[k]);
		view_get(&v, t, i, ms[m]);
		pg_buf_puts(o, "<h3>");
		metric_title(o, ms[m]);
		pg_buf_printf(o, " <span class=\"muted\">%s", v.rule.gate ? "gates" : "warns only");
		if (isfinite(v.base))
			pg_buf_printf(o, "; baseline %s over %zu run%s, tolerance %.3g%%",
				      pg_fmt_g(a, v.base), v.bm ? v.bm->n_samples : 0,
				      v.bm && v.bm->n_samples == 1 ? "" : "s", v.tol * 100);
		if (v.tol > v.rule.tolerance)
			pg_buf_printf(o, " (widened from %.3g%% by measured noise)",
				      v.rule.tolerance * 100);
		if (!v.rule.gate && v.rule.escalate > 0)
			pg_buf_printf(o, "; fails beyond %.3g%%", v.rule.escalate * 100);
		if (v.row && isfinite(v.row->current)) {
			pg_buf_puts(o, "</span>; ");
			esc_html(o, t->current_name);
			pg_buf_printf(o, " <b style=\"color:%s\">%s",
				      tone_color(pg_attention_tone(v.row)),
				      pg_fmt_g(b, v.row->current));
			if (isfinite(v.row->change))
				pg_buf_printf(o, " (%s)", pg_fmt_pct(a, v.row->change));
			pg_buf_printf(o, ", %s</b>", pg_verdict_name(v.row->verdict));
		} else {
			pg_buf_puts(o, "</span>");
		}
		pg_buf_puts(o, "</h3>\n");
		/* the gate's note, as the annotation's verdict column has it */
		if (v.row && isfinite(v.row->current) && v.row->note) {
			pg_buf_puts(o, "<p class=\"muted\">");
			esc_html(o, v.row->note);
			pg_buf_puts(o, "</p>\n");
		}
		chart(o, t, i, ms[m], m, &s, &v);
		pg_trends_ab_metric(o, t, i, ms[m]);
		series_release(&s);
	}
	pg_trends_ab_rest(o, t, i, ms, n_ms);
	runs_table(o, t, i, ms, n_ms, (const char(*)[PG_FMT_DOUBLE_SIZE])g);
	pg_trends_runs_script(o, t, i, (const char(*)[PG_FMT_DOUBLE_SIZE])g, n_ms, section);
	free(g);
	free(rules);
	free(ms);
}

void pg_trends_point(struct pg_buf *o, const struct pg_trends_gpu *t, size_t i)
{
	struct pg_buf title = PG_BUF_INIT;

	pg_buf_printf(&title, "%s on %s: perfgate trends", t->hs[i].point, t->gpu);
	page_open(o, title.ptr, "../../", t->gpu, "../index.html");
	point_body(o, t, i, -1);
	page_close(o);
	pg_buf_release(&title);
}

void pg_trends_one_page(struct pg_buf *o, const struct pg_trends_gpu *t)
{
	struct pg_trends_gpu u = *t;
	size_t on_page = t->n < PG_TRENDS_ONE_PAGE_POINTS ? t->n : PG_TRENDS_ONE_PAGE_POINTS;
	char **anchors = pg_xcalloc(t->n ? t->n : 1, sizeof(char *));
	struct pg_buf title = PG_BUF_INIT;

	/* "p/<stem>.html" -> "#p-<stem>": unique as the files are, and an id
	 * as it is (a stem is [A-Za-z0-9._-]) */
	for (size_t r = 0; r < on_page; r++) {
		size_t i = t->order[r];
		struct pg_buf b = PG_BUF_INIT;
		const char *stem = t->files[i] + 2;
		pg_buf_puts(&b, "#p-");
		pg_buf_add(&b, stem, strlen(stem) - strlen(".html"));
		anchors[i] = pg_buf_detach(&b);
	}
	u.files = anchors;
	u.one_page = true;
	pg_buf_printf(&title, "%s: perfgate trends", t->gpu);
	page_open(o, title.ptr, NULL, NULL, NULL);
	/* the sections' data, filled as they come; the code after them */
	pg_buf_puts(o, "<script>var D=[];</script>\n");
	overview_body(o, &u, on_page);
	for (size_t r = 0; r < on_page; r++) {
		size_t i = t->order[r];
		pg_buf_printf(o, "<section id=\"%s\" data-r=\"%zu\">\n", anchors[i] + 1, r);
		point_body(o, &u, i, (long)r);
		pg_buf_puts(o, "</section>\n");
	}
	if (on_page)
		pg_trends_runs_code(o);
	page_close(o);
	pg_buf_release(&title);
	for (size_t i = 0; i < t->n; i++)
		free(anchors[i]);
	free(anchors);
}

void pg_trends_index(struct pg_buf *o, const struct pg_trends_entry *v, size_t n,
		     const char *source)
{
	page_open(o, "perfgate trends", "", NULL, NULL);
	pg_buf_puts(o, "<h1>perfgate trends</h1>\n<p>The recorded runs of main per GPU");
	if (source) {
		pg_buf_puts(o, " <span class=\"muted\">(");
		esc_html(o, source);
		pg_buf_puts(o, ")</span>");
	}
	pg_buf_puts(o, ".</p>\n");
	if (!n) {
		pg_buf_puts(o, "<p>No recorded runs.</p>\n");
		page_close(o);
		return;
	}
	pg_buf_puts(o, "<table><tr><th>GPU</th><th>test points</th><th>runs</th><th>from</th>"
		       "<th>to</th><th>need a look</th></tr>\n");
	for (size_t k = 0; k < n; k++) {
		pg_buf_puts(o, "<tr><td><a href=\"");
		esc_html(o, v[k].dir);
		pg_buf_puts(o, "/index.html\">");
		esc_html(o, v[k].gpu);
		pg_buf_printf(o,
			      "</a></td><td class=\"num\">%zu</td><td class=\"num\">%zu</td><td>",
			      v[k].points, v[k].jobs);
		if (v[k].first_date)
			esc_prefix(o, v[k].first_date, 10);
		pg_buf_puts(o, "</td><td>");
		if (v[k].last_date)
			esc_prefix(o, v[k].last_date, 10);
		pg_buf_printf(o, "</td><td class=\"num%s\">%zu</td></tr>\n",
			      v[k].flagged ? " bad" : "", v[k].flagged);
	}
	pg_buf_puts(o, "</table>\n");
	page_close(o);
}
