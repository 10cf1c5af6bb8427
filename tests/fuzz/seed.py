#!/usr/bin/python3
"""tests/fuzz/seed.py: (re)write the seed corpora of the fuzz harnesses.

usage: tests/fuzz/seed.py

Writes tests/fuzz/corpus/<harness>/s-* from the project's fixtures
(tests/data, whose reference/ holds copies of /work/shared/reference's
real reports and result files, thresholds/, pipelines/, golden streams)
and from small inputs written here, in each harness's input layout (control
bytes first where the harness takes them, "\\n\\x1e" before a second
input). Files not named s-* -- reproducers of findings (f-*) and inputs a
campaign added on purpose -- are left alone. Deterministic: running it
twice changes nothing.
"""
import glob
import json
import os

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(ROOT, "tests", "data")
SEP = b"\n\x1e"


def rd(path):
    with open(os.path.join(ROOT, path), "rb") as f:
        return f.read()


class Corpus:
    def __init__(self, name):
        self.dir = os.path.join(HERE, "corpus", name)
        os.makedirs(self.dir, exist_ok=True)
        for old in glob.glob(os.path.join(self.dir, "s-*")):
            os.remove(old)

    def add(self, label, data):
        if isinstance(data, str):
            data = data.encode()
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in label)
        with open(os.path.join(self.dir, "s-" + safe), "wb") as f:
            f.write(data)


# ---- streams --------------------------------------------------------------

def trace_bodies():
    t = json.loads(rd("tests/data/loadgen/trace.json"))
    out = []
    for i, r in enumerate(t["requests"]):
        out.append((i, r["status"], "".join(piece for _, piece in r["body"]).encode()))
    return out


def sse_streams():
    streams = [("trace%d" % i, body) for i, st, body in trace_bodies() if st == 200]
    for g in ("chat-stream.txt", "completions-stream.txt"):
        streams.append((g, rd("tests/golden/mock-server/" + g)))
    streams += [
        ("crlf", b"data: {\"choices\":[{\"text\":\"a\"}]}\r\n\r\ndata: [DONE]\r\n\r\n"),
        ("cr", b"data: {\"choices\":[{\"text\":\"a\"}]}\r\rdata: [DONE]\r\r"),
        ("bom", b"\xef\xbb\xbfdata:{\"choices\":[{\"text\":\"x\"}]}\n\n"),
        ("comments", b": ping\n\n:heartbeat\ndata: {\"choices\":[]}\n\n"),
        ("multiline", b"data: {\"choices\":\ndata: [{\"text\":\"y\"}]}\nid: 3\nretry: 10\n\n"),
        ("error-event", b"event: error\ndata: {\"error\":{\"message\":\"boom\"}}\n\n"),
        ("error-object", b"data: {\"object\":\"error\",\"message\":\"bad\"}\n\n"),
        ("usage", b"data: {\"choices\":[{\"text\":\"z\"}],\"usage\":null}\n\n"
                  b"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}}\n\n"
                  b"data: [DONE]\n\n"),
        ("no-blank-at-end", b"data: {\"choices\":[{\"text\":\"a\"}]}\ndata: [DONE]"),
        ("field-no-colon", b"data\n\nevent\ndata:x\n\n"),
    ]
    return streams


def seed_sse():
    c = Corpus("sse")
    for label, s in sse_streams():
        c.add(label, b"\x00" + s)
        # three cuts, and a small event limit
        c.add(label + "-cut", bytes([0x0B, 40, 128, 200]) + s)


def seed_oai_resp():
    c = Corpus("oai_resp")
    status_ctl = {0: 0, 200: 1, 500: 3}
    for i, st, body in trace_bodies():
        c.add("trace%d" % i, bytes([status_ctl.get(st, 1), 2, 60, 180]) + body)
    for label, s in sse_streams():
        c.add(label, bytes([1, 0]) + s)
    c.add("json-body", bytes([1, 1, 100]) +
          b'{"id":"cmpl-1","object":"text_completion","choices":[{"text":"hi"}],'
          b'"usage":{"prompt_tokens":3,"completion_tokens":7,"total_tokens":10}}')
    c.add("http500", bytes([3, 0]) + b'{"error":{"message":"overloaded","code":500}}')
    c.add("disconnect", bytes([1 | (3 << 2), 0]) + b"data: {\"choices\":[{\"text\":\"a\"}]}\n\n")
    c.add("timeout", bytes([1 | (2 << 2), 0]) + b"data: {\"choi")
    c.add("no-response", bytes([0, 0]))


