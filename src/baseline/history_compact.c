/*
 * Compact histories (baseline/history.h): perfgate trends holds every run
 * of every point of a GPU, 2 million records for 10,000 points x 200 runs.
 * A jansson tree per line and six strings per record cost seconds and
 * gigabytes; here a record is its struct, its strings are interned in a
 * pool (a job's commit, date, build and run are shared by all its points)
 * and its kept medians sit in one allocation per point.
 *
 * The scanner reads the lines perfgate writes (baseline/history.c,
 * pg_history_line) and nothing more: strings without escapes or bytes
 * above 0x7f, integers of at most 18 digits, reals strtod reads as jansson
 * does, each known key once, values of the shapes pg_history_classify
 * accepts. Whatever else it meets sends the whole file through
 * pg_history_parse and pg_history_slim, so the records, and the errors,
 * are theirs.
 *
 * The lines of a file give the same keys in the same order, and many the
 * same strings as the line before (gpu, test): bytes equal to what the
 * line before had in the same place are taken as the scanner took them
 * there (key_at, str_member), without scanning, hashing or looking up.
 */
#include "baseline/history.h"

#include "base/alloc.h"
#include "baseline/history_check.h"
#include "gate/compare_stats.h"
#include "results/metrics.h"
#include "suite/suite.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* The pool                                                            */

#define CHUNK_SIZE 65536
#define ID_BUCKETS 256

struct chunk {
	struct chunk *next;
	size_t used, cap;
	char data[];
};

struct interned {
	const char *s;
	size_t len;
	uint64_t hash;
};

/* A string member's value, as the pool holds it. */
struct str_seen {
	const char *copy;
	size_t len;
};

/* The string members of a record: commit, date, build_url, gpu, test, run,
 * regressed. */
#define LINE_STRS 7

struct pg_history_pool {
	struct chunk *chunks;
	struct interned *table; /* open addressing, a power of two */
	size_t n, cap;
	/* registry metric ids by hash: first[bucket], next[m], -1 ends */
	int first[ID_BUCKETS];
	int *next;
	size_t nm;
	const struct pg_metric *all;
	size_t *id_len;  /* strlen(all[m].id) */
	bool ids_unique; /* no id twice in a suite: a key names one metric */
	/* the strings of the k-th line of the file read before, LINE_STRS a
	 * line: the k-th lines of a GPU's files are mostly one job's */
	struct str_seen *by_line;
	size_t n_by_line, cap_by_line; /* lines, entries */
};

/* Eight bytes at a time (six strings of forty bytes a line, two million
 * lines), mixed at the end so that the low bits, the table's index,
 * depend on every byte. */
