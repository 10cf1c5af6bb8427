#include "telemetry/gpustat.h"

#include "base/alloc.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const throttle_names[PG_THROTTLE_N_REASONS] = {
	"gpu_idle",
	"applications_clocks_setting",
	"sw_power_cap",
	"hw_slowdown",
	"sync_boost",
	"sw_thermal_slowdown",
	"hw_thermal_slowdown",
	"hw_power_brake_slowdown",
	"display_clock_setting",
};

static const char *const throttle_words[PG_THROTTLE_N_REASONS] = {
	"idle clocks",        "application clocks", "power capping",
	"hardware slowdown",  "sync boost",         "thermal throttling",
	"thermal throttling", "power brake",        "display clocks",
};

const char *pg_throttle_name(int bit)
{
	return bit >= 0 && bit < PG_THROTTLE_N_REASONS ? throttle_names[bit] : "unknown";
}

const char *pg_throttle_words(int bit)
{
	return bit >= 0 && bit < PG_THROTTLE_N_REASONS ? throttle_words[bit] : "clock event";
}

uint64_t pg_throttle_bit(const char *name)
{
	for (int i = 0; i < PG_THROTTLE_N_REASONS; i++)
		if (!strcmp(name, throttle_names[i]))
			return 1ULL << i;
	return 0;
}

void pg_gpu_sample_init(struct pg_gpu_sample *s)
{
	memset(s, 0, sizeof(*s));
	s->index = -1;
	s->sm_mhz = s->sm_max_mhz = s->mem_mhz = s->mem_max_mhz = NAN;
	s->power_w = s->power_limit_w = s->temp_c = s->util_pct = s->mem_util_pct = NAN;
	s->mem_used_mib = s->mem_total_mib = s->ecc_uncorrected = s->energy_j = NAN;
}

/* ---- nvidia-smi ---- */

/* Split one CSV line on commas into at most max trimmed fields. */
static size_t split(const char *line, size_t len, char fields[][128], size_t max)
{
	size_t n = 0;
	const char *p = line, *end = line + len;

	while (n < max) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *fe = comma ? comma : end;
		const char *fs = p;
		size_t fl;
		while (fs < fe && isspace((unsigned char)*fs))
			fs++;
		while (fe > fs && isspace((unsigned char)fe[-1]))
			fe--;
		fl = (size_t)(fe - fs);
		if (fl >= sizeof(fields[0]))
			fl = sizeof(fields[0]) - 1;
		memcpy(fields[n], fs, fl);
		fields[n][fl] = '\0';
		n++;
		if (!comma)
			break;
		p = comma + 1;
	}
	return n;
}

/* A number, or NAN for "[N/A]", "[Not Supported]", "N/A", "". */
static double num(const char *s)
{
	char *end;
	double v;

	if (!*s || *s == '[' || !strncasecmp(s, "N/A", 3))
		return NAN;
	v = strtod(s, &end);
	while (isspace((unsigned char)*end))
		end++;
	return end == s || (*end && strcasecmp(end, "MiB") && strcasecmp(end, "MHz") &&
			    strcasecmp(end, "W") && strcmp(end, "%"))
		       ? NAN
		       : v;
}

