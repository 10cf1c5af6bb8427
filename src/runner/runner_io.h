#ifndef PERFGATE_RUNNER_RUNNER_IO_H
#define PERFGATE_RUNNER_RUNNER_IO_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "loadgen/loadgen_io.h" /* struct pg_warmup_report */
#include "runner/runfmt.h"
#include "suite/suite.h"

struct pg_error;
struct pg_gpu_info;

/*
 * `perfgate run` from start to end: for each test of the plan, start its
 * server once (or use `remote:`), wait until it serves, run every
 * qps/concurrency point and repeat through the native load generator or the
 * test's external `command:`, write each point's result atomically, stop
 * the server's whole process group. A failing test is recorded and the
 * next one runs; SIGINT/SIGTERM stop everything within seconds and keep
 * what finished. See docs/run.md.
 */

/* What one native point run gets from the runner. */
struct pg_point_io {
	const char *base_url; /* "http://127.0.0.1:41237" */
	const char *api_key;  /* value of client.api_key_env, or NULL */
	const volatile sig_atomic_t
		*stop; /* non-zero: stop sending, end streams, return PG_ECANCEL */
	/* called by the load generator every so often (it may be called often:
	 * the runner rate-limits what it prints) */
	void (*progress)(void *ctx, const struct pg_run_progress *p);
	void *progress_ctx;
	bool save_detailed; /* keep per-request arrays */
	/* > 0: not a run but the point's warm-up, this many unmeasured
	 * requests (loadgen/loadgen_io.h pg_loadgen_warm_up), reported in
	 * *warmup; *out is left NULL */
	size_t warmup_requests;
	struct pg_warmup_report *warmup;
};

/*
 * Measure one point once: on success *out is a new object with the suite's
 * result keys (docs/results.md) and 0 is returned. The load generator
 * (pg_loadgen_run) is the real one; tests substitute stubs.
 */
typedef int (*pg_point_fn)(const struct pg_point *pt, const struct pg_point_io *io, json_t **out,
			   struct pg_error *err);

/* The built-in native client: pg_loadgen_run adapted to pg_point_fn. */
int pg_runner_native(const struct pg_point *pt, const struct pg_point_io *io, json_t **out,
		     struct pg_error *err);

struct pg_run_opts {
	const char *results_dir;       /* created when missing */
	const struct pg_gpu_info *gpu; /* identity recorded in every result; required */
	const char *self_exe;          /* what a command's "perfgate" runs; NULL: /proc/self/exe */
	const char *vllm;     /* what a command's "vllm" runs (base/template.h pg_program_check'ed);
			   * NULL: $PERFGATE_VLLM, else vllm itself */
	const char *git_path; /* repository to describe; NULL: "." */
	bool fail_fast;       /* stop after the first failed point (default: keep going) */
	bool save_detailed;
	double gpu_idle_mib;       /* > 0: before each local test wait until every GPU
	                                   * uses less memory than this; 0: each test's
	                                   * server.gpu_idle_mib */
	double gpu_idle_timeout;   /* seconds; 0: the test's server.gpu_idle_timeout */
	pg_point_fn native;        /* NULL: pg_runner_native */
	FILE *log;                 /* progress and diagnostics; NULL: stderr */
	bool tty;                  /* a live progress bar instead of progress lines */
	double progress_interval;  /* seconds between progress lines; 0: 5 */
	bool no_telemetry;         /* no engine scrape, no GPU sampling (telemetry/) */
	double telemetry_interval; /* seconds between telemetry ticks; 0: 1 */
	struct pg_strv *told;      /* telemetry notes already shown, kept across runs
				    * (an A/B step's blocks); NULL: once per run */
};

/* One point's outcome, for the summary and the exit code. */
struct pg_run_point {
	char *name;
	char *status; /* "ok", "error", "skipped", "cancelled", "not run" */
	char *detail; /* key metrics, or why not ok (first line) */
	char *note;   /* what a flag in detail means (results/clientcheck.h), or NULL */
	double seconds;
};

struct pg_run_report {
	struct pg_run_point *points;
	size_t n;
	size_t cap;
	size_t n_ok, n_error, n_skipped, n_cancelled, n_not_run;
	int cancel_signal; /* the signal that cancelled the run, or 0 */
	double seconds;
};

#define PG_RUN_REPORT_INIT                                                                         \
	{                                                                                          \
		NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0                                                    \
	}

/*
 * Run the plan (points of one test are consecutive, as pg_plan_build makes
 * them). Returns 0 when the run went through -- failed points are in the
 * report, not errors -- or an error that stopped it from starting (results
 * directory not writable). Writes <results_dir>/perfgate_run.json, the run's
 * manifest, after every point.
 */
int pg_run(struct pg_run_report *rep, const struct pg_suite *suite, const struct pg_plan *plan,
	   const struct pg_run_opts *o, struct pg_error *err);

/* 128 + signal when cancelled, 3 when a point failed, else 0 (skipped
 * points do not fail a run). */
int pg_run_exit_code(const struct pg_run_report *rep);

/*
 * Every secret a run knows before it starts (base/redact.h): the values
 * of perfgate's environment, the suite's (NULL: none) env, headers,
 * remote URLs and command templates, and the API keys. What pg_run hides
 * from everything it writes, for a caller that writes more (the plugin's
 * annotation and reports).
 */
struct pg_redactor;
void pg_run_collect_secrets(struct pg_redactor *r, const struct pg_suite *suite);

void pg_run_report_release(struct pg_run_report *rep);

/*
 * SIGINT, SIGTERM and SIGHUP cancel the run: the first sets
 * pg_run_cancelled (the signal number), stops the point in progress and
 * lets pg_run stop the server and write what finished; a second SIGKILLs
 * every process group started and exits at once with 128 + signal.
 */
extern volatile sig_atomic_t pg_run_cancelled;
void pg_run_signals_install(void);
void pg_run_signals_restore(void);

#endif
