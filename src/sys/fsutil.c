#include "sys/fsutil.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/strutil.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int read_file(const char *path, int flags, struct pg_buf *out, struct pg_error *err)
{
	char chunk[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC | flags);
	ssize_t n;

	if (fd < 0 && errno == ELOOP && (flags & O_NOFOLLOW))
		return pg_error_set(err, PG_ERR, "%s: a symbolic link, not read", path);
	if (fd < 0)
		return pg_error_set(err, errno == ENOENT ? PG_ENOTFOUND : PG_ERR, "%s: %s", path,
				    strerror(errno));
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			pg_error_set(err, PG_ERR, "%s: read: %s", path, strerror(errno));
			close(fd);
			return PG_ERR;
		}
		pg_buf_add(out, chunk, (size_t)n);
	}
	close(fd);
	return 0;
}

int pg_file_read(const char *path, struct pg_buf *out, struct pg_error *err)
{
	return read_file(path, 0, out, err);
}

int pg_file_read_nofollow(const char *path, struct pg_buf *out, struct pg_error *err)
{
	return read_file(path, O_NOFOLLOW, out, err);
}

int pg_file_read_arg(const char *path, struct pg_buf *out, struct pg_error *err)
{
	char chunk[65536];
	ssize_t n;

	if (strcmp(path, "-"))
		return pg_file_read(path, out, err);
	while ((n = read(STDIN_FILENO, chunk, sizeof(chunk))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return pg_error_set(err, PG_ERR, "<stdin>: read: %s", strerror(errno));
		}
		pg_buf_add(out, chunk, (size_t)n);
	}
	return 0;
}

const char *pg_file_arg_name(const char *path)
{
	return strcmp(path, "-") ? path : "<stdin>";
}

static int write_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t n = write(fd, data, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

static char *dir_of(const char *path)
{
	char *copy = pg_xstrdup(path);
	char *d = pg_xstrdup(dirname(copy));
	free(copy);
	return d;
}

static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

/* The content: data, or when fill is given, what it appends chunk by chunk. */
static int write_content(int fd, const void *data, size_t len, pg_fill_fn fill, void *ctx)
{
	struct pg_buf chunk = PG_BUF_INIT;
	int more = 1, rc = 0;

	if (!fill)
		return write_all(fd, data, len);
	while (more && !rc) {
		pg_buf_reset(&chunk);
		more = fill(ctx, &chunk);
		rc = write_all(fd, chunk.ptr, chunk.len);
	}
	pg_buf_release(&chunk);
	return rc;
}

static int write_atomic(const char *path, const void *data, size_t len, pg_fill_fn fill, void *ctx,
			struct pg_error *err)
{
	char *dir = dir_of(path);
	struct pg_buf tmp = PG_BUF_INIT;
	int fd, ret = PG_ERR;
	bool linked = false;

	pg_buf_printf(&tmp, "%s.tmp.%ld", path, (long)getpid());
	fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0) {
		/* no O_TMPFILE here: a named temporary, removed on failure */
		pg_buf_reset(&tmp);
		pg_buf_printf(&tmp, "%s.tmp.XXXXXX", path);
		fd = mkstemp(tmp.ptr);
		if (fd < 0) {
			pg_error_set(err, PG_ERR, "%s: %s", path, strerror(errno));
			goto done;
		}
		fchmod(fd, 0644);
		linked = true;
	}
	if (write_content(fd, data, len, fill, ctx) || fsync(fd)) {
		pg_error_set(err, PG_ERR, "%s: write: %s", path, strerror(errno));
		goto done;
	}
	if (!linked) {
		char proc[64];
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		/* a new file: linking the unnamed one in place is atomic by
		 * itself and leaves no temporary name behind for a SIGKILL */
		if (!linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW)) {
			if (fsync_dir(dir)) {
				pg_error_set(err, PG_ERR, "%s: fsync: %s", dir, strerror(errno));
				goto done;
			}
			ret = 0;
			goto done;
		}
		unlink(tmp.ptr); /* a stale one from a killed run with our pid */
		if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp.ptr, AT_SYMLINK_FOLLOW)) {
			pg_error_set(err, PG_ERR, "%s: link: %s", path, strerror(errno));
			goto done;
		}
		linked = true;
	}
	if (rename(tmp.ptr, path)) {
		pg_error_set(err, PG_ERR, "%s: rename: %s", path, strerror(errno));
		goto done;
	}
	linked = false;
	if (fsync_dir(dir)) {
		pg_error_set(err, PG_ERR, "%s: fsync: %s", dir, strerror(errno));
		goto done;
	}
	ret = 0;
