/* perfgate import: whole files of every kind, golden outputs, and one
 * precise error (and nothing imported) for every kind of unreadable input. */
#include "testutil.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "import/import.h"
#include "base/jsonw.h"
#include "results/metrics.h"
#include "results/result.h"
#include "base/strutil.h"
#include "import/import_io.h"
#include "sys/fsutil.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Import paths relative to tests/, so golden files do not depend on where
 * the checkout is. */
static void in_tests_dir(void)
{
	ck_assert_int_eq(chdir(tu_env("PERFGATE_TESTS")), 0);
}

static char *dump(const struct pg_result_set *rs)
{
	struct pg_buf b = PG_BUF_INIT;

	for (size_t i = 0; i < rs->n; i++) {
		const struct pg_result *r = &rs->items[i];

		pg_buf_printf(&b, "== %s (%s)\n", r->name, pg_suite_kind_name(r->kind));
		pg_json_write(&b, r->json, 2);
		pg_buf_putc(&b, '\n');
		if (r->commands) {
			pg_buf_puts(&b, "-- commands\n");
			pg_json_write(&b, r->commands, 2);
			pg_buf_putc(&b, '\n');
		}
	}
	return pg_buf_detach(&b);
}

static void import_golden(const char *input, const char *golden, size_t want_n, const char *gpu)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_import_opts opts = { gpu };
	char *text;

	in_tests_dir();
	ck_assert_msg(pg_import_file(&rs, input, &opts, &err) == 0, "%s: %s", input, err.msg);
	ck_assert_uint_eq(rs.n, want_n);
	text = dump(&rs);
	tu_assert_golden(golden, text);
	free(text);
	pg_result_set_release(&rs);
}

START_TEST(llmd_sample)
{
	import_golden("data/reference/llmd-results-sample.json",
		      "golden/import/llmd-results-sample.txt", 2, NULL);
}
END_TEST

START_TEST(printed_sample)
{
	import_golden("data/reference/vllm-bench-serve-stdout-sample.txt",
		      "golden/import/vllm-bench-serve-stdout-sample.txt", 2, "L40S");
}
END_TEST

START_TEST(printed_every_label_variant)
{
	import_golden("data/import/serving-newest.txt", "golden/import/serving-newest.txt", 2,
		      NULL);
}
END_TEST

START_TEST(printed_sglang_crlf)
{
	import_golden("data/import/sglang-crlf.txt", "golden/import/sglang-crlf.txt", 1, NULL);
}
END_TEST

START_TEST(vllm_ci_results_with_sidecars)
{
	import_golden("data/import/serving_llama8B_tp1_sharegpt_qps_4.json",
		      "golden/import/serving_llama8B_tp1_sharegpt_qps_4.txt", 1, NULL);
	import_golden("data/import/latency_llama8B_tp1.json",
		      "golden/import/latency_llama8B_tp1.txt", 1, NULL);
	import_golden("data/import/throughput_llama8B_tp1.json",
		      "golden/import/throughput_llama8B_tp1.txt", 1, NULL);
}
END_TEST

START_TEST(append_result_json_lines)
{
	import_golden("data/import/append.jsonl", "golden/import/append.txt", 3, "H200");
}
END_TEST

START_TEST(records_and_reports)
{
	import_golden("data/import/benchmark_results.json", "golden/import/benchmark_results.txt",
		      3, NULL);
	import_golden("data/import/report-nan.md", "golden/import/report-nan.txt", 2, NULL);
}
END_TEST

/* The one result of text (a file named source). */
static json_t *one_result(struct pg_result_set *rs, const char *text, const char *source)
{
	struct pg_error err = PG_ERROR_INIT;

	ck_assert_msg(pg_import_text(rs, text, strlen(text), source, "s", NULL, NULL, &err) == 0,
		      "%s", err.msg);
	ck_assert_uint_eq(rs->n, 1);
	return rs->items[0].json;
}

static double number_at(const json_t *r, const char *key)
{
	return json_number_value(json_object_get(r, key));
}

/* SGLang's names for E2E latency and total throughput, printed and in its
 * JSON records, are vLLM's keys once imported (labels and keys as SGLang's
 * bench_serving prints and writes them). */
START_TEST(sglang_names_are_vllm_keys)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	const char *printed = "============ Serving Benchmark Result ============\n"
			      "Backend:                                 sglang    \n"
			      "Traffic request rate:                    100.0     \n"
			      "Successful requests:                     100       \n"
			      "Benchmark duration (s):                  45.41     \n"
			      "Request throughput (req/s):              2.20      \n"
			      "Output token throughput (tok/s):         560.82    \n"
			      "Total throughput (tok/s):                1448.66   \n"
			      "----------------End-to-End Latency----------------\n"
			      "Mean E2E Latency (ms):                   1974.12   \n"
			      "Median E2E Latency (ms):                 443.87    \n"
			      "==================================================\n";
	const char *record =
		"{\"backend\": \"sglang\", \"request_rate\": 5.0, \"completed\": 1000, "
		"\"request_throughput\": 4.88, \"total_throughput\": 2434.2, "
		"\"mean_e2e_latency_ms\": 2409.5, \"median_e2e_latency_ms\": 1537.9, "
		"\"p99_e2e_latency_ms\": 9813.9, \"mean_ttft_ms\": 91.7}";
	json_t *r = one_result(&rs, printed, "s.log");

	ck_assert_double_eq(number_at(r, "total_token_throughput"), 1448.66);
	ck_assert_double_eq(number_at(r, "mean_e2el_ms"), 1974.12);
	ck_assert_ptr_null(pg_json_path(r, "perfgate.import.unparsed"));
	pg_result_set_release(&rs);

	r = one_result(&rs, record, "s.json");
	ck_assert_double_eq(number_at(r, "total_token_throughput"), 2434.2);
	ck_assert_double_eq(number_at(r, "median_e2el_ms"), 1537.9);
	ck_assert_double_eq(number_at(r, "p99_e2el_ms"), 9813.9);
	ck_assert_ptr_null(json_object_get(r, "mean_e2e_latency_ms"));
	ck_assert_ptr_null(json_object_get(r, "total_throughput"));
	ck_assert_str_eq(json_string_value(pg_json_path(r, "perfgate.import.format")),
			 "sglang-serve");
	ck_assert_str_eq(
		json_string_value(pg_json_path(r, "perfgate.import.renamed.total_throughput")),
		"total_token_throughput");
	pg_result_set_release(&rs);
}
END_TEST

/* A real file perfgate recognises and refuses: exactly one line. */
static void import_refused(const char *input, const char *message)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	struct pg_error err = PG_ERROR_INIT;

	in_tests_dir();
	ck_assert_int_eq(pg_import_file(&rs, input, NULL, &err), PG_ECONFIG);
	ck_assert_str_eq(err.msg, message);
	ck_assert_uint_eq(rs.n, 0);
	pg_result_set_release(&rs);
}

/* Real files of formats perfgate names but does not read. */
START_TEST(real_files_refused)
{
	/* llm-d's report v0.1 keeps its numbers under metrics: */
	import_refused("data/import/real/benchmark_report,_br_v0_1_example.yaml",
		       "data/import/real/benchmark_report,_br_v0_1_example.yaml:1:1: llm-d "
		       "benchmark report version 0.1: perfgate reads version 0.2; import the "
		       "benchmark_report_v0.2,_*.yaml beside it or the result file it was made "
		       "from (benchmark-report -b 0.2 converts it)");
	/* an inference-perf report is a result of another format */
	import_refused(
		"data/import/real/inference_perf_stage_lifecycle_metrics.json",
		"data/import/real/inference_perf_stage_lifecycle_metrics.json:1:1: record 1: "
		"an inference-perf report, which perfgate does not import yet; import "
		"llm-d's benchmark_report_v0.2 made from it (benchmark-report -w "
		"inference-perf -b 0.2)");
}
END_TEST

