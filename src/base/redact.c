#include "base/redact.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/strutil.h"
#include "base/secret.h"
#include "suite/suite.h"

#include <stdlib.h>
#include <string.h>

/* ---- collecting values ------------------------------------------------ */

void pg_redactor_release(struct pg_redactor *r)
{
	pg_strv_release(&r->values);
}

/* Insert one value, keeping the list longest first, so a secret that
 * contains another is hidden whole. */
static void add_one(struct pg_redactor *r, const char *value, size_t len)
{
	size_t at;

	if (!len)
		return;
	for (size_t i = 0; i < r->values.n; i++)
		if (strlen(r->values.v[i]) == len && !memcmp(r->values.v[i], value, len))
			return;
	pg_strv_push_owned(&r->values, pg_xstrndup(value, len));
	at = r->values.n - 1;
	while (at > 0 && strlen(r->values.v[at - 1]) < len) {
		char *tmp = r->values.v[at - 1];
		r->values.v[at - 1] = r->values.v[at];
		r->values.v[at] = tmp;
		at--;
	}
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

void pg_redactor_add(struct pg_redactor *r, const char *value)
{
	const char *p;

	if (!value || !*value)
		return;
	add_one(r, value, strlen(value));
	if (!strpbrk(value, "\r\n"))
		return;
	/* a PEM key or a multi-line token: a program may print it with other
	 * line endings, indented, or one line at a time */
	for (p = value; *p;) {
		size_t len = strcspn(p, "\r\n"), a = 0, b = len;
		while (a < b && is_space(p[a]))
			a++;
		while (b > a && is_space(p[b - 1]))
			b--;
		if (b - a >= PG_REDACT_MIN_SUBSTRING)
			add_one(r, p + a, b - a);
		p += len;
		while (*p == '\r' || *p == '\n')
			p++;
	}
}

/* A value found in text, as written and, when percent-encoded, decoded
 * (a URL's password "p%40ss" is "p@ss" wherever a program prints it). */
static void add_found(struct pg_redactor *r, const char *s, size_t len)
{
	struct pg_buf dec = PG_BUF_INIT;
	bool encoded = false;

	add_one(r, s, len);
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '%' && i + 2 < len && pg_hex_digit(s[i + 1]) >= 0 &&
		    pg_hex_digit(s[i + 2]) >= 0) {
			pg_buf_putc(&dec,
				    (char)(pg_hex_digit(s[i + 1]) * 16 + pg_hex_digit(s[i + 2])));
			i += 2;
			encoded = true;
		} else {
			pg_buf_putc(&dec, s[i]);
		}
	}
	if (encoded && dec.len)
		add_one(r, dec.ptr, dec.len);
	pg_buf_release(&dec);
}

static bool word_start(const char *s, size_t i)
{
	char c;

	if (i == 0)
		return true;
	c = s[i - 1];
	return is_space(c) || c == '"' || c == '\'' || c == '{' || c == '(' || c == '[' ||
	       c == ',' || c == ';' || c == '`';
}

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

/* Collect only: "password=X", "token: X" -- a pair whose name is a secret
 * flag's word, as a DSN ("host=db password=X") or a config line has it. */
static void collect_pairs(struct pg_redactor *r, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t k = i, v, e;
		struct pg_buf flag = PG_BUF_INIT;
		bool secret;

		if (!word_start(s, i) || !name_char(s[i]))
			continue;
		while (k < n && name_char(s[k]) && k - i < 64)
			k++;
		/* JSON's "password": "x" */
		if (k < n && i > 0 && (s[k] == '"' || s[k] == '\'') && s[k] == s[i - 1])
			k++;
		if (k >= n || (s[k] != '=' && s[k] != ':')) {
			i = k;
			continue;
		}
		/* the same rule as a flag's: its last word */
		pg_buf_puts(&flag, "--");
		pg_buf_add(&flag, s + i, s[k - 1] == '"' || s[k - 1] == '\'' ? k - 1 - i : k - i);
		secret = pg_secret_flag(flag.ptr);
		pg_buf_release(&flag);
		v = k + 1;
		while (v < n && s[v] == ' ')
			v++;
		if (v < n && (s[v] == '"' || s[v] == '\''))
			v++;
		e = v;
		while (e < n && !is_space(s[e]) && !strchr("\"'&;,", s[e]))
			e++;
		if (secret && e > v)
			add_found(r, s + v, e - v);
		i = e;
	}
}

