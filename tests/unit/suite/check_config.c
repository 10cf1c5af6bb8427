/* The perfgate suite format: every key lands in the model, defaults merge
 * the documented way, several files make one suite. */
#include "testutil.h"

#include "base/buf.h"

#include "base/error.h"
#include "suite/suite.h"
#include "suite/config_io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void load_ok(struct pg_suite *s, const char *yaml)
{
	struct pg_error err = PG_ERROR_INIT;
	int rc = pg_config_load_text(s, yaml, strlen(yaml), "inline.yml", &err);
	ck_assert_msg(rc == 0, "load failed: %s", err.msg);
}

static const char *load_fail(const char *yaml)
{
	static struct pg_error err;
	struct pg_suite s = PG_SUITE_INIT;

	pg_error_clear(&err);
	ck_assert_int_eq(pg_config_load_text(&s, yaml, strlen(yaml), "inline.yml", &err),
			 PG_ECONFIG);
	ck_assert_uint_eq(s.n_tests, 0);
	return err.msg;
}

static const struct pg_test *find(const struct pg_suite *s, const char *name)
{
	for (size_t i = 0; i < s->n_tests; i++)
		if (!strcmp(s->tests[i].name, name))
			return &s->tests[i];
	ck_abort_msg("no test %s", name);
	return NULL;
}

/* The suite of issue 2, as written there. */
static const char issue_suite[] =
	"defaults:\n"
	"  server:\n"
	"    command: vllm serve {model} --tensor-parallel-size {tp} --port {port} --disable-log-requests\n"
	"    env: {VLLM_USAGE_SOURCE: ci-test}\n"
	"    ready: /v1/models          # GET until HTTP 200\n"
	"    ready_timeout: 1200        # seconds\n"
	"  client:\n"
	"    endpoint: /v1/completions  # or /v1/chat/completions\n"
	"    temperature: 0\n"
	"    ignore_eos: true\n"
	"    seed: 0\n"
	"latency:\n"
	"  - name: latency_llama8B_tp1\n"
	"    model: meta-llama/Llama-3.1-8B-Instruct\n"
	"    tp: 1\n"
	"    input_len: 32\n"
	"    output_len: 128\n"
	"    batch_size: 8\n"
	"    warmup_iterations: 5\n"
	"    iterations: 15\n"
	"throughput:\n"
	"  - name: throughput_llama8B_tp1\n"
	"    model: meta-llama/Llama-3.1-8B-Instruct\n"
	"    dataset: {name: sharegpt, path: ShareGPT_V3_unfiltered_cleaned_split.json}\n"
	"    num_prompts: 200\n"
	"serving:\n"
	"  - name: serving_llama8B_tp1_sharegpt\n"
	"    model: meta-llama/Llama-3.1-8B-Instruct\n"
	"    qps: [1, 4, 16, inf]\n"
	"    max_concurrency: [null]    # or a list, e.g. [16, 64]\n"
	"    dataset: {name: sharegpt, path: ShareGPT_V3_unfiltered_cleaned_split.json}\n"
	"    num_prompts: 200\n"
	"    repeat: 1\n";

