#ifndef PERFGATE_REPORT_REPORT_IMPL_H
#define PERFGATE_REPORT_REPORT_IMPL_H

/* The report model, shared by report.c, report_md.c and report_json.c only. */

#include <stdbool.h>
#include <stddef.h>

#include "results/params.h"
#include "suite/suite.h"

struct pg_metric;
struct pg_result;

#define PG_REPORT_MAX_COLUMNS 32

enum {
	PG_CELL_PRESENT = 1,
	PG_CELL_INT = 2, /* an integer in the result: print without "%g" */
};

struct pg_report_row {
	const struct pg_result *res;
	const char *name;   /* borrowed from res */
	char *gpu;          /* the GPU label ("8xH100"), owned; NULL = unknown */
	const char *status; /* "ok", "error", ... (borrowed) */
	const char *error;  /* reason, or NULL (borrowed) */
	bool ok;
	char *incomplete; /* ok, but requests failed: why (owned), else NULL */
	struct pg_params params;
	double *vals;         /* one per table metric; display units */
	unsigned char *flags; /* PG_CELL_* per table metric */
};

struct pg_report_table {
	enum pg_suite_kind kind;
	const struct pg_metric *metrics[PG_REPORT_MAX_COLUMNS]; /* the suite's table columns */
	bool shown[PG_REPORT_MAX_COLUMNS];                      /* some row has a value */
	size_t n_metrics;
	struct pg_report_row *rows; /* sorted by name */
	size_t n;
	size_t not_ok;
	double *vals; /* n x n_metrics, row-major */
	unsigned char *flags;
};

struct pg_report {
	struct pg_report_table tables[PG_SUITE_COUNT];
};

#endif
