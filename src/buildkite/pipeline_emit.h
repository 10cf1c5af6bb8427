#ifndef PERFGATE_BUILDKITE_PIPELINE_EMIT_H
#define PERFGATE_BUILDKITE_PIPELINE_EMIT_H

#include <jansson.h>
#include <stddef.h>

#include "base/strutil.h"
#include "suite/suite.h"

struct pg_buf;
struct pg_error;

/*
 * Dynamic pipelines: Buildkite as the scale-out engine. A suite fans out
 * into one step per GPU queue and shard; after a wait, one merge step per
 * GPU gathers its shards' results from the artifacts, gates and posts the
 * one combined annotation.
 */

/* "2/4" -> index 2 (1-based), count 4. PG_ECONFIG quoting the text (the
 * caller names the option). */
int pg_shard_parse(const char *text, size_t *index, size_t *count, struct pg_error *err);

/*
 * Split the suite's tests over count shards, evenly and deterministically:
 * tests (never points: a test's points share one server start) go, largest
 * first (by number of points, then suite order), to the shard with the
 * fewest points so far (the lowest index on ties). Every shard computes the
 * same split from the same suite. Appends the names of shard index's tests
 * (1-based) to out, in suite order.
 */
void pg_shard_tests(struct pg_strv *out, const struct pg_suite *suite, size_t index, size_t count);

struct pg_pipeline_spec {
	const char *plugin;      /* plugin source as steps write it: "acme/perfgate#v1.0.0" */
	const char *suites;      /* the suite file, as a path in the repository */
	const char *const *gpus; /* "H100", "A100", ... */
	size_t n_gpus;
	size_t shards;            /* >= 1 */
	const char *queue;        /* agents.queue template: "{gpu}" (default), "gpu-{gpu_lower}" */
	const char *results_root; /* default "perfgate-results" */
	const json_t *options;    /* more plugin options for every step (object) or NULL */
};

/*
 * Append the pipeline YAML (for `buildkite-agent pipeline upload`). Every
 * string is a double-quoted scalar with '$' doubled, so nothing in a name
 * or option is interpolated at upload. With one shard, each GPU gets one
 * step in the options' mode (default gate) and no merge step. PG_ECONFIG
 * when the options set what the pipeline decides (suites, gpu, shard,
 * mode with shards > 1, results-dir) or a GPU name is empty, or a shard
 * would have no tests.
 */
int pg_pipeline_render(struct pg_buf *out, const struct pg_pipeline_spec *spec,
		       const struct pg_suite *suite, struct pg_error *err);

/* Append v as YAML (block style), strings double-quoted with '$' doubled;
 * indent is the current indentation in spaces. */
void pg_yaml_write(struct pg_buf *out, const json_t *v, int indent);

#endif