START_TEST(issue_example_loads)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_plan plan = PG_PLAN_INIT;
	const struct pg_test *t;

	load_ok(&s, issue_suite);
	ck_assert_uint_eq(s.n_tests, 3);
	ck_assert_str_eq(s.source, "inline.yml");
	ck_assert_uint_eq(s.warnings.n, 0);

	t = &s.tests[0];
	ck_assert_int_eq(t->kind, PG_SUITE_LATENCY);
	ck_assert_str_eq(t->name, "latency_llama8B_tp1");
	ck_assert_str_eq(t->model, "meta-llama/Llama-3.1-8B-Instruct");
	ck_assert_int_eq(t->tp, 1);
	ck_assert_int_eq(t->dataset.input_len, 32);
	ck_assert_int_eq(t->dataset.output_len, 128);
	ck_assert_int_eq(t->batch_size, 8);
	ck_assert_int_eq(t->warmup_iterations, 5);
	ck_assert_int_eq(t->iterations, 15);
	ck_assert_str_eq(t->server.command, "vllm serve {model} --tensor-parallel-size {tp} --port "
					    "{port} --disable-log-requests");
	ck_assert_str_eq(pg_kvlist_get(&t->server.env, "VLLM_USAGE_SOURCE"), "ci-test");
	ck_assert_str_eq(t->server.ready_path, "/v1/models");
	ck_assert(t->server.ready_timeout == 1200);
	ck_assert_str_eq(t->client.endpoint, "/v1/completions");
	ck_assert(t->client.temperature == 0);
	ck_assert(t->client.ignore_eos);
	ck_assert_uint_eq(t->client.seed, 0);
	ck_assert_str_eq(t->loc.file, "inline.yml");
	ck_assert_int_eq(t->loc.line, 13);
	ck_assert_int_eq(t->loc.column, 5);

	t = &s.tests[1];
	ck_assert_int_eq(t->kind, PG_SUITE_THROUGHPUT);
	ck_assert_int_eq(t->dataset.kind, PG_DATASET_SHAREGPT);
	ck_assert_str_eq(t->dataset.path, "ShareGPT_V3_unfiltered_cleaned_split.json");
	ck_assert_int_eq(t->dataset.output_len, 0); /* from the data, as vLLM */
	ck_assert_int_eq(t->num_prompts, 200);

	t = &s.tests[2];
	ck_assert_int_eq(t->kind, PG_SUITE_SERVING);
	ck_assert_uint_eq(t->n_qps, 4);
	ck_assert(t->qps[0] == 1 && t->qps[1] == 4 && t->qps[2] == 16 && isinf(t->qps[3]));
	ck_assert_uint_eq(t->n_max_concurrency, 1);
	ck_assert_int_eq(t->max_concurrency[0], 0);
	ck_assert(t->concurrency_in_name);
	ck_assert_int_eq(t->repeat, 1);

	pg_plan_build(&plan, &s);
	ck_assert_uint_eq(plan.n, 6);
	ck_assert_str_eq(plan.points[0].name, "latency_llama8B_tp1");
	ck_assert_str_eq(plan.points[1].name, "throughput_llama8B_tp1");
	/* [null]: unbounded, so no cap in the names (the point's identity) */
	ck_assert_str_eq(plan.points[2].name, "serving_llama8B_tp1_sharegpt_qps_1");
	ck_assert_str_eq(plan.points[5].name, "serving_llama8B_tp1_sharegpt_qps_inf");
	pg_plan_release(&plan);
	pg_suite_release(&s);
}
END_TEST

START_TEST(defaults_merge_deeply_and_the_test_wins)
{
	struct pg_suite s = PG_SUITE_INIT;
	const struct pg_test *a, *l;

	load_ok(&s,
		"defaults:\n"
		"  num_prompts: 50\n"
		"  batch_size: 4\n"
		"  qps: [2]\n"
		"  server:\n"
		"    command: serve {model} --port {port}\n"
		"    env: {A: 1, B: two}\n"
		"    stop_timeout: 5\n"
		"    gpu_idle_mib: 2000\n"
		"  client:\n"
		"    extra_body: {sampling: {top_p: 0.9}, x: 1}\n"
		"    headers: {X-Team: infra}\n"
		"  dataset: {name: random, input_len: 256, range_ratio: 0.25}\n"
		"  latency:\n"
		"    command: vllm bench latency --model {model} --batch-size {batch_size} --output-json {result}\n"
		"    command_env: {VLLM_LOGGING_LEVEL: WARNING}\n"
		"  serving:\n"
		"    burstiness: 0.5\n"
		"latency:\n"
		"  - name: latency_a\n"
		"    model: m\n"
		"serving:\n"
		"  - name: serving_a\n"
		"    model: m\n"
		"    server:\n"
		"      env: {B: three, C: 4}\n"
		"      gpu_idle_timeout: 60\n"
		"    client:\n"
		"      extra_body: {sampling: {top_k: 5}}\n"
		"      headers: {X-Run: nightly}\n"
		"    dataset: {output_len: 64}\n"
		"    qps: [1, 8]\n");

	a = find(&s, "serving_a");
	ck_assert_int_eq(a->num_prompts, 50);
	ck_assert_str_eq(a->server.command, "serve {model} --port {port}");
	ck_assert_uint_eq(a->server.env.n, 3);
	ck_assert_str_eq(pg_kvlist_get(&a->server.env, "A"), "1");
	ck_assert_str_eq(pg_kvlist_get(&a->server.env, "B"), "three");
	ck_assert_str_eq(pg_kvlist_get(&a->server.env, "C"), "4");
	ck_assert(a->server.stop_timeout == 5);
	ck_assert(a->server.gpu_idle_mib == 2000 && a->server.gpu_idle_timeout == 60);
	ck_assert(json_real_value(json_object_get(json_object_get(a->client.extra_body, "sampling"),
						  "top_p")) == 0.9);
	ck_assert_int_eq(json_integer_value(json_object_get(
				 json_object_get(a->client.extra_body, "sampling"), "top_k")),
			 5);
	ck_assert_int_eq(json_integer_value(json_object_get(a->client.extra_body, "x")), 1);
	ck_assert_str_eq(pg_kvlist_get(&a->client.headers, "X-Team"), "infra");
	ck_assert_str_eq(pg_kvlist_get(&a->client.headers, "X-Run"), "nightly");
	ck_assert_int_eq(a->dataset.input_len, 256);
	ck_assert_int_eq(a->dataset.output_len, 64);
	ck_assert(a->dataset.range_ratio == 0.25);
	ck_assert_uint_eq(a->n_qps, 2); /* lists replace */
	ck_assert(a->burstiness == 0.5);
	ck_assert(!a->command);

	/* latency: its kind defaults bring an external command, and the
	 * server every test inherits is dropped: vllm bench runs the engine */
	l = find(&s, "latency_a");
	ck_assert_int_eq(l->batch_size, 4);
	ck_assert_str_eq(l->command, "vllm bench latency --model {model} --batch-size {batch_size} "
				     "--output-json {result}");
	ck_assert_ptr_null(l->server.command);
	ck_assert_str_eq(pg_kvlist_get(&l->command_env, "VLLM_LOGGING_LEVEL"), "WARNING");
	ck_assert(l->burstiness == 1.0); /* serving defaults stay with serving */
	pg_suite_release(&s);
}
END_TEST

