/*
 * perfgate buildkite: what a step needs before it runs anything, checked
 * before the GPU time (docs/pipelines.md, "Setup errors"). A step that
 * cannot be decided fails now, rather than run the whole suite and then
 * pass yellow with "no baseline comparison".
 */
#include "buildkite/step_io.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "baseline/history_io.h"
#include "baseline/thresholds_io.h"
#include "sys/gitinfo.h"
#include "gate/gate_io.h"
#include "gpu/gpu.h"
#include "loadgen/dataset_files_io.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool gating(const struct pg_plugin_config *c)
{
	return c->mode == PG_MODE_GATE || c->mode == PG_MODE_MERGE;
}

/* Does the step's thresholds file for gpu exist: in the checkout, or, on a
 * pull request gated by its base branch's copy, at the base? */
static bool thresholds_exist(const char *path, const struct pg_bk_pr *pr)
{
	struct pg_buf ignored = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;
	bool outside = false, at_base;

	if (access(path, F_OK) == 0)
		return true;
	if (!pr || !pr->is_pr || !pr->rev[0])
		return false;
	at_base = pg_git_read_at(&ignored, &outside, NULL, pr->rev, path, &err) == 0;
	pg_buf_release(&ignored);
	return at_base;
}

/* gpu's thresholds file, which a gate with a thresholds baseline compares
 * with: there, and loading (a file for another GPU or with a mistake in it
 * would only be found after the run). */
static int check_thresholds(const struct pg_bk_check *in, const char *gpu, struct pg_error *err)
{
	const struct pg_plugin_config *c = in->c;
	char *path = pg_thresholds_path(c->thresholds, gpu);
	struct pg_policy policy = { 0 };
	struct pg_baseline base = PG_BASELINE_INIT;
	struct pg_buf hint = PG_BUF_INIT;
	int rc = 0;

	if (c->baseline == PG_BASELINE_THRESHOLDS && !thresholds_exist(path, in->pr)) {
		pg_thresholds_gpu_hint(&hint, c->thresholds, gpu);
		rc = pg_error_set(
			err, PG_ECONFIG,
			"step '%s': gpu '%s': no thresholds file %s%s: a gate compares with the "
			"GPU's baselines. Fix gpu, or make the file from a first run (mode: run, "
			"then perfgate baseline update %s --gpu %s --from <results-dir>), or use "
			"baseline: git",
			in->step, gpu, path, hint.ptr ? hint.ptr : "", c->thresholds, gpu);
		goto done;
	}
	if (access(path, F_OK) != 0)
		goto done; /* the base's (a pull request), or the defaults (git) */
	/* the checkout's copy: a pull request's mistake in it would break the
	 * base branch once merged */
	rc = pg_gate_load(&policy, &base,
			  &(struct pg_gate_source){ .thresholds = c->thresholds, .gpu = gpu }, err);
	if (rc)
		pg_error_prefix(err, "step '%s'", in->step);
done:
	pg_policy_release(&policy);
	pg_baseline_release(&base);
	pg_buf_release(&hint);
	free(path);
	return rc;
}

/* baseline: git on a pull request: the history must hold runs of gpu, or
 * there is nothing to compare with and every row would only say "no runs
 * in the history". */
static int check_history(const struct pg_bk_check *in, const char *gpu, struct pg_error *err)
{
	const struct pg_plugin_config *c = in->c;
	struct pg_strv gpus = PG_STRV_INIT;
	struct pg_buf have = PG_BUF_INIT;
	int rc;

	rc = pg_history_gpus(&gpus, &(struct pg_history_opts){ .repo = c->history_repo }, err);
	if (rc) {
		pg_error_prefix(err, "step '%s': baseline: git", in->step);
		goto done;
	}
	for (size_t i = 0; i < gpus.n; i++)
		if (!strcmp(gpus.v[i], gpu))
			goto done;
	if (gpus.n) {
		pg_buf_puts(&have, "it has runs of ");
		for (size_t i = 0; i < gpus.n; i++)
			pg_buf_printf(&have, "%s%s", i ? ", " : "", gpus.v[i]);
	} else {
		pg_buf_puts(&have, PG_HISTORY_DEFAULT_REF " is missing or empty");
	}
	/* a pull request without history-repo stopped before this
	 * (pg_bk_pr_check): the history is the repository's */
	rc = pg_error_set(err, PG_EINFRA,
			  "step '%s': baseline: git: history-repo has no runs of %s (%s): nothing "
			  "to compare this pull request with. Record them on the default branch, "
			  "into the same history-repo (a step with record-history: true)",
			  in->step, gpu, have.ptr);
done:
	pg_strv_release(&gpus);
	pg_buf_release(&have);
	return rc;
}

int pg_bk_check(const struct pg_bk_check *in, struct pg_strv *warnings, struct pg_error *err)
{
	const struct pg_plugin_config *c = in->c;
	const char *gpu = in->gpu_key;
	int rc;

	/* a dataset the step will fetch is no error yet */
	struct pg_dataset_check_opts datasets = { .fetch_later = c->fetch_datasets };
	if (in->plan && (rc = pg_dataset_files_check(in->plan, &datasets, err))) {
		pg_error_prefix(err, "step '%s'", in->step);
		return rc;
	}
	/* the steps a pipeline step generates gate on each of its GPUs: a
	 * misspelt one fails here, not on its agents */
	if (c->mode == PG_MODE_PIPELINE && c->baseline == PG_BASELINE_THRESHOLDS) {
		struct pg_plugin_config gate = *c;
		struct pg_bk_check each = *in;
		gate.mode = PG_MODE_GATE;
		each.c = &gate;
		for (size_t i = 0; i < c->gpus.n; i++) {
			char key[PG_GPU_KEY_MAX + 1];
			if ((rc = check_thresholds(
				     &each, pg_gpu_key(key, sizeof(key), c->gpus.v[i]), err)))
				return rc;
		}
	}
	if (!gpu)
		return 0; /* gpu: auto, before it is detected */
	if (gating(c) && c->baseline != PG_BASELINE_AB && !strcmp(gpu, "none"))
		return pg_error_set(err, PG_ECONFIG,
				    "step '%s': no GPU detected (%s) and none configured: a gate "
				    "compares with a GPU's baselines; set the gpu option",
				    in->step,
				    in->gpu_note && *in->gpu_note ? in->gpu_note : "none");
	if (!strcmp(gpu, "none"))
		return 0;
	if (gating(c) && c->baseline != PG_BASELINE_AB && (rc = check_thresholds(in, gpu, err)))
		return rc;
	if (gating(c) && c->baseline == PG_BASELINE_GIT && in->env && pg_bkenv_is_pr(in->env) &&
	    (rc = check_history(in, gpu, err)))
		return rc;
	if (!gating(c) && warnings) {
		/* a step that does not gate runs without a baseline, but a
		 * misspelt GPU still labels every result */
		struct pg_buf w = PG_BUF_INIT;
		pg_buf_printf(&w, "gpu '%s': ", gpu);
		if (pg_thresholds_gpu_unknown(&w, c->thresholds, gpu))
			pg_strv_push_owned(warnings, pg_buf_detach(&w));
		pg_buf_release(&w);
	}
	return 0;
}
