"""perfgate mock-server driven as a whole connection: many seeded-random
byte streams -- valid requests, pipelined ones, heads over the 64 KiB limit,
bad lengths, garbage, Expect: 100-continue, streams cut short -- each split
into random pieces sent as separate writes (so the server reads them
separately and its buffered-request path does the work), over loopback, to
the real server. After every connection the server must still be alive and
answer; every byte it sent must be HTTP/1.1 responses; at the end it must
stop cleanly on SIGTERM with no sanitizer report.

Bounded: PERFGATE_FUZZ_CONNECTIONS connections (default 400) or
PERFGATE_FUZZ_SECONDS seconds (default 60), whichever comes first; the seed
(PERFGATE_FUZZ_SEED, default 20) is printed so a failure can be replayed.
The libFuzzer harness of the HTTP parser is another matter: this is the
event loop's side (partial reads, buffering, 431 on buffered bytes, the
answer racing the rest of the request)."""
import json
import os
import random
import signal
import socket
import subprocess
import tempfile
import time
import unittest

PERFGATE = os.environ.get("PERFGATE_BIN")
SEED = int(os.environ.get("PERFGATE_FUZZ_SEED", "20"))
CONNECTIONS = int(os.environ.get("PERFGATE_FUZZ_CONNECTIONS", "400"))
SECONDS = float(os.environ.get("PERFGATE_FUZZ_SECONDS", "60"))
MAX_HEAD = 64 * 1024


def completion(rng):
    body = {"prompt": " ".join(rng.choice(["a", "bb", "ccc"]) for _ in range(rng.randint(1, 5))),
            "max_tokens": rng.randint(1, 3), "ignore_eos": True}
    if rng.random() < 0.5:
        body["stream"] = True
    return json.dumps(body).encode()


def request(rng):
    """One request's bytes: mostly valid, often not."""
    kind = rng.randrange(12)
    host = b"Host: x\r\n"
    if kind == 0:
        return b"GET /health HTTP/1.1\r\n" + host + b"\r\n"
    if kind == 1:
        return b"GET /v1/models HTTP/1.1\r\n" + host + b"\r\n"
    if kind in (2, 3):
        body = completion(rng)
        expect = b"Expect: 100-continue\r\n" if rng.random() < 0.3 else b""
        return (b"POST /v1/completions HTTP/1.1\r\n" + host + expect +
                b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    if kind == 4:
        # a head over the limit, by a little or a lot, maybe with a body
        size = MAX_HEAD + rng.choice([-200, -1, 0, 1, 2, 100, 5000, 70000])
        line = b"X-Pad: " + b"a" * 1000 + b"\r\n"
        pad = line * (max(size, 0) // len(line) + 1)
        return b"GET /health HTTP/1.1\r\n" + host + pad[:max(size, 0)] + b"\r\n\r\n"
    if kind == 5:
        cl = rng.choice([b"-1", b"abc", b"99999999999999999999", b"1, 2", b"33554433", b""])
        return b"POST /v1/completions HTTP/1.1\r\n" + host + b"Content-Length: " + cl + b"\r\n\r\n{}"
    if kind == 6:
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 300)))
    if kind == 7:
        return rng.choice([b"GET / HTTP/2.0\r\n\r\n", b"BREW /pot HTTP/1.1\r\n\r\n",
                           b"GET /health HTTP/1.0\r\n\r\n", b"GET /health\r\n\r\n",
                           b"GET /health HTTP/1.1\nHost: x\n\n", b"\r\n\r\n",
                           b"POST /v1/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                           b"GET /he\x00alth HTTP/1.1\r\n\r\n", b"GET " + b"/x" * 40000 + b" HTTP/1.1\r\n\r\n"])
    if kind == 8:
        # valid, cut anywhere
        r = b"POST /v1/chat/completions HTTP/1.1\r\n" + host + b"Content-Length: 60\r\n\r\n" + \
            b'{"messages":[{"role":"user","content":"hi"}],"max_tokens":2}'
        return r[:rng.randint(1, len(r))]
    if kind == 9:
        return b"GET /mock/stats HTTP/1.1\r\n" + host + b"\r\n"
    if kind == 10:
        body = b'{"prompt":"x","max_tokens":' + str(rng.choice([0, -1, 10 ** 9])).encode() + b"}"
        return b"POST /v1/completions HTTP/1.1\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    return b"GET /nowhere HTTP/1.1\r\n" + host + b"Connection: close\r\n\r\n"


def pieces(rng, data):
    """data cut into 1..12 random pieces (1-byte ones included)."""
    if len(data) < 2:
        return [data]
    cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, rng.randint(0, 11))))
    out, prev = [], 0
    for c in cuts + [len(data)]:
        out.append(data[prev:c])
        prev = c
    return out


