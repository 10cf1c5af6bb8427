/*
 * The report as markdown, in the layout of vLLM's benchmark_results.md.
 *
 * Tables reproduce Python tabulate's "pipe" format as vLLM calls it
 * (tabulate(df, headers="keys", tablefmt="pipe", showindex=False)):
 * every column is as wide as its widest cell and at least its header plus
 * two; one space of padding each side; text left-aligned (":---"),
 * numbers right-aligned ("---:") with tabulate's decimal alignment: a
 * number gets trailing spaces so that the characters after its decimal
 * point (or after its 'e' when it has no point) line up with the column's
 * longest such tail. Widths count code points, as Python's len() does.
 */
#include "report/report.h"
#include "report/report_impl.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/escape.h"
#include "results/clientcheck.h"
#include "results/cold.h"
#include "results/metrics.h"
#include "results/result.h"
#include "results/tails.h"
#include "base/jsonw.h"
#include "base/strutil.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- small text helpers ---- */

/* "a", "a and b", "a, b and c"; after 10 items "... and N more". */
#define LIST_MAX 10

static void join_begin(struct pg_buf *out, size_t i, size_t n)
{
	if (i == 0)
		return;
	if (n > LIST_MAX)
		pg_buf_puts(out, ", ");
	else
		pg_buf_puts(out, i + 1 == n ? " and " : ", ");
}

static void join_end(struct pg_buf *out, size_t n)
{
	if (n > LIST_MAX)
		pg_buf_printf(out, " and %zu more", n - LIST_MAX);
}

/* ---- distinct values over the rows ---- */

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static size_t uniq(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	char *p = base;
	size_t k = 0;

	if (!n)
		return 0;
	qsort(base, n, size, cmp);
	for (size_t i = 1; i < n; i++)
		if (cmp(p + k * size, p + i * size))
			memmove(p + ++k * size, p + i * size, size);
	return k + 1;
}

enum long_field { F_INPUT, F_OUTPUT, F_BATCH, F_PROMPTS, F_CONCURRENCY };

static long row_long(const struct pg_report_row *row, enum long_field f)
{
	switch (f) {
	case F_INPUT:
		return row->params.input_len;
	case F_OUTPUT:
		return row->params.output_len;
	case F_BATCH:
		return row->params.batch_size;
	case F_PROMPTS:
		return row->params.num_prompts;
	case F_CONCURRENCY:
		return row->params.max_concurrency;
	}
	return -1;
}

/* Distinct known values of a field, ascending (caller frees *out). */
static size_t distinct_longs(const struct pg_report_table *t, enum long_field f, long **out)
{
	long *v = pg_xmalloc((t->n ? t->n : 1) * sizeof(*v));
	size_t n = 0;

	for (size_t i = 0; i < t->n; i++) {
		long x = row_long(&t->rows[i], f);
		if (x >= 0)
			v[n++] = x;
	}
	*out = v;
	return uniq(v, n, sizeof(*v), cmp_long);
}

static void put_longs(struct pg_buf *out, const long *v, size_t n)
{
	for (size_t i = 0; i < n && i < LIST_MAX; i++) {
		join_begin(out, i, n);
		pg_buf_printf(out, "%ld", v[i]);
	}
	join_end(out, n);
}

enum str_field { S_MODEL, S_DATASET, S_ENGINE, S_RAMP_UP, S_DEPLOYMENT };

static const char *row_str(const struct pg_report_row *row, enum str_field f)
{
	switch (f) {
	case S_MODEL:
		return row->params.model;
	case S_DATASET:
		return row->params.dataset;
	case S_ENGINE:
		return row->params.engine;
	case S_RAMP_UP:
		return row->params.ramp_up;
	case S_DEPLOYMENT:
		return row->params.deployment;
	}
	return NULL;
}

struct str_at {
	const char *s;
	size_t first;
};

static int cmp_str_at(const void *a, const void *b)
{
	const struct str_at *x = a, *y = b;
	int c = strcmp(x->s, y->s);
	return c ? c : (x->first > y->first) - (x->first < y->first);
}

static int cmp_first(const void *a, const void *b)
{
	const struct str_at *x = a, *y = b;
	return (x->first > y->first) - (x->first < y->first);
}

/* Distinct known strings of a field in order of first appearance (rows
 * are sorted by test name, so the order is deterministic). O(n log n). */
static size_t distinct_strs(const struct pg_report_table *t, enum str_field f, struct str_at **out)
{
	struct str_at *v = pg_xmalloc((t->n ? t->n : 1) * sizeof(*v));
	size_t n = 0, k = 0;

	for (size_t i = 0; i < t->n; i++) {
		const char *s = row_str(&t->rows[i], f);
		if (s)
			v[n++] = (struct str_at){ s, i };
	}
	qsort(v, n, sizeof(*v), cmp_str_at);
	for (size_t i = 0; i < n; i++)
		if (!k || strcmp(v[k - 1].s, v[i].s))
			v[k++] = v[i];
	qsort(v, k, sizeof(*v), cmp_first);
	*out = v;
	return k;
}

static void put_strs(struct pg_buf *out, const struct str_at *v, size_t n)
{
	for (size_t i = 0; i < n && i < LIST_MAX; i++) {
		join_begin(out, i, n);
		pg_escape_md_text(out, v[i].s);
	}
	join_end(out, n);
}

/* ---- section bullets ---- */

static int is_sharegpt(const char *s)
{
	return s && strcasestr(s, "sharegpt") != NULL;
}

/* The distinct values of a field over the rows of one dataset (NULL:
 * every row). */
static size_t group_longs(const struct pg_report_table *t, const char *dataset, enum long_field f,
			  long **out)
{
	long *v = pg_xmalloc((t->n ? t->n : 1) * sizeof(*v));
	size_t n = 0;

	for (size_t i = 0; i < t->n; i++) {
		long x = row_long(&t->rows[i], f);
		if (x >= 0 && (!dataset || pg_str_eq(t->rows[i].params.dataset, dataset)))
			v[n++] = x;
	}
	*out = v;
	return uniq(v, n, sizeof(*v), cmp_long);
}

