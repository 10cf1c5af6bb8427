#!/usr/bin/env bats
# perfgate buildkite on pull requests and on the default branch, where the
# trust boundaries are: a pull request's own thresholds never decide its
# gate (and a change to them is shown), the base is pinned before the pull
# request's commands run, a failed record is never only a log line, a
# retried job replaces its record, incomplete points are not recorded.
# Real git repositories, the real binary, a buildkite-agent shim.

load helpers

setup() {
	work_setup
	buildkite_job
	export BUILDKITE_PIPELINE_DEFAULT_BRANCH=main
	export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
	export GIT_CONFIG_NOSYSTEM=1 HOME="${BATS_TEST_TMPDIR}"
	unset PERFGATE_GPU
}

teardown() {
	if [ -f "${BATS_TEST_TMPDIR}/daemon.pid" ]; then
		kill "$(cat "${BATS_TEST_TMPDIR}/daemon.pid")" 2>/dev/null || true
	fi
}

config() {
	export BUILDKITE_PLUGIN_CONFIGURATION="$1"
}

# main: the suite and thresholds/H100.yml from a run of it, committed
main_with_thresholds() {
	cp "${PLUGIN_DIR}/tests/data/buildkite/suite.yml" "${PLUGIN_DIR}/tests/data/buildkite/fake-bench.sh" .
	git init -q -b main .
	config '{"suites":"suite.yml","gpu":"H100","mode":"run","results-dir":"base","annotate":"never","artifacts":false}'
	BUILDKITE= "${PERFGATE}" buildkite >/dev/null 2>&1
	"${PERFGATE}" baseline update thresholds --from base --gpu H100 2>/dev/null
	rm -rf base
	git add suite.yml fake-bench.sh thresholds
	git commit -qm main
	export BUILDKITE_COMMIT="$(git rev-parse HEAD)"
	: >"${CALLS}"
}

# a pull request branch off main, with the change the arguments make
pull_request() {
	git checkout -q -b pr
	"$@"
	git commit -qam "pr"
	export BUILDKITE_COMMIT="$(git rev-parse HEAD)" BUILDKITE_BRANCH=pr
	export BUILDKITE_PULL_REQUEST=12 BUILDKITE_PULL_REQUEST_BASE_BRANCH=main
}

# the pull request's way out of a 40% regression: a policy that gates
# nothing and escalates nothing, and baselines 1.4 times slower
loosen() {
	"${PYTHON}" - thresholds/H100.yml <<'PY'
import re, sys
path = sys.argv[1]
text = open(path).read()
text = re.sub(r"gate: true", "gate: false", text)
text = re.sub(r"(escalate: )[0-9.]+%", r"\g<1>99%", text)
def slower(m):
    return "%s%g" % (m.group(1), float(m.group(2)) * 1.4)
text = re.sub(r"((?:median|mean|p\d+)_latency_ms: )([0-9.]+)", slower, text)
open(path, "w").write(text)
PY
}

@test "a pull request that loosens its thresholds cannot pass a 40% regression; the annotation names the change" {
	main_with_thresholds
	pull_request loosen
	git diff --quiet main -- thresholds/H100.yml && false # the PR did change it
	config '{"suites":"suite.yml","gpu":"H100","confirm":false}'
	FAKE_BENCH_FACTOR=1.4 run "${PERFGATE}" buildkite
	assert_equal "${status}" 1
	local mb
	mb=$(git merge-base HEAD main)
	assert_output --regexp "perfgate: warning: this pull request changes thresholds/H100\\.yml \\(\\+[0-9]+ -[0-9]+ lines\\): the gate used the base branch's copy \\(main at ${mb:0:12}, the merge-base\\); the change applies once it is merged"
	run grep -c '^| latency_.*regressed' results/annotation.md
	[ "${output}" -ge 3 ]
	grep -qF "this pull request changes thresholds/H100.yml" results/annotation.md
	grep -qF "<summary>thresholds/H100.yml: this pull request against main at ${mb:0:12}</summary>" results/annotation.md
	grep -q '^```diff$' results/annotation.md
	grep -q '^-    gate: true' results/thresholds-change.diff || grep -q '^-.*gate: true' results/thresholds-change.diff
	grep -q '^+.*gate: false' results/thresholds-change.diff
	grep -qF "baseline thresholds/H100.yml at ${mb:0:12}" results/annotation.md

	# the opt-out: the pull request's copy decides, and it still says so
	config '{"suites":"suite.yml","gpu":"H100","confirm":false,"pr-thresholds":"pull-request"}'
	: >"${CALLS}"
	FAKE_BENCH_FACTOR=1.4 run "${PERFGATE}" buildkite
	assert_success
	assert_output --partial "and the gate used its copy (pr-thresholds: pull-request): the pull request sets its own bar"
	run cat "${CALLS}"
	assert_line --index 0 "buildkite-agent annotate --context perfgate-H100-perf-h100 --style warning"
}

