#include "telemetry/prom.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * While parsing, strings live in one arena and are named by offsets (the
 * arena moves as it grows); the public arrays of pointers are built once at
 * the end. A scrape of vLLM is a few thousand samples every second: one
 * allocation per string would be most of the cost.
 */
struct lab {
	size_t name, value; /* arena offsets */
};

struct fam {
	size_t name;
	size_t help; /* SIZE_MAX: none */
	enum pg_prom_type type;
	bool typed;
	bool has_samples;
	bool closed; /* another family's lines came after its samples */
};

struct smp {
	size_t name;
	size_t family;
	size_t lab0, nlab;
	double value;
	bool has_ts;
	int64_t ts;
	int line;
	uint64_t hash;
};

struct pg_prom_store {
	struct pg_buf arena;
	struct lab *labs;
	size_t n_labs, cap_labs;
	struct fam *fams;
	size_t n_fams, cap_fams;
	struct smp *smps;
	size_t n_smps, cap_smps;
	/* series seen, for duplicates: open addressing over sample indexes + 1 */
	size_t *seen;
	size_t cap_seen;
	struct pg_prom_label *labels; /* built at the end */
	/* the bucket before, to check that counts never go down */
	size_t last_bucket_family;
	uint64_t last_bucket_series;
	double last_bucket_le, last_bucket_value;
	bool have_bucket;
	size_t current; /* family of the latest lines; SIZE_MAX: none */
	char first_error[300];
};

const char *pg_prom_type_name(enum pg_prom_type t)
{
	switch (t) {
	case PG_PROM_COUNTER:
		return "counter";
	case PG_PROM_GAUGE:
		return "gauge";
	case PG_PROM_HISTOGRAM:
		return "histogram";
	case PG_PROM_SUMMARY:
		return "summary";
	case PG_PROM_UNTYPED:
		break;
	}
	return "untyped";
}

/* ---- the line reader ---- */

struct cursor {
	const char *p, *end;
	int line;
	struct pg_prom_store *st;
	char why[200]; /* this line's problem */
};

__attribute__((format(printf, 2, 3))) static int bad(struct cursor *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
	return -1;
}

static void skip_blanks(struct cursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
		c->p++;
}

static bool at_blank_or_end(const struct cursor *c)
{
	return c->p >= c->end || *c->p == ' ' || *c->p == '\t';
}

static bool name_start(char ch, bool metric)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
	       (metric && ch == ':');
}

static bool name_char(char ch, bool metric)
{
	return name_start(ch, metric) || (ch >= '0' && ch <= '9');
}

static size_t arena_add(struct pg_prom_store *st, const char *s, size_t len)
{
	size_t off = st->arena.len;

	/* a copy of a string already in the arena: growing it may move it */
	if (s >= st->arena.ptr && s < st->arena.ptr + st->arena.len) {
		size_t from = (size_t)(s - st->arena.ptr);
		pg_buf_grow(&st->arena, len + 1);
		s = st->arena.ptr + from;
	}

	pg_buf_add(&st->arena, s, len);
	pg_buf_putc(&st->arena, '\0');
	return off;
}

static const char *str(const struct pg_prom_store *st, size_t off)
{
	return st->arena.ptr + off;
}

/*
 * A quoted string at the cursor (after its opening quote), into the arena.
 * label: the escapes of label values (only \\ \" \n); else those of
 * quoted names, which are the same.
 */
