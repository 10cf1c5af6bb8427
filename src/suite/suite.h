#ifndef PERFGATE_SUITE_SUITE_H
#define PERFGATE_SUITE_SUITE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "loadgen/arrivals.h"
#include "runner/slasearch.h"
#include "base/strutil.h"

struct pg_error;

/*
 * The suite model: what to run, independent of where it was written. The
 * three ways in -- a perfgate suite file, the perfgate steps of a Buildkite
 * pipeline, vLLM's *-tests.json files -- are loaded by src/suite/config*_io.c into
 * this one structure; every consumer (dry-run, runner, load generator,
 * pipeline sharding, report bullets) reads only this.
 *
 * Ownership: a struct pg_suite owns everything reachable from it (strings,
 * arrays, json_t references). pg_suite_release() frees it all.
 * Doubles use NAN for "not set" where a default is applied later.
 */

enum pg_suite_kind {
	PG_SUITE_LATENCY,
	PG_SUITE_THROUGHPUT,
	PG_SUITE_SERVING,
	PG_SUITE_STARTUP, /* repeated cold and warm starts of the server (docs/suite.md) */
	PG_SUITE_COUNT
};

/* "latency", "throughput", "serving", "startup"; NULL for out of range. */
const char *pg_suite_kind_name(enum pg_suite_kind kind);
/* -1 if name is not a suite kind. */
int pg_suite_kind_parse(const char *name);

struct pg_kv {
	char *key;
	char *value;
};

struct pg_kvlist {
	struct pg_kv *items;
	size_t n;
	size_t cap;
};

void pg_kvlist_set(struct pg_kvlist *l, const char *key, const char *value); /* replaces */
const char *pg_kvlist_get(const struct pg_kvlist *l, const char *key);
void pg_kvlist_release(struct pg_kvlist *l);

/* Where a value came from, for error messages at run time. */
struct pg_srcloc {
	char *file; /* path as the user gave it, or "BUILDKITE_PLUGIN_CONFIGURATION" */
	int line;   /* 1-based; 0 when unknown (JSON from an env var) */
	int column;
};

/*
 * One role of a disaggregated deployment (docs/deployments.md): replicas
 * processes started from one command template, each on its own port with a
 * log of its own. The front role (named "proxy" or "router") is the one the
 * load generator talks to; it starts after every worker role is ready.
 */
struct pg_role_spec {
	char *name;           /* "prefill", "decode", "proxy"...: [a-z][a-z0-9]* */
	char *command;        /* template: {port} its own, {replica}, {<role>_urls}... */
	bool shell;           /* run through /bin/sh -c */
	long replicas;        /* default 1; the front role has 1 */
	long tp;              /* GPUs per replica (tensor parallel); default 1 */
	struct pg_kvlist env; /* over server.env */
	char *ready_path;     /* NULL: server.ready */
	bool front;           /* the proxy/router */
};

/* How the inference server is provided for a test. */
struct pg_server_spec {
	/* template, "{model}" etc. NULL: perfgate starts no server (remote, or
	 * an external command that needs none). With both command and an
	 * external pg_test.command, the server is started first and the
	 * command reaches it through {base_url}. */
	char *command;
	/* the flags of command that a vLLM test file's server_parameters made
	 * ("--load-format dummy --dtype bfloat16"): an A/B side's own server
	 * command keeps them (docs/ab.md); NULL: none */
	char *file_flags;
	bool shell;              /* run through /bin/sh -c instead of execvp */
	struct pg_kvlist env;    /* added to the server's environment */
	char *ready_path;        /* GET until 200; default "/v1/models" */
	double ready_timeout;    /* seconds; default 1200 */
	double stop_timeout;     /* SIGTERM -> SIGKILL grace, seconds; default 30 */
	double gpu_idle_mib;     /* > 0: before starting the server, wait until every
	                           GPU uses less memory than this (nvidia-smi); 0 off */
	double gpu_idle_timeout; /* seconds that wait may take; default 300 */
	char *remote;            /* base URL of an already running server; excludes command */
	/* a disaggregated deployment instead of command: the worker roles in
	 * the order written, then the front role last; n_roles 0: none */
	struct pg_role_spec *roles;
	size_t n_roles;
};

/* At most this many roles in a deployment, and processes (replicas of
 * every role) in all. */
#define PG_MAX_ROLES    8
#define PG_MAX_REPLICAS 32

/* The role names a front role can have. */
bool pg_role_is_front(const char *name);

/*
 * The deployment's shape, "prefill=2x1,decode=2x1": each worker role as
 * <name>=<replicas>x<tp>, in order (the front role is no GPU worker).
 * Appended to out; nothing for a test without a deployment.
 */
