#!/usr/bin/env bats
# perfgate run of a startup suite against the real mock server: every
# start a fresh process, timed from spawn to ready and to the first answer,
# never faster than the mock's simulated startup; cold starts with empty
# caches of their own, warm starts sharing the one the warm-up filled; no
# process left after the run, after a failed start, or after SIGTERM.

bats_require_minimum_version 1.5.0

load procs

setup() {
	DIR="$BATS_TEST_TMPDIR"
	RESULTS="$DIR/results"
	mark_setup pgboot
	unset BUILDKITE PERFGATE_GPU
}

teardown() {
	mark_teardown
}

# suite MOCK-FLAGS TEST-KEYS: one startup test of the mock server.
suite() {
	cat >"$DIR/suite.yml" <<EOF
startup:
  - name: startup_mock
    model: $MARK
    server:
      command: perfgate mock-server --port {port} --model {model} $1
      ready: /health
      ready_timeout: 10
      stop_timeout: 3
$2
EOF
}

field() {
	"$PERFGATE_PYTHON" -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"
}

@test "cold and warm starts: counts, times at least the simulated startup, vLLM's keys, no process left" {
	suite "--startup-delay-ms 100 --warm-startup-ms 30 --startup-jitter-ms 20 --session-seed {start}" \
		"    cold_starts: 3
    warmup_starts: 1
    warm_starts: 2"
	run --separate-stderr "$PERFGATE_BIN" run "$DIR/suite.yml" -o "$RESULTS"
	echo "$stderr"
	[ "$status" -eq 0 ]
	r="$RESULTS/startup_mock.json"
	[ "$(field "$r" 'len(r["cold_startup_times"])')" = 3 ]
	[ "$(field "$r" 'len(r["warm_startup_times"])')" = 2 ]
	[ "$(field "$r" 'len(r["cold_first_token_times"])')" = 3 ]
	# each cold start at least its simulated 100 ms, each warm one 30 ms;
	# the first answer comes after ready
	[ "$(field "$r" 'all(t >= 0.100 for t in r["cold_startup_times"])')" = True ]
	[ "$(field "$r" 'all(t >= 0.030 for t in r["warm_startup_times"])')" = True ]
	[ "$(field "$r" 'all(f > t for f, t in zip(r["cold_first_token_times"], r["cold_startup_times"]))')" = True ]
	# vLLM's names: the mean and the percentiles of startup.py
	[ "$(field "$r" 'sorted(r["cold_startup_percentiles"], key=int)')" = "['10', '25', '50', '75', '90', '99']" ]
	[ "$(field "$r" 'abs(r["avg_cold_startup_time"] - sum(r["cold_startup_times"]) / 3) < 1e-9')" = True ]
	[ "$(field "$r" 'r["perfgate"]["suite"]')" = startup ]
	# six starts, each a process of its own, one log line each
	[ "$(grep -c '^  start [0-9]/6 ' <<<"$stderr")" = 6 ]
	[[ "$stderr" == *"start 4/6 (warm-up)"* ]]
	# the last (warm) start found the marker the warm-up left
	grep -q "(warm start)" "$RESULTS/startup_mock.server.log"
	# the report has a startup section with its gated columns
	grep -q '^## Startup tests' "$RESULTS/benchmark_results.md"
	grep -q 'Cold start (s)' "$RESULTS/benchmark_results.md"
	no_procs_left 0
	# the caches went with the run
	[ -z "$(ls -d "$DIR"/perfgate-run-* 2>/dev/null)" ]
}

@test "without first_token only ready is timed; each cold start sees an empty cache" {
	# the mock leaves its marker in VLLM_CACHE_ROOT: a cold start that
	# found one would be ready in 1 ms, not 80
	suite "--startup-delay-ms 80 --warm-startup-ms 1" \
		"    cold_starts: 2
    warmup_starts: 0
    warm_starts: 0
    first_token: false"
	run --separate-stderr "$PERFGATE_BIN" run "$DIR/suite.yml" -o "$RESULTS"
	echo "$stderr"
	[ "$status" -eq 0 ]
	r="$RESULTS/startup_mock.json"
	[ "$(field "$r" 'len(r["cold_startup_times"])')" = 2 ]
	[ "$(field "$r" 'min(r["cold_startup_times"]) >= 0.080')" = True ]
	[ "$(field "$r" '"cold_first_token_times" in r or "warm_startup_times" in r')" = False ]
	no_procs_left 0
}

@test "a start that dies fails the point with the log's tail and leaves no process" {
	suite "--startup-delay-ms 300 --exit-after-ms 50 --exit-code 7" "    cold_starts: 3"
	run --separate-stderr "$PERFGATE_BIN" run "$DIR/suite.yml" -o "$RESULTS"
	echo "$stderr"
	[ "$status" -eq 3 ]
	[[ "$stderr" == *"start 1: server exited with status 7"* ]]
	[[ "$stderr" == *"simulated crash"* ]]
	[ "$(field "$RESULTS/startup_mock.json" 'r["perfgate"]["status"]')" = error ]
	no_procs_left 0
}

