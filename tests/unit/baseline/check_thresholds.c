/* thresholds/<GPU>.yml: loading (with positioned errors), writing,
 * updates that rewrite only the baselines, and a pull request's base copy. */
#include "testutil.h"

#include "base/buf.h"
#include "gate/compare.h"
#include "base/error.h"
#include "base/strutil.h"
#include "results/metrics.h"
#include "baseline/thresholds.h"
#include "baseline/thresholds_io.h"

#include <git2.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char good[] =
	"# hand-written comment\n"
	"gpu: H100\n"
	"policy:\n"
	"  step_false_alarm: 2%\n"
	"  rerun_anchors: 4\n"
	"  alpha: 0.01\n" /* the first gate's settings still load, and are ignored */
	"  history_window: 12\n"
	"  min_history: 4\n"
	"  escalate: 12%\n"
	"  metrics:\n"
	"    median_itl_ms: { gate: true, tolerance: 3.5%, floor: 0.2 ms }   # reports lack TPOT\n"
	"    p99_ttft_ms: { escalate: 0 }\n"
	"  tests:\n"
	"    serving_*_qps_inf:\n"
	"      median_ttft_ms: { tolerance: 6% }\n"
	"      \"*\": { recheck: 0.9 }\n"
	"baselines:\n"
	"  serving_x_qps_inf:\n"
	"    suite: serving\n"
	"    qps: inf\n"
	"    gpu: 8xH100\n"
	"    runs: 3\n"
	"    values:\n"
	"      output_throughput: 2400\n"
	"      median_ttft_ms: 41.5\n"
	"    samples:\n"
	"      output_throughput: [2400, 2350, 2450]\n"
	"  latency_y:\n"
	"    suite: latency\n"
	"    values: { median_latency_ms: 1046.8 }\n";

