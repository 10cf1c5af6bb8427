#include "loadgen/loadgen_io.h"

#include "base/alloc.h"
#include "loadgen/arrivals.h"
#include "base/buf.h"
#include "loadgen/dataset.h"
#include "base/error.h"
#include "base/jsonw.h"
#include "loadgen/loadstats.h"
#include "loadgen/reqtrace.h"
#include "base/strutil.h"
#include "loadgen/dataset_io.h"
#include "loadgen/httpload_io.h"
#include "loadgen/sessions.h"
#include "sys/fsutil.h"
#include "telemetry/prom.h"

#include <curl/curl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* Everything one point needs, released in one place. */
struct run {
	const struct pg_test *t;
	const struct pg_loadgen_opts *o;
	bool chat;
	char *model;                /* the "model" of request bodies */
	char *url;                  /* the endpoint */
	struct curl_slist *headers; /* one holds the API key */
	char id_prefix[32];
	struct pg_prompts prompts;
	struct pg_buf *bodies; /* one per prompt */
	long max_output;       /* > 0: no request asks for more tokens (a warm-up's) */
	struct pg_hl *engine;
};

/* "warmup" in ASCII: the warm-up's prompts are drawn with the test's seed
 * xor this */
#define WARMUP_SEED 0x7761726d7570ULL
/* A warm-up request asks for at most this many tokens, as SGLang's
 * bench_serving's warm-up does: the first ones run prefill and decode at
 * the point's batch sizes; the rest of a long answer repeats them. */
#define WARMUP_MAX_OUTPUT 32

/* vLLM's fallback when no model is named: data[0].id of GET /v1/models. */
static int discover_model(struct run *r, struct pg_error *err)
{
	struct pg_buf url = PG_BUF_INIT, resp = PG_BUF_INIT;
	CURL *e = curl_easy_init();
	json_t *root = NULL, *id;
	long code = 0;
	CURLcode cc;
	int rc = 0;

	pg_buf_printf(&url, "%s/v1/models", r->o->base_url);
	pg_hl_easy_prepare(e, url.ptr, r->headers, &resp, 30, r->o->stop);
	cc = curl_easy_perform(e);
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
	if (cc == CURLE_ABORTED_BY_CALLBACK) {
		rc = pg_error_set(err, PG_ECANCEL, "stopped by a signal");
		goto done;
	}
	if (cc != CURLE_OK || code != 200 || !(root = json_loadb(resp.ptr, resp.len, 0, NULL)) ||
	    !json_is_string(
		    id = json_object_get(json_array_get(json_object_get(root, "data"), 0), "id"))) {
		rc = pg_error_set(err, PG_EINFRA,
				  "%s: no model given and GET %s did not name one (%s)", r->t->name,
				  url.ptr,
				  cc != CURLE_OK ? curl_easy_strerror(cc) : "bad response");
		goto done;
	}
	r->model = pg_xstrdup(json_string_value(id));
done:
	json_decref(root);
	curl_easy_cleanup(e);
	pg_buf_release(&url);
	pg_buf_release(&resp);
	return rc;
}

/* The request body as vLLM's client sends it (docs/design/vllm-benchmarks.md
 * §3); history (stolen), when given, is a session's conversation instead
 * of the prompt: chat messages, or one prompt string. */
static void build_body_from(struct pg_buf *out, const struct run *r, const struct pg_prompt *p,
			    json_t *history)
{
	const struct pg_client_spec *c = &r->t->client;
	json_t *b = json_object(), *so = json_object();

	json_object_set_new(b, "model", json_string(r->model));
	if (history && r->chat) {
		json_object_set_new(b, "messages", history);
		json_object_set_new(b, "max_completion_tokens", json_integer(p->output_len));
	} else if (history) {
		json_object_set_new(b, "prompt", history);
		json_object_set_new(b, "repetition_penalty", json_real(1.0));
		json_object_set_new(b, "max_tokens", json_integer(p->output_len));
		json_object_set_new(b, "logprobs", json_null());
	} else if (r->chat) {
		json_t *part = json_pack("{s:s, s:s}", "type", "text", "text",
					 p->text ? p->text : "");
		json_t *msg = json_pack("{s:s, s:[o]}", "role", "user", "content", part);
		json_object_set_new(b, "messages", json_pack("[o]", msg));
		json_object_set_new(b, "max_completion_tokens", json_integer(p->output_len));
	} else {
		if (p->ids) {
			json_t *ids = json_array();
			for (size_t i = 0; i < p->n_ids; i++)
				json_array_append_new(ids, json_integer(p->ids[i]));
			json_object_set_new(b, "prompt", ids);
		} else {
			json_object_set_new(b, "prompt", json_string(p->text ? p->text : ""));
		}
		json_object_set_new(b, "repetition_penalty", json_real(1.0));
		json_object_set_new(b, "max_tokens", json_integer(p->output_len));
		json_object_set_new(b, "logprobs", json_null());
	}
	json_object_set_new(b, "stream", json_true());
	json_object_set_new(so, "include_usage", json_true());
	if (c->continuous_usage)
		json_object_set_new(so, "continuous_usage_stats", json_true());
	json_object_set_new(b, "stream_options", so);
	if (c->ignore_eos || r->t->kind == PG_SUITE_LATENCY)
		json_object_set_new(b, "ignore_eos", json_true());
	if (!isnan(c->temperature))
		json_object_set_new(b, "temperature", json_real(c->temperature));
	if (json_is_object(c->extra_body))
		json_object_update(b, c->extra_body);
	pg_json_write(out, b, 0);
	json_decref(b);
}

