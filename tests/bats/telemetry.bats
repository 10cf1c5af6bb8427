#!/usr/bin/env bats
# Telemetry beside every result: the engine's /metrics (perfgate's mock
# server serves vLLM's names), GPUs read through a fake nvidia-smi or
# amd-smi on PATH, the flags a person reads, and the job health policy: a
# throttled job's regression is re-run, not failed.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	work_setup
	# a real NVML on the machine would win over the fakes
	export PERFGATE_GPU_TOOL=nvidia-smi
	export FAKE_SMI_STATE="${WORK}/throttled"
	FOREIGN_PID=
}

teardown() {
	if [ -n "${FOREIGN_PID}" ]; then kill "${FOREIGN_PID}" 2>/dev/null || true; fi
}

# A fake nvidia-smi: one H100, thermally throttled at 1200 of 1980 MHz
# while $FAKE_SMI_STATE exists, else at full clock; its compute apps are
# $FAKE_SMI_APPS (lines "GPU-fake0, pid, name, MiB").
fake_nvidia_smi() {
	cat >"${SHIMS}/nvidia-smi" <<'SMI'
#!/bin/bash
echo "nvidia-smi $*" >>"${FAKE_SMI_LOG:-/dev/null}"
case "$1" in
--query-gpu=name,memory.total) echo "NVIDIA H100 80GB HBM3, 81559 MiB" ;;
--query-gpu=memory.used) echo "0" ;;
--query-gpu=index,*)
	if [ -e "${FAKE_SMI_STATE}" ]; then
		echo "0, GPU-fake0, NVIDIA H100 80GB HBM3, 1200, 1980, 2619, 2619, 699.10, 700.00, 91, 99, 40, 70000, 81559, 0x0000000000000040, 0"
	else
		echo "0, GPU-fake0, NVIDIA H100 80GB HBM3, 1980, 1980, 2619, 2619, 512.00, 700.00, 61, 99, 40, 70000, 81559, 0x0000000000000000, 0"
	fi ;;
--query-compute-apps=*) printf '%s\n' "${FAKE_SMI_APPS:-}" ;;
*) echo "fake nvidia-smi: unexpected $*" >&2; exit 2 ;;
esac
SMI
	chmod +x "${SHIMS}/nvidia-smi"
}

mock_suite() {
	cat >suite.yml <<YML
defaults:
  model: perfgate-mock
  server:
    command: perfgate mock-server --port {port} --model {model} --ttft-ms 5 --itl-ms 2 --max-running 8 --kv-cache-tokens 2000 --prefix-hit 0.5 $1
    ready: /health
    ready_timeout: 30
    stop_timeout: 5
serving:
  - name: serving_tel
    dataset: random
    input_len: 200
    output_len: 60
    num_prompts: 48
    qps: [$2]
YML
}

json() {
	"${PYTHON}" -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"
}

