#include "telemetry/series.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/jsonw.h"
#include "base/stats.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A throttle reason held for less than this is a blip, not a flag. */
#define FLAG_THROTTLE_S 1.0
/* A busy GPU whose SM clock stays under this share of its maximum. */
#define FLAG_CLOCK_RATIO 0.85
/* A GPU counts as busy (its clock should be up) from this utilisation. */
#define BUSY_UTIL_PCT 50.0
/* KV-cache usage worth a flag: the engine is about to preempt. */
#define FLAG_KV_USAGE 0.95

/* Reasons that say nothing about the machine's health. */
#define BENIGN_THROTTLE                                                                            \
	(PG_THROTTLE_GPU_IDLE | PG_THROTTLE_APP_CLOCKS | PG_THROTTLE_SYNC_BOOST |                  \
	 PG_THROTTLE_DISPLAY_CLOCKS)

void pg_series_init(struct pg_series *s, double interval)
{
	memset(s, 0, sizeof(*s));
	s->interval = interval > 0 ? interval : 1;
}

void pg_series_release(struct pg_series *s)
{
	free(s->ticks);
	free(s->gpus);
	free(s->foreign);
	pg_strv_release(&s->notes);
	memset(s, 0, sizeof(*s));
}

void pg_series_add(struct pg_series *s, const struct pg_tick *t, const struct pg_gpu_sample *g,
		   size_t n)
{
	struct pg_tick copy = *t;

	copy.gpu0 = s->n_gpus;
	copy.n_gpu = n;
	for (size_t i = 0; i < n; i++)
		PG_ARRAY_PUSH(s->gpus, s->n_gpus, s->cap_gpus, g[i]);
	PG_ARRAY_PUSH(s->ticks, s->n_ticks, s->cap_ticks, copy);
}

void pg_series_add_foreign(struct pg_series *s, const struct pg_gpu_proc *p)
{
	for (size_t i = 0; i < s->n_foreign; i++) {
		struct pg_gpu_proc *o = &s->foreign[i];
		if (o->gpu == p->gpu && o->pid == p->pid) {
			if (isnan(o->mem_mib) || p->mem_mib > o->mem_mib)
				o->mem_mib = p->mem_mib;
			return;
		}
	}
	PG_ARRAY_PUSH(s->foreign, s->n_foreign, s->cap_foreign, *p);
}

double pg_counter_delta(const double *v, size_t n, size_t *resets)
{
	double sum = 0, prev = NAN;
	size_t r = 0;
	bool any = false;

	for (size_t i = 0; i < n; i++) {
		if (isnan(v[i]))
			continue;
		if (any) {
			if (v[i] >= prev) {
				sum += v[i] - prev;
			} else {
				sum += v[i];
				r++;
			}
		}
		prev = v[i];
		any = true;
	}
	if (resets)
		*resets = r;
	return any ? sum : NAN;
}

/* ---- helpers ---- */

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* Integers print as integers: counts of tokens and preemptions. */
static json_t *count_or_null(double v)
{
	if (!isfinite(v))
		return json_null();
	if (v == floor(v) && fabs(v) < 9e15)
		return json_integer((json_int_t)v);
	return json_real(v);
}

/* {"min", "median", "max"} of the finite values, or NULL when none. */
static json_t *mmm(double *v, size_t n)
{
	size_t k = 0;
	json_t *o;

	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i]))
			v[k++] = v[i];
	if (!k)
		return NULL;
	pg_stats_sort(v, k);
	o = json_object();
	json_object_set_new(o, "min", json_real(v[0]));
	json_object_set_new(o, "median", json_real(pg_stats_median_sorted(v, k)));
	json_object_set_new(o, "max", json_real(v[k - 1]));
	return o;
}

static void set_mmm(json_t *obj, const char *key, double *v, size_t n)
{
	json_t *m = mmm(v, n);
	if (m)
		json_object_set_new(obj, key, m);
}

static bool gauge_tick(const struct pg_series *s, size_t i, bool during_only)
{
	return s->ticks[i].engine_ok && (!during_only || s->ticks[i].phase == PG_TICK_DURING);
}

/* ---- the engine ---- */

