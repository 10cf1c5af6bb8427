#include "loadgen/httpload_io.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "loadgen/http1.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/*
 * libcurl 7.x's read loop (readwrite_data in transfer.c) asks after every
 * read whether more bytes are waiting, and its socket filter answers with
 * poll(fd, 1, 0) (cf_socket_data_pending in cf-socket.c): one system call
 * per read, as many as the recvs themselves, that a client driven by
 * epoll readiness does not need. libcurl 8.15 dropped it (curl PR #17785,
 * "cf-socket: make socket data_pending a nop": readability is the event
 * loop's business); no option turns it off in the libcurl Debian 12
 * ships (7.88.1), so perfgate answers it, as 8.15 does, without the
 * system call: this definition of poll interposes libc's for the whole
 * process, and answers itself only a zero-timeout, read-only check of the
 * one socket whose readiness the event loop is handing to libcurl at
 * that moment (hl_ready_fd, set around that curl_multi_socket_action
 * call alone). Its answer, "nothing more waiting", only ends libcurl's
 * read loop: the loop's epoll is level-triggered, so bytes still in the
 * socket are reported by the next wait and read then, as the floor client
 * in bench/ reads them (one recv per readiness). Every other call goes to
 * the next poll (libc's, or a sanitizer's) unchanged.
 */
typedef int (*poll_fn)(struct pollfd *, nfds_t, int);

enum { ENGINE_OWN, ENGINE_CURL };

static _Thread_local int hl_ready_fd = -1;
static _Thread_local uint64_t hl_checks_answered;
static _Atomic(poll_fn) next_poll;

/* glibc declares poll's fds write-only (attribute access), which poll
 * itself, reading the events asked for, contradicts */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
int poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	poll_fn next = atomic_load_explicit(&next_poll, memory_order_relaxed);

	if (nfds == 1 && timeout == 0 && hl_ready_fd >= 0 && fds[0].fd == hl_ready_fd &&
	    (fds[0].events & POLLIN) && !(fds[0].events & POLLOUT)) {
		fds[0].revents = 0;
		hl_checks_answered++;
		return 0;
	}
	if (!next) {
		/* (dlsym into a function pointer: POSIX makes the cast work) */
		void *p = dlsym(RTLD_NEXT, "poll");
		memcpy(&next, &p, sizeof(p));
		if (!next) {
			errno = ENOSYS;
			return -1;
		}
		atomic_store_explicit(&next_poll, next, memory_order_relaxed);
	}
	return next(fds, nfds, timeout);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

struct slot;

/*
 * One keep-alive connection of perfgate's own read path (ENGINE_OWN):
 * libcurl opened it (CURLOPT_CONNECT_ONLY: DNS, TCP, TLS) and owns the
 * socket; perfgate writes the requests and reads the responses. It stays
 * in the epoll set while it lives (data.ptr is the conn), idle or not.
 */
struct conn {
	CURL *easy; /* kept only where libcurl reads (TLS, "own-easy"); NULL: the
		       socket is perfgate's alone */
	curl_socket_t fd;
	bool taken;        /* libcurl must not close fd: perfgate took it over */
	struct slot *slot; /* the request on it; NULL when idle */
	struct conn *next; /* the idle list */
	bool pooled;       /* sat in the idle pool before its request: the server may
			have closed it meanwhile */
	bool want_out;     /* EPOLLOUT registered (a request not fully written) */
	bool dead;         /* closed during an event batch: freed after it */
};

/* One in-flight transfer. Slots (and their easy handles and parsers) are
 * pooled: a finished slot goes back on the free list with its buffers. */
struct slot {
	CURL *easy;
	/* the own read path: the connection, the response parser, the
	 * request's bytes and how many went out, the deadline, the in-flight
	 * list in start order (deadlines are in that order too) */
	struct conn *conn;
	struct pg_http1 http;
	struct pg_buf req; /* the request line and headers */
	const char *body;  /* (borrowed from the run's request) */
	size_t body_len;
	size_t req_off; /* bytes of head and body sent */
	int64_t deadline;
	struct slot *older, *newer;
	int64_t read_ns; /* the timestamp of the bytes being parsed */
	size_t got;      /* response bytes received */
	const char *url; /* (borrowed from the run's options) */
	bool retried;
	struct pg_hl *h;
	struct pg_oai_resp resp;
	struct pg_reqtrace *trace;
	struct curl_slist id_header; /* x-request-id, chained to the shared headers */
	char id_buf[96];
	struct curl_slist extra_header; /* the request's own header line */
	size_t index;                   /* the request's index in the run */
	char errbuf[CURL_ERROR_SIZE];
	bool begun;
	size_t held; /* its response buffers' capacity, as counted in h->held */
	struct slot *next_free;
};

struct pg_hl {
	CURLM *multi;
	int epfd;
	int64_t curl_deadline; /* libcurl's timeout, absolute ns; -1: none */
	/* the loop's latest clock reading (absolute ns): what libcurl's timer
	 * callback and the between-events schedule check go by, so neither
	 * reads the clock again (microseconds old at most) */
	int64_t clock_ns;
	/* since when the socket event being handled has waited for the loop
	 * (absolute ns); -1 once its first body bytes recorded the delay */
	int64_t event_since;
	struct slot **slots;
	size_t n_slots, cap_slots;
	struct slot *free;
	size_t in_flight;
	uint64_t messages;
	long connects; /* new connections, summed over finished transfers */
	int64_t origin;
	bool poll_mode; /* curl_multi_poll + curl_multi_perform (the bench's comparison) */
	/* the own read path (ENGINE_OWN): the target's request line and Host
	 * header, how to read (recv, or curl_easy_recv for TLS), the idle
	 * connections, the in-flight list, and what finished since the loop
	 * last collected */
	int engine;
	bool easy_io; /* curl_easy_send/recv on plain http too ("own-easy") */
	bool tls;
	struct pg_buf head; /* "METHOD" comes first: the rest of the request line on */
	char *path, *host;
	size_t head_host; /* where the Host line starts in head */
	struct conn *idle;
	/* connections closed while a batch of events is handled: a later event
	 * of the batch may still name them, so they are freed after it */
	struct conn **graveyard;
	size_t n_graveyard, graveyard_cap;
	bool in_batch;
	char conn_key[256]; /* scheme://host:port the pooled connections go to */
	struct slot *oldest, *newest;
	size_t own_done, own_failed;
	/* the indices of the requests that ended since the last reap, for a
	 * request source's done (the own path ends requests as it reads) */
	size_t *own_ended, n_own_ended, own_ended_cap;
	int64_t own_release;
	int64_t timeout_ns;     /* per request; 0: none */
	bool connect_timed_out; /* in this run: no more connects are tried */
	const volatile sig_atomic_t *stop;
	char rbuf[16384];
	uint32_t *delay_hist; /* READ_DELAY_BUCKETS of READ_DELAY_BUCKET_NS, the last open-ended */
	int64_t delay_max;
	int64_t wait_from, wait_until; /* the loop's last wait for events (absolute ns) */
	/* for tests, which cannot rely on a machine's load (tests/bats/
	 * run_late.bats): a host that wakes the loop late from a timed-out
	 * wait (PERFGATE_TEST_LATE_WAKE_MS), a loop slow to handle each batch
	 * of events (PERFGATE_TEST_SLOW_LOOP_MS); 0: off */
	int64_t test_late_wake_ns, test_slow_loop_ns;
	/* the memory budget of one run: every slot's response buffers (SSE
	 * line and event, JSON body) together */
	size_t budget;
	size_t held, peak_held;
};

/* A slot keeps buffers up to this between requests (reused, no
 * allocation per request); larger ones go back to the allocator. */
#define SLOT_KEEP_BYTES 65536

/* The read-delay histogram: 10 us buckets up to 40 ms (16 KiB), enough to
 * tell a p99 from the 1 ms client_bound threshold; beyond, the maximum. */
#define READ_DELAY_BUCKET_NS 10000
#define READ_DELAY_BUCKETS   4096

struct curl_slist *pg_hl_add_bearer(struct curl_slist *headers, const char *api_key)
{
	struct pg_buf line = PG_BUF_INIT;

	if (!api_key || !*api_key)
		return headers;
	pg_buf_printf(&line, "Authorization: Bearer %s", api_key);
	headers = curl_slist_append(headers, line.ptr);
	memset(line.ptr, 0, line.len);
	pg_buf_release(&line);
	return headers;
}

void pg_hl_free_headers(struct curl_slist *headers)
{
	for (struct curl_slist *h = headers; h; h = h->next)
		if (!strncasecmp(h->data, "Authorization:", 14))
			memset(h->data, 0, strlen(h->data));
	curl_slist_free_all(headers);
}

static size_t collect(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	if (userdata)
		pg_buf_add(userdata, ptr, size * nmemb);
	return size * nmemb;
}

static int abort_on_stop(void *clientp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
			 curl_off_t ulnow)
{
	const volatile sig_atomic_t *stop = clientp;
	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return stop && *stop;
}

void pg_hl_easy_ca(CURL *e)
{
	/* an https server signed by a private CA (an internal endpoint): the
	 * bundle curl's command line and OpenSSL's tools take from the
	 * environment; libcurl itself only knows its built-in path */
	const char *ca = getenv("CURL_CA_BUNDLE");

	if (!ca || !*ca)
		ca = getenv("SSL_CERT_FILE");
	if (ca && *ca)
		curl_easy_setopt(e, CURLOPT_CAINFO, ca);
}

void pg_hl_easy_prepare(CURL *e, const char *url, const struct curl_slist *headers,
			struct pg_buf *resp, double timeout_s, const volatile sig_atomic_t *stop)
{
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, resp);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_PROXY, "");
	pg_hl_easy_ca(e);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_s > 0 ? (long)ceil(timeout_s * 1000) : 0L);
	/* libcurl calls this at least once a second, even while waiting */
	curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, abort_on_stop);
	curl_easy_setopt(e, CURLOPT_XFERINFODATA, (void *)stop);
	curl_easy_setopt(e, CURLOPT_NOPROGRESS, stop ? 0L : 1L);
}

