#include "loadgen/loadstats.h"

#include "base/alloc.h"
#include "base/error.h"
#include "base/stats.h"
#include "base/strutil.h"
#include "results/clientcheck.h"
#include "results/tails.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const pg_loadstats_metric_names[PG_LOADSTATS_METRIC_COUNT] = {
	"ttft", "tpot", "itl", "e2el", "client_queue_time", "e2el_including_client_queue"
};

bool pg_loadstats_metric_known(const char *name)
{
	for (size_t k = 0; k < PG_LOADSTATS_METRIC_COUNT; k++)
		if (!strcmp(name, pg_loadstats_metric_names[k]))
			return true;
	return false;
}

int pg_loadstats_metrics_parse(unsigned *mask, const struct pg_strv *names, struct pg_error *err)
{
	*mask = 0;
	for (size_t i = 0; i < names->n; i++) {
		size_t k;
		for (k = 0; k < PG_LOADSTATS_METRIC_COUNT; k++)
			if (!strcmp(names->v[i], pg_loadstats_metric_names[k]))
				break;
		if (k == PG_LOADSTATS_METRIC_COUNT) {
			const char *near = pg_nearest(names->v[i], pg_loadstats_metric_names,
						      PG_LOADSTATS_METRIC_COUNT);
			return pg_error_set(
				err, PG_ECONFIG,
				"unknown percentile metric '%s'%s%s%s (one of ttft, tpot, itl, e2el, "
				"client_queue_time, e2el_including_client_queue)",
				names->v[i], near ? " (did you mean '" : "", near ? near : "",
				near ? "'?)" : "");
		}
		*mask |= 1u << k;
	}
	return 0;
}

void pg_percentile_word(char out[32], double p)
{
	if (p == floor(p) && fabs(p) < 1e15)
		snprintf(out, 32, "%lld", (long long)p);
	else
		pg_fmt_repr(out, p);
}

/* A growable array of doubles. */
struct dvec {
	double *v;
	size_t n, cap;
};

static void dpush(struct dvec *d, double x)
{
	PG_ARRAY_PUSH(d->v, d->n, d->cap, x);
}

static void set_real(json_t *obj, const char *key, double v)
{
	json_object_set_new(obj, key, isfinite(v) ? json_real(v) : json_null());
}

/* mean/median/std/p<P> of x (seconds) as <stat>_<name>_ms keys. */
static void summarise(json_t *obj, const char *name, struct dvec *x, const double *pct, size_t npct)
{
	struct pg_summary s;
	double *sorted = pg_xmalloc((x->n ? x->n : 1) * sizeof(double));
	char key[96], word[32];

	pg_stats_summary(&s, x->v, x->n, sorted);
	/* vLLM computes in seconds and scales the statistic by 1000 */
	snprintf(key, sizeof(key), "mean_%s_ms", name);
	set_real(obj, key, s.mean * 1000);
	snprintf(key, sizeof(key), "median_%s_ms", name);
	set_real(obj, key, s.median * 1000);
	snprintf(key, sizeof(key), "std_%s_ms", name);
	set_real(obj, key, s.std * 1000);
	for (size_t i = 0; i < npct; i++) {
		pg_percentile_word(word, pct[i]);
		snprintf(key, sizeof(key), "p%s_%s_ms", word, name);
		set_real(obj, key, pg_stats_percentile_sorted(sorted, x->n, pct[i]) * 1000);
	}
	free(sorted);
}

/*
 * The certified estimate (results/tails.h) of the median and of every
 * requested percentile from p50 up, of x (seconds), into cert[name] as
 * {"n", "p50", "p<P>"...} in ms: null below the samples the percentile
 * needs.
 */
