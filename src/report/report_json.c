/*
 * The report as JSON: the pandas "dict" orientation embedded in the
 * markdown ({column: {"0": value, ...}}) and the records array of
 * benchmark_results.json. Written straight into the buffer rather than
 * through jansson objects: 10,000 rows make 150,000 cells, and key order
 * must follow the table anyway.
 */
#include "report/report.h"
#include "report/report_impl.h"
#include "results/frontier.h"
#include "results/result.h"

#include "base/buf.h"
#include "base/jsonw.h"
#include "results/metrics.h"
#include "base/strutil.h"

#include <string.h>

static void put_string(struct pg_buf *out, const char *s)
{
	if (s)
		pg_json_write_string(out, s, strlen(s));
	else
		pg_buf_puts(out, "null");
}

static void put_value(struct pg_buf *out, const struct pg_report_row *row, size_t c)
{
	char num[PG_FMT_DOUBLE_SIZE];

	if (!(row->flags[c] & PG_CELL_PRESENT))
		pg_buf_puts(out, "null");
	else if (row->flags[c] & PG_CELL_INT)
		pg_buf_printf(out, "%.0f", row->vals[c]);
	else
		pg_buf_puts(out, pg_fmt_repr(num, row->vals[c]));
}

/* The columns of a table, in order: Test name, GPU, the metrics with data,
 * then Status and Error when some row did not complete. */
enum col_kind { COL_NAME, COL_GPU, COL_METRIC, COL_STATUS, COL_ERROR };

struct col {
	enum col_kind kind;
	const char *header;
	size_t metric;
};

static size_t table_columns(const struct pg_report_table *t, struct col *cols)
{
	size_t n = 0;

	cols[n++] = (struct col){ COL_NAME, "Test name", 0 };
	cols[n++] = (struct col){ COL_GPU, "GPU", 0 };
	for (size_t c = 0; c < t->n_metrics; c++)
		if (t->shown[c])
			cols[n++] = (struct col){ COL_METRIC, t->metrics[c]->header, c };
	if (t->not_ok) {
		cols[n++] = (struct col){ COL_STATUS, "Status", 0 };
		cols[n++] = (struct col){ COL_ERROR, "Error", 0 };
	}
	return n;
}

static void put_cell(struct pg_buf *out, const struct pg_report_row *row, const struct col *col)
{
	switch (col->kind) {
	case COL_NAME:
		put_string(out, row->name);
		break;
	case COL_GPU:
		put_string(out, row->gpu);
		break;
	case COL_METRIC:
		put_value(out, row, col->metric);
		break;
	case COL_STATUS:
		put_string(out, row->status);
		break;
	case COL_ERROR:
		put_string(out, row->ok ? NULL : row->error);
		break;
	}
}

static void table_dict(struct pg_buf *out, const struct pg_report_table *t)
{
	struct col cols[PG_REPORT_MAX_COLUMNS + 4];
	size_t n_cols;

	if (!t->n) {
		pg_buf_puts(out, "{}");
		return;
	}
	n_cols = table_columns(t, cols);
	pg_buf_putc(out, '{');
	for (size_t c = 0; c < n_cols; c++) {
		if (c)
			pg_buf_puts(out, ", ");
		put_string(out, cols[c].header);
		pg_buf_puts(out, ": {");
		for (size_t i = 0; i < t->n; i++) {
			pg_buf_printf(out, "%s\"%zu\": ", i ? ", " : "", i);
			put_cell(out, &t->rows[i], &cols[c]);
		}
		pg_buf_putc(out, '}');
	}
	pg_buf_putc(out, '}');
}

void pg_report_json_tables(struct pg_buf *out, const struct pg_report *r)
{
	pg_buf_putc(out, '{');
	for (int k = 0; k < PG_SUITE_COUNT; k++) {
		pg_buf_printf(out, "%s\"%s\": ", k ? ", " : "",
			      pg_suite_kind_name((enum pg_suite_kind)k));
		table_dict(out, &r->tables[k]);
	}
	pg_buf_putc(out, '}');
}

void pg_report_records(struct pg_buf *out, const struct pg_report *r)
{
	int first = 1;

	pg_buf_putc(out, '[');
	for (int k = 0; k < PG_SUITE_COUNT; k++) {
		const struct pg_report_table *t = &r->tables[k];
		struct col cols[PG_REPORT_MAX_COLUMNS + 4];
		size_t n_cols = table_columns(t, cols);

		for (size_t i = 0; i < t->n; i++) {
			pg_buf_puts(out, first ? "{" : ", {");
			first = 0;
			for (size_t c = 0; c < n_cols; c++) {
				if (c)
					pg_buf_puts(out, ", ");
				put_string(out, cols[c].header);
				pg_buf_puts(out, ": ");
				put_cell(out, &t->rows[i], &cols[c]);
			}
			pg_buf_putc(out, '}');
		}
	}
	pg_buf_puts(out, "]\n");
}

size_t pg_report_inferencex(struct pg_buf *out, const struct pg_report *r)
{
	const struct pg_report_table *t = &r->tables[PG_SUITE_SERVING];
	json_t *rows = json_array();
	size_t n;

	for (size_t i = 0; i < t->n; i++) {
		const struct pg_report_row *row = &t->rows[i];
		const char *key = pg_json_path_str(row->res->json, "perfgate.gpu.key");
		char device[64] = "";
		json_t *x;

		if (!row->ok)
			continue;
		/* the dashboard's devices are lower case: "h200", "b200" */
		for (size_t k = 0; key && key[k] && k + 1 < sizeof(device); k++) {
			device[k] = (char)((key[k] >= 'A' && key[k] <= 'Z') ? key[k] - 'A' + 'a'
									    : key[k]);
			device[k + 1] = '\0';
		}
		x = pg_frontier_inferencex_row(row->res->json, device[0] ? device : NULL);
		if (x)
			json_array_append_new(rows, x);
	}
	n = json_array_size(rows);
	if (n) {
		pg_json_write(out, rows, 4);
		pg_buf_putc(out, '\n');
	}
	json_decref(rows);
	return n;
}
