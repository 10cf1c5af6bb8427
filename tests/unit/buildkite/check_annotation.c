/* Annotations: escaping, headline per status, golden bodies for pass,
 * warning, regression, error and degraded annotations, the 1 MiB limit
 * with 10,000 test points, and the Buildkite environment. */
#include "testutil.h"

#include "buildkite/annotation.h"
#include "buildkite/job_env.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/escape.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

START_TEST(cells_cannot_break_tables_or_inject_html)
{
	struct pg_buf b = PG_BUF_INIT;

	pg_escape_md_cell(&b, "a|b<script>x</script>`c`\\d&e\nf*g_h[i](j)~k _x_ y_");
	ck_assert_str_eq(b.ptr, "a\\|b&lt;script&gt;x&lt;/script&gt;\\`c\\`\\\\d&amp;e f"
				"\\*g_h\\[i\\](j)\\~k \\_x\\_ y\\_");
	pg_buf_reset(&b);
	/* invalid UTF-8 and control bytes cannot reach the body */
	pg_escape_md_cell(&b, "caf\xc3\xa9 \xff\x01ok \xe2\x82");
	ck_assert_str_eq(b.ptr, "caf\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbdok \xef\xbf\xbd\xef\xbf\xbd");
	pg_buf_reset(&b);
	/* cut by code points, then escaped: the cut never splits a character
	 * or an escape */
	pg_escape_md_cell_cut(&b, "\xc3\xa9|<abc", 3);
	ck_assert_str_eq(b.ptr, "\xc3\xa9\\|&lt;…");
	pg_buf_reset(&b);
	pg_escape_md_cell_cut(&b, "a|b", 3);
	ck_assert_str_eq(b.ptr, "a\\|b");
	pg_buf_reset(&b);
	pg_escape_md_cell_cut(&b, "a|b", 0);
	ck_assert_str_eq(b.ptr, "a\\|b");
	pg_buf_reset(&b);
	/* a code span shows everything literally but cannot be ended early */
	pg_escape_md_code(&b, "a`b<c>|\n\x01");
	ck_assert_str_eq(b.ptr, "`a'b<c>| \xef\xbf\xbd`");
	pg_buf_reset(&b);
	pg_escape_html(&b, "\"x\" & 'y' <z>");
	ck_assert_str_eq(b.ptr, "&quot;x&quot; &amp; &#39;y&#39; &lt;z&gt;");
	pg_buf_release(&b);
	ck_assert_uint_eq(pg_utf8_prefix("ab\xc3\xa9", 3), 2);
	ck_assert_uint_eq(pg_utf8_prefix("ab\xc3\xa9", 4), 4);
}
END_TEST

START_TEST(fences_outgrow_backtick_runs)
{
	struct pg_buf b = PG_BUF_INIT;

	pg_md_fenced(&b, "json", "{\"name\": \"a````b\"}");
	ck_assert_str_eq(b.ptr, "`````json\n{\"name\": \"a````b\"}\n`````\n");
	pg_buf_reset(&b);
	pg_md_fenced(&b, "json", "[]\n");
	ck_assert_str_eq(b.ptr, "```json\n[]\n```\n");
	pg_buf_release(&b);
}
END_TEST

static const char report_md[] = "## Latency tests\n\n"
				"- Input length: 32 tokens.\n\n"
				"| Test name | GPU | Mean latency (ms) |\n"
				"|:---|:---|---:|\n"
				"| latency_llama8B_tp1 | 8xH100 | 924.709 |\n";
static const char comparison_md[] =
	"| Test | Metric | Baseline | Current | Change | Verdict |\n"
	"|:---|:---|---:|---:|---:|:---|\n"
	"| latency_llama8B_tp1 | Median latency (ms) | 910.2 | 924.7 | +1.6% | unchanged |\n";
static const char json_section[] =
	"[{\"Test name\": \"latency_llama8B_tp1\", \"Mean latency (ms)\": 924.709}]";

static const char *const facts[] = { "step :h100: perf", "baseline main @ 9f8e7d6 (merge-base)",
				     "commit 1a2b3c4" };
/* clang-format off */
static const struct pg_annotation_chart charts[] = {
	{ "results/charts/serving_serving_llama8B_tp1_sharegpt.svg", "serving_llama8B_tp1_sharegpt: QPS sweep" },
	{ "results/charts/latency.svg", "Latency tests" },
};
/* clang-format on */

static struct pg_annotation base_annotation(void)
{
	struct pg_annotation a = { 0 };

	a.gpu = "H100";
	a.compared = true;
	a.n_tests = 14;
	a.counts.tests = 14;
	a.facts = facts;
	a.n_facts = 3;
	a.charts = charts;
	a.n_charts = 2;
	a.report_md = report_md;
	a.comparison_md = comparison_md;
	a.json_section = json_section;
	a.report_artifact = "results/benchmark_results.md";
	a.comparison_artifact = "results/comparison.md";
	a.json_artifact = "results/benchmark_results.json";
	a.job_url = "https://buildkite.com/acme/perf/builds/12#0190-job";
	return a;
}

static void render_golden(const struct pg_annotation *a, const char *golden)
{
	struct pg_buf b = PG_BUF_INIT;
	struct pg_annotation_result res;

	ck_assert_int_eq(pg_annotation_render(&b, a, PG_ANNOTATION_MAX_BYTES - 1, &res), 0);
	ck_assert_int_eq(res.level, PG_ANNOTATION_FULL);
	tu_assert_golden(golden, b.ptr);
	pg_buf_release(&b);
}

START_TEST(golden_pass)
{
	struct pg_annotation a = base_annotation();
	struct pg_buf h = PG_BUF_INIT;

	a.status = PG_ANNOTATION_PASS;
	a.counts.improved = 2;
	pg_annotation_headline(&h, &a);
	ck_assert_str_eq(h.ptr, "H100: no regressions in 14 tests, 2 improved");
	ck_assert_str_eq(pg_annotation_style(a.status), "success");
	render_golden(&a, "golden/annotations/pass.md");
	pg_buf_release(&h);
}
END_TEST

