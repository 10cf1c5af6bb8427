#include "results/tails.h"

#include "base/stats.h"

#include <math.h>

/*
 * The continued fraction converges in O(sqrt(max(a, b))) terms when x is
 * on the side of the mean that pg_tails_betai picks (Numerical Recipes,
 * 2nd ed., §6.4): 100,000 terms cover a and b up to about 10^10, far more
 * samples than any run takes.
 */
#define BETACF_MAX_TERMS 100000
#define BETACF_EPS       1e-15
#define BETACF_TINY      1e-300

/* The largest h (or n) searched: beyond it the answer is "never". */
#define H_MAX 1000000000000L

/* Away from zero, so the next division stays finite (Lentz). */
static double off_zero(double v)
{
	return fabs(v) < BETACF_TINY ? BETACF_TINY : v;
}

/* One term aa of the continued fraction into Lentz's c and d: the factor
 * the fraction's value is multiplied by. */
static double lentz_step(double aa, double *c, double *d)
{
	*d = 1 / off_zero(1 + aa * *d);
	*c = off_zero(1 + aa / *c);
	return *d * *c;
}

/* The continued fraction of I_x(a, b) (NR's betacf), by the modified Lentz
 * method: NAN when it has not converged. */
static double betacf(double a, double b, double x)
{
	double qab = a + b, qap = a + 1, qam = a - 1;
	double c = 1, d = 1 / off_zero(1 - qab * x / qap), h = d;

	for (double m = 1; m <= BETACF_MAX_TERMS; m++) {
		double m2 = 2 * m, del;

		/* the even step d_{2m} */
		h *= lentz_step(m * (b - m) * x / ((qam + m2) * (a + m2)), &c, &d);
		/* the odd step d_{2m+1} */
		del = lentz_step(-(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)), &c, &d);
		h *= del;
		if (fabs(del - 1) < BETACF_EPS)
			return h;
	}
	return NAN;
}

double pg_tails_betai(double a, double b, double x)
{
	double front;

	if (!(a > 0) || !(b > 0) || !(x >= 0 && x <= 1) || !isfinite(a) || !isfinite(b))
		return NAN;
	if (x == 0)
		return 0;
	if (x == 1)
		return 1;
	/* x^a (1 - x)^b / B(a, b), in logs: the powers underflow long before
	 * the product does */
	front = exp(pg_stats_log_gamma(a + b) - pg_stats_log_gamma(a) - pg_stats_log_gamma(b) +
		    a * log(x) + b * log1p(-x));
	/* the fraction converges fast below the mean (a + 1) / (a + b + 2);
	 * above it, use I_x(a, b) = 1 - I_{1-x}(b, a) */
	if (x < (a + 1) / (a + b + 2))
		return front * betacf(a, b, x) / a;
	return 1 - front * betacf(b, a, 1 - x) / b;
}

static bool args_ok(double p, double c)
{
	return p > 0 && p < 1 && c > 0 && c < 1;
}

bool pg_tails_passes(long n, long t, double p, double c)
{
	if (!args_ok(p, c) || t < 0 || t >= n)
		return false;
	/* a NAN (no convergence) is not a pass */
	return pg_tails_betai((double)(n - t), (double)t + 1, p) <= 1 - c;
}

bool pg_tails_fails(long n, long t, double p, double c)
{
	/* P(X >= t) for X ~ Binomial(n, 1 - p) is I_{1-p}(t, n - t + 1) */
	if (!args_ok(p, c) || t <= 0 || t > n)
		return false;
	return pg_tails_betai((double)t, (double)(n - t) + 1, 1 - p) <= 1 - c;
}

long pg_tails_h_min(long t, double p, double c)
{
	long lo = 0, hi = 1; /* I_p(lo, t + 1) > 1 - c is known (lo = 0: I is 1) */

	if (!args_ok(p, c) || t < 0)
		return -1;
	/* I_p(h, t + 1) falls as h grows: double until it passes, then bisect */
	while (!(pg_tails_betai((double)hi, (double)t + 1, p) <= 1 - c)) {
		if (hi > H_MAX / 2)
			return -1;
		lo = hi;
		hi *= 2;
	}
	while (hi - lo > 1) {
		long mid = lo + (hi - lo) / 2;
		if (pg_tails_betai((double)mid, (double)t + 1, p) <= 1 - c)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

long pg_tails_min_n(double p, double c)
{
	long h = pg_tails_h_min(1, p, c);
	return h < 0 ? -1 : h + 1;
}

long pg_tails_rank(long n, double p, double c)
{
	long lo = 1, hi;

	/* n >= h_min(t) + t exactly when I_p(n - t, t + 1) <= 1 - c (I falls
	 * in its first argument), and that holds for every t up to the
	 * answer (I rises with t): bisect on t */
	if (n < 2 || !pg_tails_passes(n, 1, p, c))
		return 0;
	hi = n - 1;
	if (pg_tails_passes(n, hi, p, c))
		return hi;
	while (hi - lo > 1) {
		long mid = lo + (hi - lo) / 2;
		if (pg_tails_passes(n, mid, p, c))
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

double pg_tails_t_quantile(double p, double df)
{
	double lo = 0, hi = 1;

	if (!(p > 0 && p < 1) || !(df > 0))
		return NAN;
	if (p < 0.5)
		return -pg_tails_t_quantile(1 - p, df);
	if (p == 0.5)
		return 0;
	/* the upper tail 1 - p = I_{df/(df+t^2)}(df/2, 1/2) / 2 falls with t:
	 * bracket, then bisect to double precision */
	while (pg_tails_betai(df / 2, 0.5, df / (df + hi * hi)) / 2 > 1 - p && hi < 1e12) {
		lo = hi;
		hi *= 2;
	}
	for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; i++) {
		double mid = (lo + hi) / 2;
		if (pg_tails_betai(df / 2, 0.5, df / (df + mid * mid)) / 2 > 1 - p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

double pg_tails_estimate(const double *sorted, size_t n, double p, double c)
{
	long t = pg_tails_rank((long)n, p, c);

	return t > 0 ? sorted[n - (size_t)t] : NAN;
}
