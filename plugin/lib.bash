#!/bin/bash
# Shell shared by the plugin's hooks: find or build the perfgate binary,
# stop leftover servers. Everything else is perfgate's (C) job.
#
# Exit codes follow perfgate's: 2 for a configuration mistake (a `binary`
# that does not exist), 3 for an agent that cannot build perfgate.

PERFGATE_EXIT_USAGE=2
PERFGATE_EXIT_INFRA=3

perfgate_error() {
	# The agent expands a "+++" group, so the reason is what the user sees.
	echo "+++ :warning: perfgate plugin error" >&2
	echo "perfgate: $*" >&2
}

# Inputs from the environment are checked before bash evaluates them:
# ${!var} and arithmetic evaluate array subscripts, so a value such as
# 'PATH[$(cmd)]' would run cmd. A value that does not match is replaced by
# the default, with a warning.

# perfgate_valid VALUE REGEX: VALUE matches REGEX (anchored by the caller).
perfgate_valid() {
	[[ "$1" =~ $2 ]]
}

# A whole number of seconds from the variable named $1 (at most 5 digits),
# else the default $2 with a warning.
perfgate_seconds() {
	local name="$1" default="$2" value="${!1:-}"
	[ -z "${value}" ] && value="${default}"
	if ! perfgate_valid "${value}" '^[0-9]{1,5}$'; then
		echo "perfgate: warning: ${name} must be a whole number of seconds; using ${default}" >&2
		value="${default}"
	fi
	printf '%s' "$((10#${value}))"
}

# The value of a scalar plugin option as the agent flattens it:
# BUILDKITE_PLUGIN_<NAME>_<KEY>, where NAME comes from the plugin's source
# (PERFGATE for org/perfgate#v1). Empty when unset.
perfgate_option() {
	local key="$1" name="${BUILDKITE_PLUGIN_NAME:-PERFGATE}" var
	# a variable name, nothing bash would evaluate in ${!var}
	if ! perfgate_valid "${name}" '^[A-Za-z0-9_]{1,64}$'; then
		echo "perfgate: warning: ignoring BUILDKITE_PLUGIN_NAME (not a plugin name)" >&2
		name=PERFGATE
	fi
	key="${key^^}"
	var="BUILDKITE_PLUGIN_${name^^}_${key//-/_}"
	printf '%s' "${!var:-}"
}

# A key for the build cache that changes whenever the plugin's source
# does: the git tree of the plugin directory (stable across commits that
# do not touch it, e.g. for a vendored plugin), plus a hash of local
# changes; the CMake project version outside git.
perfgate_cache_key() {
	local dir="$1" tree changes version
	if tree="$(git -C "${dir}" rev-parse --verify --quiet 'HEAD:./' 2>/dev/null)" && [ -n "${tree}" ]; then
		changes="$(git -C "${dir}" status --porcelain --untracked-files=no -- . 2>/dev/null || true)"
		if [ -n "${changes}" ]; then
			tree="${tree:0:12}-dirty-$(git -C "${dir}" diff HEAD -- . | git hash-object --stdin | cut -c1-12)"
		fi
		printf '%s' "${tree:0:40}"
		return 0
	fi
	version="$(sed -n 's/^project(perfgate VERSION \([0-9.]*\).*/\1/p' "${dir}/CMakeLists.txt" 2>/dev/null)"
	printf 'v%s-nogit' "${version:-unknown}"
}

perfgate_cache_root() {
	if [ -n "${PERFGATE_CACHE_DIR:-}" ]; then
		printf '%s' "${PERFGATE_CACHE_DIR}"
	elif [ -n "${BUILDKITE_PLUGINS_PATH:-}" ]; then
		printf '%s/perfgate-cache' "${BUILDKITE_PLUGINS_PATH}"
	else
		printf '%s/.cache/perfgate' "${HOME:-/tmp}"
	fi
}

# Name every missing build dependency at once, with the Debian package
# that provides it. Returns 0 when the agent can build perfgate.
perfgate_check_build_tools() {
	local missing=() module package cc="${CC:-}"
	command -v cmake >/dev/null 2>&1 || missing+=("cmake (apt-get install cmake)")
	if [ -z "${cc}" ]; then
		for cc in cc gcc clang ""; do
			[ -n "${cc}" ] && command -v "${cc}" >/dev/null 2>&1 && break
		done
	fi
	if [ -z "${cc}" ] || ! command -v "${cc}" >/dev/null 2>&1; then
		missing+=("a C compiler (apt-get install build-essential)")
	fi
	command -v make >/dev/null 2>&1 || missing+=("make (apt-get install build-essential)")
	if ! command -v pkg-config >/dev/null 2>&1; then
		missing+=("pkg-config (apt-get install pkg-config)")
	else
		for module in libcurl:libcurl4-openssl-dev jansson:libjansson-dev yaml-0.1:libyaml-dev libgit2:libgit2-dev; do
			package="${module#*:}"
			module="${module%%:*}"
			pkg-config --exists "${module}" 2>/dev/null ||
				missing+=("${module} development files (apt-get install ${package})")
		done
	fi
	if [ "${#missing[@]}" -gt 0 ]; then
		local list
		list="$(printf '%s, ' "${missing[@]}")"
		perfgate_error "cannot build perfgate on this agent: missing ${list%, }. Install them, or set the plugin's \`binary\` option to a perfgate built elsewhere."
		return 1
	fi
	return 0
}

