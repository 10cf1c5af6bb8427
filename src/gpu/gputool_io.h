#ifndef PERFGATE_GPU_GPUTOOL_IO_H
#define PERFGATE_GPU_GPUTOOL_IO_H

#include <signal.h>
#include <stddef.h>

struct pg_buf;

/*
 * The GPU vendors' command-line tools (nvidia-smi, amd-smi), run the one
 * way every caller needs (GPU detection, the idle wait, telemetry):
 *
 *  - at most PG_GPU_TOOL_TIMEOUT seconds a call;
 *  - at most PG_GPU_TOOL_MAX_BYTES of output (a few KiB on an 8-GPU node):
 *    a tool that writes more is stopped there and its output not read;
 *  - a tool that once hangs is not run again by this process: a wedged
 *    driver does not answer the next call either, and each call would cost
 *    the whole timeout (a one-point run took 42 s instead of 3).
 *
 * Safe to call from the sampler's thread and the runner's at once.
 */
#define PG_GPU_TOOL_TIMEOUT   10.0
#define PG_GPU_TOOL_MAX_BYTES ((size_t)4 << 20)

/*
 * Run argv (argv[0] a tool's name, found on PATH) with its stdout appended
 * to out. stop (may be NULL) cuts the run short. Returns 0 when it exited
 * with status 0, else -1 with why: not on PATH, its exit status, hung (now
 * or earlier in this run), its output cut, stopped.
 */
int pg_gpu_tool_run(char *const *argv, const volatile sig_atomic_t *stop, struct pg_buf *out,
		    char *why, size_t why_size);

#endif
