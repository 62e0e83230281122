#!/bin/bash
# Regenerates screenshots/*.png from the real program: each scenario runs
# proctor in a detached tmux, captures the pane with its colours
# (capture-pane -e), turns it into HTML with aha and renders that with
# headless Chromium. Installs aha and chromium when missing.
set -eu
cd "$(dirname "$0")/.."
top=$PWD
out=$top/screenshots
proctor=$top/proctor
for p in aha chromium fonts-dejavu-core tmux; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
                need="${need:-} $p"
        fi
done
if [ -n "${need:-}" ]; then
        echo "screenshots: installing:$need" >&2
        SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
        $SUDO apt-get install -y -qq --no-install-recommends $need >/dev/null
fi
work=$(mktemp -d /tmp/proctor-shots.XXXXXX)
chmod 755 "$work"
sock=$work/tmux.sock
T="tmux -S $sock"
trap '$T kill-server 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$out" "$work/ws"
# as root, a workspace of an unprivileged owner: root's sandboxes act on a
# root-owned one only as nobody
[ "$(id -u)" -ne 0 ] || chown nobody: "$work/ws"
cat >"$work/long.jsonl" <<'EOF'
{"content": "I'll build the project and run its tests.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo compiling; python3 -c 'import time\nfor i in range(3): print(\"step\", i); time.sleep(0.3)'"}}, {"name": "write", "arguments": {"path": "notes.txt", "content": "build ok\n"}}]}
{"content": "The test runner seems stuck; let me look at it.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo running tests; python3 -c 'x = 0\nwhile True: x += 1'"}}]}
{"content": "The runaway was stopped; the build itself is fine."}
EOF

start() { # NAME COLSxROWS COMMAND (in a 256-colour terminal)
        $T new-session -d -s "$1" -x "${2%x*}" -y "${2#*x}" \
                "cd '$work/ws' && TERM=tmux-256color $3; sleep 60"
}
wait_for() { # NAME REGEX
        local i
        for i in $(seq 200); do
                $T capture-pane -p -t "$1" | grep -Eq -- "$2" && return 0
                sleep 0.1
        done
        echo "screenshots: timed out waiting for /$2/ in $1" >&2
        return 1
}
shot() { # NAME FILE COLSxROWS
        local cols=${3%x*} rows=${3#*x}
        $T capture-pane -e -p -t "$1" | aha --black --no-header >"$work/$2.body"
        {
                printf '<!DOCTYPE html><html><head><meta charset="utf-8"><style>'
                printf 'body{margin:0;background:#000;}pre{margin:0;padding:8px;font:14px/17px "DejaVu Sans Mono",monospace;color:#ddd;white-space:pre;}'
                printf '</style></head><body><pre>'
                cat "$work/$2.body"
                printf '</pre></body></html>'
        } >"$work/$2.html"
        chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
                --disable-background-networking --disable-component-update --disable-sync \
                --user-data-dir="$work/chrome" --hide-scrollbars \
                --window-size=$((cols * 843 / 100 + 17)),$((rows * 17 + 16)) \
                --screenshot="$out/$2.png" "file://$work/$2.html" >/dev/null 2>&1
        echo "screenshots: $out/$2.png"
}

# setup screen, both modes
start setup 160x48 "$proctor"
wait_for setup "Where should this session"
shot setup setup-local 160x48
$T send-keys -t setup F2
wait_for setup "\[x\] sandbox"
shot setup setup-sandbox 160x48

# a sandbox session with live stats, the kill confirmation, the killed runaway
start run 160x48 "$proctor --mode sandbox --cpu-time 30 --model script:$work/long.jsonl"
$T send-keys -t run "Build the project and run the tests." Enter
wait_for run "running tests"
sleep 2
shot run session-sandbox 160x48
$T send-keys -t run k
wait_for run "Kill execution"
shot run kill-confirm 160x48
sleep 0.3
$T send-keys -t run y
wait_for run "killed"
wait_for run "session completed"
shot run killed-runaway 160x48
$T send-keys -t run '?'
wait_for run "keys \(any key closes\)"
shot run help 160x48
$T send-keys -t run x Tab Tab End Enter
wait_for run "execution #3"
shot run detail-execution 160x48
$T send-keys -t run Escape

# the light theme, and the narrow layout
start light 160x48 "$proctor --theme light --mode local --approval never --model script:$work/long.jsonl"
$T send-keys -t light "Build it." Enter
wait_for light "running tests"
sleep 1
shot light theme-light 160x48
# the approval dialog (the host policy, local mode): a write's diff
# against the file as it is now
printf 'build: not run yet\nsee the log\n' >"$work/ws/notes.txt"
start ask 160x48 "$proctor --mode local --model script:$work/long.jsonl"
$T send-keys -t ask "Build the project and run the tests." Enter
wait_for ask "approve this call"
sleep 0.4
$T send-keys -t ask y
wait_for ask "diff of notes.txt"
shot ask approval-diff 160x48
$T send-keys -t ask Escape
start narrow 80x24 "$proctor --mode sandbox --model script:$work/long.jsonl"
$T send-keys -t narrow "Build it." Enter
wait_for narrow "transcript"
sleep 1
$T send-keys -t narrow Tab Tab
sleep 0.5
shot narrow narrow-80x24 80x24

# tools from an MCP server (tests' mcp_fake.py) in its own long-lived
# sandbox, and run_python_code on warm interpreters: the setup screen's
# tool counts, then the server's row and the warm rows in a session
cp "$top/tests/integration/mcp_fake.py" "$work/ws/"
chmod 644 "$work/ws/mcp_fake.py"
echo '{"mcpServers": {"fake": {"command": "python3", "args": ["mcp_fake.py"]}}}' >"$work/mcp.json"
cat >"$work/mcp.jsonl" <<'EOF2'
{"content": "Asking the MCP server who it is, and working out a few numbers in Python.", "tool_calls": [{"name": "mcp__fake__whoami", "arguments": {}}, {"name": "run_python_code", "arguments": {"code": "import math\nprint(math.factorial(20))"}}]}
{"content": "Once more in a fresh interpreter.", "tool_calls": [{"name": "run_python_code", "arguments": {"code": "print(sum(i * i for i in range(10**5)))"}}]}
{"content": "And a longer job.", "tool_calls": [{"name": "run_python_code", "arguments": {"code": "import time\nfor i in range(20):\n    print('tick', i, flush=True)\n    time.sleep(0.5)"}}]}
{"content": "Done: the server answered from its sandbox, each Python call had one of its own."}
EOF2
start mcp 160x48 "$proctor --mode sandbox --mcp-config $work/mcp.json --model script:$work/mcp.jsonl"
wait_for mcp "5 tools"
shot mcp setup-mcp 160x48
$T send-keys -t mcp "Who is the server, and what is 20 factorial?" Enter
wait_for mcp "#4 running .* warm"
sleep 1
shot mcp session-mcp-warm 160x48
