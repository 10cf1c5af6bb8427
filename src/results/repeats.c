#include "results/repeats.h"

#include "base/alloc.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double pg_median(double *v, size_t n)
{
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static json_t *merge(json_t *const *vals, size_t n);

static json_t *merge_numbers(json_t *const *vals, size_t n)
{
	double *v = pg_xmalloc(n * sizeof(*v));
	bool all_int = true;
	size_t k = 0;
	double m;

	for (size_t i = 0; i < n; i++) {
		if (!json_is_number(vals[i]))
			continue;
		all_int = all_int && json_is_integer(vals[i]);
		v[k++] = json_number_value(vals[i]);
	}
	m = pg_median(v, k);
	free(v);
	if (all_int && m == floor(m) && fabs(m) < 9007199254740992.0)
		return json_integer((json_int_t)m);
	return json_real(m);
}

static json_t *merge_objects(json_t *const *vals, size_t n)
{
	const json_t *last = vals[n - 1];
	json_t *out = json_object();
	json_t **column = pg_xmalloc(n * sizeof(*column));
	const char *key;
	json_t *value;

	json_object_foreach((json_t *)last, key, value)
	{
		size_t k = 0;
		for (size_t i = 0; i < n; i++) {
			json_t *x = json_is_object(vals[i]) ? json_object_get(vals[i], key) : NULL;
			if (x)
				column[k++] = x;
		}
		json_object_set_new(out, key, merge(column, k));
	}
	free(column);
	return out;
}

/* A flag raised in any run stays raised: one client-bound run among the
 * repeats is worth knowing about whatever the median hides. */
static json_t *merge_flags(json_t *const *vals, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (json_is_true(vals[i]))
			return json_true();
	return json_false();
}

/* vals: the same key in each run that has it; the last one decides the type. */
static json_t *merge(json_t *const *vals, size_t n)
{
	json_t *last = vals[n - 1];

	if (json_is_number(last))
		return merge_numbers(vals, n);
	if (json_is_object(last))
		return merge_objects(vals, n);
	if (json_is_boolean(last))
		return merge_flags(vals, n);
	return json_deep_copy(last);
}

json_t *pg_repeats_median(json_t *const *runs, size_t n)
{
	return merge(runs, n);
}

static bool numeric_tree(const json_t *v)
{
	const char *key;
	json_t *x;

	if (json_is_number(v))
		return true;
	if (!json_is_object(v) || json_object_size(v) == 0)
		return false;
	json_object_foreach((json_t *)v, key, x) if (!numeric_tree(x)) return false;
	return true;
}

json_t *pg_repeats_metrics(const json_t *run)
{
	json_t *out = json_object();
	const char *key;
	json_t *v;

	/* perfgate's own part (the certified estimates) stays in the merged
	 * perfgate object: a repeat holds metrics */
	json_object_foreach((json_t *)run, key, v) if (strcmp(key, "perfgate") && numeric_tree(v))
		json_object_set_new(out, key, json_deep_copy(v));
	return out;
}
