"""A static file server on a free loopback port, for fetch tests: serves
the files under DIR, answers /redirect/<path> with a 302 to /<path> (as
Hugging Face's resolve URLs redirect to their CDN), logs one line per
request to DIR/../requests.log, writes its port to PORT_FILE once
listening and stops after SECONDS.

usage: files_server.py DIR PORT_FILE [SECONDS]"""
import http.server
import os
import sys
import threading

root, port_file = sys.argv[1], sys.argv[2]
seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 60
log = open(os.path.join(os.path.dirname(os.path.abspath(root)), "requests.log"), "a")


class Handler(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, directory=root, **kwargs)

    def do_GET(self):
        log.write(self.path + "\n")
        log.flush()
        if self.path.startswith("/redirect/"):
            self.send_response(302)
            self.send_header("Location", self.path[len("/redirect"):])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        super().do_GET()

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
tmp = port_file + ".tmp"
with open(tmp, "w") as f:
    f.write(str(server.server_address[1]))
os.rename(tmp, port_file)
threading.Timer(seconds, server.shutdown).start()
server.serve_forever()