static uint64_t hash_bytes(const char *s, size_t len)
{
	const uint64_t k = 0x9e3779b97f4a7c15ull;
	uint64_t h = len * k, w;

	if (len < 8) {
		for (w = 0; len; len--)
			w = w << 8 | (unsigned char)s[len - 1];
		h = (h ^ w) * k;
	} else {
		/* the last word overlaps the one before: no tail of 0-7 bytes */
		for (size_t i = 0; i + 8 < len; i += 8) {
			memcpy(&w, s + i, 8);
			h = (h ^ w) * k;
			h ^= h >> 29;
		}
		memcpy(&w, s + len - 8, 8);
		h = (h ^ w) * k;
	}
	h ^= h >> 32;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

struct pg_history_pool *pg_history_pool_new(void)
{
	struct pg_history_pool *p = pg_xcalloc(1, sizeof(*p));

	p->all = pg_metrics_all(&p->nm);
	p->next = pg_xmalloc((p->nm ? p->nm : 1) * sizeof(int));
	p->id_len = pg_xmalloc((p->nm ? p->nm : 1) * sizeof(size_t));
	for (size_t b = 0; b < ID_BUCKETS; b++)
		p->first[b] = -1;
	/* chained in reverse so that a bucket lists the registry in order */
	for (size_t m = p->nm; m-- > 0;) {
		size_t b;
		p->id_len[m] = strlen(p->all[m].id);
		b = hash_bytes(p->all[m].id, p->id_len[m]) % ID_BUCKETS;
		p->next[m] = p->first[b];
		p->first[b] = (int)m;
	}
	p->ids_unique = true;
	for (size_t m = 0; m < p->nm; m++)
		for (int o = p->next[m]; o >= 0; o = p->next[o])
			if (p->all[o].suite == p->all[m].suite &&
			    !strcmp(p->all[o].id, p->all[m].id))
				p->ids_unique = false;
	return p;
}

void pg_history_pool_free(struct pg_history_pool *p)
{
	if (!p)
		return;
	while (p->chunks) {
		struct chunk *c = p->chunks;
		p->chunks = c->next;
		free(c);
	}
	free(p->table);
	free(p->next);
	free(p->id_len);
	free(p->by_line);
	free(p);
}

static char *pool_alloc(struct pg_history_pool *p, size_t size)
{
	struct chunk *c = p->chunks;
	char *r;

	if (!c || c->cap - c->used < size) {
		size_t cap = size > CHUNK_SIZE ? size : CHUNK_SIZE;
		c = pg_xmalloc(sizeof(*c) + cap);
		c->used = 0;
		c->cap = cap;
		c->next = p->chunks;
		p->chunks = c;
	}
	r = c->data + c->used;
	c->used += size;
	return r;
}

/* Before each string of a pool: where it is in the pool that joined its
 * own (pg_history_pool_join), itself until then. */
#define HEADER sizeof(void *)

static void header_set(const char *s, const char *to)
{
	memcpy((unsigned char *)s - HEADER, &to, sizeof(to));
}

/* An interned string's copy in the pool that joined its own. */
static char *joined(const char *s)
{
	char *c = NULL;

	if (s)
		memcpy(&c, (const unsigned char *)s - HEADER, sizeof(c));
	return c;
}

/* The pool's copy of s[0..len) (NUL-terminated; any bytes). */
static const char *intern(struct pg_history_pool *p, const char *s, size_t len)
{
	uint64_t h = hash_bytes(s, len);
	size_t i;
	char *copy;

	if (2 * (p->n + 1) > p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 1024;
		struct interned *t = pg_xcalloc(cap, sizeof(*t));
		for (size_t k = 0; k < p->cap; k++) {
			if (!p->table[k].s)
				continue;
			for (i = p->table[k].hash & (cap - 1); t[i].s; i = (i + 1) & (cap - 1))
				;
			t[i] = p->table[k];
		}
		free(p->table);
		p->table = t;
		p->cap = cap;
	}
	for (i = h & (p->cap - 1); p->table[i].s; i = (i + 1) & (p->cap - 1))
		if (p->table[i].hash == h && p->table[i].len == len &&
		    !memcmp(p->table[i].s, s, len))
			return p->table[i].s;
	copy = pool_alloc(p, HEADER + len + 1) + HEADER;
	header_set(copy, copy);
	memcpy(copy, s, len);
	copy[len] = '\0';
	p->table[i] = (struct interned){ copy, len, h };
	p->n++;
	return copy;
}

static const char *intern0(struct pg_history_pool *p, const char *s)
{
	return s ? intern(p, s, strlen(s)) : NULL;
}

void pg_history_pool_join(struct pg_history_pool *p, struct pg_history_pool **from, size_t n_from,
			  struct pg_history *hs, size_t n)
{
	for (size_t f = 0; f < n_from; f++)
		for (size_t k = 0; from[f] && k < from[f]->cap; k++) {
			const struct interned *e = &from[f]->table[k];
			const char *c;
			if (!e->s)
				continue;
			c = intern(p, e->s, e->len);
			header_set(e->s, c);
		}
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < hs[i].n; k++) {
			struct pg_history_rec *r = &hs[i].recs[k];
			if (!r->slot)
				continue; /* not compact: its strings are its own */
			r->commit = joined(r->commit);
			r->date = joined(r->date);
			r->build_url = joined(r->build_url);
			r->gpu = joined(r->gpu);
			r->test = joined(r->test);
			r->run = joined(r->run);
			r->slot = (const unsigned char *)joined((const char *)r->slot);
		}
	for (size_t f = 0; f < n_from; f++)
		pg_history_pool_free(from[f]);
}

/* ------------------------------------------------------------------ */
/* Compact records from per-record medians                             */

/*
 * Turn h's records (their strings already interned, medians of every
 * registry metric in rows[k * nm], NAN where none) compact: the slot map
 * of the metrics pg_history_slim keeps, and their values. present, when
 * not NULL, says for each registry metric whether a record of its suite
 * has a value (what finish looks for in rows without it).
 */
static void finish(struct pg_history *h, const double *rows, const bool *present,
		   const struct pg_policy *policy, struct pg_history_pool *p)
{
	bool *keep = pg_xcalloc(p->nm ? p->nm : 1, sizeof(bool));
	unsigned char *slot = pg_xmalloc(p->nm ? p->nm : 1);
	size_t *col_m = pg_xmalloc((p->nm ? p->nm : 1) * sizeof(size_t)); /* by column */
	const unsigned char *shared;
	size_t cols = 0;
	unsigned suites = 0; /* of the records, a bit each */

	pg_history_keep(keep, h, policy);
	for (size_t k = 0; k < h->n; k++)
		suites |= 1u << h->recs[k].suite;
	/* a column for a kept metric only where a record of its suite has a
	 * value: the others read NAN without one (a history holds one suite,
	 * the registry several) */
	for (size_t m = 0; m < p->nm; m++) {
		bool any = present && keep[m] && present[m];
		for (size_t k = 0;
		     !present && k < h->n && keep[m] && (suites >> p->all[m].suite & 1) && !any;
		     k++)
			any = p->all[m].suite == h->recs[k].suite && !isnan(rows[k * p->nm + m]);
		keep[m] = any;
		if (any)
			col_m[cols] = m;
		slot[m] = keep[m] ? (unsigned char)cols++ : PG_HISTORY_NO_SLOT;
	}
	shared = (const unsigned char *)intern(p, (const char *)slot, p->nm);
	free(h->values);
	h->values = pg_xmalloc((h->n * cols + 1) * sizeof(double));
	for (size_t k = 0; k < h->n; k++) {
		struct pg_history_rec *r = &h->recs[k];
		double *v = h->values + k * cols;
		for (size_t c = 0; c < cols; c++)
			v[c] = p->all[col_m[c]].suite == r->suite ? rows[k * p->nm + col_m[c]]
								  : NAN;
		r->medians = v;
		r->slot = shared;
		r->metrics = NULL;
	}
	free(col_m);
	free(slot);
	free(keep);
}

