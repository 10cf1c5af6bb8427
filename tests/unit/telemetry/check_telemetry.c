/* Telemetry's pure parts: engine signals from /metrics, the GPU tools'
 * output, the point's summary and flags, the sidecar, the job health
 * policy, and the mock server's /metrics read back by the parser. */
#include "testutil.h"

#include "base/buf.h"
#include "base/error.h"
#include "mockserver/engine_model.h"
#include "mockserver/metrics.h"
#include "results/energy.h"
#include "telemetry/engine.h"
#include "telemetry/gpustat.h"
#include "telemetry/health.h"
#include "telemetry/prom.h"
#include "telemetry/series.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *engine_of(const char *text, struct pg_engine_state *st)
{
	struct pg_prom p = PG_PROM_INIT;
	struct pg_error err = PG_ERROR_INIT;
	const char *e;

	ck_assert_msg(pg_prom_parse(&p, text, strlen(text), &err) == 0, "%s", err.msg);
	e = pg_engine_state_read(st, &p);
	pg_prom_release(&p);
	return e;
}

START_TEST(engine_names_per_engine)
{
	struct pg_engine_state st;
	/* vLLM V1, two data-parallel engines: gauges and counters add up,
	 * KV usage is the fuller engine's */
	static const char vllm[] =
		"# TYPE vllm:num_requests_running gauge\n"
		"vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 3.0\n"
		"vllm:num_requests_running{engine=\"1\",model_name=\"m\"} 4.0\n"
		"# TYPE vllm:num_requests_waiting gauge\n"
		"vllm:num_requests_waiting{engine=\"0\",model_name=\"m\"} 1.0\n"
		"# TYPE vllm:kv_cache_usage_perc gauge\n"
		"vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\"} 0.25\n"
		"vllm:kv_cache_usage_perc{engine=\"1\",model_name=\"m\"} 0.75\n"
		"# TYPE vllm:num_preemptions counter\n"
		"vllm:num_preemptions_total{engine=\"0\",model_name=\"m\"} 5.0\n"
		"# TYPE vllm:spec_decode_num_draft_tokens counter\n"
		"vllm:spec_decode_num_draft_tokens_total{engine=\"0\",model_name=\"m\"} 100.0\n"
		"# TYPE vllm:spec_decode_num_accepted_tokens counter\n"
		"vllm:spec_decode_num_accepted_tokens_total{engine=\"0\",model_name=\"m\"} 70.0\n";
	/* vLLM before 0.10: gpu_cache_usage_perc */
	static const char vllm_v0[] = "vllm:num_requests_running{model_name=\"m\"} 2\n"
				      "vllm:gpu_cache_usage_perc{model_name=\"m\"} 0.5\n"
				      "vllm:gpu_prefix_cache_hit_rate{model_name=\"m\"} 0.3\n";
	static const char sglang[] = "sglang:num_running_reqs{model_name=\"m\"} 8\n"
				     "sglang:num_queue_reqs{model_name=\"m\"} 2\n"
				     "sglang:token_usage{model_name=\"m\"} 0.6\n"
				     "sglang:cache_hit_rate{model_name=\"m\"} 0.4\n"
				     "sglang:num_retracted_requests_total{model_name=\"m\"} 3\n"
				     "sglang:generation_tokens_total{model_name=\"m\"} 900\n";
	static const char tgi[] = "# TYPE tgi_batch_current_size gauge\n"
				  "tgi_batch_current_size 6\n"
				  "# TYPE tgi_queue_size gauge\n"
				  "tgi_queue_size 9\n"
				  "# TYPE tgi_request_generated_tokens histogram\n"
				  "tgi_request_generated_tokens_bucket{le=\"+Inf\"} 2\n"
				  "tgi_request_generated_tokens_sum 512\n"
				  "tgi_request_generated_tokens_count 2\n";

	ck_assert_str_eq(engine_of(vllm, &st), "vllm");
	ck_assert_double_eq(st.v[PG_ESIG_RUNNING], 7);
	ck_assert_double_eq(st.v[PG_ESIG_WAITING], 1);
	ck_assert_double_eq(st.v[PG_ESIG_KV_USAGE], 0.75);
	ck_assert_double_eq(st.v[PG_ESIG_PREEMPTIONS], 5);
	ck_assert_double_eq(st.v[PG_ESIG_SPEC_DRAFT], 100);
	ck_assert_double_eq(st.v[PG_ESIG_SPEC_ACCEPTED], 70);
	ck_assert(isnan(st.v[PG_ESIG_PREFIX_HITS]));

	ck_assert_str_eq(engine_of(vllm_v0, &st), "vllm");
	ck_assert_double_eq(st.v[PG_ESIG_KV_USAGE], 0.5);
	ck_assert_double_eq(st.v[PG_ESIG_PREFIX_HIT_RATE], 0.3);

	ck_assert_str_eq(engine_of(sglang, &st), "sglang");
	ck_assert_double_eq(st.v[PG_ESIG_RUNNING], 8);
	ck_assert_double_eq(st.v[PG_ESIG_WAITING], 2);
	ck_assert_double_eq(st.v[PG_ESIG_KV_USAGE], 0.6);
	ck_assert_double_eq(st.v[PG_ESIG_PREEMPTIONS], 3);
	ck_assert_double_eq(st.v[PG_ESIG_PREFIX_HIT_RATE], 0.4);

	ck_assert_str_eq(engine_of(tgi, &st), "tgi");
	ck_assert_double_eq(st.v[PG_ESIG_RUNNING], 6);
	ck_assert_double_eq(st.v[PG_ESIG_WAITING], 9);
	ck_assert_double_eq(st.v[PG_ESIG_GENERATION_TOKENS], 512);
	ck_assert(isnan(st.v[PG_ESIG_KV_USAGE]));

	ck_assert_ptr_null(engine_of("process_cpu_seconds_total 12\n", &st));
	ck_assert(isnan(st.v[PG_ESIG_RUNNING]));
}
END_TEST

