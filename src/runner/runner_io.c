#include "runner/runner_io.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/jsonw.h"
#include "results/clientcheck.h"
#include "results/identity.h"
#include "results/metrics.h"
#include "suite/plan.h"
#include "base/redact.h"
#include "results/cold.h"
#include "results/energy.h"
#include "results/repeats.h"
#include "base/strutil.h"
#include "base/template.h"
#include "runner/vllmcmd.h"
#include "sys/fsutil.h"
#include "sys/gitinfo.h"
#include "gpu/detect_io.h"
#include "import/import_io.h"
#include "sys/proc.h"
#include "runner/ready_io.h"
#include "runner/startup.h"
#include "runner/startup_io.h"
#include "results/results_io.h"
#include "telemetry/gpureader_io.h"
#include "telemetry/gpustat.h"
#include "telemetry/sampler_io.h"
#include "telemetry/series.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ---- signals ---------------------------------------------------------- */

volatile sig_atomic_t pg_run_cancelled;
/* Non-zero stops the point in progress: a signal, or the server died. */
static volatile sig_atomic_t point_stop;

static struct sigaction saved_int, saved_term, saved_hup;

static void on_signal(int sig)
{
	if (pg_run_cancelled) {
		/* second signal: the user means it */
		pg_proc_signal_all(SIGKILL);
		_exit(128 + sig);
	}
	pg_run_cancelled = sig;
	point_stop = sig;
	/* every group (the server and an external command) starts shutting
	 * down now, side by side: stopping them one after the other would
	 * add their grace periods up against Buildkite's 10 s */
	pg_proc_signal_all(SIGTERM);
}

void pg_run_signals_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, &saved_int);
	sigaction(SIGTERM, &sa, &saved_term);
	sigaction(SIGHUP, &sa, &saved_hup);
}

void pg_run_signals_restore(void)
{
	sigaction(SIGINT, &saved_int, NULL);
	sigaction(SIGTERM, &saved_term, NULL);
	sigaction(SIGHUP, &saved_hup, NULL);
}

/* On a cancel everything must be over within Buildkite's default 10 s
 * grace: servers get at most this long between SIGTERM and SIGKILL. */
#define CANCEL_GRACE 4.0
#define TAIL_LINES   20

/* ---- state ------------------------------------------------------------ */

struct runner {
	const struct pg_suite *suite;
	const struct pg_plan *plan;
	const struct pg_run_opts *o;
	struct pg_run_report *rep;
	FILE *log;
	bool buildkite;
	struct pg_redactor redact;
	json_t *git;
	json_t *build;
	char host[256];
	char *self_exe;
	const char *vllm; /* what "vllm" runs, or NULL: vllm */
	char *tmpdir;
	char started_at[PG_ISO8601_SIZE];
	double t0;
	json_t *manifest;        /* {"perfgate_run": {...}} */
	json_t *manifest_points; /* borrowed from manifest */
	bool stop_after_error;

	/* the current test's server */
	const struct pg_test *test;
	struct pg_proc server;
	bool server_running;
	char *server_log;
	char *server_cmd; /* redacted, as recorded */
	char *base_url;
	char port[16];
	double startup;         /* seconds to ready; NAN without a server */
	bool server_death_told; /* its log tail was shown once */
	/* a deployment's worker roles (docs/deployments.md); its front role
	 * (proxy, router) is `server` above */
	struct worker *workers;
	size_t n_workers;

	/* telemetry: the GPU reader is opened at the first point and kept;
	 * each note (a missing tool or endpoint) is printed once per run */
	struct pg_gpu_reader *gpu_reader;
	bool gpu_reader_tried;
	struct pg_strv told;
	struct pg_sampler *sampler; /* of the point in flight, or NULL */

	/* progress of the point in flight */
	double last_print;
	double last_check;
	bool bar_active;
};

/* One replica of a deployment's worker role. */
struct worker {
	const struct pg_role_spec *role;
	long replica;
	struct pg_proc proc;
	bool running;
	char *label; /* "prefill.1" */
	char *log;
	char *cmd; /* redacted, as recorded */
};

/* What happened to one point. */
struct outcome {
	const char *status;
	struct pg_buf error;            /* why not ok; may span lines (a log tail) */
	json_t *metrics;                /* merged result keys, or NULL */
	json_t *repeats;                /* per-run metrics when repeat > 1, or NULL */
	json_t *warmup;                 /* perfgate.warmup, or NULL (startup tests) */
	json_t *cold;                   /* perfgate.cold_repeat, or NULL */
	json_t *telemetry;              /* perfgate.telemetry, or NULL */
	struct pg_strv telemetry_lines; /* shown after the outcome: notes, flags */
	char *client_command;           /* redacted */
	char started_at[PG_ISO8601_SIZE];
	double t_start;
	bool probe; /* an SLA search probe, not a point of the plan */
};

static void outcome_init(struct outcome *oc)
{
	memset(oc, 0, sizeof(*oc));
	oc->status = "ok";
	pg_buf_init(&oc->error);
	oc->t_start = pg_monotonic();
	pg_runfmt_iso8601(oc->started_at, (int64_t)time(NULL));
}

static void outcome_release(struct outcome *oc)
{
	pg_buf_release(&oc->error);
	json_decref(oc->metrics);
	json_decref(oc->repeats);
	json_decref(oc->warmup);
	json_decref(oc->cold);
	json_decref(oc->telemetry);
	pg_strv_release(&oc->telemetry_lines);
	free(oc->client_command);
}

/* Mark the outcome failed with a message (redacted when recorded). */
__attribute__((format(printf, 3, 4))) static void fail(struct outcome *oc, const char *status,
						       const char *fmt, ...)
{
	va_list ap;

	oc->status = status;
	pg_buf_reset(&oc->error);
	va_start(ap, fmt);
	pg_buf_vprintf(&oc->error, fmt, ap);
	va_end(ap);
}

/* ---- output ----------------------------------------------------------- */

static void clear_bar(struct runner *r)
{
	if (r->bar_active) {
		fputs("\r\x1b[K", r->log);
		r->bar_active = false;
	}
}

__attribute__((format(printf, 2, 3))) static void say(struct runner *r, const char *fmt, ...)
{
	struct pg_buf raw = PG_BUF_INIT, clean = PG_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	pg_buf_vprintf(&raw, fmt, ap);
	va_end(ap);
	pg_redact(&r->redact, &clean, raw.ptr);
	clear_bar(r);
	if (r->buildkite) {
		fputs(clean.ptr, r->log);
	} else {
		struct pg_buf plain = PG_BUF_INIT;
		pg_runfmt_plain(&plain, clean.ptr);
		fputs(plain.ptr, r->log);
		pg_buf_release(&plain);
	}
	fflush(r->log);
	pg_buf_release(&raw);
	pg_buf_release(&clean);
}

/* Print a multi-line text indented, e.g. a log tail. */
static void say_block(struct runner *r, const char *text, const char *indent)
{
	const char *p = text;

	while (*p) {
		size_t len = strcspn(p, "\n");
		say(r, "%s%.*s\n", indent, (int)len, p);
		p += len;
		if (*p)
			p++;
	}
}

/* The first worker of the deployment that exited, or NULL. */
static struct worker *dead_worker(struct runner *r)
{
	for (size_t i = 0; i < r->n_workers; i++)
		if (r->workers[i].running && pg_proc_exited(&r->workers[i].proc))
			return &r->workers[i];
	return NULL;
}

static void on_progress(void *ctx, const struct pg_run_progress *p)
{
	struct runner *r = ctx;
	double now = pg_monotonic();
	double interval = r->o->progress_interval > 0 ? r->o->progress_interval : 5;
	struct pg_buf line = PG_BUF_INIT;

	pg_sampler_progress(r->sampler, (double)p->done, p->output_tokens);
	/* a dead server cannot be measured: stop the point now rather than
	 * wait for every request to time out */
	if (now - r->last_check >= 0.1) {
		r->last_check = now;
		if (((r->server_running && pg_proc_exited(&r->server)) || dead_worker(r)) &&
		    !point_stop)
			point_stop = -1;
	}
	if (r->o->tty) {
		if (now - r->last_print < 0.2)
			return;
		pg_runfmt_progress_bar(&line, p, 30);
		fputs(line.ptr, r->log);
		fflush(r->log);
		r->bar_active = true;
	} else {
		if (now - r->last_print < interval)
			return;
		pg_runfmt_progress_line(&line, p);
		say(r, "%s", line.ptr);
	}
	r->last_print = now;
	pg_buf_release(&line);
}

/* ---- templates -------------------------------------------------------- */

/* A variable as a command's shell sees it: the test's env, then ours. */
static const char *env_lookup(void *ctx, const char *name)
{
	const struct pg_kvlist *env = ctx;
	const char *v = env ? pg_kvlist_get(env, name) : NULL;

	return v ? v : getenv(name);
}

/*
 * Expand a command template into argv (or /bin/sh -c SCRIPT with shell) and
 * its redacted display. A first word "perfgate" means this very binary, so
 * the demo and tests run the perfgate they were started with, not whatever
 * is first on PATH.
 */
static int render(struct runner *r, const char *tmpl, bool shell, struct pg_point_vars *v,
		  const struct pg_kvlist *env, struct pg_strv *argv, struct pg_buf *display,
		  struct pg_error *err)
{
	int ret;

	if (shell) {
		struct pg_buf script = PG_BUF_INIT, exec = PG_BUF_INIT;
		if ((ret = pg_template_shell(&script, tmpl, pg_point_var, v, err))) {
			pg_buf_release(&script);
			return ret;
		}
		/* what the rendered line says is secret ({vars} filled in,
		 * "$KEY" given to a secret flag) joins the redactor before
		 * the command is shown or its log written */
		/* vLLM's program stood in for (--vllm): what runs is what the
		 * log and the .commands sidecar say */
		pg_program_replace_shell(&script, "vllm", r->vllm);
		pg_redactor_add_shell(&r->redact, script.ptr, env_lookup, (void *)env);
		pg_redact_shell_command(&r->redact, display, env, script.ptr);
		if (pg_str_has_prefix(script.ptr, "perfgate") &&
		    (script.ptr[8] == ' ' || script.ptr[8] == '\0')) {
			pg_shell_quote(&exec, r->self_exe);
			pg_buf_puts(&exec, script.ptr + 8);
		} else {
			pg_buf_puts(&exec, script.ptr);
		}
		pg_strv_push(argv, "/bin/sh");
		pg_strv_push(argv, "-c");
		pg_strv_push_owned(argv, pg_buf_detach(&exec));
		pg_buf_release(&script);
		return 0;
	}
	if ((ret = pg_template_argv(argv, tmpl, pg_point_var, v, err)))
		return ret;
	pg_program_replace_argv(argv, "vllm", r->vllm);
	pg_redactor_add_argv(&r->redact, argv->v, env_lookup, (void *)env);
	pg_redact_command(&r->redact, display, env, argv->v);
	if (!strcmp(argv->v[0], "perfgate")) {
		free(argv->v[0]);
		argv->v[0] = pg_xstrdup(r->self_exe);
	}
	return 0;
}

/* ---- results ---------------------------------------------------------- */

/* The goodput SLOs behind the result's slo_attainment keys, ms:
 * {"ttft_ms", "tpot_ms", "itl_ms", "itl_percentile", "e2el_ms"}, those set. */
