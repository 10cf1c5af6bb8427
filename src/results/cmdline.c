#include "results/cmdline.h"

#include "base/buf.h"

#include <string.h>

int pg_cmdline_split(struct pg_strv *out, const char *line)
{
	struct pg_buf word = PG_BUF_INIT;
	const char *p = line;
	int in_word = 0, ret = 0;

	while (*p) {
		if (*p == ' ' || *p == '\t' || *p == '\n') {
			if (in_word)
				pg_strv_push(out, word.ptr);
			pg_buf_reset(&word);
			in_word = 0;
			p++;
			continue;
		}
		in_word = 1;
		if (*p == '\'') {
			const char *end = strchr(p + 1, '\'');
			if (!end) {
				ret = -1;
				goto done;
			}
			pg_buf_add(&word, p + 1, (size_t)(end - p - 1));
			p = end + 1;
		} else if (*p == '"') {
			p++;
			while (*p && *p != '"') {
				if (*p == '\\' && p[1] && strchr("\"\\$`", p[1]))
					p++;
				pg_buf_putc(&word, *p++);
			}
			if (*p != '"') {
				ret = -1;
				goto done;
			}
			p++;
		} else if (*p == '\\' && p[1]) {
			pg_buf_putc(&word, p[1]);
			p += 2;
		} else {
			pg_buf_putc(&word, *p++);
		}
	}
	if (in_word)
		pg_strv_push(out, word.ptr);
done:
	pg_buf_release(&word);
	return ret;
}

/* Option names equal up to '_' vs '-'; name ends at '\0' or '='. */
static size_t option_match(const char *word, const char *flag)
{
	size_t i = 0;

	for (; flag[i]; i++) {
		char a = word[i] == '_' ? '-' : word[i];
		char b = flag[i] == '_' ? '-' : flag[i];
		if (a != b)
			return 0;
	}
	return word[i] == '\0' || word[i] == '=' ? i : 0;
}

const char *pg_cmdline_flag(const struct pg_strv *argv, const char *flag)
{
	const char *found = NULL;

	for (size_t i = 0; i < argv->n; i++) {
		size_t len = option_match(argv->v[i], flag);

		if (!len)
			continue;
		if (argv->v[i][len] == '=')
			found = argv->v[i] + len + 1;
		else if (i + 1 < argv->n && argv->v[i + 1][0] != '-')
			found = argv->v[++i];
		else
			found = "";
	}
	return found;
}
