#!/bin/bash
# What a model or an MCP server sends cannot grow proctor without bound
# (core/util/bounds.h). Against a real HTTP server on 127.0.0.1: an answer whose
# tool-call arguments never end, one whose text never ends, and one sent
# whole past its bound are each refused with a model.error naming the
# bound, and the session's peak memory stays near an ordinary session's.
# Against real stdio MCP servers: a tools/list that repeats its cursor, one
# whose cursors never end and one with too many tools each fail the server
# with the bound as the reason, in an ordinary listing's memory. Each
# beside a control: the same server answering as servers do.
# as-user: yes
. "$(dirname "$0")/lib.sh"

KEY=sk-fake-test-key-4242
. "$(dirname "$0")/openai_session.sh"
ev() { events_eval "$@"; }

# measured NAME CMD...: runs CMD; its exit status in $rc, the peak resident
# memory of it (or of the largest process it waited for) in KiB in $kb,
# also said on the script's own output (fd 3: callers redirect stdout).
exec 3>&1
measured() {
        local name=$1
        shift
        # a sanitizer build keeps what is freed for a while (256 MiB by
        # default), which would count here as if it were still held
        ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4 \
                "$T_PY" -c 'import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(rc)' "$WORK/$name.kb" "$@"
        rc=$?
        kb=$(cat "$WORK/$name.kb")
        echo "peak memory of $name: $kb KiB" >&3
}

# answer NAME: one session against $WORK/NAME.script, measured
answer() {
        local name=$1
        fake_start "$name"
        measured "$name" env -u OPENAI_API_KEY -u HF_TOKEN PROCTOR_API_KEY="$KEY" "$PROCTOR" run \
                --json --mode local --model openai:fake-model \
                --base-url "http://127.0.0.1:$port/v1" --workspace "$WORK" \
                --trace "$WORK/$name.trace" "please work" >"$WORK/$name.jsonl" 2>"$WORK/$name.err"
        fake_stop
}
# What bounded memory means here: within this much of the control's peak
# (the bounds themselves are 1 to 8 MiB; the attacks below send 192 MiB).
SLACK_KB=$((48 * 1024))

# ---- a model's answer ----
echo '{"content": "an ordinary answer"}' >"$WORK/control.script"
answer control
expect_eq "control: the session completes" 0 $rc
control_kb=$kb
check "control: a peak was measured ($kb KiB)" test "$kb" -gt 0

echo '{"endless": "arguments"}' >"$WORK/args.script"
answer args
expect_eq "endless arguments: the session fails" 1 $rc
expect_eq "endless arguments: status failed" failed "$(ev "$WORK/args.jsonl" 'of("session.end")[0]["status"]')"
msg=$(ev "$WORK/args.jsonl" 'of("model.error")[-1]["message"]')
expect_match "endless arguments: the error names the bound" \
        "refused the model's answer: the arguments of tool call 1 \(bash\) passed 1 MiB, proctor's bound for one call's arguments" "$msg"
expect_eq "endless arguments: no tool ran" 0 "$(ev "$WORK/args.jsonl" 'len(of("tool.call"))')"
expect_eq "endless arguments: no retry (the same answer would pass it again)" 1 \
        "$(grep -c '"event": "request"' "$WORK/args.log")"
expect_eq "endless arguments: proctor hung up long before the server's cap" "True True" \
        "$("$T_PY" -c 'import json, sys
e = [json.loads(l) for l in open(sys.argv[1]) if "endless" in l][0]
print(e["hung_up"], e["sent"] < (32 << 20))' "$WORK/args.log")"
check "endless arguments: peak memory $kb KiB is within $SLACK_KB KiB of the control's $control_kb KiB" \
        test "$kb" -le $((control_kb + SLACK_KB))

echo '{"endless": "content"}' >"$WORK/text.script"
answer text
expect_eq "endless text: the session fails" 1 $rc
expect_match "endless text: the error names the bound" \
        "refused the model's answer: the answer's text passed 4 MiB, proctor's bound for one answer's text" \
        "$(ev "$WORK/text.jsonl" 'of("model.error")[-1]["message"]')"
