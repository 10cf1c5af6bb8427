#!/usr/bin/env bats
# vLLM's own test files, as they were in its repository (tests/data/vllm/history,
# origins in its README), run as vLLM's driver runs them: the files behind
# the published reports gate against thresholds/H100.yml with every
# baseline point found, and every kind of file in vLLM's history dry-runs.

bats_require_minimum_version 1.5.0

load helpers

HIST="${PERFGATE_SRC:-$(cd "${BATS_TEST_DIRNAME}/../.." && pwd)}/tests/data/vllm/history"

setup() {
	common_setup
	unset PERFGATE_GPU BUILDKITE ENABLE_ADAPTIVE_CONCURRENCY PROMPTS_PER_CONCURRENCY
	cd "$BATS_TEST_TMPDIR"
}

# `vllm` on PATH: `vllm serve MODEL ... --port P` becomes perfgate's mock
# server for MODEL, `vllm bench latency|throughput --output-json F` writes a
# result of the shape vLLM writes (the stand-in for a GPU box).
vllm_shim() {
	cat >"${SHIMS}/vllm" <<'SHIM'
#!/bin/bash
if [ "$1" = serve ]; then
	model=$2
	shift 2
	while [ $# -gt 0 ]; do
		[ "$1" = --port ] && port=$2
		shift
	done
	exec "$PERFGATE_BIN" mock-server --port "$port" --model "$model" --fixed-timing \
		--ttft-ms 2 --itl-ms 1
fi
kind=$2
while [ $# -gt 0 ]; do
	[ "$1" = --output-json ] && out=$2
	shift
done
if [ "$kind" = latency ]; then
	echo '{"avg_latency": 1.05, "std_latency": 0.01, "latencies": [1.04, 1.05, 1.06],
	 "percentiles": {"10": 1.04, "25": 1.045, "50": 1.05, "75": 1.055, "90": 1.06, "99": 1.06}}' >"$out"
else
	echo '{"elapsed_time": 9.5, "num_requests": 200, "total_num_tokens": 88000,
	 "requests_per_second": 21.05, "tokens_per_second": 9263.2}' >"$out"
fi
SHIM
	chmod +x "${SHIMS}/vllm"
}

# ShareGPT conversations long enough for vLLM's filters
sharegpt() {
	"$PERFGATE_PYTHON" - <<'PY'
import json
conv = []
for i in range(60):
    q = " ".join("word%d" % ((i * 7 + k) % 50) for k in range(12 + i % 9))
    a = " ".join("tok%d" % k for k in range(6 + i % 5))
    conv.append({"id": str(i), "conversations": [{"from": "human", "value": q},
                                                 {"from": "gpt", "value": a}]})
json.dump(conv, open("ShareGPT_V3_unfiltered_cleaned_split.json", "w"))
PY
}

@test "the serving file behind the published reports names its points as the reports do" {
	run --separate-stderr "$PERFGATE_BIN" run --dry-run --gpu 8xH100 \
		"$HIST/fc10a04/serving-tests.json"
	[ "$status" -eq 0 ]
	names=$(printf '%s\n' "${lines[@]}" | sed -n 's/^\[[0-9]*\/13\] //p' | sort | tr '\n' ' ')
	# the twelve published points, and the spec-decode test the report
	# announces but has no row for
	want=$({
		grep -o '^  serving_[^:]*' "$PERFGATE_SRC/thresholds/H100.yml" | tr -d ' '
		echo serving_llama70B_tp4_sharegpt_specdecode_qps_2
	} | sort | tr '\n' ' ')
	[ "$names" = "$want" ] || {
		echo "got:  $names"
		echo "want: $want"
		false
	}
}

@test "run against the mock server, the published files gate against thresholds/H100.yml with every point matched" {
	vllm_shim
	sharegpt
	cp "$HIST/d5ce924/latency-tests.json" "$HIST/9ddbe88/throughput-tests.json" .
	# the real file with 4 prompts a point instead of 200: the same names
	# (no max_concurrency_list: the cap is the prompt count, no cap), in
	# seconds instead of minutes
	"$PERFGATE_PYTHON" - "$HIST/fc10a04/serving-tests.json" <<'PY'
import json, sys
tests = json.load(open(sys.argv[1]))
for t in tests:
    t["client_parameters"]["num_prompts"] = 4
json.dump(tests, open("serving-tests.json", "w"), indent=4)
PY
	run --separate-stderr timeout 240 "$PERFGATE_BIN" run --gpu 8xH100 -o res \
		latency-tests.json throughput-tests.json serving-tests.json
	echo "$stderr" | tail -20
	[ "$status" -eq 0 ]
	[ -e res/serving_llama8B_tp1_sharegpt_qps_1.json ]
	[ ! -e res/serving_llama8B_tp1_sharegpt_qps_1_concurrency_4.json ]
	run --separate-stderr "$PERFGATE_BIN" compare res --thresholds "$PERFGATE_SRC/thresholds/H100.yml" \
		--gpu H100 --quiet
	# mock numbers are not an H100's: the verdicts may be anything, but no
	# baseline point is "missing" and every run point but the spec-decode
	# test (no published row) meets its baseline (metrics the published
	# tables lack, e.g. TPOT, are "new" on their own)
	"$PERFGATE_PYTHON" - <<'PY'
import json
v = json.load(open("res/verdict.json"))
by_point = {}
for r in v["rows"]:
    by_point.setdefault(r["point"], set()).add(r["verdict"])
missing = [p for p, s in by_point.items() if "missing" in s]
unmatched = sorted(p for p, s in by_point.items() if s <= {"new"})
assert not missing, missing
assert unmatched == ["serving_llama70B_tp4_sharegpt_specdecode_qps_2"], unmatched
assert len(by_point) == 19, sorted(by_point)
PY
}

@test "results vLLM's current driver named with the cap compare by identity" {
	mkdir res
	for q in 1 4 16 inf; do
		"$PERFGATE_PYTHON" - "$q" <<'PY'
import json, sys
q = sys.argv[1]
rate = "inf" if q == "inf" else float(q)
r = {"backend": "vllm", "model_id": "meta-llama/Meta-Llama-3.1-8B-Instruct", "num_prompts": 200,
     "request_rate": rate, "burstiness": 1.0, "max_concurrency": 200, "duration": 60.0,
     "completed": 200, "failed": 0, "request_throughput": 3.0, "mean_ttft_ms": 20.0,
     "median_ttft_ms": 19.0, "p99_ttft_ms": 30.0, "mean_itl_ms": 8.5, "median_itl_ms": 8.4,
     "p99_itl_ms": 9.0}
name = "res/serving_llama8B_tp1_sharegpt_qps_%s_concurrency_200" % q
json.dump(r, open(name + ".json", "w"))
json.dump({"server_command": "vllm serve x", "client_command": "vllm bench serve --num-prompts 200",
           "gpu_type": "H100\nH100\nH100\nH100\nH100\nH100\nH100\nH100"}, open(name + ".commands", "w"))
PY
	done
	run --separate-stderr "$PERFGATE_BIN" compare res --thresholds "$PERFGATE_SRC/thresholds/H100.yml" \
		--gpu H100 --allow-missing --quiet
	"$PERFGATE_PYTHON" - <<'PY'
import json
v = json.load(open("res/verdict.json"))
pts = {r["point"] for r in v["rows"] if r["verdict"] not in ("missing",)}
want = {"serving_llama8B_tp1_sharegpt_qps_%s" % q for q in ("1", "4", "16", "inf")}
assert pts == want, pts
PY
}
