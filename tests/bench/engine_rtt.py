#!/usr/bin/env python3
"""engine_rtt: how long an engine takes to answer the one request an
engine-named image costs each `proctor exec` (GET /images/NAME/json), over
its unix socket, as a fresh connection each time as proctor makes it.
Usage: engine_rtt.py SOCKET NAME [ROUNDS]; prints the median and p90 in us."""
import socket
import statistics
import sys
import time


def once(path, name):
    t0 = time.perf_counter_ns()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(("GET /images/%s/json HTTP/1.1\r\nHost: docker\r\n"
               "Connection: close\r\n\r\n" % name).encode())
    data = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
    s.close()
    if not data.startswith(b"HTTP/1.") or b" 200 " not in data.split(b"\r\n", 1)[0]:
        sys.exit("engine_rtt: %s answered %r" % (path, data[:80]))
    return (time.perf_counter_ns() - t0) / 1000


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    path, name = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 50
    for _ in range(3):
        once(path, name)
    t = sorted(once(path, name) for _ in range(rounds))
    print("the engine's answer to GET /images/%s/json: median %.0f us, p90 %.0f us "
          "(%d round trips, a connection each)"
          % (name, statistics.median(t), t[int(len(t) * 0.9) - 1], rounds))


main()
