#include "base/secret.h"

#include "base/buf.h"
#include "base/strutil.h"
#include "suite/suite.h"

#include <string.h>
#include <strings.h>

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* p[0..n) equals word (lower case), ignoring case. */
static bool ci_eq(const char *p, size_t n, const char *word)
{
	size_t i = 0;

	for (; i < n && word[i]; i++)
		if (lower(p[i]) != word[i])
			return false;
	return i == n && !word[i];
}

/* word (lower case) occurs in p[0..n), ignoring case. */
static bool ci_contains(const char *p, size_t n, const char *word)
{
	size_t w = strlen(word);

	for (size_t i = 0; i + w <= n; i++)
		if (ci_eq(p + i, w, word))
			return true;
	return false;
}

static bool word_sep(char c)
{
	return c == '-' || c == '_' || c == '.';
}

/* The words before a "key" that make it a name for something rather than
 * what opens it: Buildkite's BUILDKITE_STEP_KEY is the step's `key:`,
 * shown on every build page; a sort, partition, routing or cache key
 * picks a record, a queue or a cache entry. */
static const char *const naming_key_words[] = { "step", "sort", "partition", "routing", "cache" };

static bool naming_word(const char *p, size_t n)
{
	for (size_t i = 0; i < sizeof(naming_key_words) / sizeof(naming_key_words[0]); i++)
		if (ci_eq(p, n, naming_key_words[i]))
			return true;
	return false;
}

/* Is the "key" at name[at..at+3) the word KEY right after a naming word
 * (STEP_KEY)? Any other "key" (API_KEY, KEYRING, MONKEY) is secret. */
static bool naming_key(const char *name, size_t n, size_t at)
{
	size_t before;

	if (at < 2 || !word_sep(name[at - 1]) || (at + 3 < n && !word_sep(name[at + 3])))
		return false;
	before = at - 1;
	while (before > 0 && !word_sep(name[before - 1]))
		before--;
	return naming_word(name + before, at - 1 - before);
}

/* A "key" in name other than a naming key. */
static bool secret_key_part(const char *name, size_t n)
{
	for (size_t i = 0; i + 3 <= n; i++)
		if (ci_eq(name + i, 3, "key") && !naming_key(name, n, i))
			return true;
	return false;
}

static bool name_secret(const char *name, size_t n)
{
	static const char *const parts[] = {
		"token",      "secret", "password", "passwd",    "passphrase",
		"credential", "auth",   "cookie",   "signature",
	};
	static const char *const words[] = { "pass", "pwd" };

	/* the shell's working directories, not a password */
	if (ci_eq(name, n, "pwd") || ci_eq(name, n, "oldpwd"))
		return false;
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if (ci_contains(name, n, parts[i]))
			return true;
	if (secret_key_part(name, n))
		return true;
	/* DB_PASS, MYSQL_PWD: whole words, so BYPASS and PASSTHROUGH show */
	for (size_t at = 0; at < n;) {
		size_t len = 0;
		while (at + len < n && !word_sep(name[at + len]))
			len++;
		for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
			if (ci_eq(name + at, len, words[i]))
				return true;
		at += len + 1;
	}
	return false;
}

bool pg_secret_name(const char *name)
{
	return name_secret(name, strlen(name));
}

bool pg_secret_param(const char *name, size_t len)
{
	return name_secret(name, len) || ci_eq(name, len, "sig");
}

/* The last word of a name (leading dashes skipped, split at '-', '_' and
 * '.') names a secret: --api-key, --hf_token, X-Api-Key. */
static bool last_word_secret(const char *p, size_t n)
{
	static const char *const words[] = {
		"token",  "secret", "key",           "apikey",     "password",    "passwd",
		"pass",   "pwd",    "passphrase",    "credential", "credentials", "auth",
		"bearer", "cookie", "authorization", "signature",
	};
	size_t start = n, before = n, before_len = 0;

	while (n && p[0] == '-') {
		p++;
		n--;
	}
	if (!n)
		return false;
	/* the last two words */
	start = n;
	while (start > 0 && !word_sep(p[start - 1]))
		start--;
	if (start > 0) {
		before = start - 1;
		while (before > 0 && !word_sep(p[before - 1]))
			before--;
		before_len = start - 1 - before;
	}
	if (start == n)
		return false;
	/* "--prefill-us-per-token": a rate per token, not a token */
	if (before_len && ci_eq(p + before, before_len, "per"))
		return false;
	/* "--step-key": a name, not what opens anything */
	if (before_len && ci_eq(p + start, n - start, "key") && naming_word(p + before, before_len))
		return false;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (ci_eq(p + start, n - start, words[i]))
			return true;
	return false;
}

static size_t flag_name_len(const char *flag)
{
	return strcspn(flag, "=");
}

bool pg_secret_flag(const char *flag)
{
	if (flag[0] != '-')
		return false;
	/* the flag's last word names what its value is: --api-key and
	 * --hf-token take secrets; --api-key-file takes a path and
	 * --long-prefill-token-threshold a number */
	return last_word_secret(flag, flag_name_len(flag));
}

bool pg_secret_header_flag(const char *flag)
{
	size_t n = flag_name_len(flag), start;

	if (flag[0] != '-')
		return false;
	if (n == 2 && flag[1] == 'H')
		return true;
	if (n < 3 || flag[1] != '-')
		return false;
	start = n;
	while (start > 2 && !word_sep(flag[start - 1]))
		start--;
	return ci_eq(flag + start, n - start, "header") ||
	       ci_eq(flag + start, n - start, "headers");
}

