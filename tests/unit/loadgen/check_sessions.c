/* Multi-turn sessions (loadgen/sessions.h): the schedule of each rule, the
 * backpressure, the history sent, and the session metrics; the mock's
 * prefix cache (mockserver/prefix_cache.h) and the usage field it reports. */
#include "testutil.h"

#include "base/buf.h"
#include "base/error.h"
#include "loadgen/dataset.h"
#include "loadgen/reqtrace.h"
#include "loadgen/sessions.h"
#include "mockserver/prefix_cache.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static struct pg_sessions_spec spec(long users, long rounds, double think)
{
	struct pg_sessions_spec s = { users, rounds, 8, 3, 0, think, NAN };
	return s;
}

START_TEST(plan_rules)
{
	struct pg_sessions_plan p;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_sessions_spec s = spec(4, 2, NAN);

	/* rate: each user asks every users/qps seconds, users join 1/qps apart */
	ck_assert_int_eq(pg_sessions_plan(&p, &s, 2, &err), 0);
	ck_assert_double_eq(p.period_s, 2);
	ck_assert_double_eq(p.join_s, 0.5);
	/* think time: joins spread over one think time */
	s = spec(4, 2, 1);
	ck_assert_int_eq(pg_sessions_plan(&p, &s, INFINITY, &err), 0);
	ck_assert(isinf(p.period_s));
	ck_assert_double_eq(p.join_s, 0.25);
	ck_assert_double_eq(p.think_s, 1);
	/* both: refused */
	ck_assert_int_eq(pg_sessions_plan(&p, &s, 3, &err), PG_ECONFIG);
	ck_assert_ptr_nonnull(strstr(err.msg, "think_time"));
	s = spec(0, 2, NAN);
	ck_assert_int_eq(pg_sessions_plan(&p, &s, INFINITY, &err), PG_ECONFIG);
}
END_TEST

/* Rate mode: 2 users, qps 1 -> period 2 s, joins at 0 and 1 s. */
START_TEST(rate_schedule_and_backpressure)
{
	struct pg_sessions_plan p;
	struct pg_sessions_spec s = spec(2, 3, NAN);
	struct pg_error err = PG_ERROR_INIT;
	struct pg_sessions ss;
	double nominal;

	ck_assert_int_eq(pg_sessions_plan(&p, &s, 1, &err), 0);
	pg_sessions_init(&ss, &p, &s, 4, 7);
	ck_assert_int_eq(pg_sessions_total(&ss), 6);
	ck_assert_double_eq(pg_sessions_next_due(&ss), 0);
	ck_assert_int_eq(pg_sessions_take(&ss, 0, &nominal), 0);
	ck_assert_double_eq(pg_sessions_next_due(&ss), 1);
	ck_assert_int_eq(pg_sessions_take(&ss, 1, &nominal), 1);
	ck_assert_double_eq(nominal, 1);
	/* nobody is ready while both wait for their answers */
	ck_assert(isinf(pg_sessions_next_due(&ss)));
	/* user 0's answer ends in time: next turn one period after it was sent */
	pg_sessions_done(&ss, 0, 0.001, 0.5, " a b", 4);
	ck_assert_double_eq_tol(pg_sessions_next_due(&ss), 2.001, 1e-12);
	/* user 1's ends at 4.0, after its next turn was due (1.002 + 2):
	 * backpressure, sent when the answer ends */
	pg_sessions_done(&ss, 1, 1.002, 4.0, "", 0);
	ck_assert_int_eq(ss.backpressure, 1);
	ck_assert_double_eq_tol(ss.backpressure_max_s, 4.0 - 3.002, 1e-12);
	ck_assert_int_eq(pg_sessions_take(&ss, 2, &nominal), 0);
	ck_assert_int_eq(pg_sessions_take(&ss, 3, &nominal), 1);
	ck_assert_double_eq_tol(nominal, 3.002, 1e-12); /* scheduled, not eligible */
	ck_assert_int_eq(ss.req_turn[3], 1);
	ck_assert_int_eq(ss.u[1].turn, 1);
	pg_sessions_release(&ss);
}
END_TEST

