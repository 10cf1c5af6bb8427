#include "results/params.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "results/cmdline.h"
#include "results/metrics.h"
#include "base/strutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void init(struct pg_params *p)
{
	memset(p, 0, sizeof(*p));
	p->tp = p->pp = p->input_len = p->output_len = p->num_prompts = p->batch_size = -1;
	p->max_concurrency = -1;
	p->qps = NAN;
	p->burstiness = NAN;
}

void pg_params_release(struct pg_params *p)
{
	free(p->model);
	free(p->dataset);
	free(p->endpoint);
	free(p->deployment);
	free(p->engine);
	free(p->dtype);
	free(p->ramp_up);
	init(p);
}

/* A non-negative integer from a JSON number or a numeric string ("4"). */
static int json_long(const json_t *v, long *out)
{
	double d;

	if (json_is_integer(v)) {
		*out = (long)json_integer_value(v);
		return *out >= 0 ? 0 : -1;
	}
	if (json_is_real(v))
		d = json_real_value(v);
	else if (!json_is_string(v) || pg_parse_double(json_string_value(v), &d))
		return -1;
	if (!isfinite(d) || d < 0 || d != floor(d) || d > 1e15)
		return -1;
	*out = (long)d;
	return 0;
}

/* A rate: a number, or "inf"/Infinity spelled as a string. */
static int json_rate(const json_t *v, double *out)
{
	double d;

	if (json_is_number(v))
		d = json_number_value(v);
	else if (!json_is_string(v) || pg_parse_double(json_string_value(v), &d))
		return -1;
	if (isnan(d) || d < 0)
		return -1;
	*out = d;
	return 0;
}

static void set_str(char **dst, const char *s)
{
	if (!*dst && s && *s)
		*dst = pg_xstrdup(s);
}

static void set_long(long *dst, const json_t *v)
{
	long l;
	if (*dst < 0 && v && json_long(v, &l) == 0)
		*dst = l;
}

static void set_long_str(long *dst, const char *s)
{
	long l;
	if (*dst < 0 && s && pg_parse_long(s, &l) == 0 && l >= 0)
		*dst = l;
}

static void from_perfgate(struct pg_params *p, const json_t *params)
{
	json_t *v;

	if (!json_is_object(params))
		return;
	v = json_object_get(params, "model");
	set_str(&p->model, json_string_value(v));
	set_str(&p->dataset, json_string_value(json_object_get(params, "dataset")));
	set_str(&p->endpoint, json_string_value(json_object_get(params, "endpoint")));
	set_str(&p->deployment, json_string_value(json_object_get(params, "deployment")));
	set_long(&p->tp, json_object_get(params, "tp"));
	set_long(&p->input_len, json_object_get(params, "input_len"));
	set_long(&p->output_len, json_object_get(params, "output_len"));
	set_long(&p->num_prompts, json_object_get(params, "num_prompts"));
	set_long(&p->batch_size, json_object_get(params, "batch_size"));
	v = json_object_get(params, "qps");
	if (v)
		json_rate(v, &p->qps);
	/* perfgate.params writes unbounded concurrency as null, explicitly */
	v = json_object_get(params, "max_concurrency");
	if (json_is_null(v))
		p->max_concurrency = 0;
	else
		set_long(&p->max_concurrency, v);
}

