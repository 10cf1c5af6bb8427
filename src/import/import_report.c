/*
 * Imports from reports: the JSON sections of benchmark_results.md (vLLM's
 * or perfgate's, any number per file) and benchmark_results.json rows.
 * A row is {header: value}; headers map back to result keys through the
 * metric registry first, then through the headers older and newer vLLM
 * converters used (research: vllm-perf-ci.md section 4.2).
 */
#include "import/import_impl.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "results/metrics.h"
#include "results/params.h"
#include "base/strutil.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum col_type {
	C_NUM,     /* a measurement at `key`, display = stored * scale */
	C_INT,     /* a count at `key` */
	C_STR,     /* a string at `key` */
	C_RATE,    /* request_rate: a number or "inf" */
	C_CONC,    /* max_concurrency: an integer or null */
	C_DATASET, /* workload parameters, not result keys */
	C_INPUT_LEN,
	C_OUTPUT_LEN,
	C_TP,
	C_STATUS, /* perfgate's own report columns */
	C_ERROR,
};

#define ANY (-1)
#define LAT PG_SUITE_LATENCY
#define THR PG_SUITE_THROUGHPUT
#define SRV PG_SUITE_SERVING

struct column_map {
	int suite;
	const char *header;
	const char *key;
	double scale;
	enum col_type type;
};

/* Headers of other converter generations (the registry's come first). */
/* clang-format off */
static const struct column_map aliases[] = {
	{ LAT, "Average latency (s)", "avg_latency", 1, C_NUM },
	{ LAT, "P10 (s)", "percentiles.10", 1, C_NUM },
	{ LAT, "P25 (s)", "percentiles.25", 1, C_NUM },
	{ LAT, "P50 (s)", "percentiles.50", 1, C_NUM },
	{ LAT, "P75 (s)", "percentiles.75", 1, C_NUM },
	{ LAT, "P90 (s)", "percentiles.90", 1, C_NUM },
	{ LAT, "P99 (s)", "percentiles.99", 1, C_NUM },
	{ THR, "# of req.", "num_requests", 1, C_INT },
	{ THR, "Total # of tokens", "total_num_tokens", 1, C_INT },
	{ THR, "Elapsed time (s)", "elapsed_time", 1, C_NUM },
	{ THR, "Tput (tok/s)", "tokens_per_second", 1, C_NUM },
	{ SRV, "Total Token Tput (tok/s)", "total_token_throughput", 1, C_NUM },
	{ SRV, "Successful req.", "completed", 1, C_INT },
	{ SRV, "Completed requests", "completed", 1, C_INT },
	{ SRV, "Throughput (req/s)", "request_throughput", 1, C_NUM },
	{ SRV, "Total input tokens", "total_input_tokens", 1, C_INT },
	{ SRV, "Total output tokens", "total_output_tokens", 1, C_INT },
	{ SRV, "STD TTFT (ms)", "std_ttft_ms", 1, C_NUM },
	{ SRV, "STD TPOT (ms)", "std_tpot_ms", 1, C_NUM },
	{ SRV, "STD ITL (ms)", "std_itl_ms", 1, C_NUM },
	/* upstream's 2025 and current converters name the TPOT columns bare */
	{ SRV, "Median", "median_tpot_ms", 1, C_NUM },
	{ SRV, "P99", "p99_tpot_ms", 1, C_NUM },
	{ SRV, "Model", "model_id", 1, C_STR },
	{ SRV, "qps", "request_rate", 1, C_RATE },
	{ SRV, "# of max concurrency.", "max_concurrency", 1, C_CONC },
	{ ANY, "Dataset Name", NULL, 1, C_DATASET },
	{ ANY, "Input Len", NULL, 1, C_INPUT_LEN },
	{ ANY, "Output Len", NULL, 1, C_OUTPUT_LEN },
	{ ANY, "TP Size", NULL, 1, C_TP },
	{ ANY, "Status", NULL, 1, C_STATUS },
	{ ANY, "Error", NULL, 1, C_ERROR },
};
/* clang-format on */

/* How a header of a suite's table maps to the result; 0 when unknown. */
static int map_header(int suite, const char *header, struct column_map *out)
{
	size_t n;
	const struct pg_metric *all = pg_metrics_all(&n);

	for (size_t i = 0; i < n; i++) {
		if ((int)all[i].suite != suite || !all[i].header || strcmp(all[i].header, header))
			continue;
		*out = (struct column_map){ suite, header, all[i].key, all[i].scale,
					    all[i].cls == PG_CLASS_COUNT ? C_INT : C_NUM };
		return 1;
	}
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++) {
		if ((aliases[i].suite == suite || aliases[i].suite == ANY) &&
		    !strcmp(aliases[i].header, header)) {
			*out = aliases[i];
			return 1;
		}
	}
	return 0;
}

