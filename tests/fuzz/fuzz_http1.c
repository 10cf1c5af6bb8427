/*
 * The HTTP/1.1 response parser (loadgen/http1.c) of the load generator's
 * own read path, on bytes that arrive in pieces.
 *
 * Input: byte 0 picks the number of split points (0-7); the next bytes
 * place them; the rest is what a server sent. The response is parsed
 * whole, in those pieces, and byte by byte (short inputs), each followed
 * by the connection's end when the response did not end: the headers, the
 * de-chunked body, where the response ended and the error must be the
 * same every way (the parser's promise: a read may end anywhere).
 */
#include "fuzz.h"

#include "base/buf.h"
#include "loadgen/http1.h"

static int on_headers(void *ctx, const struct pg_http1 *p)
{
	pg_buf_printf(ctx, "[%d %d %lld %d %d %s]", p->status, p->minor,
		      (long long)p->content_length, p->chunked, p->close, p->content_type);
	return 0;
}

static int on_body(void *ctx, const char *data, size_t len)
{
	FZ_CHECK(len > 0);
	pg_buf_add(ctx, data, len);
	return 0;
}

static const struct pg_http1_cb cb = { on_headers, on_body };

/* Feed s[0..len) cut at cuts[] (sorted); dup: each piece in a block of its
 * own size, so a read past a piece is caught. */
static void parse(struct pg_buf *log, const char *s, size_t len, const size_t *cuts, size_t n_cuts,
		  bool dup)
{
	struct pg_http1 p;
	size_t at = 0, consumed = 0;
	int rc = PG_HTTP1_MORE;

	pg_http1_init(&p, &cb, log);
	for (size_t i = 0; i <= n_cuts && rc == PG_HTTP1_MORE; i++) {
		size_t to = i < n_cuts ? cuts[i] : len, used = 0;
		if (dup) {
			char *piece = fz_dup((const uint8_t *)s + at, to - at);
			rc = pg_http1_feed(&p, piece, to - at, &used);
			free(piece);
		} else {
			rc = pg_http1_feed(&p, s + at, to - at, &used);
		}
		FZ_CHECK(used <= to - at);
		FZ_CHECK(rc != PG_HTTP1_MORE || used == to - at);
		consumed += used;
		at = to;
	}
	FZ_CHECK(rc == PG_HTTP1_MORE || rc == PG_HTTP1_DONE || rc == PG_HTTP1_ERROR);
	if (rc == PG_HTTP1_MORE)
		rc = 10 + pg_http1_eof(&p);
	FZ_CHECK(rc != PG_HTTP1_ERROR && rc != 10 + PG_HTTP1_ERROR ? !p.err[0] : !!p.err[0]);
	pg_buf_printf(log, "<%d %zu %s>", rc, rc == PG_HTTP1_DONE ? consumed : 0, p.err);
	/* a reset parser takes a response again */
	pg_http1_reset(&p);
	FZ_CHECK(pg_http1_feed(&p, "HTTP/1.1 204 No\r\n\r\n", 19, NULL) == PG_HTTP1_DONE);
	pg_http1_release(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	unsigned ctl = fz_byte(&in);
	size_t n_cuts = ctl & 7, cuts[8];
	struct pg_buf whole = PG_BUF_INIT, split = PG_BUF_INIT, again = PG_BUF_INIT;
	char *s;

	fz_cuts(&in, cuts, n_cuts);
	s = fz_dup(in.p, in.n);

	parse(&whole, s, in.n, NULL, 0, true);
	parse(&split, s, in.n, cuts, n_cuts, true);
	FZ_CHECK(split.len == whole.len && !memcmp(split.ptr, whole.ptr, whole.len));
	if (in.n <= 1024) {
		size_t *every = malloc((in.n + 1) * sizeof(*every));
		for (size_t i = 0; i < in.n; i++)
			every[i] = i + 1;
		parse(&again, s, in.n, every, in.n ? in.n - 1 : 0, false);
		FZ_CHECK(again.len == whole.len && !memcmp(again.ptr, whole.ptr, whole.len));
		free(every);
	}
	pg_buf_release(&whole);
	pg_buf_release(&split);
	pg_buf_release(&again);
	free(s);
	return 0;
}
