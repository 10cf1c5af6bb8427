#ifndef PERFGATE_BASE_FILENAME_H
#define PERFGATE_BASE_FILENAME_H

#include <stddef.h>

/*
 * Names of the files perfgate makes from names it is given (test and point
 * names, GPU keys): at most 255 bytes each, as file systems allow, and no
 * two the same, even without regard to case (a site or the artifacts
 * copied to macOS or Windows). Pure string work.
 */

/*
 * Cap s (a file-name-safe string, changed in place) at max bytes: one
 * longer keeps its first max - 17 bytes (fewer, not to split a UTF-8
 * character) and ends in "-" and 16 hex digits of a hash of whole (the
 * name s was made from): stable from run to run, different for names that
 * share their start. max is at least 18.
 */
void pg_file_name_cap(char *s, size_t max, const char *whole);

/*
 * Make files[0..n) (owned; made from names[0..n), e.g. by pg_chart_stem;
 * ending in ext, "" for none) unique, in place: each of those that collide
 * becomes "<stem>-<8 hex digits of its name's hash><ext>", and more when
 * that too is taken; so a file keeps its name, and the links to it, when
 * others that do not collide with it come and go. The longest name grows
 * by 20 bytes.
 */
void pg_file_names_unique(char **files, const char *const *names, size_t n, const char *ext);

#endif
