#!/usr/bin/env bats
# perfgate mock-server end to end: the real binary on a free loopback port,
# spoken to with curl(1) and raw sockets (tests/bats/mock_raw.py).

load helpers
bats_require_minimum_version 1.5.0

RAW="$BATS_TEST_DIRNAME/mock_raw.py"

start_server() {
	PORT_FILE="$BATS_TEST_TMPDIR/port"
	SERVER_LOG="$BATS_TEST_TMPDIR/server.log"
	rm -f "$PORT_FILE"
	"$PERFGATE_BIN" mock-server --port 0 --port-file "$PORT_FILE" --max-seconds 60 "$@" \
		2>"$SERVER_LOG" &
	SERVER_PID=$!
	for _ in $(seq 1 200); do
		[ -s "$PORT_FILE" ] && break
		kill -0 "$SERVER_PID" 2>/dev/null || break
		sleep 0.05
	done
	if [ ! -s "$PORT_FILE" ]; then
		cat "$SERVER_LOG"
		return 1
	fi
	PORT=$(cat "$PORT_FILE")
	URL="http://127.0.0.1:$PORT"
}

# wait_exit SECONDS: wait for the server to exit by itself; sets EXIT_CODE.
wait_exit() {
	local deadline=$((SECONDS + $1))
	while kill -0 "$SERVER_PID" 2>/dev/null; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			echo "server $SERVER_PID still running after $1 s"
			return 1
		fi
		sleep 0.02
	done
	EXIT_CODE=0
	wait "$SERVER_PID" || EXIT_CODE=$?
	SERVER_PID=
}

teardown() {
	if [ -n "${SERVER_PID:-}" ]; then
		kill "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
	fi
}

py() {
	"$PERFGATE_PYTHON" -c "$@"
}

# wait_stats EXPR: poll /mock/stats until the Python expression EXPR (over
# the stats object `s`) holds; fail after 10 s.
wait_stats() {
	local deadline=$((SECONDS + 10))
	until curl -sS "$URL/mock/stats" 2>/dev/null | py "import json,sys; s=json.load(sys.stdin); sys.exit(0 if ($1) else 1)"; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			echo "stats never satisfied: $1"
			curl -sS "$URL/mock/stats"
			return 1
		fi
		sleep 0.02
	done
}

post() { # PATH BODY [curl options]
	local path=$1 body=$2
	shift 2
	curl -sS "$@" -H 'content-type: application/json' -d "$body" "$URL$path"
}

@test "health, models, version, tokenize and detokenize answer like vLLM" {
	start_server --model demo-7b --max-model-len 4096
	run curl -sS -o /dev/null -w '%{http_code} %{size_download}' "$URL/health"
	[ "$output" = "200 0" ]
	run curl -sS "$URL/v1/models"
	py 'import json,sys; m=json.loads(sys.argv[1]); d=m["data"][0]; assert m["object"]=="list"; assert (d["id"],d["root"],d["object"],d["max_model_len"])==("demo-7b","demo-7b","model",4096), m' "$output"
	run curl -sS "$URL/version"
	[[ "$output" == '{"version":"perfgate-mock-'* ]]
	run post /tokenize '{"model":"demo-7b","prompt":"bababa bababe Hello, world","add_special_tokens":false}'
	py 'import json,sys; t=json.loads(sys.argv[1]); assert t["count"]==4 and t["tokens"][:2]==[0,1] and t["max_model_len"]==4096, t' "$output"
	run post /detokenize '{"model":"demo-7b","tokens":[0,1,2]}'
	[ "$output" = '{"prompt":"bababa bababe bababi"}' ]
}

@test "a streamed completion is byte for byte vLLM's SSE over chunked HTTP (golden)" {
	start_server --fixed-timing --ttft-ms 5 --itl-ms 1 --seed 3
	body='{"model":"perfgate-mock","prompt":[1,2,3,4,5],"max_tokens":4,"stream":true,"stream_options":{"include_usage":true},"ignore_eos":true}'
	printf 'POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Request-Id: golden-1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s' \
		"${#body}" "$body" | "$PERFGATE_PYTHON" "$RAW" "$PORT" --normalise >"$BATS_TEST_TMPDIR/stream.txt"
	golden "$BATS_TEST_TMPDIR/stream.txt" mock-server/completions-stream.txt
}

