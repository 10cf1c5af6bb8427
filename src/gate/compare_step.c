/*
 * The step decision: every gated (point, metric) pair of a run decided at
 * once, within one false-alarm budget (docs/gate.md, "The decision").
 *
 * Noise on GPU machines lives at the level of the job (one agent, one
 * session, its own offset shared by every point it runs), with repeats
 * inside the job agreeing far better; a git history's level moves in steps
 * (an image, a driver, a merged change) and is flat between them; its tails
 * are heavy. So per metric:
 *
 *  - the job's median of its repeats is its value; a git baseline is a
 *    table of job medians (jobs x points) over the analysed span, each
 *    point's column cut into segments at its change points;
 *  - a median polish of that table with one level per segment splits each
 *    job's offset from each point's levels; a point's level is its latest
 *    segment (as soon as main has persisted there, two runs by default),
 *    its noise the leftovers of every segment (a step does not reset it),
 *    shrunk towards the metric's pooled figure, its tails measured as a
 *    Student t's degrees of freedom;
 *  - the run's own offset is the median over its points of their change,
 *    and each point is judged on what is left (method "step"); with fewer
 *    than 3 points a pair is judged alone against the job-to-job spread of
 *    its segments ("history");
 *  - a change common to every point is judged against the history's job
 *    offsets, as its own hypothesis;
 *  - a thresholds file is an explicit bar: a change beyond its tolerance
 *    that the noise it states cannot explain fails -- the run's other
 *    points' spread ("crosswise", with 5 points, leaving the judged point
 *    out), else the file's recorded noise or the repeats' ("tolerance").
 *
 * Every test is a prediction interval (Student's t), one-sided in the worse
 * direction. Each pair is judged on its own samples: too few in the
 * history, or no spread to test against, is insufficient-data, never a
 * regression. A point's metrics move together (throughput down, every
 * latency up), so a point is one hypothesis: its smallest p-value times the
 * effective number of independent tests among its metrics (Li and Ji, from
 * the correlation of the history's leftovers). Holm's procedure over the
 * points holds the step's false-alarm rate at policy->step_false_alarm,
 * with a fifth for whole-run changes when there are any.
 *
 * Confirmation is replication: a first run flags at a looser level (flag),
 * the re-run repeats the flagged points and a few unflagged ones (anchors,
 * which measure the re-run job's own offset), and each flagged hypothesis
 * must show again in the re-run alone at budget / flag, so that two
 * independent jobs pass both with probability budget. Without a re-run the
 * first run decides at the budget itself. A tail metric's one-run spike is
 * a warning unless main's newest run was beyond too or a re-run confirms;
 * a run at the level main's gate already found regressed (the newest
 * record says so) is main's known change, a warning.
 */
#include "gate/compare_step.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "gate/compare_stats.h"

#include <math.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prior weight (degrees of freedom) of a metric's pooled leftover spread
 * when a point's own is estimated from its jobs. */
/* The least heterogeneity of the points' log variances assumed (a point
 * may be this much noisier than the rest unseen: sd ratios of about 15%),
 * so that a point's own spread always counts a little. */
#define HETERO_MIN 0.02
/* The share of the budget for whole-run changes. */
#define COMMON_SHARE 0.2
/* Points needed to tell a run's common change from a point's. */
#define MIN_STEP_POINTS 3
/* ... and to measure the noise from the run's own points. */
#define MIN_CROSSWISE_POINTS 5
/* Degrees of freedom per value of the robust sd (its efficiency). */
#define SD_EFFICIENCY 0.9
/* A median's variance over a mean's, for normal data. */
#define MEDIAN_VAR (M_PI / 2)
/* With a re-run to come, a first run flags a point at this many times
 * the budget (at most FLAG_MAX), and the re-run confirms it at budget /
 * flag: two independent jobs together at the budget. */
#define FLAG_FACTOR 8
#define FLAG_MAX    0.5
/* The re-run alone must show a flagged point's change at this level: one
 * bad job cannot make a step fail with the other one clean. */
#define REPLICATE 0.25
/* Pseudo-residuals of a normal's tails the measured tail share is smoothed
 * with (pg_cmpstat_tail_shape): a few hundred leftovers speak for
 * themselves, a handful do not. */
#define TAIL_PRIOR 60
/* The heaviest tails the leftovers are given: a t of 2.5 degrees of
 * freedom, and its robust sd in its own sds (compare_stats.c's table). */
#define NU_FLOOR       2.5
#define NU_FLOOR_SCALE 1.3534
/* Leftovers two metrics need in common for their correlation. */
#define MIN_CORR_CELLS 10

enum family { FAM_NONE = -1, FAM_POINTS, FAM_COMMON, FAM_WARN, FAM_COUNT };

/* One hypothesis: a pair, or a metric's whole-run change. Effects are in
 * log units, oriented so that worse is positive. */
struct hyp {
	double e1, e2; /* effect in the first run, the re-run (NAN: none) */
	double p1, p2; /* one-sided p (worse); NAN: no test */
	double p1_better;
	double padj;     /* Holm-adjusted p1 within its family */
	double sd1, sd2; /* sd of e1, e2 (log) */
	double df;       /* degrees of freedom of the test (the sd's, or the tails') */
	double shared;   /* the part of sd1^2 (and sd2^2) both runs share: the
			  * baseline level's error (log^2) */
	double scale;    /* the tails' robust sd in the t's units (1: normal) */
	double tol;      /* log(1 + tolerance) */
	double better;   /* an improvement's threshold (log, > 0): the tolerance
			  * as the table shows it, the other way */
	double raw1;     /* the change as the table shows it (log, oriented; before
			  * the run's common change is taken out); NAN: none */
	double fail;     /* the failing threshold (log); INFINITY: cannot fail */
	enum family fam;
	bool floor1, floor2; /* under the floor in that run */
	bool flagged;        /* the first run flags a failure: worth a re-run */
	bool strong;         /* ... and fails on its own when none comes */
	bool by_strict;      /* flagged only because of --strict (not significant) */
	bool bar_only;       /* a thresholds value with nothing to measure the noise:
			      * the tolerance is the bar, a re-run the check */
	bool spike;          /* a tail metric's first run alone: fails only if it repeats */
	bool repeats;        /* main's newest run was beyond the failing threshold too */
	bool known;          /* at the level main's gate already found regressed */
	bool main_level;     /* ... or, on a pull request, at main's newest run's
			      * level, whatever main's gate said of it */
	bool rerun;          /* the re-run has evidence on it */
	bool rerun_failed;   /* ... or failed to produce it */
	bool rerun_lacks;
	enum pg_verdict verdict;
	enum pg_outcome outcome;
	bool confirmed;
};

struct pair_state {
	double centre;      /* baseline level (log, oriented) */
	long from;          /* the first job behind centre (a change point's); 0: the window */
	double y1, y2;      /* the runs' values (log, oriented); NAN */
	double r1, r2;      /* raw change (log, oriented) */
	double last;        /* main's newest job's leftover (log, oriented); NAN */
	double before_last; /* ... and the job's before it; NAN */
	const char *noise_source; /* the tolerance method's noise, in words; NULL */
	size_t n_level;           /* jobs behind centre */
	/* the history's jobs for the spread (pg_base_metric.span; a baseline
	 * built without one: its window, one segment) */
	const double *sv;
	const long *sj;
	const int *sg;
	size_t sn;
	int *zeros;         /* owned: the one segment of a span-less window */
	char *insufficient; /* why the pair cannot be judged (owned), or NULL */
	enum pg_cmp_method method;
	size_t unit;
	long family; /* its point's, among the point families; -1 */
	struct hyp h;
};

/* A leftover of the history: the unit's job x point cell, for the
 * correlation between the metrics of a point. */
struct cell {
	const struct pg_base_point *bp;
	long job;
	double v;
};

struct unit {
	const struct pg_metric *m;
	size_t group; /* the job whose points these are */
	size_t *pairs;
	size_t n;
	enum pg_cmp_method method;
	double off1, off2; /* the runs' common offsets (log, oriented); NAN; the
			     * re-run's from its anchors */
	double off2_all;   /* the re-run's from all its points */
	size_t n_off1, n_off2;
	double level;  /* the history jobs' offset level since the last whole-run change; NAN */
	double spread; /* the offsets' sd around their segments' levels (log); NAN */
	double spread_df;
	double spread_nu, spread_scale; /* the offsets' tails */
	size_t n_hist;                  /* jobs behind level */
	double last_off;                /* main's newest job's offset (log, oriented); NAN */
	double before_last_off;         /* ... and the one before it; NAN */
	double nu, scale;               /* the leftovers' tails (pg_cmpstat_tail_shape) */
	struct cell *cells;             /* the history's leftovers, sorted by point, job */
	size_t n_cells;
	bool has_common;
	struct hyp common;
	long common_index; /* in c->commons; -1 */
};

/* A point of a job: its failable pairs are one hypothesis. */
struct point_family {
	const struct pg_base_point *bp;
	size_t group;
	size_t *pairs; /* into s->pairs */
	size_t n;
	bool measured; /* the correlation of its metrics is known */
	double rho;    /* their mean correlation (>= 0) */
	double p;      /* family_p of the smallest p-value of its pairs */
};

struct step {
	struct pg_comparison *c;
	const struct pg_step_pair *pairs;
	size_t n;
	const struct pg_policy *policy;
	const struct pg_baseline *base;
	const struct pg_compare_opts *opts;
	struct pair_state *ps;
	struct unit *units;
	size_t n_units;
	struct point_family *fams;
	size_t n_fams;
	double *corr;             /* n_units x n_units: the leftovers' correlation; NAN */
	bool *point_flagged;      /* per pair: its point has a flagged pair */
	double budget[FAM_COUNT]; /* a first run alone fails at this level */
	double flag[FAM_COUNT];   /* ... and is worth a re-run at this one */
	size_t fam_n[FAM_COUNT];
};

static double sign_of(const struct pg_metric *m)
{
	return m->direction == PG_HIGHER_IS_BETTER ? -1 : 1;
}

/* log(v), oriented so that worse is larger; NAN when v is not positive. */
static double orient(const struct pg_metric *m, double v)
{
	return isfinite(v) && v > 0 ? sign_of(m) * log(v) : NAN;
}

/* A relative change as measured (current / baseline - 1) from an oriented
 * log change. */
static double measured(const struct pg_metric *m, double x)
{
	return isnan(x) ? NAN : expm1(sign_of(m) * x);
}

static double median_of(const double *x, size_t n)
{
	double *copy = pg_xmalloc((n ? n : 1) * sizeof(double)), med;

	memcpy(copy, x, n * sizeof(double));
	med = pg_cmpstat_median_inplace(copy, n);
	free(copy);
	return med;
}

/* Is an effect (log, oriented) on a baseline value under the floor? */
static bool under_floor(const struct pg_metric *m, const struct pg_rule *r, double base_value,
			double effect)
{
	if (isnan(effect) || !(r->floor > 0) || !isfinite(base_value))
		return false;
	return fabs(base_value * measured(m, effect)) <= r->floor;
}

/* Values with no log scale (0 or below): worse or better beyond the
 * floor, as an effect without a size (+-INFINITY), else 0; NAN when one
 * is missing. */
static double beyond_floor(const struct pg_metric *m, const struct pg_rule *r, double base,
			   double value)
{
	double d = value - base;

	if (!isfinite(d))
		return NAN;
	if (fabs(d) <= r->floor || d == 0)
		return 0;
	return (d > 0) == (m->direction == PG_LOWER_IS_BETTER) ? INFINITY : -INFINITY;
}

