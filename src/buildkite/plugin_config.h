#ifndef PERFGATE_BUILDKITE_PLUGIN_CONFIG_H
#define PERFGATE_BUILDKITE_PLUGIN_CONFIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/strutil.h"

struct pg_error;

/*
 * The Buildkite plugin's step configuration: what a pipeline writes under
 * `plugins: - org/perfgate#v1: {...}` and the agent hands over as
 * BUILDKITE_PLUGIN_CONFIGURATION JSON. Option names are kebab-case, as
 * Buildkite users expect.
 *
 * One declarative table (pg_plugin_options) holds every option's name,
 * type, allowed values, default and description. Parsing, defaults, the
 * JSON Schema in plugin.yml and the README all come from it, so they
 * cannot disagree. The agent does not validate configuration by default
 * (docs/design/buildkite-agent.md §1), so pg_plugin_config_parse does: types,
 * allowed values, unknown options (with the nearest valid name).
 */

enum pg_plugin_mode {
	PG_MODE_RUN,
	PG_MODE_REPORT,
	PG_MODE_GATE,
	PG_MODE_MERGE,
	PG_MODE_PIPELINE,
	PG_MODE_BINARY, /* the hook packs and uploads perfgate; perfgate buildkite only checks */
};
enum pg_plugin_baseline { PG_BASELINE_THRESHOLDS, PG_BASELINE_GIT, PG_BASELINE_AB };
enum pg_plugin_annotate { PG_ANNOTATE_ALWAYS, PG_ANNOTATE_ON_CHANGE, PG_ANNOTATE_NEVER };
enum pg_plugin_pr_thresholds { PG_PR_THRESHOLDS_BASE, PG_PR_THRESHOLDS_PR };
enum pg_plugin_record_failure { PG_RECORD_FAIL, PG_RECORD_WARN };

/* `suites`: a path, a list of paths, or the suite mapping inline. */
struct pg_plugin_suites {
	struct pg_strv paths; /* empty when inline or not given */
	json_t *inline_suite; /* owned object, or NULL */
};

struct pg_plugin_config {
	struct pg_plugin_suites suites;
	char *gpu;                     /* "auto" (default) or a GPU name */
	char *thresholds;              /* directory of <GPU>.yml; default "thresholds" */
	int baseline;                  /* enum pg_plugin_baseline */
	int pr_thresholds;             /* enum pg_plugin_pr_thresholds */
	int mode;                      /* enum pg_plugin_mode; default gate */
	char *filter;                  /* POSIX ERE over test point names, or NULL */
	int only;                      /* enum pg_suite_kind, or -1 for all */
	long repeat;                   /* runs per point; 0 = as the suite says */
	bool confirm;                  /* re-run a regressed test once before failing */
	int annotate;                  /* enum pg_plugin_annotate */
	char *context;                 /* annotation context; NULL = perfgate-<gpu>-<step> */
	bool artifacts;                /* upload results and reports as artifacts */
	char *results_dir;             /* default "results" */
	struct pg_strv only_on_labels; /* run only on PRs with one of these labels */
	bool record_history;           /* append results to the history repository */
	char *history_repo;            /* git URL or path, or NULL */
	char *ab_history_repo;         /* where A/B results are recorded; NULL: history_repo */
	bool trends;                   /* render the trends site into <results-dir>/trends */
	bool fetch_datasets;           /* fetch missing dataset files (dataset_files_io.h) */
	int record_failure;            /* enum pg_plugin_record_failure */
	char *base_branch;             /* NULL = BUILDKITE_PIPELINE_DEFAULT_BRANCH */
	char *binary;                  /* a prebuilt perfgate to use, or NULL */
	char *binary_artifact;         /* the perfgate bundle's artifact path, or NULL */
	char *binary_step;             /* the step that uploads it (key, label or job id) */
	/* dynamic pipelines (buildkite/pipeline_emit.h) */
	char *shard;         /* "INDEX/COUNT": run only this slice of the tests, or NULL */
	struct pg_strv gpus; /* mode pipeline: the GPU queues to fan out over */
	long shards;         /* mode pipeline: steps per GPU; default 1 */
	char *queue;         /* mode pipeline: agents queue template; default "{gpu}" */
	/* baseline: ab: the suite's `ab:` section given as an option (the
	 * suite loader checks it: suite/config_ab_io.c), or NULL */
	json_t *ab;
};

