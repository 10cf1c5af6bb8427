/* The runner's pure parts: secret redaction, what `perfgate run` prints,
 * the median over repeats, the equivalent vllm bench commands, and the
 * parsing of nvidia-smi's output. */
#include "testutil.h"

#include "base/buf.h"
#include "gpu/gpu.h"
#include "base/redact.h"
#include "results/clientcheck.h"
#include "results/repeats.h"
#include "runner/runfmt.h"
#include "runner/startup.h"
#include "base/jsonw.h"
#include "base/secret.h"
#include "suite/suite.h"
#include "runner/vllmcmd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

START_TEST(secret_flags)
{
	static const char *const secret[] = { "--api-key",    "--hf-token",    "--hf-token=x",
					      "--auth_token", "--db-password", "-key" };
	static const char *const visible[] = { "--tokenizer",
					       "--max-num-batched-tokens",
					       "--api-key-file",
					       "--long-prefill-token-threshold",
					       "--prefill-us-per-token",
					       "--keyboard",
					       "model",
					       "--skip-tokenizer-init" };

	for (size_t i = 0; i < sizeof(secret) / sizeof(secret[0]); i++)
		ck_assert_msg(pg_secret_flag(secret[i]), "%s", secret[i]);
	for (size_t i = 0; i < sizeof(visible) / sizeof(visible[0]); i++)
		ck_assert_msg(!pg_secret_flag(visible[i]), "%s", visible[i]);
}
END_TEST

START_TEST(redact_command_hides_every_secret)
{
	struct pg_redactor r = PG_REDACTOR_INIT;
	struct pg_kvlist env = { 0 };
	struct pg_buf out = PG_BUF_INIT;
	char *env_v[] = { "HOME=/root", "HF_TOKEN=hf_abcdefghijkl", "SHORT_KEY=ab",
			  "PATH=/opt/keys/bin:/usr/bin", NULL };
	char *argv[] = { "vllm",
			 "serve",
			 "m",
			 "--api-key",
			 "sk-live-123456",
			 "--hf-token=hf_zzzzzz99",
			 "--tokenizer",
			 "tok/x",
			 "--download-dir",
			 "/cache/hf_abcdefghijkl/x",
			 "--hf-token",
			 "--port",
			 "8000",
			 "it's",
			 NULL };

	pg_kvlist_set(&env, "VLLM_RPC_TIMEOUT", "100000");
	pg_kvlist_set(&env, "MY_SECRET", "s3cr3t-value");
	pg_redactor_add_environ(&r, env_v);
	pg_redactor_add_env(&r, &env);
	pg_redact_command(&r, &out, &env, argv);
	ck_assert_str_eq(out.ptr,
			 "VLLM_RPC_TIMEOUT=100000 MY_SECRET=*** vllm serve m --api-key *** "
			 "--hf-token=*** --tokenizer tok/x --download-dir /cache/***/x --hf-token "
			 "--port 8000 'it'\\''s'");
	ck_assert(!strstr(out.ptr, "s3cr3t"));

	/* the same secrets inside free text (a log line, an error) */
	pg_buf_reset(&out);
	pg_redact(&r, &out, "token hf_abcdefghijkl and s3cr3t-value; ab stays; /opt/keys/bin too");
	ck_assert_str_eq(out.ptr, "token *** and ***; ab stays; /opt/keys/bin too");

	pg_buf_reset(&out);
	pg_redact_shell_command(&r, &out, NULL, "vllm serve m --api-key \"$KEY\" # s3cr3t-value");
	ck_assert_str_eq(out.ptr, "vllm serve m --api-key \"$KEY\" # ***");

	pg_buf_release(&out);
	pg_kvlist_release(&env);
	pg_redactor_release(&r);
}
END_TEST

