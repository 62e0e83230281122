#!/bin/bash
# An MCP server in the supervisor, in a real terminal (a detached tmux): it
# shows in the executions pane as an execution of the session, the operator
# kills it with k while one of its tools runs, and the call then fails with
# an error saying so while the session goes on. The setup screen starts the
# servers in the mode chosen to count their tools (as `proctor mcp list`
# does), again after a flip, shows a server's network in the danger colour,
# and quits at once while a server is still starting.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/tmux.sh"
. "$(dirname "$0")/mcp_server.sh"
LONG=$(mcp_tool trigger-long-running-operation longRunningOperation)

cat >"$WORK/long.jsonl" <<JSON
{"content": "Running long.", "tool_calls": [{"name": "mcp__everything__$LONG", "arguments": {"duration": 60, "steps": 60}}]}
{"content": "Went on after the kill."}
JSON
# count MODE: the server's tools as `proctor mcp list` gives them
count() {
        (cd "$WORK" && "$PROCTOR" mcp list --mode "$1" --mcp-config mcp.json --json) |
                python3 -c 'import json,sys; print(len(json.load(sys.stdin)[0]["tools"]))'
}
N_SANDBOX=$(count sandbox)
N_LOCAL=$(count local)
check "premise: mcp list counts tools in both modes" test "$N_SANDBOX" -gt 0 -a "$N_LOCAL" -gt 0
# servers RUNNING_NAME: the server's processes under the pane
servers() { tree m | grep -c "node_modules/$PKG/dist/index.js"; }
servers_are() { [ "$(servers)" = "$1" ]; } # asked anew at each call of wait_until

T_TRACE=$WORK/tui.jsonl
start m 160x45 "cd $WORK && $PROCTOR --mode sandbox --mcp-config mcp.json --model script:$WORK/long.jsonl --trace $T_TRACE"
expect_screen m "Where should this session's tools run" "setup"
expect_screen m "mcp        everything \((starting|$N_SANDBOX tools)\)$" "the setup screen names the configured server"
expect_screen m "mcp        everything \($N_SANDBOX tools\)$" \
        "the setup screen counts its tools in sandbox mode, as mcp list does" 30
expect_eq "one server runs for the setup screen" 1 "$(servers)"
$T send-keys -t m F2
expect_screen m "mcp        everything \((starting|$N_LOCAL tools)\)$" "a flip starts it again, in local mode"
expect_screen m "mode from  the setup screen" "flipped to local"
expect_screen m "mcp        everything \($N_LOCAL tools\)$" "and counts its tools there" 30
if wait_until 5 servers_are 1; then pass; else fail "the sandboxed one was stopped: $(servers) running"; fi
$T send-keys -t m F2
expect_screen m "mcp        everything \($N_SANDBOX tools\)$" "back in sandbox mode" 30
check "nothing of the setup screen's servers is in the trace" test ! -s "$T_TRACE"
$T send-keys -t m go Enter
expect_screen m "mcp__everything__$LONG" "the MCP call is shown"
check "the MCP call runs in its server, queued for nothing" sh -c "! $T capture-pane -p -t m | grep -q 'queued'"
expect_screen m "#1 running .*  mcp" "the server is an execution in the pane, named as such"
$T send-keys -t m Tab Tab Home
$T send-keys -t m k
sleep 0.3
$T send-keys -t m y
# (the status line's "killed execution #1" may already be gone: the trace says)
expect_screen m "Went on after the kill" "the session goes on" 15
result=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["type"] == "tool.result": print(e["ok"], e["output"])' "$T_TRACE")
expect_match "the call fails, saying the operator killed its server" \
        "^False \[the MCP server 'everything' was killed by the operator" "$result"
expect_match "the kill is an operator.kill of the server's execution" '"exec_id":1' \
        "$(grep '"operator.kill"' "$T_TRACE")"
expect_eq "the session's own server is its first execution" "1 mcp server everything" \
        "$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["type"] == "exec.create": print(e["exec_id"], e.get("label")); break' "$T_TRACE")"
$T send-keys -t m q
sleep 0.5

# a server with network in sandbox mode: its network in the danger colour;
# another that never finishes starting does not hold up a quit
MARK=$(new_marker slow)
track_marker "$MARK"
sed "s/\"args\"/\"network\": true, \"args\"/; s/}}}\$/}, \"slow\": {\"command\": \"sh\", \"args\": [\"-c\", \"sleep 600; : $MARK\"]}}}/" \
        "$WORK/mcp.json" >"$WORK/net.json"
start n 160x45 "cd $WORK && $PROCTOR --mode sandbox --mcp-config net.json --model script:$WORK/long.jsonl"
expect_screen n "mcp        everything \($N_SANDBOX tools, network\), slow \(starting\)$" \
        "the setup screen counts the networked server's tools and shows the other starting" 30
row=$($T capture-pane -e -p -t n | grep -a "mcp  ")
expect_match "its network is drawn in the theme's error colour (bold red)" \
        $'tools, \e\\[1m\e\\[38;5;203mnetwork' "$row"
expect_match "and only its network" $'network\e\\[0m\e\\[38;5;252m' "$row"
check "the starting server runs" sh -c "pgrep -f '[s]leep 600; : $MARK' >/dev/null"
t0=$(now_ms)
$T send-keys -t n F10
expect_screen n "EXITED 0" "F10 quits while a server is still starting" 5
check "within 3 s" test $(( $(now_ms) - t0 )) -lt 3000
if wait_until 3 sh -c "! pgrep -f '[s]leep 600; : $MARK' >/dev/null"; then pass; else fail "the starting server was left behind"; fi
finish
