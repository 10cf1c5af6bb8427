/* The report: checked cell by cell against vLLM's real reports, and golden
 * files for everything else a user reads. */
#include "testutil.h"

#include "base/buf.h"
#include "results/cmdline.h"
#include "base/error.h"
#include "results/metrics.h"
#include "results/params.h"
#include "report/report.h"
#include "results/result.h"
#include "base/strutil.h"
#include "import/import_io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ---- */

static void add_result(struct pg_result_set *rs, const char *name, const char *json,
		       const char *commands)
{
	struct pg_result r = { 0 };
	json_error_t jerr;

	r.name = strdup(name);
	r.path = strdup(name);
	r.json = json_loads(json, 0, &jerr);
	ck_assert_msg(r.json != NULL, "%s: %s", name, jerr.text);
	r.kind = (enum pg_suite_kind)pg_result_kind(r.json);
	ck_assert_int_ge((int)r.kind, 0);
	if (commands) {
		r.commands = json_loads(commands, 0, &jerr);
		ck_assert_msg(r.commands != NULL, "%s: %s", name, jerr.text);
	}
	pg_result_set_add(rs, &r);
}

static void import_ref(struct pg_result_set *out, const char *rel)
{
	struct pg_error err = PG_ERROR_INIT;
	char *path = tu_test_path(rel);
	int rc = pg_import_file(out, path, NULL, &err);

	ck_assert_msg(rc == 0, "import %s: %s", rel, err.msg);
	free(path);
}

static char *render(const struct pg_result_set *rs, unsigned flags)
{
	struct pg_buf b = PG_BUF_INIT;

	pg_report_render(&b, rs, flags);
	return pg_buf_detach(&b);
}

/* Tables in markdown text, as rows of trimmed cells joined by '\x1f' (the
 * separator line dropped). Reads both our pipe tables and the reference's
 * copy, which lost its leading pipes. */
struct tables {
	struct pg_strv rows[8];
	size_t n;
};

static int is_separator(const char *line, size_t len)
{
	if (len < 3 || !memmem(line, len, "---", 3))
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!strchr("-:| ", line[i]))
			return 0;
	return 1;
}

static void cells_of(struct pg_buf *out, const char *line, size_t len)
{
	struct pg_strv cells = PG_STRV_INIT;
	struct pg_buf cell = PG_BUF_INIT;

	for (size_t i = 0; i <= len; i++) {
		if (i < len && line[i] == '\\' && i + 1 < len && line[i + 1] == '|') {
			pg_buf_putc(&cell, '|');
			i++;
			continue;
		}
		if (i == len || line[i] == '|') {
			size_t a = 0, b = cell.len;
			while (a < b && cell.ptr[a] == ' ')
				a++;
			while (b > a && cell.ptr[b - 1] == ' ')
				b--;
			char *c = strndup(cell.ptr + a, b - a);
			pg_strv_push_owned(&cells, c);
			pg_buf_reset(&cell);
			continue;
		}
		pg_buf_putc(&cell, line[i]);
	}
	size_t first = cells.n && !*cells.v[0] ? 1 : 0;
	size_t last = cells.n && !*cells.v[cells.n - 1] ? cells.n - 1 : cells.n;
	pg_buf_reset(out);
	for (size_t i = first; i < last; i++) {
		if (i > first)
			pg_buf_putc(out, '\x1f');
		pg_buf_puts(out, cells.v[i]);
	}
	pg_strv_release(&cells);
	pg_buf_release(&cell);
}

static void parse_tables(struct tables *t, const char *text)
{
	const char *p = text;
	struct pg_buf row = PG_BUF_INIT;
	int in_table = 0;

	memset(t, 0, sizeof(*t));
	while (*p) {
		size_t len = strcspn(p, "\n");
		const char *next = p + len + (p[len] ? 1 : 0);
		size_t next_len = strcspn(next, "\n");

		if (!in_table && memchr(p, '|', len) && is_separator(next, next_len)) {
			ck_assert_uint_lt(t->n, 8);
			cells_of(&row, p, len);
			pg_strv_push(&t->rows[t->n], row.ptr);
			in_table = 1;
			p = next + next_len + (next[next_len] ? 1 : 0);
			continue;
		}
		if (in_table && len && memchr(p, '|', len)) {
			cells_of(&row, p, len);
			pg_strv_push(&t->rows[t->n], row.ptr);
		} else if (in_table) {
			in_table = 0;
			t->n++;
		}
		p = next;
	}
	if (in_table)
		t->n++;
	pg_buf_release(&row);
}

static void tables_release(struct tables *t)
{
	for (size_t i = 0; i < 8; i++)
		pg_strv_release(&t->rows[i]);
}

