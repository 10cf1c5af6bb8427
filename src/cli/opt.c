#include "cli/opt.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/exitcode.h"
#include "base/redact.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/*
 * The one meaning of each short flag across perfgate: a user who learned
 * -o in one command can rely on it in every other. A command may leave a
 * letter out, never give it another meaning (pg_opt_parse refuses).
 */
/* clang-format off */
static const struct {
	char letter;
	const char *name;
} short_meanings[] = {
	{ 'b', "baseline" },
	{ 'c', "confirm-dir" },
	{ 'f', "from" },
	{ 'h', "help" },
	{ 'm', "metric" },
	{ 'n', "dry-run" },
	{ 'o', "output" },
	{ 'p', "port" },
	{ 'q', "quiet" },
	{ 't', "thresholds" },
	{ 'V', "version" },
};
/* clang-format on */

#define N_SHORT_MEANINGS (sizeof(short_meanings) / sizeof(short_meanings[0]))

/* getopt_long's value for the option at index i of a table: above every
 * character, so short letters and table entries never collide. */
#define OPT_VAL(i) (256 + (int)(i))

static const char *short_meaning(char letter)
{
	for (size_t i = 0; i < N_SHORT_MEANINGS; i++)
		if (short_meanings[i].letter == letter)
			return short_meanings[i].name;
	return NULL;
}

static size_t count_opts(const struct pg_opt *opts)
{
	size_t n = 0;

	while (opts && opts[n].type != PG_OPT_END)
		n++;
	return n;
}

static const struct pg_opt *find_short(const struct pg_opt *opts, int c)
{
	for (const struct pg_opt *o = opts; o && o->type != PG_OPT_END; o++)
		if (o->short_name && o->short_name == c)
			return o;
	return NULL;
}

static int check_table(const struct pg_cmd_help *cmd, struct pg_error *err)
{
	for (const struct pg_opt *o = cmd->opts; o && o->type != PG_OPT_END; o++) {
		const char *meaning = o->short_name ? short_meaning(o->short_name) : NULL;

		if (!o->short_name)
			continue;
		if (!meaning || strcmp(meaning, o->name) || o->short_name == 'h' ||
		    o->short_name == 'V')
			return pg_error_set(
				err, PG_ERR,
				"option table of '%s': -%c is %s%s in perfgate, not --%s",
				cmd->name, o->short_name, meaning ? "--" : "",
				meaning ? meaning : "unused", o->name);
	}
	return 0;
}

/* The options whose long name (or alias, or help/version) starts with the
 * len bytes of name, each once, spelled as it matched. */
static size_t prefix_matches(const struct pg_opt *opts, const char *name, size_t len,
			     const char **out, size_t max)
{
	static const char *const builtin[] = { "help", "version" };
	size_t n = 0;

	for (const struct pg_opt *o = opts; o && o->type != PG_OPT_END && n < max; o++)
		if (!strncmp(o->name, name, len))
			out[n++] = o->name;
		else if (o->alias && !strncmp(o->alias, name, len))
			out[n++] = o->alias;
	for (size_t i = 0; i < 2 && n < max; i++)
		if (!strncmp(builtin[i], name, len))
			out[n++] = builtin[i];
	return n;
}

/* getopt_long refused a long option: say whether it is unknown (with the
 * nearest name), ambiguous (with the candidates) or a flag given a value. */
