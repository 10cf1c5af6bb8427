#!/usr/bin/env python3
"""Ground truth for bench/replay: which nights of a nightly series are flat,
which are steps of the level, derived offline from the whole series.

    bench/replay/truth.py SERIES.csv > bench/replay/<series>_truth.csv

The rule (RULE below, printed by the replay too) is deliberately
conservative: a night counts as flat or as a regression only when the whole
series says so clearly; everything in between (small or improving steps,
the night after a step, a move of a metric that cannot move) is left out of
both counts. The output is one line per (CI step, night) with a one-line
reason; it is reviewed by hand and committed (REVIEWED lists the nights the
review changed, with why).
"""

import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import realnoise as rn  # noqa: E402

MIN_SEGMENT = 3      # nights: a level holds at least three nights (fewer: outliers)
MIN_SHIFT = 0.02     # a step moves the level by at least 2% ...
MIN_Z = 6.0          # ... and by 6 night-to-night sds of the series (with the medians' error)
SIGMA_FLOOR = 0.001  # 0.1%: the quietest metric's noise (throughput on a dedicated node)
REGRESSION = 0.05    # a worse step of 5% or more is a regression to catch
OUTLIER_Z = 3.0      # a night beyond 3 robust sds of its level is an outlier (named, still flat)

RULE = """\
ground truth (bench/replay/truth.py), per CI step (model|precision|variant):
  series: per point, median TTFT, median TPOT, and output throughput where the
    load does not pin it (an open-loop point whose realised request rate is
    >= 85% of the offered rate carries no throughput signal); a night's value
    is its first repeat's, on a log scale: the one repeat every night has
    (some nights have 3, most 1, and repeat 1 runs right after the server
    starts: a median of 3 and a lone cold repeat are different measurements,
    so a change in the number of repeats is not a step); noise: the robust sd
    of night-to-night differences / sqrt 2 (floor 0.1%);
  steps: each whole series cut into the levels of >= 3 nights with the least
    absolute deviation from their medians (exact), as many levels as keep every
    step between neighbouring levels >= 2% and >= 6 sds of a difference of two
    medians;
  nights: regression = a step makes some series >= 5% worse;
    step = any other step (an improvement, or worse by < 5%);
    unstable = no step, but some series beyond 3 sd (and 2%) of its level two
      nights running: a level too short or too small to call;
    ambiguous = only a pinned throughput stepped (the arrival schedule);
    after = the night after any of those (a failure there may be a step caught
      late); first = the step's first night;
    flat = the rest; one-night outliers (beyond 3 sd and 1%) stay flat, named;
    a few nights reviewed by hand (REVIEWED, each with its reason).
  counted: false alarms on flat nights; regressions caught (exit 1) on the
    night or the next; change points (regression and step nights) named by
    `perfgate baseline changes` (a change of one of the night's series, or of
    the whole run in its metric, beginning at the night or one either side)."""

# Nights whose rule-given kind the review changed: (step, night) -> (kind, why).
GROK1_EARLY = ("GROK1's first ten nights (3 repeats, open loop) swing night to night "
               "(rate 8 median TTFT 238, 1365, 246, 389, 824, 1319, 414 ms): no level to call")
REVIEWED = {
    ("GROK1|MOE-I4F8|online", "20251104"): ("unstable", GROK1_EARLY),
    ("GROK1|MOE-I4F8|online", "20251105"): ("unstable", GROK1_EARLY),
}


def l1(xs):
    m = statistics.median(xs)
    return sum(abs(x - m) for x in xs)


def step_z(left, right, sigma):
    """The shift of the medians and its size in sds of a difference of two
    medians (the sd of a median of n normal values is ~1.2533 sd/sqrt(n))."""
    shift = statistics.median(right) - statistics.median(left)
    return shift, abs(shift) / (1.2533 * sigma * math.sqrt(1 / len(left) + 1 / len(right)))


def holds(left, right, sigma):
    shift, z = step_z(left, right, sigma)
    return z >= MIN_Z and abs(shift) >= MIN_SHIFT


