/* A/B mode's decision (gate/ab.c) on hand-made blocks: the balanced order,
 * the paired interval, the session offset told apart from one point's
 * change, the step's budget and the stopping rule. */
#include "testutil.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/jsonw.h"
#include "gate/ab.h"
#include "gate/attention.h"
#include "gate/compare.h"
#include "results/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

START_TEST(block_order_is_balanced)
{
	/* A B B A A B B A: every 4 blocks hold 2 of each side, and each pair
	 * (2k, 2k+1) has one of each */
	static const enum pg_ab_side want[] = { PG_AB_BASE, PG_AB_HEAD, PG_AB_HEAD, PG_AB_BASE,
						PG_AB_BASE, PG_AB_HEAD, PG_AB_HEAD, PG_AB_BASE };
	double pos[2] = { 0, 0 };

	for (size_t i = 0; i < 8; i++)
		ck_assert_int_eq(pg_ab_block_side(i), want[i]);
	for (size_t k = 0; k < 50; k++)
		ck_assert_int_ne(pg_ab_block_side(2 * k), pg_ab_block_side(2 * k + 1));
	/* a linear drift hits both sides alike: their mean positions agree
	 * after every 4 blocks */
	for (size_t i = 0; i < 16; i++)
		pos[pg_ab_block_side(i)] += (double)i;
	ck_assert_double_eq(pos[0], pos[1]);
	ck_assert_str_eq(pg_ab_side_name(PG_AB_BASE), "base");
	ck_assert_str_eq(pg_ab_side_name(PG_AB_HEAD), "head");
}
END_TEST

START_TEST(t_quantile_inverts_the_tail)
{
	/* closed form for 1 degree of freedom: tan(pi (1/2 - q)) */
	ck_assert_double_eq_tol(pg_ab_t_quantile(0.025, 1), tan(M_PI * (0.5 - 0.025)), 1e-6);
	ck_assert_double_eq_tol(pg_ab_t_quantile(0.025, 1e9), 1.959964, 1e-5);
	ck_assert_double_eq_tol(pg_ab_t_quantile(0.975, 4), -pg_ab_t_quantile(0.025, 4), 1e-9);
	ck_assert_double_eq_tol(pg_ab_t_quantile(0.025, 4), 2.776445, 1e-5);
	ck_assert(isnan(pg_ab_t_quantile(0, 3)));
}
END_TEST

/* One metric (throughput: higher is better) over points, pairs given. */
struct fixture {
	size_t P, K;
	double *base, *head;
	bool hb[1];
	double tol[1];
	struct pg_ab_input in;
	struct pg_ab_opts o;
};

static void fx_init(struct fixture *f, size_t P, size_t K)
{
	f->P = P;
	f->K = K;
	f->base = pg_xcalloc(P * K, sizeof(double));
	f->head = pg_xcalloc(P * K, sizeof(double));
	f->hb[0] = true;
	f->tol[0] = 0.01;
	f->in = (struct pg_ab_input){ 1, P, K, f->base, f->head, f->hb, f->tol, NULL };
	pg_ab_opts_init(&f->o);
}

static void fx_release(struct fixture *f)
{
	free(f->base);
	free(f->head);
}

/* Deterministic "noise": a fixed pattern of small deviations. */
static double wiggle(size_t i)
{
	static const double w[] = { 0.004, -0.003, 0.001, -0.005, 0.002, 0.0, -0.001, 0.003 };
	return w[i % 8];
}

/* 2 points (no common change to take out) with the same head/base ratios
 * r[0..3) over 3 pairs. */
static void two_points(struct fixture *f, const double *r)
{
	fx_init(f, 2, 3);
	for (size_t k = 0; k < 3; k++) {
		f->base[k] = 1000;
		f->head[k] = 1000 * r[k];
		f->base[3 + k] = 500;
		f->head[3 + k] = 500 * r[k];
	}
}