@test "a pull request that leaves its thresholds alone: no warning, the base's copy" {
	main_with_thresholds
	pull_request sh -c 'echo "# a comment" >>suite.yml'
	config '{"suites":"suite.yml","gpu":"H100"}'
	run "${PERFGATE}" buildkite
	assert_success
	refute_output --partial "this pull request changes"
	assert_output --partial "+++ perfgate: H100: no regressions in 5 tests (exit 0)"
	[ ! -e results/thresholds-change.diff ]
	# deleting the file does not get the pull request out of the gate either
	git rm -q -r thresholds
	git commit -qm "no thresholds"
	export BUILDKITE_COMMIT="$(git rev-parse HEAD)"
	FAKE_BENCH_FACTOR=1.4 run "${PERFGATE}" buildkite
	assert_equal "${status}" 1
	assert_output --partial "this pull request deletes thresholds/H100.yml: the gate used the base branch's copy"
}

move_main_and_loosen() {
	sed -i '0,/"\.\/fake-bench\.sh/s//".\/move-main.sh/' suite.yml
	grep -q 'move-main.sh {result} latency' suite.yml
	git add move-main.sh
	loosen
}

@test "the base is pinned before the pull request's commands run" {
	main_with_thresholds
	# a benchmark command that moves main to the pull request's commit
	cat >move-main.sh <<'SH'
#!/bin/sh
git update-ref refs/heads/main HEAD
exec ./fake-bench.sh "$@"
SH
	chmod +x move-main.sh
	pull_request move_main_and_loosen
	config '{"suites":"suite.yml","gpu":"H100","confirm":false}'
	FAKE_BENCH_FACTOR=1.4 run "${PERFGATE}" buildkite
	# main was moved during the run ...
	[ "$(git rev-parse main)" = "$(git rev-parse pr)" ]
	# ... and the gate still used the base it found at the start
	assert_equal "${status}" 1
	assert_output --partial "this pull request changes thresholds/H100.yml"
}

@test "a base that cannot be read: exit 3, never the pull request's copy" {
	main_with_thresholds
	pull_request loosen
	export BUILDKITE_PULL_REQUEST_BASE_BRANCH=release-9
	config '{"suites":"suite.yml","gpu":"H100"}'
	FAKE_BENCH_FACTOR=1.4 run "${PERFGATE}" buildkite
	assert_equal "${status}" 3
	assert_output --partial "pull request: cannot read thresholds/H100.yml from the base branch: base branch 'release-9' not found (neither origin/release-9 nor a local branch) (fetch it, or set pr-thresholds: pull-request to gate with the pull request's own copy)"
	run cat "${CALLS}"
	assert_line --index 0 "buildkite-agent annotate --context perfgate-H100-perf-h100 --style error"
}

@test "baseline: git on a pull request takes its policy from the base branch too, and so does its trends page" {
	main_with_thresholds
	# the history of five builds of main, recorded by the plugin
	config '{"suites":"suite.yml","gpu":"H100","baseline":"git","record-history":true,"annotate":"never","artifacts":false}'
	for i in 1 2 3 4 5; do
		BUILDKITE_BUILD_URL="https://buildkite.com/acme/perf/builds/$i" run "${PERFGATE}" buildkite
		assert_success
	done
	pull_request loosen
	config '{"suites":"suite.yml","gpu":"H100","baseline":"git","confirm":false,"trends":true}'
	FAKE_BENCH_FACTOR=1.4 run "${PERFGATE}" buildkite
	assert_equal "${status}" 1
	assert_output --partial "this pull request changes thresholds/H100.yml"
	# the trends page judges with the policy the gate used, not the
	# loosened file of the pull request's checkout
	grep -q 'With <b>this PR</b>: perfgate: FAIL' results/trends/H100/index.html
}

