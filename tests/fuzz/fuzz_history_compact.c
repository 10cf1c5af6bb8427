/*
 * The compact history reader (baseline/history_compact.c, perfgate trends):
 * a <gpu>/<point>.jsonl file from the history ref, which any job with push
 * access may have written, read by its scanner must give what
 * pg_history_parse and pg_history_slim give: the same error, or the same
 * records value for value. Byte 0 picks the policy (none, or the
 * defaults).
 */
#include "fuzz.h"

#include "base/error.h"
#include "baseline/history.h"
#include "gate/compare.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	unsigned ctl = fz_byte(&in);
	struct pg_history slow = { 0 }, fast = { 0 };
	struct pg_error e1 = PG_ERROR_INIT, e2 = PG_ERROR_INIT;
	struct pg_history_pool *pool = pg_history_pool_new();
	struct pg_policy policy;
	const struct pg_policy *pol = (ctl & 1) ? &policy : NULL;
	char *text = fz_dup(in.p, in.n), why[256];
	int r1, r2;

	pg_policy_init(&policy);
	r1 = pg_history_parse(&slow, "serving_x_qps_4", text, in.n, "H100/serving_x_qps_4.jsonl",
			      &e1);
	r2 = pg_history_parse_compact(&fast, "serving_x_qps_4", text, in.n,
				      "H100/serving_x_qps_4.jsonl", pol, pool, &e2);
	FZ_CHECK(r1 == r2);
	if (r1) {
		FZ_CHECK(!strcmp(e1.msg, e2.msg));
	} else {
		pg_history_slim(&slow, pol);
		FZ_CHECK(pg_history_same(&slow, &fast, why, sizeof(why)));
	}
	pg_history_release(&slow);
	pg_history_release(&fast);
	pg_history_pool_free(pool);
	pg_policy_release(&policy);
	free(text);
	return 0;
}
