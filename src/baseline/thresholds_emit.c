#include "baseline/thresholds.h"

#include "base/buf.h"
#include "base/strutil.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Strings YAML 1.1 would read as something other than a string. */
static bool yaml_special(const char *s)
{
	static const char *const words[] = { "true", "false", "yes", "no", "on",   "off",
					     "null", "~",     "y",   "n",  ".inf", ".nan" };
	double d;

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcasecmp(s, words[i]))
			return true;
	return pg_parse_double(s, &d) == 0;
}

void pg_yaml_scalar(struct pg_buf *out, const char *s)
{
	bool plain = *s && !yaml_special(s) &&
		     (isalnum((unsigned char)*s) || *s == '/' || *s == '.') &&
		     s[strlen(s) - 1] != ' ';

	for (const char *p = s; plain && *p; p++)
		plain = isalnum((unsigned char)*p) || strchr("_./+-() ", *p) ||
			/* "file.md:55" reads back; "a: b" and "a #b" would not */
			(*p == ':' && p[1] && p[1] != ' ') || (*p == '#' && p[-1] != ' ');
	if (plain) {
		pg_buf_puts(out, s);
		return;
	}
	pg_buf_putc(out, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			pg_buf_printf(out, "\\%c", *p);
		else if (*p == '\n')
			pg_buf_puts(out, "\\n");
		else if (*p < 0x20 || *p == 0x7f)
			pg_buf_printf(out, "\\x%02x", *p);
		/* what YAML reads as a line break (NEL, LS, PS: folded to a
		 * space inside quotes), or refuses raw (C1 controls, a BOM,
		 * U+FFFE/FFFF), escaped so the string reads back the same */
		else if (p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F)
			pg_buf_printf(out, "\\x%02x", *++p);
		else if (p[0] == 0xE2 && p[1] == 0x80 && (p[2] == 0xA8 || p[2] == 0xA9)) {
			pg_buf_printf(out, "\\u20%02x", p[2] == 0xA8 ? 0x28 : 0x29);
			p += 2;
		} else if (p[0] == 0xEF && ((p[1] == 0xBB && p[2] == 0xBF) ||
					    (p[1] == 0xBF && (p[2] == 0xBE || p[2] == 0xBF)))) {
			pg_buf_printf(out, "\\u%04x",
				      0xF000u | ((unsigned)(p[1] & 0x3F) << 6) | (p[2] & 0x3Fu));
			p += 2;
		} else
			pg_buf_putc(out, (char)*p);
	}
	pg_buf_putc(out, '"');
}

void pg_thresholds_percent(struct pg_buf *out, double fraction)
{
	char tmp[64];
	/* ten significant digits hide the binary noise of x100 */
	snprintf(tmp, sizeof(tmp), "%.10g%%", fraction * 100);
	pg_buf_puts(out, tmp);
}

/* Significant digits of a value written for review: far more than any
 * measurement has, few enough to drop the binary noise of arithmetic
 * (0.9247 s as 924.6999999999999 ms, a median of two as 24.200000000000002). */
#define REVIEW_DIGITS 10

static void number(struct pg_buf *out, double v)
{
	char r[PG_FMT_DOUBLE_SIZE], rounded[40];

	if (isfinite(v)) {
		snprintf(rounded, sizeof(rounded), "%.*g", REVIEW_DIGITS, v);
		v = strtod(rounded, NULL);
	}
	pg_buf_puts(out, pg_fmt_repr(r, v));
}

/* s inside a comment line: every character YAML could take for a line
 * break (and other controls) becomes a space, so s cannot end the comment
 * (a GPU name or a command line given with a newline in it). */
static void comment_text(struct pg_buf *out, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	while (*u) {
		if (*u < 0x20 || *u == 0x7f) {
			pg_buf_putc(out, ' ');
			u++;
		} else if (u[0] == 0xC2 && u[1] == 0x85) {
			pg_buf_putc(out, ' ');
			u += 2;
		} else if (u[0] == 0xE2 && u[1] == 0x80 && (u[2] == 0xA8 || u[2] == 0xA9)) {
			pg_buf_putc(out, ' ');
			u += 3;
		} else {
			pg_buf_putc(out, (char)*u++);
		}
	}
}