/* The suite of a benchmark_results.json row: vLLM's test-name prefix
 * ("latency_", "throughput_", "serving_") when there is one, else the suite
 * whose table knows every measurement header of the row (latency, then
 * throughput, then serving). -1 when none does. */
static int infer_suite(const json_t *row, const char *name)
{
	const char *key;
	json_t *v;

	for (int k = 0; k < PG_SUITE_COUNT; k++) {
		const char *s = pg_suite_kind_name((enum pg_suite_kind)k);
		size_t l = strlen(s);
		if (!strncmp(name, s, l) && name[l] == '_')
			return k;
	}
	for (int k = 0; k < PG_SUITE_COUNT; k++) {
		size_t known = 0, measurements = 0;

		json_object_foreach((json_t *)row, key, v)
		{
			struct column_map m;
			if (!strcmp(key, "Test name") || !strcmp(key, "GPU"))
				continue;
			if (map_header(k, key, &m) && m.suite == ANY)
				continue;
			measurements++;
			if (map_header(k, key, &m))
				known++;
		}
		if (measurements && known == measurements)
			return k;
	}
	return -1;
}

/* The stored value whose display (stored * scale) is exactly v: the
 * report's numbers were made as seconds * 1000 in double arithmetic, so
 * the neighbour of v / 1000 that multiplies back to v is the original. */
static double unscale(double v, double scale)
{
	double x = v / scale, up = x, down = x;

	if (scale == 1 || x * scale == v)
		return x;
	for (int i = 0; i < 4; i++) {
		up = nextafter(up, INFINITY);
		down = nextafter(down, -INFINITY);
		if (up * scale == v)
			return up;
		if (down * scale == v)
			return down;
	}
	return x;
}

static json_t *number_value(const json_t *v, enum col_type type, double scale)
{
	double d = json_number_value(v);

	if (json_is_integer(v) && scale == 1)
		return json_integer(json_integer_value(v));
	if (type == C_INT && d == floor(d) && fabs(d) < 9e15)
		return json_integer((json_int_t)d);
	return json_real(unscale(d, scale));
}

/* "x_qps_4_concurrency_16" -> qps 4, concurrency 16, as vLLM names points. */
static void params_from_name(struct pg_params *p, const char *name)
{
	const char *q = NULL, *c;
	char tok[32];
	double d;
	long l;

	for (const char *s = name; (s = strstr(s, "_qps_")) != NULL; s++)
		q = s + 5;
	if (!q)
		return;
	snprintf(tok, sizeof(tok), "%.*s", (int)strcspn(q, "_"), q);
	if (isnan(p->qps) && pg_parse_double(tok, &d) == 0 && d >= 0)
		p->qps = d;
	c = strstr(q, "_concurrency_");
	if (!c || p->max_concurrency >= 0)
		return;
	snprintf(tok, sizeof(tok), "%.*s", (int)strcspn(c + 13, "_"), c + 13);
	if (!strcmp(tok, "inf"))
		p->max_concurrency = 0;
	else if (pg_parse_long(tok, &l) == 0 && l > 0)
		p->max_concurrency = l;
}

static int param_long(const json_t *v, long *out)
{
	double d;

	if (json_is_integer(v)) {
		*out = (long)json_integer_value(v);
		return 0;
	}
	if (json_is_real(v)) {
		d = json_real_value(v);
		if (d != floor(d) || d < 0 || d >= 1e15)
			return -1;
		*out = (long)d;
		return 0;
	}
	if (json_is_string(v))
		return pg_parse_long(json_string_value(v), out);
	return -1;
}

