#include "gate/gate_io.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "gpu/gpu.h"
#include "base/strutil.h"
#include "sys/fsutil.h"
#include "gpu/detect_io.h"
#include "baseline/history_io.h"
#include "baseline/thresholds_io.h"
#include "trends/trends.h"
#include "base/jsonw.h"
#include "results/identity.h"

#include <libgen.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

/* The GPU as the report labels it: vLLM's gpu_type lines, else perfgate's
 * label ("8xH100"), else whatever name the result has. */
static const char *run_gpu(const struct pg_result *r)
{
	json_t *commands_gpu = r->commands ? json_object_get(r->commands, "gpu_type") : NULL;
	json_t *label = pg_json_path(r->json, "perfgate.gpu.label");

	if (!json_is_string(commands_gpu) && json_is_string(label) && json_string_length(label))
		return json_string_value(label);
	return pg_result_gpu(r);
}

struct pg_cmp_point *pg_gate_points(const struct pg_result_set *set)
{
	struct pg_cmp_point *pts = pg_xcalloc(set->n ? set->n : 1, sizeof(*pts));

	for (size_t i = 0; i < set->n; i++) {
		const struct pg_result *r = &set->items[i];
		pts[i].name = r->name;
		pts[i].suite = r->kind;
		pts[i].status = pg_result_status(r);
		pts[i].result = r->json;
		pts[i].gpu = run_gpu(r);
		pts[i].probe = json_is_true(pg_json_path(r->json, "perfgate.adaptive_search"));
		pts[i].host = pg_json_path_str(r->json, "perfgate.host");
		pts[i].run_started = pg_json_path_str(r->json, "perfgate.run_started_at");
	}
	return pts;
}

int pg_gate_gpu_key(char *out, size_t size, const char *forced, const struct pg_result_set *set,
		    struct pg_error *err)
{
	const char *env = getenv("PERFGATE_GPU");
	char key[128], first[128] = "";

	if ((forced && *forced) || (env && *env)) {
		const char *raw = forced && *forced ? forced : env;
		if (!pg_gpu_name_ok(raw))
			return pg_error_set(err, PG_ECONFIG, "%s '%s': " PG_GPU_NAME_HINT,
					    raw == forced ? "--gpu" : "PERFGATE_GPU", raw);
		pg_gpu_key(out, size, raw);
		return 0;
	}
	for (size_t i = 0; set && i < set->n; i++) {
		const char *raw = pg_result_gpu(&set->items[i]);
		if (!raw)
			continue;
		pg_gpu_key(key, sizeof(key), raw);
		if (!first[0])
			snprintf(first, sizeof(first), "%s", key);
		else if (strcmp(first, key))
			return pg_error_set(
				err, PG_ECONFIG,
				"the results come from several GPUs (%s in %s, %s in %s): pass --gpu",
				first, set->items[0].name, key, set->items[i].name);
	}
	if (!first[0]) {
		/* results that do not say: the GPUs of the machine comparing them */
		struct pg_gpu_info info;
		struct pg_error ignored = PG_ERROR_INIT;
		pg_gpu_info_init(&info);
		if (pg_gpu_detect(&info, &ignored) == 0 && info.count > 0 &&
		    strcmp(info.key, "none"))
			snprintf(first, sizeof(first), "%s", info.key);
		pg_gpu_info_release(&info);
	}
	if (!first[0])
		return pg_error_set(
			err, PG_ECONFIG,
			"the results do not say which GPU ran them and nvidia-smi found none: pass --gpu (or set PERFGATE_GPU)");
	snprintf(out, size, "%s", first);
	return 0;
}

