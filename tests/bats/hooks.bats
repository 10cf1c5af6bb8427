#!/usr/bin/env bats
# The plugin's hooks: finding, building and caching the binary, handing
# over to `perfgate buildkite`, exit codes, missing tools, and pre-exit.

load helpers

setup() {
	common_setup
	# a stand-in perfgate that records its arguments
	make_shim perfgate
	LEFTOVERS=()
}

# Wait (at most 10 s) until pid leads its own process group and, with
# "ignores-term", ignores SIGTERM: what the pre-exit test needs in place.
wait_until_set_up() {
	local pid="$1" want_ignore="${2:-}" i ign
	for i in $(seq 200); do
		if [ "$(ps -o pgid= -p "${pid}" | tr -d ' ')" = "${pid}" ]; then
			[ -z "${want_ignore}" ] && return 0
			ign="$(sed -n 's/^SigIgn:[[:space:]]*//p' "/proc/${pid}/status")"
			(( (16#${ign} >> 14) & 1 )) && return 0
		fi
		sleep 0.05
	done
	echo "process ${pid} was not set up in 10 s" >&2
	return 1
}

teardown() {
	# process groups a failed test left behind
	local pgid
	for pgid in "${LEFTOVERS[@]}"; do
		kill -KILL -- "-${pgid}" 2>/dev/null || true
	done
}

@test "command hook execs the binary from the binary option with 'buildkite'" {
	export BUILDKITE_PLUGIN_PERFGATE_BINARY="${SHIMS}/perfgate"
	run "${PLUGIN_DIR}/hooks/command"
	assert_success
	assert_equal "$(cat "${CALLS}")" "perfgate buildkite"
}

@test "command hook passes perfgate's exit codes through unchanged" {
	export BUILDKITE_PLUGIN_PERFGATE_BINARY="${SHIMS}/perfgate"
	for code in 0 1 2 3 130; do
		SHIM_EXIT_perfgate="${code}" run "${PLUGIN_DIR}/hooks/command"
		assert_equal "${status}" "${code}"
	done
}

@test "binary option may name a command on PATH; the plugin name decides the variable" {
	export BUILDKITE_PLUGIN_NAME=LLM_PERF
	export BUILDKITE_PLUGIN_LLM_PERF_BINARY=perfgate
	run "${PLUGIN_DIR}/hooks/command"
	assert_success
	assert_equal "$(cat "${CALLS}")" "perfgate buildkite"
}

@test "PERFGATE_BINARY from the agent environment works like the option" {
	export PERFGATE_BINARY="${SHIMS}/perfgate"
	run "${PLUGIN_DIR}/hooks/command"
	assert_success
	assert_equal "$(cat "${CALLS}")" "perfgate buildkite"
}

@test "a missing binary is a configuration error naming the option and the step" {
	export BUILDKITE_PLUGIN_PERFGATE_BINARY=/opt/nowhere/perfgate
	export BUILDKITE_LABEL=":h100: perf"
	run "${PLUGIN_DIR}/hooks/command"
	assert_equal "${status}" 2
	assert_output --partial "+++ :warning: perfgate plugin error"
	assert_output --partial 'perfgate: binary: "/opt/nowhere/perfgate" is not an executable file (step ":h100: perf")'
	assert_equal "$(cat "${CALLS}")" ""
}

@test "a cached build for this plugin version is used without building" {
	local key
	key="$(. "${PLUGIN_DIR}/plugin/lib.bash" && perfgate_cache_key "${PLUGIN_DIR}")"
	mkdir -p "${PERFGATE_CACHE_DIR}/${key}/bin"
	cp "${SHIMS}/perfgate" "${PERFGATE_CACHE_DIR}/${key}/bin/perfgate"
	rm "${SHIMS}/perfgate"
	# no build tools at all: a cache hit must not need them
	PATH="${SHIMS}:$(path_without cmake cc gcc make pkg-config)" run "${PLUGIN_DIR}/hooks/command"
	assert_success
	assert_equal "$(cat "${CALLS}")" "perfgate buildkite"
}

@test "the cache key follows the plugin's source" {
	local repo="${BATS_TEST_TMPDIR}/repo" k1 k2 k3
	mkdir -p "${repo}/plugin"
	git -C "${repo}" init -q
	echo 'project(perfgate VERSION 9.8.7)' >"${repo}/CMakeLists.txt"
	git -C "${repo}" add . && git -C "${repo}" -c user.name=t -c user.email=t@t commit -qm one
	k1="$(. "${PLUGIN_DIR}/plugin/lib.bash" && perfgate_cache_key "${repo}")"
	echo '# changed' >>"${repo}/CMakeLists.txt"
	k2="$(. "${PLUGIN_DIR}/plugin/lib.bash" && perfgate_cache_key "${repo}")"
	git -C "${repo}" -c user.name=t -c user.email=t@t commit -qam two
	k3="$(. "${PLUGIN_DIR}/plugin/lib.bash" && perfgate_cache_key "${repo}")"
	[[ "${k1}" =~ ^[0-9a-f]{40}$ ]]
	[[ "${k2}" == *-dirty-* ]]
	[ "${k1}" != "${k3}" ] && [ "${k2}" != "${k3}" ]
	rm -rf "${repo}/.git"
	assert_equal "$(. "${PLUGIN_DIR}/plugin/lib.bash" && perfgate_cache_key "${repo}")" "v9.8.7-nogit"
}

@test "missing build tools are named, with the package to install" {
	PATH="${SHIMS}:$(path_without cmake pkg-config)" run "${PLUGIN_DIR}/hooks/command"
	assert_equal "${status}" 3
	assert_output --partial "perfgate: cannot build perfgate on this agent: missing cmake (apt-get install cmake), pkg-config (apt-get install pkg-config)."
	assert_output --partial "set the plugin's \`binary\` option"
	assert_equal "$(cat "${CALLS}")" ""
}

@test "a missing development package is named" {
	# pkg-config that knows every module but libgit2
	cat >"${SHIMS}/pkg-config" <<'SHIM'
#!/bin/bash
[ "$2" = libgit2 ] && exit 1
exec /usr/bin/pkg-config "$@"
SHIM
	chmod +x "${SHIMS}/pkg-config"
	run "${PLUGIN_DIR}/hooks/command"
	assert_equal "${status}" 3
	assert_output --partial "missing libgit2 development files (apt-get install libgit2-dev)."
}

@test "the binary is built once per plugin version and then reused" {
	local built plugin="${BATS_TEST_TMPDIR}/plugin"
	# a snapshot of the plugin's files, as an agent checks it out: edits
	# to the working tree while the test runs cannot change its cache key
	if git -C "${PLUGIN_DIR}" rev-parse --git-dir >/dev/null 2>&1; then
		mkdir -p "${plugin}"
		git -C "${PLUGIN_DIR}" ls-files -z |
			tar -C "${PLUGIN_DIR}" --null -T - --ignore-failed-read -cf - | tar -C "${plugin}" -xf -
	else
		plugin="${PLUGIN_DIR}"
	fi
	# the real `perfgate buildkite` runs after the build: with no plugin
	# configuration at all it stops with a configuration error
	run "${plugin}/hooks/command"
	assert_equal "${status}" 2
	assert_output --partial "--- :hammer_and_wrench: Building perfgate"
	assert_output --partial "BUILDKITE_PLUGIN_CONFIGURATION"
	built="$(find "${PERFGATE_CACHE_DIR}" -path '*/bin/perfgate' -type f)"
	assert_file_executable "${built}"
	run "${built}" --version
	assert_output --regexp '^perfgate [0-9]+\.[0-9]+\.[0-9]+$'
	run "${plugin}/hooks/command"
	assert_equal "${status}" 2
	refute_output --partial "Building perfgate"
}

@test "pre-exit stops leftover server process groups, TERM then KILL" {
	export BUILDKITE_JOB_ID="job-$$-${BATS_TEST_NUMBER}"
	export PERFGATE_STOP_GRACE=1
	local pidfile polite stubborn
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

@test "servers perfgate starts are listed for pre-exit, which finds them stopped" {
	local work="${BATS_TEST_TMPDIR}/work" pidfile
	mkdir -p "${work}" && cd "${work}"
	export BUILDKITE_JOB_ID="job-servers-$$" BUILDKITE_PLUGIN_PERFGATE_BINARY="${PERFGATE_BIN:?}"
	pidfile="$(. "${PLUGIN_DIR}/plugin/lib.bash" && perfgate_pidfile)"
	rm -f "${pidfile}"
	# a server that never becomes ready: perfgate starts it, gives up after
	# a second and stops it
	export BUILDKITE_PLUGIN_CONFIGURATION='{"mode":"run","gpu":"H100","suites":{"serving":[{"name":"serving_never_ready","model":"m","server":{"command":"sleep 300","ready_timeout":1,"stop_timeout":1}}]}}'
	run "${PLUGIN_DIR}/hooks/command"
	assert_equal "${status}" 3
	assert_file_exists "${pidfile}"
	run cat "${pidfile}"
	assert_output --regexp '^[0-9]+$'
	run kill -0 -- "-$(cat "${pidfile}")"
	assert_failure
	run "${PLUGIN_DIR}/hooks/pre-exit"
	assert_success
	assert_output ""
	assert_file_not_exists "${pidfile}"
}

@test "pre-exit validates PERFGATE_STOP_GRACE before arithmetic: no command in it runs" {
	export BUILDKITE_JOB_ID="job-grace-$$"
	local pidfile marker="${BATS_TEST_TMPDIR}/pwned" polite value
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

@test "pre-exit reads only its own pid file: ids are digits, links and other users' files are ignored" {
	export BUILDKITE_JOB_ID="job-ids-$$"
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

@test "the job id and plugin name from the environment cannot reach a path or bash evaluation" {
	local marker="${BATS_TEST_TMPDIR}/pwned"
	export BUILDKITE_JOB_ID="../../${BATS_TEST_TMPDIR##*/}/x"
	run bash -c ". '${PLUGIN_DIR}/plugin/lib.bash' && perfgate_pidfile"
	assert_output "${TMPDIR:-/tmp}/perfgate-.._.._${BATS_TEST_TMPDIR##*/}_x.pgids"
	export BUILDKITE_PLUGIN_NAME="X[\$(touch ${marker})]"
	export BUILDKITE_PLUGIN_PERFGATE_BINARY="${SHIMS}/perfgate"
	run "${PLUGIN_DIR}/hooks/command"
	assert_success
	assert_file_not_exists "${marker}"
	assert_output --partial "ignoring BUILDKITE_PLUGIN_NAME"
	assert_equal "$(cat "${CALLS}")" "perfgate buildkite"
}

@test "pre-exit with nothing recorded is silent and succeeds" {
	export BUILDKITE_JOB_ID="job-none-$$"
	run "${PLUGIN_DIR}/hooks/pre-exit"
	assert_success
	assert_output ""
}

@test "hooks and plugin shell are shellcheck-clean" {
	cd "${PLUGIN_DIR}"
	run shellcheck -x hooks/* plugin/*.bash
	assert_success
}
