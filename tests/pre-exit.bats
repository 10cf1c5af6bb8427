#!/usr/bin/env bats
# hooks/pre-exit: whatever happened before, no server perfgate started for
# the job outlives it. Written for buildkite-plugin-tester.

setup() {
	load "${BATS_PLUGIN_PATH:-${BATS_TEST_DIRNAME}/lib}/load.bash"
	load "${BATS_TEST_DIRNAME}/lib/hooks.bash"
	hooks_setup
	LEFTOVERS=()
}

teardown() {
	# process groups a failed test left behind
	local pgid
	for pgid in "${LEFTOVERS[@]}"; do
		kill -KILL -- "-${pgid}" 2>/dev/null || true
	done
}

# Wait (at most 10 s) until pid leads its own process group and, with
# "ignores-term", ignores SIGTERM: what the test needs in place.
wait_until_set_up() {
	local pid="$1" want_ignore="${2:-}" i stat ign
	for i in $(seq 200); do
		# /proc/PID/stat: "pid (comm) state ppid pgrp ..."
		stat="$(cat "/proc/${pid}/stat" 2>/dev/null)" || stat=""
		stat="${stat##*) }"
		if [ "$(echo "${stat}" | cut -d' ' -f3)" = "${pid}" ]; then
			[ -z "${want_ignore}" ] && return 0
			ign="$(sed -n 's/^SigIgn:[[:space:]]*//p' "/proc/${pid}/status")"
			(((16#${ign} >> 14) & 1)) && return 0
		fi
		sleep 0.05
	done
	echo "process ${pid} was not set up in 10 s" >&2
	return 1
}

@test "leftover server process groups are stopped, TERM then KILL" {
	export PERFGATE_STOP_GRACE=1
	local pidfile polite stubborn pid i
	pidfile="$(. "${PLUGIN_DIR}/plugin/lib.bash" && perfgate_pidfile)"
	setsid sleep 300 </dev/null >/dev/null 2>&1 &
	polite=$!
	setsid bash -c 'trap "" TERM; while :; do sleep 0.05; done' </dev/null >/dev/null 2>&1 &
	stubborn=$!
	LEFTOVERS=("${polite}" "${stubborn}")
	wait_until_set_up "${polite}"
	wait_until_set_up "${stubborn}" ignores-term
	printf '%s\n' "${polite}" garbage 1 "${stubborn}" >"${pidfile}"
	run "${PLUGIN_DIR}/hooks/pre-exit"
	assert_success
	assert_output --partial "stopping leftover server process group ${polite}"
	assert_output --partial "process group ${stubborn} ignored SIGTERM for 1s, killing it"
	# gone (and reaped by this shell) within 5 s
	for pid in "${polite}" "${stubborn}"; do
		for i in $(seq 100); do
			kill -0 "${pid}" 2>/dev/null || break
			sleep 0.05
		done
		run kill -0 "${pid}"
		assert_failure
	done
	assert_file_not_exists "${pidfile}"
}

@test "PERFGATE_STOP_GRACE is checked before arithmetic: no command in it runs" {
	local pidfile marker="${BATS_TEST_TMPDIR}/pwned" polite value i
	pidfile="$(. "${PLUGIN_DIR}/plugin/lib.bash" && perfgate_pidfile)"
	for value in "PATH[\$(touch ${marker})]" "x[\`touch ${marker}\`]" "\$(touch ${marker})" \
		"1+1" "-1" "1.5" "999999"; do
		setsid sleep 300 </dev/null >/dev/null 2>&1 &
		polite=$!
		LEFTOVERS=("${polite}")
		wait_until_set_up "${polite}"
		echo "${polite}" >"${pidfile}"
		PERFGATE_STOP_GRACE="${value}" run "${PLUGIN_DIR}/hooks/pre-exit"
		assert_success
		assert_file_not_exists "${marker}"
		# a bad value falls back to the default, and the group still stops
		if [ "${value}" != 999999 ]; then
			assert_output --partial "perfgate: warning: PERFGATE_STOP_GRACE must be a whole number of seconds; using 10"
		fi
		assert_output --partial "stopping leftover server process group ${polite}"
		for i in $(seq 100); do
			kill -0 "${polite}" 2>/dev/null || break
			sleep 0.05
		done
		run kill -0 "${polite}"
		assert_failure
	done
}

@test "only its own pid file is read: ids are digits, links and other users' files are ignored" {
	local pidfile marker="${BATS_TEST_TMPDIR}/pwned" polite
	pidfile="$(. "${PLUGIN_DIR}/plugin/lib.bash" && perfgate_pidfile)"
	setsid sleep 300 </dev/null >/dev/null 2>&1 &
	polite=$!
	LEFTOVERS=("${polite}")
	wait_until_set_up "${polite}"
	# ids that bash arithmetic would evaluate
	printf '%s\n' "a[\$(touch ${marker})]" "${polite}x" "0" "99999999999999999999" >"${pidfile}"
	run "${PLUGIN_DIR}/hooks/pre-exit"
	assert_success
	assert_output ""
	assert_file_not_exists "${marker}"
	# a link in place of the pid file is not followed
	echo "${polite}" >"${BATS_TEST_TMPDIR}/elsewhere"
	ln -s "${BATS_TEST_TMPDIR}/elsewhere" "${pidfile}"
	run "${PLUGIN_DIR}/hooks/pre-exit"
	assert_success
	assert_output ""
	run kill -0 "${polite}"
	assert_success
	rm -f "${pidfile}"
}

@test "nothing recorded: silent, and the step's exit code stands" {
	run "${PLUGIN_DIR}/hooks/pre-exit"
	assert_success
	assert_output ""
}

@test "mode report's note for post-command does not outlive the job" {
	echo ran >"${TMPDIR}/perfgate-${BUILDKITE_JOB_ID}.command"
	run "${PLUGIN_DIR}/hooks/pre-exit"
	assert_success
	assert_file_not_exists "${TMPDIR}/perfgate-${BUILDKITE_JOB_ID}.command"
}
