#include "mockserver/engine_model.h"

#include "base/alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct pg_engine_seq {
	void *user;
	uint64_t serial;
	int64_t prompt_tokens;
	int64_t cached_tokens; /* < 0: the prefix_hit share decides */
	int64_t admitted_ns;
	int64_t deadline_ns; /* of message next_message */
	int64_t next_message;
	int64_t output_tokens;
	int64_t messages;
	enum pg_engine_fault fault;
	int64_t fault_at;
	double scale;   /* the session's scale times this request's jitter */
	uint64_t sched; /* bumped whenever its heap entry goes stale */
	bool scheduled; /* has a live heap entry */
	bool running;
	bool queued;
	bool started;               /* admitted once: its prompt was counted */
	int64_t emitted;            /* tokens sent so far */
	int64_t kv;                 /* KV-cache tokens held while running */
	struct pg_engine_seq *prev; /* queue links; next doubles as free list link */
	struct pg_engine_seq *next;
	struct pg_engine_seq *rprev, *rnext; /* running list, in admission order */
};

/*
 * The deadline heap: 4-ary, min on (deadline, serial), with the keys stored
 * in the entries so sifting never touches the sequences (with 10,000
 * streams the sequences are cache misses; the heap array is not). Entries
 * are removed lazily: a cancelled or stalled sequence bumps `sched`, and an
 * entry whose sched differs is dropped when it reaches the top.
 */
struct heap_entry {
	int64_t deadline_ns;
	uint64_t serial;
	struct pg_engine_seq *seq;
	uint64_t sched;
};

struct pg_engine {
	struct pg_engine_params p;
	uint64_t serial;
	struct heap_entry *heap;
	size_t heap_len, heap_cap;
	struct pg_engine_seq *queue_head, *queue_tail;
	struct pg_engine_seq *run_head, *run_tail;
	struct pg_engine_seq *free_list;
	/* every record ever allocated (live, stalled or free), for pg_engine_free */
	struct pg_engine_seq **allocated;
	size_t n_allocated, cap_allocated;
	struct pg_engine_counts counts;
	double scale; /* the session's: every duration is this much longer */
	bool slow;    /* the session drew a slow node */
};

void pg_engine_params_default(struct pg_engine_params *p)
{
	memset(p, 0, sizeof(*p));
	p->slow_session = 0.05;
	p->ttft_ns = 20 * 1000 * 1000;
	p->prefill_ns_per_token = 20 * 1000;
	p->itl_ns = 10 * 1000 * 1000;
	p->itl_growth = 0.01;
	p->max_running = 256;
	p->tokens_per_message = 1;
	p->eos_prob = 0.0;
	p->seed = 0;
	p->vocab_size = 32000;
	p->kv_cache_tokens = 0; /* max_running x 8192 */
	p->prefix_hit = 0;
	p->cold_slowdown = 1; /* with --cold-requests: twice as slow */
}

const char *pg_engine_fault_name(enum pg_engine_fault f)
{
	switch (f) {
	case PG_ENGINE_FAULT_NONE:
		return "none";
	case PG_ENGINE_FAULT_HTTP_500:
		return "http_500";
	case PG_ENGINE_FAULT_DISCONNECT:
		return "disconnect";
	case PG_ENGINE_FAULT_STALL:
		return "stall";
	case PG_ENGINE_FAULT_MALFORMED:
		return "malformed";
	case PG_ENGINE_FAULT_STREAM_ERROR:
		return "stream_error";
	}
	return "unknown";
}

uint64_t pg_engine_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Independent streams per purpose, so adding a draw to one never shifts
 * another (a seed keeps meaning the same faults across versions). */
enum {
	STREAM_FAULT = 1,
	STREAM_FAULT_AT = 2,
	STREAM_EOS = 3,
	STREAM_TOKEN = 4,
	STREAM_SESSION = 5,
	STREAM_JITTER = 6,
};

static uint64_t draw(const struct pg_engine_params *p, uint64_t serial, int stream, uint64_t i)
{
	uint64_t h = pg_engine_mix64(p->seed ^ pg_engine_mix64(serial));
	h = pg_engine_mix64(h ^ ((uint64_t)stream << 56));
	return pg_engine_mix64(h ^ i);
}

static double unit(uint64_t r)
{
	return (double)(r >> 11) * 0x1.0p-53;
}

