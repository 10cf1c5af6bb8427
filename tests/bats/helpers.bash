# Shared by the bats suites: libraries, paths, and PATH shims.
#
# Shims are small executables put first on PATH that record how they were
# called (one line of arguments, and stdin when asked) and answer with a
# canned exit status: the plugin-tester's stub idea without bats-mock.

bats_load_library bats-support
bats_load_library bats-assert
bats_load_library bats-file

PLUGIN_DIR="${PERFGATE_SRC:-$(cd "${BATS_TEST_DIRNAME}/../.." && pwd)}"

# golden FILE NAME: compare FILE (- for stdin) with tests/golden/NAME, as
# the unit tests' tu_assert_golden does: PERFGATE_UPDATE_GOLDEN=1 rewrites
# the golden file first (read the diff before committing it).
golden() {
	local got="$1" want="${PERFGATE_TESTS}/golden/$2"
	if [ "${got}" = - ]; then
		got="$(mktemp "${BATS_TEST_TMPDIR}/golden.XXXXXX")"
		cat >"${got}"
	fi
	if [ "${PERFGATE_UPDATE_GOLDEN:-}" = 1 ]; then
		mkdir -p "$(dirname "${want}")"
		cp "${got}" "${want}"
	fi
	diff -u "${want}" "${got}"
}

# make_shim NAME [EXIT] : $SHIMS/NAME appends "NAME args..." to $CALLS,
# its stdin to $CALLS.NAME.<n> when SHIM_STDIN is set, and exits EXIT.
make_shim() {
	local name="$1" status="${2:-0}"
	mkdir -p "${SHIMS}"
	cat >"${SHIMS}/${name}" <<SHIM
#!/bin/bash
n=\$(wc -l <"${CALLS}" 2>/dev/null || echo 0)
printf '%s' "${name}" >>"${CALLS}"
printf ' %q' "\$@" >>"${CALLS}"
printf '\n' >>"${CALLS}"
if [ -n "\${SHIM_STDIN:-}" ]; then cat >"${CALLS}.${name}.\${n// /}"; fi
exit \${SHIM_EXIT_${name//-/_}:-${status}}
SHIM
	chmod +x "${SHIMS}/${name}"
}

# fake_agent_store: $SHIMS/buildkite-agent with a build's artifacts kept
# per step, as the agent and Buildkite keep them: `artifact upload PATH`
# stores PATH under the uploading job's $BUILDKITE_STEP_KEY; `artifact
# shasum [--sha256] [--step S] PATH` and `artifact download PATH DIR
# [--step S]` find PATH among every step's uploads, or S's only, and fail
# as the agent does when none or several match. Every call goes to $CALLS,
# an annotation's body to $CALLS.annotation.
fake_agent_store() {
	mkdir -p "${SHIMS}" "${BATS_TEST_TMPDIR}/artifacts"
	cat >"${SHIMS}/buildkite-agent" <<AGENT
#!/bin/bash
store="${BATS_TEST_TMPDIR}/artifacts"
printf 'buildkite-agent%s\n' "\$(printf ' %q' "\$@")" >>"${CALLS}"
verb="\$1 \$2" step="*" sum=sha1sum args=()
shift 2 || true
while [ \$# -gt 0 ]; do
	case "\$1" in
	--step) step="\$2"; shift 2 ;;
	--sha256) sum=sha256sum; shift ;;
	--*) shift ;;
	*) args+=("\$1"); shift ;;
	esac
done
found() {
	local matches=()
	for f in "\${store}"/\${step}/"\${args[0]}"; do [ -f "\$f" ] && matches+=("\$f"); done
	if [ \${#matches[@]} = 0 ]; then echo "fatal: failed to find artifacts: No artifacts found for downloading" >&2; exit 1; fi
	if [ \${#matches[@]} -gt 1 ]; then echo "fatal: Multiple artifacts were found. Try being more specific with the search or scope by step" >&2; exit 1; fi
	printf '%s' "\${matches[0]}"
}
case "\${verb}" in
"artifact upload")
	mkdir -p "\${store}/\${BUILDKITE_STEP_KEY}/\$(dirname "\${args[0]}")"
	cp "\${args[0]}" "\${store}/\${BUILDKITE_STEP_KEY}/\${args[0]}" ;;
"artifact shasum")
	f="\$(found)" || exit 1
	out="\$(\${sum} <"\$f")"; echo "\${out%% *}" ;;
"artifact download")
	f="\$(found)" || exit 1
	mkdir -p "\$(dirname "\${args[1]}/\${args[0]}")" && cp "\$f" "\${args[1]}/\${args[0]}" ;;
annotate*) cat >"${CALLS}.annotation" ;;
esac
exit 0
AGENT
	chmod +x "${SHIMS}/buildkite-agent"
}