@test "the engine's /metrics and a fake nvidia-smi: summary, flags, sidecar and timeline" {
	fake_nvidia_smi
	touch "${FAKE_SMI_STATE}"
	sleep 300 &
	FOREIGN_PID=$!
	export FAKE_SMI_APPS="GPU-fake0, ${FOREIGN_PID}, sleep, 2048"
	mock_suite "" inf
	# a proxy in the environment (a closed port) is not used: the scrape
	# goes to the server as the load does
	http_proxy=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 ALL_PROXY=http://127.0.0.1:9 \
		run --separate-stderr "${PERFGATE}" run suite.yml -o res
	assert_success
	r=res/serving_tel_qps_inf.json
	[ "$(json "$r" "d['perfgate']['telemetry']['engine']['name']")" = vllm ]
	# every prompt token was queried, half (in whole blocks) was cached
	[ "$(json "$r" "d['perfgate']['telemetry']['engine']['prefix_cache']['queries']")" = 9600 ]
	[ "$(json "$r" "d['perfgate']['telemetry']['engine']['prefix_cache']['hit_rate']")" = 0.48 ]
	[ "$(json "$r" "d['perfgate']['telemetry']['engine']['generation_tokens']")" = 2880 ]
	[ "$(json "$r" "d['perfgate']['telemetry']['engine']['window_exact']")" = True ]
	# a 2,000-token KV cache for eight 260-token sequences: preemptions
	[ "$(json "$r" "d['perfgate']['telemetry']['engine']['preemptions'] > 0")" = True ]
	[ "$(json "$r" "d['perfgate']['telemetry']['gpu']['source']")" = nvidia-smi ]
	[ "$(json "$r" "d['perfgate']['telemetry']['gpu']['devices'][0]['sm_clock_max_mhz']")" = 1980.0 ]
	[ "$(json "$r" "d['perfgate']['telemetry']['gpu']['devices'][0]['sm_clock_ratio']")" = "$(json "$r" "1200/1980")" ]
	[ "$(json "$r" "d['perfgate']['telemetry']['gpu']['devices'][0]['foreign_processes'][0]['pid']")" = "${FOREIGN_PID}" ]
	json "$r" "'\n'.join(d['perfgate']['telemetry']['flags'])" >flags
	grep -q "^GPU 0 SM clock at 61% of its maximum under load$" flags
	grep -q "^GPU 0 shared with pid ${FOREIGN_PID} (sleep, 2048 MiB)$" flags
	grep -qE "^[0-9]+ preemptions$" flags
	# the flags are in the log next to the point's outcome
	grep -q "telemetry: GPU 0 shared with pid ${FOREIGN_PID}" <<<"${stderr}"
	# the time series: a before and an after tick, the GPU in each
	head -1 res/serving_tel_qps_inf.telemetry.jsonl | grep -q '"phase":"before"'
	tail -1 res/serving_tel_qps_inf.telemetry.jsonl | grep -q '"phase":"after"'
	grep -q '"throttle":\["hw_thermal_slowdown"\]' res/serving_tel_qps_inf.telemetry.jsonl
	"${PYTHON}" -c "import pandas; df = pandas.read_json('res/serving_tel_qps_inf.telemetry.jsonl', lines=True); assert len(df) >= 2, df"
	grep -q "<svg" res/serving_tel_qps_inf.timeline.svg
	grep -q "KV-cache usage" res/serving_tel_qps_inf.timeline.svg
}

@test "a fake amd-smi: MI300X telemetry, thermal violation read as throttling" {
	cat >"${SHIMS}/amd-smi" <<'AMD'
#!/bin/bash
case "$1 $2" in
"metric --json") cat <<'J'
[{"gpu": 0, "usage": {"gfx_activity": {"value": 98, "unit": "%"}},
  "power": {"socket_power": {"value": 700, "unit": "W"}},
  "clock": {"gfx_0": {"clk": {"value": 1500, "unit": "MHz"}, "max_clk": {"value": 2100, "unit": "MHz"}}},
  "temperature": {"hotspot": {"value": 99, "unit": "C"}},
  "mem_usage": {"used_vram": {"value": 150000, "unit": "MB"}, "total_vram": {"value": 196592, "unit": "MB"}},
  "throttle": {"socket_thermal_violation_status": "ACTIVE"}}]
J
;;
"process --json") echo '[{"gpu": 0, "process_list": []}]' ;;
*) exit 2 ;;
esac
AMD
	chmod +x "${SHIMS}/amd-smi"
	export PERFGATE_GPU_TOOL=amd-smi
	mock_suite "" 50
	run --separate-stderr "${PERFGATE}" run suite.yml -o res --gpu "AMD Instinct MI300X OAM"
	assert_success
	r=res/serving_tel_qps_50.json
	[ "$(json "$r" "d['perfgate']['gpu']['key']")" = MI300X ]
	[ "$(json "$r" "d['perfgate']['telemetry']['gpu']['source']")" = amd-smi ]
	[ "$(json "$r" "d['perfgate']['telemetry']['gpu']['devices'][0]['temperature_c']['max']")" = 99.0 ]
	[ "$(json "$r" "'sw_thermal_slowdown' in d['perfgate']['telemetry']['gpu']['devices'][0]['throttle_seconds']")" = True ]
}

# The fake NVML (tests/tools/fake_nvml.c): one H100 whose energy counter
# rises by exactly FAKE_NVML_POWER_W joules a second; one point at rate inf
# to read it over.
fake_nvml() {
	export PERFGATE_GPU_TOOL=nvml LD_LIBRARY_PATH="${PERFGATE_BUILD}/tests/fake-nvml"
	[ -e "${LD_LIBRARY_PATH}/libnvidia-ml.so.1" ]
	mock_suite "" inf
}

