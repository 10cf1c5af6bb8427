#include "mockserver/api.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "mockserver/engine_vocab.h"
#include "base/jsonw.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *error_type(int status)
{
	switch (status) {
	case 400:
		return "BadRequestError";
	case 404:
		return "NotFoundError";
	case 405:
		return "MethodNotAllowedError";
	case 408:
		return "RequestTimeoutError";
	case 413:
		return "RequestTooLargeError";
	case 500:
		return "InternalServerError";
	case 503:
		return "ServiceUnavailableError";
	}
	return "Error";
}

int pg_mock_error_set(struct pg_mock_error *err, int status, const char *param, const char *fmt,
		      ...)
{
	va_list ap;

	err->status = status;
	err->type = error_type(status);
	err->param = param;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return -1;
}

void pg_mock_error_body(const struct pg_mock_error *err, struct pg_buf *out)
{
	json_t *inner = json_object();
	json_t *root = json_object();

	json_object_set_new(inner, "message", json_string(err->message));
	json_object_set_new(inner, "type", json_string(err->type ? err->type : "Error"));
	json_object_set_new(inner, "param", err->param ? json_string(err->param) : json_null());
	json_object_set_new(inner, "code", json_integer(err->status));
	json_object_set_new(root, "error", inner);
	pg_json_write(out, root, 0);
	json_decref(root);
}

/* ---- request bodies ---- */

static json_t *load_object(const char *body, size_t len, struct pg_mock_error *err)
{
	json_error_t jerr;
	json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);

	if (!root) {
		pg_mock_error_set(err, 400, NULL, "invalid JSON body: %s (at byte %d)", jerr.text,
				  jerr.position);
		return NULL;
	}
	if (!json_is_object(root)) {
		json_decref(root);
		pg_mock_error_set(err, 400, NULL, "the request body must be a JSON object");
		return NULL;
	}
	return root;
}

static int check_model(const struct pg_mock_model *m, json_t *root, struct pg_mock_error *err)
{
	json_t *model = json_object_get(root, "model");

	if (!model || json_is_null(model))
		return 0;
	if (!json_is_string(model))
		return pg_mock_error_set(err, 400, "model", "model: expected a string");
	if (strcmp(json_string_value(model), m->name))
		return pg_mock_error_set(err, 404, "model", "The model `%s` does not exist.",
					 json_string_value(model));
	return 0;
}

static int get_bool(json_t *obj, const char *key, bool *out, struct pg_mock_error *err)
{
	json_t *v = json_object_get(obj, key);

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_boolean(v))
		return pg_mock_error_set(err, 400, key, "%s: expected true or false", key);
	*out = json_is_true(v);
	return 0;
}

/* An optional integer; *present tells whether it was given (not null). */
static int get_int(json_t *obj, const char *key, int64_t *out, bool *present,
		   struct pg_mock_error *err)
{
	json_t *v = json_object_get(obj, key);

	*present = false;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v))
		return pg_mock_error_set(err, 400, key, "%s: expected an integer", key);
	*out = json_integer_value(v);
	*present = true;
	return 0;
}

static void hash_id(uint32_t id, void *ctx)
{
	pg_prefix_hasher_add(ctx, id);
}

static int token_ids_count(const struct pg_mock_model *m, json_t *arr, const char *param,
			   int64_t *count, struct pg_prefix_hasher *ph, struct pg_mock_error *err)
{
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v)
	{
		json_int_t id;
		if (!json_is_integer(v))
			return pg_mock_error_set(err, 400, param,
						 "%s[%zu]: expected a token id (integer)", param,
						 i);
		id = json_integer_value(v);
		if (id < 0 || id >= (json_int_t)m->vocab_size)
			return pg_mock_error_set(err, 400, param,
						 "Token id %lld is out of vocabulary (size %u)",
						 (long long)id, m->vocab_size);
		if (ph)
			pg_prefix_hasher_add(ph, (uint32_t)id);
	}
	*count = (int64_t)json_array_size(arr);
	return 0;
}

