#include "cli/opt.h"

#include "base/buf.h"
#include "base/error.h"
#include "base/exitcode.h"
#include "base/redact.h"

#include <string.h>

static const struct pg_opt *find_long(const struct pg_opt *opts, const char *name, size_t len)
{
	for (const struct pg_opt *o = opts; o && o->type != PG_OPT_END; o++)
		if (strlen(o->name) == len && !strncmp(o->name, name, len))
			return o;
	return NULL;
}

static const struct pg_opt *find_short(const struct pg_opt *opts, char c)
{
	for (const struct pg_opt *o = opts; o && o->type != PG_OPT_END; o++)
		if (o->short_name && o->short_name == c)
			return o;
	return NULL;
}

static int unknown_option(const struct pg_cmd_help *cmd, const char *name, size_t len,
			  struct pg_error *err)
{
	const char *names[64];
	size_t n = 0;
	char word[128];
	const char *near;

	snprintf(word, sizeof(word), "%.*s", (int)len, name);
	for (const struct pg_opt *o = cmd->opts; o && o->type != PG_OPT_END && n < 63; o++)
		names[n++] = o->name;
	names[n++] = "help";
	near = pg_nearest(word, names, n);
	if (near)
		return pg_error_set(err, PG_ECONFIG, "unknown option '--%s' (did you mean '--%s'?)",
				    word, near);
	return pg_error_set(err, PG_ECONFIG, "unknown option '--%s'", word);
}

static int set_value(const struct pg_opt *o, const char *value, struct pg_error *err)
{
	switch (o->type) {
	case PG_OPT_STRING:
		*(const char **)o->value = value;
		return 0;
	case PG_OPT_STRINGS:
		pg_strv_push((struct pg_strv *)o->value, value);
		return 0;
	case PG_OPT_LONG:
		if (pg_parse_long(value, (long *)o->value))
			return pg_error_set(err, PG_ECONFIG,
					    "option '--%s': expected an integer, got '%s'", o->name,
					    value);
		return 0;
	case PG_OPT_DOUBLE:
		if (pg_parse_double(value, (double *)o->value))
			return pg_error_set(err, PG_ECONFIG,
					    "option '--%s': expected a number, got '%s'", o->name,
					    value);
		return 0;
	default:
		return pg_error_set(err, PG_ERR, "option '--%s': bad table entry", o->name);
	}
}

int pg_opt_parse(const struct pg_cmd_help *cmd, int argc, char **argv, struct pg_strv *pos,
		 struct pg_error *err)
{
	bool only_positional = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const struct pg_opt *o;
		const char *value = NULL;

		if (only_positional || a[0] != '-' || a[1] == '\0') {
			pg_strv_push(pos, a);
			continue;
		}
		if (!strcmp(a, "--")) {
			only_positional = true;
			continue;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			pg_opt_print_help(cmd, stdout);
			return PG_OPT_HELP;
		}
		if (a[1] == '-') {
			const char *name = a + 2;
			const char *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);

			o = find_long(cmd->opts, name, len);
			if (!o)
				return unknown_option(cmd, name, len, err);
			if (eq)
				value = eq + 1;
		} else {
			o = find_short(cmd->opts, a[1]);
			if (!o)
				return pg_error_set(err, PG_ECONFIG, "unknown option '-%c'", a[1]);
			if (a[2])
				value = a + 2;
		}
		if (o->type == PG_OPT_FLAG) {
			if (value)
				return pg_error_set(err, PG_ECONFIG, "option '--%s' takes no value",
						    o->name);
			*(bool *)o->value = true;
			continue;
		}
		if (!value) {
			if (i + 1 >= argc)
				return pg_error_set(err, PG_ECONFIG,
						    "option '--%s' needs a value (%s)", o->name,
						    o->arg ? o->arg : "VALUE");
			value = argv[++i];
		}
		if (set_value(o, value, err))
			return PG_ECONFIG;
	}
	return 0;
}

void pg_opt_print_help(const struct pg_cmd_help *cmd, FILE *out)
{
	size_t width = 0;

	fprintf(out, "usage: perfgate %s %s\n\n%s\n", cmd->name, cmd->usage, cmd->summary);
	if (cmd->description)
		fprintf(out, "\n%s\n", cmd->description);
	for (const struct pg_opt *o = cmd->opts; o && o->type != PG_OPT_END; o++) {
		size_t w = strlen(o->name) + (o->arg ? strlen(o->arg) + 1 : 0);
		if (w > width)
			width = w;
	}
	if (width < 4)
		width = 4;
	fprintf(out, "\noptions:\n");
	for (const struct pg_opt *o = cmd->opts; o && o->type != PG_OPT_END; o++) {
		struct pg_buf left = PG_BUF_INIT;
		pg_buf_puts(&left, o->name);
		if (o->type != PG_OPT_FLAG)
			pg_buf_printf(&left, " %s", o->arg ? o->arg : "VALUE");
		if (o->short_name)
			fprintf(out, "  -%c, --%-*s  %s\n", o->short_name, (int)width, left.ptr,
				o->help);
		else
			fprintf(out, "      --%-*s  %s\n", (int)width, left.ptr, o->help);
		pg_buf_release(&left);
	}
	fprintf(out, "  -h, --%-*s  %s\n", (int)width, "help", "show this help and exit");
}

int pg_cmd_fail(const char *cmd, const struct pg_error *err)
{
	extern char **environ;
	struct pg_redactor r = PG_REDACTOR_INIT;
	struct pg_buf msg = PG_BUF_INIT;

	/* an error may quote a URL with its password, or a value from the
	 * environment: never print a secret */
	pg_redactor_add_environ(&r, environ);
	pg_redact(&r, &msg, err->msg[0] ? err->msg : "failed");
	fprintf(stderr, "perfgate %s: %s\n", cmd, msg.ptr);
	pg_buf_release(&msg);
	pg_redactor_release(&r);
	return pg_error_exit_code(err->code ? err->code : PG_ERR);
}

bool pg_cmd_parse(const struct pg_cmd_help *cmd, int argc, char **argv, struct pg_strv *pos,
		  size_t min_args, size_t max_args, const char *what, int *exit_code)
{
	struct pg_error err = PG_ERROR_INIT;
	int rc = pg_opt_parse(cmd, argc, argv, pos, &err);

	if (rc == PG_OPT_HELP) {
		*exit_code = PG_EXIT_OK;
		return true;
	}
	if (rc == 0 && pos->n > max_args)
		pg_error_set(&err, PG_ECONFIG, "unexpected argument '%s' (expected %s)",
			     pos->v[max_args], what);
	else if (rc == 0 && pos->n < min_args)
		pg_error_set(&err, PG_ECONFIG, "expected %s; see 'perfgate %s --help'", what,
			     cmd->name);
	else if (rc == 0)
		return false;
	*exit_code = pg_cmd_fail(cmd->name, &err);
	return true;
}