int64_t pg_hl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int on_socket(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
	struct pg_hl *h = userp;
	struct epoll_event ev = { 0 };
	(void)easy;

	if (what == CURL_POLL_REMOVE) {
		if (socketp) {
			epoll_ctl(h->epfd, EPOLL_CTL_DEL, s, NULL);
			curl_multi_assign(h->multi, s, NULL);
		}
		return 0;
	}
	ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
	ev.data.fd = s;
	/* the kernel forgets a closed descriptor by itself, so a number libcurl
	 * reuses may or may not still be registered: either way works */
	if (socketp) {
		if (epoll_ctl(h->epfd, EPOLL_CTL_MOD, s, &ev) && errno == ENOENT)
			epoll_ctl(h->epfd, EPOLL_CTL_ADD, s, &ev);
	} else {
		if (epoll_ctl(h->epfd, EPOLL_CTL_ADD, s, &ev) && errno == EEXIST)
			epoll_ctl(h->epfd, EPOLL_CTL_MOD, s, &ev);
		curl_multi_assign(h->multi, s, (void *)1);
	}
	return 0;
}

static int on_timer(CURLM *multi, long timeout_ms, void *userp)
{
	struct pg_hl *h = userp;
	(void)multi;

	/* only remembered: the loop folds it into its epoll deadline, so a
	 * callback (two or three per read) costs neither a system call nor a
	 * clock read; libcurl's timeouts are whole milliseconds */
	h->curl_deadline = timeout_ms < 0 ? -1 : h->clock_ns + (int64_t)timeout_ms * 1000000;
	return 0;
}

/* The headers are in: start reading the response of the slot's request. */
static void slot_begin(struct slot *s)
{
	long code = 0;

	curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &code);
	pg_oai_resp_begin(&s->resp, s->trace, (int)code);
	s->begun = true;
}

/* What a slot's response buffers hold (their capacity: the memory). */
static size_t slot_bytes(const struct slot *s)
{
	return s->resp.sse.line.cap + s->resp.sse.data.cap + s->resp.sse.type.cap +
	       s->resp.body.cap;
}

/* Count the slot's buffers again after they may have grown or shrunk. */
static void slot_recount(struct pg_hl *h, struct slot *s)
{
	size_t now = slot_bytes(s);

	h->held = h->held - s->held + now;
	s->held = now;
	if (h->held > h->peak_held)
		h->peak_held = h->held;
}

/* Give a slot's large buffers back (after its request ended). */
static void slot_shrink(struct pg_hl *h, struct slot *s)
{
	if (s->held <= SLOT_KEEP_BYTES)
		return;
	pg_buf_release(&s->resp.sse.line);
	pg_buf_release(&s->resp.sse.data);
	pg_buf_release(&s->resp.sse.type);
	pg_buf_release(&s->resp.body);
	slot_recount(h, s);
}

static void delay_add(struct pg_hl *h, int64_t ns);

/* Body bytes read at abs (absolute ns): into the response's parser.
 * Returns 0, or -1 when the request failed (recorded in its trace). */
static int body_bytes(struct pg_hl *h, struct slot *s, int64_t abs, const char *ptr, size_t len)
{
	int64_t now = abs - h->origin;
	size_t before = s->trace->n_chunks;
	int rc;

	/* (the own path's message time can be the kernel's, older than the
	 * loop's last clock reading: the clock never goes back) */
	if (abs > h->clock_ns)
		h->clock_ns = abs;
	if (h->event_since >= 0) {
		/* the event's first bytes: how long they waited to be read */
		delay_add(h, abs - h->event_since);
		h->event_since = -1;
	}
	rc = pg_oai_resp_feed(&s->resp, now, ptr, len);
	slot_recount(h, s);
	/* each stream's event is capped (PG_SSE_MAX_EVENT_DEFAULT), but not
	 * what 64 of them hold together: a server that sends events without
	 * end on every stream is cut here, one stream at a time */
	if (!rc && h->held > h->budget) {
		pg_reqtrace_fail(s->trace, PG_FAIL_OTHER,
				 "the responses in flight held more than the run's memory budget "
				 "of %zu MiB for all streams together (this one %.1f MiB): a "
				 "server sending an event without end?",
				 h->budget >> 20, (double)s->held / (1 << 20));
		slot_shrink(h, s);
		return -1;
	}
	if (rc)
		return -1; /* the request failed (recorded): stop the transfer */
	h->messages += s->trace->n_chunks - before;
	return 0;
}

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct slot *s = userdata;
	size_t len = size * nmemb;
	/* the bytes' timestamp, taken before any parsing: libcurl hands over
	 * one call per HTTP chunk of the read, so one per message here */
	int64_t abs = pg_hl_now_ns();

	if (!s->begun)
		slot_begin(s);
	return body_bytes(s->h, s, abs, ptr, len) ? 0 : len;
}

/* A test's simulated delay (milliseconds in the environment), 0 unset. */
static int64_t env_ms_as_ns(const char *name)
{
	const char *v = getenv(name);
	double ms = v && *v ? strtod(v, NULL) : 0;

	return ms > 0 && ms < 10000 ? (int64_t)(ms * 1e6) : 0;
}

static void nap(int64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000), (long)(ns % 1000000000) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

struct pg_hl *pg_hl_new(size_t max_connections, struct pg_error *err)
{
	struct pg_hl *h = pg_xcalloc(1, sizeof(*h));
	struct rlimit rl;

