#include "suite/plan.h"

#include "buildkite/pipeline_emit.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/template.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *pg_point_var(void *vars, const char *name)
{
	struct pg_point_vars *v = vars;
	const char *s;

	/* a role's own values first: its {tp}, {replica}, the addresses */
	if (v->role_vars && (s = pg_kvlist_get(v->role_vars, name)))
		return s;
	if ((s = pg_test_var(v->test, name, v->scratch)))
		return s;
	if (!strcmp(name, "port"))
		return v->port;
	if (!strcmp(name, "host"))
		return v->host;
	if (!strcmp(name, "base_url"))
		return v->base_url;
	if (!strcmp(name, "result"))
		return v->result;
	if (!strcmp(name, "results_dir"))
		return v->results_dir;
	/* an A/B run sets the test's own "side" and "block" vars
	 * (runner/ab_io.c); a plain run is the head, block 0 */
	if (!strcmp(name, "side"))
		return "head";
	if (!strcmp(name, "block"))
		return "0";
	if (!strcmp(name, "start"))
		return v->start ? v->start : "0";
	if (v->point && !strcmp(name, "point"))
		return v->point->name;
	if (v->point && v->test->kind == PG_SUITE_SERVING) {
		if (!strcmp(name, "qps"))
			return pg_fmt_g(v->scratch, v->point->qps);
		if (!strcmp(name, "max_concurrency")) {
			if (v->point->max_concurrency > 0)
				snprintf(v->scratch, sizeof(v->scratch), "%ld",
					 v->point->max_concurrency);
			else
				snprintf(v->scratch, sizeof(v->scratch), "inf");
			return v->scratch;
		}
	}
	return NULL;
}

void pg_role_vars_set(struct pg_kvlist *vars, const struct pg_role_spec *role, const char *replica)
{
	char tp[24];

	snprintf(tp, sizeof(tp), "%ld", role->tp);
	pg_kvlist_set(vars, "replica", replica);
	pg_kvlist_set(vars, "tp", tp);
}

static void describe_selection(struct pg_buf *b, const struct pg_selection *sel)
{
	if (sel->only >= 0)
		pg_buf_printf(b, "only %s", pg_suite_kind_name(sel->only));
	if (sel->filter)
		pg_buf_printf(b, "%sfilter '%s'", b->len ? ", " : "", sel->filter);
	if (sel->shard)
		pg_buf_printf(b, "%sshard %s", b->len ? ", " : "", sel->shard);
}

static bool in_list(const struct pg_strv *v, const char *s)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->v[i], s))
			return true;
	return false;
}

int pg_plan_select(struct pg_plan *out, struct pg_suite *suite, const struct pg_selection *sel,
		   struct pg_error *err)
{
	regex_t re;
	bool have_re = false;
	struct pg_strv shard_tests = PG_STRV_INIT;
	size_t kept = 0, total;
	int ret = 0;

	if (sel->shard) {
		size_t index, count;
		if (pg_shard_parse(sel->shard, &index, &count, err))
			return pg_error_prefix(err, "shard");
		pg_shard_tests(&shard_tests, suite, index, count);
	}
	if (sel->filter) {
		int rc = regcomp(&re, sel->filter, REG_EXTENDED | REG_NOSUB);
		if (rc) {
			char msg[256];
			regerror(rc, &re, msg, sizeof(msg));
			pg_strv_release(&shard_tests);
			return pg_error_set(err, PG_ECONFIG,
					    "filter '%s' is not a valid regular expression: %s",
					    sel->filter, msg);
		}
		have_re = true;
	}
	if (sel->repeat > 0)
		for (size_t i = 0; i < suite->n_tests; i++)
			suite->tests[i].repeat = sel->repeat;

	pg_plan_build(out, suite);
	total = out->n;
	for (size_t i = 0; i < out->n; i++) {
		struct pg_point *pt = &out->points[i];
		bool keep = true;

		if (sel->only >= 0 && (int)pt->test->kind != sel->only)
			keep = false;
		if (keep && have_re && regexec(&re, pt->name, 0, NULL, 0) != 0)
			keep = false;
		if (keep && sel->shard && !in_list(&shard_tests, pt->test->name))
			keep = false;
		if (keep)
			out->points[kept++] = *pt;
		else
			free(pt->name);
	}
	out->n = kept;
	if (kept == 0) {
		struct pg_buf what = PG_BUF_INIT;
		describe_selection(&what, sel);
		ret = pg_error_set(err, PG_ECONFIG, "no test point is left after %s (of %zu in %s)",
				   what.ptr, total, suite->source ? suite->source : "the suite");
		pg_buf_release(&what);
	}
	if (have_re)
		regfree(&re);
	pg_strv_release(&shard_tests);
	return ret;
}
