/* The gate's tail rules (gate/compare_tails.h): a tail metric is judged
 * only at a sample size that can certify its percentile. */
#include "testutil.h"

#include "base/error.h"
#include "base/jsonw.h"
#include "baseline/thresholds_io.h"
#include "gate/compare.h"
#include "gate/compare_tails.h"
#include "results/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct pg_metric *srv(const char *id)
{
	const struct pg_metric *m = pg_metric_by_id(PG_SUITE_SERVING, id);
	ck_assert_msg(m != NULL, "no metric %s", id);
	return m;
}

/* A serving result of n completed requests. */
static json_t *result(long completed, double p99_ttft, double median_ttft)
{
	json_t *r = json_object(), *pg = json_object();

	json_object_set_new(r, "completed", json_integer(completed));
	json_object_set_new(r, "output_throughput", json_real(1000));
	json_object_set_new(r, "median_ttft_ms", json_real(median_ttft));
	json_object_set_new(r, "p99_ttft_ms", json_real(p99_ttft));
	json_object_set_new(pg, "suite", json_string("serving"));
	json_object_set_new(pg, "status", json_string("ok"));
	json_object_set_new(r, "perfgate", pg);
	return r;
}

static void base_point(struct pg_baseline *b, const char *name)
{
	static const double p99[] = { 100, 101, 99, 100.5, 99.5 };
	static const double median[] = { 50, 50.2, 49.9, 50.1, 49.8 };
	struct pg_base_point *p = pg_baseline_add(b, name, PG_SUITE_SERVING);

	pg_base_point_add_metric(p, srv("p99_ttft_ms"), NAN, p99, 5);
	pg_base_point_add_metric(p, srv("median_ttft_ms"), NAN, median, 5);
}

static const struct pg_cmp_row *row_of(const struct pg_comparison *c, const char *metric)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->rows[i].metric && !strcmp(c->rows[i].metric->id, metric))
			return &c->rows[i];
	ck_abort_msg("no row for %s", metric);
	return NULL;
}

START_TEST(tail_metrics_and_their_samples)
{
	double p;
	char fam[16];
	json_t *r = result(200, 1, 1), *lat = json_array();

	ck_assert(pg_cmp_tail_metric(srv("p99_ttft_ms"), &p, fam));
	ck_assert_double_eq(p, 99);
	ck_assert_str_eq(fam, "ttft");
	ck_assert(pg_cmp_tail_metric(srv("certified_p99_itl_ms"), &p, fam));
	ck_assert_str_eq(fam, "itl");
	ck_assert(pg_cmp_tail_metric(pg_metric_by_id(PG_SUITE_LATENCY, "p90_latency_ms"), &p, fam));
	ck_assert_double_eq(p, 90);
	ck_assert_str_eq(fam, "latency");
	ck_assert(!pg_cmp_tail_metric(srv("median_ttft_ms"), &p, fam));
	ck_assert(!pg_cmp_tail_metric(srv("output_throughput"), &p, fam));

	/* vLLM's keys: completed requests, and one ITL gap per output token
	 * after each request's first */
	ck_assert_int_eq(pg_cmp_tail_samples(r, "ttft"), 200);
	ck_assert_int_eq(pg_cmp_tail_samples(r, "itl"), -1);
	json_object_set_new(r, "total_output_tokens", json_integer(200 * 128));
	ck_assert_int_eq(pg_cmp_tail_samples(r, "itl"), 200 * 127);
	/* perfgate.certified says exactly */
	json_object_set_new(json_object_get(r, "perfgate"), "certified",
			    json_pack("{s:{s:i}}", "tpot", "n", 190));
	ck_assert_int_eq(pg_cmp_tail_samples(r, "tpot"), 190);
	ck_assert_int_eq(pg_cmp_tail_samples(r, "ttft"), 200);
	for (int i = 0; i < 30; i++)
		json_array_append_new(lat, json_real(1));
	json_object_set_new(r, "latencies", lat);
	ck_assert_int_eq(pg_cmp_tail_samples(r, "latency"), 30);
	json_decref(r);
}
END_TEST

