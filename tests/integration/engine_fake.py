#!/usr/bin/env python3
"""A stand-in for the Docker Engine API on a unix socket, for --image NAME:
engine_fake.py SOCKET NAME=TARBALL... serves GET /images/NAME/get with the
tarball, GET /images/NAME/json with its Id (the sha256 of its config, as an
engine gives it) and 404 for anything else, and logs each request line to
stdout. ENGINE_FAKE_STALL=N: an export sends its first N bytes, then nothing
until the client goes (a slow or stuck engine)."""
import hashlib
import http.server
import json
import os
import select
import tarfile
import socketserver
import sys

sock, images = sys.argv[1], dict(a.split("=", 1) for a in sys.argv[2:])


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        print(self.requestline, flush=True)
        op = self.path.rsplit("/", 1)[-1]
        name = self.path[len("/images/"):-len(op) - 1] if op in ("get", "json") else None
        if not self.path.startswith("/images/") or name not in images:
            self.send_error(404, "No such image")
            return
        if op == "json":
            data = json.dumps({"Id": "sha256:" + config_digest(images[name])}).encode()
            kind = "application/json"
        else:
            data = open(images[name], "rb").read()
            kind = "application/x-tar"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        stall = int(os.environ.get("ENGINE_FAKE_STALL", "-1")) if op == "get" else -1
        if stall < 0:
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if stall < 0:
            self.wfile.write(data)
            return
        self.wfile.write(data[:stall])
        self.wfile.flush()
        select.select([self.connection], [], [], 120)  # readable: the client closed
        print("export abandoned by the client", flush=True)

    def address_string(self):
        return "unix"

    def log_message(self, *a):
        pass


def config_digest(tarball):
    with tarfile.open(tarball) as t:
        manifest = json.load(t.extractfile("manifest.json"))
        return hashlib.sha256(t.extractfile(manifest[0]["Config"]).read()).hexdigest()


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self):
        conn, _ = super().get_request()
        return conn, ("unix", 0)


if os.path.exists(sock):
    os.unlink(sock)
Server(sock, Handler).serve_forever()
