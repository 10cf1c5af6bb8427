/* The shared core: buffers, number formatting, templates, the plan, JSON
 * writing, atomic files and result loading. */
#include "testutil.h"

#include "base/buf.h"
#include "base/error.h"
#include "gpu/gpu.h"
#include "base/jsonw.h"
#include "results/metrics.h"
#include "base/strutil.h"
#include "suite/suite.h"
#include "base/template.h"
#include "sys/fsutil.h"
#include "results/results_io.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

START_TEST(buf_grows_and_stays_terminated)
{
	struct pg_buf b = PG_BUF_INIT;

	ck_assert_str_eq(b.ptr, "");
	for (int i = 0; i < 1000; i++)
		pg_buf_printf(&b, "%d,", i);
	ck_assert_uint_eq(b.len, strlen(b.ptr));
	ck_assert(pg_str_has_prefix(b.ptr, "0,1,2,"));
	ck_assert(pg_str_has_suffix(b.ptr, "998,999,"));
	pg_buf_truncate(&b, 2);
	ck_assert_str_eq(b.ptr, "0,");
	char *owned = pg_buf_detach(&b);
	ck_assert_str_eq(owned, "0,");
	ck_assert_str_eq(b.ptr, "");
	free(owned);
	pg_buf_release(&b);
}
END_TEST

/* Random values compared with printf: a tenth as many under valgrind
 * (the sanitized build runs them all), where each costs fifty times more. */
static int sweep(int n)
{
	return getenv("PERFGATE_UNDER_VALGRIND") ? n / 10 : n;
}

/* pg_fmt_long and pg_buf_long write what printf's "%ld" writes; what
 * pg_buf_space gives is the caller's, appended by pg_buf_wrote. */
START_TEST(long_is_printf_and_space_appends)
{
	static const long l[] = { 0,  1,   -1,    9,       -9,       10,       -10,
				  99, 100, 12345, -100000, LONG_MAX, LONG_MIN, LONG_MIN + 1 };
	struct pg_buf b = PG_BUF_INIT, want = PG_BUF_INIT;
	uint64_t state = 5;

	for (int i = 0; i < sweep(20000) + (int)(sizeof(l) / sizeof(l[0])); i++) {
		char out[24], w[24];
		long v;
		size_t n;
		state = state * 6364136223846793005ull + 1442695040888963407ull;
		v = i < (int)(sizeof(l) / sizeof(l[0])) ? l[i]
		    : i % 2                             ? (long)(state >> (state % 64))
							: (long)(state % 2001) - 1000;
		memset(out, 'x', sizeof(out));
		n = pg_fmt_long(out, v);
		snprintf(w, sizeof(w), "%ld", v);
		ck_assert_uint_eq(n, strlen(w));
		ck_assert_mem_eq(out, w, n);
		ck_assert_int_eq(out[n], 'x'); /* nothing beyond its count */
		pg_buf_long(&b, v);
		pg_buf_putc(&b, ' ');
		pg_buf_printf(&want, "%s ", w);
	}
	ck_assert_uint_eq(b.len, strlen(b.ptr));
	ck_assert_str_eq(b.ptr, want.ptr);

	pg_buf_reset(&b);
	pg_buf_puts(&b, "ab");
	for (int i = 0; i < 100; i++) {
		char *p = pg_buf_space(&b, 40);
		memset(p, 'y', 40);
		pg_buf_wrote(&b, i % 3);
	}
	ck_assert_uint_eq(b.len, 2 + 99);
	ck_assert_uint_eq(strlen(b.ptr), b.len); /* terminated after what was written */
	ck_assert(pg_str_has_prefix(b.ptr, "aby"));
	pg_buf_release(&b);
	pg_buf_release(&want);
}
END_TEST

/* clang-format off */
static const struct {
	double v;
	const char *repr;
	const char *g;
} numbers[] = {
	{ 0.1, "0.1", "0.1" },
	{ 200.0, "200.0", "200" },
	{ 1e-05, "1e-05", "1e-05" },
	{ 0.0001, "0.0001", "0.0001" },
	{ 1e16, "1e+16", "1e+16" },
	{ 1e15, "1000000000000000.0", "1e+15" },
	{ 123456789.125, "123456789.125", "1.23457e+08" },
	{ 0.9247087073539347, "0.9247087073539347", "0.924709" },
	{ 197.55014469555786, "197.55014469555786", "197.55" },
	{ 2.5417049715204167, "2.5417049715204167", "2.5417" },
	{ -3.5, "-3.5", "-3.5" },
	{ 1.2345678901234568e+17, "1.2345678901234568e+17", "1.23457e+17" },
	{ 5e-324, "5e-324", "4.94066e-324" },
};
/* clang-format on */

