#!/usr/bin/env bats
# hooks/command, the way buildkite-plugin-tester runs a plugin's tests
# (`bats tests/` in its image, bats-mock's stub for the commands the hook
# calls). Here the build from source, real perfgate runs and the glibc-only
# bundle check are in tests/bats/hooks.bats, which need the built binary.

setup() {
	load "${BATS_PLUGIN_PATH:-${BATS_TEST_DIRNAME}/lib}/load.bash"
	load "${BATS_TEST_DIRNAME}/lib/hooks.bash"
	hooks_setup
	CALLS="${BATS_TEST_TMPDIR}/calls"
	: >"${CALLS}"
	export CALLS
}

teardown() {
	unstub --allow-missing perfgate || true
	unstub --allow-missing buildkite-agent || true
}

@test "the binary option: perfgate buildkite runs the step" {
	export BUILDKITE_PLUGIN_PERFGATE_BINARY=perfgate
	stub perfgate 'buildkite : echo running the step'
	run "${PLUGIN_DIR}/hooks/command"
	assert_success
	assert_output --partial "running the step"
	unstub perfgate
}

@test "perfgate's exit codes are the step's" {
	export BUILDKITE_PLUGIN_PERFGATE_BINARY=perfgate
	for code in 0 1 2 3 130; do
		stub perfgate "buildkite : exit ${code}"
		run "${PLUGIN_DIR}/hooks/command"
		assert_equal "${status}" "${code}"
		unstub perfgate
	done
}

@test "the plugin's name decides which variable holds an option" {
	# org/llm-perf#v1 makes the agent write BUILDKITE_PLUGIN_LLM_PERF_*
	export BUILDKITE_PLUGIN_NAME=LLM_PERF BUILDKITE_PLUGIN_LLM_PERF_BINARY=perfgate
	stub perfgate 'buildkite : exit 0'
	run "${PLUGIN_DIR}/hooks/command"
	assert_success
	unstub perfgate
}

@test "PERFGATE_BINARY from the agent's environment works like the option" {
	fake_perfgate "${BATS_TEST_TMPDIR}/opt/perfgate"
	export PERFGATE_BINARY="${BATS_TEST_TMPDIR}/opt/perfgate"
	run "${PLUGIN_DIR}/hooks/command"
	assert_success
	assert_equal "$(cat "${CALLS}")" "perfgate buildkite"
}

@test "the job id and plugin name from the environment cannot reach a path or bash evaluation" {
	local marker="${BATS_TEST_TMPDIR}/pwned"
	export BUILDKITE_JOB_ID="../../${BATS_TEST_TMPDIR##*/}/x"
	run bash -c ". '${PLUGIN_DIR}/plugin/lib.bash' && echo \"\$(perfgate_pidfile)\" && perfgate_command_marker"
	assert_line --index 0 "${TMPDIR}/perfgate-.._.._${BATS_TEST_TMPDIR##*/}_x.pgids"
	assert_line --index 1 "${TMPDIR}/perfgate-.._.._${BATS_TEST_TMPDIR##*/}_x.command"
	fake_perfgate "${BATS_TEST_TMPDIR}/opt/perfgate"
	export BUILDKITE_PLUGIN_NAME="X[\$(touch ${marker})]"
	export BUILDKITE_PLUGIN_PERFGATE_BINARY="${BATS_TEST_TMPDIR}/opt/perfgate"
	run "${PLUGIN_DIR}/hooks/command"
	assert_success
	assert_file_not_exists "${marker}"
	assert_output --partial "ignoring BUILDKITE_PLUGIN_NAME"
	assert_equal "$(cat "${CALLS}")" "perfgate buildkite"
}

@test "a binary that is not there is a configuration error naming the step" {
	export BUILDKITE_PLUGIN_PERFGATE_BINARY=/opt/nowhere/perfgate BUILDKITE_LABEL=":h100: perf"
	run "${PLUGIN_DIR}/hooks/command"
	assert_equal "${status}" 2
	assert_output --partial "+++ :warning: perfgate plugin error"
	assert_output --partial 'perfgate: binary: "/opt/nowhere/perfgate" is not an executable file (step ":h100: perf")'
}

