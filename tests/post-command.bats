#!/usr/bin/env bats
# hooks/post-command: mode report reports after the step's own command
# (which hooks/command ran), whatever its exit status; other modes did
# their work in the command phase. Written for buildkite-plugin-tester.

setup() {
	load "${BATS_PLUGIN_PATH:-${BATS_TEST_DIRNAME}/lib}/load.bash"
	load "${BATS_TEST_DIRNAME}/lib/hooks.bash"
	hooks_setup
	export BUILDKITE_PLUGIN_PERFGATE_BINARY=perfgate
}

teardown() {
	unstub --allow-missing perfgate || true
	unstub --allow-missing buildkite-agent || true
}

# what hooks/command leaves when it ran the step's command
command_ran() {
	echo ran >"${TMPDIR}/perfgate-${BUILDKITE_JOB_ID}.command"
}

@test "modes that do their work in the command phase: nothing to do" {
	stub perfgate
	for mode in "" gate run merge pipeline binary; do
		command_ran
		BUILDKITE_PLUGIN_PERFGATE_MODE="${mode}" run "${PLUGIN_DIR}/hooks/post-command"
		assert_success
		assert_output ""
	done
	unstub perfgate
}

@test "mode report: perfgate reports after the command, its exit code the hook's" {
	export BUILDKITE_PLUGIN_PERFGATE_MODE=report BUILDKITE_COMMAND_EXIT_STATUS=0
	stub perfgate 'buildkite : echo "perfgate: H100: 6 tests ran (exit 0)" >&2' 'buildkite : exit 1'
	command_ran
	run "${PLUGIN_DIR}/hooks/post-command"
	assert_success
	assert_output "perfgate: H100: 6 tests ran (exit 0)"
	assert_file_not_exists "${TMPDIR}/perfgate-${BUILDKITE_JOB_ID}.command"
	# a regression fails the job although the command passed
	command_ran
	run "${PLUGIN_DIR}/hooks/post-command"
	assert_equal "${status}" 1
	unstub perfgate
}

@test "mode report: a failed command's results are still reported" {
	export BUILDKITE_PLUGIN_PERFGATE_MODE=report BUILDKITE_COMMAND_EXIT_STATUS=137
	stub perfgate 'buildkite : exit 3'
	command_ran
	run "${PLUGIN_DIR}/hooks/post-command"
	assert_equal "${status}" 3
	assert_line "perfgate: the step's command exited with status 137; reporting the results it wrote"
	unstub perfgate
}

@test "mode report: nothing to report when the command phase stopped first" {
	export BUILDKITE_PLUGIN_PERFGATE_MODE=report BUILDKITE_COMMAND_EXIT_STATUS=2
	stub perfgate
	run "${PLUGIN_DIR}/hooks/post-command"
	assert_success
	assert_output "perfgate: the command phase stopped before the step's command ran; nothing to report"
	unstub perfgate
}

@test "mode report: a step only-on-labels skipped stays quiet" {
	export BUILDKITE_PLUGIN_PERFGATE_MODE=report BUILDKITE_COMMAND_EXIT_STATUS=0
	stub perfgate
	echo skipped >"${TMPDIR}/perfgate-${BUILDKITE_JOB_ID}.command"
	run "${PLUGIN_DIR}/hooks/post-command"
	assert_success
	assert_output ""
	assert_file_not_exists "${TMPDIR}/perfgate-${BUILDKITE_JOB_ID}.command"
	unstub perfgate
}

@test "mode report: a note planted by someone else, or a link, is no note" {
	export BUILDKITE_PLUGIN_PERFGATE_MODE=report BUILDKITE_COMMAND_EXIT_STATUS=0
	stub perfgate
	echo ran >"${BATS_TEST_TMPDIR}/elsewhere"
	ln -s "${BATS_TEST_TMPDIR}/elsewhere" "${TMPDIR}/perfgate-${BUILDKITE_JOB_ID}.command"
	run "${PLUGIN_DIR}/hooks/post-command"
	assert_success
	assert_output "perfgate: the command phase stopped before the step's command ran; nothing to report"
	unstub perfgate
}

@test "mode report with binary-artifact: the bundle the command phase unpacked, checked again" {
	local bundle="${BATS_TEST_TMPDIR}/pg.tar.gz" sum
	unset BUILDKITE_PLUGIN_PERFGATE_BINARY
	export CALLS="${BATS_TEST_TMPDIR}/calls"
	make_bundle "${bundle}"
	sum="$(sha256 "${bundle}")"
	mkdir -p "${PERFGATE_CACHE_DIR}/bundle-${sum}"
	cp "${bundle}" "${PERFGATE_CACHE_DIR}/bundle-${sum}/bundle.tar.gz"
	tar -xzf "${bundle}" -C "${PERFGATE_CACHE_DIR}/bundle-${sum}"
	export BUILDKITE_PLUGIN_PERFGATE_MODE=report BUILDKITE_PLUGIN_PERFGATE_BINARY_ARTIFACT=pg.tar.gz
	export BUILDKITE_PLUGIN_PERFGATE_BINARY_STEP=perfgate
	stub buildkite-agent "artifact shasum --sha256 --step perfgate pg.tar.gz : echo ${sum}" \
		"artifact shasum --sha256 --step perfgate pg.tar.gz : echo ${sum}"
	command_ran
	run "${PLUGIN_DIR}/hooks/post-command"
	assert_success
	assert_equal "$(cat "${CALLS}")" "perfgate buildkite"
	# the step's own command swapped it: post-command does not run it
	echo 'echo swapped' >>"${PERFGATE_CACHE_DIR}/bundle-${sum}/perfgate/bin/perfgate"
	: >"${CALLS}"
	command_ran
	run "${PLUGIN_DIR}/hooks/post-command"
	assert_equal "${status}" 3
	assert_output --partial "is not the bundle \"pg.tar.gz\" step \"perfgate\" uploaded"
	assert_equal "$(cat "${CALLS}")" ""
	unstub buildkite-agent
}