START_TEST(numbers_format_like_python)
{
	char out[PG_FMT_DOUBLE_SIZE];

	for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
		ck_assert_str_eq(pg_fmt_repr(out, numbers[i].v), numbers[i].repr);
		ck_assert_str_eq(pg_fmt_g(out, numbers[i].v), numbers[i].g);
		ck_assert(strtod(pg_fmt_repr(out, numbers[i].v), NULL) == numbers[i].v);
	}
	ck_assert_str_eq(pg_fmt_repr(out, INFINITY), "inf");
}
END_TEST

/* perfgate's own tables: four significant digits, the integer part whole,
 * and no float noise (24.200000000000003 is 24.2) */
START_TEST(table_numbers_have_four_digits)
{
	/* clang-format off */
	static const struct { double v; const char *want; } cases[] = {
		{ 3129.4712, "3129" }, { 24.200000000000003, "24.2" }, { 0.0123456, "0.01235" },
		{ 123456.7, "123457" }, { 99999.5, "100000" }, { 999.96, "1000" }, { 200, "200" },
		{ -17.83251, "-17.83" }, { 0.5, "0.5" }, { 1.5e-6, "1.5e-06" }, { 2.5e17, "2.5e+17" },
	};
	/* clang-format on */
	char out[PG_FMT_DOUBLE_SIZE];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_str_eq(pg_fmt_table(out, cases[i].v), cases[i].want);
	ck_assert_str_eq(pg_fmt_table(out, NAN), "nan");
}
END_TEST

/* Changes in percent: signed, one decimal, never "-0.0%" (a 0.04% drop
 * read as a drop in an annotation). */
START_TEST(percent_changes_have_no_negative_zero)
{
	char out[PG_FMT_DOUBLE_SIZE];

	ck_assert_str_eq(pg_fmt_pct(out, -0.0004), "+0.0%");
	ck_assert_str_eq(pg_fmt_pct(out, -0.0), "+0.0%");
	ck_assert_str_eq(pg_fmt_pct(out, 0), "+0.0%");
	ck_assert_str_eq(pg_fmt_pct(out, -0.0005), "-0.1%");
	ck_assert_str_eq(pg_fmt_pct(out, 0.123), "+12.3%");
	ck_assert_str_eq(pg_fmt_pct(out, -0.4), "-40.0%");
	ck_assert_str_eq(pg_fmt_pct(out, NAN), "nan");
	/* too large for one decimal in 32 bytes: %g, never cut short */
	ck_assert_str_eq(pg_fmt_pct(out, 1e28), "+1e+30%");
	ck_assert_str_eq(pg_fmt_pct(out, -1e28), "-1e+30%");
	ck_assert_str_eq(pg_fmt_pct(out, INFINITY), "inf");
}
END_TEST

/* pg_buf_fixed1 writes what printf's "%.1f" writes. */
static void check_fixed1(double v)
{
	struct pg_buf b = PG_BUF_INIT;
	char want[400];

	pg_buf_fixed1(&b, v);
	snprintf(want, sizeof(want), "%.1f", v);
	ck_assert_str_eq(b.ptr, want);
	pg_buf_release(&b);
}

START_TEST(fixed_one_decimal_is_printf)
{
	/* ties on the exact binary value (0.25, 2.75), signs, zeros, the
	 * range's end, and a sweep of values a chart's scale gives */
	static const double fixed[] = {
		0,        -0.0,  0.05,  0.25, 0.35,  0.75,   -0.25,
		-0.04,    1.45,  2.5,   9.95, 99.95, 1e14,   999999999999999.9,
		1e15,     -1e15, 1e300, 4.35, 0.15,  1e-320, NAN,
		-INFINITY
	};
	uint64_t state = 7;

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		check_fixed1(fixed[i]);
	for (int i = 0; i < sweep(300000); i++) {
		double v;
		state = state * 6364136223846793005ull + 1442695040888963407ull;
		if (i % 3 == 0) /* quarters and twentieths: exact and near ties */
			v = (double)((int64_t)(state >> 40) - (1 << 23)) / (i % 2 ? 4 : 20);
		else
			v = ((double)(state >> 11) / 9007199254740992.0 - 0.3) *
			    (i % 5 ? 700 : 1e9);
		check_fixed1(v);
	}
}
END_TEST

