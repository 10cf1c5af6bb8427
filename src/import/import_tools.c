/*
 * Other load generators' summaries, read as their own tools read them and
 * turned into vllm bench serve records (the keys of `--save-result`), so
 * the report, the gate and the baselines treat them as any serving point:
 *
 *  - GuideLLM's JSON report ({"benchmarks": [{"metrics": ...}, ...]}),
 *    report schema v1 (<= 0.6, run settings under "args"; 0.3 keeps the
 *    request counts beside "metrics" and the model under "worker") and v2
 *    (>= 0.7, under "config"): one record per benchmark.
 *  - NVIDIA AIPerf's profile_export_aiperf.json and GenAI-Perf's
 *    profile_export_genai_perf.json: one record, metrics as
 *    {"unit": "ms", "avg": ..., "p99": ...}.
 *  - llm-d's benchmark report, schema v0.2 (JSON here; the YAML file is
 *    read into the same tree by import_io.c): one record.
 *
 * Mapping (facts of each tool's metric definitions):
 *  - vLLM's TPOT is (latency - TTFT) / (output tokens - 1) per request.
 *    AIPerf's, GenAI-Perf's and GuideLLM's "inter_token_latency" is that
 *    quantity, so it becomes the tpot keys; GuideLLM's
 *    time_per_output_token_ms (latency over all output tokens, TTFT
 *    included) has no vLLM counterpart and is left out. vLLM's ITL (the
 *    gaps between streamed chunks) is AIPerf's inter_chunk_latency.
 *  - llm-d's report is made from vLLM's keys (time_per_output_token from
 *    mean_tpot_ms, inter_token_latency from mean_itl_ms, p50 from the
 *    median), so its names map back one to one.
 *  - Statistics: mean, median (or p50), std, and every percentile the
 *    source has, as p<N>_<metric>_ms ("p99.9_ttft_ms"); times in ms
 *    whatever the source's unit.
 *  - Requests: completed = the successful ones, failed = the errored ones,
 *    num_prompts = all sent; request_rate "inf" for a closed loop, and
 *    max_concurrency the loop's width.
 */
#include "import/import_impl.h"

#include "base/buf.h"
#include "base/error.h"
#include "base/jsonw.h"
#include "base/strutil.h"
#include "results/metrics.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small helpers ---- */

static bool num_of(const json_t *v, double *out)
{
	if (json_is_number(v)) {
		*out = json_number_value(v);
		return isfinite(*out);
	}
	/* some exports (old GenAI-Perf) quote their numbers */
	if (json_is_string(v) && pg_parse_double(json_string_value(v), out) == 0)
		return isfinite(*out);
	return false;
}

static json_t *get(const json_t *o, const char *dotted)
{
	return pg_json_path(o, dotted);
}

static void set_num(json_t *o, const char *key, double v)
{
	json_object_set_new(o, key, json_real(v));
}

/* A count: an integer when it is one (jansson keeps 5.0 apart from 5). */
static void set_count(json_t *o, const char *key, double v)
{
	if (v == floor(v) && fabs(v) < 9e15)
		json_object_set_new(o, key, json_integer((json_int_t)v));
	else
		json_object_set_new(o, key, json_real(v));
}

static bool set_num_from(json_t *o, const char *key, const json_t *v, double scale)
{
	double d;

	if (!num_of(v, &d))
		return false;
	set_num(o, key, d * scale);
	return true;
}

/* The factor to milliseconds of a time unit; 0 when it is not one. */
static double ms_scale(const char *unit)
{
	static const struct {
		const char *unit;
		double scale;
	} units[] = {
		{ "ms", 1 },         { "ms/token", 1 }, { "s", 1000 },         { "sec", 1000 },
		{ "s/token", 1000 }, { "us", 1e-3 },    { "ns", 1e-6 },        { "seconds", 1000 },
		{ "second", 1000 },  { "msec", 1 },     { "milliseconds", 1 },
	};

	if (!unit)
		return 1; /* no unit: the tool's default, ms */
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(units[i].unit, unit))
			return units[i].scale;
	return 0;
}

/* "p999" (GuideLLM: 99.9), "p99p9" (llm-d), "p99.9" -> "99.9"; "p001" ->
 * "0.1", "p05" -> "5". NULL when the key is not a percentile. */
