/*
 * A/B mode's runs (runner/ab_io.h): blocks of the plan for each side in
 * the balanced order, the paired decision after every pair, the sides'
 * results as repeats, the comparison files.
 */
#include "runner/ab_io.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/jsonw.h"
#include "base/redact.h"
#include "gate/compare.h"
#include "gpu/detect_io.h"
#include "results/metrics.h"
#include "results/repeats.h"
#include "results/result.h"
#include "results/results_io.h"
#include "sys/fsutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- the sides --------------------------------------------------------- */

/* What a side replaces in a test, as the suite wrote it. */
struct saved {
	char *server_command;
	struct pg_kvlist server_env;
	char *command;
	struct pg_kvlist command_env;
	struct pg_kvlist vars;
};

static void kv_copy(struct pg_kvlist *to, const struct pg_kvlist *from)
{
	for (size_t i = 0; i < from->n; i++)
		pg_kvlist_set(to, from->items[i].key, from->items[i].value);
}

static char *dup_or_null(const char *s)
{
	return s ? pg_xstrdup(s) : NULL;
}

static void save_tests(struct saved *sv, const struct pg_suite *suite)
{
	for (size_t i = 0; i < suite->n_tests; i++) {
		const struct pg_test *t = &suite->tests[i];
		sv[i].server_command = dup_or_null(t->server.command);
		sv[i].command = dup_or_null(t->command);
		kv_copy(&sv[i].server_env, &t->server.env);
		kv_copy(&sv[i].command_env, &t->command_env);
		kv_copy(&sv[i].vars, &t->vars);
	}
}

/* Each test as the suite wrote it, with side's overrides when side is
 * not NULL. */
static void apply_side(struct pg_suite *suite, const struct saved *sv,
		       const struct pg_ab_side_spec *side, const char *name, size_t block)
{
	char num[32];

	snprintf(num, sizeof(num), "%zu", block);
	for (size_t i = 0; i < suite->n_tests; i++) {
		struct pg_test *t = &suite->tests[i];
		const char *cmd = side && side->server_command ? side->server_command
							       : sv[i].server_command;

		free(t->server.command);
		t->server.command = NULL;
		if (cmd) {
			struct pg_buf b = PG_BUF_INIT;
			pg_buf_puts(&b, cmd);
			/* the side's own command: the test file's server
			 * parameters stay, unless it says it replaces them */
			if (side && side->server_command && t->server.file_flags &&
			    !side->replace_test_flags)
				pg_buf_printf(&b, " %s", t->server.file_flags);
			if (side && side->server_flags)
				pg_buf_printf(&b, " %s", side->server_flags);
			t->server.command = pg_buf_detach(&b);
		}
		free(t->command);
		t->command = dup_or_null(side && side->command ? side->command : sv[i].command);
		pg_kvlist_release(&t->server.env);
		kv_copy(&t->server.env, &sv[i].server_env);
		pg_kvlist_release(&t->command_env);
		kv_copy(&t->command_env, &sv[i].command_env);
		pg_kvlist_release(&t->vars);
		kv_copy(&t->vars, &sv[i].vars);
		if (side) {
			kv_copy(&t->server.env, &side->server_env);
			kv_copy(&t->command_env, &side->command_env);
			pg_kvlist_set(&t->vars, "side", name);
			pg_kvlist_set(&t->vars, "block", num);
		}
	}
}

static void saved_release(struct saved *sv, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(sv[i].server_command);
		free(sv[i].command);
		pg_kvlist_release(&sv[i].server_env);
		pg_kvlist_release(&sv[i].command_env);
		pg_kvlist_release(&sv[i].vars);
	}
	free(sv);
}

/* What a side changes, for the reports (names of env vars, not values:
 * they may be secrets). */
