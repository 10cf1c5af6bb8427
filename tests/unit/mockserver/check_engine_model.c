/* The mock server's engine model and vocabulary, on a virtual clock. */
#include "testutil.h"

#include "base/buf.h"
#include "mockserver/engine_model.h"
#include "mockserver/engine_vocab.h"

#include <stdlib.h>
#include <string.h>

#define MS 1000000LL
#define US 1000LL

struct seen {
	int64_t deadline;
	int64_t first_token;
	int64_t n_tokens;
	int64_t message;
	bool last;
	int kind;
	uintptr_t who;
};

/* Run the engine's virtual clock to the end (or until `until`), collecting
 * every event in order. Polls at exactly each deadline, as an ideal server. */
static size_t run(struct pg_engine *e, int64_t until, struct seen *out, size_t max)
{
	struct pg_engine_event ev;
	size_t n = 0;

	for (;;) {
		int64_t t = pg_engine_next_deadline(e);
		if (t == INT64_MAX || t > until)
			break;
		while (pg_engine_poll(e, t, &ev)) {
			ck_assert_uint_lt(n, max);
			out[n++] = (struct seen){ ev.deadline_ns,    ev.first_token, ev.n_tokens,
						  ev.message_index,  ev.last,        ev.kind,
						  (uintptr_t)ev.user };
		}
	}
	return n;
}

static void base_params(struct pg_engine_params *p)
{
	pg_engine_params_default(p);
	p->ttft_ns = 50 * MS;
	p->itl_ns = 10 * MS;
	p->prefill_ns_per_token = 0;
	p->itl_growth = 0;
	p->max_running = 0;
}

START_TEST(fixed_timing_is_exact_at_any_load)
{
	struct pg_engine_params p;
	struct pg_engine *e;
	struct pg_engine_plan plan;
	struct pg_engine_request req = { .prompt_tokens = 1000,
					 .max_tokens = 5,
					 .ignore_eos = true };
	static struct seen ev[1000];
	size_t n;

	pg_engine_params_default(&p); /* engine-model knobs set: fixed must ignore them */
	p.fixed_timing = true;
	p.ttft_ns = 50 * MS;
	p.itl_ns = 10 * MS;
	p.max_running = 4;
	e = pg_engine_new(&p);
	for (int i = 0; i < 100; i++)
		ck_assert_ptr_nonnull(
			pg_engine_submit(e, i * US, &req, (void *)(uintptr_t)i, &plan));
	n = run(e, INT64_MAX, ev, 1000);
	ck_assert_uint_eq(n, 500);
	for (size_t k = 0; k < n; k++) {
		int64_t received = (int64_t)ev[k].who * US;
		ck_assert_int_eq(ev[k].deadline, received + 50 * MS + ev[k].message * 10 * MS);
		ck_assert_int_eq(ev[k].n_tokens, 1);
	}
	pg_engine_free(e);
}
END_TEST

START_TEST(ttft_is_base_plus_prefill_per_token)
{
	struct pg_engine_params p;
	struct pg_engine *e;
	struct pg_engine_plan plan;
	struct pg_engine_request req = { .prompt_tokens = 512,
					 .max_tokens = 1,
					 .ignore_eos = true };
	struct seen ev[4];

	base_params(&p);
	p.prefill_ns_per_token = 20 * US;
	e = pg_engine_new(&p);
	pg_engine_submit(e, 7 * MS, &req, NULL, &plan);
	ck_assert_uint_eq(run(e, INT64_MAX, ev, 4), 1);
	ck_assert_int_eq(ev[0].deadline, 7 * MS + 50 * MS + 512 * 20 * US);
	ck_assert(ev[0].last);
	ck_assert_int_eq(plan.messages, 1);
	pg_engine_free(e);
}
END_TEST

START_TEST(itl_grows_with_running_sequences)
{
	struct pg_engine_params p;
	struct pg_engine *e;
	struct pg_engine_plan plan;
	struct pg_engine_request req = { .prompt_tokens = 1, .max_tokens = 3, .ignore_eos = true };
	struct seen ev[16];
	size_t n;

	base_params(&p);
	p.itl_growth = 0.5;
	e = pg_engine_new(&p);
	/* Three sequences at once: while all three run, itl = 10 x (1 + 0.5 x 2). */
	for (int i = 0; i < 3; i++)
		pg_engine_submit(e, 0, &req, (void *)(uintptr_t)i, &plan);
	n = run(e, INT64_MAX, ev, 16);
	ck_assert_uint_eq(n, 9);
	for (size_t k = 0; k < 3; k++)
		ck_assert_int_eq(ev[k].deadline, 50 * MS);
	for (size_t k = 3; k < 6; k++)
		ck_assert_int_eq(ev[k].deadline, 70 * MS);
	/* The third message of the first sequence is scheduled while all three
	 * still run (none has finished), so it too is 20 ms later. */
	for (size_t k = 6; k < 9; k++)
		ck_assert_int_eq(ev[k].deadline, 90 * MS);
	pg_engine_free(e);

	/* A lone sequence runs at the base ITL. */
	e = pg_engine_new(&p);
	pg_engine_submit(e, 0, &req, NULL, &plan);
	n = run(e, INT64_MAX, ev, 16);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(ev[1].deadline - ev[0].deadline, 10 * MS);
	pg_engine_free(e);
}
END_TEST

