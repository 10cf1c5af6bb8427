#ifndef PERFGATE_BASELINE_HISTORY_H
#define PERFGATE_BASELINE_HISTORY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "gate/compare.h"

struct pg_buf;
struct pg_error;

/*
 * The run history kept in git (baseline/history_io.c stores it): one JSON-lines file
 * per GPU and test point, <gpu>/<point>.jsonl, one line per recorded run:
 *
 *   {"format": 1, "commit": "9f1c...", "date": "2026-11-22T13:00:00Z",
 *    "build_url": "https://buildkite.com/...", "branch": "main",
 *    "gpu": "8xH100", "suite": "serving", "point": "serving_x_qps_4",
 *    "test": "serving_x", "qps": 4, "max_concurrency": null, "repeats": 5,
 *    "metrics": {"output_throughput": [2418.1, 2411.0, ...], ...}}
 *
 * Lines are appended (a build's earlier line of the point is replaced),
 * so concurrent writers only ever conflict on the ref, never on content.
 * Which lines are usable: baseline/history_check.h.
 */

struct pg_history_meta {
	const char *commit;    /* source commit the run measured */
	const char *date;      /* ISO 8601 UTC */
	const char *build_url; /* or NULL */
	const char *branch;    /* or NULL */
	/* the gate's verdict on the run, when it was judged: point name ->
	 * "id,id" of the metrics it found regressed there (a string; a point
	 * absent or "" had none); NULL when not judged (borrowed) */
	const json_t *regressed;
};

/* The history line for one point of a run (new reference); NULL when the
 * point has no comparable metric. */
json_t *pg_history_line(const struct pg_cmp_point *p, const struct pg_history_meta *meta);

/* One parsed line. */
struct pg_history_rec {
	char *commit;
	char *date;
	char *build_url;
	char *gpu;
	enum pg_suite_kind suite;
	char *test;
	double qps;
	long max_concurrency;
	long repeats;
	char *run;       /* the run that recorded it, when it says (shards of one build) */
	char *regressed; /* "id,id": metrics main's gate found regressed in this run,
			  * "" none, NULL when it was not judged */
	json_t *metrics; /* {"id": [values...]} (owned); NULL when slimmed */
	double *medians; /* slimmed (pg_history_slim): one per registry metric, in
			  * pg_metrics_all order, NAN where absent (owned); else NULL */
	/* compact (pg_history_read_compact): medians holds one per kept metric
	 * and slot[m] is registry metric m's column in it, or PG_HISTORY_NO_SLOT;
	 * the strings, slot and medians are borrowed (a pool, the history's
	 * values); else NULL */
	const unsigned char *slot;
};

#define PG_HISTORY_NO_SLOT 0xff

struct pg_history {
	char *point;
	struct pg_history_rec *recs; /* file order: oldest first */
	size_t n;
	size_t cap;
	double *values; /* compact: every record's medians, one allocation */
};

/*
 * Parse a <point>.jsonl file. Blank lines are skipped; a line that is not a
 * record, or one in a newer format (pg_history_classify), is an error
 * naming source:line. On error h holds what parsed.
 */
int pg_history_parse(struct pg_history *h, const char *point, const char *text, size_t len,
		     const char *source, struct pg_error *err);
void pg_history_release(struct pg_history *h);

/* A record's median (its repeats') for metric id, or NAN. */
double pg_history_rec_median(const struct pg_history_rec *r, const char *id);
/* The same for a metric of the registry (pg_metrics_all), without a lookup
 * by name in a slimmed record. */
double pg_history_rec_value(const struct pg_history_rec *r, const struct pg_metric *m);

/*
 * Keep, in every record of h, only each metric's median (medians, and no
 * metrics object): all the windows, the change points and a comparison
 * with the baseline use, in a few times less memory (perfgate trends reads
 * every run of every point). With a policy, only the metrics that can fail
 * at the point under it (they gate, or escalate) are kept.
 */
void pg_history_slim(struct pg_history *h, const struct pg_policy *policy);
/* Which metrics (keep[m], m in pg_metrics_all order) pg_history_slim keeps. */
void pg_history_keep(bool *keep, const struct pg_history *h, const struct pg_policy *policy);

