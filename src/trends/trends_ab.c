/*
 * A/B results on the trends site (trends/trends.h): what A/B steps found
 * at a point, beside the runs of main, and the GPU's recent A/B steps on
 * its overview. They come from <gpu>/ab/ of the history
 * (baseline/history_ab.h), which no baseline reads; this file only draws
 * them. Everything from the history is escaped: pull requests, commits,
 * dates, builds and names are whatever was pushed to it.
 */
#include "trends/trends.h"

#include "base/strutil.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "base/escape.h"
#include "results/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* At most n bytes of s (a commit, a date), escaped. */
static void put_cut(struct pg_buf *o, const char *s, size_t n)
{
	char *cut = pg_xstrndup(s ? s : "", n);

	pg_escape_html(o, cut);
	free(cut);
}

/* "build" linked to url when it is http(s) (never javascript:). */
static void put_build(struct pg_buf *o, const char *url)
{
	bool web = url && (!strncmp(url, "https://", 8) || !strncmp(url, "http://", 7));

	if (!web)
		return;
	pg_buf_puts(o, "<a href=\"");
	pg_escape_html(o, url);
	pg_buf_puts(o, "\">build</a>");
}

static void put_pct(struct pg_buf *o, double rel)
{
	char p[PG_FMT_DOUBLE_SIZE];

	if (isfinite(rel))
		pg_buf_puts(o, pg_fmt_pct(p, rel));
	else
		pg_buf_puts(o, "–");
}

static void put_interval(struct pg_buf *o, double lo, double hi)
{
	if (!isfinite(lo) || !isfinite(hi))
		return;
	char p[PG_FMT_DOUBLE_SIZE];

	pg_buf_printf(o, " <span class=\"muted\">[%s, ", pg_fmt_pct(p, lo));
	pg_buf_printf(o, "%s]</span>", pg_fmt_pct(p, hi));
}

static const char *verdict_class(enum pg_ab_verdict v)
{
	return v == PG_AB_REGRESSED ? "bad" : v == PG_AB_IMPROVED ? "good" : "muted";
}

static void put_verdict(struct pg_buf *o, enum pg_ab_verdict v)
{
	pg_buf_printf(o, "<span class=\"%s\">%s</span>", verdict_class(v), pg_ab_verdict_name(v));
}

/* "#17" (or "–"), the head and base commits. */
static void put_who(struct pg_buf *o, const struct pg_history_ab_rec *r)
{
	pg_buf_puts(o, "<td>");
	if (r->pr) {
		pg_buf_puts(o, "#");
		pg_escape_html(o, r->pr);
	} else {
		pg_buf_puts(o, "<span class=\"muted\">");
		pg_escape_html(o, r->branch ? r->branch : "–");
		pg_buf_puts(o, "</span>");
	}
	pg_buf_puts(o, "</td><td>");
	put_cut(o, r->date, 10);
	pg_buf_puts(o, "</td><td><code>");
	put_cut(o, r->commit, 12);
	pg_buf_puts(o, "</code>");
	if (r->base_commit) {
		pg_buf_puts(o, " vs <code>");
		put_cut(o, r->base_commit, 12);
		pg_buf_puts(o, "</code>");
	}
	pg_buf_puts(o, "</td>");
}

static bool has(const struct pg_strv *v, const char *s)
{
	for (size_t k = 0; k < v->n; k++)
		if (!strcmp(v->v[k], s))
			return true;
	return false;
}

static const struct pg_history_ab *point_ab(const struct pg_trends_gpu *t, size_t i)
{
	return t->ab ? pg_history_ab_find(t->ab, t->n_ab, t->hs[i].point) : NULL;
}

static const struct pg_history_ab_metric *rec_metric(const struct pg_history_ab_rec *r,
						     const char *id)
{
	for (size_t k = 0; k < r->n_m; k++)
		if (!strcmp(r->m[k].id, id))
			return &r->m[k];
	return NULL;
}

static void metric_name(struct pg_buf *o, const struct pg_history_ab_metric *am)
{
	pg_escape_html(o, am->m ? am->m->label : am->id);
}

/* The table of h's results for metric id (label: its heading, or NULL
 * under the metric's own chart). */
