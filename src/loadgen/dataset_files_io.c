#include "loadgen/dataset_files_io.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "loadgen/httpload_io.h"
#include "sys/digest.h"
#include "sys/fsutil.h"
#include "sys/proc.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A download in flight: the temporary it goes to, hashed as it arrives. */
struct fetch {
	int fd;
	struct pg_sha256 *hash;
	long long bytes, size;
	int write_errno;
	const char *name;
	FILE *log;
	double last_said;
	const volatile sig_atomic_t *stop;
};

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct fetch *f = userdata;
	size_t len = size * nmemb, done = 0;

	while (done < len) {
		ssize_t n = write(f->fd, ptr + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			f->write_errno = n < 0 ? errno : EIO;
			return 0; /* curl ends the transfer: CURLE_WRITE_ERROR */
		}
		done += (size_t)n;
	}
	pg_sha256_update(f->hash, ptr, len);
	f->bytes += (long long)len;
	return len;
}

/* Every ten seconds a line, so a 640 MiB download does not look hung;
 * a stop ends it within a second. */
static int on_progress(void *clientp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct fetch *f = clientp;
	double now = pg_monotonic();
	long long total = dltotal > 0 ? (long long)dltotal : f->size;

	(void)ultotal;
	(void)ulnow;
	if (f->stop && *f->stop)
		return 1;
	if (now - f->last_said >= 10) {
		f->last_said = now;
		if (total > 0)
			fprintf(f->log, "perfgate: fetching %s: %lld of %lld MiB\n", f->name,
				(long long)dlnow >> 20, total >> 20);
		else
			fprintf(f->log, "perfgate: fetching %s: %lld MiB\n", f->name,
				(long long)dlnow >> 20);
		fflush(f->log);
	}
	return 0;
}

int pg_dataset_fetch(const char *url, const char *path, const char *sha256, long long size,
		     const struct pg_dataset_check_opts *o, struct pg_error *err)
{
	FILE *log = o && o->log ? o->log : stderr;
	char *copy = pg_xstrdup(path), *dir = dirname(copy);
	struct pg_buf tmp = PG_BUF_INIT;
	char got[PG_SHA256_HEX_SIZE];
	struct fetch f;
	CURL *e = NULL;
	CURLcode cc;
	long code = 0;
	int rc = 0;

	memset(&f, 0, sizeof(f));
	f.fd = -1;
	f.size = size;
	f.name = path;
	f.log = log;
	f.stop = o ? o->stop : NULL;
	f.last_said = pg_monotonic();
	if ((rc = pg_mkdir_p(dir, err)))
		goto done;
	/* beside the file, so the rename is atomic; hidden, so that nothing
	 * takes a half-fetched file for the dataset */
	pg_buf_printf(&tmp, "%s/.%s.perfgate-fetch-XXXXXX", dir,
		      strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
	if ((f.fd = mkstemp(tmp.ptr)) < 0) {
		rc = pg_error_set(err, PG_ERR, "%s: %s", tmp.ptr, strerror(errno));
		goto done;
	}
	f.hash = pg_sha256_new();
	fprintf(log, "perfgate: fetching %s from %s\n", path, url);
	fflush(log);

	e = curl_easy_init();
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(e, CURLOPT_MAXREDIRS, 10L);
	curl_easy_setopt(e, CURLOPT_FAILONERROR, 1L);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, 30L);
	/* a stalled transfer ends: under 1 KiB/s for a minute */
	curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1024L);
	curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, 60L);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, &f);
	curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(e, CURLOPT_XFERINFODATA, &f);
	curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
	pg_hl_easy_ca(e);
	cc = curl_easy_perform(e);
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
	if (cc == CURLE_ABORTED_BY_CALLBACK) {
		rc = pg_error_set(err, PG_ECANCEL, "fetching %s: stopped by a signal", path);
		goto done;
	}
	if (cc != CURLE_OK) {
		if (cc == CURLE_WRITE_ERROR && f.write_errno)
			rc = pg_error_set(err, PG_ERR, "fetching %s: %s", path,
					  strerror(f.write_errno));
		else if (cc == CURLE_HTTP_RETURNED_ERROR)
			rc = pg_error_set(err, PG_EINFRA, "fetching %s from %s: HTTP %ld", path,
					  url, code);
		else
			rc = pg_error_set(err, PG_EINFRA, "fetching %s from %s: %s", path, url,
					  curl_easy_strerror(cc));
		goto done;
	}
	if (fsync(f.fd)) {
		rc = pg_error_set(err, PG_ERR, "%s: %s", tmp.ptr, strerror(errno));
		goto done;
	}
	pg_sha256_finish(f.hash, got);
	f.hash = NULL;
	if (sha256 && strcmp(got, sha256)) {
		rc = pg_error_set(err, PG_EINFRA,
				  "fetched %s from %s: its sha256 is %s, not %s: not the file "
				  "expected (a mirror's other version, or a damaged download); "
				  "nothing was kept",
				  path, url, got, sha256);
		goto done;
	}
	if (rename(tmp.ptr, path)) {
		rc = pg_error_set(err, PG_ERR, "%s: %s", path, strerror(errno));
		goto done;
	}
	pg_buf_reset(&tmp); /* renamed: nothing to remove */
	if (sha256)
		fprintf(log, "perfgate: fetched %s, %lld bytes, sha256 %s as expected\n", path,
			f.bytes, got);
	else
		fprintf(log,
			"perfgate: fetched %s, %lld bytes, sha256 %s; warning: no checksum to "
			"check it against (the dataset's sha256 key pins one)\n",
			path, f.bytes, got);
	fflush(log);
