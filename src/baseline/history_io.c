#include "baseline/history_io.h"
#include "results/identity.h"

#include "base/alloc.h"
#include "base/tasks.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/jsonw.h"
#include "base/redact.h"
#include "base/rng.h"
#include "base/secret.h"
#include "base/strutil.h"
#include "baseline/history_ab.h"
#include "baseline/history_check.h"
#include "baseline/pack_index.h"
#include "sys/fsutil.h"
#include "sys/gitinfo.h"
#include "sys/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <git2.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * A ref lock older than this, that no perfgate writer holds, is stale.
 * git programs hold a ref lock for milliseconds; perfgate writers hold
 * the guard (below) for as long as they may have the lock, so the age
 * only protects against other git programs.
 */
#define LOCK_GRACE_S 2.0
/* Without the guard (a file system without flock): only age tells. */
#define LOCK_GRACE_UNGUARDED_S 120.0
/* Failures to reach the repository in a row before giving up: a server
 * under load drops connections now and then; one that is down stays down. */
#define MAX_TRANSPORT_FAILURES 6

/* Where the history lives while we work on it. */
struct store {
	git_repository *repo;
	git_remote *remote; /* URL mode: the real repository */
	char *tmpdir;       /* URL mode: our temporary bare clone */
	const char *ref;
	char *where; /* for messages: the path, or the URL without a password */
	/* local mode: the ref's lock file, and perfgate's guard beside it */
	char *lock_path;
	char *guard_path;
	int cred_tries;
	bool push_rejected;    /* the server refused our ref update */
	char push_status[160]; /* and why */
	double lock_seen_age;  /* the lock's age when last found (-1: none) */
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

/* The same for notes that may quote a server. */
static void redact_strv(struct pg_strv *v, const char *url)
{
	struct pg_error e = PG_ERROR_INIT;

	for (size_t i = 0; i < v->n; i++) {
		e.code = PG_ERR;
		snprintf(e.msg, sizeof(e.msg), "%s", v->v[i]);
		redact_error(&e, url);
		free(v->v[i]);
		v->v[i] = pg_xstrdup(e.msg);
	}
}

static int git_fail(struct pg_error *err, const char *what, const char *where)
{
	const git_error *e = git_error_last();
	return pg_error_set(err, PG_EINFRA, "%s: %s: %s", where ? where : "git", what,
			    e && e->message ? e->message : "unknown libgit2 error");
}

/* Opening the repository around the current directory: outside any is a
 * mistake in how perfgate was called (exit 2), said in the user's words,
 * not libgit2's. why says what the repository is needed for. */
static int open_cwd(git_repository **out, const char *what, const char *why, struct pg_error *err)
{
	int rc = git_repository_open_ext(out, ".", 0, NULL);

	if (rc == GIT_ENOTFOUND) {
		git_error_clear();
		return pg_error_set(err, PG_ECONFIG,
				    "not inside a git checkout: %s; run perfgate in the project's "
				    "checkout, or pass --repo",
				    why);
	}
	return rc ? git_fail(err, what, ".") : 0;
}

/* https://, ssh://, git://, file:// or scp-like user@host:path. */
static bool is_url(const char *s)
{
	const char *colon = strchr(s, ':'), *slash = strchr(s, '/'), *at = strchr(s, '@');
	if (strstr(s, "://"))
		return true;
	return at && colon && at < colon && (!slash || colon < slash);
}

/*
 * file:///abs/path (or file://localhost/abs/path) as the path it names,
 * percent-decoded; NULL for anything else. Such a repository is opened
 * like a path: libgit2's local transport updates a pushed ref with force,
 * so two writers pushing from the same tip would both "succeed" and one
 * record would be lost.
 */
static char *file_url_path(const char *url)
{
	const char *p;
	struct pg_buf b = PG_BUF_INIT;

	if (strncmp(url, "file://", 7))
		return NULL;
	p = url + 7;
	if (!strncmp(p, "localhost/", 10))
		p += 9;
	if (*p != '/')
		return NULL;
	for (; *p; p++) {
		int hi, lo;
		if (*p == '%' && (hi = pg_hex_digit(p[1])) >= 0 && (lo = pg_hex_digit(p[2])) >= 0) {
			pg_buf_putc(&b, (char)(hi * 16 + lo));
			p += 2;
		} else {
			pg_buf_putc(&b, *p);
		}
	}
	return pg_buf_detach(&b);
}

enum location { LOC_CWD, LOC_PATH, LOC_URL };

/* Where repo is; *path (caller frees) gets the local path for LOC_PATH. */
static enum location locate(const char *repo, char **path)
{
	*path = NULL;
	if (!repo)
		return LOC_CWD;
	if ((*path = file_url_path(repo)))
		return LOC_PATH;
	if (is_url(repo))
		return LOC_URL;
	*path = pg_xstrdup(repo);
	return LOC_PATH;
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
	free(s->lock_path);
	free(s->guard_path);
	if (s->tmpdir) {
		nftw(s->tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		free(s->tmpdir);
	}
	memset(s, 0, sizeof(*s));
}

/* Local mode: where the ref's lock file and our guard are. Refs live in
 * the common directory (a linked worktree shares its repository's). */
static void local_paths(struct store *s)
{
	const char *common = git_repository_commondir(s->repo);
	struct pg_buf b = PG_BUF_INIT;

	pg_buf_printf(&b, "%s%s.lock", common, s->ref);
	s->lock_path = pg_buf_detach(&b);
	pg_buf_printf(&b, "%sperfgate-history.flock", common);
	s->guard_path = pg_buf_detach(&b);
}

static int store_open(struct store *s, const char *repo, const char *ref, struct pg_error *err)
{
	char *path = NULL;
	enum location loc = locate(repo, &path);
	int rc = 0;

	memset(s, 0, sizeof(*s));
	s->lock_seen_age = -1;
	s->ref = ref ? ref : PG_HISTORY_DEFAULT_REF;
	s->where = safe_url(repo ? repo : "the current repository");
	if (!git_reference_is_valid_name(s->ref)) {
		rc = pg_error_set(err, PG_ECONFIG, "'%s' is not a valid git ref name", s->ref);
		goto done;
	}
	if (loc == LOC_CWD) {
		rc = open_cwd(&s->repo, "opening the repository",
			      "the history (" PG_HISTORY_DEFAULT_REF
			      ") is read from the repository around the current directory",
			      err);
		if (!rc)
			local_paths(s);
		goto done;
	}
	if (loc == LOC_PATH) {
		if (git_repository_open(&s->repo, path))
			rc = git_fail(err, "opening the repository", s->where);
		else
			local_paths(s);
		goto done;
	}
	{
		const char *tmp = getenv("TMPDIR");
		struct pg_buf dir = PG_BUF_INIT;
		pg_buf_printf(&dir, "%s/perfgate-history-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(dir.ptr)) {
			int e = errno;
			pg_buf_release(&dir);
			rc = pg_error_set(err, PG_EINFRA, "mkdtemp: %s", strerror(e));
			goto done;
		}
		s->tmpdir = pg_buf_detach(&dir);
	}
	if (git_repository_init(&s->repo, s->tmpdir, 1)) {
		rc = git_fail(err, "creating a temporary repository", s->tmpdir);
		goto done;
	}
	{
		/* The URL is used as given: no url.<base>.insteadOf rewriting,
		 * whose config lookup (by regex) leaks in libgit2 1.5 with pcre2. */
		git_remote_create_options ro = GIT_REMOTE_CREATE_OPTIONS_INIT;
		ro.repository = s->repo;
		ro.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF;
		if (git_remote_create_with_opts(&s->remote, repo, &ro))
			rc = git_fail(err, "opening the remote", repo);
	}
done:
	free(path);
	return rc;
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
	/* a ref the remote no longer has goes here too */
	fo.prune = GIT_FETCH_PRUNE;
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

/* ------------------------------------------------------------------ */
/* The ref's lock                                                      */

/*
 * Every perfgate writer holds the guard file shared from before libgit2
 * creates the ref's lock until after it renames it into the ref, and the
 * kernel lets go of it when the writer dies, however it dies. So whoever
 * gets the guard exclusively knows that no live perfgate holds the ref's
 * lock. Returns the open descriptor (caller closes, which unlocks), or -1
 * when the guard cannot be had: flags has LOCK_NB and someone holds it,
 * or the file system has no flock (*unsupported).
 */
static int guard_take(const struct store *s, int flags, bool *unsupported)
{
	int fd, rc;

	*unsupported = false;
	if (!s->guard_path)
		return -1;
	fd = open(s->guard_path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0) {
		*unsupported = true;
		return -1;
	}
	while ((rc = flock(fd, flags)) && errno == EINTR)
		;
	if (rc) {
		*unsupported = errno != EWOULDBLOCK;
		close(fd);
		return -1;
	}
	return fd;
}

/* The lock file's age in seconds, or -1 when there is none. */
static double lock_age(const char *path, struct stat *st)
{
	struct timespec now;

	if (lstat(path, st))
		return -1;
	clock_gettime(CLOCK_REALTIME, &now);
	return (double)(now.tv_sec - st->st_mtim.tv_sec) +
	       (double)(now.tv_nsec - st->st_mtim.tv_nsec) / 1e9;
}

static const char *lock_name(const struct store *s)
{
	/* "refs/perfgate/history.lock", as git users know it */
	const char *name = strstr(s->lock_path, s->ref);
	return name ? name : s->lock_path;
}

/*
 * The ref was locked. If its lock is stale -- no perfgate writer holds the
 * guard and the file is older than LOCK_GRACE_S (LOCK_GRACE_UNGUARDED_S
 * where flock does not work) -- remove it, under the exclusive guard so
 * that no writer can be creating a new one meanwhile, and say so in
 * notes. A lock that is not stale is left alone: its age is kept for the
 * message should the deadline pass.
 */
static void recover_lock(struct store *s, struct pg_strv *notes)
{
	struct stat st, again;
	double age;
	bool unsupported;
	int fd;

	s->lock_seen_age = -1;
	if (!s->lock_path || (age = lock_age(s->lock_path, &st)) < 0)
		return;
	s->lock_seen_age = age;
	fd = guard_take(s, LOCK_EX | LOCK_NB, &unsupported);
	if (fd < 0 && !(unsupported && age >= LOCK_GRACE_UNGUARDED_S))
		return;
	if (age < (fd >= 0 ? LOCK_GRACE_S : LOCK_GRACE_UNGUARDED_S))
		goto done;
	/* the very file we judged, not one a writer made since */
	if (lstat(s->lock_path, &again) || again.st_ino != st.st_ino || again.st_dev != st.st_dev)
		goto done;
	if (unlink(s->lock_path) == 0) {
		struct pg_buf note = PG_BUF_INIT;
		pg_buf_printf(&note,
			      "removed a stale lock, %s in %s, %.0f s old: the writer that made it "
			      "was stopped before it finished",
			      lock_name(s), s->where, age);
		pg_strv_push_owned(notes, pg_buf_detach(&note));
		s->lock_seen_age = -1;
	}
done:
	if (fd >= 0)
		close(fd);
}

/* ------------------------------------------------------------------ */
/* Moving the ref                                                      */

static int push_ref_status(const char *refname, const char *status, void *payload)
{
	struct store *s = payload;
	(void)refname;
	if (status) {
		s->push_rejected = true;
		snprintf(s->push_status, sizeof(s->push_status), "%s", status);
	}
	return 0;
}

/* What an update did. */
enum update { UPDATED, REJECTED, LOCKED, FAILED };

/*
 * Move the ref from old (NULL: it must not exist yet) to new. Another
 * writer having moved it first is REJECTED, its lock being there LOCKED;
 * FAILED (err says why) may be a passing failure (a dropped connection).
 */
static enum update store_update(struct store *s, const git_oid *old, const git_oid *new,
				struct pg_error *err)
{
	git_reference *ref = NULL;
	int rc;

	if (!s->remote) {
		bool unsupported;
		int guard = guard_take(s, LOCK_SH, &unsupported);

		/* a compare-and-swap even for the first record: libgit2 checks
		 * "must not exist" (force 0) before it takes the lock, so two
		 * writers could both create the ref; a zero old id is checked
		 * under the lock */
		git_oid none;
		memset(&none, 0, sizeof(none));
		rc = git_reference_create_matching(&ref, s->repo, s->ref, new, 1, old ? old : &none,
						   "perfgate: record");
		if (guard >= 0)
			close(guard);
		git_reference_free(ref);
		if (rc == GIT_EMODIFIED || rc == GIT_EEXISTS) {
			git_error_clear();
			return REJECTED;
		}
		if (rc == GIT_ELOCKED) {
			git_error_clear();
			return LOCKED;
		}
		if (rc) {
			git_fail(err, "updating the history ref", s->where);
			return FAILED;
		}
		return UPDATED;
	}

	/* URL mode: our clone's ref first, then a push without force */
	rc = git_reference_create(&ref, s->repo, s->ref, new, 1, "perfgate: record");
	git_reference_free(ref);
	if (rc) {
		git_fail(err, "updating the local history ref", s->tmpdir);
		return FAILED;
	}
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
		s->push_status[0] = '\0';
		rc = git_remote_push(s->remote, &arr, &po);
		pg_buf_release(&spec);
		if (rc == GIT_ENONFASTFORWARD || (rc == 0 && s->push_rejected)) {
			git_error_clear();
			return REJECTED;
		}
		if (rc) {
			git_fail(err, "pushing the history", s->where);
			return FAILED;
		}
	}
	return UPDATED;
}

/* Is ours the tip, or an ancestor of it (later writers built on it)? */
static bool contains(git_repository *repo, const git_oid *tip, const git_oid *ours)
{
	bool yes = git_oid_equal(tip, ours) || git_graph_descendant_of(repo, tip, ours) == 1;
	git_error_clear();
	return yes;
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
 * Full jitter: a uniform wait up to a cap that doubles with each try
 * (40 ms, 80 ms, ... 4 s), so writers that collided spread out instead
 * of colliding again in step. The cap grows that far because N writers
 * that each need time T to fetch, commit and push are best spread over
 * N x T: 32 writers at 0.1 s, or 8 on a loaded machine at 0.5 s.
 */
static long backoff_ms(struct pg_rng *rng, int attempt)
{
	long cap = 20L << (attempt < 8 ? attempt : 8);
	if (cap > 4000)
		cap = 4000;
	return 5 + pg_rng_range(rng, 0, cap);
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

static double timeout_of(double given)
{
	const char *env = getenv("PERFGATE_HISTORY_TIMEOUT");
	double t;

	if (given > 0)
		return given;
	if (env && *env && pg_parse_double(env, &t) == 0 && t > 0)
		return t;
	return PG_HISTORY_DEFAULT_TIMEOUT;
}

/*
 * One change to the history: given the tip (NULL: no history yet), make
 * the commit that applies it on top. *nothing: there is nothing to
 * change on this tip (no commit made).
 */
typedef int (*build_fn)(struct store *s, const git_oid *parent, git_oid *out, bool *nothing,
			void *ctx, struct pg_error *err);

/*
 * Apply a change until it is in the history or the deadline passes:
 * fetch the tip, build on it, move the ref, and read the tip back to see
 * that our commit is there (the tip or an ancestor of it) -- whatever the
 * transport claimed. A rejected update (another writer won), a lock, a
 * dropped connection or a lost update are tried again after a jittered
 * backoff; other failures end it.
 */
static int commit_loop(struct store *s, build_fn build, void *ctx, double timeout,
		       struct pg_history_recorded *out, struct pg_error *err)
{
	const char *barrier = getenv("PERFGATE_HISTORY_TEST_BARRIER");
	double start = pg_monotonic(), deadline = start + timeout_of(timeout);
	struct pg_rng rng;
	git_oid pending; /* our last commit whose update may have landed */
	bool have_pending = false;
	int transport_failures = 0, rejections = 0;
	enum update last = UPDATED;
	struct pg_error last_err = PG_ERROR_INIT;
	int rc = 0;

	pg_rng_seed(&rng,
		    (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(pg_monotonic() * 1e9));
	/* a crash must never leave a ref that names an object not on disk */
	git_libgit2_opts(GIT_OPT_ENABLE_FSYNC_GITDIR, 1);
	for (int attempt = 1;; attempt++) {
		git_oid tip, new;
		bool exists, nothing = false;
		enum update u;

		if (attempt > 1) {
			if (pg_monotonic() + 0.005 >= deadline)
				break;
			{
				long ms = backoff_ms(&rng, attempt - 1);
				double left = (deadline - pg_monotonic()) * 1000;
				sleep_ms(ms < left ? ms : (long)left);
			}
		}
		out->attempts = attempt;
		if ((rc = store_fetch(s, err))) {
			if (++transport_failures >= MAX_TRANSPORT_FAILURES)
				goto done;
			last = FAILED;
			last_err = *err;
			pg_error_clear(err);
			rc = 0;
			continue;
		}
		if ((rc = store_tip(s, &tip, &exists, err)))
			goto done;
		/* an update reported as failed may have landed all the same */
		if (have_pending && exists && contains(s->repo, &tip, &pending)) {
			git_oid_tostr(out->commit, sizeof(out->commit), &pending);
			goto done;
		}
		have_pending = false;
		if ((rc = build(s, exists ? &tip : NULL, &new, &nothing, ctx, err)))
			goto done;
		if (nothing)
			goto done;
		if (barrier && attempt == 1)
			test_barrier(barrier);
		u = store_update(s, exists ? &tip : NULL, &new, err);
		last = u;
		if (u == FAILED) {
			if (++transport_failures >= MAX_TRANSPORT_FAILURES) {
				rc = err->code;
				goto done;
			}
			last_err = *err;
			pg_error_clear(err);
			git_oid_cpy(&pending, &new);
			have_pending = true;
			continue;
		}
		transport_failures = 0;
		if (u == REJECTED) {
			rejections++;
			continue;
		}
		if (u == LOCKED) {
			recover_lock(s, &out->notes);
			continue;
		}
		/* UPDATED: believe it when the tip says so */
		if ((rc = store_fetch(s, err)) == 0 &&
		    (rc = store_tip(s, &tip, &exists, err)) == 0 && exists &&
		    contains(s->repo, &tip, &new)) {
			git_oid_tostr(out->commit, sizeof(out->commit), &new);
			goto done;
		}
		if (rc) {
			/* could not read it back: find out on the next try */
			last_err = *err;
			pg_error_clear(err);
			rc = 0;
			git_oid_cpy(&pending, &new);
			have_pending = true;
			transport_failures++;
			continue;
		}
		{
			struct pg_buf note = PG_BUF_INIT;
			pg_buf_printf(&note,
				      "%s: %s was updated but another writer's update replaced it "
				      "(a transport that forces updates?): applied again",
				      s->where, s->ref);
			pg_strv_push_owned(&out->notes, pg_buf_detach(&note));
		}
	}
	/* out of time */
	if (last == LOCKED && s->lock_seen_age >= 0)
		rc = pg_error_set(
			err, PG_EINFRA,
			"%s: %s: still locked after %d attempts in %.0f s: %s is %.0f s old and "
			"another program holds it (or held it and died); if no git program is "
			"working on the repository, remove it",
			s->where, s->ref, out->attempts, pg_monotonic() - start, lock_name(s),
			s->lock_seen_age);
	else if (last == FAILED && last_err.code)
		rc = pg_error_set(err, PG_EINFRA, "%s (after %d attempts in %.0f s)", last_err.msg,
				  out->attempts, pg_monotonic() - start);
	else
		rc = pg_error_set(
			err, PG_EINFRA,
			"%s: %s: not recorded after %d attempts in %.0f s: other writers kept "
			"winning (%d rejected%s%s); raise PERFGATE_HISTORY_TIMEOUT",
			s->where, s->ref, out->attempts, pg_monotonic() - start, rejections,
			s->push_status[0] ? ": " : "", s->push_status);
done:
	out->seconds = pg_monotonic() - start;
	return rc;
}

/* ------------------------------------------------------------------ */
/* Commits                                                             */

/* <gpu>/<point>.jsonl, or <gpu>/<sub>/<point>.jsonl; a '/' in gpu or point
 * would make a directory. */
static void point_path(struct pg_buf *out, const char *gpu, const char *sub, const char *point)
{
	pg_buf_reset(out);
	for (const char *p = gpu; *p; p++)
		pg_buf_putc(out, *p == '/' ? '_' : *p);
	pg_buf_putc(out, '/');
	if (sub)
		pg_buf_printf(out, "%s/", sub);
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

/* A tree entry's blob, read in place: *text (len bytes, not NUL-terminated)
 * lives as long as *blob, which the caller frees. A file of every run of a
 * point is a few hundred kilobytes, and perfgate trends reads ten thousand:
 * no copy of it. */
static int entry_blob(git_repository *repo, const git_tree_entry *e, git_blob **blob,
		      const char **text, size_t *len, const char *where, struct pg_error *err)
{
	*text = "";
	*len = 0;
	if (git_blob_lookup(blob, repo, git_tree_entry_id(e))) {
		*blob = NULL;
		return git_fail(err, "reading a history file", where);
	}
	if ((*len = (size_t)git_blob_rawsize(*blob)))
		*text = git_blob_rawcontent(*blob);
	return 0;
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

/* The parent's tree (an empty one for the first commit). */
static int parent_tree(struct store *s, const git_oid *parent_id, git_commit **parent,
		       git_tree **tree, struct pg_error *err)
{
	*parent = NULL;
	*tree = NULL;
	if (!parent_id)
		return empty_tree(s->repo, tree, s->where, err);
	if (git_commit_lookup(parent, s->repo, parent_id) || git_commit_tree(tree, *parent))
		return git_fail(err, "reading the history", s->where);
	return 0;
}

/* Changed files, to apply to a tree in one go. */
struct updates {
	git_tree_update *v;
	char **paths;
	size_t n, cap;
};

static int updates_add(struct updates *u, struct store *s, const char *path, const char *content,
		       size_t len, struct pg_error *err)
{
	git_oid blob;

	if (git_blob_create_from_buffer(&blob, s->repo, content, len))
		return git_fail(err, "writing a history file", s->where);
	if (u->n == u->cap) {
		u->cap = u->cap ? 2 * u->cap : 16;
		u->v = pg_xrealloc(u->v, u->cap * sizeof(*u->v));
		u->paths = pg_xrealloc(u->paths, u->cap * sizeof(*u->paths));
	}
	u->paths[u->n] = pg_xstrdup(path);
	memset(&u->v[u->n], 0, sizeof(u->v[u->n]));
	u->v[u->n].action = GIT_TREE_UPDATE_UPSERT;
	u->v[u->n].id = blob;
	u->v[u->n].filemode = GIT_FILEMODE_BLOB;
	u->v[u->n].path = u->paths[u->n];
	u->n++;
	return 0;
}

static void updates_release(struct updates *u)
{
	for (size_t i = 0; i < u->n; i++)
		free(u->paths[i]);
	free(u->paths);
	free(u->v);
	memset(u, 0, sizeof(*u));
}

/* The commit of tree + updates on top of parent, with message msg. */
static int write_commit(struct store *s, git_commit *parent, git_tree *tree,
			const struct updates *u, const char *msg, git_oid *out,
			struct pg_error *err)
{
	git_tree *new_tree = NULL;
	git_signature *sig = NULL;
	git_oid tree_id;
	int rc = 0;

	if (git_tree_create_updated(&tree_id, s->repo, tree, u->n, u->v) ||
	    git_tree_lookup(&new_tree, s->repo, &tree_id)) {
		rc = git_fail(err, "writing the history tree", s->where);
		goto done;
	}
	if (git_signature_now(&sig, "perfgate", "perfgate@localhost")) {
		rc = git_fail(err, "making a signature", s->where);
		goto done;
	}
	{
		const git_commit *parents[1] = { parent };
		if (git_commit_create(out, s->repo, NULL, sig, sig, NULL, msg, new_tree,
				      parent ? 1 : 0, parents))
			rc = git_fail(err, "committing the history", s->where);
	}
done:
	git_signature_free(sig);
	git_tree_free(new_tree);
	return rc;
}

struct record_ctx {
	const struct pg_cmp_run *run;
	const struct pg_history_record_opts *o; /* meta.commit is a full id */
	struct pg_history_recorded *out;
	/* an A/B step's lines (baseline/history_ab.h) instead of the run's:
	 * run is the head's results, for the points' names and parameters */
	const struct pg_ab_summary *ab;
	const struct pg_history_ab_meta *ab_meta;
};

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

	point_path(&path, k->gpu, NULL, point);
	found = k->tree && git_tree_entry_bypath(&e, k->tree, path.ptr) == 0;
	if (!found)
		git_error_clear();
	git_tree_entry_free(e);
	pg_buf_release(&path);
	return found;
}

/* Point i's line (new reference, or NULL: nothing to record) and the
 * result it names (NULL: an A/B point the head has no result of). */
static json_t *record_line(const struct record_ctx *c, const struct pg_cmp_index *head, size_t i,
			   const struct pg_cmp_point **p, const char **name)
{
	if (c->ab) {
		*name = c->ab->points.v[i];
		*p = pg_cmp_index_find(head, *name);
		return pg_history_ab_line(c->ab, i, *p, c->ab_meta);
	}
	*p = &c->run->points[i];
	*name = (*p)->name;
	return pg_history_point_recordable(*p, NULL) ? pg_history_line(*p, &c->o->meta) : NULL;
}

/* A commit on top of parent (NULL: the first) with every recordable point's
 * line, replacing an earlier record of the same build. A point goes to the
 * file of its identity (results/identity.h), or to the file an older name
 * of the same workload already has, so its history stays in one piece
 * across the rename; an A/B step's lines go to the same name under ab/. */
static int build_record(struct store *s, const git_oid *parent_id, git_oid *out, bool *nothing,
			void *ctx, struct pg_error *err)
{
	struct record_ctx *c = ctx;
	const struct pg_history_record_opts *o = c->o;
	git_commit *parent = NULL;
	git_tree *tree = NULL;
	struct updates u = { 0 };
	struct pg_buf old = PG_BUF_INIT, content = PG_BUF_INIT, path = PG_BUF_INIT,
		      line = PG_BUF_INIT, msg = PG_BUF_INIT;
	struct pg_cmp_index head;
	size_t n = c->ab ? c->ab->points.n : c->run->n;
	int rc;

	*nothing = false;
	c->out->lines = c->out->replaced = 0;
	pg_cmp_index_init(&head, c->run->points, c->run->n);
	if ((rc = parent_tree(s, parent_id, &parent, &tree, err)))
		goto done;
	for (size_t i = 0; i < n; i++) {
		const struct pg_cmp_point *p;
		const char *point;
		json_t *rec = record_line(c, &head, i, &p, &point);
		int replaced, bad;
		char why[256];

		if (!rec)
			continue;
		pg_buf_reset(&line);
		pg_json_write(&line, rec, -1);
		json_decref(rec);
		{
			struct known_files k = { parent_id ? tree : NULL, o->gpu };
			char *name = p ? pg_identity_find(p->name, p->suite, p->result, in_history,
							  &k)
				       : NULL;

			if (!name)
				name = p ? pg_identity_of(p->name, p->suite, p->result)
					 : pg_xstrdup(point);
			point_path(&path, o->gpu, c->ab ? PG_HISTORY_AB_DIR : NULL, name);
			free(name);
		}
		pg_buf_reset(&old);
		pg_buf_reset(&content);
		if ((rc = read_blob(s->repo, parent_id ? tree : NULL, path.ptr, &old, s->where,
				    err)))
			goto done;
		replaced = (c->ab ? pg_history_append_ab : pg_history_append)(
			&content, old.ptr, old.len, line.ptr, &bad, why, sizeof(why));
		if (replaced < 0) {
			rc = pg_error_set(
				err, PG_EINFRA,
				"%s: %s:%s:%d: unreadable history line (%s): no record is added "
				"after it; 'perfgate baseline repair' drops it",
				s->where, s->ref, path.ptr, bad, why);
			goto done;
		}
		c->out->replaced += (size_t)replaced;
		if ((rc = updates_add(&u, s, path.ptr, content.ptr, content.len, err)))
			goto done;
	}
	c->out->lines = u.n;
	if (!u.n) {
		*nothing = true;
		goto done;
	}
	pg_buf_printf(&msg, "perfgate: record %s%zu point%s on %s",
		      c->ab ? "the A/B results of " : "", u.n, u.n == 1 ? "" : "s", o->gpu);
	if (o->meta.commit)
		pg_buf_printf(&msg, " at %.12s", o->meta.commit);
	pg_buf_puts(&msg, "\n");
	if (o->meta.build_url)
		pg_buf_printf(&msg, "\nBuild: %s\n", o->meta.build_url);
	rc = write_commit(s, parent, tree, &u, msg.ptr, out, err);
done:
	pg_cmp_index_release(&head);
	updates_release(&u);
	git_tree_free(tree);
	git_commit_free(parent);
	pg_buf_release(&old);
	pg_buf_release(&content);
	pg_buf_release(&path);
	pg_buf_release(&line);
	pg_buf_release(&msg);
	return rc;
}

/* ------------------------------------------------------------------ */
/* The source repository                                               */

/*
 * The repository that answers questions about source commits
 * (struct pg_history_opts): source when given, else the history
 * repository when it is local with a HEAD of its own, else the checkout
 * around the cwd. *where (caller frees) names it for messages.
 */
static int open_source(git_repository **out, char **where, const char *source, const char *history,
		       struct pg_error *err)
{
	char *path = NULL;
	int rc = 0;

	*out = NULL;
	*where = NULL;
	if (source) {
		*where = pg_xstrdup(source);
		if (git_repository_open_ext(out, source, 0, NULL))
			rc = git_fail(err, "opening the source repository", source);
		return rc;
	}
	if (locate(history, &path) == LOC_PATH) {
		git_repository *r = NULL;
		git_oid head;
		if (git_repository_open(&r, path) == 0 &&
		    git_reference_name_to_id(&head, r, "HEAD") == 0) {
			*out = r;
			*where = safe_url(history);
			free(path);
			return 0;
		}
		git_repository_free(r);
		git_error_clear();
	}
	free(path);
	*where = pg_xstrdup(".");
	return open_cwd(out, "opening the source repository",
			history ? "the runs are placed against the project's commits (HEAD, the "
				  "merge-base), and the history repository has none of them"
				: "the runs are placed against the project's commits (HEAD, the "
				  "merge-base)",
			err);
}

/* The measured commit as a full id: given as one, or a name (a branch,
 * "HEAD~1") resolved in the source repository, or its HEAD. */
static int resolve_measured(char hex[41], const struct pg_history_record_opts *o,
			    struct pg_error *err)
{
	const char *given = o->meta.commit;
	git_repository *src = NULL;
	git_object *obj = NULL, *peeled = NULL;
	char *where = NULL;
	int rc = 0;

	if (given && is_full_sha(given)) {
		snprintf(hex, 41, "%s", given);
		return 0;
	}
	if (open_source(&src, &where, o->source_repo, o->repo, err) == 0 &&
	    git_revparse_single(&obj, src, given ? given : "HEAD") == 0 &&
	    git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT) == 0) {
		git_oid_tostr(hex, 41, git_object_id(peeled));
	} else if (given) {
		rc = pg_error_set(err, PG_ECONFIG,
				  "--commit '%s' is not a commit of %s (give the full id)", given,
				  where && strcmp(where, ".") ? where : "this repository");
	} else {
		rc = pg_error_set(
			err, PG_ECONFIG,
			"which commit did this run measure? pass --commit (%s has no HEAD)",
			where && strcmp(where, ".") ? where : "no repository here");
	}
	git_error_clear();
	git_object_free(peeled);
	git_object_free(obj);
	git_repository_free(src);
	free(where);
	return rc;
}

void pg_history_recorded_release(struct pg_history_recorded *r)
{
	pg_strv_release(&r->left_out);
	pg_strv_release(&r->notes);
	memset(r, 0, sizeof(*r));
}

int pg_history_record(const struct pg_cmp_run *run, const struct pg_history_record_opts *o,
		      struct pg_history_recorded *out, struct pg_error *err)
{
	struct store s;
	struct pg_history_record_opts opts = *o;
	struct record_ctx ctx = { run, &opts, out };
	struct pg_buf why = PG_BUF_INIT;
	size_t recordable = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&s, 0, sizeof(s));
	for (size_t i = 0; i < run->n; i++) {
		pg_buf_reset(&why);
		if (pg_history_point_recordable(&run->points[i], &why)) {
			recordable++;
			continue;
		}
		{
			struct pg_buf item = PG_BUF_INIT;
			pg_buf_printf(&item, "%s: %s", run->points[i].name,
				      why.len ? why.ptr : "not recordable");
			pg_strv_push_owned(&out->left_out, pg_buf_detach(&item));
		}
	}
	if (!recordable) {
		out->none_recordable = true;
		rc = pg_error_set(
			err, PG_ECONFIG,
			"nothing to record: no result that is ok, complete and comparable");
		goto done;
	}
	if ((rc = resolve_measured(out->measured, o, err)))
		goto done;
	opts.meta.commit = out->measured;
	if ((rc = store_open(&s, o->repo, o->ref, err)))
		goto done;
	rc = commit_loop(&s, build_record, &ctx, o->timeout, out, err);
	if (rc == 0 && !out->commit[0])
		rc = pg_error_set(err, PG_ECONFIG,
				  "nothing to record: no result with a comparable metric");
done:
	store_close(&s);
	pg_buf_release(&why);
	if (rc)
		redact_error(err, o->repo);
	redact_strv(&out->notes, o->repo);
	return rc;
}

int pg_history_record_ab(const struct pg_ab_summary *ab, const struct pg_cmp_run *head,
			 const struct pg_history_record_opts *o, const char *base_commit,
			 const char *pr, struct pg_history_recorded *out, struct pg_error *err)
{
	struct store s;
	struct pg_history_record_opts opts = *o;
	struct pg_history_ab_meta meta = { NULL,         base_commit,       pr,
					   o->meta.date, o->meta.build_url, o->meta.branch };
	struct record_ctx ctx = { head, &opts, out, ab, &meta };
	size_t recordable = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&s, 0, sizeof(s));
	for (size_t p = 0; p < ab->points.n; p++) {
		json_t *line = pg_history_ab_line(ab, p, NULL, &meta);
		if (line) {
			recordable++;
		} else {
			struct pg_buf item = PG_BUF_INIT;
			pg_buf_printf(&item, "%s: no metric decided", ab->points.v[p]);
			pg_strv_push_owned(&out->left_out, pg_buf_detach(&item));
		}
		json_decref(line);
	}
	if (!recordable) {
		out->none_recordable = true;
		rc = pg_error_set(err, PG_ECONFIG,
				  "nothing to record: no point of the A/B run has a verdict");
		goto done;
	}
	if ((rc = resolve_measured(out->measured, o, err)))
		goto done;
	meta.commit = out->measured;
	opts.meta.commit = out->measured;
	if ((rc = store_open(&s, o->repo, o->ref, err)))
		goto done;
	rc = commit_loop(&s, build_record, &ctx, o->timeout, out, err);
done:
	store_close(&s);
	if (rc)
		redact_error(err, o->repo);
	redact_strv(&out->notes, o->repo);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Reading                                                             */

static int cmp_history(const void *a, const void *b)
{
	return strcmp(((const struct pg_history *)a)->point, ((const struct pg_history *)b)->point);
}

/* Reading a GPU's files, a task each (base/tasks.h): worker k reads with
 * repos[k] into pools[k] (libgit2 wants a repository handle per thread). */
struct read_job {
	const struct store *s;
	const struct pg_history_opts *o;
	const char *gpu;
	const git_tree_entry **files;
	size_t *order;         /* the t-th read is files[order[t]]; NULL: files[t] */
	size_t n, run;         /* files; a task reads run of them in a row */
	struct pg_history *hs; /* per file */
	git_repository **repos;
	struct pg_history_pool **pools;
	struct pg_task_errors errs;
};

static void read_file(struct read_job *j, size_t t, unsigned worker)
{
	size_t i = j->order ? j->order[t] : t;
	const git_tree_entry *f = j->files[i];
	const char *name = git_tree_entry_name(f);
	char *stem = pg_xstrndup(name, strlen(name) - strlen(".jsonl"));
	struct pg_buf src = PG_BUF_INIT;
	git_blob *blob = NULL;
	const char *text;
	size_t len;
	struct pg_history *h = &j->hs[i];
	struct pg_error e = PG_ERROR_INIT;
	int rc;

	if (pg_task_errors_skip(&j->errs, i))
		goto done;
	pg_buf_printf(&src, "%s:%s/%s", j->s->ref, j->gpu, name);
	rc = entry_blob(j->repos[worker], f, &blob, &text, &len, j->s->where, &e);
	if (rc == 0 &&
	    (rc = j->pools[worker]
			  ? pg_history_parse_compact(h, stem, text, len, src.ptr, j->o->slim_policy,
						     j->pools[worker], &e)
			  : pg_history_parse(h, stem, text, len, src.ptr, &e))) {
		/* where, and what to do about it */
		bool broken = strstr(e.msg, "unreadable history line") != NULL;
		bool named = strcmp(j->s->where, "the current repository") != 0;
		struct pg_buf m = PG_BUF_INIT;

		pg_buf_printf(&m, "%s%s%s (%s)", named ? j->s->where : "", named ? ": " : "", e.msg,
			      broken ? "'perfgate baseline check' lists such lines, "
				       "'perfgate baseline repair' drops them"
				     : "upgrade perfgate to read it");
		pg_error_set(&e, rc, "%s", m.ptr);
		pg_buf_release(&m);
	}
	if (rc) {
		pg_task_errors_set(&j->errs, i, worker, &e);
		goto done;
	}
	if (j->o->slim && !j->pools[worker])
		pg_history_slim(h, j->o->slim_policy);
done:
	git_blob_free(blob);
	free(stem);
	pg_buf_release(&src);
}

/* Task k: the reads k * run .. (k + 1) * run, in a row on one thread, so
 * that libgit2's cache of the delta bases serves each next file (two
 * threads taking files in turn rebuilt each chain twice: 70% more
 * inflating). */
static void read_task(void *ctx, size_t k, unsigned worker)
{
	struct read_job *j = ctx;

	for (size_t t = k * j->run; t < j->n && t < (k + 1) * j->run; t++)
		read_file(j, t, worker);
}

_Static_assert(GIT_OID_RAWSZ == PG_PACK_OID_LEN, "the names pack indexes hold");

struct packed_at {
	size_t file, pack;
	uint64_t offset;
	bool found;
};

static int cmp_packed_at(const void *a, const void *b)
{
	const struct packed_at *x = a, *y = b;

	if (x->found != y->found)
		return x->found ? -1 : 1;
	if (x->found && x->pack != y->pack)
		return x->pack < y->pack ? -1 : 1;
	if (x->found && x->offset != y->offset)
		return x->offset > y->offset ? -1 : 1;
	return (x->file > y->file) - (x->file < y->file);
}

/*
 * The order to read files[0..n) in: each pack's objects from its end back
 * (objects/pack/ of repo, the indexes read here), then the rest (loose,
 * elsewhere) as listed; NULL for the listed order. A delta's base lies
 * before it in its pack, and libgit2 keeps the bases it rebuilds, not the
 * object it returns: read from the end, a chain is rebuilt once, from its
 * top, and its other files come from that cache. A history whose files
 * are deltas of each other (as git fast-import and pushes write them)
 * reads in 60% of the CPU time of the listed order; one without deltas
 * as fast as before.
 */
static size_t *pack_order(git_repository *repo, const git_tree_entry *const *files, size_t n)
{
	struct pg_buf dir = PG_BUF_INIT, path = PG_BUF_INIT;
	struct pg_strv idx = { 0 };
	struct pg_error ignored = PG_ERROR_INIT;
	struct {
		unsigned char *map;
		size_t len;
	} packs[64];
	size_t n_packs = 0, *order = NULL, found = 0;
	struct packed_at *at = NULL;

	if (n < 2)
		return NULL;
	/* the objects of a linked worktree are its main repository's; those
	 * of alternates are not looked up (read after, as listed). Regular
	 * files only, in name order: no FIFO to block on, no link followed */
	pg_buf_printf(&dir, "%sobjects/pack", git_repository_commondir(repo));
	if (pg_dir_list_regular(dir.ptr, ".idx", &idx, &ignored))
		goto done;
	for (size_t k = 0; k < idx.n && n_packs < sizeof(packs) / sizeof(packs[0]); k++) {
		struct stat st;
		void *map;
		int fd;

		pg_buf_reset(&path);
		pg_buf_printf(&path, "%s/%s", dir.ptr, idx.v[k]);
		fd = open(path.ptr, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0)
			continue;
		map = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0
			      ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)
			      : MAP_FAILED;
		close(fd);
		if (map == MAP_FAILED)
			continue;
		if (!pg_pack_index_valid(map, (size_t)st.st_size)) {
			munmap(map, (size_t)st.st_size);
			continue;
		}
		packs[n_packs].map = map;
		packs[n_packs++].len = (size_t)st.st_size;
	}
	if (!n_packs)
		goto done;
	at = pg_xmalloc(n * sizeof(*at));
	for (size_t i = 0; i < n; i++) {
		const unsigned char *oid = git_tree_entry_id(files[i])->id;
		at[i] = (struct packed_at){ i, 0, 0, false };
		for (size_t p = 0; p < n_packs && !at[i].found; p++)
			if (pg_pack_index_find(packs[p].map, packs[p].len, oid, &at[i].offset)) {
				at[i].pack = p;
				at[i].found = true;
				found++;
			}
	}
	if (!found)
		goto done;
	qsort(at, n, sizeof(*at), cmp_packed_at);
	order = pg_xmalloc(n * sizeof(*order));
	for (size_t i = 0; i < n; i++)
		order[i] = at[i].file;
done:
	free(at);
	for (size_t p = 0; p < n_packs; p++)
		munmap(packs[p].map, packs[p].len);
	pg_buf_release(&dir);
	pg_buf_release(&path);
	pg_strv_release(&idx);
	return order;
}

/* The tip's directory of gpu (a '/' in the GPU key is '_', as written),
 * fetched first; *dir NULL when the ref or the GPU is not there. The caller
 * frees *dir. */
static int tip_dir(struct store *s, const char *gpu, git_tree **dir, struct pg_error *err)
{
	git_oid tip;
	bool exists;
	git_commit *c = NULL;
	git_tree *root = NULL;
	git_tree_entry *e = NULL;
	struct pg_buf path = PG_BUF_INIT;
	int rc;

	*dir = NULL;
	if ((rc = store_fetch(s, err)) || (rc = store_tip(s, &tip, &exists, err)) || !exists)
		goto done;
	if (git_commit_lookup(&c, s->repo, &tip) || git_commit_tree(&root, c)) {
		rc = git_fail(err, "reading the history", s->where);
		goto done;
	}
	for (const char *p = gpu; *p; p++)
		pg_buf_putc(&path, *p == '/' ? '_' : *p);
	rc = git_tree_entry_bypath(&e, root, path.ptr);
	if (rc == GIT_ENOTFOUND || (rc == 0 && git_tree_entry_type(e) != GIT_OBJECT_TREE)) {
		git_error_clear();
		rc = 0;
		goto done;
	}
	if (rc || git_tree_lookup(dir, s->repo, git_tree_entry_id(e)))
		rc = git_fail(err, "reading the history", s->where);
done:
	git_tree_entry_free(e);
	git_tree_free(root);
	git_commit_free(c);
	pg_buf_release(&path);
	return rc;
}

/* The runs' files of a GPU's directory dir (of the tip). */
static int read_histories(struct store *s, git_tree *dir, const char *gpu, const char *point,
			  const struct pg_history_opts *o, struct pg_history **out, size_t *n,
			  struct pg_error *err)
{
	unsigned nw = pg_tasks_workers(o->tasks);
	struct pg_tasks fewer = { 0 };
	struct read_job j = { .s = s, .o = o, .gpu = gpu };
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < git_tree_entrycount(dir); i++) {
		const git_tree_entry *f = git_tree_entry_byindex(dir, i);
		const char *name = git_tree_entry_name(f);
		if (git_tree_entry_type(f) != GIT_OBJECT_BLOB || !pg_str_has_suffix(name, ".jsonl"))
			continue;
		if (point && (strlen(name) != strlen(point) + strlen(".jsonl") ||
			      strncmp(name, point, strlen(point))))
			continue;
		PG_ARRAY_PUSH(j.files, *n, cap, f);
	}
	/* a libgit2 built without threads keeps its error and its mapped
	 * pack windows in globals: one worker */
	if (*n < 2 || !(git_libgit2_features() & GIT_FEATURE_THREADS))
		nw = 1;
	j.hs = pg_xcalloc(*n ? *n : 1, sizeof(*j.hs));
	j.repos = pg_xcalloc(nw, sizeof(*j.repos));
	j.pools = pg_xcalloc(nw, sizeof(*j.pools));
	j.repos[0] = s->repo;
	j.pools[0] = o->pool;
	for (unsigned k = 1; k < nw; k++) {
		/* a handle that will not open (out of descriptors, say) means
		 * fewer workers, not a failure: one worker reads it all */
		if (git_repository_open(&j.repos[k], git_repository_path(s->repo))) {
			git_error_clear();
			j.repos[k] = NULL;
			nw = k;
			break;
		}
		j.pools[k] = o->pool ? pg_history_pool_new() : NULL;
	}
	if (nw > 1) {
		fewer = *o->tasks;
		fewer.workers = nw;
	}
	j.order = pack_order(s->repo, j.files, *n);
	j.n = *n;
	/* in the pack's order, runs of files (up to 256: a delta chain is at
	 * most 50 by default), eight runs a worker at least to share the work
	 * out; in the listed order, a file a task */
	j.run = j.order ? *n / (8 * (size_t)nw) : 1;
	j.run = j.run < 1 ? 1 : j.run > 256 ? 256 : j.run;
	pg_task_errors_init(&j.errs, nw > 1 ? &fewer : NULL, *n);
	pg_tasks_run(nw > 1 ? &fewer : NULL, (*n + j.run - 1) / j.run, read_task, &j);
	rc = pg_task_errors_release(&j.errs, err);
	if (o->pool && nw > 1)
		pg_history_pool_join(o->pool, j.pools + 1, nw - 1, j.hs, *n);
	else
		for (unsigned k = 1; k < nw; k++)
			pg_history_pool_free(j.pools[k]);
	*out = j.hs;
	j.hs = NULL;
	if (rc)
		goto done;
	if (*n > 1)
		qsort(*out, *n, sizeof(**out), cmp_history);
done:
	if (rc && *out) {
		for (size_t i = 0; i < *n; i++)
			pg_history_release(&(*out)[i]);
		free(*out);
		*out = NULL;
		*n = 0;
	}
	free(j.hs);
	for (unsigned k = 1; j.repos && k < nw; k++)
		git_repository_free(j.repos[k]);
	free(j.repos);
	free(j.pools);
	free(j.files);
	free(j.order);
	return rc;
}

static int cmp_history_ab(const void *a, const void *b)
{
	return strcmp(((const struct pg_history_ab *)a)->point,
		      ((const struct pg_history_ab *)b)->point);
}

/* <gpu>/ab/ of the tip (dir: <gpu>/, or NULL): every file's A/B lines;
 * on an error, none (err says why, redacted). */
static int read_ab(struct store *s, git_tree *dir, const char *gpu, const char *repo,
		   struct pg_history_ab **out, size_t *n, struct pg_error *err)
{
	git_tree *sub = NULL;
	const git_tree_entry *e = dir ? git_tree_entry_byname(dir, PG_HISTORY_AB_DIR) : NULL;
	struct pg_buf path = PG_BUF_INIT;
	size_t cap = 0;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (!e || git_tree_entry_type(e) != GIT_OBJECT_TREE)
		goto done; /* no A/B results */
	if (git_tree_lookup(&sub, s->repo, git_tree_entry_id(e))) {
		rc = git_fail(err, "reading the history", s->where);
		goto done;
	}
	for (size_t i = 0; i < git_tree_entrycount(sub) && !rc; i++) {
		const git_tree_entry *f = git_tree_entry_byindex(sub, i);
		const char *name = git_tree_entry_name(f);
		struct pg_history_ab h = { 0 };
		git_blob *blob = NULL;
		const char *text;
		size_t len;
		char *stem;

		if (git_tree_entry_type(f) != GIT_OBJECT_BLOB || !pg_str_has_suffix(name, ".jsonl"))
			continue;
		stem = pg_xstrndup(name, strlen(name) - strlen(".jsonl"));
		pg_buf_reset(&path);
		pg_buf_printf(&path, "%s:%s/%s/%s", s->ref, gpu, PG_HISTORY_AB_DIR, name);
		if ((rc = entry_blob(s->repo, f, &blob, &text, &len, s->where, err)) == 0 &&
		    (rc = pg_history_ab_parse(&h, stem, text, len, path.ptr, err))) {
			char why[sizeof(err->msg)];
			bool named = strcmp(s->where, "the current repository") != 0;
			snprintf(why, sizeof(why), "%s", err->msg);
			pg_error_set(err, rc,
				     "%s%s%s ('perfgate baseline check' lists such lines, "
				     "'perfgate baseline repair' drops the unreadable ones)",
				     named ? s->where : "", named ? ": " : "", why);
		}
		git_blob_free(blob);
		free(stem);
		if (rc)
			pg_history_ab_release(&h);
		else
			PG_ARRAY_PUSH(*out, *n, cap, h);
	}
	if (*n > 1)
		qsort(*out, *n, sizeof(**out), cmp_history_ab);
done:
	git_tree_free(sub);
	pg_buf_release(&path);
	if (rc) {
		redact_error(err, repo);
		for (size_t i = 0; i < *n; i++)
			pg_history_ab_release(&(*out)[i]);
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

int pg_history_read(struct pg_history **out, size_t *n, const char *gpu, const char *point,
		    const struct pg_history_opts *o, struct pg_error *err)
{
	struct store s;
	git_tree *dir = NULL;
	int rc;

	/* reading every file of a large history once (perfgate trends): the
	 * pack mapped in windows of 32 MB, at most 128 MB at a time, not all
	 * of it resident to the end */
	if (o->pool) {
		git_libgit2_opts(GIT_OPT_SET_MWINDOW_SIZE, (size_t)32 << 20);
		git_libgit2_opts(GIT_OPT_SET_MWINDOW_MAPPED_LIMIT, (size_t)128 << 20);
		/* nor each object hashed again as it is read (a tenth of the
		 * time): git's own readers do not, and zlib's checksum still
		 * catches a damaged object */
		git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
	}
	rc = store_open(&s, o->repo, o->ref, err);
	*out = NULL;
	*n = 0;
	if (o->ab)
		*o->ab = (struct pg_history_ab_read){ 0 };
	if (rc == 0 && (rc = tip_dir(&s, gpu, &dir, err)) == 0 && dir)
		rc = read_histories(&s, dir, gpu, point, o, out, n, err);
	/* the A/B lines of the same tip: no second fetch of a URL */
	if (rc == 0 && o->ab)
		read_ab(&s, dir, gpu, o->repo, &o->ab->v, &o->ab->n, &o->ab->err);
	if (o->pool)
		git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 1);
	git_tree_free(dir);
	store_close(&s);
	if (rc)
		redact_error(err, o->repo);
	return rc;
}

int pg_history_read_ab(struct pg_history_ab **out, size_t *n, const char *gpu,
		       const struct pg_history_opts *o, struct pg_error *err)
{
	struct store s;
	git_tree *dir = NULL;
	int rc = store_open(&s, o->repo, o->ref, err);

	*out = NULL;
	*n = 0;
	if (rc == 0 && (rc = tip_dir(&s, gpu, &dir, err)) == 0)
		rc = read_ab(&s, dir, gpu, o->repo, out, n, err);
	else if (rc)
		redact_error(err, o->repo);
	git_tree_free(dir);
	store_close(&s);
	return rc;
}

int pg_history_gpus(struct pg_strv *out, const struct pg_history_opts *o, struct pg_error *err)
{
	struct store s;
	git_oid tip;
	bool exists = false;
	git_commit *c = NULL;
	git_tree *root = NULL;
	int rc = store_open(&s, o->repo, o->ref, err);

	if (rc == 0 && (rc = store_fetch(&s, err)) == 0 &&
	    (rc = store_tip(&s, &tip, &exists, err)) == 0 && exists) {
		if (git_commit_lookup(&c, s.repo, &tip) || git_commit_tree(&root, c)) {
			rc = git_fail(err, "reading the history", s.where);
		} else {
			for (size_t i = 0; i < git_tree_entrycount(root); i++) {
				const git_tree_entry *e = git_tree_entry_byindex(root, i);
				if (git_tree_entry_type(e) == GIT_OBJECT_TREE)
					pg_strv_push(out, git_tree_entry_name(e));
			}
		}
	}
	git_tree_free(root);
	git_commit_free(c);
	store_close(&s);
	if (rc)
		redact_error(err, o->repo);
	return rc;
}

/* Where a record's commit stands relative to the merge-base. */
enum standing { AT_OR_BEFORE, AFTER, UNKNOWN };

struct ancestry {
	git_repository *repo;
	git_oid mb;
	char (*sha)[41];
	enum standing *st;
	size_t n, cap;
};

/* Is commit (hex) the merge-base or one of its ancestors, later (another
 * branch, or after it), or not in the repository at all? Cached. */
static enum standing standing_of(struct ancestry *a, const char *hex)
{
	git_oid id;
	git_odb *odb = NULL;
	enum standing st;