START_TEST(paired_interval_of_one_point)
{
	/* 2 points (no common change to take out): head/base ratios 0.97,
	 * 0.96, 0.98 for point 0 -> mean of the logs, t interval with 2 df */
	struct fixture f;
	struct pg_ab_decision d;
	double r[] = { 0.97, 0.96, 0.98 }, m = 0, ss = 0, sd, half;

	two_points(&f, r);
	for (size_t k = 0; k < 3; k++)
		m += log(r[k]) / 3;
	for (size_t k = 0; k < 3; k++)
		ss += (log(r[k]) - m) * (log(r[k]) - m);
	sd = sqrt(ss / 2);
	/* the point's 2 degrees of freedom and the other point's 2 */
	half = pg_ab_t_quantile(0.025, 4) * sd / sqrt(3);
	pg_ab_decide(&d, &f.in, &f.o, false);
	ck_assert_uint_eq(d.points[0].n, 3);
	ck_assert_double_eq_tol(d.points[0].change, exp(m) - 1, 1e-12);
	ck_assert_double_eq_tol(d.points[0].effect, exp(m) - 1, 1e-12);
	/* the two points' spreads are pooled: the same here */
	ck_assert_double_eq_tol(d.points[0].lo, exp(m - half) - 1, 1e-9);
	ck_assert_double_eq_tol(d.points[0].hi, exp(m + half) - 1, 1e-9);
	ck_assert_double_eq_tol(d.points[0].df, 4, 1e-12);
	/* the change shown comes with the interval of its own pairs (2 df) */
	half = pg_ab_t_quantile(0.025, 2) * sd / sqrt(3);
	ck_assert_double_eq_tol(d.points[0].change_lo, exp(m - half) - 1, 1e-9);
	ck_assert_double_eq_tol(d.points[0].change_hi, exp(m + half) - 1, 1e-9);
	ck_assert(!d.whole[0].applies);
	pg_ab_decision_release(&d);
	fx_release(&f);
}
END_TEST

/* 18 points, K pairs: every block has a session offset (off[b]) shared by
 * its points; point 0's head is worse by delta; small per-point noise. */
static void fill_step(struct fixture *f, const double *off, double delta)
{
	for (size_t p = 0; p < f->P; p++)
		for (size_t k = 0; k < f->K; k++) {
			double lvl = 1000 + 50 * (double)p;
			/* the blocks of pair k that ran each side */
			size_t bb = 2 * k + (pg_ab_block_side(2 * k) == PG_AB_BASE ? 0 : 1);
			size_t hb = 2 * k + (bb == 2 * k ? 1 : 0);
			f->base[p * f->K + k] = lvl * exp(-off[bb] + wiggle(p * 7 + k * 3));
			f->head[p * f->K + k] = lvl * exp(-off[hb] + wiggle(p * 5 + k * 11 + 1)) *
						(p ? 1 : 1 - delta);
		}
}

START_TEST(a_slow_session_is_not_a_regression)
{
	/* one head block on a node 6% slow: every point worse in that pair;
	 * the common change takes it, no point regresses */
	double off[16] = { 0 };
	struct fixture f;
	struct pg_ab_decision d;

	off[1] = log(1.06);
	fx_init(&f, 18, 8);
	fill_step(&f, off, 0);
	pg_ab_decide(&d, &f.in, &f.o, true);
	ck_assert_uint_eq(d.counts[PG_AB_REGRESSED], 0);
	for (size_t p = 0; p < 18; p++)
		ck_assert_msg(fabs(d.points[p].effect) < 0.005, "point %zu effect %g", p,
			      d.points[p].effect);
	/* the whole run sets that pair aside (every point 6% off, beyond 5
	 * robust sds of the other pairs and the 1% tolerance) and is clear
	 * on the other seven */
	ck_assert(d.whole[0].applies);
	ck_assert_uint_eq(d.whole[0].set_aside, 1);
	ck_assert_uint_eq(d.whole[0].n, 7);
	ck_assert(fabs(d.whole[0].change) < 0.005);
	ck_assert_int_eq(d.whole[0].verdict, PG_AB_UNCHANGED);
	pg_ab_decision_release(&d);
	fx_release(&f);
}
END_TEST