static json_t *engine_summary(const struct pg_series *s)
{
	json_t *e = json_object();
	double *v = pg_xcalloc(s->n_ticks + 1, sizeof(*v));
	double delta[PG_ESIG_COUNT];
	size_t resets_total = 0, n_ok = 0;
	bool during = false, before = false, after = false;

	for (size_t i = 0; i < s->n_ticks; i++) {
		if (!s->ticks[i].engine_ok)
			continue;
		n_ok++;
		during |= s->ticks[i].phase == PG_TICK_DURING;
		before |= s->ticks[i].phase == PG_TICK_BEFORE;
		after |= s->ticks[i].phase == PG_TICK_AFTER;
	}
	json_object_set_new(e, "name", s->engine ? json_string(s->engine) : json_null());
	json_object_set_new(e, "scrapes", json_integer((json_int_t)s->scrapes));
	json_object_set_new(e, "failed_scrapes", json_integer((json_int_t)s->scrapes_failed));
	/* counters cover exactly the point when both ends were scraped */
	json_object_set_new(e, "window_exact", json_boolean(before && after));

	for (int sig = 0; sig < PG_ESIG_COUNT; sig++) {
		size_t n = 0, resets = 0;
		delta[sig] = NAN;
		if (pg_esig_is_counter(sig)) {
			for (size_t i = 0; i < s->n_ticks; i++)
				if (s->ticks[i].engine_ok)
					v[n++] = s->ticks[i].eng.v[sig];
			delta[sig] = pg_counter_delta(v, n, &resets);
			/* a restart resets every counter: count it once */
			if (resets > resets_total)
				resets_total = resets;
			continue;
		}
		for (size_t i = 0; i < s->n_ticks; i++)
			if (gauge_tick(s, i, during))
				v[n++] = s->ticks[i].eng.v[sig];
		if (sig == PG_ESIG_RUNNING || sig == PG_ESIG_WAITING || sig == PG_ESIG_KV_USAGE)
			set_mmm(e, pg_esig_name(sig), v, n);
		else if (n) {
			/* a gauge rate (engines without the counters): its median */
			json_t *m = mmm(v, n);
			if (m)
				delta[sig] = json_real_value(json_object_get(m, "median"));
			json_decref(m);
		}
	}
	{
		json_t *kv = json_object_get(e, "kv_cache_usage");
		json_object_set_new(e, "kv_cache_peak",
				    kv ? json_incref(json_object_get(kv, "max")) : json_null());
	}
	json_object_set_new(e, "preemptions", count_or_null(delta[PG_ESIG_PREEMPTIONS]));
	json_object_set_new(e, "prompt_tokens", count_or_null(delta[PG_ESIG_PROMPT_TOKENS]));
	json_object_set_new(e, "generation_tokens",
			    count_or_null(delta[PG_ESIG_GENERATION_TOKENS]));
	{
		json_t *pc = json_object();
		double q = delta[PG_ESIG_PREFIX_QUERIES], h = delta[PG_ESIG_PREFIX_HITS];
		double rate = NAN;
		const char *from = NULL;
		/* SGLang counts cached tokens against prompt tokens */
		if (isnan(q) && !isnan(h) && !isnan(delta[PG_ESIG_PROMPT_TOKENS]))
			q = delta[PG_ESIG_PROMPT_TOKENS] + h;
		if (isfinite(q) && isfinite(h) && q > 0) {
			rate = h / q;
			from = "counters";
		} else if (isfinite(delta[PG_ESIG_PREFIX_HIT_RATE])) {
			rate = delta[PG_ESIG_PREFIX_HIT_RATE];
			from = "gauge";
		}
		json_object_set_new(pc, "queries", count_or_null(q));
		json_object_set_new(pc, "hits", count_or_null(h));
		json_object_set_new(pc, "hit_rate", num_or_null(rate));
		json_object_set_new(pc, "from", from ? json_string(from) : json_null());
		json_object_set_new(e, "prefix_cache", pc);
	}
	{
		json_t *sd = json_object();
		double d = delta[PG_ESIG_SPEC_DRAFT], a = delta[PG_ESIG_SPEC_ACCEPTED];
		double rate = NAN;
		const char *from = NULL;
		if (isfinite(d) && isfinite(a) && d > 0) {
			rate = a / d;
			from = "counters";
		} else if (isfinite(delta[PG_ESIG_SPEC_ACCEPT_RATE])) {
			rate = delta[PG_ESIG_SPEC_ACCEPT_RATE];
			from = "gauge";
		}
		json_object_set_new(sd, "draft_tokens", count_or_null(d));
		json_object_set_new(sd, "accepted_tokens", count_or_null(a));
		json_object_set_new(sd, "acceptance_rate", num_or_null(rate));
		json_object_set_new(sd, "from", from ? json_string(from) : json_null());
		json_object_set_new(e, "spec_decode", sd);
	}
	json_object_set_new(e, "counter_resets", json_integer((json_int_t)resets_total));
	free(v);
	(void)n_ok;
	return e;
}

