#ifndef PERFGATE_BASE_JSONW_H
#define PERFGATE_BASE_JSONW_H

#include <jansson.h>

struct pg_buf;

/*
 * Serialise a jansson value the way perfgate writes every JSON file:
 * object keys in insertion order, reals in the shortest round-trip form
 * (pg_fmt_repr: 0.1, 200.0, 1e-05), strings as UTF-8 with only the escapes
 * JSON requires. jansson cannot hold NaN or Infinity, so the output is
 * always strict JSON.
 *
 * indent < 0: compact with ", " and ": " separators (Python's json.dumps
 *   default, as in the report's JSON section);
 * indent == 0: compact with no spaces;
 * indent > 0: pretty-printed with that many spaces per level.
 */
void pg_json_write(struct pg_buf *out, const json_t *v, int indent);

/* pg_json_write for a value nested depth levels deep in a pretty-printed
 * document (indent > 0): its inner lines are indented for that depth, so
 * a large document can be written one piece at a time. */
void pg_json_write_nested(struct pg_buf *out, const json_t *v, int indent, int depth);

/* Append s as a JSON string literal (with quotes). */
void pg_json_write_string(struct pg_buf *out, const char *s, size_t len);

/*
 * Lookups by a dotted path, where a dot walks into a nested object
 * ("percentiles.50", "perfgate.test"): the one way perfgate reads a key of
 * a result object that may be nested.
 */
json_t *pg_json_path(const json_t *obj, const char *dotted_key); /* borrowed, or NULL */
/* The non-empty string at a dotted path, or NULL. */
const char *pg_json_path_str(const json_t *obj, const char *dotted);

#endif
