#ifndef PERFGATE_IMPORT_IMPORT_H
#define PERFGATE_IMPORT_IMPORT_H

#include <jansson.h>
#include <stddef.h>

struct pg_error;
struct pg_result_set;

/*
 * Other tools' output -> perfgate results (pure: text in, results out; the
 * file reading is import/import_io.h).
 *
 * Formats, told apart by content:
 *  - JSON: one or more JSON values back to back, with or without newlines
 *    between them (a single file, --append-result / llm-d JSON lines, or
 *    objects written with no separator), or an array of them. Each object
 *    is a `vllm bench serve --save-result` record (the old
 *    "request_goodput:" key is renamed request_goodput; request_rate a
 *    number or "inf"), a `vllm bench latency` / `throughput --output-json`
 *    record, an llm-d record (a serving record with llm-d's --metadata
 *    strings: "deployment", "model", "gpu": "4xNVIDIA_L40S"), a perfgate result, a
 *    benchmark_results.json row ({"Test name": ..., "GPU": ..., header:
 *    value}), or a report's tables object ({"latency": ..., "serving": ...}).
 *  - a benchmark_results.md report (or several, one after another): every
 *    JSON section in it ({"latency": ...}, Python's NaN / Infinity tokens
 *    accepted, as pandas writes them).
 *  - text with printed "Serving Benchmark Result" blocks (vllm bench serve,
 *    benchmark_serving.py and SGLang's bench_serving, any version's labels),
 *    any number of them, anything between them.
 *
 * Point names: the source's own where it has one (a report's or record's
 * Test name, a perfgate result's perfgate.point; an llm-d record's
 * metadata: serving_<model>_<deployment>_qps_<q>, the model without its
 * organisation, e.g. serving_Llama-3.1-8B-Instruct_no-features_qps_5);
 * otherwise from base_name
 * (the file name without its extension): a file with one record is named
 * base_name (so vLLM's results/<test>_qps_<q>.json keeps its name); with
 * several, record k of n is base_name_<k> (k zero-padded to the width of n)
 * followed, for serving records that give a request rate, by _qps_<q> and,
 * with a concurrency limit, _concurrency_<c>. Characters that cannot be in
 * a file name ('/', control characters, a leading '.') become '_'.
 *
 * Every result gets a perfgate object (docs/results.md): suite, test,
 * point, status, gpu (when the source or opts names one), params (the
 * workload, results/params.h) and import (source file, format, record number,
 * line). Values keep the source's full precision.
 */
struct pg_import_opts {
	const char *gpu; /* GPU of records whose source names none, or NULL */
};

enum pg_import_format {
	PG_IMPORT_UNKNOWN,
	PG_IMPORT_JSON,    /* JSON values (records, arrays, report tables) */
	PG_IMPORT_REPORT,  /* markdown with report JSON sections */
	PG_IMPORT_PRINTED, /* printed Serving Benchmark Result blocks */
};

enum pg_import_format pg_import_detect(const char *text, size_t len);

/*
 * Parse text (the content of file `source`, used in messages) and append
 * its results to out, each with path = source and name = the point name.
 * sidecar: the <base_name>.commands object next to the file, or NULL; it
 * is attached to a single-record JSON file's result. opts may be NULL.
 *
 * On error: PG_ECONFIG with "<source>:<line>:<col>: <what>" (and the record
 * or report number), and nothing appended to out.
 */
int pg_import_text(struct pg_result_set *out, const char *text, size_t len, const char *source,
		   const char *base_name, const json_t *sidecar, const struct pg_import_opts *opts,
		   struct pg_error *err);

#endif
