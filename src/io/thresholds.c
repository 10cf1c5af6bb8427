#include "io/thresholds.h"

#include "core/alloc.h"
#include "core/buf.h"
#include "core/compare_stats.h"
#include "core/error.h"
#include "core/strutil.h"
#include "core/thresholds.h"
#include "io/fsutil.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

/* A parsed document plus what errors need: the file name. */
struct ydoc {
	const char *path;
	yaml_document_t doc;
	struct pg_error *err;
	int baselines_line;   /* 0-based line of the top-level "baselines" key, or -1 */
	int after_line;       /* line of the top-level key after it, or -1 */
};

static yaml_node_t *node_at(struct ydoc *d, int i)
{
	return yaml_document_get_node(&d->doc, i);
}

static int fail(struct ydoc *d, const yaml_node_t *n, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(struct ydoc *d, const yaml_node_t *n, const char *key, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return pg_error_set(d->err, PG_ECONFIG, "%s:%lu:%lu: %s%s%s", d->path,
			    (unsigned long)n->start_mark.line + 1, (unsigned long)n->start_mark.column + 1,
			    key ? key : "", key ? ": " : "", msg);
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static bool is_null(const yaml_node_t *n)
{
	const char *s = scalar(n);
	return s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	       (!*s || !strcmp(s, "~") || !strcmp(s, "null"));
}

static const char *node_kind(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_MAPPING_NODE:
		return "a mapping";
	case YAML_SEQUENCE_NODE:
		return "a list";
	default:
		return "a scalar";
	}
}

/* "parent.key" into out, truncated to fit (key paths only label errors). */
static void key_join(char *out, size_t size, const char *parent, const char *key)
{
	struct pg_buf b = PG_BUF_INIT;
	size_t n;

	if (parent && *parent)
		pg_buf_printf(&b, "%s.", parent);
	pg_buf_puts(&b, key ? key : "");
	n = b.len < size - 1 ? b.len : size - 1;
	memcpy(out, b.ptr, n);
	out[n] = '\0';
	pg_buf_release(&b);
}

/* Mapping check; a null value (an empty "tests:") counts as empty. */
static int want_mapping(struct ydoc *d, const yaml_node_t *n, const char *key, bool *empty)
{
	*empty = false;
	if (is_null(n)) {
		*empty = true;
		return 0;
	}
	if (n->type != YAML_MAPPING_NODE)
		return fail(d, n, key, "expected a mapping, got %s", node_kind(n));
	*empty = n->data.mapping.pairs.start == n->data.mapping.pairs.top;
	return 0;
}

static int unknown_key(struct ydoc *d, const yaml_node_t *k, const char *parent, const char *what,
		       const char *const *known, size_t n_known)
{
	const char *name = scalar(k);
	const char *near = pg_nearest(name, known, n_known);
	char path[512];

	key_join(path, sizeof(path), parent, name);
	if (near)
		return fail(d, k, path, "unknown %s (did you mean '%s'?)", what, near);
	return fail(d, k, path, "unknown %s", what);
}

/* Iterate a mapping's pairs: every key must be a scalar, and appear once. */
static int check_keys(struct ydoc *d, const yaml_node_t *map, const char *parent)
{
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node_at(d, p->key);
		if (!scalar(k))
			return fail(d, k, parent, "keys must be plain names, got %s", node_kind(k));
		for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++)
			if (!strcmp(scalar(node_at(d, q->key)), scalar(k))) {
				char path[512];
				key_join(path, sizeof(path), parent, scalar(k));
				return fail(d, k, path, "given twice (first on line %lu)",
					    (unsigned long)node_at(d, q->key)->start_mark.line + 1);
			}
	}
	return 0;
}

#define FOREACH_PAIR(d, map, pair, k, v)                                                     \
	for (yaml_node_pair_t *pair = (map)->data.mapping.pairs.start;                       \
	     pair < (map)->data.mapping.pairs.top &&                                         \
	     ((k) = node_at((d), pair->key), (v) = node_at((d), pair->value), 1);            \
	     pair++)