static void build_body(struct pg_buf *out, const struct run *r, const struct pg_prompt *p)
{
	build_body_from(out, r, p, NULL);
}

static int setup(struct run *r, const struct pg_test *t, const struct pg_loadgen_opts *o,
		 size_t n_prompts, struct pg_error *err)
{
	struct pg_buf b = PG_BUF_INIT;
	int rc;

	r->t = t;
	r->o = o;
	r->chat = t->client.endpoint && strstr(t->client.endpoint, "chat") != NULL;
	pg_buf_printf(&b, "%s%s", o->base_url,
		      t->client.endpoint ? t->client.endpoint : "/v1/completions");
	r->url = pg_buf_detach(&b);

	r->headers = curl_slist_append(NULL, "Content-Type: application/json");
	/* no "Expect: 100-continue" wait (up to 1 s) before long prompts */
	r->headers = curl_slist_append(r->headers, "Expect:");
	r->headers = pg_hl_add_bearer(r->headers, o->api_key);
	for (size_t i = 0; i < t->client.headers.n; i++) {
		const char *key = t->client.headers.items[i].key;
		/* the body's framing is the client's: a suite's Content-Length
		 * or Transfer-Encoding would make every request unreadable */
		if (!strcasecmp(key, "Content-Length") || !strcasecmp(key, "Transfer-Encoding"))
			continue;
		pg_buf_reset(&b);
		pg_buf_printf(&b, "%s: %s", t->client.headers.items[i].key,
			      t->client.headers.items[i].value);
		r->headers = curl_slist_append(r->headers, b.ptr);
	}
	pg_buf_release(&b);
	snprintf(r->id_prefix, sizeof(r->id_prefix), "perfgate-%08x-",
		 (unsigned)((uint64_t)pg_hl_now_ns() ^ ((uint64_t)getpid() << 16)));

	r->model = pg_xstrdup(t->client.served_model ? t->client.served_model : t->model);
	if (!r->model && (rc = discover_model(r, err)))
		return rc;
	if (t->dataset.kind == PG_DATASET_MULTI_TURN)
		return 0; /* sessions write their prompts as they go */
	{
		struct pg_dataset_server srv = { o->base_url, r->model, o->api_key, o->stop };
		if ((rc = pg_dataset_load(&r->prompts, t, n_prompts, r->chat, &srv, err)))
			return rc;
	}
	for (size_t i = 0; r->max_output > 0 && i < r->prompts.n; i++)
		if (r->prompts.v[i].output_len > r->max_output)
			r->prompts.v[i].output_len = r->max_output;
	r->bodies = pg_xcalloc(r->prompts.n ? r->prompts.n : 1, sizeof(*r->bodies));
	for (size_t i = 0; i < r->prompts.n; i++) {
		pg_buf_init(&r->bodies[i]);
		build_body(&r->bodies[i], r, &r->prompts.v[i]);
	}
	return 0;
}

static void release(struct run *r)
{
	pg_hl_free(r->engine);
	for (size_t i = 0; r->bodies && i < r->prompts.n; i++)
		pg_buf_release(&r->bodies[i]);
	free(r->bodies);
	pg_prompts_release(&r->prompts);
	pg_hl_free_headers(r->headers);
	free(r->model);
	free(r->url);
}

static void on_progress(void *ctx, const struct pg_hl_progress *p)
{
	const struct pg_loadgen_opts *o = ctx;
	struct pg_progress q = { p->done, p->total, p->failed, p->elapsed_s, p->messages };

	o->progress(o->progress_ctx, &q);
}