START_TEST(counter_deltas_and_resets)
{
	double up[] = { 10, 15, NAN, 20 };
	double reset[] = { 100, 120, 5, 25 }; /* restarted between 120 and 5 */
	double one[] = { NAN, 7 };
	size_t r;

	ck_assert_double_eq(pg_counter_delta(up, 4, &r), 10);
	ck_assert_uint_eq(r, 0);
	ck_assert_double_eq(pg_counter_delta(reset, 4, &r), 20 + 5 + 20);
	ck_assert_uint_eq(r, 1);
	ck_assert_double_eq(pg_counter_delta(one, 2, NULL), 0);
	ck_assert(isnan(pg_counter_delta(one, 1, NULL)));
}
END_TEST

START_TEST(nvidia_smi_csv)
{
	static const char csv[] =
		"0, GPU-aaaa, NVIDIA H100 80GB HBM3, 1980, 1980, 2619, 2619, 512.31, 700.00, 61, 98, 40, "
		"70000, 81559, 0x0000000000000004, 0\n"
		"1, GPU-bbbb, NVIDIA H100 80GB HBM3, 1410, 1980, 2619, 2619, [N/A], 700.00, 88, 97, 41, "
		"70000, 81559, 0x0000000000000060, [N/A]\n";
	static const char apps[] = "GPU-aaaa, 4242, python3, 69000\n"
				   "GPU-bbbb, 4343, /usr/bin/other, 1024\n"
				   "GPU-cccc, 99, elsewhere, 1\n";
	struct pg_gpu_sample *g = NULL;
	struct pg_gpu_proc *p = NULL;
	size_t n = 0, np = 0;
	char why[256];

	ck_assert_int_eq(pg_smi_parse(&g, &n, csv, why, sizeof(why)), 2);
	ck_assert_int_eq(g[0].index, 0);
	ck_assert_str_eq(g[0].uuid, "GPU-aaaa");
	ck_assert_str_eq(g[0].name, "NVIDIA H100 80GB HBM3");
	ck_assert_double_eq(g[0].sm_mhz, 1980);
	ck_assert_double_eq_tol(g[0].power_w, 512.31, 1e-9);
	ck_assert(g[0].throttle_known && g[0].throttle == PG_THROTTLE_SW_POWER_CAP);
	ck_assert_double_eq(g[0].ecc_uncorrected, 0);
	ck_assert(isnan(g[1].power_w));
	ck_assert(isnan(g[1].ecc_uncorrected));
	ck_assert_uint_eq(g[1].throttle, PG_THROTTLE_SW_THERMAL | PG_THROTTLE_HW_THERMAL);
	ck_assert_int_eq(pg_smi_parse_apps(&p, &np, apps, g, n), 2);
	ck_assert_int_eq(p[1].gpu, 1);
	ck_assert_int_eq(p[1].pid, 4343);
	ck_assert_double_eq(p[1].mem_mib, 1024);
	ck_assert_int_eq(pg_smi_parse(&g, &n, "0, only, three\n", why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "line 1"), "%s", why);
	ck_assert_str_eq(pg_throttle_name(5), "sw_thermal_slowdown");
	ck_assert_uint_eq(pg_throttle_bit("hw_power_brake_slowdown"), PG_THROTTLE_HW_POWER_BRAKE);
	free(g);
	free(p);
}
END_TEST

