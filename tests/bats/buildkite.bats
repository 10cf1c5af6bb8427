#!/usr/bin/env bats
# perfgate buildkite, the plugin's entry point, driven as the agent drives
# it: configuration in BUILDKITE_PLUGIN_CONFIGURATION, a buildkite-agent
# shim on PATH that records its arguments and stdin.

load helpers

setup() {
	work_setup
	buildkite_job 1a2b3c4d5e6f7a8b9c0d
}

results() {
	"${PYTHON}" "${PLUGIN_DIR}/tests/bats/make_results.py" "${WORK}/results" "$@"
}

config() {
	export BUILDKITE_PLUGIN_CONFIGURATION="$1"
}

# The stdin the shim got on its n-th call (0-based).
agent_stdin() {
	cat "${CALLS}.buildkite-agent.$1"
}

@test "no configuration at all is a configuration error" {
	unset BUILDKITE_PLUGIN_CONFIGURATION
	run "${PERFGATE}" buildkite
	assert_equal "${status}" 2
	assert_output --partial "perfgate buildkite: no plugin configuration: BUILDKITE_PLUGIN_CONFIGURATION is not set"
}

@test "the configuration is found in BUILDKITE_PLUGINS when the agent gives only that" {
	results
	export BUILDKITE_PLUGINS='[{"github.com/buildkite-plugins/docker-buildkite-plugin#v5":{"image":"x"}},{"github.com/perfgate/perfgate-buildkite-plugin#v0.1.0":{"mode":"report","gpu":"H100"}}]'
	run "${PERFGATE}" buildkite
	assert_success
	assert_output --partial "+++ perfgate: H100: 6 tests ran, no baseline comparison (exit 0)"
}

@test "configuration errors name the option and the step, exit 2, nothing runs" {
	local cases=(
		'{"suites":"perf.yml","treshold":"t"}|step '"'"':h100: perf'"'"': unknown option '"'"'treshold'"'"' (did you mean '"'"'thresholds'"'"'?)'
		'{"suites":"perf.yml","repeat":"three"}|option '"'"'repeat'"'"': expected an integer >= 1, got '"'"'three'"'"''
		'{"suites":"perf.yml","repeat":0}|option '"'"'repeat'"'"': expected an integer >= 1, got 0'
		'{"suites":"perf.yml","mode":"fast"}|option '"'"'mode'"'"': expected '"'"'run'"'"', '"'"'report'"'"', '"'"'gate'"'"', '"'"'merge'"'"', '"'"'pipeline'"'"' or '"'"'binary'"'"', got '"'"'fast'"'"''
		'{"suites":"perf.yml","confirm":"yes"}|option '"'"'confirm'"'"': expected true or false, got '"'"'yes'"'"''
		'{"suites":"perf.yml","filter":"(("}|option '"'"'filter'"'"': bad regular expression'
		'{"suites":"perf.yml","shard":"5/4"}|option '"'"'shard'"'"': expected "INDEX/COUNT" with 1 <= INDEX <= COUNT, got "5/4"'
		'{"suites":42}|option '"'"'suites'"'"': expected a path, a list of paths or a suite mapping, got 42'
		'{"gpu":"H100"}|option '"'"'suites'"'"' is required'
		'{"suites":"a.yml","suites":"b.yml"}|BUILDKITE_PLUGIN_CONFIGURATION: duplicate object key'
		'[1]|BUILDKITE_PLUGIN_CONFIGURATION: expected an object'
		'{"suites":{"serving":[{"name":"serving_a","model":"m","qps":[1,"fast"]}]}}|BUILDKITE_PLUGIN_CONFIGURATION: suites.serving[0].qps[1]: expected a number or '"'"'inf'"'"', got '"'"'fast'"'"''
	)
	for c in "${cases[@]}"; do
		config "${c%%|*}"
		run "${PERFGATE}" buildkite
		assert_equal "${status}" 2
		assert_output --partial "${c#*|}"
		assert_output --regexp "^perfgate buildkite: (step ':h100: perf'|BUILDKITE_PLUGIN_CONFIGURATION)"
	done
	assert_equal "$(cat "${CALLS}")" ""
}

@test "only-on-labels skips a pull request without the label: one line, exit 0" {
	export BUILDKITE_PULL_REQUEST=4711 BUILDKITE_PULL_REQUEST_LABELS="docs,ci"
	config '{"suites":"perf.yml","only-on-labels":["perf-benchmarks"]}'
	run "${PERFGATE}" buildkite
	assert_success
	assert_output "perfgate: skipped: pull request #4711 has no label perf-benchmarks (labels: docs, ci)"
	assert_equal "$(cat "${CALLS}")" ""
}

@test "only-on-labels runs a pull request that has the label, and every non-PR build" {
	results
	config '{"mode":"report","gpu":"H100","only-on-labels":"perf-benchmarks"}'
	export BUILDKITE_PULL_REQUEST=4711 BUILDKITE_PULL_REQUEST_LABELS="docs,Perf-Benchmarks"
	run "${PERFGATE}" buildkite
	assert_success
	refute_output --partial "skipped"
	export BUILDKITE_PULL_REQUEST=false BUILDKITE_PULL_REQUEST_LABELS=""
	run "${PERFGATE}" buildkite
	assert_success
	refute_output --partial "skipped"
}

@test "report mode: annotation on stdin, artifacts uploaded, verdict in meta-data" {
	results
	config '{"mode":"report","gpu":"H100"}'
	run "${PERFGATE}" buildkite
	assert_success
	run cat "${CALLS}"
	assert_line --index 0 "buildkite-agent annotate --context perfgate-H100-perf-h100 --style success"
	# every file by name, no pattern for the agent to expand
	assert_line --index 1 'buildkite-agent artifact upload results/annotation.md\;results/benchmark_results.json\;results/benchmark_results.md\;results/latency_llama8B_tp1.json\;results/serving_llama8B_tp1_sharegpt_qps_1.json\;results/serving_llama8B_tp1_sharegpt_qps_16.json\;results/serving_llama8B_tp1_sharegpt_qps_4.json\;results/serving_llama8B_tp1_sharegpt_qps_inf.json\;results/throughput_llama8B_tp1.json\;results/charts/latency.svg\;results/charts/serving_llama8B_tp1_sharegpt.svg\;results/charts/serving_llama8B_tp1_sharegpt_frontier.svg\;results/charts/throughput.svg'
	assert_line --index 2 "buildkite-agent meta-data set perfgate:H100:verdict pass"
	assert_equal "${#lines[@]}" 3
	# the body came on stdin, and is what was written to annotation.md
	agent_stdin 0 >"${BATS_TEST_TMPDIR}/body"
	assert_files_equal "${BATS_TEST_TMPDIR}/body" results/annotation.md
	run head -1 results/annotation.md
	assert_output "#### H100: 6 tests ran, no baseline comparison"
	grep -q '<img src="artifact://results/charts/serving_llama8B_tp1_sharegpt.svg"' results/annotation.md
	assert_file_exists results/benchmark_results.md
	assert_file_exists results/benchmark_results.json
	assert_file_exists results/charts/serving_llama8B_tp1_sharegpt.svg
	assert_file_exists results/charts/latency.svg
}

@test "a failed point makes an error annotation and exit 3" {
	results --error throughput_llama8B_tp1
	config '{"mode":"report","gpu":"H100","context":"nightly-h100"}'
	run "${PERFGATE}" buildkite
	assert_equal "${status}" 3
	assert_output --partial "+++ perfgate: H100: 1 of 6 tests failed to run (exit 3)"
	run cat "${CALLS}"
	assert_line --index 0 "buildkite-agent annotate --context nightly-h100 --style error"
	assert_line --index 2 "buildkite-agent meta-data set perfgate:H100:verdict error"
	grep -qF -- "- throughput_llama8B_tp1: error: server exited with status 1 before it was ready" results/annotation.md
}

@test "annotate failure is a warning and does not change the outcome" {
	results --error throughput_llama8B_tp1
	config '{"mode":"report","gpu":"H100"}'
	SHIM_EXIT_buildkite_agent=1 run "${PERFGATE}" buildkite
	assert_equal "${status}" 3
	assert_output --partial "perfgate: warning: annotation failed: buildkite-agent annotate exited with status 1 (annotation in results/annotation.md)"
}