@test "a cached build is used on an agent without build tools" {
	local key
	key="$(. "${PLUGIN_DIR}/plugin/lib.bash" && perfgate_cache_key "${PLUGIN_DIR}")"
	fake_perfgate "${PERFGATE_CACHE_DIR}/${key}/bin/perfgate"
	PATH="$(path_with "${HOOK_TOOLS[@]}" git)" run "${PLUGIN_DIR}/hooks/command"
	assert_success
	assert_equal "$(cat "${CALLS}")" "perfgate buildkite"
}

@test "missing build tools are named with the package to install" {
	PATH="$(path_with "${HOOK_TOOLS[@]}")" run "${PLUGIN_DIR}/hooks/command"
	assert_equal "${status}" 3
	assert_output --partial "perfgate: cannot build perfgate on this agent: missing cmake (apt-get install cmake)"
	assert_output --partial "pkg-config (apt-get install pkg-config)"
	assert_output --partial "set the plugin's \`binary\` option"
}

@test "a missing development package is named" {
	stub cmake
	stub cc
	stub make
	stub pkg-config \
		'--exists libcurl : exit 0' \
		'--exists jansson : exit 0' \
		'--exists yaml-0.1 : exit 0' \
		'--exists libgit2 : exit 1' \
		'--exists libcrypto : exit 0'
	PATH="${BATS_MOCK_BINDIR}:$(path_with "${HOOK_TOOLS[@]}")" run "${PLUGIN_DIR}/hooks/command"
	assert_equal "${status}" 3
	assert_output --partial "perfgate: cannot build perfgate on this agent: missing libgit2 development files (apt-get install libgit2-dev)."
	unstub pkg-config
	unstub cmake
	unstub cc
	unstub make
}

@test "a step command is refused where the hook would skip it" {
	export BUILDKITE_PLUGIN_PERFGATE_BINARY=perfgate BUILDKITE_COMMAND="./bench.sh"
	stub perfgate
	for mode in "" gate run merge pipeline binary; do
		export BUILDKITE_PLUGIN_PERFGATE_MODE="${mode}"
		run "${PLUGIN_DIR}/hooks/command"
		assert_equal "${status}" 2
		assert_output --partial "the step's command would not run: in mode ${mode:-gate} the plugin's command hook runs perfgate instead"
		assert_output --partial "use \`mode: report\` to run it"
	done
	unstub perfgate
}

@test "mode report: the step's command runs, checked options first; perfgate reports in post-command" {
	export BUILDKITE_PLUGIN_PERFGATE_BINARY=perfgate BUILDKITE_PLUGIN_PERFGATE_MODE=report
	export BUILDKITE_COMMAND='mkdir -p results && echo "{}" > results/bench.json && echo benchmark done'
	stub perfgate 'buildkite --will-run : echo options valid >&2'
	run "${PLUGIN_DIR}/hooks/command"
	assert_success
	assert_line "options valid"
	assert_line --partial "Running the step's command (mode: report)"
	assert_line "benchmark done"
	assert_file_exists results/bench.json
	assert_file_exists "${TMPDIR}/perfgate-${BUILDKITE_JOB_ID}.command"
	unstub perfgate
}

@test "mode report: the command's exit status is the hook's, under the agent's shell" {
	export BUILDKITE_PLUGIN_PERFGATE_BINARY=perfgate BUILDKITE_PLUGIN_PERFGATE_MODE=report
	export BUILDKITE_COMMAND=$'false\necho after the failure'
	stub perfgate 'buildkite --will-run : exit 0' 'buildkite --will-run : exit 0'
	# the agent's default shell stops at the first failure (bash -e -c)
	run "${PLUGIN_DIR}/hooks/command"
	assert_equal "${status}" 1
	refute_line "after the failure"
	# post-command still reports what the command wrote
	assert_file_exists "${TMPDIR}/perfgate-${BUILDKITE_JOB_ID}.command"
	# an agent whose shell does not stop
	BUILDKITE_SHELL="/bin/bash -c" run "${PLUGIN_DIR}/hooks/command"
	assert_success
	assert_line "after the failure"
	unstub perfgate
}

