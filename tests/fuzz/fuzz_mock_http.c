/*
 * The mock server's HTTP request parser (mockserver/http.c), fed what a
 * socket gives it: one buffer that may hold a partial request or several
 * pipelined ones.
 *
 * Properties (the parser's promise: a request split at any offset parses
 * the same):
 *  - a complete request of total_len bytes is "incomplete" on every
 *    shorter prefix that holds its head (and never complete or different
 *    before);
 *  - pipelined requests are consumed one after another as the server does,
 *    every one within the buffer.
 */
#include "fuzz.h"

#include "mockserver/http.h"

#define MAX_BODY (1u << 20)

static int parse(const char *buf, size_t len, struct pg_http_request *req, int *status,
		 const char **why)
{
	/* each call in a block of exactly len bytes, as a read() leaves it */
	char *exact = fz_dup((const uint8_t *)buf, len);
	int rc = pg_http_parse_request(exact, len, MAX_BODY, req, status, why);

	if (rc == PG_HTTP_BAD) {
		FZ_CHECK(*status >= 400 && *status < 600 && *why && **why);
		FZ_CHECK(pg_http_reason(*status) != NULL);
	}
	if (rc == PG_HTTP_COMPLETE) {
		FZ_CHECK(req->total_len == req->head_len + req->content_length);
		FZ_CHECK(req->total_len <= len);
		FZ_CHECK(req->path_len >= 1 && req->path[0] == '/');
		FZ_CHECK(req->path >= exact && req->path + req->path_len <= exact + len);
		if (req->request_id)
			FZ_CHECK(req->request_id + req->request_id_len <= exact + req->head_len);
	}
	free(exact);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	size_t off = 0;

	for (int n = 0; n < 16 && off < size; n++) {
		struct pg_http_request req, part;
		int status = 0, st2 = 0;
		const char *why = NULL, *why2 = NULL;
		int rc = parse(buf + off, size - off, &req, &status, &why);

		if (rc != PG_HTTP_COMPLETE)
			break;
		/* every prefix: incomplete, or for one that ends inside the head, the
		 * same verdict a partial head gets (incomplete) */
		for (size_t k = 0; k < req.total_len; k += 1 + k / 8) {
			int r2 = parse(buf + off, k, &part, &st2, &why2);
			FZ_CHECK(r2 == PG_HTTP_INCOMPLETE);
			if (k >= req.head_len)
				FZ_CHECK(part.head_len == req.head_len &&
					 part.total_len == req.total_len);
		}
		FZ_CHECK(req.total_len > 0);
		off += req.total_len;
	}
	return 0;
}
