#include "sys/proc.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/redact.h"
#include "base/secret.h"
#include "base/strutil.h"
#include "suite/suite.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/*
 * Live process groups and guards, read by the signal handler (a second
 * Ctrl-C SIGKILLs the groups from there) and by the orphan sweep. Plain
 * sig_atomic_t slots: written only outside signal handlers, read anywhere.
 */
#define MAX_LIVE 128 /* a deployment of 32 replicas, each a group, a guard and a log writer */
static volatile sig_atomic_t live_groups[MAX_LIVE];
static volatile sig_atomic_t live_guards[MAX_LIVE];

static void slot_add(volatile sig_atomic_t *slots, pid_t pid)
{
	for (int i = 0; i < MAX_LIVE; i++) {
		if (slots[i] == 0) {
			slots[i] = pid;
			return;
		}
	}
}

static void slot_del(volatile sig_atomic_t *slots, pid_t pid)
{
	for (int i = 0; i < MAX_LIVE; i++)
		if (slots[i] == pid)
			slots[i] = 0;
}

static bool slot_has(const volatile sig_atomic_t *slots, pid_t pid)
{
	for (int i = 0; i < MAX_LIVE; i++)
		if (slots[i] == pid)
			return true;
	return false;
}

void pg_proc_signal_all(int sig)
{
	for (int i = 0; i < MAX_LIVE; i++) {
		pid_t g = (pid_t)live_groups[i];
		if (g > 0)
			kill(-g, sig);
	}
}

double pg_monotonic(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
	struct timespec ts;

	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The child's environment: perfgate's, with spec's variables replacing or
 * added. */
static void build_env(struct pg_strv *out, const struct pg_kvlist *add)
{
	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		bool replaced = false;
		for (size_t i = 0; eq && add && i < add->n; i++) {
			size_t klen = strlen(add->items[i].key);
			if (klen == (size_t)(eq - *e) && !strncmp(*e, add->items[i].key, klen))
				replaced = true;
		}
		if (!replaced)
			pg_strv_push(out, *e);
	}
	for (size_t i = 0; add && i < add->n; i++) {
		struct pg_buf kv = PG_BUF_INIT;
		pg_buf_printf(&kv, "%s=%s", add->items[i].key, add->items[i].value);
		pg_strv_push_owned(out, pg_buf_detach(&kv));
	}
}

static const char *env_get(const struct pg_strv *env, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < env->n; i++)
		if (!strncmp(env->v[i], name, n) && env->v[i][n] == '=')
			return env->v[i] + n + 1;
	return NULL;
}

/*
 * execvp's PATH search, done in the parent: between fork and exec only
 * async-signal-safe calls are allowed, and a missing program is then an
 * error message here rather than an exit status 127 from a child.
 */
static char *resolve(const char *prog, const char *path_var)
{
	const char *p = path_var ? path_var : "/usr/local/bin:/usr/bin:/bin";

	if (strchr(prog, '/'))
		return pg_xstrdup(prog);
	for (;;) {
		size_t len = strcspn(p, ":");
		struct pg_buf cand = PG_BUF_INIT;
		struct stat st;

		if (len)
			pg_buf_add(&cand, p, len);
		else
			pg_buf_putc(&cand, '.');
		pg_buf_printf(&cand, "/%s", prog);
		if (!stat(cand.ptr, &st) && S_ISREG(st.st_mode) && !access(cand.ptr, X_OK))
			return pg_buf_detach(&cand);
		pg_buf_release(&cand);
		if (!p[len])
			return NULL;
		p += len + 1;
	}
}