static int completion_prompt(const struct pg_mock_model *m, json_t *prompt, int depth,
			     int64_t *count, struct pg_prefix_hasher *ph, struct pg_mock_error *err)
{
	if (json_is_string(prompt)) {
		*count = (int64_t)pg_vocab_tokenize(json_string_value(prompt),
						    json_string_length(prompt), m->vocab_size,
						    ph ? hash_id : NULL, ph);
		return 0;
	}
	if (!json_is_array(prompt))
		return pg_mock_error_set(
			err, 400, "prompt",
			"prompt: expected a string, a list of token ids, or a list of those");
	if (json_array_size(prompt) == 0)
		return pg_mock_error_set(err, 400, "prompt", "prompt: the list is empty");
	if (json_is_integer(json_array_get(prompt, 0)))
		return token_ids_count(m, prompt, "prompt", count, ph, err);
	if (depth > 0)
		return pg_mock_error_set(err, 400, "prompt",
					 "prompt: expected a list of token ids");
	if (json_array_size(prompt) > 1)
		return pg_mock_error_set(err, 400, "prompt",
					 "prompt: batches of %zu prompts are not supported by the "
					 "mock server; send one prompt per request",
					 json_array_size(prompt));
	return completion_prompt(m, json_array_get(prompt, 0), depth + 1, count, ph, err);
}

static int64_t words(const char *s, size_t len, uint32_t vocab)
{
	return (int64_t)pg_vocab_tokenize(s, len, vocab, NULL, NULL);
}

/* Walk chat messages; call fn on each piece of text content. */
static int chat_text(json_t *messages, void (*fn)(const char *s, size_t len, void *ctx), void *ctx,
		     struct pg_mock_error *err)
{
	size_t i;
	json_t *msg;

	if (!json_is_array(messages) || json_array_size(messages) == 0)
		return pg_mock_error_set(err, 400, "messages",
					 "messages: expected a non-empty list of messages");
	json_array_foreach(messages, i, msg)
	{
		json_t *content;
		if (!json_is_object(msg) || !json_is_string(json_object_get(msg, "role")))
			return pg_mock_error_set(
				err, 400, "messages",
				"messages[%zu]: expected an object with a string 'role'", i);
		content = json_object_get(msg, "content");
		if (!content || json_is_null(content))
			continue;
		if (json_is_string(content)) {
			fn(json_string_value(content), json_string_length(content), ctx);
		} else if (json_is_array(content)) {
			size_t k;
			json_t *part;
			json_array_foreach(content, k, part)
			{
				json_t *type = json_object_get(part, "type");
				json_t *text = json_object_get(part, "text");
				if (!json_is_object(part) || !json_is_string(type))
					return pg_mock_error_set(
						err, 400, "messages",
						"messages[%zu].content[%zu]: expected an object with a 'type'",
						i, k);
				if (!strcmp(json_string_value(type), "text")) {
					if (!json_is_string(text))
						return pg_mock_error_set(
							err, 400, "messages",
							"messages[%zu].content[%zu].text: expected a string",
							i, k);
					fn(json_string_value(text), json_string_length(text), ctx);
				}
			}
		} else {
			return pg_mock_error_set(
				err, 400, "messages",
				"messages[%zu].content: expected a string or a list of parts", i);
		}
	}
	return 0;
}

struct count_ctx {
	int64_t n;
	uint32_t vocab;
	struct pg_prefix_hasher *ph; /* NULL: count only */
};

static void count_words(const char *s, size_t len, void *ctx)
{
	struct count_ctx *c = ctx;

	if (c->ph)
		c->n += (int64_t)pg_vocab_tokenize(s, len, c->vocab, hash_id, c->ph);
	else
		c->n += words(s, len, c->vocab);
}

void pg_mock_generation_release(struct pg_mock_generation *g)
{
	pg_prefix_hasher_release(&g->prefix);
}

