#ifndef PERFGATE_RUNNER_AB_IO_H
#define PERFGATE_RUNNER_AB_IO_H

#include <stdbool.h>
#include <stdio.h>

#include "gate/ab.h"
#include "runner/runner_io.h"
#include "suite/suite.h"

struct pg_error;
struct pg_gpu_info;

/*
 * An A/B run (docs/ab.md): the suite's `ab:` section names two sides; the
 * plan runs in blocks, A B B A A B B A ..., each block one pg_run of the
 * whole plan with that side's servers and commands (start, ready, warm-up,
 * the points, stop: one server at a time), into
 * <results_dir>/blocks/<NN>-<side>. After each pair of blocks the paired
 * decision (gate/ab.h) says whether to go on; sampling stops when every
 * hypothesis is decided, at a regression, at max_blocks, or when the next
 * pair would not fit in time_budget. SIGINT/SIGTERM stop the block in
 * progress as they stop `perfgate run` (its servers are gone before this
 * returns) and no further block starts.
 *
 * Then <results_dir>/base and /head hold one result file per point in the
 * usual format, each block a repeat (perfgate.repeats; perfgate.ab says
 * which blocks), and <results_dir>/comparison.md and verdict.json the
 * decision.
 */

struct pg_ab_run_opts {
	const char *results_dir;       /* created when missing */
	const struct pg_gpu_info *gpu; /* required */
	FILE *log;                     /* NULL: stderr */
	bool no_telemetry;
	pg_point_fn native; /* NULL: pg_runner_native */
	/* overrides of the suite's ab section (0 / NAN: the suite's) */
	long max_blocks;
	double time_budget;
	/* the metric ids judged (NULL or empty: every gated metric of the
	 * plan's kinds): perfgate bisect decides on the metric that moved */
	const struct pg_strv *metrics;
	/* stop after the first pair with a failed block: a side that cannot
	 * start makes the rest of the budget pointless (perfgate bisect) */
	bool stop_on_failure;
};

/*
 * Check the suite's A/B sides against its tests (PG_ECONFIG naming the
 * ab section's file and line): server flags or env for a test that
 * starts no server.
 */
int pg_ab_check(const struct pg_suite *suite, struct pg_error *err);

/*
 * Run it. suite->ab must be set; the suite's tests are changed while a
 * block runs and restored before this returns. out is initialised here
 * (release with pg_ab_summary_release). Returns 0 when the run went
 * through -- failed blocks and a cancel are in out -- or an error that
 * kept it from starting.
 */
int pg_ab_run(struct pg_ab_summary *out, struct pg_suite *suite, const struct pg_plan *plan,
	      const struct pg_ab_run_opts *o, struct pg_error *err);

/* Write comparison.md and verdict.json into dir, with every secret the
 * suite and its sides know hidden (base/redact.h). */
int pg_ab_write(const struct pg_ab_summary *s, const struct pg_suite *suite, const char *dir,
		struct pg_error *err);

#endif
