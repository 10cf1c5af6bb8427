#ifndef PERFGATE_MOCKSERVER_HTTP_H
#define PERFGATE_MOCKSERVER_HTTP_H

#include <stdbool.h>
#include <stddef.h>

/*
 * HTTP/1.x request parsing for the mock server: stateless over a byte
 * buffer, so a request split at any offset or several pipelined in one read
 * parse the same. Only Content-Length bodies (Transfer-Encoding in a request
 * is refused with 501); the rules that keep a parser from disagreeing with
 * a proxy about where a request ends (RFC 9112 §6.3, §11.2) are enforced:
 * one Content-Length value, no white space before a header's colon, no
 * obsolete line folding. Bare LF line ends are accepted, as most servers do.
 *
 * All pointers in the result point into the caller's buffer.
 */
enum pg_http_method {
	PG_HTTP_OTHER = 0,
	PG_HTTP_GET,
	PG_HTTP_HEAD,
	PG_HTTP_POST,
};

struct pg_http_request {
	enum pg_http_method method;
	const char *method_str;
	size_t method_len;
	const char *path; /* without the query string */
	size_t path_len;
	int minor_version; /* HTTP/1.<minor> */
	bool keep_alive;   /* after this response */
	bool expect_continue;
	bool has_content_length;
	size_t head_len; /* request line + headers + blank line */
	size_t content_length;
	const char *body;       /* content_length bytes */
	const char *request_id; /* X-Request-Id value, or NULL */
	size_t request_id_len;
	size_t total_len; /* head_len + content_length */
};

enum pg_http_parse_result {
	PG_HTTP_COMPLETE = 1,
	PG_HTTP_INCOMPLETE = 0,
	PG_HTTP_BAD = -1,
};

/* Largest request head accepted (431 beyond it). */
#define PG_HTTP_MAX_HEAD (64 * 1024)

/*
 * Parse the request at the start of buf[0..len).
 *   PG_HTTP_COMPLETE: *req filled; the request occupies req->total_len bytes.
 *   PG_HTTP_INCOMPLETE: more bytes needed. When the head is complete,
 *     req->head_len, total_len and expect_continue are already set (so a
 *     server can send 100 Continue and size its buffer).
 *   PG_HTTP_BAD: *status is the HTTP status to answer (400, 413, 431, 501,
 *     505) and *why a short static reason; the connection cannot be reused.
 */
int pg_http_parse_request(const char *buf, size_t len, size_t max_body, struct pg_http_request *req,
			  int *status, const char **why);

/* The reason phrase of a status code ("Not Found"). */
const char *pg_http_reason(int status);

#endif
