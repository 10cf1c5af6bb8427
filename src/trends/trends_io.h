#ifndef PERFGATE_TRENDS_TRENDS_IO_H
#define PERFGATE_TRENDS_TRENDS_IO_H

#include <stddef.h>
#include <stdio.h>

#include "gate/compare.h"

struct pg_error;

/*
 * perfgate trends: the history in git (baseline/history_io.h) rendered as
 * a static site (trends/trends.h) in out_dir:
 *
 *   index.html                 the GPUs
 *   <gpu>/index.html           the overview of a GPU
 *   <gpu>/points.html          every test point
 *   <gpu>/p/<point>.html       a point's charts and last runs
 *   <gpu>/all.html             the overview and its first points' charts,
 *                              one file (a Buildkite artifact)
 *
 * Per GPU: its thresholds file's policy (else the defaults), every
 * recorded run (slimmed: pg_history_slim), the change points of the last
 * `last` of them, and the baseline the
 * gate builds from them (pg_history_baseline_build: the window and the
 * tolerance it would judge a run of main's tip by). With current points,
 * the run is compared with that baseline (pg_compare) and drawn on the
 * charts of its GPU. One GPU is in memory at a time.
 */
struct pg_trends_opts {
	const char *out_dir;
	const char *repo; /* the history repository (NULL: the current one) */
	/* where the A/B results are recorded, the same ref; NULL: repo. A
	 * repository of their own lets pull-request jobs record them without
	 * push rights on main's history */
	const char *ab_repo;
	const char *ref;        /* NULL: PG_HISTORY_DEFAULT_REF */
	const char *gpu;        /* only this GPU key; NULL: every GPU */
	const char *thresholds; /* a thresholds file or directory; NULL: "thresholds" */
	/* the policy to draw with instead of the thresholds file's: the gate's
	 * own in the plugin, which on a pull request is the base branch's copy
	 * (the pull request's file must not shape what the page says) */
	const struct pg_policy *policy;
	const struct pg_cmp_point *current; /* the PR's points, or NULL */
	size_t n_current;
	/* the gate's own comparison of those points (the plugin's, with its
	 * re-run), drawn instead of comparing them again: the pages then say
	 * what the annotation says; NULL: compared here */
	const struct pg_comparison *decided;
	bool one_page_only;       /* write <gpu>/all.html alone (the plugin's artifact) */
	const char *current_gpu;  /* their GPU key */
	const char *current_name; /* legend, default "this PR" */
	long last;                /* change points of the last N runs; -1: three baseline windows
		    * (the gate's span), 0: all */
	FILE *progress;           /* a line per GPU, or NULL */
	unsigned jobs;            /* threads to read, analyse and draw with; 0: the CPUs
				   * online. The site is the same whatever the number */
};

struct pg_trends_written {
	size_t gpus, points, pages;
	size_t bytes;         /* all pages */
	size_t overview_max;  /* the largest overview page */
	size_t current_drawn; /* current points found in the history */
};

/* PG_ENOTFOUND when the history has no GPU (or not o->gpu). */
int pg_trends_write(const struct pg_trends_opts *o, struct pg_trends_written *out,
		    struct pg_error *err);

#endif
