#ifndef PERFGATE_IO_DATASET_H
#define PERFGATE_IO_DATASET_H

#include <stdbool.h>
#include <stddef.h>

#include "core/dataset.h"

struct pg_error;

/*
 * Load n prompts for a test: random prompts are generated (token ids,
 * or words for chat endpoints); ShareGPT and JSON-lines files are read
 * and their prompts counted with the server's POST /tokenize (vLLM's
 * {"model", "prompt", "add_special_tokens": false} -> "count"/"tokens")
 * when base_url is given and the server answers it, else estimated as
 * ceil(bytes / 4). out->input_source says which.
 */
int pg_dataset_load(struct pg_prompts *out, const struct pg_test *t, size_t n, bool chat,
		    const char *base_url, const char *model, const char *api_key,
		    struct pg_error *err);

#endif