START_TEST(server_remote_and_command_choices)
{
	struct pg_suite s = PG_SUITE_INIT;
	const struct pg_test *t;

	load_ok(&s,
		"defaults:\n"
		"  server: {command: 'serve {model} --port {port}', shell: true}\n"
		"serving:\n"
		"  - name: serving_remote\n"
		"    model: m\n"
		"    server: {remote: 'http://127.0.0.1:8000/'}\n"
		"  - name: serving_own_client\n"
		"    model: m\n"
		"    server: {command: 'serve {model} --port {port}'}\n"
		"    command: bench --url {base_url} --host {host} --out {result} --dir {results_dir}\n"
		"    command_timeout: 60\n"
		"    command_shell: true\n"
		"  - name: serving_back_to_defaults\n"
		"    model: m\n"
		"    command: null\n");

	t = find(&s, "serving_remote");
	ck_assert_str_eq(t->server.remote, "http://127.0.0.1:8000");
	ck_assert_ptr_null(t->server.command);
	t = find(&s, "serving_own_client");
	ck_assert_str_eq(t->server.command, "serve {model} --port {port}");
	ck_assert(t->server.shell);
	ck_assert_ptr_nonnull(t->command);
	ck_assert(t->command_shell);
	ck_assert(t->command_timeout == 60);
	t = find(&s, "serving_back_to_defaults");
	ck_assert_ptr_null(t->command);
	ck_assert_ptr_nonnull(t->server.command);
	pg_suite_release(&s);
}
END_TEST

