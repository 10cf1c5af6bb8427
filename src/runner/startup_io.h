#ifndef PERFGATE_RUNNER_STARTUP_IO_H
#define PERFGATE_RUNNER_STARTUP_IO_H

#include <signal.h>

struct pg_error;
struct pg_kvlist;

/*
 * The I/O of a startup test (the starts themselves are runner_io.c's, which
 * owns the server's lifecycle; the result's keys are runner/startup.h).
 *
 * A start is one fresh server process: spawned, polled until its ready
 * path answers 200 (runner/ready_io.h, timed from the spawn), then, with
 * first_token, sent one request of max_tokens 1 (timed from the spawn to
 * the whole answer: with one token, the first token), then stopped with
 * its whole process group. A cold start gets empty cache directories of
 * its own (VLLM_CACHE_ROOT, TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR
 * under one fresh directory, removed after it), as `vllm bench startup`
 * gives each cold iteration a temporary VLLM_CACHE_ROOT and a fresh
 * inductor cache; the warm-up and warm starts share one cache directory,
 * which the warm-up starts fill. Neither drops the OS page cache: the
 * model's files stay as warm as the machine left them.
 */

/*
 * POST body (JSON) to url, with the test's headers (may be NULL) and API
 * key, and wait for HTTP 200 and the whole answer.
 * 0 when it came; PG_EINFRA naming the status or the transfer error;
 * PG_ECANCEL when *stop became non-zero.
 */
int pg_startup_first_answer(const char *url, const char *body, const struct pg_kvlist *extra,
			    const char *api_key, double timeout, const volatile sig_atomic_t *stop,
			    struct pg_error *err);

/* Remove a directory tree (a start's caches); missing is fine. */
void pg_startup_remove_tree(const char *path);

#endif
