#ifndef PERFGATE_RESULTS_FRONTIER_H
#define PERFGATE_RESULTS_FRONTIER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * The throughput-interactivity frontier of a ladder (docs/tails.md, "The
 * frontier"): the points of one serving test that differ only by
 * concurrency (or request rate), each placed at its output throughput per
 * GPU against its interactivity, tok/s/user = 1000 / median TPOT ms, as
 * InferenceX and perf.vllm.ai draw them. Pure.
 *
 * Comparing two frontiers. A ladder point serves tput / intvty users per
 * GPU; an engine that gets a factor f faster moves every point by f on
 * both axes, along the line of constant users per GPU (slope 1 in
 * log-log). So the change at a candidate point is how far it sits from the
 * baseline's frontier along that line: the shift s with (tput, intvty) =
 * e^s x the baseline frontier's point of the same users per GPU (found by
 * interpolating the frontier in log-log). A uniformly slower engine reads
 * its slowdown at every point; a point that only slid along the curve
 * reads 0. Matching at equal interactivity instead -- what the dashboards
 * show -- is ill-conditioned where the frontier is steep (at low
 * concurrency a 1% TPOT change moves throughput-at-equal-interactivity by
 * tens of percent), so the decision uses the shift and the table at
 * matched interactivity carries its interval through the local slope.
 */

struct pg_frontier_point {
	const char *name; /* the result point (borrowed) */
	double knob;      /* max_concurrency, or the request rate (INFINITY: inf) */
	double tput;      /* output tokens per second per GPU */
	double intvty;    /* tok/s/user: 1000 / median TPOT (ms) */
	bool on_frontier; /* no other point has both more tput and more intvty */
	/* a baseline point's run-to-run noise, relative sds of tput and of
	 * intvty (its TPOT's); <= 0 or NAN: unknown */
	double noise_tput, noise_intvty;
};

/* What a baseline says about its own noise (pg_frontier_compare). */
struct pg_frontier_noise {
	long runs;      /* runs behind each baseline value; the points' noise
			 * counts from 3 runs on */
	double job_var; /* variance (of logs) of the offset a whole run shares
			 * across the ladder's points, beyond their own noise; 0
			 * when unknown or none */
};

/* Mark the Pareto-optimal points: a point is dominated when another has at
 * least its throughput and its interactivity, and more of one. Points
 * with a non-finite or non-positive coordinate are never on it. */
void pg_frontier_mark(struct pg_frontier_point *pts, size_t n);

/* The frontier's points (after pg_frontier_mark) copied to out (room for
 * n) by interactivity, ascending; returns how many. */
size_t pg_frontier_curve(struct pg_frontier_point *out, const struct pg_frontier_point *pts,
			 size_t n);

/* Throughput on a curve at interactivity x, interpolated linearly in
 * log-log between its points; NAN outside the curve's range. */
double pg_frontier_tput_at(const struct pg_frontier_point *curve, size_t n, double x);

/* The log-log slope of the curve at x (of the segment holding it); NAN
 * outside. */
double pg_frontier_slope_at(const struct pg_frontier_point *curve, size_t n, double x);

/* How far beyond the baseline curve's ends (in log users per GPU) a point
 * is still matched, on the end segment extended: measurement noise moves
 * a ladder's end points by a percent or two. */
#define PG_FRONTIER_END_SLACK 0.05

/* The shift s (natural log, > 0: better) of the point (tput, intvty) from
 * the curve at equal users per GPU (tput / intvty); NAN outside the
 * curve's users range (and PG_FRONTIER_END_SLACK beyond its ends). */
double pg_frontier_shift(const struct pg_frontier_point *curve, size_t n, double tput,
			 double intvty);

/* The knee of a curve: the point farthest (in log-log) from the chord of
 * its ends, where more users stop buying much throughput; -1 below 3
 * points. */
long pg_frontier_knee(const struct pg_frontier_point *curve, size_t n);

/* The throughput change at one of the baseline frontier's interactivity
 * levels. */
struct pg_frontier_level {
	double intvty;    /* tok/s/user */
	double base;      /* baseline tput per GPU there */
	double cur;       /* candidate's, interpolated */
	double change;    /* cur / base - 1 */
	double lo, hi;    /* its interval: the shift's, through the local slope */
	double base_knob; /* the baseline point's knob */
};

