/* Choosing points (--filter, --only, --repeat), runtime placeholders,
 * secret redaction, and the --dry-run listing (golden files). */
#include "testutil.h"

#include "base/buf.h"
#include "base/error.h"
#include "suite/plan.h"
#include "runner/vllmcmd.h"
#include "base/secret.h"
#include "suite/suite.h"
#include "base/template.h"
#include "suite/config_io.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void load_text(struct pg_suite *s, const char *text, const char *name)
{
	struct pg_error err = PG_ERROR_INIT;
	ck_assert_msg(pg_config_load_text(s, text, strlen(text), name, &err) == 0, "%s", err.msg);
}

/* tests/data/pipeline/suites/gpu.yml: latency_llama8B_tp1 (1 point),
 * serving_llama8B_tp1_random_128_128 (qps 1, 4, inf) and
 * serving_llama70B_tp4_random_128_128 (qps 1, inf). */
static void load_gpu_suite(struct pg_suite *s)
{
	char *dir = tu_test_path("data/pipeline");
	const char *paths[] = { "suites/gpu.yml" };
	struct pg_error err = PG_ERROR_INIT;

	ck_assert_int_eq(chdir(dir), 0);
	free(dir);
	ck_assert_msg(pg_config_load(s, paths, 1, NULL, &err) == 0, "%s", err.msg);
}

static size_t select_n(const struct pg_selection *sel, struct pg_plan *plan, struct pg_suite *s,
		       struct pg_error *err)
{
	int rc = pg_plan_select(plan, s, sel, err);
	return rc ? (size_t)-1 : plan->n;
}

START_TEST(filter_only_and_repeat)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_plan plan = PG_PLAN_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_selection sel = PG_SELECTION_INIT;

	load_gpu_suite(&s);
	ck_assert_uint_eq(select_n(&sel, &plan, &s, &err), 1 + 3 + 2);
	pg_plan_release(&plan);

	sel.filter = "_qps_inf";
	ck_assert_uint_eq(select_n(&sel, &plan, &s, &err), 2);
	ck_assert_str_eq(plan.points[0].name, "serving_llama8B_tp1_random_128_128_qps_inf");
	ck_assert_str_eq(plan.points[1].name, "serving_llama70B_tp4_random_128_128_qps_inf");
	pg_plan_release(&plan);

	/* vLLM's TEST_SELECTOR habit: a test name selects all its points */
	sel.filter = "^serving_llama70B";
	ck_assert_uint_eq(select_n(&sel, &plan, &s, &err), 2);
	pg_plan_release(&plan);

	sel.filter = "tp1";
	sel.only = PG_SUITE_LATENCY;
	sel.repeat = 5;
	ck_assert_uint_eq(select_n(&sel, &plan, &s, &err), 1);
	ck_assert_str_eq(plan.points[0].name, "latency_llama8B_tp1");
	ck_assert_int_eq(plan.points[0].test->repeat, 5);
	ck_assert_int_eq(s.tests[2].repeat, 5);
	pg_plan_release(&plan);

	/* nothing left is an error: a CI step that runs nothing would pass */
	sel.filter = "mixtral";
	sel.only = PG_SUITE_SERVING;
	ck_assert_uint_eq(select_n(&sel, &plan, &s, &err), (size_t)-1);
	ck_assert_int_eq(err.code, PG_ECONFIG);
	ck_assert_str_eq(err.msg,
			 "no test point is left after only serving, filter 'mixtral' (of 6 "
			 "in suites/gpu.yml)");
	ck_assert_uint_eq(plan.n, 0);
	pg_plan_release(&plan);

	sel.filter = "qps_(1";
	sel.only = -1;
	ck_assert_uint_eq(select_n(&sel, &plan, &s, &err), (size_t)-1);
	ck_assert(
		pg_str_has_prefix(err.msg, "filter 'qps_(1' is not a valid regular expression: "));
	pg_plan_release(&plan);
	pg_suite_release(&s);
}
END_TEST

/* A shard step runs its slice of the suite's tests (the split of the whole
 * suite, whatever the filter), under the plugin and under perfgate run. */
START_TEST(shards)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_plan plan = PG_PLAN_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_selection sel = PG_SELECTION_INIT;
	size_t all, first, second;

	load_gpu_suite(&s);
	all = select_n(&sel, &plan, &s, &err);
	pg_plan_release(&plan);
	sel.shard = "1/2";
	first = select_n(&sel, &plan, &s, &err);
	ck_assert_uint_gt(first, 0);
	pg_plan_release(&plan);
	sel.shard = "2/2";
	second = select_n(&sel, &plan, &s, &err);
	ck_assert_uint_gt(second, 0);
	ck_assert_uint_eq(first + second, all);
	/* a test's points stay together */
	for (size_t i = 1; i < plan.n; i++)
		if (plan.points[i].test != plan.points[i - 1].test)
			for (size_t k = i + 1; k < plan.n; k++)
				ck_assert_ptr_ne(plan.points[k].test, plan.points[i - 1].test);
	pg_plan_release(&plan);

	sel.shard = "3/2";
	ck_assert_uint_eq(select_n(&sel, &plan, &s, &err), (size_t)-1);
	ck_assert_str_eq(err.msg,
			 "shard: expected \"INDEX/COUNT\" with 1 <= INDEX <= COUNT, got \"3/2\"");
	pg_plan_release(&plan);

	/* more shards than tests: the last ones are empty, which must not pass */
	sel.shard = "50/50";
	sel.filter = "tp";
	ck_assert_uint_eq(select_n(&sel, &plan, &s, &err), (size_t)-1);
	ck_assert_str_eq(err.msg, "no test point is left after filter 'tp', shard 50/50 (of 6 in "
				  "suites/gpu.yml)");
	pg_plan_release(&plan);
	pg_suite_release(&s);
}
END_TEST

