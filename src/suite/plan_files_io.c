/* The files a plan reads, checked before anything starts. */
#include "suite/plan_files_io.h"

#include "base/buf.h"
#include "base/error.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Why path cannot be read as a dataset ("not found", "a directory", the
 * errno's words), or NULL when it can. */
static const char *unreadable(const char *path, char *buf, size_t size)
{
	struct stat st;
	int fd;

	if (stat(path, &st) != 0)
		return errno == ENOENT || errno == ENOTDIR ? "not found" : strerror(errno);
	if (S_ISDIR(st.st_mode))
		return "a directory, not a file";
	if (!S_ISREG(st.st_mode))
		return "not a regular file";
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		snprintf(buf, size, "cannot be read: %s", strerror(errno));
		return buf;
	}
	close(fd);
	return NULL;
}

int pg_plan_check_datasets(const struct pg_plan *plan, struct pg_error *err)
{
	const struct pg_test *seen = NULL;

	for (size_t i = 0; i < plan->n; i++) {
		const struct pg_test *t = plan->points[i].test;
		const char *path = t->dataset.path, *why;
		char buf[256], cwd[PATH_MAX];
		struct pg_buf where = PG_BUF_INIT;

		/* a test's points are consecutive: each test once */
		if (t == seen || !path)
			continue;
		seen = t;
		if (!(why = unreadable(path, buf, sizeof(buf))))
			continue;
		if (t->loc.file && t->loc.line)
			pg_buf_printf(&where, "%s:%d: ", t->loc.file, t->loc.line);
		else if (t->loc.file)
			pg_buf_printf(&where, "%s: ", t->loc.file);
		pg_error_set(
			err, PG_ECONFIG,
			"%stest '%s': dataset file '%s': %s%s%s%s; put it there before the run "
			"(docs/suite.md, dataset)",
			where.ptr ? where.ptr : "", t->name, path, why,
			path[0] != '/' ? " (relative to " : "",
			path[0] != '/' ? (getcwd(cwd, sizeof(cwd)) ? cwd : ".") : "",
			path[0] != '/' ? ", where perfgate runs)" : "");
		pg_buf_release(&where);
		return PG_ECONFIG;
	}
	return 0;
}
