#include "sys/yamldoc.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/strutil.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool is_json_name(const char *file)
{
	return file && pg_str_has_suffix(file, ".json");
}

int pg_ydoc_load(struct pg_ydoc *d, const char *text, size_t len, const char *file,
		 struct pg_error *err)
{
	yaml_parser_t parser;
	yaml_document_t extra;
	int ret = 0;

	memset(d, 0, sizeof(*d));
	d->file = pg_xstrdup(file ? file : "<input>");
	if (!yaml_parser_initialize(&parser))
		return pg_error_set(err, PG_ERR, "%s: cannot initialise the YAML parser", d->file);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &d->doc))
		goto syntax;
	d->loaded = true;
	if (!yaml_document_get_root_node(&d->doc))
		goto done;
	if (!yaml_parser_load(&parser, &extra))
		goto syntax;
	if (yaml_document_get_root_node(&extra)) {
		ret = pg_error_set(
			err, PG_ECONFIG,
			"%s:%zu:%zu: a second YAML document ('---'): put everything in one",
			d->file, extra.start_mark.line + 1, extra.start_mark.column + 1);
	}
	yaml_document_delete(&extra);
	goto done;
syntax:
	ret = pg_error_set(err, PG_ECONFIG, "%s:%zu:%zu: not valid %s: %s", d->file,
			   parser.problem_mark.line + 1, parser.problem_mark.column + 1,
			   is_json_name(file) ? "JSON" : "YAML",
			   parser.problem ? parser.problem : "parse error");
done:
	yaml_parser_delete(&parser);
	return ret;
}

void pg_ydoc_release(struct pg_ydoc *d)
{
	if (d->loaded)
		yaml_document_delete(&d->doc);
	free(d->file);
	memset(d, 0, sizeof(*d));
}

yaml_node_t *pg_ydoc_root(const struct pg_ydoc *d)
{
	return d->loaded ? yaml_document_get_root_node((yaml_document_t *)&d->doc) : NULL;
}

static void path_format(struct pg_buf *out, const struct pg_ypath *p)
{
	if (!p)
		return;
	path_format(out, p->up);
	if (p->key)
		pg_buf_printf(out, "%s%s", out->len ? "." : "", p->key);
	else
		pg_buf_printf(out, "[%zu]", p->index);
}

void pg_ypath_format(struct pg_buf *out, const struct pg_ypath *p)
{
	struct pg_buf tmp = PG_BUF_INIT;

	/* formatted apart so that the '.' rule sees only the path */
	path_format(&tmp, p);
	pg_buf_add(out, tmp.ptr, tmp.len);
	pg_buf_release(&tmp);
}

int pg_ynode_line(const yaml_node_t *n)
{
	return n ? (int)n->start_mark.line + 1 : 0;
}

int pg_ynode_column(const yaml_node_t *n)
{
	return n ? (int)n->start_mark.column + 1 : 0;
}

int pg_ydoc_line(const struct pg_ydoc *d, const yaml_node_t *n)
{
	return d->no_positions ? 0 : pg_ynode_line(n);
}

int pg_ydoc_column(const struct pg_ydoc *d, const yaml_node_t *n)
{
	return d->no_positions ? 0 : pg_ynode_column(n);
}

static void vmsg(struct pg_buf *b, const struct pg_ydoc *d, const yaml_node_t *at,
		 const struct pg_ypath *path, const char *fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));

static void vmsg(struct pg_buf *b, const struct pg_ydoc *d, const yaml_node_t *at,
		 const struct pg_ypath *path, const char *fmt, va_list ap)
{
	if (at && !d->no_positions)
		pg_buf_printf(b, "%s:%d:%d: ", d->file, pg_ynode_line(at), pg_ynode_column(at));
	else
		pg_buf_printf(b, "%s: ", d->file);
	if (path) {
		pg_ypath_format(b, path);
		pg_buf_puts(b, ": ");
	}
	pg_buf_vprintf(b, fmt, ap);
}

