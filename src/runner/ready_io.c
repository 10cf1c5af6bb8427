#include "runner/ready_io.h"

#include "base/buf.h"
#include "base/error.h"
#include "base/strutil.h"
#include "loadgen/httpload_io.h"
#include "sys/proc.h"

#include <curl/curl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Each try is short: a server that accepts but never answers must not eat
 * the whole budget in one request. */
#define TRY_TIMEOUT 5.0

static void pause_for(const struct pg_ready_opts *o, double seconds)
{
	if (o->proc) {
		pg_proc_wait(o->proc, seconds, o->stop);
		return;
	}
	for (double slept = 0; slept < seconds && !(o->stop && *o->stop); slept += 0.05) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

int pg_ready_wait(const struct pg_ready_opts *o, double *waited, struct pg_error *err)
{
	CURL *curl = curl_easy_init();
	struct curl_slist *headers = NULL;
	struct pg_buf last = PG_BUF_INIT;
	char curl_err[CURL_ERROR_SIZE];
	double start = o->proc ? o->proc->started : pg_monotonic();
	double deadline = pg_monotonic() + o->timeout;
	double elapsed;
	int ret;

	if (!curl)
		return pg_error_set(err, PG_ERR, "curl_easy_init failed");
	headers = pg_hl_add_bearer(NULL, o->api_key);
	pg_hl_easy_prepare(curl, o->url, headers, NULL, TRY_TIMEOUT, o->stop);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_err);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 1000L);
	pg_buf_puts(&last, "no answer yet");

	for (;;) {
		double left = deadline - pg_monotonic();
		double try_timeout = left < TRY_TIMEOUT ? left : TRY_TIMEOUT;
		long code = 0;
		CURLcode rc;

		if (o->stop && *o->stop) {
			ret = pg_error_set(err, PG_ECANCEL, "cancelled while waiting for %s",
					   o->url);
			goto done;
		}
		if (o->proc && pg_proc_exited(o->proc)) {
			struct pg_buf how = PG_BUF_INIT;
			pg_proc_describe(&how, o->proc->status);
			ret = pg_error_set(err, PG_EINFRA, "server %s after %.1fs while starting",
					   how.ptr, pg_monotonic() - start);
			pg_buf_release(&how);
			goto done;
		}
		if (left <= 0) {
			ret = pg_error_set(err, PG_EINFRA, "server not ready after %gs: GET %s: %s",
					   o->timeout, o->url, last.ptr);
			goto done;
		}
		curl_err[0] = '\0';
		curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)(try_timeout * 1000) + 1);
		rc = curl_easy_perform(curl);
		if (rc == CURLE_ABORTED_BY_CALLBACK)
			continue; /* stopped: said at the top of the loop */
		if (rc == CURLE_OK)
			curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
		if (rc == CURLE_OK && code == 200) {
			if (waited)
				*waited = pg_monotonic() - start;
			ret = 0;
			goto done;
		}
		pg_buf_reset(&last);
		if (rc == CURLE_OK)
			pg_buf_printf(&last, "HTTP %ld", code);
		else
			pg_buf_puts(&last, curl_err[0] ? curl_err : curl_easy_strerror(rc));
		/* often at first (every 10 ms in the first second: a startup
		 * test times small servers too) -- a small server is up in
		 * milliseconds, and
		 * the startup time recorded is only as exact as the polling --
		 * then calmer for engines that load weights for minutes: a
		 * refused loopback connection costs microseconds either way */
		elapsed = pg_monotonic() - start;
		pause_for(o, elapsed < 1 ? 0.01 : elapsed < 10 ? 0.05 : elapsed < 60 ? 0.25 : 1.0);
	}
done:
	pg_hl_free_headers(headers);
	curl_easy_cleanup(curl);
	pg_buf_release(&last);
	return ret;
}
