#!/usr/bin/env bats
# A/B mode end to end (docs/ab.md): `perfgate ab` and the plugin step with
# baseline: ab, on real mock servers on loopback, driven as the agent
# drives the step (a buildkite-agent shim on PATH recording its calls).

load helpers
load procs

bats_require_minimum_version 1.5.0

setup() {
	common_setup
	PERFGATE="${PERFGATE_BIN:?PERFGATE_BIN is set by ctest}"
	PYTHON="${PERFGATE_PYTHON:-/usr/bin/python3}"
	WORK="${BATS_TEST_TMPDIR}/work"
	mkdir -p "${WORK}"
	cd "${WORK}"
	# unique per test: every server the test starts carries it (--model)
	mark_setup pgab
	unset PERFGATE_GPU
}

teardown() {
	mark_teardown
	if [ -f "${BATS_TEST_TMPDIR}/daemon.pid" ]; then
		kill "$(cat "${BATS_TEST_TMPDIR}/daemon.pid")" 2>/dev/null || true
	fi
}

field() { # field FILE PYTHON-EXPR-ON-r
	"$PYTHON" -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"
}

# The plugin configuration of an A/B step: base and head server flags,
# one serving test of 3 points (one server per block), small and fast.
ab_config() {
	local base="$1" head="$2" extra="${3:-}"
	export BUILDKITE_PLUGIN_CONFIGURATION='{"mode":"gate","baseline":"ab","gpu":"H100"'"${extra}"',
	"ab":{"base":{"server":{"flags":"'"${base}"'"}},"head":{"server":{"flags":"'"${head}"'"}},
	      "min_blocks":4,"max_blocks":6},
	"suites":{"defaults":{"model":"'"${MARK}"'","server":{"command":"perfgate mock-server --port {port} --model {model} --fixed-timing --ttft-ms 5","ready":"/health","ready_timeout":20,"stop_timeout":3}},
	"serving":[{"name":"serving_ab","qps":"inf","max_concurrency":[1,2,4],"prompts_per_concurrency":4,
	            "dataset":{"name":"random","input_len":32,"output_len":16}}]}}'
}

agent_env() {
	make_shim buildkite-agent
	export SHIM_STDIN=1
	export BUILDKITE=true BUILDKITE_JOB_ID=0190-job BUILDKITE_LABEL=":h100: perf"
	export BUILDKITE_STEP_KEY=perf-ab BUILDKITE_BUILD_URL=https://buildkite.com/acme/perf/builds/12
	export BUILDKITE_BRANCH=fix BUILDKITE_PULL_REQUEST=17 BUILDKITE_COMMIT=1a2b3c4d5e6f7a8b9c0d
}

