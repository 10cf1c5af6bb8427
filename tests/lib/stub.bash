# stub/unstub with the plan-line conventions of bats-mock (Buildkite's
# fork, which buildkite-plugin-tester ships), written for machines without
# it. Only what the plugin's tests use:
#
#   stub PROG 'ARG... : COMMAND' ...   PROG on PATH answers its next call
#                                      with the next plan line: the call's
#                                      arguments must equal ARG... ('*'
#                                      matches any one), then COMMAND runs
#                                      (eval, with the call's "$@" and
#                                      stdin); a line without " : " takes
#                                      any arguments
#   unstub [--allow-missing] PROG      fails unless every plan line was
#                                      used and every call matched (and,
#                                      without --allow-missing, PROG is
#                                      stubbed)
#
# PROG_STUB_DEBUG=/dev/stderr (PROG upper-cased, other characters _)
# explains mismatches.

export BATS_MOCK_TMPDIR="${BATS_RUN_TMPDIR:?}"
export BATS_MOCK_BINDIR="${BATS_MOCK_TMPDIR}/bin"
PATH="${BATS_MOCK_BINDIR}:${PATH}"

# "buildkite-agent" -> BUILDKITE_AGENT
_stub_prefix() {
	local p="${1^^}"
	p="${p//[^A-Z0-9]/_}"
	[[ "${p}" =~ ^[0-9]*(.*)$ ]] && p="${BASH_REMATCH[1]}"
	printf '%s' "${p}"
}

stub() {
	local prog="$1" line prefix
	shift
	prefix="$(_stub_prefix "${prog}")"
	export "${prefix}_STUB_PLAN=${BATS_MOCK_TMPDIR}/${prog}-stub-plan"
	export "${prefix}_STUB_RUN=${BATS_MOCK_TMPDIR}/${prog}-stub-run"
	mkdir -p "${BATS_MOCK_BINDIR}"
	ln -sf "${BASH_SOURCE[0]%/*}/binstub" "${BATS_MOCK_BINDIR}/${prog}"
	touch "${BATS_MOCK_TMPDIR}/${prog}-stub-plan"
	for line in "$@"; do
		printf '%s\n' "${line}" >>"${BATS_MOCK_TMPDIR}/${prog}-stub-plan"
	done
}

unstub() {
	local allow_missing=0 prog plan run planned used=0 failed=0 status=0
	if [ "$1" = --allow-missing ]; then
		allow_missing=1
		shift
	fi
	prog="$1"
	plan="${BATS_MOCK_TMPDIR}/${prog}-stub-plan"
	run="${BATS_MOCK_TMPDIR}/${prog}-stub-run"
	if [ ! -e "${plan}" ]; then
		[ "${allow_missing}" -eq 1 ] && return 0
		echo "${prog} is not stubbed" >&2
		return 1
	fi
	planned="$(wc -l <"${plan}")"
	if [ -f "${run}" ]; then
		read -r used failed <"${run}"
	fi
	if [ "${failed}" -ne 0 ]; then
		echo "${prog}: ${failed} call(s) matched no plan line" >&2
		status=1
	fi
	if [ "${used}" -lt "${planned}" ]; then
		echo "${prog}: $((planned - used)) of ${planned} planned call(s) never came" >&2
		status=1
	fi
	rm -f "${BATS_MOCK_BINDIR}/${prog}" "${plan}" "${run}"
	return "${status}"
}
