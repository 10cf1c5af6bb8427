/*
 * The perfgate suite file: `gpu`, `defaults`, then `latency:`,
 * `throughput:` and `serving:` lists of tests (docs/suite.md).
 *
 * A test is built by applying mappings in order onto pg_test_init()'s
 * defaults: the general `defaults`, the kind's `defaults.<kind>`, then the
 * test itself. Scalars and lists replace; mappings (server, client, dataset,
 * env, headers, vars, extra_body) merge key by key, the later layer winning.
 * Every key is validated where it is written, so the message points at the
 * line that is wrong.
 */
#include "suite/config_io_impl.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "loadgen/loadstats.h"
#include "base/strutil.h"
#include "base/template.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define K_LAT  (1u << PG_SUITE_LATENCY)
#define K_TPUT (1u << PG_SUITE_THROUGHPUT)
#define K_SERV (1u << PG_SUITE_SERVING)
#define K_BOOT (1u << PG_SUITE_STARTUP)
#define K_ALL  (K_LAT | K_TPUT | K_SERV)
#define K_ANY  (K_ALL | K_BOOT)

enum mode {
	MODE_STRICT,   /* a test, or defaults.<kind>: keys of other kinds are errors */
	MODE_DEFAULTS, /* general defaults applied to a test: other kinds' keys skipped */
	MODE_CHECK,    /* general defaults checked once, every key read */
};

enum layer { LAYER_DEFAULTS, LAYER_KIND_DEFAULTS, LAYER_TEST };

struct sctx {
	struct pg_cfg *cfg;
	const struct pg_ydoc *d;
	enum mode mode;
	enum layer layer;
	/* where things were set, for checks that need the whole test */
	const yaml_node_t *server_cmd_node;
	enum layer server_cmd_layer;
	const yaml_node_t *command_node;
	enum layer command_layer;
	const yaml_node_t *command_env_node;
	const yaml_node_t *dataset_name_node;
	const yaml_node_t *dataset_path_node;
	const yaml_node_t *output_len_node;
	const yaml_node_t *prompt_bounds_node; /* the last of min/max_num_prompts set */
	const yaml_node_t *ramp_up_node;
	const yaml_node_t *sla_search_node;
	const yaml_node_t *warmup_node;
	const yaml_node_t *deployment_node;
	/* each layer's vars and the path it hangs from, for finish_test */
	yaml_node_t *vars_node[LAYER_TEST + 1];
	const struct pg_ypath *vars_up[LAYER_TEST + 1];
	const yaml_node_t *role_cmd_nodes[PG_MAX_ROLES]; /* as t->server.roles */
	struct pg_role_spec *role;                       /* the role whose keys are being read */
};

typedef int (*key_fn)(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p);

struct key {
	const char *name;
	unsigned kinds;
	key_fn fn;
};

struct table {
	const char *name; /* "test", "server", ... for hints */
	const struct key *keys;
	size_t n;
};

static struct pg_error *E(struct sctx *c)
{
	return c->cfg->err;
}

/* ---- small value readers -------------------------------------------- */

static bool valid_env_name(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++)
		if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

static int read_positive_double(struct sctx *c, yaml_node_t *v, const struct pg_ypath *p,
				double *out)
{
	double x;

	if (pg_yget_double(c->d, v, p, false, &x, E(c)))
		return PG_ECONFIG;
	if (!(x > 0))
		return pg_yerr(c->d, v, p, E(c), "expected a number > 0, got %s", pg_ynode_text(v));
	*out = x;
	return 0;
}

/* A mapping of NAME: value into a kvlist (merging: later keys replace). */
static int read_kv(struct sctx *c, struct pg_kvlist *l, yaml_node_t *v, const struct pg_ypath *p,
		   bool env_names)
{
	struct pg_ypair *pairs = NULL;
	size_t n = 0;
	int ret;

	if ((ret = pg_ymap_pairs(c->d, v, p, "a mapping of names to values", &pairs, &n, E(c))))
		return ret;
	for (size_t i = 0; i < n; i++) {
		struct pg_ypath kp = { p, pairs[i].key, 0 };
		char *value = NULL;

		if (env_names && !valid_env_name(pairs[i].key)) {
			ret = pg_yerr(c->d, pairs[i].key_node, p, E(c),
				      "'%s' is not a valid environment variable name",
				      pairs[i].key);
			break;
		}
		if ((ret = pg_yget_string(c->d, pairs[i].value, &kp, &value, E(c))))
			break;
		pg_kvlist_set(l, pairs[i].key, value);
		free(value);
	}
	free(pairs);
	return ret;
}

/* A list of numbers (or one number), each checked by `check`. */
static int read_doubles(struct sctx *c, yaml_node_t *v, const struct pg_ypath *p, bool inf_ok,
			double **out, size_t *n_out, const char *(*check)(double),
			bool no_duplicates)
{
	size_t n = pg_ynode_is_seq(v) ? pg_yseq_len(v) : 1;
	double *vals;

	if (pg_ynode_is_map(v) || pg_ynode_is_null(v))
		return pg_yexpected(c->d, v, p, E(c), "a list of numbers");
	if (n == 0)
		return pg_yerr(c->d, v, p, E(c), "the list is empty");
	vals = pg_xcalloc(n, sizeof(double));
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *item = pg_ynode_is_seq(v) ? pg_yseq_item(c->d, v, i) : v;
		struct pg_ypath ip = { p, NULL, i };
		const struct pg_ypath *at = pg_ynode_is_seq(v) ? &ip : p;
		const char *problem;

		if (pg_yget_double(c->d, item, at, inf_ok, &vals[i], E(c)))
			goto fail;
		if ((problem = check(vals[i]))) {
			pg_yerr(c->d, item, at, E(c), "%s, got %s", problem, pg_ynode_text(item));
			goto fail;
		}
		for (size_t j = 0; no_duplicates && j < i; j++) {
			if (vals[j] == vals[i]) {
				pg_yerr(c->d, item, at, E(c),
					"%s is already in the list (item %zu)", pg_ynode_text(item),
					j);
				goto fail;
			}
		}
	}
	free(*out);
	*out = vals;
	*n_out = n;
	return 0;
fail:
	free(vals);
	return PG_ECONFIG;
}

static const char *check_qps(double v)
{
	return v > 0 ? NULL : "expected a request rate > 0 or 'inf'";
}

static const char *check_percentile(double v)
{
	return v > 0 && v <= 100 ? NULL : "expected a percentile in (0, 100]";
}

/* ---- server ---------------------------------------------------------- */

static void drop_roles(struct pg_test *t)
{
	for (size_t i = 0; i < t->server.n_roles; i++)
		pg_role_spec_release(&t->server.roles[i]);
	free(t->server.roles);
	t->server.roles = NULL;
	t->server.n_roles = 0;
}

static int srv_command(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	if (pg_yget_string(c->d, v, p, &t->server.command, E(c)))
		return PG_ECONFIG;
	free(t->server.remote); /* a later layer's command replaces an inherited remote */
	t->server.remote = NULL;
	drop_roles(t); /* ... and an inherited deployment */
	c->server_cmd_node = v;
	c->server_cmd_layer = c->layer;
	return 0;
}

static int srv_shell(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	return pg_yget_bool(c->d, v, p, &t->server.shell, E(c));
}

static int srv_env(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	return read_kv(c, &t->server.env, v, p, true);
}

/* A readiness path (a server's, a role's): *out replaced by it. */
static int read_ready_path(struct sctx *c, yaml_node_t *v, const struct pg_ypath *p, char **out)
{
	char *s = NULL;

	if (pg_yget_string(c->d, v, p, &s, E(c)))
		return PG_ECONFIG;
	if (s[0] != '/') {
		pg_yerr(c->d, v, p, E(c), "expected a URL path starting with '/', got '%s'", s);
		free(s);
		return PG_ECONFIG;
	}
	free(*out);
	*out = s;
	return 0;
}

static int srv_ready(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	return read_ready_path(c, v, p, &t->server.ready_path);
}

static int srv_ready_timeout(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			     const struct pg_ypath *p)
{
	return read_positive_double(c, v, p, &t->server.ready_timeout);
}

static int srv_stop_timeout(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			    const struct pg_ypath *p)
{
	return read_positive_double(c, v, p, &t->server.stop_timeout);
}

static int srv_gpu_idle_mib(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			    const struct pg_ypath *p)
{
	double x;

	if (pg_yget_double(c->d, v, p, false, &x, E(c)))
		return PG_ECONFIG;
	if (!(x >= 0))
		return pg_yerr(c->d, v, p, E(c), "expected MiB >= 0 (0: no wait), got %s",
			       pg_ynode_text(v));
	t->server.gpu_idle_mib = x;
	return 0;
}

static int srv_gpu_idle_timeout(struct sctx *c, struct pg_test *t, yaml_node_t *v,
				const struct pg_ypath *p)
{
	return read_positive_double(c, v, p, &t->server.gpu_idle_timeout);
}

static int srv_remote(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	char *s = NULL;

	if (pg_yget_string(c->d, v, p, &s, E(c)))
		return PG_ECONFIG;
	if (!pg_str_has_prefix(s, "http://") && !pg_str_has_prefix(s, "https://")) {
		pg_yerr(c->d, v, p, E(c),
			"expected a base URL like http://127.0.0.1:8000, got '%s'", s);
		free(s);
		return PG_ECONFIG;
	}
	/* "http://h:8000/" and "http://h:8000" mean the same server */
	while (pg_str_has_suffix(s, "/"))
		s[strlen(s) - 1] = '\0';
	free(t->server.remote);
	t->server.remote = s;
	free(t->server.command);
	t->server.command = NULL;
	c->server_cmd_node = NULL;
	drop_roles(t);
	return 0;
}

/* ---- server.deployment: roles (docs/deployments.md) ------------------ */

static int role_command(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	(void)t;
	return pg_yget_string(c->d, v, p, &c->role->command, E(c));
}

static int role_shell(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	(void)t;
	return pg_yget_bool(c->d, v, p, &c->role->shell, E(c));
}

