#include "report/svg.h"

#include "base/strutil.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "base/escape.h"

#include <math.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Geometry in SVG user units (pixels at 100%). */
#define GAP      20.0
#define PANEL_W  440.0
#define LINES_H  270.0
#define HEADER_H 92.0
#define ROW_H    28.0
#define CHAR_W   6.4 /* average advance of an 11px sans-serif glyph */
#define FONT     "DejaVu Sans, Helvetica, Arial, sans-serif"

#define COLOR_CURRENT  "#2563eb"
#define COLOR_BASELINE "#9ca3af"
#define COLOR_AXIS     "#374151"
#define COLOR_GRID     "#e5e7eb"
#define COLOR_MUTED    "#6b7280"
#define COLOR_WORSE    "#dc2626"
#define COLOR_BETTER   "#16a34a"

double pg_nice_axis(double max, int max_ticks, double *step)
{
	static const double mantissas[] = { 1, 2, 2.5, 5, 10 };
	double raw, mag;

	if (!(max > 0) || !isfinite(max))
		max = 1;
	if (max_ticks < 1)
		max_ticks = 5;
	raw = max / max_ticks;
	mag = pow(10, floor(log10(raw)));
	for (size_t i = 0; i < sizeof(mantissas) / sizeof(mantissas[0]); i++) {
		double s = mantissas[i] * mag;
		/* a tiny relative slack keeps 100/5 from becoming 25 by rounding */
		if (s * max_ticks >= max * (1 - 1e-12)) {
			*step = s;
			return ceil(max / s - 1e-9) * s;
		}
	}
	*step = 10 * mag;
	return ceil(max / *step - 1e-9) * *step;
}

size_t pg_axis_ticks(double from, double to, double step)
{
	double n;

	if (!isfinite(from))
		return 0;
	if (!isfinite(to) || !(step > 0) || !isfinite(step) || to < from)
		return 1;
	n = floor((to - from) / step + 1e-9) + 1;
	if (!isfinite(n) || n > PG_AXIS_MAX_TICKS || from + step == from)
		return from + step == from ? 1 : PG_AXIS_MAX_TICKS;
	return (size_t)n;
}

static int decimals_for(double step)
{
	/* pow(10, d), exactly (a chart labels every tick: no pow calls) */
	static const double p10[] = { 1, 10, 100, 1e3, 1e4, 1e5, 1e6 };
	int d = 0;

	/* enough decimals that every multiple of step prints exactly */
	while (d < 6 && fabs(step * p10[d] - round(step * p10[d])) > 1e-9 * p10[d])
		d++;
	return d;
}

void pg_tick_label(char *out, size_t size, double v, double step)
{
	const char *suffix = "";
	double scale = 1;

	if (step >= 1e6 || (step >= 1e5 && fabs(v) >= 1e6)) {
		scale = 1e6;
		suffix = "M";
	} else if (step >= 1e3) {
		scale = 1e3;
		suffix = "k";
	}
	if (v == 0) {
		snprintf(out, size, "0");
		return;
	}
	if (fabs(v / scale) < 1e12 && size > 0) { /* printf's bytes without its cost */
		char num[PG_FMT_DOUBLE_SIZE];
		size_t n = strlen(pg_fmt_fixed(num, v / scale, decimals_for(step / scale)));
		size_t k = strlen(suffix);
		n = n < size - 1 ? n : size - 1;
		k = k < size - 1 - n ? k : size - 1 - n;
		memcpy(out, num, n);
		memcpy(out + n, suffix, k);
		out[n + k] = 0;
		return;
	}
	snprintf(out, size, "%.*f%s", decimals_for(step / scale), v / scale, suffix);
}

static void text(struct pg_buf *o, double x, double y, const char *anchor, const char *attrs,
		 const char *s)
{
	pg_buf_printf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"%s%s>", x, y, anchor,
		      attrs ? " " : "", attrs ? attrs : "");
	pg_escape_html(o, s);
	pg_buf_puts(o, "</text>\n");
}

/* The label cut to about max_px wide, with an ellipsis. */
static void fit_label(struct pg_buf *o, const char *s, double max_px)
{
	size_t max_chars = max_px / CHAR_W > 4 ? (size_t)(max_px / CHAR_W) : 4;
	size_t len = strlen(s);

	if (len <= max_chars) {
		pg_buf_puts(o, s);
		return;
	}
	pg_buf_add(o, s, pg_utf8_prefix(s, max_chars - 1));
	pg_buf_puts(o, "…");
}

