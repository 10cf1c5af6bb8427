#ifndef PERFGATE_BASE_JSONSCAN_H
#define PERFGATE_BASE_JSONSCAN_H

/*
 * The elements of a JSON array found without building them. A ShareGPT file
 * is 650 MB and 94,000 conversations, of which a run needs a few hundred:
 * parsing it whole costs seconds and two bytes of memory per byte of file at
 * every test point. The scan checks the structure (strings closed, brackets
 * paired, commas between elements, nothing after the array); an element's
 * own content is checked when the caller parses it.
 */

#include <stdbool.h>
#include <stddef.h>

struct pg_error;

struct pg_jsonscan_span {
	size_t off; /* first byte of the element */
	size_t len; /* its length, without surrounding white space */
};

/*
 * text must hold one JSON array and nothing else but white space. On
 * success *spans (malloc'd, the caller frees) holds *n elements in order.
 * A structural error is PG_ECONFIG "source:line:col: what".
 */
int pg_jsonscan_array_spans(const char *text, size_t len, const char *source,
			    struct pg_jsonscan_span **spans, size_t *n, struct pg_error *err);

/*
 * Within an element found by pg_jsonscan_array_spans (so well-formed in
 * structure): the value of an object's member named key (compared as the
 * raw bytes between the quotes; the last one wins, as in Python's json),
 * and an array's length. Nothing is parsed or allocated.
 */
bool pg_jsonscan_member(const char *text, const struct pg_jsonscan_span *obj, const char *key,
			struct pg_jsonscan_span *value);
/* Whether the array has at least n elements (scanning no further). */
bool pg_jsonscan_array_has(const char *text, const struct pg_jsonscan_span *arr, size_t n);

/* 1-based line and column of byte off in text, for error messages. */
void pg_jsonscan_position(const char *text, size_t off, int *line, int *col);

#endif