@test "annotate: never and on-change, artifacts: false" {
	results
	config '{"mode":"report","gpu":"H100","annotate":"on-change","artifacts":false}'
	run "${PERFGATE}" buildkite
	assert_success
	assert_equal "$(cat "${CALLS}")" "buildkite-agent meta-data set perfgate:H100:verdict pass"
	: >"${CALLS}"
	results --error latency_llama8B_tp1
	config '{"mode":"report","gpu":"H100","annotate":"never"}'
	run "${PERFGATE}" buildkite
	assert_equal "${status}" 3
	run cat "${CALLS}"
	refute_line --partial "annotate"
	assert_line --partial "artifact upload"
}

@test "outside Buildkite the annotation goes to a file and the command says so" {
	unset BUILDKITE
	results
	config '{"mode":"report","gpu":"H100","results-dir":"out/h100"}'
	mv results out-h100 && mkdir out && mv out-h100 out/h100
	run "${PERFGATE}" buildkite
	assert_success
	assert_output --partial "perfgate: not running in Buildkite: annotation written to out/h100/annotation.md"
	assert_file_exists out/h100/annotation.md
	assert_equal "$(cat "${CALLS}")" ""
}

@test "outside Buildkite: annotation.md links its neighbours, the log has no group markers" {
	unset BUILDKITE
	results
	config '{"mode":"report","gpu":"H100","results-dir":"out/h100"}'
	mv results out-h100 && mkdir out && mv out-h100 out/h100
	run "${PERFGATE}" buildkite
	assert_success
	refute_output --partial -- "--- "
	refute_output --partial "+++ "
	assert_output --partial "perfgate: H100: 6 tests ran, no baseline comparison (exit 0)"
	# no preview shows artifact:// images: paths relative to the file
	run grep -c "artifact://" out/h100/annotation.md
	assert_output 0
	grep -qF '<img src="charts/serving_llama8B_tp1_sharegpt.svg"' out/h100/annotation.md
	grep -qF '<a href="benchmark_results.json">benchmark_results.json</a>' out/h100/annotation.md
	assert_file_exists out/h100/charts/serving_llama8B_tp1_sharegpt.svg
	# in Buildkite the same step links the artifacts
	export BUILDKITE=true
	run "${PERFGATE}" buildkite
	grep -qF '<img src="artifact://out/h100/charts/serving_llama8B_tp1_sharegpt.svg"' out/h100/annotation.md
}

@test "the annotation's JSON section loads with pd.read_json: a row per point" {
	results --error throughput_llama8B_tp1
	config '{"mode":"report","gpu":"H100"}'
	run "${PERFGATE}" buildkite
	assert_equal "${status}" 3
	run "${PYTHON}" - results/annotation.md <<'PY'
import io, re, sys
import pandas as pd
md = open(sys.argv[1]).read()
m = re.search(r"<summary>JSON \(pandas.read_json\)</summary>\s*(`{3,})json\n(.*?)\n\1", md, re.S)
df = pd.read_json(io.StringIO(m.group(2)))
print(df.shape[0], df["Test name"].tolist()[0], df["Status"].tolist().count("error"))
print(df["Output Tput (tok/s)"].dtype, df["Model"].dtype)
PY
	assert_success
	assert_line --index 0 "6 latency_llama8B_tp1 1"
	assert_line --index 1 --regexp "^float64 object$"
}

@test "an absolute results-dir uploads from its parent so artifact links match" {
	results
	config "{\"mode\":\"report\",\"gpu\":\"H100\",\"results-dir\":\"${WORK}/results\"}"
	cd /
	run "${PERFGATE}" buildkite
	assert_success
	run cat "${CALLS}"
	assert_line --index 1 --regexp '^buildkite-agent artifact upload results/annotation\.md\\;.*\\;results/charts/latency\.svg\\;'
	grep -q 'artifact://results/charts/latency.svg' "${WORK}/results/annotation.md"
}

@test "the buildkite-agent shim is found through BUILDKITE_AGENT_PATH too" {
	results
	config '{"mode":"report","gpu":"H100"}'
	mkdir -p "${BATS_TEST_TMPDIR}/agent"
	mv "${SHIMS}/buildkite-agent" "${BATS_TEST_TMPDIR}/agent/bk"
	export BUILDKITE_AGENT_PATH="${BATS_TEST_TMPDIR}/agent/bk"
	run "${PERFGATE}" buildkite
	assert_success
	assert_equal "$(wc -l <"${CALLS}")" 3
}

@test "hostile test names cannot break the tables or inject HTML" {
	results --hostile
	config '{"mode":"report","gpu":"H100"}'
	run "${PERFGATE}" buildkite
	assert_success
	agent_stdin 0 >"${BATS_TEST_TMPDIR}/body"
	# outside code blocks (which show text literally) no markup of the name
	"${PYTHON}" - "${BATS_TEST_TMPDIR}/body" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
outside = re.sub(r"^(`{3,})json\n.*?^\1$", "", text, flags=re.S | re.M)
for bad in ("<script>", "<img src=x", "</details></script>", "<details><script>"):
    assert bad not in outside, bad
assert "&lt;script&gt;" in outside  # escaped once, by the report
PY
	# the charts escape it too
	run grep -l '<script>' results/charts/*.svg
	assert_failure
	# every table row of the serving table has the same number of cells
	"${PYTHON}" - "${BATS_TEST_TMPDIR}/body" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
rows = [l for l in text.splitlines() if l.startswith("| serving_")]
assert rows, "no serving rows"
counts = {len(re.findall(r"(?<!\\)\|", l)) for l in rows}
assert len(counts) == 1, counts
PY
}

@test "10,000 test points: the annotation degrades to fit under 1 MiB" {
	results --points 10000
	config '{"mode":"report","gpu":"H100"}'
	run "${PERFGATE}" buildkite
	assert_success
	assert_output --partial "perfgate: the annotation was shortened to fit Buildkite's 1 MiB limit"
	local size
	size="$(wc -c <"${CALLS}.buildkite-agent.0")"
	[ "${size}" -lt 1048576 ]
	grep -q "The full report is too large for an annotation: it is in <code>benchmark_results.md</code> in the artifacts." "${CALLS}.buildkite-agent.0"
	grep -q "The JSON section is too large for an annotation" "${CALLS}.buildkite-agent.0"
	# the full report is still complete on disk
	run grep -c '^| serving_llama8B_tp1_sharegpt_variant_' results/benchmark_results.md
	assert_output 10000
}

# ---- modes that run: the suite's benchmarks are fake-bench.sh, real
# child processes that write a result at once ----

suite_here() {
	cp "${PLUGIN_DIR}/tests/data/buildkite/suite.yml" "${PLUGIN_DIR}/tests/data/buildkite/fake-bench.sh" .
}

@test "run mode runs the suite, reports, annotates and uploads" {
	suite_here
	config '{"suites":"suite.yml","gpu":"H100","mode":"run"}'
	run "${PERFGATE}" buildkite
	assert_success
	assert_output --partial "--- perfgate: 5 test points on 1xH100"
	assert_output --partial "+++ perfgate run: 5 ok"
	assert_output --partial "+++ perfgate: H100: 5 tests ran, no baseline comparison (exit 0)"
	assert_file_exists results/latency_llama8B_tp1.json
	assert_file_exists results/latency_llama8B_tp1.commands
	assert_file_exists results/charts/latency.svg
	run cat "${CALLS}"
	assert_line --index 0 "buildkite-agent annotate --context perfgate-H100-perf-h100 --style success"
	assert_line --index 2 "buildkite-agent meta-data set perfgate:H100:verdict pass"
}

@test "shard i/N runs only its slice; the slices cover the suite once" {
	suite_here
	local all=""
	for i in 1 2 3; do
		config "{\"suites\":\"suite.yml\",\"gpu\":\"H100\",\"mode\":\"run\",\"shard\":\"${i}/3\",\"results-dir\":\"out/shard-${i}\",\"annotate\":\"never\"}"
		run "${PERFGATE}" buildkite
		assert_success
		all="${all} $(cd "out/shard-${i}" && ls -- *_tp[0-9].json | tr '\n' ' ')"
	done
	run bash -c "printf '%s\n' ${all} | sort"
	assert_output "$(printf '%s\n' latency_llama70B_tp4.json latency_llama8B_tp1.json latency_mixtral8x7B_tp2.json throughput_llama70B_tp4.json throughput_llama8B_tp1.json)"
}

@test "merge mode gathers the shards' results, downloaded from the artifacts" {
	suite_here
	for i in 1 2; do
		config "{\"suites\":\"suite.yml\",\"gpu\":\"H100\",\"mode\":\"run\",\"shard\":\"${i}/2\",\"results-dir\":\"perfgate-results/H100/shard-${i}\",\"annotate\":\"never\",\"artifacts\":false}"
		run "${PERFGATE}" buildkite
		assert_success
	done
	: >"${CALLS}"
	# merge gates: without a thresholds file for its GPU it stops at once,
	# before it downloads anything
	config '{"suites":"suite.yml","gpu":"H100","mode":"merge","results-dir":"perfgate-results/H100"}'
	run "${PERFGATE}" buildkite
	assert_equal "${status}" 2
	assert_output --partial "gpu 'H100': no thresholds file thresholds/H100.yml"
	assert_equal "$(cat "${CALLS}")" ""
	"${PERFGATE}" baseline update thresholds --gpu H100 --from perfgate-results/H100/shard-1 \
		--from perfgate-results/H100/shard-2 2>/dev/null
	run "${PERFGATE}" buildkite
	assert_success
	assert_output --partial "perfgate: merged the results of 2 shards"
	assert_output --partial "+++ perfgate: H100: no regressions in 5 tests"
	run cat "${CALLS}"
	assert_line --index 0 'buildkite-agent artifact download perfgate-results/H100/shard-\*/\* .'
	assert_line --index 1 "buildkite-agent annotate --context perfgate-H100-perf-h100 --style success"
	# the shards' copies are not uploaded again
	assert_line --index 2 --regexp '^buildkite-agent artifact upload perfgate-results/H100/annotation\.md\\;'
	[[ "${lines[2]}" != *shard-* ]]
	# one report over both shards
	run grep -c '^| latency_' perfgate-results/H100/benchmark_results.md
	assert_output 3
	run grep -c '^| throughput_' perfgate-results/H100/benchmark_results.md
	assert_output 2
}