@test "an A/B step: blocks interleaved, a slower head fails, both sides uploaded and annotated" {
	agent_env
	# the head's inter-token latency 40% longer: every point's TPOT
	ab_config "--itl-ms 2" "--itl-ms 2.8"
	run "${PERFGATE}" buildkite
	assert_equal "${status}" 1
	# the log says which side and block runs, in the balanced order
	assert_output --partial "--- perfgate A/B: block 1 of at most 6: base (pair 1)"
	assert_output --partial "--- perfgate A/B: block 2 of at most 6: head (pair 1)"
	assert_output --partial "--- perfgate A/B: block 3 of at most 6: head (pair 2)"
	assert_output --partial "--- perfgate A/B: block 4 of at most 6: base (pair 2)"
	assert_output --regexp "\+\+\+ perfgate: H100: .*regressed.* \(exit 1\)"
	# each side's results in the usual format, one repeat per block
	for side in base head; do
		for p in 1 2 4; do
			f="results/${side}/serving_ab_qps_inf_concurrency_${p}.json"
			assert_file_exists "$f"
			assert_equal "$(field "$f" 'r["perfgate"]["ab"]["side"]')" "${side}"
			assert_equal "$(field "$f" 'len(r["perfgate"]["repeats"]) == len(r["perfgate"]["ab"]["blocks"]) >= 2')" True
			assert_equal "$(field "$f" 'r["perfgate"]["status"]')" ok
		done
	done
	# the head really ran the head's flags, the base the base's
	grep -q -- '--itl-ms 2.8' results/head/serving_ab_qps_inf_concurrency_1.commands
	grep -q -- '--itl-ms 2"' results/base/serving_ab_qps_inf_concurrency_1.commands
	# the decision: TPOT regressed over the whole run, with its interval
	assert_equal "$(field results/verdict.json 'r["mode"], r["verdict"], r["exit_code"]')" "ab fail 1"
	assert_equal "$(field results/verdict.json '[w["verdict"] for w in r["whole_run"] if w["metric"] == "median_tpot_ms"][0]')" regressed
	assert_equal "$(field results/verdict.json '[w["lo"] > 0.2 and w["hi"] < 0.6 for w in r["whole_run"] if w["metric"] == "median_tpot_ms"][0]')" True
	grep -q '^| Median TPOT | +' results/comparison.md
	run cat "${CALLS}"
	assert_line --index 0 "buildkite-agent annotate --context perfgate-H100-perf-ab --style error"
	assert_line --index 2 "buildkite-agent meta-data set perfgate:H100:verdict regression"
	# artifacts: both sides, the comparison, the verdict
	assert_line --index 1 --partial "results/comparison.md"
	assert_line --index 1 --partial "results/verdict.json"
	assert_line --index 1 --partial "results/base/serving_ab_qps_inf_concurrency_1.json"
	assert_line --index 1 --partial "results/head/serving_ab_qps_inf_concurrency_4.json"
	refute_line --index 1 --partial "results/blocks/"
	# the annotation: the comparison's rows, the A/B fact, the charts with the base side
	grep -q 'baseline A/B: base on this agent, interleaved with the head' results/annotation.md
	grep -q 'whole run' results/annotation.md
	# a row's change is verdict.json's (comparison.md's, the charts'), with its interval
	want=$(field results/verdict.json '["%+.1f%%</span> \\[" % (100 * w["change"]) for w in r["whole_run"] if w["metric"] == "median_tpot_ms"][0]')
	grep -qF "| whole run | Median TPOT | — | — | <span class=\"red\">${want}" results/annotation.md
	grep -q 'Base' results/charts/serving_ab.svg
	[ -z "$(procs)" ]
}

@test "no GPU tool on the agent: the telemetry note once for the A/B run, not once per block" {
	export PATH="$(path_without nvidia-smi amd-smi):${SHIMS}"
	unset PERFGATE_GPU_TOOL
	ab_config "--itl-ms 2" "--itl-ms 2" ',"annotate":"never","artifacts":false'
	run --separate-stderr "${PERFGATE}" buildkite
	[ "$(grep -c -- '--- perfgate A/B: block' <<<"${stderr}")" -ge 4 ]
	[ "$(grep -c 'telemetry: no GPU telemetry' <<<"${stderr}")" = 1 ]
	[ -z "$(procs)" ]
}

