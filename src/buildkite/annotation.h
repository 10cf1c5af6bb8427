#ifndef PERFGATE_BUILDKITE_ANNOTATION_H
#define PERFGATE_BUILDKITE_ANNOTATION_H

#include <stdbool.h>
#include <stddef.h>

#include "gate/attention.h"

struct pg_buf;

/*
 * The Buildkite annotation of one GPU step, rendered from parts that other
 * modules produce (report tables, comparison, JSON section, charts). Pure:
 * the caller gathers the parts, this module decides layout, escaping and
 * size.
 *
 * Layout: a headline ("H100: 2 of 14 tests regressed (3 metrics)"), one line of facts
 * (step, baseline, commit), notes (errors), a pull request's change to its
 * thresholds (a diff, folded), the table of rows that need
 * attention (regressions first), the evidence (a short line per
 * regression, the whole account folded), a failing step's next steps
 * (run it again here, accept a new level), charts, the full report tables, the
 * comparison and the JSON section each in a <details> block, and links to
 * the artifacts.
 *
 * Size: Buildkite rejects bodies over 1 MiB. Rendering degrades step by step
 * until the body fits: the JSON section becomes a link to its artifact,
 * then the report and comparison tables do, then the attention table is
 * trimmed with a note saying how many rows were left out.
 *
 * Buildkite replaces at most 10 artifact:// references per annotation:
 * the footer's links to the report, comparison, JSON and trends come
 * first; then the evidence's files (each point's once, in the evidence's
 * order), keeping one for the first chart; then charts, at most 7. A file
 * beyond them is named, not linked. Outside Buildkite (local_dir) the
 * links are relative paths, and only the 7 charts are a limit.
 */

#define PG_ANNOTATION_MAX_BYTES         1048576u
#define PG_ANNOTATION_MAX_ARTIFACT_REFS 10u
#define PG_ANNOTATION_MAX_CHARTS        7u
#define PG_ANNOTATION_MAX_NOTES         20u

/* Worst first: the annotation's style and the step's outcome. */
enum pg_annotation_status {
	PG_ANNOTATION_PASS,       /* success: nothing regressed (improvements fine) */
	PG_ANNOTATION_WARNING,    /* warning: noisy/unconfirmed/p99/missing baseline */
	PG_ANNOTATION_REGRESSION, /* error: a confirmed regression, exit 1 */
	PG_ANNOTATION_ERROR,      /* error: tests failed to run, exit 3 */
};

/* "success", "warning", "error", "error": the --style value. */
const char *pg_annotation_style(enum pg_annotation_status status);
/* The style of an annotation: its status's, but a regression in a step
 * that does not fail on it (not_failing) is a warning: the colour says
 * what the step did. */
struct pg_annotation;
const char *pg_annotation_style_of(const struct pg_annotation *a);
/* "pass", "warning", "regression", "error": meta-data and logs. */
const char *pg_annotation_status_name(enum pg_annotation_status status);

/* One row of the attention table: a metric of a test point. */
struct pg_annotation_row {
	const char *test;     /* point name */
	const char *metric;   /* "Median TTFT (ms)" */
	double baseline;      /* display units; NAN: none */
	double current;       /* NAN: none */
	double delta_pct;     /* signed relative change in percent; NAN: none */
	double tolerance_pct; /* the threshold that decided the verdict, in percent
			       * (gate/attention.h pg_attention_threshold); NAN: none */
	enum pg_tone tone;    /* the change's colour: from the verdict, not the direction */
	const char *verdict;  /* "regressed", "noisy", "missing", ... */
	/* the change's 95% interval in percent, shown beside it (an A/B
	 * row's); has_interval false: none */
	bool has_interval;
	double lo_pct, hi_pct;
};

/* One regression's evidence (gate/compare.h pg_comparison_evidence_text)
 * and the files behind it. */
enum {
	PG_EVIDENCE_RESULT,       /* the point's result JSON */
	PG_EVIDENCE_LOG,          /* its server log */
	PG_EVIDENCE_RERUN_RESULT, /* the confirmation re-run's */
	PG_EVIDENCE_RERUN_LOG,
	PG_EVIDENCE_FILES
};
struct pg_annotation_evidence {
	/* markdown from the gate (names escaped): the row's whole account
	 * (pg_comparison_evidence_text), folded under the lines when there is
	 * a line; its one short line (pg_comparison_evidence_line), or NULL:
	 * the text is the line */
	const char *text;
	const char *point; /* a point's files are linked once, on its first line */
	const char *files[PG_EVIDENCE_FILES]; /* artifact paths as uploaded; NULL: none */
	const char *line;
};

/* What to do about a failing step (status PG_ANNOTATION_REGRESSION),
 * under its evidence: run it again on a machine of one's own, and how a
 * new level is accepted when the change is meant. */
enum pg_annotation_accept {
	PG_ACCEPT_NONE,       /* no line */
	PG_ACCEPT_THRESHOLDS, /* a reviewed `perfgate baseline update` of the file */
	PG_ACCEPT_HISTORY,    /* a git history: main's follows once the change persists */
	PG_ACCEPT_AB,         /* an A/B step: no baseline to update */
};
struct pg_annotation_next {
	const char *step; /* the step's key, else its label (--step); NULL: no
			   * reproduction line */
	/* a pull request's build: its number, base branch and a label the step
	 * runs on (only-on-labels), so the run here is taken for the same
	 * build; NULL when not */
	const char *pull_request, *base_branch, *label;
	/* the points that failed (--filter), or none: the whole step */
	const char *const *points;
	size_t n_points;
	/* mode: report: the step's command ran the benchmarks; then
	 * `perfgate gate results_dir` with the gate's baseline */
	bool report;
	const char *results_dir;
	const char *history_repo; /* a git baseline's repository, or NULL */
	enum pg_annotation_accept accept;
	const char *thresholds; /* PG_ACCEPT_THRESHOLDS: the file ("thresholds/H100.yml") */
};