void pg_redactor_add_text(struct pg_redactor *r, const char *text)
{
	size_t n, run;
	unsigned char *mask;

	if (!text || !*text)
		return;
	n = strlen(text);
	mask = pg_xcalloc(n + 1, 1);
	pg_redact_mark_patterns(text, n, mask);
	for (size_t i = 0; i < n; i = run) {
		run = i + 1;
		if (!mask[i])
			continue;
		while (run < n && mask[run])
			run++;
		add_found(r, text + i, run - i);
	}
	free(mask);
	collect_pairs(r, text, n);
}

void pg_redactor_add_env(struct pg_redactor *r, const struct pg_kvlist *env)
{
	for (size_t i = 0; env && i < env->n; i++) {
		if (pg_secret_name(env->items[i].key))
			pg_redactor_add(r, env->items[i].value);
		pg_redactor_add_text(r, env->items[i].value);
	}
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
		pg_redactor_add_text(r, eq + 1);
		free(name);
	}
}

/* ---- command lines ---------------------------------------------------- */

enum kind {
	K_NONE,
	K_SECRET,   /* the flag's whole value */
	K_HEADER,   /* a header's value when its name is secret */
	K_USERPASS, /* what follows the first ':' */
};

static enum kind flag_kind(const char *a)
{
	if (a[0] != '-')
		return K_NONE;
	if (pg_secret_flag(a))
		return K_SECRET;
	if (pg_secret_header_flag(a))
		return K_HEADER;
	if (pg_secret_userpass_flag(a))
		return K_USERPASS;
	return K_NONE;
}

/* The secret part of value v (of a word) of a kind, as [*from, +*len). */
static bool secret_part(const char *v, enum kind k, size_t *from, size_t *len)
{
	const char *colon;

	switch (k) {
	case K_SECRET:
		*from = 0;
		*len = strlen(v);
		return *len > 0;
	case K_HEADER:
		return pg_secret_header_value(v, from, len);
	case K_USERPASS:
		colon = strchr(v, ':');
		if (!colon || !colon[1])
			return false;
		*from = (size_t)(colon + 1 - v);
		*len = strlen(colon + 1);
		return true;
	default:
		return false;
	}
}

/*
 * Walk a command line's words as pg_argv_display_redacted does and call
 * found(ctx, word index, kind, from, len) for each secret part of a word
 * (from is an offset into the word).
 */
typedef void (*found_fn)(void *ctx, size_t i, enum kind k, size_t from, size_t len);

static void walk_words(char *const *w, size_t n, bool any_case, found_fn found, void *ctx)
{
	enum kind pending = K_NONE;

	for (size_t i = 0; i < n; i++) {
		const char *a = w[i];
		size_t from, len, assign;
		enum kind k;

		if (pending != K_NONE && strncmp(a, "--", 2) != 0) {
			if (secret_part(a, pending, &from, &len))
				found(ctx, i, pending, from, len);
			pending = K_NONE;
			continue;
		}
		pending = K_NONE;
		k = flag_kind(a);
		if (k != K_NONE) {
			const char *eq = strchr(a, '=');
			size_t off = eq ? (size_t)(eq + 1 - a) : 0;
			if (!eq)
				pending = k;
			else if (secret_part(a + off, k, &from, &len))
				found(ctx, i, k, off + from, len);
			continue;
		}
		/* variables set on the line ("max_tokens=100" is no variable
		 * to hide from a display; collecting errs the other way) */
		assign = pg_secret_assignment(a, !any_case);
		if (assign && a[assign])
			found(ctx, i, K_SECRET, assign, strlen(a + assign));
	}
}

struct collect {
	struct pg_redactor *r;
	char *const *words;
	pg_redact_lookup lookup;
	void *ctx;
};

/* "$NAME" or "${NAME}": the name as [*a, *b) of v. */
static bool variable_ref(const char *v, size_t len, size_t *a, size_t *b)
{
	if (len < 2 || v[0] != '$')
		return false;
	*a = 1;
	*b = len;
	if (v[1] == '{') {
		if (v[len - 1] != '}')
			return false;
		*a = 2;
		*b = len - 1;
	}
	if (*b <= *a)
		return false;
	for (size_t i = *a; i < *b; i++)
		if (!((v[i] >= 'A' && v[i] <= 'Z') || (v[i] >= 'a' && v[i] <= 'z') || v[i] == '_' ||
		      (i > *a && v[i] >= '0' && v[i] <= '9')))
			return false;
	return true;
}

