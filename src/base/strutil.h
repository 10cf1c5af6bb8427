#ifndef PERFGATE_BASE_STRUTIL_H
#define PERFGATE_BASE_STRUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pg_buf;

bool pg_str_has_prefix(const char *s, const char *prefix);
bool pg_str_has_suffix(const char *s, const char *suffix);
/* FNV-1a 64 of s: a name's hash, the same on every run and machine */
uint64_t pg_str_hash(const char *s);
bool pg_str_eq(const char *a, const char *b); /* NULL-safe */

/*
 * Strict number parsing (the banned atoi/atof accept "12abc" and overflow
 * silently). The whole string must be the number, surrounding white space is
 * rejected. Return 0 on success, -1 otherwise (out untouched).
 * pg_parse_double accepts "inf", "+inf", "infinity" (any case) as INFINITY
 * and rejects "nan".
 */
int pg_parse_long(const char *s, long *out);
int pg_parse_double(const char *s, double *out);

/* "2.6%" as the double nearest 0.026 (the digits parsed once with an
 * e-2 exponent: 2.6 / 100 would not be nearest): 0, or -1 when s is not a
 * finite, non-negative percentage written as digits and a '%'. */
int pg_parse_percent(const char *s, double *out);

/* The value of a hexadecimal digit, or -1. */
int pg_hex_digit(char c);

/*
 * Number formatting.
 * pg_fmt_g: C's/Python's "%g" (six significant digits), what tabulate prints
 *   in report tables; integers-valued doubles print without a dot ("200").
 * pg_fmt_repr: the shortest string that reads back to exactly v, in the
 *   layout of Python's repr(float) ("0.1", "200.0", "1e-05", "1.5e+16"), so
 *   JSON we write matches what vLLM's tooling writes. Infinities print as
 *   "inf"/"-inf" and NaN as "nan": callers emit them as JSON strings or
 *   null, never as bare tokens.
 * Both return out. 32 bytes is always enough.
 */
#define PG_FMT_DOUBLE_SIZE 32
char *pg_fmt_g(char out[PG_FMT_DOUBLE_SIZE], double v);
/* "%.17g" (every double's digits, read back exactly: a chart's frame for
 * its script), printf's bytes without its cost in [1e-4, 1e17). */
char *pg_fmt_g17(char out[PG_FMT_DOUBLE_SIZE], double v);
/* "%.*f" with `decimals` (an axis's labels), printf's bytes without its
 * cost for 0..6 decimals and |v| < 1e12; beyond that, printf's (which may
 * not fit: cut to 31 bytes). */
char *pg_fmt_fixed(char out[PG_FMT_DOUBLE_SIZE], double v, int decimals);
char *pg_fmt_repr(char out[PG_FMT_DOUBLE_SIZE], double v);
/* A measurement in perfgate's own tables (the annotation, comparison.md,
 * A/B): four significant digits, which is more than a benchmark's
 * run-to-run noise resolves, and every digit of the integer part
 * ("3129", "24.2", "0.01235", "123457", never "1.2e+05"). */
char *pg_fmt_table(char out[PG_FMT_DOUBLE_SIZE], double v);
/* A relative change (0.123) as a signed percentage with one decimal
 * ("+12.3%"), rounded half away from zero; what rounds to zero is "+0.0%",
 * never "-0.0%". Returns out. */
char *pg_fmt_pct(char out[PG_FMT_DOUBLE_SIZE], double rel);

/*
 * Nearest candidate to `word` by edit distance (Damerau-Levenshtein, optimal
 * string alignment), or NULL when nothing is close enough to be a plausible
 * typo (distance > max(2, len/3)). Used for "did you mean 'num_prompts'?".
 */
const char *pg_nearest(const char *word, const char *const *candidates, size_t n);

/* Display width of UTF-8 text: one column per code point (close enough
 * for test names, GPU names and messages in aligned tables). */
size_t pg_utf8_width(const char *s, size_t len);

/* A NULL-terminated, growable vector of owned strings. */
struct pg_strv {
	char **v; /* v[n] == NULL whenever n > 0 or v != NULL */
	size_t n;
	size_t cap;
};
#define PG_STRV_INIT                                                                               \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}
void pg_strv_push(struct pg_strv *sv, const char *s); /* copies s */
void pg_strv_push_owned(struct pg_strv *sv, char *s); /* takes s */
void pg_strv_release(struct pg_strv *sv);

/* Append s to b with every character that would break a shell word quoted,
 * POSIX-sh style ('it'\''s'). Used to print commands users can paste. */
void pg_shell_quote(struct pg_buf *b, const char *s);

#endif
