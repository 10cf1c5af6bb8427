#!/usr/bin/env bats
# The command layer: perfgate --help / --version / help CMD, the command
# table, unknown commands and options, argument counts, exit codes.

load helpers
bats_require_minimum_version 1.5.0

COMMANDS="run report compare gate baseline trends import pipeline buildkite mock-server"

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

@test "--version, -V and version print the project version, in every command too" {
	local want c
	want="$(sed -n 's/^project(perfgate VERSION \([0-9.]*\).*/\1/p' "$PERFGATE_SRC/CMakeLists.txt")"
	for c in --version -V version; do
		run -0 "$PERFGATE_BIN" $c
		assert_output "perfgate ${want}"
	done
	for c in $COMMANDS "baseline update" "baseline history"; do
		run -0 --separate-stderr "$PERFGATE_BIN" $c -V
		assert_output "perfgate ${want}"
		[ "$c" = baseline ] && continue
		run -0 --separate-stderr "$PERFGATE_BIN" $c --vers
		assert_output "perfgate ${want}"
	done
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

@test "an unknown command or option: one line with the nearest name and --help, exit 2" {
	run -2 --separate-stderr "$PERFGATE_BIN" rnu
	[ "$stderr" = "perfgate: unknown command 'rnu' (did you mean 'run'?); see 'perfgate --help'" ]
	run -2 --separate-stderr "$PERFGATE_BIN" help xyzzy-frobnicate
	[ "$stderr" = "perfgate: unknown command 'xyzzy-frobnicate'; see 'perfgate --help'" ]
	run -2 --separate-stderr "$PERFGATE_BIN" report --ouptut x
	[ "$stderr" = "perfgate report: unknown option '--ouptut' (did you mean '--output'?); see 'perfgate report --help'" ]
	run -2 --separate-stderr "$PERFGATE_BIN" run --repeat three x.yml
	[ "$stderr" = "perfgate run: option '--repeat': expected an integer, got 'three'; see 'perfgate run --help'" ]
	run -2 --separate-stderr "$PERFGATE_BIN" run x.yml --filter
	[ "$stderr" = "perfgate run: option '--filter' needs a value (REGEX); see 'perfgate run --help'" ]
	run -2 --separate-stderr "$PERFGATE_BIN" run x.yml -o
	[ "$stderr" = "perfgate run: option '--output' needs a value (DIR); see 'perfgate run --help'" ]
	run -2 --separate-stderr "$PERFGATE_BIN" run --dry-run=yes x.yml
	[ "$stderr" = "perfgate run: option '--dry-run' takes no value; see 'perfgate run --help'" ]
	run -2 --separate-stderr "$PERFGATE_BIN" run -z x.yml
	[ "$stderr" = "perfgate run: unknown option '-z'; see 'perfgate run --help'" ]
	run -2 --separate-stderr "$PERFGATE_BIN" baseline updte
	[ "$stderr" = "perfgate baseline: unknown subcommand 'updte' (did you mean 'update'?); see 'perfgate baseline --help'" ]
}

@test "GNU options: abbreviations, ambiguity, bundled short flags, options after arguments" {
	run -2 --separate-stderr "$PERFGATE_BIN" run --re x.yml
	[ "$stderr" = "perfgate run: option '--re' is ambiguous (--results-dir, --repeat); see 'perfgate run --help'" ]
	run -2 --separate-stderr "$PERFGATE_BIN" mock-server --v
	[ "$stderr" = "perfgate mock-server: option '--v' is ambiguous (--vocab-size, --version); see 'perfgate mock-server --help'" ]
	# -qc DIR: --quiet, and --confirm-dir takes the next argument
	run -3 --separate-stderr "$PERFGATE_BIN" compare -qc "$BATS_TEST_TMPDIR/nothing-here" "$BATS_TEST_TMPDIR"
	[[ "$stderr" == "perfgate compare: $BATS_TEST_TMPDIR: no benchmark results in it" ]] || fail "$stderr"
	run -3 --separate-stderr "$PERFGATE_BIN" compare "$BATS_TEST_TMPDIR" --conf="$BATS_TEST_TMPDIR/x" --qui
	[[ "$stderr" == "perfgate compare: $BATS_TEST_TMPDIR: no benchmark results in it" ]] || fail "$stderr"
}

@test "one meaning per short flag: every command's -X is the same --long" {
	local c line letter long seen=" "
	for c in run ab bisect report compare gate import pipeline buildkite mock-server \
		"baseline update" "baseline record" "baseline show" "baseline history"; do
		while read -r letter long; do
			case "$seen" in
			*" $letter=$long "*) ;;
			*" $letter="*) fail "$c: -$letter is --$long, elsewhere${seen#* $letter=}" ;;
			*) seen="$seen$letter=$long " ;;
			esac
		done < <("$PERFGATE_BIN" $c --help | sed -n 's/^  -\([a-zA-Z]\), --\([a-z][a-z0-9-]*\).*/\1 \2/p')
	done
	[[ "$seen" == *" o=output "* && "$seen" == *" n=dry-run "* && "$seen" == *" p=port "* ]]
}

