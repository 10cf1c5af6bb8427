#ifndef PERFGATE_REPORT_REPORT_IO_H
#define PERFGATE_REPORT_REPORT_IO_H

#include <stddef.h>

struct pg_error;

/*
 * A results directory -> its report files (report/report.h):
 * <outdir>/benchmark_results.md and <outdir>/benchmark_results.json, and
 * with serving results <outdir>/benchmark_results_inferencex.json (the
 * dashboard rows, pg_report_inferencex), written atomically. What `perfgate report` does, and what `perfgate run`
 * does at the end of every run, finished or not.
 */
struct pg_report_files {
	char *md_path;         /* owned */
	char *json_path;       /* owned */
	char *inferencex_path; /* owned; NULL when there were no serving results */
	size_t rows;           /* table rows */
	size_t not_ok;         /* rows of points that did not complete */
};

#define PG_REPORT_FILES_INIT                                                                       \
	{                                                                                          \
		NULL, NULL, NULL, 0, 0                                                             \
	}

/* PG_ENOTFOUND when dir does not exist ("DIR: no such results directory"). */
int pg_report_write_dir(struct pg_report_files *out, const char *dir, const char *outdir,
			struct pg_error *err);
void pg_report_files_release(struct pg_report_files *f);

#endif
