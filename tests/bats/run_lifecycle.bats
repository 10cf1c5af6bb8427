#!/usr/bin/env bats
# perfgate run end to end: the real binary starting the real mock server
# (perfgate mock-server) on loopback, driving it with the native client,
# and everything that can go wrong on the way -- a server that never
# becomes ready, one that dies while starting or in the middle of a sweep,
# SIGTERM and SIGKILL of perfgate, a model name that is shell code, an
# external benchmark command. "No process left" is checked in /proc.

bats_require_minimum_version 1.5.0

load procs

setup() {
	DIR="$BATS_TEST_TMPDIR"
	RESULTS="$DIR/results"
	mark_setup pgbats
	unset BUILDKITE PERFGATE_GPU
}

teardown() {
	mark_teardown
}

# suite SERVER_FLAGS BODY: a suite file with the mock server as server.
suite() {
	cat >"$DIR/suite.yml" <<EOF
defaults:
  model: $MARK
  server:
    command: perfgate mock-server --port {port} --model {model} --ttft-ms 5 --itl-ms 2 $1
    ready: /health
    ready_timeout: 10
    stop_timeout: 3
$2
EOF
}

field() { # field FILE PYTHON-EXPR-ON-r
	"$PERFGATE_PYTHON" -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"
}

# The server: mapping (indented for a test) of a server whose process group
# ignores SIGTERM -- a shell trapping it, the mock server in the
# background: only SIGKILL ends it.
stubborn_server() {
	cat <<EOF
    server:
      command: >-
        /bin/sh -c 'trap "" TERM; "\$0" mock-server --port {port} --model {model} &
        while :; do sleep 1; done' $PERFGATE_BIN
      ready: /health
      stop_timeout: 60
EOF
}

# start_perfgate_until COMMAND...: run perfgate on the suite in the
# background (PG_PID, stderr in $DIR/stderr) and wait, up to 20 s, until
# COMMAND succeeds; fails if it never does.
start_perfgate_until() {
	"$PERFGATE_BIN" run "$DIR/suite.yml" -o "$RESULTS" 2>"$DIR/stderr" &
	PG_PID=$!
	for _ in $(seq 1 400); do
		"$@" && return 0
		sleep 0.05
	done
	"$@"
}

# signal_and_wait SIG: send SIG to the perfgate started in the background
# (PG_PID) and wait for it; sets code (its exit status) and took (seconds).
signal_and_wait() {
	kill -"$1" "$PG_PID"
	local start=$SECONDS
	code=0
	wait "$PG_PID" || code=$?
	took=$((SECONDS - start))
	PG_PID=
	cat "$DIR/stderr"
}

run_perfgate() {
	run --separate-stderr "$PERFGATE_BIN" run "$DIR/suite.yml" -o "$RESULTS" "$@"
	echo "$stderr"
}

@test "what a run needs is checked before a server starts: {port} in the command, the dataset file" {
	# a server told no {port} listens where perfgate never looks: an error
	# at load, not a wait for the 1,200 s ready timeout
	cat >"$DIR/suite.yml" <<EOF
serving:
  - name: serving_fixed
    model: $MARK
    server: {command: "perfgate mock-server --port 8000 --model {model}", ready: /health, ready_timeout: 3}
EOF
	start=$SECONDS
	run_perfgate
	[ "$status" -eq 2 ]
	[ $((SECONDS - start)) -lt 5 ]
	[ "$stderr" = "perfgate run: $DIR/suite.yml:4:23: serving[0].server.command: the server command has no {port}: perfgate starts it on a free loopback port and waits for it there, so the command must listen on it (e.g. --port {port}); a server already running on a fixed port is server.remote: http://127.0.0.1:8000" ]
	run --separate-stderr "$PERFGATE_BIN" run "$DIR/suite.yml" --dry-run
	[ "$status" -eq 2 ]
	# a missing dataset: exit 2 before the server loads its model
	suite "" "
serving:
  - name: serving_sharegpt
    dataset: {name: sharegpt, path: $DIR/missing/ShareGPT.json}"
	run_perfgate
	[ "$status" -eq 2 ]
	[ "$stderr" = "perfgate run: $DIR/suite.yml:10: test 'serving_sharegpt': dataset file '$DIR/missing/ShareGPT.json': not found; put it there before the run (docs/suite.md, dataset)" ]
	[ ! -e "$RESULTS" ]
	no_procs_left 0
}

