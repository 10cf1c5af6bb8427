#include "mockserver/options.h"

#include "base/error.h"
#include "mockserver/engine_vocab.h"

#include <math.h>
#include <string.h>

void pg_mock_server_config_default(struct pg_mock_server_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->host = "127.0.0.1";
	cfg->port = 8000;
	cfg->model = "perfgate-mock";
	cfg->max_model_len = 8192;
	pg_engine_params_default(&cfg->engine);
	cfg->exit_after_ms = -1;
	cfg->warm_startup_ms = -1;
	cfg->exit_code = 1;
	cfg->idle_timeout_ms = PG_MOCK_IDLE_TIMEOUT_MS;
}

void pg_mock_options_default(struct pg_mock_options *o)
{
	const struct pg_engine_params *e = &o->server.engine;

	memset(o, 0, sizeof(*o));
	pg_mock_server_config_default(&o->server);
	o->vocab_size = e->vocab_size;
	o->seed = (long)e->seed;
	o->session_seed = -1;
	o->tokens_per_message = e->tokens_per_message;
	o->exit_code = o->server.exit_code;
	o->max_running = -1;
	o->ttft_ms = (double)e->ttft_ns / 1e6;
	o->itl_ms = (double)e->itl_ns / 1e6;
	o->stall_ms = (double)e->stall_ns / 1e6;
	o->prefill_us = NAN;
	o->itl_growth = NAN;
	o->kv_transfer_ms = NAN;
}

/* A comma-separated list of http:// base URLs, none empty. */
static bool valid_urls(const char *s)
{
	if (!s || !*s)
		return false;
	for (;;) {
		size_t n = strcspn(s, ",");
		if (n <= 7 || strncmp(s, "http://", 7))
			return false;
		if (!s[n])
			return true;
		s += n + 1;
	}
}

/* --role and what goes with it. */
static int apply_role(struct pg_mock_server_config *cfg, const struct pg_mock_options *o,
		      struct pg_error *err)
{
	static const char *const names[] = { "aggregated", "prefill", "decode", "proxy" };
	const char *role = o->role ? o->role : "aggregated";
	size_t i = 0;

	while (i < 4 && strcmp(role, names[i]))
		i++;
	if (i == 4)
		return pg_error_set(err, PG_ECONFIG,
				    "--role %s: expected aggregated, prefill, decode or proxy",
				    role);
	cfg->role = (enum pg_mock_role)i;
	if (!isnan(o->kv_transfer_ms) && cfg->role != PG_MOCK_DECODE)
		return pg_error_set(err, PG_ECONFIG,
				    "--kv-transfer-ms is the decode role's wait for the prompt's "
				    "KV cache: add --role decode");
	if (!isnan(o->kv_transfer_ms) && !(o->kv_transfer_ms >= 0 && o->kv_transfer_ms <= 1e9))
		return pg_error_set(err, PG_ECONFIG, "--kv-transfer-ms %g: expected %s",
				    o->kv_transfer_ms, "a finite number >= 0");
	if ((o->server.prefill_urls || o->server.decode_urls) && cfg->role != PG_MOCK_PROXY)
		return pg_error_set(err, PG_ECONFIG,
				    "--%s names the workers a proxy forwards to: add --role proxy",
				    o->server.prefill_urls ? "prefill" : "decode");
	if (cfg->role == PG_MOCK_PROXY) {
		if (!valid_urls(o->server.prefill_urls))
			return pg_error_set(
				err, PG_ECONFIG,
				"--role proxy: --prefill expects the prefill workers' "
				"base URLs, comma-separated (http://127.0.0.1:8100,...)");
		if (!valid_urls(o->server.decode_urls))
			return pg_error_set(
				err, PG_ECONFIG,
				"--role proxy: --decode expects the decode workers' "
				"base URLs, comma-separated (http://127.0.0.1:8200,...)");
	}
	if (cfg->role == PG_MOCK_DECODE) {
		/* no prefill here: the first token (the prefill worker's) is
		 * due once the KV cache has arrived */
		cfg->engine.ttft_ns = llround((isnan(o->kv_transfer_ms) ? 0 : o->kv_transfer_ms) *
					      1e6);
		cfg->engine.prefill_ns_per_token = 0;
	}
	return 0;
}

