/* The HTTP/1.1 response parser of the load generator's own read path:
 * every response is fed whole, split at every byte offset, and byte by
 * byte, and must always give the same headers, the same body, the same end
 * and the same error. */
#include "testutil.h"

#include "base/buf.h"
#include "loadgen/http1.h"

#include <stdlib.h>
#include <string.h>

struct rec {
	struct pg_buf log;
	int stop_after; /* stop at the n-th body byte; 0: never */
	size_t body_bytes;
};

static int on_headers(void *ctx, const struct pg_http1 *p)
{
	struct rec *r = ctx;

	pg_buf_printf(&r->log, "[%d cl=%lld%s%s ct=%s]", p->status, (long long)p->content_length,
		      p->chunked ? " chunked" : "", p->close ? " close" : "", p->content_type);
	return 0;
}

static int on_body(void *ctx, const char *data, size_t len)
{
	struct rec *r = ctx;

	pg_buf_add(&r->log, data, len);
	r->body_bytes += len;
	return r->stop_after && r->body_bytes >= (size_t)r->stop_after;
}

static const struct pg_http1_cb cb = { on_headers, on_body };

/* Parse s in pieces ending at cuts[] (then the rest), then the end of the
 * connection if the response did not end; log everything. */
static void parse(struct pg_buf *out, const char *s, size_t len, const size_t *cuts, size_t ncuts,
		  int stop_after)
{
	struct rec r = { PG_BUF_INIT, stop_after, 0 };
	struct pg_http1 p;
	size_t at = 0, consumed = 0;
	int rc = PG_HTTP1_MORE;

	pg_http1_init(&p, &cb, &r);
	for (size_t i = 0; i <= ncuts && rc == PG_HTTP1_MORE; i++) {
		size_t to = i < ncuts ? cuts[i] : len, used = 0;
		rc = pg_http1_feed(&p, s + at, to - at, &used);
		consumed += used;
		at = to;
	}
	if (rc == PG_HTTP1_MORE)
		rc = pg_http1_eof(&p) == PG_HTTP1_DONE ? 10 : 11;
	pg_buf_add(out, r.log.ptr, r.log.len);
	/* where the response ended: "all" when at the end of the bytes */
	if (rc == PG_HTTP1_DONE && consumed == len)
		pg_buf_printf(out, " <rc=%d used=all close=%d err=%s>", rc, p.close, p.err);
	else
		pg_buf_printf(out, " <rc=%d used=%zu close=%d err=%s>", rc,
			      rc == PG_HTTP1_DONE ? consumed : 0, p.close, p.err);
	pg_buf_release(&r.log);
	pg_http1_release(&p);
}

