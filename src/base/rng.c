#include "base/rng.h"

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