	if (!hex || git_oid_fromstr(&id, hex)) {
		git_error_clear();
		return UNKNOWN;
	}
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->sha[i], hex))
			return a->st[i];
	if (git_repository_odb(&odb, a->repo) == 0 && !git_odb_exists(odb, &id))
		st = UNKNOWN;
	else if (git_oid_equal(&id, &a->mb) || git_graph_descendant_of(a->repo, &a->mb, &id) == 1)
		st = AT_OR_BEFORE;
	else
		st = AFTER;
	git_odb_free(odb);
	git_error_clear();
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 64;
		a->sha = pg_xrealloc(a->sha, a->cap * sizeof(*a->sha));
		a->st = pg_xrealloc(a->st, a->cap * sizeof(*a->st));
	}
	snprintf(a->sha[a->n], 41, "%s", hex);
	a->st[a->n++] = st;
	return st;
}

static const char *nonempty(const char *s)
{
	return s && *s ? s : NULL;
}

/* Does a later record of the same run (the same build) replace r? */
static bool same_run(const struct pg_history_rec *a, const struct pg_history_rec *b)
{
	const char *ua = nonempty(a->build_url), *ub = nonempty(b->build_url);

	if (ua || ub)
		return ua && ub && !strcmp(ua, ub);
	return a->commit && b->commit && !strcmp(a->commit, b->commit) &&
	       json_equal(a->metrics, b->metrics);
}

