#!/usr/bin/env bats
# One policy, two front doors: `perfgate gate` and the Buildkite step
# (`perfgate buildkite`, a merge step over the same results, with the
# buildkite-agent shim) read the same results and thresholds, and must agree
# on the exit code, the per-test counts, the headline and the rows that need
# attention (gate/attention.h decides them for both).

load helpers
bats_require_minimum_version 1.5.0

setup() {
	work_setup
	buildkite_job 1a2b3c4d5e6f7a8b9c0d
	cp -r "${PERFGATE_TESTS}"/data/gate/*/ .
	# the step plans the points the results hold, as a real step would:
	# the CLI gate of a results directory without perfgate run's manifest
	# compares the baseline's points, the step its suite's plan
	cat >suite.yml <<'YAML'
latency:
  - name: latency_llama8B_tp1
    model: meta-llama/Llama-3.1-8B-Instruct
    command: "true {result}"
throughput:
  - name: throughput_llama8B_tp1
    model: meta-llama/Llama-3.1-8B-Instruct
    command: "true {result}"
serving:
  - name: serving_llama8B_tp1_sharegpt
    model: meta-llama/Llama-3.1-8B-Instruct
    qps: [4, inf]
    command: "true {result}"
YAML
	"${PERFGATE}" baseline update thresholds --from base 2>/dev/null
}

# The attention rows of a markdown file: (test, metric) of every table row
# before the first <details>, one per line.
attention_rows() {
	"${PYTHON}" - "$1" <<'PY'
import sys
rows = []
for line in open(sys.argv[1], encoding="utf-8"):
    if line.startswith("<details"):
        break
    if not line.startswith("| ") or line.startswith("| Test |"):
        continue
    cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
    rows.append(cells[0] + " / " + cells[1])
print("\n".join(rows))
PY
}

# agree DIR WANT_EXIT: gate DIR both ways; same exit code (WANT_EXIT),
# same headline counts, same verdict.json counts, same attention rows in
# the same order.
agree() {
	local dir="$1" want="$2" cli_status bk_status cli_head bk_head
	rm -rf cli perfgate-results
	run --separate-stderr "${PERFGATE}" gate "${dir}" --gpu H100 -o cli -q
	cli_status="${status}"
	mkdir -p perfgate-results/H100/shard-1
	cp "${dir}"/*.json perfgate-results/H100/shard-1/
	export BUILDKITE_PLUGIN_CONFIGURATION='{"suites":"suite.yml","gpu":"H100","mode":"merge","results-dir":"perfgate-results/H100","confirm":false}'
	run --separate-stderr "${PERFGATE}" buildkite
	bk_status="${status}"
	bk_head="$(printf '%s\n' "${output}" "${stderr}" | sed -n 's/^+++ perfgate: \(.*\) (exit [0-9]*)$/\1/p')"
	# the CLI adds whether a re-run confirmed it (a step says so in its
	# confirm option): the counts are what must agree
	cli_head="$(head -1 cli/comparison.md | sed 's/^\*\*perfgate: [^*]*\*\* — //; s/ · \(not \)\{0,1\}confirmed by a re-run$//')"
	echo "${dir}: gate exit ${cli_status} '${cli_head}'; step exit ${bk_status} '${bk_head}'"
	assert_equal "${cli_status}" "${want}"
	assert_equal "${bk_status}" "${want}"
	assert_equal "${bk_head}" "${cli_head}"
	# the annotation's headline is the same sentence
	assert_equal "$(head -1 perfgate-results/H100/annotation.md)" "#### ${cli_head}"
	# verdict.json: the step writes the gate's, with the same counts
	assert_equal "$("${PYTHON}" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["verdict"], d["exit_code"], sorted(d["tests"].items()))' perfgate-results/H100/verdict.json)" \
		"$("${PYTHON}" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["verdict"], d["exit_code"], sorted(d["tests"].items()))' cli/verdict.json)"
	assert_equal "$(attention_rows perfgate-results/H100/annotation.md)" "$(attention_rows cli/comparison.md)"
}

@test "pass: both exit 0, no attention rows" {
	agree same 0
	assert_equal "$(attention_rows cli/comparison.md)" ""
	grep -q '^\*\*perfgate: PASS\*\* — H100: no regressions in 4 tests$' cli/comparison.md
}

@test "warn only: a warn-only metric worse than its tolerance, not its escalation" {
	cp -r same warn
	# mean TPOT only warns: 5% worse is past its tolerance, short of 8%
	"${PYTHON}" - warn/serving_llama8B_tp1_sharegpt_qps_4.json <<'PY'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
d["mean_tpot_ms"] *= 1.05
for r in d["perfgate"]["repeats"]:
    r["mean_tpot_ms"] *= 1.05
json.dump(d, open(p, "w"))
PY
	agree warn 0
	grep -q '^\*\*perfgate: PASS with warnings\*\* — H100: no regressions in 4 tests, 1 with warnings$' cli/comparison.md
	# the warn-only row is in the full table only
	assert_equal "$(attention_rows cli/comparison.md)" ""
	grep -q '| serving_llama8B_tp1_sharegpt_qps_4 | Mean TPOT (ms) .* regressed (warn) |' cli/comparison.md
	grep -q '| Mean TPOT (ms) | 8.41 | 8.839 | <span class="orange">+5.1%</span> | 3% | regressed: 5.1% worse; warn-only metric |' perfgate-results/H100/annotation.md
}

@test "regression: both exit 1, the same failing rows" {
	agree slow 1
	assert_equal "$(attention_rows cli/comparison.md | wc -l)" 3
	grep -q '^\*\*perfgate: FAIL\*\* — H100: 1 of 4 tests regressed (2 metrics) · not confirmed by a re-run$' cli/comparison.md
	# a p99 of 200 requests cannot be certified (docs/tails.md): past its
	# escalation threshold it is shown, orange, as a warning
	grep -q '| P99 TTFT (ms) | 22.1 | 27.65 | <span class="orange">+25.1%</span> | 7% | noisy' perfgate-results/H100/annotation.md
}

@test "a missing point: both exit 3" {
	cp -r same partial
	rm partial/throughput_llama8B_tp1.json
	agree partial 3
	grep -q '^\*\*perfgate: ERROR\*\* — H100: results missing or failed for 1 of 4 tests$' cli/comparison.md
	assert_equal "$(attention_rows cli/comparison.md)" "throughput_llama8B_tp1 / all metrics"
}

@test "a failed point and a missing point: both exit 3" {
	agree broken 3
}

@test "noisy results: the same verdict both ways" {
	agree flaky "$("${PERFGATE}" gate flaky --gpu H100 -o probe -q >/dev/null 2>&1; echo $?)"
}

@test "a sick job's regression is suspect: both exit 3, asking for a re-run" {
	cp -r slow sick
	"${PYTHON}" - sick/latency_llama8B_tp1.json <<'PY'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
d.setdefault("perfgate", {})["telemetry"] = {
    "gpu": {"devices": [{"index": 0, "sm_clock_ratio": 0.5}]}}
json.dump(d, open(p, "w"))
PY
	agree sick 3
	grep -q '^\*\*perfgate: SUSPECT\*\* — H100: 1 of 4 tests regressed (2 metrics) — from a sick job: re-run it$' cli/comparison.md
	[ "$("${PYTHON}" -c 'import json; print(json.load(open("cli/verdict.json"))["verdict"])')" = suspect ]
}
