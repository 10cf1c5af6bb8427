/*
 * The mock proxy's reading of a client's request body and of its worker
 * lists (mockserver/proxy.c). Checked: a body jansson reads as an object
 * becomes a prefill request that jansson reads back, with max_tokens 1,
 * stream false and no stream_options; anything else is refused with
 * nothing written. The URL lists split into non-empty URLs without a
 * trailing '/' or a comma.
 */
#include "fuzz.h"

#include <jansson.h>

#include "base/buf.h"
#include "base/strutil.h"
#include "mockserver/proxy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pg_buf out = PG_BUF_INIT;
	struct pg_strv urls = PG_STRV_INIT;
	char *text = fz_dup(data, size);
	json_t *in = json_loadb(text, size, 0, NULL);
	int rc = pg_mock_prefill_body(&out, text, size);
	size_t n;

	FZ_CHECK((rc == 0) == json_is_object(in));
	if (rc == 0) {
		json_t *back = json_loadb(out.ptr, out.len, 0, NULL);
		FZ_CHECK(json_is_object(back));
		FZ_CHECK(json_integer_value(json_object_get(back, "max_tokens")) == 1);
		FZ_CHECK(json_is_false(json_object_get(back, "stream")));
		FZ_CHECK(!json_object_get(back, "stream_options"));
		json_decref(back);
	} else {
		FZ_CHECK(out.len == 0);
	}
	/* the lists are command-line arguments: strings up to their NUL */
	char *arg = malloc(size + 1);
	memcpy(arg, data, size);
	arg[size] = '\0';
	n = pg_mock_split_urls(&urls, arg);
	free(arg);
	FZ_CHECK(n == urls.n);
	for (size_t i = 0; i < urls.n; i++) {
		size_t len = strlen(urls.v[i]);
		FZ_CHECK(len > 0 && urls.v[i][len - 1] != '/' && !strchr(urls.v[i], ','));
	}
	json_decref(in);
	pg_strv_release(&urls);
	pg_buf_release(&out);
	free(text);
	return 0;
}
