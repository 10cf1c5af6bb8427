/*
 * perfgate bisect's evidence, its log and its reports
 * (bisect/bisect_report.h). Pure.
 */
#include "bisect/bisect_report.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/escape.h"
#include "base/jsonw.h"
#include "gate/ab.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void pg_bisect_evidence_release(struct pg_bisect_evidence *e)
{
	free(e->commit);
	free(e->against);
	free(e->metric);
	free(e->dir);
	free(e->note);
	memset(e, 0, sizeof(*e));
}

void pg_bisect_log_init(struct pg_bisect_log *l)
{
	memset(l, 0, sizeof(*l));
	l->config = json_object();
	l->built = json_object();
}

void pg_bisect_log_release(struct pg_bisect_log *l)
{
	json_decref(l->config);
	json_decref(l->built);
	pg_strv_release(&l->commits);
	pg_strv_release(&l->subjects);
	for (size_t i = 0; i < l->n_probes; i++)
		pg_bisect_evidence_release(&l->probes[i]);
	free(l->probes);
	memset(l, 0, sizeof(*l));
}

void pg_bisect_log_add(struct pg_bisect_log *l, struct pg_bisect_evidence *e)
{
	l->probes = pg_xrealloc(l->probes, (l->n_probes + 1) * sizeof(*l->probes));
	l->probes[l->n_probes++] = *e;
	memset(e, 0, sizeof(*e));
}

/* ---- the state file ------------------------------------------------------ */

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *evidence_json(const struct pg_bisect_evidence *e)
{
	json_t *o = json_object();

	json_object_set_new(o, "commit", json_string(e->commit));
	json_object_set_new(o, "against", json_string(e->against));
	json_object_set_new(o, "attempt", json_integer((json_int_t)e->attempt));
	json_object_set_new(o, "purpose", json_string(pg_bisect_purpose_name(e->purpose)));
	json_object_set_new(o, "outcome",
			    json_string(e->outcome < 0 ? "infrastructure"
						       : pg_bisect_outcome_name(e->outcome)));
	json_object_set_new(o, "metric", str_or_null(e->metric));
	json_object_set_new(o, "change", num_or_null(e->change));
	json_object_set_new(o, "lo", num_or_null(e->lo));
	json_object_set_new(o, "hi", num_or_null(e->hi));
	json_object_set_new(o, "blocks", json_integer((json_int_t)e->blocks));
	json_object_set_new(o, "seconds", json_real(e->seconds));
	json_object_set_new(o, "dir", str_or_null(e->dir));
	json_object_set_new(o, "note", str_or_null(e->note));
	return o;
}

static json_t *commits_json(const struct pg_bisect_log *l)
{
	json_t *a = json_array();

	for (size_t i = 0; i < l->commits.n; i++) {
		json_t *c = json_object();
		json_object_set_new(c, "id", json_string(l->commits.v[i]));
		json_object_set_new(c, "subject",
				    json_string(i < l->subjects.n ? l->subjects.v[i] : ""));
		json_array_append_new(a, c);
	}
	return a;
}

json_t *pg_bisect_log_json(const struct pg_bisect_log *l)
{
	json_t *o = json_object(), *probes = json_array();

	json_object_set_new(o, "format", json_integer(1));
	json_object_set(o, "config", l->config);
	json_object_set_new(o, "commits", commits_json(l));
	json_object_set(o, "built", l->built);
	for (size_t i = 0; i < l->n_probes; i++)
		json_array_append_new(probes, evidence_json(&l->probes[i]));
	json_object_set_new(o, "probes", probes);
	return o;
}

static const char *purposes[] = { "search", "confirm", "residual" };

