#!/bin/bash
# Headless sessions (`proctor run`) with scripted models, in both modes:
# the event sequence, tool results, the cache persisting in local mode only,
# writes to /etc failing in a sandbox, bad tool calls answered with errors,
# the repetition guard, max iterations, traces, and bad scripts.
# as-user: yes
. "$(dirname "$0")/lib.sh"

S=$WORK/scripts
mkdir -p "$S"
cat >"$S/tour.jsonl" <<'EOF'
{"content": "Looking around.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo hello-from-bash; hostname"}}, {"name": "write_cache", "arguments": {"key": "k", "value": "cached-value"}}]}
{"content": "Reading it back.", "tool_calls": [{"name": "read_cache", "arguments": {"key": "k"}}, {"name": "write", "arguments": {"path": "notes/a.txt", "content": "line one\nline two\n"}}]}
{"content": "And the file.", "tool_calls": [{"name": "read", "arguments": {"path": "notes/a.txt"}}, {"name": "run_python_code", "arguments": {"code": "print(6 * 7)"}}]}
{"content": "All done."}
EOF

# run_session NAME MODE SCRIPT [extra args]: events in $WORK/NAME.jsonl
run_session() {
        local name=$1 mode=$2 script=$3
        shift 3
        "$PROCTOR" run --json --mode "$mode" --model "script:$script" --workspace "$WORK" \
                --trace "$WORK/$name.trace" "$@" "do the thing" >"$WORK/$name.jsonl" 2>"$WORK/$name.err"
}
# ev NAME EXPR: events_eval over this run's events
ev() { events_eval "$WORK/$1.jsonl" "$2"; }

for mode in local sandbox; do
        rm -rf "$WORK/notes"
        run_session "tour-$mode" $mode "$S/tour.jsonl"; rc=$?
        expect_eq "$mode: session completes, exit 0" 0 $rc
        expect_eq "$mode: first event session.start" session.start "$(ev tour-$mode 'E[0]["type"]')"
        expect_eq "$mode: last event session.end" session.end "$(ev tour-$mode 'E[-1]["type"]')"
        expect_eq "$mode: status completed" completed "$(ev tour-$mode 'of("session.end")[0]["status"]')"
        expect_eq "$mode: mode recorded" $mode "$(ev tour-$mode 'of("session.start")[0]["mode"]')"
        expect_eq "$mode: labelled scripted" True "$(ev tour-$mode 'of("session.start")[0]["scripted"]')"
        expect_eq "$mode: four turns" 4 "$(ev tour-$mode 'len(of("turn.start"))')"
        expect_eq "$mode: six tool calls" 6 "$(ev tour-$mode 'len(of("tool.call"))')"
        expect_eq "$mode: every call has a result" 6 "$(ev tour-$mode 'len(of("tool.result"))')"
        expect_eq "$mode: seq increases by one" True \
                "$(ev tour-$mode 'all(e["seq"] == i + 1 for i, e in enumerate(E))')"
        expect_eq "$mode: deltas spell the content" "Looking around." \
                "$(ev tour-$mode '"".join(e["text"] for e in E[:next(i for i, e in enumerate(E) if e["type"] == "model.message")] if e["type"] == "model.delta")')"
        out=$(ev tour-$mode 'next(e["output"] for e in of("tool.result") if "hello-from-bash" in e["output"])')
        expect_match "$mode: bash ran" "hello-from-bash" "$out"
        expect_match "$mode: python ran" "^42" "$(ev tour-$mode 'next(r["output"] for r in of("tool.result") if r["call_id"] == next(c["call_id"] for c in of("tool.call") if c["name"] == "run_python_code"))')"
        expect_match "$mode: the workspace file was read back" "1.line one" \
                "$(ev tour-$mode 'next(r["output"] for r in of("tool.result") if r["call_id"] == next(c["call_id"] for c in of("tool.call") if c["name"] == "read"))')"
        check "$mode: the written file is in the workspace" test -f "$WORK/notes/a.txt"
        cache=$(ev tour-$mode 'next((r["ok"], r["output"]) for r in of("tool.result") if r["call_id"] == next(c["call_id"] for c in of("tool.call") if c["name"] == "read_cache"))')
        if [ $mode = local ]; then
                expect_eq "local: the cache persists across calls" "(True, 'cached-value')" "$cache"
                expect_eq "local: no execution for file tools" 2 "$(ev tour-$mode 'len(of("exec.create"))')"
        else
                expect_match "sandbox: the cache does not survive a call" "^\(False, .*no cache entry" "$cache"
                expect_eq "sandbox: one sandbox per call" 6 "$(ev tour-$mode 'len(of("exec.create"))')"
                expect_eq "sandbox: every execution is a sandbox tied to its call" True \
                        "$(ev tour-$mode 'all(e["isolation"] == "sandbox" and e["call_id"] for e in of("exec.create"))')"
                expect_match "sandbox: bash ran in a sandbox" "sandbox" "$out"
        fi
        # the trace holds the same events, each line valid JSON
        expect_eq "$mode: the trace has every event" "$(wc -l <"$WORK/tour-$mode.jsonl")" \
                "$(wc -l <"$WORK/tour-$mode.trace")"