void pg_thresholds_emit_header(struct pg_buf *out, const char *gpu, const char *regenerate)
{
	pg_buf_puts(out, "# perfgate thresholds for ");
	comment_text(out, gpu);
	pg_buf_puts(out, " GPUs: how results are judged (policy) and\n"
			 "# what they are compared with (baselines). Review changes like code.\n"
			 "#\n"
			 "# The baselines are generated. Refresh them with\n"
			 "#\n"
			 "#   ");
	comment_text(out, regenerate
				  ? regenerate
				  : "perfgate baseline update <this file> --from <results dir or "
				    "report>");
	pg_buf_puts(out, "\n"
			 "#\n"
			 "# which rewrites the baselines section only: the policy and these\n"
			 "# comments stay as you wrote them. See docs/gate.md.\n");
}

struct rule_cells {
	char gate[16], tol[32], floor[48], extra[96];
};

static void rule_cells(struct rule_cells *c, const struct pg_rule *r, const struct pg_metric *m,
		       double global_escalate)
{
	struct pg_buf b = PG_BUF_INIT;
	char f[PG_FMT_DOUBLE_SIZE];

	snprintf(c->gate, sizeof(c->gate), "gate: %s,", r->gate ? "true" : "false");
	pg_thresholds_percent(&b, r->tolerance);
	snprintf(c->tol, sizeof(c->tol), "tolerance: %s,", b.ptr);
	pg_fmt_g(f, r->floor);
	if (m->unit[0] && r->floor != 0)
		snprintf(c->floor, sizeof(c->floor), "floor: %s %s", f, m->unit);
	else
		snprintf(c->floor, sizeof(c->floor), "floor: %s", f);
	pg_buf_reset(&b);
	if (r->escalate > 0 && r->escalate != global_escalate) {
		pg_buf_puts(&b, "escalate: ");
		pg_thresholds_percent(&b, r->escalate);
	} else if (r->escalate == 0 && m->cls == PG_CLASS_TAIL && global_escalate > 0) {
		pg_buf_puts(&b, "escalate: 0");
	}
	if (!isnan(r->limit)) {
		pg_buf_printf(&b, "%s%s: ", b.len ? ", " : "",
			      m->direction == PG_HIGHER_IS_BETTER ? "min" : "max");
		if (!strcmp(m->unit, "%")) {
			pg_thresholds_percent(&b, r->limit / m->scale);
		} else {
			pg_buf_puts(&b, pg_fmt_g(f, r->limit));
			if (m->unit[0])
				pg_buf_printf(&b, " %s", m->unit);
		}
	}
	if (!r->certify && m->cls == PG_CLASS_TAIL)
		pg_buf_printf(&b, "%scertify: false", b.len ? ", " : "");
	snprintf(c->extra, sizeof(c->extra), "%s", b.ptr);
	pg_buf_release(&b);
}