/* pg_fmt_g writes what printf's "%g" writes, on its fast path's range
 * (1e-4 to 1e6), at its ends, at six-digit ties and beyond it; and
 * pg_fmt_g17 what "%.17g" writes (prec 17). */
static void check_g(double v, int prec)
{
	char got[PG_FMT_DOUBLE_SIZE], want[64];

	if (prec == 17)
		pg_fmt_g17(got, v);
	else
		pg_fmt_g(got, v);
	snprintf(want, sizeof(want), "%.*g", prec, v);
	ck_assert_str_eq(got, want);
}

START_TEST(g_is_printf)
{
	static const double g[] = { 0,        -0.0,      1e-4,      0.0001000005,  9.999995e-5,
				    999999.5, 999999.4,  999999.51, 1e6,           123456.5,
				    123457.5, 1234.125,  1234.375,  -1234.125,     0.5,
				    2.5,      5665.01,   39.7702,   0.00012345675, 99999.95,
				    9.999995, 9.9999949, 1e300,     -1e-300,       NAN };
	uint64_t state = 11;

	for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++)
		check_g(g[i], 6);
	for (int i = 0; i < sweep(300000); i++) {
		double v;
		state = state * 6364136223846793005ull + 1442695040888963407ull;
		if (i % 3 == 0) /* dyadic values of seven digits: exact ties */
			v = (double)((int64_t)(state >> 40) - (1 << 23)) / (double)(1u << (i % 24));
		else /* every decade of the range and one beyond each end */
			v = ((double)(state >> 11) / 9007199254740992.0 - 0.3) *
			    pow(10, (int)(state % 13) - 6);
		check_g(v, 6);
	}
}
END_TEST

/* pg_fmt_g17 on the fast path's range [1e-4, 1e17), its ends, ties at
 * the 18th digit, and beyond. */
START_TEST(g17_is_printf)
{
	static const double g[] = { 0,
				    -0.0,
				    1e-4,
				    9.9999999999999991e-5,
				    0.1,
				    0.8,
				    1.2000000000000002,
				    2400,
				    1e16,
				    9.9999999999999984e16,
				    1e17,
				    1234567890123456.75,
				    1234567890123456.25,
				    4503599627370497.5,
				    -0.30000000000000004,
				    1e300,
				    5e-324,
				    NAN,
				    -INFINITY };
	uint64_t state = 13;

	for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++)
		check_g(g[i], 17);
	for (int i = 0; i < sweep(60000); i++) {
		double v;
		state = state * 6364136223846793005ull + 1442695040888963407ull;
		if (i % 3 == 0) /* dyadic values of 18 and more digits: exact ties */
			v = (double)((int64_t)(state >> 8) - (INT64_C(1) << 55)) /
			    (double)(UINT64_C(1) << (i % 40));
		else /* every decade of the range and one beyond each end */
			v = ((double)(state >> 11) / 9007199254740992.0 - 0.3) *
			    pow(10, (int)(state % 24) - 6);
		check_g(v, 17);
	}
}
END_TEST

/* pg_fmt_fixed writes what printf's "%.*f" writes: ties on the exact
 * binary value, signs, zeros, subnormals, the fast path's ends, and
 * precisions beyond it. */
START_TEST(fixed_decimals_are_printf)
{
	static const double fixed[] = { 0,     -0.0,           0.05,   0.25,  0.35,   0.75,
					-0.25, -0.04,          1.45,   2.5,   9.95,   99.95,
					1e11,  999999999999.9, 1e12,   -1e12, 1e300,  4.35,
					0.15,  1e-320,         5e-324, 5e-7,  1.5e-6, 2.5e-7,
					NAN,   -INFINITY };
	uint64_t state = 17;

	for (int i = 0; i < sweep(90000); i++) {
		char got[PG_FMT_DOUBLE_SIZE], want[PG_FMT_DOUBLE_SIZE];
		int d = i % 9 - 1; /* -1: printf's default, 7: beyond the fast path */
		double v;
		state = state * 6364136223846793005ull + 1442695040888963407ull;
		if (i < (int)(sizeof(fixed) / sizeof(fixed[0])) * 9)
			v = fixed[i / 9];
		else if (i % 2) /* dyadic values: exact ties at every precision */
			v = (double)((int64_t)(state >> 30) - (INT64_C(1) << 33)) /
			    (double)(UINT64_C(1) << (i % 30));
		else /* every decade of the range and beyond its end */
			v = ((double)(state >> 11) / 9007199254740992.0 - 0.3) *
			    pow(10, (int)(state % 20) - 8);
		pg_fmt_fixed(got, v, d);
		snprintf(want, sizeof(want), "%.*f", d, v);
		ck_assert_str_eq(got, want);
	}
}
END_TEST

