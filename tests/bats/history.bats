#!/usr/bin/env bats
# The run history in git: perfgate baseline record / history and compare
# --baseline git, on real repositories made with git(1) here: a main branch
# and a feature branch (a merge-base), a bare repository two writers race to
# update (directly, and pushing through git daemon on loopback).

load helpers
bats_require_minimum_version 1.5.0

# Deterministic commits, so ids (and golden files) do not change.
export GIT_AUTHOR_NAME=dev GIT_AUTHOR_EMAIL=dev@example.com
export GIT_COMMITTER_NAME=dev GIT_COMMITTER_EMAIL=dev@example.com
export GIT_CONFIG_NOSYSTEM=1 HOME="$BATS_TEST_TMPDIR"
unset BUILDKITE_PULL_REQUEST_BASE_BRANCH BUILDKITE_COMMIT BUILDKITE_BUILD_URL BUILDKITE_BRANCH PERFGATE_GPU

commit() { # commit NAME DAY
	echo "$1" >>file.txt
	git add file.txt
	GIT_AUTHOR_DATE="2026-11-$2T12:00:00Z" GIT_COMMITTER_DATE="2026-11-$2T12:00:00Z" \
		git commit -qm "$1"
	git rev-parse HEAD
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	# perfgate's temporary clones go here, not in a /tmp other tests share
	export TMPDIR="$BATS_TEST_TMPDIR/tmp"
	mkdir -p "$TMPDIR"
	cp -r "$PERFGATE_TESTS"/data/gate runs
	mkdir src && cd src
	git init -q -b main
	# main: m1..m5, then feature branches off m5, then main goes on (m6, m7)
	for i in 1 2 3 4 5; do commit "m$i" "0$i" >"../m$i"; done
	git checkout -q -b feature
	commit f1 10 >../f1
	git checkout -q -b early "$(cat ../m3)"
	commit e1 11 >../e1
	git checkout -q main
	commit m6 06 >../m6
	commit m7 07 >../m7
	git checkout -q feature
}

# record RUN COMMIT [more options]: one run of the main history
record() {
	local run=$1 sha=$2
	shift 2
	"$PERFGATE_BIN" baseline record "../runs/$run" --commit "$(cat "../$sha")" \
		--build-url "https://buildkite.example/b/$sha" "$@"
}

@test "record: one commit per run, one line per point, history in the current repository" {
	run record base m1
	assert_success
	assert_output --regexp "^recorded 4 test points of $(cut -c1-12 ../m1) for H100 in refs/perfgate/history \\(history commit [0-9a-f]{12}, 1 attempt\\)$"
	record same m2 >/dev/null
	[ "$(git rev-list --count refs/perfgate/history)" = 2 ]
	run git ls-tree -r --name-only refs/perfgate/history
	assert_output "H100/latency_llama8B_tp1.jsonl
H100/serving_llama8B_tp1_sharegpt_qps_4.jsonl
H100/serving_llama8B_tp1_sharegpt_qps_inf.jsonl
H100/throughput_llama8B_tp1.jsonl"
	run git show refs/perfgate/history:H100/serving_llama8B_tp1_sharegpt_qps_4.jsonl
	[ "${#lines[@]}" = 2 ]
	# each line: the commit, the build, and every repeat of every metric
	run /usr/bin/python3 -c '
import json, sys
rec = json.loads(sys.argv[1])
print(rec["commit"] == sys.argv[2], rec["build_url"], rec["gpu"], rec["qps"], rec["repeats"],
      len(rec["metrics"]["output_throughput"]))' "${lines[0]}" "$(cat ../m1)"
	assert_output "True https://buildkite.example/b/m1 1xH100 4 5 5"
	# the branch itself is untouched: HEAD still the feature commit
	[ "$(git rev-parse HEAD)" = "$(cat ../f1)" ]
}