static void certify(json_t *cert, const char *name, const double *x, size_t n, const double *pct,
		    size_t npct)
{
	double *sorted = pg_xmalloc((n ? n : 1) * sizeof(double));
	json_t *m = json_object();
	char key[40], word[32];

	if (n)
		memcpy(sorted, x, n * sizeof(double));
	pg_stats_sort(sorted, n);
	json_object_set_new(m, "n", json_integer((json_int_t)n));
	for (size_t i = 0; i <= npct; i++) {
		double p = i == 0 ? 50 : pct[i - 1];
		if (!(p >= 50 && p < 100))
			continue;
		pg_percentile_word(word, p);
		snprintf(key, sizeof(key), "p%s", word);
		if (json_object_get(m, key))
			continue;
		set_real(m, key, pg_tails_estimate(sorted, n, p / 100, PG_TAILS_CONFIDENCE) * 1000);
	}
	json_object_set_new(cert, name, m);
	free(sorted);
}

/* obj["perfgate"] = {"certified": cert}: the part of the result's perfgate
 * object the statistics make (the runner moves it into its own). */
static void set_certified(json_t *obj, json_t *cert)
{
	json_t *pg = json_object();

	json_object_set_new(pg, "certified", cert);
	json_object_set_new(obj, "perfgate", pg);
}

static json_t *certified_new(void)
{
	json_t *cert = json_object();

	json_object_set_new(cert, "method", json_string("mlperf-early-stopping"));
	json_object_set_new(cert, "confidence", json_real(PG_TAILS_CONFIDENCE));
	return cert;
}

double pg_loadstats_ttft_s(const struct pg_reqtrace *t)
{
	return pg_ns_to_s(t->chunk_ns[0] - t->sent_ns);
}

static double latency_s(const struct pg_reqtrace *t)
{
	return pg_ns_to_s(t->chunk_ns[t->n_chunks - 1] - t->sent_ns);
}

/* The wait for a concurrency slot after the request was due; 0 when the
 * trace does not say (no schedule or no limit). */
static double queue_s(const struct pg_reqtrace *t)
{
	return t->eligible_ns >= 0 && t->scheduled_ns >= 0
		       ? pg_ns_to_s(t->eligible_ns - t->scheduled_ns)
		       : 0.0;
}

struct interval {
	double t;
	int delta;
};

static int cmp_interval(const void *a, const void *b)
{
	const struct interval *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->delta - y->delta; /* departures (-1) before arrivals (+1) */
}

/* Peak number of requests in flight over [start, start + latency). */
static long max_concurrent(const struct pg_reqtrace *t, size_t n)
{
	struct interval *ev = pg_xmalloc((2 * n + 1) * sizeof(*ev));
	size_t m = 0;
	long cur = 0, peak = 0;

	for (size_t i = 0; i < n; i++) {
		if (!pg_reqtrace_ok(&t[i]))
			continue;
		double start = pg_ns_to_s(t[i].sent_ns);
		ev[m++] = (struct interval){ start, +1 };
		ev[m++] = (struct interval){ start + latency_s(&t[i]), -1 };
	}
	qsort(ev, m, sizeof(*ev), cmp_interval);
	for (size_t i = 0; i < m; i++) {
		cur += ev[i].delta;
		if (cur > peak)
			peak = cur;
	}
	free(ev);
	return peak;
}

/*
 * vLLM's peak output rate: content messages bucketed into whole seconds
 * from the earliest successful start; token times are start + ttft +
 * cumulative ITL. (It counts messages, not tokens, as vLLM does.)
 */
