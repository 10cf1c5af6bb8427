#include "loadgen/sse.h"

#include <string.h>

void pg_sse_init(struct pg_sse *p, pg_sse_cb cb, void *ctx)
{
	memset(p, 0, sizeof(*p));
	pg_buf_init(&p->line);
	pg_buf_init(&p->data);
	pg_buf_init(&p->type);
	p->max_event = PG_SSE_MAX_EVENT_DEFAULT;
	p->cb = cb;
	p->ctx = ctx;
}

void pg_sse_reset(struct pg_sse *p)
{
	pg_buf_reset(&p->line);
	pg_buf_reset(&p->data);
	pg_buf_reset(&p->type);
	p->comments = 0;
	p->has_data = p->after_cr = p->started = p->overflow = false;
}

void pg_sse_release(struct pg_sse *p)
{
	pg_buf_release(&p->line);
	pg_buf_release(&p->data);
	pg_buf_release(&p->type);
}

static int dispatch(struct pg_sse *p)
{
	struct pg_sse_event ev;
	int rc;

	if (!p->has_data) {
		/* WHATWG: an event with no data is not dispatched */
		pg_buf_reset(&p->type);
		return 0;
	}
	/* every data line appended "\n"; the last one is not part of the data */
	pg_buf_truncate(&p->data, p->data.len - 1);
	ev.type = p->type.ptr;
	ev.type_len = p->type.len;
	ev.data = p->data.ptr;
	ev.data_len = p->data.len;
	rc = p->cb(p->ctx, &ev);
	pg_buf_reset(&p->data);
	pg_buf_reset(&p->type);
	p->has_data = false;
	return rc;
}

static int process_line(struct pg_sse *p, const char *line, size_t len)
{
	const char *colon, *value;
	size_t name_len, value_len;

	if (len == 0)
		return dispatch(p);
	if (line[0] == ':') {
		p->comments++;
		return 0;
	}
	colon = memchr(line, ':', len);
	name_len = colon ? (size_t)(colon - line) : len;
	value = colon ? colon + 1 : line + len;
	value_len = (size_t)(line + len - value);
	if (value_len && value[0] == ' ') {
		value++;
		value_len--;
	}
	if (name_len == 4 && !memcmp(line, "data", 4)) {
		if (p->data.len + value_len + 1 > p->max_event) {
			p->overflow = true;
			return -1;
		}
		pg_buf_add(&p->data, value, value_len);
		pg_buf_putc(&p->data, '\n');
		p->has_data = true;
	} else if (name_len == 5 && !memcmp(line, "event", 5)) {
		pg_buf_reset(&p->type);
		pg_buf_add(&p->type, value, value_len);
	}
	return 0;
}

/* The first CR or LF in [s, end), or end: two memchr scans (vectorised
 * in libc) instead of a test per byte, the parser's hot loop. */
static const char *find_eol(const char *s, const char *end)
{
	const char *nl = memchr(s, '\n', (size_t)(end - s));
	const char *cr = memchr(s, '\r', (size_t)((nl ? nl : end) - s));

	return cr ? cr : nl ? nl : end;
}

int pg_sse_feed(struct pg_sse *p, const char *bytes, size_t len)
{
	const char *s = bytes, *end = bytes + len;
	int rc;

	if (p->overflow)
		return -1;
	if (!p->started) {
		/* skip a UTF-8 BOM, which may itself arrive split */
		static const char bom[] = "\xEF\xBB\xBF";
		while (s < end && p->line.len < 3 && *s == bom[p->line.len]) {
			pg_buf_putc(&p->line, *s++);
		}
		if (p->line.len == 3) {
			pg_buf_reset(&p->line);
			p->started = true;
		} else if (s < end) {
			/* not a BOM: whatever was held back is ordinary text */
			p->started = true;
		} else {
			return 0;
		}
	}
	if (p->after_cr && s < end) {
		p->after_cr = false;
		if (*s == '\n')
			s++;
	}
	while (s < end) {
		const char *eol = find_eol(s, end);
		if (eol == end) {
			if (p->line.len + (size_t)(end - s) > p->max_event) {
				p->overflow = true;
				return -1;
			}
			pg_buf_add(&p->line, s, (size_t)(end - s));
			return 0;
		}
		if (p->line.len) {
			pg_buf_add(&p->line, s, (size_t)(eol - s));
			rc = process_line(p, p->line.ptr, p->line.len);
			pg_buf_reset(&p->line);
		} else {
			rc = process_line(p, s, (size_t)(eol - s));
		}
		s = eol + 1;
		if (*eol == '\r') {
			if (s == end)
				p->after_cr = true;
			else if (*s == '\n')
				s++;
		}
		if (rc)
			return rc;
	}
	return 0;
}

int pg_sse_finish(struct pg_sse *p)
{
	int rc = 0;

	if (p->overflow)
		return -1;
	if (p->line.len) {
		rc = process_line(p, p->line.ptr, p->line.len);
		pg_buf_reset(&p->line);
		if (rc)
			return rc;
	}
	if (p->has_data)
		rc = dispatch(p);
	return rc;
}
