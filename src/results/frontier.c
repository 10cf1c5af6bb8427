#include "results/frontier.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/jsonw.h"
#include "base/strutil.h"
#include "results/metrics.h"
#include "results/tails.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool usable(const struct pg_frontier_point *p)
{
	return isfinite(p->tput) && isfinite(p->intvty) && p->tput > 0 && p->intvty > 0;
}

void pg_frontier_mark(struct pg_frontier_point *pts, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		bool on = usable(&pts[i]);
		for (size_t j = 0; on && j < n; j++) {
			if (j == i || !usable(&pts[j]))
				continue;
			if (pts[j].tput >= pts[i].tput && pts[j].intvty >= pts[i].intvty &&
			    (pts[j].tput > pts[i].tput || pts[j].intvty > pts[i].intvty))
				on = false;
		}
		pts[i].on_frontier = on;
	}
}

static int cmp_intvty(const void *a, const void *b)
{
	const struct pg_frontier_point *x = a, *y = b;

	if (x->intvty != y->intvty)
		return x->intvty < y->intvty ? -1 : 1;
	return (x->tput < y->tput) - (x->tput > y->tput);
}

size_t pg_frontier_curve(struct pg_frontier_point *out, const struct pg_frontier_point *pts,
			 size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (pts[i].on_frontier)
			out[k++] = pts[i];
	qsort(out, k, sizeof(*out), cmp_intvty);
	return k;
}

/* The segment [i, i+1] of the curve holding interactivity x; -1 outside.
 * A curve of one point holds only its own x (i = 0, as a segment of
 * length 0). */
static long segment_at(const struct pg_frontier_point *c, size_t n, double x)
{
	if (!n || !(x >= c[0].intvty && x <= c[n - 1].intvty))
		return -1;
	for (size_t i = 0; i + 1 < n; i++)
		if (x <= c[i + 1].intvty)
			return (long)i;
	return 0;
}

double pg_frontier_tput_at(const struct pg_frontier_point *c, size_t n, double x)
{
	long i = segment_at(c, n, x);
	double x1, x2, t;

	if (i < 0)
		return NAN;
	if (n == 1 || c[i].intvty == c[i + 1].intvty)
		return c[i].tput;
	x1 = log(c[i].intvty);
	x2 = log(c[i + 1].intvty);
	t = (log(x) - x1) / (x2 - x1);
	return exp(log(c[i].tput) + t * (log(c[i + 1].tput) - log(c[i].tput)));
}

double pg_frontier_slope_at(const struct pg_frontier_point *c, size_t n, double x)
{
	long i = segment_at(c, n, x);

	if (i < 0 || n < 2 || c[i].intvty == c[i + 1].intvty)
		return NAN;
	return (log(c[i + 1].tput) - log(c[i].tput)) / (log(c[i + 1].intvty) - log(c[i].intvty));
}

double pg_frontier_shift(const struct pg_frontier_point *c, size_t n, double tput, double intvty)
{
	/* q = ln(tput / intvty), users per GPU in logs, falls along the curve
	 * (interactivity up, throughput down): find the segment that holds
	 * the point's q and the point of that segment with the same q; a
	 * point just beyond an end (measurement noise moves the ends' users
	 * by a percent or two) is matched on the end segment, extended */
	double u, q1, q2, t, qx, qfirst, qlast;
	size_t i;

	if (!n || !(tput > 0) || !(intvty > 0))
		return NAN;
	u = log(tput) - log(intvty);
	qfirst = log(c[0].tput) - log(c[0].intvty);
	qlast = log(c[n - 1].tput) - log(c[n - 1].intvty);
	if (n == 1)
		return fabs(qfirst - u) <= 1e-12 ? log(intvty) - log(c[0].intvty) : NAN;
	if (u > qfirst + PG_FRONTIER_END_SLACK || u < qlast - PG_FRONTIER_END_SLACK)
		return NAN;
	for (i = 0; i + 2 < n; i++) {
		q2 = log(c[i + 1].tput) - log(c[i + 1].intvty);
		if (u >= q2)
			break;
	}
	q1 = log(c[i].tput) - log(c[i].intvty);
	q2 = log(c[i + 1].tput) - log(c[i + 1].intvty);
	t = q1 == q2 ? 0 : (q1 - u) / (q1 - q2);
	qx = log(c[i].intvty) + t * (log(c[i + 1].intvty) - log(c[i].intvty));
	return log(intvty) - qx;
}