START_TEST(amd_smi_json)
{
	/* amd-smi 6.x: values with units, MI300X throttle violations */
	static const char metric[] =
		"[{\"gpu\": 0, \"usage\": {\"gfx_activity\": {\"value\": 97, \"unit\": \"%\"},"
		" \"umc_activity\": {\"value\": 40, \"unit\": \"%\"}},"
		" \"power\": {\"socket_power\": {\"value\": 650, \"unit\": \"W\"}},"
		" \"clock\": {\"gfx_0\": {\"clk\": {\"value\": 1700, \"unit\": \"MHz\"},"
		" \"max_clk\": {\"value\": 2100, \"unit\": \"MHz\"}},"
		" \"mem_0\": {\"clk\": {\"value\": 1300, \"unit\": \"MHz\"}}},"
		" \"temperature\": {\"edge\": {\"value\": 50, \"unit\": \"C\"},"
		" \"hotspot\": {\"value\": 95, \"unit\": \"C\"}},"
		" \"mem_usage\": {\"used_vram\": {\"value\": 190000, \"unit\": \"MB\"},"
		" \"total_vram\": {\"value\": 196592, \"unit\": \"MB\"}},"
		" \"ecc\": {\"total_uncorrectable_count\": 2},"
		" \"throttle\": {\"socket_thermal_violation_status\": \"ACTIVE\","
		" \"ppt_violation_activity\": {\"value\": 0, \"unit\": \"%\"},"
		" \"prochot_violation_status\": \"NOT ACTIVE\"},"
		" \"energy\": {\"total_energy_consumption\": {\"value\": 3571.5, \"unit\": \"kJ\"}}},"
		" {\"gpu\": 1, \"usage\": {\"gfx_activity\": \"N/A\"},"
		" \"energy\": {\"total_energy_consumption\": {\"value\": 12, \"unit\": \"Wh\"}}}]";
	static const char procs[] = "[{\"gpu\": 0, \"process_list\": [{\"process_info\": "
				    "{\"name\": \"python3\", \"pid\": 77, \"memory_usage\": "
				    "{\"vram_mem\": {\"value\": 2147483648, \"unit\": \"B\"}}}}]},"
				    " {\"gpu\": 1, \"process_list\": [{\"process_info\": "
				    "\"No running processes detected\"}]}]";
	struct pg_gpu_sample *g = NULL;
	struct pg_gpu_proc *p = NULL;
	size_t n = 0, np = 0;
	char why[256];

	ck_assert_int_eq(pg_amdsmi_parse(&g, &n, metric, strlen(metric), why, sizeof(why)), 2);
	ck_assert_double_eq(g[0].util_pct, 97);
	ck_assert_double_eq(g[0].power_w, 650);
	ck_assert_double_eq(g[0].sm_mhz, 1700);
	ck_assert_double_eq(g[0].sm_max_mhz, 2100);
	ck_assert_double_eq(g[0].temp_c, 95);
	ck_assert_double_eq(g[0].mem_used_mib, 190000);
	ck_assert_double_eq(g[0].ecc_uncorrected, 2);
	ck_assert_uint_eq(g[0].throttle, PG_THROTTLE_SW_THERMAL);
	ck_assert(isnan(g[1].util_pct) && !g[1].throttle_known);
	/* the energy counter in J whatever its unit; one perfgate cannot
	 * convert is unknown, not misread */
	ck_assert_double_eq(g[0].energy_j, 3571500);
	ck_assert(isnan(g[1].energy_j));
	ck_assert_int_eq(pg_amdsmi_parse_procs(&p, &np, procs, strlen(procs)), 1);
	ck_assert_int_eq(p[0].pid, 77);
	ck_assert_double_eq(p[0].mem_mib, 2048);
	ck_assert_int_eq(pg_amdsmi_parse(&g, &n, "not json", 8, why, sizeof(why)), -1);
	free(g);
	free(p);
}
END_TEST

