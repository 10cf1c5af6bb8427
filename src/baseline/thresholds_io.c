#include "baseline/thresholds_io.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "gate/compare_stats.h"
#include "base/error.h"
#include "base/strutil.h"
#include "baseline/thresholds.h"
#include "gpu/gpu.h"
#include "sys/fsutil.h"
#include "sys/gitinfo.h"
#include "sys/yamldoc.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libgen.h>

/*
 * Loading goes through sys/yamldoc.h, like every other perfgate file: its
 * typed getters and messages ("<file>:<line>:<col>: <key.path>: ...").
 * The loader also notes where the top-level "baselines" key and the key
 * after it sit, so an update can rewrite that section alone.
 */
struct tload {
	struct pg_ydoc d;
	struct pg_error *err;
	int baselines_line; /* 0-based line of the top-level "baselines" key, or -1 */
	int after_line;     /* line of the top-level key after it, or -1 */
};

#define KEY(parent, k)                                                                             \
	{                                                                                          \
		(parent), (k), 0                                                                   \
	}

static int unknown(struct tload *t, const struct pg_ypair *pr, const struct pg_ypath *at,
		   const char *what, const char *const *known, size_t n_known)
{
	const char *near = pg_nearest(pr->key, known, n_known);
	if (near)
		return pg_yerr(&t->d, pr->key_node, at, t->err,
			       "unknown %s '%s' (did you mean '%s'?)", what, pr->key, near);
	return pg_yerr(&t->d, pr->key_node, at, t->err, "unknown %s '%s'", what, pr->key);
}

/* The pairs of a mapping; a null value (an empty "tests:") has none. */
static int pairs(struct tload *t, yaml_node_t *map, const struct pg_ypath *at, const char *what,
		 struct pg_ypair **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (pg_ynode_is_null(map))
		return 0;
	return pg_ymap_pairs(&t->d, map, at, what, out, n, t->err);
}

/*
 * A relative amount: "2.6%" or a fraction (0.026). A bare number of 1 or
 * more is almost certainly a percentage without its sign, so it is refused
 * rather than read as 100% or more.
 */
static int get_fraction(struct tload *t, const yaml_node_t *n, const struct pg_ypath *at,
			double *out)
{
	const char *s = pg_ynode_text(n);

	if (pg_ynode_is_scalar(n) && pg_parse_percent(s, out) == 0)
		return 0;
	if (!pg_ynode_is_scalar(n) || pg_ynode_is_quoted(n) || pg_parse_double(s, out) ||
	    !isfinite(*out) || *out < 0)
		return pg_yexpected(&t->d, n, at, t->err,
				    "a percentage like 2.5%% (or a fraction like 0.025)");
	if (*out >= 1)
		return pg_yerr(&t->d, n, at, t->err,
			       "%s is 100%% or more: write a percentage like %s%%", s, s);
	return 0;
}

/* A floor: a number, or a number and the metric's unit ("5 ms"). */
static int get_floor(struct tload *t, const yaml_node_t *n, const struct pg_ypath *at,
		     const char *metric_id, double *out)
{
	const char *s = pg_ynode_text(n), *sp = strchr(s, ' ');
	char num[64];
	size_t nm;
	const struct pg_metric *all = pg_metrics_all(&nm);

	if (!sp)
		return pg_yget_double(&t->d, n, at, false, out, t->err);
	snprintf(num, sizeof(num), "%.*s", (int)(sp - s < 60 ? sp - s : 60), s);
	if (pg_ynode_is_quoted(n) || pg_parse_double(num, out) || !isfinite(*out) || *out < 0)
		return pg_yexpected(&t->d, n, at, t->err, "a number like 5, or 5 ms");
	while (*sp == ' ')
		sp++;
	/* the unit must be the metric's ("*" stands for metrics that disagree) */
	for (size_t i = 0; i < nm; i++)
		if (!strcmp(all[i].id, metric_id) && strcmp(all[i].unit, sp))
			return pg_yerr(&t->d, n, at, t->err, "unit '%s' is not %s's unit '%s'", sp,
				       metric_id, all[i].unit[0] ? all[i].unit : "(none)");
	if (!strcmp(metric_id, "*"))
		return pg_yerr(&t->d, n, at, t->err, "a floor for every metric cannot have a unit");
	return 0;
}

/* ------------------------------------------------------------------ */
/* Policy                                                              */

static const char *const rule_keys[] = { "gate", "tolerance", "floor",   "escalate",
					 "min",  "max",       "certify", "noise_sigmas" };

/*
 * An SLO bound, `min: 99%` or `max: 2000 ms`, in the metric's display
 * units: a percentage for metrics shown in % (slo_attainment), else a
 * number with the metric's unit or none. min belongs to metrics where
 * higher is better, max to the others.
 */
