#include "sys/digest.h"

#include "base/alloc.h"
#include "base/error.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct pg_sha256 {
	EVP_MD_CTX *ctx;
};

struct pg_sha256 *pg_sha256_new(void)
{
	struct pg_sha256 *h = pg_xcalloc(1, sizeof(*h));

	h->ctx = EVP_MD_CTX_new();
	if (!h->ctx || EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1) {
		/* only allocation fails here: as pg_xmalloc does */
		fputs("perfgate: out of memory (SHA-256 context)\n", stderr);
		abort();
	}
	return h;
}

void pg_sha256_update(struct pg_sha256 *h, const void *data, size_t len)
{
	if (len)
		EVP_DigestUpdate(h->ctx, data, len);
}

void pg_sha256_finish(struct pg_sha256 *h, char hex[PG_SHA256_HEX_SIZE])
{
	static const char digits[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	EVP_DigestFinal_ex(h->ctx, md, &n);
	for (unsigned int i = 0; i < n && 2 * i + 2 < PG_SHA256_HEX_SIZE; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[PG_SHA256_HEX_SIZE - 1] = '\0';
	pg_sha256_free(h);
}

void pg_sha256_free(struct pg_sha256 *h)
{
	if (!h)
		return;
	EVP_MD_CTX_free(h->ctx);
	free(h);
}

int pg_sha256_file(const char *path, char hex[PG_SHA256_HEX_SIZE], struct pg_error *err)
{
	size_t size = 1 << 20;
	unsigned char *buf;
	struct pg_sha256 *h;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return pg_error_set(err, errno == ENOENT ? PG_ENOTFOUND : PG_ERR, "%s: %s", path,
				    strerror(errno));
	h = pg_sha256_new();
	buf = pg_xmalloc(size);
	while ((n = read(fd, buf, size)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			pg_error_set(err, PG_ERR, "%s: %s", path, strerror(errno));
			pg_sha256_free(h);
			free(buf);
			close(fd);
			return PG_ERR;
		}
		pg_sha256_update(h, buf, (size_t)n);
	}
	free(buf);
	close(fd);
	pg_sha256_finish(h, hex);
	return 0;
}
