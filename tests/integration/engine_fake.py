#!/usr/bin/env python3
"""A stand-in for the Docker Engine API on a unix socket, for --image NAME:
engine_fake.py SOCKET NAME=TARBALL... serves GET /images/NAME/get with the
tarball and 404 for anything else, and logs each request line to stdout."""
import http.server
import os
import socketserver
import sys

sock, images = sys.argv[1], dict(a.split("=", 1) for a in sys.argv[2:])


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        print(self.requestline, flush=True)
        name = self.path[len("/images/"):-len("/get")] if self.path.endswith("/get") else None
        if not self.path.startswith("/images/") or name not in images:
            self.send_error(404, "No such image")
            return
        data = open(images[name], "rb").read()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-tar")
        self.end_headers()
        self.wfile.write(data)

    def address_string(self):
        return "unix"

    def log_message(self, *a):
        pass


class Server(socketserver.UnixStreamServer):
    def get_request(self):
        conn, _ = super().get_request()
        return conn, ("unix", 0)


if os.path.exists(sock):
    os.unlink(sock)
Server(sock, Handler).serve_forever()
