#ifndef PERFGATE_TELEMETRY_SERIES_H
#define PERFGATE_TELEMETRY_SERIES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/strutil.h"
#include "telemetry/engine.h"
#include "telemetry/gpustat.h"

struct pg_buf;

/*
 * What the sampler saw during one point (telemetry/sampler_io.h fills it):
 * a "before" tick just before the load starts, a tick about every second
 * while it runs, an "after" tick just after it ends. Each tick holds the
 * engine's state (from /metrics), the client's progress and a sample of
 * each GPU. Everything here is pure: the summary that goes into the result
 * (perfgate.telemetry), the flags a person reads next to the verdict, the
 * sidecar time series (<point>.telemetry.jsonl) and the timeline chart.
 */

enum pg_tick_phase { PG_TICK_BEFORE, PG_TICK_DURING, PG_TICK_AFTER };

struct pg_tick {
	double t; /* seconds since the point's load started (before: <= 0) */
	enum pg_tick_phase phase;
	bool engine_ok; /* the scrape worked and named an engine */
	struct pg_engine_state eng;
	double client_done;   /* requests finished so far; NAN unknown */
	double client_tokens; /* output tokens received so far; NAN unknown */
	size_t gpu0, n_gpu;   /* its GPU samples in pg_series.gpus */
};

struct pg_series {
	double interval;        /* the nominal seconds between ticks */
	const char *engine;     /* "vllm", "sglang", "tgi"; NULL: no engine metrics */
	const char *gpu_source; /* "nvml", "nvidia-smi", "amd-smi"; NULL: no GPU data */
	struct pg_tick *ticks;
	size_t n_ticks, cap_ticks;
	struct pg_gpu_sample *gpus;
	size_t n_gpus, cap_gpus;
	struct pg_gpu_proc *foreign; /* other processes seen on the sampled GPUs */
	size_t n_foreign, cap_foreign;
	size_t scrapes, scrapes_failed;
	size_t gpu_reads, gpu_reads_failed;
	double sampler_cpu_s; /* CPU time the sampler spent (its thread and tools) */
	struct pg_strv notes; /* one line each: a tool or an endpoint that was missing */
};

void pg_series_init(struct pg_series *s, double interval);
void pg_series_release(struct pg_series *s);

/* Append a tick and its n GPU samples (copied; t->gpu0 and t->n_gpu are
 * set here). */
void pg_series_add(struct pg_series *s, const struct pg_tick *t, const struct pg_gpu_sample *g,
		   size_t n);

/* Remember a foreign process (once per GPU and pid; the largest memory). */
void pg_series_add_foreign(struct pg_series *s, const struct pg_gpu_proc *p);

/*
 * The perfgate.telemetry object of the result (docs/results.md): per
 * signal min/median/max over the point, counters as deltas over exactly the
 * point's window (before tick to after tick, counter resets included),
 * rates from those deltas, per GPU its clocks, power, temperature,
 * utilisation, memory, how long each throttle reason was active, new ECC
 * errors and Xid events, foreign processes; and "flags" (pg_telemetry_flags).
 * New reference.
 */
json_t *pg_telemetry_summary(const struct pg_series *s);

/*
 * The flags a person reads next to the verdict, from a summary (so they
 * can be rebuilt from result files): "GPU 3 thermal throttling for 12 s",
 * "GPU 0 SM clock at 71% of its maximum", "GPU 1: 2 new uncorrected ECC
 * errors", "GPU 0: Xid 79", "GPU 2 shared with pid 4242 (python3, 2048
 * MiB)", "412 preemptions", "KV cache at 100%". Appended to out.
 */
void pg_telemetry_flags(struct pg_strv *out, const json_t *summary);

/* The time series, one JSON object per line (docs/telemetry.md). */
void pg_telemetry_jsonl(struct pg_buf *out, const struct pg_series *s);

/*
 * The timeline chart of the point (report/svg.h): throughput (the engine's
 * generation tokens per second, else the client's), requests running and
 * waiting, KV-cache usage and each GPU's SM clock against its maximum.
 * Nothing is appended when there is nothing to draw.
 */
void pg_telemetry_timeline(struct pg_buf *out, const struct pg_series *s, const char *title);

/*
 * The delta of a cumulative counter over values v[0..n) (NAN entries
 * skipped), as Prometheus's increase() takes it: a value below the one
 * before is a reset, and counts from zero. *resets (may be NULL) gets the
 * resets seen. NAN when fewer than one value is present.
 */
double pg_counter_delta(const double *v, size_t n, size_t *resets);

#endif