static void run_opts(struct pg_hl_run_opts *ho, const struct run *r, size_t max_concurrency,
		     bool measured)
{
	memset(ho, 0, sizeof(*ho));
	ho->url = r->url;
	ho->headers = r->headers;
	ho->request_id_prefix = r->id_prefix;
	ho->max_concurrency = max_concurrency;
	ho->timeout_s = r->t->client.timeout;
	ho->stop = r->o->stop;
	if (measured && r->o->progress) {
		ho->progress = on_progress;
		ho->progress_ctx = (void *)r->o;
		ho->progress_interval_s = r->o->progress_interval_s;
	}
}

/* Requests for prompts [first, first + n) (modulo the prompt count), due
 * at `due` offsets (NULL: all at once); traces initialised and sized. */
static void make_requests(struct pg_hl_request *reqs, struct pg_reqtrace *traces, size_t n,
			  size_t first, const struct run *r, const double *due)
{
	for (size_t i = 0; i < n; i++) {
		const struct pg_prompt *p = &r->prompts.v[(first + i) % r->prompts.n];
		const struct pg_buf *body = &r->bodies[(first + i) % r->prompts.n];

		pg_reqtrace_init(&traces[i]);
		traces[i].prompt_len = p->prompt_len;
		/* room for every message up front: nothing allocates per token */
		pg_reqtrace_reserve(&traces[i], (size_t)p->output_len + 2);
		reqs[i] = (struct pg_hl_request){ body->ptr, body->len, due ? due[i] : 0,
						  &traces[i] };
	}
}

static void release_traces(struct pg_reqtrace *t, size_t n)
{
	for (size_t i = 0; t && i < n; i++)
		pg_reqtrace_release(&t[i]);
	free(t);
}

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* Open connections and run unmeasured requests: warm-up. *e2el_s (may be
 * NULL) gets the longest warm-up request, 0 when there was none. */
static int warm_up(struct run *r, size_t connections, size_t requests, size_t max_concurrency,
		   double *e2el_s, struct pg_error *err)
{
	struct pg_buf url = PG_BUF_INIT;
	size_t ok;
	int rc = 0;

	if (e2el_s)
		*e2el_s = 0;
	if (connections) {
		pg_buf_printf(&url, "%s/v1/models", r->o->base_url);
		rc = pg_hl_preconnect(r->engine, url.ptr, connections, 30, r->o->stop, &ok, err);
		pg_buf_release(&url);
		if (rc)
			return rc;
	}
	if (requests) {
		struct pg_reqtrace *t = pg_xcalloc(requests, sizeof(*t));
		struct pg_hl_request *q = pg_xcalloc(requests, sizeof(*q));
		struct pg_hl_run_opts ho;
		struct pg_hl_stats st;

		/* vLLM's warm-ups are copies of the first request */
		make_requests(q, t, requests, 0, r, NULL);
		for (size_t i = 0; i < requests; i++) {
			q[i].body = r->bodies[0].ptr;
			q[i].body_len = r->bodies[0].len;
		}
		run_opts(&ho, r, max_concurrency, false);
		rc = pg_hl_run(r->engine, q, requests, &ho, &st, err);
		for (size_t i = 0; e2el_s && i < requests; i++) {
			double e2el = pg_ns_to_s(t[i].end_ns - t[i].sent_ns);
			if (pg_reqtrace_ok(&t[i]) && e2el > *e2el_s)
				*e2el_s = e2el;
		}
		release_traces(t, requests);
		free(q);
	}
	return rc;
}

/* Connections to open before measuring: as many as can be in flight. */
#define PRECONNECT_MAX 8192

static void metadata(json_t *o, const struct run *r, const struct pg_point *pt)
{
	struct tm tm;
	time_t now = time(NULL);
	char date[32];
	const char *backend = r->chat ? "openai-chat" : "openai";

	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y%m%d-%H%M%S", &tm);
	json_object_set_new(o, "date", json_string(date));
	json_object_set_new(o, "endpoint_type", json_string(backend));
	json_object_set_new(o, "backend", json_string(backend));
	json_object_set_new(o, "label", json_string(backend));
	json_object_set_new(o, "model_id", json_string(r->model));
	json_object_set_new(o, "tokenizer_id", json_string(r->model));
	json_object_set_new(o, "num_prompts", json_integer(pg_point_num_prompts(pt)));
	if (isinf(pt->qps))
		json_object_set_new(o, "request_rate", json_string("inf"));
	else
		json_object_set_new(o, "request_rate", json_real(pt->qps));
	if (isinf(r->t->burstiness))
		json_object_set_new(o, "burstiness", json_string("inf"));
	else
		json_object_set_new(o, "burstiness", json_real(r->t->burstiness));
	json_object_set_new(o, "max_concurrency",
			    pt->max_concurrency > 0 ? json_integer(pt->max_concurrency)
						    : json_null());
	if (r->t->ramp_up.strategy != PG_RAMP_NONE) { /* vLLM's keys and order */
		json_object_set_new(o, "ramp_up_strategy",
				    json_string(pg_ramp_strategy_name(r->t->ramp_up.strategy)));
		json_object_set_new(o, "ramp_up_start_rps", json_integer(r->t->ramp_up.start_rps));
		json_object_set_new(o, "ramp_up_end_rps", json_integer(r->t->ramp_up.end_rps));
	}
}

