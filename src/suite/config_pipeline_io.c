/*
 * A Buildkite pipeline as input: `perfgate run pipeline.yml --step KEY`
 * runs on a laptop exactly what that step runs in CI.
 *
 * The perfgate steps are those with a plugin whose source names perfgate
 * (org/perfgate#v1.0.0, a full git URL, a vendored ./path), in the
 * plugins array or the legacy plugins map, also inside group steps. The
 * chosen step's options are validated by buildkite/plugin_config (with the
 * position of each option), and its `suites:` is loaded: a path (or list of
 * paths) relative to the repository checkout -- the current directory --
 * falling back to the pipeline file's directory, or the suite inline.
 *
 * Before that, the step's options get what Buildkite does to them:
 * environment variables substituted as at upload, matrix values as per
 * job (suite/config_io.h struct pg_config_select).
 */
#include "suite/config_io_impl.h"

#include "base/alloc.h"
#include "suite/bkinterp.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/strutil.h"

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

struct candidate {
	yaml_node_t *step;
	yaml_node_t *config; /* the plugin's configuration, or NULL */
	char *key;           /* key (or identifier, id), or NULL */
	char *label;         /* label (or name), or NULL */
	char *where;         /* "steps[2].steps[0]" */
};

struct pctx {
	struct pg_cfg *cfg;
	const struct pg_ydoc *d;
	struct candidate *c;
	size_t n;
	size_t cap;
};

static char *scalar_or_null(const struct pg_ydoc *d, yaml_node_t *step, const char *key)
{
	yaml_node_t *v = pg_ymap_get(d, step, key);
	return pg_ynode_is_scalar(v) && !pg_ynode_is_null(v) ? pg_xstrdup(pg_ynode_text(v)) : NULL;
}

static void add_candidate(struct pctx *p, yaml_node_t *step, yaml_node_t *config, const char *where)
{
	struct candidate c = { step, config, NULL, NULL, pg_xstrdup(where) };

	c.key = scalar_or_null(p->d, step, "key");
	if (!c.key)
		c.key = scalar_or_null(p->d, step, "identifier");
	if (!c.key)
		c.key = scalar_or_null(p->d, step, "id");
	c.label = scalar_or_null(p->d, step, "label");
	if (!c.label)
		c.label = scalar_or_null(p->d, step, "name");
	PG_ARRAY_PUSH(p->c, p->n, p->cap, c);
}

static bool is_perfgate(const char *source)
{
	return strcasestr(source, "perfgate") != NULL;
}

static void scan_plugins(struct pctx *p, yaml_node_t *step, const char *where)
{
	yaml_node_t *plugins = pg_ymap_get(p->d, step, "plugins");

	if (pg_ynode_is_seq(plugins)) {
		for (size_t i = 0; i < pg_yseq_len(plugins); i++) {
			yaml_node_t *entry = pg_yseq_item(p->d, plugins, i);
			if (pg_ynode_is_scalar(entry) && is_perfgate(pg_ynode_text(entry))) {
				add_candidate(p, step, NULL, where);
				continue;
			}
			if (!pg_ynode_is_map(entry))
				continue;
			for (yaml_node_pair_t *pr = entry->data.mapping.pairs.start;
			     pr < entry->data.mapping.pairs.top; pr++) {
				yaml_node_t *k = yaml_document_get_node(
					(yaml_document_t *)&p->d->doc, pr->key);
				yaml_node_t *v = yaml_document_get_node(
					(yaml_document_t *)&p->d->doc, pr->value);
				if (pg_ynode_is_scalar(k) && is_perfgate(pg_ynode_text(k)))
					add_candidate(p, step, v, where);
			}
		}
	} else if (pg_ynode_is_map(plugins)) {
		/* the legacy form: plugins as a mapping of source -> config */
		for (yaml_node_pair_t *pr = plugins->data.mapping.pairs.start;
		     pr < plugins->data.mapping.pairs.top; pr++) {
			yaml_node_t *k = yaml_document_get_node((yaml_document_t *)&p->d->doc,
								pr->key);
			yaml_node_t *v = yaml_document_get_node((yaml_document_t *)&p->d->doc,
								pr->value);
			if (pg_ynode_is_scalar(k) && is_perfgate(pg_ynode_text(k)))
				add_candidate(p, step, v, where);
		}
	}
}

