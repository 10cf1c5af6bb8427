#include "import/import_io.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/jsonw.h"
#include "base/strutil.h"
#include "results/cold.h"
#include "results/repeats.h"
#include "sys/fsutil.h"
#include "results/results_io.h"
#include "sys/yamldoc.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool is_yaml(const char *path)
{
	return pg_str_has_suffix(path, ".yaml") || pg_str_has_suffix(path, ".yml");
}

/*
 * A YAML file (llm-d's benchmark_report_v0.2,_*.yaml) as the JSON text
 * of the same tree, which the importer reads: its one document is one
 * value, so a message about it points at 1:1, the document's start, as in
 * the YAML file. YAML syntax errors keep the file's own line and column.
 */
static int yaml_as_json(const char *text, size_t len, const char *path, struct pg_buf *out,
			struct pg_error *err)
{
	struct pg_ydoc d = PG_YDOC_INIT;
	json_t *v;
	char *dump;
	int ret = pg_ydoc_load(&d, text, len, path, err);

	if (ret)
		goto done;
	if (!pg_ydoc_root(&d)) {
		ret = pg_error_set(err, PG_ECONFIG, "%s: an empty YAML document", path);
		goto done;
	}
	if (!pg_ynode_is_map(pg_ydoc_root(&d)) && !pg_ynode_is_seq(pg_ydoc_root(&d))) {
		ret = pg_yerr(&d, pg_ydoc_root(&d), NULL, err,
			      "expected a mapping (an llm-d benchmark report), got %s",
			      "a single value");
		goto done;
	}
	v = pg_ynode_to_json(&d, pg_ydoc_root(&d));
	dump = json_dumps(v, JSON_PRESERVE_ORDER | JSON_INDENT(1) | JSON_ENCODE_ANY);
	json_decref(v);
	if (!dump) {
		ret = pg_error_set(err, PG_ERR, "%s: out of memory", path);
		goto done;
	}
	pg_buf_puts(out, dump);
	free(dump);
done:
	pg_ydoc_release(&d);
	return ret;
}

int pg_import_yaml_text(struct pg_result_set *out, const char *text, size_t len, const char *source,
			const char *base_name, const struct pg_import_opts *opts,
			struct pg_error *err)
{
	struct pg_buf json = PG_BUF_INIT;
	int ret = yaml_as_json(text, len, source, &json, err);

	if (ret == 0)
		ret = pg_import_text(out, json.ptr, json.len, source, base_name, NULL, opts, err);
	pg_buf_release(&json);
	return ret;
}

/* The last component of the directory holding path, or NULL. */
static char *parent_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *start;

	if (!slash || slash == path)
		return NULL;
	start = slash;
	while (start > path && start[-1] != '/')
		start--;
	if (slash == start || (slash - start == 1 && *start == '.'))
		return NULL;
	return pg_xstrndup(start, (size_t)(slash - start));
}

/* "run=<n>.json" or "run=<n>.failure.json": n's digits, else NULL. */
static const char *sweep_run_number(const char *base, size_t *len)
{
	const char *d = base + 4;
	size_t n = 0;

	if (strncmp(base, "run=", 4))
		return NULL;
	if (*d == '-')
		n++;
	while (isdigit((unsigned char)d[n]))
		n++;
	if (!n || (strcmp(d + n, ".json") && strcmp(d + n, ".failure.json")))
		return NULL;
	*len = n;
	return d;
}

/*
 * vllm bench sweep names its files after the run, not the point:
 * summary.json, run=<n>.json, run=<n>.failure.json and warmup.json in a
 * directory named for the combination (SERVE-<serve>-BENCH-<bench>). Their
 * points take the directory's name: "<dir>" for the summary, "<dir>_run_<n>"
 * for a run's record or failure, "<dir>_warmup". NULL for other files.
 */
static char *sweep_stem(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	const char *num;
	char *dir;
	size_t len;
	struct pg_buf b = PG_BUF_INIT;

	if (strcmp(base, "summary.json") && strcmp(base, "warmup.json") &&
	    !sweep_run_number(base, &len))
		return NULL;
	if (!(dir = parent_name(path)))
		return NULL;
	pg_buf_puts(&b, dir);
	free(dir);
	if (!strcmp(base, "warmup.json"))
		pg_buf_puts(&b, "_warmup");
	else if ((num = sweep_run_number(base, &len)))
		pg_buf_printf(&b, "_run_%.*s", (int)len, num);
	return pg_buf_detach(&b);
}

#define AGGREGATE_MAX_FILES 1000
#define AGGREGATE_MAX_BYTES (64L << 20)

/* A run file an aggregate may name: a relative path inside its directory
 * (no absolute path, no ".." component). */
