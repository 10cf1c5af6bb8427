#ifndef PERFGATE_TELEMETRY_PROM_H
#define PERFGATE_TELEMETRY_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pg_error;

/*
 * The Prometheus text exposition format (version 0.0.4, what vLLM, SGLang
 * and TGI serve on /metrics), parsed into families and samples. Pure: the
 * input is a (pointer, length) pair that need not be NUL-terminated, so the
 * fuzz harness can call pg_prom_parse on any bytes.
 *
 * What is accepted, as the format's reference describes it:
 *  - lines end in '\n' ("\r\n" too); empty lines and lines whose first
 *    non-blank character is '#' are ignored, except "# HELP name text" and
 *    "# TYPE name type" (counter, gauge, histogram, summary, untyped);
 *  - a sample is `name{label="value",...} value [timestamp]`, tokens
 *    separated by blanks or tabs, a trailing comma allowed in the braces;
 *    names may also be quoted strings (`{"my.metric",le="1"}`, the UTF-8
 *    names of newer exporters);
 *  - label values escape backslash, double quote and line feed as `\\`,
 *    `\"`, `\n` (any other escape is an error); HELP text escapes `\\` and
 *    `\n` (other backslashes are kept);
 *  - values are floats, "NaN", "+Inf", "-Inf" included; timestamps are
 *    integer milliseconds since the epoch;
 *  - a histogram family `x` owns `x_bucket` (which needs an `le` label),
 *    `x_sum` and `x_count`; a summary owns `x` (with `quantile`), `x_sum`
 *    and `x_count`; a counter `x` owns `x_total` and `x_created`, as
 *    Python's prometheus_client writes them.
 *
 * What is an error (the line is left out, the rest is kept, and the first
 * problem is reported with its line number): bad names, unterminated or
 * badly escaped label values, a duplicate label name, a value or timestamp
 * that is not a number, an unknown TYPE, a second TYPE or HELP for a
 * family, a TYPE after the family's samples, samples of a family that are
 * not together, the same series twice, a bucket without `le`, buckets
 * whose counts go down, a negative counter, and a last line without its
 * line feed (a body cut short: its number may be cut too).
 */

enum pg_prom_type {
	PG_PROM_UNTYPED,
	PG_PROM_COUNTER,
	PG_PROM_GAUGE,
	PG_PROM_HISTOGRAM,
	PG_PROM_SUMMARY,
};

/* "untyped", "counter", "gauge", "histogram", "summary". */
const char *pg_prom_type_name(enum pg_prom_type t);

struct pg_prom_label {
	const char *name;
	const char *value; /* unescaped */
};

struct pg_prom_family {
	const char *name;
	const char *help; /* unescaped; NULL without a HELP line */
	enum pg_prom_type type;
	bool typed; /* had a TYPE line */
};

struct pg_prom_sample {
	const char *name; /* the sample's own name: "x_bucket", "x_total" */
	size_t family;    /* index into families */
	const struct pg_prom_label *labels;
	size_t n_labels;
	double value; /* NAN and infinities as written */
	bool has_timestamp;
	int64_t timestamp_ms;
	int line; /* 1-based */
};

struct pg_prom {
	struct pg_prom_family *families;
	size_t n_families;
	struct pg_prom_sample *samples;
	size_t n_samples;
	size_t n_errors; /* lines left out */
	/* private: storage behind the pointers above */
	struct pg_prom_store *store;
};

#define PG_PROM_INIT                                                                               \
	{                                                                                          \
		NULL, 0, NULL, 0, 0, NULL                                                          \
	}

/*
 * Parse len bytes of text into p (which must be PG_PROM_INIT or released).
 * Returns 0 when every line parsed; PG_ECONFIG when some did not, with err
 * naming the first ("line 12: label value of 'le' is not terminated") and
 * p holding everything else. Either way p is the caller's to release.
 */
int pg_prom_parse(struct pg_prom *p, const char *text, size_t len, struct pg_error *err);

void pg_prom_release(struct pg_prom *p);

/* The family called name, or NULL. */
const struct pg_prom_family *pg_prom_family(const struct pg_prom *p, const char *name);

/* A sample's label value, or NULL. */
const char *pg_prom_label(const struct pg_prom_sample *s, const char *name);

/*
 * The sum over every series of the sample called name (every label set:
 * engines, model names, ranks), NaN values left out. *count (may be NULL)
 * gets the number of series found; the result is NAN when there is none.
 */
double pg_prom_sum(const struct pg_prom *p, const char *name, size_t *count);

/* The largest value of the series called name; NAN when there is none. */
double pg_prom_max(const struct pg_prom *p, const char *name);

#endif
