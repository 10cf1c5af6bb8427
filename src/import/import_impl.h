#ifndef PERFGATE_IMPORT_IMPORT_IMPL_H
#define PERFGATE_IMPORT_IMPORT_IMPL_H

/* Shared by import*.c only. */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "import/import.h"
#include "suite/suite.h"

struct pg_buf;
struct pg_error;

/* One parsed record, before names are settled. */
struct pg_import_rec {
	json_t *json;     /* the result (owned) */
	json_t *commands; /* sidecar (owned) or NULL */
	char *name;       /* the source's own name, or NULL (derive one) */
	char *gpu;        /* raw GPU string from the source, or NULL */
	enum pg_suite_kind kind;
	const char *format; /* "vllm-serve", "report", ... (static) */
	size_t record;      /* 1-based number in the file */
	size_t pos;         /* byte offset where it starts */
	int line;           /* where it starts */
};

struct pg_import_ctx {
	const char *text;
	size_t len;
	const char *source;
	const char *base;
	const json_t *sidecar;
	const struct pg_import_opts *opts;
	struct pg_error *err;
	struct pg_import_rec *recs;
	size_t n, cap;
	size_t records;  /* records seen, for numbering */
	size_t line_pos; /* pg_import_line's cache */
	int line_no;
	bool first_value_bad; /* pg_import_json: the first value did not parse */
};

/* "<source>:<line>:<col>: <message>" for the byte offset pos in ctx->text. */
int pg_import_fail(struct pg_import_ctx *ctx, size_t pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int pg_import_line(struct pg_import_ctx *ctx, size_t pos);

/* Take a record (json moved in). name and gpu are copied; either may be NULL. */
void pg_import_push(struct pg_import_ctx *ctx, json_t *json, enum pg_suite_kind kind,
		    const char *name, const char *gpu, const char *format, size_t pos);

/*
 * JSON text that may hold Python's non-standard tokens: NaN becomes null,
 * Infinity and -Infinity the strings "inf" and "-inf" (as vLLM writes an
 * infinite request_rate). Positions map back to the original text.
 */
struct pg_lenient_json {
	char *text;
	size_t len;
	size_t *inserted; /* offsets (in text) where one byte was added */
	size_t n_inserted;
};
void pg_lenient_json_init(struct pg_lenient_json *lj, const char *text, size_t len);
void pg_lenient_json_release(struct pg_lenient_json *lj);
size_t pg_lenient_json_orig(const struct pg_lenient_json *lj, size_t pos);

/* The formats: JSON values (import_json.c); text (import_scan.c) with
 * printed blocks (import_printed.c) and JSON values inside it (records,
 * report sections, tools' summaries). */
int pg_import_json(struct pg_import_ctx *ctx);
int pg_import_printed(struct pg_import_ctx *ctx);
int pg_import_embedded(struct pg_import_ctx *ctx);

/* One JSON value (an object, or an array of them) of results; *reports
 * counts report tables objects, for messages. */
int pg_import_value(struct pg_import_ctx *ctx, const json_t *v, size_t pos, size_t *reports);
/* Whether a value found inside text holds results perfgate reads (and is
 * then read strictly), rather than being some other JSON. */
bool pg_import_is_results(const json_t *v);

/* A report's tables object {"latency": {...}, ...}; report_no is 1-based. */
int pg_import_report_tables(struct pg_import_ctx *ctx, const json_t *tables, size_t pos,
			    size_t report_no);
/* One table row, {header: value} (a benchmark_results.json record); kind
 * < 0 infers the suite from the headers. where: "report 2, serving row 3". */
int pg_import_table_row(struct pg_import_ctx *ctx, int kind, const json_t *row, size_t pos,
			const char *where, const char *format);

/* Append a serving record's point suffix, from its own request_rate and
 * max_concurrency: "_qps_4", "_qps_inf_concurrency_16"; nothing without a
 * rate. */
void pg_import_point_suffix(struct pg_buf *b, const json_t *result);

/* Other tools' summaries (import_tools.c): GuideLLM reports, AIPerf and
 * GenAI-Perf exports, llm-d benchmark reports v0.2. */
enum pg_import_tool {
	PG_TOOL_NONE,
	PG_TOOL_GUIDELLM,
	PG_TOOL_AIPERF,
	PG_TOOL_LLMD_REPORT,
};
enum pg_import_tool pg_import_tool_of(const json_t *o);
/* Push the records of such an object (pos: where it starts); PG_ECONFIG
 * with a message when it cannot be read. */
int pg_import_tool_object(struct pg_import_ctx *ctx, const json_t *o, size_t pos);

/* Set obj[dotted key] = v (stolen), creating intermediate objects. */
void pg_import_set_path(json_t *obj, const char *dotted_key, json_t *v);

#endif
