#include "loadgen/dataset_io.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/jsonw.h"
#include "sys/fsutil.h"
#include "loadgen/httpload_io.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

/* Token counts from the server's /tokenize, one keep-alive connection. */
struct tokenizer {
	CURL *easy;
	struct curl_slist *headers;
	char *url;
	const char *model;
	bool works; /* the first call succeeded */
	bool tried;
	struct pg_buf resp;
};

/* 0 with *count, -1 when the server gave no count, PG_ECANCEL when stopped. */
static int tokenize_remote(struct tokenizer *tk, const char *text, long *count)
{
	/* special tokens included: vLLM's ShareGPT sampler filters on
	 * len(tokenizer(text).input_ids), which counts the BOS token */
	json_t *req = json_pack("{s:s?, s:s, s:b}", "model", tk->model, "prompt", text,
				"add_special_tokens", 1);
	struct pg_buf body = PG_BUF_INIT;
	json_t *resp = NULL, *v;
	long code = 0;
	CURLcode cc;
	int rc = -1;

	pg_json_write(&body, req, 0);
	pg_buf_reset(&tk->resp);
	curl_easy_setopt(tk->easy, CURLOPT_POSTFIELDS, body.ptr);
	curl_easy_setopt(tk->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body.len);
	cc = curl_easy_perform(tk->easy);
	if (cc == CURLE_ABORTED_BY_CALLBACK) {
		rc = PG_ECANCEL;
	} else if (cc == CURLE_OK &&
		   curl_easy_getinfo(tk->easy, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK &&
		   code == 200 && (resp = json_loadb(tk->resp.ptr, tk->resp.len, 0, NULL))) {
		if (json_is_integer(v = json_object_get(resp, "count"))) {
			*count = (long)json_integer_value(v);
			rc = 0;
		} else if (json_is_array(v = json_object_get(resp, "tokens"))) {
			*count = (long)json_array_size(v);
			rc = 0;
		}
	}
	json_decref(resp);
	json_decref(req);
	pg_buf_release(&body);
	return rc;
}

static int count_tokens(void *ctx, const char *text, long *count, struct pg_error *err)
{
	struct tokenizer *tk = ctx;

	if (tk->easy && (!tk->tried || tk->works)) {
		int rc = tokenize_remote(tk, text, count);
		if (rc == PG_ECANCEL)
			return pg_error_set(err, PG_ECANCEL, "stopped by a signal");
		if (!tk->tried) {
			tk->tried = true;
			tk->works = rc == 0;
		} else if (rc) {
			/* it answered before: a failure now is the server failing */
			return pg_error_set(err, PG_EINFRA,
					    "POST %s failed while counting prompt tokens", tk->url);
		}
		if (!rc)
			return 0;
	}
	*count = pg_token_estimate(text);
	return 0;
}

int pg_dataset_load(struct pg_prompts *out, const struct pg_test *t, size_t n, bool chat,
		    const struct pg_dataset_server *srv, struct pg_error *err)
{
	struct tokenizer tk = { 0 };
	struct pg_buf file = PG_BUF_INIT;
	int rc;

	if (t->dataset.kind == PG_DATASET_RANDOM)
		return pg_dataset_random(out, n, &t->dataset, chat, t->client.seed, err);

	if (!t->dataset.path)
		return pg_error_set(err, PG_ECONFIG, "%s: dataset: a %s dataset needs a path",
				    t->name,
				    t->dataset.kind == PG_DATASET_SHAREGPT ? "sharegpt"
				    : t->dataset.kind == PG_DATASET_SONNET ? "sonnet"
									   : "jsonl");
	pg_buf_init(&tk.resp);
	if (srv && srv->base_url) {
		struct pg_buf url = PG_BUF_INIT;
		pg_buf_printf(&url, "%s/tokenize", srv->base_url);
		tk.url = pg_buf_detach(&url);
		tk.model = srv->model;
		tk.easy = curl_easy_init();
		tk.headers = curl_slist_append(NULL, "Content-Type: application/json");
		tk.headers = curl_slist_append(tk.headers, "Expect:");
		tk.headers = pg_hl_add_bearer(tk.headers, srv->api_key);
		pg_hl_easy_prepare(tk.easy, tk.url, tk.headers, &tk.resp, 30, srv->stop);
	}

	if ((rc = pg_file_read(t->dataset.path, &file, err))) {
		if (rc == PG_ENOTFOUND)
			rc = pg_error_set(err, PG_ECONFIG, "%s: dataset file not found",
					  t->dataset.path);
		goto done;
	}
	if (t->dataset.kind == PG_DATASET_SHAREGPT) {
		rc = pg_dataset_sharegpt(out, file.ptr, file.len, t->dataset.path, n,
					 t->dataset.output_len, t->client.seed, count_tokens, &tk,
					 err);
	} else if (t->dataset.kind == PG_DATASET_SONNET) {
		rc = pg_dataset_sonnet(out, file.ptr, file.len, t->dataset.path, n,
				       t->dataset.input_len, t->dataset.output_len,
				       t->dataset.prefix_len, t->client.seed, count_tokens, &tk,
				       err);
	} else {
		rc = pg_dataset_jsonl(out, file.ptr, file.len, t->dataset.path, n,
				      t->dataset.output_len, t->client.seed, count_tokens, &tk,
				      err);
	}
	if (!rc)
		out->input_source = tk.works ? "tokenize_endpoint" : "estimate";
done:
	pg_buf_release(&file);
	pg_buf_release(&tk.resp);
	pg_hl_free_headers(tk.headers);
	if (tk.easy)
		curl_easy_cleanup(tk.easy);
	free(tk.url);
	return rc;
}
