#include "mockserver/http.h"

#include <string.h>
#include <strings.h>

static bool is_tchar(unsigned char c)
{
	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return true;
	return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static bool field_eq(const char *s, size_t len, const char *lit)
{
	return strlen(lit) == len && !strncasecmp(s, lit, len);
}

/* Does the comma-separated header value contain token lit (any case)? */
static bool has_token(const char *v, size_t len, const char *lit)
{
	size_t i = 0;

	while (i < len) {
		size_t start, end;
		while (i < len && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		start = i;
		while (i < len && v[i] != ',')
			i++;
		end = i;
		while (end > start && (v[end - 1] == ' ' || v[end - 1] == '\t'))
			end--;
		if (field_eq(v + start, end - start, lit))
			return true;
	}
	return false;
}

static int bad(int code, const char *reason, int *status, const char **why)
{
	*status = code;
	*why = reason;
	return PG_HTTP_BAD;
}

/* Find the blank line ending the head; returns the offset just past it,
 * or 0 when it is not in buf yet. */
static size_t find_head_end(const char *buf, size_t start, size_t len)
{
	for (size_t i = start; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (i + 1 < len && buf[i + 1] == '\n')
			return i + 2;
		if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

/* Next line in [*pos, end): sets *line and *line_len, without its CR LF.
 * Returns false on a stray CR inside the line. */
static bool next_line(const char *buf, size_t *pos, size_t end, const char **line, size_t *line_len)
{
	size_t i = *pos;
	const char *nl = memchr(buf + i, '\n', end - i);
	size_t stop = nl ? (size_t)(nl - buf) : end;
	size_t n = stop - i;

	*line = buf + i;
	if (n && buf[stop - 1] == '\r')
		n--;
	*pos = nl ? stop + 1 : end;
	*line_len = n;
	return memchr(*line, '\r', n) == NULL;
}

static int parse_request_line(const char *line, size_t n, struct pg_http_request *req, int *status,
			      const char **why)
{
	size_t i = 0, start;

	while (i < n && is_tchar((unsigned char)line[i]))
		i++;
	if (i == 0 || i >= n || line[i] != ' ')
		return bad(400, "malformed request line", status, why);
	req->method_str = line;
	req->method_len = i;
	if (i == 3 && !strncmp(line, "GET", 3))
		req->method = PG_HTTP_GET;
	else if (i == 4 && !strncmp(line, "POST", 4))
		req->method = PG_HTTP_POST;
	else if (i == 4 && !strncmp(line, "HEAD", 4))
		req->method = PG_HTTP_HEAD;
	else
		req->method = PG_HTTP_OTHER;

	start = ++i;
	while (i < n && line[i] != ' ') {
		unsigned char c = (unsigned char)line[i];
		if (c <= 0x20 || c == 0x7f)
			return bad(400, "malformed request target", status, why);
		i++;
	}
	if (i == start || i >= n || line[start] != '/')
		return bad(400, "malformed request target", status, why);
	req->path = line + start;
	req->path_len = i - start;
	{
		const char *q = memchr(req->path, '?', req->path_len);
		if (q)
			req->path_len = (size_t)(q - req->path);
	}
	i++;
	if (n - i != 8 || strncmp(line + i, "HTTP/", 5) || line[i + 6] != '.' ||
	    line[i + 5] < '0' || line[i + 5] > '9' || line[i + 7] < '0' || line[i + 7] > '9')
		return bad(400, "malformed HTTP version", status, why);
	if (line[i + 5] != '1')
		return bad(505, "only HTTP/1.x is supported", status, why);
	req->minor_version = line[i + 7] - '0';
	return 0;
}

static int parse_content_length(const char *v, size_t n, size_t *out)
{
	size_t value = 0;

	if (n == 0 || n > 18)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		value = value * 10 + (size_t)(v[i] - '0');
	}
	*out = value;
	return 0;
}

int pg_http_parse_request(const char *buf, size_t len, size_t max_body, struct pg_http_request *req,
			  int *status, const char **why)
{
	size_t start = 0, head_end, pos;
	const char *line;
	size_t n;
	bool conn_close = false, conn_keep_alive = false;
	int rc;

	memset(req, 0, sizeof(*req));
	/* RFC 9112 §2.2: ignore empty lines before the request line. */
	while (start < len && (buf[start] == '\n' ||
			       (buf[start] == '\r' && start + 1 < len && buf[start + 1] == '\n')))
		start += buf[start] == '\r' ? 2 : 1;
	if (start == len || (len - start == 1 && buf[start] == '\r'))
		return PG_HTTP_INCOMPLETE;

	head_end = find_head_end(buf, start, len);
	if (!head_end) {
		if (len > PG_HTTP_MAX_HEAD)
			return bad(431, "request head too large", status, why);
		return PG_HTTP_INCOMPLETE;
	}
	if (head_end > PG_HTTP_MAX_HEAD)
		return bad(431, "request head too large", status, why);

	pos = start;
	if (!next_line(buf, &pos, head_end, &line, &n))
		return bad(400, "stray CR in request line", status, why);
	rc = parse_request_line(line, n, req, status, why);
	if (rc)
		return rc;

	for (;;) {
		const char *name, *value;
		size_t name_len, value_len, i = 0;

		if (!next_line(buf, &pos, head_end, &line, &n))
			return bad(400, "stray CR in header", status, why);
		if (n == 0)
			break;
		if (line[0] == ' ' || line[0] == '\t')
			return bad(400, "obsolete header line folding", status, why);
		while (i < n && is_tchar((unsigned char)line[i]))
			i++;
		if (i == 0 || i >= n || line[i] != ':')
			return bad(400, "malformed header", status, why);
		name = line;
		name_len = i++;
		while (i < n && (line[i] == ' ' || line[i] == '\t'))
			i++;
		value = line + i;
		value_len = n - i;
		while (value_len && (value[value_len - 1] == ' ' || value[value_len - 1] == '\t'))
			value_len--;
		for (size_t k = 0; k < value_len; k++) {
			unsigned char c = (unsigned char)value[k];
			if ((c < 0x20 && c != '\t') || c == 0x7f)
				return bad(400, "control character in header value", status, why);
		}

		if (field_eq(name, name_len, "content-length")) {
			size_t cl;
			if (parse_content_length(value, value_len, &cl))
				return bad(400, "bad Content-Length", status, why);
			if (req->has_content_length && cl != req->content_length)
				return bad(400, "conflicting Content-Length", status, why);
			req->has_content_length = true;
			req->content_length = cl;
		} else if (field_eq(name, name_len, "transfer-encoding")) {
			return bad(501, "Transfer-Encoding in requests is not supported", status,
				   why);
		} else if (field_eq(name, name_len, "connection")) {
			conn_close |= has_token(value, value_len, "close");
			conn_keep_alive |= has_token(value, value_len, "keep-alive");
		} else if (field_eq(name, name_len, "expect")) {
			if (!field_eq(value, value_len, "100-continue"))
				return bad(417, "unsupported Expect", status, why);
			req->expect_continue = req->minor_version >= 1;
		} else if (field_eq(name, name_len, "x-request-id")) {
			req->request_id = value;
			req->request_id_len = value_len;
		}
	}

	if (req->content_length > max_body)
		return bad(413, "request body too large", status, why);
	req->keep_alive = req->minor_version >= 1 ? !conn_close : (conn_keep_alive && !conn_close);
	req->head_len = head_end;
	req->total_len = head_end + req->content_length;
	req->body = buf + head_end;
	if (len < req->total_len)
		return PG_HTTP_INCOMPLETE;
	return PG_HTTP_COMPLETE;
}

const char *pg_http_reason(int status)
{
	switch (status) {
	case 100:
		return "Continue";
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 408:
		return "Request Timeout";
	case 413:
		return "Content Too Large";
	case 417:
		return "Expectation Failed";
	case 431:
		return "Request Header Fields Too Large";
	case 500:
		return "Internal Server Error";
	case 501:
		return "Not Implemented";
	case 503:
		return "Service Unavailable";
	case 505:
		return "HTTP Version Not Supported";
	}
	return "Unknown";
}
