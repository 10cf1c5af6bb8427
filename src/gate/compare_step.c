/*
 * The step decision: every gated (point, metric) pair of a run decided at
 * once, within one false-alarm budget (docs/gate.md, "The decision").
 *
 * Noise on shared GPU machines lives at the level of the job: one agent,
 * one session, its own offset shared by every point it runs (a slow node
 * is slow everywhere), with repeats inside the job agreeing far better. So
 * per metric:
 *
 *  - the job's median of its repeats is its value; a git baseline is a
 *    table of job medians (jobs x points);
 *  - a median polish of that table splits each job's offset from each
 *    point's level; the run's own offset is the median over its points of
 *    its change, and each point is judged on what is left (its change
 *    beyond the run's), whose noise -- measured on the history's own
 *    leftovers, point by point, shrunk towards the metric's pooled
 *    figure -- is far smaller than a job's (method "step");
 *  - a change common to every point is indistinguishable from a slow job
 *    in one run: it is judged against the spread of the history's job
 *    offsets (after the last whole-run change point), as its own
 *    hypothesis;
 *  - with fewer than 3 points a pair is judged alone against the history's
 *    job-to-job spread ("history"); a thresholds baseline has no jobs: its
 *    points are judged against the spread of the run's own leftovers
 *    ("crosswise", with 5 points or more), else by the tolerance alone.
 *
 * Every test is a prediction interval (Student's t, the degrees of freedom
 * of the noise estimate), one-sided in the worse direction. The gated
 * hypotheses share policy->step_false_alarm by Holm's step-down procedure
 * (valid whatever the correlation between the metrics of a point): a fifth
 * for whole-run changes when there are any, the rest for single points. A
 * pair fails when it is significant and worse than its failing threshold.
 *
 * Confirmation is replication: the re-run repeats the flagged points and a
 * few unflagged ones (anchors, which measure the re-run job's own offset),
 * and each flagged hypothesis must show again in the re-run alone
 * (significant at the budget shared among the flagged ones, and worse than
 * the threshold on the two runs' average). Otherwise it is
 * "not-reproduced": a warning, and the step passes.
 */
#include "gate/compare_step.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "gate/compare_stats.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prior weight (degrees of freedom) of a metric's pooled leftover spread
 * when a point's own is estimated from its jobs. */
#define SHRINK_DF 6
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

enum family { FAM_NONE = -1, FAM_POINTS, FAM_COMMON, FAM_WARN, FAM_COUNT };

/* One hypothesis: a pair, or a metric's whole-run change. Effects are in
 * log units, oriented so that worse is positive. */
struct hyp {
	double e1, e2; /* effect in the first run, the re-run (NAN: none) */
	double p1, p2; /* one-sided p (worse); NAN: no test, the tolerance decides */
	double p1_better;
	double padj;     /* Holm-adjusted p1 within its family */
	double sd1, sd2; /* sd of e1, e2 (log) */
	double df;       /* degrees of freedom of that sd's estimate */
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
	bool rerun;          /* the re-run has evidence on it */
	bool rerun_failed;   /* ... or failed to produce it */
	bool rerun_lacks;
	enum pg_verdict verdict;
	enum pg_outcome outcome;
	bool confirmed;
};

struct pair_state {
	double centre; /* baseline level (log, oriented) */
	long from;     /* the first job behind centre (a whole-run change
			* point's); 0: the whole window */
	double y1, y2; /* the runs' values (log, oriented); NAN */
	double r1, r2; /* raw change (log, oriented) */
	enum pg_cmp_method method;
	size_t unit;
	struct hyp h;
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
	double level;  /* the history jobs' recent offset level; NAN */
	double spread; /* their sd (log); NAN */
	double spread_df;
	size_t n_hist; /* history jobs behind level and spread */
	bool has_common;
	struct hyp common;
	long common_index; /* in c->commons; -1 */
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
			s->units[u].level = s->units[u].spread = NAN;
			s->units[u].common_index = -1;
			s->n_units++;
		}
		s->units[u].pairs[s->units[u].n++] = i;
		s->ps[i].unit = u;
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
 * Method "step": the jobs x points table of the unit's history, polished;
 * per pair its centre, the sd and degrees of freedom of a new job's
 * leftover, and the history's job offsets.
 */