/* ------------------------------------------------------------------ */
/* Typed values                                                        */

static int get_number(struct ydoc *d, const yaml_node_t *n, const char *key, double *out)
{
	const char *s = scalar(n);
	if (!s || pg_parse_double(s, out) || isnan(*out))
		return fail(d, n, key, "expected a number, got %s", s ? s : node_kind(n));
	return 0;
}

static int get_long(struct ydoc *d, const yaml_node_t *n, const char *key, long min, long *out)
{
	const char *s = scalar(n);
	if (!s || pg_parse_long(s, out))
		return fail(d, n, key, "expected a whole number, got %s", s ? s : node_kind(n));
	if (*out < min)
		return fail(d, n, key, "must be at least %ld, got %ld", min, *out);
	return 0;
}

static int get_bool(struct ydoc *d, const yaml_node_t *n, const char *key, bool *out)
{
	const char *s = scalar(n);
	if (s && !strcmp(s, "true"))
		*out = true;
	else if (s && !strcmp(s, "false"))
		*out = false;
	else
		return fail(d, n, key, "expected true or false, got %s", s ? s : node_kind(n));
	return 0;
}

static int get_string(struct ydoc *d, const yaml_node_t *n, const char *key, char **out)
{
	const char *s = scalar(n);
	if (!s || is_null(n))
		return fail(d, n, key, "expected a string");
	free(*out);
	*out = pg_xstrdup(s);
	return 0;
}

/*
 * A relative amount: "2.6%" or a fraction (0.026). A bare number of 1 or
 * more is almost certainly a percentage without its sign, so it is refused
 * rather than read as 100% or more.
 */
static int get_fraction(struct ydoc *d, const yaml_node_t *n, const char *key, double *out)
{
	const char *s = scalar(n);
	size_t len = s ? strlen(s) : 0;

	if (s && len > 1 && s[len - 1] == '%') {
		char num[64];
		/* "2.6e-2" parses to the double nearest 0.026; 2.6 / 100 would not */
		snprintf(num, sizeof(num), "%.*se-2", (int)(len - 1), s);
		if (len > 40 || strpbrk(s, "eE") || pg_parse_double(num, out) || !isfinite(*out) || *out < 0)
			return fail(d, n, key, "expected a percentage like 2.5%%, got %s", s);
		return 0;
	}
	if (!s || pg_parse_double(s, out) || !isfinite(*out) || *out < 0)
		return fail(d, n, key, "expected a percentage like 2.5%% (or a fraction like 0.025), got %s",
			    s ? s : node_kind(n));
	if (*out >= 1)
		return fail(d, n, key, "%s is 100%% or more: write a percentage like %s%%", s, s);
	return 0;
}

