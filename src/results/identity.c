#include "results/identity.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/jsonw.h"
#include "base/strutil.h"
#include "results/metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put_name(struct pg_buf *b, const char *test, double qps, long concurrency)
{
	char q[PG_FMT_DOUBLE_SIZE];

	pg_buf_printf(b, "%s_qps_%s", test, pg_fmt_g(q, qps));
	if (concurrency > 0)
		pg_buf_printf(b, "_concurrency_%ld", concurrency);
}

/* A cap at or above the prompt count never holds a request back. */
static long effective(long max_concurrency, long num_prompts)
{
	if (max_concurrency <= 0 || (num_prompts > 0 && max_concurrency >= num_prompts))
		return 0;
	return max_concurrency;
}

char *pg_identity_point_name(const char *test, double qps, long max_concurrency, long num_prompts)
{
	struct pg_buf b = PG_BUF_INIT;

	put_name(&b, test, qps, effective(max_concurrency, num_prompts));
	return pg_buf_detach(&b);
}

/* The token up to the next '_' (or the end), as a new string. */
static char *token(const char *s, const char **end)
{
	size_t n = strcspn(s, "_");

	*end = s + n;
	return pg_xstrndup(s, n);
}

int pg_identity_parse(const char *name, char **test, double *qps, long *concurrency)
{
	const char *q = NULL, *rest;
	char *tok;
	double d;
	long c = -1;
	int bad;

	for (const char *s = name; (s = strstr(s, "_qps_")) != NULL; s++)
		q = s;
	if (!q || q == name)
		return -1;
	tok = token(q + 5, &rest);
	bad = !*tok || pg_parse_double(tok, &d) || d < 0;
	free(tok);
	if (bad)
		return -1;
	if (*rest) {
		if (!pg_str_has_prefix(rest, "_concurrency_"))
			return -1;
		tok = token(rest + 13, &rest);
		if (!strcmp(tok, "inf"))
			c = 0;
		else if (pg_parse_long(tok, &c) || c < 1)
			c = -2;
		free(tok);
		if (c == -2 || *rest)
			return -1;
	}
	*test = pg_xstrndup(name, (size_t)(q - name));
	*qps = d;
	*concurrency = c;
	return 0;
}

/* A non-negative whole number from a JSON number or numeric string. */
static long json_count(const json_t *v)
{
	double d;

	if (json_is_integer(v))
		return json_integer_value(v) >= 0 ? (long)json_integer_value(v) : -1;
	if (json_is_real(v))
		d = json_real_value(v);
	else if (!json_is_string(v) || pg_parse_double(json_string_value(v), &d))
		return -1;
	return isfinite(d) && d >= 0 && d == floor(d) && d < 1e15 ? (long)d : -1;
}

long pg_identity_num_prompts(const json_t *result)
{
	long n = json_count(pg_json_path(result, "perfgate.params.num_prompts"));

	return n >= 0 ? n : json_count(json_object_get(result, "num_prompts"));
}

/* The result's own cap: perfgate.params (null: none), else vLLM's key. */
static long result_concurrency(const json_t *result)
{
	json_t *params = pg_json_path(result, "perfgate.params");
	json_t *v = json_object_get(params, "max_concurrency");
	long c;

	if (!v)
		v = json_object_get(result, "max_concurrency");
	if (!v || json_is_null(v))
		return 0;
	c = json_count(v);
	return c > 0 ? c : 0;
}

/* The result's deployment shape (perfgate.params.deployment), or NULL for
 * one server. */
static const char *deployment(const json_t *result)
{
	const char *d = json_string_value(pg_json_path(result, "perfgate.params.deployment"));
	return d && *d ? d : NULL;
}

/* "<test>@<shape>" (new string), or a copy of test when it has no shape to
 * add or carries one already ('@' is in no test name). */
static char *with_shape(const char *test, const json_t *result)
{
	struct pg_buf b = PG_BUF_INIT;

	pg_buf_puts(&b, test);
	if (deployment(result) && !strchr(test, '@'))
		pg_buf_printf(&b, "@%s", deployment(result));
	return pg_buf_detach(&b);
}

char *pg_identity_of(const char *name, enum pg_suite_kind suite, const json_t *result)
{
	char *test, *id;
	double qps;
	long c;

	if (suite != PG_SUITE_SERVING || pg_identity_parse(name, &test, &qps, &c))
		return with_shape(name, result);
	if (deployment(result) && !strchr(test, '@')) {
		char *t2 = with_shape(test, result);
		free(test);
		test = t2;
	}
	if (c < 0)
		c = result_concurrency(result);
	id = pg_identity_point_name(test, qps, c, pg_identity_num_prompts(result));
	free(test);
	return id;
}

static void push_new(struct pg_strv *out, size_t from, char *s)
{
	for (size_t i = from; i < out->n; i++) {
		if (!strcmp(out->v[i], s)) {
			free(s);
			return;
		}
	}
	pg_strv_push_owned(out, s);
}

void pg_identity_names(struct pg_strv *out, const char *name, enum pg_suite_kind suite,
		       const json_t *result)
{
	size_t from = out->n;
	char *test;
	double qps;
	long c;

	push_new(out, from, pg_identity_of(name, suite, result));
	if (suite == PG_SUITE_SERVING && pg_identity_parse(out->v[from], &test, &qps, &c) == 0) {
		long n = pg_identity_num_prompts(result);

		if (c < 0) {
			struct pg_buf b = PG_BUF_INIT;

			/* vLLM's current driver names every point with its cap,
			 * num_prompts when the test gives none */
			if (n > 0) {
				put_name(&b, test, qps, n);
				push_new(out, from, pg_buf_detach(&b));
			}
			put_name(&b, test, qps, 0);
			pg_buf_puts(&b, "_concurrency_inf");
			push_new(out, from, pg_buf_detach(&b));
			pg_buf_release(&b);
		}
		free(test);
	}
	/* a deployment's point never goes by a one-server point's name */
	if (!deployment(result))
		push_new(out, from, pg_xstrdup(name));
}

char *pg_identity_find(const char *name, enum pg_suite_kind suite, const json_t *result,
		       bool (*known)(void *ctx, const char *candidate), void *ctx)
{
	struct pg_strv names = PG_STRV_INIT;
	char *found = NULL;

	pg_identity_names(&names, name, suite, result);
	for (size_t i = 0; i < names.n && !found; i++) {
		if (known(ctx, names.v[i])) {
			found = names.v[i];
			names.v[i] = pg_xstrdup("");
		}
	}
	pg_strv_release(&names);
	return found;
}

static int cmp_index(const void *a, const void *b, void *ids)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = strcmp(((char **)ids)[x], ((char **)ids)[y]);

	return c ? c : (x > y) - (x < y);
}

void pg_identity_unique(char **ids, const char *const *names, size_t n)
{
	size_t *order = pg_xcalloc(n ? n : 1, sizeof(*order));
	bool *clash = pg_xcalloc(n ? n : 1, sizeof(*clash));

	for (size_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), cmp_index, ids);
	for (size_t i = 1; i < n; i++) {
		if (!strcmp(ids[order[i - 1]], ids[order[i]]) &&
		    strcmp(names[order[i - 1]], names[order[i]]))
			clash[order[i - 1]] = clash[order[i]] = true;
	}
	for (size_t i = 0; i < n; i++) {
		if (clash[i]) {
			free(ids[i]);
			ids[i] = pg_xstrdup(names[i]);
		}
	}
	free(order);
	free(clash);
}
