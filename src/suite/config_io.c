/*
 * Entry points of the configuration loaders: read the inputs, tell the
 * three formats apart by content, and gather the tests into one suite.
 */
#include "suite/config_io_impl.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/strutil.h"
#include "gpu/gpu.h"
#include "sys/fsutil.h"

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pg_cfg_warn(struct pg_cfg *c, char *msg)
{
	for (size_t i = 0; i < c->suite->warnings.n; i++) {
		if (!strcmp(c->suite->warnings.v[i], msg)) {
			free(msg);
			return;
		}
	}
	pg_strv_push_owned(&c->suite->warnings, msg);
}

int pg_cfg_add_test(struct pg_cfg *c, struct pg_test *t, const struct pg_ydoc *d,
		    const yaml_node_t *name_node, const struct pg_ypath *path)
{
	for (size_t i = 0; i < c->suite->n_tests; i++) {
		const struct pg_test *o = &c->suite->tests[i];
		if (strcmp(o->name, t->name))
			continue;
		if (o->loc.line == 0)
			return pg_yerr(d, name_node, path, c->err,
				       "duplicate test name '%s' (first defined in %s)", t->name,
				       o->loc.file);
		return pg_yerr(d, name_node, path, c->err,
			       "duplicate test name '%s' (first defined at %s:%d:%d)", t->name,
			       o->loc.file, o->loc.line, o->loc.column);
	}
	pg_suite_add(c->suite, t);
	return 0;
}

int pg_cfg_set_gpu(struct pg_cfg *c, const char *gpu, const struct pg_ydoc *d,
		   const yaml_node_t *at, const struct pg_ypath *path)
{
	if (!*gpu)
		return pg_yerr(d, at, path, c->err,
			       "the GPU name is empty (leave 'gpu' out to detect it)");
	if (!pg_gpu_name_ok(gpu))
		return pg_yerr(d, at, path, c->err, "GPU name '%s': " PG_GPU_NAME_HINT, gpu);
	if (c->suite->gpu && strcmp(c->suite->gpu, gpu))
		return pg_yerr(d, at, path, c->err,
			       "gpu '%s' contradicts gpu '%s' of another input", gpu,
			       c->suite->gpu);
	if (!c->suite->gpu)
		c->suite->gpu = pg_xstrdup(gpu);
	return 0;
}

/* latency-tests.json, latency-tests-cpu.json ... -> PG_SUITE_LATENCY */
static int kind_from_file_name(const char *path, bool *startup)
{
	char *copy = pg_xstrdup(path);
	const char *base = basename(copy);
	int kind = -1;

	*startup = pg_str_has_prefix(base, "startup-tests");
	for (int k = 0; k < PG_SUITE_COUNT; k++) {
		char prefix[32];
		snprintf(prefix, sizeof(prefix), "%s-tests", pg_suite_kind_name(k));
		if (pg_str_has_prefix(base, prefix))
			kind = k;
	}
	free(copy);
	return kind;
}

static bool looks_like_step(const struct pg_ydoc *d, yaml_node_t *n)
{
	/* clang-format off */
	static const char *const step_keys[] = {
		"command", "commands", "plugins", "label", "group", "wait", "block", "input",
		"trigger", "key", "agents", "steps",
	};
	/* clang-format on */

	if (pg_ynode_is_scalar(n)) {
		const char *s = pg_ynode_text(n);
		return !strcmp(s, "wait") || !strcmp(s, "block") || !strcmp(s, "input");
	}
	for (size_t i = 0; i < sizeof(step_keys) / sizeof(step_keys[0]); i++)
		if (pg_ymap_get(d, n, step_keys[i]))
			return true;
	return false;
}

enum input_kind { IN_SUITE, IN_VLLM, IN_PIPELINE };

static int classify(const struct pg_ydoc *d, struct pg_error *err, enum input_kind *out)
{
	yaml_node_t *root = pg_ydoc_root(d);

	if (!root || pg_ynode_is_null(root))
		return pg_error_set(err, PG_ECONFIG,
				    "%s: the file is empty: expected a suite, a Buildkite pipeline "
				    "or a vLLM *-tests.json file",
				    d->file);
	if (pg_ynode_is_map(root)) {
		if (pg_ymap_get(d, root, "steps"))
			*out = IN_PIPELINE;
		else if (pg_ymap_get(d, root, "tests"))
			*out = IN_VLLM;
		else
			*out = IN_SUITE;
		return 0;
	}
	if (pg_ynode_is_seq(root)) {
		yaml_node_t *first = pg_yseq_item(d, root, 0);
		if (!first || pg_ymap_get(d, first, "test_name")) {
			*out = IN_VLLM;
			return 0;
		}
		if (looks_like_step(d, first)) {
			*out = IN_PIPELINE;
			return 0;
		}
		return pg_yexpected(
			d, first, NULL, err,
			"vLLM tests (objects with 'test_name') or Buildkite pipeline steps "
			"(a perfgate suite is a mapping: defaults, latency, throughput, "
			"serving)");
	}
	return pg_yexpected(d, root, NULL, err,
			    "a suite (a mapping with latency, throughput or serving tests), a "
			    "Buildkite pipeline or a vLLM *-tests.json file");
}

