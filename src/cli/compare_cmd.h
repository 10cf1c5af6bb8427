#ifndef PERFGATE_CLI_COMPARE_CMD_H
#define PERFGATE_CLI_COMPARE_CMD_H

#include <stdbool.h>

/* compare and gate share everything but the exit code (cmd_compare.c). */
int pg_compare_main(int argc, char **argv, bool gate);

#endif