/* "$NAME" given to a secret flag: NAME's value is what the program gets. */
static void add_variable(struct collect *c, const char *v, size_t len)
{
	size_t a, b;
	char *name;
	const char *value;

	if (!c->lookup || !variable_ref(v, len, &a, &b))
		return;
	name = pg_xstrndup(v + a, b - a);
	value = c->lookup(c->ctx, name);
	if (value)
		pg_redactor_add(c->r, value);
	free(name);
}

static void collect_found(void *ctx, size_t i, enum kind k, size_t from, size_t len)
{
	struct collect *c = ctx;
	char *v = pg_xstrndup(c->words[i] + from, len);

	size_t a, b;

	(void)k;
	/* "$KEY" is a name; its value is the secret */
	if (variable_ref(v, len, &a, &b))
		add_variable(c, v, len);
	else
		pg_redactor_add(c->r, v);
	free(v);
}

void pg_redactor_add_argv(struct pg_redactor *r, char *const *argv, pg_redact_lookup lookup,
			  void *ctx)
{
	struct collect c = { r, argv, lookup, ctx };
	size_t n = 0;

	while (argv && argv[n])
		n++;
	walk_words(argv, n, true, collect_found, &c);
	for (size_t i = 0; i < n; i++)
		pg_redactor_add_text(r, argv[i]);
}

/* A word of a shell script: its text after quote removal, and where it
 * stands in the script. */
struct sh_words {
	struct pg_strv text;
	size_t *start, *end;
	size_t n, cap;
};

static bool sh_operator(char c)
{
	return c == ';' || c == '|' || c == '&' || c == '(' || c == ')' || c == '<' || c == '>';
}

/* Split a script into words as sh does: quotes, backslashes, operators
 * and comments; expansions ($VAR, $(...)) stay as written. Good enough to
 * find "--api-key X" in it, not a shell. */
static void sh_split(struct sh_words *w, const char *s)
{
	size_t i = 0, n = strlen(s);

	while (i < n) {
		struct pg_buf word = PG_BUF_INIT;
		size_t start;

		while (i < n && (is_space(s[i]) || sh_operator(s[i])))
			i++;
		if (i >= n)
			break;
		if (s[i] == '#') {
			while (i < n && s[i] != '\n')
				i++;
			continue;
		}
		start = i;
		while (i < n && !is_space(s[i]) && !sh_operator(s[i])) {
			char c = s[i++];
			if (c == '\'') {
				while (i < n && s[i] != '\'')
					pg_buf_putc(&word, s[i++]);
				i += i < n;
			} else if (c == '"') {
				while (i < n && s[i] != '"') {
					if (s[i] == '\\' && i + 1 < n && strchr("\\\"$`", s[i + 1]))
						i++;
					pg_buf_putc(&word, s[i++]);
				}
				i += i < n;
			} else if (c == '\\' && i < n) {
				pg_buf_putc(&word, s[i++]);
			} else {
				pg_buf_putc(&word, c);
			}
		}
		pg_strv_push(&w->text, word.ptr);
		if (w->n == w->cap) {
			w->cap = w->cap ? w->cap * 2 : 16;
			w->start = pg_xrealloc(w->start, w->cap * sizeof(*w->start));
			w->end = pg_xrealloc(w->end, w->cap * sizeof(*w->end));
		}
		w->start[w->n] = start;
		w->end[w->n++] = i;
		pg_buf_release(&word);
	}
}

static void sh_words_release(struct sh_words *w)
{
	pg_strv_release(&w->text);
	free(w->start);
	free(w->end);
}

void pg_redactor_add_shell(struct pg_redactor *r, const char *script, pg_redact_lookup lookup,
			   void *ctx)
{
	struct sh_words w = { PG_STRV_INIT, NULL, NULL, 0, 0 };

	if (!script)
		return;
	sh_split(&w, script);
	pg_redactor_add_argv(r, w.text.v, lookup, ctx);
	pg_redactor_add_text(r, script);
	sh_words_release(&w);
}

