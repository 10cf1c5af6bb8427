#ifndef PERFGATE_GPU_GPU_H
#define PERFGATE_GPU_GPU_H

#include <stdbool.h>
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
 * "4xNVIDIA_L40S" -> "L40S", "H100\nH100" -> "H100", AMD's "AMD Instinct
 * MI300X OAM" -> "MI300X", "MI325X", "AMD Instinct MI250" -> "MI250" (an
 * "AMD" and "Instinct" word is dropped like "NVIDIA"). Anything else passes
 * through unchanged (its first line, trimmed): a new GPU gets its own key
 * rather than a wrong one -- as long as it can name a file: a key is
 * always pg_gpu_key_valid, any other character made '_' ("AMD MI300X" ->
 * "AMD_MI300X", "../../x" -> "______x" is no path).
 */
char *pg_gpu_key(char *out, size_t size, const char *raw);

/* Longest GPU key. */
#define PG_GPU_KEY_MAX 64

/* A key names thresholds/<key>.yml and a directory of the history, like a
 * test name its result files: letters, digits, '_', '-' and '.', not
 * first '.' or '-', no "..", at most PG_GPU_KEY_MAX bytes. */
bool pg_gpu_key_valid(const char *key);

/* Whether a GPU name a user gave (gpu:, --gpu, PERFGATE_GPU, the plugin's
 * gpu) makes a key that names a file in thresholds/ and nowhere else: no
 * '/', '\\', "..", control character, first '.' or '-', at most
 * PG_GPU_KEY_MAX bytes. A path is a configuration error, never repaired;
 * other characters are made '_' as for a detected name ("NVIDIA RTX
 * A6000" -> "NVIDIA_RTX_A6000", the key nvidia-smi's name gets too). */
bool pg_gpu_name_ok(const char *raw);
/* What the error says after the name. */
#define PG_GPU_NAME_HINT                                                                           \
	"a GPU name cannot be a path (no '/', '\\', '..', control characters, first '.' or "       \
	"'-', at most 64 characters): it names thresholds/<GPU>.yml"

/*
 * Whether key (pg_gpu_key's) is a GPU model perfgate knows by name: the
 * data-centre GPUs inference runs on (H100, H200, A100, L40S, B200, MI300X
 * and their kin). A key outside the list is not wrong -- a new GPU gets
 * its own key -- but worth a word when nothing else knows it either: a
 * typo (H10, H1OO) would label every result and look for its own
 * thresholds file.
 */
bool pg_gpu_known(const char *key);

/*
 * The name key was most likely meant to be, for "did you mean": among
 * have (the keys of the thresholds files there are), then the known
 * models; a key of have that differs only in case first. NULL when
 * nothing is close.
 */
const char *pg_gpu_nearest(const char *key, const char *const *have, size_t n_have);

/* The GPU count a raw string implies: "8xH100" -> 8, "H100\nH100" -> 2,
 * anything else -> 1; 0 for an empty string. */
int pg_gpu_count(const char *raw);

/*
 * vLLM's gpu_type word for one nvidia-smi name: its second
 * whitespace-separated word, as `awk '{print $2}'` gives it ("NVIDIA H100
 * 80GB HBM3" -> "H100", "NVIDIA A100-SXM4-80GB" -> "A100-SXM4-80GB"); the
 * first word when there is only one. Writes into out (size bytes).
 */
char *pg_gpu_short(char *out, size_t size, const char *name);

/*
 * Parse the output of `nvidia-smi --query-gpu=name,memory.total
 * --format=csv,noheader`: one GPU per non-empty line, "<name>, <n> MiB".
 * Appends each name to names and its memory in MiB to *mib (grown with
 * realloc, NAN for "[N/A]"); returns the number of GPUs, or -1 when a line
 * has no name.
 */
struct pg_strv;
int pg_gpu_parse_query(struct pg_strv *names, double **mib, const char *csv);

/*
 * Parse one number per non-empty line (`--query-gpu=memory.used
 * --format=csv,noheader,nounits`) into *out (realloc'ed); returns the count,
 * or -1 on a line that is not a number ("[N/A]" included: the caller cannot
 * wait on a value it cannot read).
 */
int pg_gpu_parse_numbers(double **out, const char *csv);

#endif
