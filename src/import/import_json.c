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
#include "results/repeats.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
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
	case PG_SUITE_STARTUP:
		return "vllm-startup";
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

/*
 * SGLang's bench_serving writes vLLM's record with its own names for two
 * metrics: <stat>_e2e_latency_ms (vLLM's <stat>_e2el_ms) and
 * total_throughput (total_token_throughput). A record that has them and
 * not vLLM's names is SGLang's, whatever its backend.
 */
static const char E2E_SUFFIX[] = "_e2e_latency_ms";

static bool is_sglang_record(const json_t *o)
{
	return !json_object_get(o, "mean_e2el_ms") &&
	       !json_object_get(o, "total_token_throughput") &&
	       (json_object_get(o, "mean_e2e_latency_ms") ||
		json_object_get(o, "total_throughput") ||
		json_object_get(o, "total_output_tokens_retokenized"));
}

/* The vLLM name of an SGLang key (in buf), or NULL when it has the same. */
static const char *vllm_name_of_sglang(const char *key, char *buf, size_t size)
{
	size_t n = strlen(key), sfx = sizeof(E2E_SUFFIX) - 1;

	if (!strcmp(key, "total_throughput"))
		return "total_token_throughput";
	if (n > sfx && !strcmp(key + n - sfx, E2E_SUFFIX)) {
		snprintf(buf, size, "%.*s_e2el_ms", (int)(n - sfx), key);
		return buf;
	}
	return NULL;
}

/* rec with SGLang's names spelled as vLLM's, in place (key order kept), so
 * compare, report and the gate see E2E latency and total throughput; what
 * was renamed is kept under perfgate.import.renamed. */