START_TEST(a_client_bound_block_never_dominates_the_change)
{
	/* nothing changed; at point 0 the head's block of pair 2 (index 1) measured a
	 * client that could not keep up: half the throughput. Counted, that
	 * one pair pulls the point's geometric mean down ~11%; flagged, its
	 * pair is left out and the change is the other pairs' */
	double off[12] = { 0 };
	bool flagged[18 * 6] = { false };
	struct fixture f;
	struct pg_ab_decision d;

	fx_init(&f, 18, 6);
	fill_step(&f, off, 0);
	f.head[0 * 6 + 1] *= 0.5;
	pg_ab_decide(&d, &f.in, &f.o, true);
	ck_assert_msg(d.points[0].change < -0.08, "counted: %g", d.points[0].change);
	pg_ab_decision_release(&d);

	flagged[0 * 6 + 1] = true;
	f.in.client_bound = flagged;
	pg_ab_decide(&d, &f.in, &f.o, true);
	ck_assert_msg(fabs(d.points[0].change) < 0.01, "left out: %g", d.points[0].change);
	ck_assert_uint_eq(d.points[0].n, 5);
	ck_assert_uint_eq(d.points[0].left_out, 1);
	ck_assert_uint_eq(d.points[1].left_out, 0);
	ck_assert(d.points[0].change_lo <= d.points[0].change);
	ck_assert(d.points[0].change <= d.points[0].change_hi);
	ck_assert_uint_eq(d.counts[PG_AB_REGRESSED], 0);
	pg_ab_decision_release(&d);

	/* too few pairs left: more blocks may decide it, so the sampling goes
	 * on (pending, not missing); at the end of the budget, inconclusive */
	for (size_t k = 0; k < 5; k++)
		flagged[0 * 6 + k] = true;
	pg_ab_decide(&d, &f.in, &f.o, false);
	ck_assert_int_eq(d.points[0].verdict, PG_AB_PENDING);
	ck_assert(!d.stop);
	pg_ab_decision_release(&d);
	pg_ab_decide(&d, &f.in, &f.o, true);
	ck_assert_int_eq(d.points[0].verdict, PG_AB_INCONCLUSIVE);
	pg_ab_decision_release(&d);
	fx_release(&f);
}
END_TEST

START_TEST(one_point_stands_out_of_its_sessions)
{
	/* session offsets of +-2% everywhere; point 0's head 5% slower */
	double off[16];
	struct fixture f;
	struct pg_ab_decision d;

	for (size_t i = 0; i < 16; i++)
		off[i] = 0.02 * sin(1.7 * (double)i);
	fx_init(&f, 18, 4);
	fill_step(&f, off, 0.05);
	pg_ab_decide(&d, &f.in, &f.o, false);
	ck_assert_int_eq(d.points[0].verdict, PG_AB_REGRESSED);
	ck_assert(d.points[0].hi < -0.01); /* as measured: throughput down */
	ck_assert(d.points[0].p_adjusted <= d.alpha_look);
	for (size_t p = 1; p < 18; p++)
		ck_assert_int_ne(d.points[p].verdict, PG_AB_REGRESSED);
	ck_assert_uint_eq(d.counts[PG_AB_REGRESSED], 1);
	/* a regression ends the sampling: the step fails whatever the rest */
	ck_assert(d.stop);
	pg_ab_decision_release(&d);
	fx_release(&f);
}
END_TEST