static void scan_steps(struct pctx *p, yaml_node_t *steps, const char *prefix, int depth)
{
	if (depth > 8)
		return;
	for (size_t i = 0; i < pg_yseq_len(steps); i++) {
		yaml_node_t *step = pg_yseq_item(p->d, steps, i);
		yaml_node_t *sub;
		char where[256];

		snprintf(where, sizeof(where), "%s[%zu]", prefix, i);
		if (!pg_ynode_is_map(step))
			continue;
		sub = pg_ymap_get(p->d, step, "steps");
		if (pg_ynode_is_seq(sub)) {
			char nested[300];
			snprintf(nested, sizeof(nested), "%s.steps", where);
			scan_steps(p, sub, nested, depth + 1);
		}
		scan_plugins(p, step, where);
	}
}

static const char *display_name(const struct candidate *c)
{
	return c->key ? c->key : c->label ? c->label : c->where;
}

static void list_names(struct pg_buf *b, const struct pctx *p)
{
	for (size_t i = 0; i < p->n; i++)
		pg_buf_printf(b, "%s'%s'", i ? ", " : "", display_name(&p->c[i]));
}

static int choose(struct pctx *p, const char *step_key, const char *file, struct candidate **out)
{
	struct pg_buf names = PG_BUF_INIT;
	int ret = 0;

	list_names(&names, p);
	if (p->n == 0) {
		ret = pg_error_set(p->cfg->err, PG_ECONFIG,
				   "%s: no step uses the perfgate plugin (a plugin whose source "
				   "names perfgate, e.g. perfgate/perfgate#v" PERFGATE_VERSION ")",
				   file);
		goto done;
	}
	if (!step_key) {
		if (p->n == 1) {
			*out = &p->c[0];
			goto done;
		}
		ret = pg_error_set(
			p->cfg->err, PG_ECONFIG,
			"%s: %zu steps use the perfgate plugin (%s): choose one with --step KEY",
			file, p->n, names.ptr);
		goto done;
	}
	for (int pass = 0; pass < 2 && !*out; pass++) {
		for (size_t i = 0; i < p->n; i++) {
			const char *s = pass == 0 ? p->c[i].key : p->c[i].label;
			if (s && !strcmp(s, step_key)) {
				if (*out) {
					ret = pg_error_set(
						p->cfg->err, PG_ECONFIG,
						"%s: more than one perfgate step is called '%s'",
						file, step_key);
					goto done;
				}
				*out = &p->c[i];
			}
		}
	}
	if (!*out) {
		const char *cands[64];
		size_t n = 0;
		const char *near;

		for (size_t i = 0; i < p->n && n < 64; i++)
			cands[n++] = display_name(&p->c[i]);
		near = pg_nearest(step_key, cands, n);
		if (near)
			ret = pg_error_set(
				p->cfg->err, PG_ECONFIG,
				"%s: no perfgate step with key or label '%s' (did you mean '%s'?)",
				file, step_key, near);
		else
			ret = pg_error_set(
				p->cfg->err, PG_ECONFIG,
				"%s: no perfgate step with key or label '%s'; the perfgate steps "
				"are %s",
				file, step_key, names.ptr);
	}
done:
	pg_buf_release(&names);
	return ret;
}

struct locate_ctx {
	const struct pg_ydoc *d;
	const struct candidate *c;
};

static const char *locate(void *vctx, const char *option, char *buf, size_t size)
{
	const struct locate_ctx *l = vctx;
	const yaml_node_t *at = l->c->config ? l->c->config : l->c->step;

	if (option && pg_ynode_is_map(l->c->config)) {
		yaml_node_t *map = l->c->config;
		for (yaml_node_pair_t *pr = map->data.mapping.pairs.start;
		     pr < map->data.mapping.pairs.top; pr++) {
			yaml_node_t *k = yaml_document_get_node((yaml_document_t *)&l->d->doc,
								pr->key);
			if (pg_ynode_is_scalar(k) && !strcmp(pg_ynode_text(k), option))
				at = k;
		}
	}
	snprintf(buf, size, "%s:%d:%d", l->d->file, pg_ynode_line(at), pg_ynode_column(at));
	return buf;
}

