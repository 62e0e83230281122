#!/bin/bash
# Stopping and pausing from the supervisor, in a real terminal (a detached
# tmux) with real sandboxes: the kill dialog's t sends SIGTERM, which a
# command may answer by exiting on its own, and SIGKILL follows 5 s later
# for one that ignores it; p freezes an execution (a counter it writes
# stands still) and p again thaws it; a warm interpreter's row says warm.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/tmux.sh"

mkdir -p "$WORK/s"
cat >"$WORK/s/ctl.jsonl" <<'EOF'
{"content": "Three at once.", "tool_calls": [{"name": "bash", "arguments": {"command": "trap 'echo got-term; exit 3' TERM; echo polite-up; while :; do sleep 0.1; done"}}, {"name": "bash", "arguments": {"command": "trap '' TERM; echo stubborn-up; while :; do sleep 0.1; done"}}, {"name": "bash", "arguments": {"command": "i=0; while :; do i=$((i+1)); echo $i > /workspace/count.new; mv /workspace/count.new /workspace/count; sleep 0.05; done"}}]}
{"content": "Controls done."}
EOF
# the counter renames each value into place: a pause between its truncate
# and its write would leave the count empty for as long as it lasts
count() { cat "$WORK/count" 2>/dev/null; }

start c 160x45 "$PROCTOR --mode sandbox --model script:$WORK/s/ctl.jsonl"
expect_screen c "Where should this session's tools run" "setup"
$T send-keys -t c go Enter
expect_screen c "sandboxes \[3/3\]" "three sandboxes"
expect_screen c "#3 running" "the counter runs"
for _ in $(seq 50); do [ -n "$(count)" ] && break; sleep 0.1; done
$T send-keys -t c Tab Tab Home
expect_screen c "sandboxes \[1/3\]" "the first execution selected"

# t: SIGTERM, answered
$T send-keys -t c k
expect_screen c "t SIGTERM first \(SIGKILL 5 s on\)" "the kill dialog offers SIGTERM first"
sleep 0.3
$T send-keys -t c t
expect_screen c "sent SIGTERM to #1: it is killed in 5 s if it has not ended" "t sends SIGTERM"
expect_screen c "#1 exited .* exit 3" "the command's own trap ends it with its own status" 5

# t: SIGTERM ignored, then SIGKILL
$T send-keys -t c Down
expect_screen c "sandboxes \[2/3\]" "the second execution selected"
$T send-keys -t c k
sleep 0.3
$T send-keys -t c t
expect_screen c "sent SIGTERM to #2" "SIGTERM to the one that ignores it"
sleep 3
expect_screen c "#2 running" "it ignores SIGTERM and runs on"
expect_screen c "#2 was still running 5 s after SIGTERM: killed" "5 s later SIGKILL follows" 6
expect_screen c "#2 killed" "it shows killed"

# p: pause and resume
$T send-keys -t c Down
expect_screen c "sandboxes \[3/3\]" "the counter selected"
$T send-keys -t c p
expect_screen c "#3 paused \(p resumes" "p pauses it"
expect_screen c "#3 paused " "the list shows it paused"
sleep 0.3
before=$(count)
check "paused with a count" test -n "$before"
sleep 1.2
expect_eq "paused, the counter stands still" "$before" "$(count)"
$T send-keys -t c p
expect_screen c "#3 resumed" "p again resumes it"
expect_screen c "#3 running" "running again"
# (polled: a resumed sandbox weighs little on a loaded machine)
counter_past() { local c; c=$(count); [ -n "$c" ] && [ "$c" -gt "$1" ]; }
check "resumed, the counter goes on" wait_until 20 counter_past "$before"
$T send-keys -t c p
expect_screen c "#3 paused" "paused again"
$T send-keys -t c k
sleep 0.3
$T send-keys -t c y
expect_screen c "#3 killed" "a paused execution is killed by k"
expect_screen c "Controls done" "the session goes on to its end" 10
$T send-keys -t c q
expect_screen c "EXITED 0" "quit"

# a call that took a warm interpreter says so in its row
cat >"$WORK/s/py.jsonl" <<'EOF'
{"content": "Python twice.", "tool_calls": [{"name": "run_python_code", "arguments": {"code": "print('first')"}}]}
{"content": "Again.", "tool_calls": [{"name": "run_python_code", "arguments": {"code": "print('second')"}}]}
{"content": "Python done."}
EOF
start w 160x40 "$PROCTOR --mode sandbox --model script:$WORK/s/py.jsonl"
expect_screen w "Where should this session's tools run" "setup for the warm interpreter"
$T send-keys -t w go Enter
expect_screen w "Python done" "two Python calls" 15
expect_screen w "#2 exited .*setup [0-9.]+ms warm" "the second took a warm interpreter, and the row says so"
check "the first was cold" sh -c "! $T capture-pane -p -t w | grep -E '#1 exited' | grep -q warm"
# the warm sandbox made for the next call waits in a row of its own, with its memory
expect_screen w "│warm   waiting +mem [0-9.]+[KM] +start cpu [0-9]+ms" "a waiting warm sandbox has its own row"
$T send-keys -t w q
expect_screen w "EXITED 0" "quit after the warm calls"
finish
