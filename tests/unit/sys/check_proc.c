/* Child processes, for real: process groups, stopping, the guard that
 * outlives a killed perfgate, readiness, nvidia-smi (a fake one on PATH)
 * and git metadata (a real repository). */
#include "testutil.h"

#include "base/buf.h"
#include "base/error.h"
#include "suite/suite.h"
#include "sys/gitinfo.h"
#include "gpu/detect_io.h"
#include "sys/proc.h"
#include "sys/yamldoc.h"
#include "runner/ready_io.h"

#include <arpa/inet.h>
#include <errno.h>
#include <git2.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void nap(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
	nanosleep(&ts, NULL);
}

/* Set by SIGALRM: a stop flag raised by a signal, as a cancel raises it. */
static volatile sig_atomic_t alarm_stop;

static void on_alarm(int sig)
{
	(void)sig;
	alarm_stop = 1;
}

/* alarm_stop goes up `seconds` from now; restore with disarm(old). */
static void arm_alarm(double seconds, struct sigaction *old)
{
	struct itimerval it = { { 0, 0 }, { 0, (long)(seconds * 1e6) } };
	struct sigaction sa = { 0 };

	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, old);
	alarm_stop = 0;
	setitimer(ITIMER_REAL, &it, NULL);
}

static void disarm(const struct sigaction *old)
{
	struct itimerval off = { { 0, 0 }, { 0, 0 } };

	setitimer(ITIMER_REAL, &off, NULL);
	sigaction(SIGALRM, old, NULL);
}

/* Wait (reaping any zombie that comes to us) until the group is gone. */
static bool group_gone_within(pid_t pgid, double seconds)
{
	double end = pg_monotonic() + seconds;

	while (pg_monotonic() < end) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (!pg_proc_group_alive(pgid))
			return true;
		nap(0.02);
	}
	return false;
}

/* Wait until the log holds `marker`: the script reached that point (a
 * fixed nap is not enough on a loaded machine: a shell not yet past its
 * `trap` dies of the SIGTERM it was meant to ignore). */
static void wait_for_log(const char *log, const char *marker)
{
	double end = pg_monotonic() + 20;

	while (pg_monotonic() < end) {
		char *text = tu_read_file(log, NULL);
		bool found = text && strstr(text, marker);
		free(text);
		if (found)
			return;
		nap(0.01);
	}
	ck_abort_msg("%s never showed '%s'", log, marker);
}

static char *saved_path;

/* without CK_FORK (valgrind) tests share one environment */
static void restore_env(void)
{
	if (saved_path)
		setenv("PATH", saved_path, 1);
	unsetenv("PERFGATE_GPU");
	unsetenv("BUILDKITE_BRANCH");
}

static char *dirs[16];
static int n_dirs;

static void cleanup_dirs(void)
{
	for (int i = 0; i < n_dirs; i++) {
		tu_rm_rf(dirs[i]);
		free(dirs[i]);
	}
	n_dirs = 0;
}

static char *start_in(struct pg_proc *p, const char *script, double grace)
{
	char *dir = tu_mkdtemp();
	struct pg_buf log = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;
	char *argv[] = { "/bin/sh", "-c", (char *)script, NULL };

	pg_buf_printf(&log, "%s/server.log", dir);
	struct pg_proc_spec spec = { argv, NULL, log.ptr, "$ test\n", grace };
	ck_assert_msg(pg_proc_start(p, &spec, &err) == 0, "%s", err.msg);
	if (n_dirs < 16)
		dirs[n_dirs++] = dir;
	else
		free(dir);
	return pg_buf_detach(&log);
}

START_TEST(stop_takes_the_whole_group)
{
	struct pg_proc p;
	struct pg_error err = PG_ERROR_INIT;
	/* children in the group, and one that leaves it with setsid */
	char *log = start_in(&p, "sleep 100 & sleep 100 & setsid sleep 100 & echo started; wait",
			     5);
	pid_t pgid = p.pid, guard = p.guard;

	ck_assert_int_gt(pgid, 0);
	ck_assert_int_gt(guard, 0);
	wait_for_log(log, "started\n");
	ck_assert(pg_proc_group_alive(pgid));
	ck_assert(!pg_proc_exited(&p));
	double t0 = pg_monotonic();
	ck_assert_int_eq(pg_proc_stop(&p, 5, &err), 0);
	ck_assert_msg(pg_monotonic() - t0 < 4.5, "SIGTERM should have been enough");
	ck_assert(!pg_proc_group_alive(pgid));
	ck_assert(p.exited);
	ck_assert(WIFSIGNALED(p.status) && WTERMSIG(p.status) == SIGTERM);
	/* the guard was released and reaped */
	ck_assert_int_eq(kill(guard, 0), -1);
	/* the escaped sleep (a child of ours via the subreaper) was swept */
	ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
	ck_assert_int_eq(errno, ECHILD);
	char *text = tu_read_file(log, NULL);
	ck_assert_str_eq(text, "$ test\nstarted\n");
	free(text);
	/* stopping twice is harmless */
	ck_assert_int_eq(pg_proc_stop(&p, 5, &err), 0);
	pg_proc_release(&p);
	free(log);
}
END_TEST

/* Wait until a process of group pgid is in job-control stop. */
static bool group_stopped_within(pid_t pgid, double seconds)
{
	double end = pg_monotonic() + seconds;
	char path[64], buf[512];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pgid);
	while (pg_monotonic() < end) {
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		if (f)
			fclose(f);
		buf[n] = '\0';
		const char *paren = strrchr(buf, ')');
		if (paren && paren[1] == ' ' && paren[2] == 'T')
			return true;
		nap(0.01);
	}
	return false;
}

START_TEST(a_stopped_group_is_continued_and_stops_on_sigterm)
{
	struct pg_proc p;
	struct pg_error err = PG_ERROR_INIT;
	char *log = start_in(&p, "echo started; exec sleep 100", 5);

	wait_for_log(log, "started\n");
	kill(-p.pid, SIGSTOP);
	ck_assert(group_stopped_within(p.pid, 5));
	double t0 = pg_monotonic();
	ck_assert_int_eq(pg_proc_stop(&p, 5, &err), 0);
	ck_assert_msg(pg_monotonic() - t0 < 4.5, "a stopped server waited out its grace");
	ck_assert(WIFSIGNALED(p.status) && WTERMSIG(p.status) == SIGTERM);
	pg_proc_release(&p);
	free(log);
}
END_TEST

