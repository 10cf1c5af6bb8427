#include "baseline/history_check.h"
#include "baseline/history_ab.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "gate/compare.h"
#include "results/result.h"
#include "suite/suite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *pg_hline_kind_name(enum pg_hline_kind k)
{
	switch (k) {
	case PG_HLINE_UNREADABLE:
		return "unreadable";
	case PG_HLINE_NEWER:
		return "newer format";
	case PG_HLINE_DUPLICATE:
		return "duplicate";
	default:
		return "ok";
	}
}

/* A metric's recorded values: a list of numbers (null where a repeat had
 * none). Anything else is a shape this perfgate does not know. */
static bool is_number_list(const json_t *v)
{
	size_t i;
	json_t *x;

	if (!json_is_array(v))
		return false;
	json_array_foreach(v, i, x)
	{
		if (!json_is_number(x) && !json_is_null(x))
			return false;
	}
	return true;
}

bool pg_history_next_line(const char *text, size_t len, size_t *off, int *line, const char **start,
			  size_t *l)
{
	while (*off < len) {
		const char *nl = memchr(text + *off, '\n', len - *off);
		*start = text + *off;
		*l = nl ? (size_t)(nl - *start) : len - *off;
		*off += *l + (nl ? 1 : 0);
		++*line;
		while (*l && ((*start)[*l - 1] == '\r' || (*start)[*l - 1] == ' '))
			--*l;
		if (*l)
			return true;
	}
	return false;
}

int pg_history_parse_lines(const char *text, size_t len, const char *source,
			   pg_hline_classify_fn classify, const char *what,
			   int (*take)(void *ctx, const json_t *o, int line, struct pg_error *err),
			   void *ctx, struct pg_error *err)
{
	size_t off = 0, l;
	int line = 0, rc = 0;
	const char *start;

	while (!rc && pg_history_next_line(text, len, &off, &line, &start, &l)) {
		json_error_t jerr;
		enum pg_hline_kind kind;
		char why[256];
		json_t *o = json_loadb(start, l, 0, &jerr);

		if (!o)
			return pg_error_set(err, PG_EINFRA, "%s:%d: unreadable %shistory line: %s",
					    source, line, what, jerr.text);
		/* a line this perfgate cannot use is an error naming it, never a
		 * point silently missing from the baseline */
		if ((kind = classify(o, why, sizeof(why))) != PG_HLINE_OK)
			rc = pg_error_set(err, PG_EINFRA, "%s:%d: %s %shistory line: %s", source,
					  line,
					  kind == PG_HLINE_NEWER ? "a newer-format" : "unreadable",
					  what, why);
		else
			rc = take(ctx, o, line, err);
		json_decref(o);
	}
	return rc;
}

const char *pg_history_json_kind(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "a list";
	case JSON_STRING:
		return "a string";
	case JSON_NULL:
		return "null";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "a number";
	}
}

enum pg_hline_kind pg_history_classify(const json_t *o, char *why, size_t size)
{
	json_t *format, *suite, *metrics, *v;
	const char *key;

	if (!json_is_object(o)) {
		snprintf(why, size, "not a perfgate history record (%s)",
			 o ? "not a JSON object" : "not JSON");
		return PG_HLINE_UNREADABLE;
	}
	format = json_object_get(o, "format");
	if (format && !(json_is_integer(format) && json_integer_value(format) >= 1)) {
		snprintf(why, size, "\"format\" is not a version number");
		return PG_HLINE_UNREADABLE;
	}
	/* a newer writer says so; older lines have no "format" */
	if (format && json_integer_value(format) > PG_HISTORY_FORMAT) {
		snprintf(
			why, size,
			"history format %lld, written by a newer perfgate (this one reads format %d)",
			(long long)json_integer_value(format), PG_HISTORY_FORMAT);
		return PG_HLINE_NEWER;
	}
	suite = json_object_get(o, "suite");
	metrics = json_object_get(o, "metrics");
	if (!json_is_string(suite) || !json_is_object(metrics)) {
		snprintf(why, size, "not a perfgate history record (no \"%s\")",
			 !json_is_string(suite) ? "suite" : "metrics");
		return PG_HLINE_UNREADABLE;
	}
	if (pg_suite_kind_parse(json_string_value(suite)) < 0) {
		snprintf(why, size, "suite '%s' is unknown to this perfgate (a newer format?)",
			 json_string_value(suite));
		return PG_HLINE_NEWER;
	}
	json_object_foreach(metrics, key, v)
	{
		if (!is_number_list(v)) {
			snprintf(
				why, size,
				"metrics.%s is %s, not a list of numbers (written by a newer perfgate?)",
				key,
				json_is_array(v) ? "a list with something other than numbers"
						 : pg_history_json_kind(v));
			return PG_HLINE_NEWER;
		}
	}
	return PG_HLINE_OK;
}

