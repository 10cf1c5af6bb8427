/*
 * vLLM's own test files (docs/design/vllm-benchmarks.md §6): latency-tests.json,
 * throughput-tests.json, serving-tests.json, as a top-level array or as
 * {"defaults": {...}, "tests": [...]}.
 *
 * Translation, chosen so that numbers stay comparable with vLLM's history:
 *  - latency and throughput tests become the external command vLLM's
 *    driver runs, `vllm bench <kind> --output-json {result} <flags>`, with
 *    environment_variables as the command's environment;
 *  - serving tests become a `vllm serve <model> <flags>` server (bound to
 *    the loopback address and a port perfgate picks) driven by perfgate's
 *    own client, with client_parameters mapped onto client settings. A
 *    client flag perfgate cannot honour is a warning, never silence.
 *
 * Flags are spelt the way vLLM's json2args spells them: "--" + key with
 * '_' turned into '-', then the value as written ("" alone: a boolean
 * flag; objects and lists as compact JSON). Keys may be written with
 * dashes or underscores; they are compared in underscore form.
 */
#include "suite/config_io_impl.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/jsonw.h"
#include "loadgen/loadstats.h"
#include "base/strutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One flag of a merged parameter object, and where it was written. */
struct vparam {
	const char *key;
	yaml_node_t *key_node;
	yaml_node_t *value;
	const struct pg_ypath *parent;
};

struct vparams {
	struct vparam *v;
	size_t n;
	size_t cap;
};

struct vctx {
	struct pg_cfg *cfg;
	const struct pg_ydoc *d;
};

static struct pg_error *E(struct vctx *c)
{
	return c->cfg->err;
}

static void normalise(char *out, size_t size, const char *key)
{
	snprintf(out, size, "%s", key);
	for (char *s = out; *s; s++)
		if (*s == '-')
			*s = '_';
}

/* jq's `a + b` on objects: b's values replace a's, new keys append. */
static int vparams_merge(struct vctx *c, struct vparams *ps, yaml_node_t *obj,
			 const struct pg_ypath *p)
{
	struct pg_ypair *pairs = NULL;
	size_t n = 0;
	int ret;

	if (!obj || pg_ynode_is_null(obj))
		return 0;
	if ((ret = pg_ymap_pairs(c->d, obj, p, "a mapping of flags to values", &pairs, &n, E(c))))
		return ret;
	for (size_t i = 0; i < n; i++) {
		struct vparam v = { pairs[i].key, pairs[i].key_node, pairs[i].value, p };
		size_t k;

		for (k = 0; k < ps->n; k++)
			if (!strcmp(ps->v[k].key, v.key))
				break;
		if (k < ps->n) {
			ps->v[k] = v;
			continue;
		}
		/* one mapping naming a flag twice, once with dashes */
		for (k = 0; k < ps->n; k++) {
			char a[128], b[128];
			normalise(a, sizeof(a), ps->v[k].key);
			normalise(b, sizeof(b), v.key);
			if (ps->v[k].parent == p && !strcmp(a, b)) {
				ret = pg_yerr(c->d, v.key_node, p, E(c),
					      "'%s' and '%s' are the same flag: give it once",
					      ps->v[k].key, v.key);
				goto done;
			}
		}
		PG_ARRAY_PUSH(ps->v, ps->n, ps->cap, v);
	}
done:
	free(pairs);
	return ret;
}

/* The last entry whose key reads `name` in underscore form. */
static const struct vparam *vparams_get(const struct vparams *ps, const char *name)
{
	const struct vparam *found = NULL;
	char k[128];

	for (size_t i = 0; i < ps->n; i++) {
		normalise(k, sizeof(k), ps->v[i].key);
		if (!strcmp(k, name))
			found = &ps->v[i];
	}
	return found;
}

/* A value as jq's tostring gives it, as the word bash makes of it: the
 * driver runs its commands with `bash -c`, so a value written in single
 * quotes ("'{\"image\": 3}'", as vLLM's multimodal files write JSON)
 * reaches vLLM without them. Caller frees. */
static char *value_text(const struct pg_ydoc *d, const yaml_node_t *v)
{
	struct pg_buf b = PG_BUF_INIT;
	json_t *j;

	if (pg_ynode_is_scalar(v)) {
		const char *s = pg_ynode_text(v);
		size_t n = strlen(s);

		if (n >= 2 && s[0] == '\'' && s[n - 1] == '\'' && !memchr(s + 1, '\'', n - 2))
			return pg_xstrndup(s + 1, n - 2);
		return pg_xstrdup(s);
	}
	j = pg_ynode_to_json(d, v);
	pg_json_write(&b, j, 0);
	json_decref(j);
	return pg_buf_detach(&b);
}

/* Append one literal word to a command template: shell-quoted where
 * needed, braces doubled so they are not placeholders. */
static void tmpl_word(struct pg_buf *tmpl, const char *word)
{
	struct pg_buf q = PG_BUF_INIT;

	pg_shell_quote(&q, word);
	if (tmpl->len)
		pg_buf_putc(tmpl, ' ');
	for (const char *s = q.ptr; *s; s++) {
		if (*s == '{' || *s == '}')
			pg_buf_putc(tmpl, *s);
		pg_buf_putc(tmpl, *s);
	}
	pg_buf_release(&q);
}

/* json2args: "--key-with-dashes value" per flag, "" alone for a switch. */
static void tmpl_flags(struct vctx *c, struct pg_buf *tmpl, const struct vparams *ps,
		       const char *const *skip)
{
	for (size_t i = 0; i < ps->n; i++) {
		struct pg_buf flag = PG_BUF_INIT;
		char norm[128];
		bool skipped = false;
		char *text;

		normalise(norm, sizeof(norm), ps->v[i].key);
		for (size_t k = 0; skip && skip[k]; k++)
			skipped = skipped || !strcmp(norm, skip[k]);
		if (skipped)
			continue;
		pg_buf_puts(&flag, "--");
		for (const char *s = ps->v[i].key; *s; s++)
			pg_buf_putc(&flag, *s == '_' ? '-' : *s);
		tmpl_word(tmpl, flag.ptr);
		text = value_text(c->d, ps->v[i].value);
		if (*text || !pg_ynode_is_scalar(ps->v[i].value))
			tmpl_word(tmpl, text);
		free(text);
		pg_buf_release(&flag);
	}
}

static int read_env(struct vctx *c, struct pg_kvlist *env, const struct vparams *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		const struct vparam *v = &ps->v[i];
		char *text;

		for (const char *s = v->key; *s; s++) {
			if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
			      (s != v->key && *s >= '0' && *s <= '9')))
				return pg_yerr(c->d, v->key_node, v->parent, E(c),
					       "'%s' is not a valid environment variable name",
					       v->key);
		}
		text = value_text(c->d, v->value);
		pg_kvlist_set(env, v->key, text);
		free(text);
	}
	return 0;
}

/* Numbers in vLLM's files may be JSON numbers or strings ("200"): the
 * driver pastes their text onto a command line either way. */
static int vlong(struct vctx *c, const struct vparam *v, long min, long *out)
{
	struct pg_ypath p = { v->parent, v->key, 0 };
	long x;

	if (!pg_ynode_is_scalar(v->value) || pg_parse_long(pg_ynode_text(v->value), &x) || x < min)
		return pg_yexpected(c->d, v->value, &p, E(c), "a whole number >= %ld", min);
	*out = x;
	return 0;
}

static int vdouble(struct vctx *c, const struct vparam *v, bool inf_ok, double *out)
{
	struct pg_ypath p = { v->parent, v->key, 0 };
	double x;

	if (!pg_ynode_is_scalar(v->value) || pg_parse_double(pg_ynode_text(v->value), &x) ||
	    (isinf(x) && !inf_ok) || x < 0)
		return pg_yexpected(c->d, v->value, &p, E(c), "a number%s",
				    inf_ok ? " or 'inf'" : "");
	*out = x;
	return 0;
}

static char *vstring(const struct vparam *v)
{
	return pg_xstrdup(pg_ynode_text(v->value));
}

static void vwarn(struct vctx *c, const struct vparam *v, const char *what)
{
	struct pg_ypath p = { v->parent, v->key, 0 };
	pg_cfg_warn(c->cfg, pg_ymsg(c->d, v->key_node, &p, "%s", what));
}

/* ---- client_parameters ----------------------------------------------- */

typedef int (*cl_fn)(struct vctx *c, struct pg_test *t, const struct vparam *v);

