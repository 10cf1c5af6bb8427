#!/usr/bin/env python3
"""bench/replay: a real nightly series fed night by night through perfgate's CLI,
as a nightly pipeline on main would run it; prints false alarms on flat nights,
regressions caught and change points named against a ground truth.

    bench/replay/replay.py SERIES.csv [--perfgate BIN] [--record every|passing]
        [--thresholds FILE] [--truth FILE] [--step REGEX] [--nights N]
        [--work DIR] [--json FILE] [--verbose]

SERIES.csv is shaped like shared/data/real-noise/sglang_mi355x_nightly.csv
(columns point, metric, image_date, repeat, bench_ts, value, and gpu and image
when present). Each CI step (model|precision|variant: one nightly job) is its
own pipeline with its own history ref; every night, for every step that ran:

  1. a commit on main stands for the night's image (the commit measured);
  2. its results are written as `vllm bench serve --save-result` records, one
     per point and repeat; a point with several repeats is a `vllm bench sweep`
     directory (run=<n>.json and summary.json), which `perfgate import` reads as
     one point with its repeats as samples (docs/import.md);
     `perfgate import DIR -o results --gpu GPU` makes perfgate result files, and
     each gets `perfgate.started_at` = the night's benchmark time (the record's
     date: the history orders jobs by it);
  3. `perfgate gate results --baseline git --ref REF --allow-missing` (points
     the night did not run are not failures: the night's plan is what ran);
  4. `perfgate baseline record results --commit HEAD --ref REF` every night
     (--record every: the history follows main, as the new gate records
     every completed main run) or only after exit 0 (--record passing: the
     gate on main 71a106c, "only passing runs become baselines");
  5. `perfgate baseline changes --ref REF --json` (the change points named).

No confirmation re-run: the series has one job per night. The policy is
perfgate's default, or --thresholds FILE's. Ground truth: --truth FILE, else
<series>_truth.csv beside this script (committed, reviewed), else derived now
by truth.py's rule (printed). Only the standard library.
"""

import argparse
import csv
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import realnoise as rn  # noqa: E402
import truth as truth_rule  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))

# kinds of night the truth file may hold (truth.py)
KINDS = ("first", "flat", "regression", "step", "unstable", "ambiguous", "after")

# The children's environment: none of a CI job's own (a Buildkite job's
# BUILDKITE_BUILD_URL would make every night one build, each record
# replacing the last; its base branch or GPU would override the replay's).
CHILD_ENV = {k: v for k, v in os.environ.items()
             if not k.startswith("BUILDKITE") and k not in ("PERFGATE_GPU", "GIT_DIR",
                                                              "GIT_WORK_TREE")}


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="bench/replay/replay.py",
        description="replay a nightly series through perfgate gate / baseline record / "
                    "baseline changes and score it against a ground truth")
    ap.add_argument("series", help="CSV shaped like shared/data/real-noise/*_nightly.csv")
    ap.add_argument("--perfgate", default=os.path.join(ROOT, "build", "perfgate"),
                    help="the perfgate binary (default: build/perfgate)")
    ap.add_argument("--record", choices=("every", "passing"), default="every",
                    help="record every night (default) or only nights the gate passed")
    ap.add_argument("--confirm", choices=("none", "next"), default="none",
                    help="none: the first run decides (perfgate gate alone); next: a night "
                         "whose gate lists points to re-run is confirmed with the next "
                         "night's figures standing in for the plugin's re-run")
    ap.add_argument("--thresholds", help="a thresholds file for the policy (default: the "
                                         "default policy)")
    ap.add_argument("--truth", help="the ground truth CSV (default: <series>_truth.csv here, "
                                    "else derived by truth.py's rule)")
    ap.add_argument("--step", help="only CI steps matching this regular expression")
    ap.add_argument("--nights", type=int, help="only the first N nights of each step")
    ap.add_argument("--work", help="keep the work (repository, results) in this directory")
    ap.add_argument("--json", help="write the figures and every night's outcome as JSON")
    ap.add_argument("--verbose", action="store_true", help="print every night as it runs")
    return ap.parse_args(argv)


