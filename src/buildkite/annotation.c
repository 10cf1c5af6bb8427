#include "buildkite/annotation.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/escape.h"
#include "base/strutil.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A note longer than this is cut: one stack trace must not crowd out the
 * table. */
#define NOTE_MAX_BYTES 400

const char *pg_annotation_style(enum pg_annotation_status status)
{
	switch (status) {
	case PG_ANNOTATION_PASS:
		return "success";
	case PG_ANNOTATION_WARNING:
		return "warning";
	case PG_ANNOTATION_REGRESSION:
	case PG_ANNOTATION_ERROR:
		return "error";
	}
	return "info";
}

const char *pg_annotation_status_name(enum pg_annotation_status status)
{
	switch (status) {
	case PG_ANNOTATION_PASS:
		return "pass";
	case PG_ANNOTATION_WARNING:
		return "warning";
	case PG_ANNOTATION_REGRESSION:
		return "regression";
	case PG_ANNOTATION_ERROR:
		return "error";
	}
	return "unknown";
}

const char *pg_annotation_style_of(const struct pg_annotation *a)
{
	if (a->status == PG_ANNOTATION_REGRESSION && a->not_failing)
		return pg_annotation_style(PG_ANNOTATION_WARNING);
	return pg_annotation_style(a->status);
}

