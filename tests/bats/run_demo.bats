#!/usr/bin/env bats
# The README's first command ends with `build/perfgate run pipelines/demo.yml`:
# the demo pipeline must run all four suites against the mock server,
# succeed, stay under a minute and say where the results are.

bats_require_minimum_version 1.5.0

@test "the demo pipeline runs the four suites against the mock server" {
	unset BUILDKITE PERFGATE_GPU
	cd "$BATS_TEST_TMPDIR"
	start=$SECONDS
	run --separate-stderr "$PERFGATE_BIN" run "$PERFGATE_SRC/pipelines/demo.yml"
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ $((SECONDS - start)) -lt 60 ]
	# not in Buildkite: headings without the log-group markers
	[[ "$stderr" == *$'\nperfgate run: 6 ok ('* ]]
	[[ "$stderr" == *$'\nlatency_mock_tp1 (1/6)\n'* ]]
	[[ "$stderr" == *$'\nserving_mock_tp1_random_128_128 qps inf (5/6)\n'* ]]
	[[ "$stderr" == *$'\nstartup_mock_tp1 (6/6)\n'* ]]
	[ "$(printf '%s\n' "$stderr" | grep -c "^  start [1-6]/6 (\(cold\|warm-up\|warm\)): ready in ")" -eq 6 ]
	[[ "$stderr" != *"--- "* && "$stderr" != *"+++ "* ]]
	# the last line says where to look
	last=$(printf '%s\n' "$stderr" | tail -n 1)
	[ "$last" = "perfgate: results in results/, report in results/benchmark_results.md" ]
	# the mock server stops on SIGTERM, cleanly and at once, in every build
	[ "$(printf '%s\n' "$stderr" | grep -c "^  server stopped in [0-9.]*s: exited with status 0$")" -eq 3 ]
	grep -q "^## Serving tests" results/benchmark_results.md
	grep -q "^## Startup tests" results/benchmark_results.md
	grep -q "^| startup_mock_tp1 " results/benchmark_results.md
	# no engine is named that did not run: perfgate's client against its mock
	grep -q "^- Batch size: dynamically determined by the server to achieve maximum throughput.$" \
		results/benchmark_results.md
	! grep -qi "by vllm" results/benchmark_results.md
	grep -q "^| serving_mock_tp1_random_128_128_qps_inf " results/benchmark_results.md
	# how far the timings can be trusted, flagged or not (docs/loadgen.md)
	grep -q "^- Timing error: TTFT and ITL within [0-9.]* \(to [0-9.]* \)\?ms (the client's read delay p99" \
		results/benchmark_results.md
	[ -s results/benchmark_results.json ]
	for f in latency_mock_tp1 throughput_mock_tp1 serving_mock_tp1_random_128_128_qps_8 \
		serving_mock_tp1_random_128_128_qps_32 serving_mock_tp1_random_128_128_qps_inf \
		startup_mock_tp1; do
		[ -s "results/$f.json" ]
		[ -s "results/$f.commands" ]
	done
	"$PERFGATE_PYTHON" - <<'PY'
import json
r = json.load(open("results/serving_mock_tp1_random_128_128_qps_inf.json"))
assert r["completed"] == 64 and r["failed"] == 0, r
assert r["perfgate"]["status"] == "ok"
assert r["perfgate"]["server_command"].startswith("perfgate mock-server --port "), r["perfgate"]
s = json.load(open("results/startup_mock_tp1.json"))
assert len(s["cold_startup_times"]) == 3 and min(s["cold_startup_times"]) >= 0.1, s
assert len(s["warm_startup_times"]) == 2 and min(s["warm_startup_times"]) >= 0.04, s
c = json.load(open("results/serving_mock_tp1_random_128_128_qps_inf.commands"))
assert c["client_command"].startswith("vllm bench serve --backend openai"), c
PY
}