START_TEST(the_budget_is_split_over_looks_and_hypotheses)
{
	double off[16] = { 0 };
	struct fixture f;
	struct pg_ab_decision d;

	fx_init(&f, 18, 2);
	fill_step(&f, off, 0);
	f.o.min_pairs = 2;
	f.o.max_pairs = 8;
	pg_ab_decide(&d, &f.in, &f.o, false);
	ck_assert_uint_eq(d.looks, 7);
	ck_assert_double_eq_tol(d.alpha_look, 0.05 / 7, 1e-15);
	/* 18 points and the whole run */
	ck_assert_uint_eq(d.hypotheses, 19);
	/* Holm: the smallest p-value is multiplied by the family's size */
	{
		size_t best = 0;
		for (size_t p = 1; p < 18; p++)
			if (d.points[p].p_value < d.points[best].p_value)
				best = p;
		if (d.whole[0].p_value > d.points[best].p_value)
			ck_assert_double_eq_tol(d.points[best].p_adjusted,
						fmin(1, 19 * d.points[best].p_value), 1e-12);
	}
	pg_ab_decision_release(&d);
	fx_release(&f);
}
END_TEST

START_TEST(stopping_rule)
{
	double off[16] = { 0 };
	struct fixture f;
	struct pg_ab_decision d;

	/* identical sides, tiny noise: every interval is clear of 1% at once,
	 * but never before min_pairs */
	fx_init(&f, 18, 1);
	fill_step(&f, off, 0);
	pg_ab_decide(&d, &f.in, &f.o, false);
	ck_assert(!d.stop);
	ck_assert_uint_eq(d.counts[PG_AB_UNCHANGED], 0);
	pg_ab_decision_release(&d);
	fx_release(&f);

	fx_init(&f, 18, 3);
	fill_step(&f, off, 0);
	pg_ab_decide(&d, &f.in, &f.o, false);
	ck_assert_uint_eq(d.counts[PG_AB_PENDING], 0);
	ck_assert_uint_eq(d.counts[PG_AB_UNCHANGED], 19);
	ck_assert(d.stop);
	ck_assert(!d.final);
	pg_ab_decision_release(&d);

	/* a tolerance too tight to clear: pending, sampling goes on ... */
	f.tol[0] = 0.0005;
	pg_ab_decide(&d, &f.in, &f.o, false);
	ck_assert_uint_gt(d.counts[PG_AB_PENDING], 0);
	ck_assert(!d.stop);
	pg_ab_decision_release(&d);
	/* ... until the budget is spent: inconclusive, never a regression */
	pg_ab_decide(&d, &f.in, &f.o, true);
	ck_assert_uint_eq(d.counts[PG_AB_PENDING], 0);
	ck_assert_uint_gt(d.counts[PG_AB_INCONCLUSIVE], 0);
	ck_assert_uint_eq(d.counts[PG_AB_REGRESSED], 0);
	ck_assert(d.stop && d.final);
	pg_ab_decision_release(&d);
	fx_release(&f);
}
END_TEST

START_TEST(improvements_and_missing_cells)
{
	double off[16] = { 0 };
	struct fixture f;
	struct pg_ab_decision d;

	/* point 0's head 5% faster: improved; point 1 never measured on the
	 * head: missing; point 2 not measured at all: does not apply */
	fx_init(&f, 18, 3);
	fill_step(&f, off, -0.05);
	for (size_t k = 0; k < 3; k++) {
		f.head[1 * 3 + k] = NAN;
		f.head[2 * 3 + k] = NAN;
		f.base[2 * 3 + k] = NAN;
	}
	pg_ab_decide(&d, &f.in, &f.o, false);
	ck_assert_int_eq(d.points[0].verdict, PG_AB_IMPROVED);
	ck_assert_int_eq(d.points[1].verdict, PG_AB_MISSING);
	ck_assert(d.points[1].applies);
	ck_assert(!d.points[2].applies);
	ck_assert_uint_eq(d.counts[PG_AB_MISSING], 1);
	ck_assert_uint_eq(d.counts[PG_AB_REGRESSED], 0);
	/* 16 points measured on both sides and the whole run */
	ck_assert_uint_eq(
		d.counts[PG_AB_IMPROVED] + d.counts[PG_AB_UNCHANGED] + d.counts[PG_AB_PENDING], 17);
	ck_assert_str_eq(pg_ab_verdict_name(PG_AB_INCONCLUSIVE), "inconclusive");
	pg_ab_decision_release(&d);
	fx_release(&f);
}
END_TEST

