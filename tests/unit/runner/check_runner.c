/*
 * The runner with real child processes: Python HTTP servers on loopback
 * that become ready, never do, die while starting or in the middle of a
 * point; external benchmark commands that write their result or fail;
 * cancellation by a real SIGTERM. The point executor is a stub that makes
 * real HTTP requests to the server (the load generator has its own tests),
 * so a dead server shows up as failed requests, as it would in production.
 */
#include "testutil.h"

#include "base/buf.h"
#include "base/error.h"
#include "results/metrics.h"
#include "base/strutil.h"
#include "suite/suite.h"
#include "gpu/detect_io.h"
#include "sys/proc.h"
#include "results/results_io.h"
#include "runner/runner_io.h"
#include "base/jsonw.h"

#include <curl/curl.h>
#include <git2.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char *dir;       /* results directory of the test */
static double idle_mib; /* --gpu-idle-mib of the run */
static bool on_tty;     /* the run's stderr is a terminal: a live bar */
static char *log_text;  /* what the runner printed */
static struct pg_gpu_info gpu;

/* ---- the stub load generator ---- */

static int requests_per_point = 6;
static double request_gap = 0.05;
static int sigterm_at_request = -1;  /* raise SIGTERM at this request... */
static int sigterm_on_call;          /* ...of this point (0-based) */
static double throughput_base = 100; /* varies per call, for repeats */
static double first_ttft_factor = 1; /* the first run's TTFT x this: a cold start */
static int calls;
static long warmup_requests; /* the warm-up requests asked of the stub */

static size_t discard(char *p, size_t s, size_t n, void *c)
{
	(void)p;
	(void)c;
	return s * n;
}

static int stub_native(const struct pg_point *pt, const struct pg_point_io *io, json_t **out,
		       struct pg_error *err)
{
	CURL *curl = curl_easy_init();
	struct pg_buf url = PG_BUF_INIT;
	long ok = 0, failed = 0;
	double t0 = pg_monotonic();
	int ret = 0;

	(void)pt;
	if (io->warmup_requests) { /* the point's warm-up: nothing measured */
		warmup_requests += (long)io->warmup_requests;
		io->warmup->requests = io->warmup_requests;
		io->warmup->seconds = 0.25;
		curl_easy_cleanup(curl);
		return 0;
	}
	pg_buf_printf(&url, "%s/", io->base_url);
	curl_easy_setopt(curl, CURLOPT_URL, url.ptr);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 2000L);
	for (int i = 0; i < requests_per_point; i++) {
		long code = 0;
		struct pg_run_progress p;
		struct timespec gap = { 0, (long)(request_gap * 1e9) };

		if (i == sigterm_at_request && calls == sigterm_on_call)
			kill(getpid(), SIGTERM);
		if (*io->stop) {
			ret = pg_error_set(err, PG_ECANCEL, "stopped");
			break;
		}
		if (curl_easy_perform(curl) == CURLE_OK &&
		    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK &&
		    code == 200)
			ok++;
		else
			failed++;
		p = (struct pg_run_progress){ i + 1,           requests_per_point,
					      failed,          pg_monotonic() - t0,
					      (double)ok * 10, NULL };
		io->progress(io->progress_ctx, &p);
		nanosleep(&gap, NULL);
	}
	if (ret == 0) {
		calls++;
		*out = json_pack("{s:s, s:i, s:i, s:f, s:f, s:f, s:{s:s}}", "date",
				 "20261122-130000", "completed", (int)ok, "failed", (int)failed,
				 "request_throughput", (double)ok / (pg_monotonic() - t0),
				 "output_throughput", throughput_base + calls, "median_ttft_ms",
				 12.5 * (calls == 1 ? first_ttft_factor : 1), "error_samples",
				 "disconnect", "Connection refused");
	}
	curl_easy_cleanup(curl);
	pg_buf_release(&url);
	return ret;
}

/* ---- helpers ---- */

static void setup(void)
{
	dir = tu_mkdtemp();
	pg_gpu_info_init(&gpu);
	pg_gpu_force(&gpu, "NVIDIA H100 80GB HBM3", "flag");
	gpu.detected = 1;
	requests_per_point = 6;
	request_gap = 0.05;
	sigterm_at_request = -1;
	sigterm_on_call = 0;
	calls = 0;
	warmup_requests = 0;
	first_ttft_factor = 1;
	idle_mib = 0;
	on_tty = false;
	pg_run_cancelled = 0;
	unsetenv("BUILDKITE");
}

static char *saved_path;

static void teardown(void)
{
	/* without CK_FORK (valgrind) tests share one environment */
	if (saved_path)
		setenv("PATH", saved_path, 1);
	tu_rm_rf(dir);
	free(dir);
	free(log_text);
	log_text = NULL;
	pg_gpu_info_release(&gpu);
}

static const char *py(void)
{
	return tu_env("PERFGATE_PYTHON");
}

/* A Python server: `before` runs first (may print or exit), then it serves
 * 200 on every GET (with FAIL = True in `before`: 500 except on /health); with die_after > 0 it exits with status 3 that many
 * seconds after it starts serving. Its arguments are {port} {model}. */