struct pg_annotation_chart {
	const char *artifact_path; /* exactly as uploaded: "results/charts/x.svg" */
	const char *title;         /* alt text */
};

/* The parts of an annotation. Everything is borrowed; NULL means absent. */
struct pg_annotation {
	const char *gpu; /* "H100" */
	enum pg_annotation_status status;
	bool compared;   /* a baseline comparison was made */
	size_t n_tests;  /* test points in this step */
	size_t n_errors; /* points that failed to run */
	/* when compared: the comparison counted per test point, the headline
	 * `perfgate gate` prints too (gate/attention.h) */
	struct pg_gate_counts counts;
	/* what kept the step from judging, said in the headline ("no history
	 * yet: building it, 1 of 5 runs"): in place of the counts when nothing
	 * regressed or failed, after them otherwise; NULL: none */
	const char *headline_note;
	/* the step does not fail on a verdict (mode report or run): "report
	 * mode", "run mode"; a regression is then a warning-style annotation
	 * whose headline ends "— report mode: not failing the step". NULL: the
	 * step fails on a regression (gate, merge) */
	const char *not_failing;

	const char *const *facts; /* "step `:h100: perf`", "baseline: main @ 1a2b3c4" */
	size_t n_facts;
	const char *const *notes; /* error messages, one per line */
	size_t n_notes;

	/* a change the pull request makes to its thresholds file: a unified
	 * diff under a title, folded after the notes (long diffs are cut) */
	const char *policy_diff;
	const char *policy_diff_title;

	const struct pg_annotation_row *rows; /* regressions first, then warnings */
	size_t n_rows;

	/* the evidence of the regressions (the first PG_EVIDENCE_MAX of
	 * evidence_total), under the table */
	const struct pg_annotation_evidence *evidence;
	size_t n_evidence, evidence_total;

	/* a failing step's next steps (shown when status is
	 * PG_ANNOTATION_REGRESSION) */
	struct pg_annotation_next next;

	const struct pg_annotation_chart *charts; /* most important first */
	size_t n_charts;

	const char *report_md;     /* the report's tables (markdown) */
	const char *comparison_md; /* the full comparison table (markdown) */
	const char *json_section;  /* the records JSON (pd.read_json) */

	/* artifact paths as uploaded, for links; NULL: not uploaded */
	const char *report_artifact;     /* ".../benchmark_results.md" */
	const char *comparison_artifact; /* ".../comparison.md" */
	const char *json_artifact;       /* ".../benchmark_results.json" */
	const char *trends_artifact;     /* ".../trends/<gpu>/index.html" (plugin trends) */
	const char *job_url;             /* the job on the build page, or NULL */
	/* telemetry flags per point, shown under the headline (telemetry/series.h
	 * pg_telemetry_flags): "serving_x_qps_4: GPU 3 thermal throttling for 12 s,
	 * 412 preemptions" */
	const char *const *flags;
	size_t n_flags;

	/* Outside Buildkite the annotation is a file in the results directory,
	 * where no preview resolves artifact:// URLs: images and links are then
	 * paths relative to that file (artifact paths minus this directory
	 * prefix, "results"). NULL: artifact:// URLs, for Buildkite. */
	const char *local_dir;
};

/* How far rendering had to degrade to fit. */
enum pg_annotation_level {
	PG_ANNOTATION_FULL,          /* everything inline */
	PG_ANNOTATION_JSON_LINKED,   /* JSON section -> artifact link */
	PG_ANNOTATION_TABLES_LINKED, /* report and comparison -> artifact links */
	PG_ANNOTATION_ROWS_TRIMMED,  /* attention table cut to fit */
};

struct pg_annotation_result {
	enum pg_annotation_level level;
	size_t rows_shown; /* of a->n_rows */
	size_t charts_shown;
};

/*
 * Render the annotation into out (appended) so that it is at most
 * max_bytes long (PG_ANNOTATION_MAX_BYTES - 1 is Buildkite's; tests pass
 * less). Returns 0, or -1 when even the smallest form does not fit (only
 * with a max_bytes of a few kilobytes).
 */
int pg_annotation_render(struct pg_buf *out, const struct pg_annotation *a, size_t max_bytes,
			 struct pg_annotation_result *res);

/* The headline alone, without markup: "H100: 2 of 14 tests regressed (3
 * metrics)", the comparison's counts in pg_gate_counts_phrase's words. */
void pg_annotation_headline(struct pg_buf *out, const struct pg_annotation *a);

/* The rows as the annotation's table (header included; nothing when n is
 * 0), every cell escaped. */
void pg_annotation_table(struct pg_buf *out, const struct pg_annotation_row *rows, size_t n);

/* A fenced code block whose fence is longer than any backtick run in text,
 * so the content can never close it. */
void pg_md_fenced(struct pg_buf *out, const char *info, const char *text);

#endif
