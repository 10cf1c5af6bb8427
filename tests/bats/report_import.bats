#!/usr/bin/env bats
# perfgate report and perfgate import as a user runs them: files written,
# what is printed, exit codes, and nothing written on bad input.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load '/usr/lib/bats/bats-file/load'

bats_require_minimum_version 1.5.0

REF="$PERFGATE_TESTS/data/reference"
DATA="$PERFGATE_TESTS/data/import"

setup() {
	TMP="$(mktemp -d)"
	cd "$TMP"
}

teardown() {
	rm -rf "$TMP"
}

@test "report: results/ by default, files next to the results, paths on stdout" {
	mkdir results
	cp "$DATA"/serving_llama8B_tp1_sharegpt_qps_4.* "$DATA"/latency_llama8B_tp1.* results/
	run "$PERFGATE_BIN" report
	assert_success
	assert_output $'results/benchmark_results.md\nresults/benchmark_results.json\nresults/benchmark_results_inferencex.json'
	assert_file_exists results/benchmark_results.md
	run grep -c '^| serving_llama8B_tp1_sharegpt_qps_4 | 8xH100 |' results/benchmark_results.md
	assert_output 1
	run /usr/bin/python3 -c 'import json,sys; r=json.load(open("results/benchmark_results.json")); print(len(r), r[0]["Test name"])'
	assert_output "2 latency_llama8B_tp1"
}

@test "report: -o writes elsewhere and creates the directory" {
	mkdir in
	cp "$DATA"/throughput_llama8B_tp1.* in/
	run "$PERFGATE_BIN" report in -o out/deep
	assert_success
	assert_file_exists out/deep/benchmark_results.md
	assert_file_exists out/deep/benchmark_results.json
	assert_file_not_exists in/benchmark_results.md
}

@test "report: an empty directory gives a report with empty sections and a warning" {
	mkdir empty
	run "$PERFGATE_BIN" report empty
	assert_success
	assert_line --partial "no results in empty"
	run grep -c 'No serving results.' empty/benchmark_results.md
	assert_output 1
}

@test "report: a missing directory is an infrastructure failure (exit 3)" {
	run "$PERFGATE_BIN" report nowhere
	assert_failure 3
	assert_output "perfgate report: nowhere: no such results directory"
}

@test "report: a broken result file is named with line and column (exit 2)" {
	mkdir results
	printf '{"completed": 1,\n "request_throughput": }\n' > results/serving_x_qps_1.json
	run "$PERFGATE_BIN" report results
	assert_failure 2
	assert_output --regexp '^perfgate report: results/serving_x_qps_1.json:2:[0-9]+: '
	assert_file_not_exists results/benchmark_results.md
}

@test "report: failed points are counted on stderr and marked in the table" {
	mkdir results
	echo '{"perfgate": {"suite": "serving", "status": "error", "error": "server never ready"}}' > results/serving_x_qps_1.json
	echo '{"completed": 5, "request_throughput": 1.5}' > results/serving_x_qps_2.json
	run "$PERFGATE_BIN" report results
	assert_success
	assert_line "perfgate report: 1 of 2 points did not complete (marked in the report)"
	run grep -c 'serving_x_qps_1 — \*\*error\*\*: server never ready' results/benchmark_results.md
	assert_output 1
}

@test "report: unknown option and too many directories are usage errors" {
	run "$PERFGATE_BIN" report --fromat x
	assert_failure 2
	run "$PERFGATE_BIN" report a b
	assert_failure 2
	assert_output "perfgate report: unexpected argument 'b' (expected one results directory); see 'perfgate report --help'"
}

@test "report --help and import --help" {
	run "$PERFGATE_BIN" report --help
	assert_success
	assert_output --partial "-o, --output OUTDIR"
	run "$PERFGATE_BIN" import --help
	assert_success
	assert_output --partial "--gpu NAME"
}

