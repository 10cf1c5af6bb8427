#include "mockserver/proxy.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/strutil.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

int pg_mock_prefill_body(struct pg_buf *out, const char *body, size_t len)
{
	json_t *root = json_loadb(body, len, 0, NULL);
	char *text;

	if (!json_is_object(root)) {
		json_decref(root);
		return -1;
	}
	json_object_set_new(root, "max_tokens", json_integer(1));
	if (json_object_get(root, "max_completion_tokens"))
		json_object_set_new(root, "max_completion_tokens", json_integer(1));
	json_object_set_new(root, "stream", json_false());
	json_object_del(root, "stream_options");
	text = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	if (!text)
		return -1;
	pg_buf_puts(out, text);
	free(text);
	return 0;
}

size_t pg_mock_split_urls(struct pg_strv *out, const char *list)
{
	size_t count = 0;

	while (list && *list) {
		size_t n = strcspn(list, ",");
		size_t m = n;

		while (m && list[m - 1] == '/')
			m--;
		if (m) {
			pg_strv_push_owned(out, pg_xstrndup(list, m));
			count++;
		}
		list += n + (list[n] == ',');
	}
	return count;
}
