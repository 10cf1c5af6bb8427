#include "buildkite/plugin_config.h"

#include "base/alloc.h"
#include "buildkite/pipeline_emit.h"
#include "base/buf.h"
#include "base/error.h"
#include "gpu/gpu.h"
#include "suite/suite.h"

#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIELD(name) offsetof(struct pg_plugin_config, name)

static const char *const baseline_values[] = { "thresholds", "git", "ab", NULL };
_Static_assert(PG_BASELINE_AB == 2, "baseline_values follows enum pg_plugin_baseline");
static const char *const mode_values[] = { "run",      "report", "gate", "merge",
					   "pipeline", "binary", NULL };
_Static_assert(PG_MODE_PIPELINE == 4 && PG_MODE_BINARY == 5,
	       "mode_values follows enum pg_plugin_mode");
/* `only` is stored as the index, which must be the enum pg_suite_kind */
static const char *const only_values[] = { "latency", "throughput", "serving", "startup", NULL };
_Static_assert(PG_SUITE_LATENCY == 0 && PG_SUITE_THROUGHPUT == 1 && PG_SUITE_SERVING == 2 &&
		       PG_SUITE_STARTUP == 3,
	       "only_values follows enum pg_suite_kind");
static const char *const annotate_values[] = { "always", "on-change", "never", NULL };
static const char *const pr_thresholds_values[] = { "base-branch", "pull-request", NULL };
static const char *const record_failure_values[] = { "fail", "warn", NULL };

