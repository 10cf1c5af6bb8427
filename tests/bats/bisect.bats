#!/usr/bin/env bats
# perfgate bisect --local end to end (docs/bisect.md): a real git
# repository of 16 commits, one of which adds a `slowdown` file that the
# mock engine started for a commit reads (--slowdown from `git show
# {commit}:slowdown`), probes as A/B runs of two mock servers on loopback.

load helpers
load procs

bats_require_minimum_version 1.5.0

setup_file() {
	# the repository, made once: each test works on a copy
	cd "${BATS_FILE_TMPDIR}" && make_repo
}

setup() {
	work_setup
	mark_setup pgbis
	unset PERFGATE_GPU
	cp -r "${BATS_FILE_TMPDIR}/repo" repo
	# one serving point, small and fast: a block is a server start and 6
	# requests of 8 tokens
	cat >suite.yml <<EOF
serving:
  - name: serving_bisect
    model: ${MARK}
    server:
      command: perfgate mock-server --port {port} --model {model}
      ready: /health
      ready_timeout: 10
      stop_timeout: 3
    qps: inf
    max_concurrency: 1
    prompts_per_concurrency: 6
    warmup: 0
    dataset: {name: random, input_len: 16, output_len: 8}
EOF
	# a commit's engine: the mock slowed down by the commit's flag file; a
	# commit with a `nostart` file exits at once; FLAKY (when it exists)
	# makes the next start fail once, as a lost GPU would
	SERVER='if [ -e '"${WORK}"'/FLAKY ]; then rm -f '"${WORK}"'/FLAKY; exit 1; fi; '
	SERVER+='if git -C '"${WORK}"'/repo cat-file -e {commit}:nostart 2>/dev/null; then exit 1; fi; '
	SERVER+='exec '"${PERFGATE}"' mock-server --port {port} --model {model} --fixed-timing --ttft-ms 2 --itl-ms 3 '
	SERVER+='--slowdown $(git -C '"${WORK}"'/repo show {commit}:slowdown 2>/dev/null || echo 0)'
	# a commit with a `broken` file does not build
	BUILD='! git -C '"${WORK}"'/repo cat-file -e {commit}:broken 2>/dev/null && echo built {commit}'
}

teardown() {
	mark_teardown
}

# c1..c16; c11 adds the slowdown (50%), c8 cannot be built, c14 cannot start
make_repo() {
	git init -q repo
	git -C repo config user.email t@example.com
	git -C repo config user.name t
	for i in $(seq 1 16); do
		echo "$i" >repo/n
		rm -f repo/broken repo/nostart
		[ "$i" -eq 11 ] && echo 0.5 >repo/slowdown
		[ "$i" -eq 8 ] && touch repo/broken
		[ "$i" -eq 14 ] && touch repo/nostart
		git -C repo add -A
		git -C repo commit -qm "c$i"
	done
}

rev() { git -C repo rev-parse "$1"; }
at() { git -C repo rev-parse "HEAD~$((16 - $1))"; } # at N: commit cN

field() { # field FILE PYTHON-EXPR-ON-r
	"$PYTHON" -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"
}

bisect() { # --local unless the first argument is --pipeline
	local mode=--local
	[ "$1" = --pipeline ] && mode=
	"${PERFGATE}" bisect ${mode} --repo repo --suite suite.yml --test serving_bisect \
		--metric median_tpot_ms --tolerance 20% --no-telemetry --server-command "${SERVER}" "$@"
}

