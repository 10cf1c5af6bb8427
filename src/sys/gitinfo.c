#include "sys/gitinfo.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/strutil.h"
#include "sys/fsutil.h"

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

char *pg_git_workdir(const char *path)
{
	git_repository *repo = NULL;
	const char *wd;
	char *real = NULL;

	if (git_repository_open_ext(&repo, path, 0, NULL) == 0 &&
	    (wd = git_repository_workdir(repo)) && (real = realpath(wd, NULL))) {
		size_t len = strlen(real);
		while (len > 1 && real[len - 1] == '/')
			real[--len] = '\0';
	}
	git_repository_free(repo);
	git_error_clear();
	return real;
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

static char *subject_of(const git_commit *c)
{
	const char *m = git_commit_summary((git_commit *)c);
	return pg_xstrdup(m ? m : "");
}

int pg_git_first_parent_range(struct pg_strv *ids, struct pg_strv *subjects, const char *path,
			      const char *good, const char *bad, struct pg_error *err)
{
	git_repository *repo = NULL;
	git_commit *c = NULL;
	git_oid good_id, bad_id, at;
	char hex[41];
	struct pg_strv rev_ids = PG_STRV_INIT, rev_subj = PG_STRV_INIT;
	int ret = 0;
	const char *names[2] = { good, bad };
	git_oid *oids[2] = { &good_id, &bad_id };

	if (git_repository_open_ext(&repo, path, 0, NULL)) {
		ret = git_fail(err, path);
		goto done;
	}
	for (int i = 0; i < 2; i++) {
		git_object *obj = NULL;
		if (git_revparse_single(&obj, repo, names[i]) ||
		    git_object_peel((git_object **)&c, obj, GIT_OBJECT_COMMIT)) {
			git_object_free(obj);
			ret = pg_error_set(err, PG_ECONFIG, "%s: no commit '%s' in %s",
					   i ? "--bad" : "--good", names[i], path);
			goto done;
		}
		git_oid_cpy(oids[i], git_commit_id(c));
		git_commit_free(c);
		c = NULL;
		git_object_free(obj);
	}
	/* walk bad's first parents back to good */
	git_oid_cpy(&at, &bad_id);
	for (;;) {
		if (git_commit_lookup(&c, repo, &at)) {
			ret = git_fail(err, "a commit of the range");
			goto done;
		}
		git_oid_tostr(hex, sizeof(hex), &at);
		pg_strv_push(&rev_ids, hex);
		pg_strv_push_owned(&rev_subj, subject_of(c));
		if (git_oid_equal(&at, &good_id))
			break;
		if (git_commit_parentcount(c) == 0) {
			ret = pg_error_set(err, PG_ECONFIG,
					   "--good %s is not on the first-parent line of --bad %s",
					   good, bad);
			goto done;
		}
		git_oid_cpy(&at, git_commit_parent_id(c, 0));
		git_commit_free(c);
		c = NULL;
	}
	for (size_t i = rev_ids.n; i-- > 0;) {
		pg_strv_push(ids, rev_ids.v[i]);
		if (subjects)
			pg_strv_push(subjects, rev_subj.v[i]);
	}
done:
	git_commit_free(c);
	pg_strv_release(&rev_ids);
	pg_strv_release(&rev_subj);
	git_repository_free(repo);
	git_error_clear();
	return ret;
}

/* The checkout perfgate runs in (around the cwd) and the real path of its
 * working tree; NULL when the cwd is in none (or in a bare repository). */
static git_repository *checkout_here(char **root)
{
	git_repository *repo = NULL;
	const char *workdir;

	*root = NULL;
	if (git_repository_open_ext(&repo, ".", 0, NULL) ||
	    !(workdir = git_repository_workdir(repo)) || !(*root = realpath(workdir, NULL))) {
		git_repository_free(repo);
		git_error_clear();
		return NULL;
	}
	return repo;
}

/* Up to this many symbolic links inside a commit's tree are followed on
 * the way to a file, as a checkout would (the kernel's own limit). */
enum { TREE_LINKS_MAX = 40 };

/*
 * The blob at rel in the commit's tree, following symbolic links that stay
 * inside the tree, as a checkout of that commit would find the file. A
 * link out of the repository or a submodule on the way is an error that
 * says so (the commit does not hold the file: something outside it
 * would decide), a missing path PG_ENOTFOUND.
 */
static int tree_blob(git_blob **out, git_repository *repo, git_tree *tree, const char *rel,
		     const char *rev, struct pg_error *err)
{
	struct pg_buf path = PG_BUF_INIT, prefix = PG_BUF_INIT;
	git_tree_entry *entry = NULL;
	int ret = 0, links = 0;

	pg_buf_puts(&path, rel);
restart:
	pg_buf_reset(&prefix);
	for (const char *p = path.ptr; *p;) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);
		bool last = !slash || !slash[1];
		git_filemode_t mode;

		if (prefix.len)
			pg_buf_putc(&prefix, '/');
		pg_buf_add(&prefix, p, n);
		p += n + (slash != NULL);
		git_tree_entry_free(entry);
		entry = NULL;
		if (git_tree_entry_bypath(&entry, tree, prefix.ptr)) {
			git_error_clear();
			ret = pg_error_set(err, PG_ENOTFOUND, "%s: not in commit %.12s", rel, rev);
			goto done;
		}
		mode = git_tree_entry_filemode(entry);
		if (mode == GIT_FILEMODE_COMMIT) {
			ret = pg_error_set(
				err, PG_ECONFIG,
				"%s: %s is a submodule in commit %.12s: its content is another "
				"repository's, not this one's",
				rel, prefix.ptr, rev);
			goto done;
		}
		if (mode == GIT_FILEMODE_LINK) {
			git_blob *link = NULL;
			struct pg_buf next = PG_BUF_INIT;
			char *folded;

			if (++links > TREE_LINKS_MAX ||
			    git_blob_lookup(&link, repo, git_tree_entry_id(entry))) {
				git_error_clear();
				ret = pg_error_set(err, PG_ENOTFOUND,
						   "%s: too many symbolic links in commit %.12s",
						   rel, rev);
				goto done;
			}
			/* the link's directory, its target, then the rest */
			{
				const char *cut = strrchr(prefix.ptr, '/');
				if (cut)
					pg_buf_add(&next, prefix.ptr,
						   (size_t)(cut - prefix.ptr) + 1);
			}
			pg_buf_add(&next, git_blob_rawcontent(link),
				   (size_t)git_blob_rawsize(link));
			git_blob_free(link);
			if (next.len && next.ptr[next.len - 1] != '/' && *p)
				pg_buf_putc(&next, '/');
			pg_buf_puts(&next, p);
			folded = next.len && next.ptr[0] != '/' ? pg_path_fold(next.ptr) : NULL;
			pg_buf_release(&next);
			if (!folded) {
				ret = pg_error_set(
					err, PG_ECONFIG,
					"%s: %s is a symbolic link out of the repository in commit "
					"%.12s: name the place it points to in the thresholds option "
					"instead",
					rel, prefix.ptr, rev);
				goto done;
			}
			pg_buf_reset(&path);
			pg_buf_puts(&path, folded);
			free(folded);
			goto restart;
		}
		if (last != (git_tree_entry_type(entry) == GIT_OBJECT_BLOB) || (last && *p)) {
			ret = pg_error_set(err, PG_ENOTFOUND, "%s: not a file in commit %.12s", rel,
					   rev);
			goto done;
		}
	}
	if (!entry || git_tree_entry_type(entry) != GIT_OBJECT_BLOB ||
	    git_blob_lookup(out, repo, git_tree_entry_id(entry))) {
		git_error_clear();
		ret = pg_error_set(err, PG_ENOTFOUND, "%s: not a file in commit %.12s", rel, rev);
	}
