#ifndef PERFGATE_RESULTS_IDENTITY_H
#define PERFGATE_RESULTS_IDENTITY_H

#include <jansson.h>
#include <stdbool.h>

#include "suite/suite.h"

struct pg_strv;

/*
 * One identity for a test point (docs/results.md, "Point identity"): the
 * test, the request rate and the effective concurrency. A concurrency cap
 * at or above the point's number of prompts is no cap: every request is
 * in flight at once either way, the same workload. The identity's name is
 * the one vLLM's published reports give that workload:
 *
 *   latency / throughput   <test>
 *   serving, no cap        <test>_qps_<q>
 *   serving, a real cap    <test>_qps_<q>_concurrency_<c>
 *
 * (q and c as Python's %g prints them: "1", "0.5", "inf".) Baselines and
 * history match points by identity; a name an earlier scheme gave the
 * same workload ("..._qps_1_concurrency_200" for 200 prompts, vLLM's
 * current driver's; "..._concurrency_inf", perfgate's first) keeps
 * matching through pg_identity_find.
 *
 * A disaggregated deployment's point (perfgate.params.deployment, e.g.
 * "prefill=2x1,decode=2x1", docs/deployments.md) carries its shape after
 * the test: "<test>@prefill=2x1,decode=2x1_qps_4". It is another workload
 * than one server's, and never matches one-server names, nor they it.
 *
 * Pure: names and result objects in, strings out.
 */

/* The identity name of a serving point; num_prompts <= 0 when unknown
 * (then only a cap <= 0 counts as none). New string. */
char *pg_identity_point_name(const char *test, double qps, long max_concurrency, long num_prompts);

/*
 * Split a serving point name "<test>_qps_<q>[_concurrency_<c>]" (the last
 * "_qps_" wins; q any number or "inf", c a positive integer or "inf"):
 * *test (new string), *qps, *concurrency (0 for "inf", -1 when the name
 * has none). -1, with nothing set, for any other name.
 */
int pg_identity_parse(const char *name, char **test, double *qps, long *concurrency);

/* A result's number of prompts: perfgate.params.num_prompts, else vLLM's
 * num_prompts; -1 when it has neither. */
long pg_identity_num_prompts(const json_t *result);

/*
 * The identity name of a result point called name: a serving point's
 * name rebuilt from its rate and concurrency (the name's, else the
 * result's max_concurrency) and the result's prompt count; any other
 * name as it is. New string.
 */
char *pg_identity_of(const char *name, enum pg_suite_kind suite, const json_t *result);

/*
 * Every name the point may be recorded under, best first, each once: its
 * identity, then for an uncapped serving point the names earlier schemes
 * gave it ("_concurrency_<num_prompts>", "_concurrency_inf"), then name
 * itself. Appended to out.
 */
void pg_identity_names(struct pg_strv *out, const char *name, enum pg_suite_kind suite,
		       const json_t *result);

/*
 * Identities of several points at once: ids[i] holds pg_identity_of's
 * name for points[i] (owned). Points whose identities would coincide --
 * a prompt count that follows the cap (PROMPTS_PER_CONCURRENCY=1 gives
 * every point as many prompts as its cap), the same workload run twice --
 * keep their own names (names[i], copied), so no point hides another.
 */
void pg_identity_unique(char **ids, const char *const *names, size_t n);

/* The first of pg_identity_names for which known(ctx, candidate) holds,
 * as a new string; NULL when none does. */
char *pg_identity_find(const char *name, enum pg_suite_kind suite, const json_t *result,
		       bool (*known)(void *ctx, const char *candidate), void *ctx);

#endif
