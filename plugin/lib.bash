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
		for module in libcurl:libcurl4-openssl-dev jansson:libjansson-dev yaml-0.1:libyaml-dev libgit2:libgit2-dev libcrypto:libssl-dev; do
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
	# PERFGATE_BUNDLE: relocatable, so `binary-artifact` can ship this build
	cmake -S "${dir}" -B "${build}" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
		-DPERFGATE_BUNDLE=ON >&2 &&
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

# ---------------------------------------------------------------------
# Bundles: perfgate for agents without build tools (the `binary-artifact`
# option). A bundle is a gzipped tar of
#   perfgate/bin/perfgate       built with -DPERFGATE_BUNDLE=ON: its RPATH
#                               is $ORIGIN/../lib
#   perfgate/lib/<soname>       every shared library it loads but glibc's
#   perfgate/BUNDLE             "perfgate X.Y.Z", "machine M", "glibc V"
# so it needs nothing on the agent but glibc V or newer, of machine M.

# The libraries of glibc itself: every agent has them, matched to its own
# loader, so a bundle never carries them.
perfgate_glibc_lib() {
	case "$1" in
	linux-vdso.so.* | linux-gate.so.* | ld-linux*.so.* | ld64.so.* | libc.so.* | libm.so.* | \
		libmvec.so.* | libpthread.so.* | libdl.so.* | librt.so.* | libresolv.so.* | \
		libutil.so.* | libanl.so.* | libnsl.so.* | libBrokenLocale.so.* | \
		libthread_db.so.* | libc_malloc_debug.so.*)
		return 0
		;;
	esac
	return 1
}

# The newest glibc symbol version FILE... need ("2.35"), from the version
# strings in their dynamic sections: no binutils on the agent needed.
perfgate_glibc_needed() {
	grep -aoh 'GLIBC_2\.[0-9][0-9.]*' "$@" 2>/dev/null | sed 's/^GLIBC_//' | sort -V | tail -n 1
}

# This agent's glibc version ("2.36"), or "unknown".
perfgate_glibc_version() {
	local v
	v="$(getconf GNU_LIBC_VERSION 2>/dev/null)" && [ -n "${v}" ] && {
		printf '%s' "${v##* }"
		return 0
	}
	printf 'unknown'
}

# perfgate_bundle BINARY OUT: pack BINARY and its libraries into OUT (a
# .tar.gz written atomically). Prints what it packed on stderr.
perfgate_bundle() {
	local bin="$1" out="$2" stage name arrow path rest version n=0 glibc
	# shellcheck disable=SC2016 # the literal $ORIGIN of the RPATH
	if ! grep -qF '$ORIGIN/../lib' "${bin}"; then
		perfgate_error "cannot bundle ${bin}: it was built without -DPERFGATE_BUNDLE=ON, so it would not find its libraries (the plugin's own builds have it; so does scripts/bundle)"
		return "${PERFGATE_EXIT_USAGE}"
	fi
	if ! version="$("${bin}" --version 2>&1)"; then
		perfgate_error "cannot bundle ${bin}: it does not run here: ${version}"
		return "${PERFGATE_EXIT_INFRA}"
	fi
	stage="$(mktemp -d "${TMPDIR:-/tmp}/perfgate-bundle.XXXXXX")"
	mkdir -p "${stage}/perfgate/bin" "${stage}/perfgate/lib"
	cp "${bin}" "${stage}/perfgate/bin/perfgate"
	while read -r name arrow path rest; do
		# "libx.so.1 => /lib/.../libx.so.1 (0x...)"; the vdso and the
		# loader have no "=>"
		[ "${arrow}" = "=>" ] || continue
		perfgate_glibc_lib "${name}" && continue
		if [ ! -f "${path}" ]; then
			perfgate_error "cannot bundle ${bin}: ${name} ${path} ${rest}"
			rm -rf "${stage}"
			return "${PERFGATE_EXIT_INFRA}"
		fi
		cp -L "${path}" "${stage}/perfgate/lib/${name}"
		n=$((n + 1))
	done < <(ldd "${bin}")
	glibc="$(perfgate_glibc_needed "${stage}/perfgate/bin/perfgate" "${stage}/perfgate/lib/"*)"
	printf '%s\nmachine %s\nglibc %s\n' "${version}" "$(uname -m)" "${glibc:-unknown}" \
		>"${stage}/perfgate/BUNDLE"
	mkdir -p "$(dirname "${out}")"
	if ! tar -C "${stage}" -czf "${out}.tmp.$$" perfgate || ! mv -f "${out}.tmp.$$" "${out}"; then
		rm -rf "${stage}" "${out}.tmp.$$"
		perfgate_error "cannot write the bundle ${out}"
		return "${PERFGATE_EXIT_INFRA}"
	fi
	rm -rf "${stage}"
	echo "perfgate: bundled ${version} with ${n} libraries for $(uname -m)${glibc:+, glibc ${glibc} or newer}: ${out} ($(du -k "${out}" | cut -f1) KiB)" >&2
}

