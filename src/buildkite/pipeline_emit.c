#include "buildkite/pipeline_emit.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/jsonw.h"
#include "buildkite/plugin_config.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* [begin, end) (end NULL: to the string's end) is a number without a
 * leading zero */
static bool digits_only(const char *begin, const char *end)
{
	size_t len = end ? (size_t)(end - begin) : strlen(begin);

	return len > 0 && begin[0] != '0' && strspn(begin, "0123456789") >= len;
}

int pg_shard_parse(const char *text, size_t *index, size_t *count, struct pg_error *err)
{
	const char *slash = text ? strchr(text, '/') : NULL;
	char head[32];
	long i, n;

	/* digits only, no sign, space or leading zero: PG_SHARD_PATTERN */
	if (!slash || (size_t)(slash - text) >= sizeof(head) || !digits_only(text, slash) ||
	    !digits_only(slash + 1, NULL))
		goto bad;
	memcpy(head, text, (size_t)(slash - text));
	head[slash - text] = '\0';
	if (pg_parse_long(head, &i) || pg_parse_long(slash + 1, &n) || n < 1 || i < 1 || i > n)
		goto bad;
	*index = (size_t)i;
	*count = (size_t)n;
	return 0;
bad:
	return pg_error_set(err, PG_ECONFIG,
			    "expected \"INDEX/COUNT\" with 1 <= INDEX <= COUNT, got \"%s\"",
			    text ? text : "");
}

static size_t test_points(const struct pg_test *t)
{
	if (t->kind != PG_SUITE_SERVING)
		return 1;
	return (t->n_qps ? t->n_qps : 1) * (t->n_max_concurrency ? t->n_max_concurrency : 1);
}

struct weighted {
	size_t test;
	size_t points;
};

static int by_weight(const void *a, const void *b)
{
	const struct weighted *x = a, *y = b;

	if (x->points != y->points)
		return x->points > y->points ? -1 : 1;
	return x->test < y->test ? -1 : x->test > y->test;
}

void pg_shard_tests(struct pg_strv *out, const struct pg_suite *suite, size_t index, size_t count)
{
	struct weighted *w = pg_xcalloc(suite->n_tests + 1, sizeof(*w));
	size_t *load = pg_xcalloc(count + 1, sizeof(*load));
	size_t *shard = pg_xcalloc(suite->n_tests + 1, sizeof(*shard));

	for (size_t i = 0; i < suite->n_tests; i++)
		w[i] = (struct weighted){ i, test_points(&suite->tests[i]) };
	qsort(w, suite->n_tests, sizeof(*w), by_weight);
	for (size_t i = 0; i < suite->n_tests; i++) {
		size_t best = 0;
		for (size_t s = 1; s < count; s++)
			if (load[s] < load[best])
				best = s;
		load[best] += w[i].points;
		shard[w[i].test] = best;
	}
	for (size_t i = 0; i < suite->n_tests; i++)
		if (shard[i] + 1 == index)
			pg_strv_push(out, suite->tests[i].name);
	free(w);
	free(load);
	free(shard);
}

/* ---- YAML ---- */

/* The bytes of a code point YAML does not allow as itself in a document
 * (its printable set is narrower than JSON's: DEL, the C1 controls, the BOM,
 * U+FFFE and U+FFFF), as 0 when the code point at s is printable. s is
 * valid UTF-8 (jansson's strings are). */
