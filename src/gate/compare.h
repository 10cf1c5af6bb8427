#ifndef PERFGATE_GATE_COMPARE_H
#define PERFGATE_GATE_COMPARE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "results/metrics.h"
#include "base/strutil.h"
#include "suite/suite.h"

struct pg_buf;
struct pg_error;

/*
 * The gate: compare every test point x metric of a run with its baseline
 * and give each a verdict, deciding on the whole step at once: docs/gate.md
 * ("The decision") says how, and docs/design/gate-policy.md the policy the
 * first gate started from and why.
 *
 *   policy    how results are judged: tolerances, floors, which metrics gate
 *             and which only warn, the step's false-alarm budget...
 *             (thresholds/<GPU>.yml "policy:", else the registry defaults)
 *   baseline  reference values per point and metric, from a thresholds file
 *             or from the run history in git (one value per recorded job)
 *   current   the run's result objects (and optionally a confirmation re-run)
 *
 * The job (one agent, one session) is the unit of evidence: a job's repeats
 * make its median; its common offset, shared by every point, is told apart
 * from a change at one point; every gated (point, metric) pair of the step
 * shares one false-alarm budget; and a confirmation re-run must reproduce a
 * regression on its own (gate/compare_step.c).
 *
 * Everything here is pure: loading and writing live in the *_io.c files
 * (gate/gate_io.c and those of baseline/).
 */

enum pg_verdict {
	PG_VERDICT_REGRESSED,      /* worse beyond tolerance, significant for the step */
	PG_VERDICT_NOT_REPRODUCED, /* the first run regressed, the re-run did not */
	PG_VERDICT_NOISY,          /* beyond tolerance, not significant for the step */
	PG_VERDICT_ERROR,          /* the point failed (status error/cancelled) */
	PG_VERDICT_MISSING,        /* planned, not produced (or not in the run) */
	PG_VERDICT_INSUFFICIENT,   /* too little baseline history to judge */
	PG_VERDICT_IMPROVED,       /* better beyond tolerance */
	PG_VERDICT_NEW,            /* in the run, not in the baseline */
	PG_VERDICT_UNCHANGED,      /* within tolerance or under the floor */
	PG_VERDICT_COUNT
};

/* "regressed", "not-reproduced", "noisy", "error", "missing",
 * "insufficient-data", "improved", "new", "unchanged". */
const char *pg_verdict_name(enum pg_verdict v);

/* What a row (or the whole comparison) means for the gate. Ordered by
 * severity: the comparison's outcome is its worst row's. */
enum pg_outcome {
	PG_OUTCOME_PASS,
	PG_OUTCOME_WARN,  /* pass, with something to look at */
	PG_OUTCOME_INFRA, /* results needed for the decision are missing or errored: exit 3 */
	PG_OUTCOME_FAIL,  /* a (confirmed) regression of a gating metric: exit 1 */
};

/* "pass", "warn", "error", "fail". */
const char *pg_outcome_name(enum pg_outcome o);
/* 0, 0, 3, 1 */
int pg_outcome_exit_code(enum pg_outcome o);

/* ------------------------------------------------------------------ */
/* Policy                                                              */

/* How one test point x metric is judged. */
struct pg_rule {
	bool gate;           /* a regression fails the gate; else it only warns */
	double tolerance;    /* relative change tolerated in the worse direction */
	bool tolerance_set;  /* a policy or thresholds file named it (else the
			      * registry's default, which a quiet history narrows:
			      * PG_NARROW_SIGMAS) */
	double floor;        /* absolute change (display units) below which nothing changed */
	double escalate;     /* a warn-only metric still fails when worse by more
			       * than this (relative); 0 = never */
	double noise_sigmas; /* baselines that give no job-to-job spread to test
			       * against (thresholds files): widen the tolerance to this
			       * many sds of the baseline's recorded run-to-run noise */
	bool certify;        /* a tail metric (p90, p99...) is decided only when the run
			       * has the samples MLPerf's early-stopping rule needs to
			       * certify its percentile (gate/compare_tails.h); default on */
	double limit;        /* an SLO: the value (display units) the metric must meet
			       * whatever the baseline, a minimum for higher-is-better
			       * metrics and a maximum otherwise (gate/compare_slo.h);
			       * NAN: none */
};

