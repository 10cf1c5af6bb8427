/*
 * The mock server's event loop: one thread, one epoll set, edge-triggered
 * non-blocking sockets, and the engine model's deadlines as the only
 * timer (epoll_pwait2 takes a nanosecond timeout, and the thread's timer
 * slack is set to 1 ns so the kernel does not round wake-ups up).
 *
 * Memory per connection is one struct conn; input is parsed straight out of
 * a shared read buffer and only an unfinished request's bytes are copied
 * into the connection, output goes straight to the socket and only what the
 * kernel refused waits in the connection's buffer. A streamed token costs
 * no allocation: chunks are rendered into buffers the server reuses.
 */
#include "mockserver/server_io.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/jsonw.h"
#include "sys/fsutil.h"
#include "mockserver/api.h"
#include "mockserver/http.h"
#include "mockserver/metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define MAX_BODY      ((size_t)32 << 20)
#define READ_BUF_SIZE 65536
#define MAX_EVENTS    512
#define OUT_KEEP_CAP  65536
#define LATE_BUCKETS  65536 /* 1 us each; the last one holds everything above */

struct record {
	uint64_t serial;
	char *request_id;
	const char *endpoint;
	bool stream;
	int status;
	const char *outcome;
	enum pg_engine_fault fault;
	int64_t received_ns;
	int64_t admitted_ns;
	int64_t prompt_tokens;
	int64_t completion_tokens;
	size_t n, cap;
	int64_t *deadline_ns;
	int64_t *sent_ns;
	int32_t *tokens;
};

struct conn {
	int fd;
	bool dead;
	bool want_close; /* close once the output is flushed */
	bool lingering;  /* write side shut down; discard input until EOF */
	bool read_eof;
	bool sent_continue;
	/* closed at this instant unless a whole request arrived: set when the
	 * connection opens and after each answer, INT64_MAX while a
	 * generation is in progress (--idle-timeout-ms) */
	int64_t idle_deadline;
	struct pg_buf in;  /* an unfinished request's bytes (usually empty) */
	struct pg_buf out; /* what the kernel did not take yet */
	size_t out_off;

	/* the generation request in progress (one at a time: HTTP/1.1 answers
	 * in order, so pipelined requests wait in `in`) */
	bool active;
	bool keep_alive;
	bool streaming;
	bool chunked;
	struct pg_engine_seq *seq;
	enum pg_engine_fault fault;
	int64_t fault_at;
	struct pg_mock_stream stream;
	int64_t received_ns;
	int64_t tokens_sent;
	struct record *rec;
	char id[72];
	/* the prompt's block hashes (--prefix-cache-blocks): its answer's
	 * blocks join the cache when it ends */
	struct pg_prefix_hasher prefix;

	struct conn *prev, *next;
	struct conn *dead_next;
};

struct stats {
	uint64_t accepted, open, peak_open, idle_timeouts;
	uint64_t received, finished, ok, rejected, http_500, disconnects, stalls, malformed,
		stream_errors, client_closed, other_requests;
	uint64_t in_flight, peak_in_flight;
	uint64_t tokens_sent, messages_sent, writes_blocked;
};