void pg_redactor_add_suite(struct pg_redactor *r, const struct pg_suite *suite)
{
	for (size_t k = 0; k < suite->n_tests; k++) {
		const struct pg_test *t = &suite->tests[k];
		pg_redactor_add_env(r, &t->server.env);
		pg_redactor_add_env(r, &t->command_env);
		pg_redactor_add_env(r, &t->client.headers);
		pg_redactor_add_text(r, t->server.remote);
		/* templates before substitution: "{port}" is no secret, and a
		 * secret written literally is one whatever the split */
		pg_redactor_add_shell(r, t->server.command, NULL, NULL);
		pg_redactor_add_shell(r, t->command, NULL, NULL);
		for (size_t i = 0; i < t->server.n_roles; i++) {
			pg_redactor_add_env(r, &t->server.roles[i].env);
			pg_redactor_add_shell(r, t->server.roles[i].command, NULL, NULL);
		}
		for (size_t i = 0; i < t->vars.n; i++) {
			if (pg_secret_name(t->vars.items[i].key))
				pg_redactor_add(r, t->vars.items[i].value);
			pg_redactor_add_text(r, t->vars.items[i].value);
		}
	}
}

/* ---- hiding ----------------------------------------------------------- */

void pg_redact_mark_values(const char *s, size_t n, const struct pg_secret_span *values,
			   size_t n_values, unsigned char *mask)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < n_values; k++) {
			size_t len = values[k].len;
			if (len >= PG_REDACT_MIN_SUBSTRING && len <= n - i &&
			    s[i] == values[k].s[0] && !memcmp(s + i, values[k].s, len)) {
				memset(mask + i, 1, len);
				break; /* longest first: the others are inside it */
			}
		}
	}
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool ci_prefix(const char *s, size_t n, const char *word)
{
	size_t i = 0;

	for (; word[i]; i++)
		if (i >= n || lower(s[i]) != word[i])
			return false;
	return true;
}

static bool ci_eqn(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && ci_prefix(s, n, word);
}

static void mark(unsigned char *mask, size_t from, size_t to)
{
	if (to > from)
		memset(mask + from, 1, to - from);
}

/* Ends a URL's authority: the user part is what comes before its last
 * '@' within it. */
static bool authority_end(char c)
{
	return is_space(c) || c == '/' || c == '?' || c == '#' || c == '"' || c == '\'' ||
	       c == '<' || c == '>' || c == '`' || c == '\\';
}

/* "scheme://user:password@host": the password; "http(s)://TOKEN@host":
 * the token (how git and many APIs take one). "ssh://git@host" names a
 * user, not a secret. */
static void mark_userinfo(const char *s, size_t n, size_t i, unsigned char *mask)
{
	size_t a = i + 3, j = a, at = 0, colon = 0, scheme = i;

	while (scheme > 0 && ((s[scheme - 1] >= 'a' && s[scheme - 1] <= 'z') ||
			      (s[scheme - 1] >= 'A' && s[scheme - 1] <= 'Z') ||
			      (s[scheme - 1] >= '0' && s[scheme - 1] <= '9') ||
			      s[scheme - 1] == '+' || s[scheme - 1] == '.' || s[scheme - 1] == '-'))
		scheme--;
	if (scheme == i)
		return;
	while (j < n && !authority_end(s[j]) && j - a < 1024) {
		if (s[j] == '@')
			at = j;
		j++;
	}
	if (!at)
		return;
	for (size_t k = a; k < at && !colon; k++)
		if (s[k] == ':')
			colon = k;
	if (colon)
		mark(mask, colon + 1, at);
	else if (ci_eqn(s + scheme, i - scheme, "http") || ci_eqn(s + scheme, i - scheme, "https"))
		mark(mask, a, at);
}

static bool value_end(char c)
{
	return is_space(c) || c == '&' || c == '#' || c == '"' || c == '\'' || c == '<' ||
	       c == '>' || c == '`';
}