START_TEST(gpu_set_from_visible_devices)
{
	int out[8];

	ck_assert_uint_eq(pg_gpu_set(out, 8, "2,3", 2, 8), 2);
	ck_assert(out[0] == 2 && out[1] == 3);
	ck_assert_uint_eq(pg_gpu_set(out, 8, "5,6,7", 1, 8), 1); /* tp 1 uses the first */
	ck_assert_int_eq(out[0], 5);
	ck_assert_uint_eq(pg_gpu_set(out, 8, NULL, 4, 8), 4);
	ck_assert_int_eq(out[3], 3);
	ck_assert_uint_eq(pg_gpu_set(out, 8, "GPU-1234", 2, 8), 2); /* UUIDs: by tp */
	ck_assert_uint_eq(pg_gpu_set(out, 8, NULL, 1, 0), 0);
}
END_TEST

/* A throttled point: ticks at 1 s, GPU 0 thermally throttled for 12 s at a
 * low clock, another process on it, the engine preempting and its prefix
 * cache counters reset once. */
static void throttled_series(struct pg_series *s)
{
	pg_series_init(s, 1);
	s->engine = "vllm";
	s->gpu_source = "nvidia-smi";
	for (int i = 0; i <= 16; i++) {
		struct pg_tick t;
		struct pg_gpu_sample g;
		memset(&t, 0, sizeof(t));
		t.t = i;
		t.phase = i == 0 ? PG_TICK_BEFORE : i == 16 ? PG_TICK_AFTER : PG_TICK_DURING;
		t.engine_ok = true;
		for (int k = 0; k < PG_ESIG_COUNT; k++)
			t.eng.v[k] = NAN;
		t.eng.v[PG_ESIG_RUNNING] = i == 0 ? 0 : 16;
		t.eng.v[PG_ESIG_WAITING] = i == 0 ? 0 : 4;
		t.eng.v[PG_ESIG_KV_USAGE] = i == 8 ? 1.0 : 0.5;
		t.eng.v[PG_ESIG_PREEMPTIONS] = 1000 + 25.75 * i; /* 412 over the point */
		/* queries and hits: 100 and 40 a tick, the server restarted at 9 */
		t.eng.v[PG_ESIG_PREFIX_QUERIES] = i < 9 ? 5000 + 100 * i : 100 * (i - 8);
		t.eng.v[PG_ESIG_PREFIX_HITS] = i < 9 ? 2000 + 40 * i : 40 * (i - 8);
		t.eng.v[PG_ESIG_GENERATION_TOKENS] = 1000 * i;
		t.client_done = NAN;
		t.client_tokens = NAN;
		pg_gpu_sample_init(&g);
		g.index = 0;
		g.sm_max_mhz = 1980;
		g.sm_mhz = i >= 2 && i <= 13 ? 1200 : 1980;
		g.util_pct = i == 0 ? 0 : 99;
		g.throttle_known = true;
		g.throttle = i >= 2 && i <= 13 ? PG_THROTTLE_SW_THERMAL : 0;
		g.ecc_uncorrected = 0;
		pg_series_add(s, &t, &g, 1);
	}
	pg_series_add_foreign(s, &(struct pg_gpu_proc){ 0, 4242, "miner", 2048 });
	pg_series_add_foreign(s, &(struct pg_gpu_proc){ 0, 4242, "miner", 4096 });
}