static int role_replicas(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			 const struct pg_ypath *p)
{
	(void)t;
	if (pg_yget_long(c->d, v, p, 1, &c->role->replicas, E(c)))
		return PG_ECONFIG;
	if (c->role->replicas > 16)
		return pg_yerr(c->d, v, p, E(c), "at most 16 replicas per role, got %ld",
			       c->role->replicas);
	if (c->role->front && c->role->replicas != 1)
		return pg_yerr(c->d, v, p, E(c),
			       "the '%s' role is the one address the load generator uses: "
			       "1 replica, got %ld",
			       c->role->name, c->role->replicas);
	return 0;
}

static int role_tp(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	(void)t;
	if (pg_yget_long(c->d, v, p, 1, &c->role->tp, E(c)))
		return PG_ECONFIG;
	/* bounded, so that the deployment's GPUs (replicas x tp summed) fit */
	if (c->role->tp > 1024)
		return pg_yerr(c->d, v, p, E(c), "at most 1024 GPUs per replica, got %ld",
			       c->role->tp);
	return 0;
}

static int role_env(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	(void)t;
	return read_kv(c, &c->role->env, v, p, true);
}

static int role_ready(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	(void)t;
	return read_ready_path(c, v, p, &c->role->ready_path);
}

/* clang-format off */
static const struct key role_keys[] = {
	{ "command", K_ALL, role_command },
	{ "shell", K_ALL, role_shell },
	{ "replicas", K_ALL, role_replicas },
	{ "tp", K_ALL, role_tp },
	{ "env", K_ALL, role_env },
	{ "ready", K_ALL, role_ready },
};
/* clang-format on */

static const struct table role_table = { "role", role_keys,
					 sizeof(role_keys) / sizeof(role_keys[0]) };

static int apply_map(struct sctx *c, struct pg_test *t, yaml_node_t *map, const struct pg_ypath *p,
		     const struct table *tab, const char *what);