START_TEST(every_client_and_dataset_key)
{
	struct pg_suite s = PG_SUITE_INIT;
	const struct pg_test *t;

	/* a file dataset needs its file */
	ck_assert_str_eq(
		load_fail("defaults: {server: {command: 'serve {model} --port {port}'}}\n"
			  "throughput:\n"
			  "  - name: throughput_jsonl\n"
			  "    model: m\n"
			  "    dataset: jsonl\n"),
		"inline.yml:5:14: throughput[0].dataset: dataset 'jsonl' needs a path to the file");

	load_ok(&s,
		"defaults: {server: {command: 'serve {model} --port {port} --q {quant}'}}\n"
		"gpu: H100\n"
		"serving:\n"
		"  - name: serving_all\n"
		"    model: meta-llama/Llama-3.1-8B-Instruct\n"
		"    tp: 2\n"
		"    client:\n"
		"      endpoint: /v1/chat/completions\n"
		"      served_model: llama\n"
		"      temperature: 0.7\n"
		"      ignore_eos: false\n"
		"      seed: 42\n"
		"      api_key_env: OPENAI_API_KEY\n"
		"      timeout: 30.5\n"
		"      percentiles: [50, 90, 99.9]\n"
		"      percentile_metrics: [ttft, e2el]\n"
		"      warmups: 3\n"
		"      continuous_usage: true\n"
		"    dataset: {name: random, input_len: 128, output_len: 2048, range_ratio: 0.1, prefix_len: 16}\n"
		"    num_prompts: 500\n"
		"    qps: 4\n"
		"    max_concurrency: 16\n"
		"    burstiness: inf\n"
		"    goodput: {ttft: 500, tpot: 50, e2el: 10000}\n"
		"    repeat: 3\n"
		"    vars: {quant: fp8, max_len: 4096}\n"
		"throughput:\n"
		"  - name: throughput_jsonl_path\n"
		"    model: m\n"
		"    vars: {quant: none}\n"
		"    dataset: {name: jsonl, path: prompts.jsonl, output_len: 32}\n"
		"    max_concurrency: 8\n");
	ck_assert_str_eq(s.gpu, "H100");
	t = find(&s, "serving_all");
	ck_assert_int_eq(t->tp, 2);
	ck_assert_str_eq(t->client.endpoint, "/v1/chat/completions");
	ck_assert_str_eq(t->client.served_model, "llama");
	ck_assert(t->client.temperature == 0.7);
	ck_assert(!t->client.ignore_eos);
	ck_assert_uint_eq(t->client.seed, 42);
	ck_assert_str_eq(t->client.api_key_env, "OPENAI_API_KEY");
	ck_assert(t->client.timeout == 30.5);
	ck_assert_uint_eq(t->client.n_percentiles, 3);
	ck_assert(t->client.percentiles[2] == 99.9);
	ck_assert_uint_eq(t->client.percentile_metrics.n, 2);
	ck_assert_str_eq(t->client.percentile_metrics.v[1], "e2el");
	ck_assert_int_eq(t->client.num_warmups, 3);
	ck_assert(t->client.continuous_usage);
	ck_assert_int_eq(t->dataset.input_len, 128);
	ck_assert_int_eq(t->dataset.output_len, 2048);
	ck_assert(t->dataset.range_ratio == 0.1);
	ck_assert_int_eq(t->dataset.prefix_len, 16);
	ck_assert_int_eq(t->num_prompts, 500);
	ck_assert_uint_eq(t->n_qps, 1);
	ck_assert(t->qps[0] == 4);
	ck_assert_uint_eq(t->n_max_concurrency, 1);
	ck_assert_int_eq(t->max_concurrency[0], 16);
	ck_assert(t->concurrency_in_name);
	ck_assert(isinf(t->burstiness));
	ck_assert(t->goodput.ttft_ms == 500 && t->goodput.tpot_ms == 50 &&
		  t->goodput.e2el_ms == 10000);
	ck_assert_int_eq(t->repeat, 3);
	ck_assert_str_eq(pg_kvlist_get(&t->vars, "max_len"), "4096");

	t = find(&s, "throughput_jsonl_path");
	ck_assert_int_eq(t->dataset.kind, PG_DATASET_JSONL);
	ck_assert_str_eq(t->dataset.path, "prompts.jsonl");
	ck_assert_int_eq(t->dataset.output_len, 32);
	ck_assert_int_eq(t->throughput_max_concurrency, 8);
	pg_suite_release(&s);
}
END_TEST

START_TEST(concurrency_null_means_no_list)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_plan plan = PG_PLAN_INIT;

	load_ok(&s, "defaults:\n"
		    "  server: {command: 'serve {model} --port {port}'}\n"
		    "  max_concurrency: [16, 64]\n"
		    "serving:\n"
		    "  - name: serving_list\n"
		    "    model: m\n"
		    "    qps: [inf]\n"
		    "  - name: serving_plain\n"
		    "    model: m\n"
		    "    qps: [1]\n"
		    "    max_concurrency: null\n");
	pg_plan_build(&plan, &s);
	ck_assert_uint_eq(plan.n, 3);
	ck_assert_str_eq(plan.points[0].name, "serving_list_qps_inf_concurrency_16");
	ck_assert_str_eq(plan.points[1].name, "serving_list_qps_inf_concurrency_64");
	ck_assert_str_eq(plan.points[2].name, "serving_plain_qps_1");
	ck_assert_int_eq(plan.points[2].max_concurrency, 0);
	pg_plan_release(&plan);
	pg_suite_release(&s);
}
END_TEST

