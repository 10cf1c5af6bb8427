#!/usr/bin/env bats
# Multi-turn sessions (docs/sessions.md) against the mock server with its
# prefix cache: per-turn TTFT keys, the client's hit rate equal to the
# mock's own counters, backpressure counted, the report's sessions table.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	work_setup
	SERVER_PID=
}

teardown() {
	if [ -n "${SERVER_PID}" ]; then kill "${SERVER_PID}" 2>/dev/null || true; fi
}

# start_mock ARGS...: a mock server of our own (so its counters can be read
# after the run), on a free port, gone within 120 s whatever happens.
start_mock() {
	rm -f port
	"$PERFGATE" mock-server --port 0 --port-file port --max-seconds 120 "$@" 2>mock.log &
	SERVER_PID=$!
	for _ in $(seq 1 200); do
		[ -s port ] && break
		sleep 0.05
	done
	[ -s port ] || { cat mock.log; return 1; }
	URL="http://127.0.0.1:$(cat port)"
}

# sessions_suite QPS EXTRA: 20 users x 3 rounds on the chat endpoint.
sessions_suite() {
	cat >suite.yml <<YML
serving:
  - name: serving_sessions
    model: perfgate-mock
    server: {remote: "${URL}"}
    client: {endpoint: /v1/chat/completions}
    dataset:
      name: multi_turn
      users: 20
      rounds: 3
      system_prompt_len: 200
      user_context_len: 100
      question_len: 40
      output_len: 16
$2
    qps: [$1]
YML
}

# counter NAME: the mock's own value of a vllm: counter
counter() {
	curl -s "${URL}/metrics" | awk -v n="vllm:$1_total" '$1 ~ "^"n"[{]" {print $2}'
}

@test "a multi_turn point: per-turn TTFT, hit rate equal to the mock's count, no backpressure" {
	# prefill 1 ms a token: the model's differences dwarf a busy machine's noise
	start_mock --prefix-cache-blocks 100000 --ttft-ms 2 --itl-ms 1 --prefill-us-per-token 1000
	sessions_suite 20 ""
	run timeout 60 "$PERFGATE" run suite.yml --results-dir res
	assert_success
	res=res/serving_sessions_qps_20.json
	queries=$(counter prefix_cache_queries)
	hits=$(counter prefix_cache_hits)
	run "$PYTHON" - "$res" "$queries" "$hits" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
q, h = float(sys.argv[2]), float(sys.argv[3])
assert r["completed"] == 60 and r["failed"] == 0, r["completed"]
assert r["num_users"] == 20 and r["num_rounds"] == 3
assert r["completed_by_turn"] == [20, 20, 20], r["completed_by_turn"]
assert len(r["mean_ttft_ms_by_turn"]) == 3 and len(r["median_ttft_ms_by_turn"]) == 3
# the mock's counters since it started are this point's: equal, exactly
assert r["total_input_tokens"] == q, (r["total_input_tokens"], q)
assert r["total_cached_tokens"] == h, (r["total_cached_tokens"], h)
assert r["prefix_cache_hit_rate"] == h / q, (r["prefix_cache_hit_rate"], h / q)
assert r["server_prefix_cache_queries"] == q and r["server_prefix_cache_hits"] == h
assert r["server_prefix_cache_hit_rate"] == r["prefix_cache_hit_rate"]
# later turns resend the conversation, nearly all of it cached
assert r["prefix_cache_hit_rate"] > 0.7, r["prefix_cache_hit_rate"]
# the first turn computes the user's own context (100 words at 1 ms, and
# its question: about 140 ms), later ones only their new question (56 ms)
first, later = r["median_ttft_ms_first_turn"], r["median_ttft_ms_later_turns"]
assert first > later + 40, (first, later)
assert r["backpressure_turns"] == 0, r["backpressure_turns"]
assert r["perfgate"]["params"]["multi_turn"]["users"] == 20
print("ok", r["mean_ttft_ms_first_turn"], r["mean_ttft_ms_later_turns"])
PY
	assert_success
	run grep -q "Multi-turn sessions" res/benchmark_results.md
	assert_success
}