static void slo_json(json_t *params, const struct pg_goodput *g)
{
	json_t *o = json_object();

	if (!isnan(g->ttft_ms))
		json_object_set_new(o, "ttft_ms", json_real(g->ttft_ms));
	if (!isnan(g->tpot_ms))
		json_object_set_new(o, "tpot_ms", json_real(g->tpot_ms));
	if (!isnan(g->itl_ms)) {
		json_object_set_new(o, "itl_ms", json_real(g->itl_ms));
		json_object_set_new(o, "itl_percentile", json_real(g->itl_percentile));
	}
	if (!isnan(g->e2el_ms))
		json_object_set_new(o, "e2el_ms", json_real(g->e2el_ms));
	if (json_object_size(o))
		json_object_set_new(params, "slo", o);
	else
		json_decref(o);
}

static json_t *params_json(const struct pg_point *pt)
{
	const struct pg_test *t = pt->test;
	const struct pg_dataset_spec *d = &t->dataset;
	static const char *const datasets[] = { "random", "sharegpt", "jsonl", "sonnet",
						"multi_turn" };
	json_t *p = json_object();
	bool random = d->kind == PG_DATASET_RANDOM;
	bool serving = t->kind == PG_SUITE_SERVING;

	json_object_set_new(p, "model", t->model ? json_string(t->model) : json_null());
	json_object_set_new(p, "tp", json_integer(t->tp));
	if (t->server.n_roles) {
		/* the shape is part of the point's identity (results/identity.h) */
		struct pg_buf shape = PG_BUF_INIT;
		pg_deployment_shape(&shape, &t->server);
		json_object_set_new(p, "deployment", json_string(shape.ptr));
		pg_buf_release(&shape);
	}
	if (t->kind == PG_SUITE_STARTUP) {
		/* no prompts: the starts are the workload */
		json_object_set_new(p, "cold_starts", json_integer(t->cold_starts));
		json_object_set_new(p, "warmup_starts", json_integer(t->warmup_starts));
		json_object_set_new(p, "warm_starts", json_integer(t->warm_starts));
		json_object_set_new(p, "first_token", json_boolean(t->first_token));
		json_object_set_new(
			p, "endpoint",
			json_string(t->client.endpoint ? t->client.endpoint : "/v1/completions"));
		return p;
	}
	json_object_set_new(p, "dataset", json_string(datasets[d->kind]));
	json_object_set_new(p, "input_len",
			    random || d->kind == PG_DATASET_SONNET ? json_integer(d->input_len)
								   : json_null());
	json_object_set_new(p, "output_len",
			    random || d->output_len > 0 ? json_integer(d->output_len)
							: json_null());
	json_object_set_new(p, "num_prompts",
			    t->kind == PG_SUITE_LATENCY ? json_null()
							: json_integer(pg_point_num_prompts(pt)));
	if (serving && isinf(pt->qps))
		json_object_set_new(p, "qps", json_string("inf"));
	else
		json_object_set_new(p, "qps", serving ? json_real(pt->qps) : json_null());
	json_object_set_new(p, "max_concurrency",
			    serving && pt->max_concurrency > 0 ? json_integer(pt->max_concurrency)
							       : json_null());
	if (serving && t->ramp_up.strategy != PG_RAMP_NONE)
		json_object_set_new(p, "ramp_up",
				    json_pack("{s:s, s:I, s:I}", "strategy",
					      pg_ramp_strategy_name(t->ramp_up.strategy),
					      "start_rps", (json_int_t)t->ramp_up.start_rps,
					      "end_rps", (json_int_t)t->ramp_up.end_rps));
	json_object_set_new(p, "batch_size",
			    t->kind == PG_SUITE_LATENCY ? json_integer(t->batch_size)
							: json_null());
	if (serving)
		slo_json(p, &t->goodput);
	if (d->kind == PG_DATASET_MULTI_TURN) {
		const struct pg_sessions_spec *ss = &d->sessions;
		json_t *m = json_pack("{s:I, s:I, s:I, s:I, s:I}", "users", (json_int_t)ss->users,
				      "rounds", (json_int_t)ss->rounds, "system_prompt_len",
				      (json_int_t)ss->system_prompt_len, "user_context_len",
				      (json_int_t)ss->user_context_len, "question_len",
				      (json_int_t)ss->question_len);
		json_object_set_new(m, "think_time",
				    isnan(ss->think_time) ? json_null()
							  : json_real(ss->think_time));
		json_object_set_new(m, "join_interval",
				    isnan(ss->join_interval) ? json_null()
							     : json_real(ss->join_interval));
		json_object_set_new(p, "multi_turn", m);
	}
	json_object_set_new(
		p, "endpoint",
		json_string(t->client.endpoint ? t->client.endpoint : "/v1/completions"));
	return p;
}

static void manifest_update(struct runner *r, const char *status, int exit_code)
{
	json_t *m = json_object_get(r->manifest, "perfgate_run");
	char now[PG_ISO8601_SIZE];
	struct pg_error err = PG_ERROR_INIT;
	struct pg_buf path = PG_BUF_INIT, text = PG_BUF_INIT;

	json_object_set_new(m, "status", json_string(status));
	json_object_set_new(m, "exit_code", exit_code >= 0 ? json_integer(exit_code) : json_null());
	json_object_set_new(m, "signal",
			    r->rep->cancel_signal ? json_integer(r->rep->cancel_signal)
						  : json_null());
	json_object_set_new(m, "ended_at",
			    json_string(pg_runfmt_iso8601(now, (int64_t)time(NULL))));
	pg_buf_printf(&path, "%s/perfgate_run.json", r->o->results_dir);
	pg_redact_json(&r->redact, r->manifest);
	pg_json_write(&text, r->manifest, 4);
	pg_buf_putc(&text, '\n');
	if (pg_file_write_atomic(path.ptr, text.ptr, text.len, &err))
		say(r, "perfgate: warning: %s\n", err.msg);
	pg_buf_release(&path);
	pg_buf_release(&text);
}

/* probe: an SLA search probe, which is not one of the plan's points the
 * manifest lists. */
static void report_add(struct runner *r, const struct pg_point *pt, bool probe, const char *status,
		       const char *detail, const char *note, double seconds)
{
	struct pg_run_report *rep = r->rep;
	struct pg_run_point rp;
	json_t *mp = probe ? NULL
			   : json_array_get(r->manifest_points, (size_t)(pt - r->plan->points));
	size_t len = detail ? strcspn(detail, "\n") : 0;

	rp.name = pg_xstrdup(pt->name);
	rp.status = pg_xstrdup(status);
	rp.detail = detail ? pg_xstrndup(detail, len) : NULL;
	rp.note = note && *note ? pg_xstrdup(note) : NULL;
	rp.seconds = seconds;
	PG_ARRAY_PUSH(rep->points, rep->n, rep->cap, rp);
	if (!strcmp(status, "ok"))
		rep->n_ok++;
	else if (!strcmp(status, "error"))
		rep->n_error++;
	else if (!strcmp(status, "skipped"))
		rep->n_skipped++;
	else if (!strcmp(status, "cancelled"))
		rep->n_cancelled++;
	else if (strcmp(status, "probe failed"))
		rep->n_not_run++;
	/* "probe failed": an SLA probe the server could not serve is the
	 * search's answer, not a failure of the run */
	if (mp) {
		json_object_set_new(mp, "status", json_string(status));
		json_object_set_new(mp, "error",
				    strcmp(status, "ok") && detail ? json_string(detail)
								   : json_null());
		json_object_set_new(mp, "seconds", json_real(seconds));
	}
}

/* Write the point's result file and .commands sidecar, and count it. */
static void role_json(json_t *roles, const char *role, long replica, long tp, const char *cmd,
		      const char *log)
{
	const char *slash = log ? strrchr(log, '/') : NULL;

	json_array_append_new(roles, json_pack("{s:s, s:I, s:I, s:s?, s:s?}", "role", role,
					       "replica", (json_int_t)replica, "tp", (json_int_t)tp,
					       "command", cmd, "log", slash ? slash + 1 : log));
}

/* perfgate.deployment: the shape and every replica's command and log
 * (docs/deployments.md), the front role last. */
static json_t *deployment_json(const struct runner *r)
{
	const struct pg_server_spec *sv = &r->test->server;
	const struct pg_role_spec *front = &sv->roles[sv->n_roles - 1];
	struct pg_buf shape = PG_BUF_INIT;
	json_t *roles = json_array(), *out;

	for (size_t i = 0; i < r->n_workers; i++) {
		const struct worker *w = &r->workers[i];
		role_json(roles, w->role->name, w->replica, w->role->tp, w->cmd, w->log);
	}
	if (r->server_cmd)
		role_json(roles, front->name, 0, front->tp, r->server_cmd, r->server_log);
	pg_deployment_shape(&shape, sv);
	out = json_pack("{s:s, s:o}", "shape", shape.ptr, "roles", roles);
	pg_buf_release(&shape);
	return out;
}