START_TEST(queue_admits_in_fifo_order_when_slots_free)
{
	struct pg_engine_params p;
	struct pg_engine *e;
	struct pg_engine_plan plan;
	struct pg_engine_request req = { .prompt_tokens = 1, .max_tokens = 2, .ignore_eos = true };
	struct pg_engine_counts counts;
	struct seen ev[32];
	size_t n;

	base_params(&p);
	p.max_running = 2;
	e = pg_engine_new(&p);
	for (int i = 0; i < 5; i++)
		pg_engine_submit(e, i * MS, &req, (void *)(uintptr_t)i, &plan);
	pg_engine_counts(e, &counts);
	ck_assert_uint_eq(counts.running, 2);
	ck_assert_uint_eq(counts.queued, 3);
	n = run(e, INT64_MAX, ev, 32);
	ck_assert_uint_eq(n, 10);
	/* 0 and 1 run first (finish at 60 and 61 ms); 2 is admitted when 0
	 * finishes, 3 when 1 finishes, 4 when 2 finishes. */
	int64_t first_token[5] = { 0 }, last_token[5] = { 0 };
	for (size_t k = 0; k < n; k++) {
		if (ev[k].message == 0)
			first_token[ev[k].who] = ev[k].deadline;
		if (ev[k].last)
			last_token[ev[k].who] = ev[k].deadline;
	}
	ck_assert_int_eq(first_token[0], 50 * MS);
	ck_assert_int_eq(first_token[1], 51 * MS);
	ck_assert_int_eq(first_token[2], last_token[0] + 50 * MS);
	ck_assert_int_eq(first_token[3], last_token[1] + 50 * MS);
	ck_assert_int_eq(first_token[4], last_token[2] + 50 * MS);
	ck_assert_int_lt(first_token[2], first_token[3]);
	pg_engine_counts(e, &counts);
	ck_assert_uint_eq(counts.peak_running, 2);
	ck_assert_uint_eq(counts.peak_queued, 3);
	ck_assert_uint_eq(counts.running, 0);
	pg_engine_free(e);
}
END_TEST

START_TEST(tokens_per_message_groups_after_the_first)
{
	struct pg_engine_params p;
	struct pg_engine *e;
	struct pg_engine_plan plan;
	struct pg_engine_request req = { .prompt_tokens = 1, .max_tokens = 10, .ignore_eos = true };
	struct seen ev[16];
	size_t n;

	base_params(&p);
	p.tokens_per_message = 4;
	e = pg_engine_new(&p);
	pg_engine_submit(e, 0, &req, NULL, &plan);
	ck_assert_int_eq(plan.messages, 4);
	n = run(e, INT64_MAX, ev, 16);
	ck_assert_uint_eq(n, 4);
	/* [1] [4] [4] [1]: 10 tokens; each message due when its last token is. */
	const int64_t tokens[] = { 1, 4, 4, 1 }, first[] = { 0, 1, 5, 9 };
	const int64_t at[] = { 50 * MS, 90 * MS, 130 * MS, 140 * MS };
	for (size_t k = 0; k < 4; k++) {
		ck_assert_int_eq(ev[k].n_tokens, tokens[k]);
		ck_assert_int_eq(ev[k].first_token, first[k]);
		ck_assert_int_eq(ev[k].deadline, at[k]);
		ck_assert(ev[k].last == (k == 3));
	}
	pg_engine_free(e);
}
END_TEST

