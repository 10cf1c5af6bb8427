/*
 * The report as JSON: the pandas "dict" orientation embedded in the
 * markdown ({column: {"0": value, ...}}) and the records array of
 * benchmark_results.json. Written straight into the buffer rather than
 * through jansson objects: 10,000 rows make 150,000 cells, and key order
 * must follow the table anyway.
 *
 * The records are what vLLM's compare-json-results.py reads, in each of
 * its generations (docs/design/vllm-benchmarks.md §7): serving rows carry,
 * besides the table's columns, the columns the script aligns rows on
 * (Model, Dataset Name, Input Len, Output Len, TP Size, PP Size, dtype,
 * qps, "# of max concurrency.") and vLLM's own names for the columns it
 * compares where perfgate's table names them differently ("Median" and
 * "P99" are TPOT's, "Total Token Tput (tok/s)"), its current "STD TTFT
 * (ms)" and "STD TPOT (ms)", plus the token totals the 2025 script aligned
 * on. The markdown tables and their JSON section keep
 * the reference reports' columns.
 */
#include "report/report.h"
#include "report/report_impl.h"
#include "results/frontier.h"
#include "results/result.h"

#include "base/buf.h"
#include "base/jsonw.h"
#include "results/metrics.h"
#include "results/result.h"
#include "base/strutil.h"

#include <math.h>
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
 * then Status and Error when some row did not complete. Records of serving
 * rows add vLLM's key columns after the name and its names for compared
 * metrics after the metrics. */
enum col_kind {
	COL_NAME,
	COL_GPU,
	COL_METRIC,
	COL_STATUS,
	COL_ERROR,
	COL_MODEL,
	COL_DATASET,
	COL_INPUT_LEN,
	COL_OUTPUT_LEN,
	COL_TP,
	COL_PP,
	COL_DTYPE,
	COL_QPS,
	COL_CONCURRENCY,
	COL_RAW, /* a result key as it is: vLLM's token totals */
};

struct col {
	enum col_kind kind;
	const char *header;
	size_t metric;   /* COL_METRIC: index into the table's metrics */
	const char *key; /* COL_RAW */
};

#define MAX_COLS (PG_REPORT_MAX_COLUMNS + 20)

/* vLLM's current converter's headers where perfgate's differ, for the
 * metrics compare-json-results.py compares (and its total throughput). */
/* clang-format off */
static const struct {
	const char *header;
	const char *metric;
} vllm_names[] = {
	{ "Total Token Tput (tok/s)", "total_token_throughput" },
	{ "Median", "median_tpot_ms" },
	{ "P99", "p99_tpot_ms" },
};
/* clang-format on */

static size_t table_columns(const struct pg_report_table *t, struct col *cols, bool records)
{
	bool vllm_keys = records && t->kind == PG_SUITE_SERVING;
	size_t n = 0;

	cols[n++] = (struct col){ COL_NAME, "Test name", 0, NULL };
	if (vllm_keys) {
		cols[n++] = (struct col){ COL_MODEL, "Model", 0, NULL };
		cols[n++] = (struct col){ COL_DATASET, "Dataset Name", 0, NULL };
		cols[n++] = (struct col){ COL_INPUT_LEN, "Input Len", 0, NULL };
		cols[n++] = (struct col){ COL_OUTPUT_LEN, "Output Len", 0, NULL };
		cols[n++] = (struct col){ COL_TP, "TP Size", 0, NULL };
		cols[n++] = (struct col){ COL_PP, "PP Size", 0, NULL };
		cols[n++] = (struct col){ COL_DTYPE, "dtype", 0, NULL };
	}
	cols[n++] = (struct col){ COL_GPU, "GPU", 0, NULL };
	if (vllm_keys) {
		cols[n++] = (struct col){ COL_QPS, "qps", 0, NULL };
		cols[n++] = (struct col){ COL_CONCURRENCY, "# of max concurrency.", 0, NULL };
	}
	for (size_t c = 0; c < t->n_metrics; c++)
		if (t->shown[c])
			cols[n++] = (struct col){ COL_METRIC, t->metrics[c]->header, c, NULL };
	if (vllm_keys) {
		for (size_t v = 0; v < sizeof(vllm_names) / sizeof(vllm_names[0]); v++)
			for (size_t c = 0; c < t->n_metrics; c++)
				if (t->shown[c] && !strcmp(t->metrics[c]->id, vllm_names[v].metric))
					cols[n++] = (struct col){ COL_METRIC, vllm_names[v].header,
								  c, NULL };
		/* vLLM's current converter's spread columns (its json has them
		 * whether or not its table shows them) */
		cols[n++] = (struct col){ COL_RAW, "STD TTFT (ms)", 0, "std_ttft_ms" };
		cols[n++] = (struct col){ COL_RAW, "STD TPOT (ms)", 0, "std_tpot_ms" };
		cols[n++] = (struct col){ COL_RAW, "Total input tokens", 0, "total_input_tokens" };
		cols[n++] = (struct col){ COL_RAW, "Total output tokens", 0,
					  "total_output_tokens" };
	}
	if (t->not_ok) {
		cols[n++] = (struct col){ COL_STATUS, "Status", 0, NULL };
		cols[n++] = (struct col){ COL_ERROR, "Error", 0, NULL };
	}
	return n;
}