START_TEST(summary_of_a_throttled_point)
{
	struct pg_series s;
	json_t *sum, *eng, *dev, *flags;
	struct pg_buf jl = PG_BUF_INIT, svg = PG_BUF_INIT;
	size_t lines = 0;

	throttled_series(&s);
	sum = pg_telemetry_summary(&s);
	eng = json_object_get(sum, "engine");
	ck_assert_double_eq(json_number_value(json_object_get(eng, "preemptions")), 412);
	ck_assert(json_is_true(json_object_get(eng, "window_exact")));
	ck_assert_double_eq(json_real_value(json_object_get(eng, "kv_cache_peak")), 1.0);
	/* counters over exactly the window, through the reset */
	ck_assert_double_eq(
		json_number_value(json_object_get(json_object_get(eng, "prefix_cache"), "queries")),
		1600);
	ck_assert_double_eq_tol(
		json_real_value(json_object_get(json_object_get(eng, "prefix_cache"), "hit_rate")),
		0.4, 1e-12);
	ck_assert_int_eq(json_integer_value(json_object_get(eng, "counter_resets")), 1);
	ck_assert_double_eq(
		json_real_value(json_object_get(json_object_get(eng, "running"), "median")), 16);
	dev = json_array_get(json_object_get(json_object_get(sum, "gpu"), "devices"), 0);
	ck_assert_double_eq(
		json_real_value(json_object_get(json_object_get(dev, "throttle_seconds"),
						"sw_thermal_slowdown")),
		12);
	ck_assert_double_eq_tol(json_real_value(json_object_get(dev, "sm_clock_ratio")),
				1200.0 / 1980, 1e-12);
	ck_assert_double_eq(
		json_real_value(json_object_get(json_object_get(dev, "sm_clock_mhz"), "min")),
		1200);
	flags = json_object_get(sum, "flags");
	ck_assert_str_eq(json_string_value(json_array_get(flags, 0)),
			 "GPU 0 thermal throttling for 12 s");
	ck_assert_str_eq(json_string_value(json_array_get(flags, 1)),
			 "GPU 0 SM clock at 61% of its maximum under load");
	ck_assert_str_eq(json_string_value(json_array_get(flags, 2)),
			 "GPU 0 shared with pid 4242 (miner, 4096 MiB)");
	ck_assert_str_eq(json_string_value(json_array_get(flags, 3)), "412 preemptions");
	ck_assert_str_eq(json_string_value(json_array_get(flags, 4)), "KV cache at 100%");
	ck_assert_uint_eq(json_array_size(flags), 5);

	pg_telemetry_jsonl(&jl, &s);
	for (size_t i = 0; i < jl.len; i++)
		lines += jl.ptr[i] == '\n';
	ck_assert_uint_eq(lines, 17);
	ck_assert(strstr(jl.ptr, "\"phase\":\"before\""));
	ck_assert(strstr(jl.ptr, "\"throttle\":[\"sw_thermal_slowdown\"]"));
	pg_telemetry_timeline(&svg, &s, "p: timeline");
	ck_assert(strstr(svg.ptr, "<svg") && strstr(svg.ptr, "KV-cache usage"));
	ck_assert(strstr(svg.ptr, "SM clock"));
	json_decref(sum);
	pg_buf_release(&jl);
	pg_buf_release(&svg);
	pg_series_release(&s);
}
END_TEST

