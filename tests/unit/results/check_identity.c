/* One identity for a test point: names, parsing, the names earlier schemes
 * gave a workload, and the comparison and baselines that match by it. */
#include "testutil.h"

#include "base/strutil.h"
#include "gate/compare.h"
#include "results/identity.h"
#include "suite/suite.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

START_TEST(names_follow_the_effective_cap)
{
	/* clang-format off */
	static const struct {
		double qps;
		long cap, prompts;
		const char *want;
	} cases[] = {
		{ 1, 200, 200, "t_qps_1" },             /* a cap of all prompts is no cap */
		{ 1, 300, 200, "t_qps_1" },
		{ INFINITY, 0, 200, "t_qps_inf" },
		{ INFINITY, 199, 200, "t_qps_inf_concurrency_199" },
		{ 0.5, 16, 200, "t_qps_0.5_concurrency_16" },
		{ 4, 16, -1, "t_qps_4_concurrency_16" }, /* prompts unknown: the cap stays */
	};
	/* clang-format on */

	for (size_t i = 0; i < N(cases); i++) {
		char *n = pg_identity_point_name("t", cases[i].qps, cases[i].cap, cases[i].prompts);
		ck_assert_str_eq(n, cases[i].want);
		free(n);
	}
}
END_TEST

START_TEST(parse_names)
{
	char *test;
	double q;
	long c;

	ck_assert_int_eq(pg_identity_parse("a_qps_x_qps_4_concurrency_16", &test, &q, &c), 0);
	ck_assert_str_eq(test, "a_qps_x");
	ck_assert_double_eq(q, 4);
	ck_assert_int_eq(c, 16);
	free(test);
	ck_assert_int_eq(pg_identity_parse("s_qps_inf_concurrency_inf", &test, &q, &c), 0);
	ck_assert(isinf(q));
	ck_assert_int_eq(c, 0);
	free(test);
	ck_assert_int_eq(pg_identity_parse("s_qps_01", &test, &q, &c), 0);
	ck_assert_double_eq(q, 1);
	ck_assert_int_eq(c, -1);
	free(test);
	/* not a point name: nothing set */
	test = NULL;
	ck_assert_int_eq(pg_identity_parse("latency_x", &test, &q, &c), -1);
	ck_assert_int_eq(pg_identity_parse("s_qps_4_sla_summary", &test, &q, &c), -1);
	ck_assert_int_eq(pg_identity_parse("s_qps_4_concurrency_0", &test, &q, &c), -1);
	ck_assert_int_eq(pg_identity_parse("s_qps_", &test, &q, &c), -1);
	ck_assert_int_eq(pg_identity_parse("_qps_4", &test, &q, &c), -1);
	ck_assert_ptr_null(test);
}
END_TEST

START_TEST(identity_of_results)
{
	json_t *vllm = json_pack("{s:i, s:f, s:i}", "num_prompts", 200, "request_rate", 1.0,
				 "max_concurrency", 200);
	json_t *capped = json_pack("{s:i, s:i}", "num_prompts", 200, "max_concurrency", 16);
	json_t *pg = json_pack("{s:{s:{s:i, s:n}}}", "perfgate", "params", "num_prompts", 8,
			       "max_concurrency");
	char *n;

	n = pg_identity_of("serving_x_qps_1_concurrency_200", PG_SUITE_SERVING, vllm);
	ck_assert_str_eq(n, "serving_x_qps_1");
	free(n);
	/* the name has no cap, the result one that holds requests back */
	n = pg_identity_of("serving_x_qps_4", PG_SUITE_SERVING, capped);
	ck_assert_str_eq(n, "serving_x_qps_4_concurrency_16");
	free(n);
	n = pg_identity_of("serving_x_qps_inf_concurrency_inf", PG_SUITE_SERVING, pg);
	ck_assert_str_eq(n, "serving_x_qps_inf");
	free(n);
	n = pg_identity_of("serving_x_qps_01", PG_SUITE_SERVING, NULL);
	ck_assert_str_eq(n, "serving_x_qps_1");
	free(n);
	n = pg_identity_of("latency_x_qps_1_concurrency_200", PG_SUITE_LATENCY, vllm);
	ck_assert_str_eq(n, "latency_x_qps_1_concurrency_200");
	free(n);
	json_decref(vllm);
	json_decref(capped);
	json_decref(pg);
}
END_TEST