static void put_long(struct pg_buf *out, long v)
{
	if (v >= 0)
		pg_buf_printf(out, "%ld", v);
	else
		pg_buf_puts(out, "null");
}

/* As vLLM writes a rate: a number, the string "inf", null when unknown. */
static void put_qps(struct pg_buf *out, double qps)
{
	char num[PG_FMT_DOUBLE_SIZE];

	if (isnan(qps))
		pg_buf_puts(out, "null");
	else if (isinf(qps))
		pg_buf_puts(out, "\"inf\"");
	else if (qps == floor(qps) && fabs(qps) < 1e15)
		pg_buf_printf(out, "%.0f", qps);
	else
		pg_buf_puts(out, pg_fmt_repr(num, qps));
}

static void put_raw(struct pg_buf *out, const struct pg_report_row *row, const char *key)
{
	json_t *v = row->ok ? json_object_get(row->res->json, key) : NULL;
	char num[PG_FMT_DOUBLE_SIZE];

	if (json_is_integer(v))
		pg_buf_printf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else if (json_is_real(v) && isfinite(json_real_value(v)))
		pg_buf_puts(out, pg_fmt_repr(num, json_real_value(v)));
	else
		pg_buf_puts(out, "null");
}

static void put_cell(struct pg_buf *out, const struct pg_report_row *row, const struct col *col)
{
	const struct pg_params *p = &row->params;

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
	case COL_MODEL:
		put_string(out, p->model);
		break;
	case COL_DATASET:
		put_string(out, p->dataset);
		break;
	case COL_INPUT_LEN:
		put_long(out, p->input_len);
		break;
	case COL_OUTPUT_LEN:
		put_long(out, p->output_len);
		break;
	case COL_TP:
		put_long(out, p->tp);
		break;
	case COL_PP:
		put_long(out, p->pp);
		break;
	case COL_DTYPE:
		put_string(out, p->dtype);
		break;
	case COL_QPS:
		put_qps(out, p->qps);
		break;
	case COL_CONCURRENCY:
		/* vLLM's max_concurrency: null when unbounded */
		put_long(out, p->max_concurrency > 0 ? p->max_concurrency : -1);
		break;
	case COL_RAW:
		put_raw(out, row, col->key);
		break;
	}
}

static void table_dict(struct pg_buf *out, const struct pg_report_table *t)
{
	struct col cols[MAX_COLS];
	size_t n_cols;

	if (!t->n) {
		pg_buf_puts(out, "{}");
		return;
	}
	n_cols = table_columns(t, cols, false);
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
		/* vLLM's three tables always; startup's when it has rows */
		if (k == PG_SUITE_STARTUP && !r->tables[k].n)
			continue;
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
		struct col cols[MAX_COLS];
		size_t n_cols = table_columns(t, cols, true);

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