/* clang-format off */
static const struct {
	const char *resp;
	const char *want;
} cases[] = {
	{ "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 5\r\n\r\nhello",
	  "[200 cl=5 ct=text/event-stream]hello <rc=1 used=all close=0 err=>" },
	{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n9\r\ndata: a\n\n\r\n0\r\n\r\n",
	  "[200 cl=-1 chunked ct=]data: a\n\n <rc=1 used=all close=0 err=>" },
	{ "HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n"
	  "A;ext=1\r\n0123456789\r\nb \r\nabcdefghijk\r\n0\r\nX-Trailer: 1\r\n\r\n",
	  "[200 cl=-1 chunked ct=]0123456789abcdefghijk <rc=1 used=all close=0 err=>" },
	{ "HTTP/1.1 200 OK\nContent-Length: 2\n\nok",
	  "[200 cl=2 ct=]ok <rc=1 used=all close=0 err=>" },
	{ "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n2\nok\n0\n\n",
	  "[200 cl=-1 chunked ct=]ok <rc=1 used=all close=0 err=>" },
	{ "HTTP/1.0 200 OK\r\n\r\nbody till close",
	  "[200 cl=-1 close ct=]body till close <rc=10 used=0 close=1 err=>" },
	{ "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{}",
	  "[200 cl=-1 ct=application/json]{} <rc=10 used=0 close=1 err=>" },
	{ "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 1\r\n\r\nx",
	  "[200 cl=1 ct=]x <rc=1 used=all close=0 err=>" },
	{ "HTTP/1.1 200 OK\r\nConnection: upgrade, close\r\nContent-Length: 1\r\n\r\nx",
	  "[200 cl=1 close ct=]x <rc=1 used=all close=1 err=>" },
	{ "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx",
	  "[200 cl=1 ct=]x <rc=1 used=all close=0 err=>" },
	{ "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n"
	  "Content-Length: 25\r\n\r\n{\"error\":{\"message\":\"x\"}}",
	  "[500 cl=25 ct=application/json]{\"error\":{\"message\":\"x\"}} <rc=1 used=all close=0 err=>" },
	{ "HTTP/1.1 204 No Content\r\n\r\n", "[204 cl=-1 ct=] <rc=1 used=all close=0 err=>" },
	{ "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", "[200 cl=0 ct=] <rc=1 used=all close=0 err=>" },
	/* bytes after the response are left unconsumed */
	{ "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxEXTRA",
	  "[200 cl=1 ct=]x <rc=1 used=39 close=0 err=>" },
	{ "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n",
	  "[200 cl=-1 chunked ct=]x <rc=1 used=all close=0 err=>" },
	/* a folded line is ignored */
	{ "HTTP/1.1 200 OK\r\nX-A: 1\r\n  more\r\nContent-Length: 1\r\n\r\nx",
	  "[200 cl=1 ct=]x <rc=1 used=all close=0 err=>" },
	/* errors */
	{ "HTTP/2 200\r\n\r\n", " <rc=-1 used=0 close=0 err=not an HTTP/1.x status line: \"HTTP/2 200\">" },
	{ "<html>oops</html>\n", " <rc=-1 used=0 close=0 err=not an HTTP/1.x status line: \"<html>oops</html>\">" },
	{ "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n",
	  " <rc=-1 used=0 close=0 err=an invalid Content-Length: \"1x\">" },
	{ "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
	  " <rc=-1 used=0 close=0 err=conflicting or invalid Content-Length headers>" },
	{ "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
	  " <rc=-1 used=0 close=0 err=a malformed header line: \"no colon here\">" },
	{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
	  "[200 cl=-1 chunked ct=] <rc=-1 used=0 close=0 err=a malformed chunk size line>" },
	{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nxy\r\n",
	  "[200 cl=-1 chunked ct=]x <rc=-1 used=0 close=0 err=a chunk not followed by CRLF>" },
	{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1000000000000000\r\n",
	  "[200 cl=-1 chunked ct=] <rc=-1 used=0 close=0 err=a chunk size too large>" },
	{ "HTTP/1.1 101 Switching Protocols\r\n\r\n",
	  " <rc=-1 used=0 close=0 err=the server switched protocols (HTTP 101)>" },
	/* cut short by the connection's end */
	{ "", " <rc=11 used=0 close=0 err=the server closed the connection without a response>" },
	{ "HTTP/1.1 2", " <rc=11 used=0 close=0 err=the connection closed inside the response's status line>" },
	{ "HTTP/1.1 200 OK\r\nContent-Le",
	  " <rc=11 used=0 close=0 err=the connection closed inside the response's headers>" },
	{ "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
	  "[200 cl=10 ct=]abc <rc=11 used=0 close=0 err=the connection closed 7 bytes before the end of the body (Content-Length 10)>" },
	{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n",
	  "[200 cl=-1 chunked ct=]abc <rc=11 used=0 close=0 err=the connection closed before the last chunk of the body>" },
};
/* clang-format on */

#define N_CASES (sizeof(cases) / sizeof(cases[0]))

