#ifndef PERFGATE_SYS_GITINFO_H
#define PERFGATE_SYS_GITINFO_H

#include <jansson.h>
#include <stdbool.h>

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

#endif