/* Whole real files of every kind (origins: data/import/real/README.md). */
START_TEST(real_files)
{
	/* a job log: printed blocks and RESULT_START records of the same runs */
	import_golden("data/import/real/llmd-bench-automation-readme.md",
		      "golden/import/llmd-bench-automation-readme.txt", 2, NULL);
	/* printed blocks under "# " */
	import_golden("data/import/real/pp_local_test_res.sh",
		      "golden/import/pp_local_test_res.txt", 2, "8xH100");
	/* printed blocks under a timestamp */
	import_golden("data/import/real/ts-prefixed-serve.log",
		      "golden/import/ts-prefixed-serve.txt", 1, NULL);
	/* AIPerf's export after two lines of noise */
	import_golden("data/import/real/aiperf-0.10.0-stdout.txt",
		      "golden/import/aiperf-0.10.0-stdout.txt", 1, NULL);
	/* GenAI-Perf exports in a Markdown page's ```json blocks */
	import_golden("data/import/real/genai-perf-issue-298.md",
		      "golden/import/genai-perf-issue-298.txt", 2, NULL);
	/* SGLang bench_serving's JSON lines: E2E latency under vLLM's names */
	import_golden("data/import/real/sglang-llama_3_3_70b_online_output.jsonl",
		      "golden/import/sglang-llama_3_3_70b_online_output.txt", 7, NULL);
	/* GuideLLM 0.3 (report schema v1): counts beside metrics, the model
	 * under worker */
	import_golden("data/import/real/guidellm-0.3-benchmarks_stripped.json",
		      "golden/import/guidellm-0.3-benchmarks_stripped.txt", 1, NULL);
	/* GuideLLM report schema v2: one point per benchmark */
	import_golden("data/import/real/guidellm_report_v2.json",
		      "golden/import/guidellm_report_v2.txt", 2, NULL);
	/* llm-d benchmark report v0.2, YAML */
	import_golden("data/import/real/benchmark_report_v0.2,_br_v0_2_example.yaml",
		      "golden/import/llmd-benchmark-report-v0.2.txt", 1, NULL);
}
END_TEST

/* Every result file of a tree, as perfgate import walks it. */
static void import_tree(struct pg_result_set *rs, struct pg_strv *notes, const char *dir,
			const struct pg_import_opts *opts)
{
	struct pg_error err = PG_ERROR_INIT;
	struct pg_strv files = PG_STRV_INIT;
	char *args[] = { (char *)dir };

	in_tests_dir();
	ck_assert_int_eq(pg_import_inputs(&files, notes, args, 1, &err), 0);
	for (size_t i = 0; i < files.n; i++)
		ck_assert_msg(pg_import_file(rs, files.v[i], opts, &err) == 0, "%s", err.msg);
	pg_strv_release(&files);
}

/* A results tree <experiment>/<GPU>/<deployment>/: what the path says goes
 * to the records that lack it, and says so. */
START_TEST(tree_labels_from_path)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_strv files = PG_STRV_INIT, notes = PG_STRV_INIT;
	struct pg_import_opts opts = { 0 };
	char *args[] = { "data/import/tree" };
	char *text;

	in_tests_dir();
	opts.labels_from_path = 1;
	ck_assert_int_eq(pg_import_inputs(&files, &notes, args, 1, &err), 0);
	ck_assert_uint_eq(files.n, 2);
	for (size_t i = 0; i < files.n; i++)
		ck_assert_msg(pg_import_file(&rs, files.v[i], &opts, &err) == 0, "%s", err.msg);
	text = dump(&rs);
	tu_assert_golden("golden/import/tree.txt", text);
	free(text);
	/* the first file holds neither GPU nor deployment, the second both */
	ck_assert_str_eq(
		json_string_value(pg_json_path(rs.items[0].json, "perfgate.import.inferred.gpu")),
		"L40S");
	ck_assert_ptr_null(pg_json_path(rs.items[1].json, "perfgate.import.inferred.gpu"));
	ck_assert_str_eq(json_string_value(pg_json_path(rs.items[1].json,
							"perfgate.import.inferred.experiment")),
			 "llmd-sweep");
	ck_assert_str_eq(rs.items[0].name, "serving_Llama-3.1-8B-Instruct_no-features_qps_5");
	pg_strv_release(&files);
	pg_strv_release(&notes);
	pg_result_set_release(&rs);
}
END_TEST

START_TEST(path_labels)
{
	/* clang-format off */
	static const struct {
		const char *path, *experiment, *gpu, *deployment;
	} cases[] = {
		{ "exp/L40S/no-features/benchmark_1.json", "exp", "L40S", "no-features" },
		{ "/r/sweep/8xH100/pd/x/r.json", "sweep", "8xH100", "x" },
		{ "runs/H200/r.json", "runs", "H200", "" },
		{ "NVIDIA_A100-SXM4-80GB/base/r.json", "", "NVIDIA_A100-SXM4-80GB", "base" },
		{ "a/MI300X/b/r.json", "a", "MI300X", "b" },
		{ "results/run10/v1/r.json", "", "", "" },
		{ "r.json", "", "", "" },
		{ "../L4/r.json", "", "L4", "" },
	};
	/* clang-format on */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pg_path_labels l;

		pg_import_path_labels(cases[i].path, &l);
		ck_assert_msg(!strcmp(l.experiment, cases[i].experiment) &&
				      !strcmp(l.gpu, cases[i].gpu) &&
				      !strcmp(l.deployment, cases[i].deployment),
			      "%s: '%s' '%s' '%s'", cases[i].path, l.experiment, l.gpu,
			      l.deployment);
	}
}
END_TEST

static struct pg_result_set import_ok(const char *text, size_t want_n)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	struct pg_error err = PG_ERROR_INIT;

	ck_assert_msg(pg_import_text(&rs, text, strlen(text), "t.txt", "t", NULL, NULL, &err) == 0,
		      "%s", err.msg);
	ck_assert_uint_eq(rs.n, want_n);
	return rs;
}

static double num_at(const struct pg_result *r, const char *key)
{
	json_t *v = pg_json_path(r->json, key);

	ck_assert_msg(json_is_number(v), "%s: not a number", key);
	return json_number_value(v);
}

/* JSON inside text: a Jekyll page's highlight block, prose around it with
 * braces and quotes of its own, a log that starts with "[timestamp]". */
START_TEST(json_inside_text)
{
	struct pg_result_set rs;

	rs = import_ok("---\nlayout: post\ntitle: \"Our {fast} run\n---\n"
		       "We ran it (see [the docs](x)) and got:\n\n"
		       "{% highlight json %}\n"
		       "{\n  \"completed\": 10, \"request_rate\": 4.0, \"max_concurrency\": null,\n"
		       "  \"request_throughput\": 3.9999, \"mean_ttft_ms\": NaN\n}\n"
		       "{% endhighlight %}\n"
		       "and a config, which is no result: {\"seed\": 0}\n"
		       "[1, 2] and the first brace of the line: {\"completed\": 3}\n",
		       2);
	ck_assert_str_eq(rs.items[0].name, "t_1_qps_4");
	ck_assert_double_eq(num_at(&rs.items[0], "request_throughput"), 3.9999);
	ck_assert_int_eq(num_at(&rs.items[1], "completed"), 3);
	ck_assert(json_is_null(json_object_get(rs.items[0].json, "mean_ttft_ms")));
	ck_assert_int_eq(num_at(&rs.items[0], "perfgate.import.line"), 8);
	pg_result_set_release(&rs);

	/* a job log whose lines start with a timestamp in brackets */
	rs = import_ok("[2025-06-01 10:00:00] starting\n"
		       "[2025-06-01 10:00:09] {\"completed\": 3, \"request_throughput\": 1.5}\n"
		       "[2025-06-01 10:00:10] {\"completed\": 4, \"request_throughput\": 2.5}\n",
		       2);
	ck_assert_int_eq(num_at(&rs.items[1], "completed"), 4);
	pg_result_set_release(&rs);
}
END_TEST

/* Printed blocks under a logger's prefix, interleaved with other lines. */
START_TEST(printed_under_a_prefix)
{
	struct pg_result_set rs = import_ok(
		"INFO 06-01 10:00:01 [serve.py:88] Traffic request rate: 4.0\n"
		"INFO 06-01 10:00:01 [serve.py:88] Maximum request concurrency: 8\n"
		"INFO 06-01 10:01:07 [serve.py:90] ============ Serving Benchmark "
		"Result ============\n"
		"INFO 06-01 10:01:07 [serve.py:91] Successful requests:         40\n"
		"WARNING 06-01 10:01:07 [engine.py:12] a line of another logger\n"
		"INFO 06-01 10:01:07 [serve.py:92] Benchmark duration (s):      9.87\n"
		"INFO 06-01 10:01:07 [serve.py:93] Mean TTFT (ms):              12.50\n"
		"INFO 06-01 10:01:07 [serve.py:94] "
		"==================================================\n",
		1);

	ck_assert_str_eq(rs.items[0].name, "t");
	ck_assert_int_eq(num_at(&rs.items[0], "completed"), 40);
	ck_assert_double_eq(num_at(&rs.items[0], "duration"), 9.87);
	ck_assert_double_eq(num_at(&rs.items[0], "request_rate"), 4.0);
	ck_assert_int_eq(num_at(&rs.items[0], "max_concurrency"), 8);
	pg_result_set_release(&rs);
}
END_TEST

