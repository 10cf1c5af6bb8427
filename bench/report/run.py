#!/usr/bin/python3
"""Time `perfgate report` on 10,000 result files, `perfgate baseline update`
and `perfgate compare` on the same files against a 10,000-point thresholds
file, `perfgate compare` on 10,000 points with 5 repeats each, and
`perfgate import` on a 10,000-record JSON-lines file.

usage: bench/report/run.py [PERFGATE_BIN] [--points N] [--repeat R]

Generates a vLLM-style results directory (latency, throughput and serving
points in the ratio 1:1:8, each with its .commands sidecar, serving files with
vLLM's full key set), runs the command R times and prints the wall time
(min and median), its CPU time (user + system, min; steadier than wall time
on a shared machine) and the peak RSS of the child, measured with wait4(2)
(this process stays small: a forked child reports its parent's RSS as its
own high-water mark).
Build perfgate without sanitizers for meaningful figures:
  cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release && cmake --build build-rel -j2
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time

GPU = "\n".join(["H100"] * 8)


def serving(i, qps):
    f = 1.0 + (i % 97) / 101.0
    return {
        "date": "20250526-040420", "endpoint_type": "vllm", "backend": "vllm", "label": None,
        "model_id": f"org/model-{i % 13}", "tokenizer_id": f"org/model-{i % 13}", "num_prompts": 200,
        "request_rate": qps, "burstiness": 1.0, "max_concurrency": None, "duration": 52.7 * f,
        "completed": 200, "failed": 0, "total_input_tokens": 42659, "total_output_tokens": 43096,
        "request_throughput": 3.7884651431476093 * f, "request_goodput": None,
        "output_throughput": 816.3387653034456 * f, "total_token_throughput": 1624.3880016453015 * f,
        "max_output_tokens_per_s": 1329.0, "max_concurrent_requests": 19,
        **{f"{s}_{m}_ms": v * f for m, v in [("ttft", 16.159555234998856), ("tpot", 8.41121011599131),
                                            ("itl", 8.396122125006697)]
           for s in ["mean", "median", "std", "p99"]},
    }


def generate(root, n):
    os.makedirs(root)
    kinds = ["latency"] + ["throughput"] + ["serving"] * 8
    qps_list = [1, 4, 16, "inf"]
    for i in range(n):
        kind = kinds[i % len(kinds)]
        f = 1.0 + (i % 89) / 97.0
        if kind == "latency":
            name = f"latency_model{i}_tp1"
            result = {"avg_latency": 1.0469095210234325 * f, "std_latency": 0.00084,
                      "latencies": [1.04 * f] * 15,
                      "percentiles": {p: (1.04 + int(p) / 10000) * f for p in ["10", "25", "50", "75", "90", "99"]}}
            commands = {"latency_command": f"vllm bench latency --model org/model-{i % 13} --tensor-parallel-size 1 --load-format dummy --num-iters-warmup 5 --num-iters 15", "gpu_type": GPU}
        elif kind == "throughput":
            name = f"throughput_model{i}_tp1"
            result = {"elapsed_time": 9.25 * f, "num_requests": 200, "total_num_tokens": 85680,
                      "requests_per_second": 21.620062820024827 / f, "tokens_per_second": 9262.03 / f}
            commands = {"throughput_command": f"vllm bench throughput --model org/model-{i % 13} --dataset ./ShareGPT_V3_unfiltered_cleaned_split.json --num-prompts 200", "gpu_type": GPU}
        else:
            qps = qps_list[i % 4]
            name = f"serving_model{i // 4}_tp1_sharegpt_qps_{qps}"
            result = serving(i, qps)
            commands = {"server_command": f"vllm serve org/model-{i % 13} --tensor-parallel-size 1 --load-format dummy",
                        "client_command": f"vllm bench serve --save-result --request-rate {qps} --model org/model-{i % 13} --dataset-name sharegpt --dataset-path ./ShareGPT_V3_unfiltered_cleaned_split.json --num-prompts 200",
                        "gpu_type": GPU}
        with open(os.path.join(root, name + ".json"), "w") as f_:
            json.dump(result, f_, indent=4)
        with open(os.path.join(root, name + ".commands"), "w") as f_:
            json.dump(commands, f_, indent=4)


def measure(argv, repeat):
    """(min wall, median wall, min CPU = user + system, peak RSS KiB) of R runs."""
    walls, cpus, rss = [], [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        walls.append(time.perf_counter() - start)
        cpus.append(usage.ru_utime + usage.ru_stime)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err = proc.stderr.read().decode()
        proc.stderr.close()
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(argv)}: exit {proc.returncode}\n{err}")
        rss = max(rss, usage.ru_maxrss)
    return min(walls), statistics.median(walls), min(cpus), rss


def report(what, argv, repeat, extra=""):
    lo, med, cpu, rss = measure(argv, repeat)
    print(f"{what}: wall min {lo * 1000:.0f} ms, median {med * 1000:.0f} ms (of {repeat}); "
          f"CPU min {cpu * 1000:.0f} ms; peak RSS {rss / 1024:.1f} MiB{extra() if extra else ''}")


def generate_repeats(root, n, repeats=5):
    """Serving results of perfgate's own shape: perfgate.repeats holds every
    repeat, the top level their medians (what `repeat: 5` writes)."""
    os.makedirs(root)
    keys = ["request_throughput", "output_throughput", "total_token_throughput"] + \
        [f"{s}_{m}_ms" for m in ["ttft", "tpot", "itl"] for s in ["mean", "median", "p99"]]
    for i in range(n):
        reps = [{k: 100.0 * (1 + ((i * 7 + r * 13 + j) % 17 - 8) / 400.0) for j, k in enumerate(keys)}
                for r in range(repeats)]
        result = {k: sorted(rep[k] for rep in reps)[repeats // 2] for k in keys}
        result.update(request_rate=4, completed=200,
                      perfgate={"suite": "serving", "status": "ok",
                                "gpu": {"name": "NVIDIA H100 80GB HBM3", "label": "8xH100"},
                                "repeats": reps})
        with open(os.path.join(root, f"serving_model{i}_tp1_random_qps_4.json"), "w") as f:
            json.dump(result, f)


def rows_in(verdict):
    """The row count, from the head of verdict.json: loading all of it here
    would grow this process, and a child forked from it starts with (and
    reports in ru_maxrss) its parent's high-water mark."""
    with open(verdict) as f:
        return int(re.search(r'"comparisons": (\d+)', f.read(4096)).group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin", nargs="?", default="build/perfgate")
    ap.add_argument("--points", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="perfgate-bench-")
    try:
        results = os.path.join(tmp, "results")
        t0 = time.perf_counter()
        generate(results, args.points)
        print(f"generated {args.points} result files (+ .commands) in {time.perf_counter() - t0:.1f} s")
        size = lambda path, name: lambda: f"; {name} {os.path.getsize(path) / 1e6:.1f} MB"
        out = os.path.join(tmp, "out")
        report(f"perfgate report, {args.points} results", [args.bin, "report", results, "-o", out],
               args.repeat, size(os.path.join(out, "benchmark_results.md"), "benchmark_results.md"))

        thresholds = os.path.join(tmp, "thresholds")
        report(f"perfgate baseline update, {args.points} results",
               [args.bin, "baseline", "update", thresholds, "--gpu", "H100", "--from", results],
               args.repeat, size(os.path.join(thresholds, "H100.yml"), "H100.yml"))
        compared = os.path.join(tmp, "compared")
        verdict = os.path.join(compared, "verdict.json")
        report(f"perfgate compare, {args.points} points",
               [args.bin, "compare", results, "--thresholds", thresholds, "-o", compared],
               args.repeat, lambda: f"; {rows_in(verdict)} rows, verdict.json "
                                    f"{os.path.getsize(verdict) / 1e6:.1f} MB")

        # 5 repeats per point on both sides: the samples, the U test, a
        # thresholds file four times larger
        rep = os.path.join(tmp, "repeats")
        generate_repeats(rep, args.points)
        rep_thresholds = os.path.join(tmp, "rep-thresholds")
        subprocess.run([args.bin, "baseline", "update", rep_thresholds, "--gpu", "H100", "--from", rep],
                       check=True, capture_output=True)
        report(f"perfgate compare, {args.points} points with 5 repeats on both sides",
               [args.bin, "compare", rep, "--thresholds", rep_thresholds, "-o", compared,
                "--gpu", "H100"],
               args.repeat, size(os.path.join(rep_thresholds, "H100.yml"), "H100.yml"))

        jsonl = os.path.join(tmp, "runs.jsonl")
        with open(jsonl, "w") as f:
            for i in range(args.points):
                f.write(json.dumps(serving(i, [1, 4, 16, "inf"][i % 4])) + "\n")
        report(f"perfgate import, {args.points}-record JSON lines",
               [args.bin, "import", jsonl, "-o", os.path.join(tmp, "imported")], args.repeat)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
