/*
 * The plugin configuration (buildkite/plugin_config.c) as the agent hands
 * it over: BUILDKITE_PLUGIN_CONFIGURATION, and the same JSON as
 * BUILDKITE_PLUGINS (buildkite/job_env.c pg_bk_plugins_find), each
 * validated (pg_plugin_config_parse), an inline `suites:` loaded
 * (pg_config_load_plugin), and for `mode: pipeline` the generated pipeline
 * rendered, which must be YAML (buildkite-agent pipeline upload reads it).
 * The bytes after "\n\x1e" are the rest of the job's environment, NAME=VALUE
 * lines (PR labels, branch, step key...).
 *
 * A `suites:` path would be read from the current directory; the harness
 * does not load those (the suite loader has harnesses of its own).
 */
#include "fuzz.h"

#include "base/buf.h"
#include "base/error.h"
#include "buildkite/job_env.h"
#include "buildkite/plugin_config.h"
#include "buildkite/step_io.h"
#include "buildkite/step_io.h"
#include "suite/config_io.h"
#include "sys/yamldoc.h"

struct env {
	char *config;
	char *plugins;
	char *names[32]; /* the NAME=VALUE lines, split in place */
	char *values[32];
	size_t n;
};

static const char *lookup(void *ctx, const char *name)
{
	struct env *e = ctx;

	if (!strcmp(name, "BUILDKITE_PLUGIN_CONFIGURATION"))
		return e->config;
	if (!strcmp(name, "BUILDKITE_PLUGINS"))
		return e->plugins;
	if (!strcmp(name, "BUILDKITE"))
		return "true";
	for (size_t i = 0; i < e->n; i++)
		if (!strcmp(e->names[i], name))
			return e->values[i];
	return NULL;
}

static void split_env(struct env *e, char *rest)
{
	char *save = NULL;

	for (char *l = strtok_r(rest, "\n", &save); l && e->n < 32;
	     l = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(l, '=');
		if (!eq)
			continue;
		*eq = '\0';
		e->names[e->n] = l;
		e->values[e->n++] = eq + 1;
	}
}

static void use(const struct pg_bkenv *env, const json_t *config, const char *source)
{
	struct pg_plugin_config pc;
	struct pg_error err = PG_ERROR_INIT;
	static const char *const wanted[] = { "perf", "run-perf" };

	if (pg_plugin_config_parse(&pc, config, pg_bkenv_step_name(env), &err) == 0) {
		struct pg_suite suite = PG_SUITE_INIT;
		(void)pg_bkenv_has_label(env, wanted, 2);
		if (pc.suites.inline_suite && pg_config_load_plugin(&suite, &pc, &err) == 0)
			FZ_CHECK(suite.n_tests > 0);
		if (pc.mode == PG_MODE_PIPELINE) {
			static const char suite_yml[] =
				"serving:\n"
				"  - name: serving_fuzz\n"
				"    model: m\n"
				"    server: {command: 'srv --port {port}'}\n"
				"    qps: [1, inf]\n";
			struct pg_suite fixed = PG_SUITE_INIT;
			struct pg_buf yaml = PG_BUF_INIT;
			FZ_CHECK(pg_config_load_text(&fixed, suite_yml, sizeof(suite_yml) - 1,
						     "suite.yml", &err) == 0);
			if (pg_bk_pipeline_yaml(&yaml, &fixed, &pc, config, source, "0190-job",
						&err) == 0) {
				struct pg_ydoc d = PG_YDOC_INIT;
				int rc = pg_ydoc_load(&d, yaml.ptr, yaml.len, "pipeline.yml", &err);
				if (rc)
					fprintf(stderr, "%s\n%s\n", err.msg, yaml.ptr);
				FZ_CHECK(rc == 0);
				pg_ydoc_release(&d);
			}
			pg_buf_release(&yaml);
			pg_suite_release(&fixed);
		}
		pg_suite_release(&suite);
	} else {
		FZ_CHECK(err.code == PG_ECONFIG);
	}
	pg_plugin_config_release(&pc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *second;
	size_t first, second_size;
	struct env e = { 0 };
	char *rest;
	struct pg_bkenv env;
	struct pg_error err = PG_ERROR_INIT;
	char *json, *source = NULL, *url;
	char name[256];
	json_t *config;

	fz_split2(data, size, &first, &second, &second_size);
	json = fz_strdup(data, first);
	rest = second ? fz_strdup(second, second_size) : NULL;
	if (rest)
		split_env(&e, rest);

	/* as BUILDKITE_PLUGIN_CONFIGURATION */
	e.config = json;
	pg_bkenv_load(&env, lookup, &e);
	url = pg_bkenv_job_url(&env);
	free(url);
	(void)pg_bkenv_is_pr(&env);
	(void)pg_bkenv_on_default_branch(&env);
	config = pg_bk_config_from_env(&env, &source, &err);
	if (config) {
		use(&env, config, "acme/perfgate#v1");
		json_decref(config);
	}
	free(source);
	source = NULL;
	pg_bkenv_release(&env);

	/* as BUILDKITE_PLUGINS */
	e.config = NULL;
	e.plugins = json;
	pg_bkenv_load(&env, lookup, &e);
	config = pg_bk_config_from_env(&env, &source, &err);
	if (config) {
		FZ_CHECK(source != NULL);
		use(&env, config, source);
		json_decref(config);
	}
	free(source);
	pg_bkenv_release(&env);

	pg_bk_plugin_name(name, sizeof(name), json);
	free(rest);
	free(json);
	return 0;
}
