/*
 * perfgate bisect --local (bisect/bisect_io.h): the search's probes as A/B
 * runs of two commits' engines on this machine, their builds, the state
 * file and the reports.
 */
#include "bisect/bisect_io.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/jsonw.h"
#include "baseline/history.h"
#include "baseline/history_io.h"
#include "baseline/thresholds_io.h"
#include "bisect/bisect_report.h"
#include "buildkite/pipeline_emit.h"
#include "gate/ab.h"
#include "gate/compare.h"
#include "gate/gate_io.h"
#include "results/metrics.h"
#include "runner/ab_io.h"
#include "runner/runner_io.h"
#include "suite/plan.h"
#include "suite/suite.h"
#include "sys/fsutil.h"
#include "sys/gitinfo.h"
#include "sys/proc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define STATE_FILE "bisect-state.json"

struct bisect_run {
	const struct pg_bisect_run_opts *o;
	struct pg_suite *suite;
	const struct pg_plan *plan;
	FILE *log;
	struct pg_bisect_log l;
	int cancel_signal;
};

/* tmpl with every {commit} replaced by id (a hex id: nothing to quote). */
static char *with_commit(const char *tmpl, const char *id)
{
	struct pg_buf b = PG_BUF_INIT;
	const char *p = tmpl, *at;

	while ((at = strstr(p, "{commit}"))) {
		pg_buf_add(&b, p, (size_t)(at - p));
		pg_buf_puts(&b, id);
		p = at + strlen("{commit}");
	}
	pg_buf_puts(&b, p);
	return pg_buf_detach(&b);
}

/* ---- files ---------------------------------------------------------------- */

static int write_json(const char *dir, const char *name, const json_t *j, struct pg_error *err)
{
	struct pg_buf text = PG_BUF_INIT;
	char *path = pg_path_join(dir, name);
	int rc;

	pg_json_write(&text, j, 2);
	pg_buf_putc(&text, '\n');
	rc = pg_file_write_atomic(path, text.ptr, text.len, err);
	pg_buf_release(&text);
	free(path);
	return rc;
}

/* The state file, bisect.md and bisect.json as they stand. */
static int save(struct bisect_run *r, const struct pg_bisect *b, struct pg_error *err)
{
	json_t *state = pg_bisect_log_json(&r->l), *report = pg_bisect_json(&r->l, b);
	struct pg_buf md = PG_BUF_INIT;
	char *md_path = pg_path_join(r->o->output, "bisect.md");
	int rc;

	pg_bisect_markdown(&md, &r->l, b);
	rc = write_json(r->o->output, STATE_FILE, state, err);
	if (!rc)
		rc = write_json(r->o->output, "bisect.json", report, err);
	if (!rc)
		rc = pg_file_write_atomic(md_path, md.ptr, md.len, err);
	json_decref(state);
	json_decref(report);
	pg_buf_release(&md);
	free(md_path);
	return rc;
}

/* What was asked: a resumed bisect must ask the same. */
static json_t *config_json(const struct pg_bisect_run_opts *o, const struct pg_strv *commits)
{
	json_t *c = json_object(), *m = json_array();

	json_object_set_new(c, "repo", json_string(o->repo ? o->repo : "."));
	json_object_set_new(c, "good", json_string(o->good));
	json_object_set_new(c, "bad", json_string(o->bad));
	json_object_set_new(c, "good_id", json_string(commits->v[0]));
	json_object_set_new(c, "bad_id", json_string(commits->v[commits->n - 1]));
	json_object_set_new(c, "suite", json_string(o->suite_path ? o->suite_path : ""));
	json_object_set_new(c, "test", json_string(o->test ? o->test : ""));
	for (size_t i = 0; o->metrics && i < o->metrics->n; i++)
		json_array_append_new(m, json_string(o->metrics->v[i]));
	json_object_set_new(c, "metrics", m);
	json_object_set_new(c, "server_command", json_string(o->server_command));
	json_object_set_new(c, "build", o->build ? json_string(o->build) : json_null());
	json_object_set_new(c, "tolerance",
			    o->tolerance > 0 ? json_real(o->tolerance) : json_null());
	json_object_set_new(c, "min_blocks", json_integer(o->min_blocks));
	json_object_set_new(c, "max_blocks", json_integer(o->max_blocks));
	json_object_set_new(c, "max_attempts", json_integer((json_int_t)o->search.max_attempts));
	json_object_set_new(c, "max_steps", json_integer((json_int_t)o->search.max_steps));
	json_object_set_new(c, "output", json_string(o->output));
	return c;
}

