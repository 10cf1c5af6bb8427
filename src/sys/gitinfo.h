#ifndef PERFGATE_SYS_GITINFO_H
#define PERFGATE_SYS_GITINFO_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct pg_buf;
struct pg_error;

/*
 * Which code a result measured: the repository containing `path` (usually
 * the working directory), read with libgit2.
 */
struct pg_git_info {
	char commit[41]; /* HEAD's commit id, "" when HEAD has no commit yet */
	char *branch;    /* "main"; on a detached HEAD (Buildkite checks out
	                    * commits) $BUILDKITE_BRANCH when set, else NULL */
	bool dirty;      /* tracked files differ from HEAD (index or work
	                    * tree); untracked files (results/) do not count */
};

#define PG_GIT_INFO_INIT                                                                           \
	{                                                                                          \
		{ 0 }, NULL, false                                                                 \
	}

/* PG_ENOTFOUND when path is not inside a repository; PG_EINFRA when the
 * repository cannot be read (the message says why). */
int pg_git_info_read(struct pg_git_info *out, const char *path, struct pg_error *err);
void pg_git_info_release(struct pg_git_info *g);

/* {"commit", "branch", "dirty"} with null for unknown parts; new reference. */
json_t *pg_git_info_json(const struct pg_git_info *g);

/* The working tree of the repository around path, resolved (realpath),
 * without a trailing '/'; NULL when path is in none (or in a bare one).
 * Caller frees. */
char *pg_git_workdir(const char *path);

/*
 * A pull request's base: the merge-base of HEAD and branch in the
 * repository around path (branch as origin/<branch>, else the local
 * branch, else any revision). hex gets the commit. PG_EINFRA when the
 * branch or the merge-base is not there, saying why (a shallow checkout,
 * a branch never fetched).
 */
int pg_git_merge_base(char hex[41], const char *path, const char *branch, struct pg_error *err);

/*
 * The commits of a bisect (perfgate bisect): good, then every commit after
 * it on bad's first-parent line up to bad, oldest first, as full ids in
 * ids and their subjects (first lines) in subjects. PG_ECONFIG when a
 * revision is unknown or good is not on bad's first-parent line;
 * PG_EINFRA when the repository cannot be read.
 */
struct pg_strv;
int pg_git_first_parent_range(struct pg_strv *ids, struct pg_strv *subjects, const char *path,
			      const char *good, const char *bad, struct pg_error *err);

/* branch's commit in repo: origin's copy first (CI checkouts are detached
 * and often lack the local branch), then the local branch, then any
 * revision. 0, or libgit2's error (its message cleared). */
struct git_repository;
struct git_oid;
int pg_git_resolve_branch(struct git_repository *repo, const char *branch, struct git_oid *out);

/*
 * The path of file (relative to the cwd, or absolute; any spelling: links,
 * /proc/self/cwd) inside the working tree of the checkout around the cwd,
 * as sys/fsutil.h pg_path_under finds it; NULL when it lies outside, or
 * the cwd is in no checkout. A new string.
 */
char *pg_git_checkout_path(const char *file);

/*
 * The content of `file` (a path in the working tree of the checkout around
 * the cwd, by any spelling: pg_git_checkout_path) as commit rev has it,
 * following the links inside the commit's tree; whatever the working tree
 * holds at that path now (a link out of it, a submodule) does not count. *relpath (caller frees;
 * may be NULL) gets its path in the repository. PG_ENOTFOUND when rev has
 * no such file; *outside is true (and nothing is read) when the file is
 * not inside a repository's working tree at all.
 */
int pg_git_read_at(struct pg_buf *out, bool *outside, char **relpath, const char *rev,
		   const char *file, struct pg_error *err);

/*
 * A unified diff from old to new, both named path ("a/path", "b/path"),
 * appended to out; *added and *removed get the line counts.
 */
void pg_git_diff_text(struct pg_buf *out, size_t *added, size_t *removed, const char *path,
		      const char *old, size_t old_len, const char *new_text, size_t new_len);

#endif