static int quoted(struct cursor *c, size_t *off)
{
	struct pg_buf *a = &c->st->arena;

	*off = a->len;
	for (;;) {
		if (c->p >= c->end) {
			pg_buf_truncate(a, *off);
			return bad(c, "a quoted string is not terminated");
		}
		char ch = *c->p++;
		if (ch == '"')
			break;
		if (ch == '\0') {
			pg_buf_truncate(a, *off);
			return bad(c, "a NUL byte in a quoted string");
		}
		if (ch == '\\') {
			if (c->p >= c->end) {
				pg_buf_truncate(a, *off);
				return bad(c, "a quoted string is not terminated");
			}
			ch = *c->p++;
			if (ch == 'n')
				ch = '\n';
			else if (ch != '\\' && ch != '"') {
				pg_buf_truncate(a, *off);
				return bad(c, "invalid escape '\\%c' in a quoted string", ch);
			}
		}
		pg_buf_putc(a, ch);
	}
	pg_buf_putc(a, '\0');
	return 0;
}

/* A bare name (metric: ':' allowed) or a quoted one, into the arena. */
static int name(struct cursor *c, bool metric, size_t *off)
{
	const char *s = c->p;

	if (c->p < c->end && *c->p == '"') {
		c->p++;
		return quoted(c, off);
	}
	if (c->p >= c->end || !name_start(*c->p, metric))
		return bad(c, "expected a %s name", metric ? "metric" : "label");
	while (c->p < c->end && name_char(*c->p, metric))
		c->p++;
	*off = arena_add(c->st, s, (size_t)(c->p - s));
	return 0;
}

/* The token up to the next blank, as a NUL-terminated copy in tok. */
static int token(struct cursor *c, char *tok, size_t size, const char *what)
{
	const char *s = c->p;
	size_t n;

	while (!at_blank_or_end(c))
		c->p++;
	n = (size_t)(c->p - s);
	if (n == 0)
		return bad(c, "expected %s", what);
	if (n >= size || memchr(s, '\0', n))
		return bad(c, "%s '%.40s' is not a number", what, s);
	memcpy(tok, s, n);
	tok[n] = '\0';
	return 0;
}

/* Go's strconv.ParseFloat, which the format's reference parser uses:
 * decimal and hex floats, "NaN", "Inf", "+Inf", "-Inf", "infinity" in any
 * case; strtod also takes "nan(...)", which Go refuses. */
static int parse_value(const char *tok, double *out)
{
	char *end;

	if (strchr(tok, '('))
		return -1;
	errno = 0;
	*out = strtod(tok, &end);
	if (end == tok || *end)
		return -1;
	return 0;
}

/* ---- families ---- */

static size_t family_find(const struct pg_prom_store *st, const char *nm)
{
	/* the current family first: samples follow their TYPE line */
	if (st->current != SIZE_MAX && !strcmp(str(st, st->fams[st->current].name), nm))
		return st->current;
	for (size_t i = st->n_fams; i-- > 0;)
		if (!strcmp(str(st, st->fams[i].name), nm))
			return i;
	return SIZE_MAX;
}

static size_t family_add(struct pg_prom_store *st, const char *nm, size_t len)
{
	struct fam f = { 0 };

	f.name = arena_add(st, nm, len);
	f.help = SIZE_MAX;
	f.type = PG_PROM_UNTYPED;
	PG_ARRAY_PUSH(st->fams, st->n_fams, st->cap_fams, f);
	return st->n_fams - 1;
}

/* A family's lines start here: the one before is over. */
static int enter_family(struct cursor *c, size_t fi)
{
	struct pg_prom_store *st = c->st;

	if (st->current == fi)
		return 0;
	if (st->current != SIZE_MAX && st->fams[st->current].has_samples)
		st->fams[st->current].closed = true;
	if (st->fams[fi].closed)
		return bad(c, "the samples of '%s' are not together", str(st, st->fams[fi].name));
	st->current = fi;
	return 0;
}

/* The family a sample belongs to: a declared family of that very name,
 * else the histogram, summary or counter whose suffixed sample it is, else
 * one of its own (untyped). */