/* A job log with both the printed block and the JSON record of a run gives
 * the record; a printed block of another run stays. */
START_TEST(full_precision_wins)
{
	struct pg_result_set rs = import_ok(
		"============ Serving Benchmark Result ============\n"
		"Successful requests:                     100\n"
		"Benchmark duration (s):                  20.92\n"
		"Request throughput (req/s):              4.78\n"
		"Mean TTFT (ms):                          902.25\n"
		"==================================================\n"
		"============ Serving Benchmark Result ============\n"
		"Successful requests:                     100\n"
		"Benchmark duration (s):                  30.00\n"
		"==================================================\n"
		"$ cat result.json\n"
		"{\"completed\": 100, \"duration\": 20.918269691, \"request_throughput\": "
		"4.7804, \"mean_ttft_ms\": 902.2549, \"request_rate\": \"inf\"}\n",
		2);

	/* in file order: the other run's block (line 7), then the record */
	ck_assert_str_eq(
		json_string_value(pg_json_path(rs.items[0].json, "perfgate.import.format")),
		"printed");
	ck_assert_double_eq(num_at(&rs.items[0], "duration"), 30.0);
	ck_assert_double_eq(num_at(&rs.items[1], "duration"), 20.918269691);
	ck_assert_int_eq(num_at(&rs.items[1], "perfgate.import.printed_line"), 1);
	ck_assert_int_eq(num_at(&rs.items[1], "perfgate.import.record"), 2);
	pg_result_set_release(&rs);
}
END_TEST

/* GuideLLM's report schema v1 (<= 0.6): strategy under args, times under
 * run_stats; closed loops are rate inf with their width. */
START_TEST(guidellm_v1_and_strategies)
{
	struct pg_result_set rs = import_ok(
		"{\"args\": {\"model\": \"m\", \"profile\": \"sweep\"}, \"benchmarks\": ["
		"{\"type_\": \"generative_benchmark\", \"args\": {\"strategy\": {\"type_\": "
		"\"synchronous\"}}, \"run_stats\": {\"start_time\": 10.0, \"end_time\": 12.5},"
		" \"metrics\": {\"request_totals\": {\"successful\": 5, \"errored\": 1, "
		"\"incomplete\": 0, \"total\": 6}, \"request_latency\": {\"successful\": "
		"{\"mean\": 0.5, \"median\": 0.4, \"std_dev\": 0.1, \"percentiles\": {\"p99\": "
		"0.9, \"p999\": 0.95}}}}},"
		"{\"type_\": \"generative_benchmark\", \"config\": {\"strategy\": {\"type_\": "
		"\"concurrent\", \"streams\": 16}}, \"duration\": 3.0, \"metrics\": {}},"
		"{\"type_\": \"generative_benchmark\", \"config\": {\"strategy\": {\"type_\": "
		"\"poisson\", \"rate\": 2.5}}, \"duration\": 3.0, \"metrics\": {}}]}",
		3);

	ck_assert_str_eq(rs.items[0].name, "t_qps_inf_concurrency_1");
	ck_assert_str_eq(rs.items[1].name, "t_qps_inf_concurrency_16");
	ck_assert_str_eq(rs.items[2].name, "t_qps_2.5");
	ck_assert_double_eq(num_at(&rs.items[0], "duration"), 2.5);
	ck_assert_int_eq(num_at(&rs.items[0], "failed"), 1);
	ck_assert_int_eq(num_at(&rs.items[0], "num_prompts"), 6);
	ck_assert_double_eq(num_at(&rs.items[0], "mean_e2el_ms"), 500);
	/* (a dotted key: not through num_at's path) */
	ck_assert_double_eq(json_real_value(json_object_get(rs.items[0].json, "p99.9_e2el_ms")),
			    950);
	ck_assert_str_eq(json_string_value(json_object_get(rs.items[0].json, "model_id")), "m");
	ck_assert_double_eq(num_at(&rs.items[2], "burstiness"), 1.0);
	pg_result_set_release(&rs);
}
END_TEST

/* AIPerf with its input_config: concurrency and rate; times in any unit. */
START_TEST(aiperf_load_and_units)
{
	struct pg_result_set rs = import_ok(
		"{\"aiperf_version\": \"0.8.0\", \"request_count\": {\"unit\": \"requests\", "
		"\"avg\": 336.0}, \"error_request_count\": {\"unit\": \"requests\", \"avg\": 4.0}, "
		"\"request_latency\": {\"unit\": \"sec\", \"avg\": 6.13049, \"p50\": 4.80869, "
		"\"p99\": 27.01514, \"std\": 4.99871}, \"benchmark_duration\": {\"unit\": \"sec\", "
		"\"avg\": 3605.47}, \"input_config\": {\"endpoint\": {\"model_names\": [\"q\"]}, "
		"\"loadgen\": {\"concurrency\": 32}}}",
		1);

	ck_assert_str_eq(rs.items[0].name, "t");
	ck_assert_int_eq(num_at(&rs.items[0], "completed"), 336);
	ck_assert_int_eq(num_at(&rs.items[0], "failed"), 4);
	ck_assert_int_eq(num_at(&rs.items[0], "num_prompts"), 340);
	ck_assert_int_eq(num_at(&rs.items[0], "max_concurrency"), 32);
	ck_assert_str_eq(json_string_value(json_object_get(rs.items[0].json, "request_rate")),
			 "inf");
	ck_assert_double_eq_tol(num_at(&rs.items[0], "median_e2el_ms"), 4808.69, 1e-9);
	ck_assert_str_eq(
		json_string_value(pg_json_path(rs.items[0].json, "perfgate.import.format")),
		"aiperf");
	pg_result_set_release(&rs);
}
END_TEST

/* Every value of an llm-d record arrives unchanged (full precision, same
 * order), except the colon typo. */
START_TEST(values_are_kept_exactly)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	struct pg_error err = PG_ERROR_INIT;
	char *path = tu_test_path("data/reference/llmd-results-sample.json");
	char *text = tu_read_file(path, NULL);
	json_error_t jerr;
	json_t *src = json_loadb(text, strlen(text), JSON_DISABLE_EOF_CHECK, &jerr);
	const char *key;
	json_t *v;
	void *it;

	ck_assert_ptr_nonnull(src);
	ck_assert_int_eq(pg_import_file(&rs, path, NULL, &err), 0);
	it = json_object_iter(rs.items[0].json);
	json_object_foreach(src, key, v)
	{
		const char *want_key = strcmp(key, "request_goodput:") ? key : "request_goodput";
		ck_assert_str_eq(json_object_iter_key(it), want_key);
		ck_assert_msg(json_equal(json_object_iter_value(it), v), "%s differs", key);
		it = json_object_iter_next(rs.items[0].json, it);
	}
	ck_assert_str_eq(json_object_iter_key(it), "perfgate");
	json_decref(src);
	free(text);
	free(path);
	pg_result_set_release(&rs);
}
END_TEST

static const char *llmd_record(struct pg_buf *b, int i, const char *rate)
{
	pg_buf_printf(
		b,
		"{\"date\": \"20250526-0404%02d\", \"backend\": \"vllm\", \"model_id\": \"m\", "
		"\"num_prompts\": %d, \"gpu\": \"4xNVIDIA_L40S\", \"decode_replicas\": \"4\", "
		"\"request_rate\": %s, \"max_concurrency\": null, \"completed\": %d, "
		"\"request_throughput\": %d.25, \"request_goodput:\": null, \"mean_ttft_ms\": %d.5}",
		i % 60, 10 * i, rate, 10 * i, i, i);
	return b->ptr;
}

