#!/bin/sh
# The plugin's reporting path at scale: `perfgate buildkite` (mode report)
# on a results directory of N serving points, with a buildkite-agent shim
# that only reads the annotation from stdin. Prints wall time, peak memory
# and the annotation's size (which must stay under 1 MiB).
#
#   bench/buildkite/annotation.sh [build/perfgate] [N=10000] [RUNS=3]
#
# Build without sanitizers for figures (cmake -B build-rel
# -DCMAKE_BUILD_TYPE=Release); the machine is shared, so repeat.
set -eu
here="$(cd "$(dirname "$0")/../.." && pwd)"
perfgate="$(realpath "${1:-build/perfgate}")"
n="${2:-10000}"
runs="${3:-3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
# a baseline of every point, and a run 10% slower everywhere: every
# serving point regresses, so the annotation has N rows to fit
/usr/bin/python3 "$here/tests/bats/make_results.py" base --points "$n"
"$perfgate" baseline update thresholds --from base --gpu H100 >/dev/null 2>&1
/usr/bin/python3 "$here/tests/bats/make_results.py" results --points "$n" --scale 0.9
mkdir shim
cat >shim/buildkite-agent <<'SHIM'
#!/bin/sh
[ "$1" = annotate ] && cat >"${BENCH_BODY:?}" || cat >/dev/null
SHIM
chmod +x shim/buildkite-agent
export PATH="$work/shim:$PATH" BUILDKITE=true BUILDKITE_STEP_KEY=bench BENCH_BODY="$work/body.md"
export BUILDKITE_PLUGIN_CONFIGURATION='{"mode":"report","gpu":"H100"}'
echo "points: $((n + 6)) result files"
i=1
while [ "$i" -le "$runs" ]; do
	/usr/bin/time -f "run $i: %e s wall, %M KiB max RSS" "$perfgate" buildkite >/dev/null 2>time.log ||
		true
	tail -1 time.log
	i=$((i + 1))
done
echo "annotation: $(wc -c <"$work/body.md") bytes (limit 1048576), $(grep -c '^| serving_' "$work/body.md") attention rows shown"
grep -m1 -o "^[0-9]* more rows were left out[^:]*" "$work/body.md" || true
