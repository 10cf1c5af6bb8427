#include "telemetry/gpureader_io.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "gpu/gputool_io.h"
#include "sys/proc.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- NVML, declared here: no header or library at build time ---- */

typedef int nvml_return;
typedef struct nvml_device *nvml_device;
typedef struct nvml_event_set *nvml_event_set;

struct nvml_utilization {
	unsigned int gpu, memory;
};
struct nvml_memory {
	unsigned long long total, free, used;
};
/* nvmlProcessInfo_t of the _v2 and _v3 calls */
struct nvml_process {
	unsigned int pid;
	unsigned long long used_memory;
	unsigned int gpu_instance, compute_instance;
};
struct nvml_event_data {
	nvml_device device;
	unsigned long long type;
	unsigned long long data;
	unsigned int gpu_instance, compute_instance;
};

enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_CLOCK_SM = 1,
	NVML_CLOCK_MEM = 2,
	NVML_TEMPERATURE_GPU = 0,
	NVML_MEMORY_ERROR_UNCORRECTED = 1,
	NVML_VOLATILE_ECC = 0,
};
#define NVML_EVENT_XID 0x8ULL
#define NVML_NO_VALUE  0xFFFFFFFFFFFFFFFFULL

struct nvml {
	void *lib;
	nvml_return (*init)(void);
	nvml_return (*shutdown)(void);
	nvml_return (*count)(unsigned int *);
	nvml_return (*handle)(unsigned int, nvml_device *);
	nvml_return (*name)(nvml_device, char *, unsigned int);
	nvml_return (*uuid)(nvml_device, char *, unsigned int);
	nvml_return (*clock)(nvml_device, int, unsigned int *);
	nvml_return (*max_clock)(nvml_device, int, unsigned int *);
	nvml_return (*power)(nvml_device, unsigned int *);
	nvml_return (*power_limit)(nvml_device, unsigned int *);
	nvml_return (*energy)(nvml_device, unsigned long long *); /* mJ since driver load */
	nvml_return (*temperature)(nvml_device, int, unsigned int *);
	nvml_return (*utilization)(nvml_device, struct nvml_utilization *);
	nvml_return (*memory)(nvml_device, struct nvml_memory *);
	nvml_return (*reasons)(nvml_device, unsigned long long *);
	nvml_return (*ecc)(nvml_device, int, int, unsigned long long *);
	nvml_return (*procs)(nvml_device, unsigned int *, struct nvml_process *);
	nvml_return (*event_set_create)(nvml_event_set *);
	nvml_return (*register_events)(nvml_device, unsigned long long, nvml_event_set);
	nvml_return (*event_wait)(nvml_event_set, struct nvml_event_data *, unsigned int);
	nvml_return (*event_set_free)(nvml_event_set);
	nvml_event_set events;
	unsigned int n;
	nvml_device *devices;
};

enum kind { NVML, NVIDIA_SMI, AMD_SMI };

struct pg_gpu_reader {
	enum kind kind;
	struct nvml nv;
	double cost;
	double tool_seconds;
};

/* dlsym into a function pointer without the object/function pointer cast
 * that ISO C leaves undefined (POSIX requires it to work). */
static bool sym(void *lib, const char *name, void *fn_ptr)
{
	void *p = dlsym(lib, name);
	memcpy(fn_ptr, &p, sizeof(p));
	return p != NULL;
}

