#ifndef PERFGATE_LOADGEN_SESSIONS_H
#define PERFGATE_LOADGEN_SESSIONS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "loadgen/reqtrace.h"
#include "suite/suite.h"

struct pg_error;

/*
 * Multi-turn chat sessions (the `multi_turn` dataset, docs/sessions.md),
 * as production-stack's multi-round QA benchmark runs them: `users` users,
 * each asking `rounds` questions in turn; every turn is sent with the
 * whole conversation so far -- the shared system prompt, the user's
 * earlier questions and the answers as they were received -- so a server
 * with a prefix cache finds all but the newest question and answer
 * cached. Pure: times are seconds after the run's origin, passed in.
 *
 * When a turn is due (users join join_s apart; user u's first turn is due
 * at u x join_s):
 *   rate (period_s finite, from the point's qps: period = users / qps, so
 *     the users together ask qps questions a second): the next turn is due
 *     one period after the previous one was sent (production-stack's
 *     rule). A user never has two turns in flight: when the next turn is
 *     due before the previous answer has ended, it is sent when the answer
 *     ends, and that turn counts as backpressure (with how late it went);
 *   think time (think_s): the next turn is due think_s after the previous
 *     answer ended; nothing can be late;
 *   neither (qps inf, no think_time): at once when the answer ends.
 * A failed turn does not end the session: the next turn carries whatever
 * part of the answer was received.
 */
struct pg_sessions_plan {
	size_t users, rounds;
	double period_s; /* INFINITY: no rate */
	double think_s;  /* NAN: none */
	double join_s;
};

/*
 * The plan of a point: PG_ECONFIG for users or rounds < 1, a finite qps
 * with a think time, a negative think time or join interval. join_s
 * defaults to 1/qps with a rate, think_time/users with a think time,
 * else 0.
 */
int pg_sessions_plan(struct pg_sessions_plan *out, const struct pg_sessions_spec *spec, double qps,
		     struct pg_error *err);

struct pg_session_user {
	size_t turn;      /* the next turn to send (rounds: done) */
	bool busy;        /* a turn in flight */
	double due_s;     /* the next turn's due time: eligible */
	double nominal_s; /* ... by the schedule alone */
	char **answers;   /* answers[k]: turn k's answer as received */
	char header[40];  /* "x-user-id: <u>" */
	size_t heap_pos;  /* in the ready heap, SIZE_MAX: not ready */
};

struct pg_sessions {
	struct pg_sessions_plan plan;
	uint64_t seed;
	long question_len, answer_len;
	long context_len; /* words of each user's own context */
	/* questions from conversations (a ShareGPT file: users x rounds,
	 * user u's question k at [u * rounds + k], owned), or NULL: drawn */
	char **questions;
	char *system; /* the shared system prompt */
	struct pg_session_user *u;
	size_t *heap; /* ready users, earliest due first */
	size_t n_heap;
	size_t taken;     /* requests handed out */
	size_t *req_user; /* per request index */
	size_t *req_turn;
	double *req_nominal;
	/* backpressure: turns due before the user's previous answer ended */
	size_t backpressure;
	double backpressure_sum_s, backpressure_max_s;
};

/* Set up every user (seed: the system prompt's and questions' words). */
void pg_sessions_init(struct pg_sessions *s, const struct pg_sessions_plan *plan,
		      const struct pg_sessions_spec *spec, long answer_len, uint64_t seed);
void pg_sessions_release(struct pg_sessions *s);

/* Requests in all: users x rounds. */
size_t pg_sessions_total(const struct pg_sessions *s);

/* The earliest due time of a ready user; INFINITY when none is ready. */
double pg_sessions_next_due(const struct pg_sessions *s);

/*
 * Hand out the earliest ready user's next turn as request `index` (the
 * next in sending order): the user becomes busy. Returns the user;
 * *nominal_s gets the turn's time by the schedule alone.
 */
size_t pg_sessions_take(struct pg_sessions *s, size_t index, double *nominal_s);

/*
 * Request `index` ended at end_s (sent at sent_s) with the answer text
 * received (may be empty). The user's next turn becomes ready (see the
 * rules above), counted as backpressure when it was due before end_s.
 */
void pg_sessions_done(struct pg_sessions *s, size_t index, double sent_s, double end_s,
		      const char *answer, size_t len);

/* The text of user u's question k: the conversation's (questions), or
 * question_len words drawn from the seed.
 * Question SIZE_MAX is the user's own context (context_len words). */
void pg_sessions_question(struct pg_buf *out, const struct pg_sessions *s, size_t u, size_t k);

/*
 * The conversation of user u up to its next turn: for chat, the messages
 * [system, user q0, assistant a0, ..., user q_turn] (a new array), the
 * system message the shared system prompt then the user's own context;
 * else one prompt string, "<system> <context>\n\nUser: q0\n\nAssistant:
 * a0...\n\nUser: q_turn\n\nAssistant:".
 */
json_t *pg_sessions_history(const struct pg_sessions *s, size_t u, bool chat);

/*
 * The session keys of a point (docs/sessions.md): per turn index the
 * mean and median TTFT of the turns that succeeded (mean_ttft_ms_by_turn,
 * median_ttft_ms_by_turn; null for a turn without one), the same for the
 * first turn and the later ones together, completed_by_turn, the
 * client-side prefix-cache figures -- total_cached_tokens and
 * prefix_cache_hit_rate (cached over prompt tokens, summed over the
 * requests whose usage reported cached_tokens; null when none did) --
 * and the backpressure. turn[i] is request i's turn index.
 */
void pg_session_metrics(json_t *obj, const struct pg_reqtrace *t, const size_t *turn, size_t n,
			const struct pg_sessions *s);

/*
 * The server's prefix-cache counters over the point's window: the deltas
 * of vllm:prefix_cache_queries and _hits scraped right before and after
 * (NAN: not served) as server_prefix_cache_queries, _hits and _hit_rate
 * (null when unknown).
 */
void pg_session_server_keys(json_t *obj, double queries, double hits);

#endif
