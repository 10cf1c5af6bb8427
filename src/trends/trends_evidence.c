/* A regression's trend chart for the comparison's evidence (trends.h
 * pg_trends_evidence_svg): its baseline window drawn by pg_trends_chart. */
#include "trends/trends.h"

#include "base/buf.h"
#include "base/escape.h"
#include "base/alloc.h"
#include "base/strutil.h"
#include "report/svg.h"
#include "gate/attention.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The title's height above the chart. */
#define TITLE_H 24

/* The chart's width and height under the title. */
#define W 760
#define H 250

#define FONT "DejaVu Sans, Helvetica, Arial, sans-serif"
/* trends.c's colours */
#define COLOR_AXIS   "#374151"
#define COLOR_GRID   "#e5e7eb"
#define COLOR_MUTED  "#6b7280"
#define COLOR_WORSE  "#dc2626"
#define COLOR_CHANGE "#d97706"
#define COLOR_BAND   "#fde2e2"
#define COLOR_WARN   "#fef3c7"
#define COLOR_RUN    "#2563eb"

/* A confirmation re-run measured the row: its value is drawn too. */
static bool has_rerun(const struct pg_cmp_row *r)
{
	return r->rerun.n && isfinite(r->rerun.current) && isfinite(r->rerun.change);
}

/* "first run −6.7%" */
static void run_label(char *out, size_t size, const char *name, double change)
{
	if (isfinite(change))
		snprintf(out, size, "%s %s%.1f%%", name, change < 0 ? "−" : "+",
			 fabs(change) * 100);
	else
		snprintf(out, size, "%s", name);
}

/* The run's colour, the annotation's for its row: red when it fails,
 * amber when it only warns (a warn-only metric, a flag the re-run did not
 * reproduce). */
static const char *run_color(const struct pg_cmp_row *r)
{
	return pg_attention_tone(r) == PG_TONE_BAD ? COLOR_WORSE : COLOR_CHANGE;
}

/* A standalone file: the chart under a title naming the test and metric,
 * and with a re-run, the legend of the two runs' markers at its right. */
static void title_open(struct pg_buf *out, const struct pg_cmp_row *r)
{
	const struct pg_metric *m = r->metric;

	pg_buf_printf(out,
		      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		      "viewBox=\"0 0 %d %d\">\n<title>",
		      W, H + TITLE_H, W, H + TITLE_H);
	pg_escape_html(out, r->point);
	pg_buf_puts(out, ": ");
	pg_escape_html(out, m->label);
	pg_buf_printf(out,
		      "</title>\n<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" "
		      "fill=\"#fff\"/>\n"
		      "<text x=\"10\" y=\"17\" font-family=\"" FONT "\" font-size=\"13\" "
		      "font-weight=\"bold\" fill=\"#111827\">",
		      W, H + TITLE_H);
	pg_escape_html(out, r->point);
	pg_buf_puts(out, " · ");
	pg_escape_html(out, m->label);
	pg_buf_puts(out, "</text>\n");
	if (has_rerun(r)) {
		const char *col = run_color(r);
		pg_buf_printf(out,
			      "<g font-family=\"" FONT "\" font-size=\"11\" fill=\"" COLOR_AXIS
			      "\"><path d=\"M586 7L592 13L586 19L580 13Z\" fill=\"%s\"/>"
			      "<text x=\"597\" y=\"17\">first run</text>"
			      "<rect x=\"666\" y=\"8\" width=\"10\" height=\"10\" fill=\"%s\"/>"
			      "<text x=\"681\" y=\"17\">re-run</text></g>\n",
			      col, col);
	}
	pg_buf_printf(out, "<g transform=\"translate(0,%d)\">\n", TITLE_H);
}

static const char *trail_date(const void *ctx, size_t j)
{
	const struct pg_cmp_trail *t = ctx;
	return j < t->n ? t->date[j] : NULL;
}

