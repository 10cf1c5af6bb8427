#include "results/cold.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/jsonw.h"
#include "base/strutil.h"
#include "results/metrics.h"
#include "results/repeats.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What a cold engine moves and noise moves little, per suite (registry
 * ids): medians and throughputs, never a tail or a mean. */
static const char *const serving_witnesses[] = { "median_ttft_ms",    "median_tpot_ms",
						 "median_itl_ms",     "median_e2el_ms",
						 "output_throughput", NULL };
static const char *const latency_witnesses[] = { "median_latency_ms", NULL };
static const char *const throughput_witnesses[] = { "requests_per_second", NULL };

static const char *const *witnesses(enum pg_suite_kind kind)
{
	switch (kind) {
	case PG_SUITE_SERVING:
		return serving_witnesses;
	case PG_SUITE_LATENCY:
		return latency_witnesses;
	case PG_SUITE_THROUGHPUT:
		return throughput_witnesses;
	default:
		return NULL; /* startup: its starts are cold on purpose */
	}
}

/* How far repeat 1 is beyond its threshold (> 1: cold) for metric m, with
 * *change and *threshold filled; NAN when some run lacks a positive value. */
static double witness_score(const struct pg_metric *m, const json_t *const *runs, size_t n,
			    double *change, double *threshold)
{
	double *others = pg_xmalloc(n * sizeof(*others));
	double first = 0, lo = INFINITY, hi = -INFINITY, centre, gap, floor;
	double score = NAN;

	for (size_t i = 0; i < n; i++) {
		double x;
		if (pg_metric_value(m, runs[i], &x) || !(x > 0) || !isfinite(x))
			goto done;
		if (i == 0) {
			first = log(x);
			continue;
		}
		others[i - 1] = log(x);
		lo = fmin(lo, others[i - 1]);
		hi = fmax(hi, others[i - 1]);
	}
	centre = pg_median(others, n - 1);
	/* worse: slower for a latency, lower for a throughput */
	gap = (first - centre) * (m->direction == PG_HIGHER_IS_BETTER ? -1 : 1);
	floor = m->cls == PG_CLASS_THROUGHPUT ? PG_COLD_FLOOR_THROUGHPUT : PG_COLD_FLOOR_LATENCY;
	if (n == 2)
		floor *= PG_COLD_TWO_REPEATS;
	*threshold = fmax(PG_COLD_SPREAD_FACTOR * (hi - lo), floor);
	*change = expm1(first - centre);
	score = gap / *threshold;
	/* the threshold as a relative change in the worse direction */
	*threshold = m->direction == PG_HIGHER_IS_BETTER ? -expm1(-*threshold) : expm1(*threshold);
done:
	free(others);
	return score;
}

void pg_cold_check(struct pg_cold *out, enum pg_suite_kind kind, const json_t *const *runs,
		   size_t n)
{
	const char *const *ids = witnesses(kind);
	double best = -INFINITY;

	memset(out, 0, sizeof(*out));
	out->change = out->threshold = NAN;
	if (!ids || n < 2)
		return;
	for (size_t k = 0; ids[k]; k++) {
		const struct pg_metric *m = pg_metric_by_id(kind, ids[k]);
		double change, threshold, score;

		if (!m)
			continue;
		score = witness_score(m, runs, n, &change, &threshold);
		if (isnan(score) || score <= best)
			continue;
		best = score;
		out->metric = m;
		out->change = change;
		out->threshold = threshold;
	}
	if (!out->metric)
		return;
	out->n = n;
	out->cold = best > 1;
}

/* "Median TTFT" -> "median TTFT"; "P99 TTFT" stays. */
static void put_label(struct pg_buf *out, const char *label)
{
	if (label[0] && label[1] && islower((unsigned char)label[1]))
		pg_buf_printf(out, "%c%s", tolower((unsigned char)label[0]), label + 1);
	else
		pg_buf_puts(out, label);
}

void pg_cold_note(struct pg_buf *out, const struct pg_cold *c)
{
	char pct[PG_FMT_DOUBLE_SIZE];

	pg_buf_printf(out, "repeat 1 of %zu cold: ", c->n);
	put_label(out, c->metric->label);
	pg_buf_printf(out, " %s vs the other%s, left out", pg_fmt_pct(pct, c->change),
		      c->n > 2 ? "s" : "");
}

json_t *pg_cold_json(const struct pg_cold *c)
{
	struct pg_buf note = PG_BUF_INIT;
	json_t *o;

	pg_cold_note(&note, c);
	o = json_pack("{s:i, s:i, s:s, s:f, s:f, s:s}", "repeat", 1, "of", (json_int_t)c->n,
		      "metric", c->metric->id, "change", c->change, "threshold", c->threshold,
		      "note", note.ptr);
	pg_buf_release(&note);
	return o;
}

long pg_cold_left_out(const json_t *result)
{
	json_t *r = pg_json_path(result, "perfgate.cold_repeat.repeat");

	return json_is_integer(r) && json_integer_value(r) >= 1 ? (long)json_integer_value(r) - 1
								: -1;
}

const char *pg_cold_result_note(const json_t *result)
{
	return pg_json_path_str(result, "perfgate.cold_repeat.note");
}

bool pg_cold_apply(json_t *result, struct pg_cold *out)
{
	json_t *pg = json_object_get(result, "perfgate");
	json_t *reps = json_object_get(pg, "repeats");
	struct pg_cold c;
	int kind = pg_result_kind(result);
	size_t n = json_array_size(reps);
	const json_t **runs;

	memset(&c, 0, sizeof(c));
	if (out)
		*out = c;
	if (!json_is_object(pg) || n < 2 || kind < 0 || json_object_get(pg, "cold_repeat") ||
	    json_object_get(pg, "ab"))
		return false;
	runs = pg_xmalloc(n * sizeof(*runs));
	for (size_t i = 0; i < n; i++)
		runs[i] = json_array_get(reps, i);
	pg_cold_check(&c, (enum pg_suite_kind)kind, runs, n);
	if (c.cold) {
		json_t *warm = pg_repeats_median((json_t *const *)runs + 1, n - 1);
		json_object_update_existing(result, warm);
		json_decref(warm);
		json_object_set_new(pg, "cold_repeat", pg_cold_json(&c));
	}
	free(runs);
	if (out)
		*out = c;
	return c.cold;
}