int pg_gate_load(struct pg_policy *policy, struct pg_baseline *base,
		 const struct pg_gate_source *src, struct pg_error *err)
{
	bool git = src->baseline && !strcmp(src->baseline, "git");
	char *path;
	int rc;

	if (src->baseline && !git && strcmp(src->baseline, "thresholds")) {
		pg_policy_init(policy);
		memset(base, 0, sizeof(*base));
		return pg_error_set(err, PG_ECONFIG,
				    "option '--baseline': expected thresholds or git, got '%s'",
				    src->baseline);
	}
	path = pg_thresholds_path(src->thresholds ? src->thresholds : "thresholds", src->gpu);
	if (src->pinned && src->pinned->outside) {
		const struct pg_buf *text = pg_thresholds_pinned(src->pinned, path);
		rc = text ? pg_thresholds_load_text(text->ptr, text->len, path, policy, base, err)
			  : pg_error_set(err, PG_ENOTFOUND, "%s: not found", path);
	} else {
		rc = src->thresholds_rev ? pg_thresholds_load_at(path, src->thresholds_rev, policy,
								 base, src->origin, err)
					 : pg_thresholds_load(path, policy, base, err);
	}
	if (rc == PG_ENOTFOUND) {
		if (!git && src->thresholds_rev && !(src->pinned && src->pinned->outside))
			goto done; /* its message says which commit has no such file */
		if (!git) {
			pg_error_set(
				err, PG_ENOTFOUND,
				"%s: no thresholds file for %s; create it with 'perfgate baseline update %s --gpu %s --from <results dir or report>'",
				path, src->gpu, path, src->gpu);
			goto done;
		}
		/* a git baseline still needs a policy: the registry's defaults */
		pg_error_clear(err);
		rc = 0;
	}
	if (rc)
		goto done;
	if (base->gpu) {
		char key[128];
		pg_gpu_key(key, sizeof(key), base->gpu);
		if (strcmp(key, src->gpu)) {
			rc = pg_error_set(err, PG_ECONFIG,
					  "%s: the file is for %s, the comparison for %s", path,
					  base->gpu, src->gpu);
			goto done;
		}
	}
	if (!git)
		goto done;

	pg_baseline_release(base);
	rc = pg_history_baseline(base, src->gpu, policy,
				 &(struct pg_history_opts){ .repo = src->repo,
							    .ref = src->ref,
							    .base_branch = src->base_branch,
							    .source_repo = src->source_repo },
				 err);
done:
	if (!base->gpu)
		base->gpu = pg_xstrdup(src->gpu);
	free(path);
	return rc;
}

/* dir/name parsed as JSON into *root, or *root NULL when there is no such
 * file (no error); path holds the file's path for messages, jerr the
 * parser's complaint when *root is NULL after a read. */
static int read_json_there(json_t **root, struct pg_buf *path, json_error_t *jerr, const char *dir,
			   const char *name, bool nofollow, struct pg_error *err)
{
	struct pg_buf text = PG_BUF_INIT;
	int rc;

	*root = NULL;
	pg_buf_printf(path, "%s/%s", dir, name);
	rc = nofollow ? pg_file_read_nofollow(path->ptr, &text, err)
		      : pg_file_read(path->ptr, &text, err);
	if (rc == PG_ENOTFOUND) {
		pg_error_clear(err);
		rc = PG_ENOTFOUND;
	} else if (!rc) {
		*root = json_loadb(text.ptr, text.len, 0, jerr);
	}
	pg_buf_release(&text);
	return rc;
}

int pg_gate_read_plan(struct pg_strv *out, bool *found, const char *dir, struct pg_error *err)
{
	struct pg_buf path = PG_BUF_INIT;
	json_t *root, *points, *p;
	json_error_t jerr;
	size_t i;
	int rc;

	*found = false;
	rc = read_json_there(&root, &path, &jerr, dir, "perfgate_run.json", false, err);
	if (rc) {
		rc = rc == PG_ENOTFOUND ? 0 : rc;
		goto done;
	}
	points = root ? pg_json_path(root, "perfgate_run.points") : NULL;
	if (!json_is_array(points)) {
		rc = pg_error_set(err, PG_EINFRA, "%s: not a perfgate run manifest%s%s", path.ptr,
				  root ? "" : ": ", root ? "" : jerr.text);
		goto done;
	}
	json_array_foreach(points, i, p)
	{
		/* a deployment's point: its identity, with the shape */
		const char *name = pg_json_path_str(p, "identity");
		if (!name)
			name = pg_json_path_str(p, "name");
		if (name)
			pg_strv_push(out, name);
	}
	*found = true;
done:
	json_decref(root);
	pg_buf_release(&path);
	return rc;
}

/* dir/name relative to out_dir, when it is a regular file the plugin
 * uploads (a link is not; a name the agent reads as a pattern is not). */
static char *linked(const char *dir, const char *name, const char *out_dir)
{
	char *path, *rel = NULL;
	struct stat st;

	if (!name || !*name || strchr(name, '/') || strpbrk(name, "*?[]{};\\"))
		return NULL;
	path = pg_path_join(dir, name);
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode))
		rel = pg_path_relative(out_dir, path);
	free(path);
	return rel;
}

/* The result of the row's point in set: the one whose identity (the
 * comparison's name for it) or file stem is the point. */
