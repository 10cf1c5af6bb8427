#ifndef PERFGATE_SUITE_BKINTERP_H
#define PERFGATE_SUITE_BKINTERP_H

#include <stdbool.h>
#include <stddef.h>

struct pg_buf;
struct pg_error;

/*
 * What Buildkite does to a pipeline's strings, so that `perfgate run
 * pipeline.yml --step KEY` reads the values the step gets in CI.
 *
 * At upload, `buildkite-agent pipeline upload` substitutes environment
 * variables (docs/design/buildkite-agent.md §3): $VAR, ${VAR}, ${VAR:-default}
 * (unset or empty), ${VAR-default} (unset), ${VAR:?message} and
 * ${VAR?message} (an error when unset, or empty for ':?'), ${VAR:offset}
 * and ${VAR:offset:length} (a negative offset counts from the end). $$
 * and \$ are a literal '$'. Unset variables are empty. A '$' that starts
 * none of these is kept.
 *
 * Later, per job, Buildkite fills in {{matrix}} and {{matrix.NAME}} from
 * the step's matrix.
 */

/* The value of a variable, or NULL when unset. */
typedef const char *(*pg_interp_lookup)(void *ctx, const char *name);

/*
 * Append text with its variables substituted to out. A ${VAR?message} of
 * an unset variable is PG_ECONFIG: "VAR: message" (or "VAR: not set").
 * Defaults are themselves interpolated.
 */
int pg_bk_interpolate(struct pg_buf *out, const char *text, pg_interp_lookup lookup, void *ctx,
		      struct pg_error *err);

/* true when text holds a {{matrix}} or {{matrix.NAME}} reference. */
bool pg_bk_has_matrix_ref(const char *text);

/*
 * Append text with {{matrix}} / {{matrix.NAME}} replaced by the values
 * lookup gives for "" / "NAME". A reference lookup has no value for is
 * PG_ENOTFOUND, naming it ("{{matrix.gpu}}") in err; other text is copied
 * as it is.
 */
int pg_bk_matrix_fill(struct pg_buf *out, const char *text, pg_interp_lookup lookup, void *ctx,
		      struct pg_error *err);

#endif