/* A floor: a number, or a number and the metric's unit ("5 ms"). */
static int get_floor(struct ydoc *d, const yaml_node_t *n, const char *key, const char *metric_id,
		     double *out)
{
	const char *s = scalar(n);
	const char *sp = s ? strchr(s, ' ') : NULL;
	char num[64];

	if (!s)
		return fail(d, n, key, "expected a number like 5 or 5 ms, got %s", node_kind(n));
	if (!sp)
		return get_number(d, n, key, out);
	snprintf(num, sizeof(num), "%.*s", (int)(sp - s), s);
	if (pg_parse_double(num, out) || !isfinite(*out) || *out < 0)
		return fail(d, n, key, "expected a number like 5 or 5 ms, got %s", s);
	while (*sp == ' ')
		sp++;
	/* the unit must be the metric's (all metrics of "*" would disagree) */
	size_t nm;
	const struct pg_metric *all = pg_metrics_all(&nm);
	for (size_t i = 0; i < nm; i++)
		if (!strcmp(all[i].id, metric_id) && strcmp(all[i].unit, sp))
			return fail(d, n, key, "unit '%s' is not %s's unit '%s'", sp, metric_id,
				    all[i].unit);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Policy                                                              */

static const char *const rule_keys[] = { "gate", "tolerance", "floor", "escalate", "recheck",
					 "alpha", "min_samples", "noise_sigmas" };

static int parse_rule(struct ydoc *d, const yaml_node_t *map, const char *parent, const char *metric,
		      struct pg_rule_patch *patch)
{
	yaml_node_t *k, *v;
	bool empty;
	char key[512];
	int rc;

	memset(patch, 0, sizeof(*patch));
	if ((rc = want_mapping(d, map, parent, &empty)) || empty)
		return rc;
	if ((rc = check_keys(d, map, parent)))
		return rc;
	FOREACH_PAIR(d, map, pair, k, v) {
		const char *name = scalar(k);
		struct pg_rule *r = &patch->rule;

		key_join(key, sizeof(key), parent, name);
		if (!strcmp(name, "gate")) {
			rc = get_bool(d, v, key, &r->gate);
			patch->set |= PG_RULE_GATE;
		} else if (!strcmp(name, "tolerance")) {
			rc = get_fraction(d, v, key, &r->tolerance);
			patch->set |= PG_RULE_TOLERANCE;
		} else if (!strcmp(name, "floor")) {
			rc = get_floor(d, v, key, metric, &r->floor);
			patch->set |= PG_RULE_FLOOR;
		} else if (!strcmp(name, "escalate")) {
			const char *s = scalar(v);
			if (s && (!strcmp(s, "false") || !strcmp(s, "0") || is_null(v)))
				r->escalate = 0;
			else
				rc = get_fraction(d, v, key, &r->escalate);
			patch->set |= PG_RULE_ESCALATE;
		} else if (!strcmp(name, "recheck")) {
			rc = get_fraction(d, v, key, &r->recheck);
			patch->set |= PG_RULE_RECHECK;
		} else if (!strcmp(name, "alpha")) {
			rc = get_fraction(d, v, key, &r->alpha);
			patch->set |= PG_RULE_ALPHA;
		} else if (!strcmp(name, "min_samples")) {
			rc = get_long(d, v, key, 2, &r->min_samples);
			patch->set |= PG_RULE_MIN_SAMPLES;
		} else if (!strcmp(name, "noise_sigmas")) {
			rc = get_number(d, v, key, &r->noise_sigmas);
			if (!rc && r->noise_sigmas < 0)
				rc = fail(d, v, key, "must not be negative");
			patch->set |= PG_RULE_NOISE_SIGMAS;
		} else {
			rc = unknown_key(d, k, parent, "setting", rule_keys,
					 sizeof(rule_keys) / sizeof(rule_keys[0]));
		}
		if (rc)
			return rc;
	}
	return 0;
}

/* Every metric id of every suite, for validation and "did you mean". */
static size_t all_metric_ids(const char **out, size_t max)
{
	size_t n, k = 0;
	const struct pg_metric *all = pg_metrics_all(&n);
	for (size_t i = 0; i < n && k < max; i++)
		out[k++] = all[i].id;
	return k;
}

static int check_metric_id(struct ydoc *d, const yaml_node_t *k, const char *parent)
{
	const char *ids[128];
	size_t n = all_metric_ids(ids, 128);
	const char *name = scalar(k);

	if (!strcmp(name, "*"))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(ids[i], name))
			return 0;
	return unknown_key(d, k, parent, "metric", ids, n);
}