static int c_backend(struct vctx *c, struct pg_test *t, const struct vparam *v)
{
	const char *s = pg_ynode_text(v->value);
	struct pg_ypath p = { v->parent, v->key, 0 };

	if (!strcmp(s, "vllm") || !strcmp(s, "openai"))
		return 0;
	if (!strcmp(s, "openai-chat")) {
		/* an explicit endpoint wins, whichever order they come in */
		if (!strcmp(t->client.endpoint, "/v1/completions")) {
			free(t->client.endpoint);
			t->client.endpoint = pg_xstrdup("/v1/chat/completions");
		}
		return 0;
	}
	return pg_yerr(c->d, v->value, &p, E(c),
		       "backend '%s' is not supported: perfgate's client speaks the OpenAI API "
		       "(vllm, openai, openai-chat)",
		       s);
}

static int c_endpoint(struct vctx *c, struct pg_test *t, const struct vparam *v)
{
	(void)c;
	free(t->client.endpoint);
	t->client.endpoint = vstring(v);
	return 0;
}

static int c_dataset_name(struct vctx *c, struct pg_test *t, const struct vparam *v)
{
	const char *s = pg_ynode_text(v->value);
	struct pg_ypath p = { v->parent, v->key, 0 };

	if (!strcmp(s, "random"))
		t->dataset.kind = PG_DATASET_RANDOM;
	else if (!strcmp(s, "sharegpt"))
		t->dataset.kind = PG_DATASET_SHAREGPT;
	else if (!strcmp(s, "custom"))
		t->dataset.kind = PG_DATASET_JSONL;
	else if (!strcmp(s, "sonnet"))
		t->dataset.kind = PG_DATASET_SONNET;
	else
		return pg_yerr(
			c->d, v->value, &p, E(c),
			"dataset '%s' is not supported: perfgate generates random, sharegpt, "
			"sonnet and custom (JSON lines) prompts",
			s);
	return 0;
}

static int c_dataset_path(struct vctx *c, struct pg_test *t, const struct vparam *v)
{
	(void)c;
	free(t->dataset.path);
	t->dataset.path = vstring(v);
	return 0;
}

static int c_num_prompts(struct vctx *c, struct pg_test *t, const struct vparam *v)
{
	return vlong(c, v, 1, &t->num_prompts);
}

/* Sonnet prompts take only their own --sonnet-* lengths, as vLLM's. */
static int c_input_len(struct vctx *c, struct pg_test *t, const struct vparam *v)
{
	return t->dataset.kind == PG_DATASET_SONNET ? 0 : vlong(c, v, 1, &t->dataset.input_len);
}

static int c_output_len(struct vctx *c, struct pg_test *t, const struct vparam *v)
{
	return t->dataset.kind == PG_DATASET_SONNET ? 0 : vlong(c, v, 1, &t->dataset.output_len);
}

static int c_sonnet_input(struct vctx *c, struct pg_test *t, const struct vparam *v)
{
	return t->dataset.kind == PG_DATASET_SONNET ? vlong(c, v, 1, &t->dataset.input_len) : 0;
}

static int c_sonnet_output(struct vctx *c, struct pg_test *t, const struct vparam *v)
{
	return t->dataset.kind == PG_DATASET_SONNET ? vlong(c, v, 1, &t->dataset.output_len) : 0;
}

static int c_sonnet_prefix(struct vctx *c, struct pg_test *t, const struct vparam *v)
{
	return t->dataset.kind == PG_DATASET_SONNET ? vlong(c, v, 0, &t->dataset.prefix_len) : 0;
}

static int c_range_ratio(struct vctx *c, struct pg_test *t, const struct vparam *v)
{
	struct pg_ypath p = { v->parent, v->key, 0 };

	if (vdouble(c, v, false, &t->dataset.range_ratio))
		return PG_ECONFIG;
	if (t->dataset.range_ratio >= 1)
		return pg_yerr(c->d, v->value, &p, E(c), "expected a ratio in [0, 1), got %s",
			       pg_ynode_text(v->value));
	return 0;
}

static int c_prefix_len(struct vctx *c, struct pg_test *t, const struct vparam *v)
{
	/* vllm bench serve reads --random-prefix-len for random prompts only */
	return t->dataset.kind == PG_DATASET_RANDOM ? vlong(c, v, 0, &t->dataset.prefix_len) : 0;
}

static int c_ignore_eos(struct vctx *c, struct pg_test *t, const struct vparam *v)
{
	(void)c;
	t->client.ignore_eos = strcmp(pg_ynode_text(v->value), "false") != 0;
	return 0;
}

static int c_temperature(struct vctx *c, struct pg_test *t, const struct vparam *v)
{
	return vdouble(c, v, false, &t->client.temperature);
}

/* Sampling flags vLLM's client moves into the request body. */
static int c_sampling(struct vctx *c, struct pg_test *t, const struct vparam *v)
{
	char key[128];
	double x = 0; /* (set when vdouble returns 0; -O3 cannot tell) */

	if (vdouble(c, v, false, &x))
		return PG_ECONFIG;
	normalise(key, sizeof(key), v->key);
	if (!t->client.extra_body)
		t->client.extra_body = json_object();
	if (x == floor(x) && fabs(x) < 1e15)
		json_object_set_new(t->client.extra_body, key, json_integer((json_int_t)x));
	else
		json_object_set_new(t->client.extra_body, key, json_real(x));
	return 0;
}

static int c_extra_body(struct vctx *c, struct pg_test *t, const struct vparam *v)
{
	struct pg_ypath p = { v->parent, v->key, 0 };
	json_t *body;

	if (pg_ynode_is_map(v->value)) {
		body = pg_ynode_to_json(c->d, v->value);
	} else {
		json_error_t jerr;
		body = json_loads(pg_ynode_text(v->value), 0, &jerr);
		if (!json_is_object(body)) {
			json_decref(body);
			return pg_yerr(c->d, v->value, &p, E(c), "expected a JSON object, got %s",
				       pg_ynode_text(v->value));
		}
	}
	if (!t->client.extra_body)
		t->client.extra_body = json_object();
	json_object_update_recursive(t->client.extra_body, body);
	json_decref(body);
	return 0;
}

static int c_seed(struct vctx *c, struct pg_test *t, const struct vparam *v)
{
	long x = 0; /* (set when vlong returns 0; -O3 cannot tell) */

	if (vlong(c, v, 0, &x))
		return PG_ECONFIG;
	t->client.seed = (unsigned long)x;
	return 0;
}

static int c_burstiness(struct vctx *c, struct pg_test *t, const struct vparam *v)
{
	struct pg_ypath p = { v->parent, v->key, 0 };

	if (vdouble(c, v, true, &t->burstiness))
		return PG_ECONFIG;
	if (!(t->burstiness > 0))
		return pg_yerr(c->d, v->value, &p, E(c), "expected a burstiness > 0");
	return 0;
}

static int c_ramp_strategy(struct vctx *c, struct pg_test *t, const struct vparam *v)
{
	const char *s = pg_ynode_text(v->value);
	struct pg_ypath p = { v->parent, v->key, 0 };

	if (!pg_ynode_is_scalar(v->value) ||
	    (t->ramp_up.strategy = pg_ramp_strategy_parse(s)) == PG_RAMP_NONE)
		return pg_yexpected(c->d, v->value, &p, E(c), "linear or exponential");
	return 0;
}

static int c_ramp_start(struct vctx *c, struct pg_test *t, const struct vparam *v)
{
	return vlong(c, v, 1, &t->ramp_up.start_rps);
}

static int c_ramp_end(struct vctx *c, struct pg_test *t, const struct vparam *v)
{
	return vlong(c, v, 1, &t->ramp_up.end_rps);
}

/* "25,50,99" -> {25, 50, 99} */
static int c_metric_percentiles(struct vctx *c, struct pg_test *t, const struct vparam *v)
{
	struct pg_ypath p = { v->parent, v->key, 0 };
	char *text = value_text(c->d, v->value);
	char *save = NULL;
	double *vals = NULL;
	size_t n = 0, cap = 0;
	int ret = 0;

	for (char *tok = strtok_r(text, ", []", &save); tok; tok = strtok_r(NULL, ", []", &save)) {
		double x;
		if (pg_parse_double(tok, &x) || !(x > 0 && x <= 100)) {
			ret = pg_yerr(
				c->d, v->value, &p, E(c),
				"expected percentiles in (0, 100] separated by commas, got '%s'",
				tok);
			goto done;
		}
		PG_ARRAY_PUSH(vals, n, cap, x);
	}
	if (n == 0) {
		ret = pg_yerr(c->d, v->value, &p, E(c), "no percentiles given");
		goto done;
	}
	free(t->client.percentiles);
	t->client.percentiles = vals;
	t->client.n_percentiles = n;
	vals = NULL;
done:
	free(vals);
	free(text);
	return ret;
}