# perfgate_upload_bundle BINARY ARTIFACT: bundle BINARY and upload it as
# the build artifact ARTIFACT (a path such as perfgate/perfgate.tar.gz).
perfgate_upload_bundle() {
	local bin="$1" artifact="$2" stage rc=0
	echo "--- :package: Uploading perfgate as ${artifact}" >&2
	stage="$(mktemp -d "${TMPDIR:-/tmp}/perfgate-upload.XXXXXX")"
	perfgate_bundle "${bin}" "${stage}/${artifact}" || rc=$?
	# the agent stores the path as given, relative to where it runs
	if [ "${rc}" -eq 0 ] && ! (cd "${stage}" && buildkite-agent artifact upload "${artifact}") >&2; then
		perfgate_error "binary-artifact: uploading ${artifact} failed"
		rc="${PERFGATE_EXIT_INFRA}"
	elif [ "${rc}" -eq 0 ]; then
		# the agent records the same digest with the upload; the steps
		# that download the bundle run it only when theirs matches
		echo "perfgate: uploaded ${artifact}, sha256 $(perfgate_file_digest "${stage}/${artifact}" sha256)" >&2
	fi
	rm -rf "${stage}"
	return "${rc}"
}

# The digest STEP recorded for ARTIFACT when it uploaded it (the agent
# hashes what it uploads): SHA-256, or SHA-1 from an agent or an artifact
# older than SHA-256 records. Prints it; on failure, the agent's last line.
perfgate_bundle_digest() {
	local artifact="$1" step="$2" sum
	if sum="$(buildkite-agent artifact shasum --sha256 --step "${step}" "${artifact}" 2>&1)" &&
		[[ "${sum}" =~ ^[0-9a-f]{64}$ ]]; then
		printf '%s' "${sum}"
		return 0
	fi
	if sum="$(buildkite-agent artifact shasum --step "${step}" "${artifact}" 2>&1)" &&
		[[ "${sum}" =~ ^[0-9a-f]{40}$ ]]; then
		printf '%s' "${sum}"
		return 0
	fi
	printf '%s' "${sum##*$'\n'}"
	return 1
}

# perfgate_file_digest FILE LIKE: FILE's SHA-256, or its SHA-1 when LIKE
# (a digest) is one.
perfgate_file_digest() {
	local out
	if [ "${#2}" -eq 40 ]; then
		out="$(sha1sum <"$1")" || return 1
	else
		out="$(sha256sum <"$1")" || return 1
	fi
	printf '%s' "${out%% *}"
}

