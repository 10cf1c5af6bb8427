/* The search of perfgate bisect (bisect/bisect_search.c) against oracles
 * that know where the steps are: exact culprits, skipped commits leaving
 * the smallest range, inconclusive probes re-probed and never guessed, two
 * steps, a range without a change. */
#include "testutil.h"

#include "bisect/bisect_search.h"

#include <stdlib.h>
#include <string.h>

/* An oracle: steps at given commits (a commit carries every step at or
 * before it); skip[i] cannot be built; inconclusive[i] answers
 * inconclusive that many times first. */
struct oracle {
	size_t n;
	size_t steps[4];
	size_t n_steps;
	bool skip[128];
	size_t inconclusive[128];
	/* what was asked */
	struct pg_bisect_probe asked[256];
	size_t n_asked;
};

static size_t level(const struct oracle *o, size_t c)
{
	size_t l = 0;
	for (size_t i = 0; i < o->n_steps; i++)
		l += c >= o->steps[i];
	return l;
}

/* n commits, a step at `step` (0: none). */
static void oracle_init(struct oracle *o, size_t n, size_t step)
{
	memset(o, 0, sizeof(*o));
	o->n = n;
	if (step)
		o->steps[o->n_steps++] = step;
}

static enum pg_bisect_outcome answer(struct oracle *o, const struct pg_bisect_probe *p)
{
	ck_assert_uint_lt(o->n_asked, 256);
	o->asked[o->n_asked++] = *p;
	if (o->skip[p->commit])
		return PG_BISECT_SKIP;
	if (o->inconclusive[p->commit]) {
		o->inconclusive[p->commit]--;
		return PG_BISECT_INCONCLUSIVE;
	}
	return level(o, p->commit) > level(o, p->against) ? PG_BISECT_BAD : PG_BISECT_GOOD;
}

static void run(struct pg_bisect *b, struct oracle *o, const struct pg_bisect_opts *opts)
{
	struct pg_bisect_probe p;

	ck_assert_int_eq(pg_bisect_init(b, o->n, opts), 0);
	while (pg_bisect_next(b, &p)) {
		ck_assert_uint_lt(p.commit, o->n);
		pg_bisect_record(b, answer(o, &p));
	}
}

/* No commit is probed twice unless it was inconclusive. */
static void assert_no_repeats(const struct oracle *o)
{
	for (size_t i = 0; i < o->n_asked; i++)
		for (size_t j = i + 1; j < o->n_asked; j++)
			if (o->asked[i].commit == o->asked[j].commit &&
			    o->asked[i].against == o->asked[j].against)
				ck_assert_uint_ne(o->asked[i].attempt, o->asked[j].attempt);
}

START_TEST(every_culprit_is_found_exactly_in_log2_probes)
{
	/* 64 commits: 0 good, 63 bad; each position of the step */
	for (size_t s = 1; s < 64; s++) {
		struct oracle o;
		struct pg_bisect b;

		oracle_init(&o, 64, s);
		run(&b, &o, NULL);
		ck_assert_int_eq(b.end, PG_BISECT_END_FOUND);
		ck_assert_uint_eq(b.n_steps, 1);
		ck_assert_uint_eq(b.steps[0].bad, s);
		ck_assert_uint_eq(b.steps[0].good, s - 1);
		/* 6 to find it among 63, a confirmation of the end when it is
		 * the culprit, or the residual that says nothing follows */
		ck_assert_uint_le(o.n_asked, 7);
		/* the step's evidence is the probe that marked the culprit bad */
		ck_assert_uint_eq(o.asked[b.steps[0].evidence].commit, s);
		assert_no_repeats(&o);
		pg_bisect_release(&b);
	}
}
END_TEST

START_TEST(probes_go_to_the_middle_against_the_good_end)
{
	struct oracle o;
	struct pg_bisect b;

	oracle_init(&o, 17, 11);
	run(&b, &o, NULL);
	/* (0, 16]: 8 good, (8, 16]: 12 bad, (8, 12]: 10 good, (10, 12]: 11 bad,
	 * then the residual: 16 against 11 */
	ck_assert_uint_eq(o.n_asked, 5);
	ck_assert_uint_eq(o.asked[0].commit, 8);
	ck_assert_uint_eq(o.asked[1].commit, 12);
	ck_assert_uint_eq(o.asked[2].commit, 10);
	ck_assert_uint_eq(o.asked[3].commit, 11);
	for (size_t i = 0; i < 4; i++) {
		ck_assert_uint_eq(o.asked[i].against, 0);
		ck_assert_int_eq(o.asked[i].purpose, PG_BISECT_SEARCH);
	}
	ck_assert_uint_eq(o.asked[4].commit, 16);
	ck_assert_uint_eq(o.asked[4].against, 11);
	ck_assert_int_eq(o.asked[4].purpose, PG_BISECT_RESIDUAL);
	ck_assert_uint_eq(b.steps[0].bad, 11);
	pg_bisect_release(&b);
}
END_TEST

