#ifndef PERFGATE_BASELINE_HISTORY_CHECK_H
#define PERFGATE_BASELINE_HISTORY_CHECK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct pg_buf;
struct pg_cmp_point;
struct pg_error;

/*
 * The health of a history file (<gpu>/<point>.jsonl, baseline/history.h):
 * which lines this perfgate can use, which are broken, which a newer
 * perfgate wrote, and which a later record of the same build replaced.
 * Pure: the record path (a retry replaces), perfgate baseline check and
 * repair, and the reader share these rules.
 */

/* The format this perfgate writes ("format": 1) and reads (lines without
 * the key are format 1 too: they predate it). */
#define PG_HISTORY_FORMAT 1

enum pg_hline_kind {
	PG_HLINE_OK,
	PG_HLINE_UNREADABLE, /* not JSON, or JSON that is not a history record */
	PG_HLINE_NEWER,      /* a record in a format this perfgate does not read */
	PG_HLINE_DUPLICATE,  /* a later record of the same build replaces it */
};

/*
 * The next line of a history file's text from *off (advanced past it):
 * its start and length without the newline and trailing blanks, and its
 * number (*line, 1-based, counting blank lines). Blank lines are skipped;
 * false at the end.
 */
bool pg_history_next_line(const char *text, size_t len, size_t *off, int *line, const char **start,
			  size_t *l);

/* What a JSON value is, for messages: "a string", "an object", "null"... */
const char *pg_history_json_kind(const json_t *v);

/* "unreadable", "newer format", "duplicate". */
const char *pg_hline_kind_name(enum pg_hline_kind k);

/*
 * Classify one parsed line (o is NULL when it is not JSON at all). why
 * (size bytes) says what is wrong when the answer is not PG_HLINE_OK:
 * "not a perfgate history record (no \"metrics\")", "metrics.output_throughput
 * is an object, not a list of numbers (written by a newer perfgate?)".
 * Never returns PG_HLINE_DUPLICATE: that takes the whole file.
 */
enum pg_hline_kind pg_history_classify(const json_t *o, char *why, size_t size);

/* pg_history_classify, or pg_history_ab_classify for A/B lines */
typedef enum pg_hline_kind (*pg_hline_classify_fn)(const json_t *o, char *why, size_t size);

/*
 * Every line of a history file's text, parsed and checked: take(ctx, o,
 * line, err) for each record classify accepts (o borrowed), in order. The
 * first line that is not one is PG_EINFRA naming source, line and why
 * ("H100/x.jsonl:3: a newer-format A/B history line: ..."), never a
 * record silently left out; what names the history in it: "" or "A/B ".
 * Returns 0, or the first error (take's own too).
 */
int pg_history_parse_lines(const char *text, size_t len, const char *source,
			   pg_hline_classify_fn classify, const char *what,
			   int (*take)(void *ctx, const json_t *o, int line, struct pg_error *err),
			   void *ctx, struct pg_error *err);

/*
 * Do two records describe the same run of a point? The same build (equal
 * build_url), or, both without a build, the same commit and the same
 * measurements (the same results recorded twice by hand).
 */
bool pg_history_same_run(const json_t *a, const json_t *b);

/* One line of a file that is not PG_HLINE_OK. */
struct pg_hline {
	int line; /* 1-based */
	enum pg_hline_kind kind;
	char *why;  /* for duplicates: "build <url> is recorded again on line N" */
	char *text; /* the line as it is (without its newline) */
};

struct pg_history_scan {
	struct pg_hline *bad; /* in line order */
	size_t n_bad, cap;
	size_t records;    /* lines that are records this perfgate reads (OK and duplicates) */
	size_t dropped;    /* lines a repair drops: unreadable and duplicates */
	size_t kept_newer; /* newer-format lines a repair keeps */
};

/*
 * Scan a file's text. repaired (may be NULL) gets the text a repair
 * writes: every line but the unreadable ones and the duplicates (the last
 * record of a build is kept, as a retried job replaces its first record),
 * newer-format lines kept as they are, one '\n' after each line.
 */
void pg_history_scan(struct pg_history_scan *out, const char *text, size_t len,
		     struct pg_buf *repaired);
/* The same for an A/B file (<gpu>/ab/<point>.jsonl, baseline/history_ab.h),
 * whose lines pg_history_ab_classify judges. */
void pg_history_scan_ab(struct pg_history_scan *out, const char *text, size_t len,
			struct pg_buf *repaired);
void pg_history_scan_release(struct pg_history_scan *s);

/*
 * The text of a file with `line` (a record, one JSON line, no newline)
 * added: every earlier record of the same run (pg_history_same_run) is
 * removed, so a retried job replaces its record instead of adding one.
 * Returns how many were replaced, or -1 when text has an unreadable line
 * (*bad_line gets its number, why its problem): records are not appended
 * after a broken line, which only a repair may drop.
 */
int pg_history_append(struct pg_buf *out, const char *text, size_t len, const char *line,
		      int *bad_line, char *why, size_t size);

/* The same for an A/B file: a retried A/B job replaces its line. */
int pg_history_append_ab(struct pg_buf *out, const char *text, size_t len, const char *line,
			 int *bad_line, char *why, size_t size);

/*
 * May this point of a run become a baseline? Only a point that ran to the
 * end: status ok, not an SLA-search probe, nothing failed
 * (pg_result_json_incomplete). why (may be NULL) gets the reason when not:
 * "status error", "incomplete: 32 of 64 requests failed".
 */
bool pg_history_point_recordable(const struct pg_cmp_point *p, struct pg_buf *why);

#endif
