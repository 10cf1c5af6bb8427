#include "gate/compare_stats.h"

#include "base/alloc.h"
#include "results/repeats.h"
#include "base/stats.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Above this many pairs the exact distribution costs more than it is worth
 * and the normal approximation is already good. */
#define MWU_EXACT_MAX_PAIRS 2500

double pg_cmpstat_median(const double *x, size_t n)
{
	double *copy, m;

	if (n == 0)
		return NAN;
	if (n == 1)
		return x[0];
	copy = pg_xmalloc(n * sizeof(*copy));
	memcpy(copy, x, n * sizeof(*copy));
	m = pg_median(copy, n); /* sorts its argument: ours stays as it was */
	free(copy);
	return m;
}

double pg_cmpstat_mad(const double *x, size_t n)
{
	double *dev, med, mad;

	if (n == 0)
		return NAN;
	med = pg_cmpstat_median(x, n);
	dev = pg_xmalloc(n * sizeof(*dev));
	for (size_t i = 0; i < n; i++)
		dev[i] = fabs(x[i] - med);
	mad = pg_cmpstat_median(dev, n);
	free(dev);
	return mad;
}

double pg_cmpstat_robust_cv(const double *x, size_t n)
{
	double med;

	if (n < 2)
		return NAN;
	med = pg_cmpstat_median(x, n);
	if (med == 0 || !isfinite(med))
		return NAN;
	return 1.4826 * pg_cmpstat_mad(x, n) / fabs(med);
}

/*
 * Null distribution of U for sample sizes (a, b): P(U = u), u = 0..a*b.
 * Recurrence on the largest of the a + b values: it belongs to the first
 * sample with probability a/(a+b) and then beats all b values of the
 * other, so p(u; a, b) = a/(a+b) p(u-b; a-1, b) + b/(a+b) p(u; a, b-1).
 * Probabilities rather than counts, so nothing overflows. b is the smaller
 * size (the distribution is the same with the sizes swapped), which keeps
 * the two rolling layers at (b+1) x (a*b+1).
 */
static double *mwu_null_pmf(size_t a, size_t b)
{
	size_t width = a * b + 1;
	double *prev, *cur, *pmf;

	if (b > a) {
		size_t t = a;
		a = b;
		b = t;
	}
	prev = pg_xcalloc((b + 1) * width, sizeof(double));
	cur = pg_xcalloc((b + 1) * width, sizeof(double));
	/* i = 0 first-sample values: U is 0 whatever j is */
	for (size_t j = 0; j <= b; j++)
		prev[j * width] = 1;
	for (size_t i = 1; i <= a; i++) {
		memset(cur, 0, (b + 1) * width * sizeof(double));
		cur[0] = 1; /* j = 0: no pairs */
		for (size_t j = 1; j <= b; j++) {
			double pa = (double)i / (double)(i + j), pb = (double)j / (double)(i + j);
			double *row = cur + j * width;
			const double *left = cur + (j - 1) * width; /* (i, j-1) */
			const double *up = prev + j * width;        /* (i-1, j) */
			size_t umax = i * j;
			for (size_t u = 0; u <= umax; u++)
				row[u] = pb * left[u] + (u >= j ? pa * up[u - j] : 0);
		}
		double *t = prev;
		prev = cur;
		cur = t;
	}
	pmf = pg_xmalloc(width * sizeof(double));
	memcpy(pmf, prev + b * width, width * sizeof(double));
	free(prev);
	free(cur);
	return pmf;
}

double pg_cmpstat_mwu_greater(const double *x, size_t nx, const double *y, size_t ny, double *u_out)
{
	double u = 0, p;
	size_t n = nx + ny;
	bool ties = false;

	if (nx == 0 || ny == 0)
		return NAN;
	for (size_t i = 0; i < nx; i++)
		for (size_t j = 0; j < ny; j++) {
			if (x[i] > y[j])
				u += 1;
			else if (x[i] == y[j]) {
				u += 0.5;
				ties = true;
			}
		}
	if (u_out)
		*u_out = u;

	if (nx * ny <= MWU_EXACT_MAX_PAIRS) {
		/* With ties U may be a half-integer; rounding it down keeps the
		 * p-value on the conservative side. */
		size_t k = (size_t)floor(u);
		double *pmf = mwu_null_pmf(nx, ny);
		p = 0;
		for (size_t v = nx * ny + 1; v-- > k;)
			p += pmf[v];
		free(pmf);
		return p > 1 ? 1 : p;
	}

	/* Normal approximation with the tie correction of the variance. */
	double tie_term = 0;
	if (ties) {
		double *all = pg_xmalloc(n * sizeof(double));
		memcpy(all, x, nx * sizeof(double));
		memcpy(all + nx, y, ny * sizeof(double));
		pg_stats_sort(all, n);
		for (size_t i = 0; i < n;) {
			size_t j = i;
			while (j < n && all[j] == all[i])
				j++;
			double t = (double)(j - i);
			tie_term += t * t * t - t;
			i = j;
		}
		free(all);
	}
	double mean = (double)nx * (double)ny / 2;
	double var = (double)nx * (double)ny / 12 *
		     ((double)(n + 1) - tie_term / ((double)n * (double)(n - 1)));
	if (var <= 0)
		return 1;
	double z = (u - mean - 0.5) / sqrt(var);
	return 0.5 * erfc(z / sqrt(2));
}

double pg_cmpstat_mwu_min_p(size_t nx, size_t ny)
{
	/* 1 / C(nx+ny, nx), computed in logs */
	double l = lgamma((double)(nx + ny + 1)) - lgamma((double)(nx + 1)) -
		   lgamma((double)(ny + 1));
	return exp(-l);
}

void pg_cmpstat_wilson(size_t k, size_t n, double z, double *lo, double *hi)
{
	double p, z2, denom, centre, half;

	if (n == 0) {
		*lo = 0;
		*hi = 1;
		return;
	}
	p = (double)k / (double)n;
	z2 = z * z;
	denom = 1 + z2 / (double)n;
	centre = (p + z2 / (2 * (double)n)) / denom;
	half = z * sqrt(p * (1 - p) / (double)n + z2 / (4 * (double)n * (double)n)) / denom;
	*lo = centre - half < 0 ? 0 : centre - half;
	*hi = centre + half > 1 ? 1 : centre + half;
}
