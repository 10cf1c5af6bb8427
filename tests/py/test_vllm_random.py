"""perfgate's random streams against the ones vllm bench serve draws from:
the golden file written by tests/unit/check_loadstats.c must hold exactly
what numpy's legacy generator and Python's random module give -- gamma
gaps after np.random.seed, get_request's whole schedule (fixed rate with
its rescale, and ramp-up), random.shuffle after random.seed, and
random.choices after random.seed (maybe_oversample_requests)."""
import json
import os
import random
import sys

import numpy as np

TESTS = os.environ.get("PERFGATE_TESTS", os.path.join(os.path.dirname(__file__), ".."))


def vllm_schedule(n, seed, burstiness, rate=None, ramp=None):
    """get_request's due times: one gap per request at that request's rate,
    cumulative, rescaled to n/rate when the rate is fixed."""
    np.random.seed(seed)
    due = []
    for i in range(n):
        if ramp:
            strategy, start, end = ramp
            progress = i / max(n - 1, 1)
            r = start + (end - start) * progress if strategy == "linear" else start * (end / start) ** progress
        else:
            r = rate
        due.append(np.random.gamma(shape=burstiness, scale=1.0 / (r * burstiness)))
    for i in range(1, n):
        due[i] += due[i - 1]
    if not ramp and due[-1] != 0:
        factor = n / rate / due[-1]
        due = [d * factor for d in due]
    return due


def words(text):
    """The tests' tokenizer: one token per space-separated word."""
    return len([w for w in text.split(" ") if w])


def vllm_sharegpt(data, n, seed):
    """vLLM's ShareGPTDataset: load_data's filter and seeded shuffle, sample's
    length filters, maybe_oversample_requests' seeded choices."""
    data = [e for e in data if "conversations" in e and len(e["conversations"]) >= 2]
    random.seed(seed)
    random.shuffle(data)
    picked = []
    for entry in data:
        if len(picked) >= n:
            break
        conv = entry["conversations"]
        prompt, completion = conv[0].get("value"), conv[1].get("value")
        if not isinstance(prompt, str) or not isinstance(completion, str):
            continue
        plen, olen = words(prompt), words(completion)
        if plen < 4 or olen < 4 or plen > 1024 or plen + olen > 2048:
            continue
        picked.append((prompt, plen, olen))
    if len(picked) < n:
        random.seed(seed)
        picked += random.choices(picked, k=n - len(picked))
    return picked


def main():
    with open(os.path.join(TESTS, "golden/loadgen/vllm_random.json")) as f:
        got = json.load(f)
    failures = checks = 0

    def check(what, want, have):
        nonlocal failures, checks
        checks += 1
        if [float(x) for x in want] != [float(x) for x in have]:
            bad = next(i for i, (a, b) in enumerate(zip(want, have)) if float(a) != float(b))
            print(f"{what}: first difference at {bad}: python {want[bad]!r} perfgate {have[bad]!r}")
            failures += 1

    for case in got["gamma"]:
        np.random.seed(case["seed"])
        want = [np.random.gamma(shape=case["shape"], scale=case["scale"]) for _ in case["draws"]]
        check(f"gamma seed {case['seed']} shape {case['shape']}", want, case["draws"])
    for case in got["schedules"]:
        ramp = (case["ramp"], case["start"], case["end"]) if "ramp" in case else None
        want = vllm_schedule(len(case["due"]), case["seed"], case["burstiness"], case.get("rate"), ramp)
        check(f"schedule {case}"[:80], want, case["due"])
    for case in got["shuffles"]:
        data = list(range(case["n"]))
        random.seed(case["seed"])
        random.shuffle(data)
        check(f"shuffle seed {case['seed']} n {case['n']}", data, case["permutation"])
    for case in got["choices"]:
        random.seed(case["seed"])
        want = random.choices(range(case["n"]), k=len(case["picks"]))
        check(f"choices seed {case['seed']} n {case['n']}", want, case["picks"])
    with open(os.path.join(TESTS, "data/loadgen/sharegpt.json")) as f:
        sharegpt = json.load(f)
    with open(os.path.join(TESTS, "golden/loadgen/sharegpt_sample.json")) as f:
        samples = json.load(f)
    for case in samples:
        want = vllm_sharegpt(sharegpt, case["n"], case["seed"])
        checks += 1
        if want != [tuple(x) for x in case["picked"]]:
            print(f"sharegpt seed {case['seed']}: python {want} perfgate {case['picked']}")
            failures += 1
    print(f"{checks - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
