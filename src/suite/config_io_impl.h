#ifndef PERFGATE_SUITE_CONFIG_IO_IMPL_H
#define PERFGATE_SUITE_CONFIG_IO_IMPL_H

/* Shared by the loaders in src/suite/config*_io.c; not for other modules. */

#include "suite/config_io.h"
#include "sys/yamldoc.h"

struct pg_cfg {
	struct pg_suite *suite; /* tests accumulate here, across inputs */
	struct pg_error *err;
};

/* A note for the user, deduplicated (defaults shared by many tests would
 * otherwise repeat it). Takes msg. */
void pg_cfg_warn(struct pg_cfg *c, char *msg);

/* Add a finished test: rejects a name already used (naming both places).
 * name_node is where this test's name is written (for the position). Takes
 * t's contents on success; on failure t is left to the caller. */
int pg_cfg_add_test(struct pg_cfg *c, struct pg_test *t, const struct pg_ydoc *d,
		    const yaml_node_t *name_node, const struct pg_ypath *path);

/* Record the suite's GPU; a different one from another input is an error. */
int pg_cfg_set_gpu(struct pg_cfg *c, const char *gpu, const struct pg_ydoc *d,
		   const yaml_node_t *at, const struct pg_ypath *path);

/* The perfgate suite format, from a mapping node (the file's root, or a
 * pipeline's inline `suites:`). base is the path of that node (NULL at the
 * root). */
int pg_cfg_suite(struct pg_cfg *c, const struct pg_ydoc *d, yaml_node_t *root,
		 const struct pg_ypath *base);

/* A suite's `ab:` section (config_ab_io.c) into c->suite->ab; a second
 * one is an error. */
int pg_cfg_ab(struct pg_cfg *c, const struct pg_ydoc *d, yaml_node_t *node,
	      const struct pg_ypath *path);

/* vLLM's test files. kind: the suite kind the file name says
 * (latency-tests*.json...), or -1 to go by each test_name's prefix. */
int pg_cfg_vllm(struct pg_cfg *c, const struct pg_ydoc *d, yaml_node_t *root, int kind);

/* A Buildkite pipeline: choose the perfgate step, parse its options, load
 * its suites. */
int pg_cfg_pipeline(struct pg_cfg *c, const struct pg_ydoc *d, yaml_node_t *root,
		    const struct pg_config_select *select, struct pg_config_step *step);

/* Load one input file of any kind but a pipeline (from a pipeline's
 * `suites:`), as the top level does. */
int pg_cfg_load_file(struct pg_cfg *c, const char *path, struct pg_error *err);

/* Word characters of a test name, at most PG_TEST_NAME_MAX: it becomes a
 * file name. pg_cfg_name_problem says what is wrong, NULL when nothing. */
bool pg_cfg_valid_name(const char *name);
const char *pg_cfg_name_problem(const char *name);
#define PG_TEST_NAME_MAX 128
#define PG_STR_(x)       #x
#define PG_STR(x)        PG_STR_(x)

#endif
