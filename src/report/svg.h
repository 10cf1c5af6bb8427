#ifndef PERFGATE_REPORT_SVG_H
#define PERFGATE_REPORT_SVG_H

#include <stdbool.h>
#include <stddef.h>

struct pg_buf;

/*
 * SVG figures: a title, a legend (this run against the baseline) and a grid
 * of panels, each a small plot with its own y axis. Pure: the caller owns
 * the data, this module only draws.
 *
 * Panel kinds:
 *  - LINES: a sweep. x is ordinal (the labels as given: "1", "4", "16",
 *    "inf"), evenly spaced, so QPS=inf sits at the right end, labelled; one
 *    solid line for this run, one dashed for the baseline; NAN breaks a line.
 *  - HBARS: one row per category (test names can be long, so they read
 *    horizontally), a baseline bar and a this-run bar with its value.
 *  - XY: points at numeric x (x, baseline_x) and y (current, baseline),
 *    both axes from zero; a line joins the points flagged in frontier
 *    (baseline_frontier) in x order, filled markers for them, hollow ones
 *    for the others; each current point labelled (labels); notes, one
 *    line each, under the plot. A throughput-interactivity frontier.
 * y axes start at zero (honest bars and slopes) and end at a "nice" number,
 * with 4-6 ticks labelled with their unit.
 *
 * A panel without a single value (NAN everywhere) says "no data" instead of
 * drawing an empty axis. All text is escaped; any byte string can be a label.
 */

enum pg_panel_kind {
	PG_PANEL_LINES,
	PG_PANEL_HBARS,
	PG_PANEL_XY,
};

struct pg_panel {
	enum pg_panel_kind kind;
	const char *title;         /* "Median TTFT" */
	const char *unit;          /* "ms", "tok/s"; "" for none */
	const char *hint;          /* "lower is better" or NULL */
	int better;                /* 1 higher is better, -1 lower is better, 0 neither:
	                             * colours a bar's change red (worse) or green */
	const char *x_title;       /* LINES: "QPS (req/s)"; HBARS: unused */
	const char *const *labels; /* n categories: x ticks or bar rows */
	size_t n;
	const double *current;  /* n values, NAN: missing */
	const double *baseline; /* n values, NAN: missing; NULL: no baseline */
	const double *change;   /* HBARS: n relative changes to label the bars with,
	                         * NAN: current / baseline - 1; NULL: all that */
	bool timeline;          /* LINES over time: no point markers, and x ticks only
	                         * where the label is not empty (hundreds of samples) */
	/* XY only */
	const double *x;               /* n values of current */
	const double *baseline_x;      /* n values of baseline; NULL: no baseline */
	const bool *frontier;          /* n flags: current[i] is on the line */
	const bool *baseline_frontier; /* n flags */
	const char *const *notes;      /* lines of text under the plot */
	size_t n_notes;
};

struct pg_figure {
	const char *title;
	const char *subtitle;      /* GPU, commit, baseline source; or NULL */
	const char *current_name;  /* legend: "This run" */
	const char *baseline_name; /* legend: "Baseline (main @ 1a2b3c4)" */
	const struct pg_panel *panels;
	size_t n_panels;
	size_t columns; /* panels per row; 0: 2 */
};

/* Append the whole SVG document. */
void pg_svg_figure(struct pg_buf *out, const struct pg_figure *f);

/*
 * Nice axis ticks from 0 to at least max: step is 1, 2, 2.5 or 5 times a
 * power of ten, at most max_ticks intervals. Sets *step and returns the
 * axis maximum (a multiple of step >= max). max <= 0 gives the axis 0..1.
 */
double pg_nice_axis(double max, int max_ticks, double *step);

/*
 * How many ticks an axis from `from` to `to` (inclusive, with a relative
 * slack of 1e-9 steps) has at `step`: at most PG_AXIS_MAX_TICKS, 0 when
 * `from` is not finite, 1 when the rest is degenerate (a step of nothing,
 * an infinite end). Tick k is at from + k * step. Counted, so a step that
 * rounds to nothing next to huge values can never loop for ever.
 */
#define PG_AXIS_MAX_TICKS 64
size_t pg_axis_ticks(double from, double to, double step);

/* A tick label: "0", "2.5", "250", "12k", "1.5M"; step decides decimals. */
void pg_tick_label(char *out, size_t size, double v, double step);

#endif