@test "import: llm-d records into results/, named from their metadata, then a report" {
	run "$PERFGATE_BIN" import "$REF/llmd-results-sample.json"
	assert_success
	assert_output "results: 2 results"
	assert_file_exists results/serving_Llama-3.1-8B-Instruct_no-features_qps_5.json
	assert_file_exists results/serving_Llama-3.1-8B-Instruct_no-features_qps_10.json
	run grep -E '"(test|point|format)":' results/serving_Llama-3.1-8B-Instruct_no-features_qps_5.json
	assert_line --index 0 --partial '"test": "serving_Llama-3.1-8B-Instruct_no-features",'
	assert_line --index 1 --partial '"point": "serving_Llama-3.1-8B-Instruct_no-features_qps_5",'
	assert_line --index 2 --partial '"format": "llm-d",'
	run "$PERFGATE_BIN" report
	assert_success
	run grep -c '| 4xNVIDIA_L40S |' results/benchmark_results.md
	assert_output 2
}

@test "import: several GPUs go to one directory each" {
	run "$PERFGATE_BIN" import "$REF/vllm-report-h100-h200-a100.md" -o res
	assert_success
	assert_output $'res/A100: 18 results\nres/H100: 18 results\nres/H200: 18 results'
	assert_file_exists res/H200/serving_llama8B_tp1_sharegpt_qps_inf.json
}

@test "import: a vLLM result keeps its name and its .commands sidecar" {
	run "$PERFGATE_BIN" import "$DATA/serving_llama8B_tp1_sharegpt_qps_4.json" -o r
	assert_success
	assert_file_exists r/serving_llama8B_tp1_sharegpt_qps_4.json
	assert_file_exists r/serving_llama8B_tp1_sharegpt_qps_4.commands
}

@test "import: --gpu names the GPU of printed blocks" {
	run "$PERFGATE_BIN" import --gpu 8xH100 "$REF/vllm-bench-serve-stdout-sample.txt" -o r
	assert_success
	run "$PERFGATE_BIN" report r
	run grep -c '| 8xH100 |' r/benchmark_results.md
	assert_output 2
}

@test "import: one bad file among good ones writes nothing (exit 2)" {
	printf '{"completed": 1, "request_throughput": 2}\n{"completed": "x"' > bad.jsonl
	run "$PERFGATE_BIN" import "$REF/llmd-results-sample.json" bad.jsonl -o out
	assert_failure 2
	assert_output "perfgate import: bad.jsonl:2:17: record 2: '}' expected near end of file"
	assert_not_exists out
}

@test "import: a missing input is a usage error (exit 2)" {
	run "$PERFGATE_BIN" import nothing.json
	assert_failure 2
	assert_output --partial "nothing.json"
	run "$PERFGATE_BIN" import
	assert_failure 2
	assert_output "perfgate import: expected input files; see 'perfgate import --help'"
}

@test "import: two results with one name are refused before writing" {
	cp "$REF/llmd-results-sample.json" a.json
	mkdir sub
	cp "$REF/llmd-results-sample.json" sub/a.json
	run "$PERFGATE_BIN" import a.json sub/a.json -o out
	assert_failure 2
	assert_output --partial "two results would be out/serving_Llama-3.1-8B-Instruct_no-features_qps_10.json: a.json (record 2) and sub/a.json (record 2), not repeats of one point (the same run twice); import them into different directories (-o)"
	assert_not_exists out
}

@test "import: llm-d report v0.1 and inference-perf reports are named and refused (exit 2, one line)" {
	run --separate-stderr "$PERFGATE_BIN" import "$DATA/real/benchmark_report,_br_v0_1_example.yaml" -o out
	assert_failure 2
	[ "$stderr" = "perfgate import: $DATA/real/benchmark_report,_br_v0_1_example.yaml:1:1: llm-d benchmark report version 0.1: perfgate reads version 0.2; import the benchmark_report_v0.2,_*.yaml beside it or the result file it was made from (benchmark-report -b 0.2 converts it)" ]
	run --separate-stderr "$PERFGATE_BIN" import "$DATA/real/inference_perf_stage_lifecycle_metrics.json" -o out
	assert_failure 2
	[ "$stderr" = "perfgate import: $DATA/real/inference_perf_stage_lifecycle_metrics.json:1:1: record 1: an inference-perf report, which perfgate does not import yet; import llm-d's benchmark_report_v0.2 made from it (benchmark-report -w inference-perf -b 0.2)" ]
	assert_not_exists out
}

