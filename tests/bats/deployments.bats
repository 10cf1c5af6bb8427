#!/usr/bin/env bats
# A disaggregated deployment end to end (docs/deployments.md): perfgate
# starts the mock engine as 2 prefill workers, 2 decode workers and a proxy,
# measures through the proxy, keeps a log per role, and leaves no process of
# any role behind after a normal end, SIGTERM or SIGKILL of perfgate.
# "No process left" is checked in /proc (procs.bash).

bats_require_minimum_version 1.5.0

load procs

setup() {
	DIR="$BATS_TEST_TMPDIR"
	RESULTS="$DIR/results"
	mark_setup pgpd
	unset BUILDKITE PERFGATE_GPU
}

teardown() {
	mark_teardown
}

# suite BODY-OF-THE-TEST: a serving test on a 2P2D mock deployment whose
# prefill takes 30 ms and whose KV transfer takes 25 ms.
suite() {
	cat >"$DIR/suite.yml" <<EOF
defaults:
  model: $MARK
serving:
  - name: pd
    dataset: {name: random, input_len: 64, output_len: 8}
    server:
      ready: /health
      ready_timeout: 10
      stop_timeout: 3
      deployment:
        prefill:
          command: perfgate mock-server --role prefill --port {port} --model {model} --fixed-timing --ttft-ms 30 --itl-ms 2
          replicas: 2
        decode:
          command: perfgate mock-server --role decode --kv-transfer-ms 25 --port {port} --model {model} --fixed-timing --itl-ms 2
          replicas: 2
        proxy:
          command: perfgate mock-server --role proxy --port {port} --model {model} --prefill {prefill_urls} --decode {decode_urls} --log-requests
$1
EOF
}

start_perfgate_until() {
	"$PERFGATE_BIN" run "$DIR/suite.yml" -o "$RESULTS" --save-detailed 2>"$DIR/stderr" &
	PG_PID=$!
	for _ in $(seq 1 400); do
		"$@" && return 0
		sleep 0.05
	done
	"$@"
}

@test "a 2P2D deployment on the mock: TTFT includes prefill and transfer, a log per role, nothing left" {
	suite "    num_prompts: 24
    max_concurrency: [4]"
	run -0 "$PERFGATE_BIN" run "$DIR/suite.yml" -o "$RESULTS" --save-detailed
	echo "$output"
	# workers first, each waited for, then the proxy
	[[ "$output" == *"deployment: prefill=2x1,decode=2x1, then proxy"* ]]
	"$PERFGATE_PYTHON" - "$output" <<'EOF'
import sys
out = sys.argv[1]
order = [out.index(s) for s in ("prefill.0 ready", "prefill.1 ready", "decode.0 ready",
                                "decode.1 ready", "proxy.0: ", "proxy.0 ready")]
assert order == sorted(order), order
EOF
	# each role heard one SIGTERM and ended cleanly
	[ "$(echo "$output" | grep -c 'stopped in .*: exited with status 0')" -eq 5 ]
	for log in pd.prefill.0 pd.prefill.1 pd.decode.0 pd.decode.1 pd.proxy.0; do
		[ -s "$RESULTS/$log.log" ]
	done
	# both decode workers served (round robin), and the proxy sent each
	# request to a prefill worker first
	"$PERFGATE_PYTHON" - "$RESULTS" <<'EOF'
import re, sys
d = sys.argv[1]
served = [int(re.search(r"(\d+) requests", open(f"{d}/pd.decode.{i}.log").read()).group(1))
          for i in (0, 1)]
assert min(served) >= 10 and sum(served) >= 24, served
proxied = [l for l in open(f"{d}/pd.proxy.0.log") if l.startswith("mock-server proxy: /v1/")]
assert len(proxied) == sum(served), (len(proxied), served)
assert all(", decode http" in l for l in proxied)
EOF
	"$PERFGATE_PYTHON" - "$RESULTS/pd_qps_inf_concurrency_4.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["completed"] == 24, r["completed"]
assert r["perfgate"]["params"]["deployment"] == "prefill=2x1,decode=2x1", r["perfgate"]["params"]
d = r["perfgate"]["deployment"]
assert d["shape"] == "prefill=2x1,decode=2x1", d
assert [(x["role"], x["replica"], x["log"]) for x in d["roles"]] == [
    ("prefill", 0, "pd.prefill.0.log"), ("prefill", 1, "pd.prefill.1.log"),
    ("decode", 0, "pd.decode.0.log"), ("decode", 1, "pd.decode.1.log"),
    ("proxy", 0, "pd.proxy.0.log")], d
assert "--role proxy" in r["perfgate"]["server_command"]
# the mock's timing is exact: every first token comes after the prefill
# worker's 30 ms and the decode worker's 25 ms transfer
ttfts = r["ttfts"]
assert len(ttfts) == 24 and min(ttfts) >= 0.055, min(ttfts)
EOF
	grep -q "Deployments (role=replicas x TP): prefill=2x1,decode=2x1" "$RESULTS/benchmark_results.md"
	no_procs_left 5
}

@test "SIGTERM of perfgate during a deployment's point: every role stopped, exit 143" {
	suite "    num_prompts: 100000
    qps: [200]"
	start_perfgate_until grep -q "proxy.0 ready" "$DIR/stderr"
	# every role is up: 4 workers and the proxy (and its connections)
	[ "$(procs | wc -l)" -ge 5 ]
	sleep 0.3
	kill -TERM "$PG_PID"
	code=0
	wait "$PG_PID" || code=$?
	PG_PID=
	cat "$DIR/stderr"
	[ "$code" -eq 143 ]
	no_procs_left 5
}

