/*
 * The plugin configuration: where it comes from (the agent's environment)
 * and what perfgate accepts.
 */
#include "buildkite/step_io.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"

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
