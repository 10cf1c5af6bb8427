#ifndef PERFGATE_BASE_BUF_H
#define PERFGATE_BASE_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

/*
 * The one growable byte buffer (git's strbuf, cmark's cmark_strbuf).
 *
 * Invariants: after PG_BUF_INIT or pg_buf_init(), `ptr` is never NULL and
 * ptr[len] is always '\0', so ptr can be handed to any C string function.
 * The buffer may also hold binary data with embedded NULs; len is the truth.
 * Do not assign to the members; use the functions.
 *
 * Ownership: the buffer owns ptr. pg_buf_detach() hands it to the caller (who
 * frees it with free()) and leaves the buffer empty and usable;
 * pg_buf_release() frees it and leaves the buffer empty and usable.
 * Allocation failures abort (see alloc.h), so adding never fails.
 */
struct pg_buf {
	char *ptr;
	size_t len;
	size_t cap;
};

extern char pg_buf__empty[];
#define PG_BUF_INIT                                                                                \
	{                                                                                          \
		pg_buf__empty, 0, 0                                                                \
	}

void pg_buf_init(struct pg_buf *b);
void pg_buf_release(struct pg_buf *b);
char *pg_buf_detach(struct pg_buf *b);

/* Make room for `extra` more bytes beyond len (plus the NUL). */
void pg_buf_grow(struct pg_buf *b, size_t extra);
void pg_buf_reset(struct pg_buf *b);                /* len = 0, keeps memory */
void pg_buf_truncate(struct pg_buf *b, size_t len); /* len must be <= b->len */

/* Appending: inline, growth out of line (a trends site appends some
 * hundred million times; a constant string's length is the compiler's). */
static inline void pg_buf_add(struct pg_buf *b, const void *data, size_t len)
{
	if (!len)
		return;
	if (b->len + len >= b->cap)
		pg_buf_grow(b, len);
	memmove(b->ptr + b->len, data, len);
	b->len += len;
	b->ptr[b->len] = '\0';
}

static inline void pg_buf_puts(struct pg_buf *b, const char *s)
{
	pg_buf_add(b, s, strlen(s));
}

static inline void pg_buf_putc(struct pg_buf *b, char c)
{
	if (b->len + 1 >= b->cap)
		pg_buf_grow(b, 1);
	b->ptr[b->len++] = c;
	b->ptr[b->len] = '\0';
}

/* Writing in place: pg_buf_space returns room for n more bytes (after
 * len, the NUL's place kept beyond them); the caller writes k <= n of
 * them and pg_buf_wrote(b, k) appends them. */
static inline char *pg_buf_space(struct pg_buf *b, size_t n)
{
	if (b->len + n >= b->cap)
		pg_buf_grow(b, n);
	return b->ptr + b->len;
}

static inline void pg_buf_wrote(struct pg_buf *b, size_t k)
{
	b->len += k;
	b->ptr[b->len] = '\0';
}

/* v's decimal digits (and '-') at out, which has room for 20: their
 * count. What pg_buf_long appends. */
size_t pg_fmt_long(char *out, long v);
void pg_buf_printf(struct pg_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* pg_buf_printf(b, "%.1f", v), without printf's cost for values under
 * 1e15 (an SVG coordinate is written millions of times on a trends site). */
void pg_buf_fixed1(struct pg_buf *b, double v);
/* pg_buf_printf(b, "%ld", v), without printf's cost. */
void pg_buf_long(struct pg_buf *b, long v);
void pg_buf_vprintf(struct pg_buf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/* Append `n` copies of c. */
void pg_buf_pad(struct pg_buf *b, char c, size_t n);

#endif