START_TEST(redact_prefers_the_longest_secret)
{
	struct pg_redactor r = PG_REDACTOR_INIT;
	struct pg_buf out = PG_BUF_INIT;

	pg_redactor_add(&r, "abcdef");
	pg_redactor_add(&r, "abcdefghij");
	pg_redactor_add(&r, "abcdef");
	ck_assert_uint_eq(r.values.n, 2);
	pg_redact(&r, &out, "xabcdefghijy abcdefz");
	ck_assert_str_eq(out.ptr, "x***y ***z");
	pg_buf_release(&out);
	pg_redactor_release(&r);
}
END_TEST

/* A small plan: one serving test with a concurrency list, one latency. */
static struct pg_test serving_test, latency_test, throughput_test;

static void make_tests(void)
{
	struct pg_test *t = &serving_test;

	pg_test_init(t, PG_SUITE_SERVING);
	t->name = strdup("serving_llama8B_tp1_random_128_128");
	t->model = strdup("meta-llama/Llama-3.1-8B-Instruct");
	t->dataset.input_len = 128;
	t->dataset.output_len = 128;
	t->num_prompts = 200;
	t->concurrency_in_name = true;
	t->client.temperature = 0;

	t = &latency_test;
	pg_test_init(t, PG_SUITE_LATENCY);
	t->name = strdup("latency_llama8B_tp1");
	t->model = strdup("meta-llama/Llama-3.1-8B-Instruct");

	t = &throughput_test;
	pg_test_init(t, PG_SUITE_THROUGHPUT);
	t->name = strdup("throughput_llama70B_tp4");
	t->model = strdup("meta-llama/Llama-3.3-70B-Instruct");
	t->tp = 4;
	t->dataset.kind = PG_DATASET_SHAREGPT;
	t->dataset.path = strdup("./ShareGPT_V3_unfiltered_cleaned_split.json");
	t->dataset.output_len = 0;
	t->num_prompts = 200;
}

static void free_tests(void)
{
	pg_test_release(&serving_test);
	pg_test_release(&latency_test);
	pg_test_release(&throughput_test);
}

START_TEST(log_groups_progress_and_durations)
{
	struct pg_buf out = PG_BUF_INIT;
	struct pg_point sp = { &serving_test, "serving_x_qps_4_concurrency_16", 4, 16 };
	struct pg_point si = { &serving_test, "serving_x_qps_inf_concurrency_inf", INFINITY, 0 };
	struct pg_point lp = { &latency_test, "latency_llama8B_tp1", NAN, 0 };
	struct pg_run_progress p = { 120, 200, 0, 2.7, 15590, NULL };
	struct pg_run_progress it = { 3, 30, 1, 4.5, 0, "iterations" };
	struct pg_run_progress unknown = { 7, 0, 0, 0, 0, NULL };
	double durations[] = { 0, 0.04, 48.25, 59.96, 192, 3599, 3600, 7322, -1 };

	make_tests();
	pg_runfmt_point_group(&out, &sp, 2, 12);
	pg_runfmt_point_group(&out, &si, 11, 12);
	pg_runfmt_point_group(&out, &lp, 0, 1);
	pg_runfmt_progress_line(&out, &p);
	pg_runfmt_progress_line(&out, &it);
	pg_runfmt_progress_line(&out, &unknown);
	pg_runfmt_progress_bar(&out, &p, 20);
	pg_buf_putc(&out, '\n');
	p.done = 250; /* more than planned must not overflow the bar */
	pg_runfmt_progress_bar(&out, &p, 20);
	pg_buf_putc(&out, '\n');
	pg_runfmt_progress_bar(&out, &unknown, 20);
	pg_buf_putc(&out, '\n');
	for (size_t i = 0; i < sizeof(durations) / sizeof(durations[0]); i++) {
		pg_runfmt_duration(&out, durations[i]);
		pg_buf_putc(&out, '\n');
	}
	tu_assert_golden("golden/run/progress.txt", out.ptr);
	pg_buf_release(&out);
	free_tests();
}
END_TEST

