#!/bin/bash
# MCP servers and the network in sandbox mode: an entry with "network": true
# runs in a sandbox that keeps the host's network namespace (it reaches a
# TCP listener on the host's 127.0.0.1) and nothing else of the host (its own
# hostname and pids, no abstract unix socket of the host); an entry without
# it reaches nothing. exec.create says which. The server is tests'
# mcp_fake.py, run from the workspace.
# as-user: yes
. "$(dirname "$0")/lib.sh"

cp "$(dirname "$0")/mcp_fake.py" "$WORK/"
give_away "$WORK/mcp_fake.py"
TAG=proctor-it-mcpnet-$$
cat >"$WORK/listen.py" <<'PY'
import os, select, socket, sys, time
tag, ready = sys.argv[1:3]
t = socket.socket(); t.bind(("127.0.0.1", 0)); t.listen(16)
a = socket.socket(socket.AF_UNIX); a.bind("\0" + tag); a.listen(16)
with open(ready + ".tmp", "w") as f:
    f.write("%d\n" % t.getsockname()[1])
os.rename(ready + ".tmp", ready)
end = time.time() + 60
while time.time() < end:
    for s in select.select([t, a], [], [], 0.5)[0]:
        c, _ = s.accept()
        c.sendall(b"hello-from-host\n")
        c.close()
PY
python3 "$WORK/listen.py" $TAG "$WORK/ready" &
track_pid $!
if wait_until 10 test -s "$WORK/ready"; then pass; else fail "the host's listener did not start"; fi
port=$(cat "$WORK/ready")

# premise: from the host both answer
expect_eq "premise: the host reaches its listener" "connected: hello-from-host" \
        "$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"connect","arguments":{"port":'$port'}}}' |
                python3 "$WORK/mcp_fake.py" | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["content"][0]["text"])')"

cat >"$WORK/mcp.json" <<JSON
{"mcpServers": {
  "net": {"command": "python3", "args": ["mcp_fake.py"], "network": true},
  "iso": {"command": "python3", "args": ["mcp_fake.py"]}}}
JSON
cat >"$WORK/calls.jsonl" <<JSON
{"content": "", "tool_calls": [{"name": "mcp__net__connect", "arguments": {"port": $port}}, {"name": "mcp__iso__connect", "arguments": {"port": $port}}, {"name": "mcp__net__unix", "arguments": {"name": "$TAG"}}, {"name": "mcp__net__whoami", "arguments": {}}, {"name": "mcp__net__probe", "arguments": {}}]}
{"content": "all done"}
JSON

# result CALL_ID < trace: the call's output
result() {
        python3 -c 'import json,sys
for l in sys.stdin:
    e = json.loads(l)
    if e["type"] == "tool.result" and e["call_id"] == sys.argv[1]: print(e["output"])' "$1"
}
# net_of LABEL < trace: exec.create's network for that execution
net_of() {
        python3 -c 'import json,sys
for l in sys.stdin:
    e = json.loads(l)
    if e["type"] == "exec.create" and e.get("label") == sys.argv[1]: print(e.get("network"))' "$1"
}

T=$WORK/sandbox.jsonl
out=$(cd "$WORK" && "$PROCTOR" run --mode sandbox --mcp-config mcp.json --model script:calls.jsonl \
        --trace "$T" "reach out" 2>"$WORK/err"); rc=$?
expect_eq "sandbox: the session completes" 0 $rc
expect_eq "sandbox: run prints the answer" "all done" "$out"
expect_match "sandbox: the networked server is ready" "MCP server net: ready, 5 tools" "$(cat "$WORK/err")"
expect_eq "sandbox: network true reaches the host's 127.0.0.1" "connected: hello-from-host" \
        "$(result call_1 <"$T")"
expect_match "sandbox: without it, nothing is reached" "^failed: .*(refused|unreachable)" \
        "$(result call_2 <"$T")"
expect_match "sandbox: the host's abstract unix sockets stay out of reach" \
        "^failed: .*(not permitted|denied)" "$(result call_3 <"$T")"
expect_match "sandbox: the networked server keeps its own uts and pid namespaces" \
        "^sandbox [0-9]$" "$(result call_4 <"$T")"
expect_match "sandbox: it sees no host home, seccomp still refuses namespaces, socketpair works, the host's CA certificates are trusted" \
        "^root: ENOENT, unshare: EPERM, socketpair: ok, ca: [1-9][0-9]*$" "$(result call_5 <"$T")"
expect_match "control: the host trusts CA certificates too" "ca: [1-9]" \
        "$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"probe","arguments":{}}}' |
                python3 "$WORK/mcp_fake.py")"
expect_eq "sandbox: exec.create says the network is shared" shared "$(net_of "mcp server net (host network)" <"$T")"
expect_eq "sandbox: and none for the other" none "$(net_of "mcp server iso" <"$T")"
expect_match "sandbox: mcp list says so" "^net: ready, 5 tools, network \(the host's" \
        "$(cd "$WORK" && "$PROCTOR" mcp list --mode sandbox --mcp-config mcp.json)"

T=$WORK/local.jsonl
(cd "$WORK" && "$PROCTOR" run --mode local --mcp-config mcp.json --model script:calls.jsonl \
        --trace "$T" "reach out" >/dev/null 2>&1)
expect_eq "local: both reach the host" "connected: hello-from-host connected: hello-from-host" \
        "$(echo $(result call_1 <"$T") $(result call_2 <"$T"))"
expect_eq "local: exec.create says host" host "$(net_of "mcp server iso" <"$T")"
if is_root; then
        expect_match "local (premise of the probe): root's server lists /root" "^root: listed" \
                "$(result call_5 <"$T")"
fi

finish