static const char *percentile_word(const char *key, char *out, size_t size)
{
	const char *d = key + 1;
	size_t n;

	if (key[0] != 'p' || !isdigit((unsigned char)key[1]))
		return NULL;
	n = strspn(d, "0123456789");
	if (d[n] == 'p' || d[n] == '.') {
		/* llm-d's p99p9 / p0p1, or a dot */
		size_t m = strspn(d + n + 1, "0123456789");
		if (!m || d[n + 1 + m])
			return NULL;
		snprintf(out, size, "%.*s.%s", (int)n, d, d + n + 1);
	} else if (d[n]) {
		return NULL;
	} else if (n >= 3 && d[0] == '9' && d[1] == '9') {
		/* GuideLLM's p999 = 99.9 */
		snprintf(out, size, "99.%s", d + 2);
	} else if (n >= 2 && d[0] == '0') {
		/* GuideLLM's p001 = 0.1, p01 = 1, p05 = 5 */
		if (n == 3)
			snprintf(out, size, "0.%s", d + 2);
		else
			snprintf(out, size, "%s", d + 1);
	} else {
		snprintf(out, size, "%s", d);
	}
	return out;
}

/*
 * One metric's statistics -> mean_<m>_ms, median_<m>_ms, std_<m>_ms and
 * p<N>_<m>_ms. names: the source's keys for the mean, the median and the
 * standard deviation; percentiles either at the top of stats or in
 * stats[pct_key].
 */
struct stat_names {
	const char *mean, *median, *std, *pct_key;
};

static const struct stat_names GUIDELLM = { "mean", "median", "std_dev", "percentiles" };
static const struct stat_names AIPERF = { "avg", "p50", "std", NULL };
static const struct stat_names LLMD = { "mean", "p50", "stddev", NULL };

static void put_stats(json_t *out, const char *metric, const json_t *stats,
		      const struct stat_names *names, double scale)
{
	const json_t *pcts = names->pct_key ? json_object_get(stats, names->pct_key) : stats;
	char key[96], word[32];
	const char *k;
	json_t *v;

	if (!json_is_object(stats))
		return;
	snprintf(key, sizeof(key), "mean_%s_ms", metric);
	set_num_from(out, key, json_object_get(stats, names->mean), scale);
	snprintf(key, sizeof(key), "median_%s_ms", metric);
	set_num_from(out, key, json_object_get(stats, names->median), scale);
	snprintf(key, sizeof(key), "std_%s_ms", metric);
	set_num_from(out, key, json_object_get(stats, names->std), scale);
	if (!json_is_object(pcts))
		return;
	json_object_foreach((json_t *)pcts, k, v)
	{
		if (!percentile_word(k, word, sizeof(word)) || !strcmp(word, "50"))
			continue; /* the median has its key */
		snprintf(key, sizeof(key), "p%s_%s_ms", word, metric);
		set_num_from(out, key, v, scale);
	}
}

static void set_rate_and_cap(json_t *out, double rate, long cap)
{
	if (isfinite(rate) && rate > 0)
		set_num(out, "request_rate", rate);
	else
		json_object_set_new(out, "request_rate", json_string("inf"));
	json_object_set_new(out, "max_concurrency", cap > 0 ? json_integer(cap) : json_null());
}

/* Where the tool came from, kept under perfgate.import. */
static void set_tool(json_t *out, const char *tool, const json_t *version)
{
	json_t *pg = json_object(), *imp = json_object();

	json_object_set_new(imp, "tool", json_string(tool));
	if (json_is_string(version) || json_is_number(version))
		json_object_set(imp, "tool_version", (json_t *)version);
	json_object_set_new(pg, "import", imp);
	json_object_set_new(out, "perfgate", pg);
}

/* ---- GuideLLM ---- */

static bool is_guidellm(const json_t *o)
{
	const json_t *b = json_object_get(o, "benchmarks");
	const json_t *first = json_array_get(b, 0);

	return json_is_array(b) && json_is_object(json_object_get(first, "metrics")) &&
	       (json_object_get(first, "type_") || json_object_get(first, "config") ||
		json_object_get(first, "args"));
}

/* A GuideLLM distribution's successful requests ({"successful": {...}}). */
static const json_t *ok_stats(const json_t *metrics, const char *name)
{
	return json_object_get(json_object_get(metrics, name), "successful");
}

