/* What the bench drivers share: their --name value arguments and the
 * perf stat control that limits counting to the measured part. */
#ifndef PERFGATE_BENCH_ARGS_H
#define PERFGATE_BENCH_ARGS_H

/* The value after `name` in argv, or def. */
const char *bench_arg(int argc, char **argv, const char *name, const char *def);

/* Send cmd ("enable", "disable") to the perf stat control fifo named by
 * $PERFGATE_BENCH_PERF_CTL and wait for its ack; nothing without it. */
void bench_perf_ctl(const char *cmd);

#endif
