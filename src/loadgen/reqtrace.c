#include "loadgen/reqtrace.h"

#include "base/alloc.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* clang-format off */
static const char *const fail_names[PG_FAIL_COUNT] = {
	[PG_FAIL_NONE] = "none",
	[PG_FAIL_HTTP] = "http",
	[PG_FAIL_TIMEOUT] = "timeout",
	[PG_FAIL_DISCONNECT] = "disconnect",
	[PG_FAIL_CONNECT] = "connect",
	[PG_FAIL_MALFORMED] = "malformed_stream",
	[PG_FAIL_SERVER_ERROR] = "server_error",
	[PG_FAIL_NO_CONTENT] = "no_content",
	[PG_FAIL_CANCELLED] = "cancelled",
	[PG_FAIL_OTHER] = "other",
};
/* clang-format on */

const char *pg_fail_name(enum pg_fail f)
{
	return (unsigned)f < PG_FAIL_COUNT ? fail_names[f] : "other";
}

const char *pg_reqtrace_category(const struct pg_reqtrace *t, char key[32])
{
	enum pg_fail f = t->fail == PG_FAIL_NONE ? PG_FAIL_NO_CONTENT : t->fail;

	if (f != PG_FAIL_HTTP)
		return pg_fail_name(f);
	snprintf(key, 32, "http_%d", t->http_status);
	return key;
}

void pg_reqtrace_init(struct pg_reqtrace *t)
{
	memset(t, 0, sizeof(*t));
	t->scheduled_ns = t->eligible_ns = t->sent_ns = t->host_lag_ns = t->first_byte_ns =
		t->end_ns = -1;
	t->usage_prompt_tokens = t->usage_completion_tokens = t->usage_cached_tokens = -1;
}

void pg_reqtrace_reserve(struct pg_reqtrace *t, size_t n)
{
	size_t cap = t->cap_chunks;

	if (n <= t->cap_chunks)
		return;
	pg_grow((void **)&t->chunk_ns, &cap, n, sizeof(*t->chunk_ns));
	t->chunk_tokens = pg_xrealloc(t->chunk_tokens, cap * sizeof(*t->chunk_tokens));
	t->cap_chunks = cap;
}

void pg_reqtrace_release(struct pg_reqtrace *t)
{
	free(t->chunk_ns);
	free(t->chunk_tokens);
	free(t->error);
	pg_reqtrace_init(t);
}

void pg_reqtrace_fail(struct pg_reqtrace *t, enum pg_fail f, const char *fmt, ...)
{
	struct pg_buf b = PG_BUF_INIT;
	va_list ap;

	if (t->fail != PG_FAIL_NONE)
		return;
	t->fail = f;
	va_start(ap, fmt);
	pg_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	t->error = pg_buf_detach(&b);
}

bool pg_reqtrace_ok(const struct pg_reqtrace *t)
{
	return t->fail == PG_FAIL_NONE && t->n_chunks > 0;
}

long pg_reqtrace_output_tokens(const struct pg_reqtrace *t)
{
	if (t->usage_completion_tokens > 0)
		return t->usage_completion_tokens;
	if (t->n_chunk_usage && t->n_chunks && t->chunk_tokens[t->n_chunks - 1] > 0)
		return t->chunk_tokens[t->n_chunks - 1];
	return (long)t->n_chunks;
}

long pg_reqtrace_input_tokens(const struct pg_reqtrace *t)
{
	return t->usage_prompt_tokens >= 0 ? t->usage_prompt_tokens : t->prompt_len;
}

/* ---- the JSON skim ------------------------------------------------------ */

struct skim {
	const char *p, *end;
	int depth;
};

#define SKIM_MAX_DEPTH 128