@test "merge mode with no shards is an infrastructure failure" {
	results
	"${PERFGATE}" baseline update thresholds --gpu H100 --from results 2>/dev/null
	config '{"suites":"suite.yml","gpu":"H100","mode":"merge","results-dir":"perfgate-results/H100"}'
	run "${PERFGATE}" buildkite
	assert_equal "${status}" 3
	assert_output --partial "perfgate-results/H100: no shard results (shard-*) to merge"
	run cat "${CALLS}"
	assert_line --index 1 --partial "annotate --context perfgate-H100-perf-h100 --style error"
}

@test "pipeline mode uploads the generated pipeline on stdin" {
	suite_here
	export BUILDKITE_PLUGINS='[{"github.com/perfgate/perfgate-buildkite-plugin#v0.1.0":{}}]'
	config '{"suites":"suite.yml","mode":"pipeline","gpus":["H100","A100"],"shards":2,"baseline":"git","only-on-labels":["perf"]}'
	run "${PERFGATE}" buildkite
	assert_success
	assert_output --partial "--- perfgate: uploading the pipeline (2 GPUs x 2 shards)"
	assert_equal "$(cat "${CALLS}")" "buildkite-agent pipeline upload"
	"${PYTHON}" - "${CALLS}.buildkite-agent.0" "${PLUGIN_DIR}/tests/data/schemas/buildkite-pipeline.schema.json" <<'PY'
import json, sys, yaml, jsonschema
doc = yaml.safe_load(open(sys.argv[1]).read().replace("$$", "$"))
jsonschema.validate(doc, json.load(open(sys.argv[2])))
steps = [s for s in doc["steps"] if "plugins" in s]
assert len(steps) == 6, len(steps)
cfg = list(steps[0]["plugins"][0].values())[0]
assert list(steps[0]["plugins"][0]) == ["github.com/perfgate/perfgate-buildkite-plugin#v0.1.0"]
assert cfg["baseline"] == "git" and cfg["only-on-labels"] == ["perf"] and cfg["shard"] == "1/2", cfg
assert "gpus" not in cfg and "shards" not in cfg
PY
}

@test "pipeline mode: option strings YAML cannot carry raw (DEL, C1 controls, BOM, U+FFFF) are escaped and come back exact" {
	suite_here
	export BUILDKITE_PLUGINS='[{"github.com/perfgate/perfgate-buildkite-plugin#v0.1.0":{}}]'
	# found by the plugin_config fuzzer: a raw DEL made the uploaded pipeline invalid YAML
	config '{"suites":"suite.yml","mode":"pipeline","gpus":["H100"],"only-on-labels":["a\u007fb","c\u0085d\u009be","\ufefff\uffffg$h"]}'
	run "${PERFGATE}" buildkite
	assert_success
	"${PYTHON}" - "${CALLS}.buildkite-agent.0" <<'PY'
import sys, yaml
raw = open(sys.argv[1], encoding="utf-8").read()
assert not any(c in raw for c in "\x7f\x85\x9b\ufeff\uffff"), "raw unprintable code point in the YAML"
doc = yaml.safe_load(raw.replace("$$", "$"))
cfg = [list(s["plugins"][0].values())[0] for s in doc["steps"] if "plugins" in s][0]
assert cfg["only-on-labels"] == ["a\x7fb", "c\x85d\x9be", "\ufefff\uffffg$h"], cfg["only-on-labels"]
PY
}

@test "pipeline mode with binary-artifact: every generated step downloads the bundle" {
	suite_here
	export BUILDKITE_PLUGINS='[{"github.com/perfgate/perfgate-buildkite-plugin#v0.1.0":{}}]'
	# the pipeline step's agent has perfgate at a path of its own (binary);
	# its hook uploads that perfgate as the artifact
	config '{"suites":"suite.yml","mode":"pipeline","gpus":["H100","L40S"],"binary":"/opt/perfgate/bin/perfgate","binary-artifact":"perfgate/perfgate.tar.gz"}'
	run "${PERFGATE}" buildkite
	assert_success
	"${PYTHON}" - "${CALLS}.buildkite-agent.0" <<'PY'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]).read().replace("$$", "$"))
configs = [list(s["plugins"][0].values())[0] for s in doc["steps"] if "plugins" in s]
assert len(configs) == 2, configs
for cfg in configs:
    assert cfg["binary-artifact"] == "perfgate/perfgate.tar.gz", cfg
    # from this job only, the one that uploads it
    assert cfg["binary-step"] == "0190-job", cfg
    assert "binary" not in cfg, cfg
PY
	# a job id is what names it
	unset BUILDKITE_JOB_ID
	run "${PERFGATE}" buildkite
	assert_equal "${status}" 2
	assert_output --partial "mode pipeline: binary-artifact: no BUILDKITE_JOB_ID to name this job as the one the generated steps take it from"
}

@test "--will-run: valid and not skipped 0, skipped by only-on-labels 1, bad options 2" {
	config '{"mode":"report","only-on-labels":["perf"]}'
	run "${PERFGATE}" buildkite --will-run
	assert_success
	assert_output ""
	export BUILDKITE_PULL_REQUEST=4711 BUILDKITE_PULL_REQUEST_LABELS="docs"
	run "${PERFGATE}" buildkite --will-run
	assert_equal "${status}" 1
	assert_output "perfgate buildkite: step ':h100: perf': skipped: pull request #4711 has no label perf (labels: docs)"
	export BUILDKITE_PULL_REQUEST_LABELS="docs,perf"
	run "${PERFGATE}" buildkite --will-run
	assert_success
	config '{"mode":"report","only-on-labels":["perf"],"colour":true}'
	run "${PERFGATE}" buildkite --will-run
	assert_equal "${status}" 2
	assert_output --partial "unknown option 'colour'"
	assert_equal "$(cat "${CALLS}")" ""
}

