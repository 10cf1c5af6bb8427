/*
 * perfgate buildkite: the plugin's flow. Each stage is a function of the
 * step state; stages that fail after the run started do not end the step
 * early -- the annotation says what happened and the exit code decides.
 */
#include "buildkite/step_io.h"

#include "base/alloc.h"
#include "buildkite/annotation.h"
#include "buildkite/pipeline_emit.h"
#include "base/buf.h"
#include "report/charts.h"
#include "buildkite/plugin_config.h"
#include "base/error.h"
#include "base/exitcode.h"
#include "report/report.h"
#include "results/result.h"
#include "buildkite/agent_io.h"
#include "sys/fsutil.h"
#include "sys/proc.h"
#include "gpu/detect_io.h"
#include "results/results_io.h"
#include "base/jsonw.h"
#include "base/redact.h"
#include "base/secret.h"
#include "runner/runner_io.h"
#include "baseline/history_io.h"
#include "baseline/thresholds_io.h"
#include "runner/runfmt.h"
#include "runner/ab_io.h"
#include "gate/ab.h"
#include "gate/gate_io.h"
#include "trends/trends.h"
#include "trends/trends_io.h"

#include <errno.h>
#include <libgen.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Everything one step works with. */
struct step {
	bool trends_written; /* <results-dir>/trends holds the site (trends_step) */
	const struct pg_bkenv *env;
	const struct pg_bk_opts *o;
	struct pg_plugin_config s;
	FILE *log;
	const char *name; /* for messages: the label, else the key */
	struct pg_gpu_info gpu;
	struct pg_bkagent agent;
	bool have_agent;
	char *artifact_cwd;    /* where artifact upload runs */
	char *artifact_prefix; /* the results directory as artifact paths begin */

	struct pg_result_set results;
	struct pg_strv notes; /* errors and warnings for the annotation */
	int run_exit;         /* the runner's exit code (3, 128+N) or 0 */
	struct pg_strv plan;  /* the points the step planned, when known */
	bool have_plan;
	/* every secret the step knows: what it logs, writes and posts passes
	 * through it, whatever the message came from */
	struct pg_redactor redact;
	struct pg_bk_pr pr; /* a pull request's base, pinned before the run */
	bool told_local_history;
	struct pg_ab_summary ab; /* baseline: ab: what the A/B run found */
	bool have_ab;
	/* the step ran its points itself (run, gate, A/B): the results
	 * directory's files from before `since` are an earlier job's on this
	 * agent, neither reported nor uploaded (this_job) */
	bool own_results;
	time_t since;
	struct pg_strv stale; /* files of an earlier job left out, each once */
};

static void say(struct step *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(struct step *st, const char *fmt, ...)
{
	struct pg_buf raw = PG_BUF_INIT, clean = PG_BUF_INIT, plain = PG_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	pg_buf_vprintf(&raw, fmt, ap);
	va_end(ap);
	pg_redact(&st->redact, &clean, raw.ptr);
	/* log groups only where Buildkite shows them as groups */
	if (!st->env->in_buildkite)
		pg_runfmt_plain(&plain, clean.ptr);
	fputs(st->env->in_buildkite ? clean.ptr : plain.ptr, st->log);
	fflush(st->log);
	pg_buf_release(&raw);
	pg_buf_release(&clean);
	pg_buf_release(&plain);
}

static const char *step_label(const struct pg_bkenv *env)
{
	if (env->step_label)
		return env->step_label;
	return pg_bkenv_step_name(env);
}

/* ---- pull-request gating ---- */

/* true: the step has nothing to do on this build (logged once). */
bool pg_bk_skipped_for_labels(const struct pg_bkenv *env, const struct pg_plugin_config *c,
			      struct pg_buf *why)
{
	struct pg_buf want = PG_BUF_INIT, have = PG_BUF_INIT;

	if (!c->only_on_labels.n || !pg_bkenv_is_pr(env))
		return false;
	if (pg_bkenv_has_label(env, (const char *const *)c->only_on_labels.v, c->only_on_labels.n))
		return false;
	for (size_t i = 0; i < c->only_on_labels.n; i++)
		pg_buf_printf(&want, "%s%s", i ? ", " : "", c->only_on_labels.v[i]);
	for (size_t i = 0; i < env->labels.n; i++)
		pg_buf_printf(&have, "%s%s", i ? ", " : "", env->labels.v[i]);
	pg_buf_printf(why, "skipped: pull request #%s has no label %s (labels: %s)",
		      env->pull_request, want.ptr, have.len ? have.ptr : "none");
	pg_buf_release(&want);
	pg_buf_release(&have);
	return true;
}

static bool skip_for_labels(struct step *st)
{
	struct pg_buf why = PG_BUF_INIT;
	bool skipped = pg_bk_skipped_for_labels(st->env, &st->s, &why);

	if (skipped)
		say(st, "perfgate: %s\n", why.ptr);
	pg_buf_release(&why);
	return skipped;
}

/* ---- artifact paths ---- */

/*
 * Artifact paths are stored as the upload names them, and annotation
 * links must match them exactly: upload from the results directory's
 * parent, so artifacts are "<dir name>/..." for a relative or absolute
 * results directory alike ("results/charts/x.svg").
 */
static void artifact_layout(struct step *st)
{
	char *copy = pg_xstrdup(st->s.results_dir);
	size_t len = strlen(copy);
	char *d, *b;

	while (len > 1 && copy[len - 1] == '/')
		copy[--len] = '\0';
	if (copy[0] != '/') {
		/* relative: keep the path as written, minus "./" */
		const char *p = copy;
		while (pg_str_has_prefix(p, "./"))
			p += 2;
		st->artifact_cwd = NULL;
		st->artifact_prefix = pg_xstrdup(p);
		free(copy);
		return;
	}
	d = pg_xstrdup(copy);
	b = pg_xstrdup(copy);
	st->artifact_cwd = pg_xstrdup(dirname(d));
	st->artifact_prefix = pg_xstrdup(basename(b));
	free(d);
	free(b);
	free(copy);
}

static char *artifact_path(const struct step *st, const char *rel)
{
	struct pg_buf b = PG_BUF_INIT;

	pg_buf_printf(&b, "%s/%s", st->artifact_prefix, rel);
	return pg_buf_detach(&b);
}

/* ---- the GPU ---- */

/* The GPU as a headline names it: "H100", or "No GPU" for a run on an
 * agent where nothing was detected (the mock server, a CPU engine). */
static const char *gpu_display(const struct step *st)
{
	return strcmp(st->gpu.key, "none") ? st->gpu.key : "No GPU";
}

static int resolve_gpu(struct step *st, const char *suite_gpu, struct pg_error *err)
{
	pg_gpu_info_release(&st->gpu);
	pg_gpu_info_init(&st->gpu);
	if (strcmp(st->s.gpu, "auto")) {
		pg_gpu_force(&st->gpu, st->s.gpu, "plugin");
		return 0;
	}
	return pg_gpu_resolve(&st->gpu, NULL, suite_gpu, err);
}

/* Report and merge steps may run on an agent without GPUs: with gpu auto,
 * the results say which GPU they measured. */
static void gpu_from_results(struct step *st)
{
	const char *raw = NULL;

	if (strcmp(st->s.gpu, "auto") || strcmp(st->gpu.key, "none"))
		return;
	for (size_t i = 0; i < st->results.n && !raw; i++)
		raw = pg_result_gpu(&st->results.items[i]);
	if (raw) {
		pg_gpu_info_release(&st->gpu);
		pg_gpu_info_init(&st->gpu);
		pg_gpu_force(&st->gpu, raw, "results");
	}
}

/* ---- outputs ---- */

static int write_file(struct step *st, const char *rel, const char *data, size_t len)
{
	struct pg_error err = PG_ERROR_INIT;
	char *path = pg_path_join(st->s.results_dir, rel);
	const char *slash = strrchr(rel, '/');
	char *dir = pg_xstrndup(rel, slash ? (size_t)(slash - rel) : 0);
	struct pg_buf text = PG_BUF_INIT, clean = PG_BUF_INIT;
	int rc;

	/* reports, charts and the annotation are text built from results and
	 * messages: one last pass, so no secret is written whatever its path */
	pg_buf_add(&text, data, len);
	pg_redact(&st->redact, &clean, text.ptr);
	/* charts/ as a link planted in the results directory is not
	 * written through */
	rc = pg_mkdir_under(st->s.results_dir, dir, &err);
	if (!rc)
		rc = pg_file_write_atomic(path, clean.ptr, clean.len, &err);
	if (rc) {
		say(st, "perfgate: warning: %s\n", err.msg);
		pg_strv_push(&st->notes, err.msg);
	}
	free(dir);
	free(path);
	pg_buf_release(&text);
	pg_buf_release(&clean);
	return rc;
}

/* The evidence's charts the comparison could not write: said, and a note
 * of the annotation. */
static void evidence_warning(struct step *st, const struct pg_bk_compare *cmp)
{
	if (!cmp->warning)
		return;
	say(st, "perfgate: warning: %s\n", cmp->warning);
	pg_strv_push(&st->notes, cmp->warning);
}

struct finish {
	struct pg_report *report;
	struct pg_buf report_md, report_tables, records;
	struct pg_chart_set charts;
	struct pg_annotation_chart *chart_refs;
	size_t n_chart_refs;
	char **chart_paths; /* the report's charts, then the evidence's */
	size_t n_chart_paths;
	enum pg_annotation_status status;
	size_t n_errors;
	struct pg_bk_compare cmp;
	int compare_failed;             /* the comparison's error code, or 0 */
	size_t recorded;                /* points recorded in the history */
	const struct pg_ab_summary *ab; /* an A/B step's decision, or NULL */
	char *headline_note;            /* why nothing was judged (history_state) */
};

static void write_reports(struct step *st, struct finish *f)
{
	f->report = pg_report_new(&st->results);
	pg_report_markdown(&f->report_md, f->report, PG_REPORT_ALL);
	pg_report_markdown(&f->report_tables, f->report, PG_REPORT_DESCRIPTIONS | PG_REPORT_TABLES);
	pg_report_records(&f->records, f->report);
	write_file(st, "benchmark_results.md", f->report_md.ptr, f->report_md.len);
	write_file(st, "benchmark_results.json", f->records.ptr, f->records.len);
}

/* The cell of a judged metric at a point, [j * n_points + p], or -1. */
static long ab_cell(const struct pg_ab_summary *s, const char *point, const struct pg_metric *m)
{
	for (size_t p = 0; p < s->points.n; p++) {
		if (strcmp(s->points.v[p], point))
			continue;
		for (size_t j = 0; j < s->n_metrics; j++)
			if (s->metrics[j] == m)
				return (long)(j * s->points.n + p);
	}
	return -1;
}

/* The base side's median of a metric at a point (pg_chart_baseline_fn). */
static int ab_base_value(void *ctx, const char *point, const struct pg_metric *m, double *out)
{
	const struct pg_ab_summary *s = ctx;
	long c = ab_cell(s, point, m);

	if (c < 0 || isnan(s->base[c]))
		return -1;
	*out = s->base[c];
	return 0;
}

/* The paired change of a judged metric at a point (pg_chart_baseline_fn). */
static int ab_change(void *ctx, const char *point, const struct pg_metric *m, double *out)
{
	const struct pg_ab_summary *s = ctx;
	long c = ab_cell(s, point, m);

	if (c < 0 || isnan(s->d.points[c].change))
		return -1;
	*out = s->d.points[c].change;
	return 0;
}

static void write_charts(struct step *st, struct finish *f)
{
	size_t n = st->results.n;
	const json_t **results = pg_xcalloc(n + 1, sizeof(*results));
	const char **names = pg_xcalloc(n + 1, sizeof(*names));
	struct pg_chart_input in = { 0 };
	struct pg_buf subtitle = PG_BUF_INIT;
	const char **flagged;
	size_t k = 0, n_refs = 0;

	/* a point that failed has no numbers worth drawing */
	for (size_t i = 0; i < n; i++) {
		if (strcmp(pg_result_status(&st->results.items[i]), "ok"))
			continue;
		results[k] = st->results.items[i].json;
		names[k++] = st->results.items[i].name;
	}
	n = k;
	pg_buf_puts(&subtitle, gpu_display(st));
	if (st->env->commit)
		pg_buf_printf(&subtitle, " · commit %.12s", st->env->commit);
	in.results = results;
	in.names = names;
	in.n = n;
	in.subtitle = subtitle.ptr;
	if (f->ab) {
		/* an A/B step's charts draw the base side where a baseline goes */
		in.baseline = ab_base_value;
		in.baseline_ctx = (void *)f->ab;
		/* the bars' change is the decision's paired change, the
		 * figure of the annotation's rows */
		in.change = ab_change;
		in.change_ctx = (void *)f->ab;
		in.baseline_name = "Base";
	} else if (f->cmp.compared) {
		in.baseline = pg_bk_baseline_value;
		in.baseline_ctx = &f->cmp;
		in.baseline_name = "Baseline";
	}
	/* the points that need attention: their charts come first */
	flagged = pg_xcalloc(f->cmp.n_rows + 1, sizeof(*flagged));
	for (size_t i = 0; i < f->cmp.n_rows; i++)
		flagged[i] = f->cmp.rows[i].test;
	in.flagged = flagged;
	in.n_flagged = f->cmp.n_rows;
	in.metrics = (const char *const *)f->cmp.metrics.v;
	in.n_metrics = f->cmp.metrics.n;
	pg_charts_build(&f->charts, &in);
	if (f->charts.sweeps_left_out)
		say(st, "perfgate: %zu more serving sweeps were not charted (at most %d)\n",
		    f->charts.sweeps_left_out, PG_CHARTS_MAX_SWEEPS);
	f->n_chart_paths = f->charts.n + f->cmp.evidence.n;
	f->chart_refs = pg_xcalloc(f->n_chart_paths + 1, sizeof(*f->chart_refs));
	f->chart_paths = pg_xcalloc(f->n_chart_paths + 1, sizeof(char *));
	for (size_t i = 0; i < f->charts.n; i++) {
		struct pg_buf rel = PG_BUF_INIT;
		pg_buf_printf(&rel, "charts/%s.svg", f->charts.items[i].stem);
		write_file(st, rel.ptr, f->charts.items[i].svg, f->charts.items[i].svg_len);
		f->chart_paths[i] = artifact_path(st, rel.ptr);
		pg_buf_release(&rel);
	}
	/* the annotation shows the first few: each regression's trend against
	 * its baseline first (the gate wrote them with the comparison), then
	 * the charts with flagged points */
	for (size_t i = 0; i < f->cmp.evidence.n; i++) {
		f->chart_paths[f->charts.n + i] = artifact_path(st, f->cmp.evidence.v[i]);
		f->chart_refs[n_refs].artifact_path = f->chart_paths[f->charts.n + i];
		f->chart_refs[n_refs++].title = f->cmp.evidence_titles.v[i];
	}
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < f->charts.n; i++) {
			const struct pg_strv *pts = &f->charts.items[i].points;
			bool hot = false;
			for (size_t q = 0; q < pts->n && !hot; q++)
				for (size_t j = 0; j < in.n_flagged && !hot; j++)
					hot = !strcmp(pts->v[q], flagged[j]);
			if (hot != (pass == 0))
				continue;
			f->chart_refs[n_refs].artifact_path = f->chart_paths[i];
			f->chart_refs[n_refs++].title = f->charts.items[i].title;
		}
	f->n_chart_refs = n_refs;
	free(flagged);
	free(results);
	free(names);
	pg_buf_release(&subtitle);
}