struct workload {
	const char *dataset; /* NULL: the rows do not say */
	long *in, *out, *prompts;
	size_t n_in, n_out, n_prompts;
};

/* One dataset's lengths: "128 tokens (random dataset)", or for ShareGPT,
 * whose lengths come from the conversations, vLLM's sentence around the
 * prompt count ("randomly sample 200 prompts from ShareGPT dataset ..."). */
static void lengths_text(struct pg_buf *out, const struct workload *w, const long *lens,
			 size_t n_lens, const char *sharegpt_before, const char *sharegpt_after,
			 int with_dataset)
{
	if (is_sharegpt(w->dataset) && !n_lens) {
		pg_buf_puts(out, sharegpt_before);
		if (w->n_prompts) {
			put_longs(out, w->prompts, w->n_prompts);
			pg_buf_putc(out, ' ');
		}
		pg_buf_puts(out, sharegpt_after);
		return;
	}
	put_longs(out, lens, n_lens);
	pg_buf_puts(out, " tokens");
	if (with_dataset && w->dataset) {
		pg_buf_puts(out, " (");
		pg_escape_md_text(out, w->dataset);
		pg_buf_puts(out, " dataset)");
	}
}

static int has_input(const struct workload *w)
{
	return w->n_in || is_sharegpt(w->dataset);
}

static int has_output(const struct workload *w)
{
	return w->n_out || is_sharegpt(w->dataset);
}

/* Input and output lengths, dataset and prompt counts. One dataset reads
 * like vLLM's descriptions; several get one clause each. */
static void bullets_workload(struct pg_buf *out, const struct pg_report_table *t)
{
	struct str_at *datasets;
	size_t n_ds = distinct_strs(t, S_DATASET, &datasets);
	size_t n_groups = n_ds ? n_ds : 1;
	struct workload *w = pg_xcalloc(n_groups, sizeof(*w));
	int any_in = 0, any_out = 0, sharegpt_only = n_ds == 1 && is_sharegpt(datasets[0].s);

	for (size_t g = 0; g < n_groups; g++) {
		w[g].dataset = n_ds ? datasets[g].s : NULL;
		w[g].n_in = group_longs(t, w[g].dataset, F_INPUT, &w[g].in);
		w[g].n_out = group_longs(t, w[g].dataset, F_OUTPUT, &w[g].out);
		w[g].n_prompts = group_longs(t, w[g].dataset, F_PROMPTS, &w[g].prompts);
		any_in |= has_input(&w[g]);
		any_out |= has_output(&w[g]);
	}
	if (any_in) {
		size_t k = 0;
		pg_buf_puts(out, "- Input length: ");
		for (size_t g = 0; g < n_groups; g++)
			if (has_input(&w[g])) {
				pg_buf_puts(out, k++ ? "; " : "");
				lengths_text(
					out, &w[g], w[g].in, w[g].n_in, "randomly sample ",
					"prompts from ShareGPT dataset (with fixed random seed)",
					n_groups > 1);
			}
		pg_buf_puts(out, ".\n");
	}
	if (any_out) {
		size_t k = 0;
		pg_buf_puts(out, "- Output length: ");
		for (size_t g = 0; g < n_groups; g++)
			if (has_output(&w[g])) {
				pg_buf_puts(out, k++ ? "; " : "");
				lengths_text(out, &w[g], w[g].out, w[g].n_out,
					     "the corresponding output length of these ", "prompts",
					     n_groups > 1);
			}
		pg_buf_puts(out, ".\n");
	}
	if (n_ds == 1 && !sharegpt_only) {
		pg_buf_puts(out, n_ds > 1 ? "- Datasets: " : "- Dataset: ");
		put_strs(out, datasets, n_ds);
		pg_buf_puts(out, ".\n");
	}
	if (!sharegpt_only) {
		long *prompts;
		size_t n = group_longs(t, NULL, F_PROMPTS, &prompts);
		if (n) {
			pg_buf_puts(out, "- Number of prompts: ");
			put_longs(out, prompts, n);
			pg_buf_puts(out, ".\n");
		}
		free(prompts);
	}
	for (size_t g = 0; g < n_groups; g++) {
		free(w[g].in);
		free(w[g].out);
		free(w[g].prompts);
	}
	free(w);
	free(datasets);
}

/* "vllm" when every row that names an engine names the same one. */
static void put_engine(struct pg_buf *out, const struct pg_report_table *t)
{
	struct str_at *engines;
	size_t n = distinct_strs(t, S_ENGINE, &engines);

	if (n == 1)
		pg_escape_md_text(out, engines[0].s);
	else
		pg_buf_puts(out, "the server");
	free(engines);
}

