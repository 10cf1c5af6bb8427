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
 * The policy for gpu: its file in the thresholds directory (NULL:
 * "thresholds"), else the defaults when there is none, as `perfgate
 * baseline history` and `perfgate trends` read it. PG_ECONFIG for a file
 * that is wrong; policy is the caller's to release.
 */
int pg_thresholds_load_policy(struct pg_policy *policy, const char *thresholds, const char *gpu,
			      struct pg_error *err);

/* The same from text already read (path names it in messages): what the
 * fuzz harness and anything holding the file's bytes use. text need not be
 * NUL-terminated. */
int pg_thresholds_load_text(const char *text, size_t len, const char *path,
			    struct pg_policy *policy, struct pg_baseline *base,
			    struct pg_error *err);
/*
 * Where a pull request's thresholds came from, and how its own copy
 * differs (pg_thresholds_load_at).
 */
struct pg_thresholds_origin {
	bool in_repo;          /* the file is in the repository (else read as it is) */
	char *rev;             /* the commit read (full id), or NULL */
	char *relpath;         /* the file's path in the repository, or NULL */
	bool in_rev;           /* the commit has the file */
	bool in_checkout;      /* the working tree has it */
	bool differs;          /* the working tree's copy is not the commit's */
	char *diff;            /* unified diff commit -> working tree, or NULL */
	size_t added, removed; /* its line counts */
};

void pg_thresholds_origin_release(struct pg_thresholds_origin *o);

/*
 * Load path as commit rev of its repository has it, not the working
 * tree's copy (which a pull request controls): the policy and the
 * baselines of the pull request's base. base->source says
 * "thresholds/H100.yml at 1a2b3c4d5e6f". origin (may be NULL) is filled
 * also on error: whether the working tree's copy differs, with the diff.
 * A file outside any repository is loaded as it is. PG_ENOTFOUND when the
 * commit has no such file (the pull request adds it).
 */
int pg_thresholds_load_at(const char *path, const char *rev, struct pg_policy *policy,
			  struct pg_baseline *base, struct pg_thresholds_origin *origin,
			  struct pg_error *err);

/* Fill origin only: how path's working-tree copy differs from rev's. */
void pg_thresholds_compare_at(struct pg_thresholds_origin *origin, const char *path,
			      const char *rev);

/*
 * A thresholds location outside the checkout, read when a pull request's
 * build starts, before anything of the pull request runs: its benchmark
 * commands could write there, and the gate reads the copy pinned here.
 * Inside the checkout nothing needs pinning: the base's commit is read.
 */
struct pg_thresholds_pin {
	bool outside;  /* the location is outside the checkout (else nothing is set) */
	bool writable; /* this job may write a file there, or the directory around it:
			* the base branch does not control it, nor does the agent alone */
	char *where;   /* the location's real path (or as given when it does not exist) */
	size_t n;
	char **paths;         /* the files read, spelled as pg_thresholds_path spells them */
	struct pg_buf *texts; /* their contents */
};

/* Pin location (a thresholds file or directory; its *.yml files, each at
 * most 64 MiB) when it lies outside the checkout around the cwd. */
void pg_thresholds_pin(struct pg_thresholds_pin *pin, const char *location);
void pg_thresholds_pin_release(struct pg_thresholds_pin *pin);

/* The pinned copy of path (pg_thresholds_path's spelling), or NULL. */
const struct pg_buf *pg_thresholds_pinned(const struct pg_thresholds_pin *pin, const char *path);

/*
 * The thresholds file for a GPU: path_or_dir itself when it is a file (or
 * does not exist and ends in .yml/.yaml), else <dir>/<gpu_key>.yml.
 * Caller frees.
 */
char *pg_thresholds_path(const char *path_or_dir, const char *gpu_key);

/*
 * The GPUs a thresholds directory has files for: thresholds/H100.yml ->
 * "H100", in name order, appended to out. PG_ENOTFOUND when dir does not
 * exist (out left empty); a directory without any is no error.
 */
int pg_thresholds_gpus(struct pg_strv *out, const char *dir, struct pg_error *err);

/*
 * For a GPU key without a file in the thresholds directory dir, the words
 * that help, appended to out: " (did you mean H100?)"; for a file that
 * differs in case only, " (thresholds/h100.yml is not it: a GPU's key is
 * its model in capitals, rename the file H100.yml)"; else which GPUs dir
 * has files for (" (thresholds has A100, H100)") or that it does not
 * exist. Nothing when key's file is there.
 */
void pg_thresholds_gpu_hint(struct pg_buf *out, const char *dir, const char *key);

/*
 * A GPU key perfgate does not know (gpu/gpu.h pg_gpu_known) and no file in
 * dir names: true, with the words for a warning appended to out ("not a
 * GPU perfgate knows, and there is no thresholds/H10.yml (did you mean
 * H100?)"); false, and nothing appended, otherwise.
 */
bool pg_thresholds_gpu_unknown(struct pg_buf *out, const char *dir, const char *key);

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