static char *server_command(const char *before, double die_after)
{
	struct pg_buf b = PG_BUF_INIT;

	pg_buf_printf(&b,
		      "%s -c 'import sys, os, threading, http.server\n"
		      "FAIL = False\n"
		      "%s\n"
		      "class H(http.server.BaseHTTPRequestHandler):\n"
		      "    def do_GET(self):\n"
		      "        bad = FAIL and self.path != \"/health\"\n"
		      "        self.send_response(500 if bad else 200); self.end_headers()\n"
		      "        self.wfile.write(b\"ok\")\n"
		      "    def log_message(self, *a): pass\n"
		      "s = http.server.ThreadingHTTPServer((\"127.0.0.1\", int(sys.argv[1])), H)\n"
		      "print(\"serving\", flush=True)\n",
		      py(), before ? before : "");
	if (die_after > 0)
		pg_buf_printf(
			&b,
			"threading.Timer(%g, lambda: (print(\"engine core died\", flush=True), "
			"os._exit(3))).start()\n",
			die_after);
	pg_buf_puts(&b, "s.serve_forever()' {port} {model}");
	return pg_buf_detach(&b);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static struct pg_test *add_test(struct pg_suite *s, enum pg_suite_kind kind, const char *name,
				const char *server_cmd)
{
	struct pg_test t;

	pg_test_init(&t, kind);
	t.name = strdup(name);
	t.model = strdup("test-model");
	if (server_cmd) {
		t.server.command = strdup(server_cmd);
		free(t.server.ready_path);
		t.server.ready_path = strdup("/");
		t.server.ready_timeout = 20;
		t.server.stop_timeout = 5;
	}
	pg_suite_add(s, &t);
	return &s->tests[s->n_tests - 1];
}

static void serving_points(struct pg_test *t, int n)
{
	free(t->qps);
	t->qps = malloc((size_t)n * sizeof(double));
	for (int i = 0; i < n; i++)
		t->qps[i] = i + 1;
	t->n_qps = (size_t)n;
}

/* Run the suite; returns the exit code. The log lands in log_text. */
static int run(struct pg_suite *s, struct pg_run_report *rep)
{
	struct pg_plan plan = PG_PLAN_INIT;
	struct pg_run_opts o;
	struct pg_error err = PG_ERROR_INIT;
	size_t len = 0;
	FILE *log = open_memstream(&log_text, &len);
	int code;

	memset(&o, 0, sizeof(o));
	o.results_dir = dir;
	o.gpu = &gpu;
	o.native = stub_native;
	o.log = log;
	o.progress_interval = 0.1;
	o.tty = on_tty;
	o.git_path = dir;
	o.gpu_idle_mib = idle_mib;
	o.gpu_idle_timeout = 0.5;
	pg_plan_build(&plan, s);
	pg_run_signals_install();
	ck_assert_msg(pg_run(rep, s, &plan, &o, &err) == 0, "%s", err.msg);
	pg_run_signals_restore();
	fclose(log);
	if (getenv("PERFGATE_SHOW_LOG")) /* to see what users see */
		fputs(log_text, stderr);
	code = pg_run_exit_code(rep);
	pg_plan_release(&plan);
	return code;
}

/* Nothing started by the runner is left: no child of ours, no process
 * whose parent we are. */
static void assert_no_children(void)
{
	ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
	ck_assert_int_eq(errno, ECHILD);
}

static json_t *result(const char *name)
{
	struct pg_buf path = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;
	json_t *j;

	pg_buf_printf(&path, "%s/%s", dir, name);
	j = pg_results_load_json(path.ptr, &err);
	ck_assert_msg(j != NULL, "%s", err.msg);
	pg_buf_release(&path);
	return j;
}

static const char *pgs(json_t *res, const char *key)
{
	json_t *v = json_object_get(json_object_get(res, "perfgate"), key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static bool exists(const char *name)
{
	struct pg_buf path = PG_BUF_INIT;
	bool e;
	pg_buf_printf(&path, "%s/%s", dir, name);
	e = access(path.ptr, F_OK) == 0;
	pg_buf_release(&path);
	return e;
}

static void assert_logged(const char *needle)
{
	ck_assert_msg(log_text && strstr(log_text, needle), "'%s' not in the log:\n%s", needle,
		      log_text ? log_text : "");
}

/* ---- tests ---- */

START_TEST(a_server_serves_every_point_then_stops)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_run_report rep = PG_RUN_REPORT_INIT;
	char *cmd = server_command(NULL, 0);
	struct pg_test *t = add_test(&s, PG_SUITE_SERVING, "serving_a", cmd);
	json_t *r1, *r2, *sidecar, *manifest;

	/* in a Buildkite job: each point is a log group */
	setenv("BUILDKITE", "true", 1);
	serving_points(t, 2);
	ck_assert_int_eq(run(&s, &rep), 0);
	unsetenv("BUILDKITE");
	ck_assert_uint_eq(rep.n_ok, 2);
	assert_no_children();

	assert_logged("--- serving_a qps 1 (1/2)\n");
	assert_logged("--- serving_a qps 2 (2/2)\n");
	assert_logged("  server ready in ");
	assert_logged("requests");
	assert_logged("+++ perfgate run: 2 ok (");
	/* one server for both points: started once, stopped once */
	ck_assert_uint_eq(count(log_text, "server ready"), 1);
	ck_assert_uint_eq(count(log_text, "server stopped"), 1);

	r1 = result("serving_a_qps_1.json");
	r2 = result("serving_a_qps_2.json");
	ck_assert_str_eq(pgs(r1, "status"), "ok");
	ck_assert_str_eq(pgs(r1, "suite"), "serving");
	ck_assert_str_eq(pgs(r1, "point"), "serving_a_qps_1");
	ck_assert_str_eq(pgs(r1, "client"), "native");
	ck_assert_int_eq(json_integer_value(json_object_get(r1, "completed")), 6);
	ck_assert(pg_str_has_suffix(pgs(r1, "server_command"), "{port} {model}") == false);
	ck_assert(strstr(pgs(r1, "server_command"), " test-model"));
	ck_assert(json_is_null(json_object_get(json_object_get(r1, "perfgate"), "git")));
	ck_assert_str_eq(json_string_value(pg_json_path(r1, "perfgate.gpu.key")), "H100");
	ck_assert(json_real_value(json_object_get(json_object_get(r1, "perfgate"),
						  "server_startup_seconds")) > 0);
	ck_assert_int_eq(json_is_integer(pg_json_path(r2, "perfgate.params.qps")), 0);
	ck_assert(json_real_value(pg_json_path(r2, "perfgate.params.qps")) == 2.0);

	sidecar = result("serving_a_qps_1.commands");
	ck_assert_str_eq(json_string_value(json_object_get(sidecar, "server_command")),
			 pgs(r1, "server_command"));
	ck_assert(pg_str_has_prefix(
		json_string_value(json_object_get(sidecar, "client_command")),
		"vllm bench serve --backend openai --base-url http://127.0.0.1:"));
	ck_assert_str_eq(json_string_value(json_object_get(sidecar, "gpu_type")), "H100");

	manifest = result("perfgate_run.json");
	ck_assert_str_eq(json_string_value(pg_json_path(manifest, "perfgate_run.status")), "ok");
	ck_assert(exists("serving_a.server.log"));

	/* the report loader sees two results and skips the manifest */
	struct pg_result_set set = PG_RESULT_SET_INIT;
	struct pg_error err = PG_ERROR_INIT;
	ck_assert_int_eq(pg_results_load_dir(&set, dir, &err), 0);
	ck_assert_uint_eq(set.n, 2);
	pg_result_set_release(&set);

	json_decref(r1);
	json_decref(r2);
	json_decref(sidecar);
	json_decref(manifest);
	pg_run_report_release(&rep);
	pg_suite_release(&s);
	free(cmd);
}
END_TEST

START_TEST(a_server_that_never_becomes_ready)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_run_report rep = PG_RUN_REPORT_INIT;
	struct pg_test *t = add_test(&s, PG_SUITE_SERVING, "serving_never", "sleep 100");
	json_t *r1, *r2;

	t->server.ready_timeout = 0.5;
	serving_points(t, 2);
	double t0 = pg_monotonic();
	ck_assert_int_eq(run(&s, &rep), 3);
	ck_assert_msg(pg_monotonic() - t0 < 5, "took %.1fs", pg_monotonic() - t0);
	assert_no_children();
	ck_assert_uint_eq(rep.n_error, 2);
	r1 = result("serving_never_qps_1.json");
	r2 = result("serving_never_qps_2.json");
	ck_assert_str_eq(pgs(r1, "status"), "error");
	ck_assert_msg(pg_str_has_prefix(pgs(r1, "error"),
					"server not ready after 0.5s: GET http://127.0.0.1:"),
		      "%s", pgs(r1, "error"));
	ck_assert_str_eq(pgs(r2, "status"), "error");
	ck_assert_str_eq(pgs(r2, "error"), pgs(r1, "error"));
	assert_logged("  error: server not ready after 0.5s");
	assert_logged("\nperfgate run: 0 ok, 2 error");
	json_decref(r1);
	json_decref(r2);
	pg_run_report_release(&rep);
	pg_suite_release(&s);
}
END_TEST

START_TEST(a_server_that_exits_while_starting)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_run_report rep = PG_RUN_REPORT_INIT;
	char *cmd = server_command("print(\"loading weights\", flush=True)\n"
				   "print(\"CUDA out of memory\", file=sys.stderr, flush=True)\n"
				   "sys.exit(1)",
				   0);
	struct pg_test *t = add_test(&s, PG_SUITE_SERVING, "serving_oom", cmd);
	struct pg_test *next = add_test(&s, PG_SUITE_SERVING, "serving_next", cmd);
	json_t *r1;

	t->server.ready_timeout = 600; /* must not matter: the exit ends the wait */
	free(next->server.command);
	free(cmd);
	cmd = server_command(NULL, 0);
	next->server.command = strdup(cmd);
	double t0 = pg_monotonic();
	ck_assert_int_eq(run(&s, &rep), 3);
	ck_assert_msg(pg_monotonic() - t0 < 10, "took %.1fs", pg_monotonic() - t0);
	assert_no_children();
	ck_assert_uint_eq(rep.n_error, 1);
	ck_assert_uint_eq(rep.n_ok, 1); /* the next test still ran */
	r1 = result("serving_oom_qps_inf.json");
	ck_assert_msg(pg_str_has_prefix(pgs(r1, "error"), "server exited with status 1 after "),
		      "%s", pgs(r1, "error"));
	ck_assert_msg(strstr(pgs(r1, "error"), "while starting\nlast lines of "), "%s",
		      pgs(r1, "error"));
	ck_assert_msg(strstr(pgs(r1, "error"), "loading weights\nCUDA out of memory"), "%s",
		      pgs(r1, "error"));
	assert_logged("  error: server exited with status 1 after ");
	assert_logged("CUDA out of memory\n");
	json_decref(r1);
	pg_run_report_release(&rep);
	pg_suite_release(&s);
	free(cmd);
}
END_TEST

