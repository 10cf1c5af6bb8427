#include "sys/gitinfo.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"

#include <errno.h>
#include <git2.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

int pg_git_resolve_branch(git_repository *repo, const char *branch, git_oid *out)
{
	struct pg_buf name = PG_BUF_INIT;
	git_object *obj = NULL, *peeled = NULL;
	int rc;

	pg_buf_printf(&name, "refs/remotes/origin/%s", branch);
	rc = git_reference_name_to_id(out, repo, name.ptr);
	if (rc) {
		pg_buf_reset(&name);
		pg_buf_printf(&name, "refs/heads/%s", branch);
		rc = git_reference_name_to_id(out, repo, name.ptr);
	}
	if (rc && git_revparse_single(&obj, repo, branch) == 0 &&
	    git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT) == 0) {
		git_oid_cpy(out, git_object_id(peeled));
		rc = 0;
	}
	git_object_free(peeled);
	git_object_free(obj);
	pg_buf_release(&name);
	git_error_clear();
	return rc;
}

int pg_git_merge_base(char hex[41], const char *path, const char *branch, struct pg_error *err)
{
	git_repository *repo = NULL;
	git_oid head, base, mb;
	int ret = 0;

	hex[0] = '\0';
	if (git_repository_open_ext(&repo, path, 0, NULL)) {
		ret = git_fail(err, path);
		goto done;
	}
	if (git_reference_name_to_id(&head, repo, "HEAD")) {
		ret = git_fail(err, "HEAD");
		goto done;
	}
	if (pg_git_resolve_branch(repo, branch, &base)) {
		ret = pg_error_set(
			err, PG_EINFRA,
			"base branch '%s' not found (neither origin/%s nor a local branch)%s",
			branch, branch,
			git_repository_is_shallow(repo) == 1 ? " in this shallow checkout" : "");
		goto done;
	}
	if (git_merge_base(&mb, repo, &head, &base)) {
		if (git_repository_is_shallow(repo) == 1)
			ret = pg_error_set(
				err, PG_EINFRA,
				"the merge-base of HEAD and %s is not in this shallow checkout: fetch more "
				"history (git fetch --unshallow)",
				branch);
		else
			ret = git_fail(err, "the merge-base of HEAD and the base branch");
		goto done;
	}
	git_oid_tostr(hex, 41, &mb);
done:
	git_repository_free(repo);
	git_error_clear();
	return ret;
}

/* path made absolute and normalised without the file system: "." and ".."
 * folded, so that a path whose directories are gone (a pull request that
 * deletes them) still names its place. New string, or NULL. */