# A directory with every command of /usr/bin except the ones named: a PATH
# on which those tools are missing.
path_without() {
	local dir="${BATS_TEST_TMPDIR}/path-without" drop
	mkdir -p "${dir}"
	# two ln calls, not one per tool: /usr/bin wins over /usr/sbin, as on PATH
	ln -sf /usr/sbin/* "${dir}/"
	ln -sf /usr/bin/* "${dir}/"
	for drop in "$@"; do rm -f "${dir:?}/${drop}"; done
	printf '%s' "${dir}"
}

common_setup() {
	SHIMS="${BATS_TEST_TMPDIR}/shims"
	CALLS="${BATS_TEST_TMPDIR}/calls"
	mkdir -p "${SHIMS}"
	: >"${CALLS}"
	export PATH="${SHIMS}:${PATH}"
	export PERFGATE_CACHE_DIR="${BATS_TEST_TMPDIR}/cache"
	# a clean Buildkite-less environment unless a test sets it up
	unset BUILDKITE BUILDKITE_PLUGIN_CONFIGURATION BUILDKITE_PLUGINS BUILDKITE_PLUGIN_NAME
	unset BUILDKITE_PULL_REQUEST BUILDKITE_PULL_REQUEST_LABELS BUILDKITE_PULL_REQUEST_BASE_BRANCH
	unset BUILDKITE_PLUGIN_PERFGATE_BINARY PERFGATE_BINARY BUILDKITE_AGENT_PATH BUILDKITE_LABEL
	unset BUILDKITE_JOB_ID BUILDKITE_BRANCH BUILDKITE_STEP_KEY BUILDKITE_BUILD_URL
}

# common_setup, then $PERFGATE, $PYTHON and a fresh $WORK as the current
# directory: the start of the suites that run the binary in a work tree.
work_setup() {
	common_setup
	PERFGATE="${PERFGATE_BIN:?PERFGATE_BIN is set by ctest}"
	PYTHON="${PERFGATE_PYTHON:-/usr/bin/python3}"
	WORK="${BATS_TEST_TMPDIR}/work"
	mkdir -p "${WORK}"
	cd "${WORK}"
}

# buildkite_job [COMMIT]: what the agent sets for a job, with a shim
# buildkite-agent that keeps its stdin; BUILDKITE_COMMIT only when given
# (the trust suite's commits come from its own git repositories).
buildkite_job() {
	make_shim buildkite-agent
	export SHIM_STDIN=1
	export BUILDKITE=true BUILDKITE_JOB_ID=0190-job BUILDKITE_LABEL=":h100: perf"
	export BUILDKITE_STEP_KEY=perf-h100 BUILDKITE_BUILD_URL=https://buildkite.com/acme/perf/builds/12
	export BUILDKITE_BRANCH=main BUILDKITE_PULL_REQUEST=false
	if [ $# -gt 0 ]; then export BUILDKITE_COMMIT="$1"; fi
}

# main_history N: in a git work tree beside ../runs (tests/data/gate),
# commits m1..mN on main on November 1..N, each with a run recorded in the
# history: base and same in turn, then slow (9% less output throughput at
# serving_llama8B_tp1_sharegpt_qps_inf) and slow-confirm from the sixth on.
main_history() {
	local i run
	for i in $(seq 1 "$1"); do
		echo "m$i" >>file.txt
		git add file.txt
		GIT_AUTHOR_DATE="2026-11-0${i}T12:00:00Z" GIT_COMMITTER_DATE="2026-11-0${i}T12:00:00Z" \
			git commit -qm "m$i"
		run=base
		[ $((i % 2)) = 0 ] && run=same
		[ "$i" -gt 5 ] && run=slow
		[ "$i" -gt 5 ] && [ $((i % 2)) = 0 ] && run=slow-confirm
		"${PERFGATE_BIN}" baseline record "../runs/${run}" --commit HEAD \
			--build-url "https://buildkite.example/b/$i" >/dev/null
	done
}

# A free TCP port on loopback (for a server a test starts).
free_port() {
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
