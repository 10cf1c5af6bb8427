#ifndef PERFGATE_RESULTS_RESULTS_IO_H
#define PERFGATE_RESULTS_RESULTS_IO_H

#include <jansson.h>

#include "results/result.h"

struct pg_error;

/*
 * A results directory: one <point>.json per test point, in vLLM's key layout,
 * plus a <point>.commands sidecar as vLLM writes it (server_command,
 * client_command or latency_command/throughput_command, gpu_type). perfgate's
 * own data sits under one top-level "perfgate" object so vLLM tooling reads
 * the files unchanged. See docs/results.md for every key. The structures
 * (struct pg_result, struct pg_result_set) and their pure accessors are in
 * results/result.h.
 */

/*
 * Load every result in dir. Files that are JSON but not benchmark results
 * (benchmark_results.json, verdicts, *.pytorch.json) are skipped; a .json
 * file that does not parse is an error naming the file, line and column.
 * Symbolic links are not followed: a link in a results directory (which
 * the benchmarked server and command can write into) is not a result, and
 * a sidecar that is one is not read. PG_ENOTFOUND when dir does not exist.
 */
int pg_results_load_dir(struct pg_result_set *out, const char *dir, struct pg_error *err);

/* Load one result file (and its sidecar). PG_ENOTFOUND when the file parses
 * but is not a benchmark result. */
int pg_result_load(struct pg_result *out, const char *path, struct pg_error *err);

/*
 * Write <dir>/<name>.json (indented 4, as vLLM writes) and, when commands is
 * not NULL, <dir>/<name>.commands, each atomically.
 */
int pg_result_write(const char *dir, const char *name, const json_t *result, const json_t *commands,
		    struct pg_error *err);

/* Parse JSON text with jansson, with errors as "<source>:<line>:<col>: <text>". */
json_t *pg_results_parse_json(const char *text, size_t len, const char *source,
			      struct pg_error *err);

/* Read and parse a JSON file. */
json_t *pg_results_load_json(const char *path, struct pg_error *err);

#endif