static const char *plural(size_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

void pg_annotation_headline(struct pg_buf *out, const struct pg_annotation *a)
{
	const char *gpu = a->gpu && *a->gpu ? a->gpu : "GPU";
	size_t tests = a->n_tests;

	pg_buf_printf(out, "%s: ", gpu);
	if (a->compared && a->headline_note && !a->counts.regressed &&
	    !a->counts.whole_run_metrics && !a->counts.errors) {
		pg_buf_printf(out, "%s (%zu %s ran, none judged)", a->headline_note, tests,
			      plural(tests, "test", "tests"));
		return;
	}
	if (a->compared) {
		pg_gate_counts_phrase(out, &a->counts);
		if (a->headline_note)
			pg_buf_printf(out, " — %s", a->headline_note);
		if (a->status == PG_ANNOTATION_REGRESSION && a->not_failing)
			pg_buf_printf(out, " — %s: not failing the step", a->not_failing);
		return;
	}
	if (a->status == PG_ANNOTATION_ERROR && a->n_errors) {
		pg_buf_printf(out, "%zu of %zu %s failed to run", a->n_errors, tests,
			      plural(tests, "test", "tests"));
		return;
	}
	if (a->status == PG_ANNOTATION_ERROR) {
		pg_buf_puts(out, "the benchmark run failed");
		return;
	}
	pg_buf_printf(out, "%zu %s ran, no baseline comparison", tests,
		      plural(tests, "test", "tests"));
}

void pg_md_fenced(struct pg_buf *out, const char *info, const char *text)
{
	size_t longest = 0, run = 0, fence;
	size_t len = strlen(text);

	for (const char *p = text; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	fence = longest >= 3 ? longest + 1 : 3;
	pg_buf_pad(out, '`', fence);
	pg_buf_puts(out, info ? info : "");
	pg_buf_putc(out, '\n');
	pg_buf_add(out, text, len);
	if (len && text[len - 1] != '\n')
		pg_buf_putc(out, '\n');
	pg_buf_pad(out, '`', fence);
	pg_buf_putc(out, '\n');
}

/* the comparison tables' mark for "no value" (gate/compare_render.c) */
#define NO_VALUE "—"

static void put_number(struct pg_buf *out, double v)
{
	char num[PG_FMT_DOUBLE_SIZE];

	if (isnan(v))
		pg_buf_puts(out, NO_VALUE);
	else
		pg_buf_puts(out, pg_fmt_table(num, v));
}

static void put_row(struct pg_buf *out, const struct pg_annotation_row *r)
{
	pg_buf_puts(out, "| ");
	pg_escape_md_cell(out, r->test);
	pg_buf_puts(out, " | ");
	pg_escape_md_cell(out, r->metric);
	pg_buf_puts(out, " | ");
	put_number(out, r->baseline);
	pg_buf_puts(out, " | ");
	put_number(out, r->current);
	pg_buf_puts(out, " | ");
	if (isnan(r->delta_pct)) {
		pg_buf_puts(out, NO_VALUE);
	} else {
		/* Buildkite's annotation stylesheet colours these classes */
		const char *cls = r->tone == PG_TONE_BAD    ? "red"
				  : r->tone == PG_TONE_WARN ? "orange"
				  : r->tone == PG_TONE_GOOD ? "green"
							    : NULL;
		if (cls)
			pg_buf_printf(out, "<span class=\"%s\">", cls);
		char pct[PG_FMT_DOUBLE_SIZE];
		pg_buf_puts(out, pg_fmt_pct(pct, r->delta_pct / 100)); /* delta_pct: 100 x change */
		if (cls)
			pg_buf_puts(out, "</span>");
		if (r->has_interval && !isnan(r->lo_pct) && !isnan(r->hi_pct)) {
			/* escaped: a bracket in a table could start a link */
			pg_buf_printf(out, " \\[%s, ", pg_fmt_pct(pct, r->lo_pct / 100));
			pg_buf_printf(out, "%s\\]", pg_fmt_pct(pct, r->hi_pct / 100));
		}
	}
	pg_buf_puts(out, " | ");
	if (isnan(r->tolerance_pct))
		pg_buf_puts(out, NO_VALUE);
	else
		pg_buf_printf(out, "%.3g%%", r->tolerance_pct);
	pg_buf_puts(out, " | ");
	pg_escape_md_cell(out, r->verdict);
	pg_buf_puts(out, " |\n");
}

static const char table_head[] =
	"| Test | Metric | Baseline | Current | Change | Tolerance | Verdict |\n"
	"|:-----|:-------|---------:|--------:|-------:|----------:|:--------|\n";

/* The file's name without a link: the footer carries the one link to each
 * artifact, so degraded sections do not spend more of Buildkite's ten
 * artifact:// replacements. */
void pg_annotation_table(struct pg_buf *out, const struct pg_annotation_row *rows, size_t n)
{
	if (!n)
		return;
	pg_buf_puts(out, table_head);
	for (size_t i = 0; i < n; i++)
		put_row(out, &rows[i]);
}

static void put_artifact_name(struct pg_buf *out, const char *path)
{
	const char *slash = strrchr(path, '/');

	pg_buf_puts(out, "<code>");
	pg_escape_html(out, slash ? slash + 1 : path);
	pg_buf_puts(out, "</code>");
}

/* Where an artifact is, as an href or src: artifact://<path> in Buildkite,
 * else the path relative to the annotation file. */
static void put_artifact_url(struct pg_buf *out, const struct pg_annotation *a, const char *path)
{
	size_t n = a->local_dir ? strlen(a->local_dir) : 0;

	if (!a->local_dir) {
		pg_buf_puts(out, "artifact://");
		pg_escape_html(out, path);
	} else if (!strncmp(path, a->local_dir, n) && path[n] == '/') {
		pg_escape_html(out, path + n + 1);
	} else {
		pg_escape_html(out, path);
	}
}

static void put_artifact_link(struct pg_buf *out, const struct pg_annotation *a, const char *path)
{
	const char *slash = strrchr(path, '/');

	pg_buf_puts(out, "<a href=\"");
	put_artifact_url(out, a, path);
	pg_buf_puts(out, "\">");
	pg_escape_html(out, slash ? slash + 1 : path);
	pg_buf_puts(out, "</a>");
}

/* The thresholds change, folded: at most POLICY_DIFF_MAX_LINES lines (a
 * pull request could rewrite a whole file of baselines). */
#define POLICY_DIFF_MAX_LINES 120
static void render_policy_diff(struct pg_buf *out, const struct pg_annotation *a)
{
	struct pg_buf diff = PG_BUF_INIT, fenced = PG_BUF_INIT;
	const char *p = a->policy_diff;
	size_t lines = 0, more = 0;

	for (; *p; lines++) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);
		if (lines < POLICY_DIFF_MAX_LINES)
			pg_buf_add(&diff, p, len);
		else
			more++;
		p += len;
	}
	if (more)
		pg_buf_printf(&diff, "… %zu more lines\n", more);
	pg_md_fenced(&fenced, "diff", diff.ptr);
	pg_buf_puts(out, "<details>\n<summary>");
	pg_escape_html(out, a->policy_diff_title ? a->policy_diff_title : "Thresholds change");
	pg_buf_puts(out, "</summary>\n\n");
	pg_buf_add(out, fenced.ptr, fenced.len);
	if (fenced.len && fenced.ptr[fenced.len - 1] != '\n')
		pg_buf_putc(out, '\n');
	pg_buf_puts(out, "\n</details>\n\n");
	pg_buf_release(&diff);
	pg_buf_release(&fenced);
}

