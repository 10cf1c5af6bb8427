#!/usr/bin/env bats
# thresholds/<GPU>.yml in the repository are perfgate's own output: running
# the command in each file's header, from a clean copy of the repository's
# thresholds directory, reproduces the file byte for byte; generating a
# file from nothing gives the same baselines.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_TMPDIR"
	cp -r "$PERFGATE_SRC/thresholds" .
}

# The refresh command a file's header gives.
header_command() {
	sed -n 's/^#   perfgate baseline update /baseline update /p' "$1"
}

@test "every thresholds file regenerates to itself" {
	for f in thresholds/*.yml; do
		cmd=$(header_command "$f")
		[ -n "$cmd" ]
		cp "$f" before.yml
		# shellcheck disable=SC2086 # the command's words, as a user would paste them
		run --separate-stderr "$PERFGATE_BIN" $cmd
		assert_success
		diff -u before.yml "$f"
	done
	ls thresholds/*.yml | wc -l | grep -qx 4
}

@test "a file generated from nothing has the same baselines" {
	for f in thresholds/*.yml; do
		cmd=$(header_command "$f")
		mv "$f" committed.yml
		# shellcheck disable=SC2086
		"$PERFGATE_BIN" $cmd 2>/dev/null
		diff -u <(sed -n '/^baselines:/,$p' committed.yml) <(sed -n '/^baselines:/,$p' "$f")
		diff -u <(sed -n '/^gpu:/p' committed.yml) <(sed -n '/^gpu:/p' "$f")
	done
}

@test "the files load and show; the published report's GPUs are all there" {
	for g in H100 H200 A100 L40S; do
		run --separate-stderr "$PERFGATE_BIN" baseline show --gpu "$g"
		assert_success
	done
	run "$PERFGATE_BIN" baseline show --gpu H200
	assert_line --index 0 "Baseline for H200: thresholds/H200.yml (thresholds), 18 test points"
	assert_line "  serving, qps 16, 8xH200, 1 run"
	run "$PERFGATE_BIN" baseline show --gpu L40S
	assert_line "  from thresholds/sources/llmd-results-sample.json:36"
}

@test "a run of the published figures against their own file passes" {
	"$PERFGATE_BIN" import thresholds/sources/vllm-report-h100-h200-a100.md -o imported 2>/dev/null
	# llm-d's records name their points from their metadata, not from the
	# file, so the user's own results.json matches L40S.yml's points
	cp thresholds/sources/llmd-results-sample.json results.json
	"$PERFGATE_BIN" import results.json -o imported/L40S 2>/dev/null
	for g in H100 H200 A100 L40S; do
		run "$PERFGATE_BIN" gate "imported/$g" -o "out-$g" -q
		assert_success
		grep -Eq '^\*\*perfgate: PASS\*\* — '"$g"': no regressions in [0-9]+ tests$' "out-$g/comparison.md"
		# every point compared: none missing, none new
		grep -Eq '^    "unchanged": [1-9]' "out-$g/verdict.json"
		grep -q '^    "missing": 0,$' "out-$g/verdict.json"
		grep -q '^    "new": 0,$' "out-$g/verdict.json"
	done
}
