#include "core/gpu.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Length of a leading "<digits>x" count, or 0. */
static size_t count_prefix_len(const char *s)
{
	const char *p = s;
	while (isdigit((unsigned char)*p))
		p++;
	return (p != s && *p == 'x' && p[1]) ? (size_t)(p - s) + 1 : 0;
}

char *pg_gpu_label(char *out, size_t size, const char *raw)
{
	size_t first_len;
	const char *nl;

	if (!raw || !*raw) {
		snprintf(out, size, "unknown");
		return out;
	}
	if (count_prefix_len(raw) && !strchr(raw, '\n')) {
		snprintf(out, size, "%s", raw);
		return out;
	}
	nl = strchr(raw, '\n');
	first_len = nl ? (size_t)(nl - raw) : strlen(raw);
	snprintf(out, size, "%dx%.*s", pg_gpu_count(raw), (int)first_len, raw);
	return out;
}

int pg_gpu_count(const char *raw)
{
	size_t prefix;
	int lines = 1;

	if (!raw || !*raw)
		return 0;
	prefix = count_prefix_len(raw);
	if (prefix && !strchr(raw, '\n'))
		return (int)strtol(raw, NULL, 10);
	for (const char *p = raw; *p; p++)
		if (*p == '\n' && p[1])
			lines++;
	return lines;
}

static int looks_like_model(const char *tok, size_t len)
{
	size_t i = 0;

	if (len < 2 || !isalpha((unsigned char)tok[0]))
		return 0;
	i = 1;
	if (!isdigit((unsigned char)tok[i]))
		return 0;
	while (i < len && isdigit((unsigned char)tok[i]))
		i++;
	while (i < len && isalpha((unsigned char)tok[i]))
		i++;
	return i == len;
}

char *pg_gpu_key(char *out, size_t size, const char *raw)
{
	char line[256];
	const char *p;
	size_t n, start, tok_len;

	if (!raw || !*raw) {
		snprintf(out, size, "unknown");
		return out;
	}
	/* first line, trimmed */
	while (isspace((unsigned char)*raw))
		raw++;
	n = strcspn(raw, "\n");
	while (n && isspace((unsigned char)raw[n - 1]))
		n--;
	snprintf(line, sizeof(line), "%.*s", (int)n, raw);

	p = line + count_prefix_len(line);
	start = (size_t)(p - line);
	if (!strncasecmp(p, "NVIDIA", 6) && (p[6] == ' ' || p[6] == '_')) {
		p += 7;
		start = (size_t)(p - line);
	}
	tok_len = strcspn(line + start, " _-");
	if (looks_like_model(line + start, tok_len)) {
		snprintf(out, size, "%.*s", (int)tok_len, line + start);
		for (char *c = out; *c; c++)
			*c = (char)toupper((unsigned char)*c);
		return out;
	}
	snprintf(out, size, "%s", line);
	return out;
}
