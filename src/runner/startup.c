#include "runner/startup.h"

#include "base/alloc.h"
#include "base/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const int pg_startup_percentages[6] = { 10, 25, 50, 75, 90, 99 };

void pg_startup_put(json_t *result, const char *phase, const char *measure,
		    const struct pg_startup_times *times)
{
	char key[96];
	json_t *list, *pct;
	double *sorted;

	if (!times->n)
		return;
	list = json_array();
	for (size_t i = 0; i < times->n; i++)
		json_array_append_new(list, json_real(times->v[i]));
	sorted = pg_xmalloc(times->n * sizeof(*sorted));
	memcpy(sorted, times->v, times->n * sizeof(*sorted));
	pg_stats_sort(sorted, times->n);
	pct = json_object();
	for (size_t i = 0; i < sizeof(pg_startup_percentages) / sizeof(pg_startup_percentages[0]);
	     i++) {
		char p[8];
		snprintf(p, sizeof(p), "%d", pg_startup_percentages[i]);
		json_object_set_new(pct, p,
				    json_real(pg_stats_percentile_sorted(
					    sorted, times->n, pg_startup_percentages[i])));
	}
	free(sorted);
	snprintf(key, sizeof(key), "avg_%s_%s_time", phase, measure);
	json_object_set_new(result, key, json_real(pg_stats_mean(times->v, times->n)));
	snprintf(key, sizeof(key), "%s_%s_times", phase, measure);
	json_object_set_new(result, key, list);
	snprintf(key, sizeof(key), "%s_%s_percentiles", phase, measure);
	json_object_set_new(result, key, pct);
}
