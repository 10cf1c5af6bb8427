/*
 * perfgate mock-server: an OpenAI-compatible simulated inference engine, for
 * the demo, the tests, and checking a pipeline without a GPU. The server is
 * mockserver/server_io.c; the timing model is mockserver/engine_model.c.
 */
#include "cli/cmd.h"
#include "cli/opt.h"
#include "mockserver/options.h"
#include "base/error.h"
#include "mockserver/as_vllm_io.h"
#include "mockserver/proxy_io.h"
#include "mockserver/server_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char description[] =
	"Serves /health, /v1/models, /version, /tokenize, /detokenize, /v1/completions,\n"
	"/v1/chat/completions (streaming or not, vLLM's chunk shapes and usage) and\n"
	"/mock/stats on one epoll thread. Timing comes from a simple engine model:\n"
	"\n"
	"  TTFT = queueing + ttft + prefill-per-token x prompt tokens\n"
	"  ITL  = itl x (1 + itl-growth x other running sequences)\n"
	"\n"
	"with at most --max-running sequences running and the rest queued FIFO, or,\n"
	"with --fixed-timing, TTFT and ITL exactly as given whatever the load.\n"
	"Noise as shared GPU machines have it, reproducible by --seed: every duration\n"
	"times the session's scale, (1 + slowdown) x exp(session-offset x z), times\n"
	"(1 + slow-factor) on a slow node (probability --slow-session), and each\n"
	"request's own exp(jitter x z).\n"
	"Tokens are whitespace-separated words; docs/mock-server.md has the vocabulary,\n"
	"the fault options and the --timing-log format. Stops on SIGTERM/SIGINT,\n"
	"--max-seconds or --max-requests with exit code 0.\n"
	"\n"
	"A disaggregated deployment: --role prefill and --role decode workers (a decode\n"
	"worker's first token is due --kv-transfer-ms after a request arrives), and\n"
	"--role proxy --prefill URLS --decode URLS in front, which sends each request\n"
	"to a prefill worker with max_tokens 1, then to a decode worker (each round\n"
	"robin), relaying the decode worker's stream (docs/deployments.md).\n"
	"\n"
	"--as-vllm ends the mock's options: what follows is vLLM's command line, which\n"
	"the mock plays with the engine above, so vLLM's own test files run without a\n"
	"GPU (perfgate run --vllm 'perfgate mock-server --as-vllm'):\n"
	"  serve MODEL [flags]           serve MODEL on --port (--served-model-name,\n"
	"                                --host, --max-model-len, --seed honoured)\n"
	"  bench latency [flags]         write vllm bench latency's --output-json\n"
	"  bench throughput [flags]      write vllm bench throughput's --output-json\n"
	"The benchmarks run on the engine model's virtual clock: their figures are the\n"
	"model's, computed at once. Flags the mock does not simulate are listed on\n"
	"stderr.";