/* Which fields of a pg_rule a policy entry sets. */
enum {
	PG_RULE_GATE = 1 << 0,
	PG_RULE_TOLERANCE = 1 << 1,
	PG_RULE_FLOOR = 1 << 2,
	PG_RULE_ESCALATE = 1 << 3,
	PG_RULE_NOISE_SIGMAS = 1 << 4,
	PG_RULE_CERTIFY = 1 << 5,
	PG_RULE_LIMIT = 1 << 6,
};

struct pg_rule_patch {
	unsigned set;        /* PG_RULE_* bits */
	struct pg_rule rule; /* only the fields named in set count */
};

/* "metrics: <id>: {...}" or "tests: <pattern>: <id>: {...}". */
struct pg_policy_entry {
	char *pattern; /* test point name or fnmatch(3) glob; NULL for metrics: */
	char *metric;  /* metric id, or "*" for every metric of the test */
	struct pg_rule_patch patch;
	int line; /* where it was written (0: not from a file) */
};

struct pg_policy {
	/* the step: the share of clean builds the gate may fail (family-wise
	 * over every gated point x metric pair), and how many unflagged points
	 * a confirmation re-run repeats to measure its own job's offset */
	double step_false_alarm; /* default PG_DEFAULT_STEP_FALSE_ALARM */
	long rerun_anchors;      /* default PG_DEFAULT_RERUN_ANCHORS */
	/* settings that apply to every metric unless an entry overrides them */
	double noise_sigmas; /* default PG_DEFAULT_NOISE_SIGMAS */
	double escalate;     /* tail-class metrics: default PG_DEFAULT_ESCALATE */
	long min_history;    /* git baselines: fewer jobs -> insufficient-data; default 5 */
	long history_window; /* git baselines: the last K jobs; default 20 */
	long persist;        /* git baselines: runs at a new level before the level
			      * follows it (a change on main is reported); default 2 */
	struct pg_policy_entry *entries; /* in file order; later entries win */
	size_t n_entries;
	size_t cap_entries;
};

#define PG_DEFAULT_STEP_FALSE_ALARM 0.05
#define PG_DEFAULT_RERUN_ANCHORS    6
#define PG_DEFAULT_NOISE_SIGMAS     1.6
#define PG_DEFAULT_ESCALATE         0.08
#define PG_DEFAULT_MIN_HISTORY      5
#define PG_DEFAULT_HISTORY_WINDOW   20
#define PG_DEFAULT_PERSIST          2
/* A gating metric's default tolerance is a ceiling: where its history
 * measures the noise, the tolerance narrows to this many sds of it, down
 * to PG_MIN_TOLERANCE (a dedicated node's 0.2% catches 2%, a fleet's 1%
 * keeps 2.5%) */
#define PG_NARROW_SIGMAS 4.0
#define PG_MIN_TOLERANCE 0.01

/* The defaults above and no entries. */
void pg_policy_init(struct pg_policy *p);
void pg_policy_release(struct pg_policy *p);
/* Append an entry (strings copied). */
void pg_policy_add(struct pg_policy *p, const char *pattern, const char *metric,
		   const struct pg_rule_patch *patch, int line);

/*
 * The rule for one point and metric: the registry's defaults for the metric
 * (gated, tolerance, floor; tail metrics escalate at policy->escalate), the
 * policy's global settings, then every matching entry in order: "metrics:"
 * entries first, then "tests:" entries whose pattern matches the point name
 * or its test name (test may be NULL).
 */
void pg_policy_rule(const struct pg_policy *p, const char *point, const char *test,
		    const struct pg_metric *m, struct pg_rule *out);

/* ------------------------------------------------------------------ */
/* Runs                                                                */

/* One point of a run (a result file), as the gate reads it. Borrowed. */
struct pg_cmp_point {
	const char *name; /* result file stem */
	enum pg_suite_kind suite;
	const char *status;   /* "ok", "error", "skipped", "cancelled" */
	const json_t *result; /* the result object */
	const char *gpu;      /* raw GPU string (results/results_io.h pg_result_gpu), or NULL */
	bool probe;           /* an SLA search probe (perfgate.adaptive_search): its
				    * concurrency moves from run to run, so comparisons,
				    * baselines and history leave it out */
	const char *host;     /* the job that ran it: host and the run's start
			       * (perfgate.host, perfgate.run_started_at); the shards
			       * of a merged build are different jobs, each with its own
			       * offset. NULL: unknown (one job with the others) */
	const char *run_started;
};

