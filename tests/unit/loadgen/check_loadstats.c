/* The pure half of the load generator: the random generator, arrivals,
 * numpy-exact statistics, every serving metric from a recorded event
 * trace, and the datasets. */
#include "testutil.h"

#include "loadgen/arrivals.h"
#include "base/buf.h"
#include "loadgen/dataset.h"
#include "base/error.h"
#include "base/jsonscan.h"
#include "base/jsonw.h"
#include "loadgen/loadstats.h"
#include "base/pyrand.h"
#include "loadgen/reqtrace.h"
#include "base/rng.h"
#include "base/stats.h"
#include "results/repeats.h"
#include "results/results_io.h"
#include "results/tails.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TOL 1e-9

START_TEST(rng_matches_reference_vectors)
{
	/* published outputs: splitmix64 from 0, xoshiro256** from {1,2,3,4} */
	uint64_t sm = 0;
	ck_assert_uint_eq(pg_splitmix64(&sm), 0xe220a8397b1dcdafULL);
	ck_assert_uint_eq(pg_splitmix64(&sm), 0x6e789e6aa1b965f4ULL);
	ck_assert_uint_eq(pg_splitmix64(&sm), 0x06c45d188009454fULL);

	struct pg_rng r = { { 1, 2, 3, 4 } };
	static const uint64_t want[] = { 11520ULL,
					 0ULL,
					 1509978240ULL,
					 1215971899390074240ULL,
					 1216172134540287360ULL,
					 607988272756665600ULL };
	for (size_t i = 0; i < 6; i++)
		ck_assert_uint_eq(pg_rng_next(&r), want[i]);

	struct pg_rng a, b;
	pg_rng_seed(&a, 42);
	pg_rng_seed(&b, 42);
	for (int i = 0; i < 1000; i++) {
		long x = pg_rng_range(&a, -3, 3);
		ck_assert_int_eq(x, pg_rng_range(&b, -3, 3));
		ck_assert(x >= -3 && x <= 3);
		double u = pg_rng_uniform(&a);
		ck_assert(u >= 0 && u < 1);
		pg_rng_uniform(&b);
	}
}
END_TEST

/* Mean and coefficient of variation of many gamma draws: mean = shape *
 * scale, CV = 1/sqrt(shape). Bounds are ~6 standard errors wide. */
START_TEST(gamma_has_the_right_mean_and_cv)
{
	static const double shapes[] = { 0.25, 0.5, 1.0, 2.0, 4.0 };
	const size_t n = 100000;

	for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
		struct pg_mt mt;
		double scale = 1.0 / (8.0 * shapes[k]); /* rate 8 req/s */
		double *x = malloc(n * sizeof(double));

		pg_mt_seed_numpy(&mt, 7 + k);
		for (size_t i = 0; i < n; i++) {
			x[i] = pg_np_gamma(&mt, shapes[k], scale);
			ck_assert(x[i] >= 0);
		}
		double mean = pg_stats_mean(x, n), sd = pg_stats_std(x, n);
		double cv = sd / mean, want_cv = 1.0 / sqrt(shapes[k]);
		ck_assert_msg(fabs(mean - 0.125) < 0.125 * 6 * want_cv / sqrt((double)n),
			      "shape %g: mean %g", shapes[k], mean);
		ck_assert_msg(fabs(cv - want_cv) < 0.03 * want_cv + 0.01, "shape %g: cv %g want %g",
			      shapes[k], cv, want_cv);
		free(x);
	}
}
END_TEST

START_TEST(arrivals_are_rescaled_and_reproducible)
{
	struct pg_error err = PG_ERROR_INIT;
	double a[500], b[500];

	ck_assert_int_eq(pg_arrivals(a, 500, 10, 1.0, 3, &err), 0);
	ck_assert_int_eq(pg_arrivals(b, 500, 10, 1.0, 3, &err), 0);
	ck_assert(!memcmp(a, b, sizeof(a)));
	/* the last request is due at exactly n / rate (vLLM's rescale) */
	ck_assert_double_eq_tol(a[499], 50.0, 1e-12);
	ck_assert(a[0] > 0);
	for (int i = 1; i < 500; i++)
		ck_assert(a[i] >= a[i - 1]);
	ck_assert_int_eq(pg_arrivals(b, 500, 10, 1.0, 4, &err), 0);
	ck_assert(memcmp(a, b, sizeof(a)));

	/* bursty arrivals have a larger spread of gaps than smooth ones */
	double cv[2];
	const double shapes[2] = { 0.5, 8 };
	for (int k = 0; k < 2; k++) {
		double gaps[499];
		ck_assert_int_eq(pg_arrivals(a, 500, 10, shapes[k], 1, &err), 0);
		for (int i = 0; i < 499; i++)
			gaps[i] = a[i + 1] - a[i];
		cv[k] = pg_stats_std(gaps, 499) / pg_stats_mean(gaps, 499);
	}
	ck_assert_msg(cv[0] > 1.2 && cv[1] < 0.5, "cv %g %g", cv[0], cv[1]);

	ck_assert_int_eq(pg_arrivals(a, 5, INFINITY, 1.0, 0, &err), 0);
	for (int i = 0; i < 5; i++)
		ck_assert(a[i] == 0);
	ck_assert_int_eq(pg_arrivals(a, 4, 2, INFINITY, 0, &err), 0);
	ck_assert_double_eq_tol(a[0], 0.5, 1e-15);
	ck_assert_double_eq_tol(a[3], 2.0, 1e-15);
	ck_assert_int_eq(pg_arrivals(a, 4, 0, 1, 0, &err), PG_ECONFIG);
	ck_assert_int_eq(pg_arrivals(a, 4, 1, -1, 0, &err), PG_ECONFIG);
}
END_TEST

static json_t *reals(const double *x, size_t n)
{
	json_t *v = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(v, json_real(x[i]));
	return v;
}

/* vLLM's random streams, written to a golden file that
 * tests/py/test_vllm_random.py recomputes with numpy and Python's random
 * (vLLM's get_request, load_data and maybe_oversample_requests) and
 * compares for exact equality: gamma draws, whole arrival schedules (fixed
 * rate and ramp-up), shuffles and oversampling picks. */
START_TEST(vllm_random_streams)
{
	static const uint64_t seeds[] = { 0, 1, 42, 4294967295u };
	static const double shapes[] = { 0.25, 0.5, 1, 2.5, 8 };
	static const uint64_t py_seeds[] = { 0, 7, 1099511627779u };
	static const size_t sizes[] = { 1, 2, 10, 1000 };
	const struct pg_ramp_up ramps[] = { { PG_RAMP_LINEAR, 1, 50 },
					    { PG_RAMP_EXPONENTIAL, 2, 64 } };
	json_t *root = json_object(), *gammas = json_array(), *sched = json_array();
	json_t *shuffles = json_array(), *choices = json_array();
	struct pg_error err = PG_ERROR_INIT;
	struct pg_buf out = PG_BUF_INIT;
	double a[300];

	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
			struct pg_mt mt;
			json_t *draws = json_array();

			pg_mt_seed_numpy(&mt, seeds[i]);
			for (int d = 0; d < 200; d++)
				json_array_append_new(draws,
						      json_real(pg_np_gamma(&mt, shapes[k], 0.5)));
			json_array_append_new(gammas,
					      json_pack("{s:I, s:f, s:f, s:o}", "seed",
							(json_int_t)seeds[i], "shape", shapes[k],
							"scale", 0.5, "draws", draws));
		}
	}
	for (size_t i = 0; i < 3; i++) {
		for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
			ck_assert_int_eq(pg_arrivals(a, 300, 7.5, shapes[k], seeds[i], &err), 0);
			json_array_append_new(sched, json_pack("{s:I, s:f, s:f, s:o}", "seed",
							       (json_int_t)seeds[i], "rate", 7.5,
							       "burstiness", shapes[k], "due",
							       reals(a, 300)));
		}
		for (size_t r = 0; r < 2; r++) {
			ck_assert_int_eq(pg_arrivals_ramp(a, 300, &ramps[r], 1.0, seeds[i], &err),
					 0);
			json_array_append_new(sched,
					      json_pack("{s:I, s:s, s:i, s:i, s:f, s:o}", "seed",
							(json_int_t)seeds[i], "ramp",
							pg_ramp_strategy_name(ramps[r].strategy),
							"start", (int)ramps[r].start_rps, "end",
							(int)ramps[r].end_rps, "burstiness", 1.0,
							"due", reals(a, 300)));
		}
	}
	for (size_t i = 0; i < sizeof(py_seeds) / sizeof(py_seeds[0]); i++) {
		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			struct pg_mt mt;
			size_t *idx = malloc(sizes[k] * sizeof(*idx));
			json_t *perm = json_array(), *picks = json_array();

			for (size_t j = 0; j < sizes[k]; j++)
				idx[j] = j;
			pg_mt_seed_python(&mt, py_seeds[i]);
			pg_py_shuffle(&mt, idx, sizes[k]);
			for (size_t j = 0; j < sizes[k]; j++)
				json_array_append_new(perm, json_integer((json_int_t)idx[j]));
			json_array_append_new(shuffles,
					      json_pack("{s:I, s:I, s:o}", "seed",
							(json_int_t)py_seeds[i], "n",
							(json_int_t)sizes[k], "permutation", perm));
			pg_mt_seed_python(&mt, py_seeds[i]);
			for (int j = 0; j < 25; j++)
				json_array_append_new(picks, json_integer((json_int_t)pg_py_choice(
								     &mt, sizes[k])));
			json_array_append_new(choices,
					      json_pack("{s:I, s:I, s:o}", "seed",
							(json_int_t)py_seeds[i], "n",
							(json_int_t)sizes[k], "picks", picks));
			free(idx);
		}
	}
	json_object_set_new(root, "gamma", gammas);
	json_object_set_new(root, "schedules", sched);
	json_object_set_new(root, "shuffles", shuffles);
	json_object_set_new(root, "choices", choices);
	pg_json_write(&out, root, 1);
	pg_buf_putc(&out, '\n');
	tu_assert_golden("golden/loadgen/vllm_random.json", out.ptr);
	pg_buf_release(&out);
	json_decref(root);
}
END_TEST

