#include "loadgen/http1.h"

#include "base/strutil.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

enum {
	S_STATUS,
	S_HEADER,
	S_CHUNK_SIZE,
	S_CHUNK_EXT,
	S_CHUNK_DATA,
	S_CHUNK_CR, /* after a chunk's data: CRLF or LF */
	S_CHUNK_LF,
	S_TRAILER,      /* at the start of a trailer line */
	S_TRAILER_LINE, /* inside one: skipped */
	S_TRAILER_LF,   /* a CR at a line's start: the LF that ends the message */
	S_BODY_LEN,
	S_BODY_CLOSE,
	S_DONE,
	S_ERROR,
	S_STOPPED,
};

void pg_http1_init(struct pg_http1 *p, const struct pg_http1_cb *cb, void *ctx)
{
	memset(p, 0, sizeof(*p));
	pg_buf_init(&p->line);
	p->cb = cb;
	p->ctx = ctx;
	pg_http1_reset(p);
}

void pg_http1_reset(struct pg_http1 *p)
{
	p->state = S_STATUS;
	p->status = 0;
	p->minor = 1;
	p->content_length = -1;
	p->chunked = p->close = p->no_body = p->saw_body = false;
	p->left = 0;
	p->hex_digits = 0;
	p->head_bytes = 0;
	pg_buf_reset(&p->line);
	p->content_type[0] = '\0';
	p->err[0] = '\0';
}

void pg_http1_release(struct pg_http1 *p)
{
	pg_buf_release(&p->line);
}

bool pg_http1_headers_done(const struct pg_http1 *p)
{
	return p->state != S_STATUS && p->state != S_HEADER;
}

__attribute__((format(printf, 2, 3))) static int fail(struct pg_http1 *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->err, sizeof(p->err), fmt, ap);
	va_end(ap);
	p->state = S_ERROR;
	return PG_HTTP1_ERROR;
}

/* The first bytes of a line, printable, for a message. */
static const char *quote(char *out, size_t cap, const char *s, size_t len)
{
	size_t j = 0;

	for (size_t i = 0; i < len && j + 2 < cap; i++)
		out[j++] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	if (len > cap - 3 && j >= 3)
		memcpy(out + j - 3, "...", 3);
	out[j] = '\0';
	return out;
}

static bool is_ows(char c)
{
	return c == ' ' || c == '\t';
}

/* Does the comma-separated list v[0..n) hold token t (case-insensitive)? */
static bool has_token(const char *v, size_t n, const char *t)
{
	size_t tl = strlen(t), i = 0;

	while (i < n) {
		size_t a, b;
		while (i < n && (is_ows(v[i]) || v[i] == ','))
			i++;
		a = i;
		while (i < n && v[i] != ',')
			i++;
		b = i;
		while (b > a && is_ows(v[b - 1]))
			b--;
		if (b - a == tl && !strncasecmp(v + a, t, tl))
			return true;
	}
	return false;
}

/* The last token of a comma-separated list is t. */
static bool last_token_is(const char *v, size_t n, const char *t)
{
	size_t tl = strlen(t), b = n, a;

	while (b > 0 && (is_ows(v[b - 1]) || v[b - 1] == ','))
		b--;
	a = b;
	while (a > 0 && v[a - 1] != ',' && !is_ows(v[a - 1]))
		a--;
	return b - a == tl && !strncasecmp(v + a, t, tl);
}

static int status_line(struct pg_http1 *p, const char *s, size_t n)
{
	char q[48];
	int code = 0;

	if (n < 12 || memcmp(s, "HTTP/1.", 7) || s[7] < '0' || s[7] > '9' || s[8] != ' ' ||
	    s[9] < '1' || s[9] > '9' || s[10] < '0' || s[10] > '9' || s[11] < '0' || s[11] > '9' ||
	    (n > 12 && s[12] != ' '))
		return fail(p, "not an HTTP/1.x status line: \"%s\"", quote(q, sizeof(q), s, n));
	p->minor = s[7] - '0';
	for (int i = 9; i < 12; i++)
		code = code * 10 + (s[i] - '0');
	p->status = code;
	/* HTTP/1.0 closes unless it says keep-alive */
	p->close = p->minor == 0;
	p->state = S_HEADER;
	return PG_HTTP1_MORE;
}