static void bullet_qps(struct pg_buf *out, const struct pg_report_table *t)
{
	double *qps = pg_xmalloc((t->n ? t->n : 1) * sizeof(*qps));
	double *burst = pg_xmalloc((t->n ? t->n : 1) * sizeof(*burst));
	size_t n = 0, n_burst = 0;
	char num[PG_FMT_DOUBLE_SIZE];
	int finite = 0, infinite = 0;

	for (size_t i = 0; i < t->n; i++) {
		const struct pg_params *p = &t->rows[i].params;
		if (p->ramp_up)
			continue; /* its "inf" is no burst: the Ramp-up bullet says what it is */
		if (!isnan(p->qps))
			qps[n++] = p->qps;
		if (!isnan(p->burstiness))
			burst[n_burst++] = p->burstiness;
	}
	n = uniq(qps, n, sizeof(*qps), cmp_double);
	n_burst = uniq(burst, n_burst, sizeof(*burst), cmp_double);
	if (!n)
		goto done;
	pg_buf_puts(out, "- **Average QPS (query per second)**: ");
	for (size_t i = 0; i < n && i < LIST_MAX; i++) {
		join_begin(out, i, n);
		pg_buf_puts(out, pg_fmt_g(num, qps[i]));
		if (isinf(qps[i]))
			infinite = 1;
		else
			finite = 1;
	}
	join_end(out, n);
	infinite |= n > LIST_MAX && isinf(qps[n - 1]);
	pg_buf_putc(out, '.');
	if (infinite)
		pg_buf_puts(out, " QPS = inf means all requests come at once.");
	if (finite) {
		pg_buf_puts(out, infinite ? " For other QPS values, the" : " The");
		/* vLLM's default, burstiness 1, is a Poisson process; say so only
		 * when no result records another shape */
		if (n_burst == 0 || (n_burst == 1 && burst[0] == 1.0)) {
			pg_buf_puts(out, " arrival time of each query is determined using a random "
					 "Poisson process (with fixed random seed).");
		} else {
			pg_buf_puts(
				out,
				" arrival time of each query is determined using a random gamma "
				"process with burstiness ");
			for (size_t i = 0; i < n_burst && i < LIST_MAX; i++) {
				join_begin(out, i, n_burst);
				pg_buf_puts(out, pg_fmt_g(num, burst[i]));
			}
			join_end(out, n_burst);
			pg_buf_puts(out, " (1 = Poisson; with fixed random seed).");
		}
	}
	pg_buf_putc(out, '\n');
done:
	free(qps);
	free(burst);
}

/* "- <prefix><the distinct values of field><suffix>", or nothing */
static void bullet_distinct(struct pg_buf *out, const struct pg_report_table *t,
			    enum str_field field, const char *prefix, const char *suffix)
{
	struct str_at *v;
	size_t n = distinct_strs(t, field, &v);

	if (n) {
		pg_buf_puts(out, prefix);
		put_strs(out, v, n);
		pg_buf_puts(out, suffix);
	}
	free(v);
}

static void bullet_concurrency(struct pg_buf *out, const struct pg_report_table *t)
{
	long *v;
	size_t n = distinct_longs(t, F_CONCURRENCY, &v);
	size_t start = n && v[0] == 0 ? 1 : 0; /* 0 = unbounded */

	if (n > start) {
		pg_buf_puts(out, "- Maximum concurrency: ");
		put_longs(out, v + start, n - start);
		if (start)
			pg_buf_puts(out, " (some points unbounded)");
		pg_buf_puts(out, ".\n");
	}
	free(v);
}

static void bullet_models(struct pg_buf *out, const struct pg_report_table *t)
{
	bullet_distinct(out, t, S_MODEL, "- Models: ", ".\n");
	/* a disaggregated deployment's shape (docs/deployments.md) */
	bullet_distinct(out, t, S_DEPLOYMENT, "- Deployments (role=replicas x TP): ", ".\n");
}

static const char *family_meaning(const char *family, size_t len)
{
	/* clang-format off */
	static const struct { const char *family, *meaning; } families[] = {
		{ "TTFT", "time to the first token" },
		{ "TPOT", "time per output token" },
		{ "ITL", "inter-token latency" },
		{ "E2EL", "end-to-end latency" },
	};
	/* clang-format on */
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		if (strlen(families[i].family) == len && !strncmp(families[i].family, family, len))
			return families[i].meaning;
	return NULL;
}

/* "Mean TTFT (ms)" -> stat "mean", family "TTFT"; "Mean latency (ms)" ->
 * stat "mean", family "latency"; "Cert. P99 TTFT (ms)" -> stat "certified
 * p99", family "TTFT". 0 when the header is not "<Stat> <X> (..)". */
static int split_header(const char *h, char *stat, size_t stat_size, const char **family,
			size_t *family_len)
{
	static const char cert[] = "Cert. ";
	const char *sp, *sp2;
	size_t i = 0;

	if (!strncmp(h, cert, sizeof(cert) - 1)) {
		h += sizeof(cert) - 1;
		i = (size_t)snprintf(stat, stat_size, "certified ");
	}
	sp = strchr(h, ' ');
	if (!sp || sp == h)
		return 0;
	sp2 = strchr(sp + 1, ' ');
	if (!sp2)
		return 0;
	for (const char *c = h; c < sp && i + 1 < stat_size; c++)
		stat[i++] = (char)tolower((unsigned char)*c);
	stat[i] = '\0';
	*family = sp + 1;
	*family_len = (size_t)(sp2 - sp - 1);
	return 1;
}

struct stat_col {
	char stat[24];      /* "mean", "median", "p99", "certified p99" */
	const char *family; /* "TTFT (ms)", "latency (ms)": compare family_len bytes */
	size_t family_len;
};

static int same_family(const struct stat_col *a, const struct stat_col *b)
{
	return a->family_len == b->family_len && !strncmp(a->family, b->family, a->family_len);
}

/* "Evaluation metrics: throughput, TTFT (time to the first token, with
 * mean, median and p99), ..." from the columns the table shows. */
