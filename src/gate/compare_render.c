/* The comparison as markdown (annotations, artifacts) and as verdict JSON. */
#include "gate/compare.h"
#include "gate/attention.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/escape.h"
#include "base/jsonw.h"
#include "base/strutil.h"
#include "report/charts.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void num_cell(struct pg_buf *out, double v)
{
	char g[PG_FMT_DOUBLE_SIZE];
	if (isnan(v))
		pg_buf_puts(out, "—");
	else
		pg_buf_puts(out, pg_fmt_table(g, v));
}

static void pct_cell(struct pg_buf *out, double rel, bool sign)
{
	if (!isfinite(rel)) {
		pg_buf_puts(out, "—");
		return;
	}
	if (sign) {
		char p[PG_FMT_DOUBLE_SIZE];
		pg_buf_puts(out, pg_fmt_pct(p, rel));
	} else {
		pg_buf_printf(out, "%.1f%%", round(rel * 1000) / 10);
	}
}

static void metric_cell(struct pg_buf *out, const struct pg_metric *m)
{
	if (!m) {
		pg_buf_puts(out, "all metrics");
		return;
	}
	pg_escape_md_cell(out, m->label);
	if (m->unit[0])
		pg_buf_printf(out, " (%s)", m->unit);
}

static void verdict_cell(struct pg_buf *out, const struct pg_cmp_row *r)
{
	const char *v = pg_verdict_name(r->verdict);

	if (r->outcome == PG_OUTCOME_FAIL || r->outcome == PG_OUTCOME_INFRA)
		pg_buf_printf(out, "**%s**", v);
	else
		pg_buf_puts(out, v);
	if (r->metric && r->verdict == PG_VERDICT_REGRESSED && r->outcome == PG_OUTCOME_WARN)
		pg_buf_puts(out, " (warn)");
}

static const char table_head[] =
	"| Test | Metric | Baseline | Current | Change | Tolerance | Verdict | Note |\n"
	"|---|---|--:|--:|--:|--:|---|---|\n";

/* With a confirmation re-run: the first run and the re-run side by side. */
static const char table_head_confirmed[] =
	"| Test | Metric | Baseline | First run | Re-run | Tolerance | Verdict | Note |\n"
	"|---|---|--:|--:|--:|--:|---|---|\n";

/* "2310 (-5.1%)", or a dash. */
static void side_cell(struct pg_buf *out, const struct pg_cmp_side *sd)
{
	if (isnan(sd->current)) {
		pg_buf_puts(out, "—");
		return;
	}
	num_cell(out, sd->current);
	if (isfinite(sd->change)) {
		pg_buf_puts(out, " (");
		pct_cell(out, sd->change, true);
		pg_buf_puts(out, ")");
	}
}

static void table_row(struct pg_buf *out, const struct pg_cmp_row *r, bool confirmed)
{
	pg_buf_puts(out, "| ");
	pg_escape_md_cell(out, r->point);
	pg_buf_puts(out, " | ");
	metric_cell(out, r->metric);
	pg_buf_puts(out, " | ");
	num_cell(out, r->baseline);
	pg_buf_puts(out, " | ");
	if (confirmed) {
		if (isnan(r->first.current))
			num_cell(out, r->current);
		else
			side_cell(out, &r->first);
		pg_buf_puts(out, " | ");
		side_cell(out, &r->rerun);
	} else {
		num_cell(out, r->current);
		pg_buf_puts(out, " | ");
		pct_cell(out, r->change, true);
	}
	pg_buf_puts(out, " | ");
	pct_cell(out, pg_attention_threshold(r), false);
	pg_buf_puts(out, " | ");
	verdict_cell(out, r);
	pg_buf_puts(out, " | ");
	pg_escape_md_cell(out, r->note);
	pg_buf_puts(out, " |\n");
}

void pg_comparison_headline(struct pg_buf *out, const struct pg_comparison *c)
{
	struct pg_gate_counts k;
	const char *word = "PASS";

	if (c->suspect)
		word = "SUSPECT";
	else if (c->outcome == PG_OUTCOME_FAIL)
		word = "FAIL";
	else if (c->outcome == PG_OUTCOME_INFRA)
		word = "ERROR";
	else if (c->outcome == PG_OUTCOME_WARN)
		word = "PASS with warnings";
	pg_gate_count(&k, c);
	pg_buf_printf(out, "**perfgate: %s** — ", word);
	pg_escape_md_text(out, c->gpu ? c->gpu : "this GPU");
	pg_buf_puts(out, ": ");
	pg_gate_counts_phrase(out, &k);
	if (c->outcome == PG_OUTCOME_FAIL && !c->suspect)
		pg_buf_puts(out, c->with_confirmation ? " · confirmed by a re-run"
						      : " · not confirmed by a re-run");
}

/* The metrics behind the headline's tests: a regressed metric that only
 * warns is counted apart from those that fail. */
