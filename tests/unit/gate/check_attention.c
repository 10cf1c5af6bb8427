/* gate/attention: the rows above the fold, the per-test counts, the
 * colours and the exit code that the CLI and the Buildkite step share. */
#include "testutil.h"

#include "base/buf.h"
#include "base/exitcode.h"
#include "gate/attention.h"
#include "results/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* A row as pg_compare writes it: only the fields attention reads. */
static struct pg_cmp_row row(const char *point, const char *metric_id, bool gate, enum pg_verdict v,
			     enum pg_outcome o, double change)
{
	struct pg_cmp_row r = { 0 };

	r.point = (char *)point;
	r.metric = metric_id ? pg_metric_by_id(PG_SUITE_SERVING, metric_id) : NULL;
	r.rule.gate = gate;
	r.rule.tolerance = gate ? 0.05 : 0.07;
	r.rule.escalate = gate ? 0 : 0.08;
	r.tolerance = r.rule.tolerance;
	r.change = change;
	r.verdict = v;
	r.outcome = o;
	return r;
}

static void comparison(struct pg_comparison *c, struct pg_cmp_row *rows, size_t n)
{
	memset(c, 0, sizeof(*c));
	c->rows = rows;
	c->n = n;
	c->outcome = PG_OUTCOME_PASS;
	for (size_t i = 0; i < n; i++)
		if (rows[i].outcome > c->outcome)
			c->outcome = rows[i].outcome;
}

START_TEST(attention_rows_are_what_fails_or_must_be_looked_at)
{
	struct pg_cmp_row rows[] = {
		/* a: a gating metric fails, its warn-only twin only warns */
		row("a", "mean_itl_ms", true, PG_VERDICT_REGRESSED, PG_OUTCOME_FAIL, 0.09),
		row("a", "mean_tpot_ms", false, PG_VERDICT_REGRESSED, PG_OUTCOME_WARN, 0.075),
		/* b: a tail metric past its escalation threshold fails */
		row("b", "p99_ttft_ms", false, PG_VERDICT_REGRESSED, PG_OUTCOME_FAIL, 0.25),
		row("b", "median_ttft_ms", true, PG_VERDICT_UNCHANGED, PG_OUTCOME_PASS, 0.0),
		/* c: a gating metric the gate could not decide */
		row("c", "output_throughput", true, PG_VERDICT_NOISY, PG_OUTCOME_WARN, -0.06),
		/* d: improved */
		row("d", "output_throughput", true, PG_VERDICT_IMPROVED, PG_OUTCOME_PASS, 0.2),
		/* e: missing from the run */
		row("e", NULL, true, PG_VERDICT_MISSING, PG_OUTCOME_INFRA, NAN),
	};
	struct pg_comparison c;
	const struct pg_cmp_row **att;
	size_t n;

	comparison(&c, rows, N(rows));
	att = pg_attention_rows(&c, &n);
	ck_assert_uint_eq(n, 4);
	/* failing first, the bigger change first; then missing; then warnings */
	ck_assert_ptr_eq(att[0], &rows[2]);
	ck_assert_ptr_eq(att[1], &rows[0]);
	ck_assert_ptr_eq(att[2], &rows[6]);
	ck_assert_ptr_eq(att[3], &rows[4]);
	ck_assert(!pg_attention_row(&rows[1])); /* warn-only twin: full table only */
	free((void *)att);

	/* the threshold that decided: escalation for the tail, else tolerance */
	ck_assert_double_eq_tol(pg_attention_threshold(&rows[2]), 0.08, 1e-12);
	ck_assert_double_eq_tol(pg_attention_threshold(&rows[0]), 0.05, 1e-12);
	ck_assert_double_eq_tol(pg_attention_threshold(&rows[1]), 0.07, 1e-12);

	/* colour by verdict: unchanged by 0.0% is not red, improved is green */
	ck_assert_int_eq(pg_attention_tone(&rows[0]), PG_TONE_BAD);
	ck_assert_int_eq(pg_attention_tone(&rows[1]), PG_TONE_WARN);
	ck_assert_int_eq(pg_attention_tone(&rows[3]), PG_TONE_NONE);
	ck_assert_int_eq(pg_attention_tone(&rows[4]), PG_TONE_WARN);
	ck_assert_int_eq(pg_attention_tone(&rows[5]), PG_TONE_GOOD);
	ck_assert_int_eq(pg_attention_tone(&rows[6]), PG_TONE_BAD);
}
END_TEST