	h->curl_deadline = -1;
	h->event_since = -1;
	pg_buf_init(&h->head);
	pg_hl_set_engine(h, getenv("PERFGATE_HTTP_ENGINE"));
	h->test_late_wake_ns = env_ms_as_ns("PERFGATE_TEST_LATE_WAKE_MS");
	h->test_slow_loop_ns = env_ms_as_ns("PERFGATE_TEST_SLOW_LOOP_MS");
	h->delay_hist = pg_xcalloc(READ_DELAY_BUCKETS, sizeof(*h->delay_hist));
	h->epfd = epoll_create1(EPOLL_CLOEXEC);
	h->multi = curl_multi_init();
	if (h->epfd < 0 || !h->multi) {
		pg_error_set(err, PG_ERR, "cannot set up the HTTP client: %s", strerror(errno));
		pg_hl_free(h);
		return NULL;
	}
	curl_multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
	curl_multi_setopt(h->multi, CURLMOPT_SOCKETDATA, h);
	curl_multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, on_timer);
	curl_multi_setopt(h->multi, CURLMOPT_TIMERDATA, h);
	/* one streaming request holds one HTTP/1.1 connection: keep as many
	 * idle connections as requests can be in flight, or the pool churns */
	curl_multi_setopt(h->multi, CURLMOPT_MAXCONNECTS,
			  (long)(max_connections ? max_connections : 1));

	/* thousands of streams need thousands of descriptors */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	/* epoll deadlines within 1 ns instead of the default 50 us slack */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	return h;
}

static void slot_free(struct slot *s)
{
	curl_easy_cleanup(s->easy);
	pg_oai_resp_release(&s->resp);
	pg_http1_release(&s->http);
	pg_buf_release(&s->req);
	free(s);
}

static void conn_close(struct pg_hl *h, struct conn *c);
static void own_close_idle(struct pg_hl *h);

void pg_hl_free(struct pg_hl *h)
{
	if (!h)
		return;
	own_close_idle(h);
	for (size_t i = 0; i < h->n_slots; i++) {
		if (h->slots[i]->conn)
			conn_close(h, h->slots[i]->conn);
		if (h->multi && h->slots[i]->easy)
			curl_multi_remove_handle(h->multi, h->slots[i]->easy);
		slot_free(h->slots[i]);
	}
	pg_buf_release(&h->head);
	curl_free(h->path);
	curl_free(h->host);
	free(h->slots);
	free(h->own_ended);
	free(h->graveyard);
	free(h->delay_hist);
	if (h->multi)
		curl_multi_cleanup(h->multi);
	if (h->epfd >= 0)
		close(h->epfd);
	free(h);
}

static const struct pg_http1_cb own_cb;

static struct slot *slot_get(struct pg_hl *h)
{
	struct slot *s = h->free;

	if (s) {
		h->free = s->next_free;
		return s;
	}
	s = pg_xcalloc(1, sizeof(*s));
	s->h = h;
	/* the libcurl engine's handle (the own path needs none per slot) */
	if (h->engine == ENGINE_CURL)
		s->easy = curl_easy_init();
	pg_oai_resp_init(&s->resp);
	pg_http1_init(&s->http, &own_cb, s);
	pg_buf_init(&s->req);
	PG_ARRAY_PUSH(h->slots, h->n_slots, h->cap_slots, s);
	return s;
}

static void slot_put(struct pg_hl *h, struct slot *s)
{
	slot_shrink(h, s);
	s->trace = NULL;
	s->next_free = h->free;
	h->free = s;
}

static void start(struct pg_hl *h, struct slot *s, const struct pg_hl_request *r, size_t index,
		  const struct pg_hl_run_opts *o)
{
	CURL *e = s->easy ? s->easy : (s->easy = curl_easy_init());
	const struct curl_slist *headers = o->headers;

	/* reset keeps the handle's caches (DNS, buffers); the connection pool
	 * is the multi handle's */
	curl_easy_reset(e);
	s->begun = false;
	s->trace = r->trace;
	s->index = index;
	s->errbuf[0] = '\0';
	curl_easy_setopt(e, CURLOPT_URL, o->url);
	pg_hl_easy_ca(e);
	curl_easy_setopt(e, CURLOPT_PRIVATE, s);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, s->errbuf);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
	/* loopback and explicit URLs only: never an http_proxy from the
	 * environment */
	curl_easy_setopt(e, CURLOPT_PROXY, "");
	/* SSE bursts are small; a modest buffer keeps per-stream memory low */
	curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 8192L);
	if (o->timeout_s > 0)
		curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)ceil(o->timeout_s * 1000));
	if (r->body) {
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body);
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
	}
	if (o->request_id_prefix) {
		snprintf(s->id_buf, sizeof(s->id_buf), "x-request-id: %s%zu", o->request_id_prefix,
			 index);
		s->id_header.data = s->id_buf;
		s->id_header.next = (struct curl_slist *)headers;
		headers = &s->id_header;
	}
	if (r->header) {
		s->extra_header.data = (char *)r->header;
		s->extra_header.next = (struct curl_slist *)headers;
		headers = &s->extra_header;
	}
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
	h->clock_ns = pg_hl_now_ns();
	r->trace->sent_ns = h->clock_ns - h->origin;
	curl_multi_add_handle(h->multi, e);
	h->in_flight++;
}

static enum pg_fail transport_fail(CURLcode rc)
{
	switch (rc) {
	case CURLE_OK:
		return PG_FAIL_NONE;
	case CURLE_OPERATION_TIMEDOUT:
		return PG_FAIL_TIMEOUT;
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
		return PG_FAIL_CONNECT;
	case CURLE_PARTIAL_FILE:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_GOT_NOTHING:
		return PG_FAIL_DISCONNECT;
	default:
		return PG_FAIL_OTHER;
	}
}

/* Collect finished transfers; returns how many finished. A source hears
 * of each (after its slot is back in the pool). */
static size_t reap(struct pg_hl *h, int64_t *release_ns, size_t *failed,
		   const struct pg_hl_source *src)
{
	CURLMsg *m;
	int left;
	size_t done = 0;

	if (h->engine == ENGINE_OWN) {
		/* finished as they ended (own_finish): only collected here */
		done = h->own_done;
		*failed += h->own_failed;
		if (done)
			*release_ns = h->own_release;
		h->own_done = h->own_failed = 0;
		for (size_t i = 0; src && i < h->n_own_ended; i++)
			src->done(src->ctx, h->own_ended[i]);
		h->n_own_ended = 0;
		return done;
	}
	while ((m = curl_multi_info_read(h->multi, &left))) {
		struct slot *s;
		int64_t now;
		enum pg_fail f;

		if (m->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&s);
		h->clock_ns = pg_hl_now_ns();
		now = h->clock_ns - h->origin;
		f = transport_fail(m->data.result);
		if (!s->begun)
			slot_begin(s);
		pg_oai_resp_end(&s->resp, now, f,
				s->errbuf[0] ? s->errbuf : curl_easy_strerror(m->data.result));
		if (!pg_reqtrace_ok(s->trace))
			(*failed)++;
		{
			long nc = 0;
			curl_easy_getinfo(s->easy, CURLINFO_NUM_CONNECTS, &nc);
			h->connects += nc;
		}
		curl_multi_remove_handle(h->multi, s->easy);
		h->in_flight--;
		{
			size_t index = s->index;
			slot_put(h, s);
			if (src)
				src->done(src->ctx, index);
		}
		*release_ns = now;
		done++;
	}
	return done;
}

/*
 * perfgate's own read path (ENGINE_OWN, the default; docs/loadgen.md,
 * "What the client costs"). libcurl still opens each connection -- DNS,
 * TCP, TLS -- with CURLOPT_CONNECT_ONLY, and owns its socket; perfgate
 * writes the HTTP/1.1 request, waits for readiness in its own epoll loop,
 * reads with one recv per readiness (curl_easy_recv when there is TLS),
 * parses the response (loadgen/http1.c: status, headers, chunked
 * decoding) and hands the body to body_bytes, as libcurl's write callback
 * does: traces, metrics and errors are the same. What it saves is
 * libcurl's per-read machinery (multi_runsingle, readwrite, its chunked
 * decoder, timers and progress), the largest user-space cost per token.
 */
static void own_finish(struct pg_hl *h, struct slot *s, enum pg_fail f, const char *msg,
		       bool keep_conn);

static int own_on_headers(void *ctx, const struct pg_http1 *p)
{
	struct slot *s = ctx;

	pg_oai_resp_begin(&s->resp, s->trace, p->status);
	s->begun = true;
	return 0;
}

static int own_on_body(void *ctx, const char *data, size_t len)
{
	struct slot *s = ctx;

	return body_bytes(s->h, s, s->read_ns, data, len);
}