/* The slow way: pg_history_parse and pg_history_slim, made compact. */
static int parse_slow(struct pg_history *h, const char *point, const char *text, size_t len,
		      const char *source, const struct pg_policy *policy, struct pg_history_pool *p,
		      struct pg_error *err)
{
	struct pg_history t = { 0 };
	double *rows;
	int rc = pg_history_parse(&t, point, text, len, source, err);

	if (rc) {
		pg_history_release(&t);
		return rc;
	}
	pg_history_slim(&t, policy);
	h->recs = pg_xrealloc(h->recs, (t.n ? t.n : 1) * sizeof(*h->recs));
	h->cap = t.n ? t.n : 1;
	h->n = t.n;
	rows = pg_xmalloc((t.n * p->nm + 1) * sizeof(double));
	for (size_t k = 0; k < t.n; k++) {
		const struct pg_history_rec *s = &t.recs[k];
		h->recs[k] = (struct pg_history_rec){
			.commit = (char *)intern0(p, s->commit),
			.date = (char *)intern0(p, s->date),
			.build_url = (char *)intern0(p, s->build_url),
			.gpu = (char *)intern0(p, s->gpu),
			.suite = s->suite,
			.test = (char *)intern0(p, s->test),
			.qps = s->qps,
			.max_concurrency = s->max_concurrency,
			.repeats = s->repeats,
			.run = (char *)intern0(p, s->run),
		};
		memcpy(rows + k * p->nm, s->medians, p->nm * sizeof(double));
	}
	finish(h, rows, NULL, policy, p);
	free(rows);
	pg_history_release(&t);
	return 0;
}

/* ------------------------------------------------------------------ */
/* The scanner                                                         */

struct scan {
	const char *p, *e;
};

static void ws(struct scan *s)
{
	/* (what follows white space is mostly not more of it: one test) */
	while (s->p < s->e && (unsigned char)*s->p <= ' ' &&
	       (*s->p == ' ' || *s->p == '\t' || *s->p == '\r' || *s->p == '\n'))
		s->p++;
}

/* c after white space. */
static bool expect(struct scan *s, char c)
{
	ws(s);
	if (s->p >= s->e || *s->p != c)
		return false;
	s->p++;
	return true;
}

static bool peek(struct scan *s, char c)
{
	ws(s);
	return s->p < s->e && *s->p == c;
}

#define ONES  0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* Does any byte of x equal c (as a whole word: exact)? */
static uint64_t has_byte(uint64_t x, unsigned char c)
{
	x ^= ONES * c;
	return (x - ONES) & ~x & HIGHS;
}

/* The bytes of x that a plain string does not hold (below 0x20, above
 * 0x7f, '"', a backslash), as their high bits: none when 0. The lowest
 * one is exact (bit hacks: haszero, hasless; a false one can only follow
 * a true one, by a borrow). */
static uint64_t special8(uint64_t x)
{
	return (x & HIGHS) | ((x - ONES * 0x20) & ~x & HIGHS) | has_byte(x, '"') |
	       has_byte(x, '\\');
}

/* A string of printable ASCII without escapes: its bytes. */
static bool string(struct scan *s, const char **v, size_t *len)
{
	const char *q;
	uint64_t w;

	if (!expect(s, '"'))
		return false;
	/* eight plain bytes at a time, then byte by byte from the first
	 * word that has the closing quote (or a byte it must refuse) */
	for (q = s->p; s->e - q >= 8; q += 8) {
		uint64_t bad;
		memcpy(&w, q, 8);
		if (!(bad = special8(w)))
			continue;
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		q += __builtin_ctzll(bad) / 8; /* the first byte in memory is the lowest */
#endif
		break;
	}
	for (; q < s->e && *q != '"'; q++)
		if ((unsigned char)*q < 0x20 || (unsigned char)*q > 0x7f || *q == '\\')
			return false;
	if (q >= s->e)
		return false;
	*v = s->p;
	*len = (size_t)(q - s->p);
	s->p = q + 1;
	return true;
}