done:
	if (e)
		curl_easy_cleanup(e);
	if (f.fd >= 0)
		close(f.fd);
	if (tmp.len)
		unlink(tmp.ptr);
	pg_sha256_free(f.hash);
	pg_buf_release(&tmp);
	free(copy);
	return rc;
}

/* A file's problem, named with the test that reads it, where the suite
 * says so, and the directory a relative path is looked for in. */
static int file_error(struct pg_error *err, int code, const struct pg_dataset_file *f,
		      const char *what, const char *hint)
{
	struct pg_buf where = PG_BUF_INIT;
	char cwd[PATH_MAX];
	/* where it was looked for, when it was not found there */
	bool relative = f->path[0] != '/' && !strncmp(what, "not found", 9);
	int rc;

	pg_dataset_file_where(&where, f);
	rc = pg_error_set(err, code, "%s: dataset file '%s': %s%s%s%s%s", where.ptr, f->path, what,
			  relative ? " (relative to " : "",
			  relative ? (getcwd(cwd, sizeof(cwd)) ? cwd : ".") : "",
			  relative ? ", where perfgate runs)" : "", hint ? hint : "");
	pg_buf_release(&where);
	return rc;
}

/* A file that is there but cannot be opened fails now, not as the run
 * starts reading it. */
static int readable(const struct pg_dataset_file *f, struct pg_error *err)
{
	struct pg_buf why = PG_BUF_INIT;
	int fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), rc;

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	pg_buf_printf(&why, "cannot be read: %s", strerror(errno));
	rc = file_error(err, PG_ECONFIG, f, why.ptr, NULL);
	pg_buf_release(&why);
	return rc;
}

static int check_one(const struct pg_dataset_file *f, const struct pg_dataset_check_opts *o,
		     struct pg_error *err)
{
	FILE *log = o && o->log ? o->log : stderr;
	bool fetch = o && o->fetch;
	char got[PG_SHA256_HEX_SIZE];
	struct stat st;
	int rc;

	if (stat(f->path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return file_error(err, PG_ECONFIG, f, "a directory, not a file", NULL);
		if (!S_ISREG(st.st_mode))
			return file_error(err, PG_ECONFIG, f, "not a regular file", NULL);
		if ((rc = readable(f, err)))
			return rc;
		if (!f->sha256 || !(f->sha256_declared || fetch))
			return 0;
		if ((rc = pg_sha256_file(f->path, got, err)))
			return rc;
		if (strcmp(got, f->sha256)) {
			struct pg_buf what = PG_BUF_INIT;
			pg_buf_printf(&what, "has sha256 %s, not %s", got, f->sha256);
			rc = file_error(err, PG_ECONFIG, f, what.ptr,
					f->sha256_declared
						? "; the suite's sha256 says another file"
						: "; not the file vLLM's CI uses; move it away and "
						  "--fetch-datasets fetches that one");
			pg_buf_release(&what);
			return rc;
		}
		fprintf(log, "perfgate: dataset %s: sha256 %s as expected\n", f->path, got);
		return 0;
	}
	if (errno != ENOENT && errno != ENOTDIR)
		return file_error(err, PG_ECONFIG, f, strerror(errno), NULL);
	if (fetch && f->url)
		return pg_dataset_fetch(f->url, f->path, f->sha256, f->size, o, err);
	if (o && o->fetch_later && f->url)
		return 0;
	if (f->url) {
		struct pg_buf hint = PG_BUF_INIT;
		pg_buf_printf(&hint,
			      "; perfgate run --fetch-datasets (the step's fetch-datasets: true) "
			      "fetches it from %s%s",
			      f->url, f->sha256 ? " and checks its sha256" : "");
		rc = file_error(err, PG_ECONFIG, f, "not found", hint.ptr);
		pg_buf_release(&hint);
		return rc;
	}
	return file_error(err, PG_ECONFIG, f, "not found",
			  fetch ? "; no source to fetch it from (the dataset's url key gives one)"
				: "; put it there before the run (docs/suite.md, dataset)");
}

int pg_dataset_files_check(const struct pg_plan *plan, const struct pg_dataset_check_opts *o,
			   struct pg_error *err)
{
	struct pg_dataset_files files;
	int rc = 0;

	pg_dataset_files_of(&files, plan, getenv("HF_ENDPOINT"));
	for (size_t i = 0; i < files.n && !rc; i++)
		rc = check_one(&files.v[i], o, err);
	pg_dataset_files_release(&files);
	return rc;
}
