#include "base/strutil.h"

#include "base/alloc.h"
#include "base/buf.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool pg_str_has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool pg_str_has_suffix(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);
	return ls >= lx && memcmp(s + ls - lx, suffix, lx) == 0;
}

uint64_t pg_str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

bool pg_str_eq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

int pg_parse_long(const char *s, long *out)
{
	char *end;
	long v;

	if (!s || !*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int pg_parse_double(const char *s, double *out)
{
	char *end;
	double v;
	const char *p = s;

	if (!s || !*s || isspace((unsigned char)*s))
		return -1;
	if (*p == '+' || *p == '-')
		p++;
	if (!strcasecmp(p, "inf") || !strcasecmp(p, "infinity")) {
		*out = *s == '-' ? -INFINITY : INFINITY;
		return 0;
	}
	/* strtod also reads "nan", hex floats and "infinity" spellings we
	 * handled above; only plain decimal numbers get past here. */
	for (const char *c = p; *c; c++)
		if (!isdigit((unsigned char)*c) && !strchr(".eE+-", *c))
			return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL))
		return -1;
	if (end == s || *end)
		return -1;
	*out = v;
	return 0;
}

int pg_parse_percent(const char *s, double *out)
{
	size_t len = strlen(s);
	char num[64];

	if (len < 2 || len >= 40 || s[len - 1] != '%' || strpbrk(s, "eE"))
		return -1;
	snprintf(num, sizeof(num), "%.*se-2", (int)(len - 1), s);
	if (pg_parse_double(num, out) || !isfinite(*out) || *out < 0)
		return -1;
	return 0;
}

int pg_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#ifdef __SIZEOF_INT128__
/*
 * "%.<prec>g" of v (prec 6: "%g", or 17) when |v| is in [1e-4, 10^prec)
 * (fixed notation) and not zero, as printf writes it, without printf's
 * cost (a trends site formats millions of values): |v| = m x 2^e exactly,
 * so |v| x 10^N = m x 10^N x 2^e is rounded to prec digits in integer
 * arithmetic (m x 10^N < 2^53 x 10^20 < 2^120), the tie decided on the
 * exact value, half to even, as printf does. False: not in that range.
 */