/* clang-format off */
const struct pg_plugin_option pg_plugin_options[] = {
	{ "suites", PG_POPT_SUITES, NULL, NULL, 0, FIELD(suites),
	  "The suites to run: a path to a suite file (or a list of paths, e.g. vLLM's *-tests.json files), "
	  "relative to the repository checkout, or the suite mapping itself inline." },
	{ "gpu", PG_POPT_STRING, NULL, "auto", 0, FIELD(gpu),
	  "The GPU whose baselines apply (H100, H200, A100, L40S...); auto detects it with nvidia-smi." },
	{ "thresholds", PG_POPT_STRING, NULL, "thresholds", 0, FIELD(thresholds),
	  "Directory holding the per-GPU baselines and tolerances, thresholds/<GPU>.yml." },
	{ "baseline", PG_POPT_ENUM, baseline_values, "thresholds", 0, FIELD(baseline),
	  "Where baselines come from: the thresholds files, the results history kept in git, or ab: "
	  "the base side run on the same agent, interleaved with the head (the ab option or the suite's ab section)." },
	{ "ab", PG_POPT_OBJECT, NULL, NULL, 0, FIELD(ab),
	  "With baseline: ab, the two sides (base, head: server command, flags, env, or the benchmark command) "
	  "and the sampling budget (min_blocks, max_blocks, time_budget, tolerances), as a suite's ab section." },
	{ "pr-thresholds", PG_POPT_ENUM, pr_thresholds_values, "base-branch", 0, FIELD(pr_thresholds),
	  "On a pull request, read the thresholds file (policy and baselines) as the base branch has it at the "
	  "merge-base (base-branch), or the pull request's own copy (pull-request: the pull request can move its "
	  "own bar); a difference is shown as a warning either way." },
	{ "mode", PG_POPT_ENUM, mode_values, "gate", 0, FIELD(mode),
	  "run: run the suites and report; report: run the step's command, then report the results it "
	  "wrote to results-dir; "
	  "gate: run, compare with the baselines and fail the step on a confirmed regression; "
	  "merge: gather the shards of a dynamic pipeline from the artifacts, then gate; "
	  "pipeline: generate a dynamic pipeline (gpus, shards, queue) and upload it; "
	  "binary: build perfgate and upload it as binary-artifact for steps on agents without build tools." },
	{ "filter", PG_POPT_REGEX, NULL, NULL, 0, FIELD(filter),
	  "Run only the test points whose names match this POSIX extended regular expression." },
	{ "only", PG_POPT_ENUM, only_values, NULL, 0, FIELD(only),
	  "Run only one kind of test: latency, throughput, serving or startup." },
	{ "repeat", PG_POPT_INT, NULL, NULL, 1, FIELD(repeat),
	  "Runs per test point, summarised by the median; overrides the suite's repeat." },
	{ "confirm", PG_POPT_BOOL, NULL, "true", 0, FIELD(confirm),
	  "Re-run the flagged test points (and a few anchors) once; a regression fails the step only when the re-run reproduces it." },
	{ "annotate", PG_POPT_ENUM, annotate_values, "always", 0, FIELD(annotate),
	  "When to post the build annotation: always, on-change (only when a verdict is not unchanged), or never." },
	{ "context", PG_POPT_STRING, NULL, NULL, 0, FIELD(context),
	  "Annotation context; default perfgate-<gpu>-<step key>, one annotation per GPU step." },
	{ "artifacts", PG_POPT_BOOL, NULL, "true", 0, FIELD(artifacts),
	  "Upload the results directory and the reports as build artifacts." },
	{ "results-dir", PG_POPT_STRING, NULL, "results", 0, FIELD(results_dir),
	  "Directory for result files and reports." },
	{ "fetch-datasets", PG_POPT_BOOL, NULL, "false", 0, FIELD(fetch_datasets),
	  "Fetch a dataset file the suites read and the agent lacks before anything runs, as vLLM's "
	  "driver does (ShareGPT from Hugging Face, HF_ENDPOINT for a mirror, or the dataset's url), "
	  "kept only when its SHA-256 matches; without it a missing file stops the step at once." },
	{ "only-on-labels", PG_POPT_STRINGS, NULL, NULL, 0, FIELD(only_on_labels),
	  "On pull requests, run only when the PR carries one of these labels (e.g. perf-benchmarks)." },
	{ "record-history", PG_POPT_BOOL, NULL, "false", 0, FIELD(record_history),
	  "Append this build's results to the history repository (typically on the base branch); with "
	  "baseline: ab, the A/B results on any branch, kept apart from the baselines (trends shows them)." },
	{ "history-repo", PG_POPT_STRING, NULL, NULL, 0, FIELD(history_repo),
	  "Git repository (URL or path) holding the results history used by baseline: git." },
	{ "ab-history-repo", PG_POPT_STRING, NULL, NULL, 0, FIELD(ab_history_repo),
	  "With baseline: ab and record-history, the git repository (URL or path) the A/B results are "
	  "recorded in, and trends reads them from; default history-repo. Pull-request jobs can push here "
	  "without push rights on main's history." },
	{ "record-history-failure", PG_POPT_ENUM, record_failure_values, "fail", 0, FIELD(record_failure),
	  "When recording the history fails: fail the step (exit 3, an error in the annotation), or warn "
	  "(a warning in the annotation; the exit code is the verdict's)." },
	{ "trends", PG_POPT_BOOL, NULL, "false", 0, FIELD(trends),
	  "With baseline: git or record-history, render the trends site of this GPU's history with this "
	  "build's run on every chart (perfgate trends) into <results-dir>/trends, uploaded with the artifacts." },
	{ "base-branch", PG_POPT_STRING, NULL, NULL, 0, FIELD(base_branch),
	  "Branch whose results are the baseline; default the pipeline's default branch." },
	{ "binary", PG_POPT_STRING, NULL, NULL, 0, FIELD(binary),
	  "Path to a prebuilt perfgate executable; by default the plugin builds or finds one." },
	{ "binary-artifact", PG_POPT_ARTIFACT, NULL, NULL, 0, FIELD(binary_artifact),
	  "A perfgate bundle (.tar.gz) shared as an artifact of this build: modes binary and pipeline upload "
	  "the perfgate they run there, other steps download it instead of building (agents without build tools)." },
	{ "binary-step", PG_POPT_STRING, NULL, NULL, 0, FIELD(binary_step),
	  "Where binary-artifact is downloaded: the key of the step that uploads it (its mode: binary step, or a "
	  "command step with the bundle in its artifact_paths). The bundle is taken from that step only and run "
	  "only when its SHA-256 is the one that step's upload recorded; mode pipeline sets it on the steps it "
	  "generates." },
	{ "shard", PG_POPT_SHARD, NULL, NULL, 0, FIELD(shard),
	  "Run only this slice of the suite's tests, INDEX/COUNT (perfgate pipeline sets it)." },
	{ "gpus", PG_POPT_STRINGS, NULL, NULL, 0, FIELD(gpus),
	  "mode pipeline: the GPU queues to fan the suites out over (H100, H200, A100, L40S...)." },
	{ "shards", PG_POPT_INT, NULL, "1", 1, FIELD(shards),
	  "mode pipeline: steps per GPU; the tests are split evenly between them." },
	{ "queue", PG_POPT_STRING, NULL, "{gpu}", 0, FIELD(queue),
	  "mode pipeline: the agents queue of each GPU's steps; {gpu} and {gpu_lower} are replaced." },
};
/* clang-format on */