static size_t family_of(struct pg_prom_store *st, const char *nm)
{
	static const struct {
		const char *suffix;
		unsigned types; /* 1 << pg_prom_type */
	} suffixes[] = {
		{ "_bucket", 1u << PG_PROM_HISTOGRAM },
		{ "_sum", (1u << PG_PROM_HISTOGRAM) | (1u << PG_PROM_SUMMARY) },
		{ "_count", (1u << PG_PROM_HISTOGRAM) | (1u << PG_PROM_SUMMARY) },
		{ "_total", 1u << PG_PROM_COUNTER },
		{ "_created",
		  (1u << PG_PROM_COUNTER) | (1u << PG_PROM_HISTOGRAM) | (1u << PG_PROM_SUMMARY) },
	};
	size_t exact = family_find(st, nm), len = strlen(nm);

	if (exact != SIZE_MAX && st->fams[exact].typed)
		return exact;
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t sl = strlen(suffixes[i].suffix);
		char base[256];
		size_t fi;

		if (len <= sl || len - sl >= sizeof(base) ||
		    strcmp(nm + len - sl, suffixes[i].suffix))
			continue;
		memcpy(base, nm, len - sl);
		base[len - sl] = '\0';
		fi = family_find(st, base);
		if (fi != SIZE_MAX && (suffixes[i].types & (1u << st->fams[fi].type)))
			return fi;
	}
	if (exact != SIZE_MAX)
		return exact;
	return family_add(st, nm, len);
}

/* ---- comments ---- */

static int comment(struct cursor *c)
{
	struct pg_prom_store *st = c->st;
	static const char *const types[] = { "untyped", "counter", "gauge", "histogram",
					     "summary" };
	const char *kw;
	size_t nm, fi;
	bool help;

	/* "#HELP" is a comment: the server's own lexer wants a blank first */
	if (!at_blank_or_end(c))
		return 0;
	skip_blanks(c);
	kw = c->p;
	while (c->p < c->end && *c->p != ' ' && *c->p != '\t')
		c->p++;
	if (c->p - kw == 4 && !memcmp(kw, "HELP", 4))
		help = true;
	else if (c->p - kw == 4 && !memcmp(kw, "TYPE", 4))
		help = false;
	else
		return 0; /* any other comment */
	if (at_blank_or_end(c) && c->p >= c->end)
		return 0; /* "# HELP" alone: a comment */
	skip_blanks(c);
	if (name(c, true, &nm))
		return -1;
	if (!at_blank_or_end(c))
		return bad(c, "expected a blank after the metric name");
	fi = family_find(st, str(st, nm));
	if (fi == SIZE_MAX)
		fi = family_add(st, str(st, nm), strlen(str(st, nm)));
	if (enter_family(c, fi))
		return -1;
	skip_blanks(c);
	if (help) {
		struct pg_buf *a = &st->arena;
		size_t off;

		if (st->fams[fi].help != SIZE_MAX)
			return bad(c, "a second HELP line for '%s'", str(st, st->fams[fi].name));
		off = a->len;
		while (c->p < c->end) {
			char ch = *c->p++;
			if (ch == '\\' && c->p < c->end && (*c->p == '\\' || *c->p == 'n')) {
				ch = *c->p == 'n' ? '\n' : '\\';
				c->p++;
			}
			pg_buf_putc(a, ch);
		}
		pg_buf_putc(a, '\0');
		st->fams[fi].help = off;
		return 0;
	}
	{
		const char *t = c->p;
		size_t tl, k;

		while (!at_blank_or_end(c))
			c->p++;
		tl = (size_t)(c->p - t);
		skip_blanks(c);
		if (c->p < c->end)
			return bad(c, "unexpected text after the TYPE of '%s'",
				   str(st, st->fams[fi].name));
		for (k = 0; k < sizeof(types) / sizeof(types[0]); k++)
			if (strlen(types[k]) == tl && !memcmp(types[k], t, tl))
				break;
		if (k == sizeof(types) / sizeof(types[0]))
			return bad(c, "unknown metric type '%.*s' for '%s'",
				   (int)(tl > 40 ? 40 : tl), t, str(st, st->fams[fi].name));
		if (st->fams[fi].typed)
			return bad(c, "a second TYPE line for '%s'", str(st, st->fams[fi].name));
		if (st->fams[fi].has_samples)
			return bad(c, "the TYPE of '%s' comes after its samples",
				   str(st, st->fams[fi].name));
		st->fams[fi].type = (enum pg_prom_type)k;
		st->fams[fi].typed = true;
	}
	return 0;
}