done:
	if (fd >= 0)
		close(fd);
	if (linked)
		unlink(tmp.ptr);
	pg_buf_release(&tmp);
	free(dir);
	return ret;
}

int pg_file_write_atomic(const char *path, const void *data, size_t len, struct pg_error *err)
{
	return write_atomic(path, data, len, NULL, NULL, err);
}

int pg_file_write_atomic_fill(const char *path, pg_fill_fn fill, void *ctx, struct pg_error *err)
{
	return write_atomic(path, NULL, 0, fill, ctx, err);
}

int pg_files_write_atomic(const struct pg_file_out *files, size_t n, struct pg_error *err)
{
	struct pg_strv tmps = PG_STRV_INIT, dirs = PG_STRV_INIT;
	size_t renamed = 0;
	int ret = PG_ERR, fd;

	for (size_t i = 0; i < n; i++) {
		struct pg_buf tmp = PG_BUF_INIT;

		pg_buf_printf(&tmp, "%s.tmp.%ld", files[i].path, (long)getpid());
		pg_strv_push_owned(&tmps, pg_buf_detach(&tmp));
		fd = open(tmps.v[i], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			pg_error_set(err, PG_ERR, "%s: %s", files[i].path, strerror(errno));
			free(tmps.v[--tmps.n]);
			tmps.v[tmps.n] = NULL;
			goto done;
		}
		if (write_all(fd, files[i].data, files[i].len)) {
			pg_error_set(err, PG_ERR, "%s: write: %s", files[i].path, strerror(errno));
			close(fd);
			goto done;
		}
		if (i + 1 == n && syncfs(fd)) {
			pg_error_set(err, PG_ERR, "%s: syncfs: %s", files[i].path, strerror(errno));
			close(fd);
			goto done;
		}
		close(fd);
	}
	for (; renamed < n; renamed++) {
		char *dir;

		if (rename(tmps.v[renamed], files[renamed].path)) {
			pg_error_set(err, PG_ERR, "%s: rename: %s", files[renamed].path,
				     strerror(errno));
			goto done;
		}
		dir = dir_of(files[renamed].path);
		if (!dirs.n || strcmp(dirs.v[dirs.n - 1], dir))
			pg_strv_push_owned(&dirs, dir);
		else
			free(dir);
	}
	for (size_t i = 0; i < dirs.n; i++) {
		if (fsync_dir(dirs.v[i])) {
			pg_error_set(err, PG_ERR, "%s: fsync: %s", dirs.v[i], strerror(errno));
			goto done;
		}
	}
	ret = 0;
done:
	for (size_t i = renamed; i < tmps.n; i++)
		unlink(tmps.v[i]);
	pg_strv_release(&tmps);
	pg_strv_release(&dirs);
	return ret;
}

int pg_mkdir_p(const char *path, struct pg_error *err)
{
	char *copy = pg_xstrdup(path);
	int ret = 0;

	for (char *p = copy + 1;; p++) {
		if (*p == '/' || *p == '\0') {
			char saved = *p;
			*p = '\0';
			if (mkdir(copy, 0755) && errno != EEXIST) {
				ret = pg_error_set(err, PG_ERR, "%s: mkdir: %s", copy,
						   strerror(errno));
				break;
			}
			*p = saved;
			if (!saved)
				break;
		}
	}
	if (!ret) {
		struct stat st;
		if (stat(path, &st) || !S_ISDIR(st.st_mode))
			ret = pg_error_set(err, PG_ERR, "%s: not a directory", path);
	}
	free(copy);
	return ret;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Names of the entries of dir that `keep` accepts, dotfiles excluded,
 * appended to out sorted bytewise. */
static int list_sorted(const char *dir,
		       bool (*keep)(const char *dir, const struct dirent *e, const char *arg),
		       const char *arg, struct pg_strv *out, struct pg_error *err)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t first = out->n;

	if (!d)
		return pg_error_set(err, errno == ENOENT ? PG_ENOTFOUND : PG_ERR, "%s: %s", dir,
				    strerror(errno));
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' && keep(dir, e, arg))
			pg_strv_push(out, e->d_name);
	closedir(d);
	if (out->n > first) /* v is NULL while empty: qsort(NULL, 0) is undefined */
		qsort(out->v + first, out->n - first, sizeof(*out->v), cmp_str);
	return 0;
}

static bool is_file_with_suffix(const char *dir, const struct dirent *e, const char *suffix)
{
	(void)dir;
	if (e->d_type != DT_REG && e->d_type != DT_UNKNOWN && e->d_type != DT_LNK)
		return false;
	return !suffix || pg_str_has_suffix(e->d_name, suffix);
}

