#include "base/buf.h"

#include "base/alloc.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char pg_buf__empty[1];

void pg_buf_init(struct pg_buf *b)
{
	b->ptr = pg_buf__empty;
	b->len = 0;
	b->cap = 0;
}

void pg_buf_release(struct pg_buf *b)
{
	if (b->cap)
		free(b->ptr);
	pg_buf_init(b);
}

char *pg_buf_detach(struct pg_buf *b)
{
	char *p = b->cap ? b->ptr : pg_xstrdup("");
	pg_buf_init(b);
	return p;
}

void pg_buf_grow(struct pg_buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;
	size_t newcap;

	if (need <= b->cap)
		return;
	newcap = b->cap ? b->cap : 64;
	while (newcap < need)
		newcap *= 2;
	if (b->cap) {
		b->ptr = pg_xrealloc(b->ptr, newcap);
	} else {
		b->ptr = pg_xmalloc(newcap);
		b->ptr[0] = '\0';
	}
	b->cap = newcap;
}

void pg_buf_reset(struct pg_buf *b)
{
	pg_buf_truncate(b, 0);
}

void pg_buf_truncate(struct pg_buf *b, size_t len)
{
	if (len > b->len)
		len = b->len;
	b->len = len;
	if (b->cap)
		b->ptr[len] = '\0';
}

void pg_buf_add(struct pg_buf *b, const void *data, size_t len)
{
	if (!len)
		return;
	pg_buf_grow(b, len);
	memmove(b->ptr + b->len, data, len);
	b->len += len;
	b->ptr[b->len] = '\0';
}

void pg_buf_puts(struct pg_buf *b, const char *s)
{
	pg_buf_add(b, s, strlen(s));
}

void pg_buf_putc(struct pg_buf *b, char c)
{
	pg_buf_grow(b, 1);
	b->ptr[b->len++] = c;
	b->ptr[b->len] = '\0';
}

void pg_buf_pad(struct pg_buf *b, char c, size_t n)
{
	if (!n)
		return;
	pg_buf_grow(b, n);
	memset(b->ptr + b->len, c, n);
	b->len += n;
	b->ptr[b->len] = '\0';
}

void pg_buf_vprintf(struct pg_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	pg_buf_grow(b, 64);
	va_copy(cp, ap);
	n = vsnprintf(b->ptr + b->len, b->cap - b->len, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	if ((size_t)n >= b->cap - b->len) {
		pg_buf_grow(b, (size_t)n);
		n = vsnprintf(b->ptr + b->len, b->cap - b->len, fmt, ap);
	}
	b->len += (size_t)n;
}

void pg_buf_printf(struct pg_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pg_buf_vprintf(b, fmt, ap);
	va_end(ap);
}

void pg_buf_fixed1(struct pg_buf *b, double v)
{
#if LDBL_MANT_DIG >= 64
	if (isfinite(v) && fabs(v) < 1e15) {
		/* |v| x 10 is exact in a 64-bit significand (53 + 3 bits), so is
		 * its fraction: round half to even on the exact value, as printf
		 * does */
		long double t = (long double)fabs(v) * 10, whole = floorl(t), frac = t - whole;
		unsigned long long q = (unsigned long long)whole;
		char buf[24];
		size_t i = sizeof(buf);

		if (frac > 0.5L || (frac == 0.5L && (q & 1)))
			q++;
		buf[--i] = (char)('0' + q % 10);
		buf[--i] = '.';
		q /= 10;
		do {
			buf[--i] = (char)('0' + q % 10);
			q /= 10;
		} while (q);
		if (signbit(v))
			buf[--i] = '-';
		pg_buf_add(b, buf + i, sizeof(buf) - i);
		return;
	}
#endif
	pg_buf_printf(b, "%.1f", v);
}
