/* perfgate buildkite: choosing what to run, running it, gathering shards,
 * and the dynamic pipeline. */
#include "buildkite/step_io.h"
#include "loadgen/dataset_files_io.h"

#include "base/alloc.h"
#include "buildkite/pipeline_emit.h"
#include "base/buf.h"
#include "base/error.h"
#include "suite/plan.h"
#include "buildkite/agent_io.h"
#include "suite/config_io.h"
#include "sys/fsutil.h"
#include "gpu/detect_io.h"
#include "runner/runner_io.h"

#include <stdlib.h>
#include <string.h>

int pg_bk_plan(struct pg_suite *suite, struct pg_plan *plan, const struct pg_plugin_config *c,
	       const char *step, struct pg_error *err)
{
	struct pg_selection sel = PG_SELECTION_INIT;

	if (pg_config_load_plugin(suite, c, err))
		return err->code ? err->code : PG_ECONFIG;
	sel.filter = c->filter;
	sel.only = c->only;
	sel.repeat = c->repeat;
	sel.shard = c->shard;
	if (pg_plan_select(plan, suite, &sel, err))
		return pg_error_prefix(err, "step '%s'", step);
	return 0;
}

int pg_bk_run(const struct pg_suite *suite, const struct pg_plan *plan, const char *results_dir,
	      const struct pg_gpu_info *gpu, FILE *log, int *run_exit, struct pg_error *err)
{
	struct pg_run_report rep = PG_RUN_REPORT_INIT;
	struct pg_run_opts o;
	int rc;

	memset(&o, 0, sizeof(o));
	o.results_dir = results_dir;
	o.gpu = gpu;
	o.log = log;
	pg_run_signals_install();
	rc = pg_run(&rep, suite, plan, &o, err);
	pg_run_signals_restore();
	*run_exit = rc ? 0 : pg_run_exit_code(&rep);
	pg_run_report_release(&rep);
	return rc;
}

int pg_bk_datasets(const struct pg_plan *plan, const struct pg_plugin_config *c, FILE *log,
		   struct pg_error *err)
{
	struct pg_dataset_check_opts o = { .fetch = c->fetch_datasets,
					   .log = log,
					   .stop = &pg_run_cancelled };
	int rc;

	pg_run_signals_install();
	rc = pg_dataset_files_check(plan, &o, err);
	pg_run_signals_restore();
	return rc;
}

/* Result files and what belongs with them; the shards' own reports,
 * annotations and run manifests are remade for the whole set. */
static bool gathered(const char *name)
{
	static const char *const own[] = { "benchmark_results.json",
					   "benchmark_results.md",
					   "benchmark_results_inferencex.json",
					   "annotation.md",
					   "perfgate_run.json",
					   "comparison.md",
					   "verdict.json" };

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (!strcmp(name, own[i]))
			return false;
	return pg_str_has_suffix(name, ".json") || pg_str_has_suffix(name, ".commands") ||
	       pg_str_has_suffix(name, ".log");
}

static int copy_file(const char *from, const char *to, struct pg_error *err)
{
	struct pg_buf data = PG_BUF_INIT;
	int rc = pg_file_read_nofollow(from, &data, err);

	if (!rc)
		rc = pg_file_write_atomic(to, data.ptr, data.len, err);
	pg_buf_release(&data);
	return rc;
}