check "endless text: peak memory $kb KiB is within $SLACK_KB KiB of the control's $control_kb KiB" \
        test "$kb" -le $((control_kb + SLACK_KB))

# keep-alives that never end: nothing is kept, but the turn must end
echo '{"endless": "comments", "safety_mb": 320}' >"$WORK/comments.script"
answer comments
expect_eq "endless keep-alives: the session fails" 1 $rc
expect_match "endless keep-alives: the error names the bound" \
        "refused the model's answer: its stream passed 256 MiB, proctor's bound for one streamed answer" \
        "$(ev "$WORK/comments.jsonl" 'of("model.error")[-1]["message"]')"

# one event within its size, of small JSON values that would cost 20 times
# that once parsed
"$T_PY" -c 'import json
print(json.dumps({"raw": "data: [" + ",".join(["0"] * ((4 << 20) - 8)) + "]\n\n"}))' >"$WORK/values.script"
answer values
expect_eq "an event of 4 million values: the session fails" 1 $rc
expect_match "an event of 4 million values: the error names the bound" \
        "refused the model's answer: a chunk of the answer holds more than 131072 JSON values, proctor's bound for one chunk" \
        "$(ev "$WORK/values.jsonl" 'of("model.error")[-1]["message"]')"
check "an event of 4 million values: peak memory $kb KiB is within $SLACK_KB KiB of the control's $control_kb KiB" \
        test "$kb" -le $((control_kb + SLACK_KB))

# a server that ignores "stream" and sends one JSON answer past its bound
"$T_PY" -c 'import json; print(json.dumps({"no_stream": True, "content": "y" * (9 << 20)}))' \
        >"$WORK/whole.script"
answer whole
expect_eq "answer sent whole: the session fails (it does not crash)" 1 $rc
expect_match "answer sent whole: the error names the bound" \
        "refused the model's answer: the answer passed 8 MiB, proctor's bound for an answer sent whole" \
        "$(ev "$WORK/whole.jsonl" 'of("model.error")[-1]["message"]')"

# ---- an MCP server's tools/list ----
cp "$T_DIR/mcp_fake.py" "$WORK/"
give_away "$WORK/mcp_fake.py"
server() { echo "\"$1\": {\"command\": \"python3\", \"args\": [\"mcp_fake.py\"${2:+, \"--list\", \"$2\"}]}"; }
echo "{\"mcpServers\": {$(server ok)}}" >"$WORK/ok.json"
echo '{"mcpServers": {"ok": {"command": "python3", "args": ["mcp_fake.py", "--large"]}}}' \
        >"$WORK/large.json"