/* Head: headline, facts, notes. Never degraded (notes are capped). */
static void render_head(struct pg_buf *out, const struct pg_annotation *a)
{
	struct pg_buf line = PG_BUF_INIT;

	pg_annotation_headline(&line, a);
	pg_buf_puts(out, "#### ");
	pg_escape_md_text(out, line.ptr);
	pg_buf_puts(out, "\n\n");
	pg_buf_release(&line);

	/* what the machine did, next to the verdict it may explain */
	for (size_t i = 0; i < a->n_flags && i < PG_ANNOTATION_MAX_NOTES; i++) {
		size_t keep = pg_utf8_prefix(a->flags[i], NOTE_MAX_BYTES);
		char *cut = pg_xstrndup(a->flags[i], keep);

		pg_buf_puts(out, i ? "<br>\n" : "");
		pg_buf_puts(out, "⚠️ ");
		pg_escape_md_text(out, cut);
		free(cut);
	}
	if (a->n_flags > PG_ANNOTATION_MAX_NOTES)
		pg_buf_printf(out, "<br>\n⚠️ … and %zu more points",
			      a->n_flags - PG_ANNOTATION_MAX_NOTES);
	if (a->n_flags)
		pg_buf_puts(out, "\n\n");

	if (a->n_facts) {
		for (size_t i = 0; i < a->n_facts; i++) {
			if (i)
				pg_buf_puts(out, " · ");
			pg_escape_md_text(out, a->facts[i]);
		}
		pg_buf_puts(out, "\n\n");
	}
	for (size_t i = 0; i < a->n_notes && i < PG_ANNOTATION_MAX_NOTES; i++) {
		size_t keep = pg_utf8_prefix(a->notes[i], NOTE_MAX_BYTES);
		char *cut = pg_xstrndup(a->notes[i], keep);

		pg_buf_puts(out, "- ");
		pg_escape_md_text(out, cut);
		if (a->notes[i][keep])
			pg_buf_puts(out, " …");
		pg_buf_putc(out, '\n');
		free(cut);
	}
	if (a->n_notes > PG_ANNOTATION_MAX_NOTES)
		pg_buf_printf(out, "- … and %zu more\n", a->n_notes - PG_ANNOTATION_MAX_NOTES);
	if (a->n_notes)
		pg_buf_putc(out, '\n');
	if (a->policy_diff && *a->policy_diff)
		render_policy_diff(out, a);
}

/* Was the evidence line i the first of its point (its files linked there)? */
static bool first_of_point(const struct pg_annotation *a, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (a->evidence[k].point && a->evidence[i].point &&
		    !strcmp(a->evidence[k].point, a->evidence[i].point))
			return false;
	return true;
}

/* artifact:// references the footer spends, and how many the evidence's
 * files may (keeping one for the first chart when there is one); no limit
 * outside Buildkite. */
static size_t footer_refs(const struct pg_annotation *a)
{
	return (a->report_artifact != NULL) + (a->comparison_artifact != NULL) +
	       (a->json_artifact != NULL) + (a->trends_artifact != NULL);
}

static size_t evidence_ref_budget(const struct pg_annotation *a)
{
	size_t left = PG_ANNOTATION_MAX_ARTIFACT_REFS - footer_refs(a), keep = a->n_charts ? 1 : 0;

	if (a->local_dir)
		return SIZE_MAX;
	return left > keep ? left - keep : 0;
}

static const char *const evidence_file_names[PG_EVIDENCE_FILES] = { "result", "server log",
								    "re-run's result",
								    "re-run's server log" };

/* The regressions' evidence, each line with its point's files: linked
 * while *refs lasts (counted down), else named. */
/* A path Buildkite's artifact:// rewrite and a browser read the same way:
 * no white space, '#', '%', quote or control byte; other names are named,
 * not linked. */
/* s is not empty and holds only ASCII letters, digits and bytes of punct. */
static bool plain_bytes(const char *s, const char *punct)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr(punct, *p)))
			return false;
	return *s != '\0';
}

static bool link_safe(const char *path)
{
	return plain_bytes(path, "._~/-");
}

/* An evidence line in the annotation: the names and the basis in it come
 * from the results and the thresholds file, which a pull request writes;
 * at most this many bytes of it (comparison.md has it whole), so twenty
 * lines always fit in the 1 MiB the table is trimmed to. */