/* A summary as runner/ab_io.c fills it, from hand-made blocks: 4 points
 * (one with a hostile name), throughput and median TPOT, 6 pairs; point 2's
 * throughput 4% worse, every point's TPOT 3% worse. clean: nothing worse,
 * 8 pairs, point 1's TPOT +1.4% swinging by 2-3% from pair to pair (the
 * budget ends with it open). */
static void make_summary(struct pg_ab_summary *s, bool clean)
{
	static const char *const names[] = { "serving_a_qps_1", "serving_a_qps_4",
					     "serving_a_qps_16", "serving_|x`<b>_qps_inf" };
	const size_t P = 4, K = clean ? 8 : 6, J = 2;
	double *base = pg_xmalloc(J * P * K * sizeof(double));
	double *head = pg_xmalloc(J * P * K * sizeof(double));
	bool hb[2] = { true, false };
	bool flagged[4 * 8] = { false };
	struct pg_ab_input in;
	struct pg_ab_opts o;

	memset(s, 0, sizeof(*s));
	s->gpu = pg_xstrdup("H100");
	for (size_t p = 0; p < P; p++)
		pg_strv_push(&s->points, names[p]);
	s->n_metrics = J;
	s->metrics = pg_xcalloc(J, sizeof(*s->metrics));
	s->metrics[0] = pg_metric_by_id(PG_SUITE_SERVING, "output_throughput");
	s->metrics[1] = pg_metric_by_id(PG_SUITE_SERVING, "median_tpot_ms");
	s->tolerance = pg_xcalloc(J, sizeof(double));
	s->whole_tolerance = pg_xcalloc(J, sizeof(double));
	s->tolerance[0] = s->whole_tolerance[0] = 0.01;
	s->tolerance[1] = s->whole_tolerance[1] = 0.02;
	s->base = pg_xcalloc(J * P, sizeof(double));
	s->head = pg_xcalloc(J * P, sizeof(double));
	for (size_t j = 0; j < J; j++)
		for (size_t p = 0; p < P; p++) {
			double lvl = j ? 20 + (double)p : 1000 * (double)(p + 1);
			double worse = clean ? 1 : j ? 1.03 : p == 2 ? 0.96 : 1;
			for (size_t k = 0; k < K; k++) {
				static const double swing[] = { 0.03,  -0.01, 0.04, 0,
								0.035, -0.02, 0.03, 0.01 };
				double off = 0.01 * sin((double)(k * 3 + 1)), w = wiggle(p * 5 + k);
				double hw = wiggle(p + k * 7) +
					    (clean && j == 1 && p == 1 ? swing[k] : 0);
				base[(j * P + p) * K + k] = lvl * exp(off + w);
				head[(j * P + p) * K + k] = lvl * worse * exp(-off + hw);
			}
			s->base[j * P + p] = lvl;
			s->head[j * P + p] = lvl * worse;
		}
	/* not clean: point 1's head block of pair 4 (block 7) was
	 * client-bound, a third of its throughput, left out with its pair */
	for (size_t j = 0; j < J && !clean; j++)
		head[(j * P + 1) * K + 3] *= j ? 3 : 1.0 / 3;
	if (!clean) {
		flagged[1 * K + 3] = true;
		pg_strv_push(&s->client_bound, "serving_a_qps_4 in block 7 (head)");
	}
	in = (struct pg_ab_input){ J,      P, K, base, head, hb, s->tolerance, s->whole_tolerance,
				   flagged };
	pg_ab_opts_init(&o);
	/* stopped at the regression: what is open is inconclusive */
	pg_ab_decide(&s->d, &in, &o, true);
	s->blocks = 2 * K;
	s->max_blocks = 16;
	s->stop = pg_xstrdup(clean ? "the budget is spent" : "a regression is clear");
	s->seconds = 754;
	s->side_desc[1] = pg_xstrdup("server flags --itl-ms 4.12");
	free(base);
	free(head);
}