static int get_limit(struct tload *t, const struct pg_ypair *pr, const struct pg_ypath *at,
		     const char *metric_id, double *out)
{
	size_t nm;
	const struct pg_metric *all = pg_metrics_all(&nm), *m = NULL;
	bool want_min = !strcmp(pr->key, "min");

	for (size_t i = 0; i < nm && !m; i++)
		if (!strcmp(all[i].id, metric_id))
			m = &all[i];
	if (!m)
		return pg_yerr(&t->d, pr->key_node, at, t->err,
			       "an SLO bound belongs to one metric, not '%s'", metric_id);
	if (want_min != (m->direction == PG_HIGHER_IS_BETTER))
		return pg_yerr(&t->d, pr->key_node, at, t->err,
			       "%s is %s-is-better: its SLO bound is '%s', not '%s'", m->id,
			       m->direction == PG_HIGHER_IS_BETTER ? "higher" : "lower",
			       want_min ? "max" : "min", pr->key);
	if (!strcmp(m->unit, "%")) {
		if (get_fraction(t, pr->value, at, out))
			return PG_ECONFIG;
		*out *= m->scale;
		return 0;
	}
	return get_floor(t, pr->value, at, metric_id, out);
}

/* Settings of the first gate (a Mann-Whitney test per metric, a pooled
 * re-run), which the step decision replaced: still read, so files that
 * have them load, and ignored (docs/gate.md). */
static bool legacy_key(const char *key)
{
	return !strcmp(key, "alpha") || !strcmp(key, "min_samples") || !strcmp(key, "recheck");
}

static int parse_rule(struct tload *t, yaml_node_t *map, const struct pg_ypath *at,
		      const char *metric, struct pg_rule_patch *patch)
{
	struct pg_ypair *ps;
	size_t n;
	int rc = pairs(t, map, at, "a mapping of settings ({ gate: true, tolerance: 3% })", &ps,
		       &n);

	memset(patch, 0, sizeof(*patch));
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const struct pg_ypair *pr = &ps[i];
		const struct pg_ypath here = KEY(at, pr->key);
		struct pg_rule *r = &patch->rule;

		if (!strcmp(pr->key, "gate")) {
			rc = pg_yget_bool(&t->d, pr->value, &here, &r->gate, t->err);
			patch->set |= PG_RULE_GATE;
		} else if (!strcmp(pr->key, "tolerance")) {
			rc = get_fraction(t, pr->value, &here, &r->tolerance);
			patch->set |= PG_RULE_TOLERANCE;
		} else if (!strcmp(pr->key, "floor")) {
			rc = get_floor(t, pr->value, &here, metric, &r->floor);
			patch->set |= PG_RULE_FLOOR;
		} else if (!strcmp(pr->key, "escalate")) {
			const char *s = pg_ynode_text(pr->value);
			if (!pg_ynode_is_quoted(pr->value) &&
			    (!strcmp(s, "false") || !strcmp(s, "0")))
				r->escalate = 0;
			else
				rc = get_fraction(t, pr->value, &here, &r->escalate);
			patch->set |= PG_RULE_ESCALATE;
		} else if (!strcmp(pr->key, "min") || !strcmp(pr->key, "max")) {
			if (patch->set & PG_RULE_LIMIT)
				rc = pg_yerr(&t->d, pr->key_node, &here, t->err,
					     "one SLO bound per metric: min or max");
			else
				rc = get_limit(t, pr, &here, metric, &r->limit);
			patch->set |= PG_RULE_LIMIT;
		} else if (!strcmp(pr->key, "certify")) {
			rc = pg_yget_bool(&t->d, pr->value, &here, &r->certify, t->err);
			patch->set |= PG_RULE_CERTIFY;
		} else if (legacy_key(pr->key)) {
			continue;
		} else if (!strcmp(pr->key, "noise_sigmas")) {
			rc = pg_yget_double(&t->d, pr->value, &here, false, &r->noise_sigmas,
					    t->err);
			if (!rc && r->noise_sigmas < 0)
				rc = pg_yerr(&t->d, pr->value, &here, t->err,
					     "must not be negative");
			patch->set |= PG_RULE_NOISE_SIGMAS;
		} else {
			rc = unknown(t, pr, at, "setting", rule_keys,
				     sizeof(rule_keys) / sizeof(rule_keys[0]));
		}
	}
	free(ps);
	return rc;
}

static int check_metric_id(struct tload *t, const struct pg_ypair *pr, const struct pg_ypath *at)
{
	size_t nm, k = 0;
	const struct pg_metric *all = pg_metrics_all(&nm);
	const char *ids[128];

	if (!strcmp(pr->key, "*"))
		return 0;
	for (size_t i = 0; i < nm && k < 128; i++) {
		if (!strcmp(all[i].id, pr->key) && all[i].direction != PG_NO_DIRECTION)
			return 0;
		if (all[i].direction != PG_NO_DIRECTION)
			ids[k++] = all[i].id;
	}
	return unknown(t, pr, at, "metric", ids, k);
}

static int parse_metric_rules(struct tload *t, yaml_node_t *map, const struct pg_ypath *at,
			      const char *pattern, struct pg_policy *p)
{
	struct pg_ypair *ps;
	size_t n;
	int rc = pairs(t, map, at, "a mapping of metric: { settings }", &ps, &n);

	for (size_t i = 0; rc == 0 && i < n; i++) {
		const struct pg_ypath here = KEY(at, ps[i].key);
		struct pg_rule_patch patch;

		if ((rc = check_metric_id(t, &ps[i], at)) ||
		    (rc = parse_rule(t, ps[i].value, &here, ps[i].key, &patch)))
			break;
		pg_policy_add(p, pattern, ps[i].key, &patch, pg_ynode_line(ps[i].key_node));
	}
	free(ps);
	return rc;
}

