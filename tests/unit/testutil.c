#include "testutil.h"

#include <errno.h>
#include <stdbool.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *tu_env(const char *name)
{
	const char *v = getenv(name);
	ck_assert_msg(v && *v, "environment variable %s is not set (run through ctest)", name);
	return v;
}

char *tu_mkdtemp(void)
{
	const char *tmp = getenv("TMPDIR");
	char *path = malloc(4096);
	snprintf(path, 4096, "%s/perfgate-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_msg(mkdtemp(path) != NULL, "mkdtemp: %s", strerror(errno));
	return path;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void tu_rm_rf(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

char *tu_tmpdir;

void tu_tmpdir_setup(void)
{
	tu_tmpdir = tu_mkdtemp();
}

void tu_tmpdir_teardown(void)
{
	tu_rm_rf(tu_tmpdir);
	free(tu_tmpdir);
	tu_tmpdir = NULL;
}

char *tu_tmpdir_path(const char *name)
{
	size_t n = strlen(tu_tmpdir) + strlen(name) + 2;
	char *path = malloc(n);
	snprintf(path, n, "%s/%s", tu_tmpdir, name);
	return path;
}

char *tu_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *data;
	long size;

	ck_assert_msg(f != NULL, "cannot open %s: %s", path, strerror(errno));
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fseek(f, 0, SEEK_SET);
	data = malloc((size_t)size + 1);
	ck_assert_msg(fread(data, 1, (size_t)size, f) == (size_t)size, "short read of %s", path);
	data[size] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)size;
	return data;
}

void tu_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	ck_assert_msg(f != NULL, "cannot write %s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
}

char *tu_test_path(const char *rel)
{
	const char *base = tu_env("PERFGATE_TESTS");
	char *path = malloc(strlen(base) + strlen(rel) + 2);
	snprintf(path, strlen(base) + strlen(rel) + 2, "%s/%s", base, rel);
	return path;
}

void tu_assert_golden(const char *golden_rel, const char *text)
{
	char *path = tu_test_path(golden_rel);
	const char *update = getenv("PERFGATE_UPDATE_GOLDEN");
	char *want;
	size_t line = 1, i = 0;

	if (update && !strcmp(update, "1")) {
		tu_write_file(path, text);
		free(path);
		return;
	}
	want = tu_read_file(path, NULL);
	while (want[i] && text[i] && want[i] == text[i]) {
		if (want[i] == '\n')
			line++;
		i++;
	}
	if (want[i] != text[i]) {
		size_t start = i;
		while (start > 0 && want[start - 1] != '\n')
			start--;
		ck_abort_msg("%s differs at line %zu:\n want: %.200s\n  got: %.200s\n"
			     "(PERFGATE_UPDATE_GOLDEN=1 rewrites it)",
			     golden_rel, line, want + start, text + start);
	}
	free(want);
	free(path);
}

int tu_run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Unescaped occurrences of c in the line (a backslash escapes the next
 * character). */
static size_t count_unescaped(const char *line, size_t len, char c)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		if (line[i] == '\\') {
			i++;
			continue;
		}
		n += line[i] == c;
	}
	return n;
}

void tu_assert_markdown_safe(const char *md, const char *const *allowed_tags)
{
	size_t line_no = 0, header_pipes = 0;
	bool in_table = false, in_fence = false;

	for (const char *p = md; *p;) {
		size_t len = strcspn(p, "\n");

		line_no++;
		if (!strncmp(p, "```", 3)) {
			in_fence = !in_fence;
		} else if (!in_fence && len && p[0] == '|') {
			size_t pipes = count_unescaped(p, len, '|');
			if (!in_table)
				header_pipes = pipes;
			in_table = true;
			ck_assert_msg(pipes == header_pipes,
				      "line %zu: %zu cells, the header has %zu: %.*s", line_no,
				      pipes - 1, header_pipes - 1, (int)len, p);
			for (const char *c = "`[]"; *c; c++)
				ck_assert_msg(!count_unescaped(p, len, *c),
					      "line %zu: unescaped '%c': %.*s", line_no, *c,
					      (int)len, p);
		} else {
			in_table = false;
		}
		for (size_t i = 0, in_code = 0; !in_fence && i < len; i++) {
			bool ok = false;
			if (p[i] == '\\') {
				i++;
				continue;
			}
			if (p[i] == '`')
				in_code = !in_code; /* a code span shows '<' as it is */
			if (p[i] != '<' || in_code)
				continue;
			for (size_t t = 0; allowed_tags && allowed_tags[t] && !ok; t++)
				ok = !strncmp(p + i, allowed_tags[t], strlen(allowed_tags[t]));
			ck_assert_msg(ok, "line %zu: '<' starts HTML: %.*s", line_no, (int)len, p);
		}
		p += len + (p[len] ? 1 : 0);
	}
	ck_assert_msg(!in_fence, "a code fence is left open");
}
