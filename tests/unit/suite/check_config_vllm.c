/* vLLM's latency/throughput/serving-tests.json, translated into the suite
 * model: the commands vLLM's driver runs, names as its result files. */
#include "testutil.h"

#include "base/buf.h"
#include "base/error.h"
#include "suite/suite.h"
#include "suite/config_io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void enter_fixtures(void)
{
	char *dir = tu_test_path("data/vllm");
	ck_assert_int_eq(chdir(dir), 0);
	free(dir);
}

static void load(struct pg_suite *s, const char *const *paths, size_t n)
{
	struct pg_error err = PG_ERROR_INIT;

	enter_fixtures();
	ck_assert_msg(pg_config_load(s, paths, n, NULL, &err) == 0, "%s", err.msg);
}

static const struct pg_test *find(const struct pg_suite *s, const char *name)
{
	for (size_t i = 0; i < s->n_tests; i++)
		if (!strcmp(s->tests[i].name, name))
			return &s->tests[i];
	ck_abort_msg("no test %s", name);
	return NULL;
}

START_TEST(latency_becomes_vllm_bench_latency)
{
	const char *paths[] = { "latency-tests.json" };
	struct pg_suite s = PG_SUITE_INIT;
	const struct pg_test *t;

	load(&s, paths, 1);
	ck_assert_uint_eq(s.n_tests, 3);
	ck_assert_uint_eq(s.warnings.n, 0);

	t = find(&s, "latency_llama8B_tp1");
	ck_assert_int_eq(t->kind, PG_SUITE_LATENCY);
	ck_assert_str_eq(t->model, "meta-llama/Meta-Llama-3.1-8B-Instruct");
	ck_assert_int_eq(t->tp, 1);
	ck_assert_int_eq(t->warmup_iterations, 5);
	ck_assert_int_eq(t->iterations, 15);
	ck_assert_int_eq(t->batch_size, 8); /* vllm bench latency's defaults */
	ck_assert_int_eq(t->dataset.input_len, 32);
	ck_assert_int_eq(t->dataset.output_len, 128);
	ck_assert_ptr_null(t->server.command);
	ck_assert_ptr_null(t->server.remote);
	ck_assert_str_eq(
		t->command,
		"vllm bench latency --output-json {result} --model "
		"meta-llama/Meta-Llama-3.1-8B-Instruct --tensor-parallel-size 1 --load-format dummy "
		"--num-iters-warmup 5 --num-iters 15");
	ck_assert(!t->command_shell);
	ck_assert_str_eq(pg_kvlist_get(&t->command_env, "VLLM_ALLOW_LONG_MAX_MODEL_LEN"), "1");
	ck_assert_str_eq(pg_kvlist_get(&t->command_env, "HF_TOKEN"), "hf_not_a_real_token");

	/* dash spellings pass through as vLLM passes them */
	t = find(&s, "latency_llama70B_tp4");
	ck_assert_int_eq(t->tp, 4);
	ck_assert_int_eq(t->warmup_iterations, 5);
	ck_assert_int_eq(t->iterations, 15);
	ck_assert(pg_str_has_suffix(t->command, "--num-iters-warmup 5 --num-iters 15"));

	/* "" is a switch; an object is one compact JSON argument */
	t = find(&s, "latency_mixtral8x7B_tp2");
	ck_assert_int_eq(t->dataset.input_len, 128);
	ck_assert_int_eq(t->batch_size, 16);
	ck_assert(pg_str_has_suffix(
		t->command, "--input-len 128 --batch-size 16 --enforce-eager --compilation-config "
			    "'{{\"cudagraph_capture_sizes\":[1,2,4]}}'"));
	pg_suite_release(&s);
}
END_TEST

