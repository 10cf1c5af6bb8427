#ifndef PERFGATE_BASE_ALLOC_H
#define PERFGATE_BASE_ALLOC_H

#include <stddef.h>

/*
 * Allocation that never returns NULL: on exhaustion perfgate prints one line
 * and aborts (like git's xmalloc), so no call site carries an OOM branch.
 * Everything allocated here is released with free().
 */
void *pg_xmalloc(size_t size);
void *pg_xcalloc(size_t n, size_t size);
void *pg_xrealloc(void *ptr, size_t size);
char *pg_xstrdup(const char *s); /* NULL in, NULL out */
char *pg_xstrndup(const char *s, size_t n);

/* Grow *ptr (an array of elem_size elements with capacity *cap) so that it
 * holds at least `need` elements. Doubles, so appends are amortised O(1). */
void pg_grow(void **ptr, size_t *cap, size_t need, size_t elem_size);

/* Append one element to a (ptr, n, cap) array triple. */
#define PG_ARRAY_PUSH(ptr, n, cap, value)                                                          \
	do {                                                                                       \
		pg_grow((void **)&(ptr), &(cap), (n) + 1, sizeof(*(ptr)));                         \
		(ptr)[(n)++] = (value);                                                            \
	} while (0)

#endif
