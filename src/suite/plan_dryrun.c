/*
 * `perfgate run --dry-run`: what every point would run, exactly, and
 * nothing started. The commands are built by the same template code the
 * runner uses; only the port is unknown before a run, so it shows as
 * {port}.
 */
#include "suite/plan.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/jsonw.h"
#include "base/redact.h"
#include "base/secret.h"
#include "base/strutil.h"
#include "base/template.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Made of characters pg_shell_quote leaves alone, so that a word holding
 * only the port stays unquoted and can be shown as {port}. */
#define PORT_MARK  "@@PERFGATE_PORT@@"
#define START_MARK "@@PERFGATE_START@@"

static void replace_all(struct pg_buf *b, const char *from, const char *to)
{
	struct pg_buf out = PG_BUF_INIT;
	const char *p = b->ptr, *hit;
	size_t flen = strlen(from);

	while ((hit = strstr(p, from))) {
		pg_buf_add(&out, p, (size_t)(hit - p));
		pg_buf_puts(&out, to);
		p = hit + flen;
	}
	pg_buf_puts(&out, p);
	pg_buf_release(b);
	*b = out;
}

/* Host and base URL of a test's server: loopback and the chosen port, or
 * the remote URL. */
static void server_address(const struct pg_test *t, struct pg_buf *host, struct pg_buf *base)
{
	if (t->server.remote) {
		const char *h = strstr(t->server.remote, "://");
		h = h ? h + 3 : t->server.remote;
		size_t len = strcspn(h, "/");
		const char *colon = NULL, *at = memchr(h, '@', len);

		/* user:password@ is no part of {host} */
		while (at) {
			len -= (size_t)(at + 1 - h);
			h = at + 1;
			at = memchr(h, '@', len);
		}

		/* [::1]:8000 keeps its brackets out of {host} */
		if (h[0] == '[') {
			const char *close = memchr(h, ']', len);
			if (close)
				pg_buf_add(host, h + 1, (size_t)(close - h - 1));
		} else {
			colon = memchr(h, ':', len);
			pg_buf_add(host, h, colon ? (size_t)(colon - h) : len);
		}
		pg_buf_puts(base, t->server.remote);
		return;
	}
	pg_buf_puts(host, "127.0.0.1");
	pg_buf_puts(base, "http://127.0.0.1:" PORT_MARK);
}

/* The command as it would be exec'ed; vllm: what runs where it says
 * `vllm` (--vllm), or NULL. */
static void render_command(struct pg_buf *out, const char *tmpl, bool shell,
			   struct pg_point_vars *vars, const char *vllm)
{
	struct pg_error err = PG_ERROR_INIT;
	struct pg_buf line = PG_BUF_INIT;

	if (shell) {
		if (pg_template_shell(&line, tmpl, pg_point_var, vars, &err) == 0) {
			pg_program_replace_shell(&line, "vllm", vllm);
			pg_buf_puts(out, "sh -c ");
			pg_shell_quote(out, line.ptr);
		} else {
			pg_buf_printf(out, "%s  (cannot expand: %s)", tmpl, err.msg);
		}
	} else {
		struct pg_strv argv = PG_STRV_INIT;
		if (pg_template_argv(&argv, tmpl, pg_point_var, vars, &err) == 0) {
			pg_program_replace_argv(&argv, "vllm", vllm);
			pg_argv_display_redacted(&line, argv.v);
		} else {
			pg_buf_printf(&line, "%s  (cannot expand: %s)", tmpl, err.msg);
		}
		pg_buf_add(out, line.ptr, line.len);
		pg_strv_release(&argv);
	}
	pg_buf_release(&line);
}

static void field(struct pg_buf *out, const char *label)
{
	pg_buf_printf(out, "  %-10s ", label);
}

static const char *num(char buf[PG_FMT_DOUBLE_SIZE], double v)
{
	return pg_fmt_g(buf, v);
}

static void render_kv_redacted(struct pg_buf *out, const struct pg_kvlist *l, const char *sep)
{
	for (size_t i = 0; i < l->n; i++) {
		pg_buf_printf(out, "%s%s%s", i ? ", " : "", l->items[i].key, sep);
		pg_buf_puts(out,
			    pg_secret_name(l->items[i].key) ? PG_SECRET_MASK : l->items[i].value);
	}
}

