# A small stdio MCP server for the integration tests, in plain Python so that
# a sandbox runs it from the workspace: `python3 mcp_fake.py`. Its tools:
#   connect {host, port}  opens a TCP connection and returns the first line
#                         the listener sends, or "failed: ERROR"
#   unix {name}           connects to the abstract unix socket @NAME
#   env {}                the server's environment, one K=V a line
#   whoami {}             hostname and pid, as the server sees them
#   probe {}              "root: ..., unshare: ..., socketpair: ..., ca: N":
#                         whether /root can be listed, unshare(CLONE_NEWNET)
#                         and socketpair(AF_UNIX) work, and how many CA
#                         certificates an HTTPS client would trust
# and with --large:
#   parts {n}             a result of n content blocks of an unknown type
#   big {mib}             a text result of that many MiB
#   values {n}            a structured result of n numbers
# A hostile listing instead, with --list MODE (each tool with a 2 KiB
# description, 8 to a page):
#   repeat   every page gives the same nextCursor
#   endless  every page gives a new nextCursor
#   many     one page of 1,500 tools
# After --safety-pages pages (default 4000) it stops answering tools/list,
# so that a client with no bound of its own fails at its start timeout
# rather than taking all the memory of the machine running the test.
import argparse
import ctypes
import errno
import json
import os
import socket
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--list", choices=["repeat", "endless", "many"])
ap.add_argument("--safety-pages", type=int, default=4000)
ap.add_argument("--large", action="store_true")
opts = ap.parse_args()
pages = 0

TOOLS = [
    {"name": n, "description": d, "inputSchema": {"type": "object"}}
    for n, d in [
        ("connect", "TCP connect to host:port"),
        ("unix", "connect to an abstract unix socket"),
        ("env", "the environment"),
        ("whoami", "hostname and pid"),
        ("probe", "host files and namespaces"),
    ]
]
LARGE = [{"name": n, "description": d, "inputSchema": {"type": "object"}}
         for n, d in [("parts", "a result of many parts"), ("big", "a large result"),
                      ("values", "a result of many values")]]


def call(name, args):
    if name == "connect":
        try:
            with socket.create_connection((args.get("host", "127.0.0.1"), int(args["port"])), 3) as s:
                return "connected: " + s.makefile().readline().strip()
        except OSError as e:
            return "failed: %s" % e
    if name == "unix":
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect("\0" + args["name"])
            return "connected: " + s.makefile().readline().strip()
        except OSError as e:
            return "failed: %s" % e
    if name == "env":
        return "\n".join("%s=%s" % kv for kv in sorted(os.environ.items()))
    if name == "big":
        return "b" * (int(args.get("mib", 1)) << 20)
    if name == "whoami":
        return "%s %d" % (socket.gethostname(), os.getpid())
    if name == "probe":
        try:
            root = "listed %d" % len(os.listdir("/root"))
        except OSError as e:
            root = errno.errorcode.get(e.errno, str(e.errno))
        libc = ctypes.CDLL(None, use_errno=True)
        rc = libc.unshare(0x40000000)
        unshare = "ok" if rc == 0 else errno.errorcode.get(ctypes.get_errno(), "?")
        try:
            a, b = socket.socketpair()
            a.close(), b.close()
            pair = "ok"
        except OSError as e:
            pair = errno.errorcode.get(e.errno, str(e.errno))
        import ssl
        ca = ssl.create_default_context().cert_store_stats()["x509_ca"]
        return "root: %s, unshare: %s, socketpair: %s, ca: %d" % (root, unshare, pair, ca)
    return None


def hostile_page():
    """The next page of a --list listing, or None once past the safety cap."""
    global pages
    pages += 1
    if pages > opts.safety_pages:
        return None
    if opts.list == "many":
        return {"tools": [{"name": "t%d" % i, "inputSchema": {"type": "object"}}
                          for i in range(1500)]}
    tools = [{"name": "p%d_%d" % (pages, i), "description": "d" * 2048,
              "inputSchema": {"type": "object"}} for i in range(8)]
    cursor = "again" if opts.list == "repeat" else "c%d" % pages
    return {"tools": tools, "nextCursor": cursor}


for line in sys.stdin:
    msg = json.loads(line)
    mid, method = msg.get("id"), msg.get("method")
    if mid is None:
        continue
    if method == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "fake", "version": "1"}}
    elif method == "tools/list" and opts.list:
        result = hostile_page()
        if result is None:
            continue
    elif method == "tools/list":
        result = {"tools": TOOLS + (LARGE if opts.large else [])}
    elif method == "tools/call" and msg.get("params", {}).get("name") == "parts":
        n = int(msg["params"].get("arguments", {}).get("n", 1))
        result = {"content": [{"type": "x"}] * n}
    elif method == "tools/call" and msg.get("params", {}).get("name") == "values":
        n = int(msg["params"].get("arguments", {}).get("n", 1))
        result = {"content": [], "structuredContent": {"v": [0] * n}}
    elif method == "tools/call":
        p = msg.get("params", {})
        text = call(p.get("name"), p.get("arguments") or {})
        result = {"content": [{"type": "text", "text": text}], "isError": text is None}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": mid,
                          "error": {"code": -32601, "message": "no " + str(method)}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}), flush=True)
