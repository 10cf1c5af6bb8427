#include "gate/compare_stats.h"

#include "base/alloc.h"
#include "results/repeats.h"
#include "base/stats.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
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
	double l = pg_stats_log_gamma((double)(nx + ny + 1)) -
		   pg_stats_log_gamma((double)(nx + 1)) - pg_stats_log_gamma((double)(ny + 1));
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

/* ------------------------------------------------------------------ */
/* The step decision and change points                                */

static void swap_d(double *a, double *b)
{
	double t = *a;
	*a = *b;
	*b = t;
}

/* The two selections' pivot: the median of x[lo], x[mid] and x[hi],
 * moved to x[hi]. */
static double pivot_to_hi(double *x, size_t lo, size_t hi)
{
	size_t mid = lo + (hi - lo) / 2;

	if (x[mid] < x[lo])
		swap_d(&x[mid], &x[lo]);
	if (x[hi] < x[lo])
		swap_d(&x[hi], &x[lo]);
	if (x[mid] < x[hi])
		swap_d(&x[mid], &x[hi]);
	return x[hi];
}

/* After a partition of [*lo, *hi] that left the values below the pivot
 * (at x[*hi]) in x[*lo..store): the pivot moved to its place, x[store];
 * true when that is the k-th, else [*lo, *hi] narrowed to the side the
 * k-th is on. */
static bool pivot_placed(double *x, size_t store, size_t k, size_t *lo, size_t *hi)
{
	swap_d(&x[store], &x[*hi]);
	if (store == k)
		return true;
	if (k < store)
		*hi = store - 1;
	else
		*lo = store + 1;
	return false;
}

/* The k-th smallest of x[0..n) (0-based), reordering x so that it sits at
 * x[k] with nothing larger before it: quickselect, Lomuto's partition
 * around a median-of-three pivot. */
static double select_kth(double *x, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (lo < hi) {
		size_t store = lo;
		double pivot = pivot_to_hi(x, lo, hi);

		for (size_t i = lo; i < hi; i++)
			if (x[i] < pivot)
				swap_d(&x[i], &x[store++]);
		if (pivot_placed(x, store, k, &lo, &hi))
			return x[k];
	}
	return x[k];
}

/* The same selection, faster: Lomuto's partition without a branch on the
 * comparison (each element is swapped with the first one not below the
 * pivot; the count of smaller ones moves on by the comparison's result),
 * and short ranges finished by insertion. The k-th smallest is one value,
 * whichever selection finds it, but for the sign of a zero: with -0 and
 * +0 both present, which one lands at k depends on the moves, so callers
 * give such input to select_kth (median_nonan). */
/* Below this many, insertion is faster than another partition. */
#define SELECT_BY_INSERTION 8

static double select_kth_fast(double *x, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (hi - lo > SELECT_BY_INSERTION) {
		size_t store = lo;
		double pivot = pivot_to_hi(x, lo, hi);

		for (size_t i = lo; i < hi; i++) {
			double t = x[i];
			x[i] = x[store];
			x[store] = t;
			store += t < pivot;
		}
		if (pivot_placed(x, store, k, &lo, &hi))
			return x[k];
	}
	for (size_t i = lo + 1; i <= hi; i++) {
		double t = x[i];
		size_t j = i;
		for (; j > lo && x[j - 1] > t; j--)
			x[j] = x[j - 1];
		x[j] = t;
	}
	return x[k];
}

/* Is x a negative zero? (Without a branch: asked of every value.) */
static bool neg_zero(double x)
{
	uint64_t u;

	memcpy(&u, &x, sizeof(u));
	return u == UINT64_C(0x8000000000000000);
}

/* The median of x[0..k), no NAN among them; x is reordered. nz: some
 * value may be -0 (then the selection is select_kth's, to the sign of a
 * zero). */