static void bullet_metrics(struct pg_buf *out, const struct pg_report_table *t)
{
	struct stat_col cols[PG_REPORT_MAX_COLUMNS];
	const struct pg_metric *other[PG_REPORT_MAX_COLUMNS];
	size_t n = 0, n_other = 0, items = 0;
	int throughput = t->kind == PG_SUITE_THROUGHPUT;

	for (size_t c = 0; c < t->n_metrics; c++) {
		struct stat_col *sc = &cols[n];

		if (!t->shown[c] || t->metrics[c]->cls == PG_CLASS_COUNT)
			continue;
		if (t->metrics[c]->cls == PG_CLASS_THROUGHPUT)
			throughput = 1;
		/* a column that is no statistic of a latency (energy per
		 * token): by its name */
		else if (strcmp(t->metrics[c]->unit, "ms") && strcmp(t->metrics[c]->unit, "s"))
			other[n_other++] = t->metrics[c];
		else if (split_header(t->metrics[c]->header, sc->stat, sizeof(sc->stat),
				      &sc->family, &sc->family_len))
			n++;
	}
	pg_buf_puts(out, "- Evaluation metrics: ");
	if (throughput) {
		pg_buf_puts(out, "throughput");
		items++;
	}
	for (size_t i = 0; i < n; i++) {
		const char *meaning = family_meaning(cols[i].family, cols[i].family_len);
		size_t n_stats = 0, k = 0, j;

		for (j = 0; j < i && !same_family(&cols[j], &cols[i]); j++)
			;
		if (j < i)
			continue; /* listed with its family already */
		for (j = i; j < n; j++)
			n_stats += same_family(&cols[j], &cols[i]);
		pg_buf_puts(out, items++ ? ", " : "");
		if (t->kind == PG_SUITE_LATENCY)
			pg_buf_puts(out, "end-to-end latency (");
		else if (meaning)
			pg_buf_printf(out, "%.*s (%s, with ", (int)cols[i].family_len,
				      cols[i].family, meaning);
		else
			pg_buf_printf(out, "%.*s (with ", (int)cols[i].family_len, cols[i].family);
		for (j = i; j < n; j++) {
			if (!same_family(&cols[j], &cols[i]))
				continue;
			/* vLLM writes "(mean, median, p99)" for latency and
			 * "with mean, median and p99" for the serving families */
			int last = k + 1 == n_stats;

			if (k)
				pg_buf_puts(out,
					    last && t->kind != PG_SUITE_LATENCY ? " and " : ", ");
			pg_buf_puts(out, cols[j].stat);
			k++;
		}
		pg_buf_putc(out, ')');
	}
	for (size_t i = 0; i < n_other; i++)
		pg_buf_printf(out, "%s%s", items++ ? ", " : "", other[i]->label);
	if (!items)
		pg_buf_puts(out, "none (no values in these results)");
	pg_buf_puts(out, ".\n");
}

static void bullet_not_ok(struct pg_buf *out, const struct pg_report_table *t, unsigned flags)
{
	static const char *const statuses[] = { "error", "skipped", "cancelled" };
	size_t counted = 0;
	int first = 1;

	if (!t->not_ok)
		return;
	pg_buf_printf(out, "- **Not completed**: %zu of %zu point%s (", t->not_ok, t->n,
		      t->n == 1 ? "" : "s");
	for (size_t s = 0; s < sizeof(statuses) / sizeof(statuses[0]); s++) {
		size_t n = 0;
		for (size_t i = 0; i < t->n; i++)
			if (!strcmp(t->rows[i].status, statuses[s]))
				n++;
		if (n) {
			pg_buf_printf(out, "%s%zu %s", first ? "" : ", ", n, statuses[s]);
			first = 0;
			counted += n;
		}
	}
	if (counted < t->not_ok)
		pg_buf_printf(out, "%s%zu other", first ? "" : ", ", t->not_ok - counted);
	pg_buf_puts(out, ").");
	if (flags & PG_REPORT_TABLES)
		pg_buf_puts(out, " Their rows are marked in the table below.");
	pg_buf_putc(out, '\n');
}

/* The points whose numbers the client or the host affected beyond their
 * bounds (results/clientcheck.h): how many, then each one's reason on a
 * line of its own, as the run's log says it. */
static void bullet_client_flag(struct pg_buf *out, const struct pg_report_table *t,
			       enum pg_clientcheck_flag flag)
{
	size_t n = 0, ok = 0, shown = 0;

	for (size_t i = 0; i < t->n; i++) {
		ok += t->rows[i].ok;
		n += t->rows[i].ok && pg_clientcheck_flagged(t->rows[i].res->json, flag);
	}
	if (!n)
		return;
	if (flag == PG_CLIENTCHECK_HOST_LATE)
		pg_buf_printf(out,
			      "- **Host-late**: %zu of %zu point%s, measured under a load the host "
			      "kept off its schedule:\n",
			      n, ok, ok == 1 ? "" : "s");
	else
		pg_buf_printf(out,
			      "- **Client-bound**: %zu of %zu point%s, whose numbers describe the "
			      "client, not the server:\n",
			      n, ok, ok == 1 ? "" : "s");
	for (size_t i = 0; i < t->n && shown < LIST_MAX; i++) {
		struct pg_buf why = PG_BUF_INIT;

		if (!t->rows[i].ok || !pg_clientcheck_flagged(t->rows[i].res->json, flag))
			continue;
		shown++;
		pg_clientcheck_explain(&why, t->kind, t->rows[i].res->json, flag);
		pg_buf_puts(out, "  - ");
		pg_escape_md_text(out, t->rows[i].name);
		pg_buf_puts(out, ": ");
		pg_escape_md_text(out, why.ptr);
		pg_buf_puts(out, ".\n");
		pg_buf_release(&why);
	}
	if (n > shown)
		pg_buf_printf(out, "  - and %zu more.\n", n - shown);
}

/* The error the client's read delay implies for the suite's timings
 * (timestamp_error_bound_ms), over the points: how far the numbers can be
 * trusted, flagged or not. */