static bool word_n(struct scan *s, const char *w, size_t n)
{
	ws(s);
	if ((size_t)(s->e - s->p) < n || *s->p != *w || memcmp(s->p, w, n))
		return false;
	s->p += n;
	return true;
}

/* a literal's length known where it is written (no strlen per value) */
#define word(s, w) word_n(s, w, sizeof(w) - 1)

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static const double pow10[] = { 1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
				1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
				1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };

#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NUMBER_WORDS 1

/* How many of the bytes of x, the first in memory first, are digits
 * before one that is not (0-8). A byte is a digit when its high nibble
 * is 3, and still is after adding 6; a carry out of a byte (one above
 * 0xf9, not a digit) only reaches the bytes after it. */
static unsigned lead_digits(uint64_t x)
{
	const uint64_t nib = 0xf0f0f0f0f0f0f0f0ull, threes = ONES * 0x30;
	uint64_t t = ((x & nib) ^ threes) | (((x + ONES * 6) & nib) ^ threes);

	t = (((t & ~HIGHS) + ~HIGHS) | t) & HIGHS; /* a high bit per byte that is not 0 */
	return t ? (unsigned)__builtin_ctzll(t) / 8 : 8;
}

/* The first n (1-8) bytes of x, digits, as an integer: moved to the top
 * of the word (zeros before them) and added in pairs, fours, eights
 * (Lemire's eight digits at once, in fast_float). */
static uint64_t digits_value(uint64_t x, unsigned n)
{
	const uint64_t mask = 0x000000ff000000ffull;

	x = (x - ONES * '0') << (8 * (8 - n)); /* a borrow only reaches the bytes after */
	x = x * 10 + (x >> 8);
	return ((x & mask) * (100 + (1000000ull << 32)) +
		((x >> 16) & mask) * (1 + (10000ull << 32))) >>
	       32;
}

/*
 * number() for what perfgate writes, a word at a time: [-]digits[.digits]
 * with at most 7 digits either side, no exponent, no leading zero before
 * another digit, and eight bytes to read at each run of digits. The same
 * values as number() below (the same integer, the same one division);
 * false for anything else, which it leaves to number().
 */
static bool number_words(struct scan *s, bool *is_int, long long *iv, double *dv)
{
	static const uint64_t scale[] = { 1, 10, 100, 1000, 10000, 100000, 1000000, 10000000 };
	const char *q = s->p;
	bool neg = *q == '-';
	uint64_t w, m;
	unsigned n;

	q += neg;
	memcpy(&w, q, 8);
	n = lead_digits(w);
	if (n == 0 || n == 8 || (*q == '0' && n > 1))
		return false;
	m = digits_value(w, n);
	q += n; /* n < 8: still in the word read */
	if (*q == 'e' || *q == 'E')
		return false;
	if (*q != '.') {
		*is_int = true;
		*iv = neg ? -(long long)m : (long long)m;
		*dv = (double)*iv;
		s->p = q;
		return true;
	}
	q++;
	if (FLT_EVAL_METHOD != 0 || s->e - q < 8)
		return false;
	memcpy(&w, q, 8);
	n = lead_digits(w);
	if (n == 0 || n == 8 || q[n] == 'e' || q[n] == 'E')
		return false;
	/* at most 14 digits: below 2^53, and 10^-n with n <= 7 */
	m = m * scale[n] + digits_value(w, n);
	*is_int = false;
	*dv = neg ? -((double)m / pow10[n]) : (double)m / pow10[n];
	s->p = q + n;
	return true;
}
#endif

/*
 * A JSON number, as jansson reads it: an integer (no fraction, no
 * exponent) as a long long, a real by strtod. An integer of more than 18
 * digits (jansson may refuse it) or a real beyond a double's range (it
 * does) is not read here.
 *
 * The digits are gathered as they are checked. A real of at most 2^53 in
 * its digits and a power of ten up to 22 (what perfgate writes:
 * "2418.1234") needs no strtod: the digits as an integer and the power of
 * ten are both exact doubles, so one multiplication or division rounds
 * once, to the double nearest the decimal, which is what strtod returns
 * (Clinger's fast path; pg_history_number is this, for tests). The
 * shapes perfgate writes are read a word at a time first (number_words).
 */
