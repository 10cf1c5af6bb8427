/*
 * perfgate report [DIR] [-o OUTDIR]: a results directory -> the report
 * vLLM's performance CI writes, benchmark_results.md (tables and the
 * pandas JSON section) and benchmark_results.json (records).
 */
#include "cmd/cmd.h"
#include "cmd/opt.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/report.h"
#include "io/fsutil.h"
#include "io/results.h"

#include <stdio.h>
#include <stdlib.h>

static const char *outdir;

static const struct pg_opt opts[] = {
	{ PG_OPT_STRING, "output", 'o', &outdir, "OUTDIR",
	  "write the report files here (default: DIR)" },
	{ PG_OPT_END }
};

static const struct pg_cmd_help help = {
	"report", "[options] [DIR]",
	"render benchmark_results.md and .json from a results directory",
	"Reads every result file in DIR (default: results/), vLLM's or perfgate's,\n"
	"and writes benchmark_results.md (the latency, throughput and serving\n"
	"tables and their pandas-loadable JSON) and benchmark_results.json (one\n"
	"record per row) into OUTDIR. Points that failed are shown as marked rows.",
	opts,
};

int cmd_report(int argc, char **argv)
{
	struct pg_strv pos = PG_STRV_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	struct pg_buf md = PG_BUF_INIT, records = PG_BUF_INIT;
	struct pg_report *report = NULL;
	char *md_path = NULL, *json_path = NULL;
	const char *dir;
	size_t rows, not_ok;
	int rc;

	outdir = NULL;
	rc = pg_opt_parse(&help, argc, argv, &pos, &err);
	if (rc == PG_OPT_HELP) {
		rc = PG_EXIT_OK;
		goto done;
	}
	if (rc)
		goto fail;
	if (pos.n > 1) {
		rc = pg_error_set(&err, PG_ECONFIG, "one results directory expected, got %zu",
				  pos.n);
		goto fail;
	}
	dir = pos.n ? pos.v[0] : "results";
	if (!outdir)
		outdir = dir;

	rc = pg_results_load_dir(&rs, dir, &err);
	if (rc == PG_ENOTFOUND)
		pg_error_set(&err, PG_ENOTFOUND, "%s: no such results directory", dir);
	if (rc)
		goto fail;

	report = pg_report_new(&rs);
	pg_report_markdown(&md, report, PG_REPORT_ALL);
	pg_report_records(&records, report);
	rows = pg_report_rows(report, &not_ok);

	md_path = pg_path_join(outdir, "benchmark_results.md");
	json_path = pg_path_join(outdir, "benchmark_results.json");
	if ((rc = pg_mkdir_p(outdir, &err)) ||
	    (rc = pg_file_write_atomic(md_path, md.ptr, md.len, &err)) ||
	    (rc = pg_file_write_atomic(json_path, records.ptr, records.len, &err)))
		goto fail;

	if (!rows)
		fprintf(stderr, "perfgate report: no results in %s; the report has empty tables\n",
			dir);
	else if (not_ok)
		fprintf(
		    stderr,
		    "perfgate report: %zu of %zu points did not complete (marked in the report)\n",
		    not_ok, rows);
	printf("%s\n%s\n", md_path, json_path);
	rc = PG_EXIT_OK;
	goto done;
fail:
	rc = pg_cmd_fail("report", &err);
done:
	pg_report_free(report);
	pg_result_set_release(&rs);
	pg_buf_release(&md);
	pg_buf_release(&records);
	pg_strv_release(&pos);
	free(md_path);
	free(json_path);
	return rc;
}