/* A standard normal from two draws (Box-Muller). */
static double normal(const struct pg_engine_params *p, uint64_t serial, int stream)
{
	double u1 = unit(draw(p, serial, stream, 0)), u2 = unit(draw(p, serial, stream, 1));
	if (u1 <= 0)
		u1 = 0x1.0p-53;
	return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

uint32_t pg_engine_token_id(const struct pg_engine_params *p, uint64_t serial, int64_t index)
{
	return (uint32_t)(draw(p, serial, STREAM_TOKEN, (uint64_t)index) % p->vocab_size);
}

struct pg_engine *pg_engine_new(const struct pg_engine_params *params)
{
	struct pg_engine *e = pg_xcalloc(1, sizeof(*e));

	e->p = *params;
	if (e->p.tokens_per_message < 1)
		e->p.tokens_per_message = 1;
	if (e->p.vocab_size < 1)
		e->p.vocab_size = 1;
	/* serial 0 is no request's: the session's own draws */
	{
		struct pg_engine_params sp = e->p;
		if (sp.session_seed_set)
			sp.seed = sp.session_seed;
		e->scale = (1 + e->p.slowdown) *
			   exp(e->p.session_sd * normal(&sp, 0, STREAM_SESSION));
		e->slow = e->p.slow_session_prob > 0 &&
			  unit(draw(&sp, 0, STREAM_SESSION, 2)) < e->p.slow_session_prob;
	}
	if (e->slow)
		e->scale *= 1 + e->p.slow_session;
	if (e->p.kv_cache_tokens == 0)
		e->p.kv_cache_tokens = (int64_t)e->p.max_running * 8192;
	if (e->p.fixed_timing || e->p.kv_cache_tokens < 0)
		e->p.kv_cache_tokens = 0;
	e->counts.kv_capacity = e->p.kv_cache_tokens;
	return e;
}

double pg_engine_session_scale(const struct pg_engine *e, bool *slow)
{
	if (slow)
		*slow = e->slow;
	return e->scale;
}

/* A duration of sequence s: the model's, times its scale. */
static int64_t scaled(const struct pg_engine_seq *s, int64_t ns)
{
	return s->scale == 1 ? ns : (int64_t)llround((double)ns * s->scale);
}

void pg_engine_free(struct pg_engine *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->n_allocated; i++)
		free(e->allocated[i]);
	free(e->allocated);
	free(e->heap);
	free(e);
}

/* ---- the deadline heap ---- */

static bool before(const struct heap_entry *a, const struct heap_entry *b)
{
	if (a->deadline_ns != b->deadline_ns)
		return a->deadline_ns < b->deadline_ns;
	return a->serial < b->serial;
}

static void heap_up(struct pg_engine *e, size_t i)
{
	struct heap_entry x = e->heap[i];

	while (i > 0) {
		size_t parent = (i - 1) / 4;
		if (!before(&x, &e->heap[parent]))
			break;
		e->heap[i] = e->heap[parent];
		i = parent;
	}
	e->heap[i] = x;
}

static void heap_down(struct pg_engine *e, size_t i)
{
	struct heap_entry x = e->heap[i];

	for (;;) {
		size_t first = 4 * i + 1, best, end;
		if (first >= e->heap_len)
			break;
		end = first + 4 < e->heap_len ? first + 4 : e->heap_len;
		best = first;
		for (size_t c = first + 1; c < end; c++)
			if (before(&e->heap[c], &e->heap[best]))
				best = c;
		if (!before(&e->heap[best], &x))
			break;
		e->heap[i] = e->heap[best];
		i = best;
	}
	e->heap[i] = x;
}

static void heap_push(struct pg_engine *e, struct pg_engine_seq *s)
{
	pg_grow((void **)&e->heap, &e->heap_cap, e->heap_len + 1, sizeof(*e->heap));
	s->scheduled = true;
	e->heap[e->heap_len++] = (struct heap_entry){ s->deadline_ns, s->serial, s, s->sched };
	heap_up(e, e->heap_len - 1);
}

static void heap_pop(struct pg_engine *e)
{
	e->heap[0] = e->heap[--e->heap_len];
	if (e->heap_len)
		heap_down(e, 0);
}

static bool entry_live(const struct heap_entry *h)
{
	return h->seq->scheduled && h->seq->sched == h->sched;
}

/* Keep the top live, so the next deadline is always a real one. */
static void drop_stale(struct pg_engine *e)
{
	while (e->heap_len && !entry_live(&e->heap[0]))
		heap_pop(e);
}

static void unschedule(struct pg_engine_seq *s)
{
	if (s->scheduled) {
		s->scheduled = false;
		s->sched++;
	}
}

/* ---- sequences ---- */

