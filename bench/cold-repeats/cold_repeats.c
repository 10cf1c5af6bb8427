/*
 * cold-repeats: how much slower is the first repeat after a server start,
 * how much do warm repeats differ, and what does perfgate's rule for a
 * cold first repeat (results/cold.h) make of a real nightly series?
 *
 *   build/bench/cold-repeats [CSV]
 *
 * CSV is shaped like shared/data/real-noise/sglang_mi355x_nightly.csv
 * (columns point, metric, image, repeat, bench_ts, value, found by their
 * header names): one job is a point's (image, bench_ts), and repeat 1 of a
 * job runs right after the server starts. Jobs with exactly repeats 1..3
 * are used. It prints, per metric (with its class in perfgate's registry)
 * and per class:
 *
 *   cold vs warm   repeat 1 against the median of repeats 2-3 (the log
 *                  gap as a percentage: median, min, max over the jobs)
 *   warm vs warm   |repeat 2 - repeat 3| (median, p90, max)
 *
 * then perfgate's own check (pg_cold_check, the code `perfgate run` and
 * `perfgate import` run) on:
 *
 *   the real jobs        repeats 1..3 as recorded: how many are flagged,
 *                        and by which witness
 *   warm first repeats   no job has three warm repeats, so a warm triple
 *                        is made of a job's repeats 2 and 3 and a first
 *                        repeat as far from their centre as another night
 *                        of the same point (or any point: the wider null)
 *                        had its warm pair apart, x sqrt(3/4) (one draw
 *                        against the mean of two), both signs, every metric
 *                        from the same donor night: the share flagged
 *   two repeats          repeat 1 vs 2 (cold) and 2 vs 3 both ways (warm)
 */
#include "base/alloc.h"
#include "results/cold.h"
#include "results/metrics.h"
#include "results/repeats.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_JOBS    4096
#define MAX_METRICS 32
#define MAX_FIELDS  32

struct job {
	char *point, *key; /* point, and point|image|bench_ts */
	double v[MAX_METRICS][3];
	unsigned char have[MAX_METRICS]; /* bit r: repeat r + 1 given */
};

static char *metric_names[MAX_METRICS];
static size_t n_metrics;
static struct job *jobs;
static size_t n_jobs;

static size_t metric_index(const char *name)
{
	for (size_t i = 0; i < n_metrics; i++)
		if (!strcmp(metric_names[i], name))
			return i;
	if (n_metrics == MAX_METRICS) {
		fprintf(stderr, "cold-repeats: more than %d metrics\n", MAX_METRICS);
		exit(2);
	}
	metric_names[n_metrics] = pg_xstrdup(name);
	return n_metrics++;
}

static struct job *job_of(const char *point, const char *key)
{
	for (size_t i = n_jobs; i-- > 0;)
		if (!strcmp(jobs[i].key, key))
			return &jobs[i];
	if (n_jobs == MAX_JOBS) {
		fprintf(stderr, "cold-repeats: more than %d jobs\n", MAX_JOBS);
		exit(2);
	}
	jobs[n_jobs].point = pg_xstrdup(point);
	jobs[n_jobs].key = pg_xstrdup(key);
	return &jobs[n_jobs++];
}

/* Split line at commas (the files have no quoted fields). */
static size_t split(char *line, char **f)
{
	size_t n = 0;

	line[strcspn(line, "\r\n")] = '\0';
	while (n < MAX_FIELDS) {
		f[n++] = line;
		line = strchr(line, ',');
		if (!line)
			break;
		*line++ = '\0';
	}
	return n;
}

