# The secret forms perfgate must keep out of every file it writes or
# uploads, and a driver that runs perfgate end to end for one form and
# counts what leaked. Sourced by tests/bats/secrets.bats (one test per
# form, 0 occurrences asserted) and bench/secrets/leak-table (the table).
#
# Each form runs `perfgate buildkite` (mode run) as the agent would, with
# a buildkite-agent shim that keeps every annotation body and argument, a
# stand-in server that prints its arguments and environment the way vLLM
# does at startup (then serves with perfgate mock-server on loopback), or a
# stand-in benchmark command that prints them and writes them into its
# result file. Plain bash: no bats needed. Needs PERFGATE_BIN.

SECRET_FORMS=(
	api-key-sep api-key-eq hf_token-sep token-eq header-bearer auth-flag bearer-flag
	url-userinfo-argv url-query-argv env-db-pass env-password env-secret env-database-url
	environ multiline api-key-env vars-template shell-var remote-userinfo remote-query
	command-log
)

# A loopback port nothing listens on (bound, read back, released).
secret_free_port() {
	/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# The stand-ins, written into $1.
secret_fakes() {
	local dir="$1"
	cat >"$dir/fake-server" <<'EOF'
#!/bin/bash
# vllm serve as far as secrets go: it prints what it was given as it starts
port=
args=("$@")
while [ $# -gt 0 ]; do
	[ "$1" = --port ] && port="$2"
	shift
done
echo "fake-server args: ${args[*]}"
echo "fake-server args on stderr: ${args[*]}" >&2
env | sort | sed 's/^/env /'
if [ -n "${MY_SECRET:-}" ]; then
	# a multi-line secret written in two pieces, cut inside a line
	half=$((${#MY_SECRET} / 2))
	printf 'multi-line secret: %s' "${MY_SECRET:0:half}"
	sleep 0.3
	printf '%s\n' "${MY_SECRET:half}"
fi
exec "$PERFGATE_BIN" mock-server --port "$port" --model m --ttft-ms 1 --itl-ms 1
EOF
	cat >"$dir/fake-bench" <<'EOF'
#!/bin/bash
# vllm bench latency as far as secrets go: prints its arguments and
# environment, and keeps its arguments in the result it writes
result=
args=("$@")
while [ $# -gt 0 ]; do
	[ "$1" = --result ] && result="$2"
	shift
done
echo "fake-bench args: ${args[*]}"
env | sort | sed 's/^/env /'
exec /usr/bin/python3 -c '
import json, sys
json.dump({"avg_latency": 1.25, "std_latency": 0.05, "latencies": [1.2, 1.25, 1.3],
           "percentiles": {"50": 1.25, "99": 1.3}, "args": sys.argv[2]},
          open(sys.argv[1], "w"))' "$result" "${args[*]}"
EOF
	cat >"$dir/buildkite-agent" <<'EOF'
#!/bin/bash
# keeps its arguments and what came on stdin (an annotation's body)
n=$(ls "$AGENT_CALLS" | wc -l)
printf '%q ' "$@" >"$AGENT_CALLS/$n.args"
cat >"$AGENT_CALLS/$n.stdin"
EOF
	chmod +x "$dir/fake-server" "$dir/fake-bench" "$dir/buildkite-agent"
}

# The suite of one form, with its secret s; extra environment for perfgate
# in the array form_env.
secret_form_suite() {
	local form="$1" s="$2" dir="$3" fake="$3/fake-server" cmd env="" client="" test_vars=""
	local server=""
	cmd="$fake --port {port}"
	form_env=()
	case "$form" in
	api-key-sep) cmd+=" --api-key $s" ;;
	api-key-eq) cmd+=" --api-key=$s" ;;
	hf_token-sep) cmd+=" --hf_token $s" ;;
	token-eq) cmd+=" --token=$s" ;;
	header-bearer) cmd+=" --header 'Authorization: Bearer $s'" ;;
	auth-flag) cmd+=" --auth $s" ;;
	bearer-flag) cmd+=" --bearer $s" ;;
	url-userinfo-argv) cmd+=" --upstream http://svc:$s@10.0.0.1:9/v1" ;;
	url-query-argv) cmd+=" --upstream 'http://10.0.0.1:9/v1?model=m&api_key=$s'" ;;
	env-db-pass) env="DB_PASS: '$s'" ;;
	env-password) env="SMTP_PASSWORD: '$s'" ;;
	env-secret) env="APP_SECRET: '$s'" ;;
	env-database-url) env="DATABASE_URL: 'postgres://app:$s@db:5432/x'" ;;
	environ) form_env=("HF_TOKEN=$s") ;;
	multiline) env="MY_SECRET: \"first-line-${s}-a\\nsecond-line-${s}-b\"" ;;
	api-key-env)
		form_env=("BENCH_ACCESS=$s")
		client="client: {api_key_env: BENCH_ACCESS}"
		;;
	vars-template)
		test_vars="vars: {k: '$s'}"
		cmd+=" --api-key {k}"
		;;
	shell-var)
		env="LLM_VAR: '$s'"
		cmd+=' --api-key "$LLM_VAR"'
		server="shell: true"
		;;
	remote-userinfo)
		server="remote: 'http://svc:$s@127.0.0.1:$(secret_free_port)'"
		;;
	remote-query)
		server="remote: 'http://127.0.0.1:$(secret_free_port)/?api_key=$s'"
		;;
	command-log)
		cat <<EOF
