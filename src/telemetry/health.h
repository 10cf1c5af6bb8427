#ifndef PERFGATE_TELEMETRY_HEALTH_H
#define PERFGATE_TELEMETRY_HEALTH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strutil.h"

struct pg_buf;

/*
 * Was the job healthy? A job whose GPU throttled, ran its clocks well under
 * their maximum, logged ECC or Xid errors, or shared the GPU with another
 * process measured the machine, not the code: its regression is not
 * trusted. The verdict is computed here, from each result's
 * perfgate.telemetry (telemetry/series.h), under a policy from the
 * thresholds file's `health:` section; the gate only consults it
 * (gate/compare.h pg_compare_opts.suspect): a sick job's failing gate asks
 * for a re-run instead (exit 3, verdict "suspect").
 */

enum pg_on_suspect {
	PG_ON_SUSPECT_RERUN,  /* a regression of a sick job: re-run, exit 3 (default) */
	PG_ON_SUSPECT_FAIL,   /* decide as if it were healthy; the flags still show */
	PG_ON_SUSPECT_IGNORE, /* do not judge health at all */
};

struct pg_health_policy {
	enum pg_on_suspect on_suspect;
	double throttle_seconds;   /* a reason of throttle_reasons held at least this long */
	uint64_t throttle_reasons; /* PG_THROTTLE_* bits (telemetry/gpustat.h) */
	double min_clock_ratio;    /* busy GPU's median SM clock / its maximum; 0: off */
	bool errors;               /* new uncorrected ECC errors or Xid events */
	bool foreign_process;      /* another process holding memory on the GPU */
	double foreign_min_mib;    /* ... at least this much (0: any) */
};

/* on_suspect rerun, throttle_seconds 5, throttle_reasons hw_slowdown,
 * sw_thermal_slowdown, hw_thermal_slowdown, hw_power_brake_slowdown (power
 * capping is how a busy H100 normally runs), min_clock_ratio 0.8, errors
 * and foreign_process on, foreign_min_mib 0. */
void pg_health_policy_default(struct pg_health_policy *p);

/* "rerun", "fail", "ignore". */
const char *pg_on_suspect_name(enum pg_on_suspect o);

/*
 * Why one point's telemetry (perfgate.telemetry, may be NULL) makes it
 * suspect: appends one line per finding ("GPU 3 thermal throttling for
 * 12 s") to why. Returns true when there is any.
 */
bool pg_health_point(const struct pg_health_policy *p, const json_t *telemetry,
		     struct pg_strv *why);

struct pg_job_health {
	bool suspect;
	struct pg_strv points;  /* the suspect points */
	struct pg_strv reasons; /* "<point>: <finding>", in point order */
	size_t judged;          /* points that had telemetry */
};

#define PG_JOB_HEALTH_INIT                                                                         \
	{                                                                                          \
		false, PG_STRV_INIT, PG_STRV_INIT, 0                                               \
	}

/* Judge a job's results (n result objects and their point names). Nothing
 * is suspect under on_suspect ignore. */
void pg_job_health_judge(struct pg_job_health *out, const struct pg_health_policy *p,
			 const json_t *const *results, const char *const *names, size_t n);
void pg_job_health_release(struct pg_job_health *h);

/* One line: the first reasons, then "and N more". */
void pg_job_health_line(struct pg_buf *out, const struct pg_job_health *h, size_t max_reasons);

/* {"status": "suspect"|"healthy"|"unknown", "on_suspect", "points", "reasons"}. */
json_t *pg_job_health_json(const struct pg_job_health *h, const struct pg_health_policy *p);

#endif