START_TEST(throughput_becomes_vllm_bench_throughput)
{
	const char *paths[] = { "throughput-tests.json" };
	struct pg_suite s = PG_SUITE_INIT;
	const struct pg_test *t;

	load(&s, paths, 1);
	t = find(&s, "throughput_llama8B_tp1");
	ck_assert_int_eq(t->kind, PG_SUITE_THROUGHPUT);
	ck_assert_int_eq(t->num_prompts, 200);
	ck_assert_int_eq(t->dataset.kind, PG_DATASET_SHAREGPT);
	ck_assert_str_eq(t->dataset.path, "./ShareGPT_V3_unfiltered_cleaned_split.json");
	ck_assert_str_eq(
		t->command,
		"vllm bench throughput --output-json {result} --model "
		"meta-llama/Meta-Llama-3.1-8B-Instruct --tensor-parallel-size 1 --load-format dummy "
		"--dataset ./ShareGPT_V3_unfiltered_cleaned_split.json --num-prompts 200 "
		"--backend vllm");
	t = find(&s, "throughput_llama70B_tp4");
	ck_assert_int_eq(t->dataset.kind, PG_DATASET_RANDOM);
	ck_assert_int_eq(t->dataset.input_len, 1024);
	ck_assert_int_eq(t->num_prompts, 200);
	ck_assert_str_eq(pg_kvlist_get(&t->command_env, "VLLM_RPC_TIMEOUT"), "180000");
	pg_suite_release(&s);
}
END_TEST

START_TEST(serving_defaults_and_tests_shape)
{
	const char *paths[] = { "serving-tests.json" };
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_plan plan = PG_PLAN_INIT;
	const struct pg_test *t;

	load(&s, paths, 1);
	ck_assert_uint_eq(s.n_tests, 4); /* the fifth is skipped, as vLLM does */

	t = find(&s, "serving_llama8B_tp1_sharegpt");
	ck_assert_int_eq(t->kind, PG_SUITE_SERVING);
	ck_assert_str_eq(t->model, "meta-llama/Llama-3.1-8B-Instruct");
	ck_assert_str_eq(t->server.command,
			 "vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 1 "
			 "--dtype bfloat16 --host {host} --port {port}");
	ck_assert_str_eq(pg_kvlist_get(&t->server.env, "VLLM_RPC_TIMEOUT"), "100000");
	ck_assert_str_eq(t->client.endpoint, "/v1/completions");
	ck_assert(t->client.temperature == 0);
	ck_assert(t->client.ignore_eos);
	ck_assert_int_eq(t->num_prompts, 200);
	ck_assert_int_eq(t->dataset.kind, PG_DATASET_SHAREGPT);
	ck_assert_int_eq(t->dataset.output_len, 0);
	ck_assert_uint_eq(t->n_qps, 1);
	ck_assert(isinf(t->qps[0]));
	ck_assert_uint_eq(t->n_max_concurrency, 7);
	ck_assert_int_eq(t->max_concurrency[6], 200);
	ck_assert(t->concurrency_in_name);
	ck_assert_ptr_null(t->command);

	t = find(&s, "serving_llama8B_tp1_random_128_2048");
	ck_assert_uint_eq(t->n_qps, 3);
	ck_assert(t->qps[1] == 4.5);
	ck_assert_uint_eq(t->n_max_concurrency, 1);
	ck_assert_int_eq(t->dataset.input_len, 128);
	ck_assert_int_eq(t->dataset.output_len, 2048);
	ck_assert_uint_eq(t->client.n_percentiles, 3);
	ck_assert(t->client.percentiles[0] == 50 && t->client.percentiles[2] == 99);
	ck_assert_uint_eq(t->client.percentile_metrics.n, 4);
	ck_assert(t->goodput.ttft_ms == 3000 && t->goodput.tpot_ms == 100 &&
		  isnan(t->goodput.e2el_ms));

	/* the test overrides the model and adds switches; shallow merge keeps
	 * the defaults' order */
	t = find(&s, "serving_llama70B_tp4_random_128_128");
	ck_assert_int_eq(t->tp, 4);
	ck_assert_str_eq(t->server.command,
			 "vllm serve meta-llama/Llama-3.3-70B-Instruct --tensor-parallel-size 4 "
			 "--dtype bfloat16 --async-scheduling --no-enable-prefix-caching "
			 "--max-num-batched-tokens 8192 --host {host} --port {port}");

	t = find(&s, "serving_gemma4-e4b_tp1_random_128_128");
	ck_assert_str_eq(t->client.endpoint, "/v1/chat/completions");

	ck_assert_uint_eq(s.warnings.n, 2);
	ck_assert_str_eq(s.warnings.v[0],
			 "serving-tests.json:84:9: tests[3].client_parameters."
			 "tokenizer: perfgate's client does not tokenize; ignored");
	ck_assert_str_eq(
		s.warnings.v[1],
		"serving-tests.json:17:16: defaults.client_parameters.model: test "
		"'serving_qwen8B_tp1_mismatch' skipped: client model "
		"'meta-llama/Llama-3.1-8B-Instruct' differs from server model 'Qwen/Qwen3-8B', "
		"and vLLM's driver skips such a test");

	/* result names exactly as vLLM's driver names them */
	pg_plan_build(&plan, &s);
	ck_assert_uint_eq(plan.n, 7 + 3 + 2 + 7);
	ck_assert_str_eq(plan.points[0].name,
			 "serving_llama8B_tp1_sharegpt_qps_inf_concurrency_12");
	ck_assert_str_eq(plan.points[8].name,
			 "serving_llama8B_tp1_random_128_2048_qps_4.5_concurrency_16");
	ck_assert_str_eq(plan.points[10].name,
			 "serving_llama70B_tp4_random_128_128_qps_inf_concurrency_32");
	pg_plan_release(&plan);
	pg_suite_release(&s);
}
END_TEST

