#include "loadgen/sessions.h"

#include "base/alloc.h"
#include "base/error.h"
#include "base/rng.h"
#include "base/stats.h"
#include "loadgen/dataset.h"
#include "loadgen/loadstats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pg_sessions_plan(struct pg_sessions_plan *out, const struct pg_sessions_spec *spec, double qps,
		     struct pg_error *err)
{
	bool rate = !isnan(qps) && !isinf(qps);
	bool think = !isnan(spec->think_time);

	memset(out, 0, sizeof(*out));
	if (spec->users < 1 || spec->rounds < 1)
		return pg_error_set(err, PG_ECONFIG, "multi_turn needs users and rounds >= 1");
	if (rate && think)
		return pg_error_set(
			err, PG_ECONFIG,
			"multi_turn: a think_time paces each user; the request rate "
			"(qps %g) would too: give one of them (qps: inf with think_time)",
			qps);
	if (think && !(spec->think_time >= 0))
		return pg_error_set(err, PG_ECONFIG, "multi_turn: think_time must be >= 0");
	if (!isnan(spec->join_interval) && !(spec->join_interval >= 0))
		return pg_error_set(err, PG_ECONFIG, "multi_turn: join_interval must be >= 0");
	if (rate && !(qps > 0))
		return pg_error_set(err, PG_ECONFIG, "multi_turn: qps must be > 0");
	out->users = (size_t)spec->users;
	out->rounds = (size_t)spec->rounds;
	out->period_s = rate ? (double)spec->users / qps : INFINITY;
	out->think_s = think ? spec->think_time : NAN;
	out->join_s = !isnan(spec->join_interval) ? spec->join_interval
		      : rate                      ? 1 / qps
		      : think                     ? spec->think_time / (double)spec->users
						  : 0;
	return 0;
}

/* ---- the ready heap: users by (due, user) ---- */

static bool before(const struct pg_sessions *s, size_t a, size_t b)
{
	double da = s->u[a].due_s, db = s->u[b].due_s;

	return da < db || (da == db && a < b);
}

static void heap_set(struct pg_sessions *s, size_t pos, size_t user)
{
	s->heap[pos] = user;
	s->u[user].heap_pos = pos;
}

static void sift_up(struct pg_sessions *s, size_t pos)
{
	size_t user = s->heap[pos];

	while (pos > 0) {
		size_t parent = (pos - 1) / 2;
		if (!before(s, user, s->heap[parent]))
			break;
		heap_set(s, pos, s->heap[parent]);
		pos = parent;
	}
	heap_set(s, pos, user);
}

static void sift_down(struct pg_sessions *s, size_t pos)
{
	size_t user = s->heap[pos];

	for (;;) {
		size_t c = 2 * pos + 1;
		if (c >= s->n_heap)
			break;
		if (c + 1 < s->n_heap && before(s, s->heap[c + 1], s->heap[c]))
			c++;
		if (!before(s, s->heap[c], user))
			break;
		heap_set(s, pos, s->heap[c]);
		pos = c;
	}
	heap_set(s, pos, user);
}

static void ready(struct pg_sessions *s, size_t user)
{
	s->heap[s->n_heap] = user;
	sift_up(s, s->n_heap++);
}

/* ---- sessions ---- */

void pg_sessions_init(struct pg_sessions *s, const struct pg_sessions_plan *plan,
		      const struct pg_sessions_spec *spec, long answer_len, uint64_t seed)
{
	size_t n = plan->users * plan->rounds;
	struct pg_buf b = PG_BUF_INIT;
	struct pg_rng rng;

	memset(s, 0, sizeof(*s));
	s->plan = *plan;
	s->seed = seed;
	s->question_len = spec->question_len;
	s->context_len = spec->user_context_len;
	s->answer_len = answer_len;
	pg_rng_seed(&rng, seed);
	pg_dataset_words(&b, spec->system_prompt_len > 0 ? (size_t)spec->system_prompt_len : 0,
			 &rng);
	s->system = pg_buf_detach(&b);
	s->u = pg_xcalloc(plan->users, sizeof(*s->u));
	s->heap = pg_xcalloc(plan->users, sizeof(*s->heap));
	s->req_user = pg_xcalloc(n ? n : 1, sizeof(*s->req_user));
	s->req_turn = pg_xcalloc(n ? n : 1, sizeof(*s->req_turn));
	s->req_nominal = pg_xcalloc(n ? n : 1, sizeof(*s->req_nominal));
	for (size_t u = 0; u < plan->users; u++) {
		s->u[u].answers = pg_xcalloc(plan->rounds, sizeof(char *));
		s->u[u].due_s = s->u[u].nominal_s = (double)u * plan->join_s;
		snprintf(s->u[u].header, sizeof(s->u[u].header), "x-user-id: %zu", u);
		ready(s, u);
	}
}