static const char shallow_hint[] =
	"fetch the full history (git fetch --unshallow; on Buildkite, leave --depth out of "
	"BUILDKITE_GIT_CLONE_FLAGS)";

int pg_history_baseline(struct pg_baseline *out, const char *gpu, const struct pg_policy *policy,
			const struct pg_history_opts *o, struct pg_error *err)
{
	const char *env_base = getenv("BUILDKITE_PULL_REQUEST_BASE_BRANCH");
	const char *branch = o->base_branch                                       ? o->base_branch
			     : env_base && *env_base && strcmp(env_base, "false") ? env_base
										  : "main";
	git_repository *src = NULL;
	struct pg_history *hs = NULL;
	size_t n_hs = 0, unknown = 0;
	struct ancestry anc = { 0 };
	bool **use = NULL;
	git_oid head, base;
	char mb_hex[41];
	char *src_where = NULL;
	struct pg_buf where = PG_BUF_INIT;
	bool shallow;
	int rc;

	memset(out, 0, sizeof(*out));
	out->gpu = pg_xstrdup(gpu);
	out->kind = pg_xstrdup("git");
	if ((rc = open_source(&src, &src_where, o->source_repo, o->repo, err)))
		goto done;
	shallow = git_repository_is_shallow(src) == 1;
	if (git_reference_name_to_id(&head, src, "HEAD")) {
		rc = git_fail(err, "resolving HEAD", src_where);
		goto done;
	}
	if (pg_git_resolve_branch(src, branch, &base)) {
		git_error_clear();
		rc = pg_error_set(
			err, PG_EINFRA,
			"base branch '%s' not found (neither origin/%s nor a local branch): fetch it or pass --base",
			branch, branch);
		goto done;
	}
	if (git_merge_base(&anc.mb, src, &head, &base)) {
		if (shallow)
			rc = pg_error_set(
				err, PG_EINFRA,
				"%s is a shallow checkout: the merge-base of HEAD and %s is not in it; %s",
				src_where, branch, shallow_hint);
		else
			rc = git_fail(err, "finding the merge-base of HEAD and the base branch",
				      branch);
		goto done;
	}
	anc.repo = src;
	git_oid_tostr(mb_hex, sizeof(mb_hex), &anc.mb);
	if ((rc = pg_history_read(&hs, &n_hs, gpu, NULL, o, err)))
		goto done;
	use = pg_xcalloc(n_hs ? n_hs : 1, sizeof(*use));
	for (size_t i = 0; i < n_hs; i++) {
		use[i] = pg_xcalloc(hs[i].n ? hs[i].n : 1, sizeof(bool));
		for (size_t k = 0; k < hs[i].n; k++) {
			const struct pg_history_rec *r = &hs[i].recs[k];
			enum standing st = standing_of(&anc, r->commit);

			if (st == UNKNOWN && shallow) {
				char *repo = safe_url(o->repo ? o->repo : "");
				rc = pg_error_set(
					err, PG_EINFRA,
					"%s is a shallow checkout: commit %.12s of a run in %s%s%s:%s/%s.jsonl "
					"(%.10s) is not in it, so the history cannot be placed before or after "
					"the merge-base; %s",
					src_where, r->commit ? r->commit : "(none)", repo,
					*repo ? " " : "", o->ref ? o->ref : PG_HISTORY_DEFAULT_REF,
					gpu, hs[i].point, r->date ? r->date : "no date",
					shallow_hint);
				free(repo);
				goto done;
			}
			unknown += st == UNKNOWN;
			use[i][k] = st == AT_OR_BEFORE;
			/* a retried job's record replaces its first one */
			for (size_t j = k + 1; use[i][k] && j < hs[i].n; j++)
				if (same_run(r, &hs[i].recs[j]))
					use[i][k] = false;
		}
	}
	/* the points line up job by job: one build for the whole GPU */
	pg_history_baseline_build(out, hs, n_hs, (const bool *const *)use, policy);
	pg_baseline_sort(out);
	{
		char *repo = safe_url(o->repo ? o->repo : "git");
		pg_buf_printf(&where, "%s %s, runs at or before %.12s (merge-base of HEAD and %s)",
			      repo, o->ref ? o->ref : PG_HISTORY_DEFAULT_REF, mb_hex, branch);
		if (unknown)
			pg_buf_printf(&where, "; %zu run%s of commits not in %s left out", unknown,
				      unknown == 1 ? "" : "s",
				      strcmp(src_where, ".") ? src_where : "this repository");
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
	free(anc.st);
	free(src_where);
	git_repository_free(src);
	pg_buf_release(&where);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Check and repair                                                    */

void pg_history_report_release(struct pg_history_report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].file);
		free(r->v[i].why);
		free(r->v[i].text);
	}
	free(r->v);
	memset(r, 0, sizeof(*r));
}

