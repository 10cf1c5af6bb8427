#include "mockserver/proxy_io.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/strutil.h"
#include "mockserver/http.h"
#include "mockserver/proxy.h"
#include "mockserver/server_io.h"

#include <curl/curl.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_BODY (64u << 20)

struct proxy {
	const struct pg_mock_server_config *cfg;
	struct pg_strv prefill, decode;
	atomic_ulong *next; /* [0] prefill, [1] decode: shared by every connection's process */
	int listen_fd;
};

static void logf_(const struct proxy *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void logf_(const struct proxy *p, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n = (int)sizeof("mock-server proxy: ") - 1, k;

	if (!p->cfg->log)
		return;
	/* one write per line: every connection's process writes to the same
	 * log, and pieces written apart interleave with another's */
	memcpy(line, "mock-server proxy: ", (size_t)n);
	va_start(ap, fmt);
	k = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	n += k > 0 ? k : 0;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	fflush(p->cfg->log);
	for (int off = 0; off < n;) {
		ssize_t w = write(fileno(p->cfg->log), line + off, (size_t)(n - off));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (int)w;
	}
}

static int write_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t n = write(fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* ---- one upstream request ------------------------------------------- */

/* What is relayed to the client as the decode worker answers. */
struct relay {
	int fd;          /* the client */
	long status;     /* the worker's, once its head is in */
	char ctype[128]; /* its Content-Type */
	bool head_sent;
	bool failed;            /* the client went away */
	struct pg_buf *collect; /* non-NULL: keep the body instead of relaying it */
};

static size_t on_header(char *line, size_t size, size_t n, void *ctx)
{
	struct relay *rl = ctx;
	size_t len = size * n;

	if (len > 12 && !strncmp(line, "HTTP/", 5)) {
		/* the status line: the status before the first body byte */
		const char *sp = memchr(line, ' ', len);
		long st = 0;
		for (const char *c = sp ? sp + 1 : line + len;
		     c < line + len && *c >= '0' && *c <= '9'; c++)
			st = st * 10 + (*c - '0');
		if (st)
			rl->status = st;
		rl->ctype[0] = '\0'; /* a new head (after 100 Continue) */
	} else if (len > 13 && !strncasecmp(line, "content-type:", 13)) {
		const char *v = line + 13;
		size_t m;
		while (*v == ' ')
			v++;
		m = strcspn(v, "\r\n");
		snprintf(rl->ctype, sizeof(rl->ctype), "%.*s", (int)m, v);
	}
	return len;
}

static void send_head(struct relay *rl, long status)
{
	char head[512];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %ld %s\r\nContent-Type: %s\r\nTransfer-Encoding: chunked\r\n"
			 "Cache-Control: no-cache\r\n\r\n",
			 status, pg_http_reason((int)status),
			 rl->ctype[0] ? rl->ctype : "application/json");
	rl->head_sent = true;
	if (write_all(rl->fd, head, (size_t)n))
		rl->failed = true;
}

static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
	struct relay *rl = ctx;
	size_t len = size * n;
	char hex[24];
	int h;

	if (rl->collect) {
		pg_buf_add(rl->collect, data, len);
		return len;
	}
	if (!rl->head_sent)
		send_head(rl, rl->status ? rl->status : 200);
	if (!len || rl->failed)
		return rl->failed ? 0 : len;
	h = snprintf(hex, sizeof(hex), "%zx\r\n", len);
	if (write_all(rl->fd, hex, (size_t)h) || write_all(rl->fd, data, len) ||
	    write_all(rl->fd, "\r\n", 2)) {
		rl->failed = true;
		return 0; /* stop the transfer */
	}
	return len;
}

/* POST body to url; the answer goes to rl. Returns the curl code. */
static CURLcode post(CURL *h, const char *url, const char *path, const char *body, size_t len,
		     const char *request_id, struct relay *rl)
{
	struct pg_buf full = PG_BUF_INIT, rid = PG_BUF_INIT;
	struct curl_slist *headers = NULL;
	CURLcode rc;

	pg_buf_printf(&full, "%s%s", url, path);
	headers = curl_slist_append(headers, "Content-Type: application/json");
	if (request_id) {
		pg_buf_printf(&rid, "X-Request-Id: %s", request_id);
		headers = curl_slist_append(headers, rid.ptr);
	}
	curl_easy_setopt(h, CURLOPT_URL, full.ptr);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, rl);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, rl);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &rl->status);
	curl_slist_free_all(headers);
	pg_buf_release(&full);
	pg_buf_release(&rid);
	return rc;
}

/* ---- one client connection ------------------------------------------ */

static int answer(int fd, int status, const char *ctype, const char *body, size_t len,
		  bool keep_alive)
{
	char head[512];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s\r\n",
			 status, pg_http_reason(status), ctype, len,
			 keep_alive ? "" : "Connection: close\r\n");
	return write_all(fd, head, (size_t)n) || write_all(fd, body, len) ? -1 : 0;
}

