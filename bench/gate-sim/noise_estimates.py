#!/usr/bin/env python3
"""The noise of the real series, measured: what gate-sim's `dedicated` and
`fleet` profiles are built from (bench/gate-sim/README.md, results.md).

    bench/gate-sim/noise_estimates.py [DIR]     (default /work/shared/data/real-noise)

DIR holds sglang_mi355x_nightly.csv (a dedicated 8-GPU node, nightly) and
inferencex_history.csv (a shared multi-vendor fleet). Every figure is a
robust one: sd = 1.4826 x MAD, of ln(value), so it reads as a CV; night to
night = the robust sd of consecutive nights' differences / sqrt 2 (a step
of the level is one outlying difference, not spread). Printed as markdown.
Only the standard library.
"""

import csv
import math
import os
import statistics
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "replay"))
import realnoise as rn  # noqa: E402
import truth  # noqa: E402

# metric classes of the dedicated series (the gate's classes)
CLASSES = [
    ("throughput", ("output_throughput",)),
    ("median TTFT", ("median_ttft_ms",)),
    ("median TPOT / ITL", ("median_tpot_ms", "median_itl_ms")),
    ("p99 TTFT", ("p99_ttft_ms",)),
    ("p99 ITL / TPOT", ("p99_itl_ms", "p99_tpot_ms")),
]


