#ifndef PERFGATE_MOCKSERVER_OPTIONS_H
#define PERFGATE_MOCKSERVER_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>

#include "mockserver/engine_model.h"

struct pg_error;

/*
 * The mock server's configuration (what mockserver/server_io.c runs), and
 * the options of `perfgate mock-server` that fill it: the command parses
 * its table into struct pg_mock_options, pg_mock_options_apply checks
 * them and maps them onto the configuration. Pure, so both are tested
 * without a server.
 */
/* What one mock process plays in a deployment (docs/deployments.md). */
enum pg_mock_role {
	PG_MOCK_AGGREGATED, /* prefill and decode in one engine (the default) */
	PG_MOCK_PREFILL,    /* the proxy asks it for max_tokens 1 */
	PG_MOCK_DECODE,     /* its first token kv_transfer after arrival: the
			       prompt's KV comes from a prefill worker */
	PG_MOCK_PROXY,      /* forwards each request to a prefill, then a decode */
};

struct pg_mock_server_config {
	enum pg_mock_role role;
	const char *prefill_urls; /* proxy: comma-separated base URLs */
	const char *decode_urls;
	const char *host;      /* default "127.0.0.1" */
	long port;             /* 0: any free port */
	bool allow_remote;     /* else only loopback addresses */
	const char *port_file; /* written atomically once listening */
	const char *model;
	long max_model_len;
	struct pg_engine_params engine;
	double max_seconds;     /* <= 0: no limit */
	long max_requests;      /* generation requests; <= 0: no limit */
	long startup_delay_ms;  /* bound but not listening meanwhile */
	long startup_jitter_ms; /* + a draw in [0, this] from the session's seed */
	long warm_startup_ms;   /* the delay when cache_dir holds a previous start's
				   marker; -1: no warm starts (cache_dir unused) */
	const char *cache_dir;  /* the simulated compile cache; NULL: none */
	bool never_ready;       /* never listen */
	long exit_after_ms;     /* < 0: never; else _exit(exit_code) then */
	int exit_code;
	const char *timing_log;   /* JSON lines written at exit, or NULL */
	bool log_requests;        /* one line per generation request */
	bool no_metrics;          /* GET /metrics is a 404 (an engine without metrics) */
	long prefix_cache_blocks; /* > 0: a prefix cache of that many 16-token blocks
				     (mockserver/prefix_cache.h); 0: none */
	long idle_timeout_ms;     /* close a connection without a whole request this long
				   after it opened or was last answered (408 to a
				   half-sent one); <= 0: never */
	FILE *log;                /* startup/shutdown lines; NULL: silent */
};

/* Long enough for any client between two requests of a run (uvicorn,
 * vLLM's server, closes idle keep-alives after 5 s), short enough that
 * thousands of half-sent requests do not stay open. */
#define PG_MOCK_IDLE_TIMEOUT_MS 30000

/* The defaults --help documents; log NULL (the command passes stderr). */
void pg_mock_server_config_default(struct pg_mock_server_config *cfg);

/*
 * The options as the user writes them. Those that need no conversion are
 * parsed straight into `server` (strings borrowed from argv); the rest are
 * in the user's units (times in ms, prefill in µs) or ranges wider than
 * the engine's types, and the engine model's own knobs start "not given"
 * (NAN, -1) so that --fixed-timing can refuse them.
 */
struct pg_mock_options {
	struct pg_mock_server_config server; /* host, port, model, faults, limits... */
	long vocab_size, seed, tokens_per_message, exit_code;
	long session_seed;    /* -1: not given (the session draws from seed) */
	long max_running;     /* -1: not given */
	long kv_cache_tokens; /* 0: not given (max-running x 8192); -1: unlimited */
	double prefix_hit;    /* 0: not given */
	double ttft_ms, itl_ms, stall_ms;
	double prefill_us, itl_growth; /* NAN: not given */
	const char *role;              /* NULL: aggregated */
	double kv_transfer_ms;         /* NAN: not given */
	long cold_requests;            /* 0: no cold start */
};

/*
 * How long a start stays unready: --warm-startup-ms when warm (a previous
 * start left its marker in --cache-dir) and given, else --startup-delay-ms,
 * plus --startup-jitter-ms x a uniform draw from the session's seed
 * (--session-seed, else --seed), so `--session-seed {start}` gives each
 * start of a startup test its own.
 */
long pg_mock_startup_ms(const struct pg_mock_server_config *cfg, bool warm);

/* The marker a ready server leaves in cache_dir (server_io.c). */
#define PG_MOCK_WARM_MARKER "perfgate-mock.warm"

/* The defaults: those of pg_mock_server_config_default. */
void pg_mock_options_default(struct pg_mock_options *o);

/*
 * Check o and map it onto cfg. PG_ECONFIG with a message naming the option ("--fault-500 1.5: expected
 * a probability in [0, 1]"); cfg is then unspecified.
 */
int pg_mock_options_apply(struct pg_mock_server_config *cfg, const struct pg_mock_options *o,
			  struct pg_error *err);

#endif
