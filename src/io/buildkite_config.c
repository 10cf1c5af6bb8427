/*
 * The plugin configuration: where it comes from (the agent's environment)
 * and what perfgate accepts.
 */
#include "io/buildkite.h"

#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *pg_bk_config_from_env(const struct pg_bkenv *env, char **source, struct pg_error *err)
{
	json_error_t jerr;
	json_t *config;

	if (source)
		*source = NULL;
	if (env->plugin_configuration) {
		config = json_loads(env->plugin_configuration, JSON_REJECT_DUPLICATES, &jerr);
		if (!config) {
			pg_error_set(err, PG_ECONFIG, "BUILDKITE_PLUGIN_CONFIGURATION: %s", jerr.text);
			return NULL;
		}
		if (!json_is_object(config)) {
			json_decref(config);
			pg_error_set(err, PG_ECONFIG, "BUILDKITE_PLUGIN_CONFIGURATION: expected an object");
			return NULL;
		}
		return config;
	}
	if (env->plugins) {
		config = pg_bk_plugins_find(env->plugins, source, err);
		if (config && !json_is_object(config)) {
			json_decref(config);
			pg_error_set(err, PG_ECONFIG, "BUILDKITE_PLUGINS: perfgate's configuration is not an object");
			return NULL;
		}
		if (!config && err->code == PG_ENOTFOUND)
			err->code = PG_ECONFIG;
		return config;
	}
	pg_error_set(err, PG_ECONFIG,
		     "no plugin configuration: BUILDKITE_PLUGIN_CONFIGURATION is not set (perfgate "
		     "buildkite runs as the perfgate plugin's command hook)");
	return NULL;
}

/* ---- validation ---- */

enum opt_kind { OPT_STRING, OPT_ENUM, OPT_BOOL, OPT_INT, OPT_STRINGS, OPT_SUITES };

struct option_def {
	const char *name;
	enum opt_kind kind;
	size_t offset;              /* into struct pg_bk_settings */
	const char *const *choices; /* OPT_ENUM */
	long min;                   /* OPT_INT */
};

static const char *const baseline_choices[] = { "thresholds", "git", NULL };
static const char *const mode_choices[] = { "run", "report", "gate", "merge", "pipeline", NULL };
static const char *const annotate_choices[] = { "always", "on-change", "never", NULL };

#define OFF(field) offsetof(struct pg_bk_settings, field)

static const struct option_def option_defs[] = {
	{ "suites", OPT_SUITES, OFF(suites), NULL, 0 },
	{ "gpu", OPT_STRING, OFF(gpu), NULL, 0 },
	{ "thresholds", OPT_STRING, OFF(thresholds), NULL, 0 },
	{ "baseline", OPT_ENUM, OFF(baseline), baseline_choices, 0 },
	{ "mode", OPT_ENUM, OFF(mode), mode_choices, 0 },
	{ "filter", OPT_STRING, OFF(filter), NULL, 0 },
	{ "only", OPT_STRINGS, OFF(only), NULL, 0 },
	{ "repeat", OPT_INT, OFF(repeat), NULL, 1 },
	{ "confirm", OPT_BOOL, OFF(confirm), NULL, 0 },
	{ "annotate", OPT_ENUM, OFF(annotate), annotate_choices, 0 },
	{ "context", OPT_STRING, OFF(context), NULL, 0 },
	{ "artifacts", OPT_BOOL, OFF(artifacts), NULL, 0 },
	{ "results-dir", OPT_STRING, OFF(results_dir), NULL, 0 },
	{ "only-on-labels", OPT_STRINGS, OFF(only_on_labels), NULL, 0 },
	{ "record-history", OPT_BOOL, OFF(record_history), NULL, 0 },
	{ "history-repo", OPT_STRING, OFF(history_repo), NULL, 0 },
	{ "base-branch", OPT_STRING, OFF(base_branch), NULL, 0 },
	{ "binary", OPT_STRING, OFF(binary), NULL, 0 },
	{ "shard", OPT_STRING, OFF(shard), NULL, 0 },
	{ "gpus", OPT_STRINGS, OFF(gpus), NULL, 0 },
	{ "shards", OPT_INT, OFF(shards), NULL, 1 },
	{ "queue", OPT_STRING, OFF(queue), NULL, 0 },
};

#define N_OPTIONS (sizeof(option_defs) / sizeof(option_defs[0]))

static const char *json_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "a mapping";
	case JSON_ARRAY: return "a list";
	case JSON_STRING: return "a string";
	case JSON_INTEGER:
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	case JSON_NULL: return "null";
	}
	return "?";
}

