#ifndef PERFGATE_LOADGEN_DATASET_H
#define PERFGATE_LOADGEN_DATASET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "suite/suite.h"

struct pg_error;

/*
 * Benchmark prompts. Pure generation and filtering; src/loadgen/dataset_io.c reads
 * the files and supplies token counts (the server's /tokenize, or the
 * estimate below).
 */
struct pg_prompt {
	long *ids; /* token-id prompt (random dataset on /v1/completions), or NULL */
	size_t n_ids;
	char *text;      /* text prompt, or NULL */
	long prompt_len; /* tokens: exact for ids, else counted or estimated */
	long output_len; /* max_tokens to ask for */
};

struct pg_prompts {
	struct pg_prompt *v;
	size_t n, cap;
	/* how prompt_len was obtained: "token_ids", "tokenize_endpoint", "estimate" */
	const char *input_source;
};

void pg_prompts_release(struct pg_prompts *p);

/* Token ids of random prompts are drawn from [BASE, BASE + SPAN): ordinary
 * tokens in every tokenizer of 11k+ entries, clear of the special ids
 * most vocabularies put first. */
#define PG_RANDOM_VOCAB_BASE 1000
#define PG_RANDOM_VOCAB_SPAN 10000

/*
 * vLLM's random dataset: input lengths uniform in [floor(L(1-r)),
 * ceil(L(1+r))], output lengths in [max(1, floor(O(1-r))), ceil(O(1+r))],
 * a shared prefix of prefix_len random ids, and body token i of request k
 * = vocab[(offset_k + k + i) mod |vocab|]. as_text (chat endpoints, which
 * take no token ids) writes one common English word per token instead;
 * those lengths are an estimate the server's usage then replaces.
 * PG_ECONFIG for lengths < 1 or range_ratio outside [0, 1).
 */
int pg_dataset_random(struct pg_prompts *out, size_t n, const struct pg_dataset_spec *d,
		      bool as_text, uint64_t seed, struct pg_error *err);

struct pg_buf;
struct pg_rng;
/* Append n common English words (one token each in the usual BPE
 * vocabularies), space-separated, drawn uniformly from rng. */
void pg_dataset_words(struct pg_buf *out, size_t n, struct pg_rng *rng);

/* Count the tokens of text; 0 or PG_E* with err set. */
typedef int (*pg_token_count_fn)(void *ctx, const char *text, long *count, struct pg_error *err);

/* The documented estimate without a tokenizer: ceil(UTF-8 bytes / 4). */
long pg_token_estimate(const char *text);

/*
 * vLLM's ShareGPT sampling: entries with >= 2 conversation turns, shuffled
 * with the seed; prompt = turn 0, completion = turn 1 (its token count is
 * the output length unless fixed_output_len > 0); kept when prompt >= 4,
 * output >= 4 (unless fixed), prompt <= 1024 and prompt + output <= 2048;
 * the first n kept; oversampled (seeded) when fewer qualify. text is the
 * file's JSON; only the conversations visited are parsed (see jsonscan.h).
 * source names the file in errors, with line and column.
 */
int pg_dataset_sharegpt(struct pg_prompts *out, const char *text, size_t len, const char *source,
			size_t n, long fixed_output_len, uint64_t seed, pg_token_count_fn count,
			void *ctx, struct pg_error *err);

/*
 * Conversations for multi-turn sessions (loadgen/sessions.h): the entries
 * of a ShareGPT file with at least two turns, shuffled with the seed as
 * vLLM's loader does, parsed in that order, and each one whose
 * conversation holds at least `rounds` questions -- turns "from" "human"
 * or "user" with a string "value" -- gives one user its first `rounds`
 * questions, in order, until `users` have theirs; too few are oversampled
 * (seeded). *out gets users x rounds strings, user u's question k at
 * [u * rounds + k]; free them with pg_dataset_questions_free. PG_ECONFIG
 * naming source (and line and column for bad JSON) when the file is not a
 * ShareGPT array or no conversation has enough questions.
 */
int pg_dataset_sharegpt_sessions(char ***out, const char *text, size_t len, const char *source,
				 size_t users, size_t rounds, uint64_t seed, struct pg_error *err);
void pg_dataset_questions_free(char **q, size_t n);

/*
 * vLLM's sonnet dataset (SonnetDataset.sample): the file's lines (each
 * with its newline); the base prompt "Pick as many lines as you can from
 * these poem lines:\n"; with avg the mean token count of a line and base
 * the base prompt's, every prompt is the base, the first
 * round((prefix_len - base) / avg) lines (shared: the prefix) and
 * random.choices of all lines up to round((input_len - base) / avg)
 * lines, kept when it counts at most input_len tokens; output_len fixed.
 * Python's random stream from seed, as vllm bench serve's random.seed.
 * vLLM counts the chat-templated prompt with the model's tokenizer;
 * perfgate counts the prompt itself with count. PG_ECONFIG when input_len
 * does not exceed the base prompt, the file has no lines, or no draw fits.
 */
int pg_dataset_sonnet(struct pg_prompts *out, const char *text, size_t len, const char *source,
		      size_t n, long input_len, long output_len, long prefix_len, uint64_t seed,
		      pg_token_count_fn count, void *ctx, struct pg_error *err);

/*
 * JSON lines {"prompt": "...", "output_len": N}; output_len may be left out
 * when default_output_len > 0. Shuffled with the seed, the first n taken,
 * oversampled when the file has fewer. Errors name source:line and key.
 */
int pg_dataset_jsonl(struct pg_prompts *out, const char *text, size_t len, const char *source,
		     size_t n, long default_output_len, uint64_t seed, pg_token_count_fn count,
		     void *ctx, struct pg_error *err);

#endif
