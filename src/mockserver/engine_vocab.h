#ifndef PERFGATE_MOCKSERVER_ENGINE_VOCAB_H
#define PERFGATE_MOCKSERVER_ENGINE_VOCAB_H

#include <stddef.h>
#include <stdint.h>

struct pg_buf;

/*
 * The mock server's tokenizer: a documented deterministic rule instead of a
 * real vocabulary, so token counts are exact and reproducible anywhere.
 *
 * Token id i (0 <= i < vocab size, at most 262144) is the six-letter word
 * made of three syllables, consonant + vowel, from "bdfghjklmnprstvz" x
 * "aeio" (64 syllables): id = 4096*s0 + 64*s1 + s2. 0 is "bababa".
 *
 * Tokenizing splits text on ASCII white space; each word is one token: a
 * vocabulary word maps to its id, any other word to FNV-1a-64(word) mod
 * vocab size. Detokenizing joins words with single spaces, so
 * tokenize(detokenize(ids)) == ids for any ids, and a text's token count is
 * its word count.
 */
#define PG_VOCAB_WORD_LEN 6
#define PG_VOCAB_MAX      262144u

/* Write the word of id (< PG_VOCAB_MAX) into out (not NUL-terminated). */
void pg_vocab_word(uint32_t id, char out[PG_VOCAB_WORD_LEN]);

/* The id of one word, per the rule above. */
uint32_t pg_vocab_word_id(const char *word, size_t len, uint32_t vocab_size);

/*
 * Tokenize text[0..len): call fn(id, ctx) per word in order (fn may be NULL
 * to only count). Returns the number of tokens.
 */
size_t pg_vocab_tokenize(const char *text, size_t len, uint32_t vocab_size,
			 void (*fn)(uint32_t id, void *ctx), void *ctx);

/* Append the words of ids, separated by single spaces. */
void pg_vocab_detokenize(struct pg_buf *out, const uint32_t *ids, size_t n);

#endif
