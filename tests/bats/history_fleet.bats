#!/usr/bin/env bats
# The git history under a fleet and against damage: racing writers on a
# plain path, a file:// URL and a real git server (git daemon with
# receive-pack, on loopback); a lock left by a killed writer; a retried
# build; lines perfgate cannot read; a shallow checkout; incomplete points;
# --repo outside a checkout; perfgate baseline check and repair.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
bats_require_minimum_version 1.5.0

export GIT_AUTHOR_NAME=dev GIT_AUTHOR_EMAIL=dev@example.com
export GIT_COMMITTER_NAME=dev GIT_COMMITTER_EMAIL=dev@example.com
export GIT_CONFIG_NOSYSTEM=1 HOME="$BATS_TEST_TMPDIR"
unset BUILDKITE_PULL_REQUEST_BASE_BRANCH BUILDKITE_COMMIT BUILDKITE_BUILD_URL BUILDKITE_BRANCH PERFGATE_GPU

SHA=0123456789abcdef0123456789abcdef01234567

setup() {
	cd "$BATS_TEST_TMPDIR"
	# perfgate's temporary clones go here, not in a /tmp other tests share
	export TMPDIR="$BATS_TEST_TMPDIR/tmp"
	mkdir -p "$TMPDIR"
	cp -r "$PERFGATE_TESTS"/data/gate runs
}

teardown() {
	if [ -f "$BATS_TEST_TMPDIR/daemon.pid" ]; then
		kill "$(cat "$BATS_TEST_TMPDIR/daemon.pid")" 2>/dev/null || true
	fi
}

