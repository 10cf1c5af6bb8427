#include "suite/suite.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "results/tails.h"
#include "results/identity.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* clang-format off */
static const char *const kind_names[PG_SUITE_COUNT] = {
	[PG_SUITE_LATENCY] = "latency",
	[PG_SUITE_THROUGHPUT] = "throughput",
	[PG_SUITE_SERVING] = "serving",
	[PG_SUITE_STARTUP] = "startup",
};
/* clang-format on */

const char *pg_suite_kind_name(enum pg_suite_kind kind)
{
	return (unsigned)kind < PG_SUITE_COUNT ? kind_names[kind] : NULL;
}

int pg_suite_kind_parse(const char *name)
{
	for (int i = 0; i < PG_SUITE_COUNT; i++)
		if (name && !strcmp(name, kind_names[i]))
			return i;
	return -1;
}

void pg_kvlist_set(struct pg_kvlist *l, const char *key, const char *value)
{
	for (size_t i = 0; i < l->n; i++) {
		if (!strcmp(l->items[i].key, key)) {
			free(l->items[i].value);
			l->items[i].value = pg_xstrdup(value);
			return;
		}
	}
	pg_grow((void **)&l->items, &l->cap, l->n + 1, sizeof(*l->items));
	l->items[l->n].key = pg_xstrdup(key);
	l->items[l->n].value = pg_xstrdup(value);
	l->n++;
}

const char *pg_kvlist_get(const struct pg_kvlist *l, const char *key)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->items[i].key, key))
			return l->items[i].value;
	return NULL;
}

void pg_kvlist_release(struct pg_kvlist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->items[i].key);
		free(l->items[i].value);
	}
	free(l->items);
	memset(l, 0, sizeof(*l));
}

bool pg_role_is_front(const char *name)
{
	return !strcmp(name, "proxy") || !strcmp(name, "router");
}

void pg_deployment_shape(struct pg_buf *out, const struct pg_server_spec *s)
{
	bool first = true;

	for (size_t i = 0; i < s->n_roles; i++) {
		const struct pg_role_spec *r = &s->roles[i];
		if (r->front)
			continue;
		pg_buf_printf(out, "%s%s=%ldx%ld", first ? "" : ",", r->name, r->replicas, r->tp);
		first = false;
	}
}

long pg_deployment_gpus(const struct pg_server_spec *s)
{
	long n = 0;

	for (size_t i = 0; i < s->n_roles; i++)
		if (!s->roles[i].front)
			n += s->roles[i].replicas * s->roles[i].tp;
	return n;
}

void pg_role_spec_release(struct pg_role_spec *r)
{
	free(r->name);
	free(r->command);
	pg_kvlist_release(&r->env);
	free(r->ready_path);
	memset(r, 0, sizeof(*r));
}

void pg_test_init(struct pg_test *t, enum pg_suite_kind kind)
{
	memset(t, 0, sizeof(*t));
	t->kind = kind;
	t->tp = 1;

	t->server.ready_path = pg_xstrdup("/v1/models");
	t->server.ready_timeout = 1200;
	t->server.stop_timeout = 30;
	t->server.gpu_idle_timeout = 300;

	t->client.endpoint = pg_xstrdup("/v1/completions");
	t->client.temperature = NAN;
	t->client.ignore_eos = true;
	t->client.timeout = 600;
	t->client.percentiles = pg_xmalloc(sizeof(double));
	t->client.percentiles[0] = 99;
	t->client.n_percentiles = 1;
	pg_strv_push(&t->client.percentile_metrics, "ttft");
	pg_strv_push(&t->client.percentile_metrics, "tpot");
	pg_strv_push(&t->client.percentile_metrics, "itl");

	t->dataset.kind = PG_DATASET_RANDOM;
	t->dataset.input_len = kind == PG_SUITE_LATENCY ? 32 : 1024;
	t->dataset.output_len = 128;
	t->dataset.sessions.users = 10;
	t->dataset.sessions.rounds = 5;
	t->dataset.sessions.system_prompt_len = 1000;
	t->dataset.sessions.question_len = 100;
	t->dataset.sessions.think_time = NAN;
	t->dataset.sessions.join_interval = NAN;

	t->cold_starts = 3;
	t->warmup_starts = 1;
	t->warm_starts = 3;
	t->first_token = true;
	t->batch_size = 8;
	t->warmup_iterations = 10;
	t->iterations = 30;
	t->num_prompts = 1000;
	t->min_num_prompts = 1;
	t->sla_search = (struct pg_sla_search){ false, 3000, 100, 8, 1024 };
	t->max_num_prompts = 1000000;

	t->qps = pg_xmalloc(sizeof(double));
	t->qps[0] = INFINITY;
	t->n_qps = 1;
	t->max_concurrency = pg_xcalloc(1, sizeof(long));
	t->n_max_concurrency = 1;
	t->burstiness = 1.0;
	t->repeat = 1;
	t->command_timeout = 3600;
	t->goodput.ttft_ms = NAN;
	t->goodput.tpot_ms = NAN;
	t->goodput.e2el_ms = NAN;
	t->goodput.itl_ms = NAN;
	t->goodput.itl_percentile = 100;
}

