#ifndef PERFGATE_GPU_DETECT_IO_H
#define PERFGATE_GPU_DETECT_IO_H

#include <jansson.h>
#include <signal.h>

struct pg_error;

/*
 * Which GPUs this run measures. Detected with
 * `nvidia-smi --query-gpu=name,memory.total --format=csv,noheader`, or
 * forced (a machine without nvidia-smi, a renamed SKU, a CPU run that should
 * still compare against a GPU's baseline).
 *
 * Precedence: --gpu flag > PERFGATE_GPU environment variable > the suite's
 * `gpu:` > detected. A forced string may be any shape gpu/gpu.h knows:
 * "H100", "8xH100", "NVIDIA H100 80GB HBM3", "4xNVIDIA_L40S".
 *
 * Without nvidia-smi (or when it fails: no driver) and nothing forced, the
 * run records count 0, key "none", label "none", gpu_type "" -- never a
 * guess -- and `note` says why.
 */
struct pg_gpu_info {
	int count;          /* GPUs measured: detected, or implied by the forced name */
	char *name;         /* full name of the first GPU, or the forced string; NULL: none */
	char key[64];       /* baseline key (thresholds/<key>.yml): "H100"; "none" */
	char label[128];    /* report label: "8xH100"; "none" */
	char *gpu_type;     /* vLLM's gpu_type: one short name per GPU, "H100\nH100"; "" for none */
	double memory_mib;  /* memory.total of the first GPU; NAN when unknown or forced */
	const char *source; /* "nvidia-smi", "flag", "env", "suite", "none" */
	int detected;       /* GPUs nvidia-smi reported; -1 when it could not be asked */
	char note[256];     /* why nothing was detected, or "" */
};

void pg_gpu_info_init(struct pg_gpu_info *g);
void pg_gpu_info_release(struct pg_gpu_info *g);

/*
 * Ask nvidia-smi (first on PATH; as gpu/gputool_io.h runs it: at most
 * 10 s, never again once it hung). A missing or failing nvidia-smi is not
 * an error: the result is "none" with a note. Returns
 * PG_ERR only when output cannot be parsed.
 */
int pg_gpu_detect(struct pg_gpu_info *out, struct pg_error *err);

/*
 * Detect, then apply the precedence above: flag (may be NULL), then
 * $PERFGATE_GPU, then suite_gpu (may be NULL). `detected` keeps what
 * nvidia-smi saw either way.
 */
int pg_gpu_resolve(struct pg_gpu_info *out, const char *flag, const char *suite_gpu,
		   struct pg_error *err);

/* Fill g from a forced string (no nvidia-smi call). */
void pg_gpu_force(struct pg_gpu_info *g, const char *raw, const char *source);

/* perfgate.gpu: {"key", "name", "count", "label", "source"}; new reference. */
json_t *pg_gpu_info_json(const struct pg_gpu_info *g);

/*
 * GPU hygiene between tests: wait until every GPU's memory.used (from
 * nvidia-smi) is below threshold_mib, polling once a second, for at most
 * timeout seconds. vLLM's driver waits on GPU 0 only, forever. Returns 0
 * when idle (or when there is no nvidia-smi to ask: *waited stays 0 and
 * note says so), PG_EINFRA on timeout naming each busy GPU, PG_ECANCEL
 * when *stop becomes non-zero.
 */
int pg_gpu_wait_idle(double threshold_mib, double timeout, const volatile sig_atomic_t *stop,
		     double *waited, struct pg_error *err);

#endif