START_TEST(point_variables)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_strv argv = PG_STRV_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_point_vars v;

	load_text(
		&s,
		"serving:\n"
		"  - name: serving_a\n"
		"    model: \"a b'$(touch x)\"\n"
		"    vars: {quant: fp8}\n"
		"    server: {command: 'serve {model} --port {port}'}\n"
		"    command: \"bench --url {base_url} --host {host} --out {result} --dir {results_dir} -q {quant}\"\n",
		"vars.yml");
	memset(&v, 0, sizeof(v));
	v.test = &s.tests[0];
	v.port = "8123";
	v.host = "127.0.0.1";
	v.base_url = "http://127.0.0.1:8123";
	v.result = "results/serving_a_qps_inf.json";
	v.results_dir = "results";
	ck_assert_int_eq(pg_template_argv(&argv, s.tests[0].command, pg_point_var, &v, &err), 0);
	ck_assert_uint_eq(argv.n, 11);
	ck_assert_str_eq(argv.v[2], "http://127.0.0.1:8123");
	ck_assert_str_eq(argv.v[6], "results/serving_a_qps_inf.json");
	ck_assert_str_eq(argv.v[10], "fp8");
	pg_strv_release(&argv);
	ck_assert_int_eq(pg_template_argv(&argv, s.tests[0].server.command, pg_point_var, &v, &err),
			 0);
	ck_assert_str_eq(argv.v[1], "a b'$(touch x)"); /* one literal word */
	ck_assert_str_eq(argv.v[3], "8123");
	ck_assert_ptr_null(pg_point_var(&v, "nope"));
	pg_strv_release(&argv);
	pg_suite_release(&s);
}
END_TEST

START_TEST(secrets_are_redacted)
{
	char *argv[] = { "vllm",
			 "serve",
			 "m",
			 "--api-key",
			 "sk-123",
			 "--hf-token=hf_abc",
			 "--max-num-batched-tokens",
			 "8192",
			 "--tokenizer",
			 "t",
			 NULL };
	struct pg_buf b = PG_BUF_INIT;
	struct pg_kvlist env = { 0 };

	ck_assert(pg_secret_name("HF_TOKEN"));
	ck_assert(pg_secret_name("OPENAI_API_KEY"));
	ck_assert(pg_secret_name("db_password"));
	ck_assert(pg_secret_name("Authorization"));
	ck_assert(pg_secret_name("AWS_SECRET_ACCESS_KEY"));
	ck_assert(!pg_secret_name("VLLM_USAGE_SOURCE"));
	ck_assert(!pg_secret_name("CUDA_VISIBLE_DEVICES"));
	ck_assert(pg_secret_flag("--api-key"));
	ck_assert(pg_secret_flag("--hf_token=x"));
	ck_assert(!pg_secret_flag("--max-num-batched-tokens"));
	ck_assert(!pg_secret_flag("--tokenizer"));
	ck_assert(!pg_secret_flag("api-key"));

	pg_argv_display_redacted(&b, argv);
	ck_assert_str_eq(b.ptr,
			 "vllm serve m --api-key *** --hf-token=*** --max-num-batched-tokens "
			 "8192 --tokenizer t");
	pg_buf_reset(&b);
	{
		/* a secret flag without its value hides nothing else */
		char *bare[] = { "vllm",      "serve", "--hf-token", "--port", "8000",
				 "--api-key", "-k3y",  "--api-key",  NULL };
		pg_argv_display_redacted(&b, bare);
		ck_assert_str_eq(b.ptr,
				 "vllm serve --hf-token --port 8000 --api-key *** --api-key");
		pg_buf_reset(&b);
	}
	pg_kvlist_set(&env, "HF_TOKEN", "hf_abc");
	pg_kvlist_set(&env, "VLLM_LOGGING_LEVEL", "WARNING");
	pg_kvlist_set(&env, "X", "a b");
	pg_env_display(&b, &env);
	ck_assert_str_eq(b.ptr, "HF_TOKEN=*** VLLM_LOGGING_LEVEL=WARNING X='a b'");
	pg_kvlist_release(&env);
	pg_buf_release(&b);
}
END_TEST