static bool number_bytes(struct scan *s, bool *is_int, long long *iv, double *dv)
{
	const char *q, *start;
	unsigned long long m = 0;
	int digits = 0, frac = 0, x = 0, x_digits = 0, x_sign = 1, e;
	bool neg;
	char buf[64];
	size_t len;

	start = q = s->p;
	neg = q < s->e && *q == '-';
	q += neg;
	if (q >= s->e || !is_digit(*q))
		return false;
	if (*q == '0') { /* a number of its own: "01" is 0, then a stray 1 */
		digits = 1;
		q++;
	} else {
		for (; q < s->e && is_digit(*q); q++)
			if (++digits <= 19)
				m = 10 * m + (unsigned)(*q - '0');
	}
	*is_int = true;
	if (q < s->e && *q == '.') {
		q++;
		if (q >= s->e || !is_digit(*q))
			return false;
		for (; q < s->e && is_digit(*q); q++, frac++)
			if (++digits <= 19)
				m = 10 * m + (unsigned)(*q - '0');
		*is_int = false;
	}
	if (q < s->e && (*q == 'e' || *q == 'E')) {
		q++;
		if (q < s->e && (*q == '+' || *q == '-'))
			x_sign = *q++ == '-' ? -1 : 1;
		if (q >= s->e || !is_digit(*q))
			return false;
		for (; q < s->e && is_digit(*q); q++)
			if (++x_digits <= 4)
				x = 10 * x + (*q - '0');
		*is_int = false;
	}
	len = (size_t)(q - start);
	if (*is_int) {
		if (digits > 18)
			return false;
		*iv = neg ? -(long long)m : (long long)m;
		*dv = (double)*iv;
		s->p = q;
		return true;
	}
	e = x_sign * x - frac;
	if (FLT_EVAL_METHOD == 0 && digits <= 19 && x_digits <= 4 && m <= (1ull << 53) &&
	    e >= -22 && e <= 22) {
		/* each operation rounds to a double (FLT_EVAL_METHOD 0) */
		double v = e < 0 ? (double)m / pow10[-e] : (double)m * pow10[e];
		*dv = neg ? -v : v;
	} else {
		char *end;
		if (len >= sizeof(buf))
			return false;
		memcpy(buf, start, len);
		buf[len] = '\0';
		*dv = strtod(buf, &end);
		/* (a decimal point other than '.' would stop it early) */
		if (end != buf + len || isinf(*dv))
			return false;
	}
	s->p = q;
	return true;
}

static bool number(struct scan *s, bool *is_int, long long *iv, double *dv)
{
	ws(s);
#ifdef NUMBER_WORDS
	if (s->e - s->p >= 9 && number_words(s, is_int, iv, dv))
		return true;
#endif
	return number_bytes(s, is_int, iv, dv);
}

bool pg_history_number(const char *text, size_t len, double *out)
{
	/* followed by NULs, which end a number as the text's end does, so
	 * that a short one is read a word at a time as it is in a line */
	char buf[64 + 16] = { 0 };
	struct scan s = { buf, buf + len + 16 };
	bool is_int;
	long long iv;

	if (len > 64) {
		s = (struct scan){ text, text + len };
		return number(&s, &is_int, &iv, out) && s.p == s.e;
	}
	if (len)
		memcpy(buf, text, len);
	return number(&s, &is_int, &iv, out) && s.p == buf + len;
}

/* A value of a key this reader does not use: a scalar. */
static bool skip_scalar(struct scan *s)
{
	const char *v;
	size_t len;
	bool is_int;
	long long iv;
	double dv;

	if (peek(s, '"'))
		return string(s, &v, &len);
	if (word(s, "null") || word(s, "true") || word(s, "false"))
		return true;
	return number(s, &is_int, &iv, &dv);
}

enum key {
	K_FORMAT,
	K_COMMIT,
	K_DATE,
	K_BUILD_URL,
	K_GPU,
	K_SUITE,
	K_TEST,
	K_QPS,
	K_MAX_CONCURRENCY,
	K_REPEATS,
	K_RUN,
	K_METRICS,
	K_REGRESSED,
	K_OTHER
};

static const char *const key_names[K_OTHER] = {
	"format", "commit",          "date",    "build_url", "gpu",     "suite",     "test",
	"qps",    "max_concurrency", "repeats", "run",       "metrics", "regressed",
};

/* A metric of a line: its name and its median. */
struct mval {
	const char *key;
	size_t len;
	double median;
};

/*
 * A key as an earlier line gave it at the same place of its object, from
 * the end of the value before (its comma) through the colon (for a
 * metric, through its opening bracket). The lines of a file give the
 * same keys in the same order: bytes equal to these are read as the
 * scanner read them, without it. what: at the top level the key (enum
 * key); for a metric the registry metric it names in suite (-1 none),
 * suite -1 until looked up.
 */
struct key_seen {
	const char *lit;   /* in the text, an earlier line */
	size_t len;        /* of lit */
	size_t koff, klen; /* the key in it */
	int what, suite;
};

struct line_state {
	struct mval *mv;
	size_t n_mv, cap_mv;
	double *xs;
	size_t cap_xs;
	unsigned *seen; /* per registry metric: the line that set it */
	bool *present;  /* per registry metric: a line set a value (not NAN) */
	unsigned line;
	struct key_seen *top, *met; /* by place: the record's keys, its metrics' */
	size_t n_top, cap_top, n_met, cap_met;
	struct str_seen strs[LINE_STRS]; /* the line before's */
};

enum { KEY_FAIL, KEY_NONE, KEY_READ };

/* memcmp(a, b, n) == 0 for the few dozen bytes of a key, a word at a
 * time without a call (the last word overlaps the one before). */
