#include "telemetry/sampler_io.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "loadgen/httpload_io.h"
#include "sys/proc.h"
#include "telemetry/gpureader_io.h"
#include "telemetry/prom.h"

#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A scrape that takes longer is a server in trouble: the tick goes on. */
#define SCRAPE_TIMEOUT_MS 2000
/* /metrics of a big engine is a few hundred KiB; more is not metrics. */
#define SCRAPE_MAX_BYTES (16u << 20)
/* Tools that are processes cost at most 1/this of the time. */
#define TOOL_BUDGET 50.0
/* Seconds between looks for foreign processes with a tool. */
#define PROCS_EVERY 10.0

struct pg_sampler {
	struct pg_sampler_opts o; /* its strings and GPU list are the copies below */
	char *url, *api_key;
	int *gpus;
	struct pg_series series;
	double t0; /* monotonic seconds when the load started (the before tick) */
	CURL *curl;
	struct curl_slist *headers;
	struct pg_buf body;
	bool scrape_noted, gpu_noted, procs_noted, hidden_noted;
	double next_gpu_read;
	double next_procs;
	struct pg_gpu_sample *gbuf;
	size_t n_gbuf;
	_Atomic double completed, tokens;
	pthread_t thread;
	bool threaded;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stopping;
	volatile sig_atomic_t cut; /* cuts a tool's run short at stop */
	double thread_cpu;
};

static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((format(printf, 2, 3))) static void note(struct pg_sampler *s, const char *fmt, ...)
{
	struct pg_buf b = PG_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	pg_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	pg_strv_push_owned(&s->series.notes, pg_buf_detach(&b));
}

/* ---- the engine ---- */

static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
	struct pg_buf *b = ctx;

	if (b->len + size * n > SCRAPE_MAX_BYTES)
		return 0;
	pg_buf_add(b, data, size * n);
	return size * n;
}

static void scrape(struct pg_sampler *s, struct pg_tick *t)
{
	struct pg_prom p = PG_PROM_INIT;
	struct pg_error err = PG_ERROR_INIT;
	const char *engine;
	long status = 0;
	CURLcode cc;

	if (!s->curl)
		return;
	s->series.scrapes++;
	pg_buf_reset(&s->body);
	cc = curl_easy_perform(s->curl);
	if (cc == CURLE_OK)
		curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &status);
	if (cc != CURLE_OK || status != 200) {
		s->series.scrapes_failed++;
		if (!s->scrape_noted) {
			if (cc != CURLE_OK)
				note(s, "GET %s: %s: no engine telemetry from it", s->o.metrics_url,
				     curl_easy_strerror(cc));
			else
				note(s, "GET %s: HTTP %ld: no engine telemetry from it",
				     s->o.metrics_url, status);
			s->scrape_noted = true;
		}
		return;
	}
	/* a line that does not parse is left out; the rest still counts */
	if (pg_prom_parse(&p, s->body.ptr, s->body.len, &err) && !s->scrape_noted && !p.n_samples) {
		note(s, "%s: %s", s->o.metrics_url, err.msg);
		s->scrape_noted = true;
	}
	engine = pg_engine_state_read(&t->eng, &p);
	if (engine) {
		t->engine_ok = true;
		s->series.engine = engine;
	} else if (!s->scrape_noted && p.n_samples) {
		note(s, "%s: no vLLM, SGLang or TGI metrics among its %zu samples",
		     s->o.metrics_url, p.n_samples);
		s->scrape_noted = true;
	}
	pg_prom_release(&p);
}

/* ---- GPUs ---- */

/* ppid and process group of pid from /proc; -1 when it cannot be seen. */
static int stat_of(pid_t pid, long *ppid, long *pgrp)
{
	char path[64], buf[512];
	FILE *f;
	size_t n;
	const char *rp;
	char state;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* "pid (comm) state ppid pgrp ...": comm may hold anything */
	rp = strrchr(buf, ')');
	if (!rp || sscanf(rp + 1, " %c %ld %ld", &state, ppid, pgrp) != 3)
		return -1;
	return 0;
}

int pg_sampler_pid_ours(pid_t pid, pid_t pgid)
{
	long ppid, pgrp;
	long cur = pid;

	if (pid == getpid())
		return 1;
	if (stat_of(pid, &ppid, &pgrp))
		return -1;
	if (pgid > 0 && pgrp == (long)pgid)
		return 1;
	/* a descendant of perfgate (an external command's engine, or one
	 * that left its group: perfgate is their subreaper) */
	for (int depth = 0; depth < 64 && cur > 1; depth++) {
		if (stat_of((pid_t)cur, &ppid, &pgrp))
			return 0;
		if (ppid == (long)getpid())
			return 1;
		cur = ppid;
	}
	return 0;
}