static void ws(struct skim *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

/* The bytes a JSON string's scan stops at: the closing quote, an escape,
 * a control character (invalid unescaped). */
static const bool string_stop[256] = {
	[0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1, [0x05] = 1, [0x06] = 1,
	[0x07] = 1, [0x08] = 1, [0x09] = 1, [0x0a] = 1, [0x0b] = 1, [0x0c] = 1, [0x0d] = 1,
	[0x0e] = 1, [0x0f] = 1, [0x10] = 1, [0x11] = 1, [0x12] = 1, [0x13] = 1, [0x14] = 1,
	[0x15] = 1, [0x16] = 1, [0x17] = 1, [0x18] = 1, [0x19] = 1, [0x1a] = 1, [0x1b] = 1,
	[0x1c] = 1, [0x1d] = 1, [0x1e] = 1, [0x1f] = 1, ['"'] = 1,  ['\\'] = 1,
};

/* The first byte at or after q that stops a string's scan (string_stop),
 * or end. Sixteen bytes per step where there is SSE2 (every x86-64): most
 * of a message's strings are shorter than that, so one step finds the
 * closing quote, where the byte loop took five instructions a byte (a
 * third of the client's own instructions per token went there). */
static const char *string_run_end(const char *q, const char *end)
{
#ifdef __SSE2__
	const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
	/* unsigned x < 0x20 as a signed compare: flip the top bit of both */
	const __m128i flip = _mm_set1_epi8((char)0x80), below = _mm_set1_epi8((char)(0x20 ^ 0x80));

	while (end - q >= 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)q);
		__m128i hit = _mm_or_si128(
			_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)),
			_mm_cmplt_epi8(_mm_xor_si128(x, flip), below));
		unsigned mask = (unsigned)_mm_movemask_epi8(hit);

		if (mask)
			return q + __builtin_ctz(mask);
		q += 16;
	}
#endif
	while (q < end && !string_stop[(unsigned char)*q])
		q++;
	return q;
}

/* The rest of a string whose plain run stopped at an escape or a control
 * character (q): checks the escapes, finds the closing quote. Kept out of
 * line: inlined, its registers made every plain string pay a long
 * prologue. */
#if defined(__GNUC__)
__attribute__((noinline, cold))
#endif
static int
skim_string_rest(struct skim *s, const char *start, const char *q, const char **str, size_t *len)
{
	s->p = q;
	while (s->p < s->end) {
		unsigned char c;

		s->p = string_run_end(s->p, s->end);
		if (s->p >= s->end)
			break;
		c = (unsigned char)*s->p;
		if (c == '"') {
			if (str) {
				*str = start;
				*len = (size_t)(s->p - start);
			}
			s->p++;
			return 0;
		}
		if (c < 0x20)
			return -1;
		if (++s->p >= s->end)
			return -1;
		if (*s->p == 'u') {
			for (int i = 0; i < 4; i++) {
				char h;
				if (++s->p >= s->end)
					return -1;
				h = *s->p;
				if (!((h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') ||
				      (h >= 'A' && h <= 'F')))
					return -1;
			}
		} else if (!strchr("\"\\/bfnrt", *s->p)) {
			return -1;
		}
		s->p++;
	}
	return -1;
}

/* A string starting at a quote; str and len get the raw bytes inside. The
 * common string, without escapes, ends at the first stop byte. */
static int skim_string(struct skim *s, const char **str, size_t *len)
{
	const char *start, *q;

	if (s->p >= s->end || *s->p != '"')
		return -1;
	start = s->p + 1;
	q = string_run_end(start, s->end);
	if (q < s->end && *q == '"') {
		if (str) {
			*str = start;
			*len = (size_t)(q - start);
		}
		s->p = q + 1;
		return 0;
	}
	return skim_string_rest(s, start, q, str, len);
}

static int skim_number(struct skim *s, long *as_long)
{
	bool integer = true;
	long v = 0;
	bool neg = false;

	if (s->p < s->end && *s->p == '-') {
		neg = true;
		s->p++;
	}
	if (s->p >= s->end || *s->p < '0' || *s->p > '9')
		return -1;
	while (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
		if (v < 100000000000000L)
			v = v * 10 + (*s->p - '0');
		s->p++;
	}
	if (s->p < s->end && *s->p == '.') {
		integer = false;
		s->p++;
		if (s->p >= s->end || *s->p < '0' || *s->p > '9')
			return -1;
		while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
			s->p++;
	}
	if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
		integer = false;
		s->p++;
		if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
			s->p++;
		if (s->p >= s->end || *s->p < '0' || *s->p > '9')
			return -1;
		while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
			s->p++;
	}
	if (as_long)
		*as_long = integer ? (neg ? -v : v) : -1;
	return 0;
}

static int skim_literal(struct skim *s, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(s->end - s->p) < n || memcmp(s->p, lit, n))
		return -1;
	s->p += n;
	return 0;
}

static int skim_value(struct skim *s);

/* A member name and its colon; k and klen get the raw name (NULL: unwanted). */
static int member_key(struct skim *s, const char **k, size_t *klen)
{
	if (skim_string(s, k, klen))
		return -1;
	ws(s);
	if (s->p >= s->end || *s->p != ':')
		return -1;
	s->p++;
	ws(s);
	return s->p < s->end ? 0 : -1;
}

