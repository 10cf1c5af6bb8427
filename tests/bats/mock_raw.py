"""Raw HTTP/1.1 over loopback for tests/bats/mock_server.bats: what curl
hides (chunk framing, pipelining, bytes that are not HTTP).

usage: mock_raw.py PORT [--normalise] [--split N] < request-bytes
Sends stdin in one write (or, with --split N, the first N bytes, a pause of
0.2 s, then the rest, so the server reads them separately), prints every byte the server sends until it
closes the connection (or 10 s pass). --normalise replaces the values of
"created" with zeros of the same width, so chunk sizes stay right.
"""
import re
import socket
import sys
import time


def main():
    port = int(sys.argv[1])
    data = sys.stdin.buffer.read()
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    if "--split" in sys.argv:
        at = int(sys.argv[sys.argv.index("--split") + 1])
        s.sendall(data[:at])
        time.sleep(0.2)
        try:
            s.sendall(data[at:])
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may answer and close before the rest
    else:
        s.sendall(data)
    out = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
    except socket.timeout:
        out += b"\n<timeout>\n"
    s.close()
    if "--normalise" in sys.argv:
        out = re.sub(rb'"created":(\d+)', lambda m: b'"created":' + b"0" * len(m.group(1)), out)
    sys.stdout.buffer.write(out)


main()
