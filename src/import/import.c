/*
 * Import: format detection, the records' common finishing (names, the
 * perfgate object) and the helpers the format parsers share.
 */
#include "import/import.h"
#include "import/import_impl.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "gpu/gpu.h"
#include "results/metrics.h"
#include "results/params.h"
#include "results/result.h"
#include "base/strutil.h"
#include "base/jsonw.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PERFGATE_VERSION
#define PERFGATE_VERSION "0.0.0"
#endif

/* ---- positions ---- */

static void linecol(const char *text, size_t len, size_t pos, int *line, int *col)
{
	int l = 1, c = 1;

	if (pos > len)
		pos = len;
	for (size_t i = 0; i < pos; i++) {
		if (text[i] == '\n') {
			l++;
			c = 1;
		} else if (((unsigned char)text[i] & 0xC0) != 0x80) {
			c++;
		}
	}
	*line = l;
	*col = c;
}

int pg_import_line(struct pg_import_ctx *ctx, size_t pos)
{
	/* records arrive in file order: count on from the last answer, so a
	 * file of n records costs O(size), not O(n * size) */
	if (pos > ctx->len)
		pos = ctx->len;
	if (pos < ctx->line_pos) {
		ctx->line_pos = 0;
		ctx->line_no = 1;
	}
	if (!ctx->line_no)
		ctx->line_no = 1;
	for (; ctx->line_pos < pos; ctx->line_pos++)
		if (ctx->text[ctx->line_pos] == '\n')
			ctx->line_no++;
	return ctx->line_no;
}

int pg_import_fail(struct pg_import_ctx *ctx, size_t pos, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	int line, col;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	linecol(ctx->text, ctx->len, pos, &line, &col);
	return pg_error_set(ctx->err, PG_ECONFIG, "%s:%d:%d: %s", ctx->source, line, col, msg);
}

void pg_import_push(struct pg_import_ctx *ctx, json_t *json, enum pg_suite_kind kind,
		    const char *name, const char *gpu, const char *format, size_t pos)
{
	struct pg_import_rec rec = { 0 };

	rec.json = json;
	rec.kind = kind;
	rec.name = name ? pg_xstrdup(name) : NULL;
	rec.gpu = gpu && *gpu ? pg_xstrdup(gpu) : NULL;
	rec.format = format;
	rec.record = ++ctx->records;
	rec.line = pg_import_line(ctx, pos);
	PG_ARRAY_PUSH(ctx->recs, ctx->n, ctx->cap, rec);
}

void pg_import_set_path(json_t *obj, const char *dotted_key, json_t *v)
{
	const char *dot = strchr(dotted_key, '.');
	char *head;
	json_t *child;

	if (!dot) {
		json_object_set_new(obj, dotted_key, v);
		return;
	}
	head = pg_xstrndup(dotted_key, (size_t)(dot - dotted_key));
	child = json_object_get(obj, head);
	if (!json_is_object(child)) {
		child = json_object();
		json_object_set_new(obj, head, child);
	}
	pg_import_set_path(child, dot + 1, v);
	free(head);
}

/* ---- lenient JSON ---- */

void pg_lenient_json_init(struct pg_lenient_json *lj, const char *text, size_t len, bool one_value)
{
	struct pg_buf b = PG_BUF_INIT;
	size_t cap = 0;
	int in_string = 0;
	long depth = 0;

	memset(lj, 0, sizeof(*lj));
	pg_buf_grow(&b, len + 16);
	for (size_t i = 0; i < len; i++) {
		char c = text[i];

		if (in_string) {
			if (c == '\\' && i + 1 < len) {
				pg_buf_add(&b, text + i, 2);
				i++;
				continue;
			}
			if (c == '"')
				in_string = 0;
			pg_buf_putc(&b, c);
			continue;
		}
		if (c == '"') {
			in_string = 1;
		} else if (c == '{' || c == '[') {
			depth++;
		} else if (c == '}' || c == ']') {
			if (--depth == 0 && one_value) {
				pg_buf_putc(&b, c);
				break;
			}
		} else if (c == 'N' && i + 3 <= len && !memcmp(text + i, "NaN", 3)) {
			PG_ARRAY_PUSH(lj->inserted, lj->n_inserted, cap, b.len);
			pg_buf_puts(&b, "null");
			i += 2;
			continue;
		} else if (c == 'I' && i + 8 <= len && !memcmp(text + i, "Infinity", 8)) {
			pg_buf_puts(&b, "\"inf\"   ");
			i += 7;
			continue;
		} else if (c == '-' && i + 9 <= len && !memcmp(text + i, "-Infinity", 9)) {
			pg_buf_puts(&b, "\"-inf\"   ");
			i += 8;
			continue;
		}
		pg_buf_putc(&b, c);
	}
	lj->len = b.len;
	lj->text = pg_buf_detach(&b);
}

