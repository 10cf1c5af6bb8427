/* The Prometheus text format parser (telemetry/prom.h), on the format's own
 * edge cases and on what vLLM, SGLang and TGI really serve. */
#include "testutil.h"

#include "base/error.h"
#include "telemetry/prom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse(struct pg_prom *p, const char *text, struct pg_error *err)
{
	return pg_prom_parse(p, text, strlen(text), err);
}

START_TEST(reference_example)
{
	/* the format reference's own example, whole */
	static const char text[] =
		"# HELP http_requests_total The total number of HTTP requests.\n"
		"# TYPE http_requests_total counter\n"
		"http_requests_total{method=\"post\",code=\"200\"} 1027 1395066363000\n"
		"http_requests_total{method=\"post\",code=\"400\"}    3 1395066363000\n"
		"\n"
		"# Escaping in label values:\n"
		"msdos_file_access_time_seconds{path=\"C:\\\\DIR\\\\FILE.TXT\",error=\"Cannot find "
		"file:\\n\\\"FILE.TXT\\\"\"} 1.458255915e9\n"
		"\n"
		"# Minimalistic line:\n"
		"metric_without_timestamp_and_labels 12.47\n"
		"\n"
		"# A weird metric from before the epoch:\n"
		"something_weird{problem=\"division by zero\"} +Inf -3982045\n"
		"\n"
		"# A histogram, which has a pretty complex representation in the text format:\n"
		"# HELP http_request_duration_seconds A histogram of the request duration.\n"
		"# TYPE http_request_duration_seconds histogram\n"
		"http_request_duration_seconds_bucket{le=\"0.05\"} 24054\n"
		"http_request_duration_seconds_bucket{le=\"0.1\"} 33444\n"
		"http_request_duration_seconds_bucket{le=\"0.2\"} 100392\n"
		"http_request_duration_seconds_bucket{le=\"0.5\"} 129389\n"
		"http_request_duration_seconds_bucket{le=\"1\"} 133988\n"
		"http_request_duration_seconds_bucket{le=\"+Inf\"} 144320\n"
		"http_request_duration_seconds_sum 53423\n"
		"http_request_duration_seconds_count 144320\n"
		"\n"
		"# Finally a summary, which has a complex representation, too:\n"
		"# HELP rpc_duration_seconds A summary of the RPC duration in seconds.\n"
		"# TYPE rpc_duration_seconds summary\n"
		"rpc_duration_seconds{quantile=\"0.01\"} 3102\n"
		"rpc_duration_seconds{quantile=\"0.05\"} 3272\n"
		"rpc_duration_seconds{quantile=\"0.5\"} 4773\n"
		"rpc_duration_seconds{quantile=\"0.9\"} 9001\n"
		"rpc_duration_seconds{quantile=\"0.99\"} 76656\n"
		"rpc_duration_seconds_sum 1.7560473e+07\n"
		"rpc_duration_seconds_count 2693\n";
	struct pg_prom p = PG_PROM_INIT;
	struct pg_error err = PG_ERROR_INIT;
	const struct pg_prom_family *f;
	const struct pg_prom_sample *s;

	ck_assert_msg(parse(&p, text, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(p.n_errors, 0);
	ck_assert_uint_eq(p.n_samples, 2 + 1 + 1 + 1 + 8 + 7);

	f = pg_prom_family(&p, "http_requests_total");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->type, PG_PROM_COUNTER);
	ck_assert_str_eq(f->help, "The total number of HTTP requests.");
	s = &p.samples[0];
	ck_assert_str_eq(s->name, "http_requests_total");
	ck_assert_str_eq(pg_prom_label(s, "code"), "200");
	ck_assert(s->has_timestamp && s->timestamp_ms == 1395066363000LL);
	ck_assert_double_eq(p.samples[1].value, 3);
	ck_assert_double_eq(pg_prom_sum(&p, "http_requests_total", NULL), 1030);

	s = &p.samples[2];
	ck_assert_str_eq(pg_prom_label(s, "path"), "C:\\DIR\\FILE.TXT");
	ck_assert_str_eq(pg_prom_label(s, "error"), "Cannot find file:\n\"FILE.TXT\"");
	ck_assert_double_eq(s->value, 1.458255915e9);
	ck_assert(!s->has_timestamp);
	ck_assert_int_eq(p.families[s->family].type, PG_PROM_UNTYPED);

	s = &p.samples[4];
	ck_assert(isinf(s->value) && s->value > 0);
	ck_assert(s->has_timestamp && s->timestamp_ms == -3982045);

	f = pg_prom_family(&p, "http_request_duration_seconds");
	ck_assert_int_eq(f->type, PG_PROM_HISTOGRAM);
	for (size_t i = 5; i < 13; i++)
		ck_assert_str_eq(p.families[p.samples[i].family].name,
				 "http_request_duration_seconds");
	ck_assert_str_eq(pg_prom_label(&p.samples[10], "le"), "+Inf");
	ck_assert_double_eq(pg_prom_sum(&p, "http_request_duration_seconds_count", NULL), 144320);
	/* the buckets, sum and count belong to the histogram, not families of
	 * their own */
	ck_assert_ptr_null(pg_prom_family(&p, "http_request_duration_seconds_bucket"));
	ck_assert_ptr_null(pg_prom_family(&p, "rpc_duration_seconds_sum"));
	ck_assert_str_eq(pg_prom_label(&p.samples[13], "quantile"), "0.01");
	ck_assert_double_eq(pg_prom_sum(&p, "rpc_duration_seconds_sum", NULL), 1.7560473e+07);
	pg_prom_release(&p);
}
END_TEST

START_TEST(special_values)
{
	static const char text[] = "a NaN\n"
				   "b +Inf\n"
				   "c -Inf\n"
				   "d Inf\n"
				   "e 1e-3\n"
				   "f -0\n"
				   "g 0x1p4\n"
				   "h  \t 7  \t\n"
				   "  i 8\n";
	struct pg_prom p = PG_PROM_INIT;
	struct pg_error err = PG_ERROR_INIT;
	size_t n = 9;

	ck_assert_msg(parse(&p, text, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(p.n_samples, n);
	ck_assert(isnan(p.samples[0].value));
	ck_assert(isinf(p.samples[1].value) && p.samples[1].value > 0);
	ck_assert(isinf(p.samples[2].value) && p.samples[2].value < 0);
	ck_assert(isinf(p.samples[3].value));
	ck_assert_double_eq(p.samples[4].value, 0.001);
	ck_assert(p.samples[5].value == 0 && signbit(p.samples[5].value));
	ck_assert_double_eq(p.samples[6].value, 16);
	ck_assert_double_eq(p.samples[7].value, 7);
	ck_assert_double_eq(p.samples[8].value, 8);
	/* a NaN series counts as present, but adds nothing */
	ck_assert_double_eq(pg_prom_sum(&p, "a", &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert(isnan(pg_prom_sum(&p, "nope", &n)) && n == 0);
	pg_prom_release(&p);
}
END_TEST

START_TEST(labels_edge_cases)
{
	static const char text[] =
		"x{a=\"1\",} 1\n"                       /* trailing comma */
		"x { a = \"2\" , b=\"\" } 2\n"          /* blanks everywhere, empty value */
		"x{} 3\n"                               /* empty label set */
		"y{a=\"}{,=\\\\\"} 4\n"                 /* braces, commas and '=' in a value */
		"z{a=\"caf\xc3\xa9 \xe2\x9c\x93\"} 5\n" /* UTF-8 */
		"{\"my.dotted.metric\",\"label.name\"=\"v\"} 6\n" /* quoted UTF-8 names */
		"w\r\n"                                           /* CR LF: a bad line */
		"v 7\r\n";
	struct pg_prom p = PG_PROM_INIT;
	struct pg_error err = PG_ERROR_INIT;

	ck_assert_int_eq(parse(&p, text, &err), PG_ECONFIG);
	ck_assert_uint_eq(p.n_errors, 1);
	ck_assert_msg(strstr(err.msg, "line 7:"), "%s", err.msg);
	ck_assert_uint_eq(p.n_samples, 7);
	ck_assert_str_eq(pg_prom_label(&p.samples[0], "a"), "1");
	ck_assert_uint_eq(p.samples[1].n_labels, 2);
	ck_assert_str_eq(pg_prom_label(&p.samples[1], "b"), "");
	ck_assert_uint_eq(p.samples[2].n_labels, 0);
	ck_assert_str_eq(pg_prom_label(&p.samples[3], "a"), "}{,=\\");
	ck_assert_str_eq(pg_prom_label(&p.samples[4], "a"), "caf\xc3\xa9 \xe2\x9c\x93");
	ck_assert_str_eq(p.samples[5].name, "my.dotted.metric");
	ck_assert_str_eq(pg_prom_label(&p.samples[5], "label.name"), "v");
	ck_assert_str_eq(p.samples[6].name, "v");
	ck_assert_double_eq(p.samples[6].value, 7);
	ck_assert_int_eq(p.samples[6].line, 8);
	pg_prom_release(&p);
}
END_TEST

START_TEST(help_escapes_and_comments)
{
	static const char text[] = "# HELP a line one\\nline two \\\\ and \\t stays\n"
				   "#HELP b not a HELP line: a comment\n"
				   "# just a comment with \"quotes\" {and braces}\n"
				   "# TYPE\n"
				   "# HELP\n"
				   "a 1\n";
	struct pg_prom p = PG_PROM_INIT;
	struct pg_error err = PG_ERROR_INIT;

	ck_assert_msg(parse(&p, text, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(pg_prom_family(&p, "a")->help, "line one\nline two \\ and \\t stays");
	ck_assert_ptr_null(pg_prom_family(&p, "b"));
	ck_assert_uint_eq(p.n_samples, 1);
	pg_prom_release(&p);
}
END_TEST

/* Each bad line is left out and named; the good lines around it stay. */
START_TEST(errors_name_the_line)
{
	static const struct {
		const char *text;
		const char *msg;
	} cases[] = {
		{ "ok 1\nx{a=\"1} 2\n", "line 2: label 'a': a quoted string is not terminated" },
		{ "ok 1\nx{a=\"\\t\"} 2\n", "invalid escape '\\t'" },
		{ "ok 1\nx{a=\"1\",a=\"2\"} 2\n", "label 'a' appears twice" },
		{ "ok 1\nx{a=1} 2\n", "the value of label 'a' is not quoted" },
		{ "ok 1\nx{a=\"1\" b=\"2\"} 2\n", "expected ',' or '}'" },
		{ "ok 1\nx{1a=\"1\"} 2\n", "expected a label name" },
		{ "ok 1\nx{a:b=\"1\"} 2\n", "expected '=' after label 'a'" },
		{ "ok 1\n9x 2\n", "expected a metric name" },
		{ "ok 1\nx twelve\n", "the value 'twelve' of 'x' is not a number" },
		{ "ok 1\nx nan(0x1)\n", "is not a number" },
		{ "ok 1\nx 1 12.5\n", "the timestamp '12.5' of 'x' is not an integer" },
		{ "ok 1\nx 1 2 3\n", "unexpected text after the sample" },
		{ "ok 1\nx\n", "expected a blank before the value" },
		{ "ok 1\nx{a=\"1\"}2\n", "expected a blank before the value" },
		{ "ok 1\n# TYPE x countr\nx 1\n", "unknown metric type 'countr' for 'x'" },
		{ "ok 1\n# TYPE x gauge\n# TYPE x gauge\nx 1\n", "a second TYPE line for 'x'" },
		{ "ok 1\n# HELP x a\n# HELP x b\nx 1\n", "a second HELP line for 'x'" },
		{ "x 1\n# TYPE x gauge\n", "the TYPE of 'x' comes after its samples" },
		{ "x{a=\"1\"} 1\ny 2\nx{a=\"2\"} 3\n", "the samples of 'x' are not together" },
		{ "x{a=\"1\",b=\"2\"} 1\nx{b=\"2\",a=\"1\"} 1\n",
		  "'x' with these labels appears twice" },
		{ "# TYPE h histogram\nh_bucket 1\n", "'h_bucket' has no 'le' label" },
		{ "# TYPE h histogram\nh_bucket{le=\"big\"} 1\n", "le=\"big\" is not a number" },
		{ "# TYPE h histogram\nh 1\n", "histogram 'h' has no sample of its bare name" },
		{ "# TYPE h histogram\nh_bucket{le=\"1\"} 5\nh_bucket{le=\"2\"} 4\n",
		  "the buckets of 'h_bucket' go down at le=\"2\"" },
		{ "# TYPE s summary\ns 1\n", "'s' has no 'quantile' label" },
		{ "# TYPE c counter\nc -1\n", "counter 'c' is negative" },
		{ "ok 1\nx 5", "line 2: the last line has no line feed" },
		{ "ok 1\nx{a=\"a\0b\"} 1\n", "a NUL byte" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pg_prom p = PG_PROM_INIT;
		struct pg_error err = PG_ERROR_INIT;
		const char *t = cases[i].text;
		/* the NUL case is longer than strlen says */
		size_t len = strstr(cases[i].msg, "NUL") ? strlen(t) + 1 + strlen(t + strlen(t) + 1)
							 : strlen(t);

		ck_assert_msg(pg_prom_parse(&p, t, len, &err) == PG_ECONFIG, "case %zu parsed", i);
		ck_assert_msg(strstr(err.msg, cases[i].msg), "case %zu: '%s' lacks '%s'", i,
			      err.msg, cases[i].msg);
		ck_assert_uint_eq(p.n_errors, 1);
		pg_prom_release(&p);
	}
}
END_TEST

/* Buckets of different series may each start low again. */
START_TEST(histogram_series_and_cumulative_buckets)
{
	static const char text[] = "# TYPE h histogram\n"
				   "h_bucket{m=\"a\",le=\"1\"} 5\n"
				   "h_bucket{m=\"a\",le=\"+Inf\"} 9\n"
				   "h_sum{m=\"a\"} 12.5\n"
				   "h_count{m=\"a\"} 9\n"
				   "h_bucket{m=\"b\",le=\"1\"} 1\n"
				   "h_bucket{m=\"b\",le=\"+Inf\"} 1\n"
				   "h_sum{m=\"b\"} 0.5\n"
				   "h_count{m=\"b\"} 1\n"
				   "h_created{m=\"b\"} 1.7e9\n";
	struct pg_prom p = PG_PROM_INIT;
	struct pg_error err = PG_ERROR_INIT;

	ck_assert_msg(parse(&p, text, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(p.n_families, 1);
	ck_assert_double_eq(pg_prom_sum(&p, "h_count", NULL), 10);
	ck_assert_double_eq(pg_prom_max(&p, "h_sum"), 12.5);
	pg_prom_release(&p);
}
END_TEST

/* What Python's prometheus_client writes for vLLM and SGLang: a counter
 * family "x" with samples "x_total" and "x_created". */
START_TEST(python_client_counters)
{
	static const char text[] =
		"# HELP vllm:num_preemptions Cumulative number of preemption from the engine.\n"
		"# TYPE vllm:num_preemptions counter\n"
		"vllm:num_preemptions_total{engine=\"0\",model_name=\"m\"} 3.0\n"
		"vllm:num_preemptions_total{engine=\"1\",model_name=\"m\"} 4.0\n"
		"vllm:num_preemptions_created{engine=\"0\",model_name=\"m\"} 1.7e9\n"
		"# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
		"# TYPE vllm:num_requests_running gauge\n"
		"vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 12.0\n"
		"vllm:num_requests_running{engine=\"1\",model_name=\"m\"} 9.0\n";
	struct pg_prom p = PG_PROM_INIT;
	struct pg_error err = PG_ERROR_INIT;
	size_t n;

	ck_assert_msg(parse(&p, text, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(p.n_families, 2);
	ck_assert_int_eq(p.families[p.samples[0].family].type, PG_PROM_COUNTER);
	ck_assert_str_eq(p.families[p.samples[2].family].name, "vllm:num_preemptions");
	ck_assert_double_eq(pg_prom_sum(&p, "vllm:num_preemptions_total", &n), 7);
	ck_assert_uint_eq(n, 2);
	ck_assert_double_eq(pg_prom_sum(&p, "vllm:num_requests_running", NULL), 21);
	ck_assert_double_eq(pg_prom_max(&p, "vllm:num_requests_running"), 12);
	pg_prom_release(&p);
}
END_TEST

START_TEST(empty_and_odd_inputs)
{
	struct pg_prom p = PG_PROM_INIT;
	struct pg_error err = PG_ERROR_INIT;

	ck_assert_int_eq(pg_prom_parse(&p, "", 0, &err), 0);
	ck_assert_uint_eq(p.n_samples, 0);
	pg_prom_release(&p);
	ck_assert_int_eq(pg_prom_parse(&p, NULL, 0, &err), 0);
	pg_prom_release(&p);
	ck_assert_int_eq(parse(&p, "\n\n   \n\t\n", &err), 0);
	pg_prom_release(&p);
	/* not text at all: every line is an error, nothing crashes */
	ck_assert_int_eq(parse(&p, "<html>\n<body>404</body>\n</html>\n", &err), PG_ECONFIG);
	ck_assert_uint_eq(p.n_errors, 3);
	ck_assert_uint_eq(p.n_samples, 0);
	pg_prom_release(&p);
}
END_TEST

/* Many series of one family: the duplicate check stays exact past its
 * table's growth. */
START_TEST(many_series)
{
	struct pg_prom p = PG_PROM_INIT;
	struct pg_error err = PG_ERROR_INIT;
	char *text = malloc(5000 * 40 + 64);
	size_t len = 0;

	len += (size_t)snprintf(text + len, 64, "# TYPE g gauge\n");
	for (int i = 0; i < 5000; i++)
		len += (size_t)snprintf(text + len, 40, "g{i=\"%d\"} %d\n", i, i);
	ck_assert_msg(pg_prom_parse(&p, text, len, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(p.n_samples, 5000);
	ck_assert_double_eq(pg_prom_sum(&p, "g", NULL), 4999.0 * 5000 / 2);
	pg_prom_release(&p);
	len += (size_t)snprintf(text + len, 40, "g{i=\"17\"} 1\n");
	ck_assert_int_eq(pg_prom_parse(&p, text, len, &err), PG_ECONFIG);
	ck_assert_msg(strstr(err.msg, "line 5002:"), "%s", err.msg);
	pg_prom_release(&p);
	free(text);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("prom");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, reference_example);
	tcase_add_test(tc, special_values);
	tcase_add_test(tc, labels_edge_cases);
	tcase_add_test(tc, help_escapes_and_comments);
	tcase_add_test(tc, errors_name_the_line);
	tcase_add_test(tc, histogram_series_and_cumulative_buckets);
	tcase_add_test(tc, python_client_counters);
	tcase_add_test(tc, empty_and_odd_inputs);
	tcase_add_test(tc, many_series);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
