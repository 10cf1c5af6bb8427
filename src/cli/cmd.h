#ifndef PERFGATE_CLI_CMD_H
#define PERFGATE_CLI_CMD_H

/*
 * One file per subcommand, each with a main-like entry point. argv[0] is the
 * subcommand's name; the return value is perfgate's exit code
 * (base/exitcode.h). Every command accepts --help.
 *
 * Adding a command: write src/cli/cmd_<name>.c with `int cmd_<name>(int argc,
 * char **argv)` and an option table (cli/opt.h), declare it here, add it to
 * the table in src/main.c, document it (the README's command table and a
 * page in docs/; docs/architecture.md, "Adding a subcommand"), add tests.
 */
int cmd_run(int argc, char **argv);
int cmd_ab(int argc, char **argv);
int cmd_bisect(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_gate(int argc, char **argv);
int cmd_baseline(int argc, char **argv);
int cmd_trends(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_pipeline(int argc, char **argv);
int cmd_buildkite(int argc, char **argv);
int cmd_mock_server(int argc, char **argv);

#endif