void pg_lenient_json_release(struct pg_lenient_json *lj)
{
	free(lj->text);
	free(lj->inserted);
	memset(lj, 0, sizeof(*lj));
}

size_t pg_lenient_json_orig(const struct pg_lenient_json *lj, size_t pos)
{
	size_t shift = 0;

	/* "null" replaced the 3 bytes of "NaN" at each inserted offset */
	for (size_t i = 0; i < lj->n_inserted && lj->inserted[i] + 3 < pos; i++)
		shift++;
	return pos - shift;
}

/* ---- detection ---- */

static size_t skip_space(const char *t, size_t len, size_t i)
{
	while (i < len && isspace((unsigned char)t[i]))
		i++;
	return i;
}

static size_t skip_bom(const char *t, size_t len)
{
	return len >= 3 && !memcmp(t, "\xEF\xBB\xBF", 3) ? 3 : 0;
}

enum pg_import_format pg_import_detect(const char *text, size_t len)
{
	size_t i = skip_space(text, len, skip_bom(text, len));

	if (i < len && (text[i] == '{' || text[i] == '['))
		return PG_IMPORT_JSON;
	/* a report's JSON section: '{' then "latency" */
	for (const char *p = text; (p = memchr(p, '{', len - (size_t)(p - text))) != NULL; p++) {
		size_t j = skip_space(text, len, (size_t)(p - text) + 1);
		if (j + 9 <= len && !memcmp(text + j, "\"latency\"", 9))
			return PG_IMPORT_REPORT;
	}
	if (memmem(text, len, "Serving Benchmark Result", 24))
		return PG_IMPORT_PRINTED;
	return PG_IMPORT_UNKNOWN;
}

/* ---- finishing ---- */

static char *sanitize_name(const char *s)
{
	char *n = pg_xstrndup(s, 200);

	if (!*n) {
		free(n);
		return pg_xstrdup("unnamed");
	}
	for (char *p = n; *p; p++)
		if (*p == '/' || *p == '\\' || (unsigned char)*p < 0x20)
			*p = '_';
	if (n[0] == '.')
		n[0] = '_';
	return n;
}

void pg_import_point_suffix(struct pg_buf *b, const json_t *result)
{
	json_t *rate = json_object_get(result, "request_rate");
	json_t *mc = json_object_get(result, "max_concurrency");
	char num[PG_FMT_DOUBLE_SIZE];
	double q;

	if (json_is_number(rate))
		q = json_number_value(rate);
	else if (!json_is_string(rate) || pg_parse_double(json_string_value(rate), &q))
		return;
	pg_buf_printf(b, "_qps_%s", pg_fmt_g(num, q));
	if (json_is_integer(mc) && json_integer_value(mc) > 0)
		pg_buf_printf(b, "_concurrency_%" JSON_INTEGER_FORMAT, json_integer_value(mc));
}

static char *derive_name(const struct pg_import_ctx *ctx, const struct pg_import_rec *rec, size_t k,
			 size_t n_unnamed)
{
	struct pg_buf b = PG_BUF_INIT;
	int width = 1;
	char *name;

	if (n_unnamed == 1)
		return sanitize_name(ctx->base);
	for (size_t x = n_unnamed; x >= 10; x /= 10)
		width++;
	pg_buf_printf(&b, "%s_%0*zu", ctx->base, width, k);
	if (rec->kind == PG_SUITE_SERVING)
		pg_import_point_suffix(&b, rec->json);
	name = sanitize_name(b.ptr);
	pg_buf_release(&b);
	return name;
}

/* "<test>_qps_<q>..." -> "<test>" for serving points. */
static json_t *test_of(const char *point, enum pg_suite_kind kind)
{
	const char *q = kind == PG_SUITE_SERVING ? strstr(point, "_qps_") : NULL;
	const char *next;

	while (q && (next = strstr(q + 1, "_qps_")) != NULL)
		q = next;
	return q && q != point ? json_stringn(point, (size_t)(q - point)) : json_string(point);
}

static void put(json_t *to, const json_t *from, const char *key, json_t *fallback)
{
	json_t *v = json_object_get(from, key);

	if (v) {
		json_object_set(to, key, v);
		json_decref(fallback);
	} else if (fallback) {
		json_object_set_new(to, key, fallback);
	}
}

static json_t *gpu_object(const char *gpu)
{
	char key[128], label[256];
	json_t *g;

	if (!gpu || !*gpu)
		return NULL;
	g = json_object();
	json_object_set_new(g, "key", json_string(pg_gpu_key(key, sizeof(key), gpu)));
	json_object_set_new(g, "name", json_string(gpu));
	json_object_set_new(g, "count", json_integer(pg_gpu_count(gpu)));
	json_object_set_new(g, "label", json_string(pg_gpu_label(label, sizeof(label), gpu)));
	json_object_set_new(g, "source", json_string("import"));
	return g;
}

/* The perfgate object of an imported result, keys in docs/results.md's
 * order; what the source already had (a perfgate result, a report's
 * status) wins over what import fills in. */