/* The state file on output, when there is one: the same question, or an
 * error naming the first key that differs. */
static int resume(struct bisect_run *r, const json_t *config, struct pg_error *err)
{
	char *path = pg_path_join(r->o->output, STATE_FILE);
	struct pg_buf text = PG_BUF_INIT;
	struct pg_bisect_log old;
	json_error_t jerr;
	json_t *j = NULL;
	struct stat st;
	const char *key;
	json_t *v;
	int rc = 0;

	pg_bisect_log_init(&old);
	if (stat(path, &st))
		goto done;
	if ((rc = pg_file_read(path, &text, err)))
		goto done;
	if (!(j = json_loadb(text.ptr, text.len, 0, &jerr))) {
		rc = pg_error_set(err, PG_ECONFIG, "%s:%d: %s", path, jerr.line, jerr.text);
		goto done;
	}
	pg_bisect_log_release(&old);
	if ((rc = pg_bisect_log_parse(&old, j, path, err)))
		goto done;
	json_object_foreach((json_t *)config, key, v)
	{
		if (!strcmp(key, "output") || !strcmp(key, "good") || !strcmp(key, "bad"))
			continue; /* the same commits by other names, or a moved directory */
		if (!json_equal(v, json_object_get(old.config, key))) {
			rc = pg_error_set(err, PG_ECONFIG,
					  "%s: config.%s: this bisect asks something else of the "
					  "state file there: give another --output, or remove it",
					  path, key);
			goto done;
		}
	}
	/* the outcomes and builds are kept; the question is the new one's */
	json_decref(old.config);
	old.config = json_deep_copy(config);
	pg_strv_release(&old.commits);
	pg_strv_release(&old.subjects);
	old.commits = r->l.commits;
	old.subjects = r->l.subjects;
	memset(&r->l.commits, 0, sizeof(r->l.commits));
	memset(&r->l.subjects, 0, sizeof(r->l.subjects));
	pg_bisect_log_release(&r->l);
	r->l = old;
	pg_bisect_log_init(&old);
	fprintf(r->log, "perfgate bisect: resuming from %s: %zu probes recorded\n", path,
		r->l.n_probes);
done:
	pg_bisect_log_release(&old);
	json_decref(j);
	pg_buf_release(&text);
	free(path);
	return rc;
}

/* ---- builds --------------------------------------------------------------- */

enum built { BUILT_OK, BUILD_FAILED, BUILD_STOPPED };

/* Build a commit's engine once (the log says which were): BUILD_FAILED
 * with *note, or BUILD_STOPPED (a signal, or err). */
static enum built build(struct bisect_run *r, const char *id, char **note, struct pg_error *err)
{
	const char *known = json_string_value(json_object_get(r->l.built, id));
	struct pg_buf script = PG_BUF_INIT, out = PG_BUF_INIT, log = PG_BUF_INIT, why = PG_BUF_INIT;
	char sh[13], *cmd;
	int status = 0, rc;
	bool cut = false;
	double t0 = pg_monotonic();
	enum built result = BUILT_OK;

	if (!r->o->build)
		return BUILT_OK;
	if (known) {
		if (!strcmp(known, "ok"))
			return BUILT_OK;
		*note = pg_xstrdup(known);
		return BUILD_FAILED;
	}
	pg_buf_printf(&log, "%s/builds", r->o->output);
	if (pg_mkdir_p(log.ptr, err)) {
		pg_buf_release(&log);
		return BUILD_STOPPED;
	}
	pg_buf_printf(&log, "/%s.log", pg_bisect_short_id(id, sh));
	cmd = with_commit(r->o->build, id);
	fprintf(r->log, "perfgate bisect: building %s: %s\n", sh, cmd);
	fflush(r->log);
	pg_buf_puts(&script, "exec >");
	pg_shell_quote(&script, log.ptr);
	pg_buf_printf(&script, " 2>&1\n%s", cmd);
	{
		char *argv[] = { "/bin/sh", "-c", script.ptr, NULL };
		double timeout = r->o->build_timeout > 0 ? r->o->build_timeout : 3600;
		rc = pg_proc_capture(argv, timeout, 4096, &pg_run_cancelled, &out, &cut, &status,
				     err);
	}
	if (rc == PG_ECANCEL || pg_run_cancelled) {
		result = BUILD_STOPPED;
		r->cancel_signal = pg_run_cancelled ? (int)pg_run_cancelled : 15;
		pg_error_clear(err);
		goto done;
	}
	if (rc && rc != PG_EINFRA) {
		result = BUILD_STOPPED;
		goto done;
	}
	if (rc == PG_EINFRA) {
		pg_buf_printf(&why, "build failed: %s (log %s)", err->msg, log.ptr);
		pg_error_clear(err);
	} else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		pg_buf_puts(&why, "build failed: ");
		pg_proc_describe(&why, status);
		pg_buf_printf(&why, " (log %s)", log.ptr);
	}
	if (why.len) {
		result = BUILD_FAILED;
		*note = pg_xstrdup(why.ptr);
		json_object_set_new(r->l.built, id, json_string(why.ptr));
	} else {
		json_object_set_new(r->l.built, id, json_string("ok"));
	}
	fprintf(r->log, "perfgate bisect: build of %s %s after %.0f s\n", sh,
		result == BUILT_OK ? "done" : "failed", pg_monotonic() - t0);
