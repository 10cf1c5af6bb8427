#ifndef PERFGATE_SYS_YAMLDOC_H
#define PERFGATE_SYS_YAMLDOC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

struct pg_buf;
struct pg_error;

/*
 * A YAML (or JSON: JSON is read through libyaml too, so every message
 * carries a line and column) document with the helpers the configuration
 * loaders share: positions, key paths, typed scalars, mappings with
 * duplicate-key detection and `<<` merge keys.
 *
 * Scalars are typed by the YAML 1.2 core schema, on plain (unquoted)
 * scalars only: null (~, null, empty), true/false, integers, floats,
 * .inf/inf. A quoted "200" is a string. Messages read
 * "<file>:<line>:<col>: <key path>: <what was wrong>".
 *
 * Ownership: nodes belong to the document; pg_ydoc_release frees them all.
 */
struct pg_ydoc {
	yaml_document_t doc;
	bool loaded;
	char *file; /* as given, for messages (owned) */
	/* Text a program made (JSON re-serialised from
	 * BUILDKITE_PLUGIN_CONFIGURATION): its lines mean nothing to the user,
	 * so messages name the key path only. Set after loading. */
	bool no_positions;
};

#define PG_YDOC_INIT                                                                               \
	{                                                                                          \
		.loaded = false, .file = NULL                                                      \
	}

/* The path to a node, built on the stack as the loaders descend:
 * "serving[0].qps[1]". key == NULL means a sequence index. */
struct pg_ypath {
	const struct pg_ypath *up;
	const char *key;
	size_t index;
};

/* One mapping entry. */
struct pg_ypair {
	const char *key;
	yaml_node_t *key_node;
	yaml_node_t *value;
};

/* Parse text (not NUL-terminated necessarily). A file holding more than one
 * document, or not YAML at all, is PG_ECONFIG with the position. An empty
 * document loads fine with a NULL root. */
int pg_ydoc_load(struct pg_ydoc *d, const char *text, size_t len, const char *file,
		 struct pg_error *err);
void pg_ydoc_release(struct pg_ydoc *d);
yaml_node_t *pg_ydoc_root(const struct pg_ydoc *d);

void pg_ypath_format(struct pg_buf *out, const struct pg_ypath *p);

/* Set err to PG_ECONFIG: "<file>:<line>:<col>: <path>: <message>" (path
 * part left out when empty; at == NULL: "<file>: ..."). Returns PG_ECONFIG. */
int pg_yerr(const struct pg_ydoc *d, const yaml_node_t *at, const struct pg_ypath *path,
	    struct pg_error *err, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* The same line as a new string (for warnings). */
char *pg_ymsg(const struct pg_ydoc *d, const yaml_node_t *at, const struct pg_ypath *path,
	      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* "expected <what>, got <how n reads>" at n (what is a printf format).
 * Returns PG_ECONFIG. */
int pg_yexpected(const struct pg_ydoc *d, const yaml_node_t *n, const struct pg_ypath *path,
		 struct pg_error *err, const char *what_fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Position of a node, 1-based (0 when unknown or d->no_positions). */
int pg_ydoc_line(const struct pg_ydoc *d, const yaml_node_t *n);
int pg_ydoc_column(const struct pg_ydoc *d, const yaml_node_t *n);
/* The same, regardless of no_positions. */
int pg_ynode_line(const yaml_node_t *n);
int pg_ynode_column(const yaml_node_t *n);

/* Node kinds. Scalars: text (never NULL), and whether it was quoted. */
bool pg_ynode_is_map(const yaml_node_t *n);
bool pg_ynode_is_seq(const yaml_node_t *n);
bool pg_ynode_is_scalar(const yaml_node_t *n);
bool pg_ynode_is_null(const yaml_node_t *n); /* plain ~, null, Null, NULL or empty */
bool pg_ynode_is_quoted(const yaml_node_t *n);
const char *pg_ynode_text(const yaml_node_t *n); /* scalar text, "" otherwise */
/* Replace a scalar's text (the style, so the typing rules, stay): the
 * pipeline loader substitutes Buildkite's variables this way. */
void pg_ynode_set_text(yaml_node_t *n, const char *text);

/* How a value reads in a message: 'fast', "200" (quoted), null, a list, a mapping. */
void pg_ynode_describe(struct pg_buf *out, const yaml_node_t *n);

/*
 * The entries of a mapping in document order. Merge keys (`<<: *anchor`,
 * `<<: [*a, *b]`) contribute the entries the mapping does not set itself.
 * A key given twice, a non-scalar key, or a node that is not a mapping is
 * an error (`what` names the expected content: "a mapping of test keys").
 * *out is malloc'ed (caller frees; entries point into the document).
 */
int pg_ymap_pairs(const struct pg_ydoc *d, yaml_node_t *map, const struct pg_ypath *path,
		  const char *what, struct pg_ypair **out, size_t *n, struct pg_error *err);
/* The value of key in a mapping (after merge keys), or NULL. */
yaml_node_t *pg_ymap_get(const struct pg_ydoc *d, yaml_node_t *map, const char *key);

size_t pg_yseq_len(const yaml_node_t *seq);
yaml_node_t *pg_yseq_item(const struct pg_ydoc *d, const yaml_node_t *seq, size_t i);

/*
 * Typed scalars. Each fails with "expected <what>, got <description>". For
 * numbers, a quoted number is refused with a hint to drop the quotes.
 * pg_yget_string takes any non-null scalar (numbers and booleans as written).
 */
int pg_yget_string(const struct pg_ydoc *d, const yaml_node_t *n, const struct pg_ypath *p,
		   char **out, struct pg_error *err);
int pg_yget_long(const struct pg_ydoc *d, const yaml_node_t *n, const struct pg_ypath *p, long min,
		 long *out, struct pg_error *err);
/* inf_ok: also accept inf/.inf (and a quoted "inf"). */
int pg_yget_double(const struct pg_ydoc *d, const yaml_node_t *n, const struct pg_ypath *p,
		   bool inf_ok, double *out, struct pg_error *err);
int pg_yget_bool(const struct pg_ydoc *d, const yaml_node_t *n, const struct pg_ypath *p, bool *out,
		 struct pg_error *err);

/* The node as JSON by the typing rules above (new reference). */
json_t *pg_ynode_to_json(const struct pg_ydoc *d, const yaml_node_t *n);

#endif
