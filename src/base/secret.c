#include "base/secret.h"

#include "base/buf.h"
#include "base/strutil.h"
#include "suite/suite.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

bool pg_secret_name(const char *name)
{
	static const char *const words[] = {
		"TOKEN", "SECRET", "KEY", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "COOKIE",
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcasestr(name, words[i]))
			return true;
	return false;
}

bool pg_secret_flag(const char *flag)
{
	static const char *const words[] = {
		"token", "secret", "key", "password", "passwd", "credentials",
	};
	const char *p = flag, *last = NULL, *before = NULL;
	size_t last_len = 0, before_len = 0;

	if (p[0] != '-')
		return false;
	while (*p == '-')
		p++;
	/* the flag's last word names what its value is: --api-key and
	 * --hf-token take secrets; --api-key-file takes a path and
	 * --long-prefill-token-threshold a number */
	while (*p && *p != '=') {
		size_t len = strcspn(p, "-_=");
		before = last;
		before_len = last_len;
		last = p;
		last_len = len;
		p += len;
		if (*p == '-' || *p == '_')
			p++;
	}
	if (!last)
		return false;
	/* "--prefill-us-per-token": a rate per token, not a token */
	if (before && before_len == 3 && !strncasecmp(before, "per", 3))
		return false;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (last_len == strlen(words[i]) && !strncasecmp(last, words[i], last_len))
			return true;
	return false;
}

void pg_argv_display_redacted(struct pg_buf *out, char *const *argv)
{
	bool hide_next = false;

	for (size_t i = 0; argv[i]; i++) {
		const char *a = argv[i];
		const char *eq;

		if (i)
			pg_buf_putc(out, ' ');
		/* "--hf-token --port 8000": the flag was given no value, and the
		 * next word is a flag to show, not a secret to hide */
		if (hide_next && strncmp(a, "--", 2) != 0) {
			pg_buf_puts(out, PG_SECRET_MASK);
			hide_next = false;
			continue;
		}
		hide_next = false;
		if (a[0] == '-' && pg_secret_flag(a)) {
			eq = strchr(a, '=');
			if (eq) {
				struct pg_buf flag = PG_BUF_INIT;
				pg_buf_add(&flag, a, (size_t)(eq - a));
				pg_shell_quote(out, flag.ptr);
				pg_buf_puts(out, "=" PG_SECRET_MASK);
				pg_buf_release(&flag);
			} else {
				pg_shell_quote(out, a);
				hide_next = true;
			}
			continue;
		}
		pg_shell_quote(out, a);
	}
}

void pg_env_display(struct pg_buf *out, const struct pg_kvlist *env)
{
	for (size_t i = 0; i < env->n; i++) {
		if (i)
			pg_buf_putc(out, ' ');
		pg_buf_printf(out, "%s=", env->items[i].key);
		if (pg_secret_name(env->items[i].key))
			pg_buf_puts(out, PG_SECRET_MASK);
		else
			pg_shell_quote(out, env->items[i].value);
	}
}
