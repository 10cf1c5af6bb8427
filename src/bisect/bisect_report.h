#ifndef PERFGATE_BISECT_BISECT_REPORT_H
#define PERFGATE_BISECT_BISECT_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/strutil.h"
#include "bisect/bisect_search.h"

struct pg_ab_decision;
struct pg_buf;
struct pg_error;

/*
 * What perfgate bisect did and found (docs/bisect.md), without I/O: each
 * probe's evidence, the log that lets a resumed bisect run no probe twice
 * (bisect-state.json), and the reports (bisect.md, bisect.json).
 */

/* One probe as it ran. */
struct pg_bisect_evidence {
	char *commit, *against; /* full ids */
	size_t attempt;
	enum pg_bisect_purpose purpose;
	int outcome;           /* enum pg_bisect_outcome; -1: an infrastructure failure,
				* retried and not evidence */
	char *metric;          /* the metric whose change is shown; NULL: none */
	double change, lo, hi; /* head/base - 1 as measured, its 95% interval; NAN */
	size_t blocks;
	double seconds;
	char *dir;  /* the probe's A/B files, relative to the output; NULL: none ran */
	char *note; /* why it was skipped or failed; NULL */
};

void pg_bisect_evidence_release(struct pg_bisect_evidence *e);

/* A commit id's first 12 characters, as the reports and file names show
 * it. Returns out. */
const char *pg_bisect_short_id(const char *id, char out[13]);

/* The log of a bisect: what was asked (compared on resume), the commits,
 * the builds, the probes in the order they ran. */
struct pg_bisect_log {
	json_t *config; /* {repo, good, bad, suite, test, metrics, server_command, build,
			 * tolerance, min_blocks, max_blocks, max_attempts, max_steps} */
	struct pg_strv commits, subjects;
	json_t *built; /* {commit: "ok" | "failed: ..."} */
	struct pg_bisect_evidence *probes;
	size_t n_probes;
};

void pg_bisect_log_init(struct pg_bisect_log *l);
void pg_bisect_log_release(struct pg_bisect_log *l);
/* Append a probe (moved in: the log takes its strings). */
void pg_bisect_log_add(struct pg_bisect_log *l, struct pg_bisect_evidence *e);

/* bisect-state.json: {"format": 1, "config", "commits": [{id, subject}],
 * "built", "probes": [...]}. New reference. */
json_t *pg_bisect_log_json(const struct pg_bisect_log *l);
/* The inverse. PG_ECONFIG naming what (the key) is wrong; `where` (the
 * file) starts the message. */
int pg_bisect_log_parse(struct pg_bisect_log *l, const json_t *j, const char *where,
			struct pg_error *err);

/* The recorded outcome of this probe (its last record that is evidence),
 * or -1 when it never ran to an outcome. */
int pg_bisect_log_find(const struct pg_bisect_log *l, const char *commit, const char *against,
		       size_t attempt, const struct pg_bisect_evidence **found);

/*
 * A probe's outcome from its A/B decision: bad when any judged hypothesis
 * regressed, good when every one that applies is unchanged or improved,
 * else inconclusive (pending, inconclusive or missing: never a guess).
 * *shown (may be NULL) gets the index into d->points or, as
 * n_metrics * n_points + j, d->whole of the hypothesis to show: the whole
 * run's when it applies, else the point that moved most towards worse.
 */
enum pg_bisect_outcome pg_bisect_classify(const struct pg_ab_decision *d, const bool *higher_better,
					  size_t *shown);

/*
 * The reports, from the log and the finished (or stopped) search b, whose
 * outcomes are the log's probes with an outcome, in order: the steps (the
 * bigger first) with the change and interval of the probe that marked each
 * bad, the skipped and undecided commits, every probe, and the commands
 * that reproduce the bisect and each step alone (a one-probe bisect of the
 * culprit against the commit before the range).
 */
void pg_bisect_markdown(struct pg_buf *out, const struct pg_bisect_log *l,
			const struct pg_bisect *b);
/* bisect.json: the state file's keys, and finished, end, steps [{exact,
 * culprit {id, subject} | null, last_good, commits, metric, change, lo, hi,
 * probe (1-based), reproduce}], skipped [{commit, note}]. New reference. */
json_t *pg_bisect_json(const struct pg_bisect_log *l, const struct pg_bisect *b);

/*
 * perfgate bisect --pipeline: the Buildkite pipeline that goes on from the
 * state of l and b ({"steps": [...]}, for buildkite-agent pipeline upload).
 * While probes remain: one step on queue that fetches the state file the
 * job before left (from_step: its key; NULL: none), runs the next probe
 * (--local --max-probes 1; its exit 1, no change, goes on) and uploads the
 * step after it (--pipeline), its output kept as artifacts; once done: a
 * step that annotates the build with bisect.md. New reference.
 */
json_t *pg_bisect_pipeline(const struct pg_bisect_log *l, const struct pg_bisect *b,
			   const char *queue, const char *from_step);

#endif