static char *describe_side(const struct pg_ab_side_spec *sd)
{
	struct pg_buf b = PG_BUF_INIT;

	if (sd->server_command)
		pg_buf_printf(&b, "server command %s%s", sd->server_command,
			      sd->replace_test_flags
				      ? " (the test files' server parameters dropped: "
					"replace_test_flags)"
				      : "");
	if (sd->server_flags)
		pg_buf_printf(&b, "%sserver flags %s", b.len ? "; " : "", sd->server_flags);
	for (size_t i = 0; i < sd->server_env.n; i++)
		pg_buf_printf(&b, "%s%s",
			      i       ? ", "
			      : b.len ? "; server env "
				      : "server env ",
			      sd->server_env.items[i].key);
	if (sd->command)
		pg_buf_printf(&b, "%scommand %s", b.len ? "; " : "", sd->command);
	for (size_t i = 0; i < sd->command_env.n; i++)
		pg_buf_printf(&b, "%s%s",
			      i       ? ", "
			      : b.len ? "; command env "
				      : "command env ",
			      sd->command_env.items[i].key);
	if (!b.len) {
		pg_buf_release(&b);
		return NULL;
	}
	return pg_buf_detach(&b);
}

int pg_ab_check(const struct pg_suite *suite, struct pg_error *err)
{
	const struct pg_ab_spec *ab = suite->ab;

	if (!ab)
		return pg_error_set(err, PG_ECONFIG,
				    "no A/B sides: the suite has no 'ab' section (base and head)");
	for (size_t i = 0; i < suite->n_tests; i++) {
		const struct pg_test *t = &suite->tests[i];
		if (t->server.n_roles)
			return pg_error_set(
				err, PG_ECONFIG,
				"%s:%d:%d: test '%s' runs a deployment (server.deployment): "
				"A/B mode starts one server per side, not deployments "
				"(docs/deployments.md)",
				t->loc.file ? t->loc.file : "?", t->loc.line, t->loc.column,
				t->name);
	}
	for (int s = 0; s < 2; s++) {
		const struct pg_ab_side_spec *sd = &ab->side[s];
		for (size_t i = 0; i < suite->n_tests; i++) {
			const struct pg_test *t = &suite->tests[i];
			const char *key = sd->server_flags   ? "server.flags"
					  : sd->server_env.n ? "server.env"
							     : NULL;
			if (!key || sd->server_command || t->server.command)
				continue;
			return pg_error_set(err, PG_ECONFIG,
					    "%s:%d:%d: ab.%s.%s: test '%s' starts no server (%s): "
					    "give the side a server command",
					    ab->loc.file, ab->loc.line, ab->loc.column,
					    pg_ab_side_name(s), key, t->name,
					    t->server.remote ? "remote" : "no command");
		}
	}
	return 0;
}

/* What each side's server override does to each test, said once before
 * the blocks: the command it runs instead, with the test file's server
 * parameters kept or dropped. */
static void say_overrides(FILE *log, struct pg_suite *suite, const struct saved *sv,
			  const struct pg_ab_spec *ab)
{
	for (int s = 0; s < 2; s++) {
		const struct pg_ab_side_spec *sd = &ab->side[s];
		if (!sd->server_command && !sd->server_flags)
			continue;
		apply_side(suite, sv, sd, pg_ab_side_name((enum pg_ab_side)s), 0);
		for (size_t i = 0; i < suite->n_tests; i++) {
			const struct pg_test *t = &suite->tests[i];
			if (!t->server.command || !sv[i].server_command)
				continue;
			fprintf(log, "perfgate A/B: %s: %s: server %s\n", pg_ab_side_name(s),
				t->name, t->server.command);
			fprintf(log, "  in place of: %s\n", sv[i].server_command);
			if (sd->server_command && t->server.file_flags)
				fprintf(log,
					sd->replace_test_flags
						? "  the test file's server parameters dropped "
						  "(replace_test_flags): %s\n"
						: "  the test file's server parameters kept: %s "
						  "(replace_test_flags: true drops them)\n",
					t->server.file_flags);
		}
	}
	apply_side(suite, sv, NULL, NULL, 0);
}

/* ---- the blocks --------------------------------------------------------- */

struct abrun {
	struct pg_suite *suite;
	const struct pg_plan *plan;
	const struct pg_ab_run_opts *o;
	FILE *log;
	size_t max_blocks;
	json_t **res;        /* [block * n + point]: an ok result, or NULL */
	json_t **last;       /* [side * n + point]: the side's last result, whatever its status */
	json_t **cmds;       /* [side * n + point]: its .commands */
	struct pg_strv told; /* telemetry notes shown (pg_run_opts.told) */
};

