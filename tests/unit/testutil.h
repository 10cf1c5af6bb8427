#ifndef PERFGATE_TESTS_TESTUTIL_H
#define PERFGATE_TESTS_TESTUTIL_H

#include <check.h>
#include <stddef.h>

/*
 * Shared helpers for the Check suites. Paths come from the environment that
 * CTest sets (tests/CMakeLists.txt): PERFGATE_SRC, PERFGATE_TESTS,
 * PERFGATE_BIN, PERFGATE_BUILD.
 */

/* getenv(name) or a test failure when it is missing. */
const char *tu_env(const char *name);

/* A fresh empty directory under $TMPDIR; caller frees the string and may
 * remove the tree with tu_rm_rf. */
char *tu_mkdtemp(void);
void tu_rm_rf(const char *path);

/* A Check fixture (tcase_add_checked_fixture(tc, tu_tmpdir_setup,
 * tu_tmpdir_teardown)): tu_tmpdir is a fresh empty directory for each test,
 * removed after it. tu_tmpdir_path("x") is "<tu_tmpdir>/x"; caller frees. */
extern char *tu_tmpdir;
void tu_tmpdir_setup(void);
void tu_tmpdir_teardown(void);
char *tu_tmpdir_path(const char *name);

/* Read a whole file (NUL-terminated; *len if not NULL). Fails the test when
 * unreadable. Caller frees. */
char *tu_read_file(const char *path, size_t *len);
void tu_write_file(const char *path, const char *text);

/* Path under tests/: tu_test_path("golden/report.md"). Caller frees. */
char *tu_test_path(const char *rel);

/*
 * Compare text with a golden file under tests/golden. With
 * PERFGATE_UPDATE_GOLDEN=1 in the environment the golden file is rewritten
 * instead (then review the diff). On mismatch the test fails showing the
 * first differing line.
 */
void tu_assert_golden(const char *golden_rel, const char *text);

/*
 * Markdown a user reads cannot be broken by the names in it: every row of
 * a pipe table has as many unescaped '|' as the table's header, no table
 * line holds an unescaped '`', '[' or ']', and no '<' starts a tag
 * other than those named in allowed_tags (NULL-terminated; NULL: none),
 * outside code spans and fenced code. Fails the test naming the line.
 */
void tu_assert_markdown_safe(const char *md, const char *const *allowed_tags);

/* Run a Suite and return the process exit status (0 when all passed). */
int tu_run_suite(Suite *s);

#endif
