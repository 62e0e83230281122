#!/bin/bash
# The boundary around a sandbox: what it leaves in the host workspace, whose
# rights it acts with there, how the workspace is found on every call, what
# it can learn of proctor's own process, and which per-user kernel counters
# it can take from the host. Each check makes the attack; a local-mode
# control shows the attack is real where the sandbox does not stop it.
# as-user: yes
. "$(dirname "$0")/lib.sh"

# host_ids_of_sandbox WORKSPACE: the Uid: and Gid: lines of a sandboxed
# command's host process
host_ids_of_sandbox() {
        local mark=3.$$$RANDOM p pid=""
        "$PROCTOR" exec --mode sandbox --workspace "$1" -- sleep "$mark" >/dev/null 2>&1 &
        p=$!
        track_pid $p
        track_marker "sleep $mark"
        for _ in $(seq 100); do
                pid=$(pgrep -x -f "sleep $mark" | head -n 1)
                [ -n "$pid" ] && break
                sleep 0.05
        done
        [ -n "$pid" ] && grep -E '^(Uid|Gid|Groups):' "/proc/$pid/status"
        kill -TERM $p 2>/dev/null
        wait $p 2>/dev/null
}

# ---- no setuid, setgid, capability or device file lands in the workspace ----
cat > "$WORK/plant.py" <<'EOF'
import os, stat, sys
ws = sys.argv[1]
def attempt(name, fn):
    try:
        fn()
        print(name, "ok")
    except OSError as e:
        print(name, "fail", e.errno)
sh = os.path.join(ws, "sh-copy")
with open("/bin/sh", "rb") as src, open(sh, "wb") as dst:
    dst.write(src.read())
attempt("chmod-4755", lambda: os.chmod(sh, 0o4755))
attempt("chmod-2755", lambda: os.chmod(sh, 0o2755))
def fchmod():
    fd = os.open(sh, os.O_RDONLY)
    try:
        os.fchmod(fd, 0o6755)
    finally:
        os.close(fd)
attempt("fchmod-6755", fchmod)
attempt("open-creat-4755", lambda: os.close(os.open(os.path.join(ws, "created"), os.O_CREAT | os.O_WRONLY, 0o4755)))
def tmpfile():
    fd = os.open(ws, os.O_TMPFILE | os.O_WRONLY, 0o2755)
    os.link("/proc/self/fd/%d" % fd, os.path.join(ws, "linked"))
attempt("o_tmpfile-2755", tmpfile)
os.mkdir(os.path.join(ws, "dir"))
attempt("chmod-dir-2775", lambda: os.chmod(os.path.join(ws, "dir"), 0o2775))
attempt("mknod-chr-0-0", lambda: os.mknod(os.path.join(ws, "whiteout"), 0o600 | stat.S_IFCHR, os.makedev(0, 0)))
attempt("mknod-blk", lambda: os.mknod(os.path.join(ws, "blk"), 0o600 | stat.S_IFBLK, os.makedev(7, 0)))
attempt("mknod-reg-4755", lambda: os.mknod(os.path.join(ws, "regnode"), 0o4755 | stat.S_IFREG))
attempt("mknod-fifo", lambda: os.mknod(os.path.join(ws, "fifo"), 0o600 | stat.S_IFIFO))
# a version 2 capability set: cap_setuid in permitted and effective
cap = bytes.fromhex("01000002" + "80000000" + "00000000" + "00000000" + "00000000")
attempt("setxattr-capability", lambda: os.setxattr(sh, "security.capability", cap))
attempt("chmod-0755", lambda: os.chmod(sh, 0o755))
EOF
mkdir "$WORK/plant"
give_away "$WORK/plant"
out=$(sandbox -- python3 /workspace/plant.py /workspace/plant 2>&1)
for a in chmod-4755 chmod-2755 fchmod-6755 open-creat-4755 o_tmpfile-2755 chmod-dir-2775 \
        mknod-chr-0-0 mknod-blk mknod-reg-4755 setxattr-capability; do
        expect_match "sandbox: $a refused" "^$a fail " "$(grep "^$a " <<<"$out")"