/* After an item: 1 and past the comma when another follows, 0 and past
 * the closing bracket at the end, -1 on anything else. */
static int after_item(struct skim *s, char close)
{
	ws(s);
	if (s->p >= s->end)
		return -1;
	if (*s->p == ',') {
		s->p++;
		ws(s);
		return 1;
	}
	if (*s->p != close)
		return -1;
	s->p++;
	return 0;
}

/* Past the opening bracket: 1 when an item follows, 0 (past the closing
 * bracket) for an empty container. */
static int open_container(struct skim *s, char close)
{
	s->p++;
	ws(s);
	if (s->p < s->end && *s->p == close) {
		s->p++;
		return 0;
	}
	return 1;
}

static int skim_container(struct skim *s, char close, bool is_object)
{
	int more;

	if (++s->depth > SKIM_MAX_DEPTH)
		return -1;
	more = open_container(s, close);
	while (more > 0) {
		if (is_object && member_key(s, NULL, NULL))
			return -1;
		if (skim_value(s))
			return -1;
		more = after_item(s, close);
	}
	s->depth--;
	return more;
}

static int skim_value(struct skim *s)
{
	ws(s);
	if (s->p >= s->end)
		return -1;
	switch (*s->p) {
	case '{':
		return skim_container(s, '}', true);
	case '[':
		return skim_container(s, ']', false);
	case '"':
		return skim_string(s, NULL, NULL);
	case 't':
		return skim_literal(s, "true");
	case 'f':
		return skim_literal(s, "false");
	case 'n':
		return skim_literal(s, "null");
	default:
		return skim_number(s, NULL);
	}
}

static bool key_is(const char *k, size_t klen, const char *want)
{
	return klen == strlen(want) && !memcmp(k, want, klen);
}

/* The number a usage key holds in out: prompt and completion tokens in
 * usage, cached tokens in usage.prompt_tokens_details; NULL for others. */
static long *usage_slot(struct pg_chunk_info *out, const char *k, size_t klen, bool details)
{
	if (details)
		return key_is(k, klen, "cached_tokens") ? &out->cached_tokens : NULL;
	if (key_is(k, klen, "prompt_tokens"))
		return &out->prompt_tokens;
	return key_is(k, klen, "completion_tokens") ? &out->completion_tokens : NULL;
}

/* usage (details false), or its prompt_tokens_details (true) */
static int skim_usage(struct skim *s, struct pg_chunk_info *out, bool details)
{
	int more = open_container(s, '}');

	while (more > 0) {
		const char *k;
		size_t klen;
		long *slot;

		if (member_key(s, &k, &klen))
			return -1;
		slot = usage_slot(out, k, klen, details);
		if (slot && (*s->p == '-' || (*s->p >= '0' && *s->p <= '9'))) {
			if (skim_number(s, slot))
				return -1;
		} else if (!details && *s->p == '{' && key_is(k, klen, "prompt_tokens_details")) {
			if (skim_usage(s, out, true))
				return -1;
		} else if (skim_value(s)) {
			return -1;
		}
		more = after_item(s, '}');
	}
	return more;
}

int pg_chunk_skim(struct pg_chunk_info *out, const char *json, size_t len)
{
	struct skim s = { json, json + len, 0 };
	int more;

	memset(out, 0, sizeof(*out));
	out->prompt_tokens = out->completion_tokens = out->cached_tokens = -1;
	ws(&s);
	if (s.p >= s.end || *s.p != '{')
		return -1;
	more = open_container(&s, '}');
	while (more > 0) {
		const char *k;
		size_t klen;

		if (member_key(&s, &k, &klen))
			return -1;
		if (key_is(k, klen, "choices") && *s.p == '[') {
			const char *open = s.p;
			if (skim_value(&s))
				return -1;
			/* non-empty unless only white space between the brackets */
			for (const char *q = open + 1; q < s.p - 1; q++)
				if (*q != ' ' && *q != '\t' && *q != '\n' && *q != '\r') {
					out->choices = true;
					break;
				}
		} else if (key_is(k, klen, "usage") && *s.p == '{') {
			out->usage = true;
			if (skim_usage(&s, out, false))
				return -1;
		} else if (key_is(k, klen, "error") && *s.p != 'n') {
			out->error = true;
			if (skim_value(&s))
				return -1;
		} else if (key_is(k, klen, "object") && *s.p == '"') {
			const char *v;
			size_t vlen;
			if (skim_string(&s, &v, &vlen))
				return -1;
			if (key_is(v, vlen, "error"))
				out->error = true;
		} else if (skim_value(&s)) {
			return -1;
		}
		more = after_item(&s, '}');
	}
	if (more < 0)
		return -1;
	ws(&s);
	return s.p == s.end ? 0 : -1;
}

