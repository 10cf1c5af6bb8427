#ifndef PERFGATE_SYS_THREADS_H
#define PERFGATE_SYS_THREADS_H

#include "base/tasks.h"

/*
 * A pg_tasks runner (base/tasks.h) on POSIX threads: each run starts
 * workers - 1 threads beside the calling one (worker 0), which take the
 * next task from a shared counter until none is left, and returns when
 * every task is done. A thread that cannot be started leaves its share to
 * the others (worse only in time).
 */
void pg_threads_tasks(struct pg_tasks *t, unsigned workers);

/* --jobs's default: the CPUs this process may run on (at least 1, at most
 * PG_THREADS_DEFAULT_MAX). */
#define PG_THREADS_DEFAULT_MAX 16
unsigned pg_threads_online(void);

#endif