struct pg_frontier_cmp {
	size_t matched; /* candidate frontier points within the baseline's users range */
	double shift;   /* exp(mean s) - 1: the frontier's change, > 0 better */
	double lo, hi;  /* its interval at confidence, two-sided */
	double confidence;
	double se;       /* standard error of the mean s (logs) */
	double df;       /* degrees of freedom behind it */
	bool from_noise; /* se from the baseline's measured noise, not the
			    * ladder's own scatter */
	long knee_base;  /* indexes into the curves, or -1 */
	long knee_cur;
	struct pg_frontier_point *base_curve; /* owned */
	size_t n_base;
	struct pg_frontier_point *cur_curve; /* owned */
	size_t n_cur;
	struct pg_frontier_level *levels; /* owned */
	size_t n_levels;
};

/*
 * Compare a candidate ladder (cur, nc points: one run) with the
 * baseline's (base, nb): both frontiers, the mean shift S of the
 * candidate's frontier points from the baseline's frontier with its
 * two-sided interval at confidence, the knees, and the change at each of
 * the baseline frontier's interactivities that the candidate's frontier
 * covers.
 *
 * The interval: when noise gives runs >= 3 and every matched point's
 * baseline segment has its noise, the candidate's point i varies by
 * sigma_i = w sigma_tput + (1 - w) sigma_intvty (w = 1 / (1 + |slope|), the
 * weights of the shift; the sds add as if fully correlated, which a slower
 * engine makes them), and
 *   var(S) = (1 + pi / (2 runs)) (sum sigma_i^2 / k^2 + job_var)
 * (the candidate's run, and the baseline's median of runs), with Student's
 * t at k (runs - 1) degrees of freedom; otherwise the scatter of the k
 * points' shifts around their mean, with k - 1. Returns 0, or -1 when
 * fewer than 3 candidate frontier points match (out then holds the curves
 * and knees, shift NAN). The inputs are not modified; release out with
 * pg_frontier_cmp_release.
 */
int pg_frontier_compare(struct pg_frontier_cmp *out, const struct pg_frontier_point *base,
			size_t nb, const struct pg_frontier_point *cur, size_t nc,
			double confidence, const struct pg_frontier_noise *noise);
void pg_frontier_cmp_release(struct pg_frontier_cmp *c);

/* A ladder point from a serving result: output_throughput / gpus and 1000
 * / median_tpot_ms (values in display units, as the metric registry reads
 * them); the knob from perfgate.params (max_concurrency, else qps). false
 * when the result lacks either value. */
bool pg_frontier_point_from(struct pg_frontier_point *out, const char *name, const json_t *result,
			    bool knob_is_rate);

/* Which points form a ladder: the points of one serving test that differ
 * only by max_concurrency (at one rate) or only by rate (at one
 * concurrency), three or more; each ladder's member indexes in order of
 * the knob. */
struct pg_ladder {
	char *test;       /* the test's name */
	char *label;      /* "serving_x ladder (qps inf, concurrency 1-128)" */
	bool by_rate;     /* the knob is the request rate, else max_concurrency */
	double qps;       /* a concurrency ladder's rate (INFINITY: inf) */
	long concurrency; /* a rate ladder's max_concurrency (0: unbounded) */
	size_t *idx;      /* into the points given */
	size_t n;
};

struct pg_ladders {
	struct pg_ladder *v;
	size_t n, cap;
};

/* The ladders among n serving results (the caller leaves out points that
 * did not complete and SLA probes), concurrency ladders first, in test
 * order; a point is in one ladder at most. The test is perfgate.test, else
 * the name before "_qps_". O(n log n). Release with pg_ladders_release. */
void pg_ladders_find(struct pg_ladders *out, const char *const *names, const json_t *const *results,
		     size_t n);
void pg_ladders_release(struct pg_ladders *l);

/* The GPUs a result ran on for "per GPU": perfgate.params.tp, else 1. */
long pg_frontier_gpus(const json_t *result);

/*
 * The InferenceX / perf.vllm.ai row of a serving result (vLLM's
 * perf-eval lib/ingest_perf.py shape): date, device, conc, model,
 * framework, precision, spec_decoding, disagg, isl, osl, is_multinode, tp,
 * ep, dp_attention, tput_per_gpu (total tokens / tp), output_tput_per_gpu,
 * input_tput_per_gpu, then every *_ms key in seconds without its suffix,
 * and *_intvty = 1000 / tpot ms for each TPOT key. New reference; NULL
 * for a result that is not a serving result.
 */
json_t *pg_frontier_inferencex_row(const json_t *result, const char *device);

/* A ladder's knob (a concurrency or a rate) as text: "16", "0.5", "inf". */
void pg_frontier_knob_text(char *out, size_t size, double v);

#endif