static json_t *sglang_to_vllm_names(json_t *rec)
{
	json_t *out = json_object(), *renamed = json_object(), *v;
	const char *key;
	char buf[128];

	json_object_foreach(rec, key, v)
	{
		const char *to = vllm_name_of_sglang(key, buf, sizeof(buf));

		if (to && !json_object_get(rec, to)) {
			json_object_set(out, to, v);
			json_object_set_new(renamed, key, json_string(to));
		} else {
			json_object_set(out, key, v);
		}
	}
	json_decref(rec);
	if (json_object_size(renamed))
		pg_import_set_path(out, "perfgate.import.renamed", renamed);
	else
		json_decref(renamed);
	return out;
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
	if (kind == PG_SUITE_STARTUP) {
		static const char *const phases[] = { "cold", "warm" };
		size_t k;
		json_t *span;

		/* vllm bench startup's cold-start spans (vllm/benchmarks/
		 * startup_spans.py): kept as they are, shown by the report */
		v = json_object_get(o, "phases");
		if (v && !json_is_array(v))
			return pg_import_fail(ctx, pos,
					      "record %zu: 'phases' must be a list, got %s", record,
					      type_name(v));
		json_array_foreach(v, k, span)
		{
			if (!json_is_string(json_object_get(span, "name")) ||
			    !json_is_number(json_object_get(span, "duration_s")))
				return pg_import_fail(
					ctx, pos,
					"record %zu: 'phases'[%zu] must be an object "
					"with a string 'name' and a number 'duration_s'",
					record, k);
		}
		static const char *const measures[] = { "startup", "compilation",
							"encoder_compilation", "first_token" };
		char key[64];

		for (size_t ph = 0; ph < 2; ph++) {
			for (size_t m = 0; m < sizeof(measures) / sizeof(measures[0]); m++) {
				size_t i;
				json_t *x;

				snprintf(key, sizeof(key), "%s_%s_times", phases[ph], measures[m]);
				v = json_object_get(o, key);
				if (v && !json_is_array(v))
					return pg_import_fail(ctx, pos,
							      "record %zu: '%s' must be a list of "
							      "seconds, got %s",
							      record, key, type_name(v));
				json_array_foreach(v, i, x) if (!json_is_number(x)) return pg_import_fail(
					ctx, pos, "record %zu: '%s'[%zu] must be a number, got %s",
					record, key, i, type_name(x));
				snprintf(key, sizeof(key), "%s_%s_percentiles", phases[ph],
					 measures[m]);
				v = json_object_get(o, key);
				if (v && !json_is_object(v))
					return pg_import_fail(
						ctx, pos,
						"record %zu: '%s' must be an object, got %s",
						record, key, type_name(v));
			}
		}
	}
	if (kind == PG_SUITE_SERVING) {
		/* vLLM's steady-state view of the point: its keys are read as
		 * steady_state_* metrics (checked above by their paths) */
		v = json_object_get(o, "steady_state");
		if (v && !json_is_object(v) && !json_is_null(v))
			return pg_import_fail(
				ctx, pos, "record %zu: 'steady_state' must be an object, got %s",
				record, type_name(v));
		v = json_object_get(o, "run_number");
		if (v && !json_is_integer(v))
			return pg_import_fail(ctx, pos,
					      "record %zu: 'run_number' must be an integer, got %s",
					      record, type_name(v));
		v = json_object_get(o, "aggregated_repetitions");
		if (v && !(json_is_integer(v) && json_integer_value(v) >= 1))
			return pg_import_fail(ctx, pos,
					      "record %zu: 'aggregated_repetitions' must be an "
					      "integer >= 1, got %s",
					      record, type_name(v));
		v = json_object_get(o, "individual_result_files");
		if (v) {
			size_t i;
			json_t *x;

			if (!json_is_array(v))
				return pg_import_fail(
					ctx, pos,
					"record %zu: 'individual_result_files' must be "
					"a list of file names, got %s",
					record, type_name(v));
			json_array_foreach(v, i, x) if (!json_is_string(x)) return pg_import_fail(
				ctx, pos,
				"record %zu: 'individual_result_files'[%zu] must be a file name, "
				"got %s",
				record, i, type_name(x));
		}
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

/*
 * vllm bench sweep (vllm/benchmarks/sweep/serve.py) writes, per
 * combination directory SERVE-<serve>-BENCH-<bench>/, run=<n>.json (a
 * vllm bench serve record plus the combination's override keys and
 * run_number), warmup.json (run_number -1), summary.json (the list of the
 * combination's successful run records) and, with --continue-on-error,
 * run=<n>.failure.json ({run_number, error_type, error, serve_overrides,
 * bench_overrides}) or, for a server that failed, SERVE-<name>-failure.json
 * beside the combinations (without run_number and bench_overrides).
 */
static bool is_sweep_failure(const json_t *o)
{
	return json_is_string(json_object_get(o, "error_type")) && json_object_get(o, "error") &&
	       (json_object_get(o, "serve_overrides") || json_object_get(o, "bench_overrides"));
}

/* A failed run of a sweep: a point whose status is error, its overrides
 * and run number kept under perfgate.import.sweep. */
static int handle_sweep_failure(struct pg_import_ctx *ctx, const json_t *o, size_t pos)
{
	json_t *err = json_object_get(o, "error");
	json_t *run = json_object_get(o, "run_number");
	json_t *rec = json_object(), *pg = json_object(), *imp = json_object();
	json_t *sweep = json_object();
	struct pg_buf msg = PG_BUF_INIT;

	pg_buf_printf(&msg, "vllm bench sweep: %s: %s",
		      json_string_value(json_object_get(o, "error_type")),
		      json_is_string(err) ? json_string_value(err) : "(no message)");
	json_object_set_new(sweep, "run_number",
			    json_is_integer(run) ? json_incref(run) : json_null());
	json_object_set(sweep, "serve_overrides",
			json_object_get(o, "serve_overrides")
				? json_object_get(o, "serve_overrides")
				: json_null());
	json_object_set(sweep, "bench_overrides",
			json_object_get(o, "bench_overrides")
				? json_object_get(o, "bench_overrides")
				: json_null());
	json_object_set_new(imp, "sweep", sweep);
	json_object_set_new(pg, "status", json_string("error"));
	json_object_set_new(pg, "error", json_string(msg.ptr));
	json_object_set_new(pg, "import", imp);
	json_object_set_new(rec, "perfgate", pg);
	pg_buf_release(&msg);
	pg_import_push(ctx, rec, PG_SUITE_SERVING, NULL, NULL, "vllm-sweep-failure", pos);
	return 0;
}

/* An array of a sweep combination's run records (summary.json): every
 * item a serving record with a run_number. */
static bool is_sweep_summary(const json_t *v)
{
	size_t i;
	json_t *item;

	if (!json_is_array(v) || !json_array_size(v))
		return false;
	json_array_foreach(v, i, item)
	{
		if (!json_is_object(item) ||
		    !json_is_integer(json_object_get(item, "run_number")) ||
		    pg_result_kind(item) != PG_SUITE_SERVING || json_object_get(item, "perfgate"))
			return false;
	}
	return true;
}

/*
 * summary.json: one point, its runs the samples (perfgate.repeats, as a
 * test's repeat: N makes them), the median of each key at the top, and
 * the run numbers under perfgate.import.sweep.
 */
static int handle_sweep_summary(struct pg_import_ctx *ctx, const json_t *v, size_t pos)
{
	size_t n = json_array_size(v), i;
	json_t **runs = calloc(n, sizeof(*runs));
	json_t *merged, *pg, *imp, *sweep, *numbers, *reps, *item;
	int ret = 0;

	if (!runs)
		return pg_import_fail(ctx, pos, "out of memory");
	json_array_foreach(v, i, item)
	{
		if ((ret = validate(ctx, item, PG_SUITE_SERVING, pos, ctx->records + 1 + i)))
			break;
		runs[i] = normalise(item);
	}
	if (ret) {
		for (size_t k = 0; k < n; k++)
			json_decref(runs[k]);
		free(runs);
		return ret;
	}
	merged = pg_repeats_median(runs, n);
	numbers = json_array();
	reps = json_array();
	for (size_t k = 0; k < n; k++) {
		json_array_append(numbers, json_object_get(runs[k], "run_number"));
		if (n > 1)
			json_array_append_new(reps, pg_repeats_metrics(runs[k]));
		json_decref(runs[k]);
	}
	free(runs);
	json_object_del(merged, "run_number");
	pg = json_object();
	imp = json_object();
	sweep = json_object();
	json_object_set_new(sweep, "runs", json_integer((json_int_t)n));
	json_object_set_new(sweep, "run_numbers", numbers);
	json_object_set_new(imp, "sweep", sweep);
	if (n > 1)
		json_object_set_new(pg, "repeats", reps);
	else
		json_decref(reps);
	json_object_set_new(pg, "import", imp);
	json_object_set_new(merged, "perfgate", pg);
	pg_import_push(ctx, merged, PG_SUITE_SERVING, NULL, NULL, "vllm-sweep-summary", pos);
	ctx->records += n - 1; /* push counted one */
	return 0;
}

/* perfgate.import's provenance of a sweep run record and of a perf-eval
 * aggregate ({aggregation_method, aggregated_repetitions,
 * individual_result_files}: n runs summarised as one; import_io.c reads
 * the individual files, when they are there, as its samples). */
static void note_provenance(json_t *rec)
{
	json_t *run = json_object_get(rec, "run_number");
	json_t *n = json_object_get(rec, "aggregated_repetitions");
	json_t *pg, *imp;

	if (!run && !n)
		return;
	pg = json_object();
	imp = json_object();
	if (run) {
		json_t *sweep = json_object();
		json_object_set(sweep, "run_number", run);
		json_object_set_new(imp, "sweep", sweep);
	}
	if (n) {
		json_t *agg = json_object();
		json_t *method = json_object_get(rec, "aggregation_method");
		json_t *files = json_object_get(rec, "individual_result_files");

		json_object_set_new(agg, "method",
				    json_is_string(method) ? json_incref(method) : json_null());
		json_object_set(agg, "repetitions", n);
		json_object_set_new(agg, "files", files ? json_incref(files) : json_array());
		json_object_set_new(agg, "samples", json_string("aggregate"));
		json_object_set_new(imp, "aggregate", agg);
	}
	json_object_set_new(pg, "import", imp);
	json_object_set_new(rec, "perfgate", pg);
}

/* kubernetes-sigs/inference-perf's reports (summary_lifecycle_metrics.json,
 * stage_<n>_lifecycle_metrics.json): {"load_summary": ..., "successes":
 * {"latency": ..., "throughput": ...}, "failures": ...}. Named, so that a
 * user reads what the file is rather than "not a benchmark result". */
static bool is_inference_perf(const json_t *o)
{
	return json_is_object(json_object_get(o, "load_summary")) &&
	       (json_is_object(json_object_get(o, "successes")) ||
		json_is_object(json_object_get(o, "failures")));
}

static int handle_object(struct pg_import_ctx *ctx, const json_t *o, size_t pos, size_t *reports)
{
	size_t record = ctx->records + 1;
	json_t *copy, *point;
	char *llmd;
	bool sglang;
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
	if (is_inference_perf(o))
		return pg_import_fail(
			ctx, pos,
			"record %zu: an inference-perf report, which perfgate does not import yet; "
			"import llm-d's benchmark_report_v0.2 made from it (benchmark-report -w "
			"inference-perf -b 0.2)",
			record);
	if (is_sweep_failure(o))
		return handle_sweep_failure(ctx, o, pos);
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
	if (kind == PG_SUITE_SERVING && json_integer_value(json_object_get(o, "run_number")) < 0 &&
	    !json_object_get(o, "perfgate"))
		return pg_import_fail(
			ctx, pos,
			"record %zu: vllm bench sweep's warm-up run (run_number %lld, "
			"warmup.json), not a measurement: not imported",
			record, (long long)json_integer_value(json_object_get(o, "run_number")));
	copy = normalise(o);
	if (kind == PG_SUITE_SERVING && !json_object_get(o, "perfgate"))
		note_provenance(copy);
	sglang = kind == PG_SUITE_SERVING && is_sglang_record(o);
	if (sglang)
		copy = sglang_to_vllm_names(copy);
	point = json_object_get(json_object_get(o, "perfgate"), "point");
	llmd = kind == PG_SUITE_SERVING && !point
		       ? llmd_name(o, ctx->opts ? ctx->opts->deployment : NULL)
		       : NULL;
	if (llmd)
		pg_import_push(ctx, copy, PG_SUITE_SERVING, llmd, NULL, "llm-d", pos);
	else
		pg_import_push(ctx, copy, (enum pg_suite_kind)kind,
			       json_is_string(point) ? json_string_value(point) : NULL, NULL,
			       sglang ? "sglang-serve" : format_of((enum pg_suite_kind)kind), pos);
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
		is_sweep_failure(v) || json_is_string(json_object_get(v, "Test name")) ||
		pg_result_kind(v) >= 0);
}

int pg_import_value(struct pg_import_ctx *ctx, const json_t *v, size_t pos, size_t *reports)
{
	size_t i;
	json_t *item;

	if (!json_is_array(v))
		return handle_object(ctx, v, pos, reports);
	if (is_sweep_summary(v))
		return handle_sweep_summary(ctx, v, pos);
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
