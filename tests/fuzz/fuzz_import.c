/*
 * The importers (import/import.c: JSON records, report markdown, printed
 * "Serving Benchmark Result" blocks) and what perfgate does with what they
 * return, up to four results (downstream.h). Built once per format (FZ_FORMAT): inputs the
 * detector assigns to another format are left to that harness (and kept
 * out of this one's corpus), so each campaign stays on its parser.
 */
#include "fuzz.h"

#include "downstream.h"
#include "import/import.h"

#ifndef FZ_FORMAT
#define FZ_FORMAT PG_IMPORT_JSON
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_import_opts opts = { "H100" };
	json_t *sidecar = NULL;
	char *text = fz_dup(data, size);
	int rc;

	if (pg_import_detect(text, size) != FZ_FORMAT) {
		free(text);
		return -1;
	}
	/* odd sizes: with a .commands sidecar and a --gpu, as import_io gives */
	if (size & 1)
		sidecar = json_pack("{s:s, s:s}", "server_command",
				    "vllm serve m --tensor-parallel-size 2 --port 8000",
				    "client_command",
				    "vllm bench serve --model m --dataset-name random "
				    "--random-input-len 128 --request-rate 4 --num-prompts 200");
	rc = pg_import_text(&rs, text, size, "in.json", "in", sidecar, (size & 1) ? &opts : NULL,
			    &err);
	if (rc == 0) {
		FZ_CHECK(rs.n > 0);
		for (size_t i = 0; i < rs.n; i++)
			FZ_CHECK(rs.items[i].name && rs.items[i].name[0] &&
				 !strchr(rs.items[i].name, '/'));
		/* what follows costs more than the import itself as the record
		 * count grows: the campaign's time goes to the parser, and to
		 * the report and gate on the small sets mutations mostly make */
		if (rs.n <= 4)
			fz_downstream(&rs);
	} else {
		FZ_CHECK(rc == PG_ECONFIG && rs.n == 0);
		FZ_CHECK(!strncmp(err.msg, "in.json", 7));
	}
	pg_result_set_release(&rs);
	json_decref(sidecar);
	free(text);
	return 0;
}
