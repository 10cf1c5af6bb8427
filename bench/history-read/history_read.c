/*
 * history-read: the read of perfgate trends alone (pg_history_read with a
 * pool, compact records), its CPU time and what it read, to profile and
 * compare the read path without the analysis and the pages:
 *
 *   build/bench/history-read REPO GPU [JOBS [sum]]
 *   valgrind --tool=cachegrind --cache-sim=no build/bench/history-read REPO GPU 1
 *
 * It prints the points and records read and the user and system CPU
 * seconds of the read; with "sum", a checksum of every record's fields
 * and values (the same before and after a change of the reader: the
 * records are identical).
 */
#include "base/error.h"
#include "base/tasks.h"
#include "baseline/history.h"
#include "baseline/history_io.h"
#include "results/metrics.h"
#include "sys/threads.h"

#include <git2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

static uint64_t mix_str(uint64_t h, const char *s)
{
	return s ? mix(h, s, strlen(s) + 1) : mix(h, "", 0) * 31;
}

int main(int argc, char **argv)
{
	struct pg_error err = PG_ERROR_INIT;
	struct pg_history_pool *pool;
	struct pg_history *hs = NULL;
	struct pg_tasks tasks;
	size_t n = 0, recs = 0, nm;
	const struct pg_metric *all = pg_metrics_all(&nm);
	uint64_t sum = 1469598103934665603ull;
	double t0;
	int rc;

	if (argc < 3) {
		fprintf(stderr, "usage: history-read REPO GPU [JOBS]\n");
		return 2;
	}
	git_libgit2_init();
	pg_threads_tasks(&tasks, argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 1);
	pool = pg_history_pool_new();
	t0 = cpu_s();
	rc = pg_history_read(&hs, &n, argv[2], NULL,
			     &(struct pg_history_opts){
				     .repo = argv[1], .slim = true, .pool = pool, .tasks = &tasks },
			     &err);
	if (rc) {
		fprintf(stderr, "history-read: %s\n", err.msg);
		return 3;
	}
	fprintf(stderr, "read: %.2f s CPU\n", cpu_s() - t0);
	for (size_t i = 0; i < n; i++) {
		sum = mix_str(sum, hs[i].point);
		for (size_t k = 0; argc > 4 && k < hs[i].n; k++) {
			const struct pg_history_rec *r = &hs[i].recs[k];
			sum = mix_str(sum, r->commit);
			sum = mix_str(sum, r->date);
			sum = mix_str(sum, r->build_url);
			sum = mix_str(sum, r->gpu);
			sum = mix_str(sum, r->test);
			sum = mix_str(sum, r->run);
			sum = mix(sum, &r->suite, sizeof(r->suite));
			sum = mix(sum, &r->qps, sizeof(r->qps));
			sum = mix(sum, &r->max_concurrency, sizeof(r->max_concurrency));
			sum = mix(sum, &r->repeats, sizeof(r->repeats));
			for (size_t m = 0; m < nm; m++) {
				double v = pg_history_rec_value(r, &all[m]);
				sum = mix(sum, &v, sizeof(v));
			}
		}
		recs += hs[i].n;
		pg_history_release(&hs[i]);
	}
	free(hs);
	pg_history_pool_free(pool);
	git_libgit2_shutdown();
	printf("points %zu records %zu", n, recs);
	if (argc > 4)
		printf(" checksum %016llx", (unsigned long long)sum);
	printf("\n");
	return 0;
}