/* ---- GPUs ---- */

/* Every GPU index seen, in order of first appearance. */
static size_t gpu_indexes(const struct pg_series *s, int *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_gpus; i++) {
		size_t k;
		for (k = 0; k < n; k++)
			if (out[k] == s->gpus[i].index)
				break;
		if (k == n && n < max)
			out[n++] = s->gpus[i].index;
	}
	return n;
}

/*
 * The GPU's energy over the point: its counter's rise from the before tick
 * to the after tick, as vLLM's bench serve takes it (differences of NVML's
 * total energy). Only for a GPU whose counter was read at both ends:
 * "energy_j" null otherwise. A counter that goes back (a driver reload)
 * makes the energy unknown, "energy_counter_reset" saying why. Nothing is
 * set for a GPU whose tool reads no counter.
 */
static void device_energy(json_t *d, const struct pg_gpu_sample *const *g,
			  const enum pg_tick_phase *ph, size_t k)
{
	double first = NAN, prev = NAN;
	bool reset = false;

	for (size_t i = 0; i < k; i++) {
		double e = g[i]->energy_j;
		if (!isfinite(e))
			continue;
		if (e < prev)
			reset = true;
		if (isnan(first))
			first = e;
		prev = e;
	}
	if (isnan(first))
		return;
	if (reset) {
		json_object_set_new(d, "energy_j", json_null());
		json_object_set_new(d, "energy_counter_reset", json_true());
	} else if (k >= 2 && ph[0] == PG_TICK_BEFORE && ph[k - 1] == PG_TICK_AFTER &&
		   isfinite(g[0]->energy_j) && isfinite(g[k - 1]->energy_j)) {
		json_object_set_new(d, "energy_j", json_real(g[k - 1]->energy_j - g[0]->energy_j));
	} else {
		json_object_set_new(d, "energy_j", json_null());
	}
}

/*
 * gpu.energy: the sum over the GPUs, the window it covers (before tick to
 * after tick) and the mean power over it; energy_j null and "dropped"
 * saying why when one GPU's counter reset or was not read at both ends.
 * NULL when no GPU has a counter.
 */
static json_t *energy_summary(const struct pg_series *s, const json_t *devs)
{
	double total = 0, t_before = NAN, t_after = NAN, seconds;
	json_t *gpus = json_array(), *o;
	const char *dropped = NULL;
	char why[160];
	size_t i;
	const json_t *d;
	bool any = false;

	json_array_foreach(devs, i, d)
	{
		const json_t *e = json_object_get(d, "energy_j");
		long index = (long)json_integer_value(json_object_get(d, "index"));
		if (!e)
			continue;
		any = true;
		if (json_is_number(e)) {
			total += json_number_value(e);
			json_array_append_new(gpus, json_integer(index));
		} else if (!dropped) {
			snprintf(why, sizeof(why),
				 json_is_true(json_object_get(d, "energy_counter_reset"))
					 ? "GPU %ld's energy counter went back during the point "
					   "(reset): no energy for this point"
					 : "GPU %ld's energy counter was not read at both ends "
					   "of the point: no energy for this point",
				 index);
			dropped = why;
		}
	}
	if (!any) {
		json_decref(gpus);
		return NULL;
	}
	for (size_t t = 0; t < s->n_ticks; t++) {
		if (s->ticks[t].phase == PG_TICK_BEFORE && isnan(t_before))
			t_before = s->ticks[t].t;
		if (s->ticks[t].phase == PG_TICK_AFTER)
			t_after = s->ticks[t].t;
	}
	seconds = t_after - t_before;
	if (!dropped && !(seconds > 0))
		dropped = "the point has no window to measure energy over";
	o = json_object();
	json_object_set_new(o, "energy_j", dropped ? json_null() : json_real(total));
	json_object_set_new(o, "seconds", dropped ? json_null() : json_real(seconds));
	json_object_set_new(o, "avg_power_w", dropped ? json_null() : json_real(total / seconds));
	json_object_set_new(o, "gpus", gpus);
	if (dropped)
		json_object_set_new(o, "dropped", json_string(dropped));
	return o;
}

