#!/usr/bin/python3
"""Writes the gate's test runs: small results directories of one H100 job each.

Deterministic (no randomness): every run is the base levels times a per-run
offset times a per-repeat pattern. Rerun after changing it and commit the output:

    /usr/bin/python3 tests/data/gate/make_runs.py tests/data/gate
"""
import json
import os
import sys

PATTERNS = [
    [1.000, 1.012, 0.991, 1.006, 0.995],
    [0.996, 1.003, 1.010, 0.992, 1.001],
    [1.008, 0.994, 0.999, 1.004, 0.990],
]

SERVING = {
    "request_throughput": ("up", 3.78),
    "output_throughput": ("up", 2418.0),
    "total_token_throughput": ("up", 3865.0),
    "mean_ttft_ms": ("down", 16.2), "median_ttft_ms": ("down", 15.9), "p99_ttft_ms": ("down", 22.1),
    "mean_tpot_ms": ("down", 8.41), "median_tpot_ms": ("down", 8.39), "p99_tpot_ms": ("down", 9.0),
    "mean_itl_ms": ("down", 8.41), "median_itl_ms": ("down", 8.40), "p99_itl_ms": ("down", 9.1),
    "mean_e2el_ms": ("down", 1500.0), "median_e2el_ms": ("down", 1450.0), "p99_e2el_ms": ("down", 2900.0),
}


def scale(direction, level, factor):
    """factor > 1 means worse."""
    return level / factor if direction == "up" else level * factor


def serving(point, qps, base_scale, worse, pattern):
    reps = []
    for m in pattern:
        r = {"completed": 200}
        for key, (d, level) in SERVING.items():
            lv = level * base_scale if key.endswith("throughput") else level
            r[key] = round(scale(d, lv, worse.get(key, 1.0) * m), 6)
        reps.append(r)
    top = {k: sorted(r[k] for r in reps)[2] for k in reps[0]}
    return {
        "date": "20261122-130000", "backend": "vllm", "model_id": "meta-llama/Llama-3.1-8B-Instruct",
        "num_prompts": 200, "request_rate": qps, "burstiness": 1.0, "max_concurrency": None,
        **top,
    }, reps


def latency(worse, pattern):
    reps = []
    for m in pattern:
        f = worse * m
        reps.append({"avg_latency": round(1.0469 * f, 6),
                     "percentiles": {"50": round(1.0468 * f, 6), "90": round(1.0475 * f, 6),
                                     "99": round(1.0483 * f, 6)}})
    top = dict(reps[2])
    top["latencies"] = [reps[2]["avg_latency"]] * 3
    return top, reps


def throughput(worse, pattern):
    reps = [{"requests_per_second": round(21.62 / (worse * m), 6),
             "tokens_per_second": round(9081.0 / (worse * m), 6)} for m in pattern]
    top = dict(reps[2])
    top.update({"elapsed_time": 9.25, "num_requests": 200, "total_num_tokens": 84000})
    return top, reps


def write(root, run, name, suite, test, body, reps, status="ok", error=None, qps=None):
    d = os.path.join(root, run)
    os.makedirs(d, exist_ok=True)
    body = dict(body)
    body["perfgate"] = {
        "version": "0.1.0", "suite": suite, "test": test, "point": name, "status": status, "error": error,
        "gpu": {"key": "H100", "name": "NVIDIA H100 80GB HBM3", "count": 1, "label": "1xH100",
                "source": "nvidia-smi"},
        "git": {"commit": "0123456789abcdef0123456789abcdef01234567", "branch": "main", "dirty": False},
        "params": {"model": "meta-llama/Llama-3.1-8B-Instruct", "tp": 1, "qps": qps, "max_concurrency": None},
        "started_at": "2026-11-22T13:00:00Z",
        "repeats": reps,
    }
    with open(os.path.join(d, name + ".json"), "w") as f:
        json.dump(body, f, indent=4)
        f.write("\n")


def run(root, name, pattern, tput_scale=1.0, inf_worse=None, lat_worse=1.0, thr_worse=1.0,
        broken=False):
    inf_worse = inf_worse or {}
    p = PATTERNS[pattern]
    body, reps = latency(lat_worse, p)
    write(root, name, "latency_llama8B_tp1", "latency", "latency_llama8B_tp1", body, reps)
    if not broken:
        body, reps = throughput(thr_worse, p)
        write(root, name, "throughput_llama8B_tp1", "throughput", "throughput_llama8B_tp1", body, reps)
    body, reps = serving("q4", 4, tput_scale, {}, p)
    if broken:
        write(root, name, "serving_llama8B_tp1_sharegpt_qps_4", "serving", "serving_llama8B_tp1_sharegpt",
              {"date": "20261122-130000", "request_rate": 4}, [], status="error",
              error="server never became ready (1200 s)", qps=4)
    else:
        write(root, name, "serving_llama8B_tp1_sharegpt_qps_4", "serving", "serving_llama8B_tp1_sharegpt",
              body, reps, qps=4)
    body, reps = serving("inf", "inf", 2.5 * tput_scale, inf_worse, p)
    write(root, name, "serving_llama8B_tp1_sharegpt_qps_inf", "serving", "serving_llama8B_tp1_sharegpt",
          body, reps, qps="inf")


def main():
    root = sys.argv[1]
    run(root, "base", 0)
    run(root, "same", 1, lat_worse=1.004, thr_worse=1.003)
    slow = {"output_throughput": 1.10, "request_throughput": 1.10, "total_token_throughput": 1.10,
            "median_ttft_ms": 1.12, "mean_ttft_ms": 1.12, "p99_ttft_ms": 1.25, "median_tpot_ms": 1.02}
    run(root, "slow", 1, inf_worse=slow, lat_worse=1.01)
    run(root, "slow-confirm", 2, inf_worse=slow, lat_worse=1.008)
    # looks 3.5% slower once, then the re-run is normal: pooled, it is not a regression
    flaky = {"output_throughput": 1.035}
    run(root, "flaky", 1, inf_worse=flaky)
    run(root, "flaky-confirm", 2)
    run(root, "broken", 1, broken=True)


if __name__ == "__main__":
    main()
