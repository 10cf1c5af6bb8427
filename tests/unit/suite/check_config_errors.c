/*
 * Bad configuration, the common case in CI: every fixture under
 * tests/data/config/ must fail with exactly this one line (file, line,
 * column, key path, what was expected, the nearest valid key) and
 * PG_ECONFIG (exit 2), leaving the suite empty.
 */
#include "testutil.h"

#include "base/error.h"
#include "suite/suite.h"
#include "suite/config_io.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* clang-format off */
static const struct {
	const char *file;
	const char *step;   /* --step, or NULL */
	const char *message;
} cases[] = {
	{ "api-key.yml", NULL,
	  "api-key.yml:8:16: serving[0].client.api_key: keys do not belong in a suite file: put it in an environment variable and name that with 'api_key_env'" },
	{ "bad-endpoint.yml", NULL,
	  "bad-endpoint.yml:7:24: serving[0].client.endpoint: expected an OpenAI path ending in /completions (/v1/completions or /v1/chat/completions), got '/generate_stream'" },
	{ "bad-placeholder.yml", NULL,
	  "bad-placeholder.yml:3:14: serving[0].server.command: unknown placeholder '{modle}' (did you mean '{model}'?)" },
	{ "bool-expected.yml", NULL,
	  "bool-expected.yml:8:19: serving[0].client.ignore_eos: expected true or false, got 'yes'" },
	{ "command-env-alone.yml", NULL,
	  "command-env-alone.yml:7:18: serving[0]: 'command_env' is for an external 'command', and this test has none (the server's environment is server.env)" },
	{ "command-without-result.yml", NULL,
	  "command-without-result.yml:4:14: latency[0].command: the command must write its result to {result} (e.g. --output-json {result})" },
	{ "comments-only.yml", NULL,
	  "comments-only.yml: the file is empty: expected a suite, a Buildkite pipeline or a vLLM *-tests.json file" },
	{ "concurrency-zero.yml", NULL,
	  "concurrency-zero.yml:7:27: serving[0].max_concurrency[1]: expected a positive whole number or null (unbounded), got 0" },
	{ "dashed-key.yml", NULL,
	  "dashed-key.yml:7:5: serving[0]: unknown key 'num-prompts' (did you mean 'num_prompts'?)" },
	{ "dataset-in-latency.yml", NULL,
	  "dataset-in-latency.yml:7:5: latency[0]: 'dataset' applies to throughput and serving tests only (latency prompts are random: set input_len and output_len)" },
	{ "deployment-and-command.yml", NULL,
	  "deployment-and-command.yml:7:9: serving[0].server.deployment: give either 'command' (one server) or 'deployment' (several roles), not both" },
	{ "deployment-no-command.yml", NULL,
	  "deployment-no-command.yml:7:11: serving[0].server.deployment.prefill: role 'prefill' has no command" },
	{ "deployment-no-front.yml", NULL,
	  "deployment-no-front.yml:6:9: serving[0].server.deployment: the deployment has no front role: add a 'proxy' (or 'router') role the load generator talks to" },
	{ "deployment-placeholder.yml", NULL,
	  "deployment-placeholder.yml:11:20: serving[0].server.deployment.proxy.command: unknown placeholder '{decode_url}' (did you mean '{decode_urls}'?)" },
	{ "deployment-proxy-replicas.yml", NULL,
	  "deployment-proxy-replicas.yml:10:21: serving[0].server.deployment.proxy.replicas: the 'proxy' role is the one address the load generator uses: 1 replica, got 2" },
	{ "deployment-role-key.yml", NULL,
	  "deployment-role-key.yml:8:11: serving[0].server.deployment.prefill: unknown key 'replica' (did you mean 'replicas'?)" },
	{ "deployment-role-name.yml", NULL,
	  "deployment-role-name.yml:6:9: serving[0].server.deployment: role 'Prefill-1': a role name starts with a lower-case letter" },
	{ "deployment-role-tp.yml", NULL,
	  "deployment-role-tp.yml:9:15: serving[0].server.deployment.decode.tp: at most 1024 GPUs per replica, got 9223372036854775807" },
	{ "deployment-too-many.yml", NULL,
	  "deployment-too-many.yml:6:9: serving[0].server.deployment: the deployment has 33 processes (replicas of every role): at most 32" },
	{ "deployment-var-replica.yml", NULL,
	  "deployment-var-replica.yml:6:7: serving[0].vars: 'replica' is set by the deployment at run time and cannot be a var" },
	{ "deployment-var-urls.yml", NULL,
	  "deployment-var-urls.yml:3:5: defaults.vars: 'decode_urls' is set by the deployment at run time and cannot be a var" },
	{ "duplicate-key.yml", NULL,
	  "duplicate-key.yml:9:5: serving[0]: key 'qps' given twice (first at line 7)" },
	{ "duplicate-name.yml", NULL,
	  "duplicate-name.yml:8:11: serving[0].name: duplicate test name 'bench_a' (first defined at duplicate-name.yml:5:5)" },
	{ "empty.yml", NULL,
	  "empty.yml: the file is empty: expected a suite, a Buildkite pipeline or a vLLM *-tests.json file" },
	{ "env-name.yml", NULL,
	  "env-name.yml:4:11: defaults.server.env: 'HF-TOKEN' is not a valid environment variable name" },
	{ "goodput-key.yml", NULL,
	  "goodput-key.yml:7:26: serving[0].goodput: unknown key 'tpt' (did you mean 'tpot'?)" },
	{ "gpu-list.yml", NULL,
	  "gpu-list.yml:4:6: gpu: expected a string, got a list" },
	{ "kind-mismatch.yml", NULL,
	  "kind-mismatch.yml:7:5: latency[0]: 'qps' applies to serving tests only" },
	{ "latency-tests-same-flag.json", NULL,
	  "latency-tests-same-flag.json:8:13: [0].parameters: 'num_iters' and 'num-iters' are the same flag: give it once" },
	{ "latency-tests-tp.json", NULL,
	  "latency-tests-tp.json:6:37: [0].parameters.tensor_parallel_size: expected a whole number >= 1, got 'one'" },
	{ "list-root.yml", NULL,
	  "list-root.yml:1:3: expected vLLM tests (objects with 'test_name') or Buildkite pipeline steps (a perfgate suite is a mapping: defaults, latency, throughput, serving), got 'serving_a'" },
	{ "missing-model.yml", NULL,
	  "missing-model.yml:5:5: serving[0]: test 'serving_a': missing required key 'model'" },
	{ "missing-name.yml", NULL,
	  "missing-name.yml:5:5: latency[0]: missing required key 'name'" },
	{ "name-in-defaults.yml", NULL,
	  "name-in-defaults.yml:2:9: defaults.name: a name cannot be a default: every test names itself" },
	{ "name-invalid.yml", NULL,
	  "name-invalid.yml:5:11: serving[0].name: 'serving/a' cannot name result files: use letters, digits, '_', '-' and '.'" },
	{ "negative-count.yml", NULL,
	  "negative-count.yml:7:18: serving[0].num_prompts: expected a positive whole number, got -5" },
	{ "no-server.yml", NULL,
	  "no-server.yml:2:5: serving[0]: test 'serving_a': nothing to run: give server.command, server.remote or command" },
	{ "no-tests.yml", NULL,
	  "no tests in no-tests.yml: nothing to run" },
	{ "not-json.json", NULL,
	  "not-json.json:2:35: not valid JSON: did not find expected node content" },
	{ "not-yaml.yml", NULL,
	  "not-yaml.yml:6:11: not valid YAML: mapping values are not allowed in this context" },
	{ "percentile-metrics.yml", NULL,
	  "percentile-metrics.yml:8:34: serving[0].client.percentile_metrics[1]: expected one of ttft, tpot, itl, e2el, client_queue_time, e2el_including_client_queue, got 'tpop' (did you mean 'tpot'?)" },
	{ "pipeline-bad-enum.yml", NULL,
	  "pipeline-bad-enum.yml:6:11: step 'perf-h100': option 'mode': expected 'run', 'report', 'gate', 'merge', 'pipeline' or 'binary', "
	  "got 'gating'" },
	{ "pipeline-bad-option.yml", NULL,
	  "pipeline-bad-option.yml:7:11: step 'perf-h100': unknown option 'thresold' (did you mean 'thresholds'?)" },
	{ "pipeline-bad-type.yml", NULL,
	  "pipeline-bad-type.yml:6:11: step 'perf-h100': option 'repeat': expected an integer >= 1, got 'three'" },
	{ "pipeline-inline-bad.yml", NULL,
	  "pipeline-inline-bad.yml:11:26: suites.serving[0].qps[1]: expected a number or 'inf', got 'fast'" },
	{ "pipeline-missing-suite.yml", NULL,
	  "pipeline-missing-suite.yml:5:19: suites: suite file 'does-not-exist.yml' not found" },
	{ "pipeline-no-step.yml", NULL,
	  "pipeline-no-step.yml: no step uses the perfgate plugin (a plugin whose source names perfgate, e.g. perfgate/perfgate#v" PERFGATE_VERSION ")" },
	{ "pipeline-no-suites.yml", NULL,
	  "pipeline-no-suites.yml:5:11: step 'perf-h100': option 'suites' is required (mode 'gate' runs suites)" },
	{ "pipeline-two-steps.yml", NULL,
	  "pipeline-two-steps.yml: 2 steps use the perfgate plugin ('perf-h100', 'perf-a100'): choose one with --step KEY" },
	{ "gpu-idle-negative.yml", NULL,
	  "gpu-idle-negative.yml:6:21: serving[0].server.gpu_idle_mib: expected MiB >= 0 (0: no wait), got -1" },
	{ "qps-duplicate.yml", NULL,
	  "qps-duplicate.yml:7:17: serving[0].qps[2]: 1 is already in the list (item 0)" },
	{ "qps-fast.yml", NULL,
	  "qps-fast.yml:7:14: serving[0].qps[1]: expected a number or 'inf', got 'fast'" },
	{ "qps-zero.yml", NULL,
	  "qps-zero.yml:7:11: serving[0].qps[0]: expected a request rate > 0 or 'inf', got 0" },
	{ "quoted-number.yml", NULL,
	  "quoted-number.yml:7:18: throughput[0].num_prompts: expected a positive whole number, got '200' (a quoted string: drop the quotes)" },
	{ "random-with-path.yml", NULL,
	  "random-with-path.yml:7:21: serving[0].dataset.path: the random dataset reads no file: set dataset.name to sharegpt or jsonl, or drop the path (path: null)" },
	{ "range-ratio.yml", NULL,
	  "range-ratio.yml:7:42: serving[0].dataset.range_ratio: expected a ratio in [0, 1), got 1.0" },
	{ "remote-and-command.yml", NULL,
	  "remote-and-command.yml:6:15: serving[0].server.remote: give either 'command' (perfgate starts the server) or 'remote' (it is already running), not both" },
	{ "result-in-server.yml", NULL,
	  "result-in-server.yml:5:16: serving[0].server.command: '{result}' is the result file of an external 'command'; a server command cannot use it" },
	{ "scalar-root.yml", NULL,
	  "scalar-root.yml:1:1: expected a suite (a mapping with latency, throughput or serving tests), a Buildkite pipeline or a vLLM *-tests.json file, got 'hello'" },
	{ "section-not-list.yml", NULL,
	  "section-not-list.yml:5:3: serving: expected a list of tests (each starting with '- '), got a mapping" },
	{ "server-scalar.yml", NULL,
	  "server-scalar.yml:4:13: serving[0].server: expected a mapping of server settings, got 'vllm serve m'" },
	{ "nightly-tests-dataset.json", NULL,
	  "nightly-tests-dataset.json:8:29: [0].common_parameters.dataset_name: the dataset name must be either 'sharegpt' or 'sonnet' (vLLM's nightly driver stops otherwise), got 'random'" },
	{ "serving-tests-bad-qps.json", NULL,
	  "serving-tests-bad-qps.json:4:25: [0].qps_list[1]: expected a number or 'inf', got 'fast'" },
	{ "serving-tests-dataset.json", NULL,
	  "serving-tests-dataset.json:2:3: [0]: client_parameters: dataset 'sonnet' needs dataset_path" },
	{ "serving-tests-no-model.json", NULL,
	  "serving-tests-no-model.json:7:5: tests[0].server_parameters: missing 'model'" },
	{ "serving-tests-prefix.json", NULL,
	  "serving-tests-prefix.json:3:18: [0].test_name: in a serving tests file, test_name must start with 'serving_' (vLLM's driver requires it), got 'latency_llama8B_tp1'" },
	{ "serving-tests-shape.json", NULL,
	  "serving-tests-shape.json:2:3: unknown key 'default' in a vLLM tests file (did you mean 'defaults'?)" },
	{ "serving-tests-typo.json", NULL,
	  "serving-tests-typo.json:4:5: [0]: unknown key 'qps_lists' (did you mean 'qps_list'?)" },
	{ "sharegpt-no-path.yml", NULL,
	  "sharegpt-no-path.yml:7:14: throughput[0].dataset: dataset 'sharegpt' needs a path to the file" },
	{ "string-number.yml", NULL,
	  "string-number.yml:7:18: serving[0].num_prompts: expected a positive whole number, got 'many'" },
	{ "tab-indent.yml", NULL,
	  "tab-indent.yml:3:1: not valid YAML: found a tab character that violates indentation" },
	{ "temperature-negative.yml", NULL,
	  "temperature-negative.yml:7:27: serving[0].client.temperature: expected a temperature >= 0, got -1" },
	{ "throughput-list.yml", NULL,
	  "throughput-list.yml:7:22: throughput[0].max_concurrency: a throughput test takes one max_concurrency, not a list" },
	{ "throughput-tests-no-params.json", NULL,
	  "throughput-tests-no-params.json:2:5: [0]: missing 'parameters'" },
	{ "tp-float.yml", NULL,
	  "tp-float.yml:7:9: latency[0].tp: expected a positive whole number, got 2.5" },
	{ "two-documents.yml", NULL,
	  "two-documents.yml:7:1: a second YAML document ('---'): put everything in one" },
	{ "unknown-dataset.yml", NULL,
	  "unknown-dataset.yml:8:13: serving[0].dataset.name: unknown dataset 'sharegtp' (did you mean 'sharegpt'?)" },
	{ "unknown-key.yml", NULL,
	  "unknown-key.yml:7:5: serving[0]: unknown key 'num_prompt' (did you mean 'num_prompts'?)" },
	{ "unknown-section.yml", NULL,
	  "unknown-section.yml:4:1: unknown section 'servng' (did you mean 'serving'?)" },
	{ "unterminated-quote.yml", NULL,
	  "unterminated-quote.yml:5:16: serving[0].server.command: command template 'vllm serve {model} --port {port} --chat-template 'x': unterminated single quote" },
	{ "vars-reserved.yml", NULL,
	  "vars-reserved.yml:7:12: serving[0].vars: 'model' is a built-in variable and cannot be redefined" },
	{ "vllm-key-in-suite.yml", NULL,
	  "vllm-key-in-suite.yml:7:5: serving[0]: unknown key 'qps_list' (perfgate calls it 'qps')" },
	{ "wrong-level.yml", NULL,
	  "wrong-level.yml:7:5: serving[0]: unknown key 'temperature' (it belongs under 'client')" },
	{ "zero-iterations.yml", NULL,
	  "zero-iterations.yml:7:17: latency[0].iterations: expected a positive whole number, got 0" },
	{ "pipeline-two-steps.yml", "perf-h10",
	  "pipeline-two-steps.yml: no perfgate step with key or label 'perf-h10' (did you mean 'perf-h100'?)" },
	{ "pipeline-two-steps.yml", "perf-a100",
	  "pipeline-two-steps.yml:13:19: suites: suite file 'suite.yml' not found" },
	{ "qps-fast.yml", "perf-h100",
	  "--step chooses a step of a Buildkite pipeline, and qps-fast.yml is not one" },
	{ "alias-bomb.yml", NULL,
	  "alias-bomb.yml:15:11: step 'perf': unknown option 'bomb'" },
	{ "does-not-exist.yml", NULL,
	  "does-not-exist.yml: No such file or directory" },
};
/* clang-format on */