static const char *const policy_keys[] = { "step_false_alarm", "rerun_anchors", "history_window",
					   "min_history",      "persist",       "noise_sigmas",
					   "escalate",         "metrics",       "tests" };

static int parse_policy(struct tload *t, yaml_node_t *map, struct pg_policy *p)
{
	const struct pg_ypath at = KEY(NULL, "policy");
	struct pg_ypair *ps;
	size_t n;
	int rc = pairs(t, map, &at, "a mapping of policy settings", &ps, &n);

	for (size_t i = 0; rc == 0 && i < n; i++) {
		const struct pg_ypair *pr = &ps[i];
		const struct pg_ypath here = KEY(&at, pr->key);

		if (!strcmp(pr->key, "step_false_alarm")) {
			rc = get_fraction(t, pr->value, &here, &p->step_false_alarm);
			if (!rc && p->step_false_alarm <= 0)
				rc = pg_yerr(&t->d, pr->value, &here, t->err, "must be above 0");
		} else if (!strcmp(pr->key, "rerun_anchors")) {
			rc = pg_yget_long(&t->d, pr->value, &here, 0, &p->rerun_anchors, t->err);
		} else if (legacy_key(pr->key)) {
			continue;
		} else if (!strcmp(pr->key, "history_window")) {
			rc = pg_yget_long(&t->d, pr->value, &here, 1, &p->history_window, t->err);
		} else if (!strcmp(pr->key, "min_history")) {
			rc = pg_yget_long(&t->d, pr->value, &here, 1, &p->min_history, t->err);
		} else if (!strcmp(pr->key, "persist")) {
			rc = pg_yget_long(&t->d, pr->value, &here, 1, &p->persist, t->err);
			if (!rc && p->persist > 3)
				rc = pg_yerr(&t->d, pr->value, &here, t->err,
					     "must be 1, 2 or 3 (runs at a new level before the "
					     "level follows it)");
		} else if (!strcmp(pr->key, "noise_sigmas")) {
			rc = pg_yget_double(&t->d, pr->value, &here, false, &p->noise_sigmas,
					    t->err);
			if (!rc && p->noise_sigmas < 0)
				rc = pg_yerr(&t->d, pr->value, &here, t->err,
					     "must not be negative");
		} else if (!strcmp(pr->key, "escalate")) {
			rc = get_fraction(t, pr->value, &here, &p->escalate);
		} else if (!strcmp(pr->key, "metrics")) {
			rc = parse_metric_rules(t, pr->value, &here, NULL, p);
		} else if (!strcmp(pr->key, "tests")) {
			struct pg_ypair *tests;
			size_t nt;
			rc = pairs(t, pr->value, &here,
				   "a mapping of test: { metric: { settings } }", &tests, &nt);
			for (size_t k = 0; rc == 0 && k < nt; k++) {
				const struct pg_ypath test_at = KEY(&here, tests[k].key);
				rc = parse_metric_rules(t, tests[k].value, &test_at, tests[k].key,
							p);
			}
			free(tests);
		} else {
			rc = unknown(t, pr, &at, "setting", policy_keys,
				     sizeof(policy_keys) / sizeof(policy_keys[0]));
		}
	}
	if (rc == 0 && p->min_history > p->history_window)
		rc = pg_yerr(&t->d, map, &at, t->err,
			     "min_history (%ld) is more than history_window (%ld)", p->min_history,
			     p->history_window);
	free(ps);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Baselines                                                           */

static const char *const point_keys[] = { "suite", "test",    "qps",    "max_concurrency",
					  "gpu",   "source",  "date",   "commit",
					  "runs",  "repeats", "values", "samples" };

static const struct pg_metric *suite_metric(struct tload *t, const struct pg_ypair *pr,
					    const struct pg_ypath *at, enum pg_suite_kind suite,
					    int *rc)
{
	const struct pg_metric *m = pg_metric_by_id(suite, pr->key);
	const char *ids[64];
	size_t n = 0, nm;
	const struct pg_metric *all = pg_metrics_all(&nm);
	char what[64];

	if (m && m->direction != PG_NO_DIRECTION)
		return m;
	for (size_t i = 0; i < nm && n < 64; i++)
		if (all[i].suite == suite && all[i].direction != PG_NO_DIRECTION)
			ids[n++] = all[i].id;
	snprintf(what, sizeof(what), "metric for a %s test", pg_suite_kind_name(suite));
	for (int other = 0; other < PG_SUITE_COUNT; other++)
		if (other != (int)suite && pg_metric_by_id((enum pg_suite_kind)other, pr->key)) {
			*rc = pg_yerr(&t->d, pr->key_node, at, t->err,
				      "unknown %s '%s' (a %s test metric)", what, pr->key,
				      pg_suite_kind_name((enum pg_suite_kind)other));
			return NULL;
		}
	*rc = unknown(t, pr, at, what, ids, n);
	return NULL;
}

static int parse_samples(struct tload *t, const yaml_node_t *seq, const struct pg_ypath *at,
			 double **out, size_t *n)
{
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	if (!pg_ynode_is_seq(seq))
		return pg_yexpected(&t->d, seq, at, t->err, "a list of numbers");
	for (size_t i = 0; i < pg_yseq_len(seq); i++) {
		const struct pg_ypath item = { at, NULL, i };
		double x;
		if (pg_yget_double(&t->d, pg_yseq_item(&t->d, seq, i), &item, false, &x, t->err)) {
			free(*out);
			*out = NULL;
			return PG_ECONFIG;
		}
		PG_ARRAY_PUSH(*out, *n, cap, x);
	}
	return 0;
}

static int parse_values(struct tload *t, struct pg_base_point *p, yaml_node_t *values,
			yaml_node_t *samples, const struct pg_ypath *at)
{
	const struct pg_ypath vat = KEY(at, "values"), sat = KEY(at, "samples");
	struct pg_ypair *vs = NULL, *ss = NULL;
	size_t nv = 0, ns = 0;
	int rc;

	if ((rc = pg_ymap_pairs(&t->d, values, &vat, "a mapping of metric: value", &vs, &nv,
				t->err)))
		goto done;
	if (!nv) {
		rc = pg_yerr(&t->d, values, &vat, t->err, "no metrics");
		goto done;
	}
	if (samples && (rc = pairs(t, samples, &sat, "a mapping of metric: [samples]", &ss, &ns)))
		goto done;
	for (size_t i = 0; i < ns; i++) {
		if (!suite_metric(t, &ss[i], &sat, p->suite, &rc))
			goto done;
		if (!pg_ymap_get(&t->d, values, ss[i].key)) {
			const struct pg_ypath here = KEY(&sat, ss[i].key);
			rc = pg_yerr(&t->d, ss[i].key_node, &here, t->err,
				     "samples of a metric that has no value");
			goto done;
		}
	}
	for (size_t i = 0; i < nv; i++) {
		const struct pg_ypath here = KEY(&vat, vs[i].key);
		const struct pg_metric *m = suite_metric(t, &vs[i], &vat, p->suite, &rc);
		yaml_node_t *sv = samples ? pg_ymap_get(&t->d, samples, vs[i].key) : NULL;
		const struct pg_ypath shere = KEY(&sat, vs[i].key);
		double value, *xs = NULL;
		size_t n_xs = 0;
		struct pg_base_metric *bm;

		if (!m || (rc = pg_yget_double(&t->d, vs[i].value, &here, false, &value, t->err)))
			goto done;
		if (sv && (rc = parse_samples(t, sv, &shere, &xs, &n_xs)))
			goto done;
		bm = pg_base_point_add_metric(p, m, value, xs, n_xs);
		bm->runs = p->runs;
		bm->line = pg_ynode_line(vs[i].key_node);
		/* samples of several runs are their medians: their spread is the
		 * run-to-run noise the tolerance must cover */
		if (p->runs > 1 && n_xs >= 3)
			bm->noise = pg_cmpstat_robust_cv(xs, n_xs);
		free(xs);
	}
done:
	free(vs);
	free(ss);
	return rc;
}

static int parse_point(struct tload *t, const struct pg_ypair *point, const struct pg_ypath *parent,
		       struct pg_baseline *base)
{
	const struct pg_ypath at = KEY(parent, point->key);
	struct pg_ypair *ps;
	size_t n;
	yaml_node_t *suite_node, *values;
	struct pg_base_point *p;
	int rc, suite;

	if ((rc = pg_ymap_pairs(&t->d, point->value, &at, "a mapping (suite:, values:, ...)", &ps,
				&n, t->err)))
		return rc;
	suite_node = pg_ymap_get(&t->d, point->value, "suite");
	values = pg_ymap_get(&t->d, point->value, "values");
	suite = suite_node ? pg_suite_kind_parse(pg_ynode_text(suite_node)) : -1;
	if (!suite_node)
		rc = pg_yerr(&t->d, point->key_node, &at, t->err,
			     "missing 'suite' (latency, throughput or serving)");
	else if (suite < 0) {
		const struct pg_ypath here = KEY(&at, "suite");
		rc = pg_yexpected(&t->d, suite_node, &here, t->err,
				  "latency, throughput or serving");
	} else if (!values)
		rc = pg_yerr(&t->d, point->key_node, &at, t->err,
			     "missing 'values' (metric: number)");
	if (rc)
		goto done;
	p = pg_baseline_add(base, point->key, (enum pg_suite_kind)suite);
	p->line = pg_ynode_line(point->key_node);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const struct pg_ypair *pr = &ps[i];
		const struct pg_ypath here = KEY(&at, pr->key);

		if (!strcmp(pr->key, "suite") || !strcmp(pr->key, "values") ||
		    !strcmp(pr->key, "samples"))
			continue;
		if (!strcmp(pr->key, "test"))
			rc = pg_yget_string(&t->d, pr->value, &here, &p->test, t->err);
		else if (!strcmp(pr->key, "gpu"))
			rc = pg_yget_string(&t->d, pr->value, &here, &p->gpu, t->err);
		else if (!strcmp(pr->key, "source"))
			rc = pg_yget_string(&t->d, pr->value, &here, &p->source, t->err);
		else if (!strcmp(pr->key, "date"))
			rc = pg_yget_string(&t->d, pr->value, &here, &p->date, t->err);
		else if (!strcmp(pr->key, "commit"))
			rc = pg_yget_string(&t->d, pr->value, &here, &p->commit, t->err);
		else if (!strcmp(pr->key, "qps")) {
			rc = pg_yget_double(&t->d, pr->value, &here, true, &p->qps, t->err);
			if (!rc && !(p->qps > 0))
				rc = pg_yerr(&t->d, pr->value, &here, t->err,
					     "must be above 0 (or inf)");
		} else if (!strcmp(pr->key, "max_concurrency"))
			rc = pg_yget_long(&t->d, pr->value, &here, 1, &p->max_concurrency, t->err);
		else if (!strcmp(pr->key, "runs"))
			rc = pg_yget_long(&t->d, pr->value, &here, 1, &p->runs, t->err);
		else if (!strcmp(pr->key, "repeats"))
			rc = pg_yget_long(&t->d, pr->value, &here, 1, &p->repeats, t->err);
		else
			rc = unknown(t, pr, &at, "key", point_keys,
				     sizeof(point_keys) / sizeof(point_keys[0]));
	}
	if (rc == 0)
		rc = parse_values(t, p, values, pg_ymap_get(&t->d, point->value, "samples"), &at);
done:
	free(ps);
	return rc;
}