/* ---- samples ---- */

static uint64_t fnv(uint64_t h, const char *s)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	h ^= 0xff; /* a separator no string holds */
	return h * 0x100000001b3ULL;
}

/* Labels sorted by name (insertion sort: a handful each), into idx. */
static void sort_labels(const struct pg_prom_store *st, size_t lab0, size_t n, size_t *idx)
{
	for (size_t i = 0; i < n; i++) {
		size_t j = i;
		idx[i] = lab0 + i;
		while (j > 0 && strcmp(str(st, st->labs[idx[j - 1]].name),
				       str(st, st->labs[idx[j]].name)) > 0) {
			size_t t = idx[j];
			idx[j] = idx[j - 1];
			idx[j - 1] = t;
			j--;
		}
	}
}

/* The series' identity: its name and label set in name order, skipping
 * the label called skip (NULL: none). */
static uint64_t series_hash(const struct pg_prom_store *st, const char *nm, const size_t *idx,
			    size_t n, const char *skip)
{
	uint64_t h = fnv(0xcbf29ce484222325ULL, nm);

	for (size_t i = 0; i < n; i++) {
		const struct lab *l = &st->labs[idx[i]];
		if (skip && !strcmp(str(st, l->name), skip))
			continue;
		h = fnv(fnv(h, str(st, l->name)), str(st, l->value));
	}
	return h;
}

static bool same_series(const struct pg_prom_store *st, const struct smp *a, const struct smp *b)
{
	if (a->nlab != b->nlab || strcmp(str(st, a->name), str(st, b->name)))
		return false;
	for (size_t i = 0; i < a->nlab; i++) {
		const struct lab *x = &st->labs[a->lab0 + i];
		size_t j;
		for (j = 0; j < b->nlab; j++) {
			const struct lab *y = &st->labs[b->lab0 + j];
			if (!strcmp(str(st, x->name), str(st, y->name))) {
				if (strcmp(str(st, x->value), str(st, y->value)))
					return false;
				break;
			}
		}
		if (j == b->nlab)
			return false;
	}
	return true;
}

/* Whether the series of s was seen before; remembers it when not. */
static bool seen_before(struct pg_prom_store *st, size_t si)
{
	const struct smp *s = &st->smps[si];
	size_t mask, i;

	if ((st->n_smps + 1) * 2 > st->cap_seen) {
		size_t cap = st->cap_seen ? st->cap_seen * 2 : 256;
		size_t *old = st->seen, old_cap = st->cap_seen;
		st->seen = pg_xcalloc(cap, sizeof(*st->seen));
		st->cap_seen = cap;
		for (size_t k = 0; k < old_cap; k++) {
			if (!old[k])
				continue;
			for (i = st->smps[old[k] - 1].hash & (cap - 1); st->seen[i];
			     i = (i + 1) & (cap - 1))
				;
			st->seen[i] = old[k];
		}
		free(old);
	}
	mask = st->cap_seen - 1;
	for (i = s->hash & mask; st->seen[i]; i = (i + 1) & mask) {
		const struct smp *o = &st->smps[st->seen[i] - 1];
		if (o->hash == s->hash && same_series(st, o, s))
			return true;
	}
	st->seen[i] = si + 1;
	return false;
}

