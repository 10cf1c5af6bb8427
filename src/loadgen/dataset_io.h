#ifndef PERFGATE_LOADGEN_DATASET_IO_H
#define PERFGATE_LOADGEN_DATASET_IO_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "loadgen/dataset.h"

struct pg_error;

/* The server whose POST /tokenize counts prompt tokens. */
struct pg_dataset_server {
	const char *base_url;
	const char *model;                 /* the request's "model"; may be NULL */
	const char *api_key;               /* never logged; may be NULL */
	const volatile sig_atomic_t *stop; /* non-zero: give up (PG_ECANCEL); may be NULL */
};

/*
 * Load n prompts for a test: random prompts are generated (token ids,
 * or words for chat endpoints); ShareGPT and JSON-lines files are read
 * and their prompts counted with the server's POST /tokenize (vLLM's
 * {"model", "prompt", "add_special_tokens": false} -> "count"/"tokens")
 * when srv is given and the server answers it, else estimated as
 * ceil(bytes / 4). out->input_source says which. PG_ECONFIG for a bad
 * file, PG_EINFRA when /tokenize stops answering after it worked,
 * PG_ECANCEL when *srv->stop became set.
 */
int pg_dataset_load(struct pg_prompts *out, const struct pg_test *t, size_t n, bool chat,
		    const struct pg_dataset_server *srv, struct pg_error *err);

#endif