static bool aggregate_member_name_ok(const char *name)
{
	if (!name || !*name || name[0] == '/')
		return false;
	for (const char *p = name; *p;) {
		size_t n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return false;
		p += n;
		p += *p == '/';
	}
	return true;
}

/*
 * A perf-eval aggregate (perfgate.import.aggregate.files: the runs it
 * summarises, named relative to its own directory): when every file is
 * there and holds one serving record, the runs are the point's samples
 * (perfgate.repeats, as a test's repeat: N keeps them), so an aggregate of
 * 3 runs weighs as 3 runs, not 1; otherwise the aggregate stays one sample
 * and the files that were not there are listed.
 */
static void aggregate_samples(json_t *result, const char *path, const struct pg_import_opts *opts)
{
	json_t *agg = pg_json_path(result, "perfgate.import.aggregate");
	json_t *files = json_object_get(agg, "files");
	json_t *reps = json_array(), *missing = json_array(), *f;
	char *dir = NULL;
	const char *slash = strrchr(path, '/');
	size_t i;

	if (!json_is_array(files) || !json_array_size(files)) {
		json_decref(reps);
		json_decref(missing);
		return;
	}
	dir = slash ? pg_xstrndup(path, (size_t)(slash - path)) : pg_xstrdup(".");
	json_array_foreach(files, i, f)
	{
		const char *name = json_string_value(f);
		bool inside = aggregate_member_name_ok(name) && i < AGGREGATE_MAX_FILES;
		char *run_path = inside ? pg_path_join(dir, name) : NULL;
		struct pg_result_set one = PG_RESULT_SET_INIT;
		struct pg_error err = PG_ERROR_INIT;
		struct pg_buf text = PG_BUF_INIT;
		struct stat st;

		/* only regular files of a sane size beside the aggregate: an input
		 * file must not make perfgate read a device, a FIFO or another
		 * job's results */
		if (!inside || lstat(run_path, &st) || !S_ISREG(st.st_mode) ||
		    st.st_size > AGGREGATE_MAX_BYTES || pg_file_read(run_path, &text, &err) ||
		    pg_import_text(&one, text.ptr, text.len, run_path, "run", NULL, opts, &err) ||
		    one.n != 1 || one.items[0].kind != PG_SUITE_SERVING)
			json_array_append_new(missing, json_string(name ? name : ""));
		else
			json_array_append_new(reps, pg_repeats_metrics(one.items[0].json));
		pg_result_set_release(&one);
		pg_buf_release(&text);
		free(run_path);
	}
	if (!json_array_size(missing) && json_array_size(reps) > 1) {
		json_object_set_new(json_object_get(result, "perfgate"), "repeats", reps);
		json_object_set_new(agg, "samples", json_string("individual files"));
		json_decref(missing);
		/* the aggregate's median counted a cold first run: the point's
		 * values become the others' median (results/cold.h) */
		pg_cold_apply(result, NULL);
	} else {
		json_decref(reps);
		if (json_array_size(missing))
			json_object_set_new(agg, "missing", missing);
		else
			json_decref(missing);
	}
	free(dir);
}

int pg_import_file(struct pg_result_set *out, const char *path, const struct pg_import_opts *opts,
		   struct pg_error *err)
{
	struct pg_buf text = PG_BUF_INIT, sidecar_path = PG_BUF_INIT;
	char *stem = sweep_stem(path);
	size_t before = out->n;
	json_t *sidecar = NULL;
	struct pg_path_labels labels;
	struct pg_import_opts with_labels;
	const char *dot = strrchr(path, '.');
	const char *slash = strrchr(path, '/');
	int ret;

	if (!stem)
		stem = pg_path_stem(path);
	if ((ret = pg_file_read(path, &text, err)) != 0)
		goto done;
	/* vLLM's <name>.commands next to <name>.json */
	if (dot && (!slash || dot > slash)) {
		pg_buf_add(&sidecar_path, path, (size_t)(dot - path));
		pg_buf_puts(&sidecar_path, ".commands");
		if (strcmp(sidecar_path.ptr, path)) {
			struct pg_buf side = PG_BUF_INIT;
			struct pg_error side_err = PG_ERROR_INIT;

			if (pg_file_read(sidecar_path.ptr, &side, &side_err) == 0) {
				sidecar = pg_results_parse_json(side.ptr, side.len,
								sidecar_path.ptr, err);
				if (!sidecar || !json_is_object(sidecar)) {
					if (sidecar)
						pg_error_set(err, PG_ECONFIG,
							     "%s: expected a JSON object",
							     sidecar_path.ptr);
					ret = PG_ECONFIG;
				}
			}
			pg_buf_release(&side);
			if (ret)
				goto done;
		}
	}
	if (opts && opts->labels_from_path) {
		/* <experiment>/<GPU>/<deployment>/ */
		pg_import_path_labels(path, &labels);
		with_labels = *opts;
		with_labels.path_gpu = labels.gpu;
		with_labels.experiment = labels.experiment;
		with_labels.deployment = labels.deployment;
		opts = &with_labels;
	}
	if (is_yaml(path))
		ret = pg_import_yaml_text(out, text.ptr, text.len, path, stem, opts, err);
	else
		ret = pg_import_text(out, text.ptr, text.len, path, stem, sidecar, opts, err);
	for (size_t i = before; !ret && i < out->n; i++)
		aggregate_samples(out->items[i].json, path, opts);
done:
	json_decref(sidecar);
	pg_buf_release(&text);
	pg_buf_release(&sidecar_path);
	free(stem);
	return ret;
}