void pg_test_release(struct pg_test *t)
{
	free(t->name);
	free(t->model);
	free(t->server.command);
	free(t->server.file_flags);
	pg_kvlist_release(&t->server.env);
	free(t->server.ready_path);
	free(t->server.remote);
	for (size_t i = 0; i < t->server.n_roles; i++)
		pg_role_spec_release(&t->server.roles[i]);
	free(t->server.roles);
	free(t->client.endpoint);
	free(t->client.served_model);
	free(t->client.api_key_env);
	json_decref(t->client.extra_body);
	pg_kvlist_release(&t->client.headers);
	free(t->client.percentiles);
	pg_strv_release(&t->client.percentile_metrics);
	free(t->dataset.path);
	free(t->dataset.url);
	free(t->dataset.sha256);
	pg_kvlist_release(&t->vars);
	pg_kvlist_release(&t->metadata);
	free(t->qps);
	free(t->max_concurrency);
	free(t->command);
	pg_kvlist_release(&t->command_env);
	free(t->loc.file);
	memset(t, 0, sizeof(*t));
}

void pg_suite_add(struct pg_suite *s, struct pg_test *t)
{
	pg_grow((void **)&s->tests, &s->cap_tests, s->n_tests + 1, sizeof(*s->tests));
	s->tests[s->n_tests++] = *t;
	memset(t, 0, sizeof(*t));
}

void pg_suite_release(struct pg_suite *s)
{
	for (size_t i = 0; i < s->n_tests; i++)
		pg_test_release(&s->tests[i]);
	free(s->tests);
	free(s->gpu);
	free(s->source);
	pg_strv_release(&s->warnings);
	if (s->ab) {
		pg_ab_spec_release(s->ab);
		free(s->ab);
	}
	memset(s, 0, sizeof(*s));
}

void pg_ab_spec_init(struct pg_ab_spec *ab)
{
	memset(ab, 0, sizeof(*ab));
	ab->min_blocks = 4;
	ab->max_blocks = 16;
	ab->tolerance = 0.01;
	ab->latency_tolerance = 0.02;
	ab->whole_run_tolerance = NAN;
	ab->false_alarm = 0.05;
}

void pg_ab_spec_release(struct pg_ab_spec *ab)
{
	for (int i = 0; i < 2; i++) {
		struct pg_ab_side_spec *sd = &ab->side[i];
		free(sd->server_command);
		free(sd->server_flags);
		free(sd->command);
		pg_kvlist_release(&sd->server_env);
		pg_kvlist_release(&sd->command_env);
	}
	free(ab->loc.file);
	memset(ab, 0, sizeof(*ab));
}

char *pg_point_name(const char *test, double qps, long max_concurrency, bool with_concurrency)
{
	struct pg_buf b = PG_BUF_INIT;
	char num[PG_FMT_DOUBLE_SIZE];

	pg_buf_printf(&b, "%s_qps_%s", test, pg_fmt_g(num, qps));
	if (with_concurrency) {
		if (max_concurrency > 0)
			pg_buf_printf(&b, "_concurrency_%ld", max_concurrency);
		else
			pg_buf_puts(&b, "_concurrency_inf");
	}
	return pg_buf_detach(&b);
}

static void plan_push(struct pg_plan *p, const struct pg_test *t, char *name, double qps, long mc)
{
	struct pg_point pt = { t, name, qps, mc };
	PG_ARRAY_PUSH(p->points, p->n, p->cap, pt);
}

/*
 * A serving point's name is its identity (results/identity.h): the cap
 * shows only when it holds requests back, i.e. below the point's prompt
 * count. Two exceptions keep the literal "_concurrency_<c>": a prompt
 * count that follows the cap (PROMPTS_PER_CONCURRENCY: the cap is part
 * of the workload's definition), and caps of one test and rate that would
 * otherwise share a name ([200, 300] with 200 prompts).
 */
static char *serving_name(const struct pg_test *t, size_t q, size_t c)
{
	struct pg_point pt = { t, NULL, t->qps[q], t->max_concurrency[c] };
	char *name;

	if (!t->concurrency_in_name)
		return pg_point_name(t->name, t->qps[q], t->max_concurrency[c], false);
	if (t->prompts_per_concurrency > 0)
		return pg_point_name(t->name, t->qps[q], t->max_concurrency[c], true);
	name = pg_identity_point_name(t->name, t->qps[q], t->max_concurrency[c],
				      pg_point_num_prompts(&pt));
	for (size_t k = 0; k < t->n_max_concurrency; k++) {
		struct pg_point other = { t, NULL, t->qps[q], t->max_concurrency[k] };
		char *o;
		bool same;

		if (k == c)
			continue;
		o = pg_identity_point_name(t->name, t->qps[q], t->max_concurrency[k],
					   pg_point_num_prompts(&other));
		same = !strcmp(o, name);
		free(o);
		if (same) {
			free(name);
			return pg_point_name(t->name, t->qps[q], t->max_concurrency[c], true);
		}
	}
	return name;
}