/* vLLM's ramp-up: the rate of request i from progress i/(n-1), one gap
 * per request drawn from the same seeded stream as a fixed rate, and no
 * rescaling. */
START_TEST(arrivals_ramp_up_like_vllm)
{
	const struct pg_ramp_up lin = { PG_RAMP_LINEAR, 2, 20 },
				expo = { PG_RAMP_EXPONENTIAL, 1, 16 };
	const struct pg_ramp_up flat = { PG_RAMP_LINEAR, 10, 10 };
	struct pg_error err = PG_ERROR_INIT;
	double a[2000], b[2000], sum = 0;

	ck_assert_double_eq(pg_ramp_rate(&lin, 0, 11), 2);
	ck_assert_double_eq(pg_ramp_rate(&lin, 5, 11), 11);
	ck_assert_double_eq(pg_ramp_rate(&lin, 10, 11), 20);
	ck_assert_double_eq_tol(pg_ramp_rate(&expo, 2, 5), 4, 1e-12);
	ck_assert_double_eq_tol(pg_ramp_rate(&expo, 4, 5), 16, 1e-12);
	ck_assert_double_eq(pg_ramp_rate(&lin, 0, 1), 2); /* one request: the start */

	/* evenly spaced (burstiness inf): each gap is exactly 1/rate(i) */
	ck_assert_int_eq(pg_arrivals_ramp(a, 11, &lin, INFINITY, 0, &err), 0);
	for (int i = 0; i < 11; i++) {
		sum += 1.0 / (2 + 1.8 * i);
		ck_assert_double_eq_tol(a[i], sum, 1e-12);
	}

	/* a flat ramp draws what a fixed rate draws, before vLLM's rescale */
	ck_assert_int_eq(pg_arrivals_ramp(a, 500, &flat, 1.0, 3, &err), 0);
	ck_assert_int_eq(pg_arrivals(b, 500, 10, 1.0, 3, &err), 0);
	for (int i = 0; i < 500; i++)
		ck_assert_double_eq_tol(a[i] * (b[499] / a[499]), b[i], 1e-9);

	/* Poisson on a ramp: early gaps long, late gaps short; seeded */
	ck_assert_int_eq(pg_arrivals_ramp(a, 2000, &lin, 1.0, 7, &err), 0);
	ck_assert_int_eq(pg_arrivals_ramp(b, 2000, &lin, 1.0, 7, &err), 0);
	ck_assert(!memcmp(a, b, sizeof(a)));
	{
		double early = a[199] / 200, late = (a[1999] - a[1799]) / 200;
		/* rates 2..3.8 vs 18.2..20 req/s: mean gaps about 0.37 s and 0.052 s */
		ck_assert_msg(early > 0.28 && early < 0.46 && late > 0.04 && late < 0.065, "%g %g",
			      early, late);
	}

	const struct pg_ramp_up none = { PG_RAMP_NONE, 1, 2 }, zero = { PG_RAMP_LINEAR, 0, 5 };
	ck_assert_int_eq(pg_arrivals_ramp(a, 4, &none, 1.0, 0, &err), PG_ECONFIG);
	ck_assert_int_eq(pg_arrivals_ramp(a, 4, &zero, 1.0, 0, &err), PG_ECONFIG);
	ck_assert_str_eq(err.msg, "ramp-up: start and end rates must be >= 1 req/s, got 0 and 5");
	ck_assert_int_eq(pg_arrivals_ramp(a, 4, &lin, 0, 0, &err), PG_ECONFIG);
}
END_TEST

/* Statistics of deterministic arrays, written to a golden file that
 * tests/py/test_numpy_parity.py recomputes with numpy and compares for
 * exact equality. */
static double parity_value(size_t i)
{
	return (double)((i * 7919) % 1009) / 997.0 + (double)i * 1e-3 + 1.0 / (double)(i + 3);
}

START_TEST(stats_match_numpy)
{
	static const size_t sizes[] = { 1, 2, 3, 7, 8, 9, 100, 128, 129, 1000, 4097 };
	static const double pct[] = { 0, 10, 25, 50, 75, 90, 99, 99.9, 100 };
	json_t *root = json_array();
	struct pg_buf out = PG_BUF_INIT;
	char word[32];

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k];
		double *x = malloc(n * sizeof(double)), *s = malloc(n * sizeof(double));
		struct pg_summary sum;
		json_t *o = json_object(), *p = json_object();

		for (size_t i = 0; i < n; i++)
			x[i] = parity_value(i);
		pg_stats_summary(&sum, x, n, s);
		json_object_set_new(o, "n", json_integer((json_int_t)n));
		json_object_set_new(o, "sum", json_real(pg_stats_sum(x, n)));
		json_object_set_new(o, "mean", json_real(sum.mean));
		json_object_set_new(o, "median", json_real(sum.median));
		json_object_set_new(o, "std", json_real(sum.std));
		for (size_t j = 0; j < sizeof(pct) / sizeof(pct[0]); j++) {
			pg_percentile_word(word, pct[j]);
			json_object_set_new(p, word,
					    json_real(pg_stats_percentile_sorted(s, n, pct[j])));
		}
		json_object_set_new(o, "percentiles", p);
		json_array_append_new(root, o);
		free(x);
		free(s);
	}
	pg_json_write(&out, root, 1);
	pg_buf_putc(&out, '\n');
	tu_assert_golden("golden/loadgen/numpy_parity.json", out.ptr);
	pg_buf_release(&out);
	json_decref(root);

	/* empty -> 0, as vLLM replaces an empty list by 0 */
	ck_assert(pg_stats_mean(NULL, 0) == 0);
	ck_assert(pg_stats_std(NULL, 0) == 0);
	ck_assert(pg_stats_percentile_sorted(NULL, 0, 99) == 0);
	ck_assert(pg_stats_median_sorted(NULL, 0) == 0);
	pg_percentile_word(word, 99);
	ck_assert_str_eq(word, "99");
	pg_percentile_word(word, 99.9);
	ck_assert_str_eq(word, "99.9");
	pg_percentile_word(word, 50.0);
	ck_assert_str_eq(word, "50");
}
END_TEST

/* Replay the recorded trace through the same response reader the HTTP
 * client uses. */
static struct pg_reqtrace *load_trace(size_t *n, double *duration_s)
{
	char *path = tu_test_path("data/loadgen/trace.json");
	struct pg_error err = PG_ERROR_INIT;
	json_t *root = pg_results_load_json(path, &err), *reqs;
	struct pg_reqtrace *t;