/* llm-d writes objects back to back, or one per line; any spacing. */
START_TEST(many_records_any_separator)
{
	static const char *const seps[] = { "", "\n", "\r\n", "\n\n  \t\n" };

	for (size_t s = 0; s < sizeof(seps) / sizeof(seps[0]); s++) {
		struct pg_result_set rs = PG_RESULT_SET_INIT;
		struct pg_error err = PG_ERROR_INIT;
		struct pg_buf text = PG_BUF_INIT;
		char want[64];

		for (int i = 1; i <= 120; i++) {
			llmd_record(&text, i, i % 3 ? "5.0" : "\"inf\"");
			pg_buf_puts(&text, seps[s]);
		}
		ck_assert_msg(pg_import_text(&rs, text.ptr, text.len, "runs.json", "runs", NULL,
					     NULL, &err) == 0,
			      "%s", err.msg);
		ck_assert_uint_eq(rs.n, 120);
		ck_assert_str_eq(rs.items[0].name, "runs_001_qps_5");
		ck_assert_str_eq(rs.items[2].name, "runs_003_qps_inf");
		snprintf(want, sizeof(want), "runs_120_qps_inf");
		ck_assert_str_eq(rs.items[119].name, want);
		ck_assert_str_eq(
			json_string_value(pg_json_path(rs.items[119].json, "perfgate.gpu.key")),
			"L40S");
		ck_assert_int_eq(json_integer_value(pg_json_path(rs.items[119].json,
								 "perfgate.import.record")),
				 120);
		ck_assert_int_eq(json_integer_value(
					 pg_json_path(rs.items[119].json, "perfgate.import.line")),
				 s == 0   ? 1
				 : s == 3 ? 1 + 119 * 3
					  : 120);
		ck_assert_ptr_null(json_object_get(rs.items[5].json, "request_goodput:"));
		ck_assert(json_is_null(json_object_get(rs.items[5].json, "request_goodput")));
		pg_buf_release(&text);
		pg_result_set_release(&rs);
	}
}
END_TEST

/* Any number of printed blocks with anything between them. */
START_TEST(many_printed_blocks)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_buf text = PG_BUF_INIT;

	for (int i = 1; i <= 25; i++) {
		pg_buf_printf(&text, "note %d: num_prompts=%d, seq: 80\n\n", i, i);
		if (i % 2)
			pg_buf_printf(
				&text,
				"Traffic request rate: %d\nMaximum request concurrency: None\n", i);
		pg_buf_printf(&text,
			      "============ Serving Benchmark Result ============\n"
			      "Successful requests:                     %-10d\n"
			      "Benchmark duration (s):                  %-10.2f\n"
			      "Request throughput (req/s):              %-10.2f\n"
			      "%s (tok/s):         %-10.2f\n"
			      "---------------Time to First Token----------------\n"
			      "Mean TTFT (ms):                          %-10.2f\n"
			      "==================================================\n",
			      i, i * 1.5, i / 3.0,
			      i % 2 ? "Total Token throughput" : "Total token throughput", i * 7.0,
			      300.0 + i);
	}
	ck_assert_msg(pg_import_text(&rs, text.ptr, text.len, "log.txt", "log", NULL, NULL, &err) ==
			      0,
		      "%s", err.msg);
	ck_assert_uint_eq(rs.n, 25);
	ck_assert_str_eq(rs.items[0].name, "log_01_qps_1");
	ck_assert_str_eq(rs.items[1].name, "log_02");
	ck_assert_str_eq(rs.items[24].name, "log_25_qps_25");
	for (int i = 0; i < 25; i++) {
		double tput;
		const struct pg_metric *m = pg_metric_by_id(PG_SUITE_SERVING,
							    "total_token_throughput");
		ck_assert_int_eq(pg_metric_value(m, rs.items[i].json, &tput), 0);
		ck_assert_double_eq_tol(tput, (i + 1) * 7.0, 1e-9);
		ck_assert_int_eq(json_integer_value(json_object_get(rs.items[i].json, "completed")),
				 i + 1);
	}
	pg_buf_release(&text);
	pg_result_set_release(&rs);
}
END_TEST

START_TEST(detects_formats)
{
	/* clang-format off */
	static const struct {
		const char *text;
		enum pg_import_format want;
	} cases[] = {
		{ "{\"a\": 1}", PG_IMPORT_JSON },
		{ "\xEF\xBB\xBF  \n[{}]", PG_IMPORT_JSON },
		{ "## Serving tests\n```json\n{\"latency\": {}}\n```", PG_IMPORT_REPORT },
		{ "x\n{\n  \"latency\": {}}", PG_IMPORT_REPORT },
		{ "==== Serving Benchmark Result ====\n", PG_IMPORT_PRINTED },
		{ "hello", PG_IMPORT_UNKNOWN },
		{ "", PG_IMPORT_UNKNOWN },
	};
	/* clang-format on */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_int_eq(pg_import_detect(cases[i].text, strlen(cases[i].text)),
				 cases[i].want);
}
END_TEST

/* Unreadable input: one line naming the file and position, PG_ECONFIG,
 * and nothing appended. */
