#include "results/clientcheck.h"

#include "base/buf.h"

#include <math.h>

double pg_clientcheck_lag_bound_ms(double mean_gap_ms)
{
	double share = PG_LAG_BOUND_GAP_SHARE * mean_gap_ms;

	return isfinite(share) && share > PG_LAG_BOUND_MIN_MS ? share : PG_LAG_BOUND_MIN_MS;
}

bool pg_clientcheck_too_many(size_t late, size_t sent)
{
	return late >= 2 && late * 100 > sent;
}

struct pg_clientcheck_verdict pg_clientcheck_judge(const struct pg_clientcheck_figures *f)
{
	struct pg_clientcheck_verdict v = { 0 };

	/* a 1 ms run is all work: busy says nothing below a second */
	v.busy = f->duration_s >= PG_CLIENT_BUSY_MIN_S && f->busy_fraction > PG_CLIENT_BUSY;
	v.reads_late = f->read_delay_p99_ms > (f->read_delay_bound_ms > 0
						       ? f->read_delay_bound_ms
						       : PG_CLIENT_READ_DELAY_MS);
	v.sends_late = pg_clientcheck_too_many(f->late_client, f->sent);
	v.client_bound = v.busy || v.reads_late || v.sends_late;
	v.host_late = pg_clientcheck_too_many(f->late_host, f->sent);
	return v;
}