static int64_t tokens_in_message(const struct pg_engine *e, const struct pg_engine_seq *s,
				 int64_t m)
{
	int64_t first, n;

	if (m == 0)
		return 1;
	first = 1 + (m - 1) * (int64_t)e->p.tokens_per_message;
	n = s->output_tokens - first;
	return n < (int64_t)e->p.tokens_per_message ? n : (int64_t)e->p.tokens_per_message;
}

static int64_t first_token_of(const struct pg_engine *e, int64_t m)
{
	return m == 0 ? 0 : 1 + (m - 1) * (int64_t)e->p.tokens_per_message;
}

static int64_t itl_now(const struct pg_engine *e)
{
	double factor;

	if (e->p.fixed_timing || e->counts.running <= 1)
		return e->p.itl_ns;
	factor = 1.0 + e->p.itl_growth * (double)(e->counts.running - 1);
	return (int64_t)llround((double)e->p.itl_ns * factor);
}

/* Put message m of s on the heap at deadline, unless a stall holds it. */
static void schedule(struct pg_engine *e, struct pg_engine_seq *s, int64_t m, int64_t deadline)
{
	s->next_message = m;
	s->deadline_ns = deadline;
	if (s->fault == PG_ENGINE_FAULT_STALL && m == s->fault_at) {
		if (e->p.stall_ns == 0)
			return; /* for ever: only a cancel ends it */
		s->deadline_ns += e->p.stall_ns;
	}
	heap_push(e, s);
}

/* Move the heap's top sequence to its next message: its deadline only
 * grows, so one sift down replaces a pop and a push. */
static void reschedule_top(struct pg_engine *e, struct pg_engine_seq *s, int64_t m,
			   int64_t deadline)
{
	s->next_message = m;
	s->deadline_ns = deadline;
	if (s->fault == PG_ENGINE_FAULT_STALL && m == s->fault_at) {
		if (e->p.stall_ns == 0) {
			unschedule(s);
			heap_pop(e);
			return;
		}
		s->deadline_ns += e->p.stall_ns;
	}
	e->heap[0].deadline_ns = s->deadline_ns;
	heap_down(e, 0);
}

static void run_link(struct pg_engine *e, struct pg_engine_seq *s)
{
	s->rprev = e->run_tail;
	s->rnext = NULL;
	if (e->run_tail)
		e->run_tail->rnext = s;
	else
		e->run_head = s;
	e->run_tail = s;
}

static void run_unlink(struct pg_engine *e, struct pg_engine_seq *s)
{
	if (s->rprev)
		s->rprev->rnext = s->rnext;
	else
		e->run_head = s->rnext;
	if (s->rnext)
		s->rnext->rprev = s->rprev;
	else
		e->run_tail = s->rprev;
	s->rprev = s->rnext = NULL;
}

/* Prompt tokens the prefix cache holds: whole 16-token blocks, never the
 * last token (the engine always computes it). */
static int64_t prefix_hits(const struct pg_engine *e, int64_t prompt)
{
	int64_t hit;

	if (e->p.prefix_hit <= 0 || prompt < 2)
		return 0;
	hit = (int64_t)((double)prompt * (e->p.prefix_hit > 1 ? 1 : e->p.prefix_hit));
	hit -= hit % 16;
	return hit < prompt ? hit : prompt - 1 - (prompt - 1) % 16;
}

static void admit(struct pg_engine *e, struct pg_engine_seq *s, int64_t at_ns)
{
	int64_t first = at_ns + scaled(s, e->p.ttft_ns);
	int64_t compute = s->prompt_tokens;

	if (!s->started) {
		int64_t hit = s->cached_tokens >= 0 ? s->cached_tokens
						    : prefix_hits(e, s->prompt_tokens);
		s->started = true;
		e->counts.prefix_queries += (uint64_t)s->prompt_tokens;
		e->counts.prefix_hits += (uint64_t)hit;
		e->counts.prompt_tokens += (uint64_t)s->prompt_tokens;
		compute -= hit;
		s->admitted_ns = at_ns;
	} else {
		/* back from a preemption: recompute what it had */
		compute += s->emitted;
	}
	if (!e->p.fixed_timing)
		first += scaled(s, e->p.prefill_ns_per_token * compute);
	s->running = true;
	s->kv = s->prompt_tokens + s->emitted;
	e->counts.kv_tokens += s->kv;
	run_link(e, s);
	e->counts.running++;
	if (e->counts.running > e->counts.peak_running)
		e->counts.peak_running = e->counts.running;
	schedule(e, s, s->next_message, first);
}

