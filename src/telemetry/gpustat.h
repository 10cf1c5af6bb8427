#ifndef PERFGATE_TELEMETRY_GPUSTAT_H
#define PERFGATE_TELEMETRY_GPUSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pg_buf;

/*
 * One GPU at one instant, whichever tool read it (NVML, nvidia-smi,
 * amd-smi), and the parsers of the tools' output. Pure.
 */

/* Why clocks are held down: NVML's clocks event ("throttle") reasons, bit
 * for bit (nvmlClocksEventReason*), which nvidia-smi prints as
 * clocks_throttle_reasons.active; amd-smi's violations map onto them. */
enum {
	PG_THROTTLE_GPU_IDLE = 0x1,
	PG_THROTTLE_APP_CLOCKS = 0x2,
	PG_THROTTLE_SW_POWER_CAP = 0x4,
	PG_THROTTLE_HW_SLOWDOWN = 0x8,
	PG_THROTTLE_SYNC_BOOST = 0x10,
	PG_THROTTLE_SW_THERMAL = 0x20,
	PG_THROTTLE_HW_THERMAL = 0x40,
	PG_THROTTLE_HW_POWER_BRAKE = 0x80,
	PG_THROTTLE_DISPLAY_CLOCKS = 0x100,
};
#define PG_THROTTLE_N_REASONS 9

/* "gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown",
 * "sync_boost", "sw_thermal_slowdown", "hw_thermal_slowdown",
 * "hw_power_brake_slowdown", "display_clock_setting" for bit i (0..8). */
const char *pg_throttle_name(int bit);
/* The bit of a name above, or 0. */
uint64_t pg_throttle_bit(const char *name);
/* What a person reads: "thermal throttling" (both thermal reasons),
 * "power capping", "hardware slowdown", "power brake", ... */
const char *pg_throttle_words(int bit);

struct pg_gpu_sample {
	int index;         /* the tool's GPU index */
	double sm_mhz;     /* NAN: unknown, here and below */
	double sm_max_mhz; /* the highest SM clock the GPU can run */
	double mem_mhz;
	double mem_max_mhz;
	double power_w;
	double power_limit_w; /* enforced limit */
	double temp_c;
	double util_pct; /* GPU (SM) utilisation */
	double mem_util_pct;
	double mem_used_mib;
	double mem_total_mib;
	uint64_t throttle; /* PG_THROTTLE_* bits active now */
	bool throttle_known;
	double ecc_uncorrected; /* volatile uncorrected ECC errors since boot; NAN unknown */
	/* the GPU's energy counter, J (NVML's total energy since the driver
	 * loaded, amd-smi's total_energy_consumption); NAN unknown. Only
	 * its differences mean anything. */
	double energy_j;
	int xid;       /* an Xid error reported since the last sample, 0: none */
	char uuid[96]; /* "" when unknown */
	char name[96];
};

void pg_gpu_sample_init(struct pg_gpu_sample *s);

/* A process holding memory on a GPU. */
struct pg_gpu_proc {
	int gpu; /* GPU index */
	long pid;
	char name[96];
	double mem_mib; /* NAN unknown */
};

/*
 * nvidia-smi's sampling query: `nvidia-smi --query-gpu=<PG_SMI_FIELDS>
 * --format=csv,noheader,nounits`, one line per GPU, fields in this order.
 * clocks_throttle_reasons.active is the old name of clocks_event_reasons
 * that every driver still answers.
 */
#define PG_SMI_FIELDS                                                                              \
	"index,uuid,name,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.draw,"            \
	"power.limit,temperature.gpu,utilization.gpu,utilization.memory,memory.used,"              \
	"memory.total,clocks_throttle_reasons.active,ecc.errors.uncorrected.volatile.total"

/*
 * Parse that output: appends one sample per line to *out (realloc'ed,
 * *n counted). "[N/A]", "[Not Supported]" and the like become NAN.
 * Returns the number of GPUs read, or -1 naming the bad line in why.
 */
int pg_smi_parse(struct pg_gpu_sample **out, size_t *n, const char *csv, char *why,
		 size_t why_size);

/*
 * `nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory
 * --format=csv,noheader,nounits`: each process, its GPU found by UUID among
 * the n samples gpus (processes of other GPUs are left out). Returns the
 * count appended, or -1.
 */
#define PG_SMI_APPS_FIELDS "gpu_uuid,pid,process_name,used_memory"
int pg_smi_parse_apps(struct pg_gpu_proc **out, size_t *n, const char *csv,
		      const struct pg_gpu_sample *gpus, size_t n_gpus);

/*
 * `amd-smi metric --json`: a list of {"gpu": N, "usage", "power", "clock",
 * "temperature", "mem_usage", "ecc", "throttle", "energy"} objects (or that list
 * under "gpu_data"); a value is a number or {"value": x, "unit": "..."},
 * "N/A" for unknown. Clocks from gfx_0 (or gfx) and mem_0 (or mem),
 * temperature from hotspot (or edge). Throttling from the violation
 * status and activity of MI300-class parts: thermal violations map to
 * sw_thermal_slowdown, PPT (package power) to sw_power_cap, PROCHOT to
 * hw_slowdown. Energy from energy.total_energy_consumption (a unit of J,
 * mJ, uJ or kJ; J without one). Returns the GPUs appended, or -1 with why.
 */
int pg_amdsmi_parse(struct pg_gpu_sample **out, size_t *n, const char *json, size_t len, char *why,
		    size_t why_size);

/* `amd-smi process --json`: [{"gpu": N, "process_list": [{"process_info":
 * {"name", "pid", "memory_usage": {"vram_mem": ...}}}]}]. Returns the
 * count appended, or -1. */
int pg_amdsmi_parse_procs(struct pg_gpu_proc **out, size_t *n, const char *json, size_t len);

/*
 * The GPUs a server uses: the integers of its CUDA_VISIBLE_DEVICES (or
 * HIP_/ROCR_VISIBLE_DEVICES) when it has them, else the first tp of the
 * machine's n_gpus (what vLLM takes by default), else all of them. UUIDs
 * in the variable (GPU-...) match nothing here: all GPUs are sampled.
 * Writes up to max indexes into out; returns the count.
 */
size_t pg_gpu_set(int *out, size_t max, const char *visible, long tp, int n_gpus);

#endif