long pg_frontier_knee(const struct pg_frontier_point *c, size_t n)
{
	double ax, ay, bx, by, len, best = -1;
	long at = -1;

	if (n < 3)
		return -1;
	ax = log(c[0].intvty);
	ay = log(c[0].tput);
	bx = log(c[n - 1].intvty);
	by = log(c[n - 1].tput);
	len = hypot(bx - ax, by - ay);
	if (!(len > 0))
		return -1;
	for (size_t i = 1; i + 1 < n; i++) {
		double px = log(c[i].intvty) - ax, py = log(c[i].tput) - ay;
		double d = fabs((bx - ax) * py - (by - ay) * px) / len;
		if (d > best) {
			best = d;
			at = (long)i;
		}
	}
	return at;
}

void pg_frontier_cmp_release(struct pg_frontier_cmp *c)
{
	free(c->base_curve);
	free(c->cur_curve);
	free(c->levels);
	memset(c, 0, sizeof(*c));
}

static struct pg_frontier_point *curve_of(const struct pg_frontier_point *pts, size_t n, size_t *k)
{
	struct pg_frontier_point *copy = pg_xmalloc((n ? n : 1) * sizeof(*copy));
	struct pg_frontier_point *curve = pg_xmalloc((n ? n : 1) * sizeof(*curve));

	if (n)
		memcpy(copy, pts, n * sizeof(*copy));
	pg_frontier_mark(copy, n);
	*k = pg_frontier_curve(curve, copy, n);
	free(copy);
	return curve;
}

/* The baseline noise of the curve's segment holding the point's users per
 * GPU (each axis, from its two ends) and its slope; false when unknown. */
static bool segment_noise(const struct pg_frontier_point *c, size_t n, double tput, double intvty,
			  double *st, double *si, double *slope)
{
	double u = log(tput) - log(intvty);

	for (size_t i = 0; i + 1 < n; i++) {
		double q2 = log(c[i + 1].tput) - log(c[i + 1].intvty);
		if (u < q2 && i + 2 < n)
			continue;
		/* between two points, the root mean square of theirs */
		*st = sqrt((c[i].noise_tput * c[i].noise_tput +
			    c[i + 1].noise_tput * c[i + 1].noise_tput) /
			   2);
		*si = sqrt((c[i].noise_intvty * c[i].noise_intvty +
			    c[i + 1].noise_intvty * c[i + 1].noise_intvty) /
			   2);
		*slope = c[i].intvty == c[i + 1].intvty
				 ? 0
				 : (log(c[i + 1].tput) - log(c[i].tput)) /
					   (log(c[i + 1].intvty) - log(c[i].intvty));
		return *st > 0 && *si > 0;
	}
	return false;
}

int pg_frontier_compare(struct pg_frontier_cmp *out, const struct pg_frontier_point *base,
			size_t nb, const struct pg_frontier_point *cur, size_t nc,
			double confidence, const struct pg_frontier_noise *noise)
{
	double *s, sum = 0, ss = 0, var_sum = 0, mean, half = NAN;
	size_t k = 0;
	bool known = noise && noise->runs >= 3;

	memset(out, 0, sizeof(*out));
	out->confidence = confidence;
	out->shift = out->lo = out->hi = out->se = out->df = NAN;
	out->base_curve = curve_of(base, nb, &out->n_base);
	out->cur_curve = curve_of(cur, nc, &out->n_cur);
	out->knee_base = pg_frontier_knee(out->base_curve, out->n_base);
	out->knee_cur = pg_frontier_knee(out->cur_curve, out->n_cur);

	s = pg_xmalloc((out->n_cur ? out->n_cur : 1) * sizeof(double));
	for (size_t i = 0; i < out->n_cur; i++) {
		const struct pg_frontier_point *p = &out->cur_curve[i];
		double v = pg_frontier_shift(out->base_curve, out->n_base, p->tput, p->intvty);
		double st, si, slope, w;

		if (!isfinite(v))
			continue;
		s[k++] = v;
		if (known && segment_noise(out->base_curve, out->n_base, p->tput, p->intvty, &st,
					   &si, &slope)) {
			w = 1 / (1 + fabs(slope));
			var_sum += (w * st + (1 - w) * si) * (w * st + (1 - w) * si);
		} else {
			known = false;
		}
	}
	out->matched = k;
	if (k >= 3) {
		for (size_t i = 0; i < k; i++)
			sum += s[i];
		mean = sum / (double)k;
		for (size_t i = 0; i < k; i++)
			ss += (s[i] - mean) * (s[i] - mean);
		if (known) {
			double runs = (double)noise->runs;
			out->se = sqrt(
				(1 + M_PI / (2 * runs)) *
				(var_sum / ((double)k * (double)k) + fmax(noise->job_var, 0)));
			out->df = (double)k * (runs - 1);
			out->from_noise = true;
		} else {
			out->se = sqrt(ss / (double)(k - 1)) / sqrt((double)k);
			out->df = (double)(k - 1);
		}
		half = pg_tails_t_quantile((1 + confidence) / 2, out->df) * out->se;
		out->shift = expm1(mean);
		out->lo = expm1(mean - half);
		out->hi = expm1(mean + half);
	}
	free(s);

	/* the change at the baseline frontier's own interactivities */
	out->levels = pg_xmalloc((out->n_base ? out->n_base : 1) * sizeof(*out->levels));
	for (size_t j = 0; j < out->n_base; j++) {
		const struct pg_frontier_point *b = &out->base_curve[j];
		struct pg_frontier_level *l = &out->levels[out->n_levels];
		double c = pg_frontier_tput_at(out->cur_curve, out->n_cur, b->intvty), slope, dl,
		       hw;

		if (!isfinite(c))
			continue;
		/* at a vertex, the slope of the segment towards the curve's
		 * middle: the last point's is the segment before it */
		slope = pg_frontier_slope_at(out->base_curve, out->n_base,
					     j + 1 < out->n_base ? b->intvty * (1 + 1e-12)
								 : b->intvty * (1 - 1e-12));
		dl = log(c / b->tput);
		hw = isfinite(half) && isfinite(slope) ? half * (1 + fabs(slope)) : NAN;
		l->intvty = b->intvty;
		l->base = b->tput;
		l->cur = c;
		l->change = expm1(dl);
		l->lo = expm1(dl - hw);
		l->hi = expm1(dl + hw);
		l->base_knob = b->knob;
		out->n_levels++;
	}
	return k >= 3 ? 0 : -1;
}