static void child_reset_signals(void)
{
	struct sigaction sa;
	sigset_t none;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			sigaction(s, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

static void child_fd(int from, int to)
{
	if (from != to)
		dup2(from, to);
	fcntl(to, F_SETFD, 0);
}

/* In a child just forked: a process group of its own; sig (when not 0)
 * sent to it when perfgate dies -- and if perfgate is already gone, no
 * signal will come, so it exits at once; signals as a new program has
 * them. */
static void child_own_group(pid_t parent, int sig)
{
	setpgid(0, 0);
	if (sig) {
		prctl(PR_SET_PDEATHSIG, sig);
		if (getppid() != parent)
			_exit(127);
	}
	child_reset_signals();
}

/*
 * fork with every signal blocked, so no handler of perfgate's runs in the
 * child before the child has reset them; the parent's mask is restored.
 * The child starts with all signals blocked and must unblock them.
 */
static pid_t fork_blocked(void)
{
	sigset_t all, old;
	pid_t pid;
	int saved;

	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = fork();
	if (pid == 0)
		return 0;
	saved = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return pid;
}

/*
 * fork + execve with the child leading a new process group. Exec failure
 * comes back through a close-on-exec pipe: EOF means exec succeeded.
 *
 * With gate >= 0 (the read end of a pipe), the child waits before execve
 * until a 'G' arrives on it: the caller arms the child's guard first and
 * then opens the gate (spawn_release). A perfgate that dies in between
 * closes the pipe, and the child exits without running anything -- a
 * program that ignores PR_SET_PDEATHSIG's SIGTERM (a shell trapping it)
 * never starts unguarded. *status_fd gets the exec-status pipe for
 * spawn_release; without a gate spawn reads it itself.
 */
static int spawn_release(pid_t pid, const char *path, int gate_w, int status_fd,
			 struct pg_error *err);

static int spawn(pid_t *out, const char *path, char *const *argv, char *const *envp, int in_fd,
		 int out_fd, int err_fd, bool pdeathsig, int gate, int gate_w, int *status_fd,
		 struct pg_error *err)
{
	int pipefd[2];
	pid_t parent = getpid(), pid;

	if (pipe2(pipefd, O_CLOEXEC))
		return pg_error_set(err, PG_ERR, "pipe: %s", strerror(errno));
	pid = fork_blocked();
	if (pid == 0) {
		int e;
		child_own_group(parent, pdeathsig ? SIGTERM : 0);
		child_fd(in_fd, 0);
		child_fd(out_fd, 1);
		child_fd(err_fd, 2);
		syscall(SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */);
		if (gate >= 0) {
			char c = 0;
			ssize_t n;
			close(gate_w);
			do
				n = read(gate, &c, 1);
			while (n < 0 && errno == EINTR);
			if (n != 1 || c != 'G')
				_exit(127);
			close(gate);
		}
		execve(path, argv, envp);
		e = errno;
		while (write(pipefd[1], &e, sizeof(e)) < 0 && errno == EINTR)
			;
		_exit(127);
	}
	close(pipefd[1]);
	if (pid < 0) {
		close(pipefd[0]);
		return pg_error_set(err, PG_ERR, "fork: %s", strerror(errno));
	}
	/* also here, so the group exists before we ever signal it */
	setpgid(pid, pid);
	*out = pid;
	if (gate >= 0) {
		*status_fd = pipefd[0];
		return 0;
	}
	return spawn_release(pid, path, -1, pipefd[0], err);
}

/* Open the gate (gate_w >= 0: write 'G', close), then wait for the exec's
 * outcome on status_fd (closed). */
static int spawn_release(pid_t pid, const char *path, int gate_w, int status_fd,
			 struct pg_error *err)
{
	int child_errno = 0;
	ssize_t n;

	if (gate_w >= 0) {
		while (write(gate_w, "G", 1) < 0 && errno == EINTR)
			;
		close(gate_w);
	}
	do
		n = read(status_fd, &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	close(status_fd);
	if (n == (ssize_t)sizeof(child_errno)) {
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		return pg_error_set(err, PG_EINFRA, "cannot run '%s': %s", path,
				    strerror(child_errno));
	}
	return 0;
}

/*
 * For the helpers perfgate forks (guard, log writer), in the child: a
 * process group of its own, and deaf to what stops perfgate -- a
 * terminal's hangup or Ctrl-C, a job's SIGTERM -- so it outlives perfgate
 * long enough to do its one job. Signals unblocked (fork_blocked).
 */
static void detach_from_perfgate(void)
{
	static const int ignored[] = { SIGINT, SIGHUP, SIGTERM, SIGQUIT, SIGPIPE };
	struct sigaction sa;
	sigset_t none;

	setpgid(0, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		sigaction(ignored[i], &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/*
 * The guard: a forked process in a group of its own that blocks reading a
 * pipe from perfgate. A byte 'R' means perfgate stopped the group itself;
 * end of file without it means perfgate died, and the guard stops the
 * group. Only async-signal-safe calls after fork (perfgate may have
 * threads, e.g. curl's resolver).
 */
static void guard_main(int rfd, pid_t pgid, double grace)
{
	char c;
	ssize_t n;

	detach_from_perfgate();
	if (rfd != 0)
		dup2(rfd, 0);
	syscall(SYS_close_range, 1U, ~0U, 0U);
	do
		n = read(0, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1 && c == 'R')
		_exit(0);
	kill(-pgid, SIGTERM);
	for (int waited = 0; waited < (int)(grace * 10); waited++) {
		if (kill(-pgid, 0) < 0 && errno == ESRCH)
			_exit(0);
		poll(NULL, 0, 100);
	}
	kill(-pgid, SIGKILL);
	_exit(0);
}

/*
 * Fork a helper (the guard, the log writer) over a new pipe. In the child
 * it returns 0 with *rfd the read end, and the caller runs the helper's
 * main, which never returns. In perfgate it returns the helper's pid, in
 * a group of its own and known to the signal paths and the orphan sweep,
 * with *wfd the write end; -1 with err on failure.
 */
static pid_t fork_helper(int *rfd, int *wfd, struct pg_error *err)
{
	int pipefd[2];
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC)) {
		pg_error_set(err, PG_ERR, "pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork_blocked();
	if (pid == 0) {
		*rfd = pipefd[0];
		return 0;
	}
	close(pipefd[0]);
	if (pid < 0) {
		close(pipefd[1]);
		pg_error_set(err, PG_ERR, "fork: %s", strerror(errno));
		return -1;
	}
	setpgid(pid, pid);
	slot_add(live_guards, pid);
	*wfd = pipefd[1];
	return pid;
}

static int start_guard(struct pg_proc *p, double grace, struct pg_error *err)
{
	int rfd, wfd;
	pid_t pid = fork_helper(&rfd, &wfd, err);

	if (pid == 0)
		guard_main(rfd, p->pid, grace > 0 ? grace : 1);
	if (pid < 0)
		return PG_ERR;
	p->guard = pid;
	p->guard_fd = wfd;
	return 0;
}

static void release_guard(struct pg_proc *p)
{
	if (p->guard_fd >= 0) {
		ssize_t n;
		do
			n = write(p->guard_fd, "R", 1);
		while (n < 0 && errno == EINTR);
		close(p->guard_fd);
		p->guard_fd = -1;
	}
	if (p->guard > 0) {
		while (waitpid(p->guard, NULL, 0) < 0 && errno == EINTR)
			;
		slot_del(live_guards, p->guard);
		p->guard = 0;
	}
}

/* ---- the redacting log writer ---------------------------------------- */

static bool group_has(pid_t pgid, bool (*want)(char st));
static bool not_zombie(char st);

/* Write the whole of p[0..n) to fd (the log writer's output). */
static void write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/* buf[0..n) to fd with each run of marked bytes as one "***". */
static void write_masked(int fd, const char *buf, size_t n, const unsigned char *mask)
{
	size_t run = 0;

	for (size_t i = 0; i < n;) {
		if (!mask[i]) {
			i++;
			continue;
		}
		write_all(fd, buf + run, i - run);
		write_all(fd, PG_SECRET_MASK, strlen(PG_SECRET_MASK));
		while (i < n && mask[i])
			i++;
		run = i;
	}
	write_all(fd, buf + run, n - run);
}

/* The earliest p such that buf[p..len) is the start of a secret cut by a
 * read (a proper prefix of one); len when there is none. */
static size_t secret_prefix_at(const char *buf, size_t len, const struct pg_secret_span *sec,
			       size_t n_sec, size_t longest)
{
	for (size_t p = len > longest ? len - longest + 1 : 0; p < len; p++)
		for (size_t k = 0; k < n_sec; k++)
			if (sec[k].len > len - p && !memcmp(buf + p, sec[k].s, len - p))
				return p;
	return len;
}

/* The log writer's memory, allocated before the fork (it allocates
 * nothing): the pending bytes and their mask. */
struct writer_mem {
	char *buf;
	unsigned char *mask;
	size_t cap;
};

/*
 * The log writer: a forked process in a group of its own that copies the
 * child's output (fd 0) to the log (fd 1), masking secrets
 * (base/redact.h): the known values, wherever they fall -- cut by a read,
 * or spanning lines (a multi-line secret) -- and the secret parts of URLs,
 * headers and bearer tokens, which are judged on whole lines. So it writes
 * whole lines (a '\r' ends one too: progress bars), and holds back the
 * bytes that could begin a secret cut by a read; a line longer than half
 * its buffer is written in pieces, its known values still masked. Ends at
 * end of file, when every process of the group has gone; deaf to the
 * signals that stop perfgate, so the group's last words are kept. No
 * allocation after fork.
 */
static void writer_main(int in_fd, int log_fd, const struct pg_secret_span *sec, size_t n_sec,
			struct writer_mem *m)
{
	size_t len = 0, longest = 0;
	bool eof = false;

	detach_from_perfgate();
	dup2(in_fd, 0);
	dup2(log_fd, 1);
	syscall(SYS_close_range, 2U, ~0U, 0U);
	for (size_t k = 0; k < n_sec; k++)
		longest = sec[k].len > longest ? sec[k].len : longest;
	while (!eof) {
		ssize_t n = read(0, m->buf + len, m->cap - len);
		size_t hold, upto = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			eof = true;
		else
			len += (size_t)n;
		if (!len)
			continue;
		memset(m->mask, 0, len);
		pg_redact_mark_values(m->buf, len, sec, n_sec, m->mask);
		hold = eof ? len : secret_prefix_at(m->buf, len, sec, n_sec, longest);
		for (size_t i = hold; i > 0 && !upto; i--)
			if (m->buf[i - 1] == '\n' || m->buf[i - 1] == '\r')
				upto = i;
		if (eof || (!upto && len >= m->cap / 2))
			upto = hold;
		if (!upto)
			continue;
		pg_redact_mark_patterns(m->buf, upto, m->mask);
		/* a known value that starts before the cut is masked whole */
		while (upto < len && m->mask[upto] && m->mask[upto - 1])
			upto++;
		write_masked(1, m->buf, upto, m->mask);
		memmove(m->buf, m->buf + upto, len - upto);
		len -= upto;
	}
	_exit(0);
}

/* Fork the writer over a new pipe; *out_fd is then the pipe's write end,
 * for the child's stdout and stderr (log_fd itself without secrets). */
static int start_writer(struct pg_proc *p, int log_fd, char *const *redact, int *out_fd,
			struct pg_error *err)
{
	struct pg_secret_span *sec;
	struct writer_mem m;
	size_t n = 0, n_sec = 0, longest = 0;
	int rfd;
	pid_t pid;

	*out_fd = log_fd;
	while (redact && redact[n])
		n++;
	/* allocated before the fork (the writer allocates nothing); in the
	 * redactor's order, longest first, so a secret containing another is
	 * masked whole */
	sec = pg_xmalloc((n ? n : 1) * sizeof(*sec));
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(redact[i]);
		if (len >= PG_REDACT_MIN_SUBSTRING) {
			sec[n_sec++] = (struct pg_secret_span){ redact[i], len };
			longest = len > longest ? len : longest;
		}
	}
	/* any secret at all: even one too short to hide inside other text
	 * means URLs and headers in the log are worth masking */
	if (n == 0) {
		free(sec);
		return 0;
	}
	/* room for a line and for any secret twice over: the bytes held back
	 * are less than the longest secret, and half the buffer is written as
	 * soon as it fills */
	m.cap = (size_t)1 << 16;
	while (m.cap < 4 * longest + 4096)
		m.cap *= 2;
	m.buf = pg_xmalloc(m.cap);
	m.mask = pg_xmalloc(m.cap);
	pid = fork_helper(&rfd, out_fd, err);
	if (pid == 0)
		writer_main(rfd, log_fd, sec, n_sec, &m);
	free(m.buf);
	free(m.mask);
	free(sec);
	if (pid < 0)
		return PG_ERR;
	p->log_writer = pid;
	return 0;
}

bool pg_proc_log_settle(struct pg_proc *p, double seconds)
{
	double until = pg_monotonic() + seconds;

	/* a group still running keeps the pipe open: no use waiting */
	if (p->log_writer > 0 && p->pid > 0 && group_has(p->pid, not_zombie))
		return false;
	while (p->log_writer > 0) {
		pid_t r = waitpid(p->log_writer, NULL, WNOHANG);

		if (r == p->log_writer || (r < 0 && errno != EINTR)) {
			slot_del(live_guards, p->log_writer);
			p->log_writer = 0;
			break;
		}
		if (pg_monotonic() >= until)
			return false;
		sleep_s(0.005);
	}
	return true;
}

/* After the group is gone the writer drains and exits; one that cannot
 * (a process outside the group holds the pipe) is killed. */
static void stop_writer(struct pg_proc *p)
{
	if (p->log_writer > 0 && !pg_proc_log_settle(p, 2.0)) {
		kill(p->log_writer, SIGKILL);
		while (waitpid(p->log_writer, NULL, 0) < 0 && errno == EINTR)
			;
		slot_del(live_guards, p->log_writer);
		p->log_writer = 0;
	}
}

static int open_log(const char *path, const char *header, struct pg_error *err)
{
	int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | (path ? O_NOFOLLOW : 0);
	int fd = open(path ? path : "/dev/null", flags, 0644);

	/* a link where the log goes (left in the results directory by a
	 * server) is replaced, never written through */
	if (fd < 0 && errno == ELOOP && path && unlink(path) == 0)
		fd = open(path, flags | O_EXCL, 0644);

	if (fd < 0)
		return pg_error_set(err, PG_ERR, "%s: %s", path ? path : "/dev/null",
				    strerror(errno));
	if (header && *header) {
		size_t len = strlen(header);
		if (write(fd, header, len) != (ssize_t)len) {
			pg_error_set(err, PG_ERR, "%s: write: %s", path, strerror(errno));
			close(fd);
			return PG_ERR;
		}
	}
	return fd;
}

/*
 * A fourth line of defence, outside perfgate: under the Buildkite plugin,
 * PERFGATE_PGID_FILE names a file where every process group started is
 * appended, so the plugin's pre-exit hook can stop what is left even if
 * perfgate and its guards were all SIGKILLed. Best effort: a failure to
 * write it changes nothing else.
 */
static void record_group(pid_t pgid)
{
	const char *file = getenv("PERFGATE_PGID_FILE");
	char line[32];
	int fd, n;

	if (!file || !*file)
		return;
	fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return;
	n = snprintf(line, sizeof(line), "%ld\n", (long)pgid);
	if (write(fd, line, (size_t)n) != n) {
		/* nothing to do: the guard and pg_proc_stop still stop it */
	}
	close(fd);
}

int pg_proc_start(struct pg_proc *p, const struct pg_proc_spec *spec, struct pg_error *err)
{
	struct pg_strv env = PG_STRV_INIT;
	char *path = NULL;
	char shown[4096];
	int log_fd = -1, null_fd = -1, out_fd = -1, status_fd = -1, gate[2] = { -1, -1 }, ret;

	*p = (struct pg_proc)PG_PROC_INIT;
	if (!spec->argv || !spec->argv[0] || !spec->argv[0][0])
		return pg_error_set(err, PG_ECONFIG, "empty command");
	build_env(&env, spec->env);
	path = resolve(spec->argv[0], env_get(&env, "PATH"));
	if (!path) {
		ret = pg_error_set(err, PG_ENOTFOUND, "'%s' not found on PATH", spec->argv[0]);
		goto done;
	}
	/* orphans of the group come to us, not to init, so we can reap them */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if ((log_fd = open_log(spec->log_path, spec->log_header, err)) < 0) {
		ret = PG_ERR;
		goto done;
	}
	if ((null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
		ret = pg_error_set(err, PG_ERR, "/dev/null: %s", strerror(errno));
		goto done;
	}
	if ((ret = start_writer(p, log_fd, spec->log_path ? spec->redact : NULL, &out_fd, err)))
		goto done;
	p->started = pg_monotonic();
	/* the child waits at the gate until its guard is armed */
	if (pipe2(gate, O_CLOEXEC)) {
		ret = pg_error_set(err, PG_ERR, "pipe: %s", strerror(errno));
		if (out_fd != log_fd)
			close(out_fd);
		stop_writer(p);
		goto done;
	}
	ret = spawn(&p->pid, path, spec->argv, env.v, null_fd, out_fd, out_fd, true, gate[0],
		    gate[1], &status_fd, err);
	close(gate[0]);
	/* only the child's group holds the pipe now: its end is the writer's end */
	if (out_fd != log_fd)
		close(out_fd);
	if (ret) {
		close(gate[1]);
		stop_writer(p);
		goto done;
	}
	slot_add(live_groups, p->pid);
	record_group(p->pid);
	p->pidfd = (int)syscall(SYS_pidfd_open, p->pid, 0);
	/* freed before the guard is forked: a copy it never frees would be
	 * a leak to valgrind when the guard exits (path is kept for a
	 * message, in a buffer of its own) */
	snprintf(shown, sizeof(shown), "%s", path);
	free(path);
	path = NULL;
	pg_strv_release(&env);
	if ((ret = start_guard(p, spec->guard_grace, err))) {
		struct pg_error ignored = PG_ERROR_INIT;
		close(gate[1]); /* the child exits at the closed gate */
		close(status_fd);
		pg_proc_stop(p, 0, &ignored);
		pg_proc_release(p);
		goto done;
	}
	if ((ret = spawn_release(p->pid, shown, gate[1], status_fd, err))) {
		/* exec failed: the leader is reaped, its group stopped */
		struct pg_error ignored = PG_ERROR_INIT;
		p->exited = true;
		pg_proc_stop(p, 0, &ignored);
		pg_proc_release(p);
		*p = (struct pg_proc)PG_PROC_INIT;
	}
done:
	if (log_fd >= 0)
		close(log_fd);
	if (null_fd >= 0)
		close(null_fd);
	free(path);
	pg_strv_release(&env);
	return ret;
}

static bool group_signalable(pid_t pgid);

bool pg_proc_exited(struct pg_proc *p)
{
	int st;
	pid_t w;

	if (p->exited || p->pid <= 0)
		return true;
	do
		w = waitpid(p->pid, &st, WNOHANG);
	while (w < 0 && errno == EINTR);
	if (w == p->pid) {
		p->exited = true;
		p->status = st;
	} else if (w < 0 && errno == ECHILD) {
		/* reaped elsewhere: treat as gone, status unknown */
		p->exited = true;
		p->status = 0;
	}
	/* Once no member is left the group id may be reused by an unrelated
	 * group: never signal it again. While members are left, their zombies
	 * (ours to reap, as subreaper) keep the id reserved. */
	if (p->exited && !group_signalable(p->pid))
		slot_del(live_groups, p->pid);
	return p->exited;
}

int pg_proc_wait(struct pg_proc *p, double timeout, const volatile sig_atomic_t *stop)
{
	double deadline = timeout >= 0 ? pg_monotonic() + timeout : -1;

	for (;;) {
		double slice = 0.05;
		if (pg_proc_exited(p))
			return 1;
		if (stop && *stop)
			return 0;
		if (deadline >= 0) {
			double left = deadline - pg_monotonic();
			if (left <= 0)
				return 0;
			if (left < slice)
				slice = left;
		}
		if (p->pidfd >= 0) {
			struct pollfd pfd = { p->pidfd, POLLIN, 0 };
			poll(&pfd, 1, (int)(slice * 1000) + 1);
		} else {
			sleep_s(slice);
		}
	}
}

/* Reap every child of ours in the group: the leader, and members that
 * were re-parented to us (we are their subreaper). */
static void reap_group(struct pg_proc *p)
{
	int st;
	pid_t w;

	while ((w = waitpid(-p->pid, &st, WNOHANG)) > 0 || (w < 0 && errno == EINTR)) {
		if (w == p->pid) {
			p->exited = true;
			p->status = st;
		}
	}
}

static bool group_signalable(pid_t pgid)
{
	return kill(-pgid, 0) == 0 || errno == EPERM;
}

/* Read "pid (comm) state ppid pgrp ..." from /proc/<pid>/stat. */
static int proc_stat(const char *pid, char *state, pid_t *ppid, pid_t *pgrp)
{
	char path[64], buf[512];
	const char *close_paren;
	int fd, a, b;
	char c;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* comm may contain spaces and parentheses: the last ')' ends it */
	close_paren = strrchr(buf, ')');
	if (!close_paren || sscanf(close_paren + 1, " %c %d %d", &c, &a, &b) != 3)
		return -1;
	*state = c;
	*ppid = a;
	*pgrp = b;
	return 0;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* Whether a process of group pgid is in state `state` (any state: 0). */
static bool any_state(char st)
{
	(void)st;
	return true;
}

static bool stopped(char st)
{
	return st == 'T';
}

static bool not_zombie(char st)
{
	return st != 'Z';
}

/* Whether a process of group pgid is in a state want() accepts. */
static bool group_has(pid_t pgid, bool (*want)(char st))
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	bool found = false;

	if (!d)
		return want == stopped ? false : group_signalable(pgid);
	while (!found && (e = readdir(d))) {
		pid_t ppid, pgrp;
		char st;
		if (all_digits(e->d_name) && !proc_stat(e->d_name, &st, &ppid, &pgrp) &&
		    pgrp == pgid && want(st))
			found = true;
	}
	closedir(d);
	return found;
}

bool pg_proc_group_alive(pid_t pgid)
{
	return group_has(pgid, any_state);
}

/*
 * Descendants that left the group (setsid) and were re-parented to us: any
 * child of ours outside our own process group that is neither a live
 * server nor a guard. Killed and reaped, so nothing started here survives.
 */
static void sweep_orphans(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t self = getpid(), own_group = getpgrp();

	if (!d)
		return;
	while ((e = readdir(d))) {
		pid_t ppid, pgrp, pid;
		char st;
		long v;
		if (!all_digits(e->d_name) || proc_stat(e->d_name, &st, &ppid, &pgrp) ||
		    ppid != self)
			continue;
		if (pg_parse_long(e->d_name, &v))
			continue;
		pid = (pid_t)v;
		if (pgrp == own_group || slot_has(live_groups, pgrp) || slot_has(live_guards, pid))
			continue;
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	closedir(d);
}

/* Wait until the group has no members left, up to seconds. */
static bool wait_group_gone(struct pg_proc *p, double seconds)
{
	double deadline = pg_monotonic() + seconds;

	for (;;) {
		reap_group(p);
		if (!group_signalable(p->pid))
			return true;
		if (pg_monotonic() >= deadline)
			return false;
		if (p->pidfd >= 0 && !p->exited) {
			struct pollfd pfd = { p->pidfd, POLLIN, 0 };
			poll(&pfd, 1, 20);
		} else {
			sleep_s(0.01);
		}
	}
}

int pg_proc_stop(struct pg_proc *p, double grace, struct pg_error *err)
{
	int ret = 0;

	if (p->pid <= 0)
		return 0;
	if (slot_has(live_groups, p->pid)) {
		if (group_signalable(p->pid)) {
			/* A stopped process cannot act on SIGTERM: continue it
			 * first -- and only if one is stopped. A SIGCONT that
			 * reaches a process already on its way out cancels the
			 * SIGSTOP of a ptrace attach: LeakSanitizer's check at
			 * exit then waits for ever (a loaded CI machine, where
			 * perfgate lost the CPU between its SIGTERM and SIGCONT,
			 * saw sanitizer-built servers SIGKILLed after the grace). */
			if (group_has(p->pid, stopped))
				kill(-p->pid, SIGCONT);
			kill(-p->pid, SIGTERM);
		}
		if (!wait_group_gone(p, grace > 0 ? grace : 0)) {
			kill(-p->pid, SIGKILL);
			if (!wait_group_gone(p, 5) || pg_proc_group_alive(p->pid))
				ret = pg_error_set(
					err, PG_EINFRA,
					"process group %d survived SIGKILL (stuck in the kernel?)",
					(int)p->pid);
		}
		if (ret == 0)
			slot_del(live_groups, p->pid);
	}
	sweep_orphans();
	if (ret == 0) {
		release_guard(p);
		stop_writer(p);
	}
	return ret;
}

void pg_proc_release(struct pg_proc *p)
{
	if (p->pidfd >= 0)
		close(p->pidfd);
	p->pidfd = -1;
	/* a guard still armed keeps protecting a group we could not stop */
	if (p->guard_fd >= 0 && !slot_has(live_groups, p->pid))
		release_guard(p);
}

double pg_proc_age(const struct pg_proc *p)
{
	return pg_monotonic() - p->started;
}

void pg_proc_describe(struct pg_buf *out, int st)
{
	if (WIFEXITED(st)) {
		pg_buf_printf(out, "exited with status %d", WEXITSTATUS(st));
	} else if (WIFSIGNALED(st)) {
		const char *abbrev = sigabbrev_np(WTERMSIG(st));
		pg_buf_printf(out, "killed by signal %d", WTERMSIG(st));
		if (abbrev)
			pg_buf_printf(out, " (SIG%s)", abbrev);
		if (WCOREDUMP(st))
			pg_buf_puts(out, ", core dumped");
	} else {
		pg_buf_printf(out, "wait status %#x", st);
	}
}

/*
 * Read fd into out until end of file and pid's exit, in slices short
 * enough to notice the stop flag (a child may close its stdout and go on
 * running: the deadline covers that too); on a stop or the deadline, kill
 * pid's group. At most cap bytes are kept: past them, *cut is set and the
 * group killed (what writes more is not read to its end). *st gets its
 * wait status. what names it in errors.
 */
static int collect(pid_t pid, int fd, double timeout, size_t cap, const volatile sig_atomic_t *stop,
		   const char *what, struct pg_buf *out, bool *cut, int *st, struct pg_error *err)
{
	double deadline = pg_monotonic() + timeout;
	bool eof = false;
	pid_t w = 0;
	int ret = 0;

	*st = 0;
	while (!(eof && w == pid)) {
		double left = deadline - pg_monotonic();
		int slice = left < 0.1 ? (int)(left * 1000) + 1 : 100;

		if (stop && *stop) {
			ret = pg_error_set(err, PG_ECANCEL, "%s stopped by a signal", what);
			break;
		}
		if (left <= 0) {
			ret = pg_error_set(err, PG_EINFRA, "%s did not finish within %g s", what,
					   timeout);
			break;
		}
		if (eof) {
			struct timespec ts = { 0, 10 * 1000 * 1000 };
			do
				w = waitpid(pid, st, WNOHANG);
			while (w < 0 && errno == EINTR);
			if (w == 0)
				nanosleep(&ts, NULL);
			else if (w != pid)
				break; /* not ours to reap (cannot happen): give up waiting */
			continue;
		}
		struct pollfd pfd = { fd, POLLIN, 0 };
		if (poll(&pfd, 1, slice) <= 0)
			continue;
		char chunk[4096];
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			eof = true;
		} else if ((size_t)n > cap - out->len) {
			pg_buf_add(out, chunk, cap - out->len);
			*cut = true;
			break;
		} else {
			pg_buf_add(out, chunk, (size_t)n);
		}
	}
	if (w != pid) {
		kill(-pid, SIGKILL);
		while (waitpid(pid, st, 0) < 0 && errno == EINTR)
			;
	}
	return ret;
}

int pg_proc_capture(char *const *argv, double timeout, size_t max_bytes,
		    const volatile sig_atomic_t *stop, struct pg_buf *out, bool *cut,
		    int *wait_status, struct pg_error *err)
{
	struct pg_strv env = PG_STRV_INIT;
	char *path = NULL;
	int pipefd[2] = { -1, -1 }, null_fd = -1, ret = 0, st = 0;
	pid_t pid = 0;

	*cut = false;
	build_env(&env, NULL);
	path = resolve(argv[0], env_get(&env, "PATH"));
	if (!path) {
		ret = pg_error_set(err, PG_ENOTFOUND, "'%s' not found on PATH", argv[0]);
		goto done;
	}
	if (pipe2(pipefd, O_CLOEXEC) || (null_fd = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0) {
		ret = pg_error_set(err, PG_ERR, "pipe: %s", strerror(errno));
		goto done;
	}
	if ((ret = spawn(&pid, path, argv, env.v, null_fd, pipefd[1], null_fd, true, -1, -1, NULL,
			 err))) {
		/* PG_EINFRA is the deadline's alone: a caller tells a hang by it */
		ret = err->code = PG_ERR;
		goto done;
	}
	close(pipefd[1]);
	pipefd[1] = -1;
	ret = collect(pid, pipefd[0], timeout,
		      max_bytes > SIZE_MAX - out->len ? SIZE_MAX : out->len + max_bytes, stop,
		      argv[0], out, cut, &st, err);
	if (wait_status)
		*wait_status = st;
done:
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	if (null_fd >= 0)
		close(null_fd);
	free(path);
	pg_strv_release(&env);
	return ret;
}

int pg_proc_call(int (*fn)(void *ctx, int out_fd), void *ctx, const char *what, double timeout,
		 const volatile sig_atomic_t *stop, struct pg_buf *out, int *wait_status,
		 struct pg_error *err)
{
	int pipefd[2], st = 0, ret;
	pid_t parent = getpid(), pid;

	if (pipe2(pipefd, O_CLOEXEC))
		return pg_error_set(err, PG_ERR, "pipe: %s", strerror(errno));
	fflush(NULL); /* nothing buffered is written twice */
	pid = fork_blocked();
	if (pid == 0) {
		child_own_group(parent, SIGKILL);
		close(pipefd[0]);
		_exit(fn(ctx, pipefd[1]) ? 1 : 0);
	}
	close(pipefd[1]);
	if (pid < 0) {
		close(pipefd[0]);
		return pg_error_set(err, PG_ERR, "fork: %s", strerror(errno));
	}
	setpgid(pid, pid);
	ret = collect(pid, pipefd[0], timeout, SIZE_MAX, stop, what, out, &(bool){ false }, &st,
		      err);
	close(pipefd[0]);
	if (wait_status)
		*wait_status = st;
	return ret;
}

void pg_file_tail(struct pg_buf *out, const char *path, size_t n)
{
	char buf[65536];
	/* a log replaced by a link is not read through it */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	off_t size, from;
	ssize_t got;
	size_t len, start, lines = 0;

	if (fd < 0)
		return;
	size = lseek(fd, 0, SEEK_END);
	from = size > (off_t)sizeof(buf) ? size - (off_t)sizeof(buf) : 0;
	got = pread(fd, buf, sizeof(buf), from);
	close(fd);
	if (got <= 0)
		return;
	len = (size_t)got;
	while (len && buf[len - 1] == '\n')
		len--;
	start = len;
	while (start > 0) {
		if (buf[start - 1] == '\n' && ++lines == n)
			break;
		start--;
	}
	pg_buf_add(out, buf + start, len - start);
}

int pg_free_ports(size_t n, char (*out)[16], struct pg_error *err)
{
	int *fd = pg_xcalloc(n ? n : 1, sizeof(*fd));
	size_t k = 0;
	int ret = 0;

	/* all held open at once, so none can be drawn twice */
	for (; k < n; k++) {
		struct sockaddr_in a;
		socklen_t len = sizeof(a);

		memset(&a, 0, sizeof(a));
		a.sin_family = AF_INET;
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		fd[k] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd[k] < 0) {
			ret = pg_error_set(err, PG_ERR, "socket: %s", strerror(errno));
			break;
		}
		if (bind(fd[k], (struct sockaddr *)&a, sizeof(a)) ||
		    getsockname(fd[k], (struct sockaddr *)&a, &len)) {
			ret = pg_error_set(err, PG_ERR, "bind 127.0.0.1:0: %s", strerror(errno));
			close(fd[k]);
			break;
		}
		snprintf(out[k], 16, "%u", (unsigned)ntohs(a.sin_port));
	}
	while (k > 0)
		close(fd[--k]);
	free(fd);
	return ret;
}