static void assert_tables_equal(const struct tables *got, const struct tables *want,
				const char *what)
{
	ck_assert_msg(got->n == want->n, "%s: %zu tables, want %zu", what, got->n, want->n);
	for (size_t i = 0; i < want->n; i++) {
		ck_assert_msg(got->rows[i].n == want->rows[i].n, "%s table %zu: %zu rows, want %zu",
			      what, i, got->rows[i].n, want->rows[i].n);
		for (size_t r = 0; r < want->rows[i].n; r++)
			ck_assert_msg(!strcmp(got->rows[i].v[r], want->rows[i].v[r]),
				      "%s table %zu row %zu:\n got: %s\nwant: %s", what, i, r,
				      got->rows[i].v[r], want->rows[i].v[r]);
	}
}

/* ---- against reality ---- */

/* The three GPU reports of the reference, rebuilt from their JSON strings
 * through the importer, render to tables whose every cell is the
 * reference's. */
START_TEST(reference_gpu_reports_cell_for_cell)
{
	static const char *const labels[] = { "8xH100", "8xH200", "8xA100-SXM4-80GB" };
	struct pg_result_set all = PG_RESULT_SET_INIT;
	char *path = tu_test_path("data/reference/vllm-report-h100-h200-a100.md");
	char *ref = tu_read_file(path, NULL);
	const char *starts[4];

	import_ref(&all, "data/reference/vllm-report-h100-h200-a100.md");
	ck_assert_uint_eq(all.n, 54);
	/* the reference holds three reports, each starting "Latency tests" */
	starts[0] = strstr(ref, "Latency tests");
	starts[1] = strstr(starts[0] + 1, "\nLatency tests");
	starts[2] = strstr(starts[1] + 1, "\nLatency tests");
	starts[3] = ref + strlen(ref);
	for (int g = 0; g < 3; g++) {
		struct pg_result_set one = PG_RESULT_SET_INIT;
		struct tables got, want;
		char *want_text = strndup(starts[g], (size_t)(starts[g + 1] - starts[g]));
		char *md;

		for (size_t i = 0; i < all.n; i++) {
			char label[64];
			const char *l = pg_result_gpu_label(&all.items[i], label, sizeof(label));
			if (l && !strcmp(l, labels[g])) {
				struct pg_result copy = { strdup(all.items[i].path),
							  strdup(all.items[i].name),
							  all.items[i].kind,
							  json_incref(all.items[i].json), NULL };
				pg_result_set_add(&one, &copy);
			}
		}
		ck_assert_uint_eq(one.n, 18);
		md = render(&one, PG_REPORT_TABLES);
		parse_tables(&got, md);
		parse_tables(&want, want_text);
		ck_assert_uint_eq(want.n, 3);
		assert_tables_equal(&got, &want, labels[g]);
		tables_release(&got);
		tables_release(&want);
		free(md);
		free(want_text);
		pg_result_set_release(&one);
	}
	pg_result_set_release(&all);
	free(ref);
	free(path);
}
END_TEST

/* The raw serving report, rebuilt from its JSON section: same layout
 * (golden), same cells as the reference's table, and the JSON section
 * carries every value at full precision. */
START_TEST(reference_serving_report_round_trips)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	char *path = tu_test_path("data/reference/vllm-report-serving-2node.md");
	char *ref = tu_read_file(path, NULL);
	struct tables got, want;
	json_t *ours, *theirs, *col;
	const char *header;
	char *md;

	import_ref(&rs, "data/reference/vllm-report-serving-2node.md");
	ck_assert_uint_eq(rs.n, 4);
	md = render(&rs, PG_REPORT_ALL);
	tu_assert_golden("golden/report/serving-2node.md", md);

	parse_tables(&got, md);
	parse_tables(&want, ref);
	assert_tables_equal(&got, &want, "serving-2node");
	tables_release(&got);
	tables_release(&want);

	ours = json_loads(strstr(md, "```json\n") + 8, JSON_DISABLE_EOF_CHECK, NULL);
	theirs = json_loads(strstr(ref, "```json\n") + 8, JSON_DISABLE_EOF_CHECK, NULL);
	ck_assert_ptr_nonnull(ours);
	ck_assert_ptr_nonnull(theirs);
	ck_assert_uint_eq(json_object_size(json_object_get(ours, "latency")), 0);
	ck_assert_uint_eq(json_object_size(json_object_get(ours, "throughput")), 0);
	/* same columns in the same order; values equal by test name (we sort
	 * the rows, vLLM did not) */
	json_t *our_srv = json_object_get(ours, "serving"),
	       *their_srv = json_object_get(theirs, "serving");
	ck_assert_uint_eq(json_object_size(our_srv), json_object_size(their_srv));
	json_object_foreach(their_srv, header, col)
	{
		json_t *our_col = json_object_get(our_srv, header);
		const char *idx;
		json_t *v;

		ck_assert_msg(our_col != NULL, "column %s missing", header);
		json_object_foreach(col, idx, v)
		{
			const char *name = json_string_value(
				json_object_get(json_object_get(their_srv, "Test name"), idx));
			const char *our_idx = NULL, *k;
			json_t *n;
			json_object_foreach(json_object_get(our_srv, "Test name"), k,
					    n) if (!strcmp(json_string_value(n), name)) our_idx = k;
			ck_assert_ptr_nonnull(our_idx);
			json_t *mine = json_object_get(our_col, our_idx);
			if (!strcmp(header, "GPU")) {
				/* ours carry the table's label, vLLM's the raw string */
				char want_gpu[128];
				snprintf(want_gpu, sizeof(want_gpu), "1x%s", json_string_value(v));
				ck_assert_str_eq(json_string_value(mine), want_gpu);
			} else {
				ck_assert_msg(json_equal(mine, v), "%s row %s differs", header,
					      name);
			}
		}
	}
	json_decref(ours);
	json_decref(theirs);
	free(md);
	free(ref);
	free(path);
	pg_result_set_release(&rs);
}
END_TEST