@test "a fake NVML with a known energy counter: energy per output token under vLLM's names, reported and gate-able" {
	fake_nvml
	FAKE_NVML_POWER_W=500 run --separate-stderr "${PERFGATE}" run suite.yml -o cool --gpu H100
	assert_success
	r=cool/serving_tel_qps_inf.json
	[ "$(json "$r" "d['perfgate']['telemetry']['gpu']['source']")" = nvml ]
	# every reading is its own call's (not the one before's)
	[ "$(json "$r" "d['perfgate']['telemetry']['gpu']['devices'][0]['power_w']['median']")" = 500.0 ]
	[ "$(json "$r" "d['perfgate']['telemetry']['gpu']['devices'][0]['sm_clock_mhz']['median']")" = 1980.0 ]
	# the counter's rise over the window: 500 W within the time a read takes
	[ "$(json "$r" "abs(d['gpu_avg_power_w'] - 500) < 10")" = True ]
	[ "$(json "$r" "abs(d['gpu_energy_j'] - 500 * d['gpu_energy_duration_s']) < 1e-6 * d['gpu_energy_j'] + 10")" = True ]
	[ "$(json "$r" "d['gpu_energy_duration_s'] >= d['duration']")" = True ]
	[ "$(json "$r" "d['gpu_energy_per_output_token_j'] == d['gpu_energy_j'] / d['total_output_tokens']")" = True ]
	[ "$(json "$r" "d['energy_gpu_ids']")" = "[0]" ]
	grep -qF "Energy/out tok (J)" cool/benchmark_results.md
	grep -qF "GPU energy per output token." cool/benchmark_results.md
	# gate-able: a policy that gates it fails a GPU drawing four times the
	# power for the same tokens (the energy also follows each run's
	# length, which a busy machine varies: hence four times, not a
	# margin), and only warns on the energy itself
	"${PERFGATE}" baseline update thresholds --from cool 2>/dev/null
	sed -i 's/\(energy_per_out_token_j: *\){ gate: false, tolerance: 5%/\1{ gate: true, tolerance: 20%/' thresholds/H100.yml
	grep -q "energy_per_out_token_j: *{ gate: true, tolerance: 20%" thresholds/H100.yml
	FAKE_NVML_POWER_W=2000 run --separate-stderr "${PERFGATE}" run suite.yml -o hot --gpu H100
	assert_success
	[ "$(json hot/serving_tel_qps_inf.json "abs(d['gpu_avg_power_w'] - 2000) < 40")" = True ]
	run --separate-stderr "${PERFGATE}" compare hot -o cmp -q
	assert_success
	row() { json cmp/verdict.json "[(r['verdict'], r['outcome']) for r in d['rows'] if r['metric'] == '$1'][0]"; }
	[ "$(row energy_per_out_token_j)" = "('regressed', 'fail')" ]
	[ "$(row gpu_energy_j)" = "('regressed', 'warn')" ]
	[ "$(row gpu_avg_power_w)" = "('regressed', 'warn')" ]
}

@test "a fake NVML whose energy counter resets mid-point: no energy, and the log says why" {
	fake_nvml
	FAKE_NVML_RESET_AFTER_S=0.3 run --separate-stderr "${PERFGATE}" run suite.yml -o res --gpu H100
	assert_success
	r=res/serving_tel_qps_inf.json
	grep -qF "telemetry: GPU 0's energy counter went back during the point (reset): no energy for this point" <<<"${stderr}"
	[ "$(json "$r" "[k for k in d if 'energy' in k or 'power' in k]")" = "[]" ]
	[ "$(json "$r" "d['perfgate']['telemetry']['gpu']['energy']['energy_j']")" = None ]
	[ "$(json "$r" "d['perfgate']['telemetry']['gpu']['devices'][0]['energy_counter_reset']")" = True ]
}

@test "no /metrics and no GPU tool: one log line each, every point ok" {
	export PATH="$(path_without nvidia-smi amd-smi):${SHIMS}"
	unset PERFGATE_GPU_TOOL
	mock_suite "--no-metrics" "20, 40"
	run --separate-stderr "${PERFGATE}" run suite.yml -o res
	assert_success
	[ "$(grep -c 'telemetry: GET http://127.0.0.1:[0-9]*/metrics: HTTP 404: no engine telemetry from it' <<<"${stderr}")" = 1 ]
	[ "$(grep -c 'telemetry: no GPU telemetry' <<<"${stderr}")" = 1 ]
	grep -q "2 ok" <<<"${stderr}"
	[ "$(json res/serving_tel_qps_20.json "d['perfgate']['status']")" = ok ]
	[ "$(json res/serving_tel_qps_40.json "d['perfgate']['telemetry']['engine']['failed_scrapes'] > 0")" = True ]
	[ "$(json res/serving_tel_qps_40.json "d['perfgate']['telemetry']['gpu']")" = None ]
	# and --no-telemetry records none at all
	run --separate-stderr "${PERFGATE}" run suite.yml -o res2 --no-telemetry
	assert_success
	refute_output --partial "telemetry:"
	[ "$(json res2/serving_tel_qps_20.json "'telemetry' in d['perfgate']")" = False ]
}