static const struct pg_http1_cb own_cb = { own_on_headers, own_on_body };

static void conn_close(struct pg_hl *h, struct conn *c)
{
	/* the kernel drops a closed descriptor from the epoll set; deleting
	 * first keeps a reused number from meeting a stale registration */
	epoll_ctl(h->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	if (c->easy)
		curl_easy_cleanup(c->easy);
	else
		close(c->fd);
	if (h->in_batch) {
		c->easy = NULL;
		c->fd = -1;
		c->slot = NULL;
		c->dead = true;
		PG_ARRAY_PUSH(h->graveyard, h->n_graveyard, h->graveyard_cap, c);
		return;
	}
	free(c);
}

/* After a batch of events: free the connections it closed. */
static void bury_closed(struct pg_hl *h)
{
	h->in_batch = false;
	for (size_t i = 0; i < h->n_graveyard; i++)
		free(h->graveyard[i]);
	h->n_graveyard = 0;
}

/* libcurl's close of a socket: not of the one perfgate took over (every
 * other, such as a losing happy-eyeballs attempt, is closed) */
static int keep_taken_socket(void *clientp, curl_socket_t fd)
{
	const struct conn *c = clientp;

	return c->taken && fd == c->fd ? 0 : close(fd);
}

/* Open a connection (blocking: libcurl connects, perfgate's loop waits;
 * the engine pre-opens them so a run seldom does). NULL with msg set. */
#define OWN_CONNECT_TIMEOUT_MS 10000L

static struct conn *conn_open(struct pg_hl *h, const char *url, char *msg, size_t cap,
			      enum pg_fail *f)
{
	struct conn *c = pg_xcalloc(1, sizeof(*c));
	char errbuf[CURL_ERROR_SIZE] = "";
	struct epoll_event ev = { 0 };
	CURLcode rc;

	c->fd = CURL_SOCKET_BAD;
	c->easy = curl_easy_init();
	pg_hl_easy_prepare(c->easy, url, NULL, NULL,
			   h->timeout_ns > 0 ? (double)h->timeout_ns / 1e9 : 0, h->stop);
	curl_easy_setopt(c->easy, CURLOPT_CONNECT_ONLY, 1L);
	curl_easy_setopt(c->easy, CURLOPT_TCP_NODELAY, 1L);
	/* a connect blocks the loop: a server that takes longer than this
	 * to accept is down (libcurl's default would be 300 s) */
	curl_easy_setopt(c->easy, CURLOPT_CONNECTTIMEOUT_MS, OWN_CONNECT_TIMEOUT_MS);
	curl_easy_setopt(c->easy, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c->easy, CURLOPT_CLOSESOCKETFUNCTION, keep_taken_socket);
	curl_easy_setopt(c->easy, CURLOPT_CLOSESOCKETDATA, c);
	/* curl_easy_recv reads into perfgate's buffer: libcurl's own can be
	 * the smallest */
	curl_easy_setopt(c->easy, CURLOPT_BUFFERSIZE, 1024L);
	rc = curl_easy_perform(c->easy);
	if (rc == CURLE_OK &&
	    (curl_easy_getinfo(c->easy, CURLINFO_ACTIVESOCKET, &c->fd) != CURLE_OK ||
	     c->fd == CURL_SOCKET_BAD))
		rc = CURLE_COULDNT_CONNECT;
	if (rc != CURLE_OK) {
		snprintf(msg, cap, "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
		*f = transport_fail(rc);
		curl_easy_cleanup(c->easy);
		free(c);
		return NULL;
	}
	curl_easy_setopt(c->easy, CURLOPT_ERRORBUFFER, NULL);
	if (!h->easy_io && !h->tls) {
		/* plain http read with recv: the socket becomes perfgate's, and
		 * libcurl's handle (with the multi handle and the socketpair
		 * curl_easy_perform made) goes, so a connection costs one
		 * descriptor and no memory of libcurl's */
		int on = 1;
		c->taken = true;
		curl_easy_cleanup(c->easy);
		c->easy = NULL;
		/* the kernel's receive time on every read (own_recv); a kernel
		 * without it gives none, and the read time is used */
		(void)setsockopt(c->fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on));
	}
	ev.events = EPOLLIN;
	ev.data.ptr = c;
	epoll_ctl(h->epfd, EPOLL_CTL_ADD, c->fd, &ev);
	h->connects++;
	return c;
}

static void conn_want_out(struct pg_hl *h, struct conn *c, bool out)
{
	struct epoll_event ev = { 0 };

	if (c->want_out == out)
		return;
	c->want_out = out;
	ev.events = EPOLLIN | (out ? EPOLLOUT : 0);
	ev.data.ptr = c;
	epoll_ctl(h->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Close the idle connections (before they go to another server, or to
 * the libcurl engine, whose events carry descriptors, not conns). */
static void own_close_idle(struct pg_hl *h)
{
	while (h->idle) {
		struct conn *c = h->idle;
		h->idle = c->next;
		conn_close(h, c);
	}
}

/* Build the request line's tail and Host of url, once per run. */
static int own_target(struct pg_hl *h, const char *url)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *port = NULL, *query = NULL;
	int rc = 0;

	curl_free(h->path);
	curl_free(h->host);
	h->path = h->host = NULL;
	if (!u || curl_url_set(u, CURLUPART_URL, url, 0) ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) ||
	    curl_url_get(u, CURLUPART_HOST, &h->host, 0) ||
	    curl_url_get(u, CURLUPART_PATH, &h->path, 0)) {
		rc = -1;
		goto out;
	}
	/* credentials in the URL: libcurl's engine sends them (Basic auth) */
	{
		char *user = NULL;
		bool has_user = !curl_url_get(u, CURLUPART_USER, &user, 0) && user;
		curl_free(user);
		if (has_user) {
			rc = -1;
			goto out;
		}
	}
	curl_url_get(u, CURLUPART_PORT, &port, 0);
	curl_url_get(u, CURLUPART_QUERY, &query, 0);
	h->tls = !strcasecmp(scheme, "https");
	if (!h->tls && strcasecmp(scheme, "http")) {
		rc = -1;
		goto out;
	}
	pg_buf_reset(&h->head);
	pg_buf_printf(&h->head, " %s%s%s HTTP/1.1\r\n", h->path, query ? "?" : "",
		      query ? query : "");
	h->head_host = h->head.len;
	pg_buf_printf(&h->head, "Host: %s%s%s\r\n", h->host, port ? ":" : "", port ? port : "");
	/* pooled connections are to one server: another one's are closed */
	{
		char key[sizeof(h->conn_key)];
		snprintf(key, sizeof(key), "%s://%s:%s", scheme, h->host, port ? port : "");
		if (strcmp(key, h->conn_key)) {
			own_close_idle(h);
			memcpy(h->conn_key, key, sizeof(key));
		}
	}
out:
	curl_free(scheme);
	curl_free(port);
	curl_free(query);
	curl_url_cleanup(u);
	return rc;
}

/* Does a header list give this header (name with its colon)? */
static bool has_header(const struct curl_slist *l, const char *name)
{
	size_t n = strlen(name);

	for (; l; l = l->next)
		if (!strncasecmp(l->data, name, n))
			return true;
	return false;
}

/* The request's bytes, as libcurl would write them. */
static void own_request(struct pg_hl *h, struct slot *s, const struct pg_hl_request *r,
			size_t index, const struct pg_hl_run_opts *o)
{
	struct pg_buf *b = &s->req;

	pg_buf_reset(b);
	pg_buf_puts(b, r->body ? "POST" : "GET");
	/* the suite's Host replaces perfgate's, as libcurl does */
	pg_buf_add(b, h->head.ptr, has_header(o->headers, "Host:") ? h->head_host : h->head.len);
	/* the request's own header first, where libcurl's slist puts it */
	if (r->header) {
		pg_buf_puts(b, r->header);
		pg_buf_puts(b, "\r\n");
	}
	if (o->request_id_prefix)
		pg_buf_printf(b, "x-request-id: %s%zu\r\n", o->request_id_prefix, index);
	if (!has_header(o->headers, "Accept:"))
		pg_buf_puts(b, "Accept: */*\r\n");
	for (const struct curl_slist *l = o->headers; l; l = l->next) {
		const char *d = l->data, *colon = strchr(d, ':');
		size_t n = strlen(d);

		/* libcurl's conventions: "Name:" removes a header, "Name;" sends
		 * it empty */
		if (colon && !colon[1 + strspn(colon + 1, " \t")])
			continue;
		/* the body's framing is perfgate's: a second Content-Length or a
		 * Transfer-Encoding would make the request unreadable */
		if (!strncasecmp(d, "Content-Length:", 15) ||
		    !strncasecmp(d, "Transfer-Encoding:", 18))
			continue;
		if (!colon && n && d[n - 1] == ';') {
			pg_buf_add(b, d, n - 1);
			pg_buf_puts(b, ":\r\n");
			continue;
		}
		pg_buf_add(b, d, n);
		pg_buf_puts(b, "\r\n");
	}
	if (r->body) {
		if (!has_header(o->headers, "Content-Type:"))
			pg_buf_puts(b, "Content-Type: application/x-www-form-urlencoded\r\n");
		pg_buf_printf(b, "Content-Length: %zu\r\n\r\n", r->body_len);
	} else {
		pg_buf_puts(b, "\r\n");
	}
	/* the body is sent from the caller's buffer (valid for the run) */
	s->body = r->body;
	s->body_len = r->body ? r->body_len : 0;
	s->req_off = 0;
}

/* Give the slot a connection: an idle one, or a new one. */
static bool own_attach(struct pg_hl *h, struct slot *s, const char *url, bool fresh)
{
	char msg[CURL_ERROR_SIZE + 64];
	enum pg_fail f = PG_FAIL_CONNECT;
	struct conn *c = fresh ? NULL : h->idle;

	if (c) {
		h->idle = c->next;
		c->pooled = true;
	} else if (h->connect_timed_out) {
		/* connects block the loop: after one timed out in this run,
		 * the others are not waited out one by one */
		own_finish(h, s, PG_FAIL_CONNECT,
			   "not connected: an earlier connection attempt of this run timed out",
			   false);
		return false;
	} else if (!(c = conn_open(h, url, msg, sizeof(msg), &f))) {
		if (f == PG_FAIL_TIMEOUT)
			h->connect_timed_out = true;
		own_finish(h, s, f, msg, false);
		return false;
	}
	c->slot = s;
	c->next = NULL;
	s->conn = c;
	s->got = 0;
	pg_http1_reset(&s->http);
	return true;
}

static void own_send(struct pg_hl *h, struct slot *s);

/*
 * The connection died before any byte of the response: a keep-alive
 * connection the server closed while it sat idle (the request raced the
 * close). Once per request, as libcurl does, the request goes again on a
 * fresh connection; otherwise it failed with msg.
 */
static void own_retry_or_fail(struct pg_hl *h, struct slot *s, const char *msg)
{
	struct conn *c = s->conn;

	if (c->pooled && !s->got && !s->retried) {
		s->retried = true;
		conn_close(h, c);
		s->conn = NULL;
		/* a fresh one: the idle ones may have been closed too */
		if (own_attach(h, s, s->url, true)) {
			s->req_off = 0;
			own_send(h, s);
		}
		return;
	}
	own_finish(h, s, PG_FAIL_DISCONNECT, msg, false);
}

/* Write what is left of the request. */
static void own_send(struct pg_hl *h, struct slot *s)
{
	struct conn *c = s->conn;

	size_t total = s->req.len + s->body_len;

	while (s->req_off < total) {
		/* the head's rest and the body, or the body's rest */
		struct iovec iov[2];
		int k = 0;
		size_t n = 0;
		char msg[128];

		if (s->req_off < s->req.len) {
			iov[k++] = (struct iovec){ s->req.ptr + s->req_off,
						   s->req.len - s->req_off };
			if (s->body_len)
				iov[k++] = (struct iovec){ (char *)(uintptr_t)s->body,
							   s->body_len };
		} else {
			iov[k++] = (struct iovec){ (char *)(uintptr_t)s->body +
							   (s->req_off - s->req.len),
						   total - s->req_off };
		}
		if (c->easy) {
			CURLcode rc = curl_easy_send(c->easy, iov[0].iov_base, iov[0].iov_len, &n);
			if (rc == CURLE_AGAIN)
				break;
			if (rc != CURLE_OK) {
				snprintf(msg, sizeof(msg), "sending the request: %s",
					 curl_easy_strerror(rc));
				own_retry_or_fail(h, s, msg);
				return;
			}
		} else {
			struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)k };
			ssize_t w = sendmsg(c->fd, &m, MSG_NOSIGNAL);
			if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				break;
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				snprintf(msg, sizeof(msg), "sending the request: %s",
					 strerror(errno));
				own_retry_or_fail(h, s, msg);
				return;
			}
			n = (size_t)w;
		}
		s->req_off += n;
	}
	conn_want_out(h, c, s->req_off < total);
}

