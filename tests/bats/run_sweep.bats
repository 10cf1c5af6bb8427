#!/usr/bin/env bats
# A concurrency sweep with prompts_per_concurrency, run for real against the
# mock server: each point sends concurrency x N prompts, and the result
# files, .commands and the report say so.

bats_require_minimum_version 1.5.0

@test "prompts_per_concurrency sizes each point of a concurrency sweep" {
	unset BUILDKITE PERFGATE_GPU
	cd "$BATS_TEST_TMPDIR"
	cat > sweep.yml <<'YML'
serving:
  - name: serving_sweep
    model: perfgate-mock
    server:
      command: perfgate mock-server --port {port} --model {model} --ttft-ms 1 --itl-ms 1
      ready: /health
      ready_timeout: 30
    dataset: {name: random, input_len: 16, output_len: 8}
    qps: [inf]
    max_concurrency: [1, 3, null]
    num_prompts: 5
    prompts_per_concurrency: 4
YML
	run --separate-stderr timeout 60 "$PERFGATE_BIN" run sweep.yml -o res
	echo "$stderr"
	[ "$status" -eq 0 ]
	"$PERFGATE_PYTHON" - <<'PY'
import json
want = {"1": 4, "3": 12, "inf": 5}
for c, n in want.items():
    name = "res/serving_sweep_qps_inf_concurrency_%s" % c
    r = json.load(open(name + ".json"))
    assert r["num_prompts"] == n and r["completed"] == n and r["failed"] == 0, (c, r["num_prompts"], r["completed"])
    assert r["perfgate"]["params"]["num_prompts"] == n, r["perfgate"]["params"]
    cmd = json.load(open(name + ".commands"))["client_command"]
    assert ("--num-prompts %d " % n) in cmd + " ", cmd
PY
	grep -q "^| serving_sweep_qps_inf_concurrency_3 " res/benchmark_results.md
}

@test "a ramp-up raises the rate over the run, and every output says so" {
	unset BUILDKITE PERFGATE_GPU
	cd "$BATS_TEST_TMPDIR"
	cat > ramp.yml <<'YML'
serving:
  - name: serving_ramp
    model: perfgate-mock
    server:
      command: perfgate mock-server --port {port} --model {model} --ttft-ms 1 --itl-ms 1
      ready: /health
      ready_timeout: 30
    dataset: {name: random, input_len: 16, output_len: 4}
    num_prompts: 60
    burstiness: inf
    ramp_up: {strategy: linear, start_rps: 20, end_rps: 200}
YML
	run --separate-stderr timeout 60 "$PERFGATE_BIN" run ramp.yml -o res
	echo "$stderr"
	[ "$status" -eq 0 ]
	"$PERFGATE_PYTHON" - <<'PY'
import json
r = json.load(open("res/serving_ramp_qps_inf.json"))
keys = list(r)
i = keys.index("max_concurrency")
assert keys[i + 1:i + 4] == ["ramp_up_strategy", "ramp_up_start_rps", "ramp_up_end_rps"], keys
assert (r["ramp_up_strategy"], r["ramp_up_start_rps"], r["ramp_up_end_rps"]) == ("linear", 20, 200)
assert r["request_rate"] == "inf" and r["completed"] == 60, r
# evenly spaced on the ramp: request i is due at sum 1/rate(k), k <= i
due = sum(1 / (20 + 180 * k / 59) for k in range(60))
assert due <= r["duration"] < due + 1.0, (due, r["duration"])
assert r["schedule_lag_p99_ms"] < 50, r["schedule_lag_p99_ms"]
assert r["perfgate"]["params"]["ramp_up"] == {"strategy": "linear", "start_rps": 20, "end_rps": 200}
cmd = json.load(open("res/serving_ramp_qps_inf.commands"))["client_command"]
assert "--ramp-up-strategy linear --ramp-up-start-rps 20 --ramp-up-end-rps 200" in cmd, cmd
PY
	grep -q '^- \*\*Ramp-up\*\*: linear from 20 to 200 req/s: ' res/benchmark_results.md
}