@test "mode binary is the hook's: perfgate buildkite says so, --check validates" {
	config '{"mode":"binary","binary-artifact":"perfgate.tar.gz"}'
	run "${PERFGATE}" buildkite --check
	assert_success
	assert_output "perfgate buildkite: step ':h100: perf': the configuration is valid"
	run "${PERFGATE}" buildkite
	assert_equal "${status}" 2
	assert_output --partial "mode 'binary' is the plugin hook's: hooks/command packs perfgate and uploads it as 'perfgate.tar.gz'"
	assert_equal "$(cat "${CALLS}")" ""
}

@test "a run cancelled by SIGTERM ends with 143, keeps what finished, and annotates" {
	suite_here
	config '{"suites":"suite.yml","gpu":"H100","mode":"run"}'
	# the benchmarks' result files, so their command lines, under WORK
	export FAKE_BENCH_SLEEP=30 TMPDIR="${WORK}/tmp"
	mkdir -p "${TMPDIR}"
	"${PERFGATE}" buildkite >"${BATS_TEST_TMPDIR}/out" 2>&1 &
	local pid=$! rc=0 i
	# cancel once the first benchmark runs, however slow the start
	for i in $(seq 600); do
		pgrep -f "fake-bench.sh ${WORK}" >/dev/null && break
		sleep 0.05
	done
	run pgrep -f "fake-bench.sh ${WORK}"
	assert_success
	kill -TERM "${pid}"
	wait "${pid}" || rc=$?
	assert_equal "${rc}" 143
	run cat "${BATS_TEST_TMPDIR}/out"
	assert_output --partial "+++ perfgate: H100:"
	# no benchmark is left behind
	run pgrep -f "fake-bench.sh ${WORK}"
	assert_failure
	run cat "${CALLS}"
	assert_line --index 0 --partial "annotate --context perfgate-H100-perf-h100 --style error"
}

# ---- gate: thresholds made from a first run, then a second run compared
# with them; FAKE_BENCH_FACTOR=1.3 makes latency 30% worse (and
# throughput 30% better) ----

baseline_here() {
	suite_here
	config '{"suites":"suite.yml","gpu":"H100","mode":"run","results-dir":"base","annotate":"never","artifacts":false}'
	BUILDKITE= run "${PERFGATE}" buildkite
	assert_success
	run "${PERFGATE}" baseline update thresholds --from base --gpu H100
	assert_success
	: >"${CALLS}"
}

@test "gate passes: success annotation, verdict pass, comparison written" {
	baseline_here
	config '{"suites":"suite.yml","gpu":"H100"}'
	run "${PERFGATE}" buildkite
	assert_success
	assert_output --partial "+++ perfgate: H100: no regressions in 5 tests (exit 0)"
	run cat "${CALLS}"
	assert_line --index 0 "buildkite-agent annotate --context perfgate-H100-perf-h100 --style success"
	assert_line --index 2 "buildkite-agent meta-data set perfgate:H100:verdict pass"
	assert_file_exists results/comparison.md
	assert_file_exists results/verdict.json
	assert_dir_not_exists results/confirm
	grep -q "baseline thresholds/H100.yml" results/annotation.md
	grep -q "<summary>Comparison with the baseline</summary>" results/annotation.md
}

@test "gate fails on a regression confirmed by a re-run: exit 1, error annotation" {
	baseline_here
	config '{"suites":"suite.yml","gpu":"H100"}'
	FAKE_BENCH_FACTOR=1.3 run "${PERFGATE}" buildkite
	assert_equal "${status}" 1
	assert_output --partial "--- perfgate: confirming 3 flagged points with a re-run"
	assert_output --partial "+++ perfgate: H100: 3 of 5 tests regressed (3 metrics), 2 improved (exit 1)"
	run cat "${CALLS}"
	assert_line --index 0 "buildkite-agent annotate --context perfgate-H100-perf-h100 --style error"
	assert_line --index 2 "buildkite-agent meta-data set perfgate:H100:verdict regression"
	assert_file_exists results/confirm/latency_llama8B_tp1.json
	# regressions first, in the first table of the annotation
	run grep -m1 '^| latency_' results/annotation.md
	assert_output --regexp '^\| latency_llama70B_tp4 \| Median latency \(ms\) \| 2530 \| 3289 \| <span class="red">\+30\.0%</span> \| 3% \| regressed'
	grep -q 'flagged regressions re-run: each must reproduce on the re-run' results/annotation.md
	grep -q 'reproduced by the re-run' results/annotation.md
	# the chart compares with the baseline
	grep -q '(+30.0%)' results/charts/latency.svg
}

@test "a regression outranks a point that failed to run: exit 1, both in the annotation" {
	baseline_here
	config '{"suites":"suite.yml","gpu":"H100","confirm":false}'
	FAKE_BENCH_FACTOR=1.3 FAKE_BENCH_FAIL=throughput_llama70B_tp4 run "${PERFGATE}" buildkite
	assert_equal "${status}" 1
	assert_output --partial "+++ perfgate: H100: 3 of 5 tests regressed (3 metrics), 1 missing or failed, 1 improved (exit 1)"
	grep -q '^- throughput_llama70B_tp4: error' results/annotation.md
}

@test "a point that failed to run, nothing regressed: exit 3, error annotation" {
	baseline_here
	config '{"suites":"suite.yml","gpu":"H100"}'
	FAKE_BENCH_FAIL=throughput_llama70B_tp4 run "${PERFGATE}" buildkite
	assert_equal "${status}" 3
	assert_output --partial "+++ perfgate: H100: results missing or failed for 1 of 5 tests (exit 3)"
	run cat "${CALLS}"
	assert_line --index 0 "buildkite-agent annotate --context perfgate-H100-perf-h100 --style error"
	assert_line --index 2 "buildkite-agent meta-data set perfgate:H100:verdict error"
}

@test "a regression still fails the step when the annotation cannot be posted" {
	baseline_here
	config '{"suites":"suite.yml","gpu":"H100","confirm":false}'
	FAKE_BENCH_FACTOR=1.3 SHIM_EXIT_buildkite_agent=1 run "${PERFGATE}" buildkite
	assert_equal "${status}" 1
	assert_output --partial "perfgate: warning: annotation failed"
	refute_output --partial "confirming"
	assert_dir_not_exists results/confirm
}

@test "run mode reports a regression without failing the step" {
	baseline_here
	config '{"suites":"suite.yml","gpu":"H100","mode":"run","confirm":false}'
	FAKE_BENCH_FACTOR=1.3 run "${PERFGATE}" buildkite
	assert_success
	assert_output --partial "+++ perfgate: H100: 3 of 5 tests regressed (3 metrics), 2 improved — run mode: not failing the step (exit 0)"
	# the colour says what the step did: a warning, not an error
	run cat "${CALLS}"
	assert_line --index 0 "buildkite-agent annotate --context perfgate-H100-perf-h100 --style warning"
	assert_line --index 2 "buildkite-agent meta-data set perfgate:H100:verdict regression"
	grep -q '^#### H100: 3 of 5 tests regressed (3 metrics), 2 improved — run mode: not failing the step$' results/annotation.md
}

@test "report mode: a regression is a warning-style annotation that says the step is not failed" {
	baseline_here
	# the step's command ran the benchmarks (here: perfgate itself) ...
	config '{"suites":"suite.yml","gpu":"H100","mode":"run","annotate":"never","artifacts":false,"confirm":false}'
	FAKE_BENCH_FACTOR=1.3 BUILDKITE= run "${PERFGATE}" buildkite
	assert_success
	: >"${CALLS}"
	# ... and the report step reports them
	config '{"mode":"report","gpu":"H100"}'
	run "${PERFGATE}" buildkite
	assert_success
	assert_output --partial "+++ perfgate: H100: 3 of 5 tests regressed (3 metrics), 2 improved — report mode: not failing the step (exit 0)"
	run cat "${CALLS}"
	assert_line --index 0 "buildkite-agent annotate --context perfgate-H100-perf-h100 --style warning"
	grep -q '^#### H100: .* — report mode: not failing the step$' results/annotation.md
}