static void render_client(struct pg_buf *out, const struct pg_test *t)
{
	char n[PG_FMT_DOUBLE_SIZE];
	const struct pg_client_spec *c = &t->client;

	field(out, "client");
	pg_buf_printf(out, "POST %s, model '%s'", c->endpoint,
		      c->served_model ? c->served_model : t->model);
	if (isnan(c->temperature))
		pg_buf_puts(out, ", temperature not sent");
	else
		pg_buf_printf(out, ", temperature %s", num(n, c->temperature));
	pg_buf_printf(out, ", ignore_eos %s, seed %lu, timeout %s s",
		      c->ignore_eos ? "true" : "false", c->seed, num(n, c->timeout));
	if (c->api_key_env)
		pg_buf_printf(out, ", API key from $%s", c->api_key_env);
	if (c->continuous_usage)
		pg_buf_puts(out, ", continuous usage stats");
	pg_buf_putc(out, '\n');
	if (c->headers.n) {
		field(out, "headers");
		render_kv_redacted(out, &c->headers, ": ");
		pg_buf_putc(out, '\n');
	}
	if (c->extra_body && json_object_size(c->extra_body)) {
		field(out, "body");
		pg_buf_puts(out, "+ ");
		pg_json_write(out, c->extra_body, -1);
		pg_buf_putc(out, '\n');
	}
}

static void render_dataset(struct pg_buf *out, const struct pg_test *t)
{
	const struct pg_dataset_spec *d = &t->dataset;
	char n[PG_FMT_DOUBLE_SIZE];

	field(out, "dataset");
	switch (d->kind) {
	case PG_DATASET_RANDOM:
		pg_buf_printf(out, "random, %ld input / %ld output tokens", d->input_len,
			      d->output_len);
		if (d->range_ratio > 0)
			pg_buf_printf(out, ", range ratio %s", num(n, d->range_ratio));
		if (d->prefix_len > 0)
			pg_buf_printf(out, ", shared prefix %ld tokens", d->prefix_len);
		break;
	case PG_DATASET_SHAREGPT:
	case PG_DATASET_JSONL:
		pg_buf_printf(out, "%s %s, ", d->kind == PG_DATASET_SHAREGPT ? "sharegpt" : "jsonl",
			      d->path ? d->path : "(no path)");
		if (d->sha256)
			pg_buf_printf(out, "sha256 %.12s..., ", d->sha256);
		if (d->output_len > 0)
			pg_buf_printf(out, "%ld output tokens", d->output_len);
		else
			pg_buf_puts(out, "output lengths from the data");
		break;
	case PG_DATASET_MULTI_TURN:
		pg_buf_printf(out,
			      "multi_turn, %ld users x %ld rounds, system prompt %ld + %ld per "
			      "question, %ld output tokens",
			      d->sessions.users, d->sessions.rounds, d->sessions.system_prompt_len,
			      d->sessions.question_len, d->output_len);
		if (d->path)
			pg_buf_printf(out, ", questions from the conversations of %s", d->path);
		if (d->sessions.user_context_len > 0)
			pg_buf_printf(out, ", %ld of each user's own context",
				      d->sessions.user_context_len);
		if (!isnan(d->sessions.think_time))
			pg_buf_printf(out, ", think time %s s", num(n, d->sessions.think_time));
		if (!isnan(d->sessions.join_interval))
			pg_buf_printf(out, ", users join %s s apart",
				      num(n, d->sessions.join_interval));
		break;
	case PG_DATASET_SONNET:
		pg_buf_printf(out,
			      "sonnet %s, prompts of at most %ld tokens (%ld shared), %ld output "
			      "tokens",
			      d->path ? d->path : "(no path)", d->input_len, d->prefix_len,
			      d->output_len);
		break;
	}
	pg_buf_putc(out, '\n');
}

/*
 * How long a point takes, as far as the suite alone can tell. A finite
 * request rate sends the last of n requests at exactly n/rate (arrivals.h
 * rescales the schedule; a ramp-up's seeded schedule is computed here as
 * the run computes it), whatever the hardware: the point lasts about that
 * long, plus the last answers. A concurrency cap below n, or sessions that
 * wait for their answers, can only hold requests back: at least that long.
 * Sent at once (rate inf), or a latency, throughput or startup test, the
 * server's speed sets it, which a dry run cannot know.
 */
enum point_time { TIME_SERVER, TIME_ABOUT, TIME_AT_LEAST };