	ck_assert_msg(root != NULL, "%s", err.msg);
	reqs = json_object_get(root, "requests");
	*n = json_array_size(reqs);
	*duration_s = (double)json_integer_value(json_object_get(root, "duration_ns")) / 1e9;
	t = calloc(*n, sizeof(*t));
	for (size_t i = 0; i < *n; i++) {
		json_t *r = json_array_get(reqs, i), *part;
		struct pg_oai_resp resp;
		size_t k;
		const char *transport = json_string_value(json_object_get(r, "transport"));

		pg_reqtrace_init(&t[i]);
		t[i].prompt_len = (long)json_integer_value(json_object_get(r, "prompt_len"));
		t[i].scheduled_ns = json_integer_value(json_object_get(r, "scheduled_ns"));
		t[i].sent_ns = json_integer_value(json_object_get(r, "sent_ns"));
		pg_oai_resp_init(&resp);
		pg_oai_resp_begin(&resp, &t[i],
				  (int)json_integer_value(json_object_get(r, "status")));
		json_array_foreach(json_object_get(r, "body"), k, part)
		{
			const char *bytes = json_string_value(json_array_get(part, 1));
			pg_oai_resp_feed(&resp, json_integer_value(json_array_get(part, 0)), bytes,
					 strlen(bytes));
		}
		pg_oai_resp_end(&resp, json_integer_value(json_object_get(r, "end_ns")),
				!strcmp(transport, "disconnect") ? PG_FAIL_DISCONNECT
								 : PG_FAIL_NONE,
				"transfer closed with outstanding read data remaining");
		pg_oai_resp_release(&resp);
	}
	json_decref(root);
	free(path);
	return t;
}

static double num(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	ck_assert_msg(json_is_number(v), "missing %s", key);
	return json_number_value(v);
}

/* vLLM's client_queue_time and e2el_including_client_queue: the wait for
 * a concurrency slot after a request was due, over completed requests,
 * only with a limit (the second only at a finite rate), only when asked. */
START_TEST(client_queue_metrics)
{
	static const int64_t wait_ms[] = { 0, 4, 10, 3, 7 };
	static const double pct[] = { 50, 99 };
	size_t n;
	double dur;
	struct pg_reqtrace *t = load_trace(&n, &dur);
	struct pg_serve_stats_opts opts = {
		.percentiles = pct,
		.n_percentiles = 2,
		.metrics = PG_LOADSTATS_E2EL | PG_LOADSTATS_CLIENT_QUEUE | PG_LOADSTATS_E2EL_QUEUE,
		.duration_s = dur,
	};
	json_t *o = json_object();

	for (size_t i = 0; i < n; i++)
		t[i].eligible_ns = t[i].scheduled_ns + wait_ms[i] * 1000000;
	pg_serve_metrics(o, t, n, &opts);
	ck_assert_ptr_nonnull(json_object_get(o, "mean_e2el_ms"));
	ck_assert_ptr_null(json_object_get(o, "mean_client_queue_time_ms")); /* no limit */
	json_decref(o);

	opts.bounded = true;
	o = json_object();
	pg_serve_metrics(o, t, n, &opts);
	/* completed requests 0, 1, 2 waited 0, 4, 10 ms; e2el 35, 25, 50 ms */
	ck_assert_double_eq_tol(num(o, "mean_client_queue_time_ms"), 14.0 / 3, TOL);
	ck_assert_double_eq_tol(num(o, "median_client_queue_time_ms"), 4, TOL);
	ck_assert_double_eq_tol(num(o, "p99_client_queue_time_ms"), 4 + 6 * 0.98, TOL);
	ck_assert_ptr_null(
		json_object_get(o, "mean_e2el_including_client_queue_ms")); /* rate inf */
	json_decref(o);

	opts.finite_rate = true;
	o = json_object();
	pg_serve_metrics(o, t, n, &opts);
	ck_assert_double_eq_tol(num(o, "mean_e2el_including_client_queue_ms"), 124.0 / 3, TOL);
	ck_assert_double_eq_tol(num(o, "median_e2el_including_client_queue_ms"), 35, TOL);
	ck_assert_double_eq_tol(num(o, "p99_e2el_including_client_queue_ms"), 35 + 25 * 0.98, TOL);
	/* vLLM's order: after e2el */
	{
		const char *prev = NULL, *key;
		json_t *v;
		bool seen_e2el = false;
		json_object_foreach(o, key, v)
		{
			seen_e2el = seen_e2el || !strcmp(key, "p99_e2el_ms");
			if (!strcmp(key, "mean_client_queue_time_ms"))
				ck_assert(seen_e2el && prev && !strcmp(prev, "p99_e2el_ms"));
			prev = key;
		}
	}
	json_decref(o);
	for (size_t i = 0; i < n; i++)
		pg_reqtrace_release(&t[i]);
	free(t);
}
END_TEST

/* n successful requests, 3 content messages each; request i's TTFT is
 * a permutation of 1..n ms (i * 7919 mod n), its messages 10 ms apart. */
static struct pg_reqtrace *ladder_traces(size_t n)
{
	struct pg_reqtrace *t = calloc(n, sizeof(*t));

	for (size_t i = 0; i < n; i++) {
		int64_t ttft = (int64_t)((i * 7919) % n + 1) * 1000000;
		pg_reqtrace_init(&t[i]);
		pg_reqtrace_reserve(&t[i], 3);
		t[i].scheduled_ns = t[i].sent_ns = (int64_t)i * 1000000;
		for (int k = 0; k < 3; k++)
			t[i].chunk_ns[t[i].n_chunks++] = t[i].sent_ns + ttft + k * 10000000;
		t[i].usage_completion_tokens = 3;
		t[i].usage_prompt_tokens = 8;
		t[i].http_status = 200;
	}
	return t;
}

/* perfgate.certified.<metric>.<key> ("p99.9" has a dot of its own) */
static json_t *cert(const json_t *o, const char *metric, const char *key)
{
	return json_object_get(pg_json_path(pg_json_path(o, "perfgate.certified"), metric), key);
}

/* perfgate.certified: the t-th largest sample for MLPerf's t, in ms, null
 * below the percentile's minimum n; repeats keep it out of their entries
 * and the merged result keeps the runs' medians. */
START_TEST(certified_percentiles_of_a_run)
{
	static const double pct[] = { 90, 99, 99.9 };
	struct pg_serve_stats_opts opts = {
		.percentiles = pct,
		.n_percentiles = 3,
		.metrics = PG_LOADSTATS_TTFT | PG_LOADSTATS_ITL,
		.duration_s = 2,
	};
	struct pg_reqtrace *t = ladder_traces(1000);
	json_t *o = json_object(), *o2 = json_object(), *runs[2], *merged, *rep;

	pg_serve_metrics(o, t, 1000, &opts);
	ck_assert_str_eq(json_string_value(pg_json_path(o, "perfgate.certified.method")),
			 "mlperf-early-stopping");
	ck_assert_int_eq(json_integer_value(pg_json_path(o, "perfgate.certified.ttft.n")), 1000);
	/* TTFTs are 1..1000 ms: p99 is the 2nd largest, p50 the 462nd, p90 the 78th */
	ck_assert_double_eq_tol(json_number_value(cert(o, "ttft", "p99")), 999, TOL);
	ck_assert_double_eq_tol(json_number_value(cert(o, "ttft", "p50")), 1000 - 462 + 1, TOL);
	ck_assert_double_eq_tol(json_number_value(cert(o, "ttft", "p90")), 1000 - 78 + 1, TOL);
	ck_assert(json_is_null(cert(o, "ttft", "p99.9")));
	/* never below the plain percentile */
	ck_assert(json_number_value(cert(o, "ttft", "p99")) >= num(o, "p99_ttft_ms"));
	/* ITL: 2,000 gaps of 10 ms */
	ck_assert_int_eq(json_integer_value(pg_json_path(o, "perfgate.certified.itl.n")), 2000);
	ck_assert_double_eq_tol(json_number_value(cert(o, "itl", "p99")), 10, 1e-6);
	ck_assert_ptr_null(pg_json_path(o, "perfgate.certified.tpot"));

	/* 661 requests cannot certify a p99, 662 can (the maximum) */
	pg_serve_metrics(o2, t, 661, &opts);
	ck_assert(json_is_null(cert(o2, "ttft", "p99")));
	ck_assert(json_is_number(cert(o2, "ttft", "p90")));

	runs[0] = o;
	runs[1] = o2;
	merged = pg_repeats_median(runs, 2);
	ck_assert_double_eq(json_number_value(cert(merged, "ttft", "n")), 830.5);
	rep = pg_repeats_metrics(o);
	ck_assert_ptr_null(json_object_get(rep, "perfgate"));
	ck_assert_ptr_nonnull(json_object_get(rep, "p99_ttft_ms"));
	json_decref(rep);
	json_decref(merged);
	json_decref(o);
	json_decref(o2);
	for (size_t i = 0; i < 1000; i++)
		pg_reqtrace_release(&t[i]);
	free(t);
}
END_TEST