@test "compare --baseline git: runs at or before the merge-base, noise-aware" {
	record base m1 >/dev/null
	record same m2 >/dev/null
	record flaky-confirm m3 >/dev/null
	record base m4 >/dev/null
	record same m5 >/dev/null
	# main regressed after feature branched off: not feature's fault
	record slow m6 >/dev/null
	record slow m7 >/dev/null

	run --separate-stderr "$PERFGATE_BIN" gate ../runs/same --baseline git -o out -q
	assert_success
	grep -q "^Baseline: git refs/perfgate/history, runs at or before $(cut -c1-12 ../m5) (merge-base of HEAD and main) (git) · 36 metrics compared, 17 gating · 8 insufficient-data · 28 unchanged$" out/comparison.md

	run "$PERFGATE_BIN" gate ../runs/slow --baseline git -o out -q
	assert_failure 1
	run /usr/bin/python3 -c '
import json
v = json.load(open("out/verdict.json"))
r = [r for r in v["rows"] if r["metric"] == "output_throughput" and r["point"].endswith("_inf")][0]
print(r["verdict"], r["n_baseline"], r["n_current"], round(r["baseline"]), v["baseline"]["kind"])'
	assert_output "regressed 5 5 6045 git"

	# on main itself the merge-base is HEAD: the slow runs are the baseline's
	git checkout -q main
	run "$PERFGATE_BIN" baseline show --gpu H100 --baseline git
	assert_success
	assert_line "  from git history: 7 runs, 2026-11-22 to 2026-11-22"
}

@test "evidence against the history: the interval, the basis, a trend chart per regression" {
	record base m1 >/dev/null
	record same m2 >/dev/null
	record flaky-confirm m3 >/dev/null
	record base m4 >/dev/null
	record same m5 >/dev/null
	run "$PERFGATE_BIN" gate ../runs/slow --baseline git -o out -q
	assert_failure 1
	golden out/comparison.md gate/history-evidence.md
	# each evidence entry links its chart, and the chart is there
	run grep -o '](evidence/[^)]*)' out/comparison.md
	assert_output "](evidence/serving_llama8B_tp1_sharegpt_qps_inf-median_ttft_ms.svg)
](evidence/serving_llama8B_tp1_sharegpt_qps_inf-output_throughput.svg)
](evidence/serving_llama8B_tp1_sharegpt_qps_inf-median_tpot_ms.svg)"
	golden out/evidence/serving_llama8B_tp1_sharegpt_qps_inf-output_throughput.svg \
		gate/history-evidence-output_throughput.svg
	# a well-formed SVG: the window's five runs, and four paths: the grid,
	# the runs' line, the run's interval's bar and its diamond
	run /usr/bin/python3 -c '
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
print(len(root.findall(f".//{ns}circle")), len([p for p in root.iter(f"{ns}path")]),
      [t.text for t in root.iter(f"{ns}text") if t.text and "window" in t.text])' \
		out/evidence/serving_llama8B_tp1_sharegpt_qps_inf-output_throughput.svg
	assert_output "5 4 ['baseline window: 5 runs', 'the baseline window: runs of main, oldest to newest · the bar: 95% interval of the change']"
	# verdict.json: what each gated row rests on, and its interval, as the
	# evidence says (pandas reads the rows as before)
	/usr/bin/python3 -c '
import json, sys
v = json.load(open("out/verdict.json"))
rows = [r for r in v["rows"] if r["verdict"] == "regressed" and r["gate"]]
json.dump(rows, sys.stdout, indent=2)
print()' >rows.json
	golden rows.json gate/history-evidence-rows.json
	run /usr/bin/python3 -c '
import json, pandas as pd
v = json.load(open("out/verdict.json"))
df = pd.DataFrame(v["rows"])
b = pd.json_normalize(v["rows"])
r = df[(df.metric == "output_throughput") & df.point.str.endswith("_inf")].iloc[0]
# the interval is the t test inverted: on the log scale the change +- t(2.5%)
# x sd, where sd is what the test divided by (t(p) = |change| / sd, on
# 0.9 x (5 - 1) degrees of freedom: compare_step.c)
from math import log1p, expm1
from scipy.stats import t
e, dof = log1p(r.change), 0.9 * (r.n_baseline - 1)
sd = abs(e) / t.isf(r.p_value, dof)
lo, hi = expm1(e - t.isf(0.025, dof) * sd), expm1(e + t.isf(0.025, dof) * sd)
print(r.method, abs(r.ci_low - lo) < 1e-6 * abs(lo), abs(r.ci_high - hi) < 1e-6 * abs(hi),
      b["basis.kind"].dropna().unique().tolist(),
      b["basis.runs"].dropna().unique().tolist(), r.basis["commits"][0] == open("../m1").read().strip())'
	assert_success
	assert_output "history True True ['history'] [5] True"
}