static void summary_line(struct pg_buf *out, const struct pg_comparison *c)
{
	size_t warn_only = 0;
	size_t extra = c->not_in_suite.n + c->aged_out.n;

	for (size_t i = 0; i < c->n; i++)
		warn_only += c->rows[i].verdict == PG_VERDICT_REGRESSED &&
			     c->rows[i].outcome != PG_OUTCOME_FAIL;
	pg_buf_puts(out, "Baseline: ");
	pg_escape_md_cell(out, c->baseline_source ? c->baseline_source : "none");
	if (c->baseline_kind)
		pg_buf_printf(out, " (%s)", c->baseline_kind);
	pg_buf_printf(out, " · %zu metric%s compared, %zu gating", c->n, c->n == 1 ? "" : "s",
		      c->gated);
	for (int v = 0; v < PG_VERDICT_COUNT; v++) {
		size_t n = c->counts[v];
		if (v == PG_VERDICT_REGRESSED)
			n -= warn_only;
		if (n)
			pg_buf_printf(out, " · %zu %s", n, pg_verdict_name(v));
		if (v == PG_VERDICT_REGRESSED && warn_only)
			pg_buf_printf(out, " · %zu worse (warn only)", warn_only);
	}
	if (extra) {
		pg_buf_puts(out, " (not compared:");
		if (c->not_in_suite.n)
			pg_buf_printf(out, " %zu baseline point%s not in this suite",
				      c->not_in_suite.n, c->not_in_suite.n == 1 ? "" : "s");
		if (c->aged_out.n)
			pg_buf_printf(out, "%s %zu aged out of the history",
				      c->not_in_suite.n ? "," : "", c->aged_out.n);
		pg_buf_puts(out, ")");
	}
	pg_buf_puts(out, "\n");
}

static void fmt_budget(struct pg_buf *out, double v)
{
	char g[PG_FMT_DOUBLE_SIZE];
	pg_buf_printf(out, "%s%%", pg_fmt_g(g, round(v * 10000) / 100));
}

/* How the step was decided, in one line; then what it can catch. */
static void decision_line(struct pg_buf *out, const struct pg_comparison *c)
{
	static const char *const class_names[3] = { "throughput", "median latencies", "tails" };
	size_t tolerance_only = 0, beyond_common = 0;
	bool any = false;

	for (size_t i = 0; i < c->n; i++) {
		tolerance_only += c->rows[i].method == PG_METHOD_TOLERANCE &&
				  isnan(c->rows[i].p_value);
		beyond_common += c->rows[i].method == PG_METHOD_STEP ||
				 c->rows[i].method == PG_METHOD_CROSSWISE;
	}
	if (!c->hypotheses && !tolerance_only)
		return;
	pg_buf_puts(out, "Decision: ");
	if (c->hypotheses) {
		pg_buf_puts(out, "at most ");
		fmt_budget(out, c->step_false_alarm);
		pg_buf_printf(out,
			      " of clean builds fail, over %zu hypothes%s (Holm; a test point's "
			      "metrics move together and are one",
			      c->hypotheses, c->hypotheses == 1 ? "is" : "es");
		if (c->budget_whole_run > 0 && c->budget_points > 0) {
			pg_buf_puts(out, "; ");
			fmt_budget(out, c->budget_points);
			pg_buf_puts(out, " for test points, ");
			fmt_budget(out, c->budget_whole_run);
			pg_buf_puts(out, " for whole-run changes");
		}
		pg_buf_puts(out, ")");
		if (beyond_common)
			pg_buf_puts(out, "; each point is judged beyond the run's common change");
		if (tolerance_only)
			pg_buf_printf(
				out,
				"; %zu comparison%s with nothing to measure the noise (judged by "
				"the tolerance alone)",
				tolerance_only, tolerance_only == 1 ? "" : "s");
	} else {
		pg_buf_puts(out, "nothing measures the noise (one value against one value, no "
				 "repeats): changes beyond the tolerance are shown, never failed");
	}
	pg_buf_puts(out, c->with_confirmation
				 ? "; a flagged regression must reproduce on the re-run alone.\n"
				 : "; a flagged regression is confirmed by a re-run.\n");
	for (int k = 0; k < 3; k++) {
		char g[PG_FMT_DOUBLE_SIZE];
		if (isnan(c->catchable[k]))
			continue;
		pg_buf_puts(out, any ? ", " : "Smallest change one point can fail on: ");
		pg_buf_printf(out, "%s %s%%", class_names[k],
			      pg_fmt_g(g, round(c->catchable[k] * 1000) / 10));
		any = true;
	}
	if (any)
		pg_buf_puts(out, " (median over the gated rows).\n");
}

/* The cold first runs the samples left out (results/cold.h), in one line. */
static void cold_line(struct pg_buf *out, const struct pg_comparison *c)
{
	if (!c->cold_points.n)
		return;
	pg_buf_puts(out, "Cold first runs: ");
	for (size_t i = 0; i < c->cold_points.n; i++) {
		pg_buf_puts(out, i ? "; " : "");
		pg_escape_md_code(out, c->cold_points.v[i]);
		pg_buf_puts(out, " (");
		pg_escape_md_text(out, c->cold_notes.v[i]);
		pg_buf_puts(out, ")");
	}
	pg_buf_puts(out, ".\n");
}

