"""perfgate's serving statistics against numpy, the library vLLM computes
them with: the golden files written by tests/unit/check_loadstats.c must
equal what numpy and vLLM's calculate_metrics give for the same inputs."""
import json
import os
import sys

import numpy as np

TESTS = os.environ.get("PERFGATE_TESTS", os.path.join(os.path.dirname(__file__), ".."))


def load(rel):
    with open(os.path.join(TESTS, rel)) as f:
        return json.load(f)


def parity_value(i):
    return ((i * 7919) % 1009) / 997.0 + i * 1e-3 + 1.0 / (i + 3)


def check_parity():
    failures = 0
    for case in load("golden/loadgen/numpy_parity.json"):
        x = np.array([parity_value(i) for i in range(case["n"])])
        want = {"sum": np.sum(x), "mean": np.mean(x), "median": np.median(x), "std": np.std(x)}
        for key, p in case["percentiles"].items():
            want["p" + key] = np.percentile(x, float(key))
        got = dict(case, **{"p" + k: v for k, v in case["percentiles"].items()})
        for key, value in want.items():
            if float(value) != got[key]:
                print(f"n={case['n']} {key}: perfgate {got[key]!r} numpy {float(value)!r}")
                failures += 1
    return failures


def chunk_times(req):
    """Content-message times of a recorded request, read the way vLLM does."""
    times, usage, buf = [], {}, ""
    for t, text in req["body"]:
        buf += text
        while "\n\n" in buf:
            msg, buf = buf.split("\n\n", 1)
            if msg.startswith(":"):
                continue
            data = msg[5:].lstrip(" ") if msg.startswith("data:") else msg
            if data == "[DONE]":
                continue
            obj = json.loads(data)
            if obj.get("choices"):
                times.append(t)
            elif obj.get("usage"):
                usage = obj["usage"]
    return times, usage


def check_trace():
    trace = load("data/loadgen/trace.json")
    got = load("golden/loadgen/trace_metrics.json")
    ttfts, tpots, itls, e2els = [], [], [], []
    total_in = total_out = 0
    for req in trace["requests"]:
        if req["status"] != 200 or req["transport"] != "none":
            continue
        times, usage = chunk_times(req)
        st = req["sent_ns"]
        ttft = (times[0] - st) / 1e9
        lat = (times[-1] - st) / 1e9
        out = usage["completion_tokens"]
        total_in += usage["prompt_tokens"]
        total_out += out
        if out > 1:
            tpots.append((lat - ttft) / (out - 1))
        itls += [(b - a) / 1e9 for a, b in zip(times, times[1:])]
        ttfts.append(ttft)
        e2els.append(lat)
    dur = trace["duration_ns"] / 1e9
    want = {"total_input_tokens": total_in, "total_output_tokens": total_out,
            "request_throughput": len(ttfts) / dur, "output_throughput": total_out / dur,
            "total_token_throughput": (total_in + total_out) / dur}
    for name, xs in (("ttft", ttfts), ("tpot", tpots), ("itl", itls), ("e2el", e2els)):
        xs = xs or 0
        want[f"mean_{name}_ms"] = np.mean(xs) * 1000
        want[f"median_{name}_ms"] = np.median(xs) * 1000
        want[f"std_{name}_ms"] = np.std(xs) * 1000
        for p in (50, 99):
            want[f"p{p}_{name}_ms"] = np.percentile(xs, p) * 1000
    failures = 0
    for key, value in want.items():
        if float(value) != got[key]:
            print(f"trace {key}: perfgate {got[key]!r} numpy {float(value)!r}")
            failures += 1
    return failures


if __name__ == "__main__":
    failures = check_parity() + check_trace()
    print(f"{0 if failures else 2} passed, {1 if failures else 0} failed")
    sys.exit(1 if failures else 0)