free_port() {
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# rec REPO BUILD [options]: record runs/base as build BUILD
rec() {
	local repo=$1 build=$2
	shift 2
	"$PERFGATE_BIN" baseline record runs/base --repo "$repo" --gpu H100 --commit "$SHA" \
		--build-url "https://buildkite.example/b/$build" "$@"
}

# race REPO N: N writers at once, each told to wait for the others after
# reading the tip, so all of them collide; prints "exit attempts" per writer
race() {
	local repo=$1 n=$2 barrier
	barrier=$(mktemp -d "$BATS_TEST_TMPDIR/barrier.XXXXXX")
	for i in $(seq "$n"); do
		(
			rc=0
			PERFGATE_HISTORY_TEST_BARRIER="$barrier:$n" rec "$repo" "race-$i" --timeout 120 \
				>"out.$i" 2>"err.$i" || rc=$?
			echo "$rc $(sed -n 's/.*, \([0-9]*\) attempts\?)$/\1/p' "out.$i")" >"rc.$i"
		) &
	done
	wait
	cat rc.*
	rm -f rc.* out.* err.*
}

# builds GITDIR: the build URLs of one point's history, one per line
builds() {
	git --git-dir="$1" show refs/perfgate/history:H100/latency_llama8B_tp1.jsonl |
		/usr/bin/python3 -c 'import json,sys; [print(json.loads(l)["build_url"]) for l in sys.stdin if l.strip()]'
}

check_race() { # check_race GITDIR N OUTPUT
	local gitdir=$1 n=$2 output=$3
	# every writer succeeded, and someone had to try again
	[ "$(grep -c '^0 ' <<<"$output")" = "$n" ]
	[ "$(awk '$2 > 1' <<<"$output" | wc -l)" -ge 1 ]
	# every record is there, once
	run builds "$gitdir"
	[ "${#lines[@]}" = "$n" ]
	[ "$(printf '%s\n' "${lines[@]}" | sort -u | wc -l)" = "$n" ]
}

@test "8 writers on a plain path: no record lost" {
	git init -q --bare h.git
	run race h.git 8
	check_race h.git 8 "$output"
}

@test "8 writers on a file:// URL: handled like a path, no record lost" {
	git init -q --bare h.git
	run race "file://$BATS_TEST_TMPDIR/h.git" 8
	check_race h.git 8 "$output"
	# no temporary clone was made for it
	[ -z "$(find "$TMPDIR" -maxdepth 1 -name 'perfgate-history-*')" ]
}

@test "8 writers pushing to a git server: no record lost" {
	mkdir served
	git init -q --bare served/h.git
	port=$(free_port)
	git daemon --reuseaddr --listen=127.0.0.1 --port="$port" --base-path="$BATS_TEST_TMPDIR/served" \
		--export-all --enable=receive-pack --pid-file="$BATS_TEST_TMPDIR/daemon.pid" \
		--detach "$BATS_TEST_TMPDIR/served"
	url="git://127.0.0.1:$port/h.git"
	for _ in $(seq 600); do
		git ls-remote "$url" >/dev/null 2>&1 && break
		sleep 0.1
	done
	run race "$url" 8
	check_race served/h.git 8 "$output"
}

@test "a lock left by a killed writer is removed, with its age; a held one is not" {
	git init -q --bare h.git
	rec h.git first >/dev/null
	: >h.git/refs/perfgate/history.lock
	touch -d '-40 seconds' h.git/refs/perfgate/history.lock
	run "$PERFGATE_BIN" baseline check --repo h.git
	assert_failure 3
	assert_line --regexp '^refs/perfgate/history\.lock: stale lock: 4[0-9] s old and no perfgate writer holds it: .* \(repair removes it\)$'
	run --separate-stderr rec h.git second
	assert_success
	[[ "$stderr" =~ ^"perfgate baseline record: removed a stale lock, refs/perfgate/history.lock in h.git, 4"[0-9]" s old: the writer that made it was stopped before it finished"$ ]]
	[ ! -e h.git/refs/perfgate/history.lock ]
	run builds h.git
	[ "${#lines[@]}" = 2 ]

	# a writer holds the guard (alive, inside its update): the lock stays,
	# and the record gives up at its deadline naming the lock and its age
	: >h.git/refs/perfgate/history.lock
	touch -d '-40 seconds' h.git/refs/perfgate/history.lock
	exec {guard}>h.git/perfgate-history.flock
	flock -s "$guard"
	run --separate-stderr rec h.git third --timeout 1
	exec {guard}>&-
	assert_failure 3
	[[ "$stderr" == "perfgate baseline record: h.git: refs/perfgate/history: still locked after "*" attempts in "*" s: refs/perfgate/history.lock is 4"[0-9]" s old and another program holds it"* ]]
	[ -e h.git/refs/perfgate/history.lock ]
	# the writer is gone: the repair removes it
	run --separate-stderr "$PERFGATE_BIN" baseline repair --repo h.git
	assert_success
	[[ "$stderr" == *"removed a stale lock, refs/perfgate/history.lock in h.git"* ]]
	[ ! -e h.git/refs/perfgate/history.lock ]
}

@test "a retried build replaces its record; the gate counts a build once" {
	git init -q -b main src
	cd src
	git commit -q --allow-empty -m m1
	sha=$(git rev-parse HEAD)
	for b in 1 2 3; do
		"$PERFGATE_BIN" baseline record ../runs/base --commit "$sha" --build-url "https://bk/b/$b" >/dev/null
	done
	# build 3 retried twice
	run "$PERFGATE_BIN" baseline record ../runs/slow --commit "$sha" --build-url https://bk/b/3
	assert_success
	assert_output --regexp "^recorded 4 test points of [0-9a-f]{12} for H100 in refs/perfgate/history, replacing 4 earlier records of this build \\(history commit [0-9a-f]{12}, 1 attempt\\)$"
	"$PERFGATE_BIN" baseline record ../runs/base --commit "$sha" --build-url https://bk/b/3 >/dev/null
	run git show refs/perfgate/history:H100/latency_llama8B_tp1.jsonl
	[ "${#lines[@]}" = 3 ]
	run "$PERFGATE_BIN" baseline show --gpu H100 --baseline git
	assert_success
	assert_line "  from git history: 3 runs, 2026-11-22 to 2026-11-22"

	# a history written before (the same build twice): counted once, and
	# listed by check, dropped by repair (the last record stays)
	git show refs/perfgate/history:H100/latency_llama8B_tp1.jsonl >f
	sed -n 1p f >>f
	blob=$(git hash-object -w f)
	git read-tree refs/perfgate/history
	git update-index --cacheinfo "100644,$blob,H100/latency_llama8B_tp1.jsonl"
	commit=$(git commit-tree "$(git write-tree)" -p refs/perfgate/history -m dup)
	git update-ref refs/perfgate/history "$commit"
	git read-tree HEAD
	run git show refs/perfgate/history:H100/latency_llama8B_tp1.jsonl
	[ "${#lines[@]}" = 4 ]
	run "$PERFGATE_BIN" baseline show --gpu H100 --baseline git
	assert_success
	[ "$(grep -c '^  from git history: 3 runs, ' <<<"$output")" = 4 ]
	run "$PERFGATE_BIN" baseline check
	assert_failure 3
	assert_line "H100/latency_llama8B_tp1.jsonl:1: duplicate: build https://bk/b/1 is recorded again on line 4 (repair drops it)"
	run "$PERFGATE_BIN" baseline repair
	assert_success
	assert_line "H100/latency_llama8B_tp1.jsonl:1: duplicate: build https://bk/b/1 is recorded again on line 4 (dropped)"
	assert_line --regexp "^repaired refs/perfgate/history: dropped 1 line \\(history commit [0-9a-f]{12}, 1 attempt; the lines are in ${commit:0:12}\\)$"
	run "$PERFGATE_BIN" baseline check
	assert_success
	assert_line "no problems"
}

# put TEXT as H100/latency_llama8B_tp1.jsonl in the history of the repository here
put_line() {
	git show refs/perfgate/history:H100/latency_llama8B_tp1.jsonl >f
	printf '%s\n' "$1" >>f
	blob=$(git hash-object -w f)
	git read-tree refs/perfgate/history
	git update-index --cacheinfo "100644,$blob,H100/latency_llama8B_tp1.jsonl"
	git update-ref refs/perfgate/history "$(git commit-tree "$(git write-tree)" -p refs/perfgate/history -m edit)"
	git read-tree HEAD
}

@test "an unreadable line: exit 3 naming file and line, for the gate and a record; repair drops it" {
	git init -q -b main src
	cd src
	git commit -q --allow-empty -m m1
	for b in 1 2 3 4 5; do
		"$PERFGATE_BIN" baseline record ../runs/base --commit HEAD --build-url "https://bk/b/$b" >/dev/null
	done
	put_line '{"format": 1, "commit": "01234'
	run --separate-stderr "$PERFGATE_BIN" gate ../runs/same --baseline git -o out -q
	assert_failure 3
	[ "$stderr" = "perfgate gate: refs/perfgate/history:H100/latency_llama8B_tp1.jsonl:6: unreadable history line: premature end of input near '\"01234' ('perfgate baseline check' lists such lines, 'perfgate baseline repair' drops them)" ]
	run --separate-stderr "$PERFGATE_BIN" baseline record ../runs/base --commit HEAD --build-url https://bk/b/6
	assert_failure 3
	[[ "$stderr" == "perfgate baseline record: the current repository: refs/perfgate/history:H100/latency_llama8B_tp1.jsonl:6: unreadable history line (not JSON: "*"): no record is added after it; 'perfgate baseline repair' drops it" ]]
	run "$PERFGATE_BIN" baseline repair
	assert_success
	assert_line --regexp '^H100/latency_llama8B_tp1\.jsonl:6: unreadable: not JSON: .* \(dropped\)$'
	assert_line '    {"format": 1, "commit": "01234'
	run "$PERFGATE_BIN" gate ../runs/same --baseline git -o out -q
	assert_success
}

@test "a line in a newer format: an error naming it, kept by repair; records go on" {
	git init -q -b main src
	cd src
	git commit -q --allow-empty -m m1
	"$PERFGATE_BIN" baseline record ../runs/base --commit HEAD --build-url https://bk/b/1 >/dev/null
	put_line '{"format": 2, "commit": "x", "suite": "latency", "metrics": {"median_latency_ms": {"p50": 1}}}'
	run --separate-stderr "$PERFGATE_BIN" baseline show --gpu H100 --baseline git
	assert_failure 3
	[ "$stderr" = "perfgate baseline show: refs/perfgate/history:H100/latency_llama8B_tp1.jsonl:2: a newer-format history line: history format 2, written by a newer perfgate (this one reads format 1) (upgrade perfgate to read it)" ]
	run "$PERFGATE_BIN" baseline record ../runs/base --commit HEAD --build-url https://bk/b/2
	assert_success
	run --separate-stderr "$PERFGATE_BIN" baseline repair
	assert_failure 3
	assert_line "H100/latency_llama8B_tp1.jsonl:2: newer format: history format 2, written by a newer perfgate (this one reads format 1) (kept)"
	assert_line "nothing to drop"
	[ "$stderr" = "perfgate baseline repair: 1 problem left: 1 line in a newer format: upgrade perfgate to read it" ]
	run git show refs/perfgate/history:H100/latency_llama8B_tp1.jsonl
	[ "${#lines[@]}" = 3 ]
}

@test "a shallow checkout: exit 3 saying so, not an empty history" {
	git init -q -b main src
	cd src
	for i in 1 2 3; do git commit -q --allow-empty -m "m$i"; done
	for b in 1 2 3; do
		"$PERFGATE_BIN" baseline record ../runs/base --commit "HEAD~$((b - 1))" --build-url "https://bk/b/$b" >/dev/null
	done
	cd ..
	git clone -q --depth 1 "file://$BATS_TEST_TMPDIR/src" shallow
	git -C shallow fetch -q origin refs/perfgate/history:refs/perfgate/history
	cd shallow
	run --separate-stderr "$PERFGATE_BIN" gate ../runs/same --baseline git -o out -q
	assert_failure 3
	[[ "$stderr" == "perfgate gate: . is a shallow checkout: commit "*" of a run in refs/perfgate/history:H100/"*".jsonl (2026-11-22) is not in it, so the history cannot be placed before or after the merge-base; fetch the full history (git fetch --unshallow; on Buildkite, leave --depth out of BUILDKITE_GIT_CLONE_FLAGS)" ]]
	git fetch -q --unshallow
	run "$PERFGATE_BIN" baseline show --gpu H100 --baseline git
	assert_success
	assert_line "  from git history: 3 runs, 2026-11-22 to 2026-11-22"
}

@test "incomplete points are left out of the history, and said" {
	git init -q --bare h.git
	cp -r runs/base partial
	/usr/bin/python3 - partial/serving_llama8B_tp1_sharegpt_qps_4.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["completed"], r["failed"] = r["num_prompts"] - 32, 32
json.dump(r, open(sys.argv[1], "w"))
PY
	run --separate-stderr "$PERFGATE_BIN" baseline record partial --repo h.git --gpu H100 --commit "$SHA"
	assert_success
	assert_output --partial "recorded 3 test points"
	[ "$stderr" = "perfgate baseline record: left out serving_llama8B_tp1_sharegpt_qps_4: incomplete: 32 of $(/usr/bin/python3 -c 'import json; print(json.load(open("runs/base/serving_llama8B_tp1_sharegpt_qps_4.json"))["num_prompts"])') requests failed" ]
	run git --git-dir=h.git ls-tree -r --name-only refs/perfgate/history
	refute_output --partial "qps_4"
	# nor do they become the baselines of a thresholds file
	run --separate-stderr "$PERFGATE_BIN" baseline update th --from partial --gpu H100
	assert_success
	[[ "$stderr" == "perfgate baseline update: left out serving_llama8B_tp1_sharegpt_qps_4 (incomplete: 32 of "*" requests failed, partial)"* ]]
	run grep -c "^  serving_llama8B_tp1_sharegpt_qps_4:" th/H100.yml
	assert_output 0
}

@test "--repo decides the repository for every git question, outside a checkout too" {
	git init -q -b main proj
	git -C proj commit -q --allow-empty -m m1
	head=$(git -C proj rev-parse HEAD)
	mkdir elsewhere
	cd elsewhere
	# no --commit, results that name none, no checkout here: the clone's HEAD
	for b in 1 2 3 4 5; do
		"$PERFGATE_BIN" baseline record ../runs/base --repo ../proj --commit HEAD --build-url "https://bk/b/$b" >/dev/null
	done
	run git -C ../proj show refs/perfgate/history:H100/latency_llama8B_tp1.jsonl
	[[ "${lines[0]}" == *"\"commit\": \"$head\""* ]]
	run "$PERFGATE_BIN" baseline show --gpu H100 --baseline git --repo ../proj
	assert_success
	assert_line "  from git history: 5 runs, 2026-11-22 to 2026-11-22"
	run "$PERFGATE_BIN" gate ../runs/same --baseline git --repo ../proj -o out -q
	assert_success
	# a repository that holds only the history leaves the commits to the checkout
	git init -q --bare ../only-history.git
	run --separate-stderr "$PERFGATE_BIN" baseline record ../runs/base --repo ../only-history.git --commit HEAD
	assert_failure 2
	[ "$stderr" = "perfgate baseline record: --commit 'HEAD' is not a commit of this repository (give the full id)" ]
}
