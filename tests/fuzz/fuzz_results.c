/*
 * The result-file reader (results/results_io.c): a results directory with
 * one <point>.json and its <point>.commands sidecar (the bytes after
 * "\n\x1e"), loaded as `perfgate report`, `compare` and `gate` load it,
 * then everything they do with it (downstream.h).
 */
#include "fuzz.h"

#include "downstream.h"
#include "results/results_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	struct pg_error err = PG_ERROR_INIT;
	const uint8_t *side;
	size_t first, side_size;
	int rc;

	fz_split2(data, size, &first, &side, &side_size);
	/* the parser alone, on a buffer of exactly the file's length (the file
	 * reader's buffer ends with a NUL, which would hide an overread) */
	{
		char *text = fz_dup(data, first);
		json_t *v = pg_results_parse_json(text, first, "x.json", &err);
		FZ_CHECK(v || !strncmp(err.msg, "x.json:", 7));
		json_decref(v);
		free(text);
		pg_error_clear(&err);
	}
	fz_write("serving_x_qps_4.json", data, first);
	fz_write("serving_x_qps_4.commands", side, side_size);
	rc = pg_results_load_dir(&rs, fz_tmpdir(), &err);
	if (rc == 0)
		fz_downstream(&rs);
	else
		FZ_CHECK(err.msg[0] != '\0');
	pg_result_set_release(&rs);
	return 0;
}