# llm-d's experiment trees keep each repeated run of a configuration as a
# file of its own (same rate and model, minutes apart): one point, its
# runs the repeats, as `repeat: N` writes them, and the import says so.
@test "import: repeated runs of one point in an llm-d tree are that point's repeats" {
	cp -r "$DATA/tree-repeats" tree
	run --separate-stderr "$PERFGATE_BIN" import tree -o out
	assert_success
	assert_output "out: 1 result"
	[ "$(printf '%s\n' "$stderr" | tail -n 1)" = "perfgate import: serving_Llama-3.1-8B-Instruct_no-features_qps_5: 3 repeats of one point, from tree/llmd-repeats/L40S/no-features/benchmark_20250526-040420.json, tree/llmd-repeats/L40S/no-features/benchmark_20250526-045512.json and tree/llmd-repeats/L40S/no-features/benchmark_20250526-050604.json" ]
	run /usr/bin/python3 -c 'import json; r=json.load(open("out/serving_Llama-3.1-8B-Instruct_no-features_qps_5.json")); p=r["perfgate"]; print(len(p["repeats"]), [x["file"].rsplit("/",1)[1] for x in p["import"]["repeats"]], r["mean_ttft_ms"] == sorted(x["mean_ttft_ms"] for x in p["repeats"])[1])'
	assert_output "3 ['benchmark_20250526-040420.json', 'benchmark_20250526-045512.json', 'benchmark_20250526-050604.json'] True"
	# and the report reads it as one point
	run "$PERFGATE_BIN" report out -o rep
	assert_success
	run grep -c '^| serving_Llama-3.1-8B-Instruct_no-features_qps_5 |' rep/benchmark_results.md
	assert_output 1
}