/* clang-format off */
static const struct pg_annotation_row rows[] = {
	{ "serving_llama8B_tp1_sharegpt_qps_4", "Median TTFT (ms)", 108.9, 130.2, 19.559, 4, PG_TONE_BAD, "regressed" },
	{ "latency_llama70B_tp4", "Median latency (ms)", 2530.1, 2702.4, 6.81, 3, PG_TONE_BAD, "regressed" },
	{ "serving_llama8B_tp1_sharegpt_qps_inf", "P99 TPOT (ms)", 58.2, 61.3, 5.33, 7, PG_TONE_WARN, "noisy, warns only" },
	{ "throughput_llama8B_tp1", "Tput (req/s)", NAN, 22.84, NAN, 2.5, PG_TONE_NONE, "new" },
	/* colour from the verdict: an unchanged row worse by nothing is not red,
	 * an improvement is green */
	{ "latency_llama8B_tp1", "Median latency (ms)", 910.2, 910.2, 0.0, 3, PG_TONE_NONE, "unchanged" },
	{ "throughput_llama70B_tp4", "Tput (req/s)", 4.1, 4.5, 9.76, 3, PG_TONE_GOOD, "improved" },
};
/* clang-format on */

START_TEST(golden_warning)
{
	struct pg_annotation a = base_annotation();
	struct pg_buf h = PG_BUF_INIT;

	a.status = PG_ANNOTATION_WARNING;
	a.counts.warnings = 2;
	a.rows = rows + 2;
	a.n_rows = 2;
	pg_annotation_headline(&h, &a);
	ck_assert_str_eq(h.ptr, "H100: no regressions in 14 tests, 2 with warnings");
	ck_assert_str_eq(pg_annotation_style(a.status), "warning");
	render_golden(&a, "golden/annotations/warning.md");
	pg_buf_release(&h);
}
END_TEST

/* A pull request that loosened its thresholds: the note, then the diff
 * folded under a title that cannot inject HTML, cut after 120 lines, in a
 * fence its content cannot close. */
START_TEST(golden_pull_request_thresholds_change)
{
	struct pg_annotation a = base_annotation();
	const char *notes[] = {
		"this pull request changes thresholds/H100.yml (+2 -2 lines): the gate "
		"used the base branch's copy (main at 1a2b3c4d5e6f, the merge-base); "
		"the change applies once it is merged"
	};
	struct pg_buf diff = PG_BUF_INIT, body = PG_BUF_INIT;
	struct pg_annotation_result res;

	pg_buf_puts(&diff, "diff --git a/thresholds/H100.yml b/thresholds/H100.yml\n"
			   "--- a/thresholds/H100.yml\n"
			   "+++ b/thresholds/H100.yml\n"
			   "@@ -3,4 +3,4 @@ policy:\n"
			   "   metrics:\n"
			   "-    output_throughput: { gate: true, tolerance: 3% }\n"
			   "+    output_throughput: { gate: false, tolerance: 3% }\n"
			   "+    # ``` cannot close the fence\n");
	a.status = PG_ANNOTATION_REGRESSION;
	a.counts.regressed = 2;
	a.counts.regressed_metrics = 2;
	a.rows = rows;
	a.n_rows = 2;
	a.notes = notes;
	a.n_notes = 1;
	a.policy_diff = diff.ptr;
	a.policy_diff_title = "thresholds/H100.yml: this pull request against main at 1a2b3c4d5e6f";
	render_golden(&a, "golden/annotations/pr-thresholds.md");

	/* a rewrite of a whole file of baselines is cut */
	for (int i = 0; i < 300; i++)
		pg_buf_printf(&diff, "+    point_%d: { suite: serving }\n", i);
	a.policy_diff = diff.ptr;
	a.policy_diff_title = "<b>x</b>";
	ck_assert_int_eq(pg_annotation_render(&body, &a, PG_ANNOTATION_MAX_BYTES - 1, &res), 0);
	ck_assert_ptr_nonnull(strstr(body.ptr, "<summary>&lt;b&gt;x&lt;/b&gt;</summary>"));
	ck_assert_ptr_nonnull(
		strstr(body.ptr, "+    point_111: { suite: serving }\n… 188 more lines\n"));
	ck_assert_ptr_null(strstr(body.ptr, "point_112"));
	pg_buf_release(&body);
	pg_buf_release(&diff);
}
END_TEST

/* clang-format off */
static const struct pg_annotation_evidence evidence[] = {
	{ "`serving_a_qps_inf` · Output token throughput (tok/s): 5489.96 against 6045 (-9.2%), the median of 5 runs of main, 6e2066160a62..8d508923904a (2026-11-22). Fails beyond -2.5% (the policy's tolerance). Tested against how much main's runs vary from one to the next: noise alone gives so large a change with p = 9.7e-08 (8.7e-07 allowing for the step's other tests). 95% interval of the change: -9.4% to -8.9%.",
	  "serving_a_qps_inf", { "results/serving_a_qps_inf.json", "results/serving_a.server.log", "results/confirm/serving_a_qps_inf.json", "results/confirm/serving_a.server.log" },
	  "`serving_a_qps_inf` · Output token throughput (tok/s): 6045 → 5489.96 (-9.2%), fails beyond -2.5%; reproduced: the re-run -9.0%." },
	{ "`serving_a_qps_inf` · Median TTFT (ms): 17.8 against 15.9 (+12.1%), the median of 5 repeats. Fails beyond +4.0% (the policy's tolerance). Decided by the limit alone. <b>No</b> interval.",
	  "serving_a_qps_inf", { "results/serving_a_qps_inf.json", "results/serving_a.server.log", NULL, NULL },
	  "`serving_a_qps_inf` · Median TTFT (ms): 15.9 → 17.8 (+12.1%), fails beyond +4.0%; reproduced: the re-run +11.9%." },
	/* a line alone: shown as it is, nothing folded for it */
	{ "`serving_b_qps_4` · Output token throughput (tok/s): 900 against 1000 (-10.0%).",
	  "serving_b_qps_4", { "results/serving_b_qps_4.json", "results/serving_b.server.log", NULL, NULL }, NULL },
};
/* clang-format on */