static bool nvml_open(struct nvml *nv, char *why, size_t why_size)
{
	nv->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!nv->lib) {
		snprintf(why, why_size, "libnvidia-ml.so.1 not found");
		return false;
	}
	if (!sym(nv->lib, "nvmlInit_v2", &nv->init) ||
	    !sym(nv->lib, "nvmlShutdown", &nv->shutdown) ||
	    !sym(nv->lib, "nvmlDeviceGetCount_v2", &nv->count) ||
	    !sym(nv->lib, "nvmlDeviceGetHandleByIndex_v2", &nv->handle) ||
	    !sym(nv->lib, "nvmlDeviceGetClockInfo", &nv->clock) ||
	    !sym(nv->lib, "nvmlDeviceGetMaxClockInfo", &nv->max_clock)) {
		snprintf(why, why_size, "libnvidia-ml.so.1 lacks the NVML calls perfgate uses");
		goto fail;
	}
	/* optional: a GPU or driver without them reads as unknown */
	sym(nv->lib, "nvmlDeviceGetName", &nv->name);
	sym(nv->lib, "nvmlDeviceGetUUID", &nv->uuid);
	sym(nv->lib, "nvmlDeviceGetPowerUsage", &nv->power);
	sym(nv->lib, "nvmlDeviceGetEnforcedPowerLimit", &nv->power_limit);
	/* Volta and later: energy per point comes from its differences */
	sym(nv->lib, "nvmlDeviceGetTotalEnergyConsumption", &nv->energy);
	sym(nv->lib, "nvmlDeviceGetTemperature", &nv->temperature);
	sym(nv->lib, "nvmlDeviceGetUtilizationRates", &nv->utilization);
	sym(nv->lib, "nvmlDeviceGetMemoryInfo", &nv->memory);
	if (!sym(nv->lib, "nvmlDeviceGetCurrentClocksEventReasons", &nv->reasons))
		sym(nv->lib, "nvmlDeviceGetCurrentClocksThrottleReasons", &nv->reasons);
	sym(nv->lib, "nvmlDeviceGetTotalEccErrors", &nv->ecc);
	if (!sym(nv->lib, "nvmlDeviceGetComputeRunningProcesses_v3", &nv->procs))
		sym(nv->lib, "nvmlDeviceGetComputeRunningProcesses_v2", &nv->procs);
	sym(nv->lib, "nvmlEventSetCreate", &nv->event_set_create);
	sym(nv->lib, "nvmlDeviceRegisterEvents", &nv->register_events);
	sym(nv->lib, "nvmlEventSetWait_v2", &nv->event_wait);
	sym(nv->lib, "nvmlEventSetFree", &nv->event_set_free);
	if (nv->init() != NVML_SUCCESS) {
		snprintf(why, why_size, "nvmlInit failed (no driver loaded?)");
		goto fail;
	}
	if (nv->count(&nv->n) != NVML_SUCCESS || nv->n == 0) {
		snprintf(why, why_size, "NVML lists no GPU");
		nv->shutdown();
		goto fail;
	}
	nv->devices = pg_xcalloc(nv->n, sizeof(*nv->devices));
	for (unsigned int i = 0; i < nv->n; i++)
		if (nv->handle(i, &nv->devices[i]) != NVML_SUCCESS)
			nv->devices[i] = NULL;
	/* Xid errors arrive as events: register every GPU once, drain the
	 * set at each read (never waiting) */
	if (nv->event_set_create && nv->register_events && nv->event_wait &&
	    nv->event_set_create(&nv->events) == NVML_SUCCESS) {
		for (unsigned int i = 0; i < nv->n; i++)
			if (nv->devices[i])
				nv->register_events(nv->devices[i], NVML_EVENT_XID, nv->events);
	} else {
		nv->events = NULL;
	}
	return true;
fail:
	dlclose(nv->lib);
	nv->lib = NULL;
	return false;
}

static void nvml_close(struct nvml *nv)
{
	if (!nv->lib)
		return;
	if (nv->events && nv->event_set_free)
		nv->event_set_free(nv->events);
	nv->shutdown();
	free(nv->devices);
	dlclose(nv->lib);
	memset(nv, 0, sizeof(*nv));
}

/* The value an NVML call wrote to *v, or NAN when it failed. By pointer:
 * u(call(&v), v) could read v before the call writes it (the order in
 * which a function's arguments are evaluated is unspecified, and gcc
 * reads the later ones first), giving each reading the one before. */
static double u(nvml_return rc, const unsigned int *v)
{
	return rc == NVML_SUCCESS ? (double)*v : NAN;
}

static int nvml_read(struct nvml *nv, struct pg_gpu_sample **out, size_t *n)
{
	size_t first = *n;

	for (unsigned int i = 0; i < nv->n; i++) {
		nvml_device d = nv->devices[i];
		struct pg_gpu_sample s;
		unsigned int v = 0;
		struct nvml_utilization ut;
		struct nvml_memory mem;
		unsigned long long bits = 0, ecc = 0, mj = 0;

		if (!d)
			continue;
		pg_gpu_sample_init(&s);
		s.index = (int)i;
		if (nv->name)
			nv->name(d, s.name, sizeof(s.name));
		if (nv->uuid)
			nv->uuid(d, s.uuid, sizeof(s.uuid));
		s.sm_mhz = u(nv->clock(d, NVML_CLOCK_SM, &v), &v);
		s.sm_max_mhz = u(nv->max_clock(d, NVML_CLOCK_SM, &v), &v);
		s.mem_mhz = u(nv->clock(d, NVML_CLOCK_MEM, &v), &v);
		s.mem_max_mhz = u(nv->max_clock(d, NVML_CLOCK_MEM, &v), &v);
		if (nv->power)
			s.power_w = u(nv->power(d, &v), &v) / 1000;
		if (nv->power_limit)
			s.power_limit_w = u(nv->power_limit(d, &v), &v) / 1000;
		if (nv->energy && nv->energy(d, &mj) == NVML_SUCCESS)
			s.energy_j = (double)mj / 1000;
		if (nv->temperature)
			s.temp_c = u(nv->temperature(d, NVML_TEMPERATURE_GPU, &v), &v);
		if (nv->utilization && nv->utilization(d, &ut) == NVML_SUCCESS) {
			s.util_pct = ut.gpu;
			s.mem_util_pct = ut.memory;
		}
		if (nv->memory && nv->memory(d, &mem) == NVML_SUCCESS) {
			s.mem_used_mib = (double)mem.used / (1024 * 1024);
			s.mem_total_mib = (double)mem.total / (1024 * 1024);
		}
		if (nv->reasons && nv->reasons(d, &bits) == NVML_SUCCESS) {
			s.throttle = bits;
			s.throttle_known = true;
		}
		if (nv->ecc && nv->ecc(d, NVML_MEMORY_ERROR_UNCORRECTED, NVML_VOLATILE_ECC, &ecc) ==
				       NVML_SUCCESS)
			s.ecc_uncorrected = (double)ecc;
		*out = pg_xrealloc(*out, (*n + 1) * sizeof(**out));
		(*out)[(*n)++] = s;
	}
	if (nv->events) {
		struct nvml_event_data ev;
		/* timeout 0: take what is pending, never block the sampler */
		for (int k = 0; k < 64 && nv->event_wait(nv->events, &ev, 0) == NVML_SUCCESS; k++) {
			if (!(ev.type & NVML_EVENT_XID))
				continue;
			for (size_t j = first; j < *n; j++)
				if (nv->devices[(*out)[j].index] == ev.device)
					(*out)[j].xid = (int)ev.data;
		}
	}
	return 0;
}