static char *lexical_abs(const char *path)
{
	char cwd[PATH_MAX];
	struct pg_buf in = PG_BUF_INIT, out = PG_BUF_INIT;
	char *save = NULL, *part;

	if (path[0] != '/') {
		if (!getcwd(cwd, sizeof(cwd)))
			return NULL;
		pg_buf_printf(&in, "%s/", cwd);
	}
	pg_buf_puts(&in, path);
	for (part = strtok_r(in.ptr, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
		if (!strcmp(part, "."))
			continue;
		if (!strcmp(part, "..")) {
			char *slash = out.len ? strrchr(out.ptr, '/') : NULL;
			if (slash)
				pg_buf_truncate(&out, (size_t)(slash - out.ptr));
			continue;
		}
		pg_buf_printf(&out, "/%s", part);
	}
	if (!out.len)
		pg_buf_putc(&out, '/');
	pg_buf_release(&in);
	return pg_buf_detach(&out);
}

/* The repository whose working tree holds abs (which may not exist):
 * found from its nearest existing directory. */
static git_repository *repo_around(const char *abs)
{
	char *dir = pg_xstrdup(abs), *slash;
	git_repository *repo = NULL;
	struct stat st;

	while ((slash = strrchr(dir, '/'))) {
		*slash = '\0';
		if (stat(*dir ? dir : "/", &st) == 0 && S_ISDIR(st.st_mode)) {
			if (git_repository_open_ext(&repo, *dir ? dir : "/", 0, NULL))
				repo = NULL;
			break;
		}
	}
	git_error_clear();
	free(dir);
	return repo;
}

int pg_git_read_at(struct pg_buf *out, bool *outside, char **relpath, const char *rev,
		   const char *file, struct pg_error *err)
{
	git_repository *repo = NULL;
	git_object *obj = NULL, *peeled = NULL;
	git_tree *tree = NULL;
	git_tree_entry *entry = NULL;
	git_blob *blob = NULL;
	char *abs = lexical_abs(file);
	const char *workdir;
	size_t wl;
	int ret = 0;

	*outside = false;
	if (relpath)
		*relpath = NULL;
	if (!abs || !(repo = repo_around(abs)) || !(workdir = git_repository_workdir(repo)) ||
	    strncmp(abs, workdir, (wl = strlen(workdir))) || !abs[wl]) {
		*outside = true;
		goto done;
	}
	{
		/* a file of another repository than the one we run in (the
		 * agent's own configuration): not the pull request's */
		git_repository *here = NULL;
		bool same = git_repository_open_ext(&here, ".", 0, NULL) == 0 &&
			    !strcmp(git_repository_commondir(here), git_repository_commondir(repo));
		git_repository_free(here);
		git_error_clear();
		if (!same) {
			*outside = true;
			goto done;
		}
	}
	if (git_revparse_single(&obj, repo, rev) ||
	    git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT) ||
	    git_commit_tree(&tree, (git_commit *)peeled)) {
		ret = git_fail(err, rev);
		goto done;
	}
	if (git_tree_entry_bypath(&entry, tree, abs + wl)) {
		git_error_clear();
		ret = pg_error_set(err, PG_ENOTFOUND, "%s: not in commit %.12s", abs + wl, rev);
		goto done;
	}
	if (git_tree_entry_type(entry) != GIT_OBJECT_BLOB ||
	    git_blob_lookup(&blob, repo, git_tree_entry_id(entry))) {
		git_error_clear();
		ret = pg_error_set(err, PG_ENOTFOUND, "%s: not a file in commit %.12s", abs + wl,
				   rev);
		goto done;
	}
	pg_buf_add(out, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
	if (relpath)
		*relpath = pg_xstrdup(abs + wl);
done:
	git_blob_free(blob);
	git_tree_entry_free(entry);
	git_tree_free(tree);
	git_object_free(peeled);
	git_object_free(obj);
	git_repository_free(repo);
	free(abs);
	return ret;
}

struct diff_out {
	struct pg_buf *out;
	size_t *added, *removed;
};

static int diff_line(const git_diff_delta *delta, const git_diff_hunk *hunk,
		     const git_diff_line *line, void *payload)
{
	struct diff_out *d = payload;

	(void)delta;
	(void)hunk;
	if (line->origin == GIT_DIFF_LINE_ADDITION)
		(*d->added)++;
	else if (line->origin == GIT_DIFF_LINE_DELETION)
		(*d->removed)++;
	/* headers come whole, with their own first character */
	if (line->origin == GIT_DIFF_LINE_ADDITION || line->origin == GIT_DIFF_LINE_DELETION ||
	    line->origin == GIT_DIFF_LINE_CONTEXT)
		pg_buf_putc(d->out, line->origin);
	pg_buf_add(d->out, line->content, line->content_len);
	if (!line->content_len || line->content[line->content_len - 1] != '\n')
		pg_buf_putc(d->out, '\n');
	return 0;
}

void pg_git_diff_text(struct pg_buf *out, size_t *added, size_t *removed, const char *path,
		      const char *old, size_t old_len, const char *new_text, size_t new_len)
{
	git_patch *patch = NULL;
	git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
	struct diff_out d = { out, added, removed };
	struct pg_buf a = PG_BUF_INIT, b = PG_BUF_INIT;

	*added = *removed = 0;
	opts.context_lines = 2;
	pg_buf_printf(&a, "%s", path);
	pg_buf_printf(&b, "%s", path);
	if (git_patch_from_buffers(&patch, old, old_len, a.ptr, new_text, new_len, b.ptr, &opts) ==
	    0)
		git_patch_print(patch, diff_line, &d);
	git_error_clear();
	git_patch_free(patch);
	pg_buf_release(&a);
	pg_buf_release(&b);
}
