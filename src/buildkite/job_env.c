#include "buildkite/job_env.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static char *dup_nonempty(pg_env_lookup lookup, void *ctx, const char *name)
{
	const char *v = lookup(ctx, name);

	return v && *v ? pg_xstrdup(v) : NULL;
}

static void split_labels(struct pg_strv *out, const char *s)
{
	while (s && *s) {
		const char *comma = strchr(s, ',');
		const char *end = comma ? comma : s + strlen(s);
		const char *b = s;

		while (b < end && isspace((unsigned char)*b))
			b++;
		while (end > b && isspace((unsigned char)end[-1]))
			end--;
		if (end > b)
			pg_strv_push_owned(out, pg_xstrndup(b, (size_t)(end - b)));
		s = comma ? comma + 1 : NULL;
	}
}

void pg_bkenv_load(struct pg_bkenv *env, pg_env_lookup lookup, void *ctx)
{
	const char *bk = lookup(ctx, "BUILDKITE");
	const char *pr = lookup(ctx, "BUILDKITE_PULL_REQUEST");

	memset(env, 0, sizeof(*env));
	env->in_buildkite = bk && !strcmp(bk, "true");
	env->pull_request = pr && *pr && strcmp(pr, "false") ? pg_xstrdup(pr) : NULL;
	env->base_branch = dup_nonempty(lookup, ctx, "BUILDKITE_PULL_REQUEST_BASE_BRANCH");
	split_labels(&env->labels, lookup(ctx, "BUILDKITE_PULL_REQUEST_LABELS"));
	env->branch = dup_nonempty(lookup, ctx, "BUILDKITE_BRANCH");
	env->default_branch = dup_nonempty(lookup, ctx, "BUILDKITE_PIPELINE_DEFAULT_BRANCH");
	if (!env->default_branch)
		env->default_branch = pg_xstrdup("main");
	env->commit = dup_nonempty(lookup, ctx, "BUILDKITE_COMMIT");
	env->step_key = dup_nonempty(lookup, ctx, "BUILDKITE_STEP_KEY");
	env->step_label = dup_nonempty(lookup, ctx, "BUILDKITE_LABEL");
	env->job_id = dup_nonempty(lookup, ctx, "BUILDKITE_JOB_ID");
	env->build_url = dup_nonempty(lookup, ctx, "BUILDKITE_BUILD_URL");
	env->plugin_configuration = dup_nonempty(lookup, ctx, "BUILDKITE_PLUGIN_CONFIGURATION");
	env->plugins = dup_nonempty(lookup, ctx, "BUILDKITE_PLUGINS");
}

void pg_bkenv_release(struct pg_bkenv *env)
{
	free(env->pull_request);
	free(env->base_branch);
	pg_strv_release(&env->labels);
	free(env->branch);
	free(env->default_branch);
	free(env->commit);
	free(env->step_key);
	free(env->step_label);
	free(env->job_id);
	free(env->build_url);
	free(env->plugin_configuration);
	free(env->plugins);
	memset(env, 0, sizeof(*env));
}

bool pg_bkenv_is_pr(const struct pg_bkenv *env)
{
	return env->pull_request != NULL;
}

bool pg_bkenv_has_label(const struct pg_bkenv *env, const char *const *wanted, size_t n)
{
	for (size_t i = 0; i < env->labels.n; i++)
		for (size_t j = 0; j < n; j++)
			if (!strcasecmp(env->labels.v[i], wanted[j]))
				return true;
	return false;
}

bool pg_bkenv_on_default_branch(const struct pg_bkenv *env)
{
	return !pg_bkenv_is_pr(env) && env->branch && !strcmp(env->branch, env->default_branch);
}

char *pg_bkenv_job_url(const struct pg_bkenv *env)
{
	struct pg_buf b = PG_BUF_INIT;

	if (!env->build_url)
		return NULL;
	pg_buf_puts(&b, env->build_url);
	if (env->job_id)
		pg_buf_printf(&b, "#%s", env->job_id);
	return pg_buf_detach(&b);
}