START_TEST(anchors_merge_keys_and_extension_fields)
{
	struct pg_suite s = PG_SUITE_INIT;
	const struct pg_test *t;

	load_ok(&s, "x-common: &common\n"
		    "  model: meta-llama/Llama-3.1-8B-Instruct\n"
		    "  num_prompts: 100\n"
		    "  server: {command: 'serve {model} --port {port}'}\n"
		    "serving:\n"
		    "  - <<: *common\n"
		    "    name: serving_a\n"
		    "    num_prompts: 7\n"
		    "  - <<: *common\n"
		    "    name: serving_b\n");
	t = find(&s, "serving_a");
	ck_assert_str_eq(t->model, "meta-llama/Llama-3.1-8B-Instruct");
	ck_assert_int_eq(t->num_prompts, 7); /* the mapping's own key wins over the merge */
	t = find(&s, "serving_b");
	ck_assert_int_eq(t->num_prompts, 100);
	pg_suite_release(&s);

	/* a mapping made only of a merge key (a fuzzer's find: the loader did
	 * pointer arithmetic on an empty list) */
	load_ok(&s, "x-common: &common\n"
		    "  name: serving_c\n"
		    "  model: m\n"
		    "  server: {command: 'serve {model} --port {port}'}\n"
		    "serving:\n"
		    "  - <<: *common\n");
	t = find(&s, "serving_c");
	ck_assert_str_eq(t->model, "m");
	pg_suite_release(&s);
}
END_TEST

START_TEST(json_is_yaml_too)
{
	struct pg_suite s = PG_SUITE_INIT;

	load_ok(&s,
		"{\"defaults\": {\"server\": {\"command\": \"serve {model} --port {port}\"}},\n"
		" \"serving\": [{\"name\": \"serving_a\", \"model\": \"m\", \"qps\": [1, \"inf\"]}]}\n");
	ck_assert_uint_eq(s.n_tests, 1);
	ck_assert(isinf(s.tests[0].qps[1]));
	pg_suite_release(&s);
}
END_TEST

START_TEST(template_placeholders_checked_at_load)
{
	struct pg_suite s = PG_SUITE_INIT;

	/* every built-in, user and runtime name is fine */
	load_ok(&s,
		"serving:\n"
		"  - name: serving_a\n"
		"    model: m\n"
		"    dataset: {name: sharegpt, path: sg.json}\n"
		"    vars: {quant: fp8}\n"
		"    server:\n"
		"      command: >-\n"
		"        serve {model} --tp {tp} --q {quant} --name {name} --data {dataset_path}\n"
		"        --in {input_len} --out {output_len} --n {num_prompts} --bs {batch_size}\n"
		"        --it {iterations} --w {warmup_iterations} --host {host} --port {port}\n"
		"        --url {base_url} --dir {results_dir} '{{literal}}'\n");
	pg_suite_release(&s);
	ck_assert_str_eq(
		load_fail(
			"serving:\n"
			"  - name: serving_a\n"
			"    model: m\n"
			"    server: {command: 'serve {model} --data {dataset_path} --port {port}'}\n"),
		"inline.yml:4:23: serving[0].server.command: uses {dataset_path} but the test "
		"has no dataset path");
	ck_assert_str_eq(
		load_fail("serving:\n"
			  "  - name: serving_a\n"
			  "    model: m\n"
			  "    server: {command: 'serve {model} --q {qunat} --port {port}'}\n"
			  "    vars: {quant: fp8}\n"),
		"inline.yml:4:23: serving[0].server.command: unknown placeholder '{qunat}' "
		"(did you mean '{quant}'?)");
	ck_assert_str_eq(
		load_fail("serving:\n"
			  "  - name: serving_a\n"
			  "    model: m\n"
			  "    server: {command: 'serve {model} --port {port} {zzzzzzzz}'}\n"),
		"inline.yml:4:23: serving[0].server.command: unknown placeholder '{zzzzzzzz}' "
		"(define it under 'vars')");
}
END_TEST

START_TEST(several_files_make_one_suite)
{
	char *dir = tu_mkdtemp();
	char *old = getcwd(NULL, 0);
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_error err = PG_ERROR_INIT;
	const char *paths[] = { "a.yml", "b.yml" };
	const char *clash[] = { "a.yml", "c.yml" };
	const char *gpus[] = { "a.yml", "d.yml" };

	ck_assert_int_eq(chdir(dir), 0);
	tu_write_file("a.yml", "gpu: H100\n"
			       "defaults: {server: {command: 'serve {model} --port {port}'}}\n"
			       "serving:\n  - {name: serving_a, model: m}\n");
	tu_write_file("b.yml", "defaults: {server: {command: 'serve {model} --port {port}'}}\n"
			       "latency:\n  - {name: latency_b, model: m}\n");
	tu_write_file("c.yml", "defaults: {server: {command: 'serve {model} --port {port}'}}\n"
			       "latency:\n  - {name: serving_a, model: m}\n");
	tu_write_file("d.yml", "gpu: A100\n"
			       "defaults: {server: {command: 'serve {model} --port {port}'}}\n"
			       "latency:\n  - {name: latency_d, model: m}\n");

	ck_assert_int_eq(pg_config_load(&s, paths, 2, NULL, &err), 0);
	ck_assert_uint_eq(s.n_tests, 2);
	ck_assert_str_eq(s.source, "a.yml, b.yml");
	ck_assert_str_eq(s.gpu, "H100");
	ck_assert_str_eq(s.tests[1].loc.file, "b.yml");
	pg_suite_release(&s);

	ck_assert_int_eq(pg_config_load(&s, clash, 2, NULL, &err), PG_ECONFIG);
	ck_assert_str_eq(err.msg, "c.yml:3:12: latency[0].name: duplicate test name 'serving_a' "
				  "(first defined at a.yml:4:5)");
	ck_assert_int_eq(pg_config_load(&s, gpus, 2, NULL, &err), PG_ECONFIG);
	ck_assert_str_eq(err.msg,
			 "d.yml:1:6: gpu: gpu 'A100' contradicts gpu 'H100' of another input");

	ck_assert_int_eq(chdir(old), 0);
	tu_rm_rf(dir);
	free(dir);
	free(old);
}
END_TEST