struct server {
	const struct pg_mock_server_config *cfg;
	struct pg_mock_model model;
	struct pg_buf model_json;
	struct pg_engine *engine;
	struct pg_prefix_cache *prefix; /* --prefix-cache-blocks, or NULL */
	int epfd, listen_fd, signal_fd, spare_fd;
	int timer_fd; /* only where epoll_pwait2 is missing */
	int64_t timer_armed;
	bool listening, listener_closed;
	int port;
	int64_t start_ns, ready_at, exit_at, stop_at;
	long startup_ms;    /* pg_mock_startup_ms */
	bool warm;          /* --cache-dir held a previous start's marker */
	int64_t idle_ns;    /* --idle-timeout-ms; 0: never */
	int64_t next_sweep; /* when idle connections are looked for next */
	int64_t created;
	bool stopping;
	const char *stop_reason;
	sigset_t old_mask;
	struct conn *conns;
	struct conn *dead;
	char *rbuf;
	struct pg_buf out, scratch, body;
	struct stats st;
	struct record **records;
	size_t n_records, cap_records;
	uint64_t records_bytes;
	uint32_t *late_hist;
	uint64_t late_n;
	int64_t late_max;
};

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void logf_(struct server *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(struct server *s, const char *fmt, ...)
{
	va_list ap;

	if (!s->cfg->log)
		return;
	va_start(ap, fmt);
	fputs("perfgate mock-server: ", s->cfg->log);
	vfprintf(s->cfg->log, fmt, ap);
	fputc('\n', s->cfg->log);
	fflush(s->cfg->log);
	va_end(ap);
}

/* The connection waits for its next request from now on. */
static void idle_from_now(struct server *s, struct conn *c)
{
	c->idle_deadline = s->idle_ns > 0 ? mono_ns() + s->idle_ns : INT64_MAX;
}

static void stop(struct server *s, const char *reason)
{
	if (s->stopping)
		return;
	s->stopping = true;
	s->stop_reason = reason;
}

/* ---- timing records ---- */

static struct record *record_new(struct server *s, const char *endpoint, const char *request_id,
				 size_t request_id_len)
{
	struct record *r;

	if (!s->cfg->timing_log)
		return NULL;
	r = pg_xcalloc(1, sizeof(*r));
	s->records_bytes += sizeof(*r) + sizeof(r) + request_id_len;
	r->endpoint = endpoint;
	r->request_id = request_id ? pg_xstrndup(request_id, request_id_len) : NULL;
	r->admitted_ns = INT64_MIN;
	r->outcome = "ok";
	PG_ARRAY_PUSH(s->records, s->n_records, s->cap_records, r);
	return r;
}

static void record_reserve(struct server *s, struct record *r, int64_t messages)
{
	size_t cap = (size_t)(messages > 0 ? messages : 1);

	s->records_bytes += cap * (2 * sizeof(int64_t) + sizeof(int32_t));
	r->cap = cap;
	r->deadline_ns = pg_xmalloc(cap * sizeof(*r->deadline_ns));
	r->sent_ns = pg_xmalloc(cap * sizeof(*r->sent_ns));
	r->tokens = pg_xmalloc(cap * sizeof(*r->tokens));
}

static void record_message(struct record *r, int64_t deadline, int64_t sent, int64_t tokens)
{
	if (!r || r->n >= r->cap)
		return;
	r->deadline_ns[r->n] = deadline;
	r->sent_ns[r->n] = sent;
	r->tokens[r->n] = (int32_t)tokens;
	r->n++;
}

static void record_free(struct record *r)
{
	free(r->request_id);
	free(r->deadline_ns);
	free(r->sent_ns);
	free(r->tokens);
	free(r);
}

static void json_ns_array(FILE *f, const int64_t *v, size_t n)
{
	fputc('[', f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, i ? ",%lld" : "%lld", (long long)v[i]);
	fputc(']', f);
}

static int write_timing_log(struct server *s, struct pg_error *err)
{
	struct pg_buf tmp = PG_BUF_INIT, id = PG_BUF_INIT;
	FILE *f;
	int rc = 0;

	pg_buf_printf(&tmp, "%s.tmp.%ld", s->cfg->timing_log, (long)getpid());
	f = fopen(tmp.ptr, "w");
	if (!f) {
		rc = pg_error_set(err, PG_ERR, "%s: %s", tmp.ptr, strerror(errno));
		goto done;
	}
	for (size_t i = 0; i < s->n_records; i++) {
		const struct record *r = s->records[i];
		pg_buf_reset(&id);
		if (r->request_id)
			pg_json_write_string(&id, r->request_id, strlen(r->request_id));
		else
			pg_buf_puts(&id, "null");
		fprintf(f,
			"{\"serial\":%llu,\"request_id\":%s,\"endpoint\":\"%s\",\"stream\":%s,"
			"\"status\":%d,\"outcome\":\"%s\",\"fault\":\"%s\",\"prompt_tokens\":%lld,"
			"\"completion_tokens\":%lld,\"received_ns\":%lld,",
			(unsigned long long)r->serial, id.ptr, r->endpoint,
			r->stream ? "true" : "false", r->status, r->outcome,
			pg_engine_fault_name(r->fault), (long long)r->prompt_tokens,
			(long long)r->completion_tokens, (long long)r->received_ns);
		if (r->admitted_ns == INT64_MIN)
			fputs("\"admitted_ns\":null,", f);
		else
			fprintf(f, "\"admitted_ns\":%lld,", (long long)r->admitted_ns);
		if (r->n)
			fprintf(f, "\"first_token_ns\":%lld,", (long long)r->sent_ns[0]);
		else
			fputs("\"first_token_ns\":null,", f);
		fputs("\"deadline_ns\":", f);
		json_ns_array(f, r->deadline_ns, r->n);
		fputs(",\"sent_ns\":", f);
		json_ns_array(f, r->sent_ns, r->n);
		fputs(",\"tokens\":[", f);
		for (size_t k = 0; k < r->n; k++)
			fprintf(f, k ? ",%d" : "%d", r->tokens[k]);
		fputs("]}\n", f);
	}
	if (fclose(f) != 0) {
		rc = pg_error_set(err, PG_ERR, "%s: %s", tmp.ptr, strerror(errno));
		unlink(tmp.ptr);
		goto done;
	}
	if (rename(tmp.ptr, s->cfg->timing_log) != 0) {
		rc = pg_error_set(err, PG_ERR, "%s: %s", s->cfg->timing_log, strerror(errno));
		unlink(tmp.ptr);
	}
done:
	pg_buf_release(&tmp);
	pg_buf_release(&id);
	return rc;
}

static void lateness_add(struct server *s, int64_t late_ns)
{
	int64_t us = late_ns < 0 ? 0 : late_ns / 1000;

	s->late_hist[us >= LATE_BUCKETS ? LATE_BUCKETS - 1 : us]++;
	s->late_n++;
	if (late_ns > s->late_max)
		s->late_max = late_ns;
}

/* Lateness percentile in microseconds (bucket lower bound). */
static double lateness_percentile(const struct server *s, double p)
{
	uint64_t rank, seen = 0;

	if (!s->late_n)
		return 0;
	rank = (uint64_t)(p / 100.0 * (double)(s->late_n - 1));
	for (size_t i = 0; i < LATE_BUCKETS; i++) {
		seen += s->late_hist[i];
		if (seen > rank)
			return (double)i;
	}
	return (double)(LATE_BUCKETS - 1);
}

/* ---- connections ---- */

static void conn_free(struct conn *c)
{
	pg_prefix_hasher_release(&c->prefix);
	pg_buf_release(&c->in);
	pg_buf_release(&c->out);
	free(c);
}

static bool limit_reached(const struct server *s)
{
	return s->cfg->max_requests > 0 && s->st.received >= (uint64_t)s->cfg->max_requests;
}

static void close_listener(struct server *s)
{
	if (s->listen_fd >= 0 && s->listening) {
		close(s->listen_fd);
		s->listen_fd = -1;
		s->listener_closed = true;
	}
}

/* A generation request reached its end (any outcome). */
static void finish_request(struct server *s, struct conn *c, const char *outcome, int status)
{
	struct record *r = c ? c->rec : NULL;

	if (r) {
		r->outcome = outcome;
		r->status = status;
		r->completion_tokens = c->tokens_sent;
	}
	if (s->cfg->log_requests && c)
		logf_(s, "request %llu %s: %d %s, %lld tokens",
		      (unsigned long long)c->stream.serial,
		      c->stream.api == PG_MOCK_CHAT ? "/v1/chat/completions" : "/v1/completions",
		      status, outcome, (long long)c->tokens_sent);
	s->st.finished++;
	if (c && c->active) {
		c->active = false;
		c->seq = NULL;
		c->rec = NULL;
		s->st.in_flight--;
		idle_from_now(s, c);
	}
	if (limit_reached(s) && s->st.in_flight == 0)
		stop(s, "max-requests");
}

static void conn_close(struct server *s, struct conn *c, const char *outcome)
{
	if (c->dead)
		return;
	if (c->active) {
		if (c->seq)
			pg_engine_cancel(s->engine, c->seq, mono_ns());
		if (!strcmp(outcome, "client_closed"))
			s->st.client_closed++;
		finish_request(s, c, outcome, 200);
	}
	close(c->fd);
	c->fd = -1;
	c->dead = true;
	if (c->prev)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->dead_next = s->dead;
	s->dead = c;
	s->st.open--;
}

static bool out_pending(const struct conn *c)
{
	return c->out.len > c->out_off;
}

/* Shut our side, then wait for the client's EOF before closing, so a close
 * with unread input cannot turn into a reset that destroys the response. */
static void begin_close(struct server *s, struct conn *c)
{
	if (c->dead || c->lingering)
		return;
	if (c->read_eof) {
		conn_close(s, c, "closed");
		return;
	}
	shutdown(c->fd, SHUT_WR);
	c->lingering = true;
	pg_buf_release(&c->in);
}

/* After send or recv failed (not EINTR, which the callers retry): false
 * when the socket only has no room or no data for now, true when the
 * connection failed (it is closed then). */
static bool conn_failed(struct server *s, struct conn *c)
{
	if (errno == EAGAIN || errno == EWOULDBLOCK)
		return false;
	conn_close(s, c, "client_closed");
	return true;
}

/* Send as much of data as the kernel takes now. Returns the bytes sent, or
 * -1 when the connection failed (it is closed then). */
static ssize_t send_some(struct server *s, struct conn *c, const char *data, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = send(c->fd, data + done, len - done, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return conn_failed(s, c) ? -1 : (ssize_t)done;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static void conn_write(struct server *s, struct conn *c, const char *data, size_t len)
{
	ssize_t done;

	if (c->dead)
		return;
	if (out_pending(c)) {
		pg_buf_add(&c->out, data, len);
		return;
	}
	done = send_some(s, c, data, len);
	if (done >= 0 && (size_t)done < len) {
		s->st.writes_blocked++;
		pg_buf_reset(&c->out);
		c->out_off = 0;
		pg_buf_add(&c->out, data + done, len - (size_t)done);
	}
}

static void conn_flush(struct server *s, struct conn *c)
{
	ssize_t done;

	if (!out_pending(c))
		goto drained;
	done = send_some(s, c, c->out.ptr + c->out_off, c->out.len - c->out_off);
	if (done < 0)
		return;
	c->out_off += (size_t)done;
	if (out_pending(c))
		return;
drained:
	c->out_off = 0;
	if (c->out.cap > OUT_KEEP_CAP)
		pg_buf_release(&c->out);
	else
		pg_buf_reset(&c->out);
	if (c->want_close)
		begin_close(s, c);
}

/* ---- responses ---- */

static void respond(struct server *s, struct conn *c, int status, const char *content_type,
		    const char *body, size_t len, bool keep_alive, const char *extra_headers)
{
	struct pg_buf *o = &s->out;

	pg_buf_reset(o);
	pg_buf_printf(o, "HTTP/1.1 %d %s\r\nserver: perfgate-mock\r\n", status,
		      pg_http_reason(status));
	if (content_type)
		pg_buf_printf(o, "content-type: %s\r\n", content_type);
	pg_buf_printf(o, "content-length: %zu\r\n", len);
	if (!keep_alive)
		pg_buf_puts(o, "connection: close\r\n");
	if (extra_headers)
		pg_buf_puts(o, extra_headers);
	pg_buf_puts(o, "\r\n");
	pg_buf_add(o, body, len);
	conn_write(s, c, o->ptr, o->len);
	if (!keep_alive) {
		c->want_close = true;
		if (!out_pending(c))
			begin_close(s, c);
	}
}

static void respond_json(struct server *s, struct conn *c, int status, const struct pg_buf *body,
			 bool keep_alive, const char *extra_headers)
{
	respond(s, c, status, "application/json", body->ptr, body->len, keep_alive, extra_headers);
}

static void respond_error(struct server *s, struct conn *c, const struct pg_mock_error *e,
			  bool keep_alive, const char *extra_headers)
{
	pg_buf_reset(&s->body);
	pg_mock_error_body(e, &s->body);
	respond_json(s, c, e->status, &s->body, keep_alive, extra_headers);
}

static void stats_json(struct server *s, struct pg_buf *out)
{
	struct pg_engine_counts ec;
	const struct stats *st = &s->st;
	json_t *root;

#define I(v) ((json_int_t)(v))
	pg_engine_counts(s->engine, &ec);
	root = json_pack(
		"{s:s, s:f, s:{s:I, s:I, s:I, s:I},"
		" s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I},"
		" s:{s:I, s:I, s:I, s:I}, s:I, s:I, s:I, s:I, s:{s:I, s:f, s:f, s:f}}",
		"model", s->cfg->model, "uptime_s", (double)(mono_ns() - s->start_ns) / 1e9,
		"connections", "open", I(st->open), "peak", I(st->peak_open), "accepted",
		I(st->accepted), "idle_timeouts", I(st->idle_timeouts), "requests", "received",
		I(st->received), "finished", I(st->finished), "ok", I(st->ok), "rejected",
		I(st->rejected), "http_500", I(st->http_500), "disconnects", I(st->disconnects),
		"stalls", I(st->stalls), "malformed", I(st->malformed), "stream_errors",
		I(st->stream_errors), "client_closed", I(st->client_closed), "in_flight",
		I(st->in_flight), "peak_in_flight", I(st->peak_in_flight), "other",
		I(st->other_requests), "engine", "running", I(ec.running), "queued", I(ec.queued),
		"peak_running", I(ec.peak_running), "peak_queued", I(ec.peak_queued), "tokens_sent",
		I(st->tokens_sent), "messages_sent", I(st->messages_sent), "writes_blocked",
		I(st->writes_blocked), "timing_log_bytes", I(s->records_bytes), "lateness",
		"messages", I(s->late_n), "p50_us", lateness_percentile(s, 50), "p99_us",
		lateness_percentile(s, 99), "max_us", (double)s->late_max / 1e3);
#undef I
	{
		bool slow;
		double scale = pg_engine_session_scale(s->engine, &slow);
		json_object_set_new(root, "session",
				    json_pack("{s:f, s:b}", "scale", scale, "slow", slow));
	}
	pg_json_write(out, root, 0);
	json_decref(root);
}

/* Keep only characters that need no escaping in JSON or logs. */
static void set_response_id(struct server *s, struct conn *c, const struct pg_http_request *req,
			    uint64_t serial)
{
	size_t n = 0;

	if (req->request_id && req->request_id_len) {
		for (size_t i = 0; i < req->request_id_len && n + 1 < sizeof(c->id); i++) {
			char ch = req->request_id[i];
			c->id[n++] = (ch > 0x20 && ch < 0x7f && ch != '"' && ch != '\\') ? ch : '_';
		}
		c->id[n] = '\0';
		return;
	}
	snprintf(c->id, sizeof(c->id), "%016llx%016llx",
		 (unsigned long long)pg_engine_mix64(s->cfg->engine.seed ^ serial),
		 (unsigned long long)serial);
}

static void start_generation(struct server *s, struct conn *c, const struct pg_http_request *req,
			     enum pg_mock_api api)
{
	struct pg_mock_generation g;
	struct pg_mock_error e = { 0 };
	struct pg_engine_request er;
	struct pg_engine_plan plan;
	const char *endpoint = api == PG_MOCK_CHAT ? "/v1/chat/completions" : "/v1/completions";
	struct record *r;
	int64_t now = mono_ns();

	if (limit_reached(s) || s->stopping) {
		pg_mock_error_set(&e, 503, NULL,
				  "the mock server is shutting down (--max-requests reached)");
		respond_error(s, c, &e, false, NULL);
		return;
	}
	s->st.received++;
	if (limit_reached(s))
		close_listener(s);
	r = record_new(s, endpoint, req->request_id, req->request_id_len);
	if (r)
		r->received_ns = now;
	c->rec = r;
	c->tokens_sent = 0;
	c->keep_alive = req->keep_alive;

	if (pg_mock_parse_generation(&s->model, api, req->body, req->content_length, &g, &e)) {
		s->st.rejected++;
		if (r) {
			r->status = e.status;
			r->outcome = "rejected";
		}
		c->rec = NULL;
		pg_mock_generation_release(&g);
		respond_error(s, c, &e, req->keep_alive, NULL);
		finish_request(s, NULL, "rejected", e.status);
		return;
	}
	memset(&er, 0, sizeof(er));
	er.prompt_tokens = g.prompt_tokens;
	er.max_tokens = g.max_tokens;
	er.ignore_eos = g.ignore_eos;
	if (s->prefix) {
		er.has_cached = true;
		er.cached_tokens = pg_prefix_cache_lookup(s->prefix, g.prefix.blocks, g.prefix.n,
							  g.prompt_tokens);
	}
	pg_prefix_hasher_release(&c->prefix);
	c->prefix = g.prefix; /* moved: the answer's blocks follow on */
	pg_prefix_hasher_init(&g.prefix);
	pg_mock_generation_release(&g);

	c->active = true;
	s->st.in_flight++;
	if (s->st.in_flight > s->st.peak_in_flight)
		s->st.peak_in_flight = s->st.in_flight;
	c->received_ns = now;
	c->streaming = g.stream;
	c->chunked = req->minor_version >= 1;
	if (!c->chunked)
		c->keep_alive = false;
	c->seq = pg_engine_submit(s->engine, now, &er, c, &plan);
	set_response_id(s, c, req, plan.serial);
	c->stream = (struct pg_mock_stream){
		.api = api,
		.id = c->id,
		.model_json = s->model_json.ptr,
		.created = s->created + (now - s->start_ns) / 1000000000,
		.prompt_tokens = g.prompt_tokens,
		.prompt_details = er.has_cached,
		.cached_tokens = er.cached_tokens,
		.include_usage = g.include_usage,
		.continuous_usage = g.continuous_usage,
		.params = &s->cfg->engine,
		.serial = plan.serial,
		.output_tokens = plan.output_tokens,
		.eos = plan.eos,
	};
	if (r) {
		r->serial = plan.serial;
		r->stream = g.stream;
		r->fault = plan.fault;
		r->prompt_tokens = g.prompt_tokens;
		r->status = 200;
		record_reserve(s, r, plan.messages);
	}
	c->fault = plan.fault;
	c->fault_at = plan.fault_at_message;
	if (plan.fault == PG_ENGINE_FAULT_STALL)
		s->st.stalls++;
	if (!c->seq) {
		s->st.http_500++;
		pg_mock_error_set(&e, 500, NULL, "simulated engine failure (--fault-500)");
		respond_error(s, c, &e, c->keep_alive, NULL);
		finish_request(s, c, "http_500", 500);
		return;
	}
	if (r)
		r->admitted_ns = pg_engine_seq_admitted_ns(c->seq);
	if (g.stream) {
		/* Headers go out at once, as uvicorn sends them before the first
		 * token: a client can tell first byte from first token. */
		pg_buf_reset(&s->out);
		pg_buf_puts(&s->out, "HTTP/1.1 200 OK\r\nserver: perfgate-mock\r\n"
				     "content-type: text/event-stream; charset=utf-8\r\n");
		if (c->chunked)
			pg_buf_puts(&s->out, "transfer-encoding: chunked\r\n");
		if (!c->keep_alive)
			pg_buf_puts(&s->out, "connection: close\r\n");
		pg_buf_puts(&s->out, "\r\n");
		conn_write(s, c, s->out.ptr, s->out.len);
	}
}

/* The fault_stream_error fault: vLLM's in-stream error event, or a 500 for
 * a non-streaming request, in place of this message. The request ends. */
static void stream_error(struct server *s, struct conn *c, const struct pg_engine_event *ev)
{
	struct pg_mock_error e = { 0 };

	if (c->seq)
		pg_engine_cancel(s->engine, c->seq, ev->deadline_ns);
	c->seq = NULL;
	s->st.stream_errors++;
	pg_mock_error_set(&e, 500, NULL, "simulated generation error (--fault-stream-error)");
	if (c->streaming) {
		pg_buf_reset(&s->out);
		pg_mock_stream_error(&e, c->chunked, &s->scratch, &s->out);
		conn_write(s, c, s->out.ptr, s->out.len);
		finish_request(s, c, "stream_error", 200);
		if (!c->keep_alive) {
			c->want_close = true;
			if (!out_pending(c))
				begin_close(s, c);
		}
	} else {
		finish_request(s, c, "stream_error", 500);
		respond_error(s, c, &e, c->keep_alive, NULL);
	}
}

/* A whole answer: its tokens' blocks (the prompt's chain carried on)
 * join the prefix cache, as the engine keeps the KV of what it generated,
 * so the conversation's next turn finds it. The EOS token has no text: a
 * client cannot send it back, so it ends the chain. */
static void cache_answer(struct server *s, struct conn *c)
{
	size_t from = c->prefix.n;
	int64_t n = c->stream.output_tokens - (c->stream.eos ? 1 : 0);

	for (int64_t i = 0; i < n; i++)
		pg_prefix_hasher_add(&c->prefix,
				     pg_engine_token_id(&s->cfg->engine, c->stream.serial, i));
	pg_prefix_cache_store(s->prefix, c->prefix.blocks + from, c->prefix.n - from);
	pg_prefix_hasher_release(&c->prefix);
}

static void handle_engine_event(struct server *s, const struct pg_engine_event *ev)
{
	struct conn *c = ev->user;
	int64_t now = mono_ns();
	const char *outcome = "ok";

	if (c->dead || !c->active)
		return;
	if (c->rec && c->rec->admitted_ns == INT64_MIN && c->seq)
		c->rec->admitted_ns = pg_engine_seq_admitted_ns(c->seq);
	if (ev->last)
		c->seq = NULL; /* the engine has let go of it */
	if (ev->kind == PG_ENGINE_DISCONNECT) {
		s->st.disconnects++;
		finish_request(s, c, "disconnect", 200);
		conn_close(s, c, "disconnect");
		return;
	}
	if (c->fault == PG_ENGINE_FAULT_STREAM_ERROR && ev->message_index == c->fault_at) {
		stream_error(s, c, ev);
		return;
	}
	if (c->streaming) {
		pg_buf_reset(&s->out);
		if (c->fault == PG_ENGINE_FAULT_MALFORMED && ev->message_index == c->fault_at)
			pg_mock_stream_message_malformed(&c->stream, ev->first_token, ev->n_tokens,
							 ev->last, c->chunked, &s->scratch,
							 &s->out);
		else
			pg_mock_stream_message(&c->stream, ev->first_token, ev->n_tokens, ev->last,
					       c->chunked, &s->scratch, &s->out);
		now = mono_ns();
		conn_write(s, c, s->out.ptr, s->out.len);
		s->st.messages_sent++;
		lateness_add(s, now - ev->deadline_ns);
	}
	record_message(c->rec, ev->deadline_ns, now, ev->n_tokens);
	c->tokens_sent += ev->n_tokens;
	s->st.tokens_sent += (uint64_t)ev->n_tokens;
	if (!ev->last || c->dead)
		return;

	if (c->fault == PG_ENGINE_FAULT_MALFORMED) {
		s->st.malformed++;
		outcome = "malformed";
	} else {
		s->st.ok++;
		if (s->prefix)
			cache_answer(s, c);
	}
	if (!c->streaming) {
		pg_buf_reset(&s->body);
		pg_mock_full_response(&c->stream, &s->body);
		if (c->fault == PG_ENGINE_FAULT_MALFORMED)
			pg_buf_truncate(&s->body, s->body.len / 2);
		lateness_add(s, mono_ns() - ev->deadline_ns);
		finish_request(s, c, outcome, 200);
		respond_json(s, c, 200, &s->body, c->keep_alive, NULL);
	} else {
		finish_request(s, c, outcome, 200);
		if (!c->keep_alive) {
			c->want_close = true;
			if (!out_pending(c))
				begin_close(s, c);
		}
	}
}

/* ---- requests ---- */

static bool path_is(const struct pg_http_request *r, const char *p)
{
	return strlen(p) == r->path_len && !memcmp(r->path, p, r->path_len);
}

static void dispatch(struct server *s, struct conn *c, const struct pg_http_request *req)
{
	/* clang-format off */
	static const struct {
		const char *path;
		enum pg_http_method method;
	} routes[] = {
		{ "/health", PG_HTTP_GET },
		{ "/version", PG_HTTP_GET },
		{ "/v1/models", PG_HTTP_GET },
		{ "/mock/stats", PG_HTTP_GET },
		{ "/metrics", PG_HTTP_GET },
		{ "/tokenize", PG_HTTP_POST },
		{ "/detokenize", PG_HTTP_POST },
		{ "/v1/completions", PG_HTTP_POST },
		{ "/v1/chat/completions", PG_HTTP_POST },
	};
	/* clang-format on */
	struct pg_mock_error e = { 0 };
	bool keep_alive = req->keep_alive && !s->stopping;
	size_t i;

	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		if (path_is(req, routes[i].path) &&
		    !(s->cfg->no_metrics && path_is(req, "/metrics")))
			break;
	if (i == sizeof(routes) / sizeof(routes[0])) {
		s->st.other_requests++;
		pg_mock_error_set(&e, 404, NULL, "Not Found: %.*s", (int)req->path_len, req->path);
		respond_error(s, c, &e, keep_alive, NULL);
		return;
	}
	if (req->method != routes[i].method) {
		s->st.other_requests++;
		pg_mock_error_set(&e, 405, NULL, "Method Not Allowed: %.*s %s",
				  (int)req->method_len, req->method_str, routes[i].path);
		respond_error(s, c, &e, keep_alive,
			      routes[i].method == PG_HTTP_GET ? "allow: GET\r\n"
							      : "allow: POST\r\n");
		return;
	}
	if (routes[i].method == PG_HTTP_POST && i >= 7) {
		start_generation(s, c, req,
				 path_is(req, "/v1/chat/completions") ? PG_MOCK_CHAT
								      : PG_MOCK_COMPLETIONS);
		return;
	}
	s->st.other_requests++;
	pg_buf_reset(&s->body);
	if (path_is(req, "/health")) {
		respond(s, c, 200, NULL, "", 0, keep_alive, NULL);
	} else if (path_is(req, "/version")) {
		pg_buf_puts(&s->body, "{\"version\":\"perfgate-mock-" PERFGATE_VERSION "\"}");
		respond_json(s, c, 200, &s->body, keep_alive, NULL);
	} else if (path_is(req, "/v1/models")) {
		pg_mock_models(&s->model, s->created, &s->body);
		respond_json(s, c, 200, &s->body, keep_alive, NULL);
	} else if (path_is(req, "/mock/stats")) {
		stats_json(s, &s->body);
		respond_json(s, c, 200, &s->body, keep_alive, NULL);
	} else if (path_is(req, "/metrics")) {
		struct pg_engine_counts ec;
		pg_engine_counts(s->engine, &ec);
		pg_mock_metrics_text(&s->body, s->cfg->model, &ec);
		respond(s, c, 200, "text/plain; version=0.0.4; charset=utf-8", s->body.ptr,
			s->body.len, keep_alive, NULL);
	} else {
		int rc = path_is(req, "/tokenize")
				 ? pg_mock_tokenize(&s->model, req->body, req->content_length,
						    &s->body, &e)
				 : pg_mock_detokenize(&s->model, req->body, req->content_length,
						      &s->body, &e);
		if (rc)
			respond_error(s, c, &e, keep_alive, NULL);
		else
			respond_json(s, c, 200, &s->body, keep_alive, NULL);
	}
}

/* Handle the complete requests at the start of buf; returns the bytes used. */
static size_t process_bytes(struct server *s, struct conn *c, const char *buf, size_t len)
{
	size_t used = 0;

	while (!c->dead && !c->active && !c->want_close && !c->lingering && used < len) {
		struct pg_http_request req;
		const char *why = "";
		int status = 0;
		int rc = pg_http_parse_request(buf + used, len - used, MAX_BODY, &req, &status,
					       &why);

		if (rc == PG_HTTP_INCOMPLETE) {
			if (req.head_len && req.expect_continue && !c->sent_continue) {
				c->sent_continue = true;
				conn_write(s, c, "HTTP/1.1 100 Continue\r\n\r\n", 25);
			}
			break;
		}
		if (rc == PG_HTTP_BAD) {
			struct pg_mock_error e = { 0 };
			pg_mock_error_set(&e, status, NULL, "%s", why);
			s->st.other_requests++;
			respond_error(s, c, &e, false, NULL);
			return len;
		}
		c->sent_continue = false;
		dispatch(s, c, &req);
		used += req.total_len;
		/* answered (or a generation started): the clock restarts */
		if (c->active)
			c->idle_deadline = INT64_MAX;
		else
			idle_from_now(s, c);
	}
	return used;
}

static void conn_process_buffered(struct server *s, struct conn *c)
{
	size_t used, rest;

	if (!c->in.len)
		return;
	used = process_bytes(s, c, c->in.ptr, c->in.len);
	/* a bad request closes the connection, which drops what was buffered */
	if (c->dead || c->lingering || used > c->in.len)
		return;
	rest = c->in.len - used;
	if (rest == 0) {
		pg_buf_release(&c->in);
	} else if (used) {
		memmove(c->in.ptr, c->in.ptr + used, rest);
		pg_buf_truncate(&c->in, rest);
	}
}

static void conn_read(struct server *s, struct conn *c)
{
	for (;;) {
		ssize_t n;
		if (c->dead)
			return;
		/* While a response is in progress, pipelined bytes wait in the
		 * socket once a full request's worth is buffered. */
		if (c->active && c->in.len > PG_HTTP_MAX_HEAD + MAX_BODY)
			return;
		n = recv(c->fd, s->rbuf, READ_BUF_SIZE, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			if (conn_failed(s, c))
				return;
			break;
		}
		if (n == 0) {
			c->read_eof = true;
			break;
		}
		if (c->lingering)
			continue;
		if (!c->in.len && !c->active) {
			size_t used = process_bytes(s, c, s->rbuf, (size_t)n);
			if (!c->dead && used < (size_t)n && !c->lingering)
				pg_buf_add(&c->in, s->rbuf + used, (size_t)n - used);
		} else {
			pg_buf_add(&c->in, s->rbuf, (size_t)n);
			if (!c->active)
				conn_process_buffered(s, c);
		}
	}
	if (c->read_eof) {
		/* The client went away (or half-closed, which HTTP clients do
		 * not do mid-request): a stream in progress is cancelled. */
		if (c->active || c->lingering || !out_pending(c))
			conn_close(s, c, "client_closed");
		else
			c->want_close = true;
	}
}

/* After a generation request ended on a live keep-alive connection,
 * answer what was pipelined behind it. */
static void conn_resume(struct server *s, struct conn *c)
{
	if (c->dead || c->active || c->want_close || c->lingering)
		return;
	conn_process_buffered(s, c);
	if (!c->dead && !c->active)
		conn_read(s, c);
}

/* ---- setup ---- */

static bool is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
			return true;
		return IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && in6->sin6_addr.s6_addr[12] == 127;
	}
	return false;
}

int pg_mock_bind(const struct pg_mock_server_config *cfg, int sock_flags, int *fd, long *port,
		 struct pg_error *err)
{
	struct addrinfo hints = { 0 }, *res = NULL;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char service[16];
	int one = 1, gai, rc = 0;

	*fd = -1;
	if (cfg->port < 0 || cfg->port > 65535)
		return pg_error_set(err, PG_ECONFIG, "--port %ld: expected 0..65535", cfg->port);
	snprintf(service, sizeof(service), "%ld", cfg->port);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	gai = getaddrinfo(cfg->host, service, &hints, &res);
	if (gai)
		return pg_error_set(err, PG_ECONFIG, "--host %s: %s", cfg->host, gai_strerror(gai));
	if (!cfg->allow_remote && !is_loopback(res->ai_addr)) {
		rc = pg_error_set(
			err, PG_ECONFIG,
			"--host %s is not a loopback address; pass --allow-remote to serve "
			"other machines",
			cfg->host);
		goto done;
	}
	*fd = socket(res->ai_family, res->ai_socktype | sock_flags | SOCK_CLOEXEC, 0);
	if (*fd < 0) {
		rc = pg_error_set(err, PG_EINFRA, "socket: %s", strerror(errno));
		goto done;
	}
	setsockopt(*fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(*fd, res->ai_addr, res->ai_addrlen) != 0) {
		int e = errno;
		rc = pg_error_set(err, PG_EINFRA, "cannot bind %s:%s: %s%s", cfg->host, service,
				  strerror(e),
				  e == EADDRINUSE && cfg->port
					  ? " (another server has it: --port 0 picks a free port, "
					    "and --port-file writes it down)"
					  : "");
		close(*fd);
		*fd = -1;
		goto done;
	}
	if (port && getsockname(*fd, (struct sockaddr *)&ss, &sl) == 0)
		*port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
						       : ((struct sockaddr_in *)&ss)->sin_port);
done:
	freeaddrinfo(res);
	return rc;
}