# Records may carry any name; their files may not be longer than 255
# bytes. Two 300-byte tests that share their first 250 bytes stay two,
# each point file short enough, the points of one test under one name.
@test "import: 300-byte test names become distinct file names of one test each" {
	"${PERFGATE_PYTHON:-/usr/bin/python3}" "$PERFGATE_SRC/tests/bats/make_results.py" run
	"$PERFGATE_BIN" report run >/dev/null
	"${PERFGATE_PYTHON:-/usr/bin/python3}" - <<'PY'
import json
rows = json.load(open("run/benchmark_results.json"))
out = []
for tail in ("a", "b"):
    for r in rows:
        if r["Test name"].startswith("serving_"):
            r = dict(r, **{"Test name": "serving_" + "x" * 242 + tail * 50 +
                           r["Test name"][len("serving_llama8B_tp1_sharegpt"):]})
            out.append(r)
json.dump(out, open("long.json", "w"))
PY
	run "$PERFGATE_BIN" import long.json -o out
	assert_success
	assert_output "out: 8 results"
	[ "$(ls out/*.json | wc -l)" = 8 ]
	for f in out/*.json; do
		[ "$(basename "$f" | wc -c)" -le 206 ]
	done
	# one test name per long test, two in all, each with its four rates
	run "${PERFGATE_PYTHON:-/usr/bin/python3}" -c '
import collections, glob, json
tests = collections.Counter(json.load(open(f))["perfgate"]["test"] for f in glob.glob("out/*.json"))
print(sorted(tests.values()), len(set(t[:128] for t in tests)))'
	assert_output "[4, 4] 1"
}

@test "import: a glob or a directory of results skips perfgate's outputs and *.pytorch.json" {
	"$PERFGATE_BIN" import "$REF/vllm-report-h100-h200-a100.md" -o all >/dev/null
	mv all/H100 res
	"$PERFGATE_BIN" report res >/dev/null
	"$PERFGATE_BIN" compare res -q --thresholds "$PERFGATE_SRC/thresholds"
	echo '[{"benchmark": {"name": "vLLM benchmark"}, "metric": {"name": "x"}}]' \
		> res/serving_llama8B_tp1_sharegpt_qps_1.pytorch.json
	run --separate-stderr "$PERFGATE_BIN" import res/*.json -o out
	assert_success
	assert_output "out: 18 results"
	[ "$stderr" = "perfgate import: skipped res/benchmark_results.json: perfgate's report of the results beside it
perfgate import: skipped res/benchmark_results_inferencex.json: perfgate's dashboard rows of the results beside it
perfgate import: skipped res/serving_llama8B_tp1_sharegpt_qps_1.pytorch.json: a PyTorch benchmark-database file made from the result beside it
perfgate import: skipped res/verdict.json: perfgate's comparison of the results beside it" ]
	run --separate-stderr "$PERFGATE_BIN" import res -o out2
	assert_success
	assert_output "out2: 18 results"
	diff -r out out2
	# alone, a report's records are imported; the others are refused
	run "$PERFGATE_BIN" import res/benchmark_results.json -o out3
	assert_success
	assert_output "out3: 18 results"
	run "$PERFGATE_BIN" import res/verdict.json
	assert_failure 2
	assert_output "perfgate import: res/verdict.json:1:1: record 1: a perfgate verdict (verdict.json, the output of compare), not benchmark results"
	run "$PERFGATE_BIN" import res/serving_llama8B_tp1_sharegpt_qps_1.pytorch.json
	assert_failure 2
	assert_output --partial "a PyTorch benchmark-database record"
	mkdir empty
	run "$PERFGATE_BIN" import empty
	assert_failure 2
	assert_output "perfgate import: empty: no result files (.json, .jsonl, llm-d's benchmark_report*.yaml) in this directory or below it"
}

@test "import: a results tree, labels from its path, one directory per experiment" {
	mkdir -p runs/other/H200/base
	cp -r "$DATA/tree/llmd-sweep" runs/
	# a record of another experiment and GPU, and llm-d's report made from it
	cp "$DATA/serving_llama8B_tp1_sharegpt_qps_4.json" runs/other/H200/base/run_1.json
	cp "$DATA/real/benchmark_report_v0.2,_br_v0_2_example.yaml" \
		"runs/other/H200/base/benchmark_report_v0.2,_run_1.json.yaml"
	run --separate-stderr "$PERFGATE_BIN" import -o out runs
	assert_success
	assert_equal "$stderr" "perfgate import: skipped runs/other/H200/base/benchmark_report_v0.2,_run_1.json.yaml: llm-d's benchmark report of the result file beside it
perfgate import: runs/llmd-sweep/L40S/no-features/benchmark_20250526-040420.json: from its path: gpu L40S, experiment llmd-sweep, deployment no-features
perfgate import: runs/llmd-sweep/L40S/no-features/benchmark_20250526-040738.json: from its path: experiment llmd-sweep
perfgate import: runs/other/H200/base/run_1.json: from its path: gpu H200, experiment other, deployment base"
	assert_output $'out/llmd-sweep/L40S: 2 results\nout/other/H200: 1 result'
	assert_file_exists out/llmd-sweep/L40S/serving_Llama-3.1-8B-Instruct_no-features_qps_5.json
	# a vLLM record without a name of its own: named as llm-d names its
	# points, from the deployment its path gives
	run ls out/other/H200
	assert_output "serving_Llama-3.1-8B-Instruct_base_qps_4.json"
}

@test "import: a vllm bench sweep tree, a failed run said and reported, the rest noted" {
	run --separate-stderr "$PERFGATE_BIN" import "$DATA/sweep" -o out
	assert_success
	assert_output "out: 4 results"
	[[ "$stderr" == *"skipped $DATA/sweep/exp1/summary.csv: vllm bench sweep's table of the runs"* ]]
	[[ "$stderr" == *"/warmup.json: vllm bench sweep's warm-up run (run_number -1), not a measurement"* ]]
	[[ "$stderr" == *"SERVE--max_num_seqs=32-BENCH--max_concurrency=16_run_2 is a failed point (error): vllm bench sweep: CalledProcessError"* ]]
	[[ "$stderr" == *"SERVE-max_num_seqs=128-failure is a failed point (error): vllm bench sweep: TimeoutError"* ]]
	run "$PERFGATE_BIN" report out
	assert_success
	run grep -c "Not completed" out/benchmark_results.md
	assert_output 1
	# the summary's two runs are the point's samples
	run /usr/bin/python3 -c 'import json; r=json.load(open("out/SERVE--max_num_seqs=32-BENCH--max_concurrency=16.json")); print(len(r["perfgate"]["repeats"]), r["perfgate"]["import"]["sweep"]["run_numbers"])'
	assert_output "2 [0, 1]"
}

@test "import: vllm bench startup's result is a startup point in the report" {
	run "$PERFGATE_BIN" import "$DATA/startup/startup_llama8B_tp1.json" -o out --gpu H100
	assert_success
	run "$PERFGATE_BIN" report out
	assert_success
	run grep -c "^## Startup tests" out/benchmark_results.md
	assert_output 1
	run grep -c "^| startup_llama8B_tp1 | 1xH100 |" out/benchmark_results.md
	assert_output 1
}

@test "import: vllm bench startup's cold-start phases are kept and the report lists them" {
	run "$PERFGATE_BIN" import "$DATA/startup-phases.json" -o out --gpu H100
	assert_success
	run "$PERFGATE_BIN" report out
	assert_success
	run grep -F -- "- Cold-start phases, startup-phases: Worker init 1.20 s, Init device 0.31 s, Loading (GPU) 12.04 s, Allocate KV cache 0.80 s, Warmup (GPU) 2.10 s (16.46 s of 41.30 s wall clock; no span: Capture model)." out/benchmark_results.md
	assert_success
	run "${PERFGATE_PYTHON:-python3}" -c "import json; d = json.load(open('out/startup-phases.json')); print(len(d['phases']), d['phase_list_version'])"
	assert_output "6 1"
}

@test "import: vLLM's steady_state, energy and --metadata keys are kept; steady state and energy compared as their own metrics" {
	run "$PERFGATE_BIN" import "$DATA/serving-steady-energy.json" -o out --gpu H100
	assert_success
	run "$PERFGATE_BIN" report out
	assert_success
	# the whole run's numbers in the table, energy per token its column
	run grep -F "| serving-steady-energy | 1xH100 |" out/benchmark_results.md
	assert_success
	assert_output --regexp "\| +1011\.2 \|"
	assert_output --regexp "\| +0\.488477 \|$"
	run "${PERFGATE_PYTHON:-python3}" -c "import json; d = json.load(open('out/serving-steady-energy.json')); print(d['compilation_config.mode'], d['optimization_level'], d['steady_state']['completed'], d['energy_gpu_ids'])"
	assert_output "3 2 160 [0]"
	# against itself with the steady state 10% slower: only the
	# steady-state rows move
	"${PERFGATE_PYTHON:-python3}" - <<'PY'
import json
d = json.load(open("out/serving-steady-energy.json"))
d["steady_state"]["output_throughput"] *= 0.9
d["perfgate"]["import"]["source"] = "slower"
import os; os.makedirs("slow", exist_ok=True)
json.dump(d, open("slow/serving-steady-energy.json", "w"))
PY
	"$PERFGATE_BIN" baseline update thresholds --from out 2>/dev/null
	run "$PERFGATE_BIN" compare slow -o cmp -q
	assert_success
	run "${PERFGATE_PYTHON:-python3}" -c "
import json
rows = json.load(open('cmp/verdict.json'))['rows']
print(sorted((r['metric'], r['verdict']) for r in rows if r['verdict'] in ('regressed', 'improved')))"
	assert_output "[('steady_output_throughput', 'regressed')]"
}
