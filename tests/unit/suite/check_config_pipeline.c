/* A Buildkite pipeline as input: the perfgate steps are found wherever and
 * however the plugin is written, and the chosen step's options and suites
 * are what `perfgate run pipeline.yml --step KEY` runs. */
#include "testutil.h"

#include "base/error.h"
#include "buildkite/plugin_config.h"
#include "suite/suite.h"
#include "suite/config_io.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STEP(key) (&(struct pg_config_select){ (key), NULL })

static void enter(const char *rel)
{
	char *dir = tu_test_path(rel);
	ck_assert_int_eq(chdir(dir), 0);
	free(dir);
}

START_TEST(step_by_key_with_options)
{
	const char *paths[] = { "pipeline.yml" };
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_config_step step;
	struct pg_error err = PG_ERROR_INIT;
	const struct pg_plugin_config *pc = &step.plugin;

	enter("data/pipeline");
	ck_assert_msg(pg_config_load_step(&s, &step, paths, 1, STEP("perf-h100"), &err) == 0, "%s",
		      err.msg);
	ck_assert(step.from_pipeline);
	ck_assert_str_eq(step.file, "pipeline.yml");
	ck_assert_str_eq(step.name, "perf-h100");
	ck_assert_str_eq(s.source, "pipeline.yml, step 'perf-h100'");
	ck_assert_uint_eq(s.n_tests, 3);
	ck_assert_str_eq(s.tests[0].loc.file, "suites/gpu.yml");

	ck_assert_str_eq(pc->gpu, "H100");
	ck_assert_str_eq(pc->filter, "_tp1");
	ck_assert_int_eq(pc->only, PG_SUITE_SERVING);
	ck_assert_int_eq(pc->repeat, 3);
	ck_assert_str_eq(pc->results_dir, "results/h100");
	ck_assert_int_eq(pc->annotate, PG_ANNOTATE_ON_CHANGE);
	ck_assert_uint_eq(pc->only_on_labels.n, 2);
	ck_assert_str_eq(pc->only_on_labels.v[1], "perf-full");
	ck_assert_int_eq(pc->mode, PG_MODE_GATE);
	ck_assert_uint_eq(pc->suites.paths.n, 1);
	ck_assert_str_eq(pc->suites.paths.v[0], "suites/gpu.yml");
	pg_suite_release(&s);
	pg_config_step_release(&step);
}
END_TEST

START_TEST(full_url_source_with_a_list_of_vllm_files)
{
	const char *paths[] = { "pipeline.yml" };
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_config_step step;
	struct pg_error err = PG_ERROR_INIT;

	enter("data/pipeline");
	ck_assert_msg(pg_config_load_step(&s, &step, paths, 1, STEP("perf-a100"), &err) == 0, "%s",
		      err.msg);
	ck_assert_int_eq(step.plugin.mode, PG_MODE_RUN);
	ck_assert_uint_eq(s.n_tests, 3 + 4);
	ck_assert_str_eq(s.tests[0].loc.file, "../vllm/latency-tests.json");
	ck_assert_uint_eq(s.warnings.n, 2);
	pg_suite_release(&s);
	pg_config_step_release(&step);
}
END_TEST

START_TEST(legacy_map_vendored_plugin_by_label_inline_suite)
{
	const char *paths[] = { "pipeline.yml" };
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_config_step step;
	struct pg_error err = PG_ERROR_INIT;

	enter("data/pipeline");
	ck_assert_msg(
		pg_config_load_step(&s, &step, paths, 1, STEP("perf on a small model"), &err) == 0,
		"%s", err.msg);
	ck_assert_str_eq(step.name, "perf on a small model");
	ck_assert_uint_eq(s.n_tests, 1);
	ck_assert_str_eq(s.tests[0].name, "serving_opt125m_random");
	ck_assert_str_eq(s.tests[0].loc.file, "pipeline.yml");
	ck_assert_int_eq(s.tests[0].loc.line, 53);
	pg_suite_release(&s);
	pg_config_step_release(&step);
}
END_TEST