static double panel_max(const struct pg_panel *p)
{
	double m = 0;

	for (size_t i = 0; i < p->n; i++) {
		if (isfinite(p->current[i]) && p->current[i] > m)
			m = p->current[i];
		if (p->baseline && isfinite(p->baseline[i]) && p->baseline[i] > m)
			m = p->baseline[i];
	}
	return m;
}

static double panel_width(const struct pg_panel *p);
static bool panel_has_data(const struct pg_panel *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (isfinite(p->current[i]) || (p->baseline && isfinite(p->baseline[i])))
			return true;
	return false;
}

static void panel_title(struct pg_buf *o, const struct pg_panel *p, double x, double y)
{
	struct pg_buf t = PG_BUF_INIT;

	pg_buf_puts(&t, p->title ? p->title : "");
	if (p->unit && *p->unit)
		pg_buf_printf(&t, " (%s)", p->unit);
	/* the title carries the values' unit */
	text(o, x, y, "start",
	     p->unit && *p->unit
		     ? "class=\"unit\" font-size=\"13\" font-weight=\"bold\" fill=\"" COLOR_AXIS
		       "\""
		     : "font-size=\"13\" font-weight=\"bold\" fill=\"" COLOR_AXIS "\"",
	     t.ptr);
	if (p->hint)
		text(o, x - 12 + panel_width(p) - 12, y, "end",
		     "font-size=\"11\" fill=\"" COLOR_MUTED "\"", p->hint);
	pg_buf_release(&t);
}

static double hbars_height(const struct pg_panel *p)
{
	return 34 + ROW_H * (double)(p->n ? p->n : 1) + 36;
}

#define XY_H      350.0
#define XY_W      (2 * PANEL_W + GAP) /* a frontier wants room to the right */
#define NOTE_LINE 16.0

static double panel_height(const struct pg_panel *p)
{
	if (p->kind == PG_PANEL_XY)
		return XY_H + NOTE_LINE * (double)p->n_notes + (p->n_notes ? 12 : 0);
	return p->kind == PG_PANEL_HBARS ? hbars_height(p) : LINES_H;
}

static double panel_width(const struct pg_panel *p)
{
	return p->kind == PG_PANEL_XY ? XY_W : PANEL_W;
}

/* A polyline through the finite values, broken at NANs. */
static void series_path(struct pg_buf *o, const double *v, size_t n, double x0, double dx,
			double y0, double yscale, const char *style)
{
	bool open = false;

	for (size_t i = 0; i < n; i++) {
		double x = x0 + dx * (double)i;

		if (!isfinite(v[i])) {
			if (open)
				pg_buf_printf(o, "\" %s/>\n", style);
			open = false;
		} else if (!open) {
			pg_buf_printf(o, "<path d=\"M%.1f %.1f", x, y0 - v[i] * yscale);
			open = true;
		} else {
			pg_buf_printf(o, " L%.1f %.1f", x, y0 - v[i] * yscale);
		}
	}
	if (open)
		pg_buf_printf(o, "\" %s/>\n", style);
}