struct point_estimate {
	enum point_time kind;
	double arrivals; /* seconds from the first request to the last one's send */
	long requests;
};

static void estimate_point(const struct pg_point *pt, struct point_estimate *e)
{
	const struct pg_test *t = pt->test;

	e->kind = TIME_SERVER;
	e->arrivals = 0;
	e->requests = t->kind == PG_SUITE_SERVING ? pg_point_num_prompts(pt) : 0;
	if (t->kind != PG_SUITE_SERVING || e->requests < 1)
		return;
	if (t->dataset.kind == PG_DATASET_MULTI_TURN) {
		if (!isnan(pt->qps) && !isinf(pt->qps)) {
			e->kind = TIME_AT_LEAST;
			e->arrivals = (double)e->requests / pt->qps;
		}
		return;
	}
	if (t->ramp_up.strategy != PG_RAMP_NONE) {
		struct pg_error err = PG_ERROR_INIT;
		double *at = pg_xcalloc((size_t)e->requests, sizeof(*at));
		if (pg_arrivals_ramp(at, (size_t)e->requests, &t->ramp_up, t->burstiness,
				     t->client.seed, &err) == 0) {
			e->kind = TIME_ABOUT;
			e->arrivals = at[e->requests - 1];
		}
		free(at);
	} else if (!isnan(pt->qps) && !isinf(pt->qps)) {
		e->kind = TIME_ABOUT;
		e->arrivals = (double)e->requests / pt->qps;
	}
	if (e->kind == TIME_ABOUT && pt->max_concurrency > 0 && pt->max_concurrency < e->requests)
		e->kind = TIME_AT_LEAST;
}

/* "3 min 20 s", "12.5 s", "1 h 05 min": a person's reading of seconds. */
static void human_duration(struct pg_buf *out, double s)
{
	char n[PG_FMT_DOUBLE_SIZE];

	if (s < 60) {
		pg_buf_printf(out, "%s s", pg_fmt_g(n, round(s * 10) / 10));
	} else if (s < 3600) {
		long whole = lround(s);
		if (whole % 60)
			pg_buf_printf(out, "%ld min %ld s", whole / 60, whole % 60);
		else
			pg_buf_printf(out, "%ld min", whole / 60);
	} else {
		long min = lround(s / 60);
		pg_buf_printf(out, "%ld h %02ld min", min / 60, min % 60);
	}
}

/* The runs a point takes: its repeats, and a whole-run warm-up's. */
static long runs_of(const struct pg_test *t)
{
	return t->repeat + (pg_test_warmup(t).kind == PG_WARMUP_REPEAT);
}

static void render_time(struct pg_buf *out, const struct pg_point *pt)
{
	const struct pg_test *t = pt->test;
	struct point_estimate e;
	long runs;

	estimate_point(pt, &e);
	field(out, "time");
	if (e.kind == TIME_SERVER) {
		if (t->kind == PG_SUITE_SERVING && pt->max_concurrency > 0 &&
		    pt->max_concurrency < e.requests)
			pg_buf_printf(out,
				      "set by the server: %ld requests, each sent as one of the "
				      "%ld in flight ends\n",
				      e.requests, pt->max_concurrency);
		else if (t->kind == PG_SUITE_SERVING)
			pg_buf_printf(out, "set by the server: all %ld requests are sent at once\n",
				      e.requests);
		else
			pg_buf_printf(out, "set by the %s: not estimated\n",
				      t->command ? "command" : "server");
		return;
	}
	runs = runs_of(t);
	pg_buf_puts(out, e.kind == TIME_ABOUT ? "about " : "at least ");
	human_duration(out, e.arrivals * (double)runs);
	if (runs > 1) {
		pg_buf_printf(out, " (%ld runs of ", runs);
		human_duration(out, e.arrivals);
		pg_buf_puts(out, runs > t->repeat ? ", the first the warm-up)" : ")");
	}
	pg_buf_printf(out, ": the last of %ld %s is due ", e.requests,
		      t->dataset.kind == PG_DATASET_MULTI_TURN ? "turns" : "requests");
	human_duration(out, e.arrivals);
	pg_buf_puts(out, " after the first");
	if (t->dataset.kind == PG_DATASET_MULTI_TURN)
		pg_buf_puts(out, ", and no user asks before its answer\n");
	else if (e.kind == TIME_AT_LEAST)
		pg_buf_printf(out, ", and the cap of %ld in flight can hold them back\n",
			      pt->max_concurrency);
	else
		pg_buf_puts(out, ", then the last answers\n");
}