# A GPU tool gone wrong costs one timeout, not one per call: a fake
# nvidia-smi that names its GPU and answers the telemetry reader's first
# query, then hangs on every later one. The sampler's first read of the
# point waits out the 10 s; every read after it, of this point and the
# next, is not run at all.
@test "a GPU tool that hangs is given up on for the rest of the run after its first timeout" {
	cat >"${SHIMS}/nvidia-smi" <<'SMI'
#!/bin/bash
echo "nvidia-smi $1" >>"${FAKE_SMI_LOG}"
case "$1" in
--query-gpu=name,memory.total) echo "NVIDIA H100 80GB HBM3, 81559 MiB" ;;
--query-gpu=index,*)
	if [ "$(grep -c -- '--query-gpu=index' "${FAKE_SMI_LOG}")" -gt 1 ]; then exec -a "hung-smi ${FAKE_SMI_LOG}" sleep 300; fi
	echo "0, GPU-fake0, NVIDIA H100 80GB HBM3, 1980, 1980, 2619, 2619, 512.00, 700.00, 61, 99, 40, 70000, 81559, 0x0000000000000000, 0" ;;
*) exec -a "hung-smi ${FAKE_SMI_LOG}" sleep 300 ;;
esac
SMI
	chmod +x "${SHIMS}/nvidia-smi"
	export FAKE_SMI_LOG="${WORK}/smi.log"
	mock_suite "" "20, 40"
	local t0=${SECONDS}
	run --separate-stderr "${PERFGATE}" run suite.yml -o res
	assert_success
	# one timeout (10 s), not one for each read of two points
	[ $((SECONDS - t0)) -lt 20 ]
	[ "$(grep -c -- '--query-gpu=index' smi.log)" = 2 ]
	[ "$(json res/serving_tel_qps_20.json "d['perfgate']['telemetry']['notes'][0]")" = "nvidia-smi: nvidia-smi did not finish within 10 s: not run again in this run" ]
	[ "$(json res/serving_tel_qps_40.json "d['perfgate']['telemetry']['notes'][0]")" = "nvidia-smi: nvidia-smi hung earlier in this run (no answer within 10 s): not run again" ]
	# and the hung one is gone
	run pgrep -f "hung-smi ${FAKE_SMI_LOG}"
	assert_failure
}

# A GPU tool that writes without end is stopped at 4 MiB: the run neither
# fills memory nor waits for it, and says why there is no GPU.
@test "a GPU tool's output is capped, with a note when cut" {
	printf '#!/bin/sh\nexec yes "0, GPU-fake0, NVIDIA H100 80GB HBM3, 1980"\n' >"${SHIMS}/nvidia-smi"
	chmod +x "${SHIMS}/nvidia-smi"
	mock_suite "" inf
	run --separate-stderr "${PERFGATE}" run suite.yml -o res
	assert_success
	grep -qF 'perfgate: no GPU: nvidia-smi wrote more than 4 MiB: cut there and not read; results record gpu "none"' <<<"${stderr}"
	grep -qF 'telemetry: no GPU telemetry: nvidia-smi wrote more than 4 MiB: cut there and not read' <<<"${stderr}"
	[ "$(json res/serving_tel_qps_inf.json "d['perfgate']['gpu']['key']")" = none ]
}

# The fake benchmark of tests/data/buildkite, 30% slower while the GPU is
# throttled; the throttling lasts for the first run's points only.
throttle_suite() {
	cp "${PLUGIN_DIR}/tests/data/buildkite/suite.yml" "${PLUGIN_DIR}/tests/data/buildkite/fake-bench.sh" .
	cat >throttle-bench.sh <<'SH'
#!/bin/sh
# while throttled: slower, and one point fewer to go
if [ -e "$FAKE_SMI_STATE" ]; then
	n=$(cat "$FAKE_SMI_STATE")
	if [ "$n" -le 1 ]; then rm -f "$FAKE_SMI_STATE"; else echo $((n - 1)) >"$FAKE_SMI_STATE"; fi
	FAKE_BENCH_FACTOR=1.3 exec ./fake-bench.sh "$@"
fi
exec ./fake-bench.sh "$@"
SH
	chmod +x throttle-bench.sh
	sed -i 's|\./fake-bench.sh|./throttle-bench.sh|' suite.yml
}