START_TEST(a_server_that_dies_in_the_middle)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_run_report rep = PG_RUN_REPORT_INIT;
	char *cmd = server_command(NULL, 0.6);
	struct pg_test *t = add_test(&s, PG_SUITE_SERVING, "serving_crash", cmd);
	json_t *r1, *r2;

	serving_points(t, 2);
	requests_per_point = 100;
	request_gap = 0.02;
	double t0 = pg_monotonic();
	ck_assert_int_eq(run(&s, &rep), 3);
	ck_assert_msg(pg_monotonic() - t0 < 5, "took %.1fs: the death was not noticed",
		      pg_monotonic() - t0);
	assert_no_children();
	r1 = result("serving_crash_qps_1.json");
	ck_assert_str_eq(pgs(r1, "status"), "error");
	ck_assert_msg(pg_str_has_prefix(pgs(r1, "error"),
					"server exited with status 3 during the point\n"
					"last lines of "),
		      "%s", pgs(r1, "error"));
	ck_assert(strstr(pgs(r1, "error"), "engine core died"));
	r2 = result("serving_crash_qps_2.json");
	ck_assert_str_eq(pgs(r2, "error"), "server exited with status 3 before the point");
	json_decref(r1);
	json_decref(r2);
	pg_run_report_release(&rep);
	pg_suite_release(&s);
	free(cmd);
}
END_TEST

