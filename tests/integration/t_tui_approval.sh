#!/bin/bash
# Approvals in the supervisor, in a real terminal (a detached tmux): the
# host policy (the default) asks before local calls; the dialog shows the
# call and, for a write, the diff against the file as it is now; y allows,
# a adds a rule (edited before it is saved) that then allows the like
# without asking, n denies with a reason the model gets, e edits a command
# before it runs; parallel calls queue their dialogs; Esc leaves a dialog
# and A brings it back; an interrupt denies what waits; the bell rings once
# per request (not with --no-bell); replay --summary lists the denials;
# --approval always asks in sandbox mode too.
# as-user: yes
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/tmux.sh"

# the bell, as tmux hears it: one line a ring (set once the server runs)
hear_bells() {
        $T set -g bell-action any \; set -g monitor-bell on \; \
                set-hook -g alert-bell "run-shell 'echo rang >> $WORK/bells'"
}
bells() { cat "$WORK/bells" 2>/dev/null | wc -l; }
# ev TRACE EXPR: a Python expression over the trace's events (of(type))
ev() {
        python3 -c 'import json, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
of = lambda t: [e for e in evs if e.get("type") == t]
print(eval(sys.argv[2]))' "$@"
}

mkdir -p "$WORK/s"
printf 'line one\nline two\nline three\n' >"$WORK/notes.txt"
cat >"$WORK/s/a.jsonl" <<'EOF'
{"content": "Rewriting the notes.", "tool_calls": [{"name": "write", "arguments": {"path": "notes.txt", "content": "line one\nline 2\nline three\nline four\n"}}]}
{"content": "Touching.", "tool_calls": [{"name": "bash", "arguments": {"command": "touch a1.txt"}}]}
{"content": "Touching again.", "tool_calls": [{"name": "bash", "arguments": {"command": "touch a2.txt"}}]}
{"content": "Echoing.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo original > e.txt"}}]}
{"content": "Removing.", "tool_calls": [{"name": "bash", "arguments": {"command": "rm notes.txt"}}]}
{"content": "Two at once.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo p1 > p1.txt"}}, {"name": "bash", "arguments": {"command": "echo p2 > p2.txt"}}]}
{"content": "One more.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo never > never.txt"}}]}
{"content": "Not reached."}
EOF
TR=$WORK/a.trace
# answer NAME KEYS...: once the dialog has been up long enough to take keys
answer() { local t=$1; shift; sleep 0.3; $T send-keys -t "$t" "$@"; }

start a 120x40 "$PROCTOR --mode local --model script:$WORK/s/a.jsonl --trace $TR"
hear_bells
expect_screen a "Where should this session's tools run" "setup"
expect_screen a "approval   host \(default\): asks before shell, Python and file writes here" \
        "the setup screen shows the policy beside the mode"
$T send-keys -t a F3
expect_screen a "approval   always \(the setup screen \(F3\)\)" "F3 steps the policy to always"
$T send-keys -t a F3 F3
expect_screen a "approval   host \(the setup screen \(F3\)\)" "F3 steps round to host again"
$T send-keys -t a go Enter

# the write: its diff against the file as it is now
expect_screen a "approve this call\?" "a local write waits for the operator"
expect_screen a "tool +write" "the dialog names the tool"
expect_screen a "where +this host \(local mode\)" "and where it runs"
expect_screen a "asked by +policy host" "and which policy asked"
expect_screen a "diff of notes\.txt \(\+2 -1\)" "a write over a file shows a diff"
expect_screen a "(│|x) +- line two" "the line it removes"
expect_screen a "(│|x) +\+ line 2" "the line it adds"
expect_screen a "(│|x) +\+ line four" "and the one it appends"
expect_screen a "1 awaiting approval" "the header counts the waiting call"
check "the bell rang once" wait_until 5 sh -c "[ \$(cat '$WORK/bells' 2>/dev/null | wc -l) -eq 1 ]"
expect_eq "the file untouched while it waits" "line two" "$(sed -n 2p "$WORK/notes.txt")"
# Esc leaves it waiting, A brings it back
answer a Escape
expect_screen a "1 call waits for approval: A shows it again" "Esc leaves the dialog"
expect_screen a "(│|x)\? write: .* approval +(│|x)" "the calls pane says approval"
expect_screen a "\[\+\] write: notes\.txt  approval" "so does the transcript"
answer a A
expect_screen a "diff of notes\.txt" "A shows the dialog again"
answer a y
expect_screen a "allowed write: notes\.txt" "y allows it"
check "the write ran" wait_until 5 grep -qx "line four" "$WORK/notes.txt"

# a: the rule, edited before it is saved, then allows the like unasked
expect_screen a "a adds +bash:touch a1\.txt\*" "the dialog shows the rule a would add"
answer a a
expect_screen a "rule +> bash:touch a1\.txt\*" "a offers the rule for editing"
$T send-keys -t a C-u "bash:touch *" Enter
expect_screen a "from now on also calls like it: bash:touch \*" "the edited rule is saved"
check "the allowed call ran" wait_until 5 test -e "$WORK/a1.txt"
check "the next call like it ran without a dialog" wait_until 5 test -e "$WORK/a2.txt"

# e: the command edited before it runs
expect_screen a "command: echo original > e\.txt" "the next call asks"
answer a e
expect_screen a "command +> echo original > e\.txt" "e offers the command for editing"
$T send-keys -t a C-u "echo edited > e.txt" Enter
check "the edited command ran" wait_until 5 grep -qx edited "$WORK/e.txt"