@test "baseline points outside the step's plan are not in this suite: they never fail" {
	baseline_here
	# a step that runs 2 of the baseline's 5 points (the demo: gpu H100, mode run)
	for mode in run gate; do
		config "{\"suites\":\"suite.yml\",\"gpu\":\"H100\",\"mode\":\"${mode}\",\"filter\":\"^latency_llama\"}"
		run "${PERFGATE}" buildkite
		assert_success
		assert_output --partial "+++ perfgate: H100: no regressions in 2 tests (exit 0)"
		run "${PYTHON}" -c 'import json; v = json.load(open("results/verdict.json")); print(v["verdict"], sorted(v["not_in_suite"]), v["summary"]["missing"])'
		assert_output "pass ['latency_mixtral8x7B_tp2', 'throughput_llama70B_tp4', 'throughput_llama8B_tp1'] 0"
	done
	# planned and not produced is still missing: a point that failed
	config '{"suites":"suite.yml","gpu":"H100","mode":"gate","filter":"^latency_llama"}'
	FAKE_BENCH_FAIL=latency_llama8B_tp1 run "${PERFGATE}" buildkite
	assert_equal "${status}" 3
	assert_output --partial "+++ perfgate: H100: results missing or failed for 1 of 2 tests (exit 3)"
	# run mode never fails on a verdict: a regression there warns, exit 0
	config '{"suites":"suite.yml","gpu":"H100","mode":"run","filter":"^latency_llama"}'
	FAKE_BENCH_FACTOR=1.3 run "${PERFGATE}" buildkite
	assert_success
	assert_output --partial "+++ perfgate: H100: 2 of 2 tests regressed (2 metrics) — run mode: not failing the step (exit 0)"
}

@test "a gate whose GPU has no thresholds file stops before anything runs: exit 2, with did you mean" {
	suite_here
	# no thresholds at all: how to make the first file
	config '{"suites":"suite.yml","gpu":"H100"}'
	run "${PERFGATE}" buildkite
	assert_equal "${status}" 2
	assert_output "perfgate buildkite: step ':h100: perf': gpu 'H100': no thresholds file thresholds/H100.yml (there is no thresholds directory): a gate compares with the GPU's baselines. Fix gpu, or make the file from a first run (mode: run, then perfgate baseline update thresholds --gpu H100 --from <results-dir>), or use baseline: git"
	assert_dir_not_exists results
	assert_equal "$(cat "${CALLS}")" ""
	# a misspelt GPU: --check says it before anything is pushed, the step
	# before anything runs
	mkdir thresholds
	cp "${PLUGIN_DIR}/thresholds/H100.yml" "${PLUGIN_DIR}/thresholds/A100.yml" thresholds/
	for gpu in H1OO H10 h1oo; do
		config "{\"suites\":\"suite.yml\",\"gpu\":\"${gpu}\"}"
		run "${PERFGATE}" buildkite --check
		assert_equal "${status}" 2
		assert_output --partial "no thresholds file thresholds/"
		assert_output --partial "(did you mean H100?)"
		run "${PERFGATE}" buildkite
		assert_equal "${status}" 2
		assert_output --partial "(did you mean H100?)"
		refute_output --partial "perfgate run"
	done
	assert_dir_not_exists results
	# a GPU in lower case is the same GPU: H100's file
	config '{"suites":"suite.yml","gpu":"h100","filter":"^latency_llama8B"}'
	run "${PERFGATE}" buildkite --check
	assert_success
	# a file named in lower case is not found, and the message says why
	mv thresholds/A100.yml thresholds/a100.yml
	config '{"suites":"suite.yml","gpu":"A100"}'
	run "${PERFGATE}" buildkite --check
	assert_equal "${status}" 2
	assert_output --partial "(thresholds/a100.yml is not it: a GPU's key is its model in capitals, rename the file A100.yml)"
	# a step that does not gate runs without one, and says what is unknown
	config '{"suites":"suite.yml","gpu":"H10","mode":"run","filter":"^latency_llama8B"}'
	run "${PERFGATE}" buildkite
	assert_success
	assert_output --partial "perfgate: warning: gpu 'H10': not a GPU perfgate knows, and there is no thresholds/H10.yml (did you mean H100?)"
	grep -qF -- "- gpu 'H10': not a GPU perfgate knows" results/annotation.md
	# the generated steps of a pipeline step gate on each of its GPUs
	config '{"suites":"suite.yml","mode":"pipeline","gpus":["H100","H2OO"]}'
	run "${PERFGATE}" buildkite --check
	assert_equal "${status}" 2
	assert_output --partial "gpu 'H2OO': no thresholds file thresholds/H2OO.yml (did you mean H200?)"
}

@test "a gate on an agent where no GPU is found and none is configured: exit 2 before the run" {
	suite_here
	export PATH="$(path_without nvidia-smi):${SHIMS}"
	config '{"suites":"suite.yml"}'
	run "${PERFGATE}" buildkite
	assert_equal "${status}" 2
	assert_output "perfgate buildkite: step ':h100: perf': no GPU detected ('nvidia-smi' not found on PATH) and none configured: a gate compares with a GPU's baselines; set the gpu option"
	assert_dir_not_exists results
}

@test "a dataset file that is not there: --check and the step stop before a server starts, exit 2" {
	cat >suite.yml <<'EOF'
serving:
  - name: serving_sharegpt
    model: m
    server: {command: "perfgate mock-server --port {port} --model {model}", ready: /health}
    dataset: {name: sharegpt, path: data/ShareGPT_V3_unfiltered_cleaned_split.json}
EOF
	mkdir thresholds
	cp "${PLUGIN_DIR}/thresholds/H100.yml" thresholds/
	config '{"suites":"suite.yml","gpu":"H100"}'
	local want="perfgate buildkite: step ':h100: perf': suite.yml:2: test 'serving_sharegpt': dataset file 'data/ShareGPT_V3_unfiltered_cleaned_split.json': not found (relative to ${WORK}, where perfgate runs); perfgate run --fetch-datasets (the step's fetch-datasets: true) fetches it from https://huggingface.co/datasets/anon8231489123/ShareGPT_Vicuna_unfiltered/resolve/main/ShareGPT_V3_unfiltered_cleaned_split.json and checks its sha256"
	run "${PERFGATE}" buildkite --check
	assert_equal "${status}" 2
	assert_output "${want}"
	run "${PERFGATE}" buildkite
	assert_equal "${status}" 2
	assert_output "${want}"
	assert_dir_not_exists results
	assert_equal "$(cat "${CALLS}")" ""
	# a step that fetches its datasets checks them once fetched
	config '{"suites":"suite.yml","gpu":"H100","fetch-datasets":true}'
	run "${PERFGATE}" buildkite --check
	assert_equal "${status}" 0
	# the fan-out's own step needs no dataset: its steps, on the GPU
	# agents, check theirs
	config '{"suites":"suite.yml","mode":"pipeline","gpus":["H100"]}'
	run "${PERFGATE}" buildkite --check
	assert_success
	# a directory in its place is no better
	mkdir -p data/ShareGPT_V3_unfiltered_cleaned_split.json
	config '{"suites":"suite.yml","gpu":"H100"}'
	run "${PERFGATE}" buildkite --check
	assert_equal "${status}" 2
	assert_output --partial "dataset file 'data/ShareGPT_V3_unfiltered_cleaned_split.json': a directory, not a file"
}

@test "a server command without {port}: the step says so at once, exit 2" {
	mkdir thresholds
	cp "${PLUGIN_DIR}/thresholds/H100.yml" thresholds/
	config '{"gpu":"H100","suites":{"serving":[{"name":"serving_fixed_port","model":"m","server":{"command":"vllm serve {model} --port 8000"}}]}}'
	for flag in --check ""; do
		# shellcheck disable=SC2086 # no flag is no word
		run "${PERFGATE}" buildkite ${flag}
		assert_equal "${status}" 2
		assert_output --partial "suites.serving[0].server.command: the server command has no {port}: perfgate starts it on a free loopback port and waits for it there, so the command must listen on it (e.g. --port {port}); a server already running on a fixed port is server.remote: http://127.0.0.1:8000"
	done
	assert_equal "$(cat "${CALLS}")" ""
}

# ---- git history: recorded on the default branch, compared at the
# merge-base on a pull request ----