START_TEST(plain_logs_drop_group_markers)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "--- serving_x qps 4 (3/12)\n", "serving_x qps 4 (3/12)\n" },
		{ "+++ perfgate run: 5 ok (17.6s)\n  point  status\n",
		  "perfgate run: 5 ok (17.6s)\n  point  status\n" },
		{ "  error: boom\n^^^ +++\n~~~ quiet\n", "  error: boom\nquiet\n" },
		/* only at a line start, and only the markers */
		{ "a --- b\n---x\n-- c\n+++\n", "a --- b\n---x\n-- c\n+++\n" },
		{ "--- no newline", "no newline" },
		{ "^^^ +++", "" },
		{ "", "" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pg_buf out = PG_BUF_INIT;
		pg_runfmt_plain(&out, cases[i].in);
		ck_assert_str_eq(out.ptr, cases[i].out);
		pg_buf_release(&out);
	}
}
END_TEST

START_TEST(iso8601_is_utc)
{
	char out[PG_ISO8601_SIZE];

	ck_assert_str_eq(pg_runfmt_iso8601(out, 0), "1970-01-01T00:00:00Z");
	ck_assert_str_eq(pg_runfmt_iso8601(out, 1795352400), "2026-11-22T13:00:00Z");
}
END_TEST

START_TEST(summary_table)
{
	struct pg_buf out = PG_BUF_INIT;
	json_t *serving = json_pack("{s:f, s:f, s:f, s:f, s:i, s:i, s:i, s:f, s:f, s:i, s:b, s:b, "
				    "s:f, s:f}",
				    "request_throughput", 3.9812, "output_throughput", 1021.4,
				    "median_ttft_ms", 41.2345, "median_itl_ms", 10.1, "completed",
				    198, "failed", 2, "num_prompts", 200, "schedule_lag_p99_ms",
				    80.4, "schedule_lag_bound_ms", 62.5, "requests_late_by_host", 3,
				    "client_bound", 0, "host_late", 1, "client_busy_fraction", 0.02,
				    "timestamp_error_bound_ms", 0.12);
	json_t *latency = json_pack("{s:f, s:{s:f}}", "avg_latency", 1.523, "percentiles", "99",
				    1.61);
	json_t *tput = json_pack("{s:f, s:f, s:b, s:f, s:f}", "requests_per_second", 12.3,
				 "tokens_per_second", 4567.0, "client_bound", 1,
				 "client_busy_fraction", 0.97, "client_read_delay_p99_ms", 2.4);
	struct pg_buf km[3] = { PG_BUF_INIT, PG_BUF_INIT, PG_BUF_INIT };
	struct pg_buf note[3] = { PG_BUF_INIT, PG_BUF_INIT, PG_BUF_INIT };

	pg_runfmt_key_metrics(&km[0], PG_SUITE_SERVING, serving);
	pg_runfmt_key_metrics(&km[1], PG_SUITE_LATENCY, latency);
	pg_runfmt_key_metrics(&km[2], PG_SUITE_THROUGHPUT, tput);
	pg_clientcheck_note(&note[0], PG_SUITE_SERVING, serving);
	pg_clientcheck_note(&note[1], PG_SUITE_LATENCY, latency);
	pg_clientcheck_note(&note[2], PG_SUITE_THROUGHPUT, tput);
	ck_assert_uint_eq(note[1].len, 0); /* no flag, no note */
	/* clang-format off */
	struct pg_run_row rows[] = {
		{ "latency_llama8B_tp1", "ok", km[1].ptr, 48.2, note[1].ptr },
		{ "throughput_llama8B_tp1", "ok", km[2].ptr, 61, note[2].ptr },
		{ "serving_llama8B_tp1_qps_4", "ok", km[0].ptr, 52.1, note[0].ptr },
		{ "serving_llama8B_tp1_qps_inf", "error",
		  "server killed by signal 9 (SIGKILL) during the point\nlast lines of x.log:\n...", 3.1 },
		{ "serving_llama70B_tp4_qps_1", "skipped", "tp 4 exceeds the 1 GPU of this machine", 0 },
		{ "serving_llama70B_tp4_qps_4", "cancelled", "cancelled by signal 15", 0.2 },
		{ "serving_with_a_very_long_reason", "error",
		  "all 200 requests failed (http_500: Internal Server Error: the engine ran out of "
		  "KV cache blocks while scheduling a very long prompt)", 1 },
		{ "serving_empty", "not run", NULL, 0 },
	};
	/* clang-format on */
	pg_runfmt_summary(&out, rows, sizeof(rows) / sizeof(rows[0]), 192);
	pg_runfmt_summary(&out, rows, 3, 161.3);
	pg_runfmt_summary(&out, NULL, 0, 0.1);
	tu_assert_golden("golden/run/summary.txt", out.ptr);

	for (int i = 0; i < 3; i++) {
		pg_buf_release(&km[i]);
		pg_buf_release(&note[i]);
	}
	pg_buf_release(&out);
	json_decref(serving);
	json_decref(latency);
	json_decref(tput);
}
END_TEST

