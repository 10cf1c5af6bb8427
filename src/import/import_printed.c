/*
 * Imports of the printed result block of vllm bench serve (and of
 * benchmark_serving.py and SGLang's bench_serving, which print the same
 * frame), as people paste it into logs and issues:
 *
 *   ============ Serving Benchmark Result ============
 *   Successful requests:                     1
 *   ...
 *   ---------------Time to First Token----------------
 *   Mean TTFT (ms):                          314.58
 *   ==================================================
 *
 * Any number of blocks, anything between them. Labels of every vLLM
 * version are known (research: loadgen.md section 1.9): "Total Token
 * throughput" and "Total token throughput", optional rows (failed
 * requests, goodput, peak throughput, concurrency), any P<p> percentile,
 * any metric section. The lines printed before a block ("Traffic request
 * rate:", "Burstiness factor:", "Maximum request concurrency:") belong to
 * it. A row with a label this parser does not know is kept under
 * perfgate.import.unparsed, never dropped.
 */
#include "import/import_impl.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/strutil.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum value_type { V_INT, V_NUM, V_RATE, V_CONC, V_STR, V_LEADING_NUM };

struct label_map {
	const char *label; /* without the colon, compared case-insensitively */
	const char *key;
	enum value_type type;
};

/* clang-format off */
static const struct label_map labels[] = {
	{ "Successful requests", "completed", V_INT },
	{ "Failed requests", "failed", V_INT },
	{ "Maximum request concurrency", "max_concurrency", V_CONC },
	{ "Max request concurrency", "max_concurrency", V_CONC },
	{ "Request rate configured (RPS)", "request_rate", V_RATE },
	{ "Traffic request rate", "request_rate", V_RATE },
	{ "Burstiness factor", "burstiness", V_LEADING_NUM },
	{ "Benchmark duration (s)", "duration", V_NUM },
	{ "Total input tokens", "total_input_tokens", V_INT },
	{ "Total generated tokens", "total_output_tokens", V_INT },
	{ "Total generated tokens (retokenized)", "total_output_tokens_retokenized", V_INT },
	{ "Request throughput (req/s)", "request_throughput", V_NUM },
	{ "Request goodput (req/s)", "request_goodput", V_NUM },
	{ "Input token throughput (tok/s)", "input_throughput", V_NUM },
	{ "Output token throughput (tok/s)", "output_throughput", V_NUM },
	{ "Peak output token throughput (tok/s)", "max_output_tokens_per_s", V_NUM },
	{ "Peak concurrent requests", "max_concurrent_requests", V_NUM },
	/* "Total Token throughput" in older versions: the match ignores case */
	{ "Total token throughput (tok/s)", "total_token_throughput", V_NUM },
	/* SGLang's bench_serving since it prints "End-to-End Latency" */
	{ "Total throughput (tok/s)", "total_token_throughput", V_NUM },
	{ "Concurrency", "concurrency", V_NUM },
	{ "Backend", "backend", V_STR },
	{ "Acceptance rate (%)", "spec_decode_acceptance_rate", V_NUM },
	{ "Acceptance length", "spec_decode_acceptance_length", V_NUM },
	{ "Drafts", "spec_decode_num_drafts", V_INT },
	{ "Draft tokens", "spec_decode_draft_tokens", V_INT },
	{ "Accepted tokens", "spec_decode_accepted_tokens", V_INT },
};
/* clang-format on */

/* Metric names in "<Stat> <X> (ms)" rows -> the key's metric part. */
/* clang-format off */
static const struct {
	const char *printed;
	const char *key;
} metric_names[] = {
	{ "TTFT", "ttft" }, { "TPOT", "tpot" }, { "ITL", "itl" }, { "E2EL", "e2el" },
	{ "E2E Latency", "e2el" },
};
/* clang-format on */

/*
 * The banner: a line holding "Serving Benchmark Result" between runs of
 * '='. *prefix_len: the bytes before its first '=' -- a "# ", a
 * timestamp, a logger's "INFO 06-01 10:00:00 [serve.py:12] " -- which the
 * block's other lines carry too.
 */
static int is_banner(const char *line, size_t len, size_t *prefix_len)
{
	const char *m = memmem(line, len, "Serving Benchmark Result", 24);
	const char *eq;
	size_t end = len;

	if (!m || !(eq = memchr(line, '=', (size_t)(m - line))))
		return 0;
	for (const char *p = eq; p < m; p++)
		if (*p != '=' && *p != ' ')
			return 0;
	while (end && isspace((unsigned char)line[end - 1]))
		end--;
	if (end <= (size_t)(m - line) + 24 || line[end - 1] != '=')
		return 0;
	*prefix_len = (size_t)(eq - line);
	return 1;
}

