#ifndef PERFGATE_BASE_EXITCODE_H
#define PERFGATE_BASE_EXITCODE_H

/*
 * The exit codes of every perfgate command. Pipelines key `soft_fail` and
 * `retry` on them, so they never change meaning:
 *
 *   0  pass (warnings included)
 *   1  a confirmed performance regression
 *   2  usage or configuration error (bad flag, bad YAML, unknown key)
 *   3  infrastructure failure (server never ready, all requests failed,
 *      results missing or errored, git or network error)
 *
 * A run ended by a signal exits with 128 + the signal number (130, 143).
 */
enum pg_exit {
	PG_EXIT_OK = 0,
	PG_EXIT_REGRESSION = 1,
	PG_EXIT_USAGE = 2,
	PG_EXIT_INFRA = 3,
};

#endif
