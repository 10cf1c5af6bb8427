/* Dynamic pipelines: shard parsing and the even, deterministic split,
 * YAML scalars that survive interpolation, golden pipelines. */
#include "testutil.h"

#include "suite/bkinterp.h"
#include "buildkite/pipeline_emit.h"
#include "base/buf.h"
#include "base/error.h"
#include "suite/suite.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *vars(void *ctx, const char *name)
{
	(void)ctx;
	if (!strcmp(name, "MODEL"))
		return "meta-llama/Llama-3.1-8B";
	if (!strcmp(name, "EMPTY"))
		return "";
	if (!strcmp(name, "gpu"))
		return "H100";
	if (!strcmp(name, ""))
		return "plain";
	return NULL;
}

/* Buildkite's upload-time interpolation, case by case. */
START_TEST(interpolation)
{
	/* clang-format off */
	static const struct {
		const char *in, *out;
	} ok[] = {
		{ "no variables", "no variables" },
		{ "$MODEL", "meta-llama/Llama-3.1-8B" },
		{ "${MODEL}-x", "meta-llama/Llama-3.1-8B-x" },
		{ "a$UNSET.b", "a.b" },
		{ "${UNSET:-d}|${EMPTY:-d}|${EMPTY-d}|${UNSET-d}", "d|d||d" },
		{ "${UNSET:-${MODEL:0:4}}", "meta" },
		{ "${MODEL:5}", "llama/Llama-3.1-8B" },
		{ "${MODEL:5:5}", "llama" },
		{ "${MODEL: -2}", "8B" },
		{ "${MODEL:-}", "meta-llama/Llama-3.1-8B" },
		{ "$$MODEL \\$MODEL", "$MODEL $MODEL" },
		{ "cost: 5$ or $1 or $", "cost: 5$ or $1 or $" },
		{ "${MODEL?}", "meta-llama/Llama-3.1-8B" },
		{ "${EMPTY?}", "" },
	};
	/* clang-format on */
	/* clang-format off */
	static const struct {
		const char *in, *msg;
	} bad[] = {
		{ "${UNSET?needed}", "UNSET: needed" },
		{ "${UNSET:?}", "UNSET: not set" },
		{ "${EMPTY:?empty}", "EMPTY: empty" },
		{ "${MODEL", "unclosed '${' in '${MODEL'" },
		{ "${1}", "bad substitution '${1}'" },
		{ "${MODEL+x}", "bad substitution '${MODEL+x}'" },
		{ "${MODEL:x}", "bad substitution '${MODEL:x}'" },
	};
	/* clang-format on */
	struct pg_error err = PG_ERROR_INIT;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct pg_buf b = PG_BUF_INIT;
		ck_assert_msg(pg_bk_interpolate(&b, ok[i].in, vars, NULL, &err) == 0, "%s: %s",
			      ok[i].in, err.msg);
		ck_assert_str_eq(b.ptr, ok[i].out);
		pg_buf_release(&b);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pg_buf b = PG_BUF_INIT;
		ck_assert_int_eq(pg_bk_interpolate(&b, bad[i].in, vars, NULL, &err), PG_ECONFIG);
		ck_assert_str_eq(err.msg, bad[i].msg);
		pg_buf_release(&b);
	}
}
END_TEST

START_TEST(matrix_values)
{
	struct pg_buf b = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;

	ck_assert(pg_bk_has_matrix_ref("queue-{{matrix.gpu}}"));
	ck_assert(pg_bk_has_matrix_ref("{{ matrix }}"));
	ck_assert(!pg_bk_has_matrix_ref("{{matrixes}} {model}"));
	ck_assert_int_eq(
		pg_bk_matrix_fill(&b, "q-{{matrix.gpu}}/{{ matrix }}/{gpu}", vars, NULL, &err), 0);
	ck_assert_str_eq(b.ptr, "q-H100/plain/{gpu}");
	pg_buf_reset(&b);
	ck_assert_int_eq(pg_bk_matrix_fill(&b, "{{matrix.model}}", vars, NULL, &err), PG_ENOTFOUND);
	ck_assert_str_eq(err.msg, "{{matrix.model}}");
	pg_buf_release(&b);
}
END_TEST

