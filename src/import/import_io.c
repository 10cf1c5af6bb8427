#include "import/import_io.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/strutil.h"
#include "sys/fsutil.h"
#include "results/results_io.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int pg_import_file(struct pg_result_set *out, const char *path, const struct pg_import_opts *opts,
		   struct pg_error *err)
{
	struct pg_buf text = PG_BUF_INIT, sidecar_path = PG_BUF_INIT;
	char *stem = pg_path_stem(path);
	json_t *sidecar = NULL;
	const char *dot = strrchr(path, '.');
	const char *slash = strrchr(path, '/');
	int ret;

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
	ret = pg_import_text(out, text.ptr, text.len, path, stem, sidecar, opts, err);
done:
	json_decref(sidecar);
	pg_buf_release(&text);
	pg_buf_release(&sidecar_path);
	free(stem);
	return ret;
}

/* Why a file is not a result of its own, or NULL. */
static const char *derived_file(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;

	if (!strcmp(base, "benchmark_results.json"))
		return "perfgate's report of the results beside it";
	if (!strcmp(base, "verdict.json"))
		return "perfgate's comparison of the results beside it";
	if (!strcmp(base, "benchmark_results_inferencex.json"))
		return "perfgate's dashboard rows of the results beside it";
	if (pg_str_has_suffix(base, ".pytorch.json"))
		return "a PyTorch benchmark-database file made from the result beside it";
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

int pg_import_inputs(struct pg_strv *files, struct pg_strv *notes, char *const *args, size_t n,
		     struct pg_error *err)
{
	struct pg_strv all = PG_STRV_INIT, result_dirs = PG_STRV_INIT;
	int ret = 0;

	for (size_t i = 0; i < n && !ret; i++) {
		struct stat st;
		struct pg_strv names = PG_STRV_INIT;

		if (stat(args[i], &st) || !S_ISDIR(st.st_mode)) {
			pg_strv_push(&all, args[i]);
			continue;
		}
		ret = pg_dir_list(args[i], ".json", &names, err);
		if (!ret && !names.n)
			ret = pg_error_set(err, PG_ECONFIG, "%s: no .json files in this directory",
					   args[i]);
		for (size_t k = 0; !ret && k < names.n; k++)
			pg_strv_push_owned(&all, pg_path_join(args[i], names.v[k]));
		pg_strv_release(&names);
	}
	if (ret)
		goto done;

	/* the directories that hold results of their own, for the lookups */
	for (size_t i = 0; i < all.n; i++)
		if (!derived_file(all.v[i]))
			pg_strv_push_owned(&result_dirs, dir_part(all.v[i]));
	if (result_dirs.n > 1)
		qsort(result_dirs.v, result_dirs.n, sizeof(*result_dirs.v), cmp_str);
	for (size_t i = 0; i < all.n; i++) {
		const char *why = derived_file(all.v[i]);
		char *dir = why ? dir_part(all.v[i]) : NULL;
		bool beside_results = dir && result_dirs.n &&
				      bsearch(&dir, result_dirs.v, result_dirs.n,
					      sizeof(*result_dirs.v), cmp_str);

		if (beside_results) {
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
	return ret;
}
