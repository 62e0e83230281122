#!/bin/bash
# The supervisor with more calls than the session may run at once: the
# setup screen states the bounds, every call shows at once, those without an
# execution as queued (in the pane, its title, the host line and the
# details), they start as others end, and K kills the running ones and
# cancels the queued ones, each answered.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/tmux.sh"

mkdir -p "$WORK/s"
"$T_PY" - "$WORK/s" <<'EOF'
import json, sys
d = sys.argv[1]
with open(f"{d}/six.jsonl", "w") as f:
    calls = [{"name": "bash", "arguments": {"command": f"echo q{i}-up; sleep 60"}} for i in range(6)]
    print(json.dumps({"content": "Six at once.", "tool_calls": calls}), file=f)
    print(json.dumps({"content": "After the six."}), file=f)
with open(f"{d}/short.jsonl", "w") as f:
    calls = [{"name": "bash", "arguments": {"command": f"echo s{i}; sleep 1"}} for i in range(4)]
    print(json.dumps({"content": "Four short ones.", "tool_calls": calls}), file=f)
    print(json.dumps({"content": "Short ones done."}), file=f)
EOF

for mode in sandbox local; do
        start $mode 160x48 "$PROCTOR --approval never --mode $mode --max-parallel 2 --model script:$WORK/s/six.jsonl"
        expect_screen $mode "bounds +2 executions at once \(the rest queued\)" "$mode: setup states the cap"
        $T send-keys -t $mode "go" Enter
        expect_screen $mode "tool calls \(4 queued\)" "$mode: the pane title counts the queued calls"
        expect_screen $mode "4 calls queued" "$mode: the host line counts them"
        expect_screen $mode "\| bash: echo q1-up; sleep .* running" "$mode: the first two run"
        expect_screen $mode "\. bash: echo q2-up; sleep .* queued" "$mode: the third is queued"
        expect_screen $mode "\. bash: echo q5-up; sleep .* queued" "$mode: the last is queued"
        check "$mode: only two executions exist" test "$(screen $mode | grep -cE '#[0-9]+ running')" -eq 2
        # the details of a queued call
        $T send-keys -t $mode Tab
        expect_screen $mode "─tool calls \(4 queued\)" "$mode: focus on the tool calls"
        $T send-keys -t $mode Home Down Down Enter
        expect_screen $mode "bash +queued +waiting for" "$mode: the details say queued"
        $T send-keys -t $mode Escape
        $T send-keys -t $mode K
        expect_screen $mode "Kill 2 executions, cancel 4 queued calls\?" "$mode: K names both"
        sleep 0.3
        $T send-keys -t $mode y
        expect_screen $mode "bash: echo q5-up; sleep .* cancelled" "$mode: queued calls are cancelled" 5
        expect_screen $mode "bash: echo q0-up; sleep .* killed" "$mode: running ones are killed" 5
        expect_screen $mode "After the six" "$mode: the session goes on" 10
        check "$mode: no execution started for the cancelled calls" test \
                "$(screen $mode | grep -cE '#[0-9]+ (running|killed|exited)')" -eq 2
        if pgrep -f "echo q[0-9]-up; sleep 60" >/dev/null; then fail "$mode: a sleep survived"; else pass; fi
        $T send-keys -t $mode q
        expect_screen $mode "EXITED 0" "$mode: quit"
done

# queued calls start as earlier ones end, and all complete
start f 160x48 "$PROCTOR --mode sandbox --max-parallel 2 --model script:$WORK/s/short.jsonl"
$T send-keys -t f "go" Enter
expect_screen f "tool calls \(2 queued\)" "short: two queued at first"
expect_screen f "Short ones done" "short: the session completes" 20
check "short: four calls ok" test "$(screen f | grep -cE '\+ bash: echo s[0-3]; sleep 1 .* ok')" -eq 4
check "short: nothing left queued" sh -c "! $T capture-pane -p -t f | grep -q queued"
$T send-keys -t f q
expect_screen f "EXITED 0" "short: quit"
finish