void pg_sessions_release(struct pg_sessions *s)
{
	for (size_t u = 0; s->u && u < s->plan.users; u++) {
		for (size_t k = 0; k < s->plan.rounds; k++)
			free(s->u[u].answers[k]);
		free(s->u[u].answers);
	}
	free(s->u);
	free(s->heap);
	free(s->req_user);
	free(s->req_turn);
	free(s->req_nominal);
	free(s->system);
	pg_dataset_questions_free(s->questions, s->plan.users * s->plan.rounds);
	memset(s, 0, sizeof(*s));
}

size_t pg_sessions_total(const struct pg_sessions *s)
{
	return s->plan.users * s->plan.rounds;
}

double pg_sessions_next_due(const struct pg_sessions *s)
{
	return s->n_heap ? s->u[s->heap[0]].due_s : INFINITY;
}

size_t pg_sessions_take(struct pg_sessions *s, size_t index, double *nominal_s)
{
	size_t user = s->heap[0];

	s->n_heap--;
	if (s->n_heap) {
		heap_set(s, 0, s->heap[s->n_heap]);
		sift_down(s, 0);
	}
	s->u[user].heap_pos = SIZE_MAX;
	s->u[user].busy = true;
	s->req_user[index] = user;
	s->req_turn[index] = s->u[user].turn;
	s->req_nominal[index] = s->u[user].nominal_s;
	*nominal_s = s->u[user].nominal_s;
	s->taken++;
	return user;
}

void pg_sessions_done(struct pg_sessions *s, size_t index, double sent_s, double end_s,
		      const char *answer, size_t len)
{
	size_t user = s->req_user[index];
	struct pg_session_user *u = &s->u[user];
	char *a = pg_xmalloc(len + 1);

	memcpy(a, answer, len);
	a[len] = '\0';
	free(u->answers[u->turn]);
	u->answers[u->turn] = a;
	u->busy = false;
	if (++u->turn >= s->plan.rounds)
		return;
	if (!isinf(s->plan.period_s)) {
		u->nominal_s = sent_s + s->plan.period_s;
		if (end_s > u->nominal_s) {
			double late = end_s - u->nominal_s;
			s->backpressure++;
			s->backpressure_sum_s += late;
			if (late > s->backpressure_max_s)
				s->backpressure_max_s = late;
		}
		u->due_s = end_s > u->nominal_s ? end_s : u->nominal_s;
	} else {
		u->nominal_s = u->due_s = end_s + (isnan(s->plan.think_s) ? 0 : s->plan.think_s);
	}
	ready(s, user);
}

void pg_sessions_question(struct pg_buf *out, const struct pg_sessions *s, size_t u, size_t k)
{
	struct pg_rng rng;
	uint64_t x = s->seed ^ 0x5851f42d4c957f2du;
	long len = k == SIZE_MAX ? s->context_len : s->question_len;

	if (s->questions && k != SIZE_MAX) {
		pg_buf_puts(out, s->questions[u * s->plan.rounds + k]);
		return;
	}
	/* each question its own stream: the same text whatever the order */
	pg_rng_seed(&rng, pg_splitmix64(&x) ^ ((uint64_t)u << 20) ^ (uint64_t)k);
	pg_dataset_words(out, len > 0 ? (size_t)len : 0, &rng);
}

static json_t *message(const char *role, const char *text)
{
	return json_pack("{s:s, s:s}", "role", role, "content", text);
}

json_t *pg_sessions_history(const struct pg_sessions *s, size_t u, bool chat)
{
	const struct pg_session_user *su = &s->u[u];
	struct pg_buf q = PG_BUF_INIT, text = PG_BUF_INIT;
	json_t *out;

	pg_buf_puts(&text, s->system);
	if (s->context_len > 0) {
		if (text.len)
			pg_buf_putc(&text, ' ');
		pg_sessions_question(&text, s, u, SIZE_MAX);
	}
	if (chat) {
		out = json_array();
		json_array_append_new(out, message("system", text.ptr ? text.ptr : ""));
		for (size_t k = 0; k <= su->turn && k < s->plan.rounds; k++) {
			pg_buf_reset(&q);
			pg_sessions_question(&q, s, u, k);
			json_array_append_new(out, message("user", q.ptr ? q.ptr : ""));
			if (k < su->turn)
				json_array_append_new(
					out,
					message("assistant", su->answers[k] ? su->answers[k] : ""));
		}
	} else {
		for (size_t k = 0; k <= su->turn && k < s->plan.rounds; k++) {
			pg_buf_puts(&text, "\n\nUser: ");
			pg_sessions_question(&text, s, u, k);
			pg_buf_puts(&text, "\n\nAssistant:");
			if (k < su->turn && su->answers[k])
				pg_buf_puts(&text, su->answers[k]);
		}
		out = json_string(text.ptr ? text.ptr : "");
	}
	pg_buf_release(&q);
	pg_buf_release(&text);
	return out;
}