START_TEST(serving_metrics_from_a_recorded_trace)
{
	size_t n;
	double dur;
	struct pg_reqtrace *t = load_trace(&n, &dur);
	json_t *o = json_object();
	static const double pct[] = { 50, 99 };
	struct pg_serve_stats_opts opts = {
		.percentiles = pct,
		.n_percentiles = 2,
		.metrics = PG_LOADSTATS_TTFT | PG_LOADSTATS_TPOT | PG_LOADSTATS_ITL |
			   PG_LOADSTATS_E2EL,
		.goodput = { 20, 10, NAN, NAN, 100 },
		.duration_s = dur,
		.detailed = true,
		.dataset_input_source = "token_ids",
		.health = { .busy_fraction = 0.25, .read_delay_p99_ms = 0.12 },
	};
	struct pg_buf out = PG_BUF_INIT;

	pg_serve_metrics(o, t, n, &opts);

	/* hand-computed: ttft 10, 20, 50 ms; itl 10, 15 | 5 ms; tpot
	 * (35-10)/2, (25-20)/3 ms; e2el 35, 25, 50 ms; 2 failures */
	ck_assert_int_eq((long)num(o, "completed"), 3);
	ck_assert_int_eq((long)num(o, "failed"), 2);
	ck_assert_int_eq((long)num(o, "total_input_tokens"), 5 + 7 + 6); /* server usage wins */
	ck_assert_int_eq((long)num(o, "total_output_tokens"), 3 + 4 + 1);
	ck_assert_double_eq_tol(num(o, "duration"), 0.1, TOL);
	ck_assert_double_eq_tol(num(o, "request_throughput"), 30, TOL);
	ck_assert_double_eq_tol(num(o, "output_throughput"), 80, TOL);
	ck_assert_double_eq_tol(num(o, "total_token_throughput"), 260, TOL);
	/* goodput ttft<=20 ms and tpot<=10 ms: only request 1, whose TTFT is
	 * exactly 20 ms (inclusive) */
	ck_assert_double_eq_tol(num(o, "request_goodput"), 10, TOL);
	/* SLO attainment over the 5 requests sent (failures miss every SLO):
	 * TTFT met by 10 and 20 ms, TPOT by 1.67 ms and the one-token
	 * request's 0, both only by request 1; its 4 tokens in 0.1 s */
	ck_assert_double_eq_tol(num(o, "slo_attainment_ttft"), 0.4, TOL);
	ck_assert_double_eq_tol(num(o, "slo_attainment_tpot"), 0.4, TOL);
	ck_assert_double_eq_tol(num(o, "slo_attainment"), 0.2, TOL);
	ck_assert_double_eq_tol(num(o, "token_goodput"), 40, TOL);
	ck_assert_ptr_null(json_object_get(o, "slo_attainment_itl"));
	ck_assert_double_eq_tol(num(o, "max_output_tokens_per_s"), 6, TOL);
	ck_assert_int_eq((long)num(o, "max_concurrent_requests"), 3);

	ck_assert_double_eq_tol(num(o, "mean_ttft_ms"), 80.0 / 3, TOL);
	ck_assert_double_eq_tol(num(o, "median_ttft_ms"), 20, TOL);
	ck_assert_double_eq_tol(
		num(o, "std_ttft_ms"),
		sqrt(((16 + 2.0 / 3) * (16 + 2.0 / 3) + (6 + 2.0 / 3) * (6 + 2.0 / 3) +
		      (23 + 1.0 / 3) * (23 + 1.0 / 3)) /
		     3),
		TOL);
	ck_assert_double_eq_tol(num(o, "p50_ttft_ms"), 20, TOL);
	ck_assert_double_eq_tol(num(o, "p99_ttft_ms"), 20 + 30 * 0.98, TOL);

	ck_assert_double_eq_tol(num(o, "mean_tpot_ms"), (12.5 + 5.0 / 3) / 2, TOL);
	ck_assert_double_eq_tol(num(o, "median_tpot_ms"), (12.5 + 5.0 / 3) / 2, TOL);
	ck_assert_double_eq_tol(num(o, "std_tpot_ms"), (12.5 - 5.0 / 3) / 2, TOL);
	ck_assert_double_eq_tol(num(o, "p99_tpot_ms"), 5.0 / 3 + (12.5 - 5.0 / 3) * 0.99, TOL);

	ck_assert_double_eq_tol(num(o, "mean_itl_ms"), 10, TOL);
	ck_assert_double_eq_tol(num(o, "median_itl_ms"), 10, TOL);
	ck_assert_double_eq_tol(num(o, "std_itl_ms"), sqrt(50.0 / 3), TOL);
	ck_assert_double_eq_tol(num(o, "p99_itl_ms"), 14.9, TOL);

	ck_assert_double_eq_tol(num(o, "mean_e2el_ms"), 110.0 / 3, TOL);
	ck_assert_double_eq_tol(num(o, "median_e2el_ms"), 35, TOL);
	ck_assert_double_eq_tol(num(o, "p99_e2el_ms"), 35 + 15 * 0.98, TOL);

	/* the 5 ms gap carried 3 tokens: 3 samples of 5/3 ms */
	ck_assert_double_eq_tol(num(o, "mean_token_itl_ms"), 5.0 / 3, TOL);
	ck_assert_double_eq_tol(num(o, "std_token_itl_ms"), 0, TOL);
	ck_assert_int_eq((long)num(o, "token_itl_requests"), 1);

	/* lags 0, 0.2, 0, 0.5, 1.0 ms */
	ck_assert_double_eq_tol(num(o, "schedule_lag_p50_ms"), 0.2, TOL);
	ck_assert_double_eq_tol(num(o, "schedule_lag_p99_ms"), 0.98, TOL);
	ck_assert_double_eq_tol(num(o, "schedule_lag_max_ms"), 1.0, TOL);
	ck_assert(json_is_false(json_object_get(o, "client_bound")));

	json_t *cats = json_object_get(o, "failed_by_category");
	ck_assert_int_eq((long)num(cats, "http_500"), 1);
	ck_assert_int_eq((long)num(cats, "disconnect"), 1);
	ck_assert_int_eq((long)num(cats, "timeout"), 0);
	ck_assert_str_eq(
		json_string_value(json_object_get(json_object_get(o, "error_samples"), "http_500")),
		"HTTP 500: injected fault");
	ck_assert_str_eq(json_string_value(json_object_get(o, "input_tokens_source")),
			 "server_usage");

	pg_json_write(&out, o, 4);
	pg_buf_putc(&out, '\n');
	tu_assert_golden("golden/loadgen/trace_metrics.json", out.ptr);
	pg_buf_release(&out);
	json_decref(o);

	/* an ITL SLO judges each request's own gaps (10, 15 | 5 | none): at
	 * 12 ms every gap must pass, at p50 of the request 12.5 ms is enough */
	opts.goodput = (struct pg_goodput){ NAN, NAN, NAN, 12, 100 };
	o = json_object();
	pg_serve_metrics(o, t, n, &opts);
	ck_assert_double_eq_tol(num(o, "slo_attainment_itl"), 0.4, TOL);
	ck_assert_double_eq_tol(num(o, "slo_attainment"), 0.4, TOL);
	opts.goodput = (struct pg_goodput){ NAN, NAN, NAN, 12.5, 50 };
	json_decref(o);
	o = json_object();
	pg_serve_metrics(o, t, n, &opts);
	ck_assert_double_eq_tol(num(o, "slo_attainment_itl"), 0.6, TOL);
	ck_assert_double_eq_tol(num(o, "request_goodput"), 30, TOL);
	json_decref(o);

	/* goodput by e2el alone, inclusive at exactly 35 ms; no goodput -> null */
	o = json_object();
	opts.goodput = (struct pg_goodput){ NAN, NAN, 35, NAN, 100 };
	opts.detailed = false;
	pg_serve_metrics(o, t, n, &opts);
	ck_assert_double_eq_tol(num(o, "request_goodput"), 20, TOL);
	ck_assert(!json_object_get(o, "ttfts"));
	json_decref(o);
	o = json_object();
	opts.goodput = (struct pg_goodput){ NAN, NAN, NAN, NAN, 100 };
	opts.health.busy_fraction = 0.99; /* the client could not keep up... */
	pg_serve_metrics(o, t, n, &opts);
	ck_assert(json_is_false(json_object_get(o, "client_bound"))); /* ...in 0 s: no judgement */
	json_decref(o);
	o = json_object();
	opts.health.duration_s = 10;
	pg_serve_metrics(o, t, n, &opts);
	ck_assert(json_is_null(json_object_get(o, "request_goodput")));
	ck_assert(json_is_true(json_object_get(o, "client_bound")));
	json_decref(o);
	/* callbacks falling behind: 87 % busy (a 4,000-stream bench run whose
	 * messages waited tens of ms in the socket buffers) but each event
	 * waited up to 3 ms for the loop */
	o = json_object();
	opts.health.busy_fraction = 0.87;
	opts.health.read_delay_p99_ms = 3;
	pg_serve_metrics(o, t, n, &opts);
	ck_assert(json_is_true(json_object_get(o, "client_bound")));
	ck_assert_double_eq_tol(num(o, "client_read_delay_p99_ms"), 3, TOL);
	json_decref(o);
	o = json_object();
	opts.health.read_delay_p99_ms = 0.9;
	pg_serve_metrics(o, t, n, &opts);
	ck_assert(json_is_false(json_object_get(o, "client_bound")));
	json_decref(o);
	/* schedule lag at 8 requests/s (due 125 ms apart: the lag bound is a
	 * quarter of that, 31.25 ms), each late request by its cause */
	{
		struct pg_reqtrace late[64];
		struct pg_client_health steady = { .read_delay_p99_ms = 0.1, .duration_s = 8 };
		for (size_t i = 0; i < 64; i++) {
			pg_reqtrace_init(&late[i]);
			late[i].scheduled_ns = (int64_t)i * 125000000;
			late[i].sent_ns = late[i].scheduled_ns + 100000;
			late[i].host_lag_ns = 0;
		}
		/* the quiet 2-core machine of issue 31: a few timer wake-ups 2-5 ms
		 * late, the client idle -- late over 1 ms, within the bound */
		for (size_t i = 10; i < 14; i++) {
			late[i].sent_ns = late[i].scheduled_ns + 5000000;
			late[i].host_lag_ns = 4900000;
		}
		o = json_object();
		pg_client_keys(o, late, 64, &steady);
		ck_assert(num(o, "schedule_lag_p99_ms") > 1);
		ck_assert_int_eq((long)num(o, "requests_sent_late"), 4);
		ck_assert_double_eq_tol(num(o, "schedule_lag_bound_ms"), 31.25, TOL);
		ck_assert_int_eq((long)num(o, "requests_late_by_host"), 0);
		ck_assert_int_eq((long)num(o, "requests_late_by_client"), 0);
		ck_assert(json_is_false(json_object_get(o, "client_bound")));
		ck_assert(json_is_false(json_object_get(o, "host_late")));
		ck_assert_double_eq_tol(num(o, "timestamp_error_bound_ms"), 0.1, TOL);
		json_decref(o);
		/* beyond it: 40 ms late, 39.5 of them asleep past the due time */
		for (size_t i = 10; i < 13; i++) {
			late[i].sent_ns = late[i].scheduled_ns + 40000000;
			late[i].host_lag_ns = 39500000;
		}
		o = json_object();
		pg_client_keys(o, late, 64, &steady);
		ck_assert_int_eq((long)num(o, "requests_late_by_host"), 3);
		ck_assert_int_eq((long)num(o, "requests_late_by_client"), 0);
		ck_assert(json_is_true(json_object_get(o, "host_late")));
		ck_assert(json_is_false(json_object_get(o, "client_bound")));
		json_decref(o);
		/* the same lags while the loop worked: the client's */
		for (size_t i = 10; i < 13; i++)
			late[i].host_lag_ns = 500000;
		o = json_object();
		pg_client_keys(o, late, 64, &steady);
		ck_assert_int_eq((long)num(o, "requests_late_by_client"), 3);
		ck_assert(json_is_true(json_object_get(o, "client_bound")));
		ck_assert(json_is_false(json_object_get(o, "host_late")));
		json_decref(o);
		/* a trace that did not say (-1) is the client's, as before */
		late[12].host_lag_ns = -1;
		late[10].host_lag_ns = late[11].host_lag_ns = 39500000;
		o = json_object();
		pg_client_keys(o, late, 64, &steady);
		ck_assert_int_eq((long)num(o, "requests_late_by_host"), 2);
		ck_assert_int_eq((long)num(o, "requests_late_by_client"), 1);
		ck_assert(json_is_true(json_object_get(o, "host_late")));
		ck_assert(json_is_false(json_object_get(o, "client_bound"))); /* one is a hiccup */
		json_decref(o);
		/* a burst has no schedule to keep */
		steady.burst = true;
		o = json_object();
		pg_client_keys(o, late, 64, &steady);
		ck_assert(json_is_false(json_object_get(o, "client_bound")));
		ck_assert(json_is_false(json_object_get(o, "host_late")));
		ck_assert_ptr_null(json_object_get(o, "schedule_lag_bound_ms"));
		json_decref(o);
	}
	o = json_object();
	opts.health.read_delay_p99_ms = -1; /* unknown: no key, no judgement */
	pg_serve_metrics(o, t, n, &opts);
	ck_assert(json_is_false(json_object_get(o, "client_bound")));
	ck_assert_ptr_null(json_object_get(o, "client_read_delay_p99_ms"));
	ck_assert_ptr_null(json_object_get(o, "timestamp_error_bound_ms"));
	json_decref(o);

	/* latency and throughput suites over the same trace */
	o = json_object();
	pg_throughput_metrics(o, t, n, 0.5);
	ck_assert_int_eq((long)num(o, "num_requests"), 3);
	ck_assert_int_eq((long)num(o, "total_num_tokens"), 26);
	ck_assert_double_eq_tol(num(o, "requests_per_second"), 6, TOL);
	ck_assert_double_eq_tol(num(o, "tokens_per_second"), 52, TOL);
	ck_assert_double_eq_tol(num(o, "output_tokens_per_second"), 16, TOL);
	json_decref(o);
	/* a run that times something long tolerates a later read: the
	 * demo's 286 ms iterations, 1 % of them; TTFT and ITL 1 ms */
	{
		static const double iterations[] = { 0.284, 0.286, 0.288 };
		struct pg_client_health burst = { .busy_fraction = 0.02,
						  .burst = true,
						  .duration_s = 0.86,
						  .read_delay_p99_ms = 1.6 };
		o = json_object();
		pg_latency_metrics(o, iterations, 3);
		pg_client_keys(o, t, n, &burst);
		ck_assert(json_is_false(json_object_get(o, "client_bound")));
		ck_assert_double_eq_tol(num(o, "timestamp_error_bound_ms"), 1.6, TOL);
		json_decref(o);
		burst.read_delay_p99_ms = 3.5;
		o = json_object();
		pg_latency_metrics(o, iterations, 3);
		pg_client_keys(o, t, n, &burst);
		ck_assert(json_is_true(json_object_get(o, "client_bound")));
		json_decref(o);
		burst.read_delay_p99_ms = 1.6;
		o = json_object();
		pg_client_keys(o, t, n, &burst); /* nothing timed but TTFT and ITL */
		ck_assert(json_is_true(json_object_get(o, "client_bound")));
		json_decref(o);
	}

	for (size_t i = 0; i < n; i++)
		pg_reqtrace_release(&t[i]);
	free(t);
}
END_TEST

