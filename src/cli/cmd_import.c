/*
 * perfgate import FILE... [-o DIR]: other tools' output -> perfgate result
 * files. Every file is read and checked before anything is written, so a
 * bad input leaves the results directory as it was.
 */
#include "cli/cmd.h"
#include "cli/common.h"
#include "cli/opt.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "base/jsonw.h"
#include "base/error.h"
#include "gpu/gpu.h"
#include "sys/fsutil.h"
#include "import/import.h"
#include "import/import_io.h"
#include "results/cold.h"
#include "results/metrics.h"
#include "results/results_io.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *outdir;
static const char *gpu;

/* clang-format off */
static const struct pg_opt opts[] = {
    {PG_OPT_STRING, "output", 'o', &outdir, "DIR", "write result files here (default: results)"},
    {PG_OPT_STRING, "gpu", 0, &gpu, "NAME",
     "GPU of records whose source names none (\"8xH100\", \"H100\")"},
    {PG_OPT_END}};

static const struct pg_cmd_help help = {
	"import", "[options] FILE|DIR...",
	"turn vllm bench / llm-d / printed results into perfgate result files",
	"Reads vllm bench serve/latency/throughput JSON (one object, JSON lines, or\n"
	"objects back to back, as llm-d writes them), text holding printed\n"
	"\"Serving Benchmark Result\" blocks, and benchmark_results.md reports or\n"
	"benchmark_results.json records, GuideLLM reports, AIPerf and GenAI-Perf\n"
	"exports, llm-d benchmark reports (v0.2, YAML or JSON) and JSON records\n"
	"inside any text (Markdown pages, job logs), and writes one result file\n"
	"per point into DIR. - reads stdin. A directory stands for the .json,\n"
	".jsonl and benchmark_report*.yaml files in it and below it; a path laid\n"
	"out as <experiment>/<GPU>/<deployment>/ gives the records that lack them\n"
	"their GPU, experiment and deployment (a note says so). perfgate's own outputs\n"
	"(benchmark_results.json, verdict.json), *.pytorch.json files and llm-d\n"
	"reports made from a result file beside them are skipped, with a note.\n"
	"When the inputs span several experiments or GPUs, each gets its own\n"
	"directory, DIR/<experiment>/<GPU>. Several results of one point (llm-d\n"
	"keeps each repeated run as a file of its own) become that point's repeats,\n"
	"said per point. Nothing is written unless every input is readable\n"
	"(docs/import.md).",
	opts,
};
/* clang-format on */

struct target {
	size_t index; /* into the result set */
	char *dir;    /* output directory */
};

static int target_cmp(const void *a, const void *b, void *arg)
{
	const struct target *x = a, *y = b;
	const struct pg_result_set *rs = arg;
	int c = strcmp(x->dir, y->dir);

	if (c)
		return c;
	c = strcmp(rs->items[x->index].name, rs->items[y->index].name);
	return c ? c : (x->index > y->index) - (x->index < y->index);
}

static void add_file(struct pg_file_out *files, struct pg_buf *texts, size_t *n, const char *dir,
		     const char *name, const char *ext, const json_t *json)
{
	struct pg_buf path = PG_BUF_INIT;

	pg_buf_printf(&path, "%s/%s%s", dir, name, ext);
	pg_result_text(&texts[*n], json);
	files[*n].path = pg_buf_detach(&path);
	files[*n].data = texts[*n].ptr;
	files[*n].len = texts[*n].len;
	(*n)++;
}

static long record_of(const struct pg_result *r)
{
	json_t *v = json_object_get(json_object_get(json_object_get(r->json, "perfgate"), "import"),
				    "record");
	return json_is_integer(v) ? (long)json_integer_value(v) : 0;
}

/* A directory name of a GPU key or a label: no '/', nothing odd. */
static void dir_safe(char *s)
{
	for (char *c = s; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("._-", *c))
			*c = '_';
	if (s[0] == '.')
		s[0] = '_';
}

/* Failed points (a sweep's failure files) and aggregates kept as one
 * sample are said, never imported in silence. */