static int parse_metric_rules(struct ydoc *d, const yaml_node_t *map, const char *parent,
			      const char *pattern, struct pg_policy *p)
{
	yaml_node_t *k, *v;
	bool empty;
	char key[512];
	int rc;

	if ((rc = want_mapping(d, map, parent, &empty)) || empty)
		return rc;
	if ((rc = check_keys(d, map, parent)))
		return rc;
	FOREACH_PAIR(d, map, pair, k, v) {
		struct pg_rule_patch patch;
		if ((rc = check_metric_id(d, k, parent)))
			return rc;
		key_join(key, sizeof(key), parent, scalar(k));
		if ((rc = parse_rule(d, v, key, scalar(k), &patch)))
			return rc;
		pg_policy_add(p, pattern, scalar(k), &patch, (int)k->start_mark.line + 1);
	}
	return 0;
}

static const char *const policy_keys[] = { "alpha", "min_samples", "history_window", "min_history",
					   "noise_sigmas", "escalate", "recheck", "metrics", "tests" };

static int parse_policy(struct ydoc *d, const yaml_node_t *map, struct pg_policy *p)
{
	yaml_node_t *k, *v;
	bool empty;
	char key[512];
	int rc;

	if ((rc = want_mapping(d, map, "policy", &empty)) || empty)
		return rc;
	if ((rc = check_keys(d, map, "policy")))
		return rc;
	FOREACH_PAIR(d, map, pair, k, v) {
		const char *name = scalar(k);

		key_join(key, sizeof(key), "policy", name);
		if (!strcmp(name, "alpha")) {
			rc = get_fraction(d, v, key, &p->alpha);
			if (!rc && p->alpha <= 0)
				rc = fail(d, v, key, "must be above 0");
		} else if (!strcmp(name, "min_samples")) {
			rc = get_long(d, v, key, 2, &p->min_samples);
		} else if (!strcmp(name, "history_window")) {
			rc = get_long(d, v, key, 1, &p->history_window);
		} else if (!strcmp(name, "min_history")) {
			rc = get_long(d, v, key, 1, &p->min_history);
		} else if (!strcmp(name, "noise_sigmas")) {
			rc = get_number(d, v, key, &p->noise_sigmas);
			if (!rc && p->noise_sigmas < 0)
				rc = fail(d, v, key, "must not be negative");
		} else if (!strcmp(name, "escalate")) {
			rc = get_fraction(d, v, key, &p->escalate);
		} else if (!strcmp(name, "recheck")) {
			rc = get_fraction(d, v, key, &p->recheck);
		} else if (!strcmp(name, "metrics")) {
			rc = parse_metric_rules(d, v, key, NULL, p);
		} else if (!strcmp(name, "tests")) {
			yaml_node_t *tk, *tv;
			if ((rc = want_mapping(d, v, key, &empty)) || empty || (rc = check_keys(d, v, key)))
				goto next;
			FOREACH_PAIR(d, v, tpair, tk, tv) {
				char tkey[512];
				key_join(tkey, sizeof(tkey), key, scalar(tk));
				if ((rc = parse_metric_rules(d, tv, tkey, scalar(tk), p)))
					break;
			}
		} else {
			rc = unknown_key(d, k, "policy", "setting", policy_keys,
					 sizeof(policy_keys) / sizeof(policy_keys[0]));
		}
next:
		if (rc)
			return rc;
	}
	if (p->min_history > p->history_window)
		return fail(d, map, "policy.min_history", "is %ld, more than history_window (%ld)",
			    p->min_history, p->history_window);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Baselines                                                           */

static const char *const point_keys[] = { "suite", "test", "qps", "max_concurrency", "gpu", "source",
					  "date", "commit", "runs", "repeats", "values", "samples" };

static yaml_node_t *map_get(struct ydoc *d, const yaml_node_t *map, const char *key, yaml_node_t **key_node)
{
	yaml_node_t *k, *v;
	FOREACH_PAIR(d, map, pair, k, v) {
		if (!strcmp(scalar(k), key)) {
			if (key_node)
				*key_node = k;
			return v;
		}
	}
	return NULL;
}

static const struct pg_metric *suite_metric(struct ydoc *d, const yaml_node_t *k, const char *parent,
					    enum pg_suite_kind suite, int *rc)
{
	const struct pg_metric *m = pg_metric_by_id(suite, scalar(k));
	const char *ids[64];

	if (m && m->direction != PG_NO_DIRECTION)
		return m;
	char what[64];

	if (m) {
		*rc = fail(d, k, parent, "%s is a count, not compared", scalar(k));
		return NULL;
	}
	snprintf(what, sizeof(what), "metric for a %s test", pg_suite_kind_name(suite));
	*rc = unknown_key(d, k, parent, what, ids, pg_metric_ids(suite, ids, 64));
	return NULL;
}

static int parse_samples(struct ydoc *d, const yaml_node_t *seq, const char *key, double **out,
			 size_t *n)
{
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	if (seq->type != YAML_SEQUENCE_NODE)
		return fail(d, seq, key, "expected a list of numbers, got %s", node_kind(seq));
	for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++) {
		double x;
		int rc = get_number(d, node_at(d, *it), key, &x);
		if (rc) {
			free(*out);
			*out = NULL;
			return rc;
		}
		PG_ARRAY_PUSH(*out, *n, cap, x);
	}
	return 0;
}