done:
	free(cmd);
	pg_buf_release(&script);
	pg_buf_release(&out);
	pg_buf_release(&log);
	pg_buf_release(&why);
	return result;
}

/* ---- probes --------------------------------------------------------------- */

enum ab_fail { AB_OK, AB_GOOD_SIDE_FAILED, AB_PROBED_SIDE_FAILED, AB_STOPPED };

static void first_error(struct pg_buf *out, const struct pg_ab_summary *s, const char *side)
{
	for (size_t i = 0; i < s->errors.n; i++)
		if (strstr(s->errors.v[i], side)) {
			/* its first line: the log's tail is in the probe's files */
			pg_buf_add(out, s->errors.v[i], strcspn(s->errors.v[i], "\n"));
			return;
		}
	pg_buf_puts(out, "a block failed");
}

/* One A/B of the probe's commit (head) against its good end (base). */
static enum ab_fail run_ab(struct bisect_run *r, const struct pg_bisect_probe *p,
			   struct pg_bisect_evidence *e, struct pg_error *err)
{
	const struct pg_bisect_run_opts *o = r->o;
	const char *base_id = r->l.commits.v[p->against], *head_id = r->l.commits.v[p->commit];
	struct pg_ab_spec ab;
	struct pg_ab_summary sum;
	struct pg_ab_run_opts ro;
	struct pg_buf rel = PG_BUF_INIT, note = PG_BUF_INIT;
	char sh[13], *dir;
	enum ab_fail fail = AB_OK;
	bool *hb = NULL;

	pg_buf_printf(&rel, "probes/%02zu-%s-%s", r->l.n_probes + 1,
		      pg_bisect_short_id(head_id, sh), pg_bisect_purpose_name(p->purpose));
	dir = pg_path_join(o->output, rel.ptr);
	pg_ab_spec_init(&ab);
	ab.side[PG_AB_BASE].server_command = with_commit(o->server_command, base_id);
	ab.side[PG_AB_HEAD].server_command = with_commit(o->server_command, head_id);
	if (o->min_blocks > 0)
		ab.min_blocks = o->min_blocks;
	if (o->max_blocks > 0)
		ab.max_blocks = o->max_blocks;
	ab.max_blocks *= (long)p->attempt + 1; /* an inconclusive probe gets a larger budget */
	if (o->tolerance > 0)
		ab.tolerance = ab.latency_tolerance = o->tolerance;
	ab.loc.file = pg_xstrdup("perfgate bisect");