struct pg_buf;
void pg_deployment_shape(struct pg_buf *out, const struct pg_server_spec *s);

/* The GPUs the deployment's workers use: replicas x tp summed; 0 without
 * a deployment. */
long pg_deployment_gpus(const struct pg_server_spec *s);

void pg_role_spec_release(struct pg_role_spec *r);

enum pg_dataset_kind {
	PG_DATASET_RANDOM,     /* token-id prompts of exact lengths */
	PG_DATASET_SHAREGPT,   /* ShareGPT JSON conversations */
	PG_DATASET_JSONL,      /* {"prompt": ..., "output_len": ...} per line */
	PG_DATASET_SONNET,     /* vLLM's sonnet: poem lines, a shared prefix of lines */
	PG_DATASET_MULTI_TURN, /* multi-turn chat sessions (loadgen/sessions.h) */
};

/* The multi_turn dataset: users x rounds turns, each sent with the
 * conversation so far. The answer length is the dataset's output_len. */
struct pg_sessions_spec {
	long users;             /* default 10 */
	long rounds;            /* default 5 */
	long system_prompt_len; /* shared system prompt tokens (words); default 1000 */
	long question_len;      /* tokens (words) of each question; default 100 */
	long user_context_len;  /* each user's own context after the system
				   prompt (production-stack's user history); 0 */
	double think_time;      /* seconds from an answer to the next question; NAN:
				   none (the point's qps paces the users) */
	double join_interval;   /* seconds between users joining; NAN: the default */
};

struct pg_dataset_spec {
	enum pg_dataset_kind kind;
	char *path;         /* sharegpt / jsonl file; NULL for random */
	long input_len;     /* random: default 1024 (serving), 32 (latency) */
	long output_len;    /* random: default 128; sharegpt: 0 = from the data */
	double range_ratio; /* random: lengths uniform in [L(1-r), L(1+r)]; default 0 */
	long prefix_len;    /* random: shared prefix tokens; default 0; sonnet: the
			      prefix lines' tokens */
	struct pg_sessions_spec sessions; /* multi_turn */
	char *url;    /* where to fetch path from when asked (--fetch-datasets), or NULL */
	char *sha256; /* what path must hash to (64 lower-case hex), checked on every run, or
			 NULL */
};

/* Per-request SLOs (vLLM's --goodput, plus ITL): a request meets one when
 * its value is at most the bound (inclusive). */
struct pg_goodput {
	double ttft_ms; /* NAN = not part of the SLO */
	double tpot_ms;
	double e2el_ms;
	double itl_ms;         /* the request's gaps at itl_percentile, not vLLM's */
	double itl_percentile; /* of the request's own gaps; default 100: every gap */
};

struct pg_client_spec {
	char *endpoint;     /* "/v1/completions" (default) or "/v1/chat/completions" */
	char *served_model; /* "model" in the request body; default: the test's model */
	double temperature; /* NAN = not sent (vLLM's newest default) */
	bool ignore_eos;    /* default true */
	unsigned long seed; /* default 0 */
	char *api_key_env;  /* env var holding the key; its value is never logged */
	double timeout;     /* per-request timeout, seconds; default 600 */
	json_t *extra_body; /* object merged into every request body, or NULL */
	struct pg_kvlist headers;
	double *percentiles; /* default {99} */
	size_t n_percentiles;
	struct pg_strv percentile_metrics; /* default ttft,tpot,itl */
	long num_warmups;                  /* unmeasured requests before timing; default 0 */
	bool continuous_usage;             /* ask for stream_options.continuous_usage_stats */
};

/*
 * What runs, unmeasured, before a point's first measured run, so that run
 * does not pay for the server's first use (docs/suite.md `warmup`): the
 * first run after a server start is measurably slower on real engines
 * (kernels compiled or tuned on first use, caches filling).
 */
enum pg_warmup_kind {
	PG_WARMUP_DEFAULT,  /* not set: pg_test_warmup decides by the test */
	PG_WARMUP_NONE,     /* warmup: 0 */
	PG_WARMUP_REQUESTS, /* warmup: N, requests of their own prompts */
	PG_WARMUP_REPEAT,   /* warmup: repeat, a whole run of the point */
};

struct pg_warmup {
	enum pg_warmup_kind kind;
	long requests; /* PG_WARMUP_REQUESTS: how many */
};

/* The default for serving and throughput tests that perfgate's client
 * runs: a burst at the point's concurrency, a second or two of a GPU. */
#define PG_WARMUP_DEFAULT_REQUESTS 10

