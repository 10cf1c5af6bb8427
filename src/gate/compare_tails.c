#include "gate/compare_tails.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/jsonw.h"
#include "base/strutil.h"
#include "gate/compare.h"
#include "results/repeats.h"
#include "results/tails.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool pg_cmp_tail_metric(const struct pg_metric *m, double *percentile, char family[16])
{
	const char *id = m->id, *us, *end;
	char num[16];
	size_t len;

	if (m->cls != PG_CLASS_TAIL)
		return false;
	if (!strncmp(id, "certified_", 10))
		id += 10;
	/* p<P>_<family>_ms */
	us = strchr(id, '_');
	if (id[0] != 'p' || !us || (size_t)(us - id - 1) >= sizeof(num))
		return false;
	snprintf(num, sizeof(num), "%.*s", (int)(us - id - 1), id + 1);
	end = strrchr(us, '_');
	len = (size_t)(end - us - 1);
	if (end == us || len == 0 || len >= 16 || strcmp(end, "_ms") ||
	    pg_parse_double(num, percentile) || !(*percentile > 0 && *percentile < 100))
		return false;
	snprintf(family, 16, "%.*s", (int)len, us + 1);
	return true;
}

static long path_long(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_number(v) ? (long)json_number_value(v) : -1;
}

long pg_cmp_tail_samples(const json_t *result, const char *family)
{
	json_t *cert = pg_json_path(result, "perfgate.certified");
	json_t *fam = json_is_object(cert) ? json_object_get(cert, family) : NULL;
	json_t *lat;
	long completed, output;

	if (json_is_object(fam) && json_is_number(json_object_get(fam, "n")))
		return (long)json_number_value(json_object_get(fam, "n"));
	if (!strcmp(family, "latency")) {
		lat = json_object_get(result, "latencies");
		return json_is_array(lat) ? (long)json_array_size(lat) : -1;
	}
	completed = path_long(result, "completed");
	if (!strcmp(family, "itl")) {
		/* one gap per content message after the first: one per token
		 * when each message carries one */
		output = path_long(result, "total_output_tokens");
		return completed >= 0 && output >= completed ? output - completed : -1;
	}
	return completed;
}

bool pg_cmp_tail_undecidable(struct pg_cmp_row *row, const json_t *result, const double *cur,
			     size_t n_cur)
{
	const struct pg_metric *m = row->metric;
	double pct, d;
	char family[16], word[PG_FMT_DOUBLE_SIZE];
	long n, need;
	struct pg_buf note = PG_BUF_INIT;

	if (!m || !row->rule.certify || !pg_cmp_tail_metric(m, &pct, family))
		return false;
	n = pg_cmp_tail_samples(result, family);
	need = pg_tails_min_n(pct / 100, PG_TAILS_CONFIDENCE);
	if (n < 0 || need < 0 || n >= need)
		return false;

	row->verdict = PG_VERDICT_INSUFFICIENT;
	row->tolerance = row->rule.tolerance;
	row->n_current = n_cur;
	if (n_cur) {
		double *copy = pg_xmalloc(n_cur * sizeof(double));
		memcpy(copy, cur, n_cur * sizeof(double));
		row->current = pg_median(copy, n_cur);
		free(copy);
	}
	row->change = row->baseline > 0 ? row->current / row->baseline - 1 : NAN;
	/* a tail that moved past its tolerance is still worth a look */
	d = m->direction == PG_LOWER_IS_BETTER ? row->change : -row->change;
	if (isfinite(d) && d > row->rule.tolerance &&
	    fabs(row->current - row->baseline) > row->rule.floor) {
		row->verdict = PG_VERDICT_NOISY;
		row->outcome = PG_OUTCOME_WARN;
	} else {
		row->outcome = PG_OUTCOME_PASS;
	}
	pg_fmt_g(word, pct);
	pg_buf_printf(&note, "not decidable at n = %ld (p%s needs ≥ %ld)", n, word, need);
	free(row->note);
	row->note = pg_buf_detach(&note);
	return true;
}
