"""Write a concurrency ladder of serving results for tails.bats.

    make_ladder.py DIR [--speed F] [--n N] [--tp T] [--noise S] [--seed K]

One test, serving_ladder, at concurrency 1, 2, 4 ... 128 (qps inf), from
the mock engine's timing model: TPOT = 8 ms x (1 + 0.01 (c - 1)) / speed,
TTFT = 20 ms x (1 + 0.02 c) / speed, 128 output tokens; --speed 0.97 is an
engine 3% slower everywhere. --noise S multiplies each point's speed by
exp(S z), z a seeded normal draw (one per point). Each result carries
perfgate.certified (n requests: p99 certified from 662), SLO attainment
for TTFT <= 100 ms and TPOT <= 12 ms, and perfgate.params with tp.
"""
import argparse
import json
import math
import os
import random

p = argparse.ArgumentParser()
p.add_argument("dir")
p.add_argument("--speed", type=float, default=1.0)
p.add_argument("--n", type=int, default=1000)
p.add_argument("--tp", type=int, default=1)
p.add_argument("--noise", type=float, default=0.0)
p.add_argument("--seed", type=int, default=1)
a = p.parse_args()
os.makedirs(a.dir, exist_ok=True)
rnd = random.Random(a.seed)

GPU = {"key": "H100", "label": "%dxH100" % a.tp, "name": "NVIDIA H100 80GB HBM3", "count": a.tp}
OSL, ISL = 128, 512
TEST = "serving_ladder"

for c in (1, 2, 4, 8, 16, 32, 64, 128):
    speed = a.speed * math.exp(a.noise * rnd.gauss(0, 1))
    tpot = 8.0 * (1 + 0.01 * (c - 1)) / speed
    ttft = 20.0 * (1 + 0.02 * c) / speed
    e2el = ttft + (OSL - 1) * tpot
    rps = c / (e2el / 1000.0)
    n = a.n
    # a few slow requests: the tails stretch with the load
    p99_ttft, p99_tpot = ttft * (1.8 + 0.004 * c), tpot * 1.25
    certified = n >= 662
    name = "%s_qps_inf_concurrency_%d" % (TEST, c)
    att_ttft = 1.0 if 100 >= p99_ttft else 0.985
    att_tpot = 1.0 if 12 >= tpot * 1.1 else max(0.0, 1 - (tpot * 1.1 - 12) / 6)
    r = {
        "date": "20261122-130000", "backend": "openai", "model_id": "perfgate-mock",
        "num_prompts": n, "request_rate": "inf", "burstiness": 1.0, "max_concurrency": c,
        "duration": n / rps, "completed": n, "failed": 0,
        "total_input_tokens": n * ISL, "total_output_tokens": n * OSL,
        "request_throughput": rps, "request_goodput": rps * min(att_ttft, att_tpot),
        "output_throughput": rps * OSL, "total_token_throughput": rps * (OSL + ISL),
        "mean_ttft_ms": ttft * 1.1, "median_ttft_ms": ttft, "std_ttft_ms": ttft * 0.2,
        "p99_ttft_ms": p99_ttft,
        "mean_tpot_ms": tpot * 1.01, "median_tpot_ms": tpot, "std_tpot_ms": tpot * 0.05,
        "p99_tpot_ms": p99_tpot,
        "mean_itl_ms": tpot * 1.01, "median_itl_ms": tpot, "std_itl_ms": tpot * 0.3,
        "p99_itl_ms": tpot * 2.5,
        "slo_attainment": min(att_ttft, att_tpot), "slo_attainment_ttft": att_ttft,
        "slo_attainment_tpot": att_tpot,
        "token_goodput": rps * OSL * min(att_ttft, att_tpot),
        "perfgate": {
            "version": "0.1.0", "suite": "serving", "test": TEST, "point": name,
            "status": "ok", "error": None, "gpu": GPU,
            "params": {"model": "perfgate-mock", "tp": a.tp, "dataset": "random",
                       "input_len": ISL, "output_len": OSL, "num_prompts": n, "qps": "inf",
                       "max_concurrency": c, "batch_size": None,
                       "slo": {"ttft_ms": 100.0, "tpot_ms": 12.0},
                       "endpoint": "/v1/completions"},
            "certified": {
                "method": "mlperf-early-stopping", "confidence": 0.99,
                "ttft": {"n": n, "p50": ttft * 1.02, "p99": p99_ttft * 1.05 if certified else None},
                "tpot": {"n": n, "p50": tpot * 1.01, "p99": p99_tpot * 1.04 if certified else None},
                "itl": {"n": n * (OSL - 1), "p50": tpot * 1.01, "p99": tpot * 2.6},
            },
        },
    }
    with open(os.path.join(a.dir, name + ".json"), "w", encoding="utf-8") as f:
        json.dump(r, f, indent=4)
