#ifndef PERFGATE_LOADGEN_DATASET_FILES_H
#define PERFGATE_LOADGEN_DATASET_FILES_H

#include <stdbool.h>
#include <stddef.h>

#include "suite/suite.h"

struct pg_buf;

/*
 * The dataset files a plan reads, checked before anything starts (a
 * missing ShareGPT file found by the GPU job, after its first server came
 * up, is GPU time lost), and where each comes from when asked to fetch it:
 * the suite's `url` and `sha256`, or, for a file vLLM's CI downloads, the
 * same source vLLM's driver uses (run-performance-benchmarks.sh: `wget`
 * from the Hugging Face dataset when absent) with its pinned checksum.
 * Pure; dataset_files_io.c looks at the files and fetches them.
 */

/* A file vLLM's CI fetches, by its name. */
struct pg_known_dataset {
	const char *name;    /* the file's name: "ShareGPT_V3_unfiltered_cleaned_split.json" */
	const char *hf_path; /* under the Hugging Face endpoint: "datasets/<repo>/resolve/..." */
	const char *sha256;  /* its SHA-256, lower-case hex */
	long long size;      /* bytes */
};

/* The known file named as path's last component, or NULL. */
const struct pg_known_dataset *pg_known_dataset_find(const char *path);

/* The default Hugging Face endpoint; HF_ENDPOINT overrides it, as
 * huggingface_hub's tools have it (a mirror, a proxy). */
#define PG_HF_ENDPOINT "https://huggingface.co"

struct pg_dataset_file {
	const char *path;           /* as the suite gives it (borrowed from the test) */
	char *url;                  /* the suite's url, else the known file's; NULL: none */
	const char *sha256;         /* the suite's sha256, else the known file's; NULL: none */
	bool sha256_declared;       /* the suite's: the file is checked on every run */
	long long size;             /* the known file's size, or -1 */
	const struct pg_test *test; /* the first planned test that reads it */
};

struct pg_dataset_files {
	struct pg_dataset_file *v;
	size_t n, cap;
};

/*
 * The distinct dataset files of the plan's tests, in plan order (a
 * dataset path of a latency, throughput or serving test, whether
 * perfgate's client or the test's command reads it). hf_endpoint (NULL:
 * PG_HF_ENDPOINT) prefixes the known files' URLs.
 */
void pg_dataset_files_of(struct pg_dataset_files *out, const struct pg_plan *plan,
			 const char *hf_endpoint);
void pg_dataset_files_release(struct pg_dataset_files *f);

/* "test serving_x, serving-tests.json:2": where a file is asked for. */
void pg_dataset_file_where(struct pg_buf *out, const struct pg_dataset_file *f);

#endif