START_TEST(every_request_failing_is_an_error)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_run_report rep = PG_RUN_REPORT_INIT;
	char *cmd = server_command("FAIL = True", 0);
	struct pg_test *t = add_test(&s, PG_SUITE_SERVING, "serving_all_500", cmd);
	struct pg_test *remote = add_test(&s, PG_SUITE_SERVING, "serving_remote_down", NULL);
	json_t *r;

	/* ready on /health, but every request of the load fails */
	free(t->server.ready_path);
	t->server.ready_path = strdup("/health");
	free(remote->server.ready_path);
	remote->server.ready_path = strdup("/health");
	remote->server.remote = strdup("http://127.0.0.1:9/");
	remote->server.ready_timeout = 0.3;
	ck_assert_int_eq(run(&s, &rep), 3);
	assert_no_children();
	r = result("serving_all_500_qps_inf.json");
	ck_assert_str_eq(pgs(r, "status"), "error");
	ck_assert_str_eq(pgs(r, "error"), "all 6 requests failed (disconnect: Connection refused)");
	/* what the load generator measured is kept: it explains the error */
	ck_assert_int_eq(json_integer_value(json_object_get(r, "failed")), 6);
	json_decref(r);
	r = result("serving_remote_down_qps_inf.json");
	ck_assert_str_eq(pgs(r, "status"), "error");
	ck_assert_str_eq(pgs(r, "server_command"), "Using Remote Server http://127.0.0.1:9");
	ck_assert(pg_str_has_prefix(
		pgs(r, "error"), "server not ready after 0.3s: GET http://127.0.0.1:9/health: "));
	json_decref(r);
	pg_run_report_release(&rep);
	pg_suite_release(&s);
	free(cmd);
}
END_TEST

START_TEST(sigterm_stops_everything_and_keeps_what_finished)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_run_report rep = PG_RUN_REPORT_INIT;
	/* a server that ignores SIGTERM: the cancel must still end it fast */
	char *cmd = server_command("import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)",
				   0);
	struct pg_test *t = add_test(&s, PG_SUITE_SERVING, "serving_cancel", cmd);
	struct pg_test *later = add_test(&s, PG_SUITE_LATENCY, "latency_later", cmd);
	json_t *r1, *r2, *manifest;

	(void)later;
	serving_points(t, 4);
	t->server.stop_timeout = 60;
	requests_per_point = 10;
	sigterm_at_request = 5; /* in the second point: the first finishes */
	sigterm_on_call = 1;
	double t0 = pg_monotonic();
	int code = run(&s, &rep);
	double took = pg_monotonic() - t0;
	ck_assert_int_eq(code, 128 + SIGTERM);
	ck_assert_msg(took < 10, "took %.1fs", took);
	assert_no_children();
	ck_assert_int_eq(rep.cancel_signal, SIGTERM);
	r1 = result("serving_cancel_qps_1.json");
	ck_assert_str_eq(pgs(r1, "status"), "ok");
	json_decref(r1);
	r1 = result("serving_cancel_qps_2.json");
	ck_assert_str_eq(pgs(r1, "status"), "cancelled");
	ck_assert(!exists("serving_cancel_qps_3.json"));
	ck_assert(!exists("latency_later.json"));
	manifest = result("perfgate_run.json");
	ck_assert_str_eq(json_string_value(pg_json_path(manifest, "perfgate_run.status")),
			 "cancelled");
	ck_assert_int_eq(json_integer_value(pg_json_path(manifest, "perfgate_run.exit_code")), 143);
	r2 = json_array_get(pg_json_path(manifest, "perfgate_run.points"), 4);
	ck_assert_str_eq(json_string_value(json_object_get(r2, "status")), "not run");
	assert_logged("perfgate: cancelled by signal 15");
	json_decref(r1);
	json_decref(manifest);
	pg_run_report_release(&rep);
	pg_suite_release(&s);
	free(cmd);
}
END_TEST