static double median_nonan(double *x, size_t k, bool nz)
{
	double hi;

	if (!k)
		return NAN;
	hi = nz ? select_kth(x, k, k / 2) : select_kth_fast(x, k, k / 2);
	if (k % 2)
		return hi;
	/* the largest of the lower half: after selection it lies in x[0..k/2) */
	{
		double lo = x[0];
		for (size_t i = 1; i < k / 2; i++)
			if (x[i] > lo)
				lo = x[i];
		return (lo + hi) / 2;
	}
}

double pg_cmpstat_median_inplace(double *x, size_t n)
{
	size_t k = 0;
	bool nz = false;

	for (size_t i = 0; i < n; i++) {
		double v = x[i];
		x[k] = v;
		k += !isnan(v);
		nz |= neg_zero(v);
	}
	return median_nonan(x, k, nz);
}

double pg_cmpstat_normal_sf(double z)
{
	return 0.5 * erfc(z / sqrt(2));
}

/* Continued fraction of the incomplete beta function (modified Lentz). */
static double beta_cf(double a, double b, double x)
{
	const double tiny = 1e-300, eps = 1e-15;
	double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d = 1 - qab * x / qap, h;

	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (int m = 1; m <= 300; m++) {
		double m2 = 2.0 * m, aa = m * (b - m) * x / ((qam + m2) * (a + m2)), del;
		d = 1 + aa * d;
		d = fabs(d) < tiny ? tiny : d;
		c = 1 + aa / c;
		c = fabs(c) < tiny ? tiny : c;
		d = 1 / d;
		h *= d * c;
		aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
		d = 1 + aa * d;
		d = fabs(d) < tiny ? tiny : d;
		c = 1 + aa / c;
		c = fabs(c) < tiny ? tiny : c;
		d = 1 / d;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < eps)
			break;
	}
	return h;
}

/* The regularized incomplete beta function I_x(a, b). */
static double inc_beta(double a, double b, double x)
{
	double front;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	front = exp(pg_stats_log_gamma(a + b) - pg_stats_log_gamma(a) - pg_stats_log_gamma(b) +
		    a * log(x) + b * log1p(-x));
	if (x < (a + 1) / (a + b + 2))
		return front * beta_cf(a, b, x) / a;
	return 1 - front * beta_cf(b, a, 1 - x) / b;
}

double pg_cmpstat_t_sf(double t, double df)
{
	double tail;

	if (isnan(t) || isnan(df) || df <= 0)
		return NAN;
	if (isinf(df))
		return pg_cmpstat_normal_sf(t);
	if (isinf(t))
		return t > 0 ? 0 : 1;
	tail = 0.5 * inc_beta(df / 2, 0.5, df / (df + t * t));
	return t > 0 ? tail : 1 - tail;
}

/* Student's t density at t (the normal's for an infinite df). */
static double t_pdf(double t, double df)
{
	if (isinf(df))
		return exp(-t * t / 2) / sqrt(2 * M_PI);
	return exp(pg_stats_log_gamma((df + 1) / 2) - pg_stats_log_gamma(df / 2) -
		   0.5 * log(df * M_PI) - (df + 1) / 2 * log1p(t * t / df));
}

double pg_cmpstat_t_quantile(double p, double df)
{
	double lo = 0, hi = 1, x;

	if (!(p > 0 && p < 1) || isnan(df) || df <= 0)
		return NAN;
	if (p > 0.5)
		return -pg_cmpstat_t_quantile(1 - p, df);
	if (p == 0.5)
		return 0;
	/* the upper tail falls with t: bracket, then Newton's steps kept
	 * inside the bracket (halving it when a step would leave it), to a
	 * double's resolution: a few tail evaluations where bisection took
	 * a hundred (the gate asks for thousands of quantiles a step) */
	while (pg_cmpstat_t_sf(hi, df) > p && hi < 1e18)
		hi *= 2;
	if (pg_cmpstat_t_sf(hi, df) > p)
		return NAN; /* beyond 1e18: no quantile worth drawing */
	x = (lo + hi) / 2;
	for (int i = 0; i < 200 && hi - lo > 1e-15 * hi; i++) {
		double f = pg_cmpstat_t_sf(x, df) - p, d = t_pdf(x, df), next;
		if (f > 0)
			lo = x;
		else if (f < 0)
			hi = x;
		else
			return x;
		next = d > 0 ? x + f / d : NAN;
		if (!(next > lo && next < hi) || fabs(next - x) > (hi - lo) / 2)
			next = (lo + hi) / 2;
		if (fabs(next - x) <= 1e-15 * fabs(x))
			return next;
		x = next;
	}
	return x;
}