static double knob_of(const json_t *result, bool rate)
{
	json_t *params = pg_json_path(result, "perfgate.params");
	json_t *v = json_is_object(params)
			    ? json_object_get(params, rate ? "qps" : "max_concurrency")
			    : NULL;
	double d;

	if (!v)
		v = json_object_get(result, rate ? "request_rate" : "max_concurrency");
	if (json_is_number(v))
		return json_number_value(v);
	if (json_is_string(v) && pg_parse_double(json_string_value(v), &d) == 0)
		return d;
	return NAN;
}

/* ---- ladders ------------------------------------------------------------ */

struct member {
	size_t i;
	const char *test;
	double qps;
	long mc;
};

static int cmp_double(double a, double b)
{
	return (a > b) - (a < b);
}

/* test, rate, concurrency: concurrency ladders are runs of equal rate */
static int cmp_test_qps_mc(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	int c = strcmp(x->test, y->test);

	if (c)
		return c;
	if ((c = cmp_double(x->qps, y->qps)))
		return c;
	return (x->mc > y->mc) - (x->mc < y->mc);
}

/* test, concurrency, rate: rate ladders are runs of equal concurrency */
static int cmp_test_mc_qps(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	int c = strcmp(x->test, y->test);

	if (c)
		return c;
	if (x->mc != y->mc)
		return (x->mc > y->mc) - (x->mc < y->mc);
	return cmp_double(x->qps, y->qps);
}

/* The test a point belongs to: perfgate.test, else its name without the
 * _qps_ suffix (vLLM's files). Owned by the caller. */
static char *test_of(const char *name, const json_t *result)
{
	const char *t = pg_json_path_str(result, "perfgate.test");
	const char *q;

	if (t)
		return pg_xstrdup(t);
	q = strstr(name, "_qps_");
	return q ? pg_xstrndup(name, (size_t)(q - name)) : pg_xstrdup(name);
}

void pg_frontier_knob_text(char *out, size_t size, double v)
{
	char g[PG_FMT_DOUBLE_SIZE];

	if (isinf(v))
		snprintf(out, size, "inf");
	else
		snprintf(out, size, "%s", pg_fmt_g(g, v));
}