START_TEST(tp_beyond_the_gpus_is_a_visible_skip)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_run_report rep = PG_RUN_REPORT_INIT;
	struct pg_test *t = add_test(&s, PG_SUITE_LATENCY, "latency_tp2", "sleep 100");
	json_t *r;

	t->tp = 2;
	ck_assert_int_eq(run(&s, &rep), 0);
	ck_assert_uint_eq(rep.n_skipped, 1);
	assert_no_children();
	r = result("latency_tp2.json");
	ck_assert_str_eq(pgs(r, "status"), "skipped");
	ck_assert_str_eq(pgs(r, "error"), "tp 2 exceeds the 1 GPU of this machine");
	assert_logged("  skipped: tp 2 exceeds the 1 GPU of this machine\n");
	json_decref(r);
	pg_run_report_release(&rep);
	pg_suite_release(&s);
}
END_TEST

static struct pg_test *command_test(struct pg_suite *s, const char *name, const char *script)
{
	struct pg_test *t = add_test(s, PG_SUITE_LATENCY, name, NULL);
	t->command = strdup(script);
	t->command_shell = true;
	t->command_timeout = 10;
	return t;
}

START_TEST(external_commands_write_their_result)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_run_report rep = PG_RUN_REPORT_INIT;
	json_t *r, *sc;

	command_test(&s, "latency_ext",
		     "echo \"running {model} batch {batch_size}\"; printf '%s' "
		     "'{{\"avg_latency\": 1.5, \"std_latency\": 0.1, \"latencies\": [1.4, 1.6], "
		     "\"percentiles\": {{\"50\": 1.5, \"99\": 1.6}}}}' > {result}");
	command_test(&s, "latency_fails", "echo 'Traceback: ValueError: bad arg' >&2; exit 2");
	command_test(&s, "latency_no_file", "true");
	command_test(&s, "latency_wrong_kind",
		     "echo '{{\"elapsed_time\": 1, \"requests_per_second\": 2}}' > {result}");
	command_test(&s, "latency_slow", "sleep 30")->command_timeout = 0.5;
	/* a serving command per point: {qps} and {max_concurrency}, and vLLM's
	 * old "request_goodput:" key, which the importer renames */
	struct pg_test *sv = add_test(&s, PG_SUITE_SERVING, "serving_ext", NULL);
	sv->command = strdup(
		"printf '{{\"request_rate\": %s, \"max_concurrency\": null, "
		"\"completed\": 10, \"failed\": 0, \"request_throughput\": 2.5, "
		"\"request_goodput:\": null, \"mean_ttft_ms\": 12.0}}' {qps} > {result}");
	sv->command_shell = true;
	sv->command_timeout = 10;
	serving_points(sv, 2);
	ck_assert_int_eq(run(&s, &rep), 3);
	assert_no_children();

	r = result("latency_ext.json");
	ck_assert_str_eq(pgs(r, "status"), "ok");
	ck_assert_str_eq(pgs(r, "client"), "command");
	ck_assert(json_real_value(json_object_get(r, "avg_latency")) == 1.5);
	ck_assert(json_is_null(json_object_get(json_object_get(r, "perfgate"), "server_command")));
	sc = result("latency_ext.commands");
	ck_assert_msg(pg_str_has_prefix(json_string_value(json_object_get(sc, "latency_command")),
					"echo \"running test-model batch 8\"; printf"),
		      "%s", json_string_value(json_object_get(sc, "latency_command")));
	ck_assert_ptr_null(json_object_get(sc, "server_command"));
	json_decref(sc);
	json_decref(r);

	r = result("latency_fails.json");
	ck_assert_msg(
		pg_str_has_prefix(pgs(r, "error"), "command exited with status 2\nlast lines of "),
		"%s", pgs(r, "error"));
	ck_assert(strstr(pgs(r, "error"), "ValueError: bad arg"));
	json_decref(r);
	r = result("latency_no_file.json");
	ck_assert_str_eq(pgs(r, "error"),
			 "command exited 0 but did not write its result ({result})");
	json_decref(r);
	r = result("latency_wrong_kind.json");
	ck_assert_str_eq(pgs(r, "error"),
			 "command wrote a throughput result, not a latency result");
	json_decref(r);
	r = result("latency_slow.json");
	ck_assert_msg(pg_str_has_prefix(pgs(r, "error"), "command did not finish within 0.5s"),
		      "%s", pgs(r, "error"));
	json_decref(r);
	ck_assert(exists("latency_ext.command.log"));
	r = result("serving_ext_qps_2.json");
	ck_assert_str_eq(pgs(r, "status"), "ok");
	ck_assert(json_number_value(json_object_get(r, "request_rate")) == 2);
	ck_assert(json_is_null(json_object_get(r, "request_goodput")));
	ck_assert_ptr_null(json_object_get(r, "request_goodput:"));
	json_decref(r);
	sc = result("serving_ext_qps_2.commands");
	ck_assert_msg(strstr(json_string_value(json_object_get(sc, "client_command")), "' 2 > "),
		      "%s", json_string_value(json_object_get(sc, "client_command")));
	json_decref(sc);
	pg_run_report_release(&rep);
	pg_suite_release(&s);
}
END_TEST