/* llm-d's reports of a result file: benchmark_report_v0.2,_<file>.yaml
 * (and v0.1's benchmark_report,_<file>.yaml). The <file> part, or NULL. */
static const char *llmd_report_of(const char *base)
{
	static const char *const prefixes[] = { "benchmark_report_v0.2,_",
						"benchmark_report_v0.2.1,_", "benchmark_report,_" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (pg_str_has_prefix(base, prefixes[i]))
			return base + strlen(prefixes[i]);
	return NULL;
}

/* Why a file is not a result of its own, or NULL. */
static const char *derived_file(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	const char *of = llmd_report_of(base);

	if (!strcmp(base, "benchmark_results.json"))
		return "perfgate's report of the results beside it";
	if (!strcmp(base, "verdict.json"))
		return "perfgate's comparison of the results beside it";
	if (!strcmp(base, "benchmark_results_inferencex.json"))
		return "perfgate's dashboard rows of the results beside it";
	if (pg_str_has_suffix(base, ".pytorch.json"))
		return "a PyTorch benchmark-database file made from the result beside it";
	if (of) {
		/* made from <file> when <file> is there */
		struct pg_buf sib = PG_BUF_INIT;
		struct stat st;
		bool beside;

		if (slash)
			pg_buf_add(&sib, path, (size_t)(slash - path + 1));
		pg_buf_puts(&sib, of);
		if (pg_str_has_suffix(sib.ptr, ".yaml"))
			sib.ptr[sib.len -= 5] = '\0';
		else if (pg_str_has_suffix(sib.ptr, ".yml"))
			sib.ptr[sib.len -= 4] = '\0';
		beside = stat(sib.ptr, &st) == 0 && S_ISREG(st.st_mode);
		pg_buf_release(&sib);
		if (beside)
			return "llm-d's benchmark report of the result file beside it";
	}
	return NULL;
}

static char *dir_part(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? pg_xstrndup(path, (size_t)(slash - path)) : pg_xstrdup(".");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The files of a results tree perfgate reads: *.json and *.jsonl records,
 * llm-d's benchmark_report*.yaml. */
static bool walked(const char *name)
{
	return pg_str_has_suffix(name, ".json") || pg_str_has_suffix(name, ".jsonl") ||
	       (llmd_report_of(name) &&
		(pg_str_has_suffix(name, ".yaml") || pg_str_has_suffix(name, ".yml")));
}

/* Depth-first, each directory's files (sorted) before its subdirectories
 * (sorted). */
static int walk(const char *dir, struct pg_strv *out, struct pg_strv *notes, int depth,
		struct pg_error *err)
{
	struct pg_strv names = PG_STRV_INIT, subdirs = PG_STRV_INIT;
	int ret;

	if (depth > 32)
		return pg_error_set(err, PG_ECONFIG, "%s: directories nested too deeply", dir);
	ret = pg_dir_list(dir, NULL, &names, err);
	if (!ret)
		ret = pg_subdir_list(dir, NULL, &subdirs, err);
	for (size_t k = 0; !ret && k < names.n; k++) {
		if (walked(names.v[k]))
			pg_strv_push_owned(out, pg_path_join(dir, names.v[k]));
		/* vllm bench sweep's table of the runs its JSON records hold */
		if (!strcmp(names.v[k], "summary.csv")) {
			struct pg_buf note = PG_BUF_INIT;
			char *csv = pg_path_join(dir, names.v[k]);
			pg_buf_printf(&note,
				      "skipped %s: vllm bench sweep's table of the runs, read from "
				      "the summary.json and run=<n>.json records below it instead "
				      "(full precision)",
				      csv);
			pg_strv_push_owned(notes, pg_buf_detach(&note));
			free(csv);
		}
	}
	for (size_t k = 0; !ret && k < subdirs.n; k++) {
		char *sub = pg_path_join(dir, subdirs.v[k]);
		ret = walk(sub, out, notes, depth + 1, err);
		free(sub);
	}
	pg_strv_release(&names);
	pg_strv_release(&subdirs);
	return ret;
}

/* Whether dir/name is a regular file. */
static bool file_beside(const char *path, const char *name)
{
	char *dir = dir_part(path), *p = pg_path_join(dir, name);
	struct stat st;
	bool yes = stat(p, &st) == 0 && S_ISREG(st.st_mode);

	free(dir);
	free(p);
	return yes;
}

/* Why a file of a vllm bench sweep tree is not imported on its own when
 * its directory is, or NULL: the warm-up run, and the runs summary.json
 * holds. */
static const char *sweep_skipped(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t len;

	if (!strcmp(base, "warmup.json") &&
	    (file_beside(path, "summary.json") || file_beside(path, "run=0.json") ||
	     file_beside(path, "run=0.failure.json")))
		return "vllm bench sweep's warm-up run (run_number -1), not a measurement";
	if (sweep_run_number(base, &len) && !pg_str_has_suffix(base, ".failure.json") &&
	    file_beside(path, "summary.json"))
		return "one of the runs of the summary.json beside it, imported there as a sample";
	return NULL;
}

/* The runs a perf-eval aggregate names (individual_result_files), as
 * paths, added to out: they are its samples, not points of their own. */
static void aggregate_members(const char *path, struct pg_strv *out)
{
	struct pg_buf text = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;
	json_t *v, *files, *f;
	char *dir;
	size_t i;

	if (pg_file_read(path, &text, &err) || !strstr(text.ptr, "individual_result_files")) {
		pg_buf_release(&text);
		return;
	}
	v = json_loadb(text.ptr, text.len, 0, NULL);
	pg_buf_release(&text);
	files = json_object_get(v, "individual_result_files");
	dir = dir_part(path);
	json_array_foreach(files, i, f)
	{
		if (aggregate_member_name_ok(json_string_value(f)))
			pg_strv_push_owned(out, pg_path_join(dir, json_string_value(f)));
	}
	free(dir);
	json_decref(v);
}

int pg_import_inputs(struct pg_strv *files, struct pg_strv *notes, char *const *args, size_t n,
		     struct pg_error *err)
{
	struct pg_strv all = PG_STRV_INIT, result_dirs = PG_STRV_INIT, members = PG_STRV_INIT;
	size_t from_dirs = 0;
	int ret = 0;

	for (size_t i = 0; i < n && !ret; i++) {
		struct stat st;
		size_t before = all.n;

		if (stat(args[i], &st) || !S_ISDIR(st.st_mode)) {
			pg_strv_push(&all, args[i]);
			continue;
		}
		from_dirs++;
		ret = walk(args[i], &all, notes, 0, err);
		if (!ret && all.n == before)
			ret = pg_error_set(err, PG_ECONFIG,
					   "%s: no result files (.json, .jsonl, llm-d's "
					   "benchmark_report*.yaml) in this directory or below it",
					   args[i]);
	}
	if (ret)
		goto done;

	/* the directories that hold results of their own, for the lookups */
	for (size_t i = 0; i < all.n; i++)
		if (!derived_file(all.v[i]))
			pg_strv_push_owned(&result_dirs, dir_part(all.v[i]));
	if (result_dirs.n > 1)
		qsort(result_dirs.v, result_dirs.n, sizeof(*result_dirs.v), cmp_str);
	/* a directory's sweep and aggregate trees: what is read elsewhere */
	for (size_t i = 0; from_dirs && i < all.n; i++)
		aggregate_members(all.v[i], &members);
	for (size_t i = 0; i < all.n; i++) {
		const char *why = derived_file(all.v[i]);
		char *dir = why ? dir_part(all.v[i]) : NULL;
		bool beside_results = dir && result_dirs.n &&
				      bsearch(&dir, result_dirs.v, result_dirs.n,
					      sizeof(*result_dirs.v), cmp_str);
		const char *sweep = from_dirs ? sweep_skipped(all.v[i]) : NULL;
		bool member = false;

		for (size_t k = 0; k < members.n && !member; k++)
			member = !strcmp(members.v[k], all.v[i]);
		if (sweep || member) {
			struct pg_buf note = PG_BUF_INIT;
			pg_buf_printf(&note, "skipped %s: %s", all.v[i],
				      sweep ? sweep
					    : "a run a perf-eval aggregate beside it summarises, "
					      "imported there as a sample");
			pg_strv_push_owned(notes, pg_buf_detach(&note));
		} else if (beside_results) {
			struct pg_buf note = PG_BUF_INIT;
			pg_buf_printf(&note, "skipped %s: %s", all.v[i], why);
			pg_strv_push_owned(notes, pg_buf_detach(&note));
		} else {
			pg_strv_push(files, all.v[i]);
		}
		free(dir);
	}
done:
	pg_strv_release(&all);
	pg_strv_release(&result_dirs);
	pg_strv_release(&members);
	return ret;
}
