#include "base/template.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/strutil.h"

#include <stdio.h>
#include <string.h>

enum quote { Q_NONE, Q_SINGLE, Q_DOUBLE };

/* Read "{name}" at *p (p points at '{'); on success advance past '}'. */
static int read_name(const char **p, char *name, size_t size, const char *tmpl,
		     struct pg_error *err)
{
	const char *start = *p + 1;
	const char *end = strchr(start, '}');
	size_t len;

	if (!end)
		return pg_error_set(
			err, PG_ECONFIG,
			"command template '%s': unclosed '{' (write '{{' for a literal brace)",
			tmpl);
	len = (size_t)(end - start);
	if (len == 0 || len >= size)
		return pg_error_set(err, PG_ECONFIG,
				    "command template '%s': bad placeholder '{%.*s}'", tmpl,
				    (int)len, start);
	for (size_t i = 0; i < len; i++) {
		char c = start[i];
		if (!(c == '_' || c == '-' || c == '.' || (c >= 'a' && c <= 'z') ||
		      (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
			return pg_error_set(err, PG_ECONFIG,
					    "command template '%s': bad placeholder '{%.*s}'", tmpl,
					    (int)len, start);
	}
	memcpy(name, start, len);
	name[len] = '\0';
	*p = end + 1;
	return 0;
}

static const char *lookup_or_fail(pg_template_lookup lookup, void *ctx, const char *name,
				  const char *tmpl, struct pg_error *err)
{
	const char *v = lookup ? lookup(ctx, name) : NULL;
	if (!v)
		pg_error_set(err, PG_ECONFIG, "command template '%s': unknown placeholder '{%s}'",
			     tmpl, name);
	return v;
}

int pg_template_argv(struct pg_strv *out, const char *tmpl, pg_template_lookup lookup, void *ctx,
		     struct pg_error *err)
{
	struct pg_buf word = PG_BUF_INIT;
	bool in_word = false;
	enum quote q = Q_NONE;
	char name[128];
	int ret = 0;

	for (const char *p = tmpl; *p;) {
		char c = *p;

		if (c == '{' && p[1] == '{') {
			pg_buf_putc(&word, '{');
			in_word = true;
			p += 2;
			continue;
		}
		if (c == '}' && p[1] == '}') {
			pg_buf_putc(&word, '}');
			in_word = true;
			p += 2;
			continue;
		}
		if (c == '{') {
			const char *v;
			if ((ret = read_name(&p, name, sizeof(name), tmpl, err)))
				goto done;
			if (!(v = lookup_or_fail(lookup, ctx, name, tmpl, err))) {
				ret = PG_ECONFIG;
				goto done;
			}
			pg_buf_puts(&word, v);
			in_word = true;
			continue;
		}
		switch (q) {
		case Q_SINGLE:
			if (c == '\'')
				q = Q_NONE;
			else
				pg_buf_putc(&word, c);
			p++;
			continue;
		case Q_DOUBLE:
			if (c == '"') {
				q = Q_NONE;
			} else if (c == '\\' && p[1] && strchr("\"\\$`", p[1])) {
				pg_buf_putc(&word, p[1]);
				p++;
			} else {
				pg_buf_putc(&word, c);
			}
			p++;
			continue;
		case Q_NONE:
			break;
		}
		if (c == ' ' || c == '\t' || c == '\n') {
			if (in_word) {
				pg_strv_push(out, word.ptr);
				pg_buf_reset(&word);
				in_word = false;
			}
		} else if (c == '\'') {
			q = Q_SINGLE;
			in_word = true;
		} else if (c == '"') {
			q = Q_DOUBLE;
			in_word = true;
		} else if (c == '\\' && p[1]) {
			pg_buf_putc(&word, p[1]);
			in_word = true;
			p++;
		} else {
			pg_buf_putc(&word, c);
			in_word = true;
		}
		p++;
	}
	if (q != Q_NONE) {
		ret = pg_error_set(err, PG_ECONFIG, "command template '%s': unterminated %s quote",
				   tmpl, q == Q_SINGLE ? "single" : "double");
		goto done;
	}
	if (in_word)
		pg_strv_push(out, word.ptr);
	if (out->n == 0)
		ret = pg_error_set(err, PG_ECONFIG, "command template is empty");
done:
	pg_buf_release(&word);
	return ret;
}

static void quote_for(struct pg_buf *out, const char *v, enum quote q)
{
	switch (q) {
	case Q_NONE:
		pg_shell_quote(out, v);
		break;
	case Q_SINGLE:
		for (; *v; v++) {
			if (*v == '\'')
				pg_buf_puts(out, "'\\''");
			else
				pg_buf_putc(out, *v);
		}
		break;
	case Q_DOUBLE:
		for (; *v; v++) {
			if (strchr("\"\\$`", *v))
				pg_buf_putc(out, '\\');
			pg_buf_putc(out, *v);
		}
		break;
	}
}

int pg_template_shell(struct pg_buf *out, const char *tmpl, pg_template_lookup lookup, void *ctx,
		      struct pg_error *err)
{
	enum quote q = Q_NONE;
	char name[128];
	int ret;

	for (const char *p = tmpl; *p;) {
		char c = *p;

		if ((c == '{' && p[1] == '{') || (c == '}' && p[1] == '}')) {
			pg_buf_putc(out, c);
			p += 2;
			continue;
		}
		if (c == '{') {
			const char *v;
			if ((ret = read_name(&p, name, sizeof(name), tmpl, err)))
				return ret;
			if (!(v = lookup_or_fail(lookup, ctx, name, tmpl, err)))
				return PG_ECONFIG;
			quote_for(out, v, q);
			continue;
		}
		if (q == Q_NONE && c == '\\' && p[1]) {
			pg_buf_add(out, p, 2);
			p += 2;
			continue;
		}
		if (q == Q_DOUBLE && c == '\\' && p[1]) {
			pg_buf_add(out, p, 2);
			p += 2;
			continue;
		}
		if (c == '\'' && q != Q_DOUBLE)
			q = q == Q_SINGLE ? Q_NONE : Q_SINGLE;
		else if (c == '"' && q != Q_SINGLE)
			q = q == Q_DOUBLE ? Q_NONE : Q_DOUBLE;
		pg_buf_putc(out, c);
		p++;
	}
	if (q != Q_NONE)
		return pg_error_set(err, PG_ECONFIG, "command template '%s': unterminated %s quote",
				    tmpl, q == Q_SINGLE ? "single" : "double");
	return 0;
}

int pg_template_names(struct pg_strv *out, const char *tmpl, struct pg_error *err)
{
	char name[128];
	int ret;

	for (const char *p = tmpl; *p;) {
		if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
			p += 2;
			continue;
		}
		if (*p != '{') {
			p++;
			continue;
		}
		if ((ret = read_name(&p, name, sizeof(name), tmpl, err)))
			return ret;
		bool seen = false;
		for (size_t i = 0; i < out->n; i++)
			if (!strcmp(out->v[i], name))
				seen = true;
		if (!seen)
			pg_strv_push(out, name);
	}
	return 0;
}

const char *pg_test_var(const struct pg_test *t, const char *name, char scratch[32])
{
	const char *v = pg_kvlist_get(&t->vars, name);
	long num;

	if (v)
		return v;
	if (!strcmp(name, "name"))
		return t->name;
	if (!strcmp(name, "model"))
		return t->model;
	if (!strcmp(name, "dataset_path"))
		return t->dataset.path;
	if (!strcmp(name, "tp"))
		num = t->tp;
	else if (!strcmp(name, "input_len"))
		num = t->dataset.input_len;
	else if (!strcmp(name, "output_len"))
		num = t->dataset.output_len;
	else if (!strcmp(name, "batch_size"))
		num = t->batch_size;
	else if (!strcmp(name, "num_prompts"))
		num = t->num_prompts;
	else if (!strcmp(name, "iterations"))
		num = t->iterations;
	else if (!strcmp(name, "warmup_iterations"))
		num = t->warmup_iterations;
	else
		return NULL;
	snprintf(scratch, 32, "%ld", num);
	return scratch;
}

void pg_argv_display(struct pg_buf *out, char *const *argv)
{
	for (size_t i = 0; argv[i]; i++) {
		if (i)
			pg_buf_putc(out, ' ');
		pg_shell_quote(out, argv[i]);
	}
}

/* ---- a program stood in for ------------------------------------------- */

static const char *no_placeholders(void *ctx, const char *name)
{
	(void)ctx;
	(void)name;
	return NULL;
}

int pg_program_check(const char *with, struct pg_error *err)
{
	struct pg_strv words = PG_STRV_INIT;
	struct pg_error inner = PG_ERROR_INIT;
	int ret = pg_template_argv(&words, with, no_placeholders, NULL, &inner);

	if (ret)
		ret = pg_error_set(err, PG_ECONFIG, "%s", inner.msg);
	else if (!words.n)
		ret = pg_error_set(err, PG_ECONFIG, "'%s': no command", with);
	pg_strv_release(&words);
	return ret;
}

bool pg_program_replace_argv(struct pg_strv *argv, const char *name, const char *with)
{
	struct pg_strv words = PG_STRV_INIT, out = PG_STRV_INIT;
	struct pg_error err = PG_ERROR_INIT;

	if (!with || !argv->n || strcmp(argv->v[0], name) ||
	    pg_template_argv(&words, with, no_placeholders, NULL, &err) || !words.n) {
		pg_strv_release(&words);
		return false;
	}
	for (size_t i = 0; i < words.n; i++)
		pg_strv_push(&out, words.v[i]);
	for (size_t i = 1; i < argv->n; i++)
		pg_strv_push(&out, argv->v[i]);
	pg_strv_release(&words);
	pg_strv_release(argv);
	*argv = out;
	return true;
}

bool pg_program_replace_shell(struct pg_buf *script, const char *name, const char *with)
{
	struct pg_strv words = PG_STRV_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_buf out = PG_BUF_INIT;
	size_t len = strlen(name);

	if (!with || !script->ptr || strncmp(script->ptr, name, len) ||
	    (script->ptr[len] != ' ' && script->ptr[len] != '\0') ||
	    pg_template_argv(&words, with, no_placeholders, NULL, &err) || !words.n) {
		pg_strv_release(&words);
		return false;
	}
	for (size_t i = 0; i < words.n; i++) {
		if (i)
			pg_buf_putc(&out, ' ');
		pg_shell_quote(&out, words.v[i]);
	}
	pg_buf_puts(&out, script->ptr + len);
	pg_strv_release(&words);
	pg_buf_release(script);
	*script = out;
	return true;
}
