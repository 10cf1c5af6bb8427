#include "gate/compare_slo.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/jsonw.h"
#include "base/strutil.h"
#include "gate/compare.h"
#include "gate/compare_tails.h"
#include "results/repeats.h"
#include "results/tails.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define C PG_TAILS_CONFIDENCE

/* "99.5%", "2000 ms", "12.5 tok/s" */
static void put_value(struct pg_buf *out, double v, const char *unit)
{
	char g[PG_FMT_DOUBLE_SIZE];

	pg_buf_puts(out, pg_fmt_g(g, v));
	if (!strcmp(unit, "%"))
		pg_buf_puts(out, "%");
	else if (*unit)
		pg_buf_printf(out, " %s", unit);
}

static long num_long(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_number(v) ? (long)llround(json_number_value(v)) : -1;
}

enum slo_state { SLO_MET, SLO_MISSED, SLO_UNDECIDED };

struct slo_call {
	enum slo_state state;
	bool certain;      /* the state is certified at confidence C */
	long n;            /* the samples it rests on; -1 unknown */
	struct pg_buf why; /* why it is not decided, after the values */
};

/* A share of requests, value in % (0..100), against a target in %. */
static void judge_share(struct slo_call *sc, const json_t *result, double value, double target,
			bool certify)
{
	long completed = num_long(result, "completed"), failed = num_long(result, "failed");
	long n = (completed >= 0 ? completed : 0) + (failed >= 0 ? failed : 0);
	double p = target / 100;
	long t;

	sc->state = value >= target ? SLO_MET : SLO_MISSED;
	sc->n = n;
	if (!certify || n <= 0 || !(p > 0 && p < 1))
		return;
	t = lround((double)n * (1 - value / 100));
	if (t < 0)
		t = 0;
	if (t > n)
		t = n;
	if (sc->state == SLO_MET && pg_tails_passes(n, t, p, C)) {
		sc->certain = true;
	} else if (sc->state == SLO_MISSED && pg_tails_fails(n, t, p, C)) {
		sc->certain = true;
	} else if (sc->state == SLO_MET) {
		long h = pg_tails_h_min(t, p, C);
		sc->state = SLO_UNDECIDED;
		pg_buf_printf(&sc->why,
			      "at n = %ld: with %ld %s, certifying it takes ≥ %ld requests", n, t,
			      t == 1 ? "miss" : "misses", h < 0 ? -1 : h + t);
	} else {
		long k = t;
		while (k <= n && !pg_tails_fails(n, k, p, C))
			k++;
		sc->state = SLO_UNDECIDED;
		pg_buf_printf(&sc->why, "at n = %ld: %ld misses could be chance", n, t);
		if (k <= n)
			pg_buf_printf(&sc->why, " (%ld would not)", k);
	}
}

/* A tail percentile against a bound (lower is better). */
static void judge_tail(struct slo_call *sc, const json_t *result, const struct pg_metric *m,
		       double value, double bound, bool certify)
{
	double pct, upper = value, plain = value;
	char family[16], key[64], word[PG_FMT_DOUBLE_SIZE];
	bool is_cert = !strncmp(m->id, "certified_", 10), have_upper = is_cert;
	long n, need;
	json_t *v;

	sc->state = value <= bound ? SLO_MET : SLO_MISSED;
	if (!certify || !pg_cmp_tail_metric(m, &pct, family))
		return;
	pg_fmt_g(word, pct);
	n = sc->n = pg_cmp_tail_samples(result, family);
	need = pg_tails_min_n(pct / 100, C);
	if (n >= 0 && n < need) {
		sc->state = SLO_UNDECIDED;
		pg_buf_printf(&sc->why, "at n = %ld: p%s needs ≥ %ld", n, word, need);
		return;
	}
	/* the other half of the pair: the plain percentile of a certified
	 * metric, the certified bound of a plain one */
	if (is_cert) {
		snprintf(key, sizeof(key), "p%s_%s_ms", word, family);
		v = json_object_get(result, key);
		if (json_is_number(v))
			plain = json_number_value(v);
	} else {
		snprintf(key, sizeof(key), "p%s", word);
		v = json_object_get(
			pg_json_path(pg_json_path(result, "perfgate.certified"), family), key);
		if (json_is_number(v)) {
			upper = json_number_value(v);
			have_upper = true;
		}
	}
	if (plain > bound) {
		sc->state = SLO_MISSED;
	} else if (upper <= bound) {
		sc->state = SLO_MET;
		sc->certain = have_upper;
	} else {
		sc->state = SLO_UNDECIDED;
		pg_buf_puts(&sc->why, "but its certified bound ");
		put_value(&sc->why, upper, m->unit);
		pg_buf_puts(&sc->why, " is not");
	}
}