# Build perfgate from the plugin's source into <cache>/<key>/bin/perfgate.
# Concurrent jobs on one host serialise on a lock; the binary appears
# atomically, so a half-built file is never run.
perfgate_build() {
	local dir="$1" dest="$2" build="$2/build" jobs
	jobs="$(nproc 2>/dev/null || echo 2)"
	echo "--- :hammer_and_wrench: Building perfgate ($(basename "${dest}"))" >&2
	cmake -S "${dir}" -B "${build}" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >&2 &&
		cmake --build "${build}" -j"${jobs}" --target perfgate >&2 &&
		mkdir -p "${dest}/bin" &&
		cp "${build}/perfgate" "${dest}/bin/perfgate.tmp.$$" &&
		mv -f "${dest}/bin/perfgate.tmp.$$" "${dest}/bin/perfgate"
}

# Print the path of the perfgate binary to run: the `binary` option (or
# PERFGATE_BINARY from the agent's environment), else the build cache,
# building on first use.
perfgate_binary() {
	local dir="$1" wanted found root key dest lock_fd
	wanted="$(perfgate_option binary)"
	wanted="${wanted:-${PERFGATE_BINARY:-}}"
	if [ -n "${wanted}" ]; then
		if [[ "${wanted}" == */* ]]; then
			found="${wanted}"
			[ -f "${found}" ] && [ -x "${found}" ] || found=""
		else
			found="$(command -v "${wanted}" 2>/dev/null || true)"
		fi
		if [ -z "${found}" ]; then
			local step=""
			[ -n "${BUILDKITE_LABEL:-}" ] && step=" (step \"${BUILDKITE_LABEL}\")"
			perfgate_error "binary: \"${wanted}\" is not an executable file${step}"
			return "${PERFGATE_EXIT_USAGE}"
		fi
		printf '%s\n' "${found}"
		return 0
	fi

	root="$(perfgate_cache_root)"
	key="$(perfgate_cache_key "${dir}")"
	dest="${root}/${key}"
	if [ -x "${dest}/bin/perfgate" ]; then
		printf '%s\n' "${dest}/bin/perfgate"
		return 0
	fi
	perfgate_check_build_tools || return "${PERFGATE_EXIT_INFRA}"
	if ! mkdir -p "${dest}"; then
		perfgate_error "cannot create the build cache ${dest}"
		return "${PERFGATE_EXIT_INFRA}"
	fi
	if command -v flock >/dev/null 2>&1; then
		exec {lock_fd}>"${dest}.lock"
		flock "${lock_fd}"
	fi
	# another job may have built it while we waited for the lock
	if [ ! -x "${dest}/bin/perfgate" ] && ! perfgate_build "${dir}" "${dest}"; then
		perfgate_error "building perfgate failed (build directory ${dest}/build)"
		return "${PERFGATE_EXIT_INFRA}"
	fi
	if [ -n "${lock_fd:-}" ]; then
		exec {lock_fd}>&-
	fi
	printf '%s\n' "${dest}/bin/perfgate"
}

# Where perfgate records the process groups of the servers it starts for
# this job (one id per line), so pre-exit can find them. The job id names
# a file in TMPDIR, nowhere else: anything but [A-Za-z0-9._-] becomes '_'.
perfgate_pidfile() {
	local job="${BUILDKITE_JOB_ID:-local}"
	job="${job//[^A-Za-z0-9._-]/_}"
	printf '%s/perfgate-%s.pgids' "${TMPDIR:-/tmp}" "${job:0:128}"
}

# Stop what perfgate could not: TERM each recorded process group that is
# still alive, KILL it after a grace period. Never fails: a pre-exit
# hook's status would replace the step's exit code.
perfgate_stop_leftovers() {
	local file pgid alive=() grace i
	grace="$(perfgate_seconds PERFGATE_STOP_GRACE 10)"
	file="$(perfgate_pidfile)"
	# ours, and no link: a file planted in a shared TMPDIR must not name
	# process groups for us to kill
	[ -f "${file}" ] && [ ! -L "${file}" ] && [ -O "${file}" ] || return 0
	while read -r pgid; do
		# digits only before any arithmetic; pid_max is at most 2^22
		if ! perfgate_valid "${pgid}" '^[0-9]{1,7}$' || [ "$((10#${pgid}))" -le 1 ]; then
			continue
		fi
		pgid="$((10#${pgid}))"
		if kill -0 -- "-${pgid}" 2>/dev/null; then
			echo "perfgate: stopping leftover server process group ${pgid}" >&2
			kill -TERM -- "-${pgid}" 2>/dev/null || true
			alive+=("${pgid}")
		fi
	done <"${file}"
	for ((i = 0; i < grace * 10 && ${#alive[@]} > 0; i++)); do
		local still=()
		for pgid in "${alive[@]}"; do
			kill -0 -- "-${pgid}" 2>/dev/null && still+=("${pgid}")
		done
		alive=("${still[@]}")
		[ "${#alive[@]}" -gt 0 ] && sleep 0.1
	done
	for pgid in "${alive[@]}"; do
		echo "perfgate: process group ${pgid} ignored SIGTERM for ${grace}s, killing it" >&2
		kill -KILL -- "-${pgid}" 2>/dev/null || true
	done
	rm -f "${file}"
	return 0
}
