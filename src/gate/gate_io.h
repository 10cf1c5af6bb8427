#ifndef PERFGATE_GATE_GATE_IO_H
#define PERFGATE_GATE_GATE_IO_H

#include <stdbool.h>
#include <stddef.h>

#include "gate/compare.h"
#include "results/results_io.h"

struct pg_buf;
struct pg_error;
struct pg_thresholds_origin;
struct pg_thresholds_pin;

/*
 * The gate's edges, for the commands (compare, gate, baseline) and for
 * anything that embeds the comparison (the Buildkite step):
 *
 *   struct pg_result_set run = PG_RESULT_SET_INIT;
 *   pg_results_load_dir(&run, "results", &err);
 *   pg_gate_gpu_key(gpu, sizeof(gpu), NULL, &run, &err);
 *   pg_gate_load(&policy, &base, &(struct pg_gate_source){ .thresholds = "thresholds",
 *                .gpu = gpu }, &err);
 *   points = pg_gate_points(&run);
 *   pg_compare(&cmp, &policy, &base, points, run.n, NULL, 0, NULL);
 *   pg_comparison_markdown(&md, &cmp);  // or pg_comparison_json(&cmp)
 */

/* The run points of a result set: an array of set->n, borrowing from set.
 * Caller frees the array (not the strings). */
struct pg_cmp_point *pg_gate_points(const struct pg_result_set *set);

/*
 * The GPU key the comparison is for: forced (a --gpu value), else the
 * PERFGATE_GPU environment variable, else the key the results record (they
 * must agree), else the GPUs nvidia-smi reports on this machine. out gets
 * the key ("H100"). PG_ECONFIG when results disagree or nothing says which
 * GPU it is.
 */
int pg_gate_gpu_key(char *out, size_t size, const char *forced, const struct pg_result_set *set,
		    struct pg_error *err);

/* Where the baseline comes from. */
struct pg_gate_source {
	const char *thresholds;  /* thresholds file or directory; NULL: "thresholds" */
	const char *gpu;         /* baseline key */
	const char *baseline;    /* "thresholds" (NULL too): the file's baselines; "git": the
				   * recorded run history (anything else is PG_ECONFIG) */
	const char *repo;        /* git: history repository path or URL; NULL: the current one */
	const char *ref;         /* git: history ref; NULL: refs/perfgate/history */
	const char *base_branch; /* git: NULL: $BUILDKITE_PULL_REQUEST_BASE_BRANCH or main */
	const char *source_repo; /* git: where HEAD and the base branch live; NULL: cwd */
	/* a pull request's base: read the thresholds file (policy and
	 * baselines) as this commit has it, not the working tree's copy, and
	 * fill origin (may be NULL) with how the two differ
	 * (baseline/thresholds_io.h pg_thresholds_load_at); NULL: the file */
	const char *thresholds_rev;
	struct pg_thresholds_origin *origin;
	/* a location outside the checkout, read before a pull request's
	 * commands ran (baseline/thresholds_io.h): its copy, not the file's
	 * present content, is the policy; NULL or not outside: the file */
	const struct pg_thresholds_pin *pinned;
};

/*
 * Load the policy (from the thresholds file; registry defaults when the file
 * does not exist and the baseline comes from git) and the baseline, both
 * initialised here (zeroed structs are fine to release before). A missing
 * thresholds file with a thresholds baseline is PG_ENOTFOUND with a
 * message saying how to create it.
 */
int pg_gate_load(struct pg_policy *policy, struct pg_baseline *base,
		 const struct pg_gate_source *src, struct pg_error *err);

/*
 * What the gate found regressed in the run of dir, from the verdict.json a
 * comparison wrote there (pg_comparison_regressed's shape, rebuilt from its
 * rows): *out NULL when the directory has none (the run was not judged).
 * A verdict.json that does not parse is PG_EINFRA.
 */
int pg_gate_read_regressed(json_t **out, const char *dir, struct pg_error *err);

/*
 * The points a results directory's run planned: the names in its
 * perfgate_run.json manifest (written by `perfgate run`). *found is false
 * (and out empty) when the directory has none (results from elsewhere),
 * and a manifest that does not parse is PG_EINFRA.
 */
int pg_gate_read_plan(struct pg_strv *out, bool *found, const char *dir, struct pg_error *err);

/*
 * The files behind each evidence row (pg_cmp_row.files): its point's result
 * JSON in run (loaded from a directory) and the server log next to it
 * (perfgate.deployment's front role's log, else <test>.server.log, else
 * <point>.command.log), and the same in confirm (may be NULL), as paths
 * relative to out_dir, where comparison.md goes. Only regular files (not
 * a link: the plugin uploads neither) whose names an artifact upload takes
 * (none of * ? [ ] { } ; \) are linked; a row's file that is not there is
 * NULL. The server logs are written redacted (sys/proc.h).
 */
void pg_gate_link_files(struct pg_comparison *c, const struct pg_result_set *run,
			const struct pg_result_set *confirm, const char *out_dir);

/* Write <dir>/comparison.md and <dir>/verdict.json (atomically; dir is
 * created), and the evidence's trend charts into <dir>/evidence (their
 * names in evidence/.perfgate-charts; an earlier comparison's charts
 * removed, no other file). md_out (may be NULL) gets the markdown
 * appended, for printing without rendering it twice. Charts that cannot
 * be written (evidence/ a symbolic link: never written through) are no
 * error: *warning (may be NULL) says why, and stays clear otherwise. */
int pg_comparison_write(const struct pg_comparison *c, const char *dir, struct pg_buf *md_out,
			struct pg_error *warning, struct pg_error *err);

#endif
