/* A regression's trend chart for the comparison's evidence (trends.h
 * pg_trends_evidence_svg): its baseline window drawn by pg_trends_chart. */
#include "trends/trends.h"

#include "base/buf.h"
#include "base/escape.h"
#include "base/alloc.h"
#include "gate/attention.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The title's height above the chart. */
#define TITLE_H 24

static const char *trail_date(const void *ctx, size_t j)
{
	const struct pg_cmp_trail *t = ctx;
	return j < t->n ? t->date[j] : NULL;
}

bool pg_trends_evidence_svg(struct pg_buf *out, const struct pg_cmp_row *r, const char *run_name)
{
	const struct pg_cmp_trail *t = r->trail;
	const struct pg_metric *m = r->metric;
	double thr = pg_attention_threshold(r), *x, at;
	bool beyond;
	int len;
	struct pg_trends_chart c = { 0 };
	char name[96], caption[192];

	if (!t || !t->n || !m)
		return false;
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
	c.gate = r->rule.gate || (r->rule.escalate > 0 && thr == r->rule.escalate);
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
	if (isfinite(r->change))
		snprintf(name, sizeof(name), "%s %s%.1f%%", run_name ? run_name : "this run",
			 r->change < 0 ? "−" : "+", fabs(r->change) * 100);
	else
		snprintf(name, sizeof(name), "%s", run_name ? run_name : "this run");
	c.pr_name = name;

	/* a standalone file: the chart under a title naming the test and metric */
	pg_buf_printf(out,
		      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"760\" height=\"%d\" "
		      "viewBox=\"0 0 760 %d\">\n<title>",
		      250 + TITLE_H, 250 + TITLE_H);
	pg_escape_html(out, r->point);
	pg_buf_puts(out, ": ");
	pg_escape_html(out, m->label);
	pg_buf_printf(
		out,
		"</title>\n<rect x=\"0\" y=\"0\" width=\"760\" height=\"%d\" fill=\"#fff\"/>\n"
		"<text x=\"10\" y=\"17\" font-family=\"DejaVu Sans, Helvetica, Arial, "
		"sans-serif\" font-size=\"13\" font-weight=\"bold\" fill=\"#111827\">",
		250 + TITLE_H);
	pg_escape_html(out, r->point);
	pg_buf_puts(out, " · ");
	pg_escape_html(out, m->label);
	pg_buf_printf(out, "</text>\n<g transform=\"translate(0,%d)\">\n", TITLE_H);
	pg_trends_chart(out, &c);
	pg_buf_puts(out, "</g>\n</svg>\n");
	free(x);
	return true;
}