/* 200 requests cannot decide a p99 rule: the row says so instead of a
 * verdict, and only warns (noisy) when the tail moved past its tolerance; at 700
 * requests the same change is judged (and escalates); certify: false
 * judges it anyway. */
START_TEST(small_samples_make_tails_undecidable)
{
	struct pg_policy policy;
	struct pg_baseline base = PG_BASELINE_INIT;
	struct pg_comparison c;
	json_t *small = result(200, 130, 50), *quiet = result(200, 101, 50);
	json_t *large = result(700, 130, 50);
	struct pg_cmp_point run[] = { { "p", PG_SUITE_SERVING, "ok", small, NULL, false } };
	const struct pg_cmp_row *row;

	pg_policy_init(&policy);
	base.gpu = strdup("H100");
	base.kind = strdup("thresholds");
	base_point(&base, "p");
	pg_baseline_sort(&base);

	pg_compare(&c, &policy, &base, run, 1, NULL, 0, NULL);
	row = row_of(&c, "p99_ttft_ms");
	ck_assert_int_eq(row->verdict, PG_VERDICT_NOISY); /* shown, never failing */
	ck_assert_int_eq(row->outcome, PG_OUTCOME_WARN);
	ck_assert_str_eq(row->note, "not decidable at n = 200 (p99 needs ≥ 662)");
	ck_assert_double_eq(row->current, 130);
	ck_assert_double_eq_tol(row->change, 0.3, 1e-12);
	/* the median is decided as ever */
	ck_assert_int_eq(row_of(&c, "median_ttft_ms")->verdict, PG_VERDICT_UNCHANGED);
	ck_assert_int_eq(c.outcome, PG_OUTCOME_WARN);
	pg_comparison_release(&c);

	run[0].result = quiet;
	pg_compare(&c, &policy, &base, run, 1, NULL, 0, NULL);
	ck_assert_int_eq(row_of(&c, "p99_ttft_ms")->verdict, PG_VERDICT_INSUFFICIENT);
	ck_assert_int_eq(row_of(&c, "p99_ttft_ms")->outcome, PG_OUTCOME_PASS);
	ck_assert_int_eq(c.outcome, PG_OUTCOME_PASS);
	pg_comparison_release(&c);

	/* past the 8% escalation once: a spike, shown; it fails when it
	 * repeats, here on the re-run */
	run[0].result = large;
	pg_compare(&c, &policy, &base, run, 1, NULL, 0, NULL);
	row = row_of(&c, "p99_ttft_ms");
	ck_assert_int_eq(row->verdict, PG_VERDICT_REGRESSED);
	ck_assert_int_eq(row->outcome, PG_OUTCOME_WARN);
	ck_assert_msg(strstr(row->note, "escalation threshold once: a spike"), "%s", row->note);
	pg_comparison_release(&c);
	pg_compare(&c, &policy, &base, run, 1, run, 1, NULL);
	row = row_of(&c, "p99_ttft_ms");
	ck_assert_int_eq(row->verdict, PG_VERDICT_REGRESSED);
	ck_assert_int_eq(row->outcome, PG_OUTCOME_FAIL);
	pg_comparison_release(&c);

	pg_policy_add(&policy, NULL, "p99_ttft_ms",
		      &(struct pg_rule_patch){ PG_RULE_CERTIFY, { .certify = false } }, 0);
	run[0].result = small;
	pg_compare(&c, &policy, &base, run, 1, NULL, 0, NULL);
	ck_assert_int_eq(row_of(&c, "p99_ttft_ms")->verdict, PG_VERDICT_REGRESSED);
	pg_comparison_release(&c);

	json_decref(small);
	json_decref(quiet);
	json_decref(large);
	pg_baseline_release(&base);
	pg_policy_release(&policy);
}
END_TEST

/* A serving result with SLO keys: completed + failed requests sent,
 * attainment a (0..1). */