static int answer_error(int fd, int status, const char *message, bool keep_alive)
{
	struct pg_buf b = PG_BUF_INIT;
	int rc;

	pg_buf_printf(&b,
		      "{\"error\":{\"message\":\"%s\",\"type\":\"BadRequestError\",\"code\":%d}}",
		      message, status);
	rc = answer(fd, status, "application/json", b.ptr, b.len, keep_alive);
	pg_buf_release(&b);
	return rc;
}

static const char *pick(const struct proxy *p, const struct pg_strv *workers, int which)
{
	unsigned long k = atomic_fetch_add(&p->next[which], 1);
	return workers->v[k % workers->n];
}

/*
 * One generation request: prefill (max_tokens 1), then decode, relayed.
 * Returns 0 when the connection can carry on.
 */
static int generate(const struct proxy *p, CURL *h, int fd, const struct pg_http_request *req)
{
	struct pg_buf path = PG_BUF_INIT, pre = PG_BUF_INIT, pre_out = PG_BUF_INIT;
	struct pg_buf rid = PG_BUF_INIT;
	struct relay rl = { fd, 0, "", false, false, NULL };
	const char *pf = pick(p, &p->prefill, 0);
	const char *dc = pick(p, &p->decode, 1);
	CURLcode rc;
	int ret = 0;

	pg_buf_add(&path, req->path, req->path_len);
	if (req->request_id)
		pg_buf_add(&rid, req->request_id, req->request_id_len);
	if (pg_mock_prefill_body(&pre, req->body, req->content_length)) {
		ret = answer_error(fd, 400, "the body is not a JSON object", req->keep_alive);
		goto done;
	}
	rl.collect = &pre_out;
	rc = post(h, pf, path.ptr, pre.ptr, pre.len, rid.len ? rid.ptr : NULL, &rl);
	if (rc != CURLE_OK) {
		logf_(p, "prefill %s: %s", pf, curl_easy_strerror(rc));
		ret = answer_error(fd, 502, "the prefill worker did not answer", req->keep_alive);
		goto done;
	}
	if (rl.status != 200) {
		/* the prefill worker's own error is the answer */
		ret = answer(fd, (int)rl.status, rl.ctype[0] ? rl.ctype : "application/json",
			     pre_out.ptr ? pre_out.ptr : "", pre_out.len, req->keep_alive);
		goto done;
	}
	rl = (struct relay){ fd, 0, "", false, false, NULL };
	rc = post(h, dc, path.ptr, req->body, req->content_length, rid.len ? rid.ptr : NULL, &rl);
	if (rc != CURLE_OK && !rl.head_sent) {
		logf_(p, "decode %s: %s", dc, curl_easy_strerror(rc));
		ret = answer_error(fd, 502, "the decode worker did not answer", req->keep_alive);
		goto done;
	}
	if (rc != CURLE_OK || rl.failed) {
		ret = -1; /* cut mid-answer: the client sees the connection end */
		goto done;
	}
	if (!rl.head_sent)
		send_head(&rl, rl.status);
	/* logged before the answer's last bytes: once the client has them it
	 * may stop the proxy, whose connection processes die with it */
	if (p->cfg->log_requests)
		logf_(p, "%.*s: prefill %s, decode %s", (int)req->path_len, req->path, pf, dc);
	ret = rl.failed || write_all(fd, "0\r\n\r\n", 5) ? -1 : 0;
done:
	pg_buf_release(&path);
	pg_buf_release(&pre);
	pg_buf_release(&pre_out);
	pg_buf_release(&rid);
	return ret || !req->keep_alive ? -1 : 0;
}

/* A GET other than /health: the first decode worker's answer. */
static int forward_get(const struct proxy *p, CURL *h, int fd, const struct pg_http_request *req)
{
	struct pg_buf url = PG_BUF_INIT, body = PG_BUF_INIT;
	struct relay rl = { fd, 0, "", false, false, &body };
	CURLcode rc;
	int ret;

	pg_buf_printf(&url, "%s%.*s", p->decode.v[0], (int)req->path_len, req->path);
	curl_easy_setopt(h, CURLOPT_URL, url.ptr);
	curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &rl);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &rl);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &rl.status);
	if (rc != CURLE_OK)
		ret = answer_error(fd, 502, "the decode worker did not answer", req->keep_alive);
	else
		ret = answer(fd, (int)rl.status, rl.ctype[0] ? rl.ctype : "application/json",
			     body.ptr ? body.ptr : "", body.len, req->keep_alive);
	/* the next POST sets its own method */
	curl_easy_setopt(h, CURLOPT_HTTPGET, 0L);
	pg_buf_release(&url);
	pg_buf_release(&body);
	return ret || !req->keep_alive ? -1 : 0;
}

static bool path_is(const struct pg_http_request *r, const char *s)
{
	return r->path_len == strlen(s) && !memcmp(r->path, s, r->path_len);
}

