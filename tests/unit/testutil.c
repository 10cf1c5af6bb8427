#include "testutil.h"

#include <errno.h>
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
