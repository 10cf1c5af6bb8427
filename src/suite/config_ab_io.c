/*
 * A suite's `ab:` section (docs/ab.md): the two sides of an A/B run and
 * its sampling budget and tolerances. Every key is checked where it is
 * written, so a mistake is one line naming the file, line and key.
 */
#include "suite/config_io_impl.h"

#include "base/alloc.h"
#include "base/error.h"
#include "base/strutil.h"
#include "base/template.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct actx {
	const struct pg_ydoc *d;
	struct pg_error *err;
};

/* "2%" or a fraction below 1, as thresholds files write tolerances. */
static int get_fraction(struct actx *a, const yaml_node_t *n, const struct pg_ypath *p, double *out)
{
	const char *s = pg_ynode_text(n);

	if (pg_ynode_is_scalar(n) && pg_parse_percent(s, out) == 0 && *out > 0 && *out < 1)
		return 0;
	if (!pg_ynode_is_scalar(n) || pg_ynode_is_quoted(n) || pg_parse_double(s, out) ||
	    !isfinite(*out) || *out <= 0)
		return pg_yexpected(a->d, n, p, a->err,
				    "a percentage like 1%% (or a fraction like 0.01)");
	if (*out >= 1)
		return pg_yerr(a->d, n, p, a->err,
			       "%s is 100%% or more: write a percentage like %s%%", s, s);
	return 0;
}

/* Seconds, or a number with s, m or h ("30m"). */
static int get_duration(struct actx *a, const yaml_node_t *n, const struct pg_ypath *p, double *out)
{
	const char *s = pg_ynode_text(n);
	size_t len = strlen(s);
	double unit = 1;
	char num[64];

	if (pg_ynode_is_scalar(n) && !pg_ynode_is_quoted(n) && len > 0 && len < 40) {
		snprintf(num, sizeof(num), "%s", s);
		if (strchr("smh", num[len - 1])) {
			unit = num[len - 1] == 'h' ? 3600 : num[len - 1] == 'm' ? 60 : 1;
			num[len - 1] = 0;
		}
		if (pg_parse_double(num, out) == 0 && isfinite(*out) && *out > 0) {
			*out *= unit;
			return 0;
		}
	}
	return pg_yexpected(a->d, n, p, a->err, "a duration like 45m, 2h or 600 (seconds)");
}

static int get_kv(struct actx *a, struct pg_kvlist *l, yaml_node_t *v, const struct pg_ypath *p)
{
	struct pg_ypair *pairs = NULL;
	size_t n = 0;
	int ret;

	if ((ret = pg_ymap_pairs(a->d, v, p, "a mapping of names to values", &pairs, &n, a->err)))
		return ret;
	for (size_t i = 0; i < n; i++) {
		struct pg_ypath kp = { p, pairs[i].key, 0 };
		char *value = NULL;
		if ((ret = pg_yget_string(a->d, pairs[i].value, &kp, &value, a->err)))
			break;
		pg_kvlist_set(l, pairs[i].key, value);
		free(value);
	}
	free(pairs);
	return ret;
}

/* A template's placeholders must parse; which ones exist is the test's
 * business, checked when the side is applied to each test. */
static int get_template(struct actx *a, yaml_node_t *v, const struct pg_ypath *p, char **out)
{
	struct pg_strv names = PG_STRV_INIT;
	struct pg_error tmp = PG_ERROR_INIT;
	int ret;

	if ((ret = pg_yget_string(a->d, v, p, out, a->err)))
		return ret;
	if (pg_template_names(&names, *out, &tmp))
		ret = pg_yerr(a->d, v, p, a->err, "%s", tmp.msg);
	pg_strv_release(&names);
	return ret;
}

static int unknown(struct actx *a, const struct pg_ypair *pr, const struct pg_ypath *p,
		   const char *const *names, size_t n)
{
	const char *near = pg_nearest(pr->key, names, n);

	if (near)
		return pg_yerr(a->d, pr->key_node, p, a->err,
			       "unknown key '%s' (did you mean '%s'?)", pr->key, near);
	return pg_yerr(a->d, pr->key_node, p, a->err, "unknown key '%s'", pr->key);
}

static int read_server(struct actx *a, struct pg_ab_side_spec *sd, yaml_node_t *v,
		       const struct pg_ypath *p)
{
	static const char *const keys[] = { "command", "flags", "env", "replace_test_flags" };
	struct pg_ypair *pairs = NULL;
	size_t n = 0;
	int ret;

	if ((ret = pg_ymap_pairs(a->d, v, p, "a mapping: command, flags, env, replace_test_flags",
				 &pairs, &n, a->err)))
		return ret;
	for (size_t i = 0; i < n && !ret; i++) {
		struct pg_ypath kp = { p, pairs[i].key, 0 };
		if (!strcmp(pairs[i].key, "command"))
			ret = get_template(a, pairs[i].value, &kp, &sd->server_command);
		else if (!strcmp(pairs[i].key, "flags"))
			ret = get_template(a, pairs[i].value, &kp, &sd->server_flags);
		else if (!strcmp(pairs[i].key, "env"))
			ret = get_kv(a, &sd->server_env, pairs[i].value, &kp);
		else if (!strcmp(pairs[i].key, "replace_test_flags"))
			ret = pg_yget_bool(a->d, pairs[i].value, &kp, &sd->replace_test_flags,
					   a->err);
		else
			ret = unknown(a, &pairs[i], p, keys, 4);
	}
	free(pairs);
	return ret;
}