/* A request of chunks at the given ms after a send at sent_ms, with usage. */
static void synth(struct pg_reqtrace *t, double sent_ms, const double *chunks_ms, size_t n,
		  long tokens)
{
	pg_reqtrace_init(t);
	t->sent_ns = t->scheduled_ns = (int64_t)(sent_ms * 1e6);
	pg_reqtrace_reserve(t, n);
	for (size_t i = 0; i < n; i++) {
		t->chunk_ns[i] = (int64_t)(chunks_ms[i] * 1e6);
		t->chunk_tokens[i] = 0;
	}
	t->n_chunks = n;
	t->usage_completion_tokens = tokens;
	t->usage_prompt_tokens = 10;
}

START_TEST(peaks_sweep_and_bucket_like_vllm)
{
	struct pg_reqtrace t[3];
	/* back to back: [0, 1000) then [1000, 2500) ms -- a departure and an
	 * arrival at the same instant are not concurrent */
	const double a[] = { 100, 600, 1000 }, b[] = { 1200, 1300, 1400, 2500 };
	/* overlapping the second: [1100, 1900) */
	const double c[] = { 1150, 1250, 1350, 1450, 1900 };
	struct pg_serve_stats_opts o = { .duration_s = 3 };
	json_t *r = json_object();

	synth(&t[0], 0, a, 3, 3);
	synth(&t[1], 1000, b, 4, 4);
	synth(&t[2], 1100, c, 5, 5);
	pg_serve_metrics(r, t, 2, &o);
	ck_assert_int_eq((long)num(r, "max_concurrent_requests"), 1);
	json_decref(r);
	r = json_object();
	pg_serve_metrics(r, t, 3, &o);
	ck_assert_int_eq((long)num(r, "max_concurrent_requests"), 2);
	/* one-second buckets from the first start: [0,1) holds 2 messages of
	 * the first request, [1,2) holds 1 + 3 + 5 = 9, [2,3) holds 1 */
	ck_assert_double_eq_tol(num(r, "max_output_tokens_per_s"), 9, TOL);
	json_decref(r);

	r = json_object();
	pg_reqtrace_release(&t[1]);
	synth(&t[1], 1000, b, 4, 4);
	t[1].sent_ns = 999 * 1000000; /* now overlapping by 1 ms */
	pg_serve_metrics(r, t, 2, &o);
	ck_assert_int_eq((long)num(r, "max_concurrent_requests"), 2);
	json_decref(r);
	for (size_t i = 0; i < 3; i++)
		pg_reqtrace_release(&t[i]);
}
END_TEST