@test "too little history: insufficient-data, a pass with a warning" {
	record base m1 >/dev/null
	record same m2 >/dev/null
	record base m3 >/dev/null
	record slow m4 >/dev/null
	# a record of a commit this repository does not have is not used
	"$PERFGATE_BIN" baseline record ../runs/same --commit 0123456789012345678901234567890123456789 >/dev/null
	git checkout -q early # branched at m3: m1..m3 usable
	run "$PERFGATE_BIN" gate ../runs/slow --baseline git -o out -q
	assert_success
	grep -q '^\*\*perfgate: PASS with warnings\*\* — H100: no regressions in 4 tests, 4 with warnings$' out/comparison.md
	grep -q ' · 1 noisy · 35 insufficient-data$' out/comparison.md
	grep -q '| 3 runs of this metric in the history, 5 needed |' out/comparison.md
	# with a policy that asks for 3 runs, the same history is enough
	"$PERFGATE_BIN" baseline update th --from ../runs/base 2>/dev/null
	sed -i 's/^  min_history: 5$/  min_history: 3/' th/H100.yml
	run "$PERFGATE_BIN" gate ../runs/slow --baseline git -t th -o out -q
	assert_failure 1
	# the base branch can be named, also through Buildkite's variable
	run --separate-stderr "$PERFGATE_BIN" gate ../runs/slow --baseline git -o out -q --base nope
	assert_failure 3
	[ "$stderr" = "perfgate gate: base branch 'nope' not found (neither origin/nope nor a local branch): fetch it or pass --base" ]
	BUILDKITE_PULL_REQUEST_BASE_BRANCH=nope run "$PERFGATE_BIN" gate ../runs/slow --baseline git -o out -q
	assert_failure 3
}

@test "baseline history prints a trend per metric" {
	record base m1 >/dev/null
	record same m2 >/dev/null
	record slow m3 >/dev/null
	record slow-confirm m4 >/dev/null
	run --separate-stderr "$PERFGATE_BIN" baseline history --gpu H100
	assert_success
	echo "$output" >history.txt
	golden history.txt gate/history.txt
	run "$PERFGATE_BIN" baseline history --gpu H100 --point serving_llama8B_tp1_sharegpt_qps_inf -m output_throughput --last 2
	assert_success
	assert_line --index 1 --regexp '^  Output token throughput \(tok/s\) +5489.96 -> 5500.96 +\+0.2%  ▁█  median 5495.46, spread 0.1%$'
	run --separate-stderr "$PERFGATE_BIN" baseline history --gpu H100 -m output_throughtput
	assert_failure 2
	[ "$stderr" = "perfgate baseline history: option '--metric': unknown metric 'output_throughtput' (did you mean 'output_throughput'?)" ]
	run --separate-stderr "$PERFGATE_BIN" baseline history --gpu A100
	assert_failure 3
	[ "$stderr" = "perfgate baseline history: no recorded runs for A100 in refs/perfgate/history" ]
}

# Two perfgate processes append to one history at the same moment: each
# reads the same tip (the barrier holds both until both have), the slower
# one is refused, fetches, re-applies, and both records survive.
race() { # race REPO
	local barrier
	barrier=$(mktemp -d "$BATS_TEST_TMPDIR/barrier.XXXXXX")
	PERFGATE_HISTORY_TEST_BARRIER="$barrier:2" record base m1 --repo "$1" >a.out 2>a.err &
	local a=$!
	PERFGATE_HISTORY_TEST_BARRIER="$barrier:2" record same m2 --repo "$1" >b.out 2>b.err &
	local b=$!
	wait $a
	wait $b
	cat a.out b.out
}

@test "two writers race on a bare repository: both records survive" {
	git init -q --bare ../hist.git
	record slow m3 --repo ../hist.git >/dev/null # the ref exists: a compare-and-swap race
	run race ../hist.git
	assert_success
	assert_output --partial "1 attempt)"
	assert_output --partial "2 attempts)"
	run git --git-dir=../hist.git show refs/perfgate/history:H100/latency_llama8B_tp1.jsonl
	[ "${#lines[@]}" = 3 ]
	[ "$(git --git-dir=../hist.git rev-list --count refs/perfgate/history)" = 3 ]
	# and the history reads back through the same path
	run "$PERFGATE_BIN" baseline history --gpu H100 --repo ../hist.git --point latency_llama8B_tp1 -m median_latency_ms
	assert_success
	assert_line --index 0 --partial "latency_llama8B_tp1 (latency, 1xH100): 3 runs"
}