def chunked(body, size=7):
    out = b""
    for i in range(0, len(body), size):
        piece = body[i:i + size]
        out += b"%x\r\n" % len(piece) + piece + b"\r\n"
    return out + b"0\r\n\r\n"


def seed_http1():
    c = Corpus("http1")
    sse = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
    for label, s in sse_streams()[:4]:
        c.add(label + "-chunked", bytes([3, 30, 90, 200]) +
              sse + b"Transfer-Encoding: chunked\r\n\r\n" + chunked(s))
        c.add(label + "-length", bytes([2, 50, 150]) +
              sse + b"Content-Length: %d\r\n\r\n" % len(s) + s)
    err = b'{"error":{"message":"overloaded","code":500}}'
    for label, r in [
        ("http500", b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n"
                    b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(err) + err),
        ("until-close", b"HTTP/1.0 200 OK\r\n\r\ndata: x\n\n"),
        ("continue", b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"),
        ("lf-only", b"HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n2\nok\n0\n\n"),
        ("ext-trailer", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                        b"3;x=y\r\nabc\r\n0\r\nX-T: 1\r\n\r\n"),
        ("extra", b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxHTTP/1.1 200 OK\r\n"),
        ("truncated", b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"),
        ("bad-chunk", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nxy"),
        ("empty", b""),
    ]:
        c.add(label, bytes([1, 40]) + r)


def seed_chunk_skim():
    c = Corpus("chunk_skim")
    n = 0
    for label, s in sse_streams():
        for line in s.replace(b"\r\n", b"\n").split(b"\n"):
            if line.startswith(b"data:") and b"{" in line:
                c.add("%s-%d" % (label, n), line[5:].strip())
                n += 1
    c.add("nested", b'{"a":{"b":[1,2,{"c":null}]},"choices":[ ],"usage":{"prompt_tokens":-1,'
                    b'"completion_tokens":1.5e3}}')
    c.add("escapes", b'{"choices":[{"text":"\\u00e9\\n\\"x\\""}],"error":null}')
    c.add("numbers", b'{"usage":{"prompt_tokens":123456789012345678,"completion_tokens":0}}')


# ---- imports, results ----------------------------------------------------

def seed_imports():
    js = Corpus("import_json")
    for p in sorted(glob.glob(os.path.join(DATA, "import", "*.json")) +
                    glob.glob(os.path.join(DATA, "import", "*.jsonl")) +
                    glob.glob(os.path.join(DATA, "reference", "*.json")) +
                    glob.glob(os.path.join(DATA, "gate", "base", "*.json"))):
        js.add(os.path.relpath(p, DATA), open(p, "rb").read())
    js.add("array", b'[{"completed": 3, "request_throughput": 1.5, "request_rate": "inf"},'
                    b' {"avg_latency": 1.2, "latencies": [1.1, 1.3], "percentiles": {"50": 1.2}}]')
    js.add("nan-tokens", b'{"completed": 1, "mean_ttft_ms": NaN, "request_rate": Infinity}')
    js.add("back-to-back", b'{"elapsed_time": 2, "num_requests": 10}{"elapsed_time": 3,'
                           b' "num_requests": 10, "requests_per_second": 3.3}')

    rp = Corpus("import_report")
    for p in ["tests/data/import/report-nan.md", "tests/data/reference/vllm-report-serving-2node.md",
              "tests/data/reference/vllm-report-h100-h200-a100.md"]:
        rp.add(os.path.basename(p), rd(p))
    rp.add("tiny", b"## Serving tests\n\n## json version of the benchmarking tables\n\n```json\n"
                   b'{"serving": {"Test name": {"0": "serving_x_qps_1"}, "GPU": {"0": "H100"},'
                   b' "Mean TTFT (ms)": {"0": 12.5}}}\n```\n')

    pr = Corpus("import_printed")
    for p in ["tests/data/import/serving-newest.txt", "tests/data/import/sglang-crlf.txt",
              "tests/data/reference/vllm-bench-serve-stdout-sample.txt"]:
        pr.add(os.path.basename(p), rd(p))
    # the inputs of issue 16's finding, in the printed importer's corpus too
    pr.add("issue16-stat-key", b"Max (ms):Serving Benchmark Result")
    pr.add("two-blocks", b"============ Serving Benchmark Result ============\n"
                         b"Successful requests:                     10\n"
                         b"Mean TTFT (ms):                          12.5\n"
                         b"==================================================\n"
                         b"noise\n"
                         b"============ Serving Benchmark Result ============\n"
                         b"Traffic request rate:                    4\n"
                         b"Request throughput (req/s):              3.9\n"
                         b"P99 ITL (ms):                            8\n")

    rs = Corpus("results")
    for d in ["base", "broken", "same"]:
        for p in sorted(glob.glob(os.path.join(DATA, "gate", d, "*.json"))):
            rs.add("gate-%s-%s" % (d, os.path.basename(p)), open(p, "rb").read())
    for p in sorted(glob.glob(os.path.join(DATA, "import", "*.json"))):
        side = p[:-5] + ".commands"
        data = open(p, "rb").read()
        if os.path.exists(side):
            data += SEP + open(side, "rb").read()
        rs.add("import-" + os.path.basename(p), data)


# ---- suites, pipelines, plugin options ---------------------------------------

def is_pipeline(data):
    try:
        doc = yaml.safe_load(data)
    except yaml.YAMLError:
        return False
    return (isinstance(doc, dict) and "steps" in doc) or \
        (isinstance(doc, list) and doc and isinstance(doc[0], dict) and
         ("plugins" in doc[0] or "label" in doc[0] or "command" in doc[0]))


def seed_config():
    cfg, pipe = Corpus("config"), Corpus("pipeline")
    files = sorted(glob.glob(os.path.join(DATA, "config", "*")) +
                   glob.glob(os.path.join(DATA, "vllm", "*.json")) +
                   glob.glob(os.path.join(DATA, "pipeline", "*.yml")) +
                   glob.glob(os.path.join(DATA, "pipeline", "suites", "*.yml")) +
                   glob.glob(os.path.join(ROOT, "pipelines", "*.yml")) +
                   glob.glob(os.path.join(ROOT, "pipelines", "suites", "*.yml")) +
                   [os.path.join(DATA, "buildkite", "suite.yml")])
    for p in files:
        if p.endswith("alias-bomb.yml"):
            # bounded but ~1 s each under ASan (check_config tests it): it
            # would take most of a campaign's time
            continue
        data = open(p, "rb").read()
        label = os.path.relpath(p, ROOT)
        if is_pipeline(data):
            pipe.add(label, data)
            pipe.add(label + "-matrix", data + SEP + b"gpu=H100\nH200\n")
        else:
            cfg.add(label, data)
    cfg.add("filter", rd("tests/data/vllm/serving-tests.json") + SEP + b"qps_(1|inf)$")
    # issue 16's finding: a mapping made only of a merge key
    cfg.add("issue16-merge-only", b"x-common: &common\n  name: serving_c\n  model: m\n"
                                  b"  server: {command: 'serve {model} --port {port}'}\n"
                                  b"serving:\n  - <<: *common\n")
    pipe.add("inline-matrix", b"steps:\n  - label: perf {{matrix}}\n    matrix: [H100, A100]\n"
                              b"    plugins:\n      - perfgate#v1:\n          gpu: \"{{matrix}}\"\n"
                              b"          suites: suite.yml\n" + SEP + b"H100\n")
    pipe.add("env", b"env:\n  MODEL: m\nsteps:\n  - plugins:\n      - acme/perfgate#v1:\n"
                    b"          suites:\n            serving:\n              - name: s_$MODEL\n"
                    b"                model: $MODEL\n                qps: [1]\n"
                    b"                server: {command: 'x --port {port}'}\n")


def plugin_configs():
    out = []
    for p in sorted(glob.glob(os.path.join(ROOT, "pipelines", "*.yml")) +
                    glob.glob(os.path.join(DATA, "config", "pipeline-*.yml")) +
                    glob.glob(os.path.join(DATA, "pipeline", "*.yml"))):
        try:
            doc = yaml.safe_load(open(p, "rb"))
        except yaml.YAMLError:
            continue
        steps = doc.get("steps", []) if isinstance(doc, dict) else doc
        for i, st in enumerate(steps or []):
            if not isinstance(st, dict):
                continue
            for pl in st.get("plugins", []) or []:
                if isinstance(pl, dict):
                    for src, conf in pl.items():
                        if "perfgate" in src:
                            out.append(("%s-%d" % (os.path.basename(p), i), src, conf))
    return out


def seed_plugin_config():
    c = Corpus("plugin_config")
    env = SEP + (b"BUILDKITE_PULL_REQUEST=42\nBUILDKITE_PULL_REQUEST_LABELS=perf, run-perf\n"
                 b"BUILDKITE_BRANCH=feature\nBUILDKITE_STEP_KEY=perf-h100\n"
                 b"BUILDKITE_BUILD_URL=https://buildkite.com/acme/p/builds/1\nBUILDKITE_JOB_ID=j1\n")
    for label, src, conf in plugin_configs():
        text = json.dumps(conf, sort_keys=False).encode()
        c.add(label, text)
        c.add(label + "-env", text + env)
        c.add(label + "-plugins", json.dumps([{"docker#v5": {}}, {src: conf}]).encode())
    c.add("bare-string", b'["github.com/acme/perfgate-buildkite-plugin#v1.0.0"]')
    c.add("pipeline-mode", json.dumps({"mode": "pipeline", "suites": "suite.yml",
                                       "gpus": ["H100", "A100"], "shards": 2,
                                       "queue": "gpu-{gpu_lower}", "only-on-labels": "perf"}).encode())
    c.add("inline-vllm", json.dumps({"suites": [{"test_name": "serving_x",
                                                "server_parameters": {"model": "m"},
                                                "client_parameters": {"model": "m"},
                                                "qps_list": [1, "inf"]}]}).encode())


def seed_thresholds():
    c = Corpus("thresholds")
    for p in sorted(glob.glob(os.path.join(ROOT, "thresholds", "*.yml"))):
        c.add(os.path.basename(p), open(p, "rb").read())
    c.add("small", b"gpu: H100\npolicy:\n  alpha: 0.05\n  metrics:\n    mean_ttft_ms: "
                   b"{tolerance: 5%, floor: 2 ms, gate: true}\n  tests:\n    'serving_*':\n"
                   b"      p99_itl_ms: {gate: false, escalate: 20%}\nbaselines:\n"
                   b"  serving_x_qps_4:\n    suite: serving\n    qps: 4\n    values:\n"
                   b"      mean_ttft_ms: 12.5\n      output_throughput: [900, 910, 905]\n"
                   b"  latency_y:\n    suite: latency\n    values: {avg_latency: 1.25}\n"
                   b"other: {}\n")


def seed_history():
    c = Corpus("history")
    rec = {"commit": "9f1c" * 10, "date": "2026-11-22T13:00:00Z",
           "build_url": "https://buildkite.com/acme/p/builds/7", "branch": "main",
           "gpu": "8xH100", "suite": "serving", "point": "serving_x_qps_4",
           "test": "serving_x", "qps": 4, "max_concurrency": None, "repeats": 3,
           "metrics": {"output_throughput": [2418.1, 2411.0, 2420.5],
                       "mean_ttft_ms": [12.5, 12.7, 12.4], "p99_itl_ms": [30.1]}}
    lines = []
    for k in range(6):
        r = dict(rec)
        r["date"] = "2026-11-%02dT13:00:00Z" % (10 + k)
        r["metrics"] = {m: [v * (1 + 0.01 * k) for v in vs] for m, vs in rec["metrics"].items()}
        lines.append(json.dumps(r))
    c.add("six", bytes([0x35]) + "\n".join(lines).encode() + b"\n")
    c.add("one-crlf", bytes([0x81]) + lines[0].encode() + b"\r\n\r\n")
    lat = {"commit": "a" * 40, "date": "2026-01-01", "suite": "latency", "test": "latency_y",
           "qps": "inf", "repeats": 1, "metrics": {"avg_latency": [1.2, 1.3]}}
    c.add("latency", bytes([0xFF]) + json.dumps(lat).encode())
    c.add("bad-line", bytes([7]) + lines[0].encode() + b"\n{\"suite\": \"x\"}\n")


# ---- datasets --------------------------------------------------------------

def seed_datasets():
    sg, js, scan = Corpus("dataset_sharegpt"), Corpus("dataset_jsonl"), Corpus("jsonscan")
    share = rd("tests/data/loadgen/sharegpt.json")
    sg.add("sharegpt.json", b"\x03" + share)
    sg.add("sharegpt-fixed", b"\x1f" + share)
    small = json.dumps([{"id": "a", "conversations": [
        {"from": "human", "value": "What is the capital of France, and why?"},
        {"from": "gpt", "value": "Paris is the capital of France, for historical reasons."}]},
        {"id": "b", "conversations": [{"from": "human", "value": "hi"}]},
        {"id": "c", "conversations": "none"}]).encode()
    sg.add("small", b"\x01" + small)
    scan.add("sharegpt.json", share)
    scan.add("small", small)
    scan.add("mixed", b' [1, "two\\"", {"conversations": [[], {}]}, [null, true, false], -1.5e3 ] ')
    js.add("prompts", b"\x02" + b'{"prompt": "Tell me a story about a dragon.", "output_len": 64}\n'
           b'{"prompt": "Summarise the plot of Hamlet.", "output_len": 32}\n\n'
           b'{"prompt": "x"}\r\n')
    js.add("default-len", b"\x13" + b'{"prompt": "only a prompt"}\n{"prompt": "another"}')


# ---- the mock server -------------------------------------------------------

def seed_mock():
    http, api = Corpus("mock_http"), Corpus("mock_api")
    body = b'{"model": "mock-model", "prompt": "hello there", "max_tokens": 4, "stream": true}'
    reqs = {
        "get-health": b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n",
        "get-models": b"GET /v1/models?x=1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
        "post": b"POST /v1/completions HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\nX-Request-Id: abc-123\r\n\r\n" % len(body) + body,
        "expect": b"POST /tokenize HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n{}",
        "pipelined": b"GET /health HTTP/1.1\n\nGET /v1/models HTTP/1.1\r\nConnection: close\r\n\r\n",
        "chunked": b"POST /v1/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "two-lengths": b"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
        "http2": b"GET / HTTP/2.0\r\n\r\n",
        "folding": b"GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n",
        "leading-blank": b"\r\n\nHEAD /health HTTP/1.1\r\n\r\n",
    }
    for k, v in reqs.items():
        http.add(k, v)
    bodies = [
        (0, b'{"model": "mock-model", "prompt": "one two three", "max_tokens": 5, "stream": true,'
            b' "stream_options": {"include_usage": true, "continuous_usage_stats": true}}'),
        (0, b'{"model": "mock-model", "prompt": [1, 2, 3, 4], "max_tokens": 3, "ignore_eos": true}'),
        (0, b'{"prompt": [[5, 6]], "max_tokens": 2, "stream": true}'),
        (1, b'{"model": "mock-model", "messages": [{"role": "user", "content": "hi there"}],'
            b' "max_completion_tokens": 4, "stream": true, "stream_options": {"include_usage": true}}'),
        (1, b'{"messages": [{"role": "user", "content": [{"type": "text", "text": "a b c"}]}],'
            b' "max_tokens": 2}'),
        (2, b'{"model": "mock-model", "prompt": "count these words", "add_special_tokens": false}'),
        (3, b'{"model": "mock-model", "tokens": [1, 2, 3]}'),
        (0, b'{"model": "other", "prompt": "x"}'),
        (0, b'{"prompt": "x", "n": 2}'),
    ]
    for i, (which, b) in enumerate(bodies):
        api.add("body%d" % i, bytes([which]) + b)


def seed_gpu():
    c = Corpus("gpu")
    for label, s in [("smi", "NVIDIA H100 80GB HBM3, 81559 MiB\nNVIDIA H100 80GB HBM3, 81559 MiB\n"),
                     ("smi-na", "NVIDIA A100-SXM4-80GB, [N/A]\n"),
                     ("numbers", "1024\n2048\n"),
                     ("label", "8xH100"), ("llmd", "4xNVIDIA_L40S"), ("lines", "H100\nH100\nH100"),
                     ("empty", "")]:
        c.add(label, s)


def main():
    seed_sse()
    seed_oai_resp()
    seed_http1()
    seed_chunk_skim()
    seed_imports()
    seed_config()
    seed_plugin_config()
    seed_thresholds()
    seed_history()
    seed_datasets()
    seed_mock()
    seed_gpu()


if __name__ == "__main__":
    main()
