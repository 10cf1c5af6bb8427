/* The plugin's step configuration: defaults, every option, the errors a
 * Buildkite user meets, and the JSON Schema for plugin.yml. */
#include "testutil.h"

#include "base/buf.h"
#include "base/error.h"
#include "base/jsonw.h"
#include "buildkite/plugin_config.h"
#include "suite/suite.h"

#include <stdlib.h>
#include <string.h>

static json_t *parse_json(const char *text)
{
	json_error_t jerr;
	json_t *v = json_loads(text, 0, &jerr);
	ck_assert_msg(v != NULL, "bad test JSON: %s", jerr.text);
	return v;
}

START_TEST(defaults)
{
	struct pg_plugin_config c;
	struct pg_error err = PG_ERROR_INIT;
	json_t *cfg = parse_json("{\"suites\": \"suite.yml\"}");

	ck_assert_msg(pg_plugin_config_parse(&c, cfg, "perf", &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(c.suites.paths.n, 1);
	ck_assert_str_eq(c.suites.paths.v[0], "suite.yml");
	ck_assert_ptr_null(c.suites.inline_suite);
	ck_assert_str_eq(c.gpu, "auto");
	ck_assert_str_eq(c.thresholds, "thresholds");
	ck_assert_int_eq(c.baseline, PG_BASELINE_THRESHOLDS);
	ck_assert_int_eq(c.mode, PG_MODE_GATE);
	ck_assert_ptr_null(c.filter);
	ck_assert_int_eq(c.only, -1);
	ck_assert_int_eq(c.repeat, 0);
	ck_assert(c.confirm);
	ck_assert_int_eq(c.annotate, PG_ANNOTATE_ALWAYS);
	ck_assert_ptr_null(c.context);
	ck_assert(c.artifacts);
	ck_assert_str_eq(c.results_dir, "results");
	ck_assert_uint_eq(c.only_on_labels.n, 0);
	ck_assert(!c.record_history);
	ck_assert_ptr_null(c.history_repo);
	ck_assert_ptr_null(c.base_branch);
	ck_assert_ptr_null(c.binary);
	ck_assert_str_eq(pg_plugin_enum_name("mode", c.mode), "gate");
	ck_assert_ptr_null(pg_plugin_enum_name("mode", 7));
	pg_plugin_config_release(&c);
	json_decref(cfg);
}
END_TEST

START_TEST(every_option)
{
	struct pg_plugin_config c;
	struct pg_error err = PG_ERROR_INIT;
	json_t *cfg = parse_json(
		"{\"suites\": {\"serving\": []}, \"gpu\": \"H200\", \"thresholds\": \"perf/thresholds\","
		" \"baseline\": \"git\", \"mode\": \"run\", \"filter\": \"^serving_.*_qps_(1|inf)$\","
		" \"only\": \"throughput\", \"repeat\": 5, \"confirm\": false, \"annotate\": \"never\","
		" \"context\": \"perf-h200\", \"artifacts\": false, \"results-dir\": \"out\","
		" \"only-on-labels\": \"perf\", \"record-history\": true,"
		" \"history-repo\": \"git@github.com:acme/perf-history.git\", \"base-branch\": \"main\","
		" \"binary\": \"/opt/perfgate/bin/perfgate\", \"context\": \"perf-h200\"}");

	ck_assert_msg(pg_plugin_config_parse(&c, cfg, "perf", &err) == 0, "%s", err.msg);
	ck_assert(json_is_object(c.suites.inline_suite));
	ck_assert_uint_eq(c.suites.paths.n, 0);
	ck_assert_str_eq(c.gpu, "H200");
	ck_assert_str_eq(c.thresholds, "perf/thresholds");
	ck_assert_int_eq(c.baseline, PG_BASELINE_GIT);
	ck_assert_int_eq(c.mode, PG_MODE_RUN);
	ck_assert_str_eq(c.filter, "^serving_.*_qps_(1|inf)$");
	ck_assert_int_eq(c.only, PG_SUITE_THROUGHPUT);
	ck_assert_int_eq(c.repeat, 5);
	ck_assert(!c.confirm);
	ck_assert_int_eq(c.annotate, PG_ANNOTATE_NEVER);
	ck_assert_str_eq(c.context, "perf-h200");
	ck_assert(!c.artifacts);
	ck_assert_str_eq(c.results_dir, "out");
	ck_assert_uint_eq(c.only_on_labels.n, 1);
	ck_assert_str_eq(c.only_on_labels.v[0], "perf");
	ck_assert(c.record_history);
	ck_assert_str_eq(c.history_repo, "git@github.com:acme/perf-history.git");
	ck_assert_str_eq(c.base_branch, "main");
	ck_assert_str_eq(c.binary, "/opt/perfgate/bin/perfgate");
	pg_plugin_config_release(&c);
	json_decref(cfg);
}
END_TEST

/* clang-format off */
static const struct {
	const char *json;
	const char *message;
} bad[] = {
	{ "{\"suites\": \"s.yml\", \"thresold\": \"t\"}",
	  "step 'perf-h100': unknown option 'thresold' (did you mean 'thresholds'?)" },
	{ "{\"suites\": \"s.yml\", \"results_dir\": \"r\"}",
	  "step 'perf-h100': unknown option 'results_dir' (did you mean 'results-dir'?)" },
	{ "{\"suites\": \"s.yml\", \"only_on_labels\": [\"perf\"]}",
	  "step 'perf-h100': unknown option 'only_on_labels' (did you mean 'only-on-labels'?)" },
	{ "{\"suites\": \"s.yml\", \"colour\": true}",
	  "step 'perf-h100': unknown option 'colour'" },
	{ "{\"suites\": \"s.yml\", \"repeat\": \"three\"}",
	  "step 'perf-h100': option 'repeat': expected an integer >= 1, got 'three'" },
	{ "{\"suites\": \"s.yml\", \"repeat\": 0}",
	  "step 'perf-h100': option 'repeat': expected an integer >= 1, got 0" },
	{ "{\"suites\": \"s.yml\", \"repeat\": 2.5}",
	  "step 'perf-h100': option 'repeat': expected an integer >= 1, got 2.5" },
	{ "{\"suites\": \"s.yml\", \"confirm\": \"yes\"}",
	  "step 'perf-h100': option 'confirm': expected true or false, got 'yes'" },
	{ "{\"suites\": \"s.yml\", \"mode\": \"gates\"}",
	  "step 'perf-h100': option 'mode': expected 'run', 'report', 'gate', 'merge', 'pipeline' or 'binary', "
	  "got 'gates' "
	  "(did you mean 'gate'?)" },
	{ "{\"suites\": \"s.yml\", \"annotate\": \"sometimes\"}",
	  "step 'perf-h100': option 'annotate': expected 'always', 'on-change' or 'never', got "
	  "'sometimes'" },
	{ "{\"suites\": \"s.yml\", \"only\": [\"serving\"]}",
	  "step 'perf-h100': option 'only': expected 'latency', 'throughput', 'serving' or 'startup', got a list" },
	{ "{\"suites\": \"s.yml\", \"baseline\": \"gti\"}",
	  "step 'perf-h100': option 'baseline': expected 'thresholds', 'git' or 'ab', got 'gti' (did you "
	  "mean 'git'?)" },
	{ "{\"suites\": \"s.yml\", \"gpu\": 100}",
	  "step 'perf-h100': option 'gpu': expected a string, got 100" },
	{ "{\"suites\": \"s.yml\", \"only-on-labels\": [\"perf\", 3]}",
	  "step 'perf-h100': option 'only-on-labels': item 1: expected a string, got 3" },
	{ "{\"suites\": \"s.yml\", \"filter\": \"serving_(\"}",
	  "step 'perf-h100': option 'filter': bad regular expression 'serving_(': Unmatched ( or \\(" },
	{ "{\"suites\": \"s.yml\", \"shard\": \"5/4\"}",
	  "step 'perf-h100': option 'shard': expected \"INDEX/COUNT\" with 1 <= INDEX <= COUNT, got "
	  "\"5/4\"" },
	{ "{\"suites\": \"s.yml\", \"shard\": \"01/4\"}",
	  "step 'perf-h100': option 'shard': expected \"INDEX/COUNT\" with 1 <= INDEX <= COUNT, got "
	  "\"01/4\"" },
	{ "{\"suites\": \"s.yml\", \"shard\": 2}",
	  "step 'perf-h100': option 'shard': expected \"INDEX/COUNT\", got 2" },
	{ "{\"suites\": 5}",
	  "step 'perf-h100': option 'suites': expected a path, a list of paths or a suite mapping, got 5" },
	{ "{\"suites\": []}",
	  "step 'perf-h100': option 'suites': the list of suite files is empty" },
	{ "{\"gpu\": \"H100\"}",
	  "step 'perf-h100': option 'suites' is required (mode 'gate' runs suites)" },
	{ "[\"suites\"]",
	  "step 'perf-h100': expected a mapping of options, got a list" },
	{ "{\"mode\": \"binary\"}",
	  "step 'perf-h100': option 'binary-artifact' is required (mode 'binary' uploads perfgate there)" },
	{ "{\"suites\": \"s.yml\", \"binary\": \"/opt/perfgate\", \"binary-artifact\": \"p.tar.gz\"}",
	  "step 'perf-h100': options 'binary' and 'binary-artifact' exclude each other in mode 'gate' "
	  "(both only where perfgate is uploaded: modes binary and pipeline)" },
	{ "{\"mode\": \"binary\", \"binary-artifact\": \"perfgate\"}",
	  "step 'perf-h100': option 'binary-artifact': 'perfgate' is not a .tar.gz file (a perfgate bundle)" },
	{ "{\"mode\": \"binary\", \"binary-artifact\": \"/tmp/p.tar.gz\"}",
	  "step 'perf-h100': option 'binary-artifact': '/tmp/p.tar.gz' is absolute: write the artifact's "
	  "path in the build, e.g. perfgate/perfgate.tar.gz" },
	{ "{\"mode\": \"binary\", \"binary-artifact\": \"bin/*.tar.gz\"}",
	  "step 'perf-h100': option 'binary-artifact': 'bin/*.tar.gz' has glob characters: it must name "
	  "one artifact" },
	{ "{\"mode\": \"binary\", \"binary-artifact\": \"./p.tar.gz\"}",
	  "step 'perf-h100': option 'binary-artifact': './p.tar.gz' has an empty, '.' or '..' part: write "
	  "the path as the artifact stores it" },
	{ "{\"mode\": \"binary\", \"binary-artifact\": \"a//p.tar.gz\"}",
	  "step 'perf-h100': option 'binary-artifact': 'a//p.tar.gz' has an empty, '.' or '..' part: write "
	  "the path as the artifact stores it" },
	/* a bundle is downloaded from the step that uploads it, named */
	{ "{\"suites\": \"s.yml\", \"binary-artifact\": \"p.tar.gz\"}",
	  "step 'perf-h100': option 'binary-step' is required with binary-artifact: the key of the step "
	  "that uploads the bundle, the only step it is taken from" },
	{ "{\"suites\": \"s.yml\", \"binary-step\": \"perfgate\"}",
	  "step 'perf-h100': option 'binary-step' applies with binary-artifact" },
	{ "{\"mode\": \"binary\", \"binary-artifact\": \"p.tar.gz\", \"binary-step\": \"perfgate\"}",
	  "step 'perf-h100': option 'binary-step' applies where binary-artifact is downloaded, not in mode "
	  "'binary', which uploads it" },
};
/* clang-format on */

START_TEST(bad_options_name_the_option_and_the_step)
{
	struct pg_plugin_config c;
	struct pg_error err = PG_ERROR_INIT;
	json_t *cfg = parse_json(bad[_i].json);

	ck_assert_int_eq(pg_plugin_config_parse(&c, cfg, "perf-h100", &err), PG_ECONFIG);
	ck_assert_str_eq(err.msg, bad[_i].message);
	pg_plugin_config_release(&c);
	json_decref(cfg);
}
END_TEST

START_TEST(null_means_not_given_and_report_needs_no_suites)
{
	struct pg_plugin_config c;
	struct pg_error err = PG_ERROR_INIT;
	json_t *cfg = parse_json(
		"{\"mode\": \"report\", \"gpu\": null, \"results-dir\": \"merged\"}");

	ck_assert_msg(pg_plugin_config_parse(&c, cfg, NULL, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(c.gpu, "auto");
	ck_assert_str_eq(c.results_dir, "merged");
	pg_plugin_config_release(&c);
	json_decref(cfg);

	/* mode binary needs no suites either, and may name the binary it uploads */
	cfg = parse_json(
		"{\"mode\": \"binary\", \"binary-artifact\": \".perfgate/perfgate-x86_64.tar.gz\","
		" \"binary\": \"/opt/perfgate/bin/perfgate\"}");
	ck_assert_msg(pg_plugin_config_parse(&c, cfg, NULL, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(c.mode, PG_MODE_BINARY);
	ck_assert_str_eq(c.binary_artifact, ".perfgate/perfgate-x86_64.tar.gz");
	pg_plugin_config_release(&c);
	json_decref(cfg);
	/* a GPU step downloads it */
	cfg = parse_json("{\"suites\": \"s.yml\", \"binary-artifact\": \"perfgate.tar.gz\","
			 " \"binary-step\": \"perfgate\"}");
	ck_assert_msg(pg_plugin_config_parse(&c, cfg, NULL, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(c.binary_artifact, "perfgate.tar.gz");
	ck_assert_str_eq(c.binary_step, "perfgate");
	pg_plugin_config_release(&c);
	json_decref(cfg);

	cfg = parse_json("{\"xyzzy\": 1}");
	ck_assert_int_eq(pg_plugin_config_parse(&c, cfg, NULL, &err), PG_ECONFIG);
	ck_assert_str_eq(err.msg, "plugin configuration: unknown option 'xyzzy'");
	pg_plugin_config_release(&c);
	json_decref(cfg);
}
END_TEST

static const char *where(void *ctx, const char *option, char *buf, size_t size)
{
	(void)ctx;
	snprintf(buf, size, "pipeline.yml:9:11 (%s)", option);
	return buf;
}

START_TEST(errors_carry_the_position_the_caller_knows)
{
	struct pg_plugin_config c;
	struct pg_error err = PG_ERROR_INIT;
	json_t *cfg = parse_json("{\"suites\": \"s.yml\", \"repeat\": -1}");

	ck_assert_int_eq(pg_plugin_config_parse_at(&c, cfg, "perf", where, NULL, &err), PG_ECONFIG);
	ck_assert_str_eq(err.msg,
			 "pipeline.yml:9:11 (repeat): step 'perf': option 'repeat': expected "
			 "an integer >= 1, got -1");
	pg_plugin_config_release(&c);
	json_decref(cfg);
}
END_TEST

/* One property per table entry, typed; the file plugin.yml's
 * `configuration` is generated from (and checked against) this. */
START_TEST(json_schema_for_plugin_yml)
{
	json_t *schema = pg_plugin_config_schema();
	json_t *props = json_object_get(schema, "properties");
	struct pg_buf out = PG_BUF_INIT;

	ck_assert(json_is_false(json_object_get(schema, "additionalProperties")));
	ck_assert_uint_eq(json_object_size(props), pg_plugin_n_options);
	for (size_t i = 0; i < pg_plugin_n_options; i++) {
		json_t *p = json_object_get(props, pg_plugin_options[i].name);
		ck_assert_ptr_nonnull(p);
		ck_assert(json_is_string(json_object_get(p, "description")));
		ck_assert_ptr_nonnull(json_object_get(p, "type"));
	}
	ck_assert_str_eq(json_string_value(json_array_get(
				 json_object_get(json_object_get(props, "mode"), "enum"), 2)),
			 "gate");
	pg_json_write(&out, schema, 2);
	pg_buf_putc(&out, '\n');
	tu_assert_golden("golden/plugin-configuration.json", out.ptr);
	pg_buf_release(&out);
	json_decref(schema);
}
END_TEST

static Suite *plugin_suite(void)
{
	Suite *s = suite_create("plugin_config");
	TCase *tc = tcase_create("options");

	tcase_add_test(tc, defaults);
	tcase_add_test(tc, every_option);
	tcase_add_loop_test(tc, bad_options_name_the_option_and_the_step, 0,
			    (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, null_means_not_given_and_report_needs_no_suites);
	tcase_add_test(tc, errors_carry_the_position_the_caller_knows);
	tcase_add_test(tc, json_schema_for_plugin_yml);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(plugin_suite());
}