static const char *guidellm_model(const json_t *report, const json_t *bench)
{
	/* per benchmark (>= 0.6; 0.3's worker), then run-wide (v2, v1) */
	const char *m = json_string_value(get(bench, "config.backend.model"));

	if (!m || !*m)
		m = json_string_value(get(bench, "worker.backend_model"));

	if (!m || !*m)
		m = json_string_value(get(report, "config.spec.backend.model"));
	if (!m || !*m)
		m = json_string_value(get(report, "args.model"));
	return m && *m ? m : NULL;
}

/* The realized strategy of a benchmark (benchmarks[i].config.strategy, or
 * args.strategy in the oldest reports) -> rate and concurrency, as llm-d's
 * reader and GuideLLM's own tables take them. */
static const char *guidellm_load(json_t *out, const json_t *bench)
{
	const json_t *s = get(bench, "config.strategy");
	const char *type;
	double rate = INFINITY, d;
	long cap = 0;

	if (!json_is_object(s))
		s = get(bench, "args.strategy");
	type = json_string_value(json_object_get(s, "type_"));
	if (!type)
		type = "";
	if (!strcmp(type, "synchronous")) {
		cap = 1;
	} else if (!strcmp(type, "concurrent")) {
		if (num_of(json_object_get(s, "streams"), &d) ||
		    num_of(json_object_get(s, "max_concurrency"), &d))
			cap = (long)d;
	} else if (!strcmp(type, "throughput")) {
		if (num_of(json_object_get(s, "max_concurrency"), &d))
			cap = (long)d;
	} else if (num_of(json_object_get(s, "rate"), &d)) {
		/* constant, poisson, async: a rate; their worker cap is no cap */
		rate = d;
		if (!strcmp(type, "poisson"))
			set_num(out, "burstiness", 1.0);
	}
	set_rate_and_cap(out, rate, cap);
	return type;
}

static double guidellm_duration(const json_t *bench)
{
	double d, a, b;

	if (num_of(json_object_get(bench, "duration"), &d))
		return d;
	if (num_of(get(bench, "scheduler_metrics.measure_end_time"), &b) &&
	    num_of(get(bench, "scheduler_metrics.measure_start_time"), &a))
		return b - a;
	if (num_of(get(bench, "run_stats.end_time"), &b) &&
	    num_of(get(bench, "run_stats.start_time"), &a))
		return b - a;
	if (num_of(json_object_get(bench, "end_time"), &b) &&
	    num_of(json_object_get(bench, "start_time"), &a))
		return b - a;
	return NAN;
}

static json_t *guidellm_record(const json_t *report, const json_t *bench)
{
	const json_t *m = json_object_get(bench, "metrics"), *totals;
	json_t *out = json_object();
	const char *model = guidellm_model(report, bench);
	const char *strategy;
	double d, ok = NAN, err = 0, total = NAN;

	json_object_set_new(out, "backend", json_string("guidellm"));
	if (model)
		json_object_set_new(out, "model_id", json_string(model));
	strategy = guidellm_load(out, bench);
	/* under metrics (>= 0.4), beside them in 0.3 */
	totals = json_object_get(m, "request_totals");
	if (!json_is_object(totals))
		totals = json_object_get(bench, "request_totals");
	if (num_of(json_object_get(totals, "successful"), &ok))
		set_count(out, "completed", ok);
	if (num_of(json_object_get(totals, "errored"), &err))
		set_count(out, "failed", err);
	if (num_of(json_object_get(totals, "total"), &total))
		set_count(out, "num_prompts", total);
	if (!isnan(d = guidellm_duration(bench)))
		set_num(out, "duration", d);
	if (num_of(get(ok_stats(m, "prompt_token_count"), "total_sum"), &d))
		set_count(out, "total_input_tokens", d);
	if (num_of(get(ok_stats(m, "output_token_count"), "total_sum"), &d))
		set_count(out, "total_output_tokens", d);
	set_num_from(out, "request_throughput", get(ok_stats(m, "requests_per_second"), "mean"), 1);
	set_num_from(out, "output_throughput", get(ok_stats(m, "output_tokens_per_second"), "mean"),
		     1);
	set_num_from(out, "total_token_throughput", get(ok_stats(m, "tokens_per_second"), "mean"),
		     1);
	put_stats(out, "ttft", ok_stats(m, "time_to_first_token_ms"), &GUIDELLM, 1);
	put_stats(out, "tpot", ok_stats(m, "inter_token_latency_ms"), &GUIDELLM, 1);
	put_stats(out, "e2el", ok_stats(m, "request_latency"), &GUIDELLM, 1000);
	set_tool(out, "guidellm",
		 json_object_get(json_object_get(report, "metadata"), "guidellm_version"));
	if (*strategy)
		pg_import_set_path(out, "perfgate.import.strategy", json_string(strategy));
	return out;
}