int pg_smi_parse(struct pg_gpu_sample **out, size_t *n, const char *csv, char *why, size_t why_size)
{
	int count = 0, line_no = 0;

	for (const char *line = csv; line && *line;) {
		size_t len = strcspn(line, "\n");
		const char *next = line[len] ? line + len + 1 : line + len;
		char f[16][128];
		size_t nf;
		struct pg_gpu_sample s;
		char *end;
		long idx;

		line_no++;
		if (len && line[len - 1] == '\r')
			len--;
		nf = split(line, len, f, 16);
		if (nf == 1 && !f[0][0]) {
			line = next;
			continue;
		}
		idx = strtol(f[0], &end, 10);
		if (nf != 16 || end == f[0] || *end || idx < 0 || idx > 1024) {
			snprintf(why, why_size,
				 "line %d: expected 16 fields starting with the index: %.80s",
				 line_no, line);
			return -1;
		}
		pg_gpu_sample_init(&s);
		s.index = (int)idx;
		snprintf(s.uuid, sizeof(s.uuid), "%.95s", f[1]);
		snprintf(s.name, sizeof(s.name), "%.95s", f[2]);
		s.sm_mhz = num(f[3]);
		s.sm_max_mhz = num(f[4]);
		s.mem_mhz = num(f[5]);
		s.mem_max_mhz = num(f[6]);
		s.power_w = num(f[7]);
		s.power_limit_w = num(f[8]);
		s.temp_c = num(f[9]);
		s.util_pct = num(f[10]);
		s.mem_util_pct = num(f[11]);
		s.mem_used_mib = num(f[12]);
		s.mem_total_mib = num(f[13]);
		if (!strncasecmp(f[14], "0x", 2)) {
			unsigned long long bits = strtoull(f[14] + 2, &end, 16);
			if (!*end) {
				s.throttle = bits;
				s.throttle_known = true;
			}
		}
		s.ecc_uncorrected = num(f[15]);
		*out = pg_xrealloc(*out, (*n + 1) * sizeof(**out));
		(*out)[(*n)++] = s;
		count++;
		line = next;
	}
	return count;
}

int pg_smi_parse_apps(struct pg_gpu_proc **out, size_t *n, const char *csv,
		      const struct pg_gpu_sample *gpus, size_t n_gpus)
{
	int count = 0;

	for (const char *line = csv; line && *line;) {
		size_t len = strcspn(line, "\n");
		const char *next = line[len] ? line + len + 1 : line + len;
		char f[4][128];
		size_t nf = split(line, len, f, 4);
		struct pg_gpu_proc pr;
		char *end;
		int gpu = -1;

		line = next;
		if (nf == 1 && !f[0][0])
			continue;
		if (nf != 4)
			return -1;
		for (size_t i = 0; i < n_gpus; i++)
			if (gpus[i].uuid[0] && !strcmp(gpus[i].uuid, f[0]))
				gpu = gpus[i].index;
		if (gpu < 0)
			continue;
		memset(&pr, 0, sizeof(pr));
		pr.gpu = gpu;
		pr.pid = strtol(f[1], &end, 10);
		if (end == f[1] || *end)
			return -1;
		snprintf(pr.name, sizeof(pr.name), "%.95s", f[2]);
		pr.mem_mib = num(f[3]);
		*out = pg_xrealloc(*out, (*n + 1) * sizeof(**out));
		(*out)[(*n)++] = pr;
		count++;
	}
	return count;
}

/* ---- amd-smi ---- */

/* A number, {"value": number or numeric string}, or NAN. unit_scale: MiB
 * per unit for memory ("B", "KB", "MB", "GB"), else 1. */
static double jnum(const json_t *v, bool memory)
{
	double x = NAN, scale = 1;

	if (json_is_object(v)) {
		const json_t *unit = json_object_get(v, "unit");
		const char *u = json_is_string(unit) ? json_string_value(unit) : "";
		if (memory) {
			if (!strcasecmp(u, "B"))
				scale = 1.0 / (1024 * 1024);
			else if (!strcasecmp(u, "KB") || !strcasecmp(u, "KiB"))
				scale = 1.0 / 1024;
			else if (!strcasecmp(u, "GB") || !strcasecmp(u, "GiB"))
				scale = 1024;
		}
		v = json_object_get(v, "value");
	}
	if (json_is_number(v)) {
		x = json_number_value(v);
	} else if (json_is_string(v)) {
		char *end;
		const char *s = json_string_value(v);
		x = strtod(s, &end);
		if (end == s)
			x = NAN;
	}
	return x * scale;
}

/* An energy reading in J: {"value": x, "unit": "J" | "mJ" | "uJ" | "kJ"}
 * or a bare number (J). NAN for anything else. */