/* GPUs 0 and 1 at 400 W and 250 W by their energy counters (mJ read as J
 * by the tools), ticks at 0.5 s from a before tick at -0.25 s to an after
 * tick at 10.25 s; reset_at >= 0: GPU 1's counter starts again from zero
 * at that tick (a driver reload). */
static void energy_series(struct pg_series *s, int reset_at)
{
	pg_series_init(s, 0.5);
	s->gpu_source = "nvml";
	for (int i = 0; i <= 22; i++) {
		struct pg_tick t;
		struct pg_gpu_sample g[2];
		memset(&t, 0, sizeof(t));
		t.t = i == 0 ? -0.25 : i == 22 ? 10.25 : 0.5 * (i - 1);
		t.phase = i == 0 ? PG_TICK_BEFORE : i == 22 ? PG_TICK_AFTER : PG_TICK_DURING;
		t.client_done = t.client_tokens = NAN;
		for (int k = 0; k < 2; k++) {
			pg_gpu_sample_init(&g[k]);
			g[k].index = k;
			g[k].power_w = k ? 250 : 400;
			g[k].energy_j = 1e6 * (k + 1) + (k ? 250 : 400) * (t.t + 0.25);
		}
		if (reset_at >= 0 && i >= reset_at)
			g[1].energy_j = 250 * (t.t + 0.25) - 250 * (0.5 * (reset_at - 1) + 0.25);
		pg_series_add(s, &t, g, 2);
	}
}

START_TEST(energy_from_the_counters)
{
	struct pg_series s;
	json_t *sum, *energy, *dev, *result;

	energy_series(&s, -1);
	sum = pg_telemetry_summary(&s);
	energy = json_object_get(json_object_get(sum, "gpu"), "energy");
	/* 10.5 s at 650 W */
	ck_assert_double_eq_tol(json_real_value(json_object_get(energy, "energy_j")), 6825, 1e-6);
	ck_assert_double_eq_tol(json_real_value(json_object_get(energy, "seconds")), 10.5, 1e-12);
	ck_assert_double_eq_tol(json_real_value(json_object_get(energy, "avg_power_w")), 650, 1e-9);
	ck_assert_uint_eq(json_array_size(json_object_get(energy, "gpus")), 2);
	dev = json_array_get(json_object_get(json_object_get(sum, "gpu"), "devices"), 1);
	ck_assert_double_eq_tol(json_real_value(json_object_get(dev, "energy_j")), 2625, 1e-6);

	/* the result gets vLLM's keys: 6825 J over 13650 output tokens */
	result = json_pack("{s:i, s:{s:O}}", "total_output_tokens", 13650, "perfgate", "telemetry",
			   sum);
	pg_result_energy(result);
	ck_assert_double_eq_tol(json_real_value(json_object_get(result, "gpu_energy_j")), 6825,
				1e-6);
	ck_assert_double_eq_tol(json_real_value(json_object_get(result, "gpu_avg_power_w")), 650,
				1e-9);
	ck_assert_double_eq_tol(
		json_real_value(json_object_get(result, "gpu_energy_per_output_token_j")), 0.5,
		1e-12);
	ck_assert_double_eq_tol(json_real_value(json_object_get(result, "gpu_energy_duration_s")),
				10.5, 1e-12);
	json_decref(result);

	/* three runs in the window: the tokens of all three */
	result = json_pack("{s:i, s:{s:O, s:[{s:i}, {s:i}, {s:i}]}}", "total_output_tokens", 4550,
			   "perfgate", "telemetry", sum, "repeats", "total_output_tokens", 4550,
			   "total_output_tokens", 4000, "total_output_tokens", 5100);
	pg_result_energy(result);
	ck_assert_double_eq_tol(
		json_real_value(json_object_get(result, "gpu_energy_per_output_token_j")), 0.5,
		1e-12);
	json_decref(result);

	/* a client that measured its own energy keeps it */
	result = json_pack("{s:i, s:f, s:{s:O}}", "total_output_tokens", 100, "gpu_energy_j", 42.0,
			   "perfgate", "telemetry", sum);
	pg_result_energy(result);
	ck_assert_double_eq(json_real_value(json_object_get(result, "gpu_energy_j")), 42);
	ck_assert_ptr_null(json_object_get(result, "gpu_avg_power_w"));
	json_decref(result);
	json_decref(sum);
	pg_series_release(&s);

	/* GPU 1's counter starts again mid-point: no energy, and why */
	energy_series(&s, 9);
	sum = pg_telemetry_summary(&s);
	energy = json_object_get(json_object_get(sum, "gpu"), "energy");
	ck_assert(json_is_null(json_object_get(energy, "energy_j")));
	ck_assert_str_eq(json_string_value(json_object_get(energy, "dropped")),
			 "GPU 1's energy counter went back during the point (reset): no energy "
			 "for this point");
	dev = json_array_get(json_object_get(json_object_get(sum, "gpu"), "devices"), 1);
	ck_assert(json_is_true(json_object_get(dev, "energy_counter_reset")));
	result = json_pack("{s:i, s:{s:O}}", "total_output_tokens", 13650, "perfgate", "telemetry",
			   sum);
	pg_result_energy(result);
	ck_assert_ptr_null(json_object_get(result, "gpu_energy_j"));
	json_decref(result);
	json_decref(sum);
	pg_series_release(&s);
}
END_TEST