static const char *const next_points[] = { "serving_llama8B_tp1_sharegpt_qps_4",
					   "latency_llama70B_tp4" };

START_TEST(golden_regression)
{
	struct pg_annotation a = base_annotation();
	struct pg_buf h = PG_BUF_INIT;

	/* the regressions' evidence, with their files: linked while
	 * Buildkite's ten artifact:// references last, the rest named */
	a.evidence = evidence;
	a.n_evidence = 3;
	a.evidence_total = 4;
	/* what to do next: this step on the points that failed, and the
	 * reviewed update of the thresholds file */
	a.next = (struct pg_annotation_next){ .step = "perf-h100",
					      .points = next_points,
					      .n_points = 2,
					      .results_dir = "results",
					      .accept = PG_ACCEPT_THRESHOLDS,
					      .thresholds = "thresholds/H100.yml" };

	a.status = PG_ANNOTATION_REGRESSION;
	a.counts.regressed = 2;
	a.counts.regressed_metrics = 3;
	a.counts.warnings = 1;
	a.rows = rows;
	a.n_rows = 6;
	pg_annotation_headline(&h, &a);
	ck_assert_str_eq(h.ptr, "H100: 2 of 14 tests regressed (3 metrics), 1 with warnings");
	ck_assert_str_eq(pg_annotation_style(a.status), "error");
	ck_assert_str_eq(pg_annotation_status_name(a.status), "regression");
	render_golden(&a, "golden/annotations/regression.md");
	pg_buf_release(&h);
}
END_TEST

START_TEST(golden_error)
{
	struct pg_annotation a = base_annotation();
	/* clang-format off */
	const char *notes[] = {
		"serving_llama8B_tp1_sharegpt_qps_16: server never became ready within 1200 s (see results/serving_llama8B_tp1_sharegpt.server.log)",
		"latency_llama70B_tp4: tp 4 exceeds the 1 GPU on this agent",
	};
	/* clang-format on */

	a.status = PG_ANNOTATION_ERROR;
	a.compared = false;
	a.n_errors = 2;
	a.notes = notes;
	a.n_notes = 2;
	a.comparison_md = NULL;
	a.json_section = NULL;
	render_golden(&a, "golden/annotations/error.md");
}
END_TEST

START_TEST(golden_not_compared)
{
	struct pg_annotation a = base_annotation();
	struct pg_buf h = PG_BUF_INIT;

	a.compared = false;
	a.comparison_md = NULL;
	a.comparison_artifact = NULL;
	a.n_tests = 1;
	pg_annotation_headline(&h, &a);
	ck_assert_str_eq(h.ptr, "H100: 1 test ran, no baseline comparison");
	pg_buf_release(&h);
}
END_TEST

/* A result set of 10,000 test points, every one in the attention table,
 * with report, comparison and JSON sections to match. */
struct big {
	struct pg_annotation_row *rows;
	char **names;
	struct pg_buf report, comparison, json;
	size_t n;
};

static void big_make(struct big *g, size_t n)
{
	memset(g, 0, sizeof(*g));
	g->n = n;
	g->rows = calloc(n, sizeof(*g->rows));
	g->names = calloc(n, sizeof(char *));
	pg_buf_puts(&g->report, "| Test name | GPU | Output Tput (tok/s) |\n|:---|:---|---:|\n");
	pg_buf_puts(&g->comparison,
		    "| Test | Metric | Baseline | Current |\n|:---|:---|---:|---:|\n");
	pg_buf_putc(&g->json, '[');
	for (size_t i = 0; i < n; i++) {
		char name[96];
		snprintf(name, sizeof(name), "serving_llama8B_tp1_sharegpt_qps_%zu_concurrency_%zu",
			 i % 97, i);
		g->names[i] = strdup(name);
		g->rows[i] = (struct pg_annotation_row){
			g->names[i], "Output token throughput (tok/s)",
			2418.1,      2201.7,
			-8.95,       2.5,
			PG_TONE_BAD, "regressed"
		};
		pg_buf_printf(&g->report, "| %s | 8xH100 | 2201.7 |\n", name);
		pg_buf_printf(&g->comparison, "| %s | Output Tput (tok/s) | 2418.1 | 2201.7 |\n",
			      name);
		pg_buf_printf(&g->json,
			      "%s{\"Test name\": \"%s\", \"Output Tput (tok/s)\": 2201.7, "
			      "\"Median TTFT (ms)\": 108.9, \"P99 TTFT (ms)\": 201.4}",
			      i ? ", " : "", name);
	}
	pg_buf_putc(&g->json, ']');
}

static void big_free(struct big *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->names[i]);
	free(g->names);
	free(g->rows);
	pg_buf_release(&g->report);
	pg_buf_release(&g->comparison);
	pg_buf_release(&g->json);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

