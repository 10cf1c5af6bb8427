/*
 * Where an object lies in a git pack, from the pack's index (a .idx file,
 * version 2, SHA-1 names: git's documentation/gitformat-pack). Read only to
 * choose the order in which perfgate trends reads a history's files
 * (history_io.c): libgit2 reads them, whatever this answers.
 */
#ifndef PERFGATE_BASELINE_PACK_INDEX_H
#define PERFGATE_BASELINE_PACK_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PG_PACK_OID_LEN 20

/* Whether idx[0..len) is an index perfgate can look names up in: the
 * version 2 header, and room for the tables its fan-out announces. */
bool pg_pack_index_valid(const unsigned char *idx, size_t len);

/* The pack offset of the object named oid (PG_PACK_OID_LEN bytes) in a
 * valid index; false when it is not there (or the index says an offset
 * beyond its own tables). */
bool pg_pack_index_find(const unsigned char *idx, size_t len, const unsigned char *oid,
			uint64_t *offset);

#endif