static int parse_point(struct ydoc *d, const yaml_node_t *kn, const yaml_node_t *map,
		       struct pg_baseline *base)
{
	const char *name = scalar(kn);
	char parent[512], key[600];
	yaml_node_t *k, *v, *suite_node, *values, *samples, *values_key = NULL;
	struct pg_base_point *p;
	int suite, rc;
	bool empty;

	key_join(parent, sizeof(parent), "baselines", name);
	if (map->type != YAML_MAPPING_NODE)
		return fail(d, map, parent, "expected a mapping, got %s", node_kind(map));
	if ((rc = check_keys(d, map, parent)))
		return rc;
	suite_node = map_get(d, map, "suite", NULL);
	if (!suite_node)
		return fail(d, map, parent, "missing 'suite' (latency, throughput or serving)");
	suite = scalar(suite_node) ? pg_suite_kind_parse(scalar(suite_node)) : -1;
	if (suite < 0) {
		key_join(key, sizeof(key), parent, "suite");
		return fail(d, suite_node, key, "expected latency, throughput or serving, got %s",
			    scalar(suite_node) ? scalar(suite_node) : node_kind(suite_node));
	}
	p = pg_baseline_add(base, name, (enum pg_suite_kind)suite);
	p->line = (int)kn->start_mark.line + 1;

	FOREACH_PAIR(d, map, pair, k, v) {
		const char *kname = scalar(k);
		key_join(key, sizeof(key), parent, kname);
		rc = 0;
		if (!strcmp(kname, "suite") || !strcmp(kname, "values") || !strcmp(kname, "samples"))
			continue;
		if (!strcmp(kname, "test"))
			rc = get_string(d, v, key, &p->test);
		else if (!strcmp(kname, "gpu"))
			rc = get_string(d, v, key, &p->gpu);
		else if (!strcmp(kname, "source"))
			rc = get_string(d, v, key, &p->source);
		else if (!strcmp(kname, "date"))
			rc = get_string(d, v, key, &p->date);
		else if (!strcmp(kname, "commit"))
			rc = get_string(d, v, key, &p->commit);
		else if (!strcmp(kname, "qps")) {
			const char *s = scalar(v);
			if (s && !strcmp(s, ".inf"))
				p->qps = INFINITY;
			else if ((rc = get_number(d, v, key, &p->qps)) == 0 && p->qps <= 0)
				rc = fail(d, v, key, "must be above 0 (or inf)");
		} else if (!strcmp(kname, "max_concurrency"))
			rc = get_long(d, v, key, 1, &p->max_concurrency);
		else if (!strcmp(kname, "runs"))
			rc = get_long(d, v, key, 1, &p->runs);
		else if (!strcmp(kname, "repeats"))
			rc = get_long(d, v, key, 1, &p->repeats);
		else
			rc = unknown_key(d, k, parent, "key", point_keys,
					 sizeof(point_keys) / sizeof(point_keys[0]));
		if (rc)
			return rc;
	}