static void record(struct runner *r, const struct pg_point *pt, struct outcome *oc)
{
	const struct pg_test *t = pt->test;
	json_t *result = oc->metrics ? oc->metrics : json_object();
	json_t *pg = json_object(), *commands = json_object();
	json_t *certified = NULL;
	struct pg_buf error = PG_BUF_INIT, detail = PG_BUF_INIT, note = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;
	char ended[PG_ISO8601_SIZE];
	double seconds = pg_monotonic() - oc->t_start;
	bool ok = !strcmp(oc->status, "ok");

	oc->metrics = NULL;
	pg_redact(&r->redact, &error, oc->error.ptr);
	/* the statistics' own part of the perfgate object (loadgen/loadstats.h)
	 * is kept; a command that ran perfgate brings its own provenance:
	 * ours wins */
	certified = json_incref(pg_json_path(result, "perfgate.certified"));
	json_object_del(result, "perfgate");

	json_object_set_new(pg, "version", json_string(PERFGATE_VERSION));
	json_object_set_new(pg, "suite", json_string(pg_suite_kind_name(t->kind)));
	json_object_set_new(pg, "test", json_string(t->name));
	json_object_set_new(pg, "point", json_string(pt->name));
	json_object_set_new(pg, "status", json_string(oc->status));
	json_object_set_new(pg, "error", ok ? json_null() : json_string(error.ptr));
	json_object_set_new(pg, "gpu", pg_gpu_info_json(r->o->gpu));
	json_object_set_new(pg, "git", json_incref(r->git));
	json_object_set_new(pg, "server_command",
			    r->server_cmd ? json_string(r->server_cmd) : json_null());
	json_object_set_new(pg, "server_startup_seconds",
			    isnan(r->startup) ? json_null() : json_real(r->startup));
	if (t->server.n_roles)
		json_object_set_new(pg, "deployment", deployment_json(r));
	json_object_set_new(pg, "client", json_string(t->command ? "command" : "native"));
	json_object_set_new(pg, "params", params_json(pt));
	json_object_set_new(pg, "seed", json_integer((json_int_t)t->client.seed));
	json_object_set_new(pg, "started_at", json_string(oc->started_at));
	json_object_set_new(pg, "ended_at",
			    json_string(pg_runfmt_iso8601(ended, (int64_t)time(NULL))));
	json_object_set_new(pg, "host", json_string(r->host));
	/* with host, which run (one CI job) measured it: the gate tells the
	 * shards of a build apart by it, each job having its own offset */
	json_object_set_new(pg, "run_started_at", json_string(r->started_at));
	json_object_set_new(pg, "build", json_incref(r->build));
	if (certified)
		json_object_set_new(pg, "certified", certified);
	if (oc->warmup) {
		json_object_set_new(pg, "warmup", oc->warmup);
		oc->warmup = NULL;
	}
	if (oc->repeats) {
		json_object_set_new(pg, "repeats", oc->repeats);
		oc->repeats = NULL;
	}
	if (oc->cold)
		json_object_set_new(pg, "cold_repeat", json_incref(oc->cold));
	if (oc->telemetry) {
		json_object_set_new(pg, "telemetry", oc->telemetry);
		oc->telemetry = NULL;
	}
	/* probes differ from run to run: reports show them, the gate does not
	 * compare them, baselines and history leave them out */
	if (oc->probe)
		json_object_set_new(pg, "adaptive_search", json_true());
	json_object_set_new(result, "perfgate", pg);
	/* the --metadata pairs vLLM's driver gives vllm bench serve, as its
	 * results carry them (strings); a command's own are kept */
	for (size_t i = 0; i < t->metadata.n; i++)
		if (!json_object_get(result, t->metadata.items[i].key))
			json_object_set_new(result, t->metadata.items[i].key,
					    json_string(t->metadata.items[i].value));
	/* energy per output token from the telemetry's GPU energy counters,
	 * under vLLM's names */
	if (ok)
		pg_result_energy(result);
	/* failed requests leave real numbers of a run that went wrong: say so,
	 * for the reports, for pandas and for the history, which skips them
	 * (a probe the server fails is the SLA search's answer, not a fault) */
	if (ok && !oc->probe) {
		struct pg_buf why = PG_BUF_INIT;
		if (pg_result_json_incomplete(result, &why))
			json_object_set_new(pg, "incomplete", json_string(why.ptr));
		pg_buf_release(&why);
	}

	/* the sidecar as vLLM's driver writes it */
	if (t->kind == PG_SUITE_SERVING || r->server_cmd)
		json_object_set_new(commands, "server_command",
				    json_string(r->server_cmd ? r->server_cmd : ""));
	if (oc->client_command) {
		json_object_set_new(commands, pg_vllm_command_key(t->kind),
				    json_string(oc->client_command));
	} else {
		struct pg_buf cmd = PG_BUF_INIT, clean = PG_BUF_INIT;
		pg_vllm_equivalent_command(&cmd, pt, r->base_url, r->o->results_dir);
		pg_redact(&r->redact, &clean, cmd.ptr);
		json_object_set_new(commands, pg_vllm_command_key(t->kind), json_string(clean.ptr));
		pg_buf_release(&cmd);
		pg_buf_release(&clean);
	}
	/* without a GPU there is no gpu_type to write: an empty string would
	 * read as a GPU named "" ("1x" in vLLM's report); perfgate's readers
	 * take the GPU from perfgate.gpu (docs/design/vllm-benchmarks.md §7) */
	if (r->o->gpu->gpu_type[0])
		json_object_set_new(commands, "gpu_type", json_string(r->o->gpu->gpu_type));
	if (oc->probe)
		json_object_set_new(commands, "adaptive_search", json_true());
	/* an external command's result is its own: whatever it wrote (its
	 * arguments, a server's error text) passes the redactor too */
	pg_redact_json(&r->redact, result);
	pg_redact_json(&r->redact, commands);

	if (pg_result_write(r->o->results_dir, pt->name, result, commands, &err)) {
		say(r, "  error: cannot write the result: %s\n", err.msg);
		oc->status = "error";
		pg_buf_reset(&error);
		pg_buf_printf(&error, "cannot write the result: %s", err.msg);
		ok = false;
	}

	if (ok) {
		pg_runfmt_key_metrics(&detail, t->kind, result);
		pg_clientcheck_note(&note, t->kind, result);
		if (oc->cold) {
			pg_buf_puts(&detail, " (repeat 1 cold, left out)");
			pg_buf_printf(&note, "%s%s", note.len ? "; " : "",
				      json_string_value(json_object_get(oc->cold, "note")));
		}
	} else {
		pg_buf_puts(&detail, error.ptr);
	}
	report_add(r, pt, oc->probe,
		   oc->probe && !strcmp(oc->status, "error") ? "probe failed" : oc->status,
		   detail.ptr, note.ptr, seconds);
	if (!ok && strcmp(oc->status, "skipped") && !oc->probe)
		r->stop_after_error = r->o->fail_fast;
	manifest_update(r, "running", -1);

	json_decref(result);
	json_decref(commands);
	pg_buf_release(&error);
	pg_buf_release(&detail);
	pg_buf_release(&note);
}

/* ---- the server ------------------------------------------------------- */

/* A free loopback port (sys/proc.h, pg_free_ports). */
static int free_port(char out[16], struct pg_error *err)
{
	return pg_free_ports(1, (char(*)[16])out, err);
}

static const char *api_key(const struct pg_test *t)
{
	const char *v = t->client.api_key_env ? getenv(t->client.api_key_env) : NULL;
	return v && *v ? v : NULL;
}

/* How to wait for a test's server at base: its ready path, timeout and
 * key; proc is the server (NULL: a remote one); url holds the address. */
static void ready_opts(struct pg_ready_opts *ro, struct pg_buf *url, const char *base,
		       const struct pg_test *t, struct pg_proc *proc)
{
	pg_buf_printf(url, "%s%s%s", base,
		      t->server.ready_path && t->server.ready_path[0] == '/' ? "" : "/",
		      t->server.ready_path ? t->server.ready_path : "");
	memset(ro, 0, sizeof(*ro));
	ro->url = url->ptr;
	ro->timeout = t->server.ready_timeout;
	ro->api_key = api_key(t);
	ro->proc = proc;
	ro->stop = &pg_run_cancelled;
}

void pg_run_collect_secrets(struct pg_redactor *r, const struct pg_suite *suite)
{
	pg_redactor_add_environ(r, environ);
	if (!suite)
		return;
	pg_redactor_add_suite(r, suite);
	for (size_t k = 0; k < suite->n_tests; k++)
		pg_redactor_add(r, api_key(&suite->tests[k]));
}

/* Append "\nlast lines of LOG:\n<tail>" to an error, once the log writer
 * of proc (may be NULL) has written what the group printed. */
static void add_tail(struct pg_buf *msg, const char *log, struct pg_proc *proc)
{
	struct pg_buf tail = PG_BUF_INIT;

	if (proc)
		pg_proc_log_settle(proc, 1.0);
	pg_file_tail(&tail, log, TAIL_LINES);
	if (tail.len)
		pg_buf_printf(msg, "\nlast lines of %s:\n%s", log, tail.ptr);
	pg_buf_release(&tail);
}

/* The SIGTERM-to-SIGKILL grace of a group being stopped. After a cancel
 * every group got its SIGTERM at once (on_signal), so they share one
 * deadline, CANCEL_GRACE after the runner first saw the cancel: a second
 * group does not get a fresh grace after the first used up its own. */
static double grace_for(double configured)
{
	static double cancel_seen;
	double left;

	if (!pg_run_cancelled) {
		cancel_seen = 0;
		return configured;
	}
	if (!cancel_seen)
		cancel_seen = pg_monotonic();
	left = CANCEL_GRACE - (pg_monotonic() - cancel_seen);
	if (left < 0)
		left = 0;
	return configured < left ? configured : left;
}

/* ---- a deployment: several roles (docs/deployments.md) ------------------ */

/* The role's ready path: its own, else the server's. */
static void role_ready_opts(struct pg_ready_opts *ro, struct pg_buf *url, const char *base,
			    const struct pg_test *t, const struct pg_role_spec *role,
			    struct pg_proc *proc)
{
	const char *path = role->ready_path ? role->ready_path : t->server.ready_path;

	ready_opts(ro, url, base, t, proc);
	pg_buf_reset(url);
	pg_buf_printf(url, "%s%s%s", base, path && path[0] == '/' ? "" : "/", path ? path : "");
	ro->url = url->ptr;
}

/*
 * Start one replica of a role on port: its command rendered with the
 * role's variables, the server's env under the role's, its own log.
 * The front role's process is r->server, a worker's w->proc.
 */
static int start_role(struct runner *r, const struct pg_test *t, const struct pg_role_spec *role,
		      long replica, const char *port, struct pg_kvlist *vars, struct pg_proc *proc,
		      char **log_out, char **cmd_out, struct outcome *oc)
{
	struct pg_strv argv = PG_STRV_INIT;
	struct pg_buf display = PG_BUF_INIT, header = PG_BUF_INIT, buf = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_kvlist env = { 0 };
	struct pg_point_vars v;
	char rep[24], url[64];
	int ret;

	snprintf(rep, sizeof(rep), "%ld", replica);
	snprintf(url, sizeof(url), "http://127.0.0.1:%s", port);
	pg_role_vars_set(vars, role, rep);
	for (size_t i = 0; i < t->server.env.n; i++)
		pg_kvlist_set(&env, t->server.env.items[i].key, t->server.env.items[i].value);
	for (size_t i = 0; i < role->env.n; i++)
		pg_kvlist_set(&env, role->env.items[i].key, role->env.items[i].value);
	memset(&v, 0, sizeof(v));
	v.test = t;
	v.port = port;
	v.host = "127.0.0.1";
	v.base_url = url;
	v.results_dir = r->o->results_dir;
	v.role_vars = vars;
	if ((ret = render(r, role->command, role->shell, &v, &env, &argv, &display, &err))) {
		fail(oc, "error", "%s.%ld command: %s", role->name, replica, err.msg);
		goto done;
	}
	pg_buf_printf(&buf, "%s/%s.%s.%ld.log", r->o->results_dir, t->name, role->name, replica);
	*log_out = pg_buf_detach(&buf);
	*cmd_out = pg_xstrdup(display.ptr);
	pg_buf_printf(&header, "$ %s\n", display.ptr);
	say(r, "  %s.%ld: %s\n  %s.%ld log: %s\n", role->name, replica, display.ptr, role->name,
	    replica, *log_out);
	struct pg_proc_spec spec = {
		argv.v, &env, *log_out, header.ptr, t->server.stop_timeout, r->redact.values.v
	};
	if ((ret = pg_proc_start(proc, &spec, &err)))
		fail(oc, "error", "%s.%ld: %s", role->name, replica, err.msg);
done:
	pg_kvlist_release(&env);
	pg_strv_release(&argv);
	pg_buf_release(&display);
	pg_buf_release(&header);
	pg_buf_release(&buf);
	return ret;
}

/* Wait until proc serves its ready path at port; on failure oc says why,
 * with the tail of its log. */
static int role_ready(struct runner *r, const struct pg_test *t, const struct pg_role_spec *role,
		      const char *label, const char *port, struct pg_proc *proc, const char *log,
		      struct outcome *oc)
{
	struct pg_buf url = PG_BUF_INIT, base = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_ready_opts ro;
	double waited = 0;
	int ret;

	pg_buf_printf(&base, "http://127.0.0.1:%s", port);
	role_ready_opts(&ro, &url, base.ptr, t, role, proc);
	ret = pg_ready_wait(&ro, &waited, &err);
	if (ret == PG_ECANCEL) {
		fail(oc, "cancelled", "cancelled while %s was starting", label);
	} else if (ret) {
		fail(oc, "error", "%s: %s", label, err.msg);
		add_tail(&oc->error, log, proc);
	} else {
		say(r, "  %s ready in %.1fs\n", label, waited);
	}
	pg_buf_release(&url);
	pg_buf_release(&base);
	return ret;
}

/*
 * Start a deployment: a port for every replica of every role (so any
 * command can name any role's addresses), the workers all at once, each
 * waited for in turn, then the front role, the load generator's address.
 */
