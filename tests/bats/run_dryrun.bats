#!/usr/bin/env bats
# perfgate run --dry-run on the three ways in (suite file, pipeline step,
# vLLM's files): exit codes, stdout, and the one-line error on stderr.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

bats_require_minimum_version 1.5.0

setup() {
	cd "$PERFGATE_SRC"
}

@test "a suite file: every point, exact commands, exit 0" {
	run --separate-stderr "$PERFGATE_BIN" run --dry-run pipelines/suites/vllm-gpu.yml
	assert_success
	assert_line --index 0 "perfgate run --dry-run: 48 test points from pipelines/suites/vllm-gpu.yml; nothing is started."
	assert_line "[48/48] serving_llama70B_tp4_random_128_128_qps_inf"
	assert_line "  command    vllm bench latency --model meta-llama/Meta-Llama-3.1-8B-Instruct --tensor-parallel-size 1 --load-format dummy --input-len 32 --output-len 128 --batch-size 8 --num-iters-warmup 5 --num-iters 15 --output-json '\$TMPDIR/perfgate-run-XXXXXX/latency_llama8B_tp1.json'"
	assert_line "  timeout    3600 s, writes \$TMPDIR/perfgate-run-XXXXXX/latency_llama8B_tp1.json (imported into results/latency_llama8B_tp1.json)"
	assert_line "  server     vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 1 --dtype bfloat16 --host 127.0.0.1 --port {port}"
	# the one note: the run would stop on the missing ShareGPT file
	[ "$stderr" = "perfgate run: warning: pipelines/suites/vllm-gpu.yml:75: test 'throughput_llama8B_tp1': dataset file 'ShareGPT_V3_unfiltered_cleaned_split.json': not found (relative to $PWD, where perfgate runs); perfgate run --fetch-datasets (the step's fetch-datasets: true) fetches it from https://huggingface.co/datasets/anon8231489123/ShareGPT_Vicuna_unfiltered/resolve/main/ShareGPT_V3_unfiltered_cleaned_split.json and checks its sha256" ]

	# nothing is run and nothing is written
	cd "$(mktemp -d "$BATS_TEST_TMPDIR/empty.XXXXXX")"
	run "$PERFGATE_BIN" run --dry-run "$PERFGATE_SRC/pipelines/suites/vllm-gpu.yml"
	assert_success
	[ -z "$(ls -A)" ]
}

@test "--filter, --only, --repeat, -o and --gpu shape the listing" {
	run --separate-stderr "$PERFGATE_BIN" run -n pipelines/suites/vllm-gpu.yml \
		--filter 'llama8B_tp1_(sharegpt|random_128_128)_qps_inf_concurrency_(12|16)$' \
		--only serving --repeat 3 -o out/h100 --gpu H100
	assert_success
	assert_line --index 0 "perfgate run --dry-run: 4 of 48 test points from pipelines/suites/vllm-gpu.yml; nothing is started."
	assert_line --index 1 --partial "GPU: H100 (given). Results go to out/h100/."
	assert_line "[4/4] serving_llama8B_tp1_random_128_128_qps_inf_concurrency_16"
	assert_line "  repeat     3 runs, summarised by the median (a cold first run left out)"
}

@test "a pipeline step with --step applies the step's options" {
	cd tests/data/pipeline
	run --separate-stderr "$PERFGATE_BIN" run --dry-run pipeline.yml --step perf-h100
	assert_success
	assert_line --index 0 "perfgate run --dry-run: 3 of 6 test points from pipeline.yml, step 'perf-h100'; nothing is started."
	assert_line --index 1 --partial "GPU: H100 (given). Results go to results/h100/."
	assert_line "  repeat     3 runs, summarised by the median (a cold first run left out)"

	# the command line wins over the step
	run --separate-stderr "$PERFGATE_BIN" run --dry-run pipeline.yml --step perf-h100 --only latency --filter . -o mine
	assert_success
	assert_line --index 0 --partial "1 of 6 test points"
	assert_line --index 1 --partial "Results go to mine/."
}