@test "SIGKILL of perfgate during a deployment's point: the guards stop every role" {
	suite "    num_prompts: 100000
    qps: [200]"
	start_perfgate_until grep -q "proxy.0 ready" "$DIR/stderr"
	[ "$(procs | wc -l)" -ge 5 ]
	sleep 0.3
	kill -KILL "$PG_PID"
	wait "$PG_PID" || true
	PG_PID=
	no_procs_left 8
}

@test "SIGKILL of perfgate while the workers start: no role left" {
	suite "    num_prompts: 10"
	sed -i 's/--role decode/--role decode --startup-delay-ms 3000/' "$DIR/suite.yml"
	start_perfgate_until grep -q "decode.1 log" "$DIR/stderr"
	kill -KILL "$PG_PID"
	wait "$PG_PID" || true
	PG_PID=
	no_procs_left 8
}

@test "a decode worker that dies mid-point fails the point at once, named, with its log tail" {
	suite "    num_prompts: 100000
    qps: [100]"
	sed -i 's/--role decode/--role decode --exit-after-ms 1500 --exit-code 7/' "$DIR/suite.yml"
	SECONDS=0
	run -3 "$PERFGATE_BIN" run "$DIR/suite.yml" -o "$RESULTS"
	echo "$output"
	[ "$SECONDS" -lt 30 ]
	[[ "$output" =~ decode\.[01]\ exited\ with\ status\ 7\ during\ the\ point ]]
	[[ "$output" == *"last lines of $RESULTS/pd.decode."* ]]
	no_procs_left 5
}

@test "a worker that never becomes ready fails the test, named, and every started role is stopped" {
	suite "    num_prompts: 10"
	sed -i 's/--role decode/--role decode --never-ready/; s/ready_timeout: 10/ready_timeout: 2/' "$DIR/suite.yml"
	run -3 "$PERFGATE_BIN" run "$DIR/suite.yml" -o "$RESULTS"
	echo "$output"
	[[ "$output" == *"error: decode.0: server not ready after 2s"* ]]
	[[ "$output" == *"last lines of $RESULTS/pd.decode.0.log"* ]]
	# the proxy never started; every worker that did was stopped
	[[ "$output" != *"proxy.0: perfgate"* ]]
	[[ "$output" == *"prefill.1 stopped in"* && "$output" == *"decode.1 stopped in"* ]]
	no_procs_left 5
}

@test "a deployment without a front role: file, line and key, exit 2" {
	cat >"$DIR/suite.yml" <<EOF
serving:
  - name: pd
    model: m
    server:
      deployment:
        prefill:
          command: perfgate mock-server --port {port}
        decode:
          command: perfgate mock-server --port {port}
EOF
	run -2 "$PERFGATE_BIN" run "$DIR/suite.yml" -o "$RESULTS"
	echo "$output"
	[[ "$output" == *"suite.yml:6"*"deployment"*"no front role"* ]]
	[ "$(echo "$output" | wc -l)" -eq 1 ]
}

@test "history and compare keep a P/D point and a one-server point of the same test apart" {
	export GIT_AUTHOR_NAME=dev GIT_AUTHOR_EMAIL=dev@example.com
	export GIT_COMMITTER_NAME=dev GIT_COMMITTER_EMAIL=dev@example.com
	export GIT_CONFIG_NOSYSTEM=1 HOME="$BATS_TEST_TMPDIR" PERFGATE_GPU=H100
	unset BUILDKITE_PULL_REQUEST_BASE_BRANCH BUILDKITE_COMMIT BUILDKITE_BRANCH
	suite "    num_prompts: 12"
	# the same test, one server
	"$PERFGATE_PYTHON" - "$DIR/suite.yml" "$DIR/one.yml" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
one = re.sub(r"      deployment:.*", "      command: perfgate mock-server --port {port} --model {model}\n",
             text, flags=re.S)
open(sys.argv[2], "w").write(one + "    num_prompts: 12\n")
EOF
	cd "$DIR" && git init -q -b main
	for run in one1 one2 pd1; do
		git commit -q --allow-empty -m "$run"
		yml=suite.yml
		[[ $run == one* ]] && yml=one.yml
		"$PERFGATE_BIN" run "$yml" -o "$run" 2>/dev/null
		"$PERFGATE_BIN" baseline record "$run" --commit HEAD
	done
	run -0 git ls-tree -r --name-only refs/perfgate/history
	[ "$output" = "H100/pd@prefill=2x1,decode=2x1_qps_inf.jsonl
H100/pd_qps_inf.jsonl" ]
	# a P/D run: compared with its own history only
	"$PERFGATE_BIN" run suite.yml -o pd2 2>/dev/null
	run "$PERFGATE_BIN" compare pd2 --baseline git
	echo "$output"
	[[ "$output" == *"| pd@prefill=2x1,decode=2x1_qps_inf | Median TTFT (ms) |"*"1 run of this metric in the history"* ]]
	[[ "$output" != *"| pd_qps_inf |"* ]]
	[[ "$output" == *"1 baseline point not in this suite"* ]]
	# a one-server run: with its own, never the P/D history
	"$PERFGATE_BIN" run one.yml -o one3 2>/dev/null
	run "$PERFGATE_BIN" compare one3 --baseline git
	echo "$output"
	[[ "$output" == *"| pd_qps_inf | Median TTFT (ms) |"*"2 runs of this metric in the history"* ]]
	[[ "$output" != *"pd@"* ]]
	no_procs_left 5
}
