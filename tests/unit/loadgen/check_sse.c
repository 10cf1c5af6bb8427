/* The SSE parser and the OpenAI response reader: every stream is fed whole,
 * split at every byte offset, split at every pair of offsets, and byte by
 * byte, and must always give the same events and the same trace. */
#include "testutil.h"

#include "base/buf.h"
#include "loadgen/reqtrace.h"
#include "loadgen/sse.h"

#include <stdlib.h>
#include <string.h>

static int record(void *ctx, const struct pg_sse_event *ev)
{
	struct pg_buf *out = ctx;

	pg_buf_printf(out, "[%.*s|%.*s]", (int)ev->type_len, ev->type, (int)ev->data_len, ev->data);
	/* the data is NUL-terminated for the callback's convenience */
	ck_assert_int_eq(ev->data[ev->data_len], '\0');
	return 0;
}

/* clang-format off */
static const struct {
	const char *stream;
	const char *events;
} streams[] = {
	{ "data: a\n\n", "[|a]" },
	{ "data:a\n\n", "[|a]" },
	{ "data:  two spaces\n\n", "[| two spaces]" },
	{ "data: a\r\n\r\ndata: b\r\r", "[|a][|b]" },
	{ "data: a\rdata: b\r\n\ndata: c\n\r\n", "[|a\nb][|c]" },
	{ "data: line1\ndata: line2\ndata\n\n", "[|line1\nline2\n]" },
	{ ": ping\n\n: OPENROUTER PROCESSING\ndata: x\n\n", "[|x]" },
	{ "event: error\ndata: {\"message\":\"bad\"}\n\ndata: next\n\n", "[error|{\"message\":\"bad\"}][|next]" },
	{ "event: ignored\n\ndata: no type\n\n", "[|no type]" },
	{ "id: 7\nretry: 10\ndata: d\n\n", "[|d]" },
	{ "\xEF\xBB\xBF" "data: bom\n\n", "[|bom]" },
	{ "data: caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\n\n", "[|caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80]" },
	{ "data: \n\n", "[|]" },
	{ "data: unterminated", "[|unterminated]" },
	{ "data: no blank line\n", "[|no blank line]" },
	{ "\n\n\ndata: [DONE]\n\n", "[|[DONE]]" },
	{ "data: {\"choices\":[{\"text\":\"hi\"}]}\n\n"
	  "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}}\n\n"
	  "data: [DONE]\n\n",
	  "[|{\"choices\":[{\"text\":\"hi\"}]}][|{\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}}][|[DONE]]" },
};
/* clang-format on */

#define N_STREAMS (sizeof(streams) / sizeof(streams[0]))

static void parse_pieces(struct pg_buf *out, const char *s, const size_t *cuts, size_t ncuts)
{
	struct pg_sse p;
	size_t len = strlen(s), from = 0;

	pg_sse_init(&p, record, out);
	for (size_t i = 0; i <= ncuts; i++) {
		size_t to = i < ncuts ? cuts[i] : len;
		/* a private copy, so a read past the piece is caught by ASan */
		char *piece = malloc(to - from + 1);
		memcpy(piece, s + from, to - from);
		ck_assert_int_eq(pg_sse_feed(&p, piece, to - from), 0);
		free(piece);
		from = to;
	}
	ck_assert_int_eq(pg_sse_finish(&p), 0);
	pg_sse_release(&p);
}

START_TEST(sse_events_whole_and_split_everywhere)
{
	for (size_t k = 0; k < N_STREAMS; k++) {
		const char *s = streams[k].stream;
		size_t len = strlen(s);
		struct pg_buf out = PG_BUF_INIT;

		parse_pieces(&out, s, NULL, 0);
		ck_assert_msg(!strcmp(out.ptr, streams[k].events), "stream %zu whole: got %s", k,
			      out.ptr);

		for (size_t i = 0; i <= len; i++) {
			pg_buf_reset(&out);
			parse_pieces(&out, s, &i, 1);
			ck_assert_msg(!strcmp(out.ptr, streams[k].events),
				      "stream %zu split at %zu: %s", k, i, out.ptr);
		}
		for (size_t i = 0; i <= len; i++)
			for (size_t j = i; j <= len; j++) {
				size_t cuts[2] = { i, j };
				pg_buf_reset(&out);
				parse_pieces(&out, s, cuts, 2);
				ck_assert_msg(!strcmp(out.ptr, streams[k].events),
					      "stream %zu split at %zu,%zu", k, i, j);
			}
		{
			size_t *cuts = malloc(len * sizeof(size_t));
			for (size_t i = 0; i < len; i++)
				cuts[i] = i + 1;
			pg_buf_reset(&out);
			parse_pieces(&out, s, cuts, len ? len - 1 : 0);
			ck_assert_msg(!strcmp(out.ptr, streams[k].events),
				      "stream %zu byte by byte", k);
			free(cuts);
		}
		pg_buf_release(&out);
	}
}
END_TEST