static bool is_dir_with_prefix(const char *dir, const struct dirent *e, const char *prefix)
{
	struct stat st;
	char *path;
	bool is_dir;

	if (prefix && !pg_str_has_prefix(e->d_name, prefix))
		return false;
	path = pg_path_join(dir, e->d_name);
	is_dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
	free(path);
	return is_dir;
}

int pg_dir_list(const char *dir, const char *suffix, struct pg_strv *out, struct pg_error *err)
{
	return list_sorted(dir, is_file_with_suffix, suffix, out, err);
}

/* The entry's type without following a link: d_type, else lstat. */
static mode_t entry_type(const char *dir, const struct dirent *e)
{
	struct stat st;
	char *path;
	mode_t mode = 0;

	if (e->d_type == DT_REG)
		return S_IFREG;
	if (e->d_type == DT_DIR)
		return S_IFDIR;
	if (e->d_type != DT_UNKNOWN)
		return 0;
	path = pg_path_join(dir, e->d_name);
	if (lstat(path, &st) == 0)
		mode = st.st_mode & S_IFMT;
	free(path);
	return mode;
}

static bool is_regular_with_suffix(const char *dir, const struct dirent *e, const char *suffix)
{
	return entry_type(dir, e) == S_IFREG && (!suffix || pg_str_has_suffix(e->d_name, suffix));
}

static bool is_real_dir_with_prefix(const char *dir, const struct dirent *e, const char *prefix)
{
	return (!prefix || pg_str_has_prefix(e->d_name, prefix)) && entry_type(dir, e) == S_IFDIR;
}

int pg_dir_list_regular(const char *dir, const char *suffix, struct pg_strv *out,
			struct pg_error *err)
{
	return list_sorted(dir, is_regular_with_suffix, suffix, out, err);
}

int pg_subdir_list_real(const char *dir, const char *prefix, struct pg_strv *out,
			struct pg_error *err)
{
	return list_sorted(dir, is_real_dir_with_prefix, prefix, out, err);
}

int pg_mkdir_under(const char *base, const char *rel, struct pg_error *err)
{
	struct pg_buf path = PG_BUF_INIT;
	int ret = pg_mkdir_p(base, err);
	const char *p = rel ? rel : "";

	pg_buf_puts(&path, base);
	while (!ret && *p) {
		size_t len = strcspn(p, "/");
		struct stat st;

		if (len) {
			pg_buf_putc(&path, '/');
			pg_buf_add(&path, p, len);
			if (mkdir(path.ptr, 0755) && errno != EEXIST)
				ret = pg_error_set(err, PG_ERR, "%s: mkdir: %s", path.ptr,
						   strerror(errno));
			else if (lstat(path.ptr, &st))
				ret = pg_error_set(err, PG_ERR, "%s: %s", path.ptr,
						   strerror(errno));
			else if (S_ISLNK(st.st_mode))
				ret = pg_error_set(err, PG_ERR,
						   "%s: a symbolic link, not written through",
						   path.ptr);
			else if (!S_ISDIR(st.st_mode))
				ret = pg_error_set(err, PG_ERR, "%s: not a directory", path.ptr);
		}
		p += len;
		while (*p == '/')
			p++;
	}
	pg_buf_release(&path);
	return ret;
}

int pg_subdir_list(const char *dir, const char *prefix, struct pg_strv *out, struct pg_error *err)
{
	return list_sorted(dir, is_dir_with_prefix, prefix, out, err);
}

char *pg_path_join(const char *a, const char *b)
{
	struct pg_buf buf = PG_BUF_INIT;

	if (b[0] == '/' || !a || !*a)
		return pg_xstrdup(b);
	pg_buf_puts(&buf, a);
	if (!pg_str_has_suffix(a, "/"))
		pg_buf_putc(&buf, '/');
	pg_buf_puts(&buf, b);
	return pg_buf_detach(&buf);
}

char *pg_path_stem(const char *path)
{
	const char *base = strrchr(path, '/');
	const char *dot;

	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	return pg_xstrndup(base, dot && dot != base ? (size_t)(dot - base) : strlen(base));
}

/* Push the components of path onto the stack todo, the first on top. */
static void push_parts(struct pg_strv *todo, const char *path)
{
	struct pg_strv parts = PG_STRV_INIT;
	char *copy = pg_xstrdup(path), *save = NULL;

	for (char *p = strtok_r(copy, "/", &save); p; p = strtok_r(NULL, "/", &save))
		pg_strv_push(&parts, p);
	for (size_t i = parts.n; i-- > 0;) {
		pg_strv_push_owned(todo, parts.v[i]);
		parts.v[i] = NULL;
	}
	parts.n = 0;
	pg_strv_release(&parts);
	free(copy);
}