/* warmup: a number of requests, `repeat`, or null (the default), and the
 * default each kind of test gets; a number perfgate cannot send warns. */
START_TEST(warmup_key)
{
	static const char yaml[] =
		"defaults:\n"
		"  server: {command: 'vllm serve {model} --port {port}'}\n"
		"  warmup: 25\n"
		"latency:\n"
		"  - {name: latency_a, model: m}\n"
		"  - {name: latency_ext, model: m, warmup: 5,\n"
		"     command: 'vllm bench latency --output-json {result}'}\n"
		"throughput:\n"
		"  - {name: throughput_a, model: m, warmup: null}\n"
		"serving:\n"
		"  - {name: serving_a, model: m}\n"
		"  - {name: serving_b, model: m, warmup: 0}\n"
		"  - {name: serving_c, model: m, warmup: repeat}\n"
		"  - {name: serving_d, model: m, dataset: {name: multi_turn}, warmup: null}\n"
		"  - {name: serving_e, model: m, dataset: {name: multi_turn}, warmup: 3}\n"
		"startup:\n"
		"  - {name: startup_a, model: m}\n";
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_warmup w;
	char text[64];

	load_ok(&s, yaml);
	w = pg_test_warmup(find(&s, "latency_a"));
	ck_assert_int_eq(w.kind, PG_WARMUP_REQUESTS); /* the defaults' 25 */
	ck_assert_int_eq(w.requests, 25);
	ck_assert_int_eq(pg_test_warmup(find(&s, "latency_ext")).kind, PG_WARMUP_NONE);
	w = pg_test_warmup(find(&s, "throughput_a"));
	ck_assert_int_eq(w.kind, PG_WARMUP_REQUESTS);
	ck_assert_int_eq(w.requests, PG_WARMUP_DEFAULT_REQUESTS);
	ck_assert_str_eq(pg_warmup_text(text, sizeof(text), &w), "10 requests");
	ck_assert_int_eq(pg_test_warmup(find(&s, "serving_a")).requests, 25);
	ck_assert_int_eq(pg_test_warmup(find(&s, "serving_b")).kind, PG_WARMUP_NONE);
	w = pg_test_warmup(find(&s, "serving_c"));
	ck_assert_int_eq(w.kind, PG_WARMUP_REPEAT);
	ck_assert_str_eq(pg_warmup_text(text, sizeof(text), &w), "a whole run");
	ck_assert_int_eq(pg_test_warmup(find(&s, "serving_d")).kind, PG_WARMUP_NONE);
	ck_assert_int_eq(pg_test_warmup(find(&s, "serving_e")).kind, PG_WARMUP_NONE);
	ck_assert_int_eq(pg_test_warmup(find(&s, "startup_a")).kind, PG_WARMUP_NONE);
	ck_assert_uint_eq(s.warnings.n, 2);
	ck_assert_str_eq(
		s.warnings.v[0],
		"inline.yml:6:43: latency[1].warmup: test 'latency_ext': 5 warm-up requests "
		"are not sent: an external command sends its own requests (vllm bench serve "
		"--num-warmups warms up inside it); 'warmup: repeat' runs the point once "
		"unmeasured instead");
	ck_assert(strstr(s.warnings.v[1], "serving[4].warmup: test 'serving_e': 3 warm-up requests "
					  "are not sent: they would fill the prefix cache"));
	pg_suite_release(&s);

	/* latency tests warm up with their warmup_iterations by default */
	load_ok(&s, "latency: [{name: l, model: m, server: {command: 'x {port}'}}]\n");
	ck_assert_int_eq(pg_test_warmup(&s.tests[0]).kind, PG_WARMUP_NONE);
	pg_suite_release(&s);

	ck_assert_str_eq(
		load_fail(
			"serving: [{name: s, model: m, server: {command: 'x {port}'}, warmup: fast}]\n"),
		"inline.yml:1:70: serving[0].warmup: expected a number of warm-up requests (0 for "
		"none) or 'repeat', got 'fast'");
	ck_assert(strstr(load_fail("serving: [{name: s, model: m, server: {command: 'x {port}'}, "
				   "warmup: -1}]\n"),
			 "serving[0].warmup: expected a number of warm-up requests"));
	ck_assert(strstr(load_fail("startup: [{name: s, model: m, server: {command: 'x {port}'}, "
				   "warmup: 3}]\n"),
			 "startup[0]: 'warmup' applies to latency, throughput and serving tests"));
}
END_TEST