static void report_reset(struct pg_history_report *r)
{
	pg_history_report_release(r);
}

static struct pg_history_problem *problem_add(struct pg_history_report *r, const char *file,
					      int line, const char *kind, const char *why,
					      const char *text, bool repaired)
{
	struct pg_history_problem p = {
		pg_xstrdup(file), line, kind, pg_xstrdup(why), text ? pg_xstrdup(text) : NULL,
		repaired
	};

	PG_ARRAY_PUSH(r->v, r->n, r->cap, p);
	if (repaired)
		r->n_fixable++;
	return &r->v[r->n - 1];
}

/* Scan every history file under the tip (of gpu, or all); with u, collect
 * the repaired files. */
/* One history file at path of root: its problems, and the text a repair
 * writes when it drops lines. ab: an A/B file. */
static int scan_file(struct store *s, git_tree *root, const char *path, bool ab,
		     struct pg_history_report *rep, struct updates *u, size_t *dropped,
		     struct pg_error *err)
{
	struct pg_buf text = PG_BUF_INIT, fixed = PG_BUF_INIT;
	struct pg_history_scan sc;
	int rc;

	if ((rc = read_blob(s->repo, root, path, &text, s->where, err)))
		goto done;
	rep->files++;
	(ab ? pg_history_scan_ab : pg_history_scan)(&sc, text.ptr, text.len, &fixed);
	rep->records += sc.records;
	for (size_t k = 0; k < sc.n_bad; k++)
		problem_add(rep, path, sc.bad[k].line, pg_hline_kind_name(sc.bad[k].kind),
			    sc.bad[k].why, sc.bad[k].text, sc.bad[k].kind != PG_HLINE_NEWER);
	*dropped += sc.dropped;
	if (u && sc.dropped)
		rc = updates_add(u, s, path, fixed.ptr, fixed.len, err);
	pg_history_scan_release(&sc);
done:
	pg_buf_release(&text);
	pg_buf_release(&fixed);
	return rc;
}