START_TEST(sigterm_ignored_means_sigkill_after_grace)
{
	struct pg_proc p;
	struct pg_error err = PG_ERROR_INIT;
	char *log = start_in(&p, "trap '' TERM; sleep 100 & echo trapped; wait; wait", 5);
	pid_t pgid = p.pid;

	wait_for_log(log, "trapped\n");
	double t0 = pg_monotonic();
	ck_assert_int_eq(pg_proc_stop(&p, 0.3, &err), 0);
	double took = pg_monotonic() - t0;
	ck_assert_msg(took >= 0.3 && took < 4, "took %.2fs", took);
	ck_assert(!pg_proc_group_alive(pgid));
	ck_assert(WIFSIGNALED(p.status) && WTERMSIG(p.status) == SIGKILL);
	pg_proc_release(&p);
	free(log);
}
END_TEST

START_TEST(exit_is_seen_at_once)
{
	struct pg_proc p;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_buf how = PG_BUF_INIT, tail = PG_BUF_INIT;
	char *log = start_in(&p, "for i in 1 2 3 4 5; do echo line $i; done; sleep 0.2; exit 7", 5);

	double t0 = pg_monotonic();
	ck_assert_int_eq(pg_proc_wait(&p, 10, NULL), 1);
	ck_assert(pg_monotonic() - t0 < 5);
	pg_proc_describe(&how, p.status);
	ck_assert_str_eq(how.ptr, "exited with status 7");
	pg_file_tail(&tail, log, 2);
	ck_assert_str_eq(tail.ptr, "line 4\nline 5");
	pg_buf_reset(&tail);
	pg_file_tail(&tail, log, 100);
	ck_assert(pg_str_has_prefix(tail.ptr, "$ test\nline 1"));
	ck_assert_int_eq(pg_proc_stop(&p, 1, &err), 0);
	pg_proc_release(&p);

	pg_buf_reset(&how);
	pg_proc_describe(&how, SIGSEGV | 0x80);
	ck_assert_str_eq(how.ptr, "killed by signal 11 (SIGSEGV), core dumped");
	pg_buf_release(&how);
	pg_buf_release(&tail);
	free(log);
}
END_TEST

START_TEST(wait_stops_on_flag_and_timeout)
{
	struct pg_proc p;
	struct pg_error err = PG_ERROR_INIT;
	volatile sig_atomic_t stop = 0;
	char *log = start_in(&p, "exec sleep 100", 5);

	double t0 = pg_monotonic();
	ck_assert_int_eq(pg_proc_wait(&p, 0.2, &stop), 0);
	ck_assert(pg_monotonic() - t0 >= 0.2);
	stop = 1;
	ck_assert_int_eq(pg_proc_wait(&p, 10, &stop), 0);
	ck_assert_int_eq(pg_proc_stop(&p, 5, &err), 0);
	pg_proc_release(&p);
	free(log);
}
END_TEST

START_TEST(missing_and_unrunnable_programs)
{
	struct pg_proc p;
	struct pg_error err = PG_ERROR_INIT;
	char *dir = tu_mkdtemp();
	struct pg_buf path = PG_BUF_INIT;
	char *argv1[] = { "perfgate-no-such-program", NULL };
	struct pg_proc_spec s1 = { argv1, NULL, NULL, NULL, 1 };

	ck_assert_int_eq(pg_proc_start(&p, &s1, &err), PG_ENOTFOUND);
	ck_assert_str_eq(err.msg, "'perfgate-no-such-program' not found on PATH");

	pg_buf_printf(&path, "%s/not-executable", dir);
	tu_write_file(path.ptr, "#!/bin/sh\necho hi\n");
	char *argv2[] = { path.ptr, NULL };
	struct pg_proc_spec s2 = { argv2, NULL, NULL, NULL, 1 };
	ck_assert_int_eq(pg_proc_start(&p, &s2, &err), PG_EINFRA);
	ck_assert_msg(strstr(err.msg, "Permission denied"), "%s", err.msg);
	/* nothing was left behind */
	ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);

	pg_buf_release(&path);
	tu_rm_rf(dir);
	free(dir);
}
END_TEST

START_TEST(env_is_added_and_argv_is_literal)
{
	struct pg_proc p;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_kvlist env = { 0 };
	char *dir = tu_mkdtemp();
	struct pg_buf log = PG_BUF_INIT, pwned = PG_BUF_INIT, arg = PG_BUF_INIT;

	pg_buf_printf(&log, "%s/out.log", dir);
	pg_buf_printf(&pwned, "%s/pwned", dir);
	pg_buf_printf(&arg, "a b'\"$(touch %s)\"`touch %s`", pwned.ptr, pwned.ptr);
	pg_kvlist_set(&env, "PERFGATE_TEST_VAR", "from suite");
	pg_kvlist_set(&env, "HOME", "/nonexistent-home");
	char *argv[] = { "printf", "%s|%s|%s\\n", arg.ptr, "$PERFGATE_TEST_VAR", "x", NULL };
	struct pg_proc_spec spec = { argv, &env, log.ptr, NULL, 1 };
	ck_assert_int_eq(pg_proc_start(&p, &spec, &err), 0);
	ck_assert_int_eq(pg_proc_wait(&p, 10, NULL), 1);
	ck_assert_int_eq(pg_proc_stop(&p, 1, &err), 0);
	pg_proc_release(&p);
	char *text = tu_read_file(log.ptr, NULL);
	struct pg_buf want = PG_BUF_INIT;
	pg_buf_printf(&want, "%s|$PERFGATE_TEST_VAR|x\n", arg.ptr);
	ck_assert_str_eq(text, want.ptr);
	ck_assert_int_eq(access(pwned.ptr, F_OK), -1);
	free(text);

	char *argv2[] = { "/bin/sh", "-c", "echo \"$PERFGATE_TEST_VAR:$HOME\"", NULL };
	struct pg_proc_spec spec2 = { argv2, &env, log.ptr, NULL, 1 };
	ck_assert_int_eq(pg_proc_start(&p, &spec2, &err), 0);
	ck_assert_int_eq(pg_proc_wait(&p, 10, NULL), 1);
	ck_assert_int_eq(pg_proc_stop(&p, 1, &err), 0);
	pg_proc_release(&p);
	text = tu_read_file(log.ptr, NULL);
	ck_assert_str_eq(text, "from suite:/nonexistent-home\n");
	free(text);

	pg_kvlist_release(&env);
	pg_buf_release(&want);
	pg_buf_release(&log);
	pg_buf_release(&pwned);
	pg_buf_release(&arg);
	tu_rm_rf(dir);
	free(dir);
}
END_TEST