static void finish_release(struct finish *f)
{
	free(f->headline_note);
	pg_bk_compare_release(&f->cmp);
	pg_report_free(f->report);
	pg_buf_release(&f->report_md);
	pg_buf_release(&f->report_tables);
	pg_buf_release(&f->records);
	for (size_t i = 0; i < f->n_chart_paths; i++)
		free(f->chart_paths[i]);
	free(f->chart_paths);
	free(f->chart_refs);
	pg_chart_set_release(&f->charts);
}

static char *annotation_context(const struct step *st)
{
	struct pg_buf b = PG_BUF_INIT;
	const char *stepname = pg_bkenv_step_name(st->env);

	if (st->s.context)
		return pg_xstrdup(st->s.context);
	pg_buf_printf(&b, "perfgate-%s-", st->gpu.key);
	/* contexts are identifiers: keep them to [A-Za-z0-9._-] */
	for (const char *p = stepname; *p; p++) {
		unsigned char c = (unsigned char)*p;
		pg_buf_putc(&b, (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
						(c >= 'A' && c <= 'Z') || c == '.' || c == '_' ||
						c == '-'
					? (char)c
					: '-');
	}
	if (b.len > 100)
		pg_buf_truncate(&b, 100);
	return pg_buf_detach(&b);
}

static bool should_annotate(const struct step *st, enum pg_annotation_status status)
{
	switch (st->s.annotate) {
	case PG_ANNOTATE_NEVER:
		return false;
	case PG_ANNOTATE_ON_CHANGE:
		return status != PG_ANNOTATION_PASS;
	default:
		return true;
	}
}

/* The counts and status of the annotation, shared by the annotation and
 * the log's closing line. */
static void annotation_counts(const struct step *st, const struct finish *f,
			      struct pg_annotation *a)
{
	a->gpu = gpu_display(st);
	a->status = f->status;
	a->compared = f->cmp.compared;
	/* planned points count even when they produced nothing */
	a->n_tests = st->have_plan && st->plan.n > st->results.n ? st->plan.n : st->results.n;
	a->n_errors = f->n_errors ? f->n_errors : f->cmp.counts.errors;
	a->counts = f->cmp.counts;
	a->headline_note = f->headline_note;
	a->not_failing = st->s.mode == PG_MODE_REPORT ? "report mode"
			 : st->s.mode == PG_MODE_RUN  ? "run mode"
						      : NULL;
}

/*
 * A failing step's next steps (annotation.h pg_annotation_next): this
 * step run again for the build it ran for, on the points that failed
 * (none when the whole run changed: every point), and how its baseline
 * takes a new level. points and thresholds hold what n points to.
 */
static void annotation_next(const struct step *st, const struct finish *f,
			    struct pg_annotation_next *n, struct pg_strv *points, char **thresholds)
{
	memset(n, 0, sizeof(*n));
	n->step = pg_bkenv_step_name(st->env);
	if (pg_bkenv_is_pr(st->env)) {
		n->pull_request = st->env->pull_request;
		n->base_branch = pg_bk_base_branch(&st->s, st->env);
		n->label = st->s.only_on_labels.n ? st->s.only_on_labels.v[0] : NULL;
	}
	for (size_t i = 0; i < f->cmp.n_rows && !f->cmp.counts.whole_run_metrics; i++) {
		const struct pg_annotation_row *r = &f->cmp.rows[i];
		bool seen = false;
		if (r->tone != PG_TONE_BAD)
			continue;
		for (size_t k = 0; k < points->n && !seen; k++)
			seen = !strcmp(points->v[k], r->test);
		if (!seen)
			pg_strv_push(points, r->test);
	}
	n->points = (const char *const *)points->v;
	n->n_points = points->n;
	n->report = st->s.mode == PG_MODE_REPORT;
	n->results_dir = st->s.results_dir;
	n->history_repo = st->s.history_repo;
	if (st->have_ab) {
		n->accept = PG_ACCEPT_AB;
	} else if (st->s.baseline == PG_BASELINE_GIT) {
		n->accept = PG_ACCEPT_HISTORY;
	} else {
		n->accept = PG_ACCEPT_THRESHOLDS;
		*thresholds = pg_thresholds_path(st->s.thresholds, st->gpu.key);
		n->thresholds = *thresholds;
	}
}

static void post_annotation(struct step *st, struct finish *f)
{
	struct pg_annotation a = { 0 };
	struct pg_annotation_result res;
	struct pg_buf body = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;
	char *report_art = artifact_path(st, "benchmark_results.md");
	char *json_art = artifact_path(st, "benchmark_results.json");
	char *cmp_art = artifact_path(st, "comparison.md");
	char *job_url = pg_bkenv_job_url(st->env);
	char *context = annotation_context(st);
	char *annotation_file = pg_path_join(st->s.results_dir, "annotation.md");
	struct pg_strv facts = PG_STRV_INIT, tflags = PG_STRV_INIT;
	struct pg_buf fact = PG_BUF_INIT, trends_art = PG_BUF_INIT;
	struct pg_annotation_evidence *ev = NULL;
	struct pg_strv ev_paths = PG_STRV_INIT, next_points = PG_STRV_INIT;
	char *next_thresholds = NULL;

	/* telemetry flags, one line per point that has any */
	for (size_t i = 0; i < st->results.n; i++) {
		const json_t *fl = json_object_get(
			json_object_get(json_object_get(st->results.items[i].json, "perfgate"),
					"telemetry"),
			"flags");
		size_t k;
		const json_t *v;
		if (!json_array_size(fl))
			continue;
		pg_buf_reset(&fact);
		pg_buf_printf(&fact, "%s:", st->results.items[i].name);
		json_array_foreach(fl, k, v)
		{
			pg_buf_printf(&fact, "%s %s", k ? "," : "", json_string_value(v));
		}
		pg_strv_push(&tflags, fact.ptr);
	}
	pg_buf_reset(&fact);
	pg_buf_printf(&fact, "step %s", st->name);
	pg_strv_push(&facts, fact.ptr);
	if (st->env->commit) {
		pg_buf_reset(&fact);
		pg_buf_printf(&fact, "commit %.12s", st->env->commit);
		pg_strv_push(&facts, fact.ptr);
	}
	if (st->gpu.label[0] && strcmp(st->gpu.label, "none")) {
		pg_buf_reset(&fact);
		pg_buf_printf(&fact, "GPU %s", st->gpu.label);
		pg_strv_push(&facts, fact.ptr);
	}

	if (f->cmp.baseline_desc) {
		pg_buf_reset(&fact);
		pg_buf_printf(&fact, "baseline %s", f->cmp.baseline_desc);
		pg_strv_push(&facts, fact.ptr);
	}
	if (f->cmp.confirmed)
		pg_strv_push(&facts,
			     "flagged regressions re-run: each must reproduce on the re-run");
	if (f->recorded) {
		pg_buf_reset(&fact);
		pg_buf_printf(&fact, "recorded in the history (%zu point%s)", f->recorded,
			      f->recorded == 1 ? "" : "s");
		pg_strv_push(&facts, fact.ptr);
	}
	if (f->cmp.policy_note)
		pg_strv_push(&st->notes, f->cmp.policy_note);
	if (f->cmp.note)
		pg_strv_push(&st->notes, f->cmp.note);

	annotation_counts(st, f, &a);
	a.facts = (const char *const *)facts.v;
	a.n_facts = facts.n;
	a.flags = (const char *const *)tflags.v;
	a.n_flags = tflags.n;
	a.notes = (const char *const *)st->notes.v;
	a.n_notes = st->notes.n;
	a.policy_diff = f->cmp.policy_diff;
	a.policy_diff_title = f->cmp.policy_diff_title;
	/* the evidence's files as uploaded (none when nothing is uploaded) */
	ev = pg_xcalloc(f->cmp.n_ev + 1, sizeof(*ev));
	for (size_t i = 0; i < f->cmp.n_ev; i++) {
		ev[i] = f->cmp.ev[i];
		for (size_t k = 0; k < PG_EVIDENCE_FILES; k++) {
			ev[i].files[k] = NULL;
			if (st->s.artifacts && f->cmp.ev[i].files[k]) {
				char *p = artifact_path(st, f->cmp.ev[i].files[k]);
				pg_strv_push_owned(&ev_paths, p);
				ev[i].files[k] = p;
			}
		}
	}
	a.evidence = ev;
	a.n_evidence = f->cmp.n_ev;
	a.evidence_total = f->cmp.ev_total;
	annotation_next(st, f, &a.next, &next_points, &next_thresholds);
	a.charts = f->chart_refs;
	a.n_charts = f->n_chart_refs;
	a.rows = f->cmp.rows;
	a.n_rows = f->cmp.n_rows;
	a.report_md = f->report_tables.ptr;
	a.comparison_md = f->cmp.compared ? f->cmp.table.ptr : NULL;
	/* the records (benchmark_results.json): pd.read_json makes one frame
	 * of them, a row per point, as the section's title says */
	a.json_section = f->records.ptr;
	a.report_artifact = st->s.artifacts ? report_art : NULL;
	a.comparison_artifact = st->s.artifacts && f->cmp.compared ? cmp_art : NULL;
	a.json_artifact = st->s.artifacts ? json_art : NULL;
	if (st->s.artifacts && st->trends_written) {
		char *gpu_dir = pg_trends_gpu_dir(st->gpu.key);
		pg_buf_printf(&trends_art, "%s/trends/%s/all.html", st->artifact_prefix, gpu_dir);
		a.trends_artifact = trends_art.ptr;
		free(gpu_dir);
	}
	a.job_url = job_url;
	/* a local annotation.md links its neighbours, which a preview shows */
	a.local_dir = st->env->in_buildkite ? NULL : st->artifact_prefix;

	if (pg_annotation_render(&body, &a, PG_ANNOTATION_MAX_BYTES - 1, &res) < 0) {
		say(st, "perfgate: warning: the annotation does not fit in 1 MiB\n");
		goto done;
	}
	{
		/* a value shorter than "***" (a URL's one-letter password) makes
		 * the body longer: rendered again within the limit less that */
		struct pg_buf clean = PG_BUF_INIT;
		pg_redact(&st->redact, &clean, body.ptr);
		if (clean.len >= PG_ANNOTATION_MAX_BYTES) {
			size_t grew = clean.len - body.len;
			pg_buf_reset(&body);
			pg_buf_reset(&clean);
			if (pg_annotation_render(&body, &a, PG_ANNOTATION_MAX_BYTES - 1 - grew,
						 &res) < 0) {
				say(st,
				    "perfgate: warning: the annotation does not fit in 1 MiB\n");
				pg_buf_release(&clean);
				goto done;
			}
			pg_redact(&st->redact, &clean, body.ptr);
		}
		pg_buf_release(&body);
		body = clean;
	}
	if (res.level != PG_ANNOTATION_FULL)
		say(st,
		    "perfgate: the annotation was shortened to fit Buildkite's 1 MiB limit "
		    "(%zu of %zu rows shown); everything is in the artifacts\n",
		    res.rows_shown, a.n_rows);
	write_file(st, "annotation.md", body.ptr, body.len);
	if (!st->env->in_buildkite) {
		say(st, "perfgate: not running in Buildkite: annotation written to %s\n",
		    annotation_file);
		goto done;
	}
	if (!should_annotate(st, f->status))
		goto done;
	if (!st->have_agent) {
		say(st,
		    "perfgate: warning: cannot annotate: no buildkite-agent (annotation in %s)\n",
		    annotation_file);
		goto done;
	}
	if (pg_bkagent_annotate(&st->agent, context, pg_annotation_style_of(&a), body.ptr, body.len,
				&err))
		/* the exit code still says what happened: a regression stays red */
		say(st, "perfgate: warning: annotation failed: %s (annotation in %s)\n", err.msg,
		    annotation_file);
done:
	pg_buf_release(&body);
	pg_buf_release(&fact);
	pg_strv_release(&facts);
	pg_strv_release(&tflags);
	pg_strv_release(&ev_paths);
	pg_strv_release(&next_points);
	free(next_thresholds);
	free(ev);
	free(report_art);
	free(json_art);
	pg_buf_release(&trends_art);
	free(cmp_art);
	free(job_url);
	free(context);
	free(annotation_file);
}

/*
 * Was path written by this job? A results directory outside the checkout
 * (or one `git clean` spares) keeps an earlier job's files on the agent:
 * a step that runs its points itself reports and uploads only what it
 * wrote -- files modified since it started -- and leaves the rest where
 * they are (they may be anyone's: nothing is deleted). Steps that report
 * what others wrote (report, merge) take everything.
 */
static bool this_job(struct step *st, const char *path)
{
	struct stat sb;

	if (!st->own_results || lstat(path, &sb) != 0 || sb.st_mtime >= st->since)
		return true;
	for (size_t i = 0; i < st->stale.n; i++)
		if (!strcmp(st->stale.v[i], path))
			return false;
	pg_strv_push(&st->stale, path);
	return false;
}

/* Say once that files of an earlier job were left out. */
static void note_stale(struct step *st)
{
	size_t n = st->stale.n;

	if (!n)
		return;
	say(st,
	    "perfgate: %s holds %zu file%s from before this job (an earlier job's on this "
	    "agent?): neither reported nor uploaded, left as %s\n",
	    st->s.results_dir, n, n == 1 ? "" : "s", n == 1 ? "it is" : "they are");
}

/* Upload arguments are ';'-separated glob patterns; keep each call's well
 * under the kernel's 128 KiB limit for one argument. */
#define UPLOAD_ARG_MAX 65536

/*
 * The files to upload, named one by one rather than by a pattern the agent
 * would expand: the regular files of the results directory and of its
 * charts/ and confirm/ (real directories only) -- not a symbolic link a
 * benchmarked server left there, which the agent would follow, nor the
 * shard-* copies a merge step downloaded. A name the agent would read as
 * a pattern is left out with a warning.
 */
static void upload_list(struct step *st, struct pg_strv *paths)
{
	static const char *const subdirs[] = {
		NULL, "charts", "evidence", "confirm", "base", "head"
	};

	for (size_t i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
		struct pg_error err = PG_ERROR_INIT;
		struct pg_strv names = PG_STRV_INIT;
		char *dir = subdirs[i] ? pg_path_join(st->s.results_dir, subdirs[i])
				       : pg_xstrdup(st->s.results_dir);
		struct stat lst;

		if (subdirs[i] && lstat(dir, &lst) == 0 && S_ISLNK(lst.st_mode)) {
			say(st, "perfgate: warning: %s: a symbolic link, not uploaded\n", dir);
		} else if (pg_dir_list_regular(dir, NULL, &names, &err) == 0) {
			for (size_t k = 0; k < names.n; k++) {
				struct pg_buf p = PG_BUF_INIT;
				char *file = pg_path_join(dir, names.v[k]);
				bool stale = !this_job(st, file);
				free(file);
				if (stale)
					continue;
				if (strpbrk(names.v[k], "*?[]{};\\")) {
					say(st,
					    "perfgate: warning: %s/%s: not uploaded (a name the agent would read as a pattern)\n",
					    dir, names.v[k]);
					continue;
				}
				pg_buf_printf(&p, "%s/%s%s%s", st->artifact_prefix,
					      subdirs[i] ? subdirs[i] : "", subdirs[i] ? "/" : "",
					      names.v[k]);
				pg_strv_push_owned(paths, pg_buf_detach(&p));
			}
		}
		pg_strv_release(&names);
		free(dir);
	}
}

/* The trends site (trends_step): the GPU's one page, the file the
 * annotation links. Buildkite serves each artifact at an address of its
 * own, where a link to another artifact does not resolve: a page is
 * browsable there only whole. */
static void upload_list_trends(struct step *st, struct pg_strv *paths)
{
	char *gpu_dir = pg_trends_gpu_dir(st->gpu.key);
	struct pg_buf p = PG_BUF_INIT;

	/* the name is perfgate's own (pg_trends_gpu_dir): no pattern
	 * characters */
	pg_buf_printf(&p, "%s/trends/%s/all.html", st->artifact_prefix, gpu_dir);
	pg_strv_push_owned(paths, pg_buf_detach(&p));
	free(gpu_dir);
}

static void upload_artifacts(struct step *st)
{
	struct pg_strv paths = PG_STRV_INIT;
	struct pg_buf arg = PG_BUF_INIT;

	if (!st->env->in_buildkite || !st->s.artifacts)
		return;
	if (!st->have_agent) {
		say(st, "perfgate: warning: cannot upload artifacts: no buildkite-agent\n");
		return;
	}
	upload_list(st, &paths);
	if (st->trends_written)
		upload_list_trends(st, &paths);
	say(st, "--- perfgate: uploading %zu files of %s\n", paths.n, st->artifact_prefix);
	for (size_t i = 0; i <= paths.n; i++) {
		struct pg_error err = PG_ERROR_INIT;
		bool flush = i == paths.n
				     ? arg.len > 0
				     : arg.len && arg.len + 1 + strlen(paths.v[i]) > UPLOAD_ARG_MAX;
		if (flush) {
			if (pg_bkagent_artifact_upload(&st->agent, st->artifact_cwd, arg.ptr, &err))
				say(st, "perfgate: warning: artifact upload failed: %s\n", err.msg);
			pg_buf_reset(&arg);
		}
		if (i == paths.n)
			break;
		if (arg.len)
			pg_buf_putc(&arg, ';');
		pg_buf_puts(&arg, paths.v[i]);
	}
	pg_buf_release(&arg);
	pg_strv_release(&paths);
}

static void set_meta_data(struct step *st, enum pg_annotation_status status)
{
	struct pg_error err = PG_ERROR_INIT;
	struct pg_buf key = PG_BUF_INIT;

	if (!st->env->in_buildkite || !st->have_agent)
		return;
	pg_buf_printf(&key, "perfgate:%s:verdict", st->gpu.key);
	if (pg_bkagent_meta_data_set(&st->agent, key.ptr, pg_annotation_status_name(status), &err))
		say(st, "perfgate: warning: meta-data failed: %s\n", err.msg);
	pg_buf_release(&key);
}

/* Load a results directory; a missing one is an infrastructure failure
 * noted for the annotation. */
static int load_results(struct step *st, struct pg_result_set *set, const char *dir)
{
	struct pg_error err = PG_ERROR_INIT;
	int rc = pg_results_load_dir(set, dir, &err);
	size_t k = 0;

	if (rc == PG_ENOTFOUND)
		pg_error_set(&err, PG_EINFRA, "%s: no results directory", dir);
	if (rc) {
		pg_strv_push(&st->notes, err.msg);
		say(st, "perfgate: %s\n", err.msg);
		return rc;
	}
	for (size_t i = 0; i < set->n; i++) {
		if (!this_job(st, set->items[i].path)) {
			pg_result_release(&set->items[i]);
			continue;
		}
		set->items[k++] = set->items[i];
	}
	set->n = k;
	return 0;
}

/* Points that did not run: one note each. */
static size_t note_failed_points(struct step *st)
{
	struct pg_buf line = PG_BUF_INIT;
	size_t n = 0;

	for (size_t i = 0; i < st->results.n; i++) {
		const struct pg_result *r = &st->results.items[i];
		const char *status = pg_result_status(r);
		if (!strcmp(status, "ok") || !strcmp(status, "skipped"))
			continue;
		n++;
		pg_buf_reset(&line);
		pg_buf_printf(&line, "%s: %s%s%s", r->name, status, pg_result_error(r) ? ": " : "",
			      pg_result_error(r) ? pg_result_error(r) : "");
		pg_strv_push(&st->notes, line.ptr);
	}
	pg_buf_release(&line);
	return n;
}

/*
 * confirm: re-run the points the comparison lists (the flagged ones and a
 * few anchors, or a sick job's) once into <results-dir>/confirm and decide
 * again: each flagged regression must reproduce on the re-run alone.
 */
static void confirm_regressions(struct step *st, struct finish *f)
{
	struct pg_error err = PG_ERROR_INIT;
	struct pg_suite suite = PG_SUITE_INIT;
	struct pg_plan plan = PG_PLAN_INIT;
	struct pg_result_set again = PG_RESULT_SET_INIT;
	char *dir = pg_path_join(st->s.results_dir, "confirm");
	int run_exit = 0;
	/* a sick job: its flagged points and anchors are re-run at once */
	bool replace = f->cmp.suspect != NULL;

	if (pg_bk_plan(&suite, &plan, &st->s, st->name, &err))
		goto fail;
	pg_bk_plan_points(&plan, &f->cmp.rerun);
	if (!plan.n)
		goto done;
	/* confirm/ as a link planted by the first run is not written through */
	if (pg_mkdir_under(st->s.results_dir, "confirm", &err))
		goto fail;
	if (replace)
		say(st, "--- perfgate: the job looks sick (%s): re-running %zu point%s\n",
		    f->cmp.suspect, plan.n, plan.n == 1 ? "" : "s");
	else
		say(st, "--- perfgate: confirming %zu flagged point%s with a re-run\n", plan.n,
		    plan.n == 1 ? "" : "s");
	if (pg_bk_run(&suite, &plan, dir, &st->gpu, st->log, &run_exit, &err))
		goto fail;
	if (run_exit > 128) {
		st->run_exit = run_exit;
		goto done;
	}
	if (load_results(st, &again, dir))
		goto done;
	pg_bk_compare_release(&f->cmp);
	/* The re-run decides on its own either way: each flagged regression
	 * must reproduce on it alone (replication), so a sick first job's
	 * numbers are never pooled with the re-run's -- the re-run takes their
	 * place, and a regression that was the machine's does not reproduce.
	 * The health judged is now the re-run's. */
	if (pg_bk_compare(&f->cmp, &st->results, &again, st->have_plan ? &st->plan : NULL, &st->s,
			  st->env, &st->pr, st->gpu.key, st->s.results_dir, &err))
		goto fail;
	evidence_warning(st, &f->cmp);
	if (replace && f->cmp.suspect)
		pg_strv_push(&st->notes, "the re-run looks sick too: re-run the job on "
					 "another agent");
	goto done;
fail:
	say(st, "perfgate: confirmation failed: %s\n", err.msg);
	pg_strv_push(&st->notes, err.msg);
done:
	pg_result_set_release(&again);
	pg_plan_release(&plan);
	pg_suite_release(&suite);
	free(dir);
}

/* Without history-repo the history is a ref in the agent's checkout: say
 * what that means, once per step, in the log. */
static void note_local_history(struct step *st)
{
	if (st->told_local_history || st->s.history_repo || !st->env->in_buildkite)
		return;
	st->told_local_history = true;
	say(st,
	    "perfgate: note: history-repo is not set: the history is %s in this agent's "
	    "checkout, pushed nowhere: other agents do not see it, and any later job in this "
	    "checkout (pull requests included) can rewrite it; set history-repo to a "
	    "repository only default-branch builds can push to\n",
	    PG_HISTORY_DEFAULT_REF);
}

static void compare_step(struct step *st, struct finish *f)
{
	struct pg_error err = PG_ERROR_INIT;

	if (!strcmp(st->gpu.key, "none")) {
		f->cmp.note = pg_xstrdup(
			"no GPU detected and none configured (gpu): no baseline to "
			"compare with");
		return;
	}
	say(st, "--- perfgate: comparing with the %s baseline\n",
	    st->s.baseline == PG_BASELINE_GIT ? "git history" : "thresholds");
	if (st->s.baseline == PG_BASELINE_GIT)
		note_local_history(st);
	if (pg_bk_compare(&f->cmp, &st->results, NULL, st->have_plan ? &st->plan : NULL, &st->s,
			  st->env, &st->pr, st->gpu.key, st->s.results_dir, &err)) {
		say(st, "perfgate: comparison failed: %s\n", err.msg);
		pg_strv_push(&st->notes, err.msg);
		f->compare_failed = err.code;
		return;
	}
	evidence_warning(st, &f->cmp);
	if (f->cmp.policy_note)
		say(st, "perfgate: warning: %s\n", f->cmp.policy_note);
	if (f->cmp.policy_diff)
		write_file(st, "thresholds-change.diff", f->cmp.policy_diff,
			   strlen(f->cmp.policy_diff));
	if (f->cmp.note)
		say(st, "perfgate: %s\n", f->cmp.note);
	if (f->cmp.suspect) {
		struct pg_buf note = PG_BUF_INIT;
		pg_buf_printf(&note, "job suspect, a regression not trusted: %s", f->cmp.suspect);
		say(st, "perfgate: %s\n", note.ptr);
		pg_strv_push(&st->notes, note.ptr);
		pg_buf_release(&note);
	}
	if (f->cmp.compared && f->cmp.rerun.n && st->s.confirm && st->s.mode != PG_MODE_REPORT &&
	    (st->s.suites.paths.n || st->s.suites.inline_suite))
		confirm_regressions(st, f);
}

/*
 * record-history: green runs of the default branch become the baseline;
 * an A/B step's results, on any branch, go beside them (never a
 * baseline: docs/ab.md). Runs before the annotation, so that a record
 * that failed is in it: an error (exit 3) or, with record-history-failure:
 * warn, a warning.
 */
static void record_step(struct step *st, struct finish *f)
{
	struct pg_error err = PG_ERROR_INIT;
	struct pg_history_recorded rec = { 0 };
	bool soft = st->s.record_failure == PG_RECORD_WARN;
	const struct pg_ab_summary *ab = st->have_ab ? &st->ab : NULL;
	int rc;

	if (!st->s.record_history)
		return;
	if (ab && (ab->cancel_signal || ab->blocks < 2)) {
		say(st, "perfgate: not recording the A/B results: the run %s\n",
		    ab->cancel_signal ? "was cancelled" : "has no pair of blocks");
		return;
	}
	if (!ab && !pg_bkenv_on_default_branch(st->env)) {
		say(st, "perfgate: not recording history: %s is not the default branch %s\n",
		    pg_bkenv_is_pr(st->env) ? "a pull request"
		    : st->env->branch       ? st->env->branch
					    : "this build",
		    st->env->default_branch);
		return;
	}
	/* Every completed run of main is recorded, with what its gate found
	 * regressed: the history follows main, so a regression that landed is
	 * reported on the run where it appeared and the level follows it once
	 * it persists, instead of failing every later build. A run that did
	 * not complete (errors, missing points, a sick job: exit 3) is not. */
	if (!ab && f->status == PG_ANNOTATION_ERROR) {
		say(st, "perfgate: not recording history: the run did not complete (%s)\n",
		    f->cmp.suspect ? "the job looks sick" : "errors or missing points");
		return;
	}
	if (ab && st->s.ab_history_repo) {
		say(st, "--- perfgate: recording the A/B results in the %s history of %s\n",
		    st->gpu.key, st->s.ab_history_repo);
	} else {
		note_local_history(st);
		if (ab && pg_bkenv_is_pr(st->env) && st->env->in_buildkite)
			say(st,
			    "perfgate: note: ab-history-repo is not set: a pull request records "
			    "its A/B results in main's history, so its job can push there; "
			    "set ab-history-repo to a repository of their own\n");
		say(st, "--- perfgate: recording %s in the %s history\n",
		    ab ? "the A/B results" : "the run", st->gpu.key);
	}
	rc = pg_bk_record_history(&st->results, ab, &st->s, st->env, st->gpu.key,
				  f->cmp.compared ? &f->cmp : NULL, &rec, &err);
	for (size_t i = 0; i < rec.notes.n; i++)
		say(st, "perfgate: %s\n", rec.notes.v[i]);
	for (size_t i = 0; i < rec.left_out.n; i++) {
		struct pg_buf note = PG_BUF_INIT;
		pg_buf_printf(&note, "not recorded in the history: %s", rec.left_out.v[i]);
		say(st, "perfgate: %s\n", note.ptr);
		pg_strv_push_owned(&st->notes, pg_buf_detach(&note));
	}
	if (rc && rec.none_recordable) {
		/* every point was left out, each with its note: nothing failed */
		if (f->status < PG_ANNOTATION_WARNING)
			f->status = PG_ANNOTATION_WARNING;
		goto done;
	}
	if (rc) {
		struct pg_buf note = PG_BUF_INIT;
		pg_buf_printf(&note, "recording the history failed: %s", err.msg);
		say(st, "perfgate: %s%s\n", soft ? "warning: " : "error: ", note.ptr);
		pg_strv_push_owned(&st->notes, pg_buf_detach(&note));
		if (!soft)
			f->status = PG_ANNOTATION_ERROR;
		else if (f->status < PG_ANNOTATION_WARNING)
			f->status = PG_ANNOTATION_WARNING;
		goto done;
	}
	f->recorded = rec.lines;
	say(st, "perfgate: recorded %s%zu point%s in the %s history",
	    ab ? "the A/B results of " : "", rec.lines, rec.lines == 1 ? "" : "s", st->gpu.key);
	if (rec.replaced)
		say(st, ", replacing %zu earlier record%s of this build", rec.replaced,
		    rec.replaced == 1 ? "" : "s");
	say(st, " (%d attempt%s)\n", rec.attempts, rec.attempts == 1 ? "" : "s");
done:
	pg_history_recorded_release(&rec);
}

/*
 * trends: the site of this GPU's history (trends/trends_io.h) with the run
 * on it, in <results-dir>/trends, for the artifacts. After the record, so
 * that a build of main sees itself in the history. A failure is a warning:
 * the site is a view, the verdict stands without it.
 */
/* In trends_step's child: the site, and one line for the parent: "ok
 * POINTS PAGES" or the error. */
static int trends_child(void *ctx, int out_fd)
{
	const struct pg_trends_opts *o = ctx;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_trends_written w;
	struct pg_buf line = PG_BUF_INIT;
	int rc = pg_trends_write(o, &w, &err);

	if (rc)
		pg_buf_printf(&line, "%s", err.msg);
	else
		pg_buf_printf(&line, "ok %zu %zu", w.points, w.pages);
	for (size_t off = 0; off < line.len;) {
		ssize_t n = write(out_fd, line.ptr + off, line.len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	pg_buf_release(&line);
	return rc;
}

/* The site may take a while on a long history, and is new code reading
 * what anyone with push access wrote: it runs in a child process, after
 * the verdict is known, so that its crash or hang is a warning, never the
 * step's end (the annotation and the exit code still come). */
#define TRENDS_TIMEOUT_S 600

static void trends_step(struct step *st, const struct finish *f)
{
	struct pg_error err = PG_ERROR_INIT;
	struct pg_buf said = PG_BUF_INIT, why = PG_BUF_INIT;
	struct pg_cmp_point *points;
	size_t n_points = 0, n_pages = 0;
	char *out;
	int rc, status = 0;

	if (!st->s.trends || !strcmp(st->gpu.key, "none"))
		return;
	if (st->s.baseline != PG_BASELINE_GIT && !st->s.record_history) {
		say(st, "perfgate: warning: trends: needs baseline: git or record-history (a "
			"history in git)\n");
		return;
	}
	say(st, "--- perfgate: rendering the %s trends\n", st->gpu.key);
	out = pg_path_join(st->s.results_dir, "trends");
	points = pg_gate_points(&st->results);
	rc = pg_proc_call(
		trends_child,
		&(struct pg_trends_opts){ .out_dir = out,
					  .repo = st->s.history_repo,
					  .ab_repo = st->s.ab_history_repo,
					  .gpu = st->gpu.key,
					  .thresholds = st->s.thresholds,
					  .policy = pg_bk_compare_policy(&f->cmp),
					  /* an A/B step: its results are drawn from the history */
					  .current = st->have_ab ? NULL : points,
					  .n_current = st->results.n,
					  /* the annotation's verdicts, re-run included */
					  .decided = pg_bk_compare_comparison(&f->cmp),
					  .one_page_only = true,
					  .current_gpu = st->gpu.key,
					  .current_name = pg_bkenv_is_pr(st->env) ? "this PR"
										  : "this build",
					  .last = -1 },
		"trends", TRENDS_TIMEOUT_S, &pg_run_cancelled, &said, &status, &err);
	if (!rc && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	    sscanf(said.ptr ? said.ptr : "", "ok %zu %zu", &n_points, &n_pages) == 2) {
		st->trends_written = true;
		char *gpu_dir = pg_trends_gpu_dir(st->gpu.key);
		say(st, "perfgate: trends: %zu test point%s in %s/%s/all.html\n", n_points,
		    n_points == 1 ? "" : "s", out, gpu_dir);
		free(gpu_dir);
	} else {
		if (rc)
			pg_buf_puts(&why, err.msg);
		else if (WIFEXITED(status) && said.len)
			pg_buf_add(&why, said.ptr, said.len);
		else
			pg_proc_describe(&why, status);
		say(st, "perfgate: warning: trends: %s (the verdict stands without it)\n",
		    why.ptr ? why.ptr : "failed");
	}
	pg_buf_release(&said);
	pg_buf_release(&why);
	free(points);
	free(out);
}

/* One row of the annotation's attention table from an A/B hypothesis. */
static void ab_row(struct pg_bk_compare *c, const char *point, const char *label, double base,
		   double head, const struct pg_ab_est *e, double tol)
{
	struct pg_annotation_row *r = &c->rows[c->n_rows++];

	pg_strv_push(&c->strings, point);
	r->test = c->strings.v[c->strings.n - 1];
	r->metric = label;
	r->baseline = base;
	r->current = head;
	r->delta_pct = 100 * e->change;
	/* the same figure as comparison.md and the charts, with its interval */
	r->has_interval = true;
	r->lo_pct = 100 * e->change_lo;
	r->hi_pct = 100 * e->change_hi;
	r->tolerance_pct = 100 * tol;
	/* the colour from the verdict, as the gate's rows */
	r->tone = e->verdict == PG_AB_REGRESSED   ? PG_TONE_BAD
		  : e->verdict == PG_AB_IMPROVED  ? PG_TONE_GOOD
		  : e->verdict == PG_AB_UNCHANGED ? PG_TONE_NONE
						  : PG_TONE_WARN;
	r->verdict = pg_ab_verdict_name(e->verdict);
}

/*
 * baseline: ab: the A/B decision in the shapes the rest of the step uses
 * (the comparison's): comparison.md and verdict.json, the attention rows,
 * the counts per test point, the status.
 */
static void ab_compare(struct step *st, struct finish *f)
{
	const struct pg_ab_summary *s = &st->ab;
	struct pg_bk_compare *c = &f->cmp;
	size_t P = s->points.n;
	struct pg_buf md = PG_BUF_INIT, js = PG_BUF_INIT, desc = PG_BUF_INIT;
	json_t *v = pg_ab_json(s);
	int outcome = pg_ab_outcome(s);

	pg_ab_markdown(&md, s);
	pg_json_write(&js, v, 2);
	pg_buf_putc(&js, '\n');
	json_decref(v);
	write_file(st, "comparison.md", md.ptr, md.len);
	write_file(st, "verdict.json", js.ptr, js.len);
	pg_buf_release(&js);

	c->compared = true;
	c->outcome = (enum pg_outcome)outcome;
	c->status = outcome == PG_OUTCOME_FAIL    ? PG_ANNOTATION_REGRESSION
		    : outcome == PG_OUTCOME_INFRA ? PG_ANNOTATION_ERROR
		    : outcome == PG_OUTCOME_WARN  ? PG_ANNOTATION_WARNING
						  : PG_ANNOTATION_PASS;
	pg_buf_printf(&desc, "A/B: base on this agent, interleaved with the head, %zu block pair%s",
		      s->blocks / 2, s->blocks / 2 == 1 ? "" : "s");
	c->baseline_desc = pg_buf_detach(&desc);
	c->table = md;
	c->rows = pg_xcalloc(s->n_metrics * (P + 1) + 1, sizeof(*c->rows));
	c->counts.tests = P;
	/* the whole run's rows first: a change common to every point */
	for (size_t j = 0; j < s->n_metrics; j++) {
		const struct pg_ab_est *e = &s->d.whole[j];
		if (!e->applies || e->verdict == PG_AB_UNCHANGED || e->verdict == PG_AB_IMPROVED)
			continue;
		ab_row(c, "whole run", s->metrics[j]->label, NAN, NAN, e, s->whole_tolerance[j]);
		if (e->verdict == PG_AB_REGRESSED)
			c->counts.whole_run_metrics++;
		pg_strv_push(&c->metrics, s->metrics[j]->id);
	}
	for (size_t p = 0; p < P; p++) {
		bool reg = false, warn = false, better = false;
		for (size_t j = 0; j < s->n_metrics; j++) {
			const struct pg_ab_est *e = &s->d.points[j * P + p];
			if (!e->applies)
				continue;
			better = better || e->verdict == PG_AB_IMPROVED;
			if (e->verdict == PG_AB_UNCHANGED || e->verdict == PG_AB_IMPROVED)
				continue;
			reg = reg || e->verdict == PG_AB_REGRESSED;
			warn = true;
			c->counts.regressed_metrics += e->verdict == PG_AB_REGRESSED;
			ab_row(c, s->points.v[p], s->metrics[j]->label, s->base[j * P + p],
			       s->head[j * P + p], e, s->tolerance[j]);
		}
		if (reg)
			c->counts.regressed++;
		else if (warn)
			c->counts.warnings++;
		else if (better)
			c->counts.improved++;
	}
	if (s->cancel_signal)
		pg_strv_push(&st->notes,
			     "the A/B run was cancelled: decided on the complete pairs");
	if (s->client_bound.n) {
		struct pg_buf note = PG_BUF_INIT;
		pg_buf_puts(&note, "client-bound, left out of the A/B estimates with their pair "
				   "(the client, not the server, was the limit): ");
		for (size_t i = 0; i < s->client_bound.n; i++)
			pg_buf_printf(&note, "%s%s", i ? ", " : "", s->client_bound.v[i]);
		say(st, "perfgate: %s\n", note.ptr);
		pg_strv_push_owned(&st->notes, pg_buf_detach(&note));
	}
	for (size_t i = 0; i < s->errors.n; i++) {
		say(st, "perfgate: %s\n", s->errors.v[i]);
		pg_strv_push(&st->notes, s->errors.v[i]);
	}
	say(st, "perfgate: A/B: %zu block%s (%s)\n", s->blocks, s->blocks == 1 ? "" : "s",
	    s->stop ? s->stop : "");
}

/* The points the step planned: its own plan when it ran them, else the
 * results directory's manifest, else the suites it names (a merge step). */
static void learn_plan(struct step *st)
{
	struct pg_error err = PG_ERROR_INIT;
	struct pg_suite suite = PG_SUITE_INIT;
	struct pg_plan plan = PG_PLAN_INIT;

	if (st->have_plan)
		return;
	if (pg_bk_read_plan(&st->plan, &st->have_plan, st->s.results_dir, &err) == 0 &&
	    st->have_plan)
		return;
	pg_strv_release(&st->plan);
	st->have_plan = false;
	if ((st->s.suites.paths.n || st->s.suites.inline_suite) &&
	    pg_bk_plan(&suite, &plan, &st->s, st->name, &err) == 0) {
		for (size_t i = 0; i < plan.n; i++)
			pg_strv_push(&st->plan, plan.points[i].name);
		st->have_plan = true;
	}
	pg_plan_release(&plan);
	pg_suite_release(&suite);
}

static enum pg_annotation_status step_status(const struct step *st, const struct finish *f,
					     bool loaded)
{
	/* where the step gates, a confirmed regression outranks failed points,
	 * as in the gate: it is the news, and a retry on exit 3 would only hide
	 * it again; a run or a report fails on its own failures only */
	if (f->cmp.compared && f->cmp.status == PG_ANNOTATION_REGRESSION &&
	    (st->s.mode == PG_MODE_GATE || st->s.mode == PG_MODE_MERGE))
		return PG_ANNOTATION_REGRESSION;
	if (!loaded || f->n_errors || st->run_exit || !st->results.n)
		return PG_ANNOTATION_ERROR;
	if (f->compare_failed)
		return PG_ANNOTATION_ERROR;
	if (f->cmp.compared)
		return f->cmp.status;
	/* a gate without a baseline gated nothing: worth a warning; a run or
	 * a report only mentions it */
	if (f->cmp.note && (st->s.mode == PG_MODE_GATE || st->s.mode == PG_MODE_MERGE))
		return PG_ANNOTATION_WARNING;
	return PG_ANNOTATION_PASS;
}

/*
 * baseline: git with fewer runs than the gate needs (min_history): every
 * row would only say "insufficient-data", and the step would pass with
 * warnings without a word about why. The headline says it instead: on the
 * default branch "no history yet: building it, 2 of 5 runs" (this run
 * counted when it was recorded); a pull request that gates against no run
 * at all is an error (exit 3), as the check before the run makes it when
 * the history has no runs of the GPU (step_check_io.c).
 */
static void history_state(struct step *st, struct finish *f)
{
	const struct pg_bk_compare *c = &f->cmp;
	struct pg_buf note = PG_BUF_INIT;
	long k = c->history_runs + (f->recorded ? 1 : 0);

	if (!c->compared || c->history_runs < 0 || c->history_runs >= c->history_needed)
		return;
	if (pg_bkenv_is_pr(st->env) && c->history_runs == 0 &&
	    (st->s.mode == PG_MODE_GATE || st->s.mode == PG_MODE_MERGE)) {
		pg_buf_printf(&note,
			      "baseline: git: no run of %s in the history at or before the "
			      "merge-base (%s): nothing was compared. The default branch's step "
			      "records them (record-history: true), into the history-repo this "
			      "step reads",
			      st->gpu.key, c->baseline_desc ? c->baseline_desc : "none");
		say(st, "perfgate: error: %s\n", note.ptr);
		pg_strv_push(&st->notes, note.ptr);
		f->headline_note = pg_xstrdup("no history to compare with");
		f->status = PG_ANNOTATION_ERROR;
		pg_buf_release(&note);
		return;
	}
	if (pg_bkenv_on_default_branch(st->env) && st->s.record_history)
		pg_buf_printf(&note, "no history yet: building it, %ld of %ld runs", k,
			      c->history_needed);
	else if (pg_bkenv_on_default_branch(st->env))
		pg_buf_printf(&note,
			      "no history yet: %ld of %ld runs, and this step records none "
			      "(record-history is off)",
			      k, c->history_needed);
	else
		pg_buf_printf(&note, "no history yet: %ld of %ld runs at the merge-base", k,
			      c->history_needed);
	say(st, "perfgate: %s: the gate judges a point once the history has %ld runs of it\n",
	    note.ptr, c->history_needed);
	f->headline_note = pg_buf_detach(&note);
	if (f->status < PG_ANNOTATION_WARNING)
		f->status = PG_ANNOTATION_WARNING;
}

/* The step's status as the gate's outcome: the step adds its own
 * failures (points that failed to run, a history not recorded) to the
 * comparison's. */
static enum pg_outcome status_outcome(enum pg_annotation_status s)
{
	switch (s) {
	case PG_ANNOTATION_ERROR:
		return PG_OUTCOME_INFRA;
	case PG_ANNOTATION_REGRESSION:
		return PG_OUTCOME_FAIL;
	case PG_ANNOTATION_WARNING:
		return PG_OUTCOME_WARN;
	case PG_ANNOTATION_PASS:
		break;
	}
	return PG_OUTCOME_PASS;
}

/* After the results exist: report, compare, charts, annotate, upload. */
static int finish_step(struct step *st)
{
	struct finish f;
	struct pg_buf headline = PG_BUF_INIT;
	struct pg_annotation a = { 0 };
	int exit_code;
	bool loaded;

	memset(&f, 0, sizeof(f));
	say(st, "--- perfgate: report\n");
	if (st->have_ab) {
		/* the head's results are the step's; the base is the baseline */
		char *head = pg_path_join(st->s.results_dir, "head");
		loaded = load_results(st, &st->results, head) == 0;
		free(head);
		f.ab = &st->ab;
	} else {
		loaded = load_results(st, &st->results, st->s.results_dir) == 0;
	}
	f.n_errors = note_failed_points(st);
	gpu_from_results(st);
	write_reports(st, &f);
	learn_plan(st);
	if (st->have_ab)
		ab_compare(st, &f);
	else if (loaded && st->results.n)
		compare_step(st, &f);
	write_charts(st, &f);
	f.status = step_status(st, &f, loaded);

	/* an A/B step's sides are a pull request's, not baselines: its
	 * results are recorded apart (record_step) */
	record_step(st, &f);
	history_state(st, &f);
	trends_step(st, &f);
	post_annotation(st, &f);
	upload_artifacts(st);
	note_stale(st);
	set_meta_data(st, f.status);

	/* a signal and a bad configuration are not verdicts; the rest is the
	 * gate's ladder, the one `perfgate gate` exits with */
	if (st->run_exit > 128)
		exit_code = st->run_exit;
	else if (f.compare_failed == PG_ECONFIG)
		exit_code = PG_EXIT_USAGE;
	else
		exit_code = pg_gate_exit_code(status_outcome(f.status),
					      st->s.mode == PG_MODE_GATE ||
						      st->s.mode == PG_MODE_MERGE);

	annotation_counts(st, &f, &a);
	pg_annotation_headline(&headline, &a);
	say(st, "+++ perfgate: %s (exit %d)\n", headline.ptr, exit_code);
	finish_release(&f);
	pg_buf_release(&headline);
	return exit_code;
}

/* ---- the step ---- */

/* An inline suite's secrets, before it is even parsed (a report step
 * never parses it): every string as a command line would be searched, and
 * the value of every secret-named key ("HF_TOKEN": ..., "password": ...;
 * not "api_key_env", which names a variable). */
static void collect_config_secrets(struct pg_redactor *r, const json_t *v, const char *key)
{
	const char *k;
	json_t *item;
	size_t i;

	if (json_is_string(v)) {
		size_t klen = key ? strlen(key) : 0;
		bool names_a_variable = klen > 4 && (!strcmp(key + klen - 4, "_env") ||
						     !strcmp(key + klen - 4, "-env"));
		if (key && pg_secret_name(key) && !names_a_variable)
			pg_redactor_add(r, json_string_value(v));
		pg_redactor_add_shell(r, json_string_value(v), NULL, NULL);
	} else if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, item) collect_config_secrets(r, item, k);
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, item) collect_config_secrets(r, item, key);
	}
}