static const char *str_of(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_string(v) && json_string_length(v) ? json_string_value(v) : NULL;
}

bool pg_history_same_run(const json_t *a, const json_t *b)
{
	const char *ua = str_of(a, "build_url"), *ub = str_of(b, "build_url");
	const char *ca = str_of(a, "commit"), *cb = str_of(b, "commit");

	if (ua || ub)
		return ua && ub && !strcmp(ua, ub);
	return ca && cb && !strcmp(ca, cb) &&
	       json_equal(json_object_get(a, "metrics"), json_object_get(b, "metrics"));
}

/* One line of a file: its text without the newline and trailing blanks. */
struct line {
	const char *text;
	size_t len;
	int no;
	json_t *json; /* NULL when not JSON */
	enum pg_hline_kind kind;
	char why[256];
};

/* ab: the lines of an A/B file (baseline/history_ab.h), else of a run's. */
static void split(const char *text, size_t len, bool ab, struct line **out, size_t *n)
{
	size_t off = 0, cap = 0;
	int no = 0;
	const char *start;
	size_t l;

	*out = NULL;
	*n = 0;
	while (pg_history_next_line(text, len, &off, &no, &start, &l)) {
		struct line ln;
		json_error_t jerr;

		memset(&ln, 0, sizeof(ln));
		ln.text = start;
		ln.len = l;
		ln.no = no;
		ln.json = json_loadb(start, l, 0, &jerr);
		ln.kind = ab ? pg_history_ab_classify(ln.json, ln.why, sizeof(ln.why))
			     : pg_history_classify(ln.json, ln.why, sizeof(ln.why));
		if (!ln.json)
			snprintf(ln.why, sizeof(ln.why), "not JSON: %s", jerr.text);
		PG_ARRAY_PUSH(*out, *n, cap, ln);
	}
}

static void lines_free(struct line *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		json_decref(v[i].json);
	free(v);
}

/* Mark each OK line that a later OK line of the same run replaces. */
static void mark_duplicates(struct line *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (v[i].kind != PG_HLINE_OK)
			continue;
		for (size_t k = i + 1; k < n; k++) {
			if (v[k].kind != PG_HLINE_OK || !pg_history_same_run(v[i].json, v[k].json))
				continue;
			v[i].kind = PG_HLINE_DUPLICATE;
			if (str_of(v[i].json, "build_url"))
				snprintf(v[i].why, sizeof(v[i].why),
					 "build %.180s is recorded again on line %d",
					 str_of(v[i].json, "build_url"), v[k].no);
			else
				snprintf(
					v[i].why, sizeof(v[i].why),
					"the same measurements of %.12s are recorded again on line %d",
					str_of(v[i].json, "commit"), v[k].no);
			break;
		}
	}
}

static void scan(struct pg_history_scan *out, const char *text, size_t len, bool ab,
		 struct pg_buf *repaired)
{
	struct line *v;
	size_t n;