/* A report perfgate wrote imports back to the same report. */
START_TEST(report_imports_back_to_itself)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT, back = PG_RESULT_SET_INIT;
	struct pg_error err = PG_ERROR_INIT;
	char *md, *md2;

	import_ref(&rs, "data/reference/vllm-report-h100-h200-a100.md");
	add_result(
		&rs, "serving_broken_qps_4",
		"{\"perfgate\": {\"suite\": \"serving\", \"status\": \"error\", \"error\": \"server never ready\"}}",
		NULL);
	md = render(&rs, PG_REPORT_ALL);
	ck_assert_int_eq(
		pg_import_text(&back, md, strlen(md), "report.md", "report", NULL, NULL, &err), 0);
	ck_assert_uint_eq(back.n, rs.n);
	md2 = render(&back, PG_REPORT_ALL);
	ck_assert_str_eq(md2, md);
	free(md);
	free(md2);
	pg_result_set_release(&rs);
	pg_result_set_release(&back);
}
END_TEST

/* ---- layout ---- */

START_TEST(empty_results_render_empty_sections)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	struct pg_buf b = PG_BUF_INIT;
	char *md = render(&rs, PG_REPORT_ALL);
	struct pg_report *r = pg_report_new(&rs);

	tu_assert_golden("golden/report/empty.md", md);
	pg_report_records(&b, r);
	ck_assert_str_eq(b.ptr, "[]\n");
	pg_buf_reset(&b);
	pg_report_json_tables(&b, r);
	ck_assert_str_eq(b.ptr, "{\"latency\": {}, \"throughput\": {}, \"serving\": {}}");
	pg_report_free(r);
	pg_buf_release(&b);
	free(md);
}
END_TEST

/* Results in every shape a run produces: perfgate params, vLLM command
 * lines only, failed points, missing columns, awkward names. */