echo "{\"mcpServers\": {$(server rep repeat), $(server end endless), $(server many many)}}" >"$WORK/bad.json"
# state NAME ATTR < mcp list --json
state() { "$T_PY" -c 'import json, sys
print(next(s for s in json.load(sys.stdin) if s["name"] == sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

measured mcp-ok "$PROCTOR" mcp list --json --mcp-config "$WORK/ok.json" --workspace "$WORK" \
        >"$WORK/ok.out" 2>"$WORK/ok.err"
expect_eq "control: an ordinary server is ready" ready "$(state ok state <"$WORK/ok.out")"
ok_kb=$kb
measured mcp-bad "$PROCTOR" mcp list --json --mcp-config "$WORK/bad.json" --workspace "$WORK" \
        >"$WORK/bad.out" 2>"$WORK/bad.err"
expect_eq "a repeated cursor: the server fails" failed "$(state rep state <"$WORK/bad.out")"
expect_eq "a repeated cursor: the reason" \
        "answered tools/list page 2 with the cursor of page 1 (a cursor seen before): the listing would never end" \
        "$(state rep error <"$WORK/bad.out")"
expect_eq "endless cursors: the server fails" failed "$(state end state <"$WORK/bad.out")"
expect_eq "endless cursors: the reason names the bound" \
        "answered tools/list with more than 64 pages, proctor's bound for one listing" \
        "$(state end error <"$WORK/bad.out")"
expect_eq "too many tools: the server fails" failed "$(state many state <"$WORK/bad.out")"
expect_eq "too many tools: the reason names the bound" \
        "listed more than 1024 tools, proctor's bound for one server" \
        "$(state many error <"$WORK/bad.out")"
check "hostile listings: peak memory $kb KiB is within $SLACK_KB KiB of an ordinary listing's $ok_kb KiB" \
        test "$kb" -le $((ok_kb + SLACK_KB))

# ---- an MCP message past its bound: the server is out, the call fails at once ----
echo '{"tool_calls": [{"name": "mcp__ok__big", "arguments": {"mib": 1}}, {"name": "mcp__ok__big", "arguments": {"mib": 9}}]}
{"content": "done"}' >"$WORK/big.script"
echo '{"tool_calls": [{"name": "mcp__ok__values", "arguments": {"n": 1000}}, {"name": "mcp__ok__values", "arguments": {"n": 2000000}}]}
{"content": "done"}' >"$WORK/mcpvalues.script"
"$PROCTOR" run --mode local --workspace "$WORK" --mcp-config "$WORK/large.json" --timeout 120 \
        --model "script:$WORK/big.script" --trace "$WORK/big.trace" "big" >/dev/null 2>"$WORK/big.err"
expect_eq "an MCP message past its bound: the session goes on" 0 $?
expect_eq "control: a result of 1 MiB comes (cut for the model as any output)" "True bbbb" \
        "$(ev "$WORK/big.trace" '"%s %s" % (res(0)["ok"], res(0)["output"][:4])')"
expect_eq "a result of 9 MiB: the call fails, naming the bound" \
        "False [the MCP server 'ok' sent a message over 8 MiB, proctor's bound for one MCP message (dropped)]" \
        "$(ev "$WORK/big.trace" '"%s %s" % (res(1)["ok"], res(1)["output"])')"
expect_match "the server is out, with the bound as its reason" \
        "sent a message over 8 MiB, proctor's bound for one MCP message" \
        "$(ev "$WORK/big.trace" '[e["error"] for e in of("mcp.server") if e["state"] == "failed"]')"
measured mcp-values "$PROCTOR" run --mode local --workspace "$WORK" --mcp-config "$WORK/large.json" \
        --timeout 120 --model "script:$WORK/mcpvalues.script" --trace "$WORK/values.trace" "values" \
        >/dev/null 2>"$WORK/values.err"
expect_eq "an MCP message of 2 million values: the session goes on" 0 $rc
expect_eq "control: a result of 1,000 values comes" True "$(ev "$WORK/values.trace" 'res(0)["ok"]')"
expect_eq "a result of 2 million values: the call fails, naming the bound" \
        "False [the MCP server 'ok' sent a message of more than 1048576 JSON values, proctor's bound for one MCP message (dropped)]" \
        "$(ev "$WORK/values.trace" '"%s %s" % (res(1)["ok"], res(1)["output"])')"
check "an MCP message of 2 million values: peak memory $kb KiB is within $SLACK_KB KiB of an ordinary listing's $ok_kb KiB" \
        test "$kb" -le $((ok_kb + SLACK_KB))

# ---- an MCP result of 300,000 parts, each a placeholder of 30 bytes ----
echo '{"tool_calls": [{"name": "mcp__ok__parts", "arguments": {"n": 300000}}]}
{"content": "done"}' >"$WORK/parts.script"
# (the time limit only ends a run that would otherwise go on for hours)
timeout -k 5 120 "$PROCTOR" run --mode local --workspace "$WORK" --mcp-config "$WORK/large.json" \
        --model "script:$WORK/parts.script" --trace "$WORK/parts.trace" "parts" >/dev/null \
        2>"$WORK/parts.err"
expect_eq "a result of many parts: the session completes" 0 $?
expect_eq "its text is cut at the bound, with a note naming it" \
        "True [the rest is cut: the result passed 8 MiB, proctor's bound for one MCP result]" \
        "$(ev "$WORK/parts.trace" '(lambda o: "%s %s" % (len(o) <= (8 << 20) + 200, o.splitlines()[-1]))(of("tool.result")[0]["output"])')"
finish