static int start_deployment(struct runner *r, const struct pg_test *t, struct outcome *oc)
{
	const struct pg_server_spec *sv = &t->server;
	struct pg_kvlist vars = { 0 };
	struct pg_error err = PG_ERROR_INIT;
	struct pg_buf urls = PG_BUF_INIT, ports = PG_BUF_INIT, key = PG_BUF_INIT;
	char(*port)[16];
	size_t n = 0, k = 0;
	const struct pg_role_spec *front = &sv->roles[sv->n_roles - 1];
	double t0 = pg_monotonic();
	int ret = 0;

	for (size_t i = 0; i < sv->n_roles; i++)
		n += (size_t)sv->roles[i].replicas;
	port = pg_xcalloc(n, sizeof(*port));
	/* all at once: ports drawn one by one can repeat */
	if ((ret = pg_free_ports(n, port, &err))) {
		fail(oc, "error", "%s", err.msg);
		goto done;
	}
	for (size_t i = 0; i < sv->n_roles; i++) {
		pg_buf_reset(&urls);
		pg_buf_reset(&ports);
		for (long j = 0; j < sv->roles[i].replicas; j++, k++) {
			pg_buf_printf(&urls, "%shttp://127.0.0.1:%s", j ? "," : "", port[k]);
			pg_buf_printf(&ports, "%s%s", j ? "," : "", port[k]);
		}
		pg_buf_reset(&key);
		pg_buf_printf(&key, "%s_urls", sv->roles[i].name);
		pg_kvlist_set(&vars, key.ptr, urls.ptr);
		pg_buf_reset(&key);
		pg_buf_printf(&key, "%s_ports", sv->roles[i].name);
		pg_kvlist_set(&vars, key.ptr, ports.ptr);
	}
	pg_buf_reset(&key);
	pg_deployment_shape(&key, sv);
	say(r, "  deployment: %s, then %s\n", key.ptr, front->name);

	r->n_workers = n - 1;
	r->workers = pg_xcalloc(r->n_workers ? r->n_workers : 1, sizeof(*r->workers));
	k = 0;
	for (size_t i = 0; i + 1 < sv->n_roles; i++) {
		for (long j = 0; j < sv->roles[i].replicas; j++, k++) {
			struct worker *w = &r->workers[k];
			struct pg_buf label = PG_BUF_INIT;
			char *cmd = NULL;

			w->role = &sv->roles[i];
			w->replica = j;
			w->proc = (struct pg_proc)PG_PROC_INIT;
			pg_buf_printf(&label, "%s.%ld", sv->roles[i].name, j);
			w->label = pg_buf_detach(&label);
			ret = start_role(r, t, w->role, j, port[k], &vars, &w->proc, &w->log, &cmd,
					 oc);
			w->cmd = cmd;
			if (ret)
				goto done;
			w->running = true;
		}
	}
	k = 0;
	for (size_t i = 0; i < r->n_workers; i++) {
		struct worker *w = &r->workers[i];
		if ((ret = role_ready(r, t, w->role, w->label, port[i], &w->proc, w->log, oc)))
			goto done;
	}
	/* the front role last: it forwards to workers that serve */
	memcpy(r->port, port[n - 1], sizeof(r->port));
	pg_buf_reset(&urls);
	pg_buf_printf(&urls, "http://127.0.0.1:%s", r->port);
	r->base_url = pg_buf_detach(&urls);
	if ((ret = start_role(r, t, front, 0, r->port, &vars, &r->server, &r->server_log,
			      &r->server_cmd, oc)))
		goto done;
	r->server_running = true;
	pg_buf_reset(&key);
	pg_buf_printf(&key, "%s.0", front->name);
	if ((ret = role_ready(r, t, front, key.ptr, r->port, &r->server, r->server_log, oc)))
		goto done;
	r->startup = pg_monotonic() - t0;
	say(r, "  deployment ready in %.1fs\n", r->startup);
done:
	free(port);
	pg_kvlist_release(&vars);
	pg_buf_release(&urls);
	pg_buf_release(&ports);
	pg_buf_release(&key);
	return ret;
}

/* Stop every worker: SIGTERM to all at once, a shared grace for their
 * leaders to exit, then each group stopped (what is left of it gets
 * what remains of the grace): the grace periods overlap instead of adding
 * up, and no server gets a second SIGTERM while it is exiting. */
static void stop_workers(struct runner *r)
{
	struct pg_error err = PG_ERROR_INIT;
	struct pg_buf how = PG_BUF_INIT;
	double t0 = pg_monotonic();
	double grace = r->n_workers ? grace_for(r->test->server.stop_timeout) : 0;
	bool *was_running = pg_xcalloc(r->n_workers + 1, sizeof(bool));

	for (size_t i = 0; i < r->n_workers; i++) {
		struct worker *w = &r->workers[i];
		was_running[i] = w->running && !pg_proc_exited(&w->proc);
		if (was_running[i])
			kill(-w->proc.pid, SIGTERM);
	}
	for (size_t i = 0; i < r->n_workers; i++) {
		struct worker *w = &r->workers[i];
		double left = grace - (pg_monotonic() - t0);
		if (was_running[i])
			pg_proc_wait(&w->proc, left > 0 ? left : 0, NULL);
	}
	for (size_t i = 0; i < r->n_workers; i++) {
		struct worker *w = &r->workers[i];
		double left = grace - (pg_monotonic() - t0);
		if (w->running) {
			pg_error_clear(&err);
			if (pg_proc_stop(&w->proc, left > 0 ? left : 0, &err))
				say(r, "perfgate: warning: %s\n", err.msg);
			pg_buf_reset(&how);
			pg_proc_describe(&how, w->proc.status);
			if (was_running[i])
				say(r, "  %s stopped in %.1fs: %s\n", w->label, pg_monotonic() - t0,
				    how.ptr);
			pg_proc_release(&w->proc);
		}
		free(w->label);
		free(w->log);
		free(w->cmd);
	}
	free(was_running);
	free(r->workers);
	r->workers = NULL;
	r->n_workers = 0;
	pg_buf_release(&how);
}

/* Start the test's server (or adopt its remote endpoint) and wait until it
 * serves. On failure oc says why. */
static int start_server(struct runner *r, const struct pg_test *t, struct outcome *oc)
{
	struct pg_strv argv = PG_STRV_INIT;
	struct pg_buf display = PG_BUF_INIT, header = PG_BUF_INIT, url = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_ready_opts ro;
	struct pg_point_vars v;
	int ret = 0;

	r->startup = NAN;
	if (t->server.n_roles) {
		return start_deployment(r, t, oc);
	} else if (t->server.remote) {
		size_t len = strlen(t->server.remote);
		while (len && t->server.remote[len - 1] == '/')
			len--;
		r->base_url = pg_xstrndup(t->server.remote, len);
		/* the URL as recorded: its password and secret parameters
		 * hidden (the client still uses it whole) */
		pg_buf_printf(&url, "Using Remote Server %s", r->base_url);
		pg_redact(&r->redact, &display, url.ptr);
		pg_buf_reset(&url);
		r->server_cmd = pg_buf_detach(&display);
		say(r, "  server: remote %s\n", r->base_url);
	} else if (t->server.command) {
		if ((ret = free_port(r->port, &err))) {
			fail(oc, "error", "%s", err.msg);
			goto done;
		}
		pg_buf_printf(&url, "http://127.0.0.1:%s", r->port);
		r->base_url = pg_buf_detach(&url);
		memset(&v, 0, sizeof(v));
		v.test = t;
		v.port = r->port;
		v.host = "127.0.0.1";
		v.base_url = r->base_url;
		v.results_dir = r->o->results_dir;
		if ((ret = render(r, t->server.command, t->server.shell, &v, &t->server.env, &argv,
				  &display, &err))) {
			fail(oc, "error", "server command: %s", err.msg);
			goto done;
		}
		r->server_cmd = pg_xstrdup(display.ptr);
		pg_buf_printf(&url, "%s/%s.server.log", r->o->results_dir, t->name);
		r->server_log = pg_buf_detach(&url);
		pg_buf_printf(&header, "$ %s\n", r->server_cmd);
		say(r, "  server: %s\n  server log: %s\n", r->server_cmd, r->server_log);
		struct pg_proc_spec spec = {
			argv.v,     &t->server.env,         r->server_log,
			header.ptr, t->server.stop_timeout, r->redact.values.v
		};
		if ((ret = pg_proc_start(&r->server, &spec, &err))) {
			fail(oc, "error", "server: %s", err.msg);
			goto done;
		}
		r->server_running = true;
	} else {
		goto done; /* an external command that needs no server */
	}

	ready_opts(&ro, &url, r->base_url, t, r->server_running ? &r->server : NULL);
	ret = pg_ready_wait(&ro, &r->startup, &err);
	if (ret == PG_ECANCEL) {
		fail(oc, "cancelled", "cancelled while the server was starting");
	} else if (ret) {
		fail(oc, "error", "%s", err.msg);
		if (r->server_log)
			add_tail(&oc->error, r->server_log, &r->server);
	} else {
		say(r, "  server ready in %.1fs\n", r->startup);
	}
done:
	pg_strv_release(&argv);
	pg_buf_release(&display);
	pg_buf_release(&header);
	pg_buf_release(&url);
	return ret;
}

static void stop_server(struct runner *r)
{
	struct pg_error err = PG_ERROR_INIT;
	struct pg_buf how = PG_BUF_INIT;
	bool was_running = r->server_running && !r->server.exited;

	if (r->server_running) {
		double t0 = pg_monotonic();
		if (pg_proc_stop(&r->server, grace_for(r->test->server.stop_timeout), &err))
			say(r, "perfgate: warning: %s\n", err.msg);
		pg_proc_describe(&how, r->server.status);
		if (was_running && r->test->server.n_roles)
			say(r, "  %s.0 stopped in %.1fs: %s\n",
			    r->test->server.roles[r->test->server.n_roles - 1].name,
			    pg_monotonic() - t0, how.ptr);
		else if (was_running)
			say(r, "  server stopped in %.1fs: %s\n", pg_monotonic() - t0, how.ptr);
		pg_proc_release(&r->server);
	}
	stop_workers(r);
	r->server = (struct pg_proc)PG_PROC_INIT;
	r->server_running = false;
	r->server_death_told = false;
	free(r->server_log);
	free(r->server_cmd);
	free(r->base_url);
	r->server_log = r->server_cmd = r->base_url = NULL;
	r->port[0] = '\0';
	r->startup = NAN;
	pg_buf_release(&how);
}

/* If the server died, say so (with its log tail); when is "during the
 * point" or "before the point". */
static bool server_died(struct runner *r, struct outcome *oc, const char *when)
{
	struct pg_buf how = PG_BUF_INIT;
	struct worker *w = dead_worker(r);

	if (w) {
		pg_proc_describe(&how, w->proc.status);
		fail(oc, "error", "%s %s %s", w->label, how.ptr, when);
		if (!r->server_death_told)
			add_tail(&oc->error, w->log, &w->proc);
		r->server_death_told = true;
		pg_buf_release(&how);
		return true;
	}
	if (!r->server_running || !pg_proc_exited(&r->server))
		return false;
	pg_proc_describe(&how, r->server.status);
	fail(oc, "error", "server %s %s", how.ptr, when);
	/* the first point to see it carries the log tail */
	if (!r->server_death_told)
		add_tail(&oc->error, r->server_log, &r->server);
	r->server_death_told = true;
	pg_buf_release(&how);
	return true;
}

/* ---- measuring -------------------------------------------------------- */

/* Nothing the point measured succeeded: the numbers describe nothing.
 * Serving says so with completed == 0, throughput with num_requests == 0,
 * latency with no latencies but failed iterations. */
