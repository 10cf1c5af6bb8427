#include "core/gpu.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static int has_count_prefix(const char *s)
{
	const char *p = s;
	while (isdigit((unsigned char)*p))
		p++;
	return p != s && *p == 'x' && p[1] && !strchr(s, '\n');
}

char *pg_gpu_label(char *out, size_t size, const char *raw)
{
	size_t lines = 1, first_len;
	const char *nl;

	if (!raw || !*raw) {
		snprintf(out, size, "unknown");
		return out;
	}
	if (has_count_prefix(raw)) {
		snprintf(out, size, "%s", raw);
		return out;
	}
	for (const char *p = raw; *p; p++)
		if (*p == '\n' && p[1])
			lines++;
	nl = strchr(raw, '\n');
	first_len = nl ? (size_t)(nl - raw) : strlen(raw);
	snprintf(out, size, "%zux%.*s", lines, (int)first_len, raw);
	return out;
}