/* Load a block's results; a point without an ok result is an error line. */
static void collect_block(struct abrun *r, size_t b, const char *dir, enum pg_ab_side side,
			  struct pg_ab_summary *out)
{
	struct pg_result_set set = PG_RESULT_SET_INIT;
	struct pg_error err = PG_ERROR_INIT;
	size_t n = r->plan->n, errors = out->errors.n;

	if (pg_results_load_dir(&set, dir, &err)) {
		struct pg_buf line = PG_BUF_INIT;
		pg_buf_printf(&line, "block %zu (%s): %s", b + 1, pg_ab_side_name(side), err.msg);
		pg_strv_push_owned(&out->errors, pg_buf_detach(&line));
		out->failed_blocks[side]++;
		return;
	}
	for (size_t p = 0; p < n; p++) {
		const struct pg_result *found = NULL;
		const char *name = r->plan->points[p].name;
		for (size_t i = 0; i < set.n && !found; i++)
			if (!strcmp(set.items[i].name, name))
				found = &set.items[i];
		if (found) {
			json_decref(r->last[side * n + p]);
			r->last[side * n + p] = json_incref(found->json);
			json_decref(r->cmds[side * n + p]);
			r->cmds[side * n + p] = found->commands ? json_incref(found->commands)
								: NULL;
		}
		if (found && !strcmp(pg_result_status(found), "ok")) {
			r->res[b * n + p] = json_incref(found->json);
			continue;
		}
		if (found && !strcmp(pg_result_status(found), "skipped"))
			continue;
		{
			struct pg_buf line = PG_BUF_INIT;
			pg_buf_printf(
				&line, "block %zu (%s): %s: %s%s%s", b + 1, pg_ab_side_name(side),
				name, found ? pg_result_status(found) : "no result",
				found && pg_result_error(found) ? ": " : "",
				found && pg_result_error(found) ? pg_result_error(found) : "");
			pg_strv_push_owned(&out->errors, pg_buf_detach(&line));
		}
	}
	pg_result_set_release(&set);
	if (out->errors.n > errors)
		out->failed_blocks[side]++;
}

/* The metrics judged: the registry's gated ones of the plan's kinds. */
static bool wanted(const struct pg_strv *ids, const char *id)
{
	if (!ids || !ids->n)
		return true;
	for (size_t i = 0; i < ids->n; i++)
		if (!strcmp(ids->v[i], id))
			return true;
	return false;
}

static void choose_metrics(struct pg_ab_summary *out, const struct pg_plan *plan,
			   const struct pg_ab_spec *ab, const struct pg_strv *ids)
{
	size_t nm;
	const struct pg_metric *all = pg_metrics_all(&nm);
	bool kinds[PG_SUITE_COUNT] = { false };

	for (size_t p = 0; p < plan->n; p++)
		kinds[plan->points[p].test->kind] = true;
	out->metrics = pg_xcalloc(nm + 1, sizeof(*out->metrics));
	out->tolerance = pg_xcalloc(nm + 1, sizeof(double));
	out->whole_tolerance = pg_xcalloc(nm + 1, sizeof(double));
	for (size_t i = 0; i < nm; i++) {
		const struct pg_metric *m = &all[i];
		/* metrics named are judged whether they gate by default or not */
		if (!(ids && ids->n ? wanted(ids, m->id) : m->gated) || !kinds[m->suite] ||
		    m->direction == PG_NO_DIRECTION)
			continue;
		out->tolerance[out->n_metrics] = m->cls == PG_CLASS_THROUGHPUT
							 ? ab->tolerance
							 : ab->latency_tolerance;
		out->whole_tolerance[out->n_metrics] = isnan(ab->whole_run_tolerance)
							       ? out->tolerance[out->n_metrics]
							       : ab->whole_run_tolerance;
		out->metrics[out->n_metrics++] = m;
	}
}

/* A block's result at a point measured the client, not the server
 * (results/clientcheck.h). */
static bool client_bound(const json_t *res)
{
	return res && json_is_true(json_object_get(res, "client_bound"));
}

