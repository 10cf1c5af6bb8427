/*
 * A/B mode's paired decision with adaptive sampling (gate/ab.h says what
 * it decides; docs/ab.md why).
 */
#include "gate/ab.h"

#include "base/alloc.h"
#include "gate/compare_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The weight, in degrees of freedom, of the metric's pooled spread over
 * points when a point's own spread over few pairs is shrunk towards it:
 * the gate's prior (gate/compare_step.c). */
#define SHRINK_DF 6.0

/* A pair whose common change lies further than this many robust sds
 * (1.4826 MAD over the pairs) from the pairs' median, and further than the
 * whole-run tolerance, is a slow (or fast) session: set aside from the
 * whole run's row. Never before OUTLIER_MIN_PAIRS pairs, and at most one
 * pair in OUTLIER_SHARE. */
#define OUTLIER_SDS       5.0
#define OUTLIER_MIN_PAIRS 4
#define OUTLIER_SHARE     3

const char *pg_ab_side_name(enum pg_ab_side s)
{
	return s == PG_AB_HEAD ? "head" : "base";
}

enum pg_ab_side pg_ab_block_side(size_t i)
{
	/* A B B A, repeated */
	size_t r = i % 4;
	return r == 0 || r == 3 ? PG_AB_BASE : PG_AB_HEAD;
}

const char *pg_ab_verdict_name(enum pg_ab_verdict v)
{
	static const char *const names[] = { "pending", "regressed", "inconclusive",
					     "missing", "improved",  "unchanged" };
	return (unsigned)v < PG_AB_VERDICT_COUNT ? names[v] : "?";
}

void pg_ab_opts_init(struct pg_ab_opts *o)
{
	o->false_alarm = 0.05;
	o->confidence = 0.95;
	o->equivalence = 0.95;
	o->min_pairs = 2;
	o->max_pairs = 8;
}

double pg_ab_t_quantile(double q, double df)
{
	return pg_cmpstat_t_quantile(q, df);
}

/* The worse-positive log ratio of a measurement: ln(head/base), negated
 * for a metric where higher is better; NAN when either is missing. */
static double worse_log(double base, double head, bool higher_better)
{
	double r;

	if (!(base > 0) || !(head > 0))
		return NAN;
	r = log(head / base);
	return higher_better ? -r : r;
}

/* Back to a measured relative change. */
static double measured(double w, bool higher_better)
{
	return isnan(w) ? NAN : exp(higher_better ? -w : w) - 1;
}

static void mean_sd(const double *x, size_t n, double *mean, double *sd, size_t *count)
{
	double s = 0, ss = 0;
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (!isnan(x[i])) {
			s += x[i];
			k++;
		}
	*count = k;
	*mean = k ? s / (double)k : NAN;
	for (size_t i = 0; i < n; i++)
		if (!isnan(x[i]))
			ss += (x[i] - *mean) * (x[i] - *mean);
	*sd = k >= 2 ? sqrt(ss / (double)(k - 1)) : NAN;
}

/* Student's t quantiles of one look: the points of a metric share their
 * degrees of freedom, and the quantile is an iterative inversion. */
struct t_memo {
	double q[8], df[8], t[8];
	size_t n;
};

static double t_of(struct t_memo *memo, double q, double df)
{
	double t;

	for (size_t i = 0; i < memo->n; i++)
		if (memo->q[i] == q && memo->df[i] == df)
			return memo->t[i];
	t = pg_ab_t_quantile(q, df);
	if (memo->n < sizeof(memo->t) / sizeof(memo->t[0])) {
		memo->q[memo->n] = q;
		memo->df[memo->n] = df;
		memo->t[memo->n++] = t;
	}
	return t;
}

/*
 * Fill the test and the interval of e (mean m of n pairs, sd per pair, df)
 * in the worse-positive log scale, and the worse bound at o->equivalence.
 */