/* clang-format off */
static const struct {
	const char *text;
	const char *message;
} bad_inputs[] = {
	{ "", "in.json: not a format perfgate imports" },
	{ "just some text\n", "in.json: not a format perfgate imports" },
	{ "{\"completed\": 1, \"request_throughput\": 2}\n{\"completed\": 1, \"request_throughput\": }",
	  "in.json:2:40: record 2: unexpected token near '}'" },
	{ "{\"completed\": 1, \"request_throughput\": NaN}\n{\"completed\": 1,\n \"request_throughput\": 2,, }",
	  "in.json:3:26: record 2: string or '}' expected near ','" },
	{ "{\"completed\": 1, \"request_throughput\": 2}\n{\"completed\": 1, \"request_throughput\": 2",
	  "in.json:2:40: record 2: '}' expected near end of file" },
	{ "{\"completed\": 1, \"request_throughput\": 2} 42", "in.json:1:43: record 2: expected a JSON object, got '4'" },
	{ "{\"completed\": 1, \"request_throughput\": \"fast\"}",
	  "in.json:1:1: record 1: 'request_throughput' must be a number, got a string" },
	{ "{\"completed\": 1, \"request_rate\": \"fast\"}",
	  "in.json:1:1: record 1: 'request_rate' must be a number or \"inf\", got fast" },
	{ "{\"completed\": 1, \"max_concurrency\": \"16\"}",
	  "in.json:1:1: record 1: 'max_concurrency' must be an integer or null, got a string" },
	{ "{\"avg_latency\": 1.0, \"percentiles\": [1, 2]}",
	  "in.json:1:1: record 1: 'percentiles' must be an object, got an array" },
	{ "\n\n  {\"hello\": \"world\"}", "in.json:3:3: record 1: not a benchmark result" },
	{ "[{\"completed\": 1}, 7]", "in.json:1:1: record 2: expected a JSON object, got a number" },
	{ "[{\"benchmark\": {\"name\": \"vLLM benchmark\"}, \"model\": {}, \"metric\": {}}]",
	  "in.json:1:1: record 1: a PyTorch benchmark-database record" },
	{ "[{\"Test name\": \"serving_x_qps_1\", \"Mean TTFT (ms)\": \"slow\"}]",
	  "in.json:1:1: record 1 ('serving_x_qps_1'): 'Mean TTFT (ms)' must be a number, got slow" },
	{ "[{\"Test name\": 3}]", "in.json:1:1: record 1: 'Test name' must be a non-empty string" },
	{ "[{\"Test name\": \"x\", \"Foo\": 1}]", "in.json:1:1: record 1 ('x'): cannot tell the suite from its columns" },
	{ "{\"latency\": {}, \"serving\": {\"GPU\": {\"0\": \"H100\"}}}",
	  "in.json:1:1: report 1, serving: no 'Test name' column" },
	{ "{\"latency\": {}, \"serving\": {\"Test name\": {\"0\": \"a\"}, \"GPU\": \"H100\"}}",
	  "in.json:1:1: report 1, serving: column 'GPU' must be an object" },
	{ "{\"serving\": {\"Test name\": {\"0\": \"a\"}, \"Tput (req/s)\": {\"0\": 1, \"1\": 2}}}",
	  "in.json:1:1: report 1, serving: column 'Tput (req/s)' has rows that 'Test name' lacks" },
	{ "# report\n\n```json\n{\"latency\": {}, \"throughput\": {}, \"serving\": {\"Test name\": {\"0\": \"a\"},\n"
	  "\"GPU\": {\"0\": \"H100\"}, \"Tput (req/s)\": {\"0\": 1.5}, \"P99 ITL (ms)\": {\"0\": [1]}}}\n```\n",
	  "in.json:4:1: report 1, serving row 0 ('a'): 'P99 ITL (ms)' must be a number, got another type" },
	{ "# report\n\n```json\n{\"latency\": {}, \"throughput\": {}, \"serving\": {\"Test name\": {\"0\": \"a\", NaN}}}\n```\n",
	  "in.json:4:73: report 1: JSON section: string or '}' expected near 'null'" },
	{ "# report\n\n```json\n{\"latency\": {}, \"throughput\": {}, \"serving\": {\"Test name\": {\"0\": \"a\"}\n```\n",
	  "in.json:5:1: report 1: JSON section: '}' expected near '`'" },
	{ "============ Serving Benchmark Result ============\nSuccessful requests: 1\n",
	  "in.json:1:1: block 1: the Serving Benchmark Result block is not closed" },
	{ "notes\n============ Serving Benchmark Result ============\nSuccessful requests: 1\n"
	  "Benchmark duration (s):   4.5x\n==========\n",
	  "in.json:4:27: block 1: 'Benchmark duration (s)': expected a number, got '4.5x'" },
	{ "============ Serving Benchmark Result ============\nSuccessful requests: 1\n"
	  "Mean TTFT (ms):  fast\n==========\n",
	  "in.json:3:18: block 1: 'Mean TTFT (ms)': expected a number, got 'fast'" },
	{ "============ Serving Benchmark Result ============\nSuccessful requests: 1\n"
	  "INFO this line is a log line without a colon in its place\n==========\n",
	  "in.json:3:1: block 1: expected 'label: value', got 'INFO this line" },
	{ "============ Serving Benchmark Result ============\nBenchmark duration (s): 1\n==========\n",
	  "in.json:1:1: block 1: no 'Successful requests' row" },
	{ "============ Serving Benchmark Result ============\nSuccessful requests: 1\n"
	  "============ Serving Benchmark Result ============\n",
	  "in.json:3:1: block 1: a new Serving Benchmark Result block starts before this one (line 1)" },
	{ "============ Serving Benchmark Result ============\nSuccessful requests: 1\n==========\n"
	  "============ Serving Benchmark Result ============\nSuccessful requests: many\n==========\n",
	  "in.json:5:22: block 2: 'Successful requests': expected a number, got 'many'" },
	{ "# ============ Serving Benchmark Result ============\n# Successful requests: 1\n",
	  "in.json:1:1: block 1: the Serving Benchmark Result block is not closed" },
	{ "{\"version\": \"0.1\", \"results\": {}, \"scenario\": {}}",
	  "in.json:1:1: llm-d benchmark report version 0.1: perfgate reads version 0.2" },
	{ "{\"version\": \"0.2\", \"results\": {\"request_performance\": {\"aggregate\": {\"latency\": "
	  "{\"time_to_first_token\": {\"units\": \"tokens/s\", \"mean\": 1}}}}}, \"scenario\": {}}",
	  "in.json:1:1: llm-d benchmark report: latency.time_to_first_token: units 'tokens/s' is not a time unit" },
	{ "{\"version\": \"0.2\", \"results\": {}, \"scenario\": {}}",
	  "in.json:1:1: llm-d benchmark report: no results.request_performance.aggregate" },
	{ "{\"time_to_first_token\": {\"unit\": \"tokens\", \"avg\": 3}}",
	  "in.json:1:1: time_to_first_token: unit 'tokens' is not a time unit" },
	{ "notes\n\n{\"benchmarks\": [{\"type_\": \"generative_benchmark\", \"metrics\": {}}, 3]}",
	  "in.json:3:1: GuideLLM report: benchmark 2 has no 'metrics' object" },
	{ "[2025-06-01 10:00:00] starting, no results here\n",
	  "in.json:1:7: record 1: " },
};
/* clang-format on */

START_TEST(bad_input_is_one_precise_error)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	struct pg_error err = PG_ERROR_INIT;
	const char *good = "{\"completed\": 1, \"request_throughput\": 2}";

	ck_assert_int_eq(pg_import_text(&rs, good, strlen(good), "ok.json", "ok", NULL, NULL, &err),
			 0);
	ck_assert_uint_eq(rs.n, 1);
	for (size_t i = 0; i < sizeof(bad_inputs) / sizeof(bad_inputs[0]); i++) {
		const char *t = bad_inputs[i].text;
		int rc;

		pg_error_clear(&err);
		rc = pg_import_text(&rs, t, strlen(t), "in.json", "in", NULL, NULL, &err);
		ck_assert_msg(rc == PG_ECONFIG, "case %zu: rc %d", i, rc);
		ck_assert_msg(pg_str_has_prefix(err.msg, bad_inputs[i].message),
			      "case %zu:\n got: %s\nwant: %s", i, err.msg, bad_inputs[i].message);
		ck_assert_msg(!strchr(err.msg, '\n'), "case %zu: message has a newline", i);
		ck_assert_uint_eq(rs.n, 1);
	}
	pg_result_set_release(&rs);
}
END_TEST

/* Inputs a fuzzer found, each handed over in a buffer of exactly its
 * length (no NUL after it), so the sanitizer build sees any read past it. */
/* clang-format off */
static const char *const fuzz_findings[] = {
	/* heap-buffer-overflow in stat_key: a "(ms)" label with no name */
	"Max (ms):Serving Benchmark Result",
	"Max (ms): 3",
	"============ Serving Benchmark Result ============\nMax (ms): 1",
	"============ Serving Benchmark Result ============\nSuccessful requests: 1",
	"Traffic request rate: 4",
	"{\"completed\": 1",
};
/* clang-format on */

START_TEST(fuzz_findings_are_harmless)
{
	for (size_t i = 0; i < sizeof(fuzz_findings) / sizeof(fuzz_findings[0]); i++) {
		struct pg_result_set rs = PG_RESULT_SET_INIT;
		struct pg_error err = PG_ERROR_INIT;
		size_t len = strlen(fuzz_findings[i]);
		char *exact = malloc(len);
		int rc;

		ck_assert_ptr_nonnull(exact);
		memcpy(exact, fuzz_findings[i], len);
		rc = pg_import_text(&rs, exact, len, "f.txt", "f", NULL, NULL, &err);
		ck_assert_msg(rc == PG_ECONFIG, "case %zu: rc %d", i, rc);
		ck_assert_msg(pg_str_has_prefix(err.msg, "f.txt"), "case %zu: %s", i, err.msg);
		ck_assert_uint_eq(rs.n, 0);
		free(exact);
		pg_result_set_release(&rs);
	}
}
END_TEST

START_TEST(files_and_sidecars)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	struct pg_error err = PG_ERROR_INIT;
	char *dir = tu_mkdtemp();
	char path[4096];

	snprintf(path, sizeof(path), "%s/nothing.json", dir);
	ck_assert_int_eq(pg_import_file(&rs, path, NULL, &err), PG_ENOTFOUND);

	snprintf(path, sizeof(path), "%s/x_qps_1.commands", dir);
	tu_write_file(path, "{\"gpu_type\": \"H100\",\n");
	snprintf(path, sizeof(path), "%s/x_qps_1.json", dir);
	tu_write_file(path, "{\"completed\": 1, \"request_throughput\": 2}");
	ck_assert_int_eq(pg_import_file(&rs, path, NULL, &err), PG_ECONFIG);
	ck_assert_msg(strstr(err.msg, "x_qps_1.commands:2:") != NULL, "%s", err.msg);
	ck_assert_uint_eq(rs.n, 0);

	snprintf(path, sizeof(path), "%s/x_qps_1.commands", dir);
	tu_write_file(
		path,
		"{\"gpu_type\": \"H100\\nH100\", \"client_command\": \"vllm bench serve --request-rate 1\"}");
	snprintf(path, sizeof(path), "%s/x_qps_1.json", dir);
	ck_assert_int_eq(pg_import_file(&rs, path, NULL, &err), 0);
	ck_assert_uint_eq(rs.n, 1);
	ck_assert_str_eq(rs.items[0].name, "x_qps_1");
	ck_assert_str_eq(json_string_value(json_object_get(rs.items[0].commands, "gpu_type")),
			 "H100\nH100");
	ck_assert_str_eq(json_string_value(pg_json_path(rs.items[0].json, "perfgate.gpu.label")),
			 "2xH100");
	ck_assert_int_eq(json_integer_value(pg_json_path(rs.items[0].json, "perfgate.params.qps")),
			 1);
	ck_assert_str_eq(json_string_value(pg_json_path(rs.items[0].json, "perfgate.test")), "x");
	pg_result_set_release(&rs);
	tu_rm_rf(dir);
	free(dir);
}
END_TEST

