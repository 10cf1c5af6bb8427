#include "baseline/history_io.h"
#include "results/identity.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/jsonw.h"
#include "base/redact.h"
#include "base/secret.h"
#include "base/strutil.h"
#include "sys/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <git2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Where the history lives while we work on it. */
struct store {
	git_repository *repo;
	git_remote *remote; /* URL mode: the real repository */
	char *tmpdir;       /* URL mode: our temporary bare clone */
	const char *ref;
	char *where; /* for messages: the path, or the URL without a password */
	int cred_tries;
	bool push_rejected; /* the server refused our ref update */
};

/*
 * The secret in a URL's user part, as [*from, *to): the password of
 * "scheme://user:pw@host", or, over HTTP(S), a user part without one
 * ("https://TOKEN@github.com/..."), which is how tokens are given. false
 * when there is none ("ssh://git@host" names a user, not a secret).
 */
static bool url_secret(const char *url, const char **from, const char **to)
{
	const char *scheme = strstr(url, "://"), *start, *at, *colon, *slash;

	if (!scheme)
		return false;
	start = scheme + 3;
	slash = strchr(start, '/');
	at = strchr(start, '@');
	if (!at || (slash && at > slash))
		return false;
	colon = memchr(start, ':', (size_t)(at - start));
	if (colon) {
		*from = colon + 1;
	} else if (!strncmp(url, "http://", 7) || !strncmp(url, "https://", 8)) {
		*from = start;
	} else {
		return false;
	}
	*to = at;
	return *to > *from;
}

/* url with the secret of its user part as ***; anything else as it is.
 * New string. */
static char *safe_url(const char *url)
{
	const char *from, *to;
	struct pg_buf b = PG_BUF_INIT;

	if (!url_secret(url, &from, &to))
		return pg_xstrdup(url);
	pg_buf_add(&b, url, (size_t)(from - url));
	pg_buf_puts(&b, PG_SECRET_MASK);
	pg_buf_puts(&b, to);
	return pg_buf_detach(&b);
}

/*
 * A git error can quote a URL or a server's message: before it reaches the
 * user, hide every secret value perfgate knows of (secret-named variables
 * of the environment, PERFGATE_GIT_TOKEN, the URL's token or password).
 */
static void redact_error(struct pg_error *err, const char *url)
{
	extern char **environ;
	struct pg_redactor r = PG_REDACTOR_INIT;
	struct pg_buf b = PG_BUF_INIT;
	const char *from, *to;

	if (!err || !err->code)
		goto done;
	pg_redactor_add_environ(&r, environ);
	pg_redactor_add(&r, getenv("PERFGATE_GIT_TOKEN"));
	if (url && url_secret(url, &from, &to)) {
		char *secret = pg_xstrndup(from, (size_t)(to - from));
		pg_redactor_add(&r, secret);
		free(secret);
	}
	pg_redact(&r, &b, err->msg);
	snprintf(err->msg, sizeof(err->msg), "%s", b.ptr);
done:
	pg_buf_release(&b);
	pg_redactor_release(&r);
}

static int git_fail(struct pg_error *err, const char *what, const char *where)
{
	const git_error *e = git_error_last();
	return pg_error_set(err, PG_EINFRA, "%s: %s: %s", where ? where : "git", what,
			    e && e->message ? e->message : "unknown libgit2 error");
}