teardown() {
	if [ -f "$BATS_TEST_TMPDIR/daemon.pid" ]; then
		kill "$(cat "$BATS_TEST_TMPDIR/daemon.pid")" 2>/dev/null || true
	fi
}

@test "two writers race to push to a remote: rejected push, fetch, re-apply" {
	git init -q --bare ../served.git
	port=$(free_port)
	git daemon --reuseaddr --listen=127.0.0.1 --port="$port" --base-path="$BATS_TEST_TMPDIR" \
		--export-all --enable=receive-pack --pid-file="$BATS_TEST_TMPDIR/daemon.pid" \
		--detach "$BATS_TEST_TMPDIR"
	url="git://127.0.0.1:$port/served.git"
	# until the daemon answers (a minute at most on a slow machine)
	for _ in $(seq 600); do
		git ls-remote "$url" >/dev/null 2>&1 && break
		sleep 0.1
	done
	git ls-remote "$url" >/dev/null
	run record slow m3 --repo "$url"
	assert_success
	assert_output --partial "1 attempt)"
	run race "$url"
	assert_success
	assert_output --partial "1 attempt)"
	assert_output --partial "2 attempts)"
	[ "$(git --git-dir=../served.git rev-list --count refs/perfgate/history)" = 3 ]
	run git --git-dir=../served.git show refs/perfgate/history:H100/serving_llama8B_tp1_sharegpt_qps_inf.jsonl
	[ "${#lines[@]}" = 3 ]
	# compare reads a remote history too (the source commits are local)
	record base m4 --repo "$url" >/dev/null
	record same m5 --repo "$url" >/dev/null
	run "$PERFGATE_BIN" compare ../runs/same --baseline git --repo "$url" -o out -q
	assert_success
	grep -q "^Baseline: $url refs/perfgate/history, runs at or before $(cut -c1-12 ../m5)" out/comparison.md
	# no temporary clone is left behind
	[ -z "$(find "$TMPDIR" -maxdepth 1 -name 'perfgate-history-*')" ]
}

@test "an unreachable history: exit 3, and no password in the message" {
	port=$(free_port) # nothing listens there
	PERFGATE_GIT_TOKEN=tok-9f8e7d6c5b run --separate-stderr record base m1 --repo "http://ci:hunter2secret@127.0.0.1:$port/perf.git"
	assert_failure 3
	[[ "$stderr" == "perfgate baseline record: http://ci:***@127.0.0.1:$port/perf.git: fetching the history: "* ]]
	[[ "$stderr" != *hunter2secret* ]]
	[[ "$stderr" != *tok-9f8e7d6c5b* ]]
	# a token given as the user part, as GitHub's https URLs take it
	run --separate-stderr record base m1 --repo "http://ghp_tokenasuser42@127.0.0.1:$port/perf.git"
	assert_failure 3
	[[ "$stderr" == "perfgate baseline record: http://***@127.0.0.1:$port/perf.git: fetching the history: "* ]]
	[[ "$stderr" != *ghp_tokenasuser42* ]]
	run --separate-stderr "$PERFGATE_BIN" baseline record ../runs/base --repo ../nowhere --commit "$(cat ../m1)"
	assert_failure 3
	[[ "$stderr" == "perfgate baseline record: ../nowhere: opening the repository: "* ]]
}

@test "--baseline git outside a checkout: one line saying where to run it, exit 2" {
	local out="$BATS_TEST_TMPDIR/elsewhere" why
	mkdir -p "$out" && cd "$out"
	cp -r ../runs .
	why="not inside a git checkout: the runs are placed against the project's commits (HEAD, the merge-base); run perfgate in the project's checkout, or pass --repo"
	for cmd in "gate runs/base" "compare runs/base" "baseline show"; do
		# shellcheck disable=SC2086 # the command's words
		run --separate-stderr "$PERFGATE_BIN" $cmd --gpu H100 -b git
		assert_failure 2
		[ "$stderr" = "perfgate ${cmd% runs/base}: $why" ]
	done
	run --separate-stderr "$PERFGATE_BIN" baseline history --gpu H100
	assert_failure 2
	[ "$stderr" = "perfgate baseline history: not inside a git checkout: the history (refs/perfgate/history) is read from the repository around the current directory; run perfgate in the project's checkout, or pass --repo" ]
	# --repo: a checkout with the history, the same comparison from anywhere
	(cd ../src && record base m1 >/dev/null)
	run --separate-stderr "$PERFGATE_BIN" compare runs/base --gpu H100 -b git --repo ../src -q
	assert_success
}