static json_t *device_summary(const struct pg_series *s, int index)
{
	json_t *d = json_object(), *thr = json_object(), *xids = json_array(),
	       *procs = json_array();
	double *v = pg_xcalloc(s->n_ticks + 1, sizeof(*v));
	double seconds[PG_THROTTLE_N_REASONS] = { 0 };
	double sm_max = NAN, mem_max = NAN, ecc_first = NAN, ecc_last = NAN, prev_t = NAN;
	const struct pg_gpu_sample *last = NULL;
	size_t n;
	bool throttle_known = false;

	/* the samples of this GPU, in tick order */
	const struct pg_gpu_sample **g = pg_xcalloc(s->n_ticks + 1, sizeof(*g));
	double *t = pg_xcalloc(s->n_ticks + 1, sizeof(*t));
	enum pg_tick_phase *ph = pg_xcalloc(s->n_ticks + 1, sizeof(*ph));
	size_t k = 0;

	for (size_t i = 0; i < s->n_ticks; i++)
		for (size_t j = 0; j < s->ticks[i].n_gpu; j++)
			if (s->gpus[s->ticks[i].gpu0 + j].index == index) {
				g[k] = &s->gpus[s->ticks[i].gpu0 + j];
				t[k] = s->ticks[i].t;
				ph[k++] = s->ticks[i].phase;
			}

	last = k ? g[k - 1] : NULL;
	json_object_set_new(d, "index", json_integer(index));
	json_object_set_new(d, "name",
			    last && last->name[0] ? json_string(last->name) : json_null());
	json_object_set_new(d, "uuid",
			    last && last->uuid[0] ? json_string(last->uuid) : json_null());
	json_object_set_new(d, "samples", json_integer((json_int_t)k));

#define SERIES(field)                                                                              \
	do {                                                                                       \
		n = 0;                                                                             \
		for (size_t i = 0; i < k; i++)                                                     \
			v[n++] = g[i]->field;                                                      \
	} while (0)
	SERIES(sm_mhz);
	set_mmm(d, "sm_clock_mhz", v, n);
	for (size_t i = 0; i < k; i++)
		if (isfinite(g[i]->sm_max_mhz) && !(g[i]->sm_max_mhz <= sm_max))
			sm_max = g[i]->sm_max_mhz;
	json_object_set_new(d, "sm_clock_max_mhz", num_or_null(sm_max));
	SERIES(mem_mhz);
	set_mmm(d, "mem_clock_mhz", v, n);
	for (size_t i = 0; i < k; i++)
		if (isfinite(g[i]->mem_max_mhz) && !(g[i]->mem_max_mhz <= mem_max))
			mem_max = g[i]->mem_max_mhz;
	json_object_set_new(d, "mem_clock_max_mhz", num_or_null(mem_max));
	SERIES(power_w);
	set_mmm(d, "power_w", v, n);
	SERIES(power_limit_w);
	{
		json_t *m = mmm(v, n);
		json_object_set_new(d, "power_limit_w",
				    m ? json_incref(json_object_get(m, "max")) : json_null());
		json_decref(m);
	}
	SERIES(temp_c);
	set_mmm(d, "temperature_c", v, n);
	SERIES(util_pct);
	set_mmm(d, "utilization_pct", v, n);
	SERIES(mem_used_mib);
	set_mmm(d, "memory_used_mib", v, n);
#undef SERIES

	/* the SM clock against its maximum while the GPU was busy: a clock
	 * held down under load is the slow job's first suspect */
	n = 0;
	for (size_t i = 0; i < k; i++)
		if (g[i]->util_pct >= BUSY_UTIL_PCT && isfinite(g[i]->sm_mhz) &&
		    g[i]->sm_max_mhz > 0)
			v[n++] = g[i]->sm_mhz / g[i]->sm_max_mhz;
	if (n) {
		pg_stats_sort(v, n);
		json_object_set_new(d, "sm_clock_ratio", json_real(pg_stats_median_sorted(v, n)));
	} else {
		json_object_set_new(d, "sm_clock_ratio", json_null());
	}
	json_object_set_new(d, "busy_samples", json_integer((json_int_t)n));

	/* how long each reason held: a sample stands for the time since the
	 * one before (at most two intervals: a gap in sampling is not
	 * evidence), the before tick for nothing */
	for (size_t i = 0; i < k; i++) {
		double dt;
		if (g[i]->throttle_known)
			throttle_known = true;
		if (isnan(prev_t) || ph[i] == PG_TICK_BEFORE) {
			prev_t = t[i];
			continue;
		}
		dt = t[i] - prev_t;
		prev_t = t[i];
		if (dt > 2 * s->interval)
			dt = 2 * s->interval;
		if (dt < 0)
			dt = 0;
		for (int b = 0; b < PG_THROTTLE_N_REASONS; b++)
			if (g[i]->throttle & (1ULL << b))
				seconds[b] += dt;
	}
	for (int b = 0; b < PG_THROTTLE_N_REASONS; b++)
		if (seconds[b] > 0)
			json_object_set_new(thr, pg_throttle_name(b),
					    json_real(round(seconds[b] * 1000) / 1000));
	json_object_set_new(d, "throttle_seconds", throttle_known ? thr : json_null());
	if (!throttle_known)
		json_decref(thr);

	for (size_t i = 0; i < k; i++) {
		if (isfinite(g[i]->ecc_uncorrected)) {
			if (isnan(ecc_first))
				ecc_first = g[i]->ecc_uncorrected;
			ecc_last = g[i]->ecc_uncorrected;
		}
		if (g[i]->xid)
			json_array_append_new(xids, json_integer(g[i]->xid));
	}
	json_object_set_new(
		d, "ecc_uncorrected_new",
		isnan(ecc_first)
			? json_null()
			: count_or_null(ecc_last >= ecc_first ? ecc_last - ecc_first : ecc_last));
	json_object_set_new(d, "xid", xids);
	device_energy(d, g, ph, k);
	for (size_t i = 0; i < s->n_foreign; i++) {
		const struct pg_gpu_proc *p = &s->foreign[i];
		if (p->gpu != index)
			continue;
		json_array_append_new(procs, json_pack("{s:I, s:s, s:o}", "pid", (json_int_t)p->pid,
						       "name", p->name, "memory_mib",
						       num_or_null(p->mem_mib)));
	}
	json_object_set_new(d, "foreign_processes", procs);
	free(v);
	free(g);
	free(t);
	free(ph);
	return d;
}