/* YAML files (llm-d's reports): one line with the YAML file's position. */
START_TEST(yaml_errors)
{
	/* clang-format off */
	static const struct {
		const char *text, *message;
	} cases[] = {
		{ "a: [1\n", "r.yaml:2:1: not valid YAML: did not find expected ',' or ']'" },
		{ "# only a comment\n", "r.yaml: an empty YAML document" },
		{ "# x\n 42\n", "r.yaml:2:2: expected a mapping (an llm-d benchmark report), got a single value" },
		{ "version: '0.1'\nresults: {}\nscenario: {}\n",
		  "r.yaml:1:1: llm-d benchmark report version 0.1: perfgate reads version 0.2" },
	};
	/* clang-format on */
	char *dir = tu_mkdtemp();
	char path[4096];

	snprintf(path, sizeof(path), "%s/r.yaml", dir);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pg_result_set rs = PG_RESULT_SET_INIT;
		struct pg_error err = PG_ERROR_INIT;

		tu_write_file(path, cases[i].text);
		ck_assert_int_eq(pg_import_file(&rs, path, NULL, &err), PG_ECONFIG);
		ck_assert_msg(strstr(err.msg, cases[i].message) != NULL, "case %zu: %s", i,
			      err.msg);
		ck_assert_uint_eq(rs.n, 0);
	}
	tu_rm_rf(dir);
	free(dir);
}
END_TEST

/* Names from the source, or derived; never a path. */
START_TEST(names_are_safe_file_names)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	struct pg_error err = PG_ERROR_INIT;
	const char *t = "[{\"Test name\": \"../../etc/passwd\", \"Tput (req/s)\": 1},"
			" {\"Test name\": \".hidden\\nname\", \"Tput (req/s)\": 1}]";

	ck_assert_int_eq(pg_import_text(&rs, t, strlen(t), "r.json", "r", NULL, NULL, &err), 0);
	ck_assert_str_eq(rs.items[0].name, "_._.._etc_passwd");
	ck_assert_str_eq(rs.items[1].name, "_hidden_name");
	pg_result_set_release(&rs);
}
END_TEST

/* Import every file a directory walk keeps; the notes in out_notes. */
static bool notes_have(const struct pg_strv *notes, const char *a, const char *b)
{
	for (size_t i = 0; i < notes->n; i++)
		if (strstr(notes->v[i], a) && strstr(notes->v[i], b))
			return true;
	return false;
}

static const struct pg_result *by_name(const struct pg_result_set *rs, const char *name)
{
	for (size_t i = 0; i < rs->n; i++)
		if (!strcmp(rs->items[i].name, name))
			return &rs->items[i];
	ck_abort_msg("no result named %s", name);
	return NULL;
}

/* llm-d's experiment trees keep repeated runs of one configuration as
 * files of their own: one point, its runs the repeats. */
START_TEST(tree_repeats_one_point)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	struct pg_strv notes = PG_STRV_INIT;
	struct pg_import_opts opts = { 0 };
	const struct pg_result *runs[3];
	struct pg_result_set one = PG_RESULT_SET_INIT;
	struct pg_result merged = { 0 };
	json_t *changed;
	char *text;

	opts.labels_from_path = 1;
	import_tree(&rs, &notes, "data/import/tree-repeats", &opts);
	ck_assert_uint_eq(rs.n, 3);
	for (size_t i = 0; i < 3; i++) {
		ck_assert_str_eq(rs.items[i].name,
				 "serving_Llama-3.1-8B-Instruct_no-features_qps_5");
		runs[i] = &rs.items[i];
	}
	ck_assert_ptr_null(pg_import_not_repeats(runs, 3));
	merged.name = pg_xstrdup(rs.items[0].name);
	merged.kind = PG_SUITE_SERVING;
	merged.json = pg_import_merge_repeats(runs, 3);
	/* the median of each key; every run's metrics, in file order */
	ck_assert_double_eq(json_real_value(json_object_get(merged.json, "mean_ttft_ms")),
			    json_real_value(json_object_get(rs.items[0].json, "mean_ttft_ms")));
	ck_assert_uint_eq(json_array_size(pg_json_path(merged.json, "perfgate.repeats")), 3);
	ck_assert_uint_eq(json_array_size(pg_json_path(merged.json, "perfgate.import.repeats")), 3);
	pg_result_set_add(&one, &merged);
	text = dump(&one);
	tu_assert_golden("golden/import/tree-repeats.txt", text);
	free(text);

	/* one file twice is one run, not two */
	runs[1] = &rs.items[0];
	ck_assert_str_eq(pg_import_not_repeats(runs, 2), "the same run twice");
	/* another workload (num_prompts) is another point */
	runs[1] = &rs.items[1];
	changed = json_object_get(json_object_get(rs.items[1].json, "perfgate"), "params");
	json_object_set_new(changed, "num_prompts", json_integer(151));
	ck_assert_str_eq(pg_import_not_repeats(runs, 2), "their workloads differ");
	/* a point with repeats already is not one run */
	json_object_set_new(json_object_get(rs.items[2].json, "perfgate"), "repeats", json_array());
	runs[1] = &rs.items[2];
	ck_assert_str_eq(pg_import_not_repeats(runs, 2), "a result that holds repeats already");

	pg_result_set_release(&one);
	pg_result_set_release(&rs);
	pg_strv_release(&notes);
}
END_TEST

/* vllm bench sweep's tree (vllm/benchmarks/sweep/serve.py): a
 * combination's summary.json is one point with its runs as samples, the
 * run files beside it and the warm-up are skipped with a note, a failure
 * file is a failed point, a combination without a summary keeps its run,
 * summary.csv is named and not read. */
START_TEST(sweep_tree)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	struct pg_strv notes = PG_STRV_INIT;
	const struct pg_result *sum, *fail, *srv, *lone;
	char *text;

	import_tree(&rs, &notes, "data/import/sweep", NULL);
	ck_assert_uint_eq(rs.n, 4);
	ck_assert_uint_eq(notes.n, 4);
	ck_assert(notes_have(&notes, "summary.csv", "table of the runs"));
	ck_assert(notes_have(&notes, "/run=0.json", "summary.json beside it"));
	ck_assert(notes_have(&notes, "/run=1.json", "summary.json beside it"));
	ck_assert(notes_have(&notes, "warmup.json", "warm-up run"));

	sum = by_name(&rs, "SERVE--max_num_seqs=32-BENCH--max_concurrency=16");
	ck_assert_int_eq(sum->kind, PG_SUITE_SERVING);
	/* the median of the two runs, each run a sample */
	ck_assert_double_eq_tol(json_number_value(json_object_get(sum->json, "request_throughput")),
				(9.71 + 9.84) / 2, 1e-12);
	ck_assert_uint_eq(json_array_size(pg_json_path(sum->json, "perfgate.repeats")), 2);
	ck_assert_int_eq(json_integer_value(pg_json_path(sum->json, "perfgate.import.sweep.runs")),
			 2);
	ck_assert_ptr_null(json_object_get(sum->json, "run_number"));
	ck_assert_int_eq(json_integer_value(json_object_get(sum->json, "max_num_seqs")), 32);
	ck_assert_str_eq(json_string_value(pg_json_path(sum->json, "perfgate.import.format")),
			 "vllm-sweep-summary");

	fail = by_name(&rs, "SERVE--max_num_seqs=32-BENCH--max_concurrency=16_run_2");
	ck_assert_str_eq(pg_result_status(fail), "error");
	ck_assert_msg(strstr(pg_result_error(fail), "CalledProcessError") != NULL, "%s",
		      pg_result_error(fail));
	ck_assert_int_eq(
		json_integer_value(pg_json_path(
			fail->json, "perfgate.import.sweep.bench_overrides.max_concurrency")),
		16);
	srv = by_name(&rs, "SERVE-max_num_seqs=128-failure");
	ck_assert_str_eq(pg_result_status(srv), "error");
	ck_assert(json_is_null(pg_json_path(srv->json, "perfgate.import.sweep.run_number")));

	lone = by_name(&rs, "SERVE--max_num_seqs=64-BENCH--max_concurrency=16_run_0");
	ck_assert_str_eq(pg_result_status(lone), "ok");
	ck_assert_int_eq(
		json_integer_value(pg_json_path(lone->json, "perfgate.import.sweep.run_number")),
		0);

	text = dump(&rs);
	tu_assert_golden("golden/import/sweep.txt", text);
	free(text);
	pg_strv_release(&notes);
	pg_result_set_release(&rs);
}
END_TEST