/*
 * How much of line a prefix of the same shape takes: digits match any run
 * of digits (a later timestamp), anything else itself. -1 when the line
 * does not carry it.
 */
static long prefix_match(const char *p, size_t plen, const char *l, size_t llen)
{
	size_t i = 0, j = 0;

	while (i < plen) {
		if (isdigit((unsigned char)p[i])) {
			if (j >= llen || !isdigit((unsigned char)l[j]))
				return -1;
			while (i < plen && isdigit((unsigned char)p[i]))
				i++;
			while (j < llen && isdigit((unsigned char)l[j]))
				j++;
		} else {
			if (j >= llen || l[j] != p[i])
				return -1;
			i++;
			j++;
		}
	}
	return (long)j;
}

static int all_of(const char *s, size_t len, char c)
{
	if (len < 10)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (s[i] != c)
			return 0;
	return 1;
}

/* "-----Time per Output Token (excl. 1st token)------" */
static int is_section(const char *s, size_t len)
{
	return len > 2 && s[0] == '-' && s[len - 1] == '-' && !all_of(s, len, '-');
}

/* "Mean TTFT (ms)" -> "mean_ttft_ms", "P99.9 ITL (ms)" -> "p99.9_itl_ms",
 * "Median E2E Latency (ms)" -> "median_e2el_ms". 0 if not such a row. */
static int stat_key(const char *label, struct pg_buf *key)
{
	const char *sp = strchr(label, ' ');
	size_t label_len = strlen(label), stat_len, name_len;
	const char *name;

	if (!sp || !pg_str_has_suffix(label, " (ms)"))
		return 0;
	stat_len = (size_t)(sp - label);
	/* "Max (ms)": the space found is the unit's own, there is no name */
	if (stat_len + 1 + strlen(" (ms)") >= label_len)
		return 0;
	name = sp + 1;
	name_len = label_len - stat_len - 1 - strlen(" (ms)");
	pg_buf_reset(key);
	if (stat_len == 4 && !strncasecmp(label, "Mean", 4))
		pg_buf_puts(key, "mean");
	else if (stat_len == 6 && !strncasecmp(label, "Median", 6))
		pg_buf_puts(key, "median");
	else if (stat_len == 3 && !strncasecmp(label, "Std", 3))
		pg_buf_puts(key, "std");
	else if (stat_len == 3 && !strncasecmp(label, "Max", 3))
		pg_buf_puts(key, "max");
	else if ((label[0] == 'P' || label[0] == 'p') && stat_len > 1 &&
		 strspn(label + 1, "0123456789.") == stat_len - 1) {
		pg_buf_putc(key, 'p');
		pg_buf_add(key, label + 1, stat_len - 1);
	} else {
		return 0;
	}
	pg_buf_putc(key, '_');
	for (size_t i = 0; i < sizeof(metric_names) / sizeof(metric_names[0]); i++) {
		if (strlen(metric_names[i].printed) == name_len &&
		    !strncasecmp(metric_names[i].printed, name, name_len)) {
			pg_buf_puts(key, metric_names[i].key);
			pg_buf_puts(key, "_ms");
			return 1;
		}
	}
	/* a section newer than this parser: its name in snake case */
	for (size_t i = 0; i < name_len; i++) {
		unsigned char c = (unsigned char)name[i];
		pg_buf_putc(key, isalnum(c) ? (char)tolower(c) : '_');
	}
	pg_buf_puts(key, "_ms");
	return 1;
}

static const struct label_map *find_label(const char *label)
{
	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
		if (!strcasecmp(labels[i].label, label))
			return &labels[i];
	return NULL;
}

/* Convert value text for a row; 0, or -1 when it is not of the type. */
static int parse_value(const char *text, enum value_type type, json_t **out)
{
	double d;
	long l;

	switch (type) {
	case V_STR:
		*out = json_string(text);
		return 0;
	case V_CONC:
		/* vLLM prints None, SGLang "not set" */
		if (!strcmp(text, "None") || !strcmp(text, "not set")) {
			*out = json_null();
			return 0;
		}
		if (pg_parse_long(text, &l) || l < 0)
			return -1;
		*out = json_integer(l);
		return 0;
	case V_RATE:
		if (pg_parse_double(text, &d) || d < 0)
			return -1;
		*out = isinf(d) ? json_string("inf") : json_real(d);
		return 0;
	case V_INT:
		if (pg_parse_long(text, &l) == 0) {
			*out = json_integer(l);
			return 0;
		}
		/* printed with decimals by some versions */
		/* fall through */
	case V_NUM:
		if (pg_parse_double(text, &d) || !isfinite(d))
			return -1;
		*out = json_real(d);
		return 0;
	case V_LEADING_NUM: {
		/* "1.0 (Poisson process)" */
		char num[64];
		snprintf(num, sizeof(num), "%.*s", (int)strcspn(text, " \t"), text);
		if (pg_parse_double(num, &d) || !isfinite(d))
			return -1;
		*out = json_real(d);
		return 0;
	}
	}
	return -1;
}

