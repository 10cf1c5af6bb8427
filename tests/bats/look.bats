#!/usr/bin/env bats
# A person's look at what perfgate draws: the trends site, a regression's
# evidence chart and the Buildkite annotation that shows them, loaded in
# headless Chromium by tests/bats/look.py (DevTools protocol over a pipe):
# no console errors or failed loads, every chart with x and y axes, a unit
# and a legend when it draws more than one series; screenshots kept in
# $PERFGATE_SCREENSHOTS (CI artifacts). Skipped without Chromium.

load helpers
bats_require_minimum_version 1.5.0

export GIT_AUTHOR_NAME=dev GIT_AUTHOR_EMAIL=dev@example.com
export GIT_COMMITTER_NAME=dev GIT_COMMITTER_EMAIL=dev@example.com
export GIT_CONFIG_NOSYSTEM=1

LOOK="${PERFGATE_TESTS}/bats/look.py"
PY="${PERFGATE_PYTHON:-/usr/bin/python3}"

setup() {
	command -v chromium >/dev/null || skip "chromium is not installed (scripts/install-deps installs it)"
	work_setup
	export HOME="${WORK}" TMPDIR="${BATS_TEST_TMPDIR}/tmp"
	mkdir -p "${TMPDIR}"
	unset BUILDKITE_COMMIT PERFGATE_GPU
	SHOTS="${PERFGATE_SCREENSHOTS:-${BATS_TEST_TMPDIR}/shots}"
	cp -r "${PERFGATE_TESTS}/data/gate" runs
	mkdir src && cd src
	git init -q -b main
}

@test "look: the trends overview and a point page load cleanly, their charts have axes, units, legends" {
	main_history 9
	"${PERFGATE}" trends ../site --current ../runs/slow >/dev/null 2>&1
	run --separate-stderr timeout 90 "${PY}" "${LOOK}" --shots "${SHOTS}" \
		../site/H100/index.html ../site/H100/p/serving_llama8B_tp1_sharegpt_qps_inf.html
	echo "${output}${stderr}"
	assert_success
	# the overview's sparklines are not charts; the point page's seven are
	assert_line --index 0 "../site/H100/index.html: ok: 0 charts, 0 images, no console errors"
	assert_line --index 1 "../site/H100/p/serving_llama8B_tp1_sharegpt_qps_inf.html: ok: 7 charts, 0 images, no console errors"
	assert_file_exist "${SHOTS}/index.png"
	assert_file_exist "${SHOTS}/serving_llama8B_tp1_sharegpt_qps_inf.png"
	# a full page: as wide as the window, taller than one screen
	run "${PY}" "${PERFGATE_TESTS}/bats/png_check.py" "${SHOTS}/serving_llama8B_tp1_sharegpt_qps_inf.png" 2563eb
	assert_line --index 0 --regexp '^1280x[0-9]{4} colours='
	[ "${lines[1]#*=}" -ge 500 ]
}

@test "look: a failing gate's evidence chart and its annotation, as Buildkite shows it" {
	# five runs at one level: the slow run regresses against them
	main_history 5
	cp -r ../runs/slow results
	buildkite_job "$(git rev-parse HEAD)"
	config='{"mode":"report","gpu":"H100","baseline":"git","results-dir":"results"}'
	BUILDKITE_PLUGIN_CONFIGURATION="${config}" run "${PERFGATE}" buildkite
	assert_output --partial "H100: 1 of 4 tests regressed (3 metrics)"
	# a report step does not fail on it: the annotation's colour says so
	assert_output --partial "— report mode: not failing the step (exit 0)"
	grep -q '^buildkite-agent annotate --context perfgate-H100-perf-h100 --style warning' "${CALLS}"
	# in Buildkite the images are artifact:// links: look.py maps them to
	# the files, so a chart that is not there is a failed load
	[ "$(grep -c '<img src="artifact://results/' results/annotation.md)" = 6 ]
	local evidence=results/evidence/serving_llama8B_tp1_sharegpt_qps_inf-output_throughput.svg
	assert_file_exist "${evidence}"
	run --separate-stderr timeout 90 "${PY}" "${LOOK}" --shots "${SHOTS}" --artifacts . \
		"${evidence}" results/annotation.md
	echo "${output}${stderr}"
	assert_success
	assert_line --index 0 "${evidence}: ok: 1 chart, 0 images, no console errors"
	assert_line --index 1 "results/annotation.md: ok: 6 charts, 6 images, no console errors"
	assert_file_exist "${SHOTS}/serving_llama8B_tp1_sharegpt_qps_inf-output_throughput.png"
	assert_file_exist "${SHOTS}/annotation.png"

	# the same annotation with a chart gone: a failed load, and said so
	rm results/charts/latency.svg
	run --separate-stderr timeout 90 "${PY}" "${LOOK}" --artifacts . results/annotation.md
	assert_failure 1
	assert_line --partial "results/annotation.md: network error: Failed to load resource: net::ERR_FILE_NOT_FOUND (file://${PWD}/results/charts/latency.svg)"
	assert_line "results/annotation.md: latency.svg: the image did not load"
}

@test "look: fails on a broken image, a script error, a console error, a chart without legend, axis or unit" {
	cd "${PERFGATE_TESTS}/data/look"
	run --separate-stderr timeout 90 "${PY}" "${LOOK}" --shots "${BATS_TEST_TMPDIR}/neg" \
		good.html broken.html nolegend.svg embeds.html
	echo "${output}${stderr}"
	assert_failure 1
	local chart='"two series, no legend, no unit"'
	assert_output "good.html: ok: 1 chart, 0 images, no console errors
broken.html: console error: drawn wrong
broken.html: network error: Failed to load resource: net::ERR_FILE_NOT_FOUND (file://${PWD}/missing-chart.svg)
broken.html: uncaught exception: ReferenceError: undefinedFunction is not defined
broken.html: missing-chart.svg: the image did not load
nolegend.svg: inline svg ${chart}: no x axis (no text.tick-x)
nolegend.svg: inline svg ${chart}: an axis label without a unit: \"value (higher is better)\"
nolegend.svg: inline svg ${chart}: series \"current\" of 2 has no legend entry (.legend)
nolegend.svg: inline svg ${chart}: series \"baseline\" of 2 has no legend entry (.legend)
embeds.html: nolegend.svg ${chart}: no x axis (no text.tick-x)
embeds.html: nolegend.svg ${chart}: an axis label without a unit: \"value (higher is better)\"
embeds.html: nolegend.svg ${chart}: series \"current\" of 2 has no legend entry (.legend)
embeds.html: nolegend.svg ${chart}: series \"baseline\" of 2 has no legend entry (.legend)"
	# a screenshot of each page, failing or not
	[ "$(ls "${BATS_TEST_TMPDIR}/neg" | wc -l)" = 4 ]

	# a page that never finishes loading: bounded, exit 3, Chromium gone
	# (on a loaded machine the time may run out while Chromium starts)
	local t0=${SECONDS}
	run --separate-stderr timeout 60 "${PY}" "${LOOK}" --timeout 8 slow.html
	assert_failure 3
	[[ "${stderr}" =~ ^look.py:\ (the\ page\ did\ not\ load|no\ answer\ to\ [A-Za-z.]+)$ ]]
	[ $((SECONDS - t0)) -le 20 ]
	run pgrep -f "${TMPDIR}/look\\."
	assert_failure 1
}
