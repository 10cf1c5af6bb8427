#!/usr/bin/env bats
# perfgate trends: a real history (git repository, runs recorded with
# perfgate baseline record) rendered as a site; its structure, its
# escaping, a golden overview, and, with Chromium installed, a screenshot
# that must show the charts.

load helpers
bats_require_minimum_version 1.5.0

# Deterministic commits, so ids (and golden files) do not change.
export GIT_AUTHOR_NAME=dev GIT_AUTHOR_EMAIL=dev@example.com
export GIT_COMMITTER_NAME=dev GIT_COMMITTER_EMAIL=dev@example.com
export GIT_CONFIG_NOSYSTEM=1 HOME="$BATS_TEST_TMPDIR"
unset BUILDKITE_PULL_REQUEST_BASE_BRANCH BUILDKITE_COMMIT BUILDKITE_BUILD_URL BUILDKITE_BRANCH PERFGATE_GPU

setup() {
	cd "$BATS_TEST_TMPDIR"
	export TMPDIR="$BATS_TEST_TMPDIR/tmp"
	mkdir -p "$TMPDIR"
	cp -r "$PERFGATE_TESTS"/data/gate runs
	mkdir src && cd src
	git init -q -b main
	# main: m1..m9; five runs at one level, then four after a step at
	# serving_llama8B_tp1_sharegpt_qps_inf (9% less output throughput)
	main_history 9
}

@test "trends: a site per GPU with the gate's window, band, change points and the PR" {
	run --separate-stderr "$PERFGATE_BIN" trends ../site --current ../runs/slow
	assert_success
	assert_output "wrote ../site/index.html: 1 GPU, 4 test points, 8 pages (0.2 MB; largest overview 0.01 MB); this PR drawn at 8 gated metrics"
	[ "$stderr" = "perfgate trends: H100: 4 test points, 9 runs" ]
	assert_file_exist ../site/index.html
	assert_file_exist ../site/H100/index.html
	assert_file_exist ../site/H100/points.html
	assert_file_exist ../site/H100/p/serving_llama8B_tp1_sharegpt_qps_inf.html
	golden ../site/H100/index.html trends/index.html

	# nothing fetched at view time; the one script is a point page's own,
	# inline (its runs' tooltips), and no other page has one
	run grep -lE '<script src|src="http|href="http[^"]*\.(css|js)' -r ../site
	assert_failure 1
	run grep -lE '<script' ../site/index.html ../site/H100/index.html ../site/H100/points.html
	assert_failure 1
	[ "$(grep -c '<script>var D=' ../site/H100/p/serving_llama8B_tp1_sharegpt_qps_inf.html)" = 1 ]
	# the point page: one chart per metric that can fail, the window the
	# gate would use, the step, the PR's point, the runs with their builds
	page=../site/H100/p/serving_llama8B_tp1_sharegpt_qps_inf.html
	[ "$(grep -c '<svg ' "$page")" = 7 ]
	grep -q 'baseline window: 4 runs' "$page"
	grep -q 'fails beyond −1%' "$page"
	grep -q '<title>step 9.1% worse, between' "$page"
	grep -q '>this PR</text>' "$page"
	grep -q '<a href="https://buildkite.example/b/9">build</a>' "$page"
	grep -q 'since the change at' "$page"
	# what the gate says about the same run, on the overview, in the
	# annotation's colour: the PR is at main's level since the step
	grep -qE 'With <b>this PR</b>: (<span class="[a-z]+">)?perfgate: PASS — H100: no regressions in 4 tests' ../site/H100/index.html
}