/* The first option out of its range, as a one-line error. */
static int check_ranges(const struct pg_mock_options *o, struct pg_error *err)
{
	static const char probability[] = "a probability in [0, 1]";
	static const char duration[] = "a finite number >= 0";
	const struct pg_mock_server_config *c = &o->server;
	const struct pg_engine_params *e = &c->engine;
	/* clang-format off */
	const struct { const char *name; double v, max; const char *what; } ranges[] = {
		{ "eos-prob", e->eos_prob, 1, probability },
		{ "prefix-hit", o->prefix_hit, 1, "a share in [0, 1]" },
		{ "fault-500", e->fault_500, 1, probability },
		{ "fault-disconnect", e->fault_disconnect, 1, probability },
		{ "fault-stall", e->fault_stall, 1, probability },
		{ "fault-malformed", e->fault_malformed, 1, probability },
		{ "fault-stream-error", e->fault_stream_error, 1, probability },
		{ "ttft-ms", o->ttft_ms, 1e9, duration },
		{ "itl-ms", o->itl_ms, 1e9, duration },
		{ "prefill-us-per-token", isnan(o->prefill_us) ? 0 : o->prefill_us, 1e9, duration },
		{ "itl-growth", isnan(o->itl_growth) ? 0 : o->itl_growth, 1e9, duration },
		{ "stall-ms", o->stall_ms, 1e9, duration },
		{ "max-seconds", c->max_seconds, 1e9, duration },
		{ "session-offset", e->session_sd, 1, "a number in [0, 1]" },
		{ "slow-session", e->slow_session_prob, 1, probability },
		{ "slow-factor", e->slow_session, 100, "a number in [0, 100]" },
		{ "jitter", e->jitter, 1, "a number in [0, 1]" },
		{ "cold-slowdown", e->cold_slowdown, 100, "a number in [0, 100]" },
	};
	/* clang-format on */
	double faults = e->fault_500 + e->fault_disconnect + e->fault_stall + e->fault_malformed +
			e->fault_stream_error;

	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
		if (!(ranges[i].v >= 0 && ranges[i].v <= ranges[i].max))
			return pg_error_set(err, PG_ECONFIG, "--%s %g: expected %s", ranges[i].name,
					    ranges[i].v, ranges[i].what);
	if (!(e->slowdown >= -0.5 && e->slowdown <= 100))
		/* below 0 a faster session: a job's offset goes both ways */
		return pg_error_set(err, PG_ECONFIG,
				    "--slowdown %g: expected a number in [-0.5, 100]", e->slowdown);
	if (faults > 1)
		return pg_error_set(err, PG_ECONFIG,
				    "the --fault-* probabilities add up to %g: at most 1, please",
				    faults);
	if (o->tokens_per_message < 1 || o->tokens_per_message > 65536)
		return pg_error_set(err, PG_ECONFIG, "--tokens-per-message %ld: expected 1..65536",
				    o->tokens_per_message);
	if (c->max_model_len < 2 || c->max_model_len > 100000000)
		return pg_error_set(err, PG_ECONFIG, "--max-model-len %ld: expected 2..100000000",
				    c->max_model_len);
	if (o->vocab_size < 1 || o->vocab_size > (long)PG_VOCAB_MAX)
		return pg_error_set(err, PG_ECONFIG, "--vocab-size %ld: expected 1..%u",
				    o->vocab_size, PG_VOCAB_MAX);
	if (o->kv_cache_tokens < -1)
		return pg_error_set(err, PG_ECONFIG,
				    "--kv-cache-tokens %ld: expected -1 (unlimited) or more",
				    o->kv_cache_tokens);
	if (o->max_running > 10000000)
		return pg_error_set(err, PG_ECONFIG, "--max-running: expected at most 10000000");
	if (c->startup_delay_ms < 0)
		return pg_error_set(err, PG_ECONFIG, "--startup-delay-ms: expected a number >= 0");
	if (c->startup_jitter_ms < 0)
		return pg_error_set(err, PG_ECONFIG, "--startup-jitter-ms: expected a number >= 0");
	if (c->warm_startup_ms < -1)
		return pg_error_set(err, PG_ECONFIG, "--warm-startup-ms: expected a number >= 0");
	if (o->exit_code < 0 || o->exit_code > 255)
		return pg_error_set(err, PG_ECONFIG, "--exit-code: expected 0..255");
	if (o->seed < 0)
		return pg_error_set(err, PG_ECONFIG, "--seed: expected a number >= 0");
	if (o->session_seed < -1)
		return pg_error_set(err, PG_ECONFIG, "--session-seed: expected a number >= 0");
	if (o->cold_requests < 0)
		return pg_error_set(err, PG_ECONFIG, "--cold-requests: expected a number >= 0");
	if (c->max_requests < 0)
		return pg_error_set(err, PG_ECONFIG, "--max-requests: expected a number >= 0");
	if (c->idle_timeout_ms < 0)
		return pg_error_set(err, PG_ECONFIG, "--idle-timeout-ms: expected a number >= 0");
	return 0;
}

