#ifndef PERFGATE_BENCH_NOISE_PROFILES_H
#define PERFGATE_BENCH_NOISE_PROFILES_H

/*
 * The noise of real GPU series, as gate-sim (per CI job) and ab-sim (per
 * A/B session) draw it: shared/data/real-noise, measured by
 * bench/gate-sim/noise_estimates.py (its output: bench/gate-sim/results.md).
 * Sds are of ln(value) (a CV), per metric in this order:
 */
enum {
	NP_THROUGHPUT, /* output throughput */
	NP_MEDIAN_TTFT,
	NP_MEDIAN_TPOT,
	NP_P99_TTFT,
	NP_P99_TPOT,
	NP_P99_ITL,
	NP_P99_E2EL,
	NP_METRICS
};

/*
 * dedicated: one 8-GPU node, nightly (the SGLang MI355X series). The job's
 * own part is 0.1-0.3% (throughput, medians; the p99s 1-3%), the repeats
 * of a job agree to 0.05-0.25%; of the job part, this share is each
 * point's own (the rest is common to the job's points): throughput 19%,
 * median TTFT 67%, TPOT 79%, p99 TTFT 72%, p99 ITL 13% measured.
 */
static const double np_dedicated_job[NP_METRICS] = { 0.002, 0.003, 0.002, 0.03, 0.01, 0.01, 0.005 };
static const double np_dedicated_within[NP_METRICS] = { 0.0005, 0.0025, 0.0005, 0.02,
							0.005,  0.01,   0.003 };
static const double np_dedicated_share[NP_METRICS] = { 0.2, 0.7, 0.8, 0.7, 0.15, 0.15, 0.5 };
/* heavy tails: per job and point, 8% of nights land 3-8 night sds out
 * (3-15% of nights beyond 3 robust sd: the README; 0-12% by metric class
 * on this series' settled nights) */
#define NP_DEDICATED_OUTLIER_PROB 0.08
#define NP_DEDICATED_OUTLIER_LO   3.0
#define NP_DEDICATED_OUTLIER_HI   8.0
/* the first repeat after the server starts: TTFT +7% to +70%, throughput
 * up to -11% (one draw per point and job for all of them) */
static const double np_dedicated_cold_lo[NP_METRICS] = { 0, 0.07, 0, 0.07, 0, 0, 0 };
static const double np_dedicated_cold_hi[NP_METRICS] = { 0.11, 0.70, 0, 0.70, 0, 0, 0 };

/*
 * fleet: a shared multi-vendor fleet (InferenceX), run to run: throughput
 * ~1%, median TTFT ~3%, p99 TTFT ~6% (measured per point across GPUs:
 * 1.9%, 5.9%, 11%; B200/GB200 0.5%, 2.8%, 4.6%; MI3xx 4.8%, 9.9%, 19%:
 * runs weeks apart, across images, an upper bound); 60% of it each
 * point's own (55-75% measured across a workflow run's points).
 */
static const double np_fleet_job[NP_METRICS] = { 0.01, 0.03, 0.01, 0.06, 0.03, 0.03, 0.02 };
#define NP_FLEET_SHARE 0.6

#endif
