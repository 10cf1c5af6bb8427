/*
 * The native client behind pg_point_fn. Until the load generator
 * (src/io/loadgen.c, pg_loadgen_run) is merged this reports that it is
 * missing; tests drive the runner with their own pg_point_fn.
 */
#include "io/runner.h"

#include "core/error.h"

int pg_runner_native(const struct pg_point *pt, const struct pg_point_io *io, json_t **out,
		     struct pg_error *err)
{
	(void)pt;
	(void)io;
	*out = NULL;
	return pg_error_set(err, PG_EINFRA, "the native load generator is not built into this perfgate");
}