static int parse_baselines(struct tload *t, yaml_node_t *map, struct pg_baseline *base)
{
	const struct pg_ypath at = KEY(NULL, "baselines");
	struct pg_ypair *ps;
	size_t n;
	int rc = pairs(t, map, &at, "a mapping of test point: { suite:, values: }", &ps, &n);

	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = parse_point(t, &ps[i], &at, base);
	free(ps);
	pg_baseline_sort(base);
	return rc;
}

/* ------------------------------------------------------------------ */

static const char *const top_keys[] = { "gpu", "policy", "baselines", "health" };

static int load_text(struct tload *t, const char *path, const char *text, size_t len,
		     struct pg_policy *policy, struct pg_baseline *base)
{
	struct pg_ypair *ps = NULL;
	size_t n = 0;
	yaml_node_t *root;
	int rc;

	t->baselines_line = t->after_line = -1;
	if ((rc = pg_ydoc_load(&t->d, text, len, path, t->err)))
		goto done;
	root = pg_ydoc_root(&t->d);
	if (!root) {
		rc = pg_error_set(t->err, PG_ECONFIG,
				  "%s: empty file (expected gpu:, policy: and baselines:)", path);
		goto done;
	}
	if ((rc = pg_ymap_pairs(&t->d, root, NULL, "a mapping (gpu:, policy:, baselines:)", &ps, &n,
				t->err)))
		goto done;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const struct pg_ypair *pr = &ps[i];
		const struct pg_ypath here = KEY(NULL, pr->key);

