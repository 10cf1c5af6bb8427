/* perfgate bisect's reports and state file (bisect/bisect_report.c): a
 * probe's outcome from its A/B decision, the state file read back as
 * written, and bisect.md (golden) for a bisect with a skip, an
 * infrastructure retry and two steps. */
#include "testutil.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/jsonw.h"
#include "bisect/bisect_report.h"
#include "buildkite/pipeline_emit.h"
#include "gate/ab.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct pg_ab_est est(enum pg_ab_verdict v, double change)
{
	struct pg_ab_est e;
	memset(&e, 0, sizeof(e));
	e.applies = true;
	e.verdict = v;
	e.change = change;
	e.lo = change - 0.01;
	e.hi = change + 0.01;
	return e;
}

START_TEST(classify_regressed_unchanged_and_open)
{
	struct pg_ab_est points[2], whole[2];
	struct pg_ab_decision d;
	bool hb[2] = { false, true }; /* TPOT lower is better, throughput higher */
	size_t shown;

	memset(&d, 0, sizeof(d));
	memset(whole, 0, sizeof(whole));
	d.n_metrics = 2;
	d.n_points = 1;
	d.points = points;
	d.whole = whole;
	/* both unchanged: good; the one that moved most towards worse is shown */
	points[0] = est(PG_AB_UNCHANGED, 0.004);
	points[1] = est(PG_AB_IMPROVED, 0.02);
	ck_assert_int_eq(pg_bisect_classify(&d, hb, &shown), PG_BISECT_GOOD);
	ck_assert_uint_eq(shown, 0);
	/* one regressed: bad, whatever the other says */
	points[1] = est(PG_AB_REGRESSED, -0.05);
	points[0] = est(PG_AB_PENDING, 0.01);
	ck_assert_int_eq(pg_bisect_classify(&d, hb, &shown), PG_BISECT_BAD);
	ck_assert_uint_eq(shown, 1);
	/* pending, inconclusive or missing: never a guess */
	points[1] = est(PG_AB_UNCHANGED, 0);
	ck_assert_int_eq(pg_bisect_classify(&d, hb, NULL), PG_BISECT_INCONCLUSIVE);
	points[0] = est(PG_AB_MISSING, NAN);
	ck_assert_int_eq(pg_bisect_classify(&d, hb, NULL), PG_BISECT_INCONCLUSIVE);
	/* nothing applies: inconclusive, nothing shown */
	points[0].applies = points[1].applies = false;
	ck_assert_int_eq(pg_bisect_classify(&d, hb, &shown), PG_BISECT_INCONCLUSIVE);
	ck_assert_uint_eq(shown, (size_t)-1);
	/* with a whole-run row, it is the one shown */
	points[0] = est(PG_AB_UNCHANGED, 0.001);
	points[1] = est(PG_AB_UNCHANGED, 0.001);
	whole[0] = est(PG_AB_REGRESSED, 0.03);
	ck_assert_int_eq(pg_bisect_classify(&d, hb, &shown), PG_BISECT_BAD);
	ck_assert_uint_eq(shown, 2 * 1 + 0);
}
END_TEST

static const char *const ids[] = {
	"1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222",
	"3333333333333333333333333333333333333333", "4444444444444444444444444444444444444444",
	"5555555555555555555555555555555555555555", "6666666666666666666666666666666666666666",
	"7777777777777777777777777777777777777777", "8888888888888888888888888888888888888888",
	"9999999999999999999999999999999999999999",
};

/* The log of a bisect over 9 commits: a step of +2% at 3, one of +6% at 6
 * (measured against 3), 2 cannot be built, an infrastructure failure once. */