/* A certified tail with no value: the run had too few samples for one. */
static bool undecided_without_value(struct pg_cmp_row *row, const json_t *result)
{
	const struct pg_metric *m = row->metric;
	double pct;
	char family[16], word[PG_FMT_DOUBLE_SIZE];
	long n, need;
	struct pg_buf note = PG_BUF_INIT;

	if (!row->rule.certify || !pg_cmp_tail_metric(m, &pct, family))
		return false;
	n = pg_cmp_tail_samples(result, family);
	need = pg_tails_min_n(pct / 100, C);
	if (n < 0 || n >= need)
		return false;
	row->verdict = PG_VERDICT_INSUFFICIENT;
	row->outcome = PG_OUTCOME_WARN;
	pg_fmt_g(word, pct);
	pg_buf_puts(&note, "SLO not decided: ≤ ");
	put_value(&note, row->rule.limit, m->unit);
	pg_buf_printf(&note, " at n = %ld: p%s needs ≥ %ld", n, word, need);
	free(row->note);
	row->note = pg_buf_detach(&note);
	return true;
}

bool pg_cmp_slo_decide(struct pg_cmp_row *row, const json_t *result,
		       const struct pg_base_metric *bm, const double *cur, size_t n_cur)
{
	const struct pg_metric *m = row->metric;
	double limit = row->rule.limit, value, *copy;
	struct slo_call sc = { SLO_MET, false, -1, PG_BUF_INIT };
	struct pg_buf note = PG_BUF_INIT;
	bool higher, within;

	if (!m || isnan(limit) || m->direction == PG_NO_DIRECTION)
		return false;
	if (n_cur == 0)
		return undecided_without_value(row, result);
	copy = pg_xmalloc(n_cur * sizeof(double));
	memcpy(copy, cur, n_cur * sizeof(double));
	value = pg_median(copy, n_cur);
	free(copy);
	higher = m->direction == PG_HIGHER_IS_BETTER;

	row->current = value;
	row->n_current = n_cur;
	if (bm) {
		row->baseline = bm->value;
		row->n_baseline = bm->n_samples ? bm->n_samples : (size_t)bm->runs;
		row->change = row->baseline != 0 ? value / row->baseline - 1 : NAN;
	}

	if (!strncmp(m->id, "slo_attainment", 14))
		judge_share(&sc, result, value, limit, row->rule.certify);
	else if (!higher && m->cls == PG_CLASS_TAIL)
		judge_tail(&sc, result, m, value, limit, row->rule.certify);
	else
		sc.state = (higher ? value >= limit : value <= limit) ? SLO_MET : SLO_MISSED;

	switch (sc.state) {
	case SLO_MET:
		row->verdict = PG_VERDICT_UNCHANGED;
		row->outcome = PG_OUTCOME_PASS;
		pg_buf_puts(&note, "SLO met: ");
		break;
	case SLO_MISSED:
		row->verdict = PG_VERDICT_REGRESSED;
		row->outcome = row->rule.gate ? PG_OUTCOME_FAIL : PG_OUTCOME_WARN;
		pg_buf_puts(&note, "SLO missed: ");
		break;
	case SLO_UNDECIDED:
		/* a miss the sample cannot confirm is noisy (shown with the
		 * regressions); a pass it cannot certify, insufficient-data */
		row->verdict = (higher ? value >= limit : value <= limit) ? PG_VERDICT_INSUFFICIENT
									  : PG_VERDICT_NOISY;
		row->outcome = PG_OUTCOME_WARN;
		pg_buf_puts(&note, "SLO not decided: ");
		break;
	}
	/* the values as observed, then why they do not settle it */
	within = higher ? value >= limit : value <= limit;
	put_value(&note, value, m->unit);
	pg_buf_puts(&note, within ? (higher ? " ≥ " : " ≤ ") : (higher ? " < " : " > "));
	put_value(&note, limit, m->unit);
	if (sc.state == SLO_UNDECIDED)
		pg_buf_printf(&note, " %s", sc.why.ptr);
	else if (sc.certain)
		pg_buf_printf(&note, " (certain at 99%% confidence, n = %ld)", sc.n);
	free(row->note);
	row->note = pg_buf_detach(&note);
	pg_buf_release(&sc.why);
	return true;
}