static bool all_failed(const json_t *res, struct pg_buf *why)
{
	json_t *completed = json_object_get(res, "completed");
	json_t *failed = json_object_get(res, "failed");
	json_t *num_requests = json_object_get(res, "num_requests");
	json_t *latencies = json_object_get(res, "latencies");
	json_t *failed_iters = json_object_get(res, "failed_iterations");
	json_t *samples = json_object_get(res, "error_samples");
	const char *key;
	json_t *v;

	if (json_is_integer(completed) && json_integer_value(completed) == 0 &&
	    json_integer_value(failed) > 0)
		pg_buf_printf(why, "all %lld requests failed",
			      (long long)json_integer_value(failed));
	else if (json_is_integer(num_requests) && json_integer_value(num_requests) == 0)
		pg_buf_puts(why, "all requests failed");
	else if (json_is_array(latencies) && json_array_size(latencies) == 0 &&
		 json_integer_value(failed_iters) > 0)
		pg_buf_printf(why, "all %lld iterations failed",
			      (long long)json_integer_value(failed_iters));
	else
		return false;
	json_object_foreach(samples, key, v)
	{
		if (json_is_string(v)) {
			pg_buf_printf(why, " (%s: %s)", key, json_string_value(v));
			break;
		}
	}
	return true;
}

/* One native run of the point into *out; or, with warmup_requests, its
 * warm-up, reported in *warmup (*out stays NULL). */
static int run_native_once(struct runner *r, const struct pg_point *pt, json_t **out,
			   struct outcome *oc, size_t warmup_requests,
			   struct pg_warmup_report *warmup)
{
	pg_point_fn native = r->o->native ? r->o->native : pg_runner_native;
	struct pg_point_io io;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_buf why = PG_BUF_INIT;
	int rc;

	memset(&io, 0, sizeof(io));
	io.base_url = r->base_url;
	io.api_key = api_key(pt->test);
	io.stop = &point_stop;
	io.progress = on_progress;
	io.progress_ctx = r;
	io.save_detailed = r->o->save_detailed;
	io.warmup_requests = warmup_requests;
	io.warmup = warmup;
	point_stop = pg_run_cancelled;
	r->last_print = r->last_check = pg_monotonic();

	*out = NULL;
	rc = native(pt, &io, out, &err);
	clear_bar(r);
	if (pg_run_cancelled) {
		fail(oc, "cancelled", "cancelled by signal %d", (int)pg_run_cancelled);
		rc = PG_ECANCEL;
	} else if (server_died(r, oc, "during the point")) {
		rc = PG_EINFRA;
	} else if (rc) {
		fail(oc, "error", "%s", err.msg[0] ? err.msg : "the load generator failed");
	} else if (warmup_requests) {
		json_decref(*out); /* a stand-in client's answer: a warm-up has none */
		*out = NULL;
	} else if (!json_is_object(*out)) {
		fail(oc, "error", "the load generator returned no result");
		rc = PG_ERR;
	} else if (all_failed(*out, &why)) {
		fail(oc, "error", "%s", why.ptr);
		rc = PG_EINFRA;
	}
	pg_buf_release(&why);
	return rc;
}

static int run_command_once(struct runner *r, const struct pg_point *pt, int repeat, json_t **out,
			    struct outcome *oc)
{
	const struct pg_test *t = pt->test;
	struct pg_strv argv = PG_STRV_INIT;
	struct pg_buf display = PG_BUF_INIT, log = PG_BUF_INIT, result = PG_BUF_INIT;
	struct pg_buf header = PG_BUF_INIT, how = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_proc proc = PG_PROC_INIT;
	double interval = r->o->progress_interval > 0 ? r->o->progress_interval : 5;
	struct pg_point_vars v;
	struct pg_result_set imported = PG_RESULT_SET_INIT;
	json_t *json = NULL;
	int rc = 0;

	*out = NULL;
	pg_buf_printf(&result, "%s/%s.json", r->tmpdir, pt->name);
	unlink(result.ptr);
	memset(&v, 0, sizeof(v));
	v.test = t;
	v.point = pt;
	v.port = r->port[0] ? r->port : NULL;
	v.host = r->port[0] ? "127.0.0.1" : NULL;
	v.base_url = r->base_url;
	v.result = result.ptr;
	v.results_dir = r->o->results_dir;
	if ((rc = render(r, t->command, t->command_shell, &v, &t->command_env, &argv, &display,
			 &err))) {
		fail(oc, "error", "command: %s", err.msg);
		goto done;
	}
	free(oc->client_command);
	oc->client_command = pg_xstrdup(display.ptr);
	/* one log per run: <point>.command.log, then <point>.command.2.log ... */
	if (repeat < 0) /* the warm-up run */
		pg_buf_printf(&log, "%s/%s.command.warmup.log", r->o->results_dir, pt->name);
	else if (repeat == 0)
		pg_buf_printf(&log, "%s/%s.command.log", r->o->results_dir, pt->name);
	else
		pg_buf_printf(&log, "%s/%s.command.%d.log", r->o->results_dir, pt->name,
			      repeat + 1);
	pg_buf_printf(&header, "$ %s\n", display.ptr);
	say(r, "  command: %s\n  command log: %s\n", display.ptr, log.ptr);

	struct pg_proc_spec spec = { argv.v,     &t->command_env, log.ptr,
				     header.ptr, CANCEL_GRACE,    r->redact.values.v };
	if ((rc = pg_proc_start(&proc, &spec, &err))) {
		fail(oc, "error", "command: %s", err.msg);
		goto done;
	}
	point_stop = pg_run_cancelled;
	for (;;) {
		double left = t->command_timeout - pg_proc_age(&proc);
		if (pg_proc_wait(&proc, left < interval ? left : interval, &point_stop))
			break;
		if (pg_run_cancelled) {
			fail(oc, "cancelled", "cancelled by signal %d", (int)pg_run_cancelled);
			rc = PG_ECANCEL;
			break;
		}
		if (server_died(r, oc, "during the point")) {
			rc = PG_EINFRA;
			break;
		}
		if (pg_proc_age(&proc) >= t->command_timeout) {
			fail(oc, "error", "command did not finish within %gs", t->command_timeout);
			add_tail(&oc->error, log.ptr, &proc);
			rc = PG_EINFRA;
			break;
		}
		say(r, "  running (%.0fs)\n", pg_proc_age(&proc));
	}
	/* also whatever the command left running in its group */
	if (pg_proc_stop(&proc, grace_for(CANCEL_GRACE), &err))
		say(r, "perfgate: warning: %s\n", err.msg);
	pg_proc_release(&proc);
	if (rc)
		goto done;
	if (!WIFEXITED(proc.status) || WEXITSTATUS(proc.status) != 0) {
		pg_proc_describe(&how, proc.status);
		fail(oc, "error", "command %s", how.ptr);
		add_tail(&oc->error, log.ptr, &proc);
		rc = PG_EINFRA;
		goto done;
	}
	/* the importer reads every shape vllm bench writes (and other tools':
	 * the old "request_goodput:" key, llm-d records) */
	rc = pg_import_file(&imported, result.ptr, NULL, &err);
	if (rc == PG_ENOTFOUND) {
		fail(oc, "error", "command exited 0 but did not write its result ({result})");
		goto import_failed;
	}
	if (rc) {
		fail(oc, "error", "command result: %s", err.msg);
		goto import_failed;
	}
	if (imported.n != 1) {
		fail(oc, "error", "command wrote %zu results, expected one", imported.n);
		goto import_failed;
	}
	if (imported.items[0].kind != t->kind) {
		fail(oc, "error", "command wrote a %s result, not a %s result",
		     pg_suite_kind_name(imported.items[0].kind), pg_suite_kind_name(t->kind));
		goto import_failed;
	}
	json = json_incref(imported.items[0].json);
	/* its perfgate object describes the temporary file: ours replaces it */
	json_object_del(json, "perfgate");
	*out = json;
	json = NULL;
	goto done;
import_failed:
	rc = PG_EINFRA;
done:
	pg_result_set_release(&imported);
	unlink(result.ptr);
	json_decref(json);
	pg_strv_release(&argv);
	pg_buf_release(&display);
	pg_buf_release(&log);
	pg_buf_release(&result);
	pg_buf_release(&header);
	pg_buf_release(&how);
	return rc;
}

/* Measure a point, all its repeats, into oc. */
/* ---- telemetry -------------------------------------------------------- */

static bool local_test(const struct pg_test *t);

/* A note (a missing tool or endpoint) is shown once per run, or once for
 * the runs that share o->told (an A/B step's blocks). */
static void tell_once(struct runner *r, struct outcome *oc, const char *line)
{
	struct pg_strv *told = r->o->told ? r->o->told : &r->told;

	for (size_t i = 0; i < told->n; i++)
		if (!strcmp(told->v[i], line))
			return;
	pg_strv_push(told, line);
	pg_strv_push(&oc->telemetry_lines, line);
}

/* Sample the engine and the GPUs while the point runs (telemetry/). */
static void telemetry_start(struct runner *r, const struct pg_point *pt, struct outcome *oc)
{
	const struct pg_test *t = pt->test;
	struct pg_sampler_opts so;
	struct pg_buf url = PG_BUF_INIT;
	int gpus[64];
	const char *visible;
	const char *off = getenv("PERFGATE_TELEMETRY");

	if (r->o->no_telemetry || (off && !strcmp(off, "0")))
		return;
	memset(&so, 0, sizeof(so));
	/* local servers only: a remote one's GPUs are not this machine's */
	if (!r->gpu_reader_tried && local_test(t)) {
		char note[512] = "";
		r->gpu_reader_tried = true;
		r->gpu_reader = pg_gpu_reader_open(note, sizeof(note));
		if (!r->gpu_reader)
			tell_once(r, oc, note);
	}
	if (r->base_url) {
		pg_buf_printf(&url, "%s/metrics", r->base_url);
		so.metrics_url = url.ptr;
		so.api_key = api_key(t);
	}
	if (local_test(t) && r->gpu_reader) {
		visible = pg_kvlist_get(&t->server.env, "CUDA_VISIBLE_DEVICES");
		if (!visible)
			visible = pg_kvlist_get(&t->server.env, "HIP_VISIBLE_DEVICES");
		if (!visible)
			visible = getenv("CUDA_VISIBLE_DEVICES");
		so.gpu = r->gpu_reader;
		/* a deployment's workers use their replicas x tp GPUs */
		so.n_gpus = pg_gpu_set(gpus, 64, visible,
				       t->server.n_roles ? pg_deployment_gpus(&t->server) : t->tp,
				       r->o->gpu->detected);
		so.gpus = gpus;
		so.server_pgid = r->server_running ? r->server.pid : 0;
	}
	if (!so.metrics_url && !so.gpu) {
		pg_buf_release(&url);
		return;
	}
	so.interval = r->o->telemetry_interval;
	r->sampler = pg_sampler_start(&so);
	pg_buf_release(&url);
}