int pg_mock_parse_generation(const struct pg_mock_model *m, enum pg_mock_api api, const char *body,
			     size_t len, struct pg_mock_generation *out, struct pg_mock_error *err)
{
	json_t *root = load_object(body, len, err);
	json_t *opts;
	int64_t n = 1, max_tokens = 0, max_completion = 0;
	bool has_n, has_max, has_max_completion;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	out->api = api;
	pg_prefix_hasher_init(&out->prefix);
	if (!root)
		return -1;
	if (check_model(m, root, err) || get_bool(root, "stream", &out->stream, err) ||
	    get_bool(root, "ignore_eos", &out->ignore_eos, err) ||
	    get_int(root, "n", &n, &has_n, err) ||
	    get_int(root, "max_tokens", &max_tokens, &has_max, err) ||
	    get_int(root, "max_completion_tokens", &max_completion, &has_max_completion, err))
		goto done;
	if (has_n && n != 1) {
		pg_mock_error_set(err, 400, "n",
				  "n: the mock server generates one choice (n=1), got %lld",
				  (long long)n);
		goto done;
	}

	opts = json_object_get(root, "stream_options");
	if (opts && !json_is_null(opts)) {
		if (!out->stream) {
			pg_mock_error_set(err, 400, "stream_options",
					  "Stream options can only be defined when `stream=True`.");
			goto done;
		}
		if (!json_is_object(opts)) {
			pg_mock_error_set(err, 400, "stream_options",
					  "stream_options: expected an object");
			goto done;
		}
		if (get_bool(opts, "include_usage", &out->include_usage, err) ||
		    get_bool(opts, "continuous_usage_stats", &out->continuous_usage, err))
			goto done;
		/* vLLM: continuous usage only rides along with include_usage. */
		out->continuous_usage = out->continuous_usage && out->include_usage;
	}

	if (api == PG_MOCK_COMPLETIONS) {
		json_t *prompt = json_object_get(root, "prompt");
		if (!prompt) {
			pg_mock_error_set(err, 400, "prompt", "prompt: field required");
			goto done;
		}
		if (completion_prompt(m, prompt, 0, &out->prompt_tokens,
				      m->prefix_blocks ? &out->prefix : NULL, err))
			goto done;
	} else {
		struct count_ctx c = { 0, m->vocab_size, m->prefix_blocks ? &out->prefix : NULL };
		if (chat_text(json_object_get(root, "messages"), count_words, &c, err))
			goto done;
		out->prompt_tokens = c.n;
		if (has_max_completion) {
			max_tokens = max_completion;
			has_max = true;
		}
	}
	if (out->prompt_tokens == 0) {
		pg_mock_error_set(err, 400, api == PG_MOCK_CHAT ? "messages" : "prompt",
				  "the prompt is empty");
		goto done;
	}
	if (!has_max)
		max_tokens = api == PG_MOCK_COMPLETIONS ? 16
							: m->max_model_len - out->prompt_tokens;
	if (has_max && max_tokens < 1) {
		pg_mock_error_set(err, 400,
				  api == PG_MOCK_CHAT && has_max_completion
					  ? "max_completion_tokens"
					  : "max_tokens",
				  "max_tokens must be at least 1, got %lld", (long long)max_tokens);
		goto done;
	}
	if (max_tokens < 1 || out->prompt_tokens + max_tokens > m->max_model_len) {
		pg_mock_error_set(
			err, 400, NULL,
			"This model's maximum context length is %ld tokens. However, you "
			"requested %lld tokens (%lld in the messages, %lld in the "
			"completion). Please reduce the length of the messages or completion.",
			m->max_model_len, (long long)(out->prompt_tokens + max_tokens),
			(long long)out->prompt_tokens, (long long)max_tokens);
		goto done;
	}
	out->max_tokens = max_tokens;
	rc = 0;
done:
	if (rc)
		pg_prefix_hasher_release(&out->prefix); /* nothing to release on failure */
	json_decref(root);
	return rc;
}

/* ---- /tokenize, /detokenize, /v1/models ---- */

static void push_id(uint32_t id, void *ctx)
{
	json_array_append_new(ctx, json_integer(id));
}

struct tokens_ctx {
	json_t *arr;
	uint32_t vocab;
};

static void push_words(const char *s, size_t len, void *ctx)
{
	struct tokens_ctx *t = ctx;
	pg_vocab_tokenize(s, len, t->vocab, push_id, t->arr);
}

int pg_mock_tokenize(const struct pg_mock_model *m, const char *body, size_t len,
		     struct pg_buf *out, struct pg_mock_error *err)
{
	json_t *root = load_object(body, len, err);
	json_t *tokens = json_array();
	json_t *prompt, *resp;
	int rc = -1;