@test "a streamed chat opens with a role-only chunk, continuous usage on every chunk (golden)" {
	start_server --fixed-timing --ttft-ms 5 --itl-ms 1 --seed 3 --tokens-per-message 2
	post /v1/chat/completions '{"messages":[{"role":"user","content":[{"type":"text","text":"say three words"}]}],"max_completion_tokens":3,"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}}' \
		-N -H 'x-request-id: golden-2' | sed -E 's/"created":[0-9]+/"created":0/' >"$BATS_TEST_TMPDIR/chat.txt"
	golden "$BATS_TEST_TMPDIR/chat.txt" mock-server/chat-stream.txt
}

@test "non-streaming completions and chat carry the whole text and usage" {
	start_server --fixed-timing --ttft-ms 2 --itl-ms 1
	run post /v1/completions '{"prompt":"one two three","max_tokens":5}'
	py 'import json,sys; r=json.loads(sys.argv[1]); c=r["choices"][0]; u=r["usage"]
assert r["object"]=="text_completion" and r["id"].startswith("cmpl-"), r
assert len(c["text"].split())==5 and c["finish_reason"]=="length", c
assert (u["prompt_tokens"],u["completion_tokens"],u["total_tokens"])==(3,5,8), u' "$output"
	run post /v1/chat/completions '{"messages":[{"role":"user","content":"hi"}],"max_tokens":2}'
	py 'import json,sys; r=json.loads(sys.argv[1]); m=r["choices"][0]["message"]
assert r["object"]=="chat.completion" and m["role"]=="assistant" and len(m["content"].split())==2, r
assert r["usage"]["completion_tokens"]==2, r' "$output"
	# /mock/stats, with the values that depend on timing zeroed (golden)
	curl -sS "$URL/mock/stats" | py 'import json,sys
s = json.load(sys.stdin)
s["uptime_s"] = 0.0
s["lateness"].update(p50_us=0.0, p99_us=0.0, max_us=0.0)
s["connections"].update(open=0, peak=0)  # closes race the next connect
print(json.dumps(s, indent=1))' >"$BATS_TEST_TMPDIR/stats.json"
	golden "$BATS_TEST_TMPDIR/stats.json" mock-server/stats.json
}

@test "without ignore_eos a seeded EOS ends the output early with finish_reason stop" {
	start_server --fixed-timing --ttft-ms 1 --itl-ms 0 --eos-prob 0.2 --seed 1
	for i in 1 2 3 4 5; do
		post /v1/completions '{"prompt":"a","max_tokens":200,"stream":true,"stream_options":{"include_usage":true}}' -N \
			>"$BATS_TEST_TMPDIR/eos$i.txt"
	done
	post /v1/completions '{"prompt":"a","max_tokens":200,"ignore_eos":true}' >"$BATS_TEST_TMPDIR/ignore.json"
	py 'import json,sys,glob
for f in glob.glob(sys.argv[1] + "/eos*.txt"):
    ev = [json.loads(l[6:]) for l in open(f) if l.startswith("data: {")]
    usage = ev[-1]["usage"]["completion_tokens"]
    tokens = [e for e in ev if e["choices"]]
    assert usage == len(tokens) < 200, (f, usage, len(tokens))
    assert tokens[-1]["choices"][0]["finish_reason"] == "stop" and tokens[-1]["choices"][0]["text"] == "", tokens[-1]
r = json.load(open(sys.argv[1] + "/ignore.json"))
assert r["usage"]["completion_tokens"] == 200 and r["choices"][0]["finish_reason"] == "length"' "$BATS_TEST_TMPDIR"
}

@test "tokens-per-message groups tokens after the first, and usage still counts tokens" {
	start_server --fixed-timing --ttft-ms 1 --itl-ms 0 --tokens-per-message 4
	run post /v1/completions '{"prompt":"a","max_tokens":10,"stream":true,"stream_options":{"include_usage":true}}' -N
	py 'import json,sys
ev = [json.loads(l[6:]) for l in sys.argv[1].splitlines() if l.startswith("data: {")]
sizes = [len(e["choices"][0]["text"].split()) for e in ev if e["choices"]]
assert sizes == [1, 4, 4, 1], sizes
assert ev[-1]["usage"]["completion_tokens"] == 10' "$output"
}

@test "HTTP/1.0 clients get a plain SSE body ended by closing the connection" {
	start_server --fixed-timing --ttft-ms 1 --itl-ms 0
	run curl -sS -i --http1.0 -N -d '{"prompt":"a","max_tokens":3,"stream":true}' "$URL/v1/completions"
	[[ "$output" != *'transfer-encoding'* ]]
	[[ "$output" == *'connection: close'* ]]
	[ "$(grep -c '^data: {' <<<"$output")" -eq 3 ]
	[[ "$output" == *'data: [DONE]'* ]]
}