/* startup tests: their own keys and defaults (vllm bench startup's 3 cold,
 * 1 warm-up, 3 warm), a server they start, {start}, one point each. */
START_TEST(startup_tests)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_plan plan = PG_PLAN_INIT;
	const struct pg_test *t;
	const char *msg;

	load_ok(&s,
		"defaults:\n"
		"  server: {command: 'serve {model} --port {port} --seed {start}', ready: /health}\n"
		"  startup: {warm_starts: 5}\n"
		"  num_prompts: 10\n"
		"startup:\n"
		"  - name: startup_a\n"
		"    model: m\n"
		"  - name: startup_b\n"
		"    model: m\n"
		"    cold_starts: 0\n"
		"    warmup_starts: 2\n"
		"    first_token: false\n");
	t = find(&s, "startup_a");
	ck_assert_int_eq(t->kind, PG_SUITE_STARTUP);
	ck_assert_int_eq(t->cold_starts, 3);
	ck_assert_int_eq(t->warmup_starts, 1);
	ck_assert_int_eq(t->warm_starts, 5);
	ck_assert(t->first_token);
	ck_assert_str_eq(t->server.ready_path, "/health");
	t = find(&s, "startup_b");
	ck_assert_int_eq(t->cold_starts, 0);
	ck_assert_int_eq(t->warmup_starts, 2);
	ck_assert(!t->first_token);
	pg_plan_build(&plan, &s);
	ck_assert_uint_eq(plan.n, 2);
	ck_assert_str_eq(plan.points[0].name, "startup_a");
	pg_plan_release(&plan);
	pg_suite_release(&s);

	msg = load_fail("startup:\n  - {name: s, model: m, server: {remote: 'http://h:1'}}\n");
	ck_assert_msg(strstr(msg, "a startup test starts its server: give server.command"), "%s",
		      msg);
	msg = load_fail("startup:\n  - {name: s, model: m, server: {command: 'x {port}'},"
			" cold_starts: 0, warm_starts: 0}\n");
	ck_assert_msg(strstr(msg, "cold_starts and warm_starts are both 0"), "%s", msg);
	msg = load_fail("startup:\n  - {name: s, model: m, server: {command: 'x'}, qps: 1}\n");
	ck_assert_msg(strstr(msg, "'qps' applies to serving tests only"), "%s", msg);
	msg = load_fail(
		"serving:\n  - {name: s, model: m, server: {command: 'x'}, cold_starts: 1}\n");
	ck_assert_msg(strstr(msg, "'cold_starts' applies to startup tests only"), "%s", msg);
	msg = load_fail("startup:\n  - {name: s, model: m, server: {command: 'x'},"
			" cold_starts: -1}\n");
	ck_assert_msg(strstr(msg, "cold_starts"), "%s", msg);
	msg = load_fail("startups: []\n");
	ck_assert_msg(strstr(msg, "did you mean 'startup'"), "%s", msg);
}
END_TEST

/* server.deployment: roles in order with the front role last, their
 * defaults, the shape, and layers: a later layer's deployment replaces an
 * earlier one whole, a command or remote replaces an inherited deployment. */
