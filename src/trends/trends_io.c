#include "trends/trends_io.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/strutil.h"
#include "baseline/history.h"
#include "baseline/history_io.h"
#include "baseline/thresholds_io.h"
#include "report/charts.h"
#include "base/tasks.h"
#include "sys/fsutil.h"
#include "sys/threads.h"
#include "trends/trends.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A page: written plainly, not atomically (a site is regenerated whole;
 * 10,000 fsyncs would cost more than the rendering). */
static int write_page(const char *dir, const char *name, const struct pg_buf *b,
		      struct pg_trends_written *w, struct pg_error *err)
{
	char *path = pg_path_join(dir, name);
	/* O_NOFOLLOW: a planted symlink in the results directory is not
	 * written through */
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
	bool written = f && fwrite(b->ptr, 1, b->len, f) == b->len;
	int rc = 0;

	/* one fclose whatever happened: it closes fd too */
	if (f ? fclose(f) != 0 || !written : true)
		rc = pg_error_set(err, PG_EINFRA, "%s: %s", path, strerror(errno));
	if (!f && fd >= 0)
		close(fd);
	free(path);
	w->pages++;
	w->bytes += b->len;
	return rc;
}

/* The point pages, a task each. */
struct points_job {
	const struct pg_trends_gpu *t;
	const char *dir;
	struct pg_buf *page;         /* per worker */
	struct pg_trends_written *w; /* per worker: pages, bytes */
	struct pg_task_errors errs;
};

static void point_task(void *ctx, size_t i, unsigned worker)
{
	struct points_job *j = ctx;
	struct pg_buf *page = &j->page[worker];
	struct pg_error e = PG_ERROR_INIT;

	if (pg_task_errors_skip(&j->errs, i))
		return;
	pg_buf_reset(page);
	pg_trends_point(page, j->t, i);
	if (write_page(j->dir, j->t->files[i], page, &j->w[worker], &e))
		pg_task_errors_set(&j->errs, i, worker, &e);
}

static int write_points(const struct pg_trends_gpu *t, const char *dir,
			const struct pg_tasks *tasks, struct pg_trends_written *w,
			struct pg_error *err)
{
	unsigned nw = pg_tasks_workers(tasks);
	struct points_job j = { .t = t,
				.dir = dir,
				.page = pg_xcalloc(nw, sizeof(*j.page)),
				.w = pg_xcalloc(nw, sizeof(*j.w)) };

	pg_task_errors_init(&j.errs, tasks, t->n);
	pg_tasks_run(tasks, t->n, point_task, &j);
	for (unsigned k = 0; k < nw; k++) {
		w->pages += j.w[k].pages;
		w->bytes += j.w[k].bytes;
		pg_buf_release(&j.page[k]);
	}
	free(j.page);
	free(j.w);
	return pg_task_errors_release(&j.errs, err);
}

static int render_gpu(const struct pg_trends_opts *o, const char *gpu, const char *dir_name,
		      const struct pg_tasks *tasks, struct pg_trends_entry *entry,
		      struct pg_trends_written *w, struct pg_error *err)
{
	struct pg_history *hs = NULL;
	struct pg_history_ab_read ab = { 0 };
	struct pg_history_pool *pool;
	size_t n = 0;
	struct pg_policy policy;
	struct pg_history_analysis an = { 0 };
	struct pg_baseline base = PG_BASELINE_INIT;
	struct pg_comparison cmp = PG_COMPARISON_INIT;
	struct pg_trends_gpu t = { 0 };
	struct pg_buf page = PG_BUF_INIT, src = PG_BUF_INIT;
	char *dir = pg_path_join(o->out_dir, dir_name), *pdir = pg_path_join(dir, "p");
	const struct pg_policy *pol = o->policy ? o->policy : &policy;
	bool with_current = o->current && o->current_gpu && !strcmp(o->current_gpu, gpu);
	size_t last;
	int rc;

