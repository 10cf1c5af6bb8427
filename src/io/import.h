#ifndef PERFGATE_IO_IMPORT_H
#define PERFGATE_IO_IMPORT_H

#include "core/import.h"
#include "core/result.h"

struct pg_error;

/*
 * Import one file of another tool's output (the formats and naming rules
 * are in core/import.h) and append its results to out: each with path =
 * the file, name = the point name, json = a perfgate result (vLLM's keys
 * plus the perfgate object), commands = the <stem>.commands sidecar next
 * to a single-result file, when there is one. opts may be NULL.
 *
 * Nothing is written. On error: PG_ECONFIG (unreadable input: a one-line
 * message with the file, line and column), PG_ENOTFOUND (no such file) or
 * PG_ERR, and out is unchanged.
 */
int pg_import_file(struct pg_result_set *out, const char *path, const struct pg_import_opts *opts,
		   struct pg_error *err);

#endif