/*
 * perfgate SIGKILLed: a forked "perfgate" starts a server whose leader is
 * a shell with a child, reports the group id and is killed with SIGKILL.
 * The leader gets its death signal, the guard sees its pipe close and
 * stops the rest of the group.
 */
/* A stand-in for perfgate: a forked process that starts spec and waits to
 * be killed. ids gets the leader, the guard and the log writer. */
static pid_t fake_perfgate(const struct pg_proc_spec *spec, pid_t ids[3])
{
	int fds[2];
	pid_t fake;

	ck_assert_int_eq(pipe(fds), 0);
	fake = fork();
	if (fake == 0) {
		struct pg_proc p;
		struct pg_error err = PG_ERROR_INIT;
		if (pg_proc_start(&p, spec, &err))
			_exit(1);
		ids[0] = p.pid;
		ids[1] = p.guard;
		ids[2] = p.log_writer;
		if (write(fds[1], ids, 3 * sizeof(*ids)) != (ssize_t)(3 * sizeof(*ids)))
			_exit(1);
		pause();
		_exit(0);
	}
	close(fds[1]);
	ck_assert_int_eq(read(fds[0], ids, 3 * sizeof(*ids)), (ssize_t)(3 * sizeof(*ids)));
	close(fds[0]);
	return fake;
}

START_TEST(guard_stops_the_group_when_perfgate_is_killed)
{
	/* the leader ignores SIGTERM so only the guard's SIGKILL ends it */
	char *argv[] = { "/bin/sh", "-c", "trap '' TERM; sleep 100 & sleep 100; wait", NULL };
	struct pg_proc_spec spec = { argv, NULL, NULL, NULL, 0.5 };
	pid_t ids[3];
	pid_t fake = fake_perfgate(&spec, ids);

	nap(0.2);
	ck_assert(pg_proc_group_alive(ids[0]));
	kill(fake, SIGKILL);
	waitpid(fake, NULL, 0);
	ck_assert_msg(group_gone_within(ids[0], 5), "the server's group outlived perfgate");
	/* the guard finished its job and left */
	ck_assert_msg(group_gone_within(ids[1], 5), "the guard stayed");
}
END_TEST

/* The log writer masks secrets as the output arrives: a secret cut across
 * writes (and so across reads), one inside a line longer than the writer's
 * buffer, one containing another, a last line without newline; values
 * shorter than PG_REDACT_MIN_SUBSTRING stay. The log never holds a secret,
 * not while the child runs, and not after perfgate is SIGKILLed. */
START_TEST(log_writer_masks_secrets_as_they_arrive)
{
	/* longest first, as a pg_redactor keeps them */
	char *secrets[] = { "sk-live-123456-extra", "sk-live-123456", "hf_abcdefghij", "abc",
			    NULL };
	char *dir = tu_mkdtemp();
	struct pg_buf log = PG_BUF_INIT, want = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_proc p;
	/* printf pieces with pauses: the writer reads them separately */
	char *argv[] = {
		"/bin/sh", "-c",
		"printf 'token hf_abc'; sleep 0.2; printf 'defghij and abc\\n';"
		"printf 'key sk-live-123456-extra, sk-live-123456\\n';"
		"head -c 70000 /dev/zero | tr '\\0' x; printf 'hf_abcdefghij'; head -c 10 /dev/zero | tr '\\0' y;"
		"printf '\\nlast hf_abcdefghij'; sleep 30",
		NULL
	};
	char *text;

	pg_buf_printf(&log, "%s/server.log", dir);
	struct pg_proc_spec spec = { argv, NULL, log.ptr, "$ test\n", 1, secrets };
	ck_assert_msg(pg_proc_start(&p, &spec, &err) == 0, "%s", err.msg);
	ck_assert_int_gt(p.log_writer, 0);
	wait_for_log(log.ptr, "yyyyyyyyyy\n");
	text = tu_read_file(log.ptr, NULL);
	ck_assert_msg(!strstr(text, "hf_abc") && !strstr(text, "sk-live"), "%.200s", text);
	free(text);
	ck_assert_int_eq(pg_proc_stop(&p, 1, &err), 0);
	ck_assert_int_eq(p.log_writer, 0);
	pg_proc_release(&p);

	pg_buf_puts(&want, "$ test\ntoken *** and abc\nkey ***, ***\n");
	for (int i = 0; i < 70000; i++)
		pg_buf_putc(&want, 'x');
	pg_buf_puts(&want, "***yyyyyyyyyy\nlast ***");
	text = tu_read_file(log.ptr, NULL);
	ck_assert_uint_eq(strlen(text), want.len);
	ck_assert(!strcmp(text, want.ptr));
	free(text);

	/* no secrets: no writer, the child writes the log itself */
	char *plain[] = { "/bin/sh", "-c", "echo plain", NULL };
	struct pg_proc_spec none = { plain, NULL, log.ptr, NULL, 1, NULL };
	ck_assert_int_eq(pg_proc_start(&p, &none, &err), 0);
	ck_assert_int_eq(p.log_writer, 0);
	ck_assert_int_eq(pg_proc_wait(&p, 10, NULL), 1);
	ck_assert_int_eq(pg_proc_stop(&p, 1, &err), 0);
	pg_proc_release(&p);
	text = tu_read_file(log.ptr, NULL);
	ck_assert_str_eq(text, "plain\n");
	free(text);

	pg_buf_release(&want);
	pg_buf_release(&log);
	tu_rm_rf(dir);
	free(dir);
}
END_TEST

