#include "loadgen/dataset.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/jsonscan.h"
#include "base/pyrand.h"
#include "base/rng.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void pg_prompts_release(struct pg_prompts *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].ids);
		free(p->v[i].text);
	}
	free(p->v);
	memset(p, 0, sizeof(*p));
}

static void push(struct pg_prompts *p, struct pg_prompt pr)
{
	PG_ARRAY_PUSH(p->v, p->n, p->cap, pr);
}

/* Common English words that are one token in the usual BPE vocabularies
 * (with their leading space). */
/* clang-format off */
static const char *const words[] = {
	"the", "of", "and", "to", "in", "is", "was", "for", "on", "that", "with", "as", "by",
	"at", "from", "his", "her", "they", "this", "had", "not", "are", "but", "one", "were",
	"which", "an", "all", "there", "been", "their", "has", "would", "when", "who", "will",
	"more", "no", "if", "out", "so", "what", "up", "about", "into", "than", "them", "can",
	"only", "other", "new", "some", "time", "could", "these", "two", "may", "then", "first",
	"any", "like", "now", "my", "such", "make", "over", "our", "even", "most", "me", "state",
	"after", "also", "made", "many", "did", "must", "before", "back", "see", "through", "way",
	"where", "get", "much", "go", "well", "your", "know", "should", "down", "work", "year",
	"because", "come", "people", "just", "say", "each", "those", "take", "day", "good", "how",
	"long", "little", "world", "very", "still", "own", "high", "men", "life", "both", "between",
};
/* clang-format on */
#define N_WORDS (sizeof(words) / sizeof(words[0]))

void pg_dataset_words(struct pg_buf *out, size_t n, struct pg_rng *rng)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			pg_buf_putc(out, ' ');
		pg_buf_puts(out, words[pg_rng_range(rng, 0, (long)N_WORDS - 1)]);
	}
}

int pg_dataset_random(struct pg_prompts *out, size_t n, const struct pg_dataset_spec *d,
		      bool as_text, uint64_t seed, struct pg_error *err)
{
	struct pg_rng rng;
	double r = d->range_ratio;
	long in_lo, in_hi, out_lo, out_hi, prefix_len = d->prefix_len > 0 ? d->prefix_len : 0;
	long *prefix = NULL;
	const long vocab = as_text ? (long)N_WORDS : PG_RANDOM_VOCAB_SPAN;

	if (d->input_len < 1)
		return pg_error_set(err, PG_ECONFIG, "input_len must be >= 1, got %ld",
				    d->input_len);
	if (d->output_len < 1)
		return pg_error_set(err, PG_ECONFIG, "output_len must be >= 1, got %ld",
				    d->output_len);
	if (!(r >= 0 && r < 1))
		return pg_error_set(err, PG_ECONFIG, "range_ratio must be in [0, 1), got %g", r);

	in_lo = (long)floor((double)d->input_len * (1 - r));
	in_hi = (long)ceil((double)d->input_len * (1 + r));
	out_lo = (long)floor((double)d->output_len * (1 - r));
	if (out_lo < 1)
		out_lo = 1;
	out_hi = (long)ceil((double)d->output_len * (1 + r));

	pg_rng_seed(&rng, seed);
	/* the same draw order as vLLM: prefix, then input lengths, output
	 * lengths and offsets, each for all requests */
	prefix = pg_xmalloc((size_t)(prefix_len ? prefix_len : 1) * sizeof(long));
	for (long i = 0; i < prefix_len; i++)
		prefix[i] = pg_rng_range(&rng, 0, vocab - 1);
	long *in_len = pg_xmalloc((n ? n : 1) * sizeof(long));
	long *out_len = pg_xmalloc((n ? n : 1) * sizeof(long));
	long *offset = pg_xmalloc((n ? n : 1) * sizeof(long));
	for (size_t k = 0; k < n; k++)
		in_len[k] = pg_rng_range(&rng, in_lo, in_hi);
	for (size_t k = 0; k < n; k++)
		out_len[k] = pg_rng_range(&rng, out_lo, out_hi);
	for (size_t k = 0; k < n; k++)
		offset[k] = pg_rng_range(&rng, 0, vocab - 1);

	for (size_t k = 0; k < n; k++) {
		struct pg_prompt pr = { 0 };
		size_t total = (size_t)(prefix_len + in_len[k]);
		long *ids = pg_xmalloc((total ? total : 1) * sizeof(long));

		for (long i = 0; i < prefix_len; i++)
			ids[i] = prefix[i];
		for (long i = 0; i < in_len[k]; i++)
			ids[prefix_len + i] = (offset[k] + (long)k + i) % vocab;
		pr.prompt_len = (long)total;
		pr.output_len = out_len[k];
		if (as_text) {
			struct pg_buf b = PG_BUF_INIT;
			for (size_t i = 0; i < total; i++) {
				if (i)
					pg_buf_putc(&b, ' ');
				pg_buf_puts(&b, words[ids[i]]);
			}
			pr.text = pg_buf_detach(&b);
			free(ids);
		} else {
			for (size_t i = 0; i < total; i++)
				ids[i] += PG_RANDOM_VOCAB_BASE;
			pr.ids = ids;
			pr.n_ids = total;
		}
		push(out, pr);
	}
	out->input_source = as_text ? "estimate" : "token_ids";
	free(prefix);
	free(in_len);
	free(out_len);
	free(offset);
	return 0;
}

