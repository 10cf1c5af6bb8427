#include "base/pyrand.h"

#include <math.h>

#define MT_N 624
#define MT_M 397

static void init_genrand(struct pg_mt *m, uint32_t s)
{
	m->state[0] = s;
	for (int i = 1; i < MT_N; i++)
		m->state[i] = 1812433253u * (m->state[i - 1] ^ (m->state[i - 1] >> 30)) +
			      (uint32_t)i;
	m->pos = MT_N;
	m->has_gauss = false;
	m->gauss = 0;
}

void pg_mt_seed_numpy(struct pg_mt *m, uint64_t seed)
{
	init_genrand(m, (uint32_t)seed);
}

/* Python's random_seed: the integer's 32-bit words, least significant
 * first ([0] for zero), through MT19937's init_by_array. */
void pg_mt_seed_python(struct pg_mt *m, uint64_t seed)
{
	uint32_t key[2] = { (uint32_t)seed, (uint32_t)(seed >> 32) };
	int key_len = key[1] ? 2 : 1, i = 1, j = 0;
	uint32_t *mt = m->state;

	init_genrand(m, 19650218u);
	for (int k = MT_N > key_len ? MT_N : key_len; k; k--) {
		mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525u)) + key[j] +
			(uint32_t)j;
		i++;
		j++;
		if (i >= MT_N) {
			mt[0] = mt[MT_N - 1];
			i = 1;
		}
		if (j >= key_len)
			j = 0;
	}
	for (int k = MT_N - 1; k; k--) {
		mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941u)) - (uint32_t)i;
		i++;
		if (i >= MT_N) {
			mt[0] = mt[MT_N - 1];
			i = 1;
		}
	}
	mt[0] = 0x80000000u;
}

uint32_t pg_mt_next(struct pg_mt *m)
{
	uint32_t y;

	if (m->pos >= MT_N) {
		for (int k = 0; k < MT_N; k++) {
			y = (m->state[k] & 0x80000000u) | (m->state[(k + 1) % MT_N] & 0x7fffffffu);
			m->state[k] = m->state[(k + MT_M) % MT_N] ^ (y >> 1) ^
				      ((y & 1u) ? 0x9908b0dfu : 0);
		}
		m->pos = 0;
	}
	y = m->state[m->pos++];
	y ^= y >> 11;
	y ^= (y << 7) & 0x9d2c5680u;
	y ^= (y << 15) & 0xefc60000u;
	y ^= y >> 18;
	return y;
}

double pg_mt_double(struct pg_mt *m)
{
	uint32_t a = pg_mt_next(m) >> 5, b = pg_mt_next(m) >> 6;

	return ((double)a * 67108864.0 + (double)b) / 9007199254740992.0;
}

static double legacy_gauss(struct pg_mt *m)
{
	double x1, x2, r2, f;

	if (m->has_gauss) {
		m->has_gauss = false;
		return m->gauss;
	}
	do {
		x1 = 2.0 * pg_mt_double(m) - 1.0;
		x2 = 2.0 * pg_mt_double(m) - 1.0;
		r2 = x1 * x1 + x2 * x2;
	} while (r2 >= 1.0 || r2 == 0.0);
	/* the polar method gives two normals: one now, one cached */
	f = sqrt(-2.0 * log(r2) / r2);
	m->gauss = f * x1;
	m->has_gauss = true;
	return f * x2;
}

static double legacy_exponential(struct pg_mt *m)
{
	return -log(1.0 - pg_mt_double(m));
}

/* numpy's legacy_standard_gamma, branch for branch. */
static double legacy_standard_gamma(struct pg_mt *m, double shape)
{
	if (shape == 1.0)
		return legacy_exponential(m);
	if (shape == 0.0)
		return 0.0;
	if (shape < 1.0) {
		for (;;) {
			double u = pg_mt_double(m), v = legacy_exponential(m), x, y;

			if (u <= 1.0 - shape) {
				x = pow(u, 1.0 / shape);
				if (x <= v)
					return x;
			} else {
				y = -log((1.0 - u) / shape);
				x = pow(1.0 - shape + shape * y, 1.0 / shape);
				if (x <= v + y)
					return x;
			}
		}
	}
	{
		double b = shape - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * b);

		for (;;) {
			double x, v, u;

			do {
				x = legacy_gauss(m);
				v = 1.0 + c * x;
			} while (v <= 0.0);
			v = v * v * v;
			u = pg_mt_double(m);
			if (u < 1.0 - 0.0331 * (x * x) * (x * x))
				return b * v;
			if (log(u) < 0.5 * x * x + b * (1.0 - v + log(v)))
				return b * v;
		}
	}
}

double pg_np_gamma(struct pg_mt *m, double shape, double scale)
{
	return scale * legacy_standard_gamma(m, shape);
}

/* Python's _randbelow_with_getrandbits: k = n.bit_length() bits, drawn
 * again until below n; getrandbits(k <= 32) is the top k bits of one word. */
static size_t randbelow(struct pg_mt *m, size_t n)
{
	int k = 0;
	uint64_t r;

	for (size_t v = n; v; v >>= 1)
		k++;
	if (k <= 32) {
		do
			r = pg_mt_next(m) >> (32 - k);
		while (r >= n);
		return (size_t)r;
	}
	/* getrandbits(k > 32): 32-bit words, least significant first, the
	 * last one shifted down to the remaining bits */
	do {
		uint64_t lo = pg_mt_next(m), hi = pg_mt_next(m) >> (64 - k);
		r = lo | (hi << 32);
	} while (r >= n);
	return (size_t)r;
}

void pg_py_shuffle(struct pg_mt *m, size_t *idx, size_t n)
{
	for (size_t i = n; i-- > 1;) {
		size_t j = randbelow(m, i + 1), tmp = idx[i];

		idx[i] = idx[j];
		idx[j] = tmp;
	}
}

size_t pg_py_choice(struct pg_mt *m, size_t n)
{
	return (size_t)floor(pg_mt_double(m) * (double)n);
}