int pg_yerr(const struct pg_ydoc *d, const yaml_node_t *at, const struct pg_ypath *path,
	    struct pg_error *err, const char *fmt, ...)
{
	struct pg_buf b = PG_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	vmsg(&b, d, at, path, fmt, ap);
	va_end(ap);
	pg_error_set(err, PG_ECONFIG, "%s", b.ptr);
	pg_buf_release(&b);
	return PG_ECONFIG;
}

char *pg_ymsg(const struct pg_ydoc *d, const yaml_node_t *at, const struct pg_ypath *path,
	      const char *fmt, ...)
{
	struct pg_buf b = PG_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	vmsg(&b, d, at, path, fmt, ap);
	va_end(ap);
	return pg_buf_detach(&b);
}

bool pg_ynode_is_map(const yaml_node_t *n)
{
	return n && n->type == YAML_MAPPING_NODE;
}

bool pg_ynode_is_seq(const yaml_node_t *n)
{
	return n && n->type == YAML_SEQUENCE_NODE;
}

bool pg_ynode_is_scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE;
}

bool pg_ynode_is_quoted(const yaml_node_t *n)
{
	return pg_ynode_is_scalar(n) && n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE &&
	       n->data.scalar.style != YAML_ANY_SCALAR_STYLE;
}

const char *pg_ynode_text(const yaml_node_t *n)
{
	return pg_ynode_is_scalar(n) ? (const char *)n->data.scalar.value : "";
}

void pg_ynode_set_text(yaml_node_t *n, const char *text)
{
	size_t len = strlen(text);

	/* libyaml frees scalar values with free() (yaml_free) */
	free(n->data.scalar.value);
	n->data.scalar.value = (yaml_char_t *)pg_xstrdup(text);
	n->data.scalar.length = len;
}

bool pg_ynode_is_null(const yaml_node_t *n)
{
	const char *s;

	if (!pg_ynode_is_scalar(n) || pg_ynode_is_quoted(n))
		return false;
	s = pg_ynode_text(n);
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	       !strcmp(s, "NULL");
}

static bool plain_bool(const char *s, bool *out)
{
	if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) {
		*out = true;
		return true;
	}
	if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) {
		*out = false;
		return true;
	}
	return false;
}

static bool looks_int(const char *s)
{
	if (*s == '-' || *s == '+')
		s++;
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* YAML 1.2 core float, plus the spellings of infinity users write. */
static bool looks_float(const char *s, double *out)
{
	const char *p = s;
	bool digits = false;

	if (*p == '-' || *p == '+')
		p++;
	if (!strcasecmp(p, ".inf") || !strcasecmp(p, "inf") || !strcasecmp(p, "infinity")) {
		*out = *s == '-' ? -INFINITY : INFINITY;
		return true;
	}
	while (isdigit((unsigned char)*p)) {
		p++;
		digits = true;
	}
	if (*p == '.') {
		p++;
		while (isdigit((unsigned char)*p)) {
			p++;
			digits = true;
		}
	}
	if (!digits)
		return false;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '-' || *p == '+')
			p++;
		if (!isdigit((unsigned char)*p))
			return false;
		while (isdigit((unsigned char)*p))
			p++;
	}
	return *p == '\0' && pg_parse_double(s, out) == 0;
}

void pg_ynode_describe(struct pg_buf *out, const yaml_node_t *n)
{
	const char *s;
	size_t len;

	if (!n) {
		pg_buf_puts(out, "nothing");
		return;
	}
	if (n->type == YAML_SEQUENCE_NODE) {
		pg_buf_puts(out, "a list");
		return;
	}
	if (n->type == YAML_MAPPING_NODE) {
		pg_buf_puts(out, "a mapping");
		return;
	}
	if (pg_ynode_is_null(n)) {
		pg_buf_puts(out, "null");
		return;
	}
	s = pg_ynode_text(n);
	len = strlen(s);
	if (!pg_ynode_is_quoted(n)) {
		double d;
		bool b;
		if (looks_float(s, &d) || plain_bool(s, &b)) {
			pg_buf_puts(out, s);
			return;
		}
	}
	if (len > 60)
		pg_buf_printf(out, "'%.57s...'", s);
	else
		pg_buf_printf(out, "'%s'", s);
}