bool pg_cmpstat_t_interval(double e, double sd, double df, double level, double *lo, double *hi)
{
	double q = pg_cmpstat_t_quantile((1 - level) / 2, df);

	*lo = *hi = NAN;
	if (!isfinite(e) || !(sd > 0) || !isfinite(sd) || !isfinite(q))
		return false;
	*lo = e - q * sd;
	*hi = e + q * sd;
	return true;
}

/* E[min(Z^2, c^2)] for a standard normal Z: what the cut-off root mean
 * square of normal data estimates, as a share of the variance. */
static double clipped_second_moment(double c)
{
	double tail = 2 * pg_cmpstat_normal_sf(c), dens = exp(-c * c / 2) / sqrt(2 * M_PI);
	return 1 - tail - 2 * c * dens + c * c * tail;
}

#define ROBUST_SD_CUT 2.5

/* pg_cmpstat_robust_sd from the distances to the centre, d[0..k) (no
 * NAN), and a copy of them that it reorders; clipped is
 * clipped_second_moment(ROBUST_SD_CUT) (a caller that asks many times
 * computes it once). */
static double robust_sd_dist(const double *d, double *copy, size_t k, double clipped)
{
	double mad, cut, ss = 0;

	if (k < 2)
		return NAN;
	mad = 1.4826 * median_nonan(copy, k, false); /* distances: no -0 */
	cut = ROBUST_SD_CUT * mad;
	for (size_t i = 0; i < k; i++) {
		double v = mad > 0 && d[i] > cut ? cut : d[i];
		ss += v * v;
	}
	/* with a MAD of 0 (more than half the values on the centre) nothing
	 * is cut: the plain root mean square */
	return sqrt(ss / (double)k / (mad > 0 ? clipped : 1));
}

/* pg_cmpstat_robust_sd with its buffers (n each) given. */
static double robust_sd_buffers(const double *x, size_t n, double centre, double *d, double *copy)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (!isnan(x[i]))
			d[k++] = fabs(x[i] - centre);
	if (k < 2)
		return NAN;
	memcpy(copy, d, k * sizeof(double));
	return robust_sd_dist(d, copy, k, clipped_second_moment(ROBUST_SD_CUT));
}

double pg_cmpstat_robust_sd(const double *x, size_t n, double centre)
{
	double *d = pg_xmalloc((n ? n : 1) * sizeof(double));
	double *copy = pg_xmalloc((n ? n : 1) * sizeof(double));
	double sd = robust_sd_buffers(x, n, centre, d, copy);

	free(d);
	free(copy);
	return sd;
}

struct ranked {
	double p;
	size_t i;
};

static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->p != y->p)
		return x->p < y->p ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

void pg_cmpstat_holm(const double *p, size_t n, double *adj)
{
	struct ranked *r = pg_xmalloc((n ? n : 1) * sizeof(*r));
	size_t m = 0;
	double running = 0;

	for (size_t i = 0; i < n; i++) {
		adj[i] = NAN;
		if (!isnan(p[i]))
			r[m++] = (struct ranked){ p[i], i };
	}
	qsort(r, m, sizeof(*r), cmp_ranked);
	for (size_t k = 0; k < m; k++) {
		double a = fmin(1, (double)(m - k) * r[k].p);
		running = fmax(running, a);
		adj[r[k].i] = running;
	}
	free(r);
}

