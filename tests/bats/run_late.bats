#!/usr/bin/env bats
# What is late and why (issue 31): an idle client that the host wakes late
# is host-late, a client slow to handle its events is client-bound, and the
# result, the log, the summary and the report say which, with the bound.
# The lateness is made by perfgate's test switches (PERFGATE_TEST_LATE_WAKE_MS:
# every timed-out wait of the client's loop returns that much later;
# PERFGATE_TEST_SLOW_LOOP_MS: every batch of events costs that much more),
# not by the machine's load, so a busy CI machine only adds to it.

bats_require_minimum_version 1.5.0

# 20 requests at 20/s (due 50 ms apart: the lag bound is 12.5 ms) against the
# mock server, whose streams of 4 messages last a few milliseconds.
late_suite() {
	cat <<'YML'
serving:
  - name: serving_late
    model: perfgate-mock
    server:
      command: perfgate mock-server --port {port} --model {model} --ttft-ms 1 --itl-ms 1
      ready: /health
      ready_timeout: 30
    dataset: {name: random, input_len: 16, output_len: 4}
    num_prompts: 20
    qps: [20]
YML
}

# run_late VAR=MS: the suite run with one of the switches; then
# result_is PYTHON: asserts on its result r.
run_late() {
	unset BUILDKITE PERFGATE_GPU
	cd "$BATS_TEST_TMPDIR"
	late_suite >late.yml
	run --separate-stderr env "$1" timeout 60 "$PERFGATE_BIN" run late.yml -o res
	echo "$stderr"
	[ "$status" -eq 0 ]
}

result_is() {
	"$PERFGATE_PYTHON" -c 'import json, sys
r = json.load(open("res/serving_late_qps_20.json"))
assert r["completed"] == 20, r["completed"]
assert r["timestamp_error_bound_ms"] == r["client_read_delay_p99_ms"], r
exec(sys.argv[1])' "$1"
}

@test "an idle client the host wakes late is host-late, not client-bound" {
	run_late PERFGATE_TEST_LATE_WAKE_MS=30
	# each send waited for a wake-up 30 ms late: the host's, not the loop's
	# (a busy machine may add reads late, client-bound, but not this)
	result_is '
assert 12 < r["schedule_lag_bound_ms"] < 13.5, r["schedule_lag_bound_ms"]
assert r["requests_late_by_host"] >= 10, r
assert r["requests_late_by_host"] > r["requests_late_by_client"], r
assert r["host_late"] is True, r
assert r["schedule_lag_p99_ms"] >= 30, r["schedule_lag_p99_ms"]'
	# the point's log line, then the line that says why
	[[ "$stderr" == *$', host-late\n  '*'host-late: '*' of 20 requests sent over 12.'*' ms late (lag p99 '*' ms) while the client sat idle: the host woke the client late, so the load left its schedule; TTFT and ITL count from the send'* ]]
	# the summary explains its flag under the table, and so does the report
	[[ "$stderr" == *$'\n  serving_late_qps_20: '*'host-late: '*' while the client sat idle: '* ]]
	grep -q '^- \*\*Host-late\*\*: 1 of 1 point, measured under a load the host kept off its schedule:$' \
		res/benchmark_results.md
	grep -q '^  - serving_late_qps_20: [0-9]* of 20 requests sent over 12\.' res/benchmark_results.md
}

@test "a client slow to handle its events is client-bound, with the error it implies" {
	run_late PERFGATE_TEST_SLOW_LOOP_MS=5
	# messages waited for the loop's 5 ms batches: their timestamps may be late
	result_is '
assert r["client_read_delay_p99_ms"] > 1, r["client_read_delay_p99_ms"]
assert r["client_bound"] is True, r'
	bound=$("$PERFGATE_PYTHON" -c 'import json; print("%.3g" % json.load(open("res/serving_late_qps_20.json"))["timestamp_error_bound_ms"])')
	[[ "$stderr" == *$'\n  ok: '*', client-bound'* ]]
	[[ "$stderr" == *$'\n  client-bound: '*"responses waited to be read"*"; TTFT and ITL within $bound ms (read delay p99)"* ]]
	[[ "$stderr" == *$'\n  serving_late_qps_20: client-bound: '*"responses waited to be read"* ]]
	grep -q "^  - serving_late_qps_20: .*responses waited to be read.*; TTFT and ITL within $bound ms (read delay p99)" \
		res/benchmark_results.md
}
