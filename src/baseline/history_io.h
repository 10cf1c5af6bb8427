#ifndef PERFGATE_BASELINE_HISTORY_IO_H
#define PERFGATE_BASELINE_HISTORY_IO_H

#include <stddef.h>

#include "gate/compare.h"
#include "baseline/history.h"

struct pg_error;

/*
 * The run history in git (libgit2): a ref (default refs/perfgate/history)
 * whose tree holds <gpu>/<point>.jsonl files (format: baseline/history.h), one
 * commit per recorded run. The repository is the current one (found from
 * the working directory), a local path, or a URL (https://, ssh://, git://,
 * file://, user@host:path) that is fetched into a temporary bare repository
 * and pushed back.
 *
 * Concurrent writers never lose a record: a local ref is moved with a
 * compare-and-swap on its old value; a remote one by a push without force,
 * which the server refuses when someone else pushed first. Either way the
 * writer fetches the new tip, re-applies its lines on top and tries again,
 * up to max_attempts times.
 */

#define PG_HISTORY_DEFAULT_REF "refs/perfgate/history"

struct pg_history_opts {
	const char *repo; /* path or URL; NULL: the repository around the cwd */
	const char *ref;  /* NULL: PG_HISTORY_DEFAULT_REF */
	const char
		*base_branch; /* baseline: NULL: $BUILDKITE_PULL_REQUEST_BASE_BRANCH, else main */
	const char *source_repo; /* baseline: where HEAD and the base branch are; NULL: cwd */
};

/*
 * The git baseline for gpu: per point, the last policy->history_window
 * records whose commit is the merge-base of HEAD and the base branch or one
 * of its ancestors (pg_history_baseline_point). Records of commits the
 * source repository does not have (a shallow clone, another project) are
 * not used. out->kind is "git", out->source says which ref and merge-base.
 */
int pg_history_baseline(struct pg_baseline *out, const char *gpu, const struct pg_policy *policy,
			const struct pg_history_opts *o, struct pg_error *err);

/* Every point's history for gpu (or only `point` when not NULL), sorted by
 * point. Caller releases each and frees the array. */
int pg_history_read(struct pg_history **out, size_t *n, const char *gpu, const char *point,
		    const struct pg_history_opts *o, struct pg_error *err);

struct pg_history_record_opts {
	const char *repo; /* as in pg_history_opts */
	const char *ref;
	const char *gpu; /* the GPU key: the directory in the tree */
	struct pg_history_meta meta;
	int max_attempts; /* 0: 10 */
};

/* What pg_history_record did. */
struct pg_history_recorded {
	size_t lines;      /* points recorded */
	int attempts;      /* tries it took (other writers moved the ref) */
	char commit[41];   /* the new history commit */
	char measured[41]; /* the source commit the lines name */
};

/*
 * Append one line per "ok" point of run and commit it to the ref (pushing
 * when the repository is a URL). The measured commit is o->meta.commit
 * resolved to a full id in the repository around the cwd (a name like
 * "HEAD" works), or HEAD there when not given. PG_EINFRA when git fails or
 * every attempt was rejected; PG_ECONFIG for an unknown commit.
 */
int pg_history_record(const struct pg_cmp_run *run, const struct pg_history_record_opts *o,
		      struct pg_history_recorded *out, struct pg_error *err);

#endif