@test "record-history on an A/B step: its results beside main's history, never its baseline, and on the trends site" {
	export GIT_AUTHOR_NAME=dev GIT_AUTHOR_EMAIL=dev@example.com GIT_COMMITTER_NAME=dev GIT_COMMITTER_EMAIL=dev@example.com
	export GIT_CONFIG_NOSYSTEM=1 HOME="${BATS_TEST_TMPDIR}"
	# a checkout: main (the base) and the pull request's branch (the head)
	git init -q -b main .
	git commit -q --allow-empty -m base
	local base_sha head_sha
	base_sha=$(git rev-parse HEAD)
	git checkout -q -b fix
	git commit -q --allow-empty -m head
	head_sha=$(git rev-parse HEAD)
	git init -q --bare "${BATS_TEST_TMPDIR}/history.git"
	agent_env
	export BUILDKITE_COMMIT="${head_sha}" BUILDKITE_PULL_REQUEST_BASE_BRANCH=main
	# the head four times as slow: a clear regression on a loaded machine too
	# (this test is about the record, the first about the decision's edge)
	ab_config "--itl-ms 2" "--itl-ms 8" ',"annotate":"never","record-history":true,"history-repo":"'"${BATS_TEST_TMPDIR}/history.git"'"'
	run "${PERFGATE}" buildkite
	assert_equal "${status}" 1
	assert_output --partial "perfgate: recorded the A/B results of 3 points in the H100 history (1 attempt)"
	# a pull request pushing to main's history: said in the log
	assert_output --partial "perfgate: note: ab-history-repo is not set: a pull request records its A/B results in main's history"
	run git --git-dir="${BATS_TEST_TMPDIR}/history.git" ls-tree -r --name-only refs/perfgate/history
	assert_output "$(printf 'H100/ab/serving_ab_qps_inf_concurrency_%s.jsonl\n' 1 2 4)"
	for c in 1 2 4; do
		git --git-dir="${BATS_TEST_TMPDIR}/history.git" show refs/perfgate/history:H100/ab/serving_ab_qps_inf_concurrency_${c}.jsonl
	done >ab-lines.jsonl
	# every line the run's; a point's interval where its pairs measured it
	# (a loaded machine may leave a point's client-bound pairs out)
	run "$PYTHON" -c 'import json,sys
rs = [json.loads(l) for l in open(sys.argv[1])]
ms = [r["metrics"]["median_tpot_ms"] for r in rs]
r = rs[0]
print(r["kind"], r["commit"], r["base_commit"], r["pr"], r["build_url"], r["outcome"], ms[0]["whole_run"]["verdict"],
      len({(x["commit"], x["outcome"]) for x in rs}) == 1,
      all(m["lo"] <= m["effect"] <= m["hi"] for m in ms if m["pairs"] >= 2), any(m["pairs"] >= 2 for m in ms))' ab-lines.jsonl
	assert_output "ab ${head_sha} ${base_sha} 17 https://buildkite.com/acme/perf/builds/12 fail regressed True True True"

	# main's runs of the same points, recorded as usual, here and in a
	# history without the A/B lines: the gate's baseline is the same
	git init -q --bare "${BATS_TEST_TMPDIR}/main-only.git"
	for repo in history main-only; do
		for i in 1 2 3; do
			"${PERFGATE}" baseline record results/base --repo "${BATS_TEST_TMPDIR}/${repo}.git" \
				--commit "${base_sha}" --build-url "https://buildkite.com/acme/perf/builds/$i" --gpu H100 >/dev/null
		done
		"${PERFGATE}" baseline show --baseline git --repo "${BATS_TEST_TMPDIR}/${repo}.git" --gpu H100 2>&1 |
			sed "s|${BATS_TEST_TMPDIR}/${repo}.git|REPO|g" >"../${repo}.show"
	done
	grep -q 'serving_ab_qps_inf_concurrency_1' ../history.show
	diff ../history.show ../main-only.show
	run --separate-stderr "${PERFGATE}" baseline check --repo "${BATS_TEST_TMPDIR}/history.git"
	assert_success
	assert_output --partial "1 GPU, 6 files, 12 records"

	# the site: the point pages and the overview show the A/B results
	run --separate-stderr "${PERFGATE}" trends ../site --repo "${BATS_TEST_TMPDIR}/history.git"
	assert_success
	grep -q '<h2>A/B results (1 step)</h2>' ../site/H100/index.html
	grep -q '<td>#17</td>' ../site/H100/index.html
	grep -q 'whole run: .*Median TPOT +' ../site/H100/index.html
	page=../site/H100/p/serving_ab_qps_inf_concurrency_1.html
	[ "$(grep -c '<table class="ab">' "$page")" -ge 3 ]
	grep -q "<code>${head_sha:0:12}</code> vs <code>${base_sha:0:12}</code>" "$page"
	grep -q '<a href="https://buildkite.com/acme/perf/builds/12">build</a>' "$page"
	# nothing fetched at view time
	run grep -lE '<script src|src="http' -r ../site
	assert_failure 1

	# the same history served (git daemon on loopback): the A/B lines are
	# read with the runs, from the one fetch of the GPU's read (and the
	# list of GPUs'), not fetched a second time
	local port url before
	port=$(free_port)
	git daemon --reuseaddr --listen=127.0.0.1 --port="$port" --base-path="${BATS_TEST_TMPDIR}" \
		--export-all --verbose --log-destination=stderr "${BATS_TEST_TMPDIR}" \
		2>"${BATS_TEST_TMPDIR}/daemon.log" 3>&- &
	echo $! >"${BATS_TEST_TMPDIR}/daemon.pid"
	url="git://127.0.0.1:$port/history.git"
	for _ in $(seq 600); do
		git ls-remote "$url" >/dev/null 2>&1 && break
		sleep 0.1
	done
	before=$(grep -c "Request upload-pack for '/history.git'" "${BATS_TEST_TMPDIR}/daemon.log")
	run --separate-stderr "${PERFGATE}" trends ../site-url --repo "$url"
	assert_success
	grep -q '<h2>A/B results (1 step)</h2>' ../site-url/H100/index.html
	[ "$(grep -c '<table class="ab">' ../site-url/H100/p/serving_ab_qps_inf_concurrency_1.html)" -ge 3 ]
	assert_equal "$(($(grep -c "Request upload-pack for '/history.git'" "${BATS_TEST_TMPDIR}/daemon.log") - before))" 2
	kill "$(cat "${BATS_TEST_TMPDIR}/daemon.pid")"
	rm "${BATS_TEST_TMPDIR}/daemon.pid"
	[ -z "$(procs)" ]
}