static void judge(struct pg_ab_est *e, double m, double sd, double df, size_t n,
		  const struct pg_ab_opts *o, struct t_memo *memo, bool higher_better)
{
	double se, half, lo, hi;

	e->n = n;
	e->effect = measured(m, higher_better);
	if (n < 2 || isnan(sd) || !(df > 0)) {
		e->verdict = PG_AB_MISSING;
		return;
	}
	se = sd / sqrt((double)n);
	e->sd = sd;
	e->df = df;
	if (se > 0) {
		e->p_value = pg_cmpstat_t_sf(m / se, df);
		half = t_of(memo, (1 - o->confidence) / 2, df) * se;
		e->worse_bound = m + t_of(memo, 1 - o->equivalence, df) * se;
	} else {
		/* identical pairs: a deterministic difference */
		e->p_value = m > 0 ? 0 : 1;
		half = 0;
		e->worse_bound = m;
	}
	lo = m - half;
	hi = m + half;
	e->lo = measured(higher_better ? hi : lo, higher_better);
	e->hi = measured(higher_better ? lo : hi, higher_better);
	e->verdict = PG_AB_PENDING;
}

/*
 * The interval of a point's whole change (mean m of n paired log ratios,
 * worse-positive, sd per pair): on the pairs' own spread, so that the
 * change a table or a chart shows comes with the interval that belongs
 * to it (the judged effect has its own, in lo..hi).
 */
static void change_interval(struct pg_ab_est *e, double m, double sd, size_t n, double conf,
			    bool higher_better)
{
	double half;

	if (n < 2 || isnan(sd))
		return;
	half = sd > 0 ? pg_ab_t_quantile((1 - conf) / 2, (double)n - 1) * sd / sqrt((double)n) : 0;
	e->change_lo = measured(higher_better ? m + half : m - half, higher_better);
	e->change_hi = measured(higher_better ? m - half : m + half, higher_better);
}

static void est_init(struct pg_ab_est *e)
{
	e->change = e->effect = e->lo = e->hi = e->sd = e->df = e->worse_bound = NAN;
	e->change_lo = e->change_hi = NAN;
	e->p_value = e->p_adjusted = NAN;
	e->n = e->set_aside = 0;
	e->applies = false;
	e->verdict = PG_AB_MISSING;
}

/*
 * The verdict of a tested hypothesis, in the worse-positive log scale:
 * regressed on the shown (two-sided) interval's better bound; unchanged
 * (improved) when the one-sided bound at `equivalence` on the worse side
 * lies within the tolerance (beyond it on the better side): the two
 * one-sided tests of equivalence (TOST), whose worse bound is the 90%
 * interval's for 95%.
 */
static enum pg_ab_verdict verdict_of(const struct pg_ab_est *e, double tau, double alpha,
				     bool higher_better)
{
	/* the interval's better bound, back in the worse-positive log scale */
	double w_lo = higher_better ? -log1p(e->hi) : log1p(e->lo);

	if (e->verdict == PG_AB_MISSING)
		return PG_AB_MISSING;
	if (e->p_adjusted <= alpha && w_lo > tau)
		return PG_AB_REGRESSED;
	if (e->worse_bound < -tau)
		return PG_AB_IMPROVED;
	if (e->worse_bound < tau)
		return PG_AB_UNCHANGED;
	return PG_AB_PENDING;
}

/*
 * Set aside the pairs of c[0..n) (the common change per pair; NAN: none)
 * whose session was off as a whole: beyond OUTLIER_SDS robust sds of the
 * pairs' median and beyond tau (log scale). A change of the head itself
 * shifts every pair alike and moves none of them away from the median.
 * Returns how many were set aside (their c becomes NAN).
 */
static size_t set_aside_sessions(double *c, size_t n, double tau, double *scratch)
{
	size_t m = 0, cut = 0, most;
	double med, mad, limit;

	for (size_t k = 0; k < n; k++)
		if (!isnan(c[k]))
			scratch[m++] = c[k];
	if (m < OUTLIER_MIN_PAIRS)
		return 0;
	med = pg_cmpstat_median_inplace(scratch, m);
	for (size_t i = 0; i < m; i++)
		scratch[i] = fabs(scratch[i] - med);
	mad = pg_cmpstat_median_inplace(scratch, m);
	limit = fmax(OUTLIER_SDS * 1.4826 * mad, tau);
	most = m / OUTLIER_SHARE;
	/* the furthest first, while they are beyond the limit */
	while (cut < most) {
		size_t far = n;
		for (size_t k = 0; k < n; k++)
			if (!isnan(c[k]) && fabs(c[k] - med) > limit &&
			    (far == n || fabs(c[k] - med) > fabs(c[far] - med)))
				far = k;
		if (far == n)
			break;
		c[far] = NAN;
		cut++;
	}
	return cut;
}