static void draw_lines(struct pg_buf *o, const struct pg_panel *p, double px, double py)
{
	double left = px + 64, right = px + PANEL_W - 16;
	double top = py + 34, bottom = py + LINES_H - 50;
	double step, ymax = pg_nice_axis(panel_max(p), 6, &step);
	double yscale = (bottom - top) / ymax;
	double dx = p->n > 1 ? (right - left - 24) / (double)(p->n - 1) : 0;
	double x0 = p->n > 1 ? left + 12 : (left + right) / 2;
	char label[32];

	panel_title(o, p, px + 12, py + 18);
	for (size_t k_ = 0, n_ = pg_axis_ticks(0, ymax, step); k_ < n_; k_++) {
		double v = 0 + (double)k_ * step;
		double y = bottom - v * yscale;
		pg_buf_printf(
			o,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n",
			left, y, right, y, v == 0 ? COLOR_AXIS : COLOR_GRID);
		pg_tick_label(label, sizeof(label), v, step);
		text(o, left - 6, y + 4, "end",
		     "class=\"tick-y\" font-size=\"11\" fill=\"" COLOR_AXIS "\"", label);
	}
	for (size_t i = 0; i < p->n; i++) {
		double x = x0 + dx * (double)i;
		struct pg_buf l = PG_BUF_INIT;
		if (p->timeline && !p->labels[i][0])
			continue;
		pg_buf_printf(
			o,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n",
			x, bottom, x, bottom + 4, COLOR_AXIS);
		fit_label(&l, p->labels[i], dx > 0 && !p->timeline ? dx : 120);
		text(o, x, bottom + 17, "middle",
		     "class=\"tick-x\" font-size=\"11\" fill=\"" COLOR_AXIS "\"", l.ptr);
		pg_buf_release(&l);
	}
	if (p->x_title)
		text(o, (left + right) / 2, bottom + 36, "middle",
		     "font-size=\"12\" fill=\"" COLOR_MUTED "\"", p->x_title);

	if (p->baseline) {
		series_path(o, p->baseline, p->n, x0, dx, bottom, yscale,
			    "data-series=\"baseline\" fill=\"none\" stroke=\"" COLOR_BASELINE
			    "\" stroke-width=\"2\" stroke-dasharray=\"6 4\"");
		for (size_t i = 0; i < p->n && !p->timeline; i++)
			if (isfinite(p->baseline[i]))
				pg_buf_printf(
					o,
					"<rect x=\"%.1f\" y=\"%.1f\" width=\"7\" height=\"7\" "
					"fill=\"white\" stroke=\"" COLOR_BASELINE
					"\" stroke-width=\"2\"/>\n",
					x0 + dx * (double)i - 3.5,
					bottom - p->baseline[i] * yscale - 3.5);
	}
	series_path(o, p->current, p->n, x0, dx, bottom, yscale,
		    "data-series=\"current\" fill=\"none\" stroke=\"" COLOR_CURRENT
		    "\" stroke-width=\"2.5\"");
	for (size_t i = 0; i < p->n && !p->timeline; i++)
		if (isfinite(p->current[i]))
			pg_buf_printf(
				o,
				"<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"" COLOR_CURRENT
				"\"/>\n",
				x0 + dx * (double)i, bottom - p->current[i] * yscale);
}

static void draw_hbars(struct pg_buf *o, const struct pg_panel *p, double px, double py)
{
	double longest = 0, label_w, left, right = px + PANEL_W - 110;
	double top = py + 34, bottom = top + ROW_H * (double)(p->n ? p->n : 1);
	double step, xmax = pg_nice_axis(panel_max(p), 4, &step), xscale;
	char label[32];

	for (size_t i = 0; i < p->n; i++)
		if ((double)strlen(p->labels[i]) > longest)
			longest = (double)strlen(p->labels[i]);
	label_w = fmin(fmax(longest * CHAR_W, 60), 190);
	left = px + 12 + label_w + 8;
	xscale = (right - left) / xmax;

	panel_title(o, p, px + 12, py + 18);
	for (size_t k_ = 0, n_ = pg_axis_ticks(0, xmax, step); k_ < n_; k_++) {
		double v = 0 + (double)k_ * step;
		double x = left + v * xscale;
		pg_buf_printf(
			o,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n",
			x, top, x, bottom, v == 0 ? COLOR_AXIS : COLOR_GRID);
		pg_tick_label(label, sizeof(label), v, step);
		text(o, x, bottom + 16, "middle",
		     "class=\"tick-x\" font-size=\"11\" fill=\"" COLOR_AXIS "\"", label);
	}
	for (size_t i = 0; i < p->n; i++) {
		double y = top + ROW_H * (double)i;
		struct pg_buf l = PG_BUF_INIT;
		char num[32];

		fit_label(&l, p->labels[i], label_w);
		pg_buf_printf(o, "<g><title>");
		pg_escape_html(o, p->labels[i]);
		pg_buf_puts(o, "</title>\n");
		text(o, left - 8, y + ROW_H / 2 + 4, "end",
		     "class=\"tick-y\" font-size=\"11\" fill=\"" COLOR_AXIS "\"", l.ptr);
		pg_buf_release(&l);
		if (p->baseline && isfinite(p->baseline[i]))
			pg_buf_printf(
				o,
				"<rect data-series=\"baseline\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
				"height=\"9\" fill=\"" COLOR_BASELINE "\"/>\n",
				left, y + 4, p->baseline[i] * xscale);
		if (isfinite(p->current[i])) {
			pg_buf_printf(
				o,
				"<rect data-series=\"current\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
				"height=\"11\" fill=\"" COLOR_CURRENT "\"/>\n",
				left, y + 14, p->current[i] * xscale);
			snprintf(num, sizeof(num), "%.4g", p->current[i]);
			pg_buf_printf(
				o,
				"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"start\" font-size=\"10\" "
				"fill=\"" COLOR_AXIS "\">%s",
				left + p->current[i] * xscale + 4, y + 23, num);
			if (p->baseline && isfinite(p->baseline[i]) && p->baseline[i] != 0) {
				double change = p->change && isfinite(p->change[i])
							? p->change[i]
							: (p->current[i] - p->baseline[i]) /
								  p->baseline[i];
				const char *color = COLOR_AXIS;
				if (p->better && change != 0)
					color = (change > 0) == (p->better > 0) ? COLOR_BETTER
										: COLOR_WORSE;
				char pc[PG_FMT_DOUBLE_SIZE];
				pg_buf_printf(o, " <tspan fill=\"%s\">(%s)</tspan>", color,
					      pg_fmt_pct(pc, change));
			}
			pg_buf_puts(o, "</text>\n");
		} else {
			text(o, left + 4, y + 23, "start",
			     "font-size=\"10\" fill=\"" COLOR_MUTED "\"", "no data");
		}
		pg_buf_puts(o, "</g>\n");
	}
}