/* The whole plan's time: the arrivals of the points they pace, and what
 * is left to the server. */
static void render_plan_time(struct pg_buf *out, const struct pg_plan *plan)
{
	double total = 0;
	size_t paced = 0, at_least = 0;

	for (size_t i = 0; i < plan->n; i++) {
		struct point_estimate e;
		estimate_point(&plan->points[i], &e);
		if (e.kind == TIME_SERVER)
			continue;
		paced++;
		at_least += e.kind == TIME_AT_LEAST;
		total += e.arrivals * (double)runs_of(plan->points[i].test);
	}
	if (!paced) {
		pg_buf_puts(out, "Time: set by the server; no point is paced by a request rate.\n");
		return;
	}
	pg_buf_puts(out, paced == plan->n && !at_least ? "Time: about " : "Time: at least ");
	human_duration(out, total);
	if (paced == plan->n)
		pg_buf_printf(out, ": the request arrivals of %s, plus each server's start.\n",
			      plan->n == 1 ? "its one point" : "every point");
	else
		pg_buf_printf(out,
			      ": the request arrivals of %zu of the %zu points; the other %zu, and "
			      "each server's start, take the server's time.\n",
			      paced, plan->n, plan->n - paced);
}

/* When a multi_turn point's turns go (loadgen/sessions.h). */
static void render_sessions_load(struct pg_buf *out, const struct pg_point *pt)
{
	const struct pg_sessions_spec *ss = &pt->test->dataset.sessions;
	char n[PG_FMT_DOUBLE_SIZE], n2[PG_FMT_DOUBLE_SIZE];

	pg_buf_printf(out, "%ld turns, ", pg_point_num_prompts(pt));
	if (!isnan(pt->qps) && !isinf(pt->qps))
		pg_buf_printf(out, "%s req/s together: each user asks every %s s", num(n, pt->qps),
			      num(n2, (double)ss->users / pt->qps));
	else if (!isnan(ss->think_time))
		pg_buf_printf(out, "each user asks %s s after its answer", num(n, ss->think_time));
	else
		pg_buf_puts(out, "each user asks as soon as it has its answer");
	pg_buf_puts(out, ", never before its previous answer has ended\n");
}