/* Start one request on the own path (the clock was just read). */
static void own_start(struct pg_hl *h, struct slot *s, const struct pg_hl_request *r, size_t index,
		      const struct pg_hl_run_opts *o)
{
	s->begun = false;
	s->retried = false;
	s->index = index;
	s->trace = r->trace;
	s->url = o->url;
	s->deadline = h->timeout_ns > 0 ? h->clock_ns + h->timeout_ns : INT64_MAX;
	s->newer = NULL;
	s->older = h->newest;
	if (h->newest)
		h->newest->newer = s;
	else
		h->oldest = s;
	h->newest = s;
	h->in_flight++;
	own_request(h, s, r, index, o);
	r->trace->sent_ns = h->clock_ns - h->origin;
	if (own_attach(h, s, o->url, false))
		own_send(h, s);
}

/* The request ended: its trace, its connection (back to the idle list or
 * closed), its slot. */
static void own_finish(struct pg_hl *h, struct slot *s, enum pg_fail f, const char *msg,
		       bool keep_conn)
{
	int64_t now;

	h->clock_ns = pg_hl_now_ns();
	now = h->clock_ns - h->origin;
	if (!s->begun)
		pg_oai_resp_begin(&s->resp, s->trace,
				  pg_http1_headers_done(&s->http) ? s->http.status : 0);
	pg_oai_resp_end(&s->resp, now, f, msg);
	if (!pg_reqtrace_ok(s->trace))
		h->own_failed++;
	if (s->conn) {
		struct conn *c = s->conn;
		c->slot = NULL;
		s->conn = NULL;
		if (keep_conn && !c->want_out) {
			c->next = h->idle;
			h->idle = c;
		} else {
			conn_close(h, c);
		}
	}
	if (s->older)
		s->older->newer = s->newer;
	else
		h->oldest = s->newer;
	if (s->newer)
		s->newer->older = s->older;
	else
		h->newest = s->older;
	s->older = s->newer = NULL;
	h->in_flight--;
	PG_ARRAY_PUSH(h->own_ended, h->n_own_ended, h->own_ended_cap, s->index);
	slot_put(h, s);
	h->own_release = now;
	h->own_done++;
}

/* Parse what a read brought. Returns true while the request goes on. */
static bool own_parse(struct pg_hl *h, struct slot *s, const char *buf, size_t n)
{
	size_t used = 0;
	int rc;
	char msg[200];

	s->got += n;
	rc = pg_http1_feed(&s->http, buf, n, &used);
	switch (rc) {
	case PG_HTTP1_MORE:
		return true;
	case PG_HTTP1_DONE:
		/* bytes past the response's end: nothing this client asked
		 * for, so the connection is not reused */
		own_finish(h, s, PG_FAIL_NONE, NULL, used == n && !s->http.close);
		return false;
	case PG_HTTP1_STOPPED:
		/* the request failed (recorded in its trace) */
		own_finish(h, s, PG_FAIL_OTHER, "stopped reading the response", false);
		return false;
	default:
		snprintf(msg, sizeof(msg), "an invalid HTTP response: %s", s->http.err);
		own_finish(h, s, PG_FAIL_OTHER, msg, false);
		return false;
	}
}

