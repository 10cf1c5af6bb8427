"""Write a perfgate results directory for the bats suites.

    make_results.py DIR [--points N] [--hostile] [--error NAME]

Default: one serving sweep (qps 1, 4, 16, inf), a latency and a throughput
test. --points N adds N more serving points (one test each, so every one is
a table row); --hostile adds a test whose name tries to break tables and
inject HTML; --error marks a point as failed.
"""
import argparse
import json
import os

p = argparse.ArgumentParser()
p.add_argument("dir")
p.add_argument("--points", type=int, default=0)
p.add_argument("--hostile", action="store_true")
p.add_argument("--error", action="append", default=[])
p.add_argument("--scale", type=float, default=1.0,
               help="multiply serving performance (0.9: 10%% slower everywhere)")
a = p.parse_args()
os.makedirs(a.dir, exist_ok=True)

GPU = {"key": "H100", "label": "8xH100", "name": "NVIDIA H100 80GB HBM3", "count": 8}


def serving(test, qps, scale=1.0):
    q = "inf" if qps == "inf" else qps
    base = 4000.0 if qps == "inf" else min(200.0 * qps, 3000.0)
    return {
        "date": "20261122-130000", "backend": "vllm", "model_id": "meta-llama/Llama-3.1-8B-Instruct",
        "num_prompts": 200, "request_rate": q, "burstiness": 1.0, "max_concurrency": None,
        "duration": 10.0, "completed": 200, "failed": 0,
        "request_throughput": base / 200 * scale, "output_throughput": base * scale,
        "total_token_throughput": base * 2 * scale,
        "mean_ttft_ms": 30.0 / scale, "median_ttft_ms": 28.0 / scale, "p99_ttft_ms": 90.0 / scale,
        "mean_tpot_ms": 9.0 / scale, "median_tpot_ms": 8.8 / scale, "p99_tpot_ms": 14.0 / scale,
        "mean_itl_ms": 9.0, "median_itl_ms": 8.7, "p99_itl_ms": 20.0,
        "perfgate": {"suite": "serving", "test": test, "status": "ok", "error": None, "gpu": GPU,
                     "params": {"model": "meta-llama/Llama-3.1-8B-Instruct", "tp": 1,
                                "dataset": "sharegpt", "num_prompts": 200, "qps": q,
                                "max_concurrency": None}},
    }


def write(name, obj):
    if name in a.error:
        obj["perfgate"]["status"] = "error"
        obj["perfgate"]["error"] = "server exited with status 1 before it was ready"
    with open(os.path.join(a.dir, name + ".json"), "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=4)


for q in (1, 4, 16, "inf"):
    write("serving_llama8B_tp1_sharegpt_qps_%s" % q, serving("serving_llama8B_tp1_sharegpt", q, a.scale))
write("latency_llama8B_tp1", {
    "avg_latency": 0.9247, "std_latency": 0.01, "latencies": [0.92, 0.93],
    "percentiles": {"10": 0.9, "25": 0.91, "50": 0.9188, "75": 0.93, "90": 0.95, "99": 1.0123},
    "perfgate": {"suite": "latency", "status": "ok", "gpu": GPU,
                 "params": {"model": "meta-llama/Llama-3.1-8B-Instruct", "tp": 1, "input_len": 32,
                            "output_len": 128, "batch_size": 8}}})
write("throughput_llama8B_tp1", {
    "elapsed_time": 43.8, "num_requests": 1000, "total_num_tokens": 400000,
    "requests_per_second": 22.84, "tokens_per_second": 9736.2, "output_tokens_per_second": 4521.9,
    "perfgate": {"suite": "throughput", "status": "ok", "gpu": GPU,
                 "params": {"model": "meta-llama/Llama-3.1-8B-Instruct", "tp": 1, "input_len": 1000,
                            "output_len": 200, "num_prompts": 1000}}})
if a.hostile:
    # a file name cannot hold '/', the test name in the result can
    name = "serving_x|y<details><script>alert(1)<img src=x>`z`"
    write(name + "_qps_1", serving(name + "</details></script>", 1))
for i in range(a.points):
    test = "serving_llama8B_tp1_sharegpt_variant_%05d" % i
    write(test + "_qps_4", serving(test, 4, a.scale * (1.0 + i * 1e-5)))