/* The names of the points this step runs, for the annotation's missing rows. */
static void keep_plan(struct step *st, const struct pg_plan *plan)
{
	for (size_t i = 0; i < plan->n; i++)
		pg_strv_push(&st->plan, plan->points[i].name);
	st->have_plan = true;
}

/* A run that never started (results directory not writable) is an
 * infrastructure failure of the step, noted in its annotation, not an error
 * that ends the step before it annotates. */
static int run_never_started(struct step *st, struct pg_error *err)
{
	pg_strv_push(&st->notes, err->msg);
	say(st, "perfgate: %s\n", err->msg);
	pg_error_clear(err);
	st->run_exit = PG_EXIT_INFRA;
	return 0;
}

/* What the step needs before it runs (pg_bk_check): an error ends it
 * before the GPU time; a warning is said and goes into the annotation.
 * gpu_key NULL: the results will say which GPU (merge and report steps). */
static int check_step(struct step *st, const struct pg_plan *plan, const char *gpu_key,
		      struct pg_error *err)
{
	struct pg_strv warnings = PG_STRV_INIT;
	int rc = pg_bk_check(&(struct pg_bk_check){ .c = &st->s,
						    .step = st->name,
						    .plan = plan,
						    .gpu_key = gpu_key,
						    .gpu_note = st->gpu.note,
						    .pr = &st->pr,
						    .env = st->env },
			     &warnings, err);