static struct pg_client_health client_health(const struct pg_hl_stats *st, bool burst)
{
	return (struct pg_client_health){
		.busy_fraction = st->busy_fraction,
		.new_connections = st->new_connections,
		.burst = burst,
		.duration_s = st->duration_s,
		.read_delay_p99_ms = st->read_delay_p99_s < 0 ? -1 : st->read_delay_p99_s * 1000,
	};
}

/* What every serving point's metrics are computed with: the test's
 * percentiles and goodput, the run's duration; the caller adds the rest. */
static struct pg_serve_stats_opts stats_opts(const struct run *r, const struct pg_hl_stats *st)
{
	const struct pg_test *t = r->t;

	return (struct pg_serve_stats_opts){
		.percentiles = t->client.percentiles,
		.n_percentiles = t->client.n_percentiles,
		.goodput = t->goodput,
		.duration_s = st->duration_s,
		.detailed = r->o->save_detailed,
	};
}

static int run_serving(struct run *r, const struct pg_point *pt, json_t *out, struct pg_error *err)
{
	const struct pg_test *t = r->t;
	size_t n = (size_t)pg_point_num_prompts(pt);
	size_t maxc = pt->max_concurrency > 0 ? (size_t)pt->max_concurrency : 0;
	double *due = pg_xcalloc(n ? n : 1, sizeof(double));
	struct pg_reqtrace *traces = pg_xcalloc(n ? n : 1, sizeof(*traces));
	struct pg_hl_request *reqs = pg_xcalloc(n ? n : 1, sizeof(*reqs));
	struct pg_hl_run_opts ho;
	struct pg_hl_stats st;
	size_t in_flight = maxc ? min_size(maxc, n) : n;
	double warm_e2el = 0;
	bool ramp = t->ramp_up.strategy != PG_RAMP_NONE;
	/* the highest rate of the schedule: a ramp's higher end, or qps */
	double peak = ramp             ? (double)(t->ramp_up.end_rps > t->ramp_up.start_rps
							  ? t->ramp_up.end_rps
							  : t->ramp_up.start_rps)
		      : isnan(pt->qps) ? INFINITY
				       : pt->qps;
	int rc;

	rc = ramp ? pg_arrivals_ramp(due, n, &t->ramp_up, t->burstiness, t->client.seed, err)
		  : pg_arrivals(due, n, peak, t->burstiness, t->client.seed, err);
	if (rc)
		goto done;
	/* with a finite rate and no cap the peak is unknown: open enough for
	 * a busy start, the rest open on demand (new_connections says how many) */
	if (!maxc && !isinf(peak))
		in_flight = min_size(in_flight, 256);
	r->engine = pg_hl_new(maxc ? maxc : n, err);
	if (!r->engine) {
		rc = PG_ERR;
		goto done;
	}
	if ((rc = warm_up(r, min_size(in_flight, PRECONNECT_MAX),
			  (size_t)(t->client.num_warmups > 0 ? t->client.num_warmups : 0), maxc,
			  &warm_e2el, err)))
		goto done;
	/* a warm-up request says how long requests last: at this rate about
	 * qps x e2el are in flight, so open that many (with room) up front */
	if (!maxc && !isinf(peak) && warm_e2el > 0) {
		size_t want = min_size(min_size((size_t)ceil(peak * warm_e2el * 1.5) + 8, n),
				       PRECONNECT_MAX);
		if (want > in_flight && (rc = warm_up(r, want, 0, 0, NULL, err)))
			goto done;
	}

	make_requests(reqs, traces, n, 0, r, due);
	run_opts(&ho, r, maxc, true);
	rc = pg_hl_run(r->engine, reqs, n, &ho, &st, err);
	if (rc)
		goto done;
	{
		struct pg_serve_stats_opts so = stats_opts(r, &st);
		so.bounded = maxc > 0;
		so.finite_rate = !isinf(peak);
		so.dataset_input_source = r->prompts.input_source;
		so.health = client_health(&st, isinf(peak));
		if ((rc = pg_loadstats_metrics_parse(&so.metrics, &t->client.percentile_metrics,
						     err)))
			goto done;
		metadata(out, r, pt);
		pg_serve_metrics(out, traces, n, &so);
	}
done:
	release_traces(traces, n);
	free(reqs);
	free(due);
	return rc;
}