/* "?api_key=X", "&sig=X": the value of a secret query parameter. */
static void mark_query(const char *s, size_t n, size_t i, unsigned char *mask)
{
	size_t k = i + 1, v;

	while (k < n && (name_char(s[k]) || s[k] == '.') && k - i <= 128)
		k++;
	if (k >= n || s[k] != '=' || k == i + 1 || !pg_secret_param(s + i + 1, k - i - 1))
		return;
	v = k + 1;
	while (v < n && !value_end(s[v]))
		v++;
	mark(mask, k + 1, v);
}

/* A header name in free text: Authorization, Proxy-Authorization,
 * Cookie, Set-Cookie, or a hyphenated name whose last word is a secret
 * flag's (X-Api-Key, api-key, X-Auth-Token) -- strict, so "key: x" in a
 * message is left alone. */
static bool header_name(const char *s, size_t n)
{
	bool dash = false;
	char flag[80];

	if (ci_eqn(s, n, "authorization") || ci_eqn(s, n, "proxy-authorization") ||
	    ci_eqn(s, n, "cookie") || ci_eqn(s, n, "set-cookie"))
		return true;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '_')
			return false;
		dash |= s[i] == '-' && i > 0;
	}
	if (!dash)
		return false;
	/* the flag rule on "--<name>"; no allocation: the log writer calls
	 * this after fork */
	if (n + 3 > sizeof(flag))
		return false;
	flag[0] = flag[1] = '-';
	memcpy(flag + 2, s, n);
	flag[n + 2] = '\0';
	return pg_secret_flag(flag);
}

/* "Authorization: Bearer X", "X-Api-Key=X", "\"Authorization\": \"Bearer X\"". */
static size_t mark_header(const char *s, size_t n, size_t i, unsigned char *mask)
{
	size_t k = i, v, e;
	bool auth, cookie;
	char quote = 0;

	while (k < n && name_char(s[k]) && k - i < 64)
		k++;
	if (k == i || k >= n || !header_name(s + i, k - i))
		return k;
	auth = ci_eqn(s + i, k - i, "authorization") || ci_eqn(s + i, k - i, "proxy-authorization");
	/* Cookie, Set-Cookie: "a=1; b=2" is one value */
	cookie = k - i >= 6 && ci_eqn(s + k - 6, 6, "cookie");
	v = k;
	if (v < n && i > 0 && (s[v] == '"' || s[v] == '\'') && s[v] == s[i - 1])
		v++;
	if (v >= n || (s[v] != ':' && s[v] != '='))
		return k;
	v++;
	while (v < n && (s[v] == ' ' || s[v] == '\t'))
		v++;
	if (v < n && (s[v] == '"' || s[v] == '\''))
		quote = s[v++];
	if (auth) {
		/* the scheme word is no secret */
		size_t w = v;
		while (w < n && ((s[w] >= 'a' && s[w] <= 'z') || (s[w] >= 'A' && s[w] <= 'Z')))
			w++;
		if (w > v && w < n && s[w] == ' ') {
			while (w < n && s[w] == ' ')
				w++;
			v = w;
		}
	}
	e = v;
	while (e < n && s[e] != '\n' && s[e] != '\r') {
		if (quote ? s[e] == quote
			  : (s[e] == '"' || s[e] == '\'' ||
			     (!cookie && (is_space(s[e]) || s[e] == ',' || s[e] == ';'))))
			break;
		e++;
	}
	mark(mask, v, e);
	return e;
}

static bool token_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '~' || c == '+' || c == '/' || c == '-' || c == '=';
}

/* "Bearer X" alone (a header printed without its name): X when it looks
 * like a token, 8 characters or more, so "bearer of news" stays. */
static void mark_bearer(const char *s, size_t n, size_t i, unsigned char *mask)
{
	size_t v = i + 6, e;

	if (v >= n || s[v] != ' ')
		return;
	while (v < n && s[v] == ' ')
		v++;
	e = v;
	while (e < n && token_char(s[e]))
		e++;
	if (e - v >= 8)
		mark(mask, v, e);
}

void pg_redact_mark_patterns(const char *s, size_t n, unsigned char *mask)
{
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == ':' && i + 2 < n && s[i + 1] == '/' && s[i + 2] == '/')
			mark_userinfo(s, n, i, mask);
		else if (c == '?' || c == '&')
			mark_query(s, n, i, mask);
		if (!word_start(s, i))
			continue;
		if ((c == 'b' || c == 'B') && ci_prefix(s + i, n - i, "bearer"))
			mark_bearer(s, n, i, mask);
		if (name_char(c)) {
			size_t end = mark_header(s, n, i, mask);
			/* the rest of the name is no word start */
			if (end > i + 1)
				i = end - 1;
		}
	}
}