done
expect_eq "sandbox: an ordinary chmod still works" "chmod-0755 ok" "$(grep '^chmod-0755 ' <<<"$out")"
expect_eq "sandbox: a FIFO may still be made" "mknod-fifo ok" "$(grep '^mknod-fifo ' <<<"$out")"
expect_eq "nothing setuid or setgid landed on the host" "" "$(find "$WORK/plant" -perm /6000 2>&1)"
expect_eq "no device node landed on the host" "" "$(find "$WORK/plant" \( -type c -o -type b \) 2>&1)"
expect_eq "no file capability landed on the host" "none" \
        "$(python3 -c 'import os, sys
try: os.getxattr(sys.argv[1], "security.capability"); print("present")
except OSError: print("none")' "$WORK/plant/sh-copy")"
# the issue's own reproduction, through the shell
sandbox -- sh -c 'cp /bin/sh /workspace/x; chmod 4755 /workspace/x; chmod g+s /workspace/x' >/dev/null 2>&1
expect_eq "cp /bin/sh; chmod 4755: no setuid file on the host" "" "$(find "$WORK/x" -perm /6000 2>&1)"
# control: the same chmod in local mode does set the bit, so the check can fail
local_exec -- chmod 4755 "$WORK/x"
expect_eq "control: local mode sets the setuid bit" "x" "$(find "$WORK/x" -perm -4000 -printf '%f')"
rm -f "$WORK/x"

# ---- a root operator's sandbox acts as root in a root-owned workspace ----
# (through an idmapped mount: it runs as nobody on the host, and nobody owns
# root's files there), and nowhere else: root's sockets there stay out of
# reach, nothing setuid or device lands, nothing else becomes writable.
if is_root; then
        rw=$(mktemp -d /tmp/proctor-it-rootws.XXXXXX) # 0700, as mktemp makes it
        at_exit rm -rf "$rw"
        echo secret > "$rw/secret"; chmod 600 "$rw/secret"
        echo shared > "$rw/shared"
        mkdir -m 700 "$rw/private"
        # a root-only control socket (stream) and a datagram socket, as a
        # root daemon would keep them
        cat > "$WORK/ctl.py" <<'EOF'
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o600); s.listen(4)
d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); d.bind(sys.argv[1] + ".dgram")
os.chmod(sys.argv[1] + ".dgram", 0o600)
open(sys.argv[2], "w").close()
s.settimeout(0.1); d.settimeout(0.1); end = time.time() + 120
while time.time() < end and not os.path.exists(sys.argv[3]):
    try:
        c, _ = s.accept(); c.sendall(b"root-answer\n"); c.close()
    except socket.timeout:
        pass
    try:
        msg = d.recv(100)
        with open(sys.argv[4], "ab") as f:
            f.write(msg + b"\n")
    except socket.timeout:
        pass
EOF
        python3 "$WORK/ctl.py" "$rw/private/ctl.sock" "$WORK/ctl.ready" "$WORK/ctl.stop" "$WORK/ctl.got" &
        track_pid $!
        at_exit touch "$WORK/ctl.stop"
        wait_until 5 test -e "$WORK/ctl.ready" || fail "the root control socket did not start"
        connect='import socket, sys
try:
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1]); print("connected", s.recv(20).decode().strip())
except OSError as e:
    print("refused", e.errno)
try:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    a.sendto(sys.argv[2].encode(), sys.argv[1] + ".dgram"); print("sent")
except OSError as e:
    print("unsent", e.errno)'
        expect_eq "control: root reaches its sockets" "connected root-answer