static void finish(struct pg_import_ctx *ctx, struct pg_import_rec *rec, const char *name)
{
	json_t *old = json_object_get(rec->json, "perfgate");
	json_t *pg = json_object(), *imp = json_object(), *params = NULL;
	const char *gpu = rec->gpu, *key;
	json_t *v;

	if (!json_is_object(old))
		old = NULL;
	if (!gpu && rec->commands)
		gpu = json_string_value(json_object_get(rec->commands, "gpu_type"));
	if (!gpu)
		gpu = json_string_value(json_object_get(rec->json, "gpu"));
	if (!gpu)
		gpu = json_string_value(pg_json_path(old, "gpu.name"));
	if ((!gpu || !*gpu) && ctx->opts)
		gpu = ctx->opts->gpu;
	if (!json_object_get(old, "params")) {
		struct pg_params p;

		pg_params_from_result(&p, rec->json, rec->commands);
		params = pg_params_to_json(&p);
		pg_params_release(&p);
	}

	put(pg, old, "version", json_string(PERFGATE_VERSION));
	put(pg, old, "suite", json_string(pg_suite_kind_name(rec->kind)));
	put(pg, old, "test", test_of(name, rec->kind));
	put(pg, old, "point", json_string(name));
	put(pg, old, "status", json_string("ok"));
	put(pg, old, "error", json_null());
	put(pg, old, "gpu", gpu_object(gpu));
	put(pg, old, "params", params);
	json_object_foreach(old, key, v) if (!json_object_get(pg, key) && strcmp(key, "import"))
		json_object_set(pg, key, v);
	if (json_is_object(json_object_get(old, "import")))
		json_object_update(imp, json_object_get(old, "import"));
	json_object_set_new(imp, "file", json_string(ctx->source));
	json_object_set_new(imp, "format", json_string(rec->format));
	json_object_set_new(imp, "record", json_integer((json_int_t)rec->record));
	json_object_set_new(imp, "line", json_integer(rec->line));
	json_object_set_new(pg, "import", imp);
	/* replaces old (and frees it) */
	json_object_set_new(rec->json, "perfgate", pg);
}

static void ctx_release(struct pg_import_ctx *ctx)
{
	for (size_t i = 0; i < ctx->n; i++) {
		json_decref(ctx->recs[i].json);
		json_decref(ctx->recs[i].commands);
		free(ctx->recs[i].name);
		free(ctx->recs[i].gpu);
	}
	free(ctx->recs);
	ctx->recs = NULL;
	ctx->n = ctx->cap = 0;
}

int pg_import_text(struct pg_result_set *out, const char *text, size_t len, const char *source,
		   const char *base_name, const json_t *sidecar, const struct pg_import_opts *opts,
		   struct pg_error *err)
{
	struct pg_import_ctx ctx = { 0 };
	size_t n_unnamed = 0, k = 0;
	int ret;

	ctx.text = text;
	ctx.len = len;
	ctx.source = source;
	ctx.base = base_name && *base_name ? base_name : "imported";
	ctx.sidecar = sidecar;
	ctx.opts = opts;
	ctx.err = err;

	switch (pg_import_detect(text, len)) {
	case PG_IMPORT_JSON:
		ret = pg_import_json(&ctx);
		break;
	case PG_IMPORT_REPORT:
		ret = pg_import_report(&ctx);
		break;
	case PG_IMPORT_PRINTED:
		ret = pg_import_printed(&ctx);
		break;
	default:
		ret = pg_error_set(
			err, PG_ECONFIG,
			"%s: not a format perfgate imports (vllm bench JSON, llm-d records, "
			"printed Serving Benchmark Result blocks, benchmark_results.md)",
			source);
	}
	if (ret == 0 && ctx.n == 0)
		ret = pg_error_set(err, PG_ECONFIG, "%s: no results in this file", source);
	if (ret)
		goto done;

	/* a sidecar describes the one result next to it */
	if (sidecar && ctx.n == 1 && !ctx.recs[0].commands && strcmp(ctx.recs[0].format, "report"))
		ctx.recs[0].commands = json_deep_copy(sidecar);
	for (size_t i = 0; i < ctx.n; i++)
		if (!ctx.recs[i].name)
			n_unnamed++;
	for (size_t i = 0; i < ctx.n; i++) {
		struct pg_import_rec *rec = &ctx.recs[i];
		struct pg_result r = { 0 };
		char *name = rec->name ? sanitize_name(rec->name)
				       : derive_name(&ctx, rec, ++k, n_unnamed);

		finish(&ctx, rec, name);
		r.path = pg_xstrdup(source);
		r.name = name;
		r.kind = rec->kind;
		r.json = rec->json;
		r.commands = rec->commands;
		rec->json = rec->commands = NULL;
		pg_result_set_add(out, &r);
	}
done:
	ctx_release(&ctx);
	return ret;
}