/* ---- responses ---------------------------------------------------------- */

enum { MODE_NONE, MODE_SSE, MODE_JSON, MODE_ERROR_BODY };

/* Error bodies and messages are cut here: enough to recognise the cause. */
#define ERROR_BODY_MAX 512
/* A non-streaming body larger than this is not a response we measure. */
#define JSON_BODY_MAX (64u << 20)

/* The human part of an error object: error.message, message, or the text. */
static void error_message(struct pg_buf *out, const char *json, size_t len)
{
	json_t *root = json_loadb(json, len, 0, NULL);
	json_t *err = root ? json_object_get(root, "error") : NULL;
	json_t *msg = NULL;

	if (json_is_object(err))
		msg = json_object_get(err, "message");
	else if (json_is_string(err))
		msg = err;
	if (!msg && root)
		msg = json_object_get(root, "message");
	if (json_is_string(msg))
		pg_buf_add(out, json_string_value(msg),
			   json_string_length(msg) > ERROR_BODY_MAX ? ERROR_BODY_MAX
								    : json_string_length(msg));
	else
		pg_buf_add(out, json, len > ERROR_BODY_MAX ? ERROR_BODY_MAX : len);
	json_decref(root);
}

static int fail_with_text(struct pg_reqtrace *t, enum pg_fail f, const char *prefix,
			  const char *text, size_t len, bool is_json)
{
	struct pg_buf m = PG_BUF_INIT;

	pg_buf_puts(&m, prefix);
	if (is_json)
		error_message(&m, text, len);
	else
		pg_buf_add(&m, text, len > ERROR_BODY_MAX ? ERROR_BODY_MAX : len);
	pg_reqtrace_fail(t, f, "%s", m.ptr);
	pg_buf_release(&m);
	return -1;
}

/* Append choices[0]'s text (delta.content, text, or message.content). */
static void keep_text(struct pg_buf *out, const char *data, size_t len)
{
	json_t *root = json_loadb(data, len, 0, NULL);
	json_t *c = json_array_get(json_object_get(root, "choices"), 0);
	json_t *v = json_object_get(json_object_get(c, "delta"), "content");

	if (!json_is_string(v))
		v = json_object_get(c, "text");
	if (!json_is_string(v))
		v = json_object_get(json_object_get(c, "message"), "content");
	if (json_is_string(v))
		pg_buf_add(out, json_string_value(v), json_string_length(v));
	json_decref(root);
}

static int on_message(struct pg_oai_resp *r, const char *data, size_t len, bool error_event,
		      bool whole_body)
{
	struct pg_reqtrace *t = r->t;
	struct pg_chunk_info ci;

	if (error_event)
		return fail_with_text(t, PG_FAIL_SERVER_ERROR, "error event: ", data, len, true);
	if (len == 6 && !memcmp(data, "[DONE]", 6)) {
		t->saw_done = true;
		return 0;
	}
	if (pg_chunk_skim(&ci, data, len))
		return fail_with_text(t, PG_FAIL_MALFORMED, "not JSON in the stream: ", data, len,
				      false);
	if (ci.error)
		return fail_with_text(t, PG_FAIL_SERVER_ERROR, "error in the stream: ", data, len,
				      true);
	if (ci.choices) {
		if (t->n_chunks == t->cap_chunks)
			pg_reqtrace_reserve(t, t->n_chunks + 1);
		t->chunk_ns[t->n_chunks] = r->now_ns;
		t->chunk_tokens[t->n_chunks] = 0;
		if (ci.usage && ci.completion_tokens >= 0) {
			t->chunk_tokens[t->n_chunks] = (uint32_t)ci.completion_tokens;
			t->n_chunk_usage++;
		}
		t->n_chunks++;
		if (t->text)
			keep_text(t->text, data, len);
	}
	/* vLLM reads usage from the choice-less final message only; a
	 * non-streaming body carries both in one object */
	if (ci.usage && (!ci.choices || whole_body)) {
		if (ci.completion_tokens >= 0)
			t->usage_completion_tokens = ci.completion_tokens;
		if (ci.prompt_tokens >= 0)
			t->usage_prompt_tokens = ci.prompt_tokens;
		if (ci.cached_tokens >= 0)
			t->usage_cached_tokens = ci.cached_tokens;
	}
	return 0;
}