static void mixed_results(struct pg_result_set *rs)
{
	add_result(
		rs, "latency_llama8B_tp1",
		"{\"avg_latency\": 1.0469095210234325, \"std_latency\": 0.0006, \"latencies\": [1.04],"
		" \"percentiles\": {\"10\": 1.04, \"50\": 1.04682, \"90\": 1.048, \"99\": 1.0483}}",
		"{\"latency_command\": \"vllm bench latency --model meta-llama/Llama-3.1-8B-Instruct"
		" --tensor-parallel-size 1 --load-format dummy --output-json results/latency_llama8B_tp1.json\","
		" \"gpu_type\": \"H100\\nH100\\nH100\\nH100\\nH100\\nH100\\nH100\\nH100\"}");
	add_result(
		rs, "latency_llama70B_tp4",
		"{\"avg_latency\": 2.5407543117801347, \"latencies\": [2.54],"
		" \"percentiles\": {\"50\": 2.5402, \"99\": 2.54489}}",
		"{\"latency_command\": \"vllm bench latency --model meta-llama/Llama-3.1-70B-Instruct"
		" -tp 4 --input-len 64 --batch-size 16\", \"gpu_type\": \"H100\\nH100\\nH100\\nH100\\nH100\\nH100\\nH100\\nH100\"}");
	add_result(
		rs, "throughput_llama8B_tp1",
		"{\"elapsed_time\": 9.25, \"num_requests\": 200, \"total_num_tokens\": 90000,"
		" \"requests_per_second\": 21.620062820024827, \"tokens_per_second\": 9729.7}",
		"{\"throughput_command\": \"vllm bench throughput --model meta-llama/Llama-3.1-8B-Instruct"
		" --dataset ./ShareGPT_V3_unfiltered_cleaned_split.json --num-prompts 200\","
		" \"gpu_type\": \"H100\\nH100\\nH100\\nH100\\nH100\\nH100\\nH100\\nH100\"}");
	add_result(
		rs, "serving_llama8B_tp1_sharegpt_qps_4",
		"{\"model_id\": \"meta-llama/Llama-3.1-8B-Instruct\", \"num_prompts\": 200,"
		" \"request_rate\": 4.0, \"burstiness\": 1.0, \"max_concurrency\": null, \"completed\": 200,"
		" \"request_throughput\": 3.78847, \"output_throughput\": 812.5, \"total_token_throughput\": 1623.25,"
		" \"mean_ttft_ms\": 16.1596, \"median_ttft_ms\": 15.9192, \"p99_ttft_ms\": 22.108,"
		" \"mean_tpot_ms\": 8.4, \"median_tpot_ms\": 8.39, \"p99_tpot_ms\": 8.99,"
		" \"mean_itl_ms\": 8.41121, \"median_itl_ms\": 8.39612, \"p99_itl_ms\": 8.99637,"
		" \"perfgate\": {\"suite\": \"serving\", \"status\": \"ok\", \"gpu\": {\"label\": \"8xH100\"},"
		" \"params\": {\"model\": \"meta-llama/Llama-3.1-8B-Instruct\", \"tp\": 1, \"dataset\": \"sharegpt\","
		" \"input_len\": null, \"output_len\": null, \"num_prompts\": 200, \"qps\": 4,"
		" \"max_concurrency\": null, \"batch_size\": null, \"endpoint\": \"/v1/completions\"}}}",
		NULL);
	add_result(
		rs, "serving_llama8B_tp1_sharegpt_qps_16",
		"{\"model_id\": \"meta-llama/Llama-3.1-8B-Instruct\", \"num_prompts\": 200,"
		" \"request_rate\": 16.0, \"completed\": 198,"
		" \"request_throughput\": 11.5228, \"output_throughput\": 2451.0, \"total_token_throughput\": 4903.5,"
		" \"mean_ttft_ms\": 19.5259, \"median_ttft_ms\": 19.811, \"p99_ttft_ms\": 25.4446,"
		" \"mean_itl_ms\": 9.40074, \"median_itl_ms\": 9.38206, \"p99_itl_ms\": 1234567.0,"
		" \"perfgate\": {\"suite\": \"serving\", \"gpu\": {\"label\": \"8xH100\"},"
		" \"params\": {\"dataset\": \"sharegpt\", \"num_prompts\": 200, \"qps\": 16}}}",
		NULL);
	add_result(
		rs, "serving_llama8B_tp1_sharegpt_qps_inf",
		"{\"request_rate\": \"inf\", \"completed\": 3, \"request_throughput\": 24.18,"
		" \"perfgate\": {\"suite\": \"serving\", \"status\": \"error\","
		" \"error\": \"server exited with status 1 | see server.log\\nTraceback: CUDA out of memory while"
		" allocating the KV cache for 131072 tokens on device 0\", \"gpu\": {\"label\": \"8xH100\"},"
		" \"params\": {\"dataset\": \"sharegpt\", \"num_prompts\": 200, \"qps\": \"inf\"}}}",
		NULL);
	add_result(
		rs, "serving_random|pipe_qps_1",
		"{\"model_id\": \"Qwen/Qwen3-0.6B\", \"request_rate\": 1, \"max_concurrency\": 16,"
		" \"burstiness\": 0.5, \"completed\": 50, \"request_throughput\": 1e-05,"
		" \"mean_ttft_ms\": 12, \"median_ttft_ms\": 11.5, \"p99_ttft_ms\": 40.25}",
		"{\"server_command\": \"vllm serve Qwen/Qwen3-0.6B --port 8000\","
		" \"client_command\": \"vllm bench serve --model Qwen/Qwen3-0.6B --dataset-name random"
		" --random-input-len 128 --random-output-len 2048 --num-prompts 50 --request-rate 1"
		" --max-concurrency 16\", \"gpu_type\": \"L40S\"}");
	add_result(
		rs, "serving_skipped_qps_1",
		"{\"perfgate\": {\"suite\": \"serving\", \"status\": \"skipped\","
		" \"error\": \"tp 8 exceeds the 4 GPUs of this machine\", \"gpu\": {\"label\": \"4xL40S\"}}}",
		NULL);
}

