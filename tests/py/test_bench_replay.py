#!/usr/bin/python3
"""bench/replay runs and its output parses (a smoke test, not a figure).

Six nights of two GROK2 points from the real MI355X series
(tests/data/replay/grok2_six_nights.csv: rows of
shared/data/real-noise/sglang_mi355x_nightly.csv, 3 repeats a night) go
through the real binary night by night (import, gate, record, changes) in
both recording modes; the summary lines and the JSON must say what every
night did, consistently. The figures themselves are bench/replay's to
report (bench/replay/README.md), not this test's.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

BIN = os.environ["PERFGATE_BIN"]
SRC = os.environ["PERFGATE_SRC"]
SERIES = os.path.join(SRC, "tests", "data", "replay", "grok2_six_nights.csv")
REPLAY = os.path.join(SRC, "bench", "replay", "replay.py")

FIGURE = re.compile(r"^(false alarms on flat nights|regressions .*caught on the night or the "
                    r"next|change points named .*): (\d+) of (\d+) .*target [<>]= \d+%: "
                    r"(PASS|FAIL|-)$", re.M)


def replay(*args):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "replay.json")
        p = subprocess.run([sys.executable, REPLAY, SERIES, "--perfgate", BIN, "--json", out,
                            *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=120)
        doc = None
        if os.path.exists(out):
            with open(out) as f:
                doc = json.load(f)
        return p, doc


class ReplaySmoke(unittest.TestCase):
    def check(self, p, doc, record):
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("| CI step | nights | flat nights | false alarms |", p.stdout)
        figures = {m.group(1).split()[0]: (int(m.group(2)), int(m.group(3)))
                   for m in FIGURE.finditer(p.stdout)}
        self.assertEqual(set(figures), {"false", "regressions", "change"}, p.stdout)
        self.assertIn("derived now by bench/replay/truth.py's rule", p.stdout)
        self.assertEqual(doc["record"], record)
        nights = doc["nights"]
        self.assertEqual(len(nights), 6)
        self.assertEqual([n["night"] for n in nights], sorted(n["night"] for n in nights))
        for n in nights:
            self.assertIn(n["exit"], (0, 1), n)
            # every night that failed names the rows that failed it
            self.assertEqual(n["exit"] == 1, bool(n["failing"]), n)
            self.assertEqual(n["recorded"], record == "every" or n["exit"] == 0, n)
        flat = [n for n in nights if n["truth"] == "flat"]
        self.assertEqual(figures["false"], (doc["false_alarms"]["k"], doc["false_alarms"]["n"]))
        self.assertEqual(doc["false_alarms"]["n"], len(flat))
        self.assertEqual(doc["false_alarms"]["k"], sum(n["exit"] == 1 for n in flat))
        self.assertEqual(nights[0]["truth"], "first")

    def test_every_night_recorded(self):
        p, doc = replay()
        self.check(p, doc, "every")

    def test_only_passing_nights_recorded(self):
        p, doc = replay("--record", "passing")
        self.check(p, doc, "passing")

    def test_not_a_series(self):
        with tempfile.NamedTemporaryFile("w", suffix=".csv") as f:
            f.write("date,value\n2025-01-01,1\n")
            f.flush()
            p = subprocess.run([sys.executable, REPLAY, f.name, "--perfgate", BIN],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertRegex(p.stderr, r"\.csv:1: not a nightly series: no column point")


if __name__ == "__main__":
    unittest.main()
