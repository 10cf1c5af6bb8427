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
	git init -q --bare "${BATS_TEST_TMPDIR}/history.git"
	config "{\"suites\":\"suite.yml\",\"gpu\":\"H100\",\"baseline\":\"git\",\"record-history\":true,\"annotate\":\"never\",\"artifacts\":false,\"history-repo\":\"${BATS_TEST_TMPDIR}/history.git\"}"
	for i in 1 2 3 4 5; do
		BUILDKITE_BUILD_URL="https://buildkite.com/acme/perf/builds/$i" run "${PERFGATE}" buildkite
		assert_success
	done
	pull_request loosen
	config "{\"suites\":\"suite.yml\",\"gpu\":\"H100\",\"baseline\":\"git\",\"confirm\":false,\"trends\":true,\"history-repo\":\"${BATS_TEST_TMPDIR}/history.git\"}"
	FAKE_BENCH_FACTOR=1.4 run "${PERFGATE}" buildkite
	assert_equal "${status}" 1
	assert_output --partial "this pull request changes thresholds/H100.yml"
	# the trends page judges with the policy the gate used, not the
	# loosened file of the pull request's checkout
	grep -q 'With <b>this PR</b>: <span class="bad">perfgate: FAIL' results/trends/H100/all.html
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

# A benchmark command of the pull request's that writes FILE's content to
# DEST during the run (before the gate reads anything), then runs the
# benchmark: the attack on a policy read after the run.
plant_during_run() {
	cat >plant.sh <<SH
#!/bin/sh
mkdir -p "\$(dirname "$2")"
cp "$1" "$2"
exec ./fake-bench.sh "\$@"
SH
	chmod +x plant.sh
	sed -i '0,/"\.\/fake-bench\.sh/s//".\/plant.sh/' suite.yml
	grep -q 'plant.sh {result} latency' suite.yml
}

# thresholds/H100.yml loosened, kept aside at $1
loosened_copy() {
	loosen
	cp thresholds/H100.yml "$1"
	git checkout -q -- thresholds/H100.yml
}

symlink_out() {
	loosened_copy "${BATS_TEST_TMPDIR}/loose.yml"
	git rm -q -r thresholds
	mkdir -p "${BATS_TEST_TMPDIR}/evil"
	ln -s "${BATS_TEST_TMPDIR}/evil" thresholds
	plant_during_run "${BATS_TEST_TMPDIR}/loose.yml" "${BATS_TEST_TMPDIR}/evil/H100.yml"
	git add thresholds plant.sh suite.yml
}

@test "thresholds/ replaced by a committed link out of the repository, filled during the run: the base's copy decides" {
	main_with_thresholds
	pull_request symlink_out
	[ -L thresholds ]
	config '{"suites":"suite.yml","gpu":"H100","confirm":false}'
	FAKE_BENCH_FACTOR=1.4 run "${PERFGATE}" buildkite
	# the run did plant its copy ...
	grep -q 'gate: false' "${BATS_TEST_TMPDIR}/evil/H100.yml"
	# ... and the gate read the merge-base's
	assert_equal "${status}" 1
	local mb
	mb=$(git merge-base HEAD main)
	assert_output --partial "this pull request changes thresholds/H100.yml"
	grep -qF "baseline thresholds/H100.yml at ${mb:0:12}" results/annotation.md
	grep -q '^+.*gate: false' results/thresholds-change.diff
}

submodule_thresholds() {
	local evil="${BATS_TEST_TMPDIR}/evil-repo"
	loosened_copy "${BATS_TEST_TMPDIR}/loose.yml"
	git init -q -b main "${evil}"
	cp "${BATS_TEST_TMPDIR}/loose.yml" "${evil}/H100.yml"
	git -C "${evil}" add H100.yml
	git -C "${evil}" commit -qm evil
	git rm -q -r thresholds
	git -c protocol.file.allow=always submodule add -q "${evil}" thresholds
}