@test "mode report: a script of the checkout runs as a script" {
	export BUILDKITE_PLUGIN_PERFGATE_BINARY=perfgate BUILDKITE_PLUGIN_PERFGATE_MODE=report
	mkdir -p .buildkite
	printf '#!/bin/sh\necho "script $0 ran"\n' >.buildkite/bench.sh
	export BUILDKITE_COMMAND=.buildkite/bench.sh
	stub perfgate 'buildkite --will-run : exit 0'
	run "${PLUGIN_DIR}/hooks/command"
	assert_success
	assert_line "script ./.buildkite/bench.sh ran"
	unstub perfgate
}

@test "mode report: bad options stop the step before its command runs" {
	export BUILDKITE_PLUGIN_PERFGATE_BINARY=perfgate BUILDKITE_PLUGIN_PERFGATE_MODE=report
	export BUILDKITE_COMMAND='echo should not run'
	stub perfgate "buildkite --will-run : echo \"perfgate buildkite: step 'x': unknown option 'thresold'\" >&2; exit 2"
	run "${PLUGIN_DIR}/hooks/command"
	assert_equal "${status}" 2
	assert_output --partial "unknown option 'thresold'"
	refute_output --partial "should not run"
	assert_file_not_exists "${TMPDIR}/perfgate-${BUILDKITE_JOB_ID}.command"
	unstub perfgate
}

@test "mode report: a pull request only-on-labels skips does not run the command" {
	export BUILDKITE_PLUGIN_PERFGATE_BINARY=perfgate BUILDKITE_PLUGIN_PERFGATE_MODE=report
	export BUILDKITE_COMMAND='echo the benchmark ran'
	stub perfgate "buildkite --will-run : echo \"perfgate buildkite: step 'x': skipped: pull request #7 has no label perf (labels: none)\" >&2; exit 1"
	run "${PLUGIN_DIR}/hooks/command"
	assert_success
	assert_output "perfgate buildkite: step 'x': skipped: pull request #7 has no label perf (labels: none)"
	# post-command stays quiet
	assert_equal "$(cat "${TMPDIR}/perfgate-${BUILDKITE_JOB_ID}.command")" skipped
	unstub perfgate
}

@test "mode report without a command: post-command reports what is there" {
	export BUILDKITE_PLUGIN_PERFGATE_BINARY=perfgate BUILDKITE_PLUGIN_PERFGATE_MODE=report
	stub perfgate 'buildkite --will-run : exit 0'
	run "${PLUGIN_DIR}/hooks/command"
	assert_success
	assert_output --partial "the step has no command; the post-command hook reports what is already in results-dir"
	assert_file_exists "${TMPDIR}/perfgate-${BUILDKITE_JOB_ID}.command"
	unstub perfgate
}

@test "mode binary: perfgate and its libraries go up as the artifact, nothing else runs" {
	fake_perfgate "${BATS_TEST_TMPDIR}/opt/perfgate" 1.2.3
	export BUILDKITE_PLUGIN_PERFGATE_BINARY="${BATS_TEST_TMPDIR}/opt/perfgate"
	export BUILDKITE_PLUGIN_PERFGATE_MODE=binary
	export BUILDKITE_PLUGIN_PERFGATE_BINARY_ARTIFACT=perfgate/perfgate-linux.tar.gz
	local saved="${BATS_TEST_TMPDIR}/uploaded.tar.gz"
	# the agent uploads from the directory the path is relative to
	stub buildkite-agent "artifact upload perfgate/perfgate-linux.tar.gz : cp perfgate/perfgate-linux.tar.gz ${saved}"
	run "${PLUGIN_DIR}/hooks/command"
	assert_success
	assert_output --partial "--- :package: Uploading perfgate as perfgate/perfgate-linux.tar.gz"
	assert_output --partial "perfgate: bundled perfgate 1.2.3 with 0 libraries for $(uname -m): "
	assert_equal "$(cat "${CALLS}")" $'perfgate buildkite --check\nperfgate --version'
	mkdir unpacked && tar -xzf "${saved}" -C unpacked
	assert_file_executable unpacked/perfgate/bin/perfgate
	assert_equal "$(head -n 2 unpacked/perfgate/BUNDLE)" "perfgate 1.2.3"$'\n'"machine $(uname -m)"
	unstub buildkite-agent
}