/* The median of a[i] - b[i], i < n (a NAN in either leaves it out),
 * written straight into buf without the NANs. */
static double median_of_differences(const double *a, const double *b, size_t n, double *buf)
{
	size_t k = 0;
	bool nz = false;

	for (size_t i = 0; i < n; i++) {
		double v = a[i] - b[i];
		buf[k] = v;
		k += !isnan(v);
		nz |= neg_zero(v);
	}
	return median_nonan(buf, k, nz);
}

/* The median polish of the table by rows (y) and by columns (yt): a
 * column's values side by side, not a row apart (10,000 points: each
 * value of a column in a cache line of its own). */
static void polish(const double *y, const double *yt, size_t rows, size_t cols, double *row,
		   double *col)
{
	size_t most = rows > cols ? rows : cols;
	double *buf = pg_xmalloc((most ? most : 1) * sizeof(double));

	for (size_t r = 0; r < rows; r++)
		row[r] = 0;
	for (int it = 0; it < 20; it++) {
		double change = 0, centre;

		for (size_t c = 0; c < cols; c++) {
			double old = col[c];
			col[c] = median_of_differences(yt + c * rows, row, rows, buf);
			if (it && !isnan(col[c]))
				change = fmax(change, fabs(col[c] - old));
		}
		for (size_t r = 0; r < rows; r++)
			row[r] = median_of_differences(y + r * cols, col, cols, buf);
		/* the rows' median is the common level: it belongs to the columns */
		memcpy(buf, row, rows * sizeof(double));
		centre = pg_cmpstat_median_inplace(buf, rows);
		if (isnan(centre))
			break;
		for (size_t r = 0; r < rows; r++)
			row[r] -= centre;
		for (size_t c = 0; c < cols; c++)
			col[c] += centre;
		if (it && change < 1e-12)
			break;
	}
	free(buf);
}

void pg_cmpstat_median_polish(const double *y, size_t rows, size_t cols, double *row, double *col)
{
	double *yt = pg_xmalloc((rows && cols ? rows * cols : 1) * sizeof(double));

	for (size_t r = 0; r < rows; r++)
		for (size_t c = 0; c < cols; c++)
			yt[c * rows + r] = y[r * cols + c];
	polish(y, yt, rows, cols, row, col);
	free(yt);
}

void pg_cmpstat_median_polish_cols(const double *yt, size_t rows, size_t cols, double *row,
				   double *col)
{
	double *y = pg_xmalloc((rows && cols ? rows * cols : 1) * sizeof(double));

	for (size_t c = 0; c < cols; c++)
		for (size_t r = 0; r < rows; r++)
			y[r * cols + c] = yt[c * rows + r];
	polish(y, yt, rows, cols, row, col);
	free(y);
}

struct cp_ctx {
	const double *x;
	const struct pg_cp_opts *o;
	double *sorted, *pre, *suf, *d, *copy; /* n each; pre, suf n + 1 */
	double clipped;                        /* clipped_second_moment(ROBUST_SD_CUT) */
	size_t *out, max, n_out;
};

/*
 * Insert x into sorted s[0..*k) (NAN left out, as the medians leave it)
 * and return the median of what s holds: the same element, or the same
 * two averaged, that pg_cmpstat_median_inplace selects.
 */
static double insert_median(double *s, size_t *k, double x)
{
	if (!isnan(x)) {
		size_t i = *k;
		while (i > 0 && s[i - 1] > x) {
			s[i] = s[i - 1];
			i--;
		}
		s[i] = x;
		(*k)++;
	}
	if (!*k)
		return NAN;
	if (*k % 2)
		return s[*k / 2];
	return (s[*k / 2 - 1] + s[*k / 2]) / 2;
}