struct pg_test {
	enum pg_suite_kind kind;
	char *name; /* unique across the suite; result file stem prefix */
	char *model;
	long tp; /* tensor parallel size; default 1 */
	struct pg_server_spec server;
	struct pg_client_spec client;
	struct pg_dataset_spec dataset;
	struct pg_kvlist vars; /* user variables for {templates} */
	/* --metadata pairs besides tensor_parallel_size, as vLLM's driver
	 * passes them to vllm bench serve and a result then carries them
	 * (string values): compilation_config.mode and optimization_level
	 * when a vLLM serving test's server_parameters set them */
	struct pg_kvlist metadata;

	/* latency */
	long batch_size;        /* default 8 */
	long warmup_iterations; /* default 10 */
	long iterations;        /* default 30 */

	/* startup: fresh server processes, each timed from spawn to ready and
	 * to the answer of one max_tokens 1 request; a cold start gets empty
	 * cache directories of its own, warm starts share one that the
	 * warm-up starts filled (runner/startup_io.h) */
	long cold_starts;   /* default 3 (vLLM's --num-iters-cold) */
	long warmup_starts; /* default 1 (--num-iters-warmup), unmeasured */
	long warm_starts;   /* default 3 (--num-iters-warm) */
	bool first_token;   /* default true: also time the first answer */

	/* throughput and serving */
	long num_prompts; /* default 1000 */
	/* serving: > 0 sends max_concurrency x this many prompts per bounded
	 * point instead (vLLM's PROMPTS_PER_CONCURRENCY), clamped to
	 * [min_num_prompts, max_num_prompts] (defaults 1 and 1,000,000) */
	long prompts_per_concurrency;
	long min_num_prompts;
	long max_num_prompts;
	/* serving: send at least as many prompts as the reported percentiles
	 * (client.percentiles from p50 up) need to be certified by MLPerf's
	 * early-stopping rule (results/tails.h: 662 for p99), whatever the
	 * counts above say */
	bool certify_tails;

	/* serving: one point per qps x max_concurrency */
	double *qps; /* INFINITY for "inf"; default {INFINITY} */
	size_t n_qps;
	long *max_concurrency; /* 0 = unbounded (null) */
	size_t n_max_concurrency;
	bool concurrency_in_name; /* a concurrency list was given: names get _concurrency_<c> */
	double burstiness;        /* gamma shape; 1.0 = Poisson (default) */
	/* the rate rising over the requests instead of qps (which stays inf),
	 * vLLM's --ramp-up-strategy/-start-rps/-end-rps */
	struct pg_ramp_up ramp_up;
	/* after each rate's concurrency points, probe for the largest one
	 * that meets a p99 TTFT/TPOT SLA (vLLM's adaptive concurrency) */
	struct pg_sla_search sla_search;

	/* throughput: optional cap on in-flight requests, 0 = all at once */
	long throughput_max_concurrency;

	/* serving: SLOs for request_goodput (vLLM's --goodput) and the SLO
	 * attainment keys, ms; NAN = unset */
	struct pg_goodput goodput;

	long repeat;             /* runs per point, summarised by the median; default 1 */
	struct pg_warmup warmup; /* as written; pg_test_warmup resolves the default */

	/* external benchmark command instead of the native client, e.g.
	 * "vllm bench latency --model {model} --output-json {result}" */
	char *command;
	bool command_shell;
	double command_timeout;       /* seconds; default 3600 */
	struct pg_kvlist command_env; /* added to the external command's environment */

	struct pg_srcloc loc; /* where the test was defined */
};

/*
 * A/B mode (docs/ab.md): base and head run on the same machine in
 * interleaved blocks. Each side overrides what every test starts: the
 * server's command, flags and environment, or the external benchmark
 * command. Templates see {side} ("base" or "head"; "head" outside A/B).
 */
struct pg_ab_side_spec {
	char *server_command;        /* replaces each test's server command; NULL: the test's */
	char *server_flags;          /* appended to the server command; NULL: none */
	bool replace_test_flags;     /* server_command drops the test file's server
				      * parameters (pg_server_spec.file_flags) too;
				      * default false: they are appended to it */
	struct pg_kvlist server_env; /* merged over each test's server env */
	char *command;               /* replaces each test's external command; NULL: the test's */
	struct pg_kvlist command_env;
};

