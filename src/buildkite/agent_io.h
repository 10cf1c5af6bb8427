#ifndef PERFGATE_BUILDKITE_AGENT_IO_H
#define PERFGATE_BUILDKITE_AGENT_IO_H

#include <stddef.h>

struct pg_buf;
struct pg_error;

/*
 * Calls to the buildkite-agent CLI from inside a job. The agent talks to
 * Buildkite with the job's own token (BUILDKITE_AGENT_ACCESS_TOKEN, which
 * it reads from the environment itself), so perfgate never handles a
 * token. Bodies go through stdin, never argv: an annotation can be 1 MiB
 * and argv would hit E2BIG.
 *
 * The executable is BUILDKITE_AGENT_PATH when set, else `buildkite-agent`
 * looked up on PATH, so tests put a recording shim in front of it.
 */
struct pg_bkagent {
	char *path; /* owned */
};

#define PG_BKAGENT_INIT                                                                            \
	{                                                                                          \
		NULL                                                                               \
	}

/* Locate the agent. PG_ENOTFOUND with a message saying where it looked. */
int pg_bkagent_find(struct pg_bkagent *agent, struct pg_error *err);
void pg_bkagent_release(struct pg_bkagent *agent);

/*
 * Run `agent args...` in cwd (NULL: ours) with `in` (in_len bytes; NULL:
 * /dev/null) on its stdin and, when out is not NULL, its stdout appended to
 * out (else it shares ours, so its messages reach the job log). args is
 * NULL-terminated and does not include the program. PG_EINFRA when it
 * cannot start or exits non-zero, naming the subcommand and the status.
 */
int pg_bkagent_exec(const struct pg_bkagent *agent, const char *const *args, const char *cwd,
		    const void *in, size_t in_len, struct pg_buf *out, struct pg_error *err);

/* buildkite-agent annotate --context C --style S (body on stdin). */
int pg_bkagent_annotate(const struct pg_bkagent *agent, const char *context, const char *style,
			const char *body, size_t len, struct pg_error *err);

/* buildkite-agent artifact upload PATTERN, run in cwd so that artifact
 * paths are relative to it. */
int pg_bkagent_artifact_upload(const struct pg_bkagent *agent, const char *cwd, const char *pattern,
			       struct pg_error *err);

/* buildkite-agent artifact download PATTERN DEST [--step STEP]. */
int pg_bkagent_artifact_download(const struct pg_bkagent *agent, const char *pattern,
				 const char *dest, const char *step, struct pg_error *err);

/* buildkite-agent meta-data set KEY VALUE (short values only: verdicts). */
int pg_bkagent_meta_data_set(const struct pg_bkagent *agent, const char *key, const char *value,
			     struct pg_error *err);

#endif
