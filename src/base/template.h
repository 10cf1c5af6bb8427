#ifndef PERFGATE_BASE_TEMPLATE_H
#define PERFGATE_BASE_TEMPLATE_H

#include "suite/suite.h"

struct pg_buf;
struct pg_error;

/*
 * Command templates: "vllm serve {model} --tensor-parallel-size {tp} --port {port}".
 *
 * Placeholders are {name}; "{{" and "}}" are literal braces. A lookup
 * callback returns the value of a name, or NULL when it has none (an error
 * naming the placeholder).
 *
 * pg_template_argv splits the template into words the way sh does (single
 * quotes, double quotes, backslash) *before* substituting, and substitutes
 * values verbatim: a model named "a b'$(touch x)" is one literal argument,
 * never re-split or interpreted. It is what execvp receives.
 *
 * pg_template_shell produces one string for /bin/sh -c (the explicit
 * `shell: true` opt-in): values are quoted for the quoting context they land
 * in, so they are still passed literally.
 */
typedef const char *(*pg_template_lookup)(void *ctx, const char *name);

int pg_template_argv(struct pg_strv *out, const char *tmpl, pg_template_lookup lookup, void *ctx,
		     struct pg_error *err);
int pg_template_shell(struct pg_buf *out, const char *tmpl, pg_template_lookup lookup, void *ctx,
		      struct pg_error *err);

/* The placeholders a template uses, in order of first use (for validation
 * at load time, before anything runs). */
int pg_template_names(struct pg_strv *out, const char *tmpl, struct pg_error *err);

/*
 * The value of a test's own template variables: name, model, tp,
 * input_len, output_len, batch_size, num_prompts, iterations,
 * warmup_iterations, dataset_path, and every entry of the test's `vars`.
 * Numbers are formatted into scratch (which must hold 32 bytes). NULL when
 * the test has no such variable (runtime names like {port} and {result}
 * are added by the runner).
 */
const char *pg_test_var(const struct pg_test *t, const char *name, char scratch[32]);

/*
 * A program stood in for by a command of the user's: `perfgate run --vllm
 * CMD` runs CMD wherever a command's program is `vllm` (vLLM's files, a
 * suite's `vllm serve {model} ...`), e.g. "perfgate mock-server --as-vllm"
 * or "/opt/venv/bin/vllm". with is split into words as pg_template_argv
 * splits a template (quotes, backslashes; "{{" for a brace); a
 * placeholder in it is PG_ECONFIG, and so is an empty one.
 */
int pg_program_check(const char *with, struct pg_error *err);

/* When argv[0] is name, replace it by with's words (checked); returns
 * whether it did. */
bool pg_program_replace_argv(struct pg_strv *argv, const char *name, const char *with);

/* The same for a /bin/sh script whose first word is name: with's words,
 * each quoted for the shell. */
bool pg_program_replace_shell(struct pg_buf *script, const char *name, const char *with);

/* Join argv for display, each word shell-quoted where needed. */
void pg_argv_display(struct pg_buf *out, char *const *argv);

#endif
