/*
 * A pack index, version 2: "\377tOc", the version (2), a fan-out of 256
 * big-endian counts (objects whose name's first byte is at most b), the
 * names sorted, a CRC-32 each, a 31-bit offset each (the top bit set: an
 * index into a table of 64-bit offsets that follows), then two checksums.
 * Every read is bounded by len: the file comes from a repository, and a
 * damaged one must give "not found", never a read outside it.
 */
#include "baseline/pack_index.h"

#include <string.h>

#define HEADER  8
#define FANOUT  (256 * 4)
#define TRAILER (2 * PG_PACK_OID_LEN)

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const unsigned char *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

/* The object count, or 0 for an index that is not one (or is empty). */
static size_t objects(const unsigned char *idx, size_t len)
{
	static const unsigned char magic[] = { 0xff, 't', 'O', 'c', 0, 0, 0, 2 };
	size_t n;

	if (len < HEADER + FANOUT + TRAILER || memcmp(idx, magic, sizeof(magic)))
		return 0;
	n = be32(idx + HEADER + 255 * 4);
	/* names, CRCs and short offsets: 28 bytes an object */
	if (n > (len - HEADER - FANOUT - TRAILER) / (PG_PACK_OID_LEN + 8))
		return 0;
	return n;
}

bool pg_pack_index_valid(const unsigned char *idx, size_t len)
{
	return objects(idx, len) > 0;
}

bool pg_pack_index_find(const unsigned char *idx, size_t len, const unsigned char *oid,
			uint64_t *offset)
{
	size_t n = objects(idx, len), lo, hi, large;
	const unsigned char *names = idx + HEADER + FANOUT, *offs;

	if (!n)
		return false;
	/* the fan-out narrows the search to names of oid's first byte (a
	 * damaged fan-out only narrows it wrongly: clamped to n) */
	lo = oid[0] ? be32(idx + HEADER + (oid[0] - 1) * 4) : 0;
	hi = be32(idx + HEADER + oid[0] * 4);
	if (hi > n)
		hi = n;
	if (lo > hi)
		lo = hi;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = memcmp(names + mid * PG_PACK_OID_LEN, oid, PG_PACK_OID_LEN);
		if (c == 0) {
			uint32_t o;
			offs = names + n * (PG_PACK_OID_LEN + 4);
			o = be32(offs + mid * 4);
			if (!(o & 0x80000000u)) {
				*offset = o;
				return true;
			}
			/* the 64-bit table sits between the short offsets and
			 * the trailer */
			large = (len - TRAILER - (size_t)(offs + n * 4 - idx)) / 8;
			o &= 0x7fffffffu;
			if (o >= large)
				return false;
			*offset = be64(offs + n * 4 + (size_t)o * 8);
			return true;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}
