/*
 * The dataset readers (loadgen/dataset.c): a ShareGPT JSON file, scanned
 * without being parsed whole (base/jsonscan.c), or JSON lines of
 * {"prompt", "output_len"} (FZ_JSONL), or a ShareGPT file's conversations
 * as multi-turn sessions' questions (FZ_SESSIONS). Byte 0 picks the number of prompts
 * and the fixed / default output length; token counts are the estimate the
 * runner uses without a /tokenize endpoint.
 */
#include "fuzz.h"

#include "base/error.h"
#include "loadgen/dataset.h"

static int estimate(void *ctx, const char *text, long *count, struct pg_error *err)
{
	(void)ctx;
	(void)err;
	*count = pg_token_estimate(text);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	unsigned ctl = fz_byte(&in);
	size_t n = 1 + (ctl & 15);
	long out_len = (ctl & 0x10) ? 16 : 0;
	struct pg_prompts p = { 0 };
	struct pg_error err = PG_ERROR_INIT;
	char *text = fz_dup(in.p, in.n);
	int rc;

#ifdef FZ_SESSIONS
	(void)out_len;
	(void)estimate;
	{
		size_t rounds = 1 + ((ctl >> 4) & 3);
		char **q = NULL;

		rc = pg_dataset_sharegpt_sessions(&q, text, in.n, "sharegpt.json", n, rounds, ctl,
						  &err);
		if (rc == 0) {
			for (size_t i = 0; i < n * rounds; i++)
				FZ_CHECK(q[i] != NULL);
		} else {
			FZ_CHECK(rc == PG_ECONFIG && err.msg[0] && !q);
		}
		pg_dataset_questions_free(q, n * rounds);
		free(text);
		return 0;
	}
#elif defined(FZ_JSONL)
	rc = pg_dataset_jsonl(&p, text, in.n, "prompts.jsonl", n, out_len, ctl, estimate, NULL,
			      &err);
#else
	rc = pg_dataset_sharegpt(&p, text, in.n, "sharegpt.json", n, out_len, ctl, estimate, NULL,
				 &err);
#endif
	if (rc == 0) {
		FZ_CHECK(p.n == n);
		for (size_t i = 0; i < p.n; i++) {
			FZ_CHECK(p.v[i].text != NULL);
			FZ_CHECK(p.v[i].output_len > 0);
			FZ_CHECK(p.v[i].prompt_len >= 0);
		}
	} else {
		FZ_CHECK(rc == PG_ECONFIG && err.msg[0]);
	}
	pg_prompts_release(&p);
	free(text);
	return 0;
}