	values = map_get(d, map, "values", &values_key);
	if (!values)
		return fail(d, map, parent, "missing 'values' (metric: number)");
	key_join(key, sizeof(key), parent, "values");
	if ((rc = want_mapping(d, values, key, &empty)))
		return rc;
	if (empty)
		return fail(d, values_key, key, "no metrics");
	if ((rc = check_keys(d, values, key)))
		return rc;
	samples = map_get(d, map, "samples", NULL);
	if (samples) {
		char skey[600];
		key_join(skey, sizeof(skey), parent, "samples");
		if ((rc = want_mapping(d, samples, skey, &empty)) || (rc = check_keys(d, samples, skey)))
			return rc;
		if (empty)
			samples = NULL;
		else {
			/* every sampled metric needs a value */
			FOREACH_PAIR(d, samples, spair, k, v) {
				if (!map_get(d, values, scalar(k), NULL)) {
					char mkey[700];
					key_join(mkey, sizeof(mkey), skey, scalar(k));
					if (!suite_metric(d, k, skey, p->suite, &rc))
						return rc;
					return fail(d, k, mkey, "samples of a metric that has no value");
				}
			}
		}
	}
	FOREACH_PAIR(d, values, vpair, k, v) {
		const struct pg_metric *m = suite_metric(d, k, key, p->suite, &rc);
		double value, *xs = NULL;
		size_t n_xs = 0;
		char mkey[700];
		struct pg_base_metric *bm;

		if (!m)
			return rc;
		key_join(mkey, sizeof(mkey), key, scalar(k));
		if ((rc = get_number(d, v, mkey, &value)))
			return rc;
		if (pg_base_point_metric(p, m))
			return fail(d, k, mkey, "given twice");
		if (samples) {
			yaml_node_t *sv = map_get(d, samples, scalar(k), NULL);
			char skey[700];
			key_join(skey, sizeof(skey), parent, "samples");
			key_join(skey, sizeof(skey), skey, scalar(k));
			if (sv && (rc = parse_samples(d, sv, skey, &xs, &n_xs)))
				return rc;
		}
		bm = pg_base_point_add_metric(p, m, value, xs, n_xs);
		bm->runs = p->runs;
		bm->line = (int)k->start_mark.line + 1;
		/* samples of several runs are their medians: their spread is the
		 * run-to-run noise the tolerance must cover */
		if (p->runs > 1 && n_xs >= 3)
			bm->noise = pg_stat_robust_cv(xs, n_xs);
		free(xs);
	}
	return 0;
}

static int parse_baselines(struct ydoc *d, const yaml_node_t *map, struct pg_baseline *base)
{
	yaml_node_t *k, *v;
	bool empty;
	int rc;

	if ((rc = want_mapping(d, map, "baselines", &empty)) || empty)
		return rc;
	if ((rc = check_keys(d, map, "baselines")))
		return rc;
	FOREACH_PAIR(d, map, pair, k, v) {
		if ((rc = parse_point(d, k, v, base)))
			return rc;
	}
	pg_baseline_sort(base);
	return 0;
}

/* ------------------------------------------------------------------ */

static const char *const top_keys[] = { "gpu", "policy", "baselines" };

static int load_text(struct ydoc *d, const char *text, size_t len, struct pg_policy *policy,
		     struct pg_baseline *base)
{
	yaml_parser_t parser;
	yaml_node_t *root, *k, *v;
	int rc = 0;
	bool loaded = false, empty;