static int c_percentile_metrics(struct vctx *c, struct pg_test *t, const struct vparam *v)
{
	struct pg_strv out = PG_STRV_INIT;
	char *text = value_text(c->d, v->value);
	char *save = NULL;

	for (char *tok = strtok_r(text, ", []\"", &save); tok;
	     tok = strtok_r(NULL, ", []\"", &save)) {
		if (pg_loadstats_metric_known(tok)) {
			pg_strv_push(&out, tok);
		} else {
			char note[256];
			snprintf(
				note, sizeof(note),
				"percentile metric '%s' is not measured by perfgate's client; dropped",
				tok);
			vwarn(c, v, note);
		}
	}
	free(text);
	if (out.n == 0) {
		pg_strv_release(&out);
		return 0;
	}
	pg_strv_release(&t->client.percentile_metrics);
	t->client.percentile_metrics = out;
	return 0;
}

/* "ttft:500 tpot:50" (or a list of "k:v") */
static int c_goodput(struct vctx *c, struct pg_test *t, const struct vparam *v)
{
	struct pg_ypath p = { v->parent, v->key, 0 };
	char *text = value_text(c->d, v->value);
	char *save = NULL;
	int ret = 0;

	for (char *tok = strtok_r(text, " ,[]\"", &save); tok;
	     tok = strtok_r(NULL, " ,[]\"", &save)) {
		char *colon = strchr(tok, ':');
		double x;

		if (!colon || pg_parse_double(colon + 1, &x) || !(x > 0) || isinf(x)) {
			ret = pg_yerr(c->d, v->value, &p, E(c),
				      "expected SLOs like 'ttft:500 tpot:50' (ms), got '%s'", tok);
			goto done;
		}
		*colon = '\0';
		if (!strcmp(tok, "ttft")) {
			t->goodput.ttft_ms = x;
		} else if (!strcmp(tok, "tpot")) {
			t->goodput.tpot_ms = x;
		} else if (!strcmp(tok, "e2el")) {
			t->goodput.e2el_ms = x;
		} else {
			ret = pg_yerr(c->d, v->value, &p, E(c),
				      "unknown goodput metric '%s': expected ttft, tpot or e2el",
				      tok);
			goto done;
		}
	}
done:
	free(text);
	return ret;
}

static int c_num_warmups(struct vctx *c, struct pg_test *t, const struct vparam *v)
{
	return vlong(c, v, 0, &t->client.num_warmups);
}

static int c_header(struct vctx *c, struct pg_test *t, const struct vparam *v)
{
	struct pg_ypath p = { v->parent, v->key, 0 };
	size_t n = pg_ynode_is_seq(v->value) ? pg_yseq_len(v->value) : 1;

	for (size_t i = 0; i < n; i++) {
		const yaml_node_t *item = pg_ynode_is_seq(v->value)
						  ? pg_yseq_item(c->d, v->value, i)
						  : v->value;
		char *kv = pg_xstrdup(pg_ynode_text(item));
		char *eq = strchr(kv, '=');

		if (!eq || eq == kv) {
			free(kv);
			return pg_yerr(c->d, item, &p, E(c), "expected KEY=VALUE headers");
		}
		*eq = '\0';
		pg_kvlist_set(&t->client.headers, kv, eq + 1);
		free(kv);
	}
	return 0;
}

static int c_served_model(struct vctx *c, struct pg_test *t, const struct vparam *v)
{
	(void)c;
	free(t->client.served_model);
	t->client.served_model = vstring(v);
	return 0;
}

static int c_skip(struct vctx *c, struct pg_test *t, const struct vparam *v)
{
	(void)c;
	(void)t;
	(void)v;
	return 0;
}

/* clang-format off */
static const struct {
	const char *name;
	cl_fn fn;           /* NULL: ignored with `why` as a warning */
	const char *why;
} client_flags[] = {
	{ "model", c_skip, NULL },
	{ "backend", c_backend, NULL },
	{ "endpoint", c_endpoint, NULL },
	{ "dataset_name", c_dataset_name, NULL },
	{ "dataset_path", c_dataset_path, NULL },
	{ "dataset", c_dataset_path, NULL },
	{ "num_prompts", c_num_prompts, NULL },
	{ "random_input_len", c_input_len, NULL },
	{ "input_len", c_input_len, NULL },
	{ "random_output_len", c_output_len, NULL },
	{ "output_len", c_output_len, NULL },
	{ "sharegpt_output_len", c_output_len, NULL },
	{ "custom_output_len", c_output_len, NULL },
	{ "sonnet_input_len", c_sonnet_input, NULL },
	{ "sonnet_output_len", c_sonnet_output, NULL },
	{ "sonnet_prefix_len", c_sonnet_prefix, NULL },
	{ "random_range_ratio", c_range_ratio, NULL },
	{ "random_prefix_len", c_prefix_len, NULL },
	{ "ignore_eos", c_ignore_eos, NULL },
	{ "temperature", c_temperature, NULL },
	{ "top_p", c_sampling, NULL },
	{ "top_k", c_sampling, NULL },
	{ "min_p", c_sampling, NULL },
	{ "frequency_penalty", c_sampling, NULL },
	{ "presence_penalty", c_sampling, NULL },
	{ "repetition_penalty", c_sampling, NULL },
	{ "extra_body", c_extra_body, NULL },
	{ "seed", c_seed, NULL },
	{ "burstiness", c_burstiness, NULL },
	{ "ramp_up_strategy", c_ramp_strategy, NULL },
	{ "ramp_up_start_rps", c_ramp_start, NULL },
	{ "ramp_up_end_rps", c_ramp_end, NULL },
	{ "metric_percentiles", c_metric_percentiles, NULL },
	{ "percentile_metrics", c_percentile_metrics, NULL },
	{ "goodput", c_goodput, NULL },
	{ "num_warmups", c_num_warmups, NULL },
	{ "header", c_header, NULL },
	{ "served_model_name", c_served_model, NULL },
	{ "disable_tqdm", c_skip, NULL },
	{ "request_rate", NULL, "qps_list sets the request rate; ignored" },
	{ "max_concurrency", NULL, "max_concurrency_list sets the concurrency; ignored" },
	{ "save_result", NULL, "perfgate writes the result files itself; ignored" },
	{ "save_detailed", NULL, "use 'perfgate run --save-detailed'; ignored" },
	{ "append_result", NULL, "perfgate writes the result files itself; ignored" },
	{ "result_dir", NULL, "perfgate writes the result files itself (--results-dir); ignored" },
	{ "result_filename", NULL, "perfgate names the result files itself; ignored" },
	{ "metadata", NULL, "perfgate records its own metadata; ignored" },
	{ "label", NULL, "perfgate records its own metadata; ignored" },
	{ "host", NULL, "perfgate points its client at the server it started; ignored" },
	{ "port", NULL, "perfgate points its client at the server it started; ignored" },
	{ "base_url", NULL, "perfgate points its client at the server it started; ignored" },
	{ "tokenizer", NULL, "perfgate's client does not tokenize; ignored" },
	{ "tokenizer_mode", NULL, "perfgate's client does not tokenize; ignored" },
	{ "trust_remote_code", NULL, "perfgate's client does not tokenize; ignored" },
	{ "ready_check_timeout_sec", NULL, "perfgate waits for the server itself (server.ready_timeout); ignored" },
};
/* clang-format on */

