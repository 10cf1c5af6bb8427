/*
 * A/B mode's comparison.md and verdict.json (gate/ab.h). Names are
 * escaped as the gate's tables are (base/escape.h), so the markdown can go
 * into a Buildkite annotation as it is.
 */
#include "gate/ab.h"

#include "base/buf.h"
#include "base/escape.h"
#include "base/exitcode.h"
#include "base/strutil.h"
#include "gate/attention.h"
#include "gate/compare.h"
#include "results/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void pg_ab_summary_release(struct pg_ab_summary *s)
{
	free(s->gpu);
	pg_strv_release(&s->points);
	free(s->metrics);
	free(s->tolerance);
	free(s->whole_tolerance);
	free(s->base);
	free(s->head);
	pg_ab_decision_release(&s->d);
	free(s->stop);
	free(s->side_desc[0]);
	free(s->side_desc[1]);
	pg_strv_release(&s->errors);
	pg_strv_release(&s->client_bound);
	memset(s, 0, sizeof(*s));
}

int pg_ab_outcome(const struct pg_ab_summary *s)
{
	if (s->d.counts[PG_AB_REGRESSED])
		return PG_OUTCOME_FAIL;
	if (s->errors.n || s->cancel_signal || !s->blocks)
		return PG_OUTCOME_INFRA;
	if (s->d.counts[PG_AB_INCONCLUSIVE] || s->d.counts[PG_AB_MISSING] ||
	    s->d.counts[PG_AB_PENDING])
		return PG_OUTCOME_WARN;
	return PG_OUTCOME_PASS;
}

static const char *outcome_word(int o)
{
	switch (o) {
	case PG_OUTCOME_FAIL:
		return "FAIL";
	case PG_OUTCOME_INFRA:
		return "ERROR";
	case PG_OUTCOME_WARN:
		return "WARN";
	default:
		return "PASS";
	}
}

static void pct(struct pg_buf *b, double v)
{
	char p[PG_FMT_DOUBLE_SIZE];

	pg_buf_puts(b, isnan(v) ? "–" : pg_fmt_pct(p, v));
}

static void interval(struct pg_buf *b, double lo, double hi)
{
	char a[PG_FMT_DOUBLE_SIZE];

	if (isnan(lo) || isnan(hi)) {
		pg_buf_puts(b, "–");
		return;
	}
	/* escaped: a bracket in a table could start a link */
	pg_buf_printf(b, "\\[%s, ", pg_fmt_pct(a, lo));
	pg_buf_printf(b, "%s\\]", pg_fmt_pct(a, hi));
}

/* "+3.4% \[+1.0%, +5.9%\]", "+3.4%" without an interval, "–" without a value */
static void pct_interval(struct pg_buf *b, double v, double lo, double hi)
{
	pct(b, v);
	if (isnan(v) || isnan(lo) || isnan(hi))
		return;
	pg_buf_putc(b, ' ');
	interval(b, lo, hi);
}

static void number(struct pg_buf *b, double v)
{
	char num[PG_FMT_DOUBLE_SIZE];
	pg_buf_puts(b, isnan(v) ? "–" : pg_fmt_table(num, v));
}

static size_t pairs_of(const struct pg_ab_summary *s)
{
	return s->blocks / 2;
}

void pg_ab_headline(struct pg_buf *out, const struct pg_ab_summary *s)
{
	int o = pg_ab_outcome(s);
	size_t reg = s->d.counts[PG_AB_REGRESSED], inc = s->d.counts[PG_AB_INCONCLUSIVE];

	pg_buf_printf(out, "**perfgate A/B: %s** — ", outcome_word(o));
	if (reg)
		pg_buf_printf(out, "%zu regression%s", reg, reg == 1 ? "" : "s");
	else if (o == PG_OUTCOME_INFRA)
		pg_buf_puts(out, s->cancel_signal ? "cancelled" : "blocks failed");
	else if (inc)
		pg_buf_printf(out, "%zu inconclusive", inc);
	else
		pg_buf_puts(out, "no regression");
	pg_buf_puts(out, ", head vs base on the same ");
	pg_escape_md_cell(out, s->gpu && strcmp(s->gpu, "none") ? s->gpu : "machine");
	pg_buf_printf(out, ", %zu block pair%s", pairs_of(s), pairs_of(s) == 1 ? "" : "s");
}

static const char *label_of(const struct pg_metric *m)
{
	return m->label;
}