		if (t->baselines_line >= 0 && t->after_line < 0)
			t->after_line = pg_ynode_line(pr->key_node) - 1;
		if (!strcmp(pr->key, "gpu")) {
			rc = pg_yget_string(&t->d, pr->value, &here, &base->gpu, t->err);
		} else if (!strcmp(pr->key, "policy")) {
			rc = parse_policy(t, pr->value, policy);
		} else if (!strcmp(pr->key, "baselines")) {
			t->baselines_line = pg_ynode_line(pr->key_node) - 1;
			rc = parse_baselines(t, pr->value, base);
		} else if (!strcmp(pr->key, "health")) {
			/* the job health policy: telemetry/health_io.c reads it */
		} else {
			rc = unknown(t, pr, NULL, "section", top_keys, 4);
		}
	}
done:
	free(ps);
	pg_ydoc_release(&t->d);
	return rc;
}

/* What the file does not set: the defaults, no points. */
static void load_init(struct pg_policy *policy, struct pg_baseline *base, const char *path)
{
	pg_policy_init(policy);
	memset(base, 0, sizeof(*base));
	base->kind = pg_xstrdup("thresholds");
	base->source = pg_xstrdup(path);
}

int pg_thresholds_load_text(const char *text, size_t len, const char *path,
			    struct pg_policy *policy, struct pg_baseline *base,
			    struct pg_error *err)
{
	struct tload t = { .err = err };

	load_init(policy, base, path);
	return load_text(&t, path, text, len, policy, base);
}

int pg_thresholds_load(const char *path, struct pg_policy *policy, struct pg_baseline *base,
		       struct pg_error *err)
{
	struct pg_buf text = PG_BUF_INIT;
	struct tload t = { .err = err };
	int rc;

	load_init(policy, base, path);
	rc = pg_file_read(path, &text, err);
	if (rc == 0)
		rc = load_text(&t, path, text.ptr, text.len, policy, base);
	pg_buf_release(&text);
	return rc;
}

void pg_thresholds_origin_release(struct pg_thresholds_origin *o)
{
	free(o->rev);
	free(o->relpath);
	free(o->diff);
	memset(o, 0, sizeof(*o));
}

/* origin from the two copies (either may be absent: NULL). */
static void fill_origin(struct pg_thresholds_origin *o, const char *rev, const char *relpath,
			const struct pg_buf *at_rev, const struct pg_buf *here)
{
	struct pg_buf diff = PG_BUF_INIT;

	o->in_repo = true;
	o->rev = pg_xstrdup(rev);
	o->relpath = pg_xstrdup(relpath);
	o->in_rev = at_rev != NULL;
	o->in_checkout = here != NULL;
	/* neither copy: nothing changed (no file on either side is no deletion) */
	o->differs = (at_rev || here) && (!at_rev || !here || at_rev->len != here->len ||
					  (here->len && memcmp(at_rev->ptr, here->ptr, here->len)));
	if (!o->differs)
		return;
	pg_git_diff_text(&diff, &o->added, &o->removed, relpath, at_rev ? at_rev->ptr : "",
			 at_rev ? at_rev->len : 0, here ? here->ptr : "", here ? here->len : 0);
	o->diff = pg_buf_detach(&diff);
}

