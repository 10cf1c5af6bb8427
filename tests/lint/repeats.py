#!/usr/bin/python3
"""Verbatim repeats in the C sources, counted against a ceiling.

    tests/lint/repeats.py SRC_DIR CEILING_FILE

A repeat is a run of REPEAT_LINES or more lines that stands the same, to
the letter, in two places of SRC_DIR's *.c and *.h files (two files, or
two places of one). Lines are compared as the `duplicates` tool of the
development machines compares them, so the two agree on what counts:
white space folded; blank lines, lines of comment only, lone punctuation
("}", "});") and #include lines passed over; a run that stands in more than
MAX_PLACES places is too common to be one piece of code written twice (a
table's rows, a cleanup block) and is not counted.

Prints one row a pair of places, the longest run the two share
("R1 a.c:10-24 ~ b.c:40-54 (+2 more runs)"), and exits 1 when there are
more pairs than CEILING_FILE allows: fold the new repeat into one
function, or, when it must stay, raise the ceiling in the same commit and
say why. When there are fewer, it says so: lower the ceiling then, so the
next repeat does not pass unnoticed.
"""
import collections
import os
import re
import sys

REPEAT_LINES = 6
MAX_PLACES = 8
PUNCTUATION = re.compile(r"^[{}()\[\];,]+$")


def strip_comments(text):
    """The text with comments blanked (newlines kept, so line numbers hold)
    and string and character literals left as they are."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def code_lines(path):
    """[(line number, folded line)] of the lines that count: a line with
    code counts whole, its trailing comment too (two lines that say
    different things are not the same line)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    kept = []
    for number, (line, code) in enumerate(zip(text.split("\n"), strip_comments(text).split("\n")), 1):
        code = " ".join(code.split())
        if not code or PUNCTUATION.match(code) or code.startswith("#include"):
            continue
        kept.append((number, " ".join(line.split())))
    return kept


def sources(src):
    for root, dirs, files in os.walk(src):
        dirs.sort()
        for name in sorted(files):
            if name.endswith((".c", ".h")):
                path = os.path.join(root, name)
                yield os.path.relpath(path, src), path


def repeats(src):
    """{(file a, file b): [runs]}, a run (a start, b start, length) in kept
    lines, longest first; files[name] their kept lines."""
    files = {name: code_lines(path) for name, path in sources(src)}
    places = collections.defaultdict(list)
    for name, lines in files.items():
        for i in range(len(lines) - REPEAT_LINES + 1):
            window = tuple(line for _, line in lines[i:i + REPEAT_LINES])
            places[window].append((name, i))
    # each pair of places of a window, on its diagonal (the offset between
    # them), so consecutive windows merge into one run
    diagonals = collections.defaultdict(set)
    for where in places.values():
        if len(where) < 2 or len(where) > MAX_PLACES:
            continue
        for k, (fa, ia) in enumerate(where):
            for fb, ib in where[k + 1:]:
                if (fa, ia) > (fb, ib):
                    fa, ia, fb, ib = fb, ib, fa, ia
                diagonals[(fa, fb, ib - ia)].add(ia)
    pairs = collections.defaultdict(list)
    for (fa, fb, offset), starts in diagonals.items():
        starts = sorted(starts)
        first = prev = starts[0]
        for s in starts[1:] + [None]:
            if s is not None and s == prev + 1:
                prev = s
                continue
            pairs[(fa, fb)].append((first, first + offset, prev - first + REPEAT_LINES))
            if s is not None:
                first = prev = s
    for runs in pairs.values():
        runs.sort(key=lambda r: (-r[2], r[0]))
    return files, pairs


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: repeats.py SRC_DIR CEILING_FILE")
    src, ceiling_file = sys.argv[1], sys.argv[2]
    with open(ceiling_file, encoding="utf-8") as f:
        ceiling = int(f.read().split("#")[0].split()[0])
    files, pairs = repeats(src)
    rows = sorted(pairs.items(), key=lambda p: (-p[1][0][2], p[0]))
    for k, ((fa, fb), runs) in enumerate(rows, 1):
        ia, ib, length = runs[0]
        a, b = files[fa], files[fb]
        more = " (+%d more run%s)" % (len(runs) - 1, "" if len(runs) == 2 else "s") if len(runs) > 1 else ""
        print("R%d %s:%d-%d ~ %s:%d-%d%s" % (k, fa, a[ia][0], a[ia + length - 1][0],
                                            fb, b[ib][0], b[ib + length - 1][0], more))
    n = len(rows)
    print("%d pair%s of places repeat %d or more lines to the letter (ceiling %d, %s)"
          % (n, "" if n == 1 else "s", REPEAT_LINES, ceiling, ceiling_file))
    if n > ceiling:
        print("repeats.py: %d more than the ceiling: fold the repeat into one function, or raise "
              "the ceiling in %s and say why" % (n - ceiling, ceiling_file), file=sys.stderr)
        sys.exit(1)
    if n < ceiling:
        print("repeats.py: %d fewer than the ceiling: lower it to %d in %s"
              % (ceiling - n, n, ceiling_file))


if __name__ == "__main__":
    main()
