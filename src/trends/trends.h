#ifndef PERFGATE_TRENDS_TRENDS_H
#define PERFGATE_TRENDS_TRENDS_H

#include <stdbool.h>
#include <stddef.h>

#include "baseline/history.h"
#include "baseline/history_ab.h"
#include "base/strutil.h"
#include "gate/attention.h"
#include "gate/compare.h"

struct pg_buf;

/*
 * The trend site (perfgate trends, docs/trends.md): the history in git of
 * one GPU as HTML pages with inline SVG, readable with no script and no
 * network. Pure: the caller reads the history, analyses it and builds the
 * gate's baseline from it (trends_io.c); this module only draws.
 *
 *   overview  one row per test point, a sparkline per gated metric, most
 *             interesting first (the PR's regressions, a last run beyond
 *             the tolerance, a recent change point), at most
 *             PG_TRENDS_OVERVIEW_ROWS rows; the change points of the GPU
 *   points    every test point, one line each (any number of points)
 *   point     a chart per metric that can fail: every recorded run of
 *             main, the gate's baseline window and tolerance band, the
 *             change points, the PR's value; the last runs as a table
 *             with their commits and builds
 *
 * Every name is escaped (test names come from users); file names are
 * pg_chart_stem()s, made unique.
 */

/* Rows with sparklines on an overview page: a GPU of 10,000 points keeps
 * its overview under 2 MB; the points page lists them all. */
#define PG_TRENDS_OVERVIEW_ROWS 300
/* Change points listed on an overview page (worse first). */
#define PG_TRENDS_OVERVIEW_CHANGES 100
/* Runs of a point page drawn with a tooltip and listed in its table. */
#define PG_TRENDS_RECENT_RUNS 50
/* Points whose charts a GPU's one page holds (pg_trends_one_page), the
 * first of the overview's order: about 6 MB at 200 runs a point. */
#define PG_TRENDS_ONE_PAGE_POINTS 100

struct pg_trends_gpu {
	const char *gpu;    /* the GPU key */
	const char *source; /* "refs/perfgate/history at 1a2b3c4d5e6f" */
	const struct pg_history *hs;
	size_t n;
	const struct pg_history_analysis *a; /* of every job of hs (pg_history_analyse) */
	const struct pg_baseline *base;      /* pg_history_baseline_build(hs): the windows */
	const struct pg_policy *policy;
	/* the PR's run against base (or the gate's own comparison of it, with
	 * its re-run: what the annotation says), or NULL */
	const struct pg_comparison *cmp;
	const char *current_name; /* legend for the PR's point: "this PR" */
	/* the GPU's A/B results (pg_history_read_ab: by point), or NULL */
	const struct pg_history_ab *ab;
	size_t n_ab;
	/* filled by pg_trends_gpu_prepare, freed by pg_trends_gpu_release */
	char **files;  /* per point: "p/<stem>.html" (on the one page:
			* "#p-<stem>", or NULL: not on it) */
	size_t *order; /* overview order: most interesting first */
	size_t n_flagged;
	/* cmp's rows with a metric, by (point, metric), for the lookups */
	const struct pg_cmp_row **rows;
	size_t n_rows;
	bool one_page; /* drawing pg_trends_one_page: links within it */
};

/*
 * The directory of a GPU's pages, beside the site's index.html: the key as
 * a file name (pg_chart_stem), with "-<8 hex digits of its hash>" when that
 * could be another GPU's or the site's own -- a key that is not a file
 * name as it is ("a b"), has a lowercase letter ("h100" and "H100" are one
 * directory on macOS) or is the site's index.html. The same on every run
 * and whatever other GPUs the history has, so a step links its GPU's pages
 * without the others. New string.
 */
char *pg_trends_gpu_dir(const char *gpu);

/* File names and the overview order. */
void pg_trends_gpu_prepare(struct pg_trends_gpu *t);
void pg_trends_gpu_release(struct pg_trends_gpu *t);

/* <gpu>/index.html, <gpu>/points.html, <gpu>/<files[i]> */
void pg_trends_overview(struct pg_buf *out, const struct pg_trends_gpu *t);
void pg_trends_points(struct pg_buf *out, const struct pg_trends_gpu *t);
void pg_trends_point(struct pg_buf *out, const struct pg_trends_gpu *t, size_t i);

/*
 * <gpu>/all.html: the overview and the charts of its first
 * PG_TRENDS_ONE_PAGE_POINTS points on one page, every link within it
 * (anchors), its script inline: a page that is whole as one file, which
 * is how Buildkite serves an artifact (each at an address of its own,
 * where a relative link to another artifact does not resolve).
 */
void pg_trends_one_page(struct pg_buf *out, const struct pg_trends_gpu *t);

/*
 * A/B results on the pages (trends_ab.c), from t->ab: a point's results
 * for metric m, as a table under its chart; those of the metrics its page
 * does not chart (ms[0..n_ms) are charted); on the overview, the recent
 * A/B steps of the GPU with their verdicts. Nothing when there are none.
 * The history's strings (pull requests, commits, builds, names) are
 * escaped; a build is linked only when its URL is http(s).
 */
