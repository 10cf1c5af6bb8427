#ifndef PERFGATE_RUNNER_READY_IO_H
#define PERFGATE_RUNNER_READY_IO_H

#include <signal.h>

struct pg_error;
struct pg_proc;

/*
 * Wait until an inference server serves: GET url until it answers 200.
 *
 * vLLM's driver polls for 20 minutes and then carries on against a dead
 * server; here a server that exits while starting ends the wait at once
 * (its pidfd wakes us), a timeout is an error, and so is a cancel.
 */
struct pg_ready_opts {
	const char *url;                   /* base URL + ready path */
	double timeout;                    /* seconds */
	const char *api_key;               /* sent as a Bearer token when not NULL */
	struct pg_proc *proc;              /* the server; NULL for a remote one */
	const volatile sig_atomic_t *stop; /* non-zero: give up (PG_ECANCEL); may be NULL */
};

/*
 * Returns 0 when ready, with *waited the seconds it took; PG_EINFRA when the
 * server exited first ("server exited with status 1 after 0.4s while
 * starting") or did not answer 200 in time (the message names the last
 * answer: "connection refused", "HTTP 503"); PG_ECANCEL when stopped.
 */
int pg_ready_wait(const struct pg_ready_opts *o, double *waited, struct pg_error *err);

#endif
