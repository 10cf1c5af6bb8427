#include "io/import.h"

#include "core/buf.h"
#include "core/error.h"
#include "core/strutil.h"
#include "io/fsutil.h"
#include "io/results.h"

#include <stdlib.h>
#include <string.h>

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
				sidecar = pg_json_parse(side.ptr, side.len, sidecar_path.ptr, err);
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