START_TEST(mixed_results_golden)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	struct pg_buf b = PG_BUF_INIT;
	struct pg_report *r;
	size_t not_ok;
	char *md;

	mixed_results(&rs);
	md = render(&rs, PG_REPORT_ALL);
	tu_assert_golden("golden/report/mixed.md", md);
	r = pg_report_new(&rs);
	ck_assert_uint_eq(pg_report_rows(r, &not_ok), 8);
	ck_assert_uint_eq(not_ok, 2);
	pg_report_records(&b, r);
	tu_assert_golden("golden/report/mixed.json", b.ptr);
	pg_report_free(r);
	pg_buf_release(&b);
	free(md);
	pg_result_set_release(&rs);
}
END_TEST

/* The parts render separately, for the annotation's size budget. */
START_TEST(parts_render_separately)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	char *all, *desc, *tables, *json, *both;

	mixed_results(&rs);
	all = render(&rs, PG_REPORT_ALL);
	desc = render(&rs, PG_REPORT_DESCRIPTIONS);
	tables = render(&rs, PG_REPORT_TABLES);
	json = render(&rs, PG_REPORT_JSON);
	both = render(&rs, PG_REPORT_DESCRIPTIONS | PG_REPORT_TABLES);

	ck_assert_ptr_nonnull(strstr(desc, "## Serving tests\n\n- Input length"));
	ck_assert_ptr_null(strstr(desc, "| Test name"));
	ck_assert_ptr_null(strstr(desc, "```json"));
	ck_assert_ptr_null(strstr(desc, "marked in the table below"));
	ck_assert_ptr_nonnull(strstr(tables, "## Serving tests\n\n| Test name"));
	ck_assert_ptr_null(strstr(tables, "- Input length"));
	ck_assert(pg_str_has_prefix(json, "## json version of the benchmarking tables\n"));
	ck_assert_ptr_null(strstr(json, "## Latency tests"));
	/* descriptions + tables + json section == everything */
	ck_assert_uint_eq(strlen(both) + strlen(json), strlen(all));
	ck_assert(pg_str_has_prefix(all, both));
	ck_assert_str_eq(all + strlen(both), json);
	free(all);
	free(desc);
	free(tables);
	free(json);
	free(both);
	pg_result_set_release(&rs);
}
END_TEST

/* Names, models, GPUs and errors with markdown and HTML in them (they come
 * from users' YAML and from servers' messages) neither break a table nor
 * inject HTML: benchmark_results.md goes into annotations as it is. */
START_TEST(hostile_names_cannot_break_the_report)
{
	static const char hostile[] =
		"a|b <img src=x onerror=alert(1)> & `c` *d* [e](f) ~g~ \\\\h\\n## i";
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	struct pg_buf json = PG_BUF_INIT;
	char *md;

	pg_buf_printf(
		&json,
		"{\"request_throughput\": 1.5, \"model_id\": \"%s\", \"perfgate\": {\"suite\": \"serving\","
		" \"status\": \"error\", \"error\": \"%s\", \"gpu\": {\"label\": \"%s\"},"
		" \"params\": {\"model\": \"%s\", \"dataset\": \"%s\", \"engine\": \"%s\", \"qps\": 1}}}",
		hostile, hostile, hostile, hostile, hostile, hostile);
	add_result(&rs, "serving_<b>x</b>|y_`z`_qps_1", json.ptr, NULL);
	add_result(&rs, "latency_<script>", "{\"avg_latency\": 1.5}",
		   "{\"gpu_type\": \"<i>H100</i>\"}");
	md = render(&rs, PG_REPORT_ALL);
	tu_assert_markdown_safe(md, NULL);
	ck_assert_ptr_nonnull(strstr(
		md,
		"| serving\\_&lt;b&gt;x&lt;/b&gt;\\|y\\_\\`z\\`\\_qps_1 — **error**: a\\|b &lt;img"));
	ck_assert_ptr_nonnull(strstr(
		md,
		"- Models: a\\|b &lt;img src=x onerror=alert(1)&gt; &amp; \\`c\\` \\*d\\* \\[e\\](f)"));
	/* the JSON keeps the names as they are */
	ck_assert_ptr_nonnull(strstr(md, "\"serving_<b>x</b>|y_`z`_qps_1\""));
	free(md);
	pg_buf_release(&json);
	pg_result_set_release(&rs);
}
END_TEST