/*
 * The blocks of a side whose results at point p stand for it, among the
 * first `blocks`, into idx (their count returned): the ok ones, less the
 * client-bound ones unless every one is (then the numbers are the
 * client's either way, and say so with their flag).
 */
static size_t side_blocks(const struct abrun *r, size_t p, enum pg_ab_side side, size_t blocks,
			  size_t *idx)
{
	size_t P = r->plan->n, n = 0, clean = 0;

	for (size_t b = 0; b < blocks; b++)
		if (pg_ab_block_side(b) == side && r->res[b * P + p])
			clean += !client_bound(r->res[b * P + p]);
	for (size_t b = 0; b < blocks; b++)
		if (pg_ab_block_side(b) == side && r->res[b * P + p] &&
		    (!clean || !client_bound(r->res[b * P + p])))
			idx[n++] = b;
	return n;
}

/* The client-bound blocks, named for the reports: "serving_x in block 3
 * (head)". */
static void name_client_bound(const struct abrun *r, struct pg_ab_summary *out, size_t blocks)
{
	size_t P = r->plan->n;

	pg_strv_release(&out->client_bound);
	for (size_t p = 0; p < P; p++)
		for (size_t b = 0; b < blocks; b++) {
			struct pg_buf line = PG_BUF_INIT;
			if (!client_bound(r->res[b * P + p]))
				continue;
			pg_buf_printf(&line, "%s in block %zu (%s)", r->plan->points[p].name, b + 1,
				      pg_ab_side_name(pg_ab_block_side(b)));
			pg_strv_push_owned(&out->client_bound, pg_buf_detach(&line));
		}
}

/* Decide on the first `pairs` pairs. */
static void decide(struct abrun *r, struct pg_ab_summary *out, size_t pairs, bool final)
{
	size_t J = out->n_metrics, P = r->plan->n;
	double *base = pg_xmalloc((J * P * pairs + 1) * sizeof(double));
	double *head = pg_xmalloc((J * P * pairs + 1) * sizeof(double));
	bool *hb = pg_xcalloc(J + 1, sizeof(bool));
	bool *flagged = pg_xcalloc(P * pairs + 1, sizeof(bool));
	struct pg_ab_input in;
	struct pg_ab_opts opts;

	for (size_t p = 0; p < P; p++)
		for (size_t k = 0; k < pairs; k++)
			flagged[p * pairs + k] = client_bound(r->res[2 * k * P + p]) ||
						 client_bound(r->res[(2 * k + 1) * P + p]);

	for (size_t j = 0; j < J; j++) {
		const struct pg_metric *m = out->metrics[j];
		hb[j] = m->direction == PG_HIGHER_IS_BETTER;
		for (size_t p = 0; p < P; p++)
			for (size_t k = 0; k < pairs; k++)
				for (size_t b = 2 * k; b < 2 * k + 2; b++) {
					const json_t *res = r->res[b * P + p];
					double v = NAN;
					if (res && r->plan->points[p].test->kind == m->suite &&
					    pg_metric_value(m, res, &v))
						v = NAN;
					(pg_ab_block_side(b) == PG_AB_HEAD
						 ? head
						 : base)[(j * P + p) * pairs + k] = v;
				}
	}
	in = (struct pg_ab_input){ .n_metrics = J,
				   .n_points = P,
				   .n_pairs = pairs,
				   .base = base,
				   .head = head,
				   .higher_better = hb,
				   .tolerance = out->tolerance,
				   .whole_tolerance = out->whole_tolerance,
				   .client_bound = flagged };
	pg_ab_opts_init(&opts);
	opts.false_alarm = r->suite->ab->false_alarm;
	opts.min_pairs = (size_t)r->suite->ab->min_blocks / 2;
	opts.max_pairs = r->max_blocks / 2;
	pg_ab_decision_release(&out->d);
	pg_ab_decide(&out->d, &in, &opts, final);
	name_client_bound(r, out, 2 * pairs);
	free(base);
	free(head);
	free(hb);
	free(flagged);
}

