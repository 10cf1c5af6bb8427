/* `perfgate mock-server --as-vllm`: vLLM's command lines as the driver
 * writes them, and the benchmarks played on the engine model's clock. */
#include "testutil.h"

#include "base/buf.h"
#include "base/error.h"
#include "loadgen/dataset.h"
#include "mockserver/as_vllm.h"

#include <math.h>
#include <string.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

START_TEST(serve_as_the_driver_writes_it)
{
	/* run-performance-benchmarks.sh's server command for a serving test */
	char *argv[] = { "serve",
			 "meta-llama/Llama-3.1-8B-Instruct",
			 "--tensor-parallel-size",
			 "1",
			 "--swap_space",
			 "16",
			 "--disable-log-stats",
			 "--load-format=dummy",
			 "--max_model_len",
			 "4096",
			 "--served-model-name=llama",
			 "--host",
			 "127.0.0.1",
			 "--port",
			 "41237" };
	struct pg_vllm_call c;
	struct pg_error err = PG_ERROR_INIT;

	ck_assert_int_eq(pg_vllm_call_parse(&c, N(argv), argv, &err), 0);
	ck_assert_int_eq(c.cmd, PG_VLLM_SERVE);
	ck_assert_str_eq(c.model, "meta-llama/Llama-3.1-8B-Instruct");
	ck_assert_str_eq(c.served_model, "llama");
	ck_assert_str_eq(c.host, "127.0.0.1");
	ck_assert_int_eq(c.port, 41237);
	ck_assert_int_eq(c.max_model_len, 4096);
	ck_assert_int_eq(c.seed, -1);
	/* what the mock does not play is listed, each flag with its value */
	ck_assert_uint_eq(c.ignored.n, 4);
	ck_assert_str_eq(c.ignored.v[0], "--tensor-parallel-size 1");
	ck_assert_str_eq(c.ignored.v[1], "--swap_space 16");
	ck_assert_str_eq(c.ignored.v[2], "--disable-log-stats");
	ck_assert_str_eq(c.ignored.v[3], "--load-format=dummy");
	pg_vllm_call_release(&c);
}
END_TEST

START_TEST(bench_latency_and_throughput_flags)
{
	char *lat[] = { "bench",
			"latency",
			"--model",
			"m",
			"--tensor-parallel-size",
			"2",
			"--num_iters_warmup",
			"5",
			"--num-iters",
			"15",
			"--batch-size",
			"4",
			"--output-json",
			"/tmp/x.json" };
	char *thr[] = { "bench",           "throughput",    "--model", "m",         "--dataset",
			"./sharegpt.json", "--num-prompts", "200",     "--backend", "vllm",
			"--output-json",   "t.json" };
	struct pg_vllm_call c;
	struct pg_error err = PG_ERROR_INIT;

	ck_assert_int_eq(pg_vllm_call_parse(&c, N(lat), lat, &err), 0);
	ck_assert_int_eq(c.cmd, PG_VLLM_BENCH_LATENCY);
	ck_assert_int_eq(c.warmup_iters, 5);
	ck_assert_int_eq(c.iters, 15);
	ck_assert_int_eq(c.batch_size, 4);
	ck_assert_int_eq(c.input_len, -1); /* vLLM's default, 32, when simulated */
	ck_assert_str_eq(c.output_json, "/tmp/x.json");
	ck_assert_uint_eq(c.ignored.n, 1);
	pg_vllm_call_release(&c);

	ck_assert_int_eq(pg_vllm_call_parse(&c, N(thr), thr, &err), 0);
	ck_assert_int_eq(c.cmd, PG_VLLM_BENCH_THROUGHPUT);
	ck_assert_str_eq(c.dataset_path, "./sharegpt.json");
	ck_assert_int_eq(c.num_prompts, 200);
	ck_assert_str_eq(c.ignored.v[0], "--backend vllm");
	pg_vllm_call_release(&c);
}
END_TEST

START_TEST(what_the_mock_does_not_play_is_one_line)
{
	static const struct {
		size_t argc;
		char *argv[6];
		const char *msg;
	} cases[] = {
		{ 0,
		  { NULL },
		  "--as-vllm: vLLM's command line follows it (serve MODEL ..., bench latency ..., bench throughput ...)" },
		{ 2,
		  { "bench", "serve" },
		  "--as-vllm: vllm bench serve is vLLM's own client, not an engine: run it against the mock (--as-vllm serve) instead; the mock plays vllm serve, vllm bench latency and vllm bench throughput" },
		{ 1,
		  { "collect-env" },
		  "--as-vllm: 'vllm collect-env' is not simulated: the mock plays vllm serve, vllm bench latency and vllm bench throughput" },
		{ 2, { "serve", "--port" }, "vllm serve --port: --port needs a value" },
		{ 3, { "serve", "--port", "8000" }, "vllm serve: no model (vllm serve MODEL ...)" },
		{ 4,
		  { "bench", "latency", "--model", "m" },
		  "vllm bench latency: no --output-json: the mock writes its result there" },
		{ 6,
		  { "bench", "latency", "--num-iters", "many", "--output-json", "o" },
		  "vllm bench latency --num-iters: expected a whole number, got 'many'" },
		{ 4, { "serve", "m", "extra", "x" }, "vllm serve: unexpected argument 'extra'" },
	};

	for (size_t i = 0; i < N(cases); i++) {
		struct pg_vllm_call c;
		struct pg_error err = PG_ERROR_INIT;
		ck_assert_int_eq(pg_vllm_call_parse(&c, cases[i].argc, cases[i].argv, &err),
				 PG_ECONFIG);
		ck_assert_str_eq(err.msg, cases[i].msg);
	}
}
END_TEST