const size_t pg_plugin_n_options = sizeof(pg_plugin_options) / sizeof(pg_plugin_options[0]);

#define AT(c, opt, type) ((type *)((char *)(c) + (opt)->offset))

static int enum_index(const struct pg_plugin_option *o, const char *value)
{
	for (int i = 0; o->values[i]; i++)
		if (!strcmp(o->values[i], value))
			return i;
	return -1;
}

static void set_default(struct pg_plugin_config *c, const struct pg_plugin_option *o)
{
	const char *d = o->default_value;

	switch (o->type) {
	case PG_POPT_STRING:
	case PG_POPT_REGEX:
	case PG_POPT_SHARD:
	case PG_POPT_ARTIFACT:
		*AT(c, o, char *) = pg_xstrdup(d);
		break;
	case PG_POPT_BOOL:
		*AT(c, o, bool) = d && !strcmp(d, "true");
		break;
	case PG_POPT_INT:
		if (!d || pg_parse_long(d, AT(c, o, long)))
			*AT(c, o, long) = 0;
		break;
	case PG_POPT_ENUM:
		*AT(c, o, int) = d ? enum_index(o, d) : -1;
		break;
	case PG_POPT_STRINGS:
	case PG_POPT_SUITES:
	case PG_POPT_OBJECT:
		break;
	}
}

void pg_plugin_config_init(struct pg_plugin_config *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < pg_plugin_n_options; i++)
		set_default(c, &pg_plugin_options[i]);
}

void pg_plugin_config_release(struct pg_plugin_config *c)
{
	for (size_t i = 0; i < pg_plugin_n_options; i++) {
		const struct pg_plugin_option *o = &pg_plugin_options[i];
		switch (o->type) {
		case PG_POPT_STRING:
		case PG_POPT_REGEX:
		case PG_POPT_SHARD:
		case PG_POPT_ARTIFACT:
			free(*AT(c, o, char *));
			break;
		case PG_POPT_STRINGS:
			pg_strv_release(AT(c, o, struct pg_strv));
			break;
		case PG_POPT_SUITES:
			pg_strv_release(&AT(c, o, struct pg_plugin_suites)->paths);
			json_decref(AT(c, o, struct pg_plugin_suites)->inline_suite);
			break;
		case PG_POPT_OBJECT:
			json_decref(*AT(c, o, json_t *));
			break;
		default:
			break;
		}
	}
	memset(c, 0, sizeof(*c));
}

const char *pg_plugin_enum_name(const char *option, int value)
{
	for (size_t i = 0; i < pg_plugin_n_options; i++) {
		const struct pg_plugin_option *o = &pg_plugin_options[i];
		if (o->type != PG_POPT_ENUM || strcmp(o->name, option))
			continue;
		for (int k = 0; o->values[k]; k++)
			if (k == value)
				return o->values[k];
	}
	return NULL;
}

/* "'three'", "true", "2.5", "a list", "an object", "null" */
static void describe(struct pg_buf *b, const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_STRING:
		pg_buf_printf(b, "'%s'", json_string_value(v));
		break;
	case JSON_INTEGER:
		pg_buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		break;
	case JSON_REAL: {
		char num[PG_FMT_DOUBLE_SIZE];
		pg_buf_puts(b, pg_fmt_repr(num, json_real_value(v)));
		break;
	}
	case JSON_TRUE:
		pg_buf_puts(b, "true");
		break;
	case JSON_FALSE:
		pg_buf_puts(b, "false");
		break;
	case JSON_ARRAY:
		pg_buf_puts(b, "a list");
		break;
	case JSON_OBJECT:
		pg_buf_puts(b, "a mapping");
		break;
	case JSON_NULL:
		pg_buf_puts(b, "null");
		break;
	}
}