long pg_token_estimate(const char *text)
{
	size_t len = strlen(text);
	return (long)((len + 3) / 4);
}

/* Fill out to n from the kept prompts: oversample with the rng (vLLM's
 * random.choice) when fewer than n qualified. */
/* The first n kept prompts; too few are oversampled as vLLM's
 * maybe_oversample_requests does: random.seed(seed), then
 * random.choices(kept, k=missing). */
static int take(struct pg_prompts *out, struct pg_prompts *kept, size_t n, uint64_t seed,
		const char *source, struct pg_error *err)
{
	struct pg_mt mt;
	size_t n_kept = kept->n;

	if (kept->n == 0)
		return pg_error_set(err, PG_ECONFIG, "%s: no entry passes the length filters",
				    source);
	for (size_t i = 0; i < kept->n && out->n < n; i++) {
		push(out, kept->v[i]);
		kept->v[i].text = NULL;
	}
	if (out->n < n)
		pg_mt_seed_python(&mt, seed);
	while (out->n < n) {
		const struct pg_prompt *src = &out->v[pg_py_choice(&mt, n_kept)];
		struct pg_prompt copy = *src;
		copy.text = pg_xstrdup(src->text);
		push(out, copy);
	}
	return 0;
}

static const char *turn_text(const json_t *conv, size_t i)
{
	json_t *turn = json_array_get(conv, i);
	json_t *v = json_is_object(turn) ? json_object_get(turn, "value") : NULL;
	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Parses one conversation; an error names its place in the whole file. */
static json_t *parse_entry(const char *text, const struct pg_jsonscan_span *sp, const char *source,
			   struct pg_error *err)
{
	json_error_t jerr;
	json_t *entry = json_loadb(text + sp->off, sp->len, JSON_DECODE_ANY | JSON_ALLOW_NUL,
				   &jerr);
	int line, col;

	if (entry)
		return entry;
	pg_jsonscan_position(text, sp->off, &line, &col);
	if (jerr.line > 1)
		col = jerr.column;
	else
		col += jerr.column > 0 ? jerr.column - 1 : 0;
	line += jerr.line > 1 ? jerr.line - 1 : 0;
	pg_error_set(err, PG_ECONFIG, "%s:%d:%d: %s", source, line, col, jerr.text);
	return NULL;
}

/* vLLM keeps the entries whose "conversations" has at least two turns
 * before it shuffles: found here without parsing the entry. */
static bool has_two_turns(const char *text, const struct pg_jsonscan_span *entry)
{
	struct pg_jsonscan_span conv;

	return pg_jsonscan_member(text, entry, "conversations", &conv) &&
	       pg_jsonscan_array_has(text, &conv, 2);
}

/*
 * The conversations of a ShareGPT file (its array's elements with two
 * turns or more, found by the scanner) in the order vLLM's load_data
 * visits them: random.seed(seed); random.shuffle(data). *spans and *order
 * (indices into *spans) are the caller's to free, also on error.
 */
static int shuffled_conversations(const char *text, size_t len, const char *source, uint64_t seed,
				  struct pg_jsonscan_span **spans, size_t **order, size_t *n_conv,
				  struct pg_error *err)
{
	struct pg_mt mt;
	size_t m = 0;
	int rc;

	*order = NULL;
	*n_conv = 0;
	if ((rc = pg_jsonscan_array_spans(text, len, source, spans, &m, err)))
		return rc;
	*order = pg_xmalloc((m ? m : 1) * sizeof(**order));
	for (size_t i = 0; i < m; i++)
		if (has_two_turns(text, &(*spans)[i]))
			(*order)[(*n_conv)++] = i;
	pg_mt_seed_python(&mt, seed);
	pg_py_shuffle(&mt, *order, *n_conv);
	return 0;
}

int pg_dataset_sharegpt(struct pg_prompts *out, const char *text, size_t len, const char *source,
			size_t n, long fixed_output_len, uint64_t seed, pg_token_count_fn count,
			void *ctx, struct pg_error *err)
{
	struct pg_prompts kept = { 0 };
	struct pg_jsonscan_span *spans = NULL;
	size_t n_conv = 0, *order = NULL;
	int rc;

	if ((rc = shuffled_conversations(text, len, source, seed, &spans, &order, &n_conv, err)))
		return rc;

	/* only the conversations visited are parsed: a few hundred of ~94,000 */
	for (size_t i = 0; i < n_conv && kept.n < n; i++) {
		json_t *entry = parse_entry(text, &spans[order[i]], source, err);
		json_t *conv = json_is_object(entry) ? json_object_get(entry, "conversations")
						     : NULL;
		const char *prompt, *completion;
		long plen, olen;

		if (!entry) {
			rc = PG_ECONFIG;
			goto done;
		}
		prompt = json_is_array(conv) && json_array_size(conv) >= 2 ? turn_text(conv, 0)
									   : NULL;
		completion = prompt ? turn_text(conv, 1) : NULL;
		if (!prompt || !completion) {
			json_decref(entry);
			continue;
		}
		if ((rc = count(ctx, prompt, &plen, err)) ||
		    (fixed_output_len <= 0 && (rc = count(ctx, completion, &olen, err)))) {
			json_decref(entry);
			goto done;
		}
		if (fixed_output_len > 0)
			olen = fixed_output_len;
		if (!(plen < 4 || (fixed_output_len <= 0 && olen < 4) || plen > 1024 ||
		      plen + olen > 2048))
			push(&kept, (struct pg_prompt){ NULL, 0, pg_xstrdup(prompt), plen, olen });
		json_decref(entry);
	}
	rc = take(out, &kept, n, seed, source, err);
done:
	pg_prompts_release(&kept);
	free(order);
	free(spans);
	return rc;
}

/* The questions of a conversation: its turns from a person, in order. */
static size_t questions(const json_t *conv, const char **q, size_t max)
{
	size_t i, n = 0;
	const json_t *turn;

	json_array_foreach(conv, i, turn)
	{
		const json_t *from = json_object_get(turn, "from");
		const json_t *v = json_object_get(turn, "value");

		if (n == max)
			break;
		if (json_is_string(from) && json_is_string(v) &&
		    (!strcmp(json_string_value(from), "human") ||
		     !strcmp(json_string_value(from), "user")))
			q[n++] = json_string_value(v);
	}
	return n;
}

void pg_dataset_questions_free(char **q, size_t n)
{
	for (size_t i = 0; q && i < n; i++)
		free(q[i]);
	free(q);
}

int pg_dataset_sharegpt_sessions(char ***out, const char *text, size_t len, const char *source,
				 size_t users, size_t rounds, uint64_t seed, struct pg_error *err)
{
	struct pg_jsonscan_span *spans = NULL;
	const char **q = pg_xcalloc(rounds ? rounds : 1, sizeof(*q));
	char **all = pg_xcalloc(users && rounds ? users * rounds : 1, sizeof(*all));
	struct pg_mt mt;
	size_t n_conv = 0, have = 0, *order = NULL;
	int rc;

	*out = NULL;
	if ((rc = shuffled_conversations(text, len, source, seed, &spans, &order, &n_conv, err)))
		goto done;
	for (size_t i = 0; i < n_conv && have < users; i++) {
		json_t *entry = parse_entry(text, &spans[order[i]], source, err);
		const json_t *conv = json_is_object(entry) ? json_object_get(entry, "conversations")
							   : NULL;

		if (!entry) {
			rc = PG_ECONFIG;
			goto done;
		}
		if (json_is_array(conv) && questions(conv, q, rounds) == rounds) {
			for (size_t k = 0; k < rounds; k++)
				all[have * rounds + k] = pg_xstrdup(q[k]);
			have++;
		}
		json_decref(entry);
	}
	if (!have) {
		rc = pg_error_set(err, PG_ECONFIG,
				  "%s: no conversation has %zu questions (turns from \"human\")",
				  source, rounds);
		goto done;
	}
	/* too few: the users beyond them copy a conversation drawn at random */
	if (have < users)
		pg_mt_seed_python(&mt, seed);
	for (size_t u = have; u < users; u++) {
		size_t from = pg_py_choice(&mt, have);
		for (size_t k = 0; k < rounds; k++)
			all[u * rounds + k] = pg_xstrdup(all[from * rounds + k]);
	}
	*out = all;
	all = NULL;
done:
	pg_dataset_questions_free(all, users * rounds);
	free(q);
	free(order);
	free(spans);
	return rc;
}

#define SONNET_BASE "Pick as many lines as you can from these poem lines:\n"

int pg_dataset_sonnet(struct pg_prompts *out, const char *text, size_t len, const char *source,
		      size_t n, long input_len, long output_len, long prefix_len, uint64_t seed,
		      pg_token_count_fn count, void *ctx, struct pg_error *err)
{
	char **lines = NULL;
	size_t n_lines = 0, cap = 0, misses = 0;
	struct pg_buf prompt = PG_BUF_INIT;
	struct pg_mt mt;
	long base, sum = 0, n_input, n_prefix;
	double avg;
	int rc = 0;

	for (size_t off = 0; off < len;) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t l = nl ? (size_t)(nl - (text + off)) + 1 : len - off;
		char *line = pg_xstrndup(text + off, l);

		PG_ARRAY_PUSH(lines, n_lines, cap, line);
		off += l;
	}
	if (!n_lines) {
		rc = pg_error_set(err, PG_ECONFIG, "%s: the sonnet file has no lines", source);
		goto done;
	}
	for (size_t i = 0; i < n_lines; i++) {
		long c;
		if ((rc = count(ctx, lines[i], &c, err)))
			goto done;
		sum += c;
	}
	avg = (double)sum / (double)n_lines;
	if ((rc = count(ctx, SONNET_BASE, &base, err)))
		goto done;
	if (input_len <= base) {
		rc = pg_error_set(err, PG_ECONFIG,
				  "%s: input_len %ld must exceed the base prompt's %ld tokens",
				  source, input_len, base);
		goto done;
	}
	/* Python's round(): halves to even, as the default rounding mode */
	n_input = avg > 0 ? (long)nearbyint((double)(input_len - base) / avg) : 0;
	n_prefix = avg > 0 ? (long)nearbyint((double)(prefix_len - base) / avg) : 0;
	if (n_prefix < 0)
		n_prefix = 0;
	if ((size_t)n_prefix > n_lines)
		n_prefix = (long)n_lines;
	pg_mt_seed_python(&mt, seed);
	while (out->n < n) {
		long plen;

		pg_buf_reset(&prompt);
		pg_buf_puts(&prompt, SONNET_BASE);
		for (long i = 0; i < n_prefix; i++)
			pg_buf_puts(&prompt, lines[i]);
		for (long i = n_prefix; i < n_input; i++)
			pg_buf_puts(&prompt, lines[pg_py_choice(&mt, n_lines)]);
		if ((rc = count(ctx, prompt.ptr, &plen, err)))
			goto done;
		if (plen <= input_len) {
			push(out, (struct pg_prompt){ NULL, 0, pg_xstrdup(prompt.ptr), plen,
						      output_len });
			misses = 0;
		} else if (++misses == 1000) {
			/* vLLM would draw forever */
			rc = pg_error_set(err, PG_ECONFIG,
					  "%s: no draw of %ld lines fits input_len %ld tokens "
					  "(the last counted %ld)",
					  source, n_input, input_len, plen);
			goto done;
		}
	}
done:
	for (size_t i = 0; i < n_lines; i++)
		free(lines[i]);
	free(lines);
	pg_buf_release(&prompt);
	return rc;
}