START_TEST(degrades_step_by_step_under_the_limit)
{
	struct big g;
	struct pg_annotation a = base_annotation();
	struct pg_buf b = PG_BUF_INIT;
	struct pg_annotation_result res;
	size_t full;

	big_make(&g, 10000);
	a.status = PG_ANNOTATION_REGRESSION;
	a.n_tests = g.n;
	a.counts.tests = g.n;
	a.counts.regressed = g.n;
	a.counts.regressed_metrics = g.n;
	a.rows = g.rows;
	a.n_rows = g.n;
	a.report_md = g.report.ptr;
	a.comparison_md = g.comparison.ptr;
	a.json_section = g.json.ptr;

	/* with no limit everything is inline: far over 1 MiB */
	ck_assert_int_eq(pg_annotation_render(&b, &a, (size_t)-1, &res), 0);
	full = b.len;
	ck_assert_uint_gt(full, PG_ANNOTATION_MAX_BYTES);
	ck_assert_int_eq(res.level, PG_ANNOTATION_FULL);

	/* Buildkite's limit: the attention table alone is ~1.4 MB, so rows go */
	pg_buf_reset(&b);
	ck_assert_int_eq(pg_annotation_render(&b, &a, PG_ANNOTATION_MAX_BYTES - 1, &res), 0);
	ck_assert_uint_lt(b.len, PG_ANNOTATION_MAX_BYTES);
	ck_assert_uint_gt(b.len, PG_ANNOTATION_MAX_BYTES - 400); /* as much as fits */
	ck_assert_int_eq(res.level, PG_ANNOTATION_ROWS_TRIMMED);
	ck_assert_uint_gt(res.rows_shown, 1000);
	ck_assert_uint_lt(res.rows_shown, g.n);
	ck_assert_uint_eq(count(b.ptr, "| regressed |"), res.rows_shown);
	ck_assert_ptr_nonnull(
		strstr(b.ptr, "more rows were left out to keep this annotation under 1 MiB"));
	ck_assert_ptr_nonnull(strstr(b.ptr,
				     "The full report is too large for an annotation: it is in "
				     "<code>benchmark_results.md</code> in the artifacts."));
	ck_assert_ptr_null(strstr(b.ptr, "<details>\n<summary>JSON"));
	ck_assert_uint_le(count(b.ptr, "artifact://"), PG_ANNOTATION_MAX_ARTIFACT_REFS);
	ck_assert_str_eq(b.ptr + b.len - 1, "\n");

	/* fewer rows: the tables fit once JSON is linked */
	a.n_rows = 100;
	a.json_section = g.json.ptr;
	pg_buf_reset(&b);
	ck_assert_int_eq(pg_annotation_render(&b, &a, 2200000, &res), 0);
	ck_assert_int_eq(res.level, PG_ANNOTATION_JSON_LINKED);
	ck_assert_ptr_nonnull(
		strstr(b.ptr, "The JSON section is too large for an annotation: it is in "));
	ck_assert_ptr_nonnull(
		strstr(b.ptr, "<details>\n<summary>Full report</summary>\n\n| Test name |"));
	pg_buf_reset(&b);
	ck_assert_int_eq(pg_annotation_render(&b, &a, PG_ANNOTATION_MAX_BYTES - 1, &res), 0);
	ck_assert_int_eq(res.level, PG_ANNOTATION_TABLES_LINKED);
	ck_assert_uint_eq(res.rows_shown, 100);

	/* too small a limit for even the smallest form */
	pg_buf_reset(&b);
	ck_assert_int_eq(pg_annotation_render(&b, &a, 100, &res), -1);
	ck_assert_uint_eq(b.len, 0);
	pg_buf_release(&b);
	big_free(&g);
}
END_TEST

START_TEST(golden_degraded)
{
	struct pg_annotation a = base_annotation();
	struct pg_buf b = PG_BUF_INIT;
	struct pg_annotation_result res;
	size_t lo = 0, hi = 1 << 20;

	a.status = PG_ANNOTATION_REGRESSION;
	a.counts.regressed = 2;
	a.counts.regressed_metrics = 2;
	a.rows = rows;
	a.n_rows = 4;
	/* the smallest limit at which every row still fits ... */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		pg_buf_reset(&b);
		if (pg_annotation_render(&b, &a, mid, &res) == 0 && res.rows_shown == a.n_rows)
			hi = mid;
		else
			lo = mid + 1;
	}
	pg_buf_reset(&b);
	ck_assert_int_eq(pg_annotation_render(&b, &a, lo, &res), 0);
	ck_assert_int_eq(res.level, PG_ANNOTATION_TABLES_LINKED);
	ck_assert_uint_eq(b.len, lo);
	/* ... and one byte less trims rows, with a note */
	pg_buf_reset(&b);
	ck_assert_int_eq(pg_annotation_render(&b, &a, lo - 1, &res), 0);
	ck_assert_int_eq(res.level, PG_ANNOTATION_ROWS_TRIMMED);
	ck_assert_uint_ge(res.rows_shown, 1);
	ck_assert_uint_lt(res.rows_shown, 4);
	ck_assert_uint_lt(b.len, lo);
	tu_assert_golden("golden/annotations/degraded.md", b.ptr);

	/* with every chart shown, still no more than 10 artifact references */
	{
		struct pg_annotation_chart many[PG_ANNOTATION_MAX_CHARTS + 3];
		for (size_t i = 0; i < PG_ANNOTATION_MAX_CHARTS + 3; i++)
			many[i] = charts[i % 2];
		a.charts = many;
		a.n_charts = PG_ANNOTATION_MAX_CHARTS + 3;
		int levels_seen = 0;
		for (size_t limit = 1 << 20; limit > 500; limit -= 50) {
			pg_buf_reset(&b);
			if (pg_annotation_render(&b, &a, limit, &res) < 0)
				break;
			levels_seen |= 1 << res.level;
			ck_assert_uint_le(count(b.ptr, "artifact://"),
					  PG_ANNOTATION_MAX_ARTIFACT_REFS);
			if (limit > 4000)
				limit = 4000;
		}
		ck_assert_int_eq(levels_seen, 0xf); /* every level was checked */
	}
	pg_buf_release(&b);
}
END_TEST