@test "ab-history-repo: a pull request records its A/B results in their own repository, main's history untouched, and trends shows them" {
	export GIT_AUTHOR_NAME=dev GIT_AUTHOR_EMAIL=dev@example.com GIT_COMMITTER_NAME=dev GIT_COMMITTER_EMAIL=dev@example.com
	export GIT_CONFIG_NOSYSTEM=1 HOME="${BATS_TEST_TMPDIR}"
	git init -q -b main .
	git commit -q --allow-empty -m head
	local hist="${BATS_TEST_TMPDIR}/history.git" abr="${BATS_TEST_TMPDIR}/ab.git" before
	git init -q --bare "${hist}"
	git init -q --bare "${abr}"
	# main's history: runs of other points, recorded by main's queue
	"${PERFGATE}" baseline record "${PERFGATE_TESTS}/data/gate/base" --repo "${hist}" \
		--commit HEAD --build-url https://buildkite.com/acme/perf/builds/1 --gpu H100 >/dev/null
	before=$(git --git-dir="${hist}" rev-parse refs/perfgate/history)
	agent_env
	export BUILDKITE_COMMIT="$(git rev-parse HEAD)"
	ab_config "--itl-ms 2" "--itl-ms 2" ',"annotate":"never","record-history":true,"trends":true,"history-repo":"'"${hist}"'","ab-history-repo":"'"${abr}"'"'
	run "${PERFGATE}" buildkite
	assert_success
	assert_output --partial "--- perfgate: recording the A/B results in the H100 history of ${abr}"
	assert_output --partial "perfgate: recorded the A/B results of 3 points in the H100 history (1 attempt)"
	refute_output --partial "ab-history-repo is not set"
	# main's history: not written to (the pull request's queue needs no
	# push rights there)
	assert_equal "$(git --git-dir="${hist}" rev-parse refs/perfgate/history)" "${before}"
	run git --git-dir="${hist}" ls-tree -r --name-only refs/perfgate/history
	refute_output --partial "/ab/"
	run git --git-dir="${abr}" ls-tree -r --name-only refs/perfgate/history
	assert_output "$(printf 'H100/ab/serving_ab_qps_inf_concurrency_%s.jsonl\n' 1 2 4)"
	# the step's trends site reads main's runs and the A/B repository
	grep -q '<h2>A/B results (1 step)</h2>' results/trends/H100/all.html
	grep -q '<td>#17</td>' results/trends/H100/all.html
	# perfgate trends: the A/B results only with --ab-repo
	run --separate-stderr "${PERFGATE}" trends ../site --repo "${hist}"
	assert_success
	run grep -c 'A/B results' ../site/H100/index.html
	assert_output 0
	run --separate-stderr "${PERFGATE}" trends ../site2 --repo "${hist}" --ab-repo "${abr}"
	assert_success
	grep -q '<h2>A/B results (1 step)</h2>' ../site2/H100/index.html
	# an A/B repository that cannot be read leaves the A/B results out, not the site
	run --separate-stderr "${PERFGATE}" trends ../site3 --repo "${hist}" --ab-repo "${BATS_TEST_TMPDIR}/nowhere.git"
	assert_success
	[[ "$stderr" == *"perfgate trends: H100: A/B results not shown: "* ]]
	[ -z "$(procs)" ]
}