json_t *pg_telemetry_summary(const struct pg_series *s)
{
	json_t *o = json_object(), *notes = json_array(), *flags = json_array();
	struct pg_strv fl = PG_STRV_INIT;
	double t0 = NAN, t1 = NAN;

	for (size_t i = 0; i < s->n_ticks; i++) {
		if (s->ticks[i].phase == PG_TICK_BEFORE)
			continue;
		if (isnan(t0))
			t0 = s->ticks[i].t;
		t1 = s->ticks[i].t;
	}
	json_object_set_new(o, "interval_s", json_real(s->interval));
	json_object_set_new(o, "seconds", num_or_null(isnan(t1) ? NAN : t1 > 0 ? t1 : 0));
	json_object_set_new(o, "ticks", json_integer((json_int_t)s->n_ticks));
	bool engine = s->scrapes > 0;

	for (size_t i = 0; i < s->n_ticks && !engine; i++)
		engine = s->ticks[i].engine_ok;
	if (engine)
		json_object_set_new(o, "engine", engine_summary(s));
	else
		json_object_set_new(o, "engine", json_null());
	if (s->gpu_source) {
		json_t *gpu = json_object(), *devs = json_array();
		int idx[64];
		size_t n = gpu_indexes(s, idx, 64);
		json_object_set_new(gpu, "source", json_string(s->gpu_source));
		json_object_set_new(gpu, "reads", json_integer((json_int_t)s->gpu_reads));
		json_object_set_new(gpu, "failed_reads",
				    json_integer((json_int_t)s->gpu_reads_failed));
		for (size_t i = 0; i < n; i++)
			json_array_append_new(devs, device_summary(s, idx[i]));
		json_object_set_new(gpu, "devices", devs);
		{
			json_t *energy = energy_summary(s, devs);
			if (energy)
				json_object_set_new(gpu, "energy", energy);
		}
		json_object_set_new(o, "gpu", gpu);
	} else {
		json_object_set_new(o, "gpu", json_null());
	}
	json_object_set_new(o, "sampler_cpu_seconds",
			    json_real(round(s->sampler_cpu_s * 1e6) / 1e6));
	for (size_t i = 0; i < s->notes.n; i++)
		json_array_append_new(notes, json_string(s->notes.v[i]));
	json_object_set_new(o, "notes", notes);
	pg_telemetry_flags(&fl, o);
	for (size_t i = 0; i < fl.n; i++)
		json_array_append_new(flags, json_string(fl.v[i]));
	json_object_set_new(o, "flags", flags);
	pg_strv_release(&fl);
	(void)t0;
	return o;
}