done

# sandbox: writing outside the workspace fails and leaves nothing on the host
cat >"$S/etc.jsonl" <<'EOF'
{"tool_calls": [{"name": "write", "arguments": {"path": "/etc/proctor-should-not-exist", "content": "x"}}, {"name": "bash", "arguments": {"command": "touch /etc/proctor-should-not-exist-2"}}]}
{"content": "ok"}
EOF
run_session etc sandbox "$S/etc.jsonl"
expect_eq "sandbox: write to /etc is an error result" False "$(ev etc 'res(0)["ok"]')"
expect_match "sandbox: write to /etc says why" "Read-only file system|Permission denied" "$(ev etc 'res(0)["output"]')"
expect_eq "sandbox: touch in /etc fails" False "$(ev etc 'res(1)["ok"]')"
check "sandbox: nothing reached the host's /etc" test ! -e /etc/proctor-should-not-exist
check "sandbox: nothing reached the host's /etc (bash)" test ! -e /etc/proctor-should-not-exist-2

# bad tool calls come back as errors and the session goes on
cat >"$S/bad.jsonl" <<'EOF'
{"tool_calls": [{"name": "frobnicate", "arguments": {}}, {"name": "read", "arguments": "{not json"}, {"name": "read", "arguments": {}}, {"name": "read", "arguments": {"path": "does/not/exist"}}]}
{"content": "recovered"}
EOF
run_session bad local "$S/bad.jsonl"; rc=$?
expect_eq "bad calls: session still completes" 0 $rc
expect_match "unknown tool named" "unknown tool 'frobnicate'" "$(ev bad 'res(0)["output"]')"
expect_match "invalid JSON arguments named" "not valid JSON" "$(ev bad 'res(1)["output"]')"
expect_match "missing field named" "path" "$(ev bad 'res(2)["output"]')"
expect_match "missing file named" "does/not/exist" "$(ev bad 'res(3)["output"]')"
expect_eq "bad calls: all errors" "[False, False, False, False]" "$(ev bad '[r["ok"] for r in of("tool.result")]')"

# the repetition guard: three identical calls in a row get a note
cat >"$S/loop.jsonl" <<'EOF'
{"tool_calls": [{"name": "bash", "arguments": {"command": "echo same"}}]}
{"tool_calls": [{"name": "bash", "arguments": {"command": "echo same"}}]}
{"tool_calls": [{"name": "bash", "arguments": {"command": "echo same"}}]}
{"content": "stopped"}
EOF
run_session loop local "$S/loop.jsonl"
expect_eq "repetition: one note" 1 "$(ev loop 'len(of("session.note"))')"
expect_match "repetition: the note says why" "same tool call three times" "$(ev loop 'of("session.note")[0]["text"]')"
expect_eq "repetition: the note comes after the third call" True \
        "$(ev loop 'E.index(of("session.note")[0]) > E.index(of("tool.call")[2])')"

# max iterations
run_session max local "$S/loop.jsonl" --max-iterations 2; rc=$?
expect_eq "max iterations: exit 1" 1 $rc
expect_eq "max iterations: status" max_iterations "$(ev max 'of("session.end")[0]["status"]')"
expect_eq "max iterations: two turns" 2 "$(ev max 'of("session.end")[0]["turns"]')"

# a malformed script is rejected with file and line, before anything runs
printf '{"content": "fine"}\n{"content": 5}\n' >"$S/broken.jsonl"
err=$("$PROCTOR" run --model "script:$S/broken.jsonl" --workspace "$WORK" "x" 2>&1); rc=$?
expect_eq "malformed script: exit 2" 2 $rc
expect_match "malformed script: file and line" "broken.jsonl:2: 'content' must be a string" "$err"
err=$("$PROCTOR" run --model "script:$S/nope.jsonl" --workspace "$WORK" "x" 2>&1); rc=$?
expect_eq "missing script: exit 2" 2 $rc
expect_match "missing script named" "nope.jsonl: No such file" "$err"
err=$("$PROCTOR" run --model "gpt" --workspace "$WORK" "x" 2>&1); rc=$?
expect_match "unknown model spec named" "unknown model 'gpt'" "$err"
err=$("$PROCTOR" run --workspace "$WORK" 2>&1); rc=$?
expect_eq "no prompt: exit 2" 2 $rc

