#ifndef PERFGATE_IMPORT_IMPORT_IO_H
#define PERFGATE_IMPORT_IMPORT_IO_H

#include "import/import.h"
#include "results/result.h"

struct pg_error;
struct pg_strv;

/*
 * Import one file of another tool's output (the formats and naming rules
 * are in import/import.h) and append its results to out: each with path =
 * the file, name = the point name, json = a perfgate result (vLLM's keys
 * plus the perfgate object), commands = the <stem>.commands sidecar next
 * to a single-result file, when there is one. opts may be NULL.
 *
 * A .yaml/.yml file is read as YAML (llm-d's benchmark reports) into the
 * same tree JSON gives. With opts->labels_from_path, the path's
 * <experiment>/<GPU>/<deployment>/ labels (pg_import_path_labels) go to
 * the records that lack them.
 *
 * vllm bench sweep's summary.json, run=<n>.json and run=<n>.failure.json
 * are named after their directory ("<dir>", "<dir>_run_<n>"). A perf-eval
 * aggregate whose individual_result_files are all there (relative to it)
 * gets them as its samples (perfgate.repeats); otherwise
 * perfgate.import.aggregate lists the missing ones.
 *
 * Nothing is written. On error: PG_ECONFIG (unreadable input: a one-line
 * message with the file, line and column), PG_ENOTFOUND (no such file) or
 * PG_ERR, and out is unchanged.
 */
int pg_import_file(struct pg_result_set *out, const char *path, const struct pg_import_opts *opts,
		   struct pg_error *err);

/*
 * A YAML document (llm-d's benchmark_report_v0.2,_*.yaml) of len bytes
 * read as the same tree in JSON and imported as pg_import_text imports it;
 * YAML errors carry the document's line and column. No file is touched:
 * the fuzz harness's entry point for YAML.
 */
int pg_import_yaml_text(struct pg_result_set *out, const char *text, size_t len, const char *source,
			const char *base_name, const struct pg_import_opts *opts,
			struct pg_error *err);

/*
 * The files an import of args reads: a directory stands for the files
 * in it and below it (depth first, each directory's files sorted before
 * its subdirectories) that hold results -- *.json, *.jsonl and llm-d's
 * benchmark_report*.yaml; a file for itself. perfgate's own outputs and
 * PyTorch database files -- benchmark_results.json, verdict.json,
 * *.pytorch.json, made from the result files beside them -- are left out
 * when other files of their directory are imported (as a shell glob of a
 * results directory gives them), and so is an llm-d report
 * benchmark_report*,_<file>.yaml when <file> is beside it; each with a
 * line in notes saying so. Given alone, they are imported (or refused) as
 * any file. In a directory walk, a vllm bench sweep tree's warmup.json and
 * the run=<n>.json files beside a summary.json, and the run files a
 * perf-eval aggregate names, are left out too, and summary.csv is named
 * in a note (never read). Appends to files and notes. PG_ECONFIG for a directory
 * without such files, PG_ERR when one cannot be read.
 */
int pg_import_inputs(struct pg_strv *files, struct pg_strv *notes, char *const *args, size_t n,
		     struct pg_error *err);

#endif