static int stop_at_second(void *ctx, const struct pg_sse_event *ev)
{
	int *n = ctx;
	(void)ev;
	return ++*n == 2 ? 7 : 0;
}

START_TEST(sse_callback_stops_and_size_is_bounded)
{
	struct pg_sse p;
	int n = 0;
	const char *s = "data: 1\n\ndata: 2\n\ndata: 3\n\n";

	pg_sse_init(&p, stop_at_second, &n);
	ck_assert_int_eq(pg_sse_feed(&p, s, strlen(s)), 7);
	ck_assert_int_eq(n, 2);
	pg_sse_release(&p);

	pg_sse_init(&p, stop_at_second, &n);
	p.max_event = 16;
	ck_assert_int_eq(pg_sse_feed(&p, "data: 0123456789abcdef", 22), -1);
	ck_assert(p.overflow);
	ck_assert_int_eq(pg_sse_feed(&p, "\n\n", 2), -1);
	pg_sse_release(&p);
}
END_TEST

START_TEST(chunk_skim_picks_what_metrics_need)
{
	struct pg_chunk_info ci;
	/* clang-format off */
	static const char *const invalid[] = {
		"", "{", "{\"a\":}", "{\"a\":1,}", "[1]", "{\"a\":tru}", "{\"a\":\"x}", "{\"a\":1} x",
		"{\"a\":\"\\q\"}", "{\"a\":\"\\u12g4\"}", "{\"a\":01.}", "{\"a\":-}", "{\"choices\":[}",
		"{\"usage\":{\"completion_tokens\":}}", "{\"a\":\"\x01\"}",
	};
	/* clang-format on */

	const char *c1 = "{\"id\":\"x\",\"choices\":[{\"index\":0,\"text\":\"\"}],\"usage\":null}";
	ck_assert_int_eq(pg_chunk_skim(&ci, c1, strlen(c1)), 0);
	ck_assert(ci.choices);
	ck_assert(!ci.usage);
	ck_assert(!ci.error);

	const char *u =
		" {\"choices\" : [ ] , \"usage\":{\"prompt_tokens\":12,\"total_tokens\":40,"
		"\"completion_tokens\":28,\"prompt_tokens_details\":{\"cached_tokens\":0}}} ";
	ck_assert_int_eq(pg_chunk_skim(&ci, u, strlen(u)), 0);
	ck_assert(!ci.choices);
	ck_assert(ci.usage);
	ck_assert_int_eq(ci.prompt_tokens, 12);
	ck_assert_int_eq(ci.completion_tokens, 28);

	const char *nested =
		"{\"x\":{\"choices\":[1],\"usage\":{\"completion_tokens\":5}},\"s\":\"\\\"choices\\\"\\u00e9\"}";
	ck_assert_int_eq(pg_chunk_skim(&ci, nested, strlen(nested)), 0);
	ck_assert(!ci.choices);
	ck_assert(!ci.usage);

	const char *e1 = "{\"error\":{\"message\":\"overloaded\",\"code\":503}}";
	ck_assert_int_eq(pg_chunk_skim(&ci, e1, strlen(e1)), 0);
	ck_assert(ci.error);
	const char *e2 =
		"{\"object\":\"error\",\"message\":\"bad\",\"type\":\"BadRequestError\",\"code\":400}";
	ck_assert_int_eq(pg_chunk_skim(&ci, e2, strlen(e2)), 0);
	ck_assert(ci.error);
	const char *e3 = "{\"error\":null,\"choices\":[{}]}";
	ck_assert_int_eq(pg_chunk_skim(&ci, e3, strlen(e3)), 0);
	ck_assert(!ci.error);
	ck_assert(ci.choices);

	for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++)
		ck_assert_msg(pg_chunk_skim(&ci, invalid[i], strlen(invalid[i])) == -1,
			      "accepted %s", invalid[i]);
}
END_TEST

