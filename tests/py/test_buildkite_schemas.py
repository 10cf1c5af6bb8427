"""plugin.yml, the examples of the README and docs/, example pipelines and
generated pipelines
against Buildkite's schemas (copies in tests/data/schemas, see README there)
and against the plugin's own configuration schema: the checks the
buildkite-plugin-linter makes, without Docker."""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

import jsonschema
import yaml

SRC = os.environ.get("PERFGATE_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
TESTS = os.environ.get("PERFGATE_TESTS", os.path.join(SRC, "tests"))
PERFGATE = os.environ.get("PERFGATE_BIN")
SCHEMAS = os.path.join(TESTS, "data", "schemas")
PLUGIN_ID = "perfgate/perfgate"


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def load_plugin_yml():
    with open(os.path.join(SRC, "plugin.yml"), encoding="utf-8") as f:
        return yaml.safe_load(f)


def is_our_plugin(source):
    """The linter's matching: shorthand id, github.com/<id>, full URLs with
    or without .git and the -buildkite-plugin suffix; a #ref is required."""
    if "#" not in source:
        return False
    location = source.split("#", 1)[0]
    candidates = {
        PLUGIN_ID,
        "github.com/" + PLUGIN_ID,
        "github.com/%s-buildkite-plugin" % PLUGIN_ID,
    }
    location = re.sub(r"^(https?|ssh)://(git@)?", "", location)
    location = re.sub(r"\.git$", "", location)
    return location in candidates


def plugin_configs(steps):
    """(label, config) for every use of our plugin in a list of steps,
    group steps flattened."""
    for step in steps or []:
        if not isinstance(step, dict):
            continue
        if "group" in step:
            yield from plugin_configs(step.get("steps"))
            continue
        plugins = step.get("plugins")
        if not isinstance(plugins, list):
            continue
        for entry in plugins:
            if isinstance(entry, dict):
                for source, config in entry.items():
                    if is_our_plugin(source):
                        yield step.get("label", step.get("key", "?")), config or {}


class PluginYml(unittest.TestCase):
    def test_plugin_yml_is_a_valid_plugin_definition(self):
        plugin = load_plugin_yml()
        jsonschema.validate(plugin, load_json(os.path.join(SCHEMAS, "buildkite-plugin.schema.json")))
        config = plugin["configuration"]
        jsonschema.Draft7Validator.check_schema(config)
        self.assertIs(config["additionalProperties"], False)
        for name, prop in config["properties"].items():
            self.assertRegex(name, r"^[a-z][a-z0-9-]*$", "options are kebab-case")
            self.assertTrue(prop.get("description"), name + " has no description")

    def test_configuration_rejects_typos_and_bad_values(self):
        validator = jsonschema.Draft7Validator(load_plugin_yml()["configuration"])
        self.assertEqual(list(validator.iter_errors({"suites": "perf.yml", "gpu": "H100"})), [])
        for bad in ({"suites": "p.yml", "treshold": 1}, {"suites": "p.yml", "mode": "fast"},
                    {"suites": "p.yml", "repeat": 0}, {"suites": "p.yml", "shards": 0},
                    {"suites": "p.yml", "gpus": 3}):
            self.assertTrue(list(validator.iter_errors(bad)), bad)

    @unittest.skipUnless(PERFGATE, "PERFGATE_BIN not set")
    def test_plugin_yml_matches_the_option_table(self):
        """plugin.yml's configuration is what perfgate renders from the
        option table it validates with, so the two cannot drift."""
        out = subprocess.run([PERFGATE, "buildkite", "--print-schema"], check=True,
                             capture_output=True, text=True).stdout
        self.assertEqual(json.loads(out), load_plugin_yml()["configuration"])


def doc_files():
    """The pages a user copies examples from: the README and docs/."""
    return [os.path.join(SRC, "README.md")] + sorted(glob.glob(os.path.join(SRC, "docs", "*.md")))


def readme_examples():
    """Every yml block of the README and docs/ (a suite file's are `yaml`
    blocks without steps or plugins, and pass trivially)."""
    blocks = []
    for path in doc_files():
        with open(path, encoding="utf-8") as f:
            blocks += re.findall(r"^```ya?ml\n(.*?)^```", f.read(), re.S | re.M)
    return blocks


class ReadmeExamples(unittest.TestCase):
    def test_every_readme_example_uses_valid_configuration(self):
        config_schema = load_plugin_yml()["configuration"]
        pipeline_schema = load_json(os.path.join(SCHEMAS, "buildkite-pipeline.schema.json"))
        found = 0
        for block in readme_examples():
            doc = yaml.safe_load(block)
            steps = doc.get("steps") if isinstance(doc, dict) else doc
            if isinstance(doc, dict) and "steps" in doc:
                jsonschema.validate(doc, pipeline_schema)
            for label, config in plugin_configs(steps):
                jsonschema.validate(config, config_schema)
                found += 1
        # the linter fails when no example uses the plugin id
        self.assertGreater(found, 0, "no README example uses " + PLUGIN_ID)


    @unittest.skipUnless(PERFGATE, "PERFGATE_BIN not set")
    def test_inline_suites_in_readme_examples_load(self):
        """An inline suite in an example is a suite perfgate accepts: the
        example pipeline passes `perfgate run --dry-run`."""
        checked = 0
        for block in readme_examples():
            doc = yaml.safe_load(block)
            steps = doc.get("steps") if isinstance(doc, dict) else None
            if not any(isinstance(c.get("suites"), dict) for _, c in plugin_configs(steps)):
                continue
            with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as f:
                f.write(block)
            try:
                r = subprocess.run([PERFGATE, "run", "--dry-run", f.name], capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
            finally:
                os.unlink(f.name)
            checked += 1
        self.assertGreater(checked, 0)


def project_version():
    with open(os.path.join(SRC, "CMakeLists.txt"), encoding="utf-8") as f:
        return re.search(r"project\(perfgate VERSION ([0-9.]+)", f.read()).group(1)


def readme_text():
    with open(os.path.join(SRC, "README.md"), encoding="utf-8") as f:
        return f.read()


class PluginReferences(unittest.TestCase):
    def test_every_reference_names_this_release(self):
        """The linter's version rule, made exact: every `perfgate/perfgate#ref`
        a user may copy (README, docs/, pipelines/) is `#v<project version>`, the tag
        a release of this source gets."""
        want = "%s#v%s" % (PLUGIN_ID, project_version())
        files = doc_files() + glob.glob(os.path.join(SRC, "pipelines", "*.yml"))
        found = 0
        for path in files:
            with open(path, encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    for ref in re.findall(r"\b%s#[^\s:\"'`),]*" % re.escape(PLUGIN_ID), line):
                        found += 1
                        self.assertEqual(ref, want, "%s:%d" % (path, n))
        self.assertGreater(found, 5)

    def test_readme_examples_use_the_plugin_id(self):
        """Every plugin a README example step uses is perfgate itself or a
        well-known plugin, never a placeholder such as acme/perfgate."""
        for block in readme_examples():
            for source in re.findall(r"^\s*- ([^\s:]+#[^\s:]+):", block, re.M):
                self.assertTrue(is_our_plugin(source), source)


class Release(unittest.TestCase):
    """What a release needs (docs/releasing.md): a license, a changelog
    entry for the version every example pins, no tag newer than it."""

    def test_changelog_has_this_version_and_unreleased(self):
        with open(os.path.join(SRC, "CHANGELOG.md"), encoding="utf-8") as f:
            text = f.read()
        self.assertIn("\n## [Unreleased]\n", text)
        self.assertRegex(text, r"\n## \[%s\]" % re.escape(project_version()))

    def test_license(self):
        with open(os.path.join(SRC, "LICENSE"), encoding="utf-8") as f:
            self.assertTrue(f.readline().startswith("MIT License"))

    def test_no_tag_is_newer_than_the_project_version(self):
        """The linter's third rule: README versions are not older than the
        newest vX.Y.Z tag."""
        out = subprocess.run(["git", "-C", SRC, "tag", "--list", "v*"], capture_output=True,
                             text=True)
        version = tuple(int(x) for x in project_version().split("."))
        for tag in out.stdout.split() if out.returncode == 0 else []:
            m = re.fullmatch(r"v(\d+)\.(\d+)\.(\d+)", tag)
            if m:
                self.assertLessEqual(tuple(int(x) for x in m.groups()), version, tag)


class ProjectPipeline(unittest.TestCase):
    """.buildkite/pipeline.yml, perfgate's own: a valid pipeline that runs
    the plugin tester, the linter (with this plugin's id), shellcheck on the
    hooks and plugin shell, .ci/run, and the plugin from the bundle."""

    def setUp(self):
        with open(os.path.join(SRC, ".buildkite", "pipeline.yml"), encoding="utf-8") as f:
            self.doc = yaml.safe_load(f)
        jsonschema.validate(self.doc, load_json(os.path.join(SCHEMAS, "buildkite-pipeline.schema.json")))
        self.plugins = {}
        for step in self.doc["steps"]:
            for entry in step.get("plugins", []):
                for source, config in entry.items():
                    self.plugins[source.split("#")[0]] = (step, config)

    def test_plugin_checks(self):
        self.assertIn("plugin-tester", self.plugins)
        self.assertEqual(self.plugins["plugin-linter"][1]["id"], PLUGIN_ID)
        files = self.plugins["shellcheck"][1]["files"]
        for pattern in ("hooks/**", "plugin/**"):
            self.assertIn(pattern, files)
        # the tester runs `bats tests`: the hook tests are there
        self.assertTrue(glob.glob(os.path.join(SRC, "tests", "*.bats")))
        commands = [s.get("command") for s in self.doc["steps"]]
        self.assertIn(".ci/run", commands)

    def test_the_plugin_from_this_commit_uses_the_bundle(self):
        step, config = self.plugins["${BUILDKITE_PULL_REQUEST_REPO:-$BUILDKITE_REPO}"]
        bundle = [s for s in self.doc["steps"] if s.get("key") == step["depends_on"]][0]
        self.assertIn(config["binary-artifact"], bundle["command"])
        # taken from that step only
        self.assertEqual(config["binary-step"], bundle["key"])
        jsonschema.validate(config, load_plugin_yml()["configuration"])
        if PERFGATE:
            env = {k: v for k, v in os.environ.items() if not k.startswith("BUILDKITE")}
            env["BUILDKITE_PLUGIN_CONFIGURATION"] = json.dumps(config)
            r = subprocess.run([PERFGATE, "buildkite", "--check"], env=env, cwd=SRC,
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)


class ReadmeConfiguration(unittest.TestCase):
    """README's Configuration section: one heading per option, in the option
    table's order, each saying what the schema says."""

    def sections(self):
        text = readme_text()
        config = re.search(r"^## Configuration\n(.*?)^## ", text, re.S | re.M).group(1)
        parts = re.split(r"^### ", config, flags=re.M)[1:]
        out = []
        for part in parts:
            head, _, body = part.partition("\n")
            m = re.match(r"`([a-z-]+)` \((required|optional), (.*)\)$", head)
            self.assertIsNotNone(m, "heading: " + head)
            out.append((m.group(1), m.group(2), m.group(3), body))
        return out

    def test_one_heading_per_option_in_table_order(self):
        props = load_plugin_yml()["configuration"]["properties"]
        self.assertEqual([s[0] for s in self.sections()], list(props))

    def test_headings_and_defaults_agree_with_the_schema(self):
        props = load_plugin_yml()["configuration"]["properties"]
        for name, required, types, body in self.sections():
            prop = props[name]
            self.assertEqual(required, "required" if name == "suites" else "optional", name)
            for value in prop.get("enum", []):
                self.assertIn("`%s`" % value, types, name)
            if "default" in prop:
                default = json.dumps(prop["default"]).strip('"')
                self.assertIn("Default: `%s`" % default, body, name)
            self.assertRegex(body, r"Example: `%s: " % re.escape(name), name)


class Pipelines(unittest.TestCase):
    def check_pipeline(self, doc, where):
        jsonschema.validate(doc, load_json(os.path.join(SCHEMAS, "buildkite-pipeline.schema.json")))
        config_schema = load_plugin_yml()["configuration"]
        for label, config in plugin_configs(doc["steps"]):
            try:
                jsonschema.validate(config, config_schema)
            except jsonschema.ValidationError as e:
                self.fail("%s: step %s: %s" % (where, label, e.message))

    def test_golden_generated_pipelines(self):
        files = glob.glob(os.path.join(TESTS, "golden", "pipelines", "*.yml"))
        self.assertTrue(files)
        for path in files:
            with open(path, encoding="utf-8") as f:
                text = f.read()
            # Buildkite interpolates at upload; $$ is a literal $
            doc = yaml.safe_load(text.replace("$$", "$"))
            self.check_pipeline(doc, path)

    @unittest.skipUnless(PERFGATE, "PERFGATE_BIN not set")
    def test_perfgate_pipeline_output(self):
        suite = os.path.join(TESTS, "data", "buildkite", "suite.yml")
        for args in (["--gpus", "H100"],
                     ["--gpus", "H100,H200,A100,L40S", "--shards", "3", "--queue", "gpu-{gpu_lower}",
                      "--option", "baseline=git", "--option", 'only-on-labels=["perf-$benchmarks"]']):
            out = subprocess.run([PERFGATE, "pipeline", suite, "--plugin", PLUGIN_ID + "#v0.1.0"] + args,
                                 check=True, capture_output=True, text=True).stdout
            self.assertNotIn("$b", out.replace("$$", ""), "a lone $ would be interpolated")
            doc = yaml.safe_load(out.replace("$$", "$"))
            self.check_pipeline(doc, " ".join(args))
            steps = [s for s in doc["steps"] if "plugins" in s]
            if "--shards" in args:
                self.assertEqual(len(steps), 4 * 3 + 4)
                self.assertIn({"wait": None, "continue_on_failure": True}, doc["steps"])
                configs = [c for _, c in plugin_configs(steps)]
                self.assertEqual(sorted({c.get("shard") for c in configs if "shard" in c}),
                                 ["1/3", "2/3", "3/3"])
                self.assertEqual([c["mode"] for c in configs].count("merge"), 4)
                self.assertEqual(configs[0]["only-on-labels"], ["perf-$benchmarks"])
            else:
                self.assertEqual(len(steps), 1)

    def test_example_pipelines(self):
        files = glob.glob(os.path.join(SRC, "pipelines", "*.yml"))
        self.assertTrue(files)
        for path in files:
            with open(path, encoding="utf-8") as f:
                doc = yaml.safe_load(f)
            if isinstance(doc, dict) and "steps" in doc:
                self.check_pipeline(doc, path)
                # the suite files they name are in the repository
                for _, config in plugin_configs(doc["steps"]):
                    if isinstance(config.get("suites"), str):
                        self.assertTrue(os.path.exists(os.path.join(SRC, config["suites"])),
                                        "%s: %s" % (path, config["suites"]))

    @unittest.skipUnless(PERFGATE, "PERFGATE_BIN not set")
    def test_dynamic_example_generates_a_valid_pipeline(self):
        suite = os.path.join(SRC, "pipelines", "suites", "vllm-gpu.yml")
        out = subprocess.run([PERFGATE, "pipeline", suite, "--gpus", "H100,H200,A100,L40S", "--shards",
                              "4", "--plugin", PLUGIN_ID + "#v0.1.0", "--option", "baseline=git"],
                             check=True, capture_output=True, text=True).stdout
        self.check_pipeline(yaml.safe_load(out.replace("$$", "$")), "vllm-gpu.yml x 4 shards")


if __name__ == "__main__":
    unittest.main(verbosity=2)
