#!/usr/bin/env bats
# Warm-up and cold first runs (docs/suite.md), for real: the mock server
# slows its first requests after a start (--cold-requests), as a real
# engine's first use does; the default warm-up absorbs it, a run without
# one has a cold first repeat, which is flagged, left out of the point's
# values, of the gate's samples, of baselines and of the history, and
# named in the log, the summary, the report and the gate's comment.
# Imported repeats get the same check.

load helpers
bats_require_minimum_version 1.5.0

unset BUILDKITE BUILDKITE_COMMIT BUILDKITE_BRANCH BUILDKITE_BUILD_URL PERFGATE_GPU

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# A serving test of $2 repeats (default 3) against a mock whose first $1
# requests after its start are 3 times slower; more test keys on stdin.
cold_suite() {
	cat <<YML
serving:
  - name: serving_cold
    model: perfgate-mock
    server:
      command: perfgate mock-server --port {port} --model {model} --ttft-ms 20 --itl-ms 2 --cold-requests $1 --cold-slowdown 2
      ready: /health
      ready_timeout: 30
    dataset: {name: random, input_len: 16, output_len: 16}
    num_prompts: 20
    max_concurrency: [4]
    repeat: ${2:-3}
YML
	cat
}

@test "the default warm-up absorbs a cold start, and the result says it ran" {
	cold_suite 10 >suite.yml </dev/null
	run --separate-stderr timeout 60 "$PERFGATE_BIN" run suite.yml -o res --gpu H100
	echo "$stderr"
	assert_success
	[[ "$stderr" == *"  warm-up: 10 requests, "*" s, unmeasured"* ]]
	[[ "$stderr" != *"repeat 1 of"* ]]
	"$PERFGATE_PYTHON" - <<'PY'
import json
r = json.load(open("res/serving_cold_qps_inf_concurrency_4.json"))
w = r["perfgate"]["warmup"]
assert w["kind"] == "requests" and w["requests"] == 10 and w["failed"] == 0, w
# 10 requests of 3 x (20 + 15 x 2) ms, 4 at a time: three rounds
assert 0.3 < w["seconds"] < 5, w
assert "cold_repeat" not in r["perfgate"], r["perfgate"]
ttfts = [x["median_ttft_ms"] for x in r["perfgate"]["repeats"]]
assert max(ttfts) < 2 * min(ttfts), ttfts  # the cold start was 3 x
PY
}

@test "the warm-up's prompts are its own and short: the measured run finds none of them cached" {
	cat >suite.yml <<'YML'
serving:
  - name: serving_cache
    model: perfgate-mock
    server:
      command: perfgate mock-server --port {port} --model {model} --ttft-ms 5 --itl-ms 1 --prefix-cache-blocks 4096 --timing-log tl.jsonl
      ready: /health
    dataset: {name: random, input_len: 32, output_len: 64}
    num_prompts: 20
YML
	run --separate-stderr timeout 60 "$PERFGATE_BIN" run suite.yml -o res --gpu H100
	echo "$stderr"
	assert_success
	"$PERFGATE_PYTHON" - <<'PY'
import json
recs = [json.loads(l) for l in open("tl.jsonl")]
assert len(recs) == 30, len(recs)
# 10 warm-up requests of at most 32 tokens first, then the point's 20
assert [r["completion_tokens"] for r in recs] == [32] * 10 + [64] * 20, recs
pc = json.load(open("res/serving_cache_qps_inf.json"))["perfgate"]["telemetry"]["engine"]["prefix_cache"]
# the window is the measured run's: its 20 prompts of 2 blocks, none cached
assert pc["queries"] == 640 and pc["hits"] == 0, pc
PY
}

@test "without a warm-up the first run is cold: left out of the values, the gate, baselines and history, and named" {
	git init -q -b main . && git -c user.name=dev -c user.email=dev@example.com commit -q --allow-empty -m one
	cold_suite 20 >suite.yml <<'YML'
    warmup: 0
YML
	run --separate-stderr timeout 60 "$PERFGATE_BIN" run suite.yml -o res --gpu H100
	echo "$stderr"
	assert_success
	[[ "$stderr" == *"  repeat 1 of 3 cold: "*" vs the others, left out"* ]]
	[[ "$stderr" == *"serving_cold_qps_inf_concurrency_4  ok "*" (repeat 1 cold, left out)"* ]]
	"$PERFGATE_PYTHON" - <<'PY'
import json, statistics
r = json.load(open("res/serving_cold_qps_inf_concurrency_4.json"))
pg = r["perfgate"]
assert pg["warmup"] == {"kind": "none"}, pg["warmup"]
c = pg["cold_repeat"]
assert (c["repeat"], c["of"]) == (1, 3), c
assert c["note"].startswith("repeat 1 of 3 cold: ") and c["note"].endswith(" vs the others, left out"), c
reps = pg["repeats"]
assert len(reps) == 3
# every duration 3 x: the first run's TTFT about triple the others'
assert reps[0]["median_ttft_ms"] > 2 * max(x["median_ttft_ms"] for x in reps[1:]), reps
# the point's value is the median of the warm runs alone
want = statistics.median(x["median_ttft_ms"] for x in reps[1:])
assert abs(r["median_ttft_ms"] - want) < 1e-9, (r["median_ttft_ms"], want)
PY
	grep -q '^- \*\*Cold first runs\*\*: 1 of 1 point (serving_cold_qps_inf_concurrency_4: repeat 1 of 3 cold: ' res/benchmark_results.md

	# baseline update and the gate take two samples, and say why
	"$PERFGATE_BIN" baseline update thr --from res 2>/dev/null
	"$PERFGATE_PYTHON" - <<'PY'
import re
text = open("thr/H100.yml").read()
assert re.search(r"^    repeats: 2$", text, re.M), text
samples = re.search(r"^      median_ttft_ms: +\[([^\]]*)\]$", text, re.M).group(1)
assert len(samples.split(",")) == 2, samples
PY
	run --separate-stderr "$PERFGATE_BIN" gate res --thresholds thr -o cmp
	echo "$output"
	assert_success
	grep -q '^Cold first runs: `serving_cold_qps_inf_concurrency_4` (repeat 1 of 3 cold: ' cmp/comparison.md
	"$PERFGATE_PYTHON" - <<'PY'
import json
v = json.load(open("cmp/verdict.json"))
assert [c["point"] for c in v["cold_repeats"]] == ["serving_cold_qps_inf_concurrency_4"], v["cold_repeats"]
assert all(r["n_current"] == 2 for r in v["rows"] if r["metric"]), v["rows"]
PY

	# the history records the two warm runs
	run "$PERFGATE_BIN" baseline record res --commit HEAD
	assert_success
	git show refs/perfgate/history:H100/serving_cold_qps_inf_concurrency_4.jsonl >line.json
	"$PERFGATE_PYTHON" - <<'PY'
import json
rec = json.loads(open("line.json").read().splitlines()[-1])
assert rec["repeats"] == 2, rec["repeats"]
assert len(rec["metrics"]["median_ttft_ms"]) == 2, rec["metrics"]["median_ttft_ms"]
PY
}