/* The skim scans a string sixteen bytes at a time where it can: a stop
 * byte (the quote, an escape, a control character) at any place of any
 * window, and a string that ends within sixteen bytes of the message's
 * end, must read as the byte-at-a-time scan read them; bytes above 0x7f
 * (UTF-8) are not stops. */
START_TEST(chunk_skim_strings_at_every_offset)
{
	struct pg_chunk_info ci;

	for (size_t len = 0; len <= 40; len++) {
		for (size_t at = 0; at <= len; at++) {
			/* what goes at `at` inside a string of len 'a's, and
			 * whether the message stays valid */
			static const struct {
				const char *ins;
				bool valid;
			} cases[] = {
				{ "", true },      { "\"", false },      { "\x01", false },
				{ "\x1f", false }, { "\\\"", true },     { "\\u00e9", true },
				{ "\\q", false },  { "\xc3\xa9", true }, { "\x7f", true },
				{ "\xff", true },  { " ", true },
			};
			for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
				struct pg_buf m = PG_BUF_INIT;
				pg_buf_puts(&m, "{\"choices\":[{\"text\":\"");
				for (size_t k = 0; k < at; k++)
					pg_buf_putc(&m, 'a');
				pg_buf_puts(&m, cases[c].ins);
				for (size_t k = at; k < len; k++)
					pg_buf_putc(&m, 'a');
				/* short tails put the string's end near the message's */
				pg_buf_puts(&m, len % 2 ? "\"}]}" : "\"}],\"usage\":null}");
				ck_assert_msg((pg_chunk_skim(&ci, m.ptr, m.len) == 0) ==
						      cases[c].valid,
					      "len %zu at %zu case %zu: %s", len, at, c, m.ptr);
				if (cases[c].valid)
					ck_assert(ci.choices);
				pg_buf_release(&m);
			}
		}
	}
}
END_TEST

/* A response fed in pieces (at cut, 0 = whole) at time 1000 + offset. */
static void replay(struct pg_reqtrace *t, int status, const char *ctype, const char *body,
		   size_t cut, enum pg_fail transport)
{
	struct pg_oai_resp r;
	size_t len = strlen(body);

	pg_reqtrace_init(t);
	t->sent_ns = 0;
	pg_oai_resp_init(&r);
	(void)ctype; /* recorded for the reader; the parser sniffs the body */
	pg_oai_resp_begin(&r, t, status);
	if (cut && cut < len) {
		pg_oai_resp_feed(&r, 1000, body, cut);
		pg_oai_resp_feed(&r, 2000, body + cut, len - cut);
	} else {
		pg_oai_resp_feed(&r, 1000, body, len);
	}
	pg_oai_resp_end(&r, 3000, transport, transport ? "connection reset" : NULL);
	pg_oai_resp_release(&r);
}