START_TEST(loads_policy_and_baselines)
{
	char *path = tu_tmpdir_path("H100.yml");
	struct pg_policy p;
	struct pg_baseline b;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_rule r;
	const struct pg_base_point *pt;
	const struct pg_base_metric *bm;

	tu_write_file(path, good);
	ck_assert_msg(pg_thresholds_load(path, &p, &b, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(b.gpu, "H100");
	ck_assert_str_eq(b.kind, "thresholds");
	ck_assert_double_eq(p.step_false_alarm, 0.02);
	ck_assert_int_eq(p.rerun_anchors, 4);
	ck_assert_int_eq(p.history_window, 12);
	ck_assert_int_eq(p.min_history, 4);
	ck_assert_double_eq(p.escalate, 0.12);
	pg_policy_rule(&p, "serving_x_qps_1", NULL,
		       pg_metric_by_id(PG_SUITE_SERVING, "median_itl_ms"), &r);
	ck_assert(r.gate);
	ck_assert_double_eq(r.tolerance, 0.035);
	ck_assert_double_eq(r.floor, 0.2);
	pg_policy_rule(&p, "serving_x_qps_1", NULL,
		       pg_metric_by_id(PG_SUITE_SERVING, "p99_ttft_ms"), &r);
	ck_assert_double_eq(r.escalate, 0);
	pg_policy_rule(&p, "serving_x_qps_inf", NULL,
		       pg_metric_by_id(PG_SUITE_SERVING, "median_ttft_ms"), &r);
	ck_assert_double_eq(r.tolerance, 0.06);

	ck_assert_uint_eq(b.n, 2);
	ck_assert_str_eq(b.points[0].name, "latency_y"); /* sorted */
	pt = pg_baseline_find(&b, "serving_x_qps_inf");
	ck_assert(isinf(pt->qps));
	ck_assert_str_eq(pt->gpu, "8xH100");
	ck_assert_int_eq(pt->runs, 3);
	bm = pg_base_point_metric(pt, pg_metric_by_id(PG_SUITE_SERVING, "output_throughput"));
	ck_assert_double_eq(bm->value, 2400);
	ck_assert_uint_eq(bm->n_samples, 3);
	/* three runs' medians: their spread is the measured noise */
	ck_assert_double_eq_tol(bm->noise, 1.4826 * 50 / 2400, 1e-12);
	ck_assert_int_eq(bm->line, 24);
	bm = pg_base_point_metric(pt, pg_metric_by_id(PG_SUITE_SERVING, "median_ttft_ms"));
	ck_assert_uint_eq(bm->n_samples, 0);
	ck_assert(isnan(bm->noise));
	pg_policy_release(&p);
	pg_baseline_release(&b);
	free(path);
}
END_TEST

/* Each broken file, and the one line perfgate says about it. */
/* clang-format off */
static const struct {
	const char *yaml;
	const char *message;
} bad[] = {
	{ "gpu: H100\npolicy:\n  alpha: 0.05\n  metric:\n    x: {}\n",
	  "T.yml:4:3: policy: unknown setting 'metric' (did you mean 'metrics'?)" },
	{ "gpu: H100\npolicy:\n  metrics:\n    median_tft_ms: { tolerance: 3% }\n",
	  "T.yml:4:5: policy.metrics: unknown metric 'median_tft_ms' (did you mean 'median_ttft_ms'?)" },
	{ "policy:\n  metrics:\n    median_ttft_ms: { tolerance: 3 }\n",
	  "T.yml:3:34: policy.metrics.median_ttft_ms.tolerance: 3 is 100% or more: write a percentage like 3%" },
	{ "policy:\n  metrics:\n    median_ttft_ms: { tolerance: fast }\n",
	  "T.yml:3:34: policy.metrics.median_ttft_ms.tolerance: expected a percentage like 2.5% (or a fraction like 0.025), got 'fast'" },
	{ "policy:\n  metrics:\n    median_ttft_ms: { gate: yes }\n",
	  "T.yml:3:29: policy.metrics.median_ttft_ms.gate: expected true or false, got 'yes'" },
	{ "policy:\n  metrics:\n    median_ttft_ms: { floor: 2 s }\n",
	  "T.yml:3:30: policy.metrics.median_ttft_ms.floor: unit 's' is not median_ttft_ms's unit 'ms'" },
	{ "policy:\n  tests:\n    serving_*:\n      ttft: { tolerance: 5% }\n",
	  "T.yml:4:7: policy.tests.serving_*: unknown metric 'ttft'" },
	{ "policy:\n  step_false_alarm: 0\n",
	  "T.yml:2:21: policy.step_false_alarm: must be above 0" },
	{ "policy:\n  step_false_alarm: 5\n",
	  "T.yml:2:21: policy.step_false_alarm: 5 is 100% or more: write a percentage like 5%" },
	{ "policy:\n  rerun_anchors: -1\n",
	  "T.yml:2:18: policy.rerun_anchors: " },
	{ "policy:\n  min_history: 30\n",
	  "T.yml:2:3: policy: min_history (30) is more than history_window (20)" },
	{ "gpu: H100\nbaseline:\n  x: {}\n",
	  "T.yml:2:1: unknown section 'baseline' (did you mean 'baselines'?)" },
	{ "baselines:\n  x:\n    values: { output_throughput: 1 }\n",
	  "T.yml:2:3: baselines.x: missing 'suite' (latency, throughput or serving)" },
	{ "baselines:\n  x:\n    suite: serving\n    values: { requests_per_second: 1 }\n",
	  "T.yml:4:15: baselines.x.values: unknown metric for a serving test 'requests_per_second' (a throughput test metric)" },
	{ "baselines:\n  x:\n    suite: serving\n    values: { output_throughput: \"12\" }\n",
	  "T.yml:4:34: baselines.x.values.output_throughput: expected a number, got '12' (a quoted string: drop the quotes)" },
	{ "baselines:\n  x:\n    suite: serving\n    runs: 0\n    values: { output_throughput: 1 }\n",
	  "T.yml:4:11: baselines.x.runs: expected a positive whole number, got 0" },
	{ "baselines:\n  x:\n    suite: serving\n    values: { output_throughput: 1 }\n    samples: { median_ttft_ms: [1, 2] }\n",
	  "T.yml:5:16: baselines.x.samples.median_ttft_ms: samples of a metric that has no value" },
	{ "baselines:\n  x:\n    suite: serving\n    values: { output_throughput: 1 }\n    samples: { output_throughput: [1, x] }\n",
	  "T.yml:5:39: baselines.x.samples.output_throughput[1]: expected a number, got 'x'" },
	{ "baselines:\n  x:\n    suite: serving\n    qps: 0\n    values: { output_throughput: 1 }\n",
	  "T.yml:4:10: baselines.x.qps: must be above 0 (or inf)" },
	{ "baselines:\n  x:\n    suite: serving\n    sorce: a\n    values: { output_throughput: 1 }\n",
	  "T.yml:4:5: baselines.x: unknown key 'sorce' (did you mean 'source'?)" },
	{ "gpu: H100\ngpu: A100\n", "T.yml:2:1: key 'gpu' given twice (first at line 1)" },
	/* the first repeat in the file is the one named */
	{ "baselines:\n  b: {}\n  a: {}\n  c: {}\n  a: {}\n  b: {}\n  a: {}\n",
	  "T.yml:5:3: baselines: key 'a' given twice (first at line 3)" },
	{ "policy: [1, 2]\n", "T.yml:1:9: policy: expected a mapping of policy settings, got a list" },
	{ "policy:\n  alpha: [\n", "T.yml:3:1: not valid YAML" },
	{ "", "T.yml: empty file" },
};
/* clang-format on */

START_TEST(errors_name_file_line_key)
{
	char *path = tu_tmpdir_path("T.yml");
	struct pg_policy p;
	struct pg_baseline b;
	struct pg_error err = PG_ERROR_INIT;
	const char *msg;

	tu_write_file(path, bad[_i].yaml);
	ck_assert_int_eq(pg_thresholds_load(path, &p, &b, &err), PG_ECONFIG);
	msg = strstr(err.msg, "T.yml");
	ck_assert_msg(msg && !strncmp(msg, bad[_i].message, strlen(bad[_i].message)),
		      "case %d:\n got  %s\n want %s", _i, err.msg, bad[_i].message);
	ck_assert(!strchr(err.msg, '\n'));
	pg_policy_release(&p);
	pg_baseline_release(&b);
	free(path);
}
END_TEST

START_TEST(missing_file_is_not_found)
{
	char *path = tu_tmpdir_path("nope.yml");
	struct pg_policy p;
	struct pg_baseline b;
	struct pg_error err = PG_ERROR_INIT;

	ck_assert_int_eq(pg_thresholds_load(path, &p, &b, &err), PG_ENOTFOUND);
	pg_policy_release(&p);
	pg_baseline_release(&b);
	free(path);
}
END_TEST

START_TEST(path_for_a_gpu)
{
	char *yml = tu_tmpdir_path("X.yml"), *p;

	tu_write_file(yml, "gpu: X\n");
	p = pg_thresholds_path(tu_tmpdir, "H100");
	ck_assert(pg_str_has_suffix(p, "/H100.yml"));
	free(p);
	p = pg_thresholds_path(yml, "H100");
	ck_assert_str_eq(p, yml);
	free(p);
	p = pg_thresholds_path("new/L40S.yml", "H100");
	ck_assert_str_eq(p, "new/L40S.yml");
	free(p);
	free(yml);
}
END_TEST

/* A fresh baseline of two points, as `baseline update` makes them. */
static void fresh_points(struct pg_baseline *b, double scale)
{
	static const double reps[] = { 2400, 2380, 2410, 2395, 2405 };
	double xs[5];
	struct pg_base_point *p;

	p = pg_baseline_add(b, "serving_x_qps_inf", PG_SUITE_SERVING);
	p->qps = INFINITY;
	p->gpu = strdup("8xH100");
	p->source = strdup("results/");
	p->date = strdup("2026-11-22");
	p->repeats = 5;
	for (int i = 0; i < 5; i++)
		xs[i] = reps[i] * scale;
	pg_base_point_add_metric(p, pg_metric_by_id(PG_SUITE_SERVING, "output_throughput"), NAN, xs,
				 5);
	p = pg_baseline_add(b, "serving_x_qps_4", PG_SUITE_SERVING);
	p->qps = 4;
	p->test = strdup("serving_x");
	pg_base_point_add_metric(p, pg_metric_by_id(PG_SUITE_SERVING, "median_ttft_ms"),
				 15.9 * scale, NULL, 0);
	pg_baseline_sort(b);
}

START_TEST(new_file_and_update_keep_the_policy)
{
	char *path = tu_tmpdir_path("th/H100.yml");
	struct pg_baseline fresh = PG_BASELINE_INIT, again = PG_BASELINE_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_thresholds_update_opts opts = { "H100",
						  "perfgate baseline update th/ --from results/",
						  false };
	char *text, *edited, *pol;
	struct pg_buf expect = PG_BUF_INIT;

	fresh_points(&fresh, 1);
	ck_assert_msg(pg_thresholds_update(path, &fresh, &opts, &err) == 0, "%s", err.msg);
	text = tu_read_file(path, NULL);
	tu_assert_golden("golden/gate/thresholds-new.yml", text);

	/* hand edits in the policy: a comment and an override */
	pol = strstr(text, "  tests: {}\n");
	ck_assert(pol);
	pg_buf_add(&expect, text, (size_t)(pol - text));
	pg_buf_puts(&expect, "  # a reviewed exception\n  tests:\n    serving_x_qps_4:\n"
			     "      median_ttft_ms: { tolerance: 9% }\n");
	pg_buf_puts(&expect, pol + strlen("  tests: {}\n"));
	tu_write_file(path, expect.ptr);
	edited = tu_read_file(path, NULL);

	/* new values for one point; the other stays */
	fresh_points(&again, 1.1);
	pg_baseline_release(&fresh);
	fresh_points(&fresh, 1.1);
	free(fresh.points[0].name); /* only serving_x_qps_inf this time */
	fresh.points[0].name = strdup("serving_x_qps_inf");
	{
		struct pg_baseline one = PG_BASELINE_INIT;
		struct pg_base_point *p = pg_baseline_add(&one, "serving_x_qps_inf",
							  PG_SUITE_SERVING);
		double xs[] = { 2500, 2510 };
		p->runs = 2;
		pg_base_point_add_runs(p, pg_metric_by_id(PG_SUITE_SERVING, "output_throughput"),
				       xs, 2);
		ck_assert_msg(pg_thresholds_update(path, &one, &opts, &err) == 0, "%s", err.msg);
		pg_baseline_release(&one);
	}
	free(text);
	text = tu_read_file(path, NULL);
	/* everything up to baselines: is byte for byte what was there */
	pol = strstr(edited, "\nbaselines:\n");
	ck_assert(pol);
	ck_assert_msg(!strncmp(text, edited, (size_t)(pol - edited) + 1), "the policy changed:\n%s",
		      text);
	tu_assert_golden("golden/gate/thresholds-updated.yml", text);

	/* --replace drops what the sources lack */
	opts.replace = true;
	{
		struct pg_baseline one = PG_BASELINE_INIT;
		struct pg_policy p;
		struct pg_baseline loaded;
		struct pg_base_point *pt = pg_baseline_add(&one, "serving_z_qps_1",
							   PG_SUITE_SERVING);
		pg_base_point_add_metric(pt, pg_metric_by_id(PG_SUITE_SERVING, "median_tpot_ms"),
					 8.4, NULL, 0);
		ck_assert_msg(pg_thresholds_update(path, &one, &opts, &err) == 0, "%s", err.msg);
		ck_assert_int_eq(pg_thresholds_load(path, &p, &loaded, &err), 0);
		ck_assert_uint_eq(loaded.n, 1);
		ck_assert_str_eq(loaded.points[0].name, "serving_z_qps_1");
		ck_assert_uint_eq(p.n_entries > 0, 1); /* the override survived */
		pg_policy_release(&p);
		pg_baseline_release(&loaded);
		pg_baseline_release(&one);
	}

	pg_buf_release(&expect);
	pg_baseline_release(&fresh);
	pg_baseline_release(&again);
	free(text);
	free(edited);
	free(path);
}
END_TEST

/* Values written for review: the binary noise of arithmetic (seconds
 * times 1000, a median of two) is not written, and what is written loads
 * back to the measured value within 1e-9. */
START_TEST(values_are_written_without_float_noise)
{
	char *path = tu_tmpdir_path("th/H100.yml");
	struct pg_baseline fresh = PG_BASELINE_INIT, loaded = PG_BASELINE_INIT;
	struct pg_policy policy;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_thresholds_update_opts opts = { "H100", "perfgate baseline update th/", false };
	const struct pg_metric *mean = pg_metric_by_id(PG_SUITE_LATENCY, "mean_latency_ms");
	const struct pg_metric *median = pg_metric_by_id(PG_SUITE_LATENCY, "median_latency_ms");
	struct pg_base_point *p = pg_baseline_add(&fresh, "latency_x", PG_SUITE_LATENCY);
	double mean_ms = 0.9247 * 1000, runs[] = { 24.1 + 0.1, 24.2, 1037.4779999999998 };
	char *text, num[PG_FMT_DOUBLE_SIZE];

	ck_assert_str_eq(pg_fmt_repr(num, mean_ms), "924.6999999999999"); /* the noise */
	ck_assert_str_eq(pg_fmt_repr(num, runs[0]), "24.200000000000003");
	pg_base_point_add_metric(p, mean, mean_ms, NULL, 0);
	pg_base_point_add_metric(p, median, NAN, runs, 3);
	ck_assert_msg(pg_thresholds_update(path, &fresh, &opts, &err) == 0, "%s", err.msg);
	text = tu_read_file(path, NULL);
	ck_assert_msg(strstr(text, "mean_latency_ms:   924.7\n"), "%s", text);
	ck_assert_msg(strstr(text, "median_latency_ms: [24.2, 24.2, 1037.478]\n"), "%s", text);
	ck_assert_msg(!strstr(text, "99999") && !strstr(text, "00000"), "%s", text);
	ck_assert_int_eq(pg_thresholds_load(path, &policy, &loaded, &err), 0);
	ck_assert(fabs(loaded.points[0].metrics[0].value / mean_ms - 1) < 1e-9);
	pg_policy_release(&policy);
	pg_baseline_release(&loaded);
	pg_baseline_release(&fresh);
	free(text);
	free(path);
}
END_TEST

START_TEST(update_keeps_sections_after_baselines)
{
	char *path = tu_tmpdir_path("A100.yml"), *text;
	struct pg_baseline fresh = PG_BASELINE_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_thresholds_update_opts opts = { "A100", NULL, false };

	tu_write_file(path, "gpu: A100\n"
			    "baselines:\n"
			    "  old_point:\n"
			    "    suite: latency\n"
			    "    values: { median_latency_ms: 4022.88 }\n"
			    "# the policy comes last in this file\n"
			    "policy:\n"
			    "  alpha: 0.02   # tightened\n");
	fresh_points(&fresh, 1);
	ck_assert_msg(pg_thresholds_update(path, &fresh, &opts, &err) == 0, "%s", err.msg);
	text = tu_read_file(path, NULL);
	ck_assert(pg_str_has_prefix(text, "gpu: A100\nbaselines:\n  old_point:\n"));
	ck_assert(strstr(text, "  serving_x_qps_inf:\n"));
	ck_assert(pg_str_has_suffix(text, "\npolicy:\n  alpha: 0.02   # tightened\n"));
	free(text);
	pg_baseline_release(&fresh);
	free(path);
}
END_TEST

/* `baseline update` of path with the two fresh points, then the file
 * loaded back (both must succeed). */
static void update_then_load(const char *path, const struct pg_thresholds_update_opts *opts,
			     struct pg_policy *policy, struct pg_baseline *loaded)
{
	struct pg_baseline fresh = PG_BASELINE_INIT;
	struct pg_error err = PG_ERROR_INIT;

	fresh_points(&fresh, 1);
	ck_assert_msg(pg_thresholds_update(path, &fresh, opts, &err) == 0, "%s", err.msg);
	ck_assert_msg(pg_thresholds_load(path, policy, loaded, &err) == 0, "%s", err.msg);
	pg_baseline_release(&fresh);
}

/* libyaml ends a line at CR LF, a lone CR, NEL, LS and PS, not only at LF:
 * the update finds "baselines:" on the line libyaml names (a lone CR inside
 * a flow mapping once made it splice a line early and refuse the file). */
START_TEST(update_counts_lines_as_yaml_does)
{
	char *path = tu_tmpdir_path("L40S.yml"), *text;
	struct pg_baseline loaded;
	struct pg_policy policy;
	struct pg_thresholds_update_opts opts = { "L40S", NULL, false };
	const char head[] = "gpu: L40S\r\n"
			    "policy: { alpha: 0.02,\r escalate: 9% }\r\n"
			    "# NEL\xc2\x85# LS\xe2\x80\xa8# PS\xe2\x80\xa9# LF\n";

	tu_write_file(path, "gpu: L40S\r\n"
			    "policy: { alpha: 0.02,\r escalate: 9% }\r\n"
			    "# NEL\xc2\x85# LS\xe2\x80\xa8# PS\xe2\x80\xa9# LF\n"
			    "baselines:\n"
			    "  old_point:\n"
			    "    suite: latency\n"
			    "    values: { median_latency_ms: 4022.88 }\n");
	update_then_load(path, &opts, &policy, &loaded);
	text = tu_read_file(path, NULL);
	ck_assert_msg(pg_str_has_prefix(text, head), "the head changed:\n%s", text);
	ck_assert_msg(pg_str_has_prefix(text + strlen(head), "baselines:\n"), "%s", text);
	ck_assert_uint_eq(loaded.n, 3);
	ck_assert_ptr_nonnull(pg_baseline_find(&loaded, "old_point"));
	ck_assert_ptr_nonnull(pg_baseline_find(&loaded, "serving_x_qps_inf"));
	pg_policy_release(&policy);
	pg_baseline_release(&loaded);
	free(text);
	free(path);
}
END_TEST

/* A file whose top level is a flow mapping (or indented) cannot take block
 * baselines at the left margin: it is written whole, its policy kept. */
START_TEST(update_rewrites_a_flow_mapping_whole)
{
	char *path = tu_tmpdir_path("H200.yml");
	struct pg_baseline loaded;
	struct pg_policy policy;
	struct pg_thresholds_update_opts opts = { "H200", NULL, false };
	static const char *const files[] = {
		"{gpu: H200, policy: {escalate: 9%}}\n",
		" gpu: H200\n policy: {escalate: 9%}\n",
	};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		tu_write_file(path, files[i]);
		update_then_load(path, &opts, &policy, &loaded);
		ck_assert_str_eq(loaded.gpu, "H200");
		ck_assert_double_eq_tol(policy.escalate, 0.09, 1e-12);
		ck_assert_uint_eq(loaded.n, 2);
		pg_policy_release(&policy);
		pg_baseline_release(&loaded);
	}
	free(path);
}
END_TEST

/* The GPU and the command line are written into the header's comments:
 * a line break in either must not end the comment. */
START_TEST(header_comments_hold_any_gpu_and_command)
{
	char *path = tu_tmpdir_path("odd/new.yml");
	struct pg_baseline loaded;
	struct pg_policy policy;
	struct pg_thresholds_update_opts opts = { "L4\nbaselines: x\xc2\x85y\xe2\x80\xa8z",
						  "perfgate baseline update\rpolicy: {}", false };

	update_then_load(path, &opts, &policy, &loaded);
	ck_assert_str_eq(loaded.gpu, "L4\nbaselines: x\xc2\x85y\xe2\x80\xa8z");
	ck_assert_uint_eq(loaded.n, 2);
	pg_policy_release(&policy);
	pg_baseline_release(&loaded);
	free(path);
}
END_TEST

START_TEST(update_refuses_a_broken_file)
{
	char *path = tu_tmpdir_path("H100.yml"), *text;
	struct pg_baseline fresh = PG_BASELINE_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_thresholds_update_opts opts = { "H100", NULL, false };
	const char broken[] = "gpu: H100\npolicy:\n  escalte: 8%\nbaselines: {}\n";

	tu_write_file(path, broken);
	fresh_points(&fresh, 1);
	ck_assert_int_eq(pg_thresholds_update(path, &fresh, &opts, &err), PG_ECONFIG);
	ck_assert(strstr(
		err.msg,
		"H100.yml:3:3: policy: unknown setting 'escalte' (did you mean 'escalate'?)"));
	text = tu_read_file(path, NULL);
	ck_assert_str_eq(text, broken);
	free(text);
	pg_baseline_release(&fresh);
	free(path);
}
END_TEST

/* A pattern with several metrics is one mapping when written back: the
 * policy `baseline update` rewrites must load again (it was written with
 * the pattern once per metric, a key given twice). */
START_TEST(policy_pattern_with_two_metrics_round_trips)
{
	const char text[] = "gpu: H100\n"
			    "policy:\n"
			    "  tests:\n"
			    "    \"serving_*_qps_inf\":\n"
			    "      request_throughput: { gate: true }\n"
			    "      p99_ttft_ms: { escalate: 0% }\n"
			    "    serving_x_qps_4:\n"
			    "      \"*\": { tolerance: 9% }\n";
	struct pg_policy p, again;
	struct pg_baseline b, b2;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_buf out = PG_BUF_INIT;

	ck_assert_msg(pg_thresholds_load_text(text, strlen(text), "H100.yml", &p, &b, &err) == 0,
		      "%s", err.msg);
	pg_buf_puts(&out, "gpu: H100\n\n");
	pg_thresholds_emit_policy(&out, &p);
	ck_assert_msg(strstr(out.ptr, "  tests:\n"
				      "    \"serving_*_qps_inf\":\n"
				      "      request_throughput: { gate: true }\n"
				      "      p99_ttft_ms: { escalate: 0% }\n"
				      "    serving_x_qps_4:\n"
				      "      \"*\": { tolerance: 9% }\n"),
		      "%s", out.ptr);
	ck_assert_msg(pg_thresholds_load_text(out.ptr, out.len, "emitted.yml", &again, &b2, &err) ==
			      0,
		      "%s\n%s", err.msg, out.ptr);
	/* the same test entries in the same order (the policy's metrics: are
	 * written out in full, so they are more entries) */
	{
		size_t k = 0;
		for (size_t i = 0; i < again.n_entries; i++) {
			const struct pg_policy_entry *e = &again.entries[i];
			if (!e->pattern)
				continue;
			ck_assert_uint_lt(k, p.n_entries);
			ck_assert_str_eq(e->pattern, p.entries[k].pattern);
			ck_assert_str_eq(e->metric, p.entries[k].metric);
			ck_assert_uint_eq(e->patch.set, p.entries[k].patch.set);
			k++;
		}
		ck_assert_uint_eq(k, p.n_entries);
	}
	pg_buf_release(&out);
	pg_policy_release(&p);
	pg_policy_release(&again);
	pg_baseline_release(&b);
	pg_baseline_release(&b2);
}
END_TEST

START_TEST(yaml_scalars_round_trip)
{
	/* clang-format off */
	static const char *const cases[][2] = {
		{ "serving_a_qps_inf", "serving_a_qps_inf" },
		{ "8xH100", "8xH100" },
		{ "results/run 1", "results/run 1" },
		{ "true", "\"true\"" },
		{ "12", "\"12\"" },
		{ "a: b", "\"a: b\"" },
		{ "#x", "\"#x\"" },
		{ "report.md:55", "report.md:55" },
		{ "a:", "\"a:\"" },
		{ "a #b", "\"a #b\"" },
		{ "C#", "C#" },
		{ "say \"hi\"\n", "\"say \\\"hi\\\"\\n\"" },
		{ "", "\"\"" },
	};
	/* clang-format on */
	for (size_t i = 0; i < N(cases); i++) {
		struct pg_buf b = PG_BUF_INIT;
		pg_yaml_scalar(&b, cases[i][0]);
		ck_assert_str_eq(b.ptr, cases[i][1]);
		pg_buf_release(&b);
	}
}
END_TEST

/* ---- a pull request's thresholds: the base's copy, and how the pull
 * request's differs (pg_thresholds_load_at) ---- */

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	struct pg_buf cmd = PG_BUF_INIT;
	va_list ap;

	pg_buf_printf(&cmd, "cd '%s' && ", tu_tmpdir);
	va_start(ap, fmt);
	pg_buf_vprintf(&cmd, fmt, ap);
	va_end(ap);
	ck_assert_msg(system(cmd.ptr) == 0, "%s", cmd.ptr);
	pg_buf_release(&cmd);
}