static void render_workload(struct pg_buf *out, const struct pg_point *pt)
{
	const struct pg_test *t = pt->test;
	char n[PG_FMT_DOUBLE_SIZE], n2[PG_FMT_DOUBLE_SIZE];

	switch (t->kind) {
	case PG_SUITE_STARTUP:
		field(out, "starts");
		pg_buf_printf(out,
			      "%ld cold (empty caches each), %ld warm-up, %ld warm (the warm-up's "
			      "caches), each a new server timed to ready%s; {start} is 1..%ld\n",
			      t->cold_starts, t->warmup_starts, t->warm_starts,
			      t->first_token ? " and to one max_tokens 1 answer" : "",
			      t->cold_starts + t->warmup_starts + t->warm_starts);
		break;
	case PG_SUITE_LATENCY:
		field(out, "workload");
		pg_buf_printf(out,
			      "batches of %ld random prompts, %ld input / %ld output tokens, "
			      "%ld warmup + %ld measured iterations\n",
			      t->batch_size, t->dataset.input_len, t->dataset.output_len,
			      t->warmup_iterations, t->iterations);
		break;
	case PG_SUITE_THROUGHPUT:
		render_dataset(out, t);
		field(out, "load");
		pg_buf_printf(out, "%ld prompts, ", t->num_prompts);
		if (t->throughput_max_concurrency > 0)
			pg_buf_printf(out, "at most %ld in flight\n",
				      t->throughput_max_concurrency);
		else
			pg_buf_puts(out, "all at once\n");
		break;
	case PG_SUITE_SERVING:
		render_dataset(out, t);
		field(out, "load");
		if (t->dataset.kind == PG_DATASET_MULTI_TURN) {
			render_sessions_load(out, pt);
			break;
		}
		pg_buf_printf(out, "%ld prompts", pg_point_num_prompts(pt));
		if (t->prompts_per_concurrency > 0 && pt->max_concurrency > 0)
			pg_buf_printf(out, " (%ld per concurrency)", t->prompts_per_concurrency);
		if (t->certify_tails)
			pg_buf_printf(out, " (certify_tails: at least %ld)",
				      pg_test_certify_prompts(t));
		if (t->ramp_up.strategy != PG_RAMP_NONE)
			pg_buf_printf(
				out,
				", the rate ramping up (%s) from %ld to %ld req/s, burstiness %s%s",
				pg_ramp_strategy_name(t->ramp_up.strategy), t->ramp_up.start_rps,
				t->ramp_up.end_rps, num(n2, t->burstiness),
				t->burstiness == 1 ? " (Poisson)" : "");
		else if (isinf(pt->qps))
			pg_buf_puts(out, ", all sent at once (qps inf)");
		else
			pg_buf_printf(out, " at %s req/s, burstiness %s%s", num(n, pt->qps),
				      num(n2, t->burstiness),
				      t->burstiness == 1 ? " (Poisson)" : "");
		if (pt->max_concurrency > 0)
			pg_buf_printf(out, ", max concurrency %ld", pt->max_concurrency);
		else
			pg_buf_puts(out, ", unbounded concurrency");
		if (t->client.num_warmups > 0)
			pg_buf_printf(out, ", %ld warmup requests", t->client.num_warmups);
		pg_buf_putc(out, '\n');
		if (t->sla_search.enabled) {
			field(out, "sla search");
			pg_buf_printf(
				out,
				"after this rate's last concurrency point: the largest concurrency "
				"with p99 TTFT <= %s ms and p99 TPOT <= %s ms, at most %ld probes up to %ld\n",
				num(n, t->sla_search.ttft_ms), num(n2, t->sla_search.tpot_ms),
				t->sla_search.max_probes, t->sla_search.max_concurrency);
		}
		field(out, "metrics");
		pg_buf_puts(out, "mean, median, std");
		for (size_t i = 0; i < t->client.n_percentiles; i++)
			pg_buf_printf(out, ", p%s", num(n, t->client.percentiles[i]));
		pg_buf_puts(out, " of");
		for (size_t i = 0; i < t->client.percentile_metrics.n; i++)
			pg_buf_printf(out, "%s %s", i ? "," : "",
				      t->client.percentile_metrics.v[i]);
		pg_buf_putc(out, '\n');
		if (!isnan(t->goodput.ttft_ms) || !isnan(t->goodput.tpot_ms) ||
		    !isnan(t->goodput.e2el_ms) || !isnan(t->goodput.itl_ms)) {
			const char *sep = "";
			field(out, "goodput");
			if (!isnan(t->goodput.ttft_ms)) {
				pg_buf_printf(out, "ttft <= %s ms", num(n, t->goodput.ttft_ms));
				sep = ", ";
			}
			if (!isnan(t->goodput.tpot_ms)) {
				pg_buf_printf(out, "%stpot <= %s ms", sep,
					      num(n, t->goodput.tpot_ms));
				sep = ", ";
			}
			if (!isnan(t->goodput.itl_ms)) {
				pg_buf_printf(out, "%sitl <= %s ms", sep,
					      num(n, t->goodput.itl_ms));
				if (t->goodput.itl_percentile < 100)
					pg_buf_printf(out, " (p%s of each request's gaps)",
						      num(n2, t->goodput.itl_percentile));
				sep = ", ";
			}
			if (!isnan(t->goodput.e2el_ms))
				pg_buf_printf(out, "%se2el <= %s ms", sep,
					      num(n, t->goodput.e2el_ms));
			pg_buf_putc(out, '\n');
		}
		break;
	default:
		break;
	}
}

/* A deployment's roles (docs/deployments.md): each role's command with
 * {port}, {replica} and the roles' addresses left as placeholders, chosen
 * at run time. */
static void render_deployment(struct pg_buf *out, const struct pg_test *t,
			      struct pg_point_vars *vars, const char *vllm)
{
	struct pg_kvlist rv = { 0 };
	struct pg_buf b = PG_BUF_INIT, v = PG_BUF_INIT;
	char n[PG_FMT_DOUBLE_SIZE], n2[PG_FMT_DOUBLE_SIZE];