static bool settled(enum pg_ab_verdict v)
{
	return v == PG_AB_UNCHANGED || v == PG_AB_IMPROVED;
}

/* The decision on the first K of the input's pairs (one look). */
static void decide_look(struct pg_ab_decision *out, const struct pg_ab_input *in,
			const struct pg_ab_opts *o, size_t K, bool final)
{
	size_t J = in->n_metrics, P = in->n_points, stride = in->n_pairs;
	double *d = pg_xmalloc((P * K + 1) * sizeof(double));
	double *e = pg_xmalloc((P * K + 1) * sizeof(double));
	double *c = pg_xmalloc((K + 1) * sizeof(double));
	double *col = pg_xmalloc((P + K + 1) * sizeof(double));
	double *p_all = pg_xmalloc((J * (P + 1) + 1) * sizeof(double));
	double *adj = pg_xmalloc((J * (P + 1) + 1) * sizeof(double));
	struct pg_ab_est *trimmed = pg_xcalloc(J + 1, sizeof(*trimmed));
	struct t_memo memo = { .n = 0 };
	size_t n_p = 0;

	memset(out, 0, sizeof(*out));
	out->n_metrics = J;
	out->n_points = P;
	out->n_pairs = K;
	out->points = pg_xcalloc(J * P + 1, sizeof(*out->points));
	out->whole = pg_xcalloc(J + 1, sizeof(*out->whole));
	out->looks = o->max_pairs > o->min_pairs ? o->max_pairs - o->min_pairs + 1 : 1;
	out->alpha_look = o->false_alarm / (double)out->looks;
	out->final = final;

	for (size_t j = 0; j < J; j++) {
		bool hb = in->higher_better[j], crosswise;
		double pooled_ss = 0, pooled_df = 0;
		size_t measured_points = 0;

		for (size_t p = 0; p < P; p++) {
			bool any = false;
			size_t left_out = 0;
			for (size_t k = 0; k < K; k++) {
				size_t at = (j * P + p) * stride + k;
				bool measured_here = !isnan(in->base[at]) || !isnan(in->head[at]);
				d[p * K + k] = worse_log(in->base[at], in->head[at], hb);
				any = any || measured_here;
				/* a client-bound block measured the client: its pair
				 * says nothing about the server, whatever its size */
				if (in->client_bound && in->client_bound[p * stride + k] &&
				    measured_here) {
					d[p * K + k] = NAN;
					left_out++;
				}
			}
			est_init(&out->points[j * P + p]);
			out->points[j * P + p].applies = any;
			out->points[j * P + p].left_out = left_out;
			measured_points += any;
		}
		crosswise = measured_points >= 3;
		/* the change common to the points, pair by pair */
		for (size_t k = 0; k < K; k++) {
			size_t m = 0, lost = 0;
			if (!crosswise) {
				c[k] = 0;
				continue;
			}
			for (size_t p = 0; p < P; p++) {
				if (!isnan(d[p * K + k]))
					col[m++] = d[p * K + k];
				lost += in->client_bound && in->client_bound[p * stride + k];
			}
			/* a pair that lost a point to a client-bound block keeps
			 * its common change from the others (2 are enough), or
			 * that one block would take the pair from every point */
			c[k] = m >= 3 || (lost && m >= 2) ? pg_cmpstat_median_inplace(col, m) : NAN;
		}
		for (size_t p = 0; p < P; p++)
			for (size_t k = 0; k < K; k++)
				e[p * K + k] = d[p * K + k] - c[k];
		/* the metric's within-session spread, pooled over its points */
		for (size_t p = 0; p < P; p++) {
			double m, sd;
			size_t n;
			mean_sd(e + p * K, K, &m, &sd, &n);
			if (n >= 2) {
				pooled_ss += sd * sd * (double)(n - 1);
				pooled_df += (double)(n - 1);
			}
		}
		for (size_t p = 0; p < P; p++) {
			struct pg_ab_est *est = &out->points[j * P + p];
			double m, sd, dm, dsd, var, df, others;
			size_t n, dn;

			mean_sd(d + p * K, K, &dm, &dsd, &dn);
			mean_sd(e + p * K, K, &m, &sd, &n);
			est->change = measured(dm, hb);
			change_interval(est, dm, dsd, dn, o->confidence, hb);
			if (n < 2) {
				est->n = n;
				continue;
			}
			/* the point's own spread, shrunk towards its metric's */
			others = pooled_df - (double)(n - 1);
			if (others > 0) {
				double pooled_var = (pooled_ss - sd * sd * (double)(n - 1)) /
						    others;
				double w = others < SHRINK_DF ? others : SHRINK_DF;
				var = (w * pooled_var + (double)(n - 1) * sd * sd) /
				      (w + (double)(n - 1));
				df = (double)(n - 1) + w;
			} else {
				var = sd * sd;
				df = (double)(n - 1);
			}
			judge(est, m, sqrt(var), df, n, o, &memo, hb);
			est->change = measured(dm, hb);
		}
		/* the common change: session noise, one value per pair, but for
		 * the sessions off as a whole */
		est_init(&out->whole[j]);
		out->whole[j].applies = crosswise;
		if (crosswise) {
			double m, sd,
				tau = log1p(in->whole_tolerance ? in->whole_tolerance[j]
								: in->tolerance[j]);
			size_t n, cut;
			mean_sd(c, K, &m, &sd, &n);
			judge(&out->whole[j], m, sd, (double)n - 1, n, o, &memo, hb);
			out->whole[j].change = out->whole[j].effect;
			est_init(&trimmed[j]);
			cut = set_aside_sessions(c, K, tau, col);
			if (cut) {
				mean_sd(c, K, &m, &sd, &n);
				judge(&trimmed[j], m, sd, (double)n - 1, n, o, &memo, hb);
				trimmed[j].change = trimmed[j].effect;
				trimmed[j].applies = true;
				trimmed[j].set_aside = cut;
			}
		}
	}

	/* one family: every tested hypothesis of the step */
	for (size_t i = 0; i < J * P; i++)
		p_all[n_p++] = out->points[i].p_value;
	for (size_t j = 0; j < J; j++)
		p_all[n_p++] = out->whole[j].p_value;
	pg_cmpstat_holm(p_all, n_p, adj);
	n_p = 0;
	for (size_t i = 0; i < J * P; i++)
		out->points[i].p_adjusted = adj[n_p++];
	for (size_t j = 0; j < J; j++)
		out->whole[j].p_adjusted = adj[n_p++];
	for (size_t i = 0; i < J * P + J; i++)
		out->hypotheses += !isnan(p_all[i]);

	for (size_t i = 0; i < J * P + J; i++) {
		size_t j = i < J * P ? i / (P ? P : 1) : i - J * P;
		struct pg_ab_est *est = i < J * P ? &out->points[i] : &out->whole[i - J * P];
		double tau = log1p(i >= J * P && in->whole_tolerance ? in->whole_tolerance[j]
								     : in->tolerance[j]);
		if (!est->applies)
			continue;
		if (K < o->min_pairs && est->verdict != PG_AB_MISSING)
			est->verdict = PG_AB_PENDING;
		else if (est->verdict == PG_AB_MISSING && est->left_out)
			/* pairs left out (client-bound): more pairs may decide it */
			est->verdict = PG_AB_PENDING;
		else
			est->verdict = verdict_of(est, tau, out->alpha_look, in->higher_better[j]);
		/* a whole-run row open on every pair may settle without the
		 * sessions off as a whole; it is never regressed without them */
		if (i >= J * P && est->verdict == PG_AB_PENDING && K >= o->min_pairs &&
		    trimmed[j].applies) {
			trimmed[j].p_value = est->p_value;
			trimmed[j].p_adjusted = est->p_adjusted;
			trimmed[j].verdict = verdict_of(&trimmed[j], tau, out->alpha_look,
							in->higher_better[j]);
			if (settled(trimmed[j].verdict))
				*est = trimmed[j];
		}
		if (final && est->verdict == PG_AB_PENDING)
			est->verdict = PG_AB_INCONCLUSIVE;
		out->counts[est->verdict]++;
	}
	/* a whole-run row's change is what it judged: its interval too */
	for (size_t j = 0; j < J; j++) {
		out->whole[j].change_lo = out->whole[j].lo;
		out->whole[j].change_hi = out->whole[j].hi;
	}
	out->stop = final || (K >= o->min_pairs && (out->counts[PG_AB_REGRESSED] > 0 ||
						    out->counts[PG_AB_PENDING] == 0));
	free(d);
	free(e);
	free(c);
	free(col);
	free(p_all);
	free(adj);
	free(trimmed);
}