static void note_failed_and_aggregates(const char *file, const struct pg_result_set *rs,
				       size_t from)
{
	for (size_t i = from; i < rs->n; i++) {
		const json_t *pg = json_object_get(rs->items[i].json, "perfgate");
		const json_t *agg = pg_json_path(pg, "import.aggregate");
		const char *status = json_string_value(json_object_get(pg, "status"));

		if (status && strcmp(status, "ok"))
			fprintf(stderr, "perfgate import: %s: %s is a failed point (%s): %s\n",
				file, rs->items[i].name, status,
				json_is_string(json_object_get(pg, "error"))
					? json_string_value(json_object_get(pg, "error"))
					: "no message");
		if (pg_cold_result_note(rs->items[i].json))
			fprintf(stderr, "perfgate import: %s: %s: %s\n", file, rs->items[i].name,
				pg_cold_result_note(rs->items[i].json));
		if (json_is_object(agg))
			fprintf(stderr,
				"perfgate import: %s: %s aggregates %lld runs (%s); samples: %s\n",
				file, rs->items[i].name,
				(long long)json_integer_value(json_object_get(agg, "repetitions")),
				json_is_string(json_object_get(agg, "method"))
					? json_string_value(json_object_get(agg, "method"))
					: "method not given",
				json_object_get(agg, "missing")
					? "the aggregate alone (its run files are not there)"
					: json_string_value(json_object_get(agg, "samples")));
	}
}

/* What the results of one file took from its path, once per file. */
static void note_inferred(const char *file, const struct pg_result_set *rs, size_t from)
{
	for (size_t i = from; i < rs->n; i++) {
		json_t *inf = pg_json_path(rs->items[i].json, "perfgate.import.inferred");
		const char *key;
		json_t *v;
		const char *sep = "";

		if (!json_object_size(inf))
			continue;
		fprintf(stderr, "perfgate import: %s: from its path:", file);
		json_object_foreach(inf, key, v)
		{
			fprintf(stderr, "%s %s %s", sep, key, json_string_value(v));
			sep = ",";
		}
		fputc('\n', stderr);
		return;
	}
}

/*
 * Results that would write one file: the runs of one point (llm-d's
 * experiment trees keep each repeated run as a file of its own) become
 * that point's repeats, said per point; anything else is refused. targets
 * is sorted, so they are neighbours, in input order. The merged result
 * takes the first run's place; the others' json is left NULL.
 */
static int merge_repeats(struct pg_result_set *rs, const struct target *targets,
			 struct pg_error *err)
{
	const struct pg_result **runs = pg_xcalloc(rs->n ? rs->n : 1, sizeof(*runs));
	int ret = 0;

	for (size_t i = 0, end; i < rs->n && !ret; i = end) {
		const char *why;
		size_t n;

		for (end = i + 1;
		     end < rs->n && !strcmp(targets[end].dir, targets[i].dir) &&
		     !strcmp(rs->items[targets[end].index].name, rs->items[targets[i].index].name);
		     end++)
			;
		if ((n = end - i) < 2)
			continue;
		for (size_t k = 0; k < n; k++)
			runs[k] = &rs->items[targets[i + k].index];
		if ((why = pg_import_not_repeats(runs, n)) != NULL) {
			ret = pg_error_set(
				err, PG_ECONFIG,
				"two results would be %s/%s.json: %s (record %ld) and %s "
				"(record %ld), not repeats of one point (%s); import them "
				"into different directories (-o)",
				targets[i].dir, runs[0]->name, runs[0]->path, record_of(runs[0]),
				runs[1]->path, record_of(runs[1]), why);
			break;
		}
		{
			json_t *merged = pg_import_merge_repeats(runs, n);
			struct pg_result *first = &rs->items[targets[i].index];
			const char *cold = pg_cold_result_note(merged);

			fprintf(stderr, "perfgate import: %s: %zu repeats of one point, from",
				first->name, n);
			for (size_t k = 0; k < n; k++)
				fprintf(stderr, "%s %s", k ? (k + 1 < n ? "," : " and") : "",
					runs[k]->path);
			fputc('\n', stderr);
			if (cold)
				fprintf(stderr, "perfgate import: %s: %s\n", first->name, cold);
			for (size_t k = 1; k < n; k++) {
				struct pg_result *r = &rs->items[targets[i + k].index];
				json_decref(r->json);
				r->json = NULL;
			}
			json_decref(first->json);
			first->json = merged;
		}
	}
	free(runs);
	return ret;
}