repo_here() {
	suite_here
	git init -q -b main .
	git -c user.name=t -c user.email=t@t add suite.yml fake-bench.sh
	git -c user.name=t -c user.email=t@t commit -qm base
	export BUILDKITE_COMMIT="$(git rev-parse HEAD)" BUILDKITE_BRANCH=main
	export BUILDKITE_PIPELINE_DEFAULT_BRANCH=main
}

@test "record-history records green runs on the default branch only" {
	repo_here
	config '{"suites":"suite.yml","gpu":"H100","baseline":"git","record-history":true}'
	run "${PERFGATE}" buildkite
	assert_success
	assert_output --partial "perfgate: recorded 5 points in the H100 history"
	run git log --oneline refs/perfgate/history
	assert_equal "${#lines[@]}" 1
	export BUILDKITE_BRANCH=feature/x
	run "${PERFGATE}" buildkite
	assert_output --partial "perfgate: not recording history: feature/x is not the default branch main"
	export BUILDKITE_BRANCH=feature/x BUILDKITE_PULL_REQUEST=12 BUILDKITE_PULL_REQUEST_BASE_BRANCH=main
	# (a pull request reads the history from history-repo, never from a
	# ref any job on this agent can write: docs/trust.md)
	config "{\"suites\":\"suite.yml\",\"gpu\":\"H100\",\"baseline\":\"git\",\"record-history\":true,\"history-repo\":\"${PWD}\"}"
	run "${PERFGATE}" buildkite
	assert_output --partial "perfgate: not recording history: a pull request is not the default branch main"
	run git log --oneline refs/perfgate/history
	assert_equal "${#lines[@]}" 1
}

@test "a nightly follows main after it regresses: the night it happened fails, the next warns, then it is the level" {
	repo_here
	config '{"suites":"suite.yml","gpu":"H100","baseline":"git","record-history":true,"annotate":"never","artifacts":false}'
	for i in 1 2 3 4 5; do
		BUILDKITE_BUILD_URL="https://buildkite.com/acme/perf/builds/$i" run "${PERFGATE}" buildkite
		assert_success
	done
	# main regresses: the night fails, confirmed, and is recorded with
	# what regressed (only recording passing nights froze the history
	# here, and every later night failed)
	BUILDKITE_BUILD_URL=https://buildkite.com/acme/perf/builds/6 FAKE_BENCH_FACTOR=1.3 run "${PERFGATE}" buildkite
	assert_equal "${status}" 1
	assert_output --partial "perfgate: recorded 5 points in the H100 history"
	run git log -1 --format=%H refs/perfgate/history
	git show "${output}" --stat >/dev/null
	run git grep -h -o '"regressed": *"[^"]*"' refs/perfgate/history
	assert_output --partial "median_latency_ms"
	# the next night at that level: main's known change, a warning
	BUILDKITE_BUILD_URL=https://buildkite.com/acme/perf/builds/7 FAKE_BENCH_FACTOR=1.3 run "${PERFGATE}" buildkite
	assert_success
	assert_output --partial "with warnings"
	grep -q "main's known change" results/comparison.md
	# three nights at it: a change point of the history; the level
	# follows main, a clean pass (with a real run-to-run noise two
	# nights are enough: docs/gate.md, persist)
	BUILDKITE_BUILD_URL=https://buildkite.com/acme/perf/builds/8 FAKE_BENCH_FACTOR=1.3 run "${PERFGATE}" buildkite
	assert_success
	BUILDKITE_BUILD_URL=https://buildkite.com/acme/perf/builds/9 FAKE_BENCH_FACTOR=1.3 run "${PERFGATE}" buildkite
	assert_success
	assert_output --partial "+++ perfgate: H100: no regressions in 5 tests"
	# judged against the new level: no whole-run change, nothing of main's
	# known change left (the p90/p99 of 3 requests stay undecidable)
	! grep -q '^| Whole run' results/comparison.md
	! grep -q "known change" results/comparison.md
	! grep -q 'latency (ms) |.*| \(regressed\|not-reproduced\)' results/comparison.md
	# and a further regression from the new level still fails
	BUILDKITE_BUILD_URL=https://buildkite.com/acme/perf/builds/10 FAKE_BENCH_FACTOR=1.6 run "${PERFGATE}" buildkite
	assert_equal "${status}" 1
}

