/*
 * The fuzz harnesses without libFuzzer: run LLVMFuzzerTestOneInput once on
 * every file given, or every file of every directory given (sorted, dot
 * files left out), each in a heap block of exactly its length. Options
 * starting with '-' are ignored, so a libFuzzer command line replays too.
 *
 *   replay_sse tests/fuzz/corpus/sse
 *
 * A crash, leak or undefined behaviour is reported by the sanitizers of
 * the build (the ASan/UBSan build aborts on the first); a file that cannot
 * be read is exit 2. Prints how many inputs ran.
 */
#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>

__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	size_t size = 0, cap = 0;
	int ret = 0;

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return 2;
	}
	for (;;) {
		size_t got;
		if (size == cap) {
			uint8_t *bigger;
			cap = cap ? 2 * cap : 4096;
			bigger = realloc(data, cap);
			if (!bigger)
				abort();
			data = bigger;
		}
		got = fread(data + size, 1, cap - size, f);
		size += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		fprintf(stderr, "%s: read error\n", path);
		ret = 2;
	}
	fclose(f);
	if (ret == 0) {
		/* exactly size bytes, so reads past the input are caught */
		uint8_t *exact = (uint8_t *)fz_dup(data, size);
		LLVMFuzzerTestOneInput(exact, size);
		free(exact);
	}
	free(data);
	return ret;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, size_t *count)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int ret = 0;

	if (!d) {
		fprintf(stderr, "%s: %s\n", dir, strerror(errno));
		return 2;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **bigger;
			cap = cap ? 2 * cap : 64;
			bigger = realloc(names, cap * sizeof(*names));
			if (!bigger)
				abort();
			names = bigger;
		}
		names[n] = strdup(e->d_name);
		if (!names[n])
			abort();
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(dir) + strlen(names[i]) + 2;
		char *path = malloc(len);
		struct stat st;

		if (!path)
			abort();
		snprintf(path, len, "%s/%s", dir, names[i]);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			if (run_file(path))
				ret = 2;
			else
				(*count)++;
		}
		free(path);
		free(names[i]);
	}
	free(names);
	return ret;
}

int main(int argc, char **argv)
{
	size_t count = 0;
	int ret = 0;

	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct stat st;

		if (argv[i][0] == '-')
			continue;
		if (stat(argv[i], &st)) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
			ret = 2;
		} else if (S_ISDIR(st.st_mode)) {
			if (run_dir(argv[i], &count))
				ret = 2;
		} else if (run_file(argv[i])) {
			ret = 2;
		} else {
			count++;
		}
	}
	printf("%s: %zu input%s replayed\n", argv[0], count, count == 1 ? "" : "s");
	return ret;
}