static int header_line(struct pg_http1 *p, const char *s, size_t n)
{
	const char *colon = memchr(s, ':', n);
	const char *v;
	size_t name_len, vn;
	char q[48];

	if (is_ows(s[0]))
		return PG_HTTP1_MORE; /* an obsolete folded continuation: ignored */
	if (!colon || colon == s)
		return fail(p, "a malformed header line: \"%s\"", quote(q, sizeof(q), s, n));
	name_len = (size_t)(colon - s);
	v = colon + 1;
	vn = n - name_len - 1;
	while (vn && is_ows(*v))
		v++, vn--;
	while (vn && is_ows(v[vn - 1]))
		vn--;
#define IS(name) (name_len == sizeof(name) - 1 && !strncasecmp(s, name, name_len))
	if (IS("content-length")) {
		uint64_t x = 0;
		if (!vn)
			return fail(p, "an empty Content-Length");
		for (size_t i = 0; i < vn; i++) {
			if (v[i] < '0' || v[i] > '9' || x > (UINT64_MAX >> 4))
				return fail(p, "an invalid Content-Length: \"%s\"",
					    quote(q, sizeof(q), v, vn));
			x = x * 10 + (uint64_t)(v[i] - '0');
		}
		if (x > (uint64_t)INT64_MAX ||
		    (p->content_length >= 0 && (uint64_t)p->content_length != x))
			return fail(p, "conflicting or invalid Content-Length headers");
		p->content_length = (int64_t)x;
	} else if (IS("transfer-encoding")) {
		/* chunked must be last; any other coding leaves the body
		 * delimited by the connection's end */
		p->chunked = last_token_is(v, vn, "chunked");
		if (!p->chunked)
			p->close = true;
	} else if (IS("connection")) {
		if (has_token(v, vn, "close"))
			p->close = true;
		else if (p->minor == 0 && has_token(v, vn, "keep-alive"))
			p->close = false;
	} else if (IS("content-type")) {
		size_t k = vn < sizeof(p->content_type) - 1 ? vn : sizeof(p->content_type) - 1;
		memcpy(p->content_type, v, k);
		p->content_type[k] = '\0';
	}
#undef IS
	return PG_HTTP1_MORE;
}

/* The blank line after the headers: decide how the body is delimited. */
static int headers_end(struct pg_http1 *p)
{
	if (p->status >= 100 && p->status < 200) {
		if (p->status == 101)
			return fail(p, "the server switched protocols (HTTP 101)");
		/* an interim response (100 Continue, 103 Early Hints): the
		 * final one follows */
		pg_http1_reset(p);
		return PG_HTTP1_MORE;
	}
	if (p->chunked)
		p->content_length = -1; /* chunked wins (RFC 9112 6.3) */
	if (p->cb && p->cb->on_headers && p->cb->on_headers(p->ctx, p)) {
		p->state = S_STOPPED;
		return PG_HTTP1_STOPPED;
	}
	if (p->no_body || p->status == 204 || p->status == 304) {
		p->state = S_DONE;
	} else if (p->chunked) {
		p->state = S_CHUNK_SIZE;
		p->left = 0;
		p->hex_digits = 0;
	} else if (p->content_length >= 0) {
		p->left = (uint64_t)p->content_length;
		p->state = p->left ? S_BODY_LEN : S_DONE;
	} else {
		p->close = true;
		p->state = S_BODY_CLOSE;
	}
	return p->state == S_DONE ? PG_HTTP1_DONE : PG_HTTP1_MORE;
}

/* Status and header lines: up to the LF, then one line at a time. */
static int head(struct pg_http1 *p, const char *d, size_t len, size_t *i)
{
	const char *lf = memchr(d + *i, '\n', len - *i);
	size_t take = lf ? (size_t)(lf - (d + *i)) + 1 : len - *i;
	const char *s;
	size_t n;
	int rc;

	p->head_bytes += take;
	if (p->head_bytes > PG_HTTP1_MAX_HEAD)
		return fail(p, "response headers larger than %u KiB", PG_HTTP1_MAX_HEAD >> 10);
	if (!lf) {
		pg_buf_add(&p->line, d + *i, take);
		*i = len;
		return PG_HTTP1_MORE;
	}
	if (p->line.len) {
		pg_buf_add(&p->line, d + *i, take - 1);
		s = p->line.ptr;
		n = p->line.len;
	} else {
		s = d + *i;
		n = take - 1;
	}
	*i += take;
	if (n && s[n - 1] == '\r')
		n--;
	if (p->state == S_STATUS) {
		/* blank lines before a status line are tolerated */
		rc = n ? status_line(p, s, n) : PG_HTTP1_MORE;
	} else if (!n) {
		pg_buf_reset(&p->line);
		return headers_end(p);
	} else {
		rc = header_line(p, s, n);
	}
	pg_buf_reset(&p->line);
	return rc;
}

static int body(struct pg_http1 *p, const char *d, size_t n)
{
	if (!n)
		return PG_HTTP1_MORE;
	p->saw_body = true;
	if (p->cb && p->cb->on_body && p->cb->on_body(p->ctx, d, n)) {
		p->state = S_STOPPED;
		return PG_HTTP1_STOPPED;
	}
	return PG_HTTP1_MORE;
}