@test "a failed record is an error in the annotation and exit 3; record-history-failure: warn softens it" {
	main_with_thresholds
	port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	config "{\"suites\":\"suite.yml\",\"gpu\":\"H100\",\"record-history\":true,\"history-repo\":\"git://127.0.0.1:${port}/nothing.git\"}"
	run "${PERFGATE}" buildkite
	assert_equal "${status}" 3
	assert_output --partial "perfgate: error: recording the history failed: git://127.0.0.1:${port}/nothing.git: fetching the history: "
	grep -qF "recording the history failed: git://127.0.0.1:${port}/nothing.git: fetching the history" results/annotation.md
	run cat "${CALLS}"
	assert_line --index 0 "buildkite-agent annotate --context perfgate-H100-perf-h100 --style error"
	assert_line --index 2 "buildkite-agent meta-data set perfgate:H100:verdict error"

	config "{\"suites\":\"suite.yml\",\"gpu\":\"H100\",\"record-history\":true,\"history-repo\":\"git://127.0.0.1:${port}/nothing.git\",\"record-history-failure\":\"warn\"}"
	: >"${CALLS}"
	run "${PERFGATE}" buildkite
	assert_success
	assert_output --partial "perfgate: warning: recording the history failed: "
	run cat "${CALLS}"
	assert_line --index 0 "buildkite-agent annotate --context perfgate-H100-perf-h100 --style warning"
}

@test "a retried job replaces its build's record; the history is said to be local without history-repo" {
	main_with_thresholds
	config '{"suites":"suite.yml","gpu":"H100","record-history":true,"annotate":"never","artifacts":false}'
	run "${PERFGATE}" buildkite
	assert_success
	assert_output --partial "perfgate: recorded 5 points in the H100 history (1 attempt)"
	assert_output --partial "perfgate: note: history-repo is not set: the history is refs/perfgate/history in this agent's checkout, pushed nowhere"
	# the same build, retried
	run "${PERFGATE}" buildkite
	assert_success
	assert_output --partial "perfgate: recorded 5 points in the H100 history, replacing 5 earlier records of this build (1 attempt)"
	run git show refs/perfgate/history:H100/latency_llama8B_tp1.jsonl
	[ "${#lines[@]}" = 1 ]
	grep -q "recorded in the history (5 points)" results/annotation.md
}

@test "incomplete points are not recorded: a note each in the annotation" {
	git init -q -b main .
	git commit -q --allow-empty -m main
	export BUILDKITE_COMMIT="$(git rev-parse HEAD)"
	"${PYTHON}" "${PLUGIN_DIR}/tests/bats/make_results.py" results
	"${PYTHON}" - results/serving_llama8B_tp1_sharegpt_qps_4.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["completed"], r["failed"] = 168, 32
json.dump(r, open(sys.argv[1], "w"))
PY
	config '{"mode":"report","gpu":"H100","record-history":true}'
	run "${PERFGATE}" buildkite
	assert_success
	assert_output --partial "perfgate: not recorded in the history: serving_llama8B_tp1_sharegpt_qps_4: incomplete: 32 of 200 requests failed"
	grep -qF "not recorded in the history: serving\\_llama8B\\_tp1\\_sharegpt\\_qps\\_4: incomplete: 32 of 200 requests failed" results/annotation.md ||
		grep -qF "not recorded in the history: serving_llama8B_tp1_sharegpt_qps_4: incomplete: 32 of 200 requests failed" results/annotation.md
	grep -qF "serving_llama8B_tp1_sharegpt_qps_4 — **incomplete**: 32 of 200 requests failed" results/benchmark_results.md
	run git ls-tree -r --name-only refs/perfgate/history
	refute_output --partial "qps_4.jsonl"
	assert_output --partial "qps_16.jsonl"
}