static const char thresholds_base[] = "gpu: H100\n"
				      "policy:\n"
				      "  metrics:\n"
				      "    output_throughput: { gate: true, tolerance: 3% }\n"
				      "baselines:\n"
				      "  serving_x_qps_4:\n"
				      "    suite: serving\n"
				      "    values: { output_throughput: 100 }\n";

START_TEST(thresholds_at_the_base)
{
	struct pg_policy pol;
	struct pg_baseline base;
	struct pg_thresholds_origin o;
	struct pg_error err = PG_ERROR_INIT;
	char cwd[4096], *file;
	struct pg_rule r;
	char *repo = tu_tmpdir_path("repo"), *outside = tu_tmpdir_path("outside.yml");

	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	sh("git init -q -b main repo && mkdir repo/thresholds");
	file = tu_tmpdir_path("repo/thresholds/H100.yml");
	tu_write_file(file, thresholds_base);
	sh("cd repo && git add . && git -c user.name=t -c user.email=t@t commit -qm base");
	/* the pull request loosens its policy and its baseline */
	tu_write_file(file, "gpu: H100\n"
			    "policy:\n"
			    "  metrics:\n"
			    "    output_throughput: { gate: false, tolerance: 3% }\n"
			    "baselines:\n"
			    "  serving_x_qps_4:\n"
			    "    suite: serving\n"
			    "    values: { output_throughput: 140 }\n");
	ck_assert_int_eq(chdir(repo), 0);
	ck_assert_msg(pg_thresholds_load_at("thresholds/H100.yml", "HEAD", &pol, &base, &o, &err) ==
			      0,
		      "%s", err.msg);
	ck_assert_double_eq(base.points[0].metrics[0].value, 100);
	ck_assert_msg(!strncmp(base.source, "thresholds/H100.yml at ", 23), "%s", base.source);
	pg_policy_rule(&pol, "serving_x_qps_4", NULL, base.points[0].metrics[0].metric, &r);
	ck_assert(r.gate);
	ck_assert(o.in_repo && o.in_rev && o.in_checkout && o.differs);
	ck_assert_str_eq(o.relpath, "thresholds/H100.yml");
	ck_assert_uint_eq(o.added, 2);
	ck_assert_uint_eq(o.removed, 2);
	ck_assert_msg(strstr(o.diff, "-    output_throughput: { gate: true, tolerance: 3% }\n") &&
			      strstr(o.diff, "+    values: { output_throughput: 140 }\n") &&
			      strstr(o.diff, "@@ "),
		      "%s", o.diff);
	pg_thresholds_origin_release(&o);
	pg_policy_release(&pol);
	pg_baseline_release(&base);

	/* the pull request deletes the whole directory: the base still decides */
	sh("rm -r repo/thresholds");
	ck_assert_int_eq(
		pg_thresholds_load_at("thresholds/H100.yml", "HEAD", &pol, &base, &o, &err), 0);
	ck_assert_double_eq(base.points[0].metrics[0].value, 100);
	ck_assert(o.differs && !o.in_checkout && o.in_rev);
	ck_assert_uint_eq(o.removed, 8);
	pg_thresholds_origin_release(&o);
	pg_policy_release(&pol);
	pg_baseline_release(&base);

	/* a file the base does not have */
	ck_assert_int_eq(
		pg_thresholds_load_at("thresholds/A100.yml", "HEAD", &pol, &base, &o, &err),
		PG_ENOTFOUND);
	ck_assert_msg(strstr(err.msg, "thresholds/A100.yml: not in the base branch (at HEAD)"),
		      "%s", err.msg);
	pg_thresholds_origin_release(&o);
	pg_policy_release(&pol);
	pg_baseline_release(&base);

	/* outside the repository: read as it is */
	tu_write_file(outside, thresholds_base);
	ck_assert_int_eq(pg_thresholds_load_at(outside, "HEAD", &pol, &base, &o, &err), 0);
	ck_assert(!o.in_repo);
	ck_assert_str_eq(base.source, outside);
	pg_thresholds_origin_release(&o);
	pg_policy_release(&pol);
	pg_baseline_release(&base);
	ck_assert_int_eq(chdir(cwd), 0);
	free(file);
	free(outside);
	free(repo);
}
END_TEST

