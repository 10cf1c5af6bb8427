#include "runner/runfmt.h"

#include "base/buf.h"
#include "results/metrics.h"
#include "base/strutil.h"
#include "base/jsonw.h"

#include <math.h>
#include <string.h>
#include <time.h>

void pg_runfmt_point_label(struct pg_buf *out, const struct pg_point *pt)
{
	char num[PG_FMT_DOUBLE_SIZE];

	pg_buf_puts(out, pt->test->name);
	if (pt->test->kind != PG_SUITE_SERVING)
		return;
	pg_buf_printf(out, " qps %s", pg_fmt_g(num, pt->qps));
	if (pt->test->concurrency_in_name) {
		if (pt->max_concurrency > 0)
			pg_buf_printf(out, " concurrency %ld", pt->max_concurrency);
		else
			pg_buf_puts(out, " concurrency inf");
	}
}

void pg_runfmt_point_group(struct pg_buf *out, const struct pg_point *pt, size_t index, size_t n)
{
	pg_buf_puts(out, "--- ");
	pg_runfmt_point_label(out, pt);
	pg_buf_printf(out, " (%zu/%zu)\n", index + 1, n);
}

void pg_runfmt_plain(struct pg_buf *out, const char *text)
{
	const char *p = text;

	while (*p) {
		size_t len = strcspn(p, "\n");
		size_t eol = p[len] == '\n' ? 1 : 0;

		if (len == 7 && !strncmp(p, "^^^ +++", 7)) {
			p += len + eol;
			continue;
		}
		if (len >= 4 &&
		    (!strncmp(p, "--- ", 4) || !strncmp(p, "+++ ", 4) || !strncmp(p, "~~~ ", 4)))
			pg_buf_add(out, p + 4, len - 4 + eol);
		else
			pg_buf_add(out, p, len + eol);
		p += len + eol;
	}
}

void pg_runfmt_duration(struct pg_buf *out, double s)
{
	if (!(s >= 0))
		s = 0;
	if (s < 60) {
		pg_buf_printf(out, "%.1fs", s);
	} else if (s < 3600) {
		long t = (long)(s + 0.5);
		pg_buf_printf(out, "%ldm%02lds", t / 60, t % 60);
	} else {
		long m = (long)(s / 60 + 0.5);
		pg_buf_printf(out, "%ldh%02ldm", m / 60, m % 60);
	}
}

