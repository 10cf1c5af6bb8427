/*
 * The thresholds loader (baseline/thresholds_io.c) and what perfgate writes
 * back into a thresholds file:
 *  - a file that loads, emitted again (policy and baselines), loads again
 *    and emits the same text (what `baseline update` writes reads back);
 *  - `perfgate baseline update` on it (pg_thresholds_update) succeeds and
 *    keeps the points it was not given;
 *  - the baseline describes and compares without trouble.
 */
#include "fuzz.h"

#include "base/buf.h"
#include "base/error.h"
#include "baseline/history.h"
#include "baseline/thresholds.h"
#include "baseline/thresholds_io.h"
#include "results/metrics.h"

#include <math.h>

static void emit(struct pg_buf *out, const struct pg_policy *p, const struct pg_baseline *b)
{
	pg_buf_puts(out, "gpu: ");
	pg_yaml_scalar(out, b->gpu ? b->gpu : "unknown");
	pg_buf_puts(out, "\n\n");
	pg_thresholds_emit_policy(out, p);
	pg_buf_puts(out, "\n");
	pg_thresholds_emit_baselines(out, b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pg_policy policy, p2, p3;
	struct pg_baseline base, b2, b3, fresh = PG_BASELINE_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_buf once = PG_BUF_INIT, twice = PG_BUF_INIT, desc = PG_BUF_INIT;
	char *text = fz_dup(data, size);
	int rc = pg_thresholds_load_text(text, size, "H100.yml", &policy, &base, &err);

	if (rc) {
		FZ_CHECK(rc == PG_ECONFIG && !strncmp(err.msg, "H100.yml", 8));
		goto done;
	}
	pg_baseline_describe(&desc, &base, &policy);

	emit(&once, &policy, &base);
	rc = pg_thresholds_load_text(once.ptr, once.len, "emitted.yml", &p2, &b2, &err);
	if (rc)
		fprintf(stderr, "%s\n--- emitted:\n%s\n", err.msg, once.ptr);
	FZ_CHECK(rc == 0);
	FZ_CHECK(b2.n == base.n);
	emit(&twice, &p2, &b2);
	if (twice.len != once.len || memcmp(twice.ptr, once.ptr, once.len))
		fprintf(stderr, "--- once:\n%s\n--- twice:\n%s\n", once.ptr, twice.ptr);
	FZ_CHECK(twice.len == once.len && !memcmp(twice.ptr, once.ptr, once.len));
	pg_policy_release(&p2);
	pg_baseline_release(&b2);

	/* baseline update: one fresh point, every other point kept */
	{
		struct pg_thresholds_update_opts o = { "H100", NULL, false };
		struct pg_base_point *bp = pg_baseline_add(&fresh, "fuzz_fresh_qps_1",
							   PG_SUITE_SERVING);
		double v[] = { 10, 11, 12 };
		const char *path = fz_write("H100.yml", data, size);

		bp->qps = 1;
		bp->max_concurrency = 0;
		pg_base_point_add_metric(bp, pg_metric_by_id(PG_SUITE_SERVING, "mean_ttft_ms"), NAN,
					 v, 3);
		rc = pg_thresholds_update(path, &fresh, &o, &err);
		if (rc)
			fprintf(stderr, "%s\n", err.msg);
		FZ_CHECK(rc == 0);
		{
			struct pg_buf after = PG_BUF_INIT;
			FILE *f = fopen(path, "rb");
			char chunk[4096];
			size_t got;
			FZ_CHECK(f != NULL);
			while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
				pg_buf_add(&after, chunk, got);
			fclose(f);
			rc = pg_thresholds_load_text(after.ptr, after.len, path, &p3, &b3, &err);
			FZ_CHECK(rc == 0);
			for (size_t i = 0; i < base.n; i++)
				FZ_CHECK(pg_baseline_find(&b3, base.points[i].name) != NULL);
			FZ_CHECK(pg_baseline_find(&b3, "fuzz_fresh_qps_1") != NULL);
			pg_policy_release(&p3);
			pg_baseline_release(&b3);
			pg_buf_release(&after);
		}
	}
done:
	pg_policy_release(&policy);
	pg_baseline_release(&base);
	pg_baseline_release(&fresh);
	pg_buf_release(&once);
	pg_buf_release(&twice);
	pg_buf_release(&desc);
	free(text);
	return 0;
}
