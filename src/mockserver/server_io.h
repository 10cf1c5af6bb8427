#ifndef PERFGATE_MOCKSERVER_SERVER_IO_H
#define PERFGATE_MOCKSERVER_SERVER_IO_H

#include <stdbool.h>
#include <stdio.h>

#include "mockserver/engine_model.h"

struct pg_error;

/* Long enough for any client between two requests of a run (uvicorn,
 * vLLM's server, closes idle keep-alives after 5 s), short enough that
 * thousands of half-sent requests do not stay open. */
#define PG_MOCK_IDLE_TIMEOUT_MS 30000

/*
 * `perfgate mock-server`: an OpenAI-compatible simulated inference engine on
 * one epoll loop (non-blocking sockets, HTTP/1.1 keep-alive, chunked SSE),
 * timed by mockserver/engine_model with CLOCK_MONOTONIC deadlines.
 *
 * Endpoints: GET /health, GET /v1/models, GET /version, POST /tokenize,
 * POST /detokenize, POST /v1/completions, POST /v1/chat/completions,
 * GET /mock/stats.
 */
struct pg_mock_server_config {
	const char *host;      /* default "127.0.0.1" */
	long port;             /* 0: any free port */
	bool allow_remote;     /* else only loopback addresses */
	const char *port_file; /* written atomically once listening */
	const char *model;
	long max_model_len;
	struct pg_engine_params engine;
	double max_seconds;    /* <= 0: no limit */
	long max_requests;     /* generation requests; <= 0: no limit */
	long startup_delay_ms; /* bound but not listening meanwhile */
	bool never_ready;      /* never listen */
	long exit_after_ms;    /* < 0: never; else _exit(exit_code) then */
	int exit_code;
	const char *timing_log; /* JSON lines written at exit, or NULL */
	bool log_requests;      /* one line per generation request */
	long idle_timeout_ms;   /* close a connection without a whole request this long
				   after it opened or was last answered (408 to a
				   half-sent one); <= 0: never */
	FILE *log;              /* startup/shutdown lines; NULL: silent */
};

void pg_mock_server_config_default(struct pg_mock_server_config *cfg);

/*
 * Run until SIGTERM/SIGINT, --max-seconds or --max-requests, then close
 * every connection, write the timing log and return 0. Fails (PG_ECONFIG
 * for a non-loopback host without allow_remote, PG_EINFRA when the address
 * cannot be bound) before serving anything.
 */
int pg_mock_server_run(const struct pg_mock_server_config *cfg, struct pg_error *err);

#endif
