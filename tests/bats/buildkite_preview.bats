#!/usr/bin/env bats
# `perfgate buildkite --pipeline FILE --step KEY`: a pipeline's perfgate
# step run here as its job would run it, without a hand-written
# BUILDKITE_PLUGIN_CONFIGURATION: the build it stands for from the shell's
# BUILDKITE_* values, nothing posted or uploaded (even from inside a job),
# the annotation in <results-dir>/annotation.md.

bats_require_minimum_version 1.5.0

load helpers

setup() {
	work_setup
	unset PERFGATE_GPU PERFGATE_VLLM
	git init -q -b main .
	git config user.email perf@example.com
	git config user.name perf
	cat >pipeline.yml <<'YML'
env:
  PROMPTS: "16"
steps:
  - label: ":crescent_moon: nightly perf"
    key: nightly
    plugins:
      - perfgate/perfgate#v0.1.0:
          suites: perf/suite.yml
          gpu: H100
          baseline: git
          record-history: true
          history-repo: "${PERF_HISTORY}"
  - label: ":mag: perf gate"
    key: pr-gate
    plugins:
      - perfgate/perfgate#v0.1.0:
          suites: perf/suite.yml
          gpu: H100
          baseline: git
          history-repo: "${PERF_HISTORY}"
          only-on-labels: [perf-benchmarks]
          results-dir: pr-results
  - label: "perf {{matrix}}"
    key: matrix
    matrix: [H100, A100]
    plugins:
      - perfgate/perfgate#v0.1.0:
          suites: perf/suite.yml
          gpu: "{{matrix}}"
          mode: run
YML
	mkdir perf
	cat >perf/suite.yml <<'YML'
serving:
  - name: serving_mock
    model: m
    server: {command: "perfgate mock-server --port {port} --model {model} --fixed-timing --ttft-ms 2 --itl-ms 1"}
    dataset: {input_len: 16, output_len: 8}
    num_prompts: 16
YML
	git add -A
	git commit -qm "perf suite"
	# the history's repository, filled in from the environment as
	# Buildkite fills in the pipeline's variables at upload
	git init -q --bare "$BATS_TEST_TMPDIR/history.git"
	export PERF_HISTORY="$BATS_TEST_TMPDIR/history.git"
	# a shell inside a job: what would post or upload is left alone
	make_shim buildkite-agent
	export BUILDKITE=true BUILDKITE_PLUGIN_CONFIGURATION='{"suites": "elsewhere.yml"}'
}

@test "a nightly step run here records the history, a PR-gate step compares with it, nothing is posted" {
	BUILDKITE_BRANCH=main run --separate-stderr timeout 60 "$PERFGATE" buildkite \
		--pipeline pipeline.yml --step nightly
	[ "$status" -eq 0 ]
	[ "${stderr_lines[0]}" = "perfgate buildkite: step 'nightly' of pipeline.yml, run here as a build of main, the default branch; nothing is posted or uploaded: the annotation goes to results/annotation.md" ]
	[[ "$stderr" == *"perfgate: recorded 1 point in the H100 history"* ]]
	git --git-dir "$PERF_HISTORY" rev-parse -q --verify refs/perfgate/history >/dev/null
	grep -q '^#### H100: ' results/annotation.md
	grep -q 'recorded in the history (1 point)' results/annotation.md

	echo change >file.txt
	git add file.txt
	git commit -qm "a change"
	BUILDKITE_PULL_REQUEST=7 BUILDKITE_PULL_REQUEST_BASE_BRANCH=main \
		BUILDKITE_PULL_REQUEST_LABELS=perf-benchmarks,ready \
		run --separate-stderr timeout 60 "$PERFGATE" buildkite --pipeline pipeline.yml --step pr-gate
	[ "$status" -eq 0 ]
	[ "${stderr_lines[0]}" = "perfgate buildkite: step 'pr-gate' of pipeline.yml, run here as pull request #7 into main (labels: perf-benchmarks, ready); nothing is posted or uploaded: the annotation goes to pr-results/annotation.md" ]
	grep -qF "baseline $PERF_HISTORY refs/perfgate/history" pr-results/annotation.md
	grep -q '| serving_mock_qps_inf | Output token throughput (tok/s) |' pr-results/annotation.md
	# no thresholds file on either side is no change to one
	! grep -q 'this pull request deletes' pr-results/annotation.md
	# the label decides, as in CI
	BUILDKITE_PULL_REQUEST=8 run --separate-stderr "$PERFGATE" buildkite \
		--pipeline pipeline.yml --step pr-gate
	[ "$status" -eq 0 ]
	[ "${stderr_lines[1]}" = "perfgate: skipped: pull request #8 has no label perf-benchmarks (labels: none)" ]
	# the agent was never called
	[ ! -s "$CALLS" ]
}