START_TEST(serving_array_shape_legacy_keys)
{
	const char *paths[] = { "serving-tests-legacy.json" };
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_plan plan = PG_PLAN_INIT;
	const struct pg_test *t;

	load(&s, paths, 1);
	ck_assert_uint_eq(s.n_tests, 2);
	t = find(&s, "serving_llama8B_tp1_sharegpt");
	ck_assert_str_eq(
		t->server.command,
		"vllm serve meta-llama/Meta-Llama-3-8B --tensor-parallel-size 1 --swap-space 16 "
		"--disable-log-stats --disable-log-requests --load-format dummy --host {host} "
		"--port {port}");
	/* vLLM's default: no temperature sent, no ignore_eos for sharegpt */
	ck_assert(isnan(t->client.temperature));
	ck_assert(!t->client.ignore_eos);

	t = find(&s, "serving_llama70B_tp4_sharegpt_specdecode");
	ck_assert_str_eq(
		t->server.command,
		"vllm serve meta-llama/Meta-Llama-3.1-70B-Instruct --tensor-parallel-size 4 "
		"--swap-space 16 --speculative-config '{{\"model\":\"turboderp/Qwama-0.5B-Instruct\","
		"\"num_speculative_tokens\":4,\"draft_tensor_parallel_size\":1}}' --host {host} "
		"--port {port}");
	ck_assert_uint_eq(s.warnings.n, 2);
	ck_assert_str_eq(s.warnings.v[0],
			 "serving-tests-legacy.json:36:13: [1].server_parameters.port: "
			 "perfgate picks a free port for the server itself; ignored");
	ck_assert_str_eq(s.warnings.v[1],
			 "serving-tests-legacy.json:44:13: [1].client_parameters."
			 "save_result: perfgate writes the result files itself; ignored");

	/* without max_concurrency_list the driver runs at num_prompts, no cap
	 * at all: the points are named as vLLM's published reports name them */
	pg_plan_build(&plan, &s);
	ck_assert_uint_eq(plan.n, 5);
	ck_assert_int_eq(plan.points[0].max_concurrency, 200);
	ck_assert_str_eq(plan.points[0].name, "serving_llama8B_tp1_sharegpt_qps_1");
	ck_assert_str_eq(plan.points[3].name, "serving_llama8B_tp1_sharegpt_qps_inf");
	ck_assert_str_eq(plan.points[4].name, "serving_llama70B_tp4_sharegpt_specdecode_qps_2");
	pg_plan_release(&plan);
	pg_suite_release(&s);
}
END_TEST

START_TEST(three_files_make_one_suite)
{
	const char *paths[] = { "latency-tests.json", "throughput-tests.json",
				"serving-tests.json" };
	struct pg_suite s = PG_SUITE_INIT;

	load(&s, paths, 3);
	ck_assert_uint_eq(s.n_tests, 3 + 2 + 4);
	ck_assert_str_eq(s.source, "latency-tests.json, throughput-tests.json, serving-tests.json");
	ck_assert_int_eq(s.tests[0].kind, PG_SUITE_LATENCY);
	ck_assert_int_eq(s.tests[3].kind, PG_SUITE_THROUGHPUT);
	ck_assert_int_eq(s.tests[5].kind, PG_SUITE_SERVING);
	pg_suite_release(&s);
}
END_TEST

