#!/usr/bin/env bats
# Dataset files before anything runs: a missing one stops the run at once
# with where to get it; --fetch-datasets fetches it (vLLM's ShareGPT from
# $HF_ENDPOINT, or the suite's url) and keeps it only when its sha256 is
# the one expected; a suite's sha256 is checked on every run. The "internet"
# is a file server on loopback (files_server.py).

bats_require_minimum_version 1.5.0

load helpers

HIST="${PERFGATE_SRC:-$(cd "${BATS_TEST_DIRNAME}/../.." && pwd)}/tests/data/vllm/history"
SHAREGPT=ShareGPT_V3_unfiltered_cleaned_split.json
HF_PATH=datasets/anon8231489123/ShareGPT_Vicuna_unfiltered/resolve/main/$SHAREGPT

setup() {
	work_setup
	unset HF_ENDPOINT PERFGATE_GPU
	export PERFGATE_VLLM="perfgate mock-server --fixed-timing --ttft-ms 2 --itl-ms 1 --as-vllm"
	mkdir -p www
	# a small ShareGPT file: what the server has
	"$PYTHON" - <<'PY'
import json
conv = [{"id": str(i), "conversations": [
    {"from": "human", "value": " ".join("q%d" % k for k in range(8 + i))},
    {"from": "gpt", "value": " ".join("a%d" % k for k in range(6 + i % 3))}]} for i in range(30)]
json.dump(conv, open("www/sg.json", "w"))
PY
	mkdir -p "www/$(dirname "$HF_PATH")"
	cp www/sg.json "www/$HF_PATH"
	"$PYTHON" "$BATS_TEST_DIRNAME/files_server.py" www port 60 &
	SERVER_PID=$!
	for _ in $(seq 1 100); do
		[ -s port ] && break
		sleep 0.05
	done
	URL="http://127.0.0.1:$(cat port)"
	# vLLM's first published serving test, one rate, 4 prompts
	"$PYTHON" - "$HIST/fc10a04/serving-tests.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))[0]
t["qps_list"] = ["inf"]
t["client_parameters"]["num_prompts"] = 4
json.dump([t], open("serving-tests.json", "w"), indent=4)
PY
}

teardown() {
	kill "$SERVER_PID" 2>/dev/null || true
	wait "$SERVER_PID" 2>/dev/null || true
}

@test "a missing dataset file stops the run before anything starts, saying where vLLM's driver gets it" {
	run --separate-stderr "$PERFGATE" run --gpu H100 serving-tests.json
	[ "$status" -eq 2 ]
	[ "$stderr" = "perfgate run: serving-tests.json:2: test 'serving_llama8B_tp1_sharegpt': dataset file './$SHAREGPT': not found (relative to $PWD, where perfgate runs); perfgate run --fetch-datasets (the step's fetch-datasets: true) fetches it from https://huggingface.co/$HF_PATH and checks its sha256" ]
	[ ! -e results ]
	# a dry run says so and still shows the plan
	run --separate-stderr "$PERFGATE" run --dry-run serving-tests.json
	[ "$status" -eq 0 ]
	[[ "$stderr" == "perfgate run: warning: serving-tests.json:2: test 'serving_llama8B_tp1_sharegpt': dataset file './$SHAREGPT': not found "* ]]
	[[ "$output" == *"[1/1] serving_llama8B_tp1_sharegpt_qps_inf"* ]]
	# and the plugin's step stops before its GPU work, the same way
	BUILDKITE_PLUGIN_CONFIGURATION='{"suites": "serving-tests.json", "gpu": "H100", "mode": "run"}' \
		run --separate-stderr "$PERFGATE" buildkite
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"serving-tests.json:2: test 'serving_llama8B_tp1_sharegpt': dataset file './$SHAREGPT': not found"* ]]
	[ ! -e results ]
}