struct pg_ab_spec {
	struct pg_ab_side_spec side[2]; /* enum pg_ab_side: base, head */
	long min_blocks;                /* default 4 */
	long max_blocks;                /* default 16 */
	double time_budget;             /* seconds; 0: none (default) */
	double tolerance;               /* throughput metrics; default 1% */
	double latency_tolerance;       /* latency metrics; default 2% */
	double whole_run_tolerance;     /* a change common to every point; NAN (default):
					 * the metric's own tolerance */
	double false_alarm;             /* the step's budget; default 5% */
	struct pg_srcloc loc;           /* where the section was written */
};

/* The defaults above, no overrides. */
void pg_ab_spec_init(struct pg_ab_spec *ab);
void pg_ab_spec_release(struct pg_ab_spec *ab);

struct pg_suite {
	struct pg_test *tests;
	size_t n_tests;
	size_t cap_tests;
	char *gpu;    /* forced GPU name from the suite, or NULL */
	char *source; /* the file (or "inline") it was loaded from */
	/* Non-fatal notes from loading, one line each, already prefixed with
	 * file:line:col ("a vLLM flag perfgate's client ignores"). The command
	 * layer prints them. */
	struct pg_strv warnings;
	struct pg_ab_spec *ab; /* the `ab:` section, or NULL */
};

#define PG_SUITE_INIT                                                                              \
	{                                                                                          \
		NULL, 0, 0, NULL, NULL, PG_STRV_INIT                                               \
	}

/* Fill t with every default listed above (strings NULL unless noted). */
void pg_test_init(struct pg_test *t, enum pg_suite_kind kind);
void pg_test_release(struct pg_test *t);
/* Append a test (moved in: the suite takes ownership of t's contents). */
void pg_suite_add(struct pg_suite *s, struct pg_test *t);
void pg_suite_release(struct pg_suite *s);

/*
 * A test point: one result file. Serving tests expand to qps x
 * max_concurrency points (in that order, qps outer); latency and
 * throughput tests are one point each.
 */
struct pg_point {
	const struct pg_test *test; /* borrowed from the suite */
	char *name;                 /* result file stem, vLLM's naming */
	double qps;                 /* serving only; NAN otherwise */
	long max_concurrency;       /* serving only; 0 = unbounded */
};

struct pg_plan {
	struct pg_point *points;
	size_t n;
	size_t cap;
};

#define PG_PLAN_INIT                                                                               \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}

/*
 * Expand the suite into points, in suite order (latency, throughput,
 * serving as loaded). Names are the points' identities
 * (results/identity.h): latency/throughput "<test>"; serving
 * "<test>_qps_<q>", plus "_concurrency_<c>" when concurrency_in_name and
 * the cap holds requests back (below the point's prompt count), where q
 * and c print as "%g" ("1", "0.5", "inf"). With prompts_per_concurrency,
 * or when two caps of a rate would share a name, the cap always shows
 * (unbounded as "inf").
 */
void pg_plan_build(struct pg_plan *out, const struct pg_suite *s);

/* A ramp-up is whole (strategy and both rates) and replaces the request
 * rate, which must stay inf, as vLLM requires; PG_ECONFIG says why not. */
int pg_test_check_ramp_up(const struct pg_test *t, struct pg_error *err);

/*
 * The warm-up a test's points get: as written, or by default
 * PG_WARMUP_DEFAULT_REQUESTS requests for serving and throughput tests
 * that perfgate's client runs, and none for the rest -- latency tests
 * (their warmup_iterations batches precede every run), startup tests
 * (cold on purpose), external commands (which send their own requests:
 * vllm bench serve --num-warmups) and multi-turn sessions (a warm-up
 * request would fill the prefix cache the sessions measure). Never
 * PG_WARMUP_DEFAULT; requests only for a test perfgate's client sends.
 */
struct pg_warmup pg_test_warmup(const struct pg_test *t);
/* "10 requests", "a whole run", "none" (docs, --dry-run). */
const char *pg_warmup_text(char *buf, size_t size, const struct pg_warmup *w);

/* How many prompts a point sends: the test's num_prompts, or for a serving
 * point with a bounded concurrency and prompts_per_concurrency set, that
 * product clamped as vLLM's driver clamps it, so every concurrency of a
 * sweep runs about equally many rounds; with certify_tails, at least
 * pg_test_certify_prompts(). */
long pg_point_num_prompts(const struct pg_point *pt);

/* The fewest requests that certify every percentile the test reports
 * from p50 up (its client.percentiles, default p99): 662 for p99, 6,636
 * for p99.9; 0 when it reports none. */
long pg_test_certify_prompts(const struct pg_test *t);
void pg_plan_release(struct pg_plan *p);

/* Name of a serving point, as above, into a new string. */
char *pg_point_name(const char *test, double qps, long max_concurrency, bool with_concurrency);

#endif
