#!/usr/bin/env bats
# Certified tails, SLO attainment and the frontier (docs/tails.md): a real
# run against the mock server, and the report and gate on ladders made by
# make_ladder.py (golden files for what users read).

load helpers
bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_TMPDIR"
	PY="${PERFGATE_PYTHON:-/usr/bin/python3}"
	export PERFGATE_GPU=H100
}

ladder() {
	"$PY" "$PERFGATE_TESTS/bats/make_ladder.py" "$@"
}

# thresholds_with PATTERN RULE...: thresholds/H100.yml from a ladder of
# 1,000 requests per point, with the rules as "tests:" entries for the
# points PATTERN matches.
thresholds_with() {
	rm -rf base thresholds
	ladder base --n 1000
	"$PERFGATE_BIN" baseline update thresholds --from base 2>/dev/null
	"$PY" - "$@" <<'EOF'
import sys
rules = "".join("      %s\n" % r for r in sys.argv[2:])
path = "thresholds/H100.yml"
text = open(path).read()
if rules:
    text = text.replace("  tests: {}\n", '  tests:\n    "%s":\n' % sys.argv[1] + rules)
open(path, "w").write(text)
EOF
}

@test "certify_tails sizes the run; results carry certified tails and SLO attainment" {
	cat >suite.yml <<'EOF'
serving:
  - name: serving_tails
    model: perfgate-mock
    server:
      command: perfgate mock-server --port {port} --model {model} --ttft-ms 5 --itl-ms 1 --max-running 64
      ready: /health
      ready_timeout: 30
    qps: [inf]
    max_concurrency: [16]
    num_prompts: 100
    certify_tails: true
    dataset: {name: random, input_len: 32, output_len: 16}
    client: {percentiles: [90, 99]}
    goodput: {ttft: 1000, tpot: 100, itl: 200, itl_percentile: 99}
EOF
	run "$PERFGATE_BIN" run suite.yml --dry-run
	assert_success
	assert_line --partial "load       662 prompts (certify_tails: at least 662), all sent at once (qps inf), max concurrency 16"
	assert_line --partial "goodput    ttft <= 1000 ms, tpot <= 100 ms, itl <= 200 ms (p99 of each request's gaps)"

	run "$PERFGATE_BIN" run suite.yml -o res --no-telemetry
	assert_success
	run "$PY" - <<'EOF'
import json
r = json.load(open("res/serving_tails_qps_inf_concurrency_16.json"))
c = r["perfgate"]["certified"]
assert r["completed"] == 662, r["completed"]
assert c["method"] == "mlperf-early-stopping" and c["confidence"] == 0.99
for m in ("ttft", "tpot", "itl"):
    assert sorted(c[m]) == ["n", "p50", "p90", "p99"], c[m]
    # an upper bound: never below the plain percentile
    assert c[m]["p99"] >= r["p99_%s_ms" % m] and c[m]["p90"] >= r["p90_%s_ms" % m], (m, c[m])
assert c["ttft"]["n"] == 662 and c["itl"]["n"] == 662 * 15
# a generous SLO: every request met it
for k in ("slo_attainment", "slo_attainment_ttft", "slo_attainment_tpot", "slo_attainment_itl"):
    assert r[k] == 1.0, (k, r[k])
assert abs(r["token_goodput"] - r["output_throughput"]) < 1e-6 * r["output_throughput"]
assert r["perfgate"]["params"]["slo"] == {"ttft_ms": 1000, "tpot_ms": 100, "itl_ms": 200, "itl_percentile": 99}
print("ok")
EOF
	assert_output ok
	grep -q '| Cert. P99 TTFT (ms) |' <(sed 's/  */ /g' res/benchmark_results.md)
	grep -q '^- Certified P99: .*every point had enough samples\.$' res/benchmark_results.md
	grep -q '^- SLOs, per request and inclusive: TTFT ≤ 1000 ms, TPOT ≤ 100 ms, ITL ≤ 200 ms (p99 of each request' res/benchmark_results.md
}

@test "the report shows certified tails next to the plain ones and the SLO columns" {
	ladder results --n 1000
	ladder small --n 200
	cp small/serving_ladder_qps_inf_concurrency_1.json results/serving_ladder_qps_inf_concurrency_1.json
	run "$PERFGATE_BIN" report results
	assert_success
	golden results/benchmark_results.md tails/report.md
}

@test "a p99 rule at 200 requests is not decidable; at 1,000 it is judged" {
	thresholds_with none
	ladder small --n 200 --speed 0.99
	run "$PERFGATE_BIN" gate small -o out -q
	assert_success
	grep -q '| serving_ladder_qps_inf_concurrency_8 | P99 TTFT (ms) | .* | insufficient-data | not decidable at n = 200 (p99 needs ≥ 662) |' out/comparison.md
	# the same point at 1,000 requests: decided
	ladder large --n 1000 --speed 0.99
	run "$PERFGATE_BIN" gate large -o out -q
	assert_success
	run grep -c 'not decidable' out/comparison.md
	assert_output 0
	# certify: false judges at any n
	sed -i 's/^    p99_ttft_ms:\( *\){ gate: false,/    p99_ttft_ms:\1{ certify: false, gate: false,/' thresholds/H100.yml
	run "$PERFGATE_BIN" gate small -o out -q
	assert_success
	run grep -c '| P99 TTFT (ms) | .* not decidable' out/comparison.md
	assert_output 0
}