START_TEST(eos_ends_early_unless_ignored_and_is_seeded)
{
	struct pg_engine_params p;
	struct pg_engine *a, *b;
	struct pg_engine_plan pa, pb;
	struct pg_engine_request req = { .prompt_tokens = 1,
					 .max_tokens = 1000,
					 .ignore_eos = false };
	int early = 0;

	base_params(&p);
	p.eos_prob = 0.01;
	p.seed = 42;
	a = pg_engine_new(&p);
	b = pg_engine_new(&p);
	for (int i = 0; i < 200; i++) {
		struct pg_engine_seq *sa = pg_engine_submit(a, 0, &req, NULL, &pa);
		struct pg_engine_seq *sb = pg_engine_submit(b, 0, &req, NULL, &pb);
		ck_assert_int_eq(pa.output_tokens, pb.output_tokens);
		ck_assert(pa.eos == pb.eos);
		ck_assert(pa.eos || pa.output_tokens == 1000);
		early += pa.eos;
		pg_engine_cancel(a, sa, 0);
		pg_engine_cancel(b, sb, 0);
	}
	/* P(no EOS in 1000 tokens) = 0.99^1000 ~ 4e-5: nearly all end early. */
	ck_assert_int_ge(early, 195);
	req.ignore_eos = true;
	pg_engine_cancel(a, pg_engine_submit(a, 0, &req, NULL, &pa), 0);
	ck_assert_int_eq(pa.output_tokens, 1000);
	ck_assert(!pa.eos);
	pg_engine_free(a);
	pg_engine_free(b);
}
END_TEST

static void plans(uint64_t seed, struct pg_engine_plan *out, int n)
{
	struct pg_engine_params p;
	struct pg_engine *e;
	struct pg_engine_request req = { .prompt_tokens = 1, .max_tokens = 20, .ignore_eos = true };

	base_params(&p);
	p.seed = seed;
	p.fault_500 = 0.1;
	p.fault_disconnect = 0.2;
	p.fault_stall = 0.2;
	p.fault_malformed = 0.05;
	p.fault_stream_error = 0.05;
	e = pg_engine_new(&p);
	for (int i = 0; i < n; i++)
		pg_engine_cancel(e, pg_engine_submit(e, 0, &req, NULL, &out[i]), 0);
	pg_engine_free(e);
}

START_TEST(faults_are_reproducible_by_seed)
{
	enum { N = 10000 };
	static struct pg_engine_plan a[N], b[N], c[N];
	int count[6] = { 0 }, differ = 0;

	plans(7, a, N);
	plans(7, b, N);
	plans(8, c, N);
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(a[i].fault, b[i].fault);
		ck_assert_int_eq(a[i].fault_at_message, b[i].fault_at_message);
		ck_assert_int_lt(a[i].fault_at_message, a[i].messages);
		count[a[i].fault]++;
		differ += a[i].fault != c[i].fault;
	}
	/* Binomial, n = 10000: 5 sigma is at most 230. */
	ck_assert_int_lt(abs(count[PG_ENGINE_FAULT_HTTP_500] - 1000), 160);
	ck_assert_int_lt(abs(count[PG_ENGINE_FAULT_DISCONNECT] - 2000), 200);
	ck_assert_int_lt(abs(count[PG_ENGINE_FAULT_STALL] - 2000), 200);
	ck_assert_int_lt(abs(count[PG_ENGINE_FAULT_MALFORMED] - 500), 110);
	ck_assert_int_lt(abs(count[PG_ENGINE_FAULT_STREAM_ERROR] - 500), 110);
	ck_assert_int_lt(abs(count[PG_ENGINE_FAULT_NONE] - 4000), 250);
	ck_assert_int_gt(differ, 3000);
}
END_TEST