@test "trends: a GPU's one page holds the overview and every point, each link within it" {
	run --separate-stderr "$PERFGATE_BIN" trends ../site --current ../runs/slow
	assert_success
	page=../site/H100/all.html
	# as Buildkite serves an artifact: alone at an address of its own, so
	# every link is to a place on the page (or a build, outside)
	run "${PERFGATE_PYTHON:-/usr/bin/python3}" - "$page" <<'PY'
import re, sys
html = open(sys.argv[1]).read()
ids = set(re.findall(r' id="([^"]+)"', html))
links = re.findall(r' (?:href|src)="([^"]*)"', html)
bad = [l for l in links if not (l.startswith("https://") or l.startswith("http://") or (l.startswith("#") and l[1:] in ids))]
print(" ".join(sorted(set(l for l in links if l.startswith("#")))), bad)
PY
	assert_output "#p-latency_llama8B_tp1 #p-serving_llama8B_tp1_sharegpt_qps_4 #p-serving_llama8B_tp1_sharegpt_qps_inf #p-throughput_llama8B_tp1 #top []"
	# the overview first (its sparklines), then a section per point with
	# its charts (as on its own page), the runs' data per section and the code once
	[ "$(grep -c '^<section id="p-' "$page")" = 4 ]
	svgs() { cat "$@" | grep -o '<svg ' | wc -l; }
	[ "$(svgs "$page")" = $(($(svgs ../site/H100/index.html) + $(svgs ../site/H100/p/*.html))) ]
	grep -q '^<script>var D=\[\];</script>$' "$page"
	[ "$(grep -c '<script>D\[[0-3]\]={n:\[' "$page")" = 4 ]
	[ "$(grep -c 'D.forEach' "$page")" = 1 ]
	grep -q 'Each point.s charts follow on this page' "$page"
	grep -q '<a href="#top">↑ the overview</a>' "$page"
	# the words the overview has on its own page
	grep -qE 'With <b>this PR</b>: (<span class="[a-z]+">)?perfgate: PASS — H100: no regressions in 4 tests' "$page"
	# without its own page's links out of it
	run grep -c 'href="points.html"\|href="p/\|index.html"' "$page"
	assert_output 0
}

@test "trends: names from users are escaped, file names are safe, errors name the problem" {
	# a test point whose name is markup
	mkdir ../evil
	cp ../runs/base/latency_llama8B_tp1.json '../evil/x<img src=x onerror=alert(1)>.json'
	"$PERFGATE_BIN" baseline record ../evil --commit HEAD >/dev/null
	run "$PERFGATE_BIN" trends ../site
	assert_success
	run grep -rl '<img' ../site
	assert_failure 1
	grep -q 'x&lt;img src=x onerror=alert(1)&gt;' ../site/H100/points.html
	assert_file_exist '../site/H100/p/x_img_src_x_onerror_alert_1__.html'

	# the label of the run drawn on the charts (--label) is the user's too
	# (the unit tests render no current run, so only this checks it)
	run "$PERFGATE_BIN" trends ../site3 --current ../runs/slow --label '<u>pr 7'
	assert_success
	run grep -rl '<u>' ../site3
	assert_failure 1
	grep -q '&lt;u&gt;pr 7' ../site3/H100/index.html

	run --separate-stderr "$PERFGATE_BIN" trends ../site2 --gpu A100
	assert_failure 3
	[ "$stderr" = "perfgate trends: no recorded runs for A100 in refs/perfgate/history" ]
	run --separate-stderr "$PERFGATE_BIN" trends
	assert_failure 2
}

@test "trends: a person's view (headless Chromium screenshot of the overview)" {
	command -v chromium >/dev/null || skip "chromium is not installed (scripts/install-deps installs it)"
	"$PERFGATE_BIN" trends ../site --current ../runs/slow >/dev/null 2>&1
	local shot="$BATS_TEST_TMPDIR/overview.png"
	run timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$BATS_TEST_TMPDIR/chromium" --screenshot="$shot" \
		--window-size=1280,900 "file://$PWD/../site/H100/index.html"
	assert_file_exist "$shot"
	if [ -n "${PERFGATE_SCREENSHOTS:-}" ]; then
		mkdir -p "$PERFGATE_SCREENSHOTS" && cp "$shot" "$PERFGATE_SCREENSHOTS/trends-overview.png"
	fi
	# 1280x900, mostly white but not blank, and the charts' own colours:
	# the runs (#2563eb), the baseline window (#dbeafe), the tolerance
	# band (#fde2e2)
	run "${PERFGATE_PYTHON:-/usr/bin/python3}" "$PERFGATE_TESTS/bats/png_check.py" "$shot" 2563eb dbeafe fde2e2
	assert_success
	assert_line --index 0 --regexp '^1280x900 colours=[0-9]+ ink=[0-9.]+%$'
	local colours ink
	colours=$(sed -n 's/.*colours=\([0-9]*\).*/\1/p' <<<"${lines[0]}")
	ink=$(sed -n 's/.*ink=\([0-9]*\).*/\1/p' <<<"${lines[0]}")
	[ "$colours" -ge 50 ]
	[ "$ink" -ge 3 ] && [ "$ink" -le 60 ]
	for l in 1 2 3; do
		[ "${lines[$l]#*=}" -ge 50 ] || { echo "too little of ${lines[$l]}"; false; }
	done
}

@test "trends: the same site, and the same first error, whatever the number of threads (--jobs)" {
	# the bench's history (every 10th point steps, two GPUs) and this one's
	# with a PR drawn: enough files that the workers interleave
	"${PERFGATE_PYTHON:-/usr/bin/python3}" "$PERFGATE_SRC/bench/trends/make_history.py" ../big.git 150 40 2
	for j in 1 2 5; do
		run --separate-stderr "$PERFGATE_BIN" trends --jobs "$j" --repo ../big.git \
			--thresholds "$PERFGATE_SRC/thresholds" "../big$j"
		assert_success
		assert_output "wrote ../big$j/index.html: 2 GPUs, 150 test points, 157 pages (10.4 MB; largest overview 0.21 MB)"
		run --separate-stderr "$PERFGATE_BIN" trends --jobs "$j" ../site$j --current ../runs/slow
		assert_success
	done
	[ "$(find ../big1 -name '*.html' | wc -l)" = 157 ]
	diff -r ../big1 ../big2
	diff -r ../big1 ../big5
	diff -r ../site1 ../site2
	diff -r ../site1 ../site5

	# pages that cannot be written (a directory in their place): the first
	# one in point order, one line, nothing claimed
	for j in 1 2 5; do
		mkdir -p ../bad$j/GPU0/p/serving_model5_tp1_sharegpt_qps_2.html \
			../bad$j/GPU0/p/serving_model12_tp1_sharegpt_qps_8.html
		run --separate-stderr "$PERFGATE_BIN" trends --jobs "$j" --repo ../big.git \
			--thresholds "$PERFGATE_SRC/thresholds" --gpu GPU0 "../bad$j"
		assert_failure 3
		assert_output ""
		[ "$stderr" = "perfgate trends: ../bad$j/GPU0/p/serving_model12_tp1_sharegpt_qps_8.html: Is a directory" ]
		assert_file_not_exist "../bad$j/index.html"
	done

	for j in 0 -1; do
		run --separate-stderr "$PERFGATE_BIN" trends --jobs "$j" ../site0
		assert_failure 2
		[ "$stderr" = "perfgate trends: option '--jobs': must be between 1 and 256" ]
	done

	# too few descriptors for a second repository handle: the history is
	# read by one worker (it crashed on a NULL history array). Whether two
	# pages are ever open at once is the threads' timing: either the site
	# is written whole, or the first page that could not be opened is one
	# line with nothing claimed; never a crash
	run --separate-stderr bash -c 'exec 3>&- && ulimit -n 4 && exec "$0" trends --jobs 2 \
		--repo ../big.git --thresholds "$1/thresholds" --gpu GPU1 ../few' \
		"$PERFGATE_BIN" "$PERFGATE_SRC"
	if [ "$status" = 3 ]; then
		[[ "${stderr##*$'\n'}" == "perfgate trends: ../few/GPU1/p/"*": Too many open files" ]]
		assert_file_not_exist ../few/index.html
	else
		assert_success
		assert_output --partial "75 test points"
		assert_file_exist ../few/index.html
	fi
}

# A GPU key is a name users give (--gpu): one the site's own index.html,
# or its case on macOS, or two keys that would be one directory there,
# each get a directory of their own; the index links them all.
@test "trends: no GPU key makes a page collide with the site's own files or another GPU's" {
	local gpu dir
	for gpu in index.html INDEX.HTML cpu CPU; do
		rm -rf ../on-gpu && cp -r ../runs/base ../on-gpu
		"${PERFGATE_PYTHON:-/usr/bin/python3}" - "$gpu" ../on-gpu/*.json <<'PY'
import json, sys
for f in sys.argv[2:]:
    r = json.load(open(f))
    r["perfgate"]["gpu"].update(key=sys.argv[1], name=sys.argv[1])
    json.dump(r, open(f, "w"))
PY
		"$PERFGATE_BIN" baseline record ../on-gpu --commit HEAD >/dev/null
	done
	run --separate-stderr "$PERFGATE_BIN" trends ../site
	assert_success
	assert_output --partial "wrote ../site/index.html: 5 GPUs"
	assert_file_exist ../site/index.html
	# the ones a file name holds as they are keep it
	assert_file_exist ../site/H100/index.html
	assert_file_exist ../site/CPU/index.html
	for gpu in index.html INDEX.HTML cpu; do
		dir=$(cd ../site && ls -d "$gpu"-????????)
		[[ "$dir" =~ ^"$gpu"-[0-9a-f]{8}$ ]]
		assert_file_exist "../site/$dir/index.html"
		grep -qF "<a href=\"$dir/index.html\">" ../site/index.html
	done
	# five directories, none two without regard to case
	[ "$(cd ../site && ls -d */ | tr A-Z a-z | sort -u | wc -l)" = 5 ]
}

@test "trends: an unreadable history line is one error, the first file's, whatever the threads" {
	"${PERFGATE_PYTHON:-/usr/bin/python3}" "$PERFGATE_SRC/bench/trends/make_history.py" ../big.git 60 10
	# two files broken: the first in the tree is named, however they are read
	git clone -q --bare ../big.git ../work.git
	git -C ../work.git fetch -q ../big.git refs/perfgate/history:refs/perfgate/history
	git --git-dir=../work.git read-tree refs/perfgate/history
	for f in serving_model3_tp1_sharegpt_qps_2 serving_model12_tp1_sharegpt_qps_1; do
		{ git --git-dir=../work.git cat-file -p "refs/perfgate/history:H100/$f.jsonl"; echo '{"broken'; } |
			git --git-dir=../work.git hash-object -w --stdin >../blob
		git --git-dir=../work.git update-index --add --cacheinfo "100644,$(cat ../blob),H100/$f.jsonl"
	done
	tree=$(git --git-dir=../work.git write-tree)
	commit=$(echo broken | git --git-dir=../work.git commit-tree "$tree" -p refs/perfgate/history)
	git --git-dir=../work.git update-ref refs/perfgate/history "$commit"
	for j in 1 2 5; do
		run --separate-stderr "$PERFGATE_BIN" trends --jobs "$j" --repo ../work.git "../s$j"
		[ "$status" -ne 0 ]
		echo "$status" >>../codes
		assert_output ""
		echo "$stderr" >"../err$j"
		[ "$(wc -l <"../err$j")" = 1 ]
		assert_file_not_exist "../s$j/index.html"
	done
	grep -q 'serving_model12_tp1_sharegpt_qps_1.jsonl:11' ../err1
	diff ../err1 ../err2
	diff ../err1 ../err5
	[ "$(sort -u ../codes | wc -l)" = 1 ]
}

@test "compare: the evidence behind a regression names the runs and commits of its baseline" {
	# a history of five runs at one level, under a ref of its own
	git rev-list --reverse HEAD | head -5 >../five
	local i=0
	while read -r sha; do
		i=$((i + 1))
		"$PERFGATE_BIN" baseline record "../runs/$([ $((i % 2)) = 0 ] && echo same || echo base)" \
			--commit "$sha" --ref refs/perfgate/five >/dev/null
	done <../five
	run --separate-stderr "$PERFGATE_BIN" compare ../runs/slow --baseline git --ref refs/perfgate/five -o out
	assert_success
	grep -q '^Evidence:$' out/comparison.md
	run grep -F '`serving_llama8B_tp1_sharegpt_qps_inf` · Output token throughput (tok/s)' out/comparison.md
	assert_output --regexp "^- \`serving_llama8B_tp1_sharegpt_qps_inf\` · Output token throughput \(tok/s\): 5490 against [0-9.]+ \(-[0-9.]+%\), the median of 5 runs of main, $(head -1 ../five | cut -c1-12)\.\.$(tail -1 ../five | cut -c1-12) \(2026-11-22\)\. Fails beyond -1\.0% \(the default 2\.5%, narrowed to 4 × the noise this baseline measures, at least 1\.0%\)\. Tested against how much main's runs vary from one to the next: noise alone gives so large a change with p = "
}

@test "trends: an A/B line this version cannot read leaves the A/B results out, not main's site" {
	# a line of a newer format, as a pull request's pinned perfgate may write
	export GIT_INDEX_FILE="$BATS_TEST_TMPDIR/ab-index"
	git read-tree refs/perfgate/history
	local blob tree commit
	blob=$(printf '{"format":2,"point":"x"}\n' | git hash-object -w --stdin)
	git update-index --add --cacheinfo "100644,$blob,H100/ab/x.jsonl"
	tree=$(git write-tree)
	commit=$(git commit-tree "$tree" -p refs/perfgate/history -m "a newer A/B line")
	git update-ref refs/perfgate/history "$commit"
	unset GIT_INDEX_FILE
	run --separate-stderr "$PERFGATE_BIN" trends ../site
	assert_success
	[[ "$stderr" == *"perfgate trends: H100: A/B results not shown: "*"H100/ab/x.jsonl:1"* ]]
	assert_file_exist ../site/H100/index.html
}