static int apply_client(struct vctx *c, struct pg_test *t, const struct vparams *ps)
{
	/* dataset and backend first, so that lengths and endpoints land on
	 * the right defaults whatever order the file lists them in */
	static const char *const first[] = { "dataset_name", "backend", NULL };

	/* vllm bench serve's defaults where they differ from perfgate's */
	t->client.ignore_eos = false;
	for (size_t f = 0; first[f]; f++) {
		const struct vparam *v = vparams_get(ps, first[f]);
		if (!v)
			continue;
		if (f == 0 && c_dataset_name(c, t, v))
			return PG_ECONFIG;
		if (f == 1 && c_backend(c, t, v))
			return PG_ECONFIG;
	}
	/* vLLM's defaults per dataset: sharegpt lengths come from the data,
	 * custom outputs are 256 tokens */
	if (t->dataset.kind == PG_DATASET_SHAREGPT)
		t->dataset.output_len = 0;
	if (t->dataset.kind == PG_DATASET_JSONL)
		t->dataset.output_len = 256;
	if (t->dataset.kind == PG_DATASET_SONNET) {
		/* vllm bench serve's --sonnet-input-len/-output-len/-prefix-len */
		t->dataset.input_len = 550;
		t->dataset.output_len = 150;
		t->dataset.prefix_len = 200;
	}

	for (size_t i = 0; i < ps->n; i++) {
		const struct vparam *v = &ps->v[i];
		char norm[128];
		bool known = false;

		normalise(norm, sizeof(norm), v->key);
		if (!strcmp(norm, "dataset_name") || !strcmp(norm, "backend"))
			continue;
		for (size_t k = 0; k < sizeof(client_flags) / sizeof(client_flags[0]); k++) {
			if (strcmp(norm, client_flags[k].name))
				continue;
			known = true;
			if (!client_flags[k].fn) {
				vwarn(c, v, client_flags[k].why);
			} else if (client_flags[k].fn(c, t, v)) {
				return PG_ECONFIG;
			}
			break;
		}
		if (!known)
			vwarn(c, v, "no equivalent in perfgate's client; ignored");
	}
	/* vLLM forces ignore_eos for random prompts with OpenAI backends */
	if (t->dataset.kind == PG_DATASET_RANDOM)
		t->client.ignore_eos = true;
	return 0;
}

/* ---- tests ----------------------------------------------------------- */

/* clang-format off */
static const char *const serving_keys[] = {
	"test_name", "qps_list", "max_concurrency_list", "server_parameters",
	"client_parameters", "server_environment_variables", "tier",
};
/* clang-format on */
static const char *const bench_keys[] = {
	"test_name",
	"parameters",
	"environment_variables",
	"tier",
};

#define N_SERVING_KEYS (sizeof(serving_keys) / sizeof(serving_keys[0]))
#define N_BENCH_KEYS   (sizeof(bench_keys) / sizeof(bench_keys[0]))

static bool in_list(const char *key, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(key, list[i]))
			return true;
	return false;
}

static int check_keys(struct vctx *c, yaml_node_t *obj, const struct pg_ypath *p, int kind,
		      bool is_defaults)
{
	const char *const *keys = kind == PG_SUITE_SERVING ? serving_keys : bench_keys;
	size_t nkeys = kind == PG_SUITE_SERVING ? N_SERVING_KEYS : N_BENCH_KEYS;
	struct pg_ypair *pairs = NULL;
	size_t n = 0;
	int ret;

	if ((ret = pg_ymap_pairs(c->d, obj, p,
				 is_defaults ? "a mapping of defaults" : "a test object", &pairs,
				 &n, E(c))))
		return ret;
	for (size_t i = 0; i < n && !ret; i++) {
		const char *k = pairs[i].key;
		const char *near;

		if (in_list(k, keys, nkeys) && !(is_defaults && !strcmp(k, "test_name")))
			continue;
		if (in_list(k, serving_keys, N_SERVING_KEYS) ||
		    in_list(k, bench_keys, N_BENCH_KEYS)) {
			ret = pg_yerr(c->d, pairs[i].key_node, p, E(c),
				      "'%s' does not belong in a %s %s", k,
				      pg_suite_kind_name(kind),
				      is_defaults ? "defaults object" : "test");
			break;
		}
		near = pg_nearest(k, keys, nkeys);
		if (near)
			ret = pg_yerr(c->d, pairs[i].key_node, p, E(c),
				      "unknown key '%s' (did you mean '%s'?)", k, near);
		else
			ret = pg_yerr(c->d, pairs[i].key_node, p, E(c), "unknown key '%s'", k);
	}
	free(pairs);
	return ret;
}

static int test_kind(struct vctx *c, const char *name, yaml_node_t *name_node,
		     const struct pg_ypath *np, int file_kind, int *kind)
{
	char prefix[32];

	if (file_kind >= 0) {
		snprintf(prefix, sizeof(prefix), "%s_", pg_suite_kind_name(file_kind));
		if (!pg_str_has_prefix(name, prefix))
			return pg_yerr(
				c->d, name_node, np, E(c),
				"in a %s tests file, test_name must start with '%s' (vLLM's driver "
				"requires it), got '%s'",
				pg_suite_kind_name(file_kind), prefix, name);
		*kind = file_kind;
		return 0;
	}
	for (int k = 0; k < PG_SUITE_COUNT; k++) {
		snprintf(prefix, sizeof(prefix), "%s_", pg_suite_kind_name(k));
		if (pg_str_has_prefix(name, prefix)) {
			*kind = k;
			return 0;
		}
	}
	return pg_yerr(c->d, name_node, np, E(c),
		       "test_name must start with latency_, throughput_ or serving_ (vLLM's driver "
		       "requires it), got '%s'",
		       name);
}

static const char *const reserved_bench_flags[] = { "output_json", NULL };

static int build_bench(struct vctx *c, struct pg_test *t, const struct vparams *params,
		       const struct vparams *envs, yaml_node_t *node, const struct pg_ypath *p)
{
	const struct vparam *v;
	struct pg_buf cmd = PG_BUF_INIT;
	struct pg_ypath pp = { p, "parameters", 0 };

	if (!(v = vparams_get(params, "model")) || !pg_ynode_is_scalar(v->value) ||
	    !*pg_ynode_text(v->value))
		return pg_yerr(c->d, node, &pp, E(c), "missing 'model'");
	t->model = vstring(v);
	if ((v = vparams_get(params, "tensor_parallel_size")) && vlong(c, v, 1, &t->tp))
		return PG_ECONFIG;
	if ((v = vparams_get(params, "input_len")) && vlong(c, v, 1, &t->dataset.input_len))
		return PG_ECONFIG;
	if ((v = vparams_get(params, "output_len")) && vlong(c, v, 1, &t->dataset.output_len))
		return PG_ECONFIG;
	if (t->kind == PG_SUITE_LATENCY) {
		if ((v = vparams_get(params, "batch_size")) && vlong(c, v, 1, &t->batch_size))
			return PG_ECONFIG;
		if ((v = vparams_get(params, "num_iters_warmup")) &&
		    vlong(c, v, 0, &t->warmup_iterations))
			return PG_ECONFIG;
		if ((v = vparams_get(params, "num_iters")) && vlong(c, v, 1, &t->iterations))
			return PG_ECONFIG;
	} else {
		if ((v = vparams_get(params, "num_prompts")) && vlong(c, v, 1, &t->num_prompts))
			return PG_ECONFIG;
		/* vllm bench throughput: a dataset file means ShareGPT unless
		 * dataset_name says otherwise; without one, random prompts */
		if ((v = vparams_get(params, "dataset_path")) ||
		    (v = vparams_get(params, "dataset"))) {
			t->dataset.path = vstring(v);
			t->dataset.kind = PG_DATASET_SHAREGPT;
			if (!vparams_get(params, "output_len"))
				t->dataset.output_len = 0;
		}
		if ((v = vparams_get(params, "dataset_name"))) {
			const char *s = pg_ynode_text(v->value);
			if (!strcmp(s, "random"))
				t->dataset.kind = PG_DATASET_RANDOM;
			else if (!strcmp(s, "custom"))
				t->dataset.kind = PG_DATASET_JSONL;
		}
	}
	if ((v = vparams_get(params, "output_json")))
		vwarn(c, v, "perfgate passes --output-json {result} itself; ignored");

	/* exactly the command vLLM's driver runs, with {result} for its
	 * results/<test_name>.json */
	pg_buf_printf(&cmd, "vllm bench %s --output-json {result}", pg_suite_kind_name(t->kind));
	tmpl_flags(c, &cmd, params, reserved_bench_flags);
	t->command = pg_buf_detach(&cmd);
	return read_env(c, &t->command_env, envs);
}

static const char *const server_skip[] = { "model", "host", "port", NULL };

/* The server's flags from the file's server_parameters, onto its command
 * and kept apart (pg_server_spec.file_flags): an A/B side that brings its
 * own server command keeps them. */