@test "A/A: the same server on both sides never fails the step" {
	# generous tolerances: on a loaded test machine scheduling noise is
	# far above a GPU session's; nothing may regress
	ab_config "--itl-ms 2" "--itl-ms 2" ',"annotate":"never"'
	export BUILDKITE_PLUGIN_CONFIGURATION="${BUILDKITE_PLUGIN_CONFIGURATION/\"max_blocks\":6/\"max_blocks\":4,\"tolerance\":\"30%\",\"latency_tolerance\":\"60%\"}"
	run "${PERFGATE}" buildkite
	assert_success
	run field results/verdict.json 'r["verdict"] in ("pass", "warn"), r["blocks"], sum(x["verdict"] == "regressed" for x in r["rows"] + r["whole_run"])'
	assert_output "True 4 0"
	[ -z "$(procs)" ]
}

@test "perfgate ab: the suite's ab section, {side} in templates, exit codes as the gate's" {
	cat >suite.yml <<EOF
ab:
  base:
    server: {env: {AB_SIDE: "{side}"}}
  head:
    server: {command: "perfgate mock-server --port {port} --model {model} --timing-log {side}-{block}.jsonl --fixed-timing --ttft-ms 5 --itl-ms 2"}
  max_blocks: 4
  tolerance: 30%
  latency_tolerance: 60%
defaults:
  model: ${MARK}
  server:
    command: perfgate mock-server --port {port} --model {model} --timing-log {side}-{block}.jsonl --fixed-timing --ttft-ms 5 --itl-ms 2
    ready: /health
    stop_timeout: 3
serving:
  - name: serving_ab
    qps: inf
    max_concurrency: [1, 2, 4]
    prompts_per_concurrency: 4
    dataset: {name: random, input_len: 32, output_len: 16}
EOF
	run --separate-stderr "${PERFGATE}" ab suite.yml -o out --max-blocks 4
	assert_success
	# comparison.md on stdout, progress on stderr
	assert_output --partial "**perfgate A/B: "
	assert_output --partial "head vs base on the same machine, 2 block pairs"
	[[ "$stderr" == *"--- perfgate A/B: block 4 of at most 4: base (pair 2)"* ]]
	# {side} and {block} in the server commands: each block's server wrote
	# its own timing log
	grep -q -- "--timing-log base-4.jsonl" out/base/serving_ab_qps_inf_concurrency_1.commands
	grep -q -- "--timing-log head-3.jsonl" out/head/serving_ab_qps_inf_concurrency_1.commands
	for f in base-1 head-2 head-3 base-4; do assert_file_exists "$f.jsonl"; done
	assert_file_exists out/base/benchmark_results.md
	assert_file_exists out/head/benchmark_results.md
	assert_file_exists out/blocks/01-base/serving_ab_qps_inf_concurrency_1.json
	assert_file_exists out/blocks/02-head/serving_ab_qps_inf_concurrency_1.json
	[ -z "$(procs)" ]
}