static void metric_table(struct pg_buf *o, const struct pg_history_ab *h, const char *id,
			 bool heading)
{
	size_t rows = 0, total = 0;

	for (size_t k = 0; k < h->n; k++)
		total += rec_metric(&h->recs[k], id) != NULL;
	if (!total)
		return;
	for (size_t k = h->n; k-- > 0 && rows < PG_TRENDS_AB_ROWS;) {
		const struct pg_history_ab_rec *r = &h->recs[k];
		const struct pg_history_ab_metric *am = rec_metric(r, id);
		if (!am)
			continue;
		if (!rows++) {
			if (heading) {
				pg_buf_puts(o, "<h3>");
				metric_name(o, am);
				pg_buf_puts(o, " <span class=\"muted\">A/B only</span></h3>\n");
			}
			pg_buf_printf(o,
				      "<table class=\"ab\"><caption class=\"muted\">A/B results at "
				      "this point (%zu",
				      total);
			if (total > PG_TRENDS_AB_ROWS)
				pg_buf_printf(o, ", the last %d", PG_TRENDS_AB_ROWS);
			pg_buf_puts(o, ", newest first): head vs base on one machine, "
				       "interleaved</caption>\n<tr><th>PR</th><th>date</th>"
				       "<th>head vs base</th><th>change</th><th>beyond the run's "
				       "change, 95%</th><th>tolerance</th><th>pairs</th>"
				       "<th>verdict</th><th>whole run</th><th></th></tr>\n");
		}
		pg_buf_puts(o, "<tr>");
		put_who(o, r);
		pg_buf_printf(o, "<td class=\"num%s\">",
			      am->verdict == PG_AB_REGRESSED ? " bad" : "");
		put_pct(o, am->change);
		pg_buf_puts(o, "</td><td class=\"num\">");
		put_pct(o, am->effect);
		put_interval(o, am->lo, am->hi);
		pg_buf_puts(o, "</td><td class=\"num\">");
		if (isfinite(am->tolerance))
			pg_buf_printf(o, "±%.3g%%", am->tolerance * 100);
		pg_buf_printf(o, "</td><td class=\"num\">%ld</td><td>", am->pairs);
		put_verdict(o, am->verdict);
		pg_buf_puts(o, "</td><td>");
		if (am->has_whole) {
			put_pct(o, am->whole_change);
			pg_buf_puts(o, " ");
			put_verdict(o, am->whole_verdict);
		}
		pg_buf_puts(o, "</td><td>");
		put_build(o, r->build_url);
		pg_buf_puts(o, "</td></tr>\n");
	}
	pg_buf_puts(o, "</table>\n");
}

void pg_trends_ab_metric(struct pg_buf *o, const struct pg_trends_gpu *t, size_t i,
			 const struct pg_metric *m)
{
	const struct pg_history_ab *h = point_ab(t, i);

	if (h)
		metric_table(o, h, m->id, false);
}

void pg_trends_ab_rest(struct pg_buf *o, const struct pg_trends_gpu *t, size_t i,
		       const struct pg_metric *const *ms, size_t n_ms)
{
	const struct pg_history_ab *h = point_ab(t, i);
	struct pg_strv done = PG_STRV_INIT;

	for (size_t k = 0; h && k < h->n; k++)
		for (size_t j = 0; j < h->recs[k].n_m; j++) {
			const char *id = h->recs[k].m[j].id;
			bool shown = has(&done, id);
			for (size_t c = 0; c < n_ms && !shown; c++)
				shown = !strcmp(ms[c]->id, id);
			if (shown)
				continue;
			pg_strv_push(&done, id);
			metric_table(o, h, id, true);
		}
	pg_strv_release(&done);
}

/* ------------------------------------------------------------------ */
/* The overview: the GPU's A/B steps                                   */

struct ab_line {
	const struct pg_history_ab_rec *r;
	size_t h; /* its point: t->ab[h] */
};

static int cmp_str0(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

/* Newest first; a step's lines together (its build and head commit). */
static int cmp_line(const void *a, const void *b)
{
	const struct ab_line *x = a, *y = b;
	int c = cmp_str0(y->r->date, x->r->date);

	if (!c)
		c = cmp_str0(x->r->build_url, y->r->build_url);
	if (!c)
		c = cmp_str0(x->r->commit, y->r->commit);
	if (!c)
		c = (x->h > y->h) - (x->h < y->h);
	return c;
}

static bool same_step(const struct pg_history_ab_rec *a, const struct pg_history_ab_rec *b)
{
	return !cmp_str0(a->date, b->date) && !cmp_str0(a->build_url, b->build_url) &&
	       !cmp_str0(a->commit, b->commit);
}

/* The page of the point called name, or SIZE_MAX (no runs of main). */
static size_t page_of(const struct pg_trends_gpu *t, const char *name)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(t->hs[mid].point, name);
		if (!c)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SIZE_MAX;
}

static void point_name(struct pg_buf *o, const struct pg_trends_gpu *t, const char *name)
{
	size_t i = page_of(t, name);

	if (i == SIZE_MAX || !t->files[i]) { /* no page, or not on the one page */
		pg_escape_html(o, name);
		return;
	}
	pg_buf_puts(o, "<a href=\"");
	pg_escape_html(o, t->files[i]);
	pg_buf_puts(o, "\">");
	pg_escape_html(o, name);
	pg_buf_puts(o, "</a>");
}

