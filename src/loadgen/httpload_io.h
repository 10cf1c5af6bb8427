#ifndef PERFGATE_LOADGEN_HTTPLOAD_IO_H
#define PERFGATE_LOADGEN_HTTPLOAD_IO_H

#include <curl/curl.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loadgen/reqtrace.h"

struct pg_buf;
struct pg_error;

/*
 * The load generator's HTTP engine: one thread, one epoll loop. By
 * default libcurl only opens the connections (CURLOPT_CONNECT_ONLY: DNS,
 * TCP, TLS) and perfgate writes the HTTP/1.1 requests and reads and
 * parses the responses itself (loadgen/http1.h; recv on plain http,
 * curl_easy_recv on https), which takes libcurl's per-read state machine
 * off the per-token path (docs/loadgen.md, "perfgate's own read path").
 * The fallback, PERFGATE_HTTP_ENGINE=curl, is libcurl's multi interface
 * driven by curl_multi_socket_action from the same loop (sockets through
 * CURLMOPT_SOCKETFUNCTION, libcurl's timeout folded into the wait's
 * deadline). Work per event is O(active sockets) either way, never a scan
 * of all transfers as curl_multi_perform does, which is what keeps the
 * client off the critical path at thousands of concurrent streams.
 *
 * HTTP/1.1 with keep-alive: the connection pool lives as long as the
 * engine, so warm-up, repeats and points reuse connections
 * (pg_hl_preconnect opens them up front so TCP setup never lands in a
 * TTFT). Slots and SSE parsers are pooled too: once warm, nothing is
 * allocated per request except its trace's chunk array, and nothing per
 * content message.
 *
 * Requests are sent on their absolute schedule (origin + due): a slow
 * response never delays a later arrival. max_concurrency is a FIFO
 * semaphore whose waiting time is not part of TTFT (as vLLM's), and is
 * recorded as eligible_ns so schedule lag measures only the client.
 */
struct pg_hl;

struct pg_hl_request {
	const char *body; /* POST body (borrowed), or NULL for a GET */
	size_t body_len;
	double due_s;              /* send time, seconds after the origin; non-decreasing */
	struct pg_reqtrace *trace; /* filled in (times relative to the origin) */
	const char *header;        /* one more header line ("x-user-id: 7"), or NULL */
};

/*
 * A request source that decides as the run goes (multi-turn sessions,
 * loadgen/sessions.h) instead of a schedule fixed up front: the engine
 * asks next_due for the earliest time a request is ready (seconds after
 * the origin; INFINITY: none is ready until some request in flight
 * finishes), calls take to have request `index` (0, 1, 2... in sending
 * order) written into *r when that time has come -- body and header;
 * r->trace is the caller's (set up front) and due_s is ignored -- and tells done when request `index` has ended
 * (its trace complete), which may make the next one ready. The callbacks
 * run on the engine's thread, between socket events: they must be quick.
 * The trace's scheduled_ns and eligible_ns are set to the due time before
 * take, which may change scheduled_ns (a turn that waited for the one
 * before it was scheduled earlier than it became eligible).
 */
struct pg_hl_source {
	double (*next_due)(void *ctx);
	void (*take)(void *ctx, size_t index, struct pg_hl_request *r);
	void (*done)(void *ctx, size_t index);
	void *ctx;
};

struct pg_hl_progress {
	size_t done, total, failed;
	uint64_t messages; /* content messages received so far */
	double elapsed_s;
};

struct pg_hl_run_opts {
	const char *url;                  /* the endpoint */
	const struct curl_slist *headers; /* shared headers (Content-Type, Authorization...) */
	const char *request_id_prefix;    /* x-request-id: <prefix><index>; NULL: none */
	size_t max_concurrency;           /* 0 = unbounded */
	double timeout_s;                 /* per request; <= 0: none */
	const volatile sig_atomic_t *stop;
	void (*progress)(void *ctx, const struct pg_hl_progress *p);
	void *progress_ctx;
	double progress_interval_s;
	size_t memory_budget;              /* bytes for all streams' response buffers; 0:
				 PG_HL_MEMORY_BUDGET */
	const struct pg_hl_source *source; /* NULL: reqs' own schedule */
};

/*
 * One memory budget for the response buffers of all the streams of a run
 * (each stream's SSE event is capped at PG_SSE_MAX_EVENT_DEFAULT, and a
 * JSON body at 64 MiB, but 64 streams of a hostile server would reach a
 * GiB): a stream whose growth takes the total past it fails, with a
 * message that says so, and gives its memory back; the others go on. The
 * total stays under the budget plus one stream's growth. Legitimate
 * streams hold kilobytes each.
 */
#define PG_HL_MEMORY_BUDGET ((size_t)256 << 20)