	memset(&ro, 0, sizeof(ro));
	ro.results_dir = dir;
	ro.gpu = o->gpu;
	ro.log = r->log;
	ro.no_telemetry = o->no_telemetry;
	ro.metrics = o->metrics;
	ro.stop_on_failure = true;
	fprintf(r->log,
		"=== perfgate bisect: probe %zu: %s (%s, attempt %zu) against %.12s, up to %ld "
		"blocks\n",
		r->l.n_probes + 1, sh, pg_bisect_purpose_name(p->purpose), p->attempt + 1, base_id,
		ab.max_blocks);
	fflush(r->log);
	r->suite->ab = &ab;
	memset(&sum, 0, sizeof(sum));
	if (pg_ab_run(&sum, r->suite, r->plan, &ro, err) || pg_ab_write(&sum, r->suite, dir, err)) {
		fail = AB_STOPPED;
		goto done;
	}
	e->commit = pg_xstrdup(head_id);
	e->against = pg_xstrdup(base_id);
	e->attempt = p->attempt;
	e->purpose = p->purpose;
	e->blocks = sum.blocks;
	e->seconds = sum.seconds;
	e->dir = pg_buf_detach(&rel);
	e->change = e->lo = e->hi = NAN;
	if (sum.cancel_signal) {
		r->cancel_signal = sum.cancel_signal;
		fail = AB_STOPPED;
		goto done;
	}
	if (sum.failed_blocks[PG_AB_BASE]) {
		first_error(&note, &sum, "(base)");
		fail = AB_GOOD_SIDE_FAILED;
	} else if (sum.failed_blocks[PG_AB_HEAD]) {
		first_error(&note, &sum, "(head)");
		fail = AB_PROBED_SIDE_FAILED;
	}
	if (fail) {
		e->note = pg_buf_detach(&note);
		goto done;
	}
	{
		size_t J = sum.d.n_metrics, P = sum.d.n_points, shown;
		const struct pg_ab_est *est = NULL;
		hb = pg_xcalloc(J + 1, sizeof(bool));
		for (size_t j = 0; j < J; j++)
			hb[j] = sum.metrics[j]->direction == PG_HIGHER_IS_BETTER;
		e->outcome = (int)pg_bisect_classify(&sum.d, hb, &shown);
		if (shown < J * P) {
			est = &sum.d.points[shown];
			e->metric = pg_xstrdup(sum.metrics[shown / P]->id);
		} else if (shown != (size_t)-1) {
			est = &sum.d.whole[shown - J * P];
			e->metric = pg_xstrdup(sum.metrics[shown - J * P]->id);
		}
		if (est) {
			/* the interval is of the judged log ratio: as a change */
			e->change = est->change;
			e->lo = isfinite(est->lo) ? est->lo : NAN;
			e->hi = isfinite(est->hi) ? est->hi : NAN;
		}
		if (e->outcome == PG_BISECT_INCONCLUSIVE)
			e->note = pg_xstrdup(sum.stop ? sum.stop : "undecided");
	}
done:
	r->suite->ab = NULL;
	pg_ab_summary_release(&sum);
	pg_ab_spec_release(&ab);
	pg_buf_release(&rel);
	pg_buf_release(&note);
	free(dir);
	free(hb);
	return fail;
}

/*
 * Run a probe to an outcome: the builds, the A/B, a retry of a failure.
 * Returns the outcome (>= 0), or -1 when the bisect must stop (err set,
 * or r->cancel_signal).
 */
static int probe(struct bisect_run *r, struct pg_bisect *b, const struct pg_bisect_probe *p,
		 struct pg_error *err)
{
	const char *base_id = r->l.commits.v[p->against], *head_id = r->l.commits.v[p->commit];
	char *note = NULL;
	enum built bt;

	if ((bt = build(r, base_id, &note, err)) != BUILT_OK) {
		if (bt == BUILD_FAILED)
			pg_error_set(err, PG_EINFRA, "the good end %.12s cannot be built: %s",
				     base_id, note);
		free(note);
		return -1;
	}
	if ((bt = build(r, head_id, &note, err)) != BUILT_OK) {
		struct pg_bisect_evidence e;
		if (bt == BUILD_STOPPED) {
			free(note);
			return -1;
		}
		memset(&e, 0, sizeof(e));
		e.commit = pg_xstrdup(head_id);
		e.against = pg_xstrdup(base_id);
		e.attempt = p->attempt;
		e.purpose = p->purpose;
		e.outcome = PG_BISECT_SKIP;
		e.change = e.lo = e.hi = NAN;
		e.note = note;
		pg_bisect_log_add(&r->l, &e);
		return PG_BISECT_SKIP;
	}
	for (int tries = 0;; tries++) {
		struct pg_bisect_evidence e;
		enum ab_fail fail;

		memset(&e, 0, sizeof(e));
		fail = run_ab(r, p, &e, err);
		if (fail == AB_STOPPED) {
			pg_bisect_evidence_release(&e);
			return -1;
		}
		if (fail == AB_OK) {
			int outcome = e.outcome;
			pg_bisect_log_add(&r->l, &e);
			return outcome;
		}
		if (tries == 0 || fail == AB_GOOD_SIDE_FAILED) {
			/* not evidence: the machine, not the commit */
			e.outcome = -1;
			fprintf(r->log, "perfgate bisect: %s side failed: %s%s\n",
				fail == AB_GOOD_SIDE_FAILED ? "the good" : "the probed", e.note,
				tries == 0 ? "; running the probe again" : "");
			pg_bisect_log_add(&r->l, &e);
			if (tries == 0) {
				if (save(r, b, err))
					return -1;
				continue;
			}
			pg_error_set(err, PG_EINFRA,
				     "the good end %.12s failed twice in a row (%s): an "
				     "infrastructure failure; run again to resume",
				     base_id, r->l.probes[r->l.n_probes - 1].note);
			return -1;
		}
		/* the probed commit failed twice while its good end ran */
		e.outcome = PG_BISECT_SKIP;
		{
			struct pg_buf n = PG_BUF_INIT;
			pg_buf_printf(&n, "cannot start: %s", e.note);
			free(e.note);
			e.note = pg_buf_detach(&n);
		}
		pg_bisect_log_add(&r->l, &e);
		return PG_BISECT_SKIP;
	}
}