static const struct pg_result *result_of(const struct pg_result_set *set, const char *point)
{
	const struct pg_result *by_name = NULL;

	for (size_t i = 0; set && i < set->n; i++) {
		const struct pg_result *r = &set->items[i];
		char *id;
		bool same;
		if (!r->name || !r->path)
			continue;
		if (!by_name && !strcmp(r->name, point))
			by_name = r;
		id = pg_identity_of(r->name, r->kind, r->json);
		same = !strcmp(id, point);
		free(id);
		if (same)
			return r;
	}
	return by_name;
}

/* A point's result file and server log, relative to out_dir. */
static void point_files(char **result, char **log, const struct pg_result *r, const char *out_dir)
{
	char *copy = pg_xstrdup(r->path), *base = pg_xstrdup(r->path), *dir = dirname(copy);
	const json_t *roles = pg_json_path(r->json, "perfgate.deployment.roles");
	const char *test = pg_json_path_str(r->json, "perfgate.test");
	struct pg_buf name = PG_BUF_INIT;

	*result = linked(dir, basename(base), out_dir);
	*log = NULL;
	/* the front role (listed last) serves the requests */
	if (json_array_size(roles))
		*log = linked(
			dir,
			pg_json_path_str(json_array_get(roles, json_array_size(roles) - 1), "log"),
			out_dir);
	if (!*log && test) {
		pg_buf_printf(&name, "%s.server.log", test);
		*log = linked(dir, name.ptr, out_dir);
	}
	if (!*log) {
		pg_buf_reset(&name);
		pg_buf_printf(&name, "%s.command.log", r->name);
		*log = linked(dir, name.ptr, out_dir);
	}
	pg_buf_release(&name);
	free(copy);
	free(base);
}

void pg_gate_link_files(struct pg_comparison *c, const struct pg_result_set *run,
			const struct pg_result_set *confirm, const char *out_dir)
{
	size_t n, total;
	const struct pg_cmp_row **rows = pg_comparison_evidence_rows(c, &n, &total);

	for (size_t i = 0; i < n; i++) {
		struct pg_cmp_row *r = &c->rows[rows[i] - c->rows];
		const struct pg_result *first = result_of(run, r->point);
		const struct pg_result *again = r->rerun.n ? result_of(confirm, r->point) : NULL;
		if (!r->files)
			r->files = pg_xcalloc(1, sizeof(*r->files));
		if (first && !r->files->result)
			point_files(&r->files->result, &r->files->log, first, out_dir);
		if (again && !r->files->rerun_result)
			point_files(&r->files->rerun_result, &r->files->rerun_log, again, out_dir);
	}
	free(rows);
}

static int verdict_piece(void *writer, struct pg_buf *chunk)
{
	return pg_comparison_json_next(writer, chunk);
}

/* The list of the charts perfgate wrote into <dir>/evidence: the only
 * files a later comparison into the same directory removes. */
#define EVIDENCE_MANIFEST ".perfgate-charts"

/* A chart name of an earlier manifest: one file of evidence/, no more. */
static bool own_chart_name(const char *name)
{
	return *name && *name != '.' && !strchr(name, '/') && pg_str_has_suffix(name, ".svg");
}

/* Remove the charts an earlier comparison wrote into evid (its manifest
 * names them), and the manifest; files perfgate did not write stay. */
static void clear_evidence(const char *evid)
{
	struct pg_buf text = PG_BUF_INIT;
	struct pg_error ignored = PG_ERROR_INIT;
	char *manifest = pg_path_join(evid, EVIDENCE_MANIFEST);

	if (pg_file_read(manifest, &text, &ignored) == 0) {
		for (char *line = text.ptr, *next; line && *line; line = next) {
			struct stat st;
			char *p;
			next = strchr(line, '\n');
			if (next)
				*next++ = '\0';
			if (!own_chart_name(line))
				continue;
			p = pg_path_join(evid, line);
			if (lstat(p, &st) == 0 && S_ISREG(st.st_mode))
				unlink(p);
			free(p);
		}
		unlink(manifest);
	}
	free(manifest);
	pg_buf_release(&text);
}

/*
 * <dir>/evidence/<point>-<metric>.svg: the trend chart of each regression
 * the evidence lists (and links), named in evidence/.perfgate-charts. The
 * charts of an earlier comparison into the same directory (a first run's,
 * before its re-run) are removed first. An evidence/ that is a symbolic
 * link (or no directory) is neither cleared nor written through: an
 * error naming it.
 */