START_TEST(no_energy_without_a_counter)
{
	struct pg_series s;
	json_t *sum;

	/* nvidia-smi's samples carry no counter: no energy object at all */
	throttled_series(&s);
	sum = pg_telemetry_summary(&s);
	ck_assert_ptr_null(json_object_get(json_object_get(sum, "gpu"), "energy"));
	json_decref(sum);
	pg_series_release(&s);
}
END_TEST

START_TEST(health_policy_judges_the_summary)
{
	struct pg_series s;
	struct pg_health_policy p;
	struct pg_job_health h = PG_JOB_HEALTH_INIT;
	struct pg_buf line = PG_BUF_INIT;
	json_t *sum, *res, *clean;
	const char *names[] = { "healthy_point", "serving_x_qps_4" };

	throttled_series(&s);
	sum = pg_telemetry_summary(&s);
	res = json_pack("{s:{s:O}}", "perfgate", "telemetry", sum);
	clean = json_pack("{s:{s:{s:n, s:n}}}", "perfgate", "telemetry", "engine", "gpu");
	pg_health_policy_default(&p);
	{
		const json_t *results[] = { clean, res };
		pg_job_health_judge(&h, &p, results, names, 2);
	}
	ck_assert(h.suspect);
	ck_assert_uint_eq(h.judged, 2);
	ck_assert_uint_eq(h.points.n, 1);
	ck_assert_str_eq(h.points.v[0], "serving_x_qps_4");
	ck_assert_str_eq(h.reasons.v[0], "serving_x_qps_4: GPU 0 thermal throttling for 12 s");
	ck_assert_uint_eq(h.reasons.n, 3); /* throttle, clock, foreign process */
	pg_job_health_line(&line, &h, 1);
	ck_assert_str_eq(line.ptr,
			 "serving_x_qps_4: GPU 0 thermal throttling for 12 s; and 2 more");
	pg_job_health_release(&h);

	/* a policy that tolerates it: longer throttling, lower clocks, shared GPUs */
	p.throttle_seconds = 30;
	p.min_clock_ratio = 0.5;
	p.foreign_process = false;
	{
		const json_t *results[] = { res };
		pg_job_health_judge(&h, &p, results, names + 1, 1);
	}
	ck_assert(!h.suspect);
	pg_job_health_release(&h);
	/* power capping alone is how a busy GPU runs: not sick by default */
	pg_health_policy_default(&p);
	p.on_suspect = PG_ON_SUSPECT_IGNORE;
	{
		const json_t *results[] = { res };
		pg_job_health_judge(&h, &p, results, names + 1, 1);
	}
	ck_assert(!h.suspect && h.judged == 0);
	pg_job_health_release(&h);
	json_decref(sum);
	json_decref(res);
	json_decref(clean);
	pg_buf_release(&line);
	pg_series_release(&s);
}
END_TEST