@test "a step's variables, matrix values and shard, as Buildkite fills them" {
	cd "$BATS_TEST_TMPDIR"
	cp "$PERFGATE_SRC/tests/data/pipeline/suites/gpu.yml" suite.yml
	cat >pipeline.yml <<-'EOF'
	env:
	  SUITES: suite.yml
	steps:
	  - key: perf
	    matrix:
	      setup: {gpu: [H100, L40S]}
	    plugins:
	      - acme/perfgate#v1.0.0:
	          suites: $SUITES
	          gpu: "{{matrix.gpu}}"
	          results-dir: results/{{matrix.gpu}}/${PERF_RUN:-local}
	          shard: 2/2
	EOF
	run --separate-stderr "$PERFGATE_BIN" run --dry-run pipeline.yml --matrix gpu=L40S
	assert_success
	assert_line --index 0 "perfgate run --dry-run: 3 of 6 test points from pipeline.yml, step 'perf'; nothing is started."
	assert_line --index 1 --partial "GPU: L40S (given). Results go to results/L40S/local/."

	PERF_RUN=nightly run --separate-stderr "$PERFGATE_BIN" run --dry-run pipeline.yml
	assert_failure 2
	[ "$stderr" = "perfgate run: pipeline.yml:11:24: step 'perf': {{matrix.gpu}} is filled in by Buildkite for each job of the step's matrix (gpu: H100, L40S); choose one with --matrix gpu=VALUE" ]

	# only gpu may stay a matrix value: it is then detected, as before
	sed -i '/results-dir/d' pipeline.yml
	PERFGATE_GPU=H200 run --separate-stderr "$PERFGATE_BIN" run --dry-run pipeline.yml
	assert_success
	assert_line --index 1 --partial "GPU: H200"
	[ "$stderr" = "perfgate run: warning: pipeline.yml:10:16: step 'perf': gpu '{{matrix.gpu}}' is filled in by Buildkite for each job of the step's matrix; perfgate detects the GPU instead (or give --matrix or --gpu)" ]

	run --separate-stderr "$PERFGATE_BIN" run --dry-run pipeline.yml --matrix gpu=A100
	assert_failure 2
	[ "$stderr" = "perfgate run: --matrix gpu=A100: not a job of step 'perf' (gpu: H100, L40S)" ]
}

@test "a pipeline with several perfgate steps needs --step" {
	cd tests/data/pipeline
	run --separate-stderr "$PERFGATE_BIN" run --dry-run pipeline.yml
	assert_failure 2
	[ -z "$output" ]
	[ "$stderr" = "perfgate run: pipeline.yml: 4 steps use the perfgate plugin ('perf-h100', 'perf-a100', 'perf on a small model', 'perf-matrix'): choose one with --step KEY" ]

	run --separate-stderr "$PERFGATE_BIN" run --dry-run pipeline.yml --step perf-h10
	assert_failure 2
	[ "$stderr" = "perfgate run: pipeline.yml: no perfgate step with key or label 'perf-h10' (did you mean 'perf-h100'?)" ]
}

@test "vLLM's three files make one suite; warnings go to stderr" {
	cd tests/data/vllm
	run --separate-stderr "$PERFGATE_BIN" run --dry-run latency-tests.json throughput-tests.json serving-tests.json
	assert_success
	assert_line --index 0 "perfgate run --dry-run: 24 test points from latency-tests.json, throughput-tests.json, serving-tests.json; nothing is started."
	assert_line "[6/24] serving_llama8B_tp1_sharegpt_qps_inf_concurrency_12"
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 3 ]
	[[ "$stderr" == *"perfgate run: warning: serving-tests.json:84:9: tests[3].client_parameters.tokenizer: perfgate's client does not tokenize; ignored"* ]]
	[[ "$stderr" == *"perfgate run: warning: throughput-tests.json:2: test 'throughput_llama8B_tp1': dataset file './ShareGPT_V3_unfiltered_cleaned_split.json': not found"* ]]
	# secrets in the environment never reach the output
	[[ "$output" != *hf_not_a_real_token* ]]
	assert_line "  env        VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 HF_TOKEN=***"
}

