#include "loadgen/dataset_files.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/strutil.h"

#include <stdlib.h>
#include <string.h>

/*
 * The files vLLM's performance CI downloads. ShareGPT: the driver's URL;
 * its SHA-256 and size as the Hugging Face repository's LFS pointer gives
 * them (revision 192ab2185289094fc556ec8ce5ce1e8e587154ca, the file
 * unchanged since 2023), pinned by projects that reproduce vLLM's numbers.
 */
static const struct pg_known_dataset known[] = {
	{ "ShareGPT_V3_unfiltered_cleaned_split.json",
	  "datasets/anon8231489123/ShareGPT_Vicuna_unfiltered/resolve/main/"
	  "ShareGPT_V3_unfiltered_cleaned_split.json",
	  "35f0e213ce091ed9b9af2a1f0755e9d39f9ccec34ab281cd4ca60d70f6479ba4", 672837942 },
};

const struct pg_known_dataset *pg_known_dataset_find(const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;

	base = base ? base + 1 : path;
	for (size_t i = 0; base && i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(base, known[i].name))
			return &known[i];
	return NULL;
}

static bool reads_a_file(const struct pg_test *t)
{
	return t->dataset.path && t->dataset.kind != PG_DATASET_RANDOM &&
	       t->kind != PG_SUITE_LATENCY && t->kind != PG_SUITE_STARTUP;
}

void pg_dataset_files_of(struct pg_dataset_files *out, const struct pg_plan *plan,
			 const char *hf_endpoint)
{
	const char *endpoint = hf_endpoint && *hf_endpoint ? hf_endpoint : PG_HF_ENDPOINT;
	size_t elen = strlen(endpoint);

	memset(out, 0, sizeof(*out));
	while (elen && endpoint[elen - 1] == '/')
		elen--;
	for (size_t i = 0; i < plan->n; i++) {
		const struct pg_test *t = plan->points[i].test;
		const struct pg_known_dataset *k;
		struct pg_dataset_file f;
		bool seen = false;

		if (!reads_a_file(t))
			continue;
		for (size_t j = 0; j < out->n && !seen; j++)
			seen = !strcmp(out->v[j].path, t->dataset.path);
		if (seen)
			continue;
		k = pg_known_dataset_find(t->dataset.path);
		memset(&f, 0, sizeof(f));
		f.path = t->dataset.path;
		f.test = t;
		f.size = k ? k->size : -1;
		if (t->dataset.url) {
			f.url = pg_xstrdup(t->dataset.url);
		} else if (k) {
			struct pg_buf url = PG_BUF_INIT;
			pg_buf_printf(&url, "%.*s/%s", (int)elen, endpoint, k->hf_path);
			f.url = pg_buf_detach(&url);
		}
		f.sha256_declared = t->dataset.sha256 != NULL;
		f.sha256 = t->dataset.sha256 ? t->dataset.sha256 : k ? k->sha256 : NULL;
		PG_ARRAY_PUSH(out->v, out->n, out->cap, f);
	}
}

void pg_dataset_files_release(struct pg_dataset_files *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->v[i].url);
	free(f->v);
	memset(f, 0, sizeof(*f));
}

void pg_dataset_file_where(struct pg_buf *out, const struct pg_dataset_file *f)
{
	if (f->test->loc.file && f->test->loc.line)
		pg_buf_printf(out, "%s:%d: ", f->test->loc.file, f->test->loc.line);
	else if (f->test->loc.file)
		pg_buf_printf(out, "%s: ", f->test->loc.file);
	pg_buf_printf(out, "test '%s'", f->test->name);
}