START_TEST(shard_text)
{
	struct pg_error err = PG_ERROR_INIT;
	size_t i, n;

	ck_assert_int_eq(pg_shard_parse("2/4", &i, &n, &err), 0);
	ck_assert_uint_eq(i, 2);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(pg_shard_parse("1/1", &i, &n, &err), 0);
	const char *bad[] = { "0/4",  "5/4",  "2",    "a/b",  "2/0",  "-1/3", "",
			      "1/ 2", "+1/2", "01/2", "1/02", "1/2x", "1//2", "/2" };
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		ck_assert_int_eq(pg_shard_parse(bad[k], &i, &n, &err), PG_ECONFIG);
		ck_assert_msg(strstr(err.msg, "expected \"INDEX/COUNT\"") == err.msg, "%s",
			      err.msg);
	}
}
END_TEST

/* latency a, b; serving s1 with 4 qps, s2 with 2 qps x 2 concurrency,
 * s3 with 1 point; throughput t. Points: 1,1,4,4,1,1 = 12. */
static void make_suite(struct pg_suite *s)
{
	/* clang-format off */
	static const struct {
		enum pg_suite_kind kind;
		const char *name;
		size_t n_qps, n_conc;
	} tests[] = {
		{ PG_SUITE_LATENCY, "latency_a", 0, 0 },   { PG_SUITE_LATENCY, "latency_b", 0, 0 },
		{ PG_SUITE_SERVING, "serving_s1", 4, 0 },  { PG_SUITE_SERVING, "serving_s2", 2, 2 },
		{ PG_SUITE_SERVING, "serving_s3", 1, 0 },  { PG_SUITE_THROUGHPUT, "throughput_t", 0, 0 },
	};
	/* clang-format on */
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		struct pg_test t;
		pg_test_init(&t, tests[i].kind);
		t.name = strdup(tests[i].name);
		t.model = strdup("m");
		if (tests[i].n_qps) {
			free(t.qps);
			t.qps = calloc(tests[i].n_qps, sizeof(double));
			for (size_t q = 0; q < tests[i].n_qps; q++)
				t.qps[q] = q + 1 == tests[i].n_qps ? INFINITY : (double)(q + 1);
			t.n_qps = tests[i].n_qps;
		}
		if (tests[i].n_conc) {
			free(t.max_concurrency);
			t.max_concurrency = calloc(tests[i].n_conc, sizeof(long));
			for (size_t c = 0; c < tests[i].n_conc; c++)
				t.max_concurrency[c] = (long)(c + 1) * 8;
			t.n_max_concurrency = tests[i].n_conc;
		}
		pg_suite_add(s, &t);
	}
}

static char *joined(const struct pg_strv *v)
{
	struct pg_buf b = PG_BUF_INIT;
	for (size_t i = 0; i < v->n; i++)
		pg_buf_printf(&b, "%s%s", i ? "," : "", v->v[i]);
	return pg_buf_detach(&b);
}

START_TEST(shards_split_evenly_and_cover_every_test_once)
{
	struct pg_suite s;
	const char *want3[] = { "serving_s1", "serving_s2",
				"latency_a,latency_b,serving_s3,throughput_t" };

	make_suite(&s);
	/* largest first: s1(4) -> 1, s2(4) -> 2, then the ones go to 3 until
	 * it reaches 4, then round the least loaded */
	for (size_t i = 1; i <= 3; i++) {
		struct pg_strv v = PG_STRV_INIT;
		char *j;
		pg_shard_tests(&v, &s, i, 3);
		j = joined(&v);
		ck_assert_str_eq(j, want3[i - 1]);
		free(j);
		pg_strv_release(&v);
	}
	/* every shard count: each test exactly once, loads within one test */
	for (size_t n = 1; n <= 6; n++) {
		size_t seen[6] = { 0 };
		for (size_t i = 1; i <= n; i++) {
			struct pg_strv v = PG_STRV_INIT;
			pg_shard_tests(&v, &s, i, n);
			ck_assert_uint_ge(v.n, 1);
			for (size_t k = 0; k < v.n; k++)
				for (size_t t = 0; t < s.n_tests; t++)
					if (!strcmp(v.v[k], s.tests[t].name))
						seen[t]++;
			pg_strv_release(&v);
		}
		for (size_t t = 0; t < s.n_tests; t++)
			ck_assert_uint_eq(seen[t], 1);
	}
	pg_suite_release(&s);
}
END_TEST