/* Every test's server command is a shell line while probes run. */
static void set_shell(struct pg_suite *suite, bool *saved, bool restore)
{
	for (size_t i = 0; i < suite->n_tests; i++) {
		if (restore) {
			suite->tests[i].server.shell = saved[i];
		} else {
			saved[i] = suite->tests[i].server.shell;
			suite->tests[i].server.shell = true;
		}
	}
}

int pg_bisect_run(struct pg_bisect_outcome_summary *out, struct pg_suite *suite,
		  const struct pg_plan *plan, const struct pg_bisect_run_opts *o,
		  struct pg_error *err)
{
	struct bisect_run r;
	struct pg_bisect b;
	struct pg_bisect_probe p;
	json_t *config = NULL;
	bool *shell = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&r, 0, sizeof(r));
	memset(&b, 0, sizeof(b));
	r.o = o;
	r.suite = suite;
	r.plan = plan;
	r.log = o->log ? o->log : stderr;
	pg_bisect_log_init(&r.l);
	if ((rc = pg_git_first_parent_range(&r.l.commits, &r.l.subjects, o->repo ? o->repo : ".",
					    o->good, o->bad, err)))
		goto done;
	if (r.l.commits.n < 2) {
		rc = pg_error_set(err, PG_ECONFIG, "--good and --bad are the same commit (%.12s)",
				  r.l.commits.v[0]);
		goto done;
	}
	if ((rc = pg_mkdir_p(o->output, err)))
		goto done;
	config = config_json(o, &r.l.commits);
	json_decref(r.l.config);
	r.l.config = json_incref(config);
	if ((rc = resume(&r, config, err)))
		goto done;
	pg_bisect_init(&b, r.l.commits.n, &o->search);
	fprintf(r.log, "perfgate bisect: %zu commits after %.12s up to %.12s\n", r.l.commits.n - 1,
		r.l.commits.v[0], r.l.commits.v[r.l.commits.n - 1]);
	shell = pg_xcalloc(suite->n_tests + 1, sizeof(bool));
	set_shell(suite, shell, false);
	pg_run_signals_install();
	while (pg_bisect_next(&b, &p)) {
		int outcome = pg_bisect_log_find(&r.l, r.l.commits.v[p.commit],
						 r.l.commits.v[p.against], p.attempt, NULL);
		if (outcome >= 0) {
			out->replayed++;
		} else if (o->max_probes >= 0 && out->probes_run >= (size_t)o->max_probes) {
			break; /* the next job's (--max-probes, --pipeline) */
		} else {
			outcome = probe(&r, &b, &p, err);
			if (outcome < 0) {
				rc = r.cancel_signal ? 0 : (err->code ? err->code : PG_ERR);
				break;
			}
			out->probes_run++;
			fprintf(r.log, "perfgate bisect: %.12s is %s\n", r.l.commits.v[p.commit],
				pg_bisect_outcome_name(outcome));
		}
		pg_bisect_record(&b, (enum pg_bisect_outcome)outcome);
		if (out->probes_run && (rc = save(&r, &b, err)))
			break;
	}
	pg_run_signals_restore();
	set_shell(suite, shell, true);
	{
		struct pg_error serr = PG_ERROR_INIT;
		int src = save(&r, &b, rc ? &serr : err);
		if (!rc)
			rc = src;
	}
	if (!rc && o->pipeline) {
		json_t *pl = pg_bisect_pipeline(&r.l, &b, o->queue, o->from_step);
		pg_yaml_write(o->pipeline, pl, 0);
		json_decref(pl);
	}
	out->finished = b.state == PG_BISECT_DONE;
	out->end = b.end;
	out->steps = b.n_steps;
	out->cancel_signal = r.cancel_signal;
done:
	free(shell);
	json_decref(config);
	pg_bisect_release(&b);
	pg_bisect_log_release(&r.l);
	return rc;
}