START_TEST(think_time_schedule)
{
	struct pg_sessions_plan p;
	struct pg_sessions_spec s = spec(2, 2, 0.5);
	struct pg_error err = PG_ERROR_INIT;
	struct pg_sessions ss;
	double nominal;

	ck_assert_int_eq(pg_sessions_plan(&p, &s, INFINITY, &err), 0);
	pg_sessions_init(&ss, &p, &s, 4, 7);
	pg_sessions_take(&ss, 0, &nominal);
	pg_sessions_take(&ss, 1, &nominal);
	ck_assert_double_eq(nominal, 0.25);
	pg_sessions_done(&ss, 1, 0.25, 9, "", 0);
	pg_sessions_done(&ss, 0, 0, 3, "", 0);
	/* user 0 first now: due 3.5 before user 1's 9.5; never backpressure */
	ck_assert_double_eq(pg_sessions_next_due(&ss), 3.5);
	ck_assert_int_eq(pg_sessions_take(&ss, 2, &nominal), 0);
	ck_assert_double_eq(pg_sessions_next_due(&ss), 9.5);
	ck_assert_int_eq(ss.backpressure, 0);
	/* the last turn's end makes nobody ready */
	pg_sessions_done(&ss, 2, 3.5, 4, "", 0);
	ck_assert_int_eq(pg_sessions_take(&ss, 3, &nominal), 1);
	pg_sessions_done(&ss, 3, 9.5, 10, "", 0);
	ck_assert(isinf(pg_sessions_next_due(&ss)));
	pg_sessions_release(&ss);
}
END_TEST

/* The history: system, q0, a0 as received, q1; the same questions for a
 * user whatever the order of sending; other users' questions differ. */
START_TEST(history_carries_answers_as_received)
{
	struct pg_sessions_plan p;
	struct pg_sessions_spec s = spec(2, 3, NAN);
	struct pg_error err = PG_ERROR_INIT;
	struct pg_sessions ss;
	struct pg_buf q0 = PG_BUF_INIT, q1 = PG_BUF_INIT, other = PG_BUF_INIT;
	json_t *h;
	double nominal;

	ck_assert_int_eq(pg_sessions_plan(&p, &s, INFINITY, &err), 0);
	pg_sessions_init(&ss, &p, &s, 4, 7);
	pg_sessions_question(&q0, &ss, 0, 0);
	pg_sessions_question(&q1, &ss, 0, 1);
	pg_sessions_question(&other, &ss, 1, 0);
	ck_assert_str_ne(q0.ptr, other.ptr);
	ck_assert_str_ne(q0.ptr, q1.ptr);
	{
		int words = 1;
		for (const char *q = q0.ptr; *q; q++)
			words += *q == ' ';
		ck_assert_int_eq(words, 3);
	}

	/* the system message: the shared prompt, then the user's own context */
	ss.context_len = 5;
	h = pg_sessions_history(&ss, 1, true);
	{
		json_t *h0 = pg_sessions_history(&ss, 0, true);
		const char *s1 = json_string_value(
			json_object_get(json_array_get(h, 0), "content"));
		const char *s0 = json_string_value(
			json_object_get(json_array_get(h0, 0), "content"));
		ck_assert(!strncmp(s0, ss.system, strlen(ss.system)));
		ck_assert(!strncmp(s1, ss.system, strlen(ss.system)));
		ck_assert_str_ne(s0, s1);
		ck_assert_int_eq(strlen(s0) > strlen(ss.system), 1);
		json_decref(h0);
	}
	json_decref(h);
	ss.context_len = 0;

	h = pg_sessions_history(&ss, 0, true);
	ck_assert_int_eq(json_array_size(h), 2);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(h, 0), "role")),
			 "system");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(h, 1), "content")),
			 q0.ptr);
	json_decref(h);

	pg_sessions_take(&ss, 0, &nominal);
	pg_sessions_done(&ss, 0, 0, 1, " the answer", 11);
	h = pg_sessions_history(&ss, 0, true);
	ck_assert_int_eq(json_array_size(h), 4);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(h, 2), "role")),
			 "assistant");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(h, 2), "content")),
			 " the answer");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(h, 3), "content")),
			 q1.ptr);
	json_decref(h);

	/* completions: one prompt, the conversation in order */
	h = pg_sessions_history(&ss, 0, false);
	{
		const char *txt = json_string_value(h);
		const char *a = strstr(txt, q0.ptr), *b = strstr(txt, " the answer"),
			   *c = strstr(txt, q1.ptr);
		ck_assert(!strncmp(txt, ss.system, strlen(ss.system)));
		ck_assert(a && b && c && a < b && b < c);
		ck_assert_ptr_nonnull(strstr(txt, "\n\nAssistant: the answer\n\nUser: "));
	}
	json_decref(h);
	pg_buf_release(&q0);
	pg_buf_release(&q1);
	pg_buf_release(&other);
	pg_sessions_release(&ss);
}
END_TEST