static int write_evidence(const struct pg_comparison *c, const char *dir, struct pg_error *err)
{
	size_t n, total;
	const struct pg_cmp_row **rows = pg_comparison_evidence_rows(c, &n, &total);
	struct pg_buf svg = PG_BUF_INIT, list = PG_BUF_INIT;
	char *evid = pg_path_join(dir, "evidence");
	struct stat st;
	bool any = false;
	int rc = 0;

	if (lstat(evid, &st) == 0) {
		if (S_ISLNK(st.st_mode))
			rc = pg_error_set(
				err, PG_ERR,
				"%s: a symbolic link, no evidence charts written through it", evid);
		else if (!S_ISDIR(st.st_mode))
			rc = pg_error_set(err, PG_ERR, "%s: not a directory, no evidence charts",
					  evid);
		else
			clear_evidence(evid);
	}
	for (size_t i = 0; i < n && !rc; i++) {
		const char *name = rows[i]->chart;
		char *path;
		pg_buf_reset(&svg);
		if (!name || !pg_trends_evidence_svg(&svg, rows[i], NULL))
			continue;
		if (!any && (rc = pg_mkdir_under(dir, "evidence", err)))
			break;
		any = true;
		name += strlen("evidence/");
		/* listed first: a chart half written is still perfgate's */
		pg_buf_printf(&list, "%s\n", name);
		path = pg_path_join(evid, name);
		rc = pg_file_write_atomic(path, svg.ptr, svg.len, err);
		free(path);
	}
	if (any) {
		char *manifest = pg_path_join(evid, EVIDENCE_MANIFEST);
		struct pg_error ignored = PG_ERROR_INIT;
		int rc2 = pg_file_write_atomic(manifest, list.ptr, list.len, rc ? &ignored : err);
		if (!rc)
			rc = rc2;
		free(manifest);
	}
	free(rows);
	free(evid);
	pg_buf_release(&svg);
	pg_buf_release(&list);
	return rc;
}

int pg_comparison_write(const struct pg_comparison *c, const char *dir, struct pg_buf *md_out,
			struct pg_error *warning, struct pg_error *err)
{
	struct pg_buf own_md = PG_BUF_INIT, path = PG_BUF_INIT;
	struct pg_buf *md = md_out ? md_out : &own_md;
	struct pg_error lost = PG_ERROR_INIT;
	size_t md_start = md->len;
	int rc = pg_mkdir_p(dir, err);

	if (rc)
		goto done;
	pg_comparison_markdown(md, c);
	pg_buf_printf(&path, "%s/comparison.md", dir);
	if ((rc = pg_file_write_atomic(path.ptr, md->ptr + md_start, md->len - md_start, err)))
		goto done;
	pg_buf_reset(&path);
	pg_buf_printf(&path, "%s/verdict.json", dir);
	rc = pg_file_write_atomic_fill(path.ptr, verdict_piece,
				       &(struct pg_comparison_json_writer){ .c = c }, err);
	/* the verdict stands without its charts: a warning */
	if (!rc)
		write_evidence(c, dir, warning ? warning : &lost);
done:
	pg_buf_release(&own_md);
	pg_buf_release(&path);
	return rc;
}

int pg_gate_read_regressed(json_t **out, const char *dir, struct pg_error *err)
{
	struct pg_buf path = PG_BUF_INIT;
	json_t *root, *rows, *r;
	json_error_t jerr;
	size_t i;
	int rc;

	*out = NULL;
	rc = read_json_there(&root, &path, &jerr, dir, "verdict.json", true, err);
	if (rc) {
		rc = rc == PG_ENOTFOUND ? 0 : rc;
		goto done;
	}
	rows = json_object_get(root, "rows");
	if (!json_is_array(rows)) {
		rc = pg_error_set(err, PG_EINFRA, "%s: not a perfgate verdict (%s)", path.ptr,
				  root ? "no rows" : jerr.text);
		goto done;
	}
	*out = json_object();
	json_array_foreach(rows, i, r)
	{
		const char *point = json_string_value(json_object_get(r, "point"));
		const char *metric = json_string_value(json_object_get(r, "metric"));
		const char *verdict = json_string_value(json_object_get(r, "verdict"));
		const char *outcome = json_string_value(json_object_get(r, "outcome"));
		struct pg_buf ids = PG_BUF_INIT;
		json_t *had;
		if (!point || !metric || !verdict || strcmp(verdict, "regressed") ||
		    !((outcome && !strcmp(outcome, "fail")) ||
		      json_is_true(json_object_get(r, "known"))))
			continue;
		had = json_object_get(*out, point);
		if (json_is_string(had))
			pg_buf_printf(&ids, "%s,", json_string_value(had));
		pg_buf_puts(&ids, metric);
		json_object_set_new(*out, point, json_string(ids.ptr));
		pg_buf_release(&ids);
	}
done:
	json_decref(root);
	pg_buf_release(&path);
	return rc;
}
