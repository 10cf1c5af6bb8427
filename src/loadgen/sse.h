#ifndef PERFGATE_LOADGEN_SSE_H
#define PERFGATE_LOADGEN_SSE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"

/*
 * An incremental server-sent-events parser (WHATWG "event stream
 * interpretation"), fed whatever bytes a write callback received: events
 * may be split anywhere, including inside "\r\n" or a UTF-8 sequence
 * (the parser works on bytes and never decodes).
 *
 *  - lines end with CRLF, LF or CR; a blank line dispatches the event;
 *  - "field:value" with one optional space after the colon stripped
 *    ("data:{...}" and "data: {...}" are the same); a line without a colon
 *    is a field with an empty value;
 *  - several data lines are joined with "\n";
 *  - lines starting with ':' are comments (heartbeats, pings): counted,
 *    otherwise ignored;
 *  - "event:" sets the event type of the next dispatch ("error" events are
 *    how some servers report failures inside a 200 stream);
 *  - "id" and "retry" are ignored; a leading UTF-8 BOM is skipped.
 *
 * The event handed to the callback points into the parser's buffers and is
 * valid only during the call. Buffers keep their capacity between events,
 * so a warm parser does not allocate per event.
 */
struct pg_sse_event {
	const char *type; /* "" when no event: field was given */
	size_t type_len;
	const char *data; /* data lines joined by "\n", NUL-terminated */
	size_t data_len;
};

/* Return 0 to go on, anything else to stop parsing (returned by feed). */
typedef int (*pg_sse_cb)(void *ctx, const struct pg_sse_event *ev);

struct pg_sse {
	struct pg_buf line; /* a line split across feeds */
	struct pg_buf data;
	struct pg_buf type;
	size_t max_event; /* data larger than this is an error */
	size_t comments;  /* comment / heartbeat lines seen */
	pg_sse_cb cb;
	void *ctx;
	bool has_data; /* a data field was seen since the last dispatch */
	bool after_cr; /* the last byte was CR: an LF next is part of it */
	bool started;  /* past a possible BOM */
	bool overflow;
};

#define PG_SSE_MAX_EVENT_DEFAULT (16u << 20)

void pg_sse_init(struct pg_sse *p, pg_sse_cb cb, void *ctx);
/* Forget any partial event, keep the buffers (reuse for the next stream). */
void pg_sse_reset(struct pg_sse *p);
void pg_sse_release(struct pg_sse *p);

/*
 * Parse len more bytes. Returns 0, the callback's non-zero value (parsing
 * stopped), or -1 when an event exceeds max_event (the stream is
 * malformed; further feeds are ignored).
 */
int pg_sse_feed(struct pg_sse *p, const char *bytes, size_t len);

/*
 * End of stream. A last line without its terminator is taken as a line,
 * and a pending event without its blank line is dispatched anyway: servers
 * that close right after "data: [DONE]" are common and vLLM's client
 * accepts them. Same return values as feed.
 */
int pg_sse_finish(struct pg_sse *p);

#endif
