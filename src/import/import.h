#ifndef PERFGATE_IMPORT_IMPORT_H
#define PERFGATE_IMPORT_IMPORT_H

#include <jansson.h>
#include <stddef.h>

struct pg_error;
struct pg_result;
struct pg_result_set;

/*
 * Other tools' output -> perfgate results (pure: text in, results out; the
 * file reading is import/import_io.h). docs/import.md is the long form.
 *
 * Formats, told apart by content:
 *  - JSON: one or more JSON values back to back, with or without newlines
 *    between them (a single file, --append-result / llm-d JSON lines, or
 *    objects written with no separator), or an array of them. Each object
 *    is a `vllm bench serve --save-result` record (the old
 *    "request_goodput:" key is renamed request_goodput; request_rate a
 *    number or "inf"), a `vllm bench latency` / `throughput --output-json`
 *    record, an llm-d record (a serving record with llm-d's --metadata
 *    strings: "deployment", "model", "gpu": "4xNVIDIA_L40S"), a perfgate
 *    result, a benchmark_results.json row ({"Test name": ..., "GPU": ...,
 *    header: value}), a report's tables object ({"latency": ...,
 *    "serving": ...}), a GuideLLM report, an AIPerf or GenAI-Perf export,
 *    or an llm-d benchmark report v0.2 (import_tools.c says how their
 *    metrics map to vLLM's keys); a `vllm bench startup` result (a
 *    startup point); a `vllm bench sweep` run record (run_number kept
 *    under perfgate.import.sweep; run_number -1, the warm-up, refused),
 *    its summary.json (one point, the runs its perfgate.repeats) or
 *    failure file (a point with status error); a perf-eval aggregate
 *    (perfgate.import.aggregate; import_io.c reads its run files).
 *  - Text (anything else; JSON that does not parse from its first value
 *    on is tried as text too, for logs that start with "[timestamp]"):
 *    printed "Serving Benchmark Result" blocks (vllm bench serve,
 *    benchmark_serving.py and SGLang's bench_serving, any version's
 *    labels), also under a constant line prefix ("# ", a timestamp, a
 *    logger's prefix); and JSON values inside the text (Markdown or
 *    Jekyll pages, job logs, benchmark_results.md's report sections, with
 *    Python's NaN / Infinity tokens accepted, as pandas writes them).
 *    When a printed block and a JSON record show the same run, the
 *    record (full precision) is the result.
 *
 * Point names: the source's own where it has one (a report's or record's
 * Test name, a perfgate result's perfgate.point; an llm-d record's
 * metadata, or its path's deployment: serving_<model>_<deployment>_qps_<q>,
 * the model without its organisation, e.g.
 * serving_Llama-3.1-8B-Instruct_no-features_qps_5); otherwise from
 * base_name (the file name without its extension; llm-d's
 * "benchmark_report_v0.2,_" prefix dropped): a file with one record is
 * named base_name (so vLLM's results/<test>_qps_<q>.json keeps its name);
 * with several, base_name followed, for serving records that give a
 * request rate, by _qps_<q> and, with a concurrency limit,
 * _concurrency_<c> -- when that tells them apart (a sweep); else record k
 * of n is base_name_<k> (k zero-padded to the width of n) and then that
 * suffix. Characters that cannot be in a file name ('/', control
 * characters, a leading '.') become '_'.
 *
 * Every result gets a perfgate object (docs/results.md): suite, test,
 * point, status, gpu (when the source, opts or the path names one), params
 * (the workload, results/params.h), labels (experiment, deployment) and
 * import (source file, format, record number, line, what was inferred).
 * Values keep the source's full precision.
 */
struct pg_import_opts {
	const char *gpu; /* GPU of records whose source names none, or NULL */
	/* What the file's path says (pg_import_path_labels), for records
	 * that do not say it themselves; each use is recorded under
	 * perfgate.import.inferred. NULL: nothing. The GPU comes after gpu. */
	const char *path_gpu;
	const char *experiment;
	const char *deployment;
	/* pg_import_file: fill the three above from the file's path */
	int labels_from_path;
};

/*
 * Labels in a results tree laid out as llm-d's benchmark automation lays
 * it out, <experiment>/<GPU>/<deployment>/benchmark_<date>.json: the GPU
 * is the last directory whose name is a GPU model ("L40S", "H100",
 * "8xH100", "NVIDIA_A100-SXM4-80GB", "MI300X"), the experiment the
 * directory above it, the deployment the one below it (when the file is
 * not directly in the GPU's directory). Empty strings for what the path
 * does not hold.
 */
struct pg_path_labels {
	char experiment[128];
	char gpu[128];
	char deployment[128];
};
void pg_import_path_labels(const char *path, struct pg_path_labels *out);

/* What text looks like at first sight (pg_import_text reads JSON as
 * JSON, the rest as text, whatever this says). */
enum pg_import_format {
	PG_IMPORT_UNKNOWN,
	PG_IMPORT_JSON,    /* starts with a JSON value */
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
 *
 * Pure and total: any bytes (len of them, no NUL needed) give results or
 * one error; the fuzz harness's entry point.
 */
int pg_import_text(struct pg_result_set *out, const char *text, size_t len, const char *source,
		   const char *base_name, const json_t *sidecar, const struct pg_import_opts *opts,
		   struct pg_error *err);

/*
 * Several results of one point (one output file): llm-d's experiment
 * trees keep each repeated run of a configuration as its own file. Why
 * runs[0..n) (in input order) are not repeats of one point ("the same run
 * twice", "their workloads differ", ...), or NULL when they are.
 */
const char *pg_import_not_repeats(const struct pg_result *const *runs, size_t n);
/* Those runs as one result, as `repeat: N` writes it: each key the median
 * over the runs, perfgate.repeats their metrics, perfgate.import.repeats
 * where each came from ({file, record, line}), the first run's perfgate
 * object otherwise, a cold first run left out (results/cold.h). New. */
json_t *pg_import_merge_repeats(const struct pg_result *const *runs, size_t n);

#endif