static int expected(const struct pg_ydoc *d, const yaml_node_t *n, const struct pg_ypath *p,
		    struct pg_error *err, const char *what, const char *hint)
{
	struct pg_buf got = PG_BUF_INIT;
	int ret;

	pg_ynode_describe(&got, n);
	ret = pg_yerr(d, n, p, err, "expected %s, got %s%s", what, got.ptr, hint ? hint : "");
	pg_buf_release(&got);
	return ret;
}

int pg_yexpected(const struct pg_ydoc *d, const yaml_node_t *n, const struct pg_ypath *path,
		 struct pg_error *err, const char *what_fmt, ...)
{
	struct pg_buf what = PG_BUF_INIT;
	va_list ap;
	int ret;

	va_start(ap, what_fmt);
	pg_buf_vprintf(&what, what_fmt, ap);
	va_end(ap);
	ret = expected(d, n, path, err, what.ptr, NULL);
	pg_buf_release(&what);
	return ret;
}

size_t pg_yseq_len(const yaml_node_t *seq)
{
	if (!pg_ynode_is_seq(seq))
		return 0;
	return (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
}

yaml_node_t *pg_yseq_item(const struct pg_ydoc *d, const yaml_node_t *seq, size_t i)
{
	if (i >= pg_yseq_len(seq))
		return NULL;
	return yaml_document_get_node((yaml_document_t *)&d->doc,
				      seq->data.sequence.items.start[i]);
}

static yaml_node_t *node_at(const struct pg_ydoc *d, int index)
{
	return yaml_document_get_node((yaml_document_t *)&d->doc, index);
}

static bool is_merge_key(const yaml_node_t *k)
{
	return pg_ynode_is_scalar(k) && !pg_ynode_is_quoted(k) && !strcmp(pg_ynode_text(k), "<<");
}

static int cmp_pair_ptr(const void *a, const void *b)
{
	const struct pg_ypair *x = *(const struct pg_ypair *const *)a;
	const struct pg_ypair *y = *(const struct pg_ypair *const *)b;
	int c = strcmp(x->key, y->key);

	return c ? c : (x > y) - (x < y);
}

/* A key given twice among the n pairs: the error names the first repeat
 * in file order and where the key was first given. Sorting, not comparing
 * each key with every other: thresholds files hold 10,000 points. */
static int check_duplicates(const struct pg_ydoc *d, const struct pg_ypair *pairs, size_t n,
			    const struct pg_ypath *path, struct pg_error *err)
{
	const struct pg_ypair **v, *first = NULL, *repeat = NULL;
	int rc = 0;

	if (n < 2)
		return 0;
	v = pg_xmalloc(n * sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[i] = &pairs[i];
	qsort(v, n, sizeof(*v), cmp_pair_ptr);
	for (size_t i = 1, start = 0; i < n; i++) {
		if (strcmp(v[i]->key, v[start]->key)) {
			start = i;
			continue;
		}
		if (!repeat || v[i] < repeat) {
			repeat = v[i];
			first = v[start];
		}
	}
	if (repeat)
		rc = pg_yerr(d, repeat->key_node, path, err,
			     "key '%s' given twice (first at line %d)", repeat->key,
			     pg_ynode_line(first->key_node));
	free(v);
	return rc;
}

static int collect(const struct pg_ydoc *d, yaml_node_t *map, const struct pg_ypath *path,
		   const char *what, struct pg_ypair **out, size_t *n, size_t *cap, bool merged,
		   int depth, struct pg_error *err)
{
	size_t own_start = *n;

	if (!pg_ynode_is_map(map))
		return expected(d, map, path, err, what, NULL);
	if (depth > 16)
		return pg_yerr(d, map, path, err, "merge keys ('<<') nested too deeply");
	for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
	     pr++) {
		yaml_node_t *k = node_at(d, pr->key);
		yaml_node_t *v = node_at(d, pr->value);

		if (is_merge_key(k))
			continue;
		if (!pg_ynode_is_scalar(k))
			return pg_yerr(d, k, path, err, "a key must be a plain word, got %s",
				       k->type == YAML_SEQUENCE_NODE ? "a list" : "a mapping");
		const char *key = pg_ynode_text(k);
		for (size_t i = 0; merged && i < *n; i++)
			if (!strcmp((*out)[i].key, key))
				goto next; /* the mapping itself (or an earlier merge) wins */
		{
			struct pg_ypair p = { key, k, v };
			pg_grow((void **)out, cap, *n + 1, sizeof(**out));
			(*out)[(*n)++] = p;
		}
	next:;
	}
	/* a mapping with only merge keys has no entries yet: *out is still NULL */
	if (!merged && *n > own_start &&
	    check_duplicates(d, *out + own_start, *n - own_start, path, err))
		return PG_ECONFIG;
	/* merge keys after the mapping's own entries, so own entries win */
	for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
	     pr++) {
		yaml_node_t *k = node_at(d, pr->key);
		yaml_node_t *v = node_at(d, pr->value);

		if (!is_merge_key(k))
			continue;
		if (pg_ynode_is_map(v)) {
			if (collect(d, v, path, what, out, n, cap, true, depth + 1, err))
				return PG_ECONFIG;
		} else if (pg_ynode_is_seq(v)) {
			for (size_t i = 0; i < pg_yseq_len(v); i++)
				if (collect(d, pg_yseq_item(d, v, i), path,
					    "a mapping to merge ('<<')", out, n, cap, true,
					    depth + 1, err))
					return PG_ECONFIG;
		} else {
			return expected(d, v, path, err,
					"a mapping (or a list of mappings) to merge with '<<'",
					NULL);
		}
	}
	return 0;
}

