#ifndef PERFGATE_CLI_OPT_H
#define PERFGATE_CLI_OPT_H

#include <stdbool.h>
#include <stdio.h>

#include "base/strutil.h"

struct pg_error;

/*
 * Declarative command-line options (libgit2's cli_opt_spec): one table per
 * subcommand holds each option's type, names, target variable and help
 * text; parsing and `--help` are both generated from it, so they cannot
 * disagree.
 *
 * Parsing is GNU getopt_long's, so perfgate behaves like the GNU tools its
 * users know: options and positionals mix, "--" ends options, "--name=value"
 * and "--name value", "-oVALUE" and "-o VALUE", bundled short flags
 * ("-qc DIR"), unambiguous abbreviations ("--conf" for "--confirm-dir"),
 * and a lone "-" is a positional (stdin, where a command reads a file).
 * Every command also takes -h/--help and -V/--version.
 *
 * A short flag has one meaning across perfgate (pg_opt_short_meanings in
 * opt.c: -o is always the output path, -n always --dry-run, -p always
 * --port...); a table that gives a letter another meaning is refused at
 * parse time, so every command's --help (tests/bats/cli.bats) checks it.
 */
enum pg_opt_type {
	PG_OPT_END = 0,
	PG_OPT_FLAG,    /* bool *                 */
	PG_OPT_STRING,  /* const char ** (borrowed from argv) */
	PG_OPT_LONG,    /* long *                 */
	PG_OPT_DOUBLE,  /* double *               */
	PG_OPT_STRINGS, /* struct pg_strv *, repeatable; copies */
};

struct pg_opt {
	enum pg_opt_type type;
	const char *name; /* long name without "--" */
	char short_name;  /* 0: none */
	void *value;
	const char *arg; /* placeholder shown in help: "DIR" */
	const char *help;
	const char *alias; /* an older long name that still works (pipelines use it), or NULL */
};

/*
 * A short flag a command gave up because perfgate uses the letter for
 * something else: using it says what to write instead.
 */
struct pg_opt_moved {
	char short_name; /* 0 ends a list */
	const char *now; /* "--last N" */
};

struct pg_cmd_help {
	const char *name;        /* "run", or "baseline record" */
	const char *usage;       /* "[options] SUITE..." */
	const char *summary;     /* one line */
	const char *description; /* shown after the usage line; may be NULL */
	const struct pg_opt *opts;
	const struct pg_opt_moved *moved; /* may be NULL */
};

/* pg_opt_parse returned this: --help or --version was given and printed to stdout. */
#define PG_OPT_HELP 1

/*
 * Parse argv (argv[0] is the command name) into the table's variables and
 * collect positional arguments into pos, in order. Returns 0, PG_OPT_HELP, or PG_ECONFIG with a
 * message naming the option ("unknown option '--fitler' (did you mean
 * '--filter'?)"), or PG_ERR for a table that breaks the short-flag rule.
 */
int pg_opt_parse(const struct pg_cmd_help *cmd, int argc, char **argv, struct pg_strv *pos,
		 struct pg_error *err);

void pg_opt_print_help(const struct pg_cmd_help *cmd, FILE *out);

/*
 * What every command does first: parse argv, print --help, and check that
 * between min_args and max_args positionals were given (SIZE_MAX: no
 * limit); `what` names them for the message ("one results directory").
 * Returns false to go on, or true when the command is over: *exit_code is
 * then 0 after --help, or 2 after the error was printed, with a pointer
 * to the command's --help. pos must be released either way.
 *
 *	if (pg_cmd_parse(&help, argc, argv, &pos, 1, 1, "one results directory", &rc))
 *		goto done;
 */
bool pg_cmd_parse(const struct pg_cmd_help *cmd, int argc, char **argv, struct pg_strv *pos,
		  size_t min_args, size_t max_args, const char *what, int *exit_code);

/*
 * Print "perfgate <cmd>: <message>" to stderr and return the exit code for
 * err->code. The one place a command turns an error into output.
 */
int pg_cmd_fail(const char *cmd, const struct pg_error *err);

#endif
