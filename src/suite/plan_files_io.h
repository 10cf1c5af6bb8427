#ifndef PERFGATE_SUITE_PLAN_FILES_IO_H
#define PERFGATE_SUITE_PLAN_FILES_IO_H

#include "suite/suite.h"

struct pg_error;

/*
 * The files a plan reads before it can measure anything, checked before
 * anything starts: a run should not load a model on a GPU for minutes and
 * then find that its prompts are missing.
 */

/*
 * Every dataset file the plan's tests read (dataset.path: sharegpt, jsonl,
 * sonnet, a multi_turn's questions) is a readable regular file, relative
 * to the current directory as the run will open it. PG_ECONFIG for the
 * first that is not, one line naming the test, where it was written, the
 * path and the directory it was looked for in ("serving.yml:4: test
 * 'serving_x': dataset file 'ShareGPT.json' not found in /work: ...").
 */
int pg_plan_check_datasets(const struct pg_plan *plan, struct pg_error *err);

#endif