static json_t *slo_result(long completed, long failed, double a)
{
	json_t *r = result(completed, 1, 1);

	json_object_set_new(r, "failed", json_integer(failed));
	json_object_set_new(r, "slo_attainment", json_real(a));
	return r;
}

static const struct pg_cmp_row *decide_one(struct pg_comparison *c, const struct pg_policy *p,
					   json_t *res, const char *metric)
{
	static struct pg_baseline none = PG_BASELINE_INIT;
	struct pg_cmp_point run[] = { { "p", PG_SUITE_SERVING, "ok", res, NULL, false } };

	none.kind = "thresholds";
	pg_compare(c, p, &none, run, 1, NULL, 0, NULL);
	none.kind = NULL;
	return row_of(c, metric);
}

/* slo_attainment >= 99%: MLPerf's server rule certifies a pass, the
 * mirrored test a miss; in between the row says what would settle it.
 * No baseline is needed. (h_min for p99: 459 with no miss, 836 with 2,
 * 998 with 3; 7 misses of 200 are beyond chance.) */
START_TEST(slo_attainment_is_certified_or_not_decided)
{
	struct pg_policy policy;
	struct pg_comparison c;
	const struct pg_cmp_row *row;
	json_t *r;

	pg_policy_init(&policy);
	pg_policy_add(&policy, NULL, "slo_attainment",
		      &(struct pg_rule_patch){ PG_RULE_GATE | PG_RULE_LIMIT,
					       { .gate = true, .limit = 99 } },
		      0);

	r = slo_result(1000, 0, 0.998);
	row = decide_one(&c, &policy, r, "slo_attainment");
	ck_assert_int_eq(row->verdict, PG_VERDICT_UNCHANGED);
	ck_assert_int_eq(row->outcome, PG_OUTCOME_PASS);
	ck_assert_str_eq(row->note, "SLO met: 99.8% ≥ 99% (certain at 99% confidence, n = 1000)");
	ck_assert_int_eq(c.outcome, PG_OUTCOME_PASS);
	pg_comparison_release(&c);
	json_decref(r);

	r = slo_result(1000, 0, 0.997);
	row = decide_one(&c, &policy, r, "slo_attainment");
	ck_assert_int_eq(row->verdict, PG_VERDICT_INSUFFICIENT);
	ck_assert_int_eq(row->outcome, PG_OUTCOME_WARN);
	ck_assert_str_eq(row->note, "SLO not decided: 99.7% ≥ 99% at n = 1000: with 3 misses, "
				    "certifying it takes ≥ 1001 requests");
	pg_comparison_release(&c);
	json_decref(r);

	r = slo_result(200, 0, 1);
	row = decide_one(&c, &policy, r, "slo_attainment");
	ck_assert_int_eq(row->verdict, PG_VERDICT_INSUFFICIENT);
	ck_assert_str_eq(row->note, "SLO not decided: 100% ≥ 99% at n = 200: with 0 misses, "
				    "certifying it takes ≥ 459 requests");
	pg_comparison_release(&c);
	json_decref(r);

	r = slo_result(200, 0, 0.985);
	row = decide_one(&c, &policy, r, "slo_attainment");
	ck_assert_int_eq(row->verdict, PG_VERDICT_NOISY);
	ck_assert_int_eq(row->outcome, PG_OUTCOME_WARN);
	ck_assert_str_eq(row->note,
			 "SLO not decided: 98.5% < 99% at n = 200: 3 misses could be chance (7 "
			 "would not)");
	pg_comparison_release(&c);
	json_decref(r);

	/* failed requests miss every SLO: 195 completed, 5 failed */
	r = slo_result(195, 5, 0.965);
	row = decide_one(&c, &policy, r, "slo_attainment");
	ck_assert_int_eq(row->verdict, PG_VERDICT_REGRESSED);
	ck_assert_int_eq(row->outcome, PG_OUTCOME_FAIL);
	ck_assert_str_eq(row->note, "SLO missed: 96.5% < 99% (certain at 99% confidence, n = 200)");
	ck_assert_int_eq(c.outcome, PG_OUTCOME_FAIL);
	pg_comparison_release(&c);

	/* certify: false judges the value alone */
	pg_policy_add(&policy, NULL, "slo_attainment",
		      &(struct pg_rule_patch){ PG_RULE_CERTIFY, { .certify = false } }, 0);
	json_object_set_new(r, "slo_attainment", json_real(0.995));
	row = decide_one(&c, &policy, r, "slo_attainment");
	ck_assert_int_eq(row->verdict, PG_VERDICT_UNCHANGED);
	ck_assert_str_eq(row->note, "SLO met: 99.5% ≥ 99%");
	pg_comparison_release(&c);
	json_decref(r);
	pg_policy_release(&policy);
}
END_TEST