static bool has_free_slot(const struct pg_engine *e)
{
	return e->p.fixed_timing || e->p.max_running == 0 || e->counts.running < e->p.max_running;
}

/* Whether s fits in the KV cache now (always when nothing runs: a
 * sequence larger than the cache still runs alone). */
static bool fits(const struct pg_engine *e, const struct pg_engine_seq *s)
{
	return !e->counts.kv_capacity || !e->counts.running ||
	       e->counts.kv_tokens + s->prompt_tokens + s->emitted <= e->counts.kv_capacity;
}

static void queue_unlink(struct pg_engine *e, struct pg_engine_seq *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		e->queue_head = s->next;
	if (s->next)
		s->next->prev = s->prev;
	else
		e->queue_tail = s->prev;
	s->prev = s->next = NULL;
	s->queued = false;
	e->counts.queued--;
}

static void queue_push(struct pg_engine *e, struct pg_engine_seq *s, bool front)
{
	if (front) {
		s->prev = NULL;
		s->next = e->queue_head;
		if (e->queue_head)
			e->queue_head->prev = s;
		else
			e->queue_tail = s;
		e->queue_head = s;
	} else {
		s->next = NULL;
		s->prev = e->queue_tail;
		if (e->queue_tail)
			e->queue_tail->next = s;
		else
			e->queue_head = s;
		e->queue_tail = s;
	}
	s->queued = true;
	e->counts.queued++;
	if (e->counts.queued > e->counts.peak_queued)
		e->counts.peak_queued = e->counts.queued;
}

static void leave_batch(struct pg_engine *e, struct pg_engine_seq *s)
{
	run_unlink(e, s);
	e->counts.kv_tokens -= s->kv;
	s->kv = 0;
	e->counts.running--;
	s->running = false;
}

/* The batch outgrew the KV cache: preempt the newest sequences (never the
 * last one running) until it fits. */
static void preempt_overflow(struct pg_engine *e)
{
	while (e->counts.kv_capacity && e->counts.kv_tokens > e->counts.kv_capacity &&
	       e->counts.running > 1) {
		struct pg_engine_seq *v = e->run_tail;
		unschedule(v);
		leave_batch(e, v);
		queue_push(e, v, true);
		e->counts.preemptions++;
	}
}

static void admit_waiting(struct pg_engine *e, int64_t at_ns)
{
	while (e->queue_head && has_free_slot(e) && fits(e, e->queue_head)) {
		struct pg_engine_seq *s = e->queue_head;
		queue_unlink(e, s);
		admit(e, s, at_ns);
	}
}

static void release(struct pg_engine *e, struct pg_engine_seq *s, int64_t at_ns)
{
	unschedule(s);
	if (s->running)
		leave_batch(e, s);
	else if (s->queued)
		queue_unlink(e, s);
	s->next = e->free_list;
	e->free_list = s;
	admit_waiting(e, at_ns);
}

static void plan_request(const struct pg_engine *e, uint64_t serial,
			 const struct pg_engine_request *req, struct pg_engine_plan *plan)
{
	const struct pg_engine_params *p = &e->p;
	double u = unit(draw(p, serial, STREAM_FAULT, 0));
	int64_t max_tokens = req->max_tokens < 1 ? 1 : req->max_tokens;

	memset(plan, 0, sizeof(*plan));
	plan->serial = serial;
	plan->output_tokens = max_tokens;
	if (!req->ignore_eos && p->eos_prob > 0) {
		uint64_t threshold = p->eos_prob >= 1.0 ? UINT64_MAX
							: (uint64_t)(p->eos_prob * 0x1.0p64);
		for (int64_t i = 0; i < max_tokens; i++) {
			if (draw(p, serial, STREAM_EOS, (uint64_t)i) < threshold) {
				plan->output_tokens = i + 1;
				plan->eos = true;
				break;
			}
		}
	}
	plan->messages = 1 + (plan->output_tokens - 1 + p->tokens_per_message - 1) /
				     p->tokens_per_message;

	/* One draw against cumulative probabilities, in a fixed order (new
	 * kinds go last, so a seed keeps its meaning for the old ones). */
	{
		const double prob[] = { p->fault_500, p->fault_disconnect, p->fault_stall,
					p->fault_malformed, p->fault_stream_error };
		/* clang-format off */
		const enum pg_engine_fault kind[] = {
			PG_ENGINE_FAULT_HTTP_500, PG_ENGINE_FAULT_DISCONNECT, PG_ENGINE_FAULT_STALL,
			PG_ENGINE_FAULT_MALFORMED, PG_ENGINE_FAULT_STREAM_ERROR,
		};
		/* clang-format on */
		double edge = 0;
		for (size_t k = 0; k < sizeof(prob) / sizeof(prob[0]); k++) {
			edge += prob[k];
			if (u < edge) {
				plan->fault = kind[k];
				break;
			}
		}
	}
	if (plan->fault != PG_ENGINE_FAULT_NONE && plan->fault != PG_ENGINE_FAULT_HTTP_500)
		plan->fault_at_message = (int64_t)(draw(p, serial, STREAM_FAULT_AT, 0) %
						   (uint64_t)plan->messages);
}