static double max_output_tokens_per_s(const struct pg_reqtrace *t, size_t n)
{
	double min_start = INFINITY, max_end = -INFINITY, peak = 0;
	double *buckets;
	size_t nb;

	for (size_t i = 0; i < n; i++) {
		if (!pg_reqtrace_ok(&t[i]))
			continue;
		double start = pg_ns_to_s(t[i].sent_ns);
		if (start < min_start)
			min_start = start;
		if (start + latency_s(&t[i]) > max_end)
			max_end = start + latency_s(&t[i]);
	}
	if (!isfinite(min_start))
		return 0;
	nb = (size_t)ceil(max_end - min_start) + 1;
	buckets = pg_xcalloc(nb, sizeof(*buckets));
	for (size_t i = 0; i < n; i++) {
		if (!pg_reqtrace_ok(&t[i]))
			continue;
		double start = pg_ns_to_s(t[i].sent_ns);
		double cur = start + pg_loadstats_ttft_s(&t[i]);
		for (size_t j = 0; j < t[i].n_chunks; j++) {
			if (j)
				cur += pg_ns_to_s(t[i].chunk_ns[j] - t[i].chunk_ns[j - 1]);
			double off = cur - min_start;
			if (off >= 0 && (size_t)off < nb)
				buckets[(size_t)off] += 1;
		}
	}
	for (size_t b = 0; b < nb; b++)
		if (buckets[b] > peak)
			peak = buckets[b];
	free(buckets);
	return peak;
}

static bool have_goodput(const struct pg_goodput *g)
{
	return !isnan(g->ttft_ms) || !isnan(g->tpot_ms) || !isnan(g->e2el_ms) || !isnan(g->itl_ms);
}

/* The SLOs one request meets, and how many requests met each. */
enum { SLO_TTFT, SLO_TPOT, SLO_ITL, SLO_E2EL, SLO_COUNT };

static const char *const slo_keys[SLO_COUNT] = {
	"slo_attainment_ttft",
	"slo_attainment_tpot",
	"slo_attainment_itl",
	"slo_attainment_e2el",
};

static double slo_bound_ms(const struct pg_goodput *g, int k)
{
	switch (k) {
	case SLO_TTFT:
		return g->ttft_ms;
	case SLO_TPOT:
		return g->tpot_ms;
	case SLO_ITL:
		return g->itl_ms;
	default:
		return g->e2el_ms;
	}
}

/* The request's own gaps at percentile p (numpy's linear method; 100 is
 * the longest), seconds; 0 for a request of one message. */
static double request_itl_s(const struct pg_reqtrace *r, double p)
{
	size_t n = r->n_chunks > 1 ? r->n_chunks - 1 : 0;
	double *gaps, v;

	if (!n)
		return 0;
	gaps = pg_xmalloc(n * sizeof(double));
	for (size_t j = 1; j < r->n_chunks; j++)
		gaps[j - 1] = pg_ns_to_s(r->chunk_ns[j] - r->chunk_ns[j - 1]);
	pg_stats_sort(gaps, n);
	v = pg_stats_percentile_sorted(gaps, n, isnan(p) ? 100 : p);
	free(gaps);
	return v;
}

/* The send lags past the lag bound, by what mostly made each late: the
 * loop asleep past the due time (the host), or the loop working. */
static void count_late(const struct pg_reqtrace *t, size_t n, double bound_ms,
		       struct pg_clientcheck_figures *f)
{
	for (size_t i = 0; i < n; i++) {
		int64_t from = t[i].eligible_ns >= 0 ? t[i].eligible_ns : t[i].scheduled_ns;
		int64_t lag = t[i].sent_ns - from, host = t[i].host_lag_ns;

		if (t[i].sent_ns < 0 || from < 0 || pg_ns_to_s(lag) * 1000 <= bound_ms)
			continue;
		if (host > lag)
			host = lag;
		if (host > lag - host)
			f->late_host++;
		else
			f->late_client++; /* unknown (-1) included: the loop's, as before */
	}
}