static void set_why(struct pair_state *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_why(struct pair_state *st, const char *fmt, ...)
{
	struct pg_buf b = PG_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	pg_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	free(st->insufficient);
	st->insufficient = pg_buf_detach(&b);
}

/* ------------------------------------------------------------------ */
/* Units: the pairs of one metric                                      */

static void build_units(struct step *s)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct pg_metric *m = s->pairs[i].bm->metric;
		size_t u = 0, g = s->pairs[i].group;
		while (u < s->n_units && (s->units[u].m != m || s->units[u].group != g))
			u++;
		if (u == s->n_units) {
			memset(&s->units[u], 0, sizeof(s->units[u]));
			s->units[u].m = m;
			s->units[u].group = g;
			s->units[u].pairs = pg_xmalloc(s->n * sizeof(size_t));
			s->units[u].off1 = s->units[u].off2 = s->units[u].off2_all = NAN;
			s->units[u].level = s->units[u].spread = s->units[u].last_off =
				s->units[u].before_last_off = NAN;
			s->units[u].nu = s->units[u].spread_nu = INFINITY;
			s->units[u].scale = s->units[u].spread_scale = 1;
			s->units[u].common_index = -1;
			s->n_units++;
		}
		s->units[u].pairs[s->units[u].n++] = i;
		s->ps[i].unit = u;
		s->ps[i].family = -1;
	}
}

/* The first job at the level of the last whole-run change point of m, 0
 * when none. */
