#ifndef PERFGATE_MOCKSERVER_API_H
#define PERFGATE_MOCKSERVER_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mockserver/engine_model.h"
#include "mockserver/prefix_cache.h"

struct pg_buf;

/*
 * The OpenAI-compatible surface of the mock server, as vLLM's API server
 * shapes it: request bodies in (jansson), response bodies and SSE chunks out.
 * No sockets here; the event loop (mock_server.c) calls these. Everything
 * written goes into caller-owned pg_bufs, which the server reuses, so a
 * streamed token costs no allocation.
 */

enum pg_mock_api {
	PG_MOCK_COMPLETIONS,
	PG_MOCK_CHAT,
};

/* An error answer: HTTP status, OpenAI error type, offending parameter. */
struct pg_mock_error {
	int status;
	const char *type;  /* "BadRequestError", "NotFoundError" ... */
	const char *param; /* NULL: null */
	char message[512];
};

/* What the server needs to know of a model. */
struct pg_mock_model {
	const char *name;
	long max_model_len;
	uint32_t vocab_size;
	bool prefix_blocks; /* hash the prompt's blocks (a prefix cache is on) */
};

/* A parsed /v1/completions or /v1/chat/completions request. */
struct pg_mock_generation {
	enum pg_mock_api api;
	bool stream;
	bool include_usage;    /* stream_options.include_usage */
	bool continuous_usage; /* ... and continuous_usage_stats */
	bool ignore_eos;
	int64_t prompt_tokens;
	int64_t max_tokens;
	/* with the model's prefix_blocks: the prompt's chained block hashes,
	 * its token ids in order (chat: the words of every message's text) */
	struct pg_prefix_hasher prefix;
};

/* Free a parsed request's block hashes (a failed parse holds none). */
void pg_mock_generation_release(struct pg_mock_generation *g);

/*
 * Parse and validate a generation request body. Returns 0, or -1 with err
 * filled (400 for bad JSON, bad types, n != 1, a context-length overflow;
 * 404 for another model's name).
 *
 * Prompt tokens: completions take `prompt` as a string (its words, see
 * mockserver/engine_vocab.h), an array of token ids, or a one-element array
 * of either; chat counts the words of every message's content (a string or
 * a list of {"type":"text","text":...} parts). max_tokens defaults to 16
 * for completions (vLLM's default) and to the rest of the context for chat;
 * chat's max_completion_tokens wins over its max_tokens.
 */
int pg_mock_parse_generation(const struct pg_mock_model *m, enum pg_mock_api api, const char *body,
			     size_t len, struct pg_mock_generation *out, struct pg_mock_error *err);

/* POST /tokenize and /detokenize: the response body, or -1 with err. */
int pg_mock_tokenize(const struct pg_mock_model *m, const char *body, size_t len,
		     struct pg_buf *out, struct pg_mock_error *err);
int pg_mock_detokenize(const struct pg_mock_model *m, const char *body, size_t len,
		       struct pg_buf *out, struct pg_mock_error *err);

/* GET /v1/models. */
void pg_mock_models(const struct pg_mock_model *m, int64_t created, struct pg_buf *out);

/* {"error":{"message":...,"type":...,"param":...,"code":status}} */
void pg_mock_error_body(const struct pg_mock_error *err, struct pg_buf *out);
int pg_mock_error_set(struct pg_mock_error *err, int status, const char *param, const char *fmt,
		      ...) __attribute__((format(printf, 4, 5)));

/*
 * One request's stream. id is the response id without its prefix (the
 * X-Request-Id header when the client sent one, as vLLM does), already
 * restricted to characters that need no JSON escaping.
 */
struct pg_mock_stream {
	enum pg_mock_api api;
	const char *id;
	const char *model_json; /* the model name as a JSON string literal */
	int64_t created;
	int64_t prompt_tokens;
	bool include_usage;
	bool continuous_usage;
	const struct pg_engine_params *params;
	uint64_t serial;
	int64_t output_tokens;
	bool eos;
	bool prompt_details;   /* usage.prompt_tokens_details (else none, or null) */
	int64_t cached_tokens; /* ... its cached_tokens */
};

/*
 * Append the SSE events of one engine message to out, each framed as an
 * HTTP/1.1 chunk when chunked (else raw SSE, for HTTP/1.0 clients): chat's
 * role-only chunk before the first message, the token chunk, and after the
 * last message the usage chunk (when asked for), `data: [DONE]` and the
 * closing zero-length chunk. scratch is working space.
 */
void pg_mock_stream_message(const struct pg_mock_stream *s, int64_t first_token, int64_t n_tokens,
			    bool last, bool chunked, struct pg_buf *scratch, struct pg_buf *out);

/* The same with the token chunk's JSON cut short (a malformed-stream fault). */
void pg_mock_stream_message_malformed(const struct pg_mock_stream *s, int64_t first_token,
				      int64_t n_tokens, bool last, bool chunked,
				      struct pg_buf *scratch, struct pg_buf *out);

/*
 * vLLM's in-stream error: `data: {"error":{...}}`, `data: [DONE]` and the
 * closing chunk. The stream ends there.
 */
void pg_mock_stream_error(const struct pg_mock_error *err, bool chunked, struct pg_buf *scratch,
			  struct pg_buf *out);

/* The whole non-streaming response body for output_tokens tokens. */
void pg_mock_full_response(const struct pg_mock_stream *s, struct pg_buf *out);

/* Append the text of tokens [first, first+n): " word" each, "" for EOS. */
void pg_mock_token_text(const struct pg_mock_stream *s, int64_t first, int64_t n,
			struct pg_buf *out);

#endif