/* A secret of two lines, written in two pieces (cut inside a line, and
 * right after its newline), is masked whole; URL passwords, secret query
 * parameters and Authorization headers are masked whatever their value,
 * once there is any secret to hide. */
START_TEST(log_writer_masks_multiline_secrets_and_patterns)
{
	/* as a pg_redactor keeps a two-line value: whole, then each line */
	char *secrets[] = { "line-one-secret\nline-two-secret", "line-one-secret",
			    "line-two-secret", NULL };
	char *dir = tu_mkdtemp();
	struct pg_buf log = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_proc p;
	char *argv[] = { "/bin/sh", "-c",
			 "printf 'a line-one-sec'; sleep 0.2; printf 'ret\\nline-two-secret b\\n';"
			 "printf 'c line-one-secret\\n'; sleep 0.2; printf 'line-two-secret d\\n';"
			 "printf 'url http://u:pw@h/x?api_key=zz&m=1\\n';"
			 "printf 'Authorization: Bearer abc\\rnext\\n'",
			 NULL };
	char *text;

	pg_buf_printf(&log, "%s/server.log", dir);
	struct pg_proc_spec spec = { argv, NULL, log.ptr, NULL, 1, secrets };
	ck_assert_msg(pg_proc_start(&p, &spec, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(pg_proc_wait(&p, 10, NULL), 1);
	ck_assert_int_eq(pg_proc_stop(&p, 1, &err), 0);
	pg_proc_release(&p);
	text = tu_read_file(log.ptr, NULL);
	ck_assert_str_eq(text, "a *** b\nc *** d\nurl http://u:***@h/x?api_key=***&m=1\n"
			       "Authorization: Bearer ***\rnext\n");
	free(text);
	pg_buf_release(&log);
	tu_rm_rf(dir);
	free(dir);
}
END_TEST

/* A link where the log goes (a server can leave one in the results
 * directory for the next test) is replaced by the log, never written
 * through; a log tail is never read through one either. */
START_TEST(a_log_that_is_a_link_is_replaced_not_written_through)
{
	char *dir = tu_mkdtemp();
	struct pg_buf log = PG_BUF_INIT, target = PG_BUF_INIT, tail = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_proc p;
	char *argv[] = { "/bin/sh", "-c", "echo from the server", NULL };
	struct stat st;
	char *text;

	pg_buf_printf(&log, "%s/server.log", dir);
	pg_buf_printf(&target, "%s/precious", dir);
	tu_write_file(target.ptr, "precious\n");
	ck_assert_int_eq(symlink(target.ptr, log.ptr), 0);
	pg_file_tail(&tail, log.ptr, 5);
	ck_assert_uint_eq(tail.len, 0);
	struct pg_proc_spec spec = { argv, NULL, log.ptr, NULL, 1, NULL };
	ck_assert_msg(pg_proc_start(&p, &spec, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(pg_proc_wait(&p, 10, NULL), 1);
	ck_assert_int_eq(pg_proc_stop(&p, 1, &err), 0);
	pg_proc_release(&p);
	ck_assert_int_eq(lstat(log.ptr, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	text = tu_read_file(log.ptr, NULL);
	ck_assert_str_eq(text, "from the server\n");
	free(text);
	text = tu_read_file(target.ptr, NULL);
	ck_assert_str_eq(text, "precious\n");
	free(text);
	pg_buf_release(&log);
	pg_buf_release(&target);
	pg_buf_release(&tail);
	tu_rm_rf(dir);
	free(dir);
}
END_TEST

START_TEST(log_writer_outlives_a_killed_perfgate)
{
	char *dir = tu_mkdtemp();
	struct pg_buf log = PG_BUF_INIT;
	char *secrets[] = { "hf_killed_secret", NULL };
	/* the last words come after SIGTERM, from the trap; SIGTERM comes
	 * twice (PR_SET_PDEATHSIG and the guard), so the trap first ignores
	 * any more */
	char *argv[] = { "/bin/sh", "-c",
			 "trap 'trap \"\" TERM; echo bye hf_killed_secret; exit 0' TERM;"
			 "echo hello hf_killed_secret;"
			 "sleep 100 & wait",
			 NULL };
	pid_t ids[3], fake;
	char *text;

	pg_buf_printf(&log, "%s/server.log", dir);
	struct pg_proc_spec spec = { argv, NULL, log.ptr, NULL, 5, secrets };
	fake = fake_perfgate(&spec, ids);
	ck_assert_int_gt(ids[2], 0);
	wait_for_log(log.ptr, "hello ***\n");
	kill(fake, SIGKILL);
	waitpid(fake, NULL, 0);
	ck_assert_msg(group_gone_within(ids[0], 5), "the server's group outlived perfgate");
	ck_assert_msg(group_gone_within(ids[2], 5), "the log writer stayed");
	text = tu_read_file(log.ptr, NULL);
	ck_assert_str_eq(text, "hello ***\nbye ***\n");
	free(text);
	pg_buf_release(&log);
	tu_rm_rf(dir);
	free(dir);
}
END_TEST

/* Nodes of a JSON tree, nulls included. */
static size_t json_nodes(const json_t *j)
{
	size_t n = 1;
	const char *k;
	json_t *v;
	size_t i;

	if (json_is_array(j))
		json_array_foreach(j, i, v) n += json_nodes(v);
	else if (json_is_object(j))
		json_object_foreach((json_t *)j, k, v) n += json_nodes(v);
	return n;
}

/* A YAML alias inside the node it names makes an endless tree: its JSON
 * stops (null) at a fixed depth instead of recursing off the stack (a
 * 33-byte report did that to `perfgate import`). */
START_TEST(yaml_to_json_of_an_endless_alias)
{
	static const char text[] = "base: &b\n  again: *b\n  n: 1\n";
	struct pg_ydoc d = PG_YDOC_INIT;
	struct pg_error err = PG_ERROR_INIT;
	json_t *j, *at;
	int depth = 0;

	ck_assert_msg(pg_ydoc_load(&d, text, strlen(text), "r.yml", &err) == 0, "%s", err.msg);
	j = pg_ynode_to_json(&d, pg_ydoc_root(&d));
	ck_assert_ptr_nonnull(j);
	for (at = json_object_get(j, "base"); json_is_object(at); at = json_object_get(at, "again"))
		depth++;
	ck_assert(json_is_null(at));
	ck_assert_int_gt(depth, 100);
	ck_assert_int_lt(depth, 1000);
	json_decref(j);
	pg_ydoc_release(&d);

	/* two aliases of itself at every level: a tree of 2^256 nodes, of
	 * which ten times the document's own plus 10,000 are made (a million
	 * were 2 GiB under ASan) */
	{
		static const char branching[] = "b: &b\n  x: [*b, *b]\n";
		struct pg_ydoc d2 = PG_YDOC_INIT;
		ck_assert_msg(pg_ydoc_load(&d2, branching, strlen(branching), "r.yml", &err) == 0,
			      "%s", err.msg);
		j = pg_ynode_to_json(&d2, pg_ydoc_root(&d2));
		/* (and a null for each child left when the budget ran out) */
		ck_assert_uint_le(json_nodes(j), 2 * (10000 + 100));
		ck_assert_uint_gt(json_nodes(j), 5000);
		json_decref(j);
		pg_ydoc_release(&d2);
	}
}
END_TEST

START_TEST(capture_output_and_timeout)
{
	struct pg_buf out = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;
	int st = -1;
	bool cut = true;
	char *echo[] = { "/bin/sh", "-c", "echo out; echo err >&2; exit 4", NULL };
	char *slow[] = { "/bin/sh", "-c", "sleep 30", NULL };
	char *missing[] = { "perfgate-no-such-program", NULL };
	char *not_executable[] = { "/dev/null", NULL };

	ck_assert_int_eq(pg_proc_capture(echo, 5, 1024, NULL, &out, &cut, &st, &err), 0);
	ck_assert_str_eq(out.ptr, "out\n");
	ck_assert(!cut);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 4);
	double t0 = pg_monotonic();
	ck_assert_int_eq(pg_proc_capture(slow, 0.3, 1024, NULL, &out, &cut, &st, &err), PG_EINFRA);
	ck_assert(pg_monotonic() - t0 < 10);
	ck_assert_int_eq(pg_proc_capture(missing, 1, 1024, NULL, &out, &cut, &st, &err),
			 PG_ENOTFOUND);
	/* PG_EINFRA is the deadline's alone: what cannot run is PG_ERR */
	ck_assert_int_eq(pg_proc_capture(not_executable, 1, 1024, NULL, &out, &cut, &st, &err),
			 PG_ERR);
	ck_assert_str_eq(err.msg, "cannot run '/dev/null': Permission denied");
	/* a child that closes its stdout and goes on: the timeout still holds */
	char *detached[] = { "/bin/sh", "-c", "exec >&-; sleep 30", NULL };
	t0 = pg_monotonic();
	ck_assert_int_eq(pg_proc_capture(detached, 0.3, 1024, NULL, &out, &cut, &st, &err),
			 PG_EINFRA);
	ck_assert_msg(pg_monotonic() - t0 < 10, "took %.1fs", pg_monotonic() - t0);
	/* a cancel does not wait for the timeout (a hung nvidia-smi) */
	struct sigaction old;
	arm_alarm(0.2, &old);
	t0 = pg_monotonic();
	ck_assert_int_eq(pg_proc_capture(slow, 30, 1024, &alarm_stop, &out, &cut, &st, &err),
			 PG_ECANCEL);
	ck_assert_msg(pg_monotonic() - t0 < 5, "took %.1fs", pg_monotonic() - t0);
	disarm(&old);
	pg_buf_release(&out);
}
END_TEST

/* A program that writes without end: the first max_bytes are kept, then
 * it is killed (not read to its end, not waited for), and the caller told.
 * Output that fits exactly is not cut. */
START_TEST(capture_output_is_capped)
{
	struct pg_buf out = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;
	int st = 0;
	bool cut = false;
	char *endless[] = { "/bin/sh", "-c", "yes 0123456789abcdef", NULL };
	char *exact[] = { "/bin/sh", "-c", "printf 12345678", NULL };

	pg_buf_puts(&out, "kept:");
	ck_assert_int_eq(pg_proc_capture(endless, 10, 100000, NULL, &out, &cut, &st, &err), 0);
	ck_assert(cut);
	ck_assert_uint_eq(out.len, strlen("kept:") + 100000);
	ck_assert(!strncmp(out.ptr, "kept:0123456789abcdef\n", 22));
	ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	pg_buf_reset(&out);
	ck_assert_int_eq(pg_proc_capture(exact, 10, 8, NULL, &out, &cut, &st, &err), 0);
	ck_assert(!cut);
	ck_assert_str_eq(out.ptr, "12345678");
	pg_buf_release(&out);
}
END_TEST

/* pg_proc_call's children: one that answers, one that crashes, one that
 * hangs. */
static int call_answers(void *ctx, int out_fd)
{
	const char *say = ctx;
	return write(out_fd, say, strlen(say)) == (ssize_t)strlen(say) ? 0 : 1;
}

static int call_crashes(void *ctx, int out_fd)
{
	(void)ctx;
	if (write(out_fd, "half", 4) != 4)
		return 1;
	raise(SIGSEGV);
	return 0;
}

static int call_hangs(void *ctx, int out_fd)
{
	(void)ctx;
	(void)out_fd;
	for (;;)
		pause();
	return 0;
}

/* Work in a forked copy (the trends site of a plugin step): its answer
 * comes back, its crash is a status and not this process's end, its hang
 * ends at the timeout or a cancel with nothing of it left. */
START_TEST(call_in_a_child)
{
	struct pg_buf out = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct sigaction old;
	int st = -1;
	double t0;

	ck_assert_int_eq(pg_proc_call(call_answers, "ok 3 7", "trends", 10, NULL, &out, &st, &err),
			 0);
	ck_assert_str_eq(out.ptr, "ok 3 7");
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	pg_buf_reset(&out);
	ck_assert_int_eq(pg_proc_call(call_crashes, NULL, "trends", 10, NULL, &out, &st, &err), 0);
	ck_assert_str_eq(out.ptr, "half");
	ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);

	t0 = pg_monotonic();
	ck_assert_int_eq(pg_proc_call(call_hangs, NULL, "trends", 0.3, NULL, &out, &st, &err),
			 PG_EINFRA);
	ck_assert_str_eq(err.msg, "trends did not finish within 0.3 s");
	ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	ck_assert_msg(pg_monotonic() - t0 < 10, "took %.1fs", pg_monotonic() - t0);

	arm_alarm(0.2, &old);
	t0 = pg_monotonic();
	ck_assert_int_eq(pg_proc_call(call_hangs, NULL, "trends", 30, &alarm_stop, &out, &st, &err),
			 PG_ECANCEL);
	ck_assert_msg(pg_monotonic() - t0 < 5, "took %.1fs", pg_monotonic() - t0);
	disarm(&old);
	pg_buf_release(&out);
}
END_TEST

/* ---- readiness ---- */

/* A port nothing listens on now (the kernel's choice for port 0). */
static int port_num(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	return *end || v <= 0 || v > 65535 ? -1 : (int)v;
}

static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert(fd >= 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

/* A deployment's ports: all distinct (each probe socket is held until
 * all are chosen; closed at once, the kernel can hand one out twice) and
 * each free to bind once returned. 5,000 draws of 8: the one-by-one draw
 * repeated a port in about 1 draw of 2,000 here (this test then failed
 * 5 runs in 5). */
START_TEST(free_ports_are_distinct_and_bindable)
{
	struct pg_error err = PG_ERROR_INIT;
	char port[8][16];

	for (int round = 0; round < 5000; round++) {
		ck_assert_msg(pg_free_ports(8, port, &err) == 0, "%s", err.msg);
		for (int i = 0; i < 8; i++) {
			ck_assert_int_gt(port_num(port[i]), 0);
			for (int j = 0; j < i; j++)
				ck_assert_msg(strcmp(port[i], port[j]), "round %d: port %s twice",
					      round, port[i]);
		}
	}
	int fd[8];
	for (int i = 0; i < 8; i++) {
		struct sockaddr_in a = { .sin_family = AF_INET,
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
					 .sin_port = htons((uint16_t)port_num(port[i])) };
		fd[i] = socket(AF_INET, SOCK_STREAM, 0);
		ck_assert(fd[i] >= 0);
		ck_assert_msg(bind(fd[i], (struct sockaddr *)&a, sizeof(a)) == 0, "bind %s: %s",
			      port[i], strerror(errno));
	}
	for (int i = 0; i < 8; i++)
		close(fd[i]);
	ck_assert_int_eq(pg_free_ports(0, port, &err), 0);
}
END_TEST

static const char *py(void)
{
	return tu_env("PERFGATE_PYTHON");
}

START_TEST(ready_when_the_server_answers)
{
	struct pg_proc p;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_buf cmd = PG_BUF_INIT, url = PG_BUF_INIT;
	double waited = -1;
	int port = free_port();

	/* a real HTTP server that starts listening after 0.3 s */
	pg_buf_printf(&cmd, "sleep 0.3; exec %s -m http.server --bind 127.0.0.1 %d", py(), port);
	char *log = start_in(&p, cmd.ptr, 5);
	pg_buf_printf(&url, "http://127.0.0.1:%d/", port);
	struct pg_ready_opts o = { url.ptr, 20, "sk-test", &p, NULL };
	ck_assert_msg(pg_ready_wait(&o, &waited, &err) == 0, "%s", err.msg);
	ck_assert(waited >= 0.3 && waited < 15);
	ck_assert_int_eq(pg_proc_stop(&p, 5, &err), 0);
	pg_proc_release(&p);
	pg_buf_release(&cmd);
	pg_buf_release(&url);
	free(log);
}
END_TEST

START_TEST(ready_fails_at_once_when_the_server_exits)
{
	struct pg_proc p;
	struct pg_error err = PG_ERROR_INIT;
	char *log = start_in(&p, "echo 'CUDA out of memory' >&2; sleep 0.2; exit 3", 5);
	struct pg_ready_opts o = { "http://127.0.0.1:9/v1/models", 60, NULL, &p, NULL };

	double t0 = pg_monotonic();
	ck_assert_int_eq(pg_ready_wait(&o, NULL, &err), PG_EINFRA);
	ck_assert_msg(pg_monotonic() - t0 < 10, "waited %.1fs for a dead server",
		      pg_monotonic() - t0);
	ck_assert_msg(pg_str_has_prefix(err.msg, "server exited with status 3 after "), "%s",
		      err.msg);
	ck_assert_int_eq(pg_proc_stop(&p, 1, &err), 0);
	pg_proc_release(&p);
	free(log);
}
END_TEST

START_TEST(ready_times_out_and_cancels)
{
	struct pg_proc p;
	struct pg_error err = PG_ERROR_INIT;
	volatile sig_atomic_t stop = 0;
	char *log = start_in(&p, "exec sleep 100", 5);
	struct pg_ready_opts o = { "http://127.0.0.1:9/v1/models", 0.5, NULL, &p, NULL };

	double t0 = pg_monotonic();
	ck_assert_int_eq(pg_ready_wait(&o, NULL, &err), PG_EINFRA);
	ck_assert(pg_monotonic() - t0 < 5);
	ck_assert_msg(pg_str_has_prefix(err.msg, "server not ready after 0.5s: GET "
						 "http://127.0.0.1:9/v1/models: "),
		      "%s", err.msg);
	stop = 1;
	o.timeout = 60;
	o.stop = &stop;
	ck_assert_int_eq(pg_ready_wait(&o, NULL, &err), PG_ECANCEL);
	ck_assert_int_eq(pg_proc_stop(&p, 5, &err), 0);
	pg_proc_release(&p);
	free(log);
}
END_TEST

START_TEST(ready_cancels_during_a_probe)
{
	/* a server that takes connections and never answers: each probe
	 * waits up to 5 s, a cancel must not */
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	struct pg_error err = PG_ERROR_INIT;
	struct sigaction old;
	char url[64];
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(fd, 4), 0);
	getsockname(fd, (struct sockaddr *)&a, &len);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/health", ntohs(a.sin_port));
	struct pg_ready_opts o = { url, 60, NULL, NULL, &alarm_stop };
	arm_alarm(0.3, &old);
	double t0 = pg_monotonic();
	ck_assert_int_eq(pg_ready_wait(&o, NULL, &err), PG_ECANCEL);
	ck_assert_msg(pg_monotonic() - t0 < 4, "the probe took %.1fs to notice the stop",
		      pg_monotonic() - t0);
	disarm(&old);
	close(fd);
}
END_TEST

/* ---- GPU identity ---- */

static char *fake_smi(const char *script)
{
	char *dir = tu_mkdtemp();
	struct pg_buf path = PG_BUF_INIT, env = PG_BUF_INIT;

	pg_buf_printf(&path, "%s/nvidia-smi", dir);
	tu_write_file(path.ptr, script);
	chmod(path.ptr, 0755);
	pg_buf_printf(&env, "%s:/usr/bin:/bin", dir);
	setenv("PATH", env.ptr, 1);
	pg_buf_release(&path);
	pg_buf_release(&env);
	return dir;
}

START_TEST(gpus_from_nvidia_smi)
{
	struct pg_gpu_info g;
	struct pg_error err = PG_ERROR_INIT;
	char *dir = fake_smi(
		"#!/bin/sh\n"
		"case \"$1\" in --query-gpu=name,memory.total) ;; *) exit 2;; esac\n"
		"for i in 1 2 3 4 5 6 7 8; do echo 'NVIDIA H100 80GB HBM3, 81559 MiB'; done\n");

	pg_gpu_info_init(&g);
	unsetenv("PERFGATE_GPU");
	ck_assert_int_eq(pg_gpu_resolve(&g, NULL, NULL, &err), 0);
	ck_assert_int_eq(g.count, 8);
	ck_assert_int_eq(g.detected, 8);
	ck_assert_str_eq(g.name, "NVIDIA H100 80GB HBM3");
	ck_assert_str_eq(g.key, "H100");
	ck_assert_str_eq(g.label, "8xH100");
	ck_assert_str_eq(g.source, "nvidia-smi");
	ck_assert_str_eq(g.gpu_type, "H100\nH100\nH100\nH100\nH100\nH100\nH100\nH100");
	ck_assert(g.memory_mib == 81559);

	/* precedence: flag > env > suite > detected; detection is kept */
	ck_assert_int_eq(pg_gpu_resolve(&g, NULL, "A100", &err), 0);
	ck_assert_str_eq(g.key, "A100");
	ck_assert_str_eq(g.source, "suite");
	setenv("PERFGATE_GPU", "4xNVIDIA_L40S", 1);
	ck_assert_int_eq(pg_gpu_resolve(&g, NULL, "A100", &err), 0);
	ck_assert_str_eq(g.key, "L40S");
	ck_assert_str_eq(g.label, "4xNVIDIA_L40S");
	ck_assert_str_eq(g.gpu_type, "L40S\nL40S\nL40S\nL40S");
	ck_assert_int_eq(g.count, 4);
	ck_assert_str_eq(g.source, "env");
	ck_assert_int_eq(pg_gpu_resolve(&g, "NVIDIA H200", "A100", &err), 0);
	ck_assert_str_eq(g.key, "H200");
	ck_assert_str_eq(g.label, "1xNVIDIA H200");
	ck_assert_str_eq(g.gpu_type, "H200");
	ck_assert_str_eq(g.source, "flag");
	ck_assert_int_eq(g.detected, 8);

	json_t *j = pg_gpu_info_json(&g);
	ck_assert_str_eq(json_string_value(json_object_get(j, "key")), "H200");
	json_decref(j);
	pg_gpu_info_release(&g);
	tu_rm_rf(dir);
	free(dir);
}
END_TEST

START_TEST(no_gpu_is_none_not_a_guess)
{
	struct pg_gpu_info g;
	struct pg_error err = PG_ERROR_INIT;
	char *dir = tu_mkdtemp();
	struct pg_buf env = PG_BUF_INIT;

	pg_buf_printf(&env, "%s", dir); /* no nvidia-smi anywhere */
	setenv("PATH", env.ptr, 1);
	unsetenv("PERFGATE_GPU");
	pg_gpu_info_init(&g);
	ck_assert_int_eq(pg_gpu_resolve(&g, NULL, NULL, &err), 0);
	ck_assert_int_eq(g.count, 0);
	ck_assert_int_eq(g.detected, -1);
	ck_assert_str_eq(g.key, "none");
	ck_assert_str_eq(g.label, "none");
	ck_assert_str_eq(g.gpu_type, "");
	ck_assert_ptr_null(g.name);
	ck_assert_str_eq(g.note, "'nvidia-smi' not found on PATH");
	pg_gpu_info_release(&g);

	/* a driver that is not loaded */
	char *d2 = fake_smi("#!/bin/sh\necho 'NVIDIA-SMI has failed because it couldn'\\''t "
			    "communicate with the NVIDIA driver.'\nexit 9\n");
	pg_gpu_info_init(&g);
	ck_assert_int_eq(pg_gpu_detect(&g, &err), 0);
	ck_assert_str_eq(g.key, "none");
	ck_assert_str_eq(g.note, "nvidia-smi exited with status 9");
	pg_gpu_info_release(&g);

	pg_buf_release(&env);
	tu_rm_rf(dir);
	tu_rm_rf(d2);
	free(dir);
	free(d2);
}
END_TEST

START_TEST(wait_for_gpu_memory)
{
	struct pg_error err = PG_ERROR_INIT;
	double waited = -1;
	/* memory falls below the threshold on the third query */
	char *dir = tu_mkdtemp();
	struct pg_buf script = PG_BUF_INIT;
	pg_buf_printf(&script,
		      "#!/bin/sh\nn=$(cat %s/n 2>/dev/null || echo 0); echo $((n+1)) > %s/n\n"
		      "if [ $n -lt 2 ]; then echo 500; echo 70000; else echo 500; echo 300; fi\n",
		      dir, dir);
	char *smi_dir = fake_smi(script.ptr);

	ck_assert_int_eq(pg_gpu_wait_idle(1000, 30, NULL, &waited, &err), 0);
	ck_assert_msg(waited >= 1.5 && waited < 10, "waited %.1f", waited);
	pg_buf_reset(&script);
	pg_buf_printf(&script, "%s/n", dir);
	tu_write_file(script.ptr, "0\n");
	ck_assert_int_eq(pg_gpu_wait_idle(100, 0.5, NULL, &waited, &err), PG_EINFRA);
	ck_assert_str_eq(err.msg,
			 "GPU memory still in use after 0.5s (threshold 100 MiB): GPU 0 uses "
			 "500 MiB, GPU 1 uses 70000 MiB");

	pg_buf_release(&script);
	tu_rm_rf(dir);
	tu_rm_rf(smi_dir);
	free(dir);
	free(smi_dir);
}
END_TEST

/* ---- git ---- */

static void sh(const char *dir, const char *cmd)
{
	struct pg_buf b = PG_BUF_INIT;
	pg_buf_printf(&b, "cd '%s' && %s >/dev/null 2>&1", dir, cmd);
	ck_assert_msg(system(b.ptr) == 0, "%s", b.ptr);
	pg_buf_release(&b);
}

START_TEST(git_commit_branch_dirty)
{
	struct pg_git_info g = PG_GIT_INFO_INIT;
	struct pg_error err = PG_ERROR_INIT;
	char *dir = tu_mkdtemp();
	struct pg_buf sub = PG_BUF_INIT, file = PG_BUF_INIT;

	git_libgit2_init();
	unsetenv("BUILDKITE_BRANCH");
	ck_assert_int_eq(pg_git_info_read(&g, dir, &err), PG_ENOTFOUND);

	sh(dir,
	   "git init -q -b perf-branch . && git config user.email t@e && git config user.name t");
	ck_assert_int_eq(pg_git_info_read(&g, dir, &err), 0);
	ck_assert_str_eq(g.commit, "");
	ck_assert_str_eq(g.branch, "perf-branch");
	pg_git_info_release(&g);

	pg_buf_printf(&file, "%s/a.txt", dir);
	tu_write_file(file.ptr, "one\n");
	sh(dir, "git add a.txt && git commit -q -m one");
	pg_buf_printf(&sub, "%s/results", dir);
	mkdir(sub.ptr, 0755);
	pg_buf_puts(&sub, "/x.json");
	tu_write_file(sub.ptr, "{}"); /* untracked: not dirty */
	ck_assert_int_eq(pg_git_info_read(&g, dir, &err), 0);
	ck_assert_int_eq(strlen(g.commit), 40);
	ck_assert(!g.dirty);
	pg_git_info_release(&g);

	tu_write_file(file.ptr, "two\n");
	ck_assert_int_eq(pg_git_info_read(&g, dir, &err), 0);
	ck_assert(g.dirty);
	json_t *j = pg_git_info_json(&g);
	ck_assert(json_is_true(json_object_get(j, "dirty")));
	json_decref(j);
	pg_git_info_release(&g);

	/* Buildkite checks out a detached commit and names the branch in env */
	sh(dir, "git checkout -q --detach HEAD");
	setenv("BUILDKITE_BRANCH", "feature/x", 1);
	ck_assert_int_eq(pg_git_info_read(&g, dir, &err), 0);
	ck_assert_str_eq(g.branch, "feature/x");
	pg_git_info_release(&g);

	pg_buf_release(&sub);
	pg_buf_release(&file);
	tu_rm_rf(dir);
	free(dir);
	git_libgit2_shutdown();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("proc");
	TCase *tc = tcase_create("lifecycle");

	atexit(cleanup_dirs);
	saved_path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, stop_takes_the_whole_group);
	tcase_add_test(tc, sigterm_ignored_means_sigkill_after_grace);
	tcase_add_test(tc, a_stopped_group_is_continued_and_stops_on_sigterm);
	tcase_add_test(tc, exit_is_seen_at_once);
	tcase_add_test(tc, wait_stops_on_flag_and_timeout);
	tcase_add_test(tc, missing_and_unrunnable_programs);
	tcase_add_test(tc, env_is_added_and_argv_is_literal);
	tcase_add_test(tc, guard_stops_the_group_when_perfgate_is_killed);
	tcase_add_test(tc, log_writer_masks_secrets_as_they_arrive);
	tcase_add_test(tc, log_writer_masks_multiline_secrets_and_patterns);
	tcase_add_test(tc, a_log_that_is_a_link_is_replaced_not_written_through);
	tcase_add_test(tc, log_writer_outlives_a_killed_perfgate);
	tcase_add_test(tc, yaml_to_json_of_an_endless_alias);
	tcase_add_test(tc, capture_output_and_timeout);
	tcase_add_test(tc, capture_output_is_capped);
	tcase_add_test(tc, call_in_a_child);
	suite_add_tcase(s, tc);

	tc = tcase_create("ready");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, ready_when_the_server_answers);
	tcase_add_test(tc, ready_fails_at_once_when_the_server_exits);
	tcase_add_test(tc, ready_times_out_and_cancels);
	tcase_add_test(tc, ready_cancels_during_a_probe);
	tcase_add_test(tc, free_ports_are_distinct_and_bindable);
	suite_add_tcase(s, tc);

	tc = tcase_create("gpu");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, NULL, restore_env);
	tcase_add_test(tc, gpus_from_nvidia_smi);
	tcase_add_test(tc, no_gpu_is_none_not_a_guess);
	tcase_add_test(tc, wait_for_gpu_memory);
	suite_add_tcase(s, tc);

	tc = tcase_create("git");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, NULL, restore_env);
	tcase_add_test(tc, git_commit_branch_dirty);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