#define PG_TRENDS_AB_ROWS  20 /* a point's A/B results per metric, newest first */
#define PG_TRENDS_AB_STEPS 30 /* A/B steps on the overview, newest first */
void pg_trends_ab_metric(struct pg_buf *out, const struct pg_trends_gpu *t, size_t i,
			 const struct pg_metric *m);
void pg_trends_ab_rest(struct pg_buf *out, const struct pg_trends_gpu *t, size_t i,
		       const struct pg_metric *const *ms, size_t n_ms);
void pg_trends_ab_overview(struct pg_buf *out, const struct pg_trends_gpu *t);

/*
 * A point page's script (trends_runs.c), at its end: every run of point i
 * (its number, commit, date and build) and its charted values as data
 * (g[m * n + k], n = t->hs[i].n: record k's value of the page's m-th
 * metric as pg_fmt_g writes it, "": none -- formatted once for the script
 * and the runs' table);
 * over a chart drawn with `scripted` (column m), the run nearest the
 * pointer is marked and shown in a tooltip, and a click keeps it with a
 * link to its build. Self-contained: nothing is fetched.
 *
 * On the one page, each point's section (data-r="<section>") has its data
 * alone (section >= 0: "D[section]=..."), and pg_trends_runs_code, once
 * after them, the code; section < 0: a page of its own, data and code.
 */
void pg_trends_runs_script(struct pg_buf *out, const struct pg_trends_gpu *t, size_t i,
			   const char (*g)[PG_FMT_DOUBLE_SIZE], size_t n_cols, long section);
void pg_trends_runs_code(struct pg_buf *out);

/*
 * One metric's runs as an SVG chart (the point pages' and the gate's
 * evidence charts): the runs as a line, the baseline window shaded, the
 * tolerance band from the baseline to the limit, change points, and the
 * PR's value as a diamond after the last run. x is a run (job) number
 * from 0, ascending; the axis labels runs "#x+1" under their dates.
 */
struct pg_trends_mark {
	long job;        /* the first run at the new level */
	double shift;    /* relative, worse > 0 */
	bool creep;      /* a slope, not a step */
	const char *tip; /* its tooltip */
};

struct pg_trends_chart {
	const struct pg_metric *m;
	const double *x, *y; /* the runs: number, value (display units) */
	size_t n;
	size_t tips_from; /* runs from here get a marker and a tooltip */
	/* on a point page: its script shows every run on hover (its value
	 * from column `column` of the page's data), no marker and tooltip per
	 * run; the page's CSS gives the font and the white */
	bool scripted;
	size_t column;
	const char *const *commit; /* per run, for the tooltips (NULL: none) */
	const char *const *date;   /* per run (NULL: none) */
	const char *(*job_date)(const void *ctx, size_t j); /* for the axis; NULL */
	const void *ctx;
	size_t n_jobs;         /* ticks only at runs below this */
	const char *x_caption; /* under the axis */
	bool gate;             /* fails (else warns) beyond the limit: the band's colour */
	double base, limit;    /* the baseline and the value beyond which it fails; NAN */
	double tol;            /* the tolerance the limit is at */
	long w0, w1;           /* the baseline window's first and last run; -1: none */
	size_t window_runs;    /* runs in it */
	const struct pg_trends_mark *marks;
	size_t n_marks;
	double pr;        /* the PR's value; NAN: none */
	double pr_change; /* its change, NAN */
	bool pr_interval; /* draw pr_lo..pr_hi (display units) as a whisker */
	double pr_lo, pr_hi;
	enum pg_verdict pr_verdict;
	enum pg_tone pr_tone; /* its colour, the annotation's (pg_attention_tone) */
	const char *pr_name;  /* "this PR" */
	/* a confirmation re-run's value after the PR's, drawn as a square
	 * with its name under it; none without a rerun_name (zeroed); its
	 * interval as the PR's */
	double rerun, rerun_change;
	bool rerun_interval;
	double rerun_lo, rerun_hi;
	const char *rerun_name; /* "re-run" */
};

void pg_trends_chart(struct pg_buf *out, const struct pg_trends_chart *c);

/*
 * The chart of a regressed row of a comparison, as a standalone SVG file.
 * With a trail (the baseline window of runs of main): the runs, the
 * baseline and the threshold that decided the row, and the run's value as
 * a diamond labelled run_name (NULL: "this run", "first run" with a
 * re-run). With a spread (a thresholds file's row): changes from the
 * baseline -- the run's other points or the baseline's samples, the band
 * to the failing limit, the run's change. A confirmation re-run's value is
 * a square beside the first run's, both in a legend. False (nothing
 * written) when the row has neither.
 */
bool pg_trends_evidence_svg(struct pg_buf *out, const struct pg_cmp_row *r, const char *run_name);

/* The site's front page: one line per GPU. */
struct pg_trends_entry {
	const char *gpu;
	const char *dir; /* its directory (a stem) */
	size_t points, jobs, flagged;
	const char *first_date, *last_date; /* or NULL */
};
void pg_trends_index(struct pg_buf *out, const struct pg_trends_entry *v, size_t n,
		     const char *source);

#endif