void pg_ab_decide(struct pg_ab_decision *out, const struct pg_ab_input *in,
		  const struct pg_ab_opts *o, bool final)
{
	size_t J = in->n_metrics, P = in->n_points, K = in->n_pairs, rows = J * P + J;
	bool *kept = pg_xcalloc(rows + 1, sizeof(bool));

	decide_look(out, in, o, K, final);
	/*
	 * A row whose interval lay inside its tolerance at an earlier look
	 * (the looks are after every pair from min_pairs) stays decided, with
	 * that look's estimate: sampling goes on for the others, and a later
	 * draw of the same noise does not reopen it. A regression found later
	 * still counts.
	 */
	for (size_t k = o->min_pairs; k < K; k++) {
		struct pg_ab_decision early;

		decide_look(&early, in, o, k, false);
		for (size_t i = 0; i < rows; i++) {
			struct pg_ab_est *now = i < J * P ? &out->points[i]
							  : &out->whole[i - J * P];
			const struct pg_ab_est *then = i < J * P ? &early.points[i]
								 : &early.whole[i - J * P];
			if (kept[i] || !now->applies || !settled(then->verdict) ||
			    (now->verdict != PG_AB_PENDING && now->verdict != PG_AB_INCONCLUSIVE))
				continue;
			out->counts[now->verdict]--;
			*now = *then;
			out->counts[now->verdict]++;
			kept[i] = true;
		}
		pg_ab_decision_release(&early);
	}
	out->stop = final || (K >= o->min_pairs && (out->counts[PG_AB_REGRESSED] > 0 ||
						    out->counts[PG_AB_PENDING] == 0));
	free(kept);
}