@test "thresholds/ made a submodule of the author's repository: the base's copy decides, the annotation says so" {
	main_with_thresholds
	pull_request submodule_thresholds
	[ -f thresholds/.git ]
	grep -q 'gate: false' thresholds/H100.yml
	config '{"suites":"suite.yml","gpu":"H100","confirm":false}'
	FAKE_BENCH_FACTOR=1.4 run "${PERFGATE}" buildkite
	assert_equal "${status}" 1
	local mb
	mb=$(git merge-base HEAD main)
	assert_output --partial "this pull request changes thresholds/H100.yml"
	grep -qF "baseline thresholds/H100.yml at ${mb:0:12}" results/annotation.md
}

@test "the thresholds option spelled through /proc/self/cwd is still the checkout's: the base's copy decides" {
	[ -d /proc/self/cwd/ ] || skip "no /proc"
	main_with_thresholds
	pull_request loosen
	config '{"suites":"suite.yml","gpu":"H100","confirm":false,"thresholds":"/proc/self/cwd/thresholds"}'
	FAKE_BENCH_FACTOR=1.4 run "${PERFGATE}" buildkite
	assert_equal "${status}" 1
	assert_output --partial "this pull request changes thresholds/H100.yml"
}

@test "a thresholds directory outside the checkout is read before the pull request's commands run, and a writable one is warned about" {
	main_with_thresholds
	local agent="${BATS_TEST_TMPDIR}/agent-thresholds"
	mkdir -p "${agent}"
	cp thresholds/H100.yml "${agent}/H100.yml"
	pull_request sh -c 'echo "# pr" >>suite.yml'
	cp thresholds/H100.yml "${BATS_TEST_TMPDIR}/loose.yml"
	"${PYTHON}" - "${BATS_TEST_TMPDIR}/loose.yml" <<'PY'
import re, sys
p = sys.argv[1]
t = open(p).read()
open(p, "w").write(re.sub(r"gate: true", "gate: false", t))
PY
	plant_during_run "${BATS_TEST_TMPDIR}/loose.yml" "${agent}/H100.yml"
	config "{\"suites\":\"suite.yml\",\"gpu\":\"H100\",\"confirm\":false,\"thresholds\":\"${agent}\"}"
	FAKE_BENCH_FACTOR=1.4 run "${PERFGATE}" buildkite
	grep -q 'gate: false' "${agent}/H100.yml"
	assert_equal "${status}" 1
	assert_output --partial "perfgate: warning: ${agent}/H100.yml is outside the checkout ($(realpath "${agent}")) and this job can write there"
	grep -qF "the gate used the copy read before the pull request's commands ran" results/annotation.md
}

@test "a pull request is never judged against a history in the agent's checkout: six slow records, then a 40% regression, exit 2 before anything runs" {
	main_with_thresholds
	pull_request sh -c 'echo "# pr" >>suite.yml'
	# a co-tenant pull request job records slow runs into the local ref
	config '{"suites":"suite.yml","gpu":"H100","mode":"run","results-dir":"slow","annotate":"never","artifacts":false}'
	FAKE_BENCH_FACTOR=1.4 BUILDKITE_PULL_REQUEST=false "${PERFGATE}" buildkite >/dev/null 2>&1
	for i in 1 2 3 4 5 6; do
		"${PERFGATE}" baseline record slow --gpu H100 --commit "$(git merge-base HEAD main)" \
			--build-url "https://buildkite.com/acme/perf/builds/$((100 + i))" --branch main >/dev/null 2>&1
	done
	[ "$(git rev-list --count refs/perfgate/history)" -ge 6 ]
	rm -rf results
	config '{"suites":"suite.yml","gpu":"H100","baseline":"git","confirm":false}'
	FAKE_BENCH_FACTOR=1.4 run "${PERFGATE}" buildkite
	assert_equal "${status}" 2
	assert_output --partial "pull request: baseline: git without history-repo would judge it against refs/perfgate/history in this agent's checkout"
	# nothing of the pull request ran
	[ ! -e results/latency_llama8B_tp1.json ]
}
