"""The real-noise series (shared/data/real-noise/*.csv) as CI steps and nights.

A nightly CSV from sglang-ci (sglang_mi355x_nightly.csv) has one row per
(point, metric, nightly image, repeat). Its point is
`model|precision|variant|workload|load`; a CI step here is what one nightly
job runs on one server configuration, `model|precision|variant`, and its
points are the workload and load (`isl1024_osl1024_rr0.0_n300|rate1`,
`isl3200_osl800_rr1.0_n128|conc16`). A night is an `image_date` (one nightly
image, which stands in for the commit measured); its repeats are in run
order (repeat 1 runs right after the server starts).

Only the standard library: bench/replay and bench/gate-sim's estimates run
under any python3.
"""

import csv
import math
import re
import statistics
import sys

# the columns a nightly CSV needs (the others are provenance)
NIGHTLY_COLUMNS = ("point", "metric", "image_date", "repeat", "bench_ts", "value")

# vLLM's serving result keys for the CSV's metric names (vllm bench serve
# --save-result); metrics not listed keep their name
VLLM_KEYS = {"duration_s": "duration"}

# the serving metrics that gate under perfgate's default policy
# (src/results/metrics.c, `gated`)
GATED = ("output_throughput", "median_ttft_ms", "median_tpot_ms")
HIGHER_IS_BETTER = {"output_throughput", "request_throughput", "total_token_throughput",
                    "input_throughput"}


class Step:
    """One CI step: its points, its nights, and every value."""

    def __init__(self, name):
        self.name = name
        self.points = []   # in first-seen order
        self.nights = []   # sorted image dates
        self.values = {}   # (point, night) -> {metric: [value per repeat, in order]}
        self.started = {}  # (point, night) -> bench_ts (yyyymmdd_HHMMSS)
        self.image = {}    # night -> image tag

    def night_values(self, point, night):
        return self.values.get((point, night))

    def median(self, point, night, metric):
        """The night's value of a metric: the median of its repeats (None: absent)."""
        v = self.values.get((point, night), {}).get(metric)
        return statistics.median(v) if v else None

    def first(self, point, night, metric):
        """The night's first repeat (None: absent)."""
        v = self.values.get((point, night), {}).get(metric)
        return v[0] if v else None

    def series(self, point, metric, value=None):
        """[(night, value)] over the nights the point has the metric; value:
        Step.median (default) or Step.first."""
        value = value or Step.median
        out = []
        for n in self.nights:
            m = value(self, point, n, metric)
            if m is not None and m > 0:
                out.append((n, m))
        return out


def split_point(point):
    """`model|precision|variant|workload|load` -> (step, point within the step)."""
    parts = point.split("|")
    if len(parts) < 5:
        raise ValueError("point %r: expected model|precision|variant|workload|load" % point)
    return "|".join(parts[:3]), "|".join(parts[3:])


def read_nightly(path):
    """The CSV's CI steps, by name (insertion order). Errors: ValueError naming file and line."""
    steps = {}
    with open(path, newline="") as f:
        rows = csv.DictReader(f)
        missing = [c for c in NIGHTLY_COLUMNS if c not in (rows.fieldnames or ())]
        if missing:
            raise ValueError("%s:1: not a nightly series: no column %s (expected %s)" %
                             (path, ", ".join(missing), ", ".join(NIGHTLY_COLUMNS)))
        for line, r in enumerate(rows, start=2):
            try:
                step_name, point = split_point(r["point"])
                value = float(r["value"])
                repeat = int(r["repeat"])
            except ValueError as e:
                raise ValueError("%s:%d: %s" % (path, line, e)) from None
            if not math.isfinite(value):
                continue
            night = r["image_date"]
            s = steps.get(step_name)
            if s is None:
                s = steps[step_name] = Step(step_name)
            if point not in s.points:
                s.points.append(point)
            key = (point, night)
            reps = s.values.setdefault(key, {}).setdefault(r["metric"], {})
            reps[repeat] = value
            ts = r["bench_ts"]
            if key not in s.started or ts < s.started[key]:
                s.started[key] = ts
            if r.get("image"):
                s.image[night] = r["image"]
    for s in steps.values():
        s.nights = sorted({n for (_, n) in s.values})
        s.points.sort(key=point_order)
        for key, metrics in s.values.items():
            for m, reps in metrics.items():
                metrics[m] = [reps[k] for k in sorted(reps)]
    return steps


def point_order(point):
    """Points by workload, then by load (rate or concurrency) as a number."""
    workload, load = point.split("|", 1)
    n = re.search(r"[\d.]+$", load)
    return (workload, load.rstrip("0123456789."), float(n.group()) if n else 0.0)


def load_of(point):
    """(qps, concurrency, prompts) of a point: `rate4` is 4 requests/s
    without a cap, `conc16` a concurrency of 16 at an unbounded rate; the
    prompts come from the workload's `_n<N>`."""
    workload, load = point.split("|", 1)
    n = re.search(r"_n(\d+)", workload)
    prompts = int(n.group(1)) if n else None
    m = re.fullmatch(r"rate([\d.]+)", load)
    if m:
        return float(m.group(1)), None, prompts
    m = re.fullmatch(r"conc(\d+)", load)
    if m:
        return math.inf, int(m.group(1)), prompts
    raise ValueError("point %r: load %r is neither rate<N> nor conc<N>" % (point, load))


def slug(text):
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-")


def perfgate_name(step, point):
    """The result file's (and so the point's) name, as perfgate names
    serving points: <test>_qps_<q>[_concurrency_<c>] (docs/results.md)."""
    workload = point.split("|", 1)[0]
    qps, conc, prompts = load_of(point)
    test = "serving_%s_%s" % (slug(step).replace("-", "_"), slug(workload).replace("-", "_"))
    name = "%s_qps_%s" % (test, "inf" if math.isinf(qps) else "%g" % qps)
    if conc is not None and (prompts is None or conc < prompts):
        name += "_concurrency_%d" % conc
    return name


def is_pinned(step, point):
    """Under a fixed request rate the server's throughput is the offered
    rate (README: night-to-night 0.04%), not a measure of the server: an
    open-loop point whose realised request rate is at least 85% of the
    offered one. Closed-loop points (a concurrency) never are."""
    qps, _, _ = load_of(point)
    if math.isinf(qps):
        return False
    realised = [step.median(point, n, "request_throughput") for n in step.nights]
    realised = [r for r in realised if r]
    return bool(realised) and statistics.median(realised) >= 0.85 * qps


# ------------------------------------------------------------------
# robust statistics

def mad_sd(xs):
    """1.4826 x the median absolute deviation: a robust sd (NaN under 2 values)."""
    if len(xs) < 2:
        return math.nan
    m = statistics.median(xs)
    return 1.4826 * statistics.median(abs(x - m) for x in xs)


def diff_sd(logs):
    """The night-to-night sd of a log series, robust to level steps: the
    robust sd of its first differences over sqrt(2)."""
    d = [b - a for a, b in zip(logs, logs[1:])]
    return mad_sd(d) / math.sqrt(2) if len(d) >= 2 else math.nan


def pct(x):
    return "%.2f%%" % (100 * x) if x is not None and math.isfinite(x) else "-"


def fail(msg):
    print(msg, file=sys.stderr)
    sys.exit(2)


def read_gpu(path, default="MI355X"):
    """The series' GPU (its gpu column's first value)."""
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            return r.get("gpu") or default
    return default