struct parse {
	const char *step_label;
	pg_plugin_locate locate;
	void *ctx;
	struct pg_error *err;
};

static int fail(const struct parse *p, const char *option, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(const struct parse *p, const char *option, const char *fmt, ...)
{
	struct pg_buf b = PG_BUF_INIT;
	char where[256];
	const char *loc = p->locate ? p->locate(p->ctx, option, where, sizeof(where)) : NULL;
	va_list ap;

	if (loc)
		pg_buf_printf(&b, "%s: ", loc);
	if (p->step_label)
		pg_buf_printf(&b, "step '%s': ", p->step_label);
	else
		pg_buf_puts(&b, "plugin configuration: ");
	va_start(ap, fmt);
	pg_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	pg_error_set(p->err, PG_ECONFIG, "%s", b.ptr);
	pg_buf_release(&b);
	return PG_ECONFIG;
}

static int expected(const struct parse *p, const struct pg_plugin_option *o, const char *what,
		    const json_t *got)
{
	struct pg_buf d = PG_BUF_INIT;
	int ret;

	describe(&d, got);
	ret = fail(p, o->name, "option '%s': expected %s, got %s", o->name, what, d.ptr);
	pg_buf_release(&d);
	return ret;
}

static int parse_enum(const struct parse *p, const struct pg_plugin_option *o, const json_t *v,
		      int *out)
{
	struct pg_buf what = PG_BUF_INIT;
	int idx = json_is_string(v) ? enum_index(o, json_string_value(v)) : -1;
	int ret = 0;

	if (idx >= 0) {
		*out = idx;
		return 0;
	}
	for (int i = 0; o->values[i]; i++)
		pg_buf_printf(&what, "%s'%s'",
			      i == 0             ? ""
			      : o->values[i + 1] ? ", "
						 : " or ",
			      o->values[i]);
	if (json_is_string(v)) {
		size_t n = 0;
		while (o->values[n])
			n++;
		const char *near = pg_nearest(json_string_value(v), o->values, n);
		if (near) {
			ret = fail(p, o->name,
				   "option '%s': expected %s, got '%s' (did you mean '%s'?)",
				   o->name, what.ptr, json_string_value(v), near);
			goto done;
		}
	}
	ret = expected(p, o, what.ptr, v);
done:
	pg_buf_release(&what);
	return ret;
}

static int parse_strings(const struct parse *p, const struct pg_plugin_option *o, const json_t *v,
			 struct pg_strv *out)
{
	size_t i;
	json_t *item;

	if (json_is_string(v)) {
		pg_strv_push(out, json_string_value(v));
		return 0;
	}
	if (!json_is_array(v))
		return expected(p, o, "a list of strings", v);
	json_array_foreach(v, i, item)
	{
		if (!json_is_string(item)) {
			struct pg_buf d = PG_BUF_INIT;
			describe(&d, item);
			fail(p, o->name, "option '%s': item %zu: expected a string, got %s",
			     o->name, i, d.ptr);
			pg_buf_release(&d);
			return PG_ECONFIG;
		}
		pg_strv_push(out, json_string_value(item));
	}
	return 0;
}

static int parse_suites(const struct parse *p, const struct pg_plugin_option *o, const json_t *v,
			struct pg_plugin_suites *out)
{
	if (json_is_object(v)) {
		out->inline_suite = json_incref((json_t *)v);
		return 0;
	}
	if (json_is_string(v) || json_is_array(v)) {
		if (parse_strings(p, o, v, &out->paths))
			return PG_ECONFIG;
		if (out->paths.n == 0)
			return fail(p, o->name, "option '%s': the list of suite files is empty",
				    o->name);
		return 0;
	}
	return expected(p, o, "a path, a list of paths or a suite mapping", v);
}

/* Why text cannot name one artifact exactly, or NULL when it can: the agent
 * stores an upload's path as given and matches downloads as globs. */
static const char *artifact_path_problem(const char *text)
{
	size_t n = strlen(text);

	if (n < 8 || strcmp(text + n - 7, ".tar.gz"))
		return "is not a .tar.gz file (a perfgate bundle)";
	if (text[0] == '/')
		return "is absolute: write the artifact's path in the build, e.g. perfgate/perfgate.tar.gz";
	if (strpbrk(text, "*?[]{}\\"))
		return "has glob characters: it must name one artifact";
	for (const char *seg = text; seg;) {
		const char *end = strchr(seg, '/');
		size_t len = end ? (size_t)(end - seg) : strlen(seg);
		if (len == 0 || (len == 1 && seg[0] == '.') || (len == 2 && !strncmp(seg, "..", 2)))
			return "has an empty, '.' or '..' part: write the path as the artifact stores it";
		seg = end ? end + 1 : NULL;
	}
	return NULL;
}

static int parse_one(const struct parse *p, struct pg_plugin_config *c,
		     const struct pg_plugin_option *o, const json_t *v)
{
	switch (o->type) {
	case PG_POPT_STRING:
	case PG_POPT_REGEX:
	case PG_POPT_SHARD:
	case PG_POPT_ARTIFACT: {
		char **dst = AT(c, o, char *);
		if (!json_is_string(v))
			return expected(
				p, o, o->type == PG_POPT_SHARD ? "\"INDEX/COUNT\"" : "a string", v);
		if (o->type == PG_POPT_ARTIFACT) {
			const char *why = artifact_path_problem(json_string_value(v));
			if (why)
				return fail(p, o->name, "option '%s': '%s' %s", o->name,
					    json_string_value(v), why);
		}
		if (o->type == PG_POPT_SHARD) {
			size_t index, count;
			struct pg_error serr = PG_ERROR_INIT;
			if (pg_shard_parse(json_string_value(v), &index, &count, &serr))
				return fail(p, o->name, "option '%s': %s", o->name, serr.msg);
		}
		if (o->type == PG_POPT_REGEX) {
			regex_t re;
			int rc = regcomp(&re, json_string_value(v), REG_EXTENDED | REG_NOSUB);
			if (rc) {
				char msg[256];
				regerror(rc, &re, msg, sizeof(msg));
				return fail(p, o->name,
					    "option '%s': bad regular expression '%s': %s", o->name,
					    json_string_value(v), msg);
			}
			regfree(&re);
		}
		free(*dst);
		*dst = pg_xstrdup(json_string_value(v));
		return 0;
	}
	case PG_POPT_BOOL:
		if (!json_is_boolean(v))
			return expected(p, o, "true or false", v);
		*AT(c, o, bool) = json_is_true(v);
		return 0;
	case PG_POPT_INT: {
		char what[64];
		snprintf(what, sizeof(what), "an integer >= %ld", o->min);
		if (!json_is_integer(v) || json_integer_value(v) < o->min)
			return expected(p, o, what, v);
		*AT(c, o, long) = (long)json_integer_value(v);
		return 0;
	}
	case PG_POPT_ENUM:
		return parse_enum(p, o, v, AT(c, o, int));
	case PG_POPT_STRINGS:
		return parse_strings(p, o, v, AT(c, o, struct pg_strv));
	case PG_POPT_SUITES:
		return parse_suites(p, o, v, AT(c, o, struct pg_plugin_suites));
	case PG_POPT_OBJECT:
		if (!json_is_object(v))
			return expected(p, o, "a mapping", v);
		json_decref(*AT(c, o, json_t *));
		*AT(c, o, json_t *) = json_incref((json_t *)v);
		return 0;
	}
	return 0;
}

static const struct pg_plugin_option *find_option(const char *name)
{
	for (size_t i = 0; i < pg_plugin_n_options; i++)
		if (!strcmp(pg_plugin_options[i].name, name))
			return &pg_plugin_options[i];
	return NULL;
}

static int unknown_option(const struct parse *p, const char *name)
{
	const char *names[64];
	const char *near;
	size_t n = 0;

	for (size_t i = 0; i < pg_plugin_n_options && n < 64; i++)
		names[n++] = pg_plugin_options[i].name;
	near = pg_nearest(name, names, n);
	if (!near) {
		/* results_dir for results-dir: the Buildkite spelling is kebab-case */
		char kebab[128];
		snprintf(kebab, sizeof(kebab), "%s", name);
		for (char *k = kebab; *k; k++)
			if (*k == '_')
				*k = '-';
		if (find_option(kebab))
			near = find_option(kebab)->name;
	}
	if (near)
		return fail(p, name, "unknown option '%s' (did you mean '%s'?)", name, near);
	return fail(p, name, "unknown option '%s'", name);
}

int pg_plugin_config_parse_at(struct pg_plugin_config *out, const json_t *config,
			      const char *step_label, pg_plugin_locate locate, void *ctx,
			      struct pg_error *err)
{
	struct parse p = { step_label, locate, ctx, err };
	const char *key;
	json_t *v;

	pg_plugin_config_init(out);
	if (!config || json_is_null(config))
		goto check;
	if (!json_is_object(config)) {
		struct pg_buf d = PG_BUF_INIT;
		describe(&d, config);
		fail(&p, NULL, "expected a mapping of options, got %s", d.ptr);
		pg_buf_release(&d);
		return PG_ECONFIG;
	}
	json_object_foreach((json_t *)config, key, v)
	{
		const struct pg_plugin_option *o = find_option(key);
		if (!o)
			return unknown_option(&p, key);
		/* `key: ~` means "as if not given" rather than a type error */
		if (json_is_null(v))
			continue;
		if (parse_one(&p, out, o, v))
			return PG_ECONFIG;
	}
check:
	/* the GPU names a thresholds file and a history directory */
	if (out->gpu && strcmp(out->gpu, "auto") && !pg_gpu_name_ok(out->gpu))
		return fail(&p, "gpu", "option 'gpu': '%s': " PG_GPU_NAME_HINT, out->gpu);
	for (size_t i = 0; i < out->gpus.n; i++)
		if (!pg_gpu_name_ok(out->gpus.v[i]))
			return fail(&p, "gpus", "option 'gpus': '%s': " PG_GPU_NAME_HINT,
				    out->gpus.v[i]);
	if (out->mode != PG_MODE_REPORT && out->mode != PG_MODE_BINARY &&
	    out->suites.paths.n == 0 && !out->suites.inline_suite)
		return fail(&p, "suites", "option 'suites' is required (mode '%s' runs suites)",
			    mode_values[out->mode]);
	if (out->ab && out->baseline != PG_BASELINE_AB)
		return fail(&p, "ab", "option 'ab' applies with baseline: ab (got baseline: %s)",
			    baseline_values[out->baseline]);
	if (out->baseline == PG_BASELINE_AB &&
	    (out->mode == PG_MODE_REPORT || out->mode == PG_MODE_MERGE))
		return fail(&p, "baseline",
			    "option 'baseline': ab runs both sides itself: mode run, gate or "
			    "pipeline (got mode '%s')",
			    mode_values[out->mode]);
	if (out->baseline == PG_BASELINE_AB && out->shard)
		return fail(&p, "shard",
			    "option 'shard': an A/B step runs its blocks whole on one agent "
			    "(no shard with baseline: ab)");
	if (out->baseline == PG_BASELINE_AB && out->shards > 1)
		return fail(&p, "shards",
			    "option 'shards': an A/B step runs its blocks whole on one agent "
			    "(shards: 1 with baseline: ab)");
	if (out->mode == PG_MODE_BINARY && !out->binary_artifact)
		return fail(&p, "binary-artifact",
			    "option 'binary-artifact' is required (mode 'binary' uploads perfgate "
			    "there)");
	/* elsewhere the step downloads the artifact: a binary too would be
	 * two answers to where perfgate comes from */
	if (out->binary && out->binary_artifact && out->mode != PG_MODE_BINARY &&
	    out->mode != PG_MODE_PIPELINE)
		return fail(
			&p, "binary-artifact",
			"options 'binary' and 'binary-artifact' exclude each other in mode '%s' "
			"(both only where perfgate is uploaded: modes binary and pipeline)",
			mode_values[out->mode]);
	/* where the bundle is downloaded, the step that uploaded it: any other
	 * step of the build (a pull request's own command) can upload the
	 * same path */
	if (out->binary_step && !out->binary_artifact)
		return fail(&p, "binary-step", "option 'binary-step' applies with binary-artifact");
	if (out->binary_step && (out->mode == PG_MODE_BINARY || out->mode == PG_MODE_PIPELINE))
		return fail(&p, "binary-step",
			    "option 'binary-step' applies where binary-artifact is downloaded, not "
			    "in mode '%s', which uploads it",
			    mode_values[out->mode]);
	if (out->binary_artifact && !out->binary_step && out->mode != PG_MODE_BINARY &&
	    out->mode != PG_MODE_PIPELINE)
		return fail(&p, "binary-step",
			    "option 'binary-step' is required with binary-artifact: the key of the "
			    "step that uploads the bundle, the only step it is taken from");
	return 0;
}

int pg_plugin_config_parse(struct pg_plugin_config *out, const json_t *config,
			   const char *step_label, struct pg_error *err)
{
	return pg_plugin_config_parse_at(out, config, step_label, NULL, NULL, err);
}

static json_t *option_schema(const struct pg_plugin_option *o)
{
	json_t *s = json_object();
	json_t *def = NULL;

	switch (o->type) {
	case PG_POPT_STRING:
	case PG_POPT_REGEX:
	case PG_POPT_SHARD:
	case PG_POPT_ARTIFACT:
		json_object_set_new(s, "type", json_string("string"));
		if (o->type == PG_POPT_SHARD)
			json_object_set_new(s, "pattern", json_string(PG_SHARD_PATTERN));
		if (o->type == PG_POPT_ARTIFACT)
			json_object_set_new(s, "pattern", json_string(PG_ARTIFACT_PATTERN));
		if (o->default_value)
			def = json_string(o->default_value);
		break;
	case PG_POPT_BOOL:
		json_object_set_new(s, "type", json_string("boolean"));
		def = json_boolean(o->default_value && !strcmp(o->default_value, "true"));
		break;
	case PG_POPT_INT:
		json_object_set_new(s, "type", json_string("integer"));
		json_object_set_new(s, "minimum", json_integer(o->min));
		if (o->default_value) {
			long d;
			if (pg_parse_long(o->default_value, &d) == 0)
				def = json_integer(d);
		}
		break;
	case PG_POPT_ENUM: {
		json_t *e = json_array();
		json_object_set_new(s, "type", json_string("string"));
		for (int i = 0; o->values[i]; i++)
			json_array_append_new(e, json_string(o->values[i]));
		json_object_set_new(s, "enum", e);
		if (o->default_value)
			def = json_string(o->default_value);
		break;
	}
	case PG_POPT_STRINGS:
		json_object_set_new(s, "type", json_pack("[ss]", "string", "array"));
		json_object_set_new(s, "items", json_pack("{ss}", "type", "string"));
		break;
	case PG_POPT_SUITES:
		json_object_set_new(s, "type", json_pack("[sss]", "string", "array", "object"));
		json_object_set_new(s, "items", json_pack("{ss}", "type", "string"));
		break;
	case PG_POPT_OBJECT:
		json_object_set_new(s, "type", json_string("object"));
		break;
	}
	if (def)
		json_object_set_new(s, "default", def);
	json_object_set_new(s, "description", json_string(o->description));
	return s;
}

json_t *pg_plugin_config_schema(void)
{
	json_t *props = json_object();

	for (size_t i = 0; i < pg_plugin_n_options; i++)
		json_object_set_new(props, pg_plugin_options[i].name,
				    option_schema(&pg_plugin_options[i]));
	/* what pg_plugin_config_parse_at requires, as the plugin linter and the
	 * agent (when it validates) can check it: no option always, suites
	 * unless mode report or binary, binary-artifact in mode binary,
	 * binary-step with binary-artifact where it is downloaded */
	return json_pack("{s:o, s:[], s:[{s:{s:{s:{s:[ss]}}, s:[s]}, s:{s:[s]}}, "
			 "{s:{s:{s:{s:s}}, s:[s]}, s:{s:[s]}}, "
			 "{s:{s:[s], s:{s:{s:{s:[ss]}}}}, s:{s:[s]}}], s:b}",
			 "properties", props, "required", "allOf", "if", "properties", "mode",
			 "enum", "report", "binary", "required", "mode", "else", "required",
			 "suites", "if", "properties", "mode", "const", "binary", "required",
			 "mode", "then", "required", "binary-artifact", "if", "required",
			 "binary-artifact", "properties", "mode", "not", "enum", "binary",
			 "pipeline", "then", "required", "binary-step", "additionalProperties", 0);
}
