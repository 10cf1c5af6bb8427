#ifndef PERFGATE_BASE_SECRET_H
#define PERFGATE_BASE_SECRET_H

#include <stdbool.h>
#include <stddef.h>

struct pg_buf;
struct pg_kvlist;

/*
 * Secrets never reach logs, annotations or artifacts. These decide which
 * names say "my value is secret" -- environment variables, flags, HTTP
 * headers, query parameters; base/redact.h collects the values and hides
 * them wherever they appear. Everything that shows a command, an
 * environment or request headers to a person shows a secret's value as
 * "***". docs/trust.md ("Secrets") lists the rules.
 */
#define PG_SECRET_MASK "***"

/* An environment variable, header or query parameter whose value is
 * secret: its name contains TOKEN, SECRET, KEY, PASSWORD, PASSWD,
 * PASSPHRASE, CREDENTIAL, AUTH, COOKIE or SIGNATURE, in any case (HF_TOKEN,
 * OPENAI_API_KEY, Authorization), or one of its words (split at '_', '-'
 * and '.') is PASS or PWD (DB_PASS, MYSQL_PWD; not BYPASS, nor the shell's PWD). Errs on the
 * side of hiding (VLLM_MAX_TOKENS is hidden too). */
bool pg_secret_name(const char *name);

/* A query parameter whose value is secret: a secret name, or "sig" (an
 * Azure SAS signature). */
bool pg_secret_param(const char *name, size_t len);

/* A command-line flag whose value is secret: its last word (split at '-'
 * and '_') is token, secret, key, apikey, password, passwd, pass, pwd,
 * passphrase, credential(s), auth, bearer, cookie or signature
 * ("--api-key", "--hf_token", "--auth", "--bearer"), so
 * "--max-num-batched-tokens", "--tokenizer", "--api-key-file",
 * "--long-prefill-token-threshold" and "--prefill-us-per-token" stay
 * visible. flag may carry "=value". */
bool pg_secret_flag(const char *flag);

/* A flag whose value is an HTTP header ("-H", "--header", "--headers",
 * "--extra-header", "--http-header"): the header's value is secret when
 * its name is (pg_secret_header). flag may carry "=value". */
bool pg_secret_header_flag(const char *flag);

/* A flag whose value is "user:password" (curl's "-u" and "--user"): the
 * part after the first ':' is secret. flag may carry "=value". */
bool pg_secret_userpass_flag(const char *flag);

/* Whether a header name (len bytes) is secret: Authorization,
 * Proxy-Authorization, Cookie, Set-Cookie, or a name whose last word is a
 * secret flag's (X-Api-Key, X-Auth-Token, Ocp-Apim-Subscription-Key). */
bool pg_secret_header(const char *name, size_t len);

/*
 * A header as a command line passes it ("Authorization: Bearer X",
 * "X-Api-Key=X"): when its name is secret, the secret part of its value --
 * after an authorization scheme word ("Bearer", "Basic", "Token") -- as
 * [*from, *from + *len) of word, and true. false for any other word.
 */
bool pg_secret_header_value(const char *word, size_t *from, size_t *len);

/* "NAME=value" where NAME looks like an environment variable
 * ([A-Za-z_][A-Za-z0-9_]*) and is secret: the length of "NAME=", else 0.
 * upper: only names in capitals, as a command line sets variables
 * ("env HF_TOKEN=x vllm serve"), so "max_tokens=100" stays visible. */
size_t pg_secret_assignment(const char *word, bool upper);

/* argv joined for display, shell-quoted, with every secret replaced by
 * ***: the values of secret flags ("--api-key X", "--api-key=X"), of
 * secret headers ("-H 'Authorization: Bearer ***'"), the password of
 * "-u user:***", secret variables set on the command line ("HF_TOKEN=***").
 * A word starting with "--" after a secret flag is the next flag, not its
 * value, and shows. */
void pg_argv_display_redacted(struct pg_buf *out, char *const *argv);

/* "K=V K2=V2" with secret values as ***, in list order. */
void pg_env_display(struct pg_buf *out, const struct pg_kvlist *env);

#endif