static void read_csv(const char *path)
{
	static const char *const want[] = { "point",  "metric",   "image",
					    "repeat", "bench_ts", "value" };
	size_t col[6];
	char line[8192], *f[MAX_FIELDS];
	FILE *fp = fopen(path, "r");
	size_t n;

	if (!fp || !fgets(line, sizeof(line), fp)) {
		perror(path);
		exit(2);
	}
	n = split(line, f);
	for (size_t w = 0; w < 6; w++) {
		col[w] = SIZE_MAX;
		for (size_t i = 0; i < n; i++)
			if (!strcmp(f[i], want[w]))
				col[w] = i;
		if (col[w] == SIZE_MAX) {
			fprintf(stderr, "%s: no column '%s'\n", path, want[w]);
			exit(2);
		}
	}
	while (fgets(line, sizeof(line), fp)) {
		char key[4096], *end;
		long rep;
		double v;
		struct job *j;
		size_t m;

		n = split(line, f);
		if (n <= col[5])
			continue;
		rep = strtol(f[col[3]], &end, 10);
		v = strtod(f[col[5]], NULL);
		if (*end || rep < 1 || rep > 3 || !(v > 0))
			continue;
		snprintf(key, sizeof(key), "%s|%s|%s", f[col[0]], f[col[2]], f[col[4]]);
		j = job_of(f[col[0]], key);
		m = metric_index(f[col[1]]);
		j->v[m][rep - 1] = v;
		j->have[m] |= (unsigned char)(1u << (rep - 1));
	}
	fclose(fp);
}

/* Jobs with repeats 1..3 of every metric they report. */
static int three_repeats(const struct job *j)
{
	int any = 0;

	for (size_t m = 0; m < n_metrics; m++) {
		if (j->have[m] && j->have[m] != 7)
			return 0;
		any |= j->have[m] == 7;
	}
	return any;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double quantile(double *v, size_t n, double q)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[(size_t)floor(q * (double)(n - 1) + 0.5)];
}

static const struct pg_metric *registry(const char *key)
{
	size_t n;
	const struct pg_metric *all = pg_metrics_all(&n);

	for (size_t i = 0; i < n; i++)
		if (all[i].suite == PG_SUITE_SERVING && !strcmp(all[i].key, key))
			return &all[i];
	return NULL;
}

static const char *class_name(const struct pg_metric *m)
{
	if (!m || m->direction == PG_NO_DIRECTION)
		return "-";
	return m->cls == PG_CLASS_THROUGHPUT ? "throughput"
	       : m->cls == PG_CLASS_LATENCY  ? "latency"
					     : "tail";
}

/* The gaps of one metric (or class: metric NULL, cls) over the jobs. */
static void gaps(size_t *idx, size_t n_idx, int m_only, int cls, double *cold, size_t *n_cold,
		 double *warm, size_t *n_warm)
{
	*n_cold = *n_warm = 0;
	for (size_t k = 0; k < n_idx; k++) {
		const struct job *j = &jobs[idx[k]];
		for (size_t m = 0; m < n_metrics; m++) {
			const struct pg_metric *pm = registry(metric_names[m]);
			double l1, l2, l3;
			if (j->have[m] != 7)
				continue;
			if (m_only >= 0 ? (int)m != m_only
					: (!pm || pm->direction == PG_NO_DIRECTION ||
					   (int)pm->cls != cls))
				continue;
			l1 = log(j->v[m][0]);
			l2 = log(j->v[m][1]);
			l3 = log(j->v[m][2]);
			cold[(*n_cold)++] = 100 * (l1 - (l2 + l3) / 2);
			warm[(*n_warm)++] = 100 * fabs(l2 - l3);
		}
	}
}

static void print_gaps(const char *name, const char *cls, double *cold, size_t nc, double *warm,
		       size_t nw)
{
	if (!nc)
		return;
	printf("  %-24s %-10s %5zu  %+7.1f%% %+7.1f%% %+7.1f%%   %6.2f%% %6.2f%% %6.2f%%\n", name,
	       cls, nc, quantile(cold, nc, 0.5), quantile(cold, nc, 0), quantile(cold, nc, 1),
	       quantile(warm, nw, 0.5), quantile(warm, nw, 0.9), quantile(warm, nw, 1));
}