/* A metric's label, a change and e's interval, with the separators of a
 * table row or of a line. */
static void label_change_interval(struct pg_buf *out, const struct pg_metric *m, double change,
				  const struct pg_ab_est *e, const char *after_label,
				  const char *after_change)
{
	pg_escape_md_cell(out, label_of(m));
	pg_buf_puts(out, after_label);
	pct(out, change);
	pg_buf_puts(out, after_change);
	interval(out, e->lo, e->hi);
}

/* The whole run's row of metric j. */
static void whole_row(struct pg_buf *out, const struct pg_ab_summary *s, size_t j)
{
	const struct pg_ab_est *e = &s->d.whole[j];

	pg_buf_puts(out, "| ");
	label_change_interval(out, s->metrics[j], e->change, e, " | ", " | ");
	pg_buf_printf(out, " | ±%g%% | %zu", 100 * s->whole_tolerance[j], e->n);
	if (e->set_aside)
		pg_buf_printf(out, " (%zu set aside: a session off as a whole)", e->set_aside);
	pg_buf_printf(out, " | %s |\n", pg_ab_verdict_name(e->verdict));
}

/* "6", or "5 (1 client-bound left out)" */
static void pairs_cell(struct pg_buf *out, const struct pg_ab_est *e)
{
	pg_buf_printf(out, "%zu", e->n);
	if (e->left_out)
		pg_buf_printf(out, " (%zu client-bound left out)", e->left_out);
}

static bool needs_attention(enum pg_ab_verdict v)
{
	return v == PG_AB_REGRESSED || v == PG_AB_INCONCLUSIVE || v == PG_AB_MISSING ||
	       v == PG_AB_PENDING;
}

void pg_ab_points_table(struct pg_buf *out, const struct pg_ab_summary *s, bool attention_only)
{
	size_t P = s->points.n;
	bool header = false;

	/* regressions first, then the other rows needing attention, then the rest */
	for (int pass = 0; pass < 3; pass++)
		for (size_t p = 0; p < P; p++)
			for (size_t j = 0; j < s->n_metrics; j++) {
				const struct pg_ab_est *e = &s->d.points[j * P + p];
				int rank = e->verdict == PG_AB_REGRESSED ? 0
					   : needs_attention(e->verdict) ? 1
									 : 2;
				if (!e->applies || rank != pass || (attention_only && rank == 2))
					continue;
				if (!header) {
					pg_buf_puts(
						out,
						"\n| point | metric | base | head | change, 95% | "
						"beyond the run's change, 95% | tolerance | "
						"pairs | verdict |\n"
						"|---|---|--:|--:|--:|--:|--:|--:|---|\n");
					header = true;
				}
				pg_buf_puts(out, "| ");
				pg_escape_md_cell(out, s->points.v[p]);
				pg_buf_puts(out, " | ");
				pg_escape_md_cell(out, label_of(s->metrics[j]));
				pg_buf_puts(out, " | ");
				number(out, s->base[j * P + p]);
				pg_buf_puts(out, " | ");
				number(out, s->head[j * P + p]);
				pg_buf_puts(out, " | ");
				pct_interval(out, e->change, e->change_lo, e->change_hi);
				pg_buf_puts(out, " | ");
				pct_interval(out, e->effect, e->lo, e->hi);
				pg_buf_printf(out, " | ±%g%% | ", 100 * s->tolerance[j]);
				pairs_cell(out, e);
				pg_buf_printf(out, " | %s%s%s |\n", rank == 0 ? "**" : "",
					      pg_ab_verdict_name(e->verdict),
					      rank == 0 ? "**" : "");
			}
	if (header)
		pg_buf_putc(out, '\n');
}

static bool is_open(enum pg_ab_verdict v)
{
	return v == PG_AB_INCONCLUSIVE || v == PG_AB_PENDING;
}

/* One open row: its change and interval, the tolerance it needs, and what
 * would close it; returns the pairs in all that would (0: none would). */