@test "warmup: repeat runs the point once, unmeasured, first" {
	cold_suite 20 2 >suite.yml <<'YML'
    warmup: repeat
YML
	run --separate-stderr timeout 60 "$PERFGATE_BIN" run suite.yml -o res --gpu H100
	echo "$stderr"
	assert_success
	[[ "$stderr" == *"  warm-up run (unmeasured)"*"    warm-up: "*"  run 1/2"* ]]
	[[ "$stderr" != *"repeat 1 of"* ]]
	"$PERFGATE_PYTHON" - <<'PY'
import json
r = json.load(open("res/serving_cold_qps_inf_concurrency_4.json"))
w = r["perfgate"]["warmup"]
assert w["kind"] == "repeat" and w["seconds"] > 0, w
# the warm-up took the cold start: 3 x the measured runs' TTFT
reps = r["perfgate"]["repeats"]
assert w["metrics"]["median_ttft_ms"] > 2 * max(x["median_ttft_ms"] for x in reps), (w, reps)
assert "cold_repeat" not in r["perfgate"]
PY
}

@test "a warm-up whose every request fails fails the point, saying so" {
	cat >suite.yml <<'YML'
serving:
  - name: serving_broken
    model: perfgate-mock
    server:
      command: perfgate mock-server --port {port} --model {model} --fault-500 1
      ready: /health
    dataset: {name: random, input_len: 16, output_len: 4}
    num_prompts: 5
    warmup: 3
YML
	run --separate-stderr timeout 60 "$PERFGATE_BIN" run suite.yml -o res --gpu H100
	echo "$stderr"
	[ "$status" -eq 3 ]
	[[ "$stderr" == *"  error: warm-up: all 3 requests failed (http_500: HTTP 500"* ]]
	"$PERFGATE_PYTHON" - <<'PY'
import json
pg = json.load(open("res/serving_broken_qps_inf.json"))["perfgate"]
assert pg["status"] == "error" and pg["error"].startswith("warm-up: all 3 requests failed (http_500: HTTP 500"), pg["error"]
assert pg["warmup"]["failed"] == 3, pg["warmup"]
PY
}

@test "import: a sweep's cold first run gets the same check" {
	"$PERFGATE_PYTHON" - <<'PY'
import json, os
os.makedirs("sweep/SERVE--x-BENCH--y")
runs = []
for n, (ttft, tput) in enumerate([(61.0, 1180.0), (40.1, 1240.0), (40.5, 1238.0)]):
    runs.append({"date": "20251120-101500", "backend": "vllm", "model_id": "m",
                 "num_prompts": 200, "request_rate": "inf", "max_concurrency": 16,
                 "duration": 20.5, "completed": 200, "failed": 0,
                 "request_throughput": tput / 128, "output_throughput": tput,
                 "mean_ttft_ms": ttft * 1.05, "median_ttft_ms": ttft, "p99_ttft_ms": ttft * 2,
                 "median_tpot_ms": 11.0, "run_number": n})
json.dump(runs, open("sweep/SERVE--x-BENCH--y/summary.json", "w"))
PY
	run --separate-stderr "$PERFGATE_BIN" import sweep -o out --gpu H100
	echo "$stderr"
	assert_success
	[[ "$stderr" == *"summary.json: SERVE--x-BENCH--y: repeat 1 of 3 cold: median TTFT +51.4% vs the others, left out"* ]]
	"$PERFGATE_PYTHON" - <<'PY'
import json, glob
(path,) = glob.glob("out/*.json")
r = json.load(open(path))
assert r["perfgate"]["cold_repeat"]["metric"] == "median_ttft_ms", r["perfgate"]["cold_repeat"]
assert abs(r["median_ttft_ms"] - 40.3) < 1e-9 and r["output_throughput"] == 1239.0, r
PY
}