#define EVIDENCE_LINE_MAX 1000

/* An evidence line's markdown, neutralised, cut at EVIDENCE_LINE_MAX. */
static void put_evidence_text(struct pg_buf *out, const char *text)
{
	if (strlen(text) > EVIDENCE_LINE_MAX) {
		char *cut = pg_xstrndup(text, pg_utf8_prefix(text, EVIDENCE_LINE_MAX));
		pg_md_neutralize_html(out, cut);
		pg_buf_puts(out, "… (cut here: the comparison has the whole line)");
		free(cut);
	} else {
		pg_md_neutralize_html(out, text);
	}
}

/* A line per regression (its files linked once per point), then how each
 * was decided, folded: the lines are what a reviewer reads first. */
static void render_evidence(struct pg_buf *out, const struct pg_annotation *a, size_t *refs)
{
	bool folded = false;

	if (!a->n_evidence)
		return;
	pg_buf_puts(out, "**Evidence**\n\n");
	for (size_t i = 0; i < a->n_evidence; i++) {
		const struct pg_annotation_evidence *e = &a->evidence[i];
		bool any = false, named = false;

		pg_buf_puts(out, "- ");
		put_evidence_text(out, e->line ? e->line : e->text);
		folded |= e->line && e->text;
		for (size_t k = 0; k < PG_EVIDENCE_FILES && first_of_point(a, i); k++) {
			if (!e->files[k])
				continue;
			pg_buf_puts(out, any ? " · " : " Files: ");
			any = true;
			if (*refs && link_safe(e->files[k])) {
				if (*refs != SIZE_MAX)
					(*refs)--;
				pg_buf_puts(out, "<a href=\"");
				put_artifact_url(out, a, e->files[k]);
				pg_buf_printf(out, "\">%s</a>", evidence_file_names[k]);
			} else {
				pg_buf_printf(out, "%s ", evidence_file_names[k]);
				put_artifact_name(out, e->files[k]);
				named = true;
			}
		}
		if (named)
			pg_buf_puts(out, " (in the artifacts)");
		pg_buf_putc(out, '\n');
	}
	if (a->evidence_total > a->n_evidence)
		pg_buf_printf(out, "- and %zu more (the comparison lists every row).\n",
			      a->evidence_total - a->n_evidence);
	pg_buf_putc(out, '\n');
	if (!folded)
		return;
	pg_buf_puts(out, "<details>\n<summary>How each was decided</summary>\n\n");
	for (size_t i = 0; i < a->n_evidence; i++) {
		if (!a->evidence[i].line || !a->evidence[i].text)
			continue;
		pg_buf_puts(out, "- ");
		put_evidence_text(out, a->evidence[i].text);
		pg_buf_putc(out, '\n');
	}
	pg_buf_puts(out, "\n</details>\n\n");
}

/* A word for a shell command in a code span: as it is when plain, else in
 * single quotes. */
static void shell_word(struct pg_buf *out, const char *s)
{
	if (plain_bytes(s, "._/:=+,@%-")) {
		pg_buf_puts(out, s);
		return;
	}
	pg_buf_putc(out, '\'');
	for (const char *p = s; *p; p++)
		if (*p == '\'')
			pg_buf_puts(out, "'\\''");
		else
			pg_buf_putc(out, *p);
	pg_buf_putc(out, '\'');
}

/* Points the --filter names at most: more, and the whole step runs. */
#define NEXT_FILTER_POINTS 8

/* '^(a|b)$' matching the points: a byte other than a letter, a digit, '_'
 * or '-' is '.' (any byte), so no name needs quoting or escaping and each
 * still matches itself. */
