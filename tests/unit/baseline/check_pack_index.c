/* Pack indexes (baseline/pack_index.h): every object git packed is found
 * at the offset `git show-index` gives, 64-bit offsets too, and a damaged
 * or cut index is never read outside its bytes (the sanitizers and
 * valgrind watch) and never gives a wrong offset when it is cut. */
#include "testutil.h"

#include "baseline/pack_index.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	unsigned char oid[PG_PACK_OID_LEN];
	uint64_t offset;
};

static void run(const char *cmd)
{
	ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
}

static void hex_to_oid(const char *hex, unsigned char *oid)
{
	for (size_t i = 0; i < PG_PACK_OID_LEN; i++) {
		unsigned v;
		ck_assert_int_eq(sscanf(hex + 2 * i, "%2x", &v), 1);
		oid[i] = (unsigned char)v;
	}
}

/* A repository of 60 similar files (deltas of each other once packed), one
 * pack, indexed twice: as git writes it (idx) and with every offset above
 * 64 in the 64-bit table (idx64). *e gets `git show-index`'s entries. */
static size_t make_pack(char **idx, size_t *len, char **idx64, size_t *len64, struct entry **e)
{
	char cmd[2048], *list = tu_tmpdir_path("list");
	size_t n = 0, cap = 64;
	char line[256];
	FILE *f;

	*e = malloc(cap * sizeof(**e));
	ck_assert_int_lt(
		snprintf(cmd, sizeof(cmd),
			 "set -e; cd '%s'; git init -q --bare r.git;"
			 " for i in $(seq 1 60); do seq $i $((i * 7 + 400)) |"
			 " git -C r.git hash-object -w --stdin; done >oids;"
			 " git -C r.git pack-objects -q --window=20 \"$PWD/p\" <oids >/dev/null;"
			 " cp p-*.idx pack.idx;"
			 " git -C r.git index-pack --index-version=2,64 -o \"$PWD/pack64.idx\""
			 " \"$(ls \"$PWD\"/p-*.pack)\" >/dev/null;"
			 " git show-index <pack.idx >'%s'",
			 tu_tmpdir, list),
		(int)sizeof(cmd));
	run(cmd);
	f = fopen(list, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long off;
		char hex[64];
		ck_assert_int_eq(sscanf(line, "%llu %63s", &off, hex), 2);
		if (n == cap)
			*e = realloc(*e, (cap *= 2) * sizeof(**e));
		hex_to_oid(hex, (*e)[n].oid);
		(*e)[n++].offset = off;
	}
	fclose(f);
	free(list);
	{
		char *p = tu_tmpdir_path("pack.idx"), *p64 = tu_tmpdir_path("pack64.idx");
		*idx = tu_read_file(p, len);
		*idx64 = tu_read_file(p64, len64);
		free(p);
		free(p64);
	}
	return n;
}

START_TEST(offsets_as_git_shows_them)
{
	char *idx, *idx64;
	size_t len, len64, n, large = 0;
	struct entry *e;
	unsigned char absent[PG_PACK_OID_LEN];
	uint64_t off;

	n = make_pack(&idx, &len, &idx64, &len64, &e);
	ck_assert_uint_eq(n, 60);
	ck_assert(pg_pack_index_valid((unsigned char *)idx, len));
	ck_assert(pg_pack_index_valid((unsigned char *)idx64, len64));
	/* the 64-bit table is there: the index is larger by 8 bytes for
	 * each offset above 64 */
	for (size_t i = 0; i < n; i++)
		large += e[i].offset > 64;
	ck_assert_uint_gt(large, 50);
	ck_assert_uint_eq(len64, len + 8 * large);
	for (size_t i = 0; i < n; i++) {
		off = 0;
		ck_assert(pg_pack_index_find((unsigned char *)idx, len, e[i].oid, &off));
		ck_assert_uint_eq(off, e[i].offset);
		off = 0;
		ck_assert(pg_pack_index_find((unsigned char *)idx64, len64, e[i].oid, &off));
		ck_assert_uint_eq(off, e[i].offset);
	}
	/* names next to a real one, and the extremes, are not there */
	memcpy(absent, e[0].oid, sizeof(absent));
	absent[PG_PACK_OID_LEN - 1] ^= 1;
	ck_assert(!pg_pack_index_find((unsigned char *)idx, len, absent, &off));
	memset(absent, 0, sizeof(absent));
	ck_assert(!pg_pack_index_find((unsigned char *)idx, len, absent, &off));
	memset(absent, 0xff, sizeof(absent));
	ck_assert(!pg_pack_index_find((unsigned char *)idx64, len64, absent, &off));
	/* not an index */
	ck_assert(!pg_pack_index_valid((const unsigned char *)"PACK", 4));
	free(idx);
	free(idx64);
	free(e);
}
END_TEST

START_TEST(damaged_indexes_are_read_within_their_bytes)
{
	char *idx, *idx64;
	size_t len, len64, n;
	struct entry *e;

	n = make_pack(&idx, &len, &idx64, &len64, &e);
	/* cut at every length, each copy exactly as long as the cut (ASan
	 * and valgrind see a read past it): an object is found at its own
	 * offset or not at all */
	for (size_t cut = 0; cut < len64; cut++) {
		unsigned char *c = malloc(cut ? cut : 1);
		memcpy(c, idx64, cut);
		for (size_t i = 0; i < n; i++) {
			uint64_t off = 0;
			if (pg_pack_index_find(c, cut, e[i].oid, &off))
				ck_assert_uint_eq(off, e[i].offset);
		}
		free(c);
	}
	/* any byte changed (fan-out, names, offsets): no read outside */
	for (size_t at = 0; at < len64; at++) {
		unsigned char *c = malloc(len64);
		memcpy(c, idx64, len64);
		c[at] ^= at % 2 ? 0x80 : 0xff;
		for (size_t i = 0; i < n; i++) {
			uint64_t off;
			(void)pg_pack_index_find(c, len64, e[i].oid, &off);
		}
		free(c);
	}
	free(idx);
	free(idx64);
	free(e);
}
END_TEST

static Suite *pack_index_suite(void)
{
	Suite *s = suite_create("pack_index");
	TCase *tc = tcase_create("find");

	tcase_add_checked_fixture(tc, tu_tmpdir_setup, tu_tmpdir_teardown);
	tcase_add_test(tc, offsets_as_git_shows_them);
	tcase_add_test(tc, damaged_indexes_are_read_within_their_bytes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(pack_index_suite());
}