int cmd_mock_server(int argc, char **argv)
{
	struct pg_mock_server_config cfg;
	struct pg_mock_options o;
	struct pg_strv pos = PG_STRV_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_vllm_call call;
	bool as_vllm = false;
	int vllm_at = argc; /* where vLLM's command line starts */
	int rc;

	/* --as-vllm ends the mock's own options: vLLM's flags after it are
	 * not perfgate's (--port, --model, --seed mean vLLM's there) */
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--as-vllm")) {
			vllm_at = i + 1;
			break;
		}

	/* clang-format off */
	const struct pg_opt opts[] = {
		{ PG_OPT_STRING, "host", 0, &o.server.host, "ADDR", "address to listen on (default 127.0.0.1; loopback only unless --allow-remote)" },
		{ PG_OPT_LONG, "port", 'p', &o.server.port, "PORT", "port to listen on (default 8000; 0 picks a free one)" },
		{ PG_OPT_FLAG, "allow-remote", 0, &o.server.allow_remote, NULL, "allow a --host that is not a loopback address" },
		{ PG_OPT_STRING, "port-file", 0, &o.server.port_file, "PATH", "write the bound port to PATH (atomically) once listening" },
		{ PG_OPT_STRING, "model", 0, &o.server.model, "NAME", "served model name (default perfgate-mock)" },
		{ PG_OPT_LONG, "max-model-len", 0, &o.server.max_model_len, "N", "context length: prompt + max_tokens limit (default 8192)" },
		{ PG_OPT_LONG, "vocab-size", 0, &o.vocab_size, "N", "token ids are 0..N-1 (default 32000, at most 262144)" },
		{ PG_OPT_LONG, "seed", 0, &o.seed, "N", "seed for output tokens, EOS and faults (default 0)" },
		{ PG_OPT_FLAG, "fixed-timing", 0, &o.server.engine.fixed_timing, NULL, "no engine model: TTFT and ITL exactly --ttft-ms and --itl-ms at any load" },
		{ PG_OPT_DOUBLE, "ttft-ms", 0, &o.ttft_ms, "MS", "time to first token (engine model: its base) (default 20)" },
		{ PG_OPT_DOUBLE, "itl-ms", 0, &o.itl_ms, "MS", "inter-token latency (engine model: of a lone sequence) (default 10)" },
		{ PG_OPT_DOUBLE, "prefill-us-per-token", 0, &o.prefill_us, "US", "engine model: TTFT added per prompt token (default 20)" },
		{ PG_OPT_DOUBLE, "itl-growth", 0, &o.itl_growth, "K", "engine model: ITL grows by K x itl per other running sequence (default 0.01)" },
		{ PG_OPT_LONG, "max-running", 0, &o.max_running, "N", "engine model: running sequences limit, the rest queue FIFO (default 256; 0 = none)" },
		{ PG_OPT_LONG, "kv-cache-tokens", 0, &o.kv_cache_tokens, "N", "engine model: KV-cache capacity in tokens; a full cache queues new sequences and preempts the newest (default max-running x 8192; -1 = unlimited)" },
		{ PG_OPT_DOUBLE, "prefix-hit", 0, &o.prefix_hit, "F", "engine model: share of each prompt found in the prefix cache (default 0)" },
		{ PG_OPT_LONG, "prefix-cache-blocks", 0, &o.server.prefix_cache_blocks, "N", "engine model: a real prefix cache of N 16-token blocks (LRU); usage reports cached_tokens (default 0: off)" },
		{ PG_OPT_LONG, "tokens-per-message", 0, &o.tokens_per_message, "N", "tokens per SSE message after the first (default 1)" },
		{ PG_OPT_DOUBLE, "eos-prob", 0, &o.server.engine.eos_prob, "P", "per-token EOS probability for requests without ignore_eos (default 0)" },
		{ PG_OPT_DOUBLE, "fault-500", 0, &o.server.engine.fault_500, "P", "probability a generation request fails with HTTP 500" },
		{ PG_OPT_DOUBLE, "fault-disconnect", 0, &o.server.engine.fault_disconnect, "P", "probability the connection drops mid-stream" },
		{ PG_OPT_DOUBLE, "fault-stall", 0, &o.server.engine.fault_stall, "P", "probability the stream stalls before a random message" },
		{ PG_OPT_DOUBLE, "fault-malformed", 0, &o.server.engine.fault_malformed, "P", "probability one chunk's JSON is cut short" },
		{ PG_OPT_DOUBLE, "fault-stream-error", 0, &o.server.engine.fault_stream_error, "P", "probability the stream ends in an error event (vLLM's)" },
		{ PG_OPT_DOUBLE, "stall-ms", 0, &o.stall_ms, "MS", "how long a stall lasts (default 0: until the client gives up)" },
		{ PG_OPT_DOUBLE, "slowdown", 0, &o.server.engine.slowdown, "F", "every duration (1 + F) x longer (F >= -0.5): an injected regression, or a job's offset (default 0)" },
		{ PG_OPT_DOUBLE, "session-offset", 0, &o.server.engine.session_sd, "SD", "the session's own offset: durations x exp(SD x z), z drawn from --seed (default 0)" },
		{ PG_OPT_LONG, "session-seed", 0, &o.session_seed, "N", "seed of the session's draws (offset, slow node) instead of --seed: a new session per server, e.g. an A/B block's {block}" },
		{ PG_OPT_DOUBLE, "slow-session", 0, &o.server.engine.slow_session_prob, "P", "probability the session is a slow node, drawn from --seed (default 0)" },
		{ PG_OPT_DOUBLE, "slow-factor", 0, &o.server.engine.slow_session, "F", "a slow node's durations are (1 + F) x longer (default 0.05)" },
		{ PG_OPT_DOUBLE, "jitter", 0, &o.server.engine.jitter, "SD", "each request's own scale: durations x exp(SD x z) (default 0)" },
		{ PG_OPT_LONG, "cold-requests", 0, &o.cold_requests, "N", "a cold start: the first N generation requests after start are --cold-slowdown slower, as kernels compiled on first use make them (default 0)" },
		{ PG_OPT_DOUBLE, "cold-slowdown", 0, &o.server.engine.cold_slowdown, "F", "the cold requests' durations are (1 + F) x longer (default 1)" },
		{ PG_OPT_DOUBLE, "max-seconds", 0, &o.server.max_seconds, "S", "exit 0 after S seconds" },
		{ PG_OPT_LONG, "max-requests", 0, &o.server.max_requests, "N", "after N generation requests stop accepting, finish them, exit 0" },
		{ PG_OPT_LONG, "startup-delay-ms", 0, &o.server.startup_delay_ms, "MS", "stay bound but not listening for MS (a slow-starting server)" },
		{ PG_OPT_LONG, "startup-jitter-ms", 0, &o.server.startup_jitter_ms, "MS", "add a draw in [0, MS] from the session's seed to the startup delay (--session-seed {start}: one per start)" },
		{ PG_OPT_LONG, "warm-startup-ms", 0, &o.server.warm_startup_ms, "MS", "the startup delay instead when --cache-dir holds a previous start's marker (a warm start)" },
		{ PG_OPT_STRING, "cache-dir", 0, &o.server.cache_dir, "DIR", "the simulated compile cache for --warm-startup-ms (default $VLLM_CACHE_ROOT)" },
		{ PG_OPT_FLAG, "never-ready", 0, &o.server.never_ready, NULL, "never start listening (a server that never becomes ready)" },
		{ PG_OPT_LONG, "exit-after-ms", 0, &o.server.exit_after_ms, "MS", "crash: exit at once MS after start, with --exit-code" },
		{ PG_OPT_LONG, "exit-code", 0, &o.exit_code, "CODE", "exit code of --exit-after-ms (default 1)" },
		{ PG_OPT_STRING, "timing-log", 0, &o.server.timing_log, "PATH", "at exit, write each request's true timing (JSON lines, CLOCK_MONOTONIC ns)" },
		{ PG_OPT_FLAG, "log-requests", 0, &o.server.log_requests, NULL, "log one line per generation request to stderr" },
		{ PG_OPT_FLAG, "no-metrics", 0, &o.server.no_metrics, NULL, "serve no /metrics (an engine started without metrics)" },
		{ PG_OPT_STRING, "role", 0, &o.role, "ROLE", "aggregated (default), prefill, decode or proxy: a role of a disaggregated deployment (docs/deployments.md)" },
		{ PG_OPT_DOUBLE, "kv-transfer-ms", 0, &o.kv_transfer_ms, "MS", "decode role: the first token is due MS after a request arrives (the prompt's KV cache coming from a prefill worker) instead of --ttft-ms plus prefill (default 0)" },
		{ PG_OPT_STRING, "prefill", 0, &o.server.prefill_urls, "URLS", "proxy role: the prefill workers' base URLs, comma-separated" },
		{ PG_OPT_STRING, "decode", 0, &o.server.decode_urls, "URLS", "proxy role: the decode workers' base URLs, comma-separated" },
		{ PG_OPT_FLAG, "as-vllm", 0, &as_vllm, NULL, "the rest of the command line is vLLM's (serve MODEL ..., bench latency ..., bench throughput ...): the mock plays it (below)" },
		{ PG_OPT_LONG, "idle-timeout-ms", 0, &o.server.idle_timeout_ms, "MS", "close a connection that sends no whole request for MS after connecting or its last answer, with 408 when half-sent (default 30000; 0 = never)" },
		{ PG_OPT_END },
	};
	/* clang-format on */
	const struct pg_cmd_help help = {
		"mock-server",
		"[options]",
		"an OpenAI-compatible simulated inference engine for demos, tests and pipeline checks",
		description,
		opts,
	};

	pg_mock_options_default(&o);
	if (pg_cmd_parse(&help, vllm_at, argv, &pos, 0, 0, "no arguments", &rc)) {
		pg_strv_release(&pos);
		return rc;
	}
	pg_strv_release(&pos);
	if (!o.server.cache_dir && getenv("VLLM_CACHE_ROOT") && *getenv("VLLM_CACHE_ROOT"))
		o.server.cache_dir = getenv("VLLM_CACHE_ROOT");
	if (pg_mock_options_apply(&cfg, &o, &err))
		return pg_cmd_fail("mock-server", &err);
	cfg.log = stderr;
	if (as_vllm) {
		if (pg_vllm_call_parse(&call, (size_t)(argc - vllm_at), argv + vllm_at, &err))
			return pg_cmd_fail("mock-server", &err);
		rc = pg_mock_as_vllm(&cfg, &call, stdout, stderr, &err)
			     ? pg_cmd_fail("mock-server", &err)
			     : PG_EXIT_OK;
		pg_vllm_call_release(&call);
		return rc;
	}
	if (cfg.role == PG_MOCK_PROXY) {
		if (pg_mock_proxy_run(&cfg, &err))
			return pg_cmd_fail("mock-server", &err);
		return PG_EXIT_OK;
	}
	if (pg_mock_server_run(&cfg, &err))
		return pg_cmd_fail("mock-server", &err);
	return PG_EXIT_OK;
}
