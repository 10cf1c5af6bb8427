"""The size checks of the lint label (tests/lint/repeats.py and
tests/lint/readme_length.sh) on small trees of their own: what they count,
what they pass over, and that they fail above their ceiling."""
import os
import subprocess
import sys
import tempfile
import unittest

SRC = os.environ.get("PERFGATE_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
LINT = os.path.join(SRC, "tests", "lint")

BODY = """\
int f(struct x *a, int n)
{
	int total = 0;
	for (int i = 0; i < n; i++)
		total += a[i].size;
	if (total > LIMIT) /* %s */
		return -1;
	a->total = total;
	return total;
}
"""


def repeats(files, ceiling):
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "src", "sub"))
        for name, text in files.items():
            with open(os.path.join(d, "src", name), "w", encoding="utf-8") as f:
                f.write(text)
        with open(os.path.join(d, "ceiling"), "w", encoding="utf-8") as f:
            f.write("%d\n# why\n" % ceiling)
        r = subprocess.run([sys.executable, os.path.join(LINT, "repeats.py"),
                            os.path.join(d, "src"), os.path.join(d, "ceiling")],
                           capture_output=True, text=True)
        return r.returncode, r.stdout, r.stderr


class Repeats(unittest.TestCase):
    def test_a_verbatim_repeat_over_the_ceiling_fails(self):
        code, out, err = repeats({"a.c": BODY % "sum", "sub/b.c": "\n\n" + BODY % "sum"}, 0)
        self.assertEqual(code, 1, out)
        self.assertIn("R1 a.c:1-9 ~ sub/b.c:3-11\n", out)
        self.assertIn("1 pair of places repeat 6 or more lines", out)
        self.assertIn("1 more than the ceiling", err)
        code, out, err = repeats({"a.c": BODY % "sum", "sub/b.c": BODY % "sum"}, 1)
        self.assertEqual(code, 0, err)

    def test_what_is_passed_over(self):
        # white space, blank lines, comment lines and lone braces do not
        # tell two runs apart; a trailing comment that differs does
        spaced = (BODY % "sum").replace("\n\tif", "\n\n\t// why\n\tif").replace("\t", "    ")
        self.assertIn("// why", spaced)
        code, out, _ = repeats({"a.c": BODY % "sum", "b.c": spaced}, 0)
        self.assertEqual(code, 1, out)
        code, out, _ = repeats({"a.c": BODY % "sum", "b.c": BODY % "count"}, 0)
        self.assertEqual(code, 0, out)
        self.assertIn("0 pairs of places", out)

    def test_a_run_in_more_than_eight_places_is_too_common(self):
        files = {"f%d.c" % i: BODY % "sum" for i in range(9)}
        code, out, _ = repeats(files, 0)
        self.assertEqual(code, 0, out)
        files.pop("f8.c")
        code, out, _ = repeats(files, 0)
        self.assertEqual(code, 1, out)
        self.assertIn("28 pairs of places", out)

    def test_fewer_than_the_ceiling_says_to_lower_it(self):
        code, out, _ = repeats({"a.c": BODY % "sum"}, 2)
        self.assertEqual(code, 0)
        self.assertIn("lower it to 0", out)


class ReadmeLength(unittest.TestCase):
    def check(self, lines, limit_text):
        with tempfile.TemporaryDirectory() as d:
            readme, limit = os.path.join(d, "README.md"), os.path.join(d, "limit")
            with open(readme, "w", encoding="utf-8") as f:
                f.write("line\n" * lines)
            with open(limit, "w", encoding="utf-8") as f:
                f.write(limit_text)
            return subprocess.run([os.path.join(LINT, "readme_length.sh"), readme, limit],
                                  capture_output=True, text=True)

    def test_at_the_limit_passes_over_it_fails(self):
        self.assertEqual(self.check(400, "400\n# why\n").returncode, 0)
        r = self.check(401, "400\n# why\n")
        self.assertEqual(r.returncode, 1)
        self.assertIn("401 lines, 1 over the 400", r.stderr)
        self.assertEqual(self.check(3, "# no number\n").returncode, 2)


if __name__ == "__main__":
    unittest.main(verbosity=2)
