/* What a comparison means to its reader: attention rows, counts, colours
 * and the exit code, for the CLI and the Buildkite step alike. */
#include "gate/attention.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/exitcode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool pg_attention_row(const struct pg_cmp_row *r)
{
	switch (r->outcome) {
	case PG_OUTCOME_FAIL:
	case PG_OUTCOME_INFRA:
		return true;
	case PG_OUTCOME_WARN:
		/* a whole point (skipped, missing with allow-missing) or a
		 * gating metric the gate could not decide; a warn-only metric
		 * that regressed below its escalation threshold is detail */
		if (!r->metric || r->rule.gate)
			return true;
		/* a tail beyond its escalation threshold that too few samples
		 * could not decide (gate/compare_tails.h): it would have failed */
		return r->verdict == PG_VERDICT_NOISY && r->rule.escalate > 0 &&
		       isfinite(r->change) && fabs(r->change) > r->rule.escalate;
	case PG_OUTCOME_PASS:
		break;
	}
	return false;
}

static int rank(const struct pg_cmp_row *r)
{
	switch (r->outcome) {
	case PG_OUTCOME_FAIL:
		return 0;
	case PG_OUTCOME_INFRA:
		return 1;
	case PG_OUTCOME_WARN:
		/* worse but let through (warn-only, not reproduced) before
		 * the undecided */
		return r->verdict == PG_VERDICT_REGRESSED || r->verdict == PG_VERDICT_NOT_REPRODUCED
			       ? 2
			       : 3;
	case PG_OUTCOME_PASS:
		break;
	}
	return 4;
}

static int cmp_attention(const void *a, const void *b)
{
	const struct pg_cmp_row *x = *(const struct pg_cmp_row *const *)a;
	const struct pg_cmp_row *y = *(const struct pg_cmp_row *const *)b;
	int rx = rank(x), ry = rank(y);
	double cx = isfinite(x->change) ? fabs(x->change) : -1;
	double cy = isfinite(y->change) ? fabs(y->change) : -1;

	if (rx != ry)
		return rx - ry;
	if (cx != cy)
		return cx < cy ? 1 : -1; /* bigger changes first */
	/* the rows are one array: their addresses are the comparison's order */
	if (x < y)
		return -1;
	return x > y;
}

const struct pg_cmp_row **pg_attention_rows(const struct pg_comparison *c, size_t *n)
{
	const struct pg_cmp_row **rows = pg_xmalloc((c->n + 1) * sizeof(*rows));

	*n = 0;
	for (size_t i = 0; i < c->n; i++)
		if (pg_attention_row(&c->rows[i]))
			rows[(*n)++] = &c->rows[i];
	qsort(rows, *n, sizeof(*rows), cmp_attention);
	return rows;
}

double pg_attention_threshold(const struct pg_cmp_row *r)
{
	if (r->metric && !r->rule.gate && r->rule.escalate > 0 &&
	    r->verdict == PG_VERDICT_REGRESSED && r->outcome == PG_OUTCOME_FAIL)
		return r->rule.escalate;
	return r->tolerance;
}

bool pg_attention_fails(const struct pg_cmp_row *r)
{
	double thr = pg_attention_threshold(r);

	return r->rule.gate || (r->rule.escalate > 0 && thr == r->rule.escalate);
}

enum pg_tone pg_attention_tone(const struct pg_cmp_row *r)
{
	switch (r->verdict) {
	case PG_VERDICT_REGRESSED:
	case PG_VERDICT_NOT_REPRODUCED:
	case PG_VERDICT_NOISY:
	case PG_VERDICT_ERROR:
	case PG_VERDICT_MISSING:
		if (r->outcome == PG_OUTCOME_FAIL || r->outcome == PG_OUTCOME_INFRA)
			return PG_TONE_BAD;
		return r->outcome == PG_OUTCOME_WARN ? PG_TONE_WARN : PG_TONE_NONE;
	case PG_VERDICT_IMPROVED:
		return PG_TONE_GOOD;
	case PG_VERDICT_INSUFFICIENT:
	case PG_VERDICT_NEW:
	case PG_VERDICT_UNCHANGED:
	case PG_VERDICT_COUNT:
		break;
	}
	return PG_TONE_NONE;
}

