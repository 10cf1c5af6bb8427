"""The plugin options' JSON Schema (tests/golden/plugin-configuration.json,
rendered from buildkite/plugin_config.c's table) is a valid Draft-7 schema, and it
agrees with perfgate's own validation (`perfgate buildkite --check`) on real
step configurations: what the plugin linter accepts, the step accepts.
--check also loads the suites and checks what a step needs before it runs
(a gating GPU's thresholds file, the datasets), so the configurations name
files that exist (in a scratch directory); a missing suite file is
refused."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import jsonschema

tests = os.environ["PERFGATE_TESTS"]
src = os.environ.get("PERFGATE_SRC", os.path.join(tests, ".."))
work = tempfile.mkdtemp(prefix="perfgate-plugin-schema-")
os.makedirs(os.path.join(work, "pipelines", "suites"))
# the suite pins ShareGPT's sha256, which the empty stand-in below cannot
# match: the copy here pins none (tests/bats/datasets.bats checks the pin)
with open(os.path.join(src, "pipelines", "suites", "vllm-gpu.yml")) as f:
    suite = "".join(line for line in f if not line.lstrip().startswith("sha256:"))
with open(os.path.join(work, "pipelines", "suites", "vllm-gpu.yml"), "w") as f:
    f.write(suite)
for f in ("latency-tests.json", "serving-tests.json"):
    shutil.copy(os.path.join(tests, "data", "vllm", f), work)
# what the suites read and the steps gate with: the datasets vLLM's files
# name, the thresholds of the GPUs the configurations give
for f in ("ShareGPT_V3_unfiltered_cleaned_split.json",):
    open(os.path.join(work, f), "w").close()
shutil.copytree(os.path.join(src, "thresholds"), os.path.join(work, "thresholds"),
                ignore=shutil.ignore_patterns("sources"))
with open(os.path.join(work, "s.yml"), "w") as f:
    f.write("defaults: {model: m, server: {command: 'serve {model} --port {port}'}}\n"
            "serving: [{name: serving_a}, {name: serving_b}, {name: serving_c}, {name: serving_d}]\n")
with open(os.path.join(tests, "golden", "plugin-configuration.json")) as f:
    schema = json.load(f)

jsonschema.Draft7Validator.check_schema(schema)
validator = jsonschema.Draft7Validator(schema)

good = [
    {"suites": "pipelines/suites/vllm-gpu.yml"},
    {"suites": ["latency-tests.json", "serving-tests.json"], "mode": "run"},
    {"suites": {"serving": [{"name": "serving_a_tp1", "model": "m",
                             "server": {"command": "serve {model} --port {port}"}}]}, "gpu": "H100",
     "filter": "_tp1", "only": "serving", "repeat": 3, "results-dir": "results/h100",
     "annotate": "on-change", "only-on-labels": ["perf", "perf-full"]},
    {"mode": "report", "baseline": "git", "record-history": True,
     "history-repo": "git@github.com:acme/perf-history.git", "base-branch": "main",
     "confirm": False, "artifacts": False, "context": "perf-h100", "binary": "/usr/bin/perfgate",
     "thresholds": "thresholds", "only-on-labels": "perf"},
    {"suites": "s.yml", "mode": "run", "shard": "2/4", "annotate": "never"},
    {"suites": "s.yml", "mode": "pipeline", "gpus": ["H100", "A100"], "shards": 4,
     "queue": "gpu-{gpu_lower}", "binary-artifact": "perfgate/perfgate.tar.gz",
     "binary": "/opt/perfgate/bin/perfgate"},
    {"mode": "binary", "binary-artifact": ".perfgate/perfgate-x86_64.tar.gz"},
    {"suites": "s.yml", "binary-artifact": "perfgate/perfgate.tar.gz", "binary-step": "perfgate"},
]
bad = [
    {"suites": "s.yml", "thresold": "t"},          # unknown option
    {"suites": "s.yml", "repeat": "three"},        # type
    {"suites": "s.yml", "repeat": 0},              # minimum
    {"suites": "s.yml", "mode": "gates"},          # enum
    {"suites": "s.yml", "confirm": "yes"},         # boolean
    {"suites": 5},                                 # suites type
    {"suites": "s.yml", "shard": "0/4"},           # shard pattern
    {"suites": "s.yml", "shard": "01/4"},
    {"suites": "s.yml", "shard": "2"},
    {"suites": "s.yml", "shard": 2},
    {"suites": "s.yml", "shards": 0},
    {"suites": "s.yml", "gpus": [3]},
    {},                                            # suites required (mode gate)
    {"gpu": "H100", "mode": "run"},
    {"mode": "binary"},                            # binary-artifact required
    {"mode": "binary", "binary-artifact": "/tmp/perfgate.tar.gz"},   # absolute
    {"mode": "binary", "binary-artifact": "bin/*.tar.gz"},           # a glob
    {"mode": "binary", "binary-artifact": "perfgate"},               # not a bundle
    {"suites": "s.yml", "binary-artifact": "p.tar.gz"},   # from which step?
    {"suites": "s.yml", "mode": "run", "binary-artifact": "p.tar.gz"},
]
# the C check is stricter where a schema cannot be: shard 5/4 passes the
# pattern, but INDEX must not exceed COUNT; suite files must load
stricter = [{"suites": "s.yml", "shard": "5/4"}, {"suites": "missing.yml"},
            {"suites": "s.yml", "filter": "no_such_test"},
            # "." parts, and a binary where the step downloads one
            {"mode": "binary", "binary-artifact": "./perfgate.tar.gz"},
            {"suites": "s.yml", "binary": "/opt/perfgate", "binary-artifact": "p.tar.gz",
             "binary-step": "perfgate"},
            # binary-step without a bundle, or where the bundle is uploaded
            {"suites": "s.yml", "binary-step": "perfgate"},
            {"mode": "binary", "binary-artifact": "p.tar.gz", "binary-step": "perfgate"}]



def perfgate_accepts(cfg):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BUILDKITE")}
    env["BUILDKITE_PLUGIN_CONFIGURATION"] = json.dumps(cfg)
    r = subprocess.run([os.environ["PERFGATE_BIN"], "buildkite", "--check"], env=env,
                       capture_output=True, text=True, timeout=60, cwd=work)
    if r.returncode not in (0, 2):
        raise SystemExit(f"perfgate buildkite --check exited {r.returncode}: {r.stderr}")
    return r.returncode == 0, r.stderr.strip()


failures = []
for cfg in good:
    errors = list(validator.iter_errors(cfg))
    if errors:
        failures.append(f"valid config rejected by the schema: {cfg}: {errors[0].message}")
    ok, msg = perfgate_accepts(cfg)
    if not ok:
        failures.append(f"valid config rejected by perfgate: {cfg}: {msg}")
for cfg in bad:
    if validator.is_valid(cfg):
        failures.append(f"invalid config accepted by the schema: {cfg}")
    ok, msg = perfgate_accepts(cfg)
    if ok:
        failures.append(f"invalid config accepted by perfgate: {cfg}")
    elif "option '" not in msg:
        failures.append(f"perfgate's message does not name the option: {msg}")
for cfg in stricter:
    if not validator.is_valid(cfg) or perfgate_accepts(cfg)[0]:
        failures.append(f"expected the schema to accept and perfgate to refuse: {cfg}")

shutil.rmtree(work)
if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"schema and perfgate agree on {len(good)} valid and {len(bad)} invalid configurations")
