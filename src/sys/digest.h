#ifndef PERFGATE_SYS_DIGEST_H
#define PERFGATE_SYS_DIGEST_H

#include <stddef.h>

struct pg_error;

/*
 * SHA-256, OpenSSL's (libcrypto, which libcurl already loads), for the
 * checksums of dataset files: a file hashed whole, or a download hashed as
 * it arrives. Hex digests are 64 lower-case characters and a NUL.
 */
#define PG_SHA256_HEX_SIZE 65

struct pg_sha256;

/* Never NULL. */
struct pg_sha256 *pg_sha256_new(void);
void pg_sha256_update(struct pg_sha256 *h, const void *data, size_t len);
/* The digest of everything given; h is freed. */
void pg_sha256_finish(struct pg_sha256 *h, char hex[PG_SHA256_HEX_SIZE]);
void pg_sha256_free(struct pg_sha256 *h);

/* The digest of a file's content. PG_ENOTFOUND when it does not exist. */
int pg_sha256_file(const char *path, char hex[PG_SHA256_HEX_SIZE], struct pg_error *err);

#endif