int cmd_import(int argc, char **argv)
{
	struct pg_strv pos = PG_STRV_INIT, inputs = PG_STRV_INIT, notes = PG_STRV_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	struct pg_import_opts iopts = { 0 };
	struct target *targets = NULL;
	char(*keys)[128] = NULL, (*exps)[128] = NULL;
	struct pg_file_out *files = NULL;
	struct pg_buf *texts = NULL;
	size_t n_files = 0;
	int split = 0, split_exp = 0, rc;

	outdir = NULL;
	gpu = NULL;
	if (pg_cmd_parse(&help, argc, argv, &pos, 1, SIZE_MAX, "input files", &rc))
		goto done;
	if (!outdir)
		outdir = "results";
	iopts.gpu = gpu && *gpu ? gpu : NULL;
	iopts.labels_from_path = 1;

	if ((rc = pg_import_inputs(&inputs, &notes, pos.v, pos.n, &err)) != 0)
		goto fail;
	for (size_t i = 0; i < notes.n; i++)
		fprintf(stderr, "perfgate import: %s\n", notes.v[i]);
	for (size_t i = 0; i < inputs.n; i++) {
		size_t before = rs.n;

		if ((rc = pg_cmd_import_file(&rs, inputs.v[i], &iopts, &err)) != 0) {
			if (rc == PG_ENOTFOUND)
				err.code = PG_ECONFIG; /* a missing input is a usage error */
			goto fail;
		}
		note_inferred(inputs.v[i], &rs, before);
		note_failed_and_aggregates(inputs.v[i], &rs, before);
	}

	/* one directory per experiment and per GPU when the inputs hold several */
	keys = pg_xcalloc(rs.n ? rs.n : 1, sizeof(*keys));
	exps = pg_xcalloc(rs.n ? rs.n : 1, sizeof(*exps));
	for (size_t i = 0; i < rs.n; i++) {
		const char *e = json_string_value(
			pg_json_path(rs.items[i].json, "perfgate.labels.experiment"));

		pg_gpu_key(keys[i], sizeof(keys[i]), pg_result_gpu(&rs.items[i]));
		snprintf(exps[i], sizeof(exps[i]), "%s", e && *e ? e : "unlabelled");
		dir_safe(keys[i]);
		dir_safe(exps[i]);
		if (i && strcmp(keys[i], keys[0]))
			split = 1;
		if (i && strcmp(exps[i], exps[0]))
			split_exp = 1;
	}
	targets = pg_xcalloc(rs.n ? rs.n : 1, sizeof(*targets));
	for (size_t i = 0; i < rs.n; i++) {
		struct pg_buf dir = PG_BUF_INIT;

		pg_buf_puts(&dir, outdir);
		if (split_exp)
			pg_buf_printf(&dir, "/%s", exps[i]);
		if (split)
			pg_buf_printf(&dir, "/%s", keys[i]);
		targets[i].index = i;
		targets[i].dir = pg_buf_detach(&dir);
	}
	qsort_r(targets, rs.n, sizeof(*targets), target_cmp, &rs);
	if ((rc = merge_repeats(&rs, targets, &err)) != 0)
		goto fail;

	/* all files in one batch: one sync for thousands of results */
	files = pg_xcalloc(2 * rs.n + 1, sizeof(*files));
	texts = pg_xcalloc(2 * rs.n + 1, sizeof(*texts));
	for (size_t i = 0; i < rs.n; i++) {
		const struct pg_result *r = &rs.items[targets[i].index];

		if (!r->json)
			continue; /* a repeat, merged into its point */
		if (i == 0 || strcmp(targets[i - 1].dir, targets[i].dir))
			if ((rc = pg_mkdir_p(targets[i].dir, &err)) != 0)
				goto fail;
		add_file(files, texts, &n_files, targets[i].dir, r->name, ".json", r->json);
		if (r->commands)
			add_file(files, texts, &n_files, targets[i].dir, r->name, ".commands",
				 r->commands);
	}
	if ((rc = pg_files_write_atomic(files, n_files, &err)) != 0)
		goto fail;
	for (size_t i = 0, count = 0; i < rs.n; i++) {
		count += rs.items[targets[i].index].json != NULL;
		if (i + 1 < rs.n && !strcmp(targets[i + 1].dir, targets[i].dir))
			continue;
		printf("%s: %zu result%s\n", targets[i].dir, count, count == 1 ? "" : "s");
		count = 0;
	}
	rc = PG_EXIT_OK;
	goto done;
fail:
	rc = pg_cmd_fail("import", &err);
done:
	for (size_t i = 0; targets && i < rs.n; i++)
		free(targets[i].dir);
	free(targets);
	free(keys);
	free(exps);
	for (size_t i = 0; i < n_files; i++) {
		free((char *)files[i].path);
		pg_buf_release(&texts[i]);
	}
	free(files);
	free(texts);
	pg_result_set_release(&rs);
	pg_strv_release(&pos);
	pg_strv_release(&inputs);
	pg_strv_release(&notes);
	return rc;
}