/* Both copies of path: the commit's (*at_ok) and the working tree's
 * (*here_ok). *outside: path is in no repository (nothing read). Returns
 * the error of reading the commit's copy (PG_ENOTFOUND: it has none). */
static int both_copies(const char *path, const char *rev, struct pg_buf *at, bool *at_ok,
		       struct pg_buf *here, bool *here_ok, bool *outside, char **relpath,
		       struct pg_error *err)
{
	struct pg_error ignored = PG_ERROR_INIT;
	int rc = pg_git_read_at(at, outside, relpath, rev, path, err);

	*at_ok = rc == 0 && !*outside;
	*here_ok = pg_file_read(path, here, &ignored) == 0;
	return rc;
}

void pg_thresholds_compare_at(struct pg_thresholds_origin *origin, const char *path,
			      const char *rev)
{
	struct pg_buf at = PG_BUF_INIT, here = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;
	char *rel = NULL;
	bool at_ok, here_ok, outside;
	int rc = both_copies(path, rev, &at, &at_ok, &here, &here_ok, &outside, &rel, &err);

	memset(origin, 0, sizeof(*origin));
	if (!outside && (rc == 0 || rc == PG_ENOTFOUND))
		fill_origin(origin, rev, rel ? rel : path, at_ok ? &at : NULL,
			    here_ok ? &here : NULL);
	free(rel);
	pg_buf_release(&at);
	pg_buf_release(&here);
}

int pg_thresholds_load_at(const char *path, const char *rev, struct pg_policy *policy,
			  struct pg_baseline *base, struct pg_thresholds_origin *origin,
			  struct pg_error *err)
{
	struct pg_thresholds_origin own = { 0 };
	struct pg_thresholds_origin *o = origin ? origin : &own;
	struct pg_buf at = PG_BUF_INIT, here = PG_BUF_INIT, label = PG_BUF_INIT;
	struct tload t = { .err = err };
	char *rel = NULL;
	bool at_ok, here_ok, outside;
	int rc;

	memset(o, 0, sizeof(*o));
	pg_policy_init(policy);
	memset(base, 0, sizeof(*base));
	rc = both_copies(path, rev, &at, &at_ok, &here, &here_ok, &outside, &rel, err);
	if (outside) {
		/* in no repository: nothing a pull request could have changed */
		pg_policy_release(policy);
		rc = pg_thresholds_load(path, policy, base, err);
		goto done;
	}
	if (rc && rc != PG_ENOTFOUND)
		goto done;
	fill_origin(o, rev, rel ? rel : path, at_ok ? &at : NULL, here_ok ? &here : NULL);
	base->kind = pg_xstrdup("thresholds");
	pg_buf_printf(&label, "%s at %.12s", rel ? rel : path, rev);
	base->source = pg_xstrdup(label.ptr);
	if (!at_ok) {
		if (rc == PG_ENOTFOUND)
			pg_error_set(
				err, PG_ENOTFOUND,
				"%s: not in the base branch (at %.12s): a pull request that adds "
				"it is gated by it once it is merged",
				rel ? rel : path, rev);
		goto done;
	}
	/* messages name the commit's copy: "thresholds/H100.yml@1a2b3c4d5e6f:12:5: ..." */
	pg_buf_reset(&label);
	pg_buf_printf(&label, "%s@%.12s", rel ? rel : path, rev);
	rc = load_text(&t, label.ptr, at.ptr, at.len, policy, base);
done:
	free(rel);
	pg_buf_release(&at);
	pg_buf_release(&here);
	pg_buf_release(&label);
	pg_thresholds_origin_release(&own);
	return rc;
}

/* A file bigger than this is not a thresholds file anyone reviews. */
#define PIN_FILE_MAX ((size_t)64 << 20)

static void pin_file(struct pg_thresholds_pin *pin, const char *spelled, const char *real)
{
	struct pg_buf text = PG_BUF_INIT;
	struct pg_error ignored = PG_ERROR_INIT;
	struct stat st;

	if (stat(real, &st) || !S_ISREG(st.st_mode) || (size_t)st.st_size > PIN_FILE_MAX ||
	    pg_file_read(real, &text, &ignored)) {
		pg_buf_release(&text);
		return;
	}
	pin->paths = pg_xrealloc(pin->paths, (pin->n + 1) * sizeof(*pin->paths));
	pin->texts = pg_xrealloc(pin->texts, (pin->n + 1) * sizeof(*pin->texts));
	pin->paths[pin->n] = pg_xstrdup(spelled);
	pin->texts[pin->n++] = text;
	if (access(real, W_OK) == 0)
		pin->writable = true;
}

/* Whether this job may create or replace entries in dir. */
static bool dir_writable(const char *dir)
{
	return access(dir, W_OK) == 0;
}