static int guidellm(struct pg_import_ctx *ctx, const json_t *o, size_t pos)
{
	const json_t *benches = json_object_get(o, "benchmarks");
	const json_t *b;
	size_t i;

	json_array_foreach((json_t *)benches, i, b)
	{
		if (!json_is_object(b) || !json_is_object(json_object_get(b, "metrics")))
			return pg_import_fail(
				ctx, pos, "GuideLLM report: benchmark %zu has no 'metrics' object",
				i + 1);
		pg_import_push(ctx, guidellm_record(o, b), PG_SUITE_SERVING, NULL, NULL, "guidellm",
			       pos);
	}
	return 0;
}

/* ---- AIPerf and GenAI-Perf ---- */

static bool is_metric(const json_t *v)
{
	return json_is_object(v) && json_object_get(v, "avg") &&
	       (json_object_get(v, "unit") || json_object_size(v) > 1);
}

static bool is_aiperf(const json_t *o)
{
	static const char *const keys[] = { "request_throughput", "request_latency",
					    "time_to_first_token", "output_token_throughput" };

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (is_metric(json_object_get(o, keys[i])))
			return true;
	return false;
}

/* A metric's average in its unit, or NAN. */
static double avg_of(const json_t *o, const char *name)
{
	const json_t *v = json_object_get(o, name);
	double d;

	if (is_metric(v) && num_of(json_object_get(v, "avg"), &d))
		return d;
	if (num_of(v, &d))
		return d;
	return NAN;
}

static int aiperf_stats(struct pg_import_ctx *ctx, json_t *out, const json_t *o, const char *name,
			const char *metric, size_t pos)
{
	const json_t *v = json_object_get(o, name);
	const char *unit = json_string_value(json_object_get(v, "unit"));
	double scale = ms_scale(unit);

	if (!is_metric(v))
		return 0;
	if (scale == 0)
		return pg_import_fail(ctx, pos, "%s: unit '%s' is not a time unit", name, unit);
	put_stats(out, metric, v, &AIPERF, scale);
	return 0;
}

static int aiperf(struct pg_import_ctx *ctx, const json_t *o, size_t pos)
{
	const json_t *cfg = json_object_get(o, "input_config");
	bool is_aiperf_export = json_object_get(o, "aiperf_version") ||
				json_is_object(json_object_get(cfg, "loadgen")) ||
				json_is_object(json_object_get(cfg, "endpoint"));
	const char *tool = is_aiperf_export ? "aiperf" : "genai-perf";
	json_t *out = json_object();
	const json_t *model;
	double ok, err, d, rate = INFINITY;
	long cap = 0;

	json_object_set_new(out, "backend", json_string(tool));
	model = get(cfg, "endpoint.model_names");
	if (!model)
		model = json_object_get(cfg, "model");
	if (json_is_array(model))
		model = json_array_get(model, 0);
	if (json_is_string(model))
		json_object_set(out, "model_id", (json_t *)model);

	/* closed loop (concurrency) or a rate; nothing when the export does
	 * not say (AIPerf 0.10 leaves its input_config out) */
	if (num_of(get(cfg, "loadgen.concurrency"), &d) || num_of(get(cfg, "concurrency"), &d))
		cap = (long)d;
	if (num_of(get(cfg, "loadgen.request_rate"), &d) || num_of(get(cfg, "request_rate"), &d))
		rate = d;
	if (cap > 0 || isfinite(rate))
		set_rate_and_cap(out, rate, cap);

	ok = avg_of(o, "request_count");
	err = avg_of(o, "error_request_count");
	if (!isnan(ok))
		set_count(out, "completed", ok);
	if (!isnan(err))
		set_count(out, "failed", err);
	if (!isnan(ok))
		set_count(out, "num_prompts", ok + (isnan(err) ? 0 : err));
	if (!isnan(d = avg_of(o, "benchmark_duration"))) {
		const char *unit = json_string_value(
			get(json_object_get(o, "benchmark_duration"), "unit"));
		set_num(out, "duration", d * (ms_scale(unit) ? ms_scale(unit) : 1000) / 1000);
	}
	if (!isnan(d = avg_of(o, "total_isl")) || num_of(get(o, "input_sequence_length.sum"), &d))
		set_count(out, "total_input_tokens", d);
	if (!isnan(d = avg_of(o, "total_osl")) || !isnan(d = avg_of(o, "total_output_tokens")) ||
	    num_of(get(o, "output_sequence_length.sum"), &d))
		set_count(out, "total_output_tokens", d);
	if (!isnan(d = avg_of(o, "request_throughput")))
		set_num(out, "request_throughput", d);
	if (!isnan(d = avg_of(o, "output_token_throughput")))
		set_num(out, "output_throughput", d);
	if (!isnan(d = avg_of(o, "total_token_throughput")))
		set_num(out, "total_token_throughput", d);
	if (aiperf_stats(ctx, out, o, "time_to_first_token", "ttft", pos) ||
	    aiperf_stats(ctx, out, o, "inter_token_latency", "tpot", pos) ||
	    aiperf_stats(ctx, out, o, "inter_chunk_latency", "itl", pos) ||
	    aiperf_stats(ctx, out, o, "request_latency", "e2el", pos)) {
		json_decref(out);
		return PG_ECONFIG;
	}
	set_tool(out, tool, json_object_get(o, "aiperf_version"));
	pg_import_push(ctx, out, PG_SUITE_SERVING, NULL, NULL, tool, pos);
	return 0;
}

