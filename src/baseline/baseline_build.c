/* Baselines from runs: the values `perfgate baseline update` writes. */
#include "gate/compare.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "gate/compare_stats.h"
#include "gpu/gpu.h"
#include "base/jsonw.h"
#include "results/identity.h"
#include "results/result.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void pg_result_date(char out[16], const json_t *result)
{
	const char *s = pg_json_path_str(result, "perfgate.started_at");

	out[0] = '\0';
	if (s && strlen(s) >= 10 && s[4] == '-' && s[7] == '-') {
		memcpy(out, s, 10);
		out[10] = '\0';
		return;
	}
	s = pg_json_path_str(result, "date");
	if (s && strlen(s) >= 8) {
		for (int i = 0; i < 8; i++)
			if (!isdigit((unsigned char)s[i]))
				return;
		snprintf(out, 16, "%.4s-%.2s-%.2s", s, s + 4, s + 6);
	}
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void describe_sources(struct pg_buf *b, const struct pg_cmp_run *const *used, size_t n)
{
	for (size_t i = 0; i < n && i < 3; i++)
		pg_buf_printf(b, "%s%s", i ? ", " : "", used[i]->label ? used[i]->label : "?");
	if (n > 3)
		pg_buf_printf(b, " and %zu more", n - 3);
}

void pg_baseline_from_runs(struct pg_baseline *out, const struct pg_cmp_run *runs, size_t n_runs,
			   struct pg_strv *skipped)
{
	const char **names = NULL;
	size_t n_names = 0, cap = 0, nm;
	const struct pg_metric *all = pg_metrics_all(&nm);
	struct pg_cmp_index *ix = pg_xcalloc(n_runs ? n_runs : 1, sizeof(*ix));
	struct pg_cmp_point **pts_id = pg_xcalloc(n_runs ? n_runs : 1, sizeof(*pts_id));
	struct pg_strv ids = PG_STRV_INIT;

	for (size_t r = 0; r < n_runs; r++) {
		/* points go into the baseline under their identities
		 * (results/identity.h), whatever their files are called */
		const struct pg_cmp_point *p = runs[r].points;
		size_t n = runs[r].n;
		char **id = pg_xcalloc(n ? n : 1, sizeof(*id));
		const char **given = pg_xcalloc(n ? n : 1, sizeof(*given));

		pts_id[r] = pg_xcalloc(n ? n : 1, sizeof(**pts_id));
		for (size_t i = 0; i < n; i++) {
			given[i] = p[i].name ? p[i].name : "";
			id[i] = p[i].probe ? pg_xstrdup(given[i])
					   : pg_identity_of(given[i], p[i].suite, p[i].result);
		}
		pg_identity_unique(id, given, n);
		for (size_t i = 0; i < n; i++) {
			pts_id[r][i] = p[i];
			pg_strv_push_owned(&ids, id[i]);
			if (p[i].name)
				pts_id[r][i].name = id[i];
		}
		free(id);
		free(given);
		pg_cmp_index_init(&ix[r], pts_id[r], n);
		for (size_t i = 0; i < ix[r].n; i++)
			if (!ix[r].v[i]->probe)
				PG_ARRAY_PUSH(names, n_names, cap, ix[r].v[i]->name);
	}
	if (n_names)
		qsort(names, n_names, sizeof(*names), cmp_cstr);

	for (size_t k = 0; k < n_names; k++) {
		const struct pg_cmp_point **pts;
		const struct pg_cmp_run **used;
		size_t n_pts = 0;
		struct pg_base_point *bp;
		const struct pg_cmp_point *last;
		struct pg_buf src = PG_BUF_INIT;
		char date[16];

		if (k && !strcmp(names[k - 1], names[k]))
			continue;
		pts = pg_xmalloc(n_runs * sizeof(*pts));
		used = pg_xmalloc(n_runs * sizeof(*used));
		for (size_t r = 0; r < n_runs; r++) {
			const struct pg_cmp_point *p = pg_cmp_index_find(&ix[r], names[k]);
			if (!p)
				continue;
			if (p->status && strcmp(p->status, "ok")) {
				if (skipped) {
					struct pg_buf why = PG_BUF_INIT;
					pg_buf_printf(&why, "%s (%s, %s)", p->name, p->status,
						      runs[r].label ? runs[r].label : "?");
					pg_strv_push_owned(skipped, pg_buf_detach(&why));
				}
				continue;
			}
			/* failed requests: real numbers of a run that went wrong */
			if (pg_result_json_incomplete(p->result, NULL)) {
				if (skipped) {
					struct pg_buf why = PG_BUF_INIT;
					pg_buf_printf(&why, "%s (incomplete: ", p->name);
					pg_result_json_incomplete(p->result, &why);
					pg_buf_printf(&why, ", %s)",
						      runs[r].label ? runs[r].label : "?");
					pg_strv_push_owned(skipped, pg_buf_detach(&why));
				}
				continue;
			}
			pts[n_pts] = p;
			used[n_pts++] = &runs[r]; /* one point per run */
		}
		if (!n_pts)
			goto next;

		last = pts[n_pts - 1];
		bp = pg_baseline_add(out, names[k], last->suite);
		bp->runs = (long)n_pts;
		bp->test = pg_xstrdup(pg_json_path_str(last->result, "perfgate.test"));
		if (last->suite == PG_SUITE_SERVING) {
			bp->qps = pg_result_qps(last->result);
			bp->max_concurrency = pg_result_max_concurrency(last->result);
		}
		if (last->gpu) {
			char label[128];
			bp->gpu = pg_xstrdup(pg_gpu_label(label, sizeof(label), last->gpu));
		}
		describe_sources(&src, used, n_pts);
		{
			/* an imported point: the line its figures come from, so a
			 * file of several reports says which one */
			json_t *line = pg_json_path(last->result, "perfgate.import.line");
			if (n_pts == 1 && json_is_integer(line))
				pg_buf_printf(&src, ":%lld", (long long)json_integer_value(line));
		}
		bp->source = pg_buf_detach(&src);
		for (size_t i = n_pts; i-- > 0;) {
			pg_result_date(date, pts[i]->result);
			if (date[0]) {
				bp->date = pg_xstrdup(date);
				break;
			}
		}
		bp->commit = pg_xstrdup(pg_json_path_str(last->result, "perfgate.git.commit"));

		for (size_t m = 0; m < nm; m++) {
			double *medians, *xs;
			size_t n_med = 0, n_xs;

			if (all[m].suite != bp->suite || all[m].direction == PG_NO_DIRECTION)
				continue;
			if (n_pts == 1) {
				n_xs = pg_result_samples(pts[0]->result, &all[m], &xs);
				if (n_xs) {
					pg_base_point_add_metric(bp, &all[m], NAN, xs, n_xs);
					if ((long)n_xs > bp->repeats)
						bp->repeats = (long)n_xs;
				}
				free(xs);
				continue;
			}
			medians = pg_xmalloc(n_pts * sizeof(double));
			for (size_t i = 0; i < n_pts; i++) {
				n_xs = pg_result_samples(pts[i]->result, &all[m], &xs);
				if (n_xs)
					medians[n_med++] = pg_cmpstat_median(xs, n_xs);
				if ((long)n_xs > bp->repeats)
					bp->repeats = (long)n_xs;
				free(xs);
			}
			if (n_med)
				pg_base_point_add_runs(bp, &all[m], medians, n_med);
			free(medians);
		}
	next:
		free(pts);
		free(used);
	}
	free(names);
	for (size_t r = 0; r < n_runs; r++) {
		pg_cmp_index_release(&ix[r]);
		free(pts_id[r]);
	}
	free(ix);
	free(pts_id);
	pg_strv_release(&ids);
	pg_baseline_sort(out);
}
