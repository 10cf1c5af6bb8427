#include "base/jsonscan.h"

#include "base/alloc.h"
#include "base/error.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* jansson's default nesting limit: deeper input is refused there too. */
#define MAX_DEPTH 2048

struct scan {
	const char *p, *end;
	const char *bad; /* where the structure broke */
	const char *why;
	/* per nesting level, whether it closes with ']' (else '}'): set on
	 * the way in, read on the way out, so zeroed once per scan */
	uint64_t closes_array[MAX_DEPTH / 64];
};

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* what ends a number or literal (NUL included: memchr, not strchr) */
static bool is_delim(char c)
{
	return is_ws(c) || memchr(",:[]{}\"", c, 8) != NULL;
}

static void skip_ws(struct scan *s)
{
	while (s->p < s->end && is_ws(*s->p))
		s->p++;
}

static bool fail(struct scan *s, const char *at, const char *why)
{
	s->bad = at;
	s->why = why;
	return false;
}

/* s->p is on the opening quote. memchr finds each candidate closing quote;
 * it closes the string when an even number of backslashes precede it. */
static bool skip_string(struct scan *s)
{
	const char *open = s->p, *from = s->p + 1;

	for (;;) {
		const char *q = memchr(from, '"', (size_t)(s->end - from));
		const char *b;

		if (!q)
			return fail(s, open, "unterminated string");
		for (b = q; b > from && b[-1] == '\\'; b--)
			;
		from = q + 1;
		if (((q - b) & 1) == 0) {
			s->p = from;
			return true;
		}
	}
}

/* One value: a string, a scalar, or a whole object or array. Brackets are
 * paired by type on a bit stack; scalars are left to the parser. */
static bool skip_value(struct scan *s)
{
	uint64_t *closes_array = s->closes_array;
	size_t depth = 0;

	do {
		skip_ws(s);
		if (s->p == s->end)
			return fail(s, s->end,
				    depth ? "unexpected end of file inside a value"
					  : "unexpected end of file, expected a value");
		switch (*s->p) {
		case '"':
			if (!skip_string(s))
				return false;
			break;
		case '[':
		case '{':
			if (depth == MAX_DEPTH)
				return fail(s, s->p, "nested too deeply");
			if (*s->p == '[')
				closes_array[depth / 64] |= UINT64_C(1) << (depth % 64);
			else
				closes_array[depth / 64] &= ~(UINT64_C(1) << (depth % 64));
			depth++;
			s->p++;
			break;
		case ']':
		case '}':
			if (depth == 0)
				return fail(s, s->p, "unexpected closing bracket");
			depth--;
			if (((closes_array[depth / 64] >> (depth % 64)) & 1) != (*s->p == ']'))
				return fail(s, s->p, "mismatched closing bracket");
			s->p++;
			break;
		case ',':
		case ':':
			if (depth == 0)
				return fail(s, s->p, "expected a value");
			s->p++;
			break;
		default:
			/* a number or literal: runs to the next delimiter (at least
			 * one byte, so a stray NUL cannot stall the scan) */
			do
				s->p++;
			while (s->p < s->end && !is_delim(*s->p));
			break;
		}
	} while (depth > 0);
	return true;
}

bool pg_jsonscan_member(const char *text, const struct pg_jsonscan_span *obj, const char *key,
			struct pg_jsonscan_span *value)
{
	struct scan s = { text + obj->off, text + obj->off + obj->len, NULL, NULL };
	size_t key_len = strlen(key);
	bool found = false;

	if (s.p == s.end || *s.p != '{')
		return false;
	s.p++;
	for (;;) {
		const char *name, *start;
		bool match;

		skip_ws(&s);
		name = s.p + 1;
		if (s.p == s.end || *s.p != '"' || !skip_string(&s))
			return found;
		/* s.p is past the closing quote */
		match = (size_t)(s.p - 1 - name) == key_len && !memcmp(name, key, key_len);
		skip_ws(&s);
		if (s.p == s.end || *s.p != ':')
			return found;
		s.p++;
		skip_ws(&s);
		start = s.p;
		if (!skip_value(&s))
			return found;
		if (match) {
			*value = (struct pg_jsonscan_span){ (size_t)(start - text),
							    (size_t)(s.p - start) };
			found = true;
		}
		skip_ws(&s);
		if (s.p == s.end || *s.p != ',')
			return found;
		s.p++;
	}
}

bool pg_jsonscan_array_has(const char *text, const struct pg_jsonscan_span *arr, size_t n)
{
	struct scan s = { text + arr->off, text + arr->off + arr->len, NULL, NULL, { 0 } };
	size_t seen = 0;

	if (s.p == s.end || *s.p != '[')
		return false;
	s.p++;
	skip_ws(&s);
	if (s.p < s.end && *s.p == ']')
		return n == 0;
	/* stops at the n-th element: the rest is not scanned */
	while (seen < n) {
		skip_ws(&s);
		if (!skip_value(&s))
			break;
		seen++;
		skip_ws(&s);
		if (s.p == s.end || *s.p != ',')
			break;
		s.p++;
	}
	return seen >= n;
}

void pg_jsonscan_position(const char *text, size_t off, int *line, int *col)
{
	const char *p = text, *end = text + off, *line_start = text;
	int l = 1;

	while ((p = memchr(p, '\n', (size_t)(end - p)))) {
		l++;
		line_start = ++p;
	}
	*line = l;
	*col = (int)(end - line_start) + 1;
}

int pg_jsonscan_array_spans(const char *text, size_t len, const char *source,
			    struct pg_jsonscan_span **spans, size_t *n, struct pg_error *err)
{
	struct scan s = { text, text + len, NULL, NULL };
	struct pg_jsonscan_span *v = NULL;
	size_t count = 0, cap = 0;
	bool ok = true;

	skip_ws(&s);
	if (s.p == s.end || *s.p != '[') {
		ok = fail(&s, s.p, "expected a JSON array");
		goto done;
	}
	s.p++;
	skip_ws(&s);
	if (s.p < s.end && *s.p == ']') {
		s.p++;
	} else {
		for (;;) {
			const char *start;

			skip_ws(&s);
			start = s.p;
			if (!(ok = skip_value(&s)))
				goto done;
			PG_ARRAY_PUSH(v, count, cap,
				      ((struct pg_jsonscan_span){ (size_t)(start - text),
								  (size_t)(s.p - start) }));
			skip_ws(&s);
			if (s.p < s.end && *s.p == ',') {
				s.p++;
				continue;
			}
			if (s.p < s.end && *s.p == ']') {
				s.p++;
				break;
			}
			ok = fail(&s, s.p, "expected ',' or ']' after an element");
			goto done;
		}
	}
	skip_ws(&s);
	if (s.p != s.end)
		ok = fail(&s, s.p, "extra data after the array");
done:
	if (!ok) {
		int line, col;

		free(v);
		pg_jsonscan_position(text, (size_t)(s.bad - text), &line, &col);
		return pg_error_set(err, PG_ECONFIG, "%s:%d:%d: %s", source, line, col, s.why);
	}
	*spans = v;
	*n = count;
	return 0;
}