/* The connection ended (EOF, or err an errno) while the request read. */
static void own_eof(struct pg_hl *h, struct slot *s, int err)
{
	char msg[240];

	if (pg_http1_eof(&s->http) == PG_HTTP1_DONE && !err) {
		own_finish(h, s, PG_FAIL_NONE, NULL, false);
		return;
	}
	if (err)
		snprintf(msg, sizeof(msg), "reading the response: %s", strerror(err));
	else
		snprintf(msg, sizeof(msg), "%s", s->http.err);
	own_retry_or_fail(h, s, msg);
}

/*
 * When the bytes of a read arrived. A client without real-time priority is
 * woken late now and then (the scheduler, another process on its core), and
 * a timestamp taken when it reads carries that delay into TTFT and ITL. A
 * plain socket asks the kernel for the time it received each segment
 * (SO_TIMESTAMPNS; for TCP a read reports its last segment's), so the
 * delay between arrival and read is taken out of the message time. The
 * kernel's clock is CLOCK_REALTIME: the delay is its reading now minus the
 * stamp, subtracted from the monotonic now. A delay that is not plausible
 * (negative, or over a second: the wall clock was stepped) is ignored.
 */
#define KERNEL_DELAY_MAX_NS 1000000000LL

/* recv into h->rbuf; *kernel_delay: how long ago the kernel received the
 * read's last segment (ns), -1 when it did not say. */
static ssize_t own_recv(struct pg_hl *h, struct conn *c, int64_t *kernel_delay)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct timespec))];
		struct cmsghdr align;
	} control;
	struct iovec iov = { h->rbuf, sizeof(h->rbuf) };
	struct msghdr msg = { 0 };
	struct timespec stamp = { 0 }, real;
	bool stamped = false;
	ssize_t k;

	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = control.buf;
	msg.msg_controllen = sizeof(control.buf);
	k = recvmsg(c->fd, &msg, 0);
	*kernel_delay = -1;
	if (k <= 0)
		return k;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS &&
		    cm->cmsg_len >= CMSG_LEN(sizeof(stamp))) {
			memcpy(&stamp, CMSG_DATA(cm), sizeof(stamp));
			stamped = true;
		}
	if (stamped && clock_gettime(CLOCK_REALTIME, &real) == 0) {
		int64_t d = ((int64_t)real.tv_sec - (int64_t)stamp.tv_sec) * 1000000000LL +
			    ((int64_t)real.tv_nsec - (int64_t)stamp.tv_nsec);
		if (d >= 0 && d <= KERNEL_DELAY_MAX_NS)
			*kernel_delay = d;
	}
	return k;
}

/* The time of a read's messages: now, less the kernel's delay when there
 * is one; never before the stream's previous read. */
static int64_t read_time(struct pg_hl *h, const struct slot *s, int64_t kernel_delay)
{
	int64_t now = pg_hl_now_ns(), t = now;

	if (kernel_delay > 0) {
		t = now - kernel_delay;
		if (t < s->read_ns)
			t = s->read_ns;
		/* the loop's clock and its wait bound stay the read's own */
		h->clock_ns = now;
		if (h->event_since >= 0) {
			delay_add(h, now - h->event_since);
			h->event_since = -1;
		}
	}
	return t;
}

/* A socket event of the own path. */
static void own_event(struct pg_hl *h, struct conn *c, uint32_t events)
{
	struct slot *s = c->slot;

	/* closed by an earlier event of this batch */
	if (c->dead)
		return;
	if (!s) {
		/* an idle connection that became readable: the server closed
		 * it (or sent what nobody asked for) -- unless TLS had records
		 * of its own to read: a TLS 1.3 server sends its session tickets
		 * after the handshake, while the connection waits in the pool */
		if (c->easy) {
			size_t got = 0;
			if (curl_easy_recv(c->easy, h->rbuf, sizeof(h->rbuf), &got) == CURLE_AGAIN)
				return;
		}
		for (struct conn **p = &h->idle; *p; p = &(*p)->next) {
			if (*p == c) {
				*p = c->next;
				break;
			}
		}
		conn_close(h, c);
		return;
	}
	if ((events & EPOLLOUT) && s->req_off < s->req.len + s->body_len) {
		own_send(h, s);
		/* (slots outlive the run: s is valid; the send may have ended
		 * the request or moved it to a fresh connection) */
		if (s->conn != c)
			return;
	}
	if (!(events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
		return;
	for (;;) {
		size_t n = 0;
		int64_t kernel_delay = -1;

		if (c->easy) {
			CURLcode rc = curl_easy_recv(c->easy, h->rbuf, sizeof(h->rbuf), &n);
			if (rc == CURLE_AGAIN)
				return;
			if (rc != CURLE_OK) {
				char msg[CURL_ERROR_SIZE + 32];
				snprintf(msg, sizeof(msg), "reading the response: %s",
					 curl_easy_strerror(rc));
				own_retry_or_fail(h, s, msg);
				return;
			}
		} else {
			ssize_t k = own_recv(h, c, &kernel_delay);
			if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
				return;
			if (k < 0) {
				own_eof(h, s, errno);
				return;
			}
			n = (size_t)k;
		}
		if (!n) {
			own_eof(h, s, 0);
			return;
		}
		/* one timestamp for the read: every message in it arrived
		 * together, when the kernel received its last segment (when
		 * it says: plain sockets), else now */
		s->read_ns = read_time(h, s, kernel_delay);
		if (!own_parse(h, s, h->rbuf, n))
			return;
		/* plain sockets: one recv per readiness (level-triggered epoll
		 * reports what is left); TLS may hold decrypted bytes the
		 * socket no longer shows, so read until libcurl says again */
		if (!h->tls)
			return;
	}
}

/* Fail the requests whose deadline passed (the oldest first). */
static void own_timeouts(struct pg_hl *h)
{
	while (h->oldest && h->oldest->deadline <= h->clock_ns) {
		struct slot *s = h->oldest;
		char msg[160];

		snprintf(msg, sizeof(msg),
			 "Operation timed out after %lld milliseconds with %zu bytes received",
			 (long long)(h->timeout_ns / 1000000), s->got);
		own_finish(h, s, PG_FAIL_TIMEOUT, msg, false);
	}
}

/* End every in-flight transfer as cancelled. */
static void cancel_all(struct pg_hl *h)
{
	for (size_t i = 0; i < h->n_slots; i++) {
		struct slot *s = h->slots[i];
		if (!s->trace)
			continue;
		if (s->conn) {
			conn_close(h, s->conn);
			s->conn = NULL;
		}
		s->older = s->newer = NULL;
		if (h->engine == ENGINE_CURL)
			curl_multi_remove_handle(h->multi, s->easy);
		if (!s->begun)
			pg_oai_resp_begin(&s->resp, s->trace, 0);
		pg_reqtrace_fail(s->trace, PG_FAIL_CANCELLED, "cancelled");
		s->trace->end_ns = pg_hl_now_ns() - h->origin;
		h->in_flight--;
		slot_put(h, s);
	}
	h->oldest = h->newest = NULL;
}

/* The state of one run's dispatch. */
struct dispatch {
	struct pg_hl_request *reqs;
	size_t n, next, maxc;
	int64_t release_ns; /* when the last concurrency slot was freed */
	const struct pg_hl_run_opts *o;
};

/* "Not before something finishes": far, but with room to add an origin. */
#define DUE_NEVER (INT64_MAX / 4)

static int64_t due_ns(const struct dispatch *d)
{
	double s = d->o->source ? d->o->source->next_due(d->o->source->ctx)
				: d->reqs[d->next].due_s;

	return s * 1e9 < (double)DUE_NEVER ? (int64_t)llround(s * 1e9) : DUE_NEVER;
}

/*
 * Of a request's send lag, the time the loop still sat in its last wait
 * after the request was due. That wait's deadline was the due time, or
 * earlier (wait_events), so sleeping past it is the host's doing -- a
 * timer wake-up that came late, another process holding the core -- not
 * work of the loop's; the rest of the lag is the loop's own (reading
 * other streams, starting requests). A request made eligible by a slot
 * freed while the loop worked overlaps no wait: all its lag is the loop's.
 */
static int64_t host_lag(const struct pg_hl *h, const struct pg_reqtrace *t)
{
	int64_t from = h->origin + t->eligible_ns, to = h->origin + t->sent_ns;

	if (from < h->wait_from)
		from = h->wait_from;
	if (to > h->wait_until)
		to = h->wait_until;
	return to > from ? to - from : 0;
}

/*
 * Send what is due, in order, while slots are free -- at most
 * DISPATCH_BATCH at a time: starting a transfer costs tens of microseconds
 * (libcurl looks for an idle connection among all of the host's), so a
 * burst of thousands is interleaved with reading the responses already
 * streaming, whose timestamps would otherwise wait for the whole burst.
 */
#define DISPATCH_BATCH 32

static void dispatch_due(struct pg_hl *h, struct dispatch *d)
{
	int running;

	for (int k = 0; k < DISPATCH_BATCH && d->next < d->n && h->in_flight < d->maxc; k++) {
		int64_t due = due_ns(d);
		struct pg_reqtrace *t = d->reqs[d->next].trace;

		/* the loop's latest reading (fresh: taken after its last
		 * batch); a start reads the clock for its own sent_ns */
		if (due > h->clock_ns - h->origin)
			return;
		/* the own path frees a slot as its request ends, before the
		 * loop collects it (reap): that is the release */
		if (h->engine == ENGINE_OWN && h->own_done && h->own_release > d->release_ns)
			d->release_ns = h->own_release;
		t->scheduled_ns = due;
		t->eligible_ns = due > d->release_ns ? due : d->release_ns;
		if (d->o->source)
			d->o->source->take(d->o->source->ctx, d->next, &d->reqs[d->next]);
		if (h->engine == ENGINE_OWN) {
			h->clock_ns = pg_hl_now_ns();
			own_start(h, slot_get(h), &d->reqs[d->next], d->next, d->o);
			t->host_lag_ns = host_lag(h, t);
			d->next++;
			h->clock_ns = pg_hl_now_ns();
			continue;
		}
		start(h, slot_get(h), &d->reqs[d->next], d->next, d->o);
		t->host_lag_ns = host_lag(h, t);
		d->next++;
		/* write the request now (a warm connection sends at once), so
		 * sent_ns is when it left, not when a whole batch did */
		if (h->poll_mode)
			curl_multi_perform(h->multi, &running);
		else
			curl_multi_socket_action(h->multi, CURL_SOCKET_TIMEOUT, 0, &running);
		/* starting a transfer takes tens of microseconds: the next
		 * check, the busy time and the wait go by the time after it
		 * (one reading per request) */
		h->clock_ns = pg_hl_now_ns();
	}
}

/* Wait for socket events until the next arrival or libcurl timeout (now:
 * the clock when called). */
static int wait_events(struct pg_hl *h, const struct dispatch *d, struct epoll_event *ev, int max,
		       int64_t now)
{
	int64_t deadline = now + 100000000; /* notice *stop */
	struct timespec ts;
	int nev;

	if (d->next < d->n && h->in_flight < d->maxc && h->origin + due_ns(d) < deadline)
		deadline = h->origin + due_ns(d);
	if (h->curl_deadline >= 0 && h->curl_deadline < deadline)
		deadline = h->curl_deadline;
	if (h->oldest && h->oldest->deadline < deadline)
		deadline = h->oldest->deadline;
	if (deadline < now)
		deadline = now;
	ts.tv_sec = (deadline - now) / 1000000000;
	ts.tv_nsec = (deadline - now) % 1000000000;
	/* epoll_pwait2 takes a nanosecond timeout: arrivals are paced to the
	 * microsecond without a timerfd to re-arm */
	nev = epoll_pwait2(h->epfd, ev, max, &ts, NULL);
	if (nev < 0 && errno == ENOSYS)
		nev = epoll_wait(h->epfd, ev, max, (int)((deadline - now + 999999) / 1000000));
	return nev;
}

int pg_hl_set_engine(struct pg_hl *h, const char *name)
{
	if (!name || !*name || !strcmp(name, "own")) {
		h->engine = ENGINE_OWN;
		h->easy_io = false;
	} else if (!strcmp(name, "own-easy")) {
		h->engine = ENGINE_OWN;
		h->easy_io = true;
	} else if (!strcmp(name, "curl")) {
		own_close_idle(h);
		h->engine = ENGINE_CURL;
	} else {
		return -1;
	}
	return 0;
}

void pg_hl_set_poll_mode(struct pg_hl *h)
{
	h->engine = ENGINE_CURL;
	h->poll_mode = true;
	curl_multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, NULL);
	curl_multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, NULL);
}

