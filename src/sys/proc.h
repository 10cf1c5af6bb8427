#ifndef PERFGATE_SYS_PROC_H
#define PERFGATE_SYS_PROC_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct pg_buf;
struct pg_error;
struct pg_kvlist;

/*
 * Child processes that never outlive perfgate: inference servers and
 * external benchmark commands.
 *
 * Each child leads a process group of its own (everything it forks, e.g.
 * vLLM's tensor-parallel workers, stays in it), so stopping it signals the
 * whole tree and nothing else -- vLLM's driver `kill -9`s every python3 on
 * the machine instead. Its stdout and stderr go to a log file; stdin is
 * /dev/null. With secrets to hide, they go through a pipe to a log writer
 * process instead, which writes each line with every secret replaced by
 * "***" as it arrives (base/redact.h: the known values, even cut across
 * writes or spanning lines, and the secret parts of URLs and headers):
 * vLLM prints its api_key at startup, and the log must never hold it, not
 * even after perfgate is SIGKILLed mid-run.
 *
 * Three lines of defence keep the group from outliving perfgate:
 *  1. pg_proc_stop(): SIGTERM to the group, a grace period, SIGKILL, reap,
 *     and a check that no process of the group is left.
 *  2. A guard process per child, in a process group of its own, holding a
 *     pipe to perfgate: when perfgate dies by any means (SIGKILL, the OOM
 *     killer, a Buildkite agent that kills the job's process group) the
 *     pipe closes and the guard stops the child's group the same way.
 *  3. PR_SET_PDEATHSIG: the group leader gets SIGTERM if perfgate dies.
 * The child waits before its execve until its guard is armed: a perfgate
 * that dies in between leaves nothing running (PR_SET_PDEATHSIG alone
 * would not stop a leader that traps SIGTERM, a shell with a trap).
 * perfgate also makes itself a child subreaper, so descendants that leave
 * the group (a daemon that calls setsid) are re-parented to perfgate rather
 * than to init, and pg_proc_stop() kills and reaps them too.
 *
 * Single-threaded use: start, poll and stop from one thread.
 */

struct pg_proc_spec {
	char *const *argv;           /* argv[0] is looked up in the child's PATH */
	const struct pg_kvlist *env; /* added to (overriding) perfgate's environment; may be NULL */
	const char *log_path;        /* stdout+stderr, truncated; NULL: /dev/null */
	const char
		*log_header; /* first line(s) of the log (a redacted command line); may be NULL */
	double guard_grace;  /* seconds the guard allows between SIGTERM and SIGKILL */
	char *const *redact; /* NULL-terminated secret values hidden from the log
					  (those of PG_REDACT_MIN_SUBSTRING bytes or more),
					  longest first as a pg_redactor keeps them; with any,
					  URL and header secrets are hidden too; NULL: none */
};

struct pg_proc {
	pid_t pid;        /* group leader, and the group's id; 0 before start */
	int pidfd;        /* readable when the leader exits; -1 where unsupported */
	pid_t guard;      /* the guard process, 0 when none */
	int guard_fd;     /* perfgate's end of the guard's pipe, -1 when none */
	bool exited;      /* the leader has been reaped */
	int status;       /* its wait status, valid when exited */
	double started;   /* monotonic seconds at start */
	pid_t log_writer; /* the redacting log writer, 0 when none */
};

#define PG_PROC_INIT                                                                               \
	{                                                                                          \
		0, -1, 0, -1, false, 0, 0, 0                                                       \
	}

/*
 * Start spec->argv. Returns 0; PG_ENOTFOUND when the program is not on
 * PATH, PG_EINFRA when exec fails (permission, bad executable), PG_ERR when
 * a system call fails, each with a message naming the program. On error
 * nothing is left running.
 */
int pg_proc_start(struct pg_proc *p, const struct pg_proc_spec *spec, struct pg_error *err);

/*
 * Wait up to seconds for the log writer to have written everything the
 * group printed (it ends when the last process of the group is gone).
 * true when it has, or there is none. Before reading a log's tail.
 */
