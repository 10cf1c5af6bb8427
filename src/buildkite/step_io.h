#ifndef PERFGATE_BUILDKITE_STEP_IO_H
#define PERFGATE_BUILDKITE_STEP_IO_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "base/buf.h"
#include "base/strutil.h"
#include "buildkite/annotation.h"
#include "buildkite/job_env.h"
#include "baseline/thresholds_io.h"
#include "buildkite/plugin_config.h"
#include "results/metrics.h"
#include "results/result.h"
#include "suite/suite.h"

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

struct pg_bk_opts {
	FILE *log;                 /* progress; NULL: stderr */
	FILE *out;                 /* a generated pipeline outside Buildkite; NULL: stdout */
	const char *self_exe;      /* this perfgate, for commands that call it */
	const char *plugin_source; /* for generated pipelines; NULL: from the environment */
};

/*
 * Whether only-on-labels skips the step in this build: a pull request that
 * carries none of the labels. When it does, appends the reason to why
 * ("skipped: pull request #12 has no label perf (labels: docs)").
 */
bool pg_bk_skipped_for_labels(const struct pg_bkenv *env, const struct pg_plugin_config *c,
			      struct pg_buf *why);

/*
 * Run the step. Returns the exit code. Problems that end the step early
 * (configuration, nothing to run) are in err with the code's class;
 * problems after the run has started are annotated and logged, and only
 * decide the exit code.
 */
int pg_buildkite_main(const struct pg_bkenv *env, const json_t *config, const struct pg_bk_opts *o,
		      struct pg_error *err);

/* ------------------------------------------------------------------ */
/* The stages of the step, called by pg_buildkite_main (step_io.c):   */
/* step_run_io.c plans, runs, merges shards and emits pipelines;      */
/* step_gate_io.c compares with the baseline and records history.     */

struct pg_bkagent;
struct pg_gpu_info;

/*
 * The suite and the plan this step runs: the `suites` option (paths, or
 * the inline mapping), narrowed by filter, only and repeat, then by shard.
 * An empty selection is PG_ECONFIG (a step that runs nothing would pass).
 */
int pg_bk_plan(struct pg_suite *suite, struct pg_plan *plan, const struct pg_plugin_config *c,
	       const char *step, struct pg_error *err);

/*
 * The dataset files the plan reads, there (and as the suite's sha256 says)
 * before the step starts a server, fetched when fetch-datasets asks
 * (loadgen/dataset_files_io.h); SIGINT/SIGTERM end a fetch.
 */
int pg_bk_datasets(const struct pg_plan *plan, const struct pg_plugin_config *c, FILE *log,
		   struct pg_error *err);

/*
 * What a step needs before it runs anything (step_check_io.c), so that a
 * step that cannot be decided fails before the GPU time instead of
 * passing yellow after it: the plan's dataset files; where it gates
 * (modes gate and merge), a GPU, and its thresholds file (baseline:
 * thresholds; with "did you mean" for a misspelt gpu), a thresholds file
 * that loads; on a pull request with baseline: git, runs of the GPU in the
 * history. PG_ECONFIG for a configuration that cannot work, PG_EINFRA for
 * a history that is not there. A GPU perfgate does not know in a step
 * that does not gate is a line in warnings (may be NULL).
 */
struct pg_bk_pr;
struct pg_bk_check {
	const struct pg_plugin_config *c;
	const char *step;           /* for messages */
	const struct pg_plan *plan; /* the points the step runs; NULL: none here */
	const char *gpu_key;        /* NULL: not known yet (gpu: auto before detection) */
	const char *gpu_note;       /* why no GPU was detected, or NULL */
	const struct pg_bk_pr *pr;  /* a pull request's pinned base, or NULL */
	const struct pg_bkenv *env; /* NULL: no history check (perfgate buildkite --check) */
};
int pg_bk_check(const struct pg_bk_check *in, struct pg_strv *warnings, struct pg_error *err);

/* Keep only the points named in names (a confirmation re-run). */
void pg_bk_plan_points(struct pg_plan *plan, const struct pg_strv *names);

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
 * options that are not the pipeline's own are passed on to every step;
 * with binary-artifact, binary-step: job_id, this job, which uploads it).
 */
int pg_bk_pipeline_yaml(struct pg_buf *out, const struct pg_suite *suite,
			const struct pg_plugin_config *c, const json_t *config,
			const char *plugin_source, const char *job_id, struct pg_error *err);

/*
 * A pull request's base, pinned before anything of the pull request runs
 * (its benchmark commands could move refs in the checkout): the commit
 * whose thresholds file the gate reads (pr-thresholds: base-branch).
 */
struct pg_bk_pr {
	bool is_pr;
	const char *branch; /* the base branch (borrowed) */
	char rev[41];       /* the merge-base of HEAD and branch; "" when not found */
	char *error;        /* why not (owned), or NULL */
	/* the thresholds location when it lies outside the checkout, read now */
	struct pg_thresholds_pin pin;
};

/* The branch a pull request (or a build of another branch) compares with:
 * the PR's base branch, else base-branch, else the pipeline's default. */
const char *pg_bk_base_branch(const struct pg_plugin_config *c, const struct pg_bkenv *env);

/* Pin the base of a pull request build in the checkout around the cwd;
 * nothing for other builds. */
void pg_bk_pr_pin(struct pg_bk_pr *pr, const struct pg_plugin_config *c,
		  const struct pg_bkenv *env);
