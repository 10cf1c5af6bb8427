#include "gpu/detect_io.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"
#include "gpu/gpu.h"
#include "gpu/gputool_io.h"
#include "base/strutil.h"
#include "sys/proc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void pg_gpu_info_init(struct pg_gpu_info *g)
{
	memset(g, 0, sizeof(*g));
	snprintf(g->key, sizeof(g->key), "none");
	snprintf(g->label, sizeof(g->label), "none");
	g->gpu_type = pg_xstrdup("");
	g->memory_mib = NAN;
	g->source = "none";
	g->detected = -1;
}

void pg_gpu_info_release(struct pg_gpu_info *g)
{
	free(g->name);
	free(g->gpu_type);
	memset(g, 0, sizeof(*g));
}

/* Run nvidia-smi with one query; 0 with its stdout, or a note why not. */
static int smi(const char *query, const char *format, const volatile sig_atomic_t *stop,
	       struct pg_buf *out, char *note, size_t note_size)
{
	struct pg_buf q = PG_BUF_INIT, f = PG_BUF_INIT;
	int ret;

	pg_buf_printf(&q, "--query-gpu=%s", query);
	pg_buf_printf(&f, "--format=%s", format);
	char *argv[] = { "nvidia-smi", q.ptr, f.ptr, NULL };
	ret = pg_gpu_tool_run(argv, stop, out, note, note_size) ? PG_EINFRA : 0;
	pg_buf_release(&q);
	pg_buf_release(&f);
	return ret;
}

int pg_gpu_detect(struct pg_gpu_info *out, struct pg_error *err)
{
	struct pg_buf csv = PG_BUF_INIT, types = PG_BUF_INIT;
	struct pg_strv names = PG_STRV_INIT;
	double *mib = NULL;
	int n, ret = 0;

	pg_gpu_info_release(out);
	pg_gpu_info_init(out);
	if (smi("name,memory.total", "csv,noheader", NULL, &csv, out->note, sizeof(out->note)))
		goto done;
	n = pg_gpu_parse_query(&names, &mib, csv.ptr);
	if (n < 0) {
		ret = pg_error_set(err, PG_ERR, "nvidia-smi: cannot parse its output: %.200s",
				   csv.ptr);
		goto done;
	}
	out->detected = n;
	if (n == 0) {
		snprintf(out->note, sizeof(out->note), "nvidia-smi lists no GPU");
		goto done;
	}
	for (int i = 0; i < n; i++) {
		char s[128];
		pg_buf_printf(&types, "%s%s", i ? "\n" : "",
			      pg_gpu_short(s, sizeof(s), names.v[i]));
	}
	out->count = n;
	out->name = pg_xstrdup(names.v[0]);
	free(out->gpu_type);
	out->gpu_type = pg_buf_detach(&types);
	pg_gpu_key(out->key, sizeof(out->key), out->name);
	pg_gpu_label(out->label, sizeof(out->label), out->gpu_type);
	out->memory_mib = mib[0];
	out->source = "nvidia-smi";
done:
	free(mib);
	pg_strv_release(&names);
	pg_buf_release(&csv);
	pg_buf_release(&types);
	return ret;
}

void pg_gpu_force(struct pg_gpu_info *g, const char *raw, const char *source)
{
	const char *rest = raw;
	struct pg_buf types = PG_BUF_INIT;
	char s[128];
	int count = pg_gpu_count(raw);

	/* "8xH100" -> "H100"; "4xNVIDIA_L40S" -> "L40S"; "NVIDIA H100 80GB" -> "H100" */
	while (*rest >= '0' && *rest <= '9')
		rest++;
	rest = (rest != raw && *rest == 'x' && rest[1]) ? rest + 1 : raw;
	if (pg_str_has_prefix(rest, "NVIDIA_"))
		rest += strlen("NVIDIA_");
	pg_gpu_short(s, sizeof(s), rest);
	for (int i = 0; i < count; i++)
		pg_buf_printf(&types, "%s%s", i ? "\n" : "", s);

	free(g->name);
	free(g->gpu_type);
	g->name = pg_xstrdup(raw);
	g->gpu_type = pg_buf_detach(&types);
	g->count = count;
	g->memory_mib = NAN;
	g->source = source;
	g->note[0] = '\0';
	pg_gpu_key(g->key, sizeof(g->key), raw);
	pg_gpu_label(g->label, sizeof(g->label), raw);
}

