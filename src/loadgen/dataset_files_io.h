#ifndef PERFGATE_LOADGEN_DATASET_FILES_IO_H
#define PERFGATE_LOADGEN_DATASET_FILES_IO_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "loadgen/dataset_files.h"

struct pg_error;

struct pg_dataset_check_opts {
	bool fetch;                        /* fetch what is missing (--fetch-datasets) */
	bool fetch_later;                  /* a missing file with a source passes: a check
					    * before a run that will fetch it */
	FILE *log;                         /* progress; NULL: stderr */
	const volatile sig_atomic_t *stop; /* non-zero ends a fetch (PG_ECANCEL); may be NULL */
};

/*
 * Before a run starts anything: every dataset file the plan reads
 * (dataset_files.h) is there, and hashes to the suite's sha256 when it
 * gives one. With fetch, a missing file that has a source is fetched
 * (redirects followed, the environment's proxy and CA bundle honoured)
 * into a temporary beside it, hashed as it arrives, and renamed into
 * place only when its checksum matches (a file with no checksum to
 * check is fetched with a warning); a present file with a known checksum
 * is checked too. $HF_ENDPOINT stands for https://huggingface.co in the
 * known files' URLs.
 *
 * Errors: a missing file (not fetched) or a file that is not what the
 * suite says is PG_ECONFIG naming the file, the test that reads it, and
 * where to get it; a failed or mismatched download PG_EINFRA (nothing is
 * left behind); a stop PG_ECANCEL.
 */
int pg_dataset_files_check(const struct pg_plan *plan, const struct pg_dataset_check_opts *o,
			   struct pg_error *err);

/*
 * Fetch url into path as above, checked against sha256 (NULL: unchecked),
 * size the expected bytes for progress (-1: unknown). For tests and the
 * check above.
 */
int pg_dataset_fetch(const char *url, const char *path, const char *sha256, long long size,
		     const struct pg_dataset_check_opts *o, struct pg_error *err);

#endif