static int bad_long(const struct pg_cmd_help *cmd, const char *arg, struct pg_error *err)
{
	const char *name = arg + 2;
	const char *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	const char *names[128], *near;
	char word[128];
	size_t n = prefix_matches(cmd->opts, name, len, names, 128);

	snprintf(word, sizeof(word), "%.*s", (int)len, name);
	if (n > 1) {
		struct pg_buf list = PG_BUF_INIT;
		/* an exact name is never ambiguous: getopt took it */
		for (size_t i = 0; i < n; i++)
			pg_buf_printf(&list, "%s--%s", i ? ", " : "", names[i]);
		pg_error_set(err, PG_ECONFIG, "option '--%s' is ambiguous (%s)", word, list.ptr);
		pg_buf_release(&list);
		return PG_ECONFIG;
	}
	if (n == 1 && eq)
		return pg_error_set(err, PG_ECONFIG, "option '--%s' takes no value", names[0]);
	n = 0;
	for (const struct pg_opt *o = cmd->opts; o && o->type != PG_OPT_END && n < 126; o++)
		names[n++] = o->name;
	names[n++] = "help";
	names[n++] = "version";
	near = pg_nearest(word, names, n);
	if (near)
		return pg_error_set(err, PG_ECONFIG, "unknown option '--%s' (did you mean '--%s'?)",
				    word, near);
	return pg_error_set(err, PG_ECONFIG, "unknown option '--%s'", word);
}

static int bad_short(const struct pg_cmd_help *cmd, int c, struct pg_error *err)
{
	const char *meaning = short_meaning((char)c);

	for (const struct pg_opt_moved *m = cmd->moved; m && m->short_name; m++)
		if (m->short_name == c)
			return pg_error_set(err, PG_ECONFIG,
					    "unknown option '-%c' (use %s here; -%c means --%s "
					    "in perfgate)",
					    c, m->now, c, meaning ? meaning : "something else");
	if (c > 0 && c < 128 && c != '?' && c != ':')
		return pg_error_set(err, PG_ECONFIG, "unknown option '-%c'", c);
	return pg_error_set(err, PG_ECONFIG, "unknown option");
}

static int set_value(const struct pg_opt *o, const char *value, struct pg_error *err)
{
	switch (o->type) {
	case PG_OPT_FLAG:
		*(bool *)o->value = true;
		return 0;
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

/* getopt_long's tables for cmd: every name and alias, help and version. */
static struct option *long_table(const struct pg_opt *opts, size_t n)
{
	struct option *longs = pg_xcalloc(2 * n + 3, sizeof(*longs));
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		int has_arg = opts[i].type == PG_OPT_FLAG ? no_argument : required_argument;
		longs[k++] = (struct option){ opts[i].name, has_arg, NULL, OPT_VAL(i) };
		/* the same value: getopt never calls a name and its alias ambiguous */
		if (opts[i].alias)
			longs[k++] = (struct option){ opts[i].alias, has_arg, NULL, OPT_VAL(i) };
	}
	longs[k++] = (struct option){ "help", no_argument, NULL, 'h' };
	longs[k++] = (struct option){ "version", no_argument, NULL, 'V' };
	return longs;
}

static char *short_table(const struct pg_opt *opts, size_t n)
{
	struct pg_buf b = PG_BUF_INIT;

	/* ':' first: a missing value is reported as ':' rather than '?' */
	pg_buf_puts(&b, ":hV");
	for (size_t i = 0; i < n; i++) {
		if (!opts[i].short_name)
			continue;
		pg_buf_putc(&b, opts[i].short_name);
		if (opts[i].type != PG_OPT_FLAG)
			pg_buf_putc(&b, ':');
	}
	return pg_buf_detach(&b);
}

int pg_opt_parse(const struct pg_cmd_help *cmd, int argc, char **argv, struct pg_strv *pos,
		 struct pg_error *err)
{
	size_t n = count_opts(cmd->opts);
	struct option *longs = NULL;
	char *shorts = NULL, **args = NULL;
	int c, ret = 0;

	if ((ret = check_table(cmd, err)))
		return ret;
	longs = long_table(cmd->opts, n);
	shorts = short_table(cmd->opts, n);
	/* getopt_long reorders the array it parses: parse a copy, so the
	 * caller's argv stays as typed (baseline update records it) */
	args = pg_xcalloc((size_t)argc + 1, sizeof(*args));
	memcpy(args, argv, (size_t)argc * sizeof(*args));
	argv = args;
	/* 0, not 1: glibc then also forgets a previous parse's state */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		const struct pg_opt *o;

		if (c == 'h') {
			pg_opt_print_help(cmd, stdout);
			ret = PG_OPT_HELP;
			goto done;
		}
		if (c == 'V') {
			printf("perfgate %s\n", PERFGATE_VERSION);
			ret = PG_OPT_HELP;
			goto done;
		}
		if (c == '?' || c == ':') {
			/* a long option's element is behind optind; a short one
			 * is in optopt (its element may hold more letters) */
			const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "";
			bool is_long = !strncmp(arg, "--", 2) && (optopt == 0 || optopt >= 256 ||
								  optopt == 'h' || optopt == 'V');

			if (c == ':') {
				o = optopt >= 256 ? &cmd->opts[optopt - 256]
						  : find_short(cmd->opts, optopt);
				ret = o ? pg_error_set(err, PG_ECONFIG,
						       "option '--%s' needs a value (%s)", o->name,
						       o->arg ? o->arg : "VALUE")
					: pg_error_set(err, PG_ECONFIG, "an option needs a value");
			} else if (is_long) {
				ret = bad_long(cmd, arg, err);
			} else {
				ret = bad_short(cmd, optopt, err);
			}
			goto done;
		}
		o = c >= 256 ? &cmd->opts[c - 256] : find_short(cmd->opts, c);
		if (!o) {
			ret = pg_error_set(err, PG_ERR, "option '%c': not in the table", c);
			goto done;
		}
		if ((ret = set_value(o, optarg, err)))
			goto done;
	}
	for (int i = optind; i < argc; i++)
		pg_strv_push(pos, argv[i]);
done:
	free(longs);
	free(shorts);
	free(args);
	return ret;
}