static void from_vllm_keys(struct pg_params *p, const json_t *r)
{
	json_t *v;

	set_str(&p->model, json_string_value(json_object_get(r, "model_id")));
	/* llm-d records carry the deployment as --metadata strings */
	set_str(&p->model, json_string_value(json_object_get(r, "model")));
	set_long(&p->input_len, json_object_get(r, "input_len"));
	set_long(&p->output_len, json_object_get(r, "output_len"));
	set_long(&p->tp, json_object_get(r, "tensor_parallel_size"));
	set_long(&p->pp, json_object_get(r, "pipeline_parallel_size"));
	set_long(&p->num_prompts, json_object_get(r, "num_prompts"));
	if (isnan(p->qps) && (v = json_object_get(r, "request_rate")))
		json_rate(v, &p->qps);
	if (isnan(p->burstiness) && (v = json_object_get(r, "burstiness")))
		json_rate(v, &p->burstiness);
	if (!p->ramp_up && json_is_string(json_object_get(r, "ramp_up_strategy"))) {
		long start = -1, end = -1;
		struct pg_buf b = PG_BUF_INIT;

		set_long(&start, json_object_get(r, "ramp_up_start_rps"));
		set_long(&end, json_object_get(r, "ramp_up_end_rps"));
		pg_buf_printf(&b, "%s from %ld to %ld req/s",
			      json_string_value(json_object_get(r, "ramp_up_strategy")), start,
			      end);
		if (start > 0 && end > 0)
			p->ramp_up = pg_buf_detach(&b);
		pg_buf_release(&b);
	}
	v = json_object_get(r, "max_concurrency");
	if (p->max_concurrency < 0 && v) {
		if (json_is_null(v))
			p->max_concurrency = 0;
		else
			set_long(&p->max_concurrency, v);
	}
}

static int contains_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (; hay && *hay; hay++)
		if (!strncasecmp(hay, needle, n))
			return 1;
	return 0;
}

static void guess_engine(struct pg_params *p, const char *command)
{
	if (p->engine || !command)
		return;
	if (contains_ci(command, "vllm") || contains_ci(command, "benchmark_latency.py") ||
	    contains_ci(command, "benchmark_throughput.py"))
		set_str(&p->engine, "vllm");
	else if (contains_ci(command, "sglang"))
		set_str(&p->engine, "sglang");
}

/* The dataset a benchmark command reads: --dataset-name, else a ShareGPT
 * path, else "random" when lengths are given. */
static void dataset_from(struct pg_params *p, const struct pg_strv *argv)
{
	const char *name = pg_cmdline_flag(argv, "--dataset-name");
	const char *path = pg_cmdline_flag(argv, "--dataset-path");

	if (!path)
		path = pg_cmdline_flag(argv, "--dataset");
	if (name && *name)
		set_str(&p->dataset, name);
	else if (path && contains_ci(path, "sharegpt"))
		set_str(&p->dataset, "sharegpt");
	else if (path && *path) {
		const char *base = strrchr(path, '/');
		set_str(&p->dataset, base ? base + 1 : path);
	}
}

static void from_command(struct pg_params *p, const char *command, const char *which, bool native)
{
	struct pg_strv argv = PG_STRV_INIT;
	const char *v;

	if (!command || pg_cmdline_split(&argv, command))
		goto done;
	/* the engine runs in the server, or in-process for vllm bench
	 * latency/throughput; the serving client says nothing about it. When
	 * perfgate's own client ran the point, the recorded vllm bench
	 * commands are only the equivalents of what it did: no engine ran
	 * them, and the server's command alone names it. */
	if (!strcmp(which, "server_command") || (!native && strcmp(which, "client_command")))
		guess_engine(p, command);
	set_str(&p->model, pg_cmdline_flag(&argv, "--model"));
	v = pg_cmdline_flag(&argv, "--tensor-parallel-size");
	set_long_str(&p->tp, v ? v : pg_cmdline_flag(&argv, "-tp"));

	if (!strcmp(which, "server_command")) {
		/* as vLLM's report converter reads them (docs/design/vllm-benchmarks.md §7) */
		v = pg_cmdline_flag(&argv, "--pipeline-parallel-size");
		set_long_str(&p->pp, v ? v : pg_cmdline_flag(&argv, "-pp"));
		set_str(&p->dtype, pg_cmdline_flag(&argv, "--dtype"));
		/* "vllm serve <model>": the model is the positional argument */
		for (size_t i = 0; i + 2 < argv.n; i++)
			if (!strcmp(argv.v[i + 1], "serve") &&
			    pg_str_has_suffix(argv.v[i], "vllm") && argv.v[i + 2][0] != '-')
				set_str(&p->model, argv.v[i + 2]);
	} else if (!strcmp(which, "client_command")) {
		dataset_from(p, &argv);
		set_long_str(&p->input_len, pg_cmdline_flag(&argv, "--random-input-len"));
		set_long_str(&p->output_len, pg_cmdline_flag(&argv, "--random-output-len"));
		set_long_str(&p->num_prompts, pg_cmdline_flag(&argv, "--num-prompts"));
		set_str(&p->endpoint, pg_cmdline_flag(&argv, "--endpoint"));
		if (isnan(p->qps) && (v = pg_cmdline_flag(&argv, "--request-rate")))
			pg_parse_double(v, &p->qps);
		if (p->max_concurrency < 0)
			set_long_str(&p->max_concurrency,
				     pg_cmdline_flag(&argv, "--max-concurrency"));
	} else {
		int latency = !strcmp(which, "latency_command");

		set_long_str(&p->input_len, pg_cmdline_flag(&argv, "--input-len"));
		set_long_str(&p->output_len, pg_cmdline_flag(&argv, "--output-len"));
		if (latency) {
			set_long_str(&p->batch_size, pg_cmdline_flag(&argv, "--batch-size"));
			/* vllm bench latency's defaults, which vLLM's own report
			 * describes as "32 tokens / 128 tokens / fixed (8)" */
			if (contains_ci(command, "vllm") ||
			    contains_ci(command, "benchmark_latency")) {
				if (p->input_len < 0)
					p->input_len = 32;
				if (p->output_len < 0)
					p->output_len = 128;
				if (p->batch_size < 0)
					p->batch_size = 8;
			}
		} else {
			dataset_from(p, &argv);
			set_long_str(&p->num_prompts, pg_cmdline_flag(&argv, "--num-prompts"));
		}
	}
done:
	pg_strv_release(&argv);
}