START_TEST(earlier_names_keep_matching)
{
	json_t *r = json_pack("{s:i}", "num_prompts", 200);
	struct pg_strv names = PG_STRV_INIT;

	pg_identity_names(&names, "serving_x_qps_1", PG_SUITE_SERVING, r);
	ck_assert_uint_eq(names.n, 3);
	ck_assert_str_eq(names.v[0], "serving_x_qps_1");
	ck_assert_str_eq(names.v[1], "serving_x_qps_1_concurrency_200");
	ck_assert_str_eq(names.v[2], "serving_x_qps_1_concurrency_inf");
	pg_strv_release(&names);
	/* a real cap has no other name but the one given */
	pg_identity_names(&names, "serving_x_qps_1_concurrency_16", PG_SUITE_SERVING, r);
	ck_assert_uint_eq(names.n, 1);
	pg_strv_release(&names);
	json_decref(r);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The comparison matches by identity                                  */

static void add_value(struct pg_baseline *b, const char *name, double rps)
{
	struct pg_base_point *p = pg_baseline_add(b, name, PG_SUITE_SERVING);
	pg_base_point_add_metric(p, pg_metric_by_id(PG_SUITE_SERVING, "request_throughput"), rps,
				 NULL, 0);
}

static const struct pg_cmp_row *row_of(const struct pg_comparison *c, const char *point,
				       const char *metric)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->rows[i].point, point) &&
		    (metric ? c->rows[i].metric && !strcmp(c->rows[i].metric->id, metric)
			    : !c->rows[i].metric))
			return &c->rows[i];
	return NULL;
}

START_TEST(compare_matches_by_identity)
{
	struct pg_baseline b = PG_BASELINE_INIT;
	struct pg_policy pol;
	struct pg_comparison c;
	/* vLLM's current driver's names for the published report's points */
	json_t *r1 = json_pack("{s:i, s:i, s:f}", "num_prompts", 200, "max_concurrency", 200,
			       "request_throughput", 1.0);
	json_t *r2 = json_pack("{s:i, s:i, s:f}", "num_prompts", 200, "max_concurrency", 200,
			       "request_throughput", 4.0);
	json_t *r3 = json_pack("{s:i, s:n, s:f}", "num_prompts", 200, "max_concurrency",
			       "request_throughput", 16.0);
	struct pg_cmp_point run[] = {
		{ "s_qps_1_concurrency_200", PG_SUITE_SERVING, "ok", r1, NULL, false },
		{ "s_qps_4_concurrency_200", PG_SUITE_SERVING, "ok", r2, NULL, false },
		{ "s_qps_16", PG_SUITE_SERVING, "ok", r3, NULL, false },
	};

	pg_policy_init(&pol);
	add_value(&b, "s_qps_1", 1.0);                   /* the published name */
	add_value(&b, "s_qps_4_concurrency_inf", 4.0);   /* an earlier perfgate's name */
	add_value(&b, "s_qps_16", 16.0);                 /* the identity itself ... */
	add_value(&b, "s_qps_16_concurrency_200", 99.0); /* ... wins over an older record */
	pg_baseline_sort(&b);
	pg_compare(&c, &pol, &b, run, N(run), NULL, 0, NULL);

	ck_assert_uint_eq(c.counts[PG_VERDICT_MISSING], 0);
	ck_assert_uint_eq(c.counts[PG_VERDICT_NEW], 0);
	ck_assert_ptr_nonnull(row_of(&c, "s_qps_1", "request_throughput"));
	ck_assert_int_eq(row_of(&c, "s_qps_1", "request_throughput")->verdict,
			 PG_VERDICT_UNCHANGED);
	ck_assert_ptr_nonnull(row_of(&c, "s_qps_4_concurrency_inf", "request_throughput"));
	ck_assert_double_eq(row_of(&c, "s_qps_16", "request_throughput")->baseline, 16.0);
	ck_assert_ptr_null(row_of(&c, "s_qps_16_concurrency_200", NULL));
	ck_assert_int_eq(c.outcome, PG_OUTCOME_PASS);
	pg_comparison_release(&c);

	/* a point the run lacks is still missing under any of its names */
	pg_compare(&c, &pol, &b, run, 2, NULL, 0, NULL);
	ck_assert_ptr_nonnull(row_of(&c, "s_qps_16", NULL));
	ck_assert_int_eq(row_of(&c, "s_qps_16", NULL)->verdict, PG_VERDICT_MISSING);
	pg_comparison_release(&c);

	pg_policy_release(&pol);
	pg_baseline_release(&b);
	json_decref(r1);
	json_decref(r2);
	json_decref(r3);
}
END_TEST

/* A disaggregated deployment's point carries its shape in its identity:
 * it never matches a one-server baseline of the same test, nor the other
 * way round, and a baseline of the same shape matches it. */
