#!/usr/bin/env python3
"""fake_openai: a scripted OpenAI-compatible chat-completions server for tests.

Standard library only. Listens on 127.0.0.1 (--port, or a free port), prints
"PORT <n>" on stdout once it accepts connections, and stops on SIGTERM or when
stdin reaches EOF (unless --ignore-stdin). Each POST .../chat/completions takes
the next line of the --script JSONL file:

  {"content": "hi", "tool_calls": [{"name": "bash", "arguments": "{...}"}],
   "chunk_size": 3, "delay_ms": 5, "usage": {"prompt_tokens": 9,
   "completion_tokens": 4}, "finish_reason": "stop", "interleave": false,
   "no_done": false, "no_stream": false, "byte_split": 0}

streamed as OpenAI SSE chunks (content and arguments cut into chunk_size
pieces, tool call ids "call_N", usage when the request asked for it, then
"data: [DONE]"), or a fault:

  {"fault": "http_500"}  any http_NNN: that status and a JSON error body
                         ("message", "retry_after", "echo_key" optional)
  {"fault": "drop_mid_stream"}  a few chunks, then the socket is closed
  {"fault": "malformed_sse"}    a data line that is not JSON
  {"fault": "stall"}            headers and one chunk, then nothing
  {"fault": "invalid_json_args"}  a tool call whose arguments are not JSON
  {"fault": "reset_mid_stream"} a few chunks, then a TCP reset (RST)

Exact shapes (what real providers send that this script cannot say):

  "raw": "data: ...\n\n" or ["part", "part"]  these bytes as the body of a
        200 answer, each part flushed as it comes (10 ms apart), then the end
        of the response, or a closed socket with "raw_drop": true; with
        "close_delimited": true the body has neither a length nor chunks and
        ends where the connection does (as an HTTP/1.0 proxy sends it);
        "encoding": "latin-1" sends the parts in that encoding
  "content_type": "..."  the Content-Type of a raw or no_stream answer
  "status": 302          the status of a raw answer (default 200)
  "headers": {"retry-after-ms": "700"}  more headers on any answer
  "json_body": {...}     an http_NNN fault's body, exactly
  "body": "<html>..."    an http_NNN fault's body as text/html
  "echo_key_at": 290     an http_NNN fault whose message holds "Bearer KEY"
                         (from the request) at this character
  "no_finish": true      the answer without its finish_reason chunk

An answer that never ends, as a broken or hostile server sends it:

  {"endless": "arguments"}  one bash call whose arguments never end
  {"endless": "content"}    text that never ends
  {"endless": "comments"}   SSE comments (keep-alives) that never end
      in pieces of "piece" bytes (default 64 KiB), until "safety_mb" MiB
      (default 192) were sent, then the socket is closed, so that a client
      with no bound of its own cannot take all the machine's memory. The
      log gets {"event": "endless", "sent": BYTES, "hung_up": BOOL}: how far
      it went before the client hung up (or the cap came).

Without --expect-key any request is answered, with a key or without.
--tls CERT KEY serves HTTPS with that certificate (a test's own CA signs it).

--log FILE gets one JSON line per request (its body, and whether the
Authorization header matched --expect-key, never the header itself) and one
{"event": "closed"} line when a client hangs up on a stalled stream.
"""

import argparse
import json
import os
import re
import select
import signal
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STOP = threading.Event()


class State:
    def __init__(self, script, log_path, expect_key):
        self.lock = threading.Lock()
        self.script = script
        self.next_step = 0
        self.requests = 0
        self.calls = 0
        self.expect_key = expect_key
        self.log = open(log_path, "a", encoding="utf-8") if log_path else None

    def count(self):
        with self.lock:
            self.requests += 1
            return self.requests

    def take(self):
        with self.lock:
            if self.next_step >= len(self.script):
                return None
            self.next_step += 1
            return self.script[self.next_step - 1]

    def call_id(self):
        with self.lock:
            self.calls += 1
            return "call_%d" % self.calls

    def record(self, obj):
        if self.log is None:
            return
        with self.lock:
            self.log.write(json.dumps(obj) + "\n")
            self.log.flush()