	for (size_t i = 0; i < warnings.n; i++) {
		say(st, "perfgate: warning: %s\n", warnings.v[i]);
		pg_strv_push(&st->notes, warnings.v[i]);
	}
	pg_strv_release(&warnings);
	return rc;
}

/* run and gate: the suite, narrowed to this step's selection and shard. */
static int run_step(struct step *st, struct pg_error *err)
{
	struct pg_suite suite = PG_SUITE_INIT;
	struct pg_plan plan = PG_PLAN_INIT;
	int rc;

	if ((rc = pg_bk_plan(&suite, &plan, &st->s, st->name, err)))
		goto done;
	pg_run_collect_secrets(&st->redact, &suite);
	/* the cheap checks first: a misspelt GPU fails before a dataset is
	 * fetched */
	if ((rc = resolve_gpu(st, suite.gpu, err)) || (rc = pg_bk_pr_check(&st->pr, &st->s, err)) ||
	    (rc = check_step(st, &plan, st->gpu.key, err)) ||
	    (rc = pg_bk_datasets(&plan, &st->s, st->log, err)))
		goto done;
	keep_plan(st, &plan);
	say(st, "--- perfgate: %zu test point%s on %s%s%s\n", plan.n, plan.n == 1 ? "" : "s",
	    st->gpu.label, st->s.shard ? ", shard " : "", st->s.shard ? st->s.shard : "");
	rc = pg_bk_run(&suite, &plan, st->s.results_dir, &st->gpu, st->log, &st->run_exit, err);
	if (rc)
		rc = run_never_started(st, err);
done:
	pg_plan_release(&plan);
	pg_suite_release(&suite);
	return rc;
}

