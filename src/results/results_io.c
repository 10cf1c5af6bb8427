#include "results/results_io.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/jsonw.h"
#include "results/metrics.h"
#include "base/strutil.h"
#include "sys/fsutil.h"

#include <stdlib.h>
#include <string.h>

json_t *pg_results_parse_json(const char *text, size_t len, const char *source,
			      struct pg_error *err)
{
	json_error_t jerr;
	json_t *v = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);

	if (!v)
		pg_error_set(err, PG_ECONFIG, "%s:%d:%d: %s", source, jerr.line, jerr.column,
			     jerr.text);
	return v;
}

static json_t *load_json(const char *path, bool nofollow, struct pg_error *err)
{
	struct pg_buf b = PG_BUF_INIT;
	json_t *v = NULL;
	int rc = nofollow ? pg_file_read_nofollow(path, &b, err) : pg_file_read(path, &b, err);

	if (rc == 0)
		v = pg_results_parse_json(b.ptr, b.len, path, err);
	pg_buf_release(&b);
	return v;
}

json_t *pg_results_load_json(const char *path, struct pg_error *err)
{
	return load_json(path, false, err);
}

static int result_load(struct pg_result *out, const char *path, bool nofollow, struct pg_error *err)
{
	json_t *json = load_json(path, nofollow, err);
	struct pg_buf sidecar = PG_BUF_INIT;
	int kind;

	if (!json)
		return err ? err->code : PG_ERR;
	kind = pg_result_kind(json);
	if (kind < 0) {
		json_decref(json);
		return PG_ENOTFOUND;
	}
	memset(out, 0, sizeof(*out));
	out->path = pg_xstrdup(path);
	out->name = pg_path_stem(path);
	out->kind = (enum pg_suite_kind)kind;
	out->json = json;

	pg_buf_add(&sidecar, path, strlen(path) - strlen(".json"));
	pg_buf_puts(&sidecar, ".commands");
	if (pg_str_has_suffix(path, ".json")) {
		struct pg_error ignored = PG_ERROR_INIT;
		/* a missing or unreadable sidecar only loses the command lines */
		out->commands = load_json(sidecar.ptr, nofollow, &ignored);
		if (out->commands && !json_is_object(out->commands)) {
			json_decref(out->commands);
			out->commands = NULL;
		}
	}
	pg_buf_release(&sidecar);
	return 0;
}

int pg_result_load(struct pg_result *out, const char *path, struct pg_error *err)
{
	return result_load(out, path, false, err);
}

int pg_results_load_dir(struct pg_result_set *out, const char *dir, struct pg_error *err)
{
	struct pg_strv names = PG_STRV_INIT;
	int ret = pg_dir_list_regular(dir, ".json", &names, err);

	for (size_t i = 0; ret == 0 && i < names.n; i++) {
		char *path = pg_path_join(dir, names.v[i]);
		struct pg_result r;
		/* listed as a regular file; O_NOFOLLOW too, in case it was
		 * swapped for a link since */
		int rc = result_load(&r, path, true, err);

		if (rc == 0)
			pg_result_set_add(out, &r);
		else if (rc != PG_ENOTFOUND)
			ret = rc;
		free(path);
	}
	pg_strv_release(&names);
	return ret;
}

int pg_result_write(const char *dir, const char *name, const json_t *result, const json_t *commands,
		    struct pg_error *err)
{
	struct pg_buf text = PG_BUF_INIT;
	struct pg_buf path = PG_BUF_INIT;
	int ret;

	pg_buf_printf(&path, "%s/%s.json", dir, name);
	pg_result_text(&text, result);
	ret = pg_file_write_atomic(path.ptr, text.ptr, text.len, err);
	if (ret == 0 && commands) {
		pg_buf_reset(&path);
		pg_buf_reset(&text);
		pg_buf_printf(&path, "%s/%s.commands", dir, name);
		pg_result_text(&text, commands);
		ret = pg_file_write_atomic(path.ptr, text.ptr, text.len, err);
	}
	pg_buf_release(&text);
	pg_buf_release(&path);
	return ret;
}