/* Run points by name, for lookups in runs of any size: pointers sorted by
 * name, points of the same name in input order (the first one wins). */
struct pg_cmp_index {
	const struct pg_cmp_point **v;
	size_t n;
};

/* Index the n points at pts (borrowed; points without a name are left
 * out). */
void pg_cmp_index_init(struct pg_cmp_index *ix, const struct pg_cmp_point *pts, size_t n);
/* The first point called name, or NULL. */
const struct pg_cmp_point *pg_cmp_index_find(const struct pg_cmp_index *ix, const char *name);
void pg_cmp_index_release(struct pg_cmp_index *ix);

/* One run (a results directory, one report, one job) of several points. */
struct pg_cmp_run {
	const char *label; /* where it came from, for "source:" */
	const struct pg_cmp_point *points;
	size_t n;
};

/* ------------------------------------------------------------------ */
/* Baselines                                                           */

struct pg_base_metric {
	const struct pg_metric *metric;
	double value;    /* the baseline: median of the runs, or as published */
	double *samples; /* per-repeat values or per-run summaries (owned; NULL
			       * when only a value) */
	size_t n_samples;
	long *jobs;   /* git history: samples[i] is the median of job jobs[i]
			       * (an index into pg_baseline.jobs), so the step's points
			       * line up job by job; NULL otherwise (owned) */
	double noise; /* relative sd between runs (from history), NAN if unknown */
	long runs;    /* runs or records behind value */
	int line;     /* thresholds file line; 0 if none */
	/* git history: the level is its latest segment (samples, jobs: its
	 * last history_window jobs), the spread comes from every segment of
	 * the analysed span: each job's median (oldest first), its job and
	 * the segment it belongs to (0 the oldest; a change point of this
	 * point and metric starts the next). NULL, 0 otherwise (owned). */
	double *span;
	long *span_jobs;
	int *span_seg;
	size_t n_span;
	long level_from; /* first job of the latest segment; -1: no change point */
	/* the newest job of the span, when main's gate found this metric
	 * regressed there (the record says so): a later run at that level is
	 * main's known change, not a new one; -1 otherwise */
	long known_job;
	/* the newest job of the span (-1: none): on a pull request, a run at
	 * the level main's newest run already shows is main's change, whatever
	 * main's own gate said of it */
	long newest_job;
};

struct pg_base_point {
	char *name; /* test point: result file stem */
	enum pg_suite_kind suite;
	char *test;           /* test name without the qps/concurrency suffix, or NULL */
	double qps;           /* serving: INFINITY for inf; NAN when unknown */
	long max_concurrency; /* serving: 0 unbounded; -1 unknown */
	char *gpu;            /* the GPU label the values were measured on ("8xH100") */
	char *source;         /* where the values came from */
	char *date;           /* ISO 8601 date of the measurement, or NULL */
	char *commit;         /* source commit, or NULL */
	long runs;            /* runs (jobs) behind the values */
	long repeats;         /* samples per run, 1 for published figures */
	char *insufficient;   /* non-NULL: why this point cannot be judged (git: too
			       * few records); its metrics still show values */
	bool aged;            /* git: not recorded in the last history_window jobs
			       * (dropped from the suite?): a run without it does not
			       * miss it */
	struct pg_base_metric *metrics;
	size_t n_metrics;
	size_t cap_metrics;
	int line;
};

/* A recorded job of a git history baseline (one `baseline record`). */
struct pg_base_job {
	char *commit; /* the source commit it measured, or NULL */
	char *date;   /* ISO 8601, or NULL */
};

/* A change point found in the history: from job `job` on, the level of a
 * metric moved by `shift` (relative, worse > 0) at one point, or at every
 * point when point is NULL (a whole-run change). */
struct pg_base_change {
	char *point; /* NULL: common to the step's points */
	const struct pg_metric *metric;
	long job;     /* first job at the new level */
	double shift; /* relative, in the metric's worse direction */
};