START_TEST(hostile_names_stay_in_their_cells)
{
	struct pg_annotation a = base_annotation();
	/* clang-format off */
	struct pg_annotation_row r[] = {
		{ "x | y</details><script>alert(1)</script>\n| forged | row |", "m`v`", 1, 2, 100, 5, 1,
		  "regressed" },
	};
	/* clang-format on */
	struct pg_annotation_chart c[] = { { "results/charts/a\"onerror=\"x.svg", "<b>t</b>" } };
	struct pg_buf b = PG_BUF_INIT;
	struct pg_annotation_result res;
	const char *line;

	a.status = PG_ANNOTATION_REGRESSION;
	a.rows = r;
	a.n_rows = 1;
	a.charts = c;
	a.n_charts = 1;
	/* other renderers' markdown: their own inline HTML stays, a name's does not */
	a.report_md =
		"| x </details><script>alert(1)</script><img src=x> | <span class=\"red\">+5%</span> |\n";
	a.comparison_md = "<span class=\"green\">-3%</span> <b>bold</b>\n";
	a.json_section = "{\"t\": \"</details><script>\"}";
	ck_assert_int_eq(pg_annotation_render(&b, &a, PG_ANNOTATION_MAX_BYTES - 1, &res), 0);
	ck_assert_ptr_nonnull(
		strstr(b.ptr, "| x &lt;/details>&lt;script>alert(1)&lt;/script>&lt;img src=x> | "
			      "<span class=\"red\">+5%</span> |"));
	ck_assert_ptr_nonnull(strstr(b.ptr, "<span class=\"green\">-3%</span> &lt;b>bold&lt;/b>"));
	ck_assert_ptr_nonnull(strstr(b.ptr, "```json\n{\"t\": \"</details><script>\"}\n```"));
	ck_assert_ptr_null(strstr(b.ptr, "<script>alert"));
	ck_assert_ptr_null(strstr(b.ptr, "</details><script>alert"));
	ck_assert_ptr_null(strstr(b.ptr, "onerror=\""));
	ck_assert_ptr_null(strstr(b.ptr, "<b>"));
	/* the row is one line with exactly 8 cell separators */
	line = strstr(b.ptr, "| x ");
	ck_assert_ptr_nonnull(line);
	ck_assert_uint_eq(count(line, "\n") > 0, 1);
	{
		size_t pipes = 0;
		/* GFM splits cells at pipes that are not backslash-escaped */
		for (const char *p = line; *p != '\n'; p++)
			pipes += *p == '|' && (p == line || p[-1] != '\\');
		ck_assert_uint_eq(pipes, 8);
	}
	pg_buf_release(&b);
}
END_TEST

START_TEST(charts_capped_by_artifact_references)
{
	struct pg_annotation a = base_annotation();
	struct pg_annotation_chart many[12];
	char paths[12][64];
	struct pg_buf b = PG_BUF_INIT;
	struct pg_annotation_result res;

	for (int i = 0; i < 12; i++) {
		snprintf(paths[i], sizeof(paths[i]), "results/charts/c%d.svg", i);
		many[i] = (struct pg_annotation_chart){ paths[i], "chart" };
	}
	a.charts = many;
	a.n_charts = 12;
	ck_assert_int_eq(pg_annotation_render(&b, &a, PG_ANNOTATION_MAX_BYTES - 1, &res), 0);
	ck_assert_uint_eq(res.charts_shown, PG_ANNOTATION_MAX_CHARTS);
	ck_assert_uint_eq(count(b.ptr, "artifact://"), PG_ANNOTATION_MAX_ARTIFACT_REFS);
	ck_assert_ptr_nonnull(strstr(b.ptr, "5 more charts in the artifacts."));
	pg_buf_release(&b);
}
END_TEST

/* The evidence's files share Buildkite's ten artifact:// references with
 * the footer and the charts: the footer first, the evidence next (each
 * point's files once), one chart kept; outside Buildkite every file is
 * a relative link. */
START_TEST(evidence_files_within_the_artifact_references)
{
	struct pg_annotation a = base_annotation();
	struct pg_buf b = PG_BUF_INIT;
	struct pg_annotation_result res;

	a.trends_artifact = "results/trends/H100/index.html";
	a.evidence = evidence;
	a.n_evidence = 3;
	a.evidence_total = 3;
	ck_assert_int_eq(pg_annotation_render(&b, &a, PG_ANNOTATION_MAX_BYTES - 1, &res), 0);
	/* 4 footer links, 5 of the evidence's 6 files, 1 chart */
	ck_assert_uint_eq(count(b.ptr, "artifact://"), PG_ANNOTATION_MAX_ARTIFACT_REFS);
	ck_assert_uint_eq(res.charts_shown, 1);
	ck_assert_ptr_nonnull(strstr(
		b.ptr,
		"<a href=\"artifact://results/confirm/serving_a.server.log\">re-run's server log</a>"));
	ck_assert_ptr_nonnull(strstr(
		b.ptr,
		" Files: <a href=\"artifact://results/serving_b_qps_4.json\">result</a> · server log <code>serving_b.server.log</code> (in the artifacts)\n"));
	/* the second line of the same point links nothing again; no HTML of
	 * the gate's text gets through */
	ck_assert_uint_eq(count(b.ptr, "//results/serving_a_qps_inf.json\""), 1);
	ck_assert_ptr_null(strstr(b.ptr, "<b>No</b>"));
	ck_assert_ptr_nonnull(strstr(b.ptr, "&lt;b>No&lt;/b> interval.\n"));
	pg_buf_release(&b);

	/* a local annotation.md: relative paths, all linked, every chart */
	a.local_dir = "results";
	ck_assert_int_eq(pg_annotation_render(&b, &a, PG_ANNOTATION_MAX_BYTES - 1, &res), 0);
	ck_assert_uint_eq(count(b.ptr, "artifact://"), 0);
	ck_assert_uint_eq(res.charts_shown, 2);
	ck_assert_ptr_nonnull(strstr(b.ptr, "<a href=\"serving_b.server.log\">server log</a>\n"));
	pg_buf_release(&b);
}
END_TEST

/* Evidence a pull request can make huge (a thresholds file's source, long
 * point names) is cut in the annotation, so the annotation still posts; a
 * file name Buildkite's artifact:// rewrite may read differently (white
 * space, '#', '%') is named, not linked. */