/* A warm-up given alone is refused, and says why; a summary whose run is
 * not a serving record is read record by record (and refused there). */
START_TEST(sweep_warmup_alone)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	struct pg_error err = PG_ERROR_INIT;
	const char *t = "{\"completed\": 16, \"request_throughput\": 9.1, \"run_number\": -1}";
	const char *bad = "[{\"completed\": 2, \"request_throughput\": 1, \"run_number\": \"0\"}]";

	ck_assert_int_eq(pg_import_text(&rs, t, strlen(t), "warmup.json", "w", NULL, NULL, &err),
			 PG_ECONFIG);
	ck_assert_msg(strstr(err.msg, "warm-up run (run_number -1") != NULL, "%s", err.msg);
	ck_assert_int_eq(
		pg_import_text(&rs, bad, strlen(bad), "summary.json", "s", NULL, NULL, &err),
		PG_ECONFIG);
	ck_assert_msg(strstr(err.msg, "'run_number' must be an integer") != NULL, "%s", err.msg);
	ck_assert_uint_eq(rs.n, 0);
}
END_TEST

/* vllm bench startup --output-json (vllm/benchmarks/startup.py): a startup
 * point in its own keys, gated by the registry's startup metrics. */
START_TEST(startup_results)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	struct pg_error err = PG_ERROR_INIT;
	const struct pg_metric *m = pg_metric_by_id(PG_SUITE_STARTUP, "avg_cold_startup_time");
	const char *bad = "{\"avg_cold_startup_time\": 1, \"cold_startup_times\": [1, \"x\"]}";
	double v;

	import_golden("data/import/startup/startup_llama8B_tp1.json", "golden/import/startup.txt",
		      1, "H100");
	in_tests_dir();
	ck_assert_int_eq(
		pg_import_file(&rs, "data/import/startup/startup_llama8B_tp1.json", NULL, &err), 0);
	ck_assert_int_eq(rs.items[0].kind, PG_SUITE_STARTUP);
	ck_assert_str_eq(json_string_value(pg_json_path(rs.items[0].json, "perfgate.suite")),
			 "startup");
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(pg_metric_value(m, rs.items[0].json, &v), 0);
	ck_assert_double_eq_tol(v, (62.81 + 60.12 + 61.4) / 3, 1e-9);
	m = pg_metric_by_id(PG_SUITE_STARTUP, "p90_warm_startup_time");
	ck_assert_int_eq(pg_metric_value(m, rs.items[0].json, &v), 0);
	ck_assert_int_eq(m->direction, PG_LOWER_IS_BETTER);
	pg_result_set_release(&rs);

	ck_assert_int_eq(pg_import_text(&rs, bad, strlen(bad), "s.json", "s", NULL, NULL, &err),
			 PG_ECONFIG);
	ck_assert_msg(strstr(err.msg, "'cold_startup_times'[1] must be a number") != NULL, "%s",
		      err.msg);
}
END_TEST

/* A perf-eval aggregate (aggregation_method, aggregated_repetitions,
 * individual_result_files): its runs are its samples when they are
 * there, and skipped as points of their own in a directory walk; without
 * them it stays one sample and says which are missing. */
START_TEST(perf_eval_aggregates)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	struct pg_strv notes = PG_STRV_INIT;
	struct pg_error err = PG_ERROR_INIT;
	const json_t *agg;
	char *text;

	import_tree(&rs, &notes, "data/import/aggregate", NULL);
	ck_assert_uint_eq(rs.n, 1);
	ck_assert_uint_eq(notes.n, 3);
	ck_assert(notes_have(&notes, "run-2.json", "perf-eval aggregate"));
	agg = pg_json_path(rs.items[0].json, "perfgate.import.aggregate");
	ck_assert_int_eq(json_integer_value(json_object_get(agg, "repetitions")), 3);
	ck_assert_str_eq(json_string_value(json_object_get(agg, "samples")), "individual files");
	ck_assert_uint_eq(json_array_size(pg_json_path(rs.items[0].json, "perfgate.repeats")), 3);
	/* the aggregate's own values stay the point's */
	ck_assert_double_eq(json_number_value(json_object_get(rs.items[0].json, "mean_ttft_ms")),
			    110.0);
	text = dump(&rs);
	tu_assert_golden("golden/import/aggregate.txt", text);
	free(text);
	pg_result_set_release(&rs);

	ck_assert_int_eq(pg_import_file(&rs, "data/import/aggregate-alone/serving_llama8B_c16.json",
					NULL, &err),
			 0);
	agg = pg_json_path(rs.items[0].json, "perfgate.import.aggregate");
	ck_assert_str_eq(json_string_value(json_object_get(agg, "samples")), "aggregate");
	ck_assert_uint_eq(json_array_size(json_object_get(agg, "missing")), 3);
	ck_assert_ptr_null(pg_json_path(rs.items[0].json, "perfgate.repeats"));
	pg_strv_release(&notes);
	pg_result_set_release(&rs);
}
END_TEST

/* What an aggregate names is read only when it is a regular file beside
 * it: not an absolute path, not "..", not a device or a FIFO (which would
 * hang the import); a record that brings its own
 * perfgate.import.aggregate is read the same way, never crashed on. */
START_TEST(an_aggregate_reads_only_its_own_run_files)
{
	char *dir = tu_mkdtemp(), *agg_path, *fifo, *json;
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	struct pg_error err = PG_ERROR_INIT;
	json_t *v;

	in_tests_dir();
	v = json_load_file("data/import/aggregate-alone/serving_llama8B_c16.json", 0, NULL);
	const json_t *agg;

	ck_assert_ptr_nonnull(v);
	fifo = pg_path_join(dir, "fifo.json");
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	json_object_set_new(v, "individual_result_files",
			    json_pack("[s, s, s, s, s]", "/etc/hostname", "../outside.json",
				      "a/../../x.json", "fifo.json", "/dev/zero"));
	agg_path = pg_path_join(dir, "serving_agg.json");
	json = json_dumps(v, 0);
	tu_write_file(agg_path, json);
	ck_assert_msg(pg_import_file(&rs, agg_path, NULL, &err) == 0, "%s", err.msg);
	agg = pg_json_path(rs.items[0].json, "perfgate.import.aggregate");
	ck_assert_str_eq(json_string_value(json_object_get(agg, "samples")), "aggregate");
	ck_assert_uint_eq(json_array_size(json_object_get(agg, "missing")), 5);
	ck_assert_ptr_null(pg_json_path(rs.items[0].json, "perfgate.repeats"));
	pg_result_set_release(&rs);
	free(json);
	json_decref(v);

	/* a record with its own perfgate.import.aggregate.files */
	tu_write_file(agg_path, "{\"request_throughput\": 1, \"perfgate\": {\"import\": "
				"{\"aggregate\": {\"files\": [1, \"/dev/zero\"]}}}}");
	(void)pg_import_file(&rs, agg_path, NULL, &err);
	pg_result_set_release(&rs);
	free(agg_path);
	free(fifo);
	tu_rm_rf(dir);
	free(dir);
}
END_TEST

/* The newest vllm bench serve keys: client queue time and E2EL with it,
 * speculative decoding, the old "request_goodput:" spelling, no failed
 * key; a pooling run's sequences. */