/* The medians of each side over its blocks, for the tables. */
static void side_medians(struct abrun *r, struct pg_ab_summary *out)
{
	size_t J = out->n_metrics, P = r->plan->n;
	double *v = pg_xmalloc((out->blocks + 1) * sizeof(double));
	size_t *idx = pg_xmalloc((out->blocks + 1) * sizeof(size_t));

	out->base = pg_xcalloc(J * P + 1, sizeof(double));
	out->head = pg_xcalloc(J * P + 1, sizeof(double));
	for (size_t j = 0; j < J; j++)
		for (size_t p = 0; p < P; p++)
			for (int s = 0; s < 2; s++) {
				size_t n = 0,
				       nb = side_blocks(r, p, (enum pg_ab_side)s, out->blocks, idx);
				for (size_t i = 0; i < nb; i++) {
					const json_t *res = r->res[idx[i] * P + p];
					double x;
					if (r->plan->points[p].test->kind ==
						    out->metrics[j]->suite &&
					    pg_metric_value(out->metrics[j], res, &x) == 0)
						v[n++] = x;
				}
				(s ? out->head : out->base)[j * P + p] = pg_median(v, n);
			}
	free(v);
	free(idx);
}

/* results/<side>/<point>.json: the side's blocks as repeats. */
static int write_side(struct abrun *r, const struct pg_ab_summary *out, enum pg_ab_side side,
		      const char *dir, struct pg_error *err)
{
	size_t P = r->plan->n;
	json_t **runs = pg_xcalloc(out->blocks + 1, sizeof(json_t *));
	size_t *idx = pg_xcalloc(out->blocks + 1, sizeof(size_t));
	int rc = 0;

	if ((rc = pg_mkdir_p(dir, err)))
		goto done;
	for (size_t p = 0; p < P && !rc; p++) {
		json_t *merged, *pg, *reps, *blocks, *left_out = json_array();
		size_t n = side_blocks(r, p, side, out->blocks, idx);

		/* the blocks the tables and charts show, as repeats: a
		 * client-bound one is named, not counted */
		blocks = json_array();
		for (size_t i = 0; i < n; i++) {
			runs[i] = r->res[idx[i] * P + p];
			json_array_append_new(blocks, json_integer((json_int_t)idx[i] + 1));
		}
		for (size_t b = 0; b < out->blocks; b++)
			if (pg_ab_block_side(b) == side && client_bound(r->res[b * P + p]) && n &&
			    !client_bound(runs[0]))
				json_array_append_new(left_out, json_integer((json_int_t)b + 1));
		if (!n) {
			/* nothing ok: the last block's failure as it was written */
			json_decref(blocks);
			json_decref(left_out);
			if (r->last[side * P + p])
				rc = pg_result_write(dir, r->plan->points[p].name,
						     r->last[side * P + p], r->cmds[side * P + p],
						     err);
			continue;
		}
		merged = pg_repeats_median(runs, n);
		pg = json_deep_copy(json_object_get(runs[n - 1], "perfgate"));
		if (!pg)
			pg = json_object();
		reps = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(reps, pg_repeats_metrics(runs[i]));
		json_object_set_new(pg, "repeats", reps);
		{
			json_t *ab = json_object();
			json_object_set_new(ab, "side", json_string(pg_ab_side_name(side)));
			json_object_set_new(ab, "blocks", blocks);
			if (json_array_size(left_out))
				json_object_set_new(ab, "client_bound_left_out", left_out);
			else
				json_decref(left_out);
			json_object_set_new(pg, "ab", ab);
		}
		json_object_set_new(merged, "perfgate", pg);
		rc = pg_result_write(dir, r->plan->points[p].name, merged, r->cmds[side * P + p],
				     err);
		json_decref(merged);
	}
done:
	free(runs);
	free(idx);
	return rc;
}

