#include "gpu/gpu.h"

#include "base/alloc.h"
#include "base/strutil.h"

#include <ctype.h>
#include <math.h>
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

/* One or two letters, digits, optional letters: H100, L40S, GB200, and
 * AMD's MI300X, MI325X, MI250. */
static int looks_like_model(const char *tok, size_t len)
{
	size_t i = 0;

	if (len < 2 || !isalpha((unsigned char)tok[0]))
		return 0;
	i = 1;
	if (i < len && isalpha((unsigned char)tok[i]))
		i++;
	if (i >= len || !isdigit((unsigned char)tok[i]))
		return 0;
	while (i < len && isdigit((unsigned char)tok[i]))
		i++;
	while (i < len && isalpha((unsigned char)tok[i]))
		i++;
	return i == len;
}

bool pg_gpu_key_valid(const char *key)
{
	size_t n = 0;

	if (!key || !*key || *key == '.' || *key == '-')
		return false;
	for (; key[n]; n++)
		if (!(isalnum((unsigned char)key[n]) || key[n] == '_' || key[n] == '-' ||
		      key[n] == '.'))
			return false;
	/* "..": no path component, however it is spelled */
	return n <= PG_GPU_KEY_MAX && !strstr(key, "..");
}

/* The key as the rules below make it, before any repair. */
static char *key_of(char *out, size_t size, const char *raw)
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
	/* vendor and family words: "NVIDIA H100", "AMD Instinct MI300X OAM" */
	for (;;) {
		if (!strncasecmp(p, "NVIDIA", 6) && (p[6] == ' ' || p[6] == '_' || p[6] == '-'))
			p += 7;
		else if (!strncasecmp(p, "AMD", 3) && (p[3] == ' ' || p[3] == '_'))
			p += 4;
		else if (!strncasecmp(p, "Instinct", 8) && (p[8] == ' ' || p[8] == '_'))
			p += 9;
		else
			break;
	}
	start = (size_t)(p - line);
	tok_len = strcspn(line + start, " _-/");
	if (looks_like_model(line + start, tok_len)) {
		snprintf(out, size, "%.*s", (int)tok_len, line + start);
		for (char *c = out; *c; c++)
			*c = (char)toupper((unsigned char)*c);
		return out;
	}
	snprintf(out, size, "%s", line);
	return out;
}

char *pg_gpu_key(char *out, size_t size, const char *raw)
{
	key_of(out, size, raw);
	if (pg_gpu_key_valid(out) || !size)
		return out;
	/* a name from nvidia-smi or a result file that cannot name a file
	 * ("AMD MI300X", "../x"): made into one rather than trusted */
	for (char *c = out; *c; c++)
		if (!(isalnum((unsigned char)*c) || *c == '_' || *c == '-'))
			*c = '_';
	if (out[0] == '-')
		out[0] = '_';
	if (strlen(out) > PG_GPU_KEY_MAX)
		out[PG_GPU_KEY_MAX] = '\0';
	if (!out[0])
		snprintf(out, size, "unknown");
	return out;
}

/* clang-format off */
static const char *const known_models[] = {
	/* NVIDIA */
	"H100", "H200", "H20", "H800", "GH200", "A100", "A800", "A10", "A10G", "A16", "A30", "A40",
	"L4", "L20", "L40", "L40S", "B100", "B200", "B300", "GB200", "GB300", "V100", "T4",
	/* AMD */
	"MI210", "MI250", "MI250X", "MI300A", "MI300X", "MI308X", "MI325X", "MI350X", "MI355X",
};
/* clang-format on */
#define N_KNOWN (sizeof(known_models) / sizeof(known_models[0]))

bool pg_gpu_known(const char *key)
{
	for (size_t i = 0; key && i < N_KNOWN; i++)
		if (!strcmp(key, known_models[i]))
			return true;
	return false;
}

const char *pg_gpu_nearest(const char *key, const char *const *have, size_t n_have)
{
	const char **all = pg_xcalloc(n_have + N_KNOWN + 1, sizeof(*all));
	const char *near;

	/* the thresholds files first: a file that differs only in case
	 * (h100.yml) is at distance 0, ahead of the known H100 */
	for (size_t i = 0; i < n_have; i++)
		all[i] = have[i];
	for (size_t i = 0; i < N_KNOWN; i++)
		all[n_have + i] = known_models[i];
	near = pg_nearest(key, all, n_have + N_KNOWN);
	free(all);
	return near;
}

