#!/bin/bash
# --runtime docker: every execution one container of a private Docker
# daemon started here (no registry: a busybox-static image made with
# `docker import`): output, exit codes, stdin, the limits (memory, pids,
# wall clock) and their exit reasons, stats in --json, the lifecycle, kill
# from the supervisor, the sweep after a SIGKILLed proctor, no network, a
# read-only root, and the errors that name their fix; the boundary: the
# workspace opened once (a path swapped between calls), the owner's group,
# per-user counters, a killed proctor's container ending on its own, a
# sweep that leaves others' containers. As a user without the daemon: the
# permission-denied message only.
# as-user: yes
# lock: engine (a container engine's daemon at a time: each is heavy)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/engine_checks.sh"

BUSYBOX=/bin/busybox
IMAGE=proctor-test:busybox
ENGINE=docker

# A unix socket this user may not open: the permission message names the fix.
# (run by another user as root: from a copy of the binary that user can
# reach, in the scratch directory, as a checkout may sit in a 0700 home)
perm_socket_check() {
        local sock=$1 bin=$PROCTOR
        shift
        if is_root; then
                bin=$WORK/proctor-copy
                cp "$PROCTOR" "$bin" && chmod 755 "$bin"
        fi
        (cd "$WORK" && "$@" "$bin" exec --runtime docker --image "$IMAGE" -- true >/dev/null 2>"$WORK/perm")
        expect_eq "permission denied: setup failed (125)" 125 $?
        expect_match "permission denied: names the socket and the group" \
                "permission denied on the Docker engine socket $sock .*group .*usermod -aG" \
                "$(cat "$WORK/perm")"
}

if ! is_root; then
        "$T_PY" -c 'import socket, sys, os
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0)
s.listen(1); sys.stdin.read()' "$WORK/denied.sock" </dev/null &
        wait_until 5 test -S "$WORK/denied.sock"
        DOCKER_HOST=unix://$WORK/denied.sock perm_socket_check "$WORK/denied.sock" env
        echo "t_docker: not root: no private Docker daemon can start; only the permission message was tested"
        finish
        exit $?
fi

if ! command -v dockerd >/dev/null || ! command -v docker >/dev/null || [ ! -x "$BUSYBOX" ]; then
        echo "SKIP t_docker: dockerd, docker or $BUSYBOX missing (install-deps.sh installs docker.io, busybox-static)"
        exit 0
fi

# ---- a private daemon, gone at exit with everything it mounted ----
D=$(mktemp -d /tmp/pdk.XXXX)
PORT=$((23000 + RANDOM % 2000))
stop_daemon() {
        local p m
        p=$(cat "$D/pid" 2>/dev/null)
        if [ -n "$p" ]; then
                kill "$p" 2>/dev/null
                for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
                kill -9 "$p" 2>/dev/null
        fi
        for m in $(awk -v d="$D" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r); do
                umount -l "$m" 2>/dev/null
        done
        rm -rf "$D"
}
at_exit stop_daemon
dockerd --iptables=false --ip6tables=false --bridge=none --data-root "$D/data" \
        --exec-root "$D/exec" -H "unix://$D/docker.sock" -H "tcp://127.0.0.1:$PORT" \
        --pidfile "$D/pid" >"$D/log" 2>&1 &
export DOCKER_HOST=unix://$D/docker.sock
if ! wait_until 30 docker version >/dev/null 2>&1; then
        echo "SKIP t_docker: the private Docker daemon did not start:"
        tail -5 "$D/log"
        exit 0
fi
dk() { "$PROCTOR" exec --runtime docker --image "$IMAGE" --workspace "$WORK" "$@"; }

engine_image "$D"

engine_check_exits