static bool fmt_g_fixed(char out[PG_FMT_DOUBLE_SIZE], double v, int prec)
{
	/* clang-format off */
	static const uint64_t p10[] = {
		1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000,
		10000000000, 100000000000, 1000000000000, 10000000000000, 100000000000000,
		1000000000000000, 10000000000000000, 100000000000000000, 1000000000000000000,
		10000000000000000000u
	};
	/* clang-format on */
	static const double d10[] = { 1e-4, 1e-3, 1e-2, 1e-1, 1e0,  1e1, 1e2,  1e3,
				      1e4,  1e5,  1e6,  1e7,  1e8,  1e9, 1e10, 1e11,
				      1e12, 1e13, 1e14, 1e15, 1e16, 1e17 };
	static const char pairs[] = "00010203040506070809101112131415161718192021222324"
				    "25262728293031323334353637383940414243444546474849"
				    "50515253545556575859606162636465666768697071727374"
				    "75767778798081828384858687888990919293949596979899";
	__extension__ typedef unsigned __int128 u128;
	double a = fabs(v);
	int x, shift, i;
	uint64_t bits, m, q = 0;
	char *o = out, digits[17];

	if (!(a >= 1e-4 && a < d10[prec + 4]))
		return false;
	/* a is normal here: m the significand with its hidden bit */
	memcpy(&bits, &a, sizeof(bits));
	m = (bits & ((UINT64_C(1) << 52) - 1)) | (UINT64_C(1) << 52);
	shift = 1075 - (int)(bits >> 52); /* |v| = m / 2^shift, shift in [-4, 67] */
	/* the decimal exponent X of v rounded to prec digits: a guess, then
	 * one step either way until the rounded value has prec digits */
	for (x = prec - 1; x > -4 && a < d10[x + 4]; x--)
		;
	for (int tries = 0; tries < 3; tries++) {
		int n = prec - 1 - x; /* 10^n: in [1, 10^20] */
		u128 full = n < 20 ? (u128)m * p10[n] : (u128)m * p10[10] * p10[10];
		if (shift <= 0) {
			q = (uint64_t)(full << -shift); /* exact: |v| >= 2^52 */
		} else {
			u128 rem = full & (((u128)1 << shift) - 1), half = (u128)1 << (shift - 1);
			q = (uint64_t)(full >> shift);
			if (rem > half || (rem == half && (q & 1)))
				q++;
		}
		if (q >= p10[prec] && x < prec - 1)
			x++;
		else if (q < p10[prec - 1] && x > -4)
			x--;
		else
			break;
	}
	if (q < p10[prec - 1] || q >= p10[prec])
		return false; /* the rounded value leaves the range: "%e" */
	/* the digits by pairs, then each in its place */
	for (i = prec; i >= 2; i -= 2, q /= 100)
		memcpy(digits + i - 2, pairs + 2 * (q % 100), 2);
	if (i)
		digits[0] = (char)('0' + q);
	if (v < 0)
		*o++ = '-';
	if (x < 0) {
		*o++ = '0';
		*o++ = '.';
		for (i = -1; i > x; i--)
			*o++ = '0';
		memcpy(o, digits, (size_t)prec);
		o += prec;
	} else {
		for (i = 0; i < prec; i++) {
			*o++ = digits[i];
			if (i == x)
				*o++ = '.';
		}
	}
	/* "%g" drops the fraction's trailing zeros, and a bare point */
	while (o[-1] == '0')
		o--;
	if (o[-1] == '.')
		o--;
	*o = 0;
	return true;
}
#endif

char *pg_fmt_g(char out[PG_FMT_DOUBLE_SIZE], double v)
{
#ifdef __SIZEOF_INT128__
	if (fmt_g_fixed(out, v, 6))
		return out;
#endif
	if (isnan(v))
		snprintf(out, PG_FMT_DOUBLE_SIZE, "nan");
	else if (isinf(v))
		snprintf(out, PG_FMT_DOUBLE_SIZE, v < 0 ? "-inf" : "inf");
	else
		snprintf(out, PG_FMT_DOUBLE_SIZE, "%g", v);
	return out;
}

char *pg_fmt_table(char out[PG_FMT_DOUBLE_SIZE], double v)
{
	if (isfinite(v) && fabs(v) >= 1e4 && fabs(v) < 1e17) {
		snprintf(out, PG_FMT_DOUBLE_SIZE, "%.0f", v);
		return out;
	}
#ifdef __SIZEOF_INT128__
	if (fmt_g_fixed(out, v, 4))
		return out;
#endif
	if (!isfinite(v))
		return pg_fmt_g(out, v);
	snprintf(out, PG_FMT_DOUBLE_SIZE, "%.4g", v);
	return out;
}

char *pg_fmt_g17(char out[PG_FMT_DOUBLE_SIZE], double v)
{
#ifdef __SIZEOF_INT128__
	if (fmt_g_fixed(out, v, 17))
		return out;
#endif
	snprintf(out, PG_FMT_DOUBLE_SIZE, "%.17g", v);
	return out;
}