@test "pipelined requests are answered in order on one connection" {
	start_server --fixed-timing --ttft-ms 2 --itl-ms 1
	body='{"prompt":"a b","max_tokens":2,"stream":true}'
	{
		printf 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n'
		printf 'POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s' "${#body}" "$body"
		printf 'POST /tokenize HTTP/1.1\r\nHost: x\r\nContent-Length: 14\r\n\r\n{"prompt":"x"}'
		printf 'GET /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'
	} | "$PERFGATE_PYTHON" "$RAW" "$PORT" >"$BATS_TEST_TMPDIR/pipe.txt"
	run grep -a -o -E 'HTTP/1.1 [0-9]+' "$BATS_TEST_TMPDIR/pipe.txt"
	[ "${lines[*]}" = "HTTP/1.1 200 HTTP/1.1 200 HTTP/1.1 200 HTTP/1.1 404" ]
	grep -a -q 'data: \[DONE\]' "$BATS_TEST_TMPDIR/pipe.txt"
	# the tokenize answer comes after the stream's end
	[ "$(grep -a -n 'DONE' "$BATS_TEST_TMPDIR/pipe.txt" | cut -d: -f1)" -lt \
	  "$(grep -a -n '"count":1' "$BATS_TEST_TMPDIR/pipe.txt" | cut -d: -f1)" ]
}

@test "large prompts arrive over many reads; Expect: 100-continue is honoured" {
	start_server --fixed-timing --ttft-ms 1 --itl-ms 0 --max-model-len 300000
	py 'import json,sys; json.dump({"prompt": [i % 32000 for i in range(200000)], "max_tokens": 2}, open(sys.argv[1], "w"))' "$BATS_TEST_TMPDIR/big.json"
	run curl -sS -H 'Expect: 100-continue' -H 'content-type: application/json' --data-binary @"$BATS_TEST_TMPDIR/big.json" "$URL/v1/completions"
	py 'import json,sys; u=json.loads(sys.argv[1])["usage"]; assert u["prompt_tokens"]==200000 and u["completion_tokens"]==2, u' "$output"
	curl -sS -H 'content-type: application/json' --data-binary @"$BATS_TEST_TMPDIR/big.json" "$URL/tokenize" >"$BATS_TEST_TMPDIR/tok.json"
	py 'import json,sys; t=json.load(open(sys.argv[1])); assert t["count"]==200000 and t["tokens"][-1]==199999 % 32000' "$BATS_TEST_TMPDIR/tok.json"
}

@test "a request head over 64 KiB in two reads gets 431 and the server lives on" {
	start_server
	py 'import sys; sys.stdout.write("GET /health HTTP/1.1\r\nhost: x\r\nx-long: " + "a" * 70000 + "\r\n\r\n")' >"$BATS_TEST_TMPDIR/head.txt"
	run "$PERFGATE_PYTHON" "$RAW" "$PORT" --split 65536 <"$BATS_TEST_TMPDIR/head.txt"
	[[ "$output" == 'HTTP/1.1 431 Request Header Fields Too Large'* ]]
	run curl -sS -o /dev/null -w '%{http_code}' "$URL/health"
	[ "$output" = 200 ]
	kill -0 "$SERVER_PID"
}

@test "errors are OpenAI error JSON with the right status" {
	start_server
	run curl -sS -w ' %{http_code}' -d '{bad' "$URL/v1/completions"
	[[ "$output" == '{"error":{"message":"invalid JSON body:'*'"code":400}} 400' ]]
	run curl -sS -w ' %{http_code}' -d '{"model":"gpt-9","prompt":"a"}' "$URL/v1/completions"
	[ "$output" = '{"error":{"message":"The model `gpt-9` does not exist.","type":"NotFoundError","param":"model","code":404}} 404' ]
	run curl -sS -o /dev/null -w '%{http_code}' "$URL/v1/nothing"
	[ "$output" = 404 ]
	run curl -sS -o /dev/null -w '%{http_code}' "$URL/v1/completions"
	[ "$output" = 405 ]
	run curl -sS -w ' %{http_code}' -d '{"prompt":"a b","max_tokens":9000}' "$URL/v1/completions"
	[[ "$output" == *"maximum context length is 8192 tokens"*' 400' ]]
	run bash -c "printf 'NOT HTTP AT ALL\r\n\r\n' | '$PERFGATE_PYTHON' '$RAW' $PORT"
	[[ "$output" == 'HTTP/1.1 400 Bad Request'* ]]
	[[ "$output" == *'connection: close'* ]]
	# the server is still healthy
	run curl -sS -o /dev/null -w '%{http_code}' "$URL/health"
	[ "$output" = 200 ]
}