/* The series into the result's summary, its sidecar and its chart. */
static void telemetry_stop(struct runner *r, const struct pg_point *pt, struct outcome *oc)
{
	struct pg_series s;
	struct pg_buf path = PG_BUF_INIT, text = PG_BUF_INIT, title = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;

	if (!r->sampler)
		return;
	pg_sampler_stop(r->sampler, &s);
	r->sampler = NULL;
	for (size_t i = 0; i < s.notes.n; i++)
		tell_once(r, oc, s.notes.v[i]);
	json_decref(oc->telemetry);
	oc->telemetry = pg_telemetry_summary(&s);
	{
		const json_t *flags = json_object_get(oc->telemetry, "flags");
		size_t i;
		const json_t *f;
		json_array_foreach(flags, i, f)
		{
			pg_strv_push(&oc->telemetry_lines, json_string_value(f));
		}
		/* an energy counter that reset: the point has no energy, and
		 * says why */
		if (pg_json_path_str(oc->telemetry, "gpu.energy.dropped"))
			pg_strv_push(&oc->telemetry_lines,
				     pg_json_path_str(oc->telemetry, "gpu.energy.dropped"));
	}
	pg_telemetry_jsonl(&text, &s);
	pg_buf_printf(&path, "%s/%s.telemetry.jsonl", r->o->results_dir, pt->name);
	if (pg_file_write_atomic(path.ptr, text.ptr, text.len, &err))
		say(r, "perfgate: warning: %s\n", err.msg);
	pg_buf_reset(&text);
	pg_buf_reset(&path);
	pg_buf_printf(&title, "%s: timeline", pt->name);
	pg_telemetry_timeline(&text, &s, title.ptr);
	if (text.len) {
		pg_buf_printf(&path, "%s/%s.timeline.svg", r->o->results_dir, pt->name);
		if (pg_file_write_atomic(path.ptr, text.ptr, text.len, &err))
			say(r, "perfgate: warning: %s\n", err.msg);
	}
	pg_series_release(&s);
	pg_buf_release(&path);
	pg_buf_release(&text);
	pg_buf_release(&title);
}

/* ---- startup tests ------------------------------------------------------ */

/* The one request timed after ready: max_tokens 1, to the test's endpoint. */
static void first_request_body(struct pg_buf *out, const struct pg_test *t)
{
	const char *model = t->client.served_model ? t->client.served_model : t->model;
	bool chat = t->client.endpoint && strstr(t->client.endpoint, "chat");
	json_t *body = json_object();

	json_object_set_new(body, "model", json_string(model ? model : ""));
	if (chat)
		json_object_set_new(body, "messages",
				    json_pack("[{s:s, s:s}]", "role", "user", "content", "Hello"));
	else
		json_object_set_new(body, "prompt", json_string("Hello"));
	json_object_set_new(body, "max_tokens", json_integer(1));
	json_object_set_new(body, "stream", json_false());
	pg_json_write(out, body, 0);
	json_decref(body);
}

/*
 * One start (runner/startup_io.h): a fresh server with its caches in
 * cache_dir, timed from the spawn to ready and, with first_token, to the
 * answer of one request; the whole group stopped whatever happened. 0 or
 * the failure in oc.
 */
static int one_start(struct runner *r, const struct pg_test *t, long number, const char *cache_dir,
		     double *ready_s, double *first_s, struct outcome *oc)
{
	struct pg_strv argv = PG_STRV_INIT;
	struct pg_buf display = PG_BUF_INIT, header = PG_BUF_INIT, url = PG_BUF_INIT;
	struct pg_buf base = PG_BUF_INIT, log = PG_BUF_INIT, dir = PG_BUF_INIT;
	struct pg_buf body = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_kvlist env = { 0 };
	struct pg_proc proc = PG_PROC_INIT;
	struct pg_ready_opts ro;
	struct pg_point_vars v;
	char port[16], num[24];
	int ret;

	*ready_s = *first_s = NAN;
	for (size_t i = 0; i < t->server.env.n; i++)
		pg_kvlist_set(&env, t->server.env.items[i].key, t->server.env.items[i].value);
	pg_kvlist_set(&env, "VLLM_CACHE_ROOT", cache_dir);
	pg_buf_printf(&dir, "%s/inductor", cache_dir);
	pg_kvlist_set(&env, "TORCHINDUCTOR_CACHE_DIR", dir.ptr);
	pg_buf_reset(&dir);
	pg_buf_printf(&dir, "%s/triton", cache_dir);
	pg_kvlist_set(&env, "TRITON_CACHE_DIR", dir.ptr);

	if ((ret = free_port(port, &err))) {
		fail(oc, "error", "%s", err.msg);
		goto done;
	}
	pg_buf_printf(&base, "http://127.0.0.1:%s", port);
	snprintf(num, sizeof(num), "%ld", number);
	memset(&v, 0, sizeof(v));
	v.test = t;
	v.port = port;
	v.host = "127.0.0.1";
	v.base_url = base.ptr;
	v.results_dir = r->o->results_dir;
	v.start = num;
	/* shown and recorded with the test's own environment: the cache
	 * directories differ from start to start */
	if ((ret = render(r, t->server.command, t->server.shell, &v, &t->server.env, &argv,
			  &display, &err))) {
		fail(oc, "error", "server command: %s", err.msg);
		goto done;
	}
	if (!r->server_cmd)
		r->server_cmd = pg_xstrdup(display.ptr);
	/* each start truncates it: the log holds the last start, the one
	 * that failed when one did */
	pg_buf_printf(&log, "%s/%s.server.log", r->o->results_dir, t->name);
	if (!r->server_log) {
		r->server_log = pg_xstrdup(log.ptr);
		say(r, "  server: %s\n  server log: %s (the last start's)\n", display.ptr, log.ptr);
	}
	pg_buf_printf(&header, "$ %s\n", display.ptr);
	struct pg_proc_spec spec = {
		argv.v, &env, log.ptr, header.ptr, t->server.stop_timeout, r->redact.values.v
	};
	if ((ret = pg_proc_start(&proc, &spec, &err))) {
		fail(oc, "error", "server: %s", err.msg);
		goto done;
	}

	ready_opts(&ro, &url, base.ptr, t, &proc);
	ret = pg_ready_wait(&ro, ready_s, &err);
	if (!ret && t->first_token) {
		pg_buf_reset(&url);
		pg_buf_printf(&url, "%s%s", base.ptr,
			      t->client.endpoint ? t->client.endpoint : "/v1/completions");
		first_request_body(&body, t);
		ret = pg_startup_first_answer(url.ptr, body.ptr, &t->client.headers, api_key(t),
					      t->client.timeout, &pg_run_cancelled, &err);
		*first_s = pg_monotonic() - proc.started;
	}
	if (ret == PG_ECANCEL) {
		fail(oc, "cancelled", "cancelled during start %ld", number);
	} else if (ret) {
		fail(oc, "error", "start %ld: %s", number, err.msg);
		add_tail(&oc->error, log.ptr, &proc);
	}
	{
		struct pg_error stop_err = PG_ERROR_INIT;
		if (pg_proc_stop(&proc, grace_for(t->server.stop_timeout), &stop_err)) {
			say(r, "perfgate: warning: %s\n", stop_err.msg);
			if (!ret) {
				fail(oc, "error", "start %ld: %s", number, stop_err.msg);
				ret = PG_EINFRA;
			}
		}
		pg_proc_release(&proc);
	}
done:
	pg_kvlist_release(&env);
	pg_strv_release(&argv);
	pg_buf_release(&display);
	pg_buf_release(&header);
	pg_buf_release(&url);
	pg_buf_release(&base);
	pg_buf_release(&log);
	pg_buf_release(&dir);
	pg_buf_release(&body);
	return ret;
}

/*
 * A startup test's point: cold_starts starts, each with empty caches of
 * its own, then warmup_starts unmeasured and warm_starts measured starts
 * sharing one cache directory; vLLM's startup keys (runner/startup.h).
 */
static int run_startup_once(struct runner *r, const struct pg_point *pt, json_t **out,
			    struct outcome *oc)
{
	const struct pg_test *t = pt->test;
	long cold = t->cold_starts, warmup = t->warmup_starts, warm = t->warm_starts;
	long total = cold + warmup + warm;
	double *ready = pg_xcalloc((size_t)total + 1, sizeof(*ready));
	double *first = pg_xcalloc((size_t)total + 1, sizeof(*first));
	struct pg_buf root = PG_BUF_INIT, dir = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;
	int ret = 0;

	*out = NULL;
	pg_buf_printf(&root, "%s/%s.caches", r->tmpdir, pt->name);
	pg_startup_remove_tree(root.ptr);
	for (long i = 0; i < total && !ret; i++) {
		const char *phase = i < cold ? "cold" : i < cold + warmup ? "warm-up" : "warm";

		pg_buf_reset(&dir);
		if (i < cold)
			pg_buf_printf(&dir, "%s/cold-%ld", root.ptr, i + 1);
		else
			pg_buf_printf(&dir, "%s/warm", root.ptr);
		if ((ret = pg_mkdir_p(dir.ptr, &err))) {
			fail(oc, "error", "%s", err.msg);
			break;
		}
		ret = one_start(r, t, i + 1, dir.ptr, &ready[i], &first[i], oc);
		if (!ret) {
			if (t->first_token)
				say(r,
				    "  start %ld/%ld (%s): ready in %.3fs, first answer at %.3fs\n",
				    i + 1, total, phase, ready[i], first[i]);
			else
				say(r, "  start %ld/%ld (%s): ready in %.3fs\n", i + 1, total,
				    phase, ready[i]);
		}
		if (i < cold)
			pg_startup_remove_tree(dir.ptr);
		if (!ret && pg_run_cancelled) {
			fail(oc, "cancelled", "cancelled after start %ld", i + 1);
			ret = PG_ECANCEL;
		}
	}
	pg_startup_remove_tree(root.ptr);
	if (!ret) {
		struct pg_startup_times ct = { ready, (size_t)cold };
		struct pg_startup_times wt = { ready + cold + warmup, (size_t)warm };
		struct pg_startup_times cf = { first, (size_t)cold };
		struct pg_startup_times wf = { first + cold + warmup, (size_t)warm };

		*out = json_object();
		pg_startup_put(*out, "cold", "startup", &ct);
		pg_startup_put(*out, "warm", "startup", &wt);
		if (t->first_token) {
			pg_startup_put(*out, "cold", "first_token", &cf);
			pg_startup_put(*out, "warm", "first_token", &wf);
		}
	}
	free(ready);
	free(first);
	pg_buf_release(&root);
	pg_buf_release(&dir);
	return ret;
}

/* Run 0-based repeat i of the point (-1: the warm-up run). */
static int run_once(struct runner *r, const struct pg_point *pt, long i, json_t **out,
		    struct outcome *oc)
{
	if (pt->test->command)
		return run_command_once(r, pt, (int)i, out, oc);
	if (pt->test->kind == PG_SUITE_STARTUP)
		return run_startup_once(r, pt, out, oc);
	return run_native_once(r, pt, out, oc, 0, NULL);
}

/* The point's warm-up requests as perfgate.warmup (docs/results.md). */
static json_t *warmup_requests_json(const struct pg_warmup_report *w)
{
	json_t *o = json_pack("{s:s, s:I, s:I, s:f}", "kind", "requests", "requests",
			      (json_int_t)w->requests, "failed", (json_int_t)w->failed, "seconds",
			      w->seconds);
	if (w->failed)
		json_object_set_new(o, "error", json_string(w->error));
	return o;
}

/* `warmup: repeat`: one whole run of the point, unmeasured. Its key
 * metrics go to the log and perfgate.warmup; its failure is the point's,
 * saying it was the warm-up. */
static int warm_up_run(struct runner *r, const struct pg_point *pt, struct outcome *oc)
{
	double t0 = pg_monotonic();
	json_t *out = NULL;
	int rc;

	say(r, "  warm-up run (unmeasured)\n");
	rc = run_once(r, pt, -1, &out, oc);
	if (rc) {
		struct pg_buf why = PG_BUF_INIT;
		pg_buf_printf(&why, "warm-up run: %s", oc->error.ptr);
		pg_buf_reset(&oc->error);
		pg_buf_add(&oc->error, why.ptr, why.len);
		pg_buf_release(&why);
		json_decref(out);
		return rc;
	}
	{
		struct pg_buf km = PG_BUF_INIT;
		pg_runfmt_key_metrics(&km, pt->test->kind, out);
		say(r, "    warm-up: %s\n", km.ptr);
		pg_buf_release(&km);
	}
	oc->warmup = json_pack("{s:s, s:f, s:o}", "kind", "repeat", "seconds", pg_monotonic() - t0,
			       "metrics", pg_repeats_metrics(out));
	json_decref(out);
	return 0;
}

