/*
 * The native client behind pg_point_fn: the load generator
 * (loadgen/loadgen_io.h), with its progress reports turned into the runner's.
 */
#include "runner/runner_io.h"

#include "loadgen/loadgen_io.h"

struct relay {
	const struct pg_point *pt;
	const struct pg_point_io *io;
};

static void relay_progress(void *ctx, const struct pg_progress *p)
{
	const struct relay *r = ctx;
	struct pg_run_progress q = {
		(long)p->done,
		(long)p->total,
		(long)p->failed,
		p->elapsed_s,
		(double)p->tokens,
		r->pt->test->kind == PG_SUITE_LATENCY ? "iterations" : "requests",
	};
	r->io->progress(r->io->progress_ctx, &q);
}

int pg_runner_native(const struct pg_point *pt, const struct pg_point_io *io, json_t **out,
		     struct pg_error *err)
{
	struct relay relay = { pt, io };
	struct pg_loadgen_opts o = {
		.base_url = io->base_url,
		.api_key = io->api_key,
		.stop = io->stop,
		.progress = io->progress ? relay_progress : NULL,
		.progress_ctx = &relay,
		/* often enough for a live bar and to notice a dead server;
		 * the runner decides what to print */
		.progress_interval_s = 0.2,
		.save_detailed = io->save_detailed,
	};

	*out = NULL;
	if (io->warmup_requests)
		return pg_loadgen_warm_up(pt, &o, io->warmup_requests, io->warmup, err);
	return pg_loadgen_run(pt, &o, out, err);
}