static void bullet_timing_error(struct pg_buf *out, const struct pg_report_table *t)
{
	double lo = INFINITY, hi = -INFINITY;
	char a[PG_FMT_DOUBLE_SIZE], b[PG_FMT_DOUBLE_SIZE];

	for (size_t i = 0; i < t->n; i++) {
		double v = t->rows[i].ok ? pg_clientcheck_timestamp_bound_ms(t->rows[i].res->json)
					 : NAN;
		if (isnan(v))
			continue;
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	if (isinf(lo) || !pg_clientcheck_timed(t->kind))
		return;
	pg_buf_printf(out, "- Timing error: %s within ", pg_clientcheck_timed(t->kind));
	if (lo < hi)
		pg_buf_printf(out, "%s to ", pg_fmt_g(a, lo));
	pg_buf_printf(out, "%s ms (the client's read delay p99%s).\n", pg_fmt_g(b, hi),
		      lo < hi ? " of each point" : "");
}

/* The certified tails (results/tails.h) the table shows, or why its
 * columns are empty: they exist only from the samples MLPerf's rule needs. */
static void bullet_certified(struct pg_buf *out, const struct pg_report_table *t)
{
	const char *family = t->kind == PG_SUITE_LATENCY   ? "latency"
			     : t->kind == PG_SUITE_SERVING ? "ttft"
							   : NULL;
	size_t with = 0, enough = 0;

	for (size_t i = 0; family && i < t->n; i++) {
		json_t *cert = pg_json_path(t->rows[i].res->json, "perfgate.certified");
		json_t *m = json_is_object(cert) ? json_object_get(cert, family) : NULL;

		if (!t->rows[i].ok || !json_is_object(m))
			continue;
		with++;
		enough += json_is_number(json_object_get(m, "p99"));
	}
	if (!with)
		return;
	pg_buf_printf(out,
		      "- Certified P99: MLPerf's early-stopping estimate at 99%% confidence, an "
		      "upper bound on the true P99 (the t-th largest sample, t as large as the "
		      "sample size allows); it takes at least %ld samples, and ",
		      pg_tails_min_n(0.99, PG_TAILS_CONFIDENCE));
	if (enough == with)
		pg_buf_puts(out, "every point had enough samples.\n");
	else if (!enough)
		pg_buf_printf(out, "no point had enough samples (%s), so there is none.\n",
			      t->kind == PG_SUITE_LATENCY ? "iterations" : "requests");
	else
		pg_buf_printf(out, "%zu of %zu points had enough samples.\n", enough, with);
}

/* "TTFT ≤ 500 ms, ITL ≤ 50 ms (p99 of each request's gaps)" from a
 * result's perfgate.params.slo; empty when it has none. */
static void slo_text(struct pg_buf *out, const json_t *slo)
{
	static const char *const keys[] = { "ttft_ms", "tpot_ms", "itl_ms", "e2el_ms" };
	static const char *const names[] = { "TTFT", "TPOT", "ITL", "E2EL" };
	char g[PG_FMT_DOUBLE_SIZE];

	for (size_t k = 0; k < 4; k++) {
		json_t *v = json_object_get(slo, keys[k]), *pct;
		if (!json_is_number(v))
			continue;
		pg_buf_printf(out, "%s%s ≤ %s ms", out->len ? ", " : "", names[k],
			      pg_fmt_g(g, json_number_value(v)));
		pct = json_object_get(slo, "itl_percentile");
		if (k == 2 && json_is_number(pct) && json_number_value(pct) < 100)
			pg_buf_printf(out, " (p%s of each request's gaps)",
				      pg_fmt_g(g, json_number_value(pct)));
	}
}

/* The SLOs behind the SLO attainment and token goodput columns. */
static void bullet_slo(struct pg_buf *out, const struct pg_report_table *t)
{
	struct pg_buf first = PG_BUF_INIT, cur = PG_BUF_INIT;
	bool any = false, same = true;

	for (size_t i = 0; i < t->n; i++) {
		const json_t *slo = pg_json_path(t->rows[i].res->json, "perfgate.params.slo");
		if (!t->rows[i].ok || !json_is_object(slo))
			continue;
		pg_buf_reset(&cur);
		slo_text(&cur, slo);
		if (!any)
			slo_text(&first, slo);
		else if (strcmp(first.ptr ? first.ptr : "", cur.ptr ? cur.ptr : ""))
			same = false;
		any = true;
	}
	if (any) {
		pg_buf_puts(out, "- SLOs, per request and inclusive: ");
		if (same)
			pg_escape_md_text(out, first.ptr ? first.ptr : "");
		else
			pg_buf_puts(out,
				    "they differ by test (each result's `perfgate.params.slo`)");
		pg_buf_puts(out, ". SLO attainment is the share of the requests sent (failed ones "
				 "included) that met all of them; token goodput, their output "
				 "tokens per second.\n");
	}
	pg_buf_release(&first);
	pg_buf_release(&cur);
}

/* The points where requests failed: real numbers of a run that went
 * wrong, marked, and never recorded as baselines. */
static void bullet_incomplete(struct pg_buf *out, const struct pg_report_table *t, unsigned flags)
{
	size_t n = 0, ok = 0, i, k = 0;

	for (i = 0; i < t->n; i++) {
		ok += t->rows[i].ok;
		n += t->rows[i].incomplete != NULL;
	}
	if (!n)
		return;
	pg_buf_printf(out, "- **Incomplete**: %zu of %zu point%s (", n, ok, ok == 1 ? "" : "s");
	for (i = 0; i < t->n && k < LIST_MAX; i++) {
		if (!t->rows[i].incomplete)
			continue;
		join_begin(out, k++, n);
		pg_escape_md_text(out, t->rows[i].name);
	}
	join_end(out, n);
	pg_buf_puts(out, "): requests or iterations failed, so these numbers do not describe a "
			 "whole run and are never recorded as baselines.");
	if (flags & PG_REPORT_TABLES)
		pg_buf_puts(out, " Their rows are marked in the table below.");
	pg_buf_putc(out, '\n');
}

/* The points whose cold first run (results/cold.h) their values leave out. */
static void bullet_cold(struct pg_buf *out, const struct pg_report_table *t)
{
	size_t n = 0, ok = 0, i, k = 0;

	for (i = 0; i < t->n; i++) {
		ok += t->rows[i].ok;
		n += t->rows[i].ok && pg_cold_result_note(t->rows[i].res->json);
	}
	if (!n)
		return;
	pg_buf_printf(out, "- **Cold first runs**: %zu of %zu point%s (", n, ok,
		      ok == 1 ? "" : "s");
	for (i = 0; i < t->n && k < LIST_MAX; i++) {
		const char *note = t->rows[i].ok ? pg_cold_result_note(t->rows[i].res->json) : NULL;
		if (!note)
			continue;
		join_begin(out, k++, n);
		pg_escape_md_text(out, t->rows[i].name);
		pg_buf_puts(out, ": ");
		pg_escape_md_text(out, note);
	}
	join_end(out, n);
	pg_buf_puts(out, "): the first run was worse than the others beyond their noise, as "
			 "a server's first use can be; each value is the median of the other "
			 "runs, and the gate and the history leave that run out too.\n");
}

/* A span's name; "?" for a result written by hand without one (import
 * refuses such a file, a results directory is read as it is). */
static const char *phase_name(const json_t *span)
{
	const char *name = json_string_value(json_object_get(span, "name"));
	return name ? name : "?";
}

/* vllm bench startup's cold-start spans, one line per point that has
 * them: "- Cold-start phases, startup_x: Worker init 1.20 s, Loading (GPU)
 * 12.04 s, ... (22.95 s of 31.20 s wall clock; no span: Capture model)." */
static void bullet_startup_phases(struct pg_buf *out, const struct pg_report_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		const json_t *res = t->rows[i].res->json;
		const json_t *phases = json_object_get(res, "phases"), *p;
		const json_t *total = json_object_get(res, "total_phase_time_s");
		const json_t *wall = json_object_get(res, "wall_clock_startup_s");
		size_t k, shown = 0, missing = 0;

		if (!t->rows[i].ok || !json_array_size(phases))
			continue;
		pg_buf_printf(out, "- Cold-start phases, %s: ", t->rows[i].name);
		json_array_foreach(phases, k, p)
		{
			if (json_is_true(json_object_get(p, "missing")))
				continue;
			pg_buf_printf(out, "%s%s %.2f s", shown++ ? ", " : "", phase_name(p),
				      json_number_value(json_object_get(p, "duration_s")));
		}
		size_t mark = out->len;
		pg_buf_puts(out, " (");
		if (json_is_number(total))
			pg_buf_printf(out, "%.2f s", json_number_value(total));
		if (json_is_number(total) && json_is_number(wall))
			pg_buf_printf(out, " of %.2f s wall clock", json_number_value(wall));
		else if (json_is_number(wall))
			pg_buf_printf(out, "%.2f s wall clock", json_number_value(wall));
		json_array_foreach(phases, k, p)
		{
			if (json_is_true(json_object_get(p, "missing")))
				pg_buf_printf(out, "%s%s",
					      missing++             ? ", "
					      : out->len > mark + 2 ? "; no span: "
								    : "no span: ",
					      phase_name(p));
		}
		if (out->len == mark + 2)
			pg_buf_truncate(out, mark);
		else
			pg_buf_putc(out, ')');
		pg_buf_puts(out, ".\n");
	}
}