static bool same_bytes(const char *a, const char *b, size_t n)
{
	uint64_t x, y;

	if (n < 8)
		return !memcmp(a, b, n);
	for (size_t i = 0; i + 8 < n; i += 8) {
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			return false;
	}
	memcpy(&x, a + n - 8, 8);
	memcpy(&y, b + n - 8, 8);
	return x == y;
}

/*
 * The i-th key of an object, with the comma before it (for i > 0) and
 * what follows it through the colon (and open, when not NUL): as cache[i]
 * when its bytes are there (*same), else by the scanner, then kept in
 * cache[i] (what and suite -1). KEY_NONE when no comma follows the member
 * before: the object's last.
 */
static int key_at(struct scan *s, struct key_seen **cache, size_t *n, size_t *cap, size_t i,
		  char open, const char **k, size_t *klen, bool *same)
{
	const char *start = s->p;
	size_t koff;

	if (i < *n) {
		const struct key_seen *c = &(*cache)[i];
		*same = (size_t)(s->e - start) >= c->len && same_bytes(start, c->lit, c->len);
		if (*same) {
			*k = start + c->koff;
			*klen = c->klen;
			s->p += c->len;
			return KEY_READ;
		}
	}
	*same = false;
	if (i && !expect(s, ','))
		return KEY_NONE;
	ws(s);
	koff = (size_t)(s->p - start) + 1;
	if (!string(s, k, klen) || !expect(s, ':') || (open && !expect(s, open)))
		return KEY_FAIL;
	pg_grow((void **)cache, cap, i + 1, sizeof(**cache));
	if (*n <= i)
		*n = i + 1;
	(*cache)[i] = (struct key_seen){ start, (size_t)(s->p - start), koff, *klen, -1, -1 };
	return KEY_READ;
}

/* A metric's values after its '[' through its ']', into st->xs[0..n). */
static bool metric_values(struct scan *s, struct line_state *st, size_t *n)
{
	ws(s);
	if (s->p < s->e && *s->p != ']') {
		do {
			bool is_int;
			long long iv;
			double dv;
			if (word(s, "null"))
				continue;
			if (!number(s, &is_int, &iv, &dv))
				return false;
			if (*n == st->cap_xs)
				pg_grow((void **)&st->xs, &st->cap_xs, *n + 1, sizeof(double));
			st->xs[(*n)++] = dv;
		} while (expect(s, ','));
	}
	return expect(s, ']');
}

/* "metrics": {"id": [numbers or null], ...} */
static bool metrics(struct scan *s, struct line_state *st)
{
	st->n_mv = 0;
	if (!expect(s, '{'))
		return false;
	if (peek(s, '}'))
		return expect(s, '}');
	for (;;) {
		struct mval mv;
		size_t n = 0;
		bool same;
		int got = key_at(s, &st->met, &st->n_met, &st->cap_met, st->n_mv, '[', &mv.key,
				 &mv.len, &same);
		if (got == KEY_NONE)
			break;
		if (got == KEY_FAIL || !metric_values(s, st, &n))
			return false;
		/* (one value, what perfgate mostly records, is its own median) */
		mv.median = n == 1 ? st->xs[0] : pg_cmpstat_median(st->xs, n);
		if (st->n_mv == st->cap_mv)
			pg_grow((void **)&st->mv, &st->cap_mv, st->n_mv + 1, sizeof(mv));
		st->mv[st->n_mv++] = mv;
	}
	return expect(s, '}');
}

static enum key key_of(const char *k, size_t len)
{
	for (int i = 0; i < K_OTHER; i++)
		if (strlen(key_names[i]) == len && !memcmp(key_names[i], k, len))
			return (enum key)i;
	return K_OTHER;
}

/* Is the string at s seen's, quoted: then its copy in *out. */
static bool str_seen_at(struct scan *s, const struct str_seen *seen, char **out)
{
	size_t len = seen->len;

	if (!seen->copy || (size_t)(s->e - s->p) < len + 2 || s->p[0] != '"' ||
	    s->p[len + 1] != '"' || memcmp(s->p + 1, seen->copy, len))
		return false;
	/* (the copy holds no quote: the scanner took it) */
	*out = (char *)seen->copy;
	s->p += len + 2;
	return true;
}

/* A string member the record keeps (NULL for null or ""), interned: the
 * same bytes as the line before's (up) or the same line's of the file
 * before (across) give the same copy without the scanner or the pool's
 * table, else they become both. */
static bool str_member(struct scan *s, struct pg_history_pool *p, struct str_seen *up,
		       struct str_seen *across, char **out)
{
	const char *v;
	size_t len;

	if (word(s, "null")) {
		*out = NULL;
		return true;
	}
	if (str_seen_at(s, up, out) || str_seen_at(s, across, out))
		return true;
	if (!string(s, &v, &len))
		return false;
	*out = len ? (char *)intern(p, v, len) : NULL;
	if (len)
		*up = *across = (struct str_seen){ *out, len };
	return true;
}