static bool common_matters(const struct pg_cmp_common *cc)
{
	return cc->verdict != PG_VERDICT_UNCHANGED || cc->note;
}

static void whole_run_table(struct pg_buf *out, const struct pg_comparison *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->n_commons; i++)
		n += common_matters(&c->commons[i]);
	if (!n)
		return;
	pg_buf_puts(out,
		    c->with_confirmation
			    ? "\n| Whole run | First run | Re-run | Job-to-job spread | "
			      "Tolerance | Verdict | Note |\n|---|--:|--:|--:|--:|---|---|\n"
			    : "\n| Whole run | Change | Job-to-job spread | Tolerance | Verdict | "
			      "Note |\n|---|--:|--:|--:|---|---|\n");
	for (size_t i = 0; i < c->n_commons; i++) {
		const struct pg_cmp_common *cc = &c->commons[i];
		if (!common_matters(cc))
			continue;
		pg_buf_puts(out, "| ");
		metric_cell(out, cc->metric);
		if (c->jobs > 1)
			pg_buf_printf(out, ", job %zu", cc->job + 1);
		pg_buf_puts(out, " | ");
		pct_cell(out, cc->first.change, true);
		if (c->with_confirmation) {
			pg_buf_puts(out, " | ");
			pct_cell(out, cc->rerun.n ? cc->rerun.change : NAN, true);
		}
		pg_buf_puts(out, " | ");
		pct_cell(out, cc->spread, false);
		pg_buf_puts(out, " | ");
		pct_cell(out, cc->tolerance, false);
		pg_buf_puts(out, " | ");
		if (cc->outcome == PG_OUTCOME_FAIL)
			pg_buf_printf(out, "**%s**", pg_verdict_name(cc->verdict));
		else
			pg_buf_puts(out, pg_verdict_name(cc->verdict));
		pg_buf_puts(out, " | ");
		pg_escape_md_cell(out, cc->note);
		pg_buf_puts(out, " |\n");
	}
}

void pg_comparison_attention_table(struct pg_buf *out, const struct pg_comparison *c)
{
	size_t n;
	const struct pg_cmp_row **rows = pg_attention_rows(c, &n);

	if (n) {
		pg_buf_puts(out, c->with_confirmation ? table_head_confirmed : table_head);
		for (size_t i = 0; i < n; i++)
			table_row(out, rows[i], c->with_confirmation);
	}
	free(rows);
}

/* The evidence behind a regression: the baseline it was measured against,
 * why its threshold is what it is, and how it was decided. */
static bool evidence_row(const struct pg_cmp_row *r)
{
	/* against a baseline (an SLO's bound is its own evidence) */
	return r->metric && r->basis && isfinite(pg_attention_threshold(r)) &&
	       pg_attention_row(r) &&
	       (r->verdict == PG_VERDICT_REGRESSED || r->verdict == PG_VERDICT_NOT_REPRODUCED);
}

const struct pg_cmp_row **pg_comparison_evidence_rows(const struct pg_comparison *c, size_t *n,
						      size_t *total)
{
	size_t m;
	const struct pg_cmp_row **rows = pg_attention_rows(c, &m);

	*n = *total = 0;
	for (size_t i = 0; i < m; i++)
		if (evidence_row(rows[i])) {
			if (*n < PG_EVIDENCE_MAX)
				rows[(*n)++] = rows[i];
			(*total)++;
		}
	return rows;
}

static bool name_in(const char *name, char *const *v, size_t n, size_t skip)
{
	for (size_t j = 0; j < n; j++)
		if (j != skip && v[j] && !strcmp(v[j], name))
			return true;
	return false;
}

size_t pg_evidence_chart_names(const struct pg_cmp_row *const *rows, size_t n, char **names)
{
	/* each row's own name, "evidence/<stem>.svg" */
	char **own = pg_xcalloc(n ? n : 1, sizeof(char *));
	size_t tried = 0;

	for (size_t i = 0; i < n; i++) {
		struct pg_buf name = PG_BUF_INIT;
		char *stem;
		if ((!rows[i]->trail && !rows[i]->spread) || !rows[i]->metric)
			continue;
		pg_buf_printf(&name, "%s-%s", rows[i]->point, rows[i]->metric->id);
		stem = pg_chart_stem(name.ptr);
		pg_buf_reset(&name);
		pg_buf_printf(&name, "evidence/%s.svg", stem);
		own[i] = pg_buf_detach(&name);
		free(stem);
	}
	/* one pass: a row keeps its own name unless an earlier row took it
	 * (names that differ only in what a file name cannot hold); then
	 * "-<i+1>", "-<i+1>-2"... until a name no row took and no other row
	 * owns */
	for (size_t i = 0; i < n; i++) {
		struct pg_buf path = PG_BUF_INIT;
		size_t stem_len;

		names[i] = NULL;
		if (!own[i])
			continue;
		stem_len = strlen(own[i]) - strlen(".svg");
		pg_buf_puts(&path, own[i]);
		tried++;
		for (size_t k = 1; name_in(path.ptr, names, i, SIZE_MAX) ||
				   (k > 1 && name_in(path.ptr, own, n, i));
		     k++) {
			pg_buf_reset(&path);
			pg_buf_add(&path, own[i], stem_len);
			pg_buf_printf(&path, "-%zu", i + 1);
			if (k > 1)
				pg_buf_printf(&path, "-%zu", k);
			pg_buf_puts(&path, ".svg");
			tried++;
		}
		names[i] = pg_buf_detach(&path);
	}
	for (size_t i = 0; i < n; i++)
		free(own[i]);
	free(own);
	return tried;
}