/* What a startup table measured: the starts of its first point that ran
 * (runner/startup_io.h; an imported vllm bench startup file has no
 * first-token times). */
static void bullets_startup(struct pg_buf *out, const struct pg_report_table *t)
{
	const json_t *res = NULL;

	for (size_t i = 0; i < t->n && !res; i++)
		if (t->rows[i].ok)
			res = t->rows[i].res->json;
	pg_buf_puts(out, "- Starts: fresh server processes, timed from spawn to ready (the "
			 "ready path answers 200)");
	if (res && json_object_get(res, "cold_first_token_times"))
		pg_buf_puts(out, " and to the answer of one max_tokens 1 request");
	pg_buf_puts(out, ".\n");
	if (res) {
		pg_buf_printf(
			out,
			"- %zu cold start%s (empty cache directories each) and %zu warm "
			"start%s (caches the earlier starts filled).\n",
			json_array_size(json_object_get(res, "cold_startup_times")),
			json_array_size(json_object_get(res, "cold_startup_times")) == 1 ? "" : "s",
			json_array_size(json_object_get(res, "warm_startup_times")),
			json_array_size(json_object_get(res, "warm_startup_times")) == 1 ? ""
											 : "s");
	}
	bullet_models(out, t);
	bullet_not_ok(out, t, 0);
	bullet_startup_phases(out, t);
	pg_buf_puts(out, "- Evaluation metrics: mean and p90 startup time, cold and warm, in "
			 "seconds (lower is better).\n");
}

static void bullets(struct pg_buf *out, const struct pg_report_table *t, unsigned flags)
{
	long *batch;
	size_t n_batch;

	if (t->kind == PG_SUITE_STARTUP) {
		bullets_startup(out, t);
		return;
	}
	switch (t->kind) {
	case PG_SUITE_LATENCY:
		bullets_workload(out, t);
		n_batch = distinct_longs(t, F_BATCH, &batch);
		if (n_batch) {
			pg_buf_puts(out, "- Batch size: fixed (");
			put_longs(out, batch, n_batch);
			pg_buf_puts(out, ").\n");
		}
		free(batch);
		bullet_models(out, t);
		break;
	case PG_SUITE_THROUGHPUT:
		bullets_workload(out, t);
		pg_buf_puts(out, "- Batch size: dynamically determined by ");
		put_engine(out, t);
		pg_buf_puts(out, " to achieve maximum throughput.\n");
		bullet_models(out, t);
		break;
	default:
		bullets_workload(out, t);
		pg_buf_puts(out, "- Batch size: dynamically determined by ");
		put_engine(out, t);
		pg_buf_puts(out, " and the arrival pattern of the requests.\n");
		bullet_qps(out, t);
		/* vLLM names ramped points qps inf: say what the rate really did */
		bullet_distinct(out, t, S_RAMP_UP, "- **Ramp-up**: ",
				" (the request rate rises over each run's requests; these points "
				"are named QPS inf, as vLLM names them).\n");
		bullet_concurrency(out, t);
		bullet_models(out, t);
		break;
	}
	bullet_not_ok(out, t, flags);
	bullet_incomplete(out, t, flags);
	bullet_cold(out, t);
	bullet_client_flag(out, t, PG_CLIENTCHECK_CLIENT_BOUND);
	bullet_client_flag(out, t, PG_CLIENTCHECK_HOST_LATE);
	bullet_timing_error(out, t);
	bullet_metrics(out, t);
	bullet_certified(out, t);
	if (t->kind == PG_SUITE_SERVING)
		bullet_slo(out, t);
}