/* A bound on a tail: not decidable below the percentile's samples; met
 * when the certified estimate (an upper bound) is within it, missed when
 * the plain percentile is not; other metrics by their value. */
START_TEST(slo_bounds_on_tails_and_other_metrics)
{
	struct pg_policy policy;
	struct pg_comparison c;
	const struct pg_cmp_row *row;
	json_t *r = result(1000, 1800, 50);

	pg_policy_init(&policy);
	pg_policy_add(&policy, NULL, "p99_ttft_ms",
		      &(struct pg_rule_patch){ PG_RULE_GATE | PG_RULE_LIMIT,
					       { .gate = true, .limit = 2000 } },
		      0);
	pg_policy_add(&policy, NULL, "certified_p99_ttft_ms",
		      &(struct pg_rule_patch){ PG_RULE_GATE | PG_RULE_LIMIT,
					       { .gate = true, .limit = 2000 } },
		      0);
	pg_policy_add(&policy, NULL, "output_throughput",
		      &(struct pg_rule_patch){ PG_RULE_GATE | PG_RULE_LIMIT,
					       { .gate = false, .limit = 1200 } },
		      0);
	json_object_set_new(json_object_get(r, "perfgate"), "certified",
			    json_pack("{s:{s:i, s:f}}", "ttft", "n", 1000, "p99", 1900.0));

	row = decide_one(&c, &policy, r, "p99_ttft_ms");
	ck_assert_str_eq(row->note,
			 "SLO met: 1800 ms ≤ 2000 ms (certain at 99% confidence, n = 1000)");
	ck_assert_str_eq(row_of(&c, "certified_p99_ttft_ms")->note,
			 "SLO met: 1900 ms ≤ 2000 ms (certain at 99% confidence, n = 1000)");
	/* a warn-only bound */
	ck_assert_int_eq(row_of(&c, "output_throughput")->verdict, PG_VERDICT_REGRESSED);
	ck_assert_int_eq(row_of(&c, "output_throughput")->outcome, PG_OUTCOME_WARN);
	ck_assert_str_eq(row_of(&c, "output_throughput")->note,
			 "SLO missed: 1000 tok/s < 1200 tok/s");
	pg_comparison_release(&c);

	/* the plain p99 is within the bound, its certified bound is not */
	json_object_set_new(json_object_get(json_object_get(r, "perfgate"), "certified"), "ttft",
			    json_pack("{s:i, s:f}", "n", 1000, "p99", 2100.0));
	row = decide_one(&c, &policy, r, "p99_ttft_ms");
	ck_assert_int_eq(row->verdict, PG_VERDICT_INSUFFICIENT);
	ck_assert_str_eq(row->note, "SLO not decided: 1800 ms ≤ 2000 ms but its certified bound "
				    "2100 ms is not");
	/* the certified estimate itself is over the bound: shown as noisy */
	ck_assert_int_eq(row_of(&c, "certified_p99_ttft_ms")->verdict, PG_VERDICT_NOISY);
	pg_comparison_release(&c);

	/* 200 requests: not decidable; over the bound it is noisy */
	json_object_del(json_object_get(r, "perfgate"), "certified");
	json_object_set_new(r, "completed", json_integer(200));
	json_object_set_new(r, "p99_ttft_ms", json_real(2500));
	row = decide_one(&c, &policy, r, "p99_ttft_ms");
	ck_assert_int_eq(row->verdict, PG_VERDICT_NOISY);
	ck_assert_str_eq(row->note,
			 "SLO not decided: 2500 ms > 2000 ms at n = 200: p99 needs ≥ 662");
	pg_comparison_release(&c);
	/* enough samples and the plain value over the bound: missed */
	json_object_set_new(r, "completed", json_integer(700));
	row = decide_one(&c, &policy, r, "p99_ttft_ms");
	ck_assert_int_eq(row->verdict, PG_VERDICT_REGRESSED);
	ck_assert_int_eq(row->outcome, PG_OUTCOME_FAIL);
	ck_assert_str_eq(row->note, "SLO missed: 2500 ms > 2000 ms");
	pg_comparison_release(&c);

	json_decref(r);
	pg_policy_release(&policy);
}
END_TEST