START_TEST(latency_keys_like_vllm_bench_latency)
{
	const double lat[] = { 1.0, 2.0, 4.0, 3.0 };
	json_t *o = json_object();
	json_t *p;

	pg_latency_metrics(o, lat, 4);
	ck_assert_double_eq_tol(num(o, "avg_latency"), 2.5, TOL);
	ck_assert_double_eq_tol(num(o, "std_latency"), sqrt(1.25), TOL);
	ck_assert_uint_eq(json_array_size(json_object_get(o, "latencies")), 4);
	p = json_object_get(o, "percentiles");
	ck_assert_uint_eq(json_object_size(p), 6);
	ck_assert_double_eq_tol(num(p, "10"), 1.3, TOL);
	ck_assert_double_eq_tol(num(p, "25"), 1.75, TOL);
	ck_assert_double_eq_tol(num(p, "50"), 2.5, TOL);
	ck_assert_double_eq_tol(num(p, "99"), 3.97, TOL);
	json_decref(o);
}
END_TEST

START_TEST(random_dataset_like_vllm)
{
	struct pg_dataset_spec d = { PG_DATASET_RANDOM, NULL, 100, 20, 0.5, 8 };
	struct pg_prompts p = { 0 }, q = { 0 };
	struct pg_error err = PG_ERROR_INIT;

	ck_assert_int_eq(pg_dataset_random(&p, 200, &d, false, 1, &err), 0);
	ck_assert_uint_eq(p.n, 200);
	ck_assert_str_eq(p.input_source, "token_ids");
	for (size_t k = 0; k < p.n; k++) {
		long body = p.v[k].prompt_len - 8;
		ck_assert_msg(body >= 50 && body <= 150, "input %ld", body);
		ck_assert(p.v[k].output_len >= 10 && p.v[k].output_len <= 30);
		ck_assert_uint_eq(p.v[k].n_ids, (size_t)p.v[k].prompt_len);
		/* a shared prefix, then consecutive vocabulary entries */
		for (size_t i = 0; i < 8; i++)
			ck_assert_int_eq(p.v[k].ids[i], p.v[0].ids[i]);
		for (size_t i = 9; i < p.v[k].n_ids; i++) {
			long a = p.v[k].ids[i - 1] - PG_RANDOM_VOCAB_BASE,
			     b = p.v[k].ids[i] - PG_RANDOM_VOCAB_BASE;
			ck_assert_int_eq(b, (a + 1) % PG_RANDOM_VOCAB_SPAN);
		}
	}
	ck_assert_int_eq(pg_dataset_random(&q, 200, &d, false, 1, &err), 0);
	for (size_t k = 0; k < p.n; k++)
		ck_assert(p.v[k].prompt_len == q.v[k].prompt_len &&
			  !memcmp(p.v[k].ids, q.v[k].ids, p.v[k].n_ids * sizeof(long)));
	pg_prompts_release(&q);

	/* exact lengths with range_ratio 0; words for chat */
	d = (struct pg_dataset_spec){ PG_DATASET_RANDOM, NULL, 32, 128, 0, 0 };
	ck_assert_int_eq(pg_dataset_random(&q, 3, &d, true, 0, &err), 0);
	for (size_t k = 0; k < 3; k++) {
		size_t words = 1;
		for (const char *c = q.v[k].text; *c; c++)
			words += *c == ' ';
		ck_assert_uint_eq(words, 32);
		ck_assert_int_eq(q.v[k].output_len, 128);
	}
	ck_assert_str_eq(q.input_source, "estimate");
	pg_prompts_release(&q);
	pg_prompts_release(&p);

	d.range_ratio = 1.0;
	ck_assert_int_eq(pg_dataset_random(&q, 3, &d, false, 0, &err), PG_ECONFIG);
	ck_assert_str_eq(err.msg, "range_ratio must be in [0, 1), got 1");
}
END_TEST

/* Counts words: easy to reason about in the fixtures. ctx, when given,
 * counts the calls (each one a POST /tokenize in production). */
static int count_words(void *ctx, const char *text, long *count, struct pg_error *err)
{
	long n = 0;
	bool in = false;
	(void)err;
	if (ctx)
		++*(int *)ctx;
	for (; *text; text++) {
		bool sp = *text == ' ';
		n += !sp && !in;
		in = !sp;
	}
	*count = n;
	return 0;
}

START_TEST(sharegpt_filters_like_vllm)
{
	char *path = tu_test_path("data/loadgen/sharegpt.json");
	struct pg_error err = PG_ERROR_INIT;
	size_t len;
	char *text = tu_read_file(path, &len);
	struct pg_prompts p = { 0 };

	/* the fixture has 3 usable conversations among too-short, too-long,
	 * single-turn and malformed ones */
	ck_assert_int_eq(pg_dataset_sharegpt(&p, text, len, path, 3, 0, 0, count_words, NULL, &err),
			 0);
	ck_assert_uint_eq(p.n, 3);
	for (size_t i = 0; i < p.n; i++) {
		ck_assert(pg_str_has_prefix(p.v[i].text, "keep"));
		ck_assert(p.v[i].prompt_len >= 4 && p.v[i].output_len >= 4);
	}
	pg_prompts_release(&p);

	/* oversampled to 10; a fixed output length admits the short answer */
	ck_assert_int_eq(
		pg_dataset_sharegpt(&p, text, len, path, 10, 7, 5, count_words, NULL, &err), 0);
	ck_assert_uint_eq(p.n, 10);
	size_t short_answer = 0;
	for (size_t i = 0; i < p.n; i++) {
		ck_assert_int_eq(p.v[i].output_len, 7);
		short_answer += pg_str_has_prefix(p.v[i].text, "short answer");
	}
	ck_assert_uint_ge(short_answer, 1);
	pg_prompts_release(&p);

	/* vLLM's selection, seed by seed: tests/py/test_vllm_random.py runs
	 * vLLM's load_data, sample and maybe_oversample_requests on the same
	 * file with the same word-count tokenizer and must pick the same */
	{
		json_t *root = json_array();
		struct pg_buf golden = PG_BUF_INIT;

		for (uint64_t seed = 0; seed < 6; seed++) {
			json_t *picked = json_array();

			ck_assert_int_eq(pg_dataset_sharegpt(&p, text, len, path, 8, 0, seed,
							     count_words, NULL, &err),
					 0);
			for (size_t i = 0; i < p.n; i++)
				json_array_append_new(picked,
						      json_pack("[s, I, I]", p.v[i].text,
								(json_int_t)p.v[i].prompt_len,
								(json_int_t)p.v[i].output_len));
			json_array_append_new(root,
					      json_pack("{s:I, s:i, s:o}", "seed", (json_int_t)seed,
							"n", 8, "picked", picked));
			pg_prompts_release(&p);
		}
		pg_json_write(&golden, root, 1);
		pg_buf_putc(&golden, '\n');
		tu_assert_golden("golden/loadgen/sharegpt_sample.json", golden.ptr);
		pg_buf_release(&golden);
		json_decref(root);
	}
	free(text);

	ck_assert_int_eq(pg_dataset_sharegpt(&p, "{\"x\": 1}", 8, "s.json", 3, 0, 0, count_words,
					     NULL, &err),
			 PG_ECONFIG);
	ck_assert_str_eq(err.msg, "s.json:1:1: expected a JSON array");
	free(path);
}
END_TEST