static void add_ladder(struct pg_ladders *out, const struct member *m, size_t n, bool by_rate)
{
	struct pg_ladder l;
	struct pg_buf label = PG_BUF_INIT;
	char a[64], b[64], k[64];

	memset(&l, 0, sizeof(l));
	l.test = pg_xstrdup(m[0].test);
	l.by_rate = by_rate;
	l.qps = m[0].qps;
	l.concurrency = m[0].mc;
	l.idx = pg_xmalloc(n * sizeof(*l.idx));
	for (size_t j = 0; j < n; j++)
		l.idx[j] = m[j].i;
	l.n = n;
	if (by_rate) {
		pg_frontier_knob_text(a, sizeof(a), m[0].qps);
		pg_frontier_knob_text(b, sizeof(b), m[n - 1].qps);
		if (m[0].mc > 0)
			snprintf(k, sizeof(k), "concurrency %ld, ", m[0].mc);
		else
			k[0] = '\0';
		pg_buf_printf(&label, "%s ladder (%sqps %s-%s)", l.test, k, a, b);
	} else {
		pg_frontier_knob_text(k, sizeof(k), m[0].qps);
		pg_buf_printf(&label, "%s ladder (qps %s, concurrency %ld-%ld)", l.test, k, m[0].mc,
			      m[n - 1].mc);
	}
	l.label = pg_buf_detach(&label);
	PG_ARRAY_PUSH(out->v, out->n, out->cap, l);
}

/* Runs of members equal in everything but the knob, with >= 3 distinct
 * knob values, become ladders; their members are marked taken. */
static void scan(struct pg_ladders *out, struct member *m, size_t n, bool by_rate, bool *taken)
{
	size_t i = 0;

	while (i < n) {
		size_t j = i + 1, distinct = 1;
		while (j < n && !strcmp(m[j].test, m[i].test) &&
		       (by_rate ? m[j].mc == m[i].mc : m[j].qps == m[i].qps)) {
			if (by_rate ? m[j].qps != m[j - 1].qps : m[j].mc != m[j - 1].mc)
				distinct++;
			j++;
		}
		/* a concurrency ladder has bounded points only; each knob once */
		if (distinct >= 3 && distinct == j - i && (by_rate || m[i].mc > 0)) {
			bool free_ = true;
			for (size_t k = i; k < j; k++)
				free_ = free_ && !taken[m[k].i];
			if (free_) {
				add_ladder(out, m + i, j - i, by_rate);
				for (size_t k = i; k < j; k++)
					taken[m[k].i] = true;
			}
		}
		i = j;
	}
}

void pg_ladders_find(struct pg_ladders *out, const char *const *names, const json_t *const *results,
		     size_t n_in)
{
	struct member *m = pg_xmalloc((n_in ? n_in : 1) * sizeof(*m));
	bool *taken = pg_xcalloc(n_in ? n_in : 1, sizeof(bool));
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n_in; i++) {
		double mc = knob_of(results[i], false);
		m[n].i = i;
		m[n].qps = knob_of(results[i], true);
		m[n].mc = isfinite(mc) && mc > 0 ? (long)mc : 0;
		if (isnan(m[n].qps))
			continue;
		m[n].test = test_of(names[i], results[i]);
		n++;
	}
	/* concurrency ladders first: a vLLM-style sweep of qps x concurrency
	 * has both, and the concurrency is the knob the frontier is drawn on */
	qsort(m, n, sizeof(*m), cmp_test_qps_mc);
	scan(out, m, n, false, taken);
	qsort(m, n, sizeof(*m), cmp_test_mc_qps);
	scan(out, m, n, true, taken);
	for (size_t i = 0; i < n; i++)
		free((char *)m[i].test);
	free(m);
	free(taken);
}

void pg_ladders_release(struct pg_ladders *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].test);
		free(l->v[i].label);
		free(l->v[i].idx);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

long pg_frontier_gpus(const json_t *result)
{
	json_t *tp = pg_json_path(result, "perfgate.params.tp");

	return json_is_integer(tp) && json_integer_value(tp) > 0 ? (long)json_integer_value(tp) : 1;
}

bool pg_frontier_point_from(struct pg_frontier_point *out, const char *name, const json_t *result,
			    bool knob_is_rate)
{
	const struct pg_metric *tput = pg_metric_by_id(PG_SUITE_SERVING, "output_throughput");
	const struct pg_metric *tpot = pg_metric_by_id(PG_SUITE_SERVING, "median_tpot_ms");
	double t, p;

	memset(out, 0, sizeof(*out));
	if (pg_metric_value(tput, result, &t) || pg_metric_value(tpot, result, &p) || !(p > 0))
		return false;
	out->name = name;
	out->knob = knob_of(result, knob_is_rate);
	out->tput = t / (double)pg_frontier_gpus(result);
	out->intvty = 1000 / p;
	return true;
}