static int labels(struct cursor *c, size_t *metric_name, size_t *nlab)
{
	struct pg_prom_store *st = c->st;
	size_t lab0 = st->n_labs;

	c->p++; /* '{' */
	for (;;) {
		struct lab l;
		bool was_quoted;

		skip_blanks(c);
		if (c->p >= c->end)
			return bad(c, "the label set is not closed");
		if (*c->p == '}') {
			c->p++;
			break;
		}
		was_quoted = *c->p == '"';
		if (name(c, false, &l.name))
			return -1;
		skip_blanks(c);
		if (was_quoted && *metric_name == SIZE_MAX && st->n_labs == lab0 &&
		    (c->p >= c->end || *c->p == ',' || *c->p == '}')) {
			/* {"metric.name", ...}: the quoted metric name */
			*metric_name = l.name;
		} else {
			if (c->p >= c->end || *c->p != '=')
				return bad(c, "expected '=' after label '%s'", str(st, l.name));
			c->p++;
			skip_blanks(c);
			if (c->p >= c->end || *c->p != '"')
				return bad(c, "the value of label '%s' is not quoted",
					   str(st, l.name));
			c->p++;
			if (quoted(c, &l.value)) {
				char why[sizeof(c->why)];
				snprintf(why, sizeof(why), "%s", c->why);
				return bad(c, "label '%s': %s", str(st, l.name), why);
			}
			for (size_t i = lab0; i < st->n_labs; i++)
				if (!strcmp(str(st, st->labs[i].name), str(st, l.name)))
					return bad(c, "label '%s' appears twice", str(st, l.name));
			PG_ARRAY_PUSH(st->labs, st->n_labs, st->cap_labs, l);
		}
		skip_blanks(c);
		if (c->p < c->end && *c->p == ',') {
			c->p++;
			continue;
		}
		if (c->p < c->end && *c->p == '}') {
			c->p++;
			break;
		}
		return bad(c, "expected ',' or '}' in the label set");
	}
	*nlab = st->n_labs - lab0;
	return 0;
}

