/*
 * perfgate pipeline SUITE...: a dynamic Buildkite pipeline that fans the
 * suite out over GPU queues and shards, for `buildkite-agent pipeline
 * upload` (buildkite/pipeline_emit.h).
 */
#include "cli/cmd.h"
#include "cli/common.h"
#include "cli/opt.h"
#include "base/alloc.h"
#include "buildkite/job_env.h"
#include "buildkite/pipeline_emit.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/strutil.h"
#include "suite/config_io.h"
#include "baseline/thresholds_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *gpus_opt, *plugin_opt, *queue_opt, *thresholds_opt, *results_root_opt;
static long shards_opt;
static struct pg_strv option_opts;

/* clang-format off */
static const struct pg_opt opts[] = {
	{ PG_OPT_STRING, "gpus", 0, &gpus_opt, "LIST",
	  "GPU queues, comma-separated (default: one per thresholds/<GPU>.yml)" },
	{ PG_OPT_LONG, "shards", 0, &shards_opt, "N", "steps per GPU; tests split evenly (default 1)" },
	{ PG_OPT_STRING, "queue", 0, &queue_opt, "TEMPLATE",
	  "agents queue of a GPU's steps; {gpu}, {gpu_lower} (default {gpu})" },
	{ PG_OPT_STRING, "plugin", 0, &plugin_opt, "SOURCE",
	  "how steps refer to the plugin, e.g. perfgate/perfgate#v" PERFGATE_VERSION
	  " (default: $PERFGATE_PLUGIN, or the running step's)" },
	{ PG_OPT_STRINGS, "option", 0, &option_opts, "KEY=VALUE",
	  "a plugin option for every step (VALUE as JSON when it parses, else a string); repeatable" },
	{ PG_OPT_STRING, "thresholds", 0, &thresholds_opt, "DIR",
	  "where to look for GPUs when --gpus is not given (default thresholds)" },
	{ PG_OPT_STRING, "results-root", 0, &results_root_opt, "DIR",
	  "results directories of the steps, <DIR>/<GPU>[/shard-<i>] (default perfgate-results)" },
	{ PG_OPT_END }
};
/* -o was --option before it meant the output path in every command */
static const struct pg_opt_moved moved[] = { { 'o', "--option KEY=VALUE" }, { 0, NULL } };
/* clang-format on */

static const struct pg_cmd_help help = {
	"pipeline",
	"[options] SUITE",
	"print a dynamic Buildkite pipeline fanning suites out over GPU queues",
	"Prints pipeline YAML for `buildkite-agent pipeline upload`: one step per\n"
	"GPU queue and shard (tests split evenly and deterministically, a test's\n"
	"points together), a wait, then one merge step per GPU that gathers its\n"
	"shards' results from the artifacts, gates them and posts one annotation.\n"
	"Every string is quoted and '$' doubled, so nothing is interpolated at\n"
	"upload. Each step's options are checked as the plugin will check them.\n"
	"\n"
	"  perfgate pipeline .buildkite/perf.yml --gpus H100,A100 --shards 4 \\\n"
	"    --plugin perfgate/perfgate#v" PERFGATE_VERSION
	" --option baseline=git | buildkite-agent pipeline upload",
	opts,
	moved,
};

static void split_list(struct pg_strv *out, const char *s)
{
	while (s && *s) {
		const char *comma = strchr(s, ',');
		size_t len = comma ? (size_t)(comma - s) : strlen(s);
		if (len)
			pg_strv_push_owned(out, pg_xstrndup(s, len));
		s = comma ? comma + 1 : NULL;
	}
}

/* GPUs with a thresholds file: thresholds/H100.yml -> H100. */
static int gpus_from_thresholds(struct pg_strv *out, const char *dir, struct pg_error *err)
{
	int rc = pg_thresholds_gpus(out, dir, err);

	if (rc == PG_ENOTFOUND)
		rc = pg_error_set(err, PG_ECONFIG,
				  "no --gpus and no %s directory to take them from", dir);
	if (!rc && !out->n)
		rc = pg_error_set(err, PG_ECONFIG, "no --gpus and no <GPU>.yml in %s", dir);
	return rc;
}

