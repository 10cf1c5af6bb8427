#ifndef PERFGATE_LOADGEN_REQTRACE_H
#define PERFGATE_LOADGEN_REQTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "loadgen/sse.h"

/*
 * What one benchmark request did, as timestamps and counts: the load
 * generator fills it while the response streams in, the metrics
 * (loadgen/loadstats.h) are computed from an array of these.
 *
 * Times are int64 nanoseconds of CLOCK_MONOTONIC relative to the run's
 * origin (the start of the dispatch loop); -1 means "never happened".
 */
enum pg_fail {
	PG_FAIL_NONE = 0,
	PG_FAIL_HTTP,         /* status other than 200: "http_<status>" */
	PG_FAIL_TIMEOUT,      /* the per-request timeout expired */
	PG_FAIL_DISCONNECT,   /* connection closed or reset before the end */
	PG_FAIL_CONNECT,      /* no connection could be made */
	PG_FAIL_MALFORMED,    /* not SSE/JSON we can read */
	PG_FAIL_SERVER_ERROR, /* an error event or error object in a 200 response */
	PG_FAIL_NO_CONTENT,   /* a clean 200 that never carried a choice */
	PG_FAIL_CANCELLED,    /* stopped by a signal */
	PG_FAIL_OTHER,
	PG_FAIL_COUNT
};

/* "timeout", "disconnect", ...; PG_FAIL_HTTP gives "http" (the category
 * key adds the status: "http_500"). */
const char *pg_fail_name(enum pg_fail f);

struct pg_reqtrace {
	int64_t scheduled_ns;  /* due on the arrival schedule */
	int64_t eligible_ns;   /* due and a concurrency slot was free */
	int64_t sent_ns;       /* handed to the HTTP client: vLLM's start_time */
	int64_t host_lag_ns;   /* of the send lag (sent_ns - eligible_ns), the time
				  the client's event loop still sat in its wait
				  after the request was due: the host woke it late
				  (the rest of the lag the loop spent working);
				  -1 unknown */
	int64_t first_byte_ns; /* first response body byte */
	int64_t end_ns;        /* transfer finished */

	int64_t *chunk_ns;      /* one per content message (non-empty choices) */
	uint32_t *chunk_tokens; /* completion_tokens reported with each content
	                           message (continuous_usage_stats), 0 if none */
	size_t n_chunks;
	size_t cap_chunks;
	size_t n_chunk_usage; /* content messages that carried usage */

	long prompt_len;              /* from the dataset */
	long usage_prompt_tokens;     /* -1: not reported */
	long usage_completion_tokens; /* -1: not reported */
	long usage_cached_tokens;     /* usage.prompt_tokens_details.cached_tokens;
					 -1: not reported */
	int http_status;              /* 0 before headers */
	bool saw_done;                /* data: [DONE] */
	enum pg_fail fail;
	char *error; /* owned message for a failure, NULL on success */
	/* when set (borrowed), the generated text is appended to it as it
	 * arrives: choices[0].delta.content (chat), choices[0].text, or a
	 * whole body's choices[0].message.content -- a multi-turn session's
	 * answer as received. NULL: not kept (the per-token path stays a
	 * skim) */
	struct pg_buf *text;
};

/* Zero the trace, times -1, usage -1. Reuses nothing. */
void pg_reqtrace_init(struct pg_reqtrace *t);
/* Preallocate room for n content messages so that the per-chunk path
 * does not allocate. */
void pg_reqtrace_reserve(struct pg_reqtrace *t, size_t n);
void pg_reqtrace_release(struct pg_reqtrace *t);
/* Record a failure unless one is already recorded (the first cause wins). */
void pg_reqtrace_fail(struct pg_reqtrace *t, enum pg_fail f, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Succeeded: no failure and at least one content message. */
bool pg_reqtrace_ok(const struct pg_reqtrace *t);
/* A failed request's category, as failed_by_category counts it:
 * "http_<status>" (written into key), else pg_fail_name ("no_content" for
 * a request that carried nothing without another cause). */
const char *pg_reqtrace_category(const struct pg_reqtrace *t, char key[32]);
/* Output tokens as vLLM counts them: usage.completion_tokens; when the
 * server sent none, the last per-message count, else the number of
 * content messages (vLLM would re-tokenize the text; we have no tokenizer). */
long pg_reqtrace_output_tokens(const struct pg_reqtrace *t);
/* Input tokens: usage.prompt_tokens when reported (the server's count
 * overrides the dataset's, as in vLLM), else prompt_len. */
long pg_reqtrace_input_tokens(const struct pg_reqtrace *t);

/*
 * Turning an OpenAI-compatible response into a trace: pure, fed the bytes
 * and the time they arrived, so the recorded-trace tests replay exactly
 * what the HTTP client does.
 *
 * Classification of each SSE data message (docs/design/vllm-benchmarks.md §1):
 *   "[DONE]"                       -> end marker
 *   JSON with non-empty "choices"  -> content message (TTFT/ITL/E2EL), even
 *                                     with empty text (vLLM's newest rule)
 *   JSON with "usage" object       -> completion_tokens / prompt_tokens
 *   "error" key, "object":"error", or an "event: error" -> server_error
 *   anything else that is not JSON -> malformed_stream
 * A non-streaming JSON body is one content message at the time it
 * completed. A non-200 status keeps the first bytes of the body for the
 * error message.
 */
struct pg_oai_resp {
	struct pg_reqtrace *t;
	struct pg_sse sse;
	struct pg_buf body; /* JSON body, or the start of an error body */
	int64_t now_ns;
	int mode;
};

void pg_oai_resp_init(struct pg_oai_resp *r);
void pg_oai_resp_release(struct pg_oai_resp *r);
/*
 * Headers are in: begin a response for trace t (status 0: none came). The
 * content type is not consulted: servers mislabel both ways, so a 200 body
 * is SSE unless its first non-blank byte opens a JSON object.
 */
void pg_oai_resp_begin(struct pg_oai_resp *r, struct pg_reqtrace *t, int http_status);
/* Body bytes that arrived at now_ns. Returns -1 when the request has
 * failed and the transfer should be stopped, else 0. */
int pg_oai_resp_feed(struct pg_oai_resp *r, int64_t now_ns, const char *bytes, size_t len);
/*
 * The transfer ended at now_ns; transport is PG_FAIL_NONE for a clean end
 * or the transport's failure with its message.
 */
void pg_oai_resp_end(struct pg_oai_resp *r, int64_t now_ns, enum pg_fail transport,
		     const char *transport_msg);

/*
 * The skim of one JSON message: a single pass that validates the syntax
 * and picks out only what the metrics need, without building a tree (the
 * per-token path of a client ingesting 100k messages/s).
 */
struct pg_chunk_info {
	bool choices;           /* "choices" is a non-empty array */
	bool usage;             /* "usage" is an object */
	bool error;             /* "error" is present and not null, or "object":"error" */
	long prompt_tokens;     /* usage.prompt_tokens, -1 absent */
	long completion_tokens; /* usage.completion_tokens, -1 absent */
	long cached_tokens;     /* usage.prompt_tokens_details.cached_tokens, -1 absent */
};

/* 0 when json is one valid JSON object, -1 otherwise. */
int pg_chunk_skim(struct pg_chunk_info *out, const char *json, size_t len);

#endif