START_TEST(repeats_are_summarised_by_the_median)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_run_report rep = PG_RUN_REPORT_INIT;
	char *cmd = server_command(NULL, 0);
	struct pg_test *t = add_test(&s, PG_SUITE_SERVING, "serving_rep", cmd);
	json_t *r;

	t->repeat = 3;
	requests_per_point = 2;
	throughput_base = 100; /* runs give 101, 102, 103 */
	ck_assert_int_eq(run(&s, &rep), 0);
	r = result("serving_rep_qps_inf.json");
	ck_assert(json_real_value(json_object_get(r, "output_throughput")) == 102);
	ck_assert_uint_eq(json_array_size(pg_json_path(r, "perfgate.repeats")), 3);
	ck_assert(json_real_value(
			  json_object_get(json_array_get(pg_json_path(r, "perfgate.repeats"), 2),
					  "output_throughput")) == 103);
	ck_assert_ptr_null(
		json_object_get(json_array_get(pg_json_path(r, "perfgate.repeats"), 0), "date"));
	assert_logged("  run 3/3\n");
	/* one warm-up before the first run, by default 10 requests */
	ck_assert_int_eq(warmup_requests, PG_WARMUP_DEFAULT_REQUESTS);
	ck_assert_str_eq(pg_json_path_str(r, "perfgate.warmup.kind"), "requests");
	assert_logged("  warm-up: 10 requests, 0.25 s, unmeasured\n");
	ck_assert_ptr_null(pg_json_path(r, "perfgate.cold_repeat"));
	json_decref(r);
	pg_run_report_release(&rep);
	pg_suite_release(&s);
	free(cmd);
}
END_TEST

/* A first run 60% slower than the two after it: flagged, left out of the
 * point's values, kept in perfgate.repeats, named in the log and the
 * summary. */
START_TEST(a_cold_first_run_is_left_out)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_run_report rep = PG_RUN_REPORT_INIT;
	char *cmd = server_command(NULL, 0);
	struct pg_test *t = add_test(&s, PG_SUITE_SERVING, "serving_cold", cmd);
	json_t *r;

	t->repeat = 3;
	t->warmup = (struct pg_warmup){ PG_WARMUP_NONE, 0 };
	requests_per_point = 2;
	throughput_base = 100;
	first_ttft_factor = 1.6;
	ck_assert_int_eq(run(&s, &rep), 0);
	ck_assert_int_eq(warmup_requests, 0);
	r = result("serving_cold_qps_inf.json");
	ck_assert_str_eq(pg_json_path_str(r, "perfgate.warmup.kind"), "none");
	ck_assert_int_eq(json_integer_value(pg_json_path(r, "perfgate.cold_repeat.repeat")), 1);
	ck_assert_str_eq(pg_json_path_str(r, "perfgate.cold_repeat.note"),
			 "repeat 1 of 3 cold: median TTFT +60.0% vs the others, left out");
	/* the median of runs 2 and 3 */
	ck_assert(json_real_value(json_object_get(r, "median_ttft_ms")) == 12.5);
	ck_assert(json_real_value(json_object_get(r, "output_throughput")) == 102.5);
	ck_assert_uint_eq(json_array_size(pg_json_path(r, "perfgate.repeats")), 3);
	assert_logged("  repeat 1 of 3 cold: median TTFT +60.0% vs the others, left out\n");
	ck_assert(strstr(rep.points[0].detail, " (repeat 1 cold, left out)"));
	json_decref(r);
	pg_run_report_release(&rep);
	pg_suite_release(&s);
	free(cmd);
}
END_TEST

/* Secrets in the suite's env and perfgate's environment never reach a
 * file or the log, even when the server prints them. */
static void assert_no_secret_in_dir(const char *secret)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		struct pg_buf path = PG_BUF_INIT;
		char *text;
		if (e->d_name[0] == '.')
			continue;
		pg_buf_printf(&path, "%s/%s", dir, e->d_name);
		text = tu_read_file(path.ptr, NULL);
		ck_assert_msg(!strstr(text, secret), "%s leaks the secret:\n%s", e->d_name, text);
		free(text);
		pg_buf_release(&path);
	}
	closedir(d);
}

