#!/usr/bin/python3
"""benchmark_results.json as vLLM's comparison tools read it.

vLLM compares benchmark runs with compare-json-results.py
(.buildkite/performance-benchmarks/scripts/, earlier
.buildkite/nightly-benchmarks/scripts/). Its generations differ in how
they line rows up, and each needs certain columns
(docs/design/vllm-benchmarks.md §7):

- the current script (and the newest, which leaves TP Size and PP Size
  out of the keys) aligns the rows of every file on the key columns
  Model, Dataset Name, Input Len, Output Len, TP Size, PP Size,
  "# of max concurrency." and qps (those present in all files; "No common
  key columns found" when none is), keeps rows with a TPOT "P99", compares
  "Output Tput (tok/s)", "P99 TTFT (ms)" and "P99" (or the Median ones),
  groups by the first four keys and sorts by "# of max concurrency."; given
  one file it first splits the serving rows by (TP Size, PP Size) and
  compares the configurations with each other;
- the earliest script lines rows up by position after dropping rows
  without a "P99" and compares "Output Tput (tok/s)", "Median TTFT (ms)"
  and "Median" next to each file's "Test name";
- in between, the first rows' info columns were "# of max concurrency.",
  "Total input tokens" and "Total output tokens", then Model, Dataset Name,
  Input Len, Output Len, "# of max concurrency." and qps, grouped by the
  first four.

Those rules are re-implemented here from their description, not copied,
and run on perfgate's output: two real `perfgate run`s against the mock
server (the second with a slower engine) of two serving tests (TP 1, and
TP 2 / PP 2 / bfloat16 through a server command that names them as vLLM's
does). The key columns perfgate writes are also checked against what
vLLM's converter (convert-results-json-to-markdown.py) derives from the
same results directory: server and client command flags, model_id, the
GPU string.
"""
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest

import pandas as pd

BIN = os.environ["PERFGATE_BIN"]

INFO_COLS = ["Model", "Dataset Name", "Input Len", "Output Len", "TP Size", "PP Size",
             "# of max concurrency.", "qps"]
NUMERIC_KEYS = ["Input Len", "Output Len", "TP Size", "PP Size", "# of max concurrency.", "qps"]
DROP = "P99"  # TPOT's p99, as vLLM's converter names it


class NoCommonKeys(Exception):
    pass


def read_records(path):
    return pd.read_json(path, orient="records")


def current_compare(files, metric, info_cols=INFO_COLS):
    """The current script's alignment: one frame with the key columns, then
    per file its metric and, from the second file on, the ratio to the
    first (base/current for latency columns, current/base otherwise)."""
    frames = [read_records(f) for f in files]
    keys = [c for c in info_cols if all(c in df.columns for df in frames)]
    if not keys:
        keys = [c for c in info_cols if c in frames[0].columns]
    if not keys:
        raise NoCommonKeys("No common key columns found from info_cols across the input files.")
    series, meta = [], None
    for df in frames:
        if DROP in df.columns:
            df = df.dropna(subset=[DROP]).reset_index(drop=True)
        for c in NUMERIC_KEYS:
            if c in df.columns:
                df[c] = pd.to_numeric(df[c], errors="coerce")
        indexed = df.set_index(keys, drop=False)
        if meta is None:
            meta = indexed[keys].groupby(level=keys, dropna=False).first()
        series.append(indexed[metric].groupby(level=keys, dropna=False).mean())
    out = [meta]
    for i, s in enumerate(series):
        out.append(s.rename("file%d" % (i + 1)))
        if i:
            latency = "P99" in metric or "Median" in metric
            ratio = series[0] / s if latency else s / series[0]
            out.append(ratio.mask(series[0] == 0).rename("Ratio 1 vs %d" % (i + 1)))
    table = pd.concat(out, axis=1).reset_index(drop=True)
    groups = [c for c in info_cols[:4] if c in table.columns]
    if not groups:
        raise NoCommonKeys("No valid group-by columns")
    return table.sort_values(by="# of max concurrency."), groups