/* ---- what Buildkite does to the step's strings ---- */

/* $VAR: the pipeline's top-level env: first (Buildkite prefers it to the
 * uploading job's environment), then perfgate's environment. */
static const char *env_value(void *ctx, const char *name)
{
	const char *v = pg_kvlist_get(ctx, name);

	return v ? v : getenv(name);
}

static int pipeline_env(struct pg_kvlist *out, const struct pg_ydoc *d, yaml_node_t *root,
			struct pg_error *err)
{
	yaml_node_t *env = pg_ynode_is_map(root) ? pg_ymap_get(d, root, "env") : NULL;
	struct pg_ypath path = { NULL, "env", 0 };
	struct pg_ypair *pairs = NULL;
	size_t n = 0;
	int ret;

	if (!env || pg_ynode_is_null(env))
		return 0;
	if ((ret = pg_ymap_pairs(d, env, &path, "a mapping of environment variables", &pairs, &n,
				 err)))
		return ret;
	for (size_t i = 0; i < n && !ret; i++) {
		struct pg_buf v = PG_BUF_INIT;
		struct pg_error ierr = PG_ERROR_INIT;
		struct pg_ypath at = { &path, pairs[i].key, 0 };

		if (!pg_ynode_is_scalar(pairs[i].value))
			ret = pg_yexpected(d, pairs[i].value, &at, err, "a string");
		else if (pg_bk_interpolate(&v, pg_ynode_text(pairs[i].value), env_value, out,
					   &ierr))
			ret = pg_yerr(d, pairs[i].value, &at, err, "%s", ierr.msg);
		else
			pg_kvlist_set(out, pairs[i].key, v.ptr);
		pg_buf_release(&v);
	}
	free(pairs);
	return ret;
}

/* Mark the nodes of the subtree at n (mapping values, not keys), once each
 * however many aliases lead to them. */
static void mark_subtree(const struct pg_ydoc *d, yaml_node_t *n, bool *seen)
{
	yaml_document_t *doc = (yaml_document_t *)&d->doc;
	size_t i;

	if (!n || seen[n - doc->nodes.start])
		return;
	seen[n - doc->nodes.start] = true;
	if (n->type == YAML_MAPPING_NODE) {
		for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
		     pr < n->data.mapping.pairs.top; pr++)
			mark_subtree(d, yaml_document_get_node(doc, pr->value), seen);
	} else if (n->type == YAML_SEQUENCE_NODE) {
		for (i = 0; i < pg_yseq_len(n); i++)
			mark_subtree(d, pg_yseq_item(d, n, i), seen);
	}
}

static char *join(const struct pg_strv *v)
{
	struct pg_buf b = PG_BUF_INIT;

	for (size_t i = 0; i < v->n; i++)
		pg_buf_printf(&b, "%s%s", i ? ", " : "", v->v[i]);
	return pg_buf_detach(&b);
}

/* Add a scalar's text to out, once. */
static void push_scalar(struct pg_strv *out, yaml_node_t *n)
{
	if (!pg_ynode_is_scalar(n) || pg_ynode_is_null(n))
		return;
	for (size_t i = 0; i < out->n; i++)
		if (!strcmp(out->v[i], pg_ynode_text(n)))
			return;
	pg_strv_push(out, pg_ynode_text(n));
}

/* The values a step's matrix gives {{matrix.NAME}} (name "": {{matrix}}):
 * its setup, and the `with` of its adjustments. */
