#!/bin/bash
# An MCP server in the supervisor, in a real terminal (a detached tmux): it
# shows in the executions pane as an execution of the session, the operator
# kills it with k while one of its tools runs, and the call then fails with
# an error saying so while the session goes on. The setup screen names the
# configured servers.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/tmux.sh"
. "$(dirname "$0")/mcp_server.sh"
LONG=$(mcp_tool trigger-long-running-operation longRunningOperation)

cat >"$WORK/long.jsonl" <<JSON
{"content": "Running long.", "tool_calls": [{"name": "mcp__everything__$LONG", "arguments": {"duration": 60, "steps": 60}}]}
{"content": "Went on after the kill."}
JSON
T_TRACE=$WORK/tui.jsonl
start m 160x45 "cd $WORK && $PROCTOR --mode sandbox --mcp-config mcp.json --model script:$WORK/long.jsonl --trace $T_TRACE"
expect_screen m "Where should this session's tools run" "setup"
expect_screen m "mcp        everything$" "the setup screen names the configured server"
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
$T send-keys -t m q
sleep 0.5
finish