@test "short flags that moved say what to write instead" {
	run -2 --separate-stderr "$PERFGATE_BIN" baseline history --gpu H100 -n 5
	[ "$stderr" = "perfgate baseline history: unknown option '-n' (use --last N here; -n means --dry-run in perfgate); see 'perfgate baseline history --help'" ]
	run -2 --separate-stderr "$PERFGATE_BIN" baseline history -p x
	[ "$stderr" = "perfgate baseline history: unknown option '-p' (use --point NAME here; -p means --port in perfgate); see 'perfgate baseline history --help'" ]
	run -2 --separate-stderr "$PERFGATE_BIN" pipeline x.yml -o baseline=git
	[ "$stderr" = "perfgate pipeline: unknown option '-o' (use --option KEY=VALUE here; -o means --output in perfgate); see 'perfgate pipeline --help'" ]
}

@test "- reads stdin where a command reads a file" {
	cd "$BATS_TEST_TMPDIR"
	run -0 --separate-stderr "$PERFGATE_BIN" run --dry-run - \
		<<<$'defaults: {server: {command: "serve {model} --port {port}"}}\nlatency: [{name: latency_stdin, model: m}]'
	assert_output --partial "latency_stdin"
	run -2 --separate-stderr "$PERFGATE_BIN" run --dry-run - <<<'latency: [{name: latency_a, model: m, bogus: 1}]'
	[[ "$stderr" == "perfgate run: <stdin>:1:"* ]] || fail "$stderr"
	run -2 --separate-stderr "$PERFGATE_BIN" run --dry-run - - </dev/null
	[ "$stderr" = "perfgate run: - (stdin) can be given once" ]
	# a vllm bench serve result on stdin
	run -0 --separate-stderr "$PERFGATE_BIN" import -o imported - \
		<"$PERFGATE_TESTS/data/import/serving_llama8B_tp1_sharegpt_qps_4.json"
	assert_output "imported: 1 result"
	assert_file_exists imported/stdin.json
	run -0 --separate-stderr "$PERFGATE_BIN" baseline update th --from - --gpu H100 \
		<"$PERFGATE_TESTS/data/import/serving_llama8B_tp1_sharegpt_qps_4.json"
	grep -q "^  stdin:" th/H100.yml
	run -2 --separate-stderr "$PERFGATE_BIN" pipeline - --gpus H100 --plugin p#v1 </dev/null
	[[ "$stderr" == *"not stdin"* ]] || fail "$stderr"
}

@test "argument counts: one line naming what was expected, exit 2" {
	run -2 --separate-stderr "$PERFGATE_BIN" compare
	[ "$stderr" = "perfgate compare: expected one results directory; see 'perfgate compare --help'" ]
	run -2 --separate-stderr "$PERFGATE_BIN" pipeline a.yml b.yml
	[ "$stderr" = "perfgate pipeline: unexpected argument 'b.yml' (expected one suite file (the path each step loads)); see 'perfgate pipeline --help'" ]
	run -2 --separate-stderr "$PERFGATE_BIN" mock-server 8000
	[ "$stderr" = "perfgate mock-server: unexpected argument '8000' (expected no arguments); see 'perfgate mock-server --help'" ]
	run -2 --separate-stderr "$PERFGATE_BIN" baseline history extra
	[ "$stderr" = "perfgate baseline history: unexpected argument 'extra' (expected no arguments); see 'perfgate baseline history --help'" ]
}

@test "-- ends the options; --name=value and -oVALUE work" {
	cd "$BATS_TEST_TMPDIR"
	printf 'defaults: {server: {command: "serve {model} --port {port}"}}\nlatency: [{name: latency_a, model: m}]\n' >./--odd.yml
	run -0 --separate-stderr "$PERFGATE_BIN" run --dry-run --results-dir=out1 -- --odd.yml
	assert_line --index 1 --partial "Results go to out1/."
	run -0 --separate-stderr "$PERFGATE_BIN" run -n -oout2 ./--odd.yml
	assert_line --index 1 --partial "Results go to out2/."
	run -0 --separate-stderr "$PERFGATE_BIN" run ./--odd.yml -no out3
	assert_line --index 1 --partial "Results go to out3/."
}

@test "every option of every command is documented in the README or docs/" {
	local c opt missing=""
	for c in run report compare gate trends import pipeline buildkite mock-server \
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