START_TEST(secrets_are_redacted_everywhere)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_run_report rep = PG_RUN_REPORT_INIT;
	char *cmd = server_command("print(\"token\", os.environ[\"HF_TOKEN\"], \"key\", "
				   "os.environ[\"OPENAI_API_KEY\"], flush=True)",
				   0);
	struct pg_buf with_flag = PG_BUF_INIT;
	struct pg_test *t;

	setenv("OPENAI_API_KEY", "sk-from-the-agent-0123", 1);
	pg_buf_printf(&with_flag, "%s --api-key sk-literal-in-yaml-99", cmd);
	t = add_test(&s, PG_SUITE_SERVING, "serving_secret", with_flag.ptr);
	pg_kvlist_set(&t->server.env, "HF_TOKEN", "hf_suite_secret_value");
	pg_kvlist_set(&t->server.env, "VLLM_LOGGING_LEVEL", "DEBUG");
	ck_assert_int_eq(run(&s, &rep), 0);
	assert_no_secret_in_dir("hf_suite_secret_value");
	assert_no_secret_in_dir("sk-from-the-agent-0123");
	assert_no_secret_in_dir("sk-literal-in-yaml-99");
	ck_assert(!strstr(log_text, "hf_suite_secret_value"));
	ck_assert(!strstr(log_text, "sk-literal-in-yaml-99"));
	/* the server did print them: redaction rewrote its log */
	char *server_log = NULL;
	{
		struct pg_buf p = PG_BUF_INIT;
		pg_buf_printf(&p, "%s/serving_secret.server.log", dir);
		server_log = tu_read_file(p.ptr, NULL);
		pg_buf_release(&p);
	}
	ck_assert_msg(strstr(server_log, "token *** key ***"), "%s", server_log);
	ck_assert(strstr(server_log, "HF_TOKEN=*** VLLM_LOGGING_LEVEL=DEBUG "));
	free(server_log);
	unsetenv("OPENAI_API_KEY");
	pg_buf_release(&with_flag);
	pg_run_report_release(&rep);
	pg_suite_release(&s);
	free(cmd);
}
END_TEST

/* A model name that is a shell injection reaches the server as one
 * literal argument. */
START_TEST(model_names_are_passed_literally)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_run_report rep = PG_RUN_REPORT_INIT;
	struct pg_buf before = PG_BUF_INIT, model = PG_BUF_INIT, pwned = PG_BUF_INIT,
		      argfile = PG_BUF_INIT;
	char *cmd;
	struct pg_test *t;

	pg_buf_printf(&pwned, "%s/pwned", dir);
	pg_buf_printf(&argfile, "%s/argv.txt", dir);
	pg_buf_printf(&model, "org/m '\"$(touch %s)\"' `touch %s` ; touch %s", pwned.ptr, pwned.ptr,
		      pwned.ptr);
	pg_buf_printf(&before, "open(\"%s\", \"w\").write(\"\\n\".join(sys.argv[1:]))",
		      argfile.ptr);
	cmd = server_command(before.ptr, 0);
	t = add_test(&s, PG_SUITE_SERVING, "serving_inject", cmd);
	free(t->model);
	t->model = strdup(model.ptr);
	ck_assert_int_eq(run(&s, &rep), 0);
	ck_assert_int_eq(access(pwned.ptr, F_OK), -1);
	char *args = tu_read_file(argfile.ptr, NULL);
	ck_assert(pg_str_has_suffix(args, model.ptr));
	ck_assert_uint_eq(count(args, "\n"), 1); /* port, then the whole model */
	free(args);
	pg_buf_release(&before);
	pg_buf_release(&model);
	pg_buf_release(&pwned);
	pg_buf_release(&argfile);
	pg_run_report_release(&rep);
	pg_suite_release(&s);
	free(cmd);
}
END_TEST

/* On a terminal the progress is one line redrawn in place, cleared before
 * anything else is printed; in a log, lines. */
START_TEST(progress_is_a_bar_on_a_terminal_and_lines_in_a_log)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_run_report rep = PG_RUN_REPORT_INIT;
	char *cmd = server_command(NULL, 0);

	request_gap = 0.1;
	on_tty = true;
	serving_points(add_test(&s, PG_SUITE_SERVING, "serving_bar", cmd), 1);
	ck_assert_int_eq(run(&s, &rep), 0);
	/* "\r[=====>    ] 3/6 requests ...\x1b[K" redrawn, then cleared
	 * ("\r\x1b[K") before the result line; every progress report a bar */
	ck_assert_uint_ge(count(log_text, "\r["), 1);
	ck_assert_uint_eq(count(log_text, "/6 requests"), count(log_text, "\r["));
	assert_logged("\r\x1b[K  ok: ");
	pg_run_report_release(&rep);
	pg_suite_release(&s);
	free(log_text);
	log_text = NULL;

	s = (struct pg_suite)PG_SUITE_INIT;
	on_tty = false;
	serving_points(add_test(&s, PG_SUITE_SERVING, "serving_lines", cmd), 1);
	ck_assert_int_eq(run(&s, &rep), 0);
	ck_assert_ptr_null(strstr(log_text, "\x1b["));
	assert_logged("/6 requests  ");
	ck_assert_uint_eq(count(log_text, "\r"), 0);
	/* outside Buildkite, group titles without the group markers */
	assert_logged("serving_lines qps 1 (1/1)\n");
	assert_logged("\nperfgate run: 1 ok (");
	ck_assert_ptr_null(strstr(log_text, "--- "));
	ck_assert_ptr_null(strstr(log_text, "+++ "));
	pg_run_report_release(&rep);
	pg_suite_release(&s);
	free(cmd);
}
END_TEST