static unsigned yaml_unprintable(const unsigned char *s, size_t left, unsigned *cp)
{
	if (s[0] == 0x7F) {
		*cp = 0x7F;
		return 1;
	}
	if (s[0] == 0xC2 && left >= 2 && s[1] >= 0x80 && s[1] <= 0x9F) {
		*cp = s[1];
		return 2;
	}
	/* LS and PS: line breaks to YAML 1.1, folded inside quotes */
	if (s[0] == 0xE2 && left >= 3 && s[1] == 0x80 && (s[2] == 0xA8 || s[2] == 0xA9)) {
		*cp = s[2] == 0xA8 ? 0x2028 : 0x2029;
		return 3;
	}
	if (s[0] == 0xEF && left >= 3 &&
	    ((s[1] == 0xBB && s[2] == 0xBF) || (s[1] == 0xBF && s[2] >= 0xBE))) {
		*cp = 0xF000u | ((unsigned)(s[1] & 0x3F) << 6) | (s[2] & 0x3Fu);
		return 3;
	}
	return 0;
}

static void yaml_string(struct pg_buf *out, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	struct pg_buf q = PG_BUF_INIT;
	const unsigned char *b;

	/* A JSON string literal is a YAML double-quoted scalar once the code
	 * points YAML cannot carry raw are escaped too; '$' is doubled so the
	 * agent does not interpolate it. */
	pg_json_write_string(&q, s, strlen(s));
	b = (const unsigned char *)q.ptr;
	for (size_t i = 0; i < q.len;) {
		unsigned cp, n = yaml_unprintable(b + i, q.len - i, &cp);
		if (n) {
			char esc[7] = { '\\',
					'u',
					hex[(cp >> 12) & 15],
					hex[(cp >> 8) & 15],
					hex[(cp >> 4) & 15],
					hex[cp & 15],
					0 };
			pg_buf_puts(out, esc);
			i += n;
			continue;
		}
		if (b[i] == '$')
			pg_buf_putc(out, '$');
		pg_buf_putc(out, (char)b[i++]);
	}
	pg_buf_release(&q);
}

static bool plain_key(const char *k)
{
	if (!isalpha((unsigned char)*k) && *k != '_')
		return false;
	for (; *k; k++)
		if (!isalnum((unsigned char)*k) && *k != '_' && *k != '-')
			return false;
	return true;
}

/* A value that is not a block: strings quoted as YAML needs, null as ~;
 * numbers, booleans and empty collections read the same in JSON's flow
 * form, which is YAML too. */
static void yaml_scalar(struct pg_buf *out, const json_t *v)
{
	if (json_is_string(v))
		yaml_string(out, json_string_value(v));
	else if (json_is_null(v))
		pg_buf_puts(out, "~");
	else
		pg_json_write(out, v, 0);
}

static bool is_block(const json_t *v)
{
	return (json_is_object(v) && json_object_size(v)) ||
	       (json_is_array(v) && json_array_size(v));
}

static void yaml_node(struct pg_buf *out, const json_t *v, int indent, bool inline_first);

static void yaml_key(struct pg_buf *out, const char *k)
{
	if (plain_key(k))
		pg_buf_puts(out, k);
	else
		yaml_string(out, k);
	pg_buf_putc(out, ':');
}

/*
 * A block node at indent. inline_first: the first line continues a "- "
 * already written (sequence items holding mappings).
 */
static void yaml_node(struct pg_buf *out, const json_t *v, int indent, bool inline_first)
{
	bool first = true;

	if (json_is_object(v)) {
		const char *k;
		json_t *child;
		json_object_foreach((json_t *)v, k, child)
		{
			if (!(first && inline_first))
				pg_buf_pad(out, ' ', (size_t)indent);
			first = false;
			yaml_key(out, k);
			if (is_block(child)) {
				pg_buf_putc(out, '\n');
				yaml_node(out, child, indent + 2, false);
			} else {
				pg_buf_putc(out, ' ');
				yaml_scalar(out, child);
				pg_buf_putc(out, '\n');
			}
		}
		return;
	}
	if (json_is_array(v)) {
		size_t i;
		json_t *item;
		json_array_foreach(v, i, item)
		{
			if (!(first && inline_first))
				pg_buf_pad(out, ' ', (size_t)indent);
			first = false;
			pg_buf_puts(out, "- ");
			if (is_block(item)) {
				yaml_node(out, item, indent + 2, true);
			} else {
				yaml_scalar(out, item);
				pg_buf_putc(out, '\n');
			}
		}
		return;
	}
	if (!(inline_first))
		pg_buf_pad(out, ' ', (size_t)indent);
	yaml_scalar(out, v);
	pg_buf_putc(out, '\n');
}