START_TEST(counts_are_per_test_with_metrics_as_detail)
{
	struct pg_cmp_row rows[] = {
		row("a", "mean_itl_ms", true, PG_VERDICT_REGRESSED, PG_OUTCOME_FAIL, 0.09),
		row("a", "median_itl_ms", true, PG_VERDICT_REGRESSED, PG_OUTCOME_FAIL, 0.09),
		row("a", "mean_tpot_ms", false, PG_VERDICT_REGRESSED, PG_OUTCOME_WARN, 0.075),
		row("b", "p99_ttft_ms", false, PG_VERDICT_REGRESSED, PG_OUTCOME_FAIL, 0.25),
		row("c", "output_throughput", true, PG_VERDICT_NOISY, PG_OUTCOME_WARN, -0.06),
		row("d", "output_throughput", true, PG_VERDICT_IMPROVED, PG_OUTCOME_PASS, 0.2),
		row("e", NULL, true, PG_VERDICT_MISSING, PG_OUTCOME_INFRA, NAN),
		row("f", "output_throughput", true, PG_VERDICT_UNCHANGED, PG_OUTCOME_PASS, 0.0),
	};
	struct pg_comparison c;
	struct pg_gate_counts k;
	struct pg_buf b = PG_BUF_INIT;

	comparison(&c, rows, N(rows));
	pg_gate_count(&k, &c);
	ck_assert_uint_eq(k.tests, 6);
	ck_assert_uint_eq(k.regressed, 2);
	ck_assert_uint_eq(k.regressed_metrics, 3);
	ck_assert_uint_eq(k.errors, 1);
	ck_assert_uint_eq(k.warnings, 1);
	ck_assert_uint_eq(k.improved, 1);
	pg_gate_counts_phrase(&b, &k);
	ck_assert_str_eq(b.ptr, "2 of 6 tests regressed (3 metrics), 1 missing or failed, 1 with "
				"warnings, 1 improved");

	k.suspect = true;
	pg_buf_reset(&b);
	pg_gate_counts_phrase(&b, &k);
	ck_assert_str_eq(b.ptr, "2 of 6 tests regressed (3 metrics), 1 missing or failed, 1 with "
				"warnings, 1 improved — from a sick job: re-run it");

	/* without the failing rows: the missing point is the news */
	comparison(&c, rows + 4, 4);
	pg_gate_count(&k, &c);
	pg_buf_reset(&b);
	pg_gate_counts_phrase(&b, &k);
	ck_assert_str_eq(b.ptr,
			 "results missing or failed for 1 of 4 tests, 1 with warnings, 1 improved");

	comparison(&c, rows + 7, 1);
	pg_gate_count(&k, &c);
	pg_buf_reset(&b);
	pg_gate_counts_phrase(&b, &k);
	ck_assert_str_eq(b.ptr, "no regressions in 1 test");
	pg_buf_release(&b);
}
END_TEST

START_TEST(exit_codes)
{
	ck_assert_int_eq(pg_gate_exit_code(PG_OUTCOME_PASS, true), PG_EXIT_OK);
	ck_assert_int_eq(pg_gate_exit_code(PG_OUTCOME_WARN, true), PG_EXIT_OK);
	ck_assert_int_eq(pg_gate_exit_code(PG_OUTCOME_FAIL, true), PG_EXIT_REGRESSION);
	ck_assert_int_eq(pg_gate_exit_code(PG_OUTCOME_INFRA, true), PG_EXIT_INFRA);
	/* a step that does not gate reports a regression, it does not fail on it */
	ck_assert_int_eq(pg_gate_exit_code(PG_OUTCOME_FAIL, false), PG_EXIT_OK);
	ck_assert_int_eq(pg_gate_exit_code(PG_OUTCOME_INFRA, false), PG_EXIT_INFRA);
}
END_TEST

static Suite *attention_suite(void)
{
	Suite *s = suite_create("attention");
	TCase *tc = tcase_create("attention");

	tcase_add_test(tc, attention_rows_are_what_fails_or_must_be_looked_at);
	tcase_add_test(tc, counts_are_per_test_with_metrics_as_detail);
	tcase_add_test(tc, exit_codes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(attention_suite());
}