/* baseline: ab: both sides on this agent, interleaved (runner/ab_io.c). */
static int ab_step(struct step *st, struct pg_error *err)
{
	struct pg_suite suite = PG_SUITE_INIT;
	struct pg_plan plan = PG_PLAN_INIT;
	struct pg_ab_run_opts o;
	int rc;

	if ((rc = pg_bk_plan(&suite, &plan, &st->s, st->name, err)))
		goto done;
	if (!suite.ab) {
		rc = pg_error_set(err, PG_ECONFIG,
				  "step '%s': baseline: ab needs the two sides: the 'ab' option or "
				  "an 'ab' section in the suite",
				  st->name);
		goto done;
	}
	pg_run_collect_secrets(&st->redact, &suite);
	/* the sides' commands, which the comparison shows */
	for (int i = 0; i < 2; i++) {
		const struct pg_ab_side_spec *sd = &suite.ab->side[i];
		if (sd->server_command)
			pg_redactor_add_shell(&st->redact, sd->server_command, NULL, NULL);
		if (sd->server_flags)
			pg_redactor_add_shell(&st->redact, sd->server_flags, NULL, NULL);
		if (sd->command)
			pg_redactor_add_shell(&st->redact, sd->command, NULL, NULL);
	}
	if ((rc = pg_ab_check(&suite, err)) || (rc = resolve_gpu(st, suite.gpu, err)) ||
	    (rc = check_step(st, &plan, st->gpu.key, err)) ||
	    (rc = pg_bk_datasets(&plan, &st->s, st->log, err)))
		goto done;
	keep_plan(st, &plan);
	say(st,
	    "--- perfgate: A/B on %s: %zu test point%s, base and head interleaved, at most %ld "
	    "blocks\n",
	    st->gpu.label, plan.n, plan.n == 1 ? "" : "s", suite.ab->max_blocks);
	memset(&o, 0, sizeof(o));
	o.results_dir = st->s.results_dir;
	o.gpu = &st->gpu;
	o.log = st->log;
	rc = pg_ab_run(&st->ab, &suite, &plan, &o, err);
	st->have_ab = true;
	if (rc)
		rc = run_never_started(st, err);
	else if (st->ab.cancel_signal)
		st->run_exit = 128 + st->ab.cancel_signal;
done:
	pg_plan_release(&plan);
	pg_suite_release(&suite);
	return rc;
}

