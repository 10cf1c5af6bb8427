/*
 * GPU names (gpu/gpu.c): nvidia-smi's CSV output as the runner reads it,
 * and the GPU strings result files and thresholds carry ("8xH100",
 * "4xNVIDIA_L40S", "NVIDIA H100 80GB HBM3\nNVIDIA H100 80GB HBM3"), turned
 * into labels, keys and short names.
 */
#include "fuzz.h"

#include "base/strutil.h"
#include "gpu/gpu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fz_strdup(data, size);
	struct pg_strv names = PG_STRV_INIT;
	double *mib = NULL, *nums = NULL;
	char out[64];
	int n = pg_gpu_parse_query(&names, &mib, s);

	if (n >= 0)
		FZ_CHECK((size_t)n == names.n);
	n = pg_gpu_parse_numbers(&nums, s);
	FZ_CHECK(pg_gpu_label(out, sizeof(out), s) == out && strlen(out) < sizeof(out));
	FZ_CHECK(pg_gpu_key(out, sizeof(out), s) == out && strlen(out) < sizeof(out));
	FZ_CHECK(pg_gpu_short(out, sizeof(out), s) == out && strlen(out) < sizeof(out));
	(void)pg_gpu_count(s);
	/* the smallest buffers the API allows */
	(void)pg_gpu_label(out, 1, s);
	(void)pg_gpu_key(out, 2, s);
	(void)pg_gpu_short(out, 3, s);
	pg_strv_release(&names);
	free(mib);
	free(nums);
	free(s);
	return 0;
}