/* The registry metric of suite named key (its ids unique in a suite), -1
 * when none. */
static int metric_of(const struct pg_history_pool *p, enum pg_suite_kind suite, const char *key,
		     size_t len)
{
	for (int m = p->first[hash_bytes(key, len) % ID_BUCKETS]; m >= 0; m = p->next[m])
		if (p->all[m].suite == suite && p->id_len[m] == len &&
		    !memcmp(p->all[m].id, key, len))
			return m;
	return -1;
}

/*
 * One line (trimmed, not empty) as a record, and the medians of its
 * metrics in row (nm, NAN where none); false when this reader cannot vouch
 * for what pg_history_parse would make of it.
 */
static bool scan_line(const char *text, size_t len, struct pg_history_rec *r, double *row,
		      struct line_state *st, struct pg_history_pool *p, size_t rec)
{
	struct scan s = { text, text + len };
	struct str_seen *line_strs;
	unsigned seen = 0;
	int suite = -1;
	size_t i = 0;

	memset(r, 0, sizeof(*r));
	r->qps = NAN;
	r->repeats = 1;
	st->n_mv = 0;
	if (p->n_by_line <= rec) {
		pg_grow((void **)&p->by_line, &p->cap_by_line, (rec + 1) * LINE_STRS,
			sizeof(*p->by_line));
		memset(p->by_line + p->n_by_line * LINE_STRS, 0,
		       (rec + 1 - p->n_by_line) * LINE_STRS * sizeof(*p->by_line));
		p->n_by_line = rec + 1;
	}
	line_strs = p->by_line + rec * LINE_STRS;
	if (!expect(&s, '{') || peek(&s, '}'))
		return false;
	for (;;) {
		const char *k;
		size_t klen;
		enum key key;
		bool is_int, ok = true, same;
		long long iv;
		double dv;
		int got = key_at(&s, &st->top, &st->n_top, &st->cap_top, i, '\0', &k, &klen, &same);

		if (got == KEY_NONE)
			break;
		if (got == KEY_FAIL)
			return false;
		key = same ? (enum key)st->top[i].what : key_of(k, klen);
		st->top[i++].what = (int)key;
		if (key != K_OTHER) {
			if (seen & (1u << key))
				return false; /* the last one would win */
			seen |= 1u << key;
		}
		switch (key) {
		case K_FORMAT:
			ok = number(&s, &is_int, &iv, &dv) && is_int && iv >= 1 &&
			     iv <= PG_HISTORY_FORMAT;
			break;
		case K_COMMIT:
			ok = str_member(&s, p, &st->strs[0], &line_strs[0], &r->commit);
			break;
		case K_DATE:
			ok = str_member(&s, p, &st->strs[1], &line_strs[1], &r->date);
			break;
		case K_BUILD_URL:
			ok = str_member(&s, p, &st->strs[2], &line_strs[2], &r->build_url);
			break;
		case K_GPU:
			ok = str_member(&s, p, &st->strs[3], &line_strs[3], &r->gpu);
			break;
		case K_TEST:
			ok = str_member(&s, p, &st->strs[4], &line_strs[4], &r->test);
			break;
		case K_RUN:
			ok = str_member(&s, p, &st->strs[5], &line_strs[5], &r->run);
			break;
		case K_REGRESSED:
			ok = str_member(&s, p, &st->strs[6], &line_strs[6], &r->regressed);
			break;
		case K_SUITE: {
			char name[32];
			ok = string(&s, &k, &klen) && klen < sizeof(name);
			if (ok) {
				memcpy(name, k, klen);
				name[klen] = '\0';
				suite = pg_suite_kind_parse(name);
				ok = suite >= 0;
			}
			break;
		}
		case K_QPS:
			if (!word(&s, "null")) {
				ok = number(&s, &is_int, &iv, &dv);
				r->qps = dv;
			}
			break;
		case K_MAX_CONCURRENCY:
			if (!word(&s, "null")) {
				ok = number(&s, &is_int, &iv, &dv) && is_int;
				r->max_concurrency = (long)iv;
			}
			break;
		case K_REPEATS:
			if (!word(&s, "null")) {
				ok = number(&s, &is_int, &iv, &dv) && is_int;
				r->repeats = (long)iv;
			}
			break;
		case K_METRICS:
			ok = metrics(&s, st);
			break;
		default:
			ok = skip_scalar(&s);
			break;
		}
		if (!ok)
			return false;
	}
	if (!expect(&s, '}'))
		return false;
	ws(&s);
	if (s.p != s.e || suite < 0 || !(seen & (1u << K_METRICS)))
		return false;
	r->suite = (enum pg_suite_kind)suite;
	/* each registry metric of the suite by its id, as json_object_get
	 * finds it: the metric the same key at the same place named on the
	 * line before, else looked up */
	st->line++;
	for (size_t m = 0; m < p->nm; m++)
		row[m] = NAN;
	for (size_t j = 0; j < st->n_mv; j++) {
		struct key_seen *c = &st->met[j];
		int m;
		if (c->suite != suite) {
			c->what = metric_of(p, r->suite, st->mv[j].key, st->mv[j].len);
			c->suite = suite;
		}
		if ((m = c->what) < 0)
			continue;
		if (st->seen[m] == st->line)
			return false; /* given twice: the last one would win */
		st->seen[m] = st->line;
		row[m] = st->mv[j].median;
		st->present[m] |= !isnan(row[m]);
	}
	return true;
}

