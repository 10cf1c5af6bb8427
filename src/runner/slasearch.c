#include "runner/slasearch.h"

void pg_sla_start(struct pg_sla_walk *w, const struct pg_sla_search *cfg, const long *conc,
		  const bool *pass, size_t n)
{
	long first_fail = 0, last_pass = 0;

	for (size_t i = 0; i < n; i++)
		if (conc[i] > 0 && !pass[i] && (!first_fail || conc[i] < first_fail))
			first_fail = conc[i];
	/* the last pass below the first failure: a pass above it is noise */
	for (size_t i = 0; i < n; i++)
		if (conc[i] > 0 && pass[i] && conc[i] > last_pass &&
		    (!first_fail || conc[i] < first_fail))
			last_pass = conc[i];
	*w = (struct pg_sla_walk){ cfg, last_pass, first_fail, last_pass, first_fail, 0 };
}

long pg_sla_next(const struct pg_sla_walk *w)
{
	if (w->probes >= w->cfg->max_probes)
		return 0;
	if (!w->first_fail) {
		/* everything so far passed: double, up to the cap */
		long next = w->last_pass * 2;

		if (!w->last_pass || w->last_pass >= w->cfg->max_concurrency)
			return 0;
		return next > w->cfg->max_concurrency ? w->cfg->max_concurrency : next;
	}
	if (w->first_fail - w->last_pass <= 1)
		return 0;
	return w->last_pass + (w->first_fail - w->last_pass) / 2;
}

void pg_sla_feed(struct pg_sla_walk *w, long conc, bool pass)
{
	w->probes++;
	if (pass && conc > w->last_pass)
		w->last_pass = conc;
	if (!pass && (!w->first_fail || conc < w->first_fail))
		w->first_fail = conc;
}
