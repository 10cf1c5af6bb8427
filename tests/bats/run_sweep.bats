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
