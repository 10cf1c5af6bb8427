#ifndef PERFGATE_MOCKSERVER_PROXY_H
#define PERFGATE_MOCKSERVER_PROXY_H

#include <stddef.h>

struct pg_buf;
struct pg_strv;

/*
 * The pure parts of `perfgate mock-server --role proxy`
 * (mockserver/proxy_io.h): what the proxy asks a prefill worker, and its
 * lists of workers.
 */

/*
 * The prefill request made of a client's generation request body: the
 * same request with max_tokens 1 (and max_completion_tokens 1 when the
 * client gave it), not streamed, without stream_options -- vLLM's P/D
 * proxies ask their prefill worker for exactly that. Appended to out;
 * -1 (nothing appended) when body is not a JSON object.
 */
int pg_mock_prefill_body(struct pg_buf *out, const char *body, size_t len);

/* "http://a:1,http://b:2" into its URLs, each without a trailing '/'.
 * Appended to out; returns how many. */
size_t pg_mock_split_urls(struct pg_strv *out, const char *list);

#endif