/* The change a point judged against the run's other points shares with
 * them, in words, or nothing. */
static void shared_change(struct pg_buf *out, const struct pg_cmp_row *r)
{
	if (!isfinite(r->run_change))
		return;
	pg_buf_puts(out, " (");
	pct_cell(out, r->run_change, true);
	pg_buf_puts(out, ")");
}

/* How the row was decided, in plain words: what its change was tested
 * against, and how likely that noise alone gives so large a change. */
static void evidence_method(struct pg_buf *out, const struct pg_cmp_row *r)
{
	switch (r->method) {
	case PG_METHOD_STEP:
		pg_buf_puts(out, " Tested against how much main's runs vary, after taking out the "
				 "change every point of this run shares");
		shared_change(out, r);
		break;
	case PG_METHOD_HISTORY:
		pg_buf_puts(out, " Tested against how much main's runs vary from one to the next");
		break;
	case PG_METHOD_CROSSWISE:
		pg_buf_puts(out, " Tested against the changes of this run's other points, after "
				 "taking out the change they all share");
		shared_change(out, r);
		break;
	case PG_METHOD_TOLERANCE:
		if (r->noise_source) {
			/* a thresholds value with repeats (or its recorded
			 * noise) to test the change against */
			pg_buf_printf(out, " Tested against %s", r->noise_source);
			break;
		}
		/* no test, so no interval either: said once, here */
		pg_buf_puts(out, " Decided by the limit alone: the gate had no spread to test the "
				 "change against (that takes a git history, or the metric at 5 "
				 "points of the run), so there is no interval either.");
		return;
	case PG_METHOD_NONE:
		return;
	}
	if (isfinite(r->p_value)) {
		pg_buf_printf(out, ": noise alone gives so large a change with p = %.2g",
			      r->p_value);
		if (isfinite(r->p_adjusted))
			pg_buf_printf(out, " (%.2g allowing for the step's other tests)",
				      r->p_adjusted);
	}
	pg_buf_puts(out, ".");
}

/* The interval of the change the gate judged, or why there is none. */
static void evidence_interval(struct pg_buf *out, const struct pg_cmp_row *r)
{
	bool own = r->method == PG_METHOD_STEP || r->method == PG_METHOD_CROSSWISE;

	if ((r->method == PG_METHOD_TOLERANCE && !r->noise_source) || r->method == PG_METHOD_NONE)
		return;
	if (!isfinite(r->ci_low) || !isfinite(r->ci_high)) {
		pg_buf_printf(out, " No interval: %s.",
			      r->first.ci_missing ? r->first.ci_missing
						  : "too few runs to measure the run-to-run noise");
		return;
	}
	pg_buf_printf(out, " %g%% interval of %s: ", PG_CI_LEVEL * 100,
		      own ? "this point's own change" : "the change");
	pct_cell(out, r->ci_low, true);
	pg_buf_puts(out, " to ");
	pct_cell(out, r->ci_high, true);
	if (r->rerun.n && isfinite(r->rerun.ci_low) && isfinite(r->rerun.ci_high)) {
		pg_buf_puts(out, "; on the re-run ");
		pct_cell(out, r->rerun.ci_low, true);
		pg_buf_puts(out, " to ");
		pct_cell(out, r->rerun.ci_high, true);
	}
	pg_buf_puts(out, ".");
}

/* "`point` · Metric (unit)" */
static void evidence_name(struct pg_buf *out, const struct pg_cmp_row *r)
{
	pg_escape_md_code(out, r->point);
	pg_buf_puts(out, " · ");
	metric_cell(out, r->metric);
}

/* "Fails beyond +4.0%" (or "Warns"), the threshold that decided the row. */
static void evidence_limit(struct pg_buf *out, const struct pg_cmp_row *r, bool capital)
{
	const char *sign = r->metric->direction == PG_HIGHER_IS_BETTER ? "-" : "+";
	bool fails = pg_attention_fails(r);

	if (capital)
		pg_buf_puts(out, fails ? "Fails" : "Warns");
	else
		pg_buf_puts(out, fails ? "fails" : "warns");
	pg_buf_printf(out, " beyond %s", sign);
	pct_cell(out, pg_attention_threshold(r), false);
}