	if (!root)
		goto done;
	if (check_model(m, root, err))
		goto done;
	prompt = json_object_get(root, "prompt");
	if (json_object_get(root, "messages")) {
		struct tokens_ctx t = { tokens, m->vocab_size };
		if (chat_text(json_object_get(root, "messages"), push_words, &t, err))
			goto done;
	} else if (json_is_string(prompt)) {
		pg_vocab_tokenize(json_string_value(prompt), json_string_length(prompt),
				  m->vocab_size, push_id, tokens);
	} else if (json_is_array(prompt)) {
		int64_t n;
		if (token_ids_count(m, prompt, "prompt", &n, NULL, err))
			goto done;
		json_array_extend(tokens, prompt);
	} else {
		pg_mock_error_set(
			err, 400, "prompt",
			"prompt: expected a string or a list of token ids (or 'messages')");
		goto done;
	}
	resp = json_object();
	json_object_set_new(resp, "count", json_integer((json_int_t)json_array_size(tokens)));
	json_object_set_new(resp, "max_model_len", json_integer(m->max_model_len));
	json_object_set(resp, "tokens", tokens);
	json_object_set_new(resp, "token_strs", json_null());
	pg_json_write(out, resp, 0);
	json_decref(resp);
	rc = 0;
done:
	json_decref(tokens);
	json_decref(root);
	return rc;
}

int pg_mock_detokenize(const struct pg_mock_model *m, const char *body, size_t len,
		       struct pg_buf *out, struct pg_mock_error *err)
{
	json_t *root = load_object(body, len, err);
	json_t *tokens, *v, *resp;
	struct pg_buf text = PG_BUF_INIT;
	uint32_t *ids = NULL;
	int64_t n;
	size_t i;
	int rc = -1;

	if (!root)
		goto done;
	if (check_model(m, root, err))
		goto done;
	tokens = json_object_get(root, "tokens");
	if (!json_is_array(tokens)) {
		pg_mock_error_set(err, 400, "tokens", "tokens: expected a list of token ids");
		goto done;
	}
	if (token_ids_count(m, tokens, "tokens", &n, NULL, err))
		goto done;
	ids = pg_xcalloc((size_t)n + 1, sizeof(*ids));
	json_array_foreach(tokens, i, v) ids[i] = (uint32_t)json_integer_value(v);
	pg_vocab_detokenize(&text, ids, (size_t)n);
	resp = json_object();
	json_object_set_new(resp, "prompt", json_stringn(text.ptr, text.len));
	pg_json_write(out, resp, 0);
	json_decref(resp);
	rc = 0;
done:
	free(ids);
	pg_buf_release(&text);
	json_decref(root);
	return rc;
}

void pg_mock_models(const struct pg_mock_model *m, int64_t created, struct pg_buf *out)
{
	json_t *root = json_object();
	json_t *data = json_array();
	json_t *card = json_object();

	json_object_set_new(card, "id", json_string(m->name));
	json_object_set_new(card, "object", json_string("model"));
	json_object_set_new(card, "created", json_integer(created));
	json_object_set_new(card, "owned_by", json_string("perfgate"));
	json_object_set_new(card, "root", json_string(m->name));
	json_object_set_new(card, "parent", json_null());
	json_object_set_new(card, "max_model_len", json_integer(m->max_model_len));
	json_array_append_new(data, card);
	json_object_set_new(root, "object", json_string("list"));
	json_object_set_new(root, "data", data);
	pg_json_write(out, root, 0);
	json_decref(root);
}

/* ---- streamed chunks ---- */

void pg_mock_token_text(const struct pg_mock_stream *s, int64_t first, int64_t n,
			struct pg_buf *out)
{
	char w[PG_VOCAB_WORD_LEN];

	pg_buf_grow(out, (size_t)n * (PG_VOCAB_WORD_LEN + 1));
	for (int64_t i = first; i < first + n; i++) {
		if (s->eos && i == s->output_tokens - 1)
			continue; /* EOS: a token with no text */
		pg_vocab_word(pg_engine_token_id(s->params, s->serial, i), w);
		pg_buf_putc(out, ' ');
		pg_buf_add(out, w, sizeof(w));
	}
}