void pg_bk_pr_release(struct pg_bk_pr *pr);

/* What a pull request's build may not be judged on, found before it runs:
 * baseline: git without history-repo (a ref in the agent's checkout that
 * any earlier job there could write). PG_ECONFIG, or 0. */
int pg_bk_pr_check(const struct pg_bk_pr *pr, const struct pg_plugin_config *c,
		   struct pg_error *err);

/*
 * The comparison of a step's results with their baseline (gate/gate_io.h), in
 * the shapes the rest of the step needs: rows for the annotation, a
 * status, the points to confirm, baseline values for the charts.
 */
struct pg_bk_compare {
	bool compared; /* a baseline was found and compared */
	enum pg_annotation_status status;
	char *baseline_desc;            /* "thresholds/H100.yml", "git ... at <merge-base>" */
	char *note;                     /* why nothing was compared, or NULL */
	struct pg_strv rerun;           /* points a confirmation run should repeat */
	bool confirmed;                 /* decided with a confirmation run pooled */
	char *suspect;                  /* the job was sick and would have failed: why (a re-run
			       * decides), or NULL (telemetry/health.h) */
	enum pg_outcome outcome;        /* the gate's: pg_gate_exit_code's input */
	struct pg_gate_counts counts;   /* per test point, as `perfgate gate` counts */
	struct pg_strv metrics;         /* ids of the metrics that need attention, then of
				 * any other that regressed: the charts draw them */
	struct pg_annotation_row *rows; /* needing attention: failing first */
	size_t n_rows;
	struct pg_buf table; /* every row, as the annotation's comparison */
	size_t n_all_rows;
	struct pg_strv strings; /* storage behind rows */
	/* the evidence's trend charts, as written under results_dir
	 * ("evidence/<point>-<metric>.svg"), and their titles: the
	 * annotation shows them first */
	struct pg_strv evidence, evidence_titles;
	/* the evidence's lines (the first PG_EVIDENCE_MAX of ev_total), their
	 * files as paths under results_dir (pg_gate_link_files), for the
	 * annotation; strings in `strings` */
	struct pg_annotation_evidence *ev;
	size_t n_ev, ev_total;
	/* a pull request that changes its thresholds file: a warning, the
	 * change as a diff and its title; NULL when it does not */
	char *policy_note;
	char *policy_diff;
	char *policy_diff_title;
	/* the evidence's charts were not written (results_dir/evidence a
	 * symbolic link): why; NULL */
	char *warning;
	/* baseline: git: the jobs the history has at the merge-base (-1: not
	 * a git baseline), and how many the policy needs to judge a point */
	long history_runs, history_needed;
	void *impl; /* policy, baseline, comparison */
};

/*
 * Compare run (and, when confirm is not NULL, its confirmation re-run,
 * which must reproduce what the first run flagged) with the baseline the
 * configuration names, for gpu_key. The job health judged (telemetry) is
 * the re-run's when there is one. plan (may be NULL: unknown) names the
 * points the step planned: baseline points outside it are not in this
 * suite. Writes comparison.md and verdict.json into results_dir. A missing
 * baseline is not an error: out->compared is false and out->note says why.
 * Errors are configuration mistakes (a thresholds file that does not
 * parse) or git failures.
 */
int pg_bk_compare(struct pg_bk_compare *out, const struct pg_result_set *run,
		  const struct pg_result_set *confirm, const struct pg_strv *plan,
		  const struct pg_plugin_config *c, const struct pg_bkenv *env,
		  const struct pg_bk_pr *pr, const char *gpu_key, const char *results_dir,
		  struct pg_error *err);
void pg_bk_compare_release(struct pg_bk_compare *out);

/* The policy the comparison judged with (on a pull request, the base
 * branch's thresholds unless pr-thresholds says otherwise), or NULL when
 * there was no comparison. Owned by c. */
const struct pg_policy *pg_bk_compare_policy(const struct pg_bk_compare *c);
/* The comparison itself (with the re-run when there was one), or NULL:
 * none was made. Owned by c. */
const struct pg_comparison *pg_bk_compare_comparison(const struct pg_bk_compare *c);

/* The plan in a results directory's perfgate_run.json (pg_gate_read_plan). */
int pg_bk_read_plan(struct pg_strv *out, bool *found, const char *dir, struct pg_error *err);

/* The baseline value of a metric of a point (pg_chart_baseline_fn over a
 * struct pg_bk_compare). */
int pg_bk_baseline_value(void *cmp, const char *point, const struct pg_metric *m, double *out);

struct pg_history_recorded;

struct pg_ab_summary;

/*
 * Record run in the git history (record-history on the default branch):
 * its recordable points (baseline/history_check.h), replacing this
 * build's earlier record of them (a retried job). With ab (baseline: ab,
 * any branch), the A/B step's results instead, apart from the runs of
 * main (pg_history_record_ab; run is the head side): the head commit, the
 * base (the merge-base with the pull request's base branch, when the
 * checkout has it) and the pull request. out is initialised here; the
 * caller releases it, also on error.
 */
int pg_bk_record_history(const struct pg_result_set *run, const struct pg_ab_summary *ab,
			 const struct pg_plugin_config *c, const struct pg_bkenv *env,
			 const char *gpu_key, const struct pg_bk_compare *judged,
			 struct pg_history_recorded *out, struct pg_error *err);

#endif