@test "a local bisect names the culprit exactly, skips what cannot be built, retries a failed start, and resumes without probing again" {
	touch FLAKY
	run --separate-stderr bisect --good "$(at 1)" --bad "$(at 16)" --build "${BUILD}" -o out
	assert_equal "${status}" 0
	# c8 is the first middle: it does not build, so c9 is probed instead;
	# the start that failed once is retried, not counted
	# (a probe left inconclusive by a busy machine is run again, attempt 2:
	# it is never guessed, and does not change what is probed next)
	decided='[p for p in r["probes"] if p["outcome"] != "inconclusive"]'
	assert_equal "$(field out/bisect.json "[p['outcome'] for p in ${decided}]")" \
		"['skip', 'infrastructure', 'good', 'bad', 'good', 'bad', 'good']"
	assert_equal "$(field out/bisect.json "[p['commit'][:12] for p in ${decided}]")" \
		"['$(at 8 | cut -c1-12)', '$(at 9 | cut -c1-12)', '$(at 9 | cut -c1-12)', '$(at 12 | cut -c1-12)', '$(at 10 | cut -c1-12)', '$(at 11 | cut -c1-12)', '$(at 16 | cut -c1-12)']"
	assert_equal "$(field out/bisect.json 'all(q["commit"] == p["commit"] and q["attempt"] == p["attempt"] + 1 for p, q in zip(r["probes"], r["probes"][1:]) if p["outcome"] == "inconclusive")')" True
	# the culprit, exactly, with its change and interval
	assert_equal "$(field out/bisect.json 'len(r["steps"]), r["steps"][0]["exact"], r["steps"][0]["culprit"]["id"], r["steps"][0]["culprit"]["subject"]')" \
		"1 True $(at 11) c11"
	assert_equal "$(field out/bisect.json '0.4 < r["steps"][0]["change"] < 0.6 and r["steps"][0]["lo"] > 0.3 and r["steps"][0]["hi"] < 0.7')" True
	# every probe searched against the good end; the residual against the culprit
	assert_equal "$(field out/bisect.json '[p["against"][:7] for p in r["probes"] if p["outcome"] != "skip"][-1]')" "$(at 11 | cut -c1-7)"
	assert_equal "$(field out/bisect.json 'r["skipped"][0]["commit"], "build failed" in r["skipped"][0]["note"]')" "$(at 8) True"
	# the markdown says it, and how to reproduce the step alone
	grep -q "^\*\*perfgate bisect: culprit\*\* \`$(at 11 | cut -c1-12)\` c11 — median_tpot_ms +[45][0-9]\.[0-9]%" out/bisect.md
	grep -q "^Skipped (could not be built or started):" out/bisect.md
	grep -q -- "--good $(at 10) --bad $(at 11)" out/bisect.md
	grep -q "infrastructure (retried)" out/bisect.md
	# each probe is an A/B with its own files; the build log is kept
	assert_file_exists "out/$(field out/bisect.json 'r["probes"][2]["dir"]')/verdict.json"
	grep -q "built $(at 9)" out/builds/"$(at 9 | cut -c1-12)".log
	assert_output --partial "**perfgate bisect: culprit**"

	# the same command again: every probe replayed, none run
	run --separate-stderr bisect --good "$(at 1)" --bad "$(at 16)" --build "${BUILD}" -o out
	assert_equal "${status}" 0
	[[ "${stderr}" == *"perfgate bisect: 0 probes run, $(field out/bisect.json 'sum(p["outcome"] != "infrastructure" for p in r["probes"])') replayed"* ]]
	[ ! -e out/probes/08-* ]
	# another question on the same state file is refused, naming the key
	run --separate-stderr bisect --good "$(at 1)" --bad "$(at 15)" --build "${BUILD}" -o out
	assert_equal "${status}" 2
	[[ "${stderr}" == *"out/bisect-state.json: config.bad_id: this bisect asks something else"* ]]
	no_procs_left 5
}

@test "a commit that cannot start is skipped after a retry, leaving the smallest range" {
	# c10..c12 with c11 (the culprit) unable to start: the change began in c11 or c12
	run --separate-stderr bisect --good "$(at 10)" --bad "$(at 12)" -o out \
		--server-command "if git -C ${WORK}/repo log -1 --format=%s {commit} | grep -qx c11; then exit 1; fi; ${SERVER}"
	assert_equal "${status}" 0
	# c11 failed, was run again, failed again while c10 ran: skipped; c12 confirmed bad
	assert_equal "$(field out/bisect.json '[(p["commit"][:12], p["outcome"], p["purpose"]) for p in r["probes"] if p["outcome"] != "inconclusive"]')" \
		"[('$(at 11 | cut -c1-12)', 'infrastructure', 'search'), ('$(at 11 | cut -c1-12)', 'skip', 'search'), ('$(at 12 | cut -c1-12)', 'bad', 'confirm')]"
	assert_equal "$(field out/bisect.json 'r["steps"][0]["exact"], [c[:12] for c in r["steps"][0]["commits"]], r["steps"][0]["last_good"][:12]')" \
		"False ['$(at 11 | cut -c1-12)', '$(at 12 | cut -c1-12)'] $(at 10 | cut -c1-12)"
	grep -q "the change began in 2 commits" out/bisect.md
	grep -q "cannot start: block 2 (head)" out/bisect.md
	no_procs_left 5
}