@test "without the cache the history is recomputed: later turns' TTFT grows; with it, it does not" {
	start_mock --ttft-ms 1 --itl-ms 1 --prefill-us-per-token 2000
	sessions_suite inf "      think_time: 0.01"
	run timeout 60 "$PERFGATE" run suite.yml --results-dir cold
	assert_success
	kill "$SERVER_PID"
	wait "$SERVER_PID" || true
	start_mock --ttft-ms 1 --itl-ms 1 --prefill-us-per-token 2000 --prefix-cache-blocks 100000
	sessions_suite inf "      think_time: 0.01"
	run timeout 60 "$PERFGATE" run suite.yml --results-dir warm
	assert_success
	run "$PYTHON" - cold/serving_sessions_qps_inf.json warm/serving_sessions_qps_inf.json <<'PY'
import json, sys
cold, warm = (json.load(open(p)) for p in sys.argv[1:])
assert cold["prefix_cache_hit_rate"] is None, cold["prefix_cache_hit_rate"]
assert cold["server_prefix_cache_hits"] == 0
c, w = cold["median_ttft_ms_by_turn"], warm["median_ttft_ms_by_turn"]
# cold: 340, 396, 452 prompt tokens at 2 ms each; warm: the new part only
# (turn 1 about 300 ms, later turns about 112 ms)
assert c[2] > c[0] + 100, c
assert w[2] < c[2] - 400, (w, c)
assert w[1] < w[0] - 80 and w[2] < w[0] - 80, w
print(c, w)
PY
	assert_success
}

@test "a rate the answers cannot keep up with: every later turn counted as backpressure" {
	start_mock --prefix-cache-blocks 100000 --ttft-ms 5 --itl-ms 20
	# 5 users at 50 req/s: each user's next turn is due 0.1 s after the
	# last was sent, its 16-token answer takes 0.3 s
	sessions_suite 50 ""
	sed -i 's/users: 20/users: 5/' suite.yml
	run timeout 60 "$PERFGATE" run suite.yml --results-dir res
	assert_success
	run "$PYTHON" - res/serving_sessions_qps_50.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["completed"] == 15 and r["backpressure_turns"] == 10, r["backpressure_turns"]
assert r["max_backpressure_ms"] > 150, r["max_backpressure_ms"]
PY
	assert_success
}

@test "ShareGPT conversations: each user asks a conversation's questions; hit rate still the mock's" {
	start_mock --prefix-cache-blocks 100000 --ttft-ms 1 --itl-ms 1
	"$PYTHON" - <<'PY'
import json
conv = lambda qs: {"conversations": [t for q in qs for t in
    ({"from": "human", "value": q}, {"from": "gpt", "value": "ok"})]}
json.dump([conv(["what is %d plus %d" % (i, j) for j in range(3)]) for i in range(4)]
          + [conv(["too few"])], open("sharegpt.json", "w"))
PY
	sessions_suite inf "      path: sharegpt.json"
	sed -i 's/users: 20/users: 6/' suite.yml
	run timeout 60 "$PERFGATE" run --dry-run suite.yml
	assert_success
	assert_output --partial "questions from the conversations of sharegpt.json"
	run timeout 60 "$PERFGATE" run suite.yml --results-dir res
	assert_success
	queries=$(counter prefix_cache_queries)
	hits=$(counter prefix_cache_hits)
	run "$PYTHON" - res/serving_sessions_qps_inf.json "$queries" "$hits" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["completed"] == 18 and r["completed_by_turn"] == [6, 6, 6], r["completed_by_turn"]
assert r["total_input_tokens"] == float(sys.argv[2]), r["total_input_tokens"]
assert r["total_cached_tokens"] == float(sys.argv[3]), r["total_cached_tokens"]
PY
	assert_success
}