void pg_comparison_evidence_line(struct pg_buf *out, const struct pg_cmp_row *r)
{
	evidence_name(out, r);
	pg_buf_puts(out, ": ");
	num_cell(out, r->baseline);
	pg_buf_puts(out, " → ");
	num_cell(out, r->current);
	pg_buf_puts(out, " (");
	pct_cell(out, r->change, true);
	pg_buf_puts(out, "), ");
	evidence_limit(out, r, false);
	if (r->rerun.n) {
		pg_buf_puts(out, r->verdict == PG_VERDICT_NOT_REPRODUCED ? "; not reproduced: "
									 : "; reproduced: ");
		pg_buf_puts(out, "the re-run ");
		if (isfinite(r->rerun.change))
			pct_cell(out, r->rerun.change, true);
		else
			pg_buf_puts(out, "has no value");
	} else if (r->needs_confirmation) {
		pg_buf_puts(out, "; not re-run yet");
	}
	pg_buf_puts(out, ".");
}

void pg_comparison_evidence_text(struct pg_buf *out, const struct pg_cmp_row *r)
{
	const struct pg_rule *rule = &r->rule;
	double thr = pg_attention_threshold(r);

	evidence_name(out, r);
	pg_buf_puts(out, ": ");
	num_cell(out, r->current);
	pg_buf_puts(out, " against ");
	num_cell(out, r->baseline);
	pg_buf_puts(out, " (");
	pct_cell(out, r->change, true);
	pg_buf_puts(out, ")");
	if (r->basis) {
		pg_buf_puts(out, ", the ");
		pg_escape_md_text(out, r->basis);
	}
	pg_buf_puts(out, ". ");
	evidence_limit(out, r, true);
	if (!rule->gate && rule->escalate > 0 && thr == rule->escalate)
		pg_buf_puts(out, " (a warn-only metric's escalation threshold)");
	else if (isfinite(r->tolerance) && r->tolerance > rule->tolerance * (1 + 1e-9) &&
		 rule->noise_sigmas > 0) {
		/* compare_step.c: tolerance = expm1(noise_sigmas * noise) */
		pg_buf_puts(out, " (the policy's ");
		pct_cell(out, rule->tolerance, false);
		pg_buf_printf(out, ", widened to %g × the ", rule->noise_sigmas);
		pct_cell(out, log1p(r->tolerance) / rule->noise_sigmas, false);
		pg_buf_puts(out, " the baseline's runs vary by)");
	} else if (isfinite(r->tolerance) && r->tolerance < rule->tolerance * (1 - 1e-9) &&
		   !rule->tolerance_set) {
		/* compare_step.c: a quiet history narrows the default */
		pg_buf_puts(out, " (the default ");
		pct_cell(out, rule->tolerance, false);
		pg_buf_printf(out, ", narrowed to %g × the noise this baseline measures, ",
			      PG_NARROW_SIGMAS);
		pg_buf_puts(out, "at least ");
		pct_cell(out, PG_MIN_TOLERANCE, false);
		pg_buf_puts(out, ")");
	} else {
		pg_buf_puts(out, " (the policy's tolerance)");
	}
	pg_buf_puts(out, ".");
	evidence_method(out, r);
	evidence_interval(out, r);
}

const char *pg_comparison_chart_title(const struct pg_cmp_row *r)
{
	if (r->trail)
		return "Trend of the baseline's runs";
	return r->method == PG_METHOD_CROSSWISE ? "The change against the run's other points"
						: "The change against the tolerance";
}

const char *pg_comparison_no_chart(const struct pg_cmp_row *r)
{
	if (r->base_of.kind == PG_BASIS_HISTORY)
		return "the history has no runs of main recorded for it";
	if (!isfinite(r->change) || !(r->baseline > 0))
		return "no change from a baseline value to draw";
	return "it was not judged against the tolerance or the run's other points";
}

static void file_link(struct pg_buf *out, const char *text, const char *path, bool *any)
{
	if (!path)
		return;
	pg_buf_puts(out, *any ? " · [" : " Files: [");
	pg_buf_puts(out, text);
	pg_buf_puts(out, "](");
	pg_escape_url_path(out, path);
	pg_buf_puts(out, ")");
	*any = true;
}

static void evidence_item(struct pg_buf *out, const struct pg_cmp_row *r)
{
	const struct pg_cmp_files *f = r->files;
	bool any = false;

	pg_buf_puts(out, "- ");
	pg_comparison_evidence_text(out, r);
	if (r->chart)
		/* perfgate's own file name (pg_chart_stem): nothing to escape */
		pg_buf_printf(out, " [%s](%s)", pg_comparison_chart_title(r), r->chart);
	else
		pg_buf_printf(out, " No chart: %s.", pg_comparison_no_chart(r));
	if (f) {
		file_link(out, "result", f->result, &any);
		file_link(out, "server log", f->log, &any);
		file_link(out, "re-run's result", f->rerun_result, &any);
		file_link(out, "re-run's server log", f->rerun_log, &any);
		if (any)
			pg_buf_puts(out, ".");
	}
	pg_buf_puts(out, "\n");
}

static void evidence(struct pg_buf *out, const struct pg_comparison *c)
{
	size_t n, total;
	const struct pg_cmp_row **rows = pg_comparison_evidence_rows(c, &n, &total);

	if (n) {
		pg_buf_puts(out, "\nEvidence:\n\n");
		for (size_t i = 0; i < n; i++)
			evidence_item(out, rows[i]);
		if (total > n)
			pg_buf_printf(out, "- and %zu more (verdict.json has every row).\n",
				      total - n);
	}
	free(rows);
}