static int bad(struct pg_error *err, const char *step, const char *opt, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int bad(struct pg_error *err, const char *step, const char *opt, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return pg_error_set(err, PG_ECONFIG, "step \"%s\": %s: %s", step, opt, what);
}

static int parse_one(struct pg_bk_settings *s, const struct option_def *d, const json_t *v,
		     const char *step, struct pg_error *err)
{
	void *field = (char *)s + d->offset;
	struct pg_buf list = PG_BUF_INIT;

	switch (d->kind) {
	case OPT_STRING:
		if (!json_is_string(v) || !json_string_length(v))
			return bad(err, step, d->name, "expected a non-empty string, got %s",
				   json_is_string(v) ? "an empty string" : json_type_name(v));
		free(*(char **)field);
		*(char **)field = pg_xstrdup(json_string_value(v));
		return 0;
	case OPT_ENUM:
		if (json_is_string(v))
			for (size_t i = 0; d->choices[i]; i++)
				if (!strcmp(d->choices[i], json_string_value(v))) {
					free(*(char **)field);
					*(char **)field = pg_xstrdup(d->choices[i]);
					return 0;
				}
		for (size_t i = 0; d->choices[i]; i++)
			pg_buf_printf(&list, "%s%s", i ? ", " : "", d->choices[i]);
		bad(err, step, d->name, "expected one of %s, got %s", list.ptr,
		    json_is_string(v) ? json_string_value(v) : json_type_name(v));
		pg_buf_release(&list);
		return PG_ECONFIG;
	case OPT_BOOL:
		if (!json_is_boolean(v))
			return bad(err, step, d->name, "expected true or false, got %s",
				   json_is_string(v) ? json_string_value(v) : json_type_name(v));
		*(bool *)field = json_is_true(v);
		return 0;
	case OPT_INT:
		if (!json_is_integer(v) || json_integer_value(v) < d->min) {
			return bad(err, step, d->name, "expected an integer >= %ld, got %s", d->min,
				   json_is_string(v) ? json_string_value(v) : json_type_name(v));
		}
		*(long *)field = (long)json_integer_value(v);
		return 0;
	case OPT_STRINGS: {
		struct pg_strv *sv = field;
		size_t i;
		json_t *item;

		pg_strv_release(sv);
		if (json_is_string(v) && json_string_length(v)) {
			pg_strv_push(sv, json_string_value(v));
			return 0;
		}
		if (!json_is_array(v) || !json_array_size(v))
			return bad(err, step, d->name, "expected a string or a non-empty list of strings, got %s",
				   json_type_name(v));
		json_array_foreach(v, i, item) {
			if (!json_is_string(item) || !json_string_length(item))
			{
				char idx[24];
				snprintf(idx, sizeof(idx), "%zu", i);
				return bad(err, step, d->name, "item %s: expected a non-empty string, got %s",
					   idx, json_type_name(item));
			}
			pg_strv_push(sv, json_string_value(item));
		}
		return 0;
	}
	case OPT_SUITES:
		if (json_is_string(v) && json_string_length(v))
			goto take;
		if (json_is_object(v) && json_object_size(v))
			goto take;
		if (json_is_array(v) && json_array_size(v)) {
			size_t i;
			json_t *item;
			json_array_foreach(v, i, item)
				if (!json_is_string(item) || !json_string_length(item))
					return bad(err, step, d->name,
						   "expected a list of suite file paths, got %s in it",
						   json_type_name(item));
			goto take;
		}
		return bad(err, step, d->name,
			   "expected a suite file path, a list of paths or an inline suite, got %s",
			   json_type_name(v));
take:
		json_decref(*(json_t **)field);
		*(json_t **)field = json_deep_copy(v);
		return 0;
	}
	return PG_ERR;
}

static void defaults(struct pg_bk_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->gpu = pg_xstrdup("auto");
	s->thresholds = pg_xstrdup("thresholds");
	s->baseline = pg_xstrdup("thresholds");
	s->mode = pg_xstrdup("gate");
	s->confirm = true;
	s->annotate = pg_xstrdup("always");
	s->artifacts = true;
	s->results_dir = pg_xstrdup("results");
	s->shards = 1;
	s->queue = pg_xstrdup("{gpu}");
}

int pg_bk_settings_parse(struct pg_bk_settings *s, const json_t *config, const char *step,
			 struct pg_error *err)
{
	const char *names[N_OPTIONS];
	const char *key;
	json_t *v;
	int rc;

	defaults(s);
	for (size_t i = 0; i < N_OPTIONS; i++)
		names[i] = option_defs[i].name;
	json_object_foreach((json_t *)config, key, v) {
		const struct option_def *d = NULL;
		for (size_t i = 0; i < N_OPTIONS; i++)
			if (!strcmp(option_defs[i].name, key))
				d = &option_defs[i];
		if (!d) {
			const char *near = pg_nearest(key, names, N_OPTIONS);
			if (near)
				return pg_error_set(err, PG_ECONFIG,
						    "step \"%s\": unknown option \"%s\" (did you mean \"%s\"?)",
						    step, key, near);
			return pg_error_set(err, PG_ECONFIG, "step \"%s\": unknown option \"%s\"", step, key);
		}
		if ((rc = parse_one(s, d, v, step, err)))
			return rc;
	}
	if (!s->suites && strcmp(s->mode, "report") && strcmp(s->mode, "merge"))
		return pg_error_set(err, PG_ECONFIG, "step \"%s\": suites: missing (the suites to run)",
				    step);
	if (s->context && strlen(s->context) > 100)
		return pg_error_set(err, PG_ECONFIG,
				    "step \"%s\": context: at most 100 characters (Buildkite's limit)", step);
	if (!strcmp(s->mode, "pipeline") && !s->gpus.n)
		return pg_error_set(err, PG_ECONFIG, "step \"%s\": gpus: missing (mode: pipeline needs the GPU queues)",
				    step);
	return 0;
}

void pg_bk_settings_release(struct pg_bk_settings *s)
{
	json_decref(s->suites);
	free(s->gpu);
	free(s->thresholds);
	free(s->baseline);
	free(s->mode);
	free(s->filter);
	pg_strv_release(&s->only);
	free(s->annotate);
	free(s->context);
	free(s->results_dir);
	pg_strv_release(&s->only_on_labels);
	free(s->history_repo);
	free(s->base_branch);
	free(s->shard);
	pg_strv_release(&s->gpus);
	free(s->queue);
	free(s->binary);
	memset(s, 0, sizeof(*s));
}
