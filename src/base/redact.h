#ifndef PERFGATE_BASE_REDACT_H
#define PERFGATE_BASE_REDACT_H

#include "base/strutil.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct pg_buf;
struct pg_kvlist;
struct pg_suite;

/*
 * Secrets never reach a log line, a result file or an annotation. Which
 * names are secret is base/secret.h's rule (HF_TOKEN, OPENAI_API_KEY,
 * --api-key ...); this adds the values. Every value that reaches perfgate
 * as a secret is collected into a redactor:
 *
 *  - values of secret-named variables (the suite's env, perfgate's own
 *    environment), and credentials inside any variable's value
 *    (DATABASE_URL=postgres://u:PASSWORD@db, "password=x" in a DSN);
 *  - from command lines (argv, or a shell script split into words): the
 *    values of secret flags in both forms ("--api-key X", "--api-key=X"),
 *    of secret headers ("-H 'Authorization: Bearer X'"), "-u user:X",
 *    "HF_TOKEN=X" set on the line, "$NAME" given to a secret flag in a
 *    shell script (NAME's value);
 *  - from URLs anywhere (server.remote, argv, env values): the password
 *    of user:password@ (and an http(s) user part given alone, a token),
 *    secret-named query parameters (?api_key=, token, sig, ...);
 *  - the API key.
 *
 * A value spanning lines is also collected line by line. Then every text
 * perfgate records or prints goes through pg_redact, which hides each
 * collected value wherever it appears -- in a server's log, where vLLM
 * prints its api_key, or inside a longer argument -- and, whatever their
 * value, the secret parts of URLs, Authorization-style headers and
 * "Bearer X" tokens.
 */
/* Values shorter than this are hidden only where they stand as a whole
 * (K=V, a flag's argument, a URL's password), never as a substring of
 * other text: replacing every "1" of a log would destroy it and protect
 * nothing. */
#define PG_REDACT_MIN_SUBSTRING 6

struct pg_redactor {
	struct pg_strv values; /* secret values, longest first */
};

#define PG_REDACTOR_INIT                                                                           \
	{                                                                                          \
		PG_STRV_INIT                                                                       \
	}

/* The value of a variable by name, or NULL ("$NAME" in a shell script). */
typedef const char *(*pg_redact_lookup)(void *ctx, const char *name);

void pg_redactor_release(struct pg_redactor *r);
/* Add one secret value (NULL and empty strings are ignored); a value of
 * several lines adds each line of PG_REDACT_MIN_SUBSTRING bytes or more
 * too, so a log that prints it differently still hides it. */
void pg_redactor_add(struct pg_redactor *r, const char *value);
/* Add the values of every secret-named variable of a list, and the
 * credentials inside any value (pg_redactor_add_text). */
void pg_redactor_add_env(struct pg_redactor *r, const struct pg_kvlist *env);
/* The same for a "NAME=value" environ array (perfgate's own environment:
 * HF_TOKEN, BUILDKITE_AGENT_ACCESS_TOKEN, DATABASE_URL). */
void pg_redactor_add_environ(struct pg_redactor *r, char *const *environ_v);
/* Add the credentials found in a text: URL passwords and tokens, secret
 * query parameters, secret header values, "Bearer X", and "password=X"
 * style pairs whose name is a secret's. */
void pg_redactor_add_text(struct pg_redactor *r, const char *text);
/* Add the secrets of a command line (see above). lookup (may be NULL)
 * resolves "$NAME" given to a secret flag. */
void pg_redactor_add_argv(struct pg_redactor *r, char *const *argv, pg_redact_lookup lookup,
			  void *ctx);
/* The same for a /bin/sh -c script, split into words as sh would. */
void pg_redactor_add_shell(struct pg_redactor *r, const char *script, pg_redact_lookup lookup,
			   void *ctx);
/* Everything a suite says is secret before anything runs: every test's
 * server and command env, client headers, remote URL, and the literal
 * secrets of its command templates ("--api-key sk-..." written in the
 * YAML). Values known only once a command is rendered ({vars}) are added
 * by the runner as it renders it. */
void pg_redactor_add_suite(struct pg_redactor *r, const struct pg_suite *suite);

/* Append s to out with every collected value of at least
 * PG_REDACT_MIN_SUBSTRING bytes, and every secret part of a URL or header
 * (pg_redact_mark_patterns), replaced by "***". */
void pg_redact(const struct pg_redactor *r, struct pg_buf *out, const char *s);

/* Every string of a JSON value redacted in place (object keys excepted):
 * a result file carries what an external command wrote. */
void pg_redact_json(const struct pg_redactor *r, json_t *v);

/*
 * The allocation-free core, for the log writer (sys/proc.c), which runs
 * after fork. Each sets mask[i] = 1 for every byte of s[0..n) to hide
 * (leaving other bytes as they are); the caller prints each run of marked
 * bytes as one "***".
 *
 * pg_redact_mark_values marks every occurrence of a known value (those of
 * PG_REDACT_MIN_SUBSTRING bytes or more).
 *
 * pg_redact_mark_patterns marks, whatever their value: the password of
 * "scheme://user:password@" (the whole user part of "http(s)://TOKEN@"),
 * the value of a secret query parameter ("?api_key=X", "&sig=X"), the
 * value of an Authorization or Cookie header, or of one named X-Api-Key,
 * X-Auth-Token and the like ("Name: X",
 * "Name=X", JSON's "Name": "X"; after a scheme word), and "Bearer X". A
 * pattern never spans a newline: call it on whole lines.
 */
struct pg_secret_span {
	const char *s;
	size_t len;
};
void pg_redact_mark_values(const char *s, size_t n, const struct pg_secret_span *values,
			   size_t n_values, unsigned char *mask);
void pg_redact_mark_patterns(const char *s, size_t n, unsigned char *mask);
/* Append s[0..n) to out with each run of marked bytes as "***". */
void pg_redact_emit(struct pg_buf *out, const char *s, size_t n, const unsigned char *mask);

/*
 * A command as recorded and displayed: "K=V ... argv", every word
 * shell-quoted where needed, values of secret-named variables as K=***,
 * every secret of the command line as *** (pg_argv_display_redacted), then
 * every known secret value hidden wherever it appears. env may be NULL.
 */
void pg_redact_command(const struct pg_redactor *r, struct pg_buf *out, const struct pg_kvlist *env,
		       char *const *argv);

/* The same for a /bin/sh -c command string (shell: true), which is
 * recorded as written after substitution, with the values of secret flags
 * and variables set on the line as ***. */
void pg_redact_shell_command(const struct pg_redactor *r, struct pg_buf *out,
			     const struct pg_kvlist *env, const char *script);

#endif