void pg_comparison_markdown(struct pg_buf *out, const struct pg_comparison *c)
{
	size_t n_rest = 0;

	pg_comparison_headline(out, c);
	pg_buf_puts(out, "\n\n");
	if (c->suspect) {
		pg_buf_puts(out, "Job health: ");
		pg_escape_md_text(out, c->suspect);
		pg_buf_puts(out, "\n\n");
	}
	summary_line(out, c);
	decision_line(out, c);
	cold_line(out, c);
	whole_run_table(out, c);
	if (c->rerun.n) {
		pg_buf_puts(out, "\nRe-run to confirm: ");
		for (size_t i = 0; i < c->rerun.n; i++) {
			if (i)
				pg_buf_puts(out, ", ");
			pg_escape_md_code(out, c->rerun.v[i]);
		}
		pg_buf_puts(out, "\n");
	}
	{
		struct pg_buf table = PG_BUF_INIT;
		pg_comparison_attention_table(&table, c);
		if (table.len) {
			pg_buf_puts(out, "\n");
			pg_buf_add(out, table.ptr, table.len);
		}
		pg_buf_release(&table);
	}
	evidence(out, c);
	for (size_t i = 0; i < c->n; i++)
		n_rest += !pg_attention_row(&c->rows[i]);
	if (n_rest) {
		pg_buf_printf(out, "\n<details>\n<summary>%zu other comparison%s</summary>\n\n",
			      n_rest, n_rest == 1 ? "" : "s");
		pg_buf_puts(out, c->with_confirmation ? table_head_confirmed : table_head);
		for (size_t i = 0; i < c->n; i++)
			if (!pg_attention_row(&c->rows[i]))
				table_row(out, &c->rows[i], c->with_confirmation);
		pg_buf_puts(out, "\n</details>\n");
	}
}

/* ------------------------------------------------------------------ */

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *side_json(const struct pg_cmp_side *sd)
{
	json_t *o = json_object();

	json_object_set_new(o, "current", num_or_null(sd->current));
	json_object_set_new(o, "change", num_or_null(sd->change));
	json_object_set_new(o, "effect", num_or_null(sd->effect));
	json_object_set_new(o, "p_value", num_or_null(sd->p_value));
	json_object_set_new(o, "p_adjusted", num_or_null(sd->p_adjusted));
	json_object_set_new(o, "n", json_integer((json_int_t)sd->n));
	json_object_set_new(o, "flagged", json_boolean(sd->flagged));
	json_object_set_new(o, "ci_low", num_or_null(sd->ci_low));
	json_object_set_new(o, "ci_high", num_or_null(sd->ci_high));
	return o;
}

/* What the row's baseline rests on: {kind, runs, repeats, commits,
 * dates, source, line}, null without a baseline. */
static json_t *basis_json(const struct pg_cmp_basis *b)
{
	json_t *o;

	if (b->kind == PG_BASIS_NONE)
		return json_null();
	o = json_object();
	json_object_set_new(o, "kind", json_string(pg_basis_kind_name(b->kind)));
	json_object_set_new(o, "runs", json_integer((json_int_t)b->runs));
	json_object_set_new(o, "repeats",
			    b->repeats ? json_integer((json_int_t)b->repeats) : json_null());
	json_object_set_new(o, "commits",
			    b->first_commit || b->last_commit
				    ? json_pack("[oo]", str_or_null(b->first_commit),
						str_or_null(b->last_commit))
				    : json_null());
	json_object_set_new(
		o, "dates",
		b->first_date || b->last_date
			? json_pack("[oo]", str_or_null(b->first_date), str_or_null(b->last_date))
			: json_null());
	json_object_set_new(o, "source", str_or_null(b->source));
	json_object_set_new(o, "line", b->line > 0 ? json_integer(b->line) : json_null());
	return o;
}

