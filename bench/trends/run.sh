#!/usr/bin/env bash
# perfgate trends on a large history: time, peak RSS, page sizes.
#
#   bench/trends/run.sh [--perfgate BIN] [--points N] [--runs R] [--gpus G] [--keep DIR [--reuse]] [--site DIR]
#
# Defaults: 10,000 points x 200 runs on one GPU (the target: under 10 s,
# under 500 MB, an overview page under 2 MB). make_history.py writes the
# history in perfgate's format with git fast-import; then `perfgate
# trends` renders it, timed by /usr/bin/time (wall and CPU seconds, peak
# RSS).
# --keep DIR keeps the history and the site in DIR; --reuse renders DIR's
# history again instead of writing a new one. --site DIR writes the site
# there (removed first), e.g. on another file system: on an ext4 without a
# journal (this project's development VM), creating 10,000 files right
# after removing the last site's costs seconds more of kernel time than on
# a journaled one (ext4 then skips the inodes freed in the last minutes).
# Build without sanitizers for figures (cmake -B build-rel
# -DCMAKE_BUILD_TYPE=Release). The policy is the project's
# thresholds/H100.yml.
set -euo pipefail

here="$(cd "$(dirname "$0")/../.." && pwd)"
perfgate=""
points=10000
runs=200
gpus=1
keep=""
reuse=0
site=""
while [ $# -gt 0 ]; do
	case "$1" in
	--perfgate) perfgate="$2"; shift 2 ;;
	--points) points="$2"; shift 2 ;;
	--runs) runs="$2"; shift 2 ;;
	--gpus) gpus="$2"; shift 2 ;;
	--keep) keep="$2"; shift 2 ;;
	--reuse) reuse=1; shift ;;
	--site) site="$2"; shift 2 ;;
	*) echo "usage: $0 [--perfgate BIN] [--points N] [--runs R] [--gpus G] [--keep DIR [--reuse]] [--site DIR]" >&2; exit 2 ;;
	esac
done
if [ -z "$perfgate" ]; then
	perfgate="$here/build-rel/perfgate"
	[ -x "$perfgate" ] || perfgate="$here/build/perfgate"
fi
work="${keep:-$(mktemp -d)}"
mkdir -p "$work"
[ -n "$keep" ] || trap 'rm -rf "$work"' EXIT
site="${site:-$work/site}"
rm -rf "$site"
if [ "$reuse" = 1 ] && [ -d "$work/history.git" ]; then
	printf 'history: %s in git, as written before\n' "$(du -sh "$work/history.git" | cut -f1)"
else
	rm -rf "$work/history.git"
	start=$(date +%s.%N)
	python3 "$here/bench/trends/make_history.py" "$work/history.git" "$points" "$runs" "$gpus"
	made=$(date +%s.%N)
	printf 'history: %d points x %d runs on %d GPU(s), %s in git, made in %.1f s\n' \
		"$points" "$runs" "$gpus" "$(du -sh "$work/history.git" | cut -f1)" "$(echo "$made - $start" | bc)"
fi

/usr/bin/time -f '%e %U %S %M' -o "$work/time" "$perfgate" trends --repo "$work/history.git" --thresholds "$here/thresholds" "$site" >"$work/out" 2>"$work/err"
read -r secs user sys kb <"$work/time"
cat "$work/out"
largest=$(find "$site" -name index.html -path '*/*/index.html' -printf '%s\n' | sort -n | tail -1)
point_max=$(find "$site" -path '*/p/*.html' -printf '%s\n' | sort -n | tail -1)
printf 'perfgate trends: %.2f s wall, %.2f s CPU (user+sys), %d MB peak RSS; site %s in %d files; overview page %.2f MB (largest), point page %d KB (largest)\n' \
	"$secs" "$(echo "$user + $sys" | bc)" $((kb / 1024)) "$(du -sh "$site" | cut -f1)" "$(find "$site" -type f | wc -l)" \
	"$(echo "$largest / 1000000" | bc -l)" $((point_max / 1000))