/* ---- multi-turn sessions (loadgen/sessions.h) ---- */

/* The prefix-cache counters of the server's /metrics now (NAN: not
 * served, or no /metrics). */
static void scrape_prefix_counters(const struct run *r, double *queries, double *hits)
{
	struct pg_buf url = PG_BUF_INIT, resp = PG_BUF_INIT;
	struct pg_prom prom = PG_PROM_INIT;
	struct pg_error err = PG_ERROR_INIT;
	CURL *e = curl_easy_init();
	long code = 0;

	*queries = *hits = NAN;
	pg_buf_printf(&url, "%s/metrics", r->o->base_url);
	pg_hl_easy_prepare(e, url.ptr, r->headers, &resp, 5, r->o->stop);
	curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
	if (curl_easy_perform(e) == CURLE_OK &&
	    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK && code == 200) {
		/* a line the parser leaves out does not spoil the others */
		pg_prom_parse(&prom, resp.ptr ? resp.ptr : "", resp.len, &err);
		*queries = pg_prom_sum(&prom, "vllm:prefix_cache_queries_total", NULL);
		*hits = pg_prom_sum(&prom, "vllm:prefix_cache_hits_total", NULL);
	}
	pg_prom_release(&prom);
	curl_easy_cleanup(e);
	pg_buf_release(&url);
	pg_buf_release(&resp);
}

struct session_run {
	struct run *r;
	struct pg_sessions s;
	struct pg_hl_request *reqs;
	struct pg_reqtrace *traces;
	/* per user (one turn in flight each): the next turn's body, built
	 * when the answer before it ends, so sending it costs nothing the
	 * schedule lag would count; the answer as it arrives */
	struct pg_buf *bodies;
	struct pg_buf *answers;
};

/* User u's next turn: its body, from the conversation so far. */
static void sr_build(struct session_run *sr, size_t user)
{
	struct pg_prompt p = { 0 };

	p.output_len = sr->r->t->dataset.output_len;
	pg_buf_reset(&sr->bodies[user]);
	build_body_from(&sr->bodies[user], sr->r, &p,
			pg_sessions_history(&sr->s, user, sr->r->chat));
}

static double sr_next_due(void *ctx)
{
	struct session_run *sr = ctx;
	return pg_sessions_next_due(&sr->s);
}

static void sr_take(void *ctx, size_t index, struct pg_hl_request *q)
{
	struct session_run *sr = ctx;
	struct pg_reqtrace *t = &sr->traces[index];
	double nominal;
	size_t user = pg_sessions_take(&sr->s, index, &nominal), turn = sr->s.u[user].turn;

	q->body = sr->bodies[user].ptr;
	q->body_len = sr->bodies[user].len;
	q->header = sr->s.u[user].header;
	/* as late as the schedule said, not as late as the answer before */
	t->scheduled_ns = llround(nominal * 1e9);
	/* the words sent, as the estimate until the server's usage counts them */
	t->prompt_len = (long)(sr->r->t->dataset.sessions.system_prompt_len +
			       sr->r->t->dataset.sessions.user_context_len +
			       (long)(turn + 1) * sr->r->t->dataset.sessions.question_len +
			       (long)turn * sr->r->t->dataset.output_len);
	pg_buf_reset(&sr->answers[user]);
	t->text = &sr->answers[user];
}

static void sr_done(void *ctx, size_t index)
{
	struct session_run *sr = ctx;
	const struct pg_reqtrace *t = &sr->traces[index];
	size_t user = sr->s.req_user[index];
	const struct pg_buf *a = &sr->answers[user];

	pg_sessions_done(&sr->s, index, pg_ns_to_s(t->sent_ns), pg_ns_to_s(t->end_ns),
			 a->ptr ? a->ptr : "", a->len);
	sr->traces[index].text = NULL;
	if (sr->s.u[user].turn < sr->s.plan.rounds)
		sr_build(sr, user);
	else
		pg_buf_release(&sr->bodies[user]);
}

static int run_multi_turn(struct run *r, const struct pg_point *pt, json_t *out,
			  struct pg_error *err)
{
	const struct pg_test *t = r->t;
	const struct pg_sessions_spec *spec = &t->dataset.sessions;
	struct session_run sr = { .r = r };
	struct pg_sessions_plan plan;
	struct pg_hl_source src = { sr_next_due, sr_take, sr_done, &sr };
	struct pg_hl_run_opts ho;
	struct pg_hl_stats st;
	double q0, h0, q1, h1;
	size_t n;
	int rc;