/* `warmup: N`: N requests of the point's own (loadgen/loadgen_io.h
 * pg_loadgen_warm_up), said in the log and perfgate.warmup. */
static int warm_up_requests(struct runner *r, const struct pg_point *pt, struct outcome *oc,
			    long requests)
{
	struct pg_warmup_report w;
	json_t *out = NULL;
	int rc;

	memset(&w, 0, sizeof(w));
	rc = run_native_once(r, pt, &out, oc, (size_t)requests, &w);
	if (!w.requests)
		return rc;
	say(r, "  warm-up: %zu request%s, %.2f s, unmeasured", w.requests,
	    w.requests == 1 ? "" : "s", w.seconds);
	if (w.failed)
		say(r, "; %zu failed (%s)", w.failed, w.error);
	say(r, "\n");
	oc->warmup = warmup_requests_json(&w);
	return rc;
}

/* Leave a cold first run out of the point's median (results/cold.h) and
 * say so; the runs stay in perfgate.repeats. */
static void merge_runs(struct runner *r, const struct pg_point *pt, struct outcome *oc,
		       json_t *const *runs, size_t n)
{
	struct pg_cold cold;
	size_t skip;

	pg_cold_check(&cold, pt->test->kind, (const json_t *const *)runs, n);
	skip = cold.cold ? 1 : 0;
	oc->metrics = pg_repeats_median(runs + skip, n - skip);
	if (n > 1) {
		oc->repeats = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(oc->repeats, pg_repeats_metrics(runs[i]));
	}
	if (cold.cold) {
		struct pg_buf note = PG_BUF_INIT;
		pg_cold_note(&note, &cold);
		say(r, "  %s\n", note.ptr);
		pg_buf_release(&note);
		oc->cold = pg_cold_json(&cold);
	}
}

static void measure(struct runner *r, const struct pg_point *pt, struct outcome *oc)
{
	long n = pt->test->repeat > 0 ? pt->test->repeat : 1;
	json_t **runs = pg_xcalloc((size_t)n, sizeof(*runs));
	struct pg_warmup warm = pg_test_warmup(pt->test);
	long done = 0;

	/* the warm-up first, outside the telemetry's window: the point's
	 * counters are its measured runs' */
	if (pt->test->kind != PG_SUITE_STARTUP && warm.kind == PG_WARMUP_NONE)
		oc->warmup = json_pack("{s:s}", "kind", "none");
	if ((warm.kind == PG_WARMUP_REQUESTS && warm_up_requests(r, pt, oc, warm.requests)) ||
	    (warm.kind == PG_WARMUP_REPEAT && warm_up_run(r, pt, oc)))
		goto done;
	/* a startup test has no server between its starts to watch */
	if (pt->test->kind != PG_SUITE_STARTUP)
		telemetry_start(r, pt, oc);
	for (long i = 0; i < n; i++) {
		json_t *out = NULL;
		int rc;

		if (n > 1)
			say(r, "  run %ld/%ld\n", i + 1, n);
		rc = run_once(r, pt, i, &out, oc);
		if (rc) {
			/* keep what the failed run measured: its failure
			 * counts and error samples explain the error */
			if (out && !oc->metrics)
				oc->metrics = out;
			else
				json_decref(out);
			goto done;
		}
		runs[done++] = out;
		if (n > 1) {
			struct pg_buf km = PG_BUF_INIT;
			pg_runfmt_key_metrics(&km, pt->test->kind, out);
			say(r, "    %s\n", km.ptr);
			pg_buf_release(&km);
		}
	}
	merge_runs(r, pt, oc, runs, (size_t)done);
done:
	telemetry_stop(r, pt, oc);
	for (long i = 0; i < done; i++)
		json_decref(runs[i]);
	free(runs);
}

/* ---- the run ---------------------------------------------------------- */

static void announce(struct runner *r, size_t idx)
{
	struct pg_buf b = PG_BUF_INIT;
	pg_runfmt_point_group(&b, &r->plan->points[idx], idx, r->plan->n);
	say(r, "%s", b.ptr);
	pg_buf_release(&b);
}

static void show_telemetry(struct runner *r, const struct outcome *oc)
{
	for (size_t i = 0; i < oc->telemetry_lines.n; i++)
		say(r, "  telemetry: %s\n", oc->telemetry_lines.v[i]);
}

static void show_outcome(struct runner *r, const struct pg_point *pt, struct outcome *oc)
{
	if (!strcmp(oc->status, "ok")) {
		struct pg_buf km = PG_BUF_INIT;
		pg_runfmt_key_metrics(&km, pt->test->kind, oc->metrics);
		say(r, "  ok: %s\n", km.len ? km.ptr : "(no metrics)");
		pg_buf_reset(&km);
		pg_clientcheck_note(&km, pt->test->kind, oc->metrics);
		if (km.len)
			say(r, "  %s\n", km.ptr);
		pg_buf_release(&km);
		show_telemetry(r, oc);
		return;
	}
	show_telemetry(r, oc);
	say(r, "  %s: %.*s\n", oc->status, (int)strcspn(oc->error.ptr, "\n"), oc->error.ptr);
	if (strchr(oc->error.ptr, '\n'))
		say_block(r, strchr(oc->error.ptr, '\n') + 1, "    ");
	if (r->buildkite && !strcmp(oc->status, "error"))
		say(r, "^^^ +++\n"); /* open this group in the Buildkite log */
}

/* ---- the SLA search ---------------------------------------------------- */

/* A result's value, the first of keys present; NAN when none is. */
static double first_number(const json_t *res, const char *const *keys)
{
	for (; *keys; keys++) {
		json_t *v = json_object_get(res, *keys);
		if (json_is_number(v))
			return json_number_value(v);
	}
	return NAN;
}

/* Within the SLA: p99 TTFT and p99 TPOT (falling back as vLLM's driver
 * does: ITL for TPOT, then the means), of a point that ran. */
static bool sla_met(const struct pg_sla_search *s, const struct outcome *oc)
{
	static const char *const ttft[] = { "p99_ttft_ms", "mean_ttft_ms", NULL };
	static const char *const tpot[] = { "p99_tpot_ms", "p99_itl_ms", "mean_tpot_ms", NULL };
	double a, b;

	if (strcmp(oc->status, "ok") || !oc->metrics)
		return false;
	a = first_number(oc->metrics, ttft);
	b = first_number(oc->metrics, tpot);
	return a <= s->ttft_ms && b <= s->tpot_ms; /* NAN fails */
}

static json_t *conc_or_null(long c)
{
	return c > 0 ? json_integer(c) : json_null();
}

/*
 * After a rate's concurrency points: probe for the largest concurrency
 * within the SLA (runner/slasearch.h) on the same server, then write
 * <test>_qps_<q>_sla_summary.json as vLLM's driver does.
 */
static void sla_search(struct runner *r, const struct pg_test *t, double qps, const long *conc,
		       const bool *pass, size_t n)
{
	const struct pg_sla_search *s = &t->sla_search;
	struct pg_sla_walk w;
	struct pg_buf name = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;
	char q[32];
	json_t *sum;

	pg_sla_start(&w, s, conc, pass, n);
	pg_fmt_g(q, qps);
	say(r, "--- %s qps %s: SLA search (p99 TTFT <= %g ms, p99 TPOT <= %g ms)\n", t->name, q,
	    s->ttft_ms, s->tpot_ms);
	for (long c; !pg_run_cancelled && !r->stop_after_error && (c = pg_sla_next(&w)) > 0;) {
		char *pname = pg_point_name(t->name, qps, c, true);
		struct pg_point probe = { t, pname, qps, c };
		struct outcome oc;
		bool met;

		outcome_init(&oc);
		oc.probe = true;
		say(r, "  probe %ld of at most %ld: concurrency %ld (%s)\n", w.probes + 1,
		    s->max_probes, c, pname);
		if (!server_died(r, &oc, "before the probe"))
			measure(r, &probe, &oc);
		show_outcome(r, &probe, &oc);
		met = sla_met(s, &oc);
		say(r, "  SLA %s at concurrency %ld\n", met ? "met" : "missed", c);
		record(r, &probe, &oc);
		outcome_release(&oc);
		free(pname);
		pg_sla_feed(&w, c, met);
		if ((r->server_running && r->server.exited) || dead_worker(r))
			break;
	}
	say(r, "  largest concurrency within the SLA: %s%ld (first beyond it: %ld; %ld probe%s)\n",
	    w.last_pass ? "" : "none, ", w.last_pass, w.first_fail, w.probes,
	    w.probes == 1 ? "" : "s");

	sum = json_object();
	json_object_set_new(sum, "test_name", json_string(t->name));
	json_object_set_new(sum, "qps", isinf(qps) ? json_string("inf") : json_real(qps));
	json_object_set_new(sum, "sla_ttft_ms", json_real(s->ttft_ms));
	json_object_set_new(sum, "sla_tpot_ms", json_real(s->tpot_ms));
	json_object_set_new(sum, "static_last_pass", conc_or_null(w.static_last_pass));
	json_object_set_new(sum, "static_first_fail", conc_or_null(w.static_first_fail));
	json_object_set_new(sum, "final_last_pass", conc_or_null(w.last_pass));
	json_object_set_new(sum, "final_first_fail", conc_or_null(w.first_fail));
	json_object_set_new(sum, "probes", json_integer(w.probes));
	pg_buf_printf(&name, "%s/%s_qps_%s_sla_summary.json", r->o->results_dir, t->name, q);
	{
		struct pg_buf text = PG_BUF_INIT;
		pg_json_write(&text, sum, 4);
		pg_buf_putc(&text, '\n');
		if (pg_file_write_atomic(name.ptr, text.ptr, text.len, &err))
			say(r, "perfgate: warning: %s\n", err.msg);
		pg_buf_release(&text);
	}
	json_decref(sum);
	pg_buf_release(&name);
}

static bool local_test(const struct pg_test *t)
{
	return !t->server.remote;
}

/* Why a test cannot run here, or NULL. */
static void skip_reason(struct runner *r, const struct pg_test *t, struct pg_buf *why)
{
	int gpus = r->o->gpu->detected;

	if (local_test(t) && gpus > 0 && t->server.n_roles && pg_deployment_gpus(&t->server) > gpus)
		pg_buf_printf(why,
			      "the deployment's workers use %ld GPUs (replicas x tp), more "
			      "than the %d of this machine",
			      pg_deployment_gpus(&t->server), gpus);
	else if (local_test(t) && gpus > 0 && t->tp > gpus)
		pg_buf_printf(why, "tp %ld exceeds the %d GPU%s of this machine", t->tp, gpus,
			      gpus == 1 ? "" : "s");
}

