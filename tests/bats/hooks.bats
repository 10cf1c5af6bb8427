#!/usr/bin/env bats
# The plugin's hooks with the real perfgate: a build from source and its
# cache key, a bundle that runs with nothing but glibc, mode report from the
# step's own benchmark to the annotation, servers listed for pre-exit, and
# shellcheck. The hooks' logic with stand-ins is tested as
# buildkite-plugin-tester runs it, in tests/*.bats.

load helpers

setup_file() {
	# one build from source for the file: the build test makes it, the
	# bundle test reuses it
	export PERFGATE_FILE_CACHE="${BATS_FILE_TMPDIR}/cache"
}

setup() {
	common_setup
	unset BUILDKITE_COMMAND BUILDKITE_COMMAND_EXIT_STATUS BUILDKITE_PLUGIN_PERFGATE_MODE
	unset BUILDKITE_PLUGIN_PERFGATE_BINARY_ARTIFACT
	export TMPDIR="${BATS_TEST_TMPDIR}"
}

# A snapshot of the plugin's files, as an agent checks it out: edits to the
# working tree while the tests run cannot change its cache key.
plugin_snapshot() {
	local plugin="${BATS_FILE_TMPDIR}/plugin"
	if [ -d "${plugin}" ]; then
		printf '%s' "${plugin}"
	elif git -C "${PLUGIN_DIR}" rev-parse --git-dir >/dev/null 2>&1; then
		mkdir -p "${plugin}"
		git -C "${PLUGIN_DIR}" ls-files -z |
			tar -C "${PLUGIN_DIR}" --null -T - --ignore-failed-read -cf - | tar -C "${plugin}" -xf -
		printf '%s' "${plugin}"
	else
		printf '%s' "${PLUGIN_DIR}"
	fi
}