/* Columns come and go with the data: the older reports' tables. */
START_TEST(columns_only_with_values)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	char *md;

	add_result(&rs, "serving_a_qps_1", "{\"request_throughput\": 1.5, \"mean_ttft_ms\": 10}",
		   NULL);
	add_result(&rs, "serving_b_qps_1", "{\"request_throughput\": 2.5, \"p99_itl_ms\": null}",
		   NULL);
	md = render(&rs, PG_REPORT_TABLES);
	ck_assert_ptr_nonnull(
		strstr(md, "| Test name       | GPU   |   Tput (req/s) |   Mean TTFT (ms) |\n"));
	ck_assert_ptr_nonnull(
		strstr(md, "| serving_a_qps_1 |       |            1.5 |               10 |\n"));
	ck_assert_ptr_nonnull(
		strstr(md, "| serving_b_qps_1 |       |            2.5 |                  |\n"));
	ck_assert_ptr_null(strstr(md, "ITL"));
	free(md);
	pg_result_set_release(&rs);
}
END_TEST

/* Failed requests are a column once a point has any, in the markdown and
 * the pandas JSON alike; a run without failures keeps vLLM's table. */
START_TEST(failed_column_when_any_point_failed)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	char *md;

	add_result(&rs, "serving_a_qps_1",
		   "{\"completed\": 200, \"failed\": 0, \"request_throughput\": 1.5}", NULL);
	md = render(&rs, PG_REPORT_TABLES | PG_REPORT_JSON);
	ck_assert_ptr_null(strstr(md, "Failed"));
	free(md);
	add_result(&rs, "serving_b_qps_1",
		   "{\"completed\": 197, \"failed\": 3, \"request_throughput\": 1.4}", NULL);
	add_result(&rs, "throughput_c",
		   "{\"num_requests\": 10, \"failed\": 0, \"requests_per_second\": 9}", NULL);
	md = render(&rs, PG_REPORT_TABLES | PG_REPORT_JSON);
	/* the point with failures is also marked incomplete (never a baseline) */
	ck_assert_ptr_nonnull(
		strstr(md, "| Test name                                           | GPU   "
			   "|   # of req. |   Failed |   Tput (req/s) |\n"));
	ck_assert_ptr_nonnull(
		strstr(md, "| serving_a_qps_1                                     |       "
			   "|         200 |        0 |            1.5 |\n"));
	ck_assert_ptr_nonnull(
		strstr(md, "| serving_b_qps_1 — **incomplete**: 3 requests failed |       "
			   "|         197 |        3 |            1.4 |\n"));
	ck_assert_ptr_nonnull(strstr(md, "\"Failed\": {\"0\": 0, \"1\": 3}"));
	/* the throughput table had none */
	ck_assert_ptr_nonnull(strstr(md, "| Test name    | GPU   |   Tput (req/s) |\n"));
	free(md);
	pg_result_set_release(&rs);
}
END_TEST

/* Rows sort bytewise by test name, as pandas' sort_values does. */
START_TEST(rows_sort_by_test_name)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	const char *names[] = { "serving_x_qps_inf", "serving_x_qps_4", "serving_x_qps_16",
				"serving_X_qps_1", "serving_x_qps_1" };
	const char *want[] = { "serving_X_qps_1", "serving_x_qps_1", "serving_x_qps_16",
			       "serving_x_qps_4", "serving_x_qps_inf" };
	struct tables t;
	char *md;

	for (size_t i = 0; i < 5; i++)
		add_result(&rs, names[i], "{\"request_throughput\": 1}", NULL);
	md = render(&rs, PG_REPORT_TABLES);
	parse_tables(&t, md);
	ck_assert_uint_eq(t.n, 1);
	for (size_t i = 0; i < 5; i++)
		ck_assert(pg_str_has_prefix(t.rows[0].v[i + 1], want[i]));
	tables_release(&t);
	free(md);
	pg_result_set_release(&rs);
}
END_TEST

/* vLLM's converter parses .commands; so do we, with vllm bench latency's
 * defaults when a flag is left out. */
START_TEST(bullets_come_from_the_results)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	char *md;

	add_result(
		&rs, "latency_a", "{\"avg_latency\": 1, \"percentiles\": {\"50\": 1, \"99\": 1}}",
		"{\"latency_command\": \"VLLM_RPC_TIMEOUT=1 vllm bench latency --model 'my org/model' --output-len=256\"}");
	add_result(
		&rs, "serving_b_qps_2",
		"{\"request_throughput\": 1, \"request_rate\": 2, \"burstiness\": 1.0}",
		"{\"client_command\": \"vllm bench serve --dataset-name random --random-input-len 1024"
		" --random-output-len 128 --num-prompts 100\", \"server_command\": \"python3 -m sglang.launch_server\"}");
	add_result(
		&rs, "serving_b_qps_0.5",
		"{\"request_throughput\": 1, \"request_rate\": 0.5, \"burstiness\": 1.0}",
		"{\"client_command\": \"vllm bench serve --dataset-name random --random-input-len 2048"
		" --random-output-len 128 --num-prompts 100\"}");
	md = render(&rs, PG_REPORT_DESCRIPTIONS);
	tu_assert_golden("golden/report/bullets.md", md);
	free(md);
	pg_result_set_release(&rs);
}
END_TEST

