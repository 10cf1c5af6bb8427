#include "base/redact.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/secret.h"
#include "suite/suite.h"

#include <stdlib.h>
#include <string.h>

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
		char *name;
		if (!eq)
			continue;
		/* the name alone: a value may contain "key" anywhere */
		name = pg_xstrndup(environ_v[i], (size_t)(eq - environ_v[i]));
		if (pg_secret_name(name))
			pg_redactor_add(r, eq + 1);
		free(name);
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
			pg_buf_puts(out, PG_SECRET_MASK);
			p += hit;
		} else {
			pg_buf_putc(out, *p++);
		}
	}
}

static void env_prefix(struct pg_buf *b, const struct pg_kvlist *env)
{
	if (env && env->n) {
		pg_env_display(b, env);
		pg_buf_putc(b, ' ');
	}
}

void pg_redact_command(const struct pg_redactor *r, struct pg_buf *out, const struct pg_kvlist *env,
		       char *const *argv)
{
	struct pg_buf plain = PG_BUF_INIT;

	env_prefix(&plain, env);
	if (argv)
		pg_argv_display_redacted(&plain, argv);
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