/* ---- llm-d benchmark report v0.2 ---- */

/* v0.2 keeps its numbers under results, v0.1 under metrics (v0.1 is
 * recognised to be refused by its version, not as "not a result"). */
static bool is_llmd_report(const json_t *o)
{
	if (!json_object_get(o, "version"))
		return false;
	if (json_is_object(json_object_get(o, "results")))
		return json_object_get(o, "scenario") || get(o, "results.request_performance");
	return json_is_object(json_object_get(o, "metrics")) &&
	       json_is_object(json_object_get(o, "scenario"));
}

/* ISO 8601 "PT1H2M49.97S" -> seconds; NAN when not one. */
static double iso_duration(const char *s)
{
	double total = 0;
	bool any = false;

	if (!s || strncmp(s, "PT", 2))
		return NAN;
	for (s += 2; *s;) {
		char *end;
		double v = strtod(s, &end);

		if (end == s || !isfinite(v))
			return NAN;
		switch (*end) {
		case 'H':
			total += v * 3600;
			break;
		case 'M':
			total += v * 60;
			break;
		case 'S':
			total += v;
			break;
		default:
			return NAN;
		}
		any = true;
		s = end + 1;
	}
	return any ? total : NAN;
}

/* The first inference engine of the stack: model, GPU, TP. */
static void llmd_stack(json_t *out, const json_t *stack, char **gpu)
{
	const json_t *c;
	size_t i;

	json_array_foreach((json_t *)stack, i, c)
	{
		const json_t *std = json_object_get(c, "standardized");
		const char *model = json_string_value(get(std, "model.name"));
		const char *acc = json_string_value(get(std, "accelerator.model"));
		double count, tp;

		if (!pg_str_eq(json_string_value(get(c, "metadata.kind")), "inference_engine") &&
		    !pg_str_eq(json_string_value(get(std, "kind")), "inference_engine"))
			continue;
		if (model)
			json_object_set_new(out, "model_id", json_string(model));
		if (num_of(get(std, "accelerator.parallelism.tp"), &tp))
			set_count(out, "tensor_parallel_size", tp);
		if (acc && *acc) {
			struct pg_buf b = PG_BUF_INIT;
			if (num_of(get(std, "accelerator.count"), &count) && count > 1)
				pg_buf_printf(&b, "%ldx", (long)count);
			pg_buf_puts(&b, acc);
			*gpu = pg_buf_detach(&b);
		}
		return;
	}
}

static int llmd_latency(struct pg_import_ctx *ctx, json_t *out, const json_t *lat, const char *name,
			const char *metric, size_t pos)
{
	const json_t *v = json_object_get(lat, name);
	const char *unit = json_string_value(json_object_get(v, "units"));
	double scale = ms_scale(unit);

	if (!json_is_object(v))
		return 0;
	if (scale == 0)
		return pg_import_fail(ctx, pos,
				      "llm-d benchmark report: latency.%s: units '%s' is not a "
				      "time unit",
				      name, unit ? unit : "(none)");
	put_stats(out, metric, v, &LLMD, scale);
	return 0;
}

