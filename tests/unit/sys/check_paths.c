/* Where a path lands in a working tree, by every spelling a pull request
 * could use to move its thresholds file out of the base branch's reach
 * (links out, links in, "..", /proc/self/cwd), and folding relative paths.
 * Real directories and links in a temporary directory. */
#include "testutil.h"

#include "base/buf.h"
#include "base/error.h"
#include "sys/fsutil.h"
#include "sys/gitinfo.h"

#include <git2.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *joined(const char *a, const char *b)
{
	struct pg_buf p = PG_BUF_INIT;
	pg_buf_printf(&p, "%s/%s", a, b);
	return pg_buf_detach(&p);
}

static void check_under(const char *path, const char *root, const char *want)
{
	char *got = pg_path_under(path, root);
	if (!want)
		ck_assert_msg(!got, "%s: expected outside, got '%s'", path, got);
	else
		ck_assert_msg(got && !strcmp(got, want), "%s: expected '%s', got '%s'", path, want,
			      got ? got : "(outside)");
	free(got);
}

START_TEST(paths_land_where_the_kernel_takes_them)
{
	char *tmp = tu_mkdtemp(), *dir = realpath(tmp, NULL);
	char *tree = joined(dir, "tree"), *out = joined(dir, "out"), *p;
	char cwd[PATH_MAX];

	ck_assert(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(mkdir(tree, 0755), 0);
	ck_assert_int_eq(mkdir(out, 0755), 0);
	p = joined(tree, "sub");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	free(p);
	/* tree/thresholds -> ../out (a committed link out of the tree) */
	p = joined(tree, "thresholds");
	ck_assert_int_eq(symlink(out, p), 0);
	free(p);
	/* out/in -> tree (a link into the tree from outside) */
	p = joined(out, "in");
	ck_assert_int_eq(symlink(tree, p), 0);
	free(p);
	/* out/via -> tree/thresholds: outside, through the tree, outside again */
	p = joined(out, "via");
	{
		char *target = joined(tree, "thresholds");
		ck_assert_int_eq(symlink(target, p), 0);
		free(target);
	}
	free(p);
	/* a loop */
	p = joined(out, "loop");
	ck_assert_int_eq(symlink(p, p), 0);
	free(p);

	/* plainly inside, lexically and with "." and ".." */
	p = joined(tree, "sub/H100.yml");
	check_under(p, tree, "sub/H100.yml");
	free(p);
	p = joined(tree, "./sub/../sub/./H100.yml");
	check_under(p, tree, "sub/H100.yml");
	free(p);
	/* a link out of the tree names its place in the tree */
	p = joined(tree, "thresholds/H100.yml");
	check_under(p, tree, "thresholds/H100.yml");
	free(p);
	/* a link into the tree from outside lands inside */
	p = joined(out, "in/thresholds/H100.yml");
	check_under(p, tree, "thresholds/H100.yml");
	free(p);
	p = joined(out, "via/H100.yml");
	check_under(p, tree, "thresholds/H100.yml");
	free(p);
	/* outside, and leaving the tree again by ".." */
	p = joined(out, "H100.yml");
	check_under(p, tree, NULL);
	free(p);
	p = joined(tree, "../out/H100.yml");
	check_under(p, tree, NULL);
	free(p);
	p = joined(out, "loop/H100.yml");
	check_under(p, tree, NULL);
	free(p);
	/* the tree itself is not a file in it; a sibling with a longer name
	 * is not inside */
	check_under(tree, tree, NULL);
	p = joined(dir, "tree2/x.yml");
	check_under(p, tree, NULL);
	free(p);
	/* relative to the cwd, and /proc/self/cwd */
	ck_assert_int_eq(chdir(tree), 0);
	check_under("thresholds/H100.yml", tree, "thresholds/H100.yml");
	check_under("sub/../thresholds/H100.yml", tree, "thresholds/H100.yml");
	if (access("/proc/self/cwd", F_OK) == 0)
		check_under("/proc/self/cwd/thresholds/H100.yml", tree, "thresholds/H100.yml");
	ck_assert_int_eq(chdir(cwd), 0);

	tu_rm_rf(dir);
	free(tree);
	free(out);
	free(dir);
	free(tmp);
}
END_TEST

START_TEST(relative_paths_fold)
{
	const struct {
		const char *in, *out;
	} cases[] = {
		{ "a/b.yml", "a/b.yml" }, { "a/./b/../c", "a/c" }, { "./x", "x" },
		{ "a/../..", NULL },      { "/etc/x", NULL },      { "a//b/", "a/b" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = pg_path_fold(cases[i].in);
		if (!cases[i].out)
			ck_assert_msg(!got, "%s: expected NULL, got '%s'", cases[i].in, got);
		else
			ck_assert_msg(got && !strcmp(got, cases[i].out), "%s: got '%s'",
				      cases[i].in, got ? got : "(null)");
		free(got);
	}
}
END_TEST

static void sh(const char *dir, const char *cmd)
{
	struct pg_buf b = PG_BUF_INIT;
	pg_buf_printf(&b, "cd '%s' && %s >/dev/null 2>&1", dir, cmd);
	ck_assert_msg(system(b.ptr) == 0, "%s", b.ptr);
	pg_buf_release(&b);
}

/* read path at rev from the checkout around the cwd: 0 and the text, or the
 * error's code with a message containing want */
static void check_read(const char *rev, const char *path, int code, const char *want)
{
	struct pg_buf out = PG_BUF_INIT;
	struct pg_error err = PG_ERROR_INIT;
	bool outside = true;
	int rc = pg_git_read_at(&out, &outside, NULL, rev, path, &err);

	ck_assert_msg(rc == code, "%s at %s: rc %d (%s)", path, rev, rc, err.msg);
	ck_assert(!outside);
	if (code == 0)
		ck_assert_msg(out.len && strstr(out.ptr, want), "%s: read '%s'", path, out.ptr);
	else
		ck_assert_msg(strstr(err.msg, want), "%s: '%s'", path, err.msg);
	pg_buf_release(&out);
}

START_TEST(a_commit_is_read_through_its_own_links_only)
{
	char *tmp = tu_mkdtemp(), *top = realpath(tmp, NULL), *dir = joined(top, "repo");
	char cwd[PATH_MAX];

	git_libgit2_init();
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	ck_assert(getcwd(cwd, sizeof(cwd)));
	sh(dir, "git init -q -b main . && git config user.email t@e && git config user.name t && "
		"mkdir -p conf/gpus && echo 'gpu: H100 # conf' >conf/gpus/H100.yml && "
		"ln -s conf/gpus thresholds && ln -s ../conf/gpus conf/up && ln -s /etc out && "
		"ln -s loop1 loop2 && ln -s loop2 loop1 && "
		"git add -A && git commit -q -m links && git tag links");
	ck_assert_int_eq(chdir(dir), 0);
	/* links inside the commit's tree are followed, as a checkout would */
	check_read("links", "thresholds/H100.yml", 0, "# conf");
	check_read("links", "conf/up/H100.yml", 0, "# conf");
	/* a link out of the repository, a loop, a missing file */
	check_read("links", "out/passwd", PG_ECONFIG,
		   "out is a symbolic link out of the repository");
	check_read("links", "loop1/x.yml", PG_ENOTFOUND, "too many symbolic links");
	check_read("links", "thresholds/A100.yml", PG_ENOTFOUND, "not in commit");
	check_read("links", "conf/gpus", PG_ENOTFOUND, "not a file");
	/* the working tree no longer decides: thresholds made a real
	 * directory with another file, the commit's copy is still read */
	sh(dir,
	   "rm thresholds && mkdir thresholds && echo 'gpu: H100 # mine' >thresholds/H100.yml");
	check_read("links", "thresholds/H100.yml", 0, "# conf");
	/* a submodule in the commit is another repository's content */
	sh(dir, "git init -q -b main ../other && cd ../other && git config user.email t@e && "
		"git config user.name t && echo x >H100.yml && git add H100.yml && "
		"git commit -q -m other");
	sh(dir, "rm -rf thresholds && git rm -q thresholds && "
		"git -c protocol.file.allow=always submodule add -q ../other thresholds && "
		"git commit -q -m sub && git tag sub");
	check_read("sub", "thresholds/H100.yml", PG_ECONFIG, "thresholds is a submodule in commit");
	ck_assert_int_eq(chdir(cwd), 0);
	tu_rm_rf(top);
	free(dir);
	free(top);
	free(tmp);
	git_libgit2_shutdown();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("paths");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, paths_land_where_the_kernel_takes_them);
	tcase_add_test(tc, relative_paths_fold);
	suite_add_tcase(s, tc);
	tc = tcase_create("git");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, a_commit_is_read_through_its_own_links_only);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