bool pg_proc_log_settle(struct pg_proc *p, double seconds);

/* Whether the leader has exited (reaping it). Never blocks. */
bool pg_proc_exited(struct pg_proc *p);

/*
 * Wait up to timeout seconds (< 0: no limit) for the leader to exit,
 * waking early when *stop becomes non-zero (stop may be NULL). Returns 1
 * when it exited, 0 on timeout or stop.
 */
int pg_proc_wait(struct pg_proc *p, double timeout, const volatile sig_atomic_t *stop);

/*
 * Stop the whole group: SIGTERM, up to grace seconds for every member to
 * exit, SIGKILL, reap; then kill and reap any descendant that left the
 * group. Returns 0 when nothing of it is left, PG_EINFRA naming the
 * survivors otherwise (a process stuck in the kernel). Safe to call on a
 * process that already exited, and twice. Releases the guard.
 */
int pg_proc_stop(struct pg_proc *p, double grace, struct pg_error *err);

/* Close descriptors. The process must have been stopped. */
void pg_proc_release(struct pg_proc *p);

/* "exited with status 1", "killed by signal 9 (SIGKILL)". */
void pg_proc_describe(struct pg_buf *out, int wait_status);

/* Seconds since the process started (monotonic). */
double pg_proc_age(const struct pg_proc *p);

/*
 * Send sig to every live process group started here. Async-signal-safe:
 * a second Ctrl-C calls it from the signal handler before _exit.
 */
void pg_proc_signal_all(int sig);

/*
 * Whether any process (zombies included) is in process group pgid,
 * from /proc: what the tests and the final check of pg_proc_stop use.
 */
bool pg_proc_group_alive(pid_t pgid);

/*
 * Run argv to completion with stdout captured into out (stderr discarded),
 * killing its group after timeout seconds, or within 0.1 s of *stop
 * becoming non-zero (stop may be NULL): a hung nvidia-smi must not hold up
 * a cancel. At most max_bytes of its output are appended: at more, its
 * group is killed then and there and *cut set (a tool gone wrong cannot
 * fill memory: 200 MiB of nvidia-smi output once took 814 MiB).
 * *wait_status gets its wait status. Returns 0 when it ran (whatever its
 * exit status), PG_ENOTFOUND when the program is not on PATH, PG_EINFRA on
 * timeout, PG_ECANCEL when stopped, PG_ERR otherwise.
 */
int pg_proc_capture(char *const *argv, double timeout, size_t max_bytes,
		    const volatile sig_atomic_t *stop, struct pg_buf *out, bool *cut,
		    int *wait_status, struct pg_error *err);

/*
 * Run fn(ctx, out_fd) in a forked copy of this process, in its own process
 * group, with what it writes to out_fd captured into out: work whose crash,
 * hang or leak must not take perfgate with it (the trends site of a step,
 * after the verdict). The child exits 0 when fn returns 0, 1 otherwise, and
 * dies with perfgate (PR_SET_PDEATHSIG). Timeout and stop as
 * pg_proc_capture (what names it in errors); *wait_status gets its status.
 */
int pg_proc_call(int (*fn)(void *ctx, int out_fd), void *ctx, const char *what, double timeout,
		 const volatile sig_atomic_t *stop, struct pg_buf *out, int *wait_status,
		 struct pg_error *err);

/* The last n lines of a file (at most 64 KiB are read), for error
 * messages. Appends nothing when the file is missing or empty, or is a
 * symbolic link (a log a server replaced by one is not read through it). */
void pg_file_tail(struct pg_buf *out, const char *path, size_t n);

/* Monotonic clock in seconds. */
double pg_monotonic(void);

/* n distinct free loopback ports, as decimal strings: each from binding
 * port 0. Every probe socket stays open until all n are chosen: one closed
 * at once lets the kernel hand out the same port again (6 repeats in 5,000
 * draws of 5), and two servers of one deployment would then collide. The
 * ports are released on return; another process could take one before the
 * server binds it, which a CI agent running one job at a time does not. */
int pg_free_ports(size_t n, char (*out)[16], struct pg_error *err);

#endif