	for (size_t i = 0; i < t->server.n_roles; i++) {
		static const char *const what[] = { "_urls", "_ports" };
		for (size_t k = 0; k < 2; k++) {
			pg_buf_reset(&b);
			pg_buf_reset(&v);
			pg_buf_printf(&b, "%s%s", t->server.roles[i].name, what[k]);
			pg_buf_printf(&v, "{%s}", b.ptr);
			pg_kvlist_set(&rv, b.ptr, v.ptr);
		}
	}
	vars->role_vars = &rv;
	pg_buf_reset(&b);
	pg_deployment_shape(&b, &t->server);
	field(out, "server");
	pg_buf_printf(out, "deployment %s: the workers, each ready, then %s\n", b.ptr,
		      t->server.roles[t->server.n_roles - 1].name);
	for (size_t i = 0; i < t->server.n_roles; i++) {
		const struct pg_role_spec *r = &t->server.roles[i];
		pg_role_vars_set(&rv, r, "{replica}");
		pg_buf_reset(&b);
		render_command(&b, r->command, r->shell, vars, vllm);
		field(out, r->name);
		pg_buf_printf(out, "%ld x ", r->replicas);
		pg_buf_add(out, b.ptr, b.len);
		pg_buf_printf(out, "\n  %-10s log %s.%s.<replica>.log, ready GET %s\n", "", t->name,
			      r->name, r->ready_path ? r->ready_path : t->server.ready_path);
		if (r->env.n) {
			field(out, "env");
			pg_env_display(out, &r->env);
			pg_buf_putc(out, '\n');
		}
	}
	if (t->server.env.n) {
		field(out, "env");
		pg_env_display(out, &t->server.env);
		pg_buf_puts(out, " (every role)\n");
	}
	field(out, "ready");
	pg_buf_printf(out, "each role at most %s s; stop: SIGTERM, SIGKILL after %s s\n",
		      num(n, t->server.ready_timeout), num(n2, t->server.stop_timeout));
	vars->role_vars = NULL;
	pg_kvlist_release(&rv);
	pg_buf_release(&b);
	pg_buf_release(&v);
}

