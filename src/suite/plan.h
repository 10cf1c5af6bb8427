#ifndef PERFGATE_SUITE_PLAN_H
#define PERFGATE_SUITE_PLAN_H

#include "suite/suite.h"

struct pg_buf;
struct pg_error;

/*
 * Choosing what to run from an expanded plan (suite/suite.h pg_plan_build),
 * the values of a point's runtime {placeholders}, and the --dry-run
 * listing. Pure: no I/O.
 */

struct pg_selection {
	const char *filter; /* POSIX ERE matched against point names; NULL: all */
	int only;           /* enum pg_suite_kind, or -1 for every kind */
	long repeat;        /* > 0: runs per point for every test; 0: the suite's */
	const char *shard;  /* "INDEX/COUNT": only the tests of that shard of the whole
	                       * suite (buildkite/pipeline_emit.h pg_shard_tests); NULL: all */
};

#define PG_SELECTION_INIT                                                                          \
	{                                                                                          \
		NULL, -1, 0, NULL                                                                  \
	}

/*
 * Apply sel->repeat to the suite's tests, expand the suite into out (which
 * must be empty) and keep the points that match. A selection that leaves
 * nothing is PG_ECONFIG (a CI step that silently runs nothing would pass),
 * and so are a bad regular expression and a bad shard.
 */
int pg_plan_select(struct pg_plan *out, struct pg_suite *suite, const struct pg_selection *sel,
		   struct pg_error *err);

/*
 * The runtime placeholders of a point, for pg_template_argv/_shell: the
 * test's own variables (pg_test_var) plus port, host, base_url, result,
 * results_dir, start (a startup test's start number; "0" elsewhere), and for an external command of a serving test the point's
 * point (its name), qps ("inf" when unbounded) and max_concurrency ("inf"
 * when unbounded). The runner fills in real values; --dry-run shows {port}.
 * Strings are borrowed.
 */
struct pg_point_vars {
	const struct pg_test *test;
	const struct pg_point *point; /* for {point}, {qps}, {max_concurrency}; NULL in a
	                               * server command (one server serves every point) */
	const char *port;
	const char *host;
	const char *base_url;
	const char *result; /* where an external command writes its result */
	const char *results_dir;
	const char *start; /* a startup test's start, "1" up (runner/startup_io.h); NULL: "0" */
	/* a deployment role's own: {replica}, {tp}, {<role>_urls},
	 * {<role>_ports} (docs/deployments.md), looked up before the test's;
	 * NULL: none */
	const struct pg_kvlist *role_vars;
	char scratch[32];
};

/* A pg_template_lookup over struct pg_point_vars. */
const char *pg_point_var(void *vars, const char *name);

/* Set a role's own vars for one of its replicas: {replica} (the index,
 * or a placeholder for --dry-run) and {tp}, the role's tp rather than the
 * test's. */
void pg_role_vars_set(struct pg_kvlist *vars, const struct pg_role_spec *role, const char *replica);

struct pg_dryrun_opts {
	const char *results_dir; /* for {result}; NULL: "results" */
	const char *gpu;         /* forced GPU, or NULL (detected at run time) */
	size_t total_points;     /* before selection; 0: same as the plan */
	const char *vllm;        /* what commands run for `vllm` (--vllm), or NULL */
};

/*
 * The --dry-run listing: every point with its index, name, kind, model and
 * tp, the exact server command (argv as it would be exec'ed, shell-quoted,
 * with {port} standing for the port chosen at run time) or the remote URL
 * or the external command with its {result} path, the environment (secret
 * values as ***), and the client settings: endpoint, dataset, lengths,
 * prompts, rate, concurrency, burstiness, seed, repeat.
 */
void pg_dryrun_render(struct pg_buf *out, const struct pg_suite *suite, const struct pg_plan *plan,
		      const struct pg_dryrun_opts *opts);

#endif