int pg_ymap_pairs(const struct pg_ydoc *d, yaml_node_t *map, const struct pg_ypath *path,
		  const char *what, struct pg_ypair **out, size_t *n, struct pg_error *err)
{
	size_t cap = 0;
	int ret;

	*out = NULL;
	*n = 0;
	ret = collect(d, map, path, what, out, n, &cap, false, 0, err);
	if (ret) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return ret;
}

yaml_node_t *pg_ymap_get(const struct pg_ydoc *d, yaml_node_t *map, const char *key)
{
	yaml_node_t *merged = NULL;

	if (!pg_ynode_is_map(map))
		return NULL;
	for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
	     pr++) {
		yaml_node_t *k = node_at(d, pr->key);
		yaml_node_t *v = node_at(d, pr->value);

		if (is_merge_key(k)) {
			if (!merged) {
				if (pg_ynode_is_map(v)) {
					merged = pg_ymap_get(d, v, key);
				} else {
					for (size_t i = 0; !merged && i < pg_yseq_len(v); i++)
						merged = pg_ymap_get(d, pg_yseq_item(d, v, i), key);
				}
			}
			continue;
		}
		if (pg_ynode_is_scalar(k) && !strcmp(pg_ynode_text(k), key))
			return v;
	}
	return merged;
}

int pg_yget_string(const struct pg_ydoc *d, const yaml_node_t *n, const struct pg_ypath *p,
		   char **out, struct pg_error *err)
{
	if (!pg_ynode_is_scalar(n) || pg_ynode_is_null(n))
		return expected(d, n, p, err, "a string", NULL);
	free(*out);
	*out = pg_xstrdup(pg_ynode_text(n));
	return 0;
}

int pg_yget_long(const struct pg_ydoc *d, const yaml_node_t *n, const struct pg_ypath *p, long min,
		 long *out, struct pg_error *err)
{
	char what[64];
	long v;
	const char *s = pg_ynode_text(n);

	if (min == 0)
		snprintf(what, sizeof(what), "a whole number >= 0");
	else if (min == 1)
		snprintf(what, sizeof(what), "a positive whole number");
	else
		snprintf(what, sizeof(what), "a whole number >= %ld", min);
	if (!pg_ynode_is_scalar(n) || pg_ynode_is_null(n))
		return expected(d, n, p, err, what, NULL);
	if (!looks_int(s) || pg_parse_long(s, &v))
		return expected(d, n, p, err, what, NULL);
	if (pg_ynode_is_quoted(n))
		return expected(d, n, p, err, what, " (a quoted string: drop the quotes)");
	if (v < min)
		return expected(d, n, p, err, what, NULL);
	*out = v;
	return 0;
}