/* Every .jsonl file of tree dir (at prefix), through scan_file. */
static int scan_dir(struct store *s, git_tree *root, git_tree *dir, const char *prefix, bool ab,
		    struct pg_history_report *rep, struct updates *u, size_t *dropped,
		    struct pg_error *err)
{
	struct pg_buf path = PG_BUF_INIT;
	int rc = 0;

	for (size_t i = 0; i < git_tree_entrycount(dir) && !rc; i++) {
		const git_tree_entry *f = git_tree_entry_byindex(dir, i);
		const char *name = git_tree_entry_name(f);
		git_tree *sub = NULL;

		pg_buf_reset(&path);
		pg_buf_printf(&path, "%s/%s", prefix, name);
		/* a GPU's A/B results: <gpu>/ab/<point>.jsonl */
		if (!ab && git_tree_entry_type(f) == GIT_OBJECT_TREE &&
		    !strcmp(name, PG_HISTORY_AB_DIR)) {
			if (git_tree_lookup(&sub, s->repo, git_tree_entry_id(f)))
				rc = git_fail(err, "reading the history", s->where);
			else
				rc = scan_dir(s, root, sub, path.ptr, true, rep, u, dropped, err);
			git_tree_free(sub);
			continue;
		}
		if (git_tree_entry_type(f) != GIT_OBJECT_BLOB || !pg_str_has_suffix(name, ".jsonl"))
			continue;
		rc = scan_file(s, root, path.ptr, ab, rep, u, dropped, err);
	}
	pg_buf_release(&path);
	return rc;
}

