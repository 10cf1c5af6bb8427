#ifndef PERFGATE_BASE_TASKS_H
#define PERFGATE_BASE_TASKS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * Independent tasks 0..n-1, run in order or several at once: how a pure
 * module (the trends' analyses, their pages) lets its caller spread work
 * over the cores without starting threads itself. The caller gives a
 * runner (sys/threads.h: pg_threads_tasks); NULL, or one worker, runs the
 * tasks in order on the calling thread.
 *
 * A task is task(ctx, i, worker): worker (0..pg_tasks_workers()-1) names
 * the thread running it, for scratch of its own (a buffer, a repository
 * handle); no two tasks run on the same worker at once. Tasks may run in
 * any order: a result that must not depend on the number of workers is
 * written to slot i, never appended.
 */
typedef void (*pg_task_fn)(void *ctx, size_t i, unsigned worker);

struct pg_tasks {
	unsigned workers; /* at least 1 */
	void (*run)(const struct pg_tasks *t, size_t n, pg_task_fn task, void *ctx);
};

/* Every task, on t's workers (in order on this thread when t is NULL). */
void pg_tasks_run(const struct pg_tasks *t, size_t n, pg_task_fn task, void *ctx);

/* How many workers pg_tasks_run may use: what per-worker scratch to make. */
unsigned pg_tasks_workers(const struct pg_tasks *t);

/*
 * The first failure in task order, whatever ran the tasks and in what
 * order: each worker keeps the error of its first failed task, and tasks
 * after a failure are skipped (pg_task_errors_skip), those before it still
 * run, so the error reported is the one a single worker would have met.
 */
struct pg_error;
struct pg_task_errors {
	atomic_size_t first; /* the first failed task found so far, or n */
	size_t n;
	struct pg_error *err; /* per worker */
	size_t *at;           /* per worker: its first failed task, or n */
	unsigned workers;
};

void pg_task_errors_init(struct pg_task_errors *e, const struct pg_tasks *t, size_t n);
/* Task i comes after a failure: nothing left to do. */
bool pg_task_errors_skip(struct pg_task_errors *e, size_t i);
/* Task i failed with err. */
void pg_task_errors_set(struct pg_task_errors *e, size_t i, unsigned worker,
			const struct pg_error *err);
/* The first failure's code into *err (0: none failed), and e freed. */
int pg_task_errors_release(struct pg_task_errors *e, struct pg_error *err);

#endif
