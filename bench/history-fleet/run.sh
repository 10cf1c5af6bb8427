#!/usr/bin/env bash
# The git history under a real fleet: many `perfgate baseline record`
# processes writing at the same moment, and a record killed at every
# file-changing system call. Prints two tables:
#
#   1. writers x transports: for 2, 4, 8, 16 and 32 simultaneous writers
#      against a plain path, a file:// URL and a git daemon (receive-pack,
#      on loopback), ROUNDS rounds each: records expected, present, lost
#      (missing from the history), failed (the writer said so: exit != 0),
#      silent (exit 0, record missing), duplicates, the attempts used
#      (mean and max) and the slowest writer. Every round's writers wait
#      for each other after reading the tip (PERFGATE_HISTORY_TEST_BARRIER),
#      so all of them collide on their first attempt: the worst case.
#   2. kill: one record traced with strace to list its file-changing
#      system calls (creating, writing, renaming, removing, syncing files
#      in the history repository), then, for each, the record run again
#      and SIGKILLed as it enters that call (strace -e inject=...:signal=KILL),
#      followed by a plain record that must extend the history with no
#      help, a clean `git fsck` and a clean `perfgate baseline check`.
#
#   bench/history-fleet/run.sh [options]
#     --perfgate BIN      the binary (default build-rel/perfgate, else build/perfgate)
#     --rounds N          rounds per cell (default 20)
#     --writers "2 4 8"   writer counts (default "2 4 8 16 32")
#     --transports "..."  of path, file, daemon (default all three)
#     --kill-every K      kill at every K-th file-changing call only (default 1: all)
#     --no-fleet | --no-kill
#     --check             exit 1 unless every figure meets its target
#
# Build without sanitizers for figures (cmake -B build-rel
# -DCMAKE_BUILD_TYPE=Release); the machine may be shared: the times vary,
# the counts must not.
set -euo pipefail

here="$(cd "$(dirname "$0")/../.." && pwd)"
perfgate=""
rounds=20
writers="2 4 8 16 32"
transports="path file daemon"
kill_every=1
do_fleet=1
do_kill=1
check=0
while [ $# -gt 0 ]; do
	case "$1" in
	--perfgate) perfgate="$2"; shift 2 ;;
	--rounds) rounds="$2"; shift 2 ;;
	--writers) writers="$2"; shift 2 ;;
	--transports) transports="$2"; shift 2 ;;
	--kill-every) kill_every="$2"; shift 2 ;;
	--no-fleet) do_fleet=0; shift ;;
	--no-kill) do_kill=0; shift ;;
	--check) check=1; shift ;;
	*) echo "usage: $0 [--perfgate BIN] [--rounds N] [--writers LIST] [--transports LIST] [--kill-every K] [--no-fleet] [--no-kill] [--check]" >&2; exit 2 ;;
	esac
done
if [ -z "$perfgate" ]; then
	perfgate="$here/build-rel/perfgate"
	[ -x "$perfgate" ] || perfgate="$here/build/perfgate"
fi
perfgate="$(realpath "$perfgate")"
data="$here/tests/data/gate/base"
commit=0123456789abcdef0123456789abcdef01234567

work="$(mktemp -d "${TMPDIR:-/tmp}/history-fleet.XXXXXX")"
daemon_pid=""
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	if [ -n "$daemon_pid" ]; then kill "$daemon_pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT
export GIT_CONFIG_NOSYSTEM=1 HOME="$work" TMPDIR="$work/tmp"
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
unset BUILDKITE_COMMIT BUILDKITE_BUILD_URL BUILDKITE_BRANCH PERFGATE_GPU
mkdir -p "$TMPDIR"
failures=0