static bool wanted(const struct pg_sampler *s, int index)
{
	if (!s->o.n_gpus)
		return true;
	for (size_t i = 0; i < s->o.n_gpus; i++)
		if (s->o.gpus[i] == index)
			return true;
	return false;
}

static void look_for_foreign(struct pg_sampler *s, const struct pg_gpu_sample *g, size_t n)
{
	struct pg_gpu_proc *procs = NULL;
	size_t np = 0;

	if (pg_gpu_reader_procs(s->o.gpu, g, n, &procs, &np, &s->cut)) {
		if (!s->procs_noted)
			note(s, "%s cannot list the GPUs' processes",
			     pg_gpu_reader_source(s->o.gpu));
		s->procs_noted = true;
		free(procs);
		return;
	}
	for (size_t i = 0; i < np; i++) {
		int ours;
		if (!wanted(s, procs[i].gpu))
			continue;
		ours = pg_sampler_pid_ours((pid_t)procs[i].pid, s->o.server_pgid);
		if (ours < 0 && !s->hidden_noted) {
			note(s,
			     "GPU %d: pid %ld is not visible from here (another container?): not "
			     "judged",
			     procs[i].gpu, procs[i].pid);
			s->hidden_noted = true;
		}
		if (ours == 0)
			pg_series_add_foreign(&s->series, &procs[i]);
	}
	free(procs);
}

static void read_gpus(struct pg_sampler *s, struct pg_tick *t, bool ends, size_t *n_out)
{
	char why[256] = "";
	double now = pg_monotonic();
	size_t n = 0;

	*n_out = 0;
	if (!s->o.gpu || (!ends && now < s->next_gpu_read))
		return;
	s->series.gpu_reads++;
	if (pg_gpu_reader_read(s->o.gpu, &s->gbuf, &n, &s->cut, why, sizeof(why))) {
		s->series.gpu_reads_failed++;
		if (!s->gpu_noted)
			note(s, "%s: %s", pg_gpu_reader_source(s->o.gpu), why);
		s->gpu_noted = true;
		s->next_gpu_read = now + 10 * s->o.interval;
		return;
	}
	/* space a slow tool's runs by their cost */
	s->next_gpu_read = now + fmax(0, TOOL_BUDGET * pg_gpu_reader_cost(s->o.gpu) -
						 0.5 * s->o.interval);
	{
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (wanted(s, s->gbuf[i].index))
				s->gbuf[k++] = s->gbuf[i];
		n = k;
	}
	if (ends || !strcmp(pg_gpu_reader_source(s->o.gpu), "nvml") || now >= s->next_procs) {
		look_for_foreign(s, s->gbuf, n);
		s->next_procs = now + PROCS_EVERY;
	}
	(void)t;
	*n_out = n;
}

/* ---- ticks ---- */

static void tick(struct pg_sampler *s, enum pg_tick_phase phase)
{
	struct pg_tick t;
	size_t n = 0;

	memset(&t, 0, sizeof(t));
	t.phase = phase;
	t.t = phase == PG_TICK_BEFORE ? 0 : pg_monotonic() - s->t0;
	t.client_done = atomic_load(&s->completed);
	t.client_tokens = atomic_load(&s->tokens);
	if (phase == PG_TICK_BEFORE)
		t.client_done = t.client_tokens = NAN;
	scrape(s, &t);
	read_gpus(s, &t, phase != PG_TICK_DURING, &n);
	pg_series_add(&s->series, &t, s->gbuf, n);
}

static void *run(void *arg)
{
	struct pg_sampler *s = arg;
	double cpu0 = thread_cpu();
	sigset_t all;

	/* signals are the runner's to handle, on its own thread */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (long k = 1;; k++) {
		double due = s->t0 + (double)k * s->o.interval;
		struct timespec ts;
		bool stop;

		ts.tv_sec = (time_t)due;
		ts.tv_nsec = (long)((due - (double)ts.tv_sec) * 1e9);
		pthread_mutex_lock(&s->mu);
		while (!s->stopping && pg_monotonic() < due)
			if (pthread_cond_timedwait(&s->cv, &s->mu, &ts) == ETIMEDOUT)
				break;
		stop = s->stopping;
		pthread_mutex_unlock(&s->mu);
		if (stop)
			break;
		tick(s, PG_TICK_DURING);
		/* a slow scrape or tool: skip the ticks it overran */
		while (s->t0 + (double)(k + 1) * s->o.interval < pg_monotonic())
			k++;
	}
	s->thread_cpu = thread_cpu() - cpu0;
	return NULL;
}