static void dryrun_golden(struct pg_suite *s, const struct pg_selection *sel,
			  const struct pg_dryrun_opts *o_in, const char *golden)
{
	struct pg_plan all = PG_PLAN_INIT, plan = PG_PLAN_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_buf out = PG_BUF_INIT;
	struct pg_dryrun_opts o = *o_in;

	pg_plan_build(&all, s);
	o.total_points = all.n;
	pg_plan_release(&all);
	ck_assert_msg(pg_plan_select(&plan, s, sel, &err) == 0, "%s", err.msg);
	pg_dryrun_render(&out, s, &plan, &o);
	tu_assert_golden(golden, out.ptr);
	pg_buf_release(&out);
	pg_plan_release(&plan);
}

START_TEST(dryrun_suite_file)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_selection sel = PG_SELECTION_INIT;
	struct pg_dryrun_opts o = { NULL, NULL, 0 };

	load_gpu_suite(&s);
	/* GPU hygiene shows on the tests that ask for it */
	for (size_t i = 0; i < s.n_tests; i++)
		if (s.tests[i].server.command) {
			s.tests[i].server.gpu_idle_mib = 1000;
			break;
		}
	dryrun_golden(&s, &sel, &o, "golden/dryrun-suite.txt");
	pg_suite_release(&s);
}
END_TEST

START_TEST(dryrun_vllm_files)
{
	const char *paths[] = { "latency-tests.json", "throughput-tests.json",
				"serving-tests.json" };
	char *dir = tu_test_path("data/vllm");
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_selection sel = PG_SELECTION_INIT;
	struct pg_dryrun_opts o = { "out/h100", "H100", 0 };

	ck_assert_int_eq(chdir(dir), 0);
	free(dir);
	ck_assert_msg(pg_config_load(&s, paths, 3, NULL, &err) == 0, "%s", err.msg);
	sel.filter = "^latency_llama8B|^throughput_llama70B|sharegpt_qps_inf(_concurrency_12)?$|"
		     "2048_qps_4.5|gemma";
	dryrun_golden(&s, &sel, &o, "golden/dryrun-vllm.txt");
	pg_suite_release(&s);
}
END_TEST

/* A deployment: each role's command with {port}, {replica} and the
 * roles' addresses left for run time, {tp} the role's own (2 and 1, not
 * the test's 4), its log, its own ready path and env, the server's env
 * for every role. */
START_TEST(dryrun_deployment)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_selection sel = PG_SELECTION_INIT;
	struct pg_dryrun_opts o = { NULL, NULL, 0 };

	load_text(&s,
		  "serving:\n"
		  "  - name: pd\n"
		  "    model: m\n"
		  "    tp: 4\n"
		  "    qps: [4]\n"
		  "    server:\n"
		  "      ready: /health\n"
		  "      env: {HF_TOKEN: hf_secret_value}\n"
		  "      deployment:\n"
		  "        prefill:\n"
		  "          command: serve {model} --port {port} --rank {replica} -tp {tp}\n"
		  "          replicas: 2\n"
		  "          tp: 2\n"
		  "          env: {KV_ROLE: producer}\n"
		  "        decode:\n"
		  "          command: serve {model} --port {port} -tp {tp}\n"
		  "          ready: /v1/models\n"
		  "        proxy:\n"
		  "          command: >-\n"
		  "            proxy --port {port} --p $(echo {prefill_ports} | tr , ' ')\n"
		  "            --d {decode_urls}\n"
		  "          shell: true\n",
		  "pd.yml");
	dryrun_golden(&s, &sel, &o, "golden/dryrun-deployment.txt");
	pg_suite_release(&s);
}
END_TEST

/* Remote servers, external commands with and without a server, shell
 * templates, secrets in env, headers and flags, every client setting. */
START_TEST(dryrun_every_shape)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_selection sel = PG_SELECTION_INIT;
	struct pg_dryrun_opts o = { NULL, NULL, 0 };

	load_text(
		&s,
		"defaults:\n"
		"  server:\n"
		"    command: vllm serve {model} --port {port} --api-key sk-live-123 --hf-token=hf_abc\n"
		"    env: {HF_TOKEN: hf_abc, VLLM_LOGGING_LEVEL: WARNING}\n"
		"    ready_timeout: 600\n"
		"latency:\n"
		"  - name: latency_external\n"
		"    model: meta-llama/Llama-3.1-8B-Instruct\n"
		"    command: vllm bench latency --model {model} --output-json {result}\n"
		"    command_env: {VLLM_RPC_TIMEOUT: '180000', WANDB_API_KEY: abc}\n"
		"    command_timeout: 900\n"
		"throughput:\n"
		"  - name: throughput_jsonl\n"
		"    model: m\n"
		"    dataset: {name: jsonl, path: prompts.jsonl}\n"
		"    num_prompts: 64\n"
		"    max_concurrency: 8\n"
		"serving:\n"
		"  - name: serving_remote\n"
		"    model: m\n"
		"    server: {remote: 'http://[::1]:8000'}\n"
		"    client:\n"
		"      endpoint: /v1/chat/completions\n"
		"      served_model: llama\n"
		"      api_key_env: OPENAI_API_KEY\n"
		"      headers: {Authorization: Bearer xyz, X-Team: infra}\n"
		"      extra_body: {top_p: 0.9}\n"
		"      percentiles: [50, 99.9]\n"
		"      percentile_metrics: [ttft, e2el]\n"
		"      warmups: 2\n"
		"      continuous_usage: true\n"
		"      timeout: 30\n"
		"    dataset: {input_len: 256, output_len: 32, range_ratio: 0.5, prefix_len: 64}\n"
		"    qps: [0.5]\n"
		"    burstiness: 0.25\n"
		"    goodput: {ttft: 500, e2el: 2000}\n"
		"    repeat: 3\n"
		"  - name: serving_own_bench\n"
		"    model: m\n"
		"    server:\n"
		"      command: \"VLLM_X=1 exec vllm serve '{model}' --port {port} > \\\"{results_dir}/server.log\\\"\"\n"
		"      shell: true\n"
		"    command: my-bench --url {base_url} --out {result}\n",
		"shapes.yml");
	dryrun_golden(&s, &sel, &o, "golden/dryrun-shapes.txt");
	pg_suite_release(&s);
}
END_TEST