struct pg_baseline {
	char *gpu;    /* the baseline key: "H100" */
	char *kind;   /* "thresholds" or "git" */
	char *source; /* thresholds path, or "<repo> <ref> at <merge-base>" */
	struct pg_base_point *points;
	size_t n;
	size_t cap;
	bool sorted; /* points are in name order (pg_baseline_sort): lookups
			       * bisect instead of scanning */
	/* git history baselines */
	struct pg_base_job *jobs; /* oldest first */
	size_t n_jobs, cap_jobs;
	struct pg_base_change *changes; /* the history's change points */
	size_t n_changes, cap_changes;
};

#define PG_BASELINE_INIT                                                                           \
	{                                                                                          \
		0                                                                                  \
	}

void pg_baseline_release(struct pg_baseline *b);
/* The point called name, or NULL. O(log n) once sorted, O(n) before. */
struct pg_base_point *pg_baseline_find(const struct pg_baseline *b, const char *name);
/* Append a zeroed point named name (qps NAN, concurrency -1). */
struct pg_base_point *pg_baseline_add(struct pg_baseline *b, const char *name,
				      enum pg_suite_kind suite);
/* Give bm the span of a git history (pg_base_metric.span; copied). */
void pg_base_metric_set_span(struct pg_base_metric *bm, const double *v, const long *jobs,
			     const int *seg, size_t n);
/* Append a metric; samples copied (may be NULL), value NAN = their median. */
struct pg_base_metric *pg_base_point_add_metric(struct pg_base_point *p, const struct pg_metric *m,
						double value, const double *samples,
						size_t n_samples);
/*
 * Append a metric measured over k runs (jobs), given each run's median: the
 * value is their median, the samples are the run medians, and the noise is
 * their robust relative spread (1.4826 MAD / median) when k >= 3.
 */
struct pg_base_metric *pg_base_point_add_runs(struct pg_base_point *p, const struct pg_metric *m,
					      const double *run_medians, size_t k);
/* The same, for a git history: run_medians[i] is job jobs[i]'s median. */
struct pg_base_metric *pg_base_point_add_jobs(struct pg_base_point *p, const struct pg_metric *m,
					      const double *run_medians, const long *jobs,
					      size_t k);
/* Append a job (strings copied) and return its index. */
long pg_baseline_add_job(struct pg_baseline *b, const char *commit, const char *date);
/* Append a change point (point copied; NULL: common). */
void pg_baseline_add_change(struct pg_baseline *b, const char *point, const struct pg_metric *m,
			    long job, double shift);
const struct pg_base_metric *pg_base_point_metric(const struct pg_base_point *p,
						  const struct pg_metric *m);
/* Sort points by name, so files and reports are stable. */
void pg_baseline_sort(struct pg_baseline *b);

/*
 * Baseline points from one or more runs of the same tests (the sources of
 * `perfgate baseline update`). Points whose status is not "ok" are left out
 * and named in skipped (if not NULL). With one run a metric's samples are
 * its repeats and its value their median; with several, each run counts
 * once: the samples are the run medians, the value their median and the
 * noise their spread. Points are added to out (which should be empty) and
 * sorted. SLA search probes are left out.
 */
void pg_baseline_from_runs(struct pg_baseline *out, const struct pg_cmp_run *runs, size_t n_runs,
			   struct pg_strv *skipped);

/* A result's date as YYYY-MM-DD (perfgate.started_at, or vLLM's
 * "date": "20250526-040420"), into out; "" when it has none. */
void pg_result_date(char out[16], const json_t *result);

/* ------------------------------------------------------------------ */
/* Result objects                                                      */

/* A result's request rate: perfgate.params.qps, else vLLM's request_rate
 * (a number or "inf"); NAN when it has neither. */
double pg_result_qps(const json_t *result);
/* Its max_concurrency (perfgate.params, else vLLM's key): 0 for null
 * (unbounded), -1 when absent. */
long pg_result_max_concurrency(const json_t *result);

/* The samples of a metric in a result object: one per perfgate.repeats
 * entry that has it, but the cold first run perfgate.cold_repeat names
 * (results/cold.h), else the top-level value. Returns the count; *out is
 * owned by the caller (NULL when 0). */
size_t pg_result_samples(const json_t *result, const struct pg_metric *m, double **out);

/* ------------------------------------------------------------------ */
/* A whole comparison                                                  */

