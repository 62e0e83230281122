#!/bin/bash
# MCP against a real, widely used server: @modelcontextprotocol/server-everything
# from npm, in local and sandbox mode. Its echo and get-sum tools through a
# scripted session, get-env showing no API key, the server killed in the
# middle of a call, and `proctor mcp list` (a broken server named with its
# stderr). Skips, saying why, only when npm cannot install the server.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/mcp_server.sh"
SUM=$(mcp_tool get-sum add)
ENV=$(mcp_tool get-env printEnv)
LONG=$(mcp_tool trigger-long-running-operation longRunningOperation)
has() { [ "$(mcp_tool "$1" "")" = "$1" ] && echo True || echo False; }
expect_eq "the server offers echo" True "$(has echo)"
expect_eq "the server offers $SUM" True "$(has $SUM)"

cat >"$WORK/calls.jsonl" <<JSON
{"content": "", "tool_calls": [{"name": "mcp__everything__echo", "arguments": {"message": "hello from proctor"}}, {"name": "mcp__everything__$SUM", "arguments": {"a": 2, "b": 40}}, {"name": "mcp__everything__$ENV", "arguments": {}}]}
{"content": "all done"}
JSON
cat >"$WORK/long.jsonl" <<JSON
{"content": "", "tool_calls": [{"name": "mcp__everything__$LONG", "arguments": {"duration": 60, "steps": 60}}]}
{"content": "after the kill"}
JSON

# result CALL_ID FIELD < trace
result() {
        python3 -c 'import json,sys
for l in sys.stdin:
    e = json.loads(l)
    if e["type"] == "tool.result" and e["call_id"] == sys.argv[1]:
        v = e[sys.argv[2]]; print(json.dumps(v) if isinstance(v, bool) else v)' "$1" "$2"
}