/* How long each point takes, as the suite alone tells it: a rate's
 * arrivals (n/rate, a ramp's seeded schedule) pace a point, a cap below
 * the prompt count or sessions make it "at least", rate inf and the
 * latency/throughput/startup kinds are the server's; repeats multiply. */
START_TEST(dryrun_time_estimates)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_plan plan = PG_PLAN_INIT;
	struct pg_dryrun_opts o = { NULL, NULL, 0 };
	struct pg_buf out = PG_BUF_INIT, lines = PG_BUF_INIT;

	load_text(&s,
		  "defaults:\n"
		  "  server: {command: \"vllm serve {model} --port {port}\"}\n"
		  "  model: m\n"
		  "latency:\n"
		  "  - name: latency_a\n"
		  "startup:\n"
		  "  - name: startup_a\n"
		  "serving:\n"
		  "  - name: serving_rates\n"
		  "    num_prompts: 200\n"
		  "    qps: [1, 4, 16, inf]\n"
		  "    max_concurrency: [null, 16]\n"
		  "  - name: serving_repeat\n"
		  "    num_prompts: 90\n"
		  "    qps: [0.5]\n"
		  "    repeat: 3\n"
		  "  - name: serving_ramp\n"
		  "    num_prompts: 100\n"
		  "    ramp_up: {strategy: linear, start_rps: 1, end_rps: 8}\n"
		  "  - name: serving_sessions\n"
		  "    client: {endpoint: /v1/chat/completions}\n"
		  "    dataset: {name: multi_turn, users: 10, rounds: 4}\n"
		  "    qps: [2]\n",
		  "time.yml");
	pg_plan_build(&plan, &s);
	pg_dryrun_render(&out, &s, &plan, &o);
	/* the plan's total and each point's time line, named */
	for (const char *p = out.ptr; *p;) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		if (pg_str_has_prefix(p, "Time:") || pg_str_has_prefix(p, "[") ||
		    pg_str_has_prefix(p, "  time "))
			pg_buf_printf(&lines, "%.*s\n", (int)len, p);
		p += len + (eol != NULL);
	}
	tu_assert_golden("golden/run/dryrun-time.txt", lines.ptr);
	pg_buf_release(&out);
	pg_buf_release(&lines);
	pg_plan_release(&plan);
	pg_suite_release(&s);
}
END_TEST

/* A concurrency sweep with prompts_per_concurrency: every bounded point
 * sends concurrency x N prompts, clamped; unbounded points keep
 * num_prompts; the listing, the vllm command and the names follow. */
START_TEST(prompts_per_concurrency)
{
	static const long want[] = { 16, 40, 500, 300 };
	static const char bad_bounds[] = "serving:\n"
					 "  - name: serving_sweep\n"
					 "    model: m\n"
					 "    server:\n"
					 "      command: vllm serve {model} --port {port}\n"
					 "    max_num_prompts: 10\n"
					 "    min_num_prompts: 20\n";
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_plan plan = PG_PLAN_INIT;
	struct pg_dryrun_opts o = { NULL, NULL, 0 };
	struct pg_buf out = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;

	load_text(&s,
		  "serving:\n"
		  "  - name: serving_sweep\n"
		  "    model: m\n"
		  "    server:\n"
		  "      command: vllm serve {model} --port {port}\n"
		  "    qps: [inf]\n"
		  "    max_concurrency: [1, 4, 64, null]\n"
		  "    num_prompts: 300\n"
		  "    prompts_per_concurrency: 10\n"
		  "    min_num_prompts: 16\n"
		  "    max_num_prompts: 500\n",
		  "sweep.yml");
	pg_plan_build(&plan, &s);
	ck_assert_uint_eq(plan.n, 4);
	for (size_t i = 0; i < plan.n; i++)
		ck_assert_int_eq(pg_point_num_prompts(&plan.points[i]), want[i]);
	ck_assert_str_eq(plan.points[1].name, "serving_sweep_qps_inf_concurrency_4");

	o.total_points = plan.n;
	pg_dryrun_render(&out, &s, &plan, &o);
	ck_assert_msg(strstr(out.ptr,
			     "40 prompts (10 per concurrency), all sent at once (qps inf), "
			     "max concurrency 4\n"),
		      "%s", out.ptr);
	ck_assert_msg(
		strstr(out.ptr, "300 prompts, all sent at once (qps inf), unbounded concurrency\n"),
		"%s", out.ptr);
	pg_buf_release(&out);
	pg_plan_release(&plan);
	pg_suite_release(&s);

	/* bounds that cannot hold are refused where they are written */
	ck_assert_int_eq(pg_config_load_text(&s, bad_bounds, strlen(bad_bounds), "sweep.yml", &err),
			 PG_ECONFIG);
	ck_assert_str_eq(err.msg,
			 "sweep.yml:7:22: serving[0]: test 'serving_sweep': min_num_prompts (20) "
			 "is above max_num_prompts (10)");
	pg_suite_release(&s);
}
END_TEST

