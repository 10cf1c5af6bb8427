/*
 * The SSE parser (loadgen/sse.c) on bytes that arrive in pieces.
 *
 * Input: byte 0 picks the number of split points (0-7) and whether the
 * event size limit is small; the next bytes place the splits; the rest is
 * the stream. The stream is parsed twice, whole and in pieces: the events
 * must be the same (the parser's promise: events may be split anywhere),
 * each event's data NUL-terminated.
 */
#include "fuzz.h"

#include "base/buf.h"
#include "loadgen/sse.h"

static int record(void *ctx, const struct pg_sse_event *ev)
{
	struct pg_buf *log = ctx;

	FZ_CHECK(ev->data[ev->data_len] == '\0');
	pg_buf_printf(log, "%zu:", ev->type_len);
	pg_buf_add(log, ev->type, ev->type_len);
	pg_buf_printf(log, "|%zu:", ev->data_len);
	pg_buf_add(log, ev->data, ev->data_len);
	pg_buf_putc(log, '\n');
	return 0;
}

/* Feed s[0..len) cut at cuts[] (sorted). dup: each piece in a block of its
 * own size, as curl hands them over, so a read past a piece is caught;
 * otherwise pieces point into s (cheap enough to cut at every byte). */
static bool parse(struct pg_buf *log, const char *s, size_t len, const size_t *cuts, size_t n_cuts,
		  size_t max_event, bool dup)
{
	struct pg_sse p;
	size_t at = 0;
	int rc = 0;
	bool overflow;

	pg_sse_init(&p, record, log);
	if (max_event)
		p.max_event = max_event;
	for (size_t i = 0; i <= n_cuts && rc == 0; i++) {
		size_t to = i < n_cuts ? cuts[i] : len;
		if (dup) {
			char *piece = fz_dup((const uint8_t *)s + at, to - at);
			rc = pg_sse_feed(&p, piece, to - at);
			free(piece);
		} else {
			rc = pg_sse_feed(&p, s + at, to - at);
		}
		at = to;
	}
	if (rc == 0)
		rc = pg_sse_finish(&p);
	overflow = p.overflow;
	FZ_CHECK(rc == 0 || (rc == -1 && overflow));
	/* a parser that overflowed refuses everything after */
	if (overflow)
		FZ_CHECK(pg_sse_feed(&p, "data: x\n\n", 9) == -1);
	/* reset makes it as new */
	pg_sse_reset(&p);
	FZ_CHECK(pg_sse_feed(&p, "data: ok\n\n", 10) == 0);
	pg_sse_release(&p);
	return overflow;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	unsigned ctl = fz_byte(&in);
	size_t n_cuts = ctl & 7, cuts[8];
	size_t max_event = (ctl & 8) ? 64 : 0;
	struct pg_buf whole = PG_BUF_INIT, split = PG_BUF_INIT, again = PG_BUF_INIT;
	char *s;
	bool o1, o2;

	fz_cuts(&in, cuts, n_cuts);
	s = fz_dup(in.p, in.n);

	o1 = parse(&whole, s, in.n, NULL, 0, max_event, true);
	o2 = parse(&split, s, in.n, cuts, n_cuts, max_event, true);
	/* byte at a time: every split point at once */
	if (in.n <= 512) {
		size_t *every = malloc((in.n + 1) * sizeof(*every));
		for (size_t i = 0; i < in.n; i++)
			every[i] = i + 1;
		if (!parse(&again, s, in.n, every, in.n ? in.n - 1 : 0, max_event, false) && !o1)
			FZ_CHECK(again.len == whole.len &&
				 !memcmp(again.ptr, whole.ptr, whole.len));
		free(every);
	}
	/* the size limit may trip earlier on a line that arrives in pieces */
	if (!o1 && !o2)
		FZ_CHECK(split.len == whole.len && !memcmp(split.ptr, whole.ptr, whole.len));
	pg_buf_release(&whole);
	pg_buf_release(&split);
	pg_buf_release(&again);
	free(s);
	return 0;
}
