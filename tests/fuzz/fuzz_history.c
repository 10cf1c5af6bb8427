/*
 * The history reader (baseline/history.c): a <gpu>/<point>.jsonl file from
 * the history ref, which any job with push access may have written. Parsed,
 * then what `perfgate baseline` and the gate do with it: the baseline
 * from a window of jobs (byte 0 picks the window and the minimum), the
 * change points, the trend text and the nightly report, the comparison of
 * a run against that baseline.
 */
#include "fuzz.h"

#include "base/buf.h"
#include "base/error.h"
#include "baseline/history.h"
#include "gate/compare.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	unsigned ctl = fz_byte(&in);
	struct pg_history h = { 0 };
	struct pg_error err = PG_ERROR_INIT;
	struct pg_baseline base = PG_BASELINE_INIT;
	struct pg_policy policy;
	struct pg_buf out = PG_BUF_INIT;
	char *text = fz_dup(in.p, in.n);
	bool *use;
	int rc = pg_history_parse(&h, "serving_x_qps_4", text, in.n, "H100/serving_x_qps_4.jsonl",
				  &err);

	if (rc)
		FZ_CHECK(rc == PG_EINFRA && !strncmp(err.msg, "H100/", 5));
	/* what parsed is usable either way (the reader keeps the good lines) */
	use = malloc((h.n + 1) * sizeof(*use));
	for (size_t i = 0; i < h.n; i++)
		use[i] = (ctl >> (i % 8)) & 1;
	pg_policy_init(&policy);
	policy.history_window = 1 + (ctl & 15);
	policy.min_history = (ctl >> 4) & 7;
	{
		const bool *uses[1] = { use };
		struct pg_history_analysis a;
		pg_history_baseline_build(&base, &h, 1, (ctl & 0x80) ? uses : NULL, &policy);
		pg_history_analyse(&a, &h, 1, (ctl & 0x80) ? uses : NULL, &policy, 0, true);
		pg_history_trend(&out, &h, 0, &a, NULL, 1 + (ctl & 31));
		pg_history_trend(&out, &h, 0, NULL, "mean_ttft_ms", 5);
		pg_history_changes_markdown(&out, &h, 1, &a, &policy, "H100", NULL, 0);
		pg_history_analysis_release(&a);
	}
	pg_baseline_describe(&out, &base, &policy);
	if (base.n) {
		/* a run of the same point, with values of its own */
		json_t *result = json_pack("{s:f, s:f, s:i, s:{s:s, s:s}}", "mean_ttft_ms", 12.5,
					   "output_throughput", 900.0, "completed", 10, "perfgate",
					   "suite", "serving", "status", "ok");
		struct pg_cmp_point pt = {
			"serving_x_qps_4", PG_SUITE_SERVING, "ok", result, "H100", false
		};
		struct pg_comparison cmp;
		pg_compare(&cmp, &policy, &base, &pt, 1, NULL, 0, NULL);
		pg_comparison_markdown(&out, &cmp);
		pg_comparison_release(&cmp);
		json_decref(result);
	}
	pg_policy_release(&policy);
	pg_baseline_release(&base);
	pg_history_release(&h);
	pg_buf_release(&out);
	free(use);
	free(text);
	return 0;
}