static size_t open_row(struct pg_buf *out, const struct pg_ab_summary *s, const char *point,
		       size_t j, const struct pg_ab_est *e, double tol)
{
	struct pg_ab_opts o;
	bool hb = s->metrics[j]->direction == PG_HIGHER_IS_BETTER;
	double w, pass_at;
	size_t n;

	pg_ab_opts_init(&o);
	n = pg_ab_pairs_to_close(e, tol, &o, hb);
	pass_at = pg_ab_passing_tolerance(e, &o, hb);
	w = hb ? -log1p(e->effect) : log1p(e->effect);
	pg_buf_puts(out, "- ");
	pg_escape_md_cell(out, point);
	pg_buf_puts(out, " · ");
	label_change_interval(out, s->metrics[j], e->effect, e, ": ", " ");
	pg_buf_printf(out, " after %zu pairs, needs ±%g%%: ", e->n, 100 * tol);
	if (!n)
		pg_buf_puts(out,
			    "more pairs would not settle it (its change sits at the tolerance)");
	else
		pg_buf_printf(out, "about %zu more pair%s%s", n - e->n, n - e->n == 1 ? "" : "s",
			      w > log1p(tol) ? " to confirm a regression" : "");
	if (w <= log1p(tol) && !isnan(pass_at)) {
		char t[PG_FMT_DOUBLE_SIZE];
		/* rounded up to a tenth of a percent: it passes at what it says */
		pg_buf_printf(out, ", or a tolerance of ±%s%%",
			      pg_fmt_g(t, ceil(1000 * pass_at - 1e-9) / 10));
	}
	pg_buf_puts(out, "\n");
	return n;
}

/* The rows that kept the step from passing and what would close them: the
 * pairs the slowest of them needs (as max_blocks), or the tolerances. */
static void open_rows(struct pg_buf *out, const struct pg_ab_summary *s)
{
	size_t P = s->points.n, most = 0, open = 0;
	bool unsettled = false;

	for (size_t i = 0; i < s->n_metrics * (P + 1); i++) {
		const struct pg_ab_est *e = i < s->n_metrics ? &s->d.whole[i]
							     : &s->d.points[i - s->n_metrics];
		open += e->applies && is_open(e->verdict);
	}
	if (!open)
		return;
	pg_buf_printf(out,
		      "\n**Still open** (%zu row%s undecided after %zu pairs; with the estimate "
		      "and spread as measured)\n\n",
		      open, open == 1 ? "" : "s", pairs_of(s));
	for (size_t j = 0; j < s->n_metrics; j++)
		if (s->d.whole[j].applies && is_open(s->d.whole[j].verdict)) {
			size_t n = open_row(out, s, "Whole run", j, &s->d.whole[j],
					    s->whole_tolerance[j]);
			most = n > most ? n : most;
			unsettled = unsettled || !n;
		}
	for (size_t p = 0; p < P; p++)
		for (size_t j = 0; j < s->n_metrics; j++) {
			const struct pg_ab_est *e = &s->d.points[j * P + p];
			size_t n;
			if (!e->applies || !is_open(e->verdict))
				continue;
			n = open_row(out, s, s->points.v[p], j, e, s->tolerance[j]);
			most = n > most ? n : most;
			unsettled = unsettled || !n;
		}
	if (most > pairs_of(s))
		pg_buf_printf(out, "\nAbout %zu pairs would close %s: `max_blocks: %zu`.\n", most,
			      unsettled   ? "the others"
			      : open == 1 ? "it"
					  : "them all",
			      2 * most);
}

static void fmt_seconds(struct pg_buf *b, double sec)
{
	long t = (long)(sec + 0.5);
	if (t >= 3600)
		pg_buf_printf(b, "%ldh %02ldm", t / 3600, t / 60 % 60);
	else if (t >= 60)
		pg_buf_printf(b, "%ldm %02lds", t / 60, t % 60);
	else
		pg_buf_printf(b, "%lds", t);
}