/* One run's evidence on one (point, metric) pair, or on a metric's change
 * common to the whole run. Relative changes are signed as measured
 * (current / baseline - 1); p-values are one-sided, in the worse
 * direction. */
struct pg_cmp_side {
	double current;    /* the job's median (a whole-run side: NAN) */
	double change;     /* current / baseline - 1 */
	double effect;     /* what is judged: for a point, its change beyond the
			    * run's common change; for a whole run, the common
			    * change; for a point judged alone, its change */
	double p_value;    /* NAN: no test (tolerance only) */
	double p_adjusted; /* Holm-adjusted within the step's family; NAN */
	size_t n;          /* samples (repeats); points for a whole-run side */
	bool flagged;      /* regressed beyond the failing threshold in this run */
	/* the PG_CI_LEVEL interval of effect (as measured, low <= high): the
	 * gate's own t test inverted (gate/compare_stats.h
	 * pg_cmpstat_t_interval); NAN when nothing measured its noise */
	double ci_low, ci_high;
	/* no interval: why, in a few words ("too few runs to measure the
	 * run-to-run noise"); a static string; NULL with an interval */
	const char *ci_missing;
};

/* The level of the effects' confidence intervals. */
#define PG_CI_LEVEL 0.95

/* How a pair was judged (docs/gate.md, "The decision"). */
enum pg_cmp_method {
	PG_METHOD_NONE,      /* not decided (missing, new, insufficient...) */
	PG_METHOD_STEP,      /* vs the run's other points, noise from the history */
	PG_METHOD_HISTORY,   /* alone, vs the history's job-to-job spread */
	PG_METHOD_CROSSWISE, /* vs the run's other points, noise from their spread */
	PG_METHOD_TOLERANCE, /* tolerance only: nothing to measure noise with */
};

/* "", "step", "history", "crosswise", "tolerance". */
const char *pg_cmp_method_name(enum pg_cmp_method m);

/* What a row's baseline value rests on (verdict.json "basis"; the words of
 * the evidence are pg_cmp_row.basis). Strings are the comparison's
 * (pg_comparison.texts), NULL when unknown. */
enum pg_basis_kind {
	PG_BASIS_NONE,       /* no baseline value */
	PG_BASIS_HISTORY,    /* the recorded runs of main (git) */
	PG_BASIS_THRESHOLDS, /* a thresholds file's value */
};

/* "", "history", "thresholds". */
const char *pg_basis_kind_name(enum pg_basis_kind k);

struct pg_cmp_basis {
	enum pg_basis_kind kind;
	size_t runs;                            /* jobs (runs) behind the value */
	size_t repeats;                         /* thresholds: samples when one run; 0 */
	const char *first_commit, *last_commit; /* history: the window's ends;
						  * thresholds: the value's commit (both) */
	const char *first_date, *last_date;
	const char *source; /* thresholds: where the value came from (the
			     * point's source:); NULL: the comparison's
			     * baseline_source says */
	int line;           /* thresholds file line of the value; 0 */
};

/* The baseline window of a regressed row, for its trend chart: the runs'
 * values oldest first, with their commits and dates (NULL when unknown;
 * the comparison's strings). */
struct pg_cmp_trail {
	double *y;
	const char **commit, **date;
	size_t n;
	size_t from; /* the first run the test used (after a whole-run change
		      * point, pg_cmp_row.base_from): the chart's window
		      * starts there; 0 */
};

/* What a regressed row judged against a thresholds file has to draw in
 * place of a trail (no runs of main): the baseline's samples (the repeats
 * of one run, or each run's median: per_run) and, for a point judged
 * against the run's other points (crosswise), their changes. */
struct pg_cmp_spread {
	double *samples; /* display units; NULL when the file has only a value */
	size_t n_samples;
	bool per_run;
	double *peers; /* the changes of the run's other points of the metric
			* judged with it (the same job), as measured */
	size_t n_peers;
};

/* The files behind an evidence row, relative to the comparison's
 * directory (gate/gate_io.h pg_gate_link_files): NULL when not there. */
struct pg_cmp_files {
	char *result, *log;             /* the first run's result JSON and server log */
	char *rerun_result, *rerun_log; /* the confirmation re-run's */
};

