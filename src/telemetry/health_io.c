#include "telemetry/health_io.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "baseline/thresholds_io.h"
#include "results/result.h"
#include "base/error.h"
#include "base/strutil.h"
#include "sys/fsutil.h"
#include "sys/yamldoc.h"
#include "telemetry/gpustat.h"

#include <stdlib.h>
#include <string.h>

static const char *const keys[] = { "on_suspect",      "throttle_seconds", "throttle_reasons",
				    "min_clock_ratio", "errors",           "foreign_process",
				    "foreign_min_mib" };

static int one_of(const struct pg_ydoc *d, const yaml_node_t *n, const struct pg_ypath *at,
		  const char *what, const char *const *choices, size_t nc, struct pg_error *err)
{
	const char *text = pg_ynode_text(n);
	const char *near;

	for (size_t i = 0; i < nc; i++)
		if (!strcmp(text, choices[i]))
			return (int)i;
	near = pg_nearest(text, choices, nc);
	if (near)
		return pg_yerr(d, n, at, err, "unknown %s '%s' (did you mean '%s'?)", what, text,
			       near);
	return pg_yerr(d, n, at, err, "unknown %s '%s'", what, text);
}

static int parse(const struct pg_ydoc *d, yaml_node_t *map, struct pg_health_policy *p,
		 struct pg_error *err)
{
	const struct pg_ypath at = { NULL, "health", 0 };
	struct pg_ypair *ps = NULL;
	size_t n = 0;
	int rc;

	if ((rc = pg_ymap_pairs(d, map, &at, "a mapping of health settings", &ps, &n, err)))
		return rc;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const struct pg_ypair *pr = &ps[i];
		const struct pg_ypath here = { &at, pr->key, 0 };
		bool b;

		if (!strcmp(pr->key, "on_suspect")) {
			static const char *const modes[] = { "rerun", "fail", "ignore" };
			int k = one_of(d, pr->value, &here, "mode", modes, 3, err);
			if (k < 0)
				rc = k;
			else
				p->on_suspect = (enum pg_on_suspect)k;
		} else if (!strcmp(pr->key, "throttle_seconds")) {
			rc = pg_yget_double(d, pr->value, &here, false, &p->throttle_seconds, err);
			if (rc == 0 && p->throttle_seconds < 0)
				rc = pg_yerr(d, pr->value, &here, err, "must be 0 or more");
		} else if (!strcmp(pr->key, "min_clock_ratio")) {
			rc = pg_yget_double(d, pr->value, &here, false, &p->min_clock_ratio, err);
			if (rc == 0 && (p->min_clock_ratio < 0 || p->min_clock_ratio > 1))
				rc = pg_yerr(
					d, pr->value, &here, err,
					"must be between 0 and 1 (a share of the maximum clock)");
		} else if (!strcmp(pr->key, "foreign_min_mib")) {
			rc = pg_yget_double(d, pr->value, &here, false, &p->foreign_min_mib, err);
		} else if (!strcmp(pr->key, "errors")) {
			if ((rc = pg_yget_bool(d, pr->value, &here, &b, err)) == 0)
				p->errors = b;
		} else if (!strcmp(pr->key, "foreign_process")) {
			if ((rc = pg_yget_bool(d, pr->value, &here, &b, err)) == 0)
				p->foreign_process = b;
		} else if (!strcmp(pr->key, "throttle_reasons")) {
			if (!pg_ynode_is_seq(pr->value)) {
				rc = pg_yexpected(d, pr->value, &here, err, "a list of reasons");
				break;
			}
			/* the names NVML gives its clock-event reasons (gpustat.h) */
			const char *reasons[PG_THROTTLE_N_REASONS];
			for (int bit = 0; bit < PG_THROTTLE_N_REASONS; bit++)
				reasons[bit] = pg_throttle_name(bit);
			p->throttle_reasons = 0;
			for (size_t k = 0; rc == 0 && k < pg_yseq_len(pr->value); k++) {
				yaml_node_t *item = pg_yseq_item(d, pr->value, k);
				const struct pg_ypath ip = { &here, NULL, k };
				int r = one_of(d, item, &ip, "throttle reason", reasons,
					       PG_THROTTLE_N_REASONS, err);
				if (r < 0)
					rc = r;
				else
					p->throttle_reasons |= pg_throttle_bit(reasons[r]);
			}
		} else {
			const char *near = pg_nearest(pr->key, keys,
						      sizeof(keys) / sizeof(keys[0]));
			rc = near ? pg_yerr(d, pr->key_node, &at, err,
					    "unknown setting '%s' (did you mean '%s'?)", pr->key,
					    near)
				  : pg_yerr(d, pr->key_node, &at, err, "unknown setting '%s'",
					    pr->key);
		}
	}
	free(ps);
	return rc;
}

int pg_health_policy_load(struct pg_health_policy *p, const char *path, struct pg_error *err)
{
	struct pg_buf text = PG_BUF_INIT;
	struct pg_ydoc d = PG_YDOC_INIT;
	struct pg_error lerr = PG_ERROR_INIT;
	yaml_node_t *root, *section;
	int rc;

	pg_health_policy_default(p);
	rc = pg_file_read(path, &text, &lerr);
	if (rc == PG_ENOTFOUND) {
		rc = 0;
		goto done;
	}
	if (rc) {
		*err = lerr;
		goto done;
	}
	if ((rc = pg_ydoc_load(&d, text.ptr, text.len, path, err)))
		goto done;
	root = pg_ydoc_root(&d);
	section = pg_ynode_is_map(root) ? pg_ymap_get(&d, root, "health") : NULL;
	if (section && !pg_ynode_is_null(section))
		rc = parse(&d, section, p, err);
done:
	pg_ydoc_release(&d);
	pg_buf_release(&text);
	return rc;
}

int pg_health_check(struct pg_buf *out, const char *thresholds, const char *gpu,
		    const struct pg_result_set *set, struct pg_error *err)
{
	char *path = pg_thresholds_path(thresholds ? thresholds : "thresholds", gpu);
	const json_t **res = pg_xcalloc(set->n + 1, sizeof(*res));
	const char **names = pg_xcalloc(set->n + 1, sizeof(*names));
	struct pg_health_policy p;
	struct pg_job_health h = PG_JOB_HEALTH_INIT;
	int rc = pg_health_policy_load(&p, path, err);

	if (rc == 0) {
		for (size_t i = 0; i < set->n; i++) {
			res[i] = set->items[i].json;
			names[i] = set->items[i].name;
		}
		pg_job_health_judge(&h, &p, res, names, set->n);
		if (h.suspect && p.on_suspect == PG_ON_SUSPECT_RERUN)
			pg_job_health_line(out, &h, 3);
	}
	pg_job_health_release(&h);
	free(res);
	free(names);
	free(path);
	return rc;
}