static void make_log(struct pg_bisect_log *l, struct pg_bisect *b)
{
	struct pg_bisect_probe p;
	json_t *m = json_array();

	pg_bisect_log_init(l);
	for (size_t i = 0; i < 9; i++) {
		char subject[32];
		snprintf(subject, sizeof(subject), "commit %zu | with a pipe", i + 1);
		pg_strv_push(&l->commits, ids[i]);
		pg_strv_push(&l->subjects, subject);
	}
	json_object_set_new(l->config, "repo", json_string("."));
	json_object_set_new(l->config, "good", json_string("v1"));
	json_object_set_new(l->config, "bad", json_string("main"));
	json_object_set_new(l->config, "suite", json_string("suite.yml"));
	json_object_set_new(l->config, "test", json_string("serving_x"));
	json_array_append_new(m, json_string("median_tpot_ms"));
	json_object_set_new(l->config, "metrics", m);
	json_object_set_new(l->config, "tolerance", json_real(0.01));
	json_object_set_new(l->config, "server_command",
			    json_string("/opt/vllm-{commit}/bin/vllm serve {model} --port {port}"));
	json_object_set_new(l->config, "build", json_string("scripts/build-wheel {commit}"));
	json_object_set_new(l->config, "output", json_string("bisect"));

	ck_assert_int_eq(pg_bisect_init(b, 9, NULL), 0);
	while (pg_bisect_next(b, &p)) {
		struct pg_bisect_evidence e;
		size_t level_c = (p.commit >= 2) + (p.commit >= 5);
		size_t level_a = (p.against >= 2) + (p.against >= 5);
		char dir[64];
		int outcome;

		memset(&e, 0, sizeof(e));
		e.commit = pg_xstrdup(ids[p.commit]);
		e.against = pg_xstrdup(ids[p.against]);
		e.attempt = p.attempt;
		e.purpose = p.purpose;
		e.change = e.lo = e.hi = NAN;
		snprintf(dir, sizeof(dir), "probes/%02zu-%.12s-%s", l->n_probes + 1, ids[p.commit],
			 pg_bisect_purpose_name(p.purpose));
		if (p.commit == 1) {
			e.outcome = PG_BISECT_SKIP;
			e.note = pg_xstrdup(
				"build failed: exit 1 (log bisect/builds/222222222222.log)");
			pg_bisect_log_add(l, &e);
			pg_bisect_record(b, PG_BISECT_SKIP);
			continue;
		}
		if (p.commit == 4 && l->n_probes == 0) {
			/* the good side's server never became ready: once */
			e.outcome = -1;
			e.blocks = 2;
			e.dir = pg_xstrdup(dir);
			e.note = pg_xstrdup("block 1 (base): serving_x: error: server not ready");
			pg_bisect_log_add(l, &e);
			memset(&e, 0, sizeof(e));
			e.commit = pg_xstrdup(ids[p.commit]);
			e.against = pg_xstrdup(ids[p.against]);
			e.purpose = p.purpose;
			snprintf(dir, sizeof(dir), "probes/%02zu-%.12s-%s", l->n_probes + 1,
				 ids[p.commit], pg_bisect_purpose_name(p.purpose));
		}
		outcome = level_c > level_a ? PG_BISECT_BAD : PG_BISECT_GOOD;
		e.outcome = outcome;
		e.metric = pg_xstrdup("median_tpot_ms");
		e.change = outcome == PG_BISECT_BAD ? (level_a ? 0.061 : 0.021) : 0.001;
		e.lo = e.change - 0.004;
		e.hi = e.change + 0.004;
		e.blocks = 4;
		e.seconds = 100;
		e.dir = pg_xstrdup(dir);
		pg_bisect_log_add(l, &e);
		pg_bisect_record(b, (enum pg_bisect_outcome)outcome);
	}
}

START_TEST(markdown_golden)
{
	struct pg_bisect_log l;
	struct pg_bisect b;
	struct pg_buf md = PG_BUF_INIT;
	static const char *const tags[] = { NULL };

	make_log(&l, &b);
	ck_assert_int_eq(b.end, PG_BISECT_END_FOUND);
	ck_assert_uint_eq(b.n_steps, 2);
	pg_bisect_markdown(&md, &l, &b);
	tu_assert_golden("golden/bisect/bisect.md", md.ptr);
	tu_assert_markdown_safe(md.ptr, tags);
	pg_buf_release(&md);
	pg_bisect_release(&b);
	pg_bisect_log_release(&l);
}
END_TEST

START_TEST(report_json_steps_the_bigger_first)
{
	struct pg_bisect_log l;
	struct pg_bisect b;
	json_t *j, *steps;

	make_log(&l, &b);
	j = pg_bisect_json(&l, &b);
	steps = json_object_get(j, "steps");
	ck_assert_uint_eq(json_array_size(steps), 2);
	/* +6.1% at 5 (measured against 2, the second phase) before +2.1% */
	ck_assert_str_eq(pg_json_path_str(json_array_get(steps, 0), "culprit.id"), ids[5]);
	ck_assert_str_eq(pg_json_path_str(json_array_get(steps, 1), "last_good"), ids[0]);
	/* the first step: 2 could not be built, so (1, 3] */
	ck_assert(!json_is_true(json_object_get(json_array_get(steps, 1), "exact")));
	ck_assert_uint_eq(json_array_size(json_object_get(json_array_get(steps, 1), "commits")), 2);
	ck_assert_str_eq(json_string_value(json_object_get(
				 json_array_get(json_object_get(j, "skipped"), 0), "commit")),
			 ids[1]);
	ck_assert(json_is_true(json_object_get(j, "finished")));
	json_decref(j);
	pg_bisect_release(&b);
	pg_bisect_log_release(&l);
}
END_TEST

