# Shared by the plugin's tests (tests/*.bats): a clean job environment,
# a stand-in perfgate that can be bundled, bundles, and PATHs without
# chosen tools. Loaded after load.bash.

# The plugin's root: /plugin in buildkite-plugin-tester, the checkout here.
# shellcheck disable=SC2034 # used by the tests that load this file
PLUGIN_DIR="$(cd "${BATS_TEST_DIRNAME}/.." && pwd)"

hooks_setup() {
	export PERFGATE_CACHE_DIR="${BATS_TEST_TMPDIR}/cache"
	export TMPDIR="${BATS_TEST_TMPDIR}"
	export BUILDKITE_JOB_ID="job-${BATS_TEST_NUMBER}-$$"
	export BUILDKITE_PLUGIN_NAME=PERFGATE
	# a job that sets nothing else unless a test does
	unset BUILDKITE BUILDKITE_COMMAND BUILDKITE_COMMAND_EXIT_STATUS BUILDKITE_SHELL
	unset BUILDKITE_LABEL BUILDKITE_PLUGIN_CONFIGURATION PERFGATE_BINARY
	unset BUILDKITE_PLUGIN_PERFGATE_BINARY BUILDKITE_PLUGIN_PERFGATE_MODE
	unset BUILDKITE_PLUGIN_PERFGATE_BINARY_ARTIFACT BUILDKITE_PLUGIN_PERFGATE_BINARY_STEP
	WORK="${BATS_TEST_TMPDIR}/work"
	mkdir -p "${WORK}"
	cd "${WORK}" || return 1
}

# fake_perfgate FILE [VERSION]: a script standing in for perfgate that
# appends "perfgate ARGS" to $CALLS and exits $FAKE_PERFGATE_EXIT (0); it
# names the RPATH of a bundle-ready build, so perfgate_bundle takes it.
fake_perfgate() {
	local file="$1" version="${2:-9.9.9}"
	mkdir -p "$(dirname "${file}")"
	cat >"${file}" <<FAKE
#!/usr/bin/env bash
# a stand-in for perfgate built with RPATH \$ORIGIN/../lib
echo "perfgate \$*" >>"\${CALLS:-/dev/null}"
[ "\$1" = --version ] && echo "perfgate ${version}"
exit "\${FAKE_PERFGATE_EXIT:-0}"
FAKE
	chmod +x "${file}"
}

# make_bundle OUT: a perfgate bundle (plugin/lib.bash's layout) whose
# perfgate is a fake.
make_bundle() {
	local out="$1" stage="${BATS_TEST_TMPDIR}/bundle-stage"
	rm -rf "${stage}"
	fake_perfgate "${stage}/perfgate/bin/perfgate" 7.7.7
	mkdir -p "${stage}/perfgate/lib" "$(dirname "${out}")"
	printf 'perfgate 7.7.7\nmachine %s\nglibc 2.35\n' "$(uname -m)" >"${stage}/perfgate/BUNDLE"
	tar -C "${stage}" -czf "${out}" perfgate
}

# sha256 FILE: its SHA-256, as the agent records an upload's.
sha256() {
	local out
	out="$(sha256sum <"$1")"
	printf '%s' "${out%% *}"
}

# path_with TOOL...: a directory holding only these commands (symlinks to
# where this machine has them): a PATH on which everything else is missing.
path_with() {
	local dir="${BATS_TEST_TMPDIR}/path-with" tool found
	mkdir -p "${dir}"
	for tool in "$@"; do
		found="$(command -v "${tool}")" && ln -sf "${found}" "${dir}/${tool}"
	done
	printf '%s' "${dir}"
}

# What the hooks need from a PATH besides bash builtins.
# shellcheck disable=SC2034
HOOK_TOOLS=(bash env dirname basename mkdir rm mv cp cat sed grep tr cut wc du sort tail touch find
	mktemp chmod tar gzip flock uname getconf ldd sha1sum sha256sum diff awk)