struct pg_hl_stats {
	double duration_s;       /* dispatch-loop start to the end of the last request */
	double busy_fraction;    /* share of duration the loop was not waiting in epoll */
	double read_delay_p99_s; /* p99 over socket events with body bytes of how long
	                               they may have waited, ready, to be read (its
	                               backlog: see pg_hl_run); < 0 unknown (poll mode) */
	long new_connections;    /* connections opened during the run */
	size_t peak_held_bytes;  /* most the response buffers held at once */
	uint64_t messages;
	/* libcurl's checks for more bytes after a read (a poll per read in
	 * libcurl 7.x) that perfgate answered without a system call: the
	 * event loop's epoll reports those bytes (httpload_io.c, poll; the
	 * libcurl engine only) */
	uint64_t read_checks_answered;
	int64_t origin_ns; /* CLOCK_MONOTONIC of the origin trace times count from */
};

/* max_connections sizes libcurl's connection cache (CURLMOPT_MAXCONNECTS; the
 * own read path keeps every connection it opened until the server closes
 * it or the engine is freed). */
struct pg_hl *pg_hl_new(size_t max_connections, struct pg_error *err);
void pg_hl_free(struct pg_hl *h);

/*
 * Which HTTP engine reads the responses (pg_hl_new takes the environment's
 * PERFGATE_HTTP_ENGINE; call before the first run):
 *   "own" (or NULL, empty): perfgate's own read path -- libcurl opens the
 *        connections (CURLOPT_CONNECT_ONLY: DNS, TCP, TLS), perfgate
 *        writes the requests and parses the responses (loadgen/http1.h),
 *        with send/recv on plain http and curl_easy_send/recv on https;
 *   "own-easy": the same with curl_easy_send/recv on plain http too (the
 *        bench's comparison);
 *   "curl": libcurl's multi interface does the whole exchange (the
 *        fallback).
 * Returns -1 for an unknown name (the engine is unchanged).
 */
int pg_hl_set_engine(struct pg_hl *h, const char *name);

/*
 * Drive transfers with curl_multi_poll + curl_multi_perform instead (call
 * before the first run). Only for bench/loadgen's comparison of the two
 * libcurl event loops: it paces arrivals to the millisecond and visits
 * every transfer on each wake-up.
 */
void pg_hl_set_poll_mode(struct pg_hl *h);

/*
 * Send n requests and wait for all of them. Traces are filled in place.
 *
 * The loop measures its own backlog: for each socket event that brings
 * body bytes, an upper bound on how long they sat ready before they were
 * read -- the time since the loop last had every ready event in hand (the
 * return of a wait that blocked, or of the last wait that was not cut
 * short by the event array filling up) to the timestamp the first of them
 * got when libcurl handed them over (the same clock reading that stamps
 * the messages in them). Every content-message timestamp is late by about
 * that much, so its p99
 * says whether the client, not the server, set the ITLs it measured.
 * Returns 0 (failed requests are recorded in their traces, not errors),
 * PG_ECANCEL when *stop became set (in-flight requests are ended and
 * marked cancelled, the rest never sent), or PG_ERR for a system failure.
 */
int pg_hl_run(struct pg_hl *h, struct pg_hl_request *reqs, size_t n, const struct pg_hl_run_opts *o,
	      struct pg_hl_stats *stats, struct pg_error *err);

/*
 * Open n keep-alive connections to the server of url (n concurrent GETs
 * of url), so the measured run finds them in the pool. Returns how many
 * succeeded in *ok.
 */
int pg_hl_preconnect(struct pg_hl *h, const char *url, size_t n, double timeout_s,
		     const volatile sig_atomic_t *stop, size_t *ok, struct pg_error *err);

/*
 * Header lists that carry the API key: pg_hl_add_bearer appends
 * "Authorization: Bearer <key>" (nothing for a NULL or empty key) and
 * leaves no copy behind; pg_hl_free_headers zeroes that line before
 * freeing the list, so the key does not linger in freed memory.
 */
struct curl_slist *pg_hl_add_bearer(struct curl_slist *headers, const char *api_key);
void pg_hl_free_headers(struct curl_slist *headers);

/* The CA bundle of an https server from the environment (CURL_CA_BUNDLE,
 * else SSL_CERT_FILE), as curl's command line takes it; every handle
 * pg_hl_easy_prepare makes has it. */
void pg_hl_easy_ca(CURL *e);

/*
 * Set up an easy handle for one blocking request (curl_easy_perform) of
 * the kind that surrounds a run -- readiness probes, GET /v1/models, POST
 * /tokenize -- the way the load generator talks: never through a proxy
 * from the environment (the figures are for the server, not a proxy), no
 * signals, a timeout (<= 0: none), the shared headers (may be NULL) and
 * the response body appended to resp (NULL: discarded). It ends within
 * about a second of *stop becoming non-zero (CURLE_ABORTED_BY_CALLBACK;
 * stop may be NULL), so a cancel never waits out a timeout. The caller
 * sets a POST body if there is one.
 */
void pg_hl_easy_prepare(CURL *e, const char *url, const struct curl_slist *headers,
			struct pg_buf *resp, double timeout_s, const volatile sig_atomic_t *stop);

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t pg_hl_now_ns(void);

#endif