int pg_history_parse_compact(struct pg_history *h, const char *point, const char *text, size_t len,
			     const char *source, const struct pg_policy *policy,
			     struct pg_history_pool *p, struct pg_error *err)
{
	struct line_state st = { 0 };
	double *rows = NULL;
	size_t lines = 1, off = 0;
	bool fast = true;

	if (p->nm >= PG_HISTORY_NO_SLOT) {
		/* a registry too large for a slot map: slimmed, not compact */
		int rc = pg_history_parse(h, point, text, len, source, err);
		if (rc == 0)
			pg_history_slim(h, policy);
		return rc;
	}
	if (!h->point)
		h->point = pg_xstrdup(point);
	if (!p->ids_unique) /* a key may name two metrics, a cached lookup one */
		return parse_slow(h, point, text, len, source, policy, p, err);
	for (const char *q = text; len && (q = memchr(q, '\n', len - (size_t)(q - text))); q++)
		lines++;
	h->recs = pg_xrealloc(h->recs, lines * sizeof(*h->recs));
	h->cap = lines;
	h->n = 0;
	st.seen = pg_xcalloc(p->nm ? p->nm : 1, sizeof(unsigned));
	st.present = pg_xcalloc(p->nm ? p->nm : 1, sizeof(bool));
	rows = pg_xmalloc((lines * p->nm + 1) * sizeof(double)); /* a row a line at most */
	while (fast && off < len) {
		const char *start = text + off, *nl = memchr(start, '\n', len - off);
		size_t l = nl ? (size_t)(nl - start) : len - off;

		off += l + (nl ? 1 : 0);
		while (l && (start[l - 1] == '\r' || start[l - 1] == ' '))
			l--;
		if (!l)
			continue;
		fast = scan_line(start, l, &h->recs[h->n], rows + h->n * p->nm, &st, p, h->n);
		h->n += fast;
	}
	free(st.mv);
	free(st.xs);
	free(st.seen);
	free(st.top);
	free(st.met);
	if (!fast) {
		free(st.present);
		free(rows);
		h->n = 0;
		return parse_slow(h, point, text, len, source, policy, p, err);
	}
	if (h->n < h->cap) {
		h->recs = pg_xrealloc(h->recs, (h->n ? h->n : 1) * sizeof(*h->recs));
		h->cap = h->n ? h->n : 1;
	}
	finish(h, rows, st.present, policy, p);
	free(st.present);
	free(rows);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Sameness                                                            */

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool same_num(double a, double b)
{
	return (isnan(a) && isnan(b)) || !memcmp(&a, &b, sizeof(a));
}

bool pg_history_same(const struct pg_history *a, const struct pg_history *b, char *why, size_t size)
{
	size_t nm;
	const struct pg_metric *all = pg_metrics_all(&nm);

	if (!same_str(a->point, b->point) || a->n != b->n) {
		snprintf(why, size, "point %s with %zu records, %s with %zu",
			 a->point ? a->point : "(none)", a->n, b->point ? b->point : "(none)",
			 b->n);
		return false;
	}
	for (size_t k = 0; k < a->n; k++) {
		const struct pg_history_rec *x = &a->recs[k], *y = &b->recs[k];
		const char *field = NULL;
		if (!same_str(x->commit, y->commit))
			field = "commit";
		else if (!same_str(x->date, y->date))
			field = "date";
		else if (!same_str(x->build_url, y->build_url))
			field = "build_url";
		else if (!same_str(x->gpu, y->gpu))
			field = "gpu";
		else if (!same_str(x->test, y->test))
			field = "test";
		else if (!same_str(x->run, y->run))
			field = "run";
		else if (!same_str(x->regressed, y->regressed))
			field = "regressed";
		else if (x->suite != y->suite)
			field = "suite";
		else if (!same_num(x->qps, y->qps))
			field = "qps";
		else if (x->max_concurrency != y->max_concurrency)
			field = "max_concurrency";
		else if (x->repeats != y->repeats)
			field = "repeats";
		for (size_t m = 0; m < nm && !field; m++)
			if (!same_num(pg_history_rec_value(x, &all[m]),
				      pg_history_rec_value(y, &all[m])))
				field = all[m].id;
		if (field) {
			snprintf(why, size, "record %zu: %s differs", k + 1, field);
			return false;
		}
	}
	return true;
}
