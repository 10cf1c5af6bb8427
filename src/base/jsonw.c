#include "base/jsonw.h"

#include "base/buf.h"
#include "base/strutil.h"

#include <stdio.h>
#include <string.h>

void pg_json_write_string(struct pg_buf *out, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";

	pg_buf_putc(out, '"');
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '"':
			pg_buf_puts(out, "\\\"");
			break;
		case '\\':
			pg_buf_puts(out, "\\\\");
			break;
		case '\n':
			pg_buf_puts(out, "\\n");
			break;
		case '\r':
			pg_buf_puts(out, "\\r");
			break;
		case '\t':
			pg_buf_puts(out, "\\t");
			break;
		case '\b':
			pg_buf_puts(out, "\\b");
			break;
		case '\f':
			pg_buf_puts(out, "\\f");
			break;
		default:
			if (c < 0x20) {
				char esc[7] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0 };
				pg_buf_puts(out, esc);
			} else {
				pg_buf_putc(out, (char)c);
			}
		}
	}
	pg_buf_putc(out, '"');
}

static void newline(struct pg_buf *out, int indent, int depth)
{
	if (indent > 0) {
		pg_buf_putc(out, '\n');
		pg_buf_pad(out, ' ', (size_t)indent * (size_t)depth);
	}
}

static void write_value(struct pg_buf *out, const json_t *v, int indent, int depth)
{
	char num[PG_FMT_DOUBLE_SIZE];
	const char *item_sep = indent < 0 ? ", " : ",";
	const char *key_sep = indent == 0 ? ":" : ": ";

	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *key;
		json_t *val;
		int first = 1;

		if (json_object_size(v) == 0) {
			pg_buf_puts(out, "{}");
			break;
		}
		pg_buf_putc(out, '{');
		json_object_foreach((json_t *)v, key, val)
		{
			if (!first)
				pg_buf_puts(out, indent > 0 ? "," : item_sep);
			first = 0;
			newline(out, indent, depth + 1);
			pg_json_write_string(out, key, strlen(key));
			pg_buf_puts(out, key_sep);
			write_value(out, val, indent, depth + 1);
		}
		newline(out, indent, depth);
		pg_buf_putc(out, '}');
		break;
	}
	case JSON_ARRAY: {
		size_t i;
		json_t *val;

		if (json_array_size(v) == 0) {
			pg_buf_puts(out, "[]");
			break;
		}
		pg_buf_putc(out, '[');
		json_array_foreach(v, i, val)
		{
			if (i)
				pg_buf_puts(out, indent > 0 ? "," : item_sep);
			newline(out, indent, depth + 1);
			write_value(out, val, indent, depth + 1);
		}
		newline(out, indent, depth);
		pg_buf_putc(out, ']');
		break;
	}
	case JSON_STRING:
		pg_json_write_string(out, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		pg_buf_printf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		break;
	case JSON_REAL:
		pg_buf_puts(out, pg_fmt_repr(num, json_real_value(v)));
		break;
	case JSON_TRUE:
		pg_buf_puts(out, "true");
		break;
	case JSON_FALSE:
		pg_buf_puts(out, "false");
		break;
	case JSON_NULL:
		pg_buf_puts(out, "null");
		break;
	}
}

void pg_json_write(struct pg_buf *out, const json_t *v, int indent)
{
	write_value(out, v, indent, 0);
}

void pg_json_write_nested(struct pg_buf *out, const json_t *v, int indent, int depth)
{
	write_value(out, v, indent, depth);
}

json_t *pg_json_path(const json_t *obj, const char *dotted_key)
{
	char part[128];
	const char *p = dotted_key;
	json_t *cur = (json_t *)obj;

	while (cur && *p) {
		const char *dot = strchr(p, '.');
		size_t len = dot ? (size_t)(dot - p) : strlen(p);

		if (!json_is_object(cur) || len >= sizeof(part))
			return NULL;
		memcpy(part, p, len);
		part[len] = '\0';
		cur = json_object_get(cur, part);
		p += len + (dot ? 1 : 0);
	}
	return cur;
}

const char *pg_json_path_str(const json_t *obj, const char *dotted)
{
	json_t *v = pg_json_path(obj, dotted);
	return json_is_string(v) && json_string_length(v) ? json_string_value(v) : NULL;
}