def pieces(text, size):
    size = max(1, int(size))
    return [text[i:i + size] for i in range(0, len(text), size)]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-openai/1"

    def log_message(self, fmt, *args):
        pass

    # ---- plumbing -------------------------------------------------------

    def send_json(self, status, obj, extra=None, content_type="application/json"):
        data = obj.encode() if isinstance(obj, str) else json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", self.step.get("content_type", content_type))
        self.send_header("Content-Length", str(len(data)))
        for k, v in list((extra or {}).items()) + list(self.step.get("headers", {}).items()):
            self.send_header(k, str(v))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def start_stream(self, status=200):
        self.send_response(status)
        self.send_header("Content-Type", self.step.get("content_type", "text/event-stream"))
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for k, v in self.step.get("headers", {}).items():
            self.send_header(k, str(v))
        self.end_headers()
        self.wfile.flush()

    def raw_chunk(self, data):
        self.wfile.write(b"%x\r\n" % len(data) + data + b"\r\n")
        self.wfile.flush()

    def send_event(self, payload):
        if not isinstance(payload, str):
            payload = json.dumps(payload)
        data = ("data: " + payload + "\n\n").encode()
        split = int(self.step.get("byte_split", 0))
        if split > 0:
            for i in range(0, len(data), split):
                self.raw_chunk(data[i:i + split])
                time.sleep(0.001)
        else:
            self.raw_chunk(data)
        self.events += 1
        if self.events % 3 == 0:
            self.raw_chunk(b": keep-alive\n\n")
        delay = float(self.step.get("delay_ms", 0)) / 1000.0
        if delay > 0:
            time.sleep(delay)

    def end_stream(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def drop(self):
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def reset(self):
        """Closes with a TCP RST, as a crashing proxy does."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       b"\x01\x00\x00\x00\x00\x00\x00\x00")
            self.connection.close()
        except OSError:
            pass

    def raw_answer(self):
        parts = self.step["raw"]
        if isinstance(parts, str):
            parts = [parts]
        if self.step.get("close_delimited"):
            self.send_response(int(self.step.get("status", 200)))
            self.send_header("Content-Type", self.step.get("content_type", "text/event-stream"))
            self.send_header("Connection", "close")
            self.end_headers()
            for part in parts:
                self.wfile.write(part.encode(self.step.get("encoding", "utf-8")))
                self.wfile.flush()
                time.sleep(0.01)
            self.close_connection = True
            return
        self.start_stream(int(self.step.get("status", 200)))
        for i, part in enumerate(parts):
            if i > 0:
                time.sleep(0.01)
            if part:  # an empty chunk would end the body
                self.raw_chunk(part.encode(self.step.get("encoding", "utf-8")))
        if self.step.get("raw_drop"):
            self.drop()
        else:
            self.end_stream()

    def endless(self):
        what, piece = self.step["endless"], "x" * int(self.step.get("piece", 65536))
        cap = int(self.step.get("safety_mb", 192)) << 20
        sent, hung_up = 0, False
        self.start_stream()
        self.send_event(self.chunk({"role": "assistant", "content": ""}))
        if what == "arguments":
            self.send_event(self.chunk({"tool_calls": [{
                "index": 0, "id": self.server.state.call_id(), "type": "function",
                "function": {"name": "bash", "arguments": '{"command": "'}}]}))
            event = self.chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
        elif what == "content":
            event = self.chunk({"content": piece})
        data = (": " + piece + "\n\n" if what == "comments" else
                "data: " + json.dumps(event) + "\n\n").encode()
        try:
            while sent < cap and not STOP.is_set():
                self.raw_chunk(data)
                sent += len(piece)
        except (BrokenPipeError, ConnectionResetError):
            hung_up = True
        self.server.state.record({"event": "endless", "sent": sent, "hung_up": hung_up})
        if not hung_up:
            self.drop()

    def wait_for_hangup(self, n):
        """Sends nothing until the client closes the connection."""
        self.close_connection = True
        while not STOP.is_set():
            r, _, _ = select.select([self.connection], [], [], 0.1)
            if not r:
                continue
            try:
                if self.connection.recv(4096) == b"":
                    break
            except OSError:
                break
        if not STOP.is_set():
            self.server.state.record({"event": "closed", "n": n})

    # ---- the answer -----------------------------------------------------

    def chunk(self, delta, finish=None):
        return {
            "id": "chatcmpl-fake-%d" % self.n,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    def tool_calls(self):
        calls = self.step.get("tool_calls")
        if calls is None and self.step.get("fault") == "invalid_json_args":
            calls = [{"name": "bash", "arguments": '{"command": "ls'}]
        out = []
        for c in calls or []:
            args = c.get("arguments", "")
            if not isinstance(args, str):
                args = json.dumps(args)
            out.append((c.get("id") or self.server.state.call_id(), c["name"], args))
        return out

    def events_for_answer(self):
        size = self.step.get("chunk_size", 4)
        content = self.step.get("content", "")
        calls = self.tool_calls()
        yield self.chunk({"role": "assistant", "content": ""})
        for p in pieces(content, size):
            yield self.chunk({"content": p})
        starts = [self.chunk({"tool_calls": [{"index": i, "id": cid, "type": "function",
                                              "function": {"name": name, "arguments": ""}}]})
                  for i, (cid, name, _) in enumerate(calls)]
        args = [[self.chunk({"tool_calls": [{"index": i, "function": {"arguments": p}}]})
                 for p in pieces(a, size)] for i, (_, _, a) in enumerate(calls)]
        if self.step.get("interleave"):
            for s in starts:
                yield s
            for row in range(max([len(a) for a in args] or [0])):
                for a in args:
                    if row < len(a):
                        yield a[row]
        else:
            for s, a in zip(starts, args):
                yield s
                for e in a:
                    yield e
        reason = self.step.get("finish_reason", "tool_calls" if calls else "stop")
        if not self.step.get("no_finish"):
            yield self.chunk({}, reason)
        if self.include_usage:
            yield {"id": "chatcmpl-fake-%d" % self.n, "object": "chat.completion.chunk",
                   "created": int(time.time()), "model": self.model, "choices": [],
                   "usage": self.usage()}

    def usage(self):
        u = dict(self.step.get("usage") or {})
        u.setdefault("prompt_tokens", 10)
        u.setdefault("completion_tokens", max(1, len(self.step.get("content", "")) // 4))
        u["total_tokens"] = u["prompt_tokens"] + u["completion_tokens"]
        return u

    def whole_answer(self):
        msg = {"role": "assistant", "content": self.step.get("content", "")}
        calls = self.tool_calls()
        if calls:
            msg["tool_calls"] = [{"id": cid, "type": "function",
                                  "function": {"name": name, "arguments": a}}
                                 for cid, name, a in calls]
        self.send_json(200, {"id": "chatcmpl-fake-%d" % self.n, "object": "chat.completion",
                             "model": self.model, "usage": self.usage(),
                             "choices": [{"index": 0, "message": msg,
                                          "finish_reason": "tool_calls" if calls else "stop"}]})

    def http_error(self, status):
        message = self.step.get("message", "fake: HTTP %d" % status)
        auth = self.headers.get("Authorization", "")
        if self.step.get("echo_key"):
            # Some servers quote the credential back; the client must not.
            message += " (got %s)" % auth
        if "echo_key_at" in self.step:
            at = max(7, int(self.step["echo_key_at"]))
            message = (message + " " + "x" * at)[:at - 7] + auth + " and more"
        extra = {}
        if "retry_after" in self.step:
            extra["Retry-After"] = str(self.step["retry_after"])
        if "body" in self.step:
            self.send_json(status, self.step["body"], extra, "text/html")
        elif "json_body" in self.step:
            self.send_json(status, self.step["json_body"], extra)
        else:
            self.send_json(status, {"error": {"message": message, "type": "fake_error",
                                              "code": status}}, extra)

    # ---- requests -------------------------------------------------------

    def do_GET(self):
        self.send_json(404, {"error": {"message": "fake: only POST /v1/chat/completions"}})

    def do_POST(self):
        state = self.server.state
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0") or 0))
        self.n = state.count()
        self.step = {}
        self.events = 0
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        auth = self.headers.get("Authorization")
        if auth is None:
            auth_state = "missing"
        elif state.expect_key is None:
            auth_state = "present"
        else:
            auth_state = "ok" if auth == "Bearer " + state.expect_key else "wrong"
        state.record({"event": "request", "n": self.n, "path": self.path, "auth": auth_state,
                      "content_type": self.headers.get("Content-Type"),
                      "accept": self.headers.get("Accept"), "body": body})
        if not self.path.endswith("/chat/completions"):
            self.send_json(404, {"error": {"message": "fake: no route %s" % self.path}})
            return
        if state.expect_key is not None and auth_state in ("missing", "wrong"):
            self.send_json(401, {"error": {"message": "fake: incorrect API key provided",
                                           "code": "invalid_api_key"}})
            return
        step = state.take()
        if step is None:
            self.send_json(400, {"error": {"message": "fake: script exhausted"}})
            return
        self.step = step
        self.model = body.get("model", "fake") if isinstance(body, dict) else "fake"
        opts = body.get("stream_options") if isinstance(body, dict) else None
        self.include_usage = isinstance(opts, dict) and bool(opts.get("include_usage"))
        self.answer()

    def answer(self):
        fault = self.step.get("fault", "")
        m = re.fullmatch(r"http_(\d{3})", fault)
        if m:
            self.http_error(int(m.group(1)))
            return
        if self.step.get("no_stream"):
            self.whole_answer()
            return
        if "raw" in self.step:
            self.raw_answer()
            return
        if "endless" in self.step:
            self.endless()
            return
        self.start_stream()
        self.raw_chunk(b": keep-alive\n\n")
        if fault == "stall":
            self.send_event(self.chunk({"role": "assistant", "content":
                                        self.step.get("content", "stall")}))
            self.wait_for_hangup(self.n)
            return
        if fault == "malformed_sse":
            self.send_event(self.chunk({"role": "assistant", "content": ""}))
            self.send_event("{this is not json")
            self.send_event("[DONE]")
            self.end_stream()
            return
        events = list(self.events_for_answer())
        cut = min(3, len(events) - 1) if fault in ("drop_mid_stream", "reset_mid_stream") \
            else len(events)
        for ev in events[:cut]:
            self.send_event(ev)
        if cut < len(events):
            self.reset() if fault == "reset_mid_stream" else self.drop()
            return
        if not self.step.get("no_done"):
            self.send_event("[DONE]")
        self.end_stream()


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A client hanging up is part of the scripts (cancel, idle timeout).
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def load_script(path):
    steps = []
    if path is None:
        return steps
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            try:
                steps.append(json.loads(line))
            except ValueError as e:
                sys.exit("%s:%d: %s" % (path, lineno, e))
    return steps


def main():
    ap = argparse.ArgumentParser(description="scripted fake OpenAI-compatible server")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--script")
    ap.add_argument("--log")
    ap.add_argument("--expect-key", help="answer 401 unless Authorization is Bearer KEY")
    ap.add_argument("--ignore-stdin", action="store_true",
                    help="do not stop at stdin EOF (for background jobs)")
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"),
                    help="serve HTTPS with this certificate and key (PEM)")
    args = ap.parse_args()

    server = Server(("127.0.0.1", args.port), Handler)
    if args.tls:
        import ssl
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(*args.tls)
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    server.state = State(load_script(args.script), args.log, args.expect_key)

    def stop(*_):
        # Nothing to wind down: the log is flushed line by line.
        STOP.set()
        sys.stdout.flush()
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if not args.ignore_stdin:
        def watch_stdin():
            while sys.stdin.buffer.read1(4096):
                pass
            stop()
        threading.Thread(target=watch_stdin, daemon=True).start()

    print("PORT %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
