#include "mockserver/prefix_cache.h"

#include "base/alloc.h"
#include "mockserver/engine_model.h"

#include <stdlib.h>
#include <string.h>

void pg_prefix_hasher_init(struct pg_prefix_hasher *ph)
{
	memset(ph, 0, sizeof(*ph));
	ph->h = 0x243f6a8885a308d3u;
}

void pg_prefix_hasher_add(struct pg_prefix_hasher *ph, uint32_t token_id)
{
	ph->h = pg_engine_mix64(ph->h ^ ((uint64_t)token_id + 0x9e3779b97f4a7c15u));
	if (++ph->in_block == PG_PREFIX_BLOCK) {
		ph->in_block = 0;
		PG_ARRAY_PUSH(ph->blocks, ph->n, ph->cap, ph->h);
	}
}

void pg_prefix_hasher_release(struct pg_prefix_hasher *ph)
{
	free(ph->blocks);
	memset(ph, 0, sizeof(*ph));
}

/* Nodes live in one array; buckets chain them by index, the LRU list
 * links them both ways (head: most recent). NIL ends every list. */
#define NIL SIZE_MAX

struct node {
	uint64_t key;
	size_t next; /* in its bucket */
	size_t prev_lru, next_lru;
};

struct pg_prefix_cache {
	struct node *nodes;
	size_t n, capacity;
	size_t *buckets;
	size_t mask;
	size_t head, tail;
};

struct pg_prefix_cache *pg_prefix_cache_new(size_t capacity)
{
	struct pg_prefix_cache *c = pg_xcalloc(1, sizeof(*c));
	size_t nb = 16;

	if (capacity < 1)
		capacity = 1;
	while (nb < capacity * 2)
		nb *= 2;
	c->capacity = capacity;
	c->nodes = pg_xcalloc(capacity, sizeof(*c->nodes));
	c->buckets = pg_xmalloc(nb * sizeof(*c->buckets));
	for (size_t i = 0; i < nb; i++)
		c->buckets[i] = NIL;
	c->mask = nb - 1;
	c->head = c->tail = NIL;
	return c;
}

void pg_prefix_cache_free(struct pg_prefix_cache *c)
{
	if (!c)
		return;
	free(c->nodes);
	free(c->buckets);
	free(c);
}

size_t pg_prefix_cache_size(const struct pg_prefix_cache *c)
{
	return c->n;
}

static size_t find(const struct pg_prefix_cache *c, uint64_t key)
{
	for (size_t i = c->buckets[key & c->mask]; i != NIL; i = c->nodes[i].next)
		if (c->nodes[i].key == key)
			return i;
	return NIL;
}

static void lru_unlink(struct pg_prefix_cache *c, size_t i)
{
	struct node *x = &c->nodes[i];

	if (x->prev_lru != NIL)
		c->nodes[x->prev_lru].next_lru = x->next_lru;
	else
		c->head = x->next_lru;
	if (x->next_lru != NIL)
		c->nodes[x->next_lru].prev_lru = x->prev_lru;
	else
		c->tail = x->prev_lru;
}

static void lru_push_front(struct pg_prefix_cache *c, size_t i)
{
	c->nodes[i].prev_lru = NIL;
	c->nodes[i].next_lru = c->head;
	if (c->head != NIL)
		c->nodes[c->head].prev_lru = i;
	c->head = i;
	if (c->tail == NIL)
		c->tail = i;
}

static void bucket_unlink(struct pg_prefix_cache *c, size_t i)
{
	size_t *p = &c->buckets[c->nodes[i].key & c->mask];

	while (*p != i)
		p = &c->nodes[*p].next;
	*p = c->nodes[i].next;
}

static void store(struct pg_prefix_cache *c, uint64_t key)
{
	size_t i = find(c, key);

	if (i != NIL) {
		lru_unlink(c, i);
		lru_push_front(c, i);
		return;
	}
	if (c->n < c->capacity) {
		i = c->n++;
	} else { /* evict the least recently used */
		i = c->tail;
		lru_unlink(c, i);
		bucket_unlink(c, i);
	}
	c->nodes[i].key = key;
	c->nodes[i].next = c->buckets[key & c->mask];
	c->buckets[key & c->mask] = i;
	lru_push_front(c, i);
}

void pg_prefix_cache_store(struct pg_prefix_cache *c, const uint64_t *blocks, size_t n)
{
	for (size_t k = n; k-- > 0;)
		store(c, blocks[k]);
}

int64_t pg_prefix_cache_lookup(struct pg_prefix_cache *c, const uint64_t *blocks, size_t n,
			       int64_t prompt_tokens)
{
	size_t found = 0;
	int64_t most = prompt_tokens > 0 ? (prompt_tokens - 1) / PG_PREFIX_BLOCK : 0;

	while (found < n && (int64_t)found < most && find(c, blocks[found]) != NIL)
		found++;
	/* the first block stored last: the most recent, evicted last (a
	 * prefix's later blocks are worthless without its first ones) */
	for (size_t k = n; k-- > 0;)
		store(c, blocks[k]);
	return (int64_t)found * PG_PREFIX_BLOCK;
}