static void trace(struct pg_reqtrace *t, int64_t sent_ms, int64_t first_ms, long prompt,
		  long cached)
{
	pg_reqtrace_init(t);
	pg_reqtrace_reserve(t, 1);
	t->sent_ns = sent_ms * 1000000;
	t->chunk_ns[0] = first_ms * 1000000;
	t->n_chunks = 1;
	t->end_ns = t->chunk_ns[0];
	t->http_status = 200;
	t->usage_prompt_tokens = prompt;
	t->usage_cached_tokens = cached;
}

START_TEST(metrics_by_turn_and_hit_rate)
{
	struct pg_sessions_plan p;
	struct pg_sessions_spec s = spec(2, 2, NAN);
	struct pg_error err = PG_ERROR_INIT;
	struct pg_sessions ss;
	struct pg_reqtrace t[4];
	size_t turn[4] = { 0, 0, 1, 1 };
	json_t *o = json_object();

	ck_assert_int_eq(pg_sessions_plan(&p, &s, INFINITY, &err), 0);
	pg_sessions_init(&ss, &p, &s, 4, 7);
	trace(&t[0], 0, 40, 100, 0);
	trace(&t[1], 0, 20, 100, 96);
	trace(&t[2], 100, 110, 150, 96);
	trace(&t[3], 100, 106, 150, 144);
	ss.backpressure = 1;
	ss.backpressure_sum_s = ss.backpressure_max_s = 0.25;
	pg_session_metrics(o, t, turn, 4, &ss);
	ck_assert_double_eq_tol(
		json_real_value(json_array_get(json_object_get(o, "mean_ttft_ms_by_turn"), 0)), 30,
		1e-9);
	ck_assert_double_eq_tol(
		json_real_value(json_array_get(json_object_get(o, "mean_ttft_ms_by_turn"), 1)), 8,
		1e-9);
	/* numpy's linear p99 of {20, 40} and of {6, 10} */
	ck_assert_double_eq_tol(
		json_real_value(json_array_get(json_object_get(o, "p99_ttft_ms_by_turn"), 0)), 39.8,
		1e-9);
	ck_assert_double_eq_tol(
		json_real_value(json_array_get(json_object_get(o, "p99_ttft_ms_by_turn"), 1)), 9.96,
		1e-9);
	ck_assert_double_eq_tol(json_real_value(json_object_get(o, "p99_ttft_ms_later_turns")),
				9.96, 1e-9);
	ck_assert_double_eq_tol(json_real_value(json_object_get(o, "median_ttft_ms_first_turn")),
				30, 1e-9);
	ck_assert_double_eq_tol(json_real_value(json_object_get(o, "mean_ttft_ms_later_turns")), 8,
				1e-9);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "total_cached_tokens")), 336);
	/* cached over prompt tokens: 336 / 500 */
	ck_assert_double_eq_tol(json_real_value(json_object_get(o, "prefix_cache_hit_rate")),
				336.0 / 500, 1e-12);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "backpressure_turns")), 1);
	ck_assert_double_eq_tol(json_real_value(json_object_get(o, "max_backpressure_ms")), 250,
				1e-9);
	json_decref(o);

	/* a server that reports no cached tokens: null, not 0 */
	o = json_object();
	for (int i = 0; i < 4; i++)
		t[i].usage_cached_tokens = -1;
	pg_session_metrics(o, t, turn, 4, &ss);
	ck_assert(json_is_null(json_object_get(o, "prefix_cache_hit_rate")));
	ck_assert(json_is_null(json_object_get(o, "total_cached_tokens")));
	pg_session_server_keys(o, NAN, NAN);
	ck_assert(json_is_null(json_object_get(o, "server_prefix_cache_hit_rate")));
	pg_session_server_keys(o, 400, 100);
	ck_assert_double_eq(json_real_value(json_object_get(o, "server_prefix_cache_hit_rate")),
			    0.25);
	json_decref(o);
	for (int i = 0; i < 4; i++)
		pg_reqtrace_release(&t[i]);
	pg_sessions_release(&ss);
}
END_TEST

