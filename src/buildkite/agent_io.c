#include "buildkite/agent_io.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/strutil.h"
#include "sys/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static bool is_executable_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int pg_bkagent_find(struct pg_bkagent *agent, struct pg_error *err)
{
	const char *explicit_path = getenv("BUILDKITE_AGENT_PATH");
	const char *path = getenv("PATH");
	const char *p;

	if (explicit_path && *explicit_path) {
		if (!is_executable_file(explicit_path))
			return pg_error_set(err, PG_ENOTFOUND,
					    "BUILDKITE_AGENT_PATH=%s is not an executable file",
					    explicit_path);
		agent->path = pg_xstrdup(explicit_path);
		return 0;
	}
	for (p = path ? path : ""; *p;) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		struct pg_buf cand = PG_BUF_INIT;

		/* an empty PATH entry means the current directory */
		if (len)
			pg_buf_add(&cand, p, len);
		else
			pg_buf_putc(&cand, '.');
		pg_buf_puts(&cand, "/buildkite-agent");
		if (is_executable_file(cand.ptr)) {
			agent->path = pg_buf_detach(&cand);
			return 0;
		}
		pg_buf_release(&cand);
		p += len + (colon ? 1 : 0);
	}
	return pg_error_set(err, PG_ENOTFOUND,
			    "buildkite-agent not found on PATH (set BUILDKITE_AGENT_PATH)");
}

