#ifndef PERFGATE_MOCKSERVER_ENGINE_MODEL_H
#define PERFGATE_MOCKSERVER_ENGINE_MODEL_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The simulated inference engine behind `perfgate mock-server`: decides when
 * each sequence's SSE messages are due, with no clock of its own. Callers
 * pass "now" in nanoseconds (the server passes CLOCK_MONOTONIC, the unit
 * tests a virtual clock) and the model answers with absolute deadlines, so
 * the same inputs always give the same timeline.
 *
 * Timing (all times in ns):
 *
 *   fixed timing (params.fixed_timing):
 *     first token at  received + ttft
 *     token i+1 at    token i + itl
 *     no concurrency limit; load never changes anything.
 *
 *   engine model:
 *     admitted      = received, or when a running slot frees (FIFO queue of
 *                     at most max_running running sequences; 0 = no limit)
 *     first token   = admitted + ttft + prefill_per_token * prompt_tokens
 *     next message  = previous message + n_tokens * itl_now, where
 *     itl_now       = itl * (1 + itl_growth * (running - 1)), running being
 *                     the sequences admitted and not finished when the
 *                     message is scheduled (this one included).
 *
 * Messages: the first carries one token (prefill yields one, as vLLM's
 * --stream-interval sends the first token at once); the later ones carry
 * tokens_per_message tokens each (the last one what remains), and a message
 * is due when its last token is.
 *
 * KV cache (engine model only): each running sequence holds its prompt and
 * the tokens it has generated. A queued sequence is admitted only when it
 * fits in kv_cache_tokens (or nothing runs); when the running sequences'
 * growth overflows it, the most recently admitted one is preempted, as
 * vLLM does: it leaves the batch, frees its blocks and goes back to the
 * head of the queue; re-admitted, it first recomputes its prompt and the
 * tokens it had (prefill_ns_per_token each) and carries on from the
 * message it was at. The default capacity, max_running x 8192 tokens, never
 * binds with the default max_model_len (8192).
 *
 * Prefix cache: a request's cached_tokens (the server's prefix cache,
 * mockserver/prefix_cache.h), or else prefix_hit of each prompt (rounded
 * down to 16-token blocks, never the whole prompt), is found cached at
 * first admission and costs no prefill.
 *
 * The model counts what vLLM's /metrics shows (pg_engine_counts): KV
 * usage, preemptions, prefix-cache queries and hits, prompt and generation
 * tokens, finished requests.
 *
 * Output length: max_tokens, unless the request does not ignore EOS, in
 * which case each token is EOS with probability eos_prob and the sequence
 * ends at the first one (the EOS token counts as a completion token and has
 * empty text, as in vLLM).
 *
 * Faults, drawn per request from the seed and the request's serial number
 * (1, 2, 3... in submission order), so a run is reproducible: HTTP 500 with
 * probability fault_500 (decided at submission; the sequence never runs),
 * a mid-stream disconnect with probability fault_disconnect (after a
 * uniformly chosen number of messages, 0 .. messages-1), or a stall with
 * probability fault_stall (before a uniformly chosen message, 0 ..
 * messages-1, for stall_ns, or for ever when stall_ns is 0; a stall before
 * message 0 delays the first token), a malformed message (fault_malformed:
 * the server sends broken JSON in place of that message's chunk) or an
 * error event (fault_stream_error: vLLM's in-stream error, then the end).
 * The model only plans the last two; the server renders them.
 *
 * Noise, as shared GPU machines have it (so the gate can be shown at work,
 * reproducibly): every duration above (ttft, prefill, itl) is multiplied by
 * the session's scale, drawn once per engine from the seed --
 * (1 + slowdown) x exp(session_sd x z), times (1 + slow_session) with
 * probability slow_session_prob (a slow node) -- and by each request's own
 * exp(jitter x z), drawn from the seed and its serial number. The first
 * cold_requests requests are (1 + cold_slowdown) x slower on top: a cold
 * start that a warm-up absorbs.
 *
 * No allocation per token or message: sequence records are pooled.
 */

struct pg_engine_params {
	bool fixed_timing;
	int64_t ttft_ns;              /* fixed: exact TTFT; model: base TTFT */
	int64_t prefill_ns_per_token; /* model only */
	int64_t itl_ns;               /* fixed: exact ITL; model: ITL of a lone sequence */
	double itl_growth;            /* model only: per other running sequence */
	uint32_t max_running;         /* model only; 0: no limit */
	uint32_t tokens_per_message;  /* >= 1 */
	double eos_prob;              /* per token, unless ignore_eos */
	double fault_500;
	double fault_disconnect;
	double fault_stall;
	double fault_malformed;
	double fault_stream_error;
	int64_t stall_ns;         /* 0: stall until cancelled */
	int64_t kv_cache_tokens;  /* model only: KV-cache capacity; 0: max_running x 8192
				  * (unlimited with max_running 0); < 0: unlimited */
	double prefix_hit;        /* share of each prompt found in the prefix cache */
	double slowdown;          /* every duration (1 + slowdown) x longer */
	double session_sd;        /* log-normal sd of the session's offset */
	double slow_session_prob; /* probability the session is a slow node */
	double slow_session;      /* ... that much slower */
	double jitter;            /* log-normal sd of each request's own scale */
	/* a cold start: the first cold_requests requests after the engine
	 * started (serials 1..N) have every duration (1 + cold_slowdown) x
	 * longer, as kernels compiled or tuned on first use make them */
	uint64_t cold_requests;
	double cold_slowdown;
	uint64_t seed;
	/* the session's draws (offset, slow node) come from this seed instead
	 * when set: one server per session, each its own offset, the tokens
	 * and faults the same (an A/B run's blocks: --session-seed {block}) */
	uint64_t session_seed;
	bool session_seed_set;
	uint32_t vocab_size; /* token ids are 0 .. vocab_size-1 */
};

/* Defaults documented in docs/mock-server.md and --help. */
void pg_engine_params_default(struct pg_engine_params *p);

enum pg_engine_fault {
	PG_ENGINE_FAULT_NONE = 0,
	PG_ENGINE_FAULT_HTTP_500,
	PG_ENGINE_FAULT_DISCONNECT,
	PG_ENGINE_FAULT_STALL,
	PG_ENGINE_FAULT_MALFORMED,
	PG_ENGINE_FAULT_STREAM_ERROR,
};

const char *pg_engine_fault_name(enum pg_engine_fault f); /* "none", "http_500"... */

struct pg_engine_request {
	int64_t prompt_tokens;
	int64_t max_tokens; /* >= 1 */
	bool ignore_eos;
	bool has_cached;       /* the server's prefix cache answered: */
	int64_t cached_tokens; /* ... found this many (else the prefix_hit share) */
};

/* What the model decided for one request at submission. */
struct pg_engine_plan {
	uint64_t serial; /* 1-based submission number */
	enum pg_engine_fault fault;
	int64_t output_tokens;    /* tokens the sequence will produce */
	bool eos;                 /* ends on EOS ("stop"), else "length" */
	int64_t messages;         /* messages the sequence will send */
	int64_t fault_at_message; /* all but http_500: index of the message it hits */
};

enum pg_engine_event_kind {
	PG_ENGINE_MESSAGE,    /* send tokens [first_token, first_token + n_tokens) */
	PG_ENGINE_DISCONNECT, /* fault: drop the connection now */
};

struct pg_engine_event {
	enum pg_engine_event_kind kind;
	void *user; /* as given to pg_engine_submit */
	uint64_t serial;
	int64_t deadline_ns;   /* when the model wanted it sent */
	int64_t message_index; /* 0-based */
	int64_t first_token;
	int64_t n_tokens;
	bool last; /* the sequence is over: its handle is gone */
};

struct pg_engine;
struct pg_engine_seq;

/* Never NULL. Params are copied. */
struct pg_engine *pg_engine_new(const struct pg_engine_params *params);

/* The session's scale of every duration (1 without noise options), and
 * whether it drew a slow node. */
double pg_engine_session_scale(const struct pg_engine *e, bool *slow);
void pg_engine_free(struct pg_engine *e);

/*
 * Submit a request received at now_ns. Fills plan (always). Returns the
 * sequence handle, or NULL when the plan is an HTTP 500 fault (nothing is
 * scheduled). The handle stays valid until its `last` event has been
 * returned by pg_engine_poll or pg_engine_cancel is called on it.
 */
struct pg_engine_seq *pg_engine_submit(struct pg_engine *e, int64_t now_ns,
				       const struct pg_engine_request *req, void *user,
				       struct pg_engine_plan *plan);

/* Drop a sequence (the client went away); frees its slot at now_ns. */
void pg_engine_cancel(struct pg_engine *e, struct pg_engine_seq *seq, int64_t now_ns);

/* The earliest pending deadline, INT64_MAX when nothing is scheduled. */
int64_t pg_engine_next_deadline(const struct pg_engine *e);

/*
 * Take the earliest event due at or before now_ns. Returns true and fills
 * ev, false when nothing is due. Events with equal deadlines come in
 * submission order. Queued sequences are admitted at the deadline of the
 * event that freed their slot, never at the (later) time it was polled,
 * so the timeline does not depend on how late the caller polls.
 */
bool pg_engine_poll(struct pg_engine *e, int64_t now_ns, struct pg_engine_event *ev);

/* When the sequence left the queue (INT64_MIN while still queued). */
int64_t pg_engine_seq_admitted_ns(const struct pg_engine_seq *seq);

struct pg_engine_counts {
	uint32_t running;
	uint32_t queued;
	uint32_t peak_running;
	uint32_t peak_queued;
	int64_t kv_tokens;    /* held by running sequences now */
	int64_t kv_capacity;  /* 0: unlimited */
	uint64_t preemptions; /* cumulative, as are the rest */
	uint64_t prefix_queries;
	uint64_t prefix_hits;
	uint64_t prompt_tokens;
	uint64_t generation_tokens;
	uint64_t finished; /* sequences that sent their last message */
};
void pg_engine_counts(const struct pg_engine *e, struct pg_engine_counts *out);

/*
 * The id of output token `index` of request `serial`: a hash of (seed,
 * serial, index), so the text can be rebuilt at any time without storing
 * it. Ids are < vocab_size.
 */
uint32_t pg_engine_token_id(const struct pg_engine_params *p, uint64_t serial, int64_t index);

/* splitmix64: the model's hash and random source, exposed for the vocabulary. */
uint64_t pg_engine_mix64(uint64_t x);

#endif
