/* The mock server's HTTP request parser and its OpenAI request/response
 * layer (the bytes on the wire are tested end to end in
 * tests/bats/mock_server.bats). */
#include "testutil.h"

#include "base/buf.h"
#include "base/strutil.h"
#include "mockserver/api.h"
#include "mockserver/http.h"

#include <stdlib.h>
#include <string.h>

/* clang-format off */
static const char *const good[] = {
	"GET /health HTTP/1.1\r\nHost: x\r\n\r\n",
	"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
	"Content-Length: 26\r\nX-Request-Id: bench-1\r\n\r\n{\"prompt\":\"a b\",\"n\":1}    ",
	"GET /v1/models?x=1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
	"POST /tokenize HTTP/1.1\nContent-Length: 2\n\n{}",
	"\r\nGET /health HTTP/1.1\r\n\r\n",
	"POST /x HTTP/1.1\r\ncontent-length:   5  \r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\nhello",
};
/* clang-format on */

START_TEST(every_split_parses_the_same)
{
	for (size_t g = 0; g < sizeof(good) / sizeof(good[0]); g++) {
		const char *req = good[g];
		size_t len = strlen(req);
		struct pg_http_request full, part;
		int status = 0;
		const char *why = NULL;

		ck_assert_int_eq(pg_http_parse_request(req, len, 1 << 20, &full, &status, &why),
				 PG_HTTP_COMPLETE);
		ck_assert_uint_eq(full.total_len, len);
		for (size_t cut = 0; cut < len; cut++) {
			/* A copy exactly cut bytes long, so reads past it are caught
			 * by the sanitizers. */
			char *prefix = malloc(cut + 1);
			memcpy(prefix, req, cut);
			ck_assert_msg(pg_http_parse_request(prefix, cut, 1 << 20, &part, &status,
							    &why) == PG_HTTP_INCOMPLETE,
				      "request %zu cut at %zu", g, cut);
			free(prefix);
		}
	}
}
END_TEST

START_TEST(fields_are_read)
{
	struct pg_http_request r;
	int status;
	const char *why;

	ck_assert_int_eq(
		pg_http_parse_request(good[1], strlen(good[1]), 1 << 20, &r, &status, &why),
		PG_HTTP_COMPLETE);
	ck_assert_int_eq(r.method, PG_HTTP_POST);
	ck_assert_uint_eq(r.path_len, 15);
	ck_assert(!memcmp(r.path, "/v1/completions", 15));
	ck_assert_uint_eq(r.content_length, 26);
	ck_assert(!memcmp(r.body, "{\"prompt\":\"a b\",\"n\":1}    ", 26));
	ck_assert(r.keep_alive);
	ck_assert_uint_eq(r.request_id_len, 7);
	ck_assert(!memcmp(r.request_id, "bench-1", 7));

	ck_assert_int_eq(
		pg_http_parse_request(good[2], strlen(good[2]), 1 << 20, &r, &status, &why),
		PG_HTTP_COMPLETE);
	ck_assert_int_eq(r.method, PG_HTTP_GET);
	ck_assert_uint_eq(r.path_len, 10); /* the query string is not part of the path */
	ck_assert_int_eq(r.minor_version, 0);
	ck_assert(r.keep_alive);

	ck_assert_int_eq(
		pg_http_parse_request(good[5], strlen(good[5]), 1 << 20, &r, &status, &why),
		PG_HTTP_COMPLETE);
	ck_assert(r.expect_continue);
	ck_assert_uint_eq(r.content_length, 5);

	/* HTTP/1.0 closes unless asked; HTTP/1.1 keeps alive unless asked. */
	const char *ten = "GET / HTTP/1.0\r\n\r\n";
	ck_assert_int_eq(pg_http_parse_request(ten, strlen(ten), 0, &r, &status, &why),
			 PG_HTTP_COMPLETE);
	ck_assert(!r.keep_alive);
	const char *close11 = "GET / HTTP/1.1\r\nConnection: Keep-Alive, close\r\n\r\n";
	ck_assert_int_eq(pg_http_parse_request(close11, strlen(close11), 0, &r, &status, &why),
			 PG_HTTP_COMPLETE);
	ck_assert(!r.keep_alive);
}
END_TEST

START_TEST(pipelined_requests_parse_one_after_another)
{
	struct pg_buf all = PG_BUF_INIT;
	size_t off = 0, count = 0;
	struct pg_http_request r;
	int status;
	const char *why;

	for (size_t g = 0; g < sizeof(good) / sizeof(good[0]); g++)
		pg_buf_puts(&all, good[g]);
	while (off < all.len) {
		ck_assert_int_eq(pg_http_parse_request(all.ptr + off, all.len - off, 1 << 20, &r,
						       &status, &why),
				 PG_HTTP_COMPLETE);
		ck_assert_uint_eq(r.total_len, strlen(good[count]));
		off += r.total_len;
		count++;
	}
	ck_assert_uint_eq(count, sizeof(good) / sizeof(good[0]));
	pg_buf_release(&all);
}
END_TEST

