#include "gpu/gputool_io.h"

#include "base/buf.h"
#include "base/error.h"
#include "sys/proc.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

/* The tools whose hangs are remembered; any other name runs every time. */
static const char *const remembered[] = { "nvidia-smi", "amd-smi" };
static atomic_bool hung[sizeof(remembered) / sizeof(remembered[0])];

static atomic_bool *hung_flag(const char *tool)
{
	for (size_t i = 0; i < sizeof(remembered) / sizeof(remembered[0]); i++)
		if (!strcmp(tool, remembered[i]))
			return &hung[i];
	return NULL;
}

int pg_gpu_tool_run(char *const *argv, const volatile sig_atomic_t *stop, struct pg_buf *out,
		    char *why, size_t why_size)
{
	struct pg_error err = PG_ERROR_INIT;
	atomic_bool *flag = hung_flag(argv[0]);
	bool cut = false;
	int st = 0, rc;

	if (flag && atomic_load(flag)) {
		snprintf(why, why_size,
			 "%s hung earlier in this run (no answer within %g s): not run again",
			 argv[0], PG_GPU_TOOL_TIMEOUT);
		return -1;
	}
	rc = pg_proc_capture(argv, PG_GPU_TOOL_TIMEOUT, PG_GPU_TOOL_MAX_BYTES, stop, out, &cut, &st,
			     &err);
	if (rc == PG_EINFRA) {
		/* the deadline passed: the only PG_EINFRA pg_proc_capture has */
		if (flag)
			atomic_store(flag, true);
		snprintf(why, why_size, "%.200s: not run again in this run", err.msg);
		return -1;
	}
	if (rc) {
		snprintf(why, why_size, "%.200s", err.msg);
		return -1;
	}
	if (cut) {
		snprintf(why, why_size, "%s wrote more than %zu MiB: cut there and not read",
			 argv[0], PG_GPU_TOOL_MAX_BYTES >> 20);
		return -1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		struct pg_buf how = PG_BUF_INIT;
		pg_proc_describe(&how, st);
		snprintf(why, why_size, "%s %s", argv[0], how.ptr);
		pg_buf_release(&how);
		return -1;
	}
	return 0;
}
