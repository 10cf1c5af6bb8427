#ifndef PERFGATE_BISECT_BISECT_SEARCH_H
#define PERFGATE_BISECT_BISECT_SEARCH_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The search of `perfgate bisect` (docs/bisect.md), without any I/O: which
 * commit to probe next, against which, and what the probes found.
 *
 * The commits are indices 0..n-1 in first-parent order: 0 is the good end,
 * n-1 the bad end. Each probe is an A/B of one commit against the phase's
 * good end, and its outcome is one of
 *
 *   good          the metric did not move (unchanged or improved);
 *   bad           it regressed: the commit carries the change;
 *   skip          the commit cannot be built or started (as git bisect skip);
 *   inconclusive  undecided within the probe's budget.
 *
 * An inconclusive commit is probed again, attempt 1, 2, ... (the driver gives
 * each attempt a larger budget) up to max_attempts; then it is undecided and
 * treated as a skipped one: never guessed. Infrastructure failures are not
 * outcomes: the driver retries them and tells the search nothing.
 *
 * A phase narrows (lo, hi]: lo the last good commit before hi, the first bad
 * one. The next probe is the untested commit of (lo, hi) nearest its middle;
 * when none is left, the change began in (lo, hi]: exactly at hi when
 * hi == lo + 1, else somewhere among hi and the skipped or undecided commits
 * before it. The bad end is assumed bad until the search needs it, and then
 * probed (a confirmation), so a range without a change is said to be one.
 *
 * Two steps: once a phase has found its step at hi < n-1, the bad end is
 * probed against hi (the residual). Bad: there is a further step after hi,
 * and a new phase searches (hi, n-1] against hi. Up to max_steps phases.
 */

enum pg_bisect_outcome {
	PG_BISECT_GOOD,
	PG_BISECT_BAD,
	PG_BISECT_SKIP,
	PG_BISECT_INCONCLUSIVE,
};

/* "good", "bad", "skip", "inconclusive". */
const char *pg_bisect_outcome_name(enum pg_bisect_outcome o);
/* The inverse; -1 when s names none. */
int pg_bisect_outcome_parse(const char *s);

/* What the search knows of a commit in the current phase. */
enum pg_bisect_mark {
	PG_BISECT_UNTESTED,
	PG_BISECT_MARK_GOOD,
	PG_BISECT_MARK_BAD,
	PG_BISECT_ASSUMED_BAD, /* the bad end, not probed yet */
	PG_BISECT_SKIPPED,
	PG_BISECT_UNDECIDED, /* inconclusive max_attempts times */
};

/* Why a probe is run. */
enum pg_bisect_purpose {
	PG_BISECT_SEARCH,   /* a commit inside the range */
	PG_BISECT_CONFIRM,  /* the bad end, which the search came to need */
	PG_BISECT_RESIDUAL, /* the bad end against a step found: a further step? */
};

/* "search", "confirm", "residual". */
const char *pg_bisect_purpose_name(enum pg_bisect_purpose p);

struct pg_bisect_probe {
	size_t commit;  /* probed */
	size_t against; /* the phase's good end */
	size_t attempt; /* 0 first, then one more per inconclusive outcome */
	enum pg_bisect_purpose purpose;
};

/* A step found: the change began in (good, bad]; exact when bad == good + 1. */
struct pg_bisect_step {
	size_t good, bad;
	size_t evidence; /* the index (among the recorded outcomes) of the probe that
			  * marked bad as bad: its change is the step's size */
};

enum pg_bisect_state {
	PG_BISECT_PROBING, /* pg_bisect_next gives the probe */
	PG_BISECT_DONE,
};

/* Why the search ended. */
enum pg_bisect_end {
	PG_BISECT_END_NONE,               /* not ended */
	PG_BISECT_END_FOUND,              /* steps found, no further one */
	PG_BISECT_END_NO_CHANGE,          /* the bad end is not bad against the good end */
	PG_BISECT_END_BAD_UNTESTED,       /* the bad end could not be built, started or decided */
	PG_BISECT_END_MAX_STEPS,          /* max_steps found; the residual still moved */
	PG_BISECT_END_RESIDUAL_UNDECIDED, /* whether a further step follows is open */
};

/* "not ended", "found", "no change", ... (a phrase for reports). */
const char *pg_bisect_end_phrase(enum pg_bisect_end e);

struct pg_bisect_opts {
	size_t max_attempts; /* probes of one commit while inconclusive; default 3 */
	size_t max_steps;    /* phases; default 2 */
};

void pg_bisect_opts_init(struct pg_bisect_opts *o);

struct pg_bisect {
	size_t n;
	struct pg_bisect_opts o;
	enum pg_bisect_state state;
	enum pg_bisect_end end;
	size_t base;               /* the current phase's good end */
	enum pg_bisect_mark *mark; /* [n], this phase's */
	size_t *attempts;          /* [n], this phase's inconclusive outcomes */
	size_t *evidence;          /* [n], the outcome index that marked it */
	bool residual;             /* the phase's step is found; probing the bad end */
	size_t residual_attempts;
	struct pg_bisect_step *steps; /* in the order found */
	size_t n_steps;
	size_t n_outcomes; /* recorded so far */
	struct pg_bisect_probe next;
};

/* n >= 2 commits. Fails (returns -1) only for n < 2. */
int pg_bisect_init(struct pg_bisect *b, size_t n, const struct pg_bisect_opts *o);
void pg_bisect_release(struct pg_bisect *b);

/* The probe to run now; false when done. */
bool pg_bisect_next(const struct pg_bisect *b, struct pg_bisect_probe *out);

/* The outcome of the probe pg_bisect_next gave. */
void pg_bisect_record(struct pg_bisect *b, enum pg_bisect_outcome outcome);

/* The current phase's range: lo the last good commit before hi, the first
 * bad (or assumed bad) one. */
void pg_bisect_range(const struct pg_bisect *b, size_t *lo, size_t *hi);

#endif