struct pg_cmp_row {
	char *point;
	char *test; /* NULL when unknown */
	enum pg_suite_kind suite;
	double qps;                     /* NAN unknown, INFINITY inf */
	long max_concurrency;           /* 0 unbounded, -1 unknown */
	const struct pg_metric *metric; /* NULL for a whole-point row (error, missing point) */
	struct pg_rule rule;
	double baseline;   /* NAN when absent */
	double current;    /* the first run's median; NAN when absent */
	double change;     /* current / baseline - 1; NAN */
	double effect;     /* the judged change (pg_cmp_side.effect), NAN */
	double run_change; /* the run's change common to its points, NAN */
	double tolerance;  /* effective tolerance; NAN for missing/new */
	double noise;      /* the sd (relative) the test expected of effect, NAN */
	double p_value;    /* the deciding run's, NAN when no test ran */
	double p_adjusted; /* Holm-adjusted over the step's family, NAN */
	size_t n_baseline; /* jobs (or samples) behind the baseline */
	size_t n_current;  /* samples behind current */
	enum pg_cmp_method method;
	/* PG_METHOD_TOLERANCE with a p-value: what measured the noise
	 * ("the run-to-run noise the thresholds file records", ...); NULL */
	const char *noise_source;
	struct pg_cmp_side first; /* the first run */
	struct pg_cmp_side rerun; /* the confirmation re-run (n == 0: none) */
	enum pg_verdict verdict;
	enum pg_outcome outcome;
	bool confirmed;               /* flagged, re-run, and the re-run reproduced it */
	bool needs_confirmation;      /* flagged, and no re-run was given */
	char *note;                   /* one short human sentence, or NULL */
	char *basis;                  /* the baseline behind the value: "median of 5 runs of
				  * main, 1a2b3c4d5e6f..9f8e7d6c5b4a (2026-11-01 to
				  * 2026-11-05)", or where a thresholds file's value
				  * came from; NULL without a baseline */
	struct pg_cmp_basis base_of;  /* the same, for programs */
	double ci_low, ci_high;       /* first.ci_low, first.ci_high */
	struct pg_cmp_trail *trail;   /* the evidence's rows (pg_comparison_evidence_rows,
				      * the first PG_EVIDENCE_MAX) with a baseline's
				      * samples: the window to chart; NULL otherwise */
	struct pg_cmp_spread *spread; /* the same rows against a thresholds file
				       * (tolerance, crosswise): what they chart */
	char *chart;                  /* the trail's (or spread's) chart, relative to the
				      * comparison's directory:
				      * "evidence/<point>-<metric>.svg", unique in the
				      * comparison; NULL without either */
	struct pg_cmp_files *files;   /* evidence rows' files, once linked; NULL */
	long base_from;               /* the first job of the history the test used: a
				      * whole-run change point's (basis and trail
				      * start there); 0: the whole window */
	bool known;                   /* at the level main's gate already found regressed
				       * in main's newest run: main's known change (a
				       * warning), not a new one */
	double catchable;             /* the smallest change (relative, in the worse
				       * direction, as measured) the test could fail on
				       * alone: the threshold, or the noise the
				       * step's budget lets through; NAN */
};

/* A metric's change common to every point of a run (its job's offset),
 * judged against the history's spread of job offsets. */
struct pg_cmp_common {
	const struct pg_metric *metric;
	enum pg_suite_kind suite;
	enum pg_cmp_method method; /* STEP (history) or TOLERANCE */
	size_t job;                /* which job of the run (0; shards: 0, 1, ...) */
	size_t points;             /* points behind the estimate */
	double spread;             /* relative sd of the history's job offsets; NAN */
	double tolerance;          /* the failing threshold */
	struct pg_cmp_side first, rerun;
	enum pg_verdict verdict; /* regressed, not-reproduced, noisy, improved, unchanged */
	enum pg_outcome outcome;
	char *note;
};