/* clang-format off */
static const struct {
	const char *req;
	int status;
} bad[] = {
	{ "GET\r\n\r\n", 400 },
	{ "GET /health\r\n\r\n", 400 },
	{ "GET health HTTP/1.1\r\n\r\n", 400 },
	{ "GET /a b HTTP/1.1\r\n\r\n", 400 },
	{ "GET / HTTP/2.0\r\n\r\n", 505 },
	{ "GET / HTTX/1.1\r\n\r\n", 400 },
	{ "G(T / HTTP/1.1\r\n\r\n", 400 },
	{ "GET / HTTP/1.1\r\nHost x\r\n\r\n", 400 },
	{ "GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400 },
	{ "GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n", 400 },
	{ "GET / HTTP/1.1\r\nA: b\rc\r\n\r\n", 400 },
	{ "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400 },
	{ "POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n", 400 },
	{ "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400 },
	{ "POST / HTTP/1.1\r\nContent-Length: 3, 3\r\n\r\nabc", 400 },
	{ "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 501 },
	{ "POST / HTTP/1.1\r\nContent-Length: 2000000\r\n\r\n", 413 },
	{ "GET / HTTP/1.1\r\nExpect: 200-ok\r\n\r\n", 417 },
};
/* clang-format on */

START_TEST(bad_requests_get_the_right_status)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pg_http_request r;
		int status = 0;
		const char *why = NULL;
		int rc = pg_http_parse_request(bad[i].req, strlen(bad[i].req), 1 << 20, &r, &status,
					       &why);
		ck_assert_msg(rc == PG_HTTP_BAD && status == bad[i].status,
			      "case %zu: rc %d status %d (want %d)", i, rc, status, bad[i].status);
		ck_assert_ptr_nonnull(why);
	}
}
END_TEST

START_TEST(oversized_heads_are_refused_before_they_end)
{
	struct pg_buf b = PG_BUF_INIT;
	struct pg_http_request r;
	int status = 0;
	const char *why;

	pg_buf_puts(&b, "GET / HTTP/1.1\r\n");
	while (b.len <= PG_HTTP_MAX_HEAD)
		pg_buf_puts(&b, "X-Filler: 0123456789abcdef0123456789abcdef\r\n");
	ck_assert_int_eq(pg_http_parse_request(b.ptr, b.len, 0, &r, &status, &why), PG_HTTP_BAD);
	ck_assert_int_eq(status, 431);
	pg_buf_release(&b);
}
END_TEST

/* ---- the OpenAI layer ---- */

static const struct pg_mock_model model = { "m", 100, 32000 };

static int parse(enum pg_mock_api api, const char *body, struct pg_mock_generation *g,
		 struct pg_mock_error *e)
{
	return pg_mock_parse_generation(&model, api, body, strlen(body), g, e);
}

START_TEST(generation_requests_are_read_like_vllm)
{
	struct pg_mock_generation g;
	struct pg_mock_error e;

	ck_assert_int_eq(
		parse(PG_MOCK_COMPLETIONS,
		      "{\"model\":\"m\",\"prompt\":\"a b c\",\"max_tokens\":5,\"stream\":true,"
		      "\"stream_options\":{\"include_usage\":true},\"ignore_eos\":true,"
		      "\"repetition_penalty\":1.0,\"logprobs\":null}",
		      &g, &e),
		0);
	ck_assert_int_eq(g.prompt_tokens, 3);
	ck_assert_int_eq(g.max_tokens, 5);
	ck_assert(g.stream && g.include_usage && !g.continuous_usage && g.ignore_eos);

	ck_assert_int_eq(parse(PG_MOCK_COMPLETIONS, "{\"prompt\":[1,2,3,4]}", &g, &e), 0);
	ck_assert_int_eq(g.prompt_tokens, 4);
	ck_assert_int_eq(g.max_tokens, 16); /* vLLM's completions default */
	ck_assert_int_eq(parse(PG_MOCK_COMPLETIONS, "{\"prompt\":[[5,6]]}", &g, &e), 0);
	ck_assert_int_eq(g.prompt_tokens, 2);
	ck_assert_int_eq(parse(PG_MOCK_COMPLETIONS, "{\"prompt\":[\"x y\"]}", &g, &e), 0);
	ck_assert_int_eq(g.prompt_tokens, 2);

	/* continuous usage only with include_usage (vLLM) */
	ck_assert_int_eq(parse(PG_MOCK_COMPLETIONS,
			       "{\"prompt\":\"a\",\"stream\":true,\"stream_options\":"
			       "{\"continuous_usage_stats\":true}}",
			       &g, &e),
			 0);
	ck_assert(!g.continuous_usage);

	ck_assert_int_eq(
		parse(PG_MOCK_CHAT,
		      "{\"messages\":[{\"role\":\"system\",\"content\":\"be brief\"},"
		      "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"one two three\"},"
		      "{\"type\":\"image_url\",\"image_url\":{\"url\":\"x\"}}]}],"
		      "\"max_completion_tokens\":7,\"max_tokens\":9}",
		      &g, &e),
		0);
	ck_assert_int_eq(g.prompt_tokens, 5);
	ck_assert_int_eq(g.max_tokens, 7);
	ck_assert_int_eq(parse(PG_MOCK_CHAT,
			       "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", &g, &e),
			 0);
	ck_assert_int_eq(g.max_tokens, 99); /* the rest of the context */
}
END_TEST

/* clang-format off */
static const struct {
	enum pg_mock_api api;
	const char *body;
	int status;
	const char *message_part;
} rejects[] = {
	{ PG_MOCK_COMPLETIONS, "{bad", 400, "invalid JSON" },
	{ PG_MOCK_COMPLETIONS, "[1]", 400, "JSON object" },
	{ PG_MOCK_COMPLETIONS, "{\"model\":\"other\",\"prompt\":\"a\"}", 404, "`other` does not exist" },
	{ PG_MOCK_COMPLETIONS, "{\"max_tokens\":3}", 400, "prompt" },
	{ PG_MOCK_COMPLETIONS, "{\"prompt\":\"\"}", 400, "empty" },
	{ PG_MOCK_COMPLETIONS, "{\"prompt\":[]}", 400, "empty" },
	{ PG_MOCK_COMPLETIONS, "{\"prompt\":[1,-2]}", 400, "out of vocabulary" },
	{ PG_MOCK_COMPLETIONS, "{\"prompt\":[1,32000]}", 400, "out of vocabulary" },
	{ PG_MOCK_COMPLETIONS, "{\"prompt\":[\"a\",\"b\"]}", 400, "one prompt per request" },
	{ PG_MOCK_COMPLETIONS, "{\"prompt\":7}", 400, "prompt" },
	{ PG_MOCK_COMPLETIONS, "{\"prompt\":\"a\",\"n\":2}", 400, "n=1" },
	{ PG_MOCK_COMPLETIONS, "{\"prompt\":\"a\",\"stream\":\"yes\"}", 400, "stream" },
	{ PG_MOCK_COMPLETIONS, "{\"prompt\":\"a\",\"max_tokens\":0}", 400, "at least 1" },
	{ PG_MOCK_COMPLETIONS, "{\"prompt\":\"a\",\"max_tokens\":1.5}", 400, "integer" },
	{ PG_MOCK_COMPLETIONS, "{\"prompt\":\"a b\",\"max_tokens\":99}", 400,
	  "maximum context length is 100 tokens. However, you requested 101 tokens (2 in the "
	  "messages, 99 in the completion)" },
	{ PG_MOCK_COMPLETIONS, "{\"prompt\":\"a\",\"stream_options\":{\"include_usage\":true}}", 400,
	  "only be defined when `stream=True`" },
	{ PG_MOCK_CHAT, "{\"messages\":[]}", 400, "messages" },
	{ PG_MOCK_CHAT, "{\"messages\":[{\"content\":\"a\"}]}", 400, "role" },
	{ PG_MOCK_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":5}]}", 400, "content" },
	{ PG_MOCK_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],\"max_completion_tokens\":0}",
	  400, "at least 1" },
};
/* clang-format on */

START_TEST(bad_generation_requests_are_refused)
{
	for (size_t i = 0; i < sizeof(rejects) / sizeof(rejects[0]); i++) {
		struct pg_mock_generation g;
		struct pg_mock_error e = { 0 };
		ck_assert_int_eq(parse(rejects[i].api, rejects[i].body, &g, &e), -1);
		ck_assert_msg(e.status == rejects[i].status, "case %zu: status %d", i, e.status);
		ck_assert_msg(strstr(e.message, rejects[i].message_part), "case %zu: '%s'", i,
			      e.message);
	}
}
END_TEST

START_TEST(error_bodies_are_openai_shaped)
{
	struct pg_mock_error e;
	struct pg_buf b = PG_BUF_INIT;

	pg_mock_error_set(&e, 404, "model", "The model `%s` does not exist.", "x\"y");
	pg_mock_error_body(&e, &b);
	ck_assert_str_eq(b.ptr, "{\"error\":{\"message\":\"The model `x\\\"y` does not exist.\","
				"\"type\":\"NotFoundError\",\"param\":\"model\",\"code\":404}}");
	pg_buf_release(&b);
}
END_TEST

START_TEST(tokenize_and_detokenize_round_trip)
{
	struct pg_buf out = PG_BUF_INIT;
	struct pg_mock_error e;
	const char *t1 =
		"{\"model\":\"m\",\"prompt\":\"bababa bababe hello\",\"add_special_tokens\":false}";
	const char *t2 = "{\"prompt\":[5,6,7]}";
	const char *t3 = "{\"messages\":[{\"role\":\"user\",\"content\":\"bababi x\"}]}";
	const char *d1 = "{\"tokens\":[0,1,2]}";

	ck_assert_int_eq(pg_mock_tokenize(&model, t1, strlen(t1), &out, &e), 0);
	ck_assert(
		pg_str_has_prefix(out.ptr, "{\"count\":3,\"max_model_len\":100,\"tokens\":[0,1,"));
	pg_buf_reset(&out);
	ck_assert_int_eq(pg_mock_tokenize(&model, t2, strlen(t2), &out, &e), 0);
	ck_assert_str_eq(
		out.ptr,
		"{\"count\":3,\"max_model_len\":100,\"tokens\":[5,6,7],\"token_strs\":null}");
	pg_buf_reset(&out);
	ck_assert_int_eq(pg_mock_tokenize(&model, t3, strlen(t3), &out, &e), 0);
	ck_assert(pg_str_has_prefix(out.ptr, "{\"count\":2,\"max_model_len\":100,\"tokens\":[2,"));
	pg_buf_reset(&out);
	ck_assert_int_eq(pg_mock_detokenize(&model, d1, strlen(d1), &out, &e), 0);
	ck_assert_str_eq(out.ptr, "{\"prompt\":\"bababa bababe bababi\"}");
	pg_buf_reset(&out);
	ck_assert_int_eq(pg_mock_detokenize(&model, "{\"tokens\":[99999]}", 18, &out, &e), -1);
	ck_assert_int_eq(e.status, 400);
	pg_buf_release(&out);
}
END_TEST

START_TEST(stream_chunks_frame_and_count)
{
	struct pg_engine_params p;
	struct pg_buf scratch = PG_BUF_INIT, out = PG_BUF_INIT;
	struct pg_mock_stream s;

	pg_engine_params_default(&p);
	s = (struct pg_mock_stream){ .api = PG_MOCK_COMPLETIONS,
				     .id = "x",
				     .model_json = "\"m\"",
				     .created = 1,
				     .prompt_tokens = 2,
				     .include_usage = true,
				     .params = &p,
				     .serial = 1,
				     .output_tokens = 3,
				     .eos = true };
	/* The last message carries the EOS token: empty text, "stop". */
	pg_mock_stream_message(&s, 2, 1, true, true, &scratch, &out);
	ck_assert(strstr(out.ptr, "\"text\":\"\",\"logprobs\":null,\"finish_reason\":\"stop\""));
	ck_assert(strstr(out.ptr,
			 "\"choices\":[],\"usage\":{\"prompt_tokens\":2,\"total_tokens\":5,"
			 "\"completion_tokens\":3}}\n\n\r\n"));
	ck_assert(pg_str_has_suffix(out.ptr, "e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n"));
	/* The chunk sizes are right: walk the chunks. */
	{
		const char *q = out.ptr;
		int chunks = 0;
		for (;;) {
			char *end;
			unsigned long n = strtoul(q, &end, 16);
			ck_assert(end[0] == '\r' && end[1] == '\n');
			if (n == 0)
				break;
			q = end + 2 + n;
			ck_assert(q[0] == '\r' && q[1] == '\n');
			q += 2;
			chunks++;
		}
		ck_assert_int_eq(chunks, 3);
	}
	pg_buf_release(&scratch);
	pg_buf_release(&out);
}
END_TEST

static Suite *http_suite(void)
{
	Suite *s = suite_create("mock_http");
	TCase *tc = tcase_create("parser");

	tcase_add_test(tc, every_split_parses_the_same);
	tcase_add_test(tc, fields_are_read);
	tcase_add_test(tc, pipelined_requests_parse_one_after_another);
	tcase_add_test(tc, bad_requests_get_the_right_status);
	tcase_add_test(tc, oversized_heads_are_refused_before_they_end);
	suite_add_tcase(s, tc);
	tc = tcase_create("api");
	tcase_add_test(tc, generation_requests_are_read_like_vllm);
	tcase_add_test(tc, bad_generation_requests_are_refused);
	tcase_add_test(tc, error_bodies_are_openai_shaped);
	tcase_add_test(tc, tokenize_and_detokenize_round_trip);
	tcase_add_test(tc, stream_chunks_frame_and_count);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(http_suite());
}