void pg_client_keys(json_t *obj, const struct pg_reqtrace *t, size_t n,
		    const struct pg_client_health *h)
{
	struct dvec lag = { 0 };
	double p50, p99, max;
	size_t late = 0;
	int64_t first = INT64_MAX, last = INT64_MIN;
	struct pg_clientcheck_figures fig = { .busy_fraction = -1, .read_delay_p99_ms = -1 };
	struct pg_clientcheck_verdict v;
	json_t *cats = json_object(), *samples = json_object();

	for (size_t i = 0; i < n; i++) {
		if (t[i].sent_ns < 0)
			continue;
		int64_t from = t[i].eligible_ns >= 0 ? t[i].eligible_ns : t[i].scheduled_ns;
		if (from < 0)
			continue;
		dpush(&lag, pg_ns_to_s(t[i].sent_ns - from));
		first = from < first ? from : first;
		last = from > last ? from : last;
	}
	pg_stats_sort(lag.v, lag.n);
	p50 = pg_stats_percentile_sorted(lag.v, lag.n, 50) * 1000;
	p99 = pg_stats_percentile_sorted(lag.v, lag.n, 99) * 1000;
	max = lag.n ? lag.v[lag.n - 1] * 1000 : 0;
	for (size_t i = 0; i < lag.n; i++)
		late += lag.v[i] * 1000 > PG_LAG_BOUND_MIN_MS;
	set_real(obj, "schedule_lag_p50_ms", p50);
	set_real(obj, "schedule_lag_p99_ms", p99);
	set_real(obj, "schedule_lag_max_ms", max);
	json_object_set_new(obj, "requests_sent_late", json_integer((json_int_t)late));
	fig.sent = lag.n;
	if (h) {
		fig.busy_fraction = h->busy_fraction;
		fig.duration_s = h->duration_s;
		fig.read_delay_p99_ms = h->read_delay_p99_ms;
	}
	/* (the suite's own keys are in obj already: what it times) */
	fig.read_delay_bound_ms = pg_clientcheck_read_delay_bound_ms(obj);
	/* a burst has no schedule to keep: its lag is how long sending took */
	if (!(h && h->burst) && lag.n >= 2) {
		double bound = pg_clientcheck_lag_bound_ms(pg_ns_to_s(last - first) * 1000 /
							   (double)(lag.n - 1));
		count_late(t, n, bound, &fig);
		set_real(obj, "schedule_lag_bound_ms", bound);
		json_object_set_new(obj, "requests_late_by_client",
				    json_integer((json_int_t)fig.late_client));
		json_object_set_new(obj, "requests_late_by_host",
				    json_integer((json_int_t)fig.late_host));
	}
	v = pg_clientcheck_judge(&fig);
	json_object_set_new(obj, "client_bound", json_boolean(v.client_bound));
	json_object_set_new(obj, "host_late", json_boolean(v.host_late));
	if (h && h->busy_fraction >= 0)
		set_real(obj, "client_busy_fraction", h->busy_fraction);
	if (h && h->read_delay_p99_ms >= 0) {
		set_real(obj, "client_read_delay_p99_ms", h->read_delay_p99_ms);
		/* every response timestamp is at most this late (ITL: off by
		 * at most this either way) */
		set_real(obj, "timestamp_error_bound_ms", h->read_delay_p99_ms);
	}
	if (h && h->new_connections >= 0)
		json_object_set_new(obj, "new_connections", json_integer(h->new_connections));

	/* the three transport categories are always present, so a table of
	 * results has the same columns whether or not a run had failures */
	json_object_set_new(cats, "timeout", json_integer(0));
	json_object_set_new(cats, "disconnect", json_integer(0));
	json_object_set_new(cats, "malformed_stream", json_integer(0));
	for (size_t i = 0; i < n; i++) {
		char key[32];
		const char *name;
		json_t *c;

		if (pg_reqtrace_ok(&t[i]))
			continue;
		name = pg_reqtrace_category(&t[i], key);
		c = json_object_get(cats, name);
		json_object_set_new(cats, name, json_integer((c ? json_integer_value(c) : 0) + 1));
		if (!json_object_get(samples, name))
			json_object_set_new(samples, name,
					    json_string(t[i].error ? t[i].error : name));
	}
	json_object_set_new(obj, "failed_by_category", cats);
	json_object_set_new(obj, "error_samples", samples);
	free(lag.v);
}

