/*
 * The search of perfgate bisect (bisect/bisect_search.h): marks, the range
 * they leave, the next probe. Pure.
 */
#include "bisect/bisect_search.h"

#include "base/alloc.h"

#include <stdlib.h>
#include <string.h>

static const char *const outcome_names[] = { "good", "bad", "skip", "inconclusive" };

const char *pg_bisect_outcome_name(enum pg_bisect_outcome o)
{
	return (size_t)o < sizeof(outcome_names) / sizeof(*outcome_names) ? outcome_names[o] : "?";
}

int pg_bisect_outcome_parse(const char *s)
{
	for (size_t i = 0; s && i < sizeof(outcome_names) / sizeof(*outcome_names); i++)
		if (!strcmp(s, outcome_names[i]))
			return (int)i;
	return -1;
}

const char *pg_bisect_purpose_name(enum pg_bisect_purpose p)
{
	switch (p) {
	case PG_BISECT_SEARCH:
		return "search";
	case PG_BISECT_CONFIRM:
		return "confirm";
	case PG_BISECT_RESIDUAL:
		return "residual";
	}
	return "?";
}

const char *pg_bisect_end_phrase(enum pg_bisect_end e)
{
	switch (e) {
	case PG_BISECT_END_NONE:
		return "not ended";
	case PG_BISECT_END_FOUND:
		return "found";
	case PG_BISECT_END_NO_CHANGE:
		return "no change: the bad end is not worse than the good end";
	case PG_BISECT_END_BAD_UNTESTED:
		return "the bad end could not be built, started or decided";
	case PG_BISECT_END_MAX_STEPS:
		return "the most steps asked for were found; the bad end still moved after the "
		       "last";
	case PG_BISECT_END_RESIDUAL_UNDECIDED:
		return "whether a further step follows the last one was not decided";
	}
	return "?";
}

void pg_bisect_opts_init(struct pg_bisect_opts *o)
{
	o->max_attempts = 3;
	o->max_steps = 2;
}

void pg_bisect_range(const struct pg_bisect *b, size_t *lo, size_t *hi)
{
	size_t h = b->n, l = b->base;

	for (size_t i = b->base + 1; i < b->n && h == b->n; i++)
		if (b->mark[i] == PG_BISECT_MARK_BAD || b->mark[i] == PG_BISECT_ASSUMED_BAD)
			h = i;
	for (size_t i = b->base; i < h && i < b->n; i++)
		if (b->mark[i] == PG_BISECT_MARK_GOOD)
			l = i;
	*lo = l;
	*hi = h;
}

static void finish(struct pg_bisect *b, enum pg_bisect_end end)
{
	b->state = PG_BISECT_DONE;
	b->end = end;
}

/* The untested commit of (lo, hi) nearest the middle (the lower of two),
 * or hi when none is left. */
static size_t middle(const struct pg_bisect *b, size_t lo, size_t hi)
{
	size_t best = hi, twice_mid = lo + hi;
	size_t best_dist = (size_t)-1;

	for (size_t i = lo + 1; i < hi; i++) {
		size_t dist;
		if (b->mark[i] != PG_BISECT_UNTESTED)
			continue;
		dist = 2 * i > twice_mid ? 2 * i - twice_mid : twice_mid - 2 * i;
		if (dist < best_dist) {
			best = i;
			best_dist = dist;
		}
	}
	return best;
}

/* Decide what comes next after a change of marks. */
static void advance(struct pg_bisect *b)
{
	size_t lo, hi, pick;

	if (b->state == PG_BISECT_DONE)
		return;
	if (b->residual) {
		b->next = (struct pg_bisect_probe){ b->n - 1, b->steps[b->n_steps - 1].bad,
						    b->residual_attempts, PG_BISECT_RESIDUAL };
		return;
	}
	pg_bisect_range(b, &lo, &hi);
	if (hi == b->n) {
		/* nothing bad left: the bad end itself was not */
		finish(b, b->mark[b->n - 1] == PG_BISECT_MARK_GOOD ? PG_BISECT_END_NO_CHANGE
								   : PG_BISECT_END_BAD_UNTESTED);
		return;
	}
	pick = middle(b, lo, hi);
	if (pick != hi) {
		b->next = (struct pg_bisect_probe){ pick, b->base, b->attempts[pick],
						    PG_BISECT_SEARCH };
		return;
	}
	if (b->mark[hi] == PG_BISECT_ASSUMED_BAD) {
		b->next = (struct pg_bisect_probe){ hi, b->base, b->attempts[hi],
						    PG_BISECT_CONFIRM };
		return;
	}
	b->steps = pg_xrealloc(b->steps, (b->n_steps + 1) * sizeof(*b->steps));
	b->steps[b->n_steps++] = (struct pg_bisect_step){ lo, hi, b->evidence[hi] };
	if (hi == b->n - 1) {
		finish(b, PG_BISECT_END_FOUND);
		return;
	}
	b->residual = true;
	b->residual_attempts = 0;
	advance(b);
}

