#ifndef PERFGATE_BUILDKITE_STEP_IO_H
#define PERFGATE_BUILDKITE_STEP_IO_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "buildkite/annotation.h"
#include "buildkite/job_env.h"
#include "base/strutil.h"

struct pg_error;

/*
 * `perfgate buildkite`, the plugin's entry point: from the step's plugin
 * configuration to an exit code, through run -> report -> compare ->
 * annotate -> upload (+ meta-data, + history on the default branch).
 *
 * Exit codes reach the step unchanged: 0 pass (and a label skip), 1 a
 * confirmed regression (gate and merge modes), 2 a configuration error,
 * 3 an infrastructure failure, 128+N when cancelled by signal N.
 */

/*
 * The step's plugin configuration from the environment:
 * BUILDKITE_PLUGIN_CONFIGURATION, else perfgate's entry in
 * BUILDKITE_PLUGINS. PG_ECONFIG when neither is there or it is not a JSON
 * object. *source (may be NULL) gets the plugin source when it came from
 * BUILDKITE_PLUGINS ("github.com/acme/perfgate-buildkite-plugin#v1"),
 * else NULL; caller frees.
 */
json_t *pg_bk_config_from_env(const struct pg_bkenv *env, char **source, struct pg_error *err);

struct pg_bk_opts {
	FILE *log;                 /* progress; NULL: stderr */
	FILE *out;                 /* a generated pipeline outside Buildkite; NULL: stdout */
	const char *self_exe;      /* this perfgate, for commands that call it */
	const char *plugin_source; /* for generated pipelines; NULL: from the environment */
};

/*
 * Run the step. Returns the exit code. Problems that end the step early
 * (configuration, nothing to run) are in err with the code's class;
 * problems after the run has started are annotated and logged, and only
 * decide the exit code.
 */
int pg_buildkite_main(const struct pg_bkenv *env, const json_t *config, const struct pg_bk_opts *o,
		      struct pg_error *err);

#endif
