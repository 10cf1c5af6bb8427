#ifndef PERFGATE_RUNNER_SLASEARCH_H
#define PERFGATE_RUNNER_SLASEARCH_H

/*
 * The largest concurrency that meets a latency SLA, found as vLLM's
 * driver finds it (ENABLE_ADAPTIVE_CONCURRENCY): after a request rate's
 * static concurrency points, take the last point that passes (p99 TTFT and
 * p99 TPOT within the SLA) below the first that fails and bisect between
 * them; when every static point passes, double beyond the largest up to a
 * cap until one fails, then bisect. At most max_probes extra points. Pure:
 * the runner measures each probe and feeds back whether it passed.
 *
 *   struct pg_sla_walk w;
 *   pg_sla_start(&w, &test->sla_search, static_conc, static_pass, n);
 *   for (long c; (c = pg_sla_next(&w)) > 0;)
 *           pg_sla_feed(&w, c, measure_and_judge(c));
 *   // w.last_pass, w.first_fail: the answer (0 = none)
 */

#include <stdbool.h>
#include <stddef.h>

struct pg_sla_search {
	bool enabled;
	double ttft_ms;       /* p99 TTFT limit, default 3000 (vLLM's SLA_TTFT_MS) */
	double tpot_ms;       /* p99 TPOT limit, default 100 (SLA_TPOT_MS) */
	long max_probes;      /* default 8 (ADAPTIVE_MAX_PROBES) */
	long max_concurrency; /* default 1024 (ADAPTIVE_MAX_CONCURRENCY) */
};

struct pg_sla_walk {
	const struct pg_sla_search *cfg;
	long static_last_pass, static_first_fail; /* 0 = none */
	long last_pass, first_fail;               /* 0 = none */
	long probes;
};

/* conc[i] passed or not (pass[i]); unbounded points (0) are ignored. */
void pg_sla_start(struct pg_sla_walk *w, const struct pg_sla_search *cfg, const long *conc,
		  const bool *pass, size_t n);
/* The next concurrency to probe, or 0 when the search is over. */
long pg_sla_next(const struct pg_sla_walk *w);
void pg_sla_feed(struct pg_sla_walk *w, long conc, bool pass);

#endif