/* A conversation is parsed only when the shuffle reaches it; a broken one
 * is then reported at its place in the whole file, not in the fragment. */
START_TEST(sharegpt_errors_name_the_place_in_the_file)
{
	const char *good =
		"{\"conversations\": [{\"value\": \"a b c d e\"}, {\"value\": \"f g h i j\"}]}";
	struct pg_error err = PG_ERROR_INIT;
	struct pg_prompts p = { 0 };
	struct pg_buf text = PG_BUF_INIT;

	pg_buf_printf(&text, "[\n %s,\n %s,\n  {\"conversations\": [{\"value\": \"a\"}, tru]}\n]\n",
		      good, good);
	ck_assert_int_eq(pg_dataset_sharegpt(&p, text.ptr, text.len, "sg.json", 50, 0, 0,
					     count_words, NULL, &err),
			 PG_ECONFIG);
	ck_assert_str_eq(err.msg, "sg.json:4:40: invalid token near 'tru'");

	/* a structural break anywhere fails before anything is sampled */
	pg_buf_reset(&text);
	pg_buf_printf(&text, "[\n %s,\n %s\n %s\n]", good, good, good);
	ck_assert_int_eq(pg_dataset_sharegpt(&p, text.ptr, text.len, "sg.json", 1, 0, 0,
					     count_words, NULL, &err),
			 PG_ECONFIG);
	ck_assert_str_eq(err.msg, "sg.json:4:2: expected ',' or ']' after an element");
	ck_assert_uint_eq(p.n, 0);
	pg_buf_release(&text);
}
END_TEST

/* The scanner's spans, parsed one by one, give back exactly the elements
 * jansson serialised: strings with escaped quotes and backslashes, nesting,
 * numbers, literals, empty containers, in compact and indented layouts. */
START_TEST(json_array_spans_match_the_elements)
{
	json_t *arr = json_array();
	struct pg_rng rng;

	pg_rng_seed(&rng, 42);
	for (int i = 0; i < 300; i++) {
		static const char *const pieces[] = { "\\", "\"", "]", "}", "[",  "{",
						      ",",  ":",  "x", " ", "\n", "\\\"" };
		struct pg_buf str = PG_BUF_INIT;
		int k = (int)(pg_rng_next(&rng) % 12);

		for (int j = 0; j < k; j++)
			pg_buf_puts(&str, pieces[pg_rng_next(&rng) % 12]);
		switch (i % 6) {
		case 0:
			json_array_append_new(arr, json_string(str.ptr ? str.ptr : ""));
			break;
		case 1:
			json_array_append_new(
				arr, json_pack("{s:[s,{s:s}],s:i,s:b,s:n}", "conversations",
					       str.ptr ? str.ptr : "", "v", str.ptr ? str.ptr : "",
					       "n", i, "t", i % 2, "z"));
			break;
		case 2:
			json_array_append_new(arr, json_real(i * -1.5e-3));
			break;
		case 3:
			json_array_append_new(arr, json_pack("[[],{},[[[null]]]]"));
			break;
		case 4:
			json_array_append_new(arr, i % 4 ? json_true() : json_false());
			break;
		default:
			json_array_append_new(arr, json_pack("{s:{s:[i,i]}}",
							     str.ptr ? str.ptr : "", "\\", i, -i));
		}
		pg_buf_release(&str);
	}
	for (int layout = 0; layout < 2; layout++) {
		char *text = json_dumps(arr, layout ? JSON_INDENT(3) : JSON_COMPACT);
		struct pg_jsonscan_span *spans = NULL;
		struct pg_error err = PG_ERROR_INIT;
		size_t n = 0;

		ck_assert_int_eq(
			pg_jsonscan_array_spans(text, strlen(text), "a.json", &spans, &n, &err), 0);
		ck_assert_uint_eq(n, json_array_size(arr));
		for (size_t i = 0; i < n; i++) {
			json_t *el = json_loadb(text + spans[i].off, spans[i].len, JSON_DECODE_ANY,
						NULL);
			ck_assert_msg(el && json_equal(el, json_array_get(arr, i)),
				      "element %zu differs", i);
			json_decref(el);
		}
		free(spans);
		free(text);
	}
	json_decref(arr);
}
END_TEST

/* Members and array lengths of an element, without parsing it: the last
 * of duplicate keys wins (Python's json), keys inside strings or nested
 * objects do not count, and counting stops at what was asked. */
START_TEST(json_member_and_array_has)
{
	const char *text =
		"{\"x\": \"\\\"conversations\\\": [1,2]\", \"n\": {\"conversations\": []},"
		" \"conversations\": [1], \"conversations\" : [ {\"a\": [1, 2]} , \"]\", 3 ] }";
	struct pg_jsonscan_span obj = { 0, strlen(text) }, v;

	ck_assert(pg_jsonscan_member(text, &obj, "conversations", &v));
	ck_assert(!strncmp(text + v.off, "[ {", 3) && text[v.off + v.len - 1] == ']');
	ck_assert(pg_jsonscan_array_has(text, &v, 3));
	ck_assert(!pg_jsonscan_array_has(text, &v, 4));
	ck_assert(pg_jsonscan_member(text, &obj, "n", &v));
	ck_assert(!pg_jsonscan_array_has(text, &v, 0)); /* an object, not an array */
	ck_assert(!pg_jsonscan_member(text, &obj, "conversation", &v));
	v = (struct pg_jsonscan_span){ 0, 2 };
	ck_assert(pg_jsonscan_array_has("[]", &v, 0) && !pg_jsonscan_array_has("[]", &v, 1));
}
END_TEST

START_TEST(json_array_spans_report_structural_errors)
{
	/* clang-format off */
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ "", "j:1:1: expected a JSON array" },
		{ "  {\"a\": 1}", "j:1:3: expected a JSON array" },
		{ "[1, 2", "j:1:6: expected ',' or ']' after an element" },
		{ "[1,\n  \"abc]", "j:2:3: unterminated string" },
		{ "[1,\n  \"a\\\"]", "j:2:3: unterminated string" },
		{ "[{\"a\": [1}]", "j:1:10: mismatched closing bracket" },
		{ "[[1]]]", "j:1:6: extra data after the array" },
		{ "[1,]", "j:1:4: unexpected closing bracket" },
		{ "[,1]", "j:1:2: expected a value" },
		{ "[{\"a\":", "j:1:7: unexpected end of file inside a value" },
		{ "[1,", "j:1:4: unexpected end of file, expected a value" },
	};
	/* clang-format on */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pg_jsonscan_span *spans = NULL;
		struct pg_error err = PG_ERROR_INIT;
		size_t n = 0;

		ck_assert_int_eq(pg_jsonscan_array_spans(cases[i].text, strlen(cases[i].text), "j",
							 &spans, &n, &err),
				 PG_ECONFIG);
		ck_assert_str_eq(err.msg, cases[i].msg);
		ck_assert_ptr_null(spans);
	}
	/* a NUL byte where a scalar would be ends the scalar, never the scan */
	{
		const char nul[] = { '[', '1', ',', '[', '\0', ']', ']' };
		struct pg_jsonscan_span *spans = NULL;
		struct pg_error err = PG_ERROR_INIT;
		size_t n = 0;

		ck_assert_int_eq(pg_jsonscan_array_spans(nul, sizeof(nul), "j", &spans, &n, &err),
				 0);
		ck_assert_uint_eq(n, 2);
		free(spans);
	}
}
END_TEST