@test "a GPU named by hand that nothing knows: one warning with a guess, the run goes on" {
	suite "" "
serving:
  - name: serving_gpu
    qps: [inf]
    num_prompts: 4
    dataset: {name: random, input_len: 8, output_len: 4}"
	mkdir -p "$DIR/thresholds" && cp "$PERFGATE_SRC/thresholds/H100.yml" "$DIR/thresholds/"
	cd "$DIR"
	run_perfgate --gpu H10
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"perfgate run: warning: GPU 'H10' (from --gpu): not a GPU perfgate knows, and there is no thresholds/H10.yml (did you mean H100?); its results will say 1xH10"* ]]
	[ "$(grep -c 'warning: GPU' <<<"$stderr")" = 1 ]
	# one perfgate knows, or one with a thresholds file: not a word
	for gpu in B200 H100; do
		run_perfgate --gpu "$gpu"
		[ "$status" -eq 0 ]
		[[ "$stderr" != *"warning: GPU"* ]]
	done
	PERFGATE_GPU=H1OO run_perfgate
	[[ "$stderr" == *"warning: GPU 'H1OO' (from PERFGATE_GPU): not a GPU perfgate knows"*"(did you mean H100?)"* ]]
	no_procs_left 0
}

@test "a server that never becomes ready times out and leaves no process" {
	suite "--never-ready" "
serving:
  - name: serving_never
    qps: [1, inf]
    num_prompts: 10"
	sed -i 's/ready_timeout: 10/ready_timeout: 1/' "$DIR/suite.yml"
	start=$SECONDS
	run_perfgate
	[ "$status" -eq 3 ]
	[ $((SECONDS - start)) -lt 8 ]
	[[ "$stderr" == *"error: server not ready after 1s: GET http://127.0.0.1:"*"/health: "* ]]
	[ "$(field "$RESULTS/serving_never_qps_1.json" 'r["perfgate"]["status"]')" = error ]
	[ "$(field "$RESULTS/serving_never_qps_inf.json" 'r["perfgate"]["status"]')" = error ]
	[ "$(field "$RESULTS/perfgate_run.json" 'r["perfgate_run"]["exit_code"]')" = 3 ]
	no_procs_left 0
}

@test "a server that exits while starting is reported at once with its log tail" {
	suite "--startup-delay-ms 20000 --exit-after-ms 300 --exit-code 7" "
latency:
  - name: latency_crash
    iterations: 2
    warmup_iterations: 0"
	sed -i 's/ready_timeout: 10/ready_timeout: 600/' "$DIR/suite.yml"
	start=$SECONDS
	run_perfgate
	[ "$status" -eq 3 ]
	# at once: long before the 20 s startup delay or the 600 s ready
	# timeout (seconds, not a fraction: sanitizer builds on a busy host
	# take over a second to start the mock server)
	[ $((SECONDS - start)) -lt 10 ]
	[[ "$stderr" =~ "error: server exited with status 7 after "[0-9]+\.[0-9]"s while starting" ]]
	[[ "$stderr" == *"    perfgate mock-server: simulated crash after 300 ms (--exit-after-ms), exit code 7"* ]]
	err=$(field "$RESULTS/latency_crash.json" 'r["perfgate"]["error"]')
	[[ "$err" == *"last lines of $RESULTS/latency_crash.server.log:"*"simulated crash after 300 ms"* ]]
	no_procs_left 0
}

@test "a server that crashes in the middle of a sweep fails those points, the rest run" {
	suite "--exit-after-ms 1500" "
serving:
  - name: serving_crash
    qps: [20, 40]
    num_prompts: 200
    dataset: {name: random, input_len: 16, output_len: 16}
  - name: serving_after
    qps: [inf]
    num_prompts: 20
    dataset: {name: random, input_len: 16, output_len: 16}"
	# the second test gets a server that does not crash
	"$PERFGATE_PYTHON" - "$DIR/suite.yml" <<'EOF'
import sys
p = sys.argv[1]
s = open(p).read().replace("  - name: serving_after\n",
    "  - name: serving_after\n    server: {command: \"perfgate mock-server --port {port} --model {model}\"}\n")
open(p, "w").write(s)
EOF
	start=$SECONDS
	run_perfgate
	[ "$status" -eq 3 ]
	[ $((SECONDS - start)) -lt 10 ]
	err=$(field "$RESULTS/serving_crash_qps_20.json" 'r["perfgate"]["error"]')
	[[ "$err" == "server exited with status 1 during the point"* ]]
	[[ "$err" == *"simulated crash after 1500 ms"* ]]
	[ "$(field "$RESULTS/serving_crash_qps_40.json" 'r["perfgate"]["error"]')" = "server exited with status 1 before the point" ]
	[ "$(field "$RESULTS/serving_after_qps_inf.json" 'r["perfgate"]["status"]')" = ok ]
	[ "$(field "$RESULTS/serving_after_qps_inf.json" 'r["completed"]')" = 20 ]
	[[ "$stderr" == *"perfgate run: 1 ok, 2 error"* ]]
	no_procs_left 0
}

