#include "base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die_oom(size_t size)
{
	fprintf(stderr, "perfgate: out of memory allocating %zu bytes\n", size);
	abort();
}

void *pg_xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);
	if (!p)
		die_oom(size);
	return p;
}

void *pg_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		die_oom(n * size);
	return p;
}

void *pg_xrealloc(void *ptr, size_t size)
{
	void *p = realloc(ptr, size ? size : 1);
	if (!p)
		die_oom(size);
	return p;
}

char *pg_xstrdup(const char *s)
{
	return s ? pg_xstrndup(s, strlen(s)) : NULL;
}

char *pg_xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = pg_xmalloc(len + 1);
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

void pg_grow(void **ptr, size_t *cap, size_t need, size_t elem_size)
{
	size_t newcap;

	if (need <= *cap)
		return;
	newcap = *cap ? *cap : 8;
	while (newcap < need)
		newcap *= 2;
	*ptr = pg_xrealloc(*ptr, newcap * elem_size);
	*cap = newcap;
}