/* ---- metrics ---- */

static json_t *real_or_null(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

/* Mean, median and p99 (numpy's, as vLLM's) of v; NaN for none. */
static void mean_median_p99(double *v, size_t n, double *mean, double *median, double *p99)
{
	if (!n) {
		*mean = *median = *p99 = NAN;
		return;
	}
	*mean = pg_stats_mean(v, n);
	pg_stats_sort(v, n);
	*median = pg_stats_median_sorted(v, n);
	*p99 = pg_stats_percentile_sorted(v, n, 99);
}

void pg_session_metrics(json_t *obj, const struct pg_reqtrace *t, const size_t *turn, size_t n,
			const struct pg_sessions *s)
{
	size_t rounds = s->plan.rounds;
	double *v = pg_xcalloc(n ? n : 1, sizeof(double));
	json_t *means = json_array(), *medians = json_array(), *p99s = json_array(),
	       *counts = json_array();
	double cached = 0, prompt = 0, mean, median, p99;
	size_t reported = 0, m;

	json_object_set_new(obj, "num_users", json_integer((json_int_t)s->plan.users));
	json_object_set_new(obj, "num_rounds", json_integer((json_int_t)rounds));
	for (size_t k = 0; k < rounds; k++) {
		m = 0;
		for (size_t i = 0; i < n; i++)
			if (turn[i] == k && pg_reqtrace_ok(&t[i]))
				v[m++] = pg_loadstats_ttft_s(&t[i]) * 1000;
		mean_median_p99(v, m, &mean, &median, &p99);
		json_array_append_new(means, real_or_null(mean));
		json_array_append_new(medians, real_or_null(median));
		json_array_append_new(p99s, real_or_null(p99));
		json_array_append_new(counts, json_integer((json_int_t)m));
	}
	json_object_set_new(obj, "completed_by_turn", counts);
	json_object_set_new(obj, "mean_ttft_ms_by_turn", means);
	json_object_set_new(obj, "median_ttft_ms_by_turn", medians);
	json_object_set_new(obj, "p99_ttft_ms_by_turn", p99s);
	for (int later = 0; later < 2; later++) {
		m = 0;
		for (size_t i = 0; i < n; i++)
			if ((turn[i] > 0) == later && pg_reqtrace_ok(&t[i]))
				v[m++] = pg_loadstats_ttft_s(&t[i]) * 1000;
		mean_median_p99(v, m, &mean, &median, &p99);
		json_object_set_new(obj,
				    later ? "mean_ttft_ms_later_turns" : "mean_ttft_ms_first_turn",
				    real_or_null(mean));
		json_object_set_new(
			obj, later ? "median_ttft_ms_later_turns" : "median_ttft_ms_first_turn",
			real_or_null(median));
		json_object_set_new(obj,
				    later ? "p99_ttft_ms_later_turns" : "p99_ttft_ms_first_turn",
				    real_or_null(p99));
	}
	for (size_t i = 0; i < n; i++) {
		if (t[i].usage_cached_tokens < 0 || t[i].usage_prompt_tokens < 0)
			continue;
		cached += (double)t[i].usage_cached_tokens;
		prompt += (double)t[i].usage_prompt_tokens;
		reported++;
	}
	json_object_set_new(obj, "total_cached_tokens",
			    reported ? json_integer((json_int_t)cached) : json_null());
	json_object_set_new(obj, "prefix_cache_hit_rate",
			    reported && prompt > 0 ? json_real(cached / prompt) : json_null());
	json_object_set_new(obj, "backpressure_turns", json_integer((json_int_t)s->backpressure));
	json_object_set_new(
		obj, "mean_backpressure_ms",
		json_real(s->backpressure ? s->backpressure_sum_s / (double)s->backpressure * 1000
					  : 0));
	json_object_set_new(obj, "max_backpressure_ms", json_real(s->backpressure_max_s * 1000));
	free(v);
}

void pg_session_server_keys(json_t *obj, double queries, double hits)
{
	bool known = isfinite(queries) && isfinite(hits);

	json_object_set_new(obj, "server_prefix_cache_queries",
			    known ? json_integer((json_int_t)llround(queries)) : json_null());
	json_object_set_new(obj, "server_prefix_cache_hits",
			    known ? json_integer((json_int_t)llround(hits)) : json_null());
	json_object_set_new(obj, "server_prefix_cache_hit_rate",
			    known && queries > 0 ? json_real(hits / queries) : json_null());
}