/*
 * Compact histories (perfgate trends reads every run of every point): the
 * slimmed records of pg_history_slim, with their strings interned in a
 * pool shared by the histories of a GPU (a job's commit, date, build and
 * run are the same in every point) and the kept medians of a point in one
 * allocation. The records are what pg_history_parse and pg_history_slim
 * give, value for value; a file is read by a scanner of the record lines
 * that understands the lines perfgate writes, and any line it does not
 * (an escape, a number it would have to round differently, a key given
 * twice, anything malformed) sends the whole file through
 * pg_history_parse, so errors read the same too. Release the histories
 * (pg_history_release) before their pool.
 */
struct pg_history_pool;
struct pg_history_pool *pg_history_pool_new(void);
void pg_history_pool_free(struct pg_history_pool *pool);

/*
 * Histories read with pools of their own (a pool per thread) made one:
 * the strings of the pools from[0..n_from) are interned in p, every
 * compact record of hs[0..n) (whose strings are p's or from's) points at
 * p's copies, and from's pools are freed. Afterwards the records are as if
 * read with p alone (the same string is the same pointer).
 */
void pg_history_pool_join(struct pg_history_pool *p, struct pg_history_pool **from, size_t n_from,
			  struct pg_history *hs, size_t n);

/* A JSON number (all of text[0..len)) as the compact reader reads it,
 * as jansson does: an integer as a long long ("-0" is 0), a real bit for
 * bit what strtod returns; false for what it leaves to pg_history_parse
 * (not a number, an integer beyond 18 digits, a real beyond a double's
 * range). */
bool pg_history_number(const char *text, size_t len, double *out);

/* pg_history_parse, then pg_history_slim(policy), into a compact h (a
 * new one: { 0 }). On error h holds no records. */
int pg_history_parse_compact(struct pg_history *h, const char *point, const char *text, size_t len,
			     const char *source, const struct pg_policy *policy,
			     struct pg_history_pool *pool, struct pg_error *err);

/* Do a and b hold the same records, value for value (every string, every
 * number, every registry metric's value; NANs alike)? why says where not. */
bool pg_history_same(const struct pg_history *a, const struct pg_history *b, char *why,
		     size_t size);

/* ------------------------------------------------------------------ */
/* Jobs and change points                                              */

/* A recorded job: one `baseline record` (one CI job) of several points. */
struct pg_history_job {
	const char *commit; /* borrowed from its records; may be NULL */
	const char *date;
	const char *build_url;
};

#define PG_HISTORY_ALL ((size_t)-1)

/* A change of level on main: a step, or a slow creep. */
struct pg_history_change {
	size_t point; /* index into the histories; PG_HISTORY_ALL: every point moved
		       * (the jobs' common level, a whole-run change) */
	const struct pg_metric *metric;
	bool creep;     /* a slow trend rather than a step */
	size_t job;     /* the first job at the new level; a creep: where it began */
	double shift;   /* as measured, signed worse > 0: the step, or the creep since it began */
	double per_job; /* a creep: relative change per job */
	double p_value;
};

struct pg_history_analysis {
	struct pg_history_job *jobs; /* oldest first */
	size_t n_jobs;
	long **rec_job; /* [point][record]: the record's job, -1 when not used */
	size_t n_points;
	struct pg_history_change *changes; /* by point (whole-run first), metric, job */
	size_t n_changes, cap_changes;
};

/*
 * The histories of one GPU (hs[0..n), e.g. from pg_history_read) as jobs:
 * records of the same job (same date, commit, build and run) line up
 * across points, jobs ordered by date. use[i][k] says whether record k of
 * point i counts (use NULL, or use[i] NULL: all). Then the change points of
 * the last `last` jobs (0: all) for every metric with a direction:
 *
 *  - per metric, a median polish of the jobs x points table splits each
 *    job's common offset (a slow node, a change to everything) from each
 *    point's level;
 *  - steps in the offsets are whole-run changes; steps in a point's level
 *    with the offsets taken out are that point's (pg_cmpstat_change_points:
 *    p < 0.001, at least 3 jobs on each side, a shift of at least half the
 *    metric's tolerance under policy);
 *  - with creep, a monotone trend (Mann-Kendall p < 0.001, Theil-Sen
 *    slope) over the jobs after the last step that moved the level by at
 *    least half the tolerance in total is a creep, from where it began.
 *
 * With fewer than 3 points per job, steps are found on the points' raw
 * levels (no offsets to take out).
 */