static int bind_socket(struct server *s, struct pg_error *err)
{
	long port = 0;
	int rc = pg_mock_bind(s->cfg, SOCK_NONBLOCK, &s->listen_fd, &port, err);

	s->port = (int)port;
	return rc;
}

static const char *timing_summary(const struct pg_engine_params *p, char *buf, size_t len)
{
	if (p->fixed_timing)
		snprintf(buf, len, "fixed timing: ttft %.3f ms, itl %.3f ms",
			 (double)p->ttft_ns / 1e6, (double)p->itl_ns / 1e6);
	else
		snprintf(buf, len,
			 "engine model: ttft %.3f ms + %.3f us/token, itl %.3f ms x (1 + %g x "
			 "others), max %u running",
			 (double)p->ttft_ns / 1e6, (double)p->prefill_ns_per_token / 1e3,
			 (double)p->itl_ns / 1e6, p->itl_growth, p->max_running);
	return buf;
}

static int start_listening(struct server *s, struct pg_error *err)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &s->listen_fd };
	char buf[256], session[96] = "", cold[80] = "";
	bool slow;
	double scale = pg_engine_session_scale(s->engine, &slow);

	if (listen(s->listen_fd, 65535) != 0)
		return pg_error_set(err, PG_EINFRA, "listen: %s", strerror(errno));
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->listen_fd, &ev) != 0)
		return pg_error_set(err, PG_EINFRA, "epoll_ctl: %s", strerror(errno));
	s->listening = true;
	/* the simulated compile cache: the next start with it is warm */
	if (s->cfg->cache_dir && s->cfg->warm_startup_ms >= 0 && !s->warm) {
		char marker[4096];
		int fd;
		snprintf(marker, sizeof(marker), "%s/%s", s->cfg->cache_dir, PG_MOCK_WARM_MARKER);
		fd = open(marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
	}
	if (s->cfg->port_file) {
		char text[16];
		int n = snprintf(text, sizeof(text), "%d\n", s->port);
		if (pg_file_write_atomic(s->cfg->port_file, text, (size_t)n, err))
			return pg_error_prefix(err, "--port-file");
	}
	/* the session's draw, so a run's noise can be read back from its logs */
	if (scale != 1 || s->cfg->engine.jitter > 0)
		snprintf(session, sizeof(session), ", session x%.4f%s, jitter %g", scale,
			 slow ? " (slow node)" : "", s->cfg->engine.jitter);
	if (s->cfg->engine.cold_requests)
		snprintf(cold, sizeof(cold), ", first %llu requests x%g (cold)",
			 (unsigned long long)s->cfg->engine.cold_requests,
			 1 + s->cfg->engine.cold_slowdown);
	logf_(s, "listening on %s:%d, model %s, %s%s%s", s->cfg->host, s->port, s->cfg->model,
	      timing_summary(&s->cfg->engine, buf, sizeof(buf)), session, cold);
	return 0;
}