int pg_http1_feed(struct pg_http1 *p, const char *d, size_t len, size_t *used)
{
	size_t i = 0;
	int rc = PG_HTTP1_MORE;

	while (i < len && rc == PG_HTTP1_MORE) {
		char c = d[i];
		size_t n;

		switch (p->state) {
		case S_STATUS:
		case S_HEADER:
			rc = head(p, d, len, &i);
			break;
		case S_CHUNK_SIZE: {
			int v;
			/* the size's digits in one loop, not one pass of the state
			 * machine each: a streamed token is a chunk of its own */
			while ((v = pg_hex_digit(c)) >= 0) {
				if (++p->hex_digits > 15)
					return fail(p, "a chunk size too large");
				p->left = p->left * 16 + (uint64_t)v;
				if (++i == len)
					break;
				c = d[i];
			}
			if (v >= 0)
				break;
			if (!p->hex_digits) {
				return fail(p, "a malformed chunk size line");
			} else if (c == '\r' && i + 1 < len && d[i + 1] == '\n') {
				p->state = p->left ? S_CHUNK_DATA : S_TRAILER;
				i += 2;
			} else if (c == ';' || is_ows(c) || c == '\r') {
				p->state = S_CHUNK_EXT;
				i++;
			} else if (c == '\n') {
				p->state = p->left ? S_CHUNK_DATA : S_TRAILER;
				i++;
			} else {
				return fail(p, "a malformed chunk size line");
			}
			break;
		}
		case S_CHUNK_EXT: {
			const char *lf = memchr(d + i, '\n', len - i);
			if (!lf) {
				i = len;
				break;
			}
			i = (size_t)(lf - d) + 1;
			p->state = p->left ? S_CHUNK_DATA : S_TRAILER;
			break;
		}
		case S_CHUNK_DATA:
			n = len - i < p->left ? len - i : (size_t)p->left;
			p->left -= n;
			rc = body(p, d + i, n);
			i += n;
			if (!p->left && rc == PG_HTTP1_MORE)
				p->state = S_CHUNK_CR;
			break;
		case S_CHUNK_CR:
			if (c == '\r' && i + 1 < len && d[i + 1] == '\n') {
				p->state = S_CHUNK_SIZE;
				p->hex_digits = 0;
				i++;
			} else if (c == '\r') {
				p->state = S_CHUNK_LF;
			} else if (c == '\n') {
				p->state = S_CHUNK_SIZE;
				p->hex_digits = 0;
			} else {
				return fail(p, "a chunk not followed by CRLF");
			}
			i++;
			break;
		case S_CHUNK_LF:
			if (c != '\n')
				return fail(p, "a chunk not followed by CRLF");
			p->state = S_CHUNK_SIZE;
			p->hex_digits = 0;
			i++;
			break;
		case S_TRAILER:
			if (c == '\n') {
				p->state = S_DONE;
				rc = PG_HTTP1_DONE;
			} else {
				p->state = c == '\r' ? S_TRAILER_LF : S_TRAILER_LINE;
			}
			i++;
			break;
		case S_TRAILER_LINE: {
			const char *lf = memchr(d + i, '\n', len - i);
			size_t to = lf ? (size_t)(lf - d) + 1 : len;
			p->head_bytes += to - i;
			if (p->head_bytes > PG_HTTP1_MAX_HEAD)
				return fail(p, "trailers larger than %u KiB",
					    PG_HTTP1_MAX_HEAD >> 10);
			i = to;
			if (lf)
				p->state = S_TRAILER;
			break;
		}
		case S_TRAILER_LF:
			if (c == '\n') {
				p->state = S_DONE;
				rc = PG_HTTP1_DONE;
			} else {
				p->state = S_TRAILER_LINE; /* a CR inside a trailer line */
			}
			i++;
			break;
		case S_BODY_LEN:
			n = len - i < p->left ? len - i : (size_t)p->left;
			p->left -= n;
			rc = body(p, d + i, n);
			i += n;
			if (!p->left && rc == PG_HTTP1_MORE) {
				p->state = S_DONE;
				rc = PG_HTTP1_DONE;
			}
			break;
		case S_BODY_CLOSE:
			rc = body(p, d + i, len - i);
			i = len;
			break;
		case S_DONE:
			rc = PG_HTTP1_DONE;
			break;
		case S_ERROR:
			rc = PG_HTTP1_ERROR;
			break;
		default:
			rc = PG_HTTP1_STOPPED;
			break;
		}
	}
	if (rc == PG_HTTP1_MORE) {
		/* a response that ends exactly where the bytes do */
		if (p->state == S_DONE)
			rc = PG_HTTP1_DONE;
		else if (p->state == S_ERROR)
			rc = PG_HTTP1_ERROR;
		else if (p->state == S_STOPPED)
			rc = PG_HTTP1_STOPPED;
	}
	if (used)
		*used = i;
	return rc;
}

int pg_http1_eof(struct pg_http1 *p)
{
	switch (p->state) {
	case S_DONE:
	case S_BODY_CLOSE:
		p->state = S_DONE;
		return PG_HTTP1_DONE;
	case S_ERROR:
		return PG_HTTP1_ERROR;
	case S_STATUS:
		if (!p->head_bytes)
			return fail(p, "the server closed the connection without a response");
		return fail(p, "the connection closed inside the response's status line");
	case S_HEADER:
		return fail(p, "the connection closed inside the response's headers");
	case S_BODY_LEN:
		return fail(p,
			    "the connection closed %llu bytes before the end of the body "
			    "(Content-Length %lld)",
			    (unsigned long long)p->left, (long long)p->content_length);
	default:
		return fail(p, "the connection closed before the last chunk of the body");
	}
}
