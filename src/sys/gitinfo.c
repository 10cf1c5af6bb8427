#include "sys/gitinfo.h"

#include "base/alloc.h"
#include "base/error.h"

#include <git2.h>
#include <stdlib.h>
#include <string.h>

static int git_fail(struct pg_error *err, const char *what)
{
	const git_error *e = git_error_last();
	return pg_error_set(err, PG_EINFRA, "git: %s: %s", what,
			    e && e->message ? e->message : "failed");
}

int pg_git_info_read(struct pg_git_info *out, const char *path, struct pg_error *err)
{
	git_buf root = { 0 };
	git_repository *repo = NULL;
	git_reference *head = NULL;
	git_status_list *status = NULL;
	git_status_options opts = GIT_STATUS_OPTIONS_INIT;
	const char *env_branch = getenv("BUILDKITE_BRANCH");
	int rc, ret = 0;

	memset(out, 0, sizeof(*out));
	rc = git_repository_discover(&root, path, 0, NULL);
	if (rc == GIT_ENOTFOUND) {
		ret = pg_error_set(err, PG_ENOTFOUND, "%s is not in a git repository", path);
		goto done;
	}
	if (rc || git_repository_open(&repo, root.ptr)) {
		ret = git_fail(err, path);
		goto done;
	}
	if (git_repository_is_bare(repo)) {
		ret = pg_error_set(err, PG_ENOTFOUND, "%s is a bare repository", path);
		goto done;
	}
	rc = git_repository_head(&head, repo);
	if (rc == 0) {
		const git_oid *oid = git_reference_target(head);
		if (oid)
			git_oid_tostr(out->commit, sizeof(out->commit), oid);
		if (git_reference_is_branch(head))
			out->branch = pg_xstrdup(git_reference_shorthand(head));
	} else if (rc == GIT_EUNBORNBRANCH) {
		git_reference *sym = NULL;
		/* no commit yet: the branch HEAD points at is still known */
		if (!git_reference_lookup(&sym, repo, "HEAD") &&
		    git_reference_type(sym) == GIT_REFERENCE_SYMBOLIC) {
			const char *t = git_reference_symbolic_target(sym);
			if (t && !strncmp(t, "refs/heads/", 11))
				out->branch = pg_xstrdup(t + 11);
		}
		git_reference_free(sym);
	} else if (rc != GIT_ENOTFOUND) {
		ret = git_fail(err, "HEAD");
		goto done;
	}
	if (!out->branch && env_branch && *env_branch)
		out->branch = pg_xstrdup(env_branch);

	opts.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	opts.flags = GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
	if (git_status_list_new(&status, repo, &opts)) {
		ret = git_fail(err, "status");
		goto done;
	}
	out->dirty = git_status_list_entrycount(status) > 0;
done:
	git_status_list_free(status);
	git_reference_free(head);
	git_repository_free(repo);
	git_buf_dispose(&root);
	if (ret)
		pg_git_info_release(out);
	return ret;
}

void pg_git_info_release(struct pg_git_info *g)
{
	free(g->branch);
	memset(g, 0, sizeof(*g));
}

json_t *pg_git_info_json(const struct pg_git_info *g)
{
	json_t *o = json_object();

	json_object_set_new(o, "commit", g->commit[0] ? json_string(g->commit) : json_null());
	json_object_set_new(o, "branch", g->branch ? json_string(g->branch) : json_null());
	json_object_set_new(o, "dirty", json_boolean(g->dirty));
	return o;
}