static void step_history(struct step *s, struct unit *u)
{
	long *jobs = NULL, from = common_from(s->base, u->m);
	size_t n_jobs = 0, cap = 0, P = u->n, R;
	double *y, *row, *col, *all_res, *res, *offs, pooled;
	size_t *count, n_all = 0, n_offs = 0;

	for (size_t k = 0; k < P; k++) {
		const struct pg_base_metric *bm = s->pairs[u->pairs[k]].bm;
		for (size_t i = 0; i < bm->n_samples; i++)
			PG_ARRAY_PUSH(jobs, n_jobs, cap, bm->jobs[i]);
	}
	qsort(jobs, n_jobs, sizeof(long), cmp_long);
	R = 0;
	for (size_t i = 0; i < n_jobs; i++)
		if (!R || jobs[R - 1] != jobs[i])
			jobs[R++] = jobs[i];

	y = pg_xmalloc((R * P + 1) * sizeof(double));
	for (size_t i = 0; i < R * P; i++)
		y[i] = NAN;
	for (size_t k = 0; k < P; k++) {
		const struct pg_base_metric *bm = s->pairs[u->pairs[k]].bm;
		for (size_t i = 0; i < bm->n_samples; i++) {
			long *at = bsearch(&bm->jobs[i], jobs, R, sizeof(long), cmp_long);
			y[(size_t)(at - jobs) * P + k] = orient(u->m, bm->samples[i]);
		}
	}
	row = pg_xmalloc((R ? R : 1) * sizeof(double));
	col = pg_xmalloc((P ? P : 1) * sizeof(double));
	pg_cmpstat_median_polish(y, R, P, row, col);

	/* leftovers of the jobs that ran enough points to have an offset */
	count = pg_xcalloc(R ? R : 1, sizeof(size_t));
	for (size_t r = 0; r < R; r++)
		for (size_t k = 0; k < P; k++)
			count[r] += !isnan(y[r * P + k]);
	all_res = pg_xmalloc((R * P + 1) * sizeof(double));
	res = pg_xmalloc((R ? R : 1) * sizeof(double));
	offs = pg_xmalloc((R ? R : 1) * sizeof(double));
	for (size_t r = 0; r < R; r++) {
		if (count[r] < MIN_STEP_POINTS)
			continue;
		for (size_t k = 0; k < P; k++)
			if (!isnan(y[r * P + k]))
				all_res[n_all++] = y[r * P + k] - row[r] - col[k];
		if (jobs[r] >= from)
			offs[n_offs++] = row[r];
	}
	pooled = pg_cmpstat_robust_sd(all_res, n_all, 0);

	for (size_t k = 0; k < P; k++) {
		struct pair_state *st = &s->ps[u->pairs[k]];
		size_t kp = 0;
		double own, nu_p, var, kappa2, K;

		for (size_t r = 0; r < R; r++)
			if (count[r] >= MIN_STEP_POINTS && !isnan(y[r * P + k]))
				res[kp++] = y[r * P + k] - row[r] - col[k];
		own = kp >= 3 ? pg_cmpstat_robust_sd(res, kp, 0) : NAN;
		nu_p = isnan(own) ? 0 : SD_EFFICIENCY * (double)(kp - 1);
		if (isnan(pooled) && isnan(own)) {
			st->h.sd1 = NAN;
			continue;
		}
		if (isnan(pooled))
			var = own * own;
		else if (isnan(own))
			var = pooled * pooled;
		else
			var = (SHRINK_DF * pooled * pooled + nu_p * own * own) / (SHRINK_DF + nu_p);
		/*
		 * A new job's leftover varies more than the history's own (which
		 * helped fit the centres): its centre is a median of K jobs, its
		 * job's offset a median of P points (which include it). The
		 * history's leftovers are shrunk by about (1 - 0.43/K)(1 - 0.43/P).
		 */
		K = (double)(kp > 1 ? kp : 2);
		kappa2 = (1 + MEDIAN_VAR / K - 0.43 / (double)P) /
			 ((1 - 0.43 / K) * (1 - 0.43 / (double)P));
		st->centre = col[k];
		st->h.sd1 = sqrt(var * kappa2);
		st->h.sd2 = st->h.sd1; /* refined once the re-run's anchors are known */
		/* degrees of freedom: the prior's and the point's own */
		st->h.df = SHRINK_DF + nu_p;
	}
	if (n_offs >= 3) {
		u->level = median_of(offs, n_offs);
		u->spread = pg_cmpstat_robust_sd(offs, n_offs, u->level);
		u->spread_df = SD_EFFICIENCY * (double)(n_offs - 1);
		u->n_hist = n_offs;
	}
	free(jobs);
	free(y);
	free(row);
	free(col);
	free(count);
	free(all_res);
	free(res);
	free(offs);
}

