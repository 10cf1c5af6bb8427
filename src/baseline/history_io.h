#ifndef PERFGATE_BASELINE_HISTORY_IO_H
#define PERFGATE_BASELINE_HISTORY_IO_H

#include <stddef.h>

#include "gate/compare.h"
#include "baseline/history.h"
#include "baseline/history_ab.h"
#include "base/strutil.h"

#include "base/error.h"

struct pg_tasks;

/* A GPU's A/B results read with its runs (pg_history_opts.ab): v[0..n)
 * as pg_history_read_ab returns them (caller releases each and frees v),
 * or none and err set when they could not be read. */
struct pg_history_ab_read {
	struct pg_history_ab *v;
	size_t n;
	struct pg_error err;
};

/*
 * The run history in git (libgit2): a ref (default refs/perfgate/history)
 * whose tree holds <gpu>/<point>.jsonl files (format: baseline/history.h), one
 * commit per recorded run. The repository is the current one (found from
 * the working directory), a local path (also as a file:// URL), or a URL
 * (https://, ssh://, git://, user@host:path) that is fetched into a
 * temporary bare repository and pushed back.
 *
 * Concurrent writers never lose a record. A local ref is moved with a
 * compare-and-swap on its old value (file:// URLs too: libgit2's local
 * transport would update the ref with force); a remote one by a push
 * without force, which the server refuses when someone else pushed first.
 * Either way the writer fetches the new tip, re-applies its lines on top
 * and tries again, with jittered exponential backoff, until a deadline;
 * after every update it reads the tip back and goes on only when its
 * commit is there (the tip or an ancestor of it). A lock file left by a
 * killed writer (refs/perfgate/history.lock) is recognised -- no perfgate
 * writer is inside an update and it is older than a few seconds -- and
 * removed, with a note naming its age.
 */

#define PG_HISTORY_DEFAULT_REF "refs/perfgate/history"
/* How long a record keeps trying when other writers keep winning (seconds;
 * PERFGATE_HISTORY_TIMEOUT overrides). */
#define PG_HISTORY_DEFAULT_TIMEOUT 300.0

/*
 * Which repository answers questions about source commits (HEAD, the base
 * branch, the merge-base, a --commit name): source_repo when given; else
 * the history repository when it is local and has commits of its own (its
 * HEAD resolves: a clone of the project); else the checkout around the
 * working directory. A URL or a history-only repository cannot answer
 * them, so the checkout does.
 */
struct pg_history_opts {
	const char *repo; /* path or URL; NULL: the repository around the cwd */
	const char *ref;  /* NULL: PG_HISTORY_DEFAULT_REF */
	const char
		*base_branch; /* baseline: NULL: $BUILDKITE_PULL_REQUEST_BASE_BRANCH, else main */
	const char *source_repo; /* see above; NULL: the rule above */
	/* pg_history_read: each point's records keep only their medians
	 * (pg_history_slim), as each file is read; with slim_policy, only
	 * those of the metrics that can fail under it */
	bool slim;
	const struct pg_policy *slim_policy;
	/* pg_history_read: compact records (pg_history_parse_compact, slimmed
	 * under slim_policy) whose strings this pool holds */
	struct pg_history_pool *pool;
	/* pg_history_read: the files read as tasks of this runner (a
	 * repository handle and a pool per worker, joined into pool); NULL:
	 * one at a time */
	const struct pg_tasks *tasks;
	/* pg_history_read: also the GPU's A/B results, from the same tip of
	 * the same opening (a URL's history fetched once, not again by
	 * pg_history_read_ab). Their failure is not pg_history_read's: it is
	 * in ab->err, with none read. NULL: not read */
	struct pg_history_ab_read *ab;
};

/*
 * The git baseline for gpu: per point, the last policy->history_window
 * records whose commit is the merge-base of HEAD and the base branch or one
 * of its ancestors (pg_history_baseline_point), each build once (its last
 * record). Records of commits the source repository does not have
 * (another project, a branch never fetched) are not used, and out->source
 * says how many; in a shallow checkout that is an error (PG_EINFRA naming
 * the file and the commit), never a silently shorter history. A history
 * line this perfgate cannot read is PG_EINFRA naming the file and line.
 * out->kind is "git", out->source says which ref and merge-base.
 */
int pg_history_baseline(struct pg_baseline *out, const char *gpu, const struct pg_policy *policy,
			const struct pg_history_opts *o, struct pg_error *err);

/* Every point's history for gpu (or only `point` when not NULL), sorted by
 * point. Caller releases each and frees the array. */
int pg_history_read(struct pg_history **out, size_t *n, const char *gpu, const char *point,
		    const struct pg_history_opts *o, struct pg_error *err);

/* The A/B results recorded for gpu (<gpu>/ab/<point>.jsonl,
 * baseline/history_ab.h), one per point, sorted by point; none when there
 * are none. A line this perfgate cannot read is PG_EINFRA naming the file,
 * line and key. Caller releases each and frees the array. */
