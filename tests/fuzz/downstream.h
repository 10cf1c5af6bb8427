#ifndef PERFGATE_TESTS_FUZZ_DOWNSTREAM_H
#define PERFGATE_TESTS_FUZZ_DOWNSTREAM_H

/*
 * What perfgate does with results it read from outside (a result file, an
 * import): the report, the records, a baseline made from them, the
 * comparison against it and against nothing, and the history line of each
 * point, which must read back (baseline/history.h). Shared by the harnesses
 * whose parsers produce results.
 */

#include "fuzz.h"

#include <jansson.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/jsonw.h"
#include "base/strutil.h"
#include "baseline/history.h"
#include "gate/compare.h"
#include "gate/gate_io.h"
#include "report/report.h"
#include "results/result.h"

/* Text perfgate wrote as JSON parses as JSON. */
static inline void fz_check_json(const struct pg_buf *js)
{
	json_error_t jerr;
	json_t *v = json_loadb(js->ptr, js->len, JSON_DECODE_ANY, &jerr);

	if (!v)
		fprintf(stderr, "%d:%d: %s\n%s\n", jerr.line, jerr.column, jerr.text, js->ptr);
	FZ_CHECK(v != NULL);
	json_decref(v);
}

static inline void fz_downstream(const struct pg_result_set *rs)
{
	struct pg_buf out = PG_BUF_INIT;
	struct pg_cmp_point *pts = pg_gate_points(rs);
	struct pg_cmp_run run = { "fuzz", pts, rs->n };
	struct pg_baseline base = { 0 }, none = { 0 };
	struct pg_policy policy;
	struct pg_comparison cmp;
	struct pg_strv skipped = PG_STRV_INIT;
	struct pg_history_meta meta = { "0123456789abcdef0123456789abcdef01234567",
					"2026-01-02T03:04:05Z", NULL, "main" };
	json_t *j;

	pg_report_render(&out, rs, PG_REPORT_ALL);
	{
		/* the JSON perfgate writes is JSON (pandas reads it) */
		struct pg_report *r = pg_report_new(rs);
		struct pg_buf js = PG_BUF_INIT;
		pg_report_records(&js, r);
		fz_check_json(&js);
		pg_buf_reset(&js);
		pg_report_json_tables(&js, r);
		fz_check_json(&js);
		pg_buf_release(&js);
		pg_report_free(r);
	}

	pg_policy_init(&policy);
	pg_baseline_from_runs(&base, &run, 1, &skipped);
	pg_compare(&cmp, &policy, &base, pts, rs->n, pts, rs->n, NULL);
	pg_comparison_markdown(&out, &cmp);
	j = pg_comparison_json(&cmp);
	{
		struct pg_buf js = PG_BUF_INIT;
		pg_json_write(&js, j, 2);
		fz_check_json(&js);
		pg_buf_release(&js);
	}
	json_decref(j);
	pg_comparison_release(&cmp);
	pg_compare(&cmp, &policy, &none, pts, rs->n, NULL, 0, NULL);
	pg_comparison_markdown(&out, &cmp);
	pg_comparison_release(&cmp);

	for (size_t i = 0; i < rs->n; i++) {
		json_t *line = pg_history_line(&pts[i], &meta);
		struct pg_history h = { 0 };
		struct pg_error err = PG_ERROR_INIT;
		char *text;

		if (!line)
			continue;
		text = json_dumps(line, JSON_COMPACT);
		FZ_CHECK(text != NULL);
		/* what perfgate records, perfgate reads */
		FZ_CHECK(pg_history_parse(&h, pts[i].name ? pts[i].name : "p", text, strlen(text),
					  "history.jsonl", &err) == 0);
		FZ_CHECK(h.n == 1);
		free(text);
		pg_history_release(&h);
		json_decref(line);
	}

	pg_strv_release(&skipped);
	pg_baseline_release(&base);
	pg_baseline_release(&none);
	pg_policy_release(&policy);
	free(pts);
	pg_buf_release(&out);
}

#endif