	if ((rc = pg_sessions_plan(&plan, spec, pt->qps, err)))
		return pg_error_prefix(err, "%s", t->name);
	pg_sessions_init(&sr.s, &plan, spec, t->dataset.output_len, t->client.seed);
	n = pg_sessions_total(&sr.s);
	if (t->dataset.path) { /* ShareGPT conversations: their questions */
		struct pg_buf file = PG_BUF_INIT;

		rc = pg_file_read(t->dataset.path, &file, err);
		if (rc == PG_ENOTFOUND)
			rc = pg_error_set(err, PG_ECONFIG, "%s: dataset file not found",
					  t->dataset.path);
		if (!rc)
			rc = pg_dataset_sharegpt_sessions(&sr.s.questions, file.ptr ? file.ptr : "",
							  file.len, t->dataset.path, plan.users,
							  plan.rounds, t->client.seed, err);
		pg_buf_release(&file);
		if (rc) {
			pg_sessions_release(&sr.s);
			return rc;
		}
	}
	sr.reqs = pg_xcalloc(n, sizeof(*sr.reqs));
	sr.traces = pg_xcalloc(n, sizeof(*sr.traces));
	sr.bodies = pg_xcalloc(plan.users, sizeof(*sr.bodies));
	sr.answers = pg_xcalloc(plan.users, sizeof(*sr.answers));
	for (size_t i = 0; i < n; i++) {
		pg_reqtrace_init(&sr.traces[i]);
		pg_reqtrace_reserve(&sr.traces[i], (size_t)t->dataset.output_len + 2);
		sr.reqs[i].trace = &sr.traces[i];
	}
	for (size_t u = 0; u < plan.users; u++) {
		pg_buf_init(&sr.bodies[u]);
		pg_buf_init(&sr.answers[u]);
		sr_build(&sr, u);
	}
	r->engine = pg_hl_new(plan.users, err);
	if (!r->engine) {
		rc = PG_ERR;
		goto done;
	}
	/* connections only: a warm-up request would fill the prefix cache */
	if ((rc = warm_up(r, min_size(plan.users, PRECONNECT_MAX), 0, 0, NULL, err)))
		goto done;
	run_opts(&ho, r, 0, true);
	ho.source = &src;
	/* the counters right before and right after: the point's window */
	scrape_prefix_counters(r, &q0, &h0);
	rc = pg_hl_run(r->engine, sr.reqs, n, &ho, &st, err);
	if (rc)
		goto done;
	scrape_prefix_counters(r, &q1, &h1);
	{
		bool rate = !isnan(pt->qps) && !isinf(pt->qps);
		struct pg_serve_stats_opts so = stats_opts(r, &st);
		so.finite_rate = rate;
		so.dataset_input_source = "estimate";
		so.health = client_health(&st, false);
		if ((rc = pg_loadstats_metrics_parse(&so.metrics, &t->client.percentile_metrics,
						     err)))
			goto done;
		metadata(out, r, pt);
		pg_serve_metrics(out, sr.traces, n, &so);
		pg_session_metrics(out, sr.traces, sr.s.req_turn, n, &sr.s);
		pg_session_server_keys(out, q1 - q0, h1 - h0);
	}
done:
	for (size_t u = 0; u < plan.users; u++) {
		pg_buf_release(&sr.bodies[u]);
		pg_buf_release(&sr.answers[u]);
	}
	release_traces(sr.traces, n);
	free(sr.reqs);
	free(sr.bodies);
	free(sr.answers);
	pg_sessions_release(&sr.s);
	return rc;
}

static int run_throughput(struct run *r, json_t *out, struct pg_error *err)
{
	const struct pg_test *t = r->t;
	size_t n = (size_t)t->num_prompts;
	size_t maxc = t->throughput_max_concurrency > 0 ? (size_t)t->throughput_max_concurrency : 0;
	struct pg_reqtrace *traces = pg_xcalloc(n ? n : 1, sizeof(*traces));
	struct pg_hl_request *reqs = pg_xcalloc(n ? n : 1, sizeof(*reqs));
	struct pg_hl_run_opts ho;
	struct pg_hl_stats st;
	int rc;

	r->engine = pg_hl_new(maxc ? maxc : n, err);
	if (!r->engine) {
		rc = PG_ERR;
		goto done;
	}
	if ((rc = warm_up(r, min_size(maxc ? maxc : n, PRECONNECT_MAX),
			  (size_t)(t->client.num_warmups > 0 ? t->client.num_warmups : 0), maxc,
			  NULL, err)))
		goto done;
	make_requests(reqs, traces, n, 0, r, NULL);
	run_opts(&ho, r, maxc, true);
	if ((rc = pg_hl_run(r->engine, reqs, n, &ho, &st, err)))
		goto done;
	pg_throughput_metrics(out, traces, n, st.duration_s);
	{
		struct pg_client_health h = client_health(&st, true);
		pg_client_keys(out, traces, n, &h);
	}
done:
	release_traces(traces, n);
	free(reqs);
	return rc;
}

