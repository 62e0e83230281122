#!/bin/bash
# Interrupting a headless session (SIGINT, as Ctrl-C does): during a model
# stream and during a long tool call, in both modes. The session ends
# interrupted (exit 130), every tool call has a result, nothing is left.
# as-user: yes
. "$(dirname "$0")/lib.sh"

ev() { events_eval "$@"; }

# wait_event FILE TYPE: until an event of TYPE is in FILE (up to 10 s)
wait_event() {
        local i
        for i in $(seq 100); do
                grep -q "\"type\":\"$2\"" "$1" 2>/dev/null && return 0
                sleep 0.1
        done
        return 1
}

# during the model's stream: a slow scripted answer
slow=$WORK/slow.jsonl
printf '{"content": "one two three four five six seven eight nine ten", "delay_ms": 400}\n' >"$slow"
"$PROCTOR" run --json --mode local --model "script:$slow" --workspace "$WORK" \
        --trace "$WORK/a.trace" "go" >"$WORK/a.jsonl" 2>"$WORK/a.err" &
pid=$!
wait_event "$WORK/a.jsonl" model.delta || fail "stream: no delta arrived"
kill -INT $pid
wait $pid; rc=$?
expect_eq "stream: exit 130" 130 $rc
expect_eq "stream: operator.interrupt sent" 1 "$(ev "$WORK/a.jsonl" 'len(of("operator.interrupt"))')"
expect_eq "stream: status interrupted" interrupted "$(ev "$WORK/a.jsonl" 'of("session.end")[0]["status"]')"
expect_eq "stream: no half message kept" 0 "$(ev "$WORK/a.jsonl" 'len(of("model.message"))')"
expect_eq "stream: the turn is closed" 1 "$(ev "$WORK/a.jsonl" 'len(of("turn.end"))')"
expect_eq "stream: the trace ends with session.end" session.end "$(ev "$WORK/a.trace" 'E[-1]["type"]')"

# during a long tool call, in each mode
for mode in local sandbox; do
        marker=proctor-int-$mode-$$-$RANDOM
        s=$WORK/long-$mode.jsonl
        printf '{"tool_calls": [{"name": "bash", "arguments": {"command": "echo started; sleep 30 # %s"}}, {"name": "read_cache", "arguments": {"key": "x"}}]}\n{"content": "never reached"}\n' \
                "$marker" >"$s"
        out=$WORK/b-$mode.jsonl
        "$PROCTOR" run --json --mode $mode --model "script:$s" --workspace "$WORK" \
                --trace "$WORK/b-$mode.trace" "go" >"$out" 2>"$WORK/b-$mode.err" &
        pid=$!
        wait_event "$out" tool.output || fail "$mode: the tool never started"
        kill -INT $pid
        wait $pid; rc=$?
        expect_eq "$mode tool: exit 130" 130 $rc
        expect_eq "$mode tool: every call has a result" 2 "$(ev "$out" 'len(of("tool.result"))')"
        expect_match "$mode tool: the long call says interrupted" "started.*interrupted" \
                "$(ev "$out" 'next(r["output"] for r in of("tool.result") if r["call_id"] == of("tool.call")[0]["call_id"]).replace(chr(10), " ")')"
        expect_eq "$mode tool: its execution was killed" True \
                "$(ev "$out" 'any(e["reason"] == "killed" for e in of("exec.exit"))')"
        expect_eq "$mode tool: status interrupted" interrupted "$(ev "$out" 'of("session.end")[0]["status"]')"
        expect_eq "$mode tool: no turn after the interrupt" 1 "$(ev "$out" 'len(of("turn.start"))')"
        if pgrep -f "$marker" >/dev/null; then fail "$mode tool: the sleep survived"; else pass; fi
done
finish