void pg_ab_markdown(struct pg_buf *out, const struct pg_ab_summary *s)
{
	size_t attention = 0, rows = 0, P = s->points.n;
	bool any_whole = false;

	pg_ab_headline(out, s);
	pg_buf_puts(out, "\n\n");
	pg_buf_printf(out,
		      "%zu point%s, %zu block%s of at most %zu, interleaved base/head "
		      "(A B B A …), ",
		      P, P == 1 ? "" : "s", s->blocks, s->blocks == 1 ? "" : "s", s->max_blocks);
	fmt_seconds(out, s->seconds);
	pg_buf_puts(out, "; stopped: ");
	pg_escape_md_cell(out, s->stop ? s->stop : "–");
	pg_buf_puts(out, ".\n");
	for (int side = 0; side < 2; side++) {
		pg_buf_printf(out, "%s: ", side ? "Head" : "Base");
		pg_escape_md_cell(out,
				  s->side_desc[side] ? s->side_desc[side] : "the suite as written");
		pg_buf_puts(out, side ? ".\n" : "; ");
	}
	pg_buf_printf(
		out,
		"Decision: each change is the geometric mean of the paired head/base "
		"ratios with its 95%% interval (the figure the charts show); a point is judged on its change beyond "
		"the run's common change (a session's offset is shared by its points); "
		"%g%% false alarms per step over %zu hypotheses (Holm), split over %zu "
		"looks.\n",
		100 * s->d.alpha_look * (double)s->d.looks, s->d.hypotheses, s->d.looks);
	if (s->client_bound.n) {
		pg_buf_puts(out,
			    "Client-bound (the client, not the server, was the limit: its numbers "
			    "describe the client), left out of the estimates with their pair: ");
		for (size_t i = 0; i < s->client_bound.n; i++) {
			pg_buf_puts(out, i ? ", " : "");
			pg_escape_md_cell(out, s->client_bound.v[i]);
		}
		pg_buf_puts(out, ".\n");
	}
	for (size_t i = 0; i < s->errors.n; i++) {
		pg_buf_puts(out, "\n- ");
		pg_escape_md_cell(out, s->errors.v[i]);
		if (i + 1 == s->errors.n)
			pg_buf_putc(out, '\n');
	}

	for (size_t j = 0; j < s->n_metrics; j++)
		any_whole = any_whole || s->d.whole[j].applies;
	if (any_whole) {
		pg_buf_puts(out,
			    "\n**Whole run** (the change common to every point)\n\n"
			    "| metric | change | 95% interval | tolerance | pairs | verdict |\n"
			    "|---|--:|--:|--:|--:|---|\n");
		for (size_t j = 0; j < s->n_metrics; j++)
			if (s->d.whole[j].applies)
				whole_row(out, s, j);
	}
	open_rows(out, s);
	for (size_t i = 0; i < s->n_metrics * P; i++) {
		if (!s->d.points[i].applies)
			continue;
		rows++;
		attention += needs_attention(s->d.points[i].verdict);
	}
	if (attention) {
		pg_buf_puts(out, "\n**Points needing attention**\n");
		pg_ab_points_table(out, s, true);
	}
	pg_buf_printf(out, "\n<details><summary>Every point (%zu row%s)</summary>\n", rows,
		      rows == 1 ? "" : "s");
	pg_ab_points_table(out, s, false);
	pg_buf_puts(out, "\n</details>\n");
}