void pg_thresholds_pin(struct pg_thresholds_pin *pin, const char *location)
{
	char *inside = pg_git_checkout_path(location);
	char *real;
	struct stat st;

	memset(pin, 0, sizeof(*pin));
	if (inside) {
		free(inside);
		return;
	}
	pin->outside = true;
	real = realpath(location, NULL);
	pin->where = pg_xstrdup(real ? real : location);
	if (!real) {
		/* nothing there yet: whoever can create it decides what it holds */
		char *copy = pg_xstrdup(location);
		pin->writable = dir_writable(dirname(copy));
		free(copy);
		return;
	}
	if (stat(real, &st) == 0 && S_ISDIR(st.st_mode)) {
		struct pg_strv names = PG_STRV_INIT;
		struct pg_error ignored = PG_ERROR_INIT;
		char *parent = pg_xstrdup(real);

		pin->writable = dir_writable(real) || dir_writable(dirname(parent));
		free(parent);
		if (pg_dir_list(real, ".yml", &names, &ignored) == 0)
			for (size_t i = 0; i < names.n; i++) {
				struct pg_buf spelled = PG_BUF_INIT, file = PG_BUF_INIT;
				pg_buf_printf(&spelled, "%s%s%s", location,
					      pg_str_has_suffix(location, "/") ? "" : "/",
					      names.v[i]);
				pg_buf_printf(&file, "%s/%s", real, names.v[i]);
				pin_file(pin, spelled.ptr, file.ptr);
				pg_buf_release(&spelled);
				pg_buf_release(&file);
			}
		pg_strv_release(&names);
	} else {
		char *dir = pg_xstrdup(real);
		pin->writable = dir_writable(dirname(dir));
		free(dir);
		pin_file(pin, location, real);
	}
	free(real);
}

void pg_thresholds_pin_release(struct pg_thresholds_pin *pin)
{
	for (size_t i = 0; i < pin->n; i++) {
		free(pin->paths[i]);
		pg_buf_release(&pin->texts[i]);
	}
	free(pin->paths);
	free(pin->texts);
	free(pin->where);
	memset(pin, 0, sizeof(*pin));
}

const struct pg_buf *pg_thresholds_pinned(const struct pg_thresholds_pin *pin, const char *path)
{
	for (size_t i = 0; pin && i < pin->n; i++)
		if (!strcmp(pin->paths[i], path))
			return &pin->texts[i];
	return NULL;
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

int pg_thresholds_gpus(struct pg_strv *out, const char *dir, struct pg_error *err)
{
	struct pg_strv files = PG_STRV_INIT;
	int rc = pg_dir_list(dir, ".yml", &files, err);

	for (size_t i = 0; !rc && i < files.n; i++)
		pg_strv_push_owned(out, pg_xstrndup(files.v[i], strlen(files.v[i]) - 4));
	pg_strv_release(&files);
	return rc;
}

void pg_thresholds_gpu_hint(struct pg_buf *out, const char *dir, const char *key)
{
	struct pg_error err = PG_ERROR_INIT;
	struct pg_strv have = PG_STRV_INIT;
	const char *near;
	int rc = pg_thresholds_gpus(&have, dir, &err);

	for (size_t i = 0; i < have.n; i++)
		if (!strcmp(have.v[i], key))
			goto done;
	near = pg_gpu_nearest(key, (const char *const *)have.v, have.n);
	if (near && !strcmp(near, key))
		near = NULL; /* a GPU perfgate knows: the file is what is missing */
	if (near && !strcasecmp(near, key))
		pg_buf_printf(out,
			      " (%s/%s.yml is not it: a GPU's key is its model in capitals, rename "
			      "the file %s.yml)",
			      dir, near, key);
	else if (near)
		pg_buf_printf(out, " (did you mean %s?)", near);
	else if (rc == PG_ENOTFOUND)
		pg_buf_printf(out, " (there is no %s directory)", dir);
	else if (have.n) {
		pg_buf_printf(out, " (%s has ", dir);
		for (size_t i = 0; i < have.n; i++)
			pg_buf_printf(out, "%s%s", i ? ", " : "", have.v[i]);
		pg_buf_putc(out, ')');
	} else if (!rc)
		pg_buf_printf(out, " (%s has no <GPU>.yml)", dir);
done:
	pg_strv_release(&have);
}

bool pg_thresholds_gpu_unknown(struct pg_buf *out, const char *dir, const char *key)
{
	char *path;
	bool unknown;

	if (pg_gpu_known(key))
		return false;
	path = pg_thresholds_path(dir, key);
	unknown = access(path, F_OK) != 0;
	if (unknown) {
		pg_buf_printf(out, "not a GPU perfgate knows, and there is no %s", path);
		pg_thresholds_gpu_hint(out, dir, key);
	}
	free(path);
	return unknown;
}

/* Length of the line break at text[off], 0 when there is none: the breaks
 * libyaml counts lines by (CR LF, CR, LF, and in UTF-8 NEL, LS and PS), so
 * that a line its marks name is the line found here. */
static size_t yaml_break_len(const char *text, size_t len, size_t off)
{
	const unsigned char *u = (const unsigned char *)text + off;
	size_t left = len - off;

	if (u[0] == '\r')
		return left > 1 && u[1] == '\n' ? 2 : 1;
	if (u[0] == '\n')
		return 1;
	if (left > 1 && u[0] == 0xC2 && u[1] == 0x85)
		return 2;
	if (left > 2 && u[0] == 0xE2 && u[1] == 0x80 && (u[2] == 0xA8 || u[2] == 0xA9))
		return 3;
	return 0;
}

/* Byte offset of the start of 0-based line `line` (len when past the end),
 * lines counted as libyaml counts them. */
static size_t line_offset(const char *text, size_t len, int line)
{
	size_t off = 0;
	for (int l = 0; l < line && off < len;) {
		size_t brk = yaml_break_len(text, len, off);
		off += brk ? brk : 1;
		l += brk != 0;
	}
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
		struct pg_base_metric *c = pg_base_point_add_metric(p, m->metric, m->value,
								    m->samples, m->n_samples);
		c->noise = m->noise;
		c->runs = m->runs;
	}
}