static int load_doc(struct pg_cfg *c, const struct pg_ydoc *d, const char *path,
		    bool allow_pipeline, const struct pg_config_select *select,
		    struct pg_config_step *step)
{
	const char *step_key = select ? select->step_key : NULL;
	enum input_kind kind;
	bool startup = false;
	int file_kind = path ? kind_from_file_name(path, &startup) : -1;
	int ret;

	if ((ret = classify(d, c->err, &kind)))
		return ret;
	if (step_key && kind != IN_PIPELINE)
		return pg_error_set(
			c->err, PG_ECONFIG,
			"--step chooses a step of a Buildkite pipeline, and %s is not one",
			d->file);
	switch (kind) {
	case IN_PIPELINE:
		if (!allow_pipeline)
			return pg_error_set(c->err, PG_ECONFIG,
					    "%s: a Buildkite pipeline cannot be used here: "
					    "give it alone, as the only input",
					    d->file);
		return pg_cfg_pipeline(c, d, pg_ydoc_root(d), select, step);
	case IN_VLLM:
		if (startup)
			return pg_error_set(
				c->err, PG_ECONFIG,
				"%s: a vLLM startup-tests file is not read: write a perfgate "
				"suite's startup: test (docs/suite.md, \"Startup tests\")",
				d->file);
		return pg_cfg_vllm(c, d, pg_ydoc_root(d), file_kind);
	case IN_SUITE:
		return pg_cfg_suite(c, d, pg_ydoc_root(d), NULL);
	}
	return 0;
}

static int read_input(const char *path, struct pg_buf *text, struct pg_error *err)
{
	int ret = pg_file_read_arg(path, text, err);

	/* a wrong path on the command line is the user's to fix: exit 2 */
	if (ret)
		ret = err->code = PG_ECONFIG;
	return ret;
}

static int load_path(struct pg_cfg *c, const char *path, bool allow_pipeline,
		     const struct pg_config_select *select, struct pg_config_step *step)
{
	struct pg_buf text = PG_BUF_INIT;
	struct pg_ydoc d = PG_YDOC_INIT;
	int ret;

	if ((ret = read_input(path, &text, c->err)))
		goto done;
	/* "-" is stdin: messages name it "<stdin>" */
	if ((ret = pg_ydoc_load(&d, text.ptr, text.len, pg_file_arg_name(path), c->err)))
		goto done;
	ret = load_doc(c, &d, pg_file_arg_name(path), allow_pipeline, select, step);
done:
	pg_ydoc_release(&d);
	pg_buf_release(&text);
	return ret;
}

int pg_cfg_load_file(struct pg_cfg *c, const char *path, struct pg_error *err)
{
	struct pg_error *saved = c->err;
	int ret;

	c->err = err;
	ret = load_path(c, path, false, NULL, NULL);
	c->err = saved;
	return ret;
}

static void step_init(struct pg_config_step *step)
{
	memset(step, 0, sizeof(*step));
	pg_plugin_config_init(&step->plugin);
}

void pg_config_step_release(struct pg_config_step *step)
{
	free(step->file);
	free(step->name);
	json_decref(step->config);
	pg_plugin_config_release(&step->plugin);
	memset(step, 0, sizeof(*step));
}

static void join_sources(struct pg_suite *s, const char *const *paths, size_t n)
{
	struct pg_buf b = PG_BUF_INIT;

	for (size_t i = 0; i < n; i++)
		pg_buf_printf(&b, "%s%s", i ? ", " : "", paths[i]);
	free(s->source);
	s->source = pg_buf_detach(&b);
}