@test "a side's own server command keeps a vLLM test file's server parameters, and the log says what it changed" {
	# vLLM's test file: its server_parameters are part of the configuration
	cat >serving-tests.json <<EOF
[{"test_name": "serving_ab", "qps_list": ["inf"],
  "server_parameters": {"model": "${MARK}", "tensor_parallel_size": 1, "load_format": "dummy",
                        "dtype": "bfloat16", "disable_log_stats": ""},
  "client_parameters": {"model": "${MARK}", "backend": "vllm", "dataset_name": "random",
                        "random_input_len": 32, "random_output_len": 16, "num_prompts": 8}}]
EOF
	local mock="perfgate mock-server --fixed-timing --ttft-ms 2 --itl-ms 1 --as-vllm"
	local own="${mock} serve {model} --host {host} --port {port} --seed 1"
	local params="--tensor-parallel-size 1 --load-format dummy --dtype bfloat16 --disable-log-stats"
	export PERFGATE_VLLM="${mock}"
	export BUILDKITE_PLUGIN_CONFIGURATION='{"mode":"run","baseline":"ab","gpu":"H100","suites":"serving-tests.json","annotate":"never",
	  "ab":{"base":{},"head":{"server":{"command":"'"${own}"'"}},"min_blocks":2,"max_blocks":2}}'
	run --separate-stderr "${PERFGATE}" buildkite
	assert_success
	# the head ran its own command with the file's parameters after it
	grep -qF -- "--seed 1 ${params}" results/head/serving_ab_qps_inf.commands
	grep -qF -- "${params}" results/base/serving_ab_qps_inf.commands
	# said once, before the blocks: what the override changed
	[[ "$stderr" == *"perfgate A/B: head: serving_ab: server ${own} ${params}"$'\n'"  in place of: vllm serve ${MARK} ${params} --host {host} --port {port}"$'\n'"  the test file's server parameters kept: ${params} (replace_test_flags: true drops them)"$'\n'"--- perfgate A/B: block 1 "* ]]

	# told to replace them: the side's command alone, and said so
	export BUILDKITE_PLUGIN_CONFIGURATION='{"mode":"run","baseline":"ab","gpu":"H100","suites":"serving-tests.json","annotate":"never",
	  "ab":{"base":{},"head":{"server":{"command":"'"${own}"'","replace_test_flags":true}},"min_blocks":2,"max_blocks":2}}'
	rm -rf results
	run --separate-stderr "${PERFGATE}" buildkite
	assert_success
	run ! grep -q -- "--load-format" results/head/serving_ab_qps_inf.commands
	grep -qF -- "${params}" results/base/serving_ab_qps_inf.commands
	grep -q "the test files' server parameters dropped: replace_test_flags" results/comparison.md
	[ -z "$(procs)" ]
}

@test "a head whose server crashes: the failures named, exit 3" {
	ab_config "--itl-ms 2" "--exit-after-ms 50" ',"annotate":"never"'
	export BUILDKITE_PLUGIN_CONFIGURATION="${BUILDKITE_PLUGIN_CONFIGURATION/\"max_blocks\":6/\"max_blocks\":4}"
	run "${PERFGATE}" buildkite
	assert_equal "${status}" 3
	# the head's server dies 50 ms after it is ready: the runner sees it exit,
	# or the client (the point's warm-up, or its run) finds the port closed
	# first, or loses a stream the server was writing when it died (a race
	# every way round)
	assert_output --regexp "perfgate: block 2 \(head\): serving_ab_qps_inf_concurrency_1: error: (server exited|(warm-up: )?all [0-9]+ requests failed \((dis)?connect: )"
	grep -q "block 3 (head): serving_ab_qps_inf_concurrency_4: error: " results/annotation.md
	assert_equal "$(field results/verdict.json 'r["verdict"], r["exit_code"], len(r["errors"]) >= 6')" "error 3 True"
	assert_equal "$(field results/head/serving_ab_qps_inf_concurrency_1.json 'r["perfgate"]["status"]')" error
	assert_equal "$(field results/base/serving_ab_qps_inf_concurrency_1.json 'r["perfgate"]["status"]')" ok
	[ -z "$(procs)" ]
}