/* A point whose numbers the client or the host affected is named, with
 * its reason in one line (results/clientcheck.h); points that did not
 * complete are not counted. */
START_TEST(client_bound_points_are_called_out)
{
	struct pg_result_set rs = PG_RESULT_SET_INIT;
	char *md;

	add_result(&rs, "serving_c_qps_1",
		   "{\"request_throughput\": 1, \"request_rate\": 1, \"client_bound\": false,"
		   " \"host_late\": false}",
		   NULL);
	/* a client with no headroom: 1,000 streams on one core */
	add_result(&rs, "serving_c_qps_inf",
		   "{\"request_throughput\": 9, \"request_rate\": \"inf\", \"client_bound\": true,"
		   " \"host_late\": false, \"client_busy_fraction\": 0.42,"
		   " \"client_read_delay_p99_ms\": 6.0, \"timestamp_error_bound_ms\": 6.0}",
		   NULL);
	/* an idle client woken late for 3 of 200 sends */
	add_result(&rs, "serving_c_qps_32",
		   "{\"request_throughput\": 31, \"request_rate\": 32, \"num_prompts\": 200,"
		   " \"schedule_lag_p99_ms\": 9.52, \"schedule_lag_bound_ms\": 7.83,"
		   " \"requests_late_by_client\": 0, \"requests_late_by_host\": 3,"
		   " \"client_bound\": false, \"host_late\": true, \"client_busy_fraction\": 0.035,"
		   " \"client_read_delay_p99_ms\": 0.21, \"timestamp_error_bound_ms\": 0.21}",
		   NULL);
	/* an older file: the flag without its figures */
	add_result(&rs, "serving_c_qps_16",
		   "{\"request_throughput\": 15, \"request_rate\": 16, \"client_bound\": true}",
		   NULL);
	add_result(
		&rs, "serving_c_qps_2",
		"{\"request_rate\": 2, \"client_bound\": true, \"perfgate\": {\"suite\": \"serving\","
		" \"status\": \"error\", \"error\": \"server died\"}}",
		NULL);
	md = render(&rs, PG_REPORT_DESCRIPTIONS);
	tu_assert_golden("golden/report/client-flags.md", md);
	free(md);
	pg_result_set_release(&rs);

	add_result(&rs, "serving_d_qps_1", "{\"request_throughput\": 1, \"request_rate\": 1}",
		   NULL);
	md = render(&rs, PG_REPORT_DESCRIPTIONS);
	ck_assert_ptr_null(strstr(md, "Client-bound"));
	ck_assert_ptr_null(strstr(md, "Host-late"));
	free(md);
	pg_result_set_release(&rs);
}
END_TEST

/* Recorded command lines read back as sh would split them. */
START_TEST(command_lines_split_like_sh)
{
	struct pg_strv argv = PG_STRV_INIT;

	ck_assert_int_eq(pg_cmdline_split(&argv,
					  "A=1 vllm  serve 'my org/m' --x \"a \\\"b\\\" c\" "
					  "--tensor_parallel_size=4 -tp 2 --flag\\ y --last"),
			 0);
	ck_assert_uint_eq(argv.n, 11);
	ck_assert_str_eq(argv.v[3], "my org/m");
	ck_assert_str_eq(argv.v[5], "a \"b\" c");
	ck_assert_str_eq(argv.v[9], "--flag y");
	ck_assert_str_eq(pg_cmdline_flag(&argv, "--x"), "a \"b\" c");
	ck_assert_str_eq(pg_cmdline_flag(&argv, "--tensor-parallel-size"), "4");
	ck_assert_str_eq(pg_cmdline_flag(&argv, "-tp"), "2");
	ck_assert_str_eq(pg_cmdline_flag(&argv, "--last"), "");
	ck_assert_ptr_null(pg_cmdline_flag(&argv, "--tensor"));
	pg_strv_release(&argv);
	ck_assert_int_eq(pg_cmdline_split(&argv, "vllm serve 'unterminated"), -1);
	pg_strv_release(&argv);
}
END_TEST