static json_t *jnum(double v)
{
	return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

static json_t *est_json(const struct pg_ab_est *e)
{
	json_t *o = json_object();
	json_object_set_new(o, "change", jnum(e->change));
	json_object_set_new(o, "change_lo", jnum(e->change_lo));
	json_object_set_new(o, "change_hi", jnum(e->change_hi));
	json_object_set_new(o, "effect", jnum(e->effect));
	json_object_set_new(o, "lo", jnum(e->lo));
	json_object_set_new(o, "hi", jnum(e->hi));
	json_object_set_new(o, "sd", jnum(e->sd));
	json_object_set_new(o, "df", jnum(e->df));
	json_object_set_new(o, "p_value", jnum(e->p_value));
	json_object_set_new(o, "p_adjusted", jnum(e->p_adjusted));
	json_object_set_new(o, "pairs", json_integer((json_int_t)e->n));
	json_object_set_new(o, "pairs_left_out", json_integer((json_int_t)e->left_out));
	json_object_set_new(o, "verdict", json_string(pg_ab_verdict_name(e->verdict)));
	return o;
}

/* What a row rests on, in the gate's verdict.json shape (compare.h
 * pg_cmp_basis): the interleaved block pairs of this run, base against
 * head on one agent. */
static json_t *basis_json(const struct pg_ab_summary *s, const struct pg_ab_est *e)
{
	json_t *o = json_object();

	json_object_set_new(o, "kind", json_string("ab"));
	json_object_set_new(o, "runs", json_integer((json_int_t)e->n));
	json_object_set_new(o, "repeats", json_null());
	json_object_set_new(o, "commits", json_null());
	json_object_set_new(o, "dates", json_null());
	json_object_set_new(o, "source",
			    s->side_desc[0] ? json_string(s->side_desc[0]) : json_null());
	json_object_set_new(o, "line", json_null());
	return o;
}

static void metric_keys(json_t *o, const struct pg_metric *m)
{
	json_object_set_new(o, "metric", json_string(m->id));
	json_object_set_new(o, "label", json_string(m->label));
	json_object_set_new(o, "unit", json_string(m->unit));
	json_object_set_new(o, "direction",
			    json_string(m->direction == PG_HIGHER_IS_BETTER ? "higher" : "lower"));
}

json_t *pg_ab_json(const struct pg_ab_summary *s)
{
	json_t *o = json_object(), *dec = json_object(), *sides = json_object();
	json_t *whole = json_array(), *rows = json_array(), *errors = json_array();
	struct pg_buf head = PG_BUF_INIT;
	size_t P = s->points.n;
	int outcome = pg_ab_outcome(s);

	pg_ab_headline(&head, s);
	json_object_set_new(o, "mode", json_string("ab"));
	json_object_set_new(o, "gpu", json_string(s->gpu ? s->gpu : "none"));
	json_object_set_new(o, "verdict", json_string(pg_outcome_name(outcome)));
	json_object_set_new(o, "exit_code",
			    json_integer(pg_gate_exit_code((enum pg_outcome)outcome, true)));
	json_object_set_new(o, "headline", json_string(head.ptr));
	json_object_set_new(o, "blocks", json_integer((json_int_t)s->blocks));
	json_object_set_new(o, "pairs", json_integer((json_int_t)pairs_of(s)));
	json_object_set_new(o, "max_blocks", json_integer((json_int_t)s->max_blocks));
	json_object_set_new(o, "stopped", s->stop ? json_string(s->stop) : json_null());
	json_object_set_new(o, "seconds", jnum(s->seconds));
	json_object_set_new(dec, "false_alarm", jnum(s->d.alpha_look * (double)s->d.looks));
	json_object_set_new(dec, "hypotheses", json_integer((json_int_t)s->d.hypotheses));
	json_object_set_new(dec, "looks", json_integer((json_int_t)s->d.looks));
	json_object_set_new(dec, "alpha_look", jnum(s->d.alpha_look));
	json_object_set_new(dec, "correction", json_string("holm"));
	json_object_set_new(dec, "confidence", json_real(0.95));
	json_object_set_new(o, "decision", dec);
	json_object_set_new(sides, "base",
			    s->side_desc[0] ? json_string(s->side_desc[0]) : json_null());
	json_object_set_new(sides, "head",
			    s->side_desc[1] ? json_string(s->side_desc[1]) : json_null());
	json_object_set_new(o, "sides", sides);
	for (size_t j = 0; j < s->n_metrics; j++) {
		json_t *w, *est;
		if (!s->d.whole[j].applies)
			continue;
		w = json_object();
		metric_keys(w, s->metrics[j]);
		json_object_set_new(w, "tolerance", jnum(s->whole_tolerance[j]));
		json_object_set_new(w, "set_aside",
				    json_integer((json_int_t)s->d.whole[j].set_aside));
		est = est_json(&s->d.whole[j]);
		json_object_update(w, est);
		json_decref(est);
		json_array_append_new(whole, w);
	}
	json_object_set_new(o, "whole_run", whole);
	for (size_t p = 0; p < P; p++)
		for (size_t j = 0; j < s->n_metrics; j++) {
			const struct pg_ab_est *e = &s->d.points[j * P + p];
			json_t *r, *est;
			if (!e->applies)
				continue;
			r = json_object();
			json_object_set_new(r, "point", json_string(s->points.v[p]));
			metric_keys(r, s->metrics[j]);
			json_object_set_new(r, "base", jnum(s->base[j * P + p]));
			json_object_set_new(r, "head", jnum(s->head[j * P + p]));
			json_object_set_new(r, "tolerance", jnum(s->tolerance[j]));
			est = est_json(e);
			json_object_update(r, est);
			json_decref(est);
			json_object_set_new(r, "basis", basis_json(s, e));
			json_array_append_new(rows, r);
		}
	json_object_set_new(o, "rows", rows);
	for (size_t i = 0; i < s->errors.n; i++)
		json_array_append_new(errors, json_string(s->errors.v[i]));
	json_object_set_new(o, "errors", errors);
	{
		json_t *cb = json_array();
		for (size_t i = 0; i < s->client_bound.n; i++)
			json_array_append_new(cb, json_string(s->client_bound.v[i]));
		json_object_set_new(o, "client_bound_left_out", cb);
	}
	pg_buf_release(&head);
	return o;
}
