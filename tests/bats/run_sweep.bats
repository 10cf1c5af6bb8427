#!/usr/bin/env bats
# vLLM's serving-load shapes beyond qps x concurrency, run for real against
# the mock server: prompts_per_concurrency, ramp-up, and the client queue
# metrics of a concurrency limit; the result files, .commands and the
# report say what ran.

bats_require_minimum_version 1.5.0

# A serving test NAME against the mock server (TTFT $2 ms, default 1);
# the rest of the test's keys come on stdin.
mock_suite() {
	cat <<YML
serving:
  - name: $1
    model: perfgate-mock
    server:
      command: perfgate mock-server --port {port} --model {model} --ttft-ms ${2:-1} --itl-ms 1
      ready: /health
      ready_timeout: 30
YML
	cat
}

@test "prompts_per_concurrency sizes each point of a concurrency sweep" {
	unset BUILDKITE PERFGATE_GPU
	cd "$BATS_TEST_TMPDIR"
	mock_suite serving_sweep > sweep.yml <<'YML'
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
	mock_suite serving_ramp > ramp.yml <<'YML'
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
assert r["schedule_lag_p99_ms"] < 250, r["schedule_lag_p99_ms"]
assert r["perfgate"]["params"]["ramp_up"] == {"strategy": "linear", "start_rps": 20, "end_rps": 200}
cmd = json.load(open("res/serving_ramp_qps_inf.commands"))["client_command"]
assert "--ramp-up-strategy linear --ramp-up-start-rps 20 --ramp-up-end-rps 200" in cmd, cmd
PY
	grep -q '^- \*\*Ramp-up\*\*: linear from 20 to 200 req/s (the request rate rises' res/benchmark_results.md
	# its inf is no burst: no QPS bullet says "all requests come at once"
	! grep -q 'QPS = inf' res/benchmark_results.md
}

@test "client_queue_time and e2el_including_client_queue measure the wait for a concurrency slot" {
	unset BUILDKITE PERFGATE_GPU
	cd "$BATS_TEST_TMPDIR"
	# 50 req/s due, one slot, each request ~25 ms: the queue grows
	mock_suite serving_queue 20 > queue.yml <<'YML'
    client:
      percentile_metrics: [ttft, e2el, client_queue_time, e2el_including_client_queue]
    dataset: {name: random, input_len: 16, output_len: 4}
    num_prompts: 30
    qps: [50, inf]
    max_concurrency: [1]
YML
	run --separate-stderr timeout 60 "$PERFGATE_BIN" run queue.yml -o res --save-detailed
	echo "$stderr"
	[ "$status" -eq 0 ]
	"$PERFGATE_PYTHON" - <<'PY'
import json
r = json.load(open("res/serving_queue_qps_50_concurrency_1.json"))
q = r["queue_times"]
assert len(q) == 30 and q[0] < 0.005 and q[-1] > 0.05 and q[-1] > q[10], q
assert abs(r["mean_client_queue_time_ms"] - 1000 * sum(q) / 30) < 1e-6, r["mean_client_queue_time_ms"]
# e2el plus the wait: schedule-relative latency, far above e2el itself
assert abs(r["mean_e2el_including_client_queue_ms"] - r["mean_e2el_ms"] - r["mean_client_queue_time_ms"]) < 1e-6
assert r["p99_e2el_including_client_queue_ms"] > 2 * r["p99_e2el_ms"], r
# at rate inf every request is due at once: the wait is there, no schedule-relative e2el
r = json.load(open("res/serving_queue_qps_inf_concurrency_1.json"))
assert r["mean_client_queue_time_ms"] > 0 and "mean_e2el_including_client_queue_ms" not in r, r
PY
}

@test "sla_search probes for the largest concurrency within the SLA; the gate leaves probes out" {
	unset BUILDKITE PERFGATE_GPU
	cd "$BATS_TEST_TMPDIR"
	# four sequences run at once, the rest queue for ~150 ms: within a
	# p99 TTFT of 80 ms the capacity is exactly 4
	cat > sla.yml <<'YML'
serving:
  - name: serving_sla
    model: perfgate-mock
    server:
      command: perfgate mock-server --port {port} --model {model} --ttft-ms 2 --itl-ms 10 --itl-growth 0 --max-running 4
      ready: /health
      ready_timeout: 30
    dataset: {name: random, input_len: 16, output_len: 16}
    qps: [inf]
    max_concurrency: [1, 16]
    prompts_per_concurrency: 3
    sla_search: {ttft_ms: 80, tpot_ms: 1000}
YML
	run --separate-stderr timeout 120 "$PERFGATE_BIN" run sla.yml -o res
	echo "$stderr"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"  largest concurrency within the SLA: 4 (first beyond it: 5; 4 probes)"* ]]
	"$PERFGATE_PYTHON" - <<'PY'
import json
s = json.load(open("res/serving_sla_qps_inf_sla_summary.json"))
assert s == {"test_name": "serving_sla", "qps": "inf", "sla_ttft_ms": 80.0, "sla_tpot_ms": 1000.0,
             "static_last_pass": 1, "static_first_fail": 16, "final_last_pass": 4,
             "final_first_fail": 5, "probes": 4}, s
for c in (8, 4, 6, 5):
    name = "res/serving_sla_qps_inf_concurrency_%d" % c
    r = json.load(open(name + ".json"))
    assert r["perfgate"]["adaptive_search"] is True and r["num_prompts"] == 3 * c, r["perfgate"]
    assert json.load(open(name + ".commands"))["adaptive_search"] is True
for c in (1, 16):
    assert "adaptive_search" not in json.load(open("res/serving_sla_qps_inf_concurrency_%d.json" % c))["perfgate"]
PY
	# the report shows every point; baselines and the comparison only the static ones
	grep -q "^| serving_sla_qps_inf_concurrency_5 " res/benchmark_results.md
	run "$PERFGATE_BIN" baseline update th --from res --gpu H100
	[ "$status" -eq 0 ]
	[ "$(grep -o 'serving_sla_qps_inf_concurrency_[0-9]*' th/H100.yml | sort -u | tr '\n' ' ')" = \
		"serving_sla_qps_inf_concurrency_1 serving_sla_qps_inf_concurrency_16 " ]
	run "$PERFGATE_BIN" compare res --thresholds th --gpu H100
	[ "$status" -eq 0 ]
	# the p99s of these short runs are not decidable (docs/tails.md), nothing else moved
	[[ "$output" == *"25 metrics compared, 13 gating · 5 insufficient-data · 20 unchanged"* ]]
	# the history in git (what baseline: git compares with) leaves them out too
	git init -q hist
	run "$PERFGATE_BIN" baseline record res --repo hist --gpu H100 --commit 1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d
	[ "$status" -eq 0 ]
	[ "$(git -C hist ls-tree -r --name-only refs/perfgate/history | tr '\n' ' ')" = \
		"H100/serving_sla_qps_inf_concurrency_1.jsonl H100/serving_sla_qps_inf_concurrency_16.jsonl " ]
}