int pg_yget_double(const struct pg_ydoc *d, const yaml_node_t *n, const struct pg_ypath *p,
		   bool inf_ok, double *out, struct pg_error *err)
{
	const char *what = inf_ok ? "a number or 'inf'" : "a number";
	const char *s = pg_ynode_text(n);
	double v;

	if (!pg_ynode_is_scalar(n) || pg_ynode_is_null(n) || !looks_float(s, &v))
		return expected(d, n, p, err, what, NULL);
	if (isinf(v)) {
		if (!inf_ok || v < 0)
			return expected(d, n, p, err, what, NULL);
	} else if (pg_ynode_is_quoted(n)) {
		return expected(d, n, p, err, what, " (a quoted string: drop the quotes)");
	}
	*out = v;
	return 0;
}

int pg_yget_bool(const struct pg_ydoc *d, const yaml_node_t *n, const struct pg_ypath *p, bool *out,
		 struct pg_error *err)
{
	bool v;

	if (!pg_ynode_is_scalar(n) || !plain_bool(pg_ynode_text(n), &v))
		return expected(d, n, p, err, "true or false", NULL);
	if (pg_ynode_is_quoted(n))
		return expected(d, n, p, err, "true or false",
				" (a quoted string: drop the quotes)");
	*out = v;
	return 0;
}

/* Aliases share nodes, so a small document can stand for a huge tree
 * ("billion laughs"): the conversion stops expanding after a budget of
 * nodes, ten times the document's own and at least 10,000 more, beyond
 * what real anchors repeat (a fixed million was 2 GiB of JSON from 56
 * bytes, and each node costs a mapping's pairs and a JSON object). */
#define TO_JSON_ALIAS_MIN 10000
/* An alias inside the node it names makes the tree endless in depth (and
 * the recursion would overflow the stack long before the budget ends):
 * deeper than this, far beyond any real document, is null too. */
#define TO_JSON_DEPTH 256

static json_t *to_json(const struct pg_ydoc *d, const yaml_node_t *n, size_t *budget, int depth)
{
	if (!n || *budget == 0 || depth > TO_JSON_DEPTH)
		return json_null();
	(*budget)--;
	if (n->type == YAML_SEQUENCE_NODE) {
		json_t *a = json_array();
		for (size_t i = 0; i < pg_yseq_len(n); i++)
			json_array_append_new(a,
					      to_json(d, pg_yseq_item(d, n, i), budget, depth + 1));
		return a;
	}
	if (n->type == YAML_MAPPING_NODE) {
		json_t *o = json_object();
		struct pg_ypair *pairs = NULL;
		size_t np = 0;
		/* errors (duplicate keys) are reported by the typed readers; here
		 * the first occurrence simply wins */
		if (pg_ymap_pairs(d, (yaml_node_t *)n, NULL, "a mapping", &pairs, &np, NULL) == 0)
			for (size_t i = 0; i < np; i++)
				json_object_set_new(o, pairs[i].key,
						    to_json(d, pairs[i].value, budget, depth + 1));
		free(pairs);
		return o;
	}
	if (!pg_ynode_is_quoted(n)) {
		const char *s = pg_ynode_text(n);
		long l;
		double v;
		bool b;

		if (pg_ynode_is_null(n))
			return json_null();
		if (plain_bool(s, &b))
			return json_boolean(b);
		if (looks_int(s) && pg_parse_long(s, &l) == 0)
			return json_integer(l);
		if (looks_float(s, &v) && isfinite(v))
			return json_real(v);
	}
	return json_string(pg_ynode_text(n));
}

json_t *pg_ynode_to_json(const struct pg_ydoc *d, const yaml_node_t *n)
{
	size_t own = (size_t)(d->doc.nodes.top - d->doc.nodes.start);
	size_t budget = 10 * own + TO_JSON_ALIAS_MIN;
	return to_json(d, n, &budget, 0);
}