void pg_bkagent_release(struct pg_bkagent *agent)
{
	free(agent->path);
	agent->path = NULL;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/*
 * How long one call may take. The agent retries Buildkite's API on its
 * own; one that hangs (the API unreachable for good) must not hold the
 * step until the job's timeout after the verdict is known. Uploads get
 * longer: results directories with server logs can be large.
 * PERFGATE_AGENT_TIMEOUT (seconds) overrides both.
 */
static double call_timeout(const char *what)
{
	const char *env = getenv("PERFGATE_AGENT_TIMEOUT");
	double t;

	if (env && !pg_parse_double(env, &t) && t > 0)
		return t;
	return !strcmp(what, "artifact") ? 1800 : 300;
}

/* ms to wait in poll until deadline, at least 1 while time remains. */
static int ms_until(double deadline)
{
	double left = deadline - pg_monotonic();

	return left <= 0 ? 0 : left > 1e6 ? 1000000000 : (int)(left * 1000) + 1;
}

/*
 * Feed stdin and drain stdout at the same time: a child that writes before
 * it has read all its input would otherwise deadlock with us. -1 when poll
 * fails, -2 at the deadline.
 */
static int pump(int in_fd, const char *in, size_t in_len, int out_fd, struct pg_buf *out,
		double deadline)
{
	size_t off = 0;

	while (in_fd >= 0 || out_fd >= 0) {
		struct pollfd fds[2];
		nfds_t n = 0;
		int in_slot = -1, out_slot = -1;

		if (in_fd >= 0) {
			fds[n] = (struct pollfd){ .fd = in_fd, .events = POLLOUT };
			in_slot = (int)n++;
		}
		if (out_fd >= 0) {
			fds[n] = (struct pollfd){ .fd = out_fd, .events = POLLIN };
			out_slot = (int)n++;
		}
		int ready = poll(fds, n, ms_until(deadline));

		if (ready < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (ready == 0 && pg_monotonic() >= deadline)
			return -2;
		if (in_slot >= 0 && fds[in_slot].revents) {
			ssize_t w = off < in_len ? write(in_fd, in + off, in_len - off) : 0;
			if (w < 0 && errno != EINTR && errno != EAGAIN) {
				/* EPIPE: the child stopped reading; its exit status says why */
				close_fd(&in_fd);
			} else if (w > 0) {
				off += (size_t)w;
			}
			if (in_fd >= 0 && off >= in_len)
				close_fd(&in_fd);
		}
		if (out_slot >= 0 && fds[out_slot].revents) {
			char chunk[4096];
			ssize_t r = read(out_fd, chunk, sizeof(chunk));
			if (r > 0)
				pg_buf_add(out, chunk, (size_t)r);
			else if (r == 0 || (errno != EINTR && errno != EAGAIN))
				close_fd(&out_fd);
		}
	}
	return 0;
}

int pg_bkagent_exec(const struct pg_bkagent *agent, const char *const *args, const char *cwd,
		    const void *in, size_t in_len, struct pg_buf *out, struct pg_error *err)
{
	const char *what = args[0] ? args[0] : "";
	double limit = call_timeout(what), deadline = pg_monotonic() + limit;
	int in_pipe[2] = { -1, -1 }, out_pipe[2] = { -1, -1 };
	posix_spawn_file_actions_t fa;
	struct sigaction ignore = { .sa_handler = SIG_IGN }, old_pipe;
	struct pg_strv argv = PG_STRV_INIT;
	pid_t pid = -1;
	int status = 0, rc, ret = PG_EINFRA;

	pg_strv_push(&argv, agent->path);
	for (size_t i = 0; args[i]; i++)
		pg_strv_push(&argv, args[i]);

	posix_spawn_file_actions_init(&fa);
	if (pipe2(in_pipe, O_CLOEXEC) < 0 || (out && pipe2(out_pipe, O_CLOEXEC) < 0)) {
		pg_error_set(err, PG_EINFRA, "buildkite-agent %s: pipe: %s", what, strerror(errno));
		goto done;
	}
	posix_spawn_file_actions_adddup2(&fa, in_pipe[0], STDIN_FILENO);
	if (out)
		posix_spawn_file_actions_adddup2(&fa, out_pipe[1], STDOUT_FILENO);
	if (cwd)
		posix_spawn_file_actions_addchdir_np(&fa, cwd);

	rc = posix_spawn(&pid, agent->path, &fa, NULL, argv.v, environ);
	if (rc != 0) {
		pid = -1;
		pg_error_set(err, PG_EINFRA, "buildkite-agent %s: cannot run %s: %s", what,
			     agent->path, strerror(rc));
		goto done;
	}
	close_fd(&in_pipe[0]);
	close_fd(&out_pipe[1]);
	if (!in || !in_len)
		close_fd(&in_pipe[1]);

	/* a child that exits without reading must not kill us with SIGPIPE */
	sigaction(SIGPIPE, &ignore, &old_pipe);
	rc = pump(in_pipe[1], in, in_len, out_pipe[0], out, deadline);
	sigaction(SIGPIPE, &old_pipe, NULL);
	close_fd(&in_pipe[1]);
	close_fd(&out_pipe[0]);

	for (;;) {
		pid_t r = rc == -2 ? 0 : waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			pg_error_set(err, PG_EINFRA, "buildkite-agent %s: waitpid: %s", what,
				     strerror(errno));
			goto done;
		}
		if (rc == -2 || pg_monotonic() >= deadline) {
			/* done: kills and reaps it */
			pg_error_set(
				err, PG_EINFRA,
				"buildkite-agent %s did not finish within %g s (PERFGATE_AGENT_TIMEOUT)",
				what, limit);
			goto done;
		}
		poll(NULL, 0, 10);
	}
	pid = -1;
	if (rc < 0) {
		pg_error_set(err, PG_EINFRA, "buildkite-agent %s: poll failed", what);
		goto done;
	}
	if (WIFSIGNALED(status)) {
		pg_error_set(err, PG_EINFRA, "buildkite-agent %s was killed by signal %d", what,
			     WTERMSIG(status));
		goto done;
	}
	if (WEXITSTATUS(status) != 0) {
		pg_error_set(err, PG_EINFRA, "buildkite-agent %s exited with status %d", what,
			     WEXITSTATUS(status));
		goto done;
	}
	ret = 0;
done:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	close_fd(&in_pipe[0]);
	close_fd(&in_pipe[1]);
	close_fd(&out_pipe[0]);
	close_fd(&out_pipe[1]);
	posix_spawn_file_actions_destroy(&fa);
	pg_strv_release(&argv);
	return ret;
}

int pg_bkagent_annotate(const struct pg_bkagent *agent, const char *context, const char *style,
			const char *body, size_t len, struct pg_error *err)
{
	const char *args[] = { "annotate", "--context", context, "--style", style, NULL };

	return pg_bkagent_exec(agent, args, NULL, body, len, NULL, err);
}

int pg_bkagent_artifact_upload(const struct pg_bkagent *agent, const char *cwd, const char *pattern,
			       struct pg_error *err)
{
	const char *args[] = { "artifact", "upload", pattern, NULL };

	return pg_bkagent_exec(agent, args, cwd, NULL, 0, NULL, err);
}

int pg_bkagent_artifact_download(const struct pg_bkagent *agent, const char *pattern,
				 const char *dest, const char *step, struct pg_error *err)
{
	const char *args[] = { "artifact", "download", pattern, dest, step ? "--step" : NULL,
			       step,       NULL };

	return pg_bkagent_exec(agent, args, NULL, NULL, 0, NULL, err);
}

int pg_bkagent_meta_data_set(const struct pg_bkagent *agent, const char *key, const char *value,
			     struct pg_error *err)
{
	const char *args[] = { "meta-data", "set", key, value, NULL };

	return pg_bkagent_exec(agent, args, NULL, NULL, 0, NULL, err);
}
