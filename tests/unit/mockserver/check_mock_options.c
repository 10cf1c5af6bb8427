/* The mock server's options: defaults, units, and each one-line error. */
#include "testutil.h"

#include "base/error.h"
#include "mockserver/options.h"

#include <math.h>
#include <string.h>

START_TEST(defaults_map_onto_the_default_configuration)
{
	struct pg_mock_server_config want, got;
	struct pg_mock_options o;
	struct pg_error err = PG_ERROR_INIT;

	pg_mock_server_config_default(&want);
	pg_mock_options_default(&o);
	ck_assert_int_eq(pg_mock_options_apply(&got, &o, &err), 0);
	ck_assert_str_eq(got.host, "127.0.0.1");
	ck_assert_str_eq(got.model, "perfgate-mock");
	ck_assert_int_eq(got.port, 8000);
	ck_assert_ptr_null(got.log);
	/* every field, the engine's included, as the defaults say */
	ck_assert(memcmp(&want.engine, &got.engine, sizeof(want.engine)) == 0);
	ck_assert_int_eq(got.max_model_len, want.max_model_len);
	ck_assert_int_eq(got.exit_after_ms, -1);
	ck_assert_int_eq(got.exit_code, 1);
	ck_assert_int_eq(got.engine.ttft_ns, 20 * 1000 * 1000);
	ck_assert_int_eq(got.engine.max_running, 256);
	ck_assert_int_eq(got.idle_timeout_ms, 30000);
}
END_TEST

START_TEST(options_arrive_in_the_engines_units)
{
	struct pg_mock_server_config cfg;
	struct pg_mock_options o;
	struct pg_error err = PG_ERROR_INIT;

	pg_mock_options_default(&o);
	o.server.host = "::1";
	o.server.model = "m";
	o.server.port = 0;
	o.ttft_ms = 1.5;
	o.itl_ms = 0.25;
	o.prefill_us = 2.5;
	o.itl_growth = 0;
	o.max_running = 0;
	o.stall_ms = 100;
	o.server.engine.fault_500 = 0.5;
	o.server.engine.fault_stall = 0.5;
	o.seed = 7;
	o.vocab_size = 10;
	o.exit_code = 255;
	ck_assert_int_eq(pg_mock_options_apply(&cfg, &o, &err), 0);
	ck_assert_str_eq(cfg.host, "::1");
	ck_assert_str_eq(cfg.model, "m");
	ck_assert_int_eq(cfg.port, 0);
	ck_assert_int_eq(cfg.engine.ttft_ns, 1500000);
	ck_assert_int_eq(cfg.engine.itl_ns, 250000);
	ck_assert_int_eq(cfg.engine.prefill_ns_per_token, 2500);
	ck_assert(cfg.engine.itl_growth == 0);
	ck_assert_uint_eq(cfg.engine.max_running, 0);
	ck_assert_int_eq(cfg.engine.stall_ns, 100000000);
	ck_assert(cfg.engine.fault_500 == 0.5 && cfg.engine.fault_stall == 0.5);
	ck_assert_uint_eq(cfg.engine.seed, 7);
	ck_assert_uint_eq(cfg.engine.vocab_size, 10);
	ck_assert_int_eq(cfg.exit_code, 255);

	/* fixed timing keeps the model's knobs at their defaults */
	pg_mock_options_default(&o);
	o.server.engine.fixed_timing = true;
	o.ttft_ms = 5;
	ck_assert_int_eq(pg_mock_options_apply(&cfg, &o, &err), 0);
	ck_assert(cfg.engine.fixed_timing);
	ck_assert_int_eq(cfg.engine.ttft_ns, 5000000);
}
END_TEST

/* One option set wrong: the message the command prints. */
struct bad {
	void (*set)(struct pg_mock_options *o);
	const char *msg;
};

static void fixed_prefill(struct pg_mock_options *o)
{
	o->server.engine.fixed_timing = true;
	o->prefill_us = 1;
}
static void fixed_growth(struct pg_mock_options *o)
{
	o->server.engine.fixed_timing = true;
	o->itl_growth = 0.1;
}
static void fixed_running(struct pg_mock_options *o)
{
	o->server.engine.fixed_timing = true;
	o->max_running = 4;
}
static void eos_over_one(struct pg_mock_options *o)
{
	o->server.engine.eos_prob = 1.5;
}
static void fault_nan(struct pg_mock_options *o)
{
	o->server.engine.fault_stream_error = NAN;
}
static void ttft_negative(struct pg_mock_options *o)
{
	o->ttft_ms = -1;
}
static void itl_infinite(struct pg_mock_options *o)
{
	o->itl_ms = INFINITY;
}
static void faults_sum(struct pg_mock_options *o)
{
	o->server.engine.fault_500 = 0.5;
	o->server.engine.fault_disconnect = 0.25;
	o->server.engine.fault_malformed = 0.5;
}
static void tokens_zero(struct pg_mock_options *o)
{
	o->tokens_per_message = 0;
}
static void model_len_one(struct pg_mock_options *o)
{
	o->server.max_model_len = 1;
}
static void vocab_huge(struct pg_mock_options *o)
{
	o->vocab_size = 1000000;
}
static void running_huge(struct pg_mock_options *o)
{
	o->max_running = 20000000;
}
static void delay_negative(struct pg_mock_options *o)
{
	o->server.startup_delay_ms = -5;
}
static void jitter_negative(struct pg_mock_options *o)
{
	o->server.startup_jitter_ms = -1;
}
static void warm_negative(struct pg_mock_options *o)
{
	o->server.warm_startup_ms = -2;
}
static void exit_code_256(struct pg_mock_options *o)
{
	o->exit_code = 256;
}
static void seed_negative(struct pg_mock_options *o)
{
	o->seed = -1;
}
static void requests_negative(struct pg_mock_options *o)
{
	o->server.max_requests = -1;
}
static void idle_negative(struct pg_mock_options *o)
{
	o->server.idle_timeout_ms = -1;
}
static void fixed_prefix_cache(struct pg_mock_options *o)
{
	o->server.engine.fixed_timing = true;
	o->server.prefix_cache_blocks = 100;
}
static void two_prefix_models(struct pg_mock_options *o)
{
	o->prefix_hit = 0.5;
	o->server.prefix_cache_blocks = 100;
}
static void prefix_cache_negative(struct pg_mock_options *o)
{
	o->server.prefix_cache_blocks = -1;
}
static void prefix_cache_huge(struct pg_mock_options *o)
{
	o->server.prefix_cache_blocks = 1L << 40;
}

