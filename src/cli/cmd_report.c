/*
 * perfgate report [DIR] [-o OUTDIR]: a results directory -> the report
 * vLLM's performance CI writes, benchmark_results.md (tables and the
 * pandas JSON section) and benchmark_results.json (records).
 */
#include "cli/cmd.h"
#include "cli/opt.h"
#include "base/error.h"
#include "report/report_io.h"

#include <stdio.h>

static const char *outdir;

/* clang-format off */
static const struct pg_opt opts[] = {
	{ PG_OPT_STRING, "output", 'o', &outdir, "OUTDIR",
	  "write the report files here (default: DIR)" },
	{ PG_OPT_END }
};
/* clang-format on */

static const struct pg_cmd_help help = {
	"report",
	"[options] [DIR]",
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
	struct pg_report_files files = PG_REPORT_FILES_INIT;
	const char *dir;
	int rc;

	outdir = NULL;
	if (pg_cmd_parse(&help, argc, argv, &pos, 0, 1, "one results directory", &rc))
		goto done;
	dir = pos.n ? pos.v[0] : "results";
	if (!outdir)
		outdir = dir;

	if ((rc = pg_report_write_dir(&files, dir, outdir, &err)))
		goto fail;
	if (!files.rows)
		fprintf(stderr, "perfgate report: no results in %s; the report has empty tables\n",
			dir);
	else if (files.not_ok)
		fprintf(stderr,
			"perfgate report: %zu of %zu points did not complete (marked in the report)\n",
			files.not_ok, files.rows);
	printf("%s\n%s\n", files.md_path, files.json_path);
	if (files.inferencex_path)
		printf("%s\n", files.inferencex_path);
	rc = PG_EXIT_OK;
	goto done;
fail:
	rc = pg_cmd_fail("report", &err);
done:
	pg_report_files_release(&files);
	pg_strv_release(&pos);
	return rc;
}