/* ------------------------------------------------------------------ */
/* A row judged against a thresholds file: no runs of main to draw, so  */
/* the chart is of changes from the baseline: what the row was judged   */
/* against (the baseline's samples, or the run's other points), the     */
/* band up to the failing limit, and the run's value (and re-run's).    */

struct strip {
	double y0, y1, step; /* the change axis, in percent */
};

#define PX0 70.0
#define PX1 (W - 150.0)
#define PY0 (H - 44.0)
#define PY1 30.0

static double sy(const struct strip *f, double pct)
{
	double py = PY0 - (pct - f->y0) / (f->y1 - f->y0) * (PY0 - PY1);
	return fmin(fmax(py, PY1 - 20), PY0 + 20);
}

static void widen(double *lo, double *hi, double rel)
{
	if (isfinite(rel)) {
		*lo = fmin(*lo, rel * 100);
		*hi = fmax(*hi, rel * 100);
	}
}

/* attrs: what a reader's check looks for (class="tick-y", "unit", a
 * legend's data-series; look.py), or "" */
static void strip_text(struct pg_buf *o, double x, double y, const char *anchor, const char *fill,
		       const char *attrs, const char *s)
{
	pg_buf_printf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" fill=\"%s\"%s%s>", x, y,
		      anchor, fill, *attrs ? " " : "", attrs);
	pg_escape_html(o, s);
	pg_buf_puts(o, "</text>\n");
}

/* A horizontal line across the plot at a change, labelled at the right
 * at label_y (its own height, unless that would overlap another label). */
static void strip_line(struct pg_buf *o, const struct strip *f, double rel, const char *stroke,
		       const char *dash, const char *label, double label_y)
{
	double y = sy(f, rel * 100);

	pg_buf_printf(
		o, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"%s%s%s/>\n",
		PX0, PX1, y, y, stroke, dash ? " stroke-dasharray=\"" : "", dash ? dash : "",
		dash ? "\"" : "");
	strip_text(o, PX1 + 6, label_y + 4, "start", stroke, "", label);
}

/* The heights of the right-hand labels, each as near its line as it can
 * be with LABEL_GAP between neighbours, kept in order and inside [lo, hi]
 * (lines a few pixels apart would print their labels on each other). */
#define LABEL_GAP 12.0
static void spread_labels(double *y, size_t n, double lo, double hi)
{
	size_t order[4];

	if (n < 2 || n > 4)
		return;
	for (size_t i = 0; i < n; i++) {
		size_t k = i;
		for (; k > 0 && y[order[k - 1]] > y[i]; k--)
			order[k] = order[k - 1];
		order[k] = i;
	}
	for (size_t k = 1; k < n; k++)
		y[order[k]] = fmax(y[order[k]], y[order[k - 1]] + LABEL_GAP);
	if (n && y[order[n - 1]] > hi)
		y[order[n - 1]] = hi;
	for (size_t k = n - 1; k-- > 0;)
		y[order[k]] = fmin(y[order[k]], y[order[k + 1]] - LABEL_GAP);
	if (n && y[order[0]] < lo)
		for (size_t k = 0; k < n; k++)
			y[order[k]] = fmax(y[order[k]], lo + LABEL_GAP * (double)k);
}

/* Values spread evenly over [x0, x1] (sorted, so the spread reads as a
 * strip), each with its value as a tooltip. */