/* The stack's components, top first, joined below rel and folded; NULL
 * when a ".." climbs out of rel. */
static char *rest_below(const char *rel, const struct pg_strv *todo)
{
	struct pg_buf b = PG_BUF_INIT;

	pg_buf_puts(&b, rel);
	for (size_t i = todo->n; i-- > 0;) {
		const char *part = todo->v[i];
		if (!strcmp(part, "."))
			continue;
		if (!strcmp(part, "..")) {
			char *slash;
			if (!b.len) {
				pg_buf_release(&b);
				return NULL;
			}
			slash = strrchr(b.ptr, '/');
			pg_buf_truncate(&b, slash ? (size_t)(slash - b.ptr) : 0);
			continue;
		}
		if (b.len)
			pg_buf_putc(&b, '/');
		pg_buf_puts(&b, part);
	}
	return pg_buf_detach(&b);
}

char *pg_path_fold(const char *rel)
{
	struct pg_strv todo = PG_STRV_INIT;
	char *out;

	if (rel[0] == '/')
		return NULL;
	push_parts(&todo, rel);
	out = rest_below("", &todo);
	pg_strv_release(&todo);
	return out;
}

char *pg_path_under(const char *path, const char *root)
{
	struct pg_strv todo = PG_STRV_INIT;
	struct pg_buf at = PG_BUF_INIT; /* the walk so far: a real path, "" for "/" */
	size_t rootlen = strlen(root);
	char cwd[PATH_MAX], *found = NULL;
	int links = 0;

	while (rootlen > 1 && root[rootlen - 1] == '/')
		rootlen--;
	if (path[0] != '/') {
		if (!getcwd(cwd, sizeof(cwd)))
			goto done;
		push_parts(&todo, path);
		push_parts(&todo, cwd);
	} else {
		push_parts(&todo, path);
	}
	while (todo.n) {
		char *part = todo.v[--todo.n];
		size_t keep = at.len;
		struct stat st;

		todo.v[todo.n] = NULL;
		if (!strcmp(part, ".") || !strcmp(part, "..")) {
			char *slash = at.len ? strrchr(at.ptr, '/') : NULL;
			if (!strcmp(part, "..") && slash)
				pg_buf_truncate(&at, (size_t)(slash - at.ptr));
			free(part);
			continue;
		}
		pg_buf_printf(&at, "/%s", part);
		free(part);
		if (at.len >= rootlen && !strncmp(at.ptr, root, rootlen) &&
		    (at.ptr[rootlen] == '/' || !at.ptr[rootlen])) {
			const char *rel = at.ptr[rootlen] ? at.ptr + rootlen + 1 : "";
			char *rest = rest_below(rel, &todo);
			if (rest && *rest) {
				found = rest;
				goto done;
			}
			free(rest);
		}
		if (lstat(at.ptr, &st) || !S_ISLNK(st.st_mode))
			continue; /* a directory, a file, or nothing yet: walk on */
		{
			char target[PATH_MAX];
			ssize_t n = readlink(at.ptr, target, sizeof(target) - 1);
			if (n <= 0 || ++links > 40)
				goto done; /* a loop, or unreadable: nowhere */
			target[n] = '\0';
			pg_buf_truncate(&at, target[0] == '/' ? 0 : keep);
			push_parts(&todo, target);
		}
	}
done:
	pg_strv_release(&todo);
	pg_buf_release(&at);
	return found;
}

char *pg_path_relative(const char *dir, const char *path)
{
	char *d = realpath(dir, NULL), *copy = pg_xstrdup(path), *base = pg_xstrdup(path);
	char *pd = realpath(dirname(copy), NULL), *out = NULL;
	struct pg_buf b = PG_BUF_INIT;
	size_t common = 0;

	if (!d || !pd)
		goto done;
	/* the longest common prefix that ends at a component */
	for (size_t i = 0;; i++) {
		bool end_d = !d[i] || d[i] == '/', end_p = !pd[i] || pd[i] == '/';
		if (end_d && end_p)
			common = i;
		if (!d[i] || !pd[i] || d[i] != pd[i])
			break;
	}
	for (const char *q = d + common; *q; q++)
		if (*q == '/')
			pg_buf_puts(&b, "../");
	if (pd[common])
		pg_buf_printf(&b, "%s/", pd + common + 1);
	pg_buf_puts(&b, basename(base));
	out = pg_buf_detach(&b);
done:
	free(d);
	free(pd);
	free(copy);
	free(base);
	pg_buf_release(&b);
	return out;
}