	/* every run of every point: interned strings, the kept medians */
	pool = pg_history_pool_new();
	pg_policy_init(&policy);
	if ((!o->policy && (rc = pg_thresholds_load_policy(&policy, o->thresholds, gpu, err))) ||
	    (rc = pg_history_read(
		     &hs, &n, gpu, NULL,
		     &(struct pg_history_opts){ .repo = o->repo,
						.ref = o->ref,
						.slim = true,
						.pool = pool,
						.tasks = tasks,
						.ab = o->ab_repo ? NULL : &ab,
						/* with a run to compare, every metric the
					   * gate compares */
						.slim_policy = with_current ? NULL : pol },
		     err)) ||
	    (rc = pg_mkdir_p(o->one_page_only ? dir : pdir, err)))
		goto done;
	/* A/B lines (read with the runs, from the same tip, unless they have
	 * a repository of their own) are shown, never judged, and written
	 * from any branch by whatever perfgate its pipeline pins: one this
	 * version cannot read (a newer format, a broken line) leaves them
	 * out, with a warning, rather than main's site */
	if (o->ab_repo &&
	    pg_history_read_ab(&ab.v, &ab.n, gpu,
			       &(struct pg_history_opts){ .repo = o->ab_repo, .ref = o->ref },
			       &ab.err)) {
		ab.v = NULL;
		ab.n = 0;
	}
	if (ab.err.code && o->progress)
		fprintf(o->progress, "perfgate trends: %s: A/B results not shown: %s\n", gpu,
			ab.err.msg);
	/* the change points (steps and creep) of the last runs, over the
	 * span the gate looks at by default (its change-point search grows
	 * with the square of the runs); the gate's windows as it builds them
	 * for a run of main's tip */
	last = o->last >= 0 ? (size_t)o->last : pg_history_baseline_span(pol);
	pg_history_analyse_tasks(&an, hs, n, NULL, pol, last, true, tasks);
	base.gpu = pg_xstrdup(gpu);
	base.kind = pg_xstrdup("git");
	/* the same span: the gate's analysis is this one without the creep */
	if (last == pg_history_baseline_span(pol))
		pg_history_baseline_build_from(&base, hs, n, pol, &an);
	else
		pg_history_baseline_build(&base, hs, n, NULL, pol);
	pg_baseline_sort(&base);
	pg_buf_printf(&src, "%s%s%s", o->repo ? o->repo : "", o->repo ? " " : "",
		      o->ref ? o->ref : PG_HISTORY_DEFAULT_REF);
	base.source = pg_xstrdup(src.ptr);
	if (with_current && !o->decided)
		pg_compare(&cmp, pol, &base, o->current, o->n_current, NULL, 0,
			   &(struct pg_compare_opts){ .allow_missing = true });
	if (with_current) {
		const struct pg_comparison *c = o->decided ? o->decided : &cmp;
		for (size_t r = 0; r < c->n; r++)
			if (c->rows[r].metric && c->rows[r].metric->gated &&
			    pg_baseline_find(&base, c->rows[r].point))
				w->current_drawn++;
	}
	t = (struct pg_trends_gpu){ .gpu = gpu,
				    .source = src.ptr,
				    .hs = hs,
				    .n = n,
				    .a = &an,
				    .base = &base,
				    .policy = pol,
				    .cmp = !with_current ? NULL
					   : o->decided  ? o->decided
							 : &cmp,
				    .current_name = o->current_name,
				    .ab = ab.v,
				    .n_ab = ab.n };
	pg_trends_gpu_prepare(&t);
	pg_trends_one_page(&page, &t);
	if ((rc = write_page(dir, "all.html", &page, w, err)))
		goto done;
	pg_buf_reset(&page);
	if (o->one_page_only)
		goto written;
	pg_trends_overview(&page, &t);
	if (page.len > w->overview_max)
		w->overview_max = page.len;
	if ((rc = write_page(dir, "index.html", &page, w, err)))
		goto done;
	pg_buf_reset(&page);
	pg_trends_points(&page, &t);
	if ((rc = write_page(dir, "points.html", &page, w, err)))
		goto done;
	if ((rc = write_points(&t, dir, tasks, w, err)))
		goto done;
written:
	w->gpus++;
	w->points += n;
	entry->points = n;
	entry->jobs = an.n_jobs;
	entry->flagged = t.n_flagged;
	entry->first_date = an.n_jobs && an.jobs[0].date ? pg_xstrdup(an.jobs[0].date) : NULL;
	entry->last_date = an.n_jobs && an.jobs[an.n_jobs - 1].date
				   ? pg_xstrdup(an.jobs[an.n_jobs - 1].date)
				   : NULL;
	if (o->progress)
		fprintf(o->progress, "perfgate trends: %s: %zu test point%s, %zu run%s\n", gpu, n,
			n == 1 ? "" : "s", an.n_jobs, an.n_jobs == 1 ? "" : "s");
done:
	pg_trends_gpu_release(&t);
	pg_comparison_release(&cmp);
	pg_baseline_release(&base);
	pg_history_analysis_release(&an);
	for (size_t i = 0; i < n; i++)
		pg_history_release(&hs[i]);
	free(hs);
	for (size_t i = 0; i < ab.n; i++)
		pg_history_ab_release(&ab.v[i]);
	free(ab.v);
	pg_history_pool_free(pool);
	pg_policy_release(&policy);
	pg_buf_release(&page);
	pg_buf_release(&src);
	free(dir);
	free(pdir);
	return rc;
}

int pg_trends_write(const struct pg_trends_opts *o, struct pg_trends_written *out,
		    struct pg_error *err)
{
	struct pg_strv gpus = PG_STRV_INIT;
	struct pg_trends_entry *entries = NULL;
	struct pg_buf page = PG_BUF_INIT;
	const char *ref = o->ref ? o->ref : PG_HISTORY_DEFAULT_REF;
	struct pg_tasks tasks;
	size_t k = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	pg_threads_tasks(&tasks, o->jobs ? o->jobs : pg_threads_online());
	if ((rc = pg_history_gpus(
		     &gpus, &(struct pg_history_opts){ .repo = o->repo, .ref = o->ref }, err)))
		goto done;
	entries = pg_xcalloc(gpus.n ? gpus.n : 1, sizeof(*entries));
	for (size_t g = 0; g < gpus.n; g++) {
		if (o->gpu && strcmp(o->gpu, gpus.v[g]))
			continue;
		entries[k].gpu = gpus.v[g];
		entries[k].dir = pg_trends_gpu_dir(gpus.v[g]);
		if ((rc = render_gpu(o, gpus.v[g], entries[k].dir, &tasks, &entries[k], out,
				     err))) {
			k++;
			goto done;
		}
		k++;
	}
	if (!k) {
		rc = pg_error_set(err, PG_ENOTFOUND, "no recorded runs%s%s in %s%s%s",
				  o->gpu ? " for " : "", o->gpu ? o->gpu : "", ref,
				  o->repo ? " of " : "", o->repo ? o->repo : "");
		goto done;
	}
	if ((rc = pg_mkdir_p(o->out_dir, err)) || o->one_page_only)
		goto done;
	pg_trends_index(&page, entries, k, ref);
	rc = write_page(o->out_dir, "index.html", &page, out, err);
done:
	for (size_t i = 0; i < k; i++) {
		free((char *)entries[i].dir);
		free((char *)entries[i].first_date);
		free((char *)entries[i].last_date);
	}
	free(entries);
	pg_buf_release(&page);
	pg_strv_release(&gpus);
	return rc;
}