static void server_file_flags(struct vctx *c, struct pg_test *t, struct pg_buf *cmd,
			      const struct vparams *server)
{
	struct pg_buf flags = PG_BUF_INIT;

	tmpl_flags(c, &flags, server, server_skip);
	if (flags.len) {
		pg_buf_putc(cmd, ' ');
		pg_buf_add(cmd, flags.ptr, flags.len);
		free(t->server.file_flags);
		t->server.file_flags = pg_xstrdup(flags.ptr);
	}
	pg_buf_release(&flags);
}

static int read_qps(struct vctx *c, struct pg_test *t, yaml_node_t *list, const struct pg_ypath *p)
{
	size_t n = pg_yseq_len(list);

	if (!pg_ynode_is_seq(list) || n == 0)
		return pg_yexpected(c->d, list, p, E(c),
				    "a non-empty list of request rates (numbers or 'inf')");
	free(t->qps);
	t->qps = pg_xcalloc(n, sizeof(double));
	t->n_qps = n;
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *item = pg_yseq_item(c->d, list, i);
		struct pg_ypath ip = { p, NULL, i };
		double x;

		/* the driver turns anything containing "inf" into inf */
		if (pg_ynode_is_scalar(item) && strstr(pg_ynode_text(item), "inf")) {
			t->qps[i] = INFINITY;
			continue;
		}
		if (pg_ynode_is_scalar(item) && pg_parse_double(pg_ynode_text(item), &x) == 0 &&
		    !(x > 0)) {
			pg_yerr(c->d, item, &ip, E(c),
				"expected a request rate > 0 or 'inf', got %s",
				pg_ynode_text(item));
			return PG_ECONFIG;
		}
		if (!pg_ynode_is_scalar(item) || pg_parse_double(pg_ynode_text(item), &x))
			return pg_yexpected(c->d, item, &ip, E(c), "a number or 'inf'");
		t->qps[i] = x;
	}
	return 0;
}

static int read_concurrencies(struct vctx *c, struct pg_test *t, yaml_node_t *list,
			      const struct pg_ypath *p)
{
	size_t n = pg_yseq_len(list);

	if (!pg_ynode_is_seq(list) || n == 0)
		return pg_yerr(c->d, list, p, E(c), "expected a non-empty list of concurrencies");
	free(t->max_concurrency);
	t->max_concurrency = pg_xcalloc(n, sizeof(long));
	t->n_max_concurrency = n;
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *item = pg_yseq_item(c->d, list, i);
		struct pg_ypath ip = { p, NULL, i };
		long x;

		if (!pg_ynode_is_scalar(item) || pg_parse_long(pg_ynode_text(item), &x) || x < 1)
			return pg_yexpected(c->d, item, &ip, E(c), "a positive whole number");
		t->max_concurrency[i] = x;
	}
	return 0;
}

/*
 * What vLLM's driver reads from its environment, read here the same way
 * for its files:
 *  - PROMPTS_PER_CONCURRENCY scales each point's prompt count
 *    (max_concurrency x it, clamped to [MIN_NUM_PROMPTS, MAX_NUM_PROMPTS]);
 *  - ENABLE_ADAPTIVE_CONCURRENCY=1 turns on the search for the largest
 *    concurrency within SLA_TTFT_MS and SLA_TPOT_MS, at most
 *    ADAPTIVE_MAX_PROBES probes up to ADAPTIVE_MAX_CONCURRENCY.
 */
static int driver_environment(struct vctx *c, struct pg_test *t)
{
	const char *on = getenv("ENABLE_ADAPTIVE_CONCURRENCY");
	bool search = on && !strcmp(on, "1");
	/* clang-format off */
	const struct {
		const char *name;
		bool used;     /* read at all: the search's only when it is on */
		long *whole;   /* a positive integer, or */
		double *real;  /* a positive number */
	} vars[] = {
		{ "PROMPTS_PER_CONCURRENCY", true, &t->prompts_per_concurrency, NULL },
		{ "MIN_NUM_PROMPTS", true, &t->min_num_prompts, NULL },
		{ "MAX_NUM_PROMPTS", true, &t->max_num_prompts, NULL },
		{ "SLA_TTFT_MS", search, NULL, &t->sla_search.ttft_ms },
		{ "SLA_TPOT_MS", search, NULL, &t->sla_search.tpot_ms },
		{ "ADAPTIVE_MAX_PROBES", search, &t->sla_search.max_probes, NULL },
		{ "ADAPTIVE_MAX_CONCURRENCY", search, &t->sla_search.max_concurrency, NULL },
	};
	/* clang-format on */

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i].name);
		bool bad;

		if (!vars[i].used || !v || !*v)
			continue;
		bad = vars[i].whole ? pg_parse_long(v, vars[i].whole) || *vars[i].whole < 1
				    : pg_parse_double(v, vars[i].real) || !(*vars[i].real > 0) ||
					      isinf(*vars[i].real);
		if (bad)
			return pg_error_set(
				E(c), PG_ECONFIG,
				"environment variable %s: expected a positive %s, got '%s'",
				vars[i].name, vars[i].whole ? "integer" : "number", v);
	}
	if (t->min_num_prompts > t->max_num_prompts)
		return pg_error_set(
			E(c), PG_ECONFIG,
			"environment: MIN_NUM_PROMPTS (%ld) is above MAX_NUM_PROMPTS (%ld)",
			t->min_num_prompts, t->max_num_prompts);
	t->sla_search.enabled = search;
	return 0;
}

/*
 * A dataset perfgate's client does not generate (hf, random-mm, burstgpt,
 * prefix_repetition...) or a backend that is not OpenAI text generation
 * (openai-audio, ...): the setting, else NULL. Such tests run vLLM's own
 * client, the command the driver runs, against the server perfgate starts.
 */
static const struct vparam *needs_vllm_client(const struct vparams *client)
{
	static const char *const datasets[] = { "random", "sharegpt", "custom", "sonnet" };
	static const char *const backends[] = { "vllm", "openai", "openai-chat" };
	const struct vparam *v;

	if ((v = vparams_get(client, "dataset_name")) &&
	    !in_list(pg_ynode_text(v->value), datasets, 4))
		return v;
	if ((v = vparams_get(client, "backend")) && !in_list(pg_ynode_text(v->value), backends, 3))
		return v;
	return NULL;
}

/* The server settings vLLM's driver passes in vllm bench serve's
 * --metadata (run-performance-benchmarks.sh), so that a result says them. */
static const char *const driver_metadata[] = { "compilation_config.mode", "optimization_level" };

/* The flags the driver sets itself on vllm bench serve. */
static const char *const bench_serve_skip[] = {
	"model",        "save_result",     "result_dir",    "result_filename",
	"request_rate", "max_concurrency", "append_result", "host",
	"port",         "base_url",        "metadata",      NULL,
};

/* vLLM's own client for the test's points: `vllm bench serve` as the
 * driver runs it, writing perfgate's {result}. */
static void vllm_client_command(struct vctx *c, struct pg_test *t, const struct vparams *client,
				const struct vparam *why)
{
	struct pg_buf cmd = PG_BUF_INIT, note = PG_BUF_INIT;

	pg_buf_puts(&cmd, "vllm bench serve --save-result --result-filename {result} "
			  "--request-rate {qps} --max-concurrency {max_concurrency} --model");
	tmpl_word(&cmd, t->model);
	pg_buf_printf(&cmd, " --metadata tensor_parallel_size=%ld", t->tp);
	for (size_t i = 0; i < t->metadata.n; i++) {
		struct pg_buf pair = PG_BUF_INIT;
		pg_buf_printf(&pair, "%s=%s", t->metadata.items[i].key, t->metadata.items[i].value);
		tmpl_word(&cmd, pair.ptr);
		pg_buf_release(&pair);
	}
	tmpl_flags(c, &cmd, client, bench_serve_skip);
	pg_buf_puts(&cmd, " --host {host} --port {port}");
	t->command = pg_buf_detach(&cmd);
	pg_buf_printf(&note,
		      "%s '%s' is not one perfgate's client generates: the points run vLLM's "
		      "own client (vllm bench serve) against the server perfgate starts",
		      strcmp(why->key, "backend") ? "dataset" : "backend",
		      pg_ynode_text(why->value));
	vwarn(c, why, note.ptr);
	pg_buf_release(&note);
}