START_TEST(evidence_is_bounded_and_links_only_plain_names)
{
	struct pg_annotation a = base_annotation();
	struct pg_annotation_evidence ev[20];
	struct pg_buf huge = PG_BUF_INIT, b = PG_BUF_INIT;
	struct pg_annotation_result res;

	pg_buf_puts(&huge, "Output token throughput −12.0%: the baseline is ");
	while (huge.len < 100000)
		pg_buf_puts(&huge, "a thresholds file's source, ");
	for (size_t i = 0; i < 20; i++)
		ev[i] = (struct pg_annotation_evidence){ .text = huge.ptr, .point = "p" };
	ev[0].files[PG_EVIDENCE_RESULT] = "results/serving_a b#1%20.json";
	ev[0].files[PG_EVIDENCE_LOG] = "results/serving_a.server.log";
	a.evidence = ev;
	a.n_evidence = 20;
	a.evidence_total = 20;
	ck_assert_int_eq(pg_annotation_render(&b, &a, PG_ANNOTATION_MAX_BYTES - 1, &res), 0);
	ck_assert_uint_lt(b.len, 100000);
	ck_assert_uint_eq(count(b.ptr, "(cut here: the comparison has the whole line)"), 20);
	ck_assert_ptr_nonnull(strstr(b.ptr, "result <code>serving_a b#1%20.json</code>"));
	ck_assert_ptr_null(strstr(b.ptr, "artifact://results/serving_a b"));
	ck_assert_ptr_nonnull(strstr(
		b.ptr, "<a href=\"artifact://results/serving_a.server.log\">server log</a>"));
	pg_buf_release(&b);
	pg_buf_release(&huge);
}
END_TEST

/* The next steps of a failing step: the command that runs it again for the
 * same build (a pull request's variables, its label), on the points that
 * failed (as a regular expression any name can sit in without quoting),
 * and how each kind of baseline takes a new level; nothing when the step
 * did not fail. */
START_TEST(next_steps_of_a_failing_step)
{
	static const char *const odd[] = { "serving_a.b (x)'`$HOME", "latency_8B" };
	static const char *const many[] = { "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9" };
	struct pg_annotation a = base_annotation();
	struct pg_buf b = PG_BUF_INIT;
	struct pg_annotation_result res;

	a.status = PG_ANNOTATION_REGRESSION;
	a.counts.regressed = 2;
	a.next = (struct pg_annotation_next){ .step = ":h100: perf",
					      .pull_request = "4711",
					      .base_branch = "main",
					      .label = "perf-benchmarks",
					      .points = odd,
					      .n_points = 2,
					      .results_dir = "out",
					      .accept = PG_ACCEPT_HISTORY };
	ck_assert_int_eq(pg_annotation_render(&b, &a, PG_ANNOTATION_MAX_BYTES - 1, &res), 0);
	ck_assert_msg(strstr(b.ptr,
			     "**Next**\n\n- Run it again on a GPU machine, in a checkout of "
			     "this commit: `BUILDKITE_PULL_REQUEST=4711 "
			     "BUILDKITE_PULL_REQUEST_BASE_BRANCH=main "
			     "BUILDKITE_PULL_REQUEST_LABELS=perf-benchmarks perfgate buildkite "
			     "--pipeline PIPELINE.yml --step ':h100: perf' --filter "
			     "'^(serving_a.b..x....HOME|latency_8B)$'` (PIPELINE.yml: the file "
			     "that defines this step). It runs the points that failed as this "
			     "job did and writes this annotation to `out/annotation.md`, posting "
			     "nothing"),
		      "%s", b.ptr);
	ck_assert_ptr_nonnull(strstr(b.ptr,
				     "- If the new level is meant: nothing to update; main's "
				     "history follows once it persists (docs/gate.md).\n"));
	/* the next steps come after the evidence, before the charts */
	ck_assert(strstr(b.ptr, "**Next**") < strstr(b.ptr, "<summary>Charts"));

	/* more points than a filter names: the whole step */
	pg_buf_reset(&b);
	a.next.points = many;
	a.next.n_points = 9;
	a.next.accept = PG_ACCEPT_AB;
	ck_assert_int_eq(pg_annotation_render(&b, &a, PG_ANNOTATION_MAX_BYTES - 1, &res), 0);
	ck_assert_ptr_null(strstr(b.ptr, "--filter"));
	ck_assert_ptr_nonnull(strstr(b.ptr, "It runs the step's points as this job did"));
	ck_assert_ptr_nonnull(strstr(b.ptr, "- If the change is meant: an A/B step compares this "
					    "pull request with its base, not with a baseline"));

	/* mode: report: the step's own command, then the gate on its results */
	pg_buf_reset(&b);
	a.next = (struct pg_annotation_next){ .step = "perf",
					      .report = true,
					      .results_dir = "results",
					      .history_repo = "git@example.com:perf.git",
					      .accept = PG_ACCEPT_HISTORY };
	ck_assert_int_eq(pg_annotation_render(&b, &a, PG_ANNOTATION_MAX_BYTES - 1, &res), 0);
	ck_assert_ptr_nonnull(strstr(b.ptr, "- Run it again: the step's command on a GPU machine, "
					    "then `perfgate gate results --baseline git --repo "
					    "git@example.com:perf.git`.\n"));

	/* a thresholds file: the reviewed update from main's runs */
	pg_buf_reset(&b);
	a.next.report = false;
	a.next.accept = PG_ACCEPT_THRESHOLDS;
	a.next.thresholds = "thresholds/H100.yml";
	ck_assert_int_eq(pg_annotation_render(&b, &a, PG_ANNOTATION_MAX_BYTES - 1, &res), 0);
	ck_assert_ptr_nonnull(strstr(b.ptr,
				     "- If the new level is meant: update "
				     "`thresholds/H100.yml` from main's runs in a pull "
				     "request and have it reviewed: `perfgate baseline update "
				     "thresholds/H100.yml --from RUN1 --from RUN2 --from RUN3`"));

	/* a step that passed, or warned, has no next steps */
	for (int st = PG_ANNOTATION_PASS; st <= PG_ANNOTATION_ERROR; st++) {
		if (st == PG_ANNOTATION_REGRESSION)
			continue;
		pg_buf_reset(&b);
		a.status = (enum pg_annotation_status)st;
		ck_assert_int_eq(pg_annotation_render(&b, &a, PG_ANNOTATION_MAX_BYTES - 1, &res),
				 0);
		ck_assert_ptr_null(strstr(b.ptr, "**Next**"));
	}
	pg_buf_release(&b);
}
END_TEST

