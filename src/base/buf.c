#include "base/buf.h"

#include "base/alloc.h"

#include <stdint.h>
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

size_t pg_fmt_long(char *out, long v)
{
	unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v, t = u;
	size_t sign = v < 0, len = sign;

	out[0] = '-';
	if (u < 10) { /* most of a path's steps */
		out[sign] = (char)('0' + u);
		return sign + 1;
	}
	/* the digits counted, then written from the last: no copy */
	do
		len++;
	while (t /= 10);
	for (size_t i = len; i-- > sign; u /= 10)
		out[i] = (char)('0' + u % 10);
	return len;
}

void pg_buf_long(struct pg_buf *b, long v)
{
	pg_buf_wrote(b, pg_fmt_long(pg_buf_space(b, 20), v));
}

void pg_buf_fixed1(struct pg_buf *b, double v)
{
	if (isfinite(v) && fabs(v) < 1e15) {
		/* |v| = m x 2^e exactly (m: 53 bits), so |v| x 10 = 10m x 2^e,
		 * 10m < 2^57: its whole part and the remainder are integers,
		 * and the tie is decided on the exact value, half to even, as
		 * printf does -- in integer arithmetic, which every machine
		 * (and valgrind's emulation of one) does exactly */
		int exp;
		double f = frexp(fabs(v), &exp);
		uint64_t m10 = (uint64_t)ldexp(f, 53) * 10, q;
		int shift = 53 - exp; /* |v| x 10 = m10 / 2^shift */
		char buf[24];
		size_t i = sizeof(buf);

		if (shift <= 0) {
			q = m10 << -shift; /* < 1e16 < 2^54 */
		} else if (shift > 58) {
			q = 0; /* m10 < 2^57: under half of 2^shift */
		} else {
			uint64_t rem = m10 & ((UINT64_C(1) << shift) - 1);
			uint64_t half = UINT64_C(1) << (shift - 1);
			q = m10 >> shift;
			if (rem > half || (rem == half && (q & 1)))
				q++;
		}
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
	pg_buf_printf(b, "%.1f", v);
}
