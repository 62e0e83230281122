#!/bin/bash
# Network: a sandbox reaches nothing, neither the host's loopback services
# (TCP, UDP, abstract unix sockets, socket files) nor another sandbox.
# as-user: yes
. "$(dirname "$0")/lib.sh"

# listen.py NAME TCP_HOST READY_FILE STOP_FILE LOG [PATH_SOCKET...]: listens
# on TCP (port 0: any; the port goes into READY_FILE), UDP on the same port,
# the abstract unix name "proctor-it-NAME" and each socket file; logs every
# connection or datagram to LOG; ends when STOP_FILE appears (or after 20 s).
cat > "$WORK/listen.py" <<'EOF'
import os, select, socket, sys, time
name, host, ready, stop, log = sys.argv[1:6]
paths = sys.argv[6:]
socks = []
t = socket.socket(); t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind((host, 0)); t.listen(16); socks.append(t)
port = t.getsockname()[1]
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind((host, port)); socks.append(u)
a = socket.socket(socket.AF_UNIX); a.bind("\0proctor-it-" + name); a.listen(16); socks.append(a)
for p in paths:
    s = socket.socket(socket.AF_UNIX); s.bind(p); s.listen(16); socks.append(s)
with open(ready + ".tmp", "w") as f:
    f.write("%d\n" % port)
os.rename(ready + ".tmp", ready)
end = time.time() + 20
while time.time() < end and not os.path.exists(stop):
    r, _, _ = select.select(socks, [], [], 0.05)
    for s in r:
        if s is u:
            data, who = u.recvfrom(100)
            what = "udp"
        else:
            c, _ = s.accept()
            c.sendall(b"hello\n")
            c.close()
            where = s.getsockname() if s is not t else ""
            if isinstance(where, bytes):
                where = where.decode("latin-1")
            what = "tcp" if s is t else "unix:" + (where or "?")
        with open(log, "a") as f:
            f.write(what.replace("\0", "@") + "\n")
EOF
# try.py NAME TCP_HOST PORT [PATH...]: one line per attempt, "KIND ok" or
# "KIND fail ERRNO"
cat > "$WORK/try.py" <<'EOF'
import errno, socket, sys
name, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
def attempt(kind, fam, addr, typ=socket.SOCK_STREAM):
    s = socket.socket(fam, typ)
    s.settimeout(2)
    try:
        if typ == socket.SOCK_DGRAM:
            s.sendto(b"x", addr)
            print(kind, "sent")
        else:
            s.connect(addr)
            print(kind, "ok", s.recv(10).decode().strip())
    except OSError as e:
        print(kind, "fail", errno.errorcode.get(e.errno, str(e)))
    finally:
        s.close()
attempt("tcp", socket.AF_INET, (host, port))
attempt("udp", socket.AF_INET, (host, port), socket.SOCK_DGRAM)
attempt("abstract", socket.AF_UNIX, "\0proctor-it-" + name)
for p in sys.argv[4:]:
    attempt("path:" + p, socket.AF_UNIX, p)
EOF

# ---- the host's loopback services ----
hostname_tag=host$$
host_sock=/tmp/proctor-it-sock-$$-$RANDOM
at_exit "rm -f $host_sock"
python3 "$WORK/listen.py" $hostname_tag 127.0.0.1 "$WORK/host.ready" "$WORK/host.stop" "$WORK/host.log" "$host_sock" &
track_pid $!
if wait_until 10 test -s "$WORK/host.ready"; then pass; else fail "host listener did not start"; fi
port=$(cat "$WORK/host.ready" 2>/dev/null)

# premise: from the host (and from local mode) the services answer
out=$(python3 "$WORK/try.py" $hostname_tag 127.0.0.1 "$port" "$host_sock")
expect_eq "host reaches its own listener" "tcp ok hello
udp sent
abstract ok hello
path:$host_sock ok hello" "$out"
out=$(local_exec -- python3 "$WORK/try.py" $hostname_tag 127.0.0.1 "$port" "$host_sock")
expect_match "local mode reaches it too" "^tcp ok hello" "$out"
host_logged() { [ "$(cat "$WORK/host.log" 2>/dev/null | wc -l)" -ge "$1" ]; }
wait_until 3 host_logged 8
host_seen_before=$(wc -l < "$WORK/host.log" 2>/dev/null)
expect_eq "listener logged the premise connections" 8 "$host_seen_before"

