#ifndef PERFGATE_SUITE_CONFIG_IO_H
#define PERFGATE_SUITE_CONFIG_IO_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "buildkite/plugin_config.h"
#include "suite/suite.h"

struct pg_error;

/*
 * Loading the suite model (suite/suite.h) from what users write. Three ways
 * in, told apart by content, not by file name:
 *
 *  - a perfgate suite file (YAML): `defaults`, then `latency:`,
 *    `throughput:`, `serving:` lists (docs/suite.md);
 *  - a Buildkite pipeline (YAML): the step that uses the perfgate plugin,
 *    whose `suites:` option is a path (or paths) or the suite inline;
 *  - vLLM's latency-tests.json, throughput-tests.json, serving-tests.json
 *    (array or `defaults`+`tests`), translated: serving tests to a
 *    `vllm serve` server driven by perfgate's client, latency and
 *    throughput to the `vllm bench` command vLLM's driver runs.
 *
 * Several inputs make one suite (test names unique across all). Bad input
 * is PG_ECONFIG with one line: "suite.yml:12:5: serving[0].qps[1]:
 * expected a number or 'inf', got 'fast'". Non-fatal notes (a vLLM flag
 * perfgate cannot honour) go to out->warnings.
 *
 * On error *out is released (and left empty).
 */

/* The Buildkite step a pipeline input was taken from. */
struct pg_config_step {
	bool from_pipeline;             /* false: no pipeline among the inputs */
	char *file;                     /* the pipeline file */
	char *name;                     /* the step's key, or its label without one */
	struct pg_plugin_config plugin; /* its options (all defaults when !from_pipeline) */
	json_t *config; /* the same options as JSON, variables and matrix values filled in (what
			 * BUILDKITE_PLUGIN_CONFIGURATION holds in the job), or NULL */
};

/* out must be empty (PG_SUITE_INIT). */
int pg_config_load(struct pg_suite *out, const char *const *paths, size_t n_paths,
		   const char *step_key, struct pg_error *err);

/*
 * Which job of a pipeline to read. The chosen step's plugin options get
 * what Buildkite does to them (suite/bkinterp.h): environment variables
 * are substituted as at upload, the pipeline's top-level `env:` first,
 * then perfgate's environment; {{matrix}} and {{matrix.NAME}} take the
 * values given here ("NAME=VALUE", or "VALUE" for {{matrix}}). A matrix
 * reference without a value is an error naming the choices, except in
 * `gpu`, which is then detected (with a warning).
 */
struct pg_config_select {
	const char *step_key;         /* --step: key or label; NULL: the only one */
	const struct pg_strv *matrix; /* --matrix values, or NULL */
};

/* The same as pg_config_load, also returning the chosen pipeline step's
 * options (step may be NULL; select too). step is always initialised;
 * release it with pg_config_step_release. */
int pg_config_load_step(struct pg_suite *out, struct pg_config_step *step, const char *const *paths,
			size_t n_paths, const struct pg_config_select *select,
			struct pg_error *err);
void pg_config_step_release(struct pg_config_step *step);

/*
 * The suites a plugin step's options name (BUILDKITE_PLUGIN_CONFIGURATION,
 * parsed by pg_plugin_config_parse): its paths, relative to the current
 * directory (the checkout), or its inline mapping. Messages about the
 * inline suite name "BUILDKITE_PLUGIN_CONFIGURATION" and the key path
 * ("suites.serving[0].qps[1]"): the JSON's lines mean nothing to the user.
 */
int pg_config_load_plugin(struct pg_suite *out, const struct pg_plugin_config *plugin,
			  struct pg_error *err);

/*
 * A suite (or vLLM test file content) given as text, e.g. the inline
 * `suites:` mapping of BUILDKITE_PLUGIN_CONFIGURATION serialised back to
 * JSON. source_name stands for the file in messages and in each test's
 * loc. Pipelines are refused here. Relative paths are not resolved.
 */
int pg_config_load_text(struct pg_suite *out, const char *text, size_t len, const char *source_name,
			struct pg_error *err);

#endif
