/*
 * perfgate mock-server: an OpenAI-compatible simulated inference engine, for
 * the demo, the tests, and checking a pipeline without a GPU. The server is
 * mockserver/server_io.c; the timing model is mockserver/engine_model.c.
 */
#include "cli/cmd.h"
#include "cli/opt.h"
#include "mockserver/engine_vocab.h"
#include "base/error.h"
#include "mockserver/server_io.h"

#include <math.h>
#include <stdio.h>

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
	"Tokens are whitespace-separated words; see the README for the vocabulary,\n"
	"the fault options and the --timing-log format. Stops on SIGTERM/SIGINT,\n"
	"--max-seconds or --max-requests with exit code 0.";

int cmd_mock_server(int argc, char **argv)
{
	struct pg_mock_server_config cfg;
	struct pg_strv pos = PG_STRV_INIT;
	struct pg_error err = PG_ERROR_INIT;
	const char *host = NULL, *model = NULL, *port_file = NULL, *timing_log = NULL;
	long port = 8000, max_model_len = 8192, seed = 0, max_running = -1, tokens_per_message = 1;
	long max_requests = 0, startup_delay_ms = 0, exit_after_ms = -1, exit_code = 1;
	long vocab_size = 32000;
	double ttft_ms = 20, itl_ms = 10, prefill_us = NAN, itl_growth = NAN, eos_prob = 0;
	double fault_500 = 0, fault_disconnect = 0, fault_stall = 0, stall_ms = 0, max_seconds = 0;
	double fault_malformed = 0, fault_stream_error = 0;
	double slowdown = 0, session_offset = 0, slow_session = 0, slow_factor = 0.05, jitter = 0;
	bool allow_remote = false, fixed_timing = false, never_ready = false, log_requests = false;
	int rc;

	/* clang-format off */
	const struct pg_opt opts[] = {
		{ PG_OPT_STRING, "host", 0, &host, "ADDR", "address to listen on (default 127.0.0.1; loopback only unless --allow-remote)" },
		{ PG_OPT_LONG, "port", 'p', &port, "PORT", "port to listen on (default 8000; 0 picks a free one)" },
		{ PG_OPT_FLAG, "allow-remote", 0, &allow_remote, NULL, "allow a --host that is not a loopback address" },
		{ PG_OPT_STRING, "port-file", 0, &port_file, "PATH", "write the bound port to PATH (atomically) once listening" },
		{ PG_OPT_STRING, "model", 0, &model, "NAME", "served model name (default perfgate-mock)" },
		{ PG_OPT_LONG, "max-model-len", 0, &max_model_len, "N", "context length: prompt + max_tokens limit (default 8192)" },
		{ PG_OPT_LONG, "vocab-size", 0, &vocab_size, "N", "token ids are 0..N-1 (default 32000, at most 262144)" },
		{ PG_OPT_LONG, "seed", 0, &seed, "N", "seed for output tokens, EOS and faults (default 0)" },
		{ PG_OPT_FLAG, "fixed-timing", 0, &fixed_timing, NULL, "no engine model: TTFT and ITL exactly --ttft-ms and --itl-ms at any load" },
		{ PG_OPT_DOUBLE, "ttft-ms", 0, &ttft_ms, "MS", "time to first token (engine model: its base) (default 20)" },
		{ PG_OPT_DOUBLE, "itl-ms", 0, &itl_ms, "MS", "inter-token latency (engine model: of a lone sequence) (default 10)" },
		{ PG_OPT_DOUBLE, "prefill-us-per-token", 0, &prefill_us, "US", "engine model: TTFT added per prompt token (default 20)" },
		{ PG_OPT_DOUBLE, "itl-growth", 0, &itl_growth, "K", "engine model: ITL grows by K x itl per other running sequence (default 0.01)" },
		{ PG_OPT_LONG, "max-running", 0, &max_running, "N", "engine model: running sequences limit, the rest queue FIFO (default 256; 0 = none)" },
		{ PG_OPT_LONG, "tokens-per-message", 0, &tokens_per_message, "N", "tokens per SSE message after the first (default 1)" },
		{ PG_OPT_DOUBLE, "eos-prob", 0, &eos_prob, "P", "per-token EOS probability for requests without ignore_eos (default 0)" },
		{ PG_OPT_DOUBLE, "fault-500", 0, &fault_500, "P", "probability a generation request fails with HTTP 500" },
		{ PG_OPT_DOUBLE, "fault-disconnect", 0, &fault_disconnect, "P", "probability the connection drops mid-stream" },
		{ PG_OPT_DOUBLE, "fault-stall", 0, &fault_stall, "P", "probability the stream stalls before a random message" },
		{ PG_OPT_DOUBLE, "fault-malformed", 0, &fault_malformed, "P", "probability one chunk's JSON is cut short" },
		{ PG_OPT_DOUBLE, "fault-stream-error", 0, &fault_stream_error, "P", "probability the stream ends in an error event (vLLM's)" },
		{ PG_OPT_DOUBLE, "stall-ms", 0, &stall_ms, "MS", "how long a stall lasts (default 0: until the client gives up)" },
		{ PG_OPT_DOUBLE, "slowdown", 0, &slowdown, "F", "every duration (1 + F) x longer (F >= -0.5): an injected regression, or a job's offset (default 0)" },
		{ PG_OPT_DOUBLE, "session-offset", 0, &session_offset, "SD", "the session's own offset: durations x exp(SD x z), z drawn from --seed (default 0)" },
		{ PG_OPT_DOUBLE, "slow-session", 0, &slow_session, "P", "probability the session is a slow node, drawn from --seed (default 0)" },
		{ PG_OPT_DOUBLE, "slow-factor", 0, &slow_factor, "F", "a slow node's durations are (1 + F) x longer (default 0.05)" },
		{ PG_OPT_DOUBLE, "jitter", 0, &jitter, "SD", "each request's own scale: durations x exp(SD x z) (default 0)" },
		{ PG_OPT_DOUBLE, "max-seconds", 0, &max_seconds, "S", "exit 0 after S seconds" },
		{ PG_OPT_LONG, "max-requests", 0, &max_requests, "N", "after N generation requests stop accepting, finish them, exit 0" },
		{ PG_OPT_LONG, "startup-delay-ms", 0, &startup_delay_ms, "MS", "stay bound but not listening for MS (a slow-starting server)" },
		{ PG_OPT_FLAG, "never-ready", 0, &never_ready, NULL, "never start listening (a server that never becomes ready)" },
		{ PG_OPT_LONG, "exit-after-ms", 0, &exit_after_ms, "MS", "crash: exit at once MS after start, with --exit-code" },
		{ PG_OPT_LONG, "exit-code", 0, &exit_code, "CODE", "exit code of --exit-after-ms (default 1)" },
		{ PG_OPT_STRING, "timing-log", 0, &timing_log, "PATH", "at exit, write each request's true timing (JSON lines, CLOCK_MONOTONIC ns)" },
		{ PG_OPT_FLAG, "log-requests", 0, &log_requests, NULL, "log one line per generation request to stderr" },
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

	if (pg_cmd_parse(&help, argc, argv, &pos, 0, 0, "no arguments", &rc)) {
		pg_strv_release(&pos);
		return rc;
	}
	if (fixed_timing && (!isnan(prefill_us) || !isnan(itl_growth) || max_running >= 0)) {
		pg_error_set(&err, PG_ECONFIG, "--fixed-timing has no engine model: drop %s",
			     !isnan(prefill_us)   ? "--prefill-us-per-token"
			     : !isnan(itl_growth) ? "--itl-growth"
						  : "--max-running");
		goto fail;
	}

	pg_mock_server_config_default(&cfg);
	if (host)
		cfg.host = host;
	if (model)
		cfg.model = model;
	cfg.port = port;
	cfg.allow_remote = allow_remote;
	cfg.port_file = port_file;
	cfg.max_model_len = max_model_len;
	cfg.max_seconds = max_seconds;
	cfg.max_requests = max_requests;
	cfg.startup_delay_ms = startup_delay_ms;
	cfg.never_ready = never_ready;
	cfg.exit_after_ms = exit_after_ms;
	cfg.exit_code = (int)exit_code;
	cfg.timing_log = timing_log;
	cfg.log_requests = log_requests;

	cfg.engine.fixed_timing = fixed_timing;
	cfg.engine.ttft_ns = llround(ttft_ms * 1e6);
	cfg.engine.itl_ns = llround(itl_ms * 1e6);
	if (!isnan(prefill_us))
		cfg.engine.prefill_ns_per_token = llround(prefill_us * 1e3);
	if (!isnan(itl_growth))
		cfg.engine.itl_growth = itl_growth;
	if (max_running >= 0)
		cfg.engine.max_running = (uint32_t)max_running;
	cfg.engine.tokens_per_message = (uint32_t)tokens_per_message;
	cfg.engine.eos_prob = eos_prob;
	cfg.engine.fault_500 = fault_500;
	cfg.engine.fault_disconnect = fault_disconnect;
	cfg.engine.fault_stall = fault_stall;
	cfg.engine.fault_malformed = fault_malformed;
	cfg.engine.fault_stream_error = fault_stream_error;
	cfg.engine.stall_ns = llround(stall_ms * 1e6);
	cfg.engine.slowdown = slowdown;
	cfg.engine.session_sd = session_offset;
	cfg.engine.slow_session_prob = slow_session;
	cfg.engine.slow_session = slow_factor;
	cfg.engine.jitter = jitter;
	cfg.engine.seed = (uint64_t)seed;
	cfg.engine.vocab_size = (uint32_t)vocab_size;

	{
		/* clang-format off */
		const struct { const char *name; double v, max; const char *what; } ranges[] = {
			{ "eos-prob", eos_prob, 1, "a probability in [0, 1]" },
			{ "fault-500", fault_500, 1, "a probability in [0, 1]" },
			{ "fault-disconnect", fault_disconnect, 1, "a probability in [0, 1]" },
			{ "fault-stall", fault_stall, 1, "a probability in [0, 1]" },
			{ "fault-malformed", fault_malformed, 1, "a probability in [0, 1]" },
			{ "fault-stream-error", fault_stream_error, 1, "a probability in [0, 1]" },
			{ "ttft-ms", ttft_ms, 1e9, "a finite number >= 0" },
			{ "itl-ms", itl_ms, 1e9, "a finite number >= 0" },
			{ "prefill-us-per-token", isnan(prefill_us) ? 0 : prefill_us, 1e9, "a finite number >= 0" },
			{ "itl-growth", isnan(itl_growth) ? 0 : itl_growth, 1e9, "a finite number >= 0" },
			{ "stall-ms", stall_ms, 1e9, "a finite number >= 0" },
			{ "max-seconds", max_seconds, 1e9, "a finite number >= 0" },
			{ "session-offset", session_offset, 1, "a number in [0, 1]" },
			{ "slow-session", slow_session, 1, "a probability in [0, 1]" },
			{ "slow-factor", slow_factor, 100, "a number in [0, 100]" },
			{ "jitter", jitter, 1, "a number in [0, 1]" },
		};
		/* clang-format on */
		for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
			if (!(ranges[i].v >= 0 && ranges[i].v <= ranges[i].max)) {
				pg_error_set(&err, PG_ECONFIG, "--%s %g: expected %s",
					     ranges[i].name, ranges[i].v, ranges[i].what);
				goto fail;
			}
	}
	if (!(slowdown >= -0.5 && slowdown <= 100)) {
		/* below 0 a faster session: a job's offset goes both ways */
		pg_error_set(&err, PG_ECONFIG, "--slowdown %g: expected a number in [-0.5, 100]",
			     slowdown);
		goto fail;
	}
	if (fault_500 + fault_disconnect + fault_stall + fault_malformed + fault_stream_error > 1) {
		pg_error_set(&err, PG_ECONFIG,
			     "the --fault-* probabilities add up to %g: at most 1, please",
			     fault_500 + fault_disconnect + fault_stall + fault_malformed +
				     fault_stream_error);
		goto fail;
	}
	if (tokens_per_message < 1 || tokens_per_message > 65536) {
		pg_error_set(&err, PG_ECONFIG, "--tokens-per-message %ld: expected 1..65536",
			     tokens_per_message);
		goto fail;
	}
	if (max_model_len < 2 || max_model_len > 100000000) {
		pg_error_set(&err, PG_ECONFIG, "--max-model-len %ld: expected 2..100000000",
			     max_model_len);
		goto fail;
	}
	if (vocab_size < 1 || vocab_size > (long)PG_VOCAB_MAX) {
		pg_error_set(&err, PG_ECONFIG, "--vocab-size %ld: expected 1..%u", vocab_size,
			     PG_VOCAB_MAX);
		goto fail;
	}
	if (max_running > 10000000 || startup_delay_ms < 0 || exit_code < 0 || exit_code > 255 ||
	    seed < 0 || max_requests < 0) {
		pg_error_set(&err, PG_ECONFIG, "%s",
			     max_running > 10000000 ? "--max-running: expected at most 10000000"
			     : startup_delay_ms < 0 ? "--startup-delay-ms: expected a number >= 0"
			     : exit_code < 0 || exit_code > 255 ? "--exit-code: expected 0..255"
			     : seed < 0                         ? "--seed: expected a number >= 0"
					: "--max-requests: expected a number >= 0");
		goto fail;
	}

	pg_strv_release(&pos);
	if (pg_mock_server_run(&cfg, &err))
		return pg_cmd_fail("mock-server", &err);
	return PG_EXIT_OK;
fail:
	pg_strv_release(&pos);
	return pg_cmd_fail("mock-server", &err);
}