@test "gate: a throttled job's regression is suspect (exit 3, re-run), not a failure" {
	fake_nvidia_smi
	throttle_suite
	run "${PERFGATE}" run suite.yml -o base --gpu H100
	assert_success
	run "${PERFGATE}" baseline update thresholds --from base --gpu H100
	assert_success
	echo 5 >"${FAKE_SMI_STATE}"
	run --separate-stderr "${PERFGATE}" run suite.yml -o slow --gpu H100
	assert_success
	run --separate-stderr "${PERFGATE}" gate slow --gpu H100 -o out
	assert_failure 3
	assert_line --index 0 "**perfgate: SUSPECT** — H100: 3 of 5 tests regressed (3 metrics), 2 improved — from a sick job: re-run it"
	assert_output --partial "Job health: latency_llama70B_tp4: GPU 0 SM clock at 61% of its maximum under load (policy: 80%)"
	[ "$(json out/verdict.json "d['verdict']")" = suspect ]
	[ "$(json out/verdict.json "d['exit_code']")" = 3 ]
	[ "$(json out/verdict.json "sorted(d['rerun'])")" = "['latency_llama70B_tp4', 'latency_llama8B_tp1', 'latency_mixtral8x7B_tp2']" ]
	# the same regression from a healthy job fails
	FAKE_BENCH_FACTOR=1.3 run "${PERFGATE}" run suite.yml -o healthy-slow --gpu H100
	assert_success
	run "${PERFGATE}" gate healthy-slow --gpu H100 -o out2
	assert_failure 1
	# a policy that decides anyway: fail
	printf 'health:\n  on_suspect: fail\n' >>thresholds/H100.yml
	run "${PERFGATE}" gate slow --gpu H100 -o out3
	assert_failure 1
	# and a policy key that does not exist: exit 2, file and line
	printf '  throtle_seconds: 3\n' >>thresholds/H100.yml
	run --separate-stderr "${PERFGATE}" gate slow --gpu H100 -o out4
	assert_failure 2
	[[ "${stderr}" == *"thresholds/H100.yml:"*"health: unknown setting 'throtle_seconds' (did you mean 'throttle_seconds'?)"* ]]
}

@test "buildkite gate: the sick job's points are re-run and the healthy re-run decides" {
	fake_nvidia_smi
	throttle_suite
	export SHIM_STDIN=1
	make_shim buildkite-agent
	export BUILDKITE=true BUILDKITE_JOB_ID=0190-job BUILDKITE_LABEL=":h100: perf"
	export BUILDKITE_STEP_KEY=perf-h100 BUILDKITE_BRANCH=main BUILDKITE_PULL_REQUEST=false
	export BUILDKITE_PLUGIN_CONFIGURATION='{"suites":"suite.yml","gpu":"H100","mode":"run","results-dir":"base","annotate":"never","artifacts":false}'
	BUILDKITE= run "${PERFGATE}" buildkite
	assert_success
	run "${PERFGATE}" baseline update thresholds --from base --gpu H100
	assert_success
	echo 5 >"${FAKE_SMI_STATE}"
	export BUILDKITE_PLUGIN_CONFIGURATION='{"suites":"suite.yml","gpu":"H100"}'
	run "${PERFGATE}" buildkite
	assert_success
	assert_output --partial "perfgate: job suspect, a regression not trusted: latency_llama70B_tp4: GPU 0 SM clock at 61%"
	assert_output --partial "--- perfgate: the job looks sick ("
	assert_output --partial "): re-running 3 points"
	assert_file_exists results/confirm/latency_llama8B_tp1.json
	[ "$(json results/verdict.json "d['verdict']")" != suspect ]
	[ "$(json results/verdict.json "d['exit_code']")" = 0 ]
	# the annotation shows what the machine did, under the headline
	grep -q "⚠️ latency_llama8B_tp1: GPU 0 SM clock at 61% of its maximum under load" results/annotation.md
}