static void strip_dots(struct pg_buf *o, const struct strip *f, const double *rel, size_t n,
		       double x0, double x1, const char *fill, double base)
{
	double *v = pg_xmalloc((n ? n : 1) * sizeof(double));
	char a[PG_FMT_DOUBLE_SIZE];

	memcpy(v, rel, n * sizeof(double));
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && v[k - 1] > v[k]; k--) {
			double t = v[k];
			v[k] = v[k - 1];
			v[k - 1] = t;
		}
	for (size_t i = 0; i < n; i++) {
		double x = n == 1 ? (x0 + x1) / 2 : x0 + (x1 - x0) * (double)i / (double)(n - 1);
		pg_buf_printf(o,
			      "<circle data-series=\"others\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" "
			      "fill=\"%s\"><title>",
			      x, sy(f, v[i] * 100), fill);
		if (isfinite(base))
			pg_buf_printf(o, "%s (", pg_fmt_g(a, base * (1 + v[i])));
		pg_buf_puts(o, pg_fmt_pct(a, v[i]));
		pg_buf_puts(o, isfinite(base) ? ")</title></circle>\n" : "</title></circle>\n");
	}
	free(v);
}

/* A run's change at x: a diamond (a re-run's: a square), its interval as
 * a whisker, its name above (a re-run's below). */
static void strip_run(struct pg_buf *o, const struct strip *f, double x, double change, double lo,
		      double hi, const char *name, const char *col, bool square)
{
	double y = sy(f, change * 100), ytext;

	if (isfinite(lo) && isfinite(hi)) {
		double y0 = sy(f, lo * 100), y1 = sy(f, hi * 100);
		pg_buf_printf(o,
			      "<path d=\"M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f\" "
			      "stroke=\"%s\" stroke-width=\"1.5\" fill=\"none\"/>\n",
			      x, y0, y1, x - 5, y0, x + 5, x - 5, y1, x + 5, col);
		ytext = square ? fmax(fmax(y0, y1), y + 7) + 13 : fmin(fmin(y0, y1), y - 7) - 7;
	} else {
		ytext = square ? y + 20 : y - 11;
	}
	if (square)
		pg_buf_printf(o,
			      "<rect data-series=\"rerun\" x=\"%.1f\" y=\"%.1f\" width=\"11\" "
			      "height=\"11\" fill=\"%s\" stroke=\"#fff\"/>\n",
			      x - 5.5, y - 5.5, col);
	else
		pg_buf_printf(
			o,
			"<path data-series=\"pr\" d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f %.1fZ\" "
			"fill=\"%s\" stroke=\"#fff\"/>\n",
			x, y - 7, x + 7, y, x, y + 7, x - 7, y, col);
	pg_buf_printf(o,
		      "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"%s\" "
		      "font-weight=\"bold\" class=\"legend\" data-series=\"%s\">",
		      x, fmax(ytext, PY1 - 14), col, square ? "rerun" : "pr");
	pg_escape_html(o, name);
	pg_buf_puts(o, "</text>\n");
}

/* The interval of a run's change around its run's common change (the
 * change itself for a point judged alone). */
static void run_interval(const struct pg_cmp_side *s, double *lo, double *hi)
{
	double at = (1 + s->change) / (1 + s->effect);

	*lo = *hi = NAN;
	if (isfinite(s->ci_low) && isfinite(s->ci_high) && isfinite(at)) {
		*lo = at * (1 + s->ci_low) - 1;
		*hi = at * (1 + s->ci_high) - 1;
	}
}