char *pg_fmt_fixed(char out[PG_FMT_DOUBLE_SIZE], double v, int decimals)
{
#ifdef __SIZEOF_INT128__
	/* |v| = m / 2^shift exactly (shift >= 13), so |v| x 10^d (< 1e18) is
	 * rounded in integer arithmetic (m x 10^6 < 2^73), the tie half to
	 * even, as printf does */
	if (decimals >= 0 && decimals <= 6 && fabs(v) < 1e12) {
		static const uint32_t p10[] = { 1, 10, 100, 1000, 10000, 100000, 1000000 };
		__extension__ typedef unsigned __int128 u128;
		double a = fabs(v);
		uint64_t bits, m, q;
		int e, shift;
		char d[40], *o = out;
		size_t i = sizeof(d);

		memcpy(&bits, &a, sizeof(bits));
		e = (int)(bits >> 52);
		m = bits & ((UINT64_C(1) << 52) - 1);
		if (e) /* normal: the hidden bit; subnormal: shift as for e = 1 */
			m |= UINT64_C(1) << 52;
		shift = 1075 - (e ? e : 1);
		if (shift >= 120) {
			q = 0; /* m x 10^6 < 2^73: under half of 2^shift */
		} else {
			u128 full = (u128)m * p10[decimals];
			u128 rem = full & (((u128)1 << shift) - 1), half = (u128)1 << (shift - 1);
			q = (uint64_t)(full >> shift);
			if (rem > half || (rem == half && (q & 1)))
				q++;
		}
		for (int k = 0; k < decimals; k++, q /= 10)
			d[--i] = (char)('0' + q % 10);
		if (decimals)
			d[--i] = '.';
		do
			d[--i] = (char)('0' + q % 10);
		while (q /= 10);
		if (signbit(v))
			*o++ = '-';
		memcpy(o, d + i, sizeof(d) - i);
		o[sizeof(d) - i] = 0;
		return out;
	}
#endif
	snprintf(out, PG_FMT_DOUBLE_SIZE, "%.*f", decimals, v);
	return out;
}

char *pg_fmt_pct(char out[PG_FMT_DOUBLE_SIZE], double rel)
{
	double pct = round(rel * 1000) / 10;

	/* beyond 1e15% the decimal would not fit (and means nothing) */
	if (!isfinite(pct) || fabs(pct) >= 1e15) {
		char g[PG_FMT_DOUBLE_SIZE];
		snprintf(out, PG_FMT_DOUBLE_SIZE, "%s%s%s", isfinite(pct) && pct > 0 ? "+" : "",
			 pg_fmt_g(g, pct), isfinite(pct) ? "%" : "");
		return out;
	}
	snprintf(out, PG_FMT_DOUBLE_SIZE, "%+.1f%%", pct == 0 ? 0 : pct);
	return out;
}

/*
 * Python's float repr: the shortest digit string d1d2...dn that round-trips,
 * with decimal exponent e (value = 0.d1..dn * 10^e), printed positionally when
 * -4 <= e-1 < 16 and in scientific notation otherwise.
 */
char *pg_fmt_repr(char out[PG_FMT_DOUBLE_SIZE], double v)
{
	char sci[40];
	char digits[20];
	int ndigits = 0, exp10, prec;
	char *p, *o = out;

	if (isnan(v) || isinf(v))
		return pg_fmt_g(out, v);
	if (v == 0) {
		snprintf(out, PG_FMT_DOUBLE_SIZE, signbit(v) ? "-0.0" : "0.0");
		return out;
	}
	/*
	 * Any two decimals of at most DBL_DIG (15) significant digits are
	 * different doubles, so when v's 15-digit rounding reads back to v it is
	 * the only short decimal that does, and dropping its trailing zeros
	 * (below) gives the shortest. Otherwise 16 or 17 digits. Three tries
	 * instead of up to seventeen: reports format 150,000 numbers. Subnormals
	 * have fewer bits, so several short decimals may read back to them:
	 * they take the full search.
	 */
	for (prec = fabs(v) < DBL_MIN ? 0 : 14; prec < 17; prec++) {
		snprintf(sci, sizeof(sci), "%.*e", prec, v);
		if (strtod(sci, NULL) == v)
			break;
	}
	/* sci is "-d.ddddde+XX" */
	p = sci;
	if (*p == '-') {
		*o++ = '-';
		p++;
	}
	for (; *p && *p != 'e'; p++)
		if (isdigit((unsigned char)*p))
			digits[ndigits++] = *p;
	while (ndigits > 1 && digits[ndigits - 1] == '0')
		ndigits--;
	exp10 = (int)strtol(p + 1, NULL, 10); /* value = d.ddd * 10^exp10 */

	if (exp10 < -4 || exp10 >= 16) {
		*o++ = digits[0];
		if (ndigits > 1) {
			*o++ = '.';
			memcpy(o, digits + 1, (size_t)ndigits - 1);
			o += ndigits - 1;
		}
		snprintf(o, PG_FMT_DOUBLE_SIZE - (size_t)(o - out), "e%c%02d",
			 exp10 < 0 ? '-' : '+', abs(exp10));
		return out;
	}
	if (exp10 < 0) {
		*o++ = '0';
		*o++ = '.';
		for (int i = 0; i < -exp10 - 1; i++)
			*o++ = '0';
		memcpy(o, digits, (size_t)ndigits);
		o += ndigits;
	} else {
		for (int i = 0; i <= exp10; i++)
			*o++ = i < ndigits ? digits[i] : '0';
		*o++ = '.';
		if (ndigits > exp10 + 1) {
			memcpy(o, digits + exp10 + 1, (size_t)(ndigits - exp10 - 1));
			o += ndigits - exp10 - 1;
		} else {
			*o++ = '0';
		}
	}
	*o = '\0';
	return out;
}