void pg_opt_print_help(const struct pg_cmd_help *cmd, FILE *out)
{
	size_t width = strlen("version");

	fprintf(out, "usage: perfgate %s %s\n\n%s\n", cmd->name, cmd->usage, cmd->summary);
	if (cmd->description)
		fprintf(out, "\n%s\n", cmd->description);
	for (const struct pg_opt *o = cmd->opts; o && o->type != PG_OPT_END; o++) {
		size_t w = strlen(o->name) +
			   (o->type != PG_OPT_FLAG && o->arg ? strlen(o->arg) + 1 : 0);
		if (o->type != PG_OPT_FLAG && !o->arg)
			w += strlen(" VALUE");
		if (w > width)
			width = w;
	}
	fprintf(out, "\noptions:\n");
	for (const struct pg_opt *o = cmd->opts; o && o->type != PG_OPT_END; o++) {
		struct pg_buf left = PG_BUF_INIT;
		pg_buf_puts(&left, o->name);
		if (o->type != PG_OPT_FLAG)
			pg_buf_printf(&left, " %s", o->arg ? o->arg : "VALUE");
		if (o->short_name)
			fprintf(out, "  -%c, --%-*s  %s", o->short_name, (int)width, left.ptr,
				o->help);
		else
			fprintf(out, "      --%-*s  %s", (int)width, left.ptr, o->help);
		if (o->alias)
			fprintf(out, " (also --%s)", o->alias);
		fputc('\n', out);
		pg_buf_release(&left);
	}
	fprintf(out, "  -h, --%-*s  %s\n", (int)width, "help", "show this help and exit");
	fprintf(out, "  -V, --%-*s  %s\n", (int)width, "version",
		"print perfgate's version and exit");
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
		pg_error_set(&err, PG_ECONFIG, "expected %s", what);
	else if (rc == 0)
		return false;
	/* every usage mistake points to the one place that explains usage */
	if (err.code == PG_ECONFIG) {
		size_t len = strlen(err.msg);
		snprintf(err.msg + len, sizeof(err.msg) - len, "; see 'perfgate %s --help'",
			 cmd->name);
	}
	*exit_code = pg_cmd_fail(cmd->name, &err);
	return true;
}