@test "A/B configuration mistakes: one line naming file, line and key, exit 2, nothing runs" {
	printf 'ab:\n  base: {}\n  head:\n    server: {flag: --x}\nserving:\n  - {name: s, model: m, server: {command: "perfgate mock-server --port {port}"}}\n' >bad.yml
	run "${PERFGATE}" ab bad.yml
	assert_equal "${status}" 2
	assert_output "perfgate ab: bad.yml:4:14: ab.head.server: unknown key 'flag' (did you mean 'flags'?)"
	printf 'ab:\n  base: {}\n  head: {}\n  max_blocks: 5\nserving:\n  - {name: s, model: m, server: {command: "perfgate mock-server --port {port}"}}\n' >odd.yml
	run "${PERFGATE}" ab odd.yml
	assert_equal "${status}" 2
	assert_output --partial "odd.yml:4:15: ab.max_blocks: expected an even number of blocks (base and head in pairs), got 5"
	printf 'ab:\n  head: {}\nserving:\n  - {name: s, model: m, server: {command: "perfgate mock-server --port {port}"}}\n' >oneside.yml
	run "${PERFGATE}" ab oneside.yml
	assert_equal "${status}" 2
	assert_output --partial "oneside.yml:2:3: ab: an A/B run needs both sides: 'base' and 'head'"
	printf 'ab:\n  base: {}\n  head: {server: {flags: --x}}\nserving:\n  - {name: s, model: m, server: {remote: "http://127.0.0.1:9"}}\n' >remote.yml
	run "${PERFGATE}" ab remote.yml
	assert_equal "${status}" 2
	assert_output --partial "remote.yml:2:3: ab.head.server.flags: test 's' starts no server (remote)"
	printf 'serving:\n  - {name: s, model: m, server: {command: "perfgate mock-server --port {port}"}}\n' >plain.yml
	run "${PERFGATE}" ab plain.yml
	assert_equal "${status}" 2
	assert_output --partial "no A/B sides: the suite has no 'ab' section"
	# the plugin's options
	export BUILDKITE_PLUGIN_CONFIGURATION='{"suites":"plain.yml","ab":{"base":{},"head":{}}}'
	run "${PERFGATE}" buildkite
	assert_equal "${status}" 2
	assert_output --partial "option 'ab' applies with baseline: ab (got baseline: thresholds)"
	export BUILDKITE_PLUGIN_CONFIGURATION='{"suites":"plain.yml","baseline":"ab"}'
	run "${PERFGATE}" buildkite
	assert_equal "${status}" 2
	assert_output --partial "baseline: ab needs the two sides: the 'ab' option or an 'ab' section in the suite"
	export BUILDKITE_PLUGIN_CONFIGURATION='{"suites":"plain.yml","baseline":"ab","ab":{"base":{},"head":{"tolerance":"1%"}}}'
	run "${PERFGATE}" buildkite
	assert_equal "${status}" 2
	assert_output --partial "BUILDKITE_PLUGIN_CONFIGURATION: ab.head: unknown key 'tolerance'"
	export BUILDKITE_PLUGIN_CONFIGURATION='{"suites":"plain.yml","baseline":"ab","shard":"1/2"}'
	run "${PERFGATE}" buildkite
	assert_equal "${status}" 2
	assert_output --partial "option 'shard': an A/B step runs its blocks whole on one agent"
	[ ! -e results ]
}

@test "perfgate pipeline emits one A/B step per GPU" {
	printf 'ab:\n  base: {}\n  head: {server: {flags: --itl-ms 3}}\nserving:\n  - {name: s, model: m, server: {command: "perfgate mock-server --port {port}"}}\n' >ab.yml
	run --separate-stderr "${PERFGATE}" pipeline ab.yml --gpus H100,A100 --plugin perfgate/perfgate#v0.1.0 --option baseline=ab
	assert_success
	assert_equal "$(grep -c 'baseline: "ab"' <<<"$output")" 2
	assert_line --partial 'queue: "H100"'
	assert_line --partial 'queue: "A100"'
}

@test "SIGTERM during an A/B run: the block's server is gone, exit 143" {
	# slow points on the head: the signal lands inside block 2, after a
	# base block that is quick to finish (no tokens' time)
	ab_config "--itl-ms 0" "--itl-ms 2" ',"annotate":"never"'
	export BUILDKITE_PLUGIN_CONFIGURATION="${BUILDKITE_PLUGIN_CONFIGURATION/\"prompts_per_concurrency\":4/\"prompts_per_concurrency\":400}"
	"${PERFGATE}" buildkite >"${BATS_TEST_TMPDIR}/log" 2>&1 &
	PG_PID=$!
	for _ in $(seq 1 400); do
		grep -q "block 2 of at most" "${BATS_TEST_TMPDIR}/log" && [ -n "$(procs)" ] && break
		sleep 0.05
	done
	[ -n "$(procs)" ] # a server is running
	kill -TERM "$PG_PID"
	code=0
	wait "$PG_PID" || code=$?
	PG_PID=
	cat "${BATS_TEST_TMPDIR}/log"
	[ "$code" -eq 143 ]
	[ -z "$(procs)" ]
	grep -q "the A/B run was cancelled" results/annotation.md
	# no block after the signal
	! grep -q "block 3 of at most" "${BATS_TEST_TMPDIR}/log"
}