/* A key's number, NAN when absent or not a number. */
static double key(const json_t *result, const char *name)
{
	const json_t *v = json_object_get(result, name);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

double pg_clientcheck_read_delay_bound_ms(const json_t *result)
{
	/* vLLM's keys, in seconds: what a latency and a throughput run time */
	double timed_s = key(result, "avg_latency"), share;

	if (isnan(timed_s))
		timed_s = key(result, "elapsed_time");
	share = timed_s * 1000 * PG_CLIENT_READ_DELAY_SHARE;
	return share > PG_CLIENT_READ_DELAY_MS ? share : PG_CLIENT_READ_DELAY_MS;
}

const char *pg_clientcheck_timed(enum pg_suite_kind kind)
{
	switch (kind) {
	case PG_SUITE_SERVING:
		return "TTFT and ITL";
	case PG_SUITE_LATENCY:
		return "latency";
	case PG_SUITE_THROUGHPUT:
		return "elapsed time";
	default:
		return NULL;
	}
}

double pg_clientcheck_timestamp_bound_ms(const json_t *result)
{
	double bound = key(result, "timestamp_error_bound_ms");

	/* (a file from before the key: the read delay is the same bound) */
	if (isnan(bound))
		bound = key(result, "client_read_delay_p99_ms");
	return bound >= 0 ? bound : NAN;
}

/* "4 of 64 requests" (or "4 requests" when the result does not say how
 * many were sent). */
static void put_requests(struct pg_buf *out, double late, const json_t *result)
{
	double of = key(result, "num_prompts");

	pg_buf_printf(out, "%.0f", late);
	if (of >= late)
		pg_buf_printf(out, " of %.0f requests", of);
	else
		pg_buf_puts(out, late == 1 ? " request" : " requests");
}

/* "over 3.12 ms late (lag p99 3.5 ms)" */
static void put_lateness(struct pg_buf *out, const json_t *result)
{
	double bound = key(result, "schedule_lag_bound_ms"),
	       p99 = key(result, "schedule_lag_p99_ms");

	if (!isnan(bound))
		pg_buf_printf(out, " over %.3g ms", bound);
	pg_buf_puts(out, " late");
	if (!isnan(p99))
		pg_buf_printf(out, " (lag p99 %.3g ms)", p99);
}

/* "TTFT and ITL within 0.15 ms (read delay p99)": what the read delay
 * bounds, said of what the suite measures (named unless subject is
 * false). */
static void put_timestamp_bound(struct pg_buf *out, enum pg_suite_kind kind, const json_t *result,
				const char *before, bool subject)
{
	double bound = pg_clientcheck_timestamp_bound_ms(result);

	if (isnan(bound) || !pg_clientcheck_timed(kind))
		return;
	pg_buf_puts(out, before);
	if (subject)
		pg_buf_printf(out, "%s ", pg_clientcheck_timed(kind));
	pg_buf_printf(out, "within %.3g ms (read delay p99)", bound);
}

static void explain_client_bound(struct pg_buf *out, enum pg_suite_kind kind, const json_t *result)
{
	double busy = key(result, "client_busy_fraction");
	double delay = key(result, "client_read_delay_p99_ms");
	double late = key(result, "requests_late_by_client");
	bool saturated = busy > PG_CLIENT_BUSY;
	size_t start = out->len;

	if (saturated)
		pg_buf_printf(out, "its event loop was busy %.0f%% of the run", busy * 100);
	if (delay > pg_clientcheck_read_delay_bound_ms(result)) {
		pg_buf_puts(out, saturated ? " and responses waited to be read"
					   : "responses waited to be read");
		if (!saturated && busy >= 0)
			pg_buf_printf(out, " (its event loop %.0f%% busy)", busy * 100);
	}
	if (late >= 1) {
		pg_buf_puts(out, out->len > start ? ", " : "");
		put_requests(out, late, result);
		pg_buf_puts(out, " sent");
		put_lateness(out, result);
		pg_buf_puts(out, " while it worked");
	}
	/* a repeat's flag, or an older file's: the figures do not show it */
	if (out->len == start)
		pg_buf_puts(out, "the load generator could not keep up");
	put_timestamp_bound(out, kind, result, "; ", true);
}

static void explain_host_late(struct pg_buf *out, enum pg_suite_kind kind, const json_t *result,
			      bool with_bound)
{
	double late = key(result, "requests_late_by_host");

	if (late >= 1) {
		put_requests(out, late, result);
		pg_buf_puts(out, " sent");
		put_lateness(out, result);
		pg_buf_puts(out, " while the client sat idle: ");
	}
	/* (TTFT starts when the request left: a late send does not lengthen it) */
	pg_buf_puts(out, "the host woke the client late, so the load left its schedule; TTFT and "
			 "ITL count from the send");
	if (with_bound)
		put_timestamp_bound(out, kind, result, ", ", false);
}

void pg_clientcheck_explain(struct pg_buf *out, enum pg_suite_kind kind, const json_t *result,
			    enum pg_clientcheck_flag flag)
{
	if (flag == PG_CLIENTCHECK_HOST_LATE)
		explain_host_late(out, kind, result, true);
	else
		explain_client_bound(out, kind, result);
}

bool pg_clientcheck_flagged(const json_t *result, enum pg_clientcheck_flag flag)
{
	return json_is_true(json_object_get(
		result, flag == PG_CLIENTCHECK_HOST_LATE ? "host_late" : "client_bound"));
}

void pg_clientcheck_note(struct pg_buf *out, enum pg_suite_kind kind, const json_t *result)
{
	static const struct {
		enum pg_clientcheck_flag flag;
		const char *word;
	} flags[] = { { PG_CLIENTCHECK_CLIENT_BOUND, "client-bound" },
		      { PG_CLIENTCHECK_HOST_LATE, "host-late" } };
	size_t start = out->len;

	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		if (!pg_clientcheck_flagged(result, flags[i].flag))
			continue;
		pg_buf_printf(out, "%s%s: ", out->len > start ? "; " : "", flags[i].word);
		/* the timestamp bound once: a client-bound before says it */
		if (flags[i].flag == PG_CLIENTCHECK_HOST_LATE)
			explain_host_late(
				out, kind, result,
				!pg_clientcheck_flagged(result, PG_CLIENTCHECK_CLIENT_BOUND));
		else
			explain_client_bound(out, kind, result);
	}
}
