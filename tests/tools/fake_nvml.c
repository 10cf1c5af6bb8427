/*
 * A fake libnvidia-ml.so.1 for the telemetry tests (tests/bats/
 * telemetry.bats puts its directory on LD_LIBRARY_PATH): one H100 whose
 * energy counter is a known function of time, so that the energy perfgate
 * reports can be checked against it.
 *
 *   FAKE_NVML_POWER_W        the GPU's constant power (default 500): its
 *                            counter rises by exactly that many J a second
 *                            of CLOCK_MONOTONIC from nvmlInit
 *   FAKE_NVML_RESET_AFTER_S  from that many seconds after nvmlInit, the
 *                            counter starts again from zero (a driver
 *                            reload)
 *
 * Only the calls perfgate's reader requires and the few the test reads
 * are here; the optional ones it looks up with dlsym are absent, as on a
 * driver without them.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int nvmlReturn_t;
typedef struct fake_device *nvmlDevice_t;

#define SUCCESS           0
#define ERROR_INVALID_ARG 2

/* the counter's value at nvmlInit, mJ: energy "since the driver loaded" */
#define COUNTER_AT_INIT_MJ 7200000000ULL

struct fake_device {
	int index;
};

static struct fake_device gpu0 = { 0 };
static double t_init;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double env_double(const char *name, double fallback)
{
	const char *v = getenv(name);
	char *end;
	double x;

	if (!v || !*v)
		return fallback;
	x = strtod(v, &end);
	return *end ? fallback : x;
}

nvmlReturn_t nvmlInit_v2(void)
{
	t_init = now();
	return SUCCESS;
}

nvmlReturn_t nvmlShutdown(void)
{
	return SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
	*count = 1;
	return SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
	if (index != 0)
		return ERROR_INVALID_ARG;
	*device = &gpu0;
	return SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
	(void)device;
	if (length < 22)
		return ERROR_INVALID_ARG;
	memcpy(name, "NVIDIA H100 80GB HBM3", 22);
	return SUCCESS;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned int *mhz)
{
	(void)device;
	*mhz = type == 1 ? 1980 : 2619;
	return SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, int type, unsigned int *mhz)
{
	return nvmlDeviceGetClockInfo(device, type, mhz);
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *milliwatts)
{
	(void)device;
	*milliwatts = (unsigned int)(env_double("FAKE_NVML_POWER_W", 500) * 1000);
	return SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long *mj)
{
	double watts = env_double("FAKE_NVML_POWER_W", 500);
	double reset = env_double("FAKE_NVML_RESET_AFTER_S", -1);
	double t = now() - t_init;

	(void)device;
	if (reset >= 0 && t >= reset)
		*mj = (unsigned long long)(watts * (t - reset) * 1000);
	else
		*mj = COUNTER_AT_INIT_MJ + (unsigned long long)(watts * t * 1000);
	return SUCCESS;
}