START_TEST(skim_reads_cached_tokens)
{
	struct pg_chunk_info ci;
	const char *j = "{\"choices\":[],\"usage\":{\"prompt_tokens\":40,\"completion_tokens\":3,"
			"\"prompt_tokens_details\":{\"audio\":null,\"cached_tokens\":32}}}";

	ck_assert_int_eq(pg_chunk_skim(&ci, j, strlen(j)), 0);
	ck_assert_int_eq(ci.cached_tokens, 32);
	ck_assert_int_eq(ci.prompt_tokens, 40);
	j = "{\"choices\":[],\"usage\":{\"prompt_tokens\":40,\"prompt_tokens_details\":null}}";
	ck_assert_int_eq(pg_chunk_skim(&ci, j, strlen(j)), 0);
	ck_assert_int_eq(ci.cached_tokens, -1);
}
END_TEST

static void hash_n(struct pg_prefix_hasher *h, uint32_t first, size_t n)
{
	pg_prefix_hasher_init(h);
	for (size_t i = 0; i < n; i++)
		pg_prefix_hasher_add(h, first + (uint32_t)i);
}

START_TEST(prefix_cache_blocks_and_lru)
{
	struct pg_prefix_cache *c = pg_prefix_cache_new(4);
	struct pg_prefix_hasher a, b, x;

	hash_n(&a, 0, 40); /* 2 whole blocks */
	ck_assert_int_eq(a.n, 2);
	ck_assert_int_eq(pg_prefix_cache_lookup(c, a.blocks, a.n, 40), 0);
	/* the same prompt again: both blocks */
	ck_assert_int_eq(pg_prefix_cache_lookup(c, a.blocks, a.n, 40), 32);
	/* never the whole prompt: 32 tokens = 2 blocks, at most 1 found */
	hash_n(&b, 0, 32);
	ck_assert_int_eq(pg_prefix_cache_lookup(c, b.blocks, b.n, 32), 16);
	pg_prefix_hasher_release(&b);
	/* a chain: a different first block hides the same second one */
	hash_n(&x, 1, 40);
	ck_assert_int_eq(pg_prefix_cache_lookup(c, x.blocks, x.n, 40), 0);
	ck_assert_int_eq(pg_prefix_cache_size(c), 4);
	/* two more prompts evict the least recently used: a's blocks */
	hash_n(&b, 100, 40);
	pg_prefix_cache_lookup(c, b.blocks, b.n, 40);
	ck_assert_int_eq(pg_prefix_cache_size(c), 4);
	ck_assert_int_eq(pg_prefix_cache_lookup(c, a.blocks, a.n, 40), 0);
	ck_assert_int_eq(pg_prefix_cache_lookup(c, a.blocks, a.n, 40), 32);
	/* an answer's blocks stored after its prompt's: the next turn, the
	 * prompt and the answer and more, finds both */
	pg_prefix_cache_free(c);
	c = pg_prefix_cache_new(64);
	pg_prefix_hasher_release(&x);
	hash_n(&x, 500, 40);
	ck_assert_int_eq(pg_prefix_cache_lookup(c, x.blocks, x.n, 40), 0);
	{
		size_t from = x.n;
		for (uint32_t i = 540; i < 580; i++)
			pg_prefix_hasher_add(&x, i);
		pg_prefix_cache_store(c, x.blocks + from, x.n - from);
	}
	pg_prefix_hasher_release(&b);
	hash_n(&b, 500, 100);
	ck_assert_int_eq(pg_prefix_cache_lookup(c, b.blocks, b.n, 100), 80);
	pg_prefix_hasher_release(&a);
	pg_prefix_hasher_release(&b);
	pg_prefix_hasher_release(&x);
	pg_prefix_cache_free(c);
}
END_TEST

