#ifndef PERFGATE_BASE_SECRET_H
#define PERFGATE_BASE_SECRET_H

#include <stdbool.h>

struct pg_buf;
struct pg_kvlist;

/*
 * Secrets never reach logs, annotations or artifacts. Everything that shows
 * a command, an environment or request headers to a person goes through
 * these, and shows a secret's value as "***".
 */
#define PG_SECRET_MASK "***"

/* An environment variable or header whose value is secret: its name
 * contains TOKEN, SECRET, KEY, PASSWORD, PASSWD, CREDENTIAL, AUTH or
 * COOKIE, in any case (HF_TOKEN, OPENAI_API_KEY, Authorization). Errs on
 * the side of hiding (VLLM_MAX_TOKENS is hidden too). */
bool pg_secret_name(const char *name);

/* A command-line flag whose value is secret: its last word (split at '-'
 * and '_') is token, secret, key, password, passwd or credentials
 * ("--api-key", "--hf-token"), so "--max-num-batched-tokens",
 * "--tokenizer", "--api-key-file", "--long-prefill-token-threshold" and
 * "--prefill-us-per-token" stay visible. flag may carry "=value". */
bool pg_secret_flag(const char *flag);

/* argv joined for display, shell-quoted, with the values of secret flags
 * ("--api-key X", "--api-key=X") replaced by ***. A word starting with
 * "--" after a secret flag is the next flag, not its value, and shows. */
void pg_argv_display_redacted(struct pg_buf *out, char *const *argv);

/* "K=V K2=V2" with secret values as ***, in list order. */
void pg_env_display(struct pg_buf *out, const struct pg_kvlist *env);

#endif