/* A run object of job j's repeat r (0-based), every metric it has. */
static json_t *run_of(const struct job *j, int r)
{
	json_t *o = json_object();

	for (size_t m = 0; m < n_metrics; m++)
		if (j->have[m] & (1u << r))
			json_object_set_new(o, metric_names[m], json_real(j->v[m][r]));
	return o;
}

/* A made warm first repeat for job a: its warm pair's centre moved by
 * donor d's warm gap, x sqrt(3/4), signed. */
static json_t *made_first(const struct job *a, const struct job *d, double sign)
{
	json_t *o = json_object();

	for (size_t m = 0; m < n_metrics; m++) {
		double centre, gap;
		if (a->have[m] != 7 || d->have[m] != 7)
			continue;
		centre = (log(a->v[m][1]) + log(a->v[m][2])) / 2;
		gap = (log(d->v[m][1]) - log(d->v[m][2])) * sign * sqrt(0.75);
		json_object_set_new(o, metric_names[m], json_real(exp(centre + gap)));
	}
	return o;
}

static void count_witness(size_t *by, const struct pg_cold *c)
{
	const char *const ids[] = { "median_ttft_ms", "median_tpot_ms", "median_itl_ms",
				    "median_e2el_ms", "output_throughput" };
	for (size_t i = 0; i < 5; i++)
		if (c->metric && !strcmp(c->metric->id, ids[i]))
			by[i]++;
}

static void print_witnesses(const size_t *by)
{
	printf("    by witness: median TTFT %zu, median TPOT %zu, median ITL %zu, median E2EL "
	       "%zu, output throughput %zu\n",
	       by[0], by[1], by[2], by[3], by[4]);
}

/* The made warm first repeats of every job against donors of the same
 * point (same_point) or of any point: how many are flagged. */