START_TEST(fault_events_follow_the_plan)
{
	struct pg_engine_params p;
	struct pg_engine *e;
	struct pg_engine_plan plan;
	struct pg_engine_request req = { .prompt_tokens = 1, .max_tokens = 8, .ignore_eos = true };
	struct pg_engine_seq *s;
	struct seen ev[16];
	size_t n;

	/* HTTP 500: nothing is scheduled. */
	base_params(&p);
	p.fault_500 = 1;
	e = pg_engine_new(&p);
	ck_assert_ptr_null(pg_engine_submit(e, 0, &req, NULL, &plan));
	ck_assert_int_eq(plan.fault, PG_ENGINE_FAULT_HTTP_500);
	ck_assert_int_eq(pg_engine_next_deadline(e), INT64_MAX);
	pg_engine_free(e);

	/* Disconnect: fault_at_message messages, then a DISCONNECT at the
	 * deadline the next one would have had. */
	base_params(&p);
	p.fault_disconnect = 1;
	for (uint64_t seed = 0; seed < 20; seed++) {
		p.seed = seed;
		e = pg_engine_new(&p);
		pg_engine_submit(e, 0, &req, NULL, &plan);
		n = run(e, INT64_MAX, ev, 16);
		ck_assert_uint_eq(n, (size_t)plan.fault_at_message + 1);
		ck_assert_int_eq(ev[n - 1].kind, PG_ENGINE_DISCONNECT);
		ck_assert(ev[n - 1].last);
		ck_assert_int_eq(ev[n - 1].deadline, 50 * MS + plan.fault_at_message * 10 * MS);
		pg_engine_free(e);
	}

	/* Stall for 1 s before the planned message. */
	base_params(&p);
	p.fault_stall = 1;
	p.stall_ns = 1000 * MS;
	p.seed = 3;
	e = pg_engine_new(&p);
	pg_engine_submit(e, 0, &req, NULL, &plan);
	n = run(e, INT64_MAX, ev, 16);
	ck_assert_uint_eq(n, 8);
	for (size_t k = 0; k < n; k++)
		ck_assert_int_eq(ev[k].deadline,
				 50 * MS + (int64_t)k * 10 * MS +
					 ((int64_t)k >= plan.fault_at_message ? 1000 * MS : 0));
	pg_engine_free(e);

	/* Stall for ever: the sequence holds its slot until cancelled, and the
	 * cancel admits the next one in the queue at that moment. */
	p.stall_ns = 0;
	p.max_running = 1;
	e = pg_engine_new(&p);
	s = pg_engine_submit(e, 0, &req, (void *)1, &plan);
	p.fault_stall = 0;
	n = run(e, INT64_MAX, ev, 16);
	ck_assert_uint_eq(n, (size_t)plan.fault_at_message);
	ck_assert_int_eq(pg_engine_next_deadline(e), INT64_MAX);
	pg_engine_free(e);

	base_params(&p);
	p.max_running = 1;
	e = pg_engine_new(&p);
	s = pg_engine_submit(e, 0, &req, (void *)1, &plan);
	pg_engine_submit(e, 0, &req, (void *)2, &plan);
	pg_engine_cancel(e, s, 5 * MS);
	n = run(e, INT64_MAX, ev, 16);
	ck_assert_uint_eq(n, 8);
	ck_assert_uint_eq(ev[0].who, 2);
	ck_assert_int_eq(ev[0].deadline, 55 * MS);
	pg_engine_free(e);
}
END_TEST

START_TEST(cancelling_a_queued_sequence_keeps_the_order)
{
	struct pg_engine_params p;
	struct pg_engine *e;
	struct pg_engine_plan plan;
	struct pg_engine_request req = { .prompt_tokens = 1, .max_tokens = 1, .ignore_eos = true };
	struct pg_engine_seq *seqs[4];
	struct seen ev[8];
	size_t n;

	base_params(&p);
	p.max_running = 1;
	e = pg_engine_new(&p);
	for (int i = 0; i < 4; i++)
		seqs[i] = pg_engine_submit(e, 0, &req, (void *)(uintptr_t)i, &plan);
	pg_engine_cancel(e, seqs[2], 0);
	n = run(e, INT64_MAX, ev, 8);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(ev[0].who, 0);
	ck_assert_uint_eq(ev[1].who, 1);
	ck_assert_uint_eq(ev[2].who, 3);
	ck_assert_int_eq(ev[2].deadline, 150 * MS);
	pg_engine_free(e);
}
END_TEST

START_TEST(cancels_and_reuse_never_leak_stale_events)
{
	enum { N = 2000 };
	struct pg_engine_params p;
	struct pg_engine *e;
	struct pg_engine_plan plan;
	static struct pg_engine_seq *seqs[N];
	static int got[N];
	static bool cancelled[N], finished[N];
	struct pg_engine_event ev;
	int64_t now = 0, last_deadline = 0;
	uint64_t r = 1;

	base_params(&p);
	p.max_running = 50;
	p.itl_growth = 0.01;
	e = pg_engine_new(&p);
	for (int i = 0; i < N; i++) {
		struct pg_engine_request req = { .prompt_tokens = 1 + i % 7,
						 .max_tokens = 1 + i % 13,
						 .ignore_eos = true };
		seqs[i] = pg_engine_submit(e, now, &req, (void *)(uintptr_t)i, &plan);
		got[i] = 0;
		/* every few submissions: run the clock a little, cancel one */
		now += 3 * MS;
		while (pg_engine_poll(e, now, &ev)) {
			uintptr_t k = (uintptr_t)ev.user;
			ck_assert(!cancelled[k] && !finished[k]);
			ck_assert_int_ge(ev.deadline_ns, last_deadline);
			last_deadline = ev.deadline_ns;
			ck_assert_int_eq(ev.message_index, got[k]);
			got[k]++;
			if (ev.last)
				finished[k] = true;
		}
		r = r * 6364136223846793005ULL + 1442695040888963407ULL;
		int victim = (int)((r >> 33) % (uint64_t)(i + 1));
		if (!cancelled[victim] && !finished[victim]) {
			pg_engine_cancel(e, seqs[victim], now);
			cancelled[victim] = true;
		}
	}
	while (pg_engine_next_deadline(e) != INT64_MAX) {
		now = pg_engine_next_deadline(e);
		while (pg_engine_poll(e, now, &ev)) {
			uintptr_t k = (uintptr_t)ev.user;
			ck_assert(!cancelled[k] && !finished[k]);
			ck_assert_int_eq(ev.message_index, got[k]);
			got[k]++;
			if (ev.last)
				finished[k] = true;
		}
	}
	for (int i = 0; i < N; i++)
		ck_assert(cancelled[i] != finished[i]);
	pg_engine_free(e);
}
END_TEST