# ---- selected by the environment and the config file too ----
out=$(PROCTOR_RUNTIME=docker PROCTOR_IMAGE=$IMAGE "$PROCTOR" exec --workspace "$WORK" --json -- true | json_field exec.create runtime)
expect_eq "PROCTOR_RUNTIME and PROCTOR_IMAGE" docker "$out"
echo '{"runtime": "docker", "image": "'"$IMAGE"'"}' >"$WORK/c.json"
out=$("$PROCTOR" exec --config "$WORK/c.json" --workspace "$WORK" --json -- true | json_field exec.create runtime)
expect_eq "config keys runtime and image" docker "$out"
out=$(PROCTOR_RUNTIME=docker "$PROCTOR" exec --runtime native --workspace "$WORK" --json -- true | json_field exec.create runtime)
expect_eq "--runtime native wins over the environment" native "$out"
"$PROCTOR" exec --runtime docker --mode local --image "$IMAGE" -- true 2>"$WORK/e"
expect_match "--mode local with docker: refused" "cannot be combined with --mode local" "$(cat "$WORK/e")"

# ---- events: order, runtime, lifecycle, stats ----
dk --json -- sh -c 'echo hi; sleep 2.5' >"$WORK/ev"
# (stats samples come whenever the engine sends them: engine_check_stats)
expect_eq "events in contract order" \
        "exec.create exec.state exec.start exec.state exec.output exec.state exec.exit exec.state exec.remove" \
        "$(json_eval '" ".join(e["type"] for e in ev if e["type"] != "exec.stats")' <"$WORK/ev")"
engine_check_stats

engine_check_limits
engine_check_disk

# ---- the walls ----
out=$(dk -- sh -c 'wget -q -T 2 -O- http://127.0.0.1:1/ 2>&1 || echo wget-failed; nc -w 2 10.0.2.2 80 </dev/null 2>&1 || echo nc-failed; ip -o link 2>/dev/null | grep -vc " lo:"' 2>&1)
expect_match "no network: wget fails" "wget-failed" "$out"
expect_match "no network: nc fails" "nc-failed" "$out"
out=$(dk -- sh -c 'touch /etc/x 2>&1; touch /bin/x 2>&1; echo t > /tmp/t && cat /tmp/t' 2>&1)
expect_match "read-only root: /etc" "/etc/x: Read-only file system" "$out"
expect_match "read-only root: /bin" "/bin/x: Read-only file system" "$out"
expect_match "/tmp is writable" "^t$" "$out"
out=$(dk -- sh -c 'id -u; grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/self/status | tr -s "\t" " "')
expect_eq "not root, no capabilities, no new privileges, seccomp on" "$(id -u "$T_OWNER")
CapEff: 0000000000000000
NoNewPrivs: 1
Seccomp: 2" "$out"
engine_check_seccomp
dk -- sh -c 'echo from-container > /workspace/w'
expect_eq "rw workspace: the host sees the write" from-container "$(cat "$WORK/w" 2>/dev/null)"
out=$(dk --workspace-mode ro -- sh -c 'cat /workspace/w; echo x > /workspace/w2' 2>&1)
expect_match "ro workspace: readable" "from-container" "$out"
expect_match "ro workspace: not writable" "w2: Read-only file system" "$out"
dk --workspace-mode overlay -- true 2>"$WORK/e"
expect_eq "overlay workspace: refused" 125 $?
expect_match "overlay: says why" "overlay is for native sandboxes" "$(cat "$WORK/e")"
# a root-owned workspace: a container acts as nobody there, so rw is
# refused before the first call, naming proctor's own sandbox as the way
mkdir -m 755 "$WORK/rootws"
"$PROCTOR" exec --runtime docker --image "$IMAGE" --workspace "$WORK/rootws" -- true 2>"$WORK/e"
expect_eq "a root-owned workspace, rw: refused (2)" 2 $?
expect_match "and it says why and what works" \
        "rootws \(root's, mode 0755\) is not writable by nobody.*leave out --runtime: proctor's own sandbox acts as root" \
        "$(cat "$WORK/e")"
out=$("$PROCTOR" exec --runtime docker --image "$IMAGE" --workspace "$WORK/rootws" --workspace-mode ro -- ls /workspace 2>&1)
expect_eq "a root-owned workspace, ro: the container reads it" "" "$out"

