/*
 * The chunk skim (loadgen/reqtrace.c pg_chunk_skim): the one-pass reader of
 * every streamed JSON message, checked against jansson.
 *
 * The skim is allowed to be more lenient than jansson (it does not check
 * UTF-8 or number syntax beyond what it needs), never stricter: an object
 * jansson reads (without duplicate keys, escapes, NUL bytes, or nesting
 * near the skim's depth limit) must skim, with the same choices / usage /
 * error flags and token counts.
 */
#include "fuzz.h"

#include <jansson.h>

#include "loadgen/reqtrace.h"

static size_t count_openers(const char *s, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += s[i] == '{' || s[i] == '[';
	return k;
}

static long small_count(const json_t *v)
{
	json_int_t x;

	if (!json_is_integer(v))
		return -2; /* not comparable */
	x = json_integer_value(v);
	return x >= 0 && x < 100000000000000LL ? (long)x : -2;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fz_dup(data, size);
	struct pg_chunk_info ci;
	int rc = pg_chunk_skim(&ci, s, size);
	json_t *o;

	if (rc == 0)
		FZ_CHECK(ci.usage || (ci.prompt_tokens == -1 && ci.completion_tokens == -1));
	/* jansson (2.14) takes a NUL byte between tokens for white space; JSON
	 * and the skim do not */
	if (memchr(s, '\\', size) || memchr(s, '\0', size) || count_openers(s, size) > 100)
		goto done;
	o = json_loadb(s, size, JSON_REJECT_DUPLICATES, NULL);
	if (json_is_object(o)) {
		json_t *choices = json_object_get(o, "choices");
		json_t *usage = json_object_get(o, "usage");
		json_t *error = json_object_get(o, "error");
		json_t *object = json_object_get(o, "object");
		bool error_key = error && !json_is_null(error);

		FZ_CHECK(rc == 0);
		FZ_CHECK(ci.choices == (json_is_array(choices) && json_array_size(choices) > 0));
		FZ_CHECK(ci.usage == json_is_object(usage));
		FZ_CHECK(ci.error == (error_key || (json_is_string(object) &&
						    !strcmp(json_string_value(object), "error"))));
		if (json_is_object(usage)) {
			long p = small_count(json_object_get(usage, "prompt_tokens"));
			long c = small_count(json_object_get(usage, "completion_tokens"));
			if (p != -2)
				FZ_CHECK(ci.prompt_tokens == p);
			if (c != -2)
				FZ_CHECK(ci.completion_tokens == c);
			if (!json_object_get(usage, "prompt_tokens"))
				FZ_CHECK(ci.prompt_tokens == -1);
			if (!json_object_get(usage, "completion_tokens"))
				FZ_CHECK(ci.completion_tokens == -1);
		}
	}
	json_decref(o);
done:
	free(s);
	return 0;
}
