/*
 * The mock server's request bodies (mockserver/api.c): /v1/completions and
 * /v1/chat/completions (byte 0 picks which, or /tokenize, /detokenize),
 * then the response perfgate's own client reads back: the streamed
 * messages and the whole body of an accepted request must make a
 * successful trace in the load generator's parser (loadgen/reqtrace.c),
 * with the usage the server reported. Bit 2 of byte 0 turns the prefix
 * cache's block hashing on: one hash per whole 16-token block of the
 * prompt, and the cached tokens reported in the usage read back.
 */
#include "fuzz.h"

#include "base/buf.h"
#include "loadgen/reqtrace.h"
#include "mockserver/api.h"
#include "mockserver/engine_model.h"

static void client_reads(const char *body, size_t len, bool stream, int64_t n_tokens, bool usage,
			 long cached)
{
	struct pg_reqtrace t;
	struct pg_oai_resp r;

	pg_reqtrace_init(&t);
	t.sent_ns = 0;
	pg_oai_resp_init(&r);
	pg_oai_resp_begin(&r, &t, 200);
	FZ_CHECK(pg_oai_resp_feed(&r, 10, body, len) == 0);
	pg_oai_resp_end(&r, 20, PG_FAIL_NONE, NULL);
	if (!pg_reqtrace_ok(&t))
		fprintf(stderr, "%s\n%.*s\n", t.error ? t.error : "no content", (int)len, body);
	FZ_CHECK(pg_reqtrace_ok(&t));
	if (usage || !stream)
		FZ_CHECK(t.usage_completion_tokens == n_tokens && t.usage_cached_tokens == cached);
	pg_oai_resp_release(&r);
	pg_reqtrace_release(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	unsigned ctl = fz_byte(&in), which = ctl & 3;
	struct pg_mock_model m = { "mock-model", 2048, 32000, (ctl & 4) != 0 };
	struct pg_mock_error err = { 0 };
	struct pg_mock_generation g;
	struct pg_buf out = PG_BUF_INIT, scratch = PG_BUF_INIT;
	char *body = fz_dup(in.p, in.n);

	if (which == 2) {
		if (pg_mock_tokenize(&m, body, in.n, &out, &err))
			FZ_CHECK(err.status >= 400);
	} else if (which == 3) {
		if (pg_mock_detokenize(&m, body, in.n, &out, &err))
			FZ_CHECK(err.status >= 400);
	} else if (pg_mock_parse_generation(&m, which ? PG_MOCK_CHAT : PG_MOCK_COMPLETIONS, body,
					    in.n, &g, &err) == 0) {
		struct pg_engine_params params;
		int64_t n = g.max_tokens < 8 ? g.max_tokens : 8;
		struct pg_mock_stream s = { g.api,
					    "0123abcd",
					    "\"mock-model\"",
					    1700000000,
					    g.prompt_tokens,
					    g.include_usage,
					    g.continuous_usage,
					    &params,
					    7,
					    n,
					    false };

		FZ_CHECK(g.prompt_tokens >= 0 && g.max_tokens >= 0);
		FZ_CHECK(g.prefix.n == (m.prefix_blocks ? (size_t)g.prompt_tokens / 16 : 0));
		s.prompt_details = m.prefix_blocks;
		s.cached_tokens = (int64_t)g.prefix.n * 8;
		FZ_CHECK(g.prompt_tokens + g.max_tokens <= m.max_model_len);
		pg_engine_params_default(&params);
		if (n >= 1) {
			if (g.stream) {
				for (int64_t i = 0; i < n; i++)
					pg_mock_stream_message(&s, i, 1, i == n - 1, false,
							       &scratch, &out);
			} else {
				pg_mock_full_response(&s, &out);
			}
			client_reads(out.ptr, out.len, g.stream, n, g.include_usage,
				     m.prefix_blocks ? (long)s.cached_tokens : -1);
		}
		pg_buf_reset(&out);
		pg_mock_error_set(&err, 400, "prompt", "in-stream error for %s", "x");
		pg_mock_stream_error(&err, true, &scratch, &out);
		pg_mock_generation_release(&g);
	} else {
		FZ_CHECK(err.status == 400 || err.status == 404);
		pg_mock_error_body(&err, &out);
	}
	pg_buf_release(&out);
	pg_buf_release(&scratch);
	free(body);
	return 0;
}