/* ---- tables ---- */

struct cell {
	size_t off, len; /* into the arena */
	size_t width;    /* code points */
	int dec;         /* tabulate's _afterpoint: characters after '.' (or 'e'), -1 */
};

struct column {
	const char *header;
	int numeric;
	size_t metric;
	size_t width;
	int maxdec;
};

static int afterpoint(const char *s, size_t len)
{
	for (size_t i = len; i-- > 0;)
		if (s[i] == '.')
			return (int)(len - i - 1);
	for (size_t i = len; i-- > 0;)
		if (s[i] == 'e' || s[i] == 'E')
			return (int)(len - i - 1);
	return -1;
}

static void format_number(struct pg_buf *arena, const struct pg_report_row *row, size_t c)
{
	char num[PG_FMT_DOUBLE_SIZE];

	if (!(row->flags[c] & PG_CELL_PRESENT))
		return;
	if (row->flags[c] & PG_CELL_INT)
		pg_buf_printf(arena, "%.0f", row->vals[c]);
	else
		pg_buf_puts(arena, pg_fmt_g(num, row->vals[c]));
}

static void name_cell(struct pg_buf *arena, const struct pg_report_row *row)
{
	pg_escape_md_cell(arena, row->name);
	if (row->ok && row->incomplete) {
		pg_buf_puts(arena, " — **incomplete**: ");
		pg_escape_md_cell_cut(arena, row->incomplete, 80);
	}
	if (row->ok)
		return;
	pg_buf_puts(arena, " — **");
	pg_escape_md_cell(arena, row->status);
	pg_buf_puts(arena, "**");
	if (row->error && *row->error) {
		pg_buf_puts(arena, ": ");
		pg_escape_md_cell_cut(arena, row->error, 80);
	}
}

static void trim_cell(struct pg_buf *arena, struct cell *cell)
{
	/* tabulate strips text cells */
	const char *s = arena->ptr + cell->off;
	size_t a = 0, b = cell->len;

	while (a < b && s[a] == ' ')
		a++;
	while (b > a && s[b - 1] == ' ')
		b--;
	cell->off += a;
	cell->len = b - a;
}

static void table(struct pg_buf *out, const struct pg_report_table *t)
{
	struct column cols[PG_REPORT_MAX_COLUMNS + 2];
	size_t n_cols = 0;
	struct pg_buf arena = PG_BUF_INIT;
	struct cell *cells;

	if (!t->n)
		return;
	cols[n_cols++] = (struct column){ "Test name", 0, 0, 0, -1 };
	cols[n_cols++] = (struct column){ "GPU", 0, 0, 0, -1 };
	for (size_t c = 0; c < t->n_metrics; c++)
		if (t->shown[c])
			cols[n_cols++] = (struct column){ t->metrics[c]->header, 1, c, 0, -1 };

	cells = pg_xmalloc(t->n * n_cols * sizeof(*cells));
	for (size_t i = 0; i < t->n; i++) {
		const struct pg_report_row *row = &t->rows[i];

		for (size_t c = 0; c < n_cols; c++) {
			struct cell *cell = &cells[i * n_cols + c];

			cell->off = arena.len;
			if (c == 0)
				name_cell(&arena, row);
			else if (c == 1)
				pg_escape_md_cell(&arena, row->gpu);
			else
				format_number(&arena, row, cols[c].metric);
			cell->len = arena.len - cell->off;
			if (!cols[c].numeric)
				trim_cell(&arena, cell);
			cell->dec = cols[c].numeric ? afterpoint(arena.ptr + cell->off, cell->len)
						    : -1;
			if (cell->dec > cols[c].maxdec)
				cols[c].maxdec = cell->dec;
		}
	}
	for (size_t c = 0; c < n_cols; c++) {
		cols[c].width = pg_utf8_width(cols[c].header, strlen(cols[c].header)) + 2;
		for (size_t i = 0; i < t->n; i++) {
			struct cell *cell = &cells[i * n_cols + c];
			size_t w = pg_utf8_width(arena.ptr + cell->off, cell->len);

			if (cols[c].numeric)
				w += (size_t)(cols[c].maxdec - cell->dec);
			cell->width = w;
			if (w > cols[c].width)
				cols[c].width = w;
		}
	}

	/* header, separator, rows */
	for (size_t c = 0; c < n_cols; c++) {
		size_t pad = cols[c].width - pg_utf8_width(cols[c].header, strlen(cols[c].header));

		pg_buf_puts(out, c ? " " : "| ");
		if (cols[c].numeric)
			pg_buf_pad(out, ' ', pad);
		pg_buf_puts(out, cols[c].header);
		if (!cols[c].numeric)
			pg_buf_pad(out, ' ', pad);
		pg_buf_puts(out, " |");
	}
	pg_buf_putc(out, '\n');
	for (size_t c = 0; c < n_cols; c++) {
		pg_buf_puts(out, c ? "" : "|");
		if (!cols[c].numeric)
			pg_buf_putc(out, ':');
		pg_buf_pad(out, '-', cols[c].width + 1);
		if (cols[c].numeric)
			pg_buf_putc(out, ':');
		pg_buf_putc(out, '|');
	}
	pg_buf_putc(out, '\n');
	for (size_t i = 0; i < t->n; i++) {
		for (size_t c = 0; c < n_cols; c++) {
			const struct cell *cell = &cells[i * n_cols + c];

			pg_buf_puts(out, c ? " " : "| ");
			if (cols[c].numeric) {
				pg_buf_pad(out, ' ', cols[c].width - cell->width);
				pg_buf_add(out, arena.ptr + cell->off, cell->len);
				pg_buf_pad(out, ' ', (size_t)(cols[c].maxdec - cell->dec));
			} else {
				pg_buf_add(out, arena.ptr + cell->off, cell->len);
				pg_buf_pad(out, ' ', cols[c].width - cell->width);
			}
			pg_buf_puts(out, " |");
		}
		pg_buf_putc(out, '\n');
	}
	free(cells);
	pg_buf_release(&arena);
}