static void accept_all(struct server *s)
{
	for (;;) {
		struct epoll_event ev;
		struct conn *c;
		int one = 1;
		int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if ((errno == EMFILE || errno == ENFILE) && s->spare_fd >= 0) {
				/* Out of descriptors: take the connection with the
				 * spare and close it, so the client hears a refusal
				 * instead of waiting in the backlog for ever. */
				close(s->spare_fd);
				fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
				if (fd >= 0)
					close(fd);
				s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
				continue;
			}
			return;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c = pg_xcalloc(1, sizeof(*c));
		c->fd = fd;
		pg_buf_init(&c->in);
		pg_buf_init(&c->out);
		idle_from_now(s, c);
		ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
		ev.data.ptr = c;
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
			close(fd);
			free(c);
			continue;
		}
		c->next = s->conns;
		if (s->conns)
			s->conns->prev = c;
		s->conns = c;
		s->st.accepted++;
		if (++s->st.open > s->st.peak_open)
			s->st.peak_open = s->st.open;
	}
}

static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int setup(struct server *s, const struct pg_mock_server_config *cfg, struct pg_error *err)
{
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t mask;

	s->cfg = cfg;
	s->listen_fd = s->signal_fd = s->epfd = s->spare_fd = s->timer_fd = -1;
	s->start_ns = mono_ns();
	s->created = (int64_t)time(NULL);
	s->model.name = cfg->model;
	s->model.max_model_len = cfg->max_model_len;
	s->model.vocab_size = cfg->engine.vocab_size;
	pg_json_write_string(&s->model_json, cfg->model, strlen(cfg->model));
	s->rbuf = pg_xmalloc(READ_BUF_SIZE);
	s->late_hist = pg_xcalloc(LATE_BUCKETS, sizeof(*s->late_hist));
	s->engine = pg_engine_new(&cfg->engine);
	s->model.prefix_blocks = cfg->prefix_cache_blocks > 0;
	if (cfg->prefix_cache_blocks > 0)
		s->prefix = pg_prefix_cache_new((size_t)cfg->prefix_cache_blocks);

	/* first of all: from here a SIGTERM is a clean stop, however early */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, &s->old_mask);
	s->signal_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->signal_fd < 0 || s->epfd < 0)
		return pg_error_set(err, PG_EINFRA, "signalfd/epoll: %s", strerror(errno));
	ev.data.ptr = &s->signal_fd;
	epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->signal_fd, &ev);

	raise_fd_limit();
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (bind_socket(s, err))
		return err->code;
	s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	{
		bool warm = false;
		if (cfg->cache_dir && cfg->warm_startup_ms >= 0) {
			char marker[4096];
			snprintf(marker, sizeof(marker), "%s/%s", cfg->cache_dir,
				 PG_MOCK_WARM_MARKER);
			warm = access(marker, F_OK) == 0;
		}
		s->startup_ms = pg_mock_startup_ms(cfg, warm);
		s->warm = warm;
	}
	s->ready_at = cfg->never_ready ? INT64_MAX : s->start_ns + s->startup_ms * 1000000;
	s->exit_at = cfg->exit_after_ms >= 0 ? s->start_ns + cfg->exit_after_ms * 1000000
					     : INT64_MAX;
	s->idle_ns = cfg->idle_timeout_ms > 0 ? cfg->idle_timeout_ms * 1000000 : 0;
	s->stop_at = cfg->max_seconds > 0 ? s->start_ns + (int64_t)(cfg->max_seconds * 1e9)
					  : INT64_MAX;
	if (cfg->never_ready)
		logf_(s, "bound %s:%d, never becoming ready (--never-ready)", cfg->host, s->port);
	else if (s->startup_ms > 0)
		logf_(s, "bound %s:%d, listening in %ld ms (%s start)", cfg->host, s->port,
		      s->startup_ms, s->warm ? "warm" : "cold");
	return 0;
}