/* The driver's PROMPTS_PER_CONCURRENCY, MIN_NUM_PROMPTS and MAX_NUM_PROMPTS
 * scale each point's prompt count for vLLM's files, as they do there. */
START_TEST(prompts_per_concurrency_from_the_environment)
{
	static const char json[] =
		"[{\"test_name\": \"serving_x\", \"qps_list\": [\"inf\"], \"max_concurrency_list\": [2, 8],"
		" \"server_parameters\": {\"model\": \"m\"},"
		" \"client_parameters\": {\"model\": \"m\", \"num_prompts\": 100}}]";
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_plan plan = PG_PLAN_INIT;
	struct pg_error err = PG_ERROR_INIT;

	setenv("PROMPTS_PER_CONCURRENCY", "5", 1);
	setenv("MAX_NUM_PROMPTS", "20", 1);
	ck_assert_msg(pg_config_load_text(&s, json, strlen(json), "serving-tests.json", &err) == 0,
		      "%s", err.msg);
	pg_plan_build(&plan, &s);
	ck_assert_uint_eq(plan.n, 2);
	ck_assert_int_eq(pg_point_num_prompts(&plan.points[0]), 10);
	ck_assert_int_eq(pg_point_num_prompts(&plan.points[1]), 20);
	pg_plan_release(&plan);
	pg_suite_release(&s);

	setenv("PROMPTS_PER_CONCURRENCY", "five", 1);
	ck_assert_int_eq(pg_config_load_text(&s, json, strlen(json), "serving-tests.json", &err),
			 PG_ECONFIG);
	ck_assert_str_eq(err.msg,
			 "environment variable PROMPTS_PER_CONCURRENCY: expected a positive "
			 "integer, got 'five'");
	pg_suite_release(&s);

	setenv("PROMPTS_PER_CONCURRENCY", "5", 1);
	setenv("MIN_NUM_PROMPTS", "30", 1);
	ck_assert_int_eq(pg_config_load_text(&s, json, strlen(json), "serving-tests.json", &err),
			 PG_ECONFIG);
	ck_assert_str_eq(err.msg,
			 "environment: MIN_NUM_PROMPTS (30) is above MAX_NUM_PROMPTS (20)");
	pg_suite_release(&s);
	unsetenv("PROMPTS_PER_CONCURRENCY");
	unsetenv("MIN_NUM_PROMPTS");
	unsetenv("MAX_NUM_PROMPTS");
}
END_TEST

/* Inline, as BUILDKITE_PLUGIN_CONFIGURATION JSON carries it: the kind comes
 * from each test_name, and client flags map one by one. */
