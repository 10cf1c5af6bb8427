"""The plugin options' JSON Schema (tests/golden/plugin-configuration.json,
rendered from core/plugin_config.c's table) is a valid Draft-7 schema, and it
agrees with perfgate's own validation on real step configurations."""
import json
import os
import sys

import jsonschema

tests = os.environ["PERFGATE_TESTS"]
with open(os.path.join(tests, "golden", "plugin-configuration.json")) as f:
    schema = json.load(f)

jsonschema.Draft7Validator.check_schema(schema)
validator = jsonschema.Draft7Validator(schema)

good = [
    {"suites": "pipelines/suites/vllm-gpu.yml"},
    {"suites": ["latency-tests.json", "serving-tests.json"], "mode": "run"},
    {"suites": {"serving": [{"name": "serving_a", "model": "m"}]}, "gpu": "H100",
     "filter": "_tp1", "only": "serving", "repeat": 3, "results-dir": "results/h100",
     "annotate": "on-change", "only-on-labels": ["perf", "perf-full"]},
    {"mode": "report", "baseline": "git", "record-history": True,
     "history-repo": "git@github.com:acme/perf-history.git", "base-branch": "main",
     "confirm": False, "artifacts": False, "context": "perf-h100", "binary": "/usr/bin/perfgate",
     "thresholds": "thresholds", "only-on-labels": "perf"},
]
bad = [
    {"suites": "s.yml", "thresold": "t"},          # unknown option
    {"suites": "s.yml", "repeat": "three"},        # type
    {"suites": "s.yml", "repeat": 0},              # minimum
    {"suites": "s.yml", "mode": "gates"},          # enum
    {"suites": "s.yml", "confirm": "yes"},         # boolean
    {"suites": 5},                                 # suites type
]

failures = []
for cfg in good:
    errors = list(validator.iter_errors(cfg))
    if errors:
        failures.append(f"valid config rejected: {cfg}: {errors[0].message}")
for cfg in bad:
    if validator.is_valid(cfg):
        failures.append(f"invalid config accepted: {cfg}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"schema ok: {len(good)} valid and {len(bad)} invalid configurations agree")
