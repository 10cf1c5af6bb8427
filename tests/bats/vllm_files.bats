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

# vLLM played by perfgate's mock (`perfgate mock-server --as-vllm`, docs/
# mock-server.md), as the docs tell a newcomer to run vLLM's files: `vllm
# serve` is the mock server, `vllm bench latency|throughput` the result the
# mock's engine model gives. Fixed timing keeps the points short.
export PERFGATE_VLLM="perfgate mock-server --fixed-timing --ttft-ms 2 --itl-ms 1 --as-vllm"

# A `vllm` on PATH for what the mock does not play: vLLM's own client
# (`vllm bench serve`, for pooling models) writes the result vLLM saves
# for an embeddings model; `vllm serve` is the mock's. Its calls go to
# vllm.calls.
vllm_client_stub() {
	cat >"${SHIMS}/vllm" <<'SHIM'
#!/bin/bash
if [ "$1" = serve ]; then
	exec "$PERFGATE_BIN" mock-server --fixed-timing --ttft-ms 2 --itl-ms 1 --as-vllm "$@"
fi
echo "vllm $*" >>"$BATS_TEST_TMPDIR/vllm.calls"
while [ $# -gt 0 ]; do
	[ "$1" = --result-filename ] && out=$2
	shift
done
"$PERFGATE_PYTHON" - "$out" <<'PY'
import json, sys
json.dump({"date": "20250901-120000", "backend": "openai-embeddings", "model_id": "m",
           "num_prompts": 200, "request_rate": "inf", "burstiness": 1.0, "max_concurrency": 32,
           "duration": 2.5, "completed": 200, "total_input_tokens": 41000,
           "request_throughput": 80.0, "total_token_throughput": 16400.0,
           "mean_e2el_ms": 390.1, "median_e2el_ms": 380.2, "std_e2el_ms": 40.3,
           "p99_e2el_ms": 480.4}, open(sys.argv[1], "w"))
PY
SHIM
	chmod +x "${SHIMS}/vllm"
	unset PERFGATE_VLLM
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
	# vLLM's commands ran, played by the mock: a batch of 128 tokens at
	# fixed timing is the first token at 2 ms and 127 more 1 ms apart
	"$PERFGATE_PYTHON" - <<'PY'
import json
r = json.load(open("res/latency_llama8B_tp1.json"))
assert abs(r["avg_latency"] - 0.129) < 1e-9 and len(r["latencies"]) == 15, r
c = json.load(open("res/latency_llama8B_tp1.commands"))
assert " mock-server --fixed-timing --ttft-ms 2 --itl-ms 1 --as-vllm bench latency " in c["latency_command"], c
t = json.load(open("res/throughput_llama8B_tp1.json"))
assert t["num_requests"] == 200 and t["requests_per_second"] > 0, t
s = json.load(open("res/serving_llama8B_tp1_sharegpt_qps_inf.commands"))
assert " mock-server --fixed-timing --ttft-ms 2 --itl-ms 1 --as-vllm serve meta-llama/" in s["server_command"], s
PY
	[[ "$stderr" == *"perfgate: commands run perfgate mock-server --fixed-timing --ttft-ms 2 --itl-ms 1 --as-vllm where they say vllm (PERFGATE_VLLM)"* ]]
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

# a vLLM file with its prompts cut to n: the same test, seconds not minutes
cut_prompts() {
	"$PERFGATE_PYTHON" - "$1" "$2" "$3" <<'PY'
import json, sys
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
tests = json.load(open(src))
for t in tests:
    for k in ("client_parameters", "common_parameters"):
        if k in t:
            t[k].pop("num-prompts", None)
            t[k]["num_prompts"] = n
json.dump(tests, open(dst, "w"), indent=4)
PY
}

@test "vLLM's first nightly serving file (no qps_list) runs one point at rate inf" {
	sharegpt
	cut_prompts "$HIST/0707a7f/serving-tests.json" serving-tests.json 6
	run --separate-stderr timeout 120 "$PERFGATE_BIN" run --gpu 1xA100 -o res serving-tests.json
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"[0].qps_list: no qps_list: one point at request rate inf, as vLLM's first driver ran such a test"* ]]
	"$PERFGATE_PYTHON" - <<'PY'
import json
r = json.load(open("res/serving_llama7B_sharegpt_qps_inf.json"))
assert r["completed"] == 6 and r["request_rate"] == "inf", r
PY
}