/* The flagged points of an XY series in x order, as one polyline. */
static void xy_line(struct pg_buf *o, const double *x, const double *y, const bool *on, size_t n,
		    double left, double xmin, double xscale, double bottom, double yscale,
		    const char *style)
{
	size_t *idx = NULL, k = 0;

	if (!n)
		return;
	idx = pg_xcalloc(n, sizeof(*idx));
	for (size_t i = 0; i < n; i++)
		if (on[i] && isfinite(x[i]) && isfinite(y[i]))
			idx[k++] = i;
	/* insertion sort: a ladder has a handful of points */
	for (size_t i = 1; i < k; i++)
		for (size_t j = i; j > 0 && x[idx[j - 1]] > x[idx[j]]; j--) {
			size_t t = idx[j];
			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
	for (size_t i = 0; i < k; i++)
		pg_buf_printf(o, "%s%.1f %.1f", i ? " L" : "<path d=\"M",
			      left + (x[idx[i]] - xmin) * xscale, bottom - y[idx[i]] * yscale);
	if (k)
		pg_buf_printf(o, "\" %s/>\n", style);
	free(idx);
}

static double xy_max(const double *v, const double *w, size_t n)
{
	double m = 0;

	for (size_t i = 0; i < n; i++) {
		if (v && isfinite(v[i]) && v[i] > m)
			m = v[i];
		if (w && isfinite(w[i]) && w[i] > m)
			m = w[i];
	}
	return m;
}

static void draw_xy(struct pg_buf *o, const struct pg_panel *p, double px, double py)
{
	double left = px + 64, right = px + XY_W - 24;
	double top = py + 34, bottom = py + XY_H - 50;
	double last_lx = -1e9, last_ly = -1e9;
	double ystep, xstep, xmin, xmax, xlo = INFINITY, xhi = 0;
	double ymax = pg_nice_axis(xy_max(p->current, p->baseline, p->n), 6, &ystep);
	double yscale, xscale;

	/* x spans the data, on nice ticks (a frontier lives far from zero
	 * interactivity); y starts at zero like every panel */
	for (size_t i = 0; i < p->n; i++) {
		if (isfinite(p->x[i]) && isfinite(p->current[i])) {
			xlo = fmin(xlo, p->x[i]);
			xhi = fmax(xhi, p->x[i]);
		}
		if (p->baseline_x && p->baseline && isfinite(p->baseline_x[i]) &&
		    isfinite(p->baseline[i])) {
			xlo = fmin(xlo, p->baseline_x[i]);
			xhi = fmax(xhi, p->baseline_x[i]);
		}
	}
	if (!isfinite(xlo))
		xlo = xhi = 0;
	pg_nice_axis(xhi > xlo ? xhi - xlo : fmax(xhi, 1), 6, &xstep);
	xmin = floor(xlo / xstep) * xstep;
	xmax = ceil(xhi / xstep) * xstep;
	if (xmax <= xmin)
		xmax = xmin + xstep;
	yscale = (bottom - top) / ymax;
	xscale = (right - left) / (xmax - xmin);
	char label[32];

	panel_title(o, p, px + 12, py + 18);
	for (size_t k_ = 0, n_ = pg_axis_ticks(0, ymax, ystep); k_ < n_; k_++) {
		double v = 0 + (double)k_ * ystep;
		double y = bottom - v * yscale;
		pg_buf_printf(
			o,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n",
			left, y, right, y, v == 0 ? COLOR_AXIS : COLOR_GRID);
		pg_tick_label(label, sizeof(label), v, ystep);
		text(o, left - 6, y + 4, "end",
		     "class=\"tick-y\" font-size=\"11\" fill=\"" COLOR_AXIS "\"", label);
	}
	for (size_t k_ = 0, n_ = pg_axis_ticks(xmin, xmax, xstep); k_ < n_; k_++) {
		double v = xmin + (double)k_ * xstep;
		double x = left + (v - xmin) * xscale;
		pg_buf_printf(
			o,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n",
			x, top, x, bottom, v == xmin ? COLOR_AXIS : COLOR_GRID);
		pg_tick_label(label, sizeof(label), v, xstep);
		text(o, x, bottom + 17, "middle",
		     "class=\"tick-x\" font-size=\"11\" fill=\"" COLOR_AXIS "\"", label);
	}
	if (p->x_title)
		text(o, (left + right) / 2, bottom + 36, "middle",
		     "font-size=\"12\" fill=\"" COLOR_MUTED "\"", p->x_title);

	if (p->baseline && p->baseline_x) {
		if (p->baseline_frontier)
			xy_line(o, p->baseline_x, p->baseline, p->baseline_frontier, p->n, left,
				xmin, xscale, bottom, yscale,
				"fill=\"none\" stroke=\"" COLOR_BASELINE
				"\" stroke-width=\"2\" stroke-dasharray=\"6 4\"");
		for (size_t i = 0; i < p->n; i++)
			if (isfinite(p->baseline[i]) && isfinite(p->baseline_x[i]))
				pg_buf_printf(
					o,
					"<rect data-series=\"baseline\" x=\"%.1f\" y=\"%.1f\" "
					"width=\"7\" height=\"7\" fill=\"%s\" stroke=\"" COLOR_BASELINE
					"\" stroke-width=\"2\"/>\n",
					left + (p->baseline_x[i] - xmin) * xscale - 3.5,
					bottom - p->baseline[i] * yscale - 3.5,
					p->baseline_frontier && p->baseline_frontier[i] ? "white"
											: "none");
	}
	if (p->frontier)
		xy_line(o, p->x, p->current, p->frontier, p->n, left, xmin, xscale, bottom, yscale,
			"fill=\"none\" stroke=\"" COLOR_CURRENT "\" stroke-width=\"2.5\"");
	for (size_t i = 0; i < p->n; i++) {
		double cx, cy;
		if (!isfinite(p->current[i]) || !isfinite(p->x[i]))
			continue;
		cx = left + (p->x[i] - xmin) * xscale;
		cy = bottom - p->current[i] * yscale;
		if (!p->frontier || p->frontier[i])
			pg_buf_printf(
				o,
				"<circle data-series=\"current\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" "
				"fill=\"" COLOR_CURRENT "\"/>\n",
				cx, cy);
		else
			pg_buf_printf(
				o,
				"<circle data-series=\"current\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" "
				"fill=\"white\" "
				"stroke=\"" COLOR_CURRENT "\" stroke-width=\"1.5\"/>\n",
				cx, cy);
		/* a label that would sit on the previous one is left out: the
		 * most interactive points of a ladder crowd together */
		if (p->labels && p->labels[i] && p->labels[i][0] &&
		    (fabs(cx - last_lx) > 34 || fabs(cy - last_ly) > 14)) {
			text(o, cx + 6, cy + 14, "start",
			     "font-size=\"10\" fill=\"" COLOR_MUTED "\"", p->labels[i]);
			last_lx = cx;
			last_ly = cy;
		}
	}
	for (size_t k = 0; k < p->n_notes; k++)
		text(o, px + 12, py + XY_H + 4 + NOTE_LINE * (double)k, "start",
		     "font-size=\"11\" fill=\"" COLOR_AXIS "\"", p->notes[k]);
}

/* One legend entry: the series' mark (a bar swatch, or a line with its
 * marker), its name; returns where the next entry starts. */
static double legend_entry(struct pg_buf *o, double x, double y, bool bars, bool baseline,
			   const char *name)
{
	const char *color = baseline ? COLOR_BASELINE : COLOR_CURRENT;

	if (bars) {
		pg_buf_printf(
			o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"%d\" fill=\"%s\"/>\n",
			x + 5, y - (baseline ? 4.5 : 5.5), baseline ? 9 : 11, color);
	} else if (baseline) {
		pg_buf_printf(o,
			      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
			      "stroke-width=\"2\" stroke-dasharray=\"6 4\"/>\n",
			      x, y, x + 24, y, color);
		pg_buf_printf(o,
			      "<rect x=\"%.1f\" y=\"%.1f\" width=\"7\" height=\"7\" fill=\"white\" "
			      "stroke=\"%s\" stroke-width=\"2\"/>\n",
			      x + 8.5, y - 3.5, color);
	} else {
		pg_buf_printf(o,
			      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
			      "stroke-width=\"2.5\"/>\n",
			      x, y, x + 24, y, color);
		pg_buf_printf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>\n", x + 12,
			      y, color);
	}
	text(o, x + 32, y + 4, "start",
	     baseline
		     ? "class=\"legend\" data-series=\"baseline\" font-size=\"12\" fill=\"" COLOR_AXIS
		       "\""
		     : "class=\"legend\" data-series=\"current\" font-size=\"12\" fill=\"" COLOR_AXIS
		       "\"",
	     name);
	return x + 40 + CHAR_W * 1.1 * (double)strlen(name) + 24;
}

