#ifndef PERFGATE_BASE_RNG_H
#define PERFGATE_BASE_RNG_H

#include <stddef.h>
#include <stdint.h>

/*
 * A small, well-known seeded generator: xoshiro256** (Blackman & Vigna),
 * its state filled from the seed by splitmix64 as the authors recommend.
 * What perfgate draws at random beyond vLLM's own streams (random-dataset
 * lengths and offsets, mock-server faults and timing) comes from one of
 * these, so a seed reproduces a run's workload bit for bit on any machine.
 * The arrival gaps and the file datasets' shuffles draw from vLLM's own
 * streams instead (base/pyrand.h).
 */
struct pg_rng {
	uint64_t s[4];
};

/* One splitmix64 step: advances *state, returns the next output. */
uint64_t pg_splitmix64(uint64_t *state);

void pg_rng_seed(struct pg_rng *r, uint64_t seed);
uint64_t pg_rng_next(struct pg_rng *r);
/* Uniform in [0, 1) with 53 random bits. */
double pg_rng_uniform(struct pg_rng *r);
/* Uniform integer in [lo, hi] (inclusive), without modulo bias. */
long pg_rng_range(struct pg_rng *r, long lo, long hi);
/* Standard normal (Marsaglia's polar method). */
double pg_rng_normal(struct pg_rng *r);

#endif