	d->baselines_line = d->after_line = -1;
	if (!yaml_parser_initialize(&parser))
		return pg_error_set(d->err, PG_ERR, "%s: cannot initialise the YAML parser", d->path);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &d->doc)) {
		rc = pg_error_set(d->err, PG_ECONFIG, "%s:%lu:%lu: %s%s%s", d->path,
				  (unsigned long)parser.problem_mark.line + 1,
				  (unsigned long)parser.problem_mark.column + 1,
				  parser.problem ? parser.problem : "YAML error",
				  parser.context ? " " : "", parser.context ? parser.context : "");
		goto done;
	}
	loaded = true;
	root = yaml_document_get_root_node(&d->doc);
	if (!root) {
		rc = pg_error_set(d->err, PG_ECONFIG, "%s: empty file", d->path);
		goto done;
	}
	if ((rc = want_mapping(d, root, NULL, &empty)) || (!empty && (rc = check_keys(d, root, NULL))))
		goto done;
	if (empty) {
		rc = fail(d, root, NULL, "expected gpu:, policy: and baselines:");
		goto done;
	}
	FOREACH_PAIR(d, root, pair, k, v) {
		const char *name = scalar(k);
		if (d->baselines_line >= 0 && d->after_line < 0)
			d->after_line = (int)k->start_mark.line;
		if (!strcmp(name, "gpu")) {
			rc = get_string(d, v, "gpu", &base->gpu);
		} else if (!strcmp(name, "policy")) {
			rc = parse_policy(d, v, policy);
		} else if (!strcmp(name, "baselines")) {
			d->baselines_line = (int)k->start_mark.line;
			rc = parse_baselines(d, v, base);
		} else {
			rc = unknown_key(d, k, NULL, "section", top_keys, 3);
		}
		if (rc)
			goto done;
	}
done:
	if (loaded)
		yaml_document_delete(&d->doc);
	yaml_parser_delete(&parser);
	return rc;
}

int pg_thresholds_load(const char *path, struct pg_policy *policy, struct pg_baseline *base,
		       struct pg_error *err)
{
	struct pg_buf text = PG_BUF_INIT;
	struct ydoc d = { .path = path, .err = err, .baselines_line = -1, .after_line = -1 };
	int rc;

	pg_policy_init(policy);
	memset(base, 0, sizeof(*base));
	base->kind = pg_xstrdup("thresholds");
	base->source = pg_xstrdup(path);
	rc = pg_file_read(path, &text, err);
	if (rc == 0)
		rc = load_text(&d, text.ptr, text.len, policy, base);
	pg_buf_release(&text);
	return rc;
}

char *pg_thresholds_path(const char *path_or_dir, const char *gpu_key)
{
	struct stat st;
	struct pg_buf b = PG_BUF_INIT;

	if (stat(path_or_dir, &st) == 0 ? !S_ISDIR(st.st_mode)
					 : (pg_str_has_suffix(path_or_dir, ".yml") ||
					    pg_str_has_suffix(path_or_dir, ".yaml")))
		return pg_xstrdup(path_or_dir);
	pg_buf_printf(&b, "%s%s%s.yml", path_or_dir, pg_str_has_suffix(path_or_dir, "/") ? "" : "/",
		      gpu_key);
	return pg_buf_detach(&b);
}

/* Byte offset of the start of 0-based line `line` (len when past the end). */
static size_t line_offset(const char *text, size_t len, int line)
{
	size_t off = 0;
	for (int l = 0; l < line && off < len; off++)
		if (text[off] == '\n')
			l++;
	return off;
}

static void copy_point(struct pg_baseline *dst, const struct pg_base_point *src)
{
	struct pg_base_point *p = pg_baseline_add(dst, src->name, src->suite);

	p->test = pg_xstrdup(src->test);
	p->qps = src->qps;
	p->max_concurrency = src->max_concurrency;
	p->gpu = pg_xstrdup(src->gpu);
	p->source = pg_xstrdup(src->source);
	p->date = pg_xstrdup(src->date);
	p->commit = pg_xstrdup(src->commit);
	p->runs = src->runs;
	p->repeats = src->repeats;
	for (size_t i = 0; i < src->n_metrics; i++) {
		const struct pg_base_metric *m = &src->metrics[i];
		struct pg_base_metric *c = pg_base_point_add_metric(p, m->metric, m->value, m->samples, m->n_samples);
		c->noise = m->noise;
		c->runs = m->runs;
	}
}

