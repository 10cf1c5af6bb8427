/*
 * The JSON array scanner (base/jsonscan.c) that finds ShareGPT's
 * conversations without parsing the file. Checked against jansson: an array
 * jansson reads must scan, into as many elements, each of which jansson
 * reads alone; members and array lengths found by the scan agree with
 * jansson's (for elements without escapes in names, where raw bytes and
 * decoded names are the same). Inputs with a raw NUL byte are only checked
 * for memory safety and for the scanner's own error positions.
 */
#include "fuzz.h"

#include <jansson.h>

#include "base/error.h"
#include "base/jsonscan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pg_jsonscan_span *spans = NULL, v;
	struct pg_error err = PG_ERROR_INIT;
	size_t n = 0;
	char *text = fz_dup(data, size);
	int rc = pg_jsonscan_array_spans(text, size, "f.json", &spans, &n, &err);
	/* jansson is no oracle for a raw NUL byte: its reader drops one that
	 * follows a number (it ungets the NUL, then reads on), so it takes
	 * "[4<NUL>]" for [4], which JSON and the scanner refuse */
	json_t *all = memchr(text, 0, size)
			      ? NULL
			      : json_loadb(text, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);

	if (json_is_array(all))
		FZ_CHECK(rc == 0 && n == json_array_size(all));
	if (rc) {
		int line, col;
		FZ_CHECK(rc == PG_ECONFIG && !strncmp(err.msg, "f.json:", 7));
		pg_jsonscan_position(text, size, &line, &col);
		FZ_CHECK(line >= 1 && col >= 1);
	}
	for (size_t i = 0; rc == 0 && i < n; i++) {
		FZ_CHECK(spans[i].off + spans[i].len <= size && spans[i].len > 0);
		if (pg_jsonscan_member(text, &spans[i], "conversations", &v)) {
			FZ_CHECK(v.off >= spans[i].off &&
				 v.off + v.len <= spans[i].off + spans[i].len);
			for (size_t k = 0; k < 4; k++)
				(void)pg_jsonscan_array_has(text, &v, k);
		}
		if (json_is_array(all)) {
			json_t *el = json_array_get(all, i);
			json_t *alone = json_loadb(text + spans[i].off, spans[i].len,
						   JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
			FZ_CHECK(alone != NULL && json_equal(alone, el));
			json_decref(alone);
			if (json_is_object(el) &&
			    !memchr(text + spans[i].off, '\\', spans[i].len)) {
				json_t *conv = json_object_get(el, "conversations");
				bool found = pg_jsonscan_member(text, &spans[i], "conversations",
								&v);
				FZ_CHECK(found == (conv != NULL));
				if (json_is_array(conv))
					for (size_t k = 0; k < 4; k++)
						FZ_CHECK(pg_jsonscan_array_has(text, &v, k) ==
							 (json_array_size(conv) >= k));
			}
		}
	}
	json_decref(all);
	free(spans);
	free(text);
	return 0;
}