/* vLLM's ramp-up from a suite file and from a vLLM serving file: the
 * listing and the equivalent vllm command say what runs; a partial ramp or
 * one beside a finite qps is refused where it is written. */
START_TEST(ramp_up)
{
	/* clang-format off */
	static const char *const bad[][2] = {
		{ "    ramp_up: {strategy: linera, start_rps: 1, end_rps: 8}\n",
		  "r.yml:6:25: serving[0].ramp_up.strategy: unknown ramp-up strategy 'linera' (did you mean 'linear'?)" },
		{ "    ramp_up: {strategy: linear, start_rps: 1}\n",
		  "r.yml:6:14: serving[0].ramp_up: test 'serving_r': a linear ramp-up needs both a start and an end rate" },
		{ "    qps: [4]\n    ramp_up: {strategy: linear, start_rps: 1, end_rps: 8}\n",
		  "r.yml:7:14: serving[0].ramp_up: test 'serving_r': a ramp-up sets the request rate itself: leave qps at inf (got 4)" },
		{ "    ramp_up: {start_rps: 0, end_rps: 8}\n",
		  "r.yml:6:26: serving[0].ramp_up.start_rps: expected a positive whole number, got 0" },
	};
	/* clang-format on */
	static const char head[] = "serving:\n"
				   "  - name: serving_r\n"
				   "    model: m\n"
				   "    server:\n"
				   "      command: vllm serve {model} --port {port}\n";
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_plan plan = PG_PLAN_INIT;
	struct pg_dryrun_opts o = { NULL, NULL, 1 };
	struct pg_buf text = PG_BUF_INIT, out = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;

	pg_buf_printf(
		&text,
		"%s    num_prompts: 100\n    ramp_up: {strategy: exponential, start_rps: 1, end_rps: 32}\n",
		head);
	load_text(&s, text.ptr, "r.yml");
	pg_plan_build(&plan, &s);
	ck_assert_uint_eq(plan.n, 1);
	ck_assert_str_eq(plan.points[0].name, "serving_r_qps_inf");
	pg_dryrun_render(&out, &s, &plan, &o);
	ck_assert_msg(strstr(out.ptr,
			     "100 prompts, the rate ramping up (exponential) from 1 to 32 req/s, "
			     "burstiness 1 (Poisson), unbounded concurrency\n"),
		      "%s", out.ptr);
	pg_buf_reset(&out);
	pg_vllm_equivalent_command(&out, &plan.points[0], NULL, "results");
	ck_assert_msg(
		strstr(out.ptr,
		       " --request-rate inf --ramp-up-strategy exponential --ramp-up-start-rps 1 "
		       "--ramp-up-end-rps 32 "),
		"%s", out.ptr);
	pg_plan_release(&plan);
	pg_suite_release(&s);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pg_buf_reset(&text);
		pg_buf_printf(&text, "%s%s", head, bad[i][0]);
		ck_assert_int_eq(pg_config_load_text(&s, text.ptr, text.len, "r.yml", &err),
				 PG_ECONFIG);
		ck_assert_str_eq(err.msg, bad[i][1]);
		pg_suite_release(&s);
	}

	/* null in a test drops the ramp its defaults set */
	load_text(&s,
		  "defaults:\n"
		  "  ramp_up: {strategy: linear, start_rps: 1, end_rps: 8}\n"
		  "serving:\n"
		  "  - name: serving_a\n"
		  "    model: m\n"
		  "    server:\n"
		  "      command: vllm serve {model} --port {port}\n"
		  "  - name: serving_b\n"
		  "    model: m\n"
		  "    ramp_up: null\n"
		  "    qps: [4]\n"
		  "    server:\n"
		  "      command: vllm serve {model} --port {port}\n",
		  "r.yml");
	ck_assert_int_eq(s.tests[0].ramp_up.strategy, PG_RAMP_LINEAR);
	ck_assert_int_eq(s.tests[1].ramp_up.strategy, PG_RAMP_NONE);
	ck_assert_int_eq(s.tests[1].ramp_up.end_rps, 0);
	pg_suite_release(&s);

	/* vLLM's client_parameters, all three or an error */
	pg_buf_reset(&text);
	pg_buf_puts(
		&text,
		"[{\"test_name\": \"serving_v\", \"qps_list\": [\"inf\"], \"server_parameters\": {\"model\": \"m\"},"
		" \"client_parameters\": {\"model\": \"m\", \"ramp_up_strategy\": \"linear\","
		" \"ramp_up_start_rps\": 2, \"ramp_up_end_rps\": 40}}]");
	ck_assert_msg(pg_config_load_text(&s, text.ptr, text.len, "serving-tests.json", &err) == 0,
		      "%s", err.msg);
	ck_assert_int_eq(s.tests[0].ramp_up.strategy, PG_RAMP_LINEAR);
	ck_assert_int_eq(s.tests[0].ramp_up.start_rps, 2);
	ck_assert_int_eq(s.tests[0].ramp_up.end_rps, 40);
	ck_assert_uint_eq(s.warnings.n, 0);
	pg_suite_release(&s);
	pg_buf_reset(&text);
	pg_buf_puts(
		&text,
		"[{\"test_name\": \"serving_v\", \"qps_list\": [1], \"server_parameters\": {\"model\": \"m\"},"
		" \"client_parameters\": {\"model\": \"m\", \"ramp_up_strategy\": \"linear\","
		" \"ramp_up_start_rps\": 2, \"ramp_up_end_rps\": 40}}]");
	ck_assert_int_eq(pg_config_load_text(&s, text.ptr, text.len, "serving-tests.json", &err),
			 PG_ECONFIG);
	ck_assert_str_eq(
		err.msg,
		"serving-tests.json:1:139: [0].client_parameters.ramp_up_strategy: a ramp-up sets the request rate "
		"itself: leave qps at inf (got 1)");
	pg_suite_release(&s);
	pg_buf_release(&text);
	pg_buf_release(&out);
}
END_TEST

