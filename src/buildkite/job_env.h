#ifndef PERFGATE_BUILDKITE_JOB_ENV_H
#define PERFGATE_BUILDKITE_JOB_ENV_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/strutil.h"

struct pg_error;

/*
 * What a Buildkite job tells perfgate through its environment, read
 * through a lookup function so the core stays pure (the command passes
 * getenv; tests pass a table). Strings are copies owned by the struct.
 */
struct pg_bkenv {
	bool in_buildkite;          /* BUILDKITE=true */
	char *pull_request;         /* PR number; NULL when not a PR ("false" or empty) */
	char *base_branch;          /* BUILDKITE_PULL_REQUEST_BASE_BRANCH; NULL if empty */
	struct pg_strv labels;      /* BUILDKITE_PULL_REQUEST_LABELS, split on ',' and trimmed */
	char *branch;               /* BUILDKITE_BRANCH */
	char *default_branch;       /* BUILDKITE_PIPELINE_DEFAULT_BRANCH, else "main" */
	char *commit;               /* BUILDKITE_COMMIT */
	char *step_key;             /* BUILDKITE_STEP_KEY */
	char *step_label;           /* BUILDKITE_LABEL */
	char *job_id;               /* BUILDKITE_JOB_ID */
	char *build_url;            /* BUILDKITE_BUILD_URL */
	char *plugin_configuration; /* BUILDKITE_PLUGIN_CONFIGURATION (JSON) */
	char *plugins;              /* BUILDKITE_PLUGINS (JSON) */
};

typedef const char *(*pg_env_lookup)(void *ctx, const char *name);

void pg_bkenv_load(struct pg_bkenv *env, pg_env_lookup lookup, void *ctx);
void pg_bkenv_release(struct pg_bkenv *env);

/* Is the build for a pull request? */
bool pg_bkenv_is_pr(const struct pg_bkenv *env);

/* Does the PR carry one of the labels (compared without case)? */
bool pg_bkenv_has_label(const struct pg_bkenv *env, const char *const *wanted, size_t n);

/* Is the build on the pipeline's default branch (and not a PR)? */
bool pg_bkenv_on_default_branch(const struct pg_bkenv *env);

/* "<build url>#<job id>": the job on the build page. NULL when unknown.
 * Caller frees. */
char *pg_bkenv_job_url(const struct pg_bkenv *env);

/* The step's name for contexts and messages: its key, else its label,
 * else "perfgate". Borrowed. */
const char *pg_bkenv_step_name(const struct pg_bkenv *env);

/*
 * The plugin name the agent derives from a plugin source (agent/plugin
 * Plugin.Name): last path segment without "#ref", lower-cased, runs of
 * non-alphanumerics as '-', "-buildkite-plugin" and "-git" suffixes
 * dropped. "github.com/org/perfgate-buildkite-plugin#v1.0.0" -> "perfgate".
 * Writes into out (size bytes).
 */
char *pg_bk_plugin_name(char *out, size_t size, const char *source);

/*
 * Find perfgate's entry in BUILDKITE_PLUGINS (a JSON array of one-key
 * objects {source: config}, or bare strings): the first whose plugin name
 * is "perfgate" or ends in "-perfgate". Returns a new reference to its
 * configuration (an empty object for a bare string or null), or NULL with
 * PG_ENOTFOUND / PG_ECONFIG in err. *source (may be NULL) gets a copy of
 * the plugin source as the step wrote it; caller frees.
 */
json_t *pg_bk_plugins_find(const char *plugins_json, char **source, struct pg_error *err);

/*
 * The step's plugin configuration from the environment:
 * BUILDKITE_PLUGIN_CONFIGURATION, else perfgate's entry in
 * BUILDKITE_PLUGINS. PG_ECONFIG when neither is there or it is not a JSON
 * object. *source (may be NULL) gets the plugin source when it came from
 * BUILDKITE_PLUGINS ("github.com/acme/perfgate-buildkite-plugin#v1"),
 * else NULL; caller frees.
 */
json_t *pg_bk_config_from_env(const struct pg_bkenv *env, char **source, struct pg_error *err);

#endif