void pg_plan_build(struct pg_plan *out, const struct pg_suite *s)
{
	for (size_t i = 0; i < s->n_tests; i++) {
		const struct pg_test *t = &s->tests[i];

		if (t->kind != PG_SUITE_SERVING) {
			plan_push(out, t, pg_xstrdup(t->name), NAN, 0);
			continue;
		}
		for (size_t q = 0; q < t->n_qps; q++)
			for (size_t c = 0; c < t->n_max_concurrency; c++)
				plan_push(out, t, serving_name(t, q, c), t->qps[q],
					  t->max_concurrency[c]);
	}
}

int pg_test_check_ramp_up(const struct pg_test *t, struct pg_error *err)
{
	const struct pg_ramp_up *r = &t->ramp_up;

	if (r->strategy == PG_RAMP_NONE && !r->start_rps && !r->end_rps)
		return 0;
	if (r->strategy == PG_RAMP_NONE)
		return pg_error_set(err, PG_ECONFIG,
				    "a ramp-up needs a strategy: linear or exponential");
	if (!r->start_rps || !r->end_rps)
		return pg_error_set(err, PG_ECONFIG,
				    "a %s ramp-up needs both a start and an end rate",
				    pg_ramp_strategy_name(r->strategy));
	for (size_t i = 0; i < t->n_qps; i++)
		if (!isinf(t->qps[i]))
			return pg_error_set(
				err, PG_ECONFIG,
				"a ramp-up sets the request rate itself: leave qps at inf (got %g)",
				t->qps[i]);
	return 0;
}

long pg_test_certify_prompts(const struct pg_test *t)
{
	static const double default_pct[] = { 99 };
	const double *pct = t->client.n_percentiles ? t->client.percentiles : default_pct;
	size_t n = t->client.n_percentiles ? t->client.n_percentiles : 1;
	long need = 0;

	for (size_t i = 0; i < n; i++) {
		long k;
		if (!(pct[i] >= 50 && pct[i] < 100))
			continue;
		k = pg_tails_min_n(pct[i] / 100, PG_TAILS_CONFIDENCE);
		if (k > need)
			need = k;
	}
	return need;
}

long pg_point_num_prompts(const struct pg_point *pt)
{
	const struct pg_test *t = pt->test;
	long n, need;

	if (t->kind != PG_SUITE_SERVING || t->prompts_per_concurrency <= 0 ||
	    pt->max_concurrency <= 0) {
		n = t->num_prompts;
	} else {
		n = pt->max_concurrency > LONG_MAX / t->prompts_per_concurrency
			    ? LONG_MAX
			    : pt->max_concurrency * t->prompts_per_concurrency;
		if (n > t->max_num_prompts)
			n = t->max_num_prompts;
		if (n < t->min_num_prompts)
			n = t->min_num_prompts;
	}
	if (t->kind == PG_SUITE_SERVING && t->certify_tails &&
	    (need = pg_test_certify_prompts(t)) > n)
		n = need;
	return n;
}

void pg_plan_release(struct pg_plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->points[i].name);
	free(p->points);
	memset(p, 0, sizeof(*p));
}

struct pg_warmup pg_test_warmup(const struct pg_test *t)
{
	bool own_requests = !t->command && t->kind != PG_SUITE_STARTUP &&
			    t->dataset.kind != PG_DATASET_MULTI_TURN;
	struct pg_warmup none = { PG_WARMUP_NONE, 0 };

	if (t->kind == PG_SUITE_STARTUP)
		return none;
	switch (t->warmup.kind) {
	case PG_WARMUP_DEFAULT:
		if (own_requests && t->kind != PG_SUITE_LATENCY)
			return (struct pg_warmup){ PG_WARMUP_REQUESTS, PG_WARMUP_DEFAULT_REQUESTS };
		return none;
	case PG_WARMUP_REQUESTS:
		return own_requests && t->warmup.requests > 0 ? t->warmup : none;
	default:
		return t->warmup;
	}
}

const char *pg_warmup_text(char *buf, size_t size, const struct pg_warmup *w)
{
	if (w->kind == PG_WARMUP_REPEAT)
		snprintf(buf, size, "a whole run");
	else if (w->kind == PG_WARMUP_REQUESTS && w->requests > 0)
		snprintf(buf, size, "%ld request%s", w->requests, w->requests == 1 ? "" : "s");
	else
		snprintf(buf, size, "none");
	return buf;
}