static void matrix_values(const struct pg_ydoc *d, yaml_node_t *step, const char *name,
			  struct pg_strv *out)
{
	yaml_node_t *m = pg_ymap_get(d, step, "matrix");
	/* matrix: [a, b], or matrix: {setup: [a, b] | {NAME: [...]}, adjustments} */
	yaml_node_t *setup = pg_ynode_is_map(m) ? pg_ymap_get(d, m, "setup") : m;
	yaml_node_t *adj = pg_ynode_is_map(m) ? pg_ymap_get(d, m, "adjustments") : NULL;
	yaml_node_t *list = NULL;

	if (!*name && pg_ynode_is_seq(setup))
		list = setup;
	else if (*name && pg_ynode_is_map(setup))
		list = pg_ymap_get(d, setup, name);

	for (size_t i = 0; pg_ynode_is_seq(list) && i < pg_yseq_len(list); i++)
		push_scalar(out, pg_yseq_item(d, list, i));
	for (size_t i = 0; pg_ynode_is_seq(adj) && i < pg_yseq_len(adj); i++) {
		yaml_node_t *with = pg_ymap_get(d, pg_yseq_item(d, adj, i), "with");
		if (!*name)
			push_scalar(out, with);
		else if (pg_ynode_is_map(with))
			push_scalar(out, pg_ymap_get(d, with, name));
	}
}

/* A --matrix value for {{matrix}} (name "") or {{matrix.NAME}}. */
static const char *matrix_choice(void *ctx, const char *name)
{
	const struct pg_strv *given = ctx;
	size_t n = strlen(name);

	for (size_t i = 0; given && i < given->n; i++) {
		const char *eq = strchr(given->v[i], '=');
		if (!*name && !eq)
			return given->v[i];
		if (*name && eq && (size_t)(eq - given->v[i]) == n &&
		    !strncmp(given->v[i], name, n))
			return eq + 1;
	}
	return NULL;
}

/* Every --matrix value names a dimension of the step's matrix and one of
 * its values: a job Buildkite would run. */
static int check_matrix_choices(struct pctx *p, const struct candidate *c, const char *label,
				const struct pg_strv *given)
{
	int ret = 0;

	if (given && given->n && !pg_ymap_get(p->d, c->step, "matrix"))
		return pg_error_set(p->cfg->err, PG_ECONFIG,
				    "--matrix: step '%s' of %s has no matrix", label, p->d->file);
	for (size_t i = 0; given && i < given->n && !ret; i++) {
		const char *eq = strchr(given->v[i], '=');
		char *name = eq ? pg_xstrndup(given->v[i], (size_t)(eq - given->v[i]))
				: pg_xstrdup("");
		const char *value = eq ? eq + 1 : given->v[i];
		struct pg_strv values = PG_STRV_INIT;
		bool found = false;

		matrix_values(p->d, c->step, name, &values);
		for (size_t k = 0; k < values.n && !found; k++)
			found = !strcmp(values.v[k], value);
		if (!values.n)
			ret = pg_error_set(p->cfg->err, PG_ECONFIG,
					   "--matrix %s: the matrix of step '%s' has no %s%s%s",
					   given->v[i], label,
					   *name ? "'" : "plain values (use NAME=VALUE)", name,
					   *name ? "'" : "");
		else if (!found) {
			char *list = join(&values);
			ret = pg_error_set(p->cfg->err, PG_ECONFIG,
					   "--matrix %s: not a job of step '%s' (%s%s%s)",
					   given->v[i], label, name, *name ? ": " : "", list);
			free(list);
		}
		pg_strv_release(&values);
		free(name);
	}
	return ret;
}

/*
 * Substitute variables and matrix values in the chosen step's options, in
 * place. A matrix reference with no --matrix value is an error naming the
 * values to choose from, except in `gpu` (left for the caller to detect).
 */