latency:
  - name: latency_secret
    model: m
    command: $dir/fake-bench --api-key $s --result {result}
EOF
		return
		;;
	esac
	case "$form" in
	remote-*)
		cat <<EOF
serving:
  - name: serving_secret
    model: m
    num_prompts: 4
    dataset: {name: random, input_len: 8, output_len: 4}
    server:
      $server
      ready: /health
      ready_timeout: 1
EOF
		return
		;;
	esac
	cat <<EOF
serving:
  - name: serving_secret
    model: m
    num_prompts: 4
    dataset: {name: random, input_len: 8, output_len: 4}
    ${test_vars}
    ${client}
    server:
      command: >-
        $cmd
      ${server}
      ready: /health
      ready_timeout: 30
      stop_timeout: 5
      env: {${env}}
EOF
}

# The secrets to look for: the value, and for a multi-line one each line.
secret_form_values() {
	local form="$1" s="$2"
	if [ "$form" = multiline ]; then
		printf '%s\n' "first-line-${s}-a" "second-line-${s}-b"
	else
		printf '%s\n' "$s"
	fi
}

# secret_form_run FORM DIR: run perfgate for FORM in a fresh DIR. Leaves
# DIR/results, DIR/calls (the agent shim's), DIR/log (perfgate's stdout
# and stderr), DIR/secrets (one value per line) and DIR/status.
secret_form_run() {
	local form="$1" dir="$2" s status
	s="pg-${form//_/-}-s3cr3t-$RANDOM$RANDOM"
	mkdir -p "$dir/calls" "$dir/bin"
	secret_fakes "$dir/bin"
	secret_form_values "$form" "$s" >"$dir/secrets"
	secret_form_suite "$form" "$s" "$dir/bin" >"$dir/suite.yml"
	(
		cd "$dir" || exit 3
		export PATH="$dir/bin:$PATH" AGENT_CALLS="$dir/calls" TMPDIR="$dir"
		export BUILDKITE=true BUILDKITE_JOB_ID=job-1 BUILDKITE_STEP_KEY=perf BUILDKITE_LABEL=perf
		export BUILDKITE_BRANCH=main BUILDKITE_PULL_REQUEST=false BUILDKITE_COMMIT=1a2b3c4d5e6f
		export BUILDKITE_PLUGIN_CONFIGURATION='{"mode":"run","suites":"suite.yml"}'
		unset PERFGATE_GPU
		for kv in "${form_env[@]}"; do export "${kv?}"; done
		"$PERFGATE_BIN" buildkite >"$dir/log" 2>&1
	) && status=0 || status=$?
	echo "$status" >"$dir/status"
}

# Occurrences of the form's secrets in every file under the results
# directory, in what the agent shim got (annotations, arguments) and in
# perfgate's own output: "<occurrences> <files>" (files: those with any).
secret_form_leaks() {
	local dir="$1" total=0 files=() f n s
	while IFS= read -r -d '' f; do
		n=0
		while IFS= read -r s; do
			n=$((n + $(grep -a -o -F -- "$s" "$f" | wc -l)))
		done <"$dir/secrets"
		if [ "$n" -gt 0 ]; then
			total=$((total + n))
			files+=("${f#"$dir"/}")
		fi
	done < <(find "$dir/results" "$dir/calls" "$dir/log" -type f -print0 2>/dev/null)
	echo "$total ${files[*]}"
}

# How many "***" the results directory holds: the secret got there, and
# was hidden (a form that never reached perfgate proves nothing).
secret_form_masks() {
	find "$1/results" -type f -print0 | xargs -0 cat | grep -a -o -F '***' | wc -l
}