/* The evidence: a short line per regression, the whole account of each
 * folded under them; a long account is cut in the fold too. */
START_TEST(evidence_lines_with_the_details_folded)
{
	struct pg_annotation a = base_annotation();
	struct pg_buf b = PG_BUF_INIT;
	struct pg_annotation_result res;
	const char *lines, *fold, *first_text;

	a.status = PG_ANNOTATION_REGRESSION;
	a.evidence = evidence;
	a.n_evidence = 3;
	a.evidence_total = 3;
	ck_assert_int_eq(pg_annotation_render(&b, &a, PG_ANNOTATION_MAX_BYTES - 1, &res), 0);
	lines = strstr(b.ptr,
		       "**Evidence**\n\n- `serving_a_qps_inf` · Output token throughput "
		       "(tok/s): 6045 → 5489.96 (-9.2%), fails beyond -2.5%; reproduced: the "
		       "re-run -9.0%. Files: ");
	fold = strstr(b.ptr,
		      "<details>\n<summary>How each was decided</summary>\n\n- "
		      "`serving_a_qps_inf` · Output token throughput (tok/s): 5489.96 against "
		      "6045 (-9.2%), the median of 5 runs of main");
	ck_assert_msg(lines && fold && lines < fold, "%s", b.ptr);
	/* the account is in the fold only; a row without a line shows its text
	 * among the lines, and once */
	first_text = strstr(b.ptr, "5489.96 against 6045");
	ck_assert_ptr_eq(first_text, strstr(fold, "5489.96 against 6045"));
	ck_assert_uint_eq(count(b.ptr, "900 against 1000 (-10.0%)"), 1);
	ck_assert(strstr(b.ptr, "900 against 1000 (-10.0%)") < fold);
	/* the text's markup is neutralised in the fold as in the lines */
	ck_assert_ptr_nonnull(strstr(fold, "&lt;b>No&lt;/b> interval."));
	pg_buf_release(&b);
}
END_TEST

/* ---- the Buildkite environment ---- */

static const char *const *env_table;
static const char *table_lookup(void *ctx, const char *name)
{
	(void)ctx;
	for (size_t i = 0; env_table[i]; i += 2)
		if (!strcmp(env_table[i], name))
			return env_table[i + 1];
	return NULL;
}

START_TEST(pull_request_environment)
{
	/* clang-format off */
	static const char *const pr[] = {
		"BUILDKITE", "true", "BUILDKITE_PULL_REQUEST", "4711",
		"BUILDKITE_PULL_REQUEST_BASE_BRANCH", "main",
		"BUILDKITE_PULL_REQUEST_LABELS", " ci ,Perf-Benchmarks,,docs ",
		"BUILDKITE_BRANCH", "feature/x", "BUILDKITE_BUILD_URL", "https://buildkite.com/a/b/builds/7",
		"BUILDKITE_JOB_ID", "j-1", "BUILDKITE_LABEL", ":h100: perf", NULL,
	};
	/* clang-format on */
	static const char *const push[] = {
		"BUILDKITE",
		"true",
		"BUILDKITE_PULL_REQUEST",
		"false",
		"BUILDKITE_PULL_REQUEST_LABELS",
		"",
		"BUILDKITE_BRANCH",
		"trunk",
		"BUILDKITE_PIPELINE_DEFAULT_BRANCH",
		"trunk",
		"BUILDKITE_STEP_KEY",
		"perf-h100",
		NULL,
	};
	const char *want[] = { "perf-benchmarks" };
	const char *other[] = { "nope" };
	struct pg_bkenv e;
	char *url;

	env_table = pr;
	pg_bkenv_load(&e, table_lookup, NULL);
	ck_assert(e.in_buildkite);
	ck_assert(pg_bkenv_is_pr(&e));
	ck_assert_uint_eq(e.labels.n, 3);
	ck_assert_str_eq(e.labels.v[1], "Perf-Benchmarks");
	ck_assert(pg_bkenv_has_label(&e, want, 1));
	ck_assert(!pg_bkenv_has_label(&e, other, 1));
	ck_assert(!pg_bkenv_on_default_branch(&e));
	ck_assert_str_eq(e.default_branch, "main");
	ck_assert_str_eq(pg_bkenv_step_name(&e), ":h100: perf");
	url = pg_bkenv_job_url(&e);
	ck_assert_str_eq(url, "https://buildkite.com/a/b/builds/7#j-1");
	free(url);
	pg_bkenv_release(&e);

	env_table = push;
	pg_bkenv_load(&e, table_lookup, NULL);
	ck_assert(!pg_bkenv_is_pr(&e));
	ck_assert_uint_eq(e.labels.n, 0);
	ck_assert(pg_bkenv_on_default_branch(&e));
	ck_assert_str_eq(pg_bkenv_step_name(&e), "perf-h100");
	ck_assert_ptr_null(pg_bkenv_job_url(&e));
	pg_bkenv_release(&e);
}
END_TEST

START_TEST(plugin_names_as_the_agent_derives_them)
{
	/* clang-format off */
	static const struct {
		const char *source, *name;
	} cases[] = {
		{ "github.com/acme/perfgate-buildkite-plugin#v1.2.0", "perfgate" },
		{ "https://github.com/acme/perfgate-buildkite-plugin.git#v1.2.0", "perfgate" },
		{ "./.buildkite/plugins/perfgate", "perfgate" },
		{ "https://github.com/acme/perf.git/plugin#main", "plugin" },
		{ "github.com/buildkite-plugins/docker-compose-buildkite-plugin#v5", "docker-compose" },
		{ "~/Development/plugins/UPPER     CASE_party", "upper-case-party" },
	};
	/* clang-format on */
	char out[128];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_str_eq(pg_bk_plugin_name(out, sizeof(out), cases[i].source),
				 cases[i].name);
}
END_TEST

