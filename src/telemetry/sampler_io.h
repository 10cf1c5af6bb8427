#ifndef PERFGATE_TELEMETRY_SAMPLER_IO_H
#define PERFGATE_TELEMETRY_SAMPLER_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "telemetry/series.h"

struct pg_gpu_reader;

/*
 * The sampler of one point: a "before" tick taken by pg_sampler_start on
 * the caller's thread (before the load starts), then a thread of its own
 * that scrapes the engine's /metrics (libcurl, its own handle, 2 s
 * timeout) and reads the GPUs about every interval seconds, and an "after"
 * tick taken by pg_sampler_stop once the load is over. The load generator
 * never waits for it: the only thing they share is the client's progress,
 * two atomic stores per progress report.
 *
 * GPU tools that are processes (nvidia-smi, amd-smi) are read no more
 * often than every 50 times their last run's wall time, so that they cost
 * at most about 2 % of a core however slow they are; NVML is read every
 * tick. Foreign processes are looked for at the ends of the point and
 * every ten seconds between (every tick with NVML).
 *
 * A missing endpoint or tool is a note in the series (one line each), never
 * an error of the point.
 */

/* Everything is copied by pg_sampler_start but the GPU reader. */
struct pg_sampler_opts {
	const char *metrics_url;   /* the engine's /metrics; NULL: no scrape */
	const char *api_key;       /* sent as a bearer token; may be NULL */
	struct pg_gpu_reader *gpu; /* borrowed; NULL: no GPU sampling */
	const int *gpus;           /* the GPU indexes the server uses */
	size_t n_gpus;             /* 0: every GPU */
	pid_t server_pgid;         /* its processes are not foreign; 0: none known */
	double interval;           /* seconds; <= 0: 1 */
};

struct pg_sampler;

/* Take the before tick and start the thread. Never fails: without a
 * thread (it could not be created) the point gets its two end ticks. */
struct pg_sampler *pg_sampler_start(const struct pg_sampler_opts *o);

/* The client's progress so far (any thread; lock-free). */
void pg_sampler_progress(struct pg_sampler *s, double completed, double output_tokens);

/* Stop the thread, take the after tick, move what was sampled into out
 * (initialised here) and free the sampler. */
void pg_sampler_stop(struct pg_sampler *s, struct pg_series *out);

/*
 * Whether pid is ours (1: perfgate, the server's process group pgid, or a
 * descendant of perfgate), someone else's (0), or cannot be seen from here
 * (-1: another PID namespace).
 */
int pg_sampler_pid_ours(pid_t pid, pid_t pgid);

#endif