static int on_event(void *ctx, const struct pg_sse_event *ev)
{
	struct pg_oai_resp *r = ctx;
	bool error_event = ev->type_len == 5 && !memcmp(ev->type, "error", 5);

	return on_message(r, ev->data, ev->data_len, error_event, false);
}

void pg_oai_resp_init(struct pg_oai_resp *r)
{
	memset(r, 0, sizeof(*r));
	pg_sse_init(&r->sse, on_event, r);
	pg_buf_init(&r->body);
}

void pg_oai_resp_release(struct pg_oai_resp *r)
{
	pg_sse_release(&r->sse);
	pg_buf_release(&r->body);
}

void pg_oai_resp_begin(struct pg_oai_resp *r, struct pg_reqtrace *t, int http_status)
{
	r->t = t;
	t->http_status = http_status;
	pg_sse_reset(&r->sse);
	pg_buf_reset(&r->body);
	if (http_status == 0) {
		r->mode = MODE_NONE; /* no response at all: the transport says why */
	} else if (http_status != 200) {
		r->mode = MODE_ERROR_BODY;
	} else {
		r->mode = MODE_NONE; /* decided by the first body byte */
	}
}

int pg_oai_resp_feed(struct pg_oai_resp *r, int64_t now_ns, const char *bytes, size_t len)
{
	struct pg_reqtrace *t = r->t;
	int rc;

	if (!len)
		return 0;
	if (t->first_byte_ns < 0)
		t->first_byte_ns = now_ns;
	r->now_ns = now_ns;
	if (r->mode == MODE_NONE) {
		size_t i = 0;
		while (i < len && (bytes[i] == ' ' || bytes[i] == '\n' || bytes[i] == '\r' ||
				   bytes[i] == '\t'))
			i++;
		if (i == len)
			return 0;
		r->mode = bytes[i] == '{' ? MODE_JSON : MODE_SSE;
	}
	switch (r->mode) {
	case MODE_SSE:
		rc = pg_sse_feed(&r->sse, bytes, len);
		if (rc == -1 && r->sse.overflow)
			pg_reqtrace_fail(t, PG_FAIL_MALFORMED, "an SSE event larger than %zu bytes",
					 r->sse.max_event);
		return rc ? -1 : 0;
	case MODE_JSON:
		if (r->body.len + len > JSON_BODY_MAX) {
			pg_reqtrace_fail(t, PG_FAIL_MALFORMED,
					 "a JSON response larger than %u bytes", JSON_BODY_MAX);
			return -1;
		}
		pg_buf_add(&r->body, bytes, len);
		return 0;
	default:
		if (r->body.len < ERROR_BODY_MAX)
			pg_buf_add(&r->body, bytes,
				   len < ERROR_BODY_MAX - r->body.len
					   ? len
					   : ERROR_BODY_MAX - r->body.len);
		return 0;
	}
}

void pg_oai_resp_end(struct pg_oai_resp *r, int64_t now_ns, enum pg_fail transport,
		     const char *transport_msg)
{
	struct pg_reqtrace *t = r->t;

	r->now_ns = now_ns;
	t->end_ns = now_ns;
	if (r->mode == MODE_ERROR_BODY) {
		char prefix[32];
		bool is_json = r->body.len && r->body.ptr[0] == '{';

		snprintf(prefix, sizeof(prefix), "HTTP %d: ", t->http_status);
		fail_with_text(t, PG_FAIL_HTTP, prefix, r->body.ptr, r->body.len, is_json);
		return;
	}
	if (transport != PG_FAIL_NONE) {
		pg_reqtrace_fail(t, transport, "%s",
				 transport_msg ? transport_msg : pg_fail_name(transport));
		return;
	}
	if (t->http_status == 0) {
		pg_reqtrace_fail(t, PG_FAIL_OTHER, "no HTTP response");
		return;
	}
	if (t->fail != PG_FAIL_NONE)
		return;
	if (r->mode == MODE_SSE) {
		if (pg_sse_finish(&r->sse) == -1 && r->sse.overflow)
			pg_reqtrace_fail(t, PG_FAIL_MALFORMED, "an SSE event larger than %zu bytes",
					 r->sse.max_event);
	} else if (r->mode == MODE_JSON) {
		on_message(r, r->body.ptr, r->body.len, false, true);
	}
	if (t->fail == PG_FAIL_NONE && t->n_chunks == 0)
		pg_reqtrace_fail(t, PG_FAIL_NO_CONTENT,
				 "never received a message with choices (no first token)");
}
