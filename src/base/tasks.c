#include "base/tasks.h"

#include "base/alloc.h"
#include "base/error.h"

#include <stdlib.h>

void pg_tasks_run(const struct pg_tasks *t, size_t n, pg_task_fn task, void *ctx)
{
	if (t && t->run && t->workers > 1 && n > 1) {
		t->run(t, n, task, ctx);
		return;
	}
	for (size_t i = 0; i < n; i++)
		task(ctx, i, 0);
}

unsigned pg_tasks_workers(const struct pg_tasks *t)
{
	return t && t->run && t->workers > 1 ? t->workers : 1;
}

void pg_task_errors_init(struct pg_task_errors *e, const struct pg_tasks *t, size_t n)
{
	e->n = n;
	e->workers = pg_tasks_workers(t);
	e->err = pg_xcalloc(e->workers, sizeof(*e->err));
	e->at = pg_xmalloc(e->workers * sizeof(*e->at));
	for (unsigned k = 0; k < e->workers; k++)
		e->at[k] = n;
	atomic_init(&e->first, n);
}

bool pg_task_errors_skip(struct pg_task_errors *e, size_t i)
{
	return i > atomic_load(&e->first);
}

void pg_task_errors_set(struct pg_task_errors *e, size_t i, unsigned worker,
			const struct pg_error *err)
{
	size_t f = atomic_load(&e->first);

	if (i < e->at[worker]) {
		e->at[worker] = i;
		e->err[worker] = *err;
	}
	while (i < f && !atomic_compare_exchange_weak(&e->first, &f, i))
		;
}

int pg_task_errors_release(struct pg_task_errors *e, struct pg_error *err)
{
	unsigned first = 0;
	int rc = 0;

	for (unsigned k = 1; k < e->workers; k++)
		if (e->at[k] < e->at[first])
			first = k;
	if (e->at[first] < e->n) {
		*err = e->err[first];
		rc = err->code ? err->code : PG_EINFRA;
	}
	free(e->err);
	free(e->at);
	return rc;
}
