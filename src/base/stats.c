#include "base/stats.h"

#include "base/alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* numpy/core/src/umath/loops_utils.h.src: pairwise_sum with PW_BLOCKSIZE 128. */
double pg_stats_log_gamma(double x)
{
	int sign;

	return lgamma_r(x, &sign);
}

double pg_stats_sum(const double *a, size_t n)
{
	if (n < 8) {
		/* numpy starts from -0.0 so that an all -0.0 sum stays -0.0 */
		double res = -0.0;
		for (size_t i = 0; i < n; i++)
			res += a[i];
		return res;
	}
	if (n <= 128) {
		double r[8], res;
		size_t i;

		for (i = 0; i < 8; i++)
			r[i] = a[i];
		for (i = 8; i < n - (n % 8); i += 8) {
			r[0] += a[i + 0];
			r[1] += a[i + 1];
			r[2] += a[i + 2];
			r[3] += a[i + 3];
			r[4] += a[i + 4];
			r[5] += a[i + 5];
			r[6] += a[i + 6];
			r[7] += a[i + 7];
		}
		res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
		for (; i < n; i++)
			res += a[i];
		return res;
	}
	size_t n2 = n / 2;
	n2 -= n2 % 8;
	return pg_stats_sum(a, n2) + pg_stats_sum(a + n2, n - n2);
}

double pg_stats_mean(const double *x, size_t n)
{
	return n ? pg_stats_sum(x, n) / (double)n : 0;
}

double pg_stats_std(const double *x, size_t n)
{
	double mean, var, *d;

	if (!n)
		return 0;
	mean = pg_stats_mean(x, n);
	d = pg_xmalloc(n * sizeof(*d));
	for (size_t i = 0; i < n; i++) {
		double dev = x[i] - mean;
		d[i] = dev * dev;
	}
	var = pg_stats_sum(d, n) / (double)n;
	free(d);
	return sqrt(var);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void pg_stats_sort(double *x, size_t n)
{
	if (n > 1)
		qsort(x, n, sizeof(*x), cmp_double);
}

double pg_stats_median_sorted(const double *s, size_t n)
{
	if (!n)
		return 0;
	if (n % 2)
		return s[n / 2];
	/* np.median takes np.mean of the two middle values */
	return (s[n / 2 - 1] + s[n / 2]) / 2.0;
}

/* numpy/lib/function_base.py: _lerp, stable at both ends. */
static double lerp(double a, double b, double t)
{
	double diff = b - a;
	double r = a + diff * t;

	if (t >= 0.5)
		r = b - diff * (1.0 - t);
	if (a == b)
		r = a;
	return r;
}

double pg_stats_percentile_sorted(const double *s, size_t n, double p)
{
	double virt, g;
	size_t lo, hi;

	if (!n)
		return 0;
	virt = (double)(n - 1) * (p / 100.0);
	lo = (size_t)floor(virt);
	if (lo >= n - 1)
		return s[n - 1];
	hi = lo + 1;
	g = virt - (double)lo;
	return lerp(s[lo], s[hi], g);
}

void pg_stats_summary(struct pg_summary *out, const double *x, size_t n, double *sorted_out)
{
	double *s = sorted_out ? sorted_out : pg_xmalloc((n ? n : 1) * sizeof(*s));

	if (n)
		memcpy(s, x, n * sizeof(*s));
	pg_stats_sort(s, n);
	out->mean = pg_stats_mean(x, n);
	out->median = pg_stats_median_sorted(s, n);
	out->std = pg_stats_std(x, n);
	if (!sorted_out)
		free(s);
}