@test "SIGTERM during a serving sweep: finished results kept, group gone, exit 143" {
	suite "" "
serving:
  - name: serving_sweep
    qps: [40, 41, 42, 43, 44]
    num_prompts: 80
    dataset: {name: random, input_len: 16, output_len: 16}"
	start_perfgate_until test -e "$RESULTS/serving_sweep_qps_40.json"
	sleep 0.5
	[ -n "$(procs)" ] # the server is running
	signal_and_wait TERM
	[ "$code" -eq 143 ]
	[ "$took" -le 10 ]
	no_procs_left 0
	[ "$(field "$RESULTS/serving_sweep_qps_40.json" 'r["perfgate"]["status"]')" = ok ]
	[ "$(field "$RESULTS/serving_sweep_qps_41.json" 'r["perfgate"]["status"]')" = cancelled ]
	[ ! -e "$RESULTS/serving_sweep_qps_42.json" ]
	[ "$(field "$RESULTS/perfgate_run.json" 'r["perfgate_run"]["status"]')" = cancelled ]
	[ "$(field "$RESULTS/perfgate_run.json" 'r["perfgate_run"]["points"][4]["status"]')" = "not run" ]
	grep -q "perfgate: cancelled by signal 15; finished results are kept" "$DIR/stderr"
}

@test "SIGTERM while a server and an external command both ignore it: one shared grace, exit 143" {
	# stopped one after the other, each would get its own 4 s before
	# SIGKILL: 8 s and more of Buildkite's 10; signalled together, 4 s
	cat >"$DIR/suite.yml" <<EOF
latency:
  - name: latency_stubborn
    model: $MARK
$(stubborn_server)
    command: "/bin/sh -c 'trap \"\" TERM; while :; do sleep 1; done; echo {result} {model}'"
    command_timeout: 600
EOF
	start_perfgate_until grep -q "command log:" "$DIR/stderr"
	sleep 0.3
	signal_and_wait TERM
	[ "$code" -eq 143 ]
	[ "$took" -le 7 ]
	no_procs_left 2
	[ "$(field "$RESULTS/latency_stubborn.json" 'r["perfgate"]["status"]')" = cancelled ]
}

@test "SIGKILL of perfgate leaves only whole files, and its guard stops the server" {
	suite "" "
serving:
  - name: serving_killed
    qps: [60, 61, 62, 63, 64, 65, 66, 67]
    num_prompts: 30
    dataset: {name: random, input_len: 16, output_len: 16}"
	start_perfgate_until test -e "$RESULTS/serving_killed_qps_61.json"
	[ -n "$(procs)" ]
	kill -KILL "$PG_PID"
	wait "$PG_PID" || true
	PG_PID=
	# nothing of the server outlives perfgate (the guard stops its group)
	no_procs_left 8
	# every file in the results directory is whole
	"$PERFGATE_PYTHON" - "$RESULTS" <<'EOF'
import json, os, sys
d = sys.argv[1]
names = sorted(os.listdir(d))
assert names, "no results at all"
for n in names:
    assert ".tmp" not in n, n
    if n.endswith((".json", ".commands")):
        json.load(open(os.path.join(d, n)))
assert "serving_killed_qps_60.json" in names, names
EOF
}

@test "a secret the server prints never reaches its log, even when perfgate is SIGKILLed" {
	# vLLM prints its arguments, api_key included, as it starts
	export HF_TOKEN="hf_${MARK}_secret"
	cat >"$DIR/suite.yml" <<EOF
defaults:
  model: $MARK
  server:
    command: >-
      sh -c 'echo "args hf_token=\$HF_TOKEN"; exec "\$0" mock-server --port {port} --model {model} --ttft-ms 5 --itl-ms 2'
      $PERFGATE_BIN
    ready: /health
    ready_timeout: 10
    stop_timeout: 3
serving:
  - name: serving_secret
    qps: [60, 61, 62, 63]
    num_prompts: 30
    dataset: {name: random, input_len: 16, output_len: 16}
EOF
	start_perfgate_until test -e "$RESULTS/serving_secret_qps_60.json"
	grep -q '^args hf_token=\*\*\*$' "$RESULTS/serving_secret.server.log"
	kill -KILL "$PG_PID"
	wait "$PG_PID" || true
	PG_PID=
	no_procs_left 8
	run grep -c "$HF_TOKEN" "$RESULTS/serving_secret.server.log"
	[ "$output" = 0 ]
	grep -q '^args hf_token=\*\*\*$' "$RESULTS/serving_secret.server.log"
}