/*
 * A run's common change for the unit's metric: the median over its pairs
 * of their raw change. The first run: the unit's pairs (its job's). The
 * re-run is one job whatever ran the first: every pair of the metric, only
 * the anchors (points with nothing flagged) when want_anchors and there
 * are enough of them. *n gets how many.
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
			    (!rerun && s->pairs[i].group != u->group))
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
 * in the better one. */
static void t_test(double e, double sd, double df, double *worse, double *better)
{
	if (isnan(e) || !(sd > 0) || isnan(df)) {
		*worse = NAN;
		if (better) /* NULL: the caller wants only the worse side */
			*better = NAN;
		return;
	}
	*worse = pg_cmpstat_t_sf(e / sd, df);
	if (better)
		*better = pg_cmpstat_t_sf(-e / sd, df);
}

/* ------------------------------------------------------------------ */
/* First run                                                           */

static void thresholds(struct step *s, size_t i)
{
	const struct pg_step_pair *p = &s->pairs[i];
	const struct pg_rule *r = &s->c->rows[p->row].rule;
	struct hyp *h = &s->ps[i].h;
	double tol = r->tolerance;

	/* a baseline that gives no spread to test against: widen the
	 * tolerance to its recorded run-to-run noise */
	if (s->ps[i].method == PG_METHOD_TOLERANCE && isfinite(p->bm->noise) && r->noise_sigmas > 0)
		tol = fmax(tol, expm1(r->noise_sigmas * p->bm->noise));
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
		valid += !isnan(st->y1) && !isnan(st->centre);
		history &= p->bm->jobs != NULL && p->bm->n_samples > 0;
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
		st->h.fam = FAM_NONE;
	}
	if (u->method == PG_METHOD_STEP)
		step_history(s, u);

	for (size_t i = 0; i < u->n; i++) {
		size_t pi = u->pairs[i];
		struct pair_state *st = &s->ps[pi];
		const struct pg_base_metric *bm = s->pairs[pi].bm;

		st->r1 = st->y1 - st->centre;
		st->r2 = st->y2 - st->centre;
		if (u->method == PG_METHOD_HISTORY) {
			/* alone against the job-to-job spread of its own history
			 * (from the last whole-run change point, when enough) */
			long from = common_from(s->base, u->m);
			double *v = pg_xmalloc(bm->n_samples * sizeof(double));
			size_t k = 0;
			for (int pass = 0; pass < 2 && k < 3; pass++) {
				k = 0;
				for (size_t j = 0; j < bm->n_samples; j++)
					if (pass || bm->jobs[j] >= from)
						v[k++] = orient(u->m, bm->samples[j]);
				st->from = pass ? 0 : from; /* the jobs the test used */
			}
			st->centre = median_of(v, k);
			st->r1 = st->y1 - st->centre;
			st->r2 = st->y2 - st->centre;
			st->h.sd1 = st->h.sd2 = k >= 3 ? pg_cmpstat_robust_sd(v, k, st->centre) *
								 sqrt(1 + MEDIAN_VAR / (double)k)
						       : NAN;
			st->h.df = k >= 3 ? SD_EFFICIENCY * (double)(k - 1) : NAN;
			free(v);
		}
		if (isnan(st->r1)) {
			/* a value <= 0: no log scale, only the floor can tell */
			st->method = PG_METHOD_TOLERANCE;
			st->r1 = beyond_floor(u->m, &s->c->rows[s->pairs[pi].row].rule,
					      s->pairs[pi].bm->value, s->pairs[pi].v1);
			if (!isnan(s->pairs[pi].v2))
				st->r2 = beyond_floor(u->m, &s->c->rows[s->pairs[pi].row].rule,
						      s->pairs[pi].bm->value, s->pairs[pi].v2);
		}
		thresholds(s, pi);
	}

	/* the run's common change, and each point's beyond it */
	if (u->method == PG_METHOD_STEP || u->method == PG_METHOD_CROSSWISE) {
		size_t n_off = 0;
		u->off1 = run_offset(s, u, false, false, &n_off);
		u->n_off1 = n_off;
	}
	if (u->method == PG_METHOD_CROSSWISE) {
		/* the noise is the spread of the run's own leftovers: a
		 * published job's errors and ours, over the points */
		double *e = pg_xmalloc(u->n * sizeof(double)), sd;
		size_t k = 0, P = u->n_off1;
		for (size_t i = 0; i < u->n; i++)
			e[k++] = s->ps[u->pairs[i]].r1 - u->off1;
		sd = pg_cmpstat_robust_sd(e, k, 0);
		free(e);
		for (size_t i = 0; i < u->n; i++) {
			struct pair_state *st = &s->ps[u->pairs[i]];
			if (st->method != PG_METHOD_CROSSWISE)
				continue;
			st->h.sd1 = st->h.sd2 = sd / sqrt(1 - 0.43 / (double)P);
			st->h.df = SD_EFFICIENCY * (double)(P - 2);
		}
	}
	for (size_t i = 0; i < u->n; i++) {
		struct pair_state *st = &s->ps[u->pairs[i]];
		struct hyp *h = &st->h;

		h->raw1 = st->r1;
		switch (st->method) {
		case PG_METHOD_STEP:
		case PG_METHOD_CROSSWISE:
			h->e1 = st->r1 - u->off1;
			break;
		default:
			h->e1 = st->r1;
			break;
		}
		if (st->method == PG_METHOD_STEP || st->method == PG_METHOD_HISTORY) {
			const struct pg_step_pair *p = &s->pairs[u->pairs[i]];
			h->sd1 = fewer_repeats(h->sd1, p->w1, p->n1, p->bp->repeats);
		}
		if (st->method != PG_METHOD_TOLERANCE)
			t_test(h->e1, h->sd1, h->df, &h->p1, &h->p1_better);
		h->floor1 = under_floor(u->m, &s->c->rows[s->pairs[u->pairs[i]].row].rule,
					s->pairs[u->pairs[i]].bm->value, h->e1);
	}

	/* the whole run's change */
	if (u->method == PG_METHOD_STEP || u->method == PG_METHOD_CROSSWISE) {
		struct hyp *h = &u->common;
		double fail = INFINITY, tol = INFINITY, better = INFINITY;

		u->has_common = true;
		memset(h, 0, sizeof(*h));
		h->p1 = h->p2 = h->p1_better = h->padj = h->e2 = h->sd2 = h->df = NAN;
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
		if (u->method == PG_METHOD_STEP && u->n_hist >= (size_t)s->policy->min_history &&
		    u->spread > 0) {
			h->e1 = u->off1 - u->level;
			h->sd1 = u->spread * sqrt(1 + MEDIAN_VAR / (double)u->n_hist);
			h->df = u->spread_df;
			t_test(h->e1, h->sd1, h->df, &h->p1, &h->p1_better);
		} else {
			/* nothing measures how whole runs vary from job to job
			 * (a thresholds file's one job, or too few jobs since the
			 * last whole-run change point): the change must be twice
			 * the tolerance, two jobs' offsets apart */
			h->e1 = u->off1 - (isnan(u->level) ? 0 : u->level);
			h->fail = isfinite(h->fail) ? log1p(2 * expm1(h->fail)) : h->fail;
		}
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

static void holm_family(struct step *s, enum family fam, double budget)
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
	s->budget[fam] = budget;
	/* Whole-run changes compete with slow nodes, as large as a real change
	 * and one job in ten: a first run is worth a re-run at sqrt(budget),
	 * and the re-run must reach it again, so that two independent jobs
	 * both pass it with probability budget. A single point's leftover is
	 * far less noisy: the budget itself flags it. */
	s->flag[fam] = fam == FAM_COMMON ? sqrt(budget) : budget;
	s->fam_n[fam] = n;
	if (fam != FAM_WARN)
		s->c->hypotheses += n;
	free(p);
	free(adj);
	free(hs);
}