/* A batch on the engine model: the first token after ttft + prefill of
 * its prompt, then each of the 127 others an ITL grown by the 7 other
 * sequences running: 20 ms + 32 x 20 us + 127 x 10 ms x 1.07 = 1.37954 s,
 * every iteration alike (no noise asked for). */
START_TEST(latency_on_the_engine_model)
{
	char *argv[] = { "bench",       "latency", "--num-iters-warmup", "2",
			 "--num-iters", "3",       "--output-json",      "o.json" };
	struct pg_engine_params p;
	struct pg_vllm_call c;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_buf text = PG_BUF_INIT;
	json_t *r = NULL;

	pg_engine_params_default(&p);
	ck_assert_int_eq(pg_vllm_call_parse(&c, N(argv), argv, &err), 0);
	ck_assert_int_eq(pg_vllm_sim_latency(&r, &p, &c, &err), 0);
	ck_assert_uint_eq(json_array_size(json_object_get(r, "latencies")), 3);
	for (size_t i = 0; i < 3; i++)
		ck_assert_double_eq_tol(
			json_real_value(json_array_get(json_object_get(r, "latencies"), i)),
			1.37954, 1e-12);
	ck_assert_double_eq_tol(json_real_value(json_object_get(r, "avg_latency")), 1.37954, 1e-12);
	ck_assert_double_eq_tol(
		json_real_value(json_object_get(json_object_get(r, "percentiles"), "99")), 1.37954,
		1e-12);
	pg_vllm_sim_summary(&text, c.cmd, r, 0);
	ck_assert_str_eq(text.ptr, "Avg latency: 1.37954 seconds\n"
				   "10% percentile latency: 1.37954 seconds\n"
				   "25% percentile latency: 1.37954 seconds\n"
				   "50% percentile latency: 1.37954 seconds\n"
				   "75% percentile latency: 1.37954 seconds\n"
				   "90% percentile latency: 1.37954 seconds\n"
				   "99% percentile latency: 1.37954 seconds\n");
	json_decref(r);
	pg_buf_release(&text);
	pg_vllm_call_release(&c);
}
END_TEST

/* Every prompt submitted at once: at fixed timing the last of 5 tokens
 * is due 2 ms + 4 x 1 ms after the start, whatever the batch. */
START_TEST(throughput_on_the_engine_model)
{
	struct pg_prompt v[4];
	struct pg_prompts prompts = { v, 4, 4, "estimate" };
	struct pg_engine_params p;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_buf text = PG_BUF_INIT;
	json_t *r = NULL;
	long out = 0;

	memset(v, 0, sizeof(v));
	for (size_t i = 0; i < 4; i++) {
		v[i].prompt_len = 10;
		v[i].output_len = 5;
	}
	pg_engine_params_default(&p);
	p.fixed_timing = true;
	p.ttft_ns = 2000000;
	p.itl_ns = 1000000;
	ck_assert_int_eq(pg_vllm_sim_throughput(&r, &out, &p, &prompts, &err), 0);
	ck_assert_double_eq_tol(json_real_value(json_object_get(r, "elapsed_time")), 0.006, 1e-12);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "num_requests")), 4);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "total_num_tokens")), 60);
	ck_assert_double_eq_tol(json_real_value(json_object_get(r, "tokens_per_second")), 10000,
				1e-6);
	ck_assert_int_eq(out, 20);
	pg_vllm_sim_summary(&text, PG_VLLM_BENCH_THROUGHPUT, r, out);
	ck_assert_str_eq(text.ptr, "Throughput: 666.67 requests/s, 10000.00 total tokens/s, "
				   "3333.33 output tokens/s\n");
	json_decref(r);
	pg_buf_release(&text);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("as_vllm");
	TCase *tc = tcase_create("as_vllm");

	tcase_add_test(tc, serve_as_the_driver_writes_it);
	tcase_add_test(tc, bench_latency_and_throughput_flags);
	tcase_add_test(tc, what_the_mock_does_not_play_is_one_line);
	tcase_add_test(tc, latency_on_the_engine_model);
	tcase_add_test(tc, throughput_on_the_engine_model);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