bool pg_secret_userpass_flag(const char *flag)
{
	size_t n = flag_name_len(flag);

	return (n == 2 && (!strncmp(flag, "-u", 2) || !strncmp(flag, "-U", 2))) ||
	       (n == 6 && !strncmp(flag, "--user", 6)) ||
	       (n == 12 && !strncmp(flag, "--proxy-user", 12));
}

bool pg_secret_header(const char *name, size_t len)
{
	return name_secret(name, len);
}

bool pg_secret_header_value(const char *word, size_t *from, size_t *len)
{
	size_t n = 0, v, end;

	while (word[n] && word[n] != ':' && word[n] != '=') {
		char c = word[n];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_' || c == ' '))
			return false;
		n++;
	}
	if (!word[n])
		return false;
	v = n + 1;
	while (n && word[n - 1] == ' ')
		n--;
	if (!n || !pg_secret_header(word, n))
		return false;
	while (word[v] == ' ')
		v++;
	/* "Bearer X", "Basic X", "Token X": the scheme is no secret */
	if (ci_contains(word, n, "auth")) {
		size_t s = v;
		while ((word[s] >= 'a' && word[s] <= 'z') || (word[s] >= 'A' && word[s] <= 'Z'))
			s++;
		if (s > v && word[s] == ' ') {
			while (word[s] == ' ')
				s++;
			if (word[s])
				v = s;
		}
	}
	end = strlen(word);
	while (end > v && (word[end - 1] == ' ' || word[end - 1] == '\n' || word[end - 1] == '\r'))
		end--;
	if (end == v)
		return false;
	*from = v;
	*len = end - v;
	return true;
}

size_t pg_secret_assignment(const char *word, bool upper)
{
	size_t n = 0;

	for (;; n++) {
		char c = word[n];
		bool letter = (c >= 'A' && c <= 'Z') || c == '_' ||
			      (!upper && c >= 'a' && c <= 'z');
		if (letter || (n && c >= '0' && c <= '9'))
			continue;
		break;
	}
	if (!n || word[n] != '=')
		return 0;
	return name_secret(word, n) ? n + 1 : 0;
}

/* How the word after a flag is shown. */
enum after {
	AFTER_NOTHING,
	AFTER_SECRET,   /* hidden whole */
	AFTER_HEADER,   /* a header: its value hidden when its name is secret */
	AFTER_USERPASS, /* user:password: the password hidden */
};

/* word with its secret part [from, from + len) as ***, shell-quoted. */
static void put_masked(struct pg_buf *out, const char *word, size_t from, size_t len)
{
	struct pg_buf w = PG_BUF_INIT;

	struct pg_buf probe = PG_BUF_INIT;

	/* "--api-key=***" as it is; "'Authorization: Bearer ***'" quoted
	 * whole, as the word would be without its secret */
	pg_buf_add(&w, word, from);
	pg_buf_putc(&w, 'x');
	pg_buf_puts(&w, word + from + len);
	pg_shell_quote(&probe, w.ptr);
	pg_buf_reset(&w);
	pg_buf_add(&w, word, from);
	pg_buf_puts(&w, PG_SECRET_MASK);
	pg_buf_puts(&w, word + from + len);
	if (probe.len && probe.ptr[0] == '\'')
		pg_shell_quote(out, w.ptr);
	else
		pg_buf_puts(out, w.ptr);
	pg_buf_release(&probe);
	pg_buf_release(&w);
}

/* A value word shown with its secret part masked, by what came before. */
static void put_value(struct pg_buf *out, const char *word, size_t offset, enum after how)
{
	const char *v = word + offset;
	size_t from, len;

	switch (how) {
	case AFTER_SECRET:
		if (*v)
			put_masked(out, word, offset, strlen(v));
		else
			pg_shell_quote(out, word);
		return;
	case AFTER_HEADER:
		if (pg_secret_header_value(v, &from, &len))
			put_masked(out, word, offset + from, len);
		else
			pg_shell_quote(out, word);
		return;
	case AFTER_USERPASS: {
		const char *colon = strchr(v, ':');
		if (colon && colon[1])
			put_masked(out, word, (size_t)(colon + 1 - word), strlen(colon + 1));
		else
			pg_shell_quote(out, word);
		return;
	}
	default:
		pg_shell_quote(out, word);
	}
}

static enum after flag_kind(const char *a)
{
	if (a[0] != '-')
		return AFTER_NOTHING;
	if (pg_secret_flag(a))
		return AFTER_SECRET;
	if (pg_secret_header_flag(a))
		return AFTER_HEADER;
	if (pg_secret_userpass_flag(a))
		return AFTER_USERPASS;
	return AFTER_NOTHING;
}

void pg_argv_display_redacted(struct pg_buf *out, char *const *argv)
{
	enum after pending = AFTER_NOTHING;

	for (size_t i = 0; argv[i]; i++) {
		const char *a = argv[i];
		enum after kind;
		size_t assign;

		if (i)
			pg_buf_putc(out, ' ');
		/* "--hf-token --port 8000": the flag was given no value, and the
		 * next word is a flag to show, not a secret to hide */
		if (pending != AFTER_NOTHING && strncmp(a, "--", 2) != 0) {
			put_value(out, a, 0, pending);
			pending = AFTER_NOTHING;
			continue;
		}
		pending = AFTER_NOTHING;
		kind = flag_kind(a);
		if (kind != AFTER_NOTHING) {
			const char *eq = strchr(a, '=');
			if (eq)
				put_value(out, a, (size_t)(eq + 1 - a), kind);
			else {
				pg_shell_quote(out, a);
				pending = kind;
			}
			continue;
		}
		/* "env HF_TOKEN=x vllm serve ..." */
		assign = pg_secret_assignment(a, true);
		if (assign) {
			put_value(out, a, assign, AFTER_SECRET);
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
