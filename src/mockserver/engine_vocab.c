#include "mockserver/engine_vocab.h"

#include "base/buf.h"

#include <stdbool.h>

static const char consonants[] = "bdfghjklmnprstvz";
static const char vowels[] = "aeio";

void pg_vocab_word(uint32_t id, char out[PG_VOCAB_WORD_LEN])
{
	id %= PG_VOCAB_MAX;
	for (int k = 2; k >= 0; k--) {
		uint32_t syl = id % 64;
		out[2 * k] = consonants[syl / 4];
		out[2 * k + 1] = vowels[syl % 4];
		id /= 64;
	}
}

static int index_of(const char *set, char c)
{
	for (int i = 0; set[i]; i++)
		if (set[i] == c)
			return i;
	return -1;
}

static bool vocab_word(const char *w, size_t len, uint32_t *id)
{
	uint32_t v = 0;

	if (len != PG_VOCAB_WORD_LEN)
		return false;
	for (size_t k = 0; k < 3; k++) {
		int c = index_of(consonants, w[2 * k]);
		int o = index_of(vowels, w[2 * k + 1]);
		if (c < 0 || o < 0)
			return false;
		v = v * 64 + (uint32_t)(c * 4 + o);
	}
	*id = v;
	return true;
}

uint32_t pg_vocab_word_id(const char *word, size_t len, uint32_t vocab_size)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	uint32_t id;

	if (vocab_size == 0)
		return 0;
	if (vocab_word(word, len, &id) && id < vocab_size)
		return id;
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)word[i];
		h *= 0x100000001b3ULL;
	}
	return (uint32_t)(h % vocab_size);
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

size_t pg_vocab_tokenize(const char *text, size_t len, uint32_t vocab_size,
			 void (*fn)(uint32_t id, void *ctx), void *ctx)
{
	size_t n = 0, i = 0;

	while (i < len) {
		size_t start;
		while (i < len && is_space(text[i]))
			i++;
		if (i == len)
			break;
		start = i;
		while (i < len && !is_space(text[i]))
			i++;
		if (fn)
			fn(pg_vocab_word_id(text + start, i - start, vocab_size), ctx);
		n++;
	}
	return n;
}

void pg_vocab_detokenize(struct pg_buf *out, const uint32_t *ids, size_t n)
{
	char w[PG_VOCAB_WORD_LEN];

	for (size_t i = 0; i < n; i++) {
		if (i)
			pg_buf_putc(out, ' ');
		pg_vocab_word(ids[i], w);
		pg_buf_add(out, w, sizeof(w));
	}
}