/* ---- --from-change ------------------------------------------------------- */

void pg_bisect_change_release(struct pg_bisect_change *c)
{
	free(c->point);
	free(c->metric);
	free(c->good);
	free(c->bad);
	free(c->first_date);
	free(c->last_date);
	memset(c, 0, sizeof(*c));
}

static char *dup_str(const json_t *v)
{
	return json_is_string(v) ? pg_xstrdup(json_string_value(v)) : NULL;
}

/* The newest step of the changes JSON (pg_history_changes_json) at point
 * (NULL: every point) in metric. */
static const json_t *newest_step(const json_t *changes, const char *point, const char *metric)
{
	const json_t *best = NULL, *c;
	size_t i;

	json_array_foreach(json_object_get(changes, "changes"), i, c)
	{
		const char *cp = json_string_value(json_object_get(c, "point"));
		const char *date = json_string_value(json_object_get(c, "last_date"));
		if (strcmp(json_string_value(json_object_get(c, "kind")), "step") ||
		    strcmp(json_string_value(json_object_get(c, "metric")), metric) ||
		    (point ? !cp || strcmp(cp, point) : cp != NULL) ||
		    !json_is_string(json_object_get(c, "first_commit")))
			continue;
		if (!best || strcmp(date ? date : "", pg_json_path_str(best, "last_date")
							      ? pg_json_path_str(best, "last_date")
							      : "") >= 0)
			best = c;
	}
	return best;
}

int pg_bisect_from_change(struct pg_bisect_change *out, const char *spec, const char *history_repo,
			  const char *ref, const char *thresholds, struct pg_error *err)
{
	const char *slash1 = strchr(spec, '/'), *slash2 = strrchr(spec, '/');
	struct pg_history *hs = NULL;
	struct pg_history_analysis an;
	struct pg_policy policy;
	json_t *changes = NULL;
	const json_t *c;
	char gpu_name[128];
	size_t n = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&an, 0, sizeof(an));
	pg_policy_init(&policy);
	if (!slash1 || slash1 == slash2 || slash1 == spec || !slash2[1] || slash2 == slash1 + 1) {
		rc = pg_error_set(err, PG_ECONFIG,
				  "--from-change '%s': expected GPU/POINT/METRIC (POINT 'all': "
				  "every point)",
				  spec);
		goto done;
	}
	snprintf(gpu_name, sizeof(gpu_name), "%.*s", (int)(slash1 - spec), spec);
	out->point = pg_xstrdup(slash1 + 1);
	out->point[slash2 - slash1 - 1] = '\0';
	if (!strcmp(out->point, "all")) {
		free(out->point);
		out->point = NULL;
	}
	out->metric = pg_xstrdup(slash2 + 1);
	if ((rc = pg_gate_gpu_key(out->gpu, sizeof(out->gpu), gpu_name, NULL, err)) ||
	    (rc = pg_thresholds_load_policy(&policy, thresholds, out->gpu, err)) ||
	    (rc = pg_history_read(&hs, &n, out->gpu, NULL,
				  &(struct pg_history_opts){ .repo = history_repo, .ref = ref },
				  err)))
		goto done;
	/* as baseline changes reads it: every point, a job's offset taken out */
	pg_history_analyse(&an, hs, n, NULL, &policy, 0, false);
	changes = pg_history_changes_json(hs, n, &an, &policy, out->gpu, out->metric);
	if (!(c = newest_step(changes, out->point, out->metric))) {
		rc = pg_error_set(err, PG_ECONFIG,
				  "--from-change %s: no step of %s at %s in the history of %s "
				  "(perfgate baseline changes --gpu %s lists them)",
				  spec, out->metric, out->point ? out->point : "every point",
				  out->gpu, out->gpu);
		goto done;
	}
	out->good = dup_str(json_object_get(c, "first_commit"));
	out->bad = dup_str(json_object_get(c, "last_commit"));
	out->shift = json_number_value(json_object_get(c, "shift"));
	out->first_date = dup_str(json_object_get(c, "first_date"));
	out->last_date = dup_str(json_object_get(c, "last_date"));
	if (!out->bad)
		rc = pg_error_set(err, PG_ECONFIG,
				  "--from-change %s: the step's jobs name no commit", spec);
done:
	json_decref(changes);
	pg_history_analysis_release(&an);
	for (size_t i = 0; i < n; i++)
		pg_history_release(&hs[i]);
	free(hs);
	pg_policy_release(&policy);
	return rc;
}