static void filter_regex(struct pg_buf *out, const struct pg_annotation_next *n)
{
	pg_buf_puts(out, "'^(");
	for (size_t i = 0; i < n->n_points; i++) {
		if (i)
			pg_buf_putc(out, '|');
		for (const unsigned char *p = (const unsigned char *)n->points[i]; *p; p++)
			pg_buf_putc(out, (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
							 (*p >= '0' && *p <= '9') || *p == '_' ||
							 *p == '-'
						 ? (char)*p
						 : '.');
	}
	pg_buf_puts(out, ")$'");
}

/* The command that runs the step again, as it ran here. */
static void next_command(struct pg_buf *cmd, const struct pg_annotation_next *n)
{
	bool filter = n->n_points && n->n_points <= NEXT_FILTER_POINTS;

	if (n->report) {
		pg_buf_puts(cmd, "perfgate gate ");
		shell_word(cmd, n->results_dir ? n->results_dir : "results");
		if (n->accept == PG_ACCEPT_HISTORY) {
			pg_buf_puts(cmd, " --baseline git");
			if (n->history_repo) {
				pg_buf_puts(cmd, " --repo ");
				shell_word(cmd, n->history_repo);
			}
		} else if (n->thresholds) {
			pg_buf_puts(cmd, " --thresholds ");
			shell_word(cmd, n->thresholds);
		}
		return;
	}
	if (n->pull_request) {
		pg_buf_puts(cmd, "BUILDKITE_PULL_REQUEST=");
		shell_word(cmd, n->pull_request);
		if (n->base_branch) {
			pg_buf_puts(cmd, " BUILDKITE_PULL_REQUEST_BASE_BRANCH=");
			shell_word(cmd, n->base_branch);
		}
		if (n->label) {
			pg_buf_puts(cmd, " BUILDKITE_PULL_REQUEST_LABELS=");
			shell_word(cmd, n->label);
		}
		pg_buf_putc(cmd, ' ');
	}
	pg_buf_puts(cmd, "perfgate buildkite --pipeline PIPELINE.yml --step ");
	shell_word(cmd, n->step);
	if (filter) {
		pg_buf_puts(cmd, " --filter ");
		filter_regex(cmd, n);
	}
}

/* A failing step's next steps: run it again on a machine of one's own,
 * and how a new level is accepted when it is meant. */
static void render_next(struct pg_buf *out, const struct pg_annotation *a)
{
	const struct pg_annotation_next *n = &a->next;
	struct pg_buf cmd = PG_BUF_INIT;

	if (a->status != PG_ANNOTATION_REGRESSION || (!n->step && n->accept == PG_ACCEPT_NONE))
		return;
	pg_buf_puts(out, "**Next**\n\n");
	if (n->step) {
		next_command(&cmd, n);
		if (n->report) {
			pg_buf_puts(out,
				    "- Run it again: the step's command on a GPU machine, then ");
			pg_escape_md_code(out, cmd.ptr);
			pg_buf_puts(out, ".\n");
		} else {
			struct pg_buf file = PG_BUF_INIT;
			pg_buf_printf(&file, "%s/annotation.md",
				      n->results_dir ? n->results_dir : "results");
			pg_buf_puts(out, "- Run it again on a GPU machine, in a checkout of this "
					 "commit: ");
			pg_escape_md_code(out, cmd.ptr);
			pg_buf_printf(
				out,
				" (PIPELINE.yml: the file that defines this step). It runs %s "
				"as this job did and writes this annotation to ",
				n->n_points && n->n_points <= NEXT_FILTER_POINTS
					? "the points that failed"
					: "the step's points");
			pg_escape_md_code(out, file.ptr);
			pg_buf_puts(out, ", posting nothing (docs/pipelines.md, \"A step on your "
					 "machine\").\n");
			pg_buf_release(&file);
		}
	}
	switch (n->accept) {
	case PG_ACCEPT_THRESHOLDS:
		pg_buf_puts(out, "- If the new level is meant: update ");
		pg_escape_md_code(out, n->thresholds ? n->thresholds : "thresholds/<GPU>.yml");
		pg_buf_puts(out, " from main's runs in a pull request and have it reviewed: ");
		pg_buf_reset(&cmd);
		pg_buf_puts(&cmd, "perfgate baseline update ");
		shell_word(&cmd, n->thresholds ? n->thresholds : "thresholds");
		pg_buf_puts(&cmd, " --from RUN1 --from RUN2 --from RUN3");
		pg_escape_md_code(out, cmd.ptr);
		pg_buf_puts(out, ", each RUN the results of a run of main (docs/gate.md, "
				 "\"Thresholds files\").\n");
		break;
	case PG_ACCEPT_HISTORY:
		pg_buf_puts(out, "- If the new level is meant: nothing to update; main's history "
				 "follows once it persists (docs/gate.md).\n");
		break;
	case PG_ACCEPT_AB:
		pg_buf_puts(out,
			    "- If the change is meant: an A/B step compares this pull request "
			    "with its base, not with a baseline, so nothing to update; say so in "
			    "the review. Main's history follows once it persists "
			    "(docs/gate.md).\n");
		break;
	case PG_ACCEPT_NONE:
		break;
	}
	pg_buf_putc(out, '\n');
	pg_buf_release(&cmd);
}

static void render_charts(struct pg_buf *out, const struct pg_annotation *a, size_t refs,
			  size_t *shown)
{
	size_t n = a->n_charts < PG_ANNOTATION_MAX_CHARTS ? a->n_charts : PG_ANNOTATION_MAX_CHARTS;

	if (!a->local_dir && n > refs)
		n = refs;

	*shown = n;
	if (!n)
		return;
	/* folded, so the tables come first; the summary names the first
	 * figure (the one with regressions, when any) */
	pg_buf_printf(out, "<details>\n<summary>Charts (%zu): ", a->n_charts);
	pg_escape_html(out, a->charts[0].title);
	if (a->n_charts > 1)
		pg_buf_printf(out, " and %zu more", a->n_charts - 1);
	pg_buf_puts(out, "</summary>\n\n");
	for (size_t i = 0; i < n; i++) {
		pg_buf_puts(out, "<img src=\"");
		put_artifact_url(out, a, a->charts[i].artifact_path);
		pg_buf_puts(out, "\" alt=\"");
		pg_escape_html(out, a->charts[i].title);
		pg_buf_puts(out, "\">\n");
	}
	if (a->n_charts > n)
		pg_buf_printf(out, "\n%zu more %s in the artifacts.\n", a->n_charts - n,
			      plural(a->n_charts - n, "chart", "charts"));
	pg_buf_puts(out, "\n</details>\n\n");
}

/* A <details> block holding markdown; blank lines around the content let
 * CommonMark render tables inside the HTML block. */
static void render_details(struct pg_buf *out, const char *summary, const char *md, bool trusted)
{
	size_t len = strlen(md);

	pg_buf_puts(out, "<details>\n<summary>");
	pg_escape_html(out, summary);
	pg_buf_puts(out, "</summary>\n\n");
	if (trusted)
		pg_buf_add(out, md, len);
	else
		pg_md_neutralize_html(out, md);
	if (len && md[len - 1] != '\n')
		pg_buf_putc(out, '\n');
	pg_buf_puts(out, "\n</details>\n\n");
}

static void render_linked(struct pg_buf *out, const char *what, const char *artifact)
{
	pg_buf_printf(out, "%s is too large for an annotation", what);
	if (artifact) {
		pg_buf_puts(out, ": it is in ");
		put_artifact_name(out, artifact);
		pg_buf_puts(out, " in the artifacts");
	} else {
		pg_buf_puts(out, " and was left out");
	}
	pg_buf_puts(out, ".\n\n");
}

static void render_sections(struct pg_buf *out, const struct pg_annotation *a,
			    enum pg_annotation_level level)
{
	if (a->report_md && *a->report_md) {
		if (level >= PG_ANNOTATION_TABLES_LINKED)
			render_linked(out, "The full report", a->report_artifact);
		else
			render_details(out, "Full report", a->report_md, false);
	}
	if (a->comparison_md && *a->comparison_md) {
		if (level >= PG_ANNOTATION_TABLES_LINKED)
			render_linked(out, "The comparison with the baseline",
				      a->comparison_artifact);
		else
			render_details(out, "Comparison with the baseline", a->comparison_md,
				       false);
	}
	if (a->json_section && *a->json_section) {
		if (level >= PG_ANNOTATION_JSON_LINKED) {
			render_linked(out, "The JSON section", a->json_artifact);
		} else {
			struct pg_buf fenced = PG_BUF_INIT;
			pg_md_fenced(&fenced, "json", a->json_section);
			/* a fence shows its content literally: nothing to neutralise */
			render_details(out, "JSON (pandas.read_json)", fenced.ptr, true);
			pg_buf_release(&fenced);
		}
	}
}

static void render_footer(struct pg_buf *out, const struct pg_annotation *a)
{
	const char *links[] = { a->report_artifact, a->comparison_artifact, a->json_artifact };
	bool any = false;

	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		if (!links[i])
			continue;
		pg_buf_puts(out, any ? " · " : "Artifacts: ");
		put_artifact_link(out, a, links[i]);
		any = true;
	}
	if (a->trends_artifact) {
		pg_buf_puts(out, any ? " · " : "Artifacts: ");
		pg_buf_puts(out, "<a href=\"");
		put_artifact_url(out, a, a->trends_artifact);
		pg_buf_puts(out, "\">trends</a>");
		any = true;
	}
	if (a->job_url) {
		pg_buf_puts(out, any ? " · " : "Artifacts: ");
		pg_buf_puts(out, "<a href=\"");
		pg_escape_html(out, a->job_url);
		pg_buf_puts(out, "\">all files of this job</a>");
		any = true;
	}
	if (any)
		pg_buf_putc(out, '\n');
}