static const char *role_name_problem(const char *s)
{
	if (!(*s >= 'a' && *s <= 'z'))
		return "a role name starts with a lower-case letter";
	for (const char *q = s; *q; q++)
		if (!((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9')))
			return "a role name is lower-case letters and digits (it names "
			       "{<role>_urls} and its logs)";
	if (strlen(s) > 32)
		return "a role name has at most 32 characters";
	return NULL;
}

static long total_replicas(const struct pg_role_spec *roles, size_t n)
{
	long total = 0;

	for (size_t i = 0; i < n; i++)
		total += roles[i].replicas;
	return total;
}

/* A later layer's deployment replaces the earlier one whole. */
static int srv_deployment(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			  const struct pg_ypath *p)
{
	struct pg_ypair *pairs = NULL;
	struct pg_role_spec *roles;
	size_t n = 0, n_front = 0, k = 0;
	int ret;

	if ((ret = pg_ymap_pairs(c->d, v, p,
				 "a mapping of roles (prefill, decode, proxy) to "
				 "their settings",
				 &pairs, &n, E(c))))
		return ret;
	if (n > PG_MAX_ROLES) {
		free(pairs);
		return pg_yerr(c->d, v, p, E(c), "at most %d roles, got %zu", PG_MAX_ROLES, n);
	}
	roles = pg_xcalloc(n ? n : 1, sizeof(*roles));
	for (size_t i = 0; i < n && !ret; i++) {
		struct pg_ypath kp = { p, pairs[i].key, 0 };
		struct pg_role_spec *r = &roles[i];
		const char *why = role_name_problem(pairs[i].key);

		r->name = pg_xstrdup(pairs[i].key);
		r->replicas = 1;
		r->tp = 1;
		r->front = pg_role_is_front(r->name);
		n_front += r->front;
		if (why) {
			ret = pg_yerr(c->d, pairs[i].key_node, p, E(c), "role '%.40s': %s",
				      pairs[i].key, why);
			break;
		}
		c->role = r;
		if ((ret = apply_map(c, t, pairs[i].value, &kp, &role_table,
				     "a mapping of role settings (command, replicas, tp, env, "
				     "ready)")))
			break;
		if (!r->command)
			ret = pg_yerr(c->d, pairs[i].value, &kp, E(c), "role '%s' has no command",
				      r->name);
	}
	c->role = NULL;
	if (!ret && n == 0)
		ret = pg_yerr(c->d, v, p, E(c), "the deployment has no roles");
	else if (!ret && n_front > 1)
		ret = pg_yerr(c->d, v, p, E(c),
			      "the deployment has both a 'proxy' and a 'router': give one front "
			      "role");
	else if (!ret && n_front == 0)
		ret = pg_yerr(c->d, v, p, E(c),
			      "the deployment has no front role: add a 'proxy' (or 'router') role "
			      "the load generator talks to");
	else if (!ret && total_replicas(roles, n) > PG_MAX_REPLICAS)
		ret = pg_yerr(c->d, v, p, E(c),
			      "the deployment has %ld processes (replicas of every role): at most "
			      "%d",
			      total_replicas(roles, n), PG_MAX_REPLICAS);
	else if (!ret && n == 1)
		ret = pg_yerr(c->d, v, p, E(c),
			      "the deployment has only its front role: add the worker roles "
			      "(prefill, decode...) it forwards to");
	if (ret) {
		for (size_t i = 0; i < n; i++)
			pg_role_spec_release(&roles[i]);
		free(roles);
		free(pairs);
		return ret;
	}
	drop_roles(t);
	/* workers first, in the order written, the front role last */
	t->server.roles = pg_xcalloc(n, sizeof(*roles));
	for (int front = 0; front < 2; front++) {
		for (size_t i = 0; i < n; i++) {
			if (roles[i].front != (bool)front)
				continue;
			c->role_cmd_nodes[k] = pg_ymap_get(c->d, pairs[i].value, "command");
			t->server.roles[k++] = roles[i];
		}
	}
	t->server.n_roles = n;
	free(roles);
	free(pairs);
	free(t->server.command);
	t->server.command = NULL;
	free(t->server.remote);
	t->server.remote = NULL;
	c->server_cmd_node = NULL;
	c->deployment_node = v;
	return 0;
}

/* clang-format off */
static const struct key server_keys[] = {
	{ "command", K_ANY, srv_command },
	{ "shell", K_ANY, srv_shell },
	{ "env", K_ANY, srv_env },
	{ "ready", K_ANY, srv_ready },
	{ "ready_timeout", K_ANY, srv_ready_timeout },
	{ "stop_timeout", K_ANY, srv_stop_timeout },
	{ "gpu_idle_mib", K_ANY, srv_gpu_idle_mib },
	{ "gpu_idle_timeout", K_ANY, srv_gpu_idle_timeout },
	{ "remote", K_ANY, srv_remote },
	{ "deployment", K_ALL, srv_deployment },
};
/* clang-format on */

/* ---- client ---------------------------------------------------------- */

static int cl_endpoint(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	char *s = NULL;

	if (pg_yget_string(c->d, v, p, &s, E(c)))
		return PG_ECONFIG;
	if (s[0] != '/' || !pg_str_has_suffix(s, "/completions")) {
		pg_yerr(c->d, v, p, E(c),
			"expected an OpenAI path ending in /completions (/v1/completions or "
			"/v1/chat/completions), got '%s'",
			s);
		free(s);
		return PG_ECONFIG;
	}
	free(t->client.endpoint);
	t->client.endpoint = s;
	return 0;
}

static int cl_served_model(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			   const struct pg_ypath *p)
{
	return pg_yget_string(c->d, v, p, &t->client.served_model, E(c));
}

static int cl_temperature(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			  const struct pg_ypath *p)
{
	double x;

	if (pg_ynode_is_null(v)) { /* null: do not send one (vLLM's newest default) */
		t->client.temperature = NAN;
		return 0;
	}
	if (pg_yget_double(c->d, v, p, false, &x, E(c)))
		return PG_ECONFIG;
	if (x < 0)
		return pg_yerr(c->d, v, p, E(c), "expected a temperature >= 0, got %s",
			       pg_ynode_text(v));
	t->client.temperature = x;
	return 0;
}

static int cl_ignore_eos(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			 const struct pg_ypath *p)
{
	return pg_yget_bool(c->d, v, p, &t->client.ignore_eos, E(c));
}

static int cl_seed(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	long x;

	if (pg_yget_long(c->d, v, p, 0, &x, E(c)))
		return PG_ECONFIG;
	t->client.seed = (unsigned long)x;
	return 0;
}

static int cl_api_key_env(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			  const struct pg_ypath *p)
{
	char *s = NULL;

	if (pg_yget_string(c->d, v, p, &s, E(c)))
		return PG_ECONFIG;
	if (!valid_env_name(s)) {
		pg_yerr(c->d, v, p, E(c),
			"expected the name of an environment variable holding the key, got '%s'",
			s);
		free(s);
		return PG_ECONFIG;
	}
	free(t->client.api_key_env);
	t->client.api_key_env = s;
	return 0;
}

static int cl_timeout(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	return read_positive_double(c, v, p, &t->client.timeout);
}

static int cl_extra_body(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			 const struct pg_ypath *p)
{
	struct pg_ypair *pairs = NULL;
	size_t n = 0;
	json_t *body;

	/* read the pairs once for the checks (mapping, duplicate keys) */
	if (pg_ymap_pairs(c->d, v, p, "a mapping merged into every request body", &pairs, &n, E(c)))
		return PG_ECONFIG;
	free(pairs);
	body = pg_ynode_to_json(c->d, v);
	if (!t->client.extra_body)
		t->client.extra_body = json_object();
	json_object_update_recursive(t->client.extra_body, body);
	json_decref(body);
	return 0;
}

static int cl_headers(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	return read_kv(c, &t->client.headers, v, p, false);
}

static int cl_percentiles(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			  const struct pg_ypath *p)
{
	return read_doubles(c, v, p, false, &t->client.percentiles, &t->client.n_percentiles,
			    check_percentile, true);
}

static int cl_percentile_metrics(struct sctx *c, struct pg_test *t, yaml_node_t *v,
				 const struct pg_ypath *p)
{
	const char *const *metrics = pg_loadstats_metric_names;
	struct pg_strv out = PG_STRV_INIT;
	size_t n = pg_ynode_is_seq(v) ? pg_yseq_len(v) : 1;

	if (pg_ynode_is_map(v) || pg_ynode_is_null(v) || n == 0)
		return pg_yerr(c->d, v, p, E(c),
			       "expected a list of ttft, tpot, itl, e2el, client_queue_time, "
			       "e2el_including_client_queue");
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *item = pg_ynode_is_seq(v) ? pg_yseq_item(c->d, v, i) : v;
		struct pg_ypath ip = { p, NULL, i };
		const struct pg_ypath *at = pg_ynode_is_seq(v) ? &ip : p;
		const char *s = pg_ynode_text(item);

		if (!pg_loadstats_metric_known(s) || !pg_ynode_is_scalar(item)) {
			const char *near = pg_nearest(s, metrics, PG_LOADSTATS_METRIC_COUNT);
			pg_yerr(c->d, item, at, E(c),
				"expected one of ttft, tpot, itl, e2el, client_queue_time, "
				"e2el_including_client_queue, got '%s'%s%s%s",
				s, near ? " (did you mean '" : "", near ? near : "",
				near ? "'?)" : "");
			pg_strv_release(&out);
			return PG_ECONFIG;
		}
		pg_strv_push(&out, s);
	}
	pg_strv_release(&t->client.percentile_metrics);
	t->client.percentile_metrics = out;
	return 0;
}

static int cl_warmups(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	return pg_yget_long(c->d, v, p, 0, &t->client.num_warmups, E(c));
}

static int cl_continuous_usage(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			       const struct pg_ypath *p)
{
	return pg_yget_bool(c->d, v, p, &t->client.continuous_usage, E(c));
}

static int cl_api_key(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	(void)t;
	/* a key written into a suite file ends up in git and in logs */
	return pg_yerr(c->d, v, p, E(c),
		       "keys do not belong in a suite file: put it in an environment variable and "
		       "name that with 'api_key_env'");
}

/* clang-format off */
static const struct key client_keys[] = {
	{ "endpoint", K_ANY, cl_endpoint },
	{ "served_model", K_ANY, cl_served_model },
	{ "temperature", K_ANY, cl_temperature },
	{ "ignore_eos", K_ANY, cl_ignore_eos },
	{ "seed", K_ANY, cl_seed },
	{ "api_key_env", K_ANY, cl_api_key_env },
	{ "timeout", K_ANY, cl_timeout },
	{ "extra_body", K_ANY, cl_extra_body },
	{ "headers", K_ANY, cl_headers },
	{ "percentiles", K_ANY, cl_percentiles },
	{ "percentile_metrics", K_ANY, cl_percentile_metrics },
	{ "warmups", K_ANY, cl_warmups },
	{ "continuous_usage", K_ANY, cl_continuous_usage },
	{ "api_key", K_ANY, cl_api_key },
};
/* clang-format on */

/* ---- dataset --------------------------------------------------------- */

static int set_dataset_name(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			    const struct pg_ypath *p)
{
	static const char *const names[] = { "random", "sharegpt", "jsonl", "sonnet",
					     "multi_turn" };
	const char *s = pg_ynode_text(v);

	for (int i = 0; i < 5; i++) {
		if (pg_ynode_is_scalar(v) && !strcmp(s, names[i])) {
			t->dataset.kind = (enum pg_dataset_kind)i;
			c->dataset_name_node = v;
			return 0;
		}
	}
	if (pg_ynode_is_scalar(v) && !pg_ynode_is_null(v)) {
		const char *near = pg_nearest(s, names, 5);
		if (near)
			return pg_yerr(c->d, v, p, E(c),
				       "unknown dataset '%s' (did you mean '%s'?)", s, near);
		return pg_yerr(c->d, v, p, E(c),
			       "unknown dataset '%s': expected random, sharegpt, jsonl, sonnet "
			       "or multi_turn",
			       s);
	}
	return pg_yerr(c->d, v, p, E(c),
		       "expected a dataset name: random, sharegpt, jsonl, sonnet or multi_turn");
}

static int ds_path(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	if (pg_ynode_is_null(v)) { /* null drops an inherited path */
		free(t->dataset.path);
		t->dataset.path = NULL;
		c->dataset_path_node = NULL;
		return 0;
	}
	if (pg_yget_string(c->d, v, p, &t->dataset.path, E(c)))
		return PG_ECONFIG;
	c->dataset_path_node = v;
	return 0;
}

/* Where the file comes from when asked to fetch it: an http(s) URL. */
static int ds_url(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	free(t->dataset.url);
	t->dataset.url = NULL;
	if (pg_ynode_is_null(v))
		return 0;
	if (pg_yget_string(c->d, v, p, &t->dataset.url, E(c)))
		return PG_ECONFIG;
	if (!pg_str_has_prefix(t->dataset.url, "https://") &&
	    !pg_str_has_prefix(t->dataset.url, "http://"))
		return pg_yexpected(c->d, v, p, E(c), "an http:// or https:// URL");
	return 0;
}

/* What the file must hash to: SHA-256, 64 hex digits (kept lower-case). */
static int ds_sha256(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	char *hex = NULL;

	free(t->dataset.sha256);
	t->dataset.sha256 = NULL;
	if (pg_ynode_is_null(v))
		return 0;
	if (pg_yget_string(c->d, v, p, &hex, E(c)))
		return PG_ECONFIG;
	for (size_t i = 0; hex[i]; i++) {
		if (pg_hex_digit(hex[i]) < 0 || i >= 64) {
			free(hex);
			return pg_yexpected(c->d, v, p, E(c), "a SHA-256 digest: 64 hex digits");
		}
		if (hex[i] >= 'A' && hex[i] <= 'F')
			hex[i] = (char)(hex[i] - 'A' + 'a');
	}
	if (strlen(hex) != 64) {
		free(hex);
		return pg_yexpected(c->d, v, p, E(c), "a SHA-256 digest: 64 hex digits");
	}
	t->dataset.sha256 = hex;
	return 0;
}

static int ds_input_len(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	return pg_yget_long(c->d, v, p, 1, &t->dataset.input_len, E(c));
}

static int ds_output_len(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			 const struct pg_ypath *p)
{
	if (pg_yget_long(c->d, v, p, 0, &t->dataset.output_len, E(c)))
		return PG_ECONFIG;
	c->output_len_node = v;
	return 0;
}

static int ds_range_ratio(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			  const struct pg_ypath *p)
{
	double x;

	if (pg_yget_double(c->d, v, p, false, &x, E(c)))
		return PG_ECONFIG;
	if (!(x >= 0 && x < 1))
		return pg_yerr(c->d, v, p, E(c), "expected a ratio in [0, 1), got %s",
			       pg_ynode_text(v));
	t->dataset.range_ratio = x;
	return 0;
}

static int ds_prefix_len(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			 const struct pg_ypath *p)
{
	return pg_yget_long(c->d, v, p, 0, &t->dataset.prefix_len, E(c));
}

static int ds_users(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	return pg_yget_long(c->d, v, p, 1, &t->dataset.sessions.users, E(c));
}

static int ds_rounds(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	return pg_yget_long(c->d, v, p, 1, &t->dataset.sessions.rounds, E(c));
}

static int ds_system_prompt_len(struct sctx *c, struct pg_test *t, yaml_node_t *v,
				const struct pg_ypath *p)
{
	return pg_yget_long(c->d, v, p, 0, &t->dataset.sessions.system_prompt_len, E(c));
}

static int ds_user_context_len(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			       const struct pg_ypath *p)
{
	return pg_yget_long(c->d, v, p, 0, &t->dataset.sessions.user_context_len, E(c));
}

static int ds_question_len(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			   const struct pg_ypath *p)
{
	return pg_yget_long(c->d, v, p, 1, &t->dataset.sessions.question_len, E(c));
}

/* seconds >= 0, or null for "not set" */
static int ds_seconds(struct sctx *c, yaml_node_t *v, const struct pg_ypath *p, double *out)
{
	double x;

	if (pg_ynode_is_null(v)) {
		*out = NAN;
		return 0;
	}
	if (pg_yget_double(c->d, v, p, false, &x, E(c)))
		return PG_ECONFIG;
	if (!(x >= 0))
		return pg_yerr(c->d, v, p, E(c), "expected seconds >= 0, got %s", pg_ynode_text(v));
	*out = x;
	return 0;
}

static int ds_think_time(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			 const struct pg_ypath *p)
{
	return ds_seconds(c, v, p, &t->dataset.sessions.think_time);
}

static int ds_join_interval(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			    const struct pg_ypath *p)
{
	return ds_seconds(c, v, p, &t->dataset.sessions.join_interval);
}

/* clang-format off */
static const struct key dataset_keys[] = {
	{ "name", K_ALL, set_dataset_name },
	{ "path", K_ALL, ds_path },
	{ "url", K_ALL, ds_url },
	{ "sha256", K_ALL, ds_sha256 },
	{ "input_len", K_ALL, ds_input_len },
	{ "output_len", K_ALL, ds_output_len },
	{ "range_ratio", K_ALL, ds_range_ratio },
	{ "prefix_len", K_ALL, ds_prefix_len },
	{ "users", K_ALL, ds_users },
	{ "rounds", K_ALL, ds_rounds },
	{ "system_prompt_len", K_ALL, ds_system_prompt_len },
	{ "question_len", K_ALL, ds_question_len },
	{ "user_context_len", K_ALL, ds_user_context_len },
	{ "think_time", K_ALL, ds_think_time },
	{ "join_interval", K_ALL, ds_join_interval },
};
/* clang-format on */

/* ---- goodput --------------------------------------------------------- */

static int gp_ttft(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	return read_positive_double(c, v, p, &t->goodput.ttft_ms);
}

static int gp_tpot(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	return read_positive_double(c, v, p, &t->goodput.tpot_ms);
}

static int gp_e2el(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	return read_positive_double(c, v, p, &t->goodput.e2el_ms);
}

static int gp_itl(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	return read_positive_double(c, v, p, &t->goodput.itl_ms);
}

static int gp_itl_percentile(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			     const struct pg_ypath *p)
{
	double x;

	if (pg_yget_double(c->d, v, p, false, &x, E(c)))
		return PG_ECONFIG;
	if (!(x > 0 && x <= 100))
		return pg_yerr(c->d, v, p, E(c), "expected a percentile in (0, 100], got %s",
			       pg_ynode_text(v));
	t->goodput.itl_percentile = x;
	return 0;
}

static int ru_strategy(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	static const char *const names[] = { "linear", "exponential" };
	const char *s = pg_ynode_text(v);
	const char *near;

	if (pg_ynode_is_scalar(v) &&
	    (t->ramp_up.strategy = pg_ramp_strategy_parse(s)) != PG_RAMP_NONE)
		return 0;
	near = pg_ynode_is_scalar(v) ? pg_nearest(s, names, 2) : NULL;
	if (near)
		return pg_yerr(c->d, v, p, E(c),
			       "unknown ramp-up strategy '%s' (did you mean '%s'?)", s, near);
	return pg_yexpected(c->d, v, p, E(c), "linear or exponential");
}

static int ru_start_rps(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	return pg_yget_long(c->d, v, p, 1, &t->ramp_up.start_rps, E(c));
}

static int ru_end_rps(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	return pg_yget_long(c->d, v, p, 1, &t->ramp_up.end_rps, E(c));
}

static int sla_ttft(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	return read_positive_double(c, v, p, &t->sla_search.ttft_ms);
}

static int sla_tpot(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	return read_positive_double(c, v, p, &t->sla_search.tpot_ms);
}

static int sla_probes(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	return pg_yget_long(c->d, v, p, 1, &t->sla_search.max_probes, E(c));
}

static int sla_max(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	return pg_yget_long(c->d, v, p, 1, &t->sla_search.max_concurrency, E(c));
}

/* clang-format off */
static const struct key sla_search_keys[] = {
	{ "ttft_ms", K_ALL, sla_ttft },
	{ "tpot_ms", K_ALL, sla_tpot },
	{ "max_probes", K_ALL, sla_probes },
	{ "max_concurrency", K_ALL, sla_max },
};
/* clang-format on */

/* clang-format off */
static const struct key ramp_up_keys[] = {
	{ "strategy", K_ALL, ru_strategy },
	{ "start_rps", K_ALL, ru_start_rps },
	{ "end_rps", K_ALL, ru_end_rps },
};
/* clang-format on */

/* clang-format off */
static const struct key goodput_keys[] = {
	{ "ttft", K_ALL, gp_ttft },
	{ "tpot", K_ALL, gp_tpot },
	{ "e2el", K_ALL, gp_e2el },
	{ "itl", K_ALL, gp_itl },
	{ "itl_percentile", K_ALL, gp_itl_percentile },
};
/* clang-format on */

/* ---- test keys ------------------------------------------------------- */

static int apply_map(struct sctx *c, struct pg_test *t, yaml_node_t *map, const struct pg_ypath *p,
		     const struct table *tab, const char *what);

static const struct table server_table = { "server", server_keys,
					   sizeof(server_keys) / sizeof(server_keys[0]) };
static const struct table client_table = { "client", client_keys,
					   sizeof(client_keys) / sizeof(client_keys[0]) };
static const struct table dataset_table = { "dataset", dataset_keys,
					    sizeof(dataset_keys) / sizeof(dataset_keys[0]) };
static const struct table sla_search_table = {
	"sla_search", sla_search_keys, sizeof(sla_search_keys) / sizeof(sla_search_keys[0])
};
static const struct table ramp_up_table = { "ramp_up", ramp_up_keys,
					    sizeof(ramp_up_keys) / sizeof(ramp_up_keys[0]) };
static const struct table goodput_table = { "goodput", goodput_keys,
					    sizeof(goodput_keys) / sizeof(goodput_keys[0]) };

const char *pg_cfg_name_problem(const char *s)
{
	size_t n = 0;

	if (!*s || *s == '.' || *s == '-')
		return "use letters, digits, '_', '-' and '.'";
	for (; s[n]; n++)
		if (!(s[n] == '_' || s[n] == '-' || s[n] == '.' || (s[n] >= 'a' && s[n] <= 'z') ||
		      (s[n] >= 'A' && s[n] <= 'Z') || (s[n] >= '0' && s[n] <= '9')))
			return "use letters, digits, '_', '-' and '.'";
	/* <name>_qps_<q>_concurrency_<c>.command.<n>.log must fit in the 255
	 * bytes of a file name */
	if (n > PG_TEST_NAME_MAX)
		return "at most " PG_STR(PG_TEST_NAME_MAX) " characters (its result files' names "
							   "must fit in 255 bytes)";
	return NULL;
}

bool pg_cfg_valid_name(const char *s)
{
	return pg_cfg_name_problem(s) == NULL;
}

static int t_name(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	if (c->mode != MODE_STRICT || c->layer != LAYER_TEST)
		return pg_yerr(c->d, v, p, E(c),
			       "a name cannot be a default: every test names itself");
	if (pg_yget_string(c->d, v, p, &t->name, E(c)))
		return PG_ECONFIG;
	if (!pg_cfg_valid_name(t->name))
		return pg_yerr(c->d, v, p, E(c), "'%.80s%s' cannot name result files: %s", t->name,
			       strlen(t->name) > 80 ? "..." : "", pg_cfg_name_problem(t->name));
	return 0;
}

static int t_model(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	if (pg_yget_string(c->d, v, p, &t->model, E(c)))
		return PG_ECONFIG;
	if (!*t->model)
		return pg_yerr(c->d, v, p, E(c), "the model name is empty");
	return 0;
}

static int t_tp(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	return pg_yget_long(c->d, v, p, 1, &t->tp, E(c));
}

static int t_server(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	yaml_node_t *cmd = pg_ymap_get(c->d, v, "command");
	yaml_node_t *remote = pg_ymap_get(c->d, v, "remote");

	if (cmd && remote && pg_ynode_is_map(v)) {
		struct pg_ypath rp = { p, "remote", 0 };
		return pg_yerr(c->d, remote, &rp, E(c),
			       "give either 'command' (perfgate starts the server) or 'remote' "
			       "(it is already running), not both");
	}
	if ((cmd || remote) && pg_ynode_is_map(v) && pg_ymap_get(c->d, v, "deployment")) {
		struct pg_ypath dp = { p, "deployment", 0 };
		return pg_yerr(c->d, pg_ymap_get(c->d, v, "deployment"), &dp, E(c),
			       "give either '%s' (one server) or 'deployment' (several roles), "
			       "not both",
			       cmd ? "command" : "remote");
	}
	return apply_map(c, t, v, p, &server_table, "a mapping of server settings");
}

static int t_client(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	return apply_map(c, t, v, p, &client_table, "a mapping of client settings");
}

static int t_dataset(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	/* `dataset: sharegpt` is short for `dataset: {name: sharegpt}` */
	if (pg_ynode_is_scalar(v))
		return set_dataset_name(c, t, v, p);
	return apply_map(c, t, v, p, &dataset_table,
			 "a dataset name or a mapping with name, path, input_len...");
}

static int t_vars(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	/* clang-format off */
	static const char *const reserved[] = {
		"name", "model", "tp", "input_len", "output_len", "batch_size", "num_prompts",
		"iterations", "warmup_iterations", "dataset_path", "port", "host", "base_url",
		"result", "results_dir", "side", "block", "start",
	};
	/* clang-format on */
	struct pg_ypair *pairs = NULL;
	size_t n = 0;
	int ret;

	if ((ret = pg_ymap_pairs(c->d, v, p, "a mapping of template variables", &pairs, &n, E(c))))
		return ret;
	for (size_t i = 0; i < n; i++) {
		const char *k = pairs[i].key;
		bool ok = *k != '\0';

		for (const char *s = k; *s; s++)
			if (!(*s == '_' || *s == '-' || *s == '.' || (*s >= 'a' && *s <= 'z') ||
			      (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
				ok = false;
		if (!ok) {
			ret = pg_yerr(
				c->d, pairs[i].key_node, p, E(c),
				"'%s' cannot be a {placeholder}: use letters, digits, '_', '-', '.'",
				k);
			goto done;
		}
		for (size_t r = 0; r < sizeof(reserved) / sizeof(reserved[0]); r++) {
			if (!strcmp(k, reserved[r])) {
				ret = pg_yerr(c->d, pairs[i].key_node, p, E(c),
					      "'%s' is a built-in variable and cannot be redefined",
					      k);
				goto done;
			}
		}
	}
	ret = read_kv(c, &t->vars, v, p, false);
	c->vars_node[c->layer] = v;
	c->vars_up[c->layer] = p->up;
done:
	free(pairs);
	return ret;
}

static int t_batch_size(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	return pg_yget_long(c->d, v, p, 1, &t->batch_size, E(c));
}

static int t_warmup_iterations(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			       const struct pg_ypath *p)
{
	return pg_yget_long(c->d, v, p, 0, &t->warmup_iterations, E(c));
}

static int t_iterations(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	return pg_yget_long(c->d, v, p, 1, &t->iterations, E(c));
}

static int t_cold_starts(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			 const struct pg_ypath *p)
{
	return pg_yget_long(c->d, v, p, 0, &t->cold_starts, E(c));
}

static int t_warmup_starts(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			   const struct pg_ypath *p)
{
	return pg_yget_long(c->d, v, p, 0, &t->warmup_starts, E(c));
}

static int t_warm_starts(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			 const struct pg_ypath *p)
{
	return pg_yget_long(c->d, v, p, 0, &t->warm_starts, E(c));
}

static int t_first_token(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			 const struct pg_ypath *p)
{
	return pg_yget_bool(c->d, v, p, &t->first_token, E(c));
}

static int t_num_prompts(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			 const struct pg_ypath *p)
{
	return pg_yget_long(c->d, v, p, 1, &t->num_prompts, E(c));
}

static int t_prompts_per_concurrency(struct sctx *c, struct pg_test *t, yaml_node_t *v,
				     const struct pg_ypath *p)
{
	return pg_yget_long(c->d, v, p, 1, &t->prompts_per_concurrency, E(c));
}

static int t_min_num_prompts(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			     const struct pg_ypath *p)
{
	c->prompt_bounds_node = v;
	return pg_yget_long(c->d, v, p, 1, &t->min_num_prompts, E(c));
}

static int t_max_num_prompts(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			     const struct pg_ypath *p)
{
	c->prompt_bounds_node = v;
	return pg_yget_long(c->d, v, p, 1, &t->max_num_prompts, E(c));
}

static int t_qps(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	return read_doubles(c, v, p, true, &t->qps, &t->n_qps, check_qps, true);
}

/* A concurrency: a positive whole number, or null for unbounded (0). */
static int read_concurrency(struct sctx *c, yaml_node_t *v, const struct pg_ypath *p, long *out)
{
	if (pg_ynode_is_null(v)) {
		*out = 0;
		return 0;
	}
	if (pg_ynode_is_scalar(v) && !pg_ynode_is_quoted(v) && !strcmp(pg_ynode_text(v), "inf")) {
		*out = 0;
		return 0;
	}
	if (pg_ynode_is_scalar(v)) {
		long x;
		const char *s = pg_ynode_text(v);
		if (pg_parse_long(s, &x) == 0 && !pg_ynode_is_quoted(v)) {
			if (x >= 1) {
				*out = x;
				return 0;
			}
		}
	}
	return pg_yexpected(c->d, v, p, E(c), "a positive whole number or null (unbounded)");
}

static int t_max_concurrency(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			     const struct pg_ypath *p)
{
	size_t n;
	long *vals;

	if (t->kind == PG_SUITE_THROUGHPUT) {
		if (pg_ynode_is_seq(v)) {
			if (c->mode == MODE_DEFAULTS)
				return 0; /* a serving list in the general defaults */
			return pg_yerr(c->d, v, p, E(c),
				       "a throughput test takes one max_concurrency, not a list");
		}
		return read_concurrency(c, v, p, &t->throughput_max_concurrency);
	}
	if (pg_ynode_is_map(v))
		return pg_yerr(c->d, v, p, E(c), "expected a list of concurrencies, got a mapping");
	if (pg_ynode_is_null(v)) { /* no list: unbounded, and names without _concurrency_ */
		free(t->max_concurrency);
		t->max_concurrency = pg_xcalloc(1, sizeof(long));
		t->n_max_concurrency = 1;
		t->concurrency_in_name = false;
		return 0;
	}
	n = pg_ynode_is_seq(v) ? pg_yseq_len(v) : 1;
	if (n == 0)
		return pg_yerr(c->d, v, p, E(c), "the list is empty (write [null] for unbounded)");
	vals = pg_xcalloc(n, sizeof(long));
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *item = pg_ynode_is_seq(v) ? pg_yseq_item(c->d, v, i) : v;
		struct pg_ypath ip = { p, NULL, i };
		const struct pg_ypath *at = pg_ynode_is_seq(v) ? &ip : p;

		if (read_concurrency(c, item, at, &vals[i]))
			goto fail;
		for (size_t j = 0; j < i; j++) {
			if (vals[j] == vals[i]) {
				pg_yerr(c->d, item, at, E(c),
					"%s is already in the list (item %zu)",
					vals[i] ? pg_ynode_text(item) : "unbounded", j);
				goto fail;
			}
		}
	}
	free(t->max_concurrency);
	t->max_concurrency = vals;
	t->n_max_concurrency = n;
	t->concurrency_in_name = true;
	return 0;
fail:
	free(vals);
	return PG_ECONFIG;
}

static int t_certify_tails(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			   const struct pg_ypath *p)
{
	return pg_yget_bool(c->d, v, p, &t->certify_tails, E(c));
}

static int t_burstiness(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	double x;

	if (pg_yget_double(c->d, v, p, true, &x, E(c)))
		return PG_ECONFIG;
	if (!(x > 0))
		return pg_yerr(c->d, v, p, E(c), "expected a burstiness > 0 (1 = Poisson), got %s",
			       pg_ynode_text(v));
	t->burstiness = x;
	return 0;
}

static int t_goodput(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	return apply_map(c, t, v, p, &goodput_table,
			 "a mapping of SLOs in ms: ttft, tpot, itl, e2el (and itl_percentile)");
}

static int t_ramp_up(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	if (pg_ynode_is_null(v)) { /* null: a fixed rate again */
		memset(&t->ramp_up, 0, sizeof(t->ramp_up));
		c->ramp_up_node = NULL;
		return 0;
	}
	c->ramp_up_node = v;
	return apply_map(c, t, v, p, &ramp_up_table,
			 "a mapping: strategy (linear or exponential), start_rps, end_rps");
}

static int t_sla_search(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	bool on;

	c->sla_search_node = v;
	if (pg_ynode_is_null(v)) { /* null: no search (over a default) */
		t->sla_search.enabled = false;
		return 0;
	}
	if (pg_ynode_is_map(v)) {
		t->sla_search.enabled = true;
		return apply_map(
			c, t, v, p, &sla_search_table,
			"true or a mapping: ttft_ms, tpot_ms, max_probes, max_concurrency");
	}
	/* true: vLLM's defaults; false: none */
	if (pg_yget_bool(c->d, v, p, &on, E(c)))
		return PG_ECONFIG;
	t->sla_search.enabled = on;
	return 0;
}

static int t_repeat(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	return pg_yget_long(c->d, v, p, 1, &t->repeat, E(c));
}

/* warmup: a number of requests, `repeat` (a whole unmeasured run), or
 * null (the default for the test) */
static int t_warmup(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	const char *text = pg_ynode_text(v);
	long n = -1;

	c->warmup_node = v;
	if (pg_ynode_is_null(v)) {
		t->warmup = (struct pg_warmup){ PG_WARMUP_DEFAULT, 0 };
		return 0;
	}
	if (v->type == YAML_SCALAR_NODE && !strcmp(text, "repeat")) {
		t->warmup = (struct pg_warmup){ PG_WARMUP_REPEAT, 0 };
		return 0;
	}
	if (v->type != YAML_SCALAR_NODE || pg_parse_long(text, &n) || n < 0 || n > 1000000)
		return pg_yexpected(c->d, v, p, E(c),
				    "a number of warm-up requests (0 for none) or 'repeat'");
	t->warmup = (struct pg_warmup){ n ? PG_WARMUP_REQUESTS : PG_WARMUP_NONE, n };
	return 0;
}

static int t_command(struct sctx *c, struct pg_test *t, yaml_node_t *v, const struct pg_ypath *p)
{
	if (pg_ynode_is_null(v)) { /* null: back to perfgate's own client */
		free(t->command);
		t->command = NULL;
		c->command_node = NULL;
		return 0;
	}
	if (pg_yget_string(c->d, v, p, &t->command, E(c)))
		return PG_ECONFIG;
	c->command_node = v;
	c->command_layer = c->layer;
	return 0;
}

static int t_command_shell(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			   const struct pg_ypath *p)
{
	return pg_yget_bool(c->d, v, p, &t->command_shell, E(c));
}

static int t_command_timeout(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			     const struct pg_ypath *p)
{
	return read_positive_double(c, v, p, &t->command_timeout);
}

static int t_command_env(struct sctx *c, struct pg_test *t, yaml_node_t *v,
			 const struct pg_ypath *p)
{
	c->command_env_node = v;
	return read_kv(c, &t->command_env, v, p, true);
}

/* clang-format off */
static const struct key test_keys[] = {
	{ "name", K_ANY, t_name },
	{ "model", K_ANY, t_model },
	{ "tp", K_ANY, t_tp },
	{ "server", K_ANY, t_server },
	{ "client", K_ANY, t_client },
	{ "dataset", K_TPUT | K_SERV, t_dataset },
	{ "input_len", K_ALL, ds_input_len },
	{ "output_len", K_ALL, ds_output_len },
	{ "vars", K_ANY, t_vars },
	{ "cold_starts", K_BOOT, t_cold_starts },
	{ "warmup_starts", K_BOOT, t_warmup_starts },
	{ "warm_starts", K_BOOT, t_warm_starts },
	{ "first_token", K_BOOT, t_first_token },
	{ "batch_size", K_LAT, t_batch_size },
	{ "warmup_iterations", K_LAT, t_warmup_iterations },
	{ "iterations", K_LAT, t_iterations },
	{ "num_prompts", K_TPUT | K_SERV, t_num_prompts },
	{ "prompts_per_concurrency", K_SERV, t_prompts_per_concurrency },
	{ "min_num_prompts", K_SERV, t_min_num_prompts },
	{ "max_num_prompts", K_SERV, t_max_num_prompts },
	{ "certify_tails", K_SERV, t_certify_tails },
	{ "qps", K_SERV, t_qps },
	{ "max_concurrency", K_TPUT | K_SERV, t_max_concurrency },
	{ "burstiness", K_SERV, t_burstiness },
	{ "goodput", K_SERV, t_goodput },
	{ "ramp_up", K_SERV, t_ramp_up },
	{ "sla_search", K_SERV, t_sla_search },
	{ "repeat", K_ANY, t_repeat },
	{ "warmup", K_ALL, t_warmup },
	{ "command", K_ANY, t_command },
	{ "command_shell", K_ANY, t_command_shell },
	{ "command_timeout", K_ANY, t_command_timeout },
	{ "command_env", K_ANY, t_command_env },
};
/* clang-format on */

static const struct table test_table = { "test", test_keys,
					 sizeof(test_keys) / sizeof(test_keys[0]) };

/* ---- unknown keys ---------------------------------------------------- */

/* Names vLLM's files (and habits) use, and what to write instead. */
/* clang-format off */
static const struct {
	const char *theirs;
	const char *hint;
} renamed[] = {
	{ "test_name", "perfgate calls it 'name'" },
	{ "qps_list", "perfgate calls it 'qps'" },
	{ "request_rate", "perfgate calls it 'qps'" },
	{ "max_concurrency_list", "perfgate calls it 'max_concurrency'" },
	{ "tensor_parallel_size", "perfgate calls it 'tp'" },
	{ "num_iters", "perfgate calls it 'iterations'" },
	{ "num_iters_warmup", "perfgate calls it 'warmup_iterations'" },
	{ "random_input_len", "perfgate calls it 'input_len'" },
	{ "random_output_len", "perfgate calls it 'output_len'" },
	{ "random_range_ratio", "write dataset: {range_ratio: ...}" },
	{ "random_prefix_len", "write dataset: {prefix_len: ...}" },
	{ "dataset_name", "perfgate calls it 'dataset'" },
	{ "dataset_path", "write dataset: {path: ...}" },
	{ "server_parameters", "write the server's command line under server: {command: ...}" },
	{ "client_parameters", "perfgate calls it 'client'" },
	{ "server_environment_variables", "write server: {env: ...}" },
	{ "environment_variables", "perfgate calls it 'command_env' (or server: {env: ...})" },
	{ "env", "it belongs under 'server', or 'command_env' for an external command" },
	{ "num_warmups", "perfgate calls it 'warmups', under 'client'" },
	{ "metric_percentiles", "perfgate calls it 'percentiles', under 'client'" },
};
/* clang-format on */

static const struct table *all_tables[] = {
	&test_table,
	&server_table,
	&client_table,
	&dataset_table,
};

static const struct key *find_key(const struct table *tab, const char *name)
{
	for (size_t i = 0; i < tab->n; i++)
		if (!strcmp(tab->keys[i].name, name))
			return &tab->keys[i];
	return NULL;
}

static int unknown_key(struct sctx *c, const struct table *tab, const struct pg_ypair *pr,
		       const struct pg_ypath *p)
{
	const char *names[64];
	const char *near;
	size_t n = 0;
	char normal[128];

	/* the same key spelt with dashes (vLLM's files mix both) */
	snprintf(normal, sizeof(normal), "%s", pr->key);
	for (char *s = normal; *s; s++)
		if (*s == '-')
			*s = '_';
	if (strcmp(normal, pr->key) && find_key(tab, normal))
		return pg_yerr(c->d, pr->key_node, p, E(c), "unknown key '%s' (did you mean '%s'?)",
			       pr->key, normal);
	for (size_t i = 0; i < sizeof(renamed) / sizeof(renamed[0]); i++)
		if (!strcmp(normal, renamed[i].theirs))
			return pg_yerr(c->d, pr->key_node, p, E(c), "unknown key '%s' (%s)",
				       pr->key, renamed[i].hint);
	for (size_t i = 0; i < tab->n && n < 64; i++)
		if (strcmp(tab->keys[i].name, "api_key"))
			names[n++] = tab->keys[i].name;
	near = pg_nearest(pr->key, names, n);
	if (near)
		return pg_yerr(c->d, pr->key_node, p, E(c), "unknown key '%s' (did you mean '%s'?)",
			       pr->key, near);
	/* a key of another level: say where it goes */
	for (size_t k = 0; k < sizeof(all_tables) / sizeof(all_tables[0]); k++) {
		const struct table *other = all_tables[k];
		if (other == tab || !find_key(other, pr->key) || !strcmp(pr->key, "name"))
			continue;
		if (other == &test_table)
			return pg_yerr(c->d, pr->key_node, p, E(c),
				       "unknown key '%s' (it is a test key: move it out of '%s')",
				       pr->key, tab->name);
		if (tab == &test_table)
			return pg_yerr(c->d, pr->key_node, p, E(c),
				       "unknown key '%s' (it belongs under '%s')", pr->key,
				       other->name);
	}
	return pg_yerr(c->d, pr->key_node, p, E(c), "unknown key '%s'", pr->key);
}

static const char *kinds_text(unsigned kinds)
{
	switch (kinds) {
	case K_LAT:
		return "latency tests only";
	case K_TPUT:
		return "throughput tests only";
	case K_SERV:
		return "serving tests only";
	case K_TPUT | K_SERV:
		return "throughput and serving tests only";
	case K_LAT | K_SERV:
		return "latency and serving tests only";
	case K_BOOT:
		return "startup tests only";
	case K_ALL:
		return "latency, throughput and serving tests (a startup test sends no prompts)";
	default:
		return "other tests only";
	}
}

static int apply_map(struct sctx *c, struct pg_test *t, yaml_node_t *map, const struct pg_ypath *p,
		     const struct table *tab, const char *what)
{
	struct pg_ypair *pairs = NULL;
	size_t n = 0;
	int ret;

	if ((ret = pg_ymap_pairs(c->d, map, p, what, &pairs, &n, E(c))))
		return ret;
	for (size_t i = 0; i < n; i++) {
		const struct key *k = find_key(tab, pairs[i].key);
		struct pg_ypath kp = { p, pairs[i].key, 0 };

		if (!k) {
			ret = unknown_key(c, tab, &pairs[i], p);
			break;
		}
		if (!(k->kinds & (1u << t->kind)) && c->mode != MODE_CHECK) {
			if (c->mode == MODE_DEFAULTS)
				continue;
			if (!strcmp(k->name, "dataset"))
				ret = pg_yerr(
					c->d, pairs[i].key_node, p, E(c),
					"'dataset' applies to throughput and serving tests only "
					"(latency prompts are random: set input_len and output_len)");
			else
				ret = pg_yerr(c->d, pairs[i].key_node, p, E(c),
					      "'%s' applies to %s", k->name, kinds_text(k->kinds));
			break;
		}
		if ((ret = k->fn(c, t, pairs[i].value, &kp)))
			break;
	}
	free(pairs);
	return ret;
}

/* ---- whole-test checks ----------------------------------------------- */

static const char *const runtime_names[] = { "port",        "host",  "base_url", "result",
					     "results_dir", "point", "qps",      "max_concurrency",
					     "side",        "block", "start" };
/* values that differ between the points one server serves */
static const char *const point_names[] = { "point", "qps", "max_concurrency" };
/* clang-format off */
static const char *const builtin_names[] = {
	"name", "model", "tp", "input_len", "output_len", "batch_size", "num_prompts",
	"iterations", "warmup_iterations", "dataset_path",
};
/* clang-format on */

static const char *dummy_lookup(void *ctx, const char *name)
{
	(void)ctx;
	(void)name;
	return "x";
}

/* Whether name is one a role's command may use: {replica}, and each
 * role's {<role>_urls} and {<role>_ports}. */
static bool role_var(const struct pg_test *t, const char *name)
{
	if (!strcmp(name, "replica"))
		return true;
	for (size_t i = 0; i < t->server.n_roles; i++) {
		size_t len = strlen(t->server.roles[i].name);
		if (!strncmp(name, t->server.roles[i].name, len) &&
		    (!strcmp(name + len, "_urls") || !strcmp(name + len, "_ports")))
			return true;
	}
	return false;
}

static int check_template(struct sctx *c, const struct pg_test *t, const char *tmpl, bool shell,
			  const yaml_node_t *at, const struct pg_ypath *p, bool is_server,
			  bool is_role)
{
	struct pg_strv names = PG_STRV_INIT, role_names = PG_STRV_INIT;
	struct pg_error tmp = PG_ERROR_INIT;
	bool has_result = false, has_port = false;
	int ret = 0;

	if (pg_template_names(&names, tmpl, &tmp)) {
		ret = pg_yerr(c->d, at, p, E(c), "%s", tmp.msg);
		goto done;
	}
	for (size_t i = 0; i < names.n; i++) {
		const char *name = names.v[i];
		char scratch[32];
		bool runtime = false;

		for (size_t r = 0; r < sizeof(runtime_names) / sizeof(runtime_names[0]); r++)
			runtime = runtime || !strcmp(name, runtime_names[r]);
		/* {base_url} carries the port too */
		has_port = has_port || !strcmp(name, "port") || !strcmp(name, "base_url");
		if (!strcmp(name, "result")) {
			has_result = true;
			if (is_server) {
				ret = pg_yerr(
					c->d, at, p, E(c),
					"'{result}' is the result file of an external 'command'; "
					"a server command cannot use it");
				goto done;
			}
		}
		for (size_t r = 0; is_server && r < sizeof(point_names) / sizeof(point_names[0]);
		     r++) {
			if (!strcmp(name, point_names[r])) {
				ret = pg_yerr(
					c->d, at, p, E(c),
					"'{%s}' differs between the points one server serves; "
					"a server command cannot use it",
					name);
				goto done;
			}
		}
		if (runtime || (is_role && role_var(t, name)))
			continue;
		if (pg_test_var(t, name, scratch))
			continue;
		if (!strcmp(name, "dataset_path")) {
			ret = pg_yerr(c->d, at, p, E(c),
				      "uses {dataset_path} but the test has no dataset path");
			goto done;
		}
		{
			const char *cands[64];
			size_t n = 0;
			const char *near;

			for (size_t k = 0; k < sizeof(builtin_names) / sizeof(builtin_names[0]);
			     k++)
				cands[n++] = builtin_names[k];
			for (size_t k = 0; k < sizeof(runtime_names) / sizeof(runtime_names[0]);
			     k++)
				cands[n++] = runtime_names[k];
			for (size_t k = 0; k < t->vars.n && n < 64; k++)
				cands[n++] = t->vars.items[k].key;
			for (size_t k = 0; is_role && k < t->server.n_roles; k++) {
				struct pg_buf b = PG_BUF_INIT;
				pg_buf_printf(&b, "%s_urls", t->server.roles[k].name);
				pg_strv_push_owned(&role_names, pg_buf_detach(&b));
				pg_buf_printf(&b, "%s_ports", t->server.roles[k].name);
				pg_strv_push_owned(&role_names, pg_buf_detach(&b));
			}
			if (is_role)
				pg_strv_push(&role_names, "replica");
			for (size_t k = 0; k < role_names.n && n < 64; k++)
				cands[n++] = role_names.v[k];
			near = pg_nearest(name, cands, n);
			if (near)
				ret = pg_yerr(c->d, at, p, E(c),
					      "unknown placeholder '{%s}' (did you mean '{%s}'?)",
					      name, near);
			else
				ret = pg_yerr(c->d, at, p, E(c),
					      "unknown placeholder '{%s}' (define it under 'vars')",
					      name);
			goto done;
		}
	}
	if (!is_server && !has_result) {
		ret = pg_yerr(
			c->d, at, p, E(c),
			"the command must write its result to {result} (e.g. --output-json {result})");
		goto done;
	}
	if (is_server && !has_port) {
		/* perfgate waits for the server on the port it picked: one that
		 * never hears of it listens elsewhere, and the wait would only
		 * end at ready_timeout (20 minutes by default) */
		ret = pg_yerr(c->d, at, p, E(c),
			      "the %s command has no {port}: perfgate starts it on a free loopback "
			      "port and waits for it there, so the command must listen on it "
			      "(e.g. --port {port})%s",
			      is_role ? "role's" : "server",
			      is_role ? ""
				      : "; a server already running on a fixed port is "
					"server.remote: http://127.0.0.1:8000");
		goto done;
	}
	/* quoting: an unterminated quote is found now, not at run time */
	if (shell) {
		struct pg_buf b = PG_BUF_INIT;
		if (pg_template_shell(&b, tmpl, dummy_lookup, NULL, &tmp))
			ret = pg_yerr(c->d, at, p, E(c), "%s", tmp.msg);
		pg_buf_release(&b);
	} else {
		struct pg_strv argv = PG_STRV_INIT;
		if (pg_template_argv(&argv, tmpl, dummy_lookup, NULL, &tmp))
			ret = pg_yerr(c->d, at, p, E(c), "%s", tmp.msg);
		pg_strv_release(&argv);
	}
done:
	pg_strv_release(&names);
	pg_strv_release(&role_names);
	return ret;
}

/* A deployment sets {replica}, {<role>_urls} and {<role>_ports} at run
 * time: a var of that name (of any layer) would be silently ignored in the
 * roles' commands, or replace the value in the other commands. */
static int check_role_vars(struct sctx *c, const struct pg_test *t)
{
	for (int l = LAYER_TEST; l >= 0; l--) {
		struct pg_ypath vp = { c->vars_up[l], "vars", 0 };
		struct pg_ypair *pairs = NULL;
		size_t n = 0;
		int ret = 0;

		if (!c->vars_node[l] ||
		    pg_ymap_pairs(c->d, c->vars_node[l], &vp, "a mapping of template variables",
				  &pairs, &n, E(c)))
			continue;
		for (size_t i = 0; i < n && !ret; i++)
			if (role_var(t, pairs[i].key))
				ret = pg_yerr(c->d, pairs[i].key_node, &vp, E(c),
					      "'%s' is set by the deployment at run time and "
					      "cannot be a var",
					      pairs[i].key);
		free(pairs);
		if (ret)
			return ret;
	}
	return 0;
}

static int finish_test(struct sctx *c, struct pg_test *t, yaml_node_t *node,
		       const struct pg_ypath *p)
{
	struct pg_ypath sp = { p, "server", 0 };
	struct pg_ypath scp = { &sp, "command", 0 };
	struct pg_ypath cp = { p, "command", 0 };
	struct pg_ypath dp = { p, "dataset", 0 };
	struct pg_ypath dpp = { &dp, "path", 0 };

	if (!t->name)
		return pg_yerr(c->d, node, p, E(c), "missing required key 'name'");
	if (!t->model)
		return pg_yerr(c->d, node, p, E(c), "test '%s': missing required key 'model'",
			       t->name);

	/* An external command that brings its own engine (vllm bench latency)
	 * must not also get the server every test inherits from defaults. */
	if (t->command && t->server.command && c->server_cmd_layer < c->command_layer) {
		free(t->server.command);
		t->server.command = NULL;
		t->server.shell = false;
	}
	if (t->kind == PG_SUITE_STARTUP) {
		/* perfgate's starts of server.command, or an external command
		 * that measures starts itself (vllm bench startup) */
		if (t->command && t->server.command)
			return pg_yerr(c->d, node, p, E(c),
				       "test '%s': a startup test either starts server.command "
				       "itself or runs command (vllm bench startup ... "
				       "--output-json {result}), not both",
				       t->name);
		if (!t->server.command && !t->command)
			return pg_yerr(
				c->d, node, p, E(c),
				"test '%s': a startup test starts its server: give "
				"server.command (server.remote cannot be started), or a "
				"command that writes vllm bench startup's result to {result}",
				t->name);
		if (t->cold_starts + t->warm_starts < 1)
			return pg_yerr(c->d, node, p, E(c),
				       "test '%s': nothing to measure: cold_starts and warm_starts "
				       "are both 0",
				       t->name);
	}
	if (!t->command && !t->server.command && !t->server.remote && !t->server.n_roles)
		return pg_yerr(
			c->d, node, p, E(c),
			"test '%s': nothing to run: give server.command, server.remote or command",
			t->name);
	if (t->server.command && check_template(c, t, t->server.command, t->server.shell,
						c->server_cmd_node, &scp, true, false))
		return PG_ECONFIG;
	if (t->server.n_roles && check_role_vars(c, t))
		return PG_ECONFIG;
	for (size_t i = 0; i < t->server.n_roles; i++) {
		struct pg_ypath dlp = { &sp, "deployment", 0 };
		struct pg_ypath rp = { &dlp, t->server.roles[i].name, 0 };
		struct pg_ypath rcp = { &rp, "command", 0 };
		if (check_template(c, t, t->server.roles[i].command, t->server.roles[i].shell,
				   c->role_cmd_nodes[i], &rcp, true, true))
			return PG_ECONFIG;
	}
	if (t->command &&
	    check_template(c, t, t->command, t->command_shell, c->command_node, &cp, false, false))
		return PG_ECONFIG;
	if (t->command_env.n && !t->command)
		return pg_yerr(c->d, c->command_env_node, p, E(c),
			       "'command_env' is for an external 'command', and this test has none "
			       "(the server's environment is server.env)");

	if (t->warmup.kind == PG_WARMUP_REQUESTS &&
	    (t->command || t->dataset.kind == PG_DATASET_MULTI_TURN)) {
		struct pg_ypath wp = { p, "warmup", 0 };
		pg_cfg_warn(c->cfg,
			    pg_ymsg(c->d, c->warmup_node ? c->warmup_node : node, &wp,
				    "test '%s': %ld warm-up requests are not sent: %s; 'warmup: "
				    "repeat' runs the point once unmeasured instead",
				    t->name, t->warmup.requests,
				    t->command
					    ? "an external command sends its own requests "
					      "(vllm bench serve --num-warmups warms up inside it)"
					    : "they would fill the prefix cache the sessions "
					      "measure"));
	}
	{
		struct pg_error tmp = PG_ERROR_INIT;
		struct pg_ypath rp = { p, "ramp_up", 0 };

		if (pg_test_check_ramp_up(t, &tmp))
			return pg_yerr(c->d, c->ramp_up_node, &rp, E(c), "test '%s': %s", t->name,
				       tmp.msg);
	}
	if (t->sla_search.enabled) {
		bool bounded = false;
		struct pg_ypath slap = { p, "sla_search", 0 };

		for (size_t i = 0; i < t->n_max_concurrency; i++)
			bounded = bounded || t->max_concurrency[i] > 0;
		if (!bounded)
			return pg_yerr(
				c->d, c->sla_search_node, &slap, E(c),
				"test '%s': the search starts from the test's max_concurrency "
				"points: give at least one (e.g. max_concurrency: [16, 64])",
				t->name);
	}
	if (t->min_num_prompts > t->max_num_prompts)
		return pg_yerr(c->d, c->prompt_bounds_node, p, E(c),
			       "test '%s': min_num_prompts (%ld) is above max_num_prompts (%ld)",
			       t->name, t->min_num_prompts, t->max_num_prompts);

	/* file datasets take each prompt's output length from the data unless
	 * told otherwise, as vLLM does for sharegpt */
	if (t->dataset.kind != PG_DATASET_RANDOM && t->dataset.kind != PG_DATASET_MULTI_TURN &&
	    !c->output_len_node)
		t->dataset.output_len = 0;
	switch (t->dataset.kind) {
	case PG_DATASET_RANDOM:
		if (t->dataset.path)
			return pg_yerr(
				c->d, c->dataset_path_node, &dpp, E(c),
				"the random dataset reads no file: set dataset.name to sharegpt "
				"or jsonl, or drop the path (path: null)");
		if (t->dataset.output_len < 1)
			return pg_yerr(
				c->d, c->output_len_node, p, E(c),
				"random prompts need output_len >= 1 (0 means 'from the data' "
				"for sharegpt and jsonl)");
		break;
	case PG_DATASET_MULTI_TURN: {
		const yaml_node_t *at = c->dataset_name_node ? c->dataset_name_node : node;
		if (t->kind != PG_SUITE_SERVING)
			return pg_yerr(c->d, at, &dp, E(c),
				       "test '%s': multi_turn is a serving workload", t->name);
		if (t->dataset.output_len < 1)
			return pg_yerr(c->d, c->output_len_node ? c->output_len_node : node, p,
				       E(c), "multi_turn answers need output_len >= 1");
		for (size_t i = 0; i < t->n_max_concurrency; i++)
			if (t->max_concurrency[i] > 0)
				return pg_yerr(c->d, at, &dp, E(c),
					       "test '%s': multi_turn sends one turn per user at "
					       "a time (users bound the concurrency): drop "
					       "max_concurrency",
					       t->name);
		if (!isnan(t->dataset.sessions.think_time))
			for (size_t i = 0; i < t->n_qps; i++)
				if (!isinf(t->qps[i]))
					return pg_yerr(
						c->d, at, &dp, E(c),
						"test '%s': a think_time paces each user, a qps "
						"the users together: give one (qps: inf with "
						"think_time)",
						t->name);
		if (t->ramp_up.strategy != PG_RAMP_NONE)
			return pg_yerr(c->d, at, &dp, E(c),
				       "test '%s': multi_turn has no ramp_up (users join "
				       "join_interval apart)",
				       t->name);
		if (t->dataset.sessions.users > 10000000 / t->dataset.sessions.rounds)
			return pg_yerr(c->d, at, &dp, E(c),
				       "test '%s': multi_turn of %ld users x %ld rounds: at most "
				       "10,000,000 turns a point",
				       t->name, t->dataset.sessions.users,
				       t->dataset.sessions.rounds);
		if (t->client.num_warmups > 0)
			pg_cfg_warn(
				c->cfg,
				pg_ymsg(c->d, at, &dp,
					"test '%s': client.warmups are not sent for multi_turn "
					"(they would fill the prefix cache before the measurement)",
					t->name));
		/* every point sends users x rounds turns */
		t->num_prompts = t->dataset.sessions.users * t->dataset.sessions.rounds;
		t->prompts_per_concurrency = 0;
		t->certify_tails = false;
		break;
	}
	case PG_DATASET_SHAREGPT:
	case PG_DATASET_JSONL:
	case PG_DATASET_SONNET:
		if (!t->dataset.path)
			return pg_yerr(c->d, c->dataset_name_node ? c->dataset_name_node : node,
				       &dp, E(c), "dataset '%s' needs a path to the file",
				       t->dataset.kind == PG_DATASET_SHAREGPT ? "sharegpt"
				       : t->dataset.kind == PG_DATASET_SONNET ? "sonnet"
									      : "jsonl");
		if (t->dataset.kind == PG_DATASET_SONNET && t->dataset.output_len < 1)
			return pg_yerr(c->d, c->output_len_node ? c->output_len_node : node, p,
				       E(c), "sonnet prompts need output_len >= 1");
		break;
	}
	return 0;
}

/* ---- the file -------------------------------------------------------- */

struct defaults {
	yaml_node_t *general;              /* `defaults` without kind sections */
	yaml_node_t *kind[PG_SUITE_COUNT]; /* defaults.latency ... */
	struct pg_ypath path;
	struct pg_ypath kind_path[PG_SUITE_COUNT];
};

/* Apply `defaults` minus its kind sections: apply_map would call them
 * unknown keys, so they are filtered here. */
static int apply_general_defaults(struct sctx *c, struct pg_test *t, const struct defaults *df)
{
	struct pg_ypair *pairs = NULL;
	size_t n = 0;
	int ret;

	if (!df->general)
		return 0;
	if ((ret = pg_ymap_pairs(c->d, df->general, &df->path, "a mapping of test keys", &pairs, &n,
				 E(c))))
		return ret;
	for (size_t i = 0; i < n && !ret; i++) {
		const struct key *k;
		struct pg_ypath kp = { &df->path, pairs[i].key, 0 };

		if (pg_suite_kind_parse(pairs[i].key) >= 0)
			continue;
		k = find_key(&test_table, pairs[i].key);
		if (!k) {
			ret = unknown_key(c, &test_table, &pairs[i], &df->path);
			break;
		}
		if (!strcmp(k->name, "name")) {
			ret = pg_yerr(c->d, pairs[i].value, &kp, E(c),
				      "a name cannot be a default: every test names itself");
			break;
		}
		if (!(k->kinds & (1u << t->kind)) && c->mode != MODE_CHECK)
			continue;
		ret = k->fn(c, t, pairs[i].value, &kp);
	}
	free(pairs);
	return ret;
}

static void reset_tracking(struct sctx *c)
{
	c->server_cmd_node = NULL;
	c->server_cmd_layer = LAYER_DEFAULTS;
	c->command_node = NULL;
	c->command_layer = LAYER_DEFAULTS;
	c->command_env_node = NULL;
	c->dataset_name_node = NULL;
	c->dataset_path_node = NULL;
	c->output_len_node = NULL;
	c->prompt_bounds_node = NULL;
	c->ramp_up_node = NULL;
	c->sla_search_node = NULL;
	c->warmup_node = NULL;
	for (int l = 0; l <= LAYER_TEST; l++) {
		c->vars_node[l] = NULL;
		c->vars_up[l] = NULL;
	}
}

static int build_test(struct sctx *c, struct pg_test *t, enum pg_suite_kind kind,
		      const struct defaults *df, yaml_node_t *node, const struct pg_ypath *p)
{
	pg_test_init(t, kind);
	reset_tracking(c);

	c->mode = MODE_DEFAULTS;
	c->layer = LAYER_DEFAULTS;
	if (apply_general_defaults(c, t, df))
		return PG_ECONFIG;
	c->mode = MODE_STRICT;
	c->layer = LAYER_KIND_DEFAULTS;
	if (df->kind[kind] && apply_map(c, t, df->kind[kind], &df->kind_path[kind], &test_table,
					"a mapping of test keys"))
		return PG_ECONFIG;
	c->layer = LAYER_TEST;
	if (apply_map(c, t, node, p, &test_table, "a mapping of test keys (name, model, ...)"))
		return PG_ECONFIG;
	return finish_test(c, t, node, p);
}

/* Read `defaults` and check it once, whether or not any test uses it. */
static int read_defaults(struct sctx *c, yaml_node_t *node, const struct pg_ypath *base,
			 struct defaults *df)
{
	struct pg_ypair *pairs = NULL;
	size_t n = 0;
	struct pg_test scratch;
	int ret;

	memset(df, 0, sizeof(*df));
	df->path = (struct pg_ypath){ base, "defaults", 0 };
	for (int k = 0; k < PG_SUITE_COUNT; k++)
		df->kind_path[k] = (struct pg_ypath){ &df->path, pg_suite_kind_name(k), 0 };
	if (!node || pg_ynode_is_null(node))
		return 0;
	if ((ret = pg_ymap_pairs(c->d, node, &df->path, "a mapping of default test keys", &pairs,
				 &n, E(c))))
		return ret;
	df->general = node;
	for (size_t i = 0; i < n; i++) {
		int kind = pg_suite_kind_parse(pairs[i].key);
		if (kind >= 0)
			df->kind[kind] = pg_ynode_is_null(pairs[i].value) ? NULL : pairs[i].value;
	}
	free(pairs);

	reset_tracking(c);
	pg_test_init(&scratch, PG_SUITE_SERVING);
	c->mode = MODE_CHECK;
	c->layer = LAYER_DEFAULTS;
	ret = apply_general_defaults(c, &scratch, df);
	pg_test_release(&scratch);
	for (int k = 0; k < PG_SUITE_COUNT && !ret; k++) {
		if (!df->kind[k])
			continue;
		pg_test_init(&scratch, (enum pg_suite_kind)k);
		c->mode = MODE_STRICT;
		c->layer = LAYER_KIND_DEFAULTS;
		ret = apply_map(c, &scratch, df->kind[k], &df->kind_path[k], &test_table,
				"a mapping of test keys");
		pg_test_release(&scratch);
	}
	return ret;
}

static int read_section(struct sctx *c, enum pg_suite_kind kind, yaml_node_t *list,
			const struct defaults *df, const struct pg_ypath *sp)
{
	if (pg_ynode_is_null(list))
		return 0;
	if (!pg_ynode_is_seq(list))
		return pg_yexpected(c->d, list, sp, E(c),
				    "a list of tests (each starting with '- ')");
	for (size_t i = 0; i < pg_yseq_len(list); i++) {
		yaml_node_t *node = pg_yseq_item(c->d, list, i);
		struct pg_ypath tp = { sp, NULL, i };
		struct pg_ypath np = { &tp, "name", 0 };
		struct pg_test t;

		if (build_test(c, &t, kind, df, node, &tp)) {
			pg_test_release(&t);
			return PG_ECONFIG;
		}
		t.loc.file = pg_xstrdup(c->d->file);
		t.loc.line = pg_ydoc_line(c->d, node);
		t.loc.column = pg_ydoc_column(c->d, node);
		if (pg_cfg_add_test(c->cfg, &t, c->d, pg_ymap_get(c->d, node, "name"), &np)) {
			pg_test_release(&t);
			return PG_ECONFIG;
		}
	}
	return 0;
}

int pg_cfg_suite(struct pg_cfg *cfg, const struct pg_ydoc *d, yaml_node_t *root,
		 const struct pg_ypath *base)
{
	static const char *const sections[] = { "defaults", "latency", "throughput", "serving",
						"startup",  "gpu",     "ab" };
	struct sctx c = { .cfg = cfg, .d = d };
	struct pg_ypair *pairs = NULL;
	struct defaults df;
	size_t n = 0;
	int ret;

	if ((ret = pg_ymap_pairs(d, root, base,
				 "a suite: a mapping with latency, throughput or serving tests",
				 &pairs, &n, cfg->err)))
		return ret;
	for (size_t i = 0; i < n; i++) {
		bool known = pg_str_has_prefix(pairs[i].key, "x-"); /* room for YAML anchors */
		for (size_t k = 0; k < sizeof(sections) / sizeof(sections[0]); k++)
			known = known || !strcmp(pairs[i].key, sections[k]);
		if (!known) {
			const char *near = pg_nearest(pairs[i].key, sections, 7);
			if (near)
				ret = pg_yerr(d, pairs[i].key_node, base, cfg->err,
					      "unknown section '%s' (did you mean '%s'?)",
					      pairs[i].key, near);
			else
				ret = pg_yerr(
					d, pairs[i].key_node, base, cfg->err,
					"unknown section '%s': a suite has defaults, latency, "
					"throughput, serving, startup, gpu and ab",
					pairs[i].key);
			goto done;
		}
	}
	if ((ret = read_defaults(&c, pg_ymap_get(d, root, "defaults"), base, &df)))
		goto done;
	for (size_t i = 0; i < n; i++) {
		struct pg_ypath sp = { base, pairs[i].key, 0 };
		int kind = pg_suite_kind_parse(pairs[i].key);

		if (!strcmp(pairs[i].key, "gpu")) {
			char *gpu = NULL;
			if ((ret = pg_yget_string(d, pairs[i].value, &sp, &gpu, cfg->err)))
				goto done;
			ret = pg_cfg_set_gpu(cfg, gpu, d, pairs[i].value, &sp);
			free(gpu);
			if (ret)
				goto done;
		}
		if (!strcmp(pairs[i].key, "ab") && (ret = pg_cfg_ab(cfg, d, pairs[i].value, &sp)))
			goto done;
		if (kind >= 0 &&
		    (ret = read_section(&c, (enum pg_suite_kind)kind, pairs[i].value, &df, &sp)))
			goto done;
	}
done:
	free(pairs);
	return ret;
}
