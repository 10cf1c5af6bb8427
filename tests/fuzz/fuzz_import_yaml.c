/*
 * The YAML importer (import/import_io.c: llm-d benchmark reports, schema
 * v0.2, and any YAML result file, read as JSON through libyaml), then what
 * perfgate does with up to four results (downstream.h). Result files come
 * from other jobs' artifacts and from pull requests: outside input.
 */
#include "fuzz.h"

#include "downstream.h"
#include "import/import_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	struct pg_error err = PG_ERROR_INIT;
	char *text = fz_dup(data, size);
	int rc = pg_import_yaml_text(&rs, text, size, "in.yaml", "in", NULL, &err);

	if (rc == 0) {
		FZ_CHECK(rs.n > 0);
		for (size_t i = 0; i < rs.n; i++)
			FZ_CHECK(rs.items[i].name && rs.items[i].name[0] &&
				 !strchr(rs.items[i].name, '/'));
		if (rs.n <= 4)
			fz_downstream(&rs);
	} else {
		FZ_CHECK(rs.n == 0);
		FZ_CHECK(!strncmp(err.msg, "in.yaml", 7));
	}
	pg_result_set_release(&rs);
	free(text);
	return 0;
}