START_TEST(responses_whole_and_split_everywhere)
{
	for (size_t c = 0; c < N_CASES; c++) {
		const char *s = cases[c].resp;
		size_t len = strlen(s);
		struct pg_buf whole = PG_BUF_INIT;
		size_t *every = malloc((len + 1) * sizeof(*every));

		parse(&whole, s, len, NULL, 0, 0);
		ck_assert_msg(!strcmp(whole.ptr, cases[c].want), "case %zu:\n got  %s\n want %s", c,
			      whole.ptr, cases[c].want);
		for (size_t cut = 0; cut <= len; cut++) {
			struct pg_buf split = PG_BUF_INIT;
			parse(&split, s, len, &cut, 1, 0);
			ck_assert_msg(!strcmp(split.ptr, whole.ptr),
				      "case %zu cut at %zu:\n got  %s", c, cut, split.ptr);
			pg_buf_release(&split);
		}
		for (size_t i = 0; i < len; i++)
			every[i] = i + 1;
		{
			struct pg_buf bytes = PG_BUF_INIT;
			parse(&bytes, s, len, every, len ? len - 1 : 0, 0);
			ck_assert_msg(!strcmp(bytes.ptr, whole.ptr),
				      "case %zu byte by byte:\n got  %s", c, bytes.ptr);
			pg_buf_release(&bytes);
		}
		free(every);
		pg_buf_release(&whole);
	}
}
END_TEST

START_TEST(callbacks_stop_and_reset_reuses)
{
	const char *two = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcd";
	struct rec r = { PG_BUF_INIT, 2, 0 };
	struct pg_http1 p;
	size_t used = 0;

	pg_http1_init(&p, &cb, &r);
	/* the body callback stops the parse: it stays stopped */
	ck_assert_int_eq(pg_http1_feed(&p, two, strlen(two), &used), PG_HTTP1_STOPPED);
	ck_assert_int_eq(pg_http1_feed(&p, "x", 1, &used), PG_HTTP1_STOPPED);
	/* a reset parser takes the next response of a keep-alive connection */
	pg_http1_reset(&p);
	r.stop_after = 0;
	pg_buf_reset(&r.log);
	ck_assert_int_eq(pg_http1_feed(&p, two, strlen(two), &used), PG_HTTP1_DONE);
	ck_assert_uint_eq(used, strlen(two));
	ck_assert_str_eq(r.log.ptr, "[200 cl=4 ct=]abcd");
	ck_assert(pg_http1_headers_done(&p));
	/* the end of the connection after a complete response is no error */
	ck_assert_int_eq(pg_http1_eof(&p), PG_HTTP1_DONE);
	/* headers beyond the cap are an error, not unbounded memory */
	pg_http1_reset(&p);
	ck_assert_int_eq(pg_http1_feed(&p, "HTTP/1.1 200 OK\r\n", 17, &used), PG_HTTP1_MORE);
	{
		char *big = malloc(PG_HTTP1_MAX_HEAD + 16);
		int rc = PG_HTTP1_MORE;
		memset(big, 'a', PG_HTTP1_MAX_HEAD + 16);
		for (size_t at = 0; at < PG_HTTP1_MAX_HEAD + 16 && rc == PG_HTTP1_MORE; at += 1000)
			rc = pg_http1_feed(&p, big + at,
					   1000 < PG_HTTP1_MAX_HEAD + 16 - at
						   ? 1000
						   : PG_HTTP1_MAX_HEAD + 16 - at,
					   &used);
		ck_assert_int_eq(rc, PG_HTTP1_ERROR);
		ck_assert_str_eq(p.err, "response headers larger than 64 KiB");
		free(big);
	}
	pg_http1_release(&p);
	pg_buf_release(&r.log);
}
END_TEST

static Suite *http1_suite(void)
{
	Suite *s = suite_create("http1");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, responses_whole_and_split_everywhere);
	tcase_add_test(tc, callbacks_stop_and_reset_reuses);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(http1_suite());
}