int pg_dataset_jsonl(struct pg_prompts *out, const char *text, size_t len, const char *source,
		     size_t n, long default_output_len, uint64_t seed, pg_token_count_fn count,
		     void *ctx, struct pg_error *err)
{
	struct pg_prompts all = { 0 };
	struct pg_mt mt;
	size_t *order = NULL;
	const char *p = text, *end = text + len;
	int line = 0, rc = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		json_t *obj, *prompt, *olen;
		json_error_t jerr;
		long ol;

		line++;
		const char *q = p;
		while (q < eol && (*q == ' ' || *q == '\t' || *q == '\r'))
			q++;
		if (q == eol) {
			p = eol + (nl ? 1 : 0);
			continue;
		}
		obj = json_loadb(p, (size_t)(eol - p), 0, &jerr);
		if (!obj) {
			rc = pg_error_set(err, PG_ECONFIG, "%s:%d:%d: %s", source, line,
					  jerr.column, jerr.text);
			goto done;
		}
		prompt = json_object_get(obj, "prompt");
		olen = json_object_get(obj, "output_len");
		if (!json_is_string(prompt)) {
			json_decref(obj);
			rc = pg_error_set(err, PG_ECONFIG, "%s:%d: prompt: expected a string",
					  source, line);
			goto done;
		}
		if (olen && !(json_is_integer(olen) && json_integer_value(olen) > 0)) {
			json_decref(obj);
			rc = pg_error_set(err, PG_ECONFIG,
					  "%s:%d: output_len: expected a positive integer", source,
					  line);
			goto done;
		}
		if (!olen && default_output_len <= 0) {
			json_decref(obj);
			rc = pg_error_set(
				err, PG_ECONFIG,
				"%s:%d: output_len: missing (and no output_len in the test)",
				source, line);
			goto done;
		}
		ol = olen ? (long)json_integer_value(olen) : default_output_len;
		push(&all,
		     (struct pg_prompt){ NULL, 0, pg_xstrdup(json_string_value(prompt)), 0, ol });
		json_decref(obj);
		p = eol + (nl ? 1 : 0);
	}
	if (all.n == 0) {
		rc = pg_error_set(err, PG_ECONFIG, "%s: no prompts", source);
		goto done;
	}
	order = pg_xmalloc(all.n * sizeof(*order));
	for (size_t i = 0; i < all.n; i++)
		order[i] = i;
	/* random.seed(seed); random.shuffle(data), as vLLM's custom dataset */
	pg_mt_seed_python(&mt, seed);
	pg_py_shuffle(&mt, order, all.n);
	{
		struct pg_prompts shuffled = { 0 };
		for (size_t i = 0; i < all.n; i++) {
			push(&shuffled, all.v[order[i]]);
			all.v[order[i]].text = NULL;
		}
		/* only the prompts taken are counted: a long file costs one
		 * /tokenize call per prompt used, not per line */
		for (size_t i = 0; i < shuffled.n && i < n && !rc; i++)
			rc = count(ctx, shuffled.v[i].text, &shuffled.v[i].prompt_len, err);
		if (!rc)
			rc = take(out, &shuffled, n, seed, source, err);
		pg_prompts_release(&shuffled);
	}
done:
	pg_prompts_release(&all);
	free(order);
	return rc;
}