/* Probe until done against a server whose capacity is `cap`: the walk's
 * probes, written to seen[], and its answer. */
static size_t walk(struct pg_sla_walk *w, long cap, long *seen)
{
	size_t n = 0;

	for (long c; (c = pg_sla_next(w)) > 0;) {
		seen[n++] = c;
		pg_sla_feed(w, c, c <= cap);
	}
	return n;
}

/* vLLM's adaptive concurrency search, step by step: bisect between the
 * last static pass and the first static fail; double beyond the static
 * points when all pass, up to the cap; bisect down when none passes;
 * never more than max_probes; unbounded points ignored. */
START_TEST(sla_search_walk)
{
	struct pg_sla_search cfg = { true, 3000, 100, 8, 1024 };
	struct pg_sla_walk w;
	long seen[16];

	{
		const long conc[] = { 4, 16, 64 };
		const bool pass[] = { true, true, false };
		const long want[] = { 40, 28, 34, 31, 29, 30 };
		pg_sla_start(&w, &cfg, conc, pass, 3);
		ck_assert_int_eq(w.static_last_pass, 16);
		ck_assert_int_eq(w.static_first_fail, 64);
		ck_assert_uint_eq(walk(&w, 30, seen), 6);
		for (size_t i = 0; i < 6; i++)
			ck_assert_int_eq(seen[i], want[i]);
		ck_assert_int_eq(w.last_pass, 30);
		ck_assert_int_eq(w.first_fail, 31);
	}
	{
		/* all pass: 4 8 16 32 64 128, then bisect 96 112; 8 probes */
		const long conc[] = { 0, 1, 2 };
		const bool pass[] = { false, true, true };
		const long want[] = { 4, 8, 16, 32, 64, 128, 96, 112 };
		pg_sla_start(&w, &cfg, conc, pass, 3);
		ck_assert_int_eq(w.static_first_fail, 0); /* the unbounded point does not count */
		ck_assert_uint_eq(walk(&w, 100, seen), 8);
		for (size_t i = 0; i < 8; i++)
			ck_assert_int_eq(seen[i], want[i]);
		ck_assert_int_eq(w.last_pass, 96);
		ck_assert_int_eq(w.first_fail, 112);
	}
	{
		/* none passes: bisect down from the first failure */
		const long conc[] = { 8 };
		const bool pass[] = { false };
		pg_sla_start(&w, &cfg, conc, pass, 1);
		ck_assert_uint_eq(walk(&w, 2, seen), 3);
		ck_assert_int_eq(seen[0], 4);
		ck_assert_int_eq(seen[1], 2);
		ck_assert_int_eq(seen[2], 3);
		ck_assert_int_eq(w.last_pass, 2);
		ck_assert_int_eq(w.first_fail, 3);
	}
	{
		/* the cap ends the doubling; a pass above a failure is noise */
		const long conc[] = { 16, 32, 8 };
		const bool pass[] = { true, true, true };
		cfg.max_concurrency = 100;
		pg_sla_start(&w, &cfg, conc, pass, 3);
		ck_assert_uint_eq(walk(&w, 1000, seen), 2);
		ck_assert_int_eq(seen[0], 64);
		ck_assert_int_eq(seen[1], 100);
		ck_assert_int_eq(w.last_pass, 100);
		ck_assert_int_eq(w.first_fail, 0);

		const long conc2[] = { 4, 8, 16 };
		const bool pass2[] = { true, false, true };
		pg_sla_start(&w, &cfg, conc2, pass2, 3);
		ck_assert_int_eq(w.static_last_pass, 4);
		ck_assert_int_eq(w.static_first_fail, 8);
	}
}
END_TEST

