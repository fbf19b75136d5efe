#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""An agent's key directory (Web Bot Auth) served by Python's http.server, not Signet's code.

    agent_directory_peer.py DIRECTORY.json

Prints its port, then serves DIRECTORY.json (read at each request: a test rewrites or removes it to
rotate the keys or fail the fetch) at /.well-known/http-message-signatures-directory as
application/http-message-signatures-directory+json with Cache-Control: max-age=60; a missing file is a
503. /fetches answers how many directory requests arrived; /moved redirects to the directory; /slow
sends its head and one byte of its body, then nothing for 30 s. DIRECTORY.json.headers, when
present, is a JSON list of [name, value] fields added to the directory's answer (its signature).
"""
import http.server
import sys
import threading

PATH = "/.well-known/http-message-signatures-directory"
fetches = 0
lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        global fetches
        if self.path == "/fetches":
            body = str(fetches).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if self.path == "/moved":
            self.send_response(302)
            self.send_header("Location", PATH)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path == "/slow":
            # The head at once, the body never: a directory that trickles.
            self.send_response(200)
            self.send_header("Content-Length", "100")
            self.end_headers()
            self.wfile.write(b"{")
            self.wfile.flush()
            import time
            time.sleep(30)
            return
        if self.path != PATH:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        with lock:
            fetches += 1
        try:
            body = open(sys.argv[1], "rb").read()
        except OSError:
            self.send_response(503)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/http-message-signatures-directory+json")
        self.send_header("Cache-Control", "max-age=60")
        # Fields a test wrote beside the directory (its signature), as given.
        try:
            import json
            for name, value in json.load(open(sys.argv[1] + ".headers")):
                self.send_header(name, value)
        except OSError:
            pass
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