static json_t *row_json(const struct pg_cmp_row *r)
{
	json_t *o = json_object();
	const struct pg_metric *m = r->metric;

	json_object_set_new(o, "point", json_string(r->point));
	json_object_set_new(o, "test", str_or_null(r->test));
	json_object_set_new(o, "suite", str_or_null(pg_suite_kind_name(r->suite)));
	if (isinf(r->qps))
		json_object_set_new(o, "qps", json_string("inf"));
	else
		json_object_set_new(o, "qps", num_or_null(r->qps));
	json_object_set_new(o, "max_concurrency",
			    r->max_concurrency > 0 ? json_integer(r->max_concurrency)
						   : json_null());
	json_object_set_new(o, "metric", m ? json_string(m->id) : json_null());
	json_object_set_new(o, "label", m ? json_string(m->label) : json_null());
	json_object_set_new(o, "unit", m ? json_string(m->unit) : json_null());
	json_object_set_new(
		o, "direction",
		!m ? json_null()
		   : json_string(m->direction == PG_HIGHER_IS_BETTER ? "higher" : "lower"));
	json_object_set_new(o, "gate", m ? json_boolean(r->rule.gate) : json_null());
	json_object_set_new(o, "baseline", num_or_null(r->baseline));
	json_object_set_new(o, "current", num_or_null(r->current));
	json_object_set_new(o, "change", num_or_null(r->change));
	json_object_set_new(o, "tolerance", num_or_null(r->tolerance));
	json_object_set_new(o, "floor", m ? json_real(r->rule.floor) : json_null());
	json_object_set_new(o, "escalate",
			    m && r->rule.escalate > 0 ? json_real(r->rule.escalate) : json_null());
	json_object_set_new(o, "p_value", num_or_null(r->p_value));
	json_object_set_new(o, "p_adjusted", num_or_null(r->p_adjusted));
	json_object_set_new(o, "effect", num_or_null(r->effect));
	json_object_set_new(o, "run_change", num_or_null(r->run_change));
	json_object_set_new(o, "noise", num_or_null(r->noise));
	json_object_set_new(o, "ci_low", num_or_null(r->ci_low));
	json_object_set_new(o, "ci_high", num_or_null(r->ci_high));
	json_object_set_new(o, "method",
			    r->method == PG_METHOD_NONE
				    ? json_null()
				    : json_string(pg_cmp_method_name(r->method)));
	json_object_set_new(o, "n_baseline", json_integer((json_int_t)r->n_baseline));
	json_object_set_new(o, "n_current", json_integer((json_int_t)r->n_current));
	json_object_set_new(o, "first",
			    r->method == PG_METHOD_NONE ? json_null() : side_json(&r->first));
	json_object_set_new(o, "rerun", r->rerun.n ? side_json(&r->rerun) : json_null());
	json_object_set_new(o, "verdict", json_string(pg_verdict_name(r->verdict)));
	json_object_set_new(o, "outcome", json_string(pg_outcome_name(r->outcome)));
	json_object_set_new(o, "confirmed", json_boolean(r->confirmed));
	json_object_set_new(o, "needs_confirmation", json_boolean(r->needs_confirmation));
	json_object_set_new(o, "known", json_boolean(r->known));
	json_object_set_new(o, "catchable", num_or_null(r->catchable));
	json_object_set_new(o, "note", str_or_null(r->note));
	json_object_set_new(o, "basis", basis_json(&r->base_of));
	return o;
}

static json_t *common_json(const struct pg_cmp_common *cc)
{
	json_t *o = json_object();

	json_object_set_new(o, "metric", json_string(cc->metric->id));
	json_object_set_new(o, "suite", str_or_null(pg_suite_kind_name(cc->suite)));
	json_object_set_new(o, "method", json_string(pg_cmp_method_name(cc->method)));
	json_object_set_new(o, "job", json_integer((json_int_t)cc->job));
	json_object_set_new(o, "points", json_integer((json_int_t)cc->points));
	json_object_set_new(o, "change", num_or_null(cc->first.change));
	json_object_set_new(o, "effect", num_or_null(cc->first.effect));
	json_object_set_new(o, "spread", num_or_null(cc->spread));
	json_object_set_new(o, "tolerance", num_or_null(cc->tolerance));
	json_object_set_new(o, "p_value", num_or_null(cc->first.p_value));
	json_object_set_new(o, "p_adjusted", num_or_null(cc->first.p_adjusted));
	json_object_set_new(o, "first", side_json(&cc->first));
	json_object_set_new(o, "rerun", cc->rerun.n ? side_json(&cc->rerun) : json_null());
	json_object_set_new(o, "verdict", json_string(pg_verdict_name(cc->verdict)));
	json_object_set_new(o, "outcome", json_string(pg_outcome_name(cc->outcome)));
	json_object_set_new(o, "note", str_or_null(cc->note));
	return o;
}

static json_t *strv_json(const struct pg_strv *v)
{
	json_t *a = json_array();
	for (size_t i = 0; i < v->n; i++)
		json_array_append_new(a, json_string(v->v[i]));
	return a;
}