@test "trends: the GPU's history rendered with the build's run, uploaded with the artifacts" {
	repo_here
	config '{"suites":"suite.yml","gpu":"H100","baseline":"git","record-history":true,"trends":true}'
	for i in 1 2; do
		BUILDKITE_BUILD_URL="https://buildkite.com/acme/perf/builds/$i" run "${PERFGATE}" buildkite
		assert_success
	done
	assert_output --partial "perfgate: trends: 5 test points in results/trends/H100/all.html"
	# one page, whole as one file: Buildkite serves each artifact at an
	# address of its own, where a link to another does not resolve
	run ls -R results/trends
	assert_output "results/trends:
H100

results/trends/H100:
all.html"
	grep -q '<a href="https://buildkite.com/acme/perf/builds/2">build</a>' results/trends/H100/all.html
	grep -q '>this build</text>' results/trends/H100/all.html
	[ "$(grep -c '^<section id="p-' results/trends/H100/all.html)" = 5 ]
	grep 'artifact upload' "${CALLS}" | tail -1 | grep -q 'results/trends/H100/all.html'
	run grep -c 'results/trends/H100/p/\|results/trends/index.html' "${CALLS}"
	assert_output 0
	# the annotation links the GPU's page
	grep -q '<a href="artifact://results/trends/H100/all.html">trends</a>' results/annotation.md
	# a regression its re-run reproduced: the page says what the
	# annotation says (the gate's own comparison, re-run included), in its
	# colour, not a verdict of its own without the re-run
	for i in 3 4 5; do
		BUILDKITE_BUILD_URL="https://buildkite.com/acme/perf/builds/$i" run "${PERFGATE}" buildkite
		assert_success
	done
	config '{"suites":"suite.yml","gpu":"H100","baseline":"git","trends":true}'
	FAKE_BENCH_FACTOR=1.3 run "${PERFGATE}" buildkite
	assert_equal "${status}" 1
	headline=$(sed -n 's/^#### \(H100: .*regressed.*\)$/\1/p' results/annotation.md)
	[ -n "${headline}" ]
	grep -qF "With <b>this build</b>: <span class=\"bad\">perfgate: FAIL — ${headline}" results/trends/H100/all.html
	note=$(sed -n 's/^| latency_llama70B_tp4 | Median latency (ms) | .* | regressed: \(.*; reproduced by the re-run (30% worse)\) |$/\1/p' \
		results/annotation.md)
	[ -n "${note}" ]
	note=$(printf '%s' "${note}" | sed "s/'/\&#39;/g") # as HTML writes it
	grep -qF "<p class=\"muted\">${note}</p>" results/trends/H100/all.html
	! grep -q 'not confirmed by a re-run' results/trends/H100/all.html
	# without a history in git: a warning, the verdict stands
	config '{"suites":"suite.yml","gpu":"H100","mode":"run","trends":true}'
	run "${PERFGATE}" buildkite
	assert_output --partial "perfgate: warning: trends: needs baseline: git or record-history"
}

@test "a pull request is compared with the base branch's history at the merge-base" {
	repo_here
	config '{"suites":"suite.yml","gpu":"H100","baseline":"git","record-history":true,"annotate":"never","artifacts":false}'
	# five builds (one record per build: each has its own URL)
	for i in 1 2 3 4 5; do
		BUILDKITE_BUILD_URL="https://buildkite.com/acme/perf/builds/$i" run "${PERFGATE}" buildkite
		assert_success
	done
	# main moves on after the PR branched: its newer (slower) records are
	# not the PR's baseline
	git checkout -q -b pr
	echo "# pr" >>suite.yml
	git -c user.name=t -c user.email=t@t commit -qam pr
	git checkout -q main
	echo "# main" >>fake-bench.sh
	git -c user.name=t -c user.email=t@t commit -qam later
	export BUILDKITE_COMMIT="$(git rev-parse HEAD)"
	# recorded without a comparison (mode run, no thresholds file: still
	# recorded), 50% slower
	config '{"suites":"suite.yml","gpu":"H100","mode":"run","record-history":true,"annotate":"never","artifacts":false}'
	BUILDKITE_BUILD_URL=https://buildkite.com/acme/perf/builds/6 FAKE_BENCH_FACTOR=1.5 run "${PERFGATE}" buildkite
	assert_output --partial "perfgate: recorded 5 points in the H100 history"
	run git log --oneline refs/perfgate/history
	assert_equal "${#lines[@]}" 6
	git checkout -q pr
	export BUILDKITE_COMMIT="$(git rev-parse HEAD)" BUILDKITE_BRANCH=pr
	export BUILDKITE_PULL_REQUEST=12 BUILDKITE_PULL_REQUEST_BASE_BRANCH=main
	: >"${CALLS}"
	config "{\"suites\":\"suite.yml\",\"gpu\":\"H100\",\"baseline\":\"git\",\"history-repo\":\"${PWD}\"}"
	run "${PERFGATE}" buildkite
	assert_success
	assert_output --partial "H100: no regressions in 5 tests"
	FAKE_BENCH_FACTOR=1.3 run "${PERFGATE}" buildkite
	assert_equal "${status}" 1
	run grep -o "baseline [^·]*" results/annotation.md
	assert_output --partial "$(git merge-base pr main | cut -c1-7)"
	# each regression's trend against the history: written with the
	# comparison, uploaded, first among the annotation's charts
	local chart
	chart="$(grep -o '](evidence/[^)]*\.svg)' results/comparison.md | head -1 | sed 's/^](//; s/)$//')"
	[ -n "${chart}" ]
	assert_file_exist "results/${chart}"
	grep 'artifact upload' "${CALLS}" | tail -1 | grep -qF "results/${chart}"
	run grep -o '<img src="[^"]*"' results/annotation.md
	assert_line --index 0 "<img src=\"artifact://results/${chart}\""
	# the evidence in the annotation, with the regression's result and log:
	# every file it links was uploaded, within Buildkite's ten references
	grep -q '^\*\*Evidence\*\*$' results/annotation.md
	local linked
	linked="$(grep '^- `' results/annotation.md | grep -o 'href="artifact://[^"]*"' | sed 's/^href="artifact:\/\///; s/"$//')"
	grep -q '\.json$' <<<"${linked}"
	grep -q '\.log$' <<<"${linked}"
	while read -r f; do
		assert_file_exist "${f}"
		grep 'artifact upload' "${CALLS}" | tail -1 | sed 's/\\;/\n/g; s/ /\n/g' | grep -qxF "${f}" || { echo "not uploaded: ${f}"; return 1; }
	done <<<"${linked}"
	[ "$(grep -o 'artifact://' results/annotation.md | wc -l)" -le 10 ]
	# comparison.md links the same files, relative to itself
	grep -q ' Files: \[result\]([^)/]*\.json) · \[server log\](' results/comparison.md
}

@test "baseline: git without a history: a pull request stops before the run, exit 3; main says it is building it" {
	repo_here
	local hist="${BATS_TEST_TMPDIR}/history.git"
	git init -q --bare "${hist}"
	git checkout -q -b pr
	# the pull request's history-repo has no runs: the default branch's
	# step never recorded there
	export BUILDKITE_BRANCH=pr BUILDKITE_PULL_REQUEST=12 BUILDKITE_PULL_REQUEST_BASE_BRANCH=main
	config '{"suites":"suite.yml","gpu":"H100","baseline":"git","history-repo":"'"${hist}"'"}'
	run "${PERFGATE}" buildkite
	assert_equal "${status}" 3
	assert_output "perfgate buildkite: step ':h100: perf': baseline: git: history-repo has no runs of H100 (refs/perfgate/history is missing or empty): nothing to compare this pull request with. Record them on the default branch, into the same history-repo (a step with record-history: true)"
	assert_dir_not_exists results
	assert_equal "$(cat "${CALLS}")" ""
	# main builds the history, and the headline says how far it got
	git checkout -q main
	export BUILDKITE_BRANCH=main BUILDKITE_PULL_REQUEST=false
	unset BUILDKITE_PULL_REQUEST_BASE_BRANCH
	config '{"suites":"suite.yml","gpu":"H100","baseline":"git","history-repo":"'"${hist}"'"}'
	run "${PERFGATE}" buildkite
	assert_success
	assert_output --partial "+++ perfgate: H100: no history yet: 0 of 5 runs, and this step records none (record-history is off) (5 tests ran, none judged) (exit 0)"
	config '{"suites":"suite.yml","gpu":"H100","baseline":"git","record-history":true,"history-repo":"'"${hist}"'"}'
	for i in 1 2; do
		: >"${CALLS}"
		BUILDKITE_BUILD_URL="https://buildkite.com/acme/perf/builds/$i" run "${PERFGATE}" buildkite
		assert_success
		assert_output --partial "+++ perfgate: H100: no history yet: building it, $i of 5 runs (5 tests ran, none judged) (exit 0)"
	done
	run head -1 results/annotation.md
	assert_output "#### H100: no history yet: building it, 2 of 5 runs (5 tests ran, none judged)"
	run cat "${CALLS}"
	assert_line --index 0 "buildkite-agent annotate --context perfgate-H100-perf-h100 --style warning"
	# the pull request now has runs to compare with, too few to judge: a
	# warning that says so, not an error
	git checkout -q pr
	export BUILDKITE_BRANCH=pr BUILDKITE_PULL_REQUEST=12 BUILDKITE_PULL_REQUEST_BASE_BRANCH=main
	config '{"suites":"suite.yml","gpu":"H100","baseline":"git","history-repo":"'"${hist}"'"}'
	run "${PERFGATE}" buildkite
	assert_success
	assert_output --partial "+++ perfgate: H100: no history yet: 2 of 5 runs at the merge-base (5 tests ran, none judged) (exit 0)"
	# runs of another GPU only: said which
	config '{"suites":"suite.yml","gpu":"A100","baseline":"git","history-repo":"'"${hist}"'"}'
	run "${PERFGATE}" buildkite
	assert_equal "${status}" 3
	assert_output --partial "history-repo has no runs of A100 (it has runs of H100)"
}

@test "the step's key is no secret: the label and the context show it; a secret in the label is still hidden" {
	results
	export BUILDKITE_STEP_KEY=nightly BUILDKITE_LABEL="nightly perf"
	config '{"mode":"report","gpu":"H100"}'
	run "${PERFGATE}" buildkite
	assert_success
	grep -qF 'step nightly perf' results/annotation.md
	run grep -c '\*\*\*' results/annotation.md
	assert_output 0
	run cat "${CALLS}"
	assert_line --index 0 "buildkite-agent annotate --context perfgate-H100-nightly --style success"
	export HF_TOKEN=hf_abcdefghijklmnop BUILDKITE_LABEL="nightly perf hf_abcdefghijklmnop"
	run "${PERFGATE}" buildkite
	assert_success
	grep -qF 'step nightly perf ***' results/annotation.md
	run grep -c hf_abcdefghijklmnop results/annotation.md
	assert_output 0
}

@test "files an earlier job left in the results directory are neither reported nor uploaded, and stay" {
	suite_here
	# an earlier job's points (four of them not in this suite) and chart
	results
	mkdir -p results/charts
	echo '<svg/>' >results/charts/old-sweep.svg
	touch -d '1 hour ago' results/* results/charts/*
	config '{"suites":"suite.yml","gpu":"H100","mode":"run"}'
	run "${PERFGATE}" buildkite
	assert_success
	assert_output --regexp "perfgate: results holds [0-9]+ files from before this job \(an earlier job's on this agent\?\): neither reported nor uploaded, left as they are"
	assert_output --partial "+++ perfgate: H100: 5 tests ran, no baseline comparison (exit 0)"
	run grep -c '^| serving_' results/benchmark_results.md
	assert_output 0
	run grep 'artifact upload' "${CALLS}"
	assert_output --partial "results/latency_llama8B_tp1.json"
	refute_output --partial "serving_llama8B"
	refute_output --partial "old-sweep.svg"
	assert_file_exists results/serving_llama8B_tp1_sharegpt_qps_1.json
	assert_file_exists results/charts/old-sweep.svg
}

# ---- perfgate pipeline on the command line ----

@test "perfgate pipeline: GPUs from the thresholds files, the plugin from the environment" {
	suite_here
	mkdir thresholds && : >thresholds/A100.yml && : >thresholds/H100.yml
	run "${PERFGATE}" pipeline suite.yml
	assert_equal "${status}" 2
	assert_output --partial "which plugin should the steps use? pass --plugin"
	PERFGATE_PLUGIN='acme/perfgate#v1.2.3' run "${PERFGATE}" pipeline suite.yml --shards 2
	assert_success
	assert_output --partial '      - "acme/perfgate#v1.2.3":'
	run grep -c '^  - label: "perfgate ' <<<"${output}"
	assert_output 6   # A100 and H100: 2 shards each, then a merge step each
	run "${PERFGATE}" pipeline suite.yml --gpus H100 --shards 9 --plugin 'acme/perfgate#v1'
	assert_equal "${status}" 2
	assert_output "perfgate pipeline: --shards 9: the suite has 5 tests"
}

@test "a buildkite-agent call that hangs is cut off: a warning, the verdict's exit code stands" {
	results
	config '{"mode":"report","gpu":"H100"}'
	# annotate never returns (a sleep named by a marker); the other calls answer
	local marker="hung-agent-$$-${RANDOM}"
	cat >"${SHIMS}/buildkite-agent" <<SHIM
#!/bin/bash
[ "\$1" = annotate ] && exec -a "${marker}" sleep 60
exit 0
SHIM
	export PERFGATE_AGENT_TIMEOUT=1
	local start=${SECONDS}
	run "${PERFGATE}" buildkite
	assert_success
	assert_output --partial "perfgate: warning: annotation failed: buildkite-agent annotate did not finish within 1 s (PERFGATE_AGENT_TIMEOUT)"
	[ $((SECONDS - start)) -lt 15 ]
	# nothing of the hung call is left
	run pgrep -f "${marker}"
	assert_failure
}

@test "links in the results directory are neither read, uploaded nor written through" {
	results
	local outside="${BATS_TEST_TMPDIR}/outside"
	mkdir -p "${outside}/charts" "${outside}/confirm"
	echo "root-secret-token-of-the-agent" >"${outside}/token"
	# what a hostile server could leave behind: a result that is a link to
	# another file, charts/ as a link to another directory
	ln -s "${outside}/token" results/stolen.json
	ln -s "${outside}/token" results/stolen.commands
	ln -s "${outside}/charts" results/charts
	config '{"mode":"report","gpu":"H100"}'
	run "${PERFGATE}" buildkite
	# the charts are not written, and that is said
	assert_output --partial "results/charts: a symbolic link, not written through"
	assert_output --partial "results/charts: a symbolic link, not uploaded"
	run ls -A "${outside}/charts"
	assert_output ""
	# the link's target is nowhere: not in the annotation, not in any file
	run grep -rl "root-secret-token" results/annotation.md "${CALLS}" "${CALLS}".*
	assert_failure
	# (grep -r reads no link it finds: only the files perfgate wrote)
	run grep -rl "root-secret-token" results/
	assert_failure
	# not uploaded: every uploaded path is a regular file, none the links
	run grep 'artifact upload' "${CALLS}"
	assert_success
	refute_output --partial "stolen"
	refute_output --partial "charts/"
}

@test "a confirm/ link planted by the first run is not written through by the re-run" {
	baseline_here
	local outside="${BATS_TEST_TMPDIR}/outside"
	mkdir -p "${outside}" results
	ln -s "${outside}" results/confirm
	config '{"suites":"suite.yml","gpu":"H100"}'
	FAKE_BENCH_FACTOR=1.3 run "${PERFGATE}" buildkite
	assert_output --partial "perfgate: confirmation failed: results/confirm: a symbolic link, not written through"
	run ls -A "${outside}"
	assert_output ""
	grep -q 'results/confirm: a symbolic link, not written through' results/annotation.md
}

@test "a GPU name is never a path: the option, the suite and results cannot reach outside thresholds/" {
	results
	mkdir -p thresholds
	# what `../../x` would open from thresholds/
	cp "${PLUGIN_DIR}/thresholds/H100.yml" "${BATS_TEST_TMPDIR}/x.yml"
	config '{"mode":"report","gpu":"../../x"}'
	run "${PERFGATE}" buildkite
	assert_equal "${status}" 2
	assert_output --partial "option 'gpu': '../../x': a GPU name cannot be a path"
	printf 'gpu: ../../x\nlatency:\n  - name: l\n    model: m\n    command: "true {result}"\n' >suite.yml
	config '{"mode":"run","suites":"suite.yml"}'
	run "${PERFGATE}" buildkite
	assert_equal "${status}" 2
	assert_output --partial "suite.yml:1:6: gpu: GPU name '../../x': a GPU name cannot be a path"
	PERFGATE_GPU=../../x run "${PERFGATE}" gate results
	assert_equal "${status}" 2
	assert_output --partial "PERFGATE_GPU '../../x': a GPU name cannot be a path"
	# results that say so are data: their GPU becomes a key that names a
	# file in thresholds/, and the gate looks for that one
	"${PYTHON}" - <<'PY'
import glob, json
for p in glob.glob("results/*.json"):
    r = json.load(open(p))
    if "perfgate" in r:
        r["perfgate"]["gpu"] = {"key": "../../x", "label": "../../x", "name": "../../x", "count": 1}
        json.dump(r, open(p, "w"))
PY
	rm -f results/*.commands
	run "${PERFGATE}" gate results
	assert_equal "${status}" 2
	assert_output --partial "thresholds/______x.yml: no thresholds file for ______x"
}

@test "long test names chart under capped file names, each its own and linked; a suite's are capped" {
	results
	local long_a long_b charts
	# 300 bytes each, the first 250 the same
	long_a="serving_$(printf 'x%.0s' $(seq 1 242))$(printf 'a%.0s' $(seq 1 50))"
	long_b="serving_$(printf 'x%.0s' $(seq 1 242))$(printf 'b%.0s' $(seq 1 50))"
	# results from elsewhere (an import, another tool) may carry any name;
	# and two tests whose names differ only where a file name cannot hold
	# them, or in case, would be one chart file
	"${PYTHON}" - "${long_a}" "${long_b}" "serving x|y" "serving_x_y" "SERVING_X_Y" <<'PY'
import json, sys
for k, test in enumerate(sys.argv[1:]):
    for q in ("1", "4"):  # two rates: a sweep, charted on its own
        r = json.load(open("results/serving_llama8B_tp1_sharegpt_qps_%s.json" % q))
        r["perfgate"]["test"] = test
        json.dump(r, open("results/t%d_qps_%s.json" % (k, q), "w"))
PY
	config '{"mode":"report","gpu":"H100"}'
	run "${PERFGATE}" buildkite
	assert_success
	refute_output --partial "File name too long"
	refute_output --partial "warning"
	run ls results/charts
	# six sweeps (the five and the original's), its frontier, a latency
	# and a throughput chart
	[ "$(ls results/charts | wc -l)" = 9 ]
	[ "$(ls results/charts | tr A-Z a-z | sort -u | wc -l)" = 9 ]
	charts=$(ls results/charts)
	[ "$(grep -cE "^serving_x{175}-[0-9a-f]{16}\.svg$" <<<"${charts}")" = 2 ]
	[ "$(grep -cE "^serving_x_y-[0-9a-f]{8}\.svg$" <<<"${charts}")" = 2 ]
	[ "$(grep -cE "^SERVING_X_Y-[0-9a-f]{8}\.svg$" <<<"${charts}")" = 1 ]
	# each sweep linked from the annotation; the bars, past its 10
	# artifact links, counted there
	for f in $(grep -v -e '^latency.svg$' -e '^throughput.svg$' <<<"${charts}"); do
		grep -qF "artifact://results/charts/${f}" results/annotation.md
	done
	grep -q "2 more charts in the artifacts" results/annotation.md
	# a suite cannot name a test so long that its result files could not be written
	printf 'latency:\n  - name: %s\n    model: m\n    command: "true {result}"\n' "${long_a}" >suite.yml
	run "${PERFGATE}" run --dry-run suite.yml
	assert_equal "${status}" 2
	assert_output --partial "cannot name result files: at most 128 characters"
}