/* sla_search in a suite (true, a mapping, null) and from vLLM's driver
 * environment; a test without a bounded concurrency cannot search. */
START_TEST(sla_search_config)
{
	static const char head[] = "serving:\n"
				   "  - name: serving_s\n"
				   "    model: m\n"
				   "    server:\n"
				   "      command: vllm serve {model} --port {port}\n";
	static const char vllm[] =
		"[{\"test_name\": \"serving_v\", \"qps_list\": [\"inf\"], \"server_parameters\": {\"model\": \"m\"},"
		" \"client_parameters\": {\"model\": \"m\"}}]";
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_plan plan = PG_PLAN_INIT;
	struct pg_dryrun_opts o = { NULL, NULL, 1 };
	struct pg_buf text = PG_BUF_INIT, out = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;

	pg_buf_printf(
		&text,
		"%s    max_concurrency: [8, 32]\n    sla_search: {ttft_ms: 500, max_probes: 4}\n",
		head);
	load_text(&s, text.ptr, "s.yml");
	ck_assert(s.tests[0].sla_search.enabled);
	ck_assert(s.tests[0].sla_search.ttft_ms == 500 && s.tests[0].sla_search.tpot_ms == 100);
	ck_assert_int_eq(s.tests[0].sla_search.max_probes, 4);
	ck_assert_int_eq(s.tests[0].sla_search.max_concurrency, 1024);
	pg_plan_build(&plan, &s);
	o.total_points = plan.n;
	pg_dryrun_render(&out, &s, &plan, &o);
	ck_assert_msg(
		strstr(out.ptr,
		       "  sla search after this rate's last concurrency point: the largest "
		       "concurrency with p99 TTFT <= 500 ms and p99 TPOT <= 100 ms, at most 4 "
		       "probes up to 1024\n"),
		"%s", out.ptr);
	pg_plan_release(&plan);
	pg_suite_release(&s);

	pg_buf_reset(&text);
	pg_buf_printf(&text, "%s    max_concurrency: [8]\n    sla_search: true\n", head);
	load_text(&s, text.ptr, "s.yml");
	ck_assert(s.tests[0].sla_search.enabled && s.tests[0].sla_search.ttft_ms == 3000);
	pg_suite_release(&s);

	pg_buf_reset(&text);
	pg_buf_printf(&text, "%s    sla_search: {ttft_ms: 500}\n", head);
	ck_assert_int_eq(pg_config_load_text(&s, text.ptr, text.len, "s.yml", &err), PG_ECONFIG);
	ck_assert_str_eq(err.msg,
			 "s.yml:6:17: serving[0].sla_search: test 'serving_s': the search starts "
			 "from the test's max_concurrency points: give at least one (e.g. "
			 "max_concurrency: [16, 64])");
	pg_suite_release(&s);

	pg_buf_reset(&text);
	pg_buf_printf(&text, "%s    max_concurrency: [8]\n    sla_search: {ttft: 500}\n", head);
	ck_assert_int_eq(pg_config_load_text(&s, text.ptr, text.len, "s.yml", &err), PG_ECONFIG);
	ck_assert_str_eq(err.msg, "s.yml:7:18: serving[0].sla_search: unknown key 'ttft'");
	pg_suite_release(&s);

	setenv("ENABLE_ADAPTIVE_CONCURRENCY", "1", 1);
	setenv("SLA_TTFT_MS", "250", 1);
	setenv("ADAPTIVE_MAX_PROBES", "3", 1);
	ck_assert_msg(pg_config_load_text(&s, vllm, strlen(vllm), "serving-tests.json", &err) == 0,
		      "%s", err.msg);
	ck_assert(s.tests[0].sla_search.enabled && s.tests[0].sla_search.ttft_ms == 250);
	ck_assert_int_eq(s.tests[0].sla_search.max_probes, 3);
	pg_suite_release(&s);
	setenv("ADAPTIVE_MAX_PROBES", "3.5", 1);
	ck_assert_int_eq(pg_config_load_text(&s, vllm, strlen(vllm), "serving-tests.json", &err),
			 PG_ECONFIG);
	ck_assert_str_eq(
		err.msg,
		"environment variable ADAPTIVE_MAX_PROBES: expected a positive integer, got '3.5'");
	pg_suite_release(&s);
	unsetenv("ENABLE_ADAPTIVE_CONCURRENCY");
	unsetenv("SLA_TTFT_MS");
	unsetenv("ADAPTIVE_MAX_PROBES");
	pg_buf_release(&text);
	pg_buf_release(&out);
}
END_TEST

