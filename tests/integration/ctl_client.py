#!/usr/bin/env python3
"""A client of a session's socket (core/session/ctl.h), for the tests.

  ctl_client.py status SOCK
      prints the status line (or "refused" when the session closes the
      connection without one, "unreachable: ERROR" when it cannot connect)
  ctl_client.py attach SOCK [--read-only] [--kill] [--send JSON] [--timeout S]
      attaches and prints every line it gets until the stream ends or the
      timeout; --kill sends a kill of the first execution it sees start,
      --send sends JSON once the hello came
  ctl_client.py noread SOCK SECONDS
      attaches and reads nothing for SECONDS, then reads what is left and
      prints "bytes N eof BOOL" (eof: the session ended the stream)
"""
import json
import socket
import sys
import time


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


def lines(s, timeout):
    """Yields each line received until EOF or the timeout."""
    end = time.monotonic() + timeout
    buf = b""
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return
        s.settimeout(left)
        try:
            b = s.recv(65536)
        except socket.timeout:
            return
        except OSError:  # reset: the session closed on it
            return
        if not b:
            return
        buf += b
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            yield line.decode("utf-8", "replace")


def status(path):
    try:
        s = connect(path)
    except OSError as e:
        print("unreachable:", e.strerror)
        return 0
    try:
        s.sendall(b'{"type":"status"}\n')
    except OSError:
        print("refused")
        return 0
    for line in lines(s, 5):
        print(line)
        return 0
    print("refused")
    return 0


def attach(path, args):
    ro = "--read-only" in args
    kill = "--kill" in args
    timeout = float(args[args.index("--timeout") + 1]) if "--timeout" in args else 30
    sends = [args[i + 1] for i, a in enumerate(args) if a == "--send"]
    s = connect(path)
    s.sendall((json.dumps({"type": "attach", "read_only": ro}) + "\n").encode())
    killed = False
    for line in lines(s, timeout):
        print(line, flush=True)
        e = json.loads(line)
        if e.get("type") == "ctl.hello":
            for m in sends:
                s.sendall((m + "\n").encode())
        if kill and not killed and e.get("type") == "exec.start":
            s.sendall((json.dumps({"type": "kill", "exec_id": e["exec_id"]}) + "\n").encode())
            killed = True
    return 0


def noread(path, secs):
    s = connect(path)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(b'{"type":"attach"}\n')
    time.sleep(secs)
    n, eof = 0, False
    s.settimeout(5)
    try:
        while True:
            b = s.recv(1 << 20)
            if not b:
                eof = True
                break
            n += len(b)
    except socket.timeout:
        pass
    except OSError:
        eof = True
    print("bytes", n, "eof", eof)
    return 0


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "status":
        return status(path)
    if cmd == "attach":
        return attach(path, sys.argv[3:])
    if cmd == "noread":
        return noread(path, float(sys.argv[3]))
    sys.exit(__doc__)


sys.exit(main())