static int nvml_procs(struct nvml *nv, const struct pg_gpu_sample *gpus, size_t n,
		      struct pg_gpu_proc **out, size_t *n_out)
{
	if (!nv->procs)
		return -1;
	for (size_t i = 0; i < n; i++) {
		nvml_device d = gpus[i].index >= 0 && (unsigned)gpus[i].index < nv->n
					? nv->devices[gpus[i].index]
					: NULL;
		struct nvml_process ps[64];
		unsigned int count = 64;
		if (!d || nv->procs(d, &count, ps) != NVML_SUCCESS)
			continue;
		for (unsigned int k = 0; k < count && k < 64; k++) {
			struct pg_gpu_proc p;
			memset(&p, 0, sizeof(p));
			p.gpu = gpus[i].index;
			p.pid = (long)ps[k].pid;
			p.mem_mib = ps[k].used_memory == NVML_NO_VALUE
					    ? NAN
					    : (double)ps[k].used_memory / (1024 * 1024);
			*out = pg_xrealloc(*out, (*n_out + 1) * sizeof(**out));
			(*out)[(*n_out)++] = p;
		}
	}
	return 0;
}

/* ---- the command-line tools ---- */

/* Run a tool; 0 with its stdout, or -1 with why. Its wall time counts. */
static int tool(struct pg_gpu_reader *r, char *const *argv, const volatile sig_atomic_t *stop,
		struct pg_buf *out, char *why, size_t why_size)
{
	double t0 = pg_monotonic();
	int rc = pg_gpu_tool_run(argv, stop, out, why, why_size);

	r->cost = pg_monotonic() - t0;
	r->tool_seconds += r->cost;
	return rc;
}

static int smi_read(struct pg_gpu_reader *r, struct pg_gpu_sample **out, size_t *n,
		    const volatile sig_atomic_t *stop, char *why, size_t why_size)
{
	char *argv[] = { "nvidia-smi", "--query-gpu=" PG_SMI_FIELDS,
			 "--format=csv,noheader,nounits", NULL };
	struct pg_buf csv = PG_BUF_INIT;
	int rc = tool(r, argv, stop, &csv, why, why_size);

	if (rc == 0 && pg_smi_parse(out, n, csv.ptr, why, why_size) < 0)
		rc = -1;
	pg_buf_release(&csv);
	return rc;
}

static int smi_procs(struct pg_gpu_reader *r, const struct pg_gpu_sample *gpus, size_t n,
		     struct pg_gpu_proc **out, size_t *n_out, const volatile sig_atomic_t *stop)
{
	char *argv[] = { "nvidia-smi", "--query-compute-apps=" PG_SMI_APPS_FIELDS,
			 "--format=csv,noheader,nounits", NULL };
	struct pg_buf csv = PG_BUF_INIT;
	char why[256];
	int rc = tool(r, argv, stop, &csv, why, sizeof(why));

	if (rc == 0 && pg_smi_parse_apps(out, n_out, csv.ptr, gpus, n) < 0)
		rc = -1;
	pg_buf_release(&csv);
	return rc;
}