char *pg_runfmt_iso8601(char out[PG_ISO8601_SIZE], int64_t epoch_seconds)
{
	time_t t = (time_t)epoch_seconds;
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(out, PG_ISO8601_SIZE, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(out, PG_ISO8601_SIZE, "1970-01-01T00:00:00Z");
	return out;
}

/* Rates print with three significant digits at most once they are large
 * enough that more would be noise in a progress line. */
static void rate(struct pg_buf *out, double v)
{
	if (v >= 100)
		pg_buf_printf(out, "%.0f", v);
	else
		pg_buf_printf(out, "%.3g", v);
}

static void progress_figures(struct pg_buf *out, const struct pg_run_progress *p)
{
	double el = p->elapsed > 0 ? p->elapsed : 0;
	const char *unit = p->unit ? p->unit : "requests";
	bool per_request = !strcmp(unit, "requests");

	if (p->total > 0)
		pg_buf_printf(out, "%ld/%ld %s", p->done, p->total, unit);
	else
		pg_buf_printf(out, "%ld %s", p->done, unit);
	if (el > 0) {
		pg_buf_puts(out, "  ");
		rate(out, (double)p->done / el);
		pg_buf_puts(out, per_request ? " req/s  " : " it/s  ");
		rate(out, p->output_tokens / el);
		pg_buf_puts(out, " tok/s");
	}
	pg_buf_printf(out, "  %ld error%s  ", p->failed, p->failed == 1 ? "" : "s");
	pg_runfmt_duration(out, el);
}

void pg_runfmt_progress_line(struct pg_buf *out, const struct pg_run_progress *p)
{
	pg_buf_puts(out, "  ");
	progress_figures(out, p);
	pg_buf_putc(out, '\n');
}

void pg_runfmt_progress_bar(struct pg_buf *out, const struct pg_run_progress *p, int bar_width)
{
	pg_buf_putc(out, '\r');
	if (p->total > 0 && bar_width > 2) {
		long done = p->done < p->total ? p->done : p->total;
		int fill = (int)((double)done * bar_width / (double)p->total);

		pg_buf_putc(out, '[');
		for (int i = 0; i < bar_width; i++)
			pg_buf_putc(out, i < fill ? '=' : (i == fill ? '>' : ' '));
		pg_buf_puts(out, "] ");
	}
	progress_figures(out, p);
	pg_buf_puts(out, "\x1b[K");
}

/* Append ", <label> <value><unit>" for a numeric key that is present. */
static void metric(struct pg_buf *out, const json_t *result, const char *key, const char *before,
		   const char *after)
{
	json_t *v = pg_json_path(result, key);
	double x;

	if (!json_is_number(v))
		return;
	x = json_number_value(v);
	if (out->len)
		pg_buf_puts(out, ", ");
	/* four significant digits at a glance; the files have them all */
	if (fabs(x) >= 1000)
		pg_buf_printf(out, "%s%.0f%s", before, x, after);
	else
		pg_buf_printf(out, "%s%.4g%s", before, x, after);
}

void pg_runfmt_key_metrics(struct pg_buf *out, enum pg_suite_kind kind, const json_t *result)
{
	struct pg_buf b = PG_BUF_INIT;
	json_t *failed, *hit;

	switch (kind) {
	case PG_SUITE_SERVING:
		metric(&b, result, "request_throughput", "", " req/s");
		metric(&b, result, "output_throughput", "", " tok/s");
		metric(&b, result, "median_ttft_ms", "TTFT p50 ", " ms");
		metric(&b, result, "median_itl_ms", "ITL p50 ", " ms");
		/* sessions (docs/sessions.md): reuse and the turns held back */
		hit = json_object_get(result, "prefix_cache_hit_rate");
		if (json_is_number(hit))
			pg_buf_printf(&b, ", hit rate %.1f%%", json_number_value(hit) * 100);
		if (json_integer_value(json_object_get(result, "backpressure_turns")) > 0)
			pg_buf_printf(&b, ", %lld turns backpressured",
				      (long long)json_integer_value(
					      json_object_get(result, "backpressure_turns")));
		failed = json_object_get(result, "failed");
		if (json_integer_value(failed) > 0)
			pg_buf_printf(&b, ", %lld failed", (long long)json_integer_value(failed));
		break;
	case PG_SUITE_LATENCY:
		metric(&b, result, "avg_latency", "avg ", " s");
		metric(&b, result, "percentiles.99", "p99 ", " s");
		break;
	case PG_SUITE_THROUGHPUT:
		metric(&b, result, "requests_per_second", "", " req/s");
		metric(&b, result, "tokens_per_second", "", " tok/s");
		break;
	case PG_SUITE_STARTUP:
		metric(&b, result, "avg_cold_startup_time", "cold ", " s");
		metric(&b, result, "avg_warm_startup_time", "warm ", " s");
		metric(&b, result, "avg_cold_first_token_time", "cold to first token ", " s");
		break;
	default:
		break;
	}
	/* said where the numbers are read (results/clientcheck.h): they
	 * describe the client, or a load the host kept off its schedule */
	if (json_is_true(json_object_get(result, "client_bound")))
		pg_buf_puts(&b, b.len ? ", client-bound" : "client-bound");
	if (json_is_true(json_object_get(result, "host_late")))
		pg_buf_puts(&b, b.len ? ", host-late" : "host-late");
	pg_buf_add(out, b.ptr, b.len);
	pg_buf_release(&b);
}

static const char *const statuses[] = { "ok", "error", "skipped", "cancelled", "not run" };
#define N_STATUSES (sizeof(statuses) / sizeof(statuses[0]))

#define DETAIL_MAX 90

static void pad_to(struct pg_buf *out, const char *s, size_t col)
{
	size_t w = pg_utf8_width(s, strlen(s));
	pg_buf_puts(out, s);
	pg_buf_pad(out, ' ', col > w ? col - w : 0);
}

void pg_runfmt_summary(struct pg_buf *out, const struct pg_run_row *rows, size_t n, double total)
{
	size_t counts[N_STATUSES] = { 0 }, other = 0;
	size_t w_point = strlen("point"), w_status = strlen("status"), w_time = strlen("time");
	struct pg_buf tmp = PG_BUF_INIT;
	bool first = true;

	for (size_t i = 0; i < n; i++) {
		size_t k = 0;
		while (k < N_STATUSES && strcmp(rows[i].status, statuses[k]))
			k++;
		if (k < N_STATUSES)
			counts[k]++;
		else
			other++;
		if (pg_utf8_width(rows[i].point, strlen(rows[i].point)) > w_point)
			w_point = pg_utf8_width(rows[i].point, strlen(rows[i].point));
		if (strlen(rows[i].status) > w_status)
			w_status = strlen(rows[i].status);
		pg_buf_reset(&tmp);
		pg_runfmt_duration(&tmp, rows[i].seconds);
		if (tmp.len > w_time)
			w_time = tmp.len;
	}

	pg_buf_puts(out, "+++ perfgate run: ");
	if (n == 0)
		pg_buf_puts(out, "nothing to run");
	for (size_t k = 0; k < N_STATUSES; k++) {
		if (!counts[k] && !(k == 0 && n))
			continue;
		pg_buf_printf(out, "%s%zu %s", first ? "" : ", ", counts[k], statuses[k]);
		first = false;
	}
	if (other)
		pg_buf_printf(out, ", %zu other", other);
	pg_buf_puts(out, " (");
	pg_runfmt_duration(out, total);
	pg_buf_puts(out, ")\n");
	if (n == 0)
		goto done;

	pg_buf_puts(out, "  ");
	pad_to(out, "point", w_point + 2);
	pad_to(out, "status", w_status + 2);
	pad_to(out, "time", w_time + 2);
	pg_buf_puts(out, "result\n");
	for (size_t i = 0; i < n; i++) {
		const char *d = rows[i].detail ? rows[i].detail : "";
		size_t len = strcspn(d, "\n"), cut = len;

		pg_buf_puts(out, "  ");
		pad_to(out, rows[i].point, w_point + 2);
		pad_to(out, rows[i].status, w_status + 2);
		pg_buf_reset(&tmp);
		pg_runfmt_duration(&tmp, rows[i].seconds);
		pad_to(out, tmp.ptr, w_time + 2);
		if (pg_utf8_width(d, len) > DETAIL_MAX) {
			/* cut at a character boundary, leaving room for the ellipsis */
			size_t w = 0;
			for (cut = 0; cut < len; cut++) {
				if (((unsigned char)d[cut] & 0xC0) != 0x80 && ++w > DETAIL_MAX - 3)
					break;
			}
		}
		pg_buf_add(out, d, cut);
		if (cut < len || d[len] == '\n')
			pg_buf_puts(out, "...");
		/* no trailing blanks when the detail is empty */
		while (out->len && out->ptr[out->len - 1] == ' ')
			pg_buf_truncate(out, out->len - 1);
		pg_buf_putc(out, '\n');
	}
	/* a flag in the table is explained under it, whole */
	for (size_t i = 0; i < n; i++)
		if (rows[i].note && *rows[i].note)
			pg_buf_printf(out, "  %s: %s\n", rows[i].point, rows[i].note);
done:
	pg_buf_release(&tmp);
}
