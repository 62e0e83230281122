#!/bin/bash
# A real MCP server built on an older SDK (@modelcontextprotocol/server-
# everything 0.6.2 from npm), which answers initialize with protocol
# 2024-11-05: proctor lists its tools and calls one, in both modes.
. "$(dirname "$0")/lib.sh"
MCP_VERSION=0.6.2
. "$(dirname "$0")/mcp_server.sh"

for mode in local sandbox; do
        out=$(cd "$WORK" && "$PROCTOR" mcp list --mode $mode --mcp-config mcp.json --json)
        expect_eq "$mode: the 2024-11-05 server is ready, its tools listed" "ready True" \
                "$(printf '%s' "$out" | python3 -c 'import json, sys
s = json.load(sys.stdin)[0]; print(s["state"], any(t["name"] == "echo" for t in s["tools"]))')"
        cat >"$WORK/old.jsonl" <<'JSON'
{"content": "", "tool_calls": [{"name": "mcp__everything__echo", "arguments": {"message": "hello from an old server"}}]}
{"content": "done"}
JSON
        (cd "$WORK" && "$PROCTOR" run --json --mode $mode --mcp-config mcp.json \
                --model script:old.jsonl go >"$WORK/old-$mode.out" 2>"$WORK/old-$mode.err")
        expect_eq "$mode: the session completes" 0 $?
        expect_match "$mode: its tool answers" "hello from an old server" \
                "$(events_eval "$WORK/old-$mode.out" 'res(0)["output"]')"
done
finish
