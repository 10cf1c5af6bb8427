#ifndef PERFGATE_BASE_ESCAPE_H
#define PERFGATE_BASE_ESCAPE_H

#include <stddef.h>

struct pg_buf;

/*
 * Escaping for the text perfgate puts in front of people: Buildkite
 * annotations (CommonMark + GFM tables + a sanitised HTML subset) and SVG.
 * Every function appends to out and accepts any bytes: invalid UTF-8 and
 * control characters become U+FFFD (or a space for tab and newlines), so a
 * test name can never produce an invalid document.
 */

/*
 * One GFM table cell: the text reads the same but cannot end the cell
 * ('|'), start HTML ('<', '>', '&'), open a code span ('`'), escape the next
 * character ('\\'), start emphasis or a link ('*', '_', '[', ']', '~'), or
 * end the row (newline -> space). Markdown punctuation is backslash-escaped
 * (GFM splits rows only at unescaped pipes), HTML's with entities;
 * underscores inside words stay as they are (they cannot open emphasis).
 */
void pg_escape_md_cell(struct pg_buf *out, const char *s);

/* The same for running Markdown text outside tables (headlines, notes). */
#define pg_escape_md_text pg_escape_md_cell

/* The cell text of at most max_chars code points (0: no limit), cut with
 * "…" when longer. */
void pg_escape_md_cell_cut(struct pg_buf *out, const char *s, size_t max_chars);

/* s as a `code span`: shown literally, on one line; a backtick, which
 * would end the span, reads as "'". */
void pg_escape_md_code(struct pg_buf *out, const char *s);

/* A relative path as a Markdown link's or an href's target: every byte
 * but letters, digits, "-._~/" percent-encoded ("a b(1).json" ->
 * "a%20b%281%29.json"), so no name can end the link or the attribute. */
void pg_escape_url_path(struct pg_buf *out, const char *s);

/* HTML/XML text and attribute values: & < > " ' escaped (also for SVG). */
void pg_escape_html(struct pg_buf *out, const char *s);

/*
 * Markdown rendered elsewhere (report tables, comparison) made safe to
 * embed in an annotation: every '<' that does not start one of the few
 * inline tags perfgate's renderers emit (<span class="red|green|muted|
 * orange">, </span>, <code>, </code>, <br>) becomes &lt;, so a test name
 * cannot close a <details> block or open a tag of its own.
 */
void pg_md_neutralize_html(struct pg_buf *out, const char *md);

/* The length of the longest prefix of s that is at most max bytes and does
 * not cut a UTF-8 sequence. */
size_t pg_utf8_prefix(const char *s, size_t max);

#endif