int pg_thresholds_update(const char *path, const struct pg_baseline *fresh,
			 const struct pg_thresholds_update_opts *opts, struct pg_error *err)
{
	struct pg_buf text = PG_BUF_INIT, out = PG_BUF_INIT;
	struct pg_policy policy;
	struct pg_baseline old = PG_BASELINE_INIT, merged = PG_BASELINE_INIT;
	struct ydoc d = { .path = path, .err = err, .baselines_line = -1, .after_line = -1 };
	bool exists;
	int rc;

	pg_policy_init(&policy);
	rc = pg_file_read(path, &text, err);
	exists = rc == 0;
	if (rc && rc != PG_ENOTFOUND)
		goto done;
	if (exists && (rc = load_text(&d, text.ptr, text.len, &policy, &old)))
		goto done;

	if (!opts->replace)
		for (size_t i = 0; i < old.n; i++)
			if (!pg_baseline_find(fresh, old.points[i].name))
				copy_point(&merged, &old.points[i]);
	for (size_t i = 0; i < fresh->n; i++)
		copy_point(&merged, &fresh->points[i]);
	pg_baseline_sort(&merged);

	if (!exists) {
		const char *gpu = opts->gpu ? opts->gpu : fresh->gpu;
		pg_thresholds_emit_header(&out, gpu ? gpu : "unknown", opts->regenerate);
		pg_buf_puts(&out, "\ngpu: ");
		pg_yaml_scalar(&out, gpu ? gpu : "unknown");
		pg_buf_puts(&out, "\n\n");
		pg_thresholds_emit_policy(&out, &policy);
		pg_buf_puts(&out, "\n");
		pg_thresholds_emit_baselines(&out, &merged);
	} else if (d.baselines_line < 0) {
		pg_buf_add(&out, text.ptr, text.len);
		if (text.len && text.ptr[text.len - 1] != '\n')
			pg_buf_putc(&out, '\n');
		pg_buf_putc(&out, '\n');
		pg_thresholds_emit_baselines(&out, &merged);
	} else {
		size_t start = line_offset(text.ptr, text.len, d.baselines_line);
		size_t end = d.after_line < 0 ? text.len : line_offset(text.ptr, text.len, d.after_line);
		pg_buf_add(&out, text.ptr, start);
		pg_thresholds_emit_baselines(&out, &merged);
		if (end < text.len) {
			pg_buf_putc(&out, '\n');
			pg_buf_add(&out, text.ptr + end, text.len - end);
		}
	}

	/* what we write must load: a bug here must not destroy a policy */
	{
		struct pg_policy check_policy;
		struct pg_baseline check = PG_BASELINE_INIT;
		struct ydoc c = { .path = path, .err = err, .baselines_line = -1, .after_line = -1 };
		pg_policy_init(&check_policy);
		rc = load_text(&c, out.ptr, out.len, &check_policy, &check);
		pg_policy_release(&check_policy);
		pg_baseline_release(&check);
		if (rc) {
			pg_error_prefix(err, "internal error, %s left unchanged", path);
			rc = PG_ERR;
			goto done;
		}
	}
	{
		const char *slash = strrchr(path, '/');
		if (slash && slash != path) {
			char *dir = pg_xstrndup(path, (size_t)(slash - path));
			rc = pg_mkdir_p(dir, err);
			free(dir);
			if (rc)
				goto done;
		}
	}
	rc = pg_file_write_atomic(path, out.ptr, out.len, err);
done:
	pg_buf_release(&text);
	pg_buf_release(&out);
	pg_policy_release(&policy);
	pg_baseline_release(&old);
	pg_baseline_release(&merged);
	return rc;
}