START_TEST(deployment_shape_is_identity)
{
	struct pg_baseline b = PG_BASELINE_INIT;
	struct pg_policy pol;
	struct pg_comparison c;
	struct pg_strv names = PG_STRV_INIT;
	json_t *pd = json_pack("{s:{s:{s:s, s:i}}, s:f}", "perfgate", "params", "deployment",
			       "prefill=2x1,decode=2x1", "num_prompts", 20, "request_throughput",
			       2.0);
	json_t *agg = json_pack("{s:{s:{s:i}}, s:f}", "perfgate", "params", "num_prompts", 20,
				"request_throughput", 2.0);
	char *id;

	id = pg_identity_of("pd_qps_inf", PG_SUITE_SERVING, pd);
	ck_assert_str_eq(id, "pd@prefill=2x1,decode=2x1_qps_inf");
	free(id);
	/* an identity given back is the identity (no second shape) */
	id = pg_identity_of("pd@prefill=2x1,decode=2x1_qps_inf", PG_SUITE_SERVING, pd);
	ck_assert_str_eq(id, "pd@prefill=2x1,decode=2x1_qps_inf");
	free(id);
	id = pg_identity_of("pd_qps_inf_concurrency_4", PG_SUITE_SERVING, pd);
	ck_assert_str_eq(id, "pd@prefill=2x1,decode=2x1_qps_inf_concurrency_4");
	free(id);
	id = pg_identity_of("lat", PG_SUITE_LATENCY, pd);
	ck_assert_str_eq(id, "lat@prefill=2x1,decode=2x1");
	free(id);
	id = pg_identity_of("pd_qps_inf", PG_SUITE_SERVING, agg);
	ck_assert_str_eq(id, "pd_qps_inf");
	free(id);
	/* no candidate name is a one-server name */
	pg_identity_names(&names, "pd_qps_inf", PG_SUITE_SERVING, pd);
	for (size_t i = 0; i < names.n; i++)
		ck_assert_ptr_nonnull(strchr(names.v[i], '@'));
	pg_strv_release(&names);

	/* compare: a one-server baseline, a P/D run -- different points */
	{
		struct pg_cmp_point run[] = {
			{ "pd_qps_inf", PG_SUITE_SERVING, "ok", pd, NULL, false },
		};
		pg_policy_init(&pol);
		add_value(&b, "pd_qps_inf", 2.0);
		pg_baseline_sort(&b);
		pg_compare(&c, &pol, &b, run, N(run), NULL, 0, NULL);
		ck_assert_uint_eq(c.counts[PG_VERDICT_NEW], 1);
		ck_assert_uint_eq(c.counts[PG_VERDICT_MISSING], 1);
		ck_assert_int_eq(row_of(&c, "pd_qps_inf", NULL)->verdict, PG_VERDICT_MISSING);
		pg_comparison_release(&c);
		pg_baseline_release(&b);
	}
	/* a P/D baseline, a one-server run -- different points too */
	{
		struct pg_cmp_point run[] = {
			{ "pd_qps_inf", PG_SUITE_SERVING, "ok", agg, NULL, false },
		};
		b = (struct pg_baseline)PG_BASELINE_INIT;
		add_value(&b, "pd@prefill=2x1,decode=2x1_qps_inf", 2.0);
		pg_baseline_sort(&b);
		pg_compare(&c, &pol, &b, run, N(run), NULL, 0, NULL);
		ck_assert_uint_eq(c.counts[PG_VERDICT_NEW], 1);
		ck_assert_uint_eq(c.counts[PG_VERDICT_MISSING], 1);
		pg_comparison_release(&c);
		pg_baseline_release(&b);
	}
	/* the same shape: the same point */
	{
		struct pg_cmp_point run[] = {
			{ "pd_qps_inf", PG_SUITE_SERVING, "ok", pd, NULL, false },
		};
		b = (struct pg_baseline)PG_BASELINE_INIT;
		add_value(&b, "pd@prefill=2x1,decode=2x1_qps_inf", 2.0);
		pg_baseline_sort(&b);
		pg_compare(&c, &pol, &b, run, N(run), NULL, 0, NULL);
		ck_assert_uint_eq(c.counts[PG_VERDICT_NEW], 0);
		ck_assert_uint_eq(c.counts[PG_VERDICT_MISSING], 0);
		ck_assert_int_eq(
			row_of(&c, "pd@prefill=2x1,decode=2x1_qps_inf", "request_throughput")
				->verdict,
			PG_VERDICT_UNCHANGED);
		pg_comparison_release(&c);
		pg_baseline_release(&b);
	}
	pg_policy_release(&pol);
	json_decref(pd);
	json_decref(agg);
}
END_TEST

/* PROMPTS_PER_CONCURRENCY=1: every point has as many prompts as its cap,
 * so every identity is "no cap"; the points keep their own names rather
 * than hide one another. */
