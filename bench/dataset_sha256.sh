#!/bin/sh
# What a dataset's sha256 costs every run: a file of ShareGPT's size
# (672,837,942 bytes, zeros are hashed as fast as text), a suite that pins
# its checksum, and `perfgate run --dry-run` (which checks dataset files
# as a run does before anything starts) with and without the pin.
#
#   bench/dataset_sha256.sh [PERFGATE] [BYTES]   (defaults: build/perfgate, 672837942)
#
# Prints the best of 3 wall and CPU seconds of each, and their difference:
# the hash of the whole file (OpenSSL's SHA-256, through the page cache
# after a first read). Use a build without sanitizers.
set -eu
bin=$(realpath "${1:-build/perfgate}")
bytes=${2:-672837942}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
head -c "$bytes" /dev/zero >sg.json
sha=$(sha256sum sg.json | cut -d' ' -f1)
for pin in "" "sha256: $sha"; do
	cat >"suite${pin:+-pinned}.yml" <<YML
serving:
  - name: serving_sg
    model: m
    server: {command: "vllm serve {model} --port {port}"}
    dataset: {name: sharegpt, path: sg.json${pin:+, $pin}}
YML
done
best() { # the fastest of 3 runs: "wall cpu"
	for _ in 1 2 3; do
		/usr/bin/time -f '%e %U %S' "$bin" run --dry-run "$1" 2>&1 >/dev/null | tail -1
	done | awk '{ cpu = $2 + $3; if (NR == 1 || $1 < w) { w = $1; c = cpu } } END { printf "%.2f %.2f", w, c }'
}
cat sg.json >/dev/null # in the page cache, as a dataset read every night is
plain=$(best suite.yml)
pinned=$(best suite-pinned.yml)
echo "file: $bytes bytes"
echo "dry run, no sha256:     wall $(echo "$plain" | cut -d' ' -f1) s, cpu $(echo "$plain" | cut -d' ' -f2) s"
echo "dry run, sha256 pinned: wall $(echo "$pinned" | cut -d' ' -f1) s, cpu $(echo "$pinned" | cut -d' ' -f2) s"
echo "$plain $pinned" | awk '{ printf "the checksum: %.2f s wall, %.2f s cpu, %.0f MiB/s\n", $3 - $1, $4 - $2, '"$bytes"' / 1048576 / ($3 - $1) }'