static bool spread_svg(struct pg_buf *out, const struct pg_cmp_row *r, const char *run_name)
{
	const struct pg_cmp_spread *sp = r->spread;
	const struct pg_metric *m = r->metric;
	bool crosswise = r->method == PG_METHOD_CROSSWISE, rerun = has_rerun(r);
	bool higher = m->direction == PG_HIGHER_IS_BETTER;
	double thr = pg_attention_threshold(r), from = 0, limit, lo = 0, hi = 0, pad;
	double *rel = NULL, ci_lo, ci_hi, re_lo = NAN, re_hi = NAN;
	const double *dots;
	size_t n_dots;
	bool fails = pg_attention_fails(r);
	struct strip f;
	char name[96], label[160], a[PG_FMT_DOUBLE_SIZE];
	double gx1 = PX0 + (PX1 - PX0) * 0.55, xr1, xr2;

	if (!sp || !m || !isfinite(thr) || !isfinite(r->baseline) || r->baseline <= 0)
		return false;
	/* judged beyond the run's common change: the band and the limit move
	 * with it */
	if (crosswise && isfinite(r->run_change))
		from = r->run_change;
	limit = higher ? (1 + from) / (1 + thr) - 1 : (1 + from) * (1 + thr) - 1;
	if (crosswise) {
		dots = sp->peers;
		n_dots = sp->n_peers;
	} else {
		rel = pg_xmalloc((sp->n_samples ? sp->n_samples : 1) * sizeof(double));
		for (size_t i = 0; i < sp->n_samples; i++)
			rel[i] = sp->samples[i] / r->baseline - 1;
		dots = rel;
		n_dots = sp->n_samples;
	}
	run_interval(&r->first, &ci_lo, &ci_hi);
	if (rerun)
		run_interval(&r->rerun, &re_lo, &re_hi);
	widen(&lo, &hi, from);
	widen(&lo, &hi, limit);
	widen(&lo, &hi, r->change);
	widen(&lo, &hi, ci_lo);
	widen(&lo, &hi, ci_hi);
	if (rerun) {
		widen(&lo, &hi, r->rerun.change);
		widen(&lo, &hi, re_lo);
		widen(&lo, &hi, re_hi);
	}
	for (size_t i = 0; i < n_dots; i++)
		widen(&lo, &hi, dots[i]);
	pad = (hi - lo) * 0.08 + 1e-9;
	lo -= pad;
	hi += pad;
	pg_nice_axis(hi - lo, 5, &f.step);
	f.y0 = floor(lo / f.step) * f.step;
	f.y1 = ceil(hi / f.step) * f.step;

	title_open(out, r);
	pg_buf_printf(out,
		      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		      "viewBox=\"0 0 %d %d\" font-family=\"" FONT "\" font-size=\"11\" "
		      "role=\"img\" aria-label=\"",
		      W, H, W, H);
	pg_escape_html(out, m->label);
	pg_buf_puts(out, ": the run against a thresholds file\">\n");
	pg_buf_printf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", W,
		      H);
	/* the band from the baseline (or the run's common change) to the
	 * limit, under everything */
	pg_buf_printf(out,
		      "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
		      "fill-opacity=\"0.75\"/>\n",
		      PX0, fmin(sy(&f, from * 100), sy(&f, limit * 100)), PX1 - PX0,
		      fabs(sy(&f, limit * 100) - sy(&f, from * 100)),
		      fails ? COLOR_BAND : COLOR_WARN);
	for (size_t k = 0, n = pg_axis_ticks(f.y0, f.y1, f.step); k < n; k++) {
		double y = f.y0 + (double)k * f.step;
		char tl[32];
		pg_tick_label(tl, sizeof(tl), y, f.step);
		snprintf(label, sizeof(label), "%s%s%%", y > 0 ? "+" : "", tl);
		pg_buf_printf(out,
			      "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
			      "stroke=\"" COLOR_GRID "\"/>\n",
			      PX0, PX1, sy(&f, y), sy(&f, y));
		strip_text(out, PX0 - 6, sy(&f, y) + 4, "end", COLOR_AXIS, "class=\"tick-y\"",
			   label);
	}
	snprintf(label, sizeof(label), "change from the baseline (%s is better)",
		 higher ? "higher" : "lower");
	strip_text(out, PX0 - 60, PY1 - 12, "start", COLOR_AXIS, "class=\"unit\"", label);
	{
		/* the baseline, the run's common change (crosswise), the limit */
		bool run_line = crosswise && isfinite(r->run_change);
		double ly[3];
		size_t n = 0;
		ly[n++] = sy(&f, 0);
		if (run_line)
			ly[n++] = sy(&f, r->run_change * 100);
		ly[n++] = sy(&f, limit * 100);
		spread_labels(ly, n, PY1 - 20, PY0 + 20);
		snprintf(label, sizeof(label), "baseline %s", pg_fmt_g(a, r->baseline));
		strip_line(out, &f, 0, COLOR_AXIS, "5 3", label, ly[0]);
		if (run_line) {
			snprintf(label, sizeof(label), "run's change %s%.1f%%",
				 r->run_change < 0 ? "−" : "+", fabs(r->run_change) * 100);
			strip_line(out, &f, r->run_change, COLOR_MUTED, NULL, label, ly[1]);
		}
		snprintf(label, sizeof(label), "%s beyond %s%.3g%%", fails ? "fails" : "warns",
			 higher ? "−" : "+", thr * 100);
		strip_line(out, &f, limit, fails ? COLOR_WORSE : COLOR_CHANGE, "2 2", label,
			   ly[n - 1]);
	}
	/* what it was judged against */
	strip_dots(out, &f, dots, n_dots, PX0 + 20, gx1 - 20, crosswise ? COLOR_MUTED : COLOR_RUN,
		   crosswise ? NAN : r->baseline);
	if (crosswise)
		snprintf(label, sizeof(label), "the run's %zu other point%s", n_dots,
			 n_dots == 1 ? "" : "s");
	else if (n_dots)
		snprintf(label, sizeof(label), "the baseline's %zu %s", n_dots,
			 sp->per_run ? (n_dots == 1 ? "run" : "runs")
				     : (n_dots == 1 ? "repeat" : "repeats"));
	else
		snprintf(label, sizeof(label), "one published value: no spread recorded");
	/* the x axis's category, and the dots' legend */
	strip_text(out, (PX0 + gx1) / 2, PY0 + 14, "middle", COLOR_AXIS,
		   "class=\"tick-x legend\" data-series=\"others\"", label);
	pg_buf_printf(out,
		      "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
		      "stroke=\"" COLOR_AXIS "\"/>\n",
		      PX0, PX1, PY0, PY0);
	/* the run, and its re-run */
	xr1 = rerun ? gx1 + (PX1 - gx1) * 0.33 : gx1 + (PX1 - gx1) * 0.5;
	xr2 = gx1 + (PX1 - gx1) * 0.72;
	if (!run_name)
		run_name = rerun ? "first run" : "this run";
	run_label(name, sizeof(name), run_name, r->change);
	strip_run(out, &f, xr1, r->change, ci_lo, ci_hi, name, run_color(r), false);
	if (rerun) {
		run_label(name, sizeof(name), "re-run", r->rerun.change);
		strip_run(out, &f, xr2, r->rerun.change, re_lo, re_hi, name, run_color(r), true);
	}
	if (crosswise)
		strip_text(out, (PX0 + PX1) / 2, H - 4, "middle", COLOR_MUTED, "",
			   "judged against the run's other points: each dot is one point's "
			   "change from its own baseline");
	else if (r->noise_source) {
		char why[160];
		snprintf(why, sizeof(why), "judged by the tolerance; bars: %s", r->noise_source);
		strip_text(out, (PX0 + PX1) / 2, H - 4, "middle", COLOR_MUTED, "", why);
	} else
		strip_text(out, (PX0 + PX1) / 2, H - 4, "middle", COLOR_MUTED, "",
			   "judged by the tolerance alone: a thresholds file has no spread "
			   "to test against");
	pg_buf_puts(out, "</svg>\n</g>\n</svg>\n");
	free(rel);
	return true;
}