@test "fault injection: HTTP 500, mid-stream disconnect, stall" {
	start_server --fixed-timing --ttft-ms 2 --itl-ms 1 --fault-500 1
	run curl -sS -w ' %{http_code}' -d '{"prompt":"a","stream":true}' "$URL/v1/completions"
	[[ "$output" == *'"type":"InternalServerError"'*' 500' ]]
	kill "$SERVER_PID"
	wait_exit 5

	start_server --fixed-timing --ttft-ms 2 --itl-ms 1 --fault-disconnect 1 --seed 5
	run -18 curl -sS -N -d '{"prompt":"a","max_tokens":50,"stream":true}' "$URL/v1/completions"
	[[ "$output" != *'[DONE]'* ]]
	kill "$SERVER_PID"
	wait_exit 5

	start_server --fixed-timing --ttft-ms 2 --itl-ms 1 --fault-stall 1
	run -28 curl -sS -N -m 1 -d '{"prompt":"a","max_tokens":50,"stream":true}' "$URL/v1/completions"
	wait_stats 's["requests"]["stalls"] == 1 and s["requests"]["client_closed"] == 1'
}

@test "fault injection: a malformed chunk, an in-stream error event" {
	start_server --fixed-timing --ttft-ms 1 --itl-ms 0 --fault-malformed 1 --seed 2
	run post /v1/completions '{"prompt":"a","max_tokens":6,"stream":true}' -N
	py 'import json,sys
bad = 0
for l in sys.argv[1].splitlines():
    if l.startswith("data: {"):
        try: json.loads(l[6:])
        except ValueError: bad += 1
assert bad == 1 and sys.argv[1].rstrip().endswith("data: [DONE]"), sys.argv[1]' "$output"
	kill "$SERVER_PID"
	wait_exit 5

	start_server --fixed-timing --ttft-ms 1 --itl-ms 0 --fault-stream-error 1 --seed 2
	run post /v1/chat/completions '{"messages":[{"role":"user","content":"a"}],"max_tokens":6,"stream":true}' -N
	[[ "$output" == *'data: {"error":{"message":"simulated generation error (--fault-stream-error)","type":"InternalServerError","param":null,"code":500}}'* ]]
	[[ "$output" == *'data: [DONE]'* ]]
	run curl -sS -w ' %{http_code}' -d '{"prompt":"a","max_tokens":3}' "$URL/v1/completions"
	[[ "$output" == *'"code":500}} 500' ]]
	run curl -sS "$URL/mock/stats"
	py 'import json,sys; s=json.loads(sys.argv[1])["requests"]; assert s["stream_errors"]==2, s' "$output"
}

@test "faults are reproducible by seed" {
	outcomes() {
		start_server --fixed-timing --ttft-ms 1 --itl-ms 0 --fault-500 0.3 --fault-disconnect 0.3 --seed "$1"
		for i in $(seq 1 20); do
			curl -sS -o /dev/null -w '%{http_code}' -d '{"prompt":"a","max_tokens":5,"stream":true}' "$URL/v1/completions" 2>/dev/null || echo -n x
			echo -n ' '
		done
		kill "$SERVER_PID"
		wait_exit 5
	}
	a=$(outcomes 11)
	b=$(outcomes 11)
	c=$(outcomes 12)
	echo "$a / $b / $c"
	[ "$a" = "$b" ]
	[ "$a" != "$c" ]
	[[ "$a" == *500* ]]
}

@test "--max-requests: stops accepting, finishes in-flight requests, exits 0" {
	start_server --fixed-timing --ttft-ms 2 --itl-ms 1 --max-requests 2
	curl -sS -o /dev/null "$URL/health"
	post /v1/completions '{"prompt":"a","max_tokens":3}' >/dev/null
	post /v1/chat/completions '{"messages":[{"role":"user","content":"a"}],"max_tokens":3,"stream":true}' -N >"$BATS_TEST_TMPDIR/last.txt"
	grep -q '\[DONE\]' "$BATS_TEST_TMPDIR/last.txt"
	wait_exit 5
	[ "$EXIT_CODE" -eq 0 ]
	grep -q 'stopping (max-requests)' "$SERVER_LOG"
}

