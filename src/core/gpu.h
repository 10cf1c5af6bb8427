#ifndef PERFGATE_CORE_GPU_H
#define PERFGATE_CORE_GPU_H

#include <stddef.h>

/*
 * GPU names. Raw strings come in several shapes: nvidia-smi's full names
 * ("NVIDIA H100 80GB HBM3"), vLLM's gpu_type (one short name per GPU,
 * "H100\nH100\n..."), report labels ("8xH100") and llm-d's
 * "4xNVIDIA_L40S".
 *
 * pg_gpu_label gives the report's GPU cell exactly as vLLM's converter
 * does: "<number of lines>x<first line>" ("H100\nH100" -> "2xH100",
 * "A100-SXM4-80GB" -> "1xA100-SXM4-80GB"), except that a string already in
 * "<n>x<name>" form is kept as it is. Writes into out (size bytes).
 */
char *pg_gpu_label(char *out, size_t size, const char *raw);

#endif
