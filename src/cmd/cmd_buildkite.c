/*
 * perfgate buildkite: the plugin's entry point, run by hooks/command. It
 * reads the step's plugin configuration from the agent's environment,
 * validates it, and runs the step (src/io/buildkite.c).
 */
#include "cmd/cmd.h"
#include "cmd/opt.h"
#include "core/bkenv.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/jsonw.h"
#include "core/plugin_config.h"
#include "io/buildkite.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static bool print_schema;

static const struct pg_opt opts[] = {
	{ PG_OPT_FLAG, "print-schema", 0, &print_schema, NULL,
	  "print the JSON Schema of the plugin options (plugin.yml's configuration) and exit" },
	{ PG_OPT_END }
};

static const struct pg_cmd_help help = {
	"buildkite", "",
	"the plugin's entry point: run, report, compare, annotate, upload",
	"Run by the plugin's command hook. Reads the step's plugin configuration\n"
	"from BUILDKITE_PLUGIN_CONFIGURATION (or perfgate's entry in\n"
	"BUILDKITE_PLUGINS), validates it, and runs the step as its `mode` says:\n"
	"run -> report -> compare -> annotate -> upload. Outside Buildkite the\n"
	"annotation is written to <results-dir>/annotation.md.\n"
	"\n"
	"Exit codes: 0 pass (or skipped by only-on-labels), 1 confirmed regression,\n"
	"2 configuration error, 3 infrastructure failure.",
	opts,
};

static const char *env_lookup(void *ctx, const char *name)
{
	(void)ctx;
	return getenv(name);
}

int cmd_buildkite(int argc, char **argv)
{
	struct pg_strv pos = PG_STRV_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_bkenv env;
	struct pg_bk_opts o = { 0 };
	json_t *config = NULL;
	char *source = NULL;
	int rc;

	print_schema = false;
	pg_bkenv_load(&env, env_lookup, NULL);
	rc = pg_opt_parse(&help, argc, argv, &pos, &err);
	if (rc == PG_OPT_HELP) {
		rc = PG_EXIT_OK;
		goto done;
	}
	if (rc)
		goto fail;
	if (print_schema) {
		struct pg_buf out = PG_BUF_INIT;
		json_t *schema = pg_plugin_config_schema();
		pg_json_write(&out, schema, 2);
		fwrite(out.ptr, 1, out.len, stdout);
		putchar('\n');
		pg_buf_release(&out);
		json_decref(schema);
		rc = PG_EXIT_OK;
		goto done;
	}
	if (pos.n) {
		rc = pg_error_set(&err, PG_ECONFIG, "no arguments expected (the configuration comes "
						    "from BUILDKITE_PLUGIN_CONFIGURATION)");
		goto fail;
	}
	config = pg_bk_config_from_env(&env, &source, &err);
	if (!config) {
		rc = err.code;
		goto fail;
	}
	if (!source && env.plugins) {
		/* how the step refers to the plugin, for generated pipelines */
		struct pg_error ignored = PG_ERROR_INIT;
		json_decref(pg_bk_plugins_find(env.plugins, &source, &ignored));
	}
	o.log = stderr;
	o.plugin_source = source;
	rc = pg_buildkite_main(&env, config, &o, &err);
	if (err.code)
		pg_cmd_fail("buildkite", &err);
	goto done;
fail:
	rc = pg_cmd_fail("buildkite", &err);
done:
	json_decref(config);
	free(source);
	pg_bkenv_release(&env);
	pg_strv_release(&pos);
	return rc;
}