void pg_gate_count(struct pg_gate_counts *out, const struct pg_comparison *c)
{
	size_t next;

	memset(out, 0, sizeof(*out));
	out->suspect = c->suspect != NULL;
	/* pg_compare writes a point's rows one after the other */
	for (size_t i = 0; i < c->n; i = next) {
		enum pg_outcome worst = PG_OUTCOME_PASS;
		bool improved = false, vetoed = false;

		for (next = i; next < c->n && !strcmp(c->rows[next].point, c->rows[i].point);
		     next++) {
			const struct pg_cmp_row *r = &c->rows[next];
			if (r->outcome > worst)
				worst = r->outcome;
			improved |= r->verdict == PG_VERDICT_IMPROVED;
			vetoed |= r->verdict == PG_VERDICT_NOT_REPRODUCED;
			out->regressed_metrics += r->outcome == PG_OUTCOME_FAIL;
		}
		out->tests++;
		if (worst == PG_OUTCOME_FAIL)
			out->regressed++;
		else if (worst == PG_OUTCOME_INFRA)
			out->errors++;
		else if (worst == PG_OUTCOME_WARN) {
			out->warnings++;
			out->not_reproduced += vetoed;
		} else if (improved)
			out->improved++;
	}
	/* a change no single point shows, decided on the whole run */
	for (size_t i = 0; i < c->n_commons; i++)
		out->whole_run_metrics += c->commons[i].outcome == PG_OUTCOME_FAIL;
}

static const char *plural(size_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

void pg_gate_counts_phrase(struct pg_buf *out, const struct pg_gate_counts *k)
{
	if (k->regressed) {
		pg_buf_printf(out, "%zu of %zu %s regressed (%zu %s)", k->regressed, k->tests,
			      plural(k->tests, "test", "tests"), k->regressed_metrics,
			      plural(k->regressed_metrics, "metric", "metrics"));
		if (k->whole_run_metrics)
			pg_buf_printf(out, ", and the whole run in %zu %s", k->whole_run_metrics,
				      plural(k->whole_run_metrics, "metric", "metrics"));
		if (k->errors)
			pg_buf_printf(out, ", %zu missing or failed", k->errors);
	} else if (k->whole_run_metrics) {
		pg_buf_printf(out, "the whole run regressed in %zu %s (%zu %s)",
			      k->whole_run_metrics,
			      plural(k->whole_run_metrics, "metric", "metrics"), k->tests,
			      plural(k->tests, "test", "tests"));
		if (k->errors)
			pg_buf_printf(out, ", %zu missing or failed", k->errors);
	} else if (k->errors) {
		pg_buf_printf(out, "results missing or failed for %zu of %zu %s", k->errors,
			      k->tests, plural(k->tests, "test", "tests"));
	} else {
		pg_buf_printf(out, "no regressions in %zu %s", k->tests,
			      plural(k->tests, "test", "tests"));
	}
	if (k->warnings)
		pg_buf_printf(out, ", %zu with warnings", k->warnings);
	if (k->not_reproduced)
		pg_buf_printf(out, " (%zu not reproduced by the re-run)", k->not_reproduced);
	if (k->improved)
		pg_buf_printf(out, ", %zu improved", k->improved);
	if ((k->regressed || k->whole_run_metrics) && k->suspect)
		pg_buf_puts(out, " — from a sick job: re-run it");
}

int pg_gate_exit_code(enum pg_outcome outcome, bool gating)
{
	if (outcome == PG_OUTCOME_FAIL && !gating)
		return PG_EXIT_OK;
	return pg_outcome_exit_code(outcome);
}