/* Without a GPU the sidecar has no gpu_type (vLLM's report would read ""
 * as a GPU named "1x"); the result says gpu "none" and reads back so. */
START_TEST(no_gpu_writes_no_gpu_type)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_run_report rep = PG_RUN_REPORT_INIT;
	char *cmd = server_command(NULL, 0);
	struct pg_result_set set = PG_RESULT_SET_INIT;
	struct pg_error err = PG_ERROR_INIT;
	char label[64];
	json_t *sidecar;

	pg_gpu_info_release(&gpu);
	pg_gpu_info_init(&gpu);
	serving_points(add_test(&s, PG_SUITE_SERVING, "serving_nogpu", cmd), 1);
	ck_assert_int_eq(run(&s, &rep), 0);
	sidecar = result("serving_nogpu_qps_1.commands");
	ck_assert_ptr_nonnull(json_object_get(sidecar, "client_command"));
	ck_assert_ptr_null(json_object_get(sidecar, "gpu_type"));
	ck_assert_int_eq(pg_results_load_dir(&set, dir, &err), 0);
	ck_assert_uint_eq(set.n, 1);
	/* as before: no GPU name, the label "none" */
	ck_assert_ptr_null(pg_result_gpu(&set.items[0]));
	ck_assert_str_eq(pg_result_gpu_label(&set.items[0], label, sizeof(label)), "none");
	pg_result_set_release(&set);
	json_decref(sidecar);
	pg_run_report_release(&rep);
	pg_suite_release(&s);
	free(cmd);
}
END_TEST

/* GPU hygiene: a GPU that stays busy makes the test an error naming it,
 * after the timeout, and the server is never started. */
START_TEST(busy_gpus_fail_the_test_after_the_timeout)
{
	struct pg_suite s = PG_SUITE_INIT;
	struct pg_run_report rep = PG_RUN_REPORT_INIT;
	struct pg_buf bin = PG_BUF_INIT, smi = PG_BUF_INIT, path = PG_BUF_INIT;
	json_t *r;

	pg_buf_printf(&bin, "%s/bin", dir);
	mkdir(bin.ptr, 0755);
	pg_buf_printf(&smi, "%s/nvidia-smi", bin.ptr);
	tu_write_file(smi.ptr, "#!/bin/sh\necho 120\necho 50000\n");
	chmod(smi.ptr, 0755);
	pg_buf_printf(&path, "%s:/usr/bin:/bin", bin.ptr);
	setenv("PATH", path.ptr, 1);
	idle_mib = 1000;
	add_test(&s, PG_SUITE_LATENCY, "latency_busy", "sleep 100");
	ck_assert_int_eq(run(&s, &rep), 3);
	r = result("latency_busy.json");
	ck_assert_str_eq(pgs(r, "error"),
			 "GPU memory still in use after 0.5s (threshold 1000 MiB): "
			 "GPU 1 uses 50000 MiB");
	ck_assert(!strstr(log_text, "server:"));
	assert_no_children();
	json_decref(r);
	pg_run_report_release(&rep);
	pg_suite_release(&s);
	free(log_text);
	log_text = NULL;

	/* the same from the suite (server.gpu_idle_mib), as a Buildkite step
	 * has no command line to give --gpu-idle-mib on */
	s = (struct pg_suite)PG_SUITE_INIT;
	idle_mib = 0;
	add_test(&s, PG_SUITE_LATENCY, "latency_busy_suite", "sleep 100")->server.gpu_idle_mib =
		1000;
	ck_assert_int_eq(run(&s, &rep), 3);
	r = result("latency_busy_suite.json");
	ck_assert_str_eq(pgs(r, "error"),
			 "GPU memory still in use after 0.5s (threshold 1000 MiB): "
			 "GPU 1 uses 50000 MiB");
	json_decref(r);
	pg_run_report_release(&rep);
	pg_suite_release(&s);
	pg_buf_release(&bin);
	pg_buf_release(&smi);
	pg_buf_release(&path);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("runner");

	git_libgit2_init();
	curl_global_init(CURL_GLOBAL_DEFAULT);
	saved_path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	TCase *tc = tcase_create("lifecycle");

	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, a_server_serves_every_point_then_stops);
	tcase_add_test(tc, progress_is_a_bar_on_a_terminal_and_lines_in_a_log);
	tcase_add_test(tc, a_server_that_never_becomes_ready);
	tcase_add_test(tc, a_server_that_exits_while_starting);
	tcase_add_test(tc, a_server_that_dies_in_the_middle);
	tcase_add_test(tc, every_request_failing_is_an_error);
	tcase_add_test(tc, sigterm_stops_everything_and_keeps_what_finished);
	tcase_add_test(tc, tp_beyond_the_gpus_is_a_visible_skip);
	tcase_add_test(tc, busy_gpus_fail_the_test_after_the_timeout);
	tcase_add_test(tc, external_commands_write_their_result);
	tcase_add_test(tc, repeats_are_summarised_by_the_median);
	tcase_add_test(tc, a_cold_first_run_is_left_out);
	tcase_add_test(tc, secrets_are_redacted_everywhere);
	tcase_add_test(tc, model_names_are_passed_literally);
	tcase_add_test(tc, no_gpu_writes_no_gpu_type);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
