# Shared by the suites that start real servers and must leave none behind
# (run_lifecycle, run_startup, ab): a mark every process of the test
# carries on its command line (the suite passes it as --model), the
# processes carrying it, and a bounded wait until none does.

# mark_setup PREFIX: a mark unique per test, no perfgate started yet
# ($PG_PID), and a TMPDIR that a perfgate killed with SIGKILL cannot
# leave a temporary directory outside of.
mark_setup() {
	MARK="$1$$x${BATS_TEST_NUMBER}x$RANDOM"
	PG_PID=
	export TMPDIR="$BATS_TEST_TMPDIR"
}

# teardown: a perfgate the test left running is killed.
mark_teardown() {
	if [ -n "$PG_PID" ]; then
		kill -9 "$PG_PID" 2>/dev/null || true
	fi
}

# Processes whose command line carries the mark (the "[x]" keeps grep from
# matching its own command line).
procs() {
	local pattern="[${MARK:0:1}]${MARK:1}"
	grep -l -s -a -- "$pattern" /proc/[0-9]*/cmdline 2>/dev/null | cut -d/ -f3 || true
}

# No process of the test's servers is left, waiting up to $1 seconds (a
# guard stopping a group after SIGKILL takes a moment).
no_procs_left() {
	local deadline=$((SECONDS + ${1:-0}))
	while :; do
		local left
		left=$(procs)
		[ -z "$left" ] && return 0
		if [ "$SECONDS" -ge "$deadline" ]; then
			echo "processes left:"
			for p in $left; do tr '\0' ' ' <"/proc/$p/cmdline"; echo; done
			return 1
		fi
		sleep 0.1
	done
}
