/*
 * The load generator's benchmark driver (run by bench/loadgen): the HTTP
 * engine of the native suites, pointed at a server with fixed timing, with
 * the client's own costs measured around it. Prints one JSON object with
 * the run's figures and writes every request's client-side times (JSON
 * lines, CLOCK_MONOTONIC ns) for comparison with the server's timing log.
 *
 *   perfgate_bench_loadgen --url URL --requests N [--rate R] [--input-len I]
 *       [--output-len L] [--max-concurrency C] [--request-id-prefix P]
 *       [--trace FILE] [--preconnect C] [--poll]
 *
 * --poll drives libcurl with curl_multi_poll + curl_multi_perform instead of
 * curl_multi_socket_action on epoll, for the comparison in bench/loadgen.
 */
#include "bench_args.h"
#include "base/alloc.h"
#include "loadgen/arrivals.h"
#include "base/buf.h"
#include "base/error.h"
#include "loadgen/loadstats.h"
#include "loadgen/reqtrace.h"
#include "base/stats.h"
#include "base/strutil.h"
#include "loadgen/httpload_io.h"

#include <curl/curl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static long status_kb(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	size_t n = strlen(field);

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':')
			kb = strtol(line + n + 1, NULL, 10);
	fclose(f);
	return kb;
}

/* user and system CPU seconds */
static void cpu_s(double *user, double *sys)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	*sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static double num_arg(int argc, char **argv, const char *name, double def)
{
	const char *v = bench_arg(argc, argv, name, NULL);
	double d;

	if (!v)
		return def;
	if (pg_parse_double(v, &d)) {
		fprintf(stderr, "perfgate_bench_loadgen: %s: not a number: %s\n", name, v);
		exit(2);
	}
	return d;
}

static size_t o_max_concurrency_hint(int argc, char **argv, size_t def)
{
	size_t c = (size_t)num_arg(argc, argv, "--max-concurrency", 0);
	return c && c < def ? c : def;
}

