#!/usr/bin/env bats
# No secret leaves the job: for each form a secret reaches perfgate in
# (flag values in both forms, headers, URL passwords and query
# parameters, server.remote, secret environment variables and credentials
# inside others, multi-line values written in pieces, API keys, template
# variables, shell variables, an external command), perfgate runs end to
# end under the plugin -- a stand-in server that prints its secrets as
# vLLM does, perfgate mock-server on loopback -- and the secret occurs 0
# times in every file under the results directory, in every annotation
# and agent call, and in the job log. tests/bats/secret_forms.bash has
# the forms; bench/secrets/leak-table prints the same counts as a table.

load helpers
load secret_forms

setup() {
	common_setup
	: "${PERFGATE_BIN:?PERFGATE_BIN is set by ctest}"
	export PERFGATE_BIN
	unset HF_TOKEN BENCH_ACCESS
}

# Run one form; 0 occurrences anywhere, and at least one "***" where the
# secret was hidden.
check_form() {
	local dir="$BATS_TEST_TMPDIR/$1" leaks masks
	secret_form_run "$1" "$dir"
	leaks="$(secret_form_leaks "$dir")"
	masks="$(secret_form_masks "$dir")"
	if [ "${leaks%% *}" != 0 ] || [ "$masks" -eq 0 ]; then
		echo "form $1: ${leaks%% *} occurrences (in:${leaks#* }), $masks masks, exit $(cat "$dir/status")"
		cat "$dir/log"
		return 1
	fi
	# the agent was called: the annotation is among what was checked
	ls "$dir/calls" | grep -q stdin
}

@test "--api-key X: the value never leaves the job" { check_form api-key-sep; }
@test "--api-key=X: the value never leaves the job" { check_form api-key-eq; }
@test "--hf_token X: the value never leaves the job" { check_form hf_token-sep; }
@test "--token=X: the value never leaves the job" { check_form token-eq; }
@test "--header 'Authorization: Bearer X': the token never leaves the job" { check_form header-bearer; }
@test "--auth X: the value never leaves the job" { check_form auth-flag; }
@test "--bearer X: the value never leaves the job" { check_form bearer-flag; }
@test "a URL's password in the server's argv never leaves the job" { check_form url-userinfo-argv; }
@test "a URL's ?api_key= in the server's argv never leaves the job" { check_form url-query-argv; }
@test "DB_PASS in the server's env never leaves the job" { check_form env-db-pass; }
@test "*_PASSWORD in the server's env never leaves the job" { check_form env-password; }
@test "*_SECRET in the server's env never leaves the job" { check_form env-secret; }
@test "DATABASE_URL=postgres://u:X@... never leaves the job" { check_form env-database-url; }
@test "HF_TOKEN in perfgate's own environment never leaves the job" { check_form environ; }
@test "a multi-line secret printed in two pieces never leaves the job" { check_form multiline; }
@test "the API key (client.api_key_env) never leaves the job" { check_form api-key-env; }
@test "a secret from a template variable never leaves the job" { check_form vars-template; }
@test "a secret given to a flag as \$VAR in a shell command never leaves the job" { check_form shell-var; }
@test "server.remote user:password@ never leaves the job through the readiness error" { check_form remote-userinfo; }
@test "server.remote ?api_key= never leaves the job through the readiness error" { check_form remote-query; }
@test "an external command's secret never leaves the job (its log, its result file)" { check_form command-log; }

@test "every form has a test" {
	local tested
	tested="$(grep -o 'check_form [a-z_-]*; }' "$BATS_TEST_FILENAME" | grep -v '"$1"' | awk '{print $2}' | tr -d ';' | sort)"
	[ "$tested" = "$(printf '%s\n' "${SECRET_FORMS[@]}" | sort)" ]
}