START_TEST(state_file_round_trip)
{
	struct pg_bisect_log l, back;
	struct pg_bisect b;
	struct pg_error err = PG_ERROR_INIT;
	const struct pg_bisect_evidence *found = NULL;
	json_t *j, *again;

	make_log(&l, &b);
	j = pg_bisect_log_json(&l);
	ck_assert_int_eq(pg_bisect_log_parse(&back, j, "state.json", &err), 0);
	again = pg_bisect_log_json(&back);
	ck_assert(json_equal(j, again));
	/* an outcome is found by commit, good end and attempt; an
	 * infrastructure failure is no outcome */
	ck_assert_int_eq(pg_bisect_log_find(&back, ids[4], ids[0], 0, &found), PG_BISECT_BAD);
	ck_assert_ptr_nonnull(found);
	ck_assert_uint_eq(found->blocks, 4);
	ck_assert_int_eq(pg_bisect_log_find(&back, ids[3], ids[2], 0, NULL), PG_BISECT_GOOD);
	ck_assert_int_eq(pg_bisect_log_find(&back, ids[3], ids[1], 0, NULL), -1);
	ck_assert_int_eq(pg_bisect_log_find(&back, ids[3], ids[0], 1, NULL), -1);
	json_decref(again);
	pg_bisect_log_release(&back);

	/* a probe without an outcome the reader knows */
	json_object_set_new(json_array_get(json_object_get(j, "probes"), 1), "outcome",
			    json_string("maybe"));
	ck_assert_int_eq(pg_bisect_log_parse(&back, j, "state.json", &err), PG_ECONFIG);
	ck_assert_str_eq(err.msg, "state.json: probes[1].outcome: unknown 'maybe'");
	pg_bisect_log_release(&back);
	json_object_set_new(j, "format", json_integer(2));
	ck_assert_int_eq(pg_bisect_log_parse(&back, j, "state.json", &err), PG_ECONFIG);
	ck_assert_str_eq(err.msg, "state.json: format: expected 1");
	pg_bisect_log_release(&back);
	json_decref(j);
	pg_bisect_release(&b);
	pg_bisect_log_release(&l);
}
END_TEST

START_TEST(pipeline_golden)
{
	struct pg_bisect_log l;
	struct pg_bisect b, mid;
	struct pg_buf yaml = PG_BUF_INIT;
	json_t *p;

	make_log(&l, &b);
	json_object_set_new(l.config, "good_id", json_string(ids[0]));
	json_object_set_new(l.config, "bad_id", json_string(ids[8]));
	json_object_set_new(l.config, "max_blocks", json_integer(24));
	json_object_set_new(l.config, "server_command",
			    json_string("/opt/vllm-{commit}/bin/vllm serve {model} --port {port} "
					"--seed $(date +%s)"));
	/* the first four probes: an infrastructure failure, 5 and 3 bad, 2
	 * skipped; next, the residual */
	for (size_t i = 4; i < l.n_probes; i++)
		pg_bisect_evidence_release(&l.probes[i]);
	l.n_probes = 4;
	ck_assert_int_eq(pg_bisect_init(&mid, 9, NULL), 0);
	for (size_t i = 0; i < l.n_probes; i++)
		if (l.probes[i].outcome >= 0)
			pg_bisect_record(&mid, (enum pg_bisect_outcome)l.probes[i].outcome);
	ck_assert_int_eq(mid.next.purpose, PG_BISECT_RESIDUAL);
	p = pg_bisect_pipeline(&l, &mid, "H100", "perfgate-bisect-probe-3");
	pg_yaml_write(&yaml, p, 0);
	tu_assert_golden("golden/pipelines/bisect-probe.yml", yaml.ptr);
	json_decref(p);
	/* the first step of all fetches nothing; the last annotates */
	pg_buf_reset(&yaml);
	p = pg_bisect_pipeline(&l, &b, "H100", "perfgate-bisect-probe-9");
	pg_yaml_write(&yaml, p, 0);
	tu_assert_golden("golden/pipelines/bisect-answer.yml", yaml.ptr);
	json_decref(p);
	p = pg_bisect_pipeline(&l, &mid, "H100", NULL);
	ck_assert_ptr_null(
		strstr(json_string_value(pg_json_path(
			       json_array_get(json_object_get(p, "steps"), 0), "command")),
		       "artifact download"));
	json_decref(p);
	pg_buf_release(&yaml);
	pg_bisect_release(&mid);
	pg_bisect_release(&b);
	pg_bisect_log_release(&l);
}
END_TEST

static Suite *report_suite(void)
{
	Suite *s = suite_create("bisect_report");
	TCase *tc = tcase_create("report");

	tcase_add_test(tc, classify_regressed_unchanged_and_open);
	tcase_add_test(tc, markdown_golden);
	tcase_add_test(tc, report_json_steps_the_bigger_first);
	tcase_add_test(tc, state_file_round_trip);
	tcase_add_test(tc, pipeline_golden);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(report_suite());
}