sent" "$(python3 -c "$connect" "$rw/private/ctl.sock" from-root)"
        wait_until 5 grep -q from-root "$WORK/ctl.got" || fail "control: the datagram did not arrive"
        for m in rw ro overlay; do
                out=$("$PROCTOR" exec --mode sandbox --workspace "$rw" --workspace-mode $m -- \
                        python3 -c "$connect" /workspace/private/ctl.sock "from-sandbox-$m" 2>&1)
                expect_match "root-owned, $m: the root-only socket is out of reach" "^refused " "$out"
                expect_match "root-owned, $m: no datagram reaches root's socket" "unsent " "$out"
                out=$("$PROCTOR" exec --mode sandbox --workspace "$rw" --workspace-mode $m -- \
                        sh -c 'cat /workspace/secret /workspace/shared' 2>&1)
                expect_eq "root-owned 0700, $m: root's files read" "secret
shared" "$out"
        done
        touch "$WORK/ctl.stop"
        expect_no_match "no datagram of a sandbox arrived" "from-sandbox" "$(cat "$WORK/ctl.got")"
        out=$("$PROCTOR" exec --mode sandbox --workspace "$rw" -- sh -c \
                'echo x > /workspace/new && echo y > /workspace/private/made && cat /workspace/private/made
                 cp /bin/sh /workspace/x; chmod 4755 /workspace/x 2>/dev/null; chmod g+s /workspace/x 2>/dev/null
                 for f in /etc/passwd /usr/bin/env /proc/sys/kernel/core_pattern /proc/sysrq-trigger; do
                         { : >> $f; } 2>/dev/null && echo "wrote $f"; done; true' 2>&1)
        expect_eq "root-owned: writes work where root may write, and nowhere outside" "y" "$out"
        expect_eq "root-owned: what the sandbox makes is root's on disk" "0 0,0 0" \
                "$(stat -c '%u %g' "$rw/new" "$rw/private/made" 2>&1 | paste -sd,)"
        expect_eq "root-owned: no setuid file from the sandbox" "" "$(find "$rw" -perm /6000)"
        cp "$WORK/plant.py" "$rw/plant.py"
        mkdir "$rw/plant"
        out=$("$PROCTOR" exec --mode sandbox --workspace "$rw" -- \
                python3 /workspace/plant.py /workspace/plant 2>&1)
        for a in chmod-4755 chmod-2755 fchmod-6755 open-creat-4755 o_tmpfile-2755 chmod-dir-2775 \
                mknod-chr-0-0 mknod-blk mknod-reg-4755 setxattr-capability; do
                expect_match "root-owned: $a refused" "^$a fail " "$(grep "^$a " <<<"$out")"
        done
        expect_eq "root-owned: an ordinary chmod works" "chmod-0755 ok" "$(grep '^chmod-0755 ' <<<"$out")"
        expect_eq "root-owned: nothing setuid, setgid or device landed" "" \
                "$(find "$rw" \( -perm /6000 -o -type c -o -type b \) 2>&1)"
        expect_match "root-owned: the sandbox runs as nobody on the host" \
                "^Uid:([[:space:]]+65534){4}" "$(host_ids_of_sandbox "$rw" | grep '^Uid:')"
        (cd "$rw" && "$PROCTOR" exec --mode sandbox -- echo hi) > "$WORK/cwd.out" 2>&1
        expect_eq "root-owned 0700 as the current directory: a command runs" "hi" "$(cat "$WORK/cwd.out")"

        # ---- the sandbox's group is never the workspace directory's ----
        if getent group shadow >/dev/null; then
                gw=$WORK/grp
                mkdir "$gw"
                chown "$T_OWNER:shadow" "$gw"
                chmod 775 "$gw"
                echo shadowed > "$gw/shadowed"; chown root:shadow "$gw/shadowed"; chmod 640 "$gw/shadowed"
                pg=$(id -g "$T_OWNER")
                out=$("$PROCTOR" exec --mode sandbox --workspace "$gw" -- sh -c \
                        'cat /workspace/shadowed 2>&1; echo made > /workspace/made' 2>&1)
                expect_match "group shadow: a group-only file is unreadable" "Permission denied" "$out"
                expect_eq "group shadow: new files get the owner's primary group" "$pg" "$(stat -c %g "$gw/made")"
                expect_no_match "group shadow: the sandbox never holds the shadow group" \
                        "[[:space:]]$(getent group shadow | cut -d: -f3)([[:space:]]|$)" \
                        "$(host_ids_of_sandbox "$gw" | grep -E '^(Gid|Groups):')"
                expect_match "group shadow: the sandbox runs with the owner's primary group" \
                        "^Gid:[[:space:]]+$pg[[:space:]]" "$(host_ids_of_sandbox "$gw" | grep '^Gid:')"
        fi
fi
# ---- a workspace sandboxes cannot use as asked is refused before any call ----
me=$(id -un)
mkdir -p "$WORK/readonly/sub" "$WORK/shut"
give_away "$WORK/readonly" "$WORK/shut"
chmod 555 "$WORK/readonly"
chmod 000 "$WORK/shut"
at_exit chmod 755 "$WORK/readonly" "$WORK/shut"
out=$("$PROCTOR" exec --mode sandbox --workspace "$WORK/readonly" -- true 2>&1); rc=$?
expect_eq "rw on a directory sandboxes cannot write: exit 2" 2 $rc
expect_eq "rw on a directory sandboxes cannot write: one sentence naming it, its owner, the fix" \
        "proctor exec: workspace $WORK/readonly ($T_OWNER's, mode 0555) is not writable by $T_OWNER, whom sandboxes act as there: use --workspace-mode ro (or overlay, writes discarded), or a directory $T_OWNER can write" \
        "$out"
out=$("$PROCTOR" run --mode sandbox --model demo --workspace "$WORK/readonly" hi 2>&1 >/dev/null); rc=$?
expect_eq "run: the same, exit 2" 2 $rc
expect_match "run: the same sentence, before the session" "^proctor run: workspace $WORK/readonly .* is not writable" "$out"
expect_eq "ro on it: the call runs" "ok" \
        "$("$PROCTOR" exec --mode sandbox --workspace-mode ro --workspace "$WORK/readonly" -- echo ok 2>/dev/null)"
expect_eq "local mode is not refused" "ok" \
        "$("$PROCTOR" exec --mode local --workspace "$WORK/readonly" -- echo ok 2>/dev/null)"
out=$("$PROCTOR" exec --mode sandbox --workspace-mode ro --workspace "$WORK/shut" -- true 2>&1); rc=$?
expect_eq "a directory sandboxes cannot enter: exit 2" 2 $rc
expect_match "a directory sandboxes cannot enter: said, with the fix" \
        "workspace $WORK/shut \($T_OWNER's, mode 0000\) cannot be entered by $T_OWNER, whom sandboxes act as there: give a directory $T_OWNER can enter \(--workspace DIR\), or use --mode local" \
        "$out"
if ! is_root; then
        out=$("$PROCTOR" exec --mode sandbox --workspace /root -- true 2>&1); rc=$?
        expect_eq "user: root's home: exit 2" 2 $rc
        expect_match "user: root's home: said" "workspace /root \(root's, mode 0700\) cannot be entered by $me" "$out"
fi
# control: the same command where the workspace is fine
expect_eq "control: a usable workspace runs" "ok" "$(sandbox -- echo ok 2>/dev/null)"

# ---- the workspace is opened once: a swapped path never redirects a call ----
P=$WORK/parent
mkdir -p "$P/proj"
echo mine > "$P/proj/marker"
give_away "$P"
S=$WORK/scripts
mkdir -p "$S"
cat > "$S/swap.jsonl" <<'EOF'
{"content": "", "tool_calls": [{"name": "bash", "arguments": {"command": "ls /workspace; sleep 2"}}]}
{"content": "", "tool_calls": [{"name": "bash", "arguments": {"command": "ls /workspace"}}]}
{"content": "done"}
EOF
"$PROCTOR" run --json --mode sandbox --model "script:$S/swap.jsonl" --workspace "$P/proj" \
        --trace "$WORK/swap.trace" go > "$WORK/swap.jsonl" 2>"$WORK/swap.err" &
sp=$!
track_pid $sp
sleep 1
# another sandbox whose workspace is the parent replaces proj by a link to /etc
"$PROCTOR" exec --mode sandbox --workspace "$P" -- sh -c 'mv proj proj.real && ln -s /etc proj'
expect_eq "the parent's sandbox swapped proj for a symlink" "/etc" "$(readlink "$P/proj")"
wait $sp
second=$(events_eval "$WORK/swap.jsonl" 'res(1)["output"]')
expect_no_match "the next call does not get /etc" "passwd|root:x|hostname" "$second"
expect_match "the next call gets the session's own directory, or a refusal" \
        "^marker|moved or replaced" "$second"
out=$("$PROCTOR" exec --mode sandbox --workspace "$P/proj" -- ls /workspace 2>&1); rc=$?
expect_eq "a new session on the swapped path is refused" 2 $rc
expect_match "the refusal names the symbolic link" "workspace .*proj is a symbolic link" "$out"

# ---- proctor's own process: no key in its environment, no argv in the init ----
key=sk-proctor-test-$RANDOM$RANDOM$RANDOM
# a local command reads its parent (the execution's init) and proctor itself
out=$(PROCTOR_API_KEY=$key OPENAI_API_KEY=$key PROCTOR_PROBE=probe-$key "$PROCTOR" exec --mode local \
        --workspace "$WORK" -- sh -c 'tr "\0" "\n" < /proc/$PPID/environ
                pp=$(awk "/^PPid:/ { print \$2 }" /proc/$PPID/status); tr "\0" "\n" < /proc/$pp/environ' 2>&1)
expect_no_match "local: no key in its parents' /proc environ" "$key" "$(grep -v '^PROCTOR_PROBE=' <<<"$out")"
# control: the same read shows an ordinary variable, so the read works; but
# proctor and the init are not dumpable, so only root may read them at all
if is_root; then
        expect_match "control: proctor's environ is readable by root" "^PROCTOR_PROBE=probe-$key" "$out"
else
        expect_match "proctor's and the init's environ are closed to their user" \
                "(environ: Permission denied.*){2}" "$(tr '\n' ' ' <<<"$out")"
fi
mark=argv-marker-$RANDOM
out=$(PROCTOR_API_KEY=$key "$PROCTOR" exec --mode sandbox --workspace "$WORK" -- \
        sh -c "tr '\\0' '\\n' < /proc/1/cmdline; tr '\\0' '\\n' < /proc/1/environ 2>/dev/null # $mark" 2>&1)
expect_no_match "sandbox: the init's cmdline shows no host argument" "$mark|--workspace" "$out"
expect_no_match "sandbox: the init's environ shows no key" "$key" "$out"
PROCTOR_API_KEY=$key "$PROCTOR" exec --mode sandbox --workspace "$WORK" -- sleep 2 &
px=$!
track_pid $px
sleep 0.3
if is_root; then
        expect_match "control: proctor's environ still names the variable" "^PROCTOR_API_KEY=" \
                "$(tr '\0' '\n' < /proc/$px/environ | grep '^PROCTOR_API_KEY')"
else
        check "proctor's own /proc environ is closed to its user" test ! -r /proc/$px/environ
fi
expect_no_match "proctor's own /proc environ holds no key" "$key" "$(tr '\0' '\n' < /proc/$px/environ 2>/dev/null)"
wait $px

# ---- loopback: a command reaches a server it started itself ----
out=$(sandbox -- python3 -c 'import socket, threading
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
def serve():
    c, _ = s.accept(); c.sendall(b"own-server"); c.close()
threading.Thread(target=serve).start()
c = socket.create_connection(("127.0.0.1", s.getsockname()[1]), timeout=5)
print(c.recv(20).decode())' 2>&1 | without_fallback_note)
expect_eq "sandbox: its own server on 127.0.0.1 answers" "own-server" "$out"

# ---- per-user kernel counters stay bounded per sandbox ----
cat > "$WORK/hog.py" <<'EOF'
import ctypes, os, signal, sys, time
libc = ctypes.CDLL(None, use_errno=True)
n = 0
while n < 1000 and libc.inotify_init1(0) >= 0:
    n += 1
print("inotify", n)
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGRTMIN])
q = 0
while q < 5000:
    try:
        os.kill(os.getpid(), signal.SIGRTMIN)
    except OSError:
        break
    q += 1
sigq = [l for l in open("/proc/self/status") if l.startswith("SigQ:")][0].split()[1]
print("sigq", sigq.split("/")[0])
sys.stdout.flush()
if len(sys.argv) > 1:
    open(sys.argv[1], "w").close()
    time.sleep(3)
EOF
out=$(sandbox -- python3 /workspace/hog.py 2>&1)
expect_match "sandbox: inotify instances stop at its own bound" "^inotify ([1-9]|1[0-6])$" \
        "$(grep '^inotify' <<<"$out")"
expect_match "sandbox: queued signals stop at its own bound" "^sigq ([0-9]{1,2}|1[0-9]{2}|2[0-5][0-9])$" \
        "$(grep '^sigq' <<<"$out")"
# control: in local mode the same program takes far more
out=$(local_exec -- python3 "$WORK/hog.py" 2>&1)
expect_match "control: local mode takes more inotify instances" "^inotify (1[7-9]|[2-9][0-9]|[1-9][0-9]{2,})$" \
        "$(grep '^inotify' <<<"$out")"
expect_match "control: local mode queues more signals" "^sigq ([3-9][0-9]{2}|[0-9]{4,})$" \
        "$(grep '^sigq' <<<"$out")"
# while four sandboxes hold all they may, the operator still gets its own
for i in 1 2 3 4; do
        sandbox -- python3 /workspace/hog.py "/workspace/held.$i" >/dev/null 2>&1 &
        track_pid $!
done
held() { [ "$(ls "$WORK"/held.* 2>/dev/null | wc -l)" -eq 4 ]; }
wait_until 15 held || fail "the four hogs did not all start"
expect_eq "the host user still gets an inotify instance" ok "$(python3 -c 'import ctypes
print("ok" if ctypes.CDLL(None).inotify_init1(0) >= 0 else "EMFILE")')"
wait
# ---- proctor's own config, state and traces inside the workspace ----
H=$WORK/home
mkdir -p "$H/.config/proctor"
echo '{"tool_execution_mode": "sandbox"}' > "$H/.config/proctor/config.json"
give_away "$H"
cp "$H/.config/proctor/config.json" "$WORK/config.orig"
as_home() { HOME=$H XDG_CONFIG_HOME="" XDG_STATE_HOME="" XDG_CACHE_HOME="" "$@"; }
# The attack works on the current directory: a sandbox's is /workspace, a
# local call's the workspace itself (never a host /workspace, which some
# hosts have).
attack_body='{ echo "{\"tool_execution_mode\": \"local\"}" > .config/proctor/config.json && echo wrote-config; } 2>/dev/null
mkdir -p .config/proctor/themes 2>/dev/null && echo made-themes
mv .config .config.old 2>/dev/null && echo moved-config
mv .config/proctor .config/p.old 2>/dev/null && echo moved-proctor
mv .local .local.old 2>/dev/null && echo moved-local
{ echo x > .local/state/proctor/planted && echo planted-state; } 2>/dev/null
true'
attack="cd /workspace || exit 1
$attack_body"
out=$(as_home "$PROCTOR" exec --mode sandbox --workspace "$H" -- sh -c "$attack" 2>&1 | without_fallback_note)
expect_eq "workspace = HOME: every attack on proctor's own files fails" "" "$out"
expect_eq "the host config is unchanged" "$(cat "$WORK/config.orig")" "$(cat "$H/.config/proctor/config.json")"
cat > "$S/own.jsonl" <<EOF
{"content": "", "tool_calls": [{"name": "bash", "arguments": {"command": $(python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$attack
{ echo x >> trace.jsonl && echo wrote-trace; } 2>/dev/null; true")}}]}
{"content": "done"}
EOF
as_home "$PROCTOR" run --json --model "script:$S/own.jsonl" --workspace "$H" --trace "$H/trace.jsonl" go \
        > "$WORK/own.jsonl" 2>"$WORK/own.err"
expect_eq "a session in HOME: the mode came from the config file" \
        "sandbox config file $H/.config/proctor/config.json" \
        "$(events_eval "$WORK/own.jsonl" 'of("session.start")[0]["mode"] + " " + of("session.start")[0]["mode_from"]')"
expect_eq "a session in HOME: its calls cannot touch proctor's files or its trace" "" \
        "$(events_eval "$WORK/own.jsonl" 'res(0)["output"].strip()')"
expect_eq "the host config is still unchanged" "$(cat "$WORK/config.orig")" "$(cat "$H/.config/proctor/config.json")"
expect_match "the trace is whole" "session.end" "$(tail -n 1 "$H/trace.jsonl")"
out=$(as_home "$PROCTOR" run --model "script:$S/own.jsonl" --workspace "$WORK" go 2>&1 >/dev/null | head -n 1)
expect_match "run names where the mode came from" "sandbox mode \(from config file $H/.config/proctor/config.json\)" "$out"
out=$(as_home "$PROCTOR" run --mode local --model "script:$S/own.jsonl" --workspace "$WORK/plant" go 2>&1 >/dev/null | head -n 1)
expect_match "run says local mode is not isolated, and why local" "local mode \(from --mode\), tools run on this host, not isolated" "$out"
# control: local mode is not protected, so the same attack does write there
as_home "$PROCTOR" exec --mode local --workspace "$H" -- sh -c "cd '$H' || exit 1
$attack_body" > "$WORK/own-local.out" 2>&1
expect_match "control: in local mode the config is writable" "wrote-config" "$(cat "$WORK/own-local.out")"
# ---- limits that fell back to rlimits are said plainly ----
err=$(sandbox -- true 2>&1 >/dev/null)
fb=$(sandbox --json -- true | json_field exec.create limits_per_process)
lerr=$(local_exec -- true 2>&1 >/dev/null)
expect_eq "local mode has no sandbox limits to warn about" "" "$lerr"
if [ "$(cg_v1_dir memory)" != "" ] && is_root; then
        expect_eq "with cgroups: exec warns of nothing" "" "$err"
        expect_eq "with cgroups: exec.create lists no per-process limit" "[]" "$fb"
else
        expect_match "without cgroups: exec says so before the command runs" \
                "^proctor exec: warning: no cgroup here for memory, CPU and pids: those limits hold per process only" "$err"
        expect_eq "without cgroups: exec.create lists them" '["memory", "cpu", "pids"]' "$fb"
        out=$("$PROCTOR" run --mode sandbox --model "script:$S/own.jsonl" --workspace "$WORK/plant" go 2>&1 >/dev/null)
        expect_match "without cgroups: run says so at the start" "proctor: warning: no cgroup here for memory, cpu and pids" "$out"
fi
# ---- a disk quota on what a session's sandboxes add to the workspace ----
D=$WORK/disk
mkdir "$D"
give_away "$D"
dsize() { du -sb "$D" | cut -f1; }
"$PROCTOR" exec --mode sandbox --workspace "$D" --disk 100M --json -- fallocate -l 2G /workspace/big \
        > "$WORK/fa.jsonl"; rc=$?
expect_eq "fallocate 2G past a 100M quota: disk_limit" disk_limit "$(json_field exec.exit reason < "$WORK/fa.jsonl")"
expect_eq "exec.create: the disk quota counts this sandbox" true "$(json_field exec.create disk_quota < "$WORK/fa.jsonl")"
expect_eq "fallocate 2G past a 100M quota: killed by SIGXFSZ (128+25)" 153 $rc
expect_match "fallocate 2G: nothing near 2G on the host" "^[0-9]{1,8}$" "$(stat -c %s "$D/big" 2>/dev/null || echo 0)"
rm -f "$D/big"
# control: the same call under the default quota does allocate
"$PROCTOR" exec --mode sandbox --workspace "$D" -- fallocate -l 200M /workspace/ok
expect_eq "control: fallocate 200M under the default 4G quota" 209715200 "$(stat -c %s "$D/ok" 2>&1)"
rm -f "$D/ok"
# many files, each under the quota, together past it
before=$(dsize)
"$PROCTOR" exec --mode sandbox --workspace "$D" --disk 100M --json -- sh -c \
        'for i in 1 2 3 4 5 6 7 8 9 10; do head -c 40M /dev/zero > /workspace/f$i; sleep 0.3; done; echo all-written' \
        > "$WORK/many.jsonl"
expect_eq "files past the quota together: disk_limit" disk_limit "$(json_field exec.exit reason < "$WORK/many.jsonl")"
expect_no_match "they were stopped before the end" "all-written" "$(json_eval 'out()' < "$WORK/many.jsonl")"
added=$(( $(dsize) - before ))
if [ "$added" -lt $((250 << 20)) ]; then pass; else fail "the quota let $added bytes through (100M quota)"; fi
rm -f "$D"/f*
# a session: its calls share the quota; removing files gives room back
cat > "$S/disk.jsonl" <<'EOF'
{"content": "", "tool_calls": [{"name": "bash", "arguments": {"command": "for i in 1 2 3 4 5 6; do head -c 40M /dev/zero > f$i; sleep 0.3; done"}}]}
{"content": "", "tool_calls": [{"name": "bash", "arguments": {"command": "echo more > small"}}]}
{"content": "", "tool_calls": [{"name": "bash", "arguments": {"command": "rm -f f*; sleep 1.5"}}]}
{"content": "", "tool_calls": [{"name": "bash", "arguments": {"command": "echo room-again > small && cat small"}}]}
{"content": "done"}
EOF
"$PROCTOR" run --json --mode sandbox --model "script:$S/disk.jsonl" --workspace "$D" --disk 100M \
        --trace "$WORK/disk.trace" go > "$WORK/disk-run.jsonl" 2>"$WORK/disk-run.err"
expect_eq "session: the quota is in session.start" 104857600 \
        "$(events_eval "$WORK/disk-run.jsonl" 'of("session.start")[0]["limits"]["disk_bytes"]')"
expect_match "session: the writer is told the quota is used up" "disk quota .* used up" \
        "$(events_eval "$WORK/disk-run.jsonl" 'res(0)["output"]')"
expect_eq "session: its execution ended disk_limit" disk_limit \
        "$(events_eval "$WORK/disk-run.jsonl" 'of("exec.exit")[0]["reason"]')"
expect_match "session: the next write finds no room" "File size limit|disk quota" \
        "$(events_eval "$WORK/disk-run.jsonl" 'res(1)["output"]')"
expect_eq "session: after removing files, writes work again" room-again \
        "$(events_eval "$WORK/disk-run.jsonl" 'res(3)["output"].strip()')"
finish