static double jenergy(const json_t *v)
{
	static const struct {
		const char *unit;
		double joules;
	} units[] = {
		{ "J", 1 }, { "mJ", 1e-3 }, { "uJ", 1e-6 }, { "\xc2\xb5J", 1e-6 }, { "kJ", 1e3 }
	};
	const json_t *unit = json_is_object(v) ? json_object_get(v, "unit") : NULL;
	double x = jnum(v, false);

	if (!json_is_string(unit))
		return x;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(json_string_value(unit), units[i].unit))
			return x * units[i].joules;
	return NAN;
}

static const json_t *first_of(const json_t *obj, const char *a, const char *b)
{
	const json_t *v = json_object_get(obj, a);
	return v ? v : (b ? json_object_get(obj, b) : NULL);
}

/* A violation is on: status "ACTIVE"/true/1, or an activity above 0 %. */
static bool violation_on(const char *key, const json_t *v)
{
	if (strstr(key, "status")) {
		if (json_is_true(v))
			return true;
		if (json_is_string(v))
			return !strcasecmp(json_string_value(v), "ACTIVE") ||
			       !strcasecmp(json_string_value(v), "true");
		return json_is_number(v) && json_number_value(v) > 0;
	}
	if (strstr(key, "activity") || strstr(key, "percent")) {
		double x = jnum(v, false);
		return x > 0;
	}
	return false;
}

static const json_t *gpu_list(const json_t *root)
{
	if (json_is_object(root))
		root = json_object_get(root, "gpu_data");
	return json_is_array(root) ? root : NULL;
}

int pg_amdsmi_parse(struct pg_gpu_sample **out, size_t *n, const char *json, size_t len, char *why,
		    size_t why_size)
{
	json_error_t jerr;
	json_t *root = json_loadb(json, len, 0, &jerr);
	const json_t *list = root ? gpu_list(root) : NULL;
	size_t i;
	const json_t *g;
	int count = 0;

	if (!list) {
		snprintf(why, why_size, "not a list of GPUs%s%s", root ? "" : ": ",
			 root ? "" : jerr.text);
		json_decref(root);
		return -1;
	}
	json_array_foreach(list, i, g)
	{
		struct pg_gpu_sample s;
		const json_t *usage = json_object_get(g, "usage");
		const json_t *power = json_object_get(g, "power");
		const json_t *clock = json_object_get(g, "clock");
		const json_t *temp = json_object_get(g, "temperature");
		const json_t *mem = first_of(g, "mem_usage", "memory_usage");
		const json_t *ecc = json_object_get(g, "ecc");
		const json_t *thr = first_of(g, "throttle", "violation");
		const json_t *gfx = first_of(clock, "gfx_0", "gfx");
		const json_t *memclk = first_of(clock, "mem_0", "mem");
		const json_t *idx = json_object_get(g, "gpu");
		const char *key;
		const json_t *v;

		if (!json_is_integer(idx)) {
			snprintf(why, why_size, "GPU %zu has no integer \"gpu\" index", i);
			json_decref(root);
			return -1;
		}
		pg_gpu_sample_init(&s);
		s.index = (int)json_integer_value(idx);
		s.util_pct = jnum(first_of(usage, "gfx_activity", "gfx_usage"), false);
		s.mem_util_pct = jnum(first_of(usage, "umc_activity", "mem_activity"), false);
		s.power_w = jnum(first_of(power, "socket_power", "current_socket_power"), false);
		if (isnan(s.power_w))
			s.power_w = jnum(json_object_get(power, "average_socket_power"), false);
		s.power_limit_w = jnum(first_of(power, "power_limit", "socket_power_limit"), false);
		s.sm_mhz = jnum(first_of(gfx, "clk", "cur_clk"), false);
		s.sm_max_mhz = jnum(json_object_get(gfx, "max_clk"), false);
		s.mem_mhz = jnum(first_of(memclk, "clk", "cur_clk"), false);
		s.mem_max_mhz = jnum(json_object_get(memclk, "max_clk"), false);
		s.temp_c = jnum(first_of(temp, "hotspot", "junction"), false);
		if (isnan(s.temp_c))
			s.temp_c = jnum(json_object_get(temp, "edge"), false);
		s.mem_used_mib = jnum(json_object_get(mem, "used_vram"), true);
		s.mem_total_mib = jnum(json_object_get(mem, "total_vram"), true);
		s.ecc_uncorrected = jnum(
			first_of(ecc, "total_uncorrectable_count", "uncorrectable_count"), false);
		s.energy_j = jenergy(
			json_object_get(json_object_get(g, "energy"), "total_energy_consumption"));
		if (json_is_object(thr)) {
			s.throttle_known = true;
			json_object_foreach((json_t *)thr, key, v)
			{
				if (!violation_on(key, v))
					continue;
				if (strstr(key, "thermal") || strstr(key, "thm"))
					s.throttle |= PG_THROTTLE_SW_THERMAL;
				else if (strstr(key, "ppt") || strstr(key, "power"))
					s.throttle |= PG_THROTTLE_SW_POWER_CAP;
				else if (strstr(key, "prochot"))
					s.throttle |= PG_THROTTLE_HW_SLOWDOWN;
			}
		}
		*out = pg_xrealloc(*out, (*n + 1) * sizeof(**out));
		(*out)[(*n)++] = s;
		count++;
	}
	json_decref(root);
	return count;
}

