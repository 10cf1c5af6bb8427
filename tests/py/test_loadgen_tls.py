"""The load generator over https://, with every HTTP engine: libcurl makes
the TLS connection and, on perfgate's own read path, carries the bytes
(curl_easy_send/curl_easy_recv) while perfgate writes the requests and
parses the responses.

A real TLS server on loopback (Python's http.server behind ssl: HTTP/1.1
keep-alive, chunked SSE, a self-signed certificate for 127.0.0.1) and the
bench driver (perfgate_bench_loadgen, the engine the native suites run).
perfgate verifies certificates against the system's CA bundle and has no
option to trust another, so the test runs the driver in a user and mount
namespace (`unshare -rm`) where the bundle is the system's plus the test's
certificate, bind-mounted over it; it is skipped where unprivileged user
namespaces are not allowed. Bounded: every driver run has a 60 s
timeout, the server thread stops with the test."""
import http.server
import json
import os
import socketserver
import ssl
import subprocess
import tempfile
import threading
import time
import unittest

BUILD = os.environ.get("PERFGATE_BUILD", "")
DRIVER = os.path.join(BUILD, "perfgate_bench_loadgen")
BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
TOKENS = 12


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        body = json.dumps({"object": "list", "data": [{"id": "tls-model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def chunk(text):
            data = text.encode()
            self.wfile.write(b"%x\r\n" % len(data) + data + b"\r\n")
            self.wfile.flush()

        n = req.get("max_tokens", 1)
        for i in range(n):
            chunk("data: " + json.dumps({"choices": [{"text": " t%d" % i}]}) + "\n\n")
            time.sleep(0.001)
        chunk("data: " + json.dumps({"choices": [], "usage": {
            "prompt_tokens": 3, "completion_tokens": n}}) + "\n\n")
        chunk("data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def userns_works():
    try:
        return subprocess.run(["unshare", "-rm", "true"], capture_output=True,
                              timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@unittest.skipUnless(userns_works(), "no unprivileged user namespaces (unshare -rm)")
class TlsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.tmp.name
        self.cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                        key, "-out", self.cert, "-days", "2", "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1"],
                       check=True, capture_output=True)
        self.bundle = os.path.join(d, "bundle.pem")
        with open(self.bundle, "wb") as out:
            with open(BUNDLE, "rb") as f:
                out.write(f.read())
            with open(self.cert, "rb") as f:
                out.write(f.read())
        self.server = Server(("127.0.0.1", 0), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(self.cert, key)
        self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = "https://127.0.0.1:%d" % self.server.server_address[1]

    def tearDown(self):
        self.server.shutdown()
        self.server.server_close()
        self.tmp.cleanup()

    def drive(self, engine, trusted=True):
        cmd = "%s%s --url %s --requests 8 --output-len %d --max-concurrency 4 --trace %s" % (
            "mount --bind %s %s && " % (self.bundle, BUNDLE) if trusted else "",
            DRIVER, self.url, TOKENS, os.path.join(self.tmp.name, "trace.jsonl"))
        return subprocess.run(["unshare", "-rm", "sh", "-c", cmd], capture_output=True,
                              text=True, timeout=60,
                              env={**os.environ, "PERFGATE_HTTP_ENGINE": engine})

    def test_every_engine_streams_over_tls(self):
        for engine in ("own", "own-easy", "curl"):
            r = self.drive(engine)
            self.assertEqual(r.returncode, 0, engine + ": " + r.stderr)
            s = json.loads(r.stdout)
            self.assertEqual(s["ok"], 8, engine)
            self.assertEqual(s["messages"], 8 * TOKENS, engine)
            # the four connections opened before the run carried all eight
            self.assertEqual(s["new_connections"], 0, engine)
            with open(os.path.join(self.tmp.name, "trace.jsonl")) as f:
                traces = [json.loads(line) for line in f]
            self.assertEqual(len(traces), 8)
            for t in traces:
                self.assertTrue(t["ok"], engine)
                self.assertEqual(len(t["chunk_ns"]), TOKENS, engine)

    def test_an_untrusted_certificate_fails_every_request(self):
        # without the bundle the connect fails certificate verification:
        # every request fails, none hangs
        for engine in ("own", "curl"):
            r = self.drive(engine, trusted=False)
            self.assertEqual(r.returncode, 0, engine + ": " + r.stderr)
            s = json.loads(r.stdout)
            self.assertEqual((s["requests"], s["ok"], s["messages"]), (8, 0, 0), engine)


if __name__ == "__main__":
    unittest.main()