/* perfgate.params first, then vLLM's keys, then the command lines. */
START_TEST(params_precedence)
{
	json_t *r = json_loads(
		"{\"model_id\": \"from-key\", \"request_rate\": \"inf\", \"num_prompts\": 50,"
		" \"max_concurrency\": null, \"input_len\": \"1000\","
		" \"perfgate\": {\"params\": {\"model\": \"from-params\", \"tp\": null}}}",
		0, NULL);
	json_t *c = json_loads(
		"{\"client_command\": \"vllm bench serve --num-prompts 70 --request-rate 2"
		" --random-output-len 64 --dataset-name random\","
		" \"server_command\": \"vllm serve m --tensor-parallel-size 4 -pp 2\"}",
		0, NULL);
	struct pg_params p;

	pg_params_from_result(&p, r, c);
	ck_assert_str_eq(p.model, "from-params");
	ck_assert(isinf(p.qps));
	ck_assert_int_eq(p.num_prompts, 50);
	ck_assert_int_eq(p.max_concurrency, 0);
	ck_assert_int_eq(p.input_len, 1000);
	ck_assert_int_eq(p.output_len, 64);
	ck_assert_int_eq(p.tp, 4);
	ck_assert_int_eq(p.pp, 2);
	ck_assert_ptr_null(p.dtype);
	ck_assert_str_eq(p.dataset, "random");
	ck_assert_str_eq(p.engine, "vllm");
	pg_params_release(&p);
	/* vLLM's key, and the server's --dtype (vLLM's report columns) */
	json_object_set_new(r, "pipeline_parallel_size", json_integer(3));
	json_object_set_new(
		c, "server_command",
		json_string("vllm serve m --pipeline-parallel-size=2 --dtype bfloat16"));
	pg_params_from_result(&p, r, c);
	ck_assert_int_eq(p.pp, 3);
	ck_assert_str_eq(p.dtype, "bfloat16");
	pg_params_release(&p);
	json_decref(r);
	json_decref(c);
	r = json_loads("{\"model_id\": \"m\"}", 0, NULL);
	c = json_loads("{\"server_command\": \"vllm serve m\"}", 0, NULL);
	pg_params_from_result(&p, r, c);
	ck_assert_int_eq(p.pp, -1);
	ck_assert_ptr_null(p.dtype);
	pg_params_release(&p);
	json_decref(r);
	json_decref(c);

	/* perfgate's own client against its mock server: the sidecar's
	 * "vllm bench throughput" is only the equivalent of what it did, and
	 * the report must not say vLLM chose the batch size */
	r = json_loads("{\"elapsed_time\": 1, \"perfgate\": {\"client\": \"native\","
		       " \"server_command\": \"perfgate mock-server --port 1\"}}",
		       0, NULL);
	c = json_loads(
		"{\"throughput_command\": \"vllm bench throughput --model m --num-prompts 9\","
		" \"server_command\": \"perfgate mock-server --port 1\"}",
		0, NULL);
	pg_params_from_result(&p, r, c);
	ck_assert_ptr_null(p.engine);
	ck_assert_int_eq(p.num_prompts, 9);
	pg_params_release(&p);
	/* an external command that ran vllm bench throughput: vLLM it is */
	json_object_set_new(json_object_get(r, "perfgate"), "client", json_string("command"));
	pg_params_from_result(&p, r, c);
	ck_assert_str_eq(p.engine, "vllm");
	pg_params_release(&p);
	/* the server's command names it for the native client too */
	json_object_set_new(json_object_get(r, "perfgate"), "client", json_string("native"));
	json_object_set_new(c, "server_command", json_string("vllm serve m --port 1"));
	pg_params_from_result(&p, r, c);
	ck_assert_str_eq(p.engine, "vllm");
	pg_params_release(&p);
	json_decref(r);
	json_decref(c);
}
END_TEST

static Suite *report_suite(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("reference");

	tcase_add_test(tc, reference_gpu_reports_cell_for_cell);
	tcase_add_test(tc, reference_serving_report_round_trips);
	tcase_add_test(tc, report_imports_back_to_itself);
	suite_add_tcase(s, tc);
	tc = tcase_create("layout");
	tcase_add_test(tc, empty_results_render_empty_sections);
	tcase_add_test(tc, mixed_results_golden);
	tcase_add_test(tc, parts_render_separately);
	tcase_add_test(tc, columns_only_with_values);
	tcase_add_test(tc, failed_column_when_any_point_failed);
	tcase_add_test(tc, hostile_names_cannot_break_the_report);
	tcase_add_test(tc, rows_sort_by_test_name);
	tcase_add_test(tc, bullets_come_from_the_results);
	tcase_add_test(tc, client_bound_points_are_called_out);
	tcase_add_test(tc, command_lines_split_like_sh);
	tcase_add_test(tc, params_precedence);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(report_suite());
}