/* ShareGPT conversations as sessions: the questions of those with enough,
 * in order; too few oversampled; errors name the file. */
START_TEST(sharegpt_conversations_as_questions)
{
	const char *file =
		"[{\"conversations\": [{\"from\": \"human\", \"value\": \"a1\"},"
		" {\"from\": \"gpt\", \"value\": \"x\"}, {\"from\": \"human\", \"value\": \"a2\"},"
		" {\"from\": \"gpt\", \"value\": \"y\"}, {\"from\": \"human\", \"value\": \"a3\"}]},"
		" {\"conversations\": [{\"from\": \"human\", \"value\": \"short\"},"
		" {\"from\": \"gpt\", \"value\": \"z\"}]},"
		" {\"conversations\": [{\"from\": \"system\", \"value\": \"s\"},"
		" {\"from\": \"user\", \"value\": \"b1\"}, {\"from\": \"gpt\", \"value\": \"w\"},"
		" {\"from\": \"user\", \"value\": \"b2\"}]}]";
	struct pg_error err = PG_ERROR_INIT;
	char **q = NULL;
	int seen_a = 0, seen_b = 0;

	ck_assert_int_eq(
		pg_dataset_sharegpt_sessions(&q, file, strlen(file), "c.json", 3, 2, 0, &err), 0);
	for (size_t u = 0; u < 3; u++) {
		/* each user a whole conversation's first two questions, in order */
		if (!strcmp(q[u * 2], "a1")) {
			ck_assert_str_eq(q[u * 2 + 1], "a2");
			seen_a++;
		} else {
			ck_assert_str_eq(q[u * 2], "b1");
			ck_assert_str_eq(q[u * 2 + 1], "b2");
			seen_b++;
		}
	}
	ck_assert(seen_a >= 1 && seen_b >= 1 && seen_a + seen_b == 3);
	pg_dataset_questions_free(q, 6);
	/* three questions: only the first conversation has them */
	ck_assert_int_eq(
		pg_dataset_sharegpt_sessions(&q, file, strlen(file), "c.json", 2, 3, 0, &err), 0);
	ck_assert_str_eq(q[0], "a1");
	ck_assert_str_eq(q[5], "a3");
	pg_dataset_questions_free(q, 6);
	ck_assert_int_eq(
		pg_dataset_sharegpt_sessions(&q, file, strlen(file), "c.json", 2, 4, 0, &err),
		PG_ECONFIG);
	ck_assert_ptr_null(q);
	ck_assert_ptr_nonnull(strstr(err.msg, "c.json: no conversation has 4 questions"));
	ck_assert_int_eq(pg_dataset_sharegpt_sessions(&q, "[{]", 3, "bad.json", 2, 1, 0, &err),
			 PG_ECONFIG);
	ck_assert_ptr_nonnull(strstr(err.msg, "bad.json:1:"));
}
END_TEST

static Suite *sessions_suite(void)
{
	Suite *s = suite_create("sessions");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, plan_rules);
	tcase_add_test(tc, rate_schedule_and_backpressure);
	tcase_add_test(tc, think_time_schedule);
	tcase_add_test(tc, history_carries_answers_as_received);
	tcase_add_test(tc, metrics_by_turn_and_hit_rate);
	tcase_add_test(tc, skim_reads_cached_tokens);
	tcase_add_test(tc, prefix_cache_blocks_and_lru);
	tcase_add_test(tc, sharegpt_conversations_as_questions);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(sessions_suite());
}
