#ifndef PERFGATE_BASELINE_THRESHOLDS_IO_H
#define PERFGATE_BASELINE_THRESHOLDS_IO_H

#include <stdbool.h>

#include "gate/compare.h"

struct pg_error;

/*
 * thresholds/<GPU>.yml: the policy and the baselines of one GPU (format:
 * baseline/thresholds.h, docs/gate.md).
 */

/*
 * Load path into policy (initialised here: the defaults for everything the
 * file does not set) and base (kind "thresholds", source path). Both are the
 * caller's to release, also on error. PG_ENOTFOUND when the file does not
 * exist; PG_ECONFIG for anything wrong in it, as one line
 * "<path>:<line>:<col>: <key.path>: <problem>" with a "did you mean" for
 * misspelt keys and metric names.
 */
int pg_thresholds_load(const char *path, struct pg_policy *policy, struct pg_baseline *base,
		       struct pg_error *err);

/*
 * The thresholds file for a GPU: path_or_dir itself when it is a file (or
 * does not exist and ends in .yml/.yaml), else <dir>/<gpu_key>.yml.
 * Caller frees.
 */
char *pg_thresholds_path(const char *path_or_dir, const char *gpu_key);

struct pg_thresholds_update_opts {
	const char *gpu;        /* the GPU key, for a new file */
	const char *regenerate; /* the refresh command, for a new file's header */
	bool replace;           /* drop existing points that fresh does not have */
};

/*
 * Put fresh's points into path's baselines (same-named points are replaced,
 * others kept unless opts->replace), sorted by name, and rewrite only the
 * "baselines:" section: every line before it (gpu, policy, comments) and any
 * top-level section after it stay byte for byte. A file that does not exist
 * is created with a header, the default policy and the baselines. The file
 * is replaced atomically. A file that does not load is an error and is left
 * untouched.
 */
int pg_thresholds_update(const char *path, const struct pg_baseline *fresh,
			 const struct pg_thresholds_update_opts *opts, struct pg_error *err);

#endif