START_TEST(inline_vllm_json_and_client_flags)
{
	static const char json[] =
		"[{\"test_name\": \"serving_x\", \"qps_list\": [\"inf\", 2],"
		" \"max_concurrency_list\": [\"8\"],"
		" \"server_parameters\": {\"model\": \"m\", \"served_model_name\": \"mm\", \"host\": \"0.0.0.0\"},"
		" \"client_parameters\": {\"model\": \"m\", \"backend\": \"openai-chat\","
		"   \"dataset_name\": \"custom\", \"dataset_path\": \"p.jsonl\", \"seed\": \"7\","
		"   \"top_p\": 0.9, \"top_k\": 20, \"extra_body\": \"{\\\"min_tokens\\\": 4}\","
		"   \"burstiness\": 0.5, \"num_warmups\": 2, \"header\": [\"X-A=1\", \"Authorization=Bearer t\"],"
		"   \"request_rate\": 3, \"unknown_flag\": \"\", \"percentile-metrics\": \"ttft,client_queue_time,queue_depth\"}},"
		" {\"test_name\": \"latency_y\", \"parameters\": {\"model\": \"m\", \"output_json\": \"x.json\"}}]";
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_error err = PG_ERROR_INIT;
	const struct pg_test *t;

	ck_assert_msg(pg_config_load_text(&s, json, strlen(json), "BUILDKITE_PLUGIN_CONFIGURATION",
					  &err) == 0,
		      "%s", err.msg);
	ck_assert_uint_eq(s.n_tests, 2);
	t = find(&s, "serving_x");
	ck_assert_str_eq(t->server.command,
			 "vllm serve m --served-model-name mm --host {host} --port {port}");
	ck_assert_str_eq(t->client.served_model, "mm");
	ck_assert_str_eq(t->client.endpoint, "/v1/chat/completions");
	ck_assert_int_eq(t->dataset.kind, PG_DATASET_JSONL);
	ck_assert_int_eq(t->dataset.output_len, 256);
	ck_assert_uint_eq(t->client.seed, 7);
	ck_assert(json_real_value(json_object_get(t->client.extra_body, "top_p")) == 0.9);
	ck_assert_int_eq(json_integer_value(json_object_get(t->client.extra_body, "top_k")), 20);
	ck_assert_int_eq(json_integer_value(json_object_get(t->client.extra_body, "min_tokens")),
			 4);
	ck_assert(t->burstiness == 0.5);
	ck_assert_int_eq(t->client.num_warmups, 2);
	ck_assert_str_eq(pg_kvlist_get(&t->client.headers, "Authorization"), "Bearer t");
	ck_assert_int_eq(t->max_concurrency[0], 8);
	ck_assert_uint_eq(t->client.percentile_metrics.n, 2);
	ck_assert_str_eq(t->client.percentile_metrics.v[1], "client_queue_time");
	t = find(&s, "latency_y");
	ck_assert_str_eq(t->command, "vllm bench latency --output-json {result} --model m");

	ck_assert_uint_eq(s.warnings.n, 5);
	ck_assert(strstr(s.warnings.v[0], "server_parameters.host: perfgate binds the server"));
	ck_assert(strstr(s.warnings.v[1], "client_parameters.request_rate: qps_list sets"));
	ck_assert(strstr(s.warnings.v[2], "client_parameters.unknown_flag: no equivalent"));
	ck_assert(strstr(s.warnings.v[3], "'queue_depth' is not measured"));
	ck_assert(strstr(s.warnings.v[4], "parameters.output_json: perfgate passes --output-json"));
	pg_suite_release(&s);
}
END_TEST

/* The server's compilation mode and optimization level go into the
 * client's --metadata, as vLLM's newest driver passes them: on vLLM's own
 * client's command and as the test's metadata (which the runner writes
 * on perfgate's client's results and its equivalent command); unset ones
 * are left out. */
START_TEST(driver_metadata_from_the_server)
{
	static const char json[] =
		"[{\"test_name\": \"serving_x\", \"qps_list\": [\"inf\"],"
		" \"server_parameters\": {\"model\": \"m\", \"tensor_parallel_size\": 2,"
		"   \"compilation_config.mode\": 3, \"optimization_level\": \"O2\"},"
		" \"client_parameters\": {\"model\": \"m\", \"backend\": \"openai-embeddings\"}},"
		" {\"test_name\": \"serving_own\", \"qps_list\": [\"inf\"],"
		" \"server_parameters\": {\"model\": \"m\", \"optimization_level\": 1},"
		" \"client_parameters\": {\"model\": \"m\", \"dataset_name\": \"random\"}},"
		" {\"test_name\": \"serving_none\", \"qps_list\": [\"inf\"],"
		" \"server_parameters\": {\"model\": \"m\"},"
		" \"client_parameters\": {\"model\": \"m\", \"dataset_name\": \"random\"}}]";
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_error err = PG_ERROR_INIT;
	const struct pg_test *t;

	ck_assert_msg(pg_config_load_text(&s, json, strlen(json), "BUILDKITE_PLUGIN_CONFIGURATION",
					  &err) == 0,
		      "%s", err.msg);
	t = find(&s, "serving_x");
	ck_assert_ptr_nonnull(t->command);
	ck_assert_msg(strstr(t->command,
			     " --metadata tensor_parallel_size=2 "
			     "compilation_config.mode=3 optimization_level=O2 ") != NULL,
		      "%s", t->command);
	ck_assert_str_eq(pg_kvlist_get(&t->metadata, "compilation_config.mode"), "3");
	t = find(&s, "serving_own");
	ck_assert_ptr_null(t->command);
	ck_assert_uint_eq(t->metadata.n, 1);
	ck_assert_str_eq(pg_kvlist_get(&t->metadata, "optimization_level"), "1");
	t = find(&s, "serving_none");
	ck_assert_uint_eq(t->metadata.n, 0);
	pg_suite_release(&s);
}
END_TEST

