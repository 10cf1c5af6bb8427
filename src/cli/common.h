#ifndef PERFGATE_CLI_COMMON_H
#define PERFGATE_CLI_COMMON_H

/* Small pieces several commands share (option parsing is in cli/opt.h). */

/*
 * The options that choose a baseline, filling a struct pg_gate_source
 * (gate/gate_io.h) src: compare, gate and baseline show take the same ones. The
 * GPU is resolved separately (pg_gate_gpu_key) and set in src.gpu.
 */
#define PG_CMD_BASELINE_OPTS(src)                                                                   \
	{ PG_OPT_STRING,                                                                            \
	  "thresholds",                                                                             \
	  't',                                                                                      \
	  &(src).thresholds,                                                                        \
	  "PATH",                                                                                   \
	  "thresholds file, or the directory of <GPU>.yml files (default: thresholds)" },           \
		{ PG_OPT_STRING,                                                                    \
		  "baseline",                                                                       \
		  'b',                                                                              \
		  &(src).baseline,                                                                  \
		  "KIND",                                                                           \
		  "thresholds (the file's baselines, default) or git (the recorded run history)" }, \
		{ PG_OPT_STRING,                                                                    \
		  "repo",                                                                           \
		  0,                                                                                \
		  &(src).repo,                                                                      \
		  "PATH|URL",                                                                       \
		  "git: the history repository (default: the current one)" },                       \
		{ PG_OPT_STRING, "ref", 0,                                                          \
		  &(src).ref,    "REF", "git: the history ref (default: refs/perfgate/history)" },  \
	{                                                                                           \
		PG_OPT_STRING, "base", 0, &(src).base_branch, "BRANCH",                             \
			"git: the branch whose merge-base with HEAD bounds the history (default: "  \
			"$BUILDKITE_PULL_REQUEST_BASE_BRANCH, else main)"                           \
	}

struct pg_buf;
struct pg_error;
struct pg_import_opts;
struct pg_result_set;

/* A lookup over the process environment, for pure functions that take
 * one (pg_bkenv_load). ctx is unused. */
const char *pg_cmd_getenv(void *ctx, const char *name);

/*
 * The results of a run to compare or record: DIR's result files. A missing
 * directory or one without results is an infrastructure failure (PG_EINFRA:
 * the run that should have written them did not), named in err.
 */
int pg_cmd_load_results(struct pg_result_set *set, const char *dir, struct pg_error *err);

/*
 * pg_import_file (import/import_io.h), where "-" is stdin: its results
 * are named "stdin" unless the text names them, and messages say
 * "<stdin>". opts may be NULL.
 */
int pg_cmd_import_file(struct pg_result_set *out, const char *path,
		       const struct pg_import_opts *opts, struct pg_error *err);

/* Write b to stdout and flush: PG_EXIT_OK, or PG_EXIT_INFRA when stdout
 * failed (a full disk). A closed pipe counts as done. */
int pg_cmd_print(const struct pg_buf *b);

#endif