def split_by_tp_pp(path, outdir):
    """One file: its serving rows, one file per (TP Size, PP Size), missing
    sizes counting as 1."""
    with open(path) as f:
        df = pd.DataFrame(json.load(f))
    df = df[df["Test name"].astype(str).str.contains("serving", case=False)].copy()
    for c in ("TP Size", "PP Size"):
        if c not in df.columns:
            df[c] = 1
        df[c] = pd.to_numeric(df[c], errors="coerce").fillna(1).astype(int)
    paths = []
    for (tp, pp), group in df.groupby(["TP Size", "PP Size"]):
        sub = os.path.join(outdir, "tp%d_pp%d" % (tp, pp))
        os.makedirs(sub, exist_ok=True)
        paths.append(os.path.join(sub, "benchmark_results.json"))
        group.to_json(paths[-1], orient="records", indent=2)
    return paths


def earliest_compare(files, metric):
    """The first script: rows by position, after dropping rows without a
    "P99"; each file's "Test name" and metric side by side."""
    cols = []
    for i, f in enumerate(files):
        df = read_records(f).dropna(subset=[DROP]).reset_index(drop=True)
        cols.append(df["Test name"].rename("name%d" % i))
        cols.append(df[metric].rename("value%d" % i))
    return pd.concat(cols, axis=1)


def positional_with_info(files, metric, info_cols):
    """The scripts in between: the first file's info columns, then each
    file's metric by position."""
    cols = []
    for i, f in enumerate(files):
        df = read_records(f).dropna(subset=[DROP]).reset_index(drop=True)
        if i == 0:
            cols.extend(df[c] for c in info_cols)  # a KeyError if one is missing
        cols.append(df[metric].rename("value%d" % i))
    return pd.concat(cols, axis=1)


def coerce(text):
    """A command-line value as vLLM's converter types it: ints and
    decimals become numbers, everything else ("inf" included) stays text."""
    if text.lstrip("+-").isdigit():
        return int(text)
    try:
        if "." in text and text.lower() not in ("inf", "-inf", "nan"):
            return float(text)
    except ValueError:
        pass
    return text


def flags(command):
    toks = shlex.split(command)
    out = {}
    for i, t in enumerate(toks):
        if not t.startswith("--"):
            continue
        if "=" in t:
            k, v = t.split("=", 1)
            out[k] = coerce(v)
        elif i + 1 < len(toks) and not toks[i + 1].startswith("--"):
            out[t] = coerce(toks[i + 1])
        else:
            out[t] = True
    return out


def converter_keys(results_dir, name):
    """What vLLM's converter derives for a serving point from perfgate's
    result file and .commands sidecar: Model from model_id, TP/PP/dtype
    from the server command, dataset, lengths and rate from the client
    command, "# of max concurrency." from max_concurrency, GPU from
    gpu_type ("H100\\nH100" -> "2xH100")."""
    with open(os.path.join(results_dir, name + ".json")) as f:
        result = json.load(f)
    with open(os.path.join(results_dir, name + ".commands")) as f:
        commands = json.load(f)
    server, client = flags(commands["server_command"]), flags(commands["client_command"])
    row = {"Model": result["model_id"], "# of max concurrency.": result["max_concurrency"]}
    for flag, col in [("--tensor-parallel-size", "TP Size"), ("--pipeline-parallel-size", "PP Size"),
                      ("--dtype", "dtype")]:
        if flag in server:
            row[col] = server[flag]
    for flag, col in [("--dataset-name", "Dataset Name"), ("--random-input-len", "Input Len"),
                      ("--random-output-len", "Output Len"), ("--request-rate", "qps")]:
        if flag in client:
            row[col] = client[flag]
    gpu = commands["gpu_type"]  # a string: the converter splits it on newlines
    row["GPU"] = "%dx%s" % (len(gpu.split("\n")), gpu.split("\n")[0])
    return row


def perfgate(*args, env=None):
    proc = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=120, env=env)
    if proc.returncode != 0:
        raise AssertionError("perfgate %s: exit %d\n%s" % (" ".join(args), proc.returncode, proc.stderr))
    return proc


SUITE = """
defaults:
  model: perfgate-mock
  server: {{ready: /health, ready_timeout: 30, stop_timeout: 5}}
  qps: [inf]
  max_concurrency: [1, 4]
  num_prompts: 8
  dataset: {{name: random, input_len: 32, output_len: 16}}
serving:
  - name: serving_mock_tp1_random_32_16
    server: {{command: "perfgate mock-server --port {{port}} --model {{model}} --ttft-ms 5 --itl-ms {itl}"}}
  - name: serving_mock_tp2_pp2_random_32_16
    tp: 2
    server:
      # vLLM's flags on the command line, as vllm serve would get them;
      # the mock server behind sh does not see them
      command: >-
        sh -c 'exec "$0" mock-server --port "$1" --model perfgate-mock --ttft-ms 5 --itl-ms {itl}'
        {bin} {{port}} --tensor-parallel-size {{tp}} --pipeline-parallel-size 2 --dtype bfloat16
"""