static void budget(struct step *s)
{
	double alpha = s->policy->step_false_alarm;
	size_t n_common = 0, n_points = 0;

	for (size_t i = 0; i < s->n; i++) {
		struct hyp *h = &s->ps[i].h;
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
	holm_family(s, FAM_POINTS, s->c->budget_points);
	holm_family(s, FAM_COMMON, s->c->budget_whole_run);
	holm_family(s, FAM_WARN, alpha);
}

/* The first run's verdict on one hypothesis. */
static void classify(const struct step *s, struct hyp *h)
{
	bool significant = h->fam == FAM_NONE || h->padj <= s->budget[h->fam];
	bool worth_rerun = h->fam == FAM_NONE || h->padj <= s->flag[h->fam];
	/* improvements never fail: Bonferroni over the family is enough */
	bool better_significant = h->fam == FAM_NONE ||
				  h->p1_better * (double)s->fam_n[h->fam] <= s->budget[h->fam];

	h->verdict = PG_VERDICT_UNCHANGED;
	h->outcome = PG_OUTCOME_PASS;
	if (isnan(h->e1) || h->floor1)
		return;
	if (h->e1 > h->tol) {
		if (significant) {
			h->verdict = PG_VERDICT_REGRESSED;
			h->strong = h->flagged = can_fail(h) && h->e1 > h->fail;
		} else if (worth_rerun && can_fail(h) && h->e1 > h->fail) {
			h->verdict = PG_VERDICT_REGRESSED;
			h->flagged = true;
		} else {
			h->verdict = PG_VERDICT_NOISY;
			h->strong = h->flagged = h->by_strict = s->opts->strict && can_fail(h) &&
								h->e1 > h->fail;
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
		if (isnan(st->r2))
			continue;
		h->rerun = true;
		if ((st->method == PG_METHOD_STEP || st->method == PG_METHOD_CROSSWISE) &&
		    !isnan(u->off2)) {
			/* the re-run's offset comes from its anchors, fewer than
			 * the first run's points: a little more noise */
			double extra = MEDIAN_VAR / (double)n_off - MEDIAN_VAR / (double)u->n_off1;
			h->e2 = st->r2 - u->off2;
			h->sd2 = sqrt(h->sd2 * h->sd2 * (1 + fmax(0, extra)));
			if (st->method == PG_METHOD_STEP)
				h->sd2 = fewer_repeats(h->sd2, s->pairs[pi].w2, s->pairs[pi].n2,
						       s->pairs[pi].bp->repeats);
			t_test(h->e2, h->sd2, h->df, &h->p2, NULL);
		} else if (st->method == PG_METHOD_STEP || st->method == PG_METHOD_CROSSWISE) {
			/* too few points re-run to measure its offset: the raw
			 * change, against the tolerance */
			h->e2 = st->r2;
		} else {
			h->e2 = st->r2;
			if (st->method == PG_METHOD_HISTORY) {
				h->sd2 = fewer_repeats(h->sd2, s->pairs[pi].w2, s->pairs[pi].n2,
						       s->pairs[pi].bp->repeats);
				t_test(h->e2, h->sd2, h->df, &h->p2, NULL);
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
				t_test(h->e2, h->sd2, h->df, &h->p2, NULL);
		}
	}
}

/* Does the re-run reproduce a flagged hypothesis? The flagged ones of a
 * family share the level that flagged them. */
static bool reproduced(const struct step *s, const struct hyp *h, const size_t *n_flagged)
{
	double alpha = h->fam == FAM_NONE ? 1 : s->flag[h->fam] / (double)n_flagged[h->fam];

	if (!h->rerun || h->floor2 || isnan(h->e2))
		return false;
	/* nothing to test (or --strict, which does without significance):
	 * the re-run alone must be beyond the threshold too */
	if (isnan(h->p2) || h->fam == FAM_NONE || h->by_strict)
		return h->e2 > h->fail;
	return h->p2 <= alpha && (h->e1 + h->e2) / 2 > h->fail;
}

static void confirm(struct step *s)
{
	size_t n_flagged[FAM_COUNT] = { 0 };

	for (size_t i = 0; i < s->n; i++)
		if (s->ps[i].h.flagged && s->ps[i].h.rerun && s->ps[i].h.fam != FAM_NONE)
			n_flagged[s->ps[i].h.fam]++;
	for (size_t u = 0; u < s->n_units; u++) {
		const struct hyp *h = &s->units[u].common;
		if (s->units[u].has_common && h->flagged && h->rerun && h->fam != FAM_NONE)
			n_flagged[h->fam]++;
	}
	for (size_t i = 0; i < s->n; i++) {
		struct hyp *h = &s->ps[i].h;
		if (!h->flagged)
			continue;
		if (h->rerun_failed || h->rerun_lacks) {
			h->outcome = PG_OUTCOME_INFRA;
		} else if (h->rerun) {
			h->confirmed = reproduced(s, h, n_flagged);
			h->verdict = h->confirmed ? PG_VERDICT_REGRESSED
						  : PG_VERDICT_NOT_REPRODUCED;
			h->outcome = h->confirmed ? PG_OUTCOME_FAIL : PG_OUTCOME_WARN;
		}
	}
	for (size_t u = 0; u < s->n_units; u++) {
		struct hyp *h = &s->units[u].common;
		if (!s->units[u].has_common || !h->flagged || !h->rerun)
			continue;
		h->confirmed = reproduced(s, h, n_flagged);
		h->verdict = h->confirmed ? PG_VERDICT_REGRESSED : PG_VERDICT_NOT_REPRODUCED;
		h->outcome = h->confirmed ? PG_OUTCOME_FAIL : PG_OUTCOME_WARN;
	}
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
	out->current = value;
	out->change = measured(m, raw);
	out->effect = measured(m, rerun ? h->e2 : h->e1);
	out->p_value = rerun ? h->p2 : h->p1;
	out->p_adjusted = rerun ? NAN : h->padj;
	out->n = n;
	out->flagged = rerun ? h->confirmed : h->flagged;
	out->ci_low = out->ci_high = NAN;
	out->ci_missing = ci_missing(rerun ? h->sd2 : h->sd1, h->df);
	/* the interval of the test that decided it, where one ran */
	if (!isnan(out->p_value)) {
		double lo, hi;
		if (pg_cmpstat_t_interval(rerun ? h->e2 : h->e1, rerun ? h->sd2 : h->sd1, h->df,
					  PG_CI_LEVEL, &lo, &hi)) {
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
	if (h->flagged) {
		if (!row->rule.gate)
			set_note(
				&row->note,
				"%s%s, beyond the %g%% escalation threshold; unconfirmed: re-run to "
				"confirm",
				a, beyond(st->method), round(row->rule.escalate * 1000) / 10);
		else if (isnan(h->p1))
			set_note(&row->note, "%s%s; unconfirmed: re-run to confirm", a,
				 beyond(st->method));
		else
			set_note(&row->note,
				 "%s%s (p %s, %s for the step); unconfirmed: re-run to confirm", a,
				 beyond(st->method), pv, pa);
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
		set_note(&row->note, "%s%s, not significant for the step (p %s, %s adjusted)", a,
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
	row->baseline = centre;
	row->base_from = st->method == PG_METHOD_HISTORY ? st->from : 0;
	row->current = p->v1;
	row->change = isfinite(st->r1) ? measured(m, st->r1)
		      : centre != 0    ? p->v1 / centre - 1
				       : NAN;
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
		if (isnan(st->r1) || st->r1 <= st->h.fail ||
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
	cc.spread = u->spread > 0 && !isnan(h->p1) ? expm1(u->spread) : NAN;
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
	if (!n)
		return;
	s.ps = pg_xcalloc(n, sizeof(*s.ps));
	s.units = pg_xcalloc(n, sizeof(*s.units));
	s.point_flagged = pg_xcalloc(n, sizeof(bool));
	build_units(&s);
	for (size_t u = 0; u < s.n_units; u++)
		first_run(&s, &s.units[u]);
	budget(&s);
	for (size_t i = 0; i < n; i++)
		classify(&s, &s.ps[i].h);
	for (size_t u = 0; u < s.n_units; u++)
		if (s.units[u].has_common)
			classify(&s, &s.units[u].common);
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
	for (size_t u = 0; u < s.n_units; u++)
		free(s.units[u].pairs);
	free(s.units);
	free(s.ps);
	free(s.point_flagged);
}