void pg_serve_metrics(json_t *obj, const struct pg_reqtrace *t, size_t n,
		      const struct pg_serve_stats_opts *o)
{
	static const double default_pct[] = { 99 };
	const double *pct = o->n_percentiles ? o->percentiles : default_pct;
	size_t npct = o->n_percentiles ? o->n_percentiles : 1;
	unsigned metrics = o->metrics ? o->metrics
				      : (PG_LOADSTATS_TTFT | PG_LOADSTATS_TPOT | PG_LOADSTATS_ITL);
	struct dvec ttfts = { 0 }, tpots = { 0 }, itls = { 0 }, e2els = { 0 };
	struct dvec token_itls = { 0 }, queues = { 0 }, e2els_queued = { 0 };
	long completed = 0, failed = 0, total_input = 0, total_output = 0, good = 0;
	long met[SLO_COUNT] = { 0 }, good_tokens = 0;
	long without_usage = 0, without_prompt_usage = 0, with_chunk_usage = 0;
	double dur = o->duration_s;

	for (size_t i = 0; i < n; i++) {
		const struct pg_reqtrace *r = &t[i];
		long out_len;
		double ttft, lat, tpot = 0;

		if (!pg_reqtrace_ok(r)) {
			failed++;
			continue;
		}
		completed++;
		out_len = pg_reqtrace_output_tokens(r);
		if (r->usage_completion_tokens <= 0)
			without_usage++;
		if (r->usage_prompt_tokens < 0)
			without_prompt_usage++;
		total_output += out_len;
		total_input += pg_reqtrace_input_tokens(r);
		ttft = pg_loadstats_ttft_s(r);
		lat = latency_s(r);
		if (out_len > 1) {
			tpot = (lat - ttft) / (double)(out_len - 1);
			dpush(&tpots, tpot);
		}
		for (size_t j = 1; j < r->n_chunks; j++)
			dpush(&itls, pg_ns_to_s(r->chunk_ns[j] - r->chunk_ns[j - 1]));
		dpush(&ttfts, ttft);
		dpush(&e2els, lat);
		if (r->eligible_ns >= 0 && r->scheduled_ns >= 0) {
			dpush(&queues, queue_s(r));
			dpush(&e2els_queued, lat + queue_s(r));
		}

		/* token-accurate ITL: each gap divided over the tokens the
		 * message carried, one sample per token */
		if (r->n_chunk_usage == r->n_chunks) {
			with_chunk_usage++;
			for (size_t j = 1; j < r->n_chunks; j++) {
				long tokens = (long)r->chunk_tokens[j] -
					      (long)r->chunk_tokens[j - 1];
				double gap = pg_ns_to_s(r->chunk_ns[j] - r->chunk_ns[j - 1]);
				for (long k = 0; k < tokens; k++)
					dpush(&token_itls, gap / (double)tokens);
			}
		}
		if (have_goodput(&o->goodput)) {
			/* inclusive SLOs, compared in seconds as vLLM does; a
			 * one-token request's tpot is 0 here, as in vLLM's
			 * goodput (its all_tpots), though the TPOT statistics
			 * leave it out */
			bool ok = true;
			for (int k = 0; k < SLO_COUNT; k++) {
				double bound = slo_bound_ms(&o->goodput, k), v;
				if (isnan(bound))
					continue;
				v = k == SLO_TTFT   ? ttft
				    : k == SLO_TPOT ? tpot
				    : k == SLO_ITL  ? request_itl_s(r, o->goodput.itl_percentile)
						    : lat;
				if (bound / 1000 >= v)
					met[k]++;
				else
					ok = false;
			}
			good += ok;
			if (ok)
				good_tokens += out_len;
		}
	}

	set_real(obj, "duration", dur);
	json_object_set_new(obj, "completed", json_integer(completed));
	json_object_set_new(obj, "failed", json_integer(failed));
	json_object_set_new(obj, "total_input_tokens", json_integer(total_input));
	json_object_set_new(obj, "total_output_tokens", json_integer(total_output));
	set_real(obj, "request_throughput", dur > 0 ? (double)completed / dur : 0);
	if (have_goodput(&o->goodput))
		set_real(obj, "request_goodput", dur > 0 ? (double)good / dur : 0);
	else
		json_object_set_new(obj, "request_goodput", json_null());
	set_real(obj, "output_throughput", dur > 0 ? (double)total_output / dur : 0);
	set_real(obj, "total_token_throughput",
		 dur > 0 ? (double)(total_input + total_output) / dur : 0);
	set_real(obj, "max_output_tokens_per_s", max_output_tokens_per_s(t, n));
	json_object_set_new(obj, "max_concurrent_requests", json_integer(max_concurrent(t, n)));

	if (metrics & PG_LOADSTATS_TTFT)
		summarise(obj, "ttft", &ttfts, pct, npct);
	if (metrics & PG_LOADSTATS_TPOT)
		summarise(obj, "tpot", &tpots, pct, npct);
	if (metrics & PG_LOADSTATS_ITL)
		summarise(obj, "itl", &itls, pct, npct);
	if (metrics & PG_LOADSTATS_E2EL)
		summarise(obj, "e2el", &e2els, pct, npct);
	if ((metrics & PG_LOADSTATS_CLIENT_QUEUE) && o->bounded)
		summarise(obj, "client_queue_time", &queues, pct, npct);
	if ((metrics & PG_LOADSTATS_E2EL_QUEUE) && o->bounded && o->finite_rate)
		summarise(obj, "e2el_including_client_queue", &e2els_queued, pct, npct);

	if (o->detailed) {
		json_t *in = json_array(), *out = json_array(), *tt = json_array(),
		       *it = json_array();
		json_t *lat = json_array(), *st = json_array(), *qt = json_array(),
		       *er = json_array();

		for (size_t i = 0; i < n; i++) {
			const struct pg_reqtrace *r = &t[i];
			bool ok = pg_reqtrace_ok(r);
			json_t *gaps = json_array();

			json_array_append_new(in, json_integer(pg_reqtrace_input_tokens(r)));
			json_array_append_new(out,
					      json_integer(ok ? pg_reqtrace_output_tokens(r) : 0));
			json_array_append_new(tt, json_real(ok ? pg_loadstats_ttft_s(r) : 0.0));
			for (size_t j = 1; ok && j < r->n_chunks; j++)
				json_array_append_new(
					gaps,
					json_real(pg_ns_to_s(r->chunk_ns[j] - r->chunk_ns[j - 1])));
			json_array_append_new(it, gaps);
			json_array_append_new(lat, json_real(ok ? latency_s(r) : 0.0));
			json_array_append_new(
				st, json_real(r->sent_ns >= 0 ? pg_ns_to_s(r->sent_ns) : 0.0));
			json_array_append_new(qt, json_real(queue_s(r)));
			json_array_append_new(
				er, json_string(ok ? "" : (r->error ? r->error : "failed")));
		}
		json_object_set_new(obj, "input_lens", in);
		json_object_set_new(obj, "output_lens", out);
		json_object_set_new(obj, "ttfts", tt);
		json_object_set_new(obj, "itls", it);
		json_object_set_new(obj, "latencies", lat);
		json_object_set_new(obj, "start_times", st);
		json_object_set_new(obj, "queue_times", qt);
		json_object_set_new(obj, "errors", er);
	}

	pg_client_keys(obj, t, n, &o->health);
	if (with_chunk_usage) {
		summarise(obj, "token_itl", &token_itls, pct, npct);
		json_object_set_new(obj, "token_itl_requests", json_integer(with_chunk_usage));
	}
	json_object_set_new(obj, "input_tokens_source",
			    json_string(completed && !without_prompt_usage ? "server_usage"
					: o->dataset_input_source          ? o->dataset_input_source
									   : "estimate"));
	json_object_set_new(obj, "output_tokens_source",
			    json_string(!without_usage ? "server_usage" : "message_count"));
	json_object_set_new(obj, "requests_without_usage", json_integer(without_usage));
	if (have_goodput(&o->goodput)) {
		/* over every request sent: a failed one meets no SLO */
		long sent = completed + failed;
		set_real(obj, "slo_attainment", sent ? (double)good / (double)sent : NAN);
		for (int k = 0; k < SLO_COUNT; k++)
			if (!isnan(slo_bound_ms(&o->goodput, k)))
				set_real(obj, slo_keys[k],
					 sent ? (double)met[k] / (double)sent : NAN);
		set_real(obj, "token_goodput", dur > 0 ? (double)good_tokens / dur : 0);
	}
	{
		json_t *cert = certified_new();
		if (metrics & PG_LOADSTATS_TTFT)
			certify(cert, "ttft", ttfts.v, ttfts.n, pct, npct);
		if (metrics & PG_LOADSTATS_TPOT)
			certify(cert, "tpot", tpots.v, tpots.n, pct, npct);
		if (metrics & PG_LOADSTATS_ITL)
			certify(cert, "itl", itls.v, itls.n, pct, npct);
		if (metrics & PG_LOADSTATS_E2EL)
			certify(cert, "e2el", e2els.v, e2els.n, pct, npct);
		set_certified(obj, cert);
	}

	free(ttfts.v);
	free(tpots.v);
	free(itls.v);
	free(e2els.v);
	free(token_itls.v);
	free(queues.v);
	free(e2els_queued.v);
}