START_TEST(a_skipped_commit_is_stepped_around)
{
	struct oracle o;
	struct pg_bisect b;

	oracle_init(&o, 17, 11);
	o.skip[8] = true; /* the first middle */
	run(&b, &o, NULL);
	ck_assert_int_eq(b.end, PG_BISECT_END_FOUND);
	ck_assert_uint_eq(b.steps[0].bad, 11);
	ck_assert_uint_eq(b.steps[0].good, 10);
	ck_assert_uint_eq(o.asked[0].commit, 8);
	/* the next nearest the middle, the lower of two */
	ck_assert_uint_eq(o.asked[1].commit, 7);
	assert_no_repeats(&o);
	pg_bisect_release(&b);
}
END_TEST

START_TEST(skipped_commits_before_the_culprit_leave_a_range)
{
	struct oracle o;
	struct pg_bisect b;

	oracle_init(&o, 17, 11);
	o.skip[9] = o.skip[10] = true;
	run(&b, &o, NULL);
	ck_assert_int_eq(b.end, PG_BISECT_END_FOUND);
	ck_assert_uint_eq(b.n_steps, 1);
	/* the change began in (8, 11]: 9 and 10 could not be built */
	ck_assert_uint_eq(b.steps[0].good, 8);
	ck_assert_uint_eq(b.steps[0].bad, 11);
	ck_assert_int_eq(b.mark[9], PG_BISECT_SKIPPED);
	ck_assert_int_eq(b.mark[10], PG_BISECT_SKIPPED);
	pg_bisect_release(&b);
}
END_TEST

START_TEST(a_skipped_culprit_leaves_it_with_the_next)
{
	struct oracle o;
	struct pg_bisect b;

	oracle_init(&o, 17, 11);
	o.skip[11] = true;
	run(&b, &o, NULL);
	/* 11 cannot be tested: the change is in (10, 12] */
	ck_assert_uint_eq(b.steps[0].good, 10);
	ck_assert_uint_eq(b.steps[0].bad, 12);
	pg_bisect_release(&b);
}
END_TEST

START_TEST(inconclusive_is_reprobed_then_undecided_never_guessed)
{
	struct oracle o;
	struct pg_bisect b;
	size_t eight = 0;

	oracle_init(&o, 17, 11);
	o.inconclusive[8] = 2; /* decided at the third attempt */
	run(&b, &o, NULL);
	for (size_t i = 0; i < o.n_asked; i++)
		if (o.asked[i].commit == 8) {
			ck_assert_uint_eq(o.asked[i].attempt, eight);
			eight++;
		}
	ck_assert_uint_eq(eight, 3);
	ck_assert_uint_eq(b.steps[0].bad, 11);
	ck_assert_uint_eq(b.steps[0].good, 10);
	pg_bisect_release(&b);

	/* never decided: 10 is given up after max_attempts, like a skip */
	oracle_init(&o, 17, 11);
	o.inconclusive[10] = 100;
	run(&b, &o, NULL);
	ck_assert_int_eq(b.mark[10], PG_BISECT_UNDECIDED);
	ck_assert_uint_eq(b.steps[0].good, 9);
	ck_assert_uint_eq(b.steps[0].bad, 11);
	eight = 0;
	for (size_t i = 0; i < o.n_asked; i++)
		eight += o.asked[i].commit == 10;
	ck_assert_uint_eq(eight, 3);
	pg_bisect_release(&b);
}
END_TEST