START_TEST(responses_become_traces)
{
	struct pg_reqtrace t;
	const char *chat =
		"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}],\"usage\":null}\n\n"
		": keep-alive\n\n"
		"data:{\"choices\":[{\"delta\":{\"content\":\"Hel\"}}],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":1}}\n\n"
		"data: {\"choices\":[{\"delta\":{\"content\":\"lo w\"}}],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":3}}\n\n"
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":3,\"total_tokens\":12}}\n\n"
		"data: [DONE]\n\n";
	size_t len = strlen(chat);

	/* the role-only first chunk counts as the first token (vLLM's rule) */
	for (size_t cut = 0; cut < len; cut++) {
		replay(&t, 200, "text/event-stream; charset=utf-8", chat, cut, PG_FAIL_NONE);
		ck_assert(pg_reqtrace_ok(&t));
		ck_assert_uint_eq(t.n_chunks, 3);
		ck_assert_uint_eq(t.n_chunk_usage, 2);
		ck_assert_int_eq(t.usage_completion_tokens, 3);
		ck_assert_int_eq(t.usage_prompt_tokens, 9);
		ck_assert(t.saw_done);
		ck_assert_int_eq(t.first_byte_ns, 1000);
		pg_reqtrace_release(&t);
	}

	replay(&t, 500, "application/json",
	       "{\"object\":\"error\",\"message\":\"boom\",\"code\":500}", 0, PG_FAIL_NONE);
	ck_assert_int_eq(t.fail, PG_FAIL_HTTP);
	ck_assert_int_eq(t.http_status, 500);
	ck_assert_str_eq(t.error, "HTTP 500: boom");
	pg_reqtrace_release(&t);

	replay(&t, 503, "text/plain", "upstream unavailable", 0, PG_FAIL_NONE);
	ck_assert_str_eq(t.error, "HTTP 503: upstream unavailable");
	pg_reqtrace_release(&t);

	replay(&t, 200, "text/event-stream",
	       "data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: {\"choices\":[{\"te", 0,
	       PG_FAIL_DISCONNECT);
	ck_assert_int_eq(t.fail, PG_FAIL_DISCONNECT);
	ck_assert_uint_eq(t.n_chunks, 1);
	ck_assert(!pg_reqtrace_ok(&t));
	pg_reqtrace_release(&t);

	replay(&t, 200, "text/event-stream",
	       "data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: not json\n\n", 0, PG_FAIL_NONE);
	ck_assert_int_eq(t.fail, PG_FAIL_MALFORMED);
	ck_assert_str_eq(t.error, "not JSON in the stream: not json");
	pg_reqtrace_release(&t);

	replay(&t, 200, "text/event-stream",
	       "data: {\"choices\":[{\"text\":\"a\"}]}\n\n"
	       "data: {\"error\":{\"message\":\"KV cache exhausted\",\"code\":500}}\n\n",
	       0, PG_FAIL_NONE);
	ck_assert_int_eq(t.fail, PG_FAIL_SERVER_ERROR);
	ck_assert_str_eq(t.error, "error in the stream: KV cache exhausted");
	pg_reqtrace_release(&t);

	replay(&t, 200, "text/event-stream",
	       "event: error\ndata: {\"message\":\"shutting down\"}\n\n", 0, PG_FAIL_NONE);
	ck_assert_int_eq(t.fail, PG_FAIL_SERVER_ERROR);
	ck_assert_str_eq(t.error, "error event: shutting down");
	pg_reqtrace_release(&t);

	replay(&t, 200, "text/event-stream",
	       "data: {\"choices\":[],\"usage\":{\"completion_tokens\":0}}\n\ndata: [DONE]\n\n", 0,
	       PG_FAIL_NONE);
	ck_assert_int_eq(t.fail, PG_FAIL_NO_CONTENT);
	pg_reqtrace_release(&t);

	/* a server that ignores stream: true answers with one JSON body */
	const char *full =
		"{\"id\":\"c\",\"choices\":[{\"text\":\"hello\"}],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":17}}";
	replay(&t, 200, "application/json", full, 10, PG_FAIL_NONE);
	ck_assert(pg_reqtrace_ok(&t));
	ck_assert_uint_eq(t.n_chunks, 1);
	ck_assert_int_eq(t.chunk_ns[0], 3000);
	ck_assert_int_eq(pg_reqtrace_output_tokens(&t), 17);
	ck_assert_int_eq(pg_reqtrace_input_tokens(&t), 4);
	pg_reqtrace_release(&t);

	/* SSE mislabelled as JSON is still SSE; the first byte decides */
	replay(&t, 200, "application/json", "data: {\"choices\":[{\"text\":\"a\"}]}\n\n", 0,
	       PG_FAIL_NONE);
	ck_assert(pg_reqtrace_ok(&t));
	pg_reqtrace_release(&t);
	replay(&t, 200, NULL, full, 0, PG_FAIL_NONE);
	ck_assert(pg_reqtrace_ok(&t));
	pg_reqtrace_release(&t);
	replay(&t, 200, NULL, "data: {\"choices\":[{\"text\":\"a\"}]}\n\n", 0, PG_FAIL_NONE);
	ck_assert(pg_reqtrace_ok(&t));
	ck_assert_int_eq(pg_reqtrace_output_tokens(&t), 1); /* no usage: one per message */
	pg_reqtrace_release(&t);

	replay(&t, 200, "text/event-stream", "data: {\"choices\":[{\"text\":\"a\"}]}\n\n", 0,
	       PG_FAIL_TIMEOUT);
	ck_assert_int_eq(t.fail, PG_FAIL_TIMEOUT);
	pg_reqtrace_release(&t);
}
END_TEST

static Suite *sse_suite(void)
{
	Suite *s = suite_create("sse");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, sse_events_whole_and_split_everywhere);
	tcase_add_test(tc, sse_callback_stops_and_size_is_bounded);
	tcase_add_test(tc, chunk_skim_picks_what_metrics_need);
	tcase_add_test(tc, chunk_skim_strings_at_every_offset);
	tcase_add_test(tc, responses_become_traces);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(sse_suite());
}