int pg_bisect_init(struct pg_bisect *b, size_t n, const struct pg_bisect_opts *o)
{
	memset(b, 0, sizeof(*b));
	if (n < 2)
		return -1;
	b->n = n;
	if (o)
		b->o = *o;
	else
		pg_bisect_opts_init(&b->o);
	if (!b->o.max_attempts)
		b->o.max_attempts = 1;
	if (!b->o.max_steps)
		b->o.max_steps = 1;
	b->mark = pg_xcalloc(n, sizeof(*b->mark));
	b->attempts = pg_xcalloc(n, sizeof(*b->attempts));
	b->evidence = pg_xcalloc(n, sizeof(*b->evidence));
	b->mark[0] = PG_BISECT_MARK_GOOD;
	b->mark[n - 1] = PG_BISECT_ASSUMED_BAD;
	b->state = PG_BISECT_PROBING;
	advance(b);
	return 0;
}

void pg_bisect_release(struct pg_bisect *b)
{
	free(b->mark);
	free(b->attempts);
	free(b->evidence);
	free(b->steps);
	memset(b, 0, sizeof(*b));
}

bool pg_bisect_next(const struct pg_bisect *b, struct pg_bisect_probe *out)
{
	if (b->state != PG_BISECT_PROBING)
		return false;
	*out = b->next;
	return true;
}

/* A further step follows the one found: search (step, n-1] against it. */
static void next_phase(struct pg_bisect *b, size_t outcome_index)
{
	size_t base = b->steps[b->n_steps - 1].bad;

	b->residual = false;
	b->base = base;
	for (size_t i = 0; i < b->n; i++) {
		b->mark[i] = PG_BISECT_UNTESTED;
		b->attempts[i] = 0;
		b->evidence[i] = 0;
	}
	b->mark[base] = PG_BISECT_MARK_GOOD;
	b->mark[b->n - 1] = PG_BISECT_MARK_BAD;
	b->evidence[b->n - 1] = outcome_index;
}

static void record_residual(struct pg_bisect *b, enum pg_bisect_outcome outcome, size_t k)
{
	switch (outcome) {
	case PG_BISECT_GOOD:
		finish(b, PG_BISECT_END_FOUND);
		return;
	case PG_BISECT_BAD:
		if (b->n_steps >= b->o.max_steps)
			finish(b, PG_BISECT_END_MAX_STEPS);
		else
			next_phase(b, k);
		return;
	case PG_BISECT_INCONCLUSIVE:
		if (++b->residual_attempts < b->o.max_attempts)
			return;
		finish(b, PG_BISECT_END_RESIDUAL_UNDECIDED);
		return;
	case PG_BISECT_SKIP:
		/* it was built and started before: nothing to learn now */
		finish(b, PG_BISECT_END_RESIDUAL_UNDECIDED);
		return;
	}
}

void pg_bisect_record(struct pg_bisect *b, enum pg_bisect_outcome outcome)
{
	size_t k = b->n_outcomes++, c = b->next.commit;

	if (b->state != PG_BISECT_PROBING)
		return;
	if (b->next.purpose == PG_BISECT_RESIDUAL) {
		record_residual(b, outcome, k);
		advance(b);
		return;
	}
	switch (outcome) {
	case PG_BISECT_GOOD:
		b->mark[c] = PG_BISECT_MARK_GOOD;
		break;
	case PG_BISECT_BAD:
		b->mark[c] = PG_BISECT_MARK_BAD;
		b->evidence[c] = k;
		break;
	case PG_BISECT_SKIP:
		b->mark[c] = PG_BISECT_SKIPPED;
		break;
	case PG_BISECT_INCONCLUSIVE:
		if (++b->attempts[c] >= b->o.max_attempts)
			b->mark[c] = PG_BISECT_UNDECIDED;
		break;
	}
	advance(b);
}