START_TEST(equivalence_is_two_one_sided_tests)
{
	/* 2 points, 3 pairs, throughput: worse logs 0.005, 0.01, 0 -> mean
	 * 0.005, sd 0.005, 4 df. The one-sided 95% worse bound (1.12%) is
	 * inside a 1.2% tolerance, the 97.5% one (1.30%) is not. */
	struct fixture f;
	struct pg_ab_decision d;
	double r[] = { exp(-0.005), exp(-0.01), 1 };
	double se = 0.005 / sqrt(3);

	two_points(&f, r);
	f.tol[0] = 0.012;
	ck_assert(0.005 + pg_ab_t_quantile(0.05, 4) * se < log1p(0.012));
	ck_assert(0.005 + pg_ab_t_quantile(0.025, 4) * se > log1p(0.012));
	pg_ab_decide(&d, &f.in, &f.o, false);
	ck_assert_int_eq(d.points[0].verdict, PG_AB_UNCHANGED);
	/* the 95% interval shown still pokes past it */
	ck_assert(d.points[0].lo < -0.012);
	pg_ab_decision_release(&d);
	f.o.equivalence = 0.975;
	pg_ab_decide(&d, &f.in, &f.o, false);
	ck_assert_int_eq(d.points[0].verdict, PG_AB_PENDING);
	pg_ab_decision_release(&d);
	fx_release(&f);
}
END_TEST

START_TEST(a_clear_row_stays_decided)
{
	/* 18 points, 6 pairs; point 0 is clear of 1% after 3 pairs, then
	 * its head swings by 2-4% from pair to pair */
	double off[16] = { 0 }, swing[] = { 0.02, -0.01, 0.04 };
	struct fixture f;
	struct pg_ab_decision d;

	fx_init(&f, 18, 6);
	fill_step(&f, off, 0);
	for (size_t k = 3; k < 6; k++)
		f.head[k] *= 1 - swing[k - 3];
	/* judged on the 6 pairs alone: open */
	f.o.min_pairs = 6;
	pg_ab_decide(&d, &f.in, &f.o, false);
	ck_assert_int_eq(d.points[0].verdict, PG_AB_PENDING);
	pg_ab_decision_release(&d);
	/* after every pair from 2: unchanged since pair 3, with that estimate */
	f.o.min_pairs = 2;
	pg_ab_decide(&d, &f.in, &f.o, false);
	ck_assert_int_eq(d.points[0].verdict, PG_AB_UNCHANGED);
	ck_assert_uint_le(d.points[0].n, 3);
	ck_assert_uint_eq(d.counts[PG_AB_PENDING], 0);
	ck_assert(d.stop);
	pg_ab_decision_release(&d);
	fx_release(&f);
	/* a regression found later still counts: the head 20% worse from
	 * pair 2 on is regressed after 8, whatever the first looks said */
	fx_init(&f, 18, 8);
	fill_step(&f, off, 0);
	for (size_t k = 2; k < 8; k++)
		f.head[k] = f.base[k] * 0.8;
	pg_ab_decide(&d, &f.in, &f.o, true);
	ck_assert_int_eq(d.points[0].verdict, PG_AB_REGRESSED);
	pg_ab_decision_release(&d);
	fx_release(&f);
}
END_TEST

/* n is the fewest pairs whose bound (q above the mean, or below with
 * sign -1) clears tau; n - 1 is not. */