@test "mode binary: a perfgate built without the bundle RPATH is refused" {
	printf '#!/bin/sh\necho "perfgate 1.0.0"\n' >"${BATS_TEST_TMPDIR}/perfgate"
	chmod +x "${BATS_TEST_TMPDIR}/perfgate"
	export BUILDKITE_PLUGIN_PERFGATE_BINARY="${BATS_TEST_TMPDIR}/perfgate" BUILDKITE_PLUGIN_PERFGATE_MODE=binary
	export BUILDKITE_PLUGIN_PERFGATE_BINARY_ARTIFACT=perfgate.tar.gz
	stub buildkite-agent
	run "${PLUGIN_DIR}/hooks/command"
	assert_equal "${status}" 2
	assert_output --partial "it was built without -DPERFGATE_BUNDLE=ON"
	unstub buildkite-agent
}

@test "mode pipeline with binary-artifact: the bundle goes up before the pipeline" {
	fake_perfgate "${BATS_TEST_TMPDIR}/opt/perfgate"
	export BUILDKITE_PLUGIN_PERFGATE_BINARY="${BATS_TEST_TMPDIR}/opt/perfgate"
	export BUILDKITE_PLUGIN_PERFGATE_MODE=pipeline BUILDKITE_PLUGIN_PERFGATE_BINARY_ARTIFACT=pg.tar.gz
	stub buildkite-agent 'artifact upload pg.tar.gz : test -s pg.tar.gz'
	run "${PLUGIN_DIR}/hooks/command"
	assert_success
	assert_equal "$(cat "${CALLS}")" $'perfgate buildkite --check\nperfgate --version\nperfgate buildkite'
	unstub buildkite-agent
}

# The GPU step of a build whose step "perfgate" uploaded the bundle: what
# the agent answers for that step's upload of perfgate/pg.tar.gz (its
# SHA-256, then the file), set up by bundle_step BUNDLE.
bundle_step() {
	export BUILDKITE_PLUGIN_PERFGATE_BINARY_ARTIFACT=perfgate/pg.tar.gz
	export BUILDKITE_PLUGIN_PERFGATE_BINARY_STEP=perfgate
	SHASUM="artifact shasum --sha256 --step perfgate perfgate/pg.tar.gz : echo $(sha256 "$1")"
	DOWNLOAD="artifact download perfgate/pg.tar.gz * --step perfgate : mkdir -p \$4/perfgate && cp $1 \$4/perfgate/pg.tar.gz"
}

@test "binary-artifact: a GPU step downloads the bundle from its step once, then runs it" {
	local bundle="${BATS_TEST_TMPDIR}/served/perfgate/pg.tar.gz"
	make_bundle "${bundle}"
	bundle_step "${bundle}"
	stub buildkite-agent "${SHASUM}" "${DOWNLOAD}" "${SHASUM}"
	# no build tools, and nothing but the plugin
	PATH="${BATS_MOCK_BINDIR}:$(path_with "${HOOK_TOOLS[@]}")" run "${PLUGIN_DIR}/hooks/command"
	assert_success
	assert_output --partial "--- :package: Downloading perfgate (perfgate/pg.tar.gz from step perfgate)"
	assert_output --partial "perfgate: using perfgate 7.7.7 from perfgate/pg.tar.gz (step perfgate)"
	assert_equal "$(cat "${CALLS}")" $'perfgate --version\nperfgate buildkite'
	assert_file_executable "${PERFGATE_CACHE_DIR}/bundle-$(sha256 "${bundle}")/perfgate/bin/perfgate"
	# the next job on this agent checks the cached copy, then runs it
	: >"${CALLS}"
	PATH="${BATS_MOCK_BINDIR}:$(path_with "${HOOK_TOOLS[@]}")" run "${PLUGIN_DIR}/hooks/command"
	assert_success
	refute_output --partial "Downloading"
	assert_equal "$(cat "${CALLS}")" "perfgate buildkite"
	unstub buildkite-agent
}