int pg_history_read_ab(struct pg_history_ab **out, size_t *n, const char *gpu,
		       const struct pg_history_opts *o, struct pg_error *err);

/* The GPU keys the history holds (its top-level directories, in tree
 * order), appended to out; none when the ref does not exist. */
int pg_history_gpus(struct pg_strv *out, const struct pg_history_opts *o, struct pg_error *err);

struct pg_history_record_opts {
	const char *repo; /* as in pg_history_opts */
	const char *ref;
	const char *source_repo; /* where a commit name is resolved (pg_history_opts) */
	const char *gpu;         /* the GPU key: the directory in the tree */
	struct pg_history_meta meta;
	double timeout; /* seconds to keep trying; 0: $PERFGATE_HISTORY_TIMEOUT, else
			   * PG_HISTORY_DEFAULT_TIMEOUT */
};

/* What pg_history_record (or pg_history_repair) did. */
struct pg_history_recorded {
	size_t lines;            /* points recorded (repair: lines dropped) */
	size_t replaced;         /* earlier records of the same build replaced */
	int attempts;            /* tries it took (other writers moved the ref) */
	double seconds;          /* from the first try to the last */
	char commit[41];         /* the new history commit ("" when nothing was written) */
	char measured[41];       /* the source commit the lines name */
	struct pg_strv left_out; /* "<point>: <why>" for points not recorded */
	bool none_recordable;    /* every point was left out (nothing was tried) */
	struct pg_strv notes;    /* what else happened: a stale lock removed, a lost
				  * update re-applied */
};

void pg_history_recorded_release(struct pg_history_recorded *r);

/*
 * Append one line per recordable point of run (status ok, not an SLA
 * probe, complete: pg_result_json_incomplete) and commit it to the ref
 * (pushing when the repository is a URL). An earlier record of the same
 * run of a point (the same build: a retried job) is replaced, not added
 * to. The measured commit is o->meta.commit resolved to a full id in the
 * source repository (a name like "HEAD" works), or HEAD there when not
 * given. PG_EINFRA when git fails, the history file has an unreadable
 * line (records are not appended after it: see pg_history_repair), or
 * the deadline passed; PG_ECONFIG for an unknown commit or nothing to
 * record. out is initialised here; release it also on error.
 */
int pg_history_record(const struct pg_cmp_run *run, const struct pg_history_record_opts *o,
		      struct pg_history_recorded *out, struct pg_error *err);

/*
 * An A/B step's results (docs/ab.md), one line per point with a verdict, in
 * <gpu>/ab/<point>.jsonl of the same ref (baseline/history_ab.h): apart
 * from the runs of main, so they never become a baseline. Written as a
 * record is (the same commit loop: compare-and-swap or push, retried;
 * a retried job's line replaced). head is the head side's results (the
 * points' file names and parameters; may hold none); o->meta.commit the
 * head's commit (resolved as pg_history_record does), base_commit and pr
 * (may be NULL) the base's and the pull request's. out->left_out lists
 * the points without a verdict; PG_ECONFIG (none_recordable) when no
 * point has one.
 */
int pg_history_record_ab(const struct pg_ab_summary *ab, const struct pg_cmp_run *head,
			 const struct pg_history_record_opts *o, const char *base_commit,
			 const char *pr, struct pg_history_recorded *out, struct pg_error *err);

/* One finding of pg_history_check. */
struct pg_history_problem {
	char *file;       /* "H100/serving_x_qps_4.jsonl", or the lock file */
	int line;         /* 1-based; 0 for a finding about no line */
	const char *kind; /* "unreadable", "newer format", "duplicate", "stale lock", "lock" */
	char *why;
	char *text;    /* the line, or NULL */
	bool repaired; /* a repair drops (or removes) it */
};

struct pg_history_report {
	char tip[41]; /* the history commit examined ("" when the ref does not exist) */
	size_t gpus, files, records;
	struct pg_history_problem *v;
	size_t n, cap;
	size_t n_fixable; /* problems a repair fixes */
};

void pg_history_report_release(struct pg_history_report *r);

/*
 * perfgate baseline check: every history file of gpu (NULL: all GPUs),
 * its A/B files too, line by line (baseline/history_check.h), and, for a local repository,
 * the ref's lock file (its age; stale when no perfgate writer holds it).
 */
int pg_history_check(struct pg_history_report *out, const char *gpu,
		     const struct pg_history_opts *o, struct pg_error *err);

/*
 * perfgate baseline repair: pg_history_check, then one commit that drops
 * the unreadable lines and the duplicates (a build's last record is kept)
 * and keeps newer-format lines, written like a record (compare-and-swap or
 * push, retried; a stale lock removed). report describes the tip the
 * repair was made on; rec->lines is the number of lines dropped and
 * rec->commit empty when there was nothing to drop.
 */
int pg_history_repair(struct pg_history_report *report, struct pg_history_recorded *rec,
		      const char *gpu, const struct pg_history_opts *o, double timeout,
		      struct pg_error *err);

#endif