/* One "Label:   value   " line, trimmed. */
struct row {
	char *label;
	char *value;
	size_t value_at; /* offset of the value in the line, for messages */
};

static char *trimmed(const char *s, size_t len)
{
	while (len && (*s == ' ' || *s == '\t')) {
		s++;
		len--;
	}
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	return pg_xstrndup(s, len);
}

/* Split at the last ':' (labels end with one, values have none). -1 when
 * the line is not a row. */
static int row_split(struct row *r, const char *line, size_t len)
{
	const char *colon = NULL;

	for (size_t i = 0; i < len; i++)
		if (line[i] == ':')
			colon = line + i;
	if (!colon || colon == line)
		return -1;
	r->value_at = (size_t)(colon + 1 - line);
	while (r->value_at < len && (line[r->value_at] == ' ' || line[r->value_at] == '\t'))
		r->value_at++;
	r->label = trimmed(line, (size_t)(colon - line));
	r->value = trimmed(colon + 1, len - (size_t)(colon + 1 - line));
	return 0;
}

static void row_release(struct row *r)
{
	free(r->label);
	free(r->value);
}

enum convert { CONVERTED, UNKNOWN_LABEL, BAD_VALUE };

/* The result key and value of a row (key into *key, value new). On
 * BAD_VALUE, *expected says what the label wants. */
static enum convert row_convert(const struct row *r, struct pg_buf *key, json_t **value,
				const char **expected)
{
	const struct label_map *m = find_label(r->label);
	enum value_type type = V_NUM;

	pg_buf_reset(key);
	if (m) {
		pg_buf_puts(key, m->key);
		type = m->type;
	} else if (!stat_key(r->label, key)) {
		return UNKNOWN_LABEL;
	}
	if (parse_value(r->value, type, value)) {
		*expected = type == V_STR ? "text" : "a number";
		return BAD_VALUE;
	}
	return CONVERTED;
}

struct block {
	json_t *result;   /* NULL outside a block */
	json_t *unparsed; /* rows with labels this parser does not know */
	size_t start;     /* offset of the banner */
	json_t *pre;      /* rate, burstiness, concurrency printed before it */
};

/* Settings printed before the block they belong to, wherever on the line
 * (after a prefix too). */
static const char *const pre_labels[] = {
	"Traffic request rate:",          "Burstiness factor:",
	"Maximum request concurrency:",   "Max request concurrency:",
	"Request rate configured (RPS):",
};

/* A line outside a block: a note, or a setting printed before the block
 * it belongs to ("Traffic request rate: 4.0"). Never an error. */
static void note_line(struct block *b, const char *t, size_t tlen)
{
	for (size_t i = 0; i < sizeof(pre_labels) / sizeof(pre_labels[0]); i++) {
		size_t ll = strlen(pre_labels[i]);
		const char *at = memmem(t, tlen, pre_labels[i], ll);
		struct row r;
		struct pg_buf key = PG_BUF_INIT;
		json_t *v;
		const char *expected;

		if (!at)
			continue;
		r.label = pg_xstrndup(pre_labels[i], ll - 1);
		r.value = trimmed(at + ll, tlen - (size_t)(at + ll - t));
		r.value_at = 0;
		if (row_convert(&r, &key, &v, &expected) == CONVERTED)
			json_object_set_new(b->pre, key.ptr, v);
		pg_buf_release(&key);
		row_release(&r);
		return;
	}
}

