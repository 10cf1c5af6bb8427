/* The timeline chart of one point (telemetry/series.h). */
#include "telemetry/series.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "report/svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* About this many labelled ticks on the time axis. */
#define TIME_TICKS 8

/* Per tick, the rate of a cumulative value (NAN where unknown or at a
 * reset). */
static void rate(double *out, const struct pg_series *s, const double *cum)
{
	double prev_v = NAN, prev_t = NAN;

	for (size_t i = 0; i < s->n_ticks; i++) {
		double dt = s->ticks[i].t - prev_t;
		out[i] = NAN;
		if (isfinite(cum[i]) && isfinite(prev_v) && dt > 1e-3 && cum[i] >= prev_v)
			out[i] = (cum[i] - prev_v) / dt;
		if (isfinite(cum[i])) {
			prev_v = cum[i];
			prev_t = s->ticks[i].t;
		}
	}
}

static bool any_finite(const double *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i]))
			return true;
	return false;
}

void pg_telemetry_timeline(struct pg_buf *out, const struct pg_series *s, const char *title)
{
	size_t n = s->n_ticks, np = 0;
	char **labels = pg_xcalloc(n + 1, sizeof(*labels));
	double *cum = pg_xcalloc(n + 1, sizeof(double));
	double *tput = pg_xcalloc(n + 1, sizeof(double));
	double *running = pg_xcalloc(n + 1, sizeof(double));
	double *waiting = pg_xcalloc(n + 1, sizeof(double));
	double *kv = pg_xcalloc(n + 1, sizeof(double));
	double *sm = pg_xcalloc(n + 1, sizeof(double));
	double *sm_max = pg_xcalloc(n + 1, sizeof(double));
	struct pg_panel panels[5];
	struct pg_figure fig = { 0 };
	char sm_title[64] = "SM clock";
	bool engine_tput = false;
	int gpu = -1;
	double span = n ? s->ticks[n - 1].t : 0, step;

	if (n < 2)
		goto done;
	/* time labels at round seconds, TIME_TICKS of them at most */
	pg_nice_axis(span > 0 ? span : 1, TIME_TICKS, &step);
	{
		double next = 0;
		for (size_t i = 0; i < n; i++) {
			char b[32] = "";
			if (s->ticks[i].t >= next - 1e-9 && s->ticks[i].t >= 0) {
				snprintf(b, sizeof(b), "%g", round(s->ticks[i].t / step) * step);
				while (next <= s->ticks[i].t + 1e-9)
					next += step;
			}
			labels[i] = pg_xstrdup(b);
		}
	}

	for (size_t i = 0; i < n; i++) {
		const struct pg_tick *t = &s->ticks[i];
		cum[i] = t->engine_ok ? t->eng.v[PG_ESIG_GENERATION_TOKENS] : NAN;
		running[i] = t->engine_ok ? t->eng.v[PG_ESIG_RUNNING] : NAN;
		waiting[i] = t->engine_ok ? t->eng.v[PG_ESIG_WAITING] : NAN;
		kv[i] = t->engine_ok && isfinite(t->eng.v[PG_ESIG_KV_USAGE])
				? 100 * t->eng.v[PG_ESIG_KV_USAGE]
				: NAN;
		sm[i] = sm_max[i] = NAN;
		/* the first GPU sampled stands for the rest: one line per GPU
		 * would hide the one that matters; the summary names it */
		for (size_t j = 0; j < t->n_gpu; j++) {
			const struct pg_gpu_sample *g = &s->gpus[t->gpu0 + j];
			if (gpu < 0)
				gpu = g->index;
			if (g->index == gpu) {
				sm[i] = g->sm_mhz;
				sm_max[i] = g->sm_max_mhz;
			}
		}
	}
	rate(tput, s, cum);
	engine_tput = any_finite(tput, n);
	if (!engine_tput) {
		for (size_t i = 0; i < n; i++)
			cum[i] = s->ticks[i].client_tokens;
		rate(tput, s, cum);
	}
	memset(panels, 0, sizeof(panels));
	if (any_finite(tput, n))
		panels[np++] = (struct pg_panel){
			.kind = PG_PANEL_LINES,
			.title = engine_tput ? "Throughput (engine)" : "Throughput (client)",
			.unit = "tok/s",
			.x_title = "seconds",
			.labels = (const char *const *)labels,
			.n = n,
			.current = tput,
			.timeline = true,
		};
	if (any_finite(running, n))
		panels[np++] = (struct pg_panel){
			.kind = PG_PANEL_LINES,
			.title = "Requests running (solid) and waiting (dashed)",
			.unit = "",
			.x_title = "seconds",
			.labels = (const char *const *)labels,
			.n = n,
			.current = running,
			.baseline = any_finite(waiting, n) ? waiting : NULL,
			.timeline = true,
		};
	if (any_finite(kv, n))
		panels[np++] = (struct pg_panel){
			.kind = PG_PANEL_LINES,
			.title = "KV-cache usage",
			.unit = "%",
			.x_title = "seconds",
			.labels = (const char *const *)labels,
			.n = n,
			.current = kv,
			.timeline = true,
		};
	if (any_finite(sm, n)) {
		snprintf(sm_title, sizeof(sm_title), "GPU %d SM clock (dashed: its maximum)", gpu);
		panels[np++] = (struct pg_panel){
			.kind = PG_PANEL_LINES,
			.title = sm_title,
			.unit = "MHz",
			.x_title = "seconds",
			.labels = (const char *const *)labels,
			.n = n,
			.current = sm,
			.baseline = any_finite(sm_max, n) ? sm_max : NULL,
			.timeline = true,
		};
	}
	if (!np)
		goto done;
	fig.title = title;
	fig.subtitle = s->engine ? s->engine : NULL;
	fig.current_name = "measured";
	fig.baseline_name = "second series (see title)";
	fig.panels = panels;
	fig.n_panels = np;
	fig.columns = 2;
	pg_svg_figure(out, &fig);
done:
	for (size_t i = 0; i < n; i++)
		free(labels[i]);
	free(labels);
	free(cum);
	free(tput);
	free(running);
	free(waiting);
	free(kv);
	free(sm);
	free(sm_max);
}