/* curl_multi_poll's wait: milliseconds only, and every wake-up makes
 * curl_multi_perform visit all transfers. */
static int poll_events(struct pg_hl *h, const struct dispatch *d)
{
	int64_t now = pg_hl_now_ns(), wait_ns = 100000000;
	int numfds, running;

	if (d->next < d->n && h->in_flight < d->maxc && h->origin + due_ns(d) - now < wait_ns)
		wait_ns = h->origin + due_ns(d) - now;
	if (wait_ns < 0)
		wait_ns = 0;
	if (curl_multi_poll(h->multi, NULL, 0, (int)((wait_ns + 999999) / 1000000), &numfds) !=
	    CURLM_OK)
		return -1;
	curl_multi_perform(h->multi, &running);
	return 0;
}

static void delay_add(struct pg_hl *h, int64_t ns)
{
	int64_t b = ns / READ_DELAY_BUCKET_NS;

	h->delay_hist[b < 0 ? 0 : b >= READ_DELAY_BUCKETS ? READ_DELAY_BUCKETS - 1 : b]++;
	if (ns > h->delay_max)
		h->delay_max = ns;
}

/* p99 in seconds (a bucket's upper edge, capped by the maximum). */
static double delay_p99(const struct pg_hl *h)
{
	uint64_t total = 0, seen = 0, rank;

	for (size_t i = 0; i < READ_DELAY_BUCKETS; i++)
		total += h->delay_hist[i];
	if (!total)
		return 0;
	rank = (uint64_t)ceil(0.99 * (double)total);
	for (size_t i = 0; i < READ_DELAY_BUCKETS; i++) {
		seen += h->delay_hist[i];
		if (seen >= rank) {
			int64_t edge = (int64_t)(i + 1) * READ_DELAY_BUCKET_NS;
			return (double)(i + 1 < READ_DELAY_BUCKETS && edge < h->delay_max
						? edge
						: h->delay_max) /
			       1e9;
		}
	}
	return (double)h->delay_max / 1e9;
}

/* A wait that returned sooner than this found its events already there:
 * they were waiting while the loop worked. */
#define WAIT_BLOCKED_NS 20000
#define MAX_EVENTS      256

int pg_hl_run(struct pg_hl *h, struct pg_hl_request *reqs, size_t n, const struct pg_hl_run_opts *o,
	      struct pg_hl_stats *stats, struct pg_error *err)
{
	struct epoll_event events[MAX_EVENTS];
	struct dispatch d = {
		reqs, n, 0, o->max_concurrency ? o->max_concurrency : SIZE_MAX, 0, o
	};
	size_t done = 0, failed = 0;
	int64_t busy_ns = 0, last_progress = 0, end_ns, mark, called, since;
	int64_t all_in_hand; /* when the loop last held every ready event */
	int64_t interval = (int64_t)((o->progress_interval_s > 0 ? o->progress_interval_s : 1) *
				     1e9);
	uint64_t messages0 = h->messages, checks0 = hl_checks_answered;
	long connects0 = h->connects;
	int running, rc = 0;

