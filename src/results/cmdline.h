#ifndef PERFGATE_RESULTS_CMDLINE_H
#define PERFGATE_RESULTS_CMDLINE_H

#include <stddef.h>

#include "base/strutil.h"

/*
 * Reading recorded command lines (vLLM's .commands sidecar, perfgate's
 * server_command) back into words, to recover workload settings such as
 * --input-len or --tensor-parallel-size. Nothing is executed or expanded.
 */

/*
 * Split line into words the way sh does for plain text: blanks separate
 * words; single quotes, double quotes (with \" \\ \$ \` escapes) and
 * backslash quote. No expansion of any kind. Appends to out. Returns 0, or
 * -1 on an unterminated quote (out then holds the words before it).
 */
int pg_cmdline_split(struct pg_strv *out, const char *line);

/*
 * The value of option `flag` ("--input-len") in argv: "--input-len 32" and
 * "--input-len=32" both give "32"; a flag followed by another option or
 * nothing gives "". Underscores and dashes in the option name are treated
 * alike (vLLM accepts both). The last occurrence wins. NULL when absent.
 * Borrowed from argv.
 */
const char *pg_cmdline_flag(const struct pg_strv *argv, const char *flag);

#endif
