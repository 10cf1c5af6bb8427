/*
 * File names made from names (base/filename.h): test names become file
 * names with every byte a file name cannot hold replaced, so two names can
 * come out the same; a long one is cut; and a site is read where it was
 * copied to, where "A.html" and "a.html" may be one file.
 */
#include "base/filename.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/strutil.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pg_file_name_cap(char *s, size_t max, const char *whole)
{
	size_t keep = max - 17;

	if (strlen(s) <= max)
		return;
	/* a UTF-8 character is kept whole or not at all */
	while (keep && ((unsigned char)s[keep] & 0xc0) == 0x80)
		keep--;
	snprintf(s + keep, 18, "-%016llx", (unsigned long long)pg_str_hash(whole));
}

struct fname {
	char *key; /* the name, ASCII case folded */
	size_t i;
};

static char *folded(const char *s)
{
	char *out = pg_xstrdup(s);

	for (char *p = out; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	return out;
}

static int cmp_fname(const void *a, const void *b)
{
	const struct fname *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	if (c)
		return c;
	return (x->i > y->i) - (x->i < y->i);
}

/* Is key (folded) one of the original names, or a name given already? */
static bool taken(const struct fname *v, size_t n, const struct pg_strv *given, const char *key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(v[mid].key, key);
		if (!c)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = 0; k < given->n; k++)
		if (!strcmp(given->v[k], key))
			return true;
	return false;
}

void pg_file_names_unique(char **files, const char *const *names, size_t n, const char *ext)
{
	struct fname *v = pg_xmalloc((n ? n : 1) * sizeof(*v));
	bool *dup = pg_xcalloc(n ? n : 1, sizeof(bool));
	struct pg_strv given = PG_STRV_INIT;
	struct pg_buf name = PG_BUF_INIT;

	for (size_t i = 0; i < n; i++)
		v[i] = (struct fname){ folded(files[i]), i };
	qsort(v, n, sizeof(*v), cmp_fname);
	/* every name of a group that collides, the first too: a file's name
	 * then depends only on its own name and whether others collide with
	 * it, not on which of them sorts first */
	for (size_t k = 1; k < n; k++)
		if (!strcmp(v[k - 1].key, v[k].key))
			dup[v[k].i] = dup[v[k - 1].i] = true;
	for (size_t i = 0; i < n; i++) {
		size_t stem = strlen(files[i]);
		char *key = NULL;

		if (!dup[i])
			continue;
		if (pg_str_has_suffix(files[i], ext))
			stem -= strlen(ext);
		/* "<stem>-<hash of its name>": its own, whatever others come
		 * and go (an index would rename it when a name is added
		 * before it); another may be called that: then
		 * "<stem>-<hash>-2", ... */
		for (size_t extra = 1;; extra++) {
			pg_buf_reset(&name);
			pg_buf_add(&name, files[i], stem);
			pg_buf_printf(&name, "-%08llx",
				      (unsigned long long)(pg_str_hash(names[i]) & 0xffffffffu));
			if (extra > 1)
				pg_buf_printf(&name, "-%zu", extra);
			pg_buf_puts(&name, ext);
			free(key);
			key = folded(name.ptr);
			if (!taken(v, n, &given, key))
				break;
		}
		pg_strv_push_owned(&given, key);
		free(files[i]);
		files[i] = pg_xstrdup(name.ptr);
	}
	for (size_t k = 0; k < n; k++)
		free(v[k].key);
	free(v);
	free(dup);
	pg_strv_release(&given);
	pg_buf_release(&name);
}