/* "2026-11-22 13:00:00" from perfgate.started_at or vLLM's date. */
static json_t *row_date(const json_t *r)
{
	const char *iso = pg_json_path_str(r, "perfgate.started_at");
	const char *d = pg_json_path_str(r, "date");
	char out[32];

	if (iso && strlen(iso) >= 19) {
		snprintf(out, sizeof(out), "%.10s %.8s", iso, iso + 11);
		return json_string(out);
	}
	if (d && strlen(d) == 15 && d[8] == '-') {
		snprintf(out, sizeof(out), "%.4s-%.2s-%.2s %.2s:%.2s:%.2s", d, d + 4, d + 6, d + 9,
			 d + 11, d + 13);
		return json_string(out);
	}
	return json_null();
}

/* The engine behind the result, as the dashboard names frameworks. */
static json_t *row_framework(const json_t *r)
{
	const char *cmd = pg_json_path_str(r, "perfgate.server_command");

	if (!cmd)
		return json_string("vllm"); /* vLLM's own result files */
	if (strstr(cmd, "sglang"))
		return json_string("sglang");
	if (strstr(cmd, "vllm"))
		return json_string("vllm");
	if (!strncmp(cmd, "perfgate mock-server", 20))
		return json_string("perfgate-mock");
	return json_null();
}

static json_t *int_or_null(const json_t *v)
{
	return json_is_number(v) ? json_integer((json_int_t)json_number_value(v)) : json_null();
}

json_t *pg_frontier_inferencex_row(const json_t *r, const char *device)
{
	json_t *row, *params = pg_json_path(r, "perfgate.params"), *model, *v;
	long tp = pg_frontier_gpus(r);
	double total = 0, output = 0;
	const char *key;

	if (pg_result_kind(r) != PG_SUITE_SERVING)
		return NULL;
	if (json_is_number(json_object_get(r, "total_token_throughput")))
		total = json_number_value(json_object_get(r, "total_token_throughput"));
	if (json_is_number(json_object_get(r, "output_throughput")))
		output = json_number_value(json_object_get(r, "output_throughput"));
	model = json_object_get(r, "model_id");
	if (!json_is_string(model) && json_is_object(params))
		model = json_object_get(params, "model");

	row = json_object();
	json_object_set_new(row, "date", row_date(r));
	json_object_set_new(row, "device", device ? json_string(device) : json_null());
	v = json_is_object(params) ? json_object_get(params, "max_concurrency") : NULL;
	json_object_set_new(row, "conc",
			    int_or_null(v ? v : json_object_get(r, "max_concurrency")));
	json_object_set_new(row, "image", json_null());
	json_object_set_new(row, "model", json_is_string(model) ? json_incref(model) : json_null());
	json_object_set_new(row, "framework", row_framework(r));
	json_object_set_new(row, "precision", json_null());
	json_object_set_new(row, "spec_decoding", json_string("false"));
	json_object_set_new(row, "disagg", json_string("false"));
	json_object_set_new(
		row, "isl",
		int_or_null(json_is_object(params) ? json_object_get(params, "input_len") : NULL));
	json_object_set_new(
		row, "osl",
		int_or_null(json_is_object(params) ? json_object_get(params, "output_len") : NULL));
	json_object_set_new(row, "is_multinode", json_string("false"));
	json_object_set_new(row, "tp", json_integer(tp));
	json_object_set_new(row, "ep", json_integer(1));
	json_object_set_new(row, "dp_attention", json_string("false"));
	json_object_set_new(row, "tput_per_gpu", json_real(total / (double)tp));
	json_object_set_new(row, "output_tput_per_gpu", json_real(output / (double)tp));
	json_object_set_new(row, "input_tput_per_gpu", json_real((total - output) / (double)tp));

	/* every *_ms key in seconds without its suffix; interactivity from
	 * each TPOT key (so std_intvty is 1000 / std, as the dashboard's) */
	json_object_foreach((json_t *)r, key, v)
	{
		size_t len = strlen(key);
		char name[128];
		const char *tpot;
		double ms;

		if (len < 4 || len - 3 >= sizeof(name) || strcmp(key + len - 3, "_ms") ||
		    !json_is_number(v))
			continue;
		ms = json_number_value(v);
		snprintf(name, sizeof(name), "%.*s", (int)(len - 3), key);
		json_object_set_new(row, name, json_real(ms / 1000));
		if ((tpot = strstr(name, "tpot")) != NULL) {
			char intvty[160];
			snprintf(intvty, sizeof(intvty), "%.*sintvty%s", (int)(tpot - name), name,
				 tpot + 4);
			json_object_set_new(row, intvty, json_real(ms != 0 ? 1000 / ms : 0));
		}
	}
	return row;
}
