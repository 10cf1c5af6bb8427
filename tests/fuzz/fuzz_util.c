/* fz_dup, fz_tmpdir, fz_write (fuzz.h): linked into every harness. */
#include "fuzz.h"

#include <errno.h>
#include <ftw.h>
#include <unistd.h>

char *fz_dup(const uint8_t *data, size_t size)
{
	char *p = malloc(size);

	if (!p)
		abort();
	if (size)
		memcpy(p, data, size);
	return p;
}

char *fz_strdup(const uint8_t *data, size_t size)
{
	char *p = malloc(size + 1);

	if (!p)
		abort();
	if (size)
		memcpy(p, data, size);
	p[size] = '\0';
	return p;
}

static char dir[4096];
static char path[4096 + 256];

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static void cleanup(void)
{
	if (dir[0])
		nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *fz_tmpdir(void)
{
	if (!dir[0]) {
		const char *base = getenv("TMPDIR");
		snprintf(dir, sizeof(dir), "%s/perfgate-fuzz-XXXXXX",
			 base && *base ? base : "/tmp");
		if (!mkdtemp(dir)) {
			perror("mkdtemp");
			abort();
		}
		atexit(cleanup);
	}
	return dir;
}

const char *fz_write(const char *name, const void *data, size_t size)
{
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", fz_tmpdir(), name);
	if (!data) {
		if (unlink(path) && errno != ENOENT)
			abort();
		return path;
	}
	f = fopen(path, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f)) {
		perror(path);
		abort();
	}
	return path;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return x < y ? -1 : x > y;
}

void fz_cuts(struct fz_in *in, size_t *cuts, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cuts[i] = fz_byte(in);
	for (size_t i = 0; i < n; i++)
		cuts[i] = in->n ? cuts[i] * in->n / 255 : 0;
	qsort(cuts, n, sizeof(cuts[0]), cmp_size);
}