/* One step, lines v[0..n): its verdict per point and the whole run's. */
static void step_row(struct pg_buf *o, const struct pg_trends_gpu *t, const struct ab_line *v,
		     size_t n)
{
	size_t regressed = 0, improved = 0, open = 0, shown = 0;
	struct pg_strv whole = PG_STRV_INIT, whole_ids = PG_STRV_INIT;
	struct pg_buf tx = PG_BUF_INIT;

	for (size_t k = 0; k < n; k++) {
		bool reg = false, imp = false, inc = false;
		for (size_t j = 0; j < v[k].r->n_m; j++) {
			const struct pg_history_ab_metric *am = &v[k].r->m[j];
			reg = reg || am->verdict == PG_AB_REGRESSED;
			imp = imp || am->verdict == PG_AB_IMPROVED;
			inc = inc || am->verdict == PG_AB_INCONCLUSIVE ||
			      am->verdict == PG_AB_PENDING;
			if (am->has_whole && am->whole_verdict == PG_AB_REGRESSED &&
			    !has(&whole_ids, am->id)) {
				pg_buf_reset(&tx);
				char p[PG_FMT_DOUBLE_SIZE];
				pg_buf_printf(&tx, "%s %s", am->m ? am->m->label : am->id,
					      pg_fmt_pct(p, am->whole_change));
				pg_strv_push(&whole_ids, am->id);
				pg_strv_push(&whole, tx.ptr);
			}
		}
		regressed += reg;
		improved += !reg && imp;
		open += !reg && !imp && inc;
	}
	pg_buf_puts(o, "<tr>");
	put_who(o, v[0].r);
	pg_buf_printf(o, "<td class=\"%s\">", regressed || whole.n ? "bad" : "");
	pg_escape_html(o, v[0].r->outcome ? v[0].r->outcome : "–");
	pg_buf_printf(o,
		      "</td><td class=\"num\">%zu</td><td class=\"num%s\">%zu</td>"
		      "<td class=\"num\">%zu</td><td class=\"num\">%zu</td><td>",
		      n, regressed ? " bad" : "", regressed, improved, open);
	for (size_t c = 0; c < whole.n; c++) {
		pg_buf_puts(o, c ? ", " : "<span class=\"bad\">whole run: ");
		pg_escape_html(o, whole.v[c]);
		pg_buf_puts(o, c + 1 == whole.n ? "</span>" : "");
	}
	for (size_t k = 0; k < n; k++) {
		bool reg = false;
		for (size_t j = 0; j < v[k].r->n_m; j++)
			reg = reg || v[k].r->m[j].verdict == PG_AB_REGRESSED;
		if (!reg)
			continue;
		if (shown == 5) {
			pg_buf_printf(o, ", %zu more", regressed - shown);
			break;
		}
		pg_buf_puts(o, shown || whole.n ? "; " : "");
		point_name(o, t, t->ab[v[k].h].point);
		shown++;
	}
	pg_buf_puts(o, "</td><td>");
	put_build(o, v[0].r->build_url);
	pg_buf_puts(o, "</td></tr>\n");
	pg_strv_release(&whole);
	pg_strv_release(&whole_ids);
	pg_buf_release(&tx);
}

void pg_trends_ab_overview(struct pg_buf *o, const struct pg_trends_gpu *t)
{
	struct ab_line *v = NULL;
	size_t n = 0, cap = 0, steps = 0;

	for (size_t h = 0; t->ab && h < t->n_ab; h++)
		for (size_t k = 0; k < t->ab[h].n; k++)
			PG_ARRAY_PUSH(v, n, cap, ((struct ab_line){ &t->ab[h].recs[k], h }));
	if (!n)
		goto done;
	qsort(v, n, sizeof(*v), cmp_line);
	for (size_t k = 0; k < n; k++)
		steps += !k || !same_step(v[k - 1].r, v[k].r);
	pg_buf_printf(o,
		      "<h2>A/B results (%zu step%s)</h2>\n<p class=\"muted\">Pull requests' A/B "
		      "steps on this GPU (head and base interleaved on one machine; never a "
		      "baseline), ",
		      steps, steps == 1 ? "" : "s");
	if (steps > PG_TRENDS_AB_STEPS)
		pg_buf_printf(o, "the last %d, ", PG_TRENDS_AB_STEPS);
	pg_buf_puts(o, "newest first; each point's page lists its results per metric.</p>\n"
		       "<table class=\"ab\"><tr><th>PR</th><th>date</th><th>head vs base</th>"
		       "<th>verdict</th><th>points</th><th>regressed</th><th>improved</th>"
		       "<th>inconclusive</th><th>what regressed</th><th></th></tr>\n");
	for (size_t k = 0, shown = 0; k < n && shown < PG_TRENDS_AB_STEPS; shown++) {
		size_t end = k + 1;
		while (end < n && same_step(v[k].r, v[end].r))
			end++;
		step_row(o, t, &v[k], end - k);
		k = end;
	}
	pg_buf_puts(o, "</table>\n");
done:
	free(v);
}