/* merge: the shards' results, from the artifacts, into one set. */
static int merge_step(struct step *st, struct pg_error *err)
{
	struct pg_error merr = PG_ERROR_INIT;
	size_t shards = 0;
	int rc;

	/* with gpu: auto on an agent without one, the results say which */
	if ((rc = resolve_gpu(st, NULL, err)) ||
	    (rc = check_step(st, NULL, strcmp(st->gpu.key, "none") ? st->gpu.key : NULL, err)))
		return rc;
	if (pg_bk_merge(st->have_agent ? &st->agent : NULL, st->artifact_cwd, st->artifact_prefix,
			st->s.results_dir, &shards, st->log, &merr)) {
		pg_strv_push(&st->notes, merr.msg);
		say(st, "perfgate: %s\n", merr.msg);
		st->run_exit = PG_EXIT_INFRA;
	} else {
		say(st, "perfgate: merged the results of %zu shard%s\n", shards,
		    shards == 1 ? "" : "s");
	}
	return 0;
}

/* pipeline: generate the fan-out and hand it to the agent. */
static int pipeline_step(struct step *st, const json_t *config, struct pg_error *err)
{
	struct pg_suite suite = PG_SUITE_INIT;
	struct pg_plan plan = PG_PLAN_INIT;
	struct pg_buf yaml = PG_BUF_INIT;
	int rc;

	if ((rc = pg_bk_plan(&suite, &plan, &st->s, st->name, err)) ||
	    (rc = pg_bk_pipeline_yaml(&yaml, &suite, &st->s, config,
				      st->o ? st->o->plugin_source : NULL, st->env->job_id, err))) {
		rc = pg_error_exit_code(rc);
		goto done;
	}
	if (!st->env->in_buildkite || !st->have_agent) {
		if (st->env->in_buildkite)
			say(st, "perfgate: warning: no buildkite-agent to upload the pipeline\n");
		FILE *out = st->o && st->o->out ? st->o->out : stdout;
		fwrite(yaml.ptr, 1, yaml.len, out);
		fflush(out);
		rc = st->env->in_buildkite ? PG_EXIT_INFRA : PG_EXIT_OK;
		goto done;
	}
	{
		const char *args[] = { "pipeline", "upload", NULL };
		say(st, "--- perfgate: uploading the pipeline (%zu GPU%s x %ld shard%s)\n",
		    st->s.gpus.n, st->s.gpus.n == 1 ? "" : "s", st->s.shards,
		    st->s.shards == 1 ? "" : "s");
		if (pg_bkagent_exec(&st->agent, args, NULL, yaml.ptr, yaml.len, NULL, err)) {
			rc = PG_EXIT_INFRA;
			goto done;
		}
	}
	rc = PG_EXIT_OK;
done:
	pg_buf_release(&yaml);
	pg_plan_release(&plan);
	pg_suite_release(&suite);
	return rc;
}

