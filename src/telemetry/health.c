#include "telemetry/health.h"

#include "base/buf.h"
#include "telemetry/gpustat.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

void pg_health_policy_default(struct pg_health_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->on_suspect = PG_ON_SUSPECT_RERUN;
	p->throttle_seconds = 5;
	p->throttle_reasons = PG_THROTTLE_HW_SLOWDOWN | PG_THROTTLE_SW_THERMAL |
			      PG_THROTTLE_HW_THERMAL | PG_THROTTLE_HW_POWER_BRAKE;
	p->min_clock_ratio = 0.8;
	p->errors = true;
	p->foreign_process = true;
	p->foreign_min_mib = 0;
}

const char *pg_on_suspect_name(enum pg_on_suspect o)
{
	switch (o) {
	case PG_ON_SUSPECT_FAIL:
		return "fail";
	case PG_ON_SUSPECT_IGNORE:
		return "ignore";
	case PG_ON_SUSPECT_RERUN:
		break;
	}
	return "rerun";
}

static double jnum(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

__attribute__((format(printf, 2, 3))) static void add(struct pg_strv *why, const char *fmt, ...)
{
	struct pg_buf b = PG_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	pg_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	pg_strv_push_owned(why, pg_buf_detach(&b));
}

bool pg_health_point(const struct pg_health_policy *p, const json_t *telemetry, struct pg_strv *why)
{
	const json_t *devs = json_object_get(json_object_get(telemetry, "gpu"), "devices");
	size_t before = why->n, i;
	const json_t *d;

	json_array_foreach(devs, i, d)
	{
		long index = (long)json_integer_value(json_object_get(d, "index"));
		const json_t *thr = json_object_get(d, "throttle_seconds");
		double ratio = jnum(d, "sm_clock_ratio");
		double thermal = 0;

		/* thermal: the two reasons are one finding */
		for (int b = 0; b < PG_THROTTLE_N_REASONS; b++) {
			uint64_t bit = 1ULL << b;
			double sec = jnum(thr, pg_throttle_name(b));
			if (!(p->throttle_reasons & bit) || !(sec >= p->throttle_seconds))
				continue;
			if (bit == PG_THROTTLE_SW_THERMAL || bit == PG_THROTTLE_HW_THERMAL) {
				if (sec > thermal)
					thermal = sec;
				continue;
			}
			add(why, "GPU %ld %s for %.0f s", index, pg_throttle_words(b), sec);
		}
		if (thermal > 0)
			add(why, "GPU %ld thermal throttling for %.0f s", index, thermal);
		if (p->min_clock_ratio > 0 && ratio < p->min_clock_ratio)
			add(why,
			    "GPU %ld SM clock at %.0f%% of its maximum under load (policy: %.0f%%)",
			    index, 100 * ratio, 100 * p->min_clock_ratio);
		if (p->errors) {
			double ecc = jnum(d, "ecc_uncorrected_new");
			const json_t *xid = json_object_get(d, "xid");
			size_t j;
			const json_t *x;
			if (ecc > 0)
				add(why, "GPU %ld: %.0f new uncorrected ECC error%s", index, ecc,
				    ecc == 1 ? "" : "s");
			json_array_foreach(xid, j, x)
			{
				add(why, "GPU %ld: Xid %lld", index,
				    (long long)json_integer_value(x));
			}
		}
		if (p->foreign_process) {
			const json_t *procs = json_object_get(d, "foreign_processes");
			size_t j;
			const json_t *pr;
			json_array_foreach(procs, j, pr)
			{
				double mib = jnum(pr, "memory_mib");
				const char *name = json_string_value(json_object_get(pr, "name"));
				if (p->foreign_min_mib > 0 && !(mib >= p->foreign_min_mib))
					continue;
				add(why, "GPU %ld shared with pid %lld (%s)", index,
				    (long long)json_integer_value(json_object_get(pr, "pid")),
				    name && *name ? name : "?");
			}
		}
	}
	return why->n > before;
}

void pg_job_health_judge(struct pg_job_health *out, const struct pg_health_policy *p,
			 const json_t *const *results, const char *const *names, size_t n)
{
	memset(out, 0, sizeof(*out));
	if (p->on_suspect == PG_ON_SUSPECT_IGNORE)
		return;
	for (size_t i = 0; i < n; i++) {
		const json_t *tel = json_object_get(json_object_get(results[i], "perfgate"),
						    "telemetry");
		struct pg_strv why = PG_STRV_INIT;
		if (!json_is_object(tel))
			continue;
		out->judged++;
		if (pg_health_point(p, tel, &why)) {
			out->suspect = true;
			pg_strv_push(&out->points, names[i]);
			for (size_t k = 0; k < why.n; k++) {
				struct pg_buf b = PG_BUF_INIT;
				pg_buf_printf(&b, "%s: %s", names[i], why.v[k]);
				pg_strv_push_owned(&out->reasons, pg_buf_detach(&b));
			}
		}
		pg_strv_release(&why);
	}
}

void pg_job_health_release(struct pg_job_health *h)
{
	pg_strv_release(&h->points);
	pg_strv_release(&h->reasons);
	memset(h, 0, sizeof(*h));
}

void pg_job_health_line(struct pg_buf *out, const struct pg_job_health *h, size_t max_reasons)
{
	size_t shown = h->reasons.n < max_reasons ? h->reasons.n : max_reasons;

	for (size_t i = 0; i < shown; i++)
		pg_buf_printf(out, "%s%s", i ? "; " : "", h->reasons.v[i]);
	if (h->reasons.n > shown)
		pg_buf_printf(out, "; and %zu more", h->reasons.n - shown);
}

json_t *pg_job_health_json(const struct pg_job_health *h, const struct pg_health_policy *p)
{
	json_t *o = json_object(), *pts = json_array(), *rs = json_array();

	json_object_set_new(o, "status",
			    json_string(h->suspect  ? "suspect"
					: h->judged ? "healthy"
						    : "unknown"));
	json_object_set_new(o, "on_suspect", json_string(pg_on_suspect_name(p->on_suspect)));
	for (size_t i = 0; i < h->points.n; i++)
		json_array_append_new(pts, json_string(h->points.v[i]));
	for (size_t i = 0; i < h->reasons.n; i++)
		json_array_append_new(rs, json_string(h->reasons.v[i]));
	json_object_set_new(o, "points", pts);
	json_object_set_new(o, "reasons", rs);
	return o;
}