static int scan_tree(struct store *s, const git_oid *tip, const char *gpu,
		     struct pg_history_report *rep, struct updates *u, size_t *dropped,
		     struct pg_error *err)
{
	git_commit *c = NULL;
	git_tree *root = NULL;
	int rc = 0;

	*dropped = 0;
	git_oid_tostr(rep->tip, sizeof(rep->tip), tip);
	if (git_commit_lookup(&c, s->repo, tip) || git_commit_tree(&root, c)) {
		rc = git_fail(err, "reading the history", s->where);
		goto done;
	}
	for (size_t g = 0; g < git_tree_entrycount(root) && !rc; g++) {
		const git_tree_entry *ge = git_tree_entry_byindex(root, g);
		git_tree *dir = NULL;

		if (git_tree_entry_type(ge) != GIT_OBJECT_TREE ||
		    (gpu && strcmp(gpu, git_tree_entry_name(ge))))
			continue;
		if (git_tree_lookup(&dir, s->repo, git_tree_entry_id(ge))) {
			rc = git_fail(err, "reading the history", s->where);
			goto done;
		}
		rep->gpus++;
		rc = scan_dir(s, root, dir, git_tree_entry_name(ge), false, rep, u, dropped, err);
		git_tree_free(dir);
	}
done:
	git_tree_free(root);
	git_commit_free(c);
	return rc;
}

