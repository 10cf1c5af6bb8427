#ifndef PERFGATE_SYS_FSUTIL_H
#define PERFGATE_SYS_FSUTIL_H

#include <stddef.h>

struct pg_buf;
struct pg_error;
struct pg_strv;

/* Read a whole file into out (appends). PG_ENOTFOUND if it does not exist. */
int pg_file_read(const char *path, struct pg_buf *out, struct pg_error *err);

/*
 * The same, refusing a symbolic link as the last component (O_NOFOLLOW):
 * what perfgate reads from a results directory, which a benchmarked
 * server or command can write into, is that directory's own files, never
 * another file a link points at. PG_ERR naming the link.
 */
int pg_file_read_nofollow(const char *path, struct pg_buf *out, struct pg_error *err);

/*
 * A file named on the command line, where "-" means stdin, as GNU tools
 * have it: read it whole into out (appends). Stdin can be read once; a
 * second "-" reads nothing more. pg_file_arg_name is the name messages
 * use: "<stdin>" for "-", else the path.
 */
int pg_file_read_arg(const char *path, struct pg_buf *out, struct pg_error *err);
const char *pg_file_arg_name(const char *path);

/*
 * Write a file so that readers (and a SIGKILL at any instant) only ever see
 * the old content or the whole new content: the data goes to an unnamed
 * O_TMPFILE in the target directory (a named temporary where the file
 * system lacks O_TMPFILE) and is fsync'ed; a new file is then linked in
 * place, an existing one replaced by linking under a temporary name and
 * renaming over it; the directory is fsync'ed.
 */
int pg_file_write_atomic(const char *path, const void *data, size_t len, struct pg_error *err);

/*
 * The same for content too large to hold at once: fill(ctx, chunk) appends
 * the next piece to the (emptied) chunk and returns nonzero while more
 * follows, 0 with the last piece.
 */
typedef int (*pg_fill_fn)(void *ctx, struct pg_buf *chunk);
int pg_file_write_atomic_fill(const char *path, pg_fill_fn fill, void *ctx, struct pg_error *err);

/*
 * Write many files with pg_file_write_atomic's guarantee (each path holds
 * its old content or the whole new one, at any instant), for one
 * file-system sync instead of two fsyncs per file: every content goes to a
 * temporary next to its target, syncfs(2) makes them all durable, then
 * each is renamed into place and each directory fsync'ed once. 10,000
 * imported results take a second, not a minute. On error the temporaries
 * are removed; files already renamed are complete.
 */
struct pg_file_out {
	const char *path;
	const char *data;
	size_t len;
};
int pg_files_write_atomic(const struct pg_file_out *files, size_t n, struct pg_error *err);

/* mkdir -p; existing directories are fine. */
int pg_mkdir_p(const char *path, struct pg_error *err);

/* Names (not paths) of regular entries in dir ending in suffix (NULL: all),
 * dotfiles excluded, sorted bytewise. Appends to out. */
int pg_dir_list(const char *dir, const char *suffix, struct pg_strv *out, struct pg_error *err);

/* Names of the subdirectories of dir starting with prefix (NULL: all),
 * dotfiles excluded, sorted bytewise. Appends to out. */
int pg_subdir_list(const char *dir, const char *prefix, struct pg_strv *out, struct pg_error *err);

/* pg_dir_list and pg_subdir_list without symbolic links: regular files
 * only, real directories only (lstat). For results directories. */
int pg_dir_list_regular(const char *dir, const char *suffix, struct pg_strv *out,
			struct pg_error *err);
int pg_subdir_list_real(const char *dir, const char *prefix, struct pg_strv *out,
			struct pg_error *err);

/*
 * mkdir -p of base/rel, where every component of rel must be a real
 * directory: one that is a symbolic link (results/charts -> elsewhere) is
 * an error naming it, never written through. base itself may be a link
 * (a results directory the user placed elsewhere). rel may be "" or NULL.
 */
int pg_mkdir_under(const char *base, const char *rel, struct pg_error *err);

/* "a" + "/" + "b" as a new string ("b" alone when it is absolute). */
char *pg_path_join(const char *a, const char *b);

/* path relative to the directory dir ("../rerun/x.json"), both resolved
 * (realpath): a new string, NULL when either does not exist. */
char *pg_path_relative(const char *dir, const char *path);

/*
 * Where path (absolute, or relative to the cwd) lands inside the directory
 * root (a real path, as realpath gives it): its path below root ("a/b.yml"),
 * or NULL when it lies outside. The path is walked one component at a time,
 * every symbolic link on the way followed as the kernel would, and the
 * first step of the walk that reaches root or a path below it decides: from
 * there on the rest of the path is root's, whatever the file system holds
 * (a link out of it, a mount, a nested repository). So a link out of the
 * tree still names its place in the tree, and a link into it from outside
 * (/proc/self/cwd/..., /tmp/x -> tree) is found to be inside. A path that
 * reaches root only as root itself, or leaves it again by "..", walks on.
 */
char *pg_path_under(const char *path, const char *root);

/* A relative path with its "." and ".." folded ("a/./b/../c" -> "a/c"), as
 * a new string; NULL when it is absolute or climbs above its start. */
char *pg_path_fold(const char *rel);

/* The final component without its extension: "r/x_qps_1.json" -> "x_qps_1". */
char *pg_path_stem(const char *path);

#endif