START_TEST(two_steps_are_both_found)
{
	struct oracle o;
	struct pg_bisect b;

	oracle_init(&o, 64, 20);
	o.steps[o.n_steps++] = 45;
	run(&b, &o, NULL);
	ck_assert_int_eq(b.end, PG_BISECT_END_FOUND);
	ck_assert_uint_eq(b.n_steps, 2);
	ck_assert_uint_eq(b.steps[0].bad, 20);
	ck_assert_uint_eq(b.steps[1].bad, 45);
	ck_assert_uint_eq(b.steps[1].good, 44);
	/* the second phase probes against the first culprit */
	ck_assert_uint_eq(o.asked[o.n_asked - 1].against, 45);
	ck_assert_int_eq(o.asked[o.n_asked - 1].purpose, PG_BISECT_RESIDUAL);
	pg_bisect_release(&b);

	/* the first step is the one nearer the good end, whatever the probes */
	oracle_init(&o, 64, 2);
	o.steps[o.n_steps++] = 60;
	run(&b, &o, NULL);
	ck_assert_uint_eq(b.n_steps, 2);
	ck_assert_uint_eq(b.steps[0].bad, 2);
	ck_assert_uint_eq(b.steps[1].bad, 60);
	pg_bisect_release(&b);
}
END_TEST

START_TEST(three_steps_stop_at_max_steps)
{
	struct oracle o;
	struct pg_bisect b;

	oracle_init(&o, 40, 5);
	o.steps[o.n_steps++] = 15;
	o.steps[o.n_steps++] = 30;
	run(&b, &o, NULL);
	ck_assert_int_eq(b.end, PG_BISECT_END_MAX_STEPS);
	ck_assert_uint_eq(b.n_steps, 2);
	pg_bisect_release(&b);
}
END_TEST

START_TEST(no_change_in_the_range)
{
	struct oracle o;
	struct pg_bisect b;

	oracle_init(&o, 16, 0);
	run(&b, &o, NULL);
	ck_assert_int_eq(b.end, PG_BISECT_END_NO_CHANGE);
	ck_assert_uint_eq(b.n_steps, 0);
	/* the bad end was confirmed, and found not bad */
	ck_assert_uint_eq(o.asked[o.n_asked - 1].commit, 15);
	ck_assert_int_eq(o.asked[o.n_asked - 1].purpose, PG_BISECT_CONFIRM);
	pg_bisect_release(&b);

	oracle_init(&o, 16, 0);
	o.skip[15] = true;
	run(&b, &o, NULL);
	ck_assert_int_eq(b.end, PG_BISECT_END_BAD_UNTESTED);
	pg_bisect_release(&b);
}
END_TEST

START_TEST(two_commits_need_one_probe)
{
	struct oracle o;
	struct pg_bisect b;

	oracle_init(&o, 2, 1);
	run(&b, &o, NULL);
	ck_assert_uint_eq(o.n_asked, 1);
	ck_assert_int_eq(o.asked[0].purpose, PG_BISECT_CONFIRM);
	ck_assert_uint_eq(b.steps[0].bad, 1);
	pg_bisect_release(&b);
	ck_assert_int_eq(pg_bisect_init(&b, 1, NULL), -1);
	pg_bisect_release(&b);
}
END_TEST

START_TEST(names_round_trip)
{
	for (int i = PG_BISECT_GOOD; i <= PG_BISECT_INCONCLUSIVE; i++)
		ck_assert_int_eq(pg_bisect_outcome_parse(pg_bisect_outcome_name(i)), i);
	ck_assert_int_eq(pg_bisect_outcome_parse("maybe"), -1);
	ck_assert_int_eq(pg_bisect_outcome_parse(NULL), -1);
	ck_assert_str_eq(pg_bisect_purpose_name(PG_BISECT_RESIDUAL), "residual");
}
END_TEST

static Suite *bisect_suite(void)
{
	Suite *s = suite_create("bisect_search");
	TCase *tc = tcase_create("search");

	tcase_add_test(tc, every_culprit_is_found_exactly_in_log2_probes);
	tcase_add_test(tc, probes_go_to_the_middle_against_the_good_end);
	tcase_add_test(tc, a_skipped_commit_is_stepped_around);
	tcase_add_test(tc, skipped_commits_before_the_culprit_leave_a_range);
	tcase_add_test(tc, a_skipped_culprit_leaves_it_with_the_next);
	tcase_add_test(tc, inconclusive_is_reprobed_then_undecided_never_guessed);
	tcase_add_test(tc, two_steps_are_both_found);
	tcase_add_test(tc, three_steps_stop_at_max_steps);
	tcase_add_test(tc, no_change_in_the_range);
	tcase_add_test(tc, two_commits_need_one_probe);
	tcase_add_test(tc, names_round_trip);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(bisect_suite());
}