static void assert_fewest(const struct pg_ab_est *e, size_t n, double w, double q, double sign,
			  double tau)
{
	double df0 = e->df - (double)e->n;
	for (size_t m = n - 1; m <= n; m++) {
		double b = w +
			   sign * pg_ab_t_quantile(q, df0 + (double)m) * e->sd / sqrt((double)m);
		bool clears = sign > 0 ? b < tau : b > tau;
		ck_assert_msg(clears == (m == n), "%zu pairs: bound %g vs %g", m, b, tau);
	}
}

START_TEST(pairs_that_would_close_a_row)
{
	struct pg_ab_opts o;
	struct pg_ab_est e = { 0 };
	double tau = log1p(0.02);
	size_t n;

	pg_ab_opts_init(&o);
	/* latency +1%, sd 2% per pair, 4 pairs (df 5): to be unchanged */
	e.effect = expm1(0.01);
	e.sd = 0.02;
	e.df = 5;
	e.n = 4;
	n = pg_ab_pairs_to_close(&e, 0.02, &o, false);
	ck_assert_uint_gt(n, 4);
	assert_fewest(&e, n, 0.01, 0.05, 1, tau);
	ck_assert_double_eq_tol(pg_ab_passing_tolerance(&e, &o, false),
				expm1(0.01 + pg_ab_t_quantile(0.05, 5) * 0.01), 1e-12);
	/* +4%: to confirm a regression (the 95% interval's lower bound) */
	e.effect = expm1(0.04);
	n = pg_ab_pairs_to_close(&e, 0.02, &o, false);
	assert_fewest(&e, n, 0.04, 0.025, -1, tau);
	/* the same for throughput, measured -4% */
	e.effect = expm1(-0.04);
	ck_assert_uint_eq(pg_ab_pairs_to_close(&e, 0.02, &o, true), n);
	/* at the tolerance: no number of pairs settles it */
	e.effect = 0.02;
	ck_assert_uint_eq(pg_ab_pairs_to_close(&e, 0.02, &o, false), 0);
	/* no spread: nothing to say */
	e.sd = NAN;
	ck_assert_uint_eq(pg_ab_pairs_to_close(&e, 0.02, &o, false), 0);
	ck_assert(isnan(pg_ab_passing_tolerance(&e, &o, false)));
}
END_TEST

START_TEST(comparison_golden)
{
	struct pg_ab_summary s;
	struct pg_buf md = PG_BUF_INIT, js = PG_BUF_INIT;
	json_t *v;

	make_summary(&s, false);
	ck_assert_int_eq(pg_ab_outcome(&s), PG_OUTCOME_FAIL);
	pg_ab_markdown(&md, &s);
	tu_assert_golden("golden/ab/comparison.md", md.ptr);
	{
		static const char *const tags[] = { "<details>", "</details>", "<summary>",
						    "</summary>", NULL };
		tu_assert_markdown_safe(md.ptr, tags);
	}
	v = pg_ab_json(&s);
	pg_json_write(&js, v, 2);
	pg_buf_putc(&js, '\n');
	tu_assert_golden("golden/ab/verdict.json", js.ptr);
	ck_assert_int_eq(json_integer_value(json_object_get(v, "exit_code")), 1);
	json_decref(v);
	pg_buf_release(&md);
	pg_buf_release(&js);
	pg_ab_summary_release(&s);
}
END_TEST