struct pg_sampler *pg_sampler_start(const struct pg_sampler_opts *o)
{
	struct pg_sampler *s = pg_xcalloc(1, sizeof(*s));
	pthread_condattr_t ca;
	double cpu0 = thread_cpu();

	s->o = *o;
	/* the caller's strings and list may be gone before the thread is */
	s->o.metrics_url = s->url = pg_xstrdup(o->metrics_url);
	s->o.api_key = s->api_key = pg_xstrdup(o->api_key);
	s->gpus = pg_xcalloc(o->n_gpus + 1, sizeof(*s->gpus));
	if (o->n_gpus)
		memcpy(s->gpus, o->gpus, o->n_gpus * sizeof(*s->gpus));
	s->o.gpus = s->gpus;
	if (s->o.interval <= 0)
		s->o.interval = 1;
	pg_series_init(&s->series, s->o.interval);
	pg_buf_init(&s->body);
	atomic_init(&s->completed, NAN);
	atomic_init(&s->tokens, NAN);
	if (s->url && (s->curl = curl_easy_init())) {
		curl_easy_setopt(s->curl, CURLOPT_URL, s->url);
		curl_easy_setopt(s->curl, CURLOPT_NOSIGNAL, 1L);
		/* the server's own address, as the load generator reaches it:
		 * never through a proxy from the environment, trusting the
		 * same CA bundle */
		curl_easy_setopt(s->curl, CURLOPT_PROXY, "");
		pg_hl_easy_ca(s->curl);
		curl_easy_setopt(s->curl, CURLOPT_TIMEOUT_MS, (long)SCRAPE_TIMEOUT_MS);
		curl_easy_setopt(s->curl, CURLOPT_CONNECTTIMEOUT_MS, (long)SCRAPE_TIMEOUT_MS);
		curl_easy_setopt(s->curl, CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(s->curl, CURLOPT_WRITEDATA, &s->body);
		curl_easy_setopt(s->curl, CURLOPT_ACCEPT_ENCODING, "");
		/* the text format, not OpenMetrics or protobuf */
		s->headers = curl_slist_append(NULL, "Accept: text/plain;version=0.0.4");
		if (s->api_key) {
			struct pg_buf h = PG_BUF_INIT;
			pg_buf_printf(&h, "Authorization: Bearer %s", s->api_key);
			s->headers = curl_slist_append(s->headers, h.ptr);
			pg_buf_release(&h);
		}
		curl_easy_setopt(s->curl, CURLOPT_HTTPHEADER, s->headers);
	}
	if (o->gpu)
		s->series.gpu_source = pg_gpu_reader_source(o->gpu);
	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	s->t0 = pg_monotonic();
	tick(s, PG_TICK_BEFORE);
	/* the load starts when this returns: time is counted from here */
	s->t0 = pg_monotonic();
	s->series.sampler_cpu_s += thread_cpu() - cpu0;
	s->threaded = pthread_create(&s->thread, NULL, run, s) == 0;
	if (!s->threaded)
		note(s, "cannot start the sampler thread: only the ends of the point are sampled");
	return s;
}

void pg_sampler_progress(struct pg_sampler *s, double completed, double output_tokens)
{
	if (!s)
		return;
	atomic_store_explicit(&s->completed, completed, memory_order_relaxed);
	atomic_store_explicit(&s->tokens, output_tokens, memory_order_relaxed);
}

void pg_sampler_stop(struct pg_sampler *s, struct pg_series *out)
{
	double cpu0;

	if (s->threaded) {
		pthread_mutex_lock(&s->mu);
		s->stopping = true;
		s->cut = 1;
		pthread_cond_signal(&s->cv);
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->thread, NULL);
		s->series.sampler_cpu_s += s->thread_cpu;
	}
	s->cut = 0;
	cpu0 = thread_cpu();
	tick(s, PG_TICK_AFTER);
	s->series.sampler_cpu_s += thread_cpu() - cpu0;
	*out = s->series;
	if (s->curl)
		curl_easy_cleanup(s->curl);
	curl_slist_free_all(s->headers);
	pg_buf_release(&s->body);
	free(s->gbuf);
	free(s->url);
	free(s->api_key);
	free(s->gpus);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}
