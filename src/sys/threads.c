#include "sys/threads.h"

#include "base/alloc.h"

#include <sched.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

struct run {
	atomic_size_t next;
	size_t n;
	pg_task_fn task;
	void *ctx;
};

struct worker {
	struct run *run;
	unsigned id;
};

static void work(struct run *r, unsigned id)
{
	for (size_t i; (i = atomic_fetch_add(&r->next, 1)) < r->n;)
		r->task(r->ctx, i, id);
}

static void *worker_main(void *arg)
{
	const struct worker *w = arg;

	work(w->run, w->id);
	return NULL;
}

static void threads_run(const struct pg_tasks *t, size_t n, pg_task_fn task, void *ctx)
{
	struct run r = { .n = n, .task = task, .ctx = ctx };
	unsigned extra = t->workers - 1;
	pthread_t *th = pg_xcalloc(extra, sizeof(*th));
	struct worker *ws = pg_xcalloc(extra, sizeof(*ws));
	bool *started = pg_xcalloc(extra, sizeof(*started));

	atomic_init(&r.next, 0);
	for (unsigned k = 0; k < extra; k++) {
		ws[k] = (struct worker){ &r, k + 1 };
		started[k] = pthread_create(&th[k], NULL, worker_main, &ws[k]) == 0;
	}
	work(&r, 0);
	for (unsigned k = 0; k < extra; k++)
		if (started[k])
			pthread_join(th[k], NULL);
	free(th);
	free(ws);
	free(started);
}

void pg_threads_tasks(struct pg_tasks *t, unsigned workers)
{
	t->workers = workers ? workers : 1;
	t->run = threads_run;
}

unsigned pg_threads_online(void)
{
	cpu_set_t set;
	long n;

	/* the CPUs this process may run on (taskset, a cgroup's cpuset), not
	 * every CPU of a large agent; capped, as each worker keeps scratch */
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = CPU_COUNT(&set);
	else
		n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n > PG_THREADS_DEFAULT_MAX)
		n = PG_THREADS_DEFAULT_MAX;
	return n > 0 ? (unsigned)n : 1;
}
