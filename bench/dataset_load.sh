#!/bin/sh
# What a ShareGPT dataset costs a serving run: a synthetic file shaped like
# ShareGPT_V3_unfiltered_cleaned_split.json (N conversations of 2-8 turns,
# ~5 KB each: 94,000 make ~490 MB, the real file is ~650 MB), a serving
# test of 4 points (qps 64, 128, 256, inf; 200 prompts) against the mock
# server, once with that file and once with the random dataset.
#
#   bench/dataset_load.sh [PERFGATE] [N]     (defaults: build/perfgate, 94000)
#
# Prints wall seconds and peak RSS of both runs (best of 3) and the
# difference per point: the dataset's load, scan, /tokenize calls and
# sampling. Use a build without sanitizers for figures that mean something.
set -eu
bin=$(realpath "${1:-build/perfgate}")
n=${2:-94000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

python3 - "$n" "$dir/sharegpt.json" <<'PY'
import json, random, sys
n, path = int(sys.argv[1]), sys.argv[2]
rng = random.Random(1)
words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
         for _ in range(5000)]
def text(mean):
    return " ".join(rng.choice(words) for _ in range(int(rng.expovariate(1 / mean)) + 1))
with open(path, "w") as f:
    f.write("[")
    for i in range(n):
        turns = [{"from": "human" if t % 2 == 0 else "gpt", "value": text(130 if t % 2 == 0 else 220)}
                 for t in range(rng.choice([2, 2, 4, 6, 8]))]
        f.write(", " if i else "")
        json.dump({"id": "c%d" % i, "conversations": turns}, f)
    f.write("]")
PY

suite() { # $1 = dataset mapping
	cat <<YML
defaults:
  model: perfgate-mock
  server:
    command: perfgate mock-server --port {port} --model {model} --ttft-ms 1 --itl-ms 1
    ready: /health
    ready_timeout: 30
serving:
  - name: serving_dataset_load
    qps: [64, 128, 256, inf]
    num_prompts: 200
    dataset: $1
YML
}
suite "{name: sharegpt, path: $dir/sharegpt.json, output_len: 16}" > "$dir/sharegpt.yml"
suite "{name: random, input_len: 128, output_len: 16}" > "$dir/random.yml"

# best of 3: "<seconds> <peak RSS KiB>"
best() {
	for _ in 1 2 3; do
		/usr/bin/time -f '%e %M' -o "$dir/time" "$bin" run "$dir/$1.yml" -o "$dir/out-$1" > /dev/null 2>&1
		cat "$dir/time"
	done | sort -n | head -1
}
size=$(du -m "$dir/sharegpt.json" | cut -f1)
r=$(best random)
s=$(best sharegpt)
echo "ShareGPT-shaped file: $n conversations, $size MB"
echo "random dataset:   $(echo "$r" | awk '{printf "%.2f s, %d MiB peak RSS", $1, $2 / 1024}')"
echo "sharegpt dataset: $(echo "$s" | awk '{printf "%.2f s, %d MiB peak RSS", $1, $2 / 1024}')"
echo "$r $s" | awk '{printf "dataset cost per point: %.2f s\n", ($3 - $1) / 4}'