static long common_from(const struct pg_baseline *b, const struct pg_metric *m)
{
	long from = 0;
	for (size_t i = 0; i < b->n_changes; i++)
		if (!b->changes[i].point && b->changes[i].metric == m && b->changes[i].job > from)
			from = b->changes[i].job;
	return from;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

/*
 * The share of a value's variance left in its leftover from the level of
 * its segment of n values: a median of 2 is their mean (half), of n >= 3
 * about 1 - 0.43 / n; 0 for a segment of one (it is its own level).
 */
static double seg_keep(size_t n)
{
	if (n < 2)
		return 0;
	if (n == 2)
		return 0.5;
	return 1 - 0.43 / (double)n;
}

/* The variance of a level from n values, in units of one value's. */
static double level_var(size_t n)
{
	if (!n)
		return INFINITY;
	return n <= 2 ? 1 / (double)n : MEDIAN_VAR / (double)n;
}

/* The tails of the leftovers z (in robust sds of spread sd): the share
 * beyond 3 of them, as a t's degrees of freedom and scale. */
static void tails_of(const double *z, size_t n, double sd, double *nu, double *scale)
{
	size_t beyond = 0;

	for (size_t i = 0; i < n; i++)
		beyond += sd > 0 && fabs(z[i]) > 3 * sd;
	pg_cmpstat_tail_shape(beyond, n, TAIL_PRIOR, nu, scale);
	/* a history mixing regimes (cold single repeats, warm medians of
	 * three) reads as a Cauchy's tails; a real nightly series keeps
	 * some power only with a t of 2.5 at the heaviest (bench/replay: 3
	 * of 5 regressions caught where 1 of 5 was, the same false alarm),
	 * and a dedicated node's 8% of nights 3-8 sds out (gate-sim
	 * --profile dedicated) fail 9% of clean steps under a t of 3, 2%
	 * under 2.5, with a point 2% worse still caught 92% of the time */
	if (*nu < NU_FLOOR) {
		*nu = NU_FLOOR;
		*scale = NU_FLOOR_SCALE;
	}
}

static int cmp_cell(const void *a, const void *b)
{
	const struct cell *x = a, *y = b;
	if (x->bp != y->bp)
		return (uintptr_t)x->bp < (uintptr_t)y->bp ? -1 : 1;
	return (x->job > y->job) - (x->job < y->job);
}

/*
 * Each point's variance from its own spread and the metric's pooled one,
 * as much of its own as the points' spreads differ beyond what their
 * estimation alone explains (empirical Bayes on log variances: a point's
 * log s^2 varies by about 2 / df around its true value): when they all
 * agree, the pooled spread (of hundreds of leftovers) judges every point;
 * a point truly noisier than the rest keeps its own. var[k] and df[k] get
 * the variance and its degrees of freedom; NAN where neither exists.
 */
static void shrink_spreads(const double *own, const double *own_df, size_t P, double pooled,
			   double pooled_df, double *var, double *df)
{
	double *l = pg_xmalloc((P + 1) * sizeof(double)), tau2 = HETERO_MIN, expect = 0;
	size_t n = 0;

	for (size_t k = 0; k < P; k++)
		if (own[k] > 0 && own_df[k] >= 3) {
			l[n++] = 2 * log(own[k]);
			expect += 2 / own_df[k];
		}
	if (n >= 3 && pooled > 0) {
		double mad = 1.4826 * pg_cmpstat_mad(l, n);
		tau2 = fmax(HETERO_MIN, mad * mad - expect / (double)n);
	}
	for (size_t k = 0; k < P; k++) {
		if (isnan(pooled) || !(pooled > 0)) {
			var[k] = own[k] * own[k];
			df[k] = own_df[k];
		} else if (!(own[k] > 0) || !(own_df[k] >= 1)) {
			var[k] = pooled * pooled;
			df[k] = pooled_df;
		} else {
			double w = tau2 / (tau2 + 2 / own_df[k]);
			var[k] = exp(w * 2 * log(own[k]) + (1 - w) * 2 * log(pooled));
			df[k] = 1 / (w * w / own_df[k] + (1 - w) * (1 - w) / pooled_df);
		}
	}
	free(l);
}

/*
 * Method "step": the jobs x points table of the unit's history, each
 * column cut into its segments, polished with one level per segment; per
 * pair its centre (its latest segment's level), the sd and degrees of
 * freedom of a new job's leftover (from every segment's leftovers), main's
 * newest job's leftover; the history's job offsets around their own
 * segments' levels.
 */
static void step_history(struct step *s, struct unit *u)
{
	long *jobs = NULL, from = common_from(s->base, u->m);
	size_t n_jobs = 0, cap = 0, P = u->n, R, n_all = 0, n_offs = 0, n_cuts = 0;
	double *y, *row, *lvl, *all_res, *offs, pooled, *own, *own_df;
	int *seg, *nseg;
	bool *win;
	size_t *count, *seg_n, max_seg = 1, recent;
	long cuts[64];

	for (size_t k = 0; k < P; k++) {
		const struct pair_state *sp = &s->ps[u->pairs[k]];
		for (size_t i = 0; i < sp->sn; i++) {
			PG_ARRAY_PUSH(jobs, n_jobs, cap, sp->sj[i]);
			if ((size_t)sp->sg[i] + 1 > max_seg)
				max_seg = (size_t)sp->sg[i] + 1;
		}
	}
	qsort(jobs, n_jobs, sizeof(long), cmp_long);
	R = 0;
	for (size_t i = 0; i < n_jobs; i++)
		if (!R || jobs[R - 1] != jobs[i])
			jobs[R++] = jobs[i];

	y = pg_xmalloc((R * P + 1) * sizeof(double));
	seg = pg_xmalloc((R * P + 1) * sizeof(int));
	win = pg_xcalloc(R * P + 1, sizeof(bool));
	nseg = pg_xcalloc(P + 1, sizeof(int));
	for (size_t i = 0; i < R * P; i++) {
		y[i] = NAN;
		seg[i] = -1;
	}
	for (size_t k = 0; k < P; k++) {
		const struct pg_base_metric *bm = s->pairs[u->pairs[k]].bm;
		const struct pair_state *sp = &s->ps[u->pairs[k]];
		for (size_t i = 0; i < sp->sn; i++) {
			long *at = bsearch(&sp->sj[i], jobs, R, sizeof(long), cmp_long);
			size_t r = (size_t)(at - jobs);
			y[r * P + k] = orient(u->m, sp->sv[i]);
			seg[r * P + k] = sp->sg[i];
			if (sp->sg[i] + 1 > nseg[k])
				nseg[k] = sp->sg[i] + 1;
		}
		/* the level's window: the latest segment's last jobs */
		for (size_t i = 0; i < bm->n_samples && bm->jobs; i++) {
			long *at = bsearch(&bm->jobs[i], jobs, R, sizeof(long), cmp_long);
			if (at)
				win[(size_t)(at - jobs) * P + k] = true;
		}
	}
	/* jobs with an offset: enough points */
	count = pg_xcalloc(R ? R : 1, sizeof(size_t));
	for (size_t r = 0; r < R; r++)
		for (size_t k = 0; k < P; k++)
			count[r] += !isnan(y[r * P + k]);

	/* the polish: segment levels, then job offsets, a few times over */
	row = pg_xcalloc(R ? R : 1, sizeof(double));
	lvl = pg_xmalloc((P * max_seg + 1) * sizeof(double));
	seg_n = pg_xcalloc(P * max_seg + 1, sizeof(size_t));
	all_res = pg_xmalloc((R * P + 1) * sizeof(double));
	for (int it = 0; it < 6; it++) {
		for (size_t k = 0; k < P; k++)
			for (int sg = 0; sg < nseg[k]; sg++) {
				size_t m = 0;
				bool last = sg == nseg[k] - 1;
				for (size_t r = 0; r < R; r++)
					if (seg[r * P + k] == sg && !isnan(y[r * P + k]) &&
					    (!last || win[r * P + k]))
						all_res[m++] = y[r * P + k] - row[r];
				lvl[k * max_seg + (size_t)sg] = m ? pg_cmpstat_median_inplace(
									    all_res, m)
								  : NAN;
				if (it == 0) {
					size_t c = 0;
					for (size_t r = 0; r < R; r++)
						c += seg[r * P + k] == sg && !isnan(y[r * P + k]) &&
						     count[r] >= MIN_STEP_POINTS;
					seg_n[k * max_seg + (size_t)sg] = c;
				}
			}
		for (size_t r = 0; r < R; r++) {
			size_t m = 0;
			if (count[r] < MIN_STEP_POINTS) {
				row[r] = NAN;
				continue;
			}
			for (size_t k = 0; k < P; k++) {
				double l = seg[r * P + k] >= 0
						   ? lvl[k * max_seg + (size_t)seg[r * P + k]]
						   : NAN;
				if (!isnan(y[r * P + k]) && !isnan(l))
					all_res[m++] = y[r * P + k] - l;
			}
			row[r] = m ? pg_cmpstat_median_inplace(all_res, m) : NAN;
		}
	}

	/* leftovers, each scaled for what its segment's level and its job's
	 * offset took out of it; the spread from the newest window's jobs
	 * only (recent): the noise is the current regime's, and a history
	 * that began chaotic (a new server flag, 3 repeats cut to 1) does not
	 * blind the gate for good */
	recent = R > (size_t)s->policy->history_window && s->policy->history_window > 0
			 ? R - (size_t)s->policy->history_window
			 : 0;
	{
		double off_keep = 1 - 0.43 / (double)P;
		u->cells = pg_xmalloc((R * P + 1) * sizeof(*u->cells));
		for (size_t r = recent; r < R; r++) {
			if (isnan(row[r]))
				continue;
			for (size_t k = 0; k < P; k++) {
				double x = y[r * P + k], keep;
				int sg = seg[r * P + k];
				if (isnan(x) || sg < 0)
					continue;
				keep = seg_keep(seg_n[k * max_seg + (size_t)sg]) * off_keep;
				if (!(keep > 0))
					continue;
				x = (x - row[r] - lvl[k * max_seg + (size_t)sg]) / sqrt(keep);
				all_res[n_all++] = x;
				u->cells[u->n_cells++] = (struct cell){ s->pairs[u->pairs[k]].bp,
									jobs[r], x };
			}
		}
		qsort(u->cells, u->n_cells, sizeof(*u->cells), cmp_cell);
	}
	pooled = pg_cmpstat_robust_sd(all_res, n_all, 0);
	tails_of(all_res, n_all, pooled, &u->nu, &u->scale);

	/* each point's own spread, then pooled with the others' as far as
	 * they agree (shrink_spreads) */
	own = pg_xmalloc((P + 1) * sizeof(double));
	own_df = pg_xmalloc((P + 1) * sizeof(double));
	for (size_t k = 0; k < P; k++) {
		struct pair_state *st = &s->ps[u->pairs[k]];
		const struct pg_base_metric *bm = s->pairs[u->pairs[k]].bm;
		size_t kp = 0, n_level = 0, last_r = R, before_r = R;
		int latest = nseg[k] - 1;

		own[k] = own_df[k] = NAN;
		for (size_t r = 0; r < R; r++) {
			double x = y[r * P + k], keep;
			int sg = seg[r * P + k];
			if (isnan(x) || isnan(row[r]) || sg < 0)
				continue;
			before_r = last_r;
			last_r = r;
			n_level += win[r * P + k];
			if (r < recent)
				continue;
			keep = seg_keep(seg_n[k * max_seg + (size_t)sg]) * (1 - 0.43 / (double)P);
			if (keep > 0)
				all_res[kp++] = (x - row[r] - lvl[k * max_seg + (size_t)sg]) /
						sqrt(keep);
		}
		st->n_level = n_level;
		st->from = bm->level_from > 0 ? bm->level_from : 0;
		st->h.sd1 = NAN;
		if (latest < 0 || isnan(lvl[k * max_seg + (size_t)latest]))
			continue;
		st->centre = lvl[k * max_seg + (size_t)latest];
		if (last_r < R)
			st->last = y[last_r * P + k] - row[last_r] - st->centre;
		if (before_r < R)
			st->before_last = y[before_r * P + k] - row[before_r] - st->centre;
		if (kp >= 3) {
			own[k] = pg_cmpstat_robust_sd(all_res, kp, 0);
			/* a value per leftover, less a level per segment */
			own_df[k] = SD_EFFICIENCY * fmax(1, (double)kp - (double)nseg[k]);
		}
	}
	{
		double pooled_df = SD_EFFICIENCY * fmax(1, (double)n_all - (double)P);
		double *var = pg_xmalloc((P + 1) * sizeof(double));
		double *df = pg_xmalloc((P + 1) * sizeof(double));
		shrink_spreads(own, own_df, P, pooled, pooled_df, var, df);
		for (size_t k = 0; k < P; k++) {
			struct pair_state *st = &s->ps[u->pairs[k]];
			double lv;
			if (isnan(st->centre) || isnan(var[k]))
				continue;
			/* a new job's leftover: its own noise, its level's
			 * error, less what its job's offset (a median of P
			 * points with it) takes */
			lv = level_var(st->n_level);
			st->h.sd1 = sqrt(var[k] * fmax(0.5, 1 + lv - 0.43 / (double)P));
			st->h.sd2 = st->h.sd1; /* refined once the re-run's anchors are known */
			st->h.shared = var[k] * lv;
			st->h.df = df[k];
		}
		free(var);
		free(df);
	}
	free(own);
	free(own_df);

	/* the job offsets: their level since the last whole-run change, their
	 * spread around every segment's own level */
	for (size_t i = 0; i < s->base->n_changes && n_cuts < 64; i++)
		if (!s->base->changes[i].point && s->base->changes[i].metric == u->m)
			cuts[n_cuts++] = s->base->changes[i].job;
	qsort(cuts, n_cuts, sizeof(long), cmp_long);
	offs = pg_xmalloc((R ? R : 1) * sizeof(double));
	{
		size_t start = 0, n_res = 0;
		double *res = pg_xmalloc((R ? R : 1) * sizeof(double));
		for (size_t c = 0; c <= n_cuts; c++) {
			long lo = c ? cuts[c - 1] : LONG_MIN, hi = c < n_cuts ? cuts[c] : LONG_MAX;
			size_t m = 0;
			double med;
			for (size_t r = 0; r < R; r++)
				if (!isnan(row[r]) && jobs[r] >= lo && jobs[r] < hi)
					offs[m++] = row[r];
			if (!m)
				continue;
			med = median_of(offs, m);
			for (size_t i = 0; i < m && m >= 2; i++)
				res[n_res++] = (offs[i] - med) / sqrt(seg_keep(m));
			start += m;
		}
		n_offs = 0;
		for (size_t r = 0; r < R; r++)
			if (!isnan(row[r]) && jobs[r] >= from)
				offs[n_offs++] = row[r];
		/* jobs are in order: main's newest offset, and the one before */
		for (size_t r = R, seen = 0; r-- > 0 && seen < 2;)
			if (!isnan(row[r]))
				*(seen++ ? &u->before_last_off : &u->last_off) = row[r];
		if (n_offs >= 1 && n_res >= 3) {
			u->level = median_of(offs, n_offs);
			u->spread = pg_cmpstat_robust_sd(res, n_res, 0);
			u->spread_df = SD_EFFICIENCY * (double)(n_res - (n_cuts + 1));
			u->n_hist = n_offs;
			/* slow nodes are the offsets' heavy tails */
			tails_of(res, n_res, u->spread, &u->spread_nu, &u->spread_scale);
		}
		(void)start;
		free(res);
	}
	free(jobs);
	free(y);
	free(seg);
	free(win);
	free(nseg);
	free(row);
	free(lvl);
	free(seg_n);
	free(count);
	free(all_res);
	free(offs);
}

/*
 * Method "history": a pair alone, its level the latest segment's window,
 * its noise its jobs' spread around every segment's level.
 */
static void history_alone(struct step *s, struct unit *u)
{
	double *all = NULL;
	size_t n_all = 0, cap = 0;

	for (size_t i = 0; i < u->n; i++) {
		const struct pg_base_metric *bm = s->pairs[u->pairs[i]].bm;
		struct pair_state *st = &s->ps[u->pairs[i]];
		double *v = pg_xmalloc((st->sn + bm->n_samples + 1) * sizeof(double));
		size_t k0 = n_all, segs = 0, lo = 0;

		long cf = common_from(s->base, u->m);

		u->cells = pg_xrealloc(u->cells, (u->n_cells + st->sn + 1) * sizeof(*u->cells));
		/* segments: the point's own levels, and the whole run's (this
		 * point alone cannot take a job's offset out) */
		while (lo < st->sn) {
			size_t hi = lo, m;
			double med;
			while (hi < st->sn && st->sg[hi] == st->sg[lo] &&
			       (st->sj[hi] >= cf) == (st->sj[lo] >= cf))
				hi++;
			m = hi - lo;
			for (size_t j = 0; j < m; j++)
				v[j] = orient(u->m, st->sv[lo + j]);
			med = median_of(v, m);
			for (size_t j = 0; j < m && m >= 2; j++) {
				double x = (v[j] - med) / sqrt(seg_keep(m));
				PG_ARRAY_PUSH(all, n_all, cap, x);
				/* by job, for the correlation between metrics */
				u->cells[u->n_cells++] = (struct cell){ s->pairs[u->pairs[i]].bp,
									st->sj[lo + j], x };
			}
			segs++;
			lo = hi;
		}
		/* the level: the window's jobs; after a step common to the
		 * whole run (seen on the history's other points), the jobs
		 * since it: this point alone cannot take a job's offset out */
		{
			size_t k = 0;
			for (size_t j = 0; j < bm->n_samples; j++)
				if (!bm->jobs || bm->jobs[j] >= cf)
					v[k++] = orient(u->m, bm->samples[j]);
			if (!k)
				for (size_t j = 0; j < bm->n_samples; j++)
					v[k++] = orient(u->m, bm->samples[j]);
			st->n_level = k;
			st->centre = k ? median_of(v, k) : NAN;
			st->from = k < bm->n_samples ? cf : 0;
		}
		st->last = st->sn ? orient(u->m, st->sv[st->sn - 1]) - st->centre : NAN;
		st->before_last = st->sn > 1 ? orient(u->m, st->sv[st->sn - 2]) - st->centre : NAN;
		if (n_all - k0 >= 3) {
			double sd = pg_cmpstat_robust_sd(all + k0, n_all - k0, 0);
			st->h.sd1 = st->h.sd2 = sd * sqrt(1 + level_var(st->n_level));
			st->h.shared = sd * sd * level_var(st->n_level);
			st->h.df = SD_EFFICIENCY * fmax(0, (double)(n_all - k0) - (double)segs);
		} else {
			st->h.sd1 = st->h.sd2 = st->h.df = NAN;
		}
		free(v);
	}
	if (n_all) {
		double sd = pg_cmpstat_robust_sd(all, n_all, 0);
		tails_of(all, n_all, sd, &u->nu, &u->scale);
	}
	qsort(u->cells, u->n_cells, sizeof(*u->cells), cmp_cell);
	free(all);
}

/*
 * A run's common change for the unit's metric: the median over its pairs
 * of their raw change. The first run: the unit's pairs (its job's). The
 * re-run is one job whatever ran the first: every pair of the metric, only
 * the anchors (points with nothing flagged) when want_anchors and there
 * are enough of them. Pairs that cannot be judged do not count. *n gets
 * how many.
 */
static double run_offset(const struct step *s, const struct unit *u, bool rerun, bool want_anchors,
			 size_t *n)
{
	double *v = pg_xmalloc((s->n ? s->n : 1) * sizeof(double)), off;
	size_t k = 0;

	for (int pass = want_anchors ? 0 : 1; pass < 2; pass++) {
		k = 0;
		for (size_t i = 0; i < s->n; i++) {
			const struct pair_state *st = &s->ps[i];
			double r = rerun ? st->r2 : st->r1;
			if (s->pairs[i].bm->metric != u->m ||
			    (!rerun && s->pairs[i].group != u->group) || st->insufficient)
				continue;
			if (isnan(r) || (pass == 0 && s->point_flagged[i]))
				continue;
			if (st->method != PG_METHOD_STEP && st->method != PG_METHOD_CROSSWISE)
				continue;
			v[k++] = r;
		}
		if (k >= MIN_STEP_POINTS)
			break;
	}
	off = k >= MIN_STEP_POINTS ? pg_cmpstat_median_inplace(v, k) : NAN;
	free(v);
	*n = k >= MIN_STEP_POINTS ? k : 0;
	return off;
}

/*
 * The part of a run's common change a point is judged beyond: all of a
 * slow job's, and a fast job's; but a whole run better than its history's
 * jobs ever are (beyond 3 of their sds; a thresholds file: beyond the
 * tolerance) is a real improvement -- a new image, a driver -- not a fast
 * job, and a point that improved less than the rest did not regress.
 */
static double credited(const struct step *s, const struct unit *u, double off)
{
	double tol = INFINITY, bar;

	if (!(off < 0))
		return off;
	for (size_t i = 0; i < u->n; i++)
		tol = fmin(tol, log1p(s->c->rows[s->pairs[u->pairs[i]].row].rule.tolerance));
	bar = u->spread > 0 ? 3 * u->spread * sqrt(1 + level_var(u->n_hist)) : tol;
	return off - (isnan(u->level) ? 0 : u->level) < -bar ? 0 : off;
}

/*
 * A run with fewer repeats than the history's jobs has a noisier median
 * than the leftovers the noise was measured on: add the difference, from
 * the run's own repeat-to-repeat spread w (a median of n has about
 * pi/2 w^2 / n of variance).
 */
static double fewer_repeats(double sd, double w, size_t n, long history_repeats)
{
	double extra;

	if (isnan(sd) || isnan(w) || !n || history_repeats <= (long)n)
		return sd;
	extra = MEDIAN_VAR * w * w * (1 / (double)n - 1 / (double)history_repeats);
	return sqrt(sd * sd + extra);
}

/* Student's t test of an effect: one-sided p in the worse direction and
 * in the better one, with the tails' shape (scale: see struct hyp). An sd
 * of 0 (nothing varies) makes any change certain. */
static void t_test(double e, double sd, double df, double scale, double *worse, double *better)
{
	if (isnan(e) || isnan(sd) || sd < 0 || isnan(df) || (sd > 0 && !(df > 0))) {
		*worse = NAN;
		if (better) /* NULL: the caller wants only the worse side */
			*better = NAN;
		return;
	}
	if (sd == 0) {
		*worse = e > 0 ? 0 : 1;
		if (better)
			*better = e < 0 ? 0 : 1;
		return;
	}
	*worse = pg_cmpstat_t_sf(e / sd * scale, df);
	if (better)
		*better = pg_cmpstat_t_sf(-e / sd * scale, df);
}

static void hyp_test(struct hyp *h, bool rerun)
{
	if (rerun)
		t_test(h->e2, h->sd2, h->df, h->scale, &h->p2, NULL);
	else
		t_test(h->e1, h->sd1, h->df, h->scale, &h->p1, &h->p1_better);
}

/* ------------------------------------------------------------------ */
/* First run                                                           */

static void thresholds(struct step *s, size_t i)
{
	const struct pg_step_pair *p = &s->pairs[i];
	const struct pg_rule *r = &s->c->rows[p->row].rule;
	struct hyp *h = &s->ps[i].h;
	double tol = r->tolerance;

	/* a baseline with no spread to test against but a recorded
	 * run-to-run noise: widen the tolerance to it */
	if (s->ps[i].method == PG_METHOD_TOLERANCE && isfinite(p->bm->noise) && r->noise_sigmas > 0)
		tol = fmax(tol, expm1(r->noise_sigmas * p->bm->noise));
	/* a history quieter than the default tolerance assumes: the noise
	 * itself says how small a change is plain (PG_NARROW_SIGMAS) */
	if (r->gate && !r->tolerance_set && isfinite(h->sd1) && h->sd1 > 0 &&
	    (s->ps[i].method == PG_METHOD_STEP || s->ps[i].method == PG_METHOD_HISTORY))
		tol = fmin(tol, fmax(PG_MIN_TOLERANCE, expm1(PG_NARROW_SIGMAS * h->sd1)));
	s->c->rows[p->row].tolerance = tol;
	h->tol = log1p(tol);
	/* the row shows the change as current / baseline - 1: a latency 6.6%
	 * lower is a log change of 0.068, past log(1.07), yet short of the 7%
	 * the Tolerance column says. An improvement must pass the tolerance as
	 * shown: lower-is-better metrics by -log(1 - tolerance) */
	h->better = p->bm->metric->direction == PG_HIGHER_IS_BETTER ? h->tol
		    : tol < 1                                       ? -log1p(-tol)
								    : INFINITY;
	h->fail = r->gate ? h->tol : r->escalate > 0 ? log1p(fmax(r->escalate, tol)) : INFINITY;
}

/*
 * The noise a thresholds file's value states for the tolerance method: its
 * recorded run-to-run noise (several runs), else the spread of its samples
 * (one run's repeats) and of the run's own repeats, else the run's repeats
 * alone; NAN sd when nothing measures it. Returns what measured it, in
 * words, or NULL.
 */
static const char *stated_noise(const struct step *s, size_t i, const struct unit *u, double *sd,
				double *df)
{
	const struct pg_step_pair *p = &s->pairs[i];
	const struct pg_base_metric *bm = p->bm;
	double wb = NAN, var = 0;
	size_t nb = 0;

	*sd = *df = NAN;
	if (isfinite(bm->noise) && bm->runs >= 3) {
		double j = log1p(bm->noise);
		*sd = j * sqrt(1 + level_var((size_t)bm->runs));
		*df = SD_EFFICIENCY * (double)(bm->runs - 1);
		return "the run-to-run noise the baseline records";
	}
	if (bm->n_samples >= 3) {
		double *v = pg_xmalloc(bm->n_samples * sizeof(double));
		for (size_t k = 0; k < bm->n_samples; k++)
			v[nb++] = orient(u->m, bm->samples[k]);
		wb = pg_cmpstat_robust_sd(v, nb, median_of(v, nb));
		free(v);
	}
	if (!isnan(wb))
		var += wb * wb * level_var(nb);
	if (!isnan(p->w1))
		var += p->w1 * p->w1 * level_var(p->n1);
	else if (!isnan(wb))
		var += wb * wb * level_var(p->n1 ? p->n1 : 1);
	if (isnan(wb) && isnan(p->w1))
		return NULL;
	*sd = sqrt(var);
	*df = SD_EFFICIENCY * (double)((nb >= 3 ? nb - 1 : 0) + (p->n1 >= 3 ? p->n1 - 1 : 0));
	return !isnan(wb) && !isnan(p->w1) ? "the spread of the baseline's and this run's repeats"
	       : !isnan(wb)                ? "the spread of the baseline's repeats"
					   : "the spread of this run's repeats";
}

/* Can the pair be judged on its own samples? Sets st->insufficient when
 * not (git histories only: a thresholds file's value is its own bar). */
static void sufficiency(struct step *s, size_t i)
{
	const struct pg_base_metric *bm = s->pairs[i].bm;
	struct pair_state *st = &s->ps[i];
	long need = s->policy->persist < 2 ? s->policy->persist : 2;
	const char *commit = NULL;

	if (st->method != PG_METHOD_STEP && st->method != PG_METHOD_HISTORY)
		return;
	if (bm->level_from >= 0 && (size_t)bm->level_from < s->base->n_jobs)
		commit = s->base->jobs[bm->level_from].commit;
	if ((long)st->sn < s->policy->min_history)
		set_why(st, "%zu run%s of this metric in the history, %ld needed", st->sn,
			st->sn == 1 ? "" : "s", s->policy->min_history);
	else if ((long)st->n_level < need)
		set_why(st, "%zu run%s since its level changed at %.12s, %ld needed", st->n_level,
			st->n_level == 1 ? "" : "s", commit ? commit : "?", need);
	else if (isnan(st->h.sd1) || isnan(st->h.df))
		set_why(st, "no run-to-run spread measured yet (%zu run%s)", st->sn,
			st->sn == 1 ? "" : "s");
}

/* This run's effect is beyond the tolerance, and main's newest run (last,
 * as this run's effect is measured) sat beyond it too, this run no more
 * than slack further (a run that went less far is at that level, or
 * back from it: either way not this run's doing). */
static bool at_newest_level(const struct hyp *h, double last, double slack)
{
	return !isnan(last) && last > h->tol && h->e1 > h->tol && h->e1 - last <= slack;
}

/* The slack of main's known change: its tolerance, or its noise. */
static double known_slack(const struct hyp *h)
{
	return fmax(h->tol, 3 * (isnan(h->sd1) ? 0 : h->sd1));
}

/* Main's newest job moved the whole run as this one does, and main's
 * gate found the metric regressed there (or this is a pull request):
 * main's change, not this run's (as a pair's, in first_run). */
static void common_known(const struct step *s, const struct unit *u, struct hyp *h)
{
	bool reported = false;

	for (size_t i = 0; i < u->n && !reported; i++)
		reported = s->pairs[u->pairs[i]].bm->known_job >= 0;
	/* a pull request's slack is only the tolerance: a second change on
	 * top of main's must still show */
	h->known = reported && at_newest_level(h, u->last_off - u->level, known_slack(h));
	h->main_level = !reported && s->opts->pull_request &&
			at_newest_level(h, u->last_off - u->level, h->tol) &&
			!(u->before_last_off - u->level > h->tol);
	h->known |= h->main_level;
}

static void first_run(struct step *s, struct unit *u)
{
	size_t valid = 0;
	bool history = true;

	for (size_t i = 0; i < u->n; i++) {
		const struct pg_step_pair *p = &s->pairs[u->pairs[i]];
		struct pair_state *st = &s->ps[u->pairs[i]];
		st->y1 = orient(u->m, p->v1);
		st->y2 = orient(u->m, p->v2);
		st->centre = orient(u->m, p->bm->value);
		st->last = st->before_last = NAN;
		valid += !isnan(st->y1) && !isnan(st->centre);
		if (p->bm->span) {
			st->sv = p->bm->span;
			st->sj = p->bm->span_jobs;
			st->sg = p->bm->span_seg;
			st->sn = p->bm->n_span;
		} else if (p->bm->jobs) {
			/* a baseline built without a span: its window, as one
			 * segment */
			st->zeros = pg_xcalloc(p->bm->n_samples + 1, sizeof(int));
			st->sv = p->bm->samples;
			st->sj = p->bm->jobs;
			st->sg = st->zeros;
			st->sn = p->bm->n_samples;
		}
		history &= st->sn > 0;
	}
	if (history && valid >= MIN_STEP_POINTS)
		u->method = PG_METHOD_STEP;
	else if (history)
		u->method = PG_METHOD_HISTORY;
	else if (valid >= MIN_CROSSWISE_POINTS)
		u->method = PG_METHOD_CROSSWISE;
	else
		u->method = PG_METHOD_TOLERANCE;
	for (size_t i = 0; i < u->n; i++) {
		struct pair_state *st = &s->ps[u->pairs[i]];
		st->method = u->method;
		st->h.p1 = st->h.p2 = st->h.p1_better = st->h.padj = NAN;
		st->h.e1 = st->h.e2 = st->h.sd1 = st->h.sd2 = st->h.df = NAN;
		st->h.scale = 1;
		st->h.fam = FAM_NONE;
	}
	if (u->method == PG_METHOD_STEP)
		step_history(s, u);
	else if (u->method == PG_METHOD_HISTORY)
		history_alone(s, u);

	for (size_t i = 0; i < u->n; i++) {
		size_t pi = u->pairs[i];
		struct pair_state *st = &s->ps[pi];

		if (st->method == PG_METHOD_STEP || st->method == PG_METHOD_HISTORY) {
			/* heavy tails make a t of fewer degrees of freedom */
			st->h.df = fmin(st->h.df, u->nu);
			st->h.scale = u->scale;
		}
		st->r1 = st->y1 - st->centre;
		st->r2 = st->y2 - st->centre;
		if (isnan(st->r1)) {
			/* a value <= 0: no log scale, only the floor can tell */
			st->method = PG_METHOD_TOLERANCE;
			st->r1 = beyond_floor(u->m, &s->c->rows[s->pairs[pi].row].rule,
					      s->pairs[pi].bm->value, s->pairs[pi].v1);
			if (!isnan(s->pairs[pi].v2))
				st->r2 = beyond_floor(u->m, &s->c->rows[s->pairs[pi].row].rule,
						      s->pairs[pi].bm->value, s->pairs[pi].v2);
		}
		sufficiency(s, pi);
		thresholds(s, pi);
	}

	/* the run's common change, and each point's beyond it */
	if (u->method == PG_METHOD_STEP || u->method == PG_METHOD_CROSSWISE) {
		size_t n_off = 0;
		u->off1 = run_offset(s, u, false, false, &n_off);
		u->n_off1 = n_off;
	}
	if (u->method == PG_METHOD_CROSSWISE) {
		/* the noise is the spread of the run's other points' leftovers:
		 * a published job's errors and ours; the judged point is left
		 * out, so that its own change does not hide itself */
		double *e = pg_xmalloc(u->n * sizeof(double));
		size_t P = u->n_off1;
		for (size_t i = 0; i < u->n; i++) {
			struct pair_state *st = &s->ps[u->pairs[i]];
			size_t k = 0;
			double sd;
			if (st->method != PG_METHOD_CROSSWISE || !P)
				continue;
			for (size_t j = 0; j < u->n; j++)
				if (j != i && !isnan(s->ps[u->pairs[j]].r1) &&
				    isfinite(s->ps[u->pairs[j]].r1))
					e[k++] = s->ps[u->pairs[j]].r1 - u->off1;
			sd = k >= MIN_CROSSWISE_POINTS - 1 ? pg_cmpstat_robust_sd(e, k, 0) : NAN;
			st->h.sd1 = st->h.sd2 = sd / sqrt(1 - 0.43 / (double)P);
			st->h.df = SD_EFFICIENCY * (double)(k > 1 ? k - 1 : 0);
		}
		free(e);
	}
	for (size_t i = 0; i < u->n; i++) {
		size_t pi = u->pairs[i];
		struct pair_state *st = &s->ps[pi];
		struct hyp *h = &st->h;
		const struct pg_step_pair *p = &s->pairs[pi];

		h->raw1 = st->r1;
		switch (st->method) {
		case PG_METHOD_STEP:
		case PG_METHOD_CROSSWISE:
			h->e1 = st->r1 - credited(s, u, u->off1);
			break;
		default:
			h->e1 = st->r1;
			break;
		}
		if (st->method == PG_METHOD_TOLERANCE && isfinite(h->e1))
			st->noise_source = stated_noise(s, pi, u, &h->sd1, &h->df);
		if (st->method == PG_METHOD_STEP || st->method == PG_METHOD_HISTORY)
			h->sd1 = fewer_repeats(h->sd1, p->w1, p->n1, p->bp->repeats);
		h->sd2 = h->sd1;
		if (!st->insufficient && isfinite(h->e1)) {
			hyp_test(h, false);
		} else if (!st->insufficient && isinf(h->e1)) {
			/* beyond the floor where there is no log scale (a value
			 * of 0): certain, whatever the noise */
			h->p1 = h->e1 > 0 ? 0 : 1;
			h->p1_better = 1 - h->p1;
		}
		h->bar_only = st->method == PG_METHOD_TOLERANCE && !st->insufficient &&
			      isnan(h->p1) && isfinite(h->e1);
		h->floor1 = under_floor(u->m, &s->c->rows[p->row].rule, p->bm->value, h->e1);
		/* main's newest run beyond the failing threshold too: a tail's
		 * change repeats rather than spikes; and when main's gate
		 * found it regressed there and this run sits at that level,
		 * it is main's known change */
		h->repeats = !isnan(st->last) && isfinite(h->fail) && st->last > h->fail;
		h->known = p->bm->known_job >= 0 && at_newest_level(h, st->last, known_slack(h));
		/* a pull request carries its merge base's level: what main's
		 * newest run shows is not the PR's doing (a second change on
		 * top of it must still show: the slack is the tolerance). Only
		 * a change new in that run: two runs of main beyond, and the
		 * level not following them, is no level to lean on */
		h->main_level = !h->known && s->opts->pull_request && p->bm->newest_job >= 0 &&
				at_newest_level(h, st->last, h->tol) && !(st->before_last > h->tol);
		h->known |= h->main_level;
	}

	/* the whole run's change */
	if (u->method == PG_METHOD_STEP || u->method == PG_METHOD_CROSSWISE) {
		struct hyp *h = &u->common;
		double fail = INFINITY, tol = INFINITY, better = INFINITY;
		long need = s->policy->persist < 2 ? s->policy->persist : 2;

		u->has_common = true;
		memset(h, 0, sizeof(*h));
		h->p1 = h->p2 = h->p1_better = h->padj = h->e2 = h->sd2 = h->df = NAN;
		h->scale = 1;
		h->fam = FAM_NONE;
		for (size_t i = 0; i < u->n; i++) {
			const struct hyp *ph = &s->ps[u->pairs[i]].h;
			fail = fmin(fail, ph->fail);
			tol = fmin(tol, ph->tol);
			better = fmin(better, ph->better);
		}
		h->fail = fail;
		h->tol = tol;
		h->better = better;
		h->raw1 = NAN;
		/* a spread of exactly 0 from enough jobs is measured too (a
		 * deterministic benchmark): any change beyond it is real */
		if (u->method == PG_METHOD_STEP && (long)u->n_hist >= need && u->spread >= 0 &&
		    (u->spread == 0 || u->spread_df > 0)) {
			h->e1 = u->off1 - u->level;
			h->sd1 = u->spread * sqrt(1 + level_var(u->n_hist));
			h->shared = u->spread * u->spread * level_var(u->n_hist);
			h->df = fmin(u->spread_df, u->spread_nu);
			h->scale = u->spread_scale;
			hyp_test(h, false);
			common_known(s, u, h);
		} else {
			/* nothing measures how whole runs vary from job to job
			 * (a thresholds file's one job, or a history without
			 * enough jobs): the change must be twice the tolerance,
			 * two jobs' offsets apart */
			h->e1 = u->off1 - (isnan(u->level) ? 0 : u->level);
			h->fail = isfinite(h->fail) ? log1p(2 * expm1(h->fail)) : h->fail;
			h->bar_only = isfinite(h->e1);
		}
	}
}

/* ------------------------------------------------------------------ */
/* The correlation of a point's metrics                                */

/* The correlation of units a and b over the cells (point, job) both
 * have, their leftovers cut at 2.5 robust sds; NAN under MIN_CORR_CELLS. */
static double unit_corr(const struct unit *a, const struct unit *b)
{
	size_t i = 0, j = 0, n = 0;
	double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0, ca, cb;
	double *va = pg_xmalloc((a->n_cells + 1) * sizeof(double));
	double *vb = pg_xmalloc((a->n_cells + 1) * sizeof(double));

	while (i < a->n_cells && j < b->n_cells) {
		int c = cmp_cell(&a->cells[i], &b->cells[j]);
		if (c < 0) {
			i++;
		} else if (c > 0) {
			j++;
		} else {
			va[n] = a->cells[i++].v;
			vb[n++] = b->cells[j++].v;
		}
	}
	if (n < MIN_CORR_CELLS) {
		free(va);
		free(vb);
		return NAN;
	}
	ca = 2.5 * pg_cmpstat_robust_sd(va, n, 0);
	cb = 2.5 * pg_cmpstat_robust_sd(vb, n, 0);
	for (size_t k = 0; k < n; k++) {
		double x = fmax(-ca, fmin(ca, va[k])), y = fmax(-cb, fmin(cb, vb[k]));
		sa += x;
		sb += y;
		saa += x * x;
		sbb += y * y;
		sab += x * y;
	}
	free(va);
	free(vb);
	{
		double dn = (double)n, cov = sab - sa * sb / dn;
		double vx = saa - sa * sa / dn, vy = sbb - sb * sb / dn;
		return vx > 0 && vy > 0 ? cov / sqrt(vx * vy) : NAN;
	}
}

static void correlations(struct step *s)
{
	size_t U = s->n_units;

	s->corr = pg_xmalloc((U * U + 1) * sizeof(double));
	for (size_t a = 0; a < U; a++) {
		s->corr[a * U + a] = 1;
		for (size_t b = a + 1; b < U; b++) {
			double r = s->units[a].group == s->units[b].group
					   ? unit_corr(&s->units[a], &s->units[b])
					   : NAN;
			s->corr[a * U + b] = s->corr[b * U + a] = r;
		}
	}
}

/*
 * A p-value of one of a point's metrics as the point's: the tail of the
 * largest of its metrics' statistics, correlated as the history's
 * leftovers are (their mean correlation); unmeasured (a thresholds
 * file): independent, Bonferroni within the point.
 */
static double family_p(const struct point_family *pf, double p)
{
	if (!pf || pf->n <= 1 || !(p > 0 && p < 1))
		return p;
	if (!pf->measured)
		return fmin(1, (double)pf->n * p);
	return fmax(p,
		    pg_cmpstat_max_equicorr_sf(pg_cmpstat_t_quantile(p, INFINITY), pf->n, pf->rho));
}

/* The point families: a job's point, its pairs that can fail the step. */
static void point_families(struct step *s)
{
	s->fams = pg_xcalloc(s->n + 1, sizeof(*s->fams));
	for (size_t i = 0; i < s->n; i++) {
		struct hyp *h = &s->ps[i].h;
		size_t f = 0;
		if (h->fam != FAM_POINTS)
			continue;
		while (f < s->n_fams &&
		       (s->fams[f].bp != s->pairs[i].bp || s->fams[f].group != s->pairs[i].group))
			f++;
		if (f == s->n_fams) {
			s->fams[f].bp = s->pairs[i].bp;
			s->fams[f].group = s->pairs[i].group;
			s->fams[f].pairs = pg_xmalloc(s->n * sizeof(size_t));
			s->n_fams++;
		}
		s->fams[f].pairs[s->fams[f].n++] = i;
		s->ps[i].family = (long)f;
	}
	for (size_t f = 0; f < s->n_fams; f++) {
		struct point_family *pf = &s->fams[f];
		size_t M = pf->n, U = s->n_units, n_r = 0;
		double pmin = INFINITY, rsum = 0;
		bool measured = true;
		for (size_t a = 0; a < M; a++)
			for (size_t b = a + 1; b < M; b++) {
				size_t ua = s->ps[pf->pairs[a]].unit, ub = s->ps[pf->pairs[b]].unit;
				double r = s->corr[ua * U + ub];
				if (isnan(r))
					measured = false;
				else
					rsum += fmax(0, r), n_r++;
			}
		for (size_t k = 0; k < M; k++)
			pmin = fmin(pmin, s->ps[pf->pairs[k]].h.p1);
		pf->measured = measured || M == 1;
		pf->rho = n_r ? rsum / (double)n_r : 0;
		pf->p = family_p(pf, pmin);
	}
}

/* ------------------------------------------------------------------ */
/* Budget                                                              */

static bool can_fail(const struct hyp *h)
{
	return isfinite(h->fail);
}

static void assign_family(struct hyp *h)
{
	h->fam = isnan(h->p1) ? FAM_NONE : FAM_WARN;
}

struct ranked_fam {
	double p;
	size_t f;
};

static int cmp_ranked_fam(const void *a, const void *b)
{
	const struct ranked_fam *x = a, *y = b;
	if (x->p != y->p)
		return x->p < y->p ? -1 : 1;
	return (x->f > y->f) - (x->f < y->f);
}

/*
 * Holm over the point families: a family at rank k (of F, smallest p
 * first) is tested at budget / (F - k) with its meff x min p; each of its
 * pairs gets the adjusted p-value the step-down gives it with its own p
 * in the family's place.
 */
static void holm_points(struct step *s)
{
	size_t F = s->n_fams;
	struct ranked_fam *r = pg_xmalloc((F + 1) * sizeof(*r));
	double running = 0;

	for (size_t f = 0; f < F; f++)
		r[f] = (struct ranked_fam){ s->fams[f].p, f };
	qsort(r, F, sizeof(*r), cmp_ranked_fam);
	for (size_t k = 0; k < F; k++) {
		const struct point_family *pf = &s->fams[r[k].f];
		double before = running;
		running = fmax(running, fmin(1, (double)(F - k) * pf->p));
		for (size_t j = 0; j < pf->n; j++) {
			struct hyp *h = &s->ps[pf->pairs[j]].h;
			/* family_p(p) >= p: a product already past 1 needs no
			 * integral (most pairs of a clean step) */
			h->padj = (double)(F - k) * h->p1 >= 1
					  ? 1
					  : fmax(before,
						 fmin(1, (double)(F - k) * family_p(pf, h->p1)));
		}
	}
	s->fam_n[FAM_POINTS] = F;
	s->c->hypotheses += F;
	free(r);
}

static void holm_family(struct step *s, enum family fam)
{
	size_t n = 0, k = 0;
	double *p, *adj;
	struct hyp **hs;

	for (size_t i = 0; i < s->n; i++)
		n += s->ps[i].h.fam == fam;
	for (size_t u = 0; u < s->n_units; u++)
		n += s->units[u].has_common && s->units[u].common.fam == fam;
	if (!n)
		return;
	p = pg_xmalloc(n * sizeof(double));
	adj = pg_xmalloc(n * sizeof(double));
	hs = pg_xmalloc(n * sizeof(*hs));
	for (size_t i = 0; i < s->n; i++)
		if (s->ps[i].h.fam == fam)
			hs[k++] = &s->ps[i].h;
	for (size_t u = 0; u < s->n_units; u++)
		if (s->units[u].has_common && s->units[u].common.fam == fam)
			hs[k++] = &s->units[u].common;
	for (size_t i = 0; i < n; i++)
		p[i] = hs[i]->p1;
	pg_cmpstat_holm(p, n, adj);
	for (size_t i = 0; i < n; i++)
		hs[i]->padj = adj[i];
	s->fam_n[fam] = n;
	if (fam != FAM_WARN)
		s->c->hypotheses += n;
	free(p);
	free(adj);
	free(hs);
}

/*
 * The levels: without a re-run a first run fails at the budget; with one
 * to come it flags at FLAG_FACTOR x the budget (a whole-run change, which
 * competes with slow nodes as large as a real change and one job in ten,
 * at its square root), and the re-run confirms at budget / flag.
 */
static void levels(struct step *s, enum family fam, double budget)
{
	s->budget[fam] = budget;
	if (fam == FAM_COMMON)
		s->flag[fam] = sqrt(budget);
	else if (fam == FAM_POINTS)
		s->flag[fam] = fmin(FLAG_MAX, fmax(budget, FLAG_FACTOR * budget));
	else
		s->flag[fam] = budget;
}

static void budget(struct step *s)
{
	double alpha = s->policy->step_false_alarm;
	size_t n_common = 0, n_points = 0;

	for (size_t i = 0; i < s->n; i++) {
		struct hyp *h = &s->ps[i].h;
		if (s->ps[i].insufficient) {
			h->fam = FAM_NONE;
			continue;
		}
		assign_family(h);
		if (h->fam == FAM_WARN && can_fail(h)) {
			h->fam = FAM_POINTS;
			n_points++;
		}
	}
	for (size_t u = 0; u < s->n_units; u++) {
		struct hyp *h = &s->units[u].common;
		if (!s->units[u].has_common)
			continue;
		assign_family(h);
		if (h->fam == FAM_WARN && can_fail(h)) {
			h->fam = FAM_COMMON;
			n_common++;
		}
	}
	s->c->budget_whole_run = n_common ? (n_points ? alpha * COMMON_SHARE : alpha) : 0;
	s->c->budget_points = n_points ? alpha - s->c->budget_whole_run : 0;
	point_families(s);
	holm_points(s);
	holm_family(s, FAM_COMMON);
	holm_family(s, FAM_WARN);
	levels(s, FAM_POINTS, s->c->budget_points);
	levels(s, FAM_COMMON, s->c->budget_whole_run);
	levels(s, FAM_WARN, alpha);
}

/* The first run's verdict on one hypothesis. */
static void classify(const struct step *s, struct hyp *h, bool tail)
{
	bool tested = h->fam != FAM_NONE;
	/* a value the user wrote with no noise to test against: beyond the
	 * tolerance is beyond the bar (a re-run confirms it) */
	bool significant = h->bar_only || (tested && h->padj <= s->budget[h->fam]);
	bool worth_rerun = tested && h->padj <= s->flag[h->fam];
	/* improvements never fail: Bonferroni over the family is enough */
	bool better_significant = h->bar_only ||
				  (tested &&
				   h->p1_better * (double)s->fam_n[h->fam] <= s->budget[h->fam]);

	h->verdict = PG_VERDICT_UNCHANGED;
	h->outcome = PG_OUTCOME_PASS;
	if (isnan(h->e1) || h->floor1)
		return;
	if (h->e1 > h->tol) {
		if (significant) {
			h->verdict = PG_VERDICT_REGRESSED;
			h->strong = h->flagged = can_fail(h) && h->e1 > h->fail;
		} else if (worth_rerun && can_fail(h) && h->e1 > h->fail && !s->opts->strict) {
			/* not significant alone, but worth the re-run that decides
			 * it (listed under rerun) */
			h->verdict = PG_VERDICT_NOISY;
			h->flagged = true;
		} else {
			/* not significant, or nothing measures the noise: a
			 * change the noise may explain is never a regression */
			h->verdict = PG_VERDICT_NOISY;
			h->strong = h->flagged = h->by_strict = s->opts->strict && can_fail(h) &&
								tested && h->e1 > h->fail;
		}
		/* a tail's spike on a first run alone fails only when main's
		 * newest run was beyond its threshold too */
		if (tail && h->strong && !s->c->with_confirmation && !h->repeats) {
			h->strong = false;
			h->spike = true;
		}
		/* main's own change, already reported: not a new one */
		if (h->known && h->flagged) {
			h->strong = h->flagged = false;
		}
		h->outcome = h->strong ? PG_OUTCOME_FAIL : PG_OUTCOME_WARN;
	} else if (h->e1 < -h->better && better_significant &&
		   (isnan(h->raw1) || h->raw1 < -h->better)) {
		/* beyond the tolerance as the row shows it too: a point is not
		 * called better for a change the table says is within it */
		h->verdict = PG_VERDICT_IMPROVED;
	}
}

/* ------------------------------------------------------------------ */
/* Confirmation                                                        */

static void mark_flagged_points(struct step *s)
{
	for (size_t i = 0; i < s->n; i++) {
		if (!s->ps[i].h.flagged)
			continue;
		for (size_t j = 0; j < s->n; j++)
			if (s->pairs[j].bp == s->pairs[i].bp)
				s->point_flagged[j] = true;
	}
}

static void rerun_evidence(struct step *s, struct unit *u)
{
	size_t n_off = 0;

	if (u->method == PG_METHOD_STEP || u->method == PG_METHOD_CROSSWISE)
		u->off2 = run_offset(s, u, true, true, &n_off);
	u->n_off2 = n_off;
	for (size_t i = 0; i < u->n; i++) {
		size_t pi = u->pairs[i];
		struct pair_state *st = &s->ps[pi];
		struct hyp *h = &st->h;

		h->rerun_failed = s->pairs[pi].rerun_failed;
		h->rerun_lacks = s->pairs[pi].rerun_lacks;
		if (isnan(st->r2) || st->insufficient)
			continue;
		h->rerun = true;
		if ((st->method == PG_METHOD_STEP || st->method == PG_METHOD_CROSSWISE) &&
		    !isnan(u->off2)) {
			/* the re-run's offset comes from its anchors, fewer than
			 * the first run's points: a little more noise */
			double extra = MEDIAN_VAR / (double)n_off - MEDIAN_VAR / (double)u->n_off1;
			h->e2 = st->r2 - credited(s, u, u->off2);
			h->sd2 = sqrt(h->sd2 * h->sd2 * (1 + fmax(0, extra)));
			if (st->method == PG_METHOD_STEP)
				h->sd2 = fewer_repeats(h->sd2, s->pairs[pi].w2, s->pairs[pi].n2,
						       s->pairs[pi].bp->repeats);
			hyp_test(h, true);
		} else if (st->method == PG_METHOD_STEP || st->method == PG_METHOD_CROSSWISE) {
			/* too few points re-run to measure its offset: the raw
			 * change, against the tolerance */
			h->e2 = st->r2;
		} else {
			h->e2 = st->r2;
			if (st->method == PG_METHOD_HISTORY) {
				h->sd2 = fewer_repeats(h->sd2, s->pairs[pi].w2, s->pairs[pi].n2,
						       s->pairs[pi].bp->repeats);
				hyp_test(h, true);
			} else if (!isnan(h->p1)) {
				hyp_test(h, true);
			}
		}
		h->floor2 = under_floor(u->m, &s->c->rows[s->pairs[pi].row].rule,
					s->pairs[pi].bm->value, h->e2);
	}
	if (u->has_common) {
		struct hyp *h = &u->common;
		size_t n_all = 0;
		double off = u->method == PG_METHOD_STEP || u->method == PG_METHOD_CROSSWISE
				     ? run_offset(s, u, true, false, &n_all)
				     : NAN;
		u->off2_all = off;
		if (!isnan(off)) {
			h->rerun = true;
			h->e2 = off - (isnan(u->level) ? 0 : u->level);
			h->sd2 = h->sd1;
			if (!isnan(h->p1))
				hyp_test(h, true);
		}
	}
}

/*
 * The two runs together: the average of their effects, with its sd (what
 * each run measured apart, halved, plus the baseline's error they share);
 * one-sided p.
 */
static double pooled_p(const struct hyp *h)
{
	double own1 = fmax(0, h->sd1 * h->sd1 - h->shared);
	double own2 = fmax(0, h->sd2 * h->sd2 - h->shared);
	double sd = sqrt((own1 + own2) / 4 + h->shared), p;

	t_test((h->e1 + h->e2) / 2, sd, h->df, h->scale, &p, NULL);
	return p;
}

/*
 * Does the re-run reproduce a flagged hypothesis? The re-run alone must
 * show it (worse than the tolerance, at REPLICATE for its point: one bad
 * job cannot fail a step with the other one clean), the two runs' average
 * must be beyond the
 * failing threshold, and the two runs together must be significant at the
 * budget's share of every hypothesis of its family (Bonferroni over all of
 * them, whatever was flagged: the step's rate holds however the two runs
 * depend on each other through their shared baseline).
 */
static bool reproduced(const struct step *s, const struct hyp *h, const size_t *n_flagged,
		       const struct point_family *pf)
{
	if (!h->rerun || h->floor2 || isnan(h->e2))
		return false;
	/* nothing to test (or --strict, which does without significance):
	 * the re-run alone must be beyond the threshold too */
	if (isnan(h->p2) || h->fam == FAM_NONE || h->by_strict)
		return h->e2 > h->fail;
	{
		double F = (double)(s->fam_n[h->fam] ? s->fam_n[h->fam] : 1);
		/* a whole-run change competes with slow nodes (one job in
		 * ten, as large as a real change): the re-run alone must
		 * reach budget / flag among the flagged ones, so that two
		 * independent jobs pass both at the budget */
		double alone = h->fam == FAM_POINTS
				       ? REPLICATE
				       : fmin(1, s->budget[h->fam] / s->flag[h->fam]) /
						 (double)(n_flagged[h->fam] ? n_flagged[h->fam]
									    : 1);
		return h->e2 > h->tol && family_p(pf, h->p2) <= alone &&
		       (h->e1 + h->e2) / 2 > h->fail &&
		       fmin(1, F * family_p(pf, pooled_p(h))) <= s->budget[h->fam];
	}
}

static void confirm(struct step *s)
{
	size_t n_flagged[FAM_COUNT] = { 0 };
	bool *fam_counted = pg_xcalloc(s->n_fams + 1, sizeof(bool));

	/* flagged points count once each (a point is one hypothesis) */
	for (size_t i = 0; i < s->n; i++) {
		const struct hyp *h = &s->ps[i].h;
		if (!h->flagged || !h->rerun || h->fam == FAM_NONE)
			continue;
		if (h->fam == FAM_POINTS && s->ps[i].family >= 0) {
			if (fam_counted[s->ps[i].family])
				continue;
			fam_counted[s->ps[i].family] = true;
		}
		n_flagged[h->fam]++;
	}
	for (size_t u = 0; u < s->n_units; u++) {
		const struct hyp *h = &s->units[u].common;
		if (s->units[u].has_common && h->flagged && h->rerun && h->fam != FAM_NONE)
			n_flagged[h->fam]++;
	}
	for (size_t i = 0; i < s->n; i++) {
		struct hyp *h = &s->ps[i].h;
		const struct point_family *pf = s->ps[i].family >= 0 ? &s->fams[s->ps[i].family]
								     : NULL;
		if (!h->flagged)
			continue;
		if (h->rerun_failed || h->rerun_lacks) {
			h->outcome = PG_OUTCOME_INFRA;
		} else if (h->rerun) {
			h->confirmed = reproduced(s, h, n_flagged, pf);
			h->verdict = h->confirmed ? PG_VERDICT_REGRESSED
						  : PG_VERDICT_NOT_REPRODUCED;
			h->outcome = h->confirmed ? PG_OUTCOME_FAIL : PG_OUTCOME_WARN;
		}
	}
	for (size_t u = 0; u < s->n_units; u++) {
		struct hyp *h = &s->units[u].common;
		if (!s->units[u].has_common || !h->flagged || !h->rerun)
			continue;
		h->confirmed = reproduced(s, h, n_flagged, NULL);
		h->verdict = h->confirmed ? PG_VERDICT_REGRESSED : PG_VERDICT_NOT_REPRODUCED;
		h->outcome = h->confirmed ? PG_OUTCOME_FAIL : PG_OUTCOME_WARN;
	}
	free(fam_counted);
}

/* ------------------------------------------------------------------ */
/* Rows, notes, the re-run list                                        */

static void set_note(char **note, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void set_note(char **note, const char *fmt, ...)
{
	struct pg_buf b = PG_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	pg_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	free(*note);
	*note = pg_buf_detach(&b);
}

/* "5.1% worse" / "2% better" for an oriented log effect, as the change is
 * measured (throughput 9.2% lower is 9.2% worse). */
static void worse_text(char *out, size_t size, const struct pg_metric *m, double e)
{
	char g[PG_FMT_DOUBLE_SIZE];
	double pct = round(fabs(measured(m, e)) * 1000) / 10;

	if (!isfinite(e)) {
		snprintf(out, size, "%s beyond the floor", e > 0 ? "worse" : "better");
		return;
	}
	pg_fmt_g(g, pct);
	snprintf(out, size, "%s%% %s", g, e >= 0 ? "worse" : "better");
}

static void p_text(char *out, size_t size, double p)
{
	if (p < 0.0001)
		snprintf(out, size, "< 0.0001");
	else {
		char g[PG_FMT_DOUBLE_SIZE];
		pg_fmt_g(g, round(p * 10000) / 10000);
		snprintf(out, size, "%s", g);
	}
}

/* Why a test's spread gives no interval (pg_cmp_side.ci_missing). */
static const char *ci_missing(double sd, double df)
{
	if (sd == 0)
		return "the history's values are identical, no run-to-run noise to measure";
	if (isnan(sd))
		return "too few runs to measure the run-to-run noise";
	if (!(df > 0))
		return "no degrees of freedom left to measure the run-to-run noise";
	return NULL;
}

static void side(struct pg_cmp_side *out, const struct pg_metric *m, double value, double raw,
		 const struct hyp *h, bool rerun, size_t n)
{
	double sd = rerun ? h->sd2 : h->sd1;

	out->current = value;
	out->change = measured(m, raw);
	out->effect = measured(m, rerun ? h->e2 : h->e1);
	out->p_value = rerun ? h->p2 : h->p1;
	out->p_adjusted = rerun ? NAN : h->padj;
	out->n = n;
	out->flagged = rerun ? h->confirmed : h->flagged;
	out->ci_low = out->ci_high = NAN;
	out->ci_missing = ci_missing(sd, h->df);
	/* the interval of the test that decided it, where one ran: on the
	 * t's own scale when the tails are heavy */
	if (!isnan(out->p_value) && sd > 0) {
		double lo, hi;
		if (pg_cmpstat_t_interval(rerun ? h->e2 : h->e1, sd / h->scale, h->df, PG_CI_LEVEL,
					  &lo, &hi)) {
			lo = measured(m, lo);
			hi = measured(m, hi);
			out->ci_low = fmin(lo, hi);
			out->ci_high = fmax(lo, hi);
			out->ci_missing = NULL;
		} else if (!out->ci_missing) {
			out->ci_missing = "too few degrees of freedom for a finite interval";
		}
	}
}

static const char *beyond(enum pg_cmp_method m)
{
	return m == PG_METHOD_STEP || m == PG_METHOD_CROSSWISE ? " beyond the run's common change"
							       : "";
}

static void pair_note(struct step *s, size_t i)
{
	const struct pg_step_pair *p = &s->pairs[i];
	const struct pair_state *st = &s->ps[i];
	const struct hyp *h = &st->h;
	struct pg_cmp_row *row = &s->c->rows[p->row];
	char a[64], b[64], pv[32], pa[32];

	worse_text(a, sizeof(a), row->metric, h->e1);
	p_text(pv, sizeof(pv), h->p1);
	p_text(pa, sizeof(pa), h->padj);
	if (h->known && h->verdict == PG_VERDICT_REGRESSED) {
		const long j = h->main_level ? p->bm->newest_job : p->bm->known_job;
		const char *commit = j >= 0 && (size_t)j < s->base->n_jobs ? s->base->jobs[j].commit
									   : NULL;
		set_note(
			&row->note,
			h->main_level
				? "%s%s: main's change, not this pull request's: main's newest run "
				  "(%.12s) was as far; main's nightly fails it if it persists"
				: "%s%s: main's known change, found regressed in main's newest run "
				  "(%.12s); the level follows it once it persists",
			a, beyond(st->method), commit ? commit : "?");
		return;
	}
	if (h->flagged && h->outcome == PG_OUTCOME_INFRA) {
		set_note(&row->note, "%s%s; %s", a, beyond(st->method),
			 h->rerun_failed ? "the confirmation re-run failed"
					 : "the confirmation re-run did not report this metric");
		return;
	}
	if (h->flagged && h->rerun) {
		worse_text(b, sizeof(b), row->metric, h->e2);
		if (h->confirmed)
			set_note(&row->note, "%s%s; reproduced by the re-run (%s)", a,
				 beyond(st->method), b);
		else
			set_note(&row->note, "first run %s%s; the re-run %s: not reproduced", a,
				 beyond(st->method), b);
		return;
	}
	if (h->flagged && s->c->with_confirmation) {
		set_note(&row->note, "%s%s; not re-run for confirmation", a, beyond(st->method));
		return;
	}
	if (h->spike) {
		set_note(&row->note,
			 "%s%s, beyond the %g%% escalation threshold once: a spike, not a "
			 "regression, unless it repeats on main's next run or a re-run confirms it",
			 a, beyond(st->method), round(row->rule.escalate * 1000) / 10);
		return;
	}
	if (h->flagged && !h->strong && h->verdict == PG_VERDICT_NOISY) {
		set_note(&row->note,
			 "%s%s (p %s, %s for the step): not significant alone; worth a re-run, "
			 "which decides it",
			 a, beyond(st->method), pv, pa);
		return;
	}
	if (h->flagged) {
		if (!row->rule.gate)
			set_note(
				&row->note,
				"%s%s, beyond the %g%% escalation threshold%s; unconfirmed: re-run to "
				"confirm",
				a, beyond(st->method), round(row->rule.escalate * 1000) / 10,
				h->repeats ? " in main's newest run too" : "");
		else if (isnan(h->p1))
			set_note(&row->note, "%s%s; unconfirmed: re-run to confirm", a,
				 beyond(st->method));
		else
			set_note(&row->note,
				 "%s%s (p %s, %s for the step); unconfirmed: re-run to confirm", a,
				 beyond(st->method), pv, pa);
		return;
	}
	if (p->pinned && (h->verdict == PG_VERDICT_REGRESSED || h->verdict == PG_VERDICT_NOISY)) {
		char q[PG_FMT_DOUBLE_SIZE];
		pg_fmt_g(q, row->qps);
		set_note(&row->note,
			 "%s; the offered rate (qps %s) sets it: shown, never gated (the latencies "
			 "decide)",
			 a, q);
		return;
	}
	switch (h->verdict) {
	case PG_VERDICT_REGRESSED:
		if (!row->rule.gate && row->rule.escalate > 0)
			set_note(&row->note, "%s%s, under the %g%% escalation threshold", a,
				 beyond(st->method), round(row->rule.escalate * 1000) / 10);
		else
			set_note(&row->note, "%s%s; warn-only metric", a, beyond(st->method));
		break;
	case PG_VERDICT_NOISY:
		if (isnan(h->p1))
			set_note(&row->note,
				 "%s%s, beyond the tolerance, but nothing measures its noise (a "
				 "single value, no repeats): not a regression",
				 a, beyond(st->method));
		else
			set_note(&row->note,
				 "%s%s, not significant for the step (p %s, %s adjusted)", a,
				 beyond(st->method), pv, pa);
		break;
	case PG_VERDICT_UNCHANGED:
		if (h->floor1 && fabs(h->e1) > h->tol) {
			char f[PG_FMT_DOUBLE_SIZE];
			pg_fmt_g(f, row->rule.floor);
			set_note(&row->note, "change under the %s%s%s floor", f,
				 row->metric->unit[0] ? " " : "", row->metric->unit);
		}
		break;
	default:
		break;
	}
	if (!row->note && row->tolerance > row->rule.tolerance) {
		char t0[32], t1[32];
		snprintf(t0, sizeof(t0), "%g%%", round(row->rule.tolerance * 1000) / 10);
		snprintf(t1, sizeof(t1), "%g%%", round(row->tolerance * 1000) / 10);
		set_note(&row->note, "tolerance widened from %s to %s by measured noise", t0, t1);
	}
}

/*
 * The smallest change the pair's test could fail on alone: beyond its
 * failing threshold, and as large as the budget's share for one point
 * lets through (its family's first Holm step, meff tests).
 */
/* The p-value of one pair whose point-level value is `level` (the first
 * Holm step's): Sidak over the family's effective number of metrics,
 * 1 + (n - 1)(1 - rho), which the equicorrelated maximum is close to; a
 * displayed figure, so a closed form rather than a search per family. */
static double holm_first_p(const struct point_family *pf, double level)
{
	double m_eff;

	if (!pf || pf->n <= 1)
		return level;
	m_eff = pf->measured ? 1 + (double)(pf->n - 1) * (1 - pf->rho) : (double)pf->n;
	return -expm1(log1p(-level) / m_eff);
}

static double catchable(const struct step *s, size_t i)
{
	const struct pair_state *st = &s->ps[i];
	const struct hyp *h = &st->h;
	const struct pg_metric *m = s->pairs[i].bm->metric;
	double alpha = s->budget[FAM_POINTS], need = h->fail;
	size_t F = s->fam_n[FAM_POINTS] ? s->fam_n[FAM_POINTS] : 1;
	const struct point_family *pf = st->family >= 0 ? &s->fams[st->family] : NULL;

	if (!can_fail(h) || st->insufficient || h->fam != FAM_POINTS)
		return NAN;
	if (h->sd1 > 0 && h->df > 0 && alpha > 0) {
		double q = pg_cmpstat_t_quantile(holm_first_p(pf, alpha / (double)F), h->df);
		if (isfinite(q))
			need = fmax(need, q * h->sd1 / h->scale);
	}
	/* as measured: a throughput this much lower, a latency this much
	 * higher */
	return fabs(measured(m, need));
}

static void fill_pair(struct step *s, size_t i)
{
	const struct pg_step_pair *p = &s->pairs[i];
	const struct pair_state *st = &s->ps[i];
	const struct hyp *h = &st->h;
	const struct unit *u = &s->units[st->unit];
	const struct pg_metric *m = p->bm->metric;
	struct pg_cmp_row *row = &s->c->rows[p->row];
	double centre = isnan(st->centre) ? p->bm->value : sign_of(m) * st->centre;

	if (!isnan(st->centre)) {
		centre = exp(centre);
		/* the value as recorded (a thresholds file's), not through a
		 * log and back */
		if (isfinite(p->bm->value) && p->bm->value != 0 &&
		    fabs(centre / p->bm->value - 1) < 1e-12)
			centre = p->bm->value;
	}
	row->method = st->method;
	row->noise_source = st->method == PG_METHOD_TOLERANCE && isfinite(h->p1) ? st->noise_source
										 : NULL;
	row->baseline = centre;
	row->base_from = st->method == PG_METHOD_HISTORY ? st->from : 0;
	row->current = p->v1;
	row->change = isfinite(st->r1) ? measured(m, st->r1)
		      : centre != 0    ? p->v1 / centre - 1
				       : NAN;
	if (st->insufficient) {
		row->method = PG_METHOD_NONE;
		row->verdict = PG_VERDICT_INSUFFICIENT;
		row->outcome = PG_OUTCOME_WARN;
		set_note(&row->note, "%s", st->insufficient);
		return;
	}
	side(&row->first, m, p->v1, st->r1, h, false, p->n1);
	if (!isfinite(st->r1))
		row->first.change = row->change;
	if (s->c->with_confirmation && (h->rerun || h->rerun_failed || h->rerun_lacks)) {
		side(&row->rerun, m, p->v2, st->r2, h, true, p->n2);
		if (!isfinite(st->r2))
			row->rerun.change = centre != 0 ? p->v2 / centre - 1 : NAN;
	}
	row->effect = row->first.effect;
	row->run_change = st->method == PG_METHOD_STEP || st->method == PG_METHOD_CROSSWISE
				  ? measured(m, u->off1)
				  : NAN;
	row->noise = isnan(h->sd1) ? NAN : expm1(h->sd1);
	row->ci_low = row->first.ci_low;
	row->ci_high = row->first.ci_high;
	row->p_value = h->p1;
	row->p_adjusted = h->padj;
	row->verdict = h->verdict;
	row->outcome = h->outcome;
	row->confirmed = h->confirmed;
	row->needs_confirmation = h->flagged && !s->c->with_confirmation;
	row->known = h->known && h->verdict == PG_VERDICT_REGRESSED;
	row->catchable = catchable(s, i);
	pair_note(s, i);
}

/* A whole-run change that fails (or failed to reproduce) carries the
 * unit's rows that moved beyond their own threshold with it. */
static void common_rows(struct step *s, struct unit *u, struct pg_cmp_common *cc)
{
	const struct hyp *ch = &u->common;
	char a[64], b[64], sp[64];

	if (ch->outcome != PG_OUTCOME_FAIL && ch->verdict != PG_VERDICT_NOT_REPRODUCED)
		return;
	worse_text(a, sizeof(a), u->m, ch->e1);
	if (isnan(cc->spread))
		snprintf(sp, sizeof(sp), "no job-to-job spread to compare with");
	else
		snprintf(sp, sizeof(sp), "the history's jobs vary by %.1f%%", 100 * cc->spread);
	for (size_t i = 0; i < u->n; i++) {
		size_t pi = u->pairs[i];
		const struct pair_state *st = &s->ps[pi];
		struct pg_cmp_row *row = &s->c->rows[s->pairs[pi].row];
		if (row->outcome >= ch->outcome && row->verdict == PG_VERDICT_REGRESSED)
			continue;
		if (st->insufficient || isnan(st->r1) || st->r1 <= st->h.fail ||
		    under_floor(u->m, &row->rule, s->pairs[pi].bm->value, st->r1))
			continue;
		row->verdict = ch->verdict;
		row->outcome = ch->outcome;
		row->confirmed = ch->confirmed;
		row->needs_confirmation = ch->flagged && !s->c->with_confirmation;
		if (ch->rerun) {
			worse_text(b, sizeof(b), u->m, ch->e2);
			if (ch->confirmed)
				set_note(&row->note,
					 "the whole run %s (%s); reproduced by the re-run (%s)", a,
					 sp, b);
			else
				set_note(&row->note,
					 "the whole run %s (%s); the re-run %s: not reproduced", a,
					 sp, b);
		} else if (s->c->with_confirmation) {
			set_note(&row->note, "the whole run %s (%s); not re-run for confirmation",
				 a, sp);
		} else {
			set_note(&row->note,
				 "the whole run %s (%s); unconfirmed: re-run to confirm", a, sp);
		}
	}
}

static void add_common(struct step *s, struct unit *u)
{
	struct pg_comparison *c = s->c;
	struct pg_cmp_common cc;
	const struct hyp *h = &u->common;
	char a[64], b[64], pv[32];

	memset(&cc, 0, sizeof(cc));
	cc.rerun.ci_low = cc.rerun.ci_high = NAN;
	cc.metric = u->m;
	cc.suite = u->m->suite;
	cc.job = u->group;
	cc.method = isnan(h->p1) ? PG_METHOD_TOLERANCE : PG_METHOD_STEP;
	cc.points = u->n_off1;
	cc.spread = u->spread >= 0 && !isnan(h->p1) ? expm1(u->spread) : NAN;
	cc.tolerance = isfinite(h->fail) ? expm1(h->fail) : expm1(h->tol);
	side(&cc.first, u->m, NAN, u->off1, h, false, u->n_off1);
	if (c->with_confirmation && h->rerun)
		side(&cc.rerun, u->m, NAN, u->off2_all, h, true, u->n_off2);
	cc.verdict = h->verdict;
	cc.outcome = h->outcome;
	worse_text(a, sizeof(a), u->m, h->e1);
	p_text(pv, sizeof(pv), h->padj);
	if (h->flagged && h->rerun) {
		worse_text(b, sizeof(b), u->m, h->e2);
		set_note(&cc.note,
			 h->confirmed ? "reproduced by the re-run (%s)"
				      : "the re-run %s: not reproduced",
			 b);
	} else if (h->flagged && !c->with_confirmation) {
		set_note(&cc.note, h->strong ? "unconfirmed: re-run to confirm"
					     : "as large as a slow job: re-run to confirm");
	} else if (h->known && h->e1 > h->tol) {
		set_note(&cc.note,
			 h->main_level
				 ? "%s: main's change, not this pull request's: main's newest run "
				   "moved as much; main's nightly fails it if it persists"
				 : "%s: main's known change, found regressed in main's newest run, "
				   "which moved as much; the level follows it once it persists",
			 a);
	} else if (h->verdict == PG_VERDICT_NOISY && isnan(h->padj)) {
		set_note(&cc.note,
			 "%s, within twice the tolerance: nothing measures how whole "
			 "runs vary",
			 a);
	} else if (h->verdict == PG_VERDICT_NOISY) {
		set_note(&cc.note, "%s, within the history's job-to-job spread (%s for the step)",
			 a, pv);
	} else if (h->verdict == PG_VERDICT_REGRESSED && !h->flagged) {
		set_note(&cc.note, "warn-only metric");
	} else if (h->verdict == PG_VERDICT_UNCHANGED && isnan(h->p1) &&
		   u->method == PG_METHOD_STEP) {
		set_note(&cc.note,
			 "too few jobs since the last whole-run change point: tolerance only");
	}
	PG_ARRAY_PUSH(c->commons, c->n_commons, c->cap_commons, cc);
	u->common_index = (long)c->n_commons - 1;
	common_rows(s, u, &c->commons[c->n_commons - 1]);
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool uses_offsets(enum pg_cmp_method m)
{
	return m == PG_METHOD_STEP || m == PG_METHOD_CROSSWISE;
}

/*
 * The points a confirmation re-run repeats: every point with a flagged
 * pair and, when a flagged hypothesis is judged beyond its run's common
 * change, up to rerun_anchors unflagged points of such metrics spread
 * evenly over them: their median change is the re-run job's own offset.
 */
static void rerun_list(struct step *s)
{
	const char **flagged = pg_xmalloc((s->n + 1) * sizeof(char *));
	const char **others = pg_xmalloc((s->n + 1) * sizeof(char *));
	size_t nf = 0, no = 0, want;
	bool any = false, anchors = false;

	for (size_t u = 0; u < s->n_units; u++)
		if (s->units[u].has_common && s->units[u].common.flagged)
			any = anchors = true;
	for (size_t i = 0; i < s->n; i++) {
		const char *name = s->pairs[i].bp->name;
		if (s->ps[i].h.flagged) {
			any = true;
			anchors |= uses_offsets(s->ps[i].method);
		}
		if (s->point_flagged[i]) {
			if (!nf || strcmp(flagged[nf - 1], name))
				flagged[nf++] = name;
		} else if (uses_offsets(s->ps[i].method) && (!no || strcmp(others[no - 1], name))) {
			others[no++] = name;
		}
	}
	if (!anchors)
		no = 0;
	if (any) {
		/* points come in name order, a point's pairs together */
		want = s->policy->rerun_anchors > 0 ? (size_t)s->policy->rerun_anchors : 0;
		if (want > no)
			want = no;
		for (size_t k = 0; k < want; k++)
			flagged[nf++] = others[(2 * k + 1) * no / (2 * want)];
		qsort(flagged, nf, sizeof(char *), cmp_cstr);
		for (size_t i = 0; i < nf; i++)
			if (!i || strcmp(flagged[i - 1], flagged[i]))
				pg_strv_push(&s->c->rerun, flagged[i]);
	}
	free(flagged);
	free(others);
}

/* Per metric class, the median catchable change of the gated rows. */
static void catchable_summary(struct step *s)
{
	static const enum pg_metric_class cls[3] = { PG_CLASS_THROUGHPUT, PG_CLASS_LATENCY,
						     PG_CLASS_TAIL };
	double *v = pg_xmalloc((s->n + 1) * sizeof(double));

	for (int k = 0; k < 3; k++) {
		size_t n = 0;
		for (size_t i = 0; i < s->n; i++) {
			const struct pg_cmp_row *row = &s->c->rows[s->pairs[i].row];
			if (row->metric && row->metric->cls == cls[k] && !isnan(row->catchable))
				v[n++] = row->catchable;
		}
		s->c->catchable[k] = n ? pg_cmpstat_median_inplace(v, n) : NAN;
	}
	free(v);
}

void pg_step_decide(struct pg_comparison *c, const struct pg_step_pair *pairs, size_t n,
		    const struct pg_policy *policy, const struct pg_baseline *base,
		    const struct pg_compare_opts *opts)
{
	struct step s;

	memset(&s, 0, sizeof(s));
	s.c = c;
	s.pairs = pairs;
	s.n = n;
	s.policy = policy;
	s.base = base;
	s.opts = opts;
	c->step_false_alarm = policy->step_false_alarm;
	for (int k = 0; k < 3; k++)
		c->catchable[k] = NAN;
	if (!n)
		return;
	s.ps = pg_xcalloc(n, sizeof(*s.ps));
	s.units = pg_xcalloc(n, sizeof(*s.units));
	s.point_flagged = pg_xcalloc(n, sizeof(bool));
	build_units(&s);
	for (size_t u = 0; u < s.n_units; u++)
		first_run(&s, &s.units[u]);
	correlations(&s);
	budget(&s);
	for (size_t i = 0; i < n; i++)
		classify(&s, &s.ps[i].h, !c->rows[pairs[i].row].rule.gate);
	for (size_t u = 0; u < s.n_units; u++)
		if (s.units[u].has_common)
			classify(&s, &s.units[u].common, false);
	mark_flagged_points(&s);
	if (c->with_confirmation) {
		for (size_t u = 0; u < s.n_units; u++)
			rerun_evidence(&s, &s.units[u]);
		confirm(&s);
	} else {
		rerun_list(&s);
	}
	for (size_t i = 0; i < n; i++)
		fill_pair(&s, i);
	for (size_t u = 0; u < s.n_units; u++)
		if (s.units[u].has_common)
			add_common(&s, &s.units[u]);
	catchable_summary(&s);
	for (size_t u = 0; u < s.n_units; u++) {
		free(s.units[u].pairs);
		free(s.units[u].cells);
	}
	for (size_t f = 0; f < s.n_fams; f++)
		free(s.fams[f].pairs);
	for (size_t i = 0; i < n; i++) {
		free(s.ps[i].insufficient);
		free(s.ps[i].zeros);
	}
	free(s.fams);
	free(s.corr);
	free(s.units);
	free(s.ps);
	free(s.point_flagged);
}