	memset(stats, 0, sizeof(*stats));
	/* a URL the own path cannot take is libcurl's to judge (and fail
	 * request by request, as before) */
	if (h->engine == ENGINE_OWN && own_target(h, o->url)) {
		own_close_idle(h);
		h->engine = ENGINE_CURL;
	}
	h->timeout_ns = o->timeout_s > 0 ? (int64_t)ceil(o->timeout_s * 1e9) : 0;
	h->connect_timed_out = false;
	h->stop = o->stop;
	memset(h->delay_hist, 0, READ_DELAY_BUCKETS * sizeof(*h->delay_hist));
	h->budget = o->memory_budget ? o->memory_budget : PG_HL_MEMORY_BUDGET;
	h->peak_held = h->held;
	h->delay_max = 0;
	h->origin = h->clock_ns = pg_hl_now_ns();
	mark = all_in_hand = h->wait_from = h->wait_until = h->origin;
	while (done < n) {
		int64_t now;
		int nev;

		if (o->stop && *o->stop) {
			cancel_all(h);
			for (size_t i = d.next; i < n; i++)
				pg_reqtrace_fail(reqs[i].trace, PG_FAIL_CANCELLED,
						 "cancelled before it was sent");
			rc = pg_error_set(err, PG_ECANCEL, "stopped by a signal");
			break;
		}
		dispatch_due(h, &d);
		done += reap(h, &d.release_ns, &failed, o->source);
		if (done >= n)
			break;
		/* a source with nothing ready and nothing in flight would wait
		 * for ever: its bug, not the server's */
		if (o->source && !h->in_flight && d.next < n &&
		    isinf(o->source->next_due(o->source->ctx))) {
			rc = pg_error_set(err, PG_ERR,
					  "the request source has %zu requests left but none ready",
					  n - d.next);
			break;
		}
		/* (with a request already due, the wait below does not block: it
		 * only picks up what the sockets have, then dispatch goes on) */
		/* the latest reading: taken at the end of the last batch, or
		 * after a dispatch or by a reap since, whichever did work */
		called = h->wait_from = h->clock_ns;
		busy_ns += called - mark;
		if (h->poll_mode) {
			/* (busy time is not separable from curl's own wait here) */
			if (poll_events(h, &d)) {
				rc = pg_error_set(err, PG_ERR, "curl_multi_poll failed");
				cancel_all(h);
				break;
			}
			mark = h->clock_ns = h->wait_until = pg_hl_now_ns();
			done += reap(h, &d.release_ns, &failed, o->source);
			continue;
		}
		nev = wait_events(h, &d, events, MAX_EVENTS, called);
		if (nev == 0 && h->test_late_wake_ns)
			nap(h->test_late_wake_ns); /* (in the wait: the host's) */
		mark = h->clock_ns = h->wait_until = pg_hl_now_ns();
		if (nev < 0 && errno != EINTR) {
			rc = pg_error_set(err, PG_ERR, "epoll: %s", strerror(errno));
			cancel_all(h);
			break;
		}
		/* a wait that slept was woken by what it returns; one that did
		 * not returns what came in while the loop worked, since it last
		 * held every ready event */
		since = mark - called >= WAIT_BLOCKED_NS ? mark : all_in_hand;
		if (nev < MAX_EVENTS)
			all_in_hand = mark;
		else if (since == mark)
			all_in_hand = called; /* the rest came in while it slept */
		h->in_batch = true;
		for (int i = 0; i < nev; i++) {
			int flags = 0;

			/* a long batch of reads must not hold back an arrival (the
			 * last read's clock: one event old at most) */
			if (d.next < n && h->in_flight < d.maxc &&
			    h->origin + due_ns(&d) <= h->clock_ns)
				dispatch_due(h, &d);
			/* on_body records the read delay with its own timestamp:
			 * one clock read per read, and the delay of the bytes
			 * themselves (an event that reads none has none) */
			h->event_since = since;
			if (h->engine == ENGINE_OWN) {
				own_event(h, events[i].data.ptr, events[i].events);
				h->event_since = -1;
				continue;
			}
			if (events[i].events & EPOLLIN)
				flags |= CURL_CSELECT_IN;
			if (events[i].events & EPOLLOUT)
				flags |= CURL_CSELECT_OUT;
			if (events[i].events & (EPOLLERR | EPOLLHUP))
				flags |= CURL_CSELECT_ERR;
			/* libcurl's check for more bytes after its read is
			 * answered by poll() above: epoll reports them */
			if (flags & CURL_CSELECT_IN)
				hl_ready_fd = events[i].data.fd;
			curl_multi_socket_action(h->multi, events[i].data.fd, flags, &running);
			hl_ready_fd = -1;
			h->event_since = -1;
		}
		bury_closed(h);
		if (nev > 0 && h->test_slow_loop_ns)
			nap(h->test_slow_loop_ns); /* (out of the wait: the loop's) */
		h->clock_ns = pg_hl_now_ns();
		if (h->engine == ENGINE_OWN)
			own_timeouts(h);
		if (h->curl_deadline >= 0 && h->curl_deadline <= h->clock_ns) {
			h->curl_deadline = -1;
			curl_multi_socket_action(h->multi, CURL_SOCKET_TIMEOUT, 0, &running);
			h->clock_ns = pg_hl_now_ns();
		}
		done += reap(h, &d.release_ns, &failed, o->source);
		now = h->clock_ns - h->origin;
		if (o->progress && now - last_progress >= interval) {
			struct pg_hl_progress p = { done, n, failed, h->messages - messages0,
						    (double)now / 1e9 };
			last_progress = now;
			o->progress(o->progress_ctx, &p);
		}
	}
	end_ns = pg_hl_now_ns();
	busy_ns += end_ns - mark;
	end_ns -= h->origin;
	stats->duration_s = (double)end_ns / 1e9;
	stats->busy_fraction = end_ns > 0 ? (double)busy_ns / (double)end_ns : 0;
	stats->read_delay_p99_s = h->poll_mode ? -1 : delay_p99(h);
	stats->messages = h->messages - messages0;
	stats->read_checks_answered = hl_checks_answered - checks0;
	stats->new_connections = h->connects - connects0;
	stats->peak_held_bytes = h->peak_held;
	stats->origin_ns = h->origin;
	if (o->progress) {
		struct pg_hl_progress p = { done, n, failed, stats->messages, stats->duration_s };
		o->progress(o->progress_ctx, &p);
	}
	return rc;
}

int pg_hl_preconnect(struct pg_hl *h, const char *url, size_t n, double timeout_s,
		     const volatile sig_atomic_t *stop, size_t *ok, struct pg_error *err)
{
	struct pg_reqtrace *traces = pg_xcalloc(n ? n : 1, sizeof(*traces));
	struct pg_hl_request *reqs = pg_xcalloc(n ? n : 1, sizeof(*reqs));
	struct pg_hl_run_opts o = { .url = url, .timeout_s = timeout_s, .stop = stop };
	struct pg_hl_stats st;
	int rc;

	for (size_t i = 0; i < n; i++) {
		pg_reqtrace_init(&traces[i]);
		reqs[i].trace = &traces[i];
	}
	if (h->engine == ENGINE_OWN) {
		/* the own path connects as a request needs it, and the first
		 * GETs would be done (their connections idle again) before the
		 * last ones started: open the n connections first */
		size_t idle = 0, want;
		char msg[CURL_ERROR_SIZE + 64];
		enum pg_fail f;

		/* (the server's key first: the run below keeps what is open) */
		want = own_target(h, url) ? 0 : n;
		for (struct conn *c = h->idle; c; c = c->next)
			idle++;
		h->timeout_ns = (int64_t)ceil(timeout_s * 1e9);
		h->stop = stop;
		for (; idle < want && !(stop && *stop); idle++) {
			struct conn *c = conn_open(h, url, msg, sizeof(msg), &f);
			if (!c)
				break; /* the GETs below say why */
			c->next = h->idle;
			h->idle = c;
		}
	}
	rc = pg_hl_run(h, reqs, n, &o, &st, err);
	*ok = 0;
	for (size_t i = 0; i < n; i++) {
		/* any complete HTTP exchange leaves its connection in the pool */
		*ok += traces[i].http_status > 0 && traces[i].fail != PG_FAIL_TIMEOUT &&
		       traces[i].fail != PG_FAIL_CONNECT && traces[i].fail != PG_FAIL_DISCONNECT;
		pg_reqtrace_release(&traces[i]);
	}
	free(traces);
	free(reqs);
	return rc;
}