static void legend(struct pg_buf *o, const struct pg_figure *f, double y, bool baseline, bool bars)
{
	double x = legend_entry(o, GAP, y, bars, false,
				f->current_name ? f->current_name : "This run");

	if (baseline)
		legend_entry(o, x, y, bars, true, f->baseline_name ? f->baseline_name : "Baseline");
}

void pg_svg_figure(struct pg_buf *out, const struct pg_figure *f)
{
	size_t cols = f->columns ? f->columns : 2;
	size_t rows = (f->n_panels + cols - 1) / cols;
	double width, height = HEADER_H, y;
	bool any_baseline = false, all_bars = f->n_panels > 0;

	if (cols > f->n_panels && f->n_panels)
		cols = f->n_panels;
	width = GAP + (double)cols * (PANEL_W + GAP);
	for (size_t i = 0; i < f->n_panels; i++)
		if (GAP + (double)cols * (panel_width(&f->panels[i]) + GAP) > width)
			width = GAP + (double)cols * (panel_width(&f->panels[i]) + GAP);
	for (size_t r = 0; r < rows; r++) {
		double h = 0;
		for (size_t c = 0; c < cols && r * cols + c < f->n_panels; c++)
			h = fmax(h, panel_height(&f->panels[r * cols + c]));
		height += h + GAP;
	}
	for (size_t i = 0; i < f->n_panels; i++) {
		any_baseline |= f->panels[i].baseline != NULL;
		all_bars &= f->panels[i].kind == PG_PANEL_HBARS;
	}

	pg_buf_printf(out,
		      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		      "viewBox=\"0 0 %.0f %.0f\" font-family=\"" FONT "\">\n",
		      width, height, width, height);
	pg_buf_puts(out, "<title>");
	pg_escape_html(out, f->title ? f->title : "");
	pg_buf_puts(out, "</title>\n");
	pg_buf_puts(out, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
	text(out, GAP, 30, "start", "font-size=\"18\" font-weight=\"bold\" fill=\"#111827\"",
	     f->title ? f->title : "");
	if (f->subtitle)
		text(out, GAP, 50, "start", "font-size=\"12\" fill=\"" COLOR_MUTED "\"",
		     f->subtitle);
	legend(out, f, 74, any_baseline, all_bars);

	y = HEADER_H;
	for (size_t r = 0; r < rows; r++) {
		double h = 0;
		for (size_t c = 0; c < cols && r * cols + c < f->n_panels; c++) {
			const struct pg_panel *p = &f->panels[r * cols + c];
			double x = GAP + (double)c * (panel_width(p) + GAP);

			pg_buf_printf(out,
				      "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				      "fill=\"none\" stroke=\"" COLOR_GRID "\" rx=\"4\"/>\n",
				      x, y, panel_width(p), panel_height(p));
			if (!panel_has_data(p)) {
				/* an empty axis from 0 to 1 reads as a measured zero */
				panel_title(out, p, x + 12, y + 18);
				text(out, x + panel_width(p) / 2, y + panel_height(p) / 2 + 5,
				     "middle", "font-size=\"13\" fill=\"" COLOR_MUTED "\"",
				     "no data");
			} else if (p->kind == PG_PANEL_HBARS)
				draw_hbars(out, p, x, y);
			else if (p->kind == PG_PANEL_XY)
				draw_xy(out, p, x, y);
			else
				draw_lines(out, p, x, y);
			h = fmax(h, panel_height(p));
		}
		y += h + GAP;
	}
	pg_buf_puts(out, "</svg>\n");
}