START_TEST(yaml_scalars_are_quoted_and_not_interpolated)
{
	json_t *v = json_pack("{s:s,s:[s,i,f,b,n],s:{},s:{s:s}}", "cmd", "echo $HOME \"q\"\n${X}",
			      "list", "a: b # c", 3, 0.5, 1, "empty", "acme/perfgate#v1.0.0", "k",
			      "v");
	struct pg_buf b = PG_BUF_INIT;

	pg_yaml_write(&b, v, 0);
	ck_assert_str_eq(b.ptr, "cmd: \"echo $$HOME \\\"q\\\"\\n$${X}\"\n"
				"list:\n  - \"a: b # c\"\n  - 3\n  - 0.5\n  - true\n  - ~\n"
				"empty: {}\n"
				"\"acme/perfgate#v1.0.0\":\n  k: \"v\"\n");
	pg_buf_release(&b);
	json_decref(v);
}
END_TEST

START_TEST(golden_pipelines)
{
	struct pg_suite s;
	struct pg_error err = PG_ERROR_INIT;
	const char *gpus[] = { "H100", "A100", "L40S" };
	json_t *opts = json_pack("{s:s,s:s,s:[s]}", "thresholds", "thresholds", "baseline", "git",
				 "only-on-labels", "perf-$ave");
	struct pg_pipeline_spec spec = {
		"acme/perfgate#v1.0.0", ".buildkite/perf.yml", gpus, 3, 1, NULL, NULL, opts
	};
	struct pg_buf b = PG_BUF_INIT;

	make_suite(&s);
	ck_assert_int_eq(pg_pipeline_render(&b, &spec, &s, &err), 0);
	tu_assert_golden("golden/pipelines/one-shard.yml", b.ptr);

	pg_buf_reset(&b);
	spec.n_gpus = 2;
	spec.shards = 3;
	spec.queue = "gpu-{gpu_lower}";
	ck_assert_int_eq(pg_pipeline_render(&b, &spec, &s, &err), 0);
	tu_assert_golden("golden/pipelines/sharded.yml", b.ptr);

	/* what the pipeline decides cannot be set */
	json_object_set_new(opts, "mode", json_string("gate"));
	pg_buf_reset(&b);
	ck_assert_int_eq(pg_pipeline_render(&b, &spec, &s, &err), PG_ECONFIG);
	ck_assert_str_eq(err.msg, "mode: with shards, shard steps run and the merge step gates");
	json_object_del(opts, "mode");
	json_object_set_new(opts, "shard", json_string("1/2"));
	ck_assert_int_eq(pg_pipeline_render(&b, &spec, &s, &err), PG_ECONFIG);
	ck_assert_str_eq(err.msg, "shard: the pipeline sets this option for each step");
	json_object_del(opts, "shard");
	/* options are validated as the plugin will */
	json_object_set_new(opts, "treshold", json_string("t"));
	ck_assert_int_eq(pg_pipeline_render(&b, &spec, &s, &err), PG_ECONFIG);
	ck_assert_str_eq(
		err.msg,
		"step 'perfgate H100 1/3': unknown option 'treshold' (did you mean 'thresholds'?)");
	json_object_del(opts, "treshold");
	spec.shards = 7;
	ck_assert_int_eq(pg_pipeline_render(&b, &spec, &s, &err), PG_ECONFIG);
	ck_assert_str_eq(err.msg, "--shards 7: the suite has 6 tests");

	json_decref(opts);
	pg_buf_release(&b);
	pg_suite_release(&s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bkpipeline");
	TCase *tc = tcase_create("bkpipeline");

	tcase_add_test(tc, shard_text);
	tcase_add_test(tc, interpolation);
	tcase_add_test(tc, matrix_values);
	tcase_add_test(tc, shards_split_evenly_and_cover_every_test_once);
	tcase_add_test(tc, yaml_scalars_are_quoted_and_not_interpolated);
	tcase_add_test(tc, golden_pipelines);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