static int amd_read(struct pg_gpu_reader *r, struct pg_gpu_sample **out, size_t *n,
		    const volatile sig_atomic_t *stop, char *why, size_t why_size)
{
	char *argv[] = { "amd-smi", "metric", "--json", NULL };
	struct pg_buf js = PG_BUF_INIT;
	int rc = tool(r, argv, stop, &js, why, why_size);

	if (rc == 0 && pg_amdsmi_parse(out, n, js.ptr, js.len, why, why_size) < 0)
		rc = -1;
	pg_buf_release(&js);
	return rc;
}

static int amd_procs(struct pg_gpu_reader *r, struct pg_gpu_proc **out, size_t *n_out,
		     const volatile sig_atomic_t *stop)
{
	char *argv[] = { "amd-smi", "process", "--json", NULL };
	struct pg_buf js = PG_BUF_INIT;
	char why[256];
	int rc = tool(r, argv, stop, &js, why, sizeof(why));

	if (rc == 0 && pg_amdsmi_parse_procs(out, n_out, js.ptr, js.len) < 0)
		rc = -1;
	pg_buf_release(&js);
	return rc;
}

/* ---- the reader ---- */

struct pg_gpu_reader *pg_gpu_reader_open(char *note, size_t note_size)
{
	const char *force = getenv("PERFGATE_GPU_TOOL");
	struct pg_gpu_reader *r = pg_xcalloc(1, sizeof(*r));
	char nv_why[160] = "", smi_why[256] = "", amd_why[256] = "";
	struct pg_gpu_sample *probe = NULL;
	size_t n = 0;

	if (force && !strcmp(force, "none")) {
		snprintf(note, note_size, "GPU telemetry off (PERFGATE_GPU_TOOL=none)");
		goto none;
	}
	if (!force || !*force || !strcmp(force, "nvml")) {
		if (nvml_open(&r->nv, nv_why, sizeof(nv_why))) {
			r->kind = NVML;
			return r;
		}
	}
	/* a tool answers when one read works */
	if (!force || !*force || !strcmp(force, "nvidia-smi")) {
		r->kind = NVIDIA_SMI;
		if (smi_read(r, &probe, &n, NULL, smi_why, sizeof(smi_why)) == 0 && n > 0)
			goto found;
		if (!smi_why[0])
			snprintf(smi_why, sizeof(smi_why), "nvidia-smi lists no GPU");
	}
	if (!force || !*force || !strcmp(force, "amd-smi")) {
		r->kind = AMD_SMI;
		n = 0;
		if (amd_read(r, &probe, &n, NULL, amd_why, sizeof(amd_why)) == 0 && n > 0)
			goto found;
		if (!amd_why[0])
			snprintf(amd_why, sizeof(amd_why), "amd-smi lists no GPU");
	}
	snprintf(note, note_size, "no GPU telemetry: %s%s%s%s%s", nv_why[0] ? nv_why : "",
		 nv_why[0] && smi_why[0] ? "; " : "", smi_why,
		 (nv_why[0] || smi_why[0]) && amd_why[0] ? "; " : "", amd_why);
none:
	free(probe);
	free(r);
	return NULL;
found:
	free(probe);
	return r;
}

void pg_gpu_reader_close(struct pg_gpu_reader *r)
{
	if (!r)
		return;
	if (r->kind == NVML)
		nvml_close(&r->nv);
	free(r);
}

const char *pg_gpu_reader_source(const struct pg_gpu_reader *r)
{
	static const char *const names[] = { "nvml", "nvidia-smi", "amd-smi" };
	return names[r->kind];
}

int pg_gpu_reader_read(struct pg_gpu_reader *r, struct pg_gpu_sample **out, size_t *n,
		       const volatile sig_atomic_t *stop, char *why, size_t why_size)
{
	switch (r->kind) {
	case NVML:
		r->cost = 0;
		return nvml_read(&r->nv, out, n);
	case NVIDIA_SMI:
		return smi_read(r, out, n, stop, why, why_size);
	case AMD_SMI:
		return amd_read(r, out, n, stop, why, why_size);
	}
	return -1;
}

int pg_gpu_reader_procs(struct pg_gpu_reader *r, const struct pg_gpu_sample *gpus, size_t n,
			struct pg_gpu_proc **out, size_t *n_out, const volatile sig_atomic_t *stop)
{
	switch (r->kind) {
	case NVML:
		return nvml_procs(&r->nv, gpus, n, out, n_out);
	case NVIDIA_SMI:
		return smi_procs(r, gpus, n, out, n_out, stop);
	case AMD_SMI:
		return amd_procs(r, out, n_out, stop);
	}
	return -1;
}

double pg_gpu_reader_cost(const struct pg_gpu_reader *r)
{
	return r->cost;
}

double pg_gpu_reader_tool_seconds(const struct pg_gpu_reader *r)
{
	return r->tool_seconds;
}