int pg_buildkite_main(const struct pg_bkenv *env, const json_t *config, const struct pg_bk_opts *o,
		      struct pg_error *err)
{
	struct step st;
	int rc, exit_code = PG_EXIT_USAGE;

	memset(&st, 0, sizeof(st));
	/* a second's margin: a file system's coarse timestamps, and files
	 * this job writes in its first second */
	st.since = time(NULL) - 1;
	st.env = env;
	st.o = o;
	st.log = o && o->log ? o->log : stderr;
	st.name = step_label(env);
	pg_gpu_info_init(&st.gpu);
	pg_run_collect_secrets(&st.redact, NULL);
	collect_config_secrets(&st.redact, config, NULL);

	if ((rc = pg_plugin_config_parse(&st.s, config, st.name, err)))
		goto fail;
	if (skip_for_labels(&st)) {
		exit_code = PG_EXIT_OK;
		goto done;
	}
	if (env->in_buildkite) {
		struct pg_error aerr = PG_ERROR_INIT;
		st.have_agent = pg_bkagent_find(&st.agent, &aerr) == 0;
		if (!st.have_agent)
			say(&st, "perfgate: warning: %s\n", aerr.msg);
	}
	artifact_layout(&st);
	/* before anything of the pull request runs */
	if (st.s.mode != PG_MODE_PIPELINE)
		pg_bk_pr_pin(&st.pr, &st.s, env);

