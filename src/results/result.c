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