START_TEST(coinciding_identities_keep_names)
{
	struct pg_baseline b = PG_BASELINE_INIT;
	struct pg_policy pol;
	struct pg_comparison c;
	json_t *r1 = json_pack("{s:i, s:i, s:f}", "num_prompts", 1, "max_concurrency", 1,
			       "request_throughput", 1.0);
	json_t *r3 = json_pack("{s:i, s:i, s:f}", "num_prompts", 3, "max_concurrency", 3,
			       "request_throughput", 3.0);
	struct pg_cmp_point run[] = {
		{ "s_qps_inf_concurrency_1", PG_SUITE_SERVING, "ok", r1, NULL, false },
		{ "s_qps_inf_concurrency_3", PG_SUITE_SERVING, "ok", r3, NULL, false },
	};
	struct pg_cmp_run r = { "run", run, 2 };

	pg_policy_init(&pol);
	b.gpu = strdup("H100");
	pg_compare(&c, &pol, &b, run, N(run), NULL, 0, NULL);
	ck_assert_ptr_nonnull(row_of(&c, "s_qps_inf_concurrency_1", "request_throughput"));
	ck_assert_ptr_nonnull(row_of(&c, "s_qps_inf_concurrency_3", "request_throughput"));
	ck_assert_ptr_null(row_of(&c, "s_qps_inf", "request_throughput"));
	pg_comparison_release(&c);
	pg_baseline_release(&b);
	pg_baseline_from_runs(&b, &r, 1, NULL);
	ck_assert_uint_eq(b.n, 2);
	ck_assert_str_eq(b.points[0].name, "s_qps_inf_concurrency_1");
	pg_baseline_release(&b);
	pg_policy_release(&pol);
	json_decref(r1);
	json_decref(r3);
}
END_TEST

START_TEST(baselines_from_runs_take_identities)
{
	struct pg_baseline b = PG_BASELINE_INIT;
	json_t *r = json_pack("{s:i, s:i, s:f}", "num_prompts", 100, "max_concurrency", 100,
			      "request_throughput", 3.0);
	struct pg_cmp_point pts[] = {
		{ "s_qps_2_concurrency_100", PG_SUITE_SERVING, "ok", r, NULL, false },
	};
	struct pg_cmp_run run = { "run", pts, 1 };

	pg_baseline_from_runs(&b, &run, 1, NULL);
	ck_assert_uint_eq(b.n, 1);
	ck_assert_str_eq(b.points[0].name, "s_qps_2");
	pg_baseline_release(&b);
	json_decref(r);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Plans name points by identity                                       */

START_TEST(plan_names)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_test t;
	struct pg_plan p = PG_PLAN_INIT;
	static const long caps[] = { 16, 200 };
	static const long dup[] = { 200, 300 };

	pg_test_init(&t, PG_SUITE_SERVING);
	t.name = strdup("s");
	t.num_prompts = 200;
	t.qps[0] = INFINITY;
	free(t.max_concurrency);
	t.max_concurrency = malloc(sizeof(caps));
	memcpy(t.max_concurrency, caps, sizeof(caps));
	t.n_max_concurrency = 2;
	t.concurrency_in_name = true;
	pg_suite_add(&s, &t);
	pg_plan_build(&p, &s);
	ck_assert_uint_eq(p.n, 2);
	ck_assert_str_eq(p.points[0].name, "s_qps_inf_concurrency_16");
	ck_assert_str_eq(p.points[1].name, "s_qps_inf");
	pg_plan_release(&p);

	/* two caps that are both no cap keep their literal names */
	memcpy(s.tests[0].max_concurrency, dup, sizeof(dup));
	pg_plan_build(&p, &s);
	ck_assert_str_eq(p.points[0].name, "s_qps_inf_concurrency_200");
	ck_assert_str_eq(p.points[1].name, "s_qps_inf_concurrency_300");
	pg_plan_release(&p);

	/* prompts that follow the cap make the cap part of the workload */
	memcpy(s.tests[0].max_concurrency, caps, sizeof(caps));
	s.tests[0].prompts_per_concurrency = 1;
	pg_plan_build(&p, &s);
	ck_assert_str_eq(p.points[1].name, "s_qps_inf_concurrency_200");
	pg_plan_release(&p);
	pg_suite_release(&s);
}
END_TEST

static Suite *identity_suite(void)
{
	Suite *s = suite_create("identity");
	TCase *tc = tcase_create("names");

	tcase_add_test(tc, names_follow_the_effective_cap);
	tcase_add_test(tc, parse_names);
	tcase_add_test(tc, identity_of_results);
	tcase_add_test(tc, earlier_names_keep_matching);
	tcase_add_test(tc, plan_names);
	suite_add_tcase(s, tc);
	tc = tcase_create("matching");
	tcase_add_test(tc, compare_matches_by_identity);
	tcase_add_test(tc, coinciding_identities_keep_names);
	tcase_add_test(tc, deployment_shape_is_identity);
	tcase_add_test(tc, baselines_from_runs_take_identities);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(identity_suite());
}