/* https://, ssh://, git://, file:// or scp-like user@host:path. */
static bool is_url(const char *s)
{
	const char *colon = strchr(s, ':'), *slash = strchr(s, '/'), *at = strchr(s, '@');
	if (strstr(s, "://"))
		return true;
	return at && colon && at < colon && (!slash || colon < slash);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int credentials(git_credential **out, const char *url, const char *user,
		       unsigned int allowed, void *payload)
{
	struct store *s = payload;
	const char *token = getenv("PERFGATE_GIT_TOKEN");

	(void)url;
	/* libgit2 asks again after a refused credential: give up, don't loop */
	if (++s->cred_tries > 3)
		return GIT_EUSER;
	if (allowed & GIT_CREDENTIAL_SSH_KEY)
		return git_credential_ssh_key_from_agent(out, user ? user : "git");
	if ((allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) && token && *token)
		return git_credential_userpass_plaintext_new(out, user ? user : "x-access-token",
							     token);
	return GIT_PASSTHROUGH;
}

static void store_close(struct store *s)
{
	git_remote_free(s->remote);
	git_repository_free(s->repo);
	free(s->where);
	if (s->tmpdir) {
		nftw(s->tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		free(s->tmpdir);
	}
	memset(s, 0, sizeof(*s));
}

static int store_open(struct store *s, const char *repo, const char *ref, struct pg_error *err)
{
	memset(s, 0, sizeof(*s));
	s->ref = ref ? ref : PG_HISTORY_DEFAULT_REF;
	s->where = safe_url(repo ? repo : "the current repository");
	if (!git_reference_is_valid_name(s->ref))
		return pg_error_set(err, PG_ECONFIG, "'%s' is not a valid git ref name", s->ref);
	if (!repo) {
		if (git_repository_open_ext(&s->repo, ".", 0, NULL))
			return git_fail(err, "opening the repository", ".");
		return 0;
	}
	if (!is_url(repo)) {
		if (git_repository_open(&s->repo, repo))
			return git_fail(err, "opening the repository", repo);
		return 0;
	}
	{
		const char *tmp = getenv("TMPDIR");
		struct pg_buf dir = PG_BUF_INIT;
		pg_buf_printf(&dir, "%s/perfgate-history-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(dir.ptr)) {
			int e = errno;
			pg_buf_release(&dir);
			return pg_error_set(err, PG_EINFRA, "mkdtemp: %s", strerror(e));
		}
		s->tmpdir = pg_buf_detach(&dir);
	}
	if (git_repository_init(&s->repo, s->tmpdir, 1))
		return git_fail(err, "creating a temporary repository", s->tmpdir);
	{
		/* The URL is used as given: no url.<base>.insteadOf rewriting,
		 * whose config lookup (by regex) leaks in libgit2 1.5 with pcre2. */
		git_remote_create_options ro = GIT_REMOTE_CREATE_OPTIONS_INIT;
		ro.repository = s->repo;
		ro.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF;
		if (git_remote_create_with_opts(&s->remote, repo, &ro))
			return git_fail(err, "opening the remote", repo);
	}
	return 0;
}

/* URL mode: bring the remote ref (if any) into our clone, exactly. */
static int store_fetch(struct store *s, struct pg_error *err)
{
	git_fetch_options fo = GIT_FETCH_OPTIONS_INIT;
	struct pg_buf spec = PG_BUF_INIT;
	char *specs[1];
	git_strarray arr = { specs, 1 };
	int rc = 0;

	if (!s->remote)
		return 0;
	pg_buf_printf(&spec, "+%s:%s", s->ref, s->ref);
	specs[0] = spec.ptr;
	fo.callbacks.credentials = credentials;
	fo.callbacks.payload = s;
	fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	s->cred_tries = 0;
	if (git_remote_fetch(s->remote, &arr, &fo, "perfgate: fetch history"))
		rc = git_fail(err, "fetching the history", s->where);
	pg_buf_release(&spec);
	return rc;
}

/* The ref's commit; *exists false when the ref is not there yet. */
static int store_tip(struct store *s, git_oid *out, bool *exists, struct pg_error *err)
{
	int rc = git_reference_name_to_id(out, s->repo, s->ref);

	*exists = rc == 0;
	if (rc == GIT_ENOTFOUND) {
		git_error_clear();
		return 0;
	}
	return rc ? git_fail(err, "reading the history ref", s->where) : 0;
}

static int push_ref_status(const char *refname, const char *status, void *payload)
{
	struct store *s = payload;
	(void)refname;
	if (status)
		s->push_rejected = true;
	return 0;
}

/*
 * Move the ref from old (NULL: it must not exist yet) to new. A concurrent
 * writer having moved it first is not an error: *rejected says so.
 */
static int store_update(struct store *s, const git_oid *old, const git_oid *new, bool *rejected,
			struct pg_error *err)
{
	git_reference *ref = NULL;
	int rc;

	*rejected = false;
	if (!s->remote) {
		if (old)
			rc = git_reference_create_matching(&ref, s->repo, s->ref, new, 1, old,
							   "perfgate: record");
		else
			rc = git_reference_create(&ref, s->repo, s->ref, new, 0,
						  "perfgate: record");
		git_reference_free(ref);
		if (rc == GIT_EMODIFIED || rc == GIT_EEXISTS || rc == GIT_ELOCKED) {
			git_error_clear();
			*rejected = true;
			return 0;
		}
		return rc ? git_fail(err, "updating the history ref", s->where) : 0;
	}

	/* URL mode: our clone's ref first, then a push without force */
	rc = git_reference_create(&ref, s->repo, s->ref, new, 1, "perfgate: record");
	git_reference_free(ref);
	if (rc)
		return git_fail(err, "updating the local history ref", s->tmpdir);
	{
		git_push_options po = GIT_PUSH_OPTIONS_INIT;
		struct pg_buf spec = PG_BUF_INIT;
		char *specs[1];
		git_strarray arr = { specs, 1 };

		pg_buf_printf(&spec, "%s:%s", s->ref, s->ref);
		specs[0] = spec.ptr;
		po.callbacks.credentials = credentials;
		po.callbacks.push_update_reference = push_ref_status;
		po.callbacks.payload = s;
		s->cred_tries = 0;
		s->push_rejected = false;
		rc = git_remote_push(s->remote, &arr, &po);
		pg_buf_release(&spec);
		if (rc == GIT_ENONFASTFORWARD || (rc == 0 && s->push_rejected)) {
			git_error_clear();
			*rejected = true;
			return 0;
		}
		if (rc) {
			/* some servers report a lost race as a plain error */
			const git_error *e = git_error_last();
			if (e && e->message &&
			    (strstr(e->message, "non-fast-forward") ||
			     strstr(e->message, "fetch first") || strstr(e->message, "rejected") ||
			     strstr(e->message, "failed to update"))) {
				git_error_clear();
				*rejected = true;
				return 0;
			}
			return git_fail(err, "pushing the history", s->where);
		}
	}
	return 0;
}

/* "H100/serving_x_qps_4.jsonl", with '/' in names made safe. */
static void point_path(struct pg_buf *out, const char *gpu, const char *point)
{
	pg_buf_reset(out);
	for (const char *p = gpu; *p; p++)
		pg_buf_putc(out, *p == '/' ? '_' : *p);
	pg_buf_putc(out, '/');
	for (const char *p = point; *p; p++)
		pg_buf_putc(out, *p == '/' ? '_' : *p);
	pg_buf_puts(out, ".jsonl");
}

/* The content of path in tree (appended to out); absent is fine. */
static int read_blob(git_repository *repo, git_tree *tree, const char *path, struct pg_buf *out,
		     const char *where, struct pg_error *err)
{
	git_tree_entry *e = NULL;
	git_blob *blob = NULL;
	int rc;

	if (!tree)
		return 0;
	rc = git_tree_entry_bypath(&e, tree, path);
	if (rc == GIT_ENOTFOUND) {
		git_error_clear();
		return 0;
	}
	if (rc)
		return git_fail(err, "reading the history tree", where);
	rc = git_blob_lookup(&blob, repo, git_tree_entry_id(e));
	if (rc == 0)
		pg_buf_add(out, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
	git_blob_free(blob);
	git_tree_entry_free(e);
	return rc ? git_fail(err, "reading a history file", where) : 0;
}

static int empty_tree(git_repository *repo, git_tree **out, const char *where, struct pg_error *err)
{
	git_treebuilder *b = NULL;
	git_oid oid;
	int rc = git_treebuilder_new(&b, repo, NULL);

	if (rc == 0)
		rc = git_treebuilder_write(&oid, b);
	git_treebuilder_free(b);
	if (rc == 0)
		rc = git_tree_lookup(out, repo, &oid);
	return rc ? git_fail(err, "creating a tree", where) : 0;
}

struct known_files {
	git_tree *tree;
	const char *gpu;
};

static bool in_history(void *ctx, const char *point)
{
	const struct known_files *k = ctx;
	struct pg_buf path = PG_BUF_INIT;
	git_tree_entry *e = NULL;
	bool found;

	point_path(&path, k->gpu, point);
	found = k->tree && git_tree_entry_bypath(&e, k->tree, path.ptr) == 0;
	if (!found)
		git_error_clear();
	git_tree_entry_free(e);
	pg_buf_release(&path);
	return found;
}

/* A commit on top of parent (NULL: the first) appending every line. A
 * point goes to the file of its identity (results/identity.h), or to the
 * file an older name of the same workload already has, so its history
 * stays in one piece across the rename. */
static int build_commit(struct store *s, const git_oid *parent_id, const struct pg_cmp_run *run,
			const struct pg_history_record_opts *o, git_oid *out, size_t *lines,
			struct pg_error *err)
{
	git_commit *parent = NULL;
	git_tree *tree = NULL, *new_tree = NULL;
	git_tree_update *updates = NULL;
	char **paths = NULL;
	size_t n_up = 0;
	git_signature *sig = NULL;
	struct pg_buf content = PG_BUF_INIT, path = PG_BUF_INIT, msg = PG_BUF_INIT;
	git_oid tree_id;
	int rc = 0;

	*lines = 0;
	if (parent_id) {
		if (git_commit_lookup(&parent, s->repo, parent_id) ||
		    git_commit_tree(&tree, parent)) {
			rc = git_fail(err, "reading the history", s->where);
			goto done;
		}
	} else if ((rc = empty_tree(s->repo, &tree, s->where, err))) {
		goto done;
	}
	updates = pg_xcalloc(run->n ? run->n : 1, sizeof(*updates));
	paths = pg_xcalloc(run->n ? run->n : 1, sizeof(*paths));
	for (size_t i = 0; i < run->n; i++) {
		const struct pg_cmp_point *p = &run->points[i];
		json_t *line;
		git_oid blob;

		if ((p->status && strcmp(p->status, "ok")) || p->probe)
			continue;
		line = pg_history_line(p, &o->meta);
		if (!line)
			continue;
		{
			struct known_files k = { parent_id ? tree : NULL, o->gpu };
			char *name = pg_identity_find(p->name, p->suite, p->result, in_history, &k);

			if (!name)
				name = pg_identity_of(p->name, p->suite, p->result);
			point_path(&path, o->gpu, name);
			free(name);
		}
		pg_buf_reset(&content);
		if ((rc = read_blob(s->repo, parent_id ? tree : NULL, path.ptr, &content, s->where,
				    err))) {
			json_decref(line);
			goto done;
		}
		if (content.len && content.ptr[content.len - 1] != '\n')
			pg_buf_putc(&content, '\n');
		pg_json_write(&content, line, -1);
		pg_buf_putc(&content, '\n');
		json_decref(line);
		if (git_blob_create_from_buffer(&blob, s->repo, content.ptr, content.len)) {
			rc = git_fail(err, "writing a history file", s->where);
			goto done;
		}
		paths[n_up] = pg_xstrdup(path.ptr);
		updates[n_up].action = GIT_TREE_UPDATE_UPSERT;
		updates[n_up].id = blob;
		updates[n_up].filemode = GIT_FILEMODE_BLOB;
		updates[n_up].path = paths[n_up];
		n_up++;
	}
	*lines = n_up;
	if (!n_up)
		goto done;
	if (git_tree_create_updated(&tree_id, s->repo, tree, n_up, updates) ||
	    git_tree_lookup(&new_tree, s->repo, &tree_id)) {
		rc = git_fail(err, "writing the history tree", s->where);
		goto done;
	}
	if (git_signature_now(&sig, "perfgate", "perfgate@localhost")) {
		rc = git_fail(err, "making a signature", s->where);
		goto done;
	}
	pg_buf_printf(&msg, "perfgate: record %zu point%s on %s", n_up, n_up == 1 ? "" : "s",
		      o->gpu);
	if (o->meta.commit)
		pg_buf_printf(&msg, " at %.12s", o->meta.commit);
	pg_buf_puts(&msg, "\n");
	if (o->meta.build_url)
		pg_buf_printf(&msg, "\nBuild: %s\n", o->meta.build_url);
	{
		const git_commit *parents[1] = { parent };
		if (git_commit_create(out, s->repo, NULL, sig, sig, NULL, msg.ptr, new_tree,
				      parent ? 1 : 0, parents))
			rc = git_fail(err, "committing the history", s->where);
	}
done:
	for (size_t i = 0; i < n_up; i++)
		free(paths[i]);
	free(paths);
	free(updates);
	git_signature_free(sig);
	git_tree_free(new_tree);
	git_tree_free(tree);
	git_commit_free(parent);
	pg_buf_release(&content);
	pg_buf_release(&path);
	pg_buf_release(&msg);
	return rc;
}

static bool is_full_sha(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");
	return n == 40 && !s[n];
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * Test hook, PERFGATE_HISTORY_TEST_BARRIER=DIR:N: a writer that has read
 * the tip adds a file to DIR and waits (up to a minute) until N writers
 * have, so a test makes writers collide for certain, whatever the
 * machine's speed, instead of hoping a delay is long enough.
 */
static void test_barrier(const char *spec)
{
	const char *colon = strrchr(spec, ':');
	struct pg_buf mine = PG_BUF_INIT;
	char *dir;
	long want = 0;
	int fd;

	if (!colon || pg_parse_long(colon + 1, &want) || want < 1)
		return;
	dir = pg_xstrndup(spec, (size_t)(colon - spec));
	pg_buf_printf(&mine, "%s/%ld", dir, (long)getpid());
	fd = open(mine.ptr, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
	for (int waited = 0; waited < 6000; waited++) {
		struct pg_strv names = PG_STRV_INIT;
		struct pg_error ignored = PG_ERROR_INIT;
		bool all_here = pg_dir_list(dir, NULL, &names, &ignored) == 0 &&
				names.n >= (size_t)want;

		pg_strv_release(&names);
		if (all_here)
			break;
		sleep_ms(10);
	}
	pg_buf_release(&mine);
	free(dir);
}

int pg_history_record(const struct pg_cmp_run *run, const struct pg_history_record_opts *o,
		      struct pg_history_recorded *out, struct pg_error *err)
{
	size_t *lines = &out->lines;
	int *attempts = &out->attempts;
	char *commit = out->commit;
	struct store s;
	int max = o->max_attempts > 0 ? o->max_attempts : 10;
	const char *barrier = getenv("PERFGATE_HISTORY_TEST_BARRIER");
	struct pg_history_meta meta = o->meta;
	struct pg_history_record_opts opts = *o;
	char head_hex[41];
	int rc;

	memset(out, 0, sizeof(*out));
	if (!meta.commit || !is_full_sha(meta.commit)) {
		/* the commit measured, as a full id: HEAD of the repository we
		 * run in, or a name (a branch, "HEAD~1") resolved there */
		const char *given = meta.commit;
		git_repository *here = NULL;
		git_object *obj = NULL, *peeled = NULL;

		meta.commit = NULL;
		if (git_repository_open_ext(&here, ".", 0, NULL) == 0 &&
		    git_revparse_single(&obj, here, given ? given : "HEAD") == 0 &&
		    git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT) == 0) {
			git_oid_tostr(head_hex, sizeof(head_hex), git_object_id(peeled));
			meta.commit = head_hex;
		}
		git_object_free(peeled);
		git_object_free(obj);
		git_repository_free(here);
		git_error_clear();
		if (!meta.commit) {
			memset(&s, 0, sizeof(s));
			rc = given ? pg_error_set(
					     err, PG_ECONFIG,
					     "--commit '%s' is not a commit of this repository (give the full id)",
					     given)
				   : pg_error_set(
					     err, PG_ECONFIG,
					     "which commit did this run measure? pass --commit");
			goto done;
		}
	}
	opts.meta = meta;
	snprintf(out->measured, sizeof(out->measured), "%s", meta.commit);
	if ((rc = store_open(&s, o->repo, o->ref, err)))
		goto done;
	for (int attempt = 1; attempt <= max; attempt++) {
		git_oid tip, new;
		bool exists, rejected;

		*attempts = attempt;
		if ((rc = store_fetch(&s, err)) || (rc = store_tip(&s, &tip, &exists, err)))
			goto done;
		if ((rc = build_commit(&s, exists ? &tip : NULL, run, &opts, &new, lines, err)))
			goto done;
		if (!*lines) {
			rc = pg_error_set(
				err, PG_ECONFIG,
				"nothing to record: no result with status ok and a comparable metric");
			goto done;
		}
		if (barrier && attempt == 1)
			test_barrier(barrier);
		if ((rc = store_update(&s, exists ? &tip : NULL, &new, &rejected, err)))
			goto done;
		if (!rejected) {
			git_oid_tostr(commit, 41, &new);
			goto done;
		}
		/* someone else recorded first: back off a little, then redo on the new tip */
		sleep_ms(20L * attempt + (long)(getpid() % 20));
	}
	rc = pg_error_set(err, PG_EINFRA,
			  "%s: %s: still rejected after %d attempts (other writers keep winning)",
			  s.where, s.ref, max);
done:
	store_close(&s);
	if (rc)
		redact_error(err, o->repo);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Reading                                                             */

static int cmp_history(const void *a, const void *b)
{
	return strcmp(((const struct pg_history *)a)->point, ((const struct pg_history *)b)->point);
}

static int read_histories(struct store *s, const char *gpu, const char *point,
			  struct pg_history **out, size_t *n, struct pg_error *err)
{
	git_oid tip;
	bool exists;
	git_commit *c = NULL;
	git_tree *root = NULL, *dir = NULL;
	git_tree_entry *e = NULL;
	struct pg_buf path = PG_BUF_INIT, text = PG_BUF_INIT, src = PG_BUF_INIT;
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = store_fetch(s, err)) || (rc = store_tip(s, &tip, &exists, err)) || !exists)
		goto done;
	if (git_commit_lookup(&c, s->repo, &tip) || git_commit_tree(&root, c)) {
		rc = git_fail(err, "reading the history", s->where);
		goto done;
	}
	rc = git_tree_entry_bypath(&e, root, gpu);
	if (rc == GIT_ENOTFOUND) {
		git_error_clear();
		rc = 0;
		goto done;
	}
	if (rc || git_tree_lookup(&dir, s->repo, git_tree_entry_id(e))) {
		rc = git_fail(err, "reading the history", s->where);
		goto done;
	}
	for (size_t i = 0; i < git_tree_entrycount(dir); i++) {
		const git_tree_entry *f = git_tree_entry_byindex(dir, i);
		const char *name = git_tree_entry_name(f);
		struct pg_history h = { 0 };
		char *stem;

		if (git_tree_entry_type(f) != GIT_OBJECT_BLOB || !pg_str_has_suffix(name, ".jsonl"))
			continue;
		stem = pg_xstrndup(name, strlen(name) - strlen(".jsonl"));
		if (point && strcmp(stem, point)) {
			free(stem);
			continue;
		}
		pg_buf_reset(&path);
		pg_buf_printf(&path, "%s/%s", gpu, name);
		pg_buf_reset(&text);
		pg_buf_reset(&src);
		pg_buf_printf(&src, "%s:%s", s->ref, path.ptr);
		rc = read_blob(s->repo, root, path.ptr, &text, s->where, err);
		if (rc == 0)
			rc = pg_history_parse(&h, stem, text.ptr, text.len, src.ptr, err);
		free(stem);
		if (rc) {
			pg_history_release(&h);
			goto done;
		}
		PG_ARRAY_PUSH(*out, *n, cap, h);
	}
	if (*n > 1)
		qsort(*out, *n, sizeof(**out), cmp_history);
done:
	git_tree_entry_free(e);
	git_tree_free(dir);
	git_tree_free(root);
	git_commit_free(c);
	pg_buf_release(&path);
	pg_buf_release(&text);
	pg_buf_release(&src);
	return rc;
}

int pg_history_read(struct pg_history **out, size_t *n, const char *gpu, const char *point,
		    const struct pg_history_opts *o, struct pg_error *err)
{
	struct store s;
	int rc = store_open(&s, o->repo, o->ref, err);

	*out = NULL;
	*n = 0;
	if (rc == 0)
		rc = read_histories(&s, gpu, point, out, n, err);
	store_close(&s);
	if (rc)
		redact_error(err, o->repo);
	return rc;
}

/* The base branch's commit: origin's copy first (CI checkouts are detached
 * and often lack the local branch), then the local branch, then any rev. */
static int resolve_base(git_repository *repo, const char *branch, git_oid *out)
{
	struct pg_buf name = PG_BUF_INIT;
	git_object *obj = NULL;
	int rc;

	pg_buf_printf(&name, "refs/remotes/origin/%s", branch);
	rc = git_reference_name_to_id(out, repo, name.ptr);
	if (rc) {
		pg_buf_reset(&name);
		pg_buf_printf(&name, "refs/heads/%s", branch);
		rc = git_reference_name_to_id(out, repo, name.ptr);
	}
	if (rc && git_revparse_single(&obj, repo, branch) == 0) {
		git_object *peeled = NULL;
		if (git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT) == 0) {
			git_oid_cpy(out, git_object_id(peeled));
			rc = 0;
		}
		git_object_free(peeled);
	}
	git_object_free(obj);
	pg_buf_release(&name);
	if (rc == 0)
		git_error_clear();
	return rc;
}

struct ancestry {
	git_repository *repo;
	git_oid mb;
	char (*sha)[41];
	bool *ok;
	size_t n, cap;
};

/* Is commit (hex) the merge-base or one of its ancestors? Cached. */
static bool at_or_before(struct ancestry *a, const char *hex)
{
	git_oid id;
	bool ok;

	if (!hex || git_oid_fromstr(&id, hex)) {
		git_error_clear();
		return false;
	}
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->sha[i], hex))
			return a->ok[i];
	ok = git_oid_equal(&id, &a->mb) || git_graph_descendant_of(a->repo, &a->mb, &id) == 1;
	git_error_clear();
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 64;
		a->sha = pg_xrealloc(a->sha, a->cap * sizeof(*a->sha));
		a->ok = pg_xrealloc(a->ok, a->cap * sizeof(*a->ok));
	}
	snprintf(a->sha[a->n], 41, "%s", hex);
	a->ok[a->n++] = ok;
	return ok;
}

