/* The load generator end to end: the three suites against the real
 * `perfgate mock-server` over loopback (a free port, bounded requests and
 * time), with faults, chat and completions, multi-token messages, the
 * /tokenize dataset path and cancellation. */
#include "testutil.h"

#include "core/alloc.h"
#include "core/dataset.h"
#include "core/error.h"
#include "core/strutil.h"
#include "core/suite.h"
#include "io/dataset.h"
#include "io/loadgen.h"

#include <curl/curl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct mock {
	pid_t pid;
	char *dir;
	char url[64];
};

/* Start `perfgate mock-server --port 0` with extra flags; it exits by
 * itself after 120 s whatever happens to the test. */
static void mock_start(struct mock *m, const char *const *flags)
{
	const char *bin = tu_env("PERFGATE_BIN");
	char port_file[4096];
	const char *argv[40];
	size_t n = 0;

	m->dir = tu_mkdtemp();
	snprintf(port_file, sizeof(port_file), "%s/port", m->dir);
	argv[n++] = bin;
	argv[n++] = "mock-server";
	argv[n++] = "--port";
	argv[n++] = "0";
	argv[n++] = "--port-file";
	argv[n++] = port_file;
	argv[n++] = "--max-seconds";
	argv[n++] = "120";
	for (size_t i = 0; flags && flags[i]; i++)
		argv[n++] = flags[i];
	argv[n] = NULL;
	m->pid = fork();
	ck_assert_int_ge(m->pid, 0);
	if (m->pid == 0) {
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	for (int i = 0; i < 1000; i++) {
		FILE *f = fopen(port_file, "r");
		long port = 0;
		if (f) {
			int got = fscanf(f, "%ld", &port);
			fclose(f);
			if (got == 1 && port > 0) {
				snprintf(m->url, sizeof(m->url), "http://127.0.0.1:%ld", port);
				return;
			}
		}
		usleep(10000);
	}
	ck_abort_msg("mock-server did not write its port");
}

static void mock_stop(struct mock *m)
{
	int status;

	kill(m->pid, SIGTERM);
	waitpid(m->pid, &status, 0);
	tu_rm_rf(m->dir);
	free(m->dir);
}

static void test_init(struct pg_test *t, enum pg_suite_kind kind, const char *endpoint)
{
	pg_test_init(t, kind);
	t->name = pg_xstrdup("e2e");
	t->model = pg_xstrdup("perfgate-mock");
	free(t->client.endpoint);
	t->client.endpoint = pg_xstrdup(endpoint);
	t->client.timeout = 30;
	t->dataset.input_len = 16;
	t->dataset.output_len = 8;
	t->num_prompts = 40;
}

static double num(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	ck_assert_msg(json_is_number(v), "missing %s", key);
	return json_number_value(v);
}

static json_t *run_point(const struct pg_test *t, double qps, long maxc, const struct mock *m,
			 bool detailed)
{
	struct pg_point pt = { t, "e2e", qps, maxc };
	struct pg_loadgen_opts o = { .base_url = m->url, .save_detailed = detailed };
	struct pg_error err = PG_ERROR_INIT;
	json_t *out = NULL;

	ck_assert_msg(pg_loadgen_run(&pt, &o, &out, &err) == 0, "%s", err.msg);
	return out;
}

START_TEST(serving_completions_against_the_mock)
{
	const char *const flags[] = { "--fixed-timing", "--ttft-ms", "20", "--itl-ms", "2", NULL };
	struct mock m;
	struct pg_test t;
	json_t *r;
	static double pct[] = { 50, 99.9 };

	mock_start(&m, flags);
	test_init(&t, PG_SUITE_SERVING, "/v1/completions");
	free(t.client.percentiles);
	t.client.percentiles = malloc(sizeof(pct));
	memcpy(t.client.percentiles, pct, sizeof(pct));
	t.client.n_percentiles = 2;
	pg_strv_push(&t.client.percentile_metrics, "e2el");
	t.client.goodput.ttft_ms = 1000;

	r = run_point(&t, INFINITY, 0, &m, true);
	ck_assert_str_eq(json_string_value(json_object_get(r, "backend")), "openai");
	ck_assert_str_eq(json_string_value(json_object_get(r, "request_rate")), "inf");
	ck_assert(json_is_null(json_object_get(r, "max_concurrency")));
	ck_assert_int_eq((long)num(r, "completed"), 40);
	ck_assert_int_eq((long)num(r, "failed"), 0);
	/* token-id prompts: exact input lengths; usage gives the outputs */
	ck_assert_int_eq((long)num(r, "total_input_tokens"), 40 * 16);
	ck_assert_int_eq((long)num(r, "total_output_tokens"), 40 * 8);
	ck_assert_str_eq(json_string_value(json_object_get(r, "input_tokens_source")), "server_usage");
	/* the server's fixed timing, seen through loopback and ASan */
	ck_assert_msg(num(r, "median_ttft_ms") >= 20 && num(r, "median_ttft_ms") < 80, "ttft %g",
		      num(r, "median_ttft_ms"));
	ck_assert_msg(fabs(num(r, "median_itl_ms") - 2) < 1.0, "itl %g", num(r, "median_itl_ms"));
	ck_assert(json_object_get(r, "p99.9_itl_ms") && json_object_get(r, "p50_e2el_ms"));
	ck_assert_double_eq_tol(num(r, "request_goodput"), num(r, "request_throughput"), 1e-9);
	ck_assert_int_le((long)num(r, "max_concurrent_requests"), 40);
	ck_assert_uint_eq(json_array_size(json_object_get(r, "itls")), 40);
	ck_assert_uint_eq(json_array_size(json_array_get(json_object_get(r, "itls"), 0)), 7);
	ck_assert(json_is_boolean(json_object_get(r, "client_bound")));
	ck_assert(json_object_get(r, "schedule_lag_p99_ms"));
	/* connections were opened before measuring */
	ck_assert_int_eq((long)num(r, "new_connections"), 0);
	json_decref(r);

	/* a finite rate with a concurrency cap */
	t.num_prompts = 30;
	r = run_point(&t, 300, 4, &m, false);
	ck_assert_int_eq((long)num(r, "completed"), 30);
	ck_assert_int_le((long)num(r, "max_concurrent_requests"), 4);
	ck_assert_int_eq((long)num(r, "max_concurrency"), 4);
	/* 30 requests at 300/s are due over 0.1 s */
	ck_assert(num(r, "duration") >= 0.1);
	ck_assert(!json_object_get(r, "ttfts"));
	json_decref(r);
	pg_test_release(&t);
	mock_stop(&m);
}
END_TEST

START_TEST(chat_with_multi_token_messages)
{
	const char *const flags[] = { "--fixed-timing", "--ttft-ms", "5", "--itl-ms", "2",
				      "--tokens-per-message", "4", NULL };
	struct mock m;
	struct pg_test t;
	json_t *r;

	mock_start(&m, flags);
	test_init(&t, PG_SUITE_SERVING, "/v1/chat/completions");
	t.dataset.output_len = 13;
	t.num_prompts = 10;
	t.client.continuous_usage = true;
	r = run_point(&t, INFINITY, 0, &m, false);
	ck_assert_str_eq(json_string_value(json_object_get(r, "backend")), "openai-chat");
	ck_assert_int_eq((long)num(r, "completed"), 10);
	ck_assert_int_eq((long)num(r, "total_output_tokens"), 130);
	/* chat prompts are words: the server's count is the input length */
	ck_assert_str_eq(json_string_value(json_object_get(r, "input_tokens_source")), "server_usage");
	/* per-message ITL spans 4 tokens; the token ITL is a quarter of it */
	double itl = num(r, "mean_itl_ms"), token_itl = num(r, "mean_token_itl_ms");
	ck_assert_msg(token_itl > 0 && fabs(token_itl * 4 - itl) < 0.25 * itl, "itl %g token itl %g",
		      itl, token_itl);
	ck_assert_int_eq((long)num(r, "token_itl_requests"), 10);
	json_decref(r);
	pg_test_release(&t);
	mock_stop(&m);
}
END_TEST

START_TEST(faults_are_counted_by_category)
{
	const char *const flags[] = { "--fixed-timing", "--ttft-ms", "5", "--itl-ms", "1",
				      "--fault-500", "0.25", "--fault-disconnect", "0.25",
				      "--fault-stall", "0.25", "--seed", "3", NULL };
	struct mock m;
	struct pg_test t;
	json_t *r, *cats;

	mock_start(&m, flags);
	test_init(&t, PG_SUITE_SERVING, "/v1/completions");
	t.num_prompts = 40;
	t.client.timeout = 1;
	r = run_point(&t, INFINITY, 0, &m, true);
	cats = json_object_get(r, "failed_by_category");
	ck_assert_int_eq((long)num(r, "completed") + (long)num(r, "failed"), 40);
	ck_assert_msg(num(cats, "http_500") > 0 && num(cats, "disconnect") > 0 && num(cats, "timeout") > 0,
		      "categories: %s", json_dumps(cats, 0));
	ck_assert_int_eq((long)(num(cats, "http_500") + num(cats, "disconnect") + num(cats, "timeout")),
			 (long)num(r, "failed"));
	ck_assert(json_is_string(json_object_get(json_object_get(r, "error_samples"), "timeout")));
	ck_assert(pg_str_has_prefix(json_string_value(json_object_get(json_object_get(r, "error_samples"),
									"http_500")), "HTTP 500"));
	json_decref(r);
	pg_test_release(&t);
	mock_stop(&m);
}
END_TEST

START_TEST(latency_and_throughput_suites)
{
	const char *const flags[] = { "--fixed-timing", "--ttft-ms", "10", "--itl-ms", "2", NULL };
	struct mock m;
	struct pg_test t;
	json_t *r;

	mock_start(&m, flags);
	test_init(&t, PG_SUITE_LATENCY, "/v1/completions");
	t.batch_size = 4;
	t.warmup_iterations = 1;
	t.iterations = 3;
	r = run_point(&t, NAN, 0, &m, false);
	ck_assert_uint_eq(json_array_size(json_object_get(r, "latencies")), 3);
	/* 10 ms + 7 x 2 ms per request, the batch in parallel */
	ck_assert_msg(num(r, "avg_latency") >= 0.024 && num(r, "avg_latency") < 0.2, "latency %g",
		      num(r, "avg_latency"));
	ck_assert_uint_eq(json_object_size(json_object_get(r, "percentiles")), 6);
	ck_assert_int_eq((long)num(r, "failed_iterations"), 0);
	json_decref(r);
	pg_test_release(&t);

	test_init(&t, PG_SUITE_THROUGHPUT, "/v1/completions");
	t.num_prompts = 20;
	t.throughput_max_concurrency = 5;
	r = run_point(&t, NAN, 0, &m, false);
	ck_assert_int_eq((long)num(r, "num_requests"), 20);
	ck_assert_int_eq((long)num(r, "total_num_tokens"), 20 * (16 + 8));
	ck_assert_int_eq((long)num(r, "total_output_tokens"), 20 * 8);
	ck_assert_double_eq_tol(num(r, "tokens_per_second"), 20 * 24 / num(r, "elapsed_time"), 1e-6);
	json_decref(r);
	pg_test_release(&t);
	mock_stop(&m);
}
END_TEST

START_TEST(sharegpt_counts_with_tokenize)
{
	struct mock m;
	struct pg_test t;
	struct pg_prompts p = { 0 };
	struct pg_error err = PG_ERROR_INIT;

	mock_start(&m, NULL);
	test_init(&t, PG_SUITE_SERVING, "/v1/completions");
	t.dataset.kind = PG_DATASET_SHAREGPT;
	t.dataset.path = tu_test_path("data/loadgen/sharegpt.json");
	t.dataset.output_len = 0;
	ck_assert_msg(pg_dataset_load(&p, &t, 5, false, m.url, "perfgate-mock", NULL, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(p.input_source, "tokenize_endpoint");
	ck_assert_uint_eq(p.n, 5);
	pg_prompts_release(&p);
	/* no server: the documented estimate */
	ck_assert_int_eq(pg_dataset_load(&p, &t, 5, false, NULL, NULL, NULL, &err), 0);
	ck_assert_str_eq(p.input_source, "estimate");
	pg_prompts_release(&p);
	free(t.dataset.path);
	t.dataset.path = pg_xstrdup("/nonexistent/sharegpt.json");
	ck_assert_int_eq(pg_dataset_load(&p, &t, 5, false, NULL, NULL, NULL, &err), PG_ECONFIG);
	pg_test_release(&t);
	mock_stop(&m);
}
END_TEST

static volatile sig_atomic_t stop_flag;

static void stop_on_progress(void *ctx, const struct pg_progress *p)
{
	(void)ctx;
	ck_assert_uint_eq(p->total, 20);
	stop_flag = 1;
}

START_TEST(stop_flag_cancels_the_run)
{
	/* every stream would take 10 s */
	const char *const flags[] = { "--fixed-timing", "--ttft-ms", "5", "--itl-ms", "1000", NULL };
	struct mock m;
	struct pg_test t;
	struct pg_point pt;
	struct pg_loadgen_opts o = { 0 };
	struct pg_error err = PG_ERROR_INIT;
	json_t *out = NULL;
	time_t start = time(NULL);

	mock_start(&m, flags);
	test_init(&t, PG_SUITE_SERVING, "/v1/completions");
	t.num_prompts = 20;
	pt = (struct pg_point){ &t, "e2e", INFINITY, 0 };
	o.base_url = m.url;
	o.stop = &stop_flag;
	o.progress = stop_on_progress;
	o.progress_interval_s = 0.05;
	stop_flag = 0;
	ck_assert_int_eq(pg_loadgen_run(&pt, &o, &out, &err), PG_ECANCEL);
	ck_assert_ptr_null(out);
	ck_assert_int_lt(time(NULL) - start, 5);
	pg_test_release(&t);
	mock_stop(&m);
}
END_TEST

static Suite *loadgen_suite(void)
{
	Suite *s = suite_create("loadgen");
	TCase *tc = tcase_create("e2e");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, serving_completions_against_the_mock);
	tcase_add_test(tc, chat_with_multi_token_messages);
	tcase_add_test(tc, faults_are_counted_by_category);
	tcase_add_test(tc, latency_and_throughput_suites);
	tcase_add_test(tc, sharegpt_counts_with_tokenize);
	tcase_add_test(tc, stop_flag_cancels_the_run);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	int rc = tu_run_suite(loadgen_suite());
	curl_global_cleanup();
	return rc;
}
