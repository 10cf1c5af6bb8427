#ifndef PERFGATE_BASE_ERROR_H
#define PERFGATE_BASE_ERROR_H

#include "base/exitcode.h"

/*
 * Errors are returned, not printed. A function that can fail returns 0 on
 * success or a negative PG_E* code, and fills a caller-owned struct pg_error
 * (usually on the stack) with a one-line message. Only the command layer
 * (src/cli) prints it, and turns the code into an exit code with
 * pg_error_exit_code().
 *
 * Messages follow one convention: no capital first letter, no full stop, the
 * subject first ("suite.yml:12:5: serving[0].qps: expected a number or 'inf',
 * got 'fast'"). Secrets never go into a message.
 */
enum pg_errcode {
	PG_OK = 0,
	PG_ERR = -1,       /* anything else: I/O, system call, out of range */
	PG_ECONFIG = -2,   /* bad user input: flags, YAML, JSON, suite keys -> exit 2 */
	PG_EINFRA = -3,    /* the world failed: server, git, network -> exit 3 */
	PG_ENOTFOUND = -4, /* an expected "not there": missing baseline, file */
	PG_ECANCEL = -5,   /* stopped by a signal */
};

struct pg_error {
	int code;
	char msg[1024];
};

#define PG_ERROR_INIT                                                                              \
	{                                                                                          \
		0,                                                                                 \
		{                                                                                  \
			0                                                                          \
		}                                                                                  \
	}

/* Set err (if not NULL) and return code, so call sites can write
 * `return pg_error_set(err, PG_ECONFIG, "...", ...);`. */
int pg_error_set(struct pg_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prepend context to an existing message: "loading x: <old message>". */
int pg_error_prefix(struct pg_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

void pg_error_clear(struct pg_error *err);

/* PG_ECONFIG -> 2, PG_EINFRA/PG_ENOTFOUND/PG_ERR -> 3, PG_OK -> 0. */
int pg_error_exit_code(int code);

#endif