bool pg_trends_evidence_svg(struct pg_buf *out, const struct pg_cmp_row *r, const char *run_name)
{
	const struct pg_cmp_trail *t = r->trail;
	const struct pg_metric *m = r->metric;
	double thr = pg_attention_threshold(r), *x, at;
	bool beyond;
	int len;
	struct pg_trends_chart c = { 0 };
	char name[96], rerun_name[96], caption[192];
	bool rerun = has_rerun(r);

	if (!t || !t->n || !m)
		return spread_svg(out, r, run_name);
	/* a point judged beyond its run's common change moves with it */
	beyond = (r->method == PG_METHOD_STEP || r->method == PG_METHOD_CROSSWISE) &&
		 isfinite(r->run_change);
	at = r->baseline * (beyond ? 1 + r->run_change : 1);
	x = pg_xmalloc(t->n * sizeof(double));
	for (size_t k = 0; k < t->n; k++)
		x[k] = (double)k;
	c.m = m;
	c.x = x;
	c.y = t->y;
	c.n = t->n;
	c.commit = t->commit;
	c.date = t->date;
	c.job_date = trail_date;
	c.ctx = t;
	c.n_jobs = t->n;
	c.x_caption = "the baseline window: runs of main, oldest to newest";
	/* the threshold that decided the row (a warn-only metric's escalation
	 * fails too), as the gate applies it: worse by more than log1p(thr) */
	c.gate = pg_attention_fails(r);
	c.base = r->baseline;
	c.tol = thr;
	c.limit = NAN;
	/* a point judged beyond its run's common change fails beyond the
	 * threshold from there: the line moves with the run, as the bar does */
	if (isfinite(r->baseline) && r->baseline > 0 && isfinite(thr))
		c.limit = (beyond ? at : r->baseline) *
			  (m->direction == PG_HIGHER_IS_BETTER ? 1 / (1 + thr) : 1 + thr);
	c.w0 = (long)t->from;
	c.w1 = (long)t->n - 1;
	c.window_runs = t->n - t->from;
	c.pr = r->current;
	c.pr_change = r->change;
	c.pr_verdict = r->verdict;
	c.pr_tone = pg_attention_tone(r) == PG_TONE_BAD ? PG_TONE_BAD : PG_TONE_WARN;
	/* the interval of the change, around the run's value: a point judged
	 * beyond its run's common change moves with it */
	if (isfinite(r->ci_low) && isfinite(r->ci_high) && isfinite(r->baseline)) {
		c.pr_interval = true;
		c.pr_lo = at * (1 + r->ci_low);
		c.pr_hi = at * (1 + r->ci_high);
	}
	if (beyond)
		/* shorter: the chart's width holds about 110 characters */
		len = snprintf(caption, sizeof(caption),
			       "runs of main, oldest to newest · the limit moves with the run's "
			       "common change (%s%.1f%%)",
			       r->run_change < 0 ? "−" : "+", fabs(r->run_change) * 100);
	else
		len = snprintf(caption, sizeof(caption),
			       "the baseline window: runs of main, oldest to newest");
	if (c.pr_interval && len > 0 && (size_t)len < sizeof(caption))
		snprintf(caption + len, sizeof(caption) - (size_t)len,
			 " · the bar: %g%% interval%s", PG_CI_LEVEL * 100,
			 beyond ? "" : " of the change");
	c.x_caption = caption;
	if (!run_name)
		run_name = rerun ? "first run" : "this run";
	run_label(name, sizeof(name), run_name, r->change);
	c.pr_name = name;
	if (rerun) {
		/* the re-run's interval around its own run's common change */
		double at2 = r->rerun.current / (1 + r->rerun.effect);
		c.rerun = r->rerun.current;
		c.rerun_change = r->rerun.change;
		run_label(rerun_name, sizeof(rerun_name), "re-run", r->rerun.change);
		c.rerun_name = rerun_name;
		if (isfinite(r->rerun.ci_low) && isfinite(r->rerun.ci_high) && isfinite(at2)) {
			c.rerun_interval = true;
			c.rerun_lo = at2 * (1 + r->rerun.ci_low);
			c.rerun_hi = at2 * (1 + r->rerun.ci_high);
		}
	}

	title_open(out, r);
	pg_trends_chart(out, &c);
	pg_buf_puts(out, "</g>\n</svg>\n");
	free(x);
	return true;
}