/* Returns 1 when the test is to be skipped (as vLLM's driver skips it). */
static int build_serving(struct vctx *c, struct pg_test *t, yaml_node_t *qps,
			 const struct pg_ypath *qp, yaml_node_t *mc, const struct pg_ypath *mp,
			 const struct vparams *server, const struct vparams *client,
			 const struct vparams *envs, yaml_node_t *node, const struct pg_ypath *p)
{
	const struct vparam *v, *cm;
	struct pg_buf cmd = PG_BUF_INIT;
	struct pg_ypath sp = { p, "server_parameters", 0 };
	struct pg_ypath qpp = { p, "qps_list", 0 };

	if (!(v = vparams_get(server, "model")) || !pg_ynode_is_scalar(v->value) ||
	    !*pg_ynode_text(v->value))
		return pg_yerr(c->d, node, &sp, E(c), "missing 'model'");
	t->model = vstring(v);
	cm = vparams_get(client, "model");
	if (!cm) {
		pg_cfg_warn(
			c->cfg,
			pg_ymsg(c->d, node, p,
				"test '%s' skipped: client_parameters has no 'model', and "
				"vLLM's driver skips a test whose client and server models differ",
				t->name));
		return 1;
	}
	if (strcmp(pg_ynode_text(cm->value), t->model)) {
		struct pg_ypath cp = { cm->parent, cm->key, 0 };
		pg_cfg_warn(c->cfg,
			    pg_ymsg(c->d, cm->value, &cp,
				    "test '%s' skipped: client model '%s' differs from server "
				    "model '%s', and vLLM's driver skips such a test",
				    t->name, pg_ynode_text(cm->value), t->model));
		return 1;
	}
	if ((v = vparams_get(server, "tensor_parallel_size")) && vlong(c, v, 1, &t->tp))
		return PG_ECONFIG;
	/* recorded on the results as vLLM's driver records them, from the
	 * server's settings (its --metadata on vllm bench serve) */
	for (size_t i = 0; i < sizeof(driver_metadata) / sizeof(driver_metadata[0]); i++)
		if ((v = vparams_get(server, driver_metadata[i])) && pg_ynode_is_scalar(v->value) &&
		    *pg_ynode_text(v->value))
			pg_kvlist_set(&t->metadata, driver_metadata[i], pg_ynode_text(v->value));
	if ((v = vparams_get(server, "served_model_name")) && !t->client.served_model)
		t->client.served_model = vstring(v);
	if ((v = vparams_get(server, "host")))
		vwarn(c, v, "perfgate binds the server to the loopback address itself; ignored");
	if ((v = vparams_get(server, "port")))
		vwarn(c, v, "perfgate picks a free port for the server itself; ignored");

	pg_buf_puts(&cmd, "vllm serve");
	tmpl_word(&cmd, t->model);
	server_file_flags(c, t, &cmd, server);
	pg_buf_puts(&cmd, " --host {host} --port {port}");
	t->server.command = pg_buf_detach(&cmd);
	if (read_env(c, &t->server.env, envs))
		return PG_ECONFIG;

	if ((v = needs_vllm_client(client))) {
		const struct vparam *np = vparams_get(client, "num_prompts");
		if (np && vlong(c, np, 1, &t->num_prompts))
			return PG_ECONFIG;
		vllm_client_command(c, t, client, v);
	} else {
		if (apply_client(c, t, client))
			return PG_ECONFIG;
		if (t->dataset.kind != PG_DATASET_RANDOM && !t->dataset.path)
			return pg_yerr(c->d, node, p, E(c),
				       "client_parameters: dataset '%s' needs dataset_path",
				       t->dataset.kind == PG_DATASET_SHAREGPT ? "sharegpt"
				       : t->dataset.kind == PG_DATASET_SONNET ? "sonnet"
									      : "custom");
		if (t->dataset.kind == PG_DATASET_RANDOM && t->dataset.path) {
			free(t->dataset.path); /* vLLM ignores it for random prompts too */
			t->dataset.path = NULL;
		}
	}

	if (!qps) {
		/* vLLM's first driver (run-vllm-benchmarks.sh) read no qps_list:
		 * benchmark_serving.py ran once at its default rate, inf */
		pg_cfg_warn(c->cfg, pg_ymsg(c->d, node, &qpp,
					    "no qps_list: one point at request rate inf, as vLLM's "
					    "first driver ran such a test"));
		t->qps[0] = INFINITY;
		t->n_qps = 1;
	} else if (read_qps(c, t, qps, qp)) {
		return PG_ECONFIG;
	}
	/* the driver's names always carry the concurrency; without a list it
	 * is num_prompts, i.e. effectively unbounded */
	t->concurrency_in_name = true;
	if (mc && !pg_ynode_is_null(mc)) {
		if (read_concurrencies(c, t, mc, mp))
			return PG_ECONFIG;
	} else {
		t->max_concurrency[0] = t->num_prompts;
	}
	{
		/* the error points at the strategy, or at the rates without one */
		static const char *const keys[] = { "ramp_up_strategy", "ramp_up_start_rps",
						    "ramp_up_end_rps" };
		struct pg_error tmp = PG_ERROR_INIT;

		if (pg_test_check_ramp_up(t, &tmp)) {
			for (size_t k = 0; k < 3; k++) {
				const struct vparam *rv = vparams_get(client, keys[k]);
				struct pg_ypath rp;

				if (!rv)
					continue;
				rp = (struct pg_ypath){ rv->parent, rv->key, 0 };
				return pg_yerr(c->d, rv->value, &rp, E(c), "%s", tmp.msg);
			}
			return pg_yerr(c->d, node, p, E(c), "%s", tmp.msg);
		}
	}
	return driver_environment(c, t);
}

/* ---- nightly multi-engine and genai-perf files ----------------------- */

/*
 * vLLM's nightly files (tests/nightly-tests.json, tests/genai-perf-tests.json,
 * read by scripts/run-nightly-benchmarks.sh): common_parameters (model,
 * tp, dataset_name, dataset_path, num_prompts, port, reuse_server,
 * sonnet_*) and, per engine, <engine>_server_parameters and
 * <engine>_client_parameters. The container the driver runs in decides
 * the engine (CURRENT_LLM_SERVING_ENGINE); here the environment variable
 * does, vllm by default. A test becomes the serving test
 * "<engine>_<test_name>": the engine's server as launch-server.sh starts
 * it, and at each rate the driver's `vllm bench serve` workload
 * (--ignore-eos, sharegpt or sonnet) from perfgate's client; a genai-perf
 * test (genai_perf_input_parameters) runs `genai-perf profile` exactly as
 * the driver does, its JSON export imported.
 */
static const char *const engines[] = { "vllm", "sglang", "lmdeploy", "tgi", "trt" };
#define N_ENGINES (sizeof(engines) / sizeof(engines[0]))

static bool nightly_key(const char *k)
{
	static const char *const plain[] = { "test_name", "qps_list", "common_parameters",
					     "genai_perf_input_parameters" };

	if (in_list(k, plain, 4))
		return true;
	for (size_t e = 0; e < N_ENGINES; e++) {
		size_t l = strlen(engines[e]);
		if (!strncmp(k, engines[e], l) &&
		    (!strcmp(k + l, "_server_parameters") || !strcmp(k + l, "_client_parameters")))
			return true;
	}
	return false;
}

static int nightly_engine(struct vctx *c, yaml_node_t *node, const struct pg_ypath *p,
			  const char **out)
{
	const char *env = getenv("CURRENT_LLM_SERVING_ENGINE");

	/* the driver's own test: any engine name containing "vllm" is vllm */
	if (!env || !*env || strstr(env, "vllm")) {
		*out = "vllm";
		return 0;
	}
	for (size_t e = 0; e < 3; e++) {
		if (!strcmp(env, engines[e])) {
			*out = engines[e];
			return 0;
		}
	}
	return pg_yerr(c->d, node, p, E(c),
		       "CURRENT_LLM_SERVING_ENGINE=%s: perfgate runs the vllm, sglang and lmdeploy "
		       "engines of a nightly file (their OpenAI API); %s",
		       env,
		       !strcmp(env, "tgi") ? "TGI's /generate_stream is not it"
		       : !strcmp(env, "trt")
			       ? "Triton's /v2/models/ensemble/generate_stream is not it"
			       : "this one is none of them");
}

static const struct vparam *common_get(const struct vparams *common, const char *key)
{
	return vparams_get(common, key);
}

