#ifndef PERFGATE_BASE_REDACT_H
#define PERFGATE_BASE_REDACT_H

#include "base/strutil.h"

struct pg_buf;
struct pg_kvlist;

/*
 * Secrets never reach a log line, a result file or an annotation. Which
 * names are secret is base/secret.h's rule (HF_TOKEN, OPENAI_API_KEY,
 * --api-key ...); this adds the values: the runner collects every secret
 * value it knows (the values of secret-named variables in the suite's env
 * and in perfgate's own environment, the API key) into a redactor, and
 * every command line or log text it records or prints goes through it, so
 * a value is hidden wherever it appears -- in a server's log, where vLLM
 * prints its api_key, or inside a longer argument.
 */
/* Values shorter than this are hidden only where they stand as a whole
 * (K=V, a flag's argument), never as a substring of other text: replacing
 * every "1" of a log would destroy it and protect nothing. */
#define PG_REDACT_MIN_SUBSTRING 6

struct pg_redactor {
	struct pg_strv values; /* secret values, longest first once sorted */
};

#define PG_REDACTOR_INIT                                                                           \
	{                                                                                          \
		PG_STRV_INIT                                                                       \
	}

void pg_redactor_release(struct pg_redactor *r);
/* Add one secret value (NULL and empty strings are ignored). */
void pg_redactor_add(struct pg_redactor *r, const char *value);
/* Add the values of every secret-named variable of a list. */
void pg_redactor_add_env(struct pg_redactor *r, const struct pg_kvlist *env);
/* Add the values of every secret-named "NAME=value" entry of an environ
 * array (perfgate's own environment: HF_TOKEN, BUILDKITE_AGENT_ACCESS_TOKEN). */
void pg_redactor_add_environ(struct pg_redactor *r, char *const *environ_v);

/* Append s to out with every known secret value of at least
 * PG_REDACT_MIN_SUBSTRING bytes replaced by "***". */
void pg_redact(const struct pg_redactor *r, struct pg_buf *out, const char *s);

/*
 * A command as recorded and displayed: "K=V ... argv", every word
 * shell-quoted where needed, values of secret-named variables as K=***,
 * the argument of a secret flag ("--api-key X", "--hf-token=X") as ***
 * (base/secret.h), then every known secret value hidden wherever it
 * appears. env may be NULL.
 */
void pg_redact_command(const struct pg_redactor *r, struct pg_buf *out, const struct pg_kvlist *env,
		       char *const *argv);

/* The same for a /bin/sh -c command string (shell: true), which is
 * recorded as written after substitution. */
void pg_redact_shell_command(const struct pg_redactor *r, struct pg_buf *out,
			     const struct pg_kvlist *env, const char *script);

#endif