static int run_latency(struct run *r, json_t *out, struct pg_error *err)
{
	const struct pg_test *t = r->t;
	size_t batch = (size_t)t->batch_size;
	size_t iters = t->iterations > 0 ? (size_t)t->iterations : 0;
	size_t warm = t->warmup_iterations > 0 ? (size_t)t->warmup_iterations : 0;
	size_t total = batch * iters;
	struct pg_reqtrace *traces = pg_xcalloc(total ? total : 1, sizeof(*traces));
	struct pg_reqtrace *scratch = pg_xcalloc(batch, sizeof(*scratch));
	struct pg_hl_request *reqs = pg_xcalloc(batch, sizeof(*reqs));
	double *lat = pg_xcalloc(iters ? iters : 1, sizeof(double));
	size_t n_lat = 0, failed_iters = 0;
	double busy = 0, dur = 0, read_delay = 0;
	long conns = 0;
	uint64_t messages = 0;
	int rc = 0;

	r->engine = pg_hl_new(batch, err);
	if (!r->engine) {
		rc = PG_ERR;
		goto done;
	}
	if ((rc = warm_up(r, batch, 0, 0, NULL, err)))
		goto done;
	for (size_t it = 0; it < warm + iters; it++) {
		bool measured = it >= warm;
		struct pg_reqtrace *tr = measured ? &traces[(it - warm) * batch] : scratch;
		struct pg_hl_run_opts ho;
		struct pg_hl_stats st;
		bool ok = true;

		/* fresh prompts every iteration: a server's prefix cache must
		 * not turn later iterations into cache hits */
		make_requests(reqs, tr, batch, it * batch, r, NULL);
		run_opts(&ho, r, 0, false);
		rc = pg_hl_run(r->engine, reqs, batch, &ho, &st, err);
		if (!measured) {
			for (size_t i = 0; i < batch; i++)
				pg_reqtrace_release(&scratch[i]);
		}
		if (rc)
			goto done;
		if (!measured)
			continue;
		for (size_t i = 0; i < batch; i++)
			ok = ok && pg_reqtrace_ok(&tr[i]);
		/* a failed request ends early and would flatter the batch */
		if (ok)
			lat[n_lat++] = st.duration_s;
		else
			failed_iters++;
		busy += st.busy_fraction * st.duration_s;
		dur += st.duration_s;
		/* (the worst iteration's: each run has its own histogram) */
		if (st.read_delay_p99_s > read_delay)
			read_delay = st.read_delay_p99_s;
		conns += st.new_connections;
		messages += st.messages;
		if (r->o->progress) {
			struct pg_progress p = { it - warm + 1, iters, failed_iters, dur,
						 messages };
			r->o->progress(r->o->progress_ctx, &p);
		}
	}
	pg_latency_metrics(out, lat, n_lat);
	json_object_set_new(out, "failed_iterations", json_integer((json_int_t)failed_iters));
	{
		struct pg_client_health h = {
			.busy_fraction = dur > 0 ? busy / dur : 0,
			.new_connections = conns,
			.burst = true,
			.duration_s = dur,
			.read_delay_p99_ms = read_delay * 1000,
		};
		pg_client_keys(out, traces, total, &h);
	}
done:
	release_traces(traces, total);
	free(scratch);
	free(reqs);
	free(lat);
	return rc;
}

/* Set r up for the point: its prompts and request bodies, or with warmup
 * > 0 that many prompts of the same workload drawn with another seed. */
static int prepare(struct run *r, const struct pg_point *pt, const struct pg_loadgen_opts *o,
		   size_t warmup, struct pg_error *err)
{
	const struct pg_test *t = pt->test;
	struct pg_test own = *t;
	size_t n_prompts;
	int rc;

	if (!o->base_url)
		return pg_error_set(err, PG_ECONFIG, "%s: no server URL", t->name);
	switch (t->kind) {
	case PG_SUITE_LATENCY:
		if (t->batch_size < 1 || t->iterations < 1)
			return pg_error_set(err, PG_ECONFIG,
					    "%s: batch_size and iterations must be >= 1", t->name);
		n_prompts = (size_t)t->batch_size *
			    (size_t)(t->iterations +
				     (t->warmup_iterations > 0 ? t->warmup_iterations : 0));
		/* exact lengths, as vllm bench latency: a copy of the test's
		 * dataset without range or prefix */
		own.dataset.kind = PG_DATASET_RANDOM;
		own.dataset.range_ratio = 0;
		own.dataset.prefix_len = 0;
		break;
	default:
		if (t->num_prompts < 1)
			return pg_error_set(err, PG_ECONFIG, "%s: num_prompts must be >= 1",
					    t->name);
		n_prompts = (size_t)pg_point_num_prompts(pt);
	}
	if (warmup) {
		/* the same workload drawn with another seed: the warm-up caches
		 * none of the prompts the measured run sends */
		own.client.seed ^= WARMUP_SEED;
		n_prompts = warmup;
		r->max_output = WARMUP_MAX_OUTPUT;
	}
	rc = setup(r, &own, o, n_prompts, err);
	r->t = t;
	return rc;
}

