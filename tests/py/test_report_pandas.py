#!/usr/bin/python3
"""The report as pandas and tabulate users see it.

- The JSON section of benchmark_results.md loads with
  pd.DataFrame.from_dict(obj[suite]) into the right shapes and dtypes, with
  the reference reports' values bit for bit, and is strict JSON.
- benchmark_results.json loads as records.
- Every markdown table is exactly what Python's tabulate prints for the same
  data (tabulate(df, headers="keys", tablefmt="pipe", showindex=False)),
  which is how vLLM renders it.
- Failed points keep numeric columns numeric.

Runs perfgate (PERFGATE_BIN) on the reference files (PERFGATE_TESTS).
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import pandas as pd
import tabulate

BIN = os.environ["PERFGATE_BIN"]
TESTS = os.environ["PERFGATE_TESTS"]
REF = os.path.join(TESTS, "data", "reference")


def run(*args):
    proc = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise AssertionError(f"perfgate {' '.join(args)}: exit {proc.returncode}\n{proc.stderr}")
    return proc.stdout


def strict_loads(text):
    def reject(token):
        raise ValueError(f"non-standard JSON token {token}")
    return json.loads(text, parse_constant=reject)


def json_section(md):
    m = re.search(r"```json\n(.*?)\n```", md, re.S)
    assert m, "no ```json fence"
    return m.group(1)


def md_tables(md):
    """The pipe tables in markdown text, each as one string."""
    tables, cur = [], []
    for line in md.split("\n"):
        if line.startswith("|"):
            cur.append(line)
        elif cur:
            tables.append("\n".join(cur))
            cur = []
    if cur:
        tables.append("\n".join(cur))
    return tables


def tabulate_like_vllm(df):
    # vLLM passes the DataFrame; we pass rows with missing values as None,
    # which tabulate prints as an empty cell (perfgate's choice over "nan")
    rows = [[None if isinstance(v, float) and math.isnan(v) else v for v in row]
            for row in df.itertuples(index=False)]
    return tabulate.tabulate(rows, headers=list(df.columns), tablefmt="pipe", missingval="")


class ReportPandas(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="perfgate-py-")
        run("import", os.path.join(REF, "vllm-report-h100-h200-a100.md"), "-o",
            os.path.join(cls.tmp, "gpus"))
        run("import", os.path.join(REF, "vllm-report-serving-2node.md"), "-o",
            os.path.join(cls.tmp, "2node"))
        with open(os.path.join(REF, "vllm-report-h100-h200-a100.md")) as f:
            text = f.read()
        cls.reference = [strict_loads(line) for line in text.split("\n") if line.startswith('{"latency"')]
        with open(os.path.join(REF, "vllm-report-serving-2node.md")) as f:
            cls.reference_2node = strict_loads(json_section(f.read()))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def report(self, results, out):
        paths = run("report", results, "-o", out).split()
        # serving results add the dashboard rows (docs/tails.md)
        self.assertEqual(paths[:2], [os.path.join(out, "benchmark_results.md"),
                                     os.path.join(out, "benchmark_results.json")])
        self.assertIn(paths[2:], ([], [os.path.join(out, "benchmark_results_inferencex.json")]))
        if paths[2:]:
            with open(paths[2]) as f:
                rows = json.load(f)
            self.assertTrue(all("tput_per_gpu" in r for r in rows))
        with open(paths[0]) as f:
            md = f.read()
        with open(paths[1]) as f:
            records = f.read()
        return md, records

    def test_gpu_reports_load_with_reference_values(self):
        for gpu, ref in zip(["H100", "H200", "A100"], self.reference):
            md, records_text = self.report(os.path.join(self.tmp, "gpus", gpu),
                                           os.path.join(self.tmp, "out-" + gpu))
            obj = strict_loads(json_section(md))
            shapes = {"latency": (3, 5), "throughput": (3, 3), "serving": (12, 9)}
            for suite, shape in shapes.items():
                df = pd.DataFrame.from_dict(obj[suite])
                refdf = pd.DataFrame.from_dict(ref[suite])
                self.assertEqual(df.shape, shape, suite)
                self.assertEqual(list(df.columns), list(refdf.columns), suite)
                self.assertEqual(df["Test name"].dtype, object)
                for col in df.columns[2:]:
                    self.assertEqual(df[col].dtype, "float64", (suite, col))
                # rows sorted by test name (vLLM's JSON was not)
                self.assertEqual(list(df["Test name"]), sorted(refdf["Test name"]))
                # GPU as the tables show it
                self.assertTrue((df["GPU"] == "8x" + refdf["GPU"][refdf.index[0]].split("\n")[0]).all())
                # every value bit for bit
                mine = df.set_index("Test name")
                theirs = refdf.set_index("Test name")
                for col in df.columns[2:]:
                    for name in theirs.index:
                        self.assertEqual(mine.at[name, col], theirs.at[name, col], (suite, col, name))
                # the markdown table is what tabulate prints for this frame
                self.assertIn(tabulate_like_vllm(df), md_tables(md), suite)
            self.assertEqual(len(md_tables(md)), 3)

            records = strict_loads(records_text)
            self.assertEqual(len(records), 18)
            rdf = pd.DataFrame(records)
            self.assertEqual(list(rdf["Test name"][:3]), sorted(ref["latency"]["Test name"].values()))
            self.assertEqual(rdf["Tput (req/s)"].dtype, "float64")
            self.assertEqual(int(rdf["Mean latency (ms)"].notna().sum()), 3)

    def test_serving_report_round_trips(self):
        md, _ = self.report(os.path.join(self.tmp, "2node"),
                            os.path.join(self.tmp, "out-2node"))
        obj = strict_loads(json_section(md))
        self.assertEqual(obj["latency"], {})
        self.assertEqual(obj["throughput"], {})
        df = pd.DataFrame.from_dict(obj["serving"])
        ref = pd.DataFrame.from_dict(self.reference_2node["serving"])
        self.assertEqual(df.shape, (4, 15))
        self.assertEqual(list(df.columns), list(ref.columns))
        self.assertEqual(df["# of req."].dtype, "int64")
        pd.testing.assert_frame_equal(
            df.drop(columns="GPU").set_index("Test name").sort_index(),
            ref.drop(columns="GPU").set_index("Test name").sort_index(), check_exact=True)
        self.assertIn(tabulate_like_vllm(df), md_tables(md))

    def test_missing_values_and_failed_points(self):
        results = os.path.join(self.tmp, "failed")
        os.makedirs(results)

        def write(name, obj):
            with open(os.path.join(results, name + ".json"), "w") as f:
                json.dump(obj, f)

        write("serving_a_qps_1", {"completed": 200, "request_throughput": 0.99, "mean_ttft_ms": 18.25,
                                  "p99_itl_ms": 1e-05})
        write("serving_a_qps_16", {"completed": 198, "request_throughput": 11.5, "mean_ttft_ms": 1234567.0})
        write("latency_x", {"avg_latency": 1.5, "percentiles": {"50": 1.25, "99": 2.0}})

        # missing values: empty cells, otherwise exactly tabulate's layout
        md, _ = self.report(results, results)
        obj = strict_loads(json_section(md))
        for suite in ["latency", "serving"]:
            df = pd.DataFrame.from_dict(obj[suite])
            self.assertIn(tabulate_like_vllm(df), md_tables(md), suite)
        self.assertEqual(pd.DataFrame.from_dict(obj["serving"])["# of req."].dtype, "int64")

        # a failed point: marked row, numbers null, numeric columns stay numeric
        write("serving_a_qps_inf", {"perfgate": {"suite": "serving", "status": "error",
                                                 "error": "server exited | status 1"}})
        md, records_text = self.report(results, results)
        obj = strict_loads(json_section(md))
        df = pd.DataFrame.from_dict(obj["serving"])
        self.assertEqual(list(df["Test name"]), ["serving_a_qps_1", "serving_a_qps_16", "serving_a_qps_inf"])
        self.assertEqual(list(df["Status"]), ["ok", "ok", "error"])
        self.assertEqual(df["Error"][2], "server exited | status 1")
        for col in ["# of req.", "Tput (req/s)", "Mean TTFT (ms)", "P99 ITL (ms)"]:
            self.assertEqual(df[col].dtype, "float64", col)
        self.assertTrue(math.isnan(df["Tput (req/s)"][2]))
        self.assertTrue(math.isnan(df["P99 ITL (ms)"][1]))
        self.assertRegex(md, r"\| serving_a_qps_inf — \*\*error\*\*: server exited \\\| status 1 +\|")

        records = pd.DataFrame(strict_loads(records_text))
        self.assertEqual(len(records), 4)
        self.assertEqual(records["Test name"][0], "latency_x")
        self.assertEqual(records["Mean latency (ms)"][0], 1500.0)
        self.assertEqual(records["Status"][3], "error")
        # a second report skips its own benchmark_results.json
        md2, _ = self.report(results, results)
        self.assertEqual(md, md2)

if __name__ == "__main__":
    sys.exit(0 if unittest.main(exit=False, verbosity=2).result.wasSuccessful() else 1)
