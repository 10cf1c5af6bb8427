#include "core/rng.h"

#include <math.h>

uint64_t pg_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void pg_rng_seed(struct pg_rng *r, uint64_t seed)
{
	uint64_t sm = seed;

	for (int i = 0; i < 4; i++)
		r->s[i] = pg_splitmix64(&sm);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t pg_rng_next(struct pg_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double pg_rng_uniform(struct pg_rng *r)
{
	return (double)(pg_rng_next(r) >> 11) * 0x1.0p-53;
}

long pg_rng_range(struct pg_rng *r, long lo, long hi)
{
	uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
	uint64_t limit, x;

	if (hi <= lo)
		return lo;
	/* Reject the top partial bucket so every value is equally likely. */
	limit = UINT64_MAX - UINT64_MAX % span;
	do
		x = pg_rng_next(r);
	while (x >= limit);
	return (long)((uint64_t)lo + x % span);
}

double pg_rng_normal(struct pg_rng *r)
{
	double u, v, s;

	do {
		u = 2.0 * pg_rng_uniform(r) - 1.0;
		v = 2.0 * pg_rng_uniform(r) - 1.0;
		s = u * u + v * v;
	} while (s >= 1.0 || s == 0.0);
	/* The polar method yields two normals; the second is dropped to keep
	 * the generator state the only state. */
	return u * sqrt(-2.0 * log(s) / s);
}

double pg_rng_exponential(struct pg_rng *r)
{
	/* 1 - U is in (0, 1], so the log is finite. */
	return -log(1.0 - pg_rng_uniform(r));
}

double pg_rng_gamma(struct pg_rng *r, double shape, double scale)
{
	double d, c, x, v, u;

	if (shape == 1.0)
		return pg_rng_exponential(r) * scale;
	if (shape < 1.0) {
		/* Gamma(a) = Gamma(a + 1) * U^(1/a); U in (0, 1]. */
		u = 1.0 - pg_rng_uniform(r);
		return pg_rng_gamma(r, shape + 1.0, scale) * pow(u, 1.0 / shape);
	}
	d = shape - 1.0 / 3.0;
	c = 1.0 / sqrt(9.0 * d);
	for (;;) {
		do {
			x = pg_rng_normal(r);
			v = 1.0 + c * x;
		} while (v <= 0.0);
		v = v * v * v;
		u = pg_rng_uniform(r);
		if (u < 1.0 - 0.0331 * (x * x) * (x * x))
			return d * v * scale;
		if (u > 0.0 && log(u) < 0.5 * x * x + d * (1.0 - v + log(v)))
			return d * v * scale;
	}
}

void pg_rng_shuffle(struct pg_rng *r, size_t *idx, size_t n)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)pg_rng_range(r, 0, (long)(i - 1));
		size_t tmp = idx[i - 1];

		idx[i - 1] = idx[j];
		idx[j] = tmp;
	}
}