free_port() {
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start_daemon() {
	local port
	port=$(free_port)
	git daemon --reuseaddr --listen=127.0.0.1 --port="$port" --base-path="$work/served" \
		--export-all --enable=receive-pack --pid-file="$work/daemon.pid" --detach "$work/served"
	daemon_url="git://127.0.0.1:$port"
	# --detach returns before the daemon has written its pid file: wait for
	# both the file and an answer (a cat right away failed the script under load)
	for _ in $(seq 300); do
		if [ -z "$daemon_pid" ] && [ -s "$work/daemon.pid" ]; then
			daemon_pid=$(cat "$work/daemon.pid")
		fi
		if [ -n "$daemon_pid" ] && git ls-remote "$daemon_url/probe.git" >/dev/null 2>&1; then
			return 0
		fi
		sleep 0.1
	done
	echo "git daemon did not answer on port $port" >&2
	exit 3
}

# one line of the fleet table
fleet_cell() { # fleet_cell TRANSPORT WRITERS
	local transport=$1 n=$2 repo url r w
	local expected=0 failed=0 attempts_sum=0 attempts_max=0 slowest=0
	case "$transport" in
	path) repo="$work/fleet-$transport-$n.git"; url="$repo" ;;
	file) repo="$work/fleet-$transport-$n.git"; url="file://$repo" ;;
	daemon) repo="$work/served/fleet-$n.git"; url="$daemon_url/fleet-$n.git" ;;
	esac
	git init -q --bare "$repo"
	mkdir -p "$work/out"
	for r in $(seq "$rounds"); do
		local barrier="$work/barrier-$transport-$n-$r"
		mkdir "$barrier"
		for w in $(seq "$n"); do
			(
				start=$(date +%s.%N)
				rc=0
				PERFGATE_HISTORY_TEST_BARRIER="$barrier:$n" "$perfgate" baseline record "$data" \
					--repo "$url" --gpu H100 --commit "$commit" \
					--build-url "https://buildkite.example/fleet/$transport/$n/$r/$w" \
					>"$work/out/$r.$w.out" 2>"$work/out/$r.$w.err" || rc=$?
				end=$(date +%s.%N)
				echo "$rc $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')" >"$work/out/$r.$w.rc"
			) &
		done
		wait
	done
	expected=$((rounds * n))
	# every writer: its exit status, attempts, time
	local ok_urls="$work/ok-urls"
	: >"$ok_urls"
	for r in $(seq "$rounds"); do
		for w in $(seq "$n"); do
			read -r rc secs <"$work/out/$r.$w.rc"
			if [ "$rc" = 0 ]; then
				echo "https://buildkite.example/fleet/$transport/$n/$r/$w" >>"$ok_urls"
				a=$(sed -n 's/.*, \([0-9]*\) attempts\?)$/\1/p' "$work/out/$r.$w.out")
				attempts_sum=$((attempts_sum + a))
				[ "$a" -gt "$attempts_max" ] && attempts_max=$a
			else
				failed=$((failed + 1))
				echo "  $transport $n writers, round $r, writer $w: exit $rc: $(tail -1 "$work/out/$r.$w.err")" >>"$work/failures.txt"
			fi
			slowest=$(awk -v a="$secs" -v b="$slowest" 'BEGIN { print (a > b ? a : b) }')
		done
	done
	# what the history holds: every point file must have each build once
	local present=0 missing_ok=0 dups=0 files=0
	for f in $(git --git-dir="$repo" ls-tree -r --name-only refs/perfgate/history); do
		files=$((files + 1))
		git --git-dir="$repo" show "refs/perfgate/history:$f" |
			/usr/bin/python3 -c 'import json,sys; [print(json.loads(l)["build_url"]) for l in sys.stdin if l.strip()]' \
				>"$work/urls"
		local p d m
		p=$(sort -u "$work/urls" | wc -l)
		d=$(($(wc -l <"$work/urls") - p))
		m=$(sort -u "$work/urls" | comm -13 - <(sort -u "$ok_urls") | wc -l)
		[ "$files" = 1 ] && present=$p
		[ "$p" -lt "$present" ] && present=$p
		dups=$((dups + d))
		missing_ok=$((missing_ok + m))
	done
	local lost=$((expected - present))
	local ok=$((expected - failed))
	local mean
	mean=$(awk -v s="$attempts_sum" -v n="$ok" 'BEGIN { printf "%.2f", (n > 0 ? s / n : 0) }')
	printf "%-9s %7d %6d %8d %7d %5d %6d %6d %5d %9s %4d %8.1f\n" "$transport" "$n" "$rounds" \
		"$expected" "$present" "$lost" "$failed" "$missing_ok" "$dups" "$mean" "$attempts_max" "$slowest"
	if [ "$lost" != 0 ] || [ "$failed" != 0 ] || [ "$missing_ok" != 0 ] || [ "$dups" != 0 ]; then
		failures=$((failures + 1))
	fi
	rm -rf "$work/out" "$work"/barrier-*
}