static Suite *thresholds_suite(void)
{
	Suite *s = suite_create("thresholds");
	TCase *tc = tcase_create("load");

	tcase_add_checked_fixture(tc, tu_tmpdir_setup, tu_tmpdir_teardown);
	tcase_add_test(tc, loads_policy_and_baselines);
	tcase_add_loop_test(tc, errors_name_file_line_key, 0, (int)N(bad));
	tcase_add_test(tc, missing_file_is_not_found);
	tcase_add_test(tc, path_for_a_gpu);
	suite_add_tcase(s, tc);
	tc = tcase_create("write");
	tcase_add_checked_fixture(tc, tu_tmpdir_setup, tu_tmpdir_teardown);
	tcase_add_test(tc, new_file_and_update_keep_the_policy);
	tcase_add_test(tc, update_keeps_sections_after_baselines);
	tcase_add_test(tc, values_are_written_without_float_noise);
	tcase_add_test(tc, update_counts_lines_as_yaml_does);
	tcase_add_test(tc, update_rewrites_a_flow_mapping_whole);
	tcase_add_test(tc, header_comments_hold_any_gpu_and_command);
	tcase_add_test(tc, update_refuses_a_broken_file);
	tcase_add_test(tc, policy_pattern_with_two_metrics_round_trips);
	tcase_add_test(tc, yaml_scalars_round_trip);
	suite_add_tcase(s, tc);

	tc = tcase_create("pull_request");
	tcase_add_checked_fixture(tc, tu_tmpdir_setup, tu_tmpdir_teardown);
	tcase_add_test(tc, thresholds_at_the_base);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	/* the repositories made here are the tests' own: no system config */
	int rc;

	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	git_libgit2_init();
	rc = tu_run_suite(thresholds_suite());
	git_libgit2_shutdown();
	return rc;
}