@test "the measured commit: a name is resolved, the results' by default, nonsense refused" {
	run "$PERFGATE_BIN" baseline record ../runs/base --commit main
	assert_success
	assert_output --partial "of $(cut -c1-12 ../m7) for H100"
	# without --commit: the commit the results name (HEAD when they do not)
	run "$PERFGATE_BIN" baseline record ../runs/base
	assert_success
	assert_output --partial "of 0123456789ab for H100"
	BUILDKITE_COMMIT="$(cat ../m2)" run "$PERFGATE_BIN" baseline record ../runs/base
	assert_output --partial "of $(cut -c1-12 ../m2) for H100"
	run --separate-stderr "$PERFGATE_BIN" baseline record ../runs/base --commit nope
	assert_failure 2
	[ "$stderr" = "perfgate baseline record: --commit 'nope' is not a commit of this repository (give the full id)" ]
	[ "$(git rev-list --count refs/perfgate/history)" = 3 ]
}

@test "baseline changes: a step on main with the commits it began between; history marks it" {
	for i in 1 2 3; do record base "m$i" >/dev/null; done
	for i in 4 5 6; do record slow "m$i" >/dev/null; done
	local range
	range="$(cut -c1-12 ../m3)..$(cut -c1-12 ../m4)"
	run --separate-stderr "$PERFGATE_BIN" baseline changes --gpu H100
	assert_success
	assert_line --index 0 "**perfgate: changes on main for H100** — 6 jobs, 2026-11-22 to 2026-11-22: 7 steps or creep, 4 worse in a gating metric"
	# worse changes of gating metrics first, largest first
	assert_line --index 3 "| serving_llama8B_tp1_sharegpt_qps_inf | P99 TTFT (ms) | **step: 25.1% worse** | 2026-11-22 | \`${range}\` |"
	assert_line --index 5 "| serving_llama8B_tp1_sharegpt_qps_inf | Output token throughput (tok/s) | **step: 9.2% worse** | 2026-11-22 | \`${range}\` |"
	assert_line --index 7 "| serving_llama8B_tp1_sharegpt_qps_inf | Mean TTFT (ms) | step: 12.1% worse | 2026-11-22 | \`${range}\` |"

	# a nightly fails on a worse change that began in its last N jobs
	run "$PERFGATE_BIN" baseline changes --gpu H100 --fail-within 3 --json changes.json -m output_throughput
	assert_failure 1
	run /usr/bin/python3 -c '
import json, sys
c = json.load(open("changes.json"))["changes"]
print(len(c), c[0]["point"], c[0]["kind"], c[0]["worse"], c[0]["gates"], round(c[0]["shift"], 3),
      c[0]["first_commit"] == sys.argv[1], c[0]["last_commit"] == sys.argv[2])' "$(cat ../m3)" "$(cat ../m4)"
	assert_output "1 serving_llama8B_tp1_sharegpt_qps_inf step True True 0.092 True True"
	run "$PERFGATE_BIN" baseline changes --gpu H100 --fail-within 2
	assert_success

	# the history's sparkline marks where the level changed, and says so
	run "$PERFGATE_BIN" baseline history --gpu H100 --point serving_llama8B_tp1_sharegpt_qps_inf -m output_throughput
	assert_success
	assert_line --index 1 --regexp '^  Output token throughput \(tok/s\) +6045 -> 5489.96 +-9\.2%  ███\|▁▁▁  median 5767.48, spread 7\.1%$'
	assert_line --index 2 --regexp "^ +step: 9\.2% worse, between $(cut -c1-12 ../m3) and $(cut -c1-12 ../m4) \(2026-11-22\)$"

	# a PR after the step is judged against the level since it (its 3
	# runs), with the spread measured before it too: the slow run is
	# main's level now, and passes
	git checkout -q main
	run "$PERFGATE_BIN" gate ../runs/slow --baseline git -o out -q
	assert_success
	grep -q '^\*\*perfgate: PASS\*\* — H100: no regressions in 4 tests$' out/comparison.md
	run /usr/bin/python3 -c '
import json
r = [r for r in json.load(open("out/verdict.json"))["rows"]
     if r["metric"] == "output_throughput" and r["point"].endswith("qps_inf")][0]
print(r["verdict"], r["basis"]["runs"], round(r["baseline"], 2))'
	assert_output "unchanged 3 5489.96"
}