/* min/max in a thresholds file: in the metric's display units, the
 * direction checked, one line naming the place for mistakes. */
START_TEST(slo_bounds_in_thresholds_files)
{
	static const struct {
		const char *yaml, *error;
	} cases[] = {
		{ "slo_attainment: { gate: true, min: 99.5% }", NULL },
		{ "p99_ttft_ms: { max: 2000 ms }", NULL },
		{ "p99_ttft_ms: { min: 2000 ms }",
		  ":4:20: policy.metrics.p99_ttft_ms.min: p99_ttft_ms is lower-is-better: its SLO bound "
		  "is 'max', not 'min'" },
		{ "output_throughput: { max: 5 }",
		  ":4:26: policy.metrics.output_throughput.max: output_throughput is higher-is-better: "
		  "its SLO bound is 'min', not 'max'" },
		{ "p99_ttft_ms: { max: 2 s }",
		  ":4:25: policy.metrics.p99_ttft_ms.max: unit 's' is not p99_ttft_ms's unit 'ms'" },
		{ "slo_attainment: { min: 99.5%, min: 98% }", "" },
	};
	char *dir = tu_mkdtemp();

	for (size_t i = 0; i < N(cases); i++) {
		struct pg_policy policy;
		struct pg_baseline base = PG_BASELINE_INIT;
		struct pg_error err = PG_ERROR_INIT;
		char path[512], text[512];
		int rc;

		snprintf(path, sizeof(path), "%s/H100.yml", dir);
		snprintf(text, sizeof(text), "gpu: H100\npolicy:\n  metrics:\n    %s\n",
			 cases[i].yaml);
		tu_write_file(path, text);
		rc = pg_thresholds_load(path, &policy, &base, &err);
		if (!cases[i].error) {
			struct pg_rule rule;
			ck_assert_msg(rc == 0, "%s: %s", cases[i].yaml, err.msg);
			pg_policy_rule(&policy, "p", NULL,
				       policy.entries[0].metric[0] == 's'
					       ? pg_metric_by_id(PG_SUITE_SERVING, "slo_attainment")
					       : pg_metric_by_id(PG_SUITE_SERVING, "p99_ttft_ms"),
				       &rule);
			ck_assert_double_eq_tol(rule.limit, i == 0 ? 99.5 : 2000, 1e-9);
		} else {
			ck_assert_int_ne(rc, 0);
			ck_assert_msg(strstr(err.msg, cases[i].error) != NULL, "%s: got '%s'",
				      cases[i].yaml, err.msg);
		}
		pg_policy_release(&policy);
		pg_baseline_release(&base);
	}
	tu_rm_rf(dir);
	free(dir);
}
END_TEST

static Suite *gate_tails_suite(void)
{
	Suite *s = suite_create("gate_tails");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, tail_metrics_and_their_samples);
	tcase_add_test(tc, small_samples_make_tails_undecidable);
	tcase_add_test(tc, slo_attainment_is_certified_or_not_decided);
	tcase_add_test(tc, slo_bounds_on_tails_and_other_metrics);
	tcase_add_test(tc, slo_bounds_in_thresholds_files);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(gate_tails_suite());
}
