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

/* Join argv for display, each word shell-quoted where needed. */
void pg_argv_display(struct pg_buf *out, char *const *argv);

#endif
