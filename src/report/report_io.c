#include "report/report_io.h"

#include "base/buf.h"
#include "base/error.h"
#include "report/report.h"
#include "sys/fsutil.h"
#include "results/results_io.h"

#include <stdlib.h>
#include <string.h>

int pg_report_write_dir(struct pg_report_files *out, const char *dir, const char *outdir,
			struct pg_error *err)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	struct pg_buf md = PG_BUF_INIT, records = PG_BUF_INIT, dash = PG_BUF_INIT;
	struct pg_report *report = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = pg_results_load_dir(&rs, dir, err);
	if (rc == PG_ENOTFOUND)
		pg_error_set(err, PG_ENOTFOUND, "%s: no such results directory", dir);
	if (rc)
		goto done;

	report = pg_report_new(&rs);
	pg_report_markdown(&md, report, PG_REPORT_ALL);
	pg_report_records(&records, report);
	out->rows = pg_report_rows(report, &out->not_ok);

	out->md_path = pg_path_join(outdir, "benchmark_results.md");
	out->json_path = pg_path_join(outdir, "benchmark_results.json");
	if ((rc = pg_mkdir_p(outdir, err)) ||
	    (rc = pg_file_write_atomic(out->md_path, md.ptr, md.len, err)) ||
	    (rc = pg_file_write_atomic(out->json_path, records.ptr, records.len, err)))
		goto done;
	if (pg_report_inferencex(&dash, report)) {
		out->inferencex_path = pg_path_join(outdir, "benchmark_results_inferencex.json");
		rc = pg_file_write_atomic(out->inferencex_path, dash.ptr, dash.len, err);
	}
done:
	pg_report_free(report);
	pg_result_set_release(&rs);
	pg_buf_release(&md);
	pg_buf_release(&records);
	pg_buf_release(&dash);
	return rc;
}

void pg_report_files_release(struct pg_report_files *f)
{
	free(f->md_path);
	free(f->json_path);
	free(f->inferencex_path);
	memset(f, 0, sizeof(*f));
}