START_TEST(inconclusive_names_what_would_close_it)
{
	struct pg_ab_summary s;
	struct pg_buf md = PG_BUF_INIT;
	size_t open = 0;

	make_summary(&s, true);
	ck_assert_int_eq(pg_ab_outcome(&s), PG_OUTCOME_WARN);
	ck_assert_uint_eq(s.d.counts[PG_AB_REGRESSED], 0);
	ck_assert_int_eq(s.d.points[1 * 4 + 1].verdict, PG_AB_INCONCLUSIVE);
	pg_ab_markdown(&md, &s);
	/* every open row is named in the "Still open" list, once */
	for (size_t i = 0; i < 2 * 4 + 2; i++) {
		const struct pg_ab_est *e = i < 8 ? &s.d.points[i] : &s.d.whole[i - 8];
		open += e->applies && e->verdict == PG_AB_INCONCLUSIVE;
	}
	ck_assert_uint_gt(open, 0);
	{
		const char *list = strstr(md.ptr, "**Still open**"),
			   *end = strstr(md.ptr, "<details>");
		size_t bullets = 0;
		ck_assert_ptr_nonnull(list);
		for (const char *c = list; c && c < end; c = strstr(c + 1, "\n- "))
			bullets += c != list;
		ck_assert_uint_eq(bullets, open);
	}
	ck_assert_ptr_nonnull(strstr(md.ptr, "serving_a_qps_4 · Median TPOT"));
	tu_assert_golden("golden/ab/inconclusive.md", md.ptr);
	pg_buf_release(&md);
	pg_ab_summary_release(&s);
}
END_TEST

START_TEST(outcome_ladder)
{
	struct pg_ab_summary s;

	make_summary(&s, false);
	/* a regression outranks failed blocks, as in the gate */
	pg_strv_push(&s.errors, "block 3 (head): serving_a_qps_1: error: died");
	ck_assert_int_eq(pg_gate_exit_code((enum pg_outcome)pg_ab_outcome(&s), true), 1);
	for (size_t i = 0; i < s.n_metrics * s.points.n; i++)
		if (s.d.points[i].verdict == PG_AB_REGRESSED)
			s.d.points[i].verdict = PG_AB_INCONCLUSIVE;
	for (size_t j = 0; j < s.n_metrics; j++)
		if (s.d.whole[j].verdict == PG_AB_REGRESSED)
			s.d.whole[j].verdict = PG_AB_INCONCLUSIVE;
	s.d.counts[PG_AB_INCONCLUSIVE] += s.d.counts[PG_AB_REGRESSED];
	s.d.counts[PG_AB_REGRESSED] = 0;
	ck_assert_int_eq(pg_gate_exit_code((enum pg_outcome)pg_ab_outcome(&s), true), 3);
	/* inconclusive alone is a warning: exit 0 */
	pg_strv_release(&s.errors);
	ck_assert_int_eq(pg_ab_outcome(&s), PG_OUTCOME_WARN);
	ck_assert_int_eq(pg_gate_exit_code((enum pg_outcome)pg_ab_outcome(&s), true), 0);
	pg_ab_summary_release(&s);
}
END_TEST

static Suite *ab_suite(void)
{
	Suite *s = suite_create("ab");
	TCase *tc = tcase_create("decision");

	tcase_add_test(tc, block_order_is_balanced);
	tcase_add_test(tc, t_quantile_inverts_the_tail);
	tcase_add_test(tc, paired_interval_of_one_point);
	tcase_add_test(tc, a_slow_session_is_not_a_regression);
	tcase_add_test(tc, one_point_stands_out_of_its_sessions);
	tcase_add_test(tc, a_client_bound_block_never_dominates_the_change);
	tcase_add_test(tc, the_budget_is_split_over_looks_and_hypotheses);
	tcase_add_test(tc, stopping_rule);
	tcase_add_test(tc, improvements_and_missing_cells);
	tcase_add_test(tc, equivalence_is_two_one_sided_tests);
	tcase_add_test(tc, a_clear_row_stays_decided);
	tcase_add_test(tc, pairs_that_would_close_a_row);
	suite_add_tcase(s, tc);
	tc = tcase_create("render");
	tcase_add_test(tc, comparison_golden);
	tcase_add_test(tc, outcome_ladder);
	tcase_add_test(tc, inconclusive_names_what_would_close_it);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(ab_suite());
}