struct pg_comparison {
	char *gpu;
	char *baseline_kind;
	char *baseline_source;
	struct pg_cmp_row *rows; /* point order, then registry metric order */
	size_t n;
	size_t cap;
	struct pg_cmp_common *commons; /* registry metric order */
	size_t n_commons, cap_commons;
	size_t jobs; /* jobs that ran the points (shards of a merged build) */
	size_t counts[PG_VERDICT_COUNT];
	size_t failing; /* rows with outcome FAIL */
	size_t gated;   /* rows of gating metrics */
	enum pg_outcome outcome;
	struct pg_strv rerun;   /* points a confirmation run should repeat */
	bool with_confirmation; /* a confirmation run was given */
	/* the step's budget: Holm over the gated hypotheses, whole-run ones
	 * getting a share of it when there are any */
	double step_false_alarm;
	size_t hypotheses;       /* gated hypotheses with a p-value */
	double budget_points;    /* the share for single points */
	double budget_whole_run; /* the share for whole-run changes */
	/* per metric class (throughput, latency, tail): the median over the
	 * gated rows of their catchable change; NAN where none */
	double catchable[3];
	struct pg_strv not_in_suite; /* baseline points outside the run's plan */
	struct pg_strv aged_out;     /* history points not recorded lately (aged out)
				      * and not in the run: not missing */
	struct pg_strv texts;        /* strings the rows' bases and trails point
				      * into (commits, dates, sources) */
	char *suspect;               /* the job was sick (pg_compare_opts.suspect) and would
				 * have failed: why; the outcome is then INFRA (exit 3,
				 * verdict "suspect") and rerun lists the failing points */
	/* points whose cold first run (results/cold.h) the samples leave
	 * out, and the results' notes ("repeat 1 of 3 cold: ..."), in step;
	 * a confirmation re-run's points are named "<point> (re-run)" */
	struct pg_strv cold_points, cold_notes;
};

#define PG_COMPARISON_INIT                                                                         \
	{                                                                                          \
		0                                                                                  \
	}

struct pg_compare_opts {
	bool allow_missing; /* missing points warn instead of exit 3 */
	bool strict;        /* noisy gating pairs beyond their threshold fail too
			     * (still subject to confirmation) */
	/* the points the run planned (NULL: unknown, the run's own points):
	 * baseline points outside it are "not in this suite" and never fail;
	 * planned points without a result are missing */
	const struct pg_strv *plan;
	/* The job health verdict, computed outside the gate (telemetry/health.h
	 * from the results' perfgate.telemetry): non-NULL when the job was sick
	 * (throttling, clocks held down, GPU errors, a foreign process), saying
	 * why. A comparison that would fail is then not trusted: it asks for a
	 * re-run of the job instead. */
	const char *suspect;
	/* the run is a pull request's, not main's: a change main's newest run
	 * (its merge base) already shows is main's, a warning here; on main
	 * the same change, seen a second time, is a persisting change */
	bool pull_request;
};

/*
 * Compare run (n_run points, one job) with base under policy, and decide
 * on the whole step (gate/compare_step.c). confirm (n_confirm, may be 0)
 * is a re-run of the points listed under rerun by a comparison of the same
 * run without it: each pair the first run flagged is decided again on the
 * re-run alone, which must reproduce it. The comparison owns its strings;
 * the metric pointers are the registry's.
 */
void pg_compare(struct pg_comparison *out, const struct pg_policy *policy,
		const struct pg_baseline *base, const struct pg_cmp_point *run, size_t n_run,
		const struct pg_cmp_point *confirm, size_t n_confirm,
		const struct pg_compare_opts *opts);

/*
 * What the comparison found regressed, for the run's history record (its
 * main's gate verdict): {point: "id,id"} of the metrics that can fail the
 * step and regressed (failing, or main's known change). New reference;
 * an empty object when nothing did.
 */
json_t *pg_comparison_regressed(const struct pg_comparison *c);

void pg_comparison_release(struct pg_comparison *c);

/* ------------------------------------------------------------------ */
/* Rendering                                                           */

/*
 * The comparison as markdown, safe inside a Buildkite annotation: a headline
 * verdict line, a summary line, the table of regressions (and other rows
 * that need attention) first, then every row in a collapsible <details>
 * section. Every name and note is escaped (base/escape.h: no table,
 * emphasis or HTML can come from a test name), tables have blank lines
 * around them so they render inside <details>.
 */
void pg_comparison_markdown(struct pg_buf *out, const struct pg_comparison *c);

/* Only the headline line (no trailing newline), e.g. for a step label. */
void pg_comparison_headline(struct pg_buf *out, const struct pg_comparison *c);