START_TEST(suite_path_falls_back_to_the_pipeline_directory)
{
	char *pipeline = tu_test_path("data/pipeline/pipeline.yml");
	char *tmp = tu_mkdtemp();
	const char *paths[] = { pipeline };
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_config_step step;
	struct pg_error err = PG_ERROR_INIT;

	/* from elsewhere: suites/gpu.yml is not in the current directory */
	ck_assert_int_eq(chdir(tmp), 0);
	ck_assert_msg(pg_config_load_step(&s, &step, paths, 1, STEP("perf-matrix"), &err) == 0,
		      "%s", err.msg);
	ck_assert_uint_eq(s.n_tests, 3);
	ck_assert(pg_str_has_suffix(s.tests[0].loc.file, "data/pipeline/suites/gpu.yml"));
	/* a matrix value is Buildkite's to fill: detected instead, and said so */
	ck_assert_str_eq(step.plugin.gpu, "auto");
	ck_assert_uint_eq(s.warnings.n, 1);
	ck_assert(strstr(s.warnings.v[0], "pipeline.yml:66:16: step 'perf-matrix': gpu "
					  "'{{matrix.gpu}}' is filled in by Buildkite"));
	pg_suite_release(&s);
	pg_config_step_release(&step);

	/* the current directory (the repository checkout) wins */
	tu_write_file("pipeline.yml", "steps:\n"
				      "  - key: perf\n"
				      "    plugins:\n"
				      "      - perfgate#v1:\n"
				      "          suites: here.yml\n");
	tu_write_file("here.yml", "defaults: {server: {command: 'serve {model} --port {port}'}}\n"
				  "latency:\n  - {name: latency_here, model: m}\n");
	paths[0] = "pipeline.yml";
	ck_assert_msg(pg_config_load_step(&s, &step, paths, 1, NULL, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(s.tests[0].name, "latency_here");
	ck_assert_str_eq(step.name, "perf");
	pg_suite_release(&s);
	pg_config_step_release(&step);

	tu_rm_rf(tmp);
	free(tmp);
	free(pipeline);
}
END_TEST

START_TEST(pipeline_as_a_bare_list_of_steps)
{
	char *tmp = tu_mkdtemp();
	const char *paths[] = { "steps.yml" };
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_error err = PG_ERROR_INIT;

	ck_assert_int_eq(chdir(tmp), 0);
	tu_write_file("steps.yml",
		      "- command: make\n"
		      "- wait\n"
		      "- label: perf\n"
		      "  plugins:\n"
		      "    - ssh://git@github.com/acme/perfgate-buildkite-plugin.git#main:\n"
		      "        suites:\n"
		      "          defaults: {server: {command: 'serve {model} --port {port}'}}\n"
		      "          latency: [{name: latency_a, model: m}]\n");
	ck_assert_msg(pg_config_load(&s, paths, 1, NULL, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(s.n_tests, 1);
	ck_assert_str_eq(s.source, "steps.yml, step 'perf'");
	pg_suite_release(&s);

	/* a plugin with no configuration at all */
	tu_write_file("steps.yml", "steps:\n  - label: perf\n    plugins: [acme/perfgate#v1]\n");
	ck_assert_int_eq(pg_config_load(&s, paths, 1, NULL, &err), PG_ECONFIG);
	ck_assert_str_eq(err.msg, "steps.yml:2:5: step 'perf': option 'suites' is required (mode "
				  "'gate' runs suites)");
	tu_rm_rf(tmp);
	free(tmp);
}
END_TEST

/* In CI the step's options arrive as BUILDKITE_PLUGIN_CONFIGURATION JSON. */
START_TEST(plugin_configuration_json)
{
	static const char good[] =
		"{\"suites\": {\"defaults\": {\"server\": {\"command\": \"serve {model} --port {port}\"}},"
		" \"serving\": [{\"name\": \"serving_a\", \"model\": \"m\", \"qps\": [1, \"inf\"]},"
		"               {\"name\": \"serving_b\", \"model\": \"m\"}]}}";
	static const char bad[] =
		"{\"suites\": {\"defaults\": {\"server\": {\"command\": \"serve {model} --port {port}\"}},"
		" \"serving\": [{\"name\": \"serving_a\", \"model\": \"m\", \"qps\": [1, \"fast\"]}]}}";
	static const char dup[] =
		"{\"suites\": {\"defaults\": {\"server\": {\"command\": \"serve {model} --port {port}\"}},"
		" \"serving\": [{\"name\": \"serving_a\", \"model\": \"m\"}, {\"name\": \"serving_a\", \"model\": \"m\"}]}}";
	static const char paths[] =
		"{\"suites\": [\"latency-tests.json\", \"throughput-tests.json\"]}";
	struct pg_plugin_config pc;
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_error err = PG_ERROR_INIT;
	json_t *cfg;

	cfg = json_loads(good, 0, NULL);
	ck_assert_int_eq(pg_plugin_config_parse(&pc, cfg, "perf", &err), 0);
	ck_assert_msg(pg_config_load_plugin(&s, &pc, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(s.n_tests, 2);
	ck_assert_str_eq(s.source, "BUILDKITE_PLUGIN_CONFIGURATION");
	ck_assert_str_eq(s.tests[0].loc.file, "BUILDKITE_PLUGIN_CONFIGURATION");
	ck_assert_int_eq(s.tests[0].loc.line, 0);
	pg_suite_release(&s);
	pg_plugin_config_release(&pc);
	json_decref(cfg);

	cfg = json_loads(bad, 0, NULL);
	ck_assert_int_eq(pg_plugin_config_parse(&pc, cfg, "perf", &err), 0);
	ck_assert_int_eq(pg_config_load_plugin(&s, &pc, &err), PG_ECONFIG);
	ck_assert_str_eq(err.msg,
			 "BUILDKITE_PLUGIN_CONFIGURATION: suites.serving[0].qps[1]: expected "
			 "a number or 'inf', got 'fast'");
	pg_plugin_config_release(&pc);
	json_decref(cfg);

	cfg = json_loads(dup, 0, NULL);
	ck_assert_int_eq(pg_plugin_config_parse(&pc, cfg, "perf", &err), 0);
	ck_assert_int_eq(pg_config_load_plugin(&s, &pc, &err), PG_ECONFIG);
	ck_assert_str_eq(err.msg,
			 "BUILDKITE_PLUGIN_CONFIGURATION: suites.serving[1].name: duplicate "
			 "test name 'serving_a' (first defined in BUILDKITE_PLUGIN_CONFIGURATION)");
	pg_plugin_config_release(&pc);
	json_decref(cfg);

	enter("data/vllm");
	cfg = json_loads(paths, 0, NULL);
	ck_assert_int_eq(pg_plugin_config_parse(&pc, cfg, "perf", &err), 0);
	ck_assert_msg(pg_config_load_plugin(&s, &pc, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(s.n_tests, 5);
	pg_suite_release(&s);
	pg_plugin_config_release(&pc);
	json_decref(cfg);
}
END_TEST

/* What Buildkite does to the step's strings before the job sees them:
 * $VARIABLES at upload (the pipeline's env: first), {{matrix}} per job. */
START_TEST(variables_and_matrix_values_as_buildkite_fills_them)
{
	char *tmp = tu_mkdtemp();
	const char *paths[] = { "pipeline.yml" };
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_config_step step;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_strv matrix = PG_STRV_INIT;
	struct pg_config_select sel = { "perf", &matrix };

	ck_assert_int_eq(chdir(tmp), 0);
	setenv("PG_TEST_SUITE", "from-env.yml", 1);
	setenv("PG_TEST_MODEL", "overridden by the pipeline's env", 1);
	unsetenv("PG_TEST_UNSET");
	tu_write_file("suite-a.yml",
		      "defaults: {server: {command: 'serve {model} --port {port}'}}\n"
		      "serving:\n  - {name: serving_a, model: m, qps: [1, 2]}\n"
		      "  - {name: serving_b, model: m}\n");
	tu_write_file("from-env.yml",
		      "defaults: {server: {command: 'serve {model} --port {port}'}}\n"
		      "latency: [{name: latency_env, model: m}]\n");
	tu_write_file("pipeline.yml", "env:\n"
				      "  SUITE_DIR: .\n"
				      "  PG_TEST_MODEL: facebook/opt-125m\n"
				      "  MODEL_SHORT: ${PG_TEST_MODEL:9}\n"
				      "steps:\n"
				      "  - key: perf\n"
				      "    matrix:\n"
				      "      setup: {gpu: [H100, L40S], suite: [a, b]}\n"
				      "      adjustments:\n"
				      "        - with: {gpu: A100, suite: a}\n"
				      "    plugins:\n"
				      "      - acme/perfgate#v1.0.0:\n"
				      "          suites: $SUITE_DIR/suite-{{ matrix.suite }}.yml\n"
				      "          gpu: \"{{matrix.gpu}}\"\n"
				      "          filter: ${PG_TEST_UNSET:-serving_a}\n"
				      "          results-dir: results/${MODEL_SHORT}/$$HOME\n"
				      "          repeat: ${PG_TEST_REPEAT-2}\n");

	/* the matrix value chosen, the GPU from it */
	pg_strv_push(&matrix, "suite=a");
	pg_strv_push(&matrix, "gpu=A100");
	ck_assert_msg(pg_config_load_step(&s, &step, paths, 1, &sel, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(s.n_tests, 2);
	ck_assert_str_eq(s.tests[0].loc.file, "./suite-a.yml");
	ck_assert_str_eq(step.plugin.gpu, "A100");
	ck_assert_str_eq(step.plugin.filter, "serving_a");
	ck_assert_str_eq(step.plugin.results_dir, "results/opt-125m/$HOME");
	ck_assert_int_eq(step.plugin.repeat, 2);
	ck_assert_uint_eq(s.warnings.n, 0);
	pg_suite_release(&s);
	pg_config_step_release(&step);
	pg_strv_release(&matrix);

	/* no value for a matrix reference: the choices, and how to give one */
	ck_assert_int_eq(pg_config_load_step(&s, &step, paths, 1, &sel, &err), PG_ECONFIG);
	ck_assert_str_eq(err.msg,
			 "pipeline.yml:13:19: step 'perf': {{ matrix.suite }} is filled in "
			 "by Buildkite for each job of the step's matrix (suite: a, b); "
			 "choose one with --matrix suite=VALUE");
	pg_config_step_release(&step);

	/* a value the matrix does not have */
	pg_strv_push(&matrix, "suite=c");
	ck_assert_int_eq(pg_config_load_step(&s, &step, paths, 1, &sel, &err), PG_ECONFIG);
	ck_assert_str_eq(err.msg, "--matrix suite=c: not a job of step 'perf' (suite: a, b)");
	pg_config_step_release(&step);
	pg_strv_release(&matrix);
	pg_strv_push(&matrix, "model=x");
	ck_assert_int_eq(pg_config_load_step(&s, &step, paths, 1, &sel, &err), PG_ECONFIG);
	ck_assert_str_eq(err.msg, "--matrix model=x: the matrix of step 'perf' has no 'model'");
	pg_config_step_release(&step);
	pg_strv_release(&matrix);

	/* ${VAR?message} of an unset variable stops the upload in Buildkite */
	tu_write_file("pipeline.yml",
		      "steps:\n"
		      "  - key: perf\n"
		      "    plugins:\n"
		      "      - acme/perfgate#v1.0.0:\n"
		      "          suites: $PG_TEST_SUITE\n"
		      "          results-dir: \"${PG_TEST_UNSET?set it to the results dir}\"\n");
	ck_assert_int_eq(pg_config_load_step(&s, &step, paths, 1, &sel, &err), PG_ECONFIG);
	ck_assert_str_eq(err.msg, "pipeline.yml:6:24: step 'perf': PG_TEST_UNSET: set it to the "
				  "results dir");
	pg_config_step_release(&step);
	setenv("PG_TEST_UNSET", "out", 1);
	ck_assert_msg(pg_config_load_step(&s, &step, paths, 1, &sel, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(s.tests[0].name, "latency_env");
	ck_assert_str_eq(step.plugin.results_dir, "out");
	pg_suite_release(&s);
	pg_config_step_release(&step);

	/* --matrix on a step without one */
	pg_strv_push(&matrix, "H100");
	ck_assert_int_eq(pg_config_load_step(&s, &step, paths, 1, &sel, &err), PG_ECONFIG);
	ck_assert_str_eq(err.msg, "--matrix: step 'perf' of pipeline.yml has no matrix");
	pg_config_step_release(&step);
	pg_strv_release(&matrix);

	unsetenv("PG_TEST_SUITE");
	unsetenv("PG_TEST_MODEL");
	unsetenv("PG_TEST_UNSET");
	tu_rm_rf(tmp);
	free(tmp);
}
END_TEST

static Suite *pipeline_suite(void)
{
	Suite *s = suite_create("config_pipeline");
	TCase *tc = tcase_create("pipeline");

	tcase_add_test(tc, step_by_key_with_options);
	tcase_add_test(tc, full_url_source_with_a_list_of_vllm_files);
	tcase_add_test(tc, legacy_map_vendored_plugin_by_label_inline_suite);
	tcase_add_test(tc, suite_path_falls_back_to_the_pipeline_directory);
	tcase_add_test(tc, pipeline_as_a_bare_list_of_steps);
	tcase_add_test(tc, plugin_configuration_json);
	tcase_add_test(tc, variables_and_matrix_values_as_buildkite_fills_them);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(pipeline_suite());
}