START_TEST(strict_number_parsing)
{
	long l;
	double d;

	ck_assert_int_eq(pg_parse_long("42", &l), 0);
	ck_assert_int_eq(l, 42);
	ck_assert_int_eq(pg_parse_long("42x", &l), -1);
	ck_assert_int_eq(pg_parse_long(" 4", &l), -1);
	ck_assert_int_eq(pg_parse_long("", &l), -1);
	ck_assert_int_eq(pg_parse_long("99999999999999999999", &l), -1);
	ck_assert_int_eq(pg_parse_double("0.5", &d), 0);
	ck_assert(d == 0.5);
	ck_assert_int_eq(pg_parse_double("inf", &d), 0);
	ck_assert(isinf(d));
	ck_assert_int_eq(pg_parse_double("fast", &d), -1);
	ck_assert_int_eq(pg_parse_double("nan", &d), -1);
	ck_assert_int_eq(pg_parse_double("0x10", &d), -1);
	ck_assert_int_eq(pg_parse_double("1e999", &d), -1);
}
END_TEST

START_TEST(nearest_suggests_plausible_typos_only)
{
	const char *keys[] = { "num_prompts", "input_len", "output_len", "qps", "max_concurrency" };

	ck_assert_str_eq(pg_nearest("num_promts", keys, 5), "num_prompts");
	ck_assert_str_eq(pg_nearest("inptu_len", keys, 5), "input_len");
	ck_assert_str_eq(pg_nearest("qsp", keys, 5), "qps");
	ck_assert_ptr_null(pg_nearest("temperature", keys, 5));
}
END_TEST

static const char *vars(void *ctx, const char *name)
{
	(void)ctx;
	if (!strcmp(name, "model"))
		return "a b'\"$(touch /tmp/pwned)\"";
	if (!strcmp(name, "tp"))
		return "2";
	return NULL;
}

START_TEST(template_keeps_values_literal)
{
	struct pg_strv argv = PG_STRV_INIT;
	struct pg_error err = PG_ERROR_INIT;

	ck_assert_int_eq(pg_template_argv(&argv,
					  "vllm serve {model} --tp={tp} 'x y' \"{tp} z\" {{lit}}",
					  vars, NULL, &err),
			 0);
	ck_assert_uint_eq(argv.n, 7);
	ck_assert_str_eq(argv.v[0], "vllm");
	ck_assert_str_eq(argv.v[2], "a b'\"$(touch /tmp/pwned)\"");
	ck_assert_str_eq(argv.v[3], "--tp=2");
	ck_assert_str_eq(argv.v[4], "x y");
	ck_assert_str_eq(argv.v[5], "2 z");
	ck_assert_str_eq(argv.v[6], "{lit}");
	pg_strv_release(&argv);

	ck_assert_int_eq(pg_template_argv(&argv, "serve {modle}", vars, NULL, &err), PG_ECONFIG);
	ck_assert_msg(strstr(err.msg, "unknown placeholder '{modle}'"), "%s", err.msg);
	pg_strv_release(&argv);
	ck_assert_int_eq(pg_template_argv(&argv, "serve 'open", vars, NULL, &err), PG_ECONFIG);
	pg_strv_release(&argv);
}
END_TEST

/* --vllm: a command's program `vllm` becomes the user's words; other
 * programs, and a word that only starts with vllm, stay as they are. */