START_TEST(token_ids_are_seeded_and_in_vocabulary)
{
	struct pg_engine_params p;

	base_params(&p);
	p.vocab_size = 100;
	for (int64_t i = 0; i < 1000; i++) {
		ck_assert_uint_lt(pg_engine_token_id(&p, 1, i), 100);
		ck_assert_uint_eq(pg_engine_token_id(&p, 1, i), pg_engine_token_id(&p, 1, i));
	}
	ck_assert_uint_ne(pg_engine_token_id(&p, 1, 0) * 1000 + pg_engine_token_id(&p, 1, 1),
			  pg_engine_token_id(&p, 2, 0) * 1000 + pg_engine_token_id(&p, 2, 1));
}
END_TEST

static void collect(uint32_t id, void *ctx)
{
	struct pg_buf *b = ctx;
	pg_buf_add(b, &id, sizeof(id));
}

START_TEST(vocabulary_round_trips)
{
	char w[PG_VOCAB_WORD_LEN];
	struct pg_buf text = PG_BUF_INIT, ids = PG_BUF_INIT;
	uint32_t in[] = { 0, 1, 63, 64, 4095, 4096, 31999 };

	pg_vocab_word(0, w);
	ck_assert(!memcmp(w, "bababa", 6));
	pg_vocab_word(PG_VOCAB_MAX - 1, w);
	ck_assert(!memcmp(w, "zozozo", 6));
	for (uint32_t id = 0; id < PG_VOCAB_MAX; id += 97) {
		pg_vocab_word(id, w);
		ck_assert_uint_eq(pg_vocab_word_id(w, 6, PG_VOCAB_MAX), id);
	}
	pg_vocab_detokenize(&text, in, 7);
	ck_assert_uint_eq(pg_vocab_tokenize(text.ptr, text.len, 32000, collect, &ids), 7);
	ck_assert_mem_eq(ids.ptr, in, sizeof(in));

	/* Any word is one token; white space of any kind separates. */
	ck_assert_uint_eq(pg_vocab_tokenize("  Hello,\tworld!\n\nfoo ", 21, 32000, NULL, NULL), 3);
	ck_assert_uint_eq(pg_vocab_tokenize("", 0, 32000, NULL, NULL), 0);
	ck_assert_uint_lt(pg_vocab_word_id("Hello,", 6, 50), 50);
	ck_assert_uint_eq(pg_vocab_word_id("Hello,", 6, 32000),
			  pg_vocab_word_id("Hello,", 6, 32000));
	/* A vocabulary word beyond the vocabulary size is hashed, not trusted. */
	pg_vocab_word(40000, w);
	ck_assert_uint_lt(pg_vocab_word_id(w, 6, 32000), 32000);
	pg_buf_release(&text);
	pg_buf_release(&ids);
}
END_TEST

static Suite *engine_suite(void)
{
	Suite *s = suite_create("engine_model");
	TCase *tc = tcase_create("model");

	tcase_add_test(tc, fixed_timing_is_exact_at_any_load);
	tcase_add_test(tc, ttft_is_base_plus_prefill_per_token);
	tcase_add_test(tc, itl_grows_with_running_sequences);
	tcase_add_test(tc, queue_admits_in_fifo_order_when_slots_free);
	tcase_add_test(tc, tokens_per_message_groups_after_the_first);
	tcase_add_test(tc, eos_ends_early_unless_ignored_and_is_seeded);
	tcase_add_test(tc, faults_are_reproducible_by_seed);
	tcase_add_test(tc, fault_events_follow_the_plan);
	tcase_add_test(tc, cancelling_a_queued_sequence_keeps_the_order);
	tcase_add_test(tc, cancels_and_reuse_never_leak_stale_events);
	tcase_add_test(tc, token_ids_are_seeded_and_in_vocabulary);
	tcase_add_test(tc, vocabulary_round_trips);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(engine_suite());
}
