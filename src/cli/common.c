#include "cli/common.h"

#include "base/buf.h"
#include "base/error.h"
#include "base/exitcode.h"
#include "import/import_io.h"
#include "results/results_io.h"
#include "sys/fsutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *pg_cmd_getenv(void *ctx, const char *name)
{
	(void)ctx;
	return getenv(name);
}

int pg_cmd_load_results(struct pg_result_set *set, const char *dir, struct pg_error *err)
{
	int rc = pg_results_load_dir(set, dir, err);

	if (rc == PG_ENOTFOUND)
		return pg_error_set(err, PG_EINFRA, "%s: no such results directory", dir);
	if (rc == 0 && set->n == 0)
		return pg_error_set(err, PG_EINFRA, "%s: no benchmark results in it", dir);
	return rc;
}

int pg_cmd_import_file(struct pg_result_set *out, const char *path,
		       const struct pg_import_opts *opts, struct pg_error *err)
{
	struct pg_buf text = PG_BUF_INIT;
	int rc;

	if (strcmp(path, "-"))
		return pg_import_file(out, path, opts, err);
	rc = pg_file_read_arg(path, &text, err);
	if (rc == 0)
		rc = pg_import_text(out, text.ptr, text.len, "<stdin>", "stdin", NULL, opts, err);
	pg_buf_release(&text);
	return rc;
}

int pg_cmd_print(const struct pg_buf *b)
{
	if (b->len)
		fwrite(b->ptr, 1, b->len, stdout);
	if (fflush(stdout) == 0 || errno == EPIPE)
		return PG_EXIT_OK;
	fprintf(stderr, "perfgate: cannot write to stdout\n");
	return PG_EXIT_INFRA;
}