/* vLLM's usage; prompt_tokens_details (--enable-prompt-tokens-details)
 * when the prefix cache is on (cached >= 0) */
static void usage_json(struct pg_buf *b, int64_t prompt, int64_t completion, int64_t cached)
{
	pg_buf_printf(b, "{\"prompt_tokens\":%lld,\"total_tokens\":%lld,\"completion_tokens\":%lld",
		      (long long)prompt, (long long)(prompt + completion), (long long)completion);
	if (cached >= 0)
		pg_buf_printf(b, ",\"prompt_tokens_details\":{\"cached_tokens\":%lld}",
			      (long long)cached);
	pg_buf_putc(b, '}');
}

static void chunk_head(const struct pg_mock_stream *s, struct pg_buf *b)
{
	pg_buf_printf(
		b,
		"data: {\"id\":\"%s%s\",\"object\":\"%s\",\"created\":%lld,\"model\":%s,\"choices\":",
		s->api == PG_MOCK_CHAT ? "chatcmpl-" : "cmpl-", s->id,
		s->api == PG_MOCK_CHAT ? "chat.completion.chunk" : "text_completion",
		(long long)s->created, s->model_json);
}

/* Move one SSE event from scratch to out, as an HTTP chunk when chunked. */
static void emit(struct pg_buf *scratch, bool chunked, struct pg_buf *out)
{
	pg_buf_puts(scratch, "\n\n");
	if (chunked)
		pg_buf_printf(out, "%zx\r\n", scratch->len);
	pg_buf_add(out, scratch->ptr, scratch->len);
	if (chunked)
		pg_buf_puts(out, "\r\n");
	pg_buf_reset(scratch);
}

static const char *finish_reason(const struct pg_mock_stream *s)
{
	return s->eos ? "\"stop\"" : "\"length\"";
}

static void stream_message(const struct pg_mock_stream *s, int64_t first_token, int64_t n_tokens,
			   bool last, bool chunked, bool malformed, struct pg_buf *scratch,
			   struct pg_buf *out);

void pg_mock_stream_message(const struct pg_mock_stream *s, int64_t first_token, int64_t n_tokens,
			    bool last, bool chunked, struct pg_buf *scratch, struct pg_buf *out)
{
	stream_message(s, first_token, n_tokens, last, chunked, false, scratch, out);
}

void pg_mock_stream_message_malformed(const struct pg_mock_stream *s, int64_t first_token,
				      int64_t n_tokens, bool last, bool chunked,
				      struct pg_buf *scratch, struct pg_buf *out)
{
	stream_message(s, first_token, n_tokens, last, chunked, true, scratch, out);
}

static void end_stream(struct pg_buf *scratch, bool chunked, struct pg_buf *out)
{
	pg_buf_puts(scratch, "data: [DONE]");
	emit(scratch, chunked, out);
	if (chunked)
		pg_buf_puts(out, "0\r\n\r\n");
}

void pg_mock_stream_error(const struct pg_mock_error *err, bool chunked, struct pg_buf *scratch,
			  struct pg_buf *out)
{
	pg_buf_reset(scratch);
	pg_buf_puts(scratch, "data: ");
	pg_mock_error_body(err, scratch);
	emit(scratch, chunked, out);
	end_stream(scratch, chunked, out);
}

static void stream_message(const struct pg_mock_stream *s, int64_t first_token, int64_t n_tokens,
			   bool last, bool chunked, bool malformed, struct pg_buf *scratch,
			   struct pg_buf *out)
{
	int64_t done_tokens = first_token + n_tokens;

	pg_buf_reset(scratch);
	if (s->api == PG_MOCK_CHAT && first_token == 0) {
		/* vLLM opens every chat stream with a role-only delta, sent with
		 * the first token's output. */
		chunk_head(s, scratch);
		pg_buf_puts(scratch,
			    "[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},"
			    "\"logprobs\":null,\"finish_reason\":null}]");
		if (s->continuous_usage) {
			pg_buf_puts(scratch, ",\"usage\":");
			usage_json(scratch, s->prompt_tokens, 0,
				   s->prompt_details ? s->cached_tokens : -1);
		}
		pg_buf_putc(scratch, '}');
		emit(scratch, chunked, out);
	}