@test "multi_turn settings are checked where they are written" {
	URL=http://127.0.0.1:9
	sessions_suite 10 "      think_time: 1"
	run "$PERFGATE" run --dry-run suite.yml
	assert_failure 2
	assert_output --partial "suite.yml:"
	assert_output --partial "a think_time paces each user"
	sessions_suite inf "      think_time: -1"
	run "$PERFGATE" run --dry-run suite.yml
	assert_failure 2
	assert_output --partial "expected seconds >= 0"
	sessions_suite inf ""
	printf '    max_concurrency: [4]\n' >>suite.yml
	run "$PERFGATE" run --dry-run suite.yml
	assert_failure 2
	assert_output --partial "drop max_concurrency"
	sessions_suite inf ""
	sed -i 's|endpoint: /v1/chat/completions}|endpoint: /v1/chat/completions, warmups: 3}|' suite.yml
	run "$PERFGATE" run --dry-run suite.yml
	assert_success
	assert_output --partial "client.warmups are not sent for multi_turn"
	assert_output --partial "multi_turn, 20 users x 3 rounds, system prompt 200 + 40 per question, 16 output tokens, 100 of each user's own context"
}

@test "a thresholds file gates on the hit rate: a cache too small to hold the conversations fails" {
	start_mock --prefix-cache-blocks 100000 --ttft-ms 1 --itl-ms 1
	sessions_suite 40 ""
	run timeout 60 "$PERFGATE" run suite.yml --results-dir base
	assert_success
	run "$PERFGATE" baseline update thresholds --from base --gpu none
	assert_success
	sed -i 's/prefix_cache_hit_rate:    { gate: false/prefix_cache_hit_rate:    { gate: true /' \
		thresholds/none.yml
	grep -q 'prefix_cache_hit_rate:    { gate: true' thresholds/none.yml
	kill "$SERVER_PID"
	wait "$SERVER_PID" || true
	# 40 blocks: fewer than the conversations hold
	start_mock --prefix-cache-blocks 40 --ttft-ms 1 --itl-ms 1
	sessions_suite 40 ""
	run timeout 60 "$PERFGATE" run suite.yml --results-dir head
	assert_success
	run "$PERFGATE" gate head --gpu none
	assert_failure 1
	assert_output --regexp "serving_sessions_qps_40 \| Prefix-cache hit rate \(%\) \|[^|]*\|[^|]*\|[^|]*\|[^|]*\| \*\*regressed\*\*"
}

@test "the report's sessions table" {
	mkdir -p res
	"$PYTHON" - res/serving_sessions_qps_4.json <<'PY'
import json, sys
r = {"date": "20260101-000000", "backend": "openai-chat", "model_id": "perfgate-mock",
     "num_prompts": 30, "request_rate": 4, "completed": 30, "failed": 0,
     "duration": 10.0, "request_throughput": 3.0, "output_throughput": 48.0,
     "total_input_tokens": 9000, "total_output_tokens": 480,
     "mean_ttft_ms": 20.0, "median_ttft_ms": 19.0, "p99_ttft_ms": 40.0,
     "mean_tpot_ms": 2.0, "median_tpot_ms": 2.0, "p99_tpot_ms": 3.0,
     "mean_itl_ms": 2.0, "median_itl_ms": 2.0, "p99_itl_ms": 3.0,
     "num_users": 10, "num_rounds": 3, "completed_by_turn": [10, 10, 10],
     "mean_ttft_ms_by_turn": [35.5, 12.25, 12.5], "median_ttft_ms_by_turn": [35, 12, 12],
     "mean_ttft_ms_first_turn": 35.5, "mean_ttft_ms_later_turns": 12.375,
     "median_ttft_ms_first_turn": 35, "median_ttft_ms_later_turns": 12,
     "total_cached_tokens": 7200, "prefix_cache_hit_rate": 0.8,
     "server_prefix_cache_queries": None, "server_prefix_cache_hits": None,
     "server_prefix_cache_hit_rate": None, "backpressure_turns": 2,
     "mean_backpressure_ms": 30.0, "max_backpressure_ms": 40.0}
json.dump(r, open(sys.argv[1], "w"))
PY
	run "$PERFGATE" report res
	assert_success
	awk '/^Multi-turn sessions/ {on = 1} on && /^$/ && ++blank == 2 {exit} on' \
		res/benchmark_results.md | golden - report/sessions.md
}