# human-readable mode: the answer on stdout, progress on stderr
out=$("$PROCTOR" run --mode local --model "script:$S/tour.jsonl" --workspace "$WORK" \
        --trace "$WORK/human.trace" "go" 2>"$WORK/human.err")
expect_match "human: the assistant's words on stdout" "All done\." "$out"
expect_match "human: tool calls on stderr" "-> bash" "$(cat "$WORK/human.err")"
expect_match "human: the end on stderr" "session completed" "$(cat "$WORK/human.err")"

# no secret reaches the trace
cat >"$S/env.jsonl" <<'EOF'
{"tool_calls": [{"name": "bash", "arguments": {"command": "env"}}]}
{"content": "done"}
EOF
OPENAI_API_KEY=sk-proctor-test-secret-123 run_session env local "$S/env.jsonl"
check "secret: absent from the events" sh -c "! grep -q sk-proctor-test-secret-123 '$WORK/env.jsonl'"
check "secret: absent from the trace" sh -c "! grep -q sk-proctor-test-secret-123 '$WORK/env.trace'"
# a short cycle (A, B, A, B) also gets a note
cat >"$S/cycle.jsonl" <<'EOF2'
{"tool_calls": [{"name": "read_cache", "arguments": {"key": "a"}}]}
{"tool_calls": [{"name": "read_cache", "arguments": {"key": "b"}}]}
{"tool_calls": [{"name": "read_cache", "arguments": {"key": "a"}}]}
{"tool_calls": [{"name": "read_cache", "arguments": {"key": "b"}}]}
{"content": "stopped"}
EOF2
run_session cycle local "$S/cycle.jsonl"
expect_match "cycle: a note about the cycle" "short cycle" "$(ev cycle 'of("session.note")[0]["text"]')"

# long output: the model gets 25,000 characters, the trace gets all of it
cat >"$S/flood.jsonl" <<'EOF2'
{"tool_calls": [{"name": "bash", "arguments": {"command": "head -c 100000 /dev/zero | tr '\\0' x"}}]}
{"content": "ok"}
EOF2
run_session flood local "$S/flood.jsonl"
expect_eq "cap: the result is marked truncated" True "$(ev flood 'res(0)["truncated"]')"
expect_eq "cap: the model gets at most 25,000 characters plus the marker" True \
        "$(ev flood '25000 <= len(res(0)["output"]) < 25100')"
expect_match "cap: the marker says how much was cut" "75000 characters cut" "$(ev flood 'res(0)["output"]')"
expect_eq "cap: the full output is in the trace" 100000 \
        "$(ev flood 'sum(len(e["data"]) for e in of("tool.output"))')"

# proctor killed by SIGKILL mid-session leaves a trace whose lines parse
printf '{"content": "a b c d e f g h i j k l m n o p", "delay_ms": 100}\n' >"$S/slow.jsonl"
"$PROCTOR" run --json --mode local --model "script:$S/slow.jsonl" --workspace "$WORK" \
        --trace "$WORK/killed.trace" "go" >/dev/null 2>&1 &
pid=$!
sleep 0.8
kill -9 $pid
wait $pid 2>/dev/null
expect_eq "SIGKILL: the trace starts with session.start" session.start \
        "$("$T_PY" -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())["type"])' "$WORK/killed.trace")"
expect_eq "SIGKILL: every line of the trace parses" ok \
        "$("$T_PY" -c 'import json, sys
n = 0
for l in open(sys.argv[1]):
    json.loads(l); n += 1
print("ok" if n >= 5 else "only %d lines" % n)' "$WORK/killed.trace")"
# sandbox mode: file tools resolve paths inside the sandbox
cat >"$S/paths.jsonl" <<'EOF2'
{"tool_calls": [{"name": "read", "arguments": {"path": "/etc/shadow"}}, {"name": "read", "arguments": {"path": "../../../../etc/passwd"}}, {"name": "read", "arguments": {"path": "/root/.bashrc"}}]}
{"content": "ok"}
EOF2
run_session paths sandbox "$S/paths.jsonl"
expect_eq "paths: /etc/shadow is not there" False "$(ev paths 'res(0)["ok"]')"
expect_match "paths: ../ reaches only the sandbox's /etc/passwd" "sandbox:x:1000" "$(ev paths 'res(1)["output"]')"
expect_no_match "paths: not the host's passwd" "daemon:x:1:" "$(ev paths 'res(1)["output"]')"
expect_eq "paths: /root is not there" False "$(ev paths 'res(2)["ok"]')"
finish