int pg_config_load_step(struct pg_suite *out, struct pg_config_step *step, const char *const *paths,
			size_t n_paths, const struct pg_config_select *select, struct pg_error *err)
{
	struct pg_config_step local;
	struct pg_cfg c = { out, err };
	const char *step_key = select ? select->step_key : NULL;
	bool matrix = select && select->matrix && select->matrix->n;
	int ret = 0;

	if (!step)
		step = &local;
	step_init(step);
	if (n_paths == 0) {
		ret = pg_error_set(err, PG_ECONFIG,
				   "no input: give a suite file, a Buildkite pipeline or vLLM "
				   "*-tests.json files");
		goto done;
	}
	for (size_t i = 0; i < n_paths; i++) {
		if ((ret = load_path(&c, paths[i], n_paths == 1, select, step)))
			goto done;
	}
	if ((step_key || matrix) && !step->from_pipeline) {
		ret = pg_error_set(err, PG_ECONFIG,
				   "%s chooses a step of a Buildkite pipeline, and %s is not one",
				   step_key ? "--step" : "--matrix",
				   n_paths == 1 ? paths[0] : "no input");
		goto done;
	}
	if (!step->from_pipeline)
		join_sources(out, paths, n_paths);
	if (out->n_tests == 0)
		ret = pg_error_set(err, PG_ECONFIG, "no tests in %s: nothing to run",
				   out->source ? out->source : paths[0]);
done:
	if (ret)
		pg_suite_release(out);
	if (step == &local)
		pg_config_step_release(&local);
	return ret;
}

int pg_config_load(struct pg_suite *out, const char *const *paths, size_t n_paths,
		   const char *step_key, struct pg_error *err)
{
	struct pg_config_select select = { step_key, NULL };

	return pg_config_load_step(out, NULL, paths, n_paths, &select, err);
}

int pg_config_load_plugin(struct pg_suite *out, const struct pg_plugin_config *plugin,
			  struct pg_error *err)
{
	static const char source[] = "BUILDKITE_PLUGIN_CONFIGURATION";
	const struct pg_plugin_suites *suites = &plugin->suites;
	struct pg_ydoc d = PG_YDOC_INIT;
	struct pg_cfg c = { out, err };
	char *text = NULL;
	int ret;

	if (suites->paths.n) {
		if ((ret = pg_config_load(out, (const char *const *)suites->paths.v,
					  suites->paths.n, NULL, err)))
			return ret;
		goto ab;
	}
	if (!suites->inline_suite)
		return pg_error_set(err, PG_ECONFIG, "%s: option 'suites' is not given", source);
	text = json_dumps(suites->inline_suite, JSON_PRESERVE_ORDER | JSON_COMPACT);
	if ((ret = pg_ydoc_load(&d, text, strlen(text), source, err)))
		goto done;
	d.no_positions = true;
	{
		struct pg_ypath base = { NULL, "suites", 0 };
		enum input_kind kind;
		if ((ret = classify(&d, err, &kind)))
			goto done;
		if (kind == IN_SUITE)
			ret = pg_cfg_suite(&c, &d, pg_ydoc_root(&d), &base);
		else if (kind == IN_VLLM)
			ret = pg_cfg_vllm(&c, &d, pg_ydoc_root(&d), -1);
		else
			ret = pg_error_set(err, PG_ECONFIG,
					   "%s: suites: a pipeline cannot be a suite", source);
	}
	if (ret)
		goto done;
	free(out->source);
	out->source = pg_xstrdup(source);
	if (out->n_tests == 0) {
		ret = pg_error_set(err, PG_ECONFIG, "no tests in %s: nothing to run", source);
		goto done;
	}
ab:
	/* the step's ab option: the suite's ab section, written in the step */
	if (plugin->ab) {
		struct pg_ypath ap = { NULL, "ab", 0 };
		free(text);
		pg_ydoc_release(&d);
		text = json_dumps(plugin->ab, JSON_PRESERVE_ORDER | JSON_COMPACT);
		if ((ret = pg_ydoc_load(&d, text, strlen(text), source, err)))
			goto done;
		d.no_positions = true;
		ret = pg_cfg_ab(&c, &d, pg_ydoc_root(&d), &ap);
	}
done:
	free(text);
	pg_ydoc_release(&d);
	if (ret)
		pg_suite_release(out);
	return ret;
}

int pg_config_load_text(struct pg_suite *out, const char *text, size_t len, const char *source_name,
			struct pg_error *err)
{
	struct pg_ydoc d = PG_YDOC_INIT;
	struct pg_cfg c = { out, err };
	const char *name = source_name ? source_name : "<inline>";
	int ret;

	if ((ret = pg_ydoc_load(&d, text, len, name, err)))
		goto done;
	if ((ret = load_doc(&c, &d, NULL, false, NULL, NULL)))
		goto done;
	free(out->source);
	out->source = pg_xstrdup(name);
	if (out->n_tests == 0)
		ret = pg_error_set(err, PG_ECONFIG, "no tests in %s: nothing to run", name);
done:
	pg_ydoc_release(&d);
	if (ret)
		pg_suite_release(out);
	return ret;
}