int pg_bk_merge(const struct pg_bkagent *agent, const char *cwd, const char *prefix,
		const char *results_dir, size_t *n_shards, FILE *log, struct pg_error *err)
{
	struct pg_buf pattern = PG_BUF_INIT;
	struct pg_strv dirs = PG_STRV_INIT;
	int rc = 0;

	*n_shards = 0;
	if (agent) {
		pg_buf_printf(&pattern, "%s/shard-*/*", prefix);
		fprintf(log, "--- perfgate: downloading %s\n", pattern.ptr);
		fflush(log);
		{
			const char *args[] = { "artifact", "download", pattern.ptr, ".", NULL };
			rc = pg_bkagent_exec(agent, args, cwd, NULL, 0, NULL, err);
		}
		if (rc)
			goto done;
	}
	if ((rc = pg_mkdir_p(results_dir, err)))
		goto done;
	/* what a shard's server left in its results is data, never a link
	 * to follow */
	if ((rc = pg_subdir_list_real(results_dir, "shard-", &dirs, err)))
		goto done;
	for (size_t d = 0; d < dirs.n; d++) {
		char *dir = pg_path_join(results_dir, dirs.v[d]);
		struct pg_strv files = PG_STRV_INIT;

		rc = pg_dir_list_regular(dir, NULL, &files, err);
		for (size_t f = 0; !rc && f < files.n; f++) {
			char *from, *to;
			if (!gathered(files.v[f]))
				continue;
			from = pg_path_join(dir, files.v[f]);
			to = pg_path_join(results_dir, files.v[f]);
			rc = copy_file(from, to, err);
			free(from);
			free(to);
		}
		pg_strv_release(&files);
		free(dir);
		if (rc)
			goto done;
		(*n_shards)++;
	}
	if (!*n_shards)
		rc = pg_error_set(err, PG_EINFRA, "%s: no shard results (shard-*) to merge",
				  results_dir);
done:
	pg_buf_release(&pattern);
	pg_strv_release(&dirs);
	return rc;
}

/* Options that belong to the pipeline step itself, not to the steps it
 * generates. binary-artifact goes on: this step's hook uploads the perfgate
 * it runs there, and the generated steps download it, from this job only
 * (binary-step). */
static const char *const pipeline_own[] = { "mode",  "gpus",   "shards",
					    "queue", "binary", "binary-step" };

int pg_bk_pipeline_yaml(struct pg_buf *out, const struct pg_suite *suite,
			const struct pg_plugin_config *c, const json_t *config,
			const char *plugin_source, const char *job_id, struct pg_error *err)
{
	struct pg_pipeline_spec spec;
	json_t *options = json_deep_copy(config);
	json_t *suites = json_object_get(config, "suites");
	char *suites_path = NULL;
	int rc;

	for (size_t i = 0; i < sizeof(pipeline_own) / sizeof(pipeline_own[0]); i++)
		json_object_del(options, pipeline_own[i]);
	json_object_del(options, "suites");
	memset(&spec, 0, sizeof(spec));
	if (c->binary_artifact) {
		if (!job_id) {
			rc = pg_error_set(
				err, PG_ECONFIG,
				"mode pipeline: binary-artifact: no BUILDKITE_JOB_ID to name "
				"this job as the one the generated steps take it from");
			goto done;
		}
		json_object_set_new(options, "binary-step", json_string(job_id));
	}
	if (!plugin_source) {
		rc = pg_error_set(err, PG_ECONFIG,
				  "mode pipeline: cannot tell how this step refers to the plugin "
				  "(BUILDKITE_PLUGINS has no perfgate entry)");
		goto done;
	}
	if (!json_is_string(suites)) {
		rc = pg_error_set(
			err, PG_ECONFIG,
			"mode pipeline: option 'suites' must be one suite file path (each "
			"generated step loads it)");
		goto done;
	}
	suites_path = pg_xstrdup(json_string_value(suites));
	spec.plugin = plugin_source;
	spec.suites = suites_path;
	spec.gpus = (const char *const *)c->gpus.v;
	spec.n_gpus = c->gpus.n;
	spec.shards = (size_t)(c->shards > 0 ? c->shards : 1);
	spec.queue = c->queue;
	spec.options = options;
	rc = pg_pipeline_render(out, &spec, suite, err);
done:
	json_decref(options);
	free(suites_path);
	return rc;
}

void pg_bk_plan_points(struct pg_plan *plan, const struct pg_strv *names)
{
	size_t n = 0;

	for (size_t i = 0; i < plan->n; i++) {
		bool kept = false;
		for (size_t k = 0; k < names->n && !kept; k++)
			kept = !strcmp(names->v[k], plan->points[i].name);
		if (kept)
			plan->points[n++] = plan->points[i];
		else
			free(plan->points[i].name);
	}
	plan->n = n;
}