int pg_history_baseline(struct pg_baseline *out, const char *gpu, const struct pg_policy *policy,
			const struct pg_history_opts *o, struct pg_error *err)
{
	const char *env_base = getenv("BUILDKITE_PULL_REQUEST_BASE_BRANCH");
	const char *branch = o->base_branch                                       ? o->base_branch
			     : env_base && *env_base && strcmp(env_base, "false") ? env_base
										  : "main";
	git_repository *src = NULL;
	struct pg_history *hs = NULL;
	size_t n_hs = 0;
	struct ancestry anc = { 0 };
	bool **use = NULL;
	git_oid head, base;
	char mb_hex[41];
	struct pg_buf where = PG_BUF_INIT;
	int rc;

	memset(out, 0, sizeof(*out));
	out->gpu = pg_xstrdup(gpu);
	out->kind = pg_xstrdup("git");
	if (git_repository_open_ext(&src, o->source_repo ? o->source_repo : ".", 0, NULL)) {
		rc = git_fail(err, "opening the source repository",
			      o->source_repo ? o->source_repo : ".");
		goto done;
	}
	if (git_reference_name_to_id(&head, src, "HEAD")) {
		rc = git_fail(err, "resolving HEAD", o->source_repo ? o->source_repo : ".");
		goto done;
	}
	if (resolve_base(src, branch, &base)) {
		git_error_clear();
		rc = pg_error_set(
			err, PG_EINFRA,
			"base branch '%s' not found (neither origin/%s nor a local branch): fetch it or pass --base",
			branch, branch);
		goto done;
	}
	if (git_merge_base(&anc.mb, src, &head, &base)) {
		rc = git_fail(err, "finding the merge-base of HEAD and the base branch", branch);
		goto done;
	}
	anc.repo = src;
	git_oid_tostr(mb_hex, sizeof(mb_hex), &anc.mb);
	if ((rc = pg_history_read(&hs, &n_hs, gpu, NULL, o, err)))
		goto done;
	use = pg_xcalloc(n_hs ? n_hs : 1, sizeof(*use));
	for (size_t i = 0; i < n_hs; i++) {
		use[i] = pg_xcalloc(hs[i].n ? hs[i].n : 1, sizeof(bool));
		for (size_t k = 0; k < hs[i].n; k++)
			use[i][k] = at_or_before(&anc, hs[i].recs[k].commit);
	}
	/* the points line up job by job: one build for the whole GPU */
	pg_history_baseline_build(out, hs, n_hs, (const bool *const *)use, policy);
	pg_baseline_sort(out);
	{
		char *repo = safe_url(o->repo ? o->repo : "git");
		pg_buf_printf(&where, "%s %s, runs at or before %.12s (merge-base of HEAD and %s)",
			      repo, o->ref ? o->ref : PG_HISTORY_DEFAULT_REF, mb_hex, branch);
		free(repo);
	}
	out->source = pg_buf_detach(&where);
done:
	for (size_t i = 0; use && i < n_hs; i++)
		free(use[i]);
	free(use);
	for (size_t i = 0; i < n_hs; i++)
		pg_history_release(&hs[i]);
	free(hs);
	free(anc.sha);
	free(anc.ok);
	git_repository_free(src);
	pg_buf_release(&where);
	return rc;
}