for mode in local sandbox; do
        T=$WORK/$mode.jsonl
        out=$(cd "$WORK" && PROCTOR_API_KEY=sk-proctor-secret-1 OPENAI_API_KEY=sk-openai-secret-2 \
                HF_TOKEN=hf_secret_3 "$PROCTOR" run --mode $mode --mcp-config mcp.json \
                --model script:calls.jsonl --trace "$T" "use the tools" 2>"$WORK/err"); rc=$?
        expect_eq "$mode: the session completes" 0 $rc
        expect_eq "$mode: run prints the answer" "all done" "$out"
        expect_match "$mode: the operator sees the server ready" "MCP server everything: ready, [0-9]+ tools" "$(cat "$WORK/err")"
        expect_eq "$mode: ready is said once, however often the tools list changes" 1 \
                "$(grep -c 'MCP server everything: ready' "$WORK/err")"
        expect_no_match "$mode: the server stopped at the end is not reported as a killed execution" \
                "execution [0-9]+: killed" "$(cat "$WORK/err")"
        expect_eq "$mode: the server's execution is labelled" "mcp server everything" \
                "$(json_field exec.create label <"$T")"
        expect_eq "$mode: echo answers" "Echo: hello from proctor" "$(result call_1 output <"$T")"
        expect_eq "$mode: echo is ok" true "$(result call_1 ok <"$T")"
        expect_match "$mode: $SUM adds" "42" "$(result call_2 output <"$T")"
        envout=$(result call_3 output <"$T")
        expect_match "$mode: get-env lists the environment" "PATH" "$envout"
        expect_no_match "$mode: no API key reaches the server" "sk-proctor-secret-1|sk-openai-secret-2|hf_secret_3|PROCTOR_API_KEY|OPENAI_API_KEY|HF_TOKEN" "$envout"
        expect_no_match "$mode: no API key in the trace" "sk-proctor-secret-1|sk-openai-secret-2|hf_secret_3" "$(cat "$T")"
        expect_eq "$mode: the server is an execution of its own" \
                "$([ $mode = local ] && echo none || echo sandbox)" "$(json_field exec.create isolation <"$T")"
        expect_match "$mode: its stderr is in the trace" "STDIO" "$(grep '"exec.output"' "$T")"
        expect_eq "$mode: it is removed before session.end" "exec.remove session.end" \
                "$(tail -n 2 "$T" | python3 -c 'import json,sys; print(" ".join(json.loads(l)["type"] for l in sys.stdin))')"

        # the server killed in the middle of a call
        T=$WORK/$mode-kill.jsonl
        (cd "$WORK" && exec "$PROCTOR" run --mode $mode --mcp-config mcp.json --model script:long.jsonl \
                --trace "$T" "run long" >"$WORK/kill.out" 2>&1) &
        runner=$!
        pid=""
        # (a server of node in a sandbox may take long to start on a loaded
        # machine: a sandbox weighs a tenth of a normal process)
        for _ in $(seq 600); do
                if grep -q '"tool.call"' "$T" 2>/dev/null; then
                        pid=$(json_field exec.start pid <"$T")
                        break
                fi
                sleep 0.1
        done
        check "$mode: the long call started" test -n "$pid"
        sleep 0.5
        [ -n "$pid" ] && kill -KILL "$pid"
        wait $runner; rc=$?
        expect_eq "$mode: the session goes on after the kill" 0 $rc
        expect_eq "$mode: the killed call fails" false "$(result call_1 ok <"$T")"
        expect_match "$mode: it says the server died" "MCP server 'everything' (was killed by signal|exited|stopped)" "$(result call_1 output <"$T")"
        expect_match "$mode: the operator sees it" "MCP server everything: exited" "$(cat "$WORK/kill.out")"
        expect_match "$mode: the model's next turn still runs" "after the kill" "$(cat "$WORK/kill.out")"

        # the operator interrupts a long call: it is cancelled, the server lives on
        T=$WORK/$mode-int.jsonl
        (cd "$WORK" && exec "$PROCTOR" run --mode $mode --mcp-config mcp.json --model script:long.jsonl \
                --trace "$T" "run long" >"$WORK/int.out" 2>&1) &
        runner=$!
        for _ in $(seq 100); do
                grep -q '"tool.call"' "$T" 2>/dev/null && break
                sleep 0.1
        done
        sleep 0.5
        kill -INT $runner
        wait $runner; rc=$?
        expect_eq "$mode: an interrupted session exits 130" 130 $rc
        expect_eq "$mode: the interrupted call fails" false "$(result call_1 ok <"$T")"
        expect_eq "$mode: it says it was interrupted" "[interrupted by the operator]" "$(result call_1 output <"$T")"
        expect_eq "$mode: the session ends interrupted" interrupted "$(json_field session.end status <"$T")"
        expect_eq "$mode: the server was not killed by the interrupt" "" \
                "$(grep '"mcp.server"' "$T" | grep -E '"state":"(exited|failed)"')"
done

