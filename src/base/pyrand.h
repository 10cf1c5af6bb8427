#ifndef PERFGATE_BASE_PYRAND_H
#define PERFGATE_BASE_PYRAND_H

/*
 * The random streams vllm bench serve draws its workload from, reproduced
 * bit for bit, so that a perfgate seed sends the same requests at the same
 * offsets as the same vLLM --seed:
 *  - numpy's legacy global generator, which get_request draws the arrival
 *    gaps from after np.random.seed(seed): MT19937 seeded by init_genrand,
 *    53-bit doubles, the polar Box-Muller normal with its cached second
 *    value, and legacy_standard_gamma;
 *  - Python's random module, which the datasets shuffle and oversample
 *    with after random.seed(seed): the same MT19937 seeded by
 *    init_by_array, random.shuffle and random.choices.
 * tests/py/test_vllm_random.py checks the draws against numpy and Python.
 * Everything else perfgate draws (random prompts, mock-server faults)
 * comes from base/rng.h.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pg_mt {
	uint32_t state[624];
	int pos;
	bool has_gauss;
	double gauss;
};

/* np.random.seed(seed): numpy refuses seeds above 2^32-1; perfgate uses
 * their low 32 bits. */
void pg_mt_seed_numpy(struct pg_mt *m, uint64_t seed);
/* random.seed(seed) for a non-negative integer. */
void pg_mt_seed_python(struct pg_mt *m, uint64_t seed);

uint32_t pg_mt_next(struct pg_mt *m);
/* random.random() and numpy's legacy random_sample(): [0, 1), 53 bits. */
double pg_mt_double(struct pg_mt *m);

/* np.random.gamma(shape, scale) of the legacy generator; shape, scale > 0. */
double pg_np_gamma(struct pg_mt *m, double shape, double scale);

/* random.shuffle over an index array. */
void pg_py_shuffle(struct pg_mt *m, size_t *idx, size_t n);
/* One pick of random.choices(population of n), n > 0: floor(random() * n). */
size_t pg_py_choice(struct pg_mt *m, size_t n);

#endif
