#ifndef PERFGATE_BISECT_BISECT_IO_H
#define PERFGATE_BISECT_BISECT_IO_H

#include <stdbool.h>
#include <stdio.h>

struct pg_buf;

#include "base/strutil.h"
#include "bisect/bisect_search.h"

struct pg_error;
struct pg_gpu_info;
struct pg_plan;
struct pg_suite;

/*
 * perfgate bisect --local (docs/bisect.md): the search of
 * bisect/bisect_search.h with each probe an A/B run (runner/ab_io.h) of
 * the probed commit's engine (head) against the phase's good end (base),
 * in this process.
 *
 * Per probe: the build command of each side not built yet (a failure
 * skips the probed commit; the good end's is an error), then the A/B of
 * the plan with the server command of each side ({commit} its id). A block
 * of the good side that failed is an infrastructure failure: the probe is
 * run again once, not counted as evidence, and a second failure stops the
 * bisect (PG_EINFRA, resumable). A probed side that fails twice while the
 * good side runs is a commit that cannot start: skipped. An inconclusive
 * probe is run again with a larger budget (attempt k: (k + 1) x max_blocks).
 *
 * Everything is written under output: probes/NN-<commit>-<why>/ (each A/B
 * as perfgate ab writes it), builds/<commit>.log, bisect-state.json after
 * every probe, and bisect.md and bisect.json (after every probe too, so a
 * cancelled bisect shows what it found). A bisect started again on the
 * same output with the same question replays the state file's outcomes
 * and runs no recorded probe again.
 */
struct pg_bisect_run_opts {
	const char *repo;              /* the repository of the commits; default "." */
	const char *good, *bad;        /* revisions */
	const char *output;            /* directory */
	const char *suite_path;        /* for the record and the commands shown */
	const char *test;              /* the test probed (the plan holds its points) */
	const char *server_command;    /* shell template; {commit}: the side's full id */
	const char *build;             /* shell template or NULL; {commit} */
	const struct pg_strv *metrics; /* ids judged; empty: the gated ones */
	double tolerance;              /* relative, every metric; <= 0: A/B's defaults */
	long min_blocks, max_blocks;   /* per attempt 0 */
	double build_timeout;          /* seconds; <= 0: one hour */
	struct pg_bisect_opts search;
	const struct pg_gpu_info *gpu;
	FILE *log; /* NULL: stderr */
	bool no_telemetry;
	long max_probes; /* probes to run before stopping (the state saved); < 0: no limit */
	/* --pipeline: what comes next appended here as a Buildkite pipeline
	 * (bisect_report.h pg_bisect_pipeline) with max_probes 0; NULL: none */
	struct pg_buf *pipeline;
	const char *queue; /* the probes' agent queue */
	const char
		*from_step; /* the key of the job running this, whose artifacts the next fetches */
};

struct pg_bisect_outcome_summary {
	bool finished;
	enum pg_bisect_end end;
	size_t steps;      /* found */
	size_t probes_run; /* by this process (the rest replayed) */
	size_t replayed;
	int cancel_signal;
};

/*
 * Run or resume the bisect. suite must hold the test, plan its points;
 * the test's server command is replaced while probes run. Returns 0 when
 * it ran (finished or cancelled: see out), PG_ECONFIG for a question the
 * state file on output does not match, a revision unknown, a good end that
 * cannot be built, PG_EINFRA for the repeated infrastructure failure.
 */
int pg_bisect_run(struct pg_bisect_outcome_summary *out, struct pg_suite *suite,
		  const struct pg_plan *plan, const struct pg_bisect_run_opts *o,
		  struct pg_error *err);

/*
 * --from-change GPU/POINT/METRIC: the range and size of the newest step of
 * METRIC at POINT ("all": the change common to every point) on main, from
 * the history's change points as `perfgate baseline changes` finds them
 * (every point read, the policy of `thresholds`). good is the commit of
 * the last job before the step, bad the first at the new level.
 */
struct pg_bisect_change {
	char gpu[128];
	char *point, *metric; /* point NULL: every point */
	char *good, *bad;     /* full ids */
	double shift;         /* relative, worse > 0 */
	char *first_date, *last_date;
};

int pg_bisect_from_change(struct pg_bisect_change *out, const char *spec, const char *history_repo,
			  const char *ref, const char *thresholds, struct pg_error *err);
void pg_bisect_change_release(struct pg_bisect_change *c);

#endif