/* A line inside a block: a row (known or kept as unparsed), or an error. */
static int block_line(struct pg_import_ctx *ctx, struct block *b, const char *t, size_t tlen,
		      size_t at)
{
	struct row r;
	struct pg_buf key = PG_BUF_INIT;
	json_t *v;
	const char *expected;
	int ret = 0;

	if (row_split(&r, t, tlen))
		return pg_import_fail(ctx, at, "block %zu: expected 'label: value', got '%.*s'",
				      ctx->records + 1, (int)(tlen > 60 ? 60 : tlen), t);
	switch (row_convert(&r, &key, &v, &expected)) {
	case CONVERTED:
		json_object_set_new(b->result, key.ptr, v);
		break;
	case UNKNOWN_LABEL:
		if (!b->unparsed)
			b->unparsed = json_object();
		json_object_set_new(b->unparsed, r.label, json_string(r.value));
		break;
	case BAD_VALUE:
		ret = pg_import_fail(ctx, at + r.value_at, "block %zu: '%s': expected %s, got '%s'",
				     ctx->records + 1, r.label, expected, r.value);
		break;
	}
	pg_buf_release(&key);
	row_release(&r);
	return ret;
}

static void block_open(struct block *b, size_t start)
{
	const char *key;
	json_t *v;

	b->result = json_object();
	b->start = start;
	json_object_foreach(b->pre, key, v) json_object_set(b->result, key, v);
	json_object_clear(b->pre);
}

static int block_close(struct pg_import_ctx *ctx, struct block *b)
{
	if (!json_object_get(b->result, "completed"))
		return pg_import_fail(ctx, b->start, "block %zu: no 'Successful requests' row",
				      ctx->records + 1);
	if (b->unparsed) {
		json_t *pg = json_object(), *imp = json_object();

		/* kept, so nothing the source had is lost */
		json_object_set_new(imp, "unparsed", b->unparsed);
		json_object_set_new(pg, "import", imp);
		json_object_set_new(b->result, "perfgate", pg);
		b->unparsed = NULL;
	}
	pg_import_push(ctx, b->result, PG_SUITE_SERVING, NULL, NULL, "printed", b->start);
	b->result = NULL;
	return 0;
}

static void trim(const char **t, size_t *tlen)
{
	while (*tlen && (**t == ' ' || **t == '\t')) {
		(*t)++;
		(*tlen)--;
	}
	/* and the '\r' of CRLF files */
	while (*tlen &&
	       ((*t)[*tlen - 1] == ' ' || (*t)[*tlen - 1] == '\t' || (*t)[*tlen - 1] == '\r'))
		(*tlen)--;
}

int pg_import_printed(struct pg_import_ctx *ctx)
{
	struct block b = { NULL, NULL, 0, json_object() };
	const char *prefix = NULL; /* the open block's line prefix */
	size_t prefix_len = 0, off = 0;
	int ret = 0;

	while (off < ctx->len && ret == 0) {
		const char *line = ctx->text + off;
		/* text is ctx->len bytes, not a C string: never read past it */
		const char *nl = memchr(line, '\n', ctx->len - off);
		size_t len = nl ? (size_t)(nl - line) : ctx->len - off;
		const char *t = line;
		size_t tlen = len, banner_prefix;

		if (!b.result) {
			if (is_banner(line, len, &banner_prefix)) {
				block_open(&b, off);
				/* its shape without trailing blanks: "# " lines
				 * may lose theirs ("#") */
				prefix = line;
				prefix_len = banner_prefix;
				while (prefix_len && isspace((unsigned char)prefix[prefix_len - 1]))
					prefix_len--;
			} else {
				trim(&t, &tlen);
				note_line(&b, t, tlen);
			}
			off += len + 1;
			continue;
		}
		if (prefix_len) {
			long skip = prefix_match(prefix, prefix_len, line, len);

			if (skip < 0) {
				/* another stream's line (a log interleaved with
				 * the block): not part of it */
				off += len + 1;
				continue;
			}
			t += skip;
			tlen -= (size_t)skip;
		}
		trim(&t, &tlen);
		if (all_of(t, tlen, '=')) {
			ret = block_close(ctx, &b);
		} else if (is_banner(t, tlen, &banner_prefix)) {
			int opened = pg_import_line(ctx, b.start);

			ret = pg_import_fail(ctx, off,
					     "block %zu: a new Serving Benchmark Result block "
					     "starts before this one (line %d) is closed by a "
					     "line of '='",
					     ctx->records + 1, opened);
		} else if (tlen && !is_section(t, tlen)) {
			ret = block_line(ctx, &b, t, tlen, off + (size_t)(t - line));
		}
		off += len + 1;
	}
	if (ret == 0 && b.result)
		ret = pg_import_fail(ctx, b.start,
				     "block %zu: the Serving Benchmark Result block is not closed "
				     "by a line of '='",
				     ctx->records + 1);
	json_decref(b.result);
	json_decref(b.unparsed);
	json_decref(b.pre);
	return ret;
}