/* ---- the document ---- */

static const char *const section_titles[PG_SUITE_COUNT] = {
	"Latency tests",
	"Throughput tests",
	"Serving tests",
	"Startup tests",
};

static void json_section(struct pg_buf *out, const struct pg_report *r)
{
	pg_buf_puts(
		out,
		"## json version of the benchmarking tables\n"
		"\n"
		"This section contains the data of the markdown tables above in JSON format.\n"
		"You can load the benchmarking tables into pandas dataframes as follows:\n"
		"\n"
		"```python\n"
		"import json\n"
		"import pandas as pd\n"
		"\n"
		"benchmarking_results_json = \"\"\"The json string\"\"\"\n"
		"benchmarking_results = json.loads(benchmarking_results_json)\n"
		"latency_results = pd.DataFrame.from_dict(benchmarking_results[\"latency\"])\n"
		"throughput_results = pd.DataFrame.from_dict(benchmarking_results[\"throughput\"])\n"
		"serving_results = pd.DataFrame.from_dict(benchmarking_results[\"serving\"])\n"
		"```\n"
		"\n"
		"The json string for all benchmarking tables:\n"
		"\n"
		"```json\n");
	pg_report_json_tables(out, r);
	pg_buf_puts(out, "\n"
			 "```\n"
			 "\n"
			 "You can also check the raw experiment data in the Artifact tab of the "
			 "Buildkite page.\n");
}

/* ---- sessions (multi_turn points, loadgen/sessions.h) ---- */

static void ms_cell(struct pg_buf *out, const json_t *v)
{
	if (json_is_number(v))
		pg_buf_printf(out, "%.2f", json_number_value(v));
	else
		pg_buf_puts(out, "-");
}

static void rate_cell(struct pg_buf *out, const json_t *v)
{
	if (json_is_number(v))
		pg_buf_printf(out, "%.1f%%", json_number_value(v) * 100);
	else
		pg_buf_puts(out, "-");
}

/*
 * The serving points that ran multi-turn sessions: TTFT by turn (whether
 * the prefix cache serves the history), the hit rate from the responses'
 * usage and from the server's counters, and the turns that could not be
 * sent on time because the answer before them had not ended.
 */
static void sessions_table(struct pg_buf *out, const struct pg_report_table *t)
{
	size_t shown = 0;

	for (size_t i = 0; i < t->n; i++) {
		const json_t *j = t->rows[i].res->json;
		const json_t *by_turn = json_object_get(j, "mean_ttft_ms_by_turn");
		size_t k;
		const json_t *v;

		if (!t->rows[i].ok || !json_is_integer(json_object_get(j, "num_rounds")))
			continue;
		if (!shown++)
			pg_buf_puts(
				out,
				"Multi-turn sessions: mean TTFT of each turn (turn 1 holds only the "
				"shared system prompt in common with other requests; later turns "
				"resend the whole conversation, which a prefix cache serves), the "
				"prefix-cache hit rate from the responses' usage.cached_tokens and "
				"from the server's counters over the point, and the turns that were "
				"due before the user's previous answer had ended (backpressure).\n\n"
				"| Test name | Users x rounds | TTFT turn 1 (ms) | TTFT later turns "
				"(ms) | Mean TTFT by turn (ms) | Hit rate (usage) | Hit rate "
				"(server) | Backpressure |\n"
				"|:--|--:|--:|--:|:--|--:|--:|--:|\n");
		pg_buf_puts(out, "| ");
		pg_escape_md_text(out, t->rows[i].name);
		pg_buf_printf(out, " | %lld x %lld | ",
			      (long long)json_integer_value(json_object_get(j, "num_users")),
			      (long long)json_integer_value(json_object_get(j, "num_rounds")));
		ms_cell(out, json_object_get(j, "mean_ttft_ms_first_turn"));
		pg_buf_puts(out, " | ");
		ms_cell(out, json_object_get(j, "mean_ttft_ms_later_turns"));
		pg_buf_puts(out, " | ");
		json_array_foreach(by_turn, k, v)
		{
			if (k)
				pg_buf_puts(out, ", ");
			ms_cell(out, v);
		}
		pg_buf_puts(out, " | ");
		rate_cell(out, json_object_get(j, "prefix_cache_hit_rate"));
		pg_buf_puts(out, " | ");
		rate_cell(out, json_object_get(j, "server_prefix_cache_hit_rate"));
		pg_buf_printf(
			out, " | %lld |\n",
			(long long)json_integer_value(json_object_get(j, "backpressure_turns")));
	}
	if (shown)
		pg_buf_putc(out, '\n');
}

void pg_report_markdown(struct pg_buf *out, const struct pg_report *r, unsigned flags)
{
	if (flags & (PG_REPORT_DESCRIPTIONS | PG_REPORT_TABLES)) {
		for (int k = 0; k < PG_SUITE_COUNT; k++) {
			const struct pg_report_table *t = &r->tables[k];

			/* vLLM's report has three sections; startup shows when it ran */
			if (k == PG_SUITE_STARTUP && !t->n)
				continue;
			pg_buf_printf(out, "## %s\n\n", section_titles[k]);
			if (!t->n) {
				pg_buf_printf(out, "No %s results.\n\n",
					      pg_suite_kind_name(t->kind));
				continue;
			}
			if (flags & PG_REPORT_DESCRIPTIONS) {
				bullets(out, t, flags);
				pg_buf_putc(out, '\n');
			}
			if (flags & PG_REPORT_TABLES) {
				table(out, t);
				pg_buf_putc(out, '\n');
				if (t->kind == PG_SUITE_SERVING)
					sessions_table(out, t);
			}
		}
	}
	if (flags & PG_REPORT_JSON)
		json_section(out, r);
}