@test "--from-change: the range, the metric and the tolerance from the history's step" {
	# main's history: the same runs at c8..c10, 9% less output throughput
	# at one point from c11 on (baseline changes finds the step)
	cp -r "${PERFGATE_TESTS}/data/gate" runs
	for i in 8 9 10 11 12 13; do
		r=base
		[ "$i" -gt 10 ] && r=slow
		(cd repo && "${PERFGATE}" baseline record "../runs/$r" --commit "$(git rev-parse "HEAD~$((16 - i))")" \
			--build-url "https://buildkite.example/b/$i" >/dev/null)
	done
	run --separate-stderr "${PERFGATE}" bisect --local --repo repo --suite suite.yml --test serving_bisect \
		--from-change H100/serving_llama8B_tp1_sharegpt_qps_inf/output_throughput --no-telemetry \
		--server-command "${SERVER}" -o out
	assert_equal "${status}" 0
	[[ "${stderr}" == *"perfgate bisect: output_throughput at serving_llama8B_tp1_sharegpt_qps_inf on H100: a step of +9.2% (worse), between $(at 10 | cut -c1-12)"*" and $(at 11 | cut -c1-12)"* ]]
	# one probe: c11 against c10, on the step's metric, half its size the tolerance
	assert_equal "$(field out/bisect.json 'r["config"]["metrics"], round(r["config"]["tolerance"], 3), r["steps"][0]["culprit"]["subject"], r["steps"][0]["metric"]')" \
		"['output_throughput'] 0.046 c11 output_throughput"
	assert_equal "$(field out/bisect.json '[(p["purpose"], p["outcome"]) for p in r["probes"] if p["outcome"] != "inconclusive"]')" "[('confirm', 'bad')]"
	# no such step: one line, exit 2
	run --separate-stderr "${PERFGATE}" bisect --local --repo repo --suite suite.yml --test serving_bisect \
		--from-change H100/all/output_throughput --server-command "${SERVER}" -o out2
	assert_equal "${status}" 2
	assert_equal "${stderr}" "perfgate bisect: --from-change H100/all/output_throughput: no step of output_throughput at every point in the history of H100 (perfgate baseline changes --gpu H100 lists them)"
}

@test "--pipeline: the next probe's step, each job one probe (--max-probes 1), then the answer's" {
	unset BUILDKITE_STEP_KEY
	run --separate-stderr bisect --pipeline --queue H100 --good "$(at 10)" --bad "$(at 12)" -o out
	assert_equal "${status}" 0
	assert_line --index 1 "  - label: \":mag: perfgate bisect: probe 1, $(at 11 | cut -c1-12) (search)\""
	assert_line --index 4 '      queue: "H100"'
	[[ "${output}" != *"artifact download"* ]]
	[[ "${output}" == *"perfgate bisect --local --max-probes 1 --repo repo --good $(at 10) --bad $(at 12) "*" | buildkite-agent pipeline upload"* ]]
	# the step's own command: one probe, the state kept, exit 0 (not finished)
	run --separate-stderr bisect --max-probes 1 --good "$(at 10)" --bad "$(at 12)" -o out
	assert_equal "${status}" 0
	grep -q "Not finished: run the same command again to resume" out/bisect.md
	# the job after fetches that job's state and probes what comes next
	export BUILDKITE_STEP_KEY=perfgate-bisect-probe-1
	run --separate-stderr bisect --pipeline --queue H100 --good "$(at 10)" --bad "$(at 12)" -o out
	assert_equal "${status}" 0
	assert_line --index 1 "  - label: \":mag: perfgate bisect: probe 2, $(at 12 | cut -c1-12) (residual)\""
	[[ "${output}" == *'command: "buildkite-agent artifact download out/bisect-state.json . --step perfgate-bisect-probe-1\n'* ]]
	[[ "${stderr}" == *"0 probes run, 1 replayed"* ]]
}

@test "bisect: mistakes are one line, exit 2" {
	run --separate-stderr "${PERFGATE}" bisect --good a --bad b
	assert_equal "${status}" 2
	assert_equal "${stderr}" "perfgate bisect: say where the probes run: --local (here) or --pipeline (a Buildkite step each)"
	run --separate-stderr bisect --good "$(at 1)" --bad "$(at 16)" --metric median_tpot
	assert_equal "${status}" 2
	assert_equal "${stderr}" "perfgate bisect: --metric: 'median_tpot' is no metric with a direction of test 'serving_bisect' (did you mean 'median_tpot_ms'?)"
	run --separate-stderr "${PERFGATE}" bisect --local --repo repo --suite suite.yml --test serving_bisekt \
		--good "$(at 1)" --bad "$(at 16)" --server-command "x {commit}"
	assert_equal "${status}" 2
	assert_equal "${stderr}" "perfgate bisect: suite.yml: --test: no test 'serving_bisekt' (did you mean 'serving_bisect'?)"
	run --separate-stderr bisect --good nosuchrev --bad "$(at 16)"
	assert_equal "${status}" 2
	assert_equal "${stderr}" "perfgate bisect: --good: no commit 'nosuchrev' in repo"
	run --separate-stderr bisect --good "$(at 16)" --bad "$(at 1)"
	assert_equal "${status}" 2
	[[ "${stderr}" == *"is not on the first-parent line of --bad"* ]]
}