def q(xs, p):
    """The p-quantile (nearest rank) of a non-empty list."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(p * (len(xs) - 1)))))]


def span(xs, fmt=rn.pct):
    """`median (p10-p90, n)` of a list, or `-`."""
    xs = [x for x in xs if x is not None and math.isfinite(x)]
    if not xs:
        return "-"
    return "%s (%s-%s, n=%d)" % (fmt(statistics.median(xs)), fmt(q(xs, 0.1)), fmt(q(xs, 0.9)),
                                 len(xs))


def loop(point):
    return "closed" if math.isinf(rn.load_of(point)[0]) else "open"


def dedicated(path):
    steps = rn.read_nightly(path)
    night = defaultdict(list)      # (loop, class) -> night-to-night sds
    within = defaultdict(list)     # (loop, class) -> warm repeat sds
    cold = defaultdict(list)       # class -> r1 / median(r2, r3) - 1
    tails = defaultdict(list)      # class -> share of settled nights beyond 3 sd
    common = defaultdict(list)     # class -> (sd of nights' common offsets, sd of the rest)
    step_sizes, gaps, spikes = [], [], defaultdict(list)
    n_nights = []
    for s in steps.values():
        kinds = {n: k for n, k, _, _ in truth.classify(s)}
        settled = {n for n, k in kinds.items() if k not in ("first", "unstable")}
        n_nights.append(len(s.nights))
        ordered = [n for n in s.nights if kinds[n] in ("regression", "step")]
        idx = {n: i for i, n in enumerate(s.nights)}
        gaps += [idx[b] - idx[a] for a, b in zip(ordered, ordered[1:])]
        for name, metrics in CLASSES:
            resid = defaultdict(dict)  # night -> point -> residual from the level
            for point in s.points:
                if name == "throughput" and rn.is_pinned(s, point):
                    continue
                for metric in metrics:
                    ser = s.series(point, metric, rn.Step.first)
                    if len(ser) < 5:
                        continue
                    logs = [math.log(v) for _, v in ser]
                    sigma = max(rn.diff_sd(logs), truth.SIGMA_FLOOR)
                    cps = truth.change_points(logs, sigma)
                    bounds = [0] + cps + [len(logs)]
                    diffs, res = [], []
                    for i in range(len(bounds) - 1):
                        lo, hi = bounds[i], bounds[i + 1]
                        level = statistics.median(logs[lo:hi])
                        for j in range(lo, hi):
                            if ser[j][0] in settled:
                                resid[ser[j][0]][point] = logs[j] - level
                                res.append(logs[j] - level)
                                if j > lo and ser[j - 1][0] in settled:
                                    diffs.append(logs[j] - logs[j - 1])
                        if metric in rn.GATED and i:
                            step_sizes.append(abs(math.expm1(
                                level - statistics.median(logs[bounds[i - 1]:lo]))))
                    if len(diffs) >= 4:
                        quiet = rn.mad_sd(diffs) / math.sqrt(2)
                        night[(loop(point), name)].append(quiet)
                        sigma = max(quiet, truth.SIGMA_FLOOR)
                        tails[name].append(sum(abs(e) > 3 * sigma for e in res) / len(res))
                    if name.startswith("p99"):
                        # one-night spikes: above both neighbours by more than 3 sd
                        for j in range(1, len(logs) - 1):
                            up = logs[j] - max(logs[j - 1], logs[j + 1])
                            if ser[j][0] in settled and up > 3 * sigma:
                                spikes[name].append(math.expm1(up))
                    for n in s.nights:
                        reps = s.values.get((point, n), {}).get(metric, [])
                        if len(reps) >= 3 and min(reps) > 0 and n in settled:
                            warm = [math.log(r) for r in reps[1:3]]
                            within[(loop(point), name)].append(abs(warm[0] - warm[1]) /
                                                               math.sqrt(2) / 0.6745)
                            cold[name].append(math.expm1(math.log(reps[0]) -
                                                         statistics.median(warm)))
            # the nights' common offsets (median over points) vs the rest
            offsets, rest = [], []
            for n, by_point in resid.items():
                if len(by_point) >= 3:
                    c = statistics.median(by_point.values())
                    offsets.append(c)
                    rest += [e - c for e in by_point.values()]
            if len(offsets) >= 5:
                common[name].append((rn.mad_sd(offsets), rn.mad_sd(rest)))

    print("#### Dedicated node: %s\n" % os.path.basename(path))
    print("%d CI steps of %d-%d nights. A night's value is its first repeat (the one every "
          "night has); the levels and the settled nights (not `unstable`, not a step's first "
          "night) are bench/replay/truth.py's; pinned throughput (open loop, realised rate >= "
          "85%% of offered) is left out. Each cell: the median over series (p10-p90, number of "
          "series or samples).\n" % (len(steps), min(n_nights), max(n_nights)))
    print("| metric class | night to night, closed loop | night to night, open loop | "
          "within a job (warm repeats 2 vs 3), open loop | settled nights beyond 3 sd of "
          "their level |")
    print("|---|--:|--:|--:|--:|")
    for name, _ in CLASSES:
        print("| %s | %s | %s | %s | %s |" % (
            name, span(night[("closed", name)]), span(night[("open", name)]),
            span(within[("open", name)]), span(tails[name])))
    parts = []
    for name, _ in CLASSES:
        if night[("open", name)] and within[("open", name)]:
            nn = statistics.median(night[("open", name)])
            ww = statistics.median(within[("open", name)])
            parts.append("%s %s" % (name, rn.pct(math.sqrt(max(0.0, nn * nn - ww * ww)))))
    print("\nNight to night = a night's own part (the job) + one repeat's within-job noise; "
          "the closed-loop points ran 1 repeat a night, so only the open-loop points split "
          "them. Job part, open loop: %s.\n" % ", ".join(parts))
    print("| metric class | a night's offset common to its points (sd) | each point's own "
          "(sd) | share of the variance per point |")
    print("|---|--:|--:|--:|")
    for name, _ in CLASSES:
        if not common[name]:
            continue
        c = statistics.median(x for x, _ in common[name])
        o = statistics.median(y for _, y in common[name])
        print("| %s | %s | %s | %.0f%% |" % (name, rn.pct(c), rn.pct(o),
                                               100 * o * o / (c * c + o * o) if c or o else 0))
    print("\n| cold first repeat (repeat 1 against the median of repeats 2 and 3) | median | "
          "p10 | p90 | n |")
    print("|---|--:|--:|--:|--:|")
    for name, _ in CLASSES:
        xs = cold[name]
        if xs:
            print("| %s | %+.1f%% | %+.1f%% | %+.1f%% | %d |" % (
                name, 100 * statistics.median(xs), 100 * q(xs, 0.1), 100 * q(xs, 0.9), len(xs)))
    print("\nLevel steps of the gated series: %d, size %s; nights between a CI step's step "
          "nights (regression or step): %s." % (len(step_sizes), span(step_sizes),
                                                 span(gaps, lambda g: "%g" % g)))
    for name in ("p99 TTFT", "p99 ITL / TPOT"):
        xs = spikes[name]
        print("One-night spikes of %s on settled nights (above both neighbours by > 3 sd): "
              "%d, size %s." % (name, len(xs), span(xs)))
    print()


FLEET_METRICS = [
    ("throughput", "output_tput_per_gpu"),
    ("median TTFT", "median_ttft"),
    ("median TPOT", "median_tpot"),
    ("median ITL", "median_itl"),
    ("p99 TTFT", "p99_ttft"),
    ("p99 TPOT", "p99_tpot"),
    ("p99 ITL", "p99_itl"),
]


def fleet(path):
    vals = defaultdict(lambda: defaultdict(list))  # metric -> point -> [(date, run, url, ln v)]
    gpus = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            try:
                v = float(r["value"])
            except ValueError:
                continue
            if v > 0 and math.isfinite(v):
                vals[r["metric"]][r["point"]].append((r["date"], int(r["run_index"] or 0),
                                                      r["run_url"], math.log(v)))
                gpus[r["point"]] = r["gpu"]
    print("#### Shared fleet: %s\n" % os.path.basename(path))
    print("Run to run per point: the robust sd of consecutive runs' differences / sqrt 2 "
          "(points with >= 4 runs; runs are days to weeks apart, across images and recipes: "
          "an upper bound on noise); beyond 5% and the common offset: from the point's median "
          "run, the offset common to the points of one workflow run (>= 3 points).\n")
    print("| metric | run to run per point, all GPUs | B200/GB200 | MI3xx | runs beyond 5% of "
          "the point's median | a run's common offset (sd) | each point's own (sd) |")
    print("|---|--:|--:|--:|--:|--:|--:|")
    for name, metric in FLEET_METRICS:
        sds, nv, mi, beyond = [], [], [], []
        resid_by_run = defaultdict(list)
        for point, runs in vals[metric].items():
            runs.sort()
            if len(runs) < 4:
                continue
            logs = [x for _, _, _, x in runs]
            sd = rn.diff_sd(logs)
            sds.append(sd)
            gpu = gpus[point]
            (nv if gpu in ("B200", "GB200") else mi if gpu.startswith("MI") else []).append(sd)
            m = statistics.median(logs)
            beyond += [abs(math.expm1(x - m)) > 0.05 for x in logs]
            for _, _, url, x in runs:
                resid_by_run[url].append(x - m)
        offsets, rest = [], []
        for xs in resid_by_run.values():
            if len(xs) >= 3:
                c = statistics.median(xs)
                offsets.append(c)
                rest += [x - c for x in xs]
        print("| %s | %s | %s | %s | %s | %s | %s |" % (
            name, span(sds), span(nv), span(mi),
            "%.0f%%" % (100 * sum(beyond) / len(beyond)) if beyond else "-",
            rn.pct(rn.mad_sd(offsets)) if len(offsets) >= 5 else "-",
            rn.pct(rn.mad_sd(rest)) if len(rest) >= 5 else "-"))
    print()


def main(argv):
    d = argv[1] if len(argv) > 1 else "/work/shared/data/real-noise"
    try:
        dedicated(os.path.join(d, "sglang_mi355x_nightly.csv"))
        fleet(os.path.join(d, "inferencex_history.csv"))
    except (OSError, ValueError) as e:
        rn.fail("noise_estimates: %s" % e)


if __name__ == "__main__":
    main(sys.argv)
