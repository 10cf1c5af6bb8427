#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int pg_error_set(struct pg_error *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
		err->code = code;
	}
	return code;
}

int pg_error_prefix(struct pg_error *err, const char *fmt, ...)
{
	char prefix[512];
	char old[sizeof(err->msg)];
	va_list ap;

	if (!err)
		return PG_ERR;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	/* truncation is fine: messages are one line for humans */
	size_t plen = strnlen(prefix, sizeof(err->msg) - 3);
	memcpy(err->msg, prefix, plen);
	memcpy(err->msg + plen, ": ", 2);
	size_t room = sizeof(err->msg) - plen - 3;
	size_t olen = strnlen(old, room);
	memcpy(err->msg + plen + 2, old, olen);
	err->msg[plen + 2 + olen] = '\0';
	return err->code;
}

void pg_error_clear(struct pg_error *err)
{
	if (err) {
		err->code = PG_OK;
		err->msg[0] = '\0';
	}
}

int pg_error_exit_code(int code)
{
	switch (code) {
	case PG_OK:
		return PG_EXIT_OK;
	case PG_ECONFIG:
		return PG_EXIT_USAGE;
	default:
		return PG_EXIT_INFRA;
	}
}