void pg_params_from_result(struct pg_params *p, const json_t *result, const json_t *commands)
{
	static const char *const command_keys[] = {
		"latency_command",
		"throughput_command",
		"client_command",
		"server_command",
	};
	json_t *pg = json_object_get(result, "perfgate");
	bool native = pg_str_eq(json_string_value(json_object_get(pg, "client")), "native");

	init(p);
	from_perfgate(p, json_object_get(pg, "params"));
	from_vllm_keys(p, result);
	guess_engine(p, json_string_value(json_object_get(pg, "server_command")));
	for (size_t i = 0; commands && i < sizeof(command_keys) / sizeof(command_keys[0]); i++)
		from_command(p, json_string_value(json_object_get(commands, command_keys[i])),
			     command_keys[i], native);
	if (!p->engine && pg_str_eq(json_string_value(json_object_get(result, "backend")), "vllm"))
		set_str(&p->engine, "vllm");
}

static json_t *long_or_null(long v)
{
	return v >= 0 ? json_integer(v) : json_null();
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *pg_params_to_json(const struct pg_params *p)
{
	json_t *o = json_object();
	json_t *qps;

	if (isnan(p->qps))
		qps = json_null();
	else if (isinf(p->qps))
		qps = json_string("inf");
	else if (p->qps == floor(p->qps) && p->qps < 1e15)
		qps = json_integer((json_int_t)p->qps);
	else
		qps = json_real(p->qps);

	json_object_set_new(o, "model", str_or_null(p->model));
	json_object_set_new(o, "tp", long_or_null(p->tp));
	json_object_set_new(o, "dataset", str_or_null(p->dataset));
	json_object_set_new(o, "input_len", long_or_null(p->input_len));
	json_object_set_new(o, "output_len", long_or_null(p->output_len));
	json_object_set_new(o, "num_prompts", long_or_null(p->num_prompts));
	json_object_set_new(o, "qps", qps);
	json_object_set_new(o, "max_concurrency",
			    long_or_null(p->max_concurrency > 0 ? p->max_concurrency : -1));
	json_object_set_new(o, "batch_size", long_or_null(p->batch_size));
	json_object_set_new(o, "endpoint", str_or_null(p->endpoint));
	if (p->deployment)
		json_object_set_new(o, "deployment", json_string(p->deployment));
	return o;
}