/* A sessions point's line: its hit rate and the turns held back. */
START_TEST(key_metrics_sessions)
{
	struct pg_buf out = PG_BUF_INIT;
	json_t *r = json_pack("{s:f, s:f, s:f, s:f, s:f, s:i}", "request_throughput", 19.77,
			      "output_throughput", 632.7, "median_ttft_ms", 20.4, "median_itl_ms",
			      2.012, "prefix_cache_hit_rate", 0.8686, "backpressure_turns", 3);

	pg_runfmt_key_metrics(&out, PG_SUITE_SERVING, r);
	ck_assert_str_eq(out.ptr, "19.77 req/s, 632.7 tok/s, TTFT p50 20.4 ms, ITL p50 2.012 ms, "
				  "hit rate 86.9%, 3 turns backpressured");
	json_decref(r);
	pg_buf_release(&out);
}
END_TEST

START_TEST(median_over_repeats)
{
	json_t *runs[3];
	json_t *m, *metrics;
	double odd[] = { 3, 1, 2 }, even[] = { 4, 1, 3, 2 };

	ck_assert(pg_median(odd, 3) == 2);
	ck_assert(pg_median(even, 4) == 2.5);
	ck_assert(isnan(pg_median(NULL, 0)));

	runs[0] = json_pack("{s:s, s:f, s:i, s:{s:f, s:f}, s:[f], s:s, s:n}", "date",
			    "20261122-130000", "output_throughput", 100.0, "completed", 200,
			    "percentiles", "50", 1.0, "99", 3.0, "latencies", 1.0, "request_rate",
			    "inf", "max_concurrency");
	runs[1] = json_pack("{s:s, s:f, s:i, s:{s:f, s:f}, s:[f], s:s, s:n}", "date",
			    "20261122-130100", "output_throughput", 120.0, "completed", 199,
			    "percentiles", "50", 2.0, "99", 1.0, "latencies", 2.0, "request_rate",
			    "inf", "max_concurrency");
	runs[2] = json_pack("{s:s, s:f, s:i, s:{s:f, s:f}, s:[f], s:s, s:n}", "date",
			    "20261122-130200", "output_throughput", 110.0, "completed", 198,
			    "percentiles", "50", 3.0, "99", 2.0, "latencies", 3.0, "request_rate",
			    "inf", "max_concurrency");
	m = pg_repeats_median(runs, 3);
	ck_assert_str_eq(json_string_value(json_object_get(m, "date")), "20261122-130200");
	ck_assert(json_real_value(json_object_get(m, "output_throughput")) == 110.0);
	ck_assert(json_is_integer(json_object_get(m, "completed")));
	ck_assert_int_eq(json_integer_value(json_object_get(m, "completed")), 199);
	ck_assert(json_real_value(json_object_get(json_object_get(m, "percentiles"), "50")) == 2.0);
	ck_assert(json_real_value(json_object_get(json_object_get(m, "percentiles"), "99")) == 2.0);
	ck_assert(json_is_null(json_object_get(m, "max_concurrency")));
	ck_assert_uint_eq(json_array_size(json_object_get(m, "latencies")), 1);

	/* two runs: an integer median of 199.5 becomes a real */
	json_t *two = pg_repeats_median(runs, 2);
	ck_assert(json_real_value(json_object_get(two, "completed")) == 199.5);
	json_decref(two);

	/* a flag raised in any run stays raised (client_bound) */
	json_object_set_new(runs[0], "client_bound", json_true());
	json_object_set_new(runs[1], "client_bound", json_false());
	two = pg_repeats_median(runs, 2);
	ck_assert(json_is_true(json_object_get(two, "client_bound")));

	metrics = pg_repeats_metrics(runs[0]);
	ck_assert_uint_eq(json_object_size(metrics),
			  3); /* output_throughput, completed, percentiles */
	ck_assert_ptr_null(json_object_get(metrics, "latencies"));
	ck_assert_ptr_null(json_object_get(metrics, "date"));

	json_decref(metrics);
	json_decref(two);
	json_decref(m);
	for (int i = 0; i < 3; i++)
		json_decref(runs[i]);
}
END_TEST

