#include "io/dataset.h"

#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/jsonw.h"
#include "io/fsutil.h"
#include "io/results.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

/* Token counts from the server's /tokenize, one keep-alive connection. */
struct tokenizer {
	CURL *easy;
	struct curl_slist *headers;
	char *url;
	const char *model;
	bool works;       /* the first call succeeded */
	bool tried;
	struct pg_buf resp;
};

static size_t collect(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	pg_buf_add(userdata, ptr, size * nmemb);
	return size * nmemb;
}

static int tokenize_remote(struct tokenizer *tk, const char *text, long *count)
{
	json_t *req = json_pack("{s:s?, s:s, s:b}", "model", tk->model, "prompt", text,
				"add_special_tokens", 0);
	struct pg_buf body = PG_BUF_INIT;
	json_t *resp = NULL, *v;
	long code = 0;
	int rc = -1;

	pg_json_write(&body, req, 0);
	pg_buf_reset(&tk->resp);
	curl_easy_setopt(tk->easy, CURLOPT_POSTFIELDS, body.ptr);
	curl_easy_setopt(tk->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body.len);
	if (curl_easy_perform(tk->easy) == CURLE_OK &&
	    curl_easy_getinfo(tk->easy, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK && code == 200 &&
	    (resp = json_loadb(tk->resp.ptr, tk->resp.len, 0, NULL))) {
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
		if (!tk->tried) {
			tk->tried = true;
			tk->works = rc == 0;
		} else if (rc) {
			/* it answered before: a failure now is the server failing */
			return pg_error_set(err, PG_EINFRA, "POST %s failed while counting prompt tokens", tk->url);
		}
		if (!rc)
			return 0;
	}
	*count = pg_token_estimate(text);
	return 0;
}

int pg_dataset_load(struct pg_prompts *out, const struct pg_test *t, size_t n, bool chat,
		    const char *base_url, const char *model, const char *api_key,
		    struct pg_error *err)
{
	struct tokenizer tk = { 0 };
	struct pg_buf file = PG_BUF_INIT, auth = PG_BUF_INIT;
	json_t *root = NULL;
	int rc;

	if (t->dataset.kind == PG_DATASET_RANDOM)
		return pg_dataset_random(out, n, &t->dataset, chat, t->client.seed, err);

	if (!t->dataset.path)
		return pg_error_set(err, PG_ECONFIG, "%s: dataset: a %s dataset needs a path", t->name,
				    t->dataset.kind == PG_DATASET_SHAREGPT ? "sharegpt" : "jsonl");
	pg_buf_init(&tk.resp);
	if (base_url) {
		struct pg_buf url = PG_BUF_INIT;
		pg_buf_printf(&url, "%s/tokenize", base_url);
		tk.url = pg_buf_detach(&url);
		tk.model = model;
		tk.easy = curl_easy_init();
		tk.headers = curl_slist_append(NULL, "Content-Type: application/json");
		tk.headers = curl_slist_append(tk.headers, "Expect:");
		if (api_key) {
			pg_buf_printf(&auth, "Authorization: Bearer %s", api_key);
			tk.headers = curl_slist_append(tk.headers, auth.ptr);
		}
		curl_easy_setopt(tk.easy, CURLOPT_URL, tk.url);
		curl_easy_setopt(tk.easy, CURLOPT_HTTPHEADER, tk.headers);
		curl_easy_setopt(tk.easy, CURLOPT_WRITEFUNCTION, collect);
		curl_easy_setopt(tk.easy, CURLOPT_WRITEDATA, &tk.resp);
		curl_easy_setopt(tk.easy, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(tk.easy, CURLOPT_PROXY, "");
		curl_easy_setopt(tk.easy, CURLOPT_TIMEOUT_MS, 30000L);
	}

	if ((rc = pg_file_read(t->dataset.path, &file, err))) {
		if (rc == PG_ENOTFOUND)
			rc = pg_error_set(err, PG_ECONFIG, "%s: dataset file not found", t->dataset.path);
		goto done;
	}
	if (t->dataset.kind == PG_DATASET_SHAREGPT) {
		if (!(root = pg_json_parse(file.ptr, file.len, t->dataset.path, err))) {
			rc = PG_ECONFIG;
			err->code = PG_ECONFIG;
			goto done;
		}
		rc = pg_dataset_sharegpt(out, root, t->dataset.path, n, t->dataset.output_len,
					 t->client.seed, count_tokens, &tk, err);
	} else {
		rc = pg_dataset_jsonl(out, file.ptr, file.len, t->dataset.path, n, t->dataset.output_len,
				      t->client.seed, count_tokens, &tk, err);
	}
	if (!rc)
		out->input_source = tk.works ? "tokenize_endpoint" : "estimate";
done:
	json_decref(root);
	pg_buf_release(&file);
	/* the key may be in the buffer: clear it before freeing */
	if (auth.len)
		memset(auth.ptr, 0, auth.len);
	pg_buf_release(&auth);
	pg_buf_release(&tk.resp);
	curl_slist_free_all(tk.headers);
	if (tk.easy)
		curl_easy_cleanup(tk.easy);
	free(tk.url);
	return rc;
}