static void render_point(struct pg_buf *dst, const struct pg_point *pt, size_t index, size_t total,
			 const char *results_dir, const char *vllm)
{
	struct pg_buf local = PG_BUF_INIT, *out = &local;
	const struct pg_test *t = pt->test;
	struct pg_buf host = PG_BUF_INIT, base = PG_BUF_INIT, result = PG_BUF_INIT;
	struct pg_buf cmd = PG_BUF_INIT;
	struct pg_point_vars vars;
	char n[PG_FMT_DOUBLE_SIZE], n2[PG_FMT_DOUBLE_SIZE];

	server_address(t, &host, &base);
	/* the runner has the command write into a private temporary directory
	 * and imports the file into results_dir atomically (a command killed
	 * mid-write must not leave half a result there) */
	pg_buf_printf(&result, "$TMPDIR/perfgate-run-XXXXXX/%s.json", pt->name);
	memset(&vars, 0, sizeof(vars));
	vars.test = t;
	vars.point = pt;
	vars.port = PORT_MARK;
	vars.start = t->kind == PG_SUITE_STARTUP ? START_MARK : NULL;
	vars.host = host.ptr;
	vars.base_url = base.ptr;
	vars.result = result.ptr;
	vars.results_dir = results_dir;

	pg_buf_printf(out, "[%zu/%zu] %s\n", index, total, pt->name);
	field(out, "kind");
	pg_buf_printf(out, "%s (test %s, %s:%d)\n", pg_suite_kind_name(t->kind), t->name,
		      t->loc.file ? t->loc.file : "?", t->loc.line);
	field(out, "model");
	if (t->server.n_roles) /* each role has its tp, in the shape */
		pg_buf_printf(out, "%s\n", t->model);
	else
		pg_buf_printf(out, "%s, tp %ld\n", t->model, t->tp);

	if (t->server.command) {
		field(out, "server");
		render_command(&cmd, t->server.command, t->server.shell, &vars, vllm);
		pg_buf_add(out, cmd.ptr, cmd.len);
		pg_buf_putc(out, '\n');
		if (t->server.env.n) {
			field(out, "env");
			pg_env_display(out, &t->server.env);
			pg_buf_putc(out, '\n');
		}
		if (t->server.gpu_idle_mib > 0) {
			field(out, "gpu idle");
			pg_buf_printf(
				out,
				"before starting: every GPU under %s MiB, waiting at most %s s\n",
				num(n, t->server.gpu_idle_mib),
				num(n2, t->server.gpu_idle_timeout));
		}
		field(out, "ready");
		pg_buf_printf(
			out,
			"GET %s%s until 200, at most %s s; stop: SIGTERM, SIGKILL after %s s\n",
			base.ptr, t->server.ready_path, num(n, t->server.ready_timeout),
			num(n2, t->server.stop_timeout));
	} else if (t->server.n_roles) {
		render_deployment(out, t, &vars, vllm);
	} else if (t->server.remote) {
		field(out, "server");
		pg_buf_printf(out, "remote %s, already running (not started)\n", t->server.remote);
	} else {
		field(out, "server");
		pg_buf_puts(out, "none: the command runs the engine itself\n");
	}

	if (t->command) {
		pg_buf_reset(&cmd);
		render_command(&cmd, t->command, t->command_shell, &vars, vllm);
		field(out, "command");
		pg_buf_add(out, cmd.ptr, cmd.len);
		pg_buf_putc(out, '\n');
		if (t->command_env.n) {
			field(out, "env");
			pg_env_display(out, &t->command_env);
			pg_buf_putc(out, '\n');
		}
		field(out, "timeout");
		pg_buf_printf(out, "%s s, writes %s (imported into %s/%s.json)\n",
			      num(n, t->command_timeout), result.ptr, results_dir, pt->name);
	} else {
		render_client(out, t);
		render_workload(out, pt);
	}
	render_time(out, pt);
	if (t->kind != PG_SUITE_STARTUP) {
		struct pg_warmup w = pg_test_warmup(t);
		char text[64];
		field(out, "warm-up");
		if (w.kind == PG_WARMUP_NONE)
			pg_buf_puts(out, "none\n");
		else
			pg_buf_printf(out, "%s before the first run, unmeasured\n",
				      pg_warmup_text(text, sizeof(text), &w));
	}
	field(out, "repeat");
	if (t->repeat > 1 && t->kind != PG_SUITE_STARTUP)
		pg_buf_printf(out,
			      "%ld runs, summarised by the median (a cold first run left out)\n",
			      t->repeat);
	else if (t->repeat > 1)
		pg_buf_printf(out, "%ld runs, summarised by the median\n", t->repeat);
	else
		pg_buf_puts(out, "1 run\n");

	replace_all(out, PORT_MARK, "{port}");
	replace_all(out, START_MARK, "{start}");
	{
		/* the suite's own secrets (a remote URL's password, a literal
		 * key in a template) stay hidden in the plan too */
		struct pg_redactor r = PG_REDACTOR_INIT;
		const struct pg_suite one = { .tests = (struct pg_test *)t, .n_tests = 1 };
		pg_redactor_add_suite(&r, &one);
		pg_redact(&r, dst, local.ptr);
		pg_redactor_release(&r);
	}
	pg_buf_release(&local);
	pg_buf_release(&host);
	pg_buf_release(&base);
	pg_buf_release(&result);
	pg_buf_release(&cmd);
}

void pg_dryrun_render(struct pg_buf *out, const struct pg_suite *suite, const struct pg_plan *plan,
		      const struct pg_dryrun_opts *opts)
{
	const char *dir = opts && opts->results_dir ? opts->results_dir : "results";
	size_t total = opts && opts->total_points ? opts->total_points : plan->n;
	const char *vllm = opts ? opts->vllm : NULL;

	pg_buf_printf(out, "perfgate run --dry-run: %zu", plan->n);
	if (total != plan->n)
		pg_buf_printf(out, " of %zu", total);
	pg_buf_printf(out, " test point%s from %s; nothing is started.\n", total == 1 ? "" : "s",
		      suite->source ? suite->source : "the suite");
	if (opts && opts->gpu)
		pg_buf_printf(out, "GPU: %s (given). ", opts->gpu);
	else
		pg_buf_puts(out, "GPU: detected at run time. ");
	pg_buf_printf(out,
		      "Results go to %s/. {port} is a free loopback port chosen at run "
		      "time; secret values show as " PG_SECRET_MASK ".\n",
		      dir);
	render_plan_time(out, plan);
	if (vllm)
		pg_buf_printf(out, "Commands run %s where they say vllm.\n", vllm);
	for (size_t i = 0; i < plan->n; i++) {
		pg_buf_putc(out, '\n');
		render_point(out, &plan->points[i], i + 1, plan->n, dir, vllm);
	}
}