@test "--check validates a pipeline's step; mistakes are one line and exit 2" {
	run --separate-stderr "$PERFGATE" buildkite --check --pipeline pipeline.yml --step pr-gate
	[ "$status" -eq 0 ]
	[ "$stderr" = "perfgate buildkite: step 'pr-gate' of pipeline.yml: the configuration is valid" ]
	run --separate-stderr "$PERFGATE" buildkite --check --pipeline pipeline.yml --step matrix \
		--matrix A100
	[ "$status" -eq 0 ]
	run --separate-stderr "$PERFGATE" buildkite --check --pipeline pipeline.yml
	[ "$status" -eq 2 ]
	[ "$stderr" = "perfgate buildkite: pipeline.yml: 3 steps use the perfgate plugin ('nightly', 'pr-gate', 'matrix'): choose one with --step KEY" ]
	run --separate-stderr "$PERFGATE" buildkite --step nightly
	[ "$status" -eq 2 ]
	[ "$stderr" = "perfgate buildkite: --step goes with --pipeline FILE" ]
	run --separate-stderr "$PERFGATE" buildkite --will-run --pipeline pipeline.yml
	[ "$status" -eq 2 ]
	sed -i 's/baseline: git$/baseline: gti/' pipeline.yml
	run --separate-stderr "$PERFGATE" buildkite --pipeline pipeline.yml --step nightly
	[ "$status" -eq 2 ]
	[ "$stderr" = "perfgate buildkite: pipeline.yml:10:11: step 'nightly': option 'baseline': expected 'thresholds', 'git' or 'ab', got 'gti' (did you mean 'git'?)" ]
	[ ! -e results ]
	[ ! -s "$CALLS" ]
}

