#include "bench_args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* bench/loadgen --syscalls runs this under `perf stat -D -1 --control
 * fifo:CTL,ACK`: the counters run only while the requests do (not while
 * connections are opened or traces written). */
void bench_perf_ctl(const char *cmd)
{
	const char *ctl = getenv("PERFGATE_BENCH_PERF_CTL"),
		   *ack = getenv("PERFGATE_BENCH_PERF_ACK");
	char reply[16];
	FILE *f;

	if (!ctl || !ack)
		return;
	f = fopen(ctl, "w");
	if (!f)
		return;
	fprintf(f, "%s\n", cmd);
	fclose(f);
	f = fopen(ack, "r");
	if (f) {
		if (!fgets(reply, sizeof(reply), f))
			reply[0] = '\0';
		fclose(f);
	}
}

const char *bench_arg(int argc, char **argv, const char *name, const char *def)
{
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], name))
			return argv[i + 1];
	return def;
}