/* A whole thresholds file: the header, gpu, the policy, the baselines. */
static void emit_whole(struct pg_buf *out, const char *gpu, const char *regenerate,
		       const struct pg_policy *policy, const struct pg_baseline *b)
{
	pg_thresholds_emit_header(out, gpu ? gpu : "unknown", regenerate);
	pg_buf_puts(out, "\ngpu: ");
	pg_yaml_scalar(out, gpu ? gpu : "unknown");
	pg_buf_puts(out, "\n\n");
	pg_thresholds_emit_policy(out, policy);
	pg_buf_puts(out, "\n");
	pg_thresholds_emit_baselines(out, b);
}

/* 0 when text loads as a thresholds file. */
static int check_loads(const char *path, const struct pg_buf *text, struct pg_error *err)
{
	struct pg_policy policy;
	struct pg_baseline b = PG_BASELINE_INIT;
	struct tload t = { .err = err };
	int rc;

	pg_policy_init(&policy);
	rc = load_text(&t, path, text->ptr, text->len, &policy, &b);
	pg_policy_release(&policy);
	pg_baseline_release(&b);
	return rc;
}

int pg_thresholds_update(const char *path, const struct pg_baseline *fresh,
			 const struct pg_thresholds_update_opts *opts, struct pg_error *err)
{
	struct pg_buf text = PG_BUF_INIT, out = PG_BUF_INIT;
	struct pg_policy policy;
	struct pg_baseline old = PG_BASELINE_INIT, merged = PG_BASELINE_INIT;
	struct tload d = { .err = err };
	bool exists;
	int rc;

	pg_policy_init(&policy);
	rc = pg_file_read(path, &text, err);
	exists = rc == 0;
	if (rc && rc != PG_ENOTFOUND)
		goto done;
	if (exists && (rc = load_text(&d, path, text.ptr, text.len, &policy, &old)))
		goto done;

	if (!opts->replace)
		for (size_t i = 0; i < old.n; i++)
			if (!pg_baseline_find(fresh, old.points[i].name))
				copy_point(&merged, &old.points[i]);
	for (size_t i = 0; i < fresh->n; i++)
		copy_point(&merged, &fresh->points[i]);
	pg_baseline_sort(&merged);

	if (!exists) {
		emit_whole(&out, opts->gpu ? opts->gpu : fresh->gpu, opts->regenerate, &policy,
			   &merged);
	} else if (d.baselines_line < 0) {
		pg_buf_add(&out, text.ptr, text.len);
		if (text.len && text.ptr[text.len - 1] != '\n')
			pg_buf_putc(&out, '\n');
		pg_buf_putc(&out, '\n');
		pg_thresholds_emit_baselines(&out, &merged);
	} else {
		size_t start = line_offset(text.ptr, text.len, d.baselines_line);
		size_t end = d.after_line < 0 ? text.len
					      : line_offset(text.ptr, text.len, d.after_line);
		pg_buf_add(&out, text.ptr, start);
		pg_thresholds_emit_baselines(&out, &merged);
		if (end < text.len) {
			pg_buf_putc(&out, '\n');
			pg_buf_add(&out, text.ptr + end, text.len - end);
		}
	}

	/* the baselines go in as block YAML at the left margin: a file whose
	 * top level is a flow mapping or indented cannot take them there, and
	 * is written whole (its gpu, policy and baselines; its comments go) */
	if (exists && check_loads(path, &out, &(struct pg_error)PG_ERROR_INIT)) {
		pg_buf_reset(&out);
		emit_whole(&out, old.gpu ? old.gpu : opts->gpu, opts->regenerate, &policy, &merged);
	}
	/* what we write must load: a bug here must not destroy a policy */
	if ((rc = check_loads(path, &out, err))) {
		pg_error_prefix(err, "internal error, %s left unchanged", path);
		rc = PG_ERR;
		goto done;
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

int pg_thresholds_load_policy(struct pg_policy *policy, const char *thresholds, const char *gpu,
			      struct pg_error *err)
{
	struct pg_baseline ignored = PG_BASELINE_INIT;
	char *path = pg_thresholds_path(thresholds ? thresholds : "thresholds", gpu);
	int rc = pg_thresholds_load(path, policy, &ignored, err);

	pg_baseline_release(&ignored);
	free(path);
	if (rc == PG_ENOTFOUND) {
		pg_error_clear(err);
		pg_policy_release(policy);
		pg_policy_init(policy);
		rc = 0;
	}
	return rc;
}