# perfgate_bundle_intact DEST DIGEST: DEST (a cache entry) holds the
# bundle whose digest is DIGEST, and beside it exactly that bundle's files,
# none changed, added or removed: another job on this agent may have
# swapped the perfgate a later step runs, or put a library beside it.
perfgate_bundle_intact() {
	local dest="$1" digest="$2" tmp rc=0
	[ -d "${dest}" ] && [ ! -L "${dest}" ] && [ -f "${dest}/bundle.tar.gz" ] &&
		[ ! -L "${dest}/bundle.tar.gz" ] || return 1
	[ "$(perfgate_file_digest "${dest}/bundle.tar.gz" "${digest}")" = "${digest}" ] || return 1
	tmp="$(mktemp -d "${dest%/*}/.verify.XXXXXX")" || return 1
	if ! tar -xzf "${dest}/bundle.tar.gz" -C "${tmp}" 2>/dev/null ||
		! diff -r --no-dereference "${tmp}/perfgate" "${dest}/perfgate" >/dev/null 2>&1; then
		rc=1
	fi
	rm -rf "${tmp}"
	return "${rc}"
}

# perfgate_fetch_bundle ARTIFACT STEP: the bundle ARTIFACT as the step
# STEP of this build uploaded it, never another step's upload of the same
# path (a pull request's own command can upload one): downloaded from STEP
# only, checked against the digest STEP's upload recorded, unpacked into
# the cache once per host and bundle (keyed by that digest) and checked
# again, whole, before every later use of the cached copy. Checks that it
# runs here, and prints the path of its perfgate.
perfgate_fetch_bundle() {
	local artifact="$1" step="$2" root digest dest tmp out got lock_fd="" label="" built fresh=""
	[ -n "${BUILDKITE_LABEL:-}" ] && label=" (step \"${BUILDKITE_LABEL}\")"
	if ! digest="$(perfgate_bundle_digest "${artifact}" "${step}")"; then
		perfgate_error "binary-artifact: no artifact \"${artifact}\" uploaded by step \"${step}\" in this build${label}: that step (mode: binary, or a step with the bundle in its artifact_paths) must finish first; make this step depend on it (${digest})"
		return "${PERFGATE_EXIT_INFRA}"
	fi
	root="$(perfgate_cache_root)"
	dest="${root}/bundle-${digest}"
	if [ ! -e "${dest}" ] && [ ! -L "${dest}" ]; then
		if ! mkdir -p "${root}"; then
			perfgate_error "cannot create the cache ${root}"
			return "${PERFGATE_EXIT_INFRA}"
		fi
		if command -v flock >/dev/null 2>&1; then
			exec {lock_fd}>"${dest}.lock"
			flock "${lock_fd}"
		fi
	fi
	# another job on this host may have unpacked it while we waited
	if [ ! -e "${dest}" ] && [ ! -L "${dest}" ]; then
		echo "--- :package: Downloading perfgate (${artifact} from step ${step})" >&2
		tmp="$(mktemp -d "${root}/.bundle.XXXXXX")"
		# the agent writes the artifact at its path under the directory
		if ! buildkite-agent artifact download "${artifact}" "${tmp}/download" --step "${step}" >&2 ||
			[ ! -f "${tmp}/download/${artifact}" ]; then
			rm -rf "${tmp}"
			perfgate_error "binary-artifact: could not download \"${artifact}\" from step \"${step}\"${label}"
			return "${PERFGATE_EXIT_INFRA}"
		fi
		got="$(perfgate_file_digest "${tmp}/download/${artifact}" "${digest}")"
		if [ "${got}" != "${digest}" ]; then
			rm -rf "${tmp}"
			perfgate_error "binary-artifact: \"${artifact}\" as downloaded has digest ${got}, not the ${digest} step \"${step}\" uploaded${label}: not run"
			return "${PERFGATE_EXIT_INFRA}"
		fi
		mv "${tmp}/download/${artifact}" "${tmp}/bundle.tar.gz"
		rm -rf "${tmp}/download"
		if ! tar -xzf "${tmp}/bundle.tar.gz" -C "${tmp}" || [ ! -f "${tmp}/perfgate/bin/perfgate" ]; then
			rm -rf "${tmp}"
			perfgate_error "binary-artifact: could not unpack \"${artifact}\" as a perfgate bundle${label}"
			return "${PERFGATE_EXIT_INFRA}"
		fi
		chmod +x "${tmp}/perfgate/bin/perfgate"
		if ! out="$("${tmp}/perfgate/bin/perfgate" --version 2>&1)"; then
			built="$(awk 'NR == 1 { v = $0 } /^machine / { m = $2 } /^glibc / { g = $2 }
				END { printf "%s for %s, glibc %s or newer", v, m, g }' "${tmp}/perfgate/BUNDLE" 2>/dev/null)"
			rm -rf "${tmp}"
			perfgate_error "binary-artifact: the perfgate in \"${artifact}\" does not run on this agent ($(uname -m), glibc $(perfgate_glibc_version)); it was built as: ${built:-unknown}. ${out}"
			return "${PERFGATE_EXIT_INFRA}"
		fi
		mv "${tmp}" "${dest}"
		fresh=1
		echo "perfgate: using ${out} from ${artifact} (step ${step})" >&2
	fi
	if [ -n "${lock_fd}" ]; then
		exec {lock_fd}>&-
	fi
	if [ -z "${fresh}" ] && ! perfgate_bundle_intact "${dest}" "${digest}"; then
		rm -rf "${dest}"
		perfgate_error "binary-artifact: the cached perfgate in ${dest} is not the bundle \"${artifact}\" step \"${step}\" uploaded (digest ${digest}): removed, not run${label}"
		return "${PERFGATE_EXIT_INFRA}"
	fi
	# bundles of other builds, unused for a week, go
	touch "${dest}"
	find "${root}" -maxdepth 1 -name 'bundle-*' -type d -mtime +7 ! -path "${dest}" \
		-exec rm -rf {} + 2>/dev/null || true
	printf '%s\n' "${dest}/perfgate/bin/perfgate"
}

# ---------------------------------------------------------------------
# The step's own command and the modes.

# The plugin's mode, as the agent flattens it (default gate).
perfgate_mode() {
	local mode
	mode="$(perfgate_option mode)"
	printf '%s' "${mode:-gate}"
}

# Print the perfgate this step runs: from binary-artifact where the step
# downloads it (every mode but binary and pipeline, which upload it), else
# the binary option or the build cache.
perfgate_resolve() {
	local dir="$1" artifact mode step
	artifact="$(perfgate_option binary-artifact)"
	mode="$(perfgate_mode)"
	if [ -n "${artifact}" ] && [ "${mode}" != binary ] && [ "${mode}" != pipeline ]; then
		step="$(perfgate_option binary-step)"
		if [ -z "${step}" ]; then
			perfgate_error "binary-artifact: set binary-step to the key of the step that uploads \"${artifact}\": the bundle is taken from that step only (another step of the build can upload the same path)"
			return "${PERFGATE_EXIT_USAGE}"
		fi
		perfgate_fetch_bundle "${artifact}" "${step}"
	else
		perfgate_binary "${dir}"
	fi
}

# Where the command hook notes, for post-command, whether the step's own
# command ran ("ran") or only-on-labels skipped it ("skipped") in mode
# report. Named like perfgate_pidfile.
perfgate_command_marker() {
	local file
	file="$(perfgate_pidfile)"
	printf '%s.command' "${file%.pgids}"
}

# The marker's word, when the file is this user's own and no link (a file
# planted in a shared TMPDIR says nothing); empty otherwise.
perfgate_command_marker_read() {
	local file
	file="$(perfgate_command_marker)"
	if [ -f "${file}" ] && [ ! -L "${file}" ] && [ -O "${file}" ]; then
		head -c 16 "${file}"
	fi
}

# Does the step have a command of its own?
perfgate_has_step_command() {
	[ -n "${BUILDKITE_COMMAND:-}" ] && [ -n "${BUILDKITE_COMMAND//[[:space:]]/}" ]
}

# Run the step's command as the agent would without a plugin command hook:
# a file of the checkout runs as a script, anything else is passed to the
# agent's shell (BUILDKITE_SHELL, "/bin/bash -e -c" by default)
# (docs/design/buildkite-agent.md §7). Returns its exit status.
perfgate_run_step_command() {
	local cmd="${BUILDKITE_COMMAND}" script shell=()
	script="${cmd//$'\n'/}"
	if [[ "${script}" != /* ]] && [ -f "${script}" ]; then
		chmod +x "${script}" 2>/dev/null || true
		cmd="./${script}"
	fi
	read -r -a shell <<<"${BUILDKITE_SHELL:-/bin/bash -e -c}"
	echo "~~~ Running the step's command (mode: report)" >&2
	printf '$ %s\n' "${cmd}" >&2
	"${shell[@]}" "${cmd}"
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