	memset(out, 0, sizeof(*out));
	split(text, len, ab, &v, &n);
	mark_duplicates(v, n);
	for (size_t i = 0; i < n; i++) {
		struct pg_hline h;

		if (v[i].kind == PG_HLINE_OK || v[i].kind == PG_HLINE_DUPLICATE)
			out->records++;
		if (v[i].kind == PG_HLINE_UNREADABLE || v[i].kind == PG_HLINE_DUPLICATE)
			out->dropped++;
		else if (repaired) {
			pg_buf_add(repaired, v[i].text, v[i].len);
			pg_buf_putc(repaired, '\n');
		}
		if (v[i].kind == PG_HLINE_NEWER)
			out->kept_newer++;
		if (v[i].kind == PG_HLINE_OK)
			continue;
		h.line = v[i].no;
		h.kind = v[i].kind;
		h.why = pg_xstrdup(v[i].why);
		h.text = pg_xstrndup(v[i].text, v[i].len);
		PG_ARRAY_PUSH(out->bad, out->n_bad, out->cap, h);
	}
	lines_free(v, n);
}

void pg_history_scan(struct pg_history_scan *out, const char *text, size_t len,
		     struct pg_buf *repaired)
{
	scan(out, text, len, false, repaired);
}

void pg_history_scan_ab(struct pg_history_scan *out, const char *text, size_t len,
			struct pg_buf *repaired)
{
	scan(out, text, len, true, repaired);
}

void pg_history_scan_release(struct pg_history_scan *s)
{
	for (size_t i = 0; i < s->n_bad; i++) {
		free(s->bad[i].why);
		free(s->bad[i].text);
	}
	free(s->bad);
	memset(s, 0, sizeof(*s));
}

static int append(struct pg_buf *out, const char *text, size_t len, bool ab, const char *line,
		  int *bad_line, char *why, size_t size)
{
	struct line *v;
	size_t n;
	json_t *rec = json_loads(line, 0, NULL);
	int replaced = 0;

	*bad_line = 0;
	split(text, len, ab, &v, &n);
	for (size_t i = 0; i < n; i++) {
		if (v[i].kind == PG_HLINE_UNREADABLE) {
			*bad_line = v[i].no;
			snprintf(why, size, "%s", v[i].why);
			replaced = -1;
			goto done;
		}
	}
	for (size_t i = 0; i < n; i++) {
		/* newer-format lines are kept: a newer perfgate reads them */
		if (v[i].kind == PG_HLINE_OK && rec && pg_history_same_run(v[i].json, rec)) {
			replaced++;
			continue;
		}
		pg_buf_add(out, v[i].text, v[i].len);
		pg_buf_putc(out, '\n');
	}
	pg_buf_puts(out, line);
	pg_buf_putc(out, '\n');
done:
	json_decref(rec);
	lines_free(v, n);
	return replaced;
}

int pg_history_append(struct pg_buf *out, const char *text, size_t len, const char *line,
		      int *bad_line, char *why, size_t size)
{
	return append(out, text, len, false, line, bad_line, why, size);
}

int pg_history_append_ab(struct pg_buf *out, const char *text, size_t len, const char *line,
			 int *bad_line, char *why, size_t size)
{
	return append(out, text, len, true, line, bad_line, why, size);
}

bool pg_history_point_recordable(const struct pg_cmp_point *p, struct pg_buf *why)
{
	struct pg_buf reason = PG_BUF_INIT;
	bool ok = false;

	if (p->status && strcmp(p->status, "ok")) {
		pg_buf_printf(&reason, "status %s", p->status);
	} else if (p->probe) {
		pg_buf_puts(&reason, "an SLA-search probe");
	} else if (pg_result_json_incomplete(p->result, &reason)) {
		/* reason has the counts: prefix what they mean */
		char *counts = pg_buf_detach(&reason);
		pg_buf_printf(&reason, "incomplete: %s", counts);
		free(counts);
	} else {
		ok = true;
	}
	if (!ok && why)
		pg_buf_add(why, reason.ptr, reason.len);
	pg_buf_release(&reason);
	return ok;
}
