#include "runner/startup_io.h"

#include "base/buf.h"
#include "base/error.h"
#include "loadgen/httpload_io.h"
#include "suite/suite.h"

#include <curl/curl.h>
#include <ftw.h>
#include <stdio.h>

int pg_startup_first_answer(const char *url, const char *body, const struct pg_kvlist *extra,
			    const char *api_key, double timeout, const volatile sig_atomic_t *stop,
			    struct pg_error *err)
{
	CURL *curl = curl_easy_init();
	struct curl_slist *headers = NULL;
	struct pg_buf resp = PG_BUF_INIT;
	char curl_err[CURL_ERROR_SIZE] = "";
	long code = 0;
	CURLcode rc;
	int ret = 0;

	if (!curl)
		return pg_error_set(err, PG_ERR, "curl_easy_init failed");
	headers = curl_slist_append(NULL, "Content-Type: application/json");
	for (size_t i = 0; extra && i < extra->n; i++) {
		struct pg_buf h = PG_BUF_INIT;
		pg_buf_printf(&h, "%s: %s", extra->items[i].key, extra->items[i].value);
		headers = curl_slist_append(headers, h.ptr);
		pg_buf_release(&h);
	}
	headers = pg_hl_add_bearer(headers, api_key);
	pg_hl_easy_prepare(curl, url, headers, &resp, timeout, stop);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_err);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
	rc = curl_easy_perform(curl);
	if (rc == CURLE_OK)
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
	if (rc == CURLE_ABORTED_BY_CALLBACK && stop && *stop)
		ret = pg_error_set(err, PG_ECANCEL, "cancelled while waiting for the first answer");
	else if (rc != CURLE_OK)
		ret = pg_error_set(err, PG_EINFRA, "first request: POST %s: %s", url,
				   curl_err[0] ? curl_err : curl_easy_strerror(rc));
	else if (code != 200)
		ret = pg_error_set(err, PG_EINFRA, "first request: POST %s: HTTP %ld: %.200s", url,
				   code, resp.ptr ? resp.ptr : "");
	pg_hl_free_headers(headers);
	curl_easy_cleanup(curl);
	pg_buf_release(&resp);
	return ret;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void pg_startup_remove_tree(const char *path)
{
	nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}