static int fill_step(struct pctx *p, const struct candidate *c, const char *label,
		     const struct pg_strv *matrix, yaml_node_t *root)
{
	const struct pg_ydoc *d = p->d;
	yaml_document_t *doc = (yaml_document_t *)&d->doc;
	size_t n_nodes = (size_t)(doc->nodes.top - doc->nodes.start);
	yaml_node_t *gpu = pg_ynode_is_map(c->config) ? pg_ymap_get(d, c->config, "gpu") : NULL;
	struct pg_kvlist env = { 0 };
	bool *seen;
	int ret;

	if ((ret = pipeline_env(&env, d, root, p->cfg->err)) ||
	    (ret = check_matrix_choices(p, c, label, matrix))) {
		pg_kvlist_release(&env);
		return ret;
	}
	seen = pg_xcalloc(n_nodes ? n_nodes : 1, sizeof(*seen));
	mark_subtree(d, c->config, seen);
	for (size_t i = 0; i < n_nodes && !ret; i++) {
		yaml_node_t *n = doc->nodes.start + i;
		struct pg_buf b = PG_BUF_INIT, m = PG_BUF_INIT;
		struct pg_error ierr = PG_ERROR_INIT;

		if (!seen[i] || !pg_ynode_is_scalar(n))
			continue;
		if (pg_bk_interpolate(&b, pg_ynode_text(n), env_value, &env, &ierr)) {
			ret = pg_yerr(d, n, NULL, p->cfg->err, "step '%s': %s", label, ierr.msg);
		} else if (pg_bk_matrix_fill(&m, b.ptr, matrix_choice, (void *)matrix, &ierr) ==
			   0) {
			if (strcmp(m.ptr, pg_ynode_text(n)))
				pg_ynode_set_text(n, m.ptr);
		} else if (n == gpu) {
			if (strcmp(b.ptr, pg_ynode_text(n)))
				pg_ynode_set_text(n, b.ptr);
		} else {
			/* ierr.msg is the reference: "{{matrix.model}}" */
			const char *name = strchr(ierr.msg, '.') ? strchr(ierr.msg, '.') + 1 : "";
			struct pg_strv values = PG_STRV_INIT;
			char *list, *dim = pg_xstrndup(name, strcspn(name, " }"));

			matrix_values(d, c->step, dim, &values);
			list = values.n ? join(&values) : pg_xstrdup("none");
			ret = pg_yerr(d, n, NULL, p->cfg->err,
				      "step '%s': %s is filled in by Buildkite for each job of the "
				      "step's matrix (%s%s%s); choose one with --matrix %s%sVALUE",
				      label, ierr.msg, dim, *dim ? ": " : "", list, dim,
				      *dim ? "=" : "");
			free(list);
			free(dim);
			pg_strv_release(&values);
		}
		pg_buf_release(&b);
		pg_buf_release(&m);
	}
	free(seen);
	pg_kvlist_release(&env);
	return ret;
}

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static int load_suite_paths(struct pctx *p, const struct candidate *c, const struct pg_strv *paths)
{
	yaml_node_t *node = pg_ymap_get(p->d, c->config, "suites");
	struct pg_ypath sp = { NULL, "suites", 0 };
	char *copy = pg_xstrdup(p->d->file);
	const char *pipeline_dir = dirname(copy);
	int ret = 0;

	for (size_t i = 0; i < paths->n && !ret; i++) {
		const char *rel = paths->v[i];
		char *alt = NULL;
		const char *use = rel;

		if (!exists(rel) && rel[0] != '/') {
			struct pg_buf b = PG_BUF_INIT;
			pg_buf_printf(&b, "%s/%s", pipeline_dir, rel);
			alt = pg_buf_detach(&b);
			if (exists(alt)) {
				use = alt;
			} else {
				if (!strcmp(pipeline_dir, "."))
					ret = pg_yerr(p->d, node, &sp, p->cfg->err,
						      "suite file '%s' not found", rel);
				else
					ret = pg_yerr(
						p->d, node, &sp, p->cfg->err,
						"suite file '%s' not found (looked in the current "
						"directory and in %s)",
						rel, pipeline_dir);
				free(alt);
				break;
			}
		}
		ret = pg_cfg_load_file(p->cfg, use, p->cfg->err);
		free(alt);
	}
	free(copy);
	return ret;
}

