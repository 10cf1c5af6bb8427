/*
 * The report model: one table per suite, rows sorted by test name, the
 * columns that have data. report_md.c renders it as markdown (tabulate's
 * pipe format), report_json.c as the pandas JSON and the records file.
 */
#include "report/report.h"
#include "report/report_impl.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "results/metrics.h"
#include "results/result.h"
#include "base/strutil.h"
#include "base/jsonw.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int row_cmp(const void *a, const void *b)
{
	const struct pg_report_row *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	c = strcmp(x->gpu ? x->gpu : "", y->gpu ? y->gpu : "");
	if (c)
		return c;
	return strcmp(x->res->path ? x->res->path : "", y->res->path ? y->res->path : "");
}

static void table_init(struct pg_report_table *t, enum pg_suite_kind kind)
{
	size_t n_all;
	const struct pg_metric *all = pg_metrics_all(&n_all);

	memset(t, 0, sizeof(*t));
	t->kind = kind;
	for (size_t i = 0; i < n_all; i++)
		if (all[i].suite == kind && all[i].header && t->n_metrics < PG_REPORT_MAX_COLUMNS)
			t->metrics[t->n_metrics++] = &all[i];
}

static void row_fill(struct pg_report_table *t, struct pg_report_row *row, double *vals,
		     unsigned char *flags)
{
	const struct pg_result *res = row->res;
	char gpu[256];

	row->name = res->name ? res->name : "";
	row->gpu = pg_xstrdup(pg_result_gpu_label(res, gpu, sizeof(gpu)));
	row->status = pg_result_status(res);
	row->error = pg_result_error(res);
	row->ok = !strcmp(row->status, "ok");
	if (row->ok && !json_is_true(pg_json_path(res->json, "perfgate.adaptive_search"))) {
		struct pg_buf why = PG_BUF_INIT;
		if (pg_result_json_incomplete(res->json, &why))
			row->incomplete = pg_buf_detach(&why);
		pg_buf_release(&why);
	}
	row->vals = vals;
	row->flags = flags;
	pg_params_from_result(&row->params, res->json, res->commands);
	if (!row->ok) {
		t->not_ok++;
		return; /* a point that did not complete has no numbers */
	}
	for (size_t c = 0; c < t->n_metrics; c++) {
		const struct pg_metric *m = t->metrics[c];
		json_t *raw;

		if (pg_metric_value(m, res->json, &vals[c]))
			continue;
		raw = pg_json_path(res->json, m->key);
		flags[c] = PG_CELL_PRESENT;
		if (json_is_integer(raw) && m->scale == 1)
			flags[c] |= PG_CELL_INT;
		/* failed requests get a column once a point has any: vLLM's
		 * tables never show them, and a run without failures stays
		 * the table vLLM's users know */
		if (!strcmp(m->key, "failed") && vals[c] == 0)
			continue;
		t->shown[c] = true;
	}
}

struct pg_report *pg_report_new(const struct pg_result_set *rs)
{
	struct pg_report *r = pg_xcalloc(1, sizeof(*r));
	size_t fill[PG_SUITE_COUNT] = { 0 };

	for (int k = 0; k < PG_SUITE_COUNT; k++)
		table_init(&r->tables[k], (enum pg_suite_kind)k);
	for (size_t i = 0; i < rs->n; i++)
		if ((int)rs->items[i].kind >= 0 && rs->items[i].kind < PG_SUITE_COUNT)
			r->tables[rs->items[i].kind].n++;
	for (int k = 0; k < PG_SUITE_COUNT; k++) {
		struct pg_report_table *t = &r->tables[k];
		size_t cells = t->n * (t->n_metrics ? t->n_metrics : 1);

		t->rows = pg_xcalloc(t->n ? t->n : 1, sizeof(*t->rows));
		t->vals = pg_xcalloc(cells ? cells : 1, sizeof(*t->vals));
		t->flags = pg_xcalloc(cells ? cells : 1, 1);
	}
	for (size_t i = 0; i < rs->n; i++) {
		const struct pg_result *res = &rs->items[i];
		struct pg_report_table *t;
		size_t at;

		if ((int)res->kind < 0 || res->kind >= PG_SUITE_COUNT)
			continue;
		t = &r->tables[res->kind];
		at = fill[res->kind]++;
		t->rows[at].res = res;
		row_fill(t, &t->rows[at], t->vals + at * t->n_metrics,
			 t->flags + at * t->n_metrics);
	}
	for (int k = 0; k < PG_SUITE_COUNT; k++) {
		struct pg_report_table *t = &r->tables[k];

		/* rows own their vals/flags slices by position: sort, then
		 * re-point the slices so row i uses slice i again */
		qsort(t->rows, t->n, sizeof(*t->rows), row_cmp);
		if (t->n && t->n_metrics) {
			double *vals = pg_xmalloc(t->n * t->n_metrics * sizeof(*vals));
			unsigned char *flags = pg_xmalloc(t->n * t->n_metrics);

			for (size_t i = 0; i < t->n; i++) {
				memcpy(vals + i * t->n_metrics, t->rows[i].vals,
				       t->n_metrics * sizeof(*vals));
				memcpy(flags + i * t->n_metrics, t->rows[i].flags, t->n_metrics);
				t->rows[i].vals = vals + i * t->n_metrics;
				t->rows[i].flags = flags + i * t->n_metrics;
			}
			free(t->vals);
			free(t->flags);
			t->vals = vals;
			t->flags = flags;
		}
	}
	return r;
}

void pg_report_free(struct pg_report *r)
{
	if (!r)
		return;
	for (int k = 0; k < PG_SUITE_COUNT; k++) {
		struct pg_report_table *t = &r->tables[k];

		for (size_t i = 0; i < t->n; i++) {
			free(t->rows[i].gpu);
			free(t->rows[i].incomplete);
			pg_params_release(&t->rows[i].params);
		}
		free(t->rows);
		free(t->vals);
		free(t->flags);
	}
	free(r);
}

size_t pg_report_rows(const struct pg_report *r, size_t *not_ok)
{
	size_t n = 0, bad = 0;

	for (int k = 0; k < PG_SUITE_COUNT; k++) {
		n += r->tables[k].n;
		bad += r->tables[k].not_ok;
	}
	if (not_ok)
		*not_ok = bad;
	return n;
}

void pg_report_render(struct pg_buf *out, const struct pg_result_set *rs, unsigned flags)
{
	struct pg_report *r = pg_report_new(rs);

	pg_report_markdown(out, r, flags);
	pg_report_free(r);
}