@test "SIGTERM and SIGINT mid-stream: exit 0 at once, the timing log records the cut" {
	for sig in TERM INT; do
		start_server --fixed-timing --ttft-ms 1 --itl-ms 100 --timing-log "$BATS_TEST_TMPDIR/t.jsonl"
		curl -sS -N -d '{"prompt":"a","max_tokens":1000,"stream":true}' "$URL/v1/completions" >/dev/null 2>&1 &
		client=$!
		wait_stats 's["tokens_sent"] >= 2'
		kill -"$sig" "$SERVER_PID"
		wait_exit 2
		[ "$EXIT_CODE" -eq 0 ]
		wait "$client" || true
		grep -q "stopping (SIG$sig)" "$SERVER_LOG"
		py 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1])]; assert len(r)==1 and r[0]["outcome"]=="shutdown" and r[0]["completion_tokens"]>=2, r' "$BATS_TEST_TMPDIR/t.jsonl"
	done
}

@test "the timing log holds the true deadlines and send times (fixed timing is exact)" {
	start_server --fixed-timing --ttft-ms 20 --itl-ms 5 --timing-log "$BATS_TEST_TMPDIR/t.jsonl" --max-requests 3
	post /v1/completions '{"prompt":"a b c","max_tokens":6,"stream":true}' -N -H 'x-request-id: r-1' >/dev/null
	post /v1/chat/completions '{"messages":[{"role":"user","content":"a"}],"max_tokens":3,"stream":true}' -N >/dev/null
	post /v1/completions '{"prompt":"a","max_tokens":2}' >/dev/null
	wait_exit 5
	py 'import json,sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert [r["serial"] for r in recs] == [1, 2, 3]
r = recs[0]
assert r["request_id"] == "r-1" and r["endpoint"] == "/v1/completions" and r["stream"] and r["outcome"] == "ok"
assert r["prompt_tokens"] == 3 and r["completion_tokens"] == 6 and r["tokens"] == [1] * 6
d = r["deadline_ns"]
assert d[0] - r["received_ns"] == 20_000_000, d[0] - r["received_ns"]
assert all(b - a == 5_000_000 for a, b in zip(d, d[1:])), d
assert all(s >= t for s, t in zip(r["sent_ns"], d)) and r["first_token_ns"] == r["sent_ns"][0]
assert recs[1]["endpoint"] == "/v1/chat/completions" and len(recs[1]["sent_ns"]) == 3
assert recs[2]["stream"] is False and recs[2]["completion_tokens"] == 2' "$BATS_TEST_TMPDIR/t.jsonl"
}

@test "noise for the gate: a session's offset and slow node from the seed, a slowdown, jitter" {
	# a slowdown scales every duration: the model's deadlines say exactly how much
	start_server --fixed-timing --ttft-ms 20 --itl-ms 5 --slowdown 0.5 \
		--timing-log "$BATS_TEST_TMPDIR/t.jsonl" --max-requests 1
	grep -q 'session x1.5000, jitter 0$' "$SERVER_LOG"
	post /v1/completions '{"prompt":"a","max_tokens":3,"stream":true}' -N >/dev/null
	wait_exit 5
	py 'import json,sys
r = json.loads(open(sys.argv[1]).readline())
d = r["deadline_ns"]
assert d[0] - r["received_ns"] == 30_000_000, d[0] - r["received_ns"]
assert all(b - a == 7_500_000 for a, b in zip(d, d[1:])), d' "$BATS_TEST_TMPDIR/t.jsonl"

	# the session's draw: the same seed, the same scale; another seed, another
	scale() {
		start_server "$@"
		curl -sS "$URL/mock/stats" | py 'import json,sys; s=json.load(sys.stdin)["session"]; print("%.6f %s" % (s["scale"], s["slow"]))'
		kill "$SERVER_PID"
		wait "$SERVER_PID" || true
		SERVER_PID=
	}
	a=$(scale --session-offset 0.02 --seed 7)
	b=$(scale --session-offset 0.02 --seed 7)
	c=$(scale --session-offset 0.02 --seed 8)
	[ "$a" = "$b" ]
	[ "$a" != "$c" ]
	[[ "$a" == *" False" ]]
	# a slow node, certain here: 5% slower by default
	[ "$(scale --slow-session 1)" = "1.050000 True" ]
	[ "$(scale --slow-session 1 --slow-factor 0.2 --slowdown -0.1)" = "1.080000 True" ]

	# jitter: each request its own scale, reproducible by seed and serial
	jitter() {
		start_server --fixed-timing --ttft-ms 100 --itl-ms 1 --jitter 0.05 --seed "$1" \
			--timing-log "$BATS_TEST_TMPDIR/j.jsonl" --max-requests 3
		for _ in 1 2 3; do post /v1/completions '{"prompt":"a","max_tokens":1}' >/dev/null; done
		wait_exit 5
		py 'import json,sys
print(" ".join(str(r["deadline_ns"][0] - r["received_ns"]) for r in map(json.loads, open(sys.argv[1]))))' "$BATS_TEST_TMPDIR/j.jsonl"
	}
	x=$(jitter 3)
	[ "$x" = "$(jitter 3)" ]
	[ "$x" != "$(jitter 4)" ]
	py 'import sys; t = [int(v) for v in sys.argv[1].split()]; assert len(set(t)) == 3 and all(80e6 < v < 125e6 for v in t), t' "$x"
	run -2 "$PERFGATE_BIN" mock-server --slowdown -0.7
	[[ "$output" == *'--slowdown -0.7: expected a number in [-0.5, 100]'* ]]
	run -2 "$PERFGATE_BIN" mock-server --slow-session 2
	[[ "$output" == *'--slow-session 2: expected a probability in [0, 1]'* ]]
}