# ---- the engine over tcp (plain; TLS is not tested here) ----
out=$(echo | DOCKER_HOST=tcp://127.0.0.1:$PORT dk -- sh -c 'echo over-tcp; exit 5')
expect_eq "tcp: exit code" 5 $?
expect_eq "tcp: output" over-tcp "$out"
DOCKER_HOST=tcp://127.0.0.1:1 dk -- true 2>"$WORK/e"
expect_eq "tcp: nobody listening: 125" 125 $?
expect_match "tcp: nobody listening: said" "cannot reach the Docker engine at tcp://127.0.0.1:1" "$(cat "$WORK/e")"

# ---- an MCP server in a container: stdin kept open (a shell speaking JSON-RPC) ----
cat >"$WORK/mcp.sh" <<'S'
while read -r line; do
        id=$(echo "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
        case "$line" in
        *'"initialize"'*) echo '{"jsonrpc":"2.0","id":'$id',"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"1"}}}' ;;
        *'"tools/list"'*) echo '{"jsonrpc":"2.0","id":'$id',"result":{"tools":[{"name":"hello","description":"says hello","inputSchema":{"type":"object"}}]}}' ;;
        *'"tools/call"'*) echo '{"jsonrpc":"2.0","id":'$id',"result":{"content":[{"type":"text","text":"hello from '$(hostname)'"}]}}' ;;
        esac
done
S
echo '{"mcpServers": {"sh": {"command": "sh", "args": ["/workspace/mcp.sh"]}}}' >"$WORK/mcp.json"
cat >"$WORK/m.jsonl" <<'S'
{"content": "Asking.", "tool_calls": [{"name": "mcp__sh__hello", "arguments": {}}]}
{"content": "Done."}
S
give_away "$WORK/mcp.sh"