START_TEST(our_entry_in_buildkite_plugins)
{
	struct pg_error err = PG_ERROR_INIT;
	char *source = NULL;
	json_t *c;

	c = pg_bk_plugins_find(
		"[{\"github.com/buildkite-plugins/docker-buildkite-plugin#v3\":{\"image\":\"x\"}},"
		"{\"github.com/acme/perfgate-buildkite-plugin#v1.0.0\":{\"gpu\":\"H100\"}}]",
		&source, &err);
	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(json_string_value(json_object_get(c, "gpu")), "H100");
	ck_assert_str_eq(source, "github.com/acme/perfgate-buildkite-plugin#v1.0.0");
	free(source);
	json_decref(c);

	c = pg_bk_plugins_find("[\"./.buildkite/plugins/perfgate\"]", NULL, &err);
	ck_assert(json_is_object(c) && json_object_size(c) == 0);
	json_decref(c);

	ck_assert_ptr_null(pg_bk_plugins_find("[{\"github.com/x/other-buildkite-plugin#v1\":{}}]",
					      NULL, &err));
	ck_assert_int_eq(err.code, PG_ENOTFOUND);
	ck_assert_ptr_null(pg_bk_plugins_find("{not json", NULL, &err));
	ck_assert_int_eq(err.code, PG_ECONFIG);
	ck_assert_msg(strstr(err.msg, "BUILDKITE_PLUGINS") != NULL, "%s", err.msg);
}
END_TEST

START_TEST(configuration_from_the_job_environment)
{
	struct pg_error err = PG_ERROR_INIT;
	struct pg_bkenv e = { 0 };
	char *source = NULL;
	json_t *c;

	/* BUILDKITE_PLUGIN_CONFIGURATION wins over BUILDKITE_PLUGINS */
	e.plugin_configuration = "{\"gpu\": \"H100\"}";
	e.plugins = "[{\"github.com/acme/perfgate-buildkite-plugin#v1\":{\"gpu\":\"A100\"}}]";
	c = pg_bk_config_from_env(&e, &source, &err);
	ck_assert_str_eq(json_string_value(json_object_get(c, "gpu")), "H100");
	ck_assert_ptr_null(source);
	json_decref(c);

	e.plugin_configuration = NULL;
	c = pg_bk_config_from_env(&e, &source, &err);
	ck_assert_str_eq(json_string_value(json_object_get(c, "gpu")), "A100");
	ck_assert_str_eq(source, "github.com/acme/perfgate-buildkite-plugin#v1");
	free(source);
	json_decref(c);

	/* an array, duplicate keys, no perfgate entry, nothing at all: each a
	 * configuration error that names the variable */
	e.plugin_configuration = "[1]";
	ck_assert_ptr_null(pg_bk_config_from_env(&e, NULL, &err));
	ck_assert_int_eq(err.code, PG_ECONFIG);
	ck_assert_msg(strstr(err.msg, "expected an object") != NULL, "%s", err.msg);
	e.plugin_configuration = "{\"gpu\": \"a\", \"gpu\": \"b\"}";
	ck_assert_ptr_null(pg_bk_config_from_env(&e, NULL, &err));
	ck_assert_int_eq(err.code, PG_ECONFIG);
	ck_assert_msg(strstr(err.msg, "BUILDKITE_PLUGIN_CONFIGURATION") != NULL, "%s", err.msg);
	e.plugin_configuration = NULL;
	e.plugins = "[{\"github.com/x/other-buildkite-plugin#v1\":{}}]";
	ck_assert_ptr_null(pg_bk_config_from_env(&e, NULL, &err));
	ck_assert_int_eq(err.code, PG_ECONFIG);
	e.plugins = "[{\"github.com/acme/perfgate-buildkite-plugin#v1\":[1]}]";
	ck_assert_ptr_null(pg_bk_config_from_env(&e, NULL, &err));
	ck_assert_msg(strstr(err.msg, "not an object") != NULL, "%s", err.msg);
	e.plugins = NULL;
	ck_assert_ptr_null(pg_bk_config_from_env(&e, NULL, &err));
	ck_assert_int_eq(err.code, PG_ECONFIG);
	ck_assert_msg(strstr(err.msg, "BUILDKITE_PLUGIN_CONFIGURATION is not set") != NULL, "%s",
		      err.msg);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("annotation");
	TCase *tc = tcase_create("annotation");

	tcase_add_test(tc, cells_cannot_break_tables_or_inject_html);
	tcase_add_test(tc, fences_outgrow_backtick_runs);
	tcase_add_test(tc, golden_pass);
	tcase_add_test(tc, golden_warning);
	tcase_add_test(tc, golden_regression);
	tcase_add_test(tc, golden_pull_request_thresholds_change);
	tcase_add_test(tc, golden_error);
	tcase_add_test(tc, golden_not_compared);
	tcase_add_test(tc, degrades_step_by_step_under_the_limit);
	tcase_add_test(tc, golden_degraded);
	tcase_add_test(tc, hostile_names_stay_in_their_cells);
	tcase_add_test(tc, charts_capped_by_artifact_references);
	tcase_add_test(tc, evidence_files_within_the_artifact_references);
	tcase_add_test(tc, evidence_is_bounded_and_links_only_plain_names);
	tcase_add_test(tc, next_steps_of_a_failing_step);
	tcase_add_test(tc, evidence_lines_with_the_details_folded);
	tcase_add_test(tc, pull_request_environment);
	tcase_add_test(tc, plugin_names_as_the_agent_derives_them);
	tcase_add_test(tc, our_entry_in_buildkite_plugins);
	tcase_add_test(tc, configuration_from_the_job_environment);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