@test "the engine model queues beyond --max-running and reports it in /mock/stats" {
	start_server --ttft-ms 5 --prefill-us-per-token 0 --itl-ms 5 --itl-growth 0 --max-running 2
	clients=()
	for i in 1 2 3 4; do
		post /v1/completions '{"prompt":"a","max_tokens":200,"stream":true}' -N >/dev/null &
		clients+=($!)
	done
	# each runs 1 s: while all four are in, two run and two wait (one
	# snapshot says both: a second read on a loaded machine may come after
	# the first two ended)
	wait_stats 's["requests"]["in_flight"] == 4 and s["engine"]["running"] == 2 and s["engine"]["queued"] == 2'
	wait "${clients[@]}"
	run curl -sS "$URL/mock/stats"
	py 'import json,sys; s=json.loads(sys.argv[1]); assert s["engine"]["peak_running"]==2 and s["engine"]["peak_queued"]==2 and s["requests"]["ok"]==4 and s["requests"]["peak_in_flight"]==4, s' "$output"
}

@test "readiness: a slow start refuses connections, --never-ready never listens, --exit-after-ms crashes" {
	start_server --startup-delay-ms 400
	grep -q 'listening on' "$SERVER_LOG"
	grep -q 'listening in 400 ms' "$SERVER_LOG"
	kill "$SERVER_PID"
	wait_exit 5

	"$PERFGATE_BIN" mock-server --port 0 --port-file "$BATS_TEST_TMPDIR/never" --never-ready --max-seconds 0.5 2>"$BATS_TEST_TMPDIR/never.log"
	[ ! -e "$BATS_TEST_TMPDIR/never" ]
	grep -q 'never becoming ready' "$BATS_TEST_TMPDIR/never.log"

	# SIGTERM while still starting: exit 0 at once (sent once it is bound:
	# before, on a loaded machine, the process may not even be in main yet)
	"$PERFGATE_BIN" mock-server --port 0 --never-ready --max-seconds 30 2>"$BATS_TEST_TMPDIR/starting.log" &
	SERVER_PID=$!
	for _ in $(seq 1 400); do
		grep -q 'never becoming ready' "$BATS_TEST_TMPDIR/starting.log" && break
		sleep 0.02
	done
	kill -TERM "$SERVER_PID"
	wait_exit 2
	[ "$EXIT_CODE" -eq 0 ]

	run -7 "$PERFGATE_BIN" mock-server --port 0 --startup-delay-ms 2000 --exit-after-ms 100 --exit-code 7
	[[ "$output" == *'simulated crash after 100 ms'* ]]

	start_server --exit-after-ms 1500 --exit-code 9 --fixed-timing --ttft-ms 1 --itl-ms 100
	run -18 curl -sS -N -d '{"prompt":"a","max_tokens":100,"stream":true}' "$URL/v1/completions"
	wait_exit 5
	[ "$EXIT_CODE" -eq 9 ]
}