int pg_import_table_row(struct pg_import_ctx *ctx, int kind, const json_t *row, size_t pos,
			const char *where, const char *format)
{
	json_t *name_v = json_object_get(row, "Test name");
	json_t *gpu_v = json_object_get(row, "GPU");
	json_t *result = NULL, *pg = NULL, *extra = NULL;
	const char *name, *key;
	json_t *v;
	struct pg_params p;
	const char *dataset = NULL;
	long input_len = -1, output_len = -1, tp = -1;

	if (!json_is_string(name_v) || !json_string_length(name_v))
		return pg_import_fail(ctx, pos, "%s: 'Test name' must be a non-empty string",
				      where);
	name = json_string_value(name_v);
	if (gpu_v && !json_is_string(gpu_v) && !json_is_null(gpu_v))
		return pg_import_fail(ctx, pos, "%s ('%s'): 'GPU' must be a string", where, name);
	if (kind < 0 && (kind = infer_suite(row, name)) < 0)
		return pg_import_fail(ctx, pos, "%s ('%s'): cannot tell the suite from its columns",
				      where, name);

	result = json_object();
	pg = json_object();
	json_object_set_new(pg, "suite", json_string(pg_suite_kind_name((enum pg_suite_kind)kind)));
	json_object_foreach((json_t *)row, key, v)
	{
		struct column_map m;

		if (!strcmp(key, "Test name") || !strcmp(key, "GPU"))
			continue;
		if (!map_header(kind, key, &m)) {
			/* kept, so nothing the source had is lost */
			if (!extra)
				extra = json_object();
			json_object_set(extra, key, v);
			continue;
		}
		if (json_is_null(v))
			continue;
		switch (m.type) {
		case C_NUM:
		case C_INT:
			if (json_is_string(v) && (!strcmp(json_string_value(v), "inf") ||
						  !strcmp(json_string_value(v), "-inf")))
				break; /* Python's Infinity: not a measurement */
			if (!json_is_number(v))
				goto bad_number;
			pg_import_set_path(result, m.key, number_value(v, m.type, m.scale));
			break;
		case C_RATE:
			if (!json_is_number(v) && !json_is_string(v))
				goto bad_number;
			json_object_set(result, m.key, v);
			break;
		case C_CONC:
			if (!json_is_number(v))
				goto bad_number;
			json_object_set_new(result, m.key, number_value(v, C_INT, 1));
			break;
		case C_STR:
			if (json_is_string(v))
				json_object_set(result, m.key, v);
			break;
		case C_DATASET:
			dataset = json_string_value(v);
			break;
		case C_INPUT_LEN:
			param_long(v, &input_len);
			break;
		case C_OUTPUT_LEN:
			param_long(v, &output_len);
			break;
		case C_TP:
			param_long(v, &tp);
			break;
		case C_STATUS:
			if (!json_is_string(v))
				goto bad_string;
			json_object_set(pg, "status", v);
			break;
		case C_ERROR:
			if (!json_is_string(v))
				goto bad_string;
			json_object_set(pg, "error", v);
			break;
		}
		continue;
	bad_number:
		json_decref(result);
		json_decref(pg);
		json_decref(extra);
		return pg_import_fail(ctx, pos, "%s ('%s'): '%s' must be a number, got %s", where,
				      name, key,
				      json_is_string(v) ? json_string_value(v) : "another type");
	bad_string:
		json_decref(result);
		json_decref(pg);
		json_decref(extra);
		return pg_import_fail(ctx, pos, "%s ('%s'): '%s' must be a string", where, name,
				      key);
	}

	pg_params_from_result(&p, result, NULL);
	if (kind == PG_SUITE_SERVING)
		params_from_name(&p, name);
	if (dataset && !p.dataset)
		p.dataset = pg_xstrdup(dataset);
	if (input_len >= 0)
		p.input_len = input_len;
	if (output_len >= 0)
		p.output_len = output_len;
	if (tp >= 0)
		p.tp = tp;
	json_object_set_new(pg, "params", pg_params_to_json(&p));
	pg_params_release(&p);
	if (extra)
		json_object_set_new(pg, "columns", extra);
	json_object_set_new(result, "perfgate", pg);
	pg_import_push(ctx, result, (enum pg_suite_kind)kind, name, json_string_value(gpu_v),
		       format, pos);
	return 0;
}

int pg_import_report_tables(struct pg_import_ctx *ctx, const json_t *tables, size_t pos,
			    size_t report_no)
{
	for (int k = 0; k < PG_SUITE_COUNT; k++) {
		const char *suite = pg_suite_kind_name((enum pg_suite_kind)k);
		json_t *table = json_object_get(tables, suite);
		json_t *names, *col, *row;
		const char *header, *idx;
		json_t *name;

		if (!table || !json_object_size(table))
			continue;
		names = json_object_get(table, "Test name");
		if (!json_is_object(names))
			return pg_import_fail(ctx, pos, "report %zu, %s: no 'Test name' column",
					      report_no, suite);
		json_object_foreach(table, header, col)
		{
			if (!json_is_object(col))
				return pg_import_fail(
					ctx, pos,
					"report %zu, %s: column '%s' must be an object "
					"{\"0\": value, ...}",
					report_no, suite, header);
			if (json_object_size(col) > json_object_size(names))
				return pg_import_fail(
					ctx, pos,
					"report %zu, %s: column '%s' has rows that 'Test name' lacks",
					report_no, suite, header);
		}
		row = json_object();
		json_object_foreach(names, idx, name)
		{
			char where[96];
			int rc;

			json_object_clear(row);
			json_object_foreach(table, header, col)
			{
				json_t *v = json_object_get(col, idx);
				if (v)
					json_object_set(row, header, v);
			}
			snprintf(where, sizeof(where), "report %zu, %s row %s", report_no, suite,
				 idx);
			rc = pg_import_table_row(ctx, k, row, pos, where, "report");
			if (rc) {
				json_decref(row);
				return rc;
			}
		}
		json_decref(row);
	}
	return 0;
}
