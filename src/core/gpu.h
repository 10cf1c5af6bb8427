#ifndef PERFGATE_CORE_GPU_H
#define PERFGATE_CORE_GPU_H

#include <stddef.h>

/*
 * GPU names. Raw strings come in several shapes: nvidia-smi's full names
 * ("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"), vLLM's gpu_type (one
 * short name per GPU, "H100\nH100\n..."), report labels ("8xH100") and
 * llm-d's "4xNVIDIA_L40S".
 */

/*
 * The report's GPU cell exactly as vLLM's converter makes it:
 * "<number of lines>x<first line>" ("H100\nH100" -> "2xH100",
 * "A100-SXM4-80GB" -> "1xA100-SXM4-80GB"), except that a string already in
 * "<n>x<name>" form is kept as it is. Writes into out (size bytes).
 */
char *pg_gpu_label(char *out, size_t size, const char *raw);

/*
 * The baseline key (thresholds/<key>.yml) for any of the shapes above:
 * drop a "<n>x" count and an "NVIDIA" vendor word, take the model token
 * (the first word, cut at '-'), and keep it when it looks like a GPU model
 * (a letter, digits, optional letters: H100, H200, A100, L40S, B200, A10G).
 * "NVIDIA H100 80GB HBM3" -> "H100", "NVIDIA A100-SXM4-80GB" -> "A100",
 * "4xNVIDIA_L40S" -> "L40S", "H100\nH100" -> "H100". Anything else passes
 * through unchanged (its first line, trimmed): a new GPU gets its own key
 * rather than a wrong one.
 */
char *pg_gpu_key(char *out, size_t size, const char *raw);

/* The GPU count a raw string implies: "8xH100" -> 8, "H100\nH100" -> 2,
 * anything else -> 1; 0 for an empty string. */
int pg_gpu_count(const char *raw);

#endif