/* Everything but the rows. */
static json_t *comparison_head_json(const struct pg_comparison *c)
{
	json_t *o = json_object(), *base = json_object(), *summary = json_object();
	json_t *rerun = json_array();
	struct pg_buf headline = PG_BUF_INIT;

	pg_comparison_headline(&headline, c);
	json_object_set_new(o, "gpu", str_or_null(c->gpu));
	json_object_set_new(base, "kind", str_or_null(c->baseline_kind));
	json_object_set_new(base, "source", str_or_null(c->baseline_source));
	json_object_set_new(o, "baseline", base);
	json_object_set_new(o, "verdict",
			    json_string(c->suspect ? "suspect" : pg_outcome_name(c->outcome)));
	json_object_set_new(o, "exit_code", json_integer(pg_outcome_exit_code(c->outcome)));
	json_object_set_new(o, "headline", json_string(headline.ptr));
	if (c->suspect)
		json_object_set_new(o, "suspect", json_string(c->suspect));
	json_object_set_new(o, "confirmation", json_boolean(c->with_confirmation));
	{
		json_t *d = json_object();
		json_object_set_new(d, "step_false_alarm", json_real(c->step_false_alarm));
		json_object_set_new(d, "hypotheses", json_integer((json_int_t)c->hypotheses));
		json_object_set_new(d, "budget_points", json_real(c->budget_points));
		json_object_set_new(d, "budget_whole_run", json_real(c->budget_whole_run));
		json_object_set_new(d, "correction", json_string("holm"));
		json_object_set_new(d, "family", json_string("test point"));
		json_object_set_new(d, "confirmation", json_string("replication"));
		{
			/* the smallest change one point can fail on, per class */
			json_t *k = json_object();
			json_object_set_new(k, "throughput", num_or_null(c->catchable[0]));
			json_object_set_new(k, "latency", num_or_null(c->catchable[1]));
			json_object_set_new(k, "tail", num_or_null(c->catchable[2]));
			json_object_set_new(d, "catchable", k);
		}
		json_object_set_new(o, "decision", d);
	}
	json_object_set_new(summary, "comparisons", json_integer((json_int_t)c->n));
	json_object_set_new(summary, "gating", json_integer((json_int_t)c->gated));
	json_object_set_new(summary, "failing", json_integer((json_int_t)c->failing));
	for (int v = 0; v < PG_VERDICT_COUNT; v++)
		json_object_set_new(summary, pg_verdict_name(v),
				    json_integer((json_int_t)c->counts[v]));
	json_object_set_new(o, "summary", summary);
	/* the headline's unit: test points, a point counted under its worst row */
	{
		struct pg_gate_counts k;
		json_t *tests = json_object();
		pg_gate_count(&k, c);
		json_object_set_new(tests, "compared", json_integer((json_int_t)k.tests));
		json_object_set_new(tests, "regressed", json_integer((json_int_t)k.regressed));
		json_object_set_new(tests, "regressed_metrics",
				    json_integer((json_int_t)k.regressed_metrics));
		json_object_set_new(tests, "error", json_integer((json_int_t)k.errors));
		json_object_set_new(tests, "warn", json_integer((json_int_t)k.warnings));
		json_object_set_new(tests, "improved", json_integer((json_int_t)k.improved));
		json_object_set_new(o, "tests", tests);
	}
	for (size_t i = 0; i < c->rerun.n; i++)
		json_array_append_new(rerun, json_string(c->rerun.v[i]));
	json_object_set_new(o, "rerun", rerun);
	{
		json_t *wr = json_array();
		for (size_t i = 0; i < c->n_commons; i++)
			json_array_append_new(wr, common_json(&c->commons[i]));
		json_object_set_new(o, "whole_run", wr);
	}
	{
		json_t *cold = json_array();
		for (size_t i = 0; i < c->cold_points.n; i++)
			json_array_append_new(cold,
					      json_pack("{s:s, s:s}", "point", c->cold_points.v[i],
							"note", c->cold_notes.v[i]));
		json_object_set_new(o, "cold_repeats", cold);
	}
	json_object_set_new(o, "not_in_suite", strv_json(&c->not_in_suite));
	json_object_set_new(o, "aged_out", strv_json(&c->aged_out));
	pg_buf_release(&headline);
	return o;
}

json_t *pg_comparison_json(const struct pg_comparison *c)
{
	json_t *o = comparison_head_json(c), *rows = json_array();

	for (size_t i = 0; i < c->n; i++)
		json_array_append_new(rows, row_json(&c->rows[i]));
	json_object_set_new(o, "rows", rows);
	return o;
}

/* Rows per piece: about 64 KiB of text. */
#define JSON_ROWS_PER_PIECE 100

int pg_comparison_json_next(struct pg_comparison_json_writer *w, struct pg_buf *out)
{
	const struct pg_comparison *c = w->c;
	size_t end;

	/* pg_json_write(pg_comparison_json(c), 2), a piece at a time: a
	 * 10,000-point run has 100,000 rows, and their jansson objects take
	 * several times the memory of their text */
	if (!w->started) {
		json_t *head = comparison_head_json(c);
		const char *key;
		json_t *val;

		pg_buf_putc(out, '{');
		json_object_foreach(head, key, val)
		{
			pg_buf_puts(out, "\n  ");
			pg_json_write_string(out, key, strlen(key));
			pg_buf_puts(out, ": ");
			pg_json_write_nested(out, val, 2, 1);
			pg_buf_putc(out, ',');
		}
		pg_buf_puts(out, "\n  \"rows\": [");
		json_decref(head);
		w->started = true;
	}
	end = w->next + JSON_ROWS_PER_PIECE < c->n ? w->next + JSON_ROWS_PER_PIECE : c->n;
	for (; w->next < end; w->next++) {
		json_t *row = row_json(&c->rows[w->next]);
		pg_buf_puts(out, w->next ? ",\n    " : "\n    ");
		pg_json_write_nested(out, row, 2, 2);
		json_decref(row);
	}
	if (w->next < c->n)
		return 1;
	pg_buf_puts(out, c->n ? "\n  ]\n}\n" : "]\n}\n");
	return 0;
}