static void null_flags(const size_t *idx, size_t n_idx, int same_point)
{
	size_t trials = 0, flagged = 0, by[5] = { 0 };

	for (size_t a = 0; a < n_idx; a++) {
		for (size_t d = 0; d < n_idx; d++) {
			const struct job *ja = &jobs[idx[a]], *jd = &jobs[idx[d]];
			if (a == d || (same_point && strcmp(ja->point, jd->point)))
				continue;
			for (int s = 0; s < 2; s++) {
				json_t *runs[3] = { made_first(ja, jd, s ? -1 : 1), run_of(ja, 1),
						    run_of(ja, 2) };
				struct pg_cold c;
				pg_cold_check(&c, PG_SUITE_SERVING, (const json_t *const *)runs, 3);
				trials++;
				if (c.cold) {
					flagged++;
					count_witness(by, &c);
				}
				for (int k = 0; k < 3; k++)
					json_decref(runs[k]);
			}
		}
	}
	printf("  warm first repeats, donors of %s: %zu of %zu flagged (%.2f%%)\n",
	       same_point ? "the same point" : "any point", flagged, trials,
	       trials ? 100.0 * (double)flagged / (double)trials : 0);
	print_witnesses(by);
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1]
				    : "/work/shared/data/real-noise/sglang_mi355x_nightly.csv";
	size_t *idx, n_idx = 0, flagged = 0, by[5] = { 0 };
	double *cold, *warm;
	size_t nc, nw, points = 0;

	if (argc > 2 || (argc > 1 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: cold-repeats [CSV]\n");
		return 2;
	}
	jobs = pg_xcalloc(MAX_JOBS, sizeof(*jobs));
	read_csv(path);
	idx = pg_xcalloc(n_jobs ? n_jobs : 1, sizeof(*idx));
	for (size_t i = 0; i < n_jobs; i++)
		if (three_repeats(&jobs[i]))
			idx[n_idx++] = i;
	for (size_t i = 0; i < n_idx; i++) {
		size_t k = 0;
		while (k < i && strcmp(jobs[idx[k]].point, jobs[idx[i]].point))
			k++;
		points += k == i;
	}
	cold = pg_xcalloc(n_idx * MAX_METRICS + 1, sizeof(double));
	warm = pg_xcalloc(n_idx * MAX_METRICS + 1, sizeof(double));
	printf("%s: %zu jobs with 3 repeats (%zu points) of %zu jobs\n\n", path, n_idx, points,
	       n_jobs);
	printf("  %-24s %-10s %5s  %-26s   %s\n", "metric", "class", "jobs",
	       "repeat 1 vs 2-3: median, min, max", "|repeat 2 - 3|: median, p90, max");
	for (size_t m = 0; m < n_metrics; m++) {
		gaps(idx, n_idx, (int)m, 0, cold, &nc, warm, &nw);
		print_gaps(metric_names[m], class_name(registry(metric_names[m])), cold, nc, warm,
			   nw);
	}
	printf("\n  by class (the registry's serving metrics):\n");
	for (int cls = PG_CLASS_THROUGHPUT; cls <= PG_CLASS_TAIL; cls++) {
		struct pg_metric fake = { .cls = (enum pg_metric_class)cls, .direction = 1 };
		gaps(idx, n_idx, -1, cls, cold, &nc, warm, &nw);
		print_gaps("(all)", class_name(&fake), cold, nc, warm, nw);
	}

	printf("\nperfgate's check (results/cold.h: %g x the others' range, floors %g%% "
	       "latency, %g%% throughput; x%g with 2 repeats):\n",
	       PG_COLD_SPREAD_FACTOR, 100 * PG_COLD_FLOOR_LATENCY, 100 * PG_COLD_FLOOR_THROUGHPUT,
	       PG_COLD_TWO_REPEATS);
	for (size_t k = 0; k < n_idx; k++) {
		const struct job *j = &jobs[idx[k]];
		json_t *runs[3] = { run_of(j, 0), run_of(j, 1), run_of(j, 2) };
		struct pg_cold c;
		pg_cold_check(&c, PG_SUITE_SERVING, (const json_t *const *)runs, 3);
		if (c.cold) {
			flagged++;
			count_witness(by, &c);
		} else if (c.metric) {
			printf("  not flagged: %s: %s %+.1f%% (bar %.1f%%)\n", j->key, c.metric->id,
			       100 * c.change, 100 * c.threshold);
		}
		for (int r = 0; r < 3; r++)
			json_decref(runs[r]);
	}
	printf("  real first repeats: %zu of %zu flagged cold (%.1f%%)\n", flagged, n_idx,
	       n_idx ? 100.0 * (double)flagged / (double)n_idx : 0);
	print_witnesses(by);
	null_flags(idx, n_idx, 1);
	null_flags(idx, n_idx, 0);

	/* two repeats: repeat 1 against 2 (cold), 2 against 3 and 3 against 2 (warm) */
	{
		size_t cold2 = 0, warm2 = 0;
		for (size_t k = 0; k < n_idx; k++) {
			const struct job *j = &jobs[idx[k]];
			const int pairs[3][2] = { { 0, 1 }, { 1, 2 }, { 2, 1 } };
			for (int p = 0; p < 3; p++) {
				json_t *runs[2] = { run_of(j, pairs[p][0]),
						    run_of(j, pairs[p][1]) };
				struct pg_cold c;
				pg_cold_check(&c, PG_SUITE_SERVING, (const json_t *const *)runs, 2);
				if (c.cold)
					*(p ? &warm2 : &cold2) += 1;
				json_decref(runs[0]);
				json_decref(runs[1]);
			}
		}
		printf("  two repeats: cold first repeat flagged %zu of %zu; warm pair flagged %zu "
		       "of %zu (%.2f%%)\n",
		       cold2, n_idx, warm2, 2 * n_idx,
		       n_idx ? 100.0 * (double)warm2 / (double)(2 * n_idx) : 0);
	}
	free(idx);
	free(cold);
	free(warm);
	for (size_t i = 0; i < n_jobs; i++) {
		free(jobs[i].point);
		free(jobs[i].key);
	}
	free(jobs);
	for (size_t m = 0; m < n_metrics; m++)
		free(metric_names[m]);
	return 0;
}