# A job on the agent between two trusted ones swaps the cached perfgate,
# or puts a library beside it that the loader would take first: the next
# step refuses it, in one line, exit 3, without running it, and removes it
# (the job after downloads it again).
@test "binary-artifact: a cached copy that is not the bundle its step uploaded is never run" {
	local bundle="${BATS_TEST_TMPDIR}/served/perfgate/pg.tar.gz" dest swap
	make_bundle "${bundle}"
	bundle_step "${bundle}"
	dest="${PERFGATE_CACHE_DIR}/bundle-$(sha256 "${bundle}")"
	for swap in binary library bundle; do
		stub buildkite-agent "${SHASUM}" "${DOWNLOAD}" "${SHASUM}"
		run "${PLUGIN_DIR}/hooks/command"
		assert_success
		case "${swap}" in
		binary) printf '#!/bin/sh\ntouch "%s/ran"\n' "${BATS_TEST_TMPDIR}" >"${dest}/perfgate/bin/perfgate" ;;
		library) echo evil >"${dest}/perfgate/lib/libc.so.6" ;;
		# the copy and the archive beside it, swapped together
		bundle)
			printf '#!/bin/sh\ntouch "%s/ran"\n' "${BATS_TEST_TMPDIR}" >"${dest}/perfgate/bin/perfgate"
			tar -C "${dest}" -czf "${dest}/bundle.tar.gz" perfgate
			;;
		esac
		: >"${CALLS}"
		run "${PLUGIN_DIR}/hooks/command"
		assert_equal "${status}" 3
		assert_output "+++ :warning: perfgate plugin error
perfgate: binary-artifact: the cached perfgate in ${dest} is not the bundle \"perfgate/pg.tar.gz\" step \"perfgate\" uploaded (digest $(sha256 "${bundle}")): removed, not run"
		assert_equal "$(cat "${CALLS}")" ""
		assert_file_not_exists "${BATS_TEST_TMPDIR}/ran"
		assert_file_not_exists "${dest}"
		unstub buildkite-agent
	done
}

# Another step of the build (a pull request's own command) uploads the
# same path: the bundle comes from the step binary-step names only, and a
# file that is not what that step uploaded is refused.
@test "binary-artifact: only the bundle its step uploaded, with that step's digest, is run" {
	local bundle="${BATS_TEST_TMPDIR}/served/perfgate/pg.tar.gz" other="${BATS_TEST_TMPDIR}/pr/pg.tar.gz"
	make_bundle "${bundle}"
	make_bundle "${other}"
	printf '#!/bin/sh\ntouch "%s/ran"\n' "${BATS_TEST_TMPDIR}" >"${BATS_TEST_TMPDIR}/bundle-stage/perfgate/bin/perfgate"
	tar -C "${BATS_TEST_TMPDIR}/bundle-stage" -czf "${other}" perfgate
	bundle_step "${bundle}"
	# what arrives is another upload than the one step "perfgate" recorded
	stub buildkite-agent "${SHASUM}" \
		"artifact download perfgate/pg.tar.gz * --step perfgate : mkdir -p \$4/perfgate && cp ${other} \$4/perfgate/pg.tar.gz"
	run "${PLUGIN_DIR}/hooks/command"
	assert_equal "${status}" 3
	assert_output --partial "perfgate: binary-artifact: \"perfgate/pg.tar.gz\" as downloaded has digest $(sha256 "${other}"), not the $(sha256 "${bundle}") step \"perfgate\" uploaded: not run"
	assert_file_not_exists "${BATS_TEST_TMPDIR}/ran"
	assert_equal "$(ls -A "${PERFGATE_CACHE_DIR}")" "bundle-$(sha256 "${bundle}").lock"
	unstub buildkite-agent
	# a GPU step that does not say which step uploads it downloads nothing
	unset BUILDKITE_PLUGIN_PERFGATE_BINARY_STEP
	stub buildkite-agent
	run "${PLUGIN_DIR}/hooks/command"
	assert_equal "${status}" 2
	assert_output --partial 'perfgate: binary-artifact: set binary-step to the key of the step that uploads "perfgate/pg.tar.gz"'
	unstub buildkite-agent
}

