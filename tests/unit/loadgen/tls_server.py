#!/usr/bin/python3
"""A small HTTPS server for the load generator's TLS tests: HTTP/1.1 with
keep-alive, every GET answered with an empty model list and every POST
with a three-message SSE stream of OpenAI completions chunks. Writes its port to PORT_FILE, serves until
killed or for at most 60 s.

usage: tls_server.py CERT KEY PORT_FILE
"""
import http.server
import ssl
import sys
import threading

CHUNK = ('data: {"id":"x","object":"text_completion","created":1,"model":"m",'
         '"choices":[{"index":0,"text":"a","logprobs":null,"finish_reason":null}]}\n\n')
BODY = (CHUNK * 3 + "data: [DONE]\n\n").encode()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def do_GET(self):
        # the load generator's pre-connection GETs: answered, kept alive
        body = b'{"object":"list","data":[]}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def main():
    cert, key, port_file = sys.argv[1:4]
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.load_cert_chain(cert, key)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os
    os.rename(port_file + ".tmp", port_file)
    threading.Timer(60, server.shutdown).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