bool pg_gpu_name_ok(const char *raw)
{
	char key[256];
	size_t n;

	key_of(key, sizeof(key), raw);
	n = strlen(key);
	if (!n || n > PG_GPU_KEY_MAX || key[0] == '.' || key[0] == '-' || strstr(key, ".."))
		return false;
	for (size_t i = 0; i < n; i++)
		if (key[i] == '/' || key[i] == '\\' || (unsigned char)key[i] < 0x20 ||
		    key[i] == 0x7f)
			return false;
	return true;
}

char *pg_gpu_short(char *out, size_t size, const char *name)
{
	const char *p = name ? name : "";
	const char *first, *second;
	size_t first_len, second_len;

	while (isspace((unsigned char)*p))
		p++;
	first = p;
	first_len = strcspn(p, " \t\n");
	p += first_len;
	while (*p == ' ' || *p == '\t')
		p++;
	second = p;
	second_len = strcspn(p, " \t\n");
	/* "AMD Instinct MI300X": the model is the third word */
	if (second_len == 8 && !strncasecmp(second, "Instinct", 8)) {
		const char *third = second + 8;
		while (*third == ' ' || *third == '\t')
			third++;
		if (strcspn(third, " \t\n")) {
			second = third;
			second_len = strcspn(third, " \t\n");
		}
	}
	if (second_len)
		snprintf(out, size, "%.*s", (int)second_len, second);
	else
		snprintf(out, size, "%.*s", (int)first_len, first);
	return out;
}

/* One line [s, s+len) trimmed of blanks and '\r'. */
static void trim(const char **s, size_t *len)
{
	while (*len && isspace((unsigned char)**s)) {
		(*s)++;
		(*len)--;
	}
	while (*len && isspace((unsigned char)(*s)[*len - 1]))
		(*len)--;
}

static double parse_mib(const char *s, size_t len)
{
	char buf[64];
	char *end;
	double v;

	trim(&s, &len);
	if (!len || len >= sizeof(buf))
		return NAN;
	memcpy(buf, s, len);
	buf[len] = '\0';
	v = strtod(buf, &end);
	if (end == buf)
		return NAN;
	while (isspace((unsigned char)*end))
		end++;
	if (*end && strcasecmp(end, "MiB"))
		return NAN;
	return v;
}

int pg_gpu_parse_query(struct pg_strv *names, double **mib, const char *csv)
{
	int count = 0;

	for (const char *line = csv; line && *line;) {
		size_t len = strcspn(line, "\n");
		const char *next = line[len] ? line + len + 1 : line + len;
		const char *comma = memchr(line, ',', len);
		const char *name = line;
		size_t name_len = comma ? (size_t)(comma - line) : len;

		trim(&name, &name_len);
		if (name_len == 0) {
			size_t rest = len;
			const char *l = line;
			trim(&l, &rest);
			if (rest)
				return -1;
			line = next;
			continue;
		}
		pg_strv_push_owned(names, pg_xstrndup(name, name_len));
		*mib = pg_xrealloc(*mib, (size_t)(count + 1) * sizeof(**mib));
		(*mib)[count] = comma ? parse_mib(comma + 1, (size_t)(line + len - comma - 1))
				      : NAN;
		count++;
		line = next;
	}
	return count;
}

int pg_gpu_parse_numbers(double **out, const char *csv)
{
	int count = 0;

	for (const char *line = csv; line && *line;) {
		size_t len = strcspn(line, "\n");
		const char *next = line[len] ? line + len + 1 : line + len;
		const char *s = line;
		size_t n = len;

		trim(&s, &n);
		if (n) {
			double v = parse_mib(s, n);
			if (isnan(v))
				return -1;
			*out = pg_xrealloc(*out, (size_t)(count + 1) * sizeof(**out));
			(*out)[count++] = v;
		}
		line = next;
	}
	return count;
}