fleet() {
	mkdir -p "$work/served"
	git init -q --bare "$work/served/probe.git"
	case " $transports " in *" daemon "*) start_daemon ;; esac
	echo "== simultaneous writers ($rounds rounds each; records of 4 points, one commit per record)"
	printf "%-9s %7s %6s %8s %7s %5s %6s %6s %5s %9s %4s %8s\n" transport writers rounds records \
		present lost failed silent dups attempts max "slowest"
	for t in $transports; do
		for n in $writers; do
			fleet_cell "$t" "$n"
		done
	done
	if [ -s "$work/failures.txt" ]; then
		echo "failed writers:"
		cat "$work/failures.txt"
	fi
	echo "(lost: records not in the history; failed: writers that exited non-zero;"
	echo " silent: writers that exited 0 but whose record is missing; dups: a build twice;"
	echo " attempts: mean and max per writer; slowest: seconds of the slowest writer)"
}

# ---- kills ----

file_changing_calls() { # the trace of one record -> "syscall ordinal path" lines
	/usr/bin/python3 - "$1" "$2" <<'PY'
import re, sys
trace, repo = sys.argv[1], sys.argv[2]
counts = {}
line_re = re.compile(r'^(?:\[pid\s+\d+\]\s+|\d+\s+)?([a-z0-9_]+)\((.*)')
for line in open(trace):
    m = line_re.match(line)
    if not m:
        continue
    name, args = m.group(1), m.group(2)
    counts[name] = counts.get(name, 0) + 1
    paths = re.findall(r'"([^"]*)"|<(/[^>]*)>', args)
    paths = [a or b for a, b in paths]
    in_repo = any(p.startswith(repo) for p in paths)
    if not in_repo:
        continue
    if name in ("openat", "open", "creat"):
        if not re.search(r'O_CREAT|O_WRONLY|O_RDWR|O_TRUNC', args):
            continue
    elif name in ("write", "pwrite64", "writev", "pwritev", "rename", "renameat", "renameat2",
                  "link", "linkat", "unlink", "unlinkat", "mkdir", "mkdirat", "rmdir", "fsync",
                  "fdatasync", "ftruncate", "truncate", "fchmod", "chmod", "fchmodat", "symlink",
                  "symlinkat", "utimensat"):
        pass
    else:
        continue
    print(name, counts[name], next(p for p in paths if p.startswith(repo)))
PY
}

