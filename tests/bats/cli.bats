#!/usr/bin/env bats
# The command layer: perfgate --help / --version / help CMD, the command
# table, unknown commands and options, argument counts, exit codes.

load helpers
bats_require_minimum_version 1.5.0

COMMANDS="run report compare gate baseline import pipeline buildkite mock-server"

@test "perfgate --help lists every command and the exit codes (golden)" {
	run -0 --separate-stderr "$PERFGATE_BIN" --help
	golden - cli/help.txt <<<"$output"
	[ -z "$stderr" ]
	run -0 "$PERFGATE_BIN" -h
	run -0 "$PERFGATE_BIN" help
	for c in $COMMANDS; do
		assert_line --regexp "^  ${c} +[a-z]"
	done
}

@test "no command: the usage on stderr, exit 2" {
	run -2 --separate-stderr "$PERFGATE_BIN"
	[ -z "$output" ]
	[[ "$stderr" == "usage: perfgate <command> [options]"* ]]
}

@test "--version and version print the project version" {
	local want
	want="$(sed -n 's/^project(perfgate VERSION \([0-9.]*\).*/\1/p' "$PERFGATE_SRC/CMakeLists.txt")"
	run -0 "$PERFGATE_BIN" --version
	assert_output "perfgate ${want}"
	run -0 "$PERFGATE_BIN" version
	assert_output "perfgate ${want}"
}

@test "every command's --help, and help CMD, exit 0 with its usage on stdout" {
	local c
	for c in $COMMANDS; do
		run -0 --separate-stderr "$PERFGATE_BIN" $c --help
		[[ "$output" == "usage: perfgate ${c} "* ]] || fail "$c --help: $output"
		[ -z "$stderr" ] || fail "$c --help wrote to stderr: $stderr"
		run -0 --separate-stderr "$PERFGATE_BIN" help $c
		[[ "$output" == "usage: perfgate ${c} "* ]] || fail "help $c: $output"
	done
	for c in update record show history; do
		run -0 "$PERFGATE_BIN" baseline $c --help
		assert_line --index 0 --regexp "^usage: perfgate baseline ${c} "
	done
}

@test "an unknown command or option: one line with the nearest name, exit 2" {
	run -2 --separate-stderr "$PERFGATE_BIN" rnu
	[ "$stderr" = "perfgate: unknown command 'rnu' (did you mean 'run'?)" ]
	run -2 --separate-stderr "$PERFGATE_BIN" help xyzzy-frobnicate
	[ "$stderr" = "perfgate: unknown command 'xyzzy-frobnicate'; see 'perfgate --help'" ]
	run -2 --separate-stderr "$PERFGATE_BIN" report --ouptut x
	[ "$stderr" = "perfgate report: unknown option '--ouptut' (did you mean '--output'?)" ]
	run -2 --separate-stderr "$PERFGATE_BIN" run --repeat three x.yml
	[ "$stderr" = "perfgate run: option '--repeat': expected an integer, got 'three'" ]
	run -2 --separate-stderr "$PERFGATE_BIN" run x.yml --filter
	[ "$stderr" = "perfgate run: option '--filter' needs a value (REGEX)" ]
	run -2 --separate-stderr "$PERFGATE_BIN" run --dry-run=yes x.yml
	[ "$stderr" = "perfgate run: option '--dry-run' takes no value" ]
	run -2 --separate-stderr "$PERFGATE_BIN" baseline updte
	[ "$stderr" = "perfgate baseline: unknown subcommand 'updte' (did you mean 'update'?)" ]
}

@test "argument counts: one line naming what was expected, exit 2" {
	run -2 --separate-stderr "$PERFGATE_BIN" compare
	[ "$stderr" = "perfgate compare: expected one results directory; see 'perfgate compare --help'" ]
	run -2 --separate-stderr "$PERFGATE_BIN" pipeline a.yml b.yml
	[ "$stderr" = "perfgate pipeline: unexpected argument 'b.yml' (expected one suite file (the path each step loads))" ]
	run -2 --separate-stderr "$PERFGATE_BIN" mock-server 8000
	[ "$stderr" = "perfgate mock-server: unexpected argument '8000' (expected no arguments)" ]
	run -2 --separate-stderr "$PERFGATE_BIN" baseline history extra
	[ "$stderr" = "perfgate baseline history: unexpected argument 'extra' (expected no arguments)" ]
}

@test "-- ends the options; --name=value and -oVALUE work" {
	cd "$BATS_TEST_TMPDIR"
	printf 'defaults: {server: {command: "serve {model} --port {port}"}}\nlatency: [{name: latency_a, model: m}]\n' >./--odd.yml
	run -0 --separate-stderr "$PERFGATE_BIN" run --dry-run --results-dir=out1 -- --odd.yml
	assert_line --index 1 --partial "Results go to out1/."
	run -0 --separate-stderr "$PERFGATE_BIN" run -n -oout2 ./--odd.yml
	assert_line --index 1 --partial "Results go to out2/."
}

@test "every option of every command is documented in the README or docs/" {
	local c opt missing=""
	for c in run report compare gate import pipeline buildkite mock-server \
		"baseline update" "baseline record" "baseline show" "baseline history" \
		"baseline changes" "baseline check" "baseline repair"; do
		for opt in $("$PERFGATE_BIN" $c --help | sed -n 's/^ *\(-[a-zA-Z], \)\{0,1\}\(--[a-z][a-z0-9-]*\).*/\2/p'); do
			[ "$opt" = "--help" ] && continue
			cat "$PERFGATE_SRC/README.md" "$PERFGATE_SRC"/docs/*.md |
				grep -qE -- "${opt}([^a-z0-9-]|\$)" || missing="$missing $c:$opt"
		done
	done
	[ -z "$missing" ] || fail "not in the README or docs/:$missing"
}