void pg_history_analyse(struct pg_history_analysis *a, const struct pg_history *hs, size_t n,
			const bool *const *use, const struct pg_policy *policy, size_t last,
			bool creep);
/* The same, each metric's change points a task of tasks (base/tasks.h):
 * the same analysis whatever the number of workers. */
struct pg_tasks;
void pg_history_analyse_tasks(struct pg_history_analysis *a, const struct pg_history *hs, size_t n,
			      const bool *const *use, const struct pg_policy *policy, size_t last,
			      bool creep, const struct pg_tasks *tasks);
void pg_history_analysis_release(struct pg_history_analysis *a);

/*
 * The git baseline from the histories of one GPU (see pg_history_analyse
 * for hs, n, use), added to base (its points, jobs and change points):
 *
 *  - a point not recorded in any of the last history_window jobs has aged
 *    out (dropped from the suite, renamed): marked aged, so a run without
 *    it does not miss it;
 *  - a point's window starts at its last step in a metric that can fail
 *    (steps common to every point stay in: the decision takes each job's
 *    offset out), and holds its last history_window jobs;
 *  - each job counts once: a metric's samples are the job medians (with
 *    their job indices), its value their median, its noise their spread;
 *  - fewer than min_history jobs in the window mark it insufficient (its
 *    values are still filled from what there is).
 */
void pg_history_baseline_build(struct pg_baseline *base, const struct pg_history *hs, size_t n,
			       const bool *const *use, const struct pg_policy *policy);
/* The jobs it analyses: the last pg_history_baseline_span(policy). */
size_t pg_history_baseline_span(const struct pg_policy *policy);
/* The same from an analysis already made: pg_history_analyse of hs, n,
 * use, policy over the last pg_history_baseline_span(policy) jobs, with or
 * without creep (perfgate trends draws that analysis too). */
void pg_history_baseline_build_from(struct pg_baseline *base, const struct pg_history *hs, size_t n,
				    const struct pg_policy *policy,
				    const struct pg_history_analysis *a);

/*
 * The history of point i of hs as readable text: per metric, the oldest
 * and newest of its last `last` jobs, the change, a sparkline ('|' where a
 * change point of a (the analysis of hs, may be NULL) starts a new level),
 * the median and the spread, and a line per change point with the commit
 * range it began in. metric (may be NULL) limits it to one metric id.
 */
void pg_history_trend(struct pg_buf *out, const struct pg_history *hs, size_t i,
		      const struct pg_history_analysis *a, const char *metric, long last);

/*
 * The nightly report of the changes in a (markdown): steps and creep on
 * main, worse first, each with the commit range in which it began. metric
 * (may be NULL) limits it to one metric id. Returns how many changes in
 * the worse direction of metrics that can fail under policy began in the
 * last `recent` jobs (0: any).
 */
size_t pg_history_changes_markdown(struct pg_buf *out, const struct pg_history *hs, size_t n,
				   const struct pg_history_analysis *a,
				   const struct pg_policy *policy, const char *gpu,
				   const char *metric, size_t recent);

/* The same as JSON: {"gpu", "jobs", "changes": [{point, metric, kind,
 * shift, per_job, p_value, worse, gates, first_commit, last_commit,
 * first_date, last_date}]}. New reference. */
json_t *pg_history_changes_json(const struct pg_history *hs, size_t n,
				const struct pg_history_analysis *a, const struct pg_policy *policy,
				const char *gpu, const char *metric);

/* The baseline as readable text (perfgate baseline show). */
void pg_baseline_describe(struct pg_buf *out, const struct pg_baseline *b,
			  const struct pg_policy *p);

#endif