START_TEST(program_stands_in_for_vllm)
{
	struct pg_strv argv = PG_STRV_INIT;
	struct pg_buf sh = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;
	const char *with = "perfgate mock-server --as-vllm";

	pg_strv_push(&argv, "vllm");
	pg_strv_push(&argv, "serve");
	pg_strv_push(&argv, "m");
	ck_assert(pg_program_replace_argv(&argv, "vllm", with));
	ck_assert_uint_eq(argv.n, 5);
	ck_assert_str_eq(argv.v[0], "perfgate");
	ck_assert_str_eq(argv.v[2], "--as-vllm");
	ck_assert_str_eq(argv.v[3], "serve");
	ck_assert(!pg_program_replace_argv(&argv, "vllm", with)); /* perfgate now */
	ck_assert(!pg_program_replace_argv(&argv, "perfgate", NULL));
	pg_strv_release(&argv);

	pg_buf_puts(&sh, "vllm serve 'm' --port 1 > log");
	ck_assert(pg_program_replace_shell(&sh, "vllm", "'/opt/my venv/bin/vllm' -q"));
	ck_assert_str_eq(sh.ptr, "'/opt/my venv/bin/vllm' -q serve 'm' --port 1 > log");
	pg_buf_reset(&sh);
	pg_buf_puts(&sh, "vllmx serve");
	ck_assert(!pg_program_replace_shell(&sh, "vllm", with));
	pg_buf_release(&sh);

	ck_assert_int_eq(pg_program_check(with, &err), 0);
	ck_assert_int_eq(pg_program_check("  ", &err), PG_ECONFIG);
	ck_assert_str_eq(err.msg, "command template is empty");
	ck_assert_int_eq(pg_program_check("run {model}", &err), PG_ECONFIG);
	ck_assert_str_eq(err.msg, "command template 'run {model}': unknown placeholder '{model}'");
}
END_TEST

START_TEST(template_shell_quotes_by_context)
{
	struct pg_buf out = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;

	ck_assert_int_eq(
		pg_template_shell(&out, "echo {model} \"{model}\" '{model}'", vars, NULL, &err), 0);
	ck_assert_str_eq(out.ptr, "echo 'a b'\\''\"$(touch /tmp/pwned)\"' "
				  "\"a b'\\\"\\$(touch /tmp/pwned)\\\"\" "
				  "'a b'\\''\"$(touch /tmp/pwned)\"'");
	pg_buf_release(&out);
}
END_TEST

START_TEST(plan_names_points_like_vllm)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_test t;
	struct pg_plan plan = PG_PLAN_INIT;

	pg_test_init(&t, PG_SUITE_LATENCY);
	t.name = strdup("latency_llama8B_tp1");
	pg_suite_add(&s, &t);

	pg_test_init(&t, PG_SUITE_SERVING);
	t.name = strdup("serving_x");
	t.n_qps = 3;
	t.qps = realloc(t.qps, 3 * sizeof(double));
	t.qps[0] = 1;
	t.qps[1] = 0.5;
	t.qps[2] = INFINITY;
	pg_suite_add(&s, &t);

	pg_test_init(&t, PG_SUITE_SERVING);
	t.name = strdup("serving_c");
	t.max_concurrency = realloc(t.max_concurrency, 2 * sizeof(long));
	t.max_concurrency[0] = 16;
	t.max_concurrency[1] = 0;
	t.n_max_concurrency = 2;
	t.concurrency_in_name = true;
	pg_suite_add(&s, &t);

	pg_plan_build(&plan, &s);
	ck_assert_uint_eq(plan.n, 6);
	ck_assert_str_eq(plan.points[0].name, "latency_llama8B_tp1");
	ck_assert_str_eq(plan.points[1].name, "serving_x_qps_1");
	ck_assert_str_eq(plan.points[2].name, "serving_x_qps_0.5");
	ck_assert_str_eq(plan.points[3].name, "serving_x_qps_inf");
	ck_assert_str_eq(plan.points[4].name, "serving_c_qps_inf_concurrency_16");
	ck_assert_str_eq(plan.points[5].name, "serving_c_qps_inf"); /* unbounded: no cap */
	ck_assert(plan.points[4].test == &s.tests[2]);
	pg_plan_release(&plan);
	pg_suite_release(&s);
}
END_TEST

START_TEST(json_writer_is_python_compatible)
{
	struct pg_buf out = PG_BUF_INIT;
	json_t *v = json_pack("{s:f, s:i, s:s, s:[f,n], s:{}, s:b}", "z", 0.1, "a", 200, "gpu",
			      "H100\nH100", "l", 200.0, "e", "t", 1);

	pg_json_write(&out, v, -1);
	ck_assert_str_eq(
		out.ptr,
		"{\"z\": 0.1, \"a\": 200, \"gpu\": \"H100\\nH100\", \"l\": [200.0, null], \"e\": {}, \"t\": true}");
	pg_buf_reset(&out);
	pg_json_write(&out, json_object_get(v, "l"), 2);
	ck_assert_str_eq(out.ptr, "[\n  200.0,\n  null\n]");
	json_decref(v);
	pg_buf_release(&out);
}
END_TEST

