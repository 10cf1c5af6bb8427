/*
 * Runs of one point found as separate results: llm-d's experiment trees
 * keep each repeated run of a configuration as a file of its own
 * (<GPU>/<deployment>/benchmark_<date>.json, minutes apart, same rate and
 * model), so a tree or a list of files gives one point several times.
 * They become that point's repeats, as `perfgate run` with `repeat: N`
 * writes them (docs/results.md, perfgate.repeats).
 */
#include "import/import.h"
#include "import/import_impl.h"

#include "base/alloc.h"

#include "base/jsonw.h"
#include "results/cold.h"
#include "results/repeats.h"
#include "results/result.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const json_t *pg_of(const json_t *run)
{
	return json_object_get(run, "perfgate");
}

const char *pg_import_not_repeats(const struct pg_result *const *runs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const json_t *pg = pg_of(runs[i]->json);
		const char *status = json_string_value(json_object_get(pg, "status"));

		if (runs[i]->kind == PG_SUITE_STARTUP || runs[i]->kind != runs[0]->kind)
			return "not runs of one serving, latency or throughput point";
		if (status && strcmp(status, "ok"))
			return "a failed point is not a repeat";
		if (json_object_get(pg, "repeats") || json_object_get(pg, "ab"))
			return "a result that holds repeats already";
		if (i == 0)
			continue;
		if (!json_equal(json_object_get(pg, "params"),
				json_object_get(pg_of(runs[0]->json), "params")))
			return "their workloads differ";
		for (size_t k = 0; k < i; k++) {
			json_t *a = pg_repeats_metrics(runs[k]->json);
			json_t *b = pg_repeats_metrics(runs[i]->json);
			bool same = json_equal(a, b);

			json_decref(a);
			json_decref(b);
			if (same)
				return "the same run twice";
		}
	}
	return NULL;
}

json_t *pg_import_merge_repeats(const struct pg_result *const *runs, size_t n)
{
	json_t **bare = pg_xcalloc(n ? n : 1, sizeof(*bare));
	json_t *merged, *pg, *reps = json_array(), *from = json_array();

	for (size_t i = 0; i < n; i++) {
		const json_t *imp = json_object_get(pg_of(runs[i]->json), "import");
		json_t *where = json_object();

		bare[i] = json_copy(runs[i]->json);
		json_object_del(bare[i], "perfgate");
		json_array_append_new(reps, pg_repeats_metrics(runs[i]->json));
		json_object_set_new(where, "file", json_string(runs[i]->path));
		if (json_object_get(imp, "record"))
			json_object_set(where, "record", json_object_get(imp, "record"));
		if (json_object_get(imp, "line"))
			json_object_set(where, "line", json_object_get(imp, "line"));
		json_array_append_new(from, where);
	}
	merged = pg_repeats_median(bare, n);
	for (size_t i = 0; i < n; i++)
		json_decref(bare[i]);
	free(bare);
	/* the first run's provenance, names and labels; every run's file */
	pg = json_deep_copy(pg_of(runs[0]->json));
	json_object_set_new(pg, "repeats", reps);
	pg_import_set_path(pg, "import.repeats", from);
	json_object_set_new(merged, "perfgate", pg);
	/* a cold first run is left out as a run leaves it */
	pg_cold_apply(merged, NULL);
	return merged;
}