/* The worse-positive log bound after n pairs of a row with worse-positive
 * mean w and spread sd, df degrees of freedom now at n_now pairs: a
 * quantile q above (sign +1) or below (-1) the mean. */
static double bound_after(double w, double sd, double df, size_t n_now, size_t n, double q,
			  double sign)
{
	double df_n = df + (double)n - (double)n_now;
	return w + sign * pg_ab_t_quantile(q, df_n) * sd / sqrt((double)n);
}

size_t pg_ab_pairs_to_close(const struct pg_ab_est *e, double tolerance, const struct pg_ab_opts *o,
			    bool higher_better)
{
	double tau = log1p(tolerance), w, q_eq = 1 - o->equivalence, q_ci = (1 - o->confidence) / 2;

	if (e->n < 2 || isnan(e->sd) || isnan(e->df) || isnan(e->effect))
		return 0;
	w = higher_better ? -log1p(e->effect) : log1p(e->effect);
	for (size_t n = e->n + 1; n <= PG_AB_CLOSE_MAX; n++) {
		if (w < -tau && bound_after(w, e->sd, e->df, e->n, n, q_eq, 1) < -tau)
			return n; /* improved */
		if (w >= -tau && w < tau && bound_after(w, e->sd, e->df, e->n, n, q_eq, 1) < tau)
			return n; /* unchanged */
		if (w > tau && bound_after(w, e->sd, e->df, e->n, n, q_ci, -1) > tau)
			return n; /* regressed, if significant for the step too */
	}
	return 0;
}

double pg_ab_passing_tolerance(const struct pg_ab_est *e, const struct pg_ab_opts *o,
			       bool higher_better)
{
	double w;

	if (e->n < 2 || isnan(e->sd) || isnan(e->df) || isnan(e->effect))
		return NAN;
	w = higher_better ? -log1p(e->effect) : log1p(e->effect);
	w = bound_after(w, e->sd, e->df, e->n, e->n, 1 - o->equivalence, 1);
	return w > 0 ? expm1(w) : NAN;
}

void pg_ab_decision_release(struct pg_ab_decision *d)
{
	free(d->points);
	free(d->whole);
	memset(d, 0, sizeof(*d));
}