int pg_gpu_resolve(struct pg_gpu_info *out, const char *flag, const char *suite_gpu,
		   struct pg_error *err)
{
	const char *env = getenv("PERFGATE_GPU");
	int ret = pg_gpu_detect(out, err);

	if (ret)
		return ret;
	if ((flag && *flag && !pg_gpu_name_ok(flag)) ||
	    (!(flag && *flag) && env && *env && !pg_gpu_name_ok(env)))
		return pg_error_set(err, PG_ECONFIG, "%s '%s': " PG_GPU_NAME_HINT,
				    flag && *flag ? "--gpu" : "PERFGATE_GPU",
				    flag && *flag ? flag : env);
	if (flag && *flag)
		pg_gpu_force(out, flag, "flag");
	else if (env && *env)
		pg_gpu_force(out, env, "env");
	else if (suite_gpu && *suite_gpu)
		pg_gpu_force(out, suite_gpu, "suite");
	return 0;
}

json_t *pg_gpu_info_json(const struct pg_gpu_info *g)
{
	json_t *o = json_object();

	json_object_set_new(o, "key", json_string(g->key));
	json_object_set_new(o, "name", g->name ? json_string(g->name) : json_null());
	json_object_set_new(o, "count", json_integer(g->count));
	json_object_set_new(o, "label", json_string(g->label));
	json_object_set_new(o, "source", json_string(g->source));
	if (!isnan(g->memory_mib))
		json_object_set_new(o, "memory_mib", json_real(g->memory_mib));
	return o;
}

int pg_gpu_wait_idle(double threshold_mib, double timeout, const volatile sig_atomic_t *stop,
		     double *waited, struct pg_error *err)
{
	double start = pg_monotonic();
	struct pg_buf busy = PG_BUF_INIT;
	int ret = 0;

	if (waited)
		*waited = 0;
	for (;;) {
		struct pg_buf csv = PG_BUF_INIT;
		char note[256] = "";
		double *used = NULL;
		int n = -1;

		if (smi("memory.used", "csv,noheader,nounits", stop, &csv, note, sizeof(note)) == 0)
			n = pg_gpu_parse_numbers(&used, csv.ptr);
		pg_buf_release(&csv);
		if (stop && *stop) {
			free(used);
			ret = pg_error_set(err, PG_ECANCEL,
					   "cancelled while waiting for GPU memory");
			break;
		}
		if (n < 0) {
			free(used);
			/* nothing to wait on: no nvidia-smi, or it cannot tell */
			break;
		}
		pg_buf_reset(&busy);
		for (int i = 0; i < n; i++)
			if (used[i] >= threshold_mib)
				pg_buf_printf(&busy, "%sGPU %d uses %g MiB", busy.len ? ", " : "",
					      i, used[i]);
		free(used);
		if (waited)
			*waited = pg_monotonic() - start;
		if (!busy.len)
			break;
		if (pg_monotonic() - start >= timeout) {
			ret = pg_error_set(
				err, PG_EINFRA,
				"GPU memory still in use after %gs (threshold %g MiB): %s", timeout,
				threshold_mib, busy.ptr);
			break;
		}
		for (int i = 0; i < 20 && !(stop && *stop); i++) {
			struct timespec ts = { 0, 50 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
		if (stop && *stop) {
			ret = pg_error_set(err, PG_ECANCEL,
					   "cancelled while waiting for GPU memory");
			break;
		}
	}
	pg_buf_release(&busy);
	return ret;
}