/*
 * Every kind of file in vLLM's history (tests/data/vllm/history, origins in
 * its README) loads as vLLM's driver reads it: the points, their servers
 * and clients, and every warning, in a golden file.
 */
START_TEST(every_file_in_vllms_history)
{
	static const char *const files[] = {
		"0707a7f/serving-tests.json",
		"152f3f9/latency-tests.json",
		"d32723a/throughput-tests-for-debugging.json",
		"d5ce924/latency-tests.json",
		"9ddbe88/throughput-tests.json",
		"fc10a04/serving-tests.json",
		"7ae34f4/throughput-tests-hpu.json",
		"0574518/serving-tests-hpu.json",
		"2304213/serving-tests-rocm.json",
		"53cc451/tpu-serving-tests-v6e-1.json",
		"028b5aa/serving-tests-cpu-embed.json",
		"1711f0d/serving-tests-cpu-asr.json",
		"a6334f5/serving-tests-cpu-multimodal.json",
		"9c6c815/nightly-tests.json",
		"307e086/genai-perf-tests.json",
	};
	struct pg_buf out = PG_BUF_INIT;
	char *dir = tu_test_path("data/vllm/history");

	ck_assert_int_eq(chdir(dir), 0);
	free(dir);
	unsetenv("CURRENT_LLM_SERVING_ENGINE");
	unsetenv("PROMPTS_PER_CONCURRENCY");
	unsetenv("ENABLE_ADAPTIVE_CONCURRENCY");
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		struct pg_suite s = PG_SUITE_INIT;
		struct pg_plan plan = PG_PLAN_INIT;
		struct pg_error err = PG_ERROR_INIT;
		const char *paths[] = { files[f] };
		const struct pg_test *last = NULL;

		ck_assert_msg(pg_config_load(&s, paths, 1, NULL, &err) == 0, "%s", err.msg);
		pg_plan_build(&plan, &s);
		pg_buf_printf(&out, "== %s: %zu tests, %zu points\n", files[f], s.n_tests, plan.n);
		for (size_t i = 0; i < plan.n; i++) {
			const struct pg_test *t = plan.points[i].test;

			if (t != last) {
				pg_buf_printf(&out, "test %s (%s, tp %ld, model %s)\n", t->name,
					      pg_suite_kind_name(t->kind), t->tp, t->model);
				if (t->server.command)
					pg_buf_printf(&out, "  server  %s\n", t->server.command);
				if (t->command)
					pg_buf_printf(&out, "  command %s\n", t->command);
				else if (t->kind == PG_SUITE_SERVING)
					pg_buf_printf(&out,
						      "  client  %s, dataset %d %s in %ld out %ld "
						      "prefix %ld, %ld prompts, ignore_eos %d\n",
						      t->client.endpoint, (int)t->dataset.kind,
						      t->dataset.path ? t->dataset.path : "-",
						      t->dataset.input_len, t->dataset.output_len,
						      t->dataset.prefix_len, t->num_prompts,
						      (int)t->client.ignore_eos);
				last = t;
			}
			pg_buf_printf(&out, "  %s\n", plan.points[i].name);
		}
		for (size_t i = 0; i < s.warnings.n; i++)
			pg_buf_printf(&out, "warning: %s\n", s.warnings.v[i]);
		pg_plan_release(&plan);
		pg_suite_release(&s);
	}
	tu_assert_golden("golden/vllm-history.txt", out.ptr);
	pg_buf_release(&out);
}
END_TEST

static Suite *vllm_suite(void)
{
	Suite *s = suite_create("config_vllm");
	TCase *tc = tcase_create("vllm");

	tcase_add_test(tc, latency_becomes_vllm_bench_latency);
	tcase_add_test(tc, throughput_becomes_vllm_bench_throughput);
	tcase_add_test(tc, serving_defaults_and_tests_shape);
	tcase_add_test(tc, serving_array_shape_legacy_keys);
	tcase_add_test(tc, three_files_make_one_suite);
	tcase_add_test(tc, inline_vllm_json_and_client_flags);
	tcase_add_test(tc, driver_metadata_from_the_server);
	tcase_add_test(tc, prompts_per_concurrency_from_the_environment);
	tcase_add_test(tc, every_file_in_vllms_history);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(vllm_suite());
}
