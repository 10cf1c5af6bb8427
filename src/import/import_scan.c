/*
 * JSON inside text: a Markdown or Jekyll page with the records in fenced
 * or {% highlight %} blocks, a job log with a record on a line of its own
 * (llm-d's "<<<RESULT_START>>>" lines, `cat result.json`), a tool's stdout
 * with noise before its export, benchmark_results.md with its report
 * sections.
 *
 * Candidates are the first '{' and the first '[' of every line, and every
 * '{' that opens a report section ('{' then "latency"). A candidate that
 * parses as JSON holding results (pg_import_is_results) is read as a JSON
 * file would be, errors included; other JSON (configuration, a prompt) is
 * stepped over whole; text that does not parse is text. A report section
 * that does not parse is an error: it is a report gone wrong, not prose.
 */
#include "import/import_impl.h"

#include <ctype.h>
#include <string.h>

/* Whether the '{' at i opens a report section: '{' then "latency". */
static bool report_section(const char *t, size_t len, size_t i)
{
	size_t j = i + 1;

	while (j < len && isspace((unsigned char)t[j]))
		j++;
	return j + 9 <= len && !memcmp(t + j, "\"latency\"", 9);
}

/* The next candidate at or after `from` on the line [from, eol). */
static size_t next_candidate(const char *t, size_t len, size_t from, size_t eol, bool *first_brace,
			     bool *first_bracket)
{
	for (size_t i = from; i < eol; i++) {
		if (t[i] == '{') {
			if (*first_brace || report_section(t, len, i)) {
				*first_brace = false;
				return i;
			}
		} else if (t[i] == '[' && *first_bracket) {
			*first_bracket = false;
			return i;
		}
	}
	return eol;
}

int pg_import_embedded(struct pg_import_ctx *ctx)
{
	struct pg_lenient_json lj;
	size_t off = 0, skip_to = 0, reports = 0;
	int ret = 0;

	/* one pass of the NaN/Infinity rewrite for the whole text: a
	 * candidate that fails costs its own length, not the file's */
	pg_lenient_json_init(&lj, ctx->text, ctx->len);
	while (off < lj.len && ret == 0) {
		const char *nl = memchr(lj.text + off, '\n', lj.len - off);
		size_t eol = nl ? (size_t)(nl - lj.text) : lj.len;
		bool first_brace = true, first_bracket = true;
		size_t at = off > skip_to ? off : skip_to;

		while (ret == 0 && at < eol) {
			size_t c = next_candidate(lj.text, lj.len, at, eol, &first_brace,
						  &first_bracket);
			bool section;
			json_error_t jerr;
			json_t *v;

			if (c >= eol)
				break;
			section = lj.text[c] == '{' && report_section(lj.text, lj.len, c);
			v = json_loadb(lj.text + c, lj.len - c, JSON_DISABLE_EOF_CHECK, &jerr);
			if (!v) {
				if (section) {
					/* the offending token's last character */
					size_t bad = pg_lenient_json_orig(
						&lj, c + (size_t)jerr.position);

					if (jerr.position > 0)
						bad--;
					ret = pg_import_fail(ctx, bad,
							     "report %zu: JSON section: %s",
							     reports + 1, jerr.text);
				}
				at = c + 1;
				continue;
			}
			if (section)
				ret = pg_import_report_tables(ctx, v, pg_lenient_json_orig(&lj, c),
							      ++reports);
			else if (pg_import_is_results(v))
				ret = pg_import_value(ctx, v, pg_lenient_json_orig(&lj, c),
						      &reports);
			json_decref(v);
			/* past the value: nothing inside it is a candidate */
			at = skip_to = c + (size_t)jerr.position;
		}
		off = eol + 1;
	}
	pg_lenient_json_release(&lj);
	return ret;
}