static int read_side(struct actx *a, struct pg_ab_side_spec *sd, yaml_node_t *v,
		     const struct pg_ypath *p)
{
	static const char *const keys[] = { "server", "command", "command_env" };
	struct pg_ypair *pairs = NULL;
	size_t n = 0;
	int ret;

	if (pg_ynode_is_null(v))
		return 0; /* the suite as it is */
	if ((ret = pg_ymap_pairs(a->d, v, p, "a mapping: server, command, command_env", &pairs, &n,
				 a->err)))
		return ret;
	for (size_t i = 0; i < n && !ret; i++) {
		struct pg_ypath kp = { p, pairs[i].key, 0 };
		if (!strcmp(pairs[i].key, "server"))
			ret = read_server(a, sd, pairs[i].value, &kp);
		else if (!strcmp(pairs[i].key, "command"))
			ret = get_template(a, pairs[i].value, &kp, &sd->command);
		else if (!strcmp(pairs[i].key, "command_env"))
			ret = get_kv(a, &sd->command_env, pairs[i].value, &kp);
		else
			ret = unknown(a, &pairs[i], p, keys, 3);
	}
	free(pairs);
	return ret;
}

int pg_cfg_ab(struct pg_cfg *c, const struct pg_ydoc *d, yaml_node_t *node,
	      const struct pg_ypath *path)
{
	static const char *const keys[] = {
		"base",        "head",      "min_blocks",        "max_blocks",
		"time_budget", "tolerance", "latency_tolerance", "whole_run_tolerance",
		"false_alarm"
	};
	struct actx a = { d, c->err };
	struct pg_ab_spec *ab = pg_xcalloc(1, sizeof(*ab));
	struct pg_ypair *pairs = NULL;
	yaml_node_t *max_node = NULL;
	size_t n = 0;
	bool sides[2] = { false, false };
	int ret;

	pg_ab_spec_init(ab);
	if (c->suite->ab) {
		ret = pg_yerr(d, node, path, c->err,
			      "a second 'ab' section (the first is in %s:%d): one A/B per run",
			      c->suite->ab->loc.file, c->suite->ab->loc.line);
		goto done;
	}
	if ((ret = pg_ymap_pairs(d, node, path, "a mapping: base, head, max_blocks, tolerance, ...",
				 &pairs, &n, c->err)))
		goto done;
	for (size_t i = 0; i < n && !ret; i++) {
		struct pg_ypath kp = { path, pairs[i].key, 0 };
		yaml_node_t *v = pairs[i].value;
		const char *k = pairs[i].key;

		if (!strcmp(k, "base") || !strcmp(k, "head")) {
			int s = !strcmp(k, "head");
			sides[s] = true;
			ret = read_side(&a, &ab->side[s], v, &kp);
		} else if (!strcmp(k, "min_blocks")) {
			ret = pg_yget_long(d, v, &kp, 2, &ab->min_blocks, c->err);
		} else if (!strcmp(k, "max_blocks")) {
			ret = pg_yget_long(d, v, &kp, 2, &ab->max_blocks, c->err);
			max_node = v;
		} else if (!strcmp(k, "time_budget")) {
			ret = get_duration(&a, v, &kp, &ab->time_budget);
		} else if (!strcmp(k, "tolerance")) {
			ret = get_fraction(&a, v, &kp, &ab->tolerance);
		} else if (!strcmp(k, "latency_tolerance")) {
			ret = get_fraction(&a, v, &kp, &ab->latency_tolerance);
		} else if (!strcmp(k, "whole_run_tolerance")) {
			ret = get_fraction(&a, v, &kp, &ab->whole_run_tolerance);
		} else if (!strcmp(k, "false_alarm")) {
			ret = get_fraction(&a, v, &kp, &ab->false_alarm);
		} else {
			ret = unknown(&a, &pairs[i], path, keys, sizeof(keys) / sizeof(keys[0]));
		}
	}
	if (ret)
		goto done;
	if (!sides[0] || !sides[1]) {
		ret = pg_yerr(d, node, path, c->err,
			      "an A/B run needs both sides: 'base' and 'head' (an empty side "
			      "runs the suite as written)");
		goto done;
	}
	/* blocks come in pairs, and a pair's interval needs two of them */
	if (ab->max_blocks % 2 || ab->min_blocks % 2) {
		struct pg_ypath kp = { path, ab->max_blocks % 2 ? "max_blocks" : "min_blocks", 0 };
		ret = pg_yerr(d, ab->max_blocks % 2 ? max_node : node, &kp, c->err,
			      "expected an even number of blocks (base and head in pairs), got %ld",
			      ab->max_blocks % 2 ? ab->max_blocks : ab->min_blocks);
		goto done;
	}
	if (ab->min_blocks > ab->max_blocks) {
		struct pg_ypath kp = { path, "max_blocks", 0 };
		ret = pg_yerr(d, max_node ? max_node : node, &kp, c->err,
			      "max_blocks %ld is below min_blocks %ld", ab->max_blocks,
			      ab->min_blocks);
		goto done;
	}
	ab->loc.file = pg_xstrdup(d->file);
	ab->loc.line = pg_ydoc_line(d, node);
	ab->loc.column = pg_ydoc_column(d, node);
	c->suite->ab = ab;
	ab = NULL;
done:
	free(pairs);
	if (ab) {
		pg_ab_spec_release(ab);
		free(ab);
	}
	return ret;
}
