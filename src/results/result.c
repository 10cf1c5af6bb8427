#include "results/result.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "gpu/gpu.h"
#include "base/jsonw.h"
#include "results/metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pg_result_release(struct pg_result *r)
{
	free(r->path);
	free(r->name);
	json_decref(r->json);
	json_decref(r->commands);
	memset(r, 0, sizeof(*r));
}

void pg_result_set_release(struct pg_result_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		pg_result_release(&s->items[i]);
	free(s->items);
	memset(s, 0, sizeof(*s));
}

void pg_result_set_add(struct pg_result_set *s, struct pg_result *r)
{
	pg_grow((void **)&s->items, &s->cap, s->n + 1, sizeof(*s->items));
	s->items[s->n++] = *r;
	memset(r, 0, sizeof(*r));
}

void pg_result_set_move(struct pg_result_set *to, struct pg_result_set *from)
{
	for (size_t i = 0; i < from->n; i++)
		pg_result_set_add(to, &from->items[i]);
	free(from->items);
	memset(from, 0, sizeof(*from));
}

const char *pg_result_gpu(const struct pg_result *r)
{
	json_t *v = r->commands ? json_object_get(r->commands, "gpu_type") : NULL;

	if (json_is_string(v) && json_string_length(v))
		return json_string_value(v);
	v = pg_json_path(r->json, "perfgate.gpu.name");
	if (json_is_string(v))
		return json_string_value(v);
	v = json_object_get(r->json, "gpu");
	if (json_is_string(v))
		return json_string_value(v);
	return NULL;
}

const char *pg_result_gpu_label(const struct pg_result *r, char *out, size_t size)
{
	json_t *label = pg_json_path(r->json, "perfgate.gpu.label");
	const char *raw;

	if (json_is_string(label) && json_string_length(label)) {
		snprintf(out, size, "%s", json_string_value(label));
		return out;
	}
	raw = pg_result_gpu(r);
	if (!raw || !*raw)
		return NULL;
	return pg_gpu_label(out, size, raw);
}

const char *pg_result_status(const struct pg_result *r)
{
	json_t *v = pg_json_path(r->json, "perfgate.status");
	return json_is_string(v) ? json_string_value(v) : "ok";
}

const char *pg_result_error(const struct pg_result *r)
{
	json_t *v = pg_json_path(r->json, "perfgate.error");
	return json_is_string(v) ? json_string_value(v) : NULL;
}

void pg_result_text(struct pg_buf *out, const json_t *json)
{
	pg_json_write(out, json, 4);
	pg_buf_putc(out, '\n');
}

static long long int_of(const json_t *o, const char *key, long long dflt)
{
	json_t *v = json_object_get(o, key);
	return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}

/* One run's counts (the top level, or one repeat); expected: the requests
 * asked for, or -1. */
static bool run_incomplete(const json_t *o, long long expected, struct pg_buf *why)
{
	long long failed = int_of(o, "failed", 0), iters = int_of(o, "failed_iterations", 0);
	/* serving's own pair: requests sent and completed, by one client */
	long long completed = int_of(o, "completed", -1);

	if (failed > 0) {
		if (expected > 0)
			pg_buf_printf(why, "%lld of %lld requests failed", failed, expected);
		else
			pg_buf_printf(why, "%lld request%s failed", failed, failed == 1 ? "" : "s");
		return true;
	}
	if (iters > 0) {
		pg_buf_printf(why, "%lld iteration%s failed", iters, iters == 1 ? "" : "s");
		return true;
	}
	if (completed >= 0 && expected > 0 && completed < expected) {
		pg_buf_printf(why, "only %lld of %lld requests completed", completed, expected);
		return true;
	}
	return false;
}

bool pg_result_json_incomplete(const json_t *result, struct pg_buf *why)
{
	struct pg_buf own = PG_BUF_INIT;
	struct pg_buf *b = &own;
	json_t *flag = pg_json_path(result, "perfgate.incomplete");
	json_t *repeats = pg_json_path(result, "perfgate.repeats"), *rep;
	long long expected = int_of(result, "num_prompts", -1);
	bool incomplete = false;
	size_t i;

	if (json_is_string(flag) && json_string_length(flag)) {
		pg_buf_puts(b, json_string_value(flag));
		incomplete = true;
		goto done;
	}
	if (run_incomplete(result, expected, b)) {
		incomplete = true;
		goto done;
	}
	/* the top level is the median over repeats: one bad run hides there */
	json_array_foreach(repeats, i, rep)
	{
		if (!json_is_object(rep))
			continue;
		pg_buf_printf(b, "run %zu of %zu: ", i + 1, json_array_size(repeats));
		if (run_incomplete(rep, expected, b)) {
			incomplete = true;
			goto done;
		}
		pg_buf_reset(b);
	}
done:
	if (incomplete && why)
		pg_buf_add(why, own.ptr, own.len);
	pg_buf_release(&own);
	return incomplete;
}
