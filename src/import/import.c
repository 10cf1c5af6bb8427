/*
 * Import: format detection, the records' common finishing (names, the
 * perfgate object) and the helpers the format parsers share.
 */
#include "import/import.h"
#include "import/import_impl.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/filename.h"
#include "gpu/gpu.h"
#include "results/cold.h"
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
#include <strings.h>

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
	rec.pos = pos;
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

void pg_lenient_json_init(struct pg_lenient_json *lj, const char *text, size_t len)
{
	struct pg_buf b = PG_BUF_INIT;
	size_t cap = 0;
	int in_string = 0;

	memset(lj, 0, sizeof(*lj));
	pg_buf_grow(&b, len + 16);
	for (size_t i = 0; i < len; i++) {
		char c = text[i];

		if (c == '\n') {
			/* no JSON string holds a raw newline: a quote in prose
			 * around the JSON ends at its line */
			in_string = 0;
		} else if (in_string) {
			if (c == '\\' && i + 1 < len && text[i + 1] != '\n') {
				pg_buf_add(&b, text + i, 2);
				i++;
				continue;
			}
			if (c == '"')
				in_string = 0;
		} else if (c == '"') {
			in_string = 1;
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
	size_t lo = 0, hi = lj->n_inserted;

	/* "null" replaced the 3 bytes of "NaN" at each inserted offset (in
	 * increasing order): count those that end before pos */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (lj->inserted[mid] + 3 < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return pos - lo;
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

/* ---- labels from a path ---- */

/* A directory named for a GPU model: "H100", "L40S", "8xH100",
 * "NVIDIA_L40S", "A100-SXM4-80GB", "MI300X", "GB200". Not "v1", "run10". */
static bool is_gpu_dir(const char *s, size_t len)
{
	size_t i = 0, letters, digits;

	while (i < len && isdigit((unsigned char)s[i]))
		i++;
	if (i && i < len && s[i] == 'x')
		s += i + 1, len -= i + 1;
	if (len > 7 && !strncasecmp(s, "NVIDIA", 6) && strchr(" _-", s[6]))
		s += 7, len -= 7;
	for (letters = 0; letters < len && isupper((unsigned char)s[letters]); letters++)
		;
	for (digits = 0; letters + digits < len && isdigit((unsigned char)s[letters + digits]);
	     digits++)
		;
	if (!letters || letters > 2 || digits < 1 ||
	    (letters == 1 && digits < 2 && s[0] != 'L' && s[0] != 'T'))
		return false;
	if (letters == 1 && !strchr("ABHLTVKP", s[0]))
		return false;
	if (letters == 2 && strncmp(s, "MI", 2) && strncmp(s, "GB", 2) && strncmp(s, "GH", 2))
		return false;
	/* then letters ("L40S", "MI300X") and a -/_ tail ("-SXM4-80GB") */
	for (i = letters + digits; i < len && isupper((unsigned char)s[i]); i++)
		;
	return i == len || s[i] == '-' || s[i] == '_';
}

void pg_import_path_labels(const char *path, struct pg_path_labels *out)
{
	const char *comp[64];
	size_t lens[64], n = 0;
	const char *p = path, *slash;
	long g = -1;

	memset(out, 0, sizeof(*out));
	/* the directories of path, the file's name left out */
	while ((slash = strchr(p, '/')) != NULL) {
		if (slash > p && !(slash - p == 1 && *p == '.') && n < 64) {
			comp[n] = p;
			lens[n++] = (size_t)(slash - p);
		}
		p = slash + 1;
	}
	for (size_t i = n; i-- > 0;)
		if (is_gpu_dir(comp[i], lens[i])) {
			g = (long)i;
			break;
		}
	if (g < 0)
		return;
	snprintf(out->gpu, sizeof(out->gpu), "%.*s", (int)lens[g], comp[g]);
	if (g > 0 && !(lens[g - 1] == 2 && !strncmp(comp[g - 1], "..", 2)))
		snprintf(out->experiment, sizeof(out->experiment), "%.*s", (int)lens[g - 1],
			 comp[g - 1]);
	if ((size_t)g + 1 < n)
		snprintf(out->deployment, sizeof(out->deployment), "%.*s", (int)lens[n - 1],
			 comp[n - 1]);
}

/* ---- finishing ---- */

/* "<name>.commands" and what a later step adds stay well under the
 * 255-byte limit of a file name; a point suffix ("_qps_0.5_concurrency_
 * 1024") is much shorter than SUFFIX_MAX_BYTES. */
#define NAME_MAX_BYTES   200
#define SUFFIX_MAX_BYTES 56

/*
 * A record's name as its result file's: no '/', '\\' or control bytes, no
 * first '.', at most NAME_MAX_BYTES. A longer one keeps its start and its
 * point suffix ("_qps_4"), with a hash of its test part between: the
 * points of one long test keep one test name, and two tests that share
 * their first 200 bytes stay two.
 */
static char *sanitize_name(const char *s)
{
	size_t len = strlen(s), sfx = 0;
	const char *q = strstr(s, "_qps_"), *next;
	struct pg_buf b = PG_BUF_INIT, capped = PG_BUF_INIT;
	char *n, *test;

	if (!len)
		return pg_xstrdup("unnamed");
	n = pg_xstrdup(s);
	for (char *p = n; *p; p++)
		if (*p == '/' || *p == '\\' || (unsigned char)*p < 0x20)
			*p = '_';
	if (n[0] == '.')
		n[0] = '_';
	if (len <= NAME_MAX_BYTES)
		return n;
	while (q && (next = strstr(q + 1, "_qps_")) != NULL)
		q = next;
	if (q && q != s && strlen(q) <= SUFFIX_MAX_BYTES)
		sfx = strlen(q);
	test = pg_xstrndup(s, len - sfx);
	pg_buf_puts(&b, n + len - sfx);
	n[len - sfx] = '\0';
	/* the same length for every point of the test */
	pg_file_name_cap(n, NAME_MAX_BYTES - (sfx ? SUFFIX_MAX_BYTES : 0), test);
	pg_buf_printf(&capped, "%s%s", n, b.ptr);
	free(test);
	free(n);
	pg_buf_release(&b);
	return pg_buf_detach(&capped);
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

/* The point suffix of an unnamed record ("_qps_4"), new; "" for none. */
static char *suffix_of(const struct pg_import_rec *rec)
{
	struct pg_buf b = PG_BUF_INIT;

	pg_buf_puts(&b, "");
	if (rec->kind == PG_SUITE_SERVING)
		pg_import_point_suffix(&b, rec->json);
	return pg_buf_detach(&b);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether the unnamed records of a file are told apart by their rate and
 * concurrency alone (a sweep: one test, a point per rate). */
static bool by_rate_alone(const struct pg_import_ctx *ctx, size_t n_unnamed)
{
	char **sfx = pg_xcalloc(n_unnamed ? n_unnamed : 1, sizeof(*sfx));
	size_t n = 0;
	bool ok = n_unnamed > 1;

	for (size_t i = 0; i < ctx->n; i++)
		if (!ctx->recs[i].name)
			sfx[n++] = suffix_of(&ctx->recs[i]);
	qsort(sfx, n, sizeof(*sfx), cmp_str);
	for (size_t i = 0; i < n && ok; i++)
		ok = *sfx[i] && (i == 0 || strcmp(sfx[i - 1], sfx[i]));
	for (size_t i = 0; i < n; i++)
		free(sfx[i]);
	free(sfx);
	return ok;
}

static char *derive_name(const struct pg_import_ctx *ctx, const struct pg_import_rec *rec, size_t k,
			 size_t n_unnamed, bool by_rate)
{
	struct pg_buf b = PG_BUF_INIT;
	int width = 1;
	char *name;

	if (n_unnamed == 1)
		return sanitize_name(ctx->base);
	for (size_t x = n_unnamed; x >= 10; x /= 10)
		width++;
	pg_buf_puts(&b, ctx->base);
	if (!by_rate)
		pg_buf_printf(&b, "_%0*zu", width, k);
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

/* perfgate.labels: the source's (a perfgate result's labels, an llm-d
 * record's deployment), else what the path says. NULL for none. */
static json_t *labels_of(const struct pg_import_ctx *ctx, const struct pg_import_rec *rec,
			 const json_t *old, json_t *inferred)
{
	json_t *labels = json_deep_copy(json_object_get(old, "labels"));
	const char *deployment = json_string_value(json_object_get(rec->json, "deployment"));
	const struct pg_import_opts *o = ctx->opts;

	if (!json_is_object(labels)) {
		json_decref(labels);
		labels = json_object();
	}
	if (deployment && *deployment && !json_object_get(labels, "deployment"))
		json_object_set_new(labels, "deployment", json_string(deployment));
	if (o && o->experiment && *o->experiment && !json_object_get(labels, "experiment")) {
		json_object_set_new(labels, "experiment", json_string(o->experiment));
		json_object_set_new(inferred, "experiment", json_string(o->experiment));
	}
	if (o && o->deployment && *o->deployment && !json_object_get(labels, "deployment")) {
		json_object_set_new(labels, "deployment", json_string(o->deployment));
		json_object_set_new(inferred, "deployment", json_string(o->deployment));
	}
	if (!json_object_size(labels)) {
		json_decref(labels);
		return NULL;
	}
	return labels;
}

/* The perfgate object of an imported result, keys in docs/results.md's
 * order; what the source already had (a perfgate result, a report's
 * status) wins over what import fills in. */
static void finish(struct pg_import_ctx *ctx, struct pg_import_rec *rec, const char *name)
{
	json_t *old = json_object_get(rec->json, "perfgate");
	json_t *pg = json_object(), *imp = json_object(), *params = NULL;
	json_t *inferred = json_object(), *labels;
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
	if ((!gpu || !*gpu) && ctx->opts && ctx->opts->path_gpu && *ctx->opts->path_gpu) {
		gpu = ctx->opts->path_gpu;
		json_object_set_new(inferred, "gpu", json_string(gpu));
	}
	labels = labels_of(ctx, rec, old, inferred);
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
	if (labels)
		json_object_set_new(pg, "labels", labels);
	json_object_foreach(old, key, v) if (!json_object_get(pg, key) && strcmp(key, "import"))
		json_object_set(pg, key, v);
	json_object_set_new(imp, "file", json_string(ctx->source));
	json_object_set_new(imp, "format", json_string(rec->format));
	json_object_set_new(imp, "record", json_integer((json_int_t)rec->record));
	json_object_set_new(imp, "line", json_integer(rec->line));
	/* and what the source or a converter kept there (tool, unparsed rows) */
	if (json_is_object(json_object_get(old, "import")))
		json_object_update_missing(imp, json_object_get(old, "import"));
	if (json_object_size(inferred))
		json_object_set(imp, "inferred", inferred);
	json_decref(inferred);
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

/* ---- the records of one file, settled ---- */

static int rec_cmp(const void *a, const void *b)
{
	const struct pg_import_rec *x = a, *y = b;

	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	return (x->record > y->record) - (x->record < y->record);
}

static bool is_record_format(const char *format)
{
	return !strcmp(format, "vllm-serve") || !strcmp(format, "llm-d") ||
	       !strcmp(format, "sglang-serve");
}

/* Whether a printed block shows the run of a JSON record: the same
 * completed count, and every number it prints is the record's, rounded
 * (vLLM prints two decimals). */
static bool same_run(const json_t *printed, const json_t *rec)
{
	const char *key;
	json_t *v;
	size_t matched = 0;

	if (!json_is_integer(json_object_get(printed, "completed")) ||
	    !json_equal(json_object_get(printed, "completed"), json_object_get(rec, "completed")))
		return false;
	json_object_foreach((json_t *)printed, key, v)
	{
		json_t *r = json_object_get(rec, key);
		double p, q;

		if (!json_is_number(v) || !json_is_number(r))
			continue;
		p = json_number_value(v);
		q = json_number_value(r);
		if (json_is_integer(v) && json_is_integer(r) ? p != q
							     : fabs(p - q) > 0.005 + 1e-9 * fabs(q))
			return false;
		matched++;
	}
	return matched >= 2; /* completed and at least one measurement */
}

/*
 * Full precision wins: a job log holding both the printed block and the
 * JSON record of a run (vllm bench serve's output, then `cat` of its
 * result; llm-d's RESULT_START lines) gives one result, the record's, with
 * the printed block's line kept under perfgate.import.printed_line.
 */
static void drop_printed_twins(struct pg_import_ctx *ctx)
{
	bool *taken = pg_xcalloc(ctx->n ? ctx->n : 1, sizeof(*taken));
	size_t kept = 0;

	for (size_t i = 0; i < ctx->n; i++) {
		struct pg_import_rec *p = &ctx->recs[i];

		if (strcmp(p->format, "printed"))
			continue;
		for (size_t j = 0; j < ctx->n; j++) {
			struct pg_import_rec *r = &ctx->recs[j];

			if (taken[j] || !is_record_format(r->format) || !same_run(p->json, r->json))
				continue;
			taken[j] = true;
			pg_import_set_path(r->json, "perfgate.import.printed_line",
					   json_integer(p->line));
			json_decref(p->json);
			json_decref(p->commands);
			free(p->name);
			free(p->gpu);
			p->json = NULL;
			break;
		}
	}
	for (size_t i = 0; i < ctx->n; i++)
		if (ctx->recs[i].json)
			ctx->recs[kept++] = ctx->recs[i];
	ctx->n = kept;
	free(taken);
}

/* In file order, numbered 1..n. */
static void settle(struct pg_import_ctx *ctx)
{
	if (ctx->n > 1)
		qsort(ctx->recs, ctx->n, sizeof(*ctx->recs), rec_cmp);
	drop_printed_twins(ctx);
	for (size_t i = 0; i < ctx->n; i++)
		ctx->recs[i].record = i + 1;
}

/* Printed blocks, then JSON inside the text. */
static int scan_text(struct pg_import_ctx *ctx)
{
	int ret = pg_import_printed(ctx);

	return ret ? ret : pg_import_embedded(ctx);
}

/* llm-d names its reports benchmark_report_v0.2,_<result file>.yaml: the
 * result file's stem is the name. */
static char *clean_base(const char *base)
{
	static const char *const prefixes[] = { "benchmark_report_v0.2,_",
						"benchmark_report_v0.2.1,_", "benchmark_report,_" };
	static const char *const exts[] = { ".json", ".jsonl", ".yaml", ".yml", ".txt", ".log" };
	char *b;

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (pg_str_has_prefix(base, prefixes[i]) && base[strlen(prefixes[i])]) {
			base += strlen(prefixes[i]);
			break;
		}
	b = pg_xstrdup(base);
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		size_t n = strlen(b), e = strlen(exts[i]);
		if (n > e && !strcmp(b + n - e, exts[i]))
			b[n - e] = '\0';
	}
	return b;
}

static int import_ctx(struct pg_import_ctx *ctx)
{
	enum pg_import_format format = pg_import_detect(ctx->text, ctx->len);
	int ret;

	if (format != PG_IMPORT_JSON) {
		ret = scan_text(ctx);
		if (ret == 0 && ctx->n == 0 && format == PG_IMPORT_UNKNOWN)
			ret = pg_error_set(ctx->err, PG_ECONFIG,
					   "%s: not a format perfgate imports (vllm bench JSON, "
					   "llm-d records and reports, GuideLLM, AIPerf or "
					   "GenAI-Perf exports, printed Serving Benchmark Result "
					   "blocks, benchmark_results.md, JSON inside text)",
					   ctx->source);
		return ret;
	}
	ret = pg_import_json(ctx);
	if (ret && ctx->first_value_bad) {
		/* text that merely starts like JSON ("[2025-06-01 10:00:00]
		 * ..."): read as text if that finds results, else the JSON
		 * error stands */
		struct pg_import_ctx t = *ctx;
		struct pg_error terr = PG_ERROR_INIT, *err = ctx->err;

		t.recs = NULL;
		t.n = t.cap = t.records = t.line_pos = 0;
		t.line_no = 0;
		t.err = &terr;
		if (scan_text(&t) == 0 && t.n > 0) {
			ctx_release(ctx);
			*ctx = t;
			ctx->err = err;
			pg_error_clear(err);
			return 0;
		}
		ctx_release(&t);
	}
	return ret;
}

int pg_import_text(struct pg_result_set *out, const char *text, size_t len, const char *source,
		   const char *base_name, const json_t *sidecar, const struct pg_import_opts *opts,
		   struct pg_error *err)
{
	struct pg_import_ctx ctx = { 0 };
	char *base = clean_base(base_name && *base_name ? base_name : "imported");
	size_t n_unnamed = 0, k = 0;
	bool by_rate;
	int ret;

	ctx.text = text;
	ctx.len = len;
	ctx.source = source;
	ctx.base = base;
	ctx.sidecar = sidecar;
	ctx.opts = opts;
	ctx.err = err;

	ret = import_ctx(&ctx);
	if (ret == 0 && ctx.n == 0)
		ret = pg_error_set(err, PG_ECONFIG, "%s: no results in this file", source);
	if (ret)
		goto done;
	settle(&ctx);

	/* a sidecar describes the one result next to it */
	if (sidecar && ctx.n == 1 && !ctx.recs[0].commands && strcmp(ctx.recs[0].format, "report"))
		ctx.recs[0].commands = json_deep_copy(sidecar);
	for (size_t i = 0; i < ctx.n; i++)
		if (!ctx.recs[i].name)
			n_unnamed++;
	by_rate = by_rate_alone(&ctx, n_unnamed);
	for (size_t i = 0; i < ctx.n; i++) {
		struct pg_import_rec *rec = &ctx.recs[i];
		struct pg_result r = { 0 };
		char *name = rec->name ? sanitize_name(rec->name)
				       : derive_name(&ctx, rec, ++k, n_unnamed, by_rate);

		finish(&ctx, rec, name);
		/* runs of one point (a sweep's summary, an earlier perfgate's
		 * repeats): a cold first one is left out as a run leaves it */
		pg_cold_apply(rec->json, NULL);
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
	free(base);
	return ret;
}
