#ifndef PERFGATE_MOCKSERVER_PROXY_IO_H
#define PERFGATE_MOCKSERVER_PROXY_IO_H

#include "mockserver/options.h"

struct pg_error;

/*
 * `perfgate mock-server --role proxy`: the front of a disaggregated
 * deployment (docs/deployments.md), as vLLM's P/D proxies work. Each
 * generation request goes to a prefill worker (round robin) as a
 * max_tokens 1, unstreamed request; when that answers 200 the original
 * request goes to a decode worker (round robin), whose answer -- the SSE
 * stream, or the JSON -- is relayed to the client as it arrives. A
 * prefill's error is the client's answer. GET /health is answered here;
 * any other GET is the first decode worker's answer.
 *
 * One process per client connection (forked, in the proxy's process
 * group, killed with the proxy): blocking sockets and libcurl, nothing
 * shared but the round-robin counter. Runs until SIGTERM/SIGINT, then
 * returns 0; PG_EINFRA when the address cannot be bound.
 */
int pg_mock_proxy_run(const struct pg_mock_server_config *cfg, struct pg_error *err);

#endif
