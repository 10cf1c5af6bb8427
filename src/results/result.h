#ifndef PERFGATE_RESULTS_RESULT_H
#define PERFGATE_RESULTS_RESULT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "suite/suite.h"

/*
 * One benchmark result (one test point) in memory, and a set of them. This
 * is the pure half of results/results_io.h: the structures and what can be read from
 * them without touching a file, so that core code (the report, imports,
 * comparisons) can take a result set. Loading and writing result files is
 * in results/results_io.h; see docs/results.md for every key.
 */
struct pg_result {
	char *path; /* the .json file (imports: the source file) */
	char *name; /* the test point name (file stem) */
	enum pg_suite_kind kind;
	json_t *json;     /* the whole result (owned reference) */
	json_t *commands; /* the .commands sidecar, or NULL (owned) */
};

struct pg_result_set {
	struct pg_result *items; /* loaded from a directory: sorted by name */
	size_t n;
	size_t cap;
};

#define PG_RESULT_SET_INIT                                                                         \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}

void pg_result_release(struct pg_result *r);
void pg_result_set_release(struct pg_result_set *s);
/* Append r (moved in: r is left zeroed). */
void pg_result_set_add(struct pg_result_set *s, struct pg_result *r);
/* Move every item of from to the end of to; from is left empty. */
void pg_result_set_move(struct pg_result_set *to, struct pg_result_set *from);

/*
 * The GPU string recorded for a result, raw: the sidecar's gpu_type (vLLM:
 * one short name per line, "H100\nH100"), else perfgate.gpu.name, else a
 * top-level "gpu" (llm-d: "4xNVIDIA_L40S"). NULL when unknown. Borrowed.
 */
const char *pg_result_gpu(const struct pg_result *r);

/*
 * The report's GPU cell for a result ("8xH100"): perfgate.gpu.label when
 * recorded, else pg_gpu_label() of pg_result_gpu(). NULL when the GPU is
 * unknown. Written into out (size bytes).
 */
const char *pg_result_gpu_label(const struct pg_result *r, char *out, size_t size);

/* perfgate.status: "ok" (also when absent), "error", "skipped", "cancelled". */
const char *pg_result_status(const struct pg_result *r);

struct pg_buf;

/*
 * Did the point measure everything it was asked to? Not when requests or
 * iterations failed (serving and throughput "failed", latency
 * "failed_iterations"), when fewer requests completed than were sent
 * (serving's "completed" below its "num_prompts"), in any of its
 * repeats, or when
 * perfgate.incomplete says so. why (may be NULL) gets the reason, "32 of
 * 64 requests failed". An incomplete point's numbers are real but
 * describe a run that went wrong: it is never recorded as a baseline.
 */
bool pg_result_json_incomplete(const json_t *result, struct pg_buf *why);

/* A result (or sidecar) file's text, as vLLM writes it: indented 4, in
 * key order, then a newline. Appends to out. */
void pg_result_text(struct pg_buf *out, const json_t *json);

/* perfgate.error (why a point is not ok), or NULL. Borrowed. */
const char *pg_result_error(const struct pg_result *r);

#endif