static int parse_options(json_t *out, const struct pg_strv *kv, struct pg_error *err)
{
	for (size_t i = 0; i < kv->n; i++) {
		const char *eq = strchr(kv->v[i], '=');
		char *key;
		json_t *value;

		if (!eq || eq == kv->v[i])
			return pg_error_set(err, PG_ECONFIG,
					    "option '--option': expected KEY=VALUE, got '%s'",
					    kv->v[i]);
		key = pg_xstrndup(kv->v[i], (size_t)(eq - kv->v[i]));
		value = json_loads(eq + 1, JSON_DECODE_ANY, NULL);
		json_object_set_new(out, key, value ? value : json_string(eq + 1));
		free(key);
	}
	return 0;
}

int cmd_pipeline(int argc, char **argv)
{
	struct pg_strv pos = PG_STRV_INIT, gpus = PG_STRV_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_suite suite = PG_SUITE_INIT;
	struct pg_buf yaml = PG_BUF_INIT;
	struct pg_bkenv env;
	struct pg_pipeline_spec spec;
	json_t *options = json_object();
	char *env_source = NULL;
	int rc;

	gpus_opt = plugin_opt = queue_opt = thresholds_opt = results_root_opt = NULL;
	shards_opt = 1;
	pg_strv_release(&option_opts);
	pg_bkenv_load(&env, pg_cmd_getenv, NULL);
	memset(&spec, 0, sizeof(spec));

	if (pg_cmd_parse(&help, argc, argv, &pos, 1, 1, "one suite file (the path each step loads)",
			 &rc))
		goto done;
	if (!strcmp(pos.v[0], "-")) {
		/* every generated step loads the suite from this path */
		rc = pg_error_set(&err, PG_ECONFIG,
				  "the suite must be a file in the repository (each step loads "
				  "it), not stdin");
		goto fail;
	}
	if (shards_opt < 1) {
		rc = pg_error_set(&err, PG_ECONFIG, "option '--shards': expected N >= 1, got %ld",
				  shards_opt);
		goto fail;
	}
	if (!plugin_opt)
		plugin_opt = getenv("PERFGATE_PLUGIN");
	if ((!plugin_opt || !*plugin_opt) && env.plugins) {
		json_decref(pg_bk_plugins_find(env.plugins, &env_source, &err));
		pg_error_clear(&err);
		plugin_opt = env_source;
	}
	if (!plugin_opt || !*plugin_opt) {
		rc = pg_error_set(&err, PG_ECONFIG,
				  "which plugin should the steps use? pass --plugin (e.g. "
				  "--plugin perfgate/perfgate#v" PERFGATE_VERSION
				  ") or set PERFGATE_PLUGIN");
		goto fail;
	}
	if (gpus_opt)
		split_list(&gpus, gpus_opt);
	else if ((rc = gpus_from_thresholds(&gpus, thresholds_opt ? thresholds_opt : "thresholds",
					    &err)))
		goto fail;
	if ((rc = parse_options(options, &option_opts, &err)))
		goto fail;
	if ((rc = pg_config_load(&suite, (const char *const *)pos.v, 1, NULL, &err)))
		goto fail;

	spec.plugin = plugin_opt;
	spec.suites = pos.v[0];
	spec.gpus = (const char *const *)gpus.v;
	spec.n_gpus = gpus.n;
	spec.shards = (size_t)shards_opt;
	spec.queue = queue_opt;
	spec.results_root = results_root_opt;
	spec.options = options;
	if ((rc = pg_pipeline_render(&yaml, &spec, &suite, &err)))
		goto fail;
	rc = pg_cmd_print(&yaml);
	goto done;
fail:
	rc = pg_cmd_fail("pipeline", &err);
done:
	json_decref(options);
	free(env_source);
	pg_bkenv_release(&env);
	pg_buf_release(&yaml);
	pg_suite_release(&suite);
	pg_strv_release(&gpus);
	pg_strv_release(&pos);
	pg_strv_release(&option_opts);
	return rc;
}
