#ifndef PERFGATE_MOCKSERVER_AS_VLLM_IO_H
#define PERFGATE_MOCKSERVER_AS_VLLM_IO_H

#include <stdio.h>

#include "mockserver/as_vllm.h"
#include "mockserver/options.h"

struct pg_error;

/*
 * Play vLLM's command (mockserver/as_vllm.h) with the mock's engine as
 * cfg has it: `serve` runs the mock server until it is stopped, under the
 * model, host, port, context length and seed vLLM's flags name; `bench
 * latency` and `bench throughput` write their result to --output-json
 * (atomically, indent 4 as vLLM does) and print vLLM's summary lines to
 * out. The flags the mock does not simulate are listed on log (stderr,
 * the server's log when perfgate runs it).
 */
int pg_mock_as_vllm(struct pg_mock_server_config *cfg, const struct pg_vllm_call *call, FILE *out,
		    FILE *log, struct pg_error *err);

#endif