def is_http(reply):
    """Every response the server sent is well framed enough to start with a
    status line (100 Continue included); the first bytes say it."""
    return reply == b"" or reply.startswith(b"HTTP/1.1 ")


class MockConnections(unittest.TestCase):
    def setUp(self):
        if not PERFGATE:
            self.skipTest("PERFGATE_BIN not set (run through ctest)")
        self.dir = tempfile.TemporaryDirectory()
        port_file = os.path.join(self.dir.name, "port")
        self.log = open(os.path.join(self.dir.name, "server.log"), "w+b")
        self.server = subprocess.Popen(
            [PERFGATE, "mock-server", "--port", "0", "--port-file", port_file, "--fixed-timing",
             "--ttft-ms", "0", "--itl-ms", "0", "--max-seconds", "600", "--idle-timeout-ms", "3000"],
            stdout=subprocess.DEVNULL, stderr=self.log)
        for _ in range(400):
            if os.path.exists(port_file) and os.path.getsize(port_file):
                break
            self.assertIsNone(self.server.poll(), "mock-server exited at start")
            time.sleep(0.025)
        with open(port_file) as f:
            self.port = int(f.read())

    def tearDown(self):
        if self.server.poll() is None:
            self.server.kill()
            self.server.wait()
        self.log.close()
        self.dir.cleanup()

    def server_log(self):
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def alive(self, what):
        self.assertIsNone(self.server.poll(), "mock-server died after %s:\n%s" % (what, self.server_log()))
        s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        self.assertTrue(s.recv(64).startswith(b"HTTP/1.1 200"), "no answer after " + what)
        s.close()

    def one(self, rng, i):
        data = b"".join(request(rng) for _ in range(rng.randint(1, 4)))
        s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        reply = b""
        try:
            for p in pieces(rng, data):
                s.sendall(p)
                if rng.random() < 0.3:
                    time.sleep(rng.random() * 0.004)
            end = rng.random()
            if end < 0.4:
                s.shutdown(socket.SHUT_WR)  # the client is done sending
            elif end < 0.5:
                return data, reply  # leave without reading: a reset
            s.settimeout(0.5 if end < 0.8 else 0.05)
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                reply += chunk
        except (socket.timeout, BrokenPipeError, ConnectionResetError):
            pass  # an answer and a close can race the rest of our bytes
        finally:
            s.close()
        return data, reply

    def test_random_splits_and_heads_never_take_the_server_down(self):
        rng = random.Random(SEED)
        start = time.monotonic()
        n = 0
        data = b""
        while n < CONNECTIONS and time.monotonic() - start < SECONDS:
            try:
                data, reply = self.one(rng, n)
            except ConnectionRefusedError:
                time.sleep(0.2)
                self.fail("mock-server gone (exit %s) at connection %d (seed %d), after sending %r\n%s" %
                          (self.server.poll(), n, SEED, data[:300], self.server_log()))
            self.assertTrue(is_http(reply), "seed %d connection %d: not HTTP: %r (sent %r...)" %
                            (SEED, n, reply[:80], data[:200]))
            n += 1
            if n % 25 == 0:
                self.alive("connection %d (seed %d)" % (n, SEED))
        self.alive("connection %d (seed %d)" % (n, SEED))
        print("%d connections (seed %d) in %.1f s" % (n, SEED, time.monotonic() - start))
        self.assertGreaterEqual(n, min(CONNECTIONS, 50))
        self.server.send_signal(signal.SIGTERM)
        self.assertEqual(self.server.wait(timeout=30), 0, self.server_log())
        log = self.server_log()
        for bad in ("runtime error", "AddressSanitizer", "LeakSanitizer"):
            self.assertNotIn(bad, log)


if __name__ == "__main__":
    unittest.main()