int pg_ab_run(struct pg_ab_summary *out, struct pg_suite *suite, const struct pg_plan *plan,
	      const struct pg_ab_run_opts *o, struct pg_error *err)
{
	struct abrun r;
	struct pg_ab_spec *ab = suite->ab;
	struct saved *sv = NULL;
	size_t P = plan->n, b = 0;
	double start = now(), budget;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	memset(&r, 0, sizeof(r));
	if ((rc = pg_ab_check(suite, err)))
		return rc;
	r.suite = suite;
	r.plan = plan;
	r.o = o;
	r.log = o->log ? o->log : stderr;
	r.max_blocks = (size_t)(o->max_blocks > 0 ? o->max_blocks : ab->max_blocks);
	if (r.max_blocks < 2 || r.max_blocks % 2)
		return pg_error_set(err, PG_ECONFIG,
				    "max blocks: expected an even number >= 2, got %zu",
				    r.max_blocks);
	if (r.max_blocks < (size_t)ab->min_blocks)
		r.max_blocks = (size_t)ab->min_blocks;
	budget = o->time_budget > 0 ? o->time_budget : ab->time_budget;
	if ((rc = pg_mkdir_p(o->results_dir, err)))
		return rc;
	out->gpu = pg_xstrdup(o->gpu->label[0] ? o->gpu->label : "none");
	for (size_t p = 0; p < P; p++)
		pg_strv_push(&out->points, plan->points[p].name);
	out->max_blocks = r.max_blocks;
	for (int s = 0; s < 2; s++)
		out->side_desc[s] = describe_side(&ab->side[s]);
	choose_metrics(out, plan, ab, o->metrics);
	r.res = pg_xcalloc(r.max_blocks * P + 1, sizeof(json_t *));
	r.last = pg_xcalloc(2 * P + 1, sizeof(json_t *));
	r.cmds = pg_xcalloc(2 * P + 1, sizeof(json_t *));
	sv = pg_xcalloc(suite->n_tests + 1, sizeof(*sv));
	save_tests(sv, suite);
	say_overrides(r.log, suite, sv, ab);

	pg_run_signals_install();
	for (b = 0; b < r.max_blocks; b++) {
		enum pg_ab_side side = pg_ab_block_side(b);
		struct pg_run_report rep = PG_RUN_REPORT_INIT;
		struct pg_run_opts ro;
		struct pg_buf dir = PG_BUF_INIT;
		double t0 = now();

		pg_buf_printf(&dir, "%s/blocks/%02zu-%s", o->results_dir, b + 1,
			      pg_ab_side_name(side));
		fprintf(r.log, "--- perfgate A/B: block %zu of at most %zu: %s (pair %zu)\n", b + 1,
			r.max_blocks, pg_ab_side_name(side), b / 2 + 1);
		fflush(r.log);
		apply_side(suite, sv, &ab->side[side], pg_ab_side_name(side), b + 1);
		memset(&ro, 0, sizeof(ro));
		ro.results_dir = dir.ptr;
		ro.gpu = o->gpu;
		ro.log = r.log;
		ro.native = o->native;
		ro.no_telemetry = o->no_telemetry;
		ro.told = &r.told; /* a missing tool is said once, not per block */
		rc = pg_run(&rep, suite, plan, &ro, err);
		pg_run_report_release(&rep);
		if (rc) {
			pg_buf_release(&dir);
			goto done;
		}
		out->blocks = b + 1;
		if (pg_run_cancelled) {
			out->cancel_signal = (int)pg_run_cancelled;
			pg_buf_release(&dir);
			break;
		}
		collect_block(&r, b, dir.ptr, side, out);
		pg_buf_release(&dir);
		fprintf(r.log, "perfgate A/B: block %zu (%s) took %.0f s\n", b + 1,
			pg_ab_side_name(side), now() - t0);
		if (b % 2 == 1) {
			size_t pairs = (b + 1) / 2;
			double elapsed = now() - start, per_pair = elapsed / (double)pairs;
			bool last = b + 1 == r.max_blocks;
			bool out_of_time = budget > 0 && !last && elapsed + per_pair > budget;

			decide(&r, out, pairs, last || out_of_time);
			if (pairs < (size_t)ab->min_blocks / 2)
				fprintf(r.log,
					"perfgate A/B: after %zu pair%s: no verdict before %ld "
					"blocks (min_blocks)\n",
					pairs, pairs == 1 ? "" : "s", ab->min_blocks);
			else
				fprintf(r.log,
					"perfgate A/B: after %zu pair%s: %zu regressed, %zu pending, %zu "
					"decided\n",
					pairs, pairs == 1 ? "" : "s",
					out->d.counts[PG_AB_REGRESSED],
					out->d.counts[PG_AB_PENDING] +
						out->d.counts[PG_AB_INCONCLUSIVE],
					out->d.counts[PG_AB_UNCHANGED] +
						out->d.counts[PG_AB_IMPROVED]);
			if (o->stop_on_failure && !out->d.stop &&
			    out->failed_blocks[PG_AB_BASE] + out->failed_blocks[PG_AB_HEAD]) {
				decide(&r, out, pairs, true);
				free(out->stop);
				out->stop = pg_xstrdup("a block failed");
				break;
			}
			if (out->d.stop) {
				/* what is still open stays open: inconclusive */
				if (!out->d.final)
					decide(&r, out, pairs, true);
				free(out->stop);
				if (out->d.counts[PG_AB_REGRESSED])
					out->stop = pg_xstrdup("a regression is clear");
				else if (!out->d.counts[PG_AB_INCONCLUSIVE] &&
					 !out->d.counts[PG_AB_PENDING])
					out->stop = pg_xstrdup(
						"every interval is clear of its tolerance");
				else if (out_of_time)
					out->stop = pg_xstrdup("time_budget: another pair would "
							       "not fit");
				else
					out->stop = pg_xstrdup("max_blocks reached");
				break;
			}
		}
	}
	if (!out->stop)
		out->stop = pg_xstrdup(out->cancel_signal ? "cancelled" : "max_blocks reached");
	/* a cancel (or an odd block) leaves the complete pairs to decide on */
	if (!out->d.points)
		decide(&r, out, out->blocks / 2, true);
	else if (out->cancel_signal)
		decide(&r, out, out->blocks / 2, true);
	out->seconds = now() - start;
	side_medians(&r, out);
	{
		char *bdir = pg_path_join(o->results_dir, "base");
		char *hdir = pg_path_join(o->results_dir, "head");
		rc = write_side(&r, out, PG_AB_BASE, bdir, err);
		if (!rc)
			rc = write_side(&r, out, PG_AB_HEAD, hdir, err);
		free(bdir);
		free(hdir);
	}
done:
	pg_run_signals_restore();
	apply_side(suite, sv, NULL, NULL, 0);
	saved_release(sv, suite->n_tests);
	for (size_t i = 0; i < r.max_blocks * P; i++)
		json_decref(r.res[i]);
	for (size_t i = 0; i < 2 * P; i++) {
		json_decref(r.last[i]);
		json_decref(r.cmds[i]);
	}
	free(r.res);
	free(r.last);
	free(r.cmds);
	pg_strv_release(&r.told);
	return rc;
}

