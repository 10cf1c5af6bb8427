#ifndef PERFGATE_MOCKSERVER_SERVER_IO_H
#define PERFGATE_MOCKSERVER_SERVER_IO_H

#include <stdbool.h>
#include <stdio.h>

#include "mockserver/options.h"

struct pg_error;

/*
 * The listening socket of a mock role: --host and --port resolved, a host
 * that is not loopback refused unless --allow-remote, bound (not yet
 * listening), close-on-exec plus sock_flags. *port gets the port bound
 * (port 0 picks one); port may be NULL.
 */
int pg_mock_bind(const struct pg_mock_server_config *cfg, int sock_flags, int *fd, long *port,
		 struct pg_error *err);

/*
 * `perfgate mock-server`: an OpenAI-compatible simulated inference engine on
 * one epoll loop (non-blocking sockets, HTTP/1.1 keep-alive, chunked SSE),
 * timed by mockserver/engine_model with CLOCK_MONOTONIC deadlines.
 *
 * Endpoints: GET /health, GET /v1/models, GET /version, POST /tokenize,
 * POST /detokenize, POST /v1/completions, POST /v1/chat/completions,
 * GET /mock/stats, GET /metrics. Its configuration: mockserver/options.h.
 *
 * Run until SIGTERM/SIGINT, --max-seconds or --max-requests, then close
 * every connection, write the timing log and return 0. Fails (PG_ECONFIG
 * for a non-loopback host without allow_remote, PG_EINFRA when the address
 * cannot be bound) before serving anything.
 */
int pg_mock_server_run(const struct pg_mock_server_config *cfg, struct pg_error *err);

#endif
