#include "core/redact.h"

#include "core/alloc.h"
#include "core/buf.h"
#include "core/suite.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const secret_words[] = {
	"TOKEN", "SECRET", "KEY", "PASSWORD", "PASSWD", "CREDENTIAL",
};

/* Case-insensitive "does word[0..len) contain needle". */
static bool word_contains(const char *word, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	for (size_t i = 0; i + n <= len; i++)
		if (!strncasecmp(word + i, needle, n))
			return true;
	return false;
}

static bool secret_word(const char *word, size_t len)
{
	/* tokens as units of text, not credentials */
	if (len >= 7 && !strncasecmp(word, "TOKENIZ", 7))
		return false;
	if (len == 6 && !strncasecmp(word, "TOKENS", 6))
		return false;
	for (size_t i = 0; i < sizeof(secret_words) / sizeof(secret_words[0]); i++)
		if (word_contains(word, len, secret_words[i]))
			return true;
	return false;
}

bool pg_secret_name(const char *name)
{
	const char *p = name;

	if (!name)
		return false;
	while (*p) {
		size_t len = strcspn(p, "_-.=");
		if (len && secret_word(p, len))
			return true;
		if (p[len] == '=')
			break;
		p += len;
		if (*p)
			p++;
	}
	return false;
}

void pg_redactor_release(struct pg_redactor *r)
{
	pg_strv_release(&r->values);
}

void pg_redactor_add(struct pg_redactor *r, const char *value)
{
	size_t len, at;

	if (!value || !*value)
		return;
	for (size_t i = 0; i < r->values.n; i++)
		if (!strcmp(r->values.v[i], value))
			return;
	/* keep longest first, so a secret containing another is hidden whole */
	len = strlen(value);
	pg_strv_push(&r->values, value);
	at = r->values.n - 1;
	while (at > 0 && strlen(r->values.v[at - 1]) < len) {
		char *tmp = r->values.v[at - 1];
		r->values.v[at - 1] = r->values.v[at];
		r->values.v[at] = tmp;
		at--;
	}
}

void pg_redactor_add_env(struct pg_redactor *r, const struct pg_kvlist *env)
{
	for (size_t i = 0; env && i < env->n; i++)
		if (pg_secret_name(env->items[i].key))
			pg_redactor_add(r, env->items[i].value);
}

void pg_redactor_add_environ(struct pg_redactor *r, char *const *environ_v)
{
	for (size_t i = 0; environ_v && environ_v[i]; i++) {
		const char *eq = strchr(environ_v[i], '=');
		if (eq && pg_secret_name(environ_v[i]))
			pg_redactor_add(r, eq + 1);
	}
}

void pg_redact(const struct pg_redactor *r, struct pg_buf *out, const char *s)
{
	const char *p = s;

	while (*p) {
		size_t hit = 0;
		for (size_t i = 0; r && i < r->values.n && !hit; i++) {
			size_t n = strlen(r->values.v[i]);
			if (n >= PG_REDACT_MIN_SUBSTRING && !strncmp(p, r->values.v[i], n))
				hit = n;
		}
		if (hit) {
			pg_buf_puts(out, PG_REDACTED);
			p += hit;
		} else {
			pg_buf_putc(out, *p++);
		}
	}
}

static void env_prefix(struct pg_buf *b, const struct pg_kvlist *env)
{
	for (size_t i = 0; env && i < env->n; i++) {
		pg_buf_puts(b, env->items[i].key);
		pg_buf_putc(b, '=');
		if (pg_secret_name(env->items[i].key))
			pg_buf_puts(b, PG_REDACTED);
		else
			pg_shell_quote(b, env->items[i].value);
		pg_buf_putc(b, ' ');
	}
}

/* A value that is known in full to be secret, short or not. */
static bool known_secret(const struct pg_redactor *r, const char *word)
{
	for (size_t i = 0; r && i < r->values.n; i++)
		if (!strcmp(r->values.v[i], word))
			return true;
	return false;
}

void pg_redact_command(const struct pg_redactor *r, struct pg_buf *out,
		       const struct pg_kvlist *env, char *const *argv)
{
	struct pg_buf plain = PG_BUF_INIT;
	bool hide_next = false;

	env_prefix(&plain, env);
	for (size_t i = 0; argv && argv[i]; i++) {
		const char *w = argv[i];
		const char *eq = strchr(w, '=');

		if (i)
			pg_buf_putc(&plain, ' ');
		if ((hide_next && w[0] != '-') || known_secret(r, w)) {
			pg_buf_puts(&plain, PG_REDACTED);
			hide_next = false;
			continue;
		}
		hide_next = false;
		if (w[0] == '-' && eq && pg_secret_name(w)) {
			pg_buf_add(&plain, w, (size_t)(eq - w) + 1);
			pg_buf_puts(&plain, PG_REDACTED);
			continue;
		}
		if (w[0] == '-' && !eq && pg_secret_name(w))
			hide_next = true;
		pg_shell_quote(&plain, w);
	}
	pg_redact(r, out, plain.ptr);
	pg_buf_release(&plain);
}

void pg_redact_shell_command(const struct pg_redactor *r, struct pg_buf *out,
			     const struct pg_kvlist *env, const char *script)
{
	struct pg_buf plain = PG_BUF_INIT;

	env_prefix(&plain, env);
	pg_buf_puts(&plain, script);
	pg_redact(r, out, plain.ptr);
	pg_buf_release(&plain);
}