START_TEST(newest_serve_keys)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	struct pg_error err = PG_ERROR_INIT;
	static const char *const ids[] = { "mean_client_queue_ms", "p99_client_queue_ms",
					   "mean_e2el_queued_ms",  "p99_e2el_queued_ms",
					   "spec_acceptance_rate", "spec_acceptance_length",
					   "request_goodput" };
	static const double want[] = { 3.2, 9.7, 1503.2, 1589.7, 71.4, 3.14, 7.5 };
	const char *bad = "{\"completed\": 2, \"mean_client_queue_time_ms\": \"slow\"}";
	double v;

	import_golden("data/import/serving-newest-keys.json",
		      "golden/import/serving-newest-keys.txt", 1, "H100");
	in_tests_dir();
	ck_assert_int_eq(pg_import_file(&rs, "data/import/serving-newest-keys.json", NULL, &err),
			 0);
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		const struct pg_metric *m = pg_metric_by_id(PG_SUITE_SERVING, ids[i]);
		ck_assert_msg(m != NULL, "%s", ids[i]);
		ck_assert_msg(pg_metric_value(m, rs.items[0].json, &v) == 0, "%s", ids[i]);
		ck_assert_double_eq_tol(v, want[i], 1e-12);
	}
	ck_assert_ptr_null(json_object_get(rs.items[0].json, "request_goodput:"));
	ck_assert_ptr_null(json_object_get(rs.items[0].json, "failed"));
	ck_assert_str_eq(pg_result_status(&rs.items[0]), "ok");
	pg_result_set_release(&rs);

	ck_assert_int_eq(pg_import_file(&rs, "data/import/serving-pooling.json", NULL, &err), 0);
	ck_assert_int_eq(rs.items[0].kind, PG_SUITE_SERVING);
	ck_assert_int_eq(pg_metric_value(pg_metric_by_id(PG_SUITE_SERVING, "input_seq_throughput"),
					 rs.items[0].json, &v),
			 0);
	ck_assert_double_eq(v, 119.0);
	ck_assert_int_eq(pg_metric_value(pg_metric_by_id(PG_SUITE_SERVING, "total_input_sequences"),
					 rs.items[0].json, &v),
			 0);
	ck_assert_double_eq(v, 500);
	pg_result_set_release(&rs);

	ck_assert_int_eq(pg_import_text(&rs, bad, strlen(bad), "q.json", "q", NULL, NULL, &err),
			 PG_ECONFIG);
	ck_assert_msg(strstr(err.msg, "'mean_client_queue_time_ms' must be a number") != NULL, "%s",
		      err.msg);
}
END_TEST

/* vLLM's steady_state block as its own metrics (the whole run's unchanged),
 * the energy keys of bench serve's NVML meter, and vllm bench startup's
 * cold-start phases, kept; each malformed one an error naming it. */
START_TEST(steady_state_energy_and_phases)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	struct pg_error err = PG_ERROR_INIT;
	static const struct {
		const char *id;
		double want;
	} serving[] = {
		{ "output_throughput", 1011.2 },
		{ "steady_output_throughput", 1075.2 },
		{ "median_ttft_ms", 50.0 },
		{ "steady_median_ttft_ms", 53.0 },
		{ "steady_p99_tpot_ms", 14.1 },
		{ "steady_median_e2el_ms", 1522.0 },
		{ "gpu_energy_j", 12505.0 },
		{ "gpu_avg_power_w", 610.0 },
		{ "energy_per_out_token_j", 12505.0 / 25600 },
		{ "mean_client_queue_ms", 3.2 },
	};
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "{\"completed\": 2, \"steady_state\": 8.4}",
		  "record 1: 'steady_state' must be an object, got a number" },
		{ "{\"completed\": 2, \"steady_state\": {\"output_throughput\": \"fast\"}}",
		  "record 1: 'steady_state.output_throughput' must be a number, got a string" },
		{ "{\"completed\": 2, \"gpu_energy_per_output_token_j\": [0.5]}",
		  "record 1: 'gpu_energy_per_output_token_j' must be a number, got an array" },
		{ "{\"avg_cold_startup_time\": 4, \"phases\": [{\"name\": \"Init device\"}]}",
		  "record 1: 'phases'[0] must be an object with a string 'name' and a number "
		  "'duration_s'" },
	};
	double v;

	import_golden("data/import/serving-steady-energy.json",
		      "golden/import/serving-steady-energy.txt", 1, "H100");
	ck_assert_int_eq(pg_import_file(&rs, "data/import/serving-steady-energy.json", NULL, &err),
			 0);
	for (size_t i = 0; i < sizeof(serving) / sizeof(serving[0]); i++) {
		const struct pg_metric *m = pg_metric_by_id(PG_SUITE_SERVING, serving[i].id);
		ck_assert_msg(m != NULL, "%s", serving[i].id);
		ck_assert_msg(pg_metric_value(m, rs.items[0].json, &v) == 0, "%s", serving[i].id);
		ck_assert_double_eq_tol(v, serving[i].want, 1e-12);
	}
	/* vLLM's None for a run without output: no value, no error */
	pg_result_set_release(&rs);
	ck_assert_int_eq(pg_import_text(&rs,
					"{\"completed\": 0, \"gpu_energy_j\": 3.5, "
					"\"gpu_energy_per_output_token_j\": null}",
					76, "e.json", "e", NULL, NULL, &err),
			 0);
	ck_assert_int_eq(
		pg_metric_value(pg_metric_by_id(PG_SUITE_SERVING, "energy_per_out_token_j"),
				rs.items[0].json, &v),
		-1);
	pg_result_set_release(&rs);

	import_golden("data/import/startup-phases.json", "golden/import/startup-phases.txt", 1,
		      "H100");
	ck_assert_int_eq(pg_import_file(&rs, "data/import/startup-phases.json", NULL, &err), 0);
	ck_assert_int_eq(rs.items[0].kind, PG_SUITE_STARTUP);
	ck_assert_uint_eq(json_array_size(json_object_get(rs.items[0].json, "phases")), 6);
	pg_result_set_release(&rs);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(pg_import_text(&rs, bad[i].text, strlen(bad[i].text), "q.json",
						"q", NULL, NULL, &err),
				 PG_ECONFIG);
		ck_assert_msg(strstr(err.msg, bad[i].msg) != NULL, "%s", err.msg);
		pg_result_set_release(&rs);
	}
}
END_TEST

static Suite *import_suite(void)
{
	Suite *s = suite_create("import");
	TCase *tc = tcase_create("files");

	tcase_add_test(tc, llmd_sample);
	tcase_add_test(tc, steady_state_energy_and_phases);
	tcase_add_test(tc, printed_sample);
	tcase_add_test(tc, printed_every_label_variant);
	tcase_add_test(tc, printed_sglang_crlf);
	tcase_add_test(tc, vllm_ci_results_with_sidecars);
	tcase_add_test(tc, append_result_json_lines);
	tcase_add_test(tc, records_and_reports);
	tcase_add_test(tc, values_are_kept_exactly);
	tcase_add_test(tc, many_records_any_separator);
	tcase_add_test(tc, many_printed_blocks);
	tcase_add_test(tc, real_files);
	tcase_add_test(tc, tree_labels_from_path);
	tcase_add_test(tc, tree_repeats_one_point);
	tcase_add_test(tc, real_files_refused);
	tcase_add_test(tc, sglang_names_are_vllm_keys);
	tcase_add_test(tc, path_labels);
	tcase_add_test(tc, json_inside_text);
	tcase_add_test(tc, printed_under_a_prefix);
	tcase_add_test(tc, full_precision_wins);
	tcase_add_test(tc, guidellm_v1_and_strategies);
	tcase_add_test(tc, aiperf_load_and_units);
	tcase_add_test(tc, sweep_tree);
	tcase_add_test(tc, startup_results);
	tcase_add_test(tc, perf_eval_aggregates);
	tcase_add_test(tc, an_aggregate_reads_only_its_own_run_files);
	tcase_add_test(tc, newest_serve_keys);
	suite_add_tcase(s, tc);
	tc = tcase_create("errors");
	tcase_add_test(tc, detects_formats);
	tcase_add_test(tc, bad_input_is_one_precise_error);
	tcase_add_test(tc, fuzz_findings_are_harmless);
	tcase_add_test(tc, files_and_sidecars);
	tcase_add_test(tc, yaml_errors);
	tcase_add_test(tc, names_are_safe_file_names);
	tcase_add_test(tc, sweep_warmup_alone);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(import_suite());
}