static double num_of(const json_t *v)
{
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static char *str_dup_of(const json_t *v)
{
	return json_is_string(v) ? pg_xstrdup(json_string_value(v)) : NULL;
}

static int parse_probe(struct pg_bisect_evidence *e, const json_t *p, const char *where, size_t i,
		       struct pg_error *err)
{
	const char *commit = json_string_value(json_object_get(p, "commit"));
	const char *against = json_string_value(json_object_get(p, "against"));
	const char *purpose = json_string_value(json_object_get(p, "purpose"));
	const char *outcome = json_string_value(json_object_get(p, "outcome"));
	const json_t *attempt = json_object_get(p, "attempt");
	int pu = -1;

	for (int k = 0; purpose && k < 3; k++)
		if (!strcmp(purpose, purposes[k]))
			pu = k;
	if (!commit || !against || pu < 0 || !outcome || !json_is_integer(attempt) ||
	    json_integer_value(attempt) < 0)
		return pg_error_set(err, PG_ECONFIG,
				    "%s: probes[%zu]: expected commit, against, attempt, purpose "
				    "and outcome",
				    where, i);
	memset(e, 0, sizeof(*e));
	e->outcome = strcmp(outcome, "infrastructure") ? pg_bisect_outcome_parse(outcome) : -1;
	if (e->outcome < 0 && strcmp(outcome, "infrastructure"))
		return pg_error_set(err, PG_ECONFIG, "%s: probes[%zu].outcome: unknown '%s'", where,
				    i, outcome);
	e->commit = pg_xstrdup(commit);
	e->against = pg_xstrdup(against);
	e->attempt = (size_t)json_integer_value(attempt);
	e->purpose = (enum pg_bisect_purpose)pu;
	e->metric = str_dup_of(json_object_get(p, "metric"));
	e->change = num_of(json_object_get(p, "change"));
	e->lo = num_of(json_object_get(p, "lo"));
	e->hi = num_of(json_object_get(p, "hi"));
	e->blocks = (size_t)json_integer_value(json_object_get(p, "blocks"));
	e->seconds = num_of(json_object_get(p, "seconds"));
	e->dir = str_dup_of(json_object_get(p, "dir"));
	e->note = str_dup_of(json_object_get(p, "note"));
	return 0;
}

int pg_bisect_log_parse(struct pg_bisect_log *l, const json_t *j, const char *where,
			struct pg_error *err)
{
	const json_t *commits = json_object_get(j, "commits"),
		     *probes = json_object_get(j, "probes");
	const json_t *v;
	size_t i;

	pg_bisect_log_init(l);
	if (json_integer_value(json_object_get(j, "format")) != 1)
		return pg_error_set(err, PG_ECONFIG, "%s: format: expected 1", where);
	if (!json_is_object(json_object_get(j, "config")) || !json_is_array(commits) ||
	    !json_is_array(probes))
		return pg_error_set(err, PG_ECONFIG, "%s: expected config, commits and probes",
				    where);
	json_decref(l->config);
	l->config = json_deep_copy(json_object_get(j, "config"));
	if (json_is_object(json_object_get(j, "built"))) {
		json_decref(l->built);
		l->built = json_deep_copy(json_object_get(j, "built"));
	}
	json_array_foreach(commits, i, v)
	{
		const char *id = json_string_value(json_object_get(v, "id"));
		const char *subject = json_string_value(json_object_get(v, "subject"));
		if (!id)
			return pg_error_set(err, PG_ECONFIG,
					    "%s: commits[%zu].id: expected a string", where, i);
		pg_strv_push(&l->commits, id);
		pg_strv_push(&l->subjects, subject ? subject : "");
	}
	json_array_foreach(probes, i, v)
	{
		struct pg_bisect_evidence e;
		int rc = parse_probe(&e, v, where, i, err);
		if (rc) {
			pg_bisect_evidence_release(&e);
			return rc;
		}
		pg_bisect_log_add(l, &e);
	}
	return 0;
}

int pg_bisect_log_find(const struct pg_bisect_log *l, const char *commit, const char *against,
		       size_t attempt, const struct pg_bisect_evidence **found)
{
	for (size_t i = l->n_probes; i-- > 0;) {
		const struct pg_bisect_evidence *e = &l->probes[i];
		if (e->outcome >= 0 && e->attempt == attempt && !strcmp(e->commit, commit) &&
		    !strcmp(e->against, against)) {
			if (found)
				*found = e;
			return e->outcome;
		}
	}
	return -1;
}

/* ---- the decision of a probe --------------------------------------------- */

/* How far towards worse a change is (> 0: worse). */
static double worse(double change, bool higher_better)
{
	return higher_better ? -change : change;
}

enum pg_bisect_outcome pg_bisect_classify(const struct pg_ab_decision *d, const bool *higher_better,
					  size_t *shown)
{
	size_t J = d->n_metrics, P = d->n_points, applies = 0, open = 0, regressed = 0;
	size_t best = (size_t)-1;
	double best_worse = -INFINITY;

	for (size_t j = 0; j < J; j++) {
		const struct pg_ab_est *w = &d->whole[j];
		if (w->applies) {
			applies++;
			regressed += w->verdict == PG_AB_REGRESSED;
			open += w->verdict != PG_AB_UNCHANGED && w->verdict != PG_AB_IMPROVED &&
				w->verdict != PG_AB_REGRESSED;
		}
		for (size_t p = 0; p < P; p++) {
			const struct pg_ab_est *e = &d->points[j * P + p];
			if (!e->applies)
				continue;
			applies++;
			regressed += e->verdict == PG_AB_REGRESSED;
			open += e->verdict != PG_AB_UNCHANGED && e->verdict != PG_AB_IMPROVED &&
				e->verdict != PG_AB_REGRESSED;
			/* the whole run's row is shown when there is one */
			if (!w->applies && isfinite(e->change) &&
			    worse(e->change, higher_better[j]) > best_worse) {
				best_worse = worse(e->change, higher_better[j]);
				best = j * P + p;
			}
		}
		if (w->applies && isfinite(w->change) &&
		    worse(w->change, higher_better[j]) > best_worse) {
			best_worse = worse(w->change, higher_better[j]);
			best = J * P + j;
		}
	}
	if (shown)
		*shown = best;
	if (regressed)
		return PG_BISECT_BAD;
	if (!applies || open)
		return PG_BISECT_INCONCLUSIVE;
	return PG_BISECT_GOOD;
}

/* ---- the reports --------------------------------------------------------- */

const char *pg_bisect_short_id(const char *id, char out[13])
{
	size_t n = strlen(id);
	if (n > 12)
		n = 12;
	memcpy(out, id, n);
	out[n] = '\0';
	return out;
}

/* The probes with an outcome, by outcome index (the search's numbering). */
static size_t *outcome_probes(const struct pg_bisect_log *l, size_t *n)
{
	size_t *idx = pg_xcalloc(l->n_probes + 1, sizeof(size_t));
	*n = 0;
	for (size_t i = 0; i < l->n_probes; i++)
		if (l->probes[i].outcome >= 0)
			idx[(*n)++] = i;
	return idx;
}

static const char *cfg_str(const json_t *cfg, const char *key)
{
	return json_string_value(json_object_get(cfg, key));
}

static void quote(struct pg_buf *out, const char *s)
{
	pg_shell_quote(out, s ? s : "");
}

/* The shell command of a bisect from the config, between good and bad. */
#define SHOWN " \\\n    "

/* The budgets' options and defaults (cli/cmd_bisect.c). */
static const struct {
	const char *key, *flag;
	long dflt;
} budgets[] = {
	{ "min_blocks", "min-blocks", 4 },
	{ "max_blocks", "max-blocks", 16 },
	{ "max_attempts", "max-attempts", 3 },
	{ "max_steps", "max-steps", 2 },
};

/* mode: "--local" and what else the command is given; sep: between its
 * groups of options (" \\\n    " to show, " " for a pipeline's step). */
static void command_line(struct pg_buf *out, const json_t *cfg, const char *mode, const char *good,
			 const char *bad, const char *output, const char *sep)
{
	const json_t *metrics = json_object_get(cfg, "metrics"), *m;
	const char *s;
	size_t i;

	pg_buf_printf(out, "perfgate bisect %s", mode);
	if ((s = cfg_str(cfg, "repo")) && strcmp(s, ".")) {
		pg_buf_puts(out, " --repo ");
		pg_shell_quote(out, s);
	}
	pg_buf_puts(out, " --good ");
	pg_shell_quote(out, good);
	pg_buf_puts(out, " --bad ");
	pg_shell_quote(out, bad);
	pg_buf_printf(out, "%s--suite ", sep);
	quote(out, cfg_str(cfg, "suite"));
	pg_buf_puts(out, " --test ");
	quote(out, cfg_str(cfg, "test"));
	json_array_foreach(metrics, i, m)
	{
		pg_buf_puts(out, " --metric ");
		quote(out, json_string_value(m));
	}
	if (json_is_number(json_object_get(cfg, "tolerance")))
		pg_buf_printf(out, " --tolerance %g%%",
			      100 * json_number_value(json_object_get(cfg, "tolerance")));
	/* budgets that are not the defaults: a resumed bisect must ask the same */
	for (i = 0; i < sizeof(budgets) / sizeof(*budgets); i++) {
		const json_t *v = json_object_get(cfg, budgets[i].key);
		if (json_is_integer(v) && json_integer_value(v) != budgets[i].dflt)
			pg_buf_printf(out, " --%s %lld", budgets[i].flag,
				      (long long)json_integer_value(v));
	}
	pg_buf_printf(out, "%s--server-command ", sep);
	quote(out, cfg_str(cfg, "server_command"));
	if ((s = cfg_str(cfg, "build"))) {
		pg_buf_printf(out, "%s--build ", sep);
		pg_shell_quote(out, s);
	}
	pg_buf_puts(out, " -o ");
	pg_shell_quote(out, output);
}

/* The command that reproduces the step (good, bad] alone. */
static void step_command(struct pg_buf *out, const struct pg_bisect_log *l, size_t good, size_t bad)
{
	struct pg_buf dir = PG_BUF_INIT;
	char sh[13];

	pg_buf_printf(&dir, "bisect-%s", pg_bisect_short_id(l->commits.v[bad], sh));
	command_line(out, l->config, "--local", l->commits.v[good], l->commits.v[bad], dir.ptr,
		     SHOWN);
	pg_buf_release(&dir);
}

/* A step with what the report says of it. */
struct step_view {
	size_t good, bad; /* commit indices: the change began in (good, bad] */
	const struct pg_bisect_evidence *e;
};

static int by_size(const void *a, const void *b)
{
	const struct step_view *x = a, *y = b;
	double sx = x->e && isfinite(x->e->change) ? fabs(x->e->change) : -1;
	double sy = y->e && isfinite(y->e->change) ? fabs(y->e->change) : -1;
	return (sx < sy) - (sx > sy);
}

/* The steps, the bigger first. */
static struct step_view *steps_view(const struct pg_bisect_log *l, const struct pg_bisect *b)
{
	size_t n_out, *idx = outcome_probes(l, &n_out);
	struct step_view *v = pg_xcalloc(b->n_steps + 1, sizeof(*v));

	for (size_t k = 0; k < b->n_steps; k++) {
		v[k].good = b->steps[k].good;
		v[k].bad = b->steps[k].bad;
		v[k].e = b->steps[k].evidence < n_out ? &l->probes[idx[b->steps[k].evidence]]
						      : NULL;
	}
	qsort(v, b->n_steps, sizeof(*v), by_size);
	free(idx);
	return v;
}

static void pct_or_dash(struct pg_buf *out, double v)
{
	char f[PG_FMT_DOUBLE_SIZE];
	pg_buf_puts(out, isfinite(v) ? pg_fmt_pct(f, v) : "-");
}

static void interval(struct pg_buf *out, const struct pg_bisect_evidence *e)
{
	char a[PG_FMT_DOUBLE_SIZE], c[PG_FMT_DOUBLE_SIZE];
	if (e && isfinite(e->lo) && isfinite(e->hi))
		pg_buf_printf(out, "\\[%s, %s\\]", pg_fmt_pct(a, e->lo), pg_fmt_pct(c, e->hi));
	else
		pg_buf_puts(out, "-");
}

/* A commit as its short id and subject; in a table cell without a code
 * span (a hex id needs none). */
static void commit_md(struct pg_buf *out, const struct pg_bisect_log *l, size_t i, bool cell)
{
	char sh[13];
	pg_buf_printf(out, cell ? "%s" : "`%s`", pg_bisect_short_id(l->commits.v[i], sh));
	if (i < l->subjects.n && l->subjects.v[i][0]) {
		pg_buf_putc(out, ' ');
		pg_escape_md_cell(out, l->subjects.v[i]);
	}
}

/* The commit whose last outcome against `against` is `outcome`. */
static bool last_outcome_is(const struct pg_bisect_log *l, size_t p, int outcome)
{
	const struct pg_bisect_evidence *e = &l->probes[p];
	for (size_t i = p + 1; i < l->n_probes; i++)
		if (l->probes[i].outcome >= 0 && !strcmp(l->probes[i].commit, e->commit) &&
		    !strcmp(l->probes[i].against, e->against))
			return false;
	return e->outcome == outcome;
}

static size_t index_of(const struct pg_bisect_log *l, const char *id)
{
	for (size_t i = 0; i < l->commits.n; i++)
		if (!strcmp(l->commits.v[i], id))
			return i;
	return 0;
}

static void headline(struct pg_buf *out, const struct pg_bisect_log *l, const struct pg_bisect *b,
		     const struct step_view *v)
{
	if (!b->n_steps) {
		pg_buf_printf(out, "**perfgate bisect: %s**",
			      b->state == PG_BISECT_DONE ? pg_bisect_end_phrase(b->end)
							 : "stopped before an answer");
		return;
	}
	pg_buf_puts(out, "**perfgate bisect: ");
	if (v[0].bad == v[0].good + 1) {
		pg_buf_puts(out, "culprit** ");
		commit_md(out, l, v[0].bad, false);
	} else {
		pg_buf_printf(out, "the change began in %zu commits** ", v[0].bad - v[0].good);
		commit_md(out, l, v[0].good + 1, false);
		pg_buf_puts(out, " .. ");
		commit_md(out, l, v[0].bad, false);
	}
	if (v[0].e && v[0].e->metric) {
		pg_buf_printf(out, " — %s ", v[0].e->metric);
		pct_or_dash(out, v[0].e->change);
		pg_buf_putc(out, ' ');
		interval(out, v[0].e);
	}
	if (b->n_steps > 1)
		pg_buf_printf(out, "; %zu steps in the range", b->n_steps);
}

void pg_bisect_markdown(struct pg_buf *out, const struct pg_bisect_log *l,
			const struct pg_bisect *b)
{
	struct step_view *v = steps_view(l, b);
	const json_t *cfg = l->config;
	size_t evidence = 0, skipped = 0, blocks = 0;
	double seconds = 0;
	char sh[13], sh2[13];

	for (size_t i = 0; i < l->n_probes; i++) {
		evidence += l->probes[i].outcome >= 0;
		blocks += l->probes[i].blocks;
		seconds += isfinite(l->probes[i].seconds) ? l->probes[i].seconds : 0;
	}
	headline(out, l, b, v);
	pg_buf_printf(out,
		      "\n\nRange: good `%s` .. bad `%s`, %zu commits after the good end; test ",
		      pg_bisect_short_id(l->commits.v[0], sh),
		      pg_bisect_short_id(l->commits.v[l->commits.n - 1], sh2), l->commits.n - 1);
	pg_escape_md_cell(out, cfg_str(cfg, "test") ? cfg_str(cfg, "test") : "?");
	pg_buf_printf(out, "; %zu probes (%zu with evidence), %zu blocks, %.0f s.", l->n_probes,
		      evidence, blocks, seconds);
	if (b->state == PG_BISECT_DONE && b->end != PG_BISECT_END_FOUND)
		pg_buf_printf(out, " Ended: %s.", pg_bisect_end_phrase(b->end));
	if (b->state != PG_BISECT_DONE)
		pg_buf_puts(out, " Not finished: run the same command again to resume.");
	pg_buf_puts(out, "\n");
	if (b->n_steps) {
		pg_buf_puts(out,
			    "\n## Steps, the bigger first\n\n"
			    "| # | began in | commits | metric | change | 95% interval | probe |\n"
			    "|--:|---|--:|---|--:|--:|--:|\n");
		for (size_t k = 0; k < b->n_steps; k++) {
			pg_buf_printf(out, "| %zu | ", k + 1);
			if (v[k].bad == v[k].good + 1) {
				commit_md(out, l, v[k].bad, true);
			} else {
				commit_md(out, l, v[k].good + 1, true);
				pg_buf_puts(out, " .. ");
				commit_md(out, l, v[k].bad, true);
			}
			pg_buf_printf(out, " | %zu | %s | ", v[k].bad - v[k].good,
				      v[k].e && v[k].e->metric ? v[k].e->metric : "-");
			pct_or_dash(out, v[k].e ? v[k].e->change : NAN);
			pg_buf_puts(out, " | ");
			interval(out, v[k].e);
			pg_buf_printf(out, " | %zu |\n",
				      v[k].e ? (size_t)(v[k].e - l->probes) + 1 : 0);
		}
	}
	for (size_t i = 0; i < l->n_probes; i++)
		if (l->probes[i].outcome == PG_BISECT_SKIP) {
			if (!skipped++)
				pg_buf_puts(out, "\nSkipped (could not be built or started):\n\n");
			pg_buf_puts(out, "- ");
			commit_md(out, l, index_of(l, l->probes[i].commit), false);
			if (l->probes[i].note) {
				pg_buf_puts(out, ": ");
				pg_escape_md_cell(out, l->probes[i].note);
			}
			pg_buf_putc(out, '\n');
		}
	skipped = 0;
	for (size_t i = 0; i < l->n_probes; i++)
		if (last_outcome_is(l, i, PG_BISECT_INCONCLUSIVE)) {
			if (!skipped++)
				pg_buf_puts(out,
					    "\nUndecided (inconclusive at every attempt):\n\n");
			pg_buf_puts(out, "- ");
			commit_md(out, l, index_of(l, l->probes[i].commit), false);
			pg_buf_putc(out, '\n');
		}
	pg_buf_puts(out, "\n## Probes\n\n"
			 "| # | commit | against | why | attempt | outcome | metric | change | 95% "
			 "interval | blocks | files |\n"
			 "|--:|---|---|---|--:|---|---|--:|--:|--:|---|\n");
	for (size_t i = 0; i < l->n_probes; i++) {
		const struct pg_bisect_evidence *e = &l->probes[i];
		pg_buf_printf(out, "| %zu | %s | %s | %s | %zu | %s", i + 1,
			      pg_bisect_short_id(e->commit, sh),
			      pg_bisect_short_id(e->against, sh2),
			      pg_bisect_purpose_name(e->purpose), e->attempt + 1,
			      e->outcome < 0 ? "infrastructure (retried)"
					     : pg_bisect_outcome_name(e->outcome));
		if (e->note) {
			pg_buf_puts(out, ": ");
			pg_escape_md_cell(out, e->note);
		}
		pg_buf_printf(out, " | %s | ", e->metric ? e->metric : "-");
		pct_or_dash(out, e->change);
		pg_buf_puts(out, " | ");
		interval(out, e);
		pg_buf_printf(out, " | %zu | %s |\n", e->blocks, e->dir ? e->dir : "-");
	}
	pg_buf_puts(out,
		    "\n## Reproduce\n\nThe whole bisect (resumes from its state file):\n\n```sh\n");
	command_line(out, cfg, "--local", cfg_str(cfg, "good"), cfg_str(cfg, "bad"),
		     cfg_str(cfg, "output") ? cfg_str(cfg, "output") : "bisect", SHOWN);
	pg_buf_puts(out, "\n```\n");
	for (size_t k = 0; k < b->n_steps; k++) {
		pg_buf_printf(out, "\nStep %zu alone, from `%s` (good) to `%s`: %s\n\n```sh\n",
			      k + 1, pg_bisect_short_id(l->commits.v[v[k].good], sh2),
			      pg_bisect_short_id(l->commits.v[v[k].bad], sh),
			      v[k].bad == v[k].good + 1 ? "one probe" : "the range again");
		step_command(out, l, v[k].good, v[k].bad);
		pg_buf_puts(out, "\n```\n");
	}
	free(v);
}

static json_t *commit_json(const struct pg_bisect_log *l, size_t i)
{
	json_t *c = json_object();
	json_object_set_new(c, "id", json_string(l->commits.v[i]));
	json_object_set_new(c, "subject", json_string(i < l->subjects.n ? l->subjects.v[i] : ""));
	return c;
}

json_t *pg_bisect_json(const struct pg_bisect_log *l, const struct pg_bisect *b)
{
	struct step_view *v = steps_view(l, b);
	json_t *o = pg_bisect_log_json(l), *steps = json_array(), *skipped = json_array();

	json_object_set_new(o, "finished", json_boolean(b->state == PG_BISECT_DONE));
	json_object_set_new(o, "end", json_string(pg_bisect_end_phrase(b->end)));
	for (size_t k = 0; k < b->n_steps; k++) {
		json_t *s = json_object(), *range = json_array();
		const struct pg_bisect_evidence *e = v[k].e;
		for (size_t i = v[k].good + 1; i <= v[k].bad; i++)
			json_array_append_new(range, json_string(l->commits.v[i]));
		json_object_set_new(s, "exact", json_boolean(v[k].bad == v[k].good + 1));
		json_object_set_new(s, "culprit",
				    v[k].bad == v[k].good + 1 ? commit_json(l, v[k].bad)
							      : json_null());
		json_object_set_new(s, "last_good", json_string(l->commits.v[v[k].good]));
		json_object_set_new(s, "commits", range);
		json_object_set_new(s, "metric", str_or_null(e ? e->metric : NULL));
		json_object_set_new(s, "change", num_or_null(e ? e->change : NAN));
		json_object_set_new(s, "lo", num_or_null(e ? e->lo : NAN));
		json_object_set_new(s, "hi", num_or_null(e ? e->hi : NAN));
		json_object_set_new(s, "probe",
				    e ? json_integer((json_int_t)(e - l->probes) + 1)
				      : json_null());
		{
			struct pg_buf cmd = PG_BUF_INIT;
			step_command(&cmd, l, v[k].good, v[k].bad);
			json_object_set_new(s, "reproduce", json_string(cmd.ptr));
			pg_buf_release(&cmd);
		}
		json_array_append_new(steps, s);
	}
	json_object_set_new(o, "steps", steps);
	for (size_t i = 0; i < l->n_probes; i++)
		if (l->probes[i].outcome == PG_BISECT_SKIP) {
			json_t *s = json_object();
			json_object_set_new(s, "commit", json_string(l->probes[i].commit));
			json_object_set_new(s, "note", str_or_null(l->probes[i].note));
			json_array_append_new(skipped, s);
		}
	json_object_set_new(o, "skipped", skipped);
	free(v);
	return o;
}

/* ---- --pipeline ---------------------------------------------------------- */

static json_t *step_json(const char *label, const char *key, const char *queue, const char *command,
			 const char *artifacts)
{
	json_t *st = json_object();

	json_object_set_new(st, "label", json_string(label));
	json_object_set_new(st, "key", json_string(key));
	if (queue) {
		json_t *agents = json_object();
		json_object_set_new(agents, "queue", json_string(queue));
		json_object_set_new(st, "agents", agents);
	}
	json_object_set_new(st, "command", json_string(command));
	if (artifacts) {
		json_t *a = json_array();
		json_array_append_new(a, json_string(artifacts));
		json_object_set_new(st, "artifact_paths", a);
	}
	return st;
}

json_t *pg_bisect_pipeline(const struct pg_bisect_log *l, const struct pg_bisect *b,
			   const char *queue, const char *from_step)
{
	const json_t *cfg = l->config;
	const char *output = cfg_str(cfg, "output") ? cfg_str(cfg, "output") : "bisect";
	const char *good = cfg_str(cfg, "good_id"), *bad = cfg_str(cfg, "bad_id");
	struct pg_buf cmd = PG_BUF_INIT, label = PG_BUF_INIT, key = PG_BUF_INIT, mode = PG_BUF_INIT;
	struct pg_buf art = PG_BUF_INIT;
	json_t *steps = json_array(), *pipeline = json_object();
	char sh[13];

	if (b->state == PG_BISECT_PROBING) {
		size_t n = l->n_probes + 1;
		/* the state the job before left, when there was one */
		if (from_step && l->n_probes) {
			pg_buf_puts(&cmd, "buildkite-agent artifact download ");
			pg_shell_quote(&cmd, output);
			pg_buf_puts(&cmd, "/bisect-state.json . --step ");
			pg_shell_quote(&cmd, from_step);
			pg_buf_putc(&cmd, '\n');
		}
		pg_buf_printf(&label, ":mag: perfgate bisect: probe %zu, %s (%s)", n,
			      pg_bisect_short_id(l->commits.v[b->next.commit], sh),
			      pg_bisect_purpose_name(b->next.purpose));
		pg_buf_printf(&key, "perfgate-bisect-probe-%zu", n);
		command_line(&cmd, cfg, "--local --max-probes 1", good, bad, output, " ");
		/* exit 1 (no change in the range) still uploads the answer's step */
		pg_buf_puts(&cmd, " || [ $? -eq 1 ]\n");
		pg_buf_printf(&mode, "--pipeline --queue ");
		pg_shell_quote(&mode, queue);
		command_line(&cmd, cfg, mode.ptr, good, bad, output, " ");
		pg_buf_puts(&cmd, " | buildkite-agent pipeline upload");
		pg_buf_printf(&art, "%s/**/*", output); /* what the next job fetches */
		json_array_append_new(steps,
				      step_json(label.ptr, key.ptr, queue, cmd.ptr, art.ptr));
	} else {
		/* the answer, as the build's annotation */
		pg_buf_puts(&cmd, "buildkite-agent artifact download ");
		pg_shell_quote(&cmd, output);
		pg_buf_puts(&cmd, "/bisect.md . --step ");
		pg_shell_quote(&cmd, from_step ? from_step : "");
		pg_buf_puts(&cmd,
			    "\nbuildkite-agent annotate --style info --context perfgate-bisect < ");
		pg_shell_quote(&cmd, output);
		pg_buf_puts(&cmd, "/bisect.md");
		json_array_append_new(steps,
				      step_json(":mag: perfgate bisect: the answer",
						"perfgate-bisect-answer", NULL, cmd.ptr, NULL));
	}
	json_object_set_new(pipeline, "steps", steps);
	pg_buf_release(&cmd);
	pg_buf_release(&label);
	pg_buf_release(&key);
	pg_buf_release(&mode);
	pg_buf_release(&art);
	return pipeline;
}