/* The engine's server as launch-server.sh starts it, on perfgate's port. */
static void nightly_server(struct vctx *c, struct pg_test *t, const char *engine,
			   const struct vparams *server)
{
	struct pg_buf cmd = PG_BUF_INIT;
	char tp[32];

	snprintf(tp, sizeof(tp), "%ld", t->tp);
	if (!strcmp(engine, "sglang")) {
		pg_buf_printf(&cmd, "python3 -m sglang.launch_server --tp %s --model-path", tp);
		tmpl_word(&cmd, t->model);
		pg_buf_puts(&cmd, " --port {port} --host {host}");
	} else if (!strcmp(engine, "lmdeploy")) {
		pg_buf_puts(&cmd, "lmdeploy serve api_server");
		tmpl_word(&cmd, t->model);
		pg_buf_printf(&cmd, " --tp %s --server-port {port} --server-name {host}", tp);
	} else {
		pg_buf_puts(&cmd, "vllm serve");
		tmpl_word(&cmd, t->model);
		pg_buf_printf(&cmd, " -tp %s --port {port} --host {host}", tp);
	}
	server_file_flags(c, t, &cmd, server);
	t->server.command = pg_buf_detach(&cmd);
}

/* genai-perf as the driver runs it; an infinite rate is num_prompts, as
 * there, since genai-perf takes none. Its export becomes {result}. */
static void genai_perf_command(struct vctx *c, struct pg_test *t, const struct vparams *in)
{
	struct pg_buf cmd = PG_BUF_INIT;

	pg_buf_printf(&cmd, "rate={qps}; [ \"$rate\" = inf ] && rate=%ld; genai-perf profile -m",
		      t->num_prompts);
	tmpl_word(&cmd, t->model);
	pg_buf_printf(&cmd,
		      " --service-kind openai --backend vllm --endpoint-type chat --streaming "
		      "--url {host}:{port} --request-rate \"$rate\" --num-prompts %ld",
		      t->num_prompts);
	tmpl_flags(c, &cmd, in, NULL);
	pg_buf_puts(&cmd, " --artifact-dir {result}.d --profile-export-file profile_export.json"
			  " && cp {result}.d/profile_export_genai_perf.json {result}");
	t->command = pg_buf_detach(&cmd);
	t->command_shell = true;
}

static int nightly_test(struct vctx *c, yaml_node_t *node, const struct pg_ypath *p,
			yaml_node_t *name_node)
{
	struct pg_ypath np = { p, "test_name", 0 }, cp = { p, "common_parameters", 0 };
	struct pg_ypath qpp = { p, "qps_list", 0 };
	struct vparams common = { 0 }, server = { 0 }, client = { 0 }, gp = { 0 };
	struct pg_ypair *pairs = NULL;
	size_t n_pairs = 0;
	const struct vparam *v;
	const char *engine = NULL;
	char key[64];
	struct pg_buf name = PG_BUF_INIT;
	yaml_node_t *gp_node = pg_ymap_get(c->d, node, "genai_perf_input_parameters");
	struct pg_test t;
	int ret;

	if ((ret = pg_ymap_pairs(c->d, node, p, "a test object", &pairs, &n_pairs, E(c))))
		return ret;
	for (size_t i = 0; i < n_pairs && !ret; i++)
		if (!nightly_key(pairs[i].key))
			ret = pg_yerr(
				c->d, pairs[i].key_node, p, E(c),
				"unknown key '%s' in a nightly test: expected test_name, "
				"qps_list, common_parameters and <engine>_server_parameters / "
				"<engine>_client_parameters",
				pairs[i].key);
	free(pairs);
	if (ret || (ret = nightly_engine(c, node, p, &engine)))
		return ret;

	pg_test_init(&t, PG_SUITE_SERVING);
	pg_buf_printf(&name, "%s_%s", engine, pg_ynode_text(name_node));
	t.name = pg_buf_detach(&name);
	t.loc.file = pg_xstrdup(c->d->file);
	t.loc.line = pg_ydoc_line(c->d, node);
	t.loc.column = pg_ydoc_column(c->d, node);
	if (!pg_cfg_valid_name(t.name)) {
		ret = pg_yerr(
			c->d, name_node, &np, E(c),
			"'%s' cannot name result files: use letters, digits, '_', '-' and '.'",
			t.name);
		goto done;
	}
	if (!pg_ymap_get(c->d, node, "common_parameters")) {
		ret = pg_yerr(c->d, node, &cp, E(c), "missing 'common_parameters'");
		goto done;
	}
	snprintf(key, sizeof(key), "%s_server_parameters", engine);
	{
		struct pg_ypath sp = { p, NULL, 0 }, clp = { p, NULL, 0 };
		char ckey[64];

		sp.key = key;
		snprintf(ckey, sizeof(ckey), "%s_client_parameters", engine);
		clp.key = ckey;
		if ((ret = vparams_merge(c, &common, pg_ymap_get(c->d, node, "common_parameters"),
					 &cp)) ||
		    (ret = vparams_merge(c, &server, pg_ymap_get(c->d, node, key), &sp)) ||
		    (ret = vparams_merge(c, &client, pg_ymap_get(c->d, node, ckey), &clp)))
			goto done;
	}
	if (!(v = common_get(&common, "model")) || !pg_ynode_is_scalar(v->value) ||
	    !*pg_ynode_text(v->value)) {
		ret = pg_yerr(c->d, node, &cp, E(c), "missing 'model'");
		goto done;
	}
	{
		/* launch-server.sh serves a quantized copy when fp8 is set */
		const struct vparam *q = common_get(&common, "neuralmagic_quantized_model");
		if (common_get(&common, "fp8") && q && pg_ynode_is_scalar(q->value))
			v = q;
	}
	t.model = vstring(v);
	if ((v = common_get(&common, "tp")) && (ret = vlong(c, v, 1, &t.tp)))
		goto done;
	if ((v = common_get(&common, "num_prompts")) && (ret = vlong(c, v, 1, &t.num_prompts)))
		goto done;
	/* port (every nightly test names 8000) and reuse_server are the
	 * driver's plumbing: perfgate picks a free port and starts each
	 * test's server itself */
	nightly_server(c, &t, engine, &server);

	if (gp_node) {
		struct pg_ypath gpp = { p, "genai_perf_input_parameters", 0 };

		if ((ret = vparams_merge(c, &gp, gp_node, &gpp)))
			goto done;
		genai_perf_command(c, &t, &gp);
	} else {
		const struct vparam *ds = common_get(&common, "dataset_name");
		const char *dn = ds ? pg_ynode_text(ds->value) : "";

		/* the driver's `vllm bench serve ... --ignore-eos`, backend the
		 * engine (all OpenAI completions here) */
		if (!strcmp(dn, "sharegpt")) {
			t.dataset.kind = PG_DATASET_SHAREGPT;
			t.dataset.output_len = 0;
		} else if (!strcmp(dn, "sonnet")) {
			t.dataset.kind = PG_DATASET_SONNET;
			t.dataset.input_len = 550;
			t.dataset.output_len = 150;
			t.dataset.prefix_len = 200;
		} else {
			struct pg_ypath dp = { &cp, "dataset_name", 0 };
			ret = pg_yerr(c->d, ds ? ds->value : node, ds ? &dp : &cp, E(c),
				      "the dataset name must be either 'sharegpt' or 'sonnet' "
				      "(vLLM's nightly driver stops otherwise), got '%s'",
				      dn);
			goto done;
		}
		if ((v = common_get(&common, "dataset_path")))
			t.dataset.path = vstring(v);
		if (t.dataset.kind == PG_DATASET_SONNET &&
		    (((v = common_get(&common, "sonnet_input_len")) &&
		      (ret = vlong(c, v, 1, &t.dataset.input_len))) ||
		     ((v = common_get(&common, "sonnet_output_len")) &&
		      (ret = vlong(c, v, 1, &t.dataset.output_len))) ||
		     ((v = common_get(&common, "sonnet_prefix_len")) &&
		      (ret = vlong(c, v, 0, &t.dataset.prefix_len)))))
			goto done;
		if (!t.dataset.path) {
			ret = pg_yerr(c->d, node, &cp, E(c), "missing 'dataset_path'");
			goto done;
		}
		for (size_t i = 0; i < client.n; i++) {
			char norm[128];
			normalise(norm, sizeof(norm), client.v[i].key);
			if (!strcmp(norm, "endpoint")) {
				if ((ret = c_endpoint(c, &t, &client.v[i])))
					goto done;
			} else {
				vwarn(c, &client.v[i],
				      "no equivalent in perfgate's client; ignored");
			}
		}
		t.client.ignore_eos = true;
	}
	if (!pg_ymap_get(c->d, node, "qps_list")) {
		ret = pg_yerr(c->d, node, &qpp, E(c), "missing: the list of request rates to run");
		goto done;
	}
	if ((ret = read_qps(c, &t, pg_ymap_get(c->d, node, "qps_list"), &qpp)))
		goto done;
	ret = pg_cfg_add_test(c->cfg, &t, c->d, name_node, &np);
done:
	pg_test_release(&t);
	free(common.v);
	free(server.v);
	free(client.v);
	free(gp.v);
	return ret;
}

