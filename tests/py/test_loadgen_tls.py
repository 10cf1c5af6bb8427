"""The load generator over https://, with every HTTP engine: libcurl makes
the TLS connection and, on perfgate's own read path, carries the bytes
(curl_easy_send/curl_easy_recv) while perfgate writes the requests and
parses the responses.

A real TLS server on loopback (Python's http.server behind ssl: HTTP/1.1
keep-alive, chunked SSE, a self-signed certificate for 127.0.0.1) and the
bench driver (perfgate_bench_loadgen, the engine the native suites run).
The certificate is trusted the way a user trusts a private CA: the
environment's CURL_CA_BUNDLE names it (SSL_CERT_FILE as well), as curl's
command line takes it. Bounded: every driver run has a 60 s timeout, the
server thread stops with the test."""
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


class TlsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.tmp.name
        self.cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                        key, "-out", self.cert, "-days", "2", "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1"],
                       check=True, capture_output=True)
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

    def drive(self, engine, trusted=True, variable="CURL_CA_BUNDLE"):
        env = {k: v for k, v in os.environ.items()
               if k not in ("CURL_CA_BUNDLE", "SSL_CERT_FILE")}
        env["PERFGATE_HTTP_ENGINE"] = engine
        if trusted:
            env[variable] = self.cert
        return subprocess.run(
            [DRIVER, "--url", self.url, "--requests", "8", "--output-len", str(TOKENS),
             "--max-concurrency", "4", "--trace", os.path.join(self.tmp.name, "trace.jsonl")],
            capture_output=True, text=True, timeout=60, env=env)

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

    def test_ssl_cert_file_is_taken_too(self):
        r = self.drive("own", variable="SSL_CERT_FILE")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["ok"], 8)

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