/* The mock server's engine preempts when its KV cache overflows and
 * serves what happened under vLLM's names; the parser reads it back. */
START_TEST(mock_metrics_round_trip)
{
	struct pg_engine_params prm;
	struct pg_engine *e;
	struct pg_engine_counts c;
	struct pg_engine_plan plan;
	struct pg_engine_event ev;
	struct pg_buf text = PG_BUF_INIT;
	struct pg_prom p = PG_PROM_INIT;
	struct pg_error err = PG_ERROR_INIT;
	struct pg_engine_state st;
	int64_t now = 0;
	int finished = 0;

	pg_engine_params_default(&prm);
	prm.kv_cache_tokens = 1000;
	prm.prefix_hit = 0.5;
	e = pg_engine_new(&prm);
	for (int i = 0; i < 8; i++) {
		struct pg_engine_request rq = { 200, 100, true };
		pg_engine_submit(e, now, &rq, NULL, &plan);
	}
	pg_engine_counts(e, &c);
	/* 200-token prompts in a 1000-token cache: five fit, three wait */
	ck_assert_uint_eq(c.running, 5);
	ck_assert_uint_eq(c.queued, 3);
	while (finished < 8 && now < 60000000000LL) {
		int64_t next = pg_engine_next_deadline(e);
		ck_assert(next != INT64_MAX);
		now = next;
		while (pg_engine_poll(e, now, &ev))
			finished += ev.last;
		pg_engine_counts(e, &c);
		ck_assert_msg(c.kv_tokens <= c.kv_capacity || c.running == 1, "%lld > %lld",
			      (long long)c.kv_tokens, (long long)c.kv_capacity);
	}
	ck_assert_int_eq(finished, 8);
	pg_engine_counts(e, &c);
	ck_assert(c.preemptions > 0);
	ck_assert_uint_eq(c.generation_tokens, 800);
	ck_assert_uint_eq(c.prompt_tokens, 1600);
	ck_assert_uint_eq(c.prefix_queries, 1600);
	ck_assert_uint_eq(c.prefix_hits, 8 * 96);
	ck_assert_uint_eq(c.finished, 8);
	ck_assert_int_eq(c.kv_tokens, 0);

	pg_mock_metrics_text(&text, "a \"quoted\\model\"\nname", &c);
	ck_assert_msg(pg_prom_parse(&p, text.ptr, text.len, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(pg_prom_label(&p.samples[0], "model_name"), "a \"quoted\\model\"\nname");
	ck_assert_str_eq(pg_engine_state_read(&st, &p), "vllm");
	ck_assert_double_eq(st.v[PG_ESIG_PREEMPTIONS], (double)c.preemptions);
	ck_assert_double_eq(st.v[PG_ESIG_PREFIX_HITS], 768);
	ck_assert_double_eq(st.v[PG_ESIG_GENERATION_TOKENS], 800);
	ck_assert_double_eq(st.v[PG_ESIG_KV_USAGE], 0);
	pg_prom_release(&p);
	pg_buf_release(&text);
	pg_engine_free(e);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("telemetry");
	TCase *tc = tcase_create("engine");

	tcase_add_test(tc, engine_names_per_engine);
	tcase_add_test(tc, counter_deltas_and_resets);
	tcase_add_test(tc, mock_metrics_round_trip);
	suite_add_tcase(s, tc);
	tc = tcase_create("gpu");
	tcase_add_test(tc, nvidia_smi_csv);
	tcase_add_test(tc, amd_smi_json);
	tcase_add_test(tc, gpu_set_from_visible_devices);
	suite_add_tcase(s, tc);
	tc = tcase_create("summary");
	tcase_add_test(tc, summary_of_a_throttled_point);
	tcase_add_test(tc, health_policy_judges_the_summary);
	tcase_add_test(tc, energy_from_the_counters);
	tcase_add_test(tc, no_energy_without_a_counter);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