int main(int argc, char **argv)
{
	const char *url = bench_arg(argc, argv, "--url", NULL);
	const char *trace_path = bench_arg(argc, argv, "--trace", NULL);
	const char *prefix = bench_arg(argc, argv, "--request-id-prefix", "bench-");
	size_t n = (size_t)num_arg(argc, argv, "--requests", 100);
	double rate = num_arg(argc, argv, "--rate", INFINITY);
	long input_len = (long)num_arg(argc, argv, "--input-len", 32);
	long output_len = (long)num_arg(argc, argv, "--output-len", 100);
	size_t preconnect = (size_t)num_arg(argc, argv, "--preconnect", -1);
	struct pg_error err = PG_ERROR_INIT;
	struct pg_buf body = PG_BUF_INIT;
	struct curl_slist *headers = NULL;
	struct pg_hl *h;
	struct pg_hl_request *reqs;
	struct pg_reqtrace *traces;
	struct pg_hl_run_opts o = { 0 };
	struct pg_hl_stats st;
	double *due, user0, sys0, user1, sys1, *lag;
	long rss0, hwm1;
	size_t ok = 0, n_lag = 0;
	uint64_t tokens = 0;

	if (!url) {
		fprintf(stderr,
			"usage: perfgate_bench_loadgen --url URL [--requests N] [--rate R] ...\n");
		return 2;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	pg_buf_printf(&body, "{\"model\":\"perfgate-mock\",\"prompt\":[");
	for (long i = 0; i < input_len; i++)
		pg_buf_printf(&body, i ? ",%ld" : "%ld", 1000 + i);
	pg_buf_printf(
		&body,
		"],\"repetition_penalty\":1.0,\"max_tokens\":%ld,\"logprobs\":null,"
		"\"stream\":true,\"stream_options\":{\"include_usage\":true},\"ignore_eos\":true}",
		output_len);
	headers = curl_slist_append(headers, "Content-Type: application/json");
	headers = curl_slist_append(headers, "Expect:");

	/* per-stream memory counts everything the client allocates for a
	 * stream: its trace, slot, easy handle, parser and connection */
	rss0 = status_kb("VmRSS");
	due = pg_xcalloc(n, sizeof(double));
	traces = pg_xcalloc(n, sizeof(*traces));
	reqs = pg_xcalloc(n, sizeof(*reqs));
	if (pg_arrivals(due, n, rate, 1.0, 0, &err)) {
		fprintf(stderr, "perfgate_bench_loadgen: %s\n", err.msg);
		return 2;
	}
	for (size_t i = 0; i < n; i++) {
		pg_reqtrace_init(&traces[i]);
		pg_reqtrace_reserve(&traces[i], (size_t)output_len + 2);
		reqs[i] = (struct pg_hl_request){ body.ptr, body.len, due[i], &traces[i] };
	}
	h = pg_hl_new(n, &err);
	if (!h) {
		fprintf(stderr, "perfgate_bench_loadgen: %s\n", err.msg);
		return 3;
	}
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--poll"))
			pg_hl_set_poll_mode(h);
	{
		struct pg_buf models = PG_BUF_INIT;
		size_t opened;
		pg_buf_printf(&models, "%s/v1/models", url);
		if (preconnect == (size_t)-1)
			preconnect = o_max_concurrency_hint(argc, argv, isinf(rate) ? n : 256);
		if (pg_hl_preconnect(h, models.ptr, preconnect, 30, NULL, &opened, &err)) {
			fprintf(stderr, "perfgate_bench_loadgen: %s\n", err.msg);
			return 3;
		}
		pg_buf_release(&models);
	}
	{
		struct pg_buf full = PG_BUF_INIT;
		pg_buf_printf(&full, "%s/v1/completions", url);
		o.url = pg_buf_detach(&full);
	}
	o.headers = headers;
	o.request_id_prefix = prefix;
	o.timeout_s = 600;
	o.max_concurrency = (size_t)num_arg(argc, argv, "--max-concurrency", 0);

	bench_perf_ctl("enable");
	cpu_s(&user0, &sys0);
	if (pg_hl_run(h, reqs, n, &o, &st, &err)) {
		fprintf(stderr, "perfgate_bench_loadgen: %s\n", err.msg);
		return 3;
	}
	cpu_s(&user1, &sys1);
	bench_perf_ctl("disable");
	hwm1 = status_kb("VmHWM");

	lag = pg_xcalloc(n, sizeof(double));
	for (size_t i = 0; i < n; i++) {
		ok += pg_reqtrace_ok(&traces[i]);
		tokens += (uint64_t)pg_reqtrace_output_tokens(&traces[i]);
		if (traces[i].sent_ns >= 0)
			lag[n_lag++] = (double)(traces[i].sent_ns - traces[i].eligible_ns) / 1e6;
	}
	pg_stats_sort(lag, n_lag);

	if (trace_path) {
		FILE *f = fopen(trace_path, "w");
		if (!f) {
			perror(trace_path);
			return 3;
		}
		for (size_t i = 0; i < n; i++) {
			const struct pg_reqtrace *t = &traces[i];
			fprintf(f,
				"{\"request_id\":\"%s%zu\",\"ok\":%s,\"sent_ns\":%lld,\"chunk_ns\":[",
				prefix, i, pg_reqtrace_ok(t) ? "true" : "false",
				(long long)(st.origin_ns + t->sent_ns));
			for (size_t j = 0; j < t->n_chunks; j++)
				fprintf(f, j ? ",%lld" : "%lld",
					(long long)(st.origin_ns + t->chunk_ns[j]));
			fprintf(f, "]}\n");
		}
		fclose(f);
	}
	printf("{\"requests\":%zu,\"ok\":%zu,\"messages\":%llu,\"tokens\":%llu,\"duration_s\":%.6f,"
	       "\"client_cpu_s\":%.6f,\"client_user_s\":%.6f,\"client_sys_s\":%.6f,\"busy_fraction\":%.4f,\"read_delay_p99_ms\":%.4f,"
	       "\"new_connections\":%ld,\"read_checks_answered\":%llu,"
	       "\"rss_before_kb\":%ld,\"peak_rss_kb\":%ld,"
	       "\"schedule_lag_p50_ms\":%.4f,\"schedule_lag_p99_ms\":%.4f,\"schedule_lag_max_ms\":%.4f}\n",
	       n, ok, (unsigned long long)st.messages, (unsigned long long)tokens, st.duration_s,
	       user1 + sys1 - user0 - sys0, user1 - user0, sys1 - sys0, st.busy_fraction,
	       st.read_delay_p99_s * 1000, st.new_connections,
	       (unsigned long long)st.read_checks_answered, rss0, hwm1,
	       pg_stats_percentile_sorted(lag, n_lag, 50),
	       pg_stats_percentile_sorted(lag, n_lag, 99), n_lag ? lag[n_lag - 1] : 0.0);

	for (size_t i = 0; i < n; i++)
		pg_reqtrace_release(&traces[i]);
	free(traces);
	free(reqs);
	free(due);
	free(lag);
	free((char *)o.url);
	pg_hl_free(h);
	curl_slist_free_all(headers);
	pg_buf_release(&body);
	curl_global_cleanup();
	return 0;
}