int pg_amdsmi_parse_procs(struct pg_gpu_proc **out, size_t *n, const char *json, size_t len)
{
	json_t *root = json_loadb(json, len, 0, NULL);
	const json_t *list = root ? gpu_list(root) : NULL;
	size_t i, j;
	const json_t *g, *p;
	int count = 0;

	if (!list) {
		json_decref(root);
		return -1;
	}
	json_array_foreach(list, i, g)
	{
		const json_t *idx = json_object_get(g, "gpu");
		const json_t *procs = json_object_get(g, "process_list");
		if (!json_is_integer(idx) || !json_is_array(procs))
			continue;
		json_array_foreach(procs, j, p)
		{
			const json_t *info = json_object_get(p, "process_info");
			const json_t *pid, *name, *mem;
			struct pg_gpu_proc pr;

			if (!info)
				info = p;
			pid = json_object_get(info, "pid");
			if (!json_is_integer(pid))
				continue; /* "No running processes detected" */
			name = json_object_get(info, "name");
			mem = first_of(info, "memory_usage", "mem_usage");
			memset(&pr, 0, sizeof(pr));
			pr.gpu = (int)json_integer_value(idx);
			pr.pid = (long)json_integer_value(pid);
			snprintf(pr.name, sizeof(pr.name), "%s",
				 json_is_string(name) ? json_string_value(name) : "");
			pr.mem_mib = jnum(first_of(mem, "vram_mem", "vram"), true);
			if (isnan(pr.mem_mib))
				pr.mem_mib = jnum(json_object_get(info, "mem"), true);
			*out = pg_xrealloc(*out, (*n + 1) * sizeof(**out));
			(*out)[(*n)++] = pr;
			count++;
		}
	}
	json_decref(root);
	return count;
}

/* ---- which GPUs ---- */

size_t pg_gpu_set(int *out, size_t max, const char *visible, long tp, int n_gpus)
{
	size_t n = 0;

	if (visible && *visible) {
		const char *p = visible;
		bool all_ints = true;
		while (*p && n < max) {
			char *end;
			long v = strtol(p, &end, 10);
			if (end == p || (*end && *end != ',')) {
				all_ints = false;
				break;
			}
			if (v >= 0 && (n_gpus <= 0 || v < n_gpus))
				out[n++] = (int)v;
			p = *end ? end + 1 : end;
		}
		if (all_ints)
			return tp > 0 && n > (size_t)tp ? (size_t)tp : n;
		n = 0;
	}
	if (n_gpus <= 0)
		return 0;
	if (tp > 0 && tp < n_gpus)
		n_gpus = (int)tp;
	for (int i = 0; i < n_gpus && n < max; i++)
		out[n++] = i;
	return n;
}