static int vllm_test(struct vctx *c, yaml_node_t *node, const struct pg_ypath *p,
		     yaml_node_t *defaults, const struct pg_ypath *dp, int file_kind)
{
	struct pg_ypath np = { p, "test_name", 0 };
	yaml_node_t *name_node;
	struct vparams a = { 0 }, b = { 0 }, e = { 0 };
	struct pg_test t;
	int kind = 0, ret;

	if (!pg_ynode_is_map(node))
		return pg_yexpected(c->d, node, p, E(c), "a test object");
	name_node = pg_ymap_get(c->d, node, "test_name");
	if (!name_node)
		return pg_yerr(c->d, node, p, E(c), "missing 'test_name'");
	if (!pg_ynode_is_scalar(name_node) || pg_ynode_is_null(name_node))
		return pg_yerr(c->d, name_node, &np, E(c), "expected a string");
	if (pg_ymap_get(c->d, node, "common_parameters") && !defaults)
		return nightly_test(c, node, p, name_node);
	if ((ret = test_kind(c, pg_ynode_text(name_node), name_node, &np, file_kind, &kind)))
		return ret;
	if (!pg_cfg_valid_name(pg_ynode_text(name_node)))
		return pg_yerr(c->d, name_node, &np, E(c), "'%.80s%s' cannot name result files: %s",
			       pg_ynode_text(name_node),
			       strlen(pg_ynode_text(name_node)) > 80 ? "..." : "",
			       pg_cfg_name_problem(pg_ynode_text(name_node)));
	if ((ret = check_keys(c, node, p, kind, false)))
		return ret;
	if (defaults && (ret = check_keys(c, defaults, dp, kind, true)))
		return ret;

	pg_test_init(&t, (enum pg_suite_kind)kind);
	t.name = pg_xstrdup(pg_ynode_text(name_node));
	t.loc.file = pg_xstrdup(c->d->file);
	t.loc.line = pg_ydoc_line(c->d, node);
	t.loc.column = pg_ydoc_column(c->d, node);

	if (kind == PG_SUITE_SERVING) {
		struct pg_ypath dsp = { dp, "server_parameters", 0 },
				tsp = { p, "server_parameters", 0 };
		struct pg_ypath dcp = { dp, "client_parameters", 0 },
				tcp = { p, "client_parameters", 0 };
		struct pg_ypath dep = { dp, "server_environment_variables", 0 };
		struct pg_ypath tep = { p, "server_environment_variables", 0 };
		struct pg_ypath dqp = { dp, "qps_list", 0 }, tqp = { p, "qps_list", 0 };
		struct pg_ypath dmp = { dp, "max_concurrency_list", 0 },
				tmp = { p, "max_concurrency_list", 0 };
		yaml_node_t *qps = pg_ymap_get(c->d, node, "qps_list");
		yaml_node_t *mc = pg_ymap_get(c->d, node, "max_concurrency_list");
		const struct pg_ypath *qp = &tqp, *mp = &tmp;

		if ((!qps || pg_ynode_is_null(qps)) && defaults) {
			qps = pg_ymap_get(c->d, defaults, "qps_list");
			qp = &dqp;
		}
		if ((!mc || pg_ynode_is_null(mc)) && defaults) {
			mc = pg_ymap_get(c->d, defaults, "max_concurrency_list");
			mp = &dmp;
		}
		if ((ret = vparams_merge(c, &a,
					 defaults ? pg_ymap_get(c->d, defaults, "server_parameters")
						  : NULL,
					 &dsp)) ||
		    (ret = vparams_merge(c, &a, pg_ymap_get(c->d, node, "server_parameters"),
					 &tsp)) ||
		    (ret = vparams_merge(c, &b,
					 defaults ? pg_ymap_get(c->d, defaults, "client_parameters")
						  : NULL,
					 &dcp)) ||
		    (ret = vparams_merge(c, &b, pg_ymap_get(c->d, node, "client_parameters"),
					 &tcp)) ||
		    (ret = vparams_merge(
			     c, &e,
			     defaults ? pg_ymap_get(c->d, defaults, "server_environment_variables")
				      : NULL,
			     &dep)) ||
		    (ret = vparams_merge(
			     c, &e, pg_ymap_get(c->d, node, "server_environment_variables"), &tep)))
			goto done;
		ret = build_serving(c, &t, qps, qp, mc, mp, &a, &b, &e, node, p);
		if (ret == 1) {
			ret = 0;
			goto done;
		}
	} else {
		struct pg_ypath dpp = { dp, "parameters", 0 }, tpp = { p, "parameters", 0 };
		struct pg_ypath dep = { dp, "environment_variables", 0 };
		struct pg_ypath tep = { p, "environment_variables", 0 };

		if (!pg_ymap_get(c->d, node, "parameters") &&
		    !(defaults && pg_ymap_get(c->d, defaults, "parameters"))) {
			ret = pg_yerr(c->d, node, p, E(c), "missing 'parameters'");
			goto done;
		}
		if ((ret = vparams_merge(
			     c, &a, defaults ? pg_ymap_get(c->d, defaults, "parameters") : NULL,
			     &dpp)) ||
		    (ret = vparams_merge(c, &a, pg_ymap_get(c->d, node, "parameters"), &tpp)) ||
		    (ret = vparams_merge(
			     c, &e,
			     defaults ? pg_ymap_get(c->d, defaults, "environment_variables") : NULL,
			     &dep)) ||
		    (ret = vparams_merge(c, &e, pg_ymap_get(c->d, node, "environment_variables"),
					 &tep)))
			goto done;
		ret = build_bench(c, &t, &a, &e, node, p);
	}
	if (ret)
		goto done;
	ret = pg_cfg_add_test(c->cfg, &t, c->d, name_node, &np);
done:
	pg_test_release(&t);
	free(a.v);
	free(b.v);
	free(e.v);
	return ret;
}

int pg_cfg_vllm(struct pg_cfg *cfg, const struct pg_ydoc *d, yaml_node_t *root, int kind)
{
	struct vctx c = { cfg, d };
	struct pg_ypath tests_path = { NULL, "tests", 0 };
	struct pg_ypath defaults_path = { NULL, "defaults", 0 };
	yaml_node_t *tests = root, *defaults = NULL;
	const struct pg_ypath *base = NULL;
	int ret;

	if (pg_ynode_is_map(root)) {
		static const char *const top[] = { "defaults", "tests" };
		struct pg_ypair *pairs = NULL;
		size_t n = 0;

		if ((ret = pg_ymap_pairs(d, root, NULL, "a mapping", &pairs, &n, cfg->err)))
			return ret;
		for (size_t i = 0; i < n; i++) {
			if (in_list(pairs[i].key, top, 2))
				continue;
			const char *near = pg_nearest(pairs[i].key, top, 2);
			ret = pg_yerr(d, pairs[i].key_node, NULL, cfg->err,
				      "unknown key '%s' in a vLLM tests file%s%s%s", pairs[i].key,
				      near ? " (did you mean '"
					   : ": expected 'defaults' and 'tests'",
				      near ? near : "", near ? "'?)" : "");
			free(pairs);
			return ret;
		}
		free(pairs);
		tests = pg_ymap_get(d, root, "tests");
		defaults = pg_ymap_get(d, root, "defaults");
		if (pg_ynode_is_null(defaults))
			defaults = NULL;
		base = &tests_path;
		if (!pg_ynode_is_seq(tests))
			return pg_yexpected(d, tests, &tests_path, cfg->err, "a list of tests");
		if (defaults && !pg_ynode_is_map(defaults))
			return pg_yerr(d, defaults, &defaults_path, cfg->err, "expected a mapping");
	}
	for (size_t i = 0; i < pg_yseq_len(tests); i++) {
		struct pg_ypath p = { base, NULL, i };
		if ((ret = vllm_test(&c, pg_yseq_item(d, tests, i), &p, defaults, &defaults_path,
				     kind)))
			return ret;
	}
	if (pg_yseq_len(tests) == 0)
		pg_cfg_warn(cfg, pg_ymsg(d, tests, NULL, "no tests in this file"));
	return 0;
}