START_TEST(deployment_roles)
{
	struct pg_suite s = PG_SUITE_INIT;
	const struct pg_test *t;
	struct pg_buf shape = PG_BUF_INIT;

	load_ok(&s, "defaults:\n"
		    "  model: m\n"
		    "  server:\n"
		    "    ready: /health\n"
		    "    deployment:\n"
		    "      router:\n"
		    "        command: route --port {port} --to {decode_urls} {prefill_ports}\n"
		    "      decode:\n"
		    "        command: serve --port {port} --replica {replica}\n"
		    "        replicas: 3\n"
		    "        tp: 2\n"
		    "        env: {KV_ROLE: consumer}\n"
		    "        ready: /ready\n"
		    "      prefill:\n"
		    "        command: serve --port {port}\n"
		    "        shell: true\n"
		    "serving:\n"
		    "  - name: inherits\n"
		    "  - name: replaces\n"
		    "    server:\n"
		    "      deployment:\n"
		    "        p1:\n"
		    "          command: serve --port {port}\n"
		    "        proxy:\n"
		    "          command: px --port {port} --p {p1_urls}\n"
		    "  - name: one_server\n"
		    "    server: {command: 'serve --port {port}'}\n"
		    "  - name: remote\n"
		    "    server: {remote: 'http://127.0.0.1:8000'}\n");

	t = find(&s, "inherits");
	ck_assert_uint_eq(t->server.n_roles, 3);
	ck_assert_str_eq(t->server.roles[0].name, "decode");
	ck_assert_int_eq(t->server.roles[0].replicas, 3);
	ck_assert_int_eq(t->server.roles[0].tp, 2);
	ck_assert_str_eq(pg_kvlist_get(&t->server.roles[0].env, "KV_ROLE"), "consumer");
	ck_assert_str_eq(t->server.roles[0].ready_path, "/ready");
	ck_assert(!t->server.roles[0].front);
	ck_assert_str_eq(t->server.roles[1].name, "prefill");
	ck_assert_int_eq(t->server.roles[1].replicas, 1);
	ck_assert_int_eq(t->server.roles[1].tp, 1);
	ck_assert(t->server.roles[1].shell);
	ck_assert_ptr_null(t->server.roles[1].ready_path);
	ck_assert_str_eq(t->server.roles[2].name, "router");
	ck_assert(t->server.roles[2].front);
	ck_assert_ptr_null(t->server.command);
	pg_deployment_shape(&shape, &t->server);
	ck_assert_str_eq(shape.ptr, "decode=3x2,prefill=1x1");

	t = find(&s, "replaces");
	ck_assert_uint_eq(t->server.n_roles, 2);
	ck_assert_str_eq(t->server.roles[0].name, "p1");
	ck_assert_str_eq(t->server.roles[1].name, "proxy");
	pg_buf_reset(&shape);
	pg_deployment_shape(&shape, &t->server);
	ck_assert_str_eq(shape.ptr, "p1=1x1");

	t = find(&s, "one_server");
	ck_assert_uint_eq(t->server.n_roles, 0);
	ck_assert_str_eq(t->server.command, "serve --port {port}");
	pg_buf_reset(&shape);
	pg_deployment_shape(&shape, &t->server);
	ck_assert_uint_eq(shape.len, 0);
	t = find(&s, "remote");
	ck_assert_uint_eq(t->server.n_roles, 0);
	ck_assert_str_eq(t->server.remote, "http://127.0.0.1:8000");

	/* role variables only in role commands */
	ck_assert_ptr_nonnull(
		strstr(load_fail("serving:\n"
				 "  - name: a\n"
				 "    model: m\n"
				 "    server: {command: 'serve --port {port} {replica}'}\n"),
		       "unknown placeholder '{replica}'"));
	/* not in startup tests */
	ck_assert_ptr_nonnull(strstr(load_fail("startup:\n"
					       "  - name: a\n"
					       "    model: m\n"
					       "    server:\n"
					       "      deployment:\n"
					       "        p: {command: x}\n"
					       "        proxy: {command: y}\n"),
				     "'deployment' applies to"));
	pg_buf_release(&shape);
	pg_suite_release(&s);
}
END_TEST

static Suite *config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("suite_file");

	tcase_add_test(tc, issue_example_loads);
	tcase_add_test(tc, defaults_merge_deeply_and_the_test_wins);
	tcase_add_test(tc, server_remote_and_command_choices);
	tcase_add_test(tc, every_client_and_dataset_key);
	tcase_add_test(tc, concurrency_null_means_no_list);
	tcase_add_test(tc, anchors_merge_keys_and_extension_fields);
	tcase_add_test(tc, json_is_yaml_too);
	tcase_add_test(tc, template_placeholders_checked_at_load);
	tcase_add_test(tc, several_files_make_one_suite);
	tcase_add_test(tc, startup_tests);
	tcase_add_test(tc, deployment_roles);
	tcase_add_test(tc, warmup_key);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(config_suite());
}