/* Serve one client connection until it closes (a forked process). */
static void serve(const struct proxy *p, int fd)
{
	struct pg_buf in = PG_BUF_INIT;
	CURL *h = curl_easy_init();
	char chunk[65536];

	for (;;) {
		struct pg_http_request req;
		const char *why = NULL;
		int status = 0, r;

		r = in.len ? pg_http_parse_request(in.ptr, in.len, MAX_BODY, &req, &status, &why)
			   : PG_HTTP_INCOMPLETE;
		if (r == PG_HTTP_BAD) {
			answer_error(fd, status, why, false);
			break;
		}
		if (r == PG_HTTP_INCOMPLETE) {
			ssize_t n = read(fd, chunk, sizeof(chunk));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			pg_buf_add(&in, chunk, (size_t)n);
			continue;
		}
		if (req.method == PG_HTTP_GET && path_is(&req, "/health"))
			r = answer(fd, 200, "application/json", "", 0, req.keep_alive) ||
					    !req.keep_alive
				    ? -1
				    : 0;
		else if (req.method == PG_HTTP_GET)
			r = forward_get(p, h, fd, &req);
		else if (req.method == PG_HTTP_POST && (path_is(&req, "/v1/completions") ||
							path_is(&req, "/v1/chat/completions")))
			r = generate(p, h, fd, &req);
		else
			r = answer_error(fd, 404,
					 "the proxy serves /v1/completions and "
					 "/v1/chat/completions",
					 req.keep_alive) ||
					    !req.keep_alive
				    ? -1
				    : 0;
		if (r)
			break;
		memmove(in.ptr, in.ptr + req.total_len, in.len - req.total_len);
		pg_buf_truncate(&in, in.len - req.total_len);
	}
	curl_easy_cleanup(h);
	pg_buf_release(&in);
}

/* ---- the listener ----------------------------------------------------- */

static int listen_on(struct proxy *p, struct pg_error *err)
{
	int rc = pg_mock_bind(p->cfg, 0, &p->listen_fd, NULL, err);

	if (!rc && listen(p->listen_fd, 1024))
		rc = pg_error_set(err, PG_EINFRA, "listen on %s:%ld: %s", p->cfg->host,
				  p->cfg->port, strerror(errno));
	return rc;
}

static volatile sig_atomic_t stopping;

static void on_stop(int sig)
{
	stopping = sig;
}

int pg_mock_proxy_run(const struct pg_mock_server_config *cfg, struct pg_error *err)
{
	struct proxy p = { cfg, PG_STRV_INIT, PG_STRV_INIT, NULL, -1 };
	struct sigaction sa;
	sigset_t block, old;
	pid_t self = getpid();
	int rc;

	pg_mock_split_urls(&p.prefill, cfg->prefill_urls);
	pg_mock_split_urls(&p.decode, cfg->decode_urls);
	p.next = mmap(NULL, 2 * sizeof(*p.next), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		      -1, 0);
	if (p.next == MAP_FAILED) {
		rc = pg_error_set(err, PG_EINFRA, "mmap: %s", strerror(errno));
		p.next = NULL;
		goto done;
	}
	atomic_init(&p.next[0], 0);
	atomic_init(&p.next[1], 0);
	/* SIGTERM/SIGINT end the accept loop at once (ppoll unblocks them
	 * only while waiting: no stop is lost); connections' processes die
	 * with the proxy */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sa.sa_flags = SA_NOCLDWAIT; /* no zombies to reap */
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &old);
	if ((rc = listen_on(&p, err)))
		goto done;
	logf_(&p, "listening on %s:%ld, prefill %s, decode %s", cfg->host, cfg->port,
	      cfg->prefill_urls, cfg->decode_urls);
	while (!stopping) {
		struct pollfd pfd = { p.listen_fd, POLLIN, 0 };
		int fd, one = 1;
		pid_t pid;

		if (ppoll(&pfd, 1, NULL, &old) <= 0)
			continue;
		fd = accept4(p.listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		pid = fork();
		if (pid == 0) {
			/* the connection's process: gone when the proxy is */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != self)
				_exit(0);
			sa.sa_handler = SIG_DFL;
			sa.sa_flags = 0;
			sigaction(SIGTERM, &sa, NULL);
			sigaction(SIGINT, &sa, NULL);
			sigprocmask(SIG_SETMASK, &old, NULL);
			close(p.listen_fd);
			serve(&p, fd);
			close(fd);
			_exit(0);
		}
		if (pid < 0)
			logf_(&p, "fork: %s", strerror(errno));
		close(fd);
	}
	logf_(&p, "stopping (signal %d)", (int)stopping);
	rc = 0;
done:
	if (p.listen_fd >= 0)
		close(p.listen_fd);
	if (p.next)
		munmap(p.next, 2 * sizeof(*p.next));
	sigprocmask(SIG_SETMASK, &old, NULL);
	pg_strv_release(&p.prefill);
	pg_strv_release(&p.decode);
	return rc;
}
