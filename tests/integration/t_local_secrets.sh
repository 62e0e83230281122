#!/bin/bash
# What a tool in local mode can reach of proctor's secrets. proctor is not
# dumpable: a local bash call that reads the API key from the memory of its
# ancestors (the execution's init, a copy of proctor, and proctor itself)
# through /proc/PID/mem is refused, while the same reader, in the same call,
# reads a marker from a plain process of the same user (the control). And a
# local-mode MCP server gets only the variables its entry names and a small
# allowlist (PATH, HOME, the locale...), not proctor's environment: no key,
# and no host variable that a secret could hide in under another name.
# Root's processes may read any process (CAP_SYS_PTRACE): the memory part
# runs as the unprivileged user only.
# as-user: yes
. "$(dirname "$0")/lib.sh"

KEY=sk-local-secret-$RANDOM$RANDOM$RANDOM
. "$(dirname "$0")/openai_session.sh"
ev() { events_eval "$@"; }
reversed() { "$T_PY" -c "import sys; print(sys.argv[1][::-1])" "$1"; }

# reader.py REVERSED PID...: the string (given reversed, so that no command
# line holds it) counted in every readable mapping of each PID's memory;
# "ancestors:PID" stands for this process's ancestors up to PID.
cat >"$WORK/reader.py" <<'PY'
import os, sys
want = sys.argv[1][::-1].encode()
def ppid(pid):
    with open("/proc/%d/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])
pids = []
for a in sys.argv[2:]:
    if a.startswith("ancestors:"):
        top, pid = int(a.split(":")[1]), os.getpid()
        while pid not in (top, 1):
            pid = ppid(pid)
            pids.append(pid)
    else:
        pids.append(int(a))
for pid in pids:
    try:
        maps = open("/proc/%d/maps" % pid).read().splitlines()
        mem = open("/proc/%d/mem" % pid, "rb", buffering=0)
    except OSError as e:
        print(pid, "denied", e.strerror)
        continue
    hits = 0
    for line in maps:
        addr, perms = line.split()[:2]
        if "r" not in perms or line.endswith(("[vvar]", "[vsyscall]")):
            continue
        lo, hi = (int(x, 16) for x in addr.split("-"))
        try:
            mem.seek(lo)
            hits += mem.read(hi - lo).count(want)
        except OSError:
            pass
    print(pid, "hits", hits)
PY
# holder.py REVERSED: a plain process holding the string in its heap
cat >"$WORK/holder.py" <<'PY'
import sys, time
held = sys.argv[1][::-1]
print("ready", flush=True)
time.sleep(300)
PY
give_away "$WORK/reader.py" "$WORK/holder.py"

if is_root; then
        echo "note: root reads any process's memory; the /proc/PID/mem attack runs as the user"
else
        mark=control-marker-$RANDOM$RANDOM
        cmd="python3 holder.py $(reversed "$mark") >held.txt & h=\$!
for i in \$(seq 600); do grep -q ready held.txt 2>/dev/null && break; sleep 0.05; done
echo control; python3 reader.py $(reversed "$mark") \$h; kill \$h
echo attack; python3 reader.py $(reversed "$KEY") ancestors:\$(cat proctor.pid)"
        "$T_PY" -c 'import json, sys
print(json.dumps({"tool_calls": [{"name": "bash", "arguments": {"command": sys.argv[1]}}]}))
print(json.dumps({"content": "done"}))' "$cmd" >"$WORK/attack.script"
        fake_start attack
        # proctor's pid is this shell's: exec keeps it
        (cd "$WORK" && exec env -u OPENAI_API_KEY -u HF_TOKEN PROCTOR_API_KEY="$KEY" bash -c \
                'echo $$ >proctor.pid; exec "$@"' - "$PROCTOR" run --json --mode local \
                --model openai:fake-model --base-url "http://127.0.0.1:$port/v1" \
                --workspace "$WORK" "read it" >"$WORK/attack.jsonl" 2>"$WORK/attack.err")
        rc=$?
        fake_stop
        expect_eq "the session completes" 0 $rc
        out=$(ev "$WORK/attack.jsonl" 'of("tool.result")[0]["output"]')
        pp=$(cat "$WORK/proctor.pid")
        control=$(sed -n '/^control$/,/^attack$/p' <<<"$out")
        attack=$(sed -n '/^attack$/,$p' <<<"$out")
        expect_match "control: the reader finds the marker in a plain process of the user" \
                "^[0-9]+ hits [1-9]" "$control"
        expect_match "the reader reached proctor itself" "^$pp (denied|hits)" "$attack"
        expect_no_match "no ancestor's memory shows the key (init and proctor)" "hits [1-9]" "$attack"
        expect_match "proctor's memory is refused to its own user" "^$pp denied" "$attack"
fi

# ---- a local-mode MCP server's environment ----
cp "$T_DIR/mcp_fake.py" "$WORK/"
give_away "$WORK/mcp_fake.py"
cat >"$WORK/env.json" <<'JSON'
{"mcpServers": {"s": {"command": "python3", "args": ["mcp_fake.py"], "env": {"WHO": "entry", "S_TOKEN": "entry-token"}}}}
JSON
echo '{"tool_calls": [{"name": "mcp__s__env", "arguments": {}}]}
{"content": "done"}' >"$WORK/env.script"
(cd "$WORK" && env PROCTOR_API_KEY="$KEY" OPENAI_API_KEY="$KEY" AWS_ACCESS_KEY_ID=AKIA-host-id \
        DATABASE_URL=postgres://app:hunter2@db/app HOST_ONLY=host-value "$PROCTOR" run --mode local \
        --mcp-config env.json --model script:env.script --trace "$WORK/env.trace" "env" \
        >/dev/null 2>"$WORK/env.err")
expect_eq "the MCP session completes" 0 $?
out=$(ev "$WORK/env.trace" 'of("tool.result")[0]["output"]')
expect_match "the server's own variables reach it" "^WHO=entry$" "$out"
expect_match "a token its entry names reaches it" "^S_TOKEN=entry-token$" "$out"
# (a version manager's python3 shim may add to PATH before the server runs)
expect_match "PATH comes from the host" "^PATH=(.*:)?/usr/bin(:|$)" "$out"
expect_match "HOME comes from the host" "^HOME=/" "$out"
expect_no_match "no API key reaches it" "$KEY|PROCTOR_API_KEY|OPENAI_API_KEY" "$out"
expect_no_match "no other host variable reaches it" \
        "AWS_ACCESS_KEY_ID|AKIA-host-id|DATABASE_URL|hunter2|HOST_ONLY" "$out"
# control: a bash call of the same session setup sees those host variables,
# as local mode means to (only secret-looking names are left out)
out=$(env AWS_ACCESS_KEY_ID=AKIA-host-id HOST_ONLY=host-value "$PROCTOR" exec --mode local \
        --workspace "$WORK" -- env)
expect_match "control: a local command gets the host's environment" "^HOST_ONLY=host-value$" "$out"
finish
