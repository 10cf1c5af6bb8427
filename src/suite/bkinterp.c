#include "suite/bkinterp.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool name_start(char c)
{
	return isalpha((unsigned char)c) || c == '_';
}

static size_t name_len(const char *s)
{
	size_t n = 0;

	if (!name_start(s[0]))
		return 0;
	while (isalnum((unsigned char)s[n]) || s[n] == '_')
		n++;
	return n;
}

/* The '}' closing the '{' at open, counting nested ${...}; NULL if none. */
static const char *closing_brace(const char *open)
{
	int depth = 0;

	for (const char *p = open; *p; p++) {
		if (*p == '{')
			depth++;
		else if (*p == '}' && --depth == 0)
			return p;
	}
	return NULL;
}

/* ${VAR:offset} and ${VAR:offset:length}, as bash slices. */
static int slice(struct pg_buf *out, const char *value, const char *spec, const char *whole,
		 struct pg_error *err)
{
	long len = (long)strlen(value), off, count = -1;
	char *end;

	while (*spec == ' ')
		spec++;
	off = strtol(spec, &end, 10);
	if (end == spec || (*end && *end != ':'))
		goto bad;
	if (*end == ':') {
		const char *c = end + 1;
		count = strtol(c, &end, 10);
		if (end == c || *end || count < 0)
			goto bad;
	}
	if (off < 0)
		off = off < -len ? 0 : len + off;
	if (off > len)
		off = len;
	if (count < 0 || count > len - off)
		count = len - off;
	pg_buf_add(out, value + off, (size_t)count);
	return 0;
bad:
	return pg_error_set(err, PG_ECONFIG, "bad substitution '%s'", whole);
}

/* One ${...}: inner is the text between the braces. */
static int braced(struct pg_buf *out, const char *inner, pg_interp_lookup lookup, void *ctx,
		  struct pg_error *err)
{
	size_t n = name_len(inner);
	char *name = NULL, *whole = NULL;
	const char *value, *op;
	bool colon;
	int ret = 0;

	whole = pg_xmalloc(strlen(inner) + 4);
	snprintf(whole, strlen(inner) + 4, "${%s}", inner);
	if (!n) {
		ret = pg_error_set(err, PG_ECONFIG, "bad substitution '%s'", whole);
		goto done;
	}
	name = pg_xstrndup(inner, n);
	value = lookup(ctx, name);
	op = inner + n;
	if (!*op) {
		if (value)
			pg_buf_puts(out, value);
		goto done;
	}
	colon = *op == ':';
	if (colon)
		op++;
	switch (*op) {
	case '-':
		if (value && (!colon || *value))
			pg_buf_puts(out, value);
		else
			ret = pg_bk_interpolate(out, op + 1, lookup, ctx, err);
		break;
	case '?':
		if (value && (!colon || *value))
			pg_buf_puts(out, value);
		else if (op[1])
			ret = pg_error_set(err, PG_ECONFIG, "%s: %s", name, op + 1);
		else
			ret = pg_error_set(err, PG_ECONFIG, "%s: not set", name);
		break;
	default:
		if (!colon) {
			ret = pg_error_set(err, PG_ECONFIG, "bad substitution '%s'", whole);
			break;
		}
		ret = slice(out, value ? value : "", op, whole, err);
		break;
	}
done:
	free(name);
	free(whole);
	return ret;
}

int pg_bk_interpolate(struct pg_buf *out, const char *text, pg_interp_lookup lookup, void *ctx,
		      struct pg_error *err)
{
	const char *p = text;

	while (*p) {
		if (p[0] == '\\' && p[1] == '$') {
			pg_buf_putc(out, '$');
			p += 2;
		} else if (p[0] != '$') {
			pg_buf_putc(out, *p++);
		} else if (p[1] == '$') {
			pg_buf_putc(out, '$');
			p += 2;
		} else if (p[1] == '{') {
			const char *close = closing_brace(p + 1);
			char *inner;
			int ret;

			if (!close)
				return pg_error_set(err, PG_ECONFIG, "unclosed '${' in '%s'", text);
			inner = pg_xstrndup(p + 2, (size_t)(close - p - 2));
			ret = braced(out, inner, lookup, ctx, err);
			free(inner);
			if (ret)
				return ret;
			p = close + 1;
		} else if (name_start(p[1])) {
			size_t n = name_len(p + 1);
			char *name = pg_xstrndup(p + 1, n);
			const char *value = lookup(ctx, name);

			if (value)
				pg_buf_puts(out, value);
			free(name);
			p += 1 + n;
		} else {
			pg_buf_putc(out, *p++);
		}
	}
	return 0;
}

/* At p, "{{matrix}}" or "{{matrix.NAME}}" (spaces allowed inside the
 * braces): the reference's length, and NAME ("" for the plain form). */
static size_t matrix_ref(const char *p, const char **name, size_t *name_n)
{
	const char *q = p;

	if (strncmp(q, "{{", 2))
		return 0;
	q += 2;
	while (*q == ' ')
		q++;
	if (strncmp(q, "matrix", 6))
		return 0;
	q += 6;
	*name = q;
	*name_n = 0;
	if (*q == '.') {
		*name = ++q;
		*name_n = name_len(q);
		if (!*name_n)
			return 0;
		q += *name_n;
	}
	while (*q == ' ')
		q++;
	if (strncmp(q, "}}", 2))
		return 0;
	return (size_t)(q + 2 - p);
}

bool pg_bk_has_matrix_ref(const char *text)
{
	const char *name;
	size_t n;

	for (const char *p = strstr(text, "{{"); p; p = strstr(p + 1, "{{"))
		if (matrix_ref(p, &name, &n))
			return true;
	return false;
}

int pg_bk_matrix_fill(struct pg_buf *out, const char *text, pg_interp_lookup lookup, void *ctx,
		      struct pg_error *err)
{
	const char *p = text;

	while (*p) {
		const char *name;
		size_t name_n, len = matrix_ref(p, &name, &name_n);
		char *key;
		const char *value;

		if (!len) {
			pg_buf_putc(out, *p++);
			continue;
		}
		key = pg_xstrndup(name, name_n);
		value = lookup(ctx, key);
		if (!value) {
			int ret = pg_error_set(err, PG_ENOTFOUND, "%.*s", (int)len, p);
			free(key);
			return ret;
		}
		pg_buf_puts(out, value);
		free(key);
		p += len;
	}
	return 0;
}