START_TEST(metric_registry_reads_results)
{
	json_t *lat = json_pack("{s:f, s:{s:f, s:f}}", "avg_latency", 1.0469, "percentiles", "50",
				1.0468, "99", 1.0483);
	const struct pg_metric *m = pg_metric_by_id(PG_SUITE_LATENCY, "median_latency_ms");
	double v;

	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(pg_metric_value(m, lat, &v), 0);
	ck_assert_double_eq_tol(v, 1046.8, 1e-9);
	ck_assert_int_eq(pg_result_kind(lat), PG_SUITE_LATENCY);
	ck_assert_int_eq(m->direction, PG_LOWER_IS_BETTER);
	m = pg_metric_by_id(PG_SUITE_SERVING, "output_throughput");
	ck_assert_int_eq(m->direction, PG_HIGHER_IS_BETTER);
	ck_assert(m->gated);
	ck_assert_int_eq(pg_metric_value(m, lat, &v), -1);
	json_decref(lat);
}
END_TEST

START_TEST(gpu_label_matches_vllm_converter)
{
	char out[64];
	ck_assert_str_eq(
		pg_gpu_label(out, sizeof(out), "H100\nH100\nH100\nH100\nH100\nH100\nH100\nH100"),
		"8xH100");
	ck_assert_str_eq(pg_gpu_label(out, sizeof(out), "A100-SXM4-80GB"), "1xA100-SXM4-80GB");
	ck_assert_str_eq(pg_gpu_label(out, sizeof(out), "4xNVIDIA_L40S"), "4xNVIDIA_L40S");
	ck_assert_str_eq(pg_gpu_label(out, sizeof(out), "H100\n"), "1xH100");
}
END_TEST

START_TEST(gpu_key_normalises_every_shape)
{
	/* clang-format off */
	static const char *const cases[][2] = {
		{ "NVIDIA H100 80GB HBM3", "H100" },
		{ "NVIDIA H200", "H200" },
		{ "NVIDIA A100-SXM4-80GB", "A100" },
		{ "NVIDIA L40S", "L40S" },
		{ "8xH100", "H100" },
		{ "4xNVIDIA_L40S", "L40S" },
		{ "8xNVIDIA-H100-80GB-HBM3", "H100" }, /* llm-d benchmark report */
		{ "H100\nH100\nH100", "H100" },
		{ "A100-SXM4-80GB\nA100-SXM4-80GB", "A100" },
		{ "1xA100-SXM4-80GB", "A100" },
		{ "NVIDIA H100 PCIe", "H100" },
		/* any other name is its own key, made fit to name a file */
		{ "Standard_ND96asr_v4-GPUDirect-RDMA-Infiniband x 2", "Standard_ND96asr_v4-GPUDirect-RDMA-Infiniband_x_2" },
		{ "Tesla T4", "Tesla_T4" },
		{ "NVIDIA RTX A6000", "NVIDIA_RTX_A6000" },
		{ "AMD Instinct MI300X OAM", "MI300X" },
		{ "AMD Instinct MI325X", "MI325X" },
		{ "AMD Instinct MI250X/MI250", "MI250X" },
		{ "AMD Instinct MI250", "MI250" },
		{ "8xMI300X", "MI300X" },
		{ "NVIDIA GB200", "GB200" },
		{ "mock", "mock" },
		{ "A10.G", "A10.G" },
		/* never a path */
		{ "../../x", "______x" },
		{ "/etc/passwd", "_etc_passwd" },
		{ "-rf", "_rf" },
		{ ".hidden", "_hidden" },
		{ "a\\b", "a_b" },
		{ "0123456789012345678901234567890123456789012345678901234567890123456789",
		  "0123456789012345678901234567890123456789012345678901234567890123" },
	};
	static const char *const refused[] = { "../../x", "a/b", ".hidden", "-x", "a\\b", "x..y",
					       "tab\there" };
	static const char *const accepted[] = { "H100", "NVIDIA H100 80GB HBM3", "NVIDIA RTX A6000",
						"8xH100", "Tesla T4", "A10.G" };
	/* clang-format on */
	char out[128];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_str_eq(pg_gpu_key(out, sizeof(out), cases[i][0]), cases[i][1]);
		ck_assert_msg(pg_gpu_key_valid(out), "%s", out);
	}
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		ck_assert_msg(!pg_gpu_name_ok(refused[i]), "%s", refused[i]);
	for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++)
		ck_assert_msg(pg_gpu_name_ok(accepted[i]), "%s", accepted[i]);
	ck_assert_int_eq(pg_gpu_count("8xH100"), 8);
	ck_assert_int_eq(pg_gpu_count("4xNVIDIA_L40S"), 4);
	ck_assert_int_eq(pg_gpu_count("H100\nH100\n"), 2);
	ck_assert_int_eq(pg_gpu_count("NVIDIA L40S"), 1);
	ck_assert_int_eq(pg_gpu_count(""), 0);
}
END_TEST