/*
 * Whether any split of x[lo..hi) moves the median by min_shift (the
 * sweeps' pre and suf filled). segment() keeps the best split only if its
 * shift reaches min_shift: when none does, which is most series (a
 * change point is rare), the best is not needed, nor the spread of every
 * split (a selection each) that finding it takes.
 */
static bool some_shift_reaches(const struct cp_ctx *cx, size_t lo, size_t hi)
{
	size_t m = cx->o->min_seg;

	if (!(cx->o->min_shift > 0))
		return true;
	for (size_t tau = lo + m; tau + m <= hi; tau++)
		if (fabs(cx->suf[tau - lo] - cx->pre[tau - lo]) >= cx->o->min_shift)
			return true;
	return false;
}

/*
 * The best split of x[lo..hi), its statistic and its sides' medians. The
 * sides' medians of every split come from two sweeps (x[lo..tau) growing,
 * x[tau..hi) growing backwards), not a selection per split.
 */
static size_t best_split(struct cp_ctx *cx, size_t lo, size_t hi, double *t_out, double *shift,
			 double *df_out)
{
	size_t best = 0, n = hi - lo, m = cx->o->min_seg, k = 0;
	double best_t = -1;

	for (size_t i = lo; i < hi; i++)
		cx->pre[i + 1 - lo] = insert_median(cx->sorted, &k, cx->x[i]);
	k = 0;
	for (size_t i = hi; i-- > lo;)
		cx->suf[i - lo] = insert_median(cx->sorted, &k, cx->x[i]);
	*t_out = best_t;
	*shift = 0;
	*df_out = 0.9 * (double)(n - 2);
	if (!some_shift_reaches(cx, lo, hi))
		return lo + m;
	for (size_t tau = lo + m; tau + m <= hi; tau++) {
		double m1 = cx->pre[tau - lo], m2 = cx->suf[tau - lo], s, t,
		       n1 = (double)(tau - lo), n2 = (double)(hi - tau);
		size_t kd = 0;
		/* robust_sd_buffers(x - (m1 before tau, m2 from it), 0), without
		 * writing the differences out first */
		for (size_t i = lo; i < hi; i++) {
			double v = cx->x[i] - (i < tau ? m1 : m2), a = fabs(v);
			cx->d[kd] = a;
			cx->copy[kd] = a;
			kd += !isnan(v);
		}
		s = robust_sd_dist(cx->d, cx->copy, kd, cx->clipped);
		if (!(s > 0))
			s = 1e-300;
		/* a median's variance is about pi/2 times a mean's */
		t = fabs(m2 - m1) / (s * sqrt(M_PI / 2 * (1 / n1 + 1 / n2)));
		if (t > best_t) {
			best_t = t;
			best = tau;
			*shift = m2 - m1;
		}
	}
	*t_out = best_t;
	return best;
}