@test "binary-artifact: an agent or upload without SHA-256 is checked by the SHA-1 it recorded" {
	local bundle="${BATS_TEST_TMPDIR}/served/perfgate/pg.tar.gz" sum
	make_bundle "${bundle}"
	bundle_step "${bundle}"
	sum="$(sha1sum "${bundle}" | cut -d' ' -f1)"
	stub buildkite-agent \
		'artifact shasum --sha256 --step perfgate perfgate/pg.tar.gz : echo "fatal: SHA-256 not available" >&2; exit 1' \
		"artifact shasum --step perfgate perfgate/pg.tar.gz : echo ${sum}" "${DOWNLOAD}"
	run "${PLUGIN_DIR}/hooks/command"
	assert_success
	assert_file_executable "${PERFGATE_CACHE_DIR}/bundle-${sum}/perfgate/bin/perfgate"
	unstub buildkite-agent
}

@test "binary-artifact: a build without the artifact says which step must come first" {
	export BUILDKITE_PLUGIN_PERFGATE_BINARY_ARTIFACT=perfgate/pg.tar.gz BUILDKITE_LABEL="perf H100"
	export BUILDKITE_PLUGIN_PERFGATE_BINARY_STEP=perfgate
	stub buildkite-agent \
		'artifact shasum --sha256 --step perfgate perfgate/pg.tar.gz : echo "fatal: failed to find artifacts: No artifacts found for downloading" >&2; exit 1' \
		'artifact shasum --step perfgate perfgate/pg.tar.gz : echo "fatal: failed to find artifacts: No artifacts found for downloading" >&2; exit 1'
	run "${PLUGIN_DIR}/hooks/command"
	assert_equal "${status}" 3
	assert_output --partial 'perfgate: binary-artifact: no artifact "perfgate/pg.tar.gz" uploaded by step "perfgate" in this build (step "perf H100"): that step (mode: binary, or a step with the bundle in its artifact_paths) must finish first'
	assert_output --partial "No artifacts found for downloading"
	unstub buildkite-agent
}

@test "binary-artifact: a bundle that cannot run here says what it was built for" {
	local bundle="${BATS_TEST_TMPDIR}/served/perfgate/pg.tar.gz"
	make_bundle "${bundle}"
	# a perfgate whose loader gives up, as on an agent with an older glibc
	mkdir -p "${BATS_TEST_TMPDIR}/old" && tar -xzf "${bundle}" -C "${BATS_TEST_TMPDIR}/old"
	printf '#!/bin/sh\necho "perfgate: /lib/x86_64-linux-gnu/libc.so.6: version GLIBC_2.35 not found" >&2\nexit 1\n' \
		>"${BATS_TEST_TMPDIR}/old/perfgate/bin/perfgate"
	tar -C "${BATS_TEST_TMPDIR}/old" -czf "${bundle}" perfgate
	bundle_step "${bundle}"
	stub buildkite-agent "${SHASUM}" "${DOWNLOAD}"
	run "${PLUGIN_DIR}/hooks/command"
	assert_equal "${status}" 3
	assert_output --partial "perfgate: binary-artifact: the perfgate in \"perfgate/pg.tar.gz\" does not run on this agent ($(uname -m), glibc "
	assert_output --partial "it was built as: perfgate 7.7.7 for $(uname -m), glibc 2.35 or newer"
	assert_output --partial "version GLIBC_2.35 not found"
	# nothing half-unpacked is left to be used next time
	assert_file_not_exists "${PERFGATE_CACHE_DIR}/bundle-$(sha256 "${bundle}")"
	unstub buildkite-agent
}