/* ---- flags ---- */

static double jnum(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

__attribute__((format(printf, 2, 3))) static void flag(struct pg_strv *out, const char *fmt, ...)
{
	struct pg_buf b = PG_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	pg_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	pg_strv_push_owned(out, pg_buf_detach(&b));
}

void pg_telemetry_flags(struct pg_strv *out, const json_t *summary)
{
	const json_t *gpu = json_object_get(summary, "gpu");
	const json_t *eng = json_object_get(summary, "engine");
	const json_t *devs = json_object_get(gpu, "devices");
	size_t i;
	const json_t *d;

	json_array_foreach(devs, i, d)
	{
		const json_t *thr = json_object_get(d, "throttle_seconds");
		long index = (long)json_integer_value(json_object_get(d, "index"));
		double ratio = jnum(d, "sm_clock_ratio"), ecc = jnum(d, "ecc_uncorrected_new");
		const json_t *xid = json_object_get(d, "xid");
		const json_t *procs = json_object_get(d, "foreign_processes");
		double thermal = jnum(thr, "sw_thermal_slowdown");
		double hw_thermal = jnum(thr, "hw_thermal_slowdown");
		size_t j;
		const json_t *p;

		/* the two thermal reasons read as one */
		if (isfinite(hw_thermal) && (isnan(thermal) || hw_thermal > thermal))
			thermal = hw_thermal;
		if (thermal >= FLAG_THROTTLE_S)
			flag(out, "GPU %ld thermal throttling for %.0f s", index, thermal);
		for (int b = 0; b < PG_THROTTLE_N_REASONS; b++) {
			uint64_t bit = 1ULL << b;
			double sec;
			if ((bit & BENIGN_THROTTLE) || bit == PG_THROTTLE_SW_THERMAL ||
			    bit == PG_THROTTLE_HW_THERMAL)
				continue;
			sec = jnum(thr, pg_throttle_name(b));
			if (sec >= FLAG_THROTTLE_S)
				flag(out, "GPU %ld %s for %.0f s", index, pg_throttle_words(b),
				     sec);
		}
		if (ratio < FLAG_CLOCK_RATIO)
			flag(out, "GPU %ld SM clock at %.0f%% of its maximum under load", index,
			     100 * ratio);
		if (ecc > 0)
			flag(out, "GPU %ld: %.0f new uncorrected ECC error%s", index, ecc,
			     ecc == 1 ? "" : "s");
		json_array_foreach(xid, j, p)
		{
			flag(out, "GPU %ld: Xid %lld", index, (long long)json_integer_value(p));
		}
		json_array_foreach(procs, j, p)
		{
			double mib = jnum(p, "memory_mib");
			const char *name = json_string_value(json_object_get(p, "name"));
			if (isfinite(mib))
				flag(out, "GPU %ld shared with pid %lld (%s, %.0f MiB)", index,
				     (long long)json_integer_value(json_object_get(p, "pid")),
				     name && *name ? name : "?", mib);
			else
				flag(out, "GPU %ld shared with pid %lld (%s)", index,
				     (long long)json_integer_value(json_object_get(p, "pid")),
				     name && *name ? name : "?");
		}
	}
	if (eng && !json_is_null(eng)) {
		double pre = jnum(eng, "preemptions"), kv = jnum(eng, "kv_cache_peak");
		if (pre > 0)
			flag(out, "%.0f preemption%s", pre, pre == 1 ? "" : "s");
		if (kv >= FLAG_KV_USAGE)
			flag(out, "KV cache at %.0f%%", 100 * kv);
	}
}

/* ---- the sidecar ---- */

static const char *const phase_names[] = { "before", "during", "after" };

void pg_telemetry_jsonl(struct pg_buf *out, const struct pg_series *s)
{
	for (size_t i = 0; i < s->n_ticks; i++) {
		const struct pg_tick *t = &s->ticks[i];
		json_t *o = json_object();

		json_object_set_new(o, "t", json_real(round(t->t * 1000) / 1000));
		json_object_set_new(o, "phase", json_string(phase_names[t->phase]));
		if (t->engine_ok) {
			json_t *e = json_object();
			for (int sig = 0; sig < PG_ESIG_COUNT; sig++)
				if (isfinite(t->eng.v[sig]))
					json_object_set_new(e, pg_esig_name(sig),
							    pg_esig_is_counter(sig)
								    ? count_or_null(t->eng.v[sig])
								    : json_real(t->eng.v[sig]));
			json_object_set_new(o, "engine", e);
		} else {
			json_object_set_new(o, "engine", json_null());
		}
		if (isfinite(t->client_done) || isfinite(t->client_tokens)) {
			json_t *c = json_object();
			json_object_set_new(c, "completed", count_or_null(t->client_done));
			json_object_set_new(c, "output_tokens", count_or_null(t->client_tokens));
			json_object_set_new(o, "client", c);
		}
		if (t->n_gpu) {
			json_t *gs = json_array();
			for (size_t j = 0; j < t->n_gpu; j++) {
				const struct pg_gpu_sample *g = &s->gpus[t->gpu0 + j];
				json_t *go = json_object(), *thr = json_array();
				json_object_set_new(go, "index", json_integer(g->index));
				json_object_set_new(go, "sm_clock_mhz", num_or_null(g->sm_mhz));
				json_object_set_new(go, "mem_clock_mhz", num_or_null(g->mem_mhz));
				json_object_set_new(go, "power_w", num_or_null(g->power_w));
				json_object_set_new(go, "temperature_c", num_or_null(g->temp_c));
				json_object_set_new(go, "utilization_pct",
						    num_or_null(g->util_pct));
				json_object_set_new(go, "memory_used_mib",
						    num_or_null(g->mem_used_mib));
				for (int b = 0; b < PG_THROTTLE_N_REASONS; b++)
					if (g->throttle & (1ULL << b))
						json_array_append_new(
							thr, json_string(pg_throttle_name(b)));
				json_object_set_new(go, "throttle",
						    g->throttle_known ? thr : json_null());
				if (!g->throttle_known)
					json_decref(thr);
				if (g->xid)
					json_object_set_new(go, "xid", json_integer(g->xid));
				if (isfinite(g->energy_j))
					json_object_set_new(go, "energy_j", json_real(g->energy_j));
				json_array_append_new(gs, go);
			}
			json_object_set_new(o, "gpus", gs);
		}
		pg_json_write(out, o, 0);
		pg_buf_putc(out, '\n');
		json_decref(o);
	}
}