int pg_mock_options_apply(struct pg_mock_server_config *cfg, const struct pg_mock_options *o,
			  struct pg_error *err)
{
	struct pg_engine_params *e = &cfg->engine;
	int rc;

	if (o->server.engine.fixed_timing &&
	    (!isnan(o->prefill_us) || !isnan(o->itl_growth) || o->max_running >= 0 ||
	     o->kv_cache_tokens || o->prefix_hit || o->server.prefix_cache_blocks))
		return pg_error_set(err, PG_ECONFIG, "--fixed-timing has no engine model: drop %s",
				    !isnan(o->prefill_us)   ? "--prefill-us-per-token"
				    : !isnan(o->itl_growth) ? "--itl-growth"
				    : o->max_running >= 0   ? "--max-running"
				    : o->kv_cache_tokens    ? "--kv-cache-tokens"
				    : o->prefix_hit         ? "--prefix-hit"
							    : "--prefix-cache-blocks");
	if (o->prefix_hit && o->server.prefix_cache_blocks)
		return pg_error_set(err, PG_ECONFIG,
				    "--prefix-hit and --prefix-cache-blocks are two models of the "
				    "prefix cache: give one");
	/* 16 million blocks of 16 tokens: 256M tokens, more than any GPU's KV
	 * cache; beyond, the table's sizing would overflow */
	if (o->server.prefix_cache_blocks < 0 || o->server.prefix_cache_blocks > (1L << 24))
		return pg_error_set(err, PG_ECONFIG,
				    "--prefix-cache-blocks: expected a number from 0 to 16777216");
	if ((rc = check_ranges(o, err)))
		return rc;

	*cfg = o->server;
	cfg->exit_code = (int)o->exit_code;
	e->ttft_ns = llround(o->ttft_ms * 1e6);
	e->itl_ns = llround(o->itl_ms * 1e6);
	e->stall_ns = llround(o->stall_ms * 1e6);
	if (!isnan(o->prefill_us))
		e->prefill_ns_per_token = llround(o->prefill_us * 1e3);
	if (!isnan(o->itl_growth))
		e->itl_growth = o->itl_growth;
	if (o->max_running >= 0)
		e->max_running = (uint32_t)o->max_running;
	e->tokens_per_message = (uint32_t)o->tokens_per_message;
	e->kv_cache_tokens = o->kv_cache_tokens;
	e->prefix_hit = o->prefix_hit;
	e->seed = (uint64_t)o->seed;
	e->session_seed_set = o->session_seed >= 0;
	e->session_seed = e->session_seed_set ? (uint64_t)o->session_seed : 0;
	e->vocab_size = (uint32_t)o->vocab_size;
	e->cold_requests = (uint64_t)o->cold_requests;
	return apply_role(cfg, o, err);
}

long pg_mock_startup_ms(const struct pg_mock_server_config *cfg, bool warm)
{
	const struct pg_engine_params *e = &cfg->engine;
	uint64_t seed = e->session_seed_set ? e->session_seed : e->seed;
	long ms = warm && cfg->warm_startup_ms >= 0 ? cfg->warm_startup_ms : cfg->startup_delay_ms;

	if (cfg->startup_jitter_ms > 0)
		ms += (long)(pg_engine_mix64(seed ^ 0x7374617274757000ULL) %
			     ((uint64_t)cfg->startup_jitter_ms + 1));
	return ms;
}