done:
	git_tree_entry_free(entry);
	pg_buf_release(&path);
	pg_buf_release(&prefix);
	return ret;
}

char *pg_git_checkout_path(const char *file)
{
	char *root = NULL, *rel = NULL;
	git_repository *repo = checkout_here(&root);

	if (repo)
		rel = pg_path_under(file, root);
	git_repository_free(repo);
	free(root);
	return rel;
}

int pg_git_read_at(struct pg_buf *out, bool *outside, char **relpath, const char *rev,
		   const char *file, struct pg_error *err)
{
	git_repository *repo = NULL;
	git_object *obj = NULL, *peeled = NULL;
	git_tree *tree = NULL;
	git_blob *blob = NULL;
	char *root = NULL, *rel = NULL;
	int ret = 0;

	*outside = false;
	if (relpath)
		*relpath = NULL;
	/* The checkout the job runs in decides what is the pull request's:
	 * any spelling of a path that reaches its working tree (through a
	 * link, /proc/self/cwd, ..) is read from the commit, whatever the
	 * working tree now holds there (a link out of it, a submodule, a
	 * file a command wrote) */
	if (!(repo = checkout_here(&root)) || !(rel = pg_path_under(file, root))) {
		*outside = true;
		goto done;
	}
	if (git_revparse_single(&obj, repo, rev) ||
	    git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT) ||
	    git_commit_tree(&tree, (git_commit *)peeled)) {
		ret = git_fail(err, rev);
		goto done;
	}
	if ((ret = tree_blob(&blob, repo, tree, rel, rev, err)))
		goto done;
	pg_buf_add(out, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
done:
	if (relpath && rel && (ret == 0 || ret == PG_ENOTFOUND))
		*relpath = pg_xstrdup(rel);
	git_blob_free(blob);
	git_tree_free(tree);
	git_object_free(peeled);
	git_object_free(obj);
	git_repository_free(repo);
	free(root);
	free(rel);
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