/* Local mode: report the ref's lock when it has outlived a git update. */
static void check_lock(struct store *s, struct pg_history_report *rep)
{
	struct stat st;
	double age;
	bool unsupported, stale;
	int fd;
	char why[256];

	if (!s->lock_path || (age = lock_age(s->lock_path, &st)) < LOCK_GRACE_S)
		return;
	fd = guard_take(s, LOCK_EX | LOCK_NB, &unsupported);
	stale = fd >= 0 || (unsupported && age >= LOCK_GRACE_UNGUARDED_S);
	if (fd >= 0)
		close(fd);
	if (stale)
		snprintf(why, sizeof(why),
			 "%.0f s old and no perfgate writer holds it: left by a writer that was "
			 "stopped; every record and repair removes it",
			 age);
	else
		snprintf(why, sizeof(why), "%.0f s old, held by a writer now", age);
	problem_add(rep, lock_name(s), 0, stale ? "stale lock" : "lock", why, NULL, stale);
}

int pg_history_check(struct pg_history_report *out, const char *gpu,
		     const struct pg_history_opts *o, struct pg_error *err)
{
	struct store s;
	git_oid tip;
	bool exists = false;
	size_t dropped;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = store_open(&s, o->repo, o->ref, err)) || (rc = store_fetch(&s, err)) ||
	    (rc = store_tip(&s, &tip, &exists, err)))
		goto done;
	if (exists)
		rc = scan_tree(&s, &tip, gpu, out, NULL, &dropped, err);
	if (rc == 0)
		check_lock(&s, out);