out=$(sandbox --timeout 20 -- python3 /workspace/try.py $hostname_tag 127.0.0.1 "$port" "$host_sock"); rc=$?
expect_eq "sandbox client ran" 0 $rc
expect_match "sandbox: host TCP on 127.0.0.1 unreachable" "^tcp fail " "$out"
# the sandbox has a loopback of its own (up), so a datagram to 127.0.0.1
# leaves without error and lands there: the host's listener below must not
# see it
expect_match "sandbox: UDP to 127.0.0.1 goes to its own loopback" "^udp sent$" "$(grep '^udp' <<<"$out")"
expect_match "sandbox: host abstract socket unreachable" "^abstract fail " "$out"
expect_match "sandbox: host socket file in /tmp not there" "^path:$host_sock fail ENOENT" "$out"
sleep 0.3
expect_eq "host listener saw nothing from the sandbox" "$host_seen_before" "$(wc -l < "$WORK/host.log")"

# a non-loopback host address is unreachable too
host_ip=$(hostname -I 2>/dev/null | awk '{ print $1 }')
if [ -n "$host_ip" ]; then
        out=$(sandbox -- python3 -c "
import socket
s = socket.socket(); s.settimeout(2)
try:
    s.connect(('$host_ip', $port)); print('ok')
except OSError as e:
    print('fail', e.errno)")
        expect_match "sandbox: host address $host_ip unreachable" "^fail " "$out"
fi
touch "$WORK/host.stop"

# ---- sandbox to sandbox ----
# A listens on 127.0.0.1, an abstract name, a socket file in its /tmp and one
# in the shared workspace; B tries all four. The sandbox promises no network
# and no shared abstract namespace, and a private /tmp; the workspace is
# shared storage by design, so a socket file there may connect (that is not
# isolation the sandbox claims), and no assertion is made on it.
sandbox --timeout 25 -- python3 /workspace/listen.py sbA 127.0.0.1 /workspace/a.ready /workspace/a.stop /workspace/a.log /tmp/a.sock /workspace/a.sock >"$WORK/a.out" 2>&1 &
pa=$!
track_pid $pa
if wait_until 10 test -s "$WORK/a.ready"; then pass; else fail "sandbox A did not start listening: $(cat "$WORK/a.out")"; fi
aport=$(cat "$WORK/a.ready" 2>/dev/null)
out=$(sandbox --timeout 20 -- python3 /workspace/try.py sbA 127.0.0.1 "${aport:-1}" /tmp/a.sock /workspace/a.sock)
expect_match "B cannot reach A over TCP" "^tcp fail " "$out"
expect_match "B's UDP goes to its own loopback (A's log must stay empty)" "^udp sent$" "$(grep '^udp' <<<"$out")"
expect_match "B cannot reach A's abstract socket" "^abstract fail " "$out"
expect_match "B has no A's /tmp socket" "^path:/tmp/a.sock fail ENOENT" "$out"
echo "info (not asserted, shared storage): $(grep workspace <<<"$out")"
sleep 0.3
expect_no_match "A accepted nothing but workspace-socket connections" "^(tcp|udp|unix:@)" "$(cat "$WORK/a.log" 2>/dev/null)"
# and A, inside, did listen for real: it reaches itself on the abstract name
out=$(sandbox -- python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.bind("\0x"); s.listen(1); c = socket.socket(socket.AF_UNIX); c.connect("\0x"); print("self ok")')
expect_eq "a sandbox reaches its own abstract socket" "self ok" "$out"
touch "$WORK/a.stop"
wait $pa
expect_eq "sandbox A ended cleanly" 0 $?
finish
