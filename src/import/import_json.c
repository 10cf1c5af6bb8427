/*
 * JSON imports: vllm bench serve / latency / throughput results, llm-d
 * records, perfgate results, benchmark_results.json rows and report table
 * objects, as one value, JSON lines, values written back to back, or
 * arrays of them.
 */
#include "import/import_impl.h"

#include "base/buf.h"
#include "base/error.h"
#include "results/metrics.h"
#include "base/strutil.h"
#include "base/jsonw.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *format_of(enum pg_suite_kind kind)
{
	switch (kind) {
	case PG_SUITE_LATENCY:
		return "vllm-latency";
	case PG_SUITE_THROUGHPUT:
		return "vllm-throughput";
	default:
		return "vllm-serve";
	}
}

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "null";
	}
}

static int is_report_tables(const json_t *o)
{
	size_t n = 0;

	for (int k = 0; k < PG_SUITE_COUNT; k++) {
		json_t *v = json_object_get(o, pg_suite_kind_name((enum pg_suite_kind)k));
		if (!v)
			continue;
		if (!json_is_object(v))
			return 0;
		n++;
	}
	return n > 0 && n == json_object_size(o);
}

/* A copy of o with the old "request_goodput:" key spelled request_goodput,
 * in place (key order is kept: vLLM tooling and diffs read it). */
static json_t *normalise(const json_t *o)
{
	json_t *copy = json_object();
	const char *key;
	json_t *v;
	int has_new = json_object_get(o, "request_goodput") != NULL;

	json_object_foreach((json_t *)o, key, v)
	{
		if (!strcmp(key, "request_goodput:")) {
			if (!has_new)
				json_object_set(copy, "request_goodput", v);
			continue;
		}
		json_object_set(copy, key, v);
	}
	return copy;
}

static int is_inf_string(const json_t *v)
{
	double d;
	return json_is_string(v) && !pg_parse_double(json_string_value(v), &d) && isinf(d);
}

/* Numbers where numbers belong; the record number and key in the message. */
static int validate(struct pg_import_ctx *ctx, const json_t *o, enum pg_suite_kind kind, size_t pos,
		    size_t record)
{
	size_t n;
	const struct pg_metric *all = pg_metrics_all(&n);
	json_t *v;

	for (size_t i = 0; i < n; i++) {
		if (all[i].suite != kind)
			continue;
		v = pg_json_path(o, all[i].key);
		if (v && !json_is_number(v) && !json_is_null(v) && !is_inf_string(v))
			return pg_import_fail(ctx, pos, "record %zu: '%s' must be a number, got %s",
					      record, all[i].key, type_name(v));
	}
	if (kind == PG_SUITE_LATENCY) {
		v = json_object_get(o, "percentiles");
		if (v && !json_is_object(v))
			return pg_import_fail(ctx, pos,
					      "record %zu: 'percentiles' must be an object, got %s",
					      record, type_name(v));
	}
	if (kind == PG_SUITE_SERVING) {
		v = json_object_get(o, "request_rate");
		if (v && !json_is_number(v) && !json_is_null(v) && !is_inf_string(v))
			return pg_import_fail(
				ctx, pos,
				"record %zu: 'request_rate' must be a number or \"inf\", got %s",
				record, json_is_string(v) ? json_string_value(v) : type_name(v));
		v = json_object_get(o, "max_concurrency");
		if (v && !json_is_integer(v) && !json_is_null(v))
			return pg_import_fail(
				ctx, pos,
				"record %zu: 'max_concurrency' must be an integer or null, got %s",
				record, type_name(v));
	}
	return 0;
}

/*
 * An llm-d record names its configuration in vllm bench serve's --metadata
 * (deployment=no-features model=meta-llama/Llama-3.1-8B-Instruct
 * gpu=4xNVIDIA_L40S ...), or its path does (<experiment>/<GPU>/
 * <deployment>/benchmark_<date>.json): its point is serving_<model>_<deployment> and
 * the rate, "serving_Llama-3.1-8B-Instruct_no-features_qps_5", the same
 * whatever the file is called, so a perfgate test of that name compares
 * with it. NULL for other records.
 */
static char *llmd_name(const json_t *o, const char *path_deployment)
{
	const char *deployment = json_string_value(json_object_get(o, "deployment"));
	const char *model = json_string_value(json_object_get(o, "model"));
	const char *slash;
	struct pg_buf b = PG_BUF_INIT;

	if (!deployment || !*deployment)
		deployment = path_deployment; /* <experiment>/<GPU>/<deployment>/ */
	if (!deployment || !*deployment)
		return NULL;
	if (!model || !*model)
		model = json_string_value(json_object_get(o, "model_id"));
	pg_buf_puts(&b, "serving_");
	if (model && *model) {
		slash = strrchr(model, '/');
		pg_buf_printf(&b, "%s_", slash && slash[1] ? slash + 1 : model);
	}
	pg_buf_puts(&b, deployment);
	pg_import_point_suffix(&b, o);
	return pg_buf_detach(&b);
}

