#!/bin/sh
# How long `perfgate run --dry-run` takes to load, validate, expand and list
# large suites: a perfgate suite file and a vLLM serving-tests.json with N
# serving tests each (4 rates x 7 concurrencies = 28 points per test).
#
#   bench/config_load.sh [PERFGATE] [N]     (defaults: build/perfgate, 2000)
#
# Prints wall seconds and peak RSS of each run (best of 3). Use a build
# without sanitizers for figures that mean something.
set -eu
bin=${1:-build/perfgate}
n=${2:-2000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

{
	echo "defaults:"
	echo "  server: {command: 'vllm serve {model} --tensor-parallel-size {tp} --port {port}'}"
	echo "  client: {temperature: 0}"
	echo "  qps: [1, 4, 16, inf]"
	echo "  max_concurrency: [12, 16, 24, 32, 64, 128, 200]"
	echo "serving:"
	i=0
	while [ "$i" -lt "$n" ]; do
		echo "  - name: serving_model${i}_tp1_random_128_128"
		echo "    model: org/model-$i"
		echo "    dataset: {name: random, input_len: 128, output_len: 128}"
		echo "    num_prompts: 200"
		i=$((i + 1))
	done
} > "$dir/suite.yml"

{
	echo '{"defaults": {"qps_list": [1, 4, 16, "inf"], "max_concurrency_list": [12, 16, 24, 32, 64, 128, 200],'
	echo ' "client_parameters": {"backend": "vllm", "num_prompts": 200, "ignore-eos": ""}},'
	echo ' "tests": ['
	i=0
	while [ "$i" -lt "$n" ]; do
		[ "$i" -gt 0 ] && echo ','
		printf '  {"test_name": "serving_model%d_tp1", "server_parameters": {"model": "org/model-%d", "tensor_parallel_size": 1, "dtype": "bfloat16"}, "client_parameters": {"model": "org/model-%d", "dataset_name": "random", "random-input-len": 128, "random-output-len": 128}}' "$i" "$i" "$i"
		i=$((i + 1))
	done
	echo ']}'
} > "$dir/serving-tests.json"

# one run: "<seconds> <peak RSS KiB>" (RSS 0 without GNU time)
run_once() {
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f '%e %M' -o "$dir/time" "$bin" run --dry-run "$1" > "$dir/out" 2>/dev/null
		cat "$dir/time"
	else
		start=$(date +%s.%N)
		"$bin" run --dry-run "$1" > "$dir/out" 2>/dev/null
		end=$(date +%s.%N)
		awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f 0\n", b - a }'
	fi
}

measure() {
	best=""
	best_rss=0
	for _ in 1 2 3; do
		read -r secs rss <<EOT
$(run_once "$1")
EOT
		if [ -z "$best" ] || awk -v a="$secs" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$secs
			best_rss=$rss
		fi
	done
	points=$(grep -c '^\[' "$dir/out")
	lines=$(wc -l < "$dir/out")
	printf '%-20s %6d tests %7d points %8d lines  %6.2f s  %7d KiB peak RSS\n' \
		"$(basename "$1")" "$n" "$points" "$lines" "$best" "$best_rss"
}

measure "$dir/suite.yml"
measure "$dir/serving-tests.json"