enum pg_plugin_opt_type {
	PG_POPT_STRING,   /* char * */
	PG_POPT_BOOL,     /* bool */
	PG_POPT_INT,      /* long, >= min */
	PG_POPT_ENUM,     /* int: index into values (-1 when unset, no default) */
	PG_POPT_STRINGS,  /* struct pg_strv: a list of strings (a single string is a list of one) */
	PG_POPT_SUITES,   /* struct pg_plugin_suites */
	PG_POPT_REGEX,    /* char *, a valid POSIX extended regular expression */
	PG_POPT_SHARD,    /* char *, "INDEX/COUNT" with 1 <= INDEX <= COUNT */
	PG_POPT_ARTIFACT, /* char *, an artifact path: relative, no glob characters, *.tar.gz */
	PG_POPT_OBJECT, /* json_t *, a mapping (owned; NULL when not given), checked by its user */
};

/* The JSON Schema pattern of a PG_POPT_SHARD value; pg_shard_parse accepts
 * exactly these strings (and checks INDEX <= COUNT, which a pattern cannot). */
#define PG_SHARD_PATTERN "^[1-9][0-9]*/[1-9][0-9]*$"

/* The JSON Schema pattern of a PG_POPT_ARTIFACT value: what `buildkite-agent
 * artifact upload` stores as given and `download` finds exactly (no glob
 * characters, not absolute). The parser also refuses "." and ".." segments,
 * which a pattern without look-ahead cannot (Go's regexp, the agent's). */
#define PG_ARTIFACT_PATTERN "^[^/*?\\[\\]{}\\\\][^*?\\[\\]{}\\\\]*\\.tar\\.gz$"

struct pg_plugin_option {
	const char *name;
	enum pg_plugin_opt_type type;
	const char *const *values; /* PG_POPT_ENUM: allowed values, NULL-terminated */
	const char *default_value; /* as the user would write it; NULL: no default */
	long min;                  /* PG_POPT_INT */
	size_t offset;             /* of the field in struct pg_plugin_config */
	const char *description;   /* one sentence, for plugin.yml and the README */
};

extern const struct pg_plugin_option pg_plugin_options[];
extern const size_t pg_plugin_n_options;

/* Defaults for every option (what an empty configuration means). */
void pg_plugin_config_init(struct pg_plugin_config *c);
void pg_plugin_config_release(struct pg_plugin_config *c);

/*
 * Where an option was written, for messages: fill buf with a prefix such as
 * "pipeline.yml:14:11" and return it, or return NULL when unknown.
 */
typedef const char *(*pg_plugin_locate)(void *ctx, const char *option, char *buf, size_t size);

/*
 * Validate and read a step's configuration (a JSON object; NULL or null
 * means {}). out is initialised here (defaults first). Errors are
 * PG_ECONFIG and read "step 'perf-h100': option 'repeat': expected an
 * integer >= 1, got \"three\"" (step_label NULL: "plugin configuration: ...").
 * pg_plugin_config_parse_at prefixes the position the callback gives.
 */
int pg_plugin_config_parse(struct pg_plugin_config *out, const json_t *config,
			   const char *step_label, struct pg_error *err);
int pg_plugin_config_parse_at(struct pg_plugin_config *out, const json_t *config,
			      const char *step_label, pg_plugin_locate locate, void *ctx,
			      struct pg_error *err);

/*
 * The JSON Schema `configuration` object for plugin.yml: {"properties":
 * {...}, "additionalProperties": false}, one property per table entry with
 * type, enum, default and description. New reference, caller decrefs.
 */
json_t *pg_plugin_config_schema(void);

/* "run", "gate"...; NULL when out of range. */
const char *pg_plugin_enum_name(const char *option, int value);

#endif