# ------------------------------------------------------------------
# the pipeline's pieces

class Pipeline:
    def __init__(self, args, work):
        self.args = args
        self.work = work
        self.repo = os.path.join(work, "repo")
        self.perfgate = os.path.abspath(args.perfgate)
        self.thresholds = os.path.abspath(args.thresholds) if args.thresholds else None
        self.seconds = 0.0
        self.calls = 0
        os.makedirs(self.repo)
        self.git("init", "-q", "-b", "main")
        self.git("config", "user.name", "replay")
        self.git("config", "user.email", "replay@localhost")
        self.git("commit", "-q", "--allow-empty", "-m", "the series begins")
        self.commits = {}  # night -> commit

    def git(self, *argv, env=None):
        out = subprocess.run(("git", "-c", "commit.gpgsign=false") + argv, cwd=self.repo,
                             env=env or CHILD_ENV, check=True, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        return out.stdout.strip()

    def night_commit(self, night, image):
        """A commit on main for the night's image, dated the night."""
        when = "%s-%s-%sT00:00:00Z" % (night[:4], night[4:6], night[6:8])
        env = dict(CHILD_ENV, GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
        self.git("commit", "-q", "--allow-empty", "-m", "night %s: %s" % (night, image), env=env)
        self.commits[night] = self.git("rev-parse", "HEAD")
        return self.commits[night]

    def perfgate_run(self, *argv):
        t = time.monotonic()
        p = subprocess.run((self.perfgate,) + argv, cwd=self.repo, env=CHILD_ENV,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.seconds += time.monotonic() - t
        self.calls += 1
        return p


def serving_record(step, point, metrics, repeat, started):
    """One repeat as `vllm bench serve --save-result` writes it."""
    qps, conc, prompts = rn.load_of(point)
    rec = {"date": started.replace("_", "-"), "backend": "sglang",
           "model_id": step.split("|")[0], "num_prompts": prompts,
           "request_rate": "inf" if math.isinf(qps) else qps, "max_concurrency": conc}
    for metric, values in sorted(metrics.items()):
        if repeat < len(values):
            rec[rn.VLLM_KEYS.get(metric, metric)] = values[repeat]
    return rec


def write_inputs(directory, step, night):
    """The night's result files of a step; returns the job's start (bench_ts)."""
    started = []
    for point in step.points:
        metrics = step.night_values(point, night)
        if not metrics:
            continue
        ts = step.started[(point, night)]
        started.append(ts)
        name = rn.perfgate_name(step.name, point)
        repeats = max(len(v) for v in metrics.values())
        recs = [serving_record(step.name, point, metrics, r, ts) for r in range(repeats)]
        if repeats == 1:
            with open(os.path.join(directory, name + ".json"), "w") as f:
                json.dump(recs[0], f)
            continue
        sweep = os.path.join(directory, name)
        os.makedirs(sweep)
        for r, rec in enumerate(recs):
            rec["run_number"] = r
            with open(os.path.join(sweep, "run=%d.json" % r), "w") as f:
                json.dump(rec, f)
        with open(os.path.join(sweep, "summary.json"), "w") as f:
            json.dump(recs, f)
    return min(started)


def stamp_results(results, started):
    """perfgate.started_at: the date `baseline record` gives the job."""
    iso = "%s-%s-%sT%s:%s:%sZ" % (started[:4], started[4:6], started[6:8], started[9:11],
                                  started[11:13], started[13:15])
    for name in os.listdir(results):
        path = os.path.join(results, name)
        if not name.endswith(".json"):
            continue
        with open(path) as f:
            doc = json.load(f)
        if not isinstance(doc.get("perfgate"), dict):
            continue
        doc["perfgate"]["started_at"] = iso
        with open(path, "w") as f:
            json.dump(doc, f)


def failing_rows(verdict_path):
    """The rows that failed the step (outcome `fail`): (point, metric,
    change); a whole-run change has the point `whole run`."""
    try:
        with open(verdict_path) as f:
            v = json.load(f)
    except (OSError, ValueError):
        return []
    out = [(r.get("point"), r.get("metric"), r.get("change"))
           for r in v.get("rows", []) if r.get("outcome") == "fail"]
    whole = v.get("whole_run") or []
    out += [("whole run", w.get("metric"), w.get("change"))
            for w in (whole if isinstance(whole, list) else [])
            if w.get("outcome") == "fail"]
    return out


def listed_rerun(verdict_path):
    """The points the gate listed for a confirming re-run."""
    try:
        with open(verdict_path) as f:
            return json.load(f).get("rerun") or []
    except (OSError, ValueError):
        return []


class Night:
    def __init__(self, step, night):
        self.step, self.night = step, night
        self.confirmed_by_next = False
        self.exit = None
        self.failing = []
        self.recorded = False
        self.note = ""
        self.caught_on = None  # a regression night: the night the gate failed on it


def run_step(pipe, step, nights, gpu, log):
    """Every night of one CI step through the CLI: its [Night], and
    [(night, the changes `baseline changes` named that night)]."""
    ref = "refs/perfgate/history-" + rn.slug(step.name)
    out = []
    changes_seen = []  # every change `baseline changes` named, on any night
    base = os.path.join(pipe.work, rn.slug(step.name))
    policy = ["-t", pipe.thresholds] if pipe.thresholds else []
    for k, night in enumerate(nights):
        if night not in pipe.commits:
            raise RuntimeError("night %s has no commit" % night)
        pipe.git("checkout", "-q", pipe.commits[night])
        nd = Night(step.name, night)
        day = os.path.join(base, night)
        inputs, results = os.path.join(day, "in"), os.path.join(day, "results")
        os.makedirs(inputs)
        started = write_inputs(inputs, step, night)
        p = pipe.perfgate_run("import", inputs, "-o", results, "--gpu", gpu)
        if p.returncode:
            raise RuntimeError("perfgate import %s: exit %d: %s" % (inputs, p.returncode,
                                                                   p.stderr.strip()))
        stamp_results(results, started)
        p = pipe.perfgate_run("gate", results, "--baseline", "git", "--ref", ref,
                              "--base", "main", "--gpu", gpu, "--allow-missing", "-q",
                              "-o", os.path.join(day, "gate"), *policy)
        nd.exit = p.returncode
        rerun = listed_rerun(os.path.join(day, "gate", "verdict.json"))
        if pipe.args.confirm == "next" and rerun and k + 1 < len(nights):
            # the re-run the plugin would make, stood in for by the next
            # night's figures: a change that persists reproduces there, a
            # one-night spike does not (the next night may hold a change
            # of its own: an approximation, said in the output)
            c_in, c_out = os.path.join(day, "confirm-in"), os.path.join(day, "confirm")
            os.makedirs(c_in)
            c_started = write_inputs(c_in, step, nights[k + 1])
            p = pipe.perfgate_run("import", c_in, "-o", c_out, "--gpu", gpu)
            if p.returncode:
                raise RuntimeError("perfgate import %s: exit %d: %s" %
                                   (c_in, p.returncode, p.stderr.strip()))
            stamp_results(c_out, c_started)
            p = pipe.perfgate_run("gate", results, "--baseline", "git", "--ref", ref,
                                  "--base", "main", "--gpu", gpu, "--allow-missing", "-q",
                                  "--confirm-dir", c_out,
                                  "-o", os.path.join(day, "gate"), *policy)
            nd.exit = p.returncode
            nd.confirmed_by_next = True
        if p.returncode not in (0, 1):
            nd.note = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""
        nd.failing = failing_rows(os.path.join(day, "gate", "verdict.json"))
        if pipe.args.record == "every" or p.returncode == 0:
            # the plugin writes the comparison into the results it
            # records: what regressed goes into the history with the run
            verdict = os.path.join(day, "gate", "verdict.json")
            if os.path.exists(verdict):
                shutil.copy(verdict, os.path.join(results, "verdict.json"))
            p = pipe.perfgate_run("baseline", "record", results, "--commit", "HEAD",
                                  "--branch", "main", "--ref", ref, "--gpu", gpu,
                                  "--build-url", "replay:%s/%s" % (rn.slug(step.name), night))
            if p.returncode:
                raise RuntimeError("perfgate baseline record: exit %d: %s" %
                                   (p.returncode, p.stderr.strip()))
            nd.recorded = True
        ch = os.path.join(day, "changes.json")
        p = pipe.perfgate_run("baseline", "changes", "--ref", ref, "--gpu", gpu,
                              "--json", ch, *policy)
        if p.returncode == 0 and os.path.exists(ch):
            with open(ch) as f:
                changes_seen.append((night, json.load(f).get("changes", [])))
        out.append(nd)
        if log:
            print("  %s %s: exit %s%s%s" % (step.name, night, nd.exit,
                                           " (recorded)" if nd.recorded else "",
                                           "; " + describe_failing(nd.failing, step)
                                           if nd.failing else ""), flush=True)
    pipe.git("checkout", "-q", "main")
    return out, changes_seen


def describe_failing(rows, step=None):
    names = {rn.perfgate_name(step.name, p): p.split("|")[1] for p in step.points} if step else {}
    out = []
    for point, metric, change in rows[:3]:
        label = names.get(point, point)
        out.append("%s %s %s" % (label, metric,
                                 "%+.1f%%" % (100 * change) if isinstance(change, (int, float))
                                 else ""))
    if len(rows) > 3:
        out.append("%d more" % (len(rows) - 3))
    return ", ".join(out)


# ------------------------------------------------------------------
# ground truth and scoring

def load_truth(args, steps):
    """{(step, night): (kind, changes, reason)}, and where it came from."""
    path = args.truth
    if not path:
        stem = os.path.basename(args.series)
        stem = re.sub(r"(_nightly)?\.csv$", "", stem)
        guess = os.path.join(HERE, stem + "_truth.csv")
        path = guess if os.path.exists(guess) else None
    truth = {}
    if path:
        with open(path, newline="") as f:
            for line, r in enumerate(csv.DictReader(f), start=2):
                if r.get("kind") not in KINDS:
                    raise ValueError("%s:%d: kind %r is not one of %s" %
                                     (path, line, r.get("kind"), ", ".join(KINDS)))
                truth[(r["step"], r["night"])] = (r["kind"], r["changes"], r["reason"])
        return truth, "%s (committed, reviewed)" % show(path)
    for s in steps:
        for night, kind, changes, reason in truth_rule.classify(s):
            truth[(s.name, night)] = (kind, changes, reason)
    return truth, "derived now by bench/replay/truth.py's rule (not reviewed)"


def truth_series(changes):
    """The (point, metric) pairs of a truth row's changes."""
    out = set()
    for c in filter(None, changes.split(";")):
        point, metric, _ = c.rsplit(":", 2)
        out.add((point, metric))
    return out


def named(step, nights, i, series, changes_seen, commits):
    """Did `baseline changes`, on any night, name a change of one of the
    night's series (or of the whole run in one of its metrics) that began
    at night i or one either side?"""
    window = {commits[nights[j]] for j in (i - 1, i, i + 1) if 0 <= j < len(nights)}
    names = {rn.perfgate_name(step.name, p): p for p in step.points}
    metrics = {m for _, m in series}
    for _, changes in changes_seen:
        for c in changes:
            if c.get("kind") != "step" or c.get("last_commit") not in window:
                continue
            point = c.get("point")
            if point is None and c.get("metric") in metrics:
                return True
            if (names.get(point), c.get("metric")) in series:
                return True
    return False


def score(step, outcomes, changes_seen, truth, commits):
    nights = [o.night for o in outcomes]
    by_night = {o.night: o for o in outcomes}
    res = {"flat": [], "false_alarms": [], "regressions": [], "caught": [],
           "change_points": [], "named": [], "errors": []}
    for i, night in enumerate(nights):
        kind, changes, _ = truth.get((step.name, night), ("unknown", "", ""))
        o = by_night[night]
        if o.exit not in (0, 1):
            res["errors"].append(night)
        if kind == "flat":
            res["flat"].append(night)
            if o.exit == 1:
                res["false_alarms"].append(night)
        if kind == "regression":
            res["regressions"].append(night)
            nxt = by_night[nights[i + 1]] if i + 1 < len(nights) else None
            if o.exit == 1 or (nxt and nxt.exit == 1):
                res["caught"].append(night)
                o.caught_on = night if o.exit == 1 else nxt.night
        if kind in ("regression", "step"):
            res["change_points"].append(night)
            if named(step, nights, i, truth_series(changes), changes_seen, commits):
                res["named"].append(night)
    return res


def show(path):
    """A path as typed relative to here when it is below here, else absolute."""
    rel = os.path.relpath(path)
    return os.path.abspath(path) if rel.startswith("..") else rel


def share(k, n):
    return "%d of %d (%s)" % (k, n, "%.0f%%" % (100.0 * k / n) if n else "-")


def wilson(k, n, z=1.959964):
    if not n:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def verdict(k, n, target, at_most):
    if not n:
        return "-"
    rate = k / n
    return "PASS" if (rate <= target if at_most else rate >= target) else "FAIL"


def main(argv):
    args = parse_args(argv)
    if not os.access(args.perfgate, os.X_OK):
        rn.fail("replay: %s: not an executable (build perfgate, or pass --perfgate)" %
                args.perfgate)
    try:
        steps = rn.read_nightly(args.series)
        gpu = rn.read_gpu(args.series)
    except (OSError, ValueError) as e:
        rn.fail("replay: %s" % e)
    chosen = [s for s in steps.values() if not args.step or re.search(args.step, s.name)]
    if not chosen:
        rn.fail("replay: no CI step of %s matches %r" % (args.series, args.step))
    try:
        truth, truth_from = load_truth(args, chosen)
    except (OSError, ValueError) as e:
        rn.fail("replay: %s" % e)
    work = os.path.abspath(args.work) if args.work else tempfile.mkdtemp(prefix="replay-")
    if args.work and os.path.exists(work) and os.listdir(work):
        rn.fail("replay: --work %s: not empty" % work)
    start = time.monotonic()
    try:
        pipe = Pipeline(args, work)
        plan = {s.name: s.nights[:args.nights] if args.nights else s.nights for s in chosen}
        images = {}
        for s in chosen:
            for n in plan[s.name]:
                images.setdefault(n, s.image.get(n, n))
        for n in sorted(images):
            pipe.night_commit(n, images[n])
        results = []
        for s in chosen:
            outcomes, changes_seen = run_step(pipe, s, plan[s.name], gpu, args.verbose)
            results.append((s, outcomes, score(s, outcomes, changes_seen, truth,
                                               pipe.commits)))
        report(args, results, truth, truth_from, gpu, pipe, time.monotonic() - start)
    except (RuntimeError, subprocess.CalledProcessError) as e:
        rn.fail("replay: %s" % e)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


def report(args, results, truth, truth_from, gpu, pipe, seconds):
    total = {k: [] for k in ("flat", "false_alarms", "regressions", "caught", "change_points",
                             "named", "errors")}
    n_nights = sum(len(o) for _, o, _ in results)
    print("replay: %s, %d CI step%s, %d nights on %s; %s; policy: %s; recorded: %s; %s" % (
        os.path.basename(args.series), len(results), "" if len(results) == 1 else "s",
        n_nights, gpu, show(pipe.perfgate),
        args.thresholds or "the defaults",
        "every night (the history follows main)" if args.record == "every"
        else "only nights that exited 0",
        "a listed re-run confirmed by the next night's figures (an approximation of the "
        "plugin's re-run)" if args.confirm == "next"
        else "no re-run (the first run decides)"))
    print("ground truth: %s\n" % truth_from)
    print("| CI step | nights | flat nights | false alarms | regressions | caught | "
          "change points | named | exit 2/3 |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    for s, outcomes, r in results:
        for k in total:
            total[k] += [(s.name, n) for n in r[k]]
        print("| %s | %d | %d | %d | %d | %d | %d | %d | %d |" % (
            s.name.replace("|", "\\|"), len(outcomes), len(r["flat"]), len(r["false_alarms"]),
            len(r["regressions"]), len(r["caught"]), len(r["change_points"]),
            len(r["named"]), len(r["errors"])))
    by = {(s.name, o.night): o for s, outs, _ in results for o in outs}
    steps = {s.name: s for s, _, _ in results}

    def nights(pairs, why=False):
        out = []
        for step, n in pairs:
            o = by[(step, n)]
            extra = ""
            if why and o.failing:
                extra = " (%s)" % describe_failing(o.failing, steps[step])
            elif o.caught_on:
                extra = " (on the night)" if o.caught_on == n else " (the next night)"
            out.append("%s %s%s" % (step, n, extra))
        return "; ".join(out) if out else "none"

    fa, fl = len(total["false_alarms"]), len(total["flat"])
    ca, rg = len(total["caught"]), len(total["regressions"])
    na, cp = len(total["named"]), len(total["change_points"])
    missed = [p for p in total["regressions"] if p not in total["caught"]]
    unnamed = [p for p in total["change_points"] if p not in total["named"]]
    lo, hi = wilson(fa, fl)
    print("\nfalse alarms on flat nights: %s, 95%% interval %.0f-%.0f%%; target <= 5%%: %s" % (
        share(fa, fl), 100 * lo, 100 * hi, verdict(fa, fl, 0.05, True)))
    print("  failed: %s" % nights(total["false_alarms"], True))
    lo, hi = wilson(ca, rg)
    print("regressions (a step >= 5%% worse) caught on the night or the next: %s, "
          "95%% interval %.0f-%.0f%%; target >= 90%%: %s" % (
              share(ca, rg), 100 * lo, 100 * hi, verdict(ca, rg, 0.90, False)))
    print("  caught: %s" % nights(total["caught"]))
    print("  missed: %s" % nights(missed))
    lo, hi = wilson(na, cp)
    print("change points named by `perfgate baseline changes`: %s, 95%% interval %.0f-%.0f%%; "
          "target >= 90%%: %s" % (share(na, cp), 100 * lo, 100 * hi,
                                   verdict(na, cp, 0.90, False)))
    print("  not named: %s" % nights(unnamed))
    if total["errors"]:
        print("exit 2 or 3 (not a verdict): %s" % nights(total["errors"]))
    print("\n%d perfgate calls, %.1f s in perfgate, %.1f s in all" % (pipe.calls, pipe.seconds,
                                                                     seconds))
    print("\n" + truth_rule.RULE)
    if args.json:
        doc = {
            "series": args.series, "gpu": gpu, "record": args.record,
            "thresholds": args.thresholds, "truth": truth_from,
            "false_alarms": {"k": fa, "n": fl, "nights": total["false_alarms"]},
            "caught": {"k": ca, "n": rg, "nights": total["caught"], "missed": missed},
            "named": {"k": na, "n": cp, "nights": total["named"], "missed": unnamed},
            "steps": {s.name: {k: r[k] for k in r} for s, _, r in results},
            "nights": [{"step": s.name, "night": o.night, "exit": o.exit,
                        "recorded": o.recorded, "truth": truth.get((s.name, o.night),
                                                                   ("unknown",))[0],
                        "failing": [{"point": p, "metric": m, "change": c}
                                    for p, m, c in o.failing], "note": o.note}
                       for s, outs, _ in results for o in outs],
        }
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
