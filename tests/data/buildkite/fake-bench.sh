#!/bin/sh
# fake-bench.sh RESULT KIND VALUE: an external benchmark command that
# writes a vLLM-shaped result file at once (KIND latency: VALUE seconds;
# throughput: VALUE requests/s), so the plugin's flow runs with real child
# processes and no inference server. FAKE_BENCH_FACTOR scales VALUE (a
# regression), FAKE_BENCH_SLEEP delays it (a cancel test), and a result
# path matching FAKE_BENCH_FAIL fails (exit 1, no result).
set -eu
case "$1" in
*"${FAKE_BENCH_FAIL:-/nothing/}"*)
	echo "fake-bench: failing as asked" >&2
	exit 1
	;;
esac
value="$3"
if [ -n "${FAKE_BENCH_FACTOR:-}" ]; then
	value=$(awk -v v="$value" -v f="$FAKE_BENCH_FACTOR" 'BEGIN { print v * f }')
fi
if [ -n "${FAKE_BENCH_SLEEP:-}" ]; then
	sleep "$FAKE_BENCH_SLEEP"
fi
case "$2" in
latency)
	printf '{"avg_latency": %s, "std_latency": 0.001, "latencies": [%s, %s, %s], "percentiles": {"10": %s, "25": %s, "50": %s, "75": %s, "90": %s, "99": %s}}\n' \
		"$value" "$value" "$value" "$value" "$value" "$value" "$value" "$value" "$value" "$value" >"$1"
	;;
throughput)
	printf '{"elapsed_time": 10.0, "num_requests": 100, "total_num_tokens": 40000, "requests_per_second": %s, "tokens_per_second": %s, "output_tokens_per_second": %s}\n' \
		"$value" "$value" "$value" >"$1"
	;;
esac
