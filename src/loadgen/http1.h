#ifndef PERFGATE_LOADGEN_HTTP1_H
#define PERFGATE_LOADGEN_HTTP1_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

/*
 * An incremental HTTP/1.1 response parser for the load generator's own
 * read path (httpload_io.c): no I/O, fed whatever a read returned, split
 * anywhere. It reads the status line and headers (Content-Length,
 * Transfer-Encoding, Connection, Content-Type), skips 1xx interim
 * responses, and hands the body to a callback: de-chunked, straight from
 * the caller's bytes (no copy), in as many pieces as the reads and chunks
 * make. Bodies end by Content-Length, by the last chunk (trailers are
 * skipped), or by the connection's end when neither is given.
 *
 * Lines may end in CRLF or a bare LF (as libcurl accepts). The status line
 * and headers together are capped at PG_HTTP1_MAX_HEAD bytes; a warm
 * parser does not allocate (the header line buffer keeps its capacity).
 */
#define PG_HTTP1_MAX_HEAD (64u << 10)

struct pg_http1;

struct pg_http1_cb {
	/* the final response's headers are in; non-zero stops the parse */
	int (*on_headers)(void *ctx, const struct pg_http1 *p);
	/* body bytes (valid during the call); non-zero stops the parse */
	int (*on_body)(void *ctx, const char *data, size_t len);
};

struct pg_http1 {
	int state;
	int status;             /* 0 until the status line is in */
	int minor;              /* HTTP/1.<minor> */
	int64_t content_length; /* -1: not given */
	bool chunked;
	bool close;    /* the server will close the connection after this response */
	bool no_body;  /* the request was a HEAD: no body whatever the headers say */
	bool saw_body; /* at least one body byte was delivered */
	uint64_t left; /* bytes left of the body or of the current chunk */
	unsigned hex_digits;
	size_t head_bytes; /* status line and headers so far */
	struct pg_buf line;
	char content_type[64];
	char err[160];
	const struct pg_http1_cb *cb;
	void *ctx;
};

enum {
	PG_HTTP1_MORE = 0,     /* all bytes used; the response goes on */
	PG_HTTP1_DONE = 1,     /* the response is complete (*used says where) */
	PG_HTTP1_ERROR = -1,   /* not a valid response: err says why */
	PG_HTTP1_STOPPED = -2, /* a callback returned non-zero */
};

void pg_http1_init(struct pg_http1 *p, const struct pg_http1_cb *cb, void *ctx);
/* Ready for the next response on the connection (keeps the buffer). */
void pg_http1_reset(struct pg_http1 *p);
void pg_http1_release(struct pg_http1 *p);

/*
 * Parse len more bytes. Returns PG_HTTP1_MORE, PG_HTTP1_DONE (bytes after
 * the response's end are not consumed: *used, when not NULL, is how many
 * were), PG_HTTP1_ERROR or PG_HTTP1_STOPPED. After anything but MORE,
 * further feeds return the same until a reset.
 */
int pg_http1_feed(struct pg_http1 *p, const char *data, size_t len, size_t *used);

/*
 * The connection ended. PG_HTTP1_DONE when that ends the response (a body
 * delimited by the close, or a response already complete); otherwise
 * PG_HTTP1_ERROR with a message saying what was cut short.
 */
int pg_http1_eof(struct pg_http1 *p);

/* True once the final response's headers have been parsed. */
bool pg_http1_headers_done(const struct pg_http1 *p);

#endif