int pg_ab_write(const struct pg_ab_summary *s, const struct pg_suite *suite, const char *dir,
		struct pg_error *err)
{
	struct pg_buf md = PG_BUF_INIT, js = PG_BUF_INIT, clean = PG_BUF_INIT;
	struct pg_redactor red = PG_REDACTOR_INIT;
	char *md_path = pg_path_join(dir, "comparison.md");
	char *js_path = pg_path_join(dir, "verdict.json");
	json_t *v = pg_ab_json(s);
	int rc;

	/* the sides' commands are shown: a token in a flag must not be */
	pg_run_collect_secrets(&red, suite);
	for (int i = 0; suite->ab && i < 2; i++) {
		const struct pg_ab_side_spec *sd = &suite->ab->side[i];
		if (sd->server_command)
			pg_redactor_add_shell(&red, sd->server_command, NULL, NULL);
		if (sd->server_flags)
			pg_redactor_add_shell(&red, sd->server_flags, NULL, NULL);
		if (sd->command)
			pg_redactor_add_shell(&red, sd->command, NULL, NULL);
	}
	pg_ab_markdown(&md, s);
	pg_json_write(&js, v, 2);
	pg_buf_putc(&js, '\n');
	pg_redact(&red, &clean, md.ptr);
	rc = pg_file_write_atomic(md_path, clean.ptr, clean.len, err);
	pg_buf_reset(&clean);
	pg_redact(&red, &clean, js.ptr);
	if (!rc)
		rc = pg_file_write_atomic(js_path, clean.ptr, clean.len, err);
	pg_buf_release(&clean);
	pg_redactor_release(&red);
	json_decref(v);
	pg_buf_release(&md);
	pg_buf_release(&js);
	free(md_path);
	free(js_path);
	return rc;
}