void pg_thresholds_emit_policy(struct pg_buf *out, const struct pg_policy *p)
{
	size_t n, key_w = 0, gate_w = 0, tol_w = 0, floor_w = 0;
	const struct pg_metric *all = pg_metrics_all(&n);

	pg_buf_puts(out, "policy:\n");
	pg_buf_puts(
		out,
		"  # The share of clean builds the gate may fail, over every gated test\n"
		"  # point x metric of a step at once (docs/gate.md); a flagged regression\n"
		"  # must then reproduce on a re-run of its points and rerun_anchors others.\n");
	pg_buf_puts(out, "  step_false_alarm: ");
	pg_thresholds_percent(out, p->step_false_alarm);
	pg_buf_printf(out, "\n  rerun_anchors: %ld\n", p->rerun_anchors);
	pg_buf_puts(out,
		    "  # Git history baselines (compare --baseline git): the last history_window\n"
		    "  # jobs at or before the merge-base, from the last change point on; fewer\n"
		    "  # than min_history give insufficient-data, a pass with a warning.\n");
	pg_buf_printf(out, "  history_window: %ld\n  min_history: %ld\n", p->history_window,
		      p->min_history);
	pg_buf_puts(out,
		    "  # Baselines with no job-to-job spread to test against (thresholds files):\n"
		    "  # a tolerance widens to noise_sigmas x their recorded run-to-run noise.\n");
	pg_buf_printf(out, "  noise_sigmas: %.10g\n", p->noise_sigmas);
	pg_buf_puts(out, "  # Tail metrics (p90, p99) only warn, unless worse by more than this.\n"
			 "  escalate: ");
	pg_thresholds_percent(out, p->escalate);
	pg_buf_puts(out, "\n");
	pg_buf_puts(out,
		    "  # Per metric. gate: a confirmed regression fails the step (false: it\n"
		    "  # only warns). tolerance: the smallest change that counts, in the worse\n"
		    "  # direction. floor: smaller absolute changes count as unchanged.\n"
		    "  metrics:\n");

	for (size_t i = 0; i < n; i++) {
		struct pg_rule r;
		struct rule_cells c;
		if (all[i].direction == PG_NO_DIRECTION)
			continue;
		pg_policy_rule(p, NULL, NULL, &all[i], &r);
		rule_cells(&c, &r, &all[i], p->escalate);
		key_w = strlen(all[i].id) > key_w ? strlen(all[i].id) : key_w;
		gate_w = strlen(c.gate) > gate_w ? strlen(c.gate) : gate_w;
		tol_w = strlen(c.tol) > tol_w ? strlen(c.tol) : tol_w;
		floor_w = strlen(c.floor) > floor_w ? strlen(c.floor) : floor_w;
	}
	for (int suite = 0; suite < PG_SUITE_COUNT; suite++) {
		pg_buf_printf(out, "    # %s\n", pg_suite_kind_name((enum pg_suite_kind)suite));
		for (size_t i = 0; i < n; i++) {
			struct pg_rule r;
			struct rule_cells c;
			if ((int)all[i].suite != suite || all[i].direction == PG_NO_DIRECTION)
				continue;
			pg_policy_rule(p, NULL, NULL, &all[i], &r);
			rule_cells(&c, &r, &all[i], p->escalate);
			pg_buf_printf(out, "    %s:%*s { %-*s %-*s ", all[i].id,
				      (int)(key_w - strlen(all[i].id)), "", (int)gate_w, c.gate,
				      (int)tol_w, c.tol);
			if (c.extra[0])
				pg_buf_printf(out, "%s,%*s %s }\n", c.floor,
					      (int)(floor_w - strlen(c.floor)), "", c.extra);
			else
				pg_buf_printf(out, "%s }\n", c.floor);
		}
	}
	pg_buf_puts(out, "  # Per test point (a name or a glob; the test's name also matches) and\n"
			 "  # metric (\"*\": all); later entries win. For example:\n"
			 "  #   serving_*_qps_inf:\n"
			 "  #     median_ttft_ms: { tolerance: 6% }\n");
	if (!p->n_entries) {
		pg_buf_puts(out, "  tests: {}\n");
		return;
	}
	/* entries with a test pattern, as they were given */
	bool any = false;
	for (size_t i = 0; i < p->n_entries; i++)
		any |= p->entries[i].pattern != NULL;
	if (!any) {
		pg_buf_puts(out, "  tests: {}\n");
		return;
	}
	pg_buf_puts(out, "  tests:\n");
	/* a pattern's metrics are one mapping (a key given twice would not
	 * load): the entries of one pattern are consecutive, as its mapping
	 * gave them */
	const char *open_pattern = NULL;
	for (size_t i = 0; i < p->n_entries; i++) {
		const struct pg_policy_entry *e = &p->entries[i];
		if (!e->pattern)
			continue;
		if (!open_pattern || strcmp(open_pattern, e->pattern)) {
			pg_buf_puts(out, "    ");
			pg_yaml_scalar(out, e->pattern);
			pg_buf_puts(out, ":\n");
			open_pattern = e->pattern;
		}
		pg_buf_puts(out, "      ");
		pg_yaml_scalar(out, e->metric);
		pg_buf_puts(out, ": {");
		const char *sep = " ";
		if (e->patch.set & PG_RULE_GATE) {
			pg_buf_printf(out, "%sgate: %s", sep,
				      e->patch.rule.gate ? "true" : "false");
			sep = ", ";
		}
		if (e->patch.set & PG_RULE_TOLERANCE) {
			pg_buf_printf(out, "%stolerance: ", sep);
			pg_thresholds_percent(out, e->patch.rule.tolerance);
			sep = ", ";
		}
		if (e->patch.set & PG_RULE_FLOOR) {
			pg_buf_printf(out, "%sfloor: ", sep);
			number(out, e->patch.rule.floor);
			sep = ", ";
		}
		if (e->patch.set & PG_RULE_ESCALATE) {
			pg_buf_printf(out, "%sescalate: ", sep);
			pg_thresholds_percent(out, e->patch.rule.escalate);
			sep = ", ";
		}
		if (e->patch.set & PG_RULE_LIMIT) {
			const struct pg_metric *m = NULL;
			for (size_t k = 0; k < n && !m; k++)
				if (!strcmp(all[k].id, e->metric))
					m = &all[k];
			pg_buf_printf(out, "%s%s: ", sep,
				      m && m->direction == PG_HIGHER_IS_BETTER ? "min" : "max");
			if (m && !strcmp(m->unit, "%"))
				pg_thresholds_percent(out, e->patch.rule.limit / m->scale);
			else
				number(out, e->patch.rule.limit);
			if (m && m->unit[0] && strcmp(m->unit, "%"))
				pg_buf_printf(out, " %s", m->unit);
			sep = ", ";
		}
		if (e->patch.set & PG_RULE_CERTIFY) {
			pg_buf_printf(out, "%scertify: %s", sep,
				      e->patch.rule.certify ? "true" : "false");
			sep = ", ";
		}
		pg_buf_puts(out, " }\n");
	}
}

