#include "base/escape.h"

#include "base/alloc.h"
#include "base/buf.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when it is not one
 * (overlong forms, surrogates and code points past U+10FFFF included). */
static size_t utf8_seq_len(const unsigned char *s)
{
	unsigned c = s[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		return (s[1] & 0xC0) == 0x80 ? 2 : 0;
	if (c >= 0xE0 && c <= 0xEF) {
		if ((s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80)
			return 0;
		if (c == 0xE0 && s[1] < 0xA0)
			return 0;
		if (c == 0xED && s[1] >= 0xA0)
			return 0;
		return 3;
	}
	if (c >= 0xF0 && c <= 0xF4) {
		if ((s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80)
			return 0;
		if (c == 0xF0 && s[1] < 0x90)
			return 0;
		if (c == 0xF4 && s[1] >= 0x90)
			return 0;
		return 4;
	}
	return 0;
}

#define REPLACEMENT_CHARACTER "\xEF\xBF\xBD"

/*
 * The shared walk: valid UTF-8 passes through unless `special` names the
 * ASCII byte, which is written as a numeric character reference; line
 * breaks and tabs become a space, other control bytes and invalid sequences
 * U+FFFD.
 */
static void escape_with(struct pg_buf *out, const char *s, const char *special)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	while (*p) {
		size_t n = utf8_seq_len(p);

		if (n == 0) {
			pg_buf_puts(out, REPLACEMENT_CHARACTER);
			p++;
		} else if (n > 1) {
			pg_buf_add(out, p, n);
			p += n;
		} else if (*p == '\n' || *p == '\r' || *p == '\t') {
			pg_buf_putc(out, ' ');
			p++;
		} else if (*p < 0x20 || *p == 0x7F) {
			pg_buf_puts(out, REPLACEMENT_CHARACTER);
			p++;
		} else if (strchr(special, *p)) {
			pg_buf_printf(out, "&#%u;", (unsigned)*p);
			p++;
		} else {
			pg_buf_putc(out, (char)*p);
			p++;
		}
	}
}

static bool is_alnum_byte(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c >= 0x80;
}

/* HTML's three (and with quotes its two attribute) characters as named
 * references, which read better in markdown and SVG source than &#38;.
 * Returns whether c was one of them. */
static bool put_entity(struct pg_buf *out, unsigned char c, bool quotes)
{
	/* clang-format off */
	static const struct { unsigned char c; const char *ref; } refs[] = {
		{ '&', "&amp;" }, { '<', "&lt;" }, { '>', "&gt;" }, { '"', "&quot;" }, { '\'', "&#39;" },
	};
	/* clang-format on */

	for (size_t i = 0; i < (quotes ? 5 : 3); i++)
		if (c == refs[i].c) {
			pg_buf_puts(out, refs[i].ref);
			return true;
		}
	return false;
}

void pg_escape_md_cell(struct pg_buf *out, const char *s)
{
	struct pg_buf clean = PG_BUF_INIT;
	const unsigned char *p;

	/* first make it valid UTF-8 on one line, then escape the syntax */
	escape_with(&clean, s, "");
	p = (const unsigned char *)clean.ptr;
	for (size_t i = 0; i < clean.len; i++) {
		unsigned char c = p[i];

		if (put_entity(out, c, false))
			continue;
		switch (c) {
		case '|':
		case '\\':
		case '`':
		case '*':
		case '[':
		case ']':
		case '~':
			pg_buf_putc(out, '\\');
			pg_buf_putc(out, (char)c);
			break;
		case '_':
			/* intraword underscores cannot start emphasis (GFM), and
			 * test names are full of them: keep those readable */
			if (i == 0 || i + 1 >= clean.len || !is_alnum_byte(p[i - 1]) ||
			    !is_alnum_byte(p[i + 1]))
				pg_buf_putc(out, '\\');
			pg_buf_putc(out, '_');
			break;
		default:
			pg_buf_putc(out, (char)c);
		}
	}
	pg_buf_release(&clean);
}

void pg_escape_md_cell_cut(struct pg_buf *out, const char *s, size_t max_chars)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t chars = 0, i = 0;

	while (p[i] && (!max_chars || chars < max_chars)) {
		size_t n = utf8_seq_len(p + i);
		i += n ? n : 1;
		chars++;
	}
	if (!p[i]) {
		pg_escape_md_cell(out, s);
		return;
	}
	{
		char *cut = pg_xstrndup((const char *)p, i);
		pg_escape_md_cell(out, cut);
		pg_buf_puts(out, "…");
		free(cut);
	}
}

void pg_escape_md_code(struct pg_buf *out, const char *s)
{
	struct pg_buf clean = PG_BUF_INIT;

	escape_with(&clean, s, "");
	pg_buf_putc(out, '`');
	for (size_t i = 0; i < clean.len; i++)
		pg_buf_putc(out, clean.ptr[i] == '`' ? '\'' : clean.ptr[i]);
	pg_buf_putc(out, '`');
	pg_buf_release(&clean);
}

void pg_escape_url_path(struct pg_buf *out, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~/", *p))
			pg_buf_putc(out, (char)*p);
		else
			pg_buf_printf(out, "%%%02X", *p);
	}
}

void pg_escape_html(struct pg_buf *out, const char *s)
{
	struct pg_buf tmp = PG_BUF_INIT;
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	/* printable ASCII without a character to escape (a commit, a date, a
	 * number: most of what pages write) as it is */
	while (*p >= 0x20 && *p < 0x7F && !strchr("&<>\"'", *p))
		p++;
	if (!*p) {
		pg_buf_add(out, s ? s : "", (size_t)(p - (const unsigned char *)(s ? s : "")));
		return;
	}

	escape_with(&tmp, s, "");
	for (size_t i = 0; i < tmp.len; i++)
		if (!put_entity(out, (unsigned char)tmp.ptr[i], true))
			pg_buf_putc(out, tmp.ptr[i]);
	pg_buf_release(&tmp);
}

size_t pg_utf8_prefix(const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (p[i]) {
		size_t n = utf8_seq_len(p + i);
		if (n == 0)
			n = 1;
		if (i + n > max)
			break;
		i += n;
	}
	return i;
}

/* The inline HTML perfgate's own renderers use in tables. */
/* clang-format off */
static const char *const allowed_tags[] = {
	"<span class=\"red\">", "<span class=\"green\">", "<span class=\"muted\">",
	"<span class=\"orange\">", "</span>", "<code>", "</code>", "<br>",
};
/* clang-format on */

void pg_md_neutralize_html(struct pg_buf *out, const char *md)
{
	for (const char *p = md; *p; p++) {
		bool ok = false;

		if (*p != '<') {
			pg_buf_putc(out, *p);
			continue;
		}
		for (size_t i = 0; i < sizeof(allowed_tags) / sizeof(allowed_tags[0]); i++) {
			size_t n = strlen(allowed_tags[i]);
			if (!strncmp(p, allowed_tags[i], n)) {
				pg_buf_add(out, p, n);
				p += n - 1;
				ok = true;
				break;
			}
		}
		if (!ok)
			pg_buf_puts(out, "&lt;");
	}
}