	chunk_head(s, scratch);
	if (malformed) {
		/* the chunk's JSON breaks off inside the choices */
		pg_buf_puts(scratch, s->api == PG_MOCK_CHAT
					     ? "[{\"index\":0,\"delta\":{\"content\":\""
					     : "[{\"index\":0,\"text\":\"");
		pg_mock_token_text(s, first_token, n_tokens, scratch);
	} else if (s->api == PG_MOCK_CHAT) {
		pg_buf_puts(scratch, "[{\"index\":0,\"delta\":{\"content\":\"");
		pg_mock_token_text(s, first_token, n_tokens, scratch);
		pg_buf_puts(scratch, "\"},\"logprobs\":null,\"finish_reason\":");
		if (last)
			pg_buf_printf(scratch, "%s,\"stop_reason\":null}]", finish_reason(s));
		else
			pg_buf_puts(scratch, "null}]");
		if (s->continuous_usage) {
			pg_buf_puts(scratch, ",\"usage\":");
			usage_json(scratch, s->prompt_tokens, done_tokens,
				   s->prompt_details ? s->cached_tokens : -1);
		}
	} else {
		pg_buf_puts(scratch, "[{\"index\":0,\"text\":\"");
		pg_mock_token_text(s, first_token, n_tokens, scratch);
		pg_buf_printf(scratch,
			      "\",\"logprobs\":null,\"finish_reason\":%s,\"stop_reason\":null}],"
			      "\"usage\":",
			      last ? finish_reason(s) : "null");
		if (s->continuous_usage)
			usage_json(scratch, s->prompt_tokens, done_tokens,
				   s->prompt_details ? s->cached_tokens : -1);
		else
			pg_buf_puts(scratch, "null");
	}
	if (!malformed)
		pg_buf_putc(scratch, '}');
	emit(scratch, chunked, out);

	if (!last)
		return;
	if (s->include_usage) {
		chunk_head(s, scratch);
		pg_buf_puts(scratch, "[],\"usage\":");
		usage_json(scratch, s->prompt_tokens, s->output_tokens,
			   s->prompt_details ? s->cached_tokens : -1);
		pg_buf_putc(scratch, '}');
		emit(scratch, chunked, out);
	}
	end_stream(scratch, chunked, out);
}

void pg_mock_full_response(const struct pg_mock_stream *s, struct pg_buf *out)
{
	bool chat = s->api == PG_MOCK_CHAT;

	pg_buf_printf(out,
		      "{\"id\":\"%s%s\",\"object\":\"%s\",\"created\":%lld,\"model\":%s,"
		      "\"choices\":[{\"index\":0,",
		      chat ? "chatcmpl-" : "cmpl-", s->id,
		      chat ? "chat.completion" : "text_completion", (long long)s->created,
		      s->model_json);
	if (chat)
		pg_buf_puts(out, "\"message\":{\"role\":\"assistant\",\"content\":\"");
	else
		pg_buf_puts(out, "\"text\":\"");
	pg_mock_token_text(s, 0, s->output_tokens, out);
	if (chat)
		pg_buf_puts(out, "\",\"tool_calls\":[]}");
	else
		pg_buf_putc(out, '"');
	pg_buf_printf(out, ",\"logprobs\":null,\"finish_reason\":%s,\"stop_reason\":null",
		      finish_reason(s));
	pg_buf_puts(out, chat ? "}],\"usage\":" : ",\"prompt_logprobs\":null}],\"usage\":");
	pg_buf_printf(out,
		      "{\"prompt_tokens\":%lld,\"total_tokens\":%lld,\"completion_tokens\":%lld,",
		      (long long)s->prompt_tokens, (long long)(s->prompt_tokens + s->output_tokens),
		      (long long)s->output_tokens);
	if (s->prompt_details)
		pg_buf_printf(out, "\"prompt_tokens_details\":{\"cached_tokens\":%lld}}",
			      (long long)s->cached_tokens);
	else
		pg_buf_puts(out, "\"prompt_tokens_details\":null}");
	pg_buf_puts(out, chat ? ",\"prompt_logprobs\":null}" : "}");
}