# Credentials a server needs: its entry's own env passes to it alone, names
# like *_TOKEN included; the model's API key and the host's tokens never do,
# unless an entry writes one out itself.
python3 - "$WORK/mcp.json" "$WORK/cred.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["mcpServers"]["everything"]
servers = {
    "tok": dict(ev, env={"GITHUB_TOKEN": "ghp-entry-1", "MY_SERVICE_API_KEY": "svc-entry-2"}),
    "plain": dict(ev),
    "lit": dict(ev, env={"OPENAI_API_KEY": "sk-entry-literal-5"}),
}
json.dump({"mcpServers": servers}, open(sys.argv[2], "w"))
PY
cat >"$WORK/cred.jsonl" <<JSON
{"content": "", "tool_calls": [{"name": "mcp__tok__$ENV", "arguments": {}}, {"name": "mcp__plain__$ENV", "arguments": {}}, {"name": "mcp__lit__$ENV", "arguments": {}}]}
{"content": "creds done"}
JSON
for mode in local sandbox; do
        T=$WORK/$mode-cred.jsonl
        out=$(cd "$WORK" && PROCTOR_API_KEY=sk-proctor-secret-1 OPENAI_API_KEY=sk-openai-secret-2 \
                HF_TOKEN=hf_secret_3 GITHUB_TOKEN=ghp-host-4 "$PROCTOR" run --mode $mode \
                --mcp-config cred.json --model script:cred.jsonl --trace "$T" "env" 2>"$WORK/err"); rc=$?
        expect_eq "$mode creds: the session completes" "0 creds done" "$rc $out"
        tok=$(result call_1 output <"$T")
        plain=$(result call_2 output <"$T")
        lit=$(result call_3 output <"$T")
        expect_match "$mode creds: the entry's token reaches its server" 'GITHUB_TOKEN.{1,6}ghp-entry-1' "$tok"
        expect_match "$mode creds: any credential-like name of the entry does" 'MY_SERVICE_API_KEY.{1,6}svc-entry-2' "$tok"
        expect_no_match "$mode creds: the model's keys and the host's token do not" \
                "sk-proctor-secret-1|sk-openai-secret-2|hf_secret_3|ghp-host-4|PROCTOR_API_KEY|OPENAI_API_KEY|HF_TOKEN" "$tok"
        expect_match "$mode creds: the other server lists its environment" "PATH" "$plain"
        expect_no_match "$mode creds: the other server sees no token of the first, nor any key" \
                "ghp-entry-1|svc-entry-2|GITHUB_TOKEN|MY_SERVICE_API_KEY|sk-proctor-secret-1|sk-openai-secret-2|hf_secret_3|ghp-host-4" "$plain"
        expect_match "$mode creds: an entry that writes out OPENAI_API_KEY gets its own value" \
                'OPENAI_API_KEY.{1,6}sk-entry-literal-5' "$lit"
        expect_no_match "$mode creds: and never the environment's" "sk-openai-secret-2|sk-proctor-secret-1" "$lit"
        expect_no_match "$mode creds: no event but the tools' own output carries a token" \
                "ghp-entry-1|svc-entry-2|sk-entry-literal-5|sk-openai-secret-2|ghp-host-4" \
                "$(grep -v '"type":"tool\.\(result\|output\)"' "$T")"
done

# proctor mcp list: state and tools; a broken server with its stderr
cat >"$WORK/broken.json" <<'JSON'
{"mcpServers": {"broken": {"command": "sh", "args": ["-c", "echo loading config >&2; echo 'fatal: no such module' >&2; exit 3"]}}}
JSON
out=$(cd "$WORK" && "$PROCTOR" mcp list --mcp-config mcp.json); rc=$?
expect_eq "mcp list: exit 0 when every server starts" 0 $rc
expect_match "mcp list: the server and its state" "^everything: ready, [0-9]+ tools" "$out"
expect_match "mcp list: its tools, as the model sees them" "mcp__everything__echo +Echoes back" "$out"
out=$(cd "$WORK" && "$PROCTOR" mcp list --mode sandbox --mcp-config mcp.json 2>&1); rc=$?
expect_match "mcp list in sandbox mode" "^everything: ready, [0-9]+ tools" "$out"
expect_eq "mcp list in sandbox mode: exit 0" 0 $rc
out=$(cd "$WORK" && "$PROCTOR" mcp list --mcp-config broken.json 2>&1); rc=$?
expect_eq "mcp list: exit 1 when a server fails" 1 $rc
expect_match "mcp list: the failure, with the stderr's last lines" "broken: failed, 0 tools" "$out"
expect_match "mcp list: names the exit" "exited with code 3" "$out"
expect_match "mcp list: shows what the server said" "fatal: no such module" "$out"
# "network": true in sandbox mode: the host's network, shared with its
# sandbox (what it reaches: t_mcp_net.sh); node starts there all the same
sed 's/"args"/"network": true, "args"/' "$WORK/mcp.json" >"$WORK/net.json"
out=$(cd "$WORK" && "$PROCTOR" mcp list --mode sandbox --mcp-config net.json 2>&1); rc=$?
expect_eq "network in sandbox mode: the server starts" 0 $rc
expect_match "network in sandbox mode: listed with its network" "^everything: ready, [0-9]+ tools, network \(the host's" "$out"
out=$(cd "$WORK" && "$PROCTOR" mcp list --mode local --mcp-config net.json 2>&1); rc=$?
expect_match "network in local mode: the server starts" "^everything: ready, [0-9]+ tools, network" "$out"
out=$(cd "$WORK" && "$PROCTOR" mcp list --mcp-config /nonexistent.json 2>&1); rc=$?
expect_eq "mcp list: a missing --mcp-config is an error" 2 $rc

finish