START_TEST(each_mistake_is_one_line_naming_the_option)
{
	/* clang-format off */
	static const struct bad cases[] = {
		{ fixed_prefill, "--fixed-timing has no engine model: drop --prefill-us-per-token" },
		{ fixed_growth, "--fixed-timing has no engine model: drop --itl-growth" },
		{ fixed_running, "--fixed-timing has no engine model: drop --max-running" },
		{ eos_over_one, "--eos-prob 1.5: expected a probability in [0, 1]" },
		{ fault_nan, "--fault-stream-error nan: expected a probability in [0, 1]" },
		{ ttft_negative, "--ttft-ms -1: expected a finite number >= 0" },
		{ itl_infinite, "--itl-ms inf: expected a finite number >= 0" },
		{ faults_sum, "the --fault-* probabilities add up to 1.25: at most 1, please" },
		{ tokens_zero, "--tokens-per-message 0: expected 1..65536" },
		{ model_len_one, "--max-model-len 1: expected 2..100000000" },
		{ vocab_huge, "--vocab-size 1000000: expected 1..262144" },
		{ running_huge, "--max-running: expected at most 10000000" },
		{ delay_negative, "--startup-delay-ms: expected a number >= 0" },
		{ jitter_negative, "--startup-jitter-ms: expected a number >= 0" },
		{ warm_negative, "--warm-startup-ms: expected a number >= 0" },
		{ exit_code_256, "--exit-code: expected 0..255" },
		{ seed_negative, "--seed: expected a number >= 0" },
		{ requests_negative, "--max-requests: expected a number >= 0" },
		{ idle_negative, "--idle-timeout-ms: expected a number >= 0" },
		{ fixed_prefix_cache, "--fixed-timing has no engine model: drop --prefix-cache-blocks" },
		{ two_prefix_models, "--prefix-hit and --prefix-cache-blocks are two models of the prefix cache: give one" },
		{ prefix_cache_negative, "--prefix-cache-blocks: expected a number from 0 to 16777216" },
		{ prefix_cache_huge, "--prefix-cache-blocks: expected a number from 0 to 16777216" },
	};
	/* clang-format on */

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pg_mock_server_config cfg;
		struct pg_mock_options o;
		struct pg_error err = PG_ERROR_INIT;

		pg_mock_options_default(&o);
		cases[i].set(&o);
		ck_assert_int_eq(pg_mock_options_apply(&cfg, &o, &err), PG_ECONFIG);
		ck_assert_str_eq(err.msg, cases[i].msg);
	}
}
END_TEST

/* A simulated startup: the cold delay, or the warm one when the cache
 * holds a previous start's marker and --warm-startup-ms was given, plus a
 * jitter in [0, J] that the session's seed decides (the same seed, the
 * same start; --session-seed {start}, a new one per start). */
START_TEST(startup_delay_cold_warm_and_jitter)
{
	struct pg_mock_server_config cfg;
	bool differ = false;
	long first = -1;

	pg_mock_server_config_default(&cfg);
	cfg.startup_delay_ms = 100;
	ck_assert_int_eq(pg_mock_startup_ms(&cfg, false), 100);
	ck_assert_int_eq(pg_mock_startup_ms(&cfg, true), 100); /* no warm delay given */
	cfg.warm_startup_ms = 30;
	ck_assert_int_eq(pg_mock_startup_ms(&cfg, true), 30);
	ck_assert_int_eq(pg_mock_startup_ms(&cfg, false), 100);
	cfg.startup_jitter_ms = 20;
	cfg.engine.session_seed_set = true;
	for (uint64_t seed = 1; seed <= 50; seed++) {
		long ms;
		cfg.engine.session_seed = seed;
		ms = pg_mock_startup_ms(&cfg, false);
		ck_assert_int_ge(ms, 100);
		ck_assert_int_le(ms, 120);
		ck_assert_int_eq(ms, pg_mock_startup_ms(&cfg, false));
		if (first < 0)
			first = ms;
		differ = differ || ms != first;
	}
	ck_assert(differ);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mock_options");
	TCase *tc = tcase_create("mock_options");

	tcase_add_test(tc, defaults_map_onto_the_default_configuration);
	tcase_add_test(tc, options_arrive_in_the_engines_units);
	tcase_add_test(tc, each_mistake_is_one_line_naming_the_option);
	tcase_add_test(tc, startup_delay_cold_warm_and_jitter);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