#define N_CASES (sizeof(cases) / sizeof(cases[0]))

static void enter_fixtures(void)
{
	char *dir = tu_test_path("data/config");
	ck_assert_int_eq(chdir(dir), 0);
	free(dir);
}

START_TEST(bad_config_is_one_line_with_position)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_error err = PG_ERROR_INIT;
	const char *paths[] = { cases[_i].file };
	int rc;

	enter_fixtures();
	rc = pg_config_load(&s, paths, 1, cases[_i].step, &err);
	ck_assert_msg(rc == PG_ECONFIG, "%s: rc %d (%s)", cases[_i].file, rc, err.msg);
	ck_assert_int_eq(err.code, PG_ECONFIG);
	ck_assert_int_eq(pg_error_exit_code(err.code), 2);
	ck_assert_str_eq(err.msg, cases[_i].message);
	ck_assert_ptr_null(strchr(err.msg, '\n'));
	ck_assert_uint_eq(s.n_tests, 0);
	ck_assert_ptr_null(s.tests);
}
END_TEST

/* Several inputs: the errors that only exist between files. */
START_TEST(bad_input_combinations)
{
	/* clang-format off */
	static const struct {
		const char *a, *b, *message;
	} combos[] = {
		{ "pipeline-two-steps.yml", "qps-fast.yml",
		  "pipeline-two-steps.yml: a Buildkite pipeline cannot be used here: give it alone, "
		  "as the only input" },
		{ "qps-fast.yml", "qps-fast.yml",
		  "qps-fast.yml:7:14: serving[0].qps[1]: expected a number or 'inf', got 'fast'" },
	};
	/* clang-format on */

	enter_fixtures();
	for (size_t i = 0; i < sizeof(combos) / sizeof(combos[0]); i++) {
		struct pg_suite s = PG_SUITE_INIT;
		struct pg_error err = PG_ERROR_INIT;
		const char *paths[] = { combos[i].a, combos[i].b };

		ck_assert_int_eq(pg_config_load(&s, paths, 2, NULL, &err), PG_ECONFIG);
		ck_assert_str_eq(err.msg, combos[i].message);
	}
}
END_TEST

START_TEST(no_input_is_a_usage_error)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_error err = PG_ERROR_INIT;

	ck_assert_int_eq(pg_config_load(&s, NULL, 0, NULL, &err), PG_ECONFIG);
	ck_assert_str_eq(err.msg, "no input: give a suite file, a Buildkite pipeline or vLLM "
				  "*-tests.json files");
}
END_TEST

static Suite *config_errors_suite(void)
{
	Suite *s = suite_create("config_errors");
	TCase *tc = tcase_create("bad");

	tcase_add_loop_test(tc, bad_config_is_one_line_with_position, 0, (int)N_CASES);
	tcase_add_test(tc, bad_input_combinations);
	tcase_add_test(tc, no_input_is_a_usage_error);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(config_errors_suite());
}