# bench.sh MODEL RESULT: a stand-in for `vllm bench latency --output-json`
write_bench_script() {
	cat >"$DIR/bench.sh" <<'EOF'
#!/bin/sh
echo "vllm bench latency for $1 x${PERFGATE_TEST_ITERS:-?}"
exec "$PERFGATE_PYTHON" -c '
import json, sys
json.dump({"avg_latency": 1.25, "std_latency": 0.05, "latencies": [1.2, 1.25, 1.3],
           "percentiles": {"10": 1.2, "25": 1.22, "50": 1.25, "75": 1.28, "90": 1.3, "99": 1.3},
           "model_seen": sys.argv[1]}, open(sys.argv[2], "w"))' "$1" "$2"
EOF
	chmod +x "$DIR/bench.sh"
}

@test "a model name that is shell code reaches the server and commands as one literal argument" {
	pwned="$DIR/pwned"
	model="$MARK'\"\$(touch $pwned)\"'\`touch $pwned\`; touch $pwned"
	yaml_model=${model//\'/\'\'}
	write_bench_script
	suite "" "
serving:
  - name: serving_inject
    num_prompts: 5
    dataset: {name: random, input_len: 8, output_len: 8}
latency:
  - name: latency_inject_shell
    command: $DIR/bench.sh {model} {result}
    command_shell: true"
	"$PERFGATE_PYTHON" - "$DIR/suite.yml" "$yaml_model" "$MARK" <<'EOF'
import sys
p, model, mark = sys.argv[1:]
s = open(p).read().replace("  model: " + mark + "\n", "  model: '" + model + "'\n", 1)
open(p, "w").write(s)
EOF
	run_perfgate
	[ "$status" -eq 0 ]
	[ ! -e "$pwned" ]
	[ "$(field "$RESULTS/serving_inject_qps_inf.json" 'r["perfgate"]["params"]["model"]')" = "$model" ]
	# the mock server reports the model it was given: the whole string
	[ "$(field "$RESULTS/serving_inject_qps_inf.json" 'r["model_id"]')" = "$model" ]
	# through /bin/sh -c too (shell: true quotes substituted values)
	[ "$(field "$RESULTS/latency_inject_shell.json" 'r["model_seen"]')" = "$model" ]
	no_procs_left 0
}

@test "an external command writes its result file and perfgate imports it" {
	write_bench_script
	cat >"$DIR/suite.yml" <<EOF
latency:
  - name: latency_external
    model: some/model
    command_env: {PERFGATE_TEST_ITERS: "3"}
    command: $DIR/bench.sh {model} {result}
  - name: latency_external_fails
    model: some/model
    command: "/bin/sh -c 'echo ValueError, no GPU >&2; exit 2; echo {result}'"
EOF
	run_perfgate
	[ "$status" -eq 3 ]
	[ "$(field "$RESULTS/latency_external.json" 'r["avg_latency"]')" = 1.25 ]
	[ "$(field "$RESULTS/latency_external.json" 'r["perfgate"]["client"]')" = command ]
	[ "$(field "$RESULTS/latency_external.json" 'r["perfgate"]["status"]')" = ok ]
	cmd=$(field "$RESULTS/latency_external.commands" 'r["latency_command"]')
	[[ "$cmd" == "PERFGATE_TEST_ITERS=3 $DIR/bench.sh some/model "*"/latency_external.json" ]]
	grep -q "vllm bench latency for some/model x3" "$RESULTS/latency_external.command.log"
	err=$(field "$RESULTS/latency_external_fails.json" 'r["perfgate"]["error"]')
	[[ "$err" == "command exited with status 2"*"ValueError, no GPU"* ]]
	[ "$(field "$RESULTS/perfgate_run.json" 'len(r["perfgate_run"]["points"])')" -eq 2 ]
	# the report has both rows, the failed one marked
	grep -q "^| latency_external " "$RESULTS/benchmark_results.md"
	grep -q "^| latency_external_fails — \*\*error\*\*: command exited with status 2" "$RESULTS/benchmark_results.md"
}

@test "a second Ctrl-C kills the server group at once and exits 130" {
	# a server whose group ignores SIGTERM: after the first signal perfgate
	# would wait 4 s for it; the second signal's SIGKILL ends it at once
	cat >"$DIR/suite.yml" <<EOF
serving:
  - name: serving_twice
    model: $MARK
$(stubborn_server)
    qps: [20, 21, 22]
    num_prompts: 100
    dataset: {name: random, input_len: 16, output_len: 16}
EOF
	start_perfgate_until grep -q "server ready" "$DIR/stderr"
	sleep 0.3
	kill -INT "$PG_PID"
	sleep 0.05
	kill -INT "$PG_PID"
	start=$SECONDS
	code=0
	wait "$PG_PID" || code=$?
	PG_PID=
	cat "$DIR/stderr"
	[ "$code" -eq 130 ]
	[ $((SECONDS - start)) -le 2 ]
	no_procs_left 5
}