@test "the server's compilation mode and optimization level reach the client's --metadata and the results, as vLLM's newest driver passes them" {
	cat >serving-tests.json <<'JSON'
[{"test_name": "serving_llama8B_tp1_random_16_8",
  "qps_list": ["inf"], "max_concurrency_list": [4],
  "server_parameters": {"model": "meta-llama/Llama-3.1-8B-Instruct", "tensor_parallel_size": 1,
    "compilation_config.mode": 3, "optimization_level": 2},
  "client_parameters": {"model": "meta-llama/Llama-3.1-8B-Instruct", "backend": "vllm",
    "dataset_name": "random", "random_input_len": 16, "random_output_len": 8, "num_prompts": 8}}]
JSON
	run --separate-stderr timeout 120 "$PERFGATE_BIN" run --gpu 1xH100 -o res serving-tests.json
	[ "$status" -eq 0 ]
	"$PERFGATE_PYTHON" - <<'PY'
import json
p = "res/serving_llama8B_tp1_random_16_8_qps_inf_concurrency_4"
r = json.load(open(p + ".json"))
# strings, as vllm bench serve --metadata writes them
assert r["compilation_config.mode"] == "3" and r["optimization_level"] == "2", r
c = json.load(open(p + ".commands"))
assert " --metadata tensor_parallel_size=1 compilation_config.mode=3 optimization_level=2 " in c["client_command"], c
assert " --compilation-config.mode 3 --optimization-level 2 " in c["server_command"], c
PY
}

@test "the TPU file's sonnet prompts, as vLLM samples them, against the mock server" {
	for i in 1 2 3 4; do cat "$PERFGATE_SRC/tests/data/loadgen/sonnet.txt"; done >sonnet_4x.txt
	cut_prompts "$HIST/53cc451/tpu-serving-tests-v6e-1.json" serving-tests.json 5
	run --separate-stderr timeout 120 "$PERFGATE_BIN" run --gpu 1xTPU -o res serving-tests.json
	echo "$stderr" | tail -5
	[ "$status" -eq 0 ]
	"$PERFGATE_PYTHON" - <<'PY'
import json
r = json.load(open("res/serving_llama_3p1_8B_Instruct_tp1_sonnet_qps_inf.json"))
assert r["completed"] == 5 and r["failed"] == 0, r
# prompts of at most 1800 tokens, 128 out each (ignore_eos)
assert r["total_output_tokens"] == 5 * 128, r["total_output_tokens"]
assert 5 * 1500 < r["total_input_tokens"] <= 5 * 1800, r["total_input_tokens"]
assert r["perfgate"]["params"]["dataset"] == "sonnet", r["perfgate"]["params"]
PY
}

@test "the CPU embeddings file runs vLLM's own client against the server perfgate starts" {
	vllm_client_stub
	sharegpt
	cp "$HIST/028b5aa/serving-tests-cpu-embed.json" serving-tests-cpu-embed.json
	run --separate-stderr timeout 120 "$PERFGATE_BIN" run --gpu 1xcpu -o res serving-tests-cpu-embed.json
	echo "$stderr" | tail -5
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"backend 'openai-embeddings' is not one perfgate's client generates"* ]]
	# the driver's client command, pointed at the mock server perfgate started
	grep -q -- "vllm bench serve --save-result --result-filename .*serving_jina_embed_v3_tp1_sharegpt_qps_inf_concurrency_32.json --request-rate inf --max-concurrency 32 --model jinaai/jina-embeddings-v3 --metadata tensor_parallel_size=1 --backend openai-embeddings --endpoint /v1/embeddings --dataset-name sharegpt" vllm.calls
	grep -q -- "--host 127.0.0.1 --port [0-9]*$" vllm.calls
	"$PERFGATE_PYTHON" - <<'PY'
import json
for c in (32, 64, 128):
    r = json.load(open("res/serving_jina_embed_v3_tp1_sharegpt_qps_inf_concurrency_%d.json" % c))
    assert r["total_token_throughput"] == 16400.0 and r["perfgate"]["client"] == "command", r
PY
}

@test "a nightly multi-engine file runs its vllm tests, sharegpt and sonnet" {
	sharegpt
	for i in 1 2 3 4; do cat "$PERFGATE_SRC/tests/data/loadgen/sonnet.txt"; done >sonnet_4x.txt
	cut_prompts "$HIST/9c6c815/nightly-tests.json" nightly-tests.json 4
	run --separate-stderr timeout 180 "$PERFGATE_BIN" run --gpu 8xH100 -o res \
		--filter 'llama8B_tp1_(sharegpt|sonnet_512_16)_qps_(32|inf)$' nightly-tests.json
	echo "$stderr" | tail -5
	[ "$status" -eq 0 ]
	"$PERFGATE_PYTHON" - <<'PY'
import json
for p in ("vllm_llama8B_tp1_sharegpt_qps_32", "vllm_llama8B_tp1_sharegpt_qps_inf",
          "vllm_llama8B_tp1_sonnet_512_16_qps_inf"):
    r = json.load(open("res/%s.json" % p))
    assert r["completed"] == 4, (p, r["completed"])
r = json.load(open("res/vllm_llama8B_tp1_sonnet_512_16_qps_inf.json"))
assert r["total_output_tokens"] == 4 * 16, r
PY
	# the same file for another engine is a one-line error, not a guess
	CURRENT_LLM_SERVING_ENGINE=tgi run --separate-stderr "$PERFGATE_BIN" run --dry-run nightly-tests.json
	[ "$status" -eq 2 ]
	[ "$stderr" = "perfgate run: nightly-tests.json:2:5: [0]: CURRENT_LLM_SERVING_ENGINE=tgi: perfgate runs the vllm, sglang and lmdeploy engines of a nightly file (their OpenAI API); TGI's /generate_stream is not it" ]
}