/* The attention rows, rendered once: row i is text[end[i-1] .. end[i]). */
struct rendered_rows {
	struct pg_buf text;
	size_t *end;
};

static void rows_render(struct rendered_rows *rr, const struct pg_annotation *a)
{
	pg_buf_init(&rr->text);
	rr->end = pg_xcalloc(a->n_rows + 1, sizeof(*rr->end));
	for (size_t i = 0; i < a->n_rows; i++) {
		put_row(&rr->text, &a->rows[i]);
		rr->end[i] = rr->text.len;
	}
}

/*
 * The whole body at one level with the first `rows` attention rows. The
 * table rows are the only part that grows with the number of tests once
 * the sections are linked, so trimming them always converges.
 */
static void render_at(struct pg_buf *out, const struct pg_annotation *a,
		      const struct rendered_rows *rr, enum pg_annotation_level level, size_t rows,
		      size_t *charts_shown)
{
	render_head(out, a);
	if (rows) {
		pg_buf_puts(out, table_head);
		pg_buf_add(out, rr->text.ptr, rr->end[rows - 1]);
		pg_buf_putc(out, '\n');
	}
	if (rows < a->n_rows) {
		size_t left = a->n_rows - rows;
		pg_buf_printf(out, "%zu more %s left out to keep this annotation under 1 MiB", left,
			      plural(left, "row was", "rows were"));
		if (a->comparison_artifact) {
			pg_buf_puts(out, ": all rows are in ");
			put_artifact_name(out, a->comparison_artifact);
			pg_buf_puts(out, " in the artifacts");
		}
		pg_buf_puts(out, ".\n\n");
	}
	{
		size_t budget = evidence_ref_budget(a), refs = budget;
		render_evidence(out, a, &refs);
		render_next(out, a);
		/* the charts get what the footer and the evidence left */
		render_charts(out, a,
			      a->local_dir ? SIZE_MAX
					   : PG_ANNOTATION_MAX_ARTIFACT_REFS - footer_refs(a) -
						     (budget - refs),
			      charts_shown);
	}
	render_sections(out, a, level);
	render_footer(out, a);
}