void pg_yaml_write(struct pg_buf *out, const json_t *v, int indent)
{
	yaml_node(out, v, indent, false);
}

/* ---- the pipeline ---- */

/* "H100" -> "h100"; anything outside [a-z0-9_-] becomes '-'. */
static char *key_part(const char *gpu)
{
	char *k = pg_xstrdup(gpu);

	for (char *p = k; *p; p++) {
		*p = (char)tolower((unsigned char)*p);
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-')
			*p = '-';
	}
	return k;
}

static char *queue_for(const char *tmpl, const char *gpu)
{
	struct pg_buf b = PG_BUF_INIT;
	char *lower = key_part(gpu);

	for (const char *p = tmpl; *p;) {
		if (pg_str_has_prefix(p, "{gpu}")) {
			pg_buf_puts(&b, gpu);
			p += 5;
		} else if (pg_str_has_prefix(p, "{gpu_lower}")) {
			pg_buf_puts(&b, lower);
			p += 11;
		} else {
			pg_buf_putc(&b, *p++);
		}
	}
	free(lower);
	return pg_buf_detach(&b);
}

/* Every generated step must pass the plugin's own validation: a typo in
 * an option fails here, not in N jobs on N GPUs. */
static int check_config(const json_t *config, const char *label, struct pg_error *err)
{
	struct pg_plugin_config c;
	int rc = pg_plugin_config_parse(&c, config, label, err);

	pg_plugin_config_release(&c);
	return rc;
}

static json_t *step_new(const struct pg_pipeline_spec *spec, const char *label, const char *key,
			const char *gpu, json_t *config)
{
	json_t *step = json_object();
	json_t *plugin = json_object();
	json_t *agents = json_object();
	char *queue = queue_for(spec->queue ? spec->queue : "{gpu}", gpu);

	json_object_set_new(step, "label", json_string(label));
	json_object_set_new(step, "key", json_string(key));
	json_object_set_new(agents, "queue", json_string(queue));
	json_object_set_new(step, "agents", agents);
	json_object_set_new(plugin, spec->plugin, config);
	json_object_set_new(step, "plugins", json_pack("[o]", plugin));
	free(queue);
	return step;
}

static json_t *base_config(const struct pg_pipeline_spec *spec, const char *gpu)
{
	json_t *c = json_object();
	const char *k;
	json_t *v;

	json_object_set_new(c, "suites", json_string(spec->suites));
	json_object_set_new(c, "gpu", json_string(gpu));
	if (spec->options)
		json_object_foreach((json_t *)spec->options, k, v) json_object_set(c, k, v);
	return c;
}