const char *pg_bkenv_step_name(const struct pg_bkenv *env)
{
	if (env->step_key)
		return env->step_key;
	if (env->step_label)
		return env->step_label;
	return "perfgate";
}

static void strip_suffix(char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	if (n > m && !strcmp(s + n - m, suffix))
		s[n - m] = '\0';
}

char *pg_bk_plugin_name(char *out, size_t size, const char *source)
{
	const char *hash = strchr(source, '#');
	size_t len = hash ? (size_t)(hash - source) : strlen(source);
	char *copy = pg_xstrndup(source, len);
	char *seg, *p;
	size_t o = 0;
	bool dash = false;

	for (p = copy; *p; p++)
		if (*p == '\\')
			*p = '/';
	while ((p = strrchr(copy, '/')) && p[1] == '\0')
		*p = '\0';
	seg = strrchr(copy, '/');
	seg = seg ? seg + 1 : copy;
	while (*seg == '.')
		seg++;
	for (p = seg; *p && o + 1 < size; p++) {
		if (isalnum((unsigned char)*p)) {
			out[o++] = (char)tolower((unsigned char)*p);
			dash = false;
		} else if (!dash) {
			out[o++] = '-';
			dash = true;
		}
	}
	out[o] = '\0';
	strip_suffix(out, "-git");
	strip_suffix(out, "-buildkite-plugin");
	free(copy);
	return out;
}

static bool is_ours(const char *source)
{
	char name[256];

	pg_bk_plugin_name(name, sizeof(name), source);
	return !strcmp(name, "perfgate") || pg_str_has_suffix(name, "-perfgate");
}

json_t *pg_bk_plugins_find(const char *plugins_json, char **source_out, struct pg_error *err)
{
	json_error_t jerr;
	json_t *all = json_loads(plugins_json, 0, &jerr);
	json_t *found = NULL;
	size_t i;

	if (source_out)
		*source_out = NULL;
	json_t *entry;

	if (!json_is_array(all)) {
		pg_error_set(err, PG_ECONFIG, "BUILDKITE_PLUGINS: not a JSON array%s%s",
			     all ? "" : ": ", all ? "" : jerr.text);
		goto done;
	}
	json_array_foreach(all, i, entry)
	{
		const char *source;
		json_t *config;

		if (json_is_string(entry) && is_ours(json_string_value(entry))) {
			found = json_object();
			if (source_out)
				*source_out = pg_xstrdup(json_string_value(entry));
			goto done;
		}
		if (!json_is_object(entry) || json_object_size(entry) != 1)
			continue;
		json_object_foreach(entry, source, config)
		{
			if (!is_ours(source))
				continue;
			found = json_is_null(config) ? json_object() : json_incref(config);
			if (source_out)
				*source_out = pg_xstrdup(source);
			goto done;
		}
	}
	pg_error_set(err, PG_ENOTFOUND, "BUILDKITE_PLUGINS has no perfgate plugin");
done:
	json_decref(all);
	return found;
}

json_t *pg_bk_config_from_env(const struct pg_bkenv *env, char **source, struct pg_error *err)
{
	json_error_t jerr;
	json_t *config;

	if (source)
		*source = NULL;
	if (env->plugin_configuration) {
		config = json_loads(env->plugin_configuration, JSON_REJECT_DUPLICATES, &jerr);
		if (!config) {
			pg_error_set(err, PG_ECONFIG, "BUILDKITE_PLUGIN_CONFIGURATION: %s",
				     jerr.text);
			return NULL;
		}
		if (!json_is_object(config)) {
			json_decref(config);
			pg_error_set(err, PG_ECONFIG,
				     "BUILDKITE_PLUGIN_CONFIGURATION: expected an object");
			return NULL;
		}
		return config;
	}
	if (env->plugins) {
		config = pg_bk_plugins_find(env->plugins, source, err);
		if (config && !json_is_object(config)) {
			json_decref(config);
			pg_error_set(
				err, PG_ECONFIG,
				"BUILDKITE_PLUGINS: perfgate's configuration is not an object");
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