static void run_test(struct runner *r, size_t first, size_t end)
{
	const struct pg_test *t = r->plan->points[first].test;
	struct pg_buf why = PG_BUF_INIT;
	struct outcome setup;
	bool ready;
	/* the current rate's concurrency points, judged for the SLA search */
	long *sla_conc = pg_xcalloc(end - first + 1, sizeof(*sla_conc));
	bool *sla_pass = pg_xcalloc(end - first + 1, sizeof(*sla_pass));
	size_t n_sla = 0;

	r->test = t;
	r->startup = NAN;
	outcome_init(&setup);
	announce(r, first);

	skip_reason(r, t, &why);
	if (why.len) {
		say(r, "  skipped: %s\n", why.ptr);
		for (size_t i = first; i < end; i++) {
			struct outcome oc;
			outcome_init(&oc);
			fail(&oc, "skipped", "%s", why.ptr);
			record(r, &r->plan->points[i], &oc);
			outcome_release(&oc);
		}
		goto done;
	}
	/* the command line's threshold wins over the suite's (server.gpu_idle_mib) */
	double idle_mib = r->o->gpu_idle_mib > 0 ? r->o->gpu_idle_mib : t->server.gpu_idle_mib;
	if (idle_mib > 0 && local_test(t)) {
		struct pg_error err = PG_ERROR_INIT;
		double waited = 0;
		double timeout = r->o->gpu_idle_timeout > 0 ? r->o->gpu_idle_timeout
							    : t->server.gpu_idle_timeout;
		int rc = pg_gpu_wait_idle(idle_mib, timeout, &pg_run_cancelled, &waited, &err);
		if (rc == PG_ECANCEL)
			fail(&setup, "cancelled", "%s", err.msg);
		else if (rc)
			fail(&setup, "error", "%s", err.msg);
		else if (waited >= 1)
			say(r, "  GPU memory free after %.1fs\n", waited);
	}
	/* a startup test starts its server itself, once per start */
	if (!strcmp(setup.status, "ok") && t->kind != PG_SUITE_STARTUP)
		start_server(r, t, &setup);
	ready = !strcmp(setup.status, "ok");

	for (size_t i = first; i < end; i++) {
		const struct pg_point *pt = &r->plan->points[i];
		struct outcome oc;

		if (pg_run_cancelled && strcmp(setup.status, "cancelled")) {
			/* the point in progress was recorded; these never started */
			for (; i < end; i++)
				report_add(r, &r->plan->points[i], false, "not run", NULL, NULL, 0);
			break;
		}
		outcome_init(&oc);
		if (i == first)
			oc.t_start = setup.t_start; /* the first point carries the startup */
		else
			announce(r, i);
		if (!ready) {
			/* every point of the test gets a row saying why */
			fail(&oc, setup.status, "%s", setup.error.ptr);
			if (i == first)
				show_outcome(r, pt, &oc);
			else
				say(r, "  %s: server not available (see %s)\n", oc.status,
				    r->plan->points[first].name);
		} else if (server_died(r, &oc, "before the point")) {
			show_outcome(r, pt, &oc);
		} else {
			measure(r, pt, &oc);
			show_outcome(r, pt, &oc);
		}
		if (t->sla_search.enabled) {
			sla_conc[n_sla] = pt->max_concurrency;
			sla_pass[n_sla++] = sla_met(&t->sla_search, &oc);
		}
		record(r, pt, &oc);
		outcome_release(&oc);
		/* the last point of this rate: the search, on the same server */
		if (t->sla_search.enabled && ready &&
		    (i + 1 == end || r->plan->points[i + 1].qps != pt->qps)) {
			if (!pg_run_cancelled && !r->stop_after_error)
				sla_search(r, t, pt->qps, sla_conc, sla_pass, n_sla);
			n_sla = 0;
		}
		if (!strcmp(setup.status, "cancelled")) {
			for (i++; i < end; i++)
				report_add(r, &r->plan->points[i], false, "not run", NULL, NULL, 0);
			break;
		}
		if (r->stop_after_error) {
			for (i++; i < end; i++)
				report_add(r, &r->plan->points[i], false, "not run", NULL, NULL, 0);
			break;
		}
	}
done:
	stop_server(r);
	outcome_release(&setup);
	pg_buf_release(&why);
	free(sla_conc);
	free(sla_pass);
}

static json_t *build_json(void)
{
	const char *url = getenv("BUILDKITE_BUILD_URL");
	const char *number = getenv("BUILDKITE_BUILD_NUMBER");
	json_t *b;

	if (!(url && *url) && !(number && *number))
		return json_null();
	b = json_object();
	json_object_set_new(b, "url", url && *url ? json_string(url) : json_null());
	json_object_set_new(b, "number", number && *number ? json_string(number) : json_null());
	return b;
}

static char *self_exe(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

	if (n <= 0)
		return pg_xstrdup("perfgate");
	buf[n] = '\0';
	return pg_xstrdup(buf);
}

static void manifest_init(struct runner *r)
{
	json_t *m = json_object(), *points = json_array();

	json_object_set_new(m, "version", json_string(PERFGATE_VERSION));
	json_object_set_new(m, "status", json_string("running"));
	json_object_set_new(m, "exit_code", json_null());
	json_object_set_new(m, "signal", json_null());
	json_object_set_new(m, "source",
			    r->suite->source ? json_string(r->suite->source) : json_null());
	json_object_set_new(m, "started_at", json_string(r->started_at));
	json_object_set_new(m, "ended_at", json_null());
	json_object_set_new(m, "host", json_string(r->host));
	json_object_set_new(m, "gpu", pg_gpu_info_json(r->o->gpu));
	json_object_set_new(m, "git", json_incref(r->git));
	json_object_set_new(m, "build", json_incref(r->build));
	for (size_t i = 0; i < r->plan->n; i++) {
		const struct pg_point *pt = &r->plan->points[i];
		json_t *p = json_object();
		json_object_set_new(p, "name", json_string(pt->name));
		if (pt->test->server.n_roles) {
			/* a deployment's point goes by its shape (results/identity.h):
			 * what compare and gate look the plan up by */
			json_t *res = json_pack("{s:{s:o}}", "perfgate", "params", params_json(pt));
			char *id = pg_identity_of(pt->name, pt->test->kind, res);
			json_object_set_new(p, "identity", json_string(id));
			free(id);
			json_decref(res);
		}
		json_object_set_new(p, "test", json_string(pt->test->name));
		json_object_set_new(p, "suite", json_string(pg_suite_kind_name(pt->test->kind)));
		json_object_set_new(p, "status", json_string("pending"));
		json_object_set_new(p, "error", json_null());
		json_object_set_new(p, "seconds", json_null());
		json_array_append_new(points, p);
	}
	json_object_set_new(m, "points", points);
	r->manifest_points = points;
	r->manifest = json_object();
	json_object_set_new(r->manifest, "perfgate_run", m);
}

static void read_git(struct runner *r)
{
	struct pg_git_info gi = PG_GIT_INFO_INIT;
	struct pg_error err = PG_ERROR_INIT;
	int rc = pg_git_info_read(&gi, r->o->git_path ? r->o->git_path : ".", &err);

	if (rc == 0) {
		r->git = pg_git_info_json(&gi);
	} else {
		if (rc != PG_ENOTFOUND)
			say(r, "perfgate: warning: %s; results record git: null\n", err.msg);
		r->git = json_null();
	}
	pg_git_info_release(&gi);
}

int pg_run(struct pg_run_report *rep, const struct pg_suite *suite, const struct pg_plan *plan,
	   const struct pg_run_opts *o, struct pg_error *err)
{
	struct runner r;
	struct pg_buf tmp = PG_BUF_INIT, summary = PG_BUF_INIT;
	struct pg_run_row *rows = NULL;
	const char *bk = getenv("BUILDKITE");
	const char *tmpdir = getenv("TMPDIR");
	size_t i = 0;
	int ret;

	memset(&r, 0, sizeof(r));
	r.suite = suite;
	r.plan = plan;
	r.o = o;
	r.rep = rep;
	r.log = o->log ? o->log : stderr;
	r.buildkite = bk && !strcmp(bk, "true");
	r.t0 = pg_monotonic();
	r.server = (struct pg_proc)PG_PROC_INIT;
	r.startup = NAN;
	pg_runfmt_iso8601(r.started_at, (int64_t)time(NULL));
	if (gethostname(r.host, sizeof(r.host)))
		snprintf(r.host, sizeof(r.host), "unknown");
	r.host[sizeof(r.host) - 1] = '\0';

	pg_run_collect_secrets(&r.redact, suite);

	if (o->vllm || (getenv("PERFGATE_VLLM") && *getenv("PERFGATE_VLLM"))) {
		const char *from = o->vllm ? "--vllm" : "PERFGATE_VLLM";
		struct pg_error verr = PG_ERROR_INIT;
		r.vllm = o->vllm ? o->vllm : getenv("PERFGATE_VLLM");
		if (pg_program_check(r.vllm, &verr)) {
			ret = pg_error_set(err, PG_ECONFIG, "%s: %s", from, verr.msg);
			goto done;
		}
		say(&r, "perfgate: commands run %s where they say vllm (%s)\n", r.vllm, from);
	}
	if ((ret = pg_mkdir_p(o->results_dir, err)))
		goto done;
	pg_buf_printf(&tmp, "%s/perfgate-run-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(tmp.ptr)) {
		ret = pg_error_set(err, PG_ERR, "%s: %s", tmp.ptr, strerror(errno));
		goto done;
	}
	r.tmpdir = pg_buf_detach(&tmp);
	r.self_exe = o->self_exe ? pg_xstrdup(o->self_exe) : self_exe();
	r.build = build_json();
	read_git(&r);
	manifest_init(&r);
	manifest_update(&r, "running", -1);

	while (i < plan->n) {
		size_t end = i + 1;
		while (end < plan->n && plan->points[end].test == plan->points[i].test)
			end++;
		if (pg_run_cancelled || r.stop_after_error) {
			for (; i < end; i++)
				report_add(&r, &plan->points[i], false, "not run", NULL, NULL, 0);
			continue;
		}
		run_test(&r, i, end);
		i = end;
	}

	rep->cancel_signal = (int)pg_run_cancelled;
	rep->seconds = pg_monotonic() - r.t0;
	rows = pg_xcalloc(rep->n + 1, sizeof(*rows));
	for (size_t k = 0; k < rep->n; k++) {
		rows[k].point = rep->points[k].name;
		rows[k].status = rep->points[k].status;
		rows[k].detail = rep->points[k].detail;
		rows[k].note = rep->points[k].note;
		rows[k].seconds = rep->points[k].seconds;
	}
	pg_runfmt_summary(&summary, rows, rep->n, rep->seconds);
	say(&r, "%s", summary.ptr);
	if (rep->cancel_signal)
		say(&r, "perfgate: cancelled by signal %d; finished results are kept\n",
		    rep->cancel_signal);
	manifest_update(&r,
			rep->cancel_signal ? "cancelled"
			: rep->n_error     ? "error"
					   : "ok",
			pg_run_exit_code(rep));
done:
	pg_gpu_reader_close(r.gpu_reader);
	pg_strv_release(&r.told);
	if (r.tmpdir) {
		rmdir(r.tmpdir);
		free(r.tmpdir);
	}
	free(rows);
	free(r.self_exe);
	json_decref(r.git);
	json_decref(r.build);
	json_decref(r.manifest);
	pg_redactor_release(&r.redact);
	pg_buf_release(&tmp);
	pg_buf_release(&summary);
	return ret;
}

int pg_run_exit_code(const struct pg_run_report *rep)
{
	if (rep->cancel_signal)
		return 128 + rep->cancel_signal;
	if (rep->n_error || rep->n_not_run)
		return PG_EXIT_INFRA;
	return PG_EXIT_OK;
}

void pg_run_report_release(struct pg_run_report *rep)
{
	for (size_t i = 0; i < rep->n; i++) {
		free(rep->points[i].name);
		free(rep->points[i].status);
		free(rep->points[i].detail);
		free(rep->points[i].note);
	}
	free(rep->points);
	memset(rep, 0, sizeof(*rep));
}