static int llmd_report(struct pg_import_ctx *ctx, const json_t *o, size_t pos)
{
	const json_t *version = json_object_get(o, "version");
	const json_t *agg = get(o, "results.request_performance.aggregate");
	const json_t *load = get(o, "scenario.load.standardized");
	const json_t *lat = json_object_get(agg, "latency");
	const json_t *thr = json_object_get(agg, "throughput");
	const json_t *rate_v;
	json_t *out;
	char *gpu = NULL;
	double d, total = NAN, failures = 0, incomplete = 0, rate = INFINITY;
	long cap = 0;

	if (!json_is_string(version) || strncmp(json_string_value(version), "0.2", 3))
		return pg_import_fail(
			ctx, pos,
			"llm-d benchmark report version %s: perfgate reads version 0.2; import "
			"the benchmark_report_v0.2,_*.yaml beside it or the result file it was "
			"made from (benchmark-report -b 0.2 converts it)",
			json_is_string(version) ? json_string_value(version) : "(not a string)");
	if (!json_is_object(agg))
		return pg_import_fail(ctx, pos,
				      "llm-d benchmark report: no "
				      "results.request_performance.aggregate");
	out = json_object();
	json_object_set_new(out, "backend", json_string("llm-d"));
	llmd_stack(out, get(o, "scenario.stack"), &gpu);

	rate_v = json_object_get(load, "rate_qps");
	if (num_of(rate_v, &d) && d > 0)
		rate = d;
	if (num_of(json_object_get(load, "concurrency"), &d) && d >= 1 && d < 1e15)
		cap = (long)d;
	set_rate_and_cap(out, rate, cap);
	if (num_of(get(load, "input_seq_len.value"), &d))
		set_count(out, "input_len", d);
	if (num_of(get(load, "output_seq_len.value"), &d))
		set_count(out, "output_len", d);

	if (num_of(get(agg, "requests.total"), &total)) {
		num_of(get(agg, "requests.failures"), &failures);
		num_of(get(agg, "requests.incomplete"), &incomplete);
		set_count(out, "num_prompts", total);
		set_count(out, "completed", total - failures - incomplete);
		set_count(out, "failed", failures);
	}
	if (!isnan(d = iso_duration(json_string_value(get(o, "run.time.duration")))))
		set_num(out, "duration", d);
	if (!set_num_from(out, "request_throughput", get(thr, "request_rate.mean"), 1))
		set_num_from(out, "request_throughput", get(thr, "requests_rate.mean"), 1);
	set_num_from(out, "output_throughput", get(thr, "output_token_rate.mean"), 1);
	set_num_from(out, "total_token_throughput", get(thr, "total_token_rate.mean"), 1);
	if (llmd_latency(ctx, out, lat, "time_to_first_token", "ttft", pos) ||
	    llmd_latency(ctx, out, lat, "time_per_output_token", "tpot", pos) ||
	    llmd_latency(ctx, out, lat, "inter_token_latency", "itl", pos) ||
	    llmd_latency(ctx, out, lat, "request_latency", "e2el", pos)) {
		json_decref(out);
		free(gpu);
		return PG_ECONFIG;
	}
	set_tool(out, "llm-d-benchmark-report", version);
	if (json_is_string(json_object_get(load, "tool")))
		pg_import_set_path(out, "perfgate.import.load_tool",
				   json_incref(json_object_get(load, "tool")));
	pg_import_push(ctx, out, PG_SUITE_SERVING, NULL, gpu, "llm-d-report", pos);
	free(gpu);
	return 0;
}

/* ---- dispatch ---- */

enum pg_import_tool pg_import_tool_of(const json_t *o)
{
	if (!json_is_object(o))
		return PG_TOOL_NONE;
	if (is_guidellm(o))
		return PG_TOOL_GUIDELLM;
	if (is_llmd_report(o))
		return PG_TOOL_LLMD_REPORT;
	if (is_aiperf(o))
		return PG_TOOL_AIPERF;
	return PG_TOOL_NONE;
}

int pg_import_tool_object(struct pg_import_ctx *ctx, const json_t *o, size_t pos)
{
	switch (pg_import_tool_of(o)) {
	case PG_TOOL_GUIDELLM:
		return guidellm(ctx, o, pos);
	case PG_TOOL_AIPERF:
		return aiperf(ctx, o, pos);
	case PG_TOOL_LLMD_REPORT:
		return llmd_report(ctx, o, pos);
	default:
		return pg_import_fail(ctx, pos, "not a GuideLLM, AIPerf or llm-d report");
	}
}