class VllmCompare(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="perfgate-vllm-compare-")
        env = dict(os.environ, PERFGATE_GPU="8xH100")
        env.pop("BUILDKITE", None)
        cls.runs = {}
        for name, itl in [("base", 2), ("current", 3)]:
            suite = os.path.join(cls.tmp, name + ".yml")
            with open(suite, "w") as f:
                f.write(SUITE.format(itl=itl, bin=shlex.quote(BIN)))
            out = os.path.join(cls.tmp, name)
            perfgate("run", suite, "-o", out, env=env)
            cls.runs[name] = out
        cls.files = [os.path.join(cls.runs[n], "benchmark_results.json") for n in ("base", "current")]
        with open(cls.files[0]) as f:
            cls.base = json.load(f)
        with open(cls.files[1]) as f:
            cls.current = json.load(f)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def record(self, records, name):
        return next(r for r in records if r["Test name"] == name)

    def test_current_script_aligns_two_runs_on_every_key(self):
        for metric in ["Output Tput (tok/s)", "P99 TTFT (ms)", "P99", "Median TTFT (ms)", "Median"]:
            table, groups = current_compare(self.files, metric)
            self.assertEqual(groups, ["Model", "Dataset Name", "Input Len", "Output Len"])
            self.assertEqual(len(table), 4, metric)
            self.assertFalse(table[["file1", "file2", "Ratio 1 vs 2"]].isna().any().any(), metric)
            self.assertEqual(sorted(table["# of max concurrency."]), [1, 1, 4, 4])
            self.assertTrue(all(math.isinf(q) for q in table["qps"]))
            for _, row in table.iterrows():
                # the row is the same point in both files
                name = "serving_mock_tp%d%s_random_32_16_qps_inf_concurrency_%d" % (
                    row["TP Size"], "_pp2" if row["PP Size"] == 2 else "",
                    row["# of max concurrency."])
                b, c = self.record(self.base, name)[metric], self.record(self.current, name)[metric]
                # pandas' read_json may round the last bit (precise_float=False)
                self.assertTrue(math.isclose(row["file1"], b, rel_tol=1e-15), (row["file1"], b))
                self.assertTrue(math.isclose(row["file2"], c, rel_tol=1e-15), (row["file2"], c))
                want = b / c if ("P99" in metric or "Median" in metric) else c / b
                self.assertTrue(math.isclose(row["Ratio 1 vs 2"], want, rel_tol=1e-12))
        # the slower engine shows: TPOT ratios (base/current) below 1
        table, _ = current_compare(self.files, "Median")
        self.assertTrue((table["Ratio 1 vs 2"] < 1).all(), table["Ratio 1 vs 2"].tolist())

    def test_newest_script_without_tp_and_pp_keys(self):
        """The newest version comments TP and PP out of its keys: two
        configurations of one model at one concurrency are one row, their
        values averaged."""
        keys = [c for c in INFO_COLS if c not in ("TP Size", "PP Size")]
        table, groups = current_compare(self.files, "P99 TTFT (ms)", keys)
        self.assertEqual(groups, ["Model", "Dataset Name", "Input Len", "Output Len"])
        self.assertEqual(sorted(table["# of max concurrency."]), [1, 4])
        for _, row in table.iterrows():
            c = row["# of max concurrency."]
            for col, records in (("file1", self.base), ("file2", self.current)):
                values = [r["P99 TTFT (ms)"] for r in records
                          if r["# of max concurrency."] == c]
                self.assertEqual(len(values), 2)
                self.assertTrue(math.isclose(row[col], sum(values) / 2, rel_tol=1e-12))

    def test_current_script_splits_one_run_by_tp_and_pp(self):
        split = os.path.join(self.tmp, "splits")
        paths = split_by_tp_pp(self.files[0], split)
        self.assertEqual([os.path.relpath(p, split) for p in paths],
                         ["tp1_pp1/benchmark_results.json", "tp2_pp2/benchmark_results.json"])
        keys = [c for c in INFO_COLS if c not in ("TP Size", "PP Size")]
        table, _ = current_compare(paths, "Output Tput (tok/s)", keys)
        self.assertEqual(len(table), 2)
        self.assertFalse(table["Ratio 1 vs 2"].isna().any())

    def test_the_table_columns_alone_would_not_do(self):
        """What the issue saw: records without the key columns."""
        bare = os.path.join(self.tmp, "bare.json")
        with open(bare, "w") as f:
            json.dump([{k: v for k, v in r.items() if k not in INFO_COLS} for r in self.base], f)
        with self.assertRaises(NoCommonKeys):
            current_compare([bare, bare], "P99")

    def test_earliest_script_lines_rows_up_by_position(self):
        for metric in ["Output Tput (tok/s)", "Median TTFT (ms)", "Median"]:
            table = earliest_compare(self.files, metric)
            self.assertEqual(len(table), 4)
            self.assertEqual(list(table["name0"]), list(table["name1"]))
            self.assertTrue(all(n.startswith("serving_") for n in table["name0"]))
            self.assertFalse(table.isna().any().any())

    def test_scripts_in_between_find_their_info_columns(self):
        for info in (["# of max concurrency.", "Total input tokens", "Total output tokens"],
                     ["Model", "Dataset Name", "Input Len", "Output Len", "# of max concurrency.", "qps"]):
            table = positional_with_info(self.files, "Median TTFT (ms)", info)
            self.assertEqual(len(table), 4)
            self.assertFalse(table[info[:3]].isna().any().any(), info)
            groups = table.groupby(info[:4] if len(info) > 4 else info[:1], dropna=False)
            self.assertGreaterEqual(groups.ngroups, 1)

    def test_key_columns_agree_with_vllms_converter(self):
        for r in self.base:
            mine = converter_keys(self.runs["base"], r["Test name"])
            for col, value in mine.items():
                self.assertEqual(r[col], value, (r["Test name"], col))
            # where the server command does not say, vLLM has no value and
            # perfgate knows TP from the suite and leaves PP unknown
            if "TP Size" not in mine:
                self.assertEqual(r["TP Size"], 1)
                self.assertIsNone(r["PP Size"])

    def test_vllm_names_for_compared_columns(self):
        for r in self.base:
            self.assertEqual(r["Median"], r["Median TPOT (ms)"])
            self.assertEqual(r["P99"], r["P99 TPOT (ms)"])
            self.assertEqual(r["Total Token Tput (tok/s)"], r["Total Tput (tok/s)"])
            self.assertEqual(r["Total input tokens"], 8 * 32)
            self.assertEqual(r["Total output tokens"], 8 * 16)

    # vLLM's current convert-results-json-to-markdown.py selects these
    # serving columns, in this order, where they exist
    # (research: vllm-perf-ci.md, 4.2)
    CURRENT_SERVING_COLUMNS = [
        "Test name", "Model", "Dataset Name", "Input Len", "Output Len", "TP Size", "PP Size",
        "dtype", "GPU", "# of req.", "qps", "# of max concurrency.", "Tput (req/s)",
        "Total Token Tput (tok/s)", "Output Tput (tok/s)", "Mean TTFT (ms)", "Median TTFT (ms)",
        "P99 TTFT (ms)", "STD TTFT (ms)", "Mean TPOT (ms)", "Median", "P99", "STD TPOT (ms)",
        "Mean ITL (ms)", "Median ITL (ms)", "P99 ITL (ms)",
    ]

    def test_every_column_of_vllms_current_converter(self):
        for r in self.base:
            missing = [c for c in self.CURRENT_SERVING_COLUMNS if c not in r]
            self.assertEqual(missing, [], r["Test name"])
            # the spread the run measured, as vllm bench serve writes it
            with open(os.path.join(self.runs["base"], r["Test name"] + ".json")) as f:
                result = json.load(f)
            self.assertEqual(r["STD TTFT (ms)"], result["std_ttft_ms"])
            self.assertEqual(r["STD TPOT (ms)"], result["std_tpot_ms"])
            self.assertGreater(r["STD TTFT (ms)"], 0)


if __name__ == "__main__":
    sys.exit(0 if unittest.main(exit=False, verbosity=2).result.wasSuccessful() else 1)