int pg_cfg_pipeline(struct pg_cfg *cfg, const struct pg_ydoc *d, yaml_node_t *root,
		    const struct pg_config_select *select, struct pg_config_step *step)
{
	const char *step_key = select ? select->step_key : NULL;
	struct pctx p = { cfg, d, NULL, 0, 0 };
	struct candidate *chosen = NULL;
	yaml_node_t *steps = pg_ynode_is_map(root) ? pg_ymap_get(d, root, "steps") : root;
	struct pg_plugin_config pc;
	json_t *config = NULL;
	struct locate_ctx lc;
	char label[300];
	int ret;

	if (!pg_ynode_is_seq(steps)) {
		struct pg_ypath sp = { NULL, "steps", 0 };
		return pg_yexpected(d, steps, &sp, cfg->err, "a list of steps");
	}
	scan_steps(&p, steps, pg_ynode_is_map(root) ? "steps" : "", 0);
	if ((ret = choose(&p, step_key, d->file, &chosen)))
		goto done;

	snprintf(label, sizeof(label), "%s", display_name(chosen));
	if ((ret = fill_step(&p, chosen, label, select ? select->matrix : NULL, root)))
		goto done;
	config = pg_ynode_to_json(d, chosen->config);
	lc = (struct locate_ctx){ d, chosen };
	if (chosen->config && !pg_ynode_is_null(chosen->config)) {
		/* duplicate keys in the options are reported with their line */
		struct pg_ypair *pairs = NULL;
		size_t n = 0;
		struct pg_ypath op = { NULL, label, 0 };
		if ((ret = pg_ymap_pairs(d, chosen->config, &op, "a mapping of plugin options",
					 &pairs, &n, cfg->err)))
			goto done;
		free(pairs);
	}
	if ((ret = pg_plugin_config_parse_at(&pc, config, label, locate, &lc, cfg->err))) {
		pg_plugin_config_release(&pc);
		goto done;
	}
	pg_plugin_config_release(&step->plugin);
	step->plugin = pc;
	step->from_pipeline = true;
	free(step->file);
	step->file = pg_xstrdup(d->file);
	free(step->name);
	step->name = pg_xstrdup(label);

	if (step->plugin.gpu && strstr(step->plugin.gpu, "{{")) {
		pg_cfg_warn(cfg,
			    pg_ymsg(d, pg_ymap_get(d, chosen->config, "gpu"), NULL,
				    "step '%s': gpu '%s' is filled in by Buildkite for each job of "
				    "the step's matrix; perfgate detects the GPU instead (or give "
				    "--matrix or --gpu)",
				    label, step->plugin.gpu));
		free(step->plugin.gpu);
		step->plugin.gpu = pg_xstrdup("auto");
		json_object_set_new(config, "gpu", json_string("auto"));
	}
	json_decref(step->config);
	step->config = json_incref(config);

	if (step->plugin.suites.inline_suite) {
		struct pg_ypath sp = { NULL, "suites", 0 };
		ret = pg_cfg_suite(cfg, d, pg_ymap_get(d, chosen->config, "suites"), &sp);
	} else if (step->plugin.suites.paths.n) {
		ret = load_suite_paths(&p, chosen, &step->plugin.suites.paths);
	} else {
		ret = pg_error_set(cfg->err, PG_ECONFIG,
				   "%s: step '%s' has mode 'report': it runs no suites", d->file,
				   label);
	}
	/* the step's ab option: the suite's ab section, written in the step */
	if (!ret && step->plugin.ab) {
		struct pg_ypath ap = { NULL, "ab", 0 };
		ret = pg_cfg_ab(cfg, d, pg_ymap_get(d, chosen->config, "ab"), &ap);
	}
	if (!ret) {
		struct pg_buf src = PG_BUF_INIT;
		pg_buf_printf(&src, "%s, step '%s'", d->file, label);
		free(cfg->suite->source);
		cfg->suite->source = pg_buf_detach(&src);
	}
done:
	json_decref(config);
	for (size_t i = 0; i < p.n; i++) {
		free(p.c[i].key);
		free(p.c[i].label);
		free(p.c[i].where);
	}
	free(p.c);
	return ret;
}
