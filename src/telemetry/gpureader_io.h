#ifndef PERFGATE_TELEMETRY_GPUREADER_IO_H
#define PERFGATE_TELEMETRY_GPUREADER_IO_H

#include <signal.h>
#include <stddef.h>

#include "telemetry/gpustat.h"

/*
 * Reading the machine's GPUs, from whichever tool is there, in this order:
 *
 *  1. NVML, through dlopen("libnvidia-ml.so.1") with the few prototypes
 *     declared here (no build-time dependency on the driver): in-process,
 *     a read costs microseconds; Xid errors come from its event set;
 *  2. nvidia-smi --query-gpu (CSV) on PATH;
 *  3. amd-smi metric --json on PATH.
 *
 * PERFGATE_GPU_TOOL=nvml|nvidia-smi|amd-smi|none forces one (tests use it
 * to put a fake nvidia-smi before a real NVML). The tools are processes:
 * a read takes tens of milliseconds of nvidia-smi and hundreds of
 * amd-smi's Python, so the sampler spaces their reads by their cost
 * (pg_gpu_reader_cost); they run as gpu/gputool_io.h runs them (10 s and
 * 4 MiB of output a read, never again once one hung).
 *
 * One reader is used by one thread at a time.
 */
struct pg_gpu_reader;

/*
 * Open the first tool that answers. Returns NULL when there is none, with
 * note saying what was tried ("no NVML (libnvidia-ml.so.1), nvidia-smi or
 * amd-smi: no GPU telemetry").
 */
struct pg_gpu_reader *pg_gpu_reader_open(char *note, size_t note_size);
void pg_gpu_reader_close(struct pg_gpu_reader *r);

/* "nvml", "nvidia-smi", "amd-smi". */
const char *pg_gpu_reader_source(const struct pg_gpu_reader *r);

/*
 * Sample every GPU: appends to *out (realloc'ed, *n counted). stop (may be
 * NULL) cuts a tool's run short. Returns 0, or -1 with why.
 */
int pg_gpu_reader_read(struct pg_gpu_reader *r, struct pg_gpu_sample **out, size_t *n,
		       const volatile sig_atomic_t *stop, char *why, size_t why_size);

/* The processes holding memory on the GPUs of gpus (n of them, as read).
 * Returns 0, or -1 when the tool cannot say. */
int pg_gpu_reader_procs(struct pg_gpu_reader *r, const struct pg_gpu_sample *gpus, size_t n,
			struct pg_gpu_proc **out, size_t *n_out, const volatile sig_atomic_t *stop);

/* Wall seconds the latest read took (0 for NVML's). */
double pg_gpu_reader_cost(const struct pg_gpu_reader *r);

/* Seconds of tool processes run so far (their wall time: an upper bound
 * on their CPU). */
double pg_gpu_reader_tool_seconds(const struct pg_gpu_reader *r);

#endif