static void segment(struct cp_ctx *cx, size_t lo, size_t hi)
{
	size_t m = cx->o->min_seg, tau, candidates;
	double t, shift = 0, df, p;

	if (hi - lo < 2 * m || cx->n_out >= cx->max)
		return;
	tau = best_split(cx, lo, hi, &t, &shift, &df);
	candidates = hi - lo - 2 * m + 1;
	p = 2 * pg_cmpstat_t_sf(t, df) * (double)candidates;
	if (!(p < cx->o->p_max) || fabs(shift) < cx->o->min_shift)
		return;
	cx->out[cx->n_out++] = tau;
	segment(cx, lo, tau);
	segment(cx, tau, hi);
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

size_t pg_cmpstat_change_points(const double *x, size_t n, const struct pg_cp_opts *o, size_t *out,
				size_t max)
{
	static const struct pg_cp_opts defaults = { 3, 0.001, 0 };
	struct pg_cp_opts opts = o ? *o : defaults;
	struct cp_ctx cx = { .x = x, .o = &opts, .out = out, .max = max };

	if (opts.min_seg < 2)
		opts.min_seg = 2;
	if (!(opts.p_max > 0))
		opts.p_max = defaults.p_max;
	cx.clipped = clipped_second_moment(ROBUST_SD_CUT);
	cx.sorted = pg_xmalloc((n ? n : 1) * sizeof(double));
	cx.pre = pg_xmalloc((n + 1) * sizeof(double));
	cx.suf = pg_xmalloc((n + 1) * sizeof(double));
	cx.d = pg_xmalloc((n ? n : 1) * sizeof(double));
	cx.copy = pg_xmalloc((n ? n : 1) * sizeof(double));
	segment(&cx, 0, n);
	free(cx.sorted);
	free(cx.pre);
	free(cx.suf);
	free(cx.d);
	free(cx.copy);
	qsort(out, cx.n_out, sizeof(*out), cmp_size);
	return cx.n_out;
}

double pg_cmpstat_max_equicorr_sf(double z, size_t m, double rho)
{
	/* given the common factor w, the m are independent: integrate the
	 * tail of their maximum over w's density (Simpson, |w| <= 8) */
	const int steps = 400;
	const double lo = -8, h = 16.0 / steps;
	double r = fmax(0, fmin(rho, 0.9999)), a = sqrt(r), b = sqrt(1 - r), sum = 0;

	if (m <= 1 || r >= 0.9999)
		return pg_cmpstat_normal_sf(z);
	for (int i = 0; i <= steps; i++) {
		double w = lo + h * i, x = (z - a * w) / b;
		double tail = -expm1((double)m * log1p(-pg_cmpstat_normal_sf(x)));
		double f = exp(-w * w / 2) / sqrt(2 * M_PI) * tail;
		sum += f * (i == 0 || i == steps ? 1 : i % 2 ? 4 : 2);
	}
	return fmin(1, fmax(pg_cmpstat_normal_sf(z), sum * h / 3));
}

/* Student t's share beyond 3 of its own robust sds (pg_cmpstat_robust_sd,
 * cut at 2.5 MADs), and that sd, by degrees of freedom: measured on 2
 * million draws each (numpy, seed 1). */
static const struct {
	double nu, scale, share;
} t_tails[] = {
	{ 1, 1.9788, 0.10608 },   { 1.5, 1.6166, 0.06823 }, { 2, 1.4531, 0.04873 },
	{ 2.5, 1.3534, 0.03764 }, { 3, 1.2920, 0.03040 },   { 4, 1.2160, 0.02181 },
	{ 5, 1.1699, 0.01693 },   { 7, 1.1206, 0.01222 },   { 10, 1.0845, 0.00877 },
	{ 15, 1.0544, 0.00641 },  { 30, 1.0260, 0.00442 },
};
#define NORMAL_SHARE_BEYOND_3 0.00273

void pg_cmpstat_tail_shape(size_t beyond, size_t n, double prior, double *nu, double *scale)
{
	size_t k = sizeof(t_tails) / sizeof(t_tails[0]);
	double q = ((double)beyond + prior * NORMAL_SHARE_BEYOND_3) / ((double)n + prior);

	*nu = INFINITY;
	*scale = 1;
	if (!(q > t_tails[k - 1].share))
		return;
	if (q >= t_tails[0].share) {
		*nu = t_tails[0].nu;
		*scale = t_tails[0].scale;
		return;
	}
	for (size_t i = 1; i < k; i++)
		if (q >= t_tails[i].share) {
			/* between rows i - 1 and i, linear in log(share) */
			double f = log(q / t_tails[i].share) /
				   log(t_tails[i - 1].share / t_tails[i].share);
			*nu = t_tails[i].nu + f * (t_tails[i - 1].nu - t_tails[i].nu);
			*scale = t_tails[i].scale + f * (t_tails[i - 1].scale - t_tails[i].scale);
			return;
		}
}

/* Sum of |x - median| over x[lo..hi), with buf as scratch. */
static double l1_cost(const double *x, size_t lo, size_t hi, double *buf)
{
	size_t k = 0;
	double med, sum = 0;

	for (size_t i = lo; i < hi; i++)
		if (!isnan(x[i]))
			buf[k++] = x[i];
	if (!k)
		return 0;
	med = pg_cmpstat_median_inplace(buf, k);
	for (size_t i = lo; i < hi; i++)
		if (!isnan(x[i]))
			sum += fabs(x[i] - med);
	return sum;
}

void pg_cmpstat_refine_change_points(const double *x, size_t len, size_t *cps, size_t n,
				     size_t last_min)
{
	double *buf = pg_xmalloc((len ? len : 1) * sizeof(double));

	for (size_t c = 0; c < n; c++) {
		size_t lo = c ? cps[c - 1] : 0, hi = c + 1 < n ? cps[c + 1] : len;
		size_t first = lo + 2, end = hi - (c + 1 < n ? 2 : (last_min ? last_min : 1));
		size_t best = cps[c];
		double best_cost = l1_cost(x, lo, cps[c], buf) + l1_cost(x, cps[c], hi, buf);

		for (size_t at = first; at <= end && end <= hi; at++) {
			double cost = l1_cost(x, lo, at, buf) + l1_cost(x, at, hi, buf);
			if (cost < best_cost - 1e-12) {
				best_cost = cost;
				best = at;
			}
		}
		cps[c] = best;
	}
	free(buf);
}

bool pg_cmpstat_tail_step(const double *x, size_t n, size_t from, size_t tail, double sigmas,
			  double min_shift, double *shift)
{
	size_t before = n >= from + tail ? n - from - tail : 0;
	double *d, level, sd, lo = INFINITY, hi = -INFINITY, pred;
	size_t k = 0;

	if (!tail || before < 3 || n < 2)
		return false;
	d = pg_xmalloc(n * sizeof(double));
	for (size_t i = 1; i < n; i++)
		if (!isnan(x[i]) && !isnan(x[i - 1]))
			d[k++] = x[i] - x[i - 1];
	sd = k >= 3 ? pg_cmpstat_robust_sd(d, k, 0) / M_SQRT2 : NAN;
	k = 0;
	for (size_t i = from; i < n - tail; i++)
		if (!isnan(x[i]))
			d[k++] = x[i];
	level = k >= 3 ? pg_cmpstat_median_inplace(d, k) : NAN;
	pred = sd * sqrt(1 + M_PI / 2 / (double)(k ? k : 1));
	free(d);
	/* sd 0 (a deterministic series) is measured too: any step beyond
	 * min_shift is one */
	if (isnan(level) || isnan(sd))
		return false;
	for (size_t i = n - tail; i < n; i++) {
		if (isnan(x[i]))
			return false;
		lo = fmin(lo, x[i] - level);
		hi = fmax(hi, x[i] - level);
	}
	if (lo > 0 ? lo <= fmax(sigmas * pred, min_shift)
		   : !(hi < 0) || -hi <= fmax(sigmas * pred, min_shift))
		return false;
	{
		double *t = pg_xmalloc(tail * sizeof(double));
		memcpy(t, x + n - tail, tail * sizeof(double));
		*shift = pg_cmpstat_median_inplace(t, tail) - level;
		free(t);
	}
	return true;
}

static void trend(struct pg_trend *out, const double *x, size_t n, double p_max, bool always)
{
	size_t k = 0, n_pairs = 0;
	double *pos = pg_xmalloc((n ? n : 1) * sizeof(double));
	double *val = pg_xmalloc((n ? n : 1) * sizeof(double));
	double *slopes, s = 0, var, intercept, sd, best_sse = INFINITY;

	out->slope = out->p_value = NAN;
	out->start = 0;
	for (size_t i = 0; i < n; i++)
		if (!isnan(x[i])) {
			pos[k] = (double)i;
			val[k++] = x[i];
		}
	if (k < 4)
		goto done;
	/* Mann-Kendall, with the variance corrected for tied values; the
	 * signs are counted in an integer (the same sum, exactly: the loop
	 * vectorises) */
	{
		long signs = 0;
		for (size_t i = 0; i < k; i++) {
			double vi = val[i];
			for (size_t j = i + 1; j < k; j++)
				signs += (val[j] > vi) - (val[j] < vi);
		}
		s = (double)signs;
	}
	var = (double)k * (double)(k - 1) * (2.0 * (double)k + 5) / 18;
	{
		double *sorted = pg_xmalloc(k * sizeof(double));
		memcpy(sorted, val, k * sizeof(double));
		pg_stats_sort(sorted, k);
		for (size_t i = 0; i < k;) {
			size_t j = i;
			while (j < k && sorted[j] == sorted[i])
				j++;
			double t = (double)(j - i);
			var -= t * (t - 1) * (2 * t + 5) / 18;
			i = j;
		}
		free(sorted);
	}
	out->p_value = var > 0 ? 2 * pg_cmpstat_normal_sf((fabs(s) - 1) / sqrt(var)) : 1;
	if (out->p_value > 1)
		out->p_value = 1;
	if (!always && !(out->p_value < p_max))
		goto done;
	/* Theil-Sen */
	slopes = pg_xmalloc(k * (k - 1) / 2 * sizeof(double));
	for (size_t i = 0; i < k; i++)
		for (size_t j = i + 1; j < k; j++)
			slopes[n_pairs++] = (val[j] - val[i]) / (pos[j] - pos[i]);
	out->slope = pg_cmpstat_median_inplace(slopes, n_pairs);
	free(slopes);

	/* where it began: clip wild values to the Theil-Sen line first (a
	 * slow job is not the start of a trend), then fit "flat, then a
	 * line" for every start and keep the best */
	{
		double *r = pg_xmalloc(k * sizeof(double));
		for (size_t i = 0; i < k; i++)
			r[i] = val[i] - out->slope * pos[i];
		{
			double *copy = pg_xmalloc(k * sizeof(double));
			memcpy(copy, r, k * sizeof(double));
			intercept = pg_cmpstat_median_inplace(copy, k);
			free(copy);
		}
		sd = pg_cmpstat_robust_sd(r, k, intercept);
		for (size_t i = 0; i < k; i++) {
			double fit = intercept + out->slope * pos[i], d = val[i] - fit;
			if (sd > 0 && fabs(d) > ROBUST_SD_CUT * sd)
				val[i] = fit + copysign(ROBUST_SD_CUT * sd, d);
		}
		free(r);
	}
	for (size_t h = 0; h + 3 <= k; h++) {
		double mu = 0, mv = 0, suv = 0, suu = 0, b, a, sse = 0;
		for (size_t i = 0; i < k; i++) {
			double u = pos[i] > pos[h] ? pos[i] - pos[h] : 0;
			mu += u;
			mv += val[i];
		}
		mu /= (double)k;
		mv /= (double)k;
		for (size_t i = 0; i < k; i++) {
			double u = (pos[i] > pos[h] ? pos[i] - pos[h] : 0) - mu;
			suv += u * (val[i] - mv);
			suu += u * u;
		}
		b = suu > 0 ? suv / suu : 0;
		a = mv - b * mu;
		for (size_t i = 0; i < k; i++) {
			double u = pos[i] > pos[h] ? pos[i] - pos[h] : 0, e = val[i] - a - b * u;
			sse += e * e;
		}
		if (sse < best_sse - 1e-15) {
			best_sse = sse;
			out->start = (size_t)pos[h];
		}
	}
done:
	free(pos);
	free(val);
}

void pg_cmpstat_trend(struct pg_trend *out, const double *x, size_t n)
{
	trend(out, x, n, 0, true);
}

void pg_cmpstat_trend_below(struct pg_trend *out, const double *x, size_t n, double p_max)
{
	trend(out, x, n, p_max, false);
}
