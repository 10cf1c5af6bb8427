/*
 * perfgate: the regression gate for LLM-inference performance.
 *
 * main is thin: global library init, find the subcommand in the table, run
 * it, clean up. Everything else lives in src/cli (one file per command)
 * and the feature folders beside it (docs/architecture.md).
 */
#include "cli/cmd.h"
#include "base/exitcode.h"
#include "base/strutil.h"

#include <curl/curl.h>
#include <git2.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

/* clang-format off */
static const struct command commands[] = {
	{ "run", cmd_run, "run benchmark suites against an inference server and write results" },
	{ "ab", cmd_ab, "run base and head interleaved on this machine and decide on paired blocks" },
	{ "bisect", cmd_bisect, "find the commit that carries a performance change, an A/B run per probe" },
	{ "report", cmd_report, "render benchmark_results.md and .json from a results directory" },
	{ "compare", cmd_compare, "compare results with per-GPU baselines, verdict per metric" },
	{ "gate", cmd_gate, "compare, and exit 1 on a confirmed regression (3 if results are missing)" },
	{ "baseline", cmd_baseline, "show, update and record baselines (thresholds files, git history)" },
	{ "trends", cmd_trends, "render the history in git as a static site of charts per GPU and test" },
	{ "import", cmd_import, "turn vllm bench / llm-d / printed results into perfgate result files" },
	{ "pipeline", cmd_pipeline, "print a dynamic Buildkite pipeline fanning suites out over GPU queues" },
	{ "buildkite", cmd_buildkite, "the plugin's entry point: run, report, compare, annotate, upload" },
	{ "mock-server", cmd_mock_server, "an OpenAI-compatible simulated engine for demos and tests" },
};
/* clang-format on */

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void print_help(FILE *out)
{
	fprintf(out, "usage: perfgate <command> [options]\n"
		     "\n"
		     "The regression gate for LLM-inference performance: run latency, throughput\n"
		     "and serving suites against an inference server, compare with per-GPU\n"
		     "baselines, report as vLLM does, and fail on regressions.\n"
		     "\n"
		     "commands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n"
		     "Run 'perfgate <command> --help' for a command's options;\n"
		     "'perfgate --version' (-V) prints the version.\n"
		     "\n"
		     "exit codes:\n"
		     "  0  pass (warnings included)\n"
		     "  1  confirmed performance regression\n"
		     "  2  usage or configuration error\n"
		     "  3  infrastructure failure (server, missing results, git, network)\n"
		     "  128+N  stopped by signal N (130 SIGINT, 143 SIGTERM)\n");
}

static const struct command *command_byname(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static int unknown_command(const char *name)
{
	const char *names[N_COMMANDS];
	const char *near;

	for (size_t i = 0; i < N_COMMANDS; i++)
		names[i] = commands[i].name;
	near = pg_nearest(name, names, N_COMMANDS);
	if (near)
		fprintf(stderr,
			"perfgate: unknown command '%s' (did you mean '%s'?); see 'perfgate --help'\n",
			name, near);
	else
		fprintf(stderr, "perfgate: unknown command '%s'; see 'perfgate --help'\n", name);
	return PG_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	const struct command *cmd;
	int ret;

	if (argc < 2) {
		print_help(stderr);
		return PG_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		print_help(stdout);
		return PG_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V") ||
	    !strcmp(argv[1], "version")) {
		printf("perfgate %s\n", PERFGATE_VERSION);
		return PG_EXIT_OK;
	}
	if (!strcmp(argv[1], "help")) {
		if (argc < 3) {
			print_help(stdout);
			return PG_EXIT_OK;
		}
		cmd = command_byname(argv[2]);
		if (!cmd)
			return unknown_command(argv[2]);
		char *help_argv[] = { argv[2], "--help", NULL };
		return cmd->fn(2, help_argv);
	}
	cmd = command_byname(argv[1]);
	if (!cmd)
		return unknown_command(argv[1]);

	/* A closed pipe (perfgate report | head) is an ordinary end, and
	 * sockets report EPIPE as an error instead of killing us. */
	signal(SIGPIPE, SIG_IGN);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fprintf(stderr, "perfgate: libcurl failed to initialise\n");
		return PG_EXIT_INFRA;
	}
	git_libgit2_init();

	ret = cmd->fn(argc - 1, argv + 1);

	git_libgit2_shutdown();
	curl_global_cleanup();
	return ret;
}