static int sample(struct cursor *c)
{
	struct pg_prom_store *st = c->st;
	struct smp s;
	size_t nm = SIZE_MAX, idx_small[16], *idx = idx_small;
	char tok[128];
	struct fam *f;
	const char *nmstr;
	int rc = -1;

	memset(&s, 0, sizeof(s));
	s.line = c->line;
	s.lab0 = st->n_labs;
	if (*c->p != '{' && name(c, true, &nm))
		return -1;
	{
		const char *before = c->p;
		skip_blanks(c);
		if (c->p < c->end && *c->p == '{') {
			if (labels(c, &nm, &s.nlab))
				return -1;
		} else {
			c->p = before;
		}
	}
	if (nm == SIZE_MAX)
		return bad(c, "a sample without a metric name");
	s.name = nm;
	nmstr = str(st, nm);
	if (c->p >= c->end || !at_blank_or_end(c))
		return bad(c, "expected a blank before the value of '%s'", nmstr);
	skip_blanks(c);
	if (token(c, tok, sizeof(tok), "a value") || parse_value(tok, &s.value))
		return c->why[0] ? -1
				 : bad(c, "the value '%s' of '%s' is not a number", tok, nmstr);
	skip_blanks(c);
	if (c->p < c->end) {
		long long ts;
		char *end;
		if (token(c, tok, sizeof(tok), "a timestamp"))
			return -1;
		errno = 0;
		ts = strtoll(tok, &end, 10);
		if (*end || errno)
			return bad(c, "the timestamp '%s' of '%s' is not an integer", tok, nmstr);
		s.has_ts = true;
		s.ts = ts;
		skip_blanks(c);
		if (c->p < c->end)
			return bad(c, "unexpected text after the sample of '%s'", nmstr);
	}

	s.family = family_of(st, nmstr);
	if (enter_family(c, s.family))
		return -1;
	f = &st->fams[s.family];
	nmstr = str(st, nm); /* the arena may have moved */
	if (s.nlab > sizeof(idx_small) / sizeof(idx_small[0]))
		idx = pg_xmalloc(s.nlab * sizeof(*idx));
	sort_labels(st, s.lab0, s.nlab, idx);
	s.hash = series_hash(st, nmstr, idx, s.nlab, NULL);

	if (f->type == PG_PROM_HISTOGRAM || f->type == PG_PROM_SUMMARY) {
		size_t fl = strlen(str(st, f->name));
		const char *suffix = nmstr + fl;
		const char *need = NULL;
		if (f->type == PG_PROM_HISTOGRAM && !strcmp(suffix, "_bucket"))
			need = "le";
		else if (f->type == PG_PROM_SUMMARY && !*suffix)
			need = "quantile";
		else if (f->type == PG_PROM_HISTOGRAM && !*suffix) {
			bad(c, "histogram '%s' has no sample of its bare name", nmstr);
			goto done;
		}
		if (need) {
			const char *v = NULL;
			double q;
			for (size_t i = 0; i < s.nlab; i++)
				if (!strcmp(str(st, st->labs[s.lab0 + i].name), need))
					v = str(st, st->labs[s.lab0 + i].value);
			if (!v) {
				bad(c, "'%s' has no '%s' label", nmstr, need);
				goto done;
			}
			if (strlen(v) >= sizeof(tok) || parse_value(v, &q)) {
				bad(c, "'%s': %s=\"%.40s\" is not a number", nmstr, need, v);
				goto done;
			}
			if (f->type == PG_PROM_HISTOGRAM) {
				uint64_t series = series_hash(st, nmstr, idx, s.nlab, "le");
				if (st->have_bucket && st->last_bucket_family == s.family &&
				    st->last_bucket_series == series && q > st->last_bucket_le &&
				    s.value < st->last_bucket_value) {
					bad(c, "the buckets of '%s' go down at le=\"%s\"", nmstr,
					    v);
					goto done;
				}
				st->have_bucket = true;
				st->last_bucket_family = s.family;
				st->last_bucket_series = series;
				st->last_bucket_le = q;
				st->last_bucket_value = s.value;
			}
		}
	}
	if (f->type == PG_PROM_COUNTER && s.value < 0) {
		bad(c, "counter '%s' is negative (%s)", nmstr, tok);
		goto done;
	}
	PG_ARRAY_PUSH(st->smps, st->n_smps, st->cap_smps, s);
	if (seen_before(st, st->n_smps - 1)) {
		st->n_smps--;
		bad(c, "'%s' with these labels appears twice", nmstr);
		goto done;
	}
	f->has_samples = true;
	rc = 0;
done:
	if (idx != idx_small)
		free(idx);
	return rc;
}

/* ---- the whole text ---- */

static void store_error(struct pg_prom *p, struct cursor *c)
{
	p->n_errors++;
	if (!c->st->first_error[0])
		snprintf(c->st->first_error, sizeof(c->st->first_error), "line %d: %s", c->line,
			 c->why[0] ? c->why : "cannot parse");
}

static void build(struct pg_prom *p)
{
	struct pg_prom_store *st = p->store;
	const char *a = st->arena.ptr;

	p->n_families = st->n_fams;
	p->families = pg_xcalloc(st->n_fams + 1, sizeof(*p->families));
	for (size_t i = 0; i < st->n_fams; i++) {
		p->families[i].name = a + st->fams[i].name;
		p->families[i].help = st->fams[i].help == SIZE_MAX ? NULL : a + st->fams[i].help;
		p->families[i].type = st->fams[i].type;
		p->families[i].typed = st->fams[i].typed;
	}
	st->labels = pg_xcalloc(st->n_labs + 1, sizeof(*st->labels));
	for (size_t i = 0; i < st->n_labs; i++) {
		st->labels[i].name = a + st->labs[i].name;
		st->labels[i].value = a + st->labs[i].value;
	}
	p->n_samples = st->n_smps;
	p->samples = pg_xcalloc(st->n_smps + 1, sizeof(*p->samples));
	for (size_t i = 0; i < st->n_smps; i++) {
		const struct smp *s = &st->smps[i];
		struct pg_prom_sample *o = &p->samples[i];
		o->name = a + s->name;
		o->family = s->family;
		o->labels = st->labels + s->lab0;
		o->n_labels = s->nlab;
		o->value = s->value;
		o->has_timestamp = s->has_ts;
		o->timestamp_ms = s->ts;
		o->line = s->line;
	}
}