@test "vLLM's genai-perf file runs genai-perf against the server perfgate starts and imports its export" {
	# `genai-perf profile ... --artifact-dir D`: writes D/profile_export_genai_perf.json,
	# an export of the shape GenAI-Perf writes (tests/data/import/real/genai-perf-issue-298.md)
	cat >"${SHIMS}/genai-perf" <<'SHIM'
#!/bin/bash
echo "genai-perf $*" >>"$BATS_TEST_TMPDIR/genai-perf.calls"
while [ $# -gt 0 ]; do
	[ "$1" = --artifact-dir ] && dir=$2
	[ "$1" = --request-rate ] && rate=$2
	shift
done
mkdir -p "$dir"
cat >"$dir/profile_export_genai_perf.json" <<JSON
{"request_throughput": {"unit": "requests/sec", "avg": 3.97},
 "request_latency": {"unit": "ms", "avg": 5767.43, "p50": 5778.65, "p99": 5910.15, "std": 94.06},
 "time_to_first_token": {"unit": "ms", "avg": 184.63, "p50": 172.80, "p99": 425.02, "std": 87.80},
 "inter_token_latency": {"unit": "ms", "avg": 2.17, "p50": 2.17, "p99": 2.26, "std": 0.04},
 "output_token_throughput": {"unit": "tokens/sec", "avg": 1022.5},
 "input_config": {"subcommand": "profile", "model": ["m"], "concurrency": null, "request_rate": $rate}}
JSON
SHIM
	chmod +x "${SHIMS}/genai-perf"
	cp "$HIST/307e086/genai-perf-tests.json" genai-perf-tests.json
	run --separate-stderr timeout 120 "$PERFGATE_BIN" run --gpu 8xH100 -o res \
		--filter 'qps_(4|8)$' genai-perf-tests.json
	echo "$stderr" | tail -5
	[ "$status" -eq 0 ]
	grep -q -- "genai-perf profile -m meta-llama/Meta-Llama-3-8B-Instruct --service-kind openai --backend vllm --endpoint-type chat --streaming --url 127.0.0.1:[0-9]* --request-rate 4 --num-prompts 500" genai-perf.calls
	"$PERFGATE_PYTHON" - <<'PY'
import json
for q in (4, 8):
    r = json.load(open("res/vllm_llama8B_tp1_genai_perf_qps_%d.json" % q))
    assert r["backend"] == "genai-perf" and r["request_rate"] == q, r
    assert r["mean_tpot_ms"] == 2.17 and r["p99_ttft_ms"] == 425.02, r
    assert r["perfgate"]["point"] == "vllm_llama8B_tp1_genai_perf_qps_%d" % q, r["perfgate"]
PY
	# and the report shows them as any serving points
	grep -q "| vllm_llama8B_tp1_genai_perf_qps_8 |" res/benchmark_results.md
}

@test "--vllm (or PERFGATE_VLLM) shows in the dry run as it will run; a bad one is exit 2" {
	cp "$HIST/fc10a04/serving-tests.json" .
	run --separate-stderr "$PERFGATE_BIN" run --dry-run --gpu H100 --filter 'tp1_sharegpt_qps_1$' \
		--vllm "'/opt/my venv/bin/vllm'" serving-tests.json
	[ "$status" -eq 0 ]
	[[ "$output" == *"Commands run '/opt/my venv/bin/vllm' where they say vllm."* ]]
	[[ "$output" == *"  server     '/opt/my venv/bin/vllm' serve meta-llama/Meta-Llama-3.1-8B-Instruct --tensor-parallel-size 1 "* ]]
	PERFGATE_VLLM='vllm-{tp}' run --separate-stderr "$PERFGATE_BIN" run --dry-run serving-tests.json
	[ "$status" -eq 2 ]
	[ "$stderr" = "perfgate run: PERFGATE_VLLM: command template 'vllm-{tp}': unknown placeholder '{tp}'" ]
	run --separate-stderr "$PERFGATE_BIN" run --vllm "'unclosed" serving-tests.json
	[ "$status" -eq 2 ]
	[[ "$stderr" == "perfgate run: option '--vllm': command template ''unclosed': "* ]]
	[ ! -e results ]
}