struct pg_engine_seq *pg_engine_submit(struct pg_engine *e, int64_t now_ns,
				       const struct pg_engine_request *req, void *user,
				       struct pg_engine_plan *plan)
{
	struct pg_engine_seq *s;

	plan_request(e, ++e->serial, req, plan);
	if (plan->fault == PG_ENGINE_FAULT_HTTP_500)
		return NULL;

	uint64_t sched = 0;

	s = e->free_list;
	if (s) {
		e->free_list = s->next;
		sched = s->sched; /* stale entries may still name this record */
	} else {
		s = pg_xmalloc(sizeof(*s));
		PG_ARRAY_PUSH(e->allocated, e->n_allocated, e->cap_allocated, s);
	}
	memset(s, 0, sizeof(*s));
	s->sched = sched;
	s->user = user;
	s->serial = plan->serial;
	s->prompt_tokens = req->prompt_tokens;
	s->cached_tokens = req->has_cached ? req->cached_tokens : -1;
	s->output_tokens = plan->output_tokens;
	s->messages = plan->messages;
	s->fault = plan->fault;
	s->fault_at = plan->fault_at_message;
	s->admitted_ns = INT64_MIN;
	s->scale = e->scale;
	if (e->p.jitter > 0)
		s->scale *= exp(e->p.jitter * normal(&e->p, s->serial, STREAM_JITTER));
	if (s->serial <= e->p.cold_requests)
		s->scale *= 1 + e->p.cold_slowdown;

	if (has_free_slot(e) && !e->queue_head && fits(e, s))
		admit(e, s, now_ns);
	else
		queue_push(e, s, false);
	return s;
}

void pg_engine_cancel(struct pg_engine *e, struct pg_engine_seq *seq, int64_t now_ns)
{
	if (seq) {
		release(e, seq, now_ns);
		drop_stale(e);
	}
}

int64_t pg_engine_next_deadline(const struct pg_engine *e)
{
	return e->heap_len ? e->heap[0].deadline_ns : INT64_MAX;
}

bool pg_engine_poll(struct pg_engine *e, int64_t now_ns, struct pg_engine_event *ev)
{
	struct pg_engine_seq *s;
	int64_t m;

	if (!e->heap_len || e->heap[0].deadline_ns > now_ns)
		return false;
	s = e->heap[0].seq;
	m = s->next_message;

	memset(ev, 0, sizeof(*ev));
	ev->user = s->user;
	ev->serial = s->serial;
	ev->deadline_ns = s->deadline_ns;
	ev->message_index = m;
	ev->first_token = first_token_of(e, m);
	if (s->fault == PG_ENGINE_FAULT_DISCONNECT && m == s->fault_at) {
		ev->kind = PG_ENGINE_DISCONNECT;
		ev->last = true;
	} else {
		ev->kind = PG_ENGINE_MESSAGE;
		ev->n_tokens = tokens_in_message(e, s, m);
		ev->last = m + 1 >= s->messages;
	}
	if (ev->kind == PG_ENGINE_MESSAGE) {
		s->emitted += ev->n_tokens;
		s->kv += ev->n_tokens;
		e->counts.kv_tokens += ev->n_tokens;
		e->counts.generation_tokens += (uint64_t)ev->n_tokens;
	}
	if (ev->last) {
		if (ev->kind == PG_ENGINE_MESSAGE)
			e->counts.finished++;
		heap_pop(e);
		s->scheduled = false;
		release(e, s, ev->deadline_ns);
	} else {
		reschedule_top(e, s, m + 1,
			       ev->deadline_ns +
				       scaled(s, tokens_in_message(e, s, m + 1) * itl_now(e)));
		preempt_overflow(e);
	}
	drop_stale(e);
	return true;
}

int64_t pg_engine_seq_admitted_ns(const struct pg_engine_seq *seq)
{
	return seq->admitted_ns;
}

void pg_engine_counts(const struct pg_engine *e, struct pg_engine_counts *out)
{
	*out = e->counts;
}