# ---- the engine over tcp with TLS (a second daemon; certificates made here) ----
T=$D/tls
# an address of this host's that is not loopback, for an engine proctor
# must take as remote (TLS with client certificates only: never a plain
# tcp engine on a network address)
EXTIP=$(ip -4 -o addr show scope global 2>/dev/null | awk '{ sub("/.*", "", $4); print $4; exit }')
if command -v openssl >/dev/null && mkdir -p "$T" && (
        cd "$T" &&
                openssl req -x509 -newkey rsa:2048 -nodes -keyout ca-key.pem -out ca.pem -days 1 -subj /CN=proctor-test-ca &&
                openssl req -newkey rsa:2048 -nodes -keyout server-key.pem -out server.csr -subj /CN=127.0.0.1 &&
                printf 'subjectAltName=IP:127.0.0.1%s\nextendedKeyUsage=serverAuth\n' "${EXTIP:+,IP:$EXTIP}" >srv.ext &&
                openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -out server-cert.pem -days 1 -extfile srv.ext &&
                openssl req -newkey rsa:2048 -nodes -keyout key.pem -out client.csr -subj /CN=client &&
                printf 'extendedKeyUsage=clientAuth\n' >cl.ext &&
                openssl x509 -req -in client.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -out cert.pem -days 1 -extfile cl.ext
) >/dev/null 2>&1; then
        TPORT=$((PORT + 1))
        dockerd --iptables=false --ip6tables=false --bridge=none --data-root "$D/tdata" \
                --exec-root "$D/texec" -H "unix://$D/t.sock" -H "tcp://127.0.0.1:$TPORT" \
                ${EXTIP:+-H "tcp://$EXTIP:$TPORT"} --tlsverify \
                --tlscacert "$T/ca.pem" --tlscert "$T/server-cert.pem" --tlskey "$T/server-key.pem" \
                --pidfile "$D/tpid" >"$D/tlog" 2>&1 &
        at_exit 'kill $(cat '"$D"'/tpid)'
        if wait_until 30 env DOCKER_HOST=unix://$D/t.sock docker version >/dev/null 2>&1; then
                tar -C "$D/root" -c . | DOCKER_HOST=unix://$D/t.sock docker import - "$IMAGE" >/dev/null
                tls() { DOCKER_HOST=tcp://127.0.0.1:$TPORT DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$T "$@"; }
                out=$(tls dk -- sh -c 'echo over-tls; exit 6')
                expect_eq "tls: exit code" 6 $?
                expect_eq "tls: output" over-tls "$out"
                tls dk --json -- sh -c 'sleep 1.5' >"$WORK/ev"
                expect_eq "tls: stats and a clean end" "true exited" \
                        "$(json_eval '"%s %s" % (str(len(of("exec.stats")) > 0).lower(), of("exec.exit")[0]["reason"])' <"$WORK/ev")"
                DOCKER_HOST=tcp://127.0.0.1:$TPORT DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$WORK dk -- true 2>"$WORK/e"
                expect_match "tls: no client certificate: said" "DOCKER_CERT_PATH's ca.pem, cert.pem and key.pem" "$(cat "$WORK/e")"
                DOCKER_HOST=tcp://127.0.0.1:$TPORT dk -- true 2>"$WORK/e"
                expect_match "tls: plain tcp to a TLS engine: said" "does it want TLS: DOCKER_TLS_VERIFY=1" "$(cat "$WORK/e")"
                cat >"$WORK/py.jsonl" <<'S'
{"content": "Python.", "tool_calls": [{"name": "run_python_code", "arguments": {"code": "print(1)"}}]}
{"content": "Done."}
S
                # run_python_code hands its code over stdin: over TLS on an
                # attach of its own, whose close is the end of stdin (the
                # image's python3 prints "stdin:" and cats it)
                tls "$PROCTOR" run --runtime docker --image "$IMAGE" --workspace "$WORK" \
                        --model "script:$WORK/py.jsonl" --json go >"$WORK/ev" 2>"$WORK/e"
                expect_eq "tls: stdin reaches the command, and ends" "stdin:
print(1)" "$(json_field tool.result output <"$WORK/ev")"
                expect_eq "tls: the call exits 0" 0 "$(json_field tool.result exit_code <"$WORK/ev")"
                # 300 KB of code: many TLS records, sends that wait
                "$T_PY" -c 'import json
code = "".join("x%d = %d\n" % (i, i) for i in range(30000))
print(json.dumps({"content": "Big.", "tool_calls": [{"name": "run_python_code", "arguments": {"code": code}}]}))
print(json.dumps({"content": "Done."}))' >"$WORK/big.jsonl"
                tls "$PROCTOR" run --runtime docker --image "$IMAGE" --workspace "$WORK" \
                        --model "script:$WORK/big.jsonl" --json go >"$WORK/ev" 2>"$WORK/e"
                expect_eq "tls: 300 KB of stdin arrive whole" "30001 x29999 = 29999" \
                        "$(json_eval '(lambda o: "%d %s" % (len(o), o[-1]))("".join(e["data"] for e in of("tool.output")).splitlines())' <"$WORK/ev")"
                # the disk quota: a loopback engine mounts this host's
                # workspace, so it holds; one at another address is taken
                # as remote, and proctor says the quota does not hold
                tls dk --json --disk 10M -- true >"$WORK/ev" 2>"$WORK/e"
                expect_eq "tls: a loopback engine: the disk quota holds" true "$(json_field exec.create disk_quota <"$WORK/ev")"
                if [ -n "$EXTIP" ]; then
                        DOCKER_HOST=tcp://$EXTIP:$TPORT DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$T dk --disk 10M -- echo ran >"$WORK/out" 2>"$WORK/e"
                        expect_eq "remote engine: the command runs" ran "$(cat "$WORK/out")"
                        expect_match "remote engine: says the disk quota does not hold" \
                                "warning: the disk quota \(--disk\) does not hold here: a remote engine" "$(cat "$WORK/e")"
                        DOCKER_HOST=tcp://$EXTIP:$TPORT DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$T dk --json --disk 10M -- true >"$WORK/ev" 2>/dev/null
                        expect_eq "remote engine: exec.create says so" false "$(json_field exec.create disk_quota <"$WORK/ev")"
                        DOCKER_HOST=tcp://$EXTIP:$TPORT DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$T dk --workspace-mode ro --disk 10M -- true 2>"$WORK/e"
                        expect_eq "remote engine, ro workspace: nothing to warn of" "" "$(cat "$WORK/e")"
                else
                        echo "t_docker: no non-loopback address here: the remote engine's disk quota warning not tested"
                fi
                # an MCP server's stdin kept open over TLS: messages written
                # after the start, through the stdin attach's thread
                cat >"$WORK/m2.jsonl" <<'S'
{"content": "Asking twice.", "tool_calls": [{"name": "mcp__sh__hello", "arguments": {}}]}
{"content": "Again.", "tool_calls": [{"name": "mcp__sh__hello", "arguments": {}}]}
{"content": "Done."}
S
                tls "$PROCTOR" run --runtime docker --image "$IMAGE" --workspace "$WORK" --mcp-config "$WORK/mcp.json" \
                        --model "script:$WORK/m2.jsonl" --json go >"$WORK/ev" 2>"$WORK/e"
                expect_eq "tls: an MCP server in a container is ready" ready \
                        "$(json_eval '[e["state"] for e in of("mcp.server")][-1]' <"$WORK/ev")"
                expect_eq "tls: its tool answers both calls" true \
                        "$(json_eval 'len(of("tool.result")) == 2 and all(r["ok"] and r["output"].startswith("hello from ") for r in of("tool.result"))' <"$WORK/ev")"
                expect_eq "tls: the session completes" completed "$(json_field session.end status <"$WORK/ev")"
                expect_eq "tls: nothing left" 0 "$(DOCKER_HOST=unix://$D/t.sock docker ps -aq --filter label=proctor.pid | wc -l)"
        else
                echo "t_docker: the TLS daemon did not start; TLS not tested: $(tail -2 "$D/tlog")"
        fi
        kill "$(cat "$D/tpid")" 2>/dev/null
        wait_until 10 test ! -e "$D/tpid"
else
        echo "t_docker: no openssl: TLS not tested"
fi

# ---- what cannot be bounded is said ----
out=$("$PROCTOR" doctor --json 2>/dev/null | "$T_PY" -c 'import json, sys; print(json.load(sys.stdin)["enforced"]["docker_counters"])')
expect_match "doctor: the docker runtime's counters, and inotify's limit unbounded" \
        "256 queued signals.*inotify instances and watches are NOT bounded" "$out"

# ---- errors that name the fix ----
engine_check_no_image
DOCKER_HOST=unix://$WORK/none.sock dk -- true 2>"$WORK/e"
expect_eq "no socket: 125" 125 $?
expect_match "no socket: is the daemon running" "is the docker daemon running\\? DOCKER_HOST=unix://$WORK/none.sock" "$(cat "$WORK/e")"
"$PROCTOR" exec --runtime docker -- true 2>"$WORK/e"
expect_match "no --image: said" "needs --image REF" "$(cat "$WORK/e")"
"$PROCTOR" exec --runtime podman -- true 2>"$WORK/e"
expect_match "unknown runtime: said" "unknown runtime 'podman'" "$(cat "$WORK/e")"
chgrp root "$D/docker.sock" && chmod 0660 "$D/docker.sock"
perm_socket_check "$D/docker.sock" setpriv --reuid=proctor-test --regid=proctor-test --clear-groups \
        env HOME=/home/proctor-test

engine_check_kill
engine_check_sweep
engine_check_sweep_foreign
engine_check_session
engine_check_workspace_swap
engine_check_group
engine_check_counters
engine_check_orphan
engine_check_volume

# ---- the file tools in a container: proctor's binary and libraries, read-only ----
cat >"$WORK/f.jsonl" <<'S'
{"content": "Writing.", "tool_calls": [{"name": "write", "arguments": {"path": "ft.txt", "content": "from a file tool\n"}}]}
{"content": "Editing.", "tool_calls": [{"name": "edit", "arguments": {"path": "ft.txt", "old_str": "a file", "new_str": "the edit"}}]}
{"content": "Reading.", "tool_calls": [{"name": "read", "arguments": {"path": "ft.txt"}}]}
{"content": "Overwriting.", "tool_calls": [{"name": "write", "arguments": {"path": "/.proctor/proctor", "content": "x"}}]}
{"content": "Looking.", "tool_calls": [{"name": "bash", "arguments": {"command": "ls /usr/lib /.proctor 2>&1"}}]}
{"content": "Done."}
S
"$PROCTOR" run --runtime docker --image "$IMAGE" --workspace "$WORK" --model "script:$WORK/f.jsonl" --json go >"$WORK/ev" 2>"$WORK/e"
expect_eq "file tools: five containers" '["docker", "docker", "docker", "docker", "docker"]' "$(json_eval '[e["runtime"] for e in of("exec.create")]' <"$WORK/ev")"
expect_eq "file tools: they work, proctor's binary cannot be overwritten" '[true, true, true, false, false]' "$(json_eval '[r["ok"] for r in of("tool.result")]' <"$WORK/ev")"
expect_eq "file tools: the edited file on the host" "from the edit tool" "$(cat "$WORK/ft.txt")"
expect_match "file tools: read shows it" "from the edit tool" "$(json_eval '[r["output"] for r in of("tool.result")][2]' <"$WORK/ev")"
expect_match "file tools: proctor's binary cannot be written" "cannot write /.proctor/proctor: (Permission denied|Read-only file system)" "$(json_eval '[r["output"] for r in of("tool.result")][3]' <"$WORK/ev")"
out=$(json_eval '[r["output"] for r in of("tool.result")][4]' <"$WORK/ev")
expect_match "file tools: the image gains no /usr/lib" "/usr/lib: No such file" "$out"
# every container starts through proctor's own init (exec/docker/docker_init.c)
expect_match "file tools: proctor's binary is in a command's container too, read-only" "^proctor$" "$out"
expect_eq "file tools: nothing left" 0 "$(leftovers)"

# ---- an MCP server in a container: stdin kept open (a shell speaking JSON-RPC, above) ----
"$PROCTOR" run --runtime docker --image "$IMAGE" --workspace "$WORK" --mcp-config "$WORK/mcp.json" \
        --model "script:$WORK/m.jsonl" --json go >"$WORK/ev" 2>/dev/null
expect_eq "mcp: the server is ready" ready "$(json_eval '[e["state"] for e in of("mcp.server")][-1]' <"$WORK/ev")"
expect_match "mcp: its tool answered from a container" '"hello from [0-9a-f]{12}"' \
        "$(json_eval '[r["output"] for r in of("tool.result")]' <"$WORK/ev")"
out=$("$PROCTOR" mcp list --runtime docker --image "$IMAGE" --workspace "$WORK" --mcp-config "$WORK/mcp.json" 2>&1)
expect_match "mcp list: the server in a container, its tool" "hello" "$out"
expect_eq "mcp: nothing left" 0 "$(leftovers)"

# ---- the supervisor: the badge, and k kills a container ----
. "$(dirname "$0")/tmux.sh"
cat >"$WORK/k.jsonl" <<'S'
{"content": "Waiting.", "tool_calls": [{"name": "bash", "arguments": {"command": "i=0; while :; do i=$((i+1)); echo $i > /workspace/count; usleep 50000; done"}}]}
{"content": "Killed, fine."}
S
start k 160x40 "DOCKER_HOST=$DOCKER_HOST $PROCTOR --runtime docker --image $IMAGE --model script:$WORK/k.jsonl"
expect_screen k "Where should this session's tools run" "setup"
expect_screen k "DOCKER" "the header names the runtime"
$T send-keys -t k go Enter
expect_screen k "#1 running" "the container runs" 15
check "its container exists" wait_until 5 leftovers_are 1
$T send-keys -t k Tab Tab Home
count() { cat "$WORK/count" 2>/dev/null; }
wait_until 10 test -n "$(count)"
$T send-keys -t k p
expect_screen k "#1 paused" "p pauses the container"
sleep 0.5
before=$(count)
sleep 1
expect_eq "paused: the counter stands still" "$before" "$(count)"
expect_eq "paused: the engine says so" paused "$(docker inspect -f '{{.State.Status}}' "$(docker ps -aq --filter label=proctor.pid)" 2>/dev/null)"
$T send-keys -t k p
expect_screen k "#1 resumed" "p again resumes it"
counter_past() { test "$(count)" -gt "$1"; }
check "resumed: the counter goes on" wait_until 10 counter_past "$before"
$T send-keys -t k p
expect_screen k "#1 paused" "paused again"
$T send-keys -t k k
sleep 0.3
$T send-keys -t k y
expect_screen k "#1 killed" "k kills it, paused as it was" 10
expect_screen k "Killed, fine" "the session goes on" 10
check "its container is removed" wait_until 10 leftovers_are 0
$T send-keys -t k q
expect_screen k "EXITED 0" "quit"

finish
