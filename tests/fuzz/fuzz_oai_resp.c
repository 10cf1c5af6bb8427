/*
 * The response state machine (loadgen/reqtrace.c pg_oai_resp_*): what the
 * load generator's libcurl callbacks (loadgen/httpload_io.c on_body) do with
 * a response body, then the metrics computed from the trace
 * (loadgen/loadstats.c).
 *
 * Input: byte 0 picks the HTTP status (0, 200, 200, 500) and the transport
 * outcome (clean end, timeout, disconnect); byte 1 the number of pieces
 * (1-8), the next bytes where the body is cut; the rest is the body.
 */
#include "fuzz.h"

#include <jansson.h>

#include "loadgen/loadstats.h"
#include "loadgen/reqtrace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int statuses[] = { 0, 200, 200, 500 };
	static const enum pg_fail transports[] = { PG_FAIL_NONE, PG_FAIL_NONE, PG_FAIL_TIMEOUT,
						   PG_FAIL_DISCONNECT };
	struct fz_in in = { data, size };
	unsigned ctl = fz_byte(&in);
	size_t n_cuts = fz_byte(&in) & 7, cuts[8], at = 0;
	struct pg_reqtrace t[2];
	struct pg_oai_resp r;
	struct pg_serve_stats_opts o = { 0 };
	json_t *obj;
	char *body;
	int64_t now = 1000;

	fz_cuts(&in, cuts, n_cuts);
	body = fz_dup(in.p, in.n);

	pg_reqtrace_init(&t[0]);
	pg_reqtrace_init(&t[1]);
	t[0].scheduled_ns = t[0].eligible_ns = t[0].sent_ns = 0;
	t[0].prompt_len = 12;
	pg_oai_resp_init(&r);
	pg_oai_resp_begin(&r, &t[0], statuses[ctl & 3]);
	for (size_t i = 0; i <= n_cuts; i++) {
		size_t to = i < n_cuts ? cuts[i] : in.n;
		char *piece = fz_dup((const uint8_t *)body + at, to - at);
		int rc = pg_oai_resp_feed(&r, now, piece, to - at);
		free(piece);
		now += 1000000;
		at = to;
		if (rc) {
			FZ_CHECK(t[0].fail != PG_FAIL_NONE);
			break;
		}
	}
	pg_oai_resp_end(&r, now, transports[(ctl >> 2) & 3],
			((ctl >> 2) & 3) == 3 ? "connection reset" : NULL);
	FZ_CHECK(pg_reqtrace_ok(&t[0]) == (t[0].fail == PG_FAIL_NONE && t[0].n_chunks > 0));
	FZ_CHECK(t[0].fail == PG_FAIL_NONE || t[0].error != NULL);
	(void)pg_reqtrace_output_tokens(&t[0]);
	(void)pg_reqtrace_input_tokens(&t[0]);

	/* the same parser object serves the next request on the connection */
	t[1].scheduled_ns = t[1].eligible_ns = t[1].sent_ns = 500;
	t[1].prompt_len = 3;
	pg_oai_resp_begin(&r, &t[1], 200);
	{
		static const char next[] = "data: {\"choices\":[{\"text\":\"a\"}]}\n\n";
		FZ_CHECK(pg_oai_resp_feed(&r, now, next, sizeof(next) - 1) == 0);
	}
	pg_oai_resp_end(&r, now + 5, PG_FAIL_NONE, NULL);
	FZ_CHECK(pg_reqtrace_ok(&t[1]));

	o.duration_s = (double)now / 1e9;
	o.detailed = true;
	obj = json_object();
	pg_serve_metrics(obj, t, 2, &o);
	json_decref(obj);

	pg_oai_resp_release(&r);
	pg_reqtrace_release(&t[0]);
	pg_reqtrace_release(&t[1]);
	free(body);
	return 0;
}