done:
	store_close(&s);
	if (rc)
		redact_error(err, o->repo);
	return rc;
}

struct repair_ctx {
	const char *gpu;
	struct pg_history_report *rep;
	struct pg_history_recorded *out;
};

static int build_repair(struct store *s, const git_oid *parent_id, git_oid *out, bool *nothing,
			void *ctx, struct pg_error *err)
{
	struct repair_ctx *c = ctx;
	git_commit *parent = NULL;
	git_tree *tree = NULL;
	struct updates u = { 0 };
	struct pg_buf msg = PG_BUF_INIT;
	size_t dropped = 0;
	int rc;

	*nothing = true;
	report_reset(c->rep);
	c->out->lines = 0;
	if (!parent_id)
		return 0;
	if ((rc = scan_tree(s, parent_id, c->gpu, c->rep, &u, &dropped, err)) || !u.n)
		goto done;
	if ((rc = parent_tree(s, parent_id, &parent, &tree, err)))
		goto done;
	c->out->lines = dropped;
	pg_buf_printf(&msg, "perfgate: repair: drop %zu line%s in %zu file%s\n", dropped,
		      dropped == 1 ? "" : "s", u.n, u.n == 1 ? "" : "s");
	for (size_t i = 0; i < c->rep->n; i++)
		if (c->rep->v[i].repaired && c->rep->v[i].line)
			pg_buf_printf(&msg, "\n%s:%d: %s: %s", c->rep->v[i].file, c->rep->v[i].line,
				      c->rep->v[i].kind, c->rep->v[i].why);
	pg_buf_putc(&msg, '\n');
	if ((rc = write_commit(s, parent, tree, &u, msg.ptr, out, err)) == 0)
		*nothing = false;
done:
	updates_release(&u);
	git_tree_free(tree);
	git_commit_free(parent);
	pg_buf_release(&msg);
	return rc;
}

int pg_history_repair(struct pg_history_report *report, struct pg_history_recorded *rec,
		      const char *gpu, const struct pg_history_opts *o, double timeout,
		      struct pg_error *err)
{
	struct store s;
	struct repair_ctx ctx = { gpu, report, rec };
	int rc;

	memset(report, 0, sizeof(*report));
	memset(rec, 0, sizeof(*rec));
	if ((rc = store_open(&s, o->repo, o->ref, err)))
		goto done;
	/* a stale lock first: with nothing else to repair, no update would
	 * ever meet it */
	recover_lock(&s, &rec->notes);
	rc = commit_loop(&s, build_repair, &ctx, timeout, rec, err);
	if (rc == 0)
		check_lock(&s, report);
done:
	store_close(&s);
	if (rc)
		redact_error(err, o->repo);
	redact_strv(&rec->notes, o->repo);
	return rc;
}