	switch (st.s.mode) {
	case PG_MODE_BINARY:
		/* bash's job: hooks/command packs the binary it found or built
		 * (plugin/lib.bash perfgate_bundle) before perfgate runs */
		rc = pg_error_set(
			err, PG_ECONFIG,
			"step '%s': mode 'binary' is the plugin hook's: hooks/command "
			"packs perfgate and uploads it as '%s' (perfgate buildkite --check "
			"validates the options)",
			st.name, st.s.binary_artifact);
		goto fail;
	case PG_MODE_PIPELINE:
		exit_code = pipeline_step(&st, config, err);
		goto done;
	case PG_MODE_REPORT:
		rc = resolve_gpu(&st, NULL, err);
		break;
	case PG_MODE_MERGE:
		rc = merge_step(&st, err);
		break;
	default:
		st.own_results = true;
		rc = st.s.baseline == PG_BASELINE_AB ? ab_step(&st, err) : run_step(&st, err);
		break;
	}
	if (rc)
		goto fail;
	exit_code = finish_step(&st);
	goto done;
fail:
	exit_code = pg_error_exit_code(rc);
done:
	pg_plugin_config_release(&st.s);
	pg_gpu_info_release(&st.gpu);
	pg_bkagent_release(&st.agent);
	pg_result_set_release(&st.results);
	pg_strv_release(&st.notes);
	pg_strv_release(&st.plan);
	pg_strv_release(&st.stale);
	pg_redactor_release(&st.redact);
	pg_bk_pr_release(&st.pr);
	pg_ab_summary_release(&st.ab);
	free(st.artifact_cwd);
	free(st.artifact_prefix);
	return exit_code;
}