void pg_redact_emit(struct pg_buf *out, const char *s, size_t n, const unsigned char *mask)
{
	size_t run = 0;

	for (size_t i = 0; i < n;) {
		if (!mask[i]) {
			i++;
			continue;
		}
		pg_buf_add(out, s + run, i - run);
		pg_buf_puts(out, PG_SECRET_MASK);
		while (i < n && mask[i])
			i++;
		run = i;
	}
	pg_buf_add(out, s + run, n - run);
}

static struct pg_secret_span *spans_of(const struct pg_redactor *r)
{
	size_t n = r ? r->values.n : 0;
	struct pg_secret_span *sp = pg_xcalloc(n + 1, sizeof(*sp));

	for (size_t i = 0; i < n; i++)
		sp[i] = (struct pg_secret_span){ r->values.v[i], strlen(r->values.v[i]) };
	return sp;
}

void pg_redact(const struct pg_redactor *r, struct pg_buf *out, const char *s)
{
	size_t n = strlen(s);
	unsigned char *mask = pg_xcalloc(n + 1, 1);
	struct pg_secret_span *sp = spans_of(r);

	pg_redact_mark_values(s, n, sp, r ? r->values.n : 0, mask);
	pg_redact_mark_patterns(s, n, mask);
	pg_redact_emit(out, s, n, mask);
	free(sp);
	free(mask);
}

void pg_redact_json(const struct pg_redactor *r, json_t *v)
{
	const char *key;
	json_t *item;
	size_t i;

	if (json_is_string(v)) {
		struct pg_buf b = PG_BUF_INIT;
		pg_redact(r, &b, json_string_value(v));
		if (strcmp(b.ptr, json_string_value(v)))
			json_string_set(v, b.ptr);
		pg_buf_release(&b);
	} else if (json_is_object(v)) {
		json_object_foreach(v, key, item) pg_redact_json(r, item);
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, item) pg_redact_json(r, item);
	}
}

/* ---- commands --------------------------------------------------------- */

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

struct shell_mask {
	const struct sh_words *w;
	const char *script;
	unsigned char *mask;
};

/* A secret word of the script, masked where it stands: the whole word
 * for a flag's value ("--api-key 'X'" -> "--api-key ***"), after the
 * '=' or ':' in the word as written otherwise, its closing quote kept.
 * Headers are left to pg_redact_mark_patterns. */
static void shell_found(void *ctx, size_t i, enum kind k, size_t from, size_t len)
{
	struct shell_mask *m = ctx;
	size_t a = m->w->start[i], b = m->w->end[i];
	const char *text = m->w->text.v[i];

	/* "--api-key \"$KEY\"": the name of the variable shows, its value
	 * never reaches the script */
	if (k == K_HEADER || variable_ref(text + from, len, &a, &b))
		return;
	a = m->w->start[i];
	b = m->w->end[i];
	if (from > 0) {
		char sep = text[from - 1];
		while (a < b && m->script[a] != sep)
			a++;
		a++;
		if (b > a && (m->script[b - 1] == '\'' || m->script[b - 1] == '"'))
			b--;
	}
	if (b > a)
		mark(m->mask, a, b);
}

void pg_redact_shell_command(const struct pg_redactor *r, struct pg_buf *out,
			     const struct pg_kvlist *env, const char *script)
{
	struct pg_buf plain = PG_BUF_INIT, shown = PG_BUF_INIT;
	struct sh_words w = { PG_STRV_INIT, NULL, NULL, 0, 0 };
	size_t n = strlen(script);
	unsigned char *mask = pg_xcalloc(n + 1, 1);
	struct shell_mask m = { &w, script, mask };

	sh_split(&w, script);
	walk_words(w.text.v, w.n, false, shell_found, &m);
	pg_redact_emit(&shown, script, n, mask);
	env_prefix(&plain, env);
	pg_buf_add(&plain, shown.ptr, shown.len);
	pg_redact(r, out, plain.ptr);
	sh_words_release(&w);
	free(mask);
	pg_buf_release(&shown);
	pg_buf_release(&plain);
}
