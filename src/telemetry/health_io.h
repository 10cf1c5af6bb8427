#ifndef PERFGATE_TELEMETRY_HEALTH_IO_H
#define PERFGATE_TELEMETRY_HEALTH_IO_H

#include "telemetry/health.h"

struct pg_error;

/*
 * The `health:` section of a thresholds file (docs/telemetry.md):
 *
 *   health:
 *     on_suspect: rerun          # rerun | fail | ignore
 *     throttle_seconds: 5
 *     throttle_reasons: [hw_slowdown, sw_thermal_slowdown, hw_thermal_slowdown,
 *                        hw_power_brake_slowdown]
 *     min_clock_ratio: 0.8       # 0 turns the clock check off
 *     errors: true               # ECC and Xid
 *     foreign_process: true
 *     foreign_min_mib: 0
 *
 * p gets the defaults (pg_health_policy_default) and what the section
 * sets. A file that does not exist, or has no such section, is not an
 * error. PG_ECONFIG "<file>:<line>:<col>: health.<key>: <problem>".
 */
int pg_health_policy_load(struct pg_health_policy *p, const char *path, struct pg_error *err);

struct pg_result_set;

/*
 * What the gate consults (gate/compare.h pg_compare_opts.suspect): the
 * policy of the GPU's thresholds file (thresholds: a file or directory,
 * NULL "thresholds"; gpu the key) applied to the results of set. out gets
 * one line of reasons when the job is suspect and the policy says to re-run
 * (nothing otherwise). Errors: a health: section that does not load.
 */
int pg_health_check(struct pg_buf *out, const char *thresholds, const char *gpu,
		    const struct pg_result_set *set, struct pg_error *err);

#endif