static void close_all(struct server *s)
{
	struct conn *c, *next;

	for (c = s->conns; c; c = next) {
		next = c->next;
		conn_close(s, c, "shutdown");
	}
}

static void teardown(struct server *s)
{
	struct conn *c, *next;

	close_all(s);
	for (c = s->dead; c; c = next) {
		next = c->dead_next;
		conn_free(c);
	}
	s->dead = NULL;
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->signal_fd >= 0)
		close(s->signal_fd);
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->spare_fd >= 0)
		close(s->spare_fd);
	if (s->timer_fd >= 0)
		close(s->timer_fd);
	if (s->signal_fd >= 0 || s->epfd >= 0)
		sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
	for (size_t i = 0; i < s->n_records; i++)
		record_free(s->records[i]);
	free(s->records);
	pg_engine_free(s->engine);
	pg_prefix_cache_free(s->prefix);
	pg_buf_release(&s->model_json);
	pg_buf_release(&s->out);
	pg_buf_release(&s->scratch);
	pg_buf_release(&s->body);
	free(s->rbuf);
	free(s->late_hist);
}

static void on_signal(struct server *s)
{
	struct signalfd_siginfo si;

	while (read(s->signal_fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		stop(s, si.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM");
}

static void fire_due(struct server *s)
{
	struct pg_engine_event ev;
	int64_t now = mono_ns();

	while (pg_engine_poll(s->engine, now, &ev)) {
		struct conn *c = ev.user;
		handle_engine_event(s, &ev);
		if (ev.last)
			conn_resume(s, c);
	}
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/*
 * --idle-timeout-ms: a connection that has not sent a whole request
 * within the timeout of opening or of its last answer is closed -- with a
 * 408 when it sent part of one (a client that trickles a request a byte
 * at a time gains nothing), silently when it sent nothing (an idle
 * keep-alive), at once when it would not even take our answer. A
 * connection with a generation in progress is never idle. Looked for
 * every quarter of the timeout (at most every 250 ms): O(connections),
 * no timer per connection.
 */
static void sweep_idle(struct server *s, int64_t now)
{
	int64_t every;

	if (s->idle_ns <= 0)
		return;
	every = s->idle_ns / 4 < 250000000 ? s->idle_ns / 4 : 250000000;
	s->next_sweep = now + (every > 1000000 ? every : 1000000);
	for (struct conn *c = s->conns, *next; c; c = next) {
		next = c->next;
		if (c->dead || c->active || c->idle_deadline > now)
			continue;
		s->st.idle_timeouts++;
		if (c->in.len && !c->lingering && !c->want_close && !out_pending(c)) {
			struct pg_mock_error e = { 0 };
			pg_mock_error_set(&e, 408, NULL,
					  "Request Timeout: no whole request within %lld ms",
					  (long long)(s->idle_ns / 1000000));
			/* at most one more timeout to take it and leave */
			idle_from_now(s, c);
			respond_error(s, c, &e, false, NULL);
		} else {
			conn_close(s, c, "idle");
		}
	}
}

/*
 * Wait for I/O until the absolute deadline wake. epoll_pwait2 takes a
 * nanosecond timeout; where it is missing (kernels before 5.11, valgrind)
 * an absolute CLOCK_MONOTONIC timerfd in the epoll set does the same.
 */
static int wait_events(struct server *s, struct epoll_event *events, int64_t wake)
{
	struct timespec ts, *tsp = NULL;
	int n;

	if (s->timer_fd < 0) {
		if (wake != INT64_MAX) {
			int64_t d = wake - mono_ns();
			if (d < 0)
				d = 0;
			ts.tv_sec = d / 1000000000;
			ts.tv_nsec = d % 1000000000;
			tsp = &ts;
		}
		n = epoll_pwait2(s->epfd, events, MAX_EVENTS, tsp, NULL);
		if (n >= 0 || errno != ENOSYS)
			return n;
		s->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		if (s->timer_fd < 0)
			return -1;
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &s->timer_fd };
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->timer_fd, &ev) != 0)
			return -1;
		s->timer_armed = INT64_MAX;
	}
	if (wake != s->timer_armed) {
		struct itimerspec its = { { 0, 0 }, { 0, 0 } };
		if (wake != INT64_MAX) {
			/* 0 would disarm: a deadline at the clock's origin is 1 ns */
			int64_t w = wake > 0 ? wake : 1;
			its.it_value.tv_sec = w / 1000000000;
			its.it_value.tv_nsec = w % 1000000000;
		}
		if (timerfd_settime(s->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) != 0)
			return -1;
		s->timer_armed = wake;
	}
	return epoll_wait(s->epfd, events, MAX_EVENTS, -1);
}

static int loop(struct server *s, struct pg_error *err)
{
	struct epoll_event events[MAX_EVENTS];

	while (!s->stopping) {
		int64_t now = mono_ns(), wake;
		int n;

		if (now >= s->exit_at) {
			logf_(s, "simulated crash after %ld ms (--exit-after-ms), exit code %d",
			      s->cfg->exit_after_ms, s->cfg->exit_code);
			_exit(s->cfg->exit_code);
		}
		if (!s->listening && !s->listener_closed && now >= s->ready_at &&
		    start_listening(s, err))
			return err->code;
		if (now >= s->stop_at) {
			stop(s, "max-seconds");
			break;
		}
		fire_due(s);
		if (s->stopping)
			break;
		if (now >= s->next_sweep)
			sweep_idle(s, now);

		wake = min64(pg_engine_next_deadline(s->engine), s->exit_at);
		wake = min64(wake, s->stop_at);
		if (s->idle_ns > 0 && s->conns)
			wake = min64(wake, s->next_sweep);
		if (!s->listening && !s->listener_closed)
			wake = min64(wake, s->ready_at);
		n = wait_events(s, events, wake);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return pg_error_set(err, PG_EINFRA, "epoll_wait: %s", strerror(errno));
		}
		for (int i = 0; i < n; i++) {
			void *p = events[i].data.ptr;
			uint32_t e = events[i].events;
			struct conn *c;

			if (p == &s->listen_fd) {
				if (s->listen_fd >= 0)
					accept_all(s);
				continue;
			}
			if (p == &s->signal_fd) {
				on_signal(s);
				continue;
			}
			if (p == &s->timer_fd) {
				uint64_t expirations;
				if (read(s->timer_fd, &expirations, sizeof(expirations)) < 0)
					s->timer_armed = INT64_MIN; /* re-arm next time */
				else
					s->timer_armed = INT64_MAX;
				continue;
			}
			c = p;
			if (c->dead)
				continue;
			if (e & (EPOLLERR | EPOLLHUP)) {
				conn_close(s, c, "client_closed");
				continue;
			}
			if (e & EPOLLOUT)
				conn_flush(s, c);
			if (!c->dead && (e & (EPOLLIN | EPOLLRDHUP)))
				conn_read(s, c);
		}
		while (s->dead) {
			struct conn *c = s->dead;
			s->dead = c->dead_next;
			conn_free(c);
		}
	}
	return 0;
}

int pg_mock_server_run(const struct pg_mock_server_config *cfg, struct pg_error *err)
{
	struct server s;
	int rc;

	memset(&s, 0, sizeof(s));
	pg_buf_init(&s.model_json);
	pg_buf_init(&s.out);
	pg_buf_init(&s.scratch);
	pg_buf_init(&s.body);
	rc = setup(&s, cfg, err);
	if (!rc)
		rc = loop(&s, err);
	if (!rc && s.stop_reason) {
		logf_(&s,
		      "stopping (%s) after %.3f s: %llu requests (%llu ok, %llu failed or cut), "
		      "%llu tokens sent, peak %llu in flight",
		      s.stop_reason, (double)(mono_ns() - s.start_ns) / 1e9,
		      (unsigned long long)s.st.received, (unsigned long long)s.st.ok,
		      (unsigned long long)(s.st.received - s.st.ok),
		      (unsigned long long)s.st.tokens_sent,
		      (unsigned long long)s.st.peak_in_flight);
	}
	/* Streams cut by the stop are recorded as such before the log is written. */
	close_all(&s);
	if (!rc && cfg->timing_log)
		rc = write_timing_log(&s, err);
	teardown(&s);
	return rc;
}