@test "SLO bounds in a thresholds file: certified, missed, or not decided" {
	# the ladder's points up to concurrency 8 meet their SLOs
	thresholds_with 'serving_ladder_qps_inf_concurrency_?' \
		"slo_attainment: { gate: true, min: 99% }" \
		"certified_p99_ttft_ms: { gate: true, max: 100 ms }"
	# 1,000 requests, every one within the SLOs: certified passes
	ladder large --n 1000
	run "$PERFGATE_BIN" gate large -o out -q
	assert_success
	grep -q '| serving_ladder_qps_inf_concurrency_8 | SLO attainment (%) | 100 | 100 | +0.0% | — | unchanged | SLO met: 100% ≥ 99% (certain at 99% confidence, n = 1000) |' out/comparison.md
	# 200 requests: too few to certify 99%, a warning that says what would
	ladder small --n 200
	run "$PERFGATE_BIN" gate small -o out -q
	assert_success
	grep -q 'SLO not decided: 100% ≥ 99% at n = 200: with 0 misses, certifying it takes ≥ 459 requests' out/comparison.md
	grep -q 'SLO not decided: .* at n = 200: p99 needs ≥ 662' out/comparison.md
	# a tight bound on the certified p99 TTFT fails the points over it
	thresholds_with 'serving_ladder*' "certified_p99_ttft_ms: { gate: true, max: 60 ms }"
	run "$PERFGATE_BIN" gate large -o out -q
	assert_failure 1
	golden out/comparison.md tails/slo-missed.md
}

# five baseline runs of the ladder (1% noise per point) and the frontier
# rule gating for it
frontier_thresholds() {
	rm -rf thresholds
	for s in 1 2 3 4 5; do ladder "base$s" --n 1000 --noise 0.01 --seed "$s"; done
	"$PERFGATE_BIN" baseline update thresholds --from base1 --from base2 --from base3 \
		--from base4 --from base5 2>/dev/null
	sed -i 's/^  tests: {}$/  tests:\n    serving_ladder:\n      frontier: { gate: true }/' thresholds/H100.yml
}

@test "a ladder 3% slower everywhere: one frontier decision fails, its points do not" {
	frontier_thresholds
	ladder slow --n 1000 --speed 0.97 --noise 0.01 --seed 9
	run "$PERFGATE_BIN" gate slow -o out -q
	assert_failure 1
	grep -q '^\*\*perfgate: FAIL\*\* — H100: 1 of 9 tests regressed (1 metric), 1 with warnings · not confirmed by a re-run$' out/comparison.md
	grep -q '| serving_ladder ladder (qps inf, concurrency 1-128) | Frontier: tput per GPU | — | — | -2.5% | 1.0% | \*\*regressed\*\* | 7 points at equal users/GPU: -2.5% (98% interval -3.6% to -1.3%); knee at concurrency 16 (baseline 16) |' out/comparison.md
	# its points do not fail: the common 3% is the run's (judged as a whole
	# run), or, beyond it, the ladder's frontier decides
	grep -Eq "^\| serving_ladder_qps_inf_concurrency_1 \| Output token throughput \(tok/s\) \| .* \| (unchanged|regressed \(warn\)) \|" out/comparison.md
	[ "$(grep -c "concurrency_[0-9]* | .* | \*\*regressed\*\*" out/comparison.md)" = 0 ]
	# the same build again: the frontier has not moved
	ladder same --n 1000 --noise 0.01 --seed 10
	run "$PERFGATE_BIN" gate same -o out -q
	assert_success
	grep -q '| serving_ladder ladder (qps inf, concurrency 1-128) | Frontier: tput per GPU | — | — | .* | unchanged |' out/comparison.md
}

@test "the annotation shows the frontier chart; the report writes the dashboard's rows" {
	common_setup
	buildkite_job 1a2b3c4d5e6f7a8b9c0d
	frontier_thresholds
	ladder results --n 1000 --speed 0.97 --noise 0.01 --seed 9 --tp 2
	# per GPU: the baseline ran on 1 GPU at the same totals, so halve it too
	"$PY" - <<'PY'
import json, glob
for f in glob.glob("results/*.json"):
    r = json.load(open(f)); r["perfgate"]["params"]["tp"] = 1; json.dump(r, open(f, "w"), indent=4)
PY
	export BUILDKITE_PLUGIN_CONFIGURATION='{"mode":"report","gpu":"H100","results-dir":"results","thresholds":"thresholds"}'
	run "$PERFGATE_BIN" buildkite
	assert_success
	assert_file_exists results/charts/serving_ladder_frontier.svg
	grep -q 'artifact://results/charts/serving_ladder_frontier.svg' results/annotation.md
	golden results/annotation.md tails/annotation.md
	golden results/charts/serving_ladder_frontier.svg tails/frontier.svg

	run "$PERFGATE_BIN" report results -o rep
	assert_success
	assert_line --index 2 rep/benchmark_results_inferencex.json
	run "$PY" - <<'PY'
import json
rows = json.load(open("rep/benchmark_results_inferencex.json"))
assert len(rows) == 8, len(rows)
r = [x for x in rows if x["conc"] == 8][0]
res = json.load(open("results/serving_ladder_qps_inf_concurrency_8.json"))
assert r["device"] == "h100" and r["tp"] == 1 and r["isl"] == 512 and r["osl"] == 128
assert abs(r["output_tput_per_gpu"] - res["output_throughput"]) < 1e-9
assert abs(r["median_tpot"] - res["median_tpot_ms"] / 1000) < 1e-12
assert abs(r["median_intvty"] - 1000 / res["median_tpot_ms"]) < 1e-9
print("ok")
PY
	assert_output ok
}