int pg_loadgen_run(const struct pg_point *pt, const struct pg_loadgen_opts *o, json_t **out,
		   struct pg_error *err)
{
	const struct pg_test *t = pt->test;
	struct run r = { 0 };
	json_t *res = json_object();
	int rc;

	*out = NULL;
	if ((rc = prepare(&r, pt, o, 0, err)))
		goto done;
	switch (t->kind) {
	case PG_SUITE_LATENCY:
		rc = run_latency(&r, res, err);
		break;
	case PG_SUITE_THROUGHPUT:
		rc = run_throughput(&r, res, err);
		break;
	default:
		rc = t->dataset.kind == PG_DATASET_MULTI_TURN ? run_multi_turn(&r, pt, res, err)
							      : run_serving(&r, pt, res, err);
		break;
	}
done:
	release(&r);
	if (rc) {
		json_decref(res);
		return rc;
	}
	*out = res;
	return 0;
}

/* The most requests the point keeps in flight; 0: no cap. */
static size_t in_flight_cap(const struct pg_point *pt)
{
	const struct pg_test *t = pt->test;

	if (t->kind == PG_SUITE_LATENCY)
		return (size_t)t->batch_size;
	if (t->kind == PG_SUITE_THROUGHPUT)
		return t->throughput_max_concurrency > 0 ? (size_t)t->throughput_max_concurrency
							 : 0;
	return pt->max_concurrency > 0 ? (size_t)pt->max_concurrency : 0;
}

int pg_loadgen_warm_up(const struct pg_point *pt, const struct pg_loadgen_opts *o, size_t requests,
		       struct pg_warmup_report *rep, struct pg_error *err)
{
	const struct pg_test *t = pt->test;
	struct run r = { 0 };
	size_t cap = in_flight_cap(pt);
	struct pg_reqtrace *traces = NULL;
	struct pg_hl_request *reqs = NULL;
	struct pg_hl_run_opts ho;
	struct pg_hl_stats st;
	int rc;

	memset(rep, 0, sizeof(*rep));
	if (!requests)
		return 0;
	if (t->dataset.kind == PG_DATASET_MULTI_TURN)
		return pg_error_set(err, PG_ECONFIG,
				    "%s: multi_turn sessions take no warm-up requests", t->name);
	if ((rc = prepare(&r, pt, o, requests, err)))
		goto done;
	r.engine = pg_hl_new(cap ? cap : requests, err);
	if (!r.engine) {
		rc = PG_ERR;
		goto done;
	}
	if ((rc = warm_up(&r, min_size(cap ? cap : requests, PRECONNECT_MAX), 0, 0, NULL, err)))
		goto done;
	traces = pg_xcalloc(requests, sizeof(*traces));
	reqs = pg_xcalloc(requests, sizeof(*reqs));
	make_requests(reqs, traces, requests, 0, &r, NULL);
	run_opts(&ho, &r, cap, false);
	if ((rc = pg_hl_run(r.engine, reqs, requests, &ho, &st, err)))
		goto done;
	rep->requests = requests;
	rep->seconds = st.duration_s;
	for (size_t i = 0; i < requests; i++) {
		char key[32];
		const char *cat;
		if (pg_reqtrace_ok(&traces[i]))
			continue;
		cat = pg_reqtrace_category(&traces[i], key);
		/* as the run's own message says it: "disconnect: ..." */
		if (!rep->failed++)
			snprintf(rep->error, sizeof(rep->error), "%s: %s", cat,
				 traces[i].error ? traces[i].error : cat);
	}
	/* every one failing: the server cannot serve the point, and the
	 * measured run would only say so again */
	if (rep->failed == requests)
		rc = pg_error_set(err, PG_EINFRA, "warm-up: %s %zu request%s failed (%s)",
				  requests == 1 ? "its" : "all", requests, requests == 1 ? "" : "s",
				  rep->error);
done:
	release_traces(traces, traces ? requests : 0);
	free(reqs);
	release(&r);
	return rc;
}