@test "bad configuration: exit 2 and one line naming file, line, column and key" {
	cd tests/data/config
	run --separate-stderr "$PERFGATE_BIN" run --dry-run qps-fast.yml
	assert_failure 2
	[ -z "$output" ]
	[ "$stderr" = "perfgate run: qps-fast.yml:7:14: serving[0].qps[1]: expected a number or 'inf', got 'fast'" ]

	run --separate-stderr "$PERFGATE_BIN" run --dry-run unknown-key.yml
	assert_failure 2
	[ "$stderr" = "perfgate run: unknown-key.yml:7:5: serving[0]: unknown key 'num_prompt' (did you mean 'num_prompts'?)" ]

	run --separate-stderr "$PERFGATE_BIN" run --dry-run serving-tests-bad-qps.json
	assert_failure 2
	[ "$stderr" = "perfgate run: serving-tests-bad-qps.json:4:25: [0].qps_list[1]: expected a number or 'inf', got 'fast'" ]

	run --separate-stderr "$PERFGATE_BIN" run --dry-run no-such-file.yml
	assert_failure 2
	[ "$stderr" = "perfgate run: no-such-file.yml: No such file or directory" ]
}

@test "usage errors: exit 2" {
	run --separate-stderr "$PERFGATE_BIN" run --dry-run
	assert_failure 2
	[ "$stderr" = "perfgate run: no input: give a suite file, a Buildkite pipeline or vLLM *-tests.json files" ]

	run --separate-stderr "$PERFGATE_BIN" run --dry-run pipelines/suites/vllm-gpu.yml --only servng
	assert_failure 2
	[ "$stderr" = "perfgate run: option '--only': expected latency, throughput, serving or startup, got 'servng'" ]

	run --separate-stderr "$PERFGATE_BIN" run --dry-run pipelines/suites/vllm-gpu.yml --filter mixtral8x22B
	assert_failure 2
	[ "$stderr" = "perfgate run: no test point is left after filter 'mixtral8x22B' (of 48 in pipelines/suites/vllm-gpu.yml)" ]

	run --separate-stderr "$PERFGATE_BIN" run --dry-run pipelines/suites/vllm-gpu.yml --repeat 0
	assert_failure 2
	[ "$stderr" = "perfgate run: option '--repeat': expected N >= 1, got 0" ]

	run --separate-stderr "$PERFGATE_BIN" run --dry-run pipelines/suites/vllm-gpu.yml --step perf
	assert_failure 2
	[ "$stderr" = "perfgate run: --step chooses a step of a Buildkite pipeline, and pipelines/suites/vllm-gpu.yml is not one" ]
}

@test "run --help documents the inputs and options" {
	run "$PERFGATE_BIN" run --help
	assert_success
	assert_line --index 0 "usage: perfgate run [options] INPUT..."
	assert_output --partial "--dry-run"
	assert_output --partial "--step KEY"
}

@test "the suite example of docs/suite.md loads as written" {
	awk '/^```yaml/{g=1;next} g&&/^```/{exit} g' docs/suite.md > "$BATS_TEST_TMPDIR/suite.yml"
	run "$PERFGATE_BIN" run --dry-run "$BATS_TEST_TMPDIR/suite.yml"
	assert_success
	assert_line --partial "10 test points from"
	assert_line "[10/10] serving_llama8B_tp1_sharegpt_qps_inf_concurrency_64"
}

@test "every perfgate step of the example pipelines loads as written" {
	local f key n=0
	for f in pipelines/*.yml; do
		for key in $(sed -n 's/^    key: //p' "${f}"); do
			run --separate-stderr "$PERFGATE_BIN" run --dry-run "${f}" --step "${key}"
			[ "${status}" -eq 0 ] || fail "${f} --step ${key}: ${stderr}"
			n=$((n + 1))
		done
	done
	[ "${n}" -ge 7 ]
}
