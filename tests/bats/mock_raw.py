"""Raw HTTP/1.1 over loopback for tests/bats/mock_server.bats: what curl
hides (chunk framing, pipelining, bytes that are not HTTP).

usage: mock_raw.py PORT [--normalise] < request-bytes
Sends stdin in one write, prints every byte the server sends until it
closes the connection (or 10 s pass). --normalise replaces the values of
"created" with zeros of the same width, so chunk sizes stay right.
"""
import re
import socket
import sys


def main():
    port = int(sys.argv[1])
    data = sys.stdin.buffer.read()
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
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
