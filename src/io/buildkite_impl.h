#ifndef PERFGATE_IO_BUILDKITE_IMPL_H
#define PERFGATE_IO_BUILDKITE_IMPL_H

/*
 * The stages of `perfgate buildkite` (io/buildkite.c), one file each so
 * that the runner's and the gate's headers never meet.
 */

#include <stdio.h>

#include "core/plugin_config.h"
#include "core/suite.h"

struct pg_bkagent;
struct pg_bkenv;
struct pg_buf;
struct pg_error;
struct pg_gpu_info;

/*
 * The suite and the plan this step runs: the `suites` option (paths, or
 * the inline mapping), narrowed by filter, only and repeat, then by shard.
 * An empty selection is PG_ECONFIG (a step that runs nothing would pass).
 */
int pg_bk_plan(struct pg_suite *suite, struct pg_plan *plan, const struct pg_plugin_config *c,
	       const char *step, struct pg_error *err);

/* Keep only the points of the tests in shard "i/N". */
int pg_bk_plan_shard(struct pg_plan *plan, const struct pg_suite *suite, const char *shard,
		     const char *step, struct pg_error *err);

/*
 * Run the plan into results_dir with SIGINT/SIGTERM cancelling cleanly.
 * *run_exit gets the runner's exit code (0; 3 when a point failed;
 * 128+N when cancelled). Returns an error only when the run could not
 * start.
 */
int pg_bk_run(const struct pg_suite *suite, const struct pg_plan *plan, const char *results_dir,
	      const struct pg_gpu_info *gpu, FILE *log, int *run_exit, struct pg_error *err);

/*
 * mode merge: download the shards' results (<prefix>/shard-*) from this
 * build's artifacts into cwd (NULL: ours) and gather their result files
 * into results_dir. agent NULL (outside Buildkite): only gather what is
 * already on disk. *n_shards gets how many shard directories were found.
 */
int pg_bk_merge(const struct pg_bkagent *agent, const char *cwd, const char *prefix,
		const char *results_dir, size_t *n_shards, FILE *log, struct pg_error *err);

/*
 * mode pipeline: the pipeline YAML for this step's configuration (the
 * options that are not the pipeline's own are passed on to every step).
 */
int pg_bk_pipeline_yaml(struct pg_buf *out, const struct pg_suite *suite,
			const struct pg_plugin_config *c, const json_t *config,
			const char *plugin_source, struct pg_error *err);

#endif
