#!/usr/bin/env python3
"""A large run history in git, in perfgate's format (baseline/history.h).

  make_history.py REPO POINTS RUNS [GPUS]

Writes one commit on refs/perfgate/history of a new repository REPO whose
tree holds <gpu>/<point>.jsonl, RUNS lines per point: what RUNS `perfgate
baseline record` calls leave there, written at once through
`git fast-import` (recording 200 runs of 10,000 points one by one would
take hours and change nothing the renderer reads). Every line has the 15
serving metrics a real record has, one repeat each; levels drift with a
seeded noise, every 10th point steps 8% worse in output throughput three
quarters of the way through, every job has a small common offset.
"""
import json
import random
import subprocess
import sys

METRICS = {
    "request_throughput": 3.8, "output_throughput": 2418.0, "total_token_throughput": 3865.0,
    "mean_ttft_ms": 16.2, "median_ttft_ms": 15.9, "p99_ttft_ms": 22.1,
    "mean_tpot_ms": 8.41, "median_tpot_ms": 8.39, "p99_tpot_ms": 9.0,
    "mean_itl_ms": 8.41, "median_itl_ms": 8.4, "p99_itl_ms": 9.1,
    "mean_e2el_ms": 1500.0, "median_e2el_ms": 1450.0, "p99_e2el_ms": 2900.0,
}
HIGHER = {"request_throughput", "output_throughput", "total_token_throughput"}


def main():
    repo, points, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    gpus = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    rng = random.Random(1)
    subprocess.run(["git", "init", "-q", "--bare", repo], check=True)
    fi = subprocess.Popen(["git", "-C", repo, "fast-import", "--quiet"], stdin=subprocess.PIPE)
    out = fi.stdin
    commits = ["%040x" % rng.getrandbits(160) for _ in range(runs)]
    offsets = [rng.gauss(0, 0.004) for _ in range(runs)]
    paths = []
    mark = 0
    for g in range(gpus):
        gpu = "H100" if gpus == 1 else "GPU%d" % g
        for p in range(points // gpus):
            test = "serving_model%d_tp1_sharegpt" % (p // 4)
            point = "%s_qps_%d" % (test, 1 << (p % 4))
            level = {k: v * (1 + 0.3 * (p % 7)) for k, v in METRICS.items()}
            lines = []
            for r in range(runs):
                ms = {}
                for k, v in level.items():
                    x = v * (1 + offsets[r] + rng.gauss(0, 0.01))
                    if p % 10 == 0 and k == "output_throughput" and r >= runs * 3 // 4:
                        x *= 0.92
                    ms[k] = [round(x, 4)]
                lines.append(json.dumps({
                    "format": 1, "commit": commits[r],
                    "date": "2026-%02d-%02dT%02d:00:00Z" % (1 + r // 28 % 12, 1 + r % 28, r % 24),
                    "build_url": "https://buildkite.com/org/perf/builds/%d" % (1000 + r),
                    "branch": "main", "gpu": "1x" + gpu, "suite": "serving", "point": point,
                    "test": test, "qps": 1 << (p % 4), "max_concurrency": None, "repeats": 1,
                    "run": "agent-%d@2026-01-01T00:00:%02dZ" % (r, r % 60),
                    "metrics": ms}))
            data = ("\n".join(lines) + "\n").encode()
            mark += 1
            out.write(b"blob\nmark :%d\ndata %d\n" % (mark, len(data)))
            out.write(data)
            out.write(b"\n")
            paths.append(("%s/%s.jsonl" % (gpu, point), mark))
    msg = b"history"
    out.write(b"commit refs/perfgate/history\n")
    out.write(b"committer perfgate <perfgate@example.com> 1764000000 +0000\n")
    out.write(b"data %d\n%s\n" % (len(msg), msg))
    for path, m in paths:
        out.write(b"M 100644 :%d %s\n" % (m, path.encode()))
    out.write(b"\n")
    out.close()
    if fi.wait():
        sys.exit("git fast-import failed")


if __name__ == "__main__":
    main()