void pg_latency_metrics(json_t *obj, const double *latencies, size_t n)
{
	static const double pcts[] = { 10, 25, 50, 75, 90, 99 };
	double *sorted = pg_xmalloc((n ? n : 1) * sizeof(double));
	json_t *arr = json_array(), *p = json_object();
	char word[32];

	if (n)
		memcpy(sorted, latencies, n * sizeof(double));
	pg_stats_sort(sorted, n);
	set_real(obj, "avg_latency", pg_stats_mean(latencies, n));
	set_real(obj, "std_latency", pg_stats_std(latencies, n));
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, json_real(latencies[i]));
	json_object_set_new(obj, "latencies", arr);
	for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++) {
		pg_percentile_word(word, pcts[i]);
		set_real(p, word, pg_stats_percentile_sorted(sorted, n, pcts[i]));
	}
	json_object_set_new(obj, "percentiles", p);
	{
		json_t *cert = certified_new();
		certify(cert, "latency", latencies, n, pcts, sizeof(pcts) / sizeof(pcts[0]));
		set_certified(obj, cert);
	}
	free(sorted);
}

void pg_throughput_metrics(json_t *obj, const struct pg_reqtrace *t, size_t n, double elapsed_s)
{
	long completed = 0, failed = 0, input = 0, output = 0;

	for (size_t i = 0; i < n; i++) {
		if (!pg_reqtrace_ok(&t[i])) {
			failed++;
			continue;
		}
		completed++;
		input += pg_reqtrace_input_tokens(&t[i]);
		output += pg_reqtrace_output_tokens(&t[i]);
	}
	set_real(obj, "elapsed_time", elapsed_s);
	json_object_set_new(obj, "num_requests", json_integer(completed));
	json_object_set_new(obj, "total_num_tokens", json_integer(input + output));
	set_real(obj, "requests_per_second", elapsed_s > 0 ? (double)completed / elapsed_s : 0);
	set_real(obj, "tokens_per_second",
		 elapsed_s > 0 ? (double)(input + output) / elapsed_s : 0);
	set_real(obj, "output_tokens_per_second", elapsed_s > 0 ? (double)output / elapsed_s : 0);
	json_object_set_new(obj, "total_output_tokens", json_integer(output));
	json_object_set_new(obj, "failed", json_integer(failed));
}