START_TEST(equivalent_vllm_commands)
{
	struct pg_buf out = PG_BUF_INIT;
	struct pg_point sp = { &serving_test,
			       "serving_llama8B_tp1_random_128_128_qps_4_concurrency_16", 4, 16 };
	struct pg_point si = { &serving_test,
			       "serving_llama8B_tp1_random_128_128_qps_inf_concurrency_inf",
			       INFINITY, 0 };
	struct pg_point lp = { &latency_test, "latency_llama8B_tp1", NAN, 0 };
	struct pg_point tp = { &throughput_test, "throughput_llama70B_tp4", NAN, 0 };

	make_tests();
	for (int i = 0; i < 4; i++) {
		const struct pg_point *pt = i == 0 ? &sp : i == 1 ? &si : i == 2 ? &lp : &tp;
		pg_buf_printf(&out, "%s: ", pg_vllm_command_key(pt->test->kind));
		pg_vllm_equivalent_command(&out, pt, i < 2 ? "http://127.0.0.1:41237" : NULL,
					   "results");
		pg_buf_putc(&out, '\n');
	}
	/* the chat endpoint uses vLLM's openai-chat backend */
	free(serving_test.client.endpoint);
	serving_test.client.endpoint = strdup("/v1/chat/completions");
	serving_test.dataset.kind = PG_DATASET_JSONL;
	serving_test.dataset.path = strdup("prompts 1.jsonl");
	serving_test.burstiness = 0.5;
	serving_test.client.ignore_eos = false;
	pg_vllm_equivalent_command(&out, &sp, "http://127.0.0.1:41237", "out dir");
	pg_buf_putc(&out, '\n');
	tu_assert_golden("golden/run/vllm_commands.txt", out.ptr);
	pg_buf_release(&out);
	free_tests();
}
END_TEST