@test "SIGTERM between starts: the server in flight stopped, exit 143, no process left" {
	suite "--startup-delay-ms 200" "    cold_starts: 50"
	"$PERFGATE_BIN" run "$DIR/suite.yml" -o "$RESULTS" 2>"$DIR/stderr" &
	PG_PID=$!
	# "start 2/54": the 50 cold starts, then the warm-up and 3 warm starts
	for _ in $(seq 1 200); do
		grep -q "start 2/54 " "$DIR/stderr" && break
		sleep 0.05
	done
	grep -q "start 2/54 " "$DIR/stderr"
	kill -TERM "$PG_PID"
	code=0
	wait "$PG_PID" || code=$?
	PG_PID=
	cat "$DIR/stderr"
	[ "$code" -eq 143 ]
	[ "$(field "$RESULTS/startup_mock.json" 'r["perfgate"]["status"]')" = cancelled ]
	no_procs_left 2
}

@test "a startup test needs server.command and takes only its own keys" {
	cat >"$DIR/suite.yml" <<EOF
startup:
  - name: startup_remote
    model: m
    server: {remote: "http://127.0.0.1:9"}
EOF
	run --separate-stderr "$PERFGATE_BIN" run "$DIR/suite.yml" -o "$RESULTS"
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"a startup test starts its server: give server.command"* ]]
	cat >"$DIR/suite.yml" <<EOF
startup:
  - name: startup_x
    model: m
    server: {command: "perfgate mock-server --port {port}"}
    num_prompts: 4
EOF
	run --separate-stderr "$PERFGATE_BIN" run "$DIR/suite.yml" -o "$RESULTS"
	echo "$stderr"
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"'num_prompts' applies to"* ]]
}

@test "a slower start is a regression the gate fails on; the same start passes" {
	suite "--startup-delay-ms 50" "    cold_starts: 2
    warm_starts: 1"
	run --separate-stderr "$PERFGATE_BIN" run "$DIR/suite.yml" -o "$DIR/base"
	[ "$status" -eq 0 ]
	mkdir "$DIR/thr"
	run --separate-stderr "$PERFGATE_BIN" baseline update "$DIR/thr" --from "$DIR/base" --gpu T4
	echo "$stderr"
	[ "$status" -eq 0 ]
	grep -q 'avg_cold_startup_time:' "$DIR/thr/T4.yml"
	suite "--startup-delay-ms 600" "    cold_starts: 2
    warm_starts: 1"
	run --separate-stderr "$PERFGATE_BIN" run "$DIR/suite.yml" -o "$RESULTS"
	[ "$status" -eq 0 ]
	run --separate-stderr "$PERFGATE_BIN" gate -t "$DIR/thr" --gpu T4 "$RESULTS"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"Mean cold start (s)"*"regressed"* ]]
	run --separate-stderr "$PERFGATE_BIN" gate -t "$DIR/thr" --gpu T4 -q "$DIR/base"
	[ "$status" -eq 0 ]
	no_procs_left 0
}

@test "SIGKILL of perfgate while a start is in flight: its guard stops the server" {
	suite "--startup-delay-ms 200" "    cold_starts: 50"
	"$PERFGATE_BIN" run "$DIR/suite.yml" -o "$RESULTS" 2>"$DIR/stderr" &
	PG_PID=$!
	for _ in $(seq 1 200); do
		grep -q "start 3/54 " "$DIR/stderr" && break
		sleep 0.05
	done
	grep -q "start 3/54 " "$DIR/stderr"
	# a server of this test is running (starts follow each other closely)
	for _ in $(seq 1 40); do
		[ -n "$(procs)" ] && break
		sleep 0.05
	done
	[ -n "$(procs)" ]
	kill -9 "$PG_PID"
	wait "$PG_PID" || true
	PG_PID=
	no_procs_left 5
}

@test "a startup test may run vllm bench startup itself: its result file is the point" {
	cat >"$DIR/suite.yml" <<EOF
defaults:
  server: {command: "perfgate mock-server --port {port}"}
startup:
  - name: startup_vllm
    model: m
    command: cp $PERFGATE_SRC/tests/data/import/startup/startup_llama8B_tp1.json {result}
EOF
	run --separate-stderr "$PERFGATE_BIN" run "$DIR/suite.yml" -o "$RESULTS"
	echo "$stderr"
	[ "$status" -eq 0 ]
	r="$RESULTS/startup_vllm.json"
	[ "$(field "$r" 'r["perfgate"]["suite"]')" = startup ]
	[ "$(field "$r" 'r["perfgate"]["client"]')" = command ]
	[ "$(field "$r" 'r["cold_compilation_times"]')" = "[21.5, 20.9, 21.2]" ]
	# the inherited server was not started: vllm bench startup runs its own engine
	[[ "$stderr" != *"server: perfgate mock-server"* ]]
	grep -q "Cold start (s)" "$RESULTS/benchmark_results.md"
	# both at once is refused
	cat >"$DIR/suite.yml" <<EOF
startup:
  - name: startup_both
    model: m
    server: {command: "perfgate mock-server --port {port}"}
    command: cp x {result}
EOF
	run --separate-stderr "$PERFGATE_BIN" run "$DIR/suite.yml" -o "$RESULTS"
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"either starts server.command itself or runs command"* ]]
}