def change_points(logs, sigma):
    """Indexes where a new level starts (sorted): the segmentation into k
    levels of >= MIN_SEGMENT nights with the least absolute deviation from
    the levels' medians (exact, by dynamic programming), for the largest k
    whose every step holds between its neighbours."""
    n = len(logs)
    cost = {}
    for i in range(n):
        for j in range(i + MIN_SEGMENT, n + 1):
            cost[(i, j)] = l1(logs[i:j])
    for k in range(n // MIN_SEGMENT, 1, -1):
        # best[s][j]: (cost, previous bound) of logs[:j] in s segments
        best = [{} for _ in range(k + 1)]
        best[0][0] = (0.0, None)
        for seg in range(1, k + 1):
            for j in range(seg * MIN_SEGMENT, n + 1):
                options = [(best[seg - 1][i][0] + cost[(i, j)], i)
                           for i in best[seg - 1] if (i, j) in cost]
                if options:
                    best[seg][j] = min(options)
        if n not in best[k]:
            continue
        bounds, j = [n], n
        for seg in range(k, 0, -1):
            j = best[seg][j][1]
            bounds.append(j)
        bounds.reverse()
        if all(holds(logs[bounds[i]:bounds[i + 1]], logs[bounds[i + 1]:bounds[i + 2]], sigma)
               for i in range(k - 1)):
            return bounds[1:-1]
    return []


def worse(metric, shift):
    """A log shift signed so that worse is positive."""
    return -shift if metric in rn.HIGHER_IS_BETTER else shift


def short(metric):
    return {"output_throughput": "throughput", "median_ttft_ms": "median TTFT",
            "median_tpot_ms": "median TPOT"}.get(metric, metric)


class Move:
    """A change of one series on one night: a step, or an outlier."""

    def __init__(self, point, metric, change, pinned):
        self.point, self.metric, self.change, self.pinned = point, metric, change, pinned
        self.worse = worse(metric, change)  # log, worse > 0

    def __str__(self):
        return "%s %s %+.1f%%%s" % (self.point.split("|")[1], short(self.metric),
                                    100 * math.expm1(self.change),
                                    " (pinned)" if self.pinned else "")


def analyse(step):
    """Per night: its steps, its outliers (Move lists), the series that are
    unstable on it (big outliers on two nights running), the metrics first
    seen on it."""
    steps, outliers, unstable, first_seen = ({n: [] for n in step.nights} for _ in range(4))
    for point in step.points:
        pinned = rn.is_pinned(step, point)
        for metric in rn.GATED:
            ser = step.series(point, metric, rn.Step.first)
            if not ser:
                continue
            if ser[0][0] != step.nights[0]:
                first_seen[ser[0][0]].append(metric)
            nights = [n for n, _ in ser]
            logs = [math.log(v) for _, v in ser]
            sigma = max(rn.diff_sd(logs) if len(logs) > 2 else 0, SIGMA_FLOOR)
            cps = change_points(logs, sigma)
            bounds = [0] + cps + [len(logs)]
            levels = [statistics.median(logs[bounds[i]:bounds[i + 1]])
                      for i in range(len(bounds) - 1)]
            pin = pinned and metric == "output_throughput"
            for i, k in enumerate(cps):
                steps[nights[k]].append(Move(point, metric, levels[i + 1] - levels[i], pin))
            big = {}
            for i, level in enumerate(levels):
                for j in range(bounds[i], bounds[i + 1]):
                    dev = logs[j] - level
                    if abs(dev) > OUTLIER_Z * sigma and abs(dev) >= 0.01:
                        outliers[nights[j]].append(Move(point, metric, dev, pin))
                        if abs(dev) >= MIN_SHIFT and not pin:
                            big[j] = outliers[nights[j]][-1]
            for j, move in big.items():
                if j - 1 in big or j + 1 in big:
                    unstable[nights[j]].append(move)
    return steps, outliers, unstable, first_seen


def describe(moves, most=4):
    """The largest few, largest first."""
    moves = sorted(moves, key=lambda m: -abs(m.change))
    out = [str(m) for m in moves[:most]]
    if len(moves) > most:
        out.append("%d more" % (len(moves) - most))
    return ", ".join(out)


def classify(step):
    """[(night, kind, changes, reason)] for one CI step."""
    steps, outliers, unstable, first_seen = analyse(step)
    rows = []
    prev_moved = False
    for i, n in enumerate(step.nights):
        real = [m for m in steps[n] if not m.pinned]
        pinned = [m for m in steps[n] if m.pinned]
        changes = ";".join("%s:%s:%+.4f" % (m.point, m.metric, math.expm1(m.change))
                           for m in real)
        if i == 0:
            kind, reason = "first", "the step's first night: nothing to compare with"
        elif real and max(m.worse for m in real) >= math.log1p(REGRESSION):
            kind = "regression"
            reason = "worse by >= 5%: " + describe([m for m in real if m.worse > 0])
            if any(m.worse < 0 for m in real):
                reason += "; better: " + describe([m for m in real if m.worse < 0])
        elif real:
            kind, reason = "step", "level moved: " + describe(real)
        elif unstable[n]:
            kind = "unstable"
            reason = "level unclear: beyond 3 sd of the level two nights running: " + \
                describe(unstable[n])
        elif pinned:
            kind = "ambiguous"
            reason = "only a pinned throughput moved (the arrival schedule)"
        elif prev_moved:
            kind, reason = "after", "the night after a step"
        else:
            kind, reason = "flat", "no step of the level"
        if pinned and kind != "first":
            reason += "; pinned: " + describe(pinned)
        if outliers[n] and kind not in ("first", "unstable"):
            reason += "; one-night outliers: " + describe(outliers[n])
        if first_seen[n]:
            reason += "; first night of " + ", ".join(sorted({short(m) for m in first_seen[n]}))
        prev_moved = kind in ("regression", "step", "ambiguous", "unstable")
        if (step.name, n) in REVIEWED:
            kind, why = REVIEWED[(step.name, n)]
            reason = "reviewed: %s (the rule said: %s)" % (why, reason)
        rows.append((n, kind, changes, reason))
    return rows


def write(steps, out):
    out.write("step,night,kind,changes,reason\n")
    for s in steps.values():
        for n, kind, changes, reason in classify(s):
            out.write('%s,%s,%s,%s,"%s"\n' % (s.name, n, kind, changes,
                                              reason.replace('"', "'")))


def main(argv):
    if len(argv) != 2 or argv[1].startswith("-"):
        rn.fail("usage: bench/replay/truth.py SERIES.csv > TRUTH.csv")
    try:
        steps = rn.read_nightly(argv[1])
    except (OSError, ValueError) as e:
        rn.fail("truth.py: %s" % e)
    write(steps, sys.stdout)


if __name__ == "__main__":
    main(sys.argv)