int pg_annotation_render(struct pg_buf *out, const struct pg_annotation *a, size_t max_bytes,
			 struct pg_annotation_result *res)
{
	struct pg_buf body = PG_BUF_INIT;
	struct rendered_rows rr;
	size_t charts = 0, lo, hi;
	int ret = -1;

	rows_render(&rr, a);
	for (int level = PG_ANNOTATION_FULL; level <= PG_ANNOTATION_TABLES_LINKED; level++) {
		pg_buf_reset(&body);
		render_at(&body, a, &rr, level, a->n_rows, &charts);
		if (body.len <= max_bytes) {
			res->level = level;
			res->rows_shown = a->n_rows;
			goto fits;
		}
	}

	/* Trim rows: the largest count that fits, by bisection (rows are
	 * pre-rendered, so each try is a copy). */
	pg_buf_reset(&body);
	render_at(&body, a, &rr, PG_ANNOTATION_TABLES_LINKED, 0, &charts);
	if (body.len > max_bytes)
		goto done;
	lo = 0;
	hi = a->n_rows;
	while (lo < hi) {
		size_t mid = lo + (hi - lo + 1) / 2;
		pg_buf_reset(&body);
		render_at(&body, a, &rr, PG_ANNOTATION_TABLES_LINKED, mid, &charts);
		if (body.len <= max_bytes)
			lo = mid;
		else
			hi = mid - 1;
	}
	pg_buf_reset(&body);
	render_at(&body, a, &rr, PG_ANNOTATION_TABLES_LINKED, lo, &charts);
	res->level = PG_ANNOTATION_ROWS_TRIMMED;
	res->rows_shown = lo;
fits:
	res->charts_shown = charts;
	pg_buf_add(out, body.ptr, body.len);
	ret = 0;
done:
	pg_buf_release(&body);
	pg_buf_release(&rr.text);
	free(rr.end);
	return ret;
}