@test "--fetch-datasets fetches ShareGPT as vLLM's driver does and keeps nothing whose sha256 is not the pinned one" {
	# $HF_ENDPOINT (a mirror) stands for huggingface.co; the redirect is
	# followed as Hugging Face's to its CDN
	HF_ENDPOINT="$URL/redirect" run --separate-stderr "$PERFGATE" run --gpu H100 --fetch-datasets \
		serving-tests.json
	[ "$status" -eq 3 ]
	[ "${stderr_lines[0]}" = "perfgate: fetching ./$SHAREGPT from $URL/redirect/$HF_PATH" ]
	sha=$(sha256sum www/sg.json | cut -d' ' -f1)
	[ "${stderr_lines[1]}" = "perfgate run: fetched ./$SHAREGPT from $URL/redirect/$HF_PATH: its sha256 is $sha, not 35f0e213ce091ed9b9af2a1f0755e9d39f9ccec34ab281cd4ca60d70f6479ba4: not the file expected (a mirror's other version, or a damaged download); nothing was kept" ]
	grep -qxF "/redirect/$HF_PATH" requests.log
	grep -qxF "/$HF_PATH" requests.log
	# nothing left behind: no file, no temporary
	[ -z "$(ls -A . | grep -i sharegpt)" ]
	[ ! -e results ]
	# a file already there is checked when fetching is asked for
	cp www/sg.json "$SHAREGPT"
	run --separate-stderr "$PERFGATE" run --gpu H100 --fetch-datasets serving-tests.json
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"serving-tests.json:2: test 'serving_llama8B_tp1_sharegpt': dataset file './$SHAREGPT': has sha256 $sha, not 35f0e213ce091ed9b9af2a1f0755e9d39f9ccec34ab281cd4ca60d70f6479ba4; not the file vLLM's CI uses; move it away and --fetch-datasets fetches that one" ]]
	# and not when it is not: a small ShareGPT of one's own runs
	run --separate-stderr timeout 60 "$PERFGATE" run --gpu H100 serving-tests.json
	[ "$status" -eq 0 ]
}

@test "a suite's url and sha256: fetched when asked, checked as it arrives and on every run" {
	sha=$(sha256sum www/sg.json | cut -d' ' -f1)
	cat >suite.yml <<YML
serving:
  - name: serving_sg
    model: m
    server: {command: "perfgate mock-server --port {port} --model {model} --fixed-timing --ttft-ms 2 --itl-ms 1"}
    dataset: {name: sharegpt, path: data/sg.json, url: "$URL/sg.json", sha256: "${sha^^}"}
    num_prompts: 4
YML
	run --separate-stderr timeout 60 "$PERFGATE" run --gpu H100 --fetch-datasets suite.yml
	[ "$status" -eq 0 ]
	[ "${stderr_lines[0]}" = "perfgate: fetching data/sg.json from $URL/sg.json" ]
	[[ "${stderr_lines[1]}" == "perfgate: fetched data/sg.json, "*" bytes, sha256 $sha as expected" ]]
	cmp data/sg.json www/sg.json
	[ -e results/serving_sg_qps_inf.json ]
	# present and as the suite says: checked, not fetched again
	: >requests.log
	run --separate-stderr timeout 60 "$PERFGATE" run --gpu H100 -o again suite.yml
	[ "$status" -eq 0 ]
	[ "${stderr_lines[0]}" = "perfgate: dataset data/sg.json: sha256 $sha as expected" ]
	[ ! -s requests.log ]
	# changed: every run refuses it, before anything starts
	echo ' ' >>data/sg.json
	run --separate-stderr "$PERFGATE" run --gpu H100 -o third suite.yml
	[ "$status" -eq 2 ]
	[[ "$stderr" == "perfgate run: suite.yml:2: test 'serving_sg': dataset file 'data/sg.json': has sha256 "*", not $sha; the suite's sha256 says another file" ]]
	[ ! -e third ]
	# a source that is not there: exit 3, nothing kept
	rm data/sg.json
	sed -i "s|$URL/sg.json|$URL/gone.json|" suite.yml
	run --separate-stderr "$PERFGATE" run --gpu H100 --fetch-datasets suite.yml
	[ "$status" -eq 3 ]
	[ "${stderr_lines[1]}" = "perfgate run: fetching data/sg.json from $URL/gone.json: HTTP 404" ]
	[ -z "$(ls -A data)" ]
	# and a bad checksum is refused when the suite loads
	sed -i 's|sha256: "[^"]*"|sha256: "abc"|' suite.yml
	run --separate-stderr "$PERFGATE" run --dry-run suite.yml
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"serving[0].dataset.sha256: expected a SHA-256 digest: 64 hex digits"* ]]
}