START_TEST(nvidia_smi_output)
{
	struct pg_strv names = PG_STRV_INIT;
	double *mib = NULL, *used = NULL;
	char s[64];

	ck_assert_int_eq(pg_gpu_parse_query(&names, &mib,
					    "NVIDIA H100 80GB HBM3, 81559 MiB\n"
					    "NVIDIA H100 80GB HBM3, 81559 MiB\r\n\n"
					    "NVIDIA A100-SXM4-80GB, [N/A]\n"),
			 3);
	ck_assert_str_eq(names.v[0], "NVIDIA H100 80GB HBM3");
	ck_assert_str_eq(names.v[2], "NVIDIA A100-SXM4-80GB");
	ck_assert(mib[0] == 81559 && mib[1] == 81559 && isnan(mib[2]));
	ck_assert_str_eq(pg_gpu_short(s, sizeof(s), names.v[0]), "H100");
	ck_assert_str_eq(pg_gpu_short(s, sizeof(s), names.v[2]), "A100-SXM4-80GB");
	ck_assert_str_eq(pg_gpu_short(s, sizeof(s), "L40S"), "L40S");
	ck_assert_int_eq(pg_gpu_parse_query(&names, &mib, ", 100 MiB\n"), -1);
	ck_assert_int_eq(pg_gpu_parse_numbers(&used, "12\n 80000 \n\n0\n"), 3);
	ck_assert(used[0] == 12 && used[1] == 80000 && used[2] == 0);
	ck_assert_int_eq(pg_gpu_parse_numbers(&used, "12\n[N/A]\n"), -1);
	ck_assert_int_eq(pg_gpu_parse_numbers(&used, ""), 0);
	free(mib);
	free(used);
	pg_strv_release(&names);
}
END_TEST

/* A startup test's keys are vllm bench startup's: the mean, every start in
 * order, and numpy's linear percentiles 10..99 (np.percentile of
 * [0.3, 0.1, 0.2, 0.4]: 10% -> 0.13, 99% -> 0.397); no starts, no keys. */
START_TEST(startup_keys)
{
	const double v[] = { 0.3, 0.1, 0.2, 0.4 };
	struct pg_startup_times t = { v, 4 }, none = { v, 0 };
	json_t *r = json_object();
	struct pg_buf b = PG_BUF_INIT;

	pg_startup_put(r, "cold", "startup", &t);
	pg_startup_put(r, "warm", "startup", &none);
	ck_assert_double_eq_tol(json_number_value(json_object_get(r, "avg_cold_startup_time")),
				0.25, 1e-15);
	ck_assert_double_eq(
		json_number_value(json_array_get(json_object_get(r, "cold_startup_times"), 0)),
		0.3);
	ck_assert_double_eq_tol(json_number_value(pg_json_path(r, "cold_startup_percentiles.10")),
				0.13, 1e-12);
	ck_assert_double_eq_tol(json_number_value(pg_json_path(r, "cold_startup_percentiles.50")),
				0.25, 1e-12);
	ck_assert_double_eq_tol(json_number_value(pg_json_path(r, "cold_startup_percentiles.99")),
				0.397, 1e-12);
	ck_assert_uint_eq(json_object_size(json_object_get(r, "cold_startup_percentiles")), 6);
	ck_assert_ptr_null(json_object_get(r, "avg_warm_startup_time"));
	pg_runfmt_key_metrics(&b, PG_SUITE_STARTUP, r);
	ck_assert_str_eq(b.ptr, "cold 0.25 s");
	pg_buf_release(&b);
	json_decref(r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("runfmt");
	TCase *tc = tcase_create("redact");

	tcase_add_test(tc, secret_flags);
	tcase_add_test(tc, redact_command_hides_every_secret);
	tcase_add_test(tc, redact_prefers_the_longest_secret);
	suite_add_tcase(s, tc);
	tc = tcase_create("output");
	tcase_add_test(tc, log_groups_progress_and_durations);
	tcase_add_test(tc, plain_logs_drop_group_markers);
	tcase_add_test(tc, iso8601_is_utc);
	tcase_add_test(tc, summary_table);
	tcase_add_test(tc, key_metrics_sessions);
	suite_add_tcase(s, tc);
	tc = tcase_create("results");
	tcase_add_test(tc, median_over_repeats);
	tcase_add_test(tc, equivalent_vllm_commands);
	tcase_add_test(tc, nvidia_smi_output);
	tcase_add_test(tc, startup_keys);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