# n: a reason for the model
expect_screen a "command: rm notes\.txt" "the rm asks"
answer a n
expect_screen a "reason +> " "n asks for a reason"
$T send-keys -t a "keep the notes" Enter
expect_screen a "denied bash: rm notes\.txt" "n denies it"

# two at once: one dialog after the other
expect_screen a "approve this call\?  1 of 2 waiting" "parallel calls queue their dialogs"
expect_screen a "command: echo p1 > p1\.txt" "the first comes first"
answer a y
expect_screen a "approve this call\?  1 waiting" "then the second"
expect_screen a "command: echo p2 > p2\.txt" "the second's dialog"
answer a y
check "both ran" wait_until 5 sh -c "test -e '$WORK/p1.txt' && test -e '$WORK/p2.txt'"

# an interrupt while a call waits denies it
expect_screen a "command: echo never > never\.txt" "the last call asks"
answer a Escape
expect_screen a "Esc interrupts the turn" "the dialog left"
$T send-keys -t a Escape
expect_screen a "session interrupted" "Esc interrupts the turn"
check "the denied call never ran" test ! -e "$WORK/never.txt"
$T send-keys -t a q
expect_screen a "EXITED 0" "quit"

expect_eq "the file survived the denied rm" "line one" "$(head -1 "$WORK/notes.txt")"
expect_eq "y: allowed by the operator" "allow operator" \
        "$(ev "$TR" '" ".join((lambda d: [d["decision"], d["by"]])(of("approval.decision")[0]))')"
expect_eq "a: the rule added" "bash:touch *" \
        "$(ev "$TR" 'of("approval.decision")[1].get("rule_added")')"
expect_eq "a: the next call allowed by that rule, unasked" "allow rule bash:touch * 0" \
        "$(ev "$TR" '" ".join(str(x) for x in (lambda d: [d["decision"], d["by"], d["rule"], d["waited_ms"]])(of("approval.decision")[2]))')"
expect_eq "a: only the asked calls were requested before it" 2 \
        "$(ev "$TR" 'sum(1 for e in evs if e["type"] == "approval.request" and e["seq"] < of("approval.decision")[2]["seq"])')"
expect_eq "e: the edited arguments recorded" '{"command":"echo edited > e.txt"}' \
        "$(ev "$TR" 'of("approval.decision")[3].get("arguments")')"
expect_eq "n: the reason reaches the model" "denied by the operator: keep the notes" \
        "$(ev "$TR" 'next(r["output"] for r in of("tool.result") if r["call_id"] == of("approval.decision")[4]["call_id"])')"
expect_eq "interrupt: the waiting call denied" "deny operator interrupted by the operator" \
        "$(ev "$TR" '" ".join((lambda d: [d["decision"], d["by"], d.get("reason", "")])(of("approval.decision")[-1]))')"
expect_eq "the bell rang once per request batch" 6 "$(bells)"

sum=$("$PROCTOR" replay --summary "$TR")
expect_match "summary: the denial and its reason" "denied by the operator: keep the notes" "$sum"
expect_match "summary: the denied row" "bash +\{\"command\":\"rm notes\.txt\"\} .* denied" "$sum"
expect_match "summary: the interrupt's denial" "denied by the operator: interrupted by the operator" "$sum"
expect_match "summary: the edit" "allowed by the operator, arguments edited" "$sum"
expect_match "summary: the rule added" "allowed by the operator, rule added: bash:touch \*" "$sum"
expect_match "summary: the count" "approvals: 7 asked, 6 allowed, 2 denied" "$sum"

# replay shows the dialogs' outcomes
start r 200x50 "$PROCTOR replay --speed max $TR"
expect_screen r "operator denied bash: rm notes\.txt: keep the notes" "replay: the denial and its reason"
expect_screen r "operator allowed bash: echo edited > e\.txt, with edited" "replay: the edit"
expect_screen r "\[\+\] bash: rm notes\.txt  denied" "replay: the denied call"
$T send-keys -t r q
expect_screen r "EXITED 0" "replay quits"

# --no-bell; --approval always asks in sandbox mode too
cat >"$WORK/s/b.jsonl" <<'EOF'
{"content": "Reading.", "tool_calls": [{"name": "read", "arguments": {"path": "/workspace/notes.txt"}}]}
{"content": "Read it."}
EOF
start b 120x40 "$PROCTOR --no-bell --approval always --mode sandbox --model script:$WORK/s/b.jsonl --trace $WORK/b.trace"
expect_screen b "approval   always \(configured\): asks before every call" "always shown on the setup screen"
$T send-keys -t b go Enter
expect_screen b "asked by +policy always" "always asks before a sandboxed read"
expect_screen b "where +a sandbox" "the dialog says it runs in a sandbox"
expect_screen b "limits +wall clock .*CPU .*memory .*pids" "with the sandbox's limits"
sleep 0.5
expect_eq "--no-bell: no bell" 6 "$(bells)"
answer b y
expect_screen b "Read it\." "the sandboxed read ran" 15
expect_eq "the read's result" True "$(ev "$WORK/b.trace" 'of("tool.result")[0]["ok"]')"
$T send-keys -t b q
expect_screen b "EXITED 0" "quit the sandbox session"
finish