@test "a failing step's annotation says how to run it again here and how to accept the new level, and both work" {
	cat >gate.yml <<'YML'
steps:
  - label: ":mag: perf gate"
    key: pr-gate
    plugins:
      - perfgate/perfgate#v0.1.0:
          suites: perf/gate.yml
          gpu: H100
          only-on-labels: [perf-benchmarks]
YML
	cat >perf/gate.yml <<'YML'
serving:
  - name: serving_changed
    model: m
    server: {command: "perfgate mock-server --port {port} --model {model} --fixed-timing --ttft-ms 50 --itl-ms 5"}
    dataset: {input_len: 16, output_len: 8}
    num_prompts: 16
  - name: serving_steady
    model: m
    server: {command: "perfgate mock-server --port {port} --model {model} --fixed-timing --ttft-ms 50 --itl-ms 5"}
    dataset: {input_len: 16, output_len: 8}
    num_prompts: 16
YML
	# main's level in a thresholds file, then a pull request that makes
	# one test's first token three times slower (timings of tens of
	# milliseconds: the mock's jitter is well within the tolerances)
	run --separate-stderr "$PERFGATE" run perf/gate.yml --gpu H100 -o main-run
	[ "$status" -eq 0 ]
	"$PERFGATE" baseline update thresholds --gpu H100 --from main-run 2>/dev/null
	# tolerances a loaded machine's mock stays within, run to run; the
	# pull request's change is far beyond them
	sed -i -E 's/tolerance: [0-9.]+%/tolerance: 40%/; s/^(  escalate:) 8%/\1 60%/' thresholds/H100.yml
	grep -q '^  escalate: 60%' thresholds/H100.yml
	git add -A
	git commit -qm "gate, thresholds"
	sed -i '0,/--ttft-ms 50/s//--ttft-ms 150/' perf/gate.yml
	git commit -qam "slower first token"
	export BUILDKITE_PULL_REQUEST=7 BUILDKITE_PULL_REQUEST_BASE_BRANCH=main \
		BUILDKITE_PULL_REQUEST_LABELS=perf-benchmarks,ready
	run --separate-stderr timeout 60 "$PERFGATE" buildkite --pipeline gate.yml --step pr-gate
	[ "$status" -eq 1 ]
	grep -q '^#### H100: 1 of 2 tests regressed' results/annotation.md
	grep -q '^\*\*Next\*\*$' results/annotation.md
	# the command, as the annotation gives it, for the pipeline's file
	again=$(sed -n 's/^- Run it again on a GPU machine, in a checkout of this commit: `\([^`]*\)`.*/\1/p' \
		results/annotation.md)
	[ "$again" = "BUILDKITE_PULL_REQUEST=7 BUILDKITE_PULL_REQUEST_BASE_BRANCH=main BUILDKITE_PULL_REQUEST_LABELS=perf-benchmarks perfgate buildkite --pipeline PIPELINE.yml --step pr-gate --filter '^(serving_changed_qps_inf)\$'" ]
	accept=$(sed -n 's/^- If the new level is meant: update `thresholds\/H100.yml` from main.s runs in a pull request and have it reviewed: `\([^`]*\)`.*/\1/p' \
		results/annotation.md)
	[ "$accept" = "perfgate baseline update thresholds/H100.yml --from RUN1 --from RUN2 --from RUN3" ]
	# run again in a shell where no pull request is set: the failed point
	# alone, the same verdict
	unset BUILDKITE_PULL_REQUEST BUILDKITE_PULL_REQUEST_BASE_BRANCH BUILDKITE_PULL_REQUEST_LABELS
	mv results first
	mkdir bin
	ln -s "$PERFGATE" bin/perfgate
	export PATH="$PWD/bin:$PATH"
	run --separate-stderr timeout 60 bash -c "${again/PIPELINE.yml/gate.yml}"
	[ "$status" -eq 1 ]
	[ "${stderr_lines[0]}" = "perfgate buildkite: step 'pr-gate' of gate.yml, run here as pull request #7 into main (labels: perf-benchmarks); nothing is posted or uploaded: the annotation goes to results/annotation.md" ]
	[[ "$stderr" == *"perfgate: 1 test point on 1xH100"* ]]
	grep -q '^#### H100: 1 of 1 test regressed' results/annotation.md
	# the new level accepted as the annotation says, from runs at it
	# (here the pull request's own, three times); the gate of a pull
	# request uses the base branch's file, so the update counts once it is
	# merged (committed here, where main is the merge-base): then it passes
	run --separate-stderr bash -c "${accept//RUN[123]/first}"
	[ "$status" -eq 0 ]
	[ -n "$(git status --porcelain thresholds/H100.yml)" ]
	run --separate-stderr timeout 60 bash -c "${again/PIPELINE.yml/gate.yml}"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"this pull request changes thresholds/H100.yml"* ]]
	git commit -qam "thresholds: the new first-token level (reviewed)"
	run --separate-stderr timeout 60 bash -c "${again/PIPELINE.yml/gate.yml}"
	[ "$status" -eq 0 ]
	! grep -q '^\*\*Next\*\*$' results/annotation.md
	[ ! -s "$CALLS" ]
}