START_TEST(results_round_trip_through_a_directory)
{
	char *dir = tu_mkdtemp();
	struct pg_error err = PG_ERROR_INIT;
	struct pg_result_set set = PG_RESULT_SET_INIT;
	json_t *res = json_pack("{s:i, s:f, s:{s:s, s:s}}", "completed", 200, "request_throughput",
				2.5, "perfgate", "suite", "serving", "status", "ok");
	json_t *cmds = json_pack("{s:s, s:s}", "server_command", "vllm serve x", "gpu_type",
				 "H100\nH100");
	char *other = malloc(strlen(dir) + 64);
	struct stat st;

	ck_assert_int_eq(pg_result_write(dir, "serving_b_qps_1", res, cmds, &err), 0);
	ck_assert_int_eq(pg_result_write(dir, "serving_a_qps_1", res, NULL, &err), 0);
	snprintf(other, strlen(dir) + 64, "%s/benchmark_results.json", dir);
	tu_write_file(other, "[{\"Test name\": \"x\"}]");
	ck_assert_int_eq(pg_results_load_dir(&set, dir, &err), 0);
	ck_assert_uint_eq(set.n, 2);
	ck_assert_str_eq(set.items[0].name, "serving_a_qps_1");
	ck_assert_str_eq(set.items[1].name, "serving_b_qps_1");
	ck_assert_ptr_null(pg_result_gpu(&set.items[0]));
	ck_assert_str_eq(pg_result_gpu(&set.items[1]), "H100\nH100");
	ck_assert_str_eq(pg_result_status(&set.items[1]), "ok");
	ck_assert_int_eq(set.items[1].kind, PG_SUITE_SERVING);
	/* no temporary files are left behind */
	snprintf(other, strlen(dir) + 64, "%s/serving_a_qps_1.json", dir);
	ck_assert_int_eq(stat(other, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0644);
	struct pg_strv all = PG_STRV_INIT;
	ck_assert_int_eq(pg_dir_list(dir, NULL, &all, &err), 0);
	ck_assert_uint_eq(all.n, 4);
	pg_strv_release(&all);

	tu_write_file(other, "{\"completed\": 1,,}");
	pg_result_set_release(&set);
	ck_assert_int_eq(pg_results_load_dir(&set, dir, &err), PG_ECONFIG);
	ck_assert_msg(strstr(err.msg, "serving_a_qps_1.json:1:"), "%s", err.msg);

	pg_result_set_release(&set);
	json_decref(res);
	json_decref(cmds);
	free(other);
	tu_rm_rf(dir);
	free(dir);
}
END_TEST

/* A results directory is read and written without following links: a
 * link is not listed, not read, and a directory link is not written
 * through (the base directory itself may be one). */
START_TEST(links_in_a_results_directory_are_not_followed)
{
	char *dir = tu_mkdtemp();
	struct pg_error err = PG_ERROR_INIT;
	struct pg_strv names = PG_STRV_INIT;
	struct pg_buf path = PG_BUF_INIT, target = PG_BUF_INIT, text = PG_BUF_INIT;
	struct pg_result_set set = PG_RESULT_SET_INIT;

	pg_buf_printf(&target, "%s/outside", dir);
	ck_assert_int_eq(pg_mkdir_p(target.ptr, &err), 0);
	pg_buf_printf(&path, "%s/outside/secret.json", dir);
	tu_write_file(path.ptr, "{\"completed\": 1, \"perfgate\": {\"suite\": \"serving\"}}");
	pg_buf_reset(&path);
	pg_buf_printf(&path, "%s/results", dir);
	ck_assert_int_eq(pg_mkdir_p(path.ptr, &err), 0);
	pg_buf_printf(&path, "/link.json");
	pg_buf_reset(&text);
	pg_buf_printf(&text, "%s/outside/secret.json", dir);
	ck_assert_int_eq(symlink(text.ptr, path.ptr), 0);
	pg_buf_reset(&path);
	pg_buf_printf(&path, "%s/results/charts", dir);
	ck_assert_int_eq(symlink(target.ptr, path.ptr), 0);
	pg_buf_reset(&path);
	pg_buf_printf(&path, "%s/results/real.json", dir);
	tu_write_file(path.ptr, "{\"completed\": 2, \"perfgate\": {\"suite\": \"serving\"}}");

	pg_buf_reset(&path);
	pg_buf_printf(&path, "%s/results", dir);
	ck_assert_int_eq(pg_dir_list_regular(path.ptr, ".json", &names, &err), 0);
	ck_assert_uint_eq(names.n, 1);
	ck_assert_str_eq(names.v[0], "real.json");
	ck_assert_int_eq(pg_results_load_dir(&set, path.ptr, &err), 0);
	ck_assert_uint_eq(set.n, 1);
	pg_strv_release(&names);
	ck_assert_int_eq(pg_subdir_list_real(path.ptr, NULL, &names, &err), 0);
	ck_assert_uint_eq(names.n, 0);

	pg_buf_reset(&text);
	pg_buf_printf(&path, "/link.json");
	ck_assert_int_eq(pg_file_read_nofollow(path.ptr, &text, &err), PG_ERR);
	ck_assert(strstr(err.msg, "a symbolic link, not read"));
	ck_assert_uint_eq(text.len, 0);

	pg_buf_reset(&path);
	pg_buf_printf(&path, "%s/results", dir);
	ck_assert_int_eq(pg_mkdir_under(path.ptr, "charts", &err), PG_ERR);
	ck_assert(strstr(err.msg, "results/charts: a symbolic link, not written through"));
	ck_assert_int_eq(pg_mkdir_under(path.ptr, "confirm/deeper", &err), 0);
	ck_assert_int_eq(pg_mkdir_under(path.ptr, "", &err), 0);
	/* the base may be a link: a results directory placed elsewhere */
	pg_buf_printf(&path, "/charts");
	ck_assert_int_eq(pg_mkdir_under(path.ptr, "x", &err), 0);

	pg_result_set_release(&set);
	pg_strv_release(&names);
	pg_buf_release(&path);
	pg_buf_release(&target);
	pg_buf_release(&text);
	tu_rm_rf(dir);
	free(dir);
}
END_TEST

static Suite *foundation_suite(void)
{
	Suite *s = suite_create("foundation");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, buf_grows_and_stays_terminated);
	tcase_add_test(tc, long_is_printf_and_space_appends);
	tcase_add_test(tc, numbers_format_like_python);
	tcase_add_test(tc, table_numbers_have_four_digits);
	tcase_add_test(tc, strict_number_parsing);
	tcase_add_test(tc, fixed_one_decimal_is_printf);
	tcase_add_test(tc, percent_changes_have_no_negative_zero);
	tcase_add_test(tc, g_is_printf);
	tcase_add_test(tc, g17_is_printf);
	tcase_add_test(tc, fixed_decimals_are_printf);
	tcase_add_test(tc, nearest_suggests_plausible_typos_only);
	tcase_add_test(tc, template_keeps_values_literal);
	tcase_add_test(tc, template_shell_quotes_by_context);
	tcase_add_test(tc, program_stands_in_for_vllm);
	tcase_add_test(tc, plan_names_points_like_vllm);
	tcase_add_test(tc, json_writer_is_python_compatible);
	tcase_add_test(tc, metric_registry_reads_results);
	tcase_add_test(tc, gpu_label_matches_vllm_converter);
	tcase_add_test(tc, gpu_key_normalises_every_shape);
	suite_add_tcase(s, tc);
	tc = tcase_create("io");
	tcase_add_test(tc, results_round_trip_through_a_directory);
	tcase_add_test(tc, links_in_a_results_directory_are_not_followed);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(foundation_suite());
}