/* Python's str.split(): runs of white space, newlines included. */
static int count_split(void *ctx, const char *text, long *count, struct pg_error *err)
{
	long n = 0;
	bool in = false;

	(void)ctx;
	(void)err;
	for (; *text; text++) {
		bool sp = isspace((unsigned char)*text);
		n += !sp && !in;
		in = !sp;
	}
	*count = n;
	return 0;
}

/*
 * vLLM's SonnetDataset.sample with len(str.split()) for a tokenizer: the
 * lines each prompt draws, from Python's own random.seed(3) and
 * random.choices (computed with CPython, not with perfgate's generator):
 * 6 lines of 7.82 words on average fill 60 tokens after the base prompt's
 * 11, the first one (20 - 11) / 7.82 rounds to) is the shared prefix, and
 * a draw of 65 words is thrown away.
 */
START_TEST(sonnet_draws_as_vllm)
{
	static const int draws[4][5] = { { 6, 15, 10, 16, 17 },
					 { 1, 0, 23, 7, 6 },
					 { 4, 17, 24, 14, 20 },
					 { 18, 1, 21, 16, 8 } };
	static const long lens[4] = { 55, 54, 57, 55 };
	char *path = tu_test_path("data/loadgen/sonnet.txt");
	size_t len;
	char *text = tu_read_file(path, &len);
	struct pg_prompts p = { 0 };
	struct pg_error err = PG_ERROR_INIT;
	const char *lines[28];
	char *copy = strdup(text), *save = NULL;
	size_t n = 0;

	for (char *l = strtok_r(copy, "\n", &save); l && n < 28; l = strtok_r(NULL, "\n", &save))
		lines[n++] = l;
	ck_assert_uint_eq(n, 28);
	ck_assert_int_eq(pg_dataset_sonnet(&p, text, len, "sonnet.txt", 4, 60, 16, 20, 3,
					   count_split, NULL, &err),
			 0);
	ck_assert_uint_eq(p.n, 4);
	for (size_t i = 0; i < 4; i++) {
		struct pg_buf want = PG_BUF_INIT;

		pg_buf_printf(&want, "Pick as many lines as you can from these poem lines:\n%s\n",
			      lines[0]);
		for (size_t k = 0; k < 5; k++)
			pg_buf_printf(&want, "%s\n", lines[draws[i][k]]);
		ck_assert_str_eq(p.v[i].text, want.ptr);
		ck_assert_int_eq(p.v[i].prompt_len, lens[i]);
		ck_assert_int_eq(p.v[i].output_len, 16);
		pg_buf_release(&want);
	}
	pg_prompts_release(&p);

	/* prompts that cannot fit, or no room after the base prompt */
	ck_assert_int_eq(pg_dataset_sonnet(&p, text, len, "sonnet.txt", 1, 11, 16, 0, 0,
					   count_split, NULL, &err),
			 PG_ECONFIG);
	ck_assert_str_eq(err.msg,
			 "sonnet.txt: input_len 11 must exceed the base prompt's 11 tokens");
	pg_prompts_release(&p);
	ck_assert_int_eq(pg_dataset_sonnet(&p, text, len, "sonnet.txt", 1, 16, 16, 0, 0,
					   count_split, NULL, &err),
			 PG_ECONFIG);
	ck_assert(strstr(err.msg, "no draw of 1 lines fits input_len 16 tokens"));
	pg_prompts_release(&p);
	ck_assert_int_eq(
		pg_dataset_sonnet(&p, "", 0, "e.txt", 1, 30, 16, 0, 0, count_split, NULL, &err),
		PG_ECONFIG);
	ck_assert_str_eq(err.msg, "e.txt: the sonnet file has no lines");
	free(copy);
	free(text);
	free(path);
}
END_TEST

START_TEST(jsonl_dataset_with_line_errors)
{
	struct pg_error err = PG_ERROR_INIT;
	struct pg_prompts p = { 0 };
	const char *good =
		"{\"prompt\": \"one two three\", \"output_len\": 5}\n\n{\"prompt\": \"four\"}\n";
	const char *bad = "{\"prompt\": \"a\", \"output_len\": 5}\n{\"prompt\": 3}\n";

	ck_assert_int_eq(pg_dataset_jsonl(&p, good, strlen(good), "p.jsonl", 4, 9, 0, count_words,
					  NULL, &err),
			 0);
	ck_assert_uint_eq(p.n, 4);
	for (size_t i = 0; i < p.n; i++)
		ck_assert(p.v[i].prompt_len == 3 ? p.v[i].output_len == 5 : p.v[i].output_len == 9);
	pg_prompts_release(&p);
	ck_assert_int_eq(
		pg_dataset_jsonl(&p, bad, strlen(bad), "p.jsonl", 4, 9, 0, count_words, NULL, &err),
		PG_ECONFIG);
	ck_assert_str_eq(err.msg, "p.jsonl:2: prompt: expected a string");
	ck_assert_int_eq(pg_dataset_jsonl(&p, "{\"prompt\":", 10, "p.jsonl", 1, 9, 0, count_words,
					  NULL, &err),
			 PG_ECONFIG);
	ck_assert(pg_str_has_prefix(err.msg, "p.jsonl:1:"));
	ck_assert_int_eq(pg_dataset_jsonl(&p, "{\"prompt\":\"x\"}", 14, "p.jsonl", 1, 0, 0,
					  count_words, NULL, &err),
			 PG_ECONFIG);
	ck_assert_str_eq(err.msg, "p.jsonl:1: output_len: missing (and no output_len in the test)");
	/* a long file costs a count per prompt used, not per line */
	{
		struct pg_buf many = PG_BUF_INIT;
		int calls = 0;
		for (int i = 0; i < 50; i++)
			pg_buf_printf(&many, "{\"prompt\": \"w%d x y\", \"output_len\": 5}\n", i);
		ck_assert_int_eq(pg_dataset_jsonl(&p, many.ptr, many.len, "p.jsonl", 3, 0, 7,
						  count_words, &calls, &err),
				 0);
		ck_assert_uint_eq(p.n, 3);
		ck_assert_int_eq(calls, 3);
		for (size_t i = 0; i < p.n; i++)
			ck_assert_int_eq(p.v[i].prompt_len, 3);
		pg_prompts_release(&p);
		pg_buf_release(&many);
	}
	ck_assert_int_eq(pg_token_estimate("abcdefgh"), 2);
	ck_assert_int_eq(pg_token_estimate("abcdefghi"), 3);
}
END_TEST

static Suite *loadstats_suite(void)
{
	Suite *s = suite_create("loadstats");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, rng_matches_reference_vectors);
	tcase_add_test(tc, gamma_has_the_right_mean_and_cv);
	tcase_add_test(tc, arrivals_are_rescaled_and_reproducible);
	tcase_add_test(tc, stats_match_numpy);
	tcase_add_test(tc, serving_metrics_from_a_recorded_trace);
	tcase_add_test(tc, peaks_sweep_and_bucket_like_vllm);
	tcase_add_test(tc, latency_keys_like_vllm_bench_latency);
	tcase_add_test(tc, random_dataset_like_vllm);
	tcase_add_test(tc, arrivals_ramp_up_like_vllm);
	tcase_add_test(tc, vllm_random_streams);
	tcase_add_test(tc, client_queue_metrics);
	tcase_add_test(tc, certified_percentiles_of_a_run);
	tcase_add_test(tc, sharegpt_filters_like_vllm);
	tcase_add_test(tc, sharegpt_errors_name_the_place_in_the_file);
	tcase_add_test(tc, json_array_spans_match_the_elements);
	tcase_add_test(tc, json_array_spans_report_structural_errors);
	tcase_add_test(tc, json_member_and_array_has);
	tcase_add_test(tc, jsonl_dataset_with_line_errors);
	tcase_add_test(tc, sonnet_draws_as_vllm);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(loadstats_suite());
}