int pg_pipeline_render(struct pg_buf *out, const struct pg_pipeline_spec *spec,
		       const struct pg_suite *suite, struct pg_error *err)
{
	static const char *const reserved[] = { "suites", "gpu", "shard", "results-dir" };
	const char *root = spec->results_root ? spec->results_root : "perfgate-results";
	json_t *steps = json_array(), *doc = NULL;
	int ret = PG_ECONFIG;

	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (spec->options && json_object_get(spec->options, reserved[i])) {
			pg_error_set(err, PG_ECONFIG,
				     "%s: the pipeline sets this option for each step",
				     reserved[i]);
			goto done;
		}
	if (spec->shards > 1 && spec->options && json_object_get(spec->options, "mode")) {
		pg_error_set(err, PG_ECONFIG,
			     "mode: with shards, shard steps run and the merge step gates");
		goto done;
	}
	if (spec->shards < 1 || spec->shards > suite->n_tests) {
		pg_error_set(err, PG_ECONFIG, "--shards %zu: the suite has %zu test%s",
			     spec->shards, suite->n_tests, suite->n_tests == 1 ? "" : "s");
		goto done;
	}
	if (!spec->n_gpus) {
		pg_error_set(err, PG_ECONFIG, "no GPUs to run on");
		goto done;
	}

	for (size_t g = 0; g < spec->n_gpus; g++) {
		const char *gpu = spec->gpus[g];
		char *kp;

		if (!gpu || !*gpu) {
			pg_error_set(err, PG_ECONFIG, "--gpus: empty GPU name");
			goto done;
		}
		kp = key_part(gpu);
		for (size_t s = 1; s <= spec->shards; s++) {
			struct pg_buf label = PG_BUF_INIT, key = PG_BUF_INIT, dir = PG_BUF_INIT,
				      shard = PG_BUF_INIT;
			json_t *config = base_config(spec, gpu);

			if (spec->shards == 1) {
				pg_buf_printf(&label, "perfgate %s", gpu);
				pg_buf_printf(&key, "perfgate-%s", kp);
				pg_buf_printf(&dir, "%s/%s", root, gpu);
			} else {
				pg_buf_printf(&label, "perfgate %s %zu/%zu", gpu, s, spec->shards);
				pg_buf_printf(&key, "perfgate-%s-shard-%zu", kp, s);
				pg_buf_printf(&dir, "%s/%s/shard-%zu", root, gpu, s);
				pg_buf_printf(&shard, "%zu/%zu", s, spec->shards);
				/* shards only run and upload; the merge step annotates */
				json_object_set_new(config, "mode", json_string("run"));
				json_object_set_new(config, "shard", json_string(shard.ptr));
				json_object_set_new(config, "annotate", json_string("never"));
			}
			json_object_set_new(config, "results-dir", json_string(dir.ptr));
			if (check_config(config, label.ptr, err)) {
				json_decref(config);
				free(kp);
				pg_buf_release(&label);
				pg_buf_release(&key);
				pg_buf_release(&dir);
				pg_buf_release(&shard);
				goto done;
			}
			json_array_append_new(steps,
					      step_new(spec, label.ptr, key.ptr, gpu, config));
			pg_buf_release(&label);
			pg_buf_release(&key);
			pg_buf_release(&dir);
			pg_buf_release(&shard);
		}
		free(kp);
	}

	if (spec->shards > 1) {
		/* merge even when a shard failed: the annotation says which */
		json_array_append_new(steps,
				      json_pack("{s:n,s:b}", "wait", "continue_on_failure", 1));
		for (size_t g = 0; g < spec->n_gpus; g++) {
			const char *gpu = spec->gpus[g];
			struct pg_buf label = PG_BUF_INIT, key = PG_BUF_INIT, dir = PG_BUF_INIT;
			char *kp = key_part(gpu);
			json_t *config = base_config(spec, gpu);

			pg_buf_printf(&label, "perfgate %s: merge %zu shards", gpu, spec->shards);
			pg_buf_printf(&key, "perfgate-%s", kp);
			pg_buf_printf(&dir, "%s/%s", root, gpu);
			json_object_set_new(config, "mode", json_string("merge"));
			json_object_set_new(config, "results-dir", json_string(dir.ptr));
			json_array_append_new(steps,
					      step_new(spec, label.ptr, key.ptr, gpu, config));
			pg_buf_release(&label);
			pg_buf_release(&key);
			pg_buf_release(&dir);
			free(kp);
		}
	}

	doc = json_pack("{s:o}", "steps", steps);
	steps = NULL;
	pg_buf_puts(
		out,
		"# generated by perfgate pipeline; upload with buildkite-agent pipeline upload\n");
	pg_yaml_write(out, doc, 0);
	ret = 0;
done:
	json_decref(steps);
	json_decref(doc);
	return ret;
}