int pg_prom_parse(struct pg_prom *p, const char *text, size_t len, struct pg_error *err)
{
	struct pg_prom_store *st = pg_xcalloc(1, sizeof(*st));
	const char *s = text, *end = text + len;
	struct cursor c;

	memset(p, 0, sizeof(*p));
	p->store = st;
	pg_buf_init(&st->arena);
	st->current = SIZE_MAX;
	memset(&c, 0, sizeof(c));
	c.st = st;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *le = nl ? nl : end;
		size_t labs0 = st->n_labs, arena0 = st->arena.len;
		int rc;

		c.line++;
		c.p = s;
		c.end = le;
		c.why[0] = '\0';
		if (c.end > c.p && c.end[-1] == '\r')
			c.end--;
		skip_blanks(&c);
		if (c.p >= c.end) {
			rc = 0;
		} else if (!nl) {
			/* a body cut short: the number at its end may be cut too */
			rc = bad(&c, "the last line has no line feed (cut short?)");
		} else if (*c.p == '#') {
			c.p++;
			rc = comment(&c);
		} else {
			rc = sample(&c);
		}
		if (rc) {
			/* what the bad line left in the arena and labels goes */
			st->n_labs = labs0;
			if (st->arena.len > arena0 && st->n_fams &&
			    st->fams[st->n_fams - 1].name >= arena0) {
				/* it also created a family: keep that one whole */
			} else {
				pg_buf_truncate(&st->arena, arena0);
			}
			store_error(p, &c);
		}
		s = nl ? nl + 1 : end;
	}
	build(p);
	if (p->n_errors)
		return pg_error_set(err, PG_ECONFIG, "%s%s", st->first_error,
				    p->n_errors > 1 ? " (and more)" : "");
	return 0;
}

void pg_prom_release(struct pg_prom *p)
{
	struct pg_prom_store *st = p->store;

	if (st) {
		pg_buf_release(&st->arena);
		free(st->labs);
		free(st->fams);
		free(st->smps);
		free(st->seen);
		free(st->labels);
		free(st);
	}
	free(p->families);
	free(p->samples);
	memset(p, 0, sizeof(*p));
}

const struct pg_prom_family *pg_prom_family(const struct pg_prom *p, const char *nm)
{
	for (size_t i = 0; i < p->n_families; i++)
		if (!strcmp(p->families[i].name, nm))
			return &p->families[i];
	return NULL;
}

const char *pg_prom_label(const struct pg_prom_sample *s, const char *nm)
{
	for (size_t i = 0; i < s->n_labels; i++)
		if (!strcmp(s->labels[i].name, nm))
			return s->labels[i].value;
	return NULL;
}

double pg_prom_sum(const struct pg_prom *p, const char *nm, size_t *count)
{
	double sum = 0;
	size_t n = 0;

	for (size_t i = 0; i < p->n_samples; i++) {
		if (strcmp(p->samples[i].name, nm))
			continue;
		n++;
		if (!isnan(p->samples[i].value))
			sum += p->samples[i].value;
	}
	if (count)
		*count = n;
	return n ? sum : NAN;
}

double pg_prom_max(const struct pg_prom *p, const char *nm)
{
	double m = NAN;

	for (size_t i = 0; i < p->n_samples; i++)
		if (!strcmp(p->samples[i].name, nm) && !isnan(p->samples[i].value) &&
		    (isnan(m) || p->samples[i].value > m))
			m = p->samples[i].value;
	return m;
}