static size_t min3(size_t a, size_t b, size_t c)
{
	size_t m = a < b ? a : b;
	return m < c ? m : c;
}

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t *d = pg_xcalloc((la + 1) * (lb + 1), sizeof(*d));
	size_t result;

#define D(i, j) d[(i) * (lb + 1) + (j)]
	for (size_t i = 0; i <= la; i++)
		D(i, 0) = i;
	for (size_t j = 0; j <= lb; j++)
		D(0, j) = j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = tolower((unsigned char)a[i - 1]) !=
				      tolower((unsigned char)b[j - 1]);
			D(i, j) = min3(D(i - 1, j) + 1, D(i, j - 1) + 1, D(i - 1, j - 1) + cost);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    D(i - 2, j - 2) + 1 < D(i, j))
				D(i, j) = D(i - 2, j - 2) + 1;
		}
	}
	result = D(la, lb);
#undef D
	free(d);
	return result;
}

const char *pg_nearest(const char *word, const char *const *candidates, size_t n)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1;
	size_t len = strlen(word);
	size_t limit = len / 3 > 2 ? len / 3 : 2;

	for (size_t i = 0; i < n; i++) {
		size_t d = edit_distance(word, candidates[i]);
		if (d < best_d) {
			best_d = d;
			best = candidates[i];
		}
	}
	return best_d <= limit ? best : NULL;
}

void pg_strv_push_owned(struct pg_strv *sv, char *s)
{
	pg_grow((void **)&sv->v, &sv->cap, sv->n + 2, sizeof(*sv->v));
	sv->v[sv->n++] = s;
	sv->v[sv->n] = NULL;
}

void pg_strv_push(struct pg_strv *sv, const char *s)
{
	pg_strv_push_owned(sv, pg_xstrdup(s));
}

void pg_strv_release(struct pg_strv *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = sv->cap = 0;
}

void pg_shell_quote(struct pg_buf *b, const char *s)
{
	bool plain = *s != '\0';

	for (const char *c = s; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("@%+=:,./-_", *c))
			plain = false;
	if (plain) {
		pg_buf_puts(b, s);
		return;
	}
	pg_buf_putc(b, '\'');
	for (const char *c = s; *c; c++) {
		if (*c == '\'')
			pg_buf_puts(b, "'\\''");
		else
			pg_buf_putc(b, *c);
	}
	pg_buf_putc(b, '\'');
}

size_t pg_utf8_width(const char *s, size_t len)
{
	size_t w = 0;

	for (size_t i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xC0) != 0x80)
			w++;
	return w;
}