/* multi_turn: users x rounds requests per point, the settings in the
 * dry-run, production-stack's command as the equivalent, errors at the key. */
START_TEST(multi_turn_config)
{
	static const char head[] = "serving:\n"
				   "  - name: serving_s\n"
				   "    model: m\n"
				   "    server: {remote: 'http://127.0.0.1:9'}\n"
				   "    dataset: {name: multi_turn, users: 7, rounds: 4, "
				   "system_prompt_len: 50, user_context_len: 20, question_len: 9, "
				   "output_len: 12";
	static const char *const bad[][2] = {
		{ "}\n    qps: [2]\n    max_concurrency: [4]\n",
		  "r.yml:5:21: serving[0].dataset: test 'serving_s': multi_turn sends one turn "
		  "per user at a time (users bound the concurrency): drop max_concurrency" },
		{ ", think_time: 1}\n    qps: [2]\n",
		  "r.yml:5:21: serving[0].dataset: test 'serving_s': a think_time paces each user, "
		  "a qps the users together: give one (qps: inf with think_time)" },
		{ ", join_interval: -2}\n",
		  "r.yml:5:147: serving[0].dataset.join_interval: expected seconds >= 0, got -2" },
	};
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_plan plan = PG_PLAN_INIT;
	struct pg_dryrun_opts o = { NULL, NULL, 1 };
	struct pg_buf text = PG_BUF_INIT, out = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;

	pg_buf_printf(&text, "%s, think_time: 0.5}\n", head);
	load_text(&s, text.ptr, "r.yml");
	pg_plan_build(&plan, &s);
	ck_assert_uint_eq(plan.n, 1);
	ck_assert_int_eq(pg_point_num_prompts(&plan.points[0]), 28);
	pg_dryrun_render(&out, &s, &plan, &o);
	ck_assert_msg(strstr(out.ptr, "multi_turn, 7 users x 4 rounds, system prompt 50 + 9 per "
				      "question, 12 output tokens, 20 of each user's own context, "
				      "think time 0.5 s"),
		      "%s", out.ptr);
	ck_assert_msg(strstr(out.ptr, "28 turns, each user asks 0.5 s after its answer, never "
				      "before its previous answer has ended\n"),
		      "%s", out.ptr);
	pg_buf_reset(&out);
	pg_vllm_equivalent_command(&out, &plan.points[0], "http://h:1", "results");
	ck_assert_str_eq(out.ptr,
			 "python3 multi-round-qa.py --num-users 7 --num-rounds 4 --qps inf "
			 "--shared-system-prompt 50 --user-history-prompt 20 --answer-len 12 "
			 "--model m --base-url http://h:1/v1 --request-with-user-id");
	pg_plan_release(&plan);
	pg_suite_release(&s);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pg_buf_reset(&text);
		pg_buf_printf(&text, "%s%s", head, bad[i][0]);
		ck_assert_int_eq(pg_config_load_text(&s, text.ptr, text.len, "r.yml", &err),
				 PG_ECONFIG);
		ck_assert_str_eq(err.msg, bad[i][1]);
		pg_suite_release(&s);
	}
	pg_buf_reset(&text);
	pg_buf_puts(&text, "serving:\n"
			   "  - name: serving_s\n"
			   "    model: m\n"
			   "    server: {remote: 'http://127.0.0.1:9'}\n"
			   "    dataset: {name: multi_turn, users: 100000, rounds: 101}\n");
	ck_assert_int_eq(pg_config_load_text(&s, text.ptr, text.len, "r.yml", &err), PG_ECONFIG);
	ck_assert_str_eq(err.msg, "r.yml:5:21: serving[0].dataset: test 'serving_s': multi_turn of "
				  "100000 users x 101 rounds: at most 10,000,000 turns a point");
	pg_suite_release(&s);
	pg_buf_release(&text);
	pg_buf_release(&out);
}
END_TEST

static Suite *plan_suite(void)
{
	Suite *s = suite_create("plan");
	TCase *tc = tcase_create("plan");

	tcase_add_test(tc, filter_only_and_repeat);
	tcase_add_test(tc, shards);
	tcase_add_test(tc, point_variables);
	tcase_add_test(tc, secrets_are_redacted);
	tcase_add_test(tc, dryrun_suite_file);
	tcase_add_test(tc, dryrun_vllm_files);
	tcase_add_test(tc, dryrun_every_shape);
	tcase_add_test(tc, dryrun_deployment);
	tcase_add_test(tc, dryrun_time_estimates);
	tcase_add_test(tc, prompts_per_concurrency);
	tcase_add_test(tc, ramp_up);
	tcase_add_test(tc, sla_search_walk);
	tcase_add_test(tc, sla_search_config);
	tcase_add_test(tc, multi_turn_config);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(plan_suite());
}
