#ifndef PERFGATE_TESTS_FUZZ_H
#define PERFGATE_TESTS_FUZZ_H

/*
 * Shared by the fuzz harnesses (tests/fuzz/fuzz_*.c, docs/fuzzing.md).
 *
 * Each harness defines LLVMFuzzerTestOneInput and is linked twice: with
 * libFuzzer (clang, -DPERFGATE_FUZZ=ON) to search, and with replay.c, a
 * plain main() that runs every file of a corpus once, so the corpus is a set
 * of regression inputs under the ordinary ASan/UBSan build (ctest -L
 * fuzz-corpus).
 *
 * Harnesses hand the code under test buffers of exactly the input's length
 * (fz_dup): no NUL after the last byte, so ASan sees any read past it.
 * A property that must hold (two ways of parsing agree) fails through
 * FZ_CHECK, which aborts: libFuzzer and the replay driver both report it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A copy of data in a heap block of exactly size bytes (glibc and ASan
 * give a zero-byte block a pointer of its own, which nothing may read).
 * Caller frees. */
char *fz_dup(const uint8_t *data, size_t size);
/* The same, NUL-terminated, for entry points that take a C string. */
char *fz_strdup(const uint8_t *data, size_t size);

/*
 * A few control bytes taken from the front of the input (split points,
 * options), so one input describes both the bytes and how they arrive.
 */
struct fz_in {
	const uint8_t *p;
	size_t n;
};

static inline unsigned fz_byte(struct fz_in *in)
{
	unsigned b;

	if (!in->n)
		return 0;
	b = in->p[0];
	in->p++;
	in->n--;
	return b;
}

/*
 * A private directory for harnesses whose entry point reads files (made on
 * first use, removed at exit), and a file in it written with the given
 * bytes (or removed when data is NULL). Returns the file's path (static).
 */
/* n cut points of the rest of in: n bytes taken from in, each scaled to
 * an offset into what is left after them, sorted (where a piecewise
 * parse splits the input). */
void fz_cuts(struct fz_in *in, size_t *cuts, size_t n);

const char *fz_tmpdir(void);
const char *fz_write(const char *name, const void *data, size_t size);

/* Where the bytes after the first "\n\x1e" separator go: a second input
 * (a sidecar, a second file). *second is NULL without a separator. */
static inline void fz_split2(const uint8_t *data, size_t size, size_t *first,
			     const uint8_t **second, size_t *second_size)
{
	for (size_t i = 0; i + 1 < size; i++)
		if (data[i] == '\n' && data[i + 1] == 0x1e) {
			*first = i + 1;
			*second = data + i + 2;
			*second_size = size - i - 2;
			return;
		}
	*first = size;
	*second = NULL;
	*second_size = 0;
}

#define FZ_CHECK(cond)                                                                             \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, __LINE__,        \
				#cond);                                                            \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

#endif
