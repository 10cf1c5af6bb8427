#ifndef PERFGATE_MOCKSERVER_PREFIX_CACHE_H
#define PERFGATE_MOCKSERVER_PREFIX_CACHE_H

#include <stddef.h>
#include <stdint.h>

/*
 * The mock engine's prefix cache (`perfgate mock-server --prefix-cache-blocks
 * N`), as vLLM's automatic prefix caching works at its simplest: a prompt
 * is cut into blocks of PG_PREFIX_BLOCK tokens; block k is named by a hash
 * of every token of blocks 0..k (a chain: a block is only found after the
 * same whole prefix); the cache holds at most N such names and forgets the
 * least recently used one first.
 *
 * A request looks its blocks up in order and stops at the first miss: the
 * blocks found are its cached tokens, never the whole prompt (vLLM
 * recomputes the last token to get logits: at most the whole blocks of
 * prompt_tokens - 1). Then every whole block of its prompt is stored (or
 * refreshed). When a request has sent its whole answer, the blocks its
 * generated tokens complete (the prompt's chain carried on through them)
 * are stored too (pg_prefix_cache_store), as vLLM keeps the KV of what it
 * generated: a chat's next turn, which sends that answer back as text,
 * finds everything up to its own new question cached.
 */
#define PG_PREFIX_BLOCK 16

/* The chained block hashes of a prompt, fed one token id at a time. */
struct pg_prefix_hasher {
	uint64_t h;
	uint32_t in_block;
	uint64_t *blocks; /* one per whole block so far (owned) */
	size_t n, cap;
};

void pg_prefix_hasher_init(struct pg_prefix_hasher *ph);
void pg_prefix_hasher_add(struct pg_prefix_hasher *ph, uint32_t token_id);
void pg_prefix_hasher_release(struct pg_prefix_hasher *ph);

struct pg_prefix_cache;

/* A cache of capacity blocks (>= 1). Never NULL. */
struct pg_prefix_cache *pg_prefix_cache_new(size_t capacity);
void pg_prefix_cache_free(struct pg_prefix_cache *c);

/*
 * The cached tokens of a prompt of prompt_tokens tokens whose whole blocks
 * hash to blocks[0..n), then those blocks stored as the most recently
 * used.
 */
int64_t pg_prefix_cache_lookup(struct pg_prefix_cache *c, const uint64_t *blocks, size_t n,
			       int64_t prompt_tokens);

/* Store blocks[0..n) (a chain's continuation) as the most recently used,
 * counting nothing. */
void pg_prefix_cache_store(struct pg_prefix_cache *c, const uint64_t *blocks, size_t n);

/* Blocks held now. */
size_t pg_prefix_cache_size(const struct pg_prefix_cache *c);

#endif