/* Only the table of rows needing attention (gate/attention.h: failing,
 * missing or failed, gating metrics undecided), or nothing. */
void pg_comparison_attention_table(struct pg_buf *out, const struct pg_comparison *c);

/* Regressions listed under "Evidence" (and charted) at most. */
#define PG_EVIDENCE_MAX 20

/* The rows of the evidence list: regressed and not-reproduced attention
 * rows measured against a baseline, in the attention table's order, the
 * first PG_EVIDENCE_MAX of them (*n); *total counts them all. Caller
 * frees the array. */
const struct pg_cmp_row **pg_comparison_evidence_rows(const struct pg_comparison *c, size_t *n,
						      size_t *total);

/* The trend charts' file names of rows[0..n) (those above), relative to the
 * comparison's directory: names[i] is "evidence/<point>-<metric>.svg",
 * suffixed "-<i+1>" (then "-<i+1>-2"...) when another row has it, unique
 * among all n; NULL when the row has no trail or spread to chart. pg_compare stores
 * them as pg_cmp_row.chart. Returns how many candidate names were tried
 * (n when none collide). Caller frees names[i]. */
size_t pg_evidence_chart_names(const struct pg_cmp_row *const *rows, size_t n, char **names);

/* An evidence row's whole account (pg_comparison_markdown's Evidence,
 * without the "- " and the links; the annotation's folded details): the
 * change against its baseline, what the baseline rests on, the threshold
 * and why, what the change was tested against and how likely noise gives
 * it, the interval. Markdown, every name escaped. */
void pg_comparison_evidence_text(struct pg_buf *out, const struct pg_cmp_row *r);
/* The same row in one short line (the annotation's evidence): "`point` ·
 * Metric (unit): 6045 → 5490 (-9.2%), fails beyond -2.5%; reproduced: the
 * re-run -9.0%." */
void pg_comparison_evidence_line(struct pg_buf *out, const struct pg_cmp_row *r);
/* Its chart's link text ("Trend of the baseline's runs"), and why a row
 * has no chart. Static strings. */
const char *pg_comparison_chart_title(const struct pg_cmp_row *r);
const char *pg_comparison_no_chart(const struct pg_cmp_row *r);

/*
 * The verdict JSON: {"gpu", "baseline": {kind, source}, "verdict",
 * "exit_code", "headline", "confirmation", "decision": {step_false_alarm,
 * hypotheses, budget_points, budget_whole_run, correction, confirmation},
 * "summary": {verdict counts}, "tests": {compared, regressed,
 * regressed_metrics, error, warn, improved} (gate/attention.h
 * pg_gate_count), "rerun": [points], "whole_run": [{metric,
 * suite, method, points, change, effect, spread, tolerance, p_value,
 * p_adjusted, first, rerun, verdict, outcome, note}], "not_in_suite":
 * [points], "aged_out": [points], "rows": [{point, test, suite, qps,
 * max_concurrency, metric, label, unit, direction, gate, baseline, current,
 * change, tolerance, floor, escalate, p_value, p_adjusted, effect,
 * run_change, noise, ci_low, ci_high, method, n_baseline, n_current,
 * first, rerun, verdict, outcome, confirmed, needs_confirmation, note,
 * basis}]}, where first and rerun are {current, change, effect, p_value,
 * p_adjusted, n, flagged, ci_low, ci_high} (rerun null without one) and
 * basis is {kind, runs, repeats, commits: [first, last], dates: [first,
 * last], source, line} (pg_cmp_basis; null without a baseline). pandas:
 * pd.DataFrame(json.load(f)["rows"]). New reference.
 */
json_t *pg_comparison_json(const struct pg_comparison *c);

/*
 * The same document written a piece at a time, for files of any size:
 * pg_json_write(pg_comparison_json(c), 2) and a newline, never holding
 * every row at once. Each call appends the next piece to out and returns
 * nonzero while more follows:
 *
 *   struct pg_comparison_json_writer w = { .c = &cmp };
 *   while (pg_comparison_json_next(&w, &chunk)) ...
 */
struct pg_comparison_json_writer {
	const struct pg_comparison *c;
	size_t next;  /* the next row */
	bool started; /* the head is written */
};
int pg_comparison_json_next(struct pg_comparison_json_writer *w, struct pg_buf *out);

#endif