static int handle_object(struct pg_import_ctx *ctx, const json_t *o, size_t pos, size_t *reports)
{
	size_t record = ctx->records + 1;
	json_t *copy, *point;
	char *llmd;
	int kind;

	if (!json_is_object(o))
		return pg_import_fail(ctx, pos, "record %zu: expected a JSON object, got %s",
				      record, type_name(o));
	if (pg_import_tool_of(o) != PG_TOOL_NONE)
		return pg_import_tool_object(ctx, o, pos);
	if (is_report_tables(o))
		return pg_import_report_tables(ctx, o, pos, ++*reports);
	if (json_object_get(o, "Test name")) {
		char where[64];
		snprintf(where, sizeof(where), "record %zu", record);
		return pg_import_table_row(ctx, -1, o, pos, where, "records");
	}
	if (json_object_get(o, "benchmark") && json_object_get(o, "metric"))
		return pg_import_fail(
			ctx, pos,
			"record %zu: a PyTorch benchmark-database record (*.pytorch.json); "
			"import the vLLM result file it was made from",
			record);
	if (json_object_get(o, "verdict") && json_is_array(json_object_get(o, "rows")))
		return pg_import_fail(ctx, pos,
				      "record %zu: a perfgate verdict (verdict.json, the output of "
				      "compare), not benchmark results",
				      record);
	kind = pg_result_kind(o);
	if (kind < 0)
		return pg_import_fail(ctx, pos,
				      "record %zu: not a benchmark result (no avg_latency, "
				      "requests_per_second or request_throughput key)",
				      record);
	if (validate(ctx, o, (enum pg_suite_kind)kind, pos, record))
		return PG_ECONFIG;
	copy = normalise(o);
	point = json_object_get(json_object_get(o, "perfgate"), "point");
	llmd = kind == PG_SUITE_SERVING && !point
		       ? llmd_name(o, ctx->opts ? ctx->opts->deployment : NULL)
		       : NULL;
	if (llmd)
		pg_import_push(ctx, copy, PG_SUITE_SERVING, llmd, NULL, "llm-d", pos);
	else
		pg_import_push(ctx, copy, (enum pg_suite_kind)kind,
			       json_is_string(point) ? json_string_value(point) : NULL, NULL,
			       format_of((enum pg_suite_kind)kind), pos);
	free(llmd);
	return 0;
}

bool pg_import_is_results(const json_t *v)
{
	size_t i;
	json_t *item;

	if (json_is_array(v)) {
		bool any = false;

		json_array_foreach(v, i, item)
		{
			if (!json_is_object(item))
				return false;
			any = any || pg_import_is_results(item);
		}
		return any;
	}
	return json_is_object(v) &&
	       (pg_import_tool_of(v) != PG_TOOL_NONE || is_report_tables(v) ||
		json_is_string(json_object_get(v, "Test name")) || pg_result_kind(v) >= 0);
}

int pg_import_value(struct pg_import_ctx *ctx, const json_t *v, size_t pos, size_t *reports)
{
	size_t i;
	json_t *item;

	if (!json_is_array(v))
		return handle_object(ctx, v, pos, reports);
	json_array_foreach(v, i, item)
	{
		int ret = handle_object(ctx, item, pos, reports);
		if (ret)
			return ret;
	}
	return 0;
}

int pg_import_json(struct pg_import_ctx *ctx)
{
	struct pg_lenient_json lj;
	size_t off = 0, reports = 0;
	int ret = 0;

	pg_lenient_json_init(&lj, ctx->text, ctx->len);
	if (lj.len >= 3 && !memcmp(lj.text, "\xEF\xBB\xBF", 3))
		off = 3;
	while (ret == 0) {
		json_error_t jerr;
		json_t *v;
		size_t start;

		while (off < lj.len && isspace((unsigned char)lj.text[off]))
			off++;
		if (off >= lj.len)
			break;
		start = off;
		if (lj.text[off] != '{' && lj.text[off] != '[') {
			ret = pg_import_fail(ctx, pg_lenient_json_orig(&lj, off),
					     "record %zu: expected a JSON object, got '%c'",
					     ctx->records + 1, lj.text[off]);
			break;
		}
		v = json_loadb(lj.text + off, lj.len - off, JSON_DISABLE_EOF_CHECK, &jerr);
		if (!v) {
			/* jansson's position is just past the offending token;
			 * point at its last character, as jansson's column does */
			size_t at = off + (jerr.position > 0 ? (size_t)jerr.position - 1 : 0);
			ret = pg_import_fail(ctx, pg_lenient_json_orig(&lj, at), "record %zu: %s",
					     ctx->records + 1, jerr.text);
			/* text that merely starts with '[' or '{' (a log line's
			 * "[timestamp]") may still be text perfgate reads */
			ctx->first_value_bad = ctx->records == 0;
			break;
		}
		off += (size_t)jerr.position;
		ret = pg_import_value(ctx, v, pg_lenient_json_orig(&lj, start), &reports);
		json_decref(v);
	}
	pg_lenient_json_release(&lj);
	return ret;
}