# The perfgate the plugin builds from source (building it the first time).
built_perfgate() {
	local found
	found="$(find "${PERFGATE_FILE_CACHE}" -path '*/bin/perfgate' -type f 2>/dev/null | head -n 1)"
	if [ -z "${found}" ]; then
		PERFGATE_CACHE_DIR="${PERFGATE_FILE_CACHE}" "$(plugin_snapshot)/hooks/command" >/dev/null 2>&1 || true
		found="$(find "${PERFGATE_FILE_CACHE}" -path '*/bin/perfgate' -type f | head -n 1)"
	fi
	printf '%s' "${found}"
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

@test "the binary is built once per plugin version and then reused" {
	local built plugin
	plugin="$(plugin_snapshot)"
	export PERFGATE_CACHE_DIR="${PERFGATE_FILE_CACHE}"
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

@test "a bundle of the plugin's build runs where there is nothing but glibc" {
	local built bundle="${BATS_TEST_TMPDIR}/perfgate.tar.gz" root="${BATS_TEST_TMPDIR}/root"
	local name arrow path rest
	built="$(built_perfgate)"
	[ -x "${built}" ]
	run bash -c ". '${PLUGIN_DIR}/plugin/lib.bash' && perfgate_bundle '${built}' '${bundle}'"
	assert_success
	assert_output --regexp "perfgate: bundled perfgate [0-9.]+ with [0-9]+ libraries for $(uname -m), glibc 2\.[0-9]+ or newer"
	mkdir -p "${root}"
	tar -xzf "${bundle}" -C "${root}"
	assert_file_exists "${root}/perfgate/lib/libcurl.so.4"
	# every library the bundled perfgate loads from outside the bundle is
	# glibc's: copy those, and only those, into an empty root
	while read -r name arrow path rest; do
		[ "${arrow}" = "=>" ] || path="${name}"
		case "${path}" in "${root}"/* | linux-vdso* | "") continue ;; esac
		(. "${PLUGIN_DIR}/plugin/lib.bash" && perfgate_glibc_lib "$(basename "${path}")") ||
			fail "the bundled perfgate loads ${path} from the system"
		mkdir -p "${root}$(dirname "${path}")"
		cp -L "${path}" "${root}${path}"
	done < <(ldd "${root}/perfgate/bin/perfgate")
	# a root of its own, with /proc (the loader finds $ORIGIN there), as
	# an agent would have
	mkdir -p "${root}/proc"
	in_root() {
		unshare -r -m -p -f --mount-proc="${root}/proc" chroot "${root}" "$@"
	}
	unshare -r -m -p -f --mount-proc="${root}/proc" true 2>/dev/null ||
		skip "no user, mount and PID namespaces to chroot in"
	run in_root /perfgate/bin/perfgate --version
	assert_success
	assert_output --regexp '^perfgate [0-9]+\.[0-9]+\.[0-9]+$'
	# and it works: a report from a results directory in that root
	"${PERFGATE_PYTHON:-/usr/bin/python3}" "${PLUGIN_DIR}/tests/bats/make_results.py" "${root}/results"
	run in_root /perfgate/bin/perfgate report /results
	assert_success
	assert_file_exists "${root}/results/benchmark_results.md"
}

# A build as Buildkite keeps its artifacts, step by step: step "perfgate"
# (mode binary) uploads the plugin's own build as the bundle; a pull
# request's command step uploads a perfgate of its own at the same path;
# the GPU step (mode report) runs the first, checked against the digest
# its upload recorded, and never the other. A later job on the agent that
# swaps the cached copy gets nothing run either.
@test "binary-artifact end to end: the bundle of the step that built it, never another step's" {
	local built evil="${BATS_TEST_TMPDIR}/evil" work="${BATS_TEST_TMPDIR}/work"
	built="$(built_perfgate)"
	fake_agent_store
	mkdir -p "${work}" && cd "${work}"
	export BUILDKITE=true BUILDKITE_PULL_REQUEST=7 BUILDKITE_BRANCH=feature
	export BUILDKITE_PLUGIN_PERFGATE_BINARY_ARTIFACT=perfgate/pg.tar.gz
	# the step that builds it
	BUILDKITE_STEP_KEY=perfgate BUILDKITE_JOB_ID=job-1 BUILDKITE_PLUGIN_PERFGATE_MODE=binary \
		BUILDKITE_PLUGIN_PERFGATE_BINARY="${built}" \
		BUILDKITE_PLUGIN_CONFIGURATION="{\"mode\":\"binary\",\"binary\":\"${built}\",\"binary-artifact\":\"perfgate/pg.tar.gz\"}" \
		run "${PLUGIN_DIR}/hooks/command"
	assert_success
	assert_output --regexp "perfgate: uploaded perfgate/pg.tar.gz, sha256 [0-9a-f]{64}"
	# the pull request's command, in a step of the same build
	mkdir -p "${evil}/perfgate/bin" "${evil}/up/perfgate"
	printf '#!/bin/sh\ntouch "%s/evil-ran"\necho "perfgate 9.9.9"\n' "${BATS_TEST_TMPDIR}" >"${evil}/perfgate/bin/perfgate"
	chmod +x "${evil}/perfgate/bin/perfgate"
	tar -C "${evil}" -czf "${evil}/up/perfgate/pg.tar.gz" perfgate
	(cd "${evil}/up" && BUILDKITE_STEP_KEY=pr-tests buildkite-agent artifact upload perfgate/pg.tar.gz)
	# the GPU step: its results reported by the bundle of step "perfgate"
	"${PERFGATE_PYTHON:-/usr/bin/python3}" "${PLUGIN_DIR}/tests/bats/make_results.py" results
	export BUILDKITE_STEP_KEY=perf-h100 BUILDKITE_JOB_ID=job-3 BUILDKITE_PLUGIN_PERFGATE_MODE=report
	export BUILDKITE_PLUGIN_PERFGATE_BINARY_STEP=perfgate BUILDKITE_COMMAND_EXIT_STATUS=0
	export BUILDKITE_PLUGIN_CONFIGURATION='{"mode":"report","gpu":"H100","binary-artifact":"perfgate/pg.tar.gz","binary-step":"perfgate"}'
	run "${PLUGIN_DIR}/hooks/command"
	assert_success
	assert_output --regexp "perfgate: using perfgate [0-9.]+ from perfgate/pg.tar.gz \(step perfgate\)"
	run "${PLUGIN_DIR}/hooks/post-command"
	assert_success
	assert_output --partial "perfgate: H100: 6 tests ran"
	assert_file_exists "${CALLS}.annotation"
	assert_file_not_exists "${BATS_TEST_TMPDIR}/evil-ran"
	grep -q -- "artifact download perfgate/pg.tar.gz .* --step perfgate" "${CALLS}"
	# a job on the agent swaps the cached perfgate for the pull request's
	cp "${evil}/perfgate/bin/perfgate" "${PERFGATE_CACHE_DIR}"/bundle-*/perfgate/bin/perfgate
	export BUILDKITE_JOB_ID=job-4
	run "${PLUGIN_DIR}/hooks/command"
	assert_equal "${status}" 3
	assert_output --regexp "is not the bundle \"perfgate/pg.tar.gz\" step \"perfgate\" uploaded \(digest [0-9a-f]{64}\): removed, not run"
	assert_file_not_exists "${BATS_TEST_TMPDIR}/evil-ran"
}

@test "mode report end to end: the step's own benchmark, then the report, annotation and upload" {
	local work="${BATS_TEST_TMPDIR}/work"
	mkdir -p "${work}" && cd "${work}"
	make_shim buildkite-agent
	export SHIM_STDIN=1
	export BUILDKITE=true BUILDKITE_JOB_ID="job-report-$$" BUILDKITE_LABEL="perf report"
	export BUILDKITE_PLUGIN_PERFGATE_BINARY="${PERFGATE_BIN:?}" BUILDKITE_PLUGIN_PERFGATE_MODE=report
	export BUILDKITE_PLUGIN_CONFIGURATION="{\"mode\":\"report\",\"gpu\":\"H100\",\"binary\":\"${PERFGATE_BIN}\"}"
	cat >bench.yml <<'EOF'
defaults:
  model: perfgate-mock
  server: {command: "perfgate mock-server --port {port} --model {model} --ttft-ms 2 --itl-ms 1", ready: /health}
  num_prompts: 4
  dataset: {name: random, input_len: 16, output_len: 8}
serving:
  - name: serving_mock_tp1
    qps: [inf]
EOF
	# the user's benchmark, as a step command: not perfgate's plugin run
	export BUILDKITE_COMMAND="\"${PERFGATE_BIN}\" run bench.yml --gpu H100"
	run "${PLUGIN_DIR}/hooks/command"
	assert_success
	assert_output --partial "perfgate run: 1 ok"
	assert_file_exists results/serving_mock_tp1_qps_inf.json
	refute_output --partial "annotate"
	# the agent runs post-command after the command, with its status
	export BUILDKITE_COMMAND_EXIT_STATUS=0
	run "${PLUGIN_DIR}/hooks/post-command"
	assert_success
	assert_output --partial "perfgate: H100: 1 test ran, no baseline comparison (exit 0)"
	run grep -c "^buildkite-agent annotate " "${CALLS}"
	assert_output 1
	grep -q "^buildkite-agent artifact upload " "${CALLS}"
	grep -qF "serving_mock_tp1" "${CALLS}".buildkite-agent.*
}

@test "servers perfgate starts are listed for pre-exit, which finds them stopped" {
	local work="${BATS_TEST_TMPDIR}/work" pidfile
	mkdir -p "${work}" && cd "${work}"
	export BUILDKITE_JOB_ID="job-servers-$$" BUILDKITE_PLUGIN_PERFGATE_BINARY="${PERFGATE_BIN:?}"
	pidfile="$(. "${PLUGIN_DIR}/plugin/lib.bash" && perfgate_pidfile)"
	rm -f "${pidfile}"
	# a server that never becomes ready: perfgate starts it, gives up after
	# a second and stops it
	export BUILDKITE_PLUGIN_CONFIGURATION='{"mode":"run","gpu":"H100","suites":{"serving":[{"name":"serving_never_ready","model":"m","server":{"command":"sleep 300 {port}","ready_timeout":1,"stop_timeout":1}}]}}'
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

@test "the command hook stops a gate that could not be decided before anything runs: exit 2" {
	local work="${BATS_TEST_TMPDIR}/work"
	mkdir -p "${work}/thresholds" && cd "${work}"
	cp "${PLUGIN_DIR}/thresholds/H100.yml" thresholds/
	make_shim buildkite-agent
	export BUILDKITE=true BUILDKITE_JOB_ID="job-check-$$" BUILDKITE_LABEL="perf gate"
	export BUILDKITE_PLUGIN_PERFGATE_BINARY="${PERFGATE_BIN:?}"
	local suite='"suites":{"serving":[{"name":"serving_mock","model":"m","server":{"command":"perfgate mock-server --port {port} --model {model}","ready":"/health"},"dataset":{"name":"random","input_len":8,"output_len":8}}]}'
	# a misspelt GPU: its thresholds file is not there
	export BUILDKITE_PLUGIN_CONFIGURATION="{\"gpu\":\"H1OO\",${suite}}"
	run "${PLUGIN_DIR}/hooks/command"
	assert_equal "${status}" 2
	assert_output --partial "perfgate buildkite: step 'perf gate': gpu 'H1OO': no thresholds file thresholds/H1OO.yml (did you mean H100?)"
	refute_output --partial "perfgate run"
	assert_dir_not_exists results
	assert_equal "$(cat "${CALLS}")" ""
}

@test "hooks, plugin shell, scripts and the plugin's tests are shellcheck-clean" {
	cd "${PLUGIN_DIR}"
	run shellcheck -x hooks/* plugin/*.bash scripts/bundle tests/lib/*.bash tests/lib/binstub
	assert_success
	# bats files: warnings and errors (bats' @test functions run in
	# subshells, which shellcheck's infos misread)
	run shellcheck -x -s bash -S warning tests/*.bats
	assert_success
}