@test "a slow start refuses connections until ready; a port in use is an error" {
	port=$(py 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$PERFGATE_BIN" mock-server --port "$port" --startup-delay-ms 1500 --max-seconds 10 2>"$BATS_TEST_TMPDIR/slow.log" &
	SERVER_PID=$!
	sleep 0.3
	run -7 curl -sS "http://127.0.0.1:$port/health"
	for _ in $(seq 1 100); do
		curl -sS -o /dev/null "http://127.0.0.1:$port/health" 2>/dev/null && break
		sleep 0.05
	done
	run curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health"
	[ "$output" = 200 ]
	run -3 "$PERFGATE_BIN" mock-server --port "$port" --max-seconds 1
	[[ "$output" == *"cannot bind 127.0.0.1:$port: Address already in use (another server has it: --port 0 picks a free port, and --port-file writes it down)"* ]]
}

@test "flags: loopback only unless --allow-remote, bad values exit 2, --help documents them" {
	run -2 "$PERFGATE_BIN" mock-server --host 0.0.0.0 --port 0 --max-seconds 1
	[[ "$output" == *'not a loopback address; pass --allow-remote'* ]]
	# the proxy role binds as the engine does
	run -2 timeout 10 "$PERFGATE_BIN" mock-server --role proxy --host 0.0.0.0 --port 0 \
		--prefill http://127.0.0.1:9 --decode http://127.0.0.1:9
	[[ "$output" == *'not a loopback address; pass --allow-remote'* ]]
	run -2 "$PERFGATE_BIN" mock-server --fault-500 1.5
	[[ "$output" == *'--fault-500 1.5: expected a probability'* ]]
	run -2 "$PERFGATE_BIN" mock-server --fault-500 0.6 --fault-stall 0.6
	run -2 "$PERFGATE_BIN" mock-server --fixed-timing --max-running 4
	[[ "$output" == *'--fixed-timing has no engine model: drop --max-running'* ]]
	run -2 "$PERFGATE_BIN" mock-server --tft-ms 5
	[[ "$output" == *"did you mean '--ttft-ms'"* ]]
	run -0 "$PERFGATE_BIN" mock-server --help
	for flag in --host --port --allow-remote --port-file --model --max-model-len --seed --fixed-timing \
		--ttft-ms --itl-ms --prefill-us-per-token --itl-growth --max-running --tokens-per-message \
		--eos-prob --fault-500 --fault-disconnect --fault-stall --fault-malformed --fault-stream-error \
		--stall-ms --max-seconds \
		--max-requests --startup-delay-ms --never-ready --exit-after-ms --exit-code --timing-log \
		--slowdown --session-offset --slow-session --slow-factor --jitter; do
		[[ "$output" == *"$flag"* ]] || { echo "missing $flag"; return 1; }
	done
	run -0 "$PERFGATE_BIN" mock-server --host ::1 --port 0 --max-seconds 0.2
}

@test "--idle-timeout-ms closes 3,000 half-sent and idle connections (408 to the half-sent), never a stream in progress" {
	start_server --idle-timeout-ms 1000 --fixed-timing --ttft-ms 1 --itl-ms 100
	# a stream that outlives the timeout three times over
	post /v1/completions '{"prompt":"a","max_tokens":30,"stream":true,"ignore_eos":true}' -N \
		>"$BATS_TEST_TMPDIR/stream.txt" &
	local streamer=$!
	"$PERFGATE_PYTHON" - "$PORT" <<'PY'
import resource, selectors, socket, sys, time
port = int(sys.argv[1])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
half = b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"pro"
kinds = {}
t0 = time.monotonic()
for i in range(3000):
    s = socket.create_connection(("127.0.0.1", port))
    kind = "half" if i % 3 else "silent"
    if kind == "half":
        s.sendall(half)
    kinds[s] = kind
# a whole request, then an idle keep-alive
ka = socket.create_connection(("127.0.0.1", port))
ka.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
kinds[ka] = "keepalive"
# one that trickles a request a byte every 100 ms: no byte restarts the clock
tr = socket.create_connection(("127.0.0.1", port))
kinds[tr] = "trickle"
# meanwhile the server answers others at once
h = socket.create_connection(("127.0.0.1", port))
h.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
assert h.recv(100).startswith(b"HTTP/1.1 200"), "busy server did not answer"
h.close()
sel = selectors.DefaultSelector()
got = {s: b"" for s in kinds}
for s in kinds:
    s.setblocking(False)
    sel.register(s, selectors.EVENT_READ)
closed = {}
trickle = iter(half)
next_byte = time.monotonic()
while len(closed) < len(kinds) and time.monotonic() - t0 < 20:
    if tr not in closed and time.monotonic() >= next_byte:
        try:
            tr.send(bytes([next(trickle)]))
        except (StopIteration, OSError):
            pass
        next_byte += 0.1
    for key, _ in sel.select(0.05):
        s = key.fileobj
        try:
            data = s.recv(65536)
        except ConnectionResetError:
            data = b""
        if data:
            got[s] += data
        else:
            closed[s] = time.monotonic() - t0
            sel.unregister(s)
left = [kinds[s] for s in kinds if s not in closed]
assert not left, "%d connections still open after 20 s: %s" % (len(left), sorted(set(left)))
by = {}
for s, k in kinds.items():
    by.setdefault(k, []).append(got[s])
assert all(g.startswith(b"HTTP/1.1 408 Request Timeout\r\n") for g in by["half"]), by["half"][:1]
assert all(g.startswith(b"HTTP/1.1 408") for g in by["trickle"]), by["trickle"]
assert all(g == b"" for g in by["silent"]), "silent ones got bytes"
assert by["keepalive"][0].startswith(b"HTTP/1.1 200") and b"408" not in by["keepalive"][0]
worst = max(closed.values())
assert 0.9 < min(closed.values()) and worst < 1 + 0.25 + 3, "closed between %.2f and %.2f s" % (min(closed.values()), worst)
print("3002 connections closed between %.2f and %.2f s" % (min(closed.values()), worst))
PY
	wait "$streamer"
	# the stream ran to its end: 30 tokens, then [DONE]
	[ "$(grep -c '^data: {' "$BATS_TEST_TMPDIR/stream.txt")" -eq 30 ]
	grep -q '^data: \[DONE\]' "$BATS_TEST_TMPDIR/stream.txt"
	wait_stats 's["connections"]["idle_timeouts"] == 3002 and s["connections"]["open"] == 1'
	# 0 turns it off; a negative value is an error
	run "$PERFGATE_BIN" mock-server --idle-timeout-ms -1
	[ "$status" -eq 2 ]
	[[ "$output" == *"--idle-timeout-ms: expected a number >= 0"* ]]
}

@test "--as-vllm serve: vLLM's command line, the model it names, and the flags it does not play said" {
	start_server --fixed-timing --as-vllm serve meta-llama/Llama-3.1-8B-Instruct \
		--served-model-name llama --tensor-parallel-size 4 --dtype=bfloat16 \
		--max_model_len 2048 --enforce-eager
	run curl -sS "$URL/v1/models"
	[ "$status" -eq 0 ]
	echo "$output" | py "import json,sys; d=json.load(sys.stdin)['data'][0]; assert d['id'] == 'llama' and d['max_model_len'] == 2048, d"
	grep -qxF "perfgate mock-server: as vllm serve meta-llama/Llama-3.1-8B-Instruct, simulated; not simulated: --tensor-parallel-size 4 --dtype=bfloat16 --enforce-eager" "$SERVER_LOG"
}

@test "--as-vllm bench throughput samples ShareGPT and writes vLLM's result; what it cannot play is exit 2" {
	cd "$BATS_TEST_TMPDIR"
	py "
import json
conv = [{'id': str(i), 'conversations': [
    {'from': 'human', 'value': ' '.join('q%d' % k for k in range(8 + i))},
    {'from': 'gpt', 'value': ' '.join('a%d' % k for k in range(5 + i % 3))}]} for i in range(20)]
json.dump(conv, open('sg.json', 'w'))"
	run --separate-stderr "$PERFGATE_BIN" mock-server --fixed-timing --ttft-ms 2 --itl-ms 1 \
		--as-vllm bench throughput --model m --dataset ./sg.json --num-prompts 10 \
		--backend vllm --output-json t.json
	[ "$status" -eq 0 ]
	[[ "$output" == "Throughput: "*" requests/s, "*" total tokens/s, "*" output tokens/s" ]]
	[ "$stderr" = "perfgate mock-server: as vllm bench throughput m, simulated; not simulated: --backend vllm" ]
	# all ten at once, fixed timing: done when the longest answer (7 tokens) is
	py "
import json
r = json.load(open('t.json'))
assert r['num_requests'] == 10 and abs(r['elapsed_time'] - 0.008) < 1e-9, r
assert abs(r['requests_per_second'] - 10 / 0.008) < 1e-6, r"
	run --separate-stderr "$PERFGATE_BIN" mock-server --as-vllm bench throughput --model m \
		--dataset missing.json --output-json t.json
	[ "$status" -eq 2 ]
	[ "${stderr_lines[1]}" = "perfgate mock-server: vllm bench throughput --dataset missing.json: no such file" ]
	run --separate-stderr "$PERFGATE_BIN" mock-server --as-vllm bench serve --model m
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"vllm bench serve is vLLM's own client, not an engine"* ]]
}