static void emit_qps(struct pg_buf *out, double qps)
{
	if (isinf(qps))
		pg_buf_puts(out, "inf");
	else if (qps == floor(qps) && qps < 1e15)
		pg_buf_printf(out, "%.0f", qps);
	else
		number(out, qps);
}

void pg_thresholds_emit_baselines(struct pg_buf *out, const struct pg_baseline *b)
{
	if (!b->n) {
		pg_buf_puts(out, "baselines: {}\n");
		return;
	}
	pg_buf_puts(out, "baselines:\n");
	for (size_t i = 0; i < b->n; i++) {
		const struct pg_base_point *p = &b->points[i];
		bool any_samples = false;
		size_t w = 0;

		pg_buf_puts(out, "  ");
		pg_yaml_scalar(out, p->name);
		pg_buf_printf(out, ":\n    suite: %s\n", pg_suite_kind_name(p->suite));
		if (p->test) {
			pg_buf_puts(out, "    test: ");
			pg_yaml_scalar(out, p->test);
			pg_buf_puts(out, "\n");
		}
		if (!isnan(p->qps)) {
			pg_buf_puts(out, "    qps: ");
			emit_qps(out, p->qps);
			pg_buf_puts(out, "\n");
		}
		if (p->max_concurrency > 0)
			pg_buf_printf(out, "    max_concurrency: %ld\n", p->max_concurrency);
		if (p->gpu) {
			pg_buf_puts(out, "    gpu: ");
			pg_yaml_scalar(out, p->gpu);
			pg_buf_puts(out, "\n");
		}
		if (p->source) {
			pg_buf_puts(out, "    source: ");
			pg_yaml_scalar(out, p->source);
			pg_buf_puts(out, "\n");
		}
		if (p->date) {
			pg_buf_puts(out, "    date: ");
			pg_yaml_scalar(out, p->date);
			pg_buf_puts(out, "\n");
		}
		if (p->commit) {
			pg_buf_puts(out, "    commit: ");
			pg_yaml_scalar(out, p->commit);
			pg_buf_puts(out, "\n");
		}
		pg_buf_printf(out, "    runs: %ld\n", p->runs);
		if (p->repeats > 1)
			pg_buf_printf(out, "    repeats: %ld\n", p->repeats);
		for (size_t k = 0; k < p->n_metrics; k++) {
			size_t l = strlen(p->metrics[k].metric->id);
			w = l > w ? l : w;
			any_samples |= p->metrics[k].n_samples > 1;
		}
		pg_buf_puts(out, "    values:\n");
		for (size_t k = 0; k < p->n_metrics; k++) {
			const struct pg_base_metric *m = &p->metrics[k];
			pg_buf_printf(out, "      %s:%*s ", m->metric->id,
				      (int)(w - strlen(m->metric->id)), "");
			number(out, m->value);
			pg_buf_puts(out, "\n");
		}
		if (!any_samples)
			continue;
		pg_buf_printf(out, "    # %s per metric\n",
			      p->runs > 1 ? "the median of each run" : "every repeat of the run");
		pg_buf_puts(out, "    samples:\n");
		for (size_t k = 0; k < p->n_metrics; k++) {
			const struct pg_base_metric *m = &p->metrics[k];
			if (m->n_samples < 2)
				continue;
			pg_buf_printf(out, "      %s:%*s [", m->metric->id,
				      (int)(w - strlen(m->metric->id)), "");
			for (size_t s = 0; s < m->n_samples; s++) {
				if (s)
					pg_buf_puts(out, ", ");
				number(out, m->samples[s]);
			}
			pg_buf_puts(out, "]\n");
		}
	}
}