kills() {
	local base="$work/base-for-kills.git" calls="$work/calls" n=0 i=0 next_ok=0 fsck_ok=0 check_ok=0
	local extended=0 recovered=0 slowest=0 killed=0
	local syscalls="openat,open,creat,write,pwrite64,writev,pwritev,rename,renameat,renameat2,link,linkat,unlink,unlinkat,mkdir,mkdirat,rmdir,fsync,fdatasync,ftruncate,truncate,fchmod,chmod,fchmodat,symlink,symlinkat,utimensat"
	git init -q --bare "$base"
	"$perfgate" baseline record "$data" --repo "$base" --gpu H100 --commit "$commit" \
		--build-url https://buildkite.example/kill/base >/dev/null
	# the record to kill, traced once to list its calls
	cp -a "$base" "$work/trace.git"
	# (a sanitizer build's leak check cannot run under ptrace)
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -qq -y -s 256 -e trace="$syscalls" -o "$work/trace.txt" \
		"$perfgate" baseline record "$data" --repo "$work/trace.git" --gpu H100 \
		--commit "$commit" --build-url https://buildkite.example/kill/victim >/dev/null
	file_changing_calls "$work/trace.txt" "$work/trace.git" >"$calls"
	n=$(wc -l <"$calls")
	echo
	if [ "$kill_every" = 1 ]; then
		echo "== a record killed at each of its $n file-changing system calls"
	else
		echo "== a record killed at every ${kill_every}th of its $n file-changing system calls"
	fi
	local by_call
	by_call=$(awk '{print $1}' "$calls" | sort | uniq -c | awk '{printf "%s%s %s", sep, $2, $1; sep=", "}')
	echo "calls: $by_call"
	while read -r name ordinal path; do
		i=$((i + 1))
		[ $(((i - 1) % kill_every)) = 0 ] || continue
		local repo="$work/kill-$i.git" rc=0
		rm -rf "$work/kill-"*.git
		cp -a "$base" "$repo"
		# (in a subshell: the shell's own "Killed" line goes to /dev/null too)
		(ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
			strace -f -qq -o /dev/null -e trace="$name" -e inject="$name:signal=KILL:when=$ordinal" \
			"$perfgate" baseline record "$data" --repo "$repo" --gpu H100 --commit "$commit" \
			--build-url https://buildkite.example/kill/victim
		# (a command after it: the subshell must not become strace itself)
		exit $?) >/dev/null 2>&1 || rc=$?
		[ "$rc" = 137 ] && killed=$((killed + 1))
		local start end secs out
		start=$(date +%s.%N)
		if out=$("$perfgate" baseline record "$data" --repo "$repo" --gpu H100 --commit "$commit" \
			--build-url https://buildkite.example/kill/next 2>&1); then
			next_ok=$((next_ok + 1))
			case "$out" in *"removed a stale lock"*) recovered=$((recovered + 1)) ;; esac
		else
			echo "  kill at $name #$ordinal ($path): the next record failed: $out"
		fi
		end=$(date +%s.%N)
		secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
		slowest=$(awk -v a="$secs" -v b="$slowest" 'BEGIN { print (a > b ? a : b) }')
		if git --git-dir="$repo" fsck --no-progress --no-dangling >/dev/null 2>&1; then
			fsck_ok=$((fsck_ok + 1))
		else
			echo "  kill at $name #$ordinal ($path): git fsck failed"
		fi
		if "$perfgate" baseline check --repo "$repo" >/dev/null 2>&1; then
			check_ok=$((check_ok + 1))
		else
			echo "  kill at $name #$ordinal ($path): baseline check: $("$perfgate" baseline check --repo "$repo" 2>&1 | tail -1)"
		fi
		# the base record and the next one are both there, each once
		local lines
		lines=$(git --git-dir="$repo" show refs/perfgate/history:H100/latency_llama8B_tp1.jsonl 2>/dev/null |
			grep -c -e '/kill/base"' -e '/kill/next"' || true)
		if [ "$lines" = 2 ]; then
			extended=$((extended + 1))
		else
			echo "  kill at $name #$ordinal ($path): the history has $lines of the 2 records it must have"
		fi
	done <"$calls"
	local tried=$(((n + kill_every - 1) / kill_every))
	printf "%-32s %s\n" "kill points tried" "$tried (killed: $killed)" \
		"next record succeeded" "$next_ok of $tried" \
		"history extended (base + next)" "$extended of $tried" \
		"stale lock removed by the next" "$recovered" \
		"git fsck clean" "$fsck_ok of $tried" \
		"perfgate baseline check clean" "$check_ok of $tried" \
		"slowest next record" "$slowest s"
	if [ "$next_ok" != "$tried" ] || [ "$extended" != "$tried" ] || [ "$fsck_ok" != "$tried" ] ||
		[ "$check_ok" != "$tried" ] || [ "$killed" != "$tried" ]; then
		failures=$((failures + 1))
	fi
}

echo "perfgate: $perfgate ($("$perfgate" --version 2>/dev/null | head -1))"
[ "$do_fleet" = 1 ] && fleet
[ "$do_kill" = 1 ] && kills
if [ "$check" = 1 ] && [ "$failures" != 0 ]; then
	echo "FAILED: $failures figures missed their target" >&2
	exit 1
fi
exit 0
